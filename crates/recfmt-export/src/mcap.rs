//! MCAP files that Foxglove and Lichtblick open and scrub through (feature `mcap`).
//!
//! * One channel per stream, topic `/<stream>`, message encoding `json`, with a JSON Schema
//!   (encoding `jsonschema`) naming every signal's type, shape and unit.
//! * A message per row: the same JSON object `recfmt cat --output ndjson` prints for the row,
//!   without its `stream` key ([`crate::json::RowWriter`]: a signal named like the time
//!   column is the key `t_2`, see [`crate::json::keys`]); non-finite floats are the strings
//!   `"NaN"`, `"inf"` and `"-inf"`.
//! * Log time from the stream's time axis in nanoseconds: Unix time when the recording has
//!   an epoch, else seconds from the recording's zero (times before zero become 0, counted
//!   in [`McapReport::clamped`]; times past the last log time, 2^64 - 1 ns, take the time of
//!   the stream's row before them, counted in [`McapReport::overflowed`]).
//! * A `recfmt.provenance` metadata record with the same keys a Parquet export puts in its
//!   schema metadata ([`McapOptions::metadata`], e.g. `source.sha256`), and each channel's
//!   metadata holding the stream's keys (`recfmt.time_column`, `recfmt.time_base`, ...).
//! * Optionally ([`SceneSpec`]) entity positions of one stream as `foxglove.SceneUpdate`
//!   JSON on a channel of their own, so they show in Foxglove's 3D panel.
//! * Chunked (zstd) and indexed by the `mcap` crate; written under a temporary name and
//!   renamed when complete.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use ::mcap::records::MessageHeader;
use recfmt_core::{
    AtomicFile, DType, FrameBuf, Metadata, RecordingReader, Shape, SignalDesc, StreamDesc,
    TimeSystem, Value,
};

use crate::{Error, PendingMetadata, json, mapping};

/// Entity positions of one stream, drawn as boxes in Foxglove's 3D panel.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneSpec {
    /// The stream holding one row per entity per tick (it needs an entity key).
    pub stream: String,
    /// The channel's topic, e.g. `/scene`.
    pub topic: String,
    /// The coordinate frame the positions are in.
    pub frame_id: String,
    /// Signals of x, y and z.
    pub position: [String; 3],
    /// Signals of roll, pitch and yaw in degrees, when there are any.
    pub rotation_deg: Option<[String; 3]>,
    /// Factor from the signals' unit to metres (0.01 for centimetres).
    pub to_metres: f64,
    /// Left-handed source axes (Unreal Engine, as CARLA): y, pitch and yaw are negated into
    /// Foxglove's right-handed frame.
    pub left_handed: bool,
    /// Box size in metres.
    pub size: [f64; 3],
}

/// How [`export_mcap`] writes.
#[derive(Debug, Clone, Default)]
pub struct McapOptions {
    /// The provenance entries (`source.file`, `source.format`, ...), as for Parquet.
    pub metadata: Metadata,
    /// Provenance still being computed (the input's SHA-256), added when the file is finished.
    pub pending_metadata: Option<PendingMetadata>,
    /// Entity positions as `foxglove.SceneUpdate`.
    pub scene: Option<SceneSpec>,
    /// Whether an existing file at the output path may be replaced (default: no).
    pub replace: recfmt_core::Replace,
}

/// What [`export_mcap`] wrote.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McapReport {
    /// Per stream channel: topic and messages, in schema order.
    pub channels: Vec<(String, u64)>,
    /// `foxglove.SceneUpdate` messages written (0 without a scene).
    pub scene_messages: u64,
    /// Rows whose time was before zero (or the Unix epoch) and were logged at 0.
    pub clamped: u64,
    /// Rows without a time (or a NaN time), logged at the time of the row before them.
    pub untimed: u64,
    /// Rows whose log time would be past MCAP's last, 2^64 - 1 ns (about 584 years after the
    /// Unix epoch or the recording's zero), logged at the time of the row before them.
    pub overflowed: u64,
    /// The first such row: its stream and its time in recording seconds.
    pub first_overflowed: Option<(String, f64)>,
    /// Scene entities left out because their position or rotation is not a finite number
    /// (in metres: a huge value in centimetres may overflow); JSON has no NaN or infinity.
    pub scene_skipped: u64,
    /// The first entity left out: its id and the log time (ns) of its row.
    pub first_scene_skipped: Option<(String, u64)>,
}

