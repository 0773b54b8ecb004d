//! Writing NanoVer recordings from the generic model ([`NanoverWriter`]) and faithful
//! low-level copies ([`copy_recording`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use recfmt_core::{
    AtomicFile, DType, FrameBuf, Header, Integrity, ReadOptions, RecordingWriter, Replace,
    ResultExt, Schema, Shape, StreamDesc, Value as Cell,
};

use crate::header::{FileKind, Version};
use crate::io::{Record, Writer};
use crate::json::json_text_to_value;
use crate::proto::{
    FrameData, GetFrameResponse, Kind, StateUpdate, Struct, Value, ValueArray, null, number,
};
use crate::recording::{
    ArrayKind, DELTA_KEYS_COLUMN, FRAMES_STREAM, META_KEY, META_MAP, META_TYPE, STATE_STREAM,
    ScalarKind, TIME_COLUMN, Variant, is_nanover_zip,
};
use crate::timeline::{RecordingPaths, open_file};

type FileWriter = Writer<BufWriter<AtomicFile>>;

/// Where a `frames` column goes back to.
#[derive(Debug, Clone)]
enum Target {
    Value(String, ScalarKind),
    Array(String, ArrayKind),
}

#[derive(Debug)]
struct FramesPlan {
    stream: usize,
    time: usize,
    frame_index: usize,
    delta: usize,
    /// Column name → (column index, target).
    by_name: BTreeMap<String, (usize, Target)>,
}

#[derive(Debug)]
struct StatePlan {
    stream: usize,
    time: usize,
    key: usize,
    value: usize,
    removed: usize,
}

fn is_unsigned(d: DType) -> bool {
    matches!(d, DType::U8 | DType::U16 | DType::U32 | DType::U64)
}

fn is_numeric(d: DType) -> bool {
    !matches!(d, DType::Bool | DType::Str | DType::Bytes)
}

/// Checks the `frames` stream; every problem goes into `misfits`.
fn plan_frames(index: usize, s: &StreamDesc, misfits: &mut Vec<String>) -> Option<FramesPlan> {
    let before = misfits.len();
    let mut need = |name: &str, ok: &dyn Fn(&recfmt_core::SignalDesc) -> bool, what: &str| match s
        .signal_index(name)
    {
        Some(i) if ok(&s.signals[i]) => Some(i),
        Some(_) => {
            misfits.push(format!("frames.{name}: must be {what}"));
            None
        }
        None => {
            misfits.push(format!("frames: no column {name} ({what})"));
            None
        }
    };
    let time = need(
        TIME_COLUMN,
        &|d| d.shape == Shape::Scalar && is_unsigned(d.dtype),
        "an unsigned integer of microseconds",
    );
    let frame_index = need(
        "frame_index",
        &|d| d.shape == Shape::Scalar && is_unsigned(d.dtype),
        "an unsigned integer",
    );
    let delta = need(
        DELTA_KEYS_COLUMN,
        &|d| d.shape == Shape::Scalar && d.dtype == DType::Str,
        "the JSON list of the columns each record set",
    );
    if time.is_some() && time != Some(s.time) {
        misfits.push(format!("frames: the time column must be {TIME_COLUMN}"));
    }
    let mut by_name = BTreeMap::new();
    let mut seen_keys = std::collections::BTreeSet::new();
    for (i, sig) in s.signals.iter().enumerate() {
        if matches!(
            sig.name.as_str(),
            TIME_COLUMN | "frame_index" | "session" | DELTA_KEYS_COLUMN
        ) {
            continue;
        }
        let meta = |k: &str| sig.metadata.get(k).map(String::as_str);
        let (Some(map), Some(key), Some(ty)) = (meta(META_MAP), meta(META_KEY), meta(META_TYPE))
        else {
            misfits.push(format!(
                "frames.{}: not a NanoVer key column (no {META_MAP}/{META_KEY}/{META_TYPE} metadata)",
                sig.name
            ));
            continue;
        };
        let scalar = sig.shape == Shape::Scalar;
        let list = sig.shape == Shape::Variable;
        let target = match map {
            "values" => match ScalarKind::parse(ty) {
                Some(k @ ScalarKind::Number) if scalar && is_numeric(sig.dtype) => {
                    Some(Target::Value(key.into(), k))
                }
                Some(k @ ScalarKind::Bool) if scalar && sig.dtype == DType::Bool => {
                    Some(Target::Value(key.into(), k))
                }
                Some(k @ (ScalarKind::Text | ScalarKind::Json))
                    if scalar && sig.dtype == DType::Str =>
                {
                    Some(Target::Value(key.into(), k))
                }
                _ => None,
            },
            "arrays" => match ArrayKind::parse(ty) {
                Some(k @ ArrayKind::Float) if list && sig.dtype.is_float() => {
                    Some(Target::Array(key.into(), k))
                }
                Some(k @ ArrayKind::Index) if list && is_unsigned(sig.dtype) => {
                    Some(Target::Array(key.into(), k))
                }
                Some(k @ ArrayKind::Json) if scalar && sig.dtype == DType::Str => {
                    Some(Target::Array(key.into(), k))
                }
                _ => None,
            },
            _ => None,
        };
        let Some(target) = target else {
            misfits.push(format!(
                "frames.{}: {map} key of type {ty} cannot be a {}{} column",
                sig.name,
                sig.dtype,
                if list { " list" } else { "" }
            ));
            continue;
        };
        if !seen_keys.insert((map.to_string(), key.to_string())) {
            misfits.push(format!(
                "frames.{}: {map} key {key:?} has two columns",
                sig.name
            ));
            continue;
        }
        by_name.insert(sig.name.clone(), (i, target));
    }
    if misfits.len() > before {
        return None;
    }
    Some(FramesPlan {
        stream: index,
        time: time?,
        frame_index: frame_index?,
        delta: delta?,
        by_name,
    })
}

