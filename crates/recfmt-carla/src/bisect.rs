//! Seeking by time in a log without reading it from the start: a binary search over byte
//! offsets that resynchronises on frame starts.
//!
//! A recorder log has no index and no sync marker: a packet is a 5-byte header (`id: u8`,
//! `size: u32`) and a body, so the only way to know where packets start is to walk their
//! chain from the info header. A probe in the middle of the file lands inside some packet
//! body; [`bisect_frame`] then looks forward for the bytes of a FrameStart header
//! (`00 18 00 00 00`) and only takes one whose packet chain is confirmed: every packet
//! header after it plausible for the flavour (a known or user id, a size within the limits
//! and the file) up to a FrameEnd followed by the next FrameStart, whose frame id is higher
//! and whose elapsed time is not lower, [`CONFIRM_FRAMES`] times over (or the end of the
//! file just after a FrameEnd). Random bytes inside a body almost never pass that.
//!
//! The search only narrows down where a linear walk of packet headers
//! ([`crate::seek_frame`]) starts: at a confirmed frame earlier than the time asked for. So
//! as long as the confirmed frames are true frame starts and elapsed times rise through the
//! file (as the recorder writes them), the frame found is the one a walk from the start
//! finds. Whenever a probe confirms nothing (a cut tail, damage, frames larger than the
//! search reaches) the search keeps the earlier start, which costs time, never rows.

use std::io::{Read, Seek, SeekFrom};

use recfmt_core::Limits;

use crate::error::Result;
use crate::flavour::Flavour;
use crate::index::{FrameSeek, seek_frame};
use crate::packet::{FIRST_USER_ID, FrameStart, PACKET_HEADER_LEN};

/// Below this many bytes between the bounds, the linear walk takes over: a few chunks.
const LINEAR_BYTES: u64 = 256 << 10;
/// How far a probe looks for a confirmed frame start before giving up on its half.
const PROBE_REACH: u64 = 4 << 20;
/// Frame boundaries a candidate's packet chain must cross to be confirmed.
const CONFIRM_FRAMES: u32 = 2;
/// Packets a confirmation walks at most (frames of thousands of actors stay far below it).
const CONFIRM_PACKETS: u32 = 10_000;
/// Bytes read from the input at a time.
const CHUNK: usize = 64 << 10;
/// The header of a FrameStart packet: id 0, size 24.
const FRAME_START_HEADER: [u8; PACKET_HEADER_LEN] = [0, FrameStart::SIZE as u8, 0, 0, 0];

/// What [`bisect_frame`] found and what it cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BisectSeek {
    /// The result of the final linear walk (its counts include only that walk).
    pub seek: FrameSeek,
    /// Probes the binary search made.
    pub probes: u64,
    /// Bytes read from the input by the probes and the walk together.
    pub bytes_read: u64,
}

/// A window of the input read in chunks, counting the bytes read.
struct Bytes<'a, R> {
    inner: &'a mut R,
    len: u64,
    buf: Vec<u8>,
    buf_start: u64,
    read: u64,
}

impl<R: Read + Seek> Bytes<'_, R> {
    /// `n` bytes at `off`, `None` when the input ends first. `n` is at most [`CHUNK`].
    fn get(&mut self, off: u64, n: usize) -> Result<Option<&[u8]>> {
        let end = off.saturating_add(n as u64);
        if end > self.len {
            return Ok(None);
        }
        let have = off >= self.buf_start && end <= self.buf_start + self.buf.len() as u64;
        if !have {
            self.inner.seek(SeekFrom::Start(off))?;
            self.buf.clear();
            let got = (&mut *self.inner)
                .take(CHUNK.max(n) as u64)
                .read_to_end(&mut self.buf)?;
            self.read += got as u64;
            self.buf_start = off;
            if got < n {
                return Ok(None);
            }
        }
        let at = (off - self.buf_start) as usize;
        Ok(self.buf.get(at..at + n))
    }

    /// The FrameStart packet at `off` (its header already matched): frame id and elapsed.
    fn frame_start(&mut self, off: u64) -> Result<Option<(u64, f64)>> {
        let Some(b) = self.get(off, PACKET_HEADER_LEN + FrameStart::SIZE)? else {
            return Ok(None);
        };
        if b[..PACKET_HEADER_LEN] != FRAME_START_HEADER {
            return Ok(None);
        }
        let word = |k: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[PACKET_HEADER_LEN + 8 * k..PACKET_HEADER_LEN + 8 * k + 8]);
            a
        };
        let id = u64::from_le_bytes(word(0));
        let duration = f64::from_le_bytes(word(1));
        let elapsed = f64::from_le_bytes(word(2));
        if !elapsed.is_finite() || !duration.is_finite() {
            return Ok(None);
        }
        Ok(Some((id, elapsed)))
    }
}

