//! The streaming writer: frames are appended as they come; `metadata.json` is written at the
//! end.
//!
//! Crash behaviour: `schema.json` (with its checksum, which depends on the schema only) and
//! `static_signals.bin` are complete on disk before the first frame is accepted, so a writer
//! that dies mid-run leaves a directory whose complete frames are readable; the reader reports
//! a torn last frame and the missing `metadata.json` is optional.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use recfmt_core::AtomicFile;
use sha2::{Digest, Sha256};

use crate::checksum::{hex, sha256_hex};
use crate::error::{Error, Result};
use crate::frames::{DYNAMIC_FILE, STATIC_FILE};
use crate::metadata::{FileDigest, METADATA_FILE, MetadataDoc};
use crate::policy::{RecordingPolicy, Selection};
use crate::schema::{Lifecycle, Lookup, SCHEMA_FILE, Schema};
use crate::types::SignalValue;

/// What the writer puts in `metadata.json` when it finishes.
#[derive(Debug, Clone, PartialEq)]
pub enum MetadataMode {
    /// This template, completed with what the writer knows: `icarus_version` and `created_at`
    /// (from the schema, unless set), `frame_count`, `time.t_start`/`t_end`, and the size and
    /// SHA-256 of both data files.
    Computed(MetadataDoc),
    /// Exactly this document, or no `metadata.json` at all (faithful copies).
    Verbatim(Option<MetadataDoc>),
}

impl Default for MetadataMode {
    fn default() -> Self {
        MetadataMode::Computed(MetadataDoc {
            recorder: Some(recorder()),
            ..MetadataDoc::default()
        })
    }
}

/// `recfmt-icarec/<version>`.
pub fn recorder() -> String {
    format!("recfmt-icarec/{}", env!("CARGO_PKG_VERSION"))
}

/// How to write a recording.
#[derive(Debug, Clone, PartialEq)]
pub struct WriterOptions {
    /// What `metadata.json` holds.
    pub metadata: MetadataMode,
    /// Replace the files of a recording already in the directory (otherwise that is an error).
    pub overwrite: bool,
    /// Store the computed schema checksum (otherwise the document's `checksum` is written as
    /// it is, for faithful copies).
    pub compute_checksum: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            metadata: MetadataMode::default(),
            overwrite: false,
            compute_checksum: true,
        }
    }
}

/// Writes an `.icarec` directory frame by frame.
///
/// ```
/// use recfmt_icarec::{IcarecDir, Lifecycle, SchemaBuilder, SignalType, SignalValue, Writer};
/// let dir = tempfile::tempdir()?;
/// let schema = SchemaBuilder::new("1.0.0", "0.5.0", "2026-02-16T12:00:00Z")?
///     .signal("Vehicle.Nav.position", SignalType::Vec3, Lifecycle::Dynamic, "m")
///     .signal("Vehicle.mass", SignalType::Double, Lifecycle::Static, "kg")
///     .build()?;
/// let mut statics = vec![0u8; schema.layout().static_size];
/// schema.encode(&mut statics, "Vehicle.mass", SignalValue::Double(950.0))?;
/// let mut w = Writer::create(dir.path(), schema, &statics, Default::default())?;
/// let mut payload = vec![0u8; w.schema().layout().dynamic_size];
/// for i in 0..3 {
///     w.schema().encode(&mut payload, "Vehicle.Nav.position", SignalValue::Vec3([i as f64, 0.0, -1.0]))?;
///     w.append(i as f64 * 0.1, &payload)?;
/// }
/// w.finish()?;
///
/// let rec = IcarecDir::open(dir.path(), &Default::default())?;
/// assert_eq!(rec.frame_count(), 3);
/// let state = rec.state_at(0.15)?.expect("a frame at or before 0.15");
/// assert_eq!(state.get("Vehicle.Nav.position.x"), Some(SignalValue::Double(1.0)));
/// assert_eq!(state.get("Vehicle.mass"), Some(SignalValue::Double(950.0)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Writer {
    dir: PathBuf,
    schema: Schema,
    dynamic: FrameWriter<BufWriter<File>>,
    statics: FileDigest,
    metadata: MetadataMode,
    selection: Option<Selection>,
    scratch: Vec<u8>,
    finished: bool,
}

