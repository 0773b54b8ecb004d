//! The adapter from NanoVer recordings to the generic recfmt model.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use recfmt_core::{
    DType, FormatInfo, FrameBuf, Header, Integrity, IntegrityStatus, Metadata, ReadOptions,
    RecordingReader, Schema, Shape, SignalDesc, StreamDesc, TimeBase, TimeReference, TimeSystem,
    Value as Cell,
};

use crate::aggregate::{FrameView, SIMULATION_COUNTER};
use crate::error::Result;
use crate::header::{FileKind, Version};
use crate::io::Reader;
use crate::json::value_to_json;
use crate::proto::{GetFrameResponse, Kind, StateUpdate, Value, ValueArray, Values, is_null};
use crate::timeline::{Event, RecordingPaths, Timeline, open_file};

/// Name of the stream with one row per frame record.
pub const FRAMES_STREAM: &str = "frames";
/// Name of the entity-keyed stream with one row per particle per frame record that carries
/// positions.
pub const PARTICLES_STREAM: &str = "particles";
/// Name of the stream with one row per key changed by a state update.
pub const STATE_STREAM: &str = "state";

/// Static facts about NanoVer recordings.
pub static INFO: FormatInfo = FormatInfo {
    id: crate::FORMAT_ID,
    name: "NanoVer recording (.traj/.state, protobuf)",
    extensions: &["traj", "state"],
};

/// How a `values` key is typed in the frames stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ScalarKind {
    Number,
    Bool,
    Text,
    /// Lists, structs, or a key whose kind changes: the JSON text.
    Json,
}

impl ScalarKind {
    fn of(v: &Value) -> Option<ScalarKind> {
        match v.kind {
            Some(Kind::NumberValue(_)) => Some(ScalarKind::Number),
            Some(Kind::BoolValue(_)) => Some(ScalarKind::Bool),
            Some(Kind::StringValue(_)) => Some(ScalarKind::Text),
            Some(Kind::ListValue(_) | Kind::StructValue(_)) => Some(ScalarKind::Json),
            None | Some(Kind::NullValue(_)) => None,
        }
    }

    fn dtype(self) -> DType {
        match self {
            ScalarKind::Number => DType::F64,
            ScalarKind::Bool => DType::Bool,
            ScalarKind::Text | ScalarKind::Json => DType::Str,
        }
    }
}

/// A per-particle array of a key that this adapter has no fixed column for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExtraKind {
    Float3,
    Float,
    Index,
    Text,
}

/// What a first pass over the `.traj` found: which columns the streams need.
#[derive(Debug, Default)]
struct Prescan {
    values: BTreeMap<String, Option<ScalarKind>>,
    has_box: bool,
    arrays: BTreeMap<String, &'static str>,
    extra: BTreeMap<String, ExtraKind>,
    frames: u64,
    resets: u64,
    max_particles: usize,
}

const KNOWN_PARTICLE_ARRAYS: [&str; 7] = [
    "particle.positions",
    "particle.velocities",
    "particle.forces",
    "particle.forces.system",
    "particle.elements",
    "particle.names",
    "particle.residues",
];

