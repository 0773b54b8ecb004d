//! Seeking by time in a Continuous or Recovery tape without indexing it: a binary search
//! over byte offsets that resynchronises on frame starts.
//!
//! Frames have no sync marker: a frame is its `f64` time and then either its items (`u32`
//! length and bytes each) or, compressed, a flags byte and a `u32`-sized DEFLATE stream. A
//! probe in the middle of the file lands inside some frame; [`Reader::seek_time_offset`]
//! then tries every offset after it as a frame start and takes the first one that is
//! confirmed: its time finite and not before the tape's first frame, every length within
//! the limits and the file, a signals item of the layout's size (up to 64 KiB more), a
//! compressed frame whose data inflates to exactly the items the header names, and
//! [`CONFIRM_FRAMES`] frames after it chaining the same way with times that do not go back
//! (or the end of the file right after a whole frame). Random bytes inside an item almost
//! never pass all of that.
//!
//! The search only narrows down where a walk of frame headers (times read, items skipped
//! by their lengths, as [`Reader::index_frames`] does) starts: at a confirmed frame earlier
//! than the time asked for. So, as long as confirmed frames are true frame starts and times
//! rise through the tape (as FlightGear records them), the frame found is the one a walk
//! from the first frame finds. A probe that confirms nothing (a cut tail, frames larger than
//! the search reaches) keeps the earlier start: that costs time, never rows.

use std::io::{BufRead, Seek};

use super::{Reader, inflate};
use crate::error::Result;
use crate::input::Input;

/// Below this many bytes between the bounds, the walk of frame headers takes over.
const LINEAR_BYTES: u64 = 256 << 10;
/// How far a probe looks for a confirmed frame start before giving up on its half.
const PROBE_REACH: u64 = 4 << 20;
/// Frames after a candidate that must chain for it to be confirmed.
const CONFIRM_FRAMES: u32 = 3;
/// Bytes read from the input at a time.
const CHUNK: usize = 16 << 10;
/// Compressed frames larger than this are not inflated to confirm them.
const DEEP_CHECK_LEN: u64 = 16 << 20;
/// How much longer than the layout's block a signals item may be and still be taken as one.
const SIGNALS_SLACK: u64 = 64 << 10;

/// Where [`Reader::seek_time_offset`] found the frame, and what it cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeSeek {
    /// Offset of the first frame at or after the time, in file order; the offset where the
    /// walk stopped (the end of the file, or a torn or unreadable frame) when none is.
    pub offset: u64,
    /// Probes the binary search made.
    pub probes: u64,
    /// Bytes read from the input by the probes and the walk.
    pub bytes_read: u64,
}

/// What a frame must look like, from the header and the first frame.
#[derive(Debug, Clone, Copy)]
struct Shape {
    items: usize,
    compressed: bool,
    /// Index of the signals item and the layout's block length.
    signals: Option<(usize, u64)>,
    max_len: u64,
    /// Time of the first frame: no frame is earlier when times rise.
    first_time: f64,
    len: u64,
}

/// The input read in chunks at any offset, counting the bytes read. Two chunks are kept
/// (the least recently used one is replaced): a probe tries offset after offset while the
/// confirmation of each candidate reads ahead, and one chunk would be read again for every
/// offset tried.
struct Bytes<'a, R> {
    input: &'a mut Input<R>,
    len: u64,
    /// Each chunk and its offset.
    bufs: [(Vec<u8>, u64); 2],
    /// The slot used last.
    last: usize,
    read: u64,
}

