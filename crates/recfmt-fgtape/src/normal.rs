//! Normal tapes: one gzip stream of SimGear "gzContainer" records.
//!
//! The decompressed stream is the endian marker `0x11223344`, then containers of
//! `u32 type, u64 size, payload`: the magic string (type 0), the Meta property list (type 1),
//! the Config property list (type 2) and three RawData containers (type 3: short-, medium-
//! and long-term frames). A frame is
//!
//! * legacy layout (FlightGear 2.10 to 2020.2): `f64 time | signal block`, `record_size` bytes;
//! * vector layout (2020.3 on): `f64 time | signal block | 8 unused bytes | [MP block]`.
//!
//! Nothing in the file names the layout, so [`Reader`] decides it from the structure of the
//! first non-empty RawData container: a layout fits when, after its frames, the next RawData
//! header (or, after the third container, the end of the stream) follows exactly; rising frame
//! times and a next container size that is a multiple of the record size break ties, and the
//! Meta hints (`meta/multiplayer`, `data[]`, `meta/version/flightgear`) only choose which
//! layout is tried first.
//!
//! Everything is kept ([`NormalTape`], [`Frame`]: payload bytes, declared sizes, padding bytes,
//! packets), so [`Writer`] reproduces the decompressed content byte for byte.
//!
//! ```no_run
//! use recfmt_fgtape::normal::{NormalTape, Reader};
//!
//! // Streaming, one frame at a time:
//! let mut reader = Reader::open("c172p.fgtape")?;
//! let layout = reader.read_header()?.signals.clone();
//! let mut frame = Default::default();
//! while reader.next_container()?.is_some() {
//!     while reader.read_frame(&mut frame)? {
//!         let values = layout.decode(&frame.signals)?;
//!         println!("{} {:?}", frame.time, values.first());
//!     }
//! }
//! println!("layout: {:?}", reader.layout());
//!
//! // Or everything at once, and back:
//! let tape = NormalTape::open("c172p.fgtape")?;
//! tape.write_gzip(std::fs::File::create("copy.fgtape")?)?;
//! # Ok::<(), recfmt_fgtape::Error>(())
//! ```

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use recfmt_core::{Limits, ReadOptions};

use crate::error::{Error, Offset, Result};
use crate::input::{Input, Source};
use crate::props::{PropNode, PropertyList};
use crate::signals::SignalLayout;

/// The magic string in the Header container, NUL included.
pub const MAGIC: &[u8; 32] = b"FlightGear Flight Recorder Tape\0";

/// The endian marker at the start of the decompressed stream (bytes `44 33 22 11`).
pub const ENDIAN_MARKER: u32 = 0x1122_3344;

/// Container type of the magic string.
pub const CONTAINER_HEADER: u32 = 0;
/// Container type of the Meta property list.
pub const CONTAINER_META: u32 = 1;
/// Container type of the Config (signal layout) property list.
pub const CONTAINER_PROPERTIES: u32 = 2;
/// Container type of frame data.
pub const CONTAINER_RAW_DATA: u32 = 3;

/// Names of the three RawData containers, in file order.
pub const RAW_DATA_NAMES: [&str; 3] = ["short-term", "medium-term", "long-term"];

/// The frame layout of a Normal tape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameLayout {
    /// FlightGear 2.10 to 2020.2: a frame is `record_size` bytes, time included.
    Legacy,
    /// FlightGear 2020.3 on: `f64` time, then `record_size` bytes (signals and 8 unused bytes),
    /// then the MP block when the tape has one.
    Vector,
}

impl FrameLayout {
    /// `legacy` or `vector`.
    pub fn name(self) -> &'static str {
        match self {
            FrameLayout::Legacy => "legacy",
            FrameLayout::Vector => "vector",
        }
    }
}

/// How multiplayer packets are stored in the frames of a vector-layout tape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MpEncoding {
    /// No MP block.
    None,
    /// FlightGear 2020.3 (`meta/multiplayer` true): `u64 n`, then n × (`u64 len`, bytes).
    Fg2020_3,
    /// `next` (`meta/data[]` contains `multiplayer`): `u32 total`, then (`u16 len`, bytes)*.
    /// Read only: FlightGear never writes it to Normal tapes.
    Next,
}

