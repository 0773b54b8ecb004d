//! `dynamic_signals.bin`: fixed-stride frames of `f64 t` plus the dynamic payload, read in
//! order ([`FrameReader`]) or by time ([`FrameIndex`], [`state_at`]).

use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use recfmt_core::Integrity;

use crate::error::{Error, Result};
use crate::schema::{Lifecycle, Schema};
use crate::types::{SignalValue, f64_at};

/// File name of the frames inside a recording directory.
pub const DYNAMIC_FILE: &str = "dynamic_signals.bin";
/// File name of the static block inside a recording directory.
pub const STATIC_FILE: &str = "static_signals.bin";

/// One frame as stored: its time and its dynamic payload bytes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawFrame {
    /// Frame time, f64 seconds.
    pub t: f64,
    /// The dynamic payload (`D` bytes).
    pub payload: Vec<u8>,
    /// Index of the frame in the file.
    pub index: u64,
}

/// Reads frames in file order. A torn last frame ends the stream: it is reported through
/// [`Integrity::truncate`] (every complete frame is kept) and its bytes stay available in
/// [`FrameReader::torn_tail`] so a copy can reproduce the file exactly.
///
/// Frames are read in blocks of about 256 KiB and handed out from there, so reading
/// one frame costs no read call: [`FrameReader::read_frame`] copies it into a [`RawFrame`],
/// [`FrameReader::frames`] iterates, and the generic reader decodes straight from the block.
///
/// ```
/// use recfmt_icarec::FrameReader;
/// let mut bytes = Vec::new();
/// for t in [0.0f64, 0.5] {
///     bytes.extend(t.to_le_bytes());
///     bytes.extend([7u8; 8]); // an 8-byte payload
/// }
/// let frames = FrameReader::new(&bytes[..], 16, "dynamic_signals.bin", false);
/// let times: Vec<f64> = frames.frames().map(|f| f.map(|f| f.t)).collect::<Result<_, _>>()?;
/// assert_eq!(times, [0.0, 0.5]);
/// # Ok::<(), recfmt_icarec::Error>(())
/// ```
#[derive(Debug)]
pub struct FrameReader<R> {
    src: R,
    path: PathBuf,
    stride: usize,
    /// Frames read ahead: `block[next..filled]`, whole frames then perhaps a torn tail.
    block: Vec<u8>,
    current: usize,
    next: usize,
    filled: usize,
    position: u64,
    frames: u64,
    integrity: Integrity,
    strict: bool,
    last_t: Option<f64>,
    torn: Vec<u8>,
    done: bool,
    /// The frames end before the first one at least this late ([`FrameReader::set_stop_time`]).
    stop_t: f64,
}

/// Bytes of frames read at once: large enough to amortise the read call, small enough to stay
/// in cache.
const BLOCK_BYTES: usize = 256 << 10;

impl<R: Read + Seek> FrameReader<R> {
    /// Repositions before frame `index`, so the next [`FrameReader::read_frame`] returns it
    /// (frames are a fixed stride apart, so this is one seek).
    pub fn seek_frame(&mut self, index: u64) -> io::Result<()> {
        let offset = index.checked_mul(self.stride as u64).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "frame offset overflows u64")
        })?;
        self.src.seek(io::SeekFrom::Start(offset))?;
        self.position = offset;
        self.frames = index;
        self.last_t = None;
        self.done = false;
        self.current = 0;
        self.next = 0;
        self.filled = 0;
        Ok(())
    }
}

impl<R: Read> FrameReader<R> {
    /// Reads frames of `stride` bytes (`8 + D`) from `src`; errors name `path`.
    pub fn new(src: R, stride: usize, path: impl Into<PathBuf>, strict: bool) -> Self {
        FrameReader {
            src,
            path: path.into(),
            stride: stride.max(8),
            block: Vec::new(),
            current: 0,
            next: 0,
            filled: 0,
            position: 0,
            frames: 0,
            integrity: Integrity::default(),
            strict,
            last_t: None,
            torn: Vec::new(),
            done: false,
            stop_t: f64::INFINITY,
        }
    }

