//! The adapter from NanoVer recordings to the generic recfmt model.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use recfmt_core::{
    ArrayValue, FormatInfo, Header, Integrity, IntegrityStatus, Metadata, ReadOptions,
    RecordingReader, RowWriter, Schema, TimeReference, TimeSystem, Value as Cell,
};

mod columns;
mod events;
mod window;
mod zip;

pub(crate) use self::columns::{ArrayKind, ScalarKind, Variant};
use self::columns::{FrameCols, Prescan, build_schema, prescan};
#[cfg(feature = "hdf5")]
pub(crate) use self::columns::{array_unit, value_unit};
pub(crate) use self::events::EventSource;
#[cfg(not(feature = "nanover-zip"))]
pub(crate) use self::events::zip_unsupported;
pub use self::events::{is_nanover_zip, zip_head_is_nanover};
use crate::aggregate::{FrameView, SIMULATION_COUNTER};
use crate::checkpoint::{Checkpoints, Tracker, spacing_for};
use crate::error::Result;
use crate::header::{FileKind, Version};
use crate::io::Reader;
use crate::json::{array_to_json_text, value_to_json_text};
use crate::proto::{GetFrameResponse, Kind, StateUpdate, Values, is_null};
use crate::timeline::{Event, RecordingPaths, Timeline};

/// Name of the stream with one row per frame record.
pub const FRAMES_STREAM: &str = "frames";
/// Name of the stream with one row per key changed by a state update.
pub const STATE_STREAM: &str = "state";
/// The time column of both streams: the record's timestamp in microseconds since the
/// recorder started (`u64`; [`TimeBase::MICROSECONDS`](recfmt_core::TimeBase::MICROSECONDS)).
pub const TIME_COLUMN: &str = "t_us";
/// The last column of the `frames` stream: which columns the record itself set (its delta),
/// as a JSON array (see [`NanoverRecording`]).
pub const DELTA_KEYS_COLUMN: &str = "delta_keys";
/// Column metadata key: which `FrameData` map a `frames` column comes from (`values` or
/// `arrays`).
pub const META_MAP: &str = "nanover.map";
/// Column metadata key: the NanoVer key of a `frames` column (its name may differ when two
/// keys would give the same name).
pub const META_KEY: &str = "nanover.key";
/// Column metadata key: how a `frames` column holds its key: `number`, `bool`, `string` or
/// `json` for `values`; `float`, `index` or `json` for `arrays`.
pub const META_TYPE: &str = "nanover.type";

/// Static facts about NanoVer recordings.
pub static INFO: FormatInfo = FormatInfo {
    id: crate::FORMAT_ID,
    name: "NanoVer recording (.traj/.state, protobuf)",
    extensions: &["traj", "state"],
};

#[derive(Debug)]
enum Source<R> {
    /// A `.traj` and/or `.state` read as they go.
    Files(Box<Timeline<R, R>>),
    /// Events decoded as they are read (a `.nanover.zip`).
    #[cfg_attr(not(feature = "nanover-zip"), allow(dead_code))]
    Events(Box<dyn EventSource>),
}

/// Rows still to emit for the current event.
#[derive(Debug, Default)]
struct Pending {
    /// `None` when the time is unknown (a message recovered without its index).
    timestamp: Option<u128>,
    frame_row: bool,
    frame_index: u32,
    delta: Option<String>,
    state_rows: Vec<(Option<String>, Option<String>, bool)>,
    next_state: usize,
}

