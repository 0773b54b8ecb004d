//! The recfmt adapter: any tape as streams of rows, and the registry descriptor.
//!
//! Streams:
//!
//! * `signals`: `t` (f64 seconds), then one column per recorded signal, named by its
//!   property path with `[0]` steps removed (`/position/altitude-ft`) and typed by its signal
//!   type (f64, f32, i32, i16, i8, bool). Column metadata: `property` (the path as stored),
//!   `interpolation`, `fgtape.type`.
//! * `multiplayer` (tapes that can hold MP packets): one row per packet: `t`, `callsign`,
//!   `msg_id`, the decoded position message where it is one (`model`, `sim_time`, `lag`,
//!   `latitude_deg`, `longitude_deg`, `altitude_m` above the WGS84 ellipsoid, `ecef_x/y/z`;
//!   null otherwise), and `packet` (the raw bytes, header partly little-endian as FlightGear
//!   stores it).
//! * `extra_properties` (Continuous tapes recording them): one row per record: `t`, `path`,
//!   `value` (null for a removal), `removed`.
//!
//! Rows come in time order. For Normal tapes that means long-term, medium-term, then
//! short-term frames, the reverse of file order. Memory stays bounded to one frame: opening
//! the tape makes one pass over the gzip stream that checks it and counts the frames of each
//! RawData container; the containers are then emitted in time order, each by a fresh
//! decoder over the file that skips (decompresses and drops) everything before it. That
//! decompresses the stream about three times in all, which is cheap for tapes of a few MB.
//! Continuous tapes are streamed, and [`RecordingReader::seek_time`] seeks in them through a
//! one-pass index of frame times and offsets.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use recfmt_core::{
    BatchSet, ColumnData, DType, FormatDescriptor, FormatInfo, FrameBuf, Header, Integrity,
    ReadOptions, RecordingReader, Schema, Score, SignalDesc, StreamDesc, Tier, TimeBase,
    TimeReference, TimeSystem, Value,
};

use crate::continuous::{self, ContinuousFrame, ExtraProperty, FrameIndex};
use crate::error::FORMAT_ID;
use crate::mp::MpHeader;
use crate::normal::{self, Frame, MAGIC, RAW_DATA_NAMES};
use crate::props::PropNode;
use crate::signals::{SignalLayout, SignalType, SignalValue};

/// Static facts about the format.
pub const INFO: FormatInfo = FormatInfo {
    id: FORMAT_ID,
    name: "FlightGear flight recorder tape",
    extensions: &["fgtape"],
};

/// The fgtape format descriptor for a [`recfmt_core::Registry`]: it also copies tapes
/// faithfully and writes KML/GPX flight tracks.
pub static FORMAT: FormatDescriptor = FormatDescriptor {
    create: Some(crate::writer::create),
    copy: Some(crate::hooks::copy),
    outputs: &crate::hooks::OUTPUTS,
    ..FormatDescriptor::new(INFO, Tier::Magic, score, open)
};

/// Scores the first bytes of a file: the Continuous magic at byte 0, or a gzip stream (or
/// decompressed content) starting with the endian marker and the magic container.
///
/// ```
/// use recfmt_core::Score;
/// assert_eq!(recfmt_fgtape::score(b"FlightGear Flight Recorder Tape\0\x10\0\0\0"), Score::Yes(255));
/// assert_eq!(recfmt_fgtape::score(b"CARLA"), Score::No);
/// ```
pub fn score(head: &[u8]) -> Score {
    if head.starts_with(MAGIC) {
        return Score::Yes(255);
    }
    let normal_start = |d: &[u8]| {
        d.len() >= 48
            && d[..4] == normal::ENDIAN_MARKER.to_le_bytes()
            && d[4..16] == [0, 0, 0, 0, 32, 0, 0, 0, 0, 0, 0, 0]
            && &d[16..48] == MAGIC
    };
    if head.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::with_capacity(48);
        let _ = flate2::read::GzDecoder::new(head)
            .take(48)
            .read_to_end(&mut out);
        if normal_start(&out) {
            return Score::Yes(255);
        }
        return Score::No;
    }
    if normal_start(head) {
        return Score::Yes(250);
    }
    Score::No
}