/// How the frame layout was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecidedBy {
    /// The structure of RawData container `container` fits this layout only (or best).
    Structure {
        /// Index of the container (0 short, 1 medium, 2 long).
        container: usize,
    },
    /// The stream ends inside the container; the layout is the one consistent with the data
    /// that is there.
    PartialData {
        /// Index of the container.
        container: usize,
    },
    /// No frame data to check: the Meta hints (or the vector default) decided.
    Hint,
}

/// The frame layout and how it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutDecision {
    /// The layout.
    pub layout: FrameLayout,
    /// What decided it.
    pub decided_by: DecidedBy,
}

/// A property-list container: the exact payload and its parsed tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlContainer {
    /// The payload as stored: XML text followed by a NUL.
    pub payload: Vec<u8>,
    /// The parsed tree.
    pub tree: PropertyList,
}

impl XmlContainer {
    /// A container holding `tree` written the SimGear way, plus the NUL.
    pub fn from_tree(tree: PropertyList) -> Self {
        let mut payload = tree.to_xml().into_bytes();
        payload.push(0);
        XmlContainer { payload, tree }
    }

    /// The XML text (the payload without its final byte, as FlightGear reads it).
    pub fn text(&self) -> &str {
        let body = &self.payload[..self.payload.len().saturating_sub(1)];
        std::str::from_utf8(body).unwrap_or("")
    }

    /// Parses a payload found at `offset`; FlightGear parses `size - 1` bytes.
    pub fn parse(
        payload: Vec<u8>,
        offset: Offset,
        strict: bool,
        warnings: &mut Vec<String>,
    ) -> Result<Self> {
        let Some((&last, body)) = payload.split_last() else {
            return Err(Error::malformed(
                offset,
                "a property list (the container is empty)",
            ));
        };
        if last != 0 {
            if strict {
                return Err(Error::malformed(
                    offset.plus(payload.len() as u64 - 1),
                    "a NUL at the end of the property-list container",
                ));
            }
            push_warning(
                warnings,
                format!(
                    "property-list container at {offset} does not end with a NUL; its last byte is ignored as FlightGear does"
                ),
            );
        }
        let text = std::str::from_utf8(body).map_err(|e| Error::Xml {
            offset: offset.plus(e.valid_up_to() as u64),
            message: "text is not valid UTF-8".into(),
        })?;
        let tree = PropertyList::parse_at(text, offset)?;
        Ok(XmlContainer { payload, tree })
    }
}

/// Everything before the frame data: magic, Meta and Config, and what follows from them.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// Payload of the Header container (normally [`MAGIC`]).
    pub magic: Vec<u8>,
    /// The Meta container.
    pub meta: XmlContainer,
    /// The Config container.
    pub config: XmlContainer,
    /// The frame signal layout derived from `config` (rebuild the header with
    /// [`Header::from_parts`] after editing `config`).
    pub signals: SignalLayout,
    /// The MP encoding named by `meta`.
    pub multiplayer: MpEncoding,
}

impl Header {
    /// A header for new tapes from Meta and Config trees.
    pub fn new(meta: PropertyList, config: PropertyList) -> Result<Self> {
        Self::from_parts(
            MAGIC.to_vec(),
            XmlContainer::from_tree(meta),
            XmlContainer::from_tree(config),
            &Limits::default(),
            Offset::File(0),
        )
    }

    /// Builds a header, deriving the signal layout and checking `recorder/record-size`
    /// against it (0 disables the check, as in FlightGear). `config_offset` is used in errors.
    pub fn from_parts(
        magic: Vec<u8>,
        meta: XmlContainer,
        config: XmlContainer,
        limits: &Limits,
        config_offset: Offset,
    ) -> Result<Self> {
        let signals =
            SignalLayout::from_config(&config.tree.root, limits).map_err(|e| match e {
                Error::Limit {
                    what, value, limit, ..
                } => Error::Limit {
                    what,
                    value,
                    limit,
                    offset: config_offset,
                },
                other => other,
            })?;
        let stored = config
            .tree
            .get("recorder/record-size")
            .and_then(PropNode::int_value)
            .unwrap_or(0);
        if stored != 0 && i64::from(stored) != signals.record_size() as i64 {
            return Err(Error::malformed(
                config_offset,
                format!(
                    "recorder/record-size {stored} to match the signal list ({} bytes)",
                    signals.record_size()
                ),
            ));
        }
        let multiplayer = mp_encoding(&meta.tree);
        Ok(Header {
            magic,
            meta,
            config,
            signals,
            multiplayer,
        })
    }