/// A NanoVer recording read as generic streams.
///
/// Either file of a pair opens the whole recording (`x.traj` finds `x.state` and the
/// reverse; [`RecordingPaths::resolve`]); a `.nanover.zip` opens too. Streams, in this order
/// (`frames` only with a `.traj`, `state` only with a `.state`):
///
/// * [`FRAMES_STREAM`] `frames`: **one row per `.traj` record**. Columns:
///   * `t_us` (`u64`, the time column, µs since the recorder started; null when
///     it is unknown, for the messages of a cut `.nanover.zip` found without their index, and
///     in the impossible case of a timestamp above `u64::MAX`), `frame_index` (`u32`; for
///     version-1 files the ordinal), `session` (`u32`: 0, then +1 at every reset after the
///     first frame, the same numbering as [`crate::split_sessions`] with
///     [`crate::SplitRule::FrameReset`], or `ResetOrCounterChange` with
///     [`NanoverRecording::with_counter_resets`]);
///   * one column per `values` key seen in the file, named by the key: numbers `f64`
///     (energies in kJ/mol, `system.simulation.time` in ps, counts, counters), booleans,
///     strings, and lists, structs or keys whose kind changes as JSON text;
///   * one column per `arrays` key seen in the file: **lists** (`Shape::Variable`) of `f32`
///     for float arrays (`particle.positions` is the flat list `x0, y0, z0, x1, ...` in nm,
///     likewise velocities and forces; `system.box.vectors` 9 values, rows are the box
///     vectors), of `u32` for index arrays (`particle.elements`, `particle.residues`,
///     `bond.pairs` flattened, ...); string arrays (`particle.names`, `residue.names`,
///     `residue.ids` as the Python server writes them) as JSON text (`["N","CA"]`), since
///     the generic model has no list of strings. A key whose arrays are float in some
///     records and index in others (not seen in practice) is JSON too. An empty array that a
///     writer stored with another type (NanoVer's websocket recorder stores an empty
///     `forces.user.sparse` as an index array) reads as an empty list of the column's type;
///   * `delta_keys` (last): the columns the record itself set, as a JSON array of column
///     names, with `[name, variant]` where an array's protobuf type differs from its
///     column's (`["forces.user.sparse","index"]`), and null for a record with no
///     `FrameData` at all. With it the rows give back the exact messages
///     ([`crate::NanoverWriter`]).
///
///   Every value and array comes from the **aggregated** frame after the record (deltas
///   merged key by key; `frame_index` 0 resets), so each row is complete: `particle.count`
///   and the topology arrays, which Python writes only in topology frames, are in every row
///   of their session, and a key is null only before it first appears in the session.
///   Column names are the keys; a key present in both maps, or named like a fixed column,
///   gets a `values.` or `arrays.` prefix. Every key column carries metadata
///   [`META_MAP`], [`META_KEY`] and [`META_TYPE`] (and `unit`, `layout`, `encoding`).
/// * [`STATE_STREAM`] `state`: one row per key changed by a state update: `t_us`, `key`,
///   `value` (JSON; `null` for a removal) and `removed`. These are the update's own changes,
///   not the merged state. An update that changes nothing gives one row with a null key.
///
/// The schema is declared before the first row, from a first pass over the `.traj` (or a
/// zip's messages) that reads only the keys and types of each record from the file and seeks
/// past its arrays, so it reads a few hundred bytes per record and decodes no array. Rows
/// come in timestamp order, a frame's row before a state update's at the same time.
///
/// ```
/// use recfmt_core::{ArrayValue, FrameBuf, ReadOptions, RecordingReader, Value};
/// use recfmt_nanover::{NanoverRecording, generate};
/// let (traj, state) = generate::small_recording_bytes()?;
/// let mut rec = NanoverRecording::from_bytes(Some(&traj), Some(&state), &ReadOptions::default())?;
/// let frames = rec.schema().stream_index("frames").unwrap();
/// let potential = rec.schema().streams[frames].signal_index("energy.potential").unwrap();
/// let positions = rec.schema().streams[frames].signal_index("particle.positions").unwrap();
/// let mut row = FrameBuf::default();
/// let mut energies = Vec::new();
/// while rec.read_frame(&mut row)? {
///     if row.stream == frames {
///         energies.push(row.values[potential].as_f64().unwrap());
///         let Value::Array(ArrayValue::F32(xyz)) = &row.values[positions] else { panic!() };
///         assert!(xyz.len() == 9 || xyz.len() == 12); // 3 or 4 particles
///     }
/// }
/// assert_eq!(energies.len(), 7);
/// assert_eq!(energies[1], -19.25);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct NanoverRecording<R> {
    source: Source<R>,
    header: Header,
    schema: Schema,
    frames_stream: Option<usize>,
    state_stream: Option<usize>,
    cols: FrameCols,
    view: FrameView,
    frames_seen: u64,
    session: u32,
    pending: Pending,
    own: Integrity,
    merged: Integrity,
    merged_key: (u64, u64, usize, usize, usize),
    total_bytes: Option<u64>,
    lost_resets: u64,
    undeclared: u64,
    done: bool,
    /// True once the first event has been read (a window may only be set before).
    started: bool,
    /// Where a time window may start reading (see `window.rs`).
    checkpoints: Option<Checkpoints>,
    /// The `.traj`/`.state` search of a time window, on sources that can seek.
    seek_files: Option<fn(&mut Self, u128) -> Result<bool>>,
}

