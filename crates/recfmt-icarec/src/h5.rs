//! The HDF5 files Icarus records today (spec A.5; feature `hdf5`): reading them into the same
//! generic model as ICAREC, and writing them.
//!
//! Icarus's recorder (`HDF5Recorder`, through Vulcan's `HDF5Writer` and HighFive) writes:
//!
//! ```text
//! /time                 (N,) float64, chunked (1000), unlimited
//! /signals/<name>       (N,) float64 | int32 | int64, one per scalar signal, names with dots
//!                       (Vehicle.Nav.position.x); optional string attributes unit, semantic
//! /metadata             group; attributes schema (JSON, below) and created_at (UTC ISO 8601)
//! ```
//!
//! `schema` is `{"signals":[{"name","type","lifecycle","offset","unit"?,"semantic"?}],
//! "frame_size_bytes": 8·n}`. Static signals are written every frame like dynamic ones; their
//! lifecycle survives only in that JSON.
//!
//! [`IcarusH5Recording`] reads such a file as the streams [`IcarecRecording`](crate::IcarecRecording)
//! produces: `dynamic` (`t` in seconds, then every dynamic signal) and `static` (one row, the
//! values of the first frame), with the same column names, dtypes as stored (`f64`, `i32`,
//! `i64`), the `unit` attribute as the unit and `lifecycle`, `icarec.type` and `semantic` in
//! the column metadata. So `recfmt convert run.h5 --to icarec` goes through the ordinary
//! [`IcarecWriter`](crate::IcarecWriter). Datasets are read in windows of at most
//! [`MAX_WINDOW_ROWS`] rows and about 32 MiB over all columns, never whole.
//!
//! [`IcarusH5Writer`] (and [`write_icarus_h5`]) writes that layout from the generic model, in
//! bounded memory: every dataset is declared empty, then appended to a chunk at a time
//! ([`DEFAULT_CHUNK_ROWS`] rows, no compression unless asked for).
//!
//! ```
//! use recfmt_core::{FrameBuf, RecordingReader, Value};
//! let dir = tempfile::tempdir()?;
//! recfmt_icarec::generate::write_all_types(&dir.path().join("run.icarec"), 5)?;
//! let mut icarec = recfmt_icarec::IcarecRecording::open(&dir.path().join("run.icarec"), &Default::default())?;
//! let h5 = dir.path().join("run.h5");
//! let frames = recfmt_icarec::write_icarus_h5(&mut icarec, &h5, &Default::default())?;
//! assert_eq!(frames, 5);
//!
//! let mut rec = (recfmt_icarec::HDF5_FORMAT.open)(&h5, &Default::default())?;
//! assert_eq!(rec.schema().streams[0].name, "dynamic");
//! let mut row = FrameBuf::default();
//! let mut rows = 0;
//! while rec.read_frame(&mut row)? {
//!     rows += 1;
//! }
//! assert_eq!(rows, 1 + 5); // the static row, then the frames
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use hdf5_pure::{
    AttrValue, ChunkCacheConfig, Dataset, DatasetAccessProperties, FileAccessProperties,
    FileBuilder, MaxExtent, MemoryStrategy, SyncPolicy,
};
use recfmt_core::{
    ArrayValue, BatchSet, ColumnData, DType, Error as CoreError, FormatDescriptor, FormatInfo,
    FrameBuf, Header, Integrity, IntegrityStatus, Limits, Metadata, ReadOptions, RecordingReader,
    RecordingWriter, Replace, Result, Schema as CoreSchema, Score, Shape, SignalDesc, StreamDesc,
    Tier, TimeBase, TimeReference, TimeSystem, Value, WriteOptions,
};

use crate::recording::{DYNAMIC_STREAM, STATIC_STREAM};
use crate::types::SignalType;

/// The format id of Icarus HDF5 recordings on the command line and in headers.
pub const H5_FORMAT_ID: &str = "icarus-h5";

/// The HDF5 signature every HDF5 file without a user block starts with.
pub const HDF5_MAGIC: [u8; 8] = *b"\x89HDF\r\n\x1a\n";

/// The most rows [`IcarusH5Recording`] reads from one dataset at a time.
pub const MAX_WINDOW_ROWS: u64 = 65_536;

/// The largest chunk length, in rows, the writer uses. hdf5-pure 0.47 encodes a chunk
/// dimension above 65 535 in 4 bytes where the C library expects 3, and HDF5 2.0 (current
/// h5py wheels) then refuses to open the dataset (`shared/design/hdf5.md`).
pub const MAX_CHUNK_ROWS: usize = 65_535;

/// The chunk length the writer uses by default (32 KiB of f64). Vulcan's `HDF5Writer` uses
/// 1000. An unfiltered dataset stores its last chunk whole, so a short recording costs up to
/// one chunk per signal; larger chunks write faster (measured: 300 000 frames of 45 signals
/// took 0.47 s with 1000-row chunks, 0.33 s with 4096, 0.27 s with 65 535) but make short
/// files large (40 frames: 0.5 MB, 1.6 MB, 23 MB).
pub const DEFAULT_CHUNK_ROWS: usize = 4096;

/// Budget in bytes for the rows buffered over all columns, while reading (one window) and
/// while writing (one chunk per dataset).
const READ_BUDGET: u64 = 32 << 20;
const WRITE_BUDGET: usize = 64 << 20;

/// Largest `created_at` or `unit`/`semantic` attribute kept (longer ones are ignored).
const MAX_SHORT_ATTR: usize = 4096;

/// Static facts about the Icarus HDF5 format.
pub static H5_INFO: FormatInfo = FormatInfo {
    id: H5_FORMAT_ID,
    name: "Icarus HDF5 recording",
    extensions: &["h5", "hdf5"],
};

/// The Icarus HDF5 format descriptor for a [`recfmt_core::Registry`].
///
/// Detection sees only the HDF5 signature, which every HDF5 file has, so it scores 100, not
/// 255; `open` then checks the layout and fails with "not an Icarus recording: ..." naming
/// what is missing.
pub static HDF5_FORMAT: FormatDescriptor = FormatDescriptor {
    create: Some(create_h5_boxed),
    ..FormatDescriptor::new(H5_INFO, Tier::Magic, score_h5, open_h5_boxed)
};

/// Scores the first bytes of a file: `Yes(100)` for the HDF5 signature at byte 0, else `No`.
///
/// The head bytes cannot show whether the file has Icarus's layout; [`IcarusH5Recording::open`]
/// checks that.
///
/// ```
/// use recfmt_core::Score;
/// assert_eq!(recfmt_icarec::score_h5(b"\x89HDF\r\n\x1a\n\x03\x08\x08"), Score::Yes(100));
/// assert_eq!(recfmt_icarec::score_h5(b"\x89HDF\r\n"), Score::No);
/// assert_eq!(recfmt_icarec::score_h5(b"{}"), Score::No);
/// ```
pub fn score_h5(head: &[u8]) -> Score {
    if head.starts_with(&HDF5_MAGIC) {
        Score::Yes(100)
    } else {
        Score::No
    }
}

fn open_h5_boxed(path: &Path, options: &ReadOptions) -> Result<Box<dyn RecordingReader>> {
    Ok(Box::new(IcarusH5Recording::open(path, options)?))
}

fn create_h5_boxed(path: &Path, write: &WriteOptions) -> Result<Box<dyn RecordingWriter>> {
    recfmt_core::atomic::check_target(path, write.replace)?;
    Ok(Box::new(
        IcarusH5Writer::new(path, IcarusH5Options::default()).with_replace(write.replace),
    ))
}

// ---------------------------------------------------------------------------------------------
// Errors and the panic guard
// ---------------------------------------------------------------------------------------------

