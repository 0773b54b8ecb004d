//! The adapter between ICAREC and the generic recfmt model.
//!
//! Streams, in this order in the schema:
//!
//! * `dynamic`: one row per frame: `t` (f64 seconds, [`TimeBase::SECONDS`]) then every
//!   dynamic signal as scalar columns, composite ones expanded (`Vehicle.Nav.position.x`,
//!   `.y`, `.z`), which is how Icarus itself flattens vectors in its HDF5 and CSV output;
//! * `static`: one row: `t` (the first frame's time, or 0) then every static signal, expanded
//!   the same way. Its row comes first, before the frames.
//!
//! Each column carries metadata: `lifecycle`, `icarec.type` (the type as written), and for an
//! element of a composite `icarec.signal` (the composite's name) and `icarec.element`
//! (`x`, `w`, `xy`, ...); `semantic`, `enum_values` and `description` when the schema has them.
//! The writer uses these to rebuild composite signals, so ICAREC → generic → ICAREC keeps
//! every type.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use recfmt_core::{
    ArrayValue, AtomicDir, BatchSet, ColumnData, DType, FormatInfo, FrameBuf, Header, Integrity,
    Metadata, ReadOptions, RecordingReader, RecordingWriter, Replace, Schema as CoreSchema, Shape,
    SignalDesc, StreamBatch, StreamDesc, TimeBase, TimeReference, TimeSystem, Value, WriteOptions,
};
use semver::Version;

use crate::dir::{IcarecDir, OpenOptions};
use crate::error::{Error, Result};
use crate::frames::{FrameReader, RawFrame};
use crate::schema::{Column, Lifecycle, Placed, Schema, SchemaBuilder, SignalSpec};
use crate::time::TimeSpec;
use crate::types::{SignalType, f64_at, i64_at};
use crate::writer::{MetadataMode, Writer, WriterOptions, recorder};
use crate::{DYNAMIC_FILE, METADATA_FILE, SCHEMA_FILE, STATIC_FILE};

/// Name of the per-frame stream.
pub const DYNAMIC_STREAM: &str = "dynamic";
/// Name of the one-row stream of static signals.
pub const STATIC_STREAM: &str = "static";

/// Static facts about ICAREC.
pub static INFO: FormatInfo = FormatInfo {
    id: crate::FORMAT_ID,
    name: "ICAREC recording directory (Icarus simulator)",
    extensions: &["icarec"],
};

/// An ICAREC directory read as generic streams (see the module docs for the layout).
///
/// ```
/// use recfmt_core::{FrameBuf, RecordingReader, Value};
/// let dir = tempfile::tempdir()?;
/// recfmt_icarec::generate::write_all_types(dir.path(), 4)?;
/// let mut rec = recfmt_icarec::IcarecRecording::open(dir.path(), &Default::default())?;
/// let dynamic = &rec.schema().streams[0];
/// assert_eq!(dynamic.name, "dynamic");
/// assert!(dynamic.signal_index("Vehicle.Nav.position.x").is_some());
/// let mut row = FrameBuf::default();
/// let mut rows = 0;
/// while rec.read_frame(&mut row)? {
///     rows += 1;
/// }
/// assert_eq!(rows, 1 + 4); // the static row, then the frames
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct IcarecRecording {
    dir: IcarecDir,
    frames: FrameReader<BufReader<File>>,
    header: Header,
    schema: CoreSchema,
    frame: RawFrame,
    started: bool,
    pending: bool,
    irregular_warned: Vec<bool>,
    strict: bool,
    total: u64,
    /// The batch path: how each dynamic column is decoded, which columns are `int32` (their
    /// slots are checked on every frame, wanted or not, as the row path does), the row it
    /// reuses for the static row, and its block of raw frames.
    plan: Vec<ColumnPlan>,
    int32_checks: Vec<(usize, usize)>,
    row: FrameBuf,
    block: Vec<u8>,
}