impl<R: BufRead + Seek> Bytes<'_, R> {
    /// `n` bytes at `off` (`n` at most [`CHUNK`] unless the caller needs more), `None`
    /// when the input ends first.
    fn get(&mut self, off: u64, n: usize) -> Result<Option<&[u8]>> {
        let end = off.saturating_add(n as u64);
        if end > self.len {
            return Ok(None);
        }
        let holds =
            |(buf, start): &(Vec<u8>, u64)| off >= *start && end <= *start + buf.len() as u64;
        let slot = match self.bufs.iter().position(holds) {
            Some(slot) => slot,
            None => {
                let slot = 1 - self.last;
                self.input.seek_to(off)?;
                let want = CHUNK.max(n).min((self.len - off) as usize);
                let (buf, start) = &mut self.bufs[slot];
                buf.clear();
                buf.resize(want, 0);
                let got = self.input.read_full(buf)?;
                buf.truncate(got);
                *start = off;
                self.read += got as u64;
                slot
            }
        };
        self.last = slot;
        let (buf, start) = &self.bufs[slot];
        let at = (off - start) as usize;
        Ok(buf.get(at..at + n))
    }

    fn u32_at(&mut self, off: u64) -> Result<Option<u64>> {
        Ok(self
            .get(off, 4)?
            .map(|b| u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))))
    }

    /// The frame at `off` if its layout holds: its time and where it ends (a compressed
    /// frame's data is not looked at).
    fn frame(&mut self, off: u64, shape: &Shape) -> Result<Option<(f64, u64)>> {
        let Some(t) = self.get(off, 8)? else {
            return Ok(None);
        };
        let time = f64::from_le_bytes([t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]]);
        if !time.is_finite() || time < shape.first_time {
            return Ok(None);
        }
        let mut at = off + 8;
        if shape.compressed {
            let Some(flags) = self.get(at, 1)?.map(|b| b[0]) else {
                return Ok(None);
            };
            let Some(csize) = self.u32_at(at + 1)? else {
                return Ok(None);
            };
            let data = at + 5;
            let end = data + csize;
            if flags > 7 || csize > shape.max_len || end > shape.len {
                return Ok(None);
            }
            return Ok(Some((time, end)));
        }
        for i in 0..shape.items {
            let Some(len) = self.u32_at(at)? else {
                return Ok(None);
            };
            if let Some((s, block)) = shape.signals
                && s == i
                && !(block..=block + SIGNALS_SLACK).contains(&len)
            {
                return Ok(None);
            }
            at += 4 + len;
            if len > shape.max_len || at > shape.len {
                return Ok(None);
            }
        }
        Ok(Some((time, at)))
    }

    /// Whether the `csize` bytes at `data` inflate to exactly `shape.items` items with a
    /// signals item of the layout's size.
    fn inflates_to_items(&mut self, data: u64, csize: u64, shape: &Shape) -> Result<bool> {
        let Ok(n) = usize::try_from(csize) else {
            return Ok(false);
        };
        let Some(bytes) = self.get(data, n)? else {
            return Ok(false);
        };
        let Ok(plain) = inflate(bytes, shape.max_len, crate::error::Offset::File(data)) else {
            return Ok(false);
        };
        let mut p = 0usize;
        for i in 0..shape.items {
            let Some(l) = plain.get(p..p + 4) else {
                return Ok(false);
            };
            let len = u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize;
            if let Some((s, block)) = shape.signals
                && s == i
                && !(block..=block + SIGNALS_SLACK).contains(&(len as u64))
            {
                return Ok(false);
            }
            p = p.saturating_add(4).saturating_add(len);
        }
        Ok(p == plain.len())
    }

    /// Whether a frame at `off` holds and [`CONFIRM_FRAMES`] frames chain after it; its time
    /// when so. The chain is checked first (a few header reads); only then is a compressed
    /// candidate inflated, and only when its data is not over [`DEEP_CHECK_LEN`] (a larger
    /// one is not confirmed: the search keeps its earlier bound).
    fn confirmed(&mut self, off: u64, shape: &Shape) -> Result<Option<f64>> {
        let Some((first, first_end)) = self.frame(off, shape)? else {
            return Ok(None);
        };
        let (mut time, mut end) = (first, first_end);
        for _ in 0..CONFIRM_FRAMES {
            if end == shape.len {
                break;
            }
            match self.frame(end, shape)? {
                Some((t, next)) if t >= time => (time, end) = (t, next),
                _ => return Ok(None),
            }
        }
        if shape.compressed {
            let data = off + 8 + 5;
            let csize = first_end - data;
            if csize > DEEP_CHECK_LEN || !self.inflates_to_items(data, csize, shape)? {
                return Ok(None);
            }
        }
        Ok(Some(first))
    }

    /// The first confirmed frame at or after `from` and before `until` (and within
    /// [`PROBE_REACH`] of `from`): its offset and time.
    fn sync(&mut self, from: u64, until: u64, shape: &Shape) -> Result<Option<(u64, f64)>> {
        let until = until.min(from.saturating_add(PROBE_REACH)).min(shape.len);
        for off in from..until {
            if let Some(time) = self.confirmed(off, shape)? {
                return Ok(Some((off, time)));
            }
        }
        Ok(None)
    }
}

impl<R: BufRead> Reader<R> {
    /// Whether the input can seek: plain files can, gzip-wrapped tapes cannot.
    pub fn can_seek(&self) -> bool {
        !self.input.is_gzip()
    }
}