impl Writer {
    /// Creates the directory (if needed) and writes `schema.json` and `static_signals.bin`.
    pub fn create(
        dir: &Path,
        schema: Schema,
        statics: &[u8],
        options: WriterOptions,
    ) -> Result<Self> {
        let schema = if options.compute_checksum {
            schema.with_checksum()
        } else {
            schema
        };
        if statics.len() != schema.layout().static_size {
            return Err(Error::invalid(format!(
                "the static block has {} bytes, the schema needs {}",
                statics.len(),
                schema.layout().static_size
            )));
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let schema_path = dir.join(SCHEMA_FILE);
        if schema_path.exists() {
            if !options.overwrite {
                return Err(Error::invalid(format!(
                    "{} already holds a recording (schema.json exists)",
                    dir.display()
                )));
            }
            let meta = dir.join(METADATA_FILE);
            if meta.exists() {
                std::fs::remove_file(&meta).map_err(|e| Error::io(&meta, e))?;
            }
        }
        write_atomic(&schema_path, schema.doc().to_json_text()?.as_bytes())?;
        write_atomic(&dir.join(STATIC_FILE), statics)?;
        let dynamic_path = dir.join(DYNAMIC_FILE);
        let file = File::create(&dynamic_path).map_err(|e| Error::io(&dynamic_path, e))?;
        let payload_size = schema.layout().dynamic_size;
        Ok(Writer {
            dir: dir.to_path_buf(),
            schema,
            dynamic: FrameWriter::new(
                BufWriter::with_capacity(1 << 16, file),
                payload_size,
                dynamic_path,
            ),
            statics: FileDigest {
                bytes: statics.len() as u64,
                sha256: sha256_hex(statics),
            },
            metadata: options.metadata,
            selection: None,
            scratch: Vec::new(),
            finished: false,
        })
    }

    /// Creates a recorder that keeps what `policy` selects from a full schema. Refuses to
    /// start, naming them, when `warmstart_compatible` is set and a required signal would be
    /// excluded. Frames are then given as full payloads to [`Writer::append_full`].
    pub fn with_policy(
        dir: &Path,
        full: &Schema,
        full_statics: &[u8],
        policy: &RecordingPolicy,
        mut options: WriterOptions,
    ) -> Result<Self> {
        let selection = policy.compile()?.select(full)?;
        let mut statics = Vec::new();
        selection.project_static(full_statics, &mut statics)?;
        if let MetadataMode::Computed(template) = &mut options.metadata
            && template.selection.is_none()
        {
            template.selection = Some(selection.spec.clone());
        }
        let mut w = Writer::create(dir, selection.schema.clone(), &statics, options)?;
        w.selection = Some(selection);
        Ok(w)
    }

    /// The schema being written.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.dynamic.frames()
    }

    /// Appends a frame: time `t` (seconds) and the dynamic payload (`D` bytes).
    pub fn append(&mut self, t: f64, payload: &[u8]) -> Result<()> {
        if self.finished {
            return Err(Error::invalid("the writer is finished"));
        }
        self.dynamic.write_frame(t, payload)
    }

    /// Appends a frame given as a full payload of the schema passed to
    /// [`Writer::with_policy`]; only the selected signals are written.
    pub fn append_full(&mut self, t: f64, full_payload: &[u8]) -> Result<()> {
        let Some(selection) = &self.selection else {
            return self.append(t, full_payload);
        };
        let mut scratch = std::mem::take(&mut self.scratch);
        selection.project_dynamic(full_payload, &mut scratch)?;
        let result = self.append(t, &scratch);
        self.scratch = scratch;
        result
    }

    /// Appends the bytes of a torn frame (shorter than a frame) and ends the frames: used by
    /// faithful copies of a recording whose writer died mid-frame.
    pub fn write_torn_tail(&mut self, bytes: &[u8]) -> Result<()> {
        if self.finished {
            return Err(Error::invalid("the writer is finished"));
        }
        self.dynamic.write_torn_tail(bytes)
    }

    /// Replaces the static block (when static values become known after the first frames).
    pub fn rewrite_statics(&mut self, statics: &[u8]) -> Result<()> {
        if statics.len() != self.schema.layout().static_size {
            return Err(Error::invalid(format!(
                "the static block has {} bytes, the schema needs {}",
                statics.len(),
                self.schema.layout().static_size
            )));
        }
        write_atomic(&self.dir.join(STATIC_FILE), statics)?;
        self.statics = FileDigest {
            bytes: statics.len() as u64,
            sha256: sha256_hex(statics),
        };
        Ok(())
    }