impl IcarecRecording {
    /// Opens a recording directory (or a file inside one).
    pub fn open(path: &Path, options: &OpenOptions) -> Result<Self> {
        let dir = IcarecDir::open(path, options)?;
        Self::from_dir(dir, options.read.strict)
    }

    /// Wraps an opened directory.
    pub fn from_dir(dir: IcarecDir, strict: bool) -> Result<Self> {
        let mut frames = dir.frames()?;
        for w in &dir.integrity().warnings {
            frames.integrity_mut().warn(w.clone());
        }
        if let Some((offset, absent)) = dir.missing_frames() {
            frames.integrity_mut().truncate(offset, absent);
        }
        let header = header_of(&dir);
        let layout = dir.schema().layout();
        let mut schema = CoreSchema::default();
        for (name, columns) in [
            (DYNAMIC_STREAM, &layout.dynamic_columns),
            (STATIC_STREAM, &layout.static_columns),
        ] {
            let mut stream = StreamDesc::new(
                name,
                SignalDesc::scalar("t", DType::F64).with_unit("s"),
                TimeBase::SECONDS,
            );
            stream
                .signals
                .extend(columns.iter().map(|c| column_desc(dir.schema(), c)));
            schema.streams.push(stream);
        }
        schema.streams[0]
            .metadata
            .insert("stride_bytes".into(), layout.stride().to_string());
        let plan = batch_plan(layout);
        let int32_checks = plan
            .iter()
            .enumerate()
            .filter_map(|(c, p)| (p.kind == ColumnKind::I32).then_some((c, p.at?)))
            .collect();
        Ok(IcarecRecording {
            plan,
            int32_checks,
            row: FrameBuf::default(),
            block: Vec::new(),
            irregular_warned: vec![false; layout.placed.len()],
            total: dir.dynamic_len(),
            dir,
            frames,
            header,
            schema,
            frame: RawFrame::default(),
            started: false,
            pending: false,
            strict,
        })
    }

    /// The opened directory: schema, statics, metadata, [`IcarecDir::state_at`].
    pub fn dir(&self) -> &IcarecDir {
        &self.dir
    }

    /// Bytes of a torn last frame seen so far (to reproduce the file exactly).
    pub fn torn_tail(&self) -> &[u8] {
        self.frames.torn_tail()
    }

    fn fill(&mut self, dst: &mut FrameBuf, lifecycle: Lifecycle, t: f64) -> Result<()> {
        let layout = self.dir.schema().layout();
        let (stream, columns, payload, base): (usize, &[Column], &[u8], Option<u64>) =
            match lifecycle {
                Lifecycle::Dynamic => (
                    0,
                    &layout.dynamic_columns,
                    &self.frame.payload,
                    Some(self.frame.index * layout.stride() as u64 + 8),
                ),
                Lifecycle::Static => (1, &layout.static_columns, self.dir.statics(), None),
            };
        dst.reset(stream, columns.len() + 1);
        dst.values[0] = Value::Float(t);
        for (value, column) in dst.values[1..].iter_mut().zip(columns) {
            let p = &layout.placed[column.signal];
            let (v, irregular) = column_value(p, column.element, payload);
            *value = v;
            if irregular && !self.irregular_warned[column.signal] {
                let offset = base.unwrap_or(0) + p.offset as u64;
                report_irregular(
                    &self.dir,
                    self.strict,
                    &mut self.irregular_warned,
                    self.frames.integrity_mut(),
                    column,
                    lifecycle,
                    offset,
                )?;
            }
        }
        Ok(())
    }