    /// Ends the frames at the first one whose time is `t` or later, for a caller that wants
    /// nothing from that time on. The frames are assumed in time order, as the format
    /// requires: a frame that goes back below `t` after a later one is not read. The frame
    /// that ends them stays unread, so neither it nor anything after it (a torn tail
    /// included) is reported; a NaN time never ends them.
    pub fn set_stop_time(&mut self, t: f64) {
        self.stop_t = t;
    }

    /// Fills `frame` with the next complete frame; `Ok(false)` at the end (or at a torn tail).
    pub fn read_frame(&mut self, frame: &mut RawFrame) -> Result<bool> {
        let index = self.frames;
        if !self.advance()? {
            return Ok(false);
        }
        let bytes = self.frame();
        frame.t = f64_at(bytes, 0);
        frame.index = index;
        frame.payload.clear();
        frame.payload.extend_from_slice(&bytes[8..]);
        Ok(true)
    }

    /// The frames left, each as a [`RawFrame`] (an error ends the iteration).
    pub fn frames(self) -> Frames<R> {
        Frames {
            reader: self,
            failed: false,
        }
    }

    /// Moves to the next complete frame, its time checked and the frame counted as read;
    /// `false` at the end (or at a torn tail, reported then). [`FrameReader::frame`] gives it.
    pub(crate) fn advance(&mut self) -> Result<bool> {
        if !self.has_frame()? {
            return Ok(false);
        }
        let t = f64_at(&self.block, self.next);
        if t >= self.stop_t {
            // Left unread: every later call stops here again.
            return Ok(false);
        }
        self.accept(t)?;
        self.current = self.next;
        self.next += self.stride;
        Ok(true)
    }

    /// The frame [`FrameReader::advance`] moved to, as stored: the 8-byte time, then the
    /// payload.
    pub(crate) fn frame(&self) -> &[u8] {
        self.block
            .get(self.current..self.current + self.stride)
            .unwrap_or(&[])
    }

    /// The time of the next complete frame without reading it, `None` at the end. A stop
    /// time ([`FrameReader::set_stop_time`]) does not hide it: the static row takes its time
    /// from the first frame whether or not that frame is read.
    pub(crate) fn peek_time(&mut self) -> Result<Option<f64>> {
        Ok(self.has_frame()?.then(|| f64_at(&self.block, self.next)))
    }

    /// True when a complete frame is waiting in the block, reading the next block when the
    /// last one is used up; ends at a torn tail.
    fn has_frame(&mut self) -> Result<bool> {
        if self.next + self.stride <= self.filled {
            return Ok(true);
        }
        if self.done {
            return Ok(false);
        }
        if self.next < self.filled {
            // A partial frame after the last complete one: the file ended inside it.
            let (from, to) = (self.next, self.filled);
            self.next = to;
            let tail = std::mem::take(&mut self.block);
            let ended = self.end_torn(&tail[from..to]);
            self.block = tail;
            return ended.map(|()| false);
        }
        self.filled = self.read_block()?;
        self.next = 0;
        if self.filled == 0 {
            self.done = true;
            return Ok(false);
        }
        self.has_frame()
    }