/// Checks the `state` stream; every problem goes into `misfits`.
fn plan_state(index: usize, s: &StreamDesc, misfits: &mut Vec<String>) -> Option<StatePlan> {
    let before = misfits.len();
    let mut need = |name: &str, dtype: Option<DType>, what: &str| match s.signal_index(name) {
        Some(i)
            if s.signals[i].shape == Shape::Scalar
                && dtype.map_or(is_unsigned(s.signals[i].dtype), |d| s.signals[i].dtype == d) =>
        {
            Some(i)
        }
        Some(_) => {
            misfits.push(format!("state.{name}: must be {what}"));
            None
        }
        None => {
            misfits.push(format!("state: no column {name} ({what})"));
            None
        }
    };
    let time = need(TIME_COLUMN, None, "an unsigned integer of microseconds");
    let key = need("key", Some(DType::Str), "text");
    let value = need("value", Some(DType::Str), "JSON text");
    let removed = need("removed", Some(DType::Bool), "a boolean");
    let extra: Vec<&str> = s
        .signals
        .iter()
        .map(|x| x.name.as_str())
        .filter(|n| !matches!(*n, TIME_COLUMN | "key" | "value" | "removed"))
        .collect();
    if !extra.is_empty() {
        misfits.push(format!(
            "state: columns NanoVer cannot hold: {}",
            extra.join(", ")
        ));
    }
    if misfits.len() > before {
        return None;
    }
    Some(StatePlan {
        stream: index,
        time: time?,
        key: key?,
        value: value?,
        removed: removed?,
    })
}