/// A content error. hdf5-pure does not say at which byte a structure is broken, so these
/// carry offset 0 and name the HDF5 object instead.
fn malformed(expected: impl Into<String>) -> CoreError {
    CoreError::malformed(H5_FORMAT_ID, 0, expected.into())
}

fn not_icarus(what: impl Into<String>) -> CoreError {
    CoreError::unsupported(
        H5_FORMAT_ID,
        format!("not an Icarus recording: {}", what.into()),
    )
}

fn h5_error(what: &str, e: hdf5_pure::Error) -> CoreError {
    match e {
        hdf5_pure::Error::Io(io) => CoreError::Io(io),
        e => malformed(format!("{what} (hdf5-pure: {e})")),
    }
}

/// Runs one call into hdf5-pure, turning its error, and a panic, into a recfmt error.
///
/// hdf5-pure parses untrusted bytes and is young (`shared/design/hdf5.md`); a malformed file
/// must give an error and never abort the process, so a panic inside it is caught here and
/// reported as malformed input. The closures only read; no state of ours is left half-updated
/// by an unwind, which is why `AssertUnwindSafe` is sound here.
fn guard<T>(
    what: impl FnOnce() -> String,
    f: impl FnOnce() -> std::result::Result<T, hdf5_pure::Error>,
) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(h5_error(&what(), e)),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(malformed(format!(
                "{} (hdf5-pure panicked: {message})",
                what()
            )))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The schema attribute
// ---------------------------------------------------------------------------------------------

/// One entry of the `/metadata` `schema` attribute.
#[derive(Debug, Clone, PartialEq)]
struct SchemaSignal {
    name: String,
    type_name: String,
    lifecycle: Lifecycle,
    unit: Option<String>,
    semantic: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    Dynamic,
    Static,
}

impl Lifecycle {
    fn name(self) -> &'static str {
        match self {
            Lifecycle::Dynamic => "dynamic",
            Lifecycle::Static => "static",
        }
    }
}

fn parse_schema(text: &str, integrity: &mut Integrity, strict: bool) -> Result<Vec<SchemaSignal>> {
    let bad = |what: String| malformed(format!("/metadata attribute schema: {what}"));
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        bad(format!(
            "a JSON object (line {} column {}: {e})",
            e.line(),
            e.column()
        ))
    })?;
    let signals = value
        .get("signals")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| bad("a JSON object with a \"signals\" array".into()))?;
    let mut out = Vec::with_capacity(signals.len());
    let mut seen = HashSet::new();
    for (i, s) in signals.iter().enumerate() {
        let text_of = |key: &str| s.get(key).and_then(serde_json::Value::as_str);
        let name = text_of("name")
            .ok_or_else(|| bad(format!("signals[{i}] with a string \"name\"")))?
            .to_string();
        if !seen.insert(name.clone()) {
            return Err(bad(format!(
                "unique signal names, found {name:?} twice (signals[{i}])"
            )));
        }
        let type_name = text_of("type").unwrap_or("double").to_string();
        let lifecycle = match text_of("lifecycle") {
            Some("static") => Lifecycle::Static,
            Some("dynamic") => Lifecycle::Dynamic,
            other => {
                let found = other.map_or_else(|| "none".into(), |o| format!("{o:?}"));
                if strict {
                    return Err(bad(format!(
                        "signals[{i}] ({name:?}) with lifecycle \"static\" or \"dynamic\", found {found}"
                    )));
                }
                integrity.warn(format!(
                    "/metadata schema: signal {name:?} has lifecycle {found}; read as dynamic"
                ));
                Lifecycle::Dynamic
            }
        };
        out.push(SchemaSignal {
            name,
            type_name,
            lifecycle,
            unit: text_of("unit").map(str::to_string),
            semantic: text_of("semantic").map(str::to_string),
        });
    }
    Ok(out)
}

/// The `schema` attribute text, laid out exactly as Vulcan's `TelemetrySchema::to_json`
/// (whose reader is a hand-written parser), with JSON escaping added.
fn schema_text(signals: &[SchemaSignal]) -> String {
    let quoted = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    let mut json = String::from("{\n  \"signals\": [\n");
    for (i, s) in signals.iter().enumerate() {
        json.push_str("    {\n");
        let _ = writeln!(json, "      \"name\": {},", quoted(&s.name));
        let _ = writeln!(json, "      \"type\": {},", quoted(&s.type_name));
        let _ = writeln!(json, "      \"lifecycle\": {},", quoted(s.lifecycle.name()));
        let _ = write!(json, "      \"offset\": {}", 8 * i);
        if let Some(u) = s.unit.as_deref().filter(|u| !u.is_empty()) {
            let _ = write!(json, ",\n      \"unit\": {}", quoted(u));
        }
        if let Some(m) = s.semantic.as_deref().filter(|m| !m.is_empty()) {
            let _ = write!(json, ",\n      \"semantic\": {}", quoted(m));
        }
        json.push_str("\n    }");
        if i + 1 < signals.len() {
            json.push(',');
        }
        json.push('\n');
    }
    json.push_str("  ],\n");
    let _ = write!(json, "  \"frame_size_bytes\": {}\n}}", 8 * signals.len());
    json
}

// ---------------------------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------------------------

/// How the values of one dataset are read and held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Float,
    Int,
    UInt,
}

/// The recfmt dtype and read kind of a numeric HDF5 dataset type.
fn kind_of(dtype: &hdf5_pure::DType) -> Option<(DType, Kind)> {
    use hdf5_pure::DType as H;
    Some(match dtype {
        H::F64 => (DType::F64, Kind::Float),
        H::F32 => (DType::F32, Kind::Float),
        H::I8 => (DType::I8, Kind::Int),
        H::I16 => (DType::I16, Kind::Int),
        H::I32 => (DType::I32, Kind::Int),
        H::I64 => (DType::I64, Kind::Int),
        H::U8 => (DType::U8, Kind::UInt),
        H::U16 => (DType::U16, Kind::UInt),
        H::U32 => (DType::U32, Kind::UInt),
        H::U64 => (DType::U64, Kind::UInt),
        _ => return None,
    })
}

/// The dtype the JSON `type` names, for Icarus's three types.
fn json_dtype(type_name: &str) -> Option<DType> {
    match SignalType::parse(type_name)? {
        SignalType::Double => Some(DType::F64),
        SignalType::Int32 => Some(DType::I32),
        SignalType::Int64 => Some(DType::I64),
        _ => None,
    }
}

/// A window of one dataset's values.
#[derive(Debug)]
enum Window {
    F64(Vec<f64>),
    I64(Vec<i64>),
    U64(Vec<u64>),
}

impl Window {
    fn len(&self) -> usize {
        match self {
            Window::F64(v) => v.len(),
            Window::I64(v) => v.len(),
            Window::U64(v) => v.len(),
        }
    }

    fn value(&self, i: usize) -> Value {
        match self {
            Window::F64(v) => v.get(i).map_or(Value::Null, |x| Value::Float(*x)),
            Window::I64(v) => v.get(i).map_or(Value::Null, |x| Value::Int(*x)),
            Window::U64(v) => v.get(i).map_or(Value::Null, |x| Value::UInt(*x)),
        }
    }
}

/// One dataset read as a column.
#[derive(Debug)]
struct Source {
    /// `/time` or `/signals/<name>`.
    path: String,
    dataset: Dataset,
    kind: Kind,
    len: u64,
}