    /// Reads the bytes of up to a block of frames into the front of the block buffer and
    /// returns how many it read (fewer than asked only at the end of the file).
    ///
    /// The buffer keeps its length between calls (so it is zeroed once, not per block) and
    /// grows only as data arrives, so a corrupt schema declaring a huge frame cannot make a
    /// small file allocate much.
    fn read_block(&mut self) -> Result<usize> {
        const FIRST_READ: usize = 64 << 10;
        let want = (BLOCK_BYTES / self.stride)
            .max(1)
            .saturating_mul(self.stride);
        let buf = &mut self.block;
        let mut filled = 0;
        while filled < want {
            if filled == buf.len() {
                let grown = filled.saturating_mul(2).max(FIRST_READ).min(want);
                buf.resize(grown, 0);
            }
            let end = buf.len().min(want);
            match self.src.read(&mut buf[filled..end]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(&self.path, e)),
            }
        }
        Ok(filled)
    }

    /// Bytes per frame (`8 + D`).
    pub(crate) fn stride(&self) -> usize {
        self.stride
    }

    /// Checks the time of the next frame (non-decreasing, finite) and counts the frame as
    /// read. In strict mode a decreasing time is an error and the frame is not counted.
    fn accept(&mut self, t: f64) -> Result<()> {
        if let Some(last) = self.last_t
            && t.partial_cmp(&last)
                .is_none_or(|o| o == std::cmp::Ordering::Less)
        {
            if self.strict {
                return Err(Error::malformed(
                    &self.path,
                    self.position,
                    format!("a time >= {last} (non-decreasing), found {t}"),
                ));
            }
            self.integrity.warn(format!(
                "{}: at byte {}: time {t} of frame {} is before {last} (time must be non-decreasing)",
                self.path.display(),
                self.position,
                self.frames
            ));
        } else if !t.is_finite() {
            self.integrity.warn(format!(
                "{}: at byte {}: frame {} has a non-finite time {t}",
                self.path.display(),
                self.position,
                self.frames
            ));
        }
        if t.is_finite() {
            self.last_t = Some(self.last_t.map_or(t, |l| l.max(t)));
        }
        self.position += self.stride as u64;
        self.frames += 1;
        Ok(())
    }

    /// Ends the frames at a torn tail (the `tail` bytes after the last complete frame): an
    /// error in strict mode, otherwise reported as a truncation and kept for
    /// [`FrameReader::torn_tail`].
    fn end_torn(&mut self, tail: &[u8]) -> Result<()> {
        self.done = true;
        let got = tail.len();
        let expected = format!(
            "a complete frame of {} bytes (8-byte time + {}-byte payload), the file ends after {got}",
            self.stride,
            self.stride - 8
        );
        if self.strict {
            return Err(Error::malformed(&self.path, self.position, expected));
        }
        self.integrity.truncate(self.position, got as u64);
        self.integrity.warn(format!(
            "{}: at byte {}: torn last frame: expected {expected}; {} complete frames kept, {got} bytes dropped",
            self.path.display(),
            self.position,
            self.frames
        ));
        self.torn.clear();
        self.torn.extend_from_slice(tail);
        Ok(())
    }

    /// The bytes of a torn last frame (empty unless the file ended inside a frame).
    pub fn torn_tail(&self) -> &[u8] {
        &self.torn
    }

    /// What was lost or odd so far.
    pub fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    /// Mutable access, for adapters that add their own warnings.
    pub fn integrity_mut(&mut self) -> &mut Integrity {
        &mut self.integrity
    }

    /// Bytes consumed.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Complete frames read.
    pub fn frames_read(&self) -> u64 {
        self.frames
    }
}

/// The frames of a [`FrameReader`], from [`FrameReader::frames`].
#[derive(Debug)]
pub struct Frames<R> {
    reader: FrameReader<R>,
    failed: bool,
}

impl<R> Frames<R> {
    /// The reader, for its [`FrameReader::integrity`] and [`FrameReader::torn_tail`].
    pub fn reader(&self) -> &FrameReader<R> {
        &self.reader
    }
}

impl<R: Read> Iterator for Frames<R> {
    type Item = Result<RawFrame>;

    fn next(&mut self) -> Option<Self::Item> {
        recfmt_core::next_read(&mut self.failed, |frame| self.reader.read_frame(frame))
    }
}

/// Random access to frames by index and by time, reading only what it needs.
///
/// Time lookups binary-search the frame times (8 bytes per probe), so they cost
/// `O(log N)` small reads and assume the times are non-decreasing, as the format requires.
/// [`FrameIndex::search`] checks the times it probes and, when they are out of order, reads
/// every frame time instead and says where the order breaks.
#[derive(Debug)]
pub struct FrameIndex<R> {
    src: R,
    stride: u64,
    frames: u64,
    tail: u64,
}