/// Whether the packet chain from the FrameStart at `off` (frame `id`, time `elapsed`) holds
/// up for [`CONFIRM_FRAMES`] frames: see the module documentation.
fn confirmed<R: Read + Seek>(
    bytes: &mut Bytes<'_, R>,
    flavour: Flavour,
    limits: &Limits,
    mut off: u64,
    (mut id, mut elapsed): (u64, f64),
) -> Result<bool> {
    let plausible_id = |p: u8| p >= FIRST_USER_ID || flavour.kind_of(p).is_some();
    let mut frames = 0;
    let mut last_was_end = false;
    off += (PACKET_HEADER_LEN + FrameStart::SIZE) as u64;
    for _ in 0..CONFIRM_PACKETS {
        if off == bytes.len {
            // The file ends on a packet boundary: a whole last frame, or a cut.
            return Ok(last_was_end);
        }
        let Some(h) = bytes.get(off, PACKET_HEADER_LEN)? else {
            return Ok(false);
        };
        let (p, size) = (h[0], u32::from_le_bytes([h[1], h[2], h[3], h[4]]));
        match p {
            0 => {
                if !last_was_end {
                    return Ok(false);
                }
                let Some((next, t)) = bytes.frame_start(off)? else {
                    return Ok(false);
                };
                if next <= id || t < elapsed {
                    return Ok(false);
                }
                frames += 1;
                if frames >= CONFIRM_FRAMES {
                    return Ok(true);
                }
                (id, elapsed) = (next, t);
                last_was_end = false;
            }
            1 if size == 0 => last_was_end = true,
            1 => return Ok(false),
            p if plausible_id(p) => last_was_end = false,
            _ => return Ok(false),
        }
        let next = off + PACKET_HEADER_LEN as u64 + u64::from(size);
        if u64::from(size) > limits.max_record_len || next > bytes.len {
            return Ok(false);
        }
        off = next;
    }
    Ok(false)
}

/// The first confirmed FrameStart at or after `from` and before `until` (and within
/// [`PROBE_REACH`] of `from`): its offset, id and elapsed time.
fn sync<R: Read + Seek>(
    bytes: &mut Bytes<'_, R>,
    flavour: Flavour,
    limits: &Limits,
    from: u64,
    until: u64,
) -> Result<Option<(u64, f64)>> {
    let until = until.min(from.saturating_add(PROBE_REACH)).min(bytes.len);
    let mut off = from;
    while off < until {
        // Look through one chunk for the 5-byte FrameStart header.
        let n = (until - off).min(CHUNK as u64) as usize + PACKET_HEADER_LEN - 1;
        let n = n.min((bytes.len - off) as usize);
        if n < PACKET_HEADER_LEN {
            return Ok(None);
        }
        let Some(window) = bytes.get(off, n)? else {
            return Ok(None);
        };
        let hits: Vec<u64> = window
            .windows(PACKET_HEADER_LEN)
            .enumerate()
            .filter(|(_, w)| *w == FRAME_START_HEADER)
            .map(|(i, _)| off + i as u64)
            .filter(|&at| at < until)
            .collect();
        for at in hits {
            if let Some(frame) = bytes.frame_start(at)?
                && confirmed(bytes, flavour, limits, at, frame)?
            {
                return Ok(Some((at, frame.1)));
            }
        }
        off += (n + 1 - PACKET_HEADER_LEN) as u64;
    }
    Ok(None)
}