/// Writes a NanoVer recording (`.traj` and/or `.state`, version 2) from the generic model,
/// when the schema is the one [`crate::NanoverRecording`] produces: a `frames` stream
/// (`t_us`, `frame_index`, key columns with their [`META_MAP`]/[`META_KEY`]/[`META_TYPE`]
/// metadata, `delta_keys`) and/or a `state` stream (`t_us`, `key`, `value`, `removed`).
/// Any other schema fails in [`RecordingWriter::write_header`], listing every column or
/// stream that does not fit.
///
/// Each `frames` row becomes one `GetFrameResponse`: its `frame_index`, and a `FrameData`
/// holding exactly the columns its `delta_keys` names (with the protobuf type given there
/// or by the column), or no `FrameData` when `delta_keys` is null. Consecutive `state` rows
/// with the same `t_us` become one `StateUpdate` (a removal as `null_value`; a row with a
/// null key is an update that changes nothing). So reading a recording and writing it back
/// gives the same decoded messages and timestamps; only map order (ours is sorted) and the
/// version (always 2) may differ from the original bytes. What JSON cannot carry is not
/// kept: NaN and infinities inside JSON values come back as the strings `"NaN"`, `"inf"`,
/// `"-inf"`, and a `Value` with no kind comes back as `null_value`.
///
/// The files are `path` and the partner beside it ([`RecordingPaths::outputs`]: `y.traj`
/// and `y.state`), each written under a temporary name and renamed when
/// [`RecordingWriter::finish`] succeeds; a writer dropped before that leaves nothing.
/// Timestamps must increase strictly in each file (as NanoVer's checker requires); a
/// damaged source with timestamps out of order fails with a hint to repair it first.
///
/// ```
/// use recfmt_core::{FrameBuf, ReadOptions, RecordingReader, RecordingWriter};
/// use recfmt_nanover::{NanoverRecording, NanoverWriter, generate};
/// let (traj, state) = generate::small_recording_bytes()?;
/// let mut rec = NanoverRecording::from_bytes(Some(&traj), Some(&state), &ReadOptions::default())?;
/// let dir = tempfile::tempdir()?;
/// let mut w = NanoverWriter::new(&dir.path().join("copy.traj"));
/// w.write_header(rec.header(), rec.schema())?;
/// let mut row = FrameBuf::default();
/// while rec.read_frame(&mut row)? {
///     w.write_frame(&row)?;
/// }
/// w.finish()?;
/// // Our writer sorts map entries, as `generate` does, so here even the bytes are equal.
/// assert_eq!(std::fs::read(dir.path().join("copy.traj"))?, traj);
/// assert_eq!(std::fs::read(dir.path().join("copy.state"))?, state);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct NanoverWriter {
    path: PathBuf,
    replace: Replace,
    frames: Option<FramesPlan>,
    state: Option<StatePlan>,
    traj_out: Option<(PathBuf, FileWriter)>,
    state_out: Option<(PathBuf, FileWriter)>,
    pending: Option<(u128, StateUpdate)>,
    rows: u64,
    started: bool,
    finished: bool,
}

impl NanoverWriter {
    /// A writer for the recording named by `path` (files are created by
    /// [`RecordingWriter::write_header`]).
    pub fn new(path: &Path) -> Self {
        NanoverWriter {
            path: path.to_path_buf(),
            replace: Replace::Never,
            frames: None,
            state: None,
            traj_out: None,
            state_out: None,
            pending: None,
            rows: 0,
            started: false,
            finished: false,
        }
    }

    /// Whether existing files may be replaced (by default they are kept and the write fails).
    pub fn with_replace(mut self, replace: Replace) -> Self {
        self.replace = replace;
        self
    }

    /// The files written (or to be written): `(traj, state)`.
    pub fn paths(&self) -> (Option<&Path>, Option<&Path>) {
        (
            self.traj_out.as_ref().map(|(p, _)| p.as_path()),
            self.state_out.as_ref().map(|(p, _)| p.as_path()),
        )
    }

    fn bad_row(&self, what: impl std::fmt::Display) -> recfmt_core::Error {
        recfmt_core::Error::invalid(format!("NanoVer writer, row {}: {what}", self.rows))
    }

    fn time(&self, frame: &FrameBuf, at: usize) -> recfmt_core::Result<u128> {
        match frame.values.get(at).and_then(Cell::as_u64) {
            Some(t) => Ok(u128::from(t)),
            None => Err(self.bad_row("t_us is not a non-negative integer")),
        }
    }