impl NanoverRecording<BufReader<File>> {
    /// Opens a recording: a `.traj` or a `.state` together with its partner beside it (when
    /// there is one; see [`RecordingPaths::resolve`]), or a `.nanover.zip`.
    pub fn open(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Self> {
        Self::open_with(path, options, crate::VersionPolicy::Auto)
    }

    /// As [`NanoverRecording::open`], reading the `.traj`/`.state` files as `version`
    /// (for version-1 files that detection is not sure about).
    pub fn open_with(
        path: &Path,
        options: &ReadOptions,
        version: crate::VersionPolicy,
    ) -> recfmt_core::Result<Self> {
        use recfmt_core::ResultExt;
        if is_nanover_zip(path) {
            return Self::open_zip(path, options);
        }
        let mut paths = RecordingPaths::resolve(path);
        paths.version = version;
        let mut total = 0;
        let mut scan = Prescan::default();
        if let Some(p) = &paths.traj {
            // Unbuffered: the reader reads the keys in small pieces and seeks past arrays.
            let file = File::open(p).in_file(p)?;
            let len = file.metadata().in_file(p)?.len();
            let file = crate::skim::PositionedFile::new(file);
            let mut reader = Reader::new(file, FileKind::Trajectory).with_options(options);
            reader.set_strict(false);
            reader.set_total_len(Some(len));
            reader.set_version_policy(version);
            scan = prescan(reader, Some(Tracker::new(spacing_for(len)))).in_file(p)?;
        }
        for p in [&paths.traj, &paths.state].into_iter().flatten() {
            total += std::fs::metadata(p).in_file(p)?.len();
        }
        let timeline = Timeline::open(&paths, options)?;
        let mut metadata = Metadata::new();
        if let Some(p) = &paths.traj {
            metadata.insert("traj".into(), p.display().to_string());
        }
        if let Some(p) = &paths.state {
            metadata.insert("state".into(), p.display().to_string());
        }
        let mut rec =
            NanoverRecording::build(timeline, scan, metadata).map_err(|e| {
                match paths.traj.as_ref().or(paths.state.as_ref()) {
                    Some(p) => recfmt_core::Error::from(e).in_file(p),
                    None => e.into(),
                }
            })?;
        rec.total_bytes = Some(total);
        rec.seek_files = Some(Self::seek_files);
        Ok(rec)
    }
}

impl<'a> NanoverRecording<&'a [u8]> {
    /// Reads in-memory files (either may be absent).
    pub fn from_bytes(
        traj: Option<&'a [u8]>,
        state: Option<&'a [u8]>,
        options: &ReadOptions,
    ) -> Result<Self> {
        let reader = |b: &'a [u8], kind, strict| {
            let mut r = Reader::new(b, kind).with_options(options);
            r.set_strict(strict);
            r.set_total_len(Some(b.len() as u64));
            r
        };
        let scan = match traj {
            Some(b) => {
                let mut r = Reader::new(std::io::Cursor::new(b), FileKind::Trajectory)
                    .with_options(options);
                r.set_strict(false);
                r.set_total_len(Some(b.len() as u64));
                prescan(r, None)?
            }
            None => Prescan::default(),
        };
        let timeline = Timeline::new(
            traj.map(|b| reader(b, FileKind::Trajectory, options.strict)),
            state.map(|b| reader(b, FileKind::State, options.strict)),
        );
        let mut rec = NanoverRecording::build(timeline, scan, Metadata::new())?;
        rec.total_bytes =
            Some(traj.map_or(0, <[u8]>::len) as u64 + state.map_or(0, <[u8]>::len) as u64);
        Ok(rec)
    }
}

