//! Writing USVLOG sessions: from the generic model, and a faithful low-level copy.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use recfmt_core::{
    AtomicDir, FrameBuf, Header, RecordingWriter, Replace, Schema, StreamDesc, Value,
};

use crate::error::{Error, Result};
use crate::header::FileHeader;
use crate::io::{Reader, Writer};
use crate::layout::{FieldType, RecordLayout, builtin_layouts};
use crate::record::Record;
use crate::recording::{EVENTS_STREAM, SessionPaths, UNKNOWN_STREAM};

/// The files a session folder holds.
const SESSION_FILES: [&str; 3] = ["timeseries.bin", "meta.json", "events.jsonl"];

/// The temporary folder of a session written to `target` (see [`AtomicDir`]).
fn session_dir(target: &Path, replace: Replace) -> Result<AtomicDir> {
    if target.file_name().is_none() {
        return Err(Error::Layout("output path has no folder name".into()));
    }
    Ok(AtomicDir::create(target, replace, &SESSION_FILES)?)
}

/// Copies a session through the low-level reader and writer: every record, unknown ones and a
/// torn tail included, byte for byte; `meta.json` and `events.jsonl` are copied unchanged.
/// Returns the number of records. An existing `target` is refused.
pub fn copy_session(source: &Path, target: &Path) -> Result<u64> {
    copy_session_with(source, target, Replace::Never)
}

/// [`copy_session`], replacing the files of an existing session folder as `replace` allows
/// (see [`AtomicDir`]).
pub fn copy_session_with(source: &Path, target: &Path, replace: Replace) -> Result<u64> {
    let dir = session_dir(target, replace)?;
    let paths = SessionPaths::resolve(source)?;
    let mut reader = Reader::new(std::io::BufReader::new(File::open(&paths.timeseries)?));
    let header = reader.read_header()?;
    let mut writer = Writer::new(BufWriter::new(File::create(
        dir.path().join("timeseries.bin"),
    )?));
    writer.write_header(&header)?;
    let mut record = Record::default();
    let mut count = 0;
    while reader.read_record(&mut record)? {
        writer.write_record(&record)?;
        count += 1;
    }
    writer.write_trailing(reader.trailing_bytes())?;
    writer
        .into_inner()?
        .into_inner()
        .map_err(|e| e.into_error())?
        .sync_all()?;
    for side in [&paths.meta, &paths.events].into_iter().flatten() {
        if let Some(name) = side.file_name() {
            std::fs::copy(side, dir.path().join(name))?;
        }
    }
    dir.commit()?;
    Ok(count)
}

const NO_SUCH_TYPE: &str = "no USVLOG record type of that name";

/// How one generic stream maps onto USVLOG.
#[derive(Debug)]
enum Target {
    Record {
        layout: RecordLayout,
        time: usize,
        fields: Vec<usize>,
    },
    Unknown {
        time: usize,
        type_id: usize,
        payload: usize,
    },
    Events {
        json: usize,
    },
}

/// Writes a USVLOG session folder from the generic model.
///
/// A stream fits when it is named like a USVLOG record type (the built-in table, or carries
/// `type_id` and `payload_bytes` metadata from a USVLOG reader with a user layout) and has a
/// time column and the layout's fields with the same dtypes; `REC_UNKNOWN` and `EVENTS`
/// streams round-trip too. Anything else is refused up front with a list of what does not fit.
#[derive(Debug)]
pub struct UsvlogRecordingWriter {
    dir: Option<AtomicDir>,
    writer: Option<Writer<BufWriter<File>>>,
    events: Option<BufWriter<File>>,
    targets: Vec<Target>,
    schema: Schema,
    header: Header,
    payload: Vec<u8>,
    counts: BTreeMap<String, u64>,
    first_t: Option<u64>,
    last_t: Option<u64>,
}

impl UsvlogRecordingWriter {
    /// Prepares to write a session folder at `path`, which must not exist (written as a
    /// temporary folder, moved into place by [`RecordingWriter::finish`]).
    pub fn create(path: &Path) -> Result<Self> {
        Self::create_with(path, Replace::Never)
    }