    /// FlightGear's record size (8 bytes of time plus the signal block).
    pub fn record_size(&self) -> usize {
        self.signals.record_size()
    }

    /// `meta/version/flightgear`, e.g. `2020.3.16`.
    pub fn flightgear_version(&self) -> Option<&str> {
        self.meta
            .tree
            .get("meta/version/flightgear")
            .and_then(PropNode::string_value)
    }

    /// What the Meta tree suggests about the frame layout (only a hint; the structure decides).
    pub fn layout_hint(&self) -> Option<FrameLayout> {
        let meta = &self.meta.tree;
        if meta.get("meta/multiplayer").is_some() || meta.root.child("data", 0).is_some() {
            return Some(FrameLayout::Vector);
        }
        let version = self.flightgear_version()?;
        let mut parts = version.trim().split('.').map(|p| p.parse::<u32>().ok());
        let major = parts.next().flatten()?;
        let minor = parts.next().flatten().unwrap_or(0);
        ((major, minor) < (2020, 2)).then_some(FrameLayout::Legacy)
    }
}

fn mp_encoding(meta: &PropertyList) -> MpEncoding {
    if meta
        .get("meta/multiplayer")
        .and_then(PropNode::bool_value)
        .unwrap_or(false)
    {
        return MpEncoding::Fg2020_3;
    }
    let next = meta.get("meta").is_some_and(|m| {
        m.children_named("data")
            .any(|d| d.string_value() == Some("multiplayer"))
    });
    if next {
        MpEncoding::Next
    } else {
        MpEncoding::None
    }
}

/// One frame, kept exactly as stored.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frame {
    /// Simulation time in seconds (replay clock).
    pub time: f64,
    /// The signal block (`record_size - 8` bytes); decode it with
    /// [`SignalLayout::decode`].
    pub signals: Vec<u8>,
    /// The 8 unused bytes after the signal block in the vector layout (`None` in legacy tapes).
    pub padding: Option<[u8; 8]>,
    /// Recorded MP packets (vector layout with an MP encoding only).
    pub multiplayer: Vec<Vec<u8>>,
}

/// The header of a RawData container as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawDataHeader {
    /// 0 short-term, 1 medium-term, 2 long-term.
    pub index: usize,
    /// The size field as stored (`count × record_size` when FlightGear wrote it).
    pub declared_size: u64,
    /// Number of frames: `declared_size / record_size`.
    pub frames: u64,
    /// Where the container header starts.
    pub offset: Offset,
}

/// One RawData container.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawData {
    /// The size field as stored; `declared_size / record_size` must equal `frames.len()`.
    pub declared_size: u64,
    /// The frames, in ascending time.
    pub frames: Vec<Frame>,
}

impl RawData {
    /// A container whose size field is `frames.len() × record_size`, as FlightGear writes it.
    pub fn new(frames: Vec<Frame>, record_size: usize) -> Self {
        RawData {
            declared_size: frames.len() as u64 * record_size as u64,
            frames,
        }
    }
}

/// A whole Normal tape.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalTape {
    /// Magic, Meta, Config.
    pub header: Header,
    /// The frame layout (detected when read).
    pub layout: FrameLayout,
    /// Short-, medium- and long-term containers, in file order.
    pub raw_data: [RawData; 3],
    /// Bytes after the third RawData container (FlightGear ignores them; normally empty).
    pub trailing: Vec<u8>,
}

impl NormalTape {
    /// Reads a tape (gzip or already decompressed) with default options.
    pub fn read<R: BufRead>(input: R) -> Result<Self> {
        Reader::new(input)?.read_tape()
    }