/// The JSON Schema of one value of `signal`.
fn value_schema(signal: &SignalDesc) -> serde_json::Value {
    use serde_json::json;
    let element = match signal.dtype {
        DType::Bool => json!({"type": "boolean"}),
        DType::F32 | DType::F64 => json!({
            "type": ["number", "string"],
            "description": "non-finite values are the strings NaN, inf and -inf",
        }),
        DType::Str => json!({"type": "string"}),
        DType::Bytes => json!({"type": "string", "contentEncoding": "base16"}),
        _ => json!({"type": "integer"}),
    };
    let mut schema = match (&signal.shape, signal.shape.element_count()) {
        (Shape::Scalar, _) => element,
        (Shape::Fixed(dims), Some(n)) => json!({
            "type": "array", "items": element, "minItems": n, "maxItems": n,
            "recfmt.shape": dims,
        }),
        _ => json!({"type": "array", "items": element}),
    };
    // Every value may be null.
    if let Some(t) = schema.get_mut("type") {
        let mut types = match t.take() {
            serde_json::Value::Array(a) => a,
            other => vec![other],
        };
        types.push("null".into());
        *t = serde_json::Value::Array(types);
    }
    schema["recfmt.dtype"] = signal.dtype.name().into();
    if let Some(unit) = &signal.unit {
        schema["unit"] = unit.as_str().into();
        schema["description"] = format!("unit: {unit}").into();
    }
    schema
}

/// The JSON Schema of a stream's messages: an object with one property per signal, named as
/// the messages name it ([`json::keys`]); a property that does not carry its
/// signal's name says which signal it holds in `recfmt.signal`.
pub fn stream_schema(desc: &StreamDesc) -> serde_json::Value {
    let names = json::keys(desc);
    let properties: serde_json::Map<String, serde_json::Value> = desc
        .signals
        .iter()
        .zip(names)
        .map(|(s, name)| {
            let mut schema = value_schema(s);
            if name != s.name {
                schema["recfmt.signal"] = s.name.as_str().into();
            }
            (name, schema)
        })
        .collect();
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": desc.name,
        "type": "object",
        "properties": properties,
    })
}

/// Where recording second `t` falls on MCAP's log time axis (u64 nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LogTime {
    /// This many nanoseconds.
    At(u64),
    /// Before zero (the Unix epoch, or the recording's zero).
    BeforeZero,
    /// Past the last log time, 2^64 - 1 ns (infinite times too).
    Overflow,
    /// NaN: no time at all.
    Untimed,
}

/// The log time of recording second `t`, `epoch_ns` being the log time of its zero.
fn log_time(t: f64, epoch_ns: i128) -> LogTime {
    if t.is_nan() {
        return LogTime::Untimed;
    }
    // Checked in f64 first: the nanoseconds of a time beyond ~1.7e29 s do not fit an i128.
    let approx = epoch_ns as f64 + t * 1e9;
    if approx >= 2f64.powi(64) {
        return LogTime::Overflow;
    }
    if approx < -1.0 {
        return LogTime::BeforeZero;
    }
    let ns = epoch_ns + (t * 1e9).round() as i128;
    match u64::try_from(ns) {
        Ok(ns) => LogTime::At(ns),
        Err(_) if ns < 0 => LogTime::BeforeZero,
        Err(_) => LogTime::Overflow,
    }
}