    /// Flushes buffered frames to the file (complete frames are then readable).
    pub fn flush(&mut self) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        self.dynamic.flush()
    }

    /// Flushes and syncs the frames and writes `metadata.json`. Calling it again does nothing.
    pub fn finish(&mut self) -> Result<()> {
        if self.finished {
            return Ok(());
        }
        let path = self.dir.join(DYNAMIC_FILE);
        self.dynamic.flush()?;
        let file = self.dynamic.get_ref().get_ref();
        file.sync_all().map_err(|e| Error::io(&path, e))?;
        self.finished = true;
        let doc = match &self.metadata {
            MetadataMode::Verbatim(doc) => doc.clone(),
            MetadataMode::Computed(template) => Some(self.computed_metadata(template.clone())),
        };
        if let Some(doc) = doc {
            write_atomic(
                &self.dir.join(METADATA_FILE),
                doc.to_json_text()?.as_bytes(),
            )?;
        }
        Ok(())
    }

    fn computed_metadata(&self, mut m: MetadataDoc) -> MetadataDoc {
        let doc = self.schema.doc();
        m.icarus_version
            .get_or_insert_with(|| doc.icarus_version.to_string());
        m.created_at.get_or_insert_with(|| doc.created_at.clone());
        m.frame_count = Some(self.dynamic.frames());
        if self.dynamic.frames() > 0 || m.time.is_some() {
            let mut time = m.time.take().unwrap_or_default();
            let (first, last) = self.dynamic.time_range().unzip();
            time.t_start = first;
            time.t_end = last;
            m.time = Some(time);
        }
        m.files.insert(STATIC_FILE.into(), self.statics.clone());
        m.files.insert(
            DYNAMIC_FILE.into(),
            FileDigest {
                bytes: self.dynamic.bytes(),
                sha256: self.dynamic.sha256(),
            },
        );
        m
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Not finished: keep what was written (complete frames stay readable), but write no
        // metadata.json, as a recorder that died would.
        if !self.finished {
            let _ = self.dynamic.get_mut().flush();
        }
    }
}

/// Writes frames as `dynamic_signals.bin` stores them (an 8-byte time, then a payload of a
/// fixed size) to any `Write`, counting them and hashing their bytes for `metadata.json`;
/// [`Writer`] writes its frames file through one, and a round trip runs in memory:
///
/// ```
/// use recfmt_icarec::{FrameReader, FrameWriter};
/// let mut w = FrameWriter::new(Vec::new(), 8, "dynamic_signals.bin");
/// w.write_frame(0.5, &7i64.to_le_bytes())?;
/// w.write_torn_tail(&[1, 2, 3])?; // as a recorder that died mid-frame leaves it
/// let bytes = w.into_inner();
/// let mut r = FrameReader::new(&bytes[..], 16, "dynamic_signals.bin", false);
/// let mut frame = recfmt_icarec::RawFrame::default();
/// assert!(r.read_frame(&mut frame)?);
/// assert_eq!((frame.t, frame.payload.as_slice()), (0.5, &7i64.to_le_bytes()[..]));
/// assert!(!r.read_frame(&mut frame)?);
/// assert_eq!(r.torn_tail(), [1, 2, 3]);
/// # Ok::<(), recfmt_icarec::Error>(())
/// ```
#[derive(Debug)]
pub struct FrameWriter<W> {
    inner: W,
    path: PathBuf,
    payload_size: usize,
    frames: u64,
    bytes: u64,
    hasher: Sha256,
    times: Option<(f64, f64)>,
    torn: bool,
}

impl<W: Write> FrameWriter<W> {
    /// Writes frames with payloads of `payload_size` bytes (`D`) to `inner`; errors name
    /// `path`.
    pub fn new(inner: W, payload_size: usize, path: impl Into<PathBuf>) -> Self {
        FrameWriter {
            inner,
            path: path.into(),
            payload_size,
            frames: 0,
            bytes: 0,
            hasher: Sha256::new(),
            times: None,
            torn: false,
        }
    }

    /// Writes a frame: time `t` (seconds) and the payload (`D` bytes).
    pub fn write_frame(&mut self, t: f64, payload: &[u8]) -> Result<()> {
        let d = self.payload_size;
        if payload.len() != d {
            return Err(Error::invalid(format!(
                "a frame payload has {d} bytes, got {}",
                payload.len()
            )));
        }
        self.put(&[&t.to_le_bytes(), payload])?;
        self.frames += 1;
        self.times = Some(self.times.map_or((t, t), |(first, _)| (first, t)));
        Ok(())
    }

    /// Writes the bytes of a torn frame (shorter than a frame) and ends the frames.
    pub fn write_torn_tail(&mut self, bytes: &[u8]) -> Result<()> {
        let stride = 8 + self.payload_size;
        if bytes.is_empty() {
            return Ok(());
        }
        if bytes.len() >= stride {
            return Err(Error::invalid(format!(
                "a torn tail is shorter than a frame ({stride} bytes), got {}",
                bytes.len()
            )));
        }
        self.put(&[bytes])?;
        self.torn = true;
        Ok(())
    }

