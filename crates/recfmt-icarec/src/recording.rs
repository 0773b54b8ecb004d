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

mod fields;
mod writer;

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use recfmt_core::{
    DType, FormatInfo, Header, Integrity, Metadata, ReadOptions, RecordingReader, RowWriter,
    Schema as CoreSchema, SignalDesc, StreamDesc, TimeBase, TimeReference, TimeSystem,
};

pub use self::writer::IcarecWriter;
pub(crate) use self::writer::{RECORDING_FILES, create_boxed};
use crate::dir::{IcarecDir, OpenOptions};
use crate::error::{Error, Result};
use crate::frames::FrameReader;
use crate::schema::{Column, Lifecycle};
use fields::Fields;

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
    /// The layout of a frame's payload and of the static block.
    dynamic: Fields,
    statics: Fields,
    /// The dynamic `int32` fields not yet reported irregular (checked on every frame,
    /// wanted or not).
    unreported: Vec<usize>,
    started: bool,
    /// The first frame's time, kept by a seek for the static row, whose time it is whether
    /// or not the frames before the seek are read.
    static_time: Option<f64>,
    irregular_warned: Vec<bool>,
    strict: bool,
    total: u64,
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
        let dynamic = Fields::new(layout, Lifecycle::Dynamic);
        let statics = Fields::new(layout, Lifecycle::Static);
        let mut schema = CoreSchema::default();
        for (name, fields) in [(DYNAMIC_STREAM, &dynamic), (STATIC_STREAM, &statics)] {
            let mut stream = StreamDesc::new(
                name,
                SignalDesc::scalar("t", DType::F64).with_unit("s"),
                TimeBase::SECONDS,
            );
            stream.signals.extend(fields.signals(dir.schema()));
            schema.streams.push(stream);
        }
        schema.streams[0]
            .metadata
            .insert("stride_bytes".into(), layout.stride().to_string());
        Ok(IcarecRecording {
            unreported: dynamic.int32_fields().collect(),
            dynamic,
            statics,
            irregular_warned: vec![false; layout.placed.len()],
            total: dir.dynamic_len(),
            dir,
            frames,
            header,
            schema,
            started: false,
            static_time: None,
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

    /// Reports the `int32` fields of `block` whose slots are irregular, once per signal
    /// (an error in strict mode). `base` is the block's byte offset in its file.
    fn check_int32(&mut self, lifecycle: Lifecycle, base: u64) -> Result<()> {
        // The common case, every slot regular, without allocating.
        if lifecycle == Lifecycle::Dynamic {
            let payload = &self.frames.frame()[8..];
            if !self
                .unreported
                .iter()
                .any(|&i| self.dynamic.irregular(i, payload))
            {
                return Ok(());
            }
        }
        let (fields, block) = match lifecycle {
            Lifecycle::Dynamic => (&self.dynamic, &self.frames.frame()[8..]),
            Lifecycle::Static => (&self.statics, self.dir.statics()),
        };
        let candidates: Vec<usize> = match lifecycle {
            Lifecycle::Dynamic => self.unreported.clone(),
            Lifecycle::Static => fields.int32_fields().collect(),
        };
        let irregular: Vec<usize> = candidates
            .into_iter()
            .filter(|&i| fields.irregular(i, block))
            .collect();
        for i in irregular {
            let fields = match lifecycle {
                Lifecycle::Dynamic => &self.dynamic,
                Lifecycle::Static => &self.statics,
            };
            let column = fields.column(i);
            if self.irregular_warned[column.signal] {
                continue;
            }
            report_irregular(
                &self.dir,
                self.strict,
                &mut self.irregular_warned,
                self.frames.integrity_mut(),
                column,
                lifecycle,
                base + fields.offset(i) as u64,
            )?;
        }
        let (warned, dynamic) = (&self.irregular_warned, &self.dynamic);
        self.unreported
            .retain(|&i| !warned[dynamic.column(i).signal]);
        Ok(())
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

    /// The static row first (its time is the first frame's, or 0), then one row per frame,
    /// decoded straight from the block of frames read ahead.
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> recfmt_core::Result<bool> {
        if !self.started {
            self.started = true;
            if !self.statics.is_empty() {
                let t = match self.static_time {
                    Some(t) => t,
                    None => self.frames.peek_time()?.unwrap_or(0.0),
                };
                self.check_int32(Lifecycle::Static, 0)?;
                if row.begin(1)? {
                    row.push(t)?;
                    self.statics.emit(self.dir.statics(), row)?;
                    row.finish()?;
                }
                return Ok(true);
            }
        }
        let index = self.frames.frames_read();
        if !self.frames.advance()? {
            return Ok(false);
        }
        if !self.unreported.is_empty() {
            let base = index * self.frames.stride() as u64 + 8;
            self.check_int32(Lifecycle::Dynamic, base)?;
        }
        if row.begin(0)? {
            let frame = self.frames.frame();
            row.push(crate::types::f64_at(frame, 0))?;
            // skip_rest: a time-only projection (`validate`) needs nothing more of the frame.
            if !row.skip_rest() {
                self.dynamic.emit(&frame[8..], row)?;
            }
            row.finish()?;
        }
        Ok(true)
    }

    /// Jumps to the first frame at or after `seconds` by binary search over the fixed-stride
    /// frame times (a few 8-byte reads), before the first row only. Rows carry no state from
    /// frame to frame (each frame is a whole row), so nothing before that frame is needed.
    fn seek_time(&mut self, seconds: f64) -> recfmt_core::Result<bool> {
        use recfmt_core::ResultExt;
        if self.started || seconds.is_nan() {
            return Ok(false);
        }
        let path = self.dir.file(crate::DYNAMIC_FILE);
        let stride = self.dir.schema().layout().stride();
        let file = BufReader::new(File::open(&path).in_file(&path)?);
        let mut index = crate::FrameIndex::new(file, stride).in_file(&path)?;
        if !index.is_empty() {
            self.static_time = Some(index.time_at(0).in_file(&path)?);
        }
        // The first frame at or after the start, not the last at or before it: frames that
        // share the start time exactly are all inside the window.
        let first = index
            .first_at_or_after(seconds)
            .in_file(&path)?
            .unwrap_or(0);
        self.frames.seek_frame(first).in_file(&path)?;
        Ok(true)
    }

    /// Ends the frames before the first whose time is at least `seconds`, checked as each
    /// frame is read (one comparison; no search, so nothing can fail here). Frames are
    /// non-decreasing in time by the spec (a full read warns when they are not); a frame
    /// that goes back below `seconds` after a later one is not read. The static row still
    /// comes first with the first frame's time. What lies after the end (a torn last frame
    /// included) is not read, so not reported. Before the first row only.
    fn stop_time(&mut self, seconds: f64) -> bool {
        if self.started || seconds.is_nan() {
            return false;
        }
        self.frames.set_stop_time(seconds);
        true
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
