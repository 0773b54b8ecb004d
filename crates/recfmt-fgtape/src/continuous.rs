//! Continuous and Recovery tapes (FlightGear `next` from 2021-02 and 2024.1).
//!
//! Uncompressed files: the magic string with its NUL, a `u32` length and the header XML with
//! its NUL, then frames until the end of the file. The header's root `data[]` leaves name the
//! items of every frame, in order (`signals`, `multiplayer`, `extra-properties`). A frame is
//!
//! * uncompressed: `f64 time`, then per item `u32 len` and `len` bytes;
//! * compressed (`meta/continuous-compression` = 1): `f64 time`, `u8 flags` (bit 0 signals,
//!   bit 1 multiplayer, bit 2 extra properties), `u32 csize`, and a raw DEFLATE stream that
//!   inflates to the uncompressed item list.
//!
//! The last frame of a file FlightGear was still writing can be cut short; the reader stops
//! there quietly and reports it ([`Reader::truncated`]), as FlightGear's indexer does.
//!
//! No real Continuous or Recovery tape was available: this module follows the spec (§5, §6)
//! and is tested with synthetic files.
//!
//! ```
//! use recfmt_fgtape::continuous::{ContinuousFrame, ContinuousHeader, Reader, Writer};
//! use recfmt_fgtape::props::{PropValue, PropertyList};
//!
//! let mut tree = PropertyList::new();
//! tree.root.set("meta/continuous-compression", PropValue::int(1));
//! tree.root.set("data", PropValue::string("multiplayer"));
//! let header = ContinuousHeader::new(tree)?;
//! let mut w = Writer::new(Vec::new(), &header)?;
//! w.write_frame(&ContinuousFrame { time: 2.5, items: vec![vec![1, 0, 42]], deflate: None })?;
//! let bytes = w.finish()?;
//!
//! let mut r = Reader::new(&bytes[..])?;
//! let mut frame = ContinuousFrame::default();
//! assert!(r.read_frame(&mut frame)?);
//! assert_eq!((frame.time, frame.items[0].as_slice()), (2.5, &[1u8, 0, 42][..]));
//! assert!(!r.read_frame(&mut frame)?);
//!
//! // Or as an iterator:
//! let times: Vec<f64> = Reader::new(&bytes[..])?.frames().map(|f| f.map(|f| f.time)).collect::<Result<_, _>>()?;
//! assert_eq!(times, [2.5]);
//! # Ok::<(), recfmt_fgtape::Error>(())
//! ```

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::path::Path;

use recfmt_core::{Limits, ReadOptions};

use crate::error::{Error, Offset, Result};
use crate::input::{Input, Source};
use crate::normal::{MAGIC, XmlContainer};
use crate::props::{PropNode, PropertyList};
use crate::signals::SignalLayout;

mod seek;
pub use seek::TimeSeek;

/// Item name of the signal block.
pub const ITEM_SIGNALS: &str = "signals";
/// Item name of the multiplayer packets.
pub const ITEM_MULTIPLAYER: &str = "multiplayer";
/// Item name of the extra-property changes.
pub const ITEM_EXTRA_PROPERTIES: &str = "extra-properties";

/// Flag bit: the frame has signals.
pub const FLAG_SIGNALS: u8 = 1;
/// Flag bit: the frame has (non-empty) multiplayer data.
pub const FLAG_MULTIPLAYER: u8 = 2;
/// Flag bit: the frame has (non-empty) extra properties.
pub const FLAG_EXTRA_PROPERTIES: u8 = 4;

/// The header of a Continuous or Recovery tape.
#[derive(Debug, Clone, PartialEq)]
pub struct ContinuousHeader {
    /// The header XML container (text and NUL) and its tree.
    pub xml: XmlContainer,
    /// The item names of every frame, in order (the root `data[]` leaves).
    pub data: Vec<String>,
    /// Whether frames are compressed (`meta/continuous-compression` non-zero).
    pub compression: bool,
    /// The signal layout, when frames carry a `signals` item.
    pub signals: Option<SignalLayout>,
}

impl ContinuousHeader {
    /// A header from a tree (written the SimGear way).
    pub fn new(tree: PropertyList) -> Result<Self> {
        Self::from_xml(
            XmlContainer::from_tree(tree),
            &Limits::default(),
            Offset::File(36),
        )
    }

