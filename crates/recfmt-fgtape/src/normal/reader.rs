//! The streaming reader of Normal tapes: header, containers, frames.

mod detect;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use recfmt_core::{Limits, ReadOptions};

use super::*;
use crate::error::{Error, Offset, Result};
use crate::input::{Input, Source};
use crate::props::PropertyList;

/// Streaming reader of Normal tapes.
///
/// Call [`Reader::read_header`], then for each of the three RawData containers
/// [`Reader::next_container`] and [`Reader::read_frame`] until it returns `false`
/// (or [`Reader::read_raw_data`] for a whole container). Memory use is one frame, except while
/// the layout is being detected, when the first non-empty container is read ahead once.
/// Every length is checked against [`Limits`] before anything is allocated for it.
#[derive(Debug)]
pub struct Reader<R> {
    input: Input<R>,
    limits: Limits,
    strict: bool,
    header: Option<Header>,
    /// RawData containers started so far.
    started: usize,
    remaining: u64,
    current: Option<RawDataHeader>,
    layout: Option<LayoutDecision>,
    last_time: Option<f64>,
    time_warned: bool,
    trailing: Vec<u8>,
    finished: bool,
    warnings: Vec<String>,
    /// The Meta tree, as soon as its container was read.
    meta: Option<PropertyList>,
}

impl Reader<BufReader<File>> {
    /// Opens a tape file (gzip-compressed, or already decompressed).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::new(BufReader::with_capacity(64 * 1024, File::open(path)?))
    }
}

impl<R: BufRead> Reader<R> {
    /// A reader with default options. Input starting with `1f 8b` is decompressed; any other
    /// input is read as already-decompressed content (FlightGear's `gzread` accepts both).
    pub fn new(input: R) -> Result<Self> {
        Self::with_options(input, &ReadOptions::default())
    }

    /// A reader with explicit limits and strictness. Strict mode rejects deviations that
    /// FlightGear tolerates (size fields that are not a multiple of the record size, trailing
    /// bytes, a missing final NUL).
    pub fn with_options(input: R, options: &ReadOptions) -> Result<Self> {
        Ok(Reader {
            input: Input::new(Source::sniff(input)?),
            limits: options.limits,
            strict: options.strict,
            header: None,
            started: 0,
            remaining: 0,
            current: None,
            layout: None,
            last_time: None,
            time_warned: false,
            trailing: Vec::new(),
            finished: false,
            warnings: Vec::new(),
            meta: None,
        })
    }

    /// The header, once read.
    pub fn header(&self) -> Option<&Header> {
        self.header.as_ref()
    }

    /// The frame layout, once decided (at the first non-empty RawData container, or at the
    /// end when all are empty).
    pub fn layout(&self) -> Option<LayoutDecision> {
        self.layout
    }

    /// The Meta tree (aircraft, versions, ...) once its container was read, also when the
    /// rest of the header could not be (a tape cut inside its Config container).
    pub fn meta(&self) -> Option<&PropertyList> {
        self.meta.as_ref()
    }

    /// Things FlightGear would tolerate but that are not quite right.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Bytes after the third RawData container (available once the last container is done).
    pub fn trailing(&self) -> &[u8] {
        &self.trailing
    }

    /// Decompressed bytes consumed so far.
    pub fn position(&self) -> u64 {
        self.input.position()
    }

    /// Compressed bytes consumed so far (0 for uncompressed input).
    pub fn compressed_position(&self) -> u64 {
        self.input.compressed_pos()
    }

    /// Reads the endian marker and the Header, Meta and Config containers.
    pub fn read_header(&mut self) -> Result<&Header> {
        if self.header.is_some() {
            return Err(Error::invalid("the header was already read"));
        }
        let at = self.input.offset();
        let marker = self.input.u32("the endian marker 44 33 22 11")?;
        if marker == ENDIAN_MARKER.swap_bytes() {
            return Err(Error::Unsupported(
                "big-endian tape (endian marker 11 22 33 44)".into(),
            ));
        }
        if marker != ENDIAN_MARKER {
            return Err(Error::malformed(
                at,
                format!(
                    "the endian marker 44 33 22 11, found {:02x?}",
                    marker.to_le_bytes()
                ),
            ));
        }
        let (magic_at, magic) = self.container(CONTAINER_HEADER, "the Header container (magic)")?;
        let text_end = magic.iter().position(|&b| b == 0);
        if text_end.map(|e| &magic[..=e]) != Some(&MAGIC[..]) {
            return Err(Error::malformed(
                magic_at,
                "the magic \"FlightGear Flight Recorder Tape\\0\"",
            ));
        }
        let (meta_at, meta) = self.container(CONTAINER_META, "the Meta container")?;
        let meta = XmlContainer::parse(meta, meta_at.plus(12), self.strict, &mut self.warnings)?;
        self.meta = Some(meta.tree.clone());
        let (config_at, config) = self.container(CONTAINER_PROPERTIES, "the Config container")?;
        let config =
            XmlContainer::parse(config, config_at.plus(12), self.strict, &mut self.warnings)?;
        let header = Header::from_parts(magic, meta, config, &self.limits, config_at.plus(12))?;
        for w in header.signals.warnings() {
            push_warning(&mut self.warnings, format!("config: {w}"));
        }
        Error::check_limit(
            "record size",
            header.record_size() as u64,
            self.limits.max_record_len,
            config_at,
        )?;
        Ok(self.header.insert(header))
    }