impl Prescan {
    fn add(&mut self, msg: &GetFrameResponse, n: &mut usize) {
        self.frames += 1;
        if msg.frame_index == 0 {
            self.resets += 1;
        }
        let Some(frame) = &msg.frame else { return };
        for (k, v) in &frame.values {
            let seen = self.values.entry(k.clone()).or_insert(None);
            if let Some(kind) = ScalarKind::of(v) {
                *seen = match *seen {
                    None => Some(kind),
                    Some(old) if old == kind => Some(old),
                    Some(_) => Some(ScalarKind::Json),
                };
            }
        }
        if let Some(p) = frame.arrays.get("particle.positions") {
            *n = p.len() / 3;
            self.max_particles = self.max_particles.max(*n);
        }
        let n = *n;
        for (k, a) in &frame.arrays {
            self.arrays.entry(k.clone()).or_insert(a.kind_name());
            if k == "system.box.vectors" {
                self.has_box = true;
            }
            if k.starts_with("particle.")
                && !KNOWN_PARTICLE_ARRAYS.contains(&k.as_str())
                && !self.extra.contains_key(k)
                && n > 0
            {
                let kind = match &a.values {
                    Some(Values::FloatValues(f)) if f.values.len() == 3 * n => {
                        Some(ExtraKind::Float3)
                    }
                    Some(Values::FloatValues(f)) if f.values.len() == n => Some(ExtraKind::Float),
                    Some(Values::IndexValues(f)) if f.values.len() == n => Some(ExtraKind::Index),
                    Some(Values::StringValues(f)) if f.values.len() == n => Some(ExtraKind::Text),
                    _ => None,
                };
                if let Some(kind) = kind {
                    self.extra.insert(k.clone(), kind);
                }
            }
        }
    }
}

fn prescan<R: Read>(mut reader: Reader<R>) -> Result<Prescan> {
    let mut scan = Prescan::default();
    let mut n = 0usize;
    while let Some((_, msg)) = reader.read_frame()? {
        scan.add(&msg, &mut n);
    }
    Ok(scan)
}

fn unit_of(key: &str) -> Option<&'static str> {
    Some(match key {
        "system.simulation.time" => "ps",
        "system.temperature" => "K",
        "server.timestamp" => "s",
        k if k.starts_with("energy.") || k == "forces.user.work_done" => "kJ/mol",
        _ => return None,
    })
}

/// Which per-particle columns exist, by signal index in the particles stream.
#[derive(Debug, Default, Clone)]
struct ParticleCols {
    pos: usize,
    vel: Option<usize>,
    force: Option<usize>,
    force_system: Option<usize>,
    force_user: Option<usize>,
    element: Option<usize>,
    name: Option<usize>,
    residue: Option<usize>,
    residue_name: Option<usize>,
    residue_id: Option<usize>,
    chain: Option<usize>,
    chain_name: Option<usize>,
    extra: Vec<(String, ExtraKind, usize)>,
}

/// A frame-stream column fed from `values`.
#[derive(Debug, Clone)]
struct ValueCol {
    key: String,
    kind: ScalarKind,
}

fn time_signals() -> [SignalDesc; 2] {
    [
        SignalDesc::scalar("t", DType::F64).with_unit("s"),
        SignalDesc::scalar("timestamp_us", DType::U64).with_unit("us"),
    ]
}

