//! [`IcarusH5Writer`]: the generic model written as an Icarus HDF5 recording, through the
//! HDF5 writing module `recfmt-h5` (every dataset declared empty, then grown a chunk at a
//! time).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use hdf5_pure::FileBuilder;
use recfmt_core::{
    ArrayValue, DType, Error as CoreError, FrameBuf, Header, RecordingReader, RecordingWriter,
    Replace, Result, Schema as CoreSchema, Shape, StreamDesc, TimeSystem, Value,
};
use recfmt_h5::{ChunkedWriter, ColumnBuffer, H5Output, declare_appendable, text};

use super::schema::{Lifecycle, SchemaSignal, schema_text};
use super::{DEFAULT_CHUNK_ROWS, MAX_CHUNK_ROWS, WRITE_BUDGET};
use crate::recording::{DYNAMIC_STREAM, STATIC_STREAM};
use crate::types::SignalType;

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
    fn datatype(self) -> hdf5_pure::Datatype {
        match self {
            OutKind::F64 => hdf5_pure::make_f64_type(),
            OutKind::I32 => hdf5_pure::make_i32_type(),
            OutKind::I64 => hdf5_pure::make_i64_type(),
        }
    }

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

/// One output dataset with the rows not written yet, encoded as stored.
#[derive(Debug)]
struct OutColumn {
    kind: OutKind,
    buffer: ColumnBuffer,
}

impl OutColumn {
    /// Appends one value, writing the chunk it completes.
    fn push(&mut self, v: Scalar, chunks: &mut ChunkedWriter) -> Result<()> {
        // The values were converted for this column's kind, so the casts are exact.
        match (self.kind, v) {
            (OutKind::F64, Scalar::F(x)) => self.buffer.push(&x.to_le_bytes(), chunks),
            (OutKind::F64, Scalar::I(x)) => self.buffer.push(&(x as f64).to_le_bytes(), chunks),
            (OutKind::I32, Scalar::I(x)) => self
                .buffer
                .push(&i32::try_from(x).unwrap_or_default().to_le_bytes(), chunks),
            (OutKind::I32, Scalar::F(x)) => self.buffer.push(&(x as i32).to_le_bytes(), chunks),
            (OutKind::I64, Scalar::I(x)) => self.buffer.push(&x.to_le_bytes(), chunks),
            (OutKind::I64, Scalar::F(x)) => self.buffer.push(&(x as i64).to_le_bytes(), chunks),
        }
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
struct Open {
    // Field order matters on drop: the columns, then the chunk writer (its dataset handles
    // go), then the output (closed, and removed when not finished).
    time: OutColumn,
    columns: Vec<OutColumn>,
    chunks: ChunkedWriter,
    output: H5Output,
    dynamic: usize,
    statics: Option<usize>,
    dynamic_plan: Vec<Mapping>,
    static_plan: Vec<Mapping>,
    /// Values of the static signals (indexed like `columns`), once the static row came.
    static_values: Option<Vec<Scalar>>,
    scratch: Vec<Scalar>,
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

        // Declare everything (empty, unlimited, chunked), write that skeleton, then open it
        // for bounded-memory appends.
        let deflate = self.options.deflate;
        let mut builder = FileBuilder::new();
        let mut signals = builder.create_group("signals");
        for p in &planned {
            let d = declare_appendable(
                signals.create_dataset(&p.spec.name),
                p.kind.datatype(),
                &[],
                chunk_rows,
                deflate,
            );
            if let Some(u) = p.spec.unit.as_deref().filter(|u| !u.is_empty()) {
                d.set_attr("unit", text(u));
            }
            if let Some(m) = p.spec.semantic.as_deref().filter(|m| !m.is_empty()) {
                d.set_attr("semantic", text(m));
            }
        }
        builder.add_group(signals.finish());
        let mut metadata = builder.create_group("metadata");
        let specs: Vec<SchemaSignal> = planned.iter().map(|p| p.spec.clone()).collect();
        metadata.set_attr("schema", text(schema_text(&specs)));
        let created_at = header
            .metadata
            .get("created_at")
            .cloned()
            .unwrap_or_else(recfmt_core::now_rfc3339);
        metadata.set_attr("created_at", text(created_at));
        builder.add_group(metadata.finish());
        let time = declare_appendable(
            builder.create_dataset("time"),
            OutKind::F64.datatype(),
            &[],
            chunk_rows,
            deflate,
        );
        if let Some(t) = header.time
            && (t.system != TimeSystem::Met || t.has_epoch())
        {
            time.set_attr("system", text(t.system.name()));
            if let Some(epoch) = t.epoch_text() {
                time.set_attr("epoch_iso", text(epoch));
            }
        }
        let output = H5Output::create(&self.path, self.replace, builder)?;
        let threads = recfmt_h5::compression_threads(deflate, 0);
        let mut chunks = ChunkedWriter::for_output(&output, threads)?;
        let chunk_bytes = chunk_rows * 8;
        let mut column = |path: &str, kind: OutKind| -> Result<OutColumn> {
            let id = chunks.open(output.file(), path)?;
            // Every Icarus element is 8 bytes but int32's 4.
            let bytes = if kind == OutKind::I32 {
                chunk_rows * 4
            } else {
                chunk_bytes
            };
            Ok(OutColumn {
                kind,
                buffer: ColumnBuffer::new(id, bytes),
            })
        };
        let time = column("time", OutKind::F64)?;
        let columns = planned
            .iter()
            .map(|p| column(&format!("signals/{}", p.spec.name), p.kind))
            .collect::<Result<Vec<_>>>()?;
        let has_statics = !static_plan.is_empty();
        self.open = Some(Open {
            time,
            scratch: vec![Scalar::F(0.0); columns.len()],
            columns,
            chunks,
            output,
            dynamic,
            statics,
            dynamic_plan,
            static_plan,
            static_values: (!has_statics).then(Vec::new),
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
        // Every column's chunk fills at the same row, and they are written in column order.
        open.time.push(Scalar::F(t), &mut open.chunks)?;
        for (c, v) in open.columns.iter_mut().zip(&open.scratch) {
            c.push(*v, &mut open.chunks)?;
        }
        open.rows += 1;
        Ok(())
    }
}

impl Open {
    /// Writes the chunks still being compressed, then every column's partial last chunk,
    /// closes the file and moves it to its name.
    fn finish(self) -> Result<()> {
        let Open {
            mut time,
            mut columns,
            mut chunks,
            output,
            ..
        } = self;
        let written = (|| {
            chunks.drain()?;
            time.buffer.finish(&mut chunks)?;
            for c in &mut columns {
                c.buffer.finish(&mut chunks)?;
            }
            Ok(())
        })();
        // The datasets are let go before the file closes.
        drop(chunks);
        written.and_then(|()| output.finish())
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
        let Some(open) = self.open.take() else {
            return Ok(());
        };
        let done = open.finish();
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