    /// Reads one whole typed container (header and payload).
    fn container(&mut self, expected_type: u32, what: &'static str) -> Result<(Offset, Vec<u8>)> {
        let at = self.input.offset();
        let ty = self.input.u32(what)?;
        if ty != expected_type {
            return Err(Error::malformed(
                at,
                format!("{what} (container type {expected_type}), found type {ty}"),
            ));
        }
        let size_at = self.input.offset();
        let size = self.input.u64(what)?;
        Error::check_limit("container size", size, self.limits.max_record_len, size_at)?;
        let mut payload = Vec::new();
        self.input.read_into(&mut payload, size, what)?;
        Ok((at, payload))
    }

    fn require_header(&self) -> Result<&Header> {
        self.header
            .as_ref()
            .ok_or_else(|| Error::invalid("read_header must be called first"))
    }

    /// Starts the next RawData container: skips any frames left in the current one, reads the
    /// container header and, at the first non-empty container, decides the frame layout.
    /// Returns `None` after the third container (then checks for trailing bytes).
    pub fn next_container(&mut self) -> Result<Option<RawDataHeader>> {
        self.require_header()?;
        let mut scratch = Frame::default();
        while self.read_frame(&mut scratch)? {}
        if self.started == 3 {
            self.finish_stream()?;
            return Ok(None);
        }
        let index = self.started;
        let at = self.input.offset();
        let ty = self.input.u32("a RawData container header")?;
        if ty != CONTAINER_RAW_DATA {
            let why = if self.layout.is_some() {
                " (the frames before do not match the frame layout, or the data is corrupt)"
            } else {
                ""
            };
            return Err(Error::malformed(
                at,
                format!(
                    "the {} RawData container (type 3), found type {ty}{why}",
                    RAW_DATA_NAMES[index]
                ),
            ));
        }
        let declared_size = self.input.u64("a RawData container header")?;
        let rs = self.require_header()?.record_size() as u64;
        let frames = declared_size / rs;
        if !declared_size.is_multiple_of(rs) {
            let message = format!(
                "the {} RawData container declares {declared_size} bytes, not a multiple of the record size {rs}",
                RAW_DATA_NAMES[index]
            );
            if self.strict {
                return Err(Error::malformed(at, message));
            }
            push_warning(
                &mut self.warnings,
                format!("{message} (at {at}); FlightGear ignores the remainder"),
            );
        }
        self.started += 1;
        let header = RawDataHeader {
            index,
            declared_size,
            frames,
            offset: at,
        };
        self.current = Some(header);
        self.remaining = frames;
        self.last_time = None;
        self.time_warned = false;
        if self.layout.is_none() && frames > 0 {
            self.detect(index, frames)?;
        }
        Ok(Some(header))
    }

