//! [`IcarusH5Recording`]: an Icarus HDF5 file read as the generic streams ICAREC gives, one
//! row at a time through [`RowWriter`], a window of rows per dataset at a time.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;

use hdf5_pure::{AttrValue, ChunkCacheConfig, Dataset, DatasetAccessProperties};
use recfmt_core::{
    BatchSet, DType, FormatInfo, FrameBuf, Header, Integrity, IntegrityStatus, Limits, Metadata,
    ReadOptions, RecordingReader, Result, RowWriter, Schema as CoreSchema, SignalDesc, StreamDesc,
    TimeBase, TimeReference, TimeSystem,
};

use super::runs::copy_run;
use super::schema::{Lifecycle, SchemaSignal, parse_schema};
use super::{
    H5_FORMAT_ID, H5_INFO, HDF5_MAGIC, MAX_SHORT_ATTR, MAX_WINDOW_ROWS, READ_BUDGET, guard,
    malformed, not_icarus,
};
use crate::recording::{DYNAMIC_STREAM, STATIC_STREAM};
use crate::types::SignalType;

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
pub(super) enum Window {
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

    /// Pushes row `i` of the window as the next value of `row` (null past its end, which
    /// a window checked by [`Source::read`] never is).
    #[inline]
    fn push(&self, row: &mut RowWriter<'_>, i: usize) -> Result<()> {
        match self {
            Window::F64(v) => match v.get(i) {
                Some(&x) => row.push(x),
                None => row.push_null(),
            },
            Window::I64(v) => match v.get(i) {
                Some(&x) => row.push(x),
                None => row.push_null(),
            },
            Window::U64(v) => match v.get(i) {
                Some(&x) => row.push(x),
                None => row.push_null(),
            },
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

/// An Icarus HDF5 recording read as generic streams (the layout it reads is in the `h5`
/// module docs).
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
    /// The window of each dynamic dataset, read when a row first wants one of its values:
    /// a column a projection leaves out is never read.
    window: Vec<Option<Window>>,
    next: u64,
    /// The row the reads end before: [`Self::rows`], or earlier after
    /// [`RecordingReader::stop_time`].
    end_row: u64,
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

        let dynamic_count = dynamic.len();
        let columns = dynamic_count as u64 + 1;
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
            window: std::iter::repeat_with(|| None)
                .take(dynamic_count)
                .collect(),
            next: 0,
            end_row: rows,
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

    /// Reads the window of `/time` that starts at row `start`; the other datasets' windows
    /// are read when a row first needs them.
    fn load_window(&mut self, start: u64) -> Result<()> {
        let count = self.window_rows.min(self.rows - start);
        self.window_time = self.time.read(start, count)?;
        self.window.iter_mut().for_each(|w| *w = None);
        self.window_start = start;
        Ok(())
    }

    /// The first row whose time is at least `seconds` (`rows` when none is): a binary search
    /// over `/time`, one value read per step (from hdf5-pure's chunk cache after the first
    /// read of a chunk). Assumes `/time` ascending, as the writer stores it.
    fn first_row_at(&self, seconds: f64) -> Result<u64> {
        let base = self.schema.streams[0].time_base;
        let (mut lo, mut hi) = (0, self.rows);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let t = match self.time.read(mid, 1)? {
                Window::F64(v) => v.first().copied(),
                Window::I64(v) => v.first().map(|&x| x as f64),
                Window::U64(v) => v.first().map(|&x| x as f64),
            };
            match t.map(|t| base.to_seconds_f64(t)) {
                Some(t) if t < seconds => lo = mid + 1,
                _ => hi = mid,
            }
        }
        Ok(lo)
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

    /// The one row of the `static` stream: the first frame's values of the static datasets.
    fn read_static_row(&self, row: &mut RowWriter<'_>) -> Result<()> {
        if !row.begin(1)? {
            return Ok(());
        }
        for source in std::iter::once(&self.time).chain(&self.statics) {
            if row.wants_next() {
                source.read(0, 1)?.push(row, 0)?;
            } else {
                row.skip()?;
            }
        }
        row.finish()
    }

    /// One frame of the `dynamic` stream, from the windows (each read when first wanted).
    fn read_dynamic_row(&mut self, row: &mut RowWriter<'_>, i: usize) -> Result<()> {
        if !row.begin(0)? {
            return Ok(());
        }
        if row.wants_next() {
            self.window_time.push(row, i)?;
        } else {
            row.skip()?;
        }
        let count = self.window_time.len() as u64;
        for (window, source) in self.window.iter_mut().zip(&self.dynamic) {
            if !row.wants_next() {
                row.skip()?;
                continue;
            }
            let window = match window {
                Some(w) => w,
                None => window.insert(source.read(self.window_start, count)?),
            };
            window.push(row, i)?;
        }
        row.finish()
    }

    /// The batch view of the same windows: runs of rows copied into the dynamic columns (see
    /// [`RecordingReader::read_batches`] below for why). A run a column cannot take exactly
    /// as the row path would store it goes through [`RecordingReader::read_frame`], that is
    /// through `read_row`, so its error is the row path's.
    fn read_batch_runs(&mut self, dst: &mut BatchSet) -> Result<bool> {
        if !self.started {
            self.started = true;
            if !self.statics.is_empty() && self.rows > 0 {
                let mut row = FrameBuf::default();
                self.read_static_row(&mut RowWriter::frame(&mut row))?;
                if dst.wants(row.stream) {
                    dst.push_frame(&row, &self.schema)?;
                }
            }
        }
        loop {
            if dst.is_full() {
                return Ok(true);
            }
            if self.next >= self.end_row {
                return Ok(false);
            }
            let i = self.window_index()?;
            let left = usize::try_from(self.end_row - self.next).unwrap_or(usize::MAX);
            let available = self.window_time.len().saturating_sub(i).min(left);
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
            let n = available.min(dst.stream(0).room(dst.capacity()));
            let batch = dst.stream_mut(0);
            let mut fits = batch.columns().len() == self.window.len() + 1;
            if fits {
                // The windows of the columns the batch keeps (a left-out one is not read).
                let count = self.window_time.len() as u64;
                let kept = batch.columns()[1..].iter().map(|c| !c.is_skipped());
                let columns = self.window.iter_mut().zip(&self.dynamic).zip(kept);
                for ((window, source), kept) in columns {
                    if kept && window.is_none() {
                        *window = Some(source.read(self.window_start, count)?);
                    }
                }
                let windows = std::iter::once(Some(&self.window_time))
                    .chain(self.window.iter().map(Option::as_ref));
                fits = batch
                    .columns_mut()
                    .iter_mut()
                    .zip(windows)
                    .filter(|(c, _)| !c.is_skipped())
                    .all(|(c, w)| w.is_some_and(|w| copy_run(c.data_mut(), w, i, n, false)));
            }
            if fits {
                let windows = std::iter::once(Some(&self.window_time))
                    .chain(self.window.iter().map(Option::as_ref));
                for (c, w) in batch.columns_mut().iter_mut().zip(windows) {
                    if let (false, Some(w)) = (c.is_skipped(), w) {
                        copy_run(c.data_mut(), w, i, n, true);
                    }
                }
                batch.commit_rows(n);
                self.next += n as u64;
            } else {
                let mut row = FrameBuf::default();
                for _ in 0..n {
                    if !self.read_frame(&mut row)? {
                        break;
                    }
                    dst.push_frame(&row, &self.schema)?;
                }
            }
        }
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

    /// The static row first (when there are static signals and frames), then one frame per
    /// call.
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        if !self.started {
            self.started = true;
            if !self.statics.is_empty() && self.rows > 0 {
                self.read_static_row(row)?;
                return Ok(true);
            }
        }
        if self.next >= self.end_row {
            return Ok(false);
        }
        let i = self.window_index()?;
        self.read_dynamic_row(row, i)?;
        self.next += 1;
        Ok(true)
    }

    /// The column view of the windows `read_row` reads: runs of rows copied into the dynamic
    /// columns, anything else through `read_row`. Pushing every value through `RowWriter`
    /// alone converted a 327 MB file to Parquet 1.2-1.5x slower (2.7-3.5 s against 2.2-2.4 s
    /// with the copy, release, same run), since each value costs a dispatch where a run is one
    /// `extend_from_slice`.
    fn read_batches(&mut self, dst: &mut BatchSet) -> Result<bool> {
        if dst.len() != self.schema.streams.len() {
            return recfmt_core::read_batches_by_rows(self, dst);
        }
        self.read_batch_runs(dst)
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

    /// Starts the frames at the first whose time is at least `seconds`, found by a binary
    /// search over `/time`; the static row (the first frame's static values and time) still
    /// comes first. Before the first row only.
    fn seek_time(&mut self, seconds: f64) -> Result<bool> {
        if self.started || seconds.is_nan() {
            return Ok(false);
        }
        self.next = self.first_row_at(seconds)?.min(self.end_row);
        Ok(true)
    }

    /// Ends the frames before the first whose time is at least `seconds`.
    fn stop_time(&mut self, seconds: f64) -> bool {
        if self.started || seconds.is_nan() {
            return false;
        }
        match self.first_row_at(seconds) {
            Ok(row) => {
                self.end_row = row.max(self.next);
                true
            }
            Err(_) => false,
        }
    }
}