impl<R: Read> NanoverRecording<R> {
    fn build(mut timeline: Timeline<R, R>, scan: Prescan, metadata: Metadata) -> Result<Self> {
        let has_traj = timeline.traj().is_some();
        let has_state = timeline.state().is_some();
        let mut version = None;
        if let Some(t) = timeline.traj_mut() {
            version = Some(t.read_header()?);
        }
        if let Some(s) = timeline.state_mut() {
            let v = s.read_header()?;
            version.get_or_insert(v);
        }
        let version = version.unwrap_or(Version::V2).name();
        Ok(Self::assemble(
            Source::Files(Box::new(timeline)),
            scan,
            metadata,
            (has_traj, has_state),
            version,
        ))
    }

    fn assemble(
        source: Source<R>,
        mut scan: Prescan,
        mut metadata: Metadata,
        (has_traj, has_state): (bool, bool),
        version: &str,
    ) -> Self {
        let (schema, cols) = build_schema(&scan, has_traj, has_state);
        metadata.insert(
            "timestamp_unit".into(),
            "t_us: microseconds since the recorder started".into(),
        );
        metadata.insert(
            "units".into(),
            "nm, ps, kJ/mol, nm/ps, kJ/(mol nm); right-handed, Z up".into(),
        );
        if has_traj {
            metadata.insert("frames".into(), scan.frames.to_string());
            metadata.insert("resets".into(), scan.resets.to_string());
            metadata.insert("max_particles".into(), scan.max_particles.to_string());
        }
        let header = Header {
            format: crate::FORMAT_ID,
            version: version.to_string(),
            time: Some(TimeReference::new(TimeSystem::Met)),
            metadata,
        };
        let mut rec = NanoverRecording {
            frames_stream: schema.stream_index(FRAMES_STREAM),
            state_stream: schema.stream_index(STATE_STREAM),
            source,
            header,
            schema,
            cols,
            view: FrameView::new(),
            frames_seen: 0,
            session: 0,
            pending: Pending::default(),
            own: Integrity::default(),
            merged: Integrity::default(),
            merged_key: (0, 0, 0, 0, 0),
            total_bytes: None,
            lost_resets: 0,
            undeclared: 0,
            done: false,
            started: false,
            checkpoints: scan.checkpoints.take(),
            seek_files: None,
        };
        rec.refresh_integrity();
        rec
    }

    /// Also reset the aggregated frame (and count a new session) where
    /// `system.simulation.counter` changes on a frame whose index is not 0 (off by default,
    /// like NanoVer's readers; a warning names such frames). Call before reading.
    pub fn with_counter_resets(mut self, enabled: bool) -> Self {
        self.view = FrameView::new().with_counter_resets(enabled);
        self
    }

    /// The merged timeline underneath (`None` for a `.nanover.zip`).
    pub fn timeline(&self) -> Option<&Timeline<R, R>> {
        match &self.source {
            Source::Files(t) => Some(t),
            Source::Events(..) => None,
        }
    }