impl<R: Read + Seek> FrameIndex<R> {
    /// Indexes `src`, a `dynamic_signals.bin` with frames of `stride` bytes.
    pub fn new(mut src: R, stride: usize) -> io::Result<Self> {
        let len = src.seek(SeekFrom::End(0))?;
        let stride = stride.max(8) as u64;
        Ok(FrameIndex {
            src,
            stride,
            frames: len / stride,
            tail: len % stride,
        })
    }

    /// Number of complete frames.
    pub fn len(&self) -> u64 {
        self.frames
    }

    /// True when there is no complete frame.
    pub fn is_empty(&self) -> bool {
        self.frames == 0
    }

    /// Bytes of a torn last frame.
    pub fn torn_bytes(&self) -> u64 {
        self.tail
    }

    /// Time of frame `i`.
    pub fn time_at(&mut self, i: u64) -> io::Result<f64> {
        let mut t = [0u8; 8];
        self.src.seek(SeekFrom::Start(i * self.stride))?;
        self.src.read_exact(&mut t)?;
        Ok(f64::from_le_bytes(t))
    }

    /// Reads frame `i` into `frame`.
    pub fn read(&mut self, i: u64, frame: &mut RawFrame) -> io::Result<()> {
        if i >= self.frames {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("frame {i} of {}", self.frames),
            ));
        }
        self.src.seek(SeekFrom::Start(i * self.stride))?;
        let mut t = [0u8; 8];
        self.src.read_exact(&mut t)?;
        frame.t = f64::from_le_bytes(t);
        frame.index = i;
        frame.payload.resize((self.stride - 8) as usize, 0);
        self.src.read_exact(&mut frame.payload)
    }

    /// Index of the last frame whose time is `<= t`, `None` when every frame is later (or `t`
    /// is NaN): a plain binary search, right only when the times are in order
    /// ([`FrameIndex::search`] checks what it meets).
    pub fn find(&mut self, t: f64) -> io::Result<Option<u64>> {
        if t.is_nan() {
            return Ok(None);
        }
        // Partition point: the first frame with time > t.
        let (mut lo, mut hi) = (0u64, self.frames);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.time_at(mid)? <= t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo.checked_sub(1))
    }

    /// Index of the first frame whose time is `>= t` (`len()` when every frame is earlier,
    /// `None` when `t` is NaN): where a window starting at `t` begins. Unlike
    /// [`FrameIndex::find`], frames that share exactly the time `t` are all at or after the
    /// answer, so a window that starts on a repeated time keeps every one of them. A plain
    /// binary search, right only when the times are in order.
    pub fn first_at_or_after(&mut self, t: f64) -> io::Result<Option<u64>> {
        if t.is_nan() {
            return Ok(None);
        }
        // Partition point: the first frame with time >= t (a NaN time compares false, so it
        // counts as "not before t").
        let (mut lo, mut hi) = (0u64, self.frames);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.time_at(mid)? < t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(Some(lo))
    }

    /// The frame of the latest time `<= t` (the last of equal times); `None` when every frame
    /// is later or `t` is NaN.
    ///
    /// Binary search when the times it probes are in order, `O(log N)` reads. When they are
    /// not (times that go back, a NaN time), the binary search's answer cannot be trusted:
    /// every frame time is read (in blocks of about 1 MiB) and
    /// [`Search::out_of_order`] names the first frame out of order. Disorder that no probe
    /// meets goes unseen: only reading every time would find it.
    pub fn search(&mut self, t: f64) -> io::Result<Search> {
        if t.is_nan() {
            return Ok(Search::default());
        }
        let mut probes: Vec<(u64, f64)> = Vec::new();
        let (mut lo, mut hi) = (0u64, self.frames);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let time = self.time_at(mid)?;
            probes.push((mid, time));
            if time <= t {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        probes.sort_by_key(|&(i, _)| i);
        let in_order = probes.iter().all(|(_, time)| !time.is_nan())
            && probes.windows(2).all(|w| w[0].1 <= w[1].1);
        if in_order {
            return Ok(Search {
                frame: lo.checked_sub(1),
                out_of_order: None,
            });
        }
        self.scan(t)
    }

    /// [`FrameIndex::search`] by reading every frame time in order.
    fn scan(&mut self, t: f64) -> io::Result<Search> {
        let mut best: Option<(u64, f64)> = None;
        let mut out_of_order = None;
        let mut latest: Option<f64> = None;
        self.for_each_time(|i, time| {
            let back = time.is_nan() || latest.is_some_and(|l| time < l);
            if back && out_of_order.is_none() {
                out_of_order = Some(OutOfOrder {
                    frame: i,
                    t: time,
                    latest_before: latest,
                });
            }
            if !time.is_nan() {
                latest = Some(latest.map_or(time, |l| l.max(time)));
            }
            if time <= t && best.is_none_or(|(_, b)| time >= b) {
                best = Some((i, time));
            }
        })?;
        Ok(Search {
            frame: best.map(|(i, _)| i),
            out_of_order,
        })
    }

    /// Calls `f` with the index and time of every frame, in order.
    fn for_each_time(&mut self, mut f: impl FnMut(u64, f64)) -> io::Result<()> {
        const BLOCK: u64 = 1 << 20;
        let per_block = (BLOCK / self.stride).max(1);
        let mut block = Vec::new();
        let mut first = 0u64;
        while first < self.frames {
            let n = per_block.min(self.frames - first);
            if n == 1 {
                f(first, self.time_at(first)?);
            } else {
                block.resize((n * self.stride) as usize, 0);
                self.src.seek(SeekFrom::Start(first * self.stride))?;
                self.src.read_exact(&mut block)?;
                for k in 0..n {
                    f(first + k, f64_at(&block, (k * self.stride) as usize));
                }
            }
            first += n;
        }
        Ok(())
    }

    /// Gives the source back.
    pub fn into_inner(self) -> R {
        self.src
    }
}