impl Source {
    fn read(&self, start: u64, count: u64) -> Result<Window> {
        let what = || format!("rows {start}..{} of {}", start + count, self.path);
        let window = match self.kind {
            Kind::Float => Window::F64(guard(what, || self.dataset.read_f64_rows(start, count))?),
            Kind::Int => Window::I64(guard(what, || self.dataset.read_i64_rows(start, count))?),
            Kind::UInt => Window::U64(guard(what, || self.dataset.read_u64_rows(start, count))?),
        };
        if (window.len() as u64) < count {
            return Err(malformed(format!(
                "{count} rows from row {start} of {} (it declares {} rows), found {}",
                self.path,
                self.len,
                window.len()
            )));
        }
        Ok(window)
    }
}

/// An Icarus HDF5 recording read as generic streams (see [the module docs](self)).
///
/// Memory: one window of rows over all columns, at most [`MAX_WINDOW_ROWS`] rows and about
/// 32 MiB (fewer rows when there are many signals), plus hdf5-pure's metadata and chunk
/// caches. `Limits::max_signals` bounds the number of datasets and
/// `Limits::max_side_file_len` the `schema` attribute.
#[derive(Debug)]
pub struct IcarusH5Recording {
    header: Header,
    schema: CoreSchema,
    integrity: Integrity,
    time: Source,
    dynamic: Vec<Source>,
    statics: Vec<Source>,
    rows: u64,
    window_rows: u64,
    window_start: u64,
    window_time: Window,
    window: Vec<Window>,
    next: u64,
    started: bool,
    schema_json: String,
}

impl IcarusH5Recording {
    /// Opens an Icarus HDF5 recording and checks its layout.
    ///
    /// Fails with "not an Icarus recording: ..." (naming what is missing) when the file is
    /// HDF5 but lacks `/time`, `/signals` or the `/metadata` `schema` attribute, and with a
    /// malformed-input error when hdf5-pure cannot read it.
    pub fn open(path: &Path, options: &ReadOptions) -> Result<Self> {
        Self::open_inner(path, options).map_err(|e| e.in_file(path))
    }

    fn open_inner(path: &Path, options: &ReadOptions) -> Result<Self> {
        let strict = options.strict;
        let limits = options.limits;
        let mut head = Vec::with_capacity(HDF5_MAGIC.len());
        std::fs::File::open(path)
            .and_then(|f| f.take(HDF5_MAGIC.len() as u64).read_to_end(&mut head))?;
        if head != HDF5_MAGIC {
            return Err(not_icarus(
                "not an HDF5 file (no HDF5 signature \\x89HDF\\r\\n\\x1a\\n at byte 0)",
            ));
        }
        let file = guard(
            || "an HDF5 file hdf5-pure can open".into(),
            || hdf5_pure::File::open_streaming(path),
        )?;
        let root = file.root();
        let groups = guard(|| "the root group's members".into(), || root.groups())?;
        let datasets = guard(|| "the root group's members".into(), || root.datasets())?;
        let has_group = |n: &str| groups.iter().any(|g| g == n);
        let has_dataset = |n: &str| datasets.iter().any(|d| d == n);

        // /metadata: a group (Vulcan) or a dataset, with a `schema` attribute.
        let metadata_attrs = if has_group("metadata") {
            Some(guard(
                || "the attributes of /metadata".into(),
                || file.group("metadata")?.attrs(),
            )?)
        } else if has_dataset("metadata") {
            Some(guard(
                || "the attributes of /metadata".into(),
                || file.dataset("metadata")?.attrs(),
            )?)
        } else {
            None
        };
        let schema_attr = metadata_attrs.as_ref().and_then(|a| a.get("schema"));
        let mut missing = Vec::new();
        if schema_attr.is_none() {
            missing.push(if metadata_attrs.is_none() {
                "no /metadata schema attribute (there is no /metadata)"
            } else {
                "no /metadata schema attribute"
            });
        }
        if !has_dataset("time") {
            missing.push("no /time dataset");
        }
        if !has_group("signals") {
            missing.push("no /signals group");
        }
        if !missing.is_empty() {
            let mut found: Vec<String> = groups
                .iter()
                .map(|g| format!("/{g} (group)"))
                .chain(datasets.iter().map(|d| format!("/{d}")))
                .collect();
            found.sort();
            let more = found.len().saturating_sub(8);
            found.truncate(8);
            let found = match (found.is_empty(), more) {
                (true, _) => "the root group is empty".to_string(),
                (false, 0) => format!("the root group holds {}", found.join(", ")),
                (false, n) => format!("the root group holds {} and {n} more", found.join(", ")),
            };
            return Err(not_icarus(format!("{}; {found}", missing.join(", "))));
        }
        let schema_json = schema_attr
            .and_then(AttrValue::as_str)
            .ok_or_else(|| malformed("/metadata attribute schema: a string"))?
            .to_string();
        Limits::check(
            "/metadata schema attribute length",
            schema_json.len() as u64,
            limits.max_side_file_len,
            0,
        )?;
        let mut integrity = Integrity::default();
        let declared = parse_schema(&schema_json, &mut integrity, strict)?;
        Limits::check(
            "signals in /metadata schema",
            declared.len() as u64,
            limits.max_signals,
            0,
        )?;
        let short_attr = |attrs: &HashMap<String, AttrValue>, key: &str| {
            attrs
                .get(key)
                .and_then(AttrValue::as_str)
                .filter(|s| s.len() <= MAX_SHORT_ATTR)
                .map(str::to_string)
        };
        let created_at = metadata_attrs
            .as_ref()
            .and_then(|a| short_attr(a, "created_at"));

        // /signals
        let signals_group = guard(|| "the group /signals".into(), || file.group("signals"))?;
        let mut stored = guard(
            || "the members of /signals".into(),
            || signals_group.datasets(),
        )?;
        Limits::check(
            "datasets in /signals",
            stored.len() as u64,
            limits.max_signals,
            0,
        )?;
        stored.sort();
        // Decompressed chunks kept per dataset: enough for the chunk a window ends in, and
        // 32 MiB over all datasets (at least 64 KiB each, at most hdf5-pure's default 1 MiB).
        let per_dataset = usize::try_from(READ_BUDGET / (stored.len() as u64 + 1))
            .unwrap_or(usize::MAX)
            .clamp(64 << 10, 1 << 20);
        let access = DatasetAccessProperties::new()
            .with_chunk_cache(ChunkCacheConfig::new().with_max_bytes(per_dataset));

        // /time
        let time_ds = guard(
            || "the dataset /time".into(),
            || file.dataset_with_options("time", access),
        )?;
        let (time_dtype, time_kind) = numeric(&time_ds, "/time")?;
        let time_len = rank1_len(&time_ds, "/time")?;
        let time_attrs = guard(|| "the attributes of /time".into(), || time_ds.attrs())?;
        let time = Source {
            path: "/time".into(),
            dataset: time_ds,
            kind: time_kind,
            len: time_len,
        };

        let stored_set: HashSet<&str> = stored.iter().map(String::as_str).collect();
        let declared_names: HashSet<&str> = declared.iter().map(|s| s.name.as_str()).collect();

        let mut planned: Vec<SchemaSignal> = Vec::with_capacity(declared.len());
        for s in &declared {
            if stored_set.contains(s.name.as_str()) {
                planned.push(s.clone());
            } else if strict {
                return Err(malformed(format!(
                    "a dataset /signals/{} for signal {:?} of the /metadata schema",
                    s.name, s.name
                )));
            } else {
                integrity.warn(format!(
                    "signal {:?} is in the /metadata schema but has no dataset /signals/{}; left out",
                    s.name, s.name
                ));
            }
        }
        for name in stored
            .iter()
            .filter(|n| !declared_names.contains(n.as_str()))
        {
            integrity.warn(format!(
                "dataset /signals/{name} is not in the /metadata schema; read as a dynamic signal"
            ));
            planned.push(SchemaSignal {
                name: name.clone(),
                type_name: String::new(),
                lifecycle: Lifecycle::Dynamic,
                unit: None,
                semantic: None,
            });
        }

        let mut dynamic_stream = StreamDesc::new(
            DYNAMIC_STREAM,
            SignalDesc::scalar("t", time_dtype).with_unit("s"),
            TimeBase::SECONDS,
        );
        let mut static_stream = StreamDesc::new(
            STATIC_STREAM,
            SignalDesc::scalar("t", time_dtype).with_unit("s"),
            TimeBase::SECONDS,
        );
        let mut dynamic = Vec::new();
        let mut statics = Vec::new();
        let mut skipped_rank = Vec::new();
        for s in planned {
            let path = format!("/signals/{}", s.name);
            let ds = guard(
                || format!("the dataset {path}"),
                || signals_group.dataset_with_options(&s.name, access),
            )?;
            let hdtype = guard(|| format!("the type of {path}"), || ds.dtype())?;
            let Some((dtype, kind)) = kind_of(&hdtype) else {
                if strict {
                    return Err(malformed(format!(
                        "{path}: a float64, int32 or int64 dataset, found {hdtype}"
                    )));
                }
                integrity.warn(format!("{path} has type {hdtype}, not a number; left out"));
                continue;
            };
            let shape = guard(|| format!("the shape of {path}"), || ds.shape())?;
            let [len] = shape[..] else {
                if strict {
                    return Err(malformed(format!(
                        "{path}: a one-dimensional (N,) dataset, found shape {shape:?}"
                    )));
                }
                skipped_rank.push(path);
                continue;
            };
            if !s.type_name.is_empty() && json_dtype(&s.type_name) != Some(dtype) {
                let msg = format!(
                    "{path} is stored as {dtype} but the /metadata schema says {:?}; read as stored",
                    s.type_name
                );
                if strict {
                    return Err(malformed(msg));
                }
                integrity.warn(msg);
            }
            let attrs = guard(|| format!("the attributes of {path}"), || ds.attrs())?;
            let unit = short_attr(&attrs, "unit")
                .or(s.unit.clone())
                .filter(|u| !u.is_empty());
            let semantic = short_attr(&attrs, "semantic")
                .or(s.semantic.clone())
                .filter(|m| !m.is_empty());
            let mut desc = SignalDesc::scalar(s.name.clone(), dtype);
            if let Some(u) = unit {
                desc = desc.with_unit(u);
            }
            let m = &mut desc.metadata;
            m.insert("lifecycle".into(), s.lifecycle.name().into());
            let type_name = if s.type_name.is_empty() {
                match dtype {
                    DType::I32 => "int32",
                    DType::I64 => "int64",
                    _ => "double",
                }
                .to_string()
            } else {
                s.type_name.clone()
            };
            m.insert("icarec.type".into(), type_name);
            if let Some(sem) = semantic {
                m.insert("semantic".into(), sem);
            }
            let source = Source {
                path,
                dataset: ds,
                kind,
                len,
            };
            match s.lifecycle {
                Lifecycle::Dynamic => {
                    dynamic_stream.signals.push(desc);
                    dynamic.push(source);
                }
                Lifecycle::Static => {
                    static_stream.signals.push(desc);
                    statics.push(source);
                }
            }
        }
        if !skipped_rank.is_empty() {
            integrity.warn(format!(
                "not one-dimensional, left out: {}",
                skipped_rank.join(", ")
            ));
        }

        // Rows: every dataset should have as many as /time. A recorder that stopped between
        // two datasets of one frame leaves them one apart; keep the rows all of them have.
        let rows = dynamic
            .iter()
            .chain(&statics)
            .map(|s| s.len)
            .fold(time.len, u64::min);
        let longer: Vec<String> = std::iter::once(&time)
            .chain(&dynamic)
            .chain(&statics)
            .filter(|s| s.len != rows)
            .map(|s| format!("{} ({})", s.path, s.len))
            .collect();
        if !longer.is_empty() {
            let msg = format!(
                "datasets differ in length: the shortest has {rows} rows, longer are {}",
                longer.join(", ")
            );
            if strict {
                return Err(malformed(msg));
            }
            integrity.warn(format!("{msg}; the first {rows} rows are read"));
            integrity.status = IntegrityStatus::Truncated;
            integrity.bytes_lost += std::iter::once(&time)
                .chain(&dynamic)
                .chain(&statics)
                .map(|s| (s.len - rows).saturating_mul(8))
                .fold(0u64, u64::saturating_add);
        }

        let mut meta = Metadata::new();
        if let Some(c) = created_at {
            meta.insert("created_at".into(), c);
        }
        meta.insert("frame_count".into(), rows.to_string());
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&schema_json)
            && let Some(n) = v
                .get("frame_size_bytes")
                .and_then(serde_json::Value::as_u64)
        {
            meta.insert("frame_size_bytes".into(), n.to_string());
        }
        let time_ref = time_reference(&time_attrs, &mut integrity);
        let header = Header {
            format: H5_FORMAT_ID,
            version: "unversioned".into(),
            time: Some(time_ref),
            metadata: meta,
        };
        let mut schema = CoreSchema::default();
        schema.streams.push(dynamic_stream);
        schema.streams.push(static_stream);

