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

mod reader;
mod writer;

use std::io::{BufRead, Write};
use std::path::Path;

use recfmt_core::Limits;

use crate::error::{Error, Offset, Result};
use crate::props::{PropNode, PropertyList};
use crate::signals::SignalLayout;

pub use reader::{Frames, Reader};
pub use writer::Writer;

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