    fn next(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        if !self.started {
            self.started = true;
            self.pending = self.frames.read_frame(&mut self.frame)?;
            if !self.dir.schema().layout().static_columns.is_empty() {
                let t = if self.pending { self.frame.t } else { 0.0 };
                self.fill(dst, Lifecycle::Static, t)?;
                return Ok(true);
            }
        }
        if self.pending {
            self.pending = false;
        } else if !self.frames.read_frame(&mut self.frame)? {
            return Ok(false);
        }
        let t = self.frame.t;
        self.fill(dst, Lifecycle::Dynamic, t)?;
        Ok(true)
    }
}

impl IcarecRecording {
    /// True when `dst` was made for this reader's schema, so frames can be decoded straight
    /// into its dynamic columns; otherwise the row path reports the mismatch.
    fn batch_fits(&self, dst: &BatchSet) -> bool {
        if dst.len() != self.schema.streams.len() || dst.is_empty() {
            return false;
        }
        let columns = dst.stream(0).columns();
        let scalar = |c: &recfmt_core::ColumnBuf, dtype: DType| {
            c.dtype() == dtype && c.width() == Some(1) && c.list_offsets().is_none()
        };
        columns.len() == self.plan.len() + 1
            && scalar(&columns[0], DType::F64)
            && columns[1..]
                .iter()
                .zip(&self.plan)
                .all(|(c, p)| scalar(c, p.kind.dtype()))
    }

    /// Counts the frames of a block as read, in order, with the row path's checks: the
    /// frame time, and the `int32` slots not yet reported. Returns how many frames passed
    /// and the error that stopped the rest.
    fn check_frames(&mut self, frames: &[u8], stride: usize) -> (usize, Option<Error>) {
        let layout = self.dir.schema().layout();
        let mut active: Vec<(usize, usize)> = self
            .int32_checks
            .iter()
            .copied()
            .filter(|&(c, _)| !self.irregular_warned[layout.dynamic_columns[c].signal])
            .collect();
        for (j, f) in frames.chunks_exact(stride).enumerate() {
            let index = self.frames.frames_read();
            if let Err(e) = self.frames.accept(f64_at(f, 0)) {
                return (j, Some(e));
            }
            if active.is_empty() {
                continue;
            }
            let mut reported = false;
            for &(c, at) in &active {
                if !irregular_int32(i64_at(f, at)) {
                    continue;
                }
                let column = &layout.dynamic_columns[c];
                if self.irregular_warned[column.signal] {
                    continue;
                }
                let offset = index * stride as u64 + at as u64;
                if let Err(e) = report_irregular(
                    &self.dir,
                    self.strict,
                    &mut self.irregular_warned,
                    self.frames.integrity_mut(),
                    column,
                    Lifecycle::Dynamic,
                    offset,
                ) {
                    return (j, Some(e));
                }
                reported = true;
            }
            if reported {
                active.retain(|&(c, _)| !self.irregular_warned[layout.dynamic_columns[c].signal]);
            }
        }
        (frames.len() / stride, None)
    }

    /// The batch path after the static row: frames read in blocks, checked in order, then
    /// decoded column by column into the dynamic batch (when wanted).
    fn read_frame_blocks(&mut self, dst: &mut BatchSet) -> recfmt_core::Result<bool> {
        let stride = self.frames.stride();
        let per_block = (BLOCK_BYTES / stride).max(1);
        let mut block = std::mem::take(&mut self.block);
        let result = (|| loop {
            if dst.is_full() {
                return Ok(true);
            }
            let wanted = dst.wants(0);
            // Never read past the frame that fills the batch, so the next call (or
            // `read_frame`) continues exactly where the row path would.
            let room = if wanted {
                dst.stream(0).room(dst.capacity())
            } else {
                usize::MAX
            };
            let filled = self.frames.read_block(&mut block, room.min(per_block))?;
            let complete = filled / stride * stride;
            let (passed, failure) = self.check_frames(&block[..complete], stride);
            if wanted {
                decode_frames(
                    dst.stream_mut(0),
                    &self.plan,
                    &block[..passed * stride],
                    stride,
                )?;
            }
            if let Some(e) = failure {
                return Err(e.into());
            }
            if filled > complete {
                self.frames.end_torn(&block[complete..filled])?;
                return Ok(false);
            }
            if filled == 0 {
                return Ok(false);
            }
        })();
        self.block = block;
        result
    }
}