    /// Derives the item list, compression and signal layout from a parsed header; `offset`
    /// is where the XML starts (for errors).
    pub fn from_xml(xml: XmlContainer, limits: &Limits, offset: Offset) -> Result<Self> {
        let tree = &xml.tree;
        let data: Vec<String> = tree
            .root
            .children_named("data")
            .map(|d| d.string_value().unwrap_or("").to_owned())
            .collect();
        let compression = tree
            .get("meta/continuous-compression")
            .and_then(PropNode::int_value)
            .unwrap_or(0)
            != 0;
        let signals = if data.iter().any(|d| d == ITEM_SIGNALS) {
            let layout = SignalLayout::from_config(&tree.root, limits)?;
            let stored = tree
                .get("signals/recorder/record-size")
                .and_then(PropNode::int_value)
                .unwrap_or(0);
            if stored != 0 && i64::from(stored) != layout.record_size() as i64 {
                return Err(Error::malformed(
                    offset,
                    format!(
                        "signals/recorder/record-size {stored} to match the signal list ({} bytes)",
                        layout.record_size()
                    ),
                ));
            }
            Some(layout)
        } else {
            None
        };
        Ok(ContinuousHeader {
            xml,
            data,
            compression,
            signals,
        })
    }

    /// Position of an item in every frame's item list.
    pub fn item_index(&self, name: &str) -> Option<usize> {
        self.data.iter().position(|d| d == name)
    }

    /// True for the shape FlightGear gives Recovery tapes: only `signals`, and no
    /// `continuous-compression` key.
    pub fn is_recovery_like(&self) -> bool {
        self.data == [ITEM_SIGNALS] && self.xml.tree.get("meta/continuous-compression").is_none()
    }

    /// The flags FlightGear sets for a frame with these items.
    pub fn flags_for(&self, items: &[Vec<u8>]) -> u8 {
        let mut flags = 0;
        for (name, item) in self.data.iter().zip(items) {
            match name.as_str() {
                ITEM_SIGNALS => flags |= FLAG_SIGNALS,
                ITEM_MULTIPLAYER if !item.is_empty() => flags |= FLAG_MULTIPLAYER,
                ITEM_EXTRA_PROPERTIES if !item.is_empty() => flags |= FLAG_EXTRA_PROPERTIES,
                _ => {}
            }
        }
        flags
    }
}

/// A compressed frame's stored form, kept so it can be written back unchanged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deflated {
    /// The flags byte.
    pub flags: u8,
    /// The raw DEFLATE bytes.
    pub data: Vec<u8>,
}

/// One frame of a Continuous or Recovery tape.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContinuousFrame {
    /// Simulation time in seconds (UTC epoch seconds with FlightGear's simple-time).
    pub time: f64,
    /// One payload per header `data[]` entry, in header order. The `signals` item holds the
    /// signal block plus 8 unused bytes.
    pub items: Vec<Vec<u8>>,
    /// For compressed frames: the flags and DEFLATE bytes as read (the writer reuses them).
    pub deflate: Option<Deflated>,
}

/// Where a file ends inside a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncation {
    /// Start of the incomplete frame.
    pub offset: Offset,
    /// Bytes of it present.
    pub bytes: u64,
}

/// Time and file offset of one frame, from [`Reader::index_frames`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexEntry {
    /// The frame's time.
    pub time: f64,
    /// File offset of the frame's first byte.
    pub offset: u64,
}

/// Where every frame of a tape starts, built in one pass without decoding a frame.
///
/// ```
/// use recfmt_fgtape::continuous::{ContinuousFrame, ContinuousHeader, Reader, Writer};
/// use recfmt_fgtape::props::{PropValue, PropertyList};
///
/// let mut tree = PropertyList::new();
/// tree.root.set("data", PropValue::string("extra-properties"));
/// let header = ContinuousHeader::new(tree)?;
/// let mut w = Writer::new(Vec::new(), &header)?;
/// for i in 0..4 {
///     let frame = ContinuousFrame { time: f64::from(i), items: vec![vec![]], deflate: None };
///     w.write_frame(&frame)?;
/// }
/// let bytes = w.finish()?;
///
/// let mut r = Reader::new(std::io::Cursor::new(bytes))?;
/// let index = r.index_frames()?;
/// assert_eq!(index.frames.len(), 4);
/// r.seek_frame(index.seek_offset(2.5))?;
/// let mut frame = ContinuousFrame::default();
/// assert!(r.read_frame(&mut frame)?);
/// assert_eq!(frame.time, 3.0);
/// # Ok::<(), recfmt_fgtape::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FrameIndex {
    /// Every whole frame, in file order.
    pub frames: Vec<IndexEntry>,
    /// Where indexing stopped: the end of the file, or the start of a torn or unreadable
    /// frame.
    pub end: u64,
    /// Why indexing stopped before the end of the file (a torn or corrupt frame).
    pub stopped: Option<String>,
}