        let columns = dynamic.len() as u64 + 1;
        let window_rows = (READ_BUDGET / (8 * columns)).clamp(1, MAX_WINDOW_ROWS);
        Ok(IcarusH5Recording {
            header,
            schema,
            integrity,
            time,
            dynamic,
            statics,
            rows,
            window_rows,
            window_start: 0,
            window_time: Window::F64(Vec::new()),
            window: Vec::new(),
            next: 0,
            started: false,
            schema_json,
        })
    }

    /// Number of frames (rows of `/time` that every signal dataset has too).
    pub fn frame_count(&self) -> u64 {
        self.rows
    }

    /// The `/metadata` `schema` attribute as stored.
    pub fn schema_json(&self) -> &str {
        &self.schema_json
    }

    /// Rows read per window (at most [`MAX_WINDOW_ROWS`]).
    pub fn window_rows(&self) -> u64 {
        self.window_rows
    }

    fn load_window(&mut self, start: u64) -> Result<()> {
        let count = self.window_rows.min(self.rows - start);
        self.window_time = self.time.read(start, count)?;
        self.window.clear();
        for s in &self.dynamic {
            self.window.push(s.read(start, count)?);
        }
        self.window_start = start;
        Ok(())
    }

    /// Loads the window holding row `next` when it is not loaded yet; returns the row's index
    /// in it.
    fn window_index(&mut self) -> Result<usize> {
        let in_window = self.next >= self.window_start
            && self.next < self.window_start + self.window_time.len() as u64;
        if !in_window {
            self.load_window(self.next)?;
        }
        Ok(usize::try_from(self.next - self.window_start).unwrap_or(usize::MAX))
    }

    fn next_row(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        if !self.started {
            self.started = true;
            if !self.statics.is_empty() && self.rows > 0 {
                dst.reset(1, self.statics.len() + 1);
                dst.values[0] = self.time.read(0, 1)?.value(0);
                for (i, s) in self.statics.iter().enumerate() {
                    dst.values[i + 1] = s.read(0, 1)?.value(0);
                }
                return Ok(true);
            }
        }
        if self.next >= self.rows {
            return Ok(false);
        }
        let i = self.window_index()?;
        dst.reset(0, self.dynamic.len() + 1);
        dst.values[0] = self.window_time.value(i);
        for (v, w) in dst.values[1..].iter_mut().zip(&self.window) {
            *v = w.value(i);
        }
        self.next += 1;
        Ok(true)
    }
}