/// The value of element `element` of a placed signal, and whether its slot was irregular.
fn column_value(p: &Placed, element: usize, payload: &[u8]) -> (Value, bool) {
    let slot = p.slot(payload);
    if p.ty.is_composite() {
        return (Value::Float(f64_at(slot, element * 8)), false);
    }
    match p.ty.decode(slot) {
        Some((v, irregular)) => (v.element(0), irregular),
        None => (Value::Null, false),
    }
}

/// Reports an irregular `int32` slot at byte `offset` of its file: an error in strict mode,
/// otherwise a warning, once per signal.
fn report_irregular(
    dir: &IcarecDir,
    strict: bool,
    warned: &mut [bool],
    integrity: &mut Integrity,
    column: &Column,
    lifecycle: Lifecycle,
    offset: u64,
) -> Result<()> {
    let file = match lifecycle {
        Lifecycle::Dynamic => crate::frames::DYNAMIC_FILE,
        Lifecycle::Static => crate::frames::STATIC_FILE,
    };
    let expected = format!(
        "int32 {:?} as a sign-extended 8-byte slot (upper 4 bytes 0 or 0xffffffff)",
        column.name
    );
    if strict {
        return Err(Error::malformed(dir.file(file), offset, expected));
    }
    if let Some(w) = warned.get_mut(column.signal) {
        *w = true;
    }
    integrity.warn(format!(
        "{}: at byte {offset}: expected {expected}; the lower 4 bytes are used (further ones not reported)",
        dir.file(file).display()
    ));
    Ok(())
}

/// Bytes of raw frames the batch path reads at once: large enough to amortise the read call,
/// small enough that the column-by-column passes over the block stay in cache.
const BLOCK_BYTES: usize = 256 << 10;

/// The element type of a dynamic column, as stored in its 8-byte slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ColumnKind {
    F64,
    I64,
    I32,
    Bool,
}

impl ColumnKind {
    fn dtype(self) -> DType {
        match self {
            ColumnKind::F64 => DType::F64,
            ColumnKind::I64 => DType::I64,
            ColumnKind::I32 => DType::I32,
            ColumnKind::Bool => DType::Bool,
        }
    }
}

/// Where the batch path finds one dynamic column in a frame.
#[derive(Debug, Clone, Copy)]
struct ColumnPlan {
    kind: ColumnKind,
    /// Byte offset of the element's 8 bytes from the start of the frame (time included), or
    /// `None` when the slot lies outside the payload (the row path then gives zero).
    at: Option<usize>,
}

/// One [`ColumnPlan`] per dynamic column, in column order.
fn batch_plan(layout: &crate::schema::Layout) -> Vec<ColumnPlan> {
    layout
        .dynamic_columns
        .iter()
        .map(|c| {
            let p = &layout.placed[c.signal];
            let kind = match p.ty {
                SignalType::Int64 => ColumnKind::I64,
                SignalType::Int32 => ColumnKind::I32,
                SignalType::Bool => ColumnKind::Bool,
                _ => ColumnKind::F64,
            };
            // Mirrors `Placed::slot` and `f64_at`: an out-of-range slot or element reads as 0.
            let element = c.element.checked_mul(8);
            let in_slot = element
                .and_then(|e| e.checked_add(8))
                .is_some_and(|e| e <= p.size);
            let in_payload = p
                .offset
                .checked_add(p.size)
                .is_some_and(|e| e <= layout.dynamic_size);
            let at = element
                .and_then(|e| (8 + p.offset).checked_add(e))
                .filter(|_| in_slot && in_payload);
            ColumnPlan { kind, at }
        })
        .collect()
}