    /// Writes `parts`; allocates nothing unless it fails.
    fn put(&mut self, parts: &[&[u8]]) -> Result<()> {
        if self.torn {
            return Err(Error::invalid("no frame can follow a torn tail"));
        }
        for part in parts {
            if let Err(e) = self.inner.write_all(part) {
                return Err(Error::io(&self.path, e));
            }
            self.hasher.update(part);
            self.bytes += part.len() as u64;
        }
        Ok(())
    }

    /// Flushes what is buffered.
    pub fn flush(&mut self) -> Result<()> {
        self.inner.flush().map_err(|e| Error::io(&self.path, e))
    }

    /// Frames written.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Bytes written (frames and torn tail).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// SHA-256 of the bytes written, as lowercase hex.
    pub fn sha256(&self) -> String {
        hex(&self.hasher.clone().finalize())
    }

    /// The times of the first and the last frame written.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        self.times
    }

    /// The destination.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The destination, mutably.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Gives the destination back.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

/// Writes one file of the recording folder being written (which this writer owns, so its own
/// earlier files are replaced).
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = AtomicFile::create(path, recfmt_core::Replace::RegularFile)
        .map_err(|e| Error::io(path, e))?;
    f.write_all(bytes).map_err(|e| Error::io(path, e))?;
    f.commit().map_err(|e| Error::io(path, e))
}

impl Schema {
    /// Encodes `value` for the signal (or composite element) `name` into a payload of the
    /// signal's lifecycle. The value must have the signal's type; an element of a composite
    /// takes a [`SignalValue::Double`].
    pub fn encode(&self, payload: &mut [u8], name: &str, value: SignalValue) -> Result<()> {
        let layout = self.layout();
        let (index, element) = match layout.lookup(name) {
            Some(Lookup::Signal(i)) => (i, None),
            Some(Lookup::Element { signal, element }) => (signal, Some(element)),
            None => return Err(Error::invalid(format!("no signal {name:?} in the schema"))),
        };
        let p = &layout.placed[index];
        let needed = match p.lifecycle {
            Lifecycle::Dynamic => layout.dynamic_size,
            Lifecycle::Static => layout.static_size,
        };
        if payload.len() != needed {
            return Err(Error::invalid(format!(
                "a {} payload has {needed} bytes, got {}",
                p.lifecycle.name(),
                payload.len()
            )));
        }
        match element {
            None => {
                if value.signal_type() != p.ty {
                    return Err(Error::invalid(format!(
                        "signal {name:?} is {}, got a {} value",
                        p.ty,
                        value.signal_type()
                    )));
                }
                value.encode(&mut payload[p.offset..p.offset + p.size]);
            }
            Some(e) => {
                let SignalValue::Double(v) = value else {
                    return Err(Error::invalid(format!(
                        "element {name:?} is a double, got a {} value",
                        value.signal_type()
                    )));
                };
                let at = p.offset + e * 8;
                payload[at..at + 8].copy_from_slice(&v.to_le_bytes());
            }
        }
        Ok(())
    }
}

/// Copies a recording faithfully: the same schema document (checksum as stored), static
/// block, frames, torn tail and `metadata.json` (or its absence). For recordings written by
/// this crate the copy is byte-identical; for others the JSON files are re-serialised in our
/// layout (same content, same checksum). Returns what the read found (warnings, torn tail).
///
/// ```
/// let src = tempfile::tempdir()?;
/// let dst = tempfile::tempdir()?;
/// recfmt_icarec::generate::write_torn(src.path(), 5, 20)?;
/// let found = recfmt_icarec::copy_recording(src.path(), &dst.path().join("copy.icarec"), &Default::default())?;
/// assert_eq!(found.bytes_lost, 20);
/// for f in ["schema.json", "static_signals.bin", "dynamic_signals.bin"] {
///     assert_eq!(std::fs::read(src.path().join(f))?, std::fs::read(dst.path().join("copy.icarec").join(f))?);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn copy_recording(
    src: &Path,
    dst: &Path,
    options: &crate::OpenOptions,
) -> Result<recfmt_core::Integrity> {
    let rec = crate::IcarecDir::open(src, options)?;
    let mut w = Writer::create(
        dst,
        rec.schema().clone(),
        rec.statics(),
        WriterOptions {
            metadata: MetadataMode::Verbatim(rec.metadata().cloned()),
            overwrite: false,
            compute_checksum: false,
        },
    )?;
    let mut frames = rec.frames()?;
    let mut frame = crate::RawFrame::default();
    while frames.read_frame(&mut frame)? {
        w.append(frame.t, &frame.payload)?;
    }
    w.write_torn_tail(frames.torn_tail())?;
    w.finish()?;
    let mut found = frames.integrity().clone();
    for warning in &rec.integrity().warnings {
        found.warn(warning.clone());
    }
    Ok(found)
}