impl IcarusH5Recording {
    /// The batch path: whole runs of window rows copied into the dynamic columns. A run whose
    /// values do not all fit their columns goes row by row, so the error is the row path's.
    fn read_batches_native(&mut self, dst: &mut BatchSet) -> Result<bool> {
        if !self.started {
            if dst.is_full() {
                return Ok(true);
            }
            if !self.statics.is_empty() && self.rows > 0 {
                let mut row = FrameBuf::default();
                self.next_row(&mut row)?;
                if dst.wants(row.stream) {
                    dst.push_frame(&row, &self.schema)?;
                }
            }
            self.started = true;
        }
        loop {
            if dst.is_full() {
                return Ok(true);
            }
            if self.next >= self.rows {
                return Ok(false);
            }
            // Loaded even when the dynamic stream is not wanted: a damaged dataset fails here
            // exactly as it does on the row path.
            let i = self.window_index()?;
            let available = self.window_time.len().saturating_sub(i);
            if available == 0 {
                return Err(malformed(format!(
                    "row {} of /time within its window of {} rows",
                    self.next,
                    self.window_time.len()
                )));
            }
            if !dst.wants(0) {
                self.next += available as u64;
                continue;
            }
            let room = dst.stream(0).room(dst.capacity());
            let n = available.min(room);
            let batch = dst.stream_mut(0);
            let windows = || std::iter::once(&self.window_time).chain(&self.window);
            let fits = batch.columns().len() == self.window.len() + 1
                && batch
                    .columns_mut()
                    .iter_mut()
                    .zip(windows())
                    .all(|(c, w)| copy_run(c.data_mut(), w, i, n, false));
            if fits {
                let columns = batch.columns_mut().iter_mut().zip(windows());
                for (c, w) in columns.filter(|(c, _)| !c.is_skipped()) {
                    copy_run(c.data_mut(), w, i, n, true);
                }
                batch.commit_rows(n);
                self.next += n as u64;
            } else {
                let mut row = FrameBuf::default();
                for _ in 0..n {
                    self.next_row(&mut row)?;
                    dst.push_frame(&row, &self.schema)?;
                }
            }
        }
    }
}

/// Checks (`write == false`) that rows `start..start + n` of a window fit a column of
/// `out`'s type exactly as the row path would store them, or appends them (`write == true`,
/// after a successful check).
fn copy_run(out: &mut ColumnData, window: &Window, start: usize, n: usize, write: bool) -> bool {
    fn run<T: Copy>(v: &[T], start: usize, n: usize) -> Option<&[T]> {
        v.get(start..start.checked_add(n)?)
    }
    fn narrow<S: Copy, T: TryFrom<S>>(out: &mut Vec<T>, src: &[S], write: bool) -> bool {
        if write {
            out.extend(src.iter().filter_map(|&x| T::try_from(x).ok()));
            true
        } else {
            src.iter().all(|&x| T::try_from(x).is_ok())
        }
    }
    match (out, window) {
        (ColumnData::F64(o), Window::F64(v)) => run(v, start, n).is_some_and(|r| {
            if write {
                o.extend_from_slice(r);
            }
            true
        }),
        // The row path narrows a widened f32 with `as`, which is exact.
        (ColumnData::F32(o), Window::F64(v)) => run(v, start, n).is_some_and(|r| {
            if write {
                o.extend(r.iter().map(|&x| x as f32));
            }
            true
        }),
        (ColumnData::I64(o), Window::I64(v)) => run(v, start, n).is_some_and(|r| {
            if write {
                o.extend_from_slice(r);
            }
            true
        }),
        (ColumnData::U64(o), Window::U64(v)) => run(v, start, n).is_some_and(|r| {
            if write {
                o.extend_from_slice(r);
            }
            true
        }),
        (ColumnData::I32(o), Window::I64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        (ColumnData::I16(o), Window::I64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        (ColumnData::I8(o), Window::I64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        (ColumnData::U32(o), Window::U64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        (ColumnData::U16(o), Window::U64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        (ColumnData::U8(o), Window::U64(v)) => {
            run(v, start, n).is_some_and(|r| narrow(o, r, write))
        }
        _ => false,
    }
}

/// Reads the optional `/time` attributes `system` and `epoch_iso` (names from Icarus's phase-6
/// plan; written by [`IcarusH5Writer`], not by Icarus itself). Without them the time is MET
/// with no epoch.
fn time_reference(attrs: &HashMap<String, AttrValue>, integrity: &mut Integrity) -> TimeReference {
    let met = TimeReference::new(TimeSystem::Met);
    let text = |k: &str| {
        attrs
            .get(k)
            .and_then(AttrValue::as_str)
            .filter(|s| s.len() <= MAX_SHORT_ATTR)
    };
    let system = match text("system").map(str::parse::<TimeSystem>) {
        None => TimeSystem::Met,
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            integrity.warn(format!("/time attribute system: {e}; read as MET"));
            return met;
        }
    };
    match TimeReference::parse(system, text("epoch_iso")) {
        Ok(r) => r,
        Err(e) => {
            integrity.warn(format!("/time attribute epoch_iso: {e}; no epoch used"));
            TimeReference::new(system)
        }
    }
}

fn numeric(ds: &Dataset, path: &str) -> Result<(DType, Kind)> {
    let t = guard(|| format!("the type of {path}"), || ds.dtype())?;
    kind_of(&t).ok_or_else(|| malformed(format!("{path}: a numeric dataset, found {t}")))
}

fn rank1_len(ds: &Dataset, path: &str) -> Result<u64> {
    let shape = guard(|| format!("the shape of {path}"), || ds.shape())?;
    match shape[..] {
        [n] => Ok(n),
        _ => Err(malformed(format!(
            "{path}: a one-dimensional (N,) dataset, found shape {shape:?}"
        ))),
    }
}

impl RecordingReader for IcarusH5Recording {
    fn format(&self) -> &'static FormatInfo {
        &H5_INFO
    }

    fn header(&self) -> &Header {
        &self.header
    }

    fn schema(&self) -> &CoreSchema {
        &self.schema
    }

    fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        self.next_row(dst)
    }

    /// Copies runs of each window's rows straight into the dynamic columns.
    fn read_batches(&mut self, dst: &mut BatchSet) -> Result<bool> {
        if dst.len() != self.schema.streams.len() {
            return recfmt_core::read_batches_by_rows(self, dst);
        }
        self.read_batches_native(dst)
    }

    fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    /// Rows read and total rows (not bytes: HDF5 datasets are not read in file order).
    fn progress(&self) -> (u64, Option<u64>) {
        (self.next, Some(self.rows))
    }

    fn progress_unit(&self) -> recfmt_core::ProgressUnit {
        recfmt_core::ProgressUnit::Rows
    }
}

// ---------------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------------

/// How [`IcarusH5Writer`] writes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IcarusH5Options {
    /// Rows per chunk of every dataset. `None` (the default): [`DEFAULT_CHUNK_ROWS`], or fewer
    /// when the chunks of all columns would need more than 64 MiB (over 2047 signals). Values
    /// are clamped to `1..=65_535` ([`MAX_CHUNK_ROWS`]). Every column buffers one chunk in
    /// memory.
    pub chunk_rows: Option<usize>,
    /// Shuffle + deflate at this level (0 to 9), or `None` (the default, as Vulcan writes).
    pub deflate: Option<u8>,
}

/// The Icarus type and value kind of one output dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutKind {
    F64,
    I32,
    I64,
}