/// True when the upper four bytes of an `int32` slot are neither its sign extension nor zero
/// (as [`SignalType::decode`] decides).
fn irregular_int32(slot: i64) -> bool {
    let low = slot as i32;
    let high = (slot >> 32) as i32;
    let sign = if low < 0 { -1 } else { 0 };
    high != sign && high != 0
}

/// Appends the values of `frames` (whole frames of `stride` bytes) to the dynamic batch, one
/// column at a time. The caller has checked the columns' types with `batch_fits`. Skipped
/// columns (see `BatchSet::with_columns`) are left empty: `validate` reads times only.
fn decode_frames(
    batch: &mut StreamBatch,
    plan: &[ColumnPlan],
    frames: &[u8],
    stride: usize,
) -> recfmt_core::Result<()> {
    let n = frames.len() / stride;
    if n == 0 {
        return Ok(());
    }
    let rows = || frames.chunks_exact(stride);
    let columns = batch.columns_mut();
    let mismatch = || recfmt_core::Error::invalid("the batch does not match the icarec schema");
    let Some((time, rest)) = columns.split_first_mut() else {
        return Err(mismatch());
    };
    match time.kept_data_mut() {
        None => {}
        Some(ColumnData::F64(t)) => t.extend(rows().map(|f| f64_at(f, 0))),
        Some(_) => return Err(mismatch()),
    }
    for (column, plan) in rest.iter_mut().zip(plan) {
        if column.is_skipped() {
            continue;
        }
        match (column.data_mut(), plan.at) {
            (ColumnData::F64(v), Some(at)) => v.extend(rows().map(|f| f64_at(f, at))),
            (ColumnData::I64(v), Some(at)) => v.extend(rows().map(|f| i64_at(f, at))),
            (ColumnData::I32(v), Some(at)) => v.extend(rows().map(|f| i64_at(f, at) as i32)),
            (ColumnData::Bool(v), Some(at)) => v.extend(rows().map(|f| i64_at(f, at) != 0)),
            (ColumnData::F64(v), None) => v.resize(v.len() + n, 0.0),
            (ColumnData::I64(v), None) => v.resize(v.len() + n, 0),
            (ColumnData::I32(v), None) => v.resize(v.len() + n, 0),
            (ColumnData::Bool(v), None) => v.resize(v.len() + n, false),
            _ => return Err(mismatch()),
        }
    }
    batch.commit_rows(n);
    Ok(())
}

fn column_desc(schema: &Schema, column: &Column) -> SignalDesc {
    let p = &schema.layout().placed[column.signal];
    let spec = schema.spec(p);
    let mut desc = SignalDesc::scalar(column.name.clone(), p.ty.dtype().unwrap_or(DType::F64));
    if let Some(u) = spec.units.as_deref().filter(|u| !u.is_empty()) {
        desc = desc.with_unit(u);
    }
    let m = &mut desc.metadata;
    m.insert("lifecycle".into(), spec.lifecycle.name().into());
    m.insert("icarec.type".into(), spec.type_name.clone());
    if p.ty.is_composite() {
        m.insert("icarec.signal".into(), spec.name.clone());
        m.insert(
            "icarec.element".into(),
            p.ty.components()[column.element].into(),
        );
    }
    if let Some(s) = &spec.semantic {
        m.insert("semantic".into(), s.clone());
    }
    if let Some(e) = &spec.enum_values {
        m.insert("enum_values".into(), e.to_string());
    }
    if let Some(d) = &spec.description {
        m.insert("description".into(), d.clone());
    }
    desc
}