    fn frame_row(
        &self,
        plan: &FramesPlan,
        frame: &FrameBuf,
    ) -> recfmt_core::Result<GetFrameResponse> {
        let index = frame
            .values
            .get(plan.frame_index)
            .and_then(Cell::as_u64)
            .and_then(|i| u32::try_from(i).ok())
            .ok_or_else(|| self.bad_row("frame_index is not a u32"))?;
        let delta = match frame.values.get(plan.delta) {
            Some(Cell::Null) | None => {
                return Ok(GetFrameResponse {
                    frame_index: index,
                    frame: None,
                });
            }
            Some(Cell::Str(s)) => s,
            Some(_) => return Err(self.bad_row("delta_keys is not text")),
        };
        let entries: serde_json::Value = serde_json::from_str(delta)
            .map_err(|e| self.bad_row(format!("delta_keys is not JSON: {e}")))?;
        let serde_json::Value::Array(entries) = entries else {
            return Err(self.bad_row("delta_keys is not a JSON array"));
        };
        let mut data = FrameData::default();
        for entry in &entries {
            let (name, variant) = match entry {
                serde_json::Value::String(n) => (n.as_str(), None),
                serde_json::Value::Array(pair) => match (pair.first(), pair.get(1)) {
                    (Some(serde_json::Value::String(n)), Some(serde_json::Value::String(v)))
                        if pair.len() == 2 =>
                    {
                        let v = Variant::parse(v).ok_or_else(|| {
                            self.bad_row(format!("delta_keys: unknown array type {v:?}"))
                        })?;
                        (n.as_str(), Some(v))
                    }
                    _ => return Err(self.bad_row(format!("delta_keys: bad entry {entry}"))),
                },
                _ => return Err(self.bad_row(format!("delta_keys: bad entry {entry}"))),
            };
            let (at, target) = plan
                .by_name
                .get(name)
                .ok_or_else(|| self.bad_row(format!("delta_keys names no column {name:?}")))?;
            let cell = &frame.values[*at];
            match target {
                Target::Value(key, kind) => {
                    let v = cell_to_value(cell, *kind)
                        .map_err(|e| self.bad_row(format!("column {name}: {e}")))?;
                    data.values.insert(key.clone(), v);
                }
                Target::Array(key, kind) => {
                    let variant = variant.unwrap_or(kind.natural());
                    let a = cell_to_array(cell, *kind, variant)
                        .map_err(|e| self.bad_row(format!("column {name}: {e}")))?;
                    data.arrays.insert(key.clone(), a);
                }
            }
        }
        Ok(GetFrameResponse::new(index, data))
    }

    fn state_row(
        &mut self,
        plan_t: (usize, usize, usize, usize),
        frame: &FrameBuf,
    ) -> recfmt_core::Result<()> {
        let (time, key, value, removed) = plan_t;
        let t = self.time(frame, time)?;
        if let Some((pt, _)) = &self.pending
            && *pt != t
        {
            self.flush_state()?;
        }
        let update = &mut self
            .pending
            .get_or_insert_with(|| (t, StateUpdate::default()))
            .1;
        let removed = matches!(frame.values.get(removed), Some(Cell::Bool(true)));
        let json = match frame.values.get(value) {
            Some(Cell::Str(s)) => Some(s.as_str()),
            _ => None,
        };
        let fields = &mut update
            .changed_keys
            .get_or_insert_with(Struct::default)
            .fields;
        match frame.values.get(key) {
            Some(Cell::Str(k)) => {
                let v = if removed {
                    null()
                } else {
                    json_text_to_value(json.unwrap_or("null")).map_err(|e| {
                        recfmt_core::Error::invalid(format!(
                            "NanoVer writer, row {}: state value of {k:?} is not JSON: {e}",
                            self.rows
                        ))
                    })?
                };
                fields.insert(k.clone(), v);
            }
            // An update that changes nothing: no struct at all when the value is null too.
            _ if json.is_none() && fields.is_empty() => update.changed_keys = None,
            _ => {}
        }
        Ok(())
    }