impl OutKind {
    fn type_name(self) -> &'static str {
        match self {
            OutKind::F64 => "double",
            OutKind::I32 => "int32",
            OutKind::I64 => "int64",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Scalar {
    F(f64),
    I(i64),
}

#[derive(Debug)]
enum Pending {
    F64(Vec<f64>),
    I32(Vec<i32>),
    I64(Vec<i64>),
}

impl Pending {
    fn new(kind: OutKind, capacity: usize) -> Self {
        match kind {
            OutKind::F64 => Pending::F64(Vec::with_capacity(capacity)),
            OutKind::I32 => Pending::I32(Vec::with_capacity(capacity)),
            OutKind::I64 => Pending::I64(Vec::with_capacity(capacity)),
        }
    }

    fn push(&mut self, v: Scalar) {
        // The values were converted for this column's kind, so the casts are exact.
        match (self, v) {
            (Pending::F64(p), Scalar::F(x)) => p.push(x),
            (Pending::F64(p), Scalar::I(x)) => p.push(x as f64),
            (Pending::I32(p), Scalar::I(x)) => p.push(i32::try_from(x).unwrap_or_default()),
            (Pending::I32(p), Scalar::F(x)) => p.push(x as i32),
            (Pending::I64(p), Scalar::I(x)) => p.push(x),
            (Pending::I64(p), Scalar::F(x)) => p.push(x as i64),
        }
    }

    fn flush(&mut self, dataset: &mut Dataset, path: &str) -> Result<()> {
        let what = || format!("appending to {path}");
        match self {
            Pending::F64(p) if !p.is_empty() => guard(what, || dataset.append(p))?,
            Pending::I32(p) if !p.is_empty() => guard(what, || dataset.append(p))?,
            Pending::I64(p) if !p.is_empty() => guard(what, || dataset.append(p))?,
            _ => {}
        }
        match self {
            Pending::F64(p) => p.clear(),
            Pending::I32(p) => p.clear(),
            Pending::I64(p) => p.clear(),
        }
        Ok(())
    }
}

/// One input value feeding one output dataset.
#[derive(Debug, Clone, Copy)]
struct Mapping {
    /// Column of the input stream.
    input: usize,
    /// Element of a fixed-shape input value, for expanded vectors.
    element: Option<usize>,
    /// Output dataset (index into the planned signals).
    out: usize,
    kind: OutKind,
    /// The input column is boolean (written as 0/1).
    from_bool: bool,
}

/// One planned output signal.
#[derive(Debug, Clone)]
struct PlannedSignal {
    spec: SchemaSignal,
    kind: OutKind,
}

#[derive(Debug)]
struct OutColumn {
    path: String,
    dataset: Dataset,
    pending: Pending,
}

#[derive(Debug)]
struct Open {
    // Field order: the file is closed before the temporary file is removed on drop.
    file: Option<hdf5_pure::File>,
    time: OutColumn,
    columns: Vec<OutColumn>,
    temp: recfmt_core::TempPath,
    dynamic: usize,
    statics: Option<usize>,
    dynamic_plan: Vec<Mapping>,
    static_plan: Vec<Mapping>,
    /// Values of the static signals (indexed like `columns`), once the static row came.
    static_values: Option<Vec<Scalar>>,
    scratch: Vec<Scalar>,
    chunk_rows: usize,
    pending_rows: usize,
    rows: u64,
}

/// Writes the generic model as an Icarus HDF5 recording: a [`RecordingWriter`].
///
/// Accepts one per-frame stream (named `dynamic`, or the only stream not named `static`) and
/// an optional one-row `static` stream, like [`IcarecWriter`](crate::IcarecWriter). Column
/// types map onto Icarus's three: f32 and f64 → `double`; i64, u32 and u64 → `int64` (a u64
/// above `i64::MAX` is an error); i8, i16, i32, u8 and u16 → `int32`; bool → `int32` with
/// `semantic` `boolean` (Icarus's convention); fixed f64 arrays `[3]`, `[4]`, `[3, 3]` expand
/// into `name.x`… / `name.w`… / `name.xx`… doubles as Vulcan's `add_vec3` does. Static signals
/// get their value from the static row, which must come before the first frame, in every
/// frame. A null double is written as NaN; a null integer is an error.
///
/// The file appears under its name only when [`finish`](RecordingWriter::finish) succeeds; it
/// is written as `.<name>.partial` beside it until then, and that is removed on failure.
#[derive(Debug)]
pub struct IcarusH5Writer {
    path: PathBuf,
    replace: Replace,
    options: IcarusH5Options,
    open: Option<Open>,
    streams: Option<CoreSchema>,
    failed: bool,
    written: u64,
}

impl IcarusH5Writer {
    /// A writer that will create the file `path` (an existing file is kept: see
    /// [`IcarusH5Writer::with_replace`]).
    pub fn new(path: &Path, options: IcarusH5Options) -> Self {
        IcarusH5Writer {
            path: path.to_path_buf(),
            replace: Replace::Never,
            options,
            open: None,
            streams: None,
            failed: false,
            written: 0,
        }
    }

    /// Whether an existing file at the path may be replaced.
    pub fn with_replace(mut self, replace: Replace) -> Self {
        self.replace = replace;
        self
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.written
    }

    fn start(&mut self, header: &Header, schema: &CoreSchema) -> Result<()> {
        if self.open.is_some() {
            return Err(CoreError::invalid("write_header was already called"));
        }
        if let Some(level) = self.options.deflate
            && level > 9
        {
            return Err(CoreError::invalid(format!(
                "deflate level {level} is out of range (0 to 9)"
            )));
        }
        let statics = schema.stream_index(STATIC_STREAM);
        let others: Vec<usize> = (0..schema.streams.len())
            .filter(|&i| Some(i) != statics)
            .collect();
        let names = || {
            schema
                .streams
                .iter()
                .map(|s| format!("{:?}", s.name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let dynamic = match (schema.stream_index(DYNAMIC_STREAM), others.as_slice()) {
            (Some(d), _) if others.len() == 1 => d,
            (None, [only]) => *only,
            _ => {
                return Err(CoreError::invalid(format!(
                    "an Icarus HDF5 recording holds one per-frame stream (and an optional \"static\" one); this recording has streams {}",
                    names()
                )));
            }
        };
        if schema.streams[dynamic].entity.is_some() {
            return Err(CoreError::invalid(
                "an Icarus HDF5 recording cannot hold entity-keyed streams (one row per entity per tick)",
            ));
        }
        let mut planned: Vec<PlannedSignal> = Vec::new();
        let mut unfit = Vec::new();
        let dynamic_plan = plan(
            &schema.streams[dynamic],
            Lifecycle::Dynamic,
            &mut planned,
            &mut unfit,
        );
        let static_plan = statics.map_or_else(Vec::new, |s| {
            plan(
                &schema.streams[s],
                Lifecycle::Static,
                &mut planned,
                &mut unfit,
            )
        });
        if !unfit.is_empty() {
            return Err(CoreError::invalid(format!(
                "an Icarus HDF5 recording holds numeric scalars, booleans and f64 vectors [3], quaternions [4] and matrices [3, 3] only; cannot write {}",
                unfit.join(", ")
            )));
        }
        let mut seen = HashSet::new();
        let mut bad_names = Vec::new();
        for p in &planned {
            let n = &p.spec.name;
            if n.is_empty() || n == "." || n == ".." || n.contains('/') {
                bad_names.push(format!("{n:?} (not an HDF5 link name)"));
            } else if !seen.insert(n.as_str()) {
                bad_names.push(format!("{n:?} (twice)"));
            }
        }
        if !bad_names.is_empty() {
            return Err(CoreError::invalid(format!(
                "cannot name the datasets of /signals after these signals: {}",
                bad_names.join(", ")
            )));
        }

        let chunk_rows = match self.options.chunk_rows {
            Some(n) => n.clamp(1, MAX_CHUNK_ROWS),
            None => (WRITE_BUDGET / (8 * (planned.len() + 1))).clamp(1, DEFAULT_CHUNK_ROWS),
        };
        if self.path.file_name().is_none() {
            return Err(CoreError::invalid(format!(
                "output path {} has no file name",
                self.path.display()
            )));
        }
        let temp = recfmt_core::TempPath::reserve(&self.path, self.replace)?;

        // Declare everything (empty, unlimited, chunked), write that skeleton, then reopen it
        // for bounded-memory appends.
        let deflate = self.options.deflate;
        let declare = |d: &mut hdf5_pure::DatasetBuilder, kind: OutKind| {
            match kind {
                OutKind::F64 => d.with_f64_data(&[]),
                OutKind::I32 => d.with_i32_data(&[]),
                OutKind::I64 => d.with_i64_data(&[]),
            };
            d.with_shape(&[0])
                .with_maxshape(&[MaxExtent::Unlimited])
                .with_chunks(&[chunk_rows as u64]);
            if let Some(level) = deflate {
                d.with_shuffle().with_deflate(u32::from(level));
            }
        };
        let mut builder = FileBuilder::new();
        let mut signals = builder.create_group("signals");
        for p in &planned {
            let d = signals.create_dataset(&p.spec.name);
            declare(d, p.kind);
            if let Some(u) = p.spec.unit.as_deref().filter(|u| !u.is_empty()) {
                d.set_attr("unit", AttrValue::VarLenString(u.to_string()));
            }
            if let Some(m) = p.spec.semantic.as_deref().filter(|m| !m.is_empty()) {
                d.set_attr("semantic", AttrValue::VarLenString(m.to_string()));
            }
        }
        builder.add_group(signals.finish());
        let mut metadata = builder.create_group("metadata");
        let specs: Vec<SchemaSignal> = planned.iter().map(|p| p.spec.clone()).collect();
        metadata.set_attr("schema", AttrValue::VarLenString(schema_text(&specs)));
        let created_at = header
            .metadata
            .get("created_at")
            .cloned()
            .unwrap_or_else(recfmt_core::now_rfc3339);
        metadata.set_attr("created_at", AttrValue::VarLenString(created_at));
        builder.add_group(metadata.finish());
        let time = builder.create_dataset("time");
        declare(time, OutKind::F64);
        if let Some(t) = header.time
            && (t.system != TimeSystem::Met || t.has_epoch())
        {
            time.set_attr("system", AttrValue::VarLenString(t.system.name().into()));
            if let Some(text) = t.epoch_text() {
                time.set_attr("epoch_iso", AttrValue::VarLenString(text));
            }
        }
        guard(
            || format!("creating {}", temp.path().display()),
            || builder.write(temp.path()),
        )?;
        let access = FileAccessProperties::new()
            .with_memory_strategy(MemoryStrategy::Bounded)
            .with_sync_policy(SyncPolicy::OnClose);
        let file = guard(
            || format!("opening {} for appending", temp.path().display()),
            || hdf5_pure::File::open_rw_with_options(temp.path(), access),
        )?;
        let column = |path: String, kind: OutKind| -> Result<OutColumn> {
            let dataset = guard(
                || format!("opening {path} for appending"),
                || file.dataset(&path),
            )?;
            Ok(OutColumn {
                path,
                dataset,
                pending: Pending::new(kind, chunk_rows),
            })
        };
        let time = column("time".into(), OutKind::F64)?;
        let columns = planned
            .iter()
            .map(|p| column(format!("signals/{}", p.spec.name), p.kind))
            .collect::<Result<Vec<_>>>()?;
        let has_statics = !static_plan.is_empty();
        self.open = Some(Open {
            file: Some(file),
            time,
            scratch: vec![Scalar::F(0.0); columns.len()],
            columns,
            temp,
            dynamic,
            statics,
            dynamic_plan,
            static_plan,
            static_values: (!has_statics).then(Vec::new),
            chunk_rows,
            pending_rows: 0,
            rows: 0,
        });
        Ok(())
    }

    fn frame(&mut self, frame: &FrameBuf) -> Result<()> {
        let (Some(open), Some(schema)) = (self.open.as_mut(), self.streams.as_ref()) else {
            return Err(CoreError::invalid(
                "write_header must come before write_frame",
            ));
        };
        let desc = schema.streams.get(frame.stream).ok_or_else(|| {
            CoreError::invalid(format!("row {}: no stream {}", open.rows, frame.stream))
        })?;
        if frame.values.len() != desc.signals.len() {
            return Err(CoreError::invalid(format!(
                "a row of stream {:?} has {} values for {} signals",
                desc.name,
                frame.values.len(),
                desc.signals.len()
            )));
        }
        if Some(frame.stream) == open.statics {
            if open.rows > 0 {
                return Err(CoreError::invalid(
                    "the static row must come before the first frame: an Icarus HDF5 recording repeats static values in every frame",
                ));
            }
            for m in &open.static_plan {
                open.scratch[m.out] = convert(m, &frame.values[m.input], desc)?;
            }
            open.static_values = Some(open.scratch.clone());
            return Ok(());
        }
        if frame.stream != open.dynamic {
            return Err(CoreError::invalid(format!(
                "stream {:?} is not written to an Icarus HDF5 recording",
                desc.name
            )));
        }
        let Some(static_values) = open.static_values.as_ref() else {
            return Err(CoreError::invalid(
                "the static row must come before the first frame: an Icarus HDF5 recording repeats static values in every frame",
            ));
        };
        let t = frame.time_seconds(desc).ok_or_else(|| {
            CoreError::invalid(format!(
                "frame {} of stream {:?} has no time value",
                open.rows, desc.name
            ))
        })?;
        // Convert the whole row before buffering any of it, so a bad value leaves every
        // column the same length.
        for m in &open.static_plan {
            open.scratch[m.out] = static_values[m.out];
        }
        for m in &open.dynamic_plan {
            open.scratch[m.out] = convert(m, &frame.values[m.input], desc)?;
        }
        open.time.pending.push(Scalar::F(t));
        for (c, v) in open.columns.iter_mut().zip(&open.scratch) {
            c.pending.push(*v);
        }
        open.rows += 1;
        open.pending_rows += 1;
        if open.pending_rows >= open.chunk_rows {
            open.flush()?;
        }
        Ok(())
    }
}

impl Open {
    fn flush(&mut self) -> Result<()> {
        self.time
            .pending
            .flush(&mut self.time.dataset, &self.time.path)?;
        for c in &mut self.columns {
            c.pending.flush(&mut c.dataset, &c.path)?;
        }
        self.pending_rows = 0;
        Ok(())
    }
}

/// Converts one input value for its output dataset.
fn convert(m: &Mapping, value: &Value, desc: &StreamDesc) -> Result<Scalar> {
    let bad = |what: &str| {
        CoreError::invalid(format!(
            "stream {:?}, column {:?}: {what}, got {value:?}",
            desc.name, desc.signals[m.input].name
        ))
    };
    if let Some(k) = m.element {
        return match value {
            Value::Array(ArrayValue::F64(v)) => v
                .get(k)
                .map(|x| Scalar::F(*x))
                .ok_or_else(|| bad("too few elements")),
            Value::Array(ArrayValue::F32(v)) => v
                .get(k)
                .map(|x| Scalar::F(f64::from(*x)))
                .ok_or_else(|| bad("too few elements")),
            Value::Null => Ok(Scalar::F(f64::NAN)),
            _ => Err(bad("expected an array of floats")),
        };
    }
    match m.kind {
        OutKind::F64 => match value {
            Value::Null => Ok(Scalar::F(f64::NAN)),
            v => v
                .as_f64()
                .map(Scalar::F)
                .ok_or_else(|| bad("expected a number")),
        },
        OutKind::I32 => {
            if m.from_bool
                && let Value::Bool(b) = value
            {
                return Ok(Scalar::I(i64::from(*b)));
            }
            value
                .as_i64()
                .filter(|v| i32::try_from(*v).is_ok())
                .map(Scalar::I)
                .ok_or_else(|| bad("expected an integer that fits int32"))
        }
        OutKind::I64 => value
            .as_i64()
            .map(Scalar::I)
            .ok_or_else(|| bad("expected an integer that fits int64")),
    }
}

/// Plans the output datasets of one stream.
fn plan(
    stream: &StreamDesc,
    lifecycle: Lifecycle,
    planned: &mut Vec<PlannedSignal>,
    unfit: &mut Vec<String>,
) -> Vec<Mapping> {
    let mut mappings = Vec::new();
    for (i, s) in stream.signals.iter().enumerate() {
        if i == stream.time || Some(i) == stream.entity {
            continue;
        }
        let spec = |name: String, kind: OutKind, semantic: Option<String>| SchemaSignal {
            name,
            type_name: kind.type_name().into(),
            lifecycle,
            unit: s.unit.clone().filter(|u| !u.is_empty()),
            semantic: semantic.or_else(|| s.metadata.get("semantic").cloned()),
        };
        let scalar_kind = match s.dtype {
            DType::F32 | DType::F64 => Some(OutKind::F64),
            DType::I64 | DType::U32 | DType::U64 => Some(OutKind::I64),
            DType::I8 | DType::I16 | DType::I32 | DType::U8 | DType::U16 | DType::Bool => {
                Some(OutKind::I32)
            }
            _ => None,
        };
        match (&s.shape, scalar_kind) {
            (Shape::Scalar, Some(kind)) => {
                let from_bool = s.dtype == DType::Bool;
                let semantic = from_bool
                    .then(|| "boolean".to_string())
                    .filter(|_| !s.metadata.contains_key("semantic"));
                mappings.push(Mapping {
                    input: i,
                    element: None,
                    out: planned.len(),
                    kind,
                    from_bool,
                });
                planned.push(PlannedSignal {
                    spec: spec(s.name.clone(), kind, semantic),
                    kind,
                });
            }
            (Shape::Fixed(dims), _) if s.dtype.is_float() => {
                let ty = match dims.as_slice() {
                    [3] => Some(SignalType::Vec3),
                    [4] => Some(SignalType::Quat),
                    [3, 3] | [9] => Some(SignalType::Mat3),
                    _ => None,
                };
                match ty {
                    Some(ty) => {
                        for (k, suffix) in ty.components().iter().enumerate() {
                            mappings.push(Mapping {
                                input: i,
                                element: Some(k),
                                out: planned.len(),
                                kind: OutKind::F64,
                                from_bool: false,
                            });
                            planned.push(PlannedSignal {
                                spec: spec(format!("{}.{suffix}", s.name), OutKind::F64, None),
                                kind: OutKind::F64,
                            });
                        }
                    }
                    None => unfit.push(format!("{}.{} ({}{dims:?})", stream.name, s.name, s.dtype)),
                }
            }
            _ => unfit.push(format!(
                "{}.{} ({} {:?})",
                stream.name, s.name, s.dtype, s.shape
            )),
        }
    }
    mappings
}

impl RecordingWriter for IcarusH5Writer {
    fn write_header(&mut self, header: &Header, schema: &CoreSchema) -> Result<()> {
        if self.failed {
            return Err(CoreError::invalid("the writer failed before"));
        }
        let r = self.start(header, schema);
        if r.is_err() {
            self.failed = true;
            self.open = None;
        } else {
            self.streams = Some(schema.clone());
        }
        r.map_err(|e| e.in_file(&self.path))
    }

    fn write_frame(&mut self, frame: &FrameBuf) -> Result<()> {
        if self.failed {
            return Err(CoreError::invalid("the writer failed before"));
        }
        let r = self.frame(frame);
        match &r {
            Ok(()) => self.written = self.open.as_ref().map_or(0, |o| o.rows),
            Err(_) => self.failed = true,
        }
        r.map_err(|e| e.in_file(&self.path))
    }

    fn finish(&mut self) -> Result<()> {
        if self.failed {
            self.open = None;
            return Err(CoreError::invalid("the writer failed before"));
        }
        let Some(mut open) = self.open.take() else {
            return Ok(());
        };
        let done = (|| -> Result<()> {
            open.flush()?;
            if let Some(file) = open.file.take() {
                guard(
                    || format!("closing {}", open.temp.path().display()),
                    || file.close(),
                )?;
            }
            Ok(())
        })();
        // The file is closed (or dropped) before its temporary name is moved or removed.
        let mut temp = open.temp;
        let done = done.and_then(|()| Ok(temp.persist()?));
        if done.is_err() {
            self.failed = true;
        }
        done.map_err(|e| e.in_file(&self.path))
    }
}

/// Reads `reader` to the end and writes it as an Icarus HDF5 recording at `path` (replacing a
/// file already there). Returns the number of frames written.
///
/// `reader` can be an [`IcarecRecording`](crate::IcarecRecording) (ICAREC → Icarus HDF5) or
/// any reader of the generic model that [`IcarusH5Writer`] accepts.
pub fn write_icarus_h5(
    reader: &mut dyn RecordingReader,
    path: &Path,
    options: &IcarusH5Options,
) -> Result<u64> {
    let mut writer = IcarusH5Writer::new(path, options.clone());
    writer.write_header(reader.header(), reader.schema())?;
    let mut row = FrameBuf::default();
    while reader.read_frame(&mut row)? {
        writer.write_frame(&row)?;
    }
    let frames = writer.frames();
    writer.finish()?;
    Ok(frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_text_matches_vulcan_layout() {
        let specs = [
            SchemaSignal {
                name: "position.x".into(),
                type_name: "double".into(),
                lifecycle: Lifecycle::Dynamic,
                unit: Some("m".into()),
                semantic: None,
            },
            SchemaSignal {
                name: "gnc.phase".into(),
                type_name: "int32".into(),
                lifecycle: Lifecycle::Static,
                unit: None,
                semantic: Some("enum".into()),
            },
        ];
        let text = schema_text(&specs);
        assert_eq!(
            text,
            "{\n  \"signals\": [\n    {\n      \"name\": \"position.x\",\n      \"type\": \"double\",\n      \"lifecycle\": \"dynamic\",\n      \"offset\": 0,\n      \"unit\": \"m\"\n    },\n    {\n      \"name\": \"gnc.phase\",\n      \"type\": \"int32\",\n      \"lifecycle\": \"static\",\n      \"offset\": 8,\n      \"semantic\": \"enum\"\n    }\n  ],\n  \"frame_size_bytes\": 16\n}"
        );
        let mut integrity = Integrity::default();
        let parsed = parse_schema(&text, &mut integrity, true).unwrap();
        assert_eq!(parsed, specs);
        assert!(integrity.warnings.is_empty());
    }

    #[test]
    fn guard_turns_a_panic_into_an_error() {
        let e = guard(
            || "the dataset /x".into(),
            || -> std::result::Result<(), hdf5_pure::Error> { panic!("index out of bounds") },
        )
        .unwrap_err();
        assert_eq!(e.kind(), recfmt_core::ErrorKind::Malformed);
        assert!(
            e.to_string()
                .contains("the dataset /x (hdf5-pure panicked: index out of bounds)"),
            "{e}"
        );
    }

    #[test]
    fn schema_errors_name_the_attribute() {
        let mut integrity = Integrity::default();
        let e = parse_schema("{\"signals\": 3}", &mut integrity, false).unwrap_err();
        assert!(e.to_string().contains("/metadata attribute schema"), "{e}");
        let e = parse_schema(
            "{\"signals\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}",
            &mut integrity,
            false,
        )
        .unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        let e = parse_schema("not json", &mut integrity, false).unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }
}