    /// [`UsvlogRecordingWriter::create`], replacing the files of an existing session folder
    /// as `replace` allows (see [`AtomicDir`]).
    pub fn create_with(path: &Path, replace: Replace) -> Result<Self> {
        Ok(UsvlogRecordingWriter {
            dir: Some(session_dir(path, replace)?),
            writer: None,
            events: None,
            targets: Vec::new(),
            schema: Schema::default(),
            header: Header::default(),
            payload: Vec::new(),
            counts: BTreeMap::new(),
            first_t: None,
            last_t: None,
        })
    }

    fn plan(schema: &Schema) -> std::result::Result<Vec<Target>, Vec<String>> {
        let builtin = builtin_layouts();
        let mut targets = Vec::new();
        let mut problems = Vec::new();
        for stream in &schema.streams {
            match Self::plan_stream(stream, &builtin) {
                Ok(t) => targets.push(t),
                Err(p) => problems.push(format!("stream {}: {p}", stream.name)),
            }
        }
        if problems.iter().any(|p| p.ends_with(NO_SUCH_TYPE)) {
            let names: Vec<&str> = builtin.iter().map(|l| l.name.as_str()).collect();
            problems.push(format!(
                "known record types: {} (or streams read with a user layout)",
                names.join(", ")
            ));
        }
        if problems.is_empty() {
            Ok(targets)
        } else {
            Err(problems)
        }
    }

    fn plan_stream(
        stream: &StreamDesc,
        builtin: &[RecordLayout],
    ) -> std::result::Result<Target, String> {
        let index = |name: &str| {
            stream
                .signal_index(name)
                .ok_or_else(|| format!("has no `{name}` column"))
        };
        if stream.name == EVENTS_STREAM {
            return Ok(Target::Events {
                json: index("json")?,
            });
        }
        if stream.name == UNKNOWN_STREAM {
            return Ok(Target::Unknown {
                time: stream.time,
                type_id: index("type_id")?,
                payload: index("payload")?,
            });
        }
        let layout = builtin.iter().find(|l| l.name == stream.name).cloned();
        let layout = match layout {
            Some(l) => l,
            None => return Err(NO_SUCH_TYPE.into()),
        };
        let mut fields = Vec::new();
        let mut missing = Vec::new();
        for f in layout.value_fields() {
            let FieldType::Value(dtype) = f.ty else {
                continue;
            };
            match stream.signal_index(&f.name) {
                Some(i) if stream.signals[i].dtype == dtype => fields.push(i),
                Some(i) => missing.push(format!(
                    "`{}` is {}, USVLOG stores {dtype}",
                    f.name, stream.signals[i].dtype
                )),
                None => missing.push(format!("no `{}` column ({dtype})", f.name)),
            }
        }
        if !missing.is_empty() {
            return Err(missing.join("; "));
        }
        Ok(Target::Record {
            layout,
            time: stream.time,
            fields,
        })
    }

    fn time_us(stream: &StreamDesc, frame: &FrameBuf, time: usize) -> Result<u64> {
        if stream.time_base == recfmt_core::TimeBase::MICROSECONDS
            && let Some(Value::UInt(t)) = frame.values.get(time)
        {
            return Ok(*t);
        }
        let seconds = frame
            .time_seconds(stream)
            .ok_or_else(|| Error::Unwritable {
                what: format!("a row of {} without a time", stream.name),
            })?;
        if !(0.0..=1.8e13).contains(&seconds) {
            return Err(Error::Unwritable {
                what: format!("time {seconds} s of {} as u64 microseconds", stream.name),
            });
        }
        Ok((seconds * 1e6).round() as u64)
    }

    fn meta_json(&self) -> String {
        let catalog: serde_json::Map<String, serde_json::Value> = self
            .targets
            .iter()
            .filter_map(|t| match t {
                Target::Record { layout, .. } => Some((
                    layout.type_id.to_string(),
                    serde_json::json!({"name": layout.name, "fields": layout.value_fields().map(|f| f.name.clone()).collect::<Vec<_>>()}),
                )),
                _ => None,
            })
            .collect();
        let m = &self.header.metadata;
        let mut meta = serde_json::json!({
            "generator": format!("recfmt {}", env!("CARGO_PKG_VERSION")),
            "fw_model_id": m.get("fw_model_id").cloned().unwrap_or_else(|| "unknown".into()),
            "fw_model_schema": 1,
            "time": {"t0_us": self.first_t, "t_end_us": self.last_t},
            "files": {"timeseries.bin": {
                "format": "tlv_v1",
                "header": {"magic": "USVLOG", "endianness": "little", "fw_model_schema": 1},
                "record_catalog": catalog,
                "record_counts": self.counts,
            }},
            "source": {"format": self.header.format, "version": self.header.version},
        });
        if let Some(created) = m.get("created_utc") {
            meta["created_utc"] = serde_json::Value::String(created.clone());
        }
        let mut text = serde_json::to_string_pretty(&meta).unwrap_or_default();
        text.push('\n');
        text
    }
}