/// True when the file starts with the bare magic: a Continuous or Recovery tape (a Normal
/// tape starts with gzip or the endian marker).
pub(crate) fn starts_with_magic(path: &Path) -> std::io::Result<bool> {
    let mut head = Vec::with_capacity(MAGIC.len());
    File::open(path)?
        .take(MAGIC.len() as u64)
        .read_to_end(&mut head)?;
    Ok(head[..] == MAGIC[..])
}

fn open(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Box<dyn RecordingReader>> {
    Ok(Box::new(FgTape::open(path, options)?))
}

/// A pending row of the `multiplayer` or `extra_properties` stream.
#[derive(Debug)]
enum Pending {
    Mp { time: f64, packet: Vec<u8> },
    Extra { time: f64, record: ExtraProperty },
}

/// The frames of a Normal tape, emitted container by container in time order.
#[derive(Debug)]
struct NormalFrames {
    path: PathBuf,
    options: ReadOptions,
    /// Frames read in the first pass, per container (short, medium, long).
    kept: [u64; 3],
    /// Containers still to emit; the next one is last.
    todo: Vec<usize>,
    /// The reader positioned in the container being emitted, and the frames left in it.
    current: Option<(Box<normal::Reader<BufReader<File>>>, u64)>,
    frame: Frame,
    emitted: u64,
}

impl NormalFrames {
    /// Reads the next frame into `self.frame`; `false` when every kept frame was emitted.
    fn next_frame(&mut self) -> crate::Result<bool> {
        loop {
            if let Some((reader, left)) = &mut self.current {
                if *left > 0 && reader.read_frame(&mut self.frame)? {
                    *left -= 1;
                    self.emitted += 1;
                    return Ok(true);
                }
                self.current = None;
            }
            let Some(index) = self.todo.pop() else {
                return Ok(false);
            };
            let reader = self.open_container(index)?;
            self.current = Some((Box::new(reader), self.kept[index]));
        }
    }

    /// A fresh reader over the file, positioned at the first frame of container `index`.
    fn open_container(&self, index: usize) -> crate::Result<normal::Reader<BufReader<File>>> {
        let file = BufReader::with_capacity(64 * 1024, File::open(&self.path)?);
        let mut reader = normal::Reader::with_options(file, &self.options)?;
        reader.read_header()?;
        while let Some(h) = reader.next_container()? {
            if h.index == index {
                return Ok(reader);
            }
        }
        Err(crate::Error::invalid(format!(
            "the {} container is gone (the file changed while it was read)",
            RAW_DATA_NAMES[index]
        )))
    }
}

#[derive(Debug)]
enum Frames {
    Normal(Box<NormalFrames>),
    Continuous {
        reader: Box<continuous::Reader<BufReader<File>>>,
        frame: ContinuousFrame,
        signals: Option<usize>,
        multiplayer: Option<usize>,
        extra: Option<usize>,
        index: Option<FrameIndex>,
    },
}

/// Any fgtape (Normal, Continuous or Recovery) as a [`RecordingReader`].
#[derive(Debug)]
pub struct FgTape {
    header: Header,
    schema: Schema,
    integrity: Integrity,
    layout: Option<SignalLayout>,
    frames: Frames,
    pending: VecDeque<Pending>,
    values: Vec<SignalValue>,
    /// The row the batch path builds multiplayer and extra-property rows in.
    row: FrameBuf,
    /// Whether the batch being filled keeps any signal column besides the time (`validate`
    /// keeps none): set by [`Self::check_signal_columns`] at the start of each batch call.
    signal_columns_kept: bool,
    /// Bytes one `signals` row adds to the batch (`StreamBatch::fixed_row_bytes`, exact for
    /// its scalar number columns): the batch is handed on at [`BatchSet::MAX_BATCH_BYTES`],
    /// since a tape's row can hold hundreds of signals.
    signal_row_bytes: usize,
    /// Signal rows appended to the batch but not yet committed: a commit pads every
    /// column, so rows are committed together, not one per frame.
    uncommitted: usize,
    streams: [Option<usize>; 3],
    size: u64,
    done: bool,
    strict: bool,
}

impl FgTape {
    /// Opens a tape, detecting Normal versus Continuous/Recovery from the first bytes.
    pub fn open(path: impl AsRef<Path>, options: &ReadOptions) -> crate::Result<Self> {
        let path = path.as_ref();
        let size = std::fs::metadata(path)?.len();
        if starts_with_magic(path)? {
            match Self::open_continuous(path, options, size) {
                Err(e) if e.is_truncation() && !options.strict => {
                    // Continuous tapes are not compressed: the offset is in the file.
                    let lost = size.saturating_sub(e.offset().map_or(size, |o| o.get()));
                    Ok(Self::cut_in_header(path, "continuous", None, e, lost, size))
                }
                result => result,
            }
        } else {
            Self::open_normal(path, options, size)
        }
    }

    /// A tape that ends inside its header (Continuous: only the header was read when the
    /// error came): no streams, since the signal layout is unknown; the Meta tree when it
    /// was read; truncated where the incomplete part starts, `lost` bytes after it.
    fn cut_in_header(
        path: &Path,
        kind: &str,
        meta_tree: Option<&crate::props::PropertyList>,
        e: crate::Error,
        lost: u64,
        size: u64,
    ) -> Self {
        let mut integrity = Integrity::default();
        let offset = e.offset().map_or(0, |o| o.get());
        integrity.truncate(offset, lost);
        integrity.warn(format!(
            "reading stopped: {e}; the tape ends inside its header, so no frames could be read"
        ));
        let mut meta = recfmt_core::Metadata::new();
        if let Some(tree) = meta_tree {
            flatten(&tree.root, "", &mut meta);
        }
        meta.insert("fgtape.kind".into(), kind.into());
        meta.insert(
            "fgtape.frames".into(),
            RAW_DATA_NAMES
                .iter()
                .map(|n| format!("{n}=0"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        let version = meta_tree
            .and_then(|t| t.get("meta/version/flightgear"))
            .and_then(PropNode::string_value)
            .unwrap_or("")
            .to_owned();
        let frames = NormalFrames {
            path: path.to_path_buf(),
            options: ReadOptions::default(),
            kept: [0; 3],
            todo: Vec::new(),
            current: None,
            frame: Frame::default(),
            emitted: 0,
        };
        Self::assemble(
            version,
            meta,
            None,
            false,
            false,
            Frames::Normal(Box::new(frames)),
            integrity,
            size,
            false,
        )
    }

    fn open_normal(path: &Path, options: &ReadOptions, size: u64) -> crate::Result<Self> {
        let file = BufReader::with_capacity(64 * 1024, File::open(path)?);
        let mut reader = normal::Reader::with_options(file, options)?;
        let header = match reader.read_header() {
            Ok(header) => header.clone(),
            Err(e) if e.is_truncation() && !options.strict => {
                let lost = reader
                    .position()
                    .saturating_sub(e.offset().map_or(0, |o| o.get()));
                return Ok(Self::cut_in_header(
                    path,
                    "normal",
                    reader.meta(),
                    e,
                    lost,
                    size,
                ));
            }
            Err(e) => return Err(e),
        };
        let mut integrity = Integrity::default();
        let mut kept = [0u64; 3];
        let outcome = (|| -> crate::Result<()> {
            let mut scratch = Frame::default();
            while let Some(h) = reader.next_container()? {
                while reader.read_frame(&mut scratch)? {
                    kept[h.index] += 1;
                }
            }
            Ok(())
        })();
        if let Err(e) = outcome {
            if options.strict {
                return Err(e);
            }
            let offset = e.offset().map_or(reader.position(), |o| o.get());
            if e.is_truncation() {
                integrity.truncate(offset, reader.position().saturating_sub(offset));
            } else {
                integrity.skip_corrupt(offset, 0, &e.to_string());
            }
            integrity.warn(format!("reading stopped: {e}"));
        }
        for w in reader.warnings() {
            integrity.warn(w.clone());
        }
        let frames = NormalFrames {
            path: path.to_path_buf(),
            options: options.clone(),
            kept,
            todo: (0..3).filter(|&i| kept[i] > 0).collect(),
            current: None,
            frame: Frame::default(),
            emitted: 0,
        };

        let mut meta = recfmt_core::Metadata::new();
        flatten(&header.meta.tree.root, "", &mut meta);
        meta.insert("fgtape.kind".into(), "normal".into());
        if let Some(d) = reader.layout() {
            meta.insert("fgtape.layout".into(), d.layout.name().into());
        }
        meta.insert(
            "fgtape.frames".into(),
            RAW_DATA_NAMES
                .iter()
                .zip(&frames.kept)
                .map(|(n, k)| format!("{n}={k}"))
                .collect::<Vec<_>>()
                .join(" "),
        );
        recorder_metadata(&header.config.tree.root, &header.signals, &mut meta);
        let has_mp = header.multiplayer != normal::MpEncoding::None;
        let layout = header.signals.clone();
        Ok(Self::assemble(
            header.flightgear_version().unwrap_or("").to_owned(),
            meta,
            Some(layout),
            has_mp,
            false,
            Frames::Normal(Box::new(frames)),
            integrity,
            size,
            options.strict,
        ))
    }

    fn open_continuous(path: &Path, options: &ReadOptions, size: u64) -> crate::Result<Self> {
        let reader = continuous::Reader::open_with(path, options)?;
        let h = reader.header().clone();
        let mut integrity = Integrity::default();
        for w in reader.warnings() {
            integrity.warn(w.clone());
        }
        let mut meta = recfmt_core::Metadata::new();
        flatten(&h.xml.tree.root, "", &mut meta);
        let kind = if h.is_recovery_like() {
            "recovery"
        } else {
            "continuous"
        };
        meta.insert("fgtape.kind".into(), kind.into());
        if let (Some(layout), Some(config)) = (&h.signals, h.xml.tree.get("signals")) {
            recorder_metadata(config, layout, &mut meta);
        }
        let version = h
            .xml
            .tree
            .get("meta/version/flightgear")
            .and_then(PropNode::string_value)
            .unwrap_or("")
            .to_owned();
        let signals = h
            .item_index(continuous::ITEM_SIGNALS)
            .filter(|_| h.signals.is_some());
        let multiplayer = h.item_index(continuous::ITEM_MULTIPLAYER);
        let extra = h.item_index(continuous::ITEM_EXTRA_PROPERTIES);
        Ok(Self::assemble(
            version,
            meta,
            if signals.is_some() {
                h.signals.clone()
            } else {
                None
            },
            multiplayer.is_some(),
            extra.is_some(),
            Frames::Continuous {
                reader: Box::new(reader),
                frame: ContinuousFrame::default(),
                signals,
                multiplayer,
                extra,
                index: None,
            },
            integrity,
            size,
            options.strict,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        version: String,
        metadata: recfmt_core::Metadata,
        layout: Option<SignalLayout>,
        has_mp: bool,
        has_extra: bool,
        frames: Frames,
        integrity: Integrity,
        size: u64,
        strict: bool,
    ) -> Self {
        let time = || SignalDesc::scalar("t", DType::F64).with_unit("s");
        let mut schema = Schema::default();
        let mut streams = [None; 3];
        if let Some(layout) = &layout {
            let mut s = StreamDesc::new("signals", time(), TimeBase::SECONDS);
            let mut used = std::collections::HashSet::new();
            for sig in layout.signals() {
                let mut name = sig.name();
                let mut k = 2;
                while !used.insert(name.clone()) {
                    name = format!("{}#{k}", sig.name());
                    k += 1;
                }
                let mut d = SignalDesc::scalar(name, sig.ty.dtype());
                d.metadata.insert("property".into(), sig.property.clone());
                d.metadata
                    .insert("interpolation".into(), sig.interpolation.name().into());
                d.metadata
                    .insert("fgtape.type".into(), sig.ty.name().into());
                s.signals.push(d);
            }
            streams[0] = Some(schema.streams.len());
            schema.streams.push(s);
        }
        if has_mp {
            let mut s = StreamDesc::new("multiplayer", time(), TimeBase::SECONDS);
            s.signals.push(SignalDesc::scalar("callsign", DType::Str));
            s.signals.push(SignalDesc::scalar("msg_id", DType::U32));
            // Decoded from position messages (null for other messages).
            s.signals.push(SignalDesc::scalar("model", DType::Str));
            s.signals
                .push(SignalDesc::scalar("sim_time", DType::F64).with_unit("s"));
            s.signals
                .push(SignalDesc::scalar("lag", DType::F64).with_unit("s"));
            s.signals
                .push(SignalDesc::scalar("latitude_deg", DType::F64).with_unit("deg"));
            s.signals
                .push(SignalDesc::scalar("longitude_deg", DType::F64).with_unit("deg"));
            s.signals.push(
                SignalDesc::scalar("altitude_m", DType::F64).with_unit("m (WGS84 ellipsoid)"),
            );
            for axis in ["x", "y", "z"] {
                s.signals
                    .push(SignalDesc::scalar(format!("ecef_{axis}"), DType::F64).with_unit("m"));
            }
            s.signals.push(SignalDesc::scalar("packet", DType::Bytes));
            s.entity = Some(1);
            streams[1] = Some(schema.streams.len());
            schema.streams.push(s);
        }
        if has_extra {
            let mut s = StreamDesc::new("extra_properties", time(), TimeBase::SECONDS);
            s.signals.push(SignalDesc::scalar("path", DType::Str));
            s.signals.push(SignalDesc::scalar("value", DType::Str));
            s.signals.push(SignalDesc::scalar("removed", DType::Bool));
            streams[2] = Some(schema.streams.len());
            schema.streams.push(s);
        }
        FgTape {
            header: Header {
                format: FORMAT_ID,
                version,
                time: Some(TimeReference::new(TimeSystem::Met)),
                metadata,
            },
            schema,
            integrity,
            layout,
            frames,
            pending: VecDeque::new(),
            values: Vec::new(),
            row: FrameBuf::default(),
            signal_columns_kept: true,
            signal_row_bytes: 0,
            uncommitted: 0,
            streams,
            size,
            done: false,
            strict,
        }
    }

    fn emit_pending(&mut self, dst: &mut FrameBuf) -> bool {
        let Some(p) = self.pending.pop_front() else {
            return false;
        };
        match p {
            Pending::Mp { time, packet } => {
                let Some(stream) = self.streams[1] else {
                    return false;
                };
                dst.reset(stream, 13);
                dst.values[0] = Value::Float(time);
                let h = MpHeader::parse(&packet);
                dst.values[1] = h.map_or(Value::Null, |h| Value::Str(h.callsign()));
                dst.values[2] = h.map_or(Value::Null, |h| Value::UInt(u64::from(h.msg_id)));
                match crate::mp::PositionMsg::parse(&packet) {
                    Some(pos) => {
                        let (lat, lon, alt) = crate::track::ecef_to_geodetic(pos.position);
                        dst.values[3] = Value::Str(pos.model);
                        dst.values[4] = Value::Float(pos.time);
                        dst.values[5] = Value::Float(pos.lag);
                        dst.values[6] = Value::Float(lat);
                        dst.values[7] = Value::Float(lon);
                        dst.values[8] = Value::Float(alt);
                        for (k, v) in pos.position.into_iter().enumerate() {
                            dst.values[9 + k] = Value::Float(v);
                        }
                    }
                    None => dst.values[3..12].fill(Value::Null),
                }
                dst.values[12] = Value::Bytes(packet);
            }
            Pending::Extra { time, record } => {
                let Some(stream) = self.streams[2] else {
                    return false;
                };
                dst.reset(stream, 4);
                dst.values[0] = Value::Float(time);
                match record {
                    ExtraProperty::Change { path, value } => {
                        dst.values[1] = Value::Str(path);
                        dst.values[2] = Value::Str(value);
                        dst.values[3] = Value::Bool(false);
                    }
                    ExtraProperty::Removal { path } => {
                        dst.values[1] = Value::Str(path);
                        dst.values[2] = Value::Null;
                        dst.values[3] = Value::Bool(true);
                    }
                }
            }
        }
        true
    }

    /// Fills `dst` with a `signals` row from the signal block of the frame just read.
    fn signals_row(&mut self, time: f64, dst: &mut FrameBuf) -> crate::Result<bool> {
        let (Some(layout), Some(stream)) = (&self.layout, self.streams[0]) else {
            return Ok(false);
        };
        let Some(block) = self.frames.signal_block() else {
            return Ok(false);
        };
        layout.decode_into(block, &mut self.values)?;
        dst.reset(stream, self.values.len() + 1);
        dst.values[0] = Value::Float(time);
        for (slot, v) in dst.values[1..].iter_mut().zip(&self.values) {
            *slot = match *v {
                SignalValue::Double(x) => Value::Float(x),
                SignalValue::Float(x) => Value::Float(f64::from(x)),
                SignalValue::Int(x) => Value::Int(i64::from(x)),
                SignalValue::Int16(x) => Value::Int(i64::from(x)),
                SignalValue::Int8(x) => Value::Int(i64::from(x)),
                SignalValue::Bool(x) => Value::Bool(x),
            };
        }
        Ok(true)
    }

    /// The batch path of [`Self::signals_row`]: appends the signal block of the frame just
    /// read to the `signals` batch when `dst` wants it. The block length is checked either
    /// way, so an unwanted stream fails where the row path fails. The columns were checked
    /// by [`Self::check_signal_columns`] at the start of the batch call.
    fn signals_batch(&mut self, time: f64, dst: &mut BatchSet) -> crate::Result<()> {
        let (Some(layout), Some(stream)) = (&self.layout, self.streams[0]) else {
            return Ok(());
        };
        let Some(block) = self.frames.signal_block() else {
            return Ok(());
        };
        layout.check_block(block)?;
        if !dst.wants(stream) {
            return Ok(());
        }
        let batch = dst.stream_mut(stream);
        let Some((t, columns)) = batch.columns_mut().split_first_mut() else {
            return Err(crate::Error::invalid(
                "the signals stream has no time column",
            ));
        };
        if self.signal_columns_kept {
            layout.append_columns(block, columns);
        }
        if let Some(ColumnData::F64(t)) = t.kept_data_mut() {
            t.push(time);
        }
        self.uncommitted += 1;
        Ok(())
    }

    /// Commits the `signals` rows appended since the last commit.
    fn commit_signal_rows(&mut self, dst: &mut BatchSet) {
        if let (Some(stream), n @ 1..) = (self.streams[0], std::mem::take(&mut self.uncommitted)) {
            dst.stream_mut(stream).commit_rows(n);
        }
    }

    /// Checks once per batch call that the `signals` columns are the ones the layout decodes
    /// into, so a decode never stops half way through a row.
    fn check_signal_columns(&mut self, dst: &BatchSet) -> crate::Result<()> {
        let (Some(layout), Some(stream)) = (&self.layout, self.streams[0]) else {
            return Ok(());
        };
        if !dst.wants(stream) {
            return Ok(());
        }
        let columns = dst.stream(stream).columns();
        self.signal_columns_kept = dst.stream(stream).keeps_other_than(0);
        self.signal_row_bytes = dst.stream(stream).fixed_row_bytes();
        let time_ok = columns
            .first()
            .is_some_and(|c| c.dtype() == DType::F64 && c.width() == Some(1));
        if !time_ok || !layout.columns_match(&columns[1..]) {
            return Err(crate::Error::invalid(
                "the signals batch does not have the columns of the signal layout",
            ));
        }
        Ok(())
    }

    /// Reads the next frame, queues its multiplayer and extra-property rows, and returns its
    /// time; its signal block is then [`Frames::signal_block`]. `None` when no frame was read
    /// (the tape ended, or reading stopped on an error noted in the integrity report).
    fn advance(&mut self) -> crate::Result<Option<f64>> {
        match &mut self.frames {
            Frames::Normal(normal) => {
                let more = match normal.next_frame() {
                    Ok(more) => more,
                    Err(e) if !self.strict => {
                        let offset = e.offset().map_or(0, |o| o.get());
                        self.integrity.skip_corrupt(offset, 0, &e.to_string());
                        false
                    }
                    Err(e) => return Err(e),
                };
                if !more {
                    self.done = true;
                    return Ok(None);
                }
                let time = normal.frame.time;
                self.pending.extend(
                    normal
                        .frame
                        .multiplayer
                        .drain(..)
                        .map(|packet| Pending::Mp { time, packet }),
                );
                Ok(Some(time))
            }
            Frames::Continuous {
                reader,
                frame,
                multiplayer,
                extra,
                ..
            } => {
                let more = match reader.read_frame(frame) {
                    Ok(more) => more,
                    Err(e) if !self.strict => {
                        let offset = e.offset().map_or(reader.position(), |o| o.get());
                        self.integrity.skip_corrupt(offset, 0, &e.to_string());
                        false
                    }
                    Err(e) => return Err(e),
                };
                if !more {
                    if let Some(t) = reader.truncated()
                        && self.integrity.truncated_at != Some(t.offset.get())
                    {
                        self.integrity.truncate(t.offset.get(), t.bytes);
                    }
                    self.done = true;
                    return Ok(None);
                }
                let time = frame.time;
                if let Some(item) = multiplayer.and_then(|i| frame.items.get(i)) {
                    match crate::mp::split_u16_packets(item) {
                        Ok(list) => self.pending.extend(list.into_iter().map(|p| Pending::Mp {
                            time,
                            packet: p.to_vec(),
                        })),
                        Err(at) => self.integrity.warn(format!(
                            "frame at t={time}: multiplayer item broken at item byte {at}"
                        )),
                    }
                }
                if let Some(item) = extra.and_then(|i| frame.items.get(i)) {
                    match continuous::decode_extra_properties(item) {
                        Ok(list) => self.pending.extend(
                            list.into_iter()
                                .map(|record| Pending::Extra { time, record }),
                        ),
                        Err(at) => self.integrity.warn(format!(
                            "frame at t={time}: extra-properties item broken at item byte {at}"
                        )),
                    }
                }
                Ok(Some(time))
            }
        }
    }

    fn next_row(&mut self, dst: &mut FrameBuf) -> crate::Result<bool> {
        loop {
            if self.emit_pending(dst) {
                return Ok(true);
            }
            if self.done {
                return Ok(false);
            }
            let Some(time) = self.advance()? else {
                continue;
            };
            if self.signals_row(time, dst)? {
                return Ok(true);
            }
        }
    }

    /// The batch path of [`Self::next_row`]: the same frames and integrity notes; `signals`
    /// rows are decoded straight into the columns (and only checked when unwanted);
    /// multiplayer and extra-property rows, few and mostly text, go through the row path,
    /// and unwanted ones are dropped without decoding.
    fn next_batches(&mut self, dst: &mut BatchSet) -> recfmt_core::Result<bool> {
        self.check_signal_columns(dst)?;
        let result = self.fill_batches(dst);
        // Appended rows are committed whatever ended the call, so an error leaves every
        // complete row in the batch, as the row path does.
        self.commit_signal_rows(dst);
        result
    }

    /// The loop of [`Self::next_batches`]; `signals` rows are left uncommitted.
    fn fill_batches(&mut self, dst: &mut BatchSet) -> recfmt_core::Result<bool> {
        let signals = self.streams[0];
        loop {
            let signal_rows = signals.map_or(0, |s| dst.stream(s).rows()) + self.uncommitted;
            let signal_bytes = signal_rows.saturating_mul(self.signal_row_bytes);
            if BatchSet::full_at(dst.capacity(), signal_rows, signal_bytes) || dst.is_full() {
                return Ok(true);
            }
            if let Some(p) = self.pending.front() {
                let stream = match p {
                    Pending::Mp { .. } => self.streams[1],
                    Pending::Extra { .. } => self.streams[2],
                };
                match stream {
                    Some(s) if dst.wants(s) => {
                        let mut row = std::mem::take(&mut self.row);
                        let emitted = self.emit_pending(&mut row);
                        let pushed = if emitted {
                            dst.push_frame(&row, &self.schema)
                        } else {
                            Ok(())
                        };
                        self.row = row;
                        pushed?;
                    }
                    _ => {
                        self.pending.pop_front();
                    }
                }
                continue;
            }
            if self.done {
                return Ok(false);
            }
            let Some(time) = self.advance()? else {
                continue;
            };
            self.signals_batch(time, dst)?;
        }
    }
}

impl Frames {
    /// The signal block of the frame last read (`None` for tapes without signals).
    fn signal_block(&self) -> Option<&[u8]> {
        match self {
            Frames::Normal(normal) => Some(&normal.frame.signals),
            Frames::Continuous {
                frame,
                signals: Some(i),
                ..
            } => frame.items.get(*i).map(Vec::as_slice),
            Frames::Continuous { signals: None, .. } => None,
        }
    }
}

impl RecordingReader for FgTape {
    fn format(&self) -> &'static FormatInfo {
        &FORMAT.info
    }
    fn header(&self) -> &Header {
        &self.header
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn read_frame(&mut self, dst: &mut FrameBuf) -> recfmt_core::Result<bool> {
        Ok(self.next_row(dst)?)
    }
    fn read_batches(&mut self, dst: &mut BatchSet) -> recfmt_core::Result<bool> {
        self.next_batches(dst)
    }
    fn integrity(&self) -> &Integrity {
        &self.integrity
    }
    fn progress(&self) -> (u64, Option<u64>) {
        match &self.frames {
            Frames::Normal(normal) => {
                let total: u64 = normal.kept.iter().sum();
                if total == 0 || self.done {
                    (self.size, Some(self.size))
                } else {
                    let done = (u128::from(self.size) * u128::from(normal.emitted)
                        / u128::from(total)) as u64;
                    (done, Some(self.size))
                }
            }
            Frames::Continuous { reader, .. } => (reader.position(), Some(self.size)),
        }
    }
    /// Continuous and Recovery tapes: indexes the frames once (times and offsets, nothing
    /// decoded) and moves to the first frame, in file order, whose time is at least
    /// `seconds`. Rows from there on are all rows of the tape at or after `seconds` (plus,
    /// if times do not rise through the file, any later frames with earlier times).
    /// Extra-property rows before that frame are skipped too, so a state rebuilt from them
    /// lacks earlier changes. Normal tapes are one gzip stream: `Ok(false)`.
    fn seek_time(&mut self, seconds: f64) -> recfmt_core::Result<bool> {
        let Frames::Continuous { reader, index, .. } = &mut self.frames else {
            return Ok(false);
        };
        if seconds.is_nan() {
            return Ok(false);
        }
        let index = match index {
            Some(index) => index,
            None => {
                reader.seek_frame(reader.frames_start())?;
                index.insert(reader.index_frames()?)
            }
        };
        reader.seek_frame(index.seek_offset(seconds))?;
        self.pending.clear();
        self.done = false;
        Ok(true)
    }
}

/// Adds every leaf of a tree as `path = value` (paths simplified, `/`-separated).
fn flatten(node: &PropNode, prefix: &str, out: &mut recfmt_core::Metadata) {
    for child in &node.children {
        let step = if child.index == 0 {
            child.name.clone()
        } else {
            format!("{}[{}]", child.name, child.index)
        };
        let path = if prefix.is_empty() {
            step
        } else {
            format!("{prefix}/{step}")
        };
        if let Some(v) = &child.value {
            out.insert(path.clone(), v.text.clone());
        }
        if out.len() < 10_000 {
            flatten(child, &path, out);
        }
    }
}

fn recorder_metadata(config: &PropNode, layout: &SignalLayout, out: &mut recfmt_core::Metadata) {
    if let Some(name) = config.get("name").and_then(PropNode::string_value) {
        out.insert("fgtape.recorder".into(), name.into());
    }
    out.insert(
        "fgtape.record_size".into(),
        layout.record_size().to_string(),
    );
    let counts: Vec<String> = SignalType::ALL
        .iter()
        .map(|t| format!("{}={}", t.name(), layout.count(*t)))
        .collect();
    out.insert("fgtape.signal_counts".into(), counts.join(" "));
}
