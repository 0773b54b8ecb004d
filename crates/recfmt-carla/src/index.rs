//! A one-pass index of the frames of a file.

use std::io::Read;

use recfmt_core::Limits;

use crate::error::{Error, Result};
use crate::header::Header;
use crate::io::{RawPacket, Reader};
use crate::packet::FrameStart;

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
            Ok(0) => break None,
            Ok(n) => n as u64,
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