    /// Opens and reads a tape file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Reader::open(path)?.read_tape()
    }

    /// Opens and reads a tape file that may have been cut short: see
    /// [`Reader::read_tape_lenient`].
    pub fn open_lenient(path: impl AsRef<Path>) -> Result<(Self, Option<Error>)> {
        Reader::open(path)?.read_tape_lenient()
    }

    /// All frames in time order: long-term, then medium-term, then short-term.
    pub fn frames_in_time_order(&self) -> impl Iterator<Item = &Frame> {
        self.raw_data.iter().rev().flat_map(|c| c.frames.iter())
    }

    /// Number of frames in each container (short, medium, long).
    pub fn frame_counts(&self) -> [usize; 3] {
        [0, 1, 2].map(|i| self.raw_data[i].frames.len())
    }

    /// Writes the decompressed content.
    pub fn write_decompressed<W: Write>(&self, out: W) -> Result<W> {
        let mut w = Writer::new(out, self.layout);
        w.write_header(&self.header)?;
        for data in &self.raw_data {
            w.write_raw_data(data)?;
        }
        w.write_trailing(&self.trailing)?;
        w.finish()
    }

    /// The decompressed content as bytes.
    pub fn to_decompressed_bytes(&self) -> Result<Vec<u8>> {
        self.write_decompressed(Vec::new())
    }

    /// Writes a `.fgtape` file: one gzip member around the decompressed content.
    pub fn write_gzip<W: Write>(&self, out: W) -> Result<W> {
        let gz = self.write_decompressed(gzip_encoder(out))?;
        Ok(gz.finish()?)
    }
}

/// A gzip encoder set up like FlightGear's files (mtime 0, OS Unix, default level).
pub fn gzip_encoder<W: Write>(out: W) -> flate2::write::GzEncoder<W> {
    flate2::GzBuilder::new()
        .operating_system(3)
        .write(out, flate2::Compression::default())
}

pub(crate) fn push_warning(warnings: &mut Vec<String>, message: String) {
    const MAX: usize = 100;
    if warnings.len() < MAX {
        warnings.push(message);
    } else if warnings.len() == MAX {
        warnings.push("further warnings suppressed".into());
    }
}

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

    /// Decides the frame layout from container `index` holding `count` frames; the bytes
    /// read ahead are pushed back so the frames are then read normally.
    fn detect(&mut self, index: usize, count: u64) -> Result<()> {
        let (rs, mp, hint) = {
            let h = self.require_header()?;
            (h.record_size() as u64, h.multiplayer, h.layout_hint())
        };
        let is_last = index == 2;
        let start = self.input.position();
        let order = if hint == Some(FrameLayout::Vector) {
            [FrameLayout::Vector, FrameLayout::Legacy]
        } else {
            [FrameLayout::Legacy, FrameLayout::Vector]
        };
        let mut look = Look {
            input: &mut self.input,
            buf: Vec::new(),
            limit: self.limits.max_record_len,
        };
        let fit = |look: &mut Look<'_, R>, layout| match layout {
            FrameLayout::Legacy => fit_legacy(look, count, rs, is_last),
            FrameLayout::Vector => fit_vector(look, count, rs, mp, is_last),
        };
        let first = fit(&mut look, order[0])?;
        let second = if matches!(first, Fit::Yes { score: 2 }) {
            Fit::Eof
        } else {
            fit(&mut look, order[1])?
        };
        let second_tried = !matches!(first, Fit::Yes { score: 2 });
        let buf = std::mem::take(&mut look.buf);
        self.input.unread(buf);
        let at = self.input.at(start);
        let name = RAW_DATA_NAMES[index];
        let structure = DecidedBy::Structure { container: index };
        let partial = DecidedBy::PartialData { container: index };
        let decision = match (first, second) {
            (Fit::Yes { .. }, _) if !second_tried => (order[0], structure),
            (Fit::Yes { score: sa }, Fit::Yes { score: sb }) => {
                let pick = if sb > sa { order[1] } else { order[0] };
                push_warning(
                    &mut self.warnings,
                    format!(
                        "both frame layouts fit the {name} container at {at}; chose {}",
                        pick.name()
                    ),
                );
                (pick, structure)
            }
            (Fit::Yes { score }, _) => {
                self.weak_fit(score, name, at, order[0]);
                (order[0], structure)
            }
            (_, Fit::Yes { score }) => {
                self.weak_fit(score, name, at, order[1]);
                (order[1], structure)
            }
            (Fit::Eof, Fit::No { .. }) => (order[0], partial),
            (Fit::No { .. }, Fit::Eof) => (order[1], partial),
            (Fit::Eof, Fit::Eof) => (hint.unwrap_or(FrameLayout::Vector), partial),
            (
                Fit::No {
                    at: a_at,
                    why: a_why,
                },
                Fit::No {
                    at: b_at,
                    why: b_why,
                },
            ) => {
                let (legacy, vector) = if order[0] == FrameLayout::Legacy {
                    ((a_at, a_why), (b_at, b_why))
                } else {
                    ((b_at, b_why), (a_at, a_why))
                };
                return Err(Error::malformed(
                    at,
                    format!(
                        "frames of the {name} container ({count} × {rs} bytes) in the legacy layout (but at {}: {}) or the 2020.3 layout (but at {}: {})",
                        self.input.at(start + legacy.0),
                        legacy.1,
                        self.input.at(start + vector.0),
                        vector.1,
                    ),
                ));
            }
        };
        if matches!(decision.1, DecidedBy::PartialData { .. }) {
            push_warning(
                &mut self.warnings,
                format!(
                    "the tape ends inside the {name} container; chose the {} layout from the data present",
                    decision.0.name()
                ),
            );
        }
        if decision.0 == FrameLayout::Legacy && mp != MpEncoding::None {
            push_warning(
                &mut self.warnings,
                "the Meta tree announces multiplayer data but the frames have the legacy layout"
                    .into(),
            );
        }
        self.layout = Some(LayoutDecision {
            layout: decision.0,
            decided_by: decision.1,
        });
        Ok(())
    }
}