    fn refresh_integrity(&mut self) {
        let (t, s) = match &self.source {
            Source::Files(tl) => (
                tl.traj().map(Reader::integrity),
                tl.state().map(Reader::integrity),
            ),
            Source::Events(events) => (Some(events.integrity()), None),
        };
        let sig = |i: Option<&Integrity>| {
            i.map_or((0, 0, 0), |i| {
                (i.bytes_lost, i.records_skipped, i.warnings.len())
            })
        };
        let (tl, ts, tw) = sig(t);
        let (sl, ss, sw) = sig(s);
        let key = (tl + sl, ts + ss, tw, sw, self.own.warnings.len());
        if key == self.merged_key {
            return;
        }
        self.merged_key = key;
        let mut m = Integrity::default();
        for i in [t, s, Some(&self.own)].into_iter().flatten() {
            m.bytes_lost += i.bytes_lost;
            m.records_skipped += i.records_skipped;
            m.truncated_at = m.truncated_at.or(i.truncated_at);
            m.status = match (m.status, i.status) {
                (IntegrityStatus::Corrupt, _) | (_, IntegrityStatus::Corrupt) => {
                    IntegrityStatus::Corrupt
                }
                (IntegrityStatus::Truncated, _) | (_, IntegrityStatus::Truncated) => {
                    IntegrityStatus::Truncated
                }
                _ => IntegrityStatus::Complete,
            };
            for w in &i.warnings {
                m.warn(w.clone());
            }
        }
        self.merged = m;
    }

    fn start_event(&mut self, event: Event, time_known: bool) {
        let p = &mut self.pending;
        p.timestamp = time_known.then_some(event.timestamp);
        p.frame_row = false;
        p.delta = None;
        p.state_rows.clear();
        p.next_state = 0;
        if let Some(frame) = event.frame {
            self.start_frame(frame);
        }
        if let Some(update) = event.state {
            self.start_state(&update);
        }
    }

    fn undeclared(&mut self, key: &str) {
        self.undeclared += 1;
        if self.undeclared == 1 {
            self.own.warn(format!(
                "frame {}: key {key:?} was not seen by the first pass and has no column (further ones not reported)",
                self.frames_seen
            ));
        }
    }

    /// Applies a frame record to the aggregated view (moved in: its arrays are not copied)
    /// and prepares its row.
    fn start_frame(&mut self, msg: GetFrameResponse) {
        if msg.frame_index != 0 && self.view.counter_changes(&msg) {
            self.lost_resets += 1;
            if self.lost_resets == 1 {
                self.own.warn(format!(
                    "frame {} (frame_index {}): {SIMULATION_COUNTER} changes without a reset; use counter resets to split there (further ones not reported)",
                    self.frames_seen, msg.frame_index
                ));
            }
        }
        // The delta keys are read before the record moves into the view.
        let mut delta = None;
        let mut missing = Vec::new();
        if let Some(frame) = &msg.frame {
            let stream = self.frames_stream.map(|s| &self.schema.streams[s]);
            let name = |at: usize| stream.map_or("", |s| s.signals[at].name.as_str());
            let mut entries = Vec::with_capacity(frame.values.len() + frame.arrays.len());
            for k in frame.values.keys() {
                match self.cols.value_of.get(k) {
                    Some(&i) => entries.push(serde_json::Value::from(name(self.cols.values[i].at))),
                    None => missing.push(k.clone()),
                }
            }
            for (k, a) in &frame.arrays {
                match self.cols.array_of.get(k) {
                    Some(&i) => {
                        let col = &mut self.cols.arrays[i];
                        col.json = None;
                        let v = Variant::of(a);
                        let n = serde_json::Value::from(name(col.at));
                        entries.push(if v == col.kind.natural() {
                            n
                        } else {
                            serde_json::Value::Array(vec![n, v.name().into()])
                        });
                    }
                    None => missing.push(k.clone()),
                }
            }
            delta = Some(serde_json::Value::Array(entries).to_string());
        }
        let frame_index = msg.frame_index;
        let reset = self.view.apply_owned(msg);
        if reset && self.frames_seen > 0 {
            self.session = self.session.saturating_add(1);
        }
        self.frames_seen += 1;
        if reset {
            for c in &mut self.cols.arrays {
                c.json = None;
            }
        }
        for k in missing {
            self.undeclared(&k);
        }
        let p = &mut self.pending;
        p.frame_row = self.frames_stream.is_some();
        p.frame_index = frame_index;
        p.delta = delta;
    }