/// What [`FrameIndex::search`] found.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Search {
    /// The frame of the latest time at or before the time sought.
    pub frame: Option<u64>,
    /// Set when the times were found out of order (and every frame time was read).
    pub out_of_order: Option<OutOfOrder>,
}

/// The first frame whose time is before an earlier frame's, or NaN.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutOfOrder {
    /// Its index.
    pub frame: u64,
    /// Its time.
    pub t: f64,
    /// The latest time of the frames before it (`None` when it is the first frame).
    pub latest_before: Option<f64>,
}

impl std::fmt::Display for OutOfOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.latest_before {
            Some(latest) if !self.t.is_nan() => write!(
                f,
                "frame {} has time {} s, before the {latest} s of an earlier frame",
                self.frame, self.t
            ),
            _ => write!(f, "frame {} has time {}", self.frame, self.t),
        }
    }
}

/// The value of every signal at one instant: statics and the dynamic values of one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Time of the frame the dynamic values come from.
    pub t: f64,
    /// Index of that frame.
    pub frame: u64,
    /// Every signal (static and dynamic, schema order; opaque ones left out) with its value.
    pub values: Vec<(String, SignalValue)>,
}

impl State {
    /// The value of a signal, or of one expanded column (`Vehicle.Nav.position.x`, returned as
    /// a [`SignalValue::Double`]).
    ///
    /// ```
    /// use recfmt_icarec::{SignalValue, State};
    /// let s = State { t: 1.0, frame: 0, values: vec![("p".into(), SignalValue::Vec3([1.0, 2.0, 3.0]))] };
    /// assert_eq!(s.get("p"), Some(SignalValue::Vec3([1.0, 2.0, 3.0])));
    /// assert_eq!(s.get("p.y"), Some(SignalValue::Double(2.0)));
    /// assert_eq!(s.get("p.w"), None);
    /// ```
    pub fn get(&self, name: &str) -> Option<SignalValue> {
        if let Some((_, v)) = self.values.iter().find(|(n, _)| n == name) {
            return Some(*v);
        }
        let (base, suffix) = name.rsplit_once('.')?;
        let (_, v) = self.values.iter().find(|(n, _)| n == base)?;
        let i = v
            .signal_type()
            .components()
            .iter()
            .position(|c| *c == suffix)?;
        v.elements().nth(i).map(SignalValue::Double)
    }
}