fn header_of(dir: &IcarecDir) -> Header {
    let doc = dir.schema().doc();
    let mut m = Metadata::new();
    m.insert("schema_version".into(), doc.schema_version.to_string());
    m.insert("icarus_version".into(), doc.icarus_version.to_string());
    m.insert("created_at".into(), doc.created_at.clone());
    if let Some(c) = &doc.checksum {
        m.insert("checksum".into(), c.clone());
    }
    m.insert(
        "warmstart_compatible".into(),
        doc.compatibility.warmstart_compatible.to_string(),
    );
    if let Some(v) = &doc.compatibility.min_icarus_version {
        m.insert("min_icarus_version".into(), v.to_string());
    }
    for c in &doc.components {
        m.insert(
            format!("component.{}", c.name),
            format!(
                "{} state[{}..{}]",
                c.type_name.as_deref().unwrap_or("?"),
                c.state_offset,
                c.state_offset.saturating_add(c.state_size)
            ),
        );
    }
    m.insert("frame_count".into(), dir.frame_count().to_string());
    if let Some(meta) = dir.metadata() {
        if let Some(r) = &meta.recorder {
            m.insert("recorder".into(), r.clone());
        }
        if let Some(name) = meta.scenario.as_ref().and_then(|s| s.name.as_ref()) {
            m.insert("scenario".into(), name.clone());
        }
        if let Some(d) = meta.decimation {
            m.insert("decimation".into(), d.to_string());
        }
    }
    Header {
        format: crate::FORMAT_ID,
        version: doc.schema_version.to_string(),
        time: Some(dir.time().unwrap_or(TimeReference::new(TimeSystem::Met))),
        metadata: m,
    }
}

impl RecordingReader for IcarecRecording {
    fn format(&self) -> &'static FormatInfo {
        &INFO
    }

    fn header(&self) -> &Header {
        &self.header
    }

    fn schema(&self) -> &CoreSchema {
        &self.schema
    }

    fn read_frame(&mut self, dst: &mut FrameBuf) -> recfmt_core::Result<bool> {
        Ok(self.next(dst)?)
    }

    /// Decodes frames straight from blocks of `dynamic_signals.bin` into the dynamic columns;
    /// the static row and the first frame (read together at the start) go the row path. A
    /// frame of an unwanted stream is checked like a row but not decoded.
    fn read_batches(&mut self, dst: &mut BatchSet) -> recfmt_core::Result<bool> {
        if !self.batch_fits(dst) {
            return recfmt_core::read_batches_by_rows(self, dst);
        }
        while !self.started || self.pending {
            if dst.is_full() {
                return Ok(true);
            }
            let mut row = std::mem::take(&mut self.row);
            let step = match self.next(&mut row) {
                Ok(true) if dst.wants(row.stream) => {
                    dst.push_frame(&row, &self.schema).map(|()| true)
                }
                Ok(more) => Ok(more),
                Err(e) => Err(e.into()),
            };
            self.row = row;
            if !step? {
                return Ok(false);
            }
        }
        self.read_frame_blocks(dst)
    }

    /// Jumps to the first frame at or after `seconds` by binary search over the fixed-stride
    /// frame times (a few 8-byte reads), before the first row only.
    fn seek_time(&mut self, seconds: f64) -> recfmt_core::Result<bool> {
        use recfmt_core::ResultExt;
        if self.started || seconds.is_nan() {
            return Ok(false);
        }
        let path = self.dir.file(crate::DYNAMIC_FILE);
        let stride = self.dir.schema().layout().stride();
        let file = BufReader::new(File::open(&path).in_file(&path)?);
        let mut index = crate::FrameIndex::new(file, stride).in_file(&path)?;
        let first = match index.find(seconds).in_file(&path)? {
            Some(i) if index.time_at(i).in_file(&path)? >= seconds => i,
            Some(i) => i + 1,
            None => 0,
        };
        self.frames.seek_frame(first).in_file(&path)?;
        Ok(true)
    }

    fn integrity(&self) -> &Integrity {
        self.frames.integrity()
    }

    fn progress(&self) -> (u64, Option<u64>) {
        (self.frames.position(), Some(self.total))
    }
}

