//! Opening an `.icarec` directory: schema, static block and metadata in memory, frames streamed.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use recfmt_core::{Integrity, Limits, ReadOptions, TimeReference};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::checksum::{hex, schema_checksum};
use crate::compat::{CompatReport, validate_against};
use crate::error::{Error, Result};
use crate::frames::{DYNAMIC_FILE, FrameReader, STATIC_FILE, State};
use crate::json_pos;
use crate::metadata::{METADATA_FILE, MetadataDoc};
use crate::schema::{SCHEMA_FILE, Schema, SchemaOptions};
use crate::types::SignalValue;

/// How to open a recording.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// Limits, strictness (a torn frame, decreasing time or an irregular `int32` slot become
    /// errors) and the other generic options.
    pub read: ReadOptions,
    /// Make a wrong or missing schema checksum, and data files that disagree with the sizes
    /// and SHA-256 digests of `metadata.json`, errors instead of warnings. Reads both data
    /// files whole to hash them.
    pub verify: bool,
    /// Keep signals of unknown types as opaque bytes of their declared size instead of failing.
    pub skip_unknown_types: bool,
}

/// An opened `.icarec` directory.
///
/// `schema.json`, `static_signals.bin` and `metadata.json` are read and checked on open;
/// frames are read on demand ([`IcarecDir::frames`], [`IcarecDir::state_at`]).
#[derive(Debug, Clone)]
pub struct IcarecDir {
    path: PathBuf,
    schema: Schema,
    raw_schema: Value,
    statics: Vec<u8>,
    metadata: Option<MetadataDoc>,
    dynamic_len: u64,
    integrity: Integrity,
    /// Frames metadata.json counts but the file lacks: (offset of the first, bytes absent).
    missing_frames: Option<(u64, u64)>,
    time: Option<TimeReference>,
    strict: bool,
}

/// Resolves a recording directory from the directory itself or a file inside it.
pub fn resolve_dir(path: &Path) -> PathBuf {
    if path.is_file() {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        path.to_path_buf()
    }
}