/// Decodes every signal (schema order, opaque ones left out) from the static block and one
/// dynamic payload.
pub(crate) fn decode_signals(
    schema: &Schema,
    statics: &[u8],
    payload: &[u8],
    out: &mut Vec<(String, SignalValue)>,
) {
    for p in &schema.layout().placed {
        let bytes = match p.lifecycle {
            Lifecycle::Static => statics,
            Lifecycle::Dynamic => payload,
        };
        if let Some((v, _)) = p.ty.decode(p.slot(bytes)) {
            out.push((schema.spec(p).name.clone(), v));
        }
    }
}

/// The state at time `t`: every static signal plus the dynamic signals of the frame with the
/// latest time `<= t`, found by binary search over `dynamic` (a `dynamic_signals.bin`). Reads
/// `O(log N)` times of 8 bytes and one frame, never the whole file, while the times it meets
/// are in order ([`FrameIndex::search`]; [`state_at_checked`] also says when they were not).
/// `None` when `t` is before the first frame.
pub fn state_at<R: Read + Seek>(
    schema: &Schema,
    statics: &[u8],
    dynamic: R,
    t: f64,
    path: &Path,
) -> Result<Option<State>> {
    state_at_checked(schema, statics, dynamic, t, path).map(|(state, _)| state)
}

