//! [`IcarecWriter`]: generic streams written as an ICAREC directory, each column stored by
//! the [`FieldKind`] that also decodes it.

use std::path::{Path, PathBuf};

use recfmt_core::{
    ArrayValue, AtomicDir, FrameBuf, Header, RecordingWriter, Replace, Schema as CoreSchema, Shape,
    SignalDesc, StreamDesc, Value, WriteOptions,
};
use semver::Version;

use super::fields::FieldKind;
use super::{DYNAMIC_STREAM, STATIC_STREAM};
use crate::error::{Error, Result};
use crate::schema::{Lifecycle, Schema, SchemaBuilder, SignalSpec};
use crate::time::TimeSpec;
use crate::types::SignalType;
use crate::writer::{MetadataMode, Writer, WriterOptions, recorder};
use crate::{DYNAMIC_FILE, METADATA_FILE, SCHEMA_FILE, STATIC_FILE};

/// Creates a writer for the registry, refusing at once a folder that holds files unless
/// `write` allows replacing (see [`IcarecWriter::create`]).
pub(crate) fn create_boxed(
    path: &Path,
    write: &WriteOptions,
) -> recfmt_core::Result<Box<dyn RecordingWriter>> {
    Ok(Box::new(IcarecWriter::create(path, write.replace)?))
}

/// The files of a recording folder.
pub(crate) const RECORDING_FILES: [&str; 4] =
    [SCHEMA_FILE, STATIC_FILE, DYNAMIC_FILE, METADATA_FILE];

/// How one input column is stored.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// Time column or nothing: not stored.
    Skip,
    /// One 8-byte field (a scalar, or one element of a composite) at this byte offset.
    Field(usize, FieldKind),
    /// A whole fixed-size f64 array (n elements) at this byte offset.
    Array(usize, usize),
}

#[derive(Debug)]
struct Open {
    writer: Writer,
    dynamic: usize,
    statics: Option<usize>,
    dynamic_plan: Vec<Slot>,
    static_plan: Vec<Slot>,
    payload: Vec<u8>,
    static_block: Vec<u8>,
    rows: u64,
}

/// Writes generic streams as an ICAREC directory: a [`RecordingWriter`].
///
/// Accepts one per-frame stream (named `dynamic`, or the only stream not named `static`) and
/// an optional one-row `static` stream. Numeric scalar columns map to `double` (f32, f64),
/// `int64` (i64, u32, u64), `int32` (i8–i32, u8, u16) or `bool`; fixed f64 arrays of shape
/// `[3]`, `[4]` and `[3, 3]` map to `Vec3`, `Quat` and `Mat3`; and consecutive columns that
/// carry the `icarec.signal` / `icarec.element` metadata of [`IcarecRecording`](super::IcarecRecording) are joined
/// back into their composite signal. Null doubles are written as NaN; a null integer or
/// boolean is an error.
#[derive(Debug)]
pub struct IcarecWriter {
    path: PathBuf,
    replace: Replace,
    /// The temporary folder written, moved into place by `finish`.
    folder: Option<AtomicDir>,
    open: Option<Open>,
    streams: Option<CoreSchema>,
}

impl IcarecWriter {
    /// A writer that will create the recording folder `path`, checked when the header is
    /// written (see [`IcarecWriter::create`]; `overwrite` allows replacing).
    pub fn new(path: &Path, overwrite: bool) -> Self {
        IcarecWriter {
            path: path.to_path_buf(),
            replace: Replace::forced(overwrite),
            folder: None,
            open: None,
            streams: None,
        }
    }

    /// A writer that will create the recording folder `path`, checked now: the recording is
    /// written into a temporary folder beside it and moved into place by
    /// [`RecordingWriter::finish`]. A folder that already holds files is refused unless
    /// `replace` allows replacing; then the recording's files replace those of the same
    /// names (which must be regular files), others stay, and a failure puts back every file
    /// already moved. An unfinished writer leaves nothing.
    pub fn create(path: &Path, replace: Replace) -> Result<Self> {
        let folder =
            AtomicDir::create(path, replace, &RECORDING_FILES).map_err(|e| Error::io(path, e))?;
        Ok(IcarecWriter {
            folder: Some(folder),
            ..IcarecWriter::new(path, replace == Replace::RegularFile)
        })
    }
}