    fn flush_state(&mut self) -> recfmt_core::Result<()> {
        if let Some((t, update)) = self.pending.take()
            && let Some((path, w)) = &mut self.state_out
        {
            w.write_state(t, &update).map_err(|e| ordered(e, path))?;
        }
        Ok(())
    }
}

/// Adds a hint to a timestamp-order error.
fn ordered(e: crate::Error, path: &Path) -> recfmt_core::Error {
    let hint = matches!(e, crate::Error::TimestampOrder { .. });
    let e = recfmt_core::Error::from(e).in_file(path);
    if hint {
        recfmt_core::Error::invalid(format!(
            "{e} (NanoVer needs strictly increasing timestamps; repair the source first with `recfmt recover`)"
        ))
    } else {
        e
    }
}

fn cell_to_value(cell: &Cell, kind: ScalarKind) -> std::result::Result<Value, String> {
    Ok(match (kind, cell) {
        (_, Cell::Null) => null(),
        (ScalarKind::Number, c) => number(c.as_f64().ok_or("expected a number")?),
        (ScalarKind::Bool, Cell::Bool(b)) => Value {
            kind: Some(Kind::BoolValue(*b)),
        },
        (ScalarKind::Text, Cell::Str(s)) => Value {
            kind: Some(Kind::StringValue(s.clone())),
        },
        (ScalarKind::Json, Cell::Str(s)) => {
            json_text_to_value(s).map_err(|e| format!("not JSON: {e}"))?
        }
        _ => return Err(format!("a {} value expected", kind.name())),
    })
}