fn build_schema(
    scan: &Prescan,
    has_traj: bool,
    has_state: bool,
) -> (Schema, Vec<ValueCol>, usize, ParticleCols) {
    let mut schema = Schema::default();
    let mut value_cols = Vec::new();
    let mut box_col = 0;
    let mut pc = ParticleCols::default();
    if has_traj {
        let [t, ts] = time_signals();
        let mut frames = StreamDesc::new(FRAMES_STREAM, t, TimeBase::SECONDS);
        frames.signals.push(ts);
        frames
            .signals
            .push(SignalDesc::scalar("frame_index", DType::U32));
        frames
            .signals
            .push(SignalDesc::scalar("session", DType::U32));
        frames
            .signals
            .push(SignalDesc::scalar("reset", DType::Bool));
        if scan.has_box {
            box_col = frames.signals.len();
            frames.signals.push(
                SignalDesc::scalar("system.box.vectors", DType::F32)
                    .with_shape(Shape::Fixed(vec![3, 3]))
                    .with_unit("nm"),
            );
        }
        for (key, kind) in &scan.values {
            let kind = kind.unwrap_or(ScalarKind::Json);
            let mut s = SignalDesc::scalar(key.clone(), kind.dtype());
            if kind == ScalarKind::Number
                && let Some(u) = unit_of(key)
            {
                s = s.with_unit(u);
            }
            if kind == ScalarKind::Json {
                s.metadata.insert("encoding".into(), "json".into());
            }
            frames.signals.push(s);
            value_cols.push(ValueCol {
                key: key.clone(),
                kind,
            });
        }
        frames.metadata.insert(
            "values".into(),
            "aggregated frame after applying the record (deltas merged key by key, reset on frame_index 0)".into(),
        );
        schema.streams.push(frames);

        let [t, ts] = time_signals();
        let mut p = StreamDesc::new(PARTICLES_STREAM, t, TimeBase::SECONDS);
        p.signals.push(ts);
        p.signals
            .push(SignalDesc::scalar("frame_index", DType::U32));
        p.entity = Some(p.signals.len());
        p.signals.push(SignalDesc::scalar("particle", DType::U32));
        let vec3 = |p: &mut StreamDesc, names: [&str; 3], unit: &str| {
            let at = p.signals.len();
            for n in names {
                p.signals
                    .push(SignalDesc::scalar(n, DType::F32).with_unit(unit));
            }
            at
        };
        pc.pos = vec3(&mut p, ["x", "y", "z"], "nm");
        let has = |k: &str| scan.arrays.contains_key(k);
        if has("particle.velocities") {
            pc.vel = Some(vec3(&mut p, ["vx", "vy", "vz"], "nm/ps"));
        }
        if has("particle.forces") {
            pc.force = Some(vec3(&mut p, ["fx", "fy", "fz"], "kJ/(mol nm)"));
        }
        if has("particle.forces.system") {
            pc.force_system = Some(vec3(
                &mut p,
                ["fx_system", "fy_system", "fz_system"],
                "kJ/(mol nm)",
            ));
        }
        if has("forces.user.sparse") {
            pc.force_user = Some(vec3(
                &mut p,
                ["fx_user", "fy_user", "fz_user"],
                "kJ/(mol nm)",
            ));
        }
        let col = |p: &mut StreamDesc, present: bool, name: &str, dtype: DType| {
            present.then(|| {
                p.signals.push(SignalDesc::scalar(name, dtype));
                p.signals.len() - 1
            })
        };
        pc.element = col(&mut p, has("particle.elements"), "element", DType::U32);
        pc.name = col(&mut p, has("particle.names"), "name", DType::Str);
        let residues = has("particle.residues");
        pc.residue = col(&mut p, residues, "residue", DType::U32);
        pc.residue_name = col(
            &mut p,
            residues && has("residue.names"),
            "residue_name",
            DType::Str,
        );
        pc.residue_id = col(
            &mut p,
            residues && has("residue.ids"),
            "residue_id",
            DType::Str,
        );
        let chains = residues && has("residue.chains");
        pc.chain = col(&mut p, chains, "chain", DType::U32);
        pc.chain_name = col(
            &mut p,
            chains && has("chain.names"),
            "chain_name",
            DType::Str,
        );
        for (key, kind) in &scan.extra {
            let base = key.trim_start_matches("particle.");
            let at = match kind {
                ExtraKind::Float3 => {
                    let names = [
                        format!("{base}_x"),
                        format!("{base}_y"),
                        format!("{base}_z"),
                    ];
                    let at = p.signals.len();
                    for n in names {
                        p.signals.push(SignalDesc::scalar(n, DType::F32));
                    }
                    at
                }
                ExtraKind::Float => col(&mut p, true, base, DType::F32).unwrap_or_default(),
                ExtraKind::Index => col(&mut p, true, base, DType::U32).unwrap_or_default(),
                ExtraKind::Text => col(&mut p, true, base, DType::Str).unwrap_or_default(),
            };
            pc.extra.push((key.clone(), *kind, at));
        }
        p.metadata.insert(
            "rows".into(),
            "one per particle for each frame record that carries particle.positions; other arrays from the aggregated frame".into(),
        );
        schema.streams.push(p);
    }
    if has_state {
        let [t, ts] = time_signals();
        let mut s = StreamDesc::new(STATE_STREAM, t, TimeBase::SECONDS);
        s.signals.push(ts);
        s.signals.push(SignalDesc::scalar("key", DType::Str));
        let mut value = SignalDesc::scalar("value", DType::Str);
        value.metadata.insert("encoding".into(), "json".into());
        s.signals.push(value);
        s.signals.push(SignalDesc::scalar("removed", DType::Bool));
        schema.streams.push(s);
    }
    (schema, value_cols, box_col, pc)
}