/// Plans the signals of one stream: specs to add (with their first column) and unfit columns.
fn plan_stream(
    stream: &StreamDesc,
    lifecycle: Lifecycle,
    specs: &mut Vec<(SignalSpec, Vec<usize>, SlotPlan)>,
    unfit: &mut Vec<String>,
) {
    let mut i = 0;
    let signals = &stream.signals;
    while i < signals.len() {
        if i == stream.time || Some(i) == stream.entity {
            i += 1;
            continue;
        }
        let s = &signals[i];
        // A run of expanded composite columns.
        if let (Some(base), Some(ty)) = (
            s.metadata.get("icarec.signal"),
            s.metadata
                .get("icarec.type")
                .and_then(|t| SignalType::parse(t)),
        ) && ty.is_composite()
        {
            let n = ty.components().len();
            let run_ok = (0..n).all(|k| {
                signals.get(i + k).is_some_and(|c| {
                    i + k != stream.time
                        && c.metadata.get("icarec.signal") == Some(base)
                        && c.metadata.get("icarec.element").map(String::as_str)
                            == Some(ty.components()[k])
                        && c.dtype.is_float()
                        && c.shape == Shape::Scalar
                })
            });
            if run_ok {
                let spec = spec_from(base, &ty, lifecycle, s);
                specs.push((spec, (i..i + n).collect(), SlotPlan::Elements));
                i += n;
                continue;
            }
        }
        match (&s.shape, FieldKind::for_dtype(s.dtype)) {
            (Shape::Scalar, Some((ty, kind))) => {
                let mut ty = ty;
                // Keep the declared ICAREC type when the column says it (int32 stays int32).
                if let Some(t) = s
                    .metadata
                    .get("icarec.type")
                    .and_then(|t| SignalType::parse(t))
                    && !t.is_composite()
                    && FieldKind::for_dtype(s.dtype).is_some_and(|(k, _)| k == t)
                {
                    ty = t;
                }
                let spec = spec_from(&s.name, &ty, lifecycle, s);
                specs.push((spec, vec![i], SlotPlan::Scalar(kind)));
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
                        let n = ty.components().len();
                        let spec = spec_from(&s.name, &ty, lifecycle, s);
                        specs.push((spec, vec![i], SlotPlan::Array(n)));
                    }
                    None => unfit.push(format!("{}.{} ({}{dims:?})", stream.name, s.name, s.dtype)),
                }
            }
            _ => unfit.push(format!(
                "{}.{} ({} {:?})",
                stream.name, s.name, s.dtype, s.shape
            )),
        }
        i += 1;
    }
}

#[derive(Debug, Clone, Copy)]
enum SlotPlan {
    Scalar(FieldKind),
    Elements,
    Array(usize),
}

fn spec_from(name: &str, ty: &SignalType, lifecycle: Lifecycle, s: &SignalDesc) -> SignalSpec {
    let mut spec = SignalSpec::new(name, ty, lifecycle);
    spec.units = s.unit.clone();
    spec.semantic = s.metadata.get("semantic").cloned();
    spec.description = s.metadata.get("description").cloned();
    spec.enum_values = s
        .metadata
        .get("enum_values")
        .and_then(|e| serde_json::from_str(e).ok());
    spec
}

fn slots(
    schema: &Schema,
    planned: &[(SignalSpec, Vec<usize>, SlotPlan)],
    lifecycle: Lifecycle,
    width: usize,
) -> Vec<Slot> {
    let mut out = vec![Slot::Skip; width];
    for (spec, columns, plan) in planned.iter().filter(|(s, ..)| s.lifecycle == lifecycle) {
        let Some(p) = schema.placed(&spec.name) else {
            continue;
        };
        match plan {
            SlotPlan::Scalar(kind) => out[columns[0]] = Slot::Field(p.offset, *kind),
            SlotPlan::Array(n) => out[columns[0]] = Slot::Array(p.offset, *n),
            SlotPlan::Elements => {
                for (k, &c) in columns.iter().enumerate() {
                    out[c] = Slot::Field(p.offset + 8 * k, FieldKind::F64);
                }
            }
        }
    }
    out
}