fn cell_to_array(
    cell: &Cell,
    kind: ArrayKind,
    variant: Variant,
) -> std::result::Result<ValueArray, String> {
    use recfmt_core::ArrayValue as A;
    if variant == Variant::None {
        return Ok(ValueArray { values: None });
    }
    let numbers: Vec<f64> = match (kind, cell) {
        (ArrayKind::Json, Cell::Str(s)) => {
            let j = json_text_to_value(s).map_err(|e| format!("not JSON: {e}"))?;
            let Some(Kind::ListValue(items)) = j.kind else {
                return Err("not a JSON array".into());
            };
            let items = items.values;
            if variant == Variant::Text {
                let strings = items
                    .into_iter()
                    .map(|i| match i.kind {
                        Some(Kind::StringValue(s)) => Some(s),
                        _ => None,
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or("a string array holds a non-string")?;
                return Ok(ValueArray::strings(strings));
            }
            items
                .iter()
                .map(|i| match i.kind {
                    Some(Kind::NumberValue(n)) => Some(n),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .ok_or("a numeric array holds a non-number")?
        }
        (ArrayKind::Float | ArrayKind::Index, Cell::Array(a)) => {
            // Exact paths first, so f32 and u32 never go through f64 needlessly.
            match (variant, a) {
                (Variant::Float, A::F32(v)) => return Ok(ValueArray::floats(v.clone())),
                (Variant::Index, A::UInt(v)) => {
                    return v
                        .iter()
                        .map(|&x| u32::try_from(x).ok())
                        .collect::<Option<Vec<_>>>()
                        .map(ValueArray::indices)
                        .ok_or_else(|| "an index above u32".into());
                }
                (_, A::F32(v)) => v.iter().map(|&x| f64::from(x)).collect(),
                (_, A::F64(v)) => v.clone(),
                (_, A::UInt(v)) => v.iter().map(|&x| x as f64).collect(),
                (_, A::Int(v)) => v.iter().map(|&x| x as f64).collect(),
                (_, _) => return Err("a list of numbers expected".into()),
            }
        }
        (_, Cell::Null) => return Err("null, but delta_keys names it".into()),
        _ => return Err(format!("a {} array expected", kind.name())),
    };
    match variant {
        Variant::Float => Ok(ValueArray::floats(
            numbers.iter().map(|&x| x as f32).collect(),
        )),
        Variant::Index => numbers
            .iter()
            .map(|&x| {
                (x >= 0.0 && x.fract() == 0.0 && x <= f64::from(u32::MAX)).then_some(x as u32)
            })
            .collect::<Option<Vec<_>>>()
            .map(ValueArray::indices)
            .ok_or_else(|| "a value that is not a u32 index".into()),
        Variant::Text => Err("a string array in a numeric column".into()),
        Variant::None => Ok(ValueArray { values: None }),
    }
}

fn create_file(
    path: &Path,
    kind: FileKind,
    version: Version,
    replace: Replace,
) -> recfmt_core::Result<FileWriter> {
    let file = AtomicFile::create(path, replace).in_file(path)?;
    Writer::new(BufWriter::new(file), kind, version).in_file(path)
}

/// Moves the finished files of one recording (`.traj` and `.state`) into place as one: when
/// the second fails, the first is taken back.
fn commit(outs: impl IntoIterator<Item = (PathBuf, FileWriter)>) -> recfmt_core::Result<()> {
    let mut paths = Vec::new();
    let mut files = Vec::new();
    for (path, w) in outs {
        let file = w.finish().in_file(&path)?;
        let file = file
            .into_inner()
            .map_err(|e| e.into_error())
            .in_file(&path)?;
        paths.push(path);
        files.push(file);
    }
    recfmt_core::atomic::commit_all(files)
        .map_err(|(i, e)| recfmt_core::Error::from(e).in_file(&paths[i]))
}

impl RecordingWriter for NanoverWriter {
    fn write_header(&mut self, _header: &Header, schema: &Schema) -> recfmt_core::Result<()> {
        if self.started {
            return Err(recfmt_core::Error::invalid(
                "NanoVer writer: write_header called twice",
            ));
        }
        let mut misfits = Vec::new();
        let mut frames = None;
        let mut state = None;
        for (i, s) in schema.streams.iter().enumerate() {
            match s.name.as_str() {
                FRAMES_STREAM if frames.is_none() => frames = plan_frames(i, s, &mut misfits),
                STATE_STREAM if state.is_none() => state = plan_state(i, s, &mut misfits),
                other => misfits.push(format!(
                    "stream {other:?}: NanoVer holds only one `frames` and one `state` stream"
                )),
            }
        }
        if schema.streams.is_empty() {
            misfits.push("no stream: NanoVer needs `frames` and/or `state`".into());
        }
        if !misfits.is_empty() {
            let mut text = String::from(
                "this schema is not a NanoVer recording's (frames + state as recfmt reads them); what does not fit:",
            );
            for m in &misfits {
                let _ = write!(text, "\n  - {m}");
            }
            return Err(recfmt_core::Error::invalid(text));
        }
        let paths = RecordingPaths::outputs(&self.path, frames.is_some(), state.is_some());
        if let Some(p) = paths.traj {
            let w = create_file(&p, FileKind::Trajectory, Version::V2, self.replace)?;
            self.traj_out = Some((p, w));
        }
        if let Some(p) = paths.state {
            let w = create_file(&p, FileKind::State, Version::V2, self.replace)?;
            self.state_out = Some((p, w));
        }
        self.frames = frames;
        self.state = state;
        self.started = true;
        Ok(())
    }

    fn write_frame(&mut self, frame: &FrameBuf) -> recfmt_core::Result<()> {
        if !self.started || self.finished {
            return Err(recfmt_core::Error::invalid(
                "NanoVer writer: write_frame outside write_header .. finish",
            ));
        }
        if let Some(plan) = self.frames.as_ref().filter(|p| p.stream == frame.stream) {
            let t = self.time(frame, plan.time)?;
            let msg = self.frame_row(plan, frame)?;
            if let Some((path, w)) = &mut self.traj_out {
                w.write_frame(t, &msg).map_err(|e| ordered(e, path))?;
            }
        } else if let Some(plan) = self.state.as_ref().filter(|p| p.stream == frame.stream) {
            let cols = (plan.time, plan.key, plan.value, plan.removed);
            self.state_row(cols, frame)?;
        } else {
            return Err(self.bad_row(format!("stream {} is not in the schema", frame.stream)));
        }
        self.rows += 1;
        Ok(())
    }

    fn finish(&mut self) -> recfmt_core::Result<()> {
        if self.finished {
            return Ok(());
        }
        self.flush_state()?;
        commit(
            self.traj_out
                .take()
                .into_iter()
                .chain(self.state_out.take()),
        )?;
        self.finished = true;
        Ok(())
    }
}

/// One file copied by [`copy_recording`].
#[derive(Debug, Clone, PartialEq)]
pub struct CopiedFile {
    /// The kind of file (`None` for a `.nanover.zip`, copied byte for byte).
    pub kind: Option<FileKind>,
    /// The file read.
    pub source: PathBuf,
    /// The file written.
    pub target: PathBuf,
    /// Records copied.
    pub records: u64,
    /// Bytes written.
    pub bytes: u64,
    /// What reading the source lost (a torn tail, garbage): nothing for an intact file.
    pub integrity: Integrity,
}

/// What [`copy_recording`] wrote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CopySummary {
    /// The files, trajectory first.
    pub files: Vec<CopiedFile>,
}

impl CopySummary {
    /// True when some bytes of the source could not be copied as records.
    pub fn lost_data(&self) -> bool {
        self.files.iter().any(|f| f.integrity.lost_data())
    }

    /// What reading the sources lost, all files together.
    pub fn integrity(&self) -> Integrity {
        let mut all = Integrity::default();
        for i in self.files.iter().map(|f| &f.integrity) {
            all.bytes_lost += i.bytes_lost;
            all.records_skipped += i.records_skipped;
            all.truncated_at = all.truncated_at.or(i.truncated_at);
            if i.lost_data() && !all.lost_data() {
                all.status = i.status;
            }
            for w in &i.warnings {
                all.warn(w.clone());
            }
        }
        all
    }
}

/// Copies a recording record for record: a `.traj` and the `.state` beside it (either as
/// `src`, [`RecordingPaths::resolve`]) to `dst` and its partner
/// ([`RecordingPaths::outputs`]). The header and version are kept, and every record's
/// timestamp and payload bytes are written unchanged (even timestamps out of order), so the
/// copy of an intact file is byte-identical. A damaged source is copied up to what the
/// lenient reader keeps (every complete record before a torn tail); what was lost is in
/// [`CopiedFile::integrity`]. A `.nanover.zip` becomes a `.traj` (its frames) and a
/// `.state` (its state updates, when it has any), one record per message with the index's
/// timestamps (see [`crate::nzip`] for how messages map onto records). Outputs are
/// written under temporary names and renamed when complete.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let (traj, state) = recfmt_nanover::generate::small_recording_bytes()?;
/// std::fs::write(dir.path().join("a.traj"), &traj)?;
/// std::fs::write(dir.path().join("a.state"), &state)?;
/// let summary = recfmt_nanover::copy_recording(&dir.path().join("a.state"), &dir.path().join("b.state"))?;
/// assert_eq!(summary.files.len(), 2);
/// assert_eq!(std::fs::read(dir.path().join("b.traj"))?, traj);
/// assert_eq!(std::fs::read(dir.path().join("b.state"))?, state);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn copy_recording(src: &Path, dst: &Path) -> recfmt_core::Result<CopySummary> {
    copy_recording_with(src, dst, Replace::Never)
}

/// [`copy_recording`], replacing existing files as `replace` allows.
pub fn copy_recording_with(
    src: &Path,
    dst: &Path,
    replace: Replace,
) -> recfmt_core::Result<CopySummary> {
    if is_nanover_zip(src) {
        return copy_zip_to_files(src, dst, replace);
    }
    let paths = RecordingPaths::resolve(src);
    let outs = RecordingPaths::outputs(dst, paths.traj.is_some(), paths.state.is_some());
    let mut done = Vec::new();
    let mut summary = CopySummary::default();
    for (input, output, kind) in [
        (&paths.traj, &outs.traj, FileKind::Trajectory),
        (&paths.state, &outs.state, FileKind::State),
    ] {
        let (Some(input), Some(output)) = (input, output) else {
            continue;
        };
        let mut reader = open_file(input, kind, &ReadOptions::default()).in_file(input)?;
        let version = reader.read_header().in_file(input)?;
        let mut w = create_file(output, kind, version, replace)?;
        w.set_require_increasing(false);
        let mut record = Record::default();
        while reader.read_record(&mut record).in_file(input)? {
            w.write_record(record.timestamp, &record.payload)
                .in_file(output)?;
        }
        summary.files.push(CopiedFile {
            kind: Some(kind),
            source: input.clone(),
            target: output.clone(),
            records: w.records(),
            bytes: w.position(),
            integrity: reader.integrity().clone(),
        });
        done.push((output.clone(), w));
    }
    commit(done)?;
    Ok(summary)
}

/// A `.nanover.zip` written out as a `.traj` + `.state` pair, streamed one message at a
/// time. The `.traj` is written when there are frames or nothing at all, the `.state` when
/// there are state updates; what reading the zip lost goes with the first file.
#[cfg(feature = "nanover-zip")]
fn copy_zip_to_files(src: &Path, dst: &Path, replace: Replace) -> recfmt_core::Result<CopySummary> {
    let file = std::fs::File::open(src).in_file(src)?;
    let mut events = crate::nzip::ZipEvents::open(
        std::io::BufReader::new(file),
        &ReadOptions::default().limits,
    )
    .in_file(src)?;
    let outs = RecordingPaths::outputs(dst, true, true);
    let (Some(traj_path), Some(state_path)) = (outs.traj, outs.state) else {
        return Err(recfmt_core::Error::invalid(format!(
            "no .traj/.state names for {}",
            dst.display()
        )));
    };
    let mut traj: Option<FileWriter> = None;
    let mut state: Option<FileWriter> = None;
    while let Some(event) = events.next_event().in_file(src)? {
        if let Some(frame) = &event.frame {
            let w = match &mut traj {
                Some(w) => w,
                None => traj.insert(create_file(
                    &traj_path,
                    FileKind::Trajectory,
                    Version::V2,
                    replace,
                )?),
            };
            w.set_require_increasing(false);
            w.write_frame(event.timestamp, frame).in_file(&traj_path)?;
        }
        if let Some(update) = &event.state {
            let w = match &mut state {
                Some(w) => w,
                None => state.insert(create_file(
                    &state_path,
                    FileKind::State,
                    Version::V2,
                    replace,
                )?),
            };
            w.set_require_increasing(false);
            w.write_state(event.timestamp, update)
                .in_file(&state_path)?;
        }
    }
    if traj.is_none() && state.is_none() {
        traj = Some(create_file(
            &traj_path,
            FileKind::Trajectory,
            Version::V2,
            replace,
        )?);
    }
    let mut summary = CopySummary::default();
    let mut integrity = Some(events.integrity().clone());
    let mut done = Vec::new();
    for (w, path, kind) in [
        (traj, traj_path, FileKind::Trajectory),
        (state, state_path, FileKind::State),
    ] {
        let Some(w) = w else { continue };
        summary.files.push(CopiedFile {
            kind: Some(kind),
            source: src.to_path_buf(),
            target: path.clone(),
            records: w.records(),
            bytes: w.position(),
            integrity: integrity.take().unwrap_or_default(),
        });
        done.push((path, w));
    }
    commit(done)?;
    Ok(summary)
}

#[cfg(not(feature = "nanover-zip"))]
fn copy_zip_to_files(src: &Path, _dst: &Path, _: Replace) -> recfmt_core::Result<CopySummary> {
    Err(crate::recording::zip_unsupported(src))
}

/// Creates a [`NanoverWriter`] for the registry.
pub(crate) fn create(
    path: &Path,
    write: &recfmt_core::WriteOptions,
) -> recfmt_core::Result<Box<dyn RecordingWriter>> {
    Ok(Box::new(
        NanoverWriter::new(path).with_replace(write.replace),
    ))
}