impl FrameIndex {
    /// Offset of the first frame, in file order, whose time is at least `seconds`; reading
    /// from there skips no frame at or after `seconds`, and, when times rise through the
    /// file, reads no frame before it. [`FrameIndex::end`] when no frame is that late.
    pub fn seek_offset(&self, seconds: f64) -> u64 {
        self.frames
            .iter()
            .find(|e| e.time >= seconds)
            .map_or(self.end, |e| e.offset)
    }
}

/// Reader of Continuous and Recovery tapes.
#[derive(Debug)]
pub struct Reader<R> {
    input: Input<R>,
    frames_start: u64,
    limits: Limits,
    strict: bool,
    header: ContinuousHeader,
    compressed: bool,
    checked_recovery: bool,
    truncated: Option<Truncation>,
    frames: u64,
    warnings: Vec<String>,
}

impl Reader<BufReader<File>> {
    /// Opens a tape file and reads its header.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Opens a tape file with explicit options and reads its header.
    pub fn open_with(path: impl AsRef<Path>, options: &ReadOptions) -> Result<Self> {
        Self::with_options(
            BufReader::with_capacity(64 * 1024, File::open(path)?),
            options,
        )
    }
}

impl<R: BufRead> Reader<R> {
    /// Reads the header with default options.
    pub fn new(input: R) -> Result<Self> {
        Self::with_options(input, &ReadOptions::default())
    }

    /// Reads the header with explicit limits and strictness (strict: a torn last frame is an
    /// error, and so is data left over in a frame).
    pub fn with_options(input: R, options: &ReadOptions) -> Result<Self> {
        let mut input = Input::new(Source::sniff(input)?);
        let mut magic = [0u8; 32];
        input.exact(
            &mut magic,
            "the magic \"FlightGear Flight Recorder Tape\\0\"",
        )?;
        if &magic != MAGIC {
            return Err(Error::malformed(
                input.at(0),
                "the magic \"FlightGear Flight Recorder Tape\\0\"",
            ));
        }
        let len_at = input.offset();
        let len = u64::from(input.u32("the header length")?);
        Error::check_limit("header length", len, options.limits.max_record_len, len_at)?;
        let mut payload = Vec::new();
        input.read_into(&mut payload, len, "the header XML")?;
        let mut warnings = Vec::new();
        let xml_at = len_at.plus(4);
        let xml = XmlContainer::parse(payload, xml_at, options.strict, &mut warnings)?;
        let header = ContinuousHeader::from_xml(xml, &options.limits, xml_at)?;
        if let Some(layout) = &header.signals {
            Error::check_limit(
                "record size",
                layout.record_size() as u64,
                options.limits.max_record_len,
                xml_at,
            )?;
            warnings.extend(layout.warnings().iter().map(|w| format!("config: {w}")));
        }
        Ok(Reader {
            frames_start: input.position(),
            input,
            limits: options.limits,
            strict: options.strict,
            compressed: header.compression,
            header,
            checked_recovery: false,
            truncated: None,
            frames: 0,
            warnings,
        })
    }

    /// The header.
    pub fn header(&self) -> &ContinuousHeader {
        &self.header
    }

    /// Where the file ends inside a frame, once reading has stopped there.
    pub fn truncated(&self) -> Option<Truncation> {
        self.truncated
    }

    /// Whether frames are read as compressed (the header says so, or a known-bad Recovery
    /// file was recognised).
    pub fn compressed(&self) -> bool {
        self.compressed
    }