fn encode_row(
    plan: &[Slot],
    values: &[Value],
    names: &StreamDesc,
    out: &mut [u8],
    row: u64,
) -> Result<()> {
    if values.len() != names.signals.len() {
        return Err(Error::invalid(format!(
            "row {row} of stream {:?} has {} values for {} signals",
            names.name,
            values.len(),
            names.signals.len()
        )));
    }
    for (i, (slot, value)) in plan.iter().zip(values).enumerate() {
        let name = || &names.signals[i].name;
        let bad = |what: &str| {
            Error::invalid(format!(
                "row {row} of stream {:?}: column {:?}: {what}, got {value:?}",
                names.name,
                name()
            ))
        };
        match *slot {
            Slot::Skip => {}
            Slot::Field(at, kind) => kind.encode(value, &mut out[at..at + 8]).map_err(&bad)?,
            Slot::Array(at, n) => {
                let mut put = |k: usize, v: f64| {
                    out[at + 8 * k..at + 8 * k + 8].copy_from_slice(&v.to_le_bytes());
                };
                match value {
                    Value::Array(ArrayValue::F64(v)) if v.len() == n => {
                        v.iter().enumerate().for_each(|(k, x)| put(k, *x));
                    }
                    Value::Array(ArrayValue::F32(v)) if v.len() == n => {
                        v.iter()
                            .enumerate()
                            .for_each(|(k, x)| put(k, f64::from(*x)));
                    }
                    Value::Null => (0..n).for_each(|k| put(k, f64::NAN)),
                    _ => return Err(bad(&format!("expected {n} floats"))),
                }
            }
        }
    }
    Ok(())
}