impl<R: BufRead + Seek> Reader<R> {
    /// Finds the first frame, in file order, whose time is at least `seconds`, as a walk from
    /// the first frame would, without reading the whole tape: a binary search over byte
    /// offsets (see the module documentation) and a walk of the last stretch. Leaves the
    /// reader on that frame (as [`Reader::seek_frame`] does). Gzip-wrapped input cannot
    /// seek ([`Reader::can_seek`]): an error.
    pub fn seek_time_offset(&mut self, seconds: f64) -> Result<TimeSeek> {
        self.input.seek_to(self.frames_start)?;
        let len = self.input.file_len()?;
        let mut bytes_read = 0;
        // The first frame: its time bounds every other, and reading it settles whether a
        // Recovery tape's frames are compressed.
        let first = match self.input.at_eof()? {
            true => None,
            false => self.skip_frame().ok(),
        };
        bytes_read += self.input.position() - self.frames_start;
        let mut lo = self.frames_start;
        let mut probes = 0;
        if let Some(first_time) = first.filter(|t| t.is_finite()) {
            let shape = Shape {
                items: self.header.data.len(),
                compressed: self.compressed,
                signals: self
                    .header
                    .item_index(super::ITEM_SIGNALS)
                    .zip(self.header.signals.as_ref())
                    .map(|(i, layout)| (i, layout.block_len() as u64)),
                max_len: self.limits.max_record_len,
                first_time,
                len,
            };
            let mut bytes = Bytes {
                input: &mut self.input,
                len,
                bufs: [(Vec::new(), 0), (Vec::new(), 0)],
                last: 0,
                read: 0,
            };
            let mut hi = len;
            while hi.saturating_sub(lo) > LINEAR_BYTES {
                let mid = lo + (hi - lo) / 2;
                probes += 1;
                match bytes.sync(mid, hi, &shape)? {
                    Some((at, time)) if time < seconds => lo = at,
                    _ => hi = mid,
                }
            }
            bytes_read += bytes.read;
        }
        // The walk from `lo`, frame header by frame header.
        self.input.seek_to(lo)?;
        let offset = loop {
            let start = self.input.position();
            match self.input.at_eof() {
                Ok(false) => {}
                Ok(true) | Err(_) => break start,
            }
            match self.skip_frame() {
                Ok(time) if time >= seconds => break start,
                Ok(_) => {}
                // A torn or unreadable frame: reading goes on from it and reports it.
                Err(_) => break start,
            }
        };
        bytes_read += self.input.position().saturating_sub(lo);
        self.seek_frame(offset)?;
        Ok(TimeSeek {
            offset,
            probes,
            bytes_read,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::continuous::{ContinuousFrame, ContinuousHeader, Writer};
    use crate::props::{PropValue, PropertyList};

    /// A tape of `frames` frames (signals: two doubles; multiplayer: junk that contains a
    /// copy of a frame start with an earlier time, so a probe landing in it meets a lure).
    fn tape(frames: usize, compression: i32) -> Vec<u8> {
        let mut t = PropertyList::new();
        t.root
            .set("meta/continuous-compression", PropValue::int(compression));
        for (i, item) in ["signals", "multiplayer"].iter().enumerate() {
            t.root.set(&format!("data[{i}]"), PropValue::string(*item));
        }
        for k in 0..2 {
            t.root.set(
                &format!("signals/signals/signal[{k}]/type"),
                PropValue::string("double"),
            );
            t.root.set(
                &format!("signals/signals/signal[{k}]/property"),
                PropValue::string(format!("/p/d[{k}]")),
            );
        }
        let header = ContinuousHeader::new(t).unwrap();
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        for i in 0..frames {
            let time = 10.0 + i as f64 / 16.0;
            let mut signals = Vec::new();
            signals.extend_from_slice(&time.to_le_bytes());
            signals.extend_from_slice(&(i as f64).to_le_bytes());
            let mut junk = (time - 5.0).to_le_bytes().to_vec();
            junk.extend_from_slice(&16u32.to_le_bytes());
            junk.extend((0..(i % 50) as u32).map(|k| (k * 91 + i as u32) as u8));
            w.write_frame(&ContinuousFrame {
                time,
                items: vec![signals, junk],
                deflate: None,
            })
            .unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn the_search_finds_what_the_index_finds_reading_little() {
        for compression in [0, 1] {
            let bytes = tape(40_000, compression);
            let len = bytes.len() as u64;
            let mut reader = Reader::new(std::io::Cursor::new(&bytes)).unwrap();
            let index = reader.index_frames().unwrap();
            for seconds in [-1.0, 10.0, 10.03, 777.7, 2509.9, 2509.94, 1e9] {
                let found = reader.seek_time_offset(seconds).unwrap();
                assert_eq!(found.offset, index.seek_offset(seconds), "{seconds}");
                if seconds > 100.0 && seconds < 1e9 {
                    assert!(found.probes >= 3, "{seconds}: {} probes", found.probes);
                    assert!(
                        found.bytes_read * 5 < len,
                        "{compression} {seconds}: read {} of {len}",
                        found.bytes_read
                    );
                }
                let mut frame = ContinuousFrame::default();
                if reader.read_frame(&mut frame).unwrap() {
                    assert!(frame.time >= seconds && frame.time - 1.0 / 16.0 < seconds.max(10.0));
                }
            }
        }
    }

    #[test]
    fn cut_and_tiny_tapes_seek_like_the_index() {
        let bytes = tape(8_000, 0);
        let start = Reader::new(&bytes[..]).unwrap().frames_start() as usize;
        for keep in [start, start + 3, bytes.len() / 2 + 7, bytes.len() - 1] {
            let cut = &bytes[..keep];
            let mut reader = Reader::new(std::io::Cursor::new(cut)).unwrap();
            let index = reader.index_frames().unwrap();
            for seconds in [11.0, 300.0, 1e9] {
                let found = reader.seek_time_offset(seconds).unwrap();
                assert_eq!(found.offset, index.seek_offset(seconds), "{keep} {seconds}");
            }
        }
    }
}