/// [`state_at`], and where the frame times were found out of order (every frame time was then
/// read to find the right frame).
pub fn state_at_checked<R: Read + Seek>(
    schema: &Schema,
    statics: &[u8],
    dynamic: R,
    t: f64,
    path: &Path,
) -> Result<(Option<State>, Option<OutOfOrder>)> {
    let mut index =
        FrameIndex::new(dynamic, schema.layout().stride()).map_err(|e| Error::io(path, e))?;
    let search = index.search(t).map_err(|e| Error::io(path, e))?;
    let Some(i) = search.frame else {
        return Ok((None, search.out_of_order));
    };
    let mut frame = RawFrame::default();
    index.read(i, &mut frame).map_err(|e| Error::io(path, e))?;
    let mut values = Vec::with_capacity(schema.layout().placed.len());
    decode_signals(schema, statics, &frame.payload, &mut values);
    let state = State {
        t: frame.t,
        frame: i,
        values,
    };
    Ok((Some(state), search.out_of_order))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(times: &[f64], payload: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, t) in times.iter().enumerate() {
            out.extend(t.to_le_bytes());
            out.extend(std::iter::repeat_n(i as u8, payload));
        }
        out
    }

    #[test]
    fn a_torn_tail_keeps_every_complete_frame() {
        let mut bytes = frames(&[0.0, 0.5, 1.0], 8);
        bytes.extend([1, 2, 3]);
        let mut r = FrameReader::new(&bytes[..], 16, "dynamic_signals.bin", false);
        let mut f = RawFrame::default();
        let mut n = 0;
        while r.read_frame(&mut f).unwrap() {
            n += 1;
        }
        assert_eq!(n, 3);
        assert_eq!(r.integrity().truncated_at, Some(48));
        assert_eq!(r.integrity().bytes_lost, 3);
        assert_eq!(r.torn_tail(), [1, 2, 3]);
        assert!(r.integrity().warnings[0].contains("at byte 48"));

        let mut strict = FrameReader::new(&bytes[..], 16, "dynamic_signals.bin", true);
        let err = loop {
            match strict.read_frame(&mut f) {
                Ok(true) => {}
                Ok(false) => panic!("strict mode must fail"),
                Err(e) => break e,
            }
        };
        assert_eq!(
            err.to_string(),
            "dynamic_signals.bin: at byte 48: expected a complete frame of 16 bytes (8-byte time + 8-byte payload), the file ends after 3"
        );
    }

    #[test]
    fn decreasing_time_warns_or_fails_in_strict_mode() {
        let bytes = frames(&[0.0, 1.0, 0.5], 0);
        let mut r = FrameReader::new(&bytes[..], 8, "d", false);
        let mut f = RawFrame::default();
        while r.read_frame(&mut f).unwrap() {}
        assert_eq!(r.integrity().warnings.len(), 1);
        assert!(r.integrity().warnings[0].contains("non-decreasing"));
        let mut strict = FrameReader::new(&bytes[..], 8, "d", true);
        assert!(strict.read_frame(&mut f).unwrap());
        assert!(strict.read_frame(&mut f).unwrap());
        assert!(strict.read_frame(&mut f).is_err());
    }

    #[test]
    fn search_reads_every_time_when_the_probes_meet_disorder() {
        // The times of icarec_at_nonmonotonic (round 2 of the hardening review).
        let times = [0.0, 1.0, 2.0, 3.0, 1.5, 0.5, 4.0, f64::NAN, 5.0];
        let bytes = frames(&times, 4);
        let mut idx = FrameIndex::new(std::io::Cursor::new(bytes), 12).unwrap();
        // The binary search alone answers frame 6 (t = 4) and frame 5 (t = 0.5).
        assert_eq!(idx.find(6.0).unwrap(), Some(6));
        assert_eq!(idx.find(2.5).unwrap(), Some(5));
        let found = idx.search(6.0).unwrap();
        assert_eq!(found.frame, Some(8));
        let disorder = found.out_of_order.unwrap();
        assert_eq!((disorder.frame, disorder.t), (4, 1.5));
        assert_eq!(
            disorder.to_string(),
            "frame 4 has time 1.5 s, before the 3 s of an earlier frame"
        );
        assert_eq!(idx.search(2.5).unwrap().frame, Some(2));
        assert_eq!(idx.search(1.2).unwrap().frame, Some(1));
        assert_eq!(idx.search(-1.0).unwrap().frame, None);
        // In order: the binary search, nothing said.
        let bytes = frames(&[0.0, 1.0, 1.0, 2.0], 4);
        let mut idx = FrameIndex::new(std::io::Cursor::new(bytes), 12).unwrap();
        assert_eq!(
            idx.search(1.5).unwrap(),
            Search {
                frame: Some(2),
                out_of_order: None
            }
        );
    }

    #[test]
    fn a_scan_reads_blocks_of_many_frames() {
        let times: Vec<f64> = (0..200_000)
            .map(|i| if i == 150_000 { -1.0 } else { f64::from(i) })
            .collect();
        let bytes = frames(&times, 0);
        let mut idx = FrameIndex::new(std::io::Cursor::new(bytes), 8).unwrap();
        let found = idx.scan(149_999.5).unwrap();
        assert_eq!(found.frame, Some(149_999));
        assert_eq!(found.out_of_order.unwrap().frame, 150_000);
    }

    #[test]
    fn find_returns_the_last_frame_at_or_before_t() {
        let bytes = frames(&[0.0, 0.1, 0.1, 0.2, 0.5], 4);
        let mut idx = FrameIndex::new(std::io::Cursor::new(bytes), 12).unwrap();
        assert_eq!(idx.len(), 5);
        assert_eq!(idx.find(-1.0).unwrap(), None);
        assert_eq!(idx.find(0.0).unwrap(), Some(0));
        assert_eq!(idx.find(0.1).unwrap(), Some(2));
        assert_eq!(idx.find(0.15).unwrap(), Some(2));
        assert_eq!(idx.find(0.5).unwrap(), Some(4));
        assert_eq!(idx.find(99.0).unwrap(), Some(4));
        assert_eq!(idx.find(f64::NAN).unwrap(), None);
        let mut f = RawFrame::default();
        idx.read(3, &mut f).unwrap();
        assert_eq!((f.t, f.payload.as_slice()), (0.2, &[3u8; 4][..]));
        assert!(idx.read(5, &mut f).is_err());
    }
}