fn read_limited(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>> {
    let len = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    Limits::check(what, len, limit, 0).map_err(|e| Error::Core(e.in_file(path)))?;
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

impl IcarecDir {
    /// Opens the recording at `path` (the directory, or any file in it).
    ///
    /// ```
    /// let dir = tempfile::tempdir()?;
    /// recfmt_icarec::generate::write_all_types(dir.path(), 10)?;
    /// let rec = recfmt_icarec::IcarecDir::open(dir.path(), &Default::default())?;
    /// assert_eq!(rec.frame_count(), 10);
    /// assert!(rec.integrity().warnings.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(path: &Path, options: &OpenOptions) -> Result<Self> {
        let dir = resolve_dir(path);
        let limits = &options.read.limits;
        let mut integrity = Integrity::default();
        let warn_or_fail = |integrity: &mut Integrity, err: Error| -> Result<()> {
            if options.verify {
                Err(err)
            } else {
                integrity.warn(err.to_string());
                Ok(())
            }
        };

        // schema.json
        let schema_path = dir.join(SCHEMA_FILE);
        let text = read_limited(&schema_path, limits.max_side_file_len, "schema.json size")?;
        let schema_options = SchemaOptions {
            skip_unknown_types: options.skip_unknown_types,
            max_signals: Some(limits.max_signals),
            max_payload: Some(limits.max_record_len),
        };
        let (schema, raw_schema) =
            Schema::parse(&text, &schema_path, &schema_options).map_err(|e| e.in_dir(&dir))?;
        let positions = json_pos::scan(&text, "signals");
        let computed = schema_checksum(&raw_schema);
        match &schema.doc().checksum {
            Some(found) if *found == computed => {}
            found => warn_or_fail(
                &mut integrity,
                Error::Checksum {
                    path: schema_path.clone(),
                    offset: positions.key("checksum"),
                    computed,
                    found: found.clone().unwrap_or_else(|| "none".into()),
                },
            )?,
        }
        for p in &schema.layout().placed {
            if let crate::SignalType::Opaque(name) = &p.ty {
                integrity.warn(format!(
                    "signal {:?} of unknown type {name:?} skipped ({} bytes)",
                    schema.spec(p).name,
                    p.size
                ));
            }
        }
        if TimeReference::parse(recfmt_core::TimeSystem::Utc, Some(&schema.doc().created_at))
            .is_err()
        {
            integrity.warn(format!(
                "{}: created_at {:?} is not an RFC 3339 time",
                schema_path.display(),
                schema.doc().created_at
            ));
        }

        // static_signals.bin
        let static_path = dir.join(STATIC_FILE);
        let static_len = std::fs::metadata(&static_path)
            .map_err(|e| Error::io(&static_path, e))?
            .len();
        let expected = schema.layout().static_size as u64;
        if static_len != expected {
            return Err(Error::malformed(
                &static_path,
                static_len.min(expected),
                format!(
                    "exactly {expected} bytes (the static block: max offset + size over static signals), found {static_len}"
                ),
            ));
        }
        let statics = read_limited(&static_path, limits.max_record_len, "static block size")?;
        if statics.len() as u64 != expected {
            return Err(Error::malformed(
                &static_path,
                (statics.len() as u64).min(expected),
                format!(
                    "exactly {expected} bytes, found {} (changed while reading)",
                    statics.len()
                ),
            ));
        }

        // dynamic_signals.bin
        let dynamic_path = dir.join(DYNAMIC_FILE);
        let dynamic_len = std::fs::metadata(&dynamic_path)
            .map_err(|e| Error::io(&dynamic_path, e))?
            .len();
        let stride = schema.layout().stride() as u64;
        let (frames, tail) = (dynamic_len / stride, dynamic_len % stride);
        if tail != 0 {
            if options.read.strict {
                return Err(Error::Truncated {
                    path: dynamic_path,
                    offset: frames * stride,
                    expected: format!(
                        "a complete frame of {stride} bytes, the file ends after {tail} (torn last frame)"
                    ),
                });
            }
            integrity.truncate(frames * stride, tail);
        }

        // metadata.json
        let mut missing_frames = None;
        let metadata_path = dir.join(METADATA_FILE);
        let metadata = if metadata_path.is_file() {
            let text = read_limited(
                &metadata_path,
                limits.max_side_file_len,
                "metadata.json size",
            )?;
            let doc: MetadataDoc = serde_json::from_slice(&text).map_err(|e| {
                Error::malformed(
                    &metadata_path,
                    json_pos::offset_of(&text, e.line(), e.column()),
                    format!("a metadata.json object ({e})"),
                )
            })?;
            Some(doc)
        } else {
            None
        };
        if let Some(meta) = &metadata {
            if let Some(n) = meta.frame_count
                && n != frames
            {
                integrity.warn(format!(
                    "{}: frame_count is {n}, {DYNAMIC_FILE} holds {frames} complete frames",
                    metadata_path.display()
                ));
                if n > frames {
                    // The recorder wrote more frames than are here: a cut file, even when
                    // the cut fell on a frame boundary.
                    if options.read.strict {
                        return Err(Error::malformed(
                            &dynamic_path,
                            dynamic_len,
                            format!(
                                "{n} frames of {stride} bytes (frame_count in metadata.json), the file ends after {frames}"
                            ),
                        ));
                    }
                    let absent = n.saturating_mul(stride).saturating_sub(dynamic_len);
                    integrity.truncate(frames * stride, absent);
                    missing_frames = Some((frames * stride, absent));
                }
            }
            for (name, actual_len) in [(STATIC_FILE, static_len), (DYNAMIC_FILE, dynamic_len)] {
                let Some(digest) = meta.files.get(name) else {
                    continue;
                };
                if digest.bytes != actual_len {
                    warn_or_fail(
                        &mut integrity,
                        Error::Digest {
                            path: dir.join(name),
                            offset: actual_len.min(digest.bytes),
                            expected: format!("{} bytes", digest.bytes),
                            found: format!("{actual_len} bytes"),
                        },
                    )?;
                } else if options.verify {
                    let found = file_sha256(&dir.join(name))?;
                    if found != digest.sha256 {
                        return Err(Error::Digest {
                            path: dir.join(name),
                            offset: 0,
                            expected: format!("sha256 {}", digest.sha256),
                            found: format!("sha256 {found}"),
                        });
                    }
                }
            }
        } else if options.verify {
            integrity.warn(format!(
                "{}: missing, so the data files could not be verified",
                metadata_path.display()
            ));
        }

        // time
        let time = match (
            &schema.doc().time,
            metadata.as_ref().and_then(|m| m.time.as_ref()),
        ) {
            (Some(s), m) => {
                let r = s.reference().map_err(|what| {
                    Error::malformed(
                        &schema_path,
                        positions.key("time"),
                        format!("a valid time object: {what}"),
                    )
                })?;
                if let Some(m) = m
                    && let Ok(mr) = m.reference()
                    && (m.system.is_some() || m.epoch.is_some() || m.epoch_jd_tai.is_some())
                    && mr != r
                {
                    integrity.warn(format!(
                        "metadata.json time ({}, epoch {:?}) differs from schema.json time ({}, epoch {:?}); schema.json wins",
                        mr.system, m.epoch, r.system, s.epoch
                    ));
                }
                Some(r)
            }
            (None, Some(m)) => Some(m.reference().map_err(|what| {
                Error::malformed(&metadata_path, 0, format!("a valid time object: {what}"))
            })?),
            (None, None) => None,
        };

        Ok(IcarecDir {
            path: dir,
            schema,
            raw_schema,
            statics,
            metadata,
            dynamic_len,
            integrity,
            missing_frames,
            time,
            strict: options.read.strict,
        })
    }

    /// The recording directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The validated schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// `schema.json` as a plain JSON value (what the checksum covers, members this crate does
    /// not know included).
    pub fn raw_schema(&self) -> &Value {
        &self.raw_schema
    }

    /// The static block (`static_signals.bin`).
    pub fn statics(&self) -> &[u8] {
        &self.statics
    }

    /// `metadata.json`, when present.
    pub fn metadata(&self) -> Option<&MetadataDoc> {
        self.metadata.as_ref()
    }

    /// Warnings and losses found while opening (checksum, metadata mismatches, torn tail).
    pub fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    /// Frames `metadata.json` counts that `dynamic_signals.bin` lacks, as (byte offset where
    /// they would start, bytes absent): a recording cut even when at a frame boundary.
    pub fn missing_frames(&self) -> Option<(u64, u64)> {
        self.missing_frames
    }

    /// The time reference from `schema.json` (or else `metadata.json`).
    pub fn time(&self) -> Option<TimeReference> {
        self.time
    }

    /// Complete frames in `dynamic_signals.bin`.
    pub fn frame_count(&self) -> u64 {
        self.dynamic_len / self.schema.layout().stride() as u64
    }

    /// Bytes of a torn last frame (0 when the file ends on a frame boundary).
    pub fn torn_bytes(&self) -> u64 {
        self.dynamic_len % self.schema.layout().stride() as u64
    }

    /// Length of `dynamic_signals.bin`.
    pub fn dynamic_len(&self) -> u64 {
        self.dynamic_len
    }

    /// The path of one file of the recording.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// A reader over the frames, in order.
    pub fn frames(&self) -> Result<FrameReader<BufReader<File>>> {
        let path = self.file(DYNAMIC_FILE);
        let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
        Ok(FrameReader::new(
            BufReader::with_capacity(1 << 16, file),
            self.schema.layout().stride(),
            path,
            self.strict,
        ))
    }

    /// The value of every static signal, in schema order.
    pub fn static_values(&self) -> Vec<(String, SignalValue)> {
        self.schema
            .layout()
            .placed
            .iter()
            .filter(|p| p.lifecycle == crate::Lifecycle::Static)
            .filter_map(|p| {
                let (v, _) = p.ty.decode(p.slot(&self.statics))?;
                Some((self.schema.spec(p).name.clone(), v))
            })
            .collect()
    }

    /// The value of every signal at the last frame with time `<= t` (see
    /// [`crate::state_at`]); reads a few small pieces of `dynamic_signals.bin`, not all of it.
    pub fn state_at(&self, t: f64) -> Result<Option<State>> {
        self.state_at_checked(t).map(|(state, _)| state)
    }

    /// [`IcarecDir::state_at`], and where the frame times were found out of order (see
    /// [`crate::state_at_checked`]).
    pub fn state_at_checked(&self, t: f64) -> Result<(Option<State>, Option<crate::OutOfOrder>)> {
        let path = self.file(DYNAMIC_FILE);
        let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
        crate::frames::state_at_checked(&self.schema, &self.statics, file, t, &path)
    }

    /// Checks this recording against the schema of the simulator that will use it.
    pub fn validate_against(&self, current: &crate::SchemaDoc) -> CompatReport {
        validate_against(self.schema.doc(), current)
    }
}

fn file_sha256(path: &Path) -> Result<String> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}