/// Opens a recording for the registry. `strict` also turns on checksum and digest
/// verification, since a mismatch is a deviation a lenient reader tolerates.
pub(crate) fn open_boxed(
    path: &Path,
    options: &ReadOptions,
) -> recfmt_core::Result<Box<dyn RecordingReader>> {
    let open = OpenOptions {
        read: options.clone(),
        verify: options.strict,
        skip_unknown_types: false,
    };
    Ok(Box::new(IcarecRecording::open(path, &open)?))
}

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
    /// A scalar of this type at this byte offset.
    Scalar(usize, SignalKind),
    /// Element `e` of a composite at this byte offset.
    Element(usize),
    /// A whole fixed-size f64 array (n elements) at this byte offset.
    Array(usize, usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SignalKind {
    Double,
    Int64,
    Int32,
    Bool,
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
/// carry the `icarec.signal` / `icarec.element` metadata of [`IcarecRecording`] are joined
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

fn kind_of(dtype: DType) -> Option<(SignalType, SignalKind)> {
    Some(match dtype {
        DType::F32 | DType::F64 => (SignalType::Double, SignalKind::Double),
        DType::I64 | DType::U32 | DType::U64 => (SignalType::Int64, SignalKind::Int64),
        DType::I8 | DType::I16 | DType::I32 | DType::U8 | DType::U16 => {
            (SignalType::Int32, SignalKind::Int32)
        }
        DType::Bool => (SignalType::Bool, SignalKind::Bool),
        _ => return None,
    })
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
        match (&s.shape, kind_of(s.dtype)) {
            (Shape::Scalar, Some((ty, kind))) => {
                let mut ty = ty;
                // Keep the declared ICAREC type when the column says it (int32 stays int32).
                if let Some(t) = s
                    .metadata
                    .get("icarec.type")
                    .and_then(|t| SignalType::parse(t))
                    && !t.is_composite()
                    && kind_of(s.dtype).is_some_and(|(k, _)| k == t)
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
    Scalar(SignalKind),
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
            SlotPlan::Scalar(kind) => out[columns[0]] = Slot::Scalar(p.offset, *kind),
            SlotPlan::Array(n) => out[columns[0]] = Slot::Array(p.offset, *n),
            SlotPlan::Elements => {
                for (k, &c) in columns.iter().enumerate() {
                    out[c] = Slot::Element(p.offset + 8 * k);
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
            Slot::Element(at) => {
                let v = if matches!(value, Value::Null) {
                    f64::NAN
                } else {
                    value.as_f64().ok_or_else(|| bad("expected a number"))?
                };
                out[at..at + 8].copy_from_slice(&v.to_le_bytes());
            }
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
            Slot::Scalar(at, kind) => {
                let slot = &mut out[at..at + 8];
                match kind {
                    SignalKind::Double => {
                        let v = if matches!(value, Value::Null) {
                            f64::NAN
                        } else {
                            value.as_f64().ok_or_else(|| bad("expected a number"))?
                        };
                        slot.copy_from_slice(&v.to_le_bytes());
                    }
                    SignalKind::Int64 => {
                        let v = value
                            .as_i64()
                            .ok_or_else(|| bad("expected an integer that fits int64"))?;
                        slot.copy_from_slice(&v.to_le_bytes());
                    }
                    SignalKind::Int32 => {
                        let v = value
                            .as_i64()
                            .and_then(|v| i32::try_from(v).ok())
                            .ok_or_else(|| bad("expected an integer that fits int32"))?;
                        slot.copy_from_slice(&i64::from(v).to_le_bytes());
                    }
                    SignalKind::Bool => {
                        let v = match value {
                            Value::Bool(b) => *b,
                            other => other
                                .as_f64()
                                .map(|f| f != 0.0)
                                .ok_or_else(|| bad("expected a boolean"))?,
                        };
                        slot.copy_from_slice(&i64::from(v).to_le_bytes());
                    }
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