    /// Notes about deviations that were tolerated.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> u64 {
        self.input.position()
    }

    /// Offset of the first frame (the end of the header).
    pub fn frames_start(&self) -> u64 {
        self.frames_start
    }

    /// Indexes the frames from the current position to the end of the file, the way
    /// FlightGear's indexer does: each frame's time is read and its items (or compressed
    /// data) skipped by their lengths, without decoding or inflating anything. Indexing
    /// stops quietly at a torn or unreadable frame ([`FrameIndex::stopped`]). The reader is
    /// left where indexing stopped; use [`Reader::seek_frame`] to go back.
    pub fn index_frames(&mut self) -> Result<FrameIndex> {
        let mut index = FrameIndex::default();
        loop {
            let start = self.input.position();
            let step = match self.input.at_eof() {
                Ok(true) => None,
                Ok(false) => Some(self.skip_frame()),
                Err(e) => Some(Err(e)),
            };
            match step {
                None => {
                    index.end = start;
                    return Ok(index);
                }
                Some(Ok(time)) => index.frames.push(IndexEntry {
                    time,
                    offset: start,
                }),
                Some(Err(e)) => {
                    index.end = start;
                    index.stopped = Some(e.to_string());
                    return Ok(index);
                }
            }
        }
    }

    /// Reads a frame's time and skips the rest of it.
    fn skip_frame(&mut self) -> Result<f64> {
        let time = self.input.f64("a frame")?;
        if !self.compressed && !self.checked_recovery && self.header.is_recovery_like() {
            self.checked_recovery = true;
            self.detect_bad_recovery()?;
        }
        if self.compressed {
            self.input.skip(1, "a frame's flags")?;
            let at = self.input.offset();
            let csize = u64::from(self.input.u32("a frame's compressed size")?);
            Error::check_limit(
                "compressed frame size",
                csize,
                self.limits.max_record_len,
                at,
            )?;
            self.input.skip(csize, "a compressed frame")?;
        } else {
            for _ in 0..self.header.data.len() {
                let at = self.input.offset();
                let len = u64::from(self.input.u32("a frame item length")?);
                Error::check_limit("frame item length", len, self.limits.max_record_len, at)?;
                self.input.skip(len, "a frame item")?;
            }
        }
        Ok(time)
    }

    /// The frames left, one [`ContinuousFrame`] each (see [`Reader::read_frame`]); the
    /// iterator ends at the end of the file or after the first error.
    pub fn frames(&mut self) -> Frames<'_, R> {
        Frames {
            reader: self,
            done: false,
        }
    }

    /// Reads the next frame into `frame`. Returns `false` at the end of the file, and also
    /// when the file ends inside a frame (see [`Reader::truncated`]; strict mode makes that
    /// an error).
    pub fn read_frame(&mut self, frame: &mut ContinuousFrame) -> Result<bool> {
        if self.truncated.is_some() || self.input.at_eof()? {
            return Ok(false);
        }
        let start = self.input.position();
        match self.frame_inner(frame) {
            Ok(()) => {
                self.frames += 1;
                Ok(true)
            }
            Err(e) if e.is_truncation() && !self.strict => {
                let t = Truncation {
                    offset: self.input.at(start),
                    bytes: self.input.position() - start,
                };
                self.truncated = Some(t);
                self.warnings.push(format!(
                    "the file ends inside the frame at {} ({} bytes present): {e}",
                    t.offset, t.bytes
                ));
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    fn frame_inner(&mut self, frame: &mut ContinuousFrame) -> Result<()> {
        frame.time = self.input.f64("a frame")?;
        if !self.compressed && !self.checked_recovery && self.header.is_recovery_like() {
            self.checked_recovery = true;
            self.detect_bad_recovery()?;
        }
        frame.items.resize_with(self.header.data.len(), Vec::new);
        if !self.compressed {
            frame.deflate = None;
            for i in 0..self.header.data.len() {
                let at = self.input.offset();
                let len = u64::from(self.input.u32("a frame item length")?);
                Error::check_limit("frame item length", len, self.limits.max_record_len, at)?;
                self.input
                    .read_into(&mut frame.items[i], len, "a frame item")?;
            }
        } else {
            let flags = {
                let mut b = [0u8; 1];
                self.input.exact(&mut b, "a frame's flags")?;
                b[0]
            };
            let at = self.input.offset();
            let csize = u64::from(self.input.u32("a frame's compressed size")?);
            Error::check_limit(
                "compressed frame size",
                csize,
                self.limits.max_record_len,
                at,
            )?;
            let mut data = Vec::new();
            self.input
                .read_into(&mut data, csize, "a compressed frame")?;
            let plain = inflate(&data, self.limits.max_record_len, at.plus(4))?;
            self.split_items(&plain, at.plus(4), &mut frame.items)?;
            let expected = self.header.flags_for(&frame.items);
            if flags != expected {
                let message = format!(
                    "frame at {at} has flags {flags:#04x}, its items call for {expected:#04x}"
                );
                if self.strict {
                    return Err(Error::malformed(at, message));
                }
                crate::normal::push_warning(&mut self.warnings, message);
            }
            frame.deflate = Some(Deflated { flags, data });
        }
        self.check_items(frame)
    }

    /// Splits an inflated item list.
    fn split_items(&mut self, plain: &[u8], at: Offset, items: &mut [Vec<u8>]) -> Result<()> {
        let mut p = 0usize;
        for item in items.iter_mut() {
            let len_bytes = plain
                .get(p..p + 4)
                .ok_or_else(|| Error::malformed(at, "an item length inside the inflated frame"))?;
            let len = u32::from_le_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]])
                as usize;
            let body = plain.get(p + 4..p + 4 + len).ok_or_else(|| {
                Error::malformed(at, format!("{len} item bytes inside the inflated frame"))
            })?;
            item.clear();
            item.extend_from_slice(body);
            p += 4 + len;
        }
        if p != plain.len() {
            let message = format!(
                "{} bytes left over in the inflated frame at {at}",
                plain.len() - p
            );
            if self.strict {
                return Err(Error::malformed(at, message));
            }
            crate::normal::push_warning(&mut self.warnings, message);
        }
        Ok(())
    }

    fn check_items(&mut self, frame: &ContinuousFrame) -> Result<()> {
        if let (Some(i), Some(layout)) =
            (self.header.item_index(ITEM_SIGNALS), &self.header.signals)
        {
            let len = frame.items[i].len();
            if len < layout.block_len() {
                return Err(Error::malformed(
                    self.input.offset(),
                    format!(
                        "a signals item of at least {} bytes before this point, found {len}",
                        layout.block_len()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Recognises Recovery files written compressed without saying so (FlightGear `next`
    /// 2021-07-31 to 2022-01-08): after the time, a flags byte 0-7 and a compressed size that
    /// reaches exactly to the end of the file.
    fn detect_bad_recovery(&mut self) -> Result<()> {
        let rest = self
            .input
            .rest(self.limits.max_record_len, "a Recovery frame")?;
        if rest.len() >= 5 && rest[0] <= 7 {
            let csize = u32::from_le_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
            let plain_len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
            if csize + 5 == rest.len() && plain_len + 4 != rest.len() {
                self.compressed = true;
                crate::normal::push_warning(
                    &mut self.warnings,
                    "Recovery tape with a compressed frame but no continuous-compression key (known FlightGear bug); read as compressed".into(),
                );
            }
        }
        self.input.unread(rest);
        Ok(())
    }
}

impl<R: BufRead + Seek> Reader<R> {
    /// Moves to the frame starting at file offset `offset` (from [`FrameIndex`], or
    /// [`Reader::frames_start`]); the next [`Reader::read_frame`] reads it. A recorded
    /// truncation is forgotten, so reading on finds it again. Gzip-wrapped input cannot seek.
    pub fn seek_frame(&mut self, offset: u64) -> Result<()> {
        if offset < self.frames_start {
            return Err(Error::invalid(format!(
                "offset {offset} is inside the header (frames start at {})",
                self.frames_start
            )));
        }
        self.input.seek_to(offset)?;
        self.truncated = None;
        Ok(())
    }
}

fn inflate(data: &[u8], limit: u64, at: Offset) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut decoder = flate2::read::DeflateDecoder::new(data).take(limit.saturating_add(1));
    decoder
        .read_to_end(&mut out)
        .map_err(|e| Error::malformed(at, format!("a valid raw DEFLATE stream ({e})")))?;
    Error::check_limit("inflated frame size", out.len() as u64, limit, at)?;
    Ok(out)
}

/// The iterator of [`Reader::frames`].
#[derive(Debug)]
pub struct Frames<'a, R> {
    reader: &'a mut Reader<R>,
    done: bool,
}

impl<R: BufRead> Iterator for Frames<'_, R> {
    type Item = Result<ContinuousFrame>;

    fn next(&mut self) -> Option<Self::Item> {
        recfmt_core::next_read(&mut self.done, |frame| self.reader.read_frame(frame))
    }
}

/// Writer of Continuous and Recovery tapes.
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: W,
    header: ContinuousHeader,
}

impl<W: Write> Writer<W> {
    /// Writes the magic and the header.
    pub fn new(mut out: W, header: &ContinuousHeader) -> Result<Self> {
        let len = u32::try_from(header.xml.payload.len())
            .map_err(|_| Error::invalid("header XML longer than 4 GiB"))?;
        out.write_all(MAGIC)?;
        out.write_all(&len.to_le_bytes())?;
        out.write_all(&header.xml.payload)?;
        Ok(Writer {
            out,
            header: header.clone(),
        })
    }

    /// Writes a frame. With compression, a frame read from a file is written with its
    /// stored DEFLATE bytes (`frame.deflate`); otherwise the items are compressed and the
    /// flags computed.
    pub fn write_frame(&mut self, frame: &ContinuousFrame) -> Result<()> {
        if frame.items.len() != self.header.data.len() {
            return Err(Error::invalid(format!(
                "frame has {} items, the header names {}",
                frame.items.len(),
                self.header.data.len()
            )));
        }
        let mut plain = Vec::new();
        for item in &frame.items {
            let len = u32::try_from(item.len())
                .map_err(|_| Error::invalid("frame item longer than 4 GiB"))?;
            plain.extend_from_slice(&len.to_le_bytes());
            plain.extend_from_slice(item);
        }
        self.out.write_all(&frame.time.to_le_bytes())?;
        if !self.header.compression {
            self.out.write_all(&plain)?;
            return Ok(());
        }
        let (flags, data) = match &frame.deflate {
            Some(d) => (d.flags, d.data.clone()),
            None => {
                let mut enc =
                    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
                enc.write_all(&plain)?;
                (self.header.flags_for(&frame.items), enc.finish()?)
            }
        };
        let csize = u32::try_from(data.len())
            .map_err(|_| Error::invalid("compressed frame longer than 4 GiB"))?;
        self.out.write_all(&[flags])?;
        self.out.write_all(&csize.to_le_bytes())?;
        self.out.write_all(&data)?;
        Ok(())
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// One record of an `extra-properties` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtraProperty {
    /// A property got a new value (its string form).
    Change {
        /// Absolute, simplified path (`/sim/current-view/heading-offset-deg`).
        path: String,
        /// The value's string form.
        value: String,
    },
    /// A property was removed.
    Removal {
        /// Absolute, simplified path.
        path: String,
    },
}

/// Decodes an `extra-properties` item. `Err(offset)` gives where a record is broken (a
/// negative or overrunning length).
pub fn decode_extra_properties(item: &[u8]) -> std::result::Result<Vec<ExtraProperty>, usize> {
    fn i16_at(item: &[u8], p: usize) -> std::result::Result<usize, usize> {
        let b = item.get(p..p + 2).ok_or(p)?;
        usize::try_from(i16::from_le_bytes([b[0], b[1]])).map_err(|_| p)
    }
    fn text(item: &[u8], p: usize, len: usize) -> std::result::Result<String, usize> {
        Ok(String::from_utf8_lossy(item.get(p..p + len).ok_or(p)?).into_owned())
    }
    let mut out = Vec::new();
    let mut p = 0;
    while p < item.len() {
        let start = p;
        let plen = i16_at(item, p).map_err(|_| start)?;
        p += 2;
        if plen == 0 {
            let plen = i16_at(item, p).map_err(|_| start)?;
            let path = text(item, p + 2, plen).map_err(|_| start)?;
            p += 2 + plen;
            out.push(ExtraProperty::Removal { path });
        } else {
            let path = text(item, p, plen).map_err(|_| start)?;
            p += plen;
            let vlen = i16_at(item, p).map_err(|_| start)?;
            let value = text(item, p + 2, vlen).map_err(|_| start)?;
            p += 2 + vlen;
            out.push(ExtraProperty::Change { path, value });
        }
    }
    Ok(out)
}

/// Encodes an `extra-properties` item; fails when a path or value exceeds 32767 bytes (the
/// signed 16-bit length field) or a changed path is empty.
pub fn encode_extra_properties(records: &[ExtraProperty]) -> Result<Vec<u8>> {
    fn len16(s: &str) -> Result<[u8; 2]> {
        i16::try_from(s.len()).map(i16::to_le_bytes).map_err(|_| {
            Error::invalid(format!(
                "extra property string of {} bytes exceeds 32767",
                s.len()
            ))
        })
    }
    let mut out = Vec::new();
    for r in records {
        match r {
            ExtraProperty::Change { path, value } => {
                if path.is_empty() {
                    return Err(Error::invalid("a changed extra property needs a path"));
                }
                out.extend_from_slice(&len16(path)?);
                out.extend_from_slice(path.as_bytes());
                out.extend_from_slice(&len16(value)?);
                out.extend_from_slice(value.as_bytes());
            }
            ExtraProperty::Removal { path } => {
                out.extend_from_slice(&0i16.to_le_bytes());
                out.extend_from_slice(&len16(path)?);
                out.extend_from_slice(path.as_bytes());
            }
        }
    }
    Ok(out)
}