    fn start_state(&mut self, update: &StateUpdate) {
        if self.state_stream.is_none() {
            return;
        }
        let rows = &mut self.pending.state_rows;
        match &update.changed_keys {
            None => rows.push((None, None, false)),
            Some(s) if s.fields.is_empty() => rows.push((None, Some("{}".into()), false)),
            Some(s) => {
                for (k, v) in &s.fields {
                    rows.push((Some(k.clone()), Some(value_to_json_text(v)), is_null(v)));
                }
            }
        }
    }

    /// Writes the pending frame row: the time, index and session, every `values` and
    /// `arrays` column of the aggregated frame, then `delta_keys`. Float and index arrays are
    /// pushed as slices of the decoded protobuf arrays; a column a projection left out is
    /// skipped without being built (no JSON text made for it).
    fn write_frame_row(&mut self, row: &mut RowWriter<'_>) -> recfmt_core::Result<()> {
        push_time(self.pending.timestamp, row)?;
        push_kept(row, |row| row.push(self.pending.frame_index))?;
        push_kept(row, |row| row.push(self.session))?;
        for col in &self.cols.values {
            if !row.wants_next() {
                row.skip()?;
                continue;
            }
            let v = self.view.values.get(&col.key);
            match (col.kind, v.and_then(|v| v.kind.as_ref())) {
                (_, None | Some(Kind::NullValue(_))) => row.push_null()?,
                (ScalarKind::Number, Some(Kind::NumberValue(n))) => row.push(*n)?,
                (ScalarKind::Bool, Some(Kind::BoolValue(b))) => row.push(*b)?,
                (ScalarKind::Text, Some(Kind::StringValue(s))) => row.push_str(s)?,
                (ScalarKind::Json, Some(_)) => match v {
                    Some(v) => row.push_str(&value_to_json_text(v))?,
                    None => row.push_null()?,
                },
                // A kind the first pass did not see for this key (the files changed between
                // the passes): nothing faithful to put here.
                _ => row.push_null()?,
            }
        }
        for col in &mut self.cols.arrays {
            if !row.wants_next() {
                row.skip()?;
                continue;
            }
            let Some(a) = self.view.arrays.get(&col.key) else {
                row.push_null()?;
                continue;
            };
            match (col.kind, &a.values) {
                (ArrayKind::Float, Some(Values::FloatValues(f))) => row.push_slice(&f.values)?,
                (ArrayKind::Index, Some(Values::IndexValues(i))) => row.push_slice(&i.values)?,
                // Arrays of the other protobuf type (in practice only empty ones, which
                // writers store with either type): converted element by element.
                (ArrayKind::Float, Some(Values::IndexValues(i))) => {
                    let v: Vec<f32> = i.values.iter().map(|&x| x as f32).collect();
                    row.push_slice(&v)?;
                }
                (ArrayKind::Index, Some(Values::FloatValues(f))) => {
                    // As unsigned 64-bit values: the column refuses one past u32.
                    let v = f.values.iter().map(|&x| x as u64).collect();
                    row.push_value(&Cell::Array(ArrayValue::UInt(v)))?;
                }
                (ArrayKind::Float, _) => row.push_slice::<f32>(&[])?,
                (ArrayKind::Index, _) => row.push_slice::<u32>(&[])?,
                (ArrayKind::Json, _) => {
                    let text = col.json.get_or_insert_with(|| array_to_json_text(a));
                    row.push_str(text)?;
                }
            }
        }
        match &self.pending.delta {
            _ if !row.wants_next() => row.skip(),
            Some(d) => row.push_str(d),
            None => row.push_null(),
        }
    }

    /// Writes state row `at` of the pending update: time, key, value (JSON), removed.
    fn write_state_row(&self, at: usize, row: &mut RowWriter<'_>) -> recfmt_core::Result<()> {
        push_time(self.pending.timestamp, row)?;
        let (key, json, removed) = &self.pending.state_rows[at];
        for text in [key, json] {
            push_kept(row, |row| match text {
                Some(t) => row.push_str(t),
                None => row.push_null(),
            })?;
        }
        push_kept(row, |row| row.push(*removed))
    }