impl IcarecWriter {
    fn start(&mut self, header: &Header, schema: &CoreSchema) -> Result<()> {
        let statics = schema.stream_index(STATIC_STREAM);
        let others: Vec<usize> = (0..schema.streams.len())
            .filter(|&i| Some(i) != statics)
            .collect();
        let dynamic = match (schema.stream_index(DYNAMIC_STREAM), others.as_slice()) {
            (Some(d), _) => d,
            (None, [only]) => *only,
            _ => {
                return Err(Error::invalid(format!(
                    "icarec holds one per-frame stream (and an optional \"static\" one); this recording has streams {}",
                    schema
                        .streams
                        .iter()
                        .map(|s| format!("{:?}", s.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        };
        let extra: Vec<&str> = others
            .iter()
            .filter(|&&i| i != dynamic)
            .map(|&i| schema.streams[i].name.as_str())
            .collect();
        if !extra.is_empty() {
            return Err(Error::invalid(format!(
                "icarec holds one per-frame stream and an optional \"static\" one; cannot also write streams {}",
                extra.join(", ")
            )));
        }
        if schema.streams[dynamic].entity.is_some() {
            return Err(Error::invalid(
                "icarec cannot hold entity-keyed streams (one row per entity per tick)",
            ));
        }
        let mut planned = Vec::new();
        let mut unfit = Vec::new();
        plan_stream(
            &schema.streams[dynamic],
            Lifecycle::Dynamic,
            &mut planned,
            &mut unfit,
        );
        if let Some(s) = statics {
            plan_stream(
                &schema.streams[s],
                Lifecycle::Static,
                &mut planned,
                &mut unfit,
            );
        }
        if !unfit.is_empty() {
            return Err(Error::invalid(format!(
                "icarec holds numeric scalars, booleans and f64 vectors [3], quaternions [4] and matrices [3, 3] only; cannot write {}",
                unfit.join(", ")
            )));
        }

        let meta = &header.metadata;
        let version = |key: &str, fallback: &str| {
            meta.get(key)
                .and_then(|v| Version::parse(v).ok())
                .unwrap_or_else(|| Version::parse(fallback).unwrap_or(Version::new(0, 0, 0)))
        };
        let schema_version = meta
            .get("schema_version")
            .or(Some(&header.version))
            .and_then(|v| Version::parse(v).ok())
            .unwrap_or(Version::new(1, 0, 0));
        let created_at = meta
            .get("created_at")
            .cloned()
            .unwrap_or_else(recfmt_core::now_rfc3339);
        let mut doc = crate::SchemaDoc::new(
            schema_version,
            version("icarus_version", "0.0.0"),
            &created_at,
        );
        if let Some(t) = &header.time {
            doc.time = Some(TimeSpec::new(t.system, t.epoch_text().as_deref()));
        }
        let mut builder = SchemaBuilder::from_doc(doc);
        for (spec, ..) in &planned {
            builder = builder.spec(spec.clone());
        }
        let built = builder.build()?;
        let layout = built.layout().clone();
        let dynamic_plan = slots(
            &built,
            &planned,
            Lifecycle::Dynamic,
            schema.streams[dynamic].signals.len(),
        );
        let static_plan = statics.map_or_else(Vec::new, |s| {
            slots(
                &built,
                &planned,
                Lifecycle::Static,
                schema.streams[s].signals.len(),
            )
        });
        let static_block = vec![0u8; layout.static_size];
        let options = WriterOptions {
            metadata: MetadataMode::Computed(crate::MetadataDoc {
                recorder: Some(recorder()),
                ..crate::MetadataDoc::default()
            }),
            overwrite: false,
            compute_checksum: true,
        };
        let folder = match self.folder.take() {
            Some(folder) => folder,
            None => AtomicDir::create(&self.path, self.replace, &RECORDING_FILES)
                .map_err(|e| Error::io(&self.path, e))?,
        };
        let writer = Writer::create(folder.path(), built, &static_block, options)?;
        self.folder = Some(folder);
        self.open = Some(Open {
            writer,
            dynamic,
            statics,
            dynamic_plan,
            static_plan,
            payload: vec![0u8; layout.dynamic_size],
            static_block,
            rows: 0,
        });
        Ok(())
    }
}

impl RecordingWriter for IcarecWriter {
    fn write_header(&mut self, header: &Header, schema: &CoreSchema) -> recfmt_core::Result<()> {
        self.start(header, schema)?;
        self.streams = Some(schema.clone());
        Ok(())
    }

    fn write_frame(&mut self, frame: &FrameBuf) -> recfmt_core::Result<()> {
        let (Some(open), Some(schema)) = (self.open.as_mut(), self.streams.as_ref()) else {
            return Err(Error::invalid("write_header must come before write_frame").into());
        };
        open.rows += 1;
        let desc = schema.streams.get(frame.stream).ok_or_else(|| {
            Error::invalid(format!("row {}: no stream {}", open.rows, frame.stream))
        })?;
        if Some(frame.stream) == open.statics {
            encode_row(
                &open.static_plan,
                &frame.values,
                desc,
                &mut open.static_block,
                open.rows,
            )?;
            open.writer.rewrite_statics(&open.static_block)?;
            return Ok(());
        }
        if frame.stream != open.dynamic {
            return Err(Error::invalid(format!(
                "row {}: stream {:?} is not written to icarec",
                open.rows, desc.name
            ))
            .into());
        }
        let t = frame.time_seconds(desc).ok_or_else(|| {
            Error::invalid(format!(
                "row {} of stream {:?} has no time value",
                open.rows, desc.name
            ))
        })?;
        encode_row(
            &open.dynamic_plan,
            &frame.values,
            desc,
            &mut open.payload,
            open.rows,
        )?;
        open.writer.append(t, &open.payload)?;
        Ok(())
    }

    fn finish(&mut self) -> recfmt_core::Result<()> {
        let Some(open) = self.open.as_mut() else {
            return Ok(());
        };
        open.writer.finish()?;
        if let Some(folder) = self.folder.take() {
            folder.commit().map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(())
    }
}