/// Result of trying one layout on the bytes of a container.
#[derive(Debug)]
enum Fit {
    /// The structure fits; `score` counts the soft checks passed (rising times, next size a
    /// multiple of the record size), 2 at most.
    Yes { score: u8 },
    /// It does not fit: `why`, at `at` bytes after the container's frame data starts.
    No { at: u64, why: String },
    /// The stream ends before the check could finish.
    Eof,
}

/// Read-ahead buffer over the input, bounded by a limit.
struct Look<'a, R> {
    input: &'a mut Input<R>,
    buf: Vec<u8>,
    limit: u64,
}

impl<R: BufRead> Look<'_, R> {
    /// Makes sure `n` bytes are buffered; `false` when the stream ends first.
    fn ensure(&mut self, n: u64) -> Result<bool> {
        if n <= self.buf.len() as u64 {
            return Ok(true);
        }
        let start = self.input.offset();
        Error::check_limit(
            "RawData bytes read ahead to detect the frame layout",
            n,
            self.limit,
            start,
        )?;
        let mut chunk = vec![0u8; 64 * 1024];
        while (self.buf.len() as u64) < n {
            let want = ((n - self.buf.len() as u64) as usize).min(chunk.len());
            let got = self.input.read_full(&mut chunk[..want])?;
            self.buf.extend_from_slice(&chunk[..got]);
            if got < want {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn bytes<const N: usize>(&self, p: u64) -> [u8; N] {
        let p = p as usize;
        let mut out = [0u8; N];
        out.copy_from_slice(&self.buf[p..p + N]);
        out
    }
}

struct Times {
    last: Option<f64>,
    rising: bool,
}

impl Times {
    fn push(&mut self, t: f64) {
        if !t.is_finite() || self.last.is_some_and(|l| t <= l) {
            self.rising = false;
        }
        self.last = Some(t);
    }
}

fn fit_legacy<R: BufRead>(
    look: &mut Look<'_, R>,
    count: u64,
    rs: u64,
    is_last: bool,
) -> Result<Fit> {
    let Some(end) = count.checked_mul(rs) else {
        return Ok(Fit::No {
            at: 0,
            why: "frame data larger than 2^64 bytes".into(),
        });
    };
    if !look.ensure(end)? {
        return Ok(Fit::Eof);
    }
    let mut times = Times {
        last: None,
        rising: true,
    };
    for k in 0..count {
        times.push(f64::from_le_bytes(look.bytes(k * rs)));
    }
    fit_end(look, end, rs, is_last, times.rising)
}

fn fit_vector<R: BufRead>(
    look: &mut Look<'_, R>,
    count: u64,
    rs: u64,
    mp: MpEncoding,
    is_last: bool,
) -> Result<Fit> {
    let max_len = look.limit;
    let mut times = Times {
        last: None,
        rising: true,
    };
    let mut p = 0u64;
    for _ in 0..count {
        if !look.ensure(p + 8 + rs)? {
            return Ok(Fit::Eof);
        }
        times.push(f64::from_le_bytes(look.bytes(p)));
        p += 8 + rs;
        match mp {
            MpEncoding::None => {}
            MpEncoding::Fg2020_3 => {
                if !look.ensure(p + 8)? {
                    return Ok(Fit::Eof);
                }
                let n = u64::from_le_bytes(look.bytes(p));
                if n > max_len / 8 {
                    return Ok(Fit::No {
                        at: p,
                        why: format!("implausible multiplayer packet count {n}"),
                    });
                }
                p += 8;
                for _ in 0..n {
                    if !look.ensure(p + 8)? {
                        return Ok(Fit::Eof);
                    }
                    let len = u64::from_le_bytes(look.bytes(p));
                    if len > max_len {
                        return Ok(Fit::No {
                            at: p,
                            why: format!("implausible multiplayer packet length {len}"),
                        });
                    }
                    p += 8 + len;
                    if !look.ensure(p)? {
                        return Ok(Fit::Eof);
                    }
                }
            }
            MpEncoding::Next => {
                if !look.ensure(p + 4)? {
                    return Ok(Fit::Eof);
                }
                let total = u64::from(u32::from_le_bytes(look.bytes(p)));
                if !look.ensure(p + 4 + total)? {
                    return Ok(Fit::Eof);
                }
                let block = &look.buf[(p + 4) as usize..(p + 4 + total) as usize];
                if let Err(bad) = crate::mp::split_u16_packets(block) {
                    return Ok(Fit::No {
                        at: p + 4 + bad as u64,
                        why: "multiplayer packet overruns its block".into(),
                    });
                }
                p += 4 + total;
            }
        }
    }
    fit_end(look, p, rs, is_last, times.rising)
}

/// Checks what follows the frame data ending at `end`.
fn fit_end<R: BufRead>(
    look: &mut Look<'_, R>,
    end: u64,
    rs: u64,
    is_last: bool,
    rising: bool,
) -> Result<Fit> {
    let mut score = u8::from(rising);
    if is_last {
        if look.ensure(end + 1)? {
            return Ok(Fit::No {
                at: end,
                why: "data continues after the last RawData container".into(),
            });
        }
        score += 1;
    } else {
        if !look.ensure(end + 12)? {
            return Ok(Fit::Eof);
        }
        let ty = u32::from_le_bytes(look.bytes(end));
        if ty != CONTAINER_RAW_DATA {
            return Ok(Fit::No {
                at: end,
                why: format!("no RawData header follows (type field {ty})"),
            });
        }
        let size = u64::from_le_bytes(look.bytes(end + 4));
        if size.is_multiple_of(rs) {
            score += 1;
        }
    }
    Ok(Fit::Yes { score })
}

/// Writer of Normal tapes' decompressed content.
///
/// Wrap the output in [`gzip_encoder`] to produce a `.fgtape` file (and call `finish` on the
/// encoder returned by [`Writer::finish`]). Call [`Writer::write_header`], then exactly three
/// containers with [`Writer::write_raw_data`] (or [`Writer::start_raw_data`] and
/// [`Writer::write_frame`]), then [`Writer::finish`].
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: W,
    layout: FrameLayout,
    block_len: usize,
    mp: MpEncoding,
    header_written: bool,
    containers: usize,
    remaining: u64,
    trailing_written: bool,
}

impl<W: Write> Writer<W> {
    /// A writer producing frames in `layout`.
    pub fn new(out: W, layout: FrameLayout) -> Self {
        Writer {
            out,
            layout,
            block_len: 0,
            mp: MpEncoding::None,
            header_written: false,
            containers: 0,
            remaining: 0,
            trailing_written: false,
        }
    }

    /// Writes the endian marker and the Header, Meta and Config containers (payloads as kept).
    pub fn write_header(&mut self, header: &Header) -> Result<()> {
        if self.header_written {
            return Err(Error::invalid("the header was already written"));
        }
        if header.multiplayer == MpEncoding::Next && self.layout == FrameLayout::Vector {
            return Err(Error::Unsupported(
                "writing the `next` multiplayer encoding (FlightGear never writes it to Normal tapes)".into(),
            ));
        }
        self.out.write_all(&ENDIAN_MARKER.to_le_bytes())?;
        for (ty, payload) in [
            (CONTAINER_HEADER, &header.magic),
            (CONTAINER_META, &header.meta.payload),
            (CONTAINER_PROPERTIES, &header.config.payload),
        ] {
            self.out.write_all(&ty.to_le_bytes())?;
            self.out.write_all(&(payload.len() as u64).to_le_bytes())?;
            self.out.write_all(payload)?;
        }
        self.block_len = header.signals.block_len();
        self.mp = header.multiplayer;
        self.header_written = true;
        Ok(())
    }

    /// Starts the next RawData container with the given size field; returns the number of
    /// frames that must follow (`declared_size / record_size`).
    pub fn start_raw_data(&mut self, declared_size: u64) -> Result<u64> {
        if !self.header_written {
            return Err(Error::invalid("write_header must be called first"));
        }
        if self.remaining != 0 {
            return Err(Error::invalid(format!(
                "{} frames of the previous RawData container are missing",
                self.remaining
            )));
        }
        if self.containers == 3 {
            return Err(Error::invalid(
                "a Normal tape has exactly three RawData containers",
            ));
        }
        self.out.write_all(&CONTAINER_RAW_DATA.to_le_bytes())?;
        self.out.write_all(&declared_size.to_le_bytes())?;
        self.containers += 1;
        self.remaining = declared_size / (self.block_len as u64 + 8);
        Ok(self.remaining)
    }

    /// Writes one frame of the current container.
    pub fn write_frame(&mut self, frame: &Frame) -> Result<()> {
        if self.remaining == 0 {
            return Err(Error::invalid(
                "no frame is expected here (start_raw_data first, or too many frames)",
            ));
        }
        if frame.signals.len() != self.block_len {
            return Err(Error::invalid(format!(
                "frame signal block has {} bytes, the layout needs {}",
                frame.signals.len(),
                self.block_len
            )));
        }
        match self.layout {
            FrameLayout::Legacy => {
                if frame.padding.is_some_and(|p| p != [0; 8]) {
                    return Err(Error::invalid(
                        "legacy frames have no room for non-zero padding bytes",
                    ));
                }
                if !frame.multiplayer.is_empty() {
                    return Err(Error::invalid(
                        "legacy frames cannot hold multiplayer packets",
                    ));
                }
            }
            FrameLayout::Vector => match self.mp {
                MpEncoding::None if !frame.multiplayer.is_empty() => {
                    return Err(Error::invalid(
                        "frame has multiplayer packets but the Meta tree does not set meta/multiplayer",
                    ));
                }
                MpEncoding::Next => {
                    return Err(Error::Unsupported(
                        "writing the `next` multiplayer encoding".into(),
                    ));
                }
                _ => {}
            },
        }
        self.out.write_all(&frame.time.to_le_bytes())?;
        self.out.write_all(&frame.signals)?;
        if self.layout == FrameLayout::Vector {
            self.out.write_all(&frame.padding.unwrap_or([0; 8]))?;
            if self.mp == MpEncoding::Fg2020_3 {
                self.out
                    .write_all(&(frame.multiplayer.len() as u64).to_le_bytes())?;
                for packet in &frame.multiplayer {
                    self.out.write_all(&(packet.len() as u64).to_le_bytes())?;
                    self.out.write_all(packet)?;
                }
            }
        }
        self.remaining -= 1;
        Ok(())
    }

    /// Writes a whole RawData container.
    pub fn write_raw_data(&mut self, data: &RawData) -> Result<()> {
        let rs = self.block_len as u64 + 8;
        if data.declared_size / rs != data.frames.len() as u64 {
            return Err(Error::invalid(format!(
                "RawData size field {} means {} frames of {rs} bytes, but {} frames are given",
                data.declared_size,
                data.declared_size / rs,
                data.frames.len()
            )));
        }
        self.start_raw_data(data.declared_size)?;
        for frame in &data.frames {
            self.write_frame(frame)?;
        }
        Ok(())
    }

    /// Writes bytes after the third container (only to reproduce a file that had them).
    pub fn write_trailing(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        if self.containers != 3 || self.remaining != 0 || self.trailing_written {
            return Err(Error::invalid(
                "trailing bytes go after the third RawData container",
            ));
        }
        self.trailing_written = true;
        self.out.write_all(bytes)?;
        Ok(())
    }

    /// Checks that the tape is complete, flushes and returns the output.
    pub fn finish(mut self) -> Result<W> {
        if !self.header_written || self.containers != 3 || self.remaining != 0 {
            return Err(Error::invalid(format!(
                "incomplete tape: header {}, {} of 3 RawData containers, {} frames missing",
                if self.header_written {
                    "written"
                } else {
                    "missing"
                },
                self.containers,
                self.remaining
            )));
        }
        self.out.flush()?;
        Ok(self.out)
    }
}