/// Finds the first frame whose elapsed time is at least `seconds`, as [`seek_frame`] from
/// `start` (the offset of the first packet) would, reading only a few chunks around each of
/// `O(log n)` probes and then walking the packet headers of the last stretch.
pub fn bisect_frame<R: Read + Seek>(
    inner: &mut R,
    start: u64,
    seconds: f64,
    flavour: Flavour,
    limits: &Limits,
) -> Result<BisectSeek> {
    let len = inner.seek(SeekFrom::End(0))?;
    let mut bytes = Bytes {
        inner,
        len,
        buf: Vec::new(),
        buf_start: 0,
        read: 0,
    };
    // `lo`: a packet on the chain (the first, or a confirmed FrameStart earlier than
    // `seconds`) at or before the frame sought.
    let (mut lo, mut hi) = (start, len);
    let mut probes = 0;
    while hi.saturating_sub(lo) > LINEAR_BYTES {
        let mid = lo + (hi - lo) / 2;
        probes += 1;
        match sync(&mut bytes, flavour, limits, mid, hi)? {
            Some((at, elapsed)) if elapsed < seconds => lo = at,
            _ => hi = mid,
        }
    }
    let probe_bytes = bytes.read;
    let seek = seek_frame(bytes.inner, lo, seconds, limits)?;
    Ok(BisectSeek {
        seek,
        probes,
        bytes_read: probe_bytes + seek.bytes_read,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Header, Packet, Writer};

    fn log(frames: u64, garbage_every: u64) -> Vec<u8> {
        let mut w = Writer::new(Vec::new(), Flavour::Carla0912);
        w.write_header(&Header::new("Town01", 0)).unwrap();
        for i in 0..frames {
            w.write_packet(&Packet::FrameStart(FrameStart {
                id: i + 1,
                duration_this: 0.05,
                elapsed: i as f64 * 0.05,
            }))
            .unwrap();
            w.write_packet(&Packet::Position(Vec::new())).unwrap();
            if garbage_every > 0 && i % garbage_every == 0 {
                // A user packet whose body looks like a frame start followed by junk.
                let mut data = FRAME_START_HEADER.to_vec();
                data.extend_from_slice(&(i + 7).to_le_bytes());
                data.extend_from_slice(&0.05f64.to_le_bytes());
                data.extend_from_slice(&1.0f64.to_le_bytes());
                data.extend((0..300u32).map(|k| (k * 37 + i as u32) as u8));
                w.write_packet(&Packet::User { id: 140, data }).unwrap();
            }
            w.write_packet(&Packet::FrameEnd).unwrap();
        }
        w.into_inner().unwrap()
    }

    #[test]
    fn the_search_finds_what_the_walk_finds_reading_little() {
        for garbage_every in [0, 3] {
            let bytes = log(250_000, garbage_every);
            let len = bytes.len() as u64;
            for seconds in [-1.0, 0.0, 0.07, 1234.5, 12_499.95, 12_499.96, 1e9] {
                let mut file = std::io::Cursor::new(&bytes);
                let found = bisect_frame(
                    &mut file,
                    34,
                    seconds,
                    Flavour::Carla0912,
                    &Limits::default(),
                )
                .unwrap();
                let walked = seek_frame(&mut file, 34, seconds, &Limits::default()).unwrap();
                assert_eq!(found.seek.frame, walked.frame, "{seconds}");
                if seconds > 1.0 {
                    assert!(found.probes >= 3, "{seconds}: {} probes", found.probes);
                    assert!(
                        found.bytes_read * 10 < len,
                        "{seconds}: read {} of {len}",
                        found.bytes_read
                    );
                }
            }
        }
    }

    #[test]
    fn a_torn_or_tiny_input_does_not_fail() {
        let bytes = log(20_000, 5);
        for keep in [0, 10, 34, 35, 1000, bytes.len() / 2 + 3, bytes.len() - 1] {
            let mut file = std::io::Cursor::new(&bytes[..keep]);
            let found = bisect_frame(&mut file, 34, 500.0, Flavour::Carla0912, &Limits::default());
            let walked = seek_frame(&mut file, 34, 500.0, &Limits::default()).unwrap();
            assert_eq!(found.unwrap().seek.frame, walked.frame, "{keep}");
        }
    }
}