/// Where events come from.
#[derive(Debug)]
enum Source<R> {
    /// A `.traj` and/or `.state` read as they go.
    Files(Box<Timeline<R, R>>),
    /// Events already decoded (a `.nanover.zip`), with what was lost decoding them.
    #[cfg_attr(not(feature = "nanover-zip"), allow(dead_code))]
    Events(std::vec::IntoIter<Event>, Integrity),
}

/// Rows still to emit for the current event.
#[derive(Debug, Default)]
struct Pending {
    timestamp: u128,
    frame_row: bool,
    frame_index: u32,
    reset: bool,
    particles: usize,
    next_particle: usize,
    user_forces: Vec<f32>,
    state_rows: Vec<(String, String, bool)>,
    next_state: usize,
}

/// A NanoVer recording read as generic streams.
///
/// Streams, in this order (the first two only with a `.traj`, the last only with a `.state`):
///
/// * [`FRAMES_STREAM`] `frames`: one row per frame record. Columns `t` (seconds, `f64`),
///   `timestamp_us` (the record's `u128` timestamp: microseconds since the recorder
///   started, as `u64`), `frame_index`, `session` (counts resets), `reset`, then
///   `system.box.vectors` (3×3 `f32`, nm) when present, then one column per key of
///   `values` seen in the file, named by the key: numbers as `f64` (energies in kJ/mol,
///   `system.simulation.time` in ps, ...), booleans, strings, and lists/structs as JSON text.
///   Values come from the **aggregated** frame after the record, so keys that Python writes
///   only in topology frames (`particle.count`) are filled in every row.
/// * [`PARTICLES_STREAM`] `particles` (entity-keyed on `particle`): one row per particle for
///   each frame record that carries `particle.positions`. Columns `t`, `timestamp_us`,
///   `frame_index`, `particle`, `x y z` (nm, `f32`), and when present in the file
///   `vx vy vz` (nm/ps), `fx fy fz` (`particle.forces`), `fx_system ...`
///   (`particle.forces.system`), `fx_user ...` (the sparse iMD force made dense: 0 for
///   particles without one), `element`, `name`, `residue`, `residue_name`, `residue_id`
///   (text whether the file stores strings or floats), `chain`, `chain_name`, and other
///   `particle.*` arrays of one or three values per particle. Everything but positions comes
///   from the aggregated frame.
/// * [`STATE_STREAM`] `state`: one row per key changed by a state update: `t`,
///   `timestamp_us`, `key`, `value` (JSON; `null` for a removal) and `removed`.
///
/// Rows come in timestamp order, a frame's rows before a state update's at the same time.
///
/// ```
/// use recfmt_core::{FrameBuf, ReadOptions, RecordingReader, Value};
/// use recfmt_nanover::{NanoverRecording, generate};
/// let (traj, state) = generate::small_recording_bytes()?;
/// let mut rec = NanoverRecording::from_bytes(Some(&traj), Some(&state), &ReadOptions::default())?;
/// let frames = rec.schema().stream_index("frames").unwrap();
/// let potential = rec.schema().streams[frames].signal_index("energy.potential").unwrap();
/// let mut row = FrameBuf::default();
/// let mut energies = Vec::new();
/// while rec.read_frame(&mut row)? {
///     if row.stream == frames {
///         energies.push(row.values[potential].as_f64().unwrap());
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
    particles_stream: Option<usize>,
    state_stream: Option<usize>,
    value_cols: Vec<ValueCol>,
    box_col: usize,
    pc: ParticleCols,
    view: FrameView,
    frames_seen: u64,
    session: u32,
    pending: Pending,
    own: Integrity,
    merged: Integrity,
    merged_key: (u64, u64, usize, usize, usize),
    total_bytes: Option<u64>,
    lost_resets: u64,
    done: bool,
}

