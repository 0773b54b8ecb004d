//! A one-pass index of the frames of a file.

use std::io::{Read, Seek, SeekFrom};

use recfmt_core::Limits;

use crate::error::{Error, Result};
use crate::header::Header;
use crate::io::{RawPacket, Reader};
use crate::packet::{FrameStart, PACKET_HEADER_LEN};

/// Where one frame is in the file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameEntry {
    /// Frame number from the FrameStart packet.
    pub id: u64,
    /// Seconds since the first frame.
    pub elapsed: f64,
    /// Seconds until the next frame (-1 in the last frame).
    pub duration_this: f64,
    /// Offset of the FrameStart packet.
    pub offset: u64,
    /// Offset just after the frame's FrameEnd packet, `None` if the file ends first.
    pub end: Option<u64>,
}

/// The frames of a file, in file order.
#[derive(Debug)]
pub struct FrameIndex {
    /// The info header.
    pub header: Header,
    /// One entry per FrameStart packet.
    pub frames: Vec<FrameEntry>,
    /// Packets seen (every id).
    pub packets: u64,
    /// Offset where reading stopped: the end of the last complete packet.
    pub end: u64,
    /// Why reading stopped early (a truncated tail, a size over the limit, a bad FrameStart),
    /// `None` when the whole file was read.
    pub error: Option<Error>,
}

/// Reads a file once and lists its frames. Only FrameStart bodies are read; other bodies are
/// skipped without being buffered. No flavour is needed: ids 0 and 1 never moved.
///
/// A truncated file yields the frames before the cut and the error in
/// [`FrameIndex::error`]; only an unreadable header fails the call.
///
/// ```
/// use recfmt_carla::{index_frames, Flavour, FrameStart, Header, Packet, Writer};
/// let mut w = Writer::new(Vec::new(), Flavour::Carla0912);
/// w.write_header(&Header::new("Town01", 0))?;
/// for i in 1..=3u64 {
///     w.write_packet(&Packet::FrameStart(FrameStart { id: i, duration_this: 0.05, elapsed: 0.05 * (i - 1) as f64 }))?;
///     w.write_packet(&Packet::FrameEnd)?;
/// }
/// let bytes = w.into_inner()?;
/// let index = index_frames(&bytes[..], &recfmt_core::Limits::default())?;
/// assert_eq!(index.frames.len(), 3);
/// assert_eq!(index.frames[1].offset, 34 + 29 + 5);
/// assert!(index.error.is_none());
/// # Ok::<(), recfmt_carla::Error>(())
/// ```
pub fn index_frames<R: Read>(reader: R, limits: &Limits) -> Result<FrameIndex> {
    let mut r = Reader::new(reader).with_limits(*limits);
    let header = r.read_header()?;
    let mut raw = RawPacket::default();
    let mut frames: Vec<FrameEntry> = Vec::new();
    let mut packets = 0u64;
    let mut end = r.position();
    let error = loop {
        let n = match r.read_raw_packet_if(&mut raw, |id, _| id == 0) {
            Ok(false) => break None,
            Ok(true) => r.last_packet_len(),
            Err(e) => break Some(e),
        };
        packets += 1;
        end = raw.offset + n;
        match raw.id {
            0 => {
                let mut p = crate::Packet::default();
                let flavour = crate::Flavour::Carla0910;
                if let Err(e) =
                    crate::codec::decode_body(0, &raw.body, raw.offset, flavour, limits, &mut p)
                {
                    break Some(e);
                }
                if let crate::Packet::FrameStart(FrameStart {
                    id,
                    duration_this,
                    elapsed,
                }) = p
                {
                    frames.push(FrameEntry {
                        id,
                        elapsed,
                        duration_this,
                        offset: raw.offset,
                        end: None,
                    });
                }
            }
            1 => {
                if let Some(last) = frames.last_mut() {
                    last.end.get_or_insert(end);
                }
            }
            _ => {}
        }
    };
    Ok(FrameIndex {
        header,
        frames,
        packets,
        end,
        error,
    })
}