    /// Reads the next event into [`Pending`]; false once the recording has ended (the
    /// end-of-recording warnings then added). Shared by the row and the batch path, so both
    /// see the same events, sessions and integrity report.
    fn advance(&mut self) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        self.started = true;
        let (event, time_known) = match &mut self.source {
            Source::Files(t) => (t.next_event(), true),
            Source::Events(events) => {
                let event = events.next_event();
                (event, events.time_known())
            }
        };
        self.refresh_integrity();
        match event? {
            Some(e) => {
                self.start_event(e, time_known);
                Ok(true)
            }
            None => {
                self.done = true;
                if self.lost_resets > 1 {
                    self.own.warn(format!(
                        "{} frames change {SIMULATION_COUNTER} without a reset",
                        self.lost_resets
                    ));
                }
                if self.undeclared > 1 {
                    self.own
                        .warn(format!("{} keys of frames had no column", self.undeclared));
                }
                self.refresh_integrity();
                Ok(false)
            }
        }
    }
}

/// Pushes a row's time (µs, null when unknown or past `u64`), or skips it when a projection
/// left it out.
fn push_time(timestamp: Option<u128>, row: &mut RowWriter<'_>) -> recfmt_core::Result<()> {
    push_kept(row, |row| {
        match timestamp.and_then(|t| u64::try_from(t).ok()) {
            Some(t) => row.push(t),
            None => row.push_null(),
        }
    })
}

/// Pushes the next value with `push`, or skips it when a projection left it out.
#[inline]
fn push_kept(
    row: &mut RowWriter<'_>,
    push: impl FnOnce(&mut RowWriter<'_>) -> recfmt_core::Result<()>,
) -> recfmt_core::Result<()> {
    if row.wants_next() {
        push(row)
    } else {
        row.skip()
    }
}

impl<R: Read + Send> RecordingReader for NanoverRecording<R> {
    fn format(&self) -> &'static FormatInfo {
        &INFO
    }

    fn header(&self) -> &Header {
        &self.header
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The pending frame row, then the pending state rows, then the next event; rows of
    /// unwanted streams are consumed without being built.
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> recfmt_core::Result<bool> {
        loop {
            if self.pending.frame_row {
                self.pending.frame_row = false;
                if let Some(s) = self.frames_stream {
                    if row.begin(s)? {
                        self.write_frame_row(row)?;
                        row.finish()?;
                    }
                    return Ok(true);
                }
            }
            if self.pending.next_state < self.pending.state_rows.len()
                && let Some(s) = self.state_stream
            {
                let at = self.pending.next_state;
                self.pending.next_state += 1;
                if row.begin(s)? {
                    self.write_state_row(at, row)?;
                    row.finish()?;
                }
                return Ok(true);
            }
            if !self.advance()? {
                return Ok(false);
            }
        }
    }

    fn integrity(&self) -> &Integrity {
        &self.merged
    }

    fn progress(&self) -> (u64, Option<u64>) {
        match &self.source {
            Source::Files(tl) => {
                let t = tl.traj().map_or(0, Reader::position);
                let s = tl.state().map_or(0, Reader::position);
                (t + s, self.total_bytes)
            }
            Source::Events(events) if events.remaining() == 0 => {
                (self.total_bytes.unwrap_or(0), self.total_bytes)
            }
            Source::Events(events) => (events.read_to(), self.total_bytes),
        }
    }

    /// Continues the `.traj` (or a zip's events) from the last checkpoint of the first pass
    /// before `seconds`, with the aggregated frame rebuilt there, and searches the `.state`
    /// by its record times (see `recording/window.rs` and `docs/formats/nanover.md`). Rows
    /// equal a full read's; with counter resets on, or for version-1 files, the `.traj` is
    /// read from the start. Only valid before the first row.
    fn seek_time(&mut self, seconds: f64) -> recfmt_core::Result<bool> {
        Ok(self.window_start(seconds)?)
    }

    /// Ends the events at the first one at or after `seconds`, assuming the records in time
    /// order as NanoVer writes them. Only valid before the first row.
    fn stop_time(&mut self, seconds: f64) -> bool {
        self.window_end(seconds)
    }
}