    fn finish_stream(&mut self) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        if self.layout.is_none() {
            let hint = self.require_header()?.layout_hint();
            self.layout = Some(LayoutDecision {
                layout: hint.unwrap_or(FrameLayout::Vector),
                decided_by: DecidedBy::Hint,
            });
        }
        if !self.input.at_eof()? {
            let at = self.input.offset();
            if self.strict {
                return Err(Error::malformed(
                    at,
                    "the end of the tape after the third RawData container",
                ));
            }
            self.trailing = self
                .input
                .rest(self.limits.max_record_len, "trailing bytes")?;
            push_warning(
                &mut self.warnings,
                format!(
                    "{} bytes after the third RawData container at {at} (ignored by FlightGear)",
                    self.trailing.len()
                ),
            );
        }
        Ok(())
    }

    /// The frames left in the current container ([`Reader::next_container`] moves to the
    /// next), one [`Frame`] each; the iterator ends at the end of the container or after the
    /// first error.
    pub fn frames(&mut self) -> Frames<'_, R> {
        Frames {
            reader: self,
            done: false,
        }
    }

    /// Reads the next frame of the current container into `frame` (reusing its buffers).
    /// Returns `false` at the end of the container.
    pub fn read_frame(&mut self, frame: &mut Frame) -> Result<bool> {
        if self.remaining == 0 {
            return Ok(false);
        }
        let (block_len, mp) = {
            let h = self.require_header()?;
            (h.signals.block_len(), h.multiplayer)
        };
        let layout = self
            .layout
            .ok_or_else(|| Error::invalid("frame layout not decided"))?
            .layout;
        let at = self.input.offset();
        frame.time = self.input.f64("a frame")?;
        self.input.read_into(
            &mut frame.signals,
            block_len as u64,
            "a frame's signal block",
        )?;
        frame.multiplayer.clear();
        frame.padding = None;
        if layout == FrameLayout::Vector {
            let mut pad = [0u8; 8];
            self.input.exact(&mut pad, "a frame's 8 unused bytes")?;
            frame.padding = Some(pad);
            match mp {
                MpEncoding::None => {}
                MpEncoding::Fg2020_3 => self.read_mp_2020(&mut frame.multiplayer)?,
                MpEncoding::Next => self.read_mp_next(&mut frame.multiplayer)?,
            }
        }
        let rising = self.last_time.is_none_or(|last| frame.time > last);
        let ok = rising && frame.time.is_finite();
        if !ok && !self.time_warned {
            self.time_warned = true;
            let name = self.current.map_or("?", |c| RAW_DATA_NAMES[c.index]);
            push_warning(
                &mut self.warnings,
                format!(
                    "frame time {} at {at} in the {name} container does not rise",
                    frame.time
                ),
            );
        }
        self.last_time = Some(frame.time);
        self.remaining -= 1;
        Ok(true)
    }

    fn read_mp_2020(&mut self, packets: &mut Vec<Vec<u8>>) -> Result<()> {
        let at = self.input.offset();
        let n = self.input.u64("a frame's multiplayer packet count")?;
        Error::check_limit(
            "multiplayer packets in a frame",
            n,
            self.limits.max_record_len / 8,
            at,
        )?;
        for _ in 0..n {
            let at = self.input.offset();
            let len = self.input.u64("a multiplayer packet length")?;
            Error::check_limit(
                "multiplayer packet length",
                len,
                self.limits.max_record_len,
                at,
            )?;
            let mut packet = Vec::new();
            self.input
                .read_into(&mut packet, len, "a multiplayer packet")?;
            packets.push(packet);
        }
        Ok(())
    }

    fn read_mp_next(&mut self, packets: &mut Vec<Vec<u8>>) -> Result<()> {
        let at = self.input.offset();
        let total = u64::from(self.input.u32("a frame's multiplayer block length")?);
        let block = self.input.vec(
            total,
            "multiplayer block length",
            self.limits.max_record_len,
            "a multiplayer block",
        )?;
        crate::mp::split_u16_packets(&block).map_or_else(
            |bad| {
                Err(Error::malformed(
                    at.plus(4 + bad as u64),
                    "a u16-length multiplayer packet inside the block",
                ))
            },
            |list| {
                packets.extend(list.into_iter().map(<[u8]>::to_vec));
                Ok(())
            },
        )
    }

    /// Reads the rest of the next RawData container; `None` after the third.
    pub fn read_raw_data(&mut self) -> Result<Option<RawData>> {
        let Some(h) = self.next_container()? else {
            return Ok(None);
        };
        let mut frames = Vec::with_capacity(h.frames.min(4096) as usize);
        let mut frame = Frame::default();
        while self.read_frame(&mut frame)? {
            frames.push(std::mem::take(&mut frame));
        }
        Ok(Some(RawData {
            declared_size: h.declared_size,
            frames,
        }))
    }

    /// Reads the whole tape.
    pub fn read_tape(mut self) -> Result<NormalTape> {
        if self.header.is_none() {
            self.read_header()?;
        }
        let mut raw: [RawData; 3] = Default::default();
        for slot in &mut raw {
            *slot = self
                .read_raw_data()?
                .ok_or_else(|| Error::invalid("RawData containers already read"))?;
        }
        self.next_container()?;
        let layout = self.layout.map_or(FrameLayout::Vector, |d| d.layout);
        let header = self
            .header
            .take()
            .ok_or_else(|| Error::invalid("header missing"))?;
        Ok(NormalTape {
            header,
            layout,
            raw_data: raw,
            trailing: std::mem::take(&mut self.trailing),
        })
    }

    /// Reads the whole tape like [`Reader::read_tape`], but keeps what a tape that ends early
    /// holds: when the input ends after the header, every complete frame is kept, the
    /// container being read keeps the frames read so far (its size field set to match them)
    /// and the containers after it are empty. Returns the tape and the [`Error::Truncated`]
    /// that ended it, if it was cut. A tape cut inside its header, and every other error,
    /// fail as in [`Reader::read_tape`].
    ///
    /// ```
    /// use recfmt_fgtape::normal::{Frame, FrameLayout, Header, NormalTape, RawData, Reader};
    /// use recfmt_fgtape::props::{PropValue, PropertyList};
    /// use recfmt_fgtape::signals::SignalValue;
    ///
    /// let mut config = PropertyList::new();
    /// config.root.set("signals/signal/type", PropValue::string("double"));
    /// config.root.set("signals/signal/property", PropValue::string("/position/altitude-ft"));
    /// let header = Header::new(PropertyList::new(), config)?;
    /// let frames: Vec<Frame> = (0..3)
    ///     .map(|i| Frame {
    ///         time: f64::from(i),
    ///         signals: header.signals.encode(&[SignalValue::Double(1.0)]).unwrap(),
    ///         ..Frame::default()
    ///     })
    ///     .collect();
    /// let rs = header.record_size();
    /// let tape = NormalTape {
    ///     header,
    ///     layout: FrameLayout::Vector,
    ///     raw_data: [RawData::new(frames, rs), RawData::default(), RawData::default()],
    ///     trailing: Vec::new(),
    /// };
    /// let bytes = tape.to_decompressed_bytes()?;
    /// // Cut in the middle of the third frame.
    /// let cut = &bytes[..bytes.len() - 24 - rs / 2];
    /// let (kept, error) = Reader::new(cut)?.read_tape_lenient()?;
    /// assert!(error.is_some_and(|e| e.is_truncation()));
    /// assert_eq!(kept.frame_counts(), [2, 0, 0]);
    /// assert_eq!(kept.raw_data[0].declared_size, 2 * rs as u64);
    /// # Ok::<(), recfmt_fgtape::Error>(())
    /// ```
    pub fn read_tape_lenient(mut self) -> Result<(NormalTape, Option<Error>)> {
        if self.header.is_none() {
            self.read_header()?;
        }
        let rs = self.require_header()?.record_size() as u64;
        let mut raw: [RawData; 3] = Default::default();
        let cut = match self.read_containers(&mut raw) {
            Ok(()) => None,
            Err(e) if e.is_truncation() => {
                for data in &mut raw {
                    if data.declared_size / rs != data.frames.len() as u64 {
                        data.declared_size = data.frames.len() as u64 * rs;
                    }
                }
                Some(e)
            }
            Err(e) => return Err(e),
        };
        let layout = match self.layout {
            Some(d) => d.layout,
            None => self
                .require_header()?
                .layout_hint()
                .unwrap_or(FrameLayout::Vector),
        };
        let header = self
            .header
            .take()
            .ok_or_else(|| Error::invalid("header missing"))?;
        Ok((
            NormalTape {
                header,
                layout,
                raw_data: raw,
                trailing: std::mem::take(&mut self.trailing),
            },
            cut,
        ))
    }

    /// Reads the three RawData containers into `raw`, frame by frame, so that an error leaves
    /// every frame read before it in place; then checks the end of the stream.
    fn read_containers(&mut self, raw: &mut [RawData; 3]) -> Result<()> {
        for slot in raw.iter_mut() {
            let h = self
                .next_container()?
                .ok_or_else(|| Error::invalid("RawData containers already read"))?;
            slot.declared_size = h.declared_size;
            let mut frame = Frame::default();
            while self.read_frame(&mut frame)? {
                slot.frames.push(std::mem::take(&mut frame));
            }
        }
        self.next_container()?;
        Ok(())
    }

    fn weak_fit(&mut self, score: u8, name: &str, at: Offset, layout: FrameLayout) {
        if score < 2 {
            push_warning(
                &mut self.warnings,
                format!(
                    "the {name} container at {at} fits the {} layout in structure only (frame times do not rise or the next size is not a multiple of the record size)",
                    layout.name()
                ),
            );
        }
    }
}

/// The iterator of [`Reader::frames`].
#[derive(Debug)]
pub struct Frames<'a, R> {
    reader: &'a mut Reader<R>,
    done: bool,
}

impl<R: BufRead> Iterator for Frames<'_, R> {
    type Item = Result<Frame>;

    fn next(&mut self) -> Option<Self::Item> {
        recfmt_core::next_read(&mut self.done, |frame| self.reader.read_frame(frame))
    }
}