impl NanoverRecording<BufReader<File>> {
    /// Opens a recording: a `.traj` (with the `.state` beside it, when there is one) or a
    /// `.state` alone.
    pub fn open(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Self> {
        use recfmt_core::ResultExt;
        if is_nanover_zip(path) {
            return Self::open_zip(path, options);
        }
        let paths = RecordingPaths::resolve(path);
        let mut total = 0;
        let mut scan = Prescan::default();
        if let Some(p) = &paths.traj {
            let lenient = ReadOptions {
                strict: false,
                ..options.clone()
            };
            let reader = open_file(p, FileKind::Trajectory, &lenient).in_file(p)?;
            scan = prescan(reader).in_file(p)?;
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
        Ok(rec)
    }
}

impl NanoverRecording<BufReader<File>> {
    #[cfg(feature = "nanover-zip")]
    fn open_zip(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Self> {
        use recfmt_core::ResultExt;
        let file = File::open(path).in_file(path)?;
        let len = file.metadata().in_file(path)?.len();
        let mut rec = Self::from_zip(BufReader::new(file), options).in_file(path)?;
        rec.header
            .metadata
            .insert("zip".into(), path.display().to_string());
        rec.total_bytes = Some(len);
        Ok(rec)
    }

    #[cfg(not(feature = "nanover-zip"))]
    fn open_zip(path: &Path, _options: &ReadOptions) -> recfmt_core::Result<Self> {
        Err(recfmt_core::Error::unsupported(
            crate::FORMAT_ID,
            ".nanover.zip (build recfmt-nanover with the `nanover-zip` feature)",
        )
        .in_file(path))
    }
}

/// True when a path looks like a `.nanover.zip`: a `.zip` name, or a zip whose first entry is
/// one of its two files.
pub fn is_nanover_zip(path: &Path) -> bool {
    if path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.to_ascii_lowercase().ends_with(".zip"))
    {
        return true;
    }
    let mut head = Vec::with_capacity(64);
    File::open(path)
        .and_then(|f| f.take(64).read_to_end(&mut head))
        .is_ok_and(|_| zip_head_is_nanover(&head))
}

/// True when the first bytes are a zip local file header for `index.msgpack` or
/// `messages.msgpack`.
pub fn zip_head_is_nanover(head: &[u8]) -> bool {
    if head.len() < 30 || !head.starts_with(b"PK\x03\x04") {
        return false;
    }
    let name_len = usize::from(u16::from_le_bytes([head[26], head[27]]));
    head.get(30..30 + name_len)
        .is_some_and(|n| n == b"index.msgpack" || n == b"messages.msgpack")
}

impl<R: Read + std::io::Seek> NanoverRecording<R> {
    /// Reads a `.nanover.zip` (NanoVer's format since October 2025; see [`crate::nzip`]).
    /// The messages are decoded into memory, then served as the same streams as a `.traj`
    /// and `.state`.
    #[cfg(feature = "nanover-zip")]
    pub fn from_zip(source: R, options: &ReadOptions) -> Result<Self> {
        let (events, integrity) = crate::nzip::read_nanover_zip(source, &options.limits)?;
        if options.strict && integrity.lost_data() {
            return Err(crate::Error::Core(recfmt_core::Error::malformed(
                crate::FORMAT_ID,
                integrity.truncated_at.unwrap_or(0),
                format!("an intact .nanover.zip ({})", integrity.warnings.join("; ")),
            )));
        }
        let mut scan = Prescan::default();
        let mut n = 0;
        let mut has_state = false;
        for e in &events {
            if let Some(f) = &e.frame {
                scan.add(f, &mut n);
            }
            has_state |= e.state.is_some();
        }
        let has_traj = scan.frames > 0 || !has_state;
        let mut metadata = Metadata::new();
        metadata.insert("container".into(), "nanover.zip".into());
        Ok(Self::assemble(
            Source::Events(events.into_iter(), integrity),
            scan,
            metadata,
            (has_traj, has_state),
            "nanover.zip",
        ))
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
            Some(b) => prescan(reader(b, FileKind::Trajectory, false))?,
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
        scan: Prescan,
        mut metadata: Metadata,
        (has_traj, has_state): (bool, bool),
        version: &str,
    ) -> Self {
        let (schema, value_cols, box_col, pc) = build_schema(&scan, has_traj, has_state);
        metadata.insert(
            "timestamp_unit".into(),
            "us since the recorder started (t = timestamp_us / 1e6 s)".into(),
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
            time: Some(TimeReference {
                system: TimeSystem::Met,
                epoch: None,
            }),
            metadata,
        };
        let mut rec = NanoverRecording {
            frames_stream: schema.stream_index(FRAMES_STREAM),
            particles_stream: schema.stream_index(PARTICLES_STREAM),
            state_stream: schema.stream_index(STATE_STREAM),
            source,
            header,
            schema,
            value_cols,
            box_col,
            pc,
            view: FrameView::new(),
            frames_seen: 0,
            session: 0,
            pending: Pending::default(),
            own: Integrity::default(),
            merged: Integrity::default(),
            merged_key: (0, 0, 0, 0, 0),
            total_bytes: None,
            lost_resets: 0,
            done: false,
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
            Source::Events(_, i) => (Some(i), None),
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

    fn start_event(&mut self, event: Event) {
        let p = &mut self.pending;
        p.timestamp = event.timestamp;
        p.frame_row = false;
        p.particles = 0;
        p.next_particle = 0;
        p.state_rows.clear();
        p.next_state = 0;
        if let Some(frame) = event.frame {
            self.start_frame(&frame);
        }
        if let Some(update) = event.state {
            self.start_state(&update);
        }
    }

    fn start_frame(&mut self, msg: &GetFrameResponse) {
        if msg.frame_index != 0 && self.view.counter_changes(msg) {
            self.lost_resets += 1;
            if self.lost_resets == 1 {
                self.own.warn(format!(
                    "frame {} (frame_index {}): {SIMULATION_COUNTER} changes without a reset; use counter resets to split there (further ones not reported)",
                    self.frames_seen, msg.frame_index
                ));
            }
        }
        let reset = self.view.apply(msg);
        if reset && self.frames_seen > 0 {
            self.session = self.session.saturating_add(1);
        }
        self.frames_seen += 1;
        let p = &mut self.pending;
        p.frame_row = self.frames_stream.is_some();
        p.frame_index = msg.frame_index;
        p.reset = reset;
        let has_positions = msg
            .frame
            .as_ref()
            .is_some_and(|f| f.arrays.contains_key("particle.positions"));
        if has_positions && self.particles_stream.is_some() {
            let n = self
                .view
                .arrays
                .get("particle.positions")
                .and_then(ValueArray::as_floats)
                .map_or(0, |p| p.len() / 3);
            p.particles = n;
            if self.pc.force_user.is_some() {
                p.user_forces.clear();
                p.user_forces.resize(3 * n, 0.0);
                let index = self
                    .view
                    .arrays
                    .get("forces.user.index")
                    .and_then(ValueArray::as_indices);
                let sparse = self
                    .view
                    .arrays
                    .get("forces.user.sparse")
                    .and_then(ValueArray::as_floats);
                if let (Some(index), Some(sparse)) = (index, sparse) {
                    for (j, &i) in index.iter().enumerate() {
                        let i = i as usize;
                        if i < n && 3 * j + 3 <= sparse.len() {
                            p.user_forces[3 * i..3 * i + 3]
                                .copy_from_slice(&sparse[3 * j..3 * j + 3]);
                        }
                    }
                }
            }
        }
    }

    fn start_state(&mut self, update: &StateUpdate) {
        if self.state_stream.is_none() {
            return;
        }
        for (k, v) in update.changes() {
            self.pending
                .state_rows
                .push((k.clone(), value_to_json(v).to_string(), is_null(v)));
        }
    }

    fn time_cells(&self, dst: &mut FrameBuf) {
        let t = self.pending.timestamp;
        dst.values[0] = Cell::Float(t as f64 / 1e6);
        dst.values[1] = u64::try_from(t).map_or(Cell::Null, Cell::UInt);
    }

    fn emit_frame_row(&mut self, stream: usize, dst: &mut FrameBuf) {
        dst.reset(stream, self.schema.streams[stream].signals.len());
        self.time_cells(dst);
        dst.values[2] = Cell::UInt(u64::from(self.pending.frame_index));
        dst.values[3] = Cell::UInt(u64::from(self.session));
        dst.values[4] = Cell::Bool(self.pending.reset);
        let mut next = 5;
        if self.box_col != 0 {
            match self
                .view
                .arrays
                .get("system.box.vectors")
                .and_then(ValueArray::as_floats)
            {
                Some(b) if b.len() == 9 => {
                    dst.values[self.box_col].f32_array().extend_from_slice(b)
                }
                _ => dst.values[self.box_col] = Cell::Null,
            }
            next = self.box_col + 1;
        }
        for (i, col) in self.value_cols.iter().enumerate() {
            let cell = &mut dst.values[next + i];
            let v = self.view.values.get(&col.key);
            match (col.kind, v.and_then(|v| v.kind.as_ref())) {
                (_, None | Some(Kind::NullValue(_))) => *cell = Cell::Null,
                (ScalarKind::Number, Some(Kind::NumberValue(n))) => *cell = Cell::Float(*n),
                (ScalarKind::Bool, Some(Kind::BoolValue(b))) => *cell = Cell::Bool(*b),
                (ScalarKind::Text, Some(Kind::StringValue(s))) => cell.set_str(s),
                (ScalarKind::Json, Some(_)) => match v {
                    Some(v) => cell.set_str(&value_to_json(v).to_string()),
                    None => *cell = Cell::Null,
                },
                _ => *cell = Cell::Null,
            }
        }
    }

    fn emit_particle_row(&mut self, stream: usize, dst: &mut FrameBuf) {
        let i = self.pending.next_particle;
        dst.reset(stream, self.schema.streams[stream].signals.len());
        self.time_cells(dst);
        dst.values[2] = Cell::UInt(u64::from(self.pending.frame_index));
        dst.values[3] = Cell::UInt(i as u64);
        let arrays = &self.view.arrays;
        let floats = |key: &str| arrays.get(key).and_then(ValueArray::as_floats);
        let put3 = |values: &mut [Cell], at: usize, src: Option<&[f32]>| {
            for k in 0..3 {
                values[at + k] = src
                    .and_then(|s| s.get(3 * i + k))
                    .map_or(Cell::Null, |&f| Cell::Float(f64::from(f)));
            }
        };
        put3(&mut dst.values, self.pc.pos, floats("particle.positions"));
        if let Some(at) = self.pc.vel {
            put3(&mut dst.values, at, floats("particle.velocities"));
        }
        if let Some(at) = self.pc.force {
            put3(&mut dst.values, at, floats("particle.forces"));
        }
        if let Some(at) = self.pc.force_system {
            put3(&mut dst.values, at, floats("particle.forces.system"));
        }
        if let Some(at) = self.pc.force_user {
            let has = arrays.contains_key("forces.user.sparse");
            put3(
                &mut dst.values,
                at,
                has.then_some(&self.pending.user_forces[..]),
            );
        }
        let index_at = |key: &str, j: usize| -> Option<u32> {
            arrays
                .get(key)
                .and_then(ValueArray::as_indices)
                .and_then(|a| a.get(j).copied())
        };
        let text_at =
            |key: &str, j: usize, cell: &mut Cell| match arrays.get(key).and_then(|a| a.text_at(j))
            {
                Some(s) => cell.set_str(&s),
                None => *cell = Cell::Null,
            };
        if let Some(at) = self.pc.element {
            dst.values[at] =
                index_at("particle.elements", i).map_or(Cell::Null, |e| Cell::UInt(u64::from(e)));
        }
        if let Some(at) = self.pc.name {
            text_at("particle.names", i, &mut dst.values[at]);
        }
        let residue = index_at("particle.residues", i);
        if let Some(at) = self.pc.residue {
            dst.values[at] = residue.map_or(Cell::Null, |r| Cell::UInt(u64::from(r)));
        }
        let residue = residue.map(|r| r as usize);
        let chain = residue.and_then(|r| index_at("residue.chains", r));
        for (col, key, idx) in [
            (self.pc.residue_name, "residue.names", residue),
            (self.pc.residue_id, "residue.ids", residue),
            (self.pc.chain_name, "chain.names", chain.map(|c| c as usize)),
        ] {
            if let Some(at) = col {
                match idx {
                    Some(j) => text_at(key, j, &mut dst.values[at]),
                    None => dst.values[at] = Cell::Null,
                }
            }
        }
        if let Some(at) = self.pc.chain {
            dst.values[at] = chain.map_or(Cell::Null, |c| Cell::UInt(u64::from(c)));
        }
        for (key, kind, at) in &self.pc.extra {
            let at = *at;
            let array = arrays.get(key);
            match kind {
                ExtraKind::Float3 => {
                    put3(&mut dst.values, at, array.and_then(ValueArray::as_floats))
                }
                ExtraKind::Float => {
                    dst.values[at] = array
                        .and_then(ValueArray::as_floats)
                        .and_then(|a| a.get(i))
                        .map_or(Cell::Null, |&f| Cell::Float(f64::from(f)));
                }
                ExtraKind::Index => {
                    dst.values[at] = array
                        .and_then(ValueArray::as_indices)
                        .and_then(|a| a.get(i))
                        .map_or(Cell::Null, |&v| Cell::UInt(u64::from(v)));
                }
                ExtraKind::Text => text_at(key, i, &mut dst.values[at]),
            }
        }
        self.pending.next_particle += 1;
    }

    fn emit_state_row(&mut self, stream: usize, dst: &mut FrameBuf) {
        dst.reset(stream, 5);
        self.time_cells(dst);
        let (key, json, removed) = &self.pending.state_rows[self.pending.next_state];
        dst.values[2].set_str(key);
        dst.values[3].set_str(json);
        dst.values[4] = Cell::Bool(*removed);
        self.pending.next_state += 1;
    }

    fn next_row(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        loop {
            if self.pending.frame_row {
                self.pending.frame_row = false;
                if let Some(s) = self.frames_stream {
                    self.emit_frame_row(s, dst);
                    return Ok(true);
                }
            }
            if self.pending.next_particle < self.pending.particles
                && let Some(s) = self.particles_stream
            {
                self.emit_particle_row(s, dst);
                return Ok(true);
            }
            if self.pending.next_state < self.pending.state_rows.len()
                && let Some(s) = self.state_stream
            {
                self.emit_state_row(s, dst);
                return Ok(true);
            }
            if self.done {
                return Ok(false);
            }
            let event = match &mut self.source {
                Source::Files(t) => t.next_event(),
                Source::Events(events, _) => Ok(events.next()),
            };
            self.refresh_integrity();
            match event? {
                Some(e) => self.start_event(e),
                None => {
                    self.done = true;
                    if self.lost_resets > 1 {
                        self.own.warn(format!(
                            "{} frames change {SIMULATION_COUNTER} without a reset",
                            self.lost_resets
                        ));
                        self.refresh_integrity();
                    }
                    return Ok(false);
                }
            }
        }
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

    fn read_frame(&mut self, dst: &mut FrameBuf) -> recfmt_core::Result<bool> {
        Ok(self.next_row(dst)?)
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
            Source::Events(events, _) if events.len() == 0 => {
                (self.total_bytes.unwrap_or(0), self.total_bytes)
            }
            Source::Events(..) => (0, self.total_bytes),
        }
    }
}