/// The result of [`seek_frame`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameSeek {
    /// The first frame at or after the requested time: its id, elapsed time, duration and
    /// offset (`end` is not known and left `None`); `None` when no such frame exists before
    /// the end of the file.
    pub frame: Option<FrameEntry>,
    /// FrameStart packets looked at.
    pub frames_scanned: u64,
    /// Packet headers looked at.
    pub packets_scanned: u64,
    /// Bytes read from the input (the scan seeks over packet bodies it does not need).
    pub bytes_read: u64,
}

/// Scans packet headers from `start` (the offset of a packet, usually just after the info
/// header) for the first FrameStart whose elapsed time is at least `seconds`, seeking over
/// every other packet body. Reads in 64 KiB chunks, so a file of small packets is read
/// sequentially and one of large packets mostly skipped.
///
/// A file that ends early, or a packet size over `limits.max_record_len`, ends the scan
/// with `frame: None` (the file is then read from where the caller chooses).
///
/// ```
/// use recfmt_carla::{seek_frame, Flavour, FrameStart, Header, Packet, Writer};
/// let mut w = Writer::new(std::io::Cursor::new(Vec::new()), Flavour::Carla0912);
/// w.write_header(&Header::new("Town01", 0))?;
/// for i in 0..10u64 {
///     w.begin_frame(i + 1, i as f64 * 0.5)?;
///     w.write_packet(&Packet::Position(Vec::new()))?;
///     w.write_packet(&Packet::FrameEnd)?;
/// }
/// let mut file = w.into_inner()?;
/// let found = seek_frame(&mut file, 34, 2.2, &Default::default())?;
/// let frame = found.frame.unwrap();
/// assert_eq!((frame.id, frame.elapsed), (6, 2.5));
/// assert_eq!(frame.offset, 34 + 5 * (29 + 7 + 5));
/// # Ok::<(), recfmt_carla::Error>(())
/// ```
pub fn seek_frame<R: Read + Seek>(
    inner: &mut R,
    start: u64,
    seconds: f64,
    limits: &Limits,
) -> Result<FrameSeek> {
    const CHUNK: u64 = 64 << 10;
    let mut result = FrameSeek {
        frame: None,
        frames_scanned: 0,
        packets_scanned: 0,
        bytes_read: 0,
    };
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK as usize);
    let mut buf_start = start;
    let mut off = start;
    // Makes `need` bytes at `off` available in `buf`; false at the end of the input.
    let mut fill =
        |off: u64, need: usize, buf: &mut Vec<u8>, buf_start: &mut u64| -> Result<bool> {
            let have = off >= *buf_start && off + need as u64 <= *buf_start + buf.len() as u64;
            if have {
                return Ok(true);
            }
            inner.seek(SeekFrom::Start(off))?;
            buf.clear();
            let n = (&mut *inner).take(CHUNK).read_to_end(buf)?;
            result.bytes_read += n as u64;
            *buf_start = off;
            Ok(buf.len() >= need)
        };
    loop {
        if !fill(off, PACKET_HEADER_LEN, &mut buf, &mut buf_start)? {
            break;
        }
        let at = (off - buf_start) as usize;
        let id = buf[at];
        let size = u32::from_le_bytes([buf[at + 1], buf[at + 2], buf[at + 3], buf[at + 4]]);
        result.packets_scanned += 1;
        if id == 0 && size as usize == FrameStart::SIZE {
            if !fill(
                off,
                PACKET_HEADER_LEN + FrameStart::SIZE,
                &mut buf,
                &mut buf_start,
            )? {
                break;
            }
            let b = (off - buf_start) as usize + PACKET_HEADER_LEN;
            let word = |k: usize| {
                let mut a = [0u8; 8];
                a.copy_from_slice(&buf[b + 8 * k..b + 8 * k + 8]);
                a
            };
            result.frames_scanned += 1;
            let elapsed = f64::from_le_bytes(word(2));
            if elapsed >= seconds {
                result.frame = Some(FrameEntry {
                    id: u64::from_le_bytes(word(0)),
                    elapsed,
                    duration_this: f64::from_le_bytes(word(1)),
                    offset: off,
                    end: None,
                });
                break;
            }
        }
        if u64::from(size) > limits.max_record_len {
            break;
        }
        off += PACKET_HEADER_LEN as u64 + u64::from(size);
    }
    Ok(result)
}