/// Reads `reader` to the end and writes every stream into the MCAP file `path`.
pub fn export_mcap(
    reader: &mut dyn RecordingReader,
    path: &Path,
    options: &McapOptions,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<McapReport, Error> {
    let mcap_err = |source| Error::Mcap {
        path: path.to_path_buf(),
        source,
    };
    let header = reader.header().clone();
    let schema = reader.schema().clone();
    let epoch_ns: i128 = header
        .time
        .and_then(|r| r.to_system(0.0, TimeSystem::Utc))
        .map_or(0, |unix| (unix * 1e9).round() as i128);

    let file = AtomicFile::create(path, options.replace).map_err(|e| Error::io(path, e))?;
    let mut writer = ::mcap::WriteOptions::new()
        .compression(Some(::mcap::Compression::Zstd))
        .profile("")
        .library(format!("recfmt {}", env!("CARGO_PKG_VERSION")))
        .create(file)
        .map_err(mcap_err)?;

    let mut channels = Vec::with_capacity(schema.streams.len());
    for desc in &schema.streams {
        let schema_text = stream_schema(desc).to_string();
        let schema_id = writer
            .add_schema(&desc.name, "jsonschema", schema_text.as_bytes())
            .map_err(mcap_err)?;
        let metadata = mapping::stream_metadata(&header, desc, &json::keys(desc));
        let topic = format!("/{}", desc.name);
        let id = writer
            .add_channel(schema_id, &topic, "json", &metadata)
            .map_err(mcap_err)?;
        channels.push((id, topic));
    }
    let mut scene = match &options.scene {
        Some(spec) => Some(Scene::new(spec, &schema, &mut writer).map_err(mcap_err)??),
        None => None,
    };

    let mut report = McapReport {
        channels: channels.iter().map(|(_, t)| (t.clone(), 0)).collect(),
        ..McapReport::default()
    };
    let rows_json: Vec<json::RowWriter> = schema
        .streams
        .iter()
        .map(|desc| json::RowWriter::new(desc, false))
        .collect();
    let mut frame = FrameBuf::default();
    let mut text = String::new();
    let mut last_time = vec![0u64; schema.streams.len()];
    let mut rows = 0u64;
    while reader.read_frame(&mut frame)? {
        let desc = &schema.streams[frame.stream];
        let t = frame.time_seconds(desc);
        let time = match t.map_or(LogTime::Untimed, |t| log_time(t, epoch_ns)) {
            LogTime::At(ns) => ns,
            LogTime::BeforeZero => {
                report.clamped += 1;
                0
            }
            LogTime::Overflow => {
                report.overflowed += 1;
                if let Some(t) = t {
                    report
                        .first_overflowed
                        .get_or_insert((desc.name.clone(), t));
                }
                last_time[frame.stream]
            }
            LogTime::Untimed => {
                report.untimed += 1;
                last_time[frame.stream]
            }
        };
        last_time[frame.stream] = time;
        text.clear();
        rows_json[frame.stream].write(&mut text, &frame.values);
        let (channel_id, _) = channels[frame.stream];
        let count = &mut report.channels[frame.stream].1;
        let message = MessageHeader {
            channel_id,
            sequence: u32::try_from(*count).unwrap_or(u32::MAX),
            log_time: time,
            publish_time: time,
        };
        writer
            .write_to_known_channel(&message, text.as_bytes())
            .map_err(mcap_err)?;
        *count += 1;
        if let Some(scene) = &mut scene
            && scene.stream == frame.stream
        {
            scene
                .push(&frame.values, time, &mut writer)
                .map_err(mcap_err)?;
        }
        rows += 1;
        if rows.is_multiple_of(4096) {
            let (done, total) = reader.progress();
            progress(done, total);
        }
    }
    if let Some(scene) = &mut scene {
        scene.flush(&mut writer).map_err(mcap_err)?;
        report.scene_messages = scene.messages;
        report.scene_skipped = scene.skipped;
        report.first_scene_skipped = scene.first_skipped.take();
    }

    let mut provenance = options.metadata.clone();
    if let Some(pending) = &options.pending_metadata {
        provenance.extend(pending.wait()?.clone());
    }
    writer
        .write_metadata(&::mcap::records::Metadata {
            name: "recfmt.provenance".into(),
            metadata: provenance,
        })
        .map_err(mcap_err)?;
    writer.finish().map_err(mcap_err)?;
    writer
        .into_inner()
        .commit()
        .map_err(|e| Error::io(path, e))?;
    let (done, total) = reader.progress();
    progress(done, total);
    Ok(report)
}

type McapWriter = ::mcap::Writer<AtomicFile>;

/// The JSON Schema of the `foxglove.SceneUpdate` messages written (the parts used).
const SCENE_UPDATE_SCHEMA: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"foxglove.SceneUpdate","description":"An update to the entities displayed in a 3D scene","type":"object","properties":{"deletions":{"type":"array","items":{"type":"object","properties":{"timestamp":{"$ref":"#/$defs/time"},"type":{"type":"integer","description":"0: matching id, 1: all"},"id":{"type":"string"}}}},"entities":{"type":"array","items":{"type":"object","properties":{"timestamp":{"$ref":"#/$defs/time"},"frame_id":{"type":"string"},"id":{"type":"string"},"lifetime":{"$ref":"#/$defs/duration"},"frame_locked":{"type":"boolean"},"metadata":{"type":"array"},"arrows":{"type":"array"},"cubes":{"type":"array","items":{"type":"object","properties":{"pose":{"$ref":"#/$defs/pose"},"size":{"$ref":"#/$defs/vector3"},"color":{"$ref":"#/$defs/color"}}}},"spheres":{"type":"array"},"cylinders":{"type":"array"},"lines":{"type":"array"},"triangles":{"type":"array"},"texts":{"type":"array","items":{"type":"object","properties":{"pose":{"$ref":"#/$defs/pose"},"billboard":{"type":"boolean"},"font_size":{"type":"number"},"scale_invariant":{"type":"boolean"},"color":{"$ref":"#/$defs/color"},"text":{"type":"string"}}}},"models":{"type":"array"}}}}},"$defs":{"time":{"type":"object","properties":{"sec":{"type":"integer","minimum":0},"nsec":{"type":"integer","minimum":0,"maximum":999999999}}},"duration":{"type":"object","properties":{"sec":{"type":"integer"},"nsec":{"type":"integer","minimum":0,"maximum":999999999}}},"vector3":{"type":"object","properties":{"x":{"type":"number","description":"m"},"y":{"type":"number","description":"m"},"z":{"type":"number","description":"m"}}},"pose":{"type":"object","properties":{"position":{"$ref":"#/$defs/vector3"},"orientation":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"},"w":{"type":"number"}}}}},"color":{"type":"object","properties":{"r":{"type":"number"},"g":{"type":"number"},"b":{"type":"number"},"a":{"type":"number"}}}}}"##;

/// Gathers one tick's entities and writes them as one `foxglove.SceneUpdate`.
struct Scene {
    spec: SceneSpec,
    stream: usize,
    entity: usize,
    position: [usize; 3],
    rotation: Option<[usize; 3]>,
    channel: u16,
    /// Log time of the tick being gathered, and its entities as JSON.
    tick: Option<u64>,
    entities: Vec<String>,
    ids: BTreeSet<String>,
    previous_ids: BTreeSet<String>,
    messages: u64,
    /// Entities left out for a non-finite pose, and the first of them (id, log time).
    skipped: u64,
    first_skipped: Option<(String, u64)>,
}

impl Scene {
    fn new(
        spec: &SceneSpec,
        schema: &recfmt_core::Schema,
        writer: &mut McapWriter,
    ) -> Result<Result<Self, Error>, ::mcap::McapError> {
        let invalid = |what: String| Ok(Err(Error::Invalid(what)));
        let Some(stream) = schema.stream_index(&spec.stream) else {
            return invalid(format!("scene: no stream {:?}", spec.stream));
        };
        let desc = &schema.streams[stream];
        let Some(entity) = desc.entity else {
            return invalid(format!("scene: stream {} has no entity key", desc.name));
        };
        let find = |names: &[String; 3]| -> Option<[usize; 3]> {
            Some([
                desc.signal_index(&names[0])?,
                desc.signal_index(&names[1])?,
                desc.signal_index(&names[2])?,
            ])
        };
        let Some(position) = find(&spec.position) else {
            return invalid(format!(
                "scene: stream {} lacks one of {:?}",
                desc.name, spec.position
            ));
        };
        let rotation = spec.rotation_deg.as_ref().and_then(find);
        let schema_id = writer.add_schema(
            "foxglove.SceneUpdate",
            "jsonschema",
            SCENE_UPDATE_SCHEMA.as_bytes(),
        )?;
        let mut metadata = Metadata::new();
        metadata.insert("recfmt.stream".into(), desc.name.clone());
        let channel = writer.add_channel(schema_id, &spec.topic, "json", &metadata)?;
        Ok(Ok(Scene {
            spec: spec.clone(),
            stream,
            entity,
            position,
            rotation,
            channel,
            tick: None,
            entities: Vec::new(),
            ids: BTreeSet::new(),
            previous_ids: BTreeSet::new(),
            messages: 0,
            skipped: 0,
            first_skipped: None,
        }))
    }

    fn push(
        &mut self,
        values: &[Value],
        time: u64,
        writer: &mut McapWriter,
    ) -> Result<(), ::mcap::McapError> {
        if self.tick.is_some_and(|t| t != time) {
            self.flush(writer)?;
        }
        self.tick = Some(time);
        let number = |i: usize| values.get(i).and_then(Value::as_f64);
        let Some(id) = values.get(self.entity).and_then(|v| match v {
            Value::UInt(u) => Some(u.to_string()),
            Value::Int(i) => Some(i.to_string()),
            Value::Str(s) => Some(s.clone()),
            _ => None,
        }) else {
            return Ok(());
        };
        let [x, y, z] = self.position.map(number);
        let (Some(x), Some(y), Some(z)) = (x, y, z) else {
            return Ok(());
        };
        let flip = if self.spec.left_handed { -1.0 } else { 1.0 };
        let m = self.spec.to_metres;
        let (px, py, pz) = (x * m, flip * y * m, z * m);
        let [roll, pitch, yaw] = self
            .rotation
            .map_or([Some(0.0); 3], |r| r.map(number))
            .map(|a| a.unwrap_or(0.0).to_radians());
        let q = quaternion(roll, flip * pitch, flip * yaw);
        // JSON has no NaN or infinity: such an entity cannot be placed, so it is left out
        // (and counted) rather than written as invalid JSON.
        if ![px, py, pz].iter().chain(&q).all(|v| v.is_finite()) {
            self.skipped += 1;
            self.first_skipped.get_or_insert((id, time));
            return Ok(());
        }
        let stamp = stamp(time);
        let pose = format!(
            r#"{{"position":{{"x":{px},"y":{py},"z":{pz}}},"orientation":{{"x":{},"y":{},"z":{},"w":{}}}}}"#,
            q[0], q[1], q[2], q[3]
        );
        let [sx, sy, sz] = self.spec.size;
        let mut entity = String::new();
        let _ = write!(
            entity,
            r#"{{"timestamp":{stamp},"frame_id":{frame},"id":{id_json},"lifetime":{{"sec":0,"nsec":0}},"frame_locked":false,"metadata":[],"arrows":[],"cubes":[{{"pose":{pose},"size":{{"x":{sx},"y":{sy},"z":{sz}}},"color":{{"r":0.2,"g":0.5,"b":0.9,"a":0.8}}}}],"spheres":[],"cylinders":[],"lines":[],"triangles":[],"texts":[{{"pose":{pose},"billboard":true,"font_size":14,"scale_invariant":true,"color":{{"r":1,"g":1,"b":1,"a":1}},"text":{id_json}}}],"models":[]}}"#,
            frame = serde_json::Value::from(self.spec.frame_id.as_str()),
            id_json = serde_json::Value::from(id.as_str()),
        );
        self.entities.push(entity);
        self.ids.insert(id);
        Ok(())
    }

    /// Writes the gathered tick: its entities, and deletions of those gone since the last.
    fn flush(&mut self, writer: &mut McapWriter) -> Result<(), ::mcap::McapError> {
        let Some(time) = self.tick.take() else {
            return Ok(());
        };
        let stamp = stamp(time);
        let deletions: Vec<String> = self
            .previous_ids
            .difference(&self.ids)
            .map(|id| {
                format!(
                    r#"{{"timestamp":{stamp},"type":0,"id":{}}}"#,
                    serde_json::Value::from(id.as_str())
                )
            })
            .collect();
        let text = format!(
            r#"{{"deletions":[{}],"entities":[{}]}}"#,
            deletions.join(","),
            self.entities.join(",")
        );
        let header = MessageHeader {
            channel_id: self.channel,
            sequence: u32::try_from(self.messages).unwrap_or(u32::MAX),
            log_time: time,
            publish_time: time,
        };
        writer.write_to_known_channel(&header, text.as_bytes())?;
        self.messages += 1;
        self.entities.clear();
        self.previous_ids = std::mem::take(&mut self.ids);
        Ok(())
    }
}

/// `{"sec":..,"nsec":..}` of a log time.
fn stamp(ns: u64) -> String {
    format!(
        r#"{{"sec":{},"nsec":{}}}"#,
        ns / 1_000_000_000,
        ns % 1_000_000_000
    )
}

/// Quaternion `[x, y, z, w]` of roll, pitch, yaw (radians, applied yaw, pitch, roll).
fn quaternion(roll: f64, pitch: f64, yaw: f64) -> [f64; 4] {
    let (sr, cr) = (roll / 2.0).sin_cos();
    let (sp, cp) = (pitch / 2.0).sin_cos();
    let (sy, cy) = (yaw / 2.0).sin_cos();
    [
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quaternion_of_a_quarter_turn_of_yaw() {
        let q = quaternion(0.0, 0.0, std::f64::consts::FRAC_PI_2);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        assert!((q[2] - h).abs() < 1e-12 && (q[3] - h).abs() < 1e-12);
        assert!(q[0].abs() < 1e-12 && q[1].abs() < 1e-12);
    }

    #[test]
    fn log_times_before_zero_are_refused() {
        assert_eq!(log_time(1.5, 0), LogTime::At(1_500_000_000));
        assert_eq!(log_time(-1.0, 0), LogTime::BeforeZero);
        assert_eq!(log_time(f64::NEG_INFINITY, 0), LogTime::BeforeZero);
        assert_eq!(
            log_time(0.25, 1_000_000_000_000_000_000),
            LogTime::At(1_000_000_000_250_000_000)
        );
    }

    #[test]
    fn log_times_past_u64_overflow_and_nan_has_none() {
        let epoch = 1_734_825_600_000_000_000; // 2024-12-22
        assert_eq!(log_time(1e300, epoch), LogTime::Overflow);
        assert_eq!(log_time(f64::INFINITY, 0), LogTime::Overflow);
        assert_eq!(log_time(18_446_744_074.0, 0), LogTime::Overflow);
        assert_eq!(
            log_time(1e10, epoch),
            LogTime::At(11_734_825_600_000_000_000)
        );
        assert_eq!(log_time(f64::NAN, epoch), LogTime::Untimed);
    }
}