impl RecordingWriter for UsvlogRecordingWriter {
    fn write_header(&mut self, header: &Header, schema: &Schema) -> recfmt_core::Result<()> {
        let targets = Self::plan(schema).map_err(|problems| {
            recfmt_core::Error::invalid(format!(
                "this recording does not fit USVLOG:\n  {}",
                problems.join("\n  ")
            ))
        })?;
        let dir = self
            .dir
            .as_ref()
            .ok_or_else(|| recfmt_core::Error::invalid("writer already finished"))?;
        let file = BufWriter::new(File::create(dir.path().join("timeseries.bin"))?);
        let mut writer = Writer::new(file);
        let t0 = header
            .metadata
            .get("t0_us")
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        writer.write_header(&FileHeader::new(1, t0))?;
        if targets.iter().any(|t| matches!(t, Target::Events { .. })) {
            self.events = Some(BufWriter::new(File::create(
                dir.path().join("events.jsonl"),
            )?));
        }
        self.writer = Some(writer);
        self.targets = targets;
        self.schema = schema.clone();
        self.header = header.clone();
        Ok(())
    }

    fn write_frame(&mut self, frame: &FrameBuf) -> recfmt_core::Result<()> {
        let (Some(target), Some(stream), Some(writer)) = (
            self.targets.get(frame.stream),
            self.schema.streams.get(frame.stream),
            self.writer.as_mut(),
        ) else {
            return Err(recfmt_core::Error::invalid(
                "write_frame before write_header, or an unknown stream",
            ));
        };
        let mut record = Record::default();
        match target {
            Target::Events { json } => {
                if let (Some(out), Some(Value::Str(line))) =
                    (self.events.as_mut(), frame.values.get(*json))
                {
                    writeln!(out, "{line}")?;
                }
                return Ok(());
            }
            Target::Unknown {
                time,
                type_id,
                payload,
            } => {
                record.t_us = Self::time_us(stream, frame, *time)?;
                record.type_id = frame
                    .values
                    .get(*type_id)
                    .and_then(Value::as_u64)
                    .and_then(|t| u16::try_from(t).ok())
                    .ok_or_else(|| {
                        recfmt_core::Error::invalid("REC_UNKNOWN row without a u16 type_id")
                    })?;
                if let Some(Value::Bytes(b)) = frame.values.get(*payload) {
                    record.payload.clone_from(b);
                }
            }
            Target::Record {
                layout,
                time,
                fields,
            } => {
                record.t_us = Self::time_us(stream, frame, *time)?;
                record.type_id = layout.type_id;
                self.payload.clear();
                let values: Vec<Value> = fields
                    .iter()
                    .map(|&i| frame.values.get(i).cloned().unwrap_or_default())
                    .collect();
                layout.encode(&values, &mut self.payload)?;
                record.payload.clone_from(&self.payload);
                *self.counts.entry(layout.name.clone()).or_default() += 1;
            }
        }
        self.first_t.get_or_insert(record.t_us);
        self.last_t = Some(record.t_us);
        writer.write_record(&record)?;
        Ok(())
    }

    fn finish(&mut self) -> recfmt_core::Result<()> {
        let Some(dir) = self.dir.take() else {
            return Ok(());
        };
        if let Some(writer) = self.writer.take() {
            writer.into_inner()?.flush()?;
        }
        if let Some(mut events) = self.events.take() {
            events.flush()?;
        }
        std::fs::write(dir.path().join("meta.json"), self.meta_json())?;
        dir.commit()?;
        Ok(())
    }
}
