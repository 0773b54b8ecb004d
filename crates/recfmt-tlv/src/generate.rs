//! Deterministic synthetic sessions for tests, benchmarks and `cargo xtask fixtures`.
//!
//! Values are simple f32 arithmetic (no trigonometry), so the bytes are identical on every
//! platform.

use std::io::Write;
use std::path::Path;

use recfmt_core::Value;
use serde_json::json;

use crate::error::Result;
use crate::header::FileHeader;
use crate::io::Writer;
use crate::layout::{RecordLayout, builtin_layouts};
use crate::record::Record;

mod signals;
pub use signals::{SIGNAL_DT_US, SignalKind, write_signal_session};

/// Session start used by the generated fixtures (µs on the monotonic clock).
pub const T0_US: u64 = 1_000_000;
/// Step between samples of the fastest stream (100 Hz).
pub const DT_US: u64 = 10_000;

/// Every how many steps each built-in type is written (so streams have different rates).
fn decimation(type_id: u16) -> u64 {
    match type_id {
        6 => 50,
        8 => 5,
        7 | 9 | 10 => 2,
        11 | 12 => 10,
        _ => 1,
    }
}

/// The value of field `k` of a record at `step`: distinct per type, field and step.
fn sample(layout: &RecordLayout, k: usize, step: u64) -> f32 {
    let s = step as f32;
    let id = f32::from(layout.type_id);
    (s * 0.1 + id) * (k as f32 + 1.0) / 8.0 - 0.3 * k as f32
}

/// Encodes the payload of a built-in record at `step`.
pub fn payload(layout: &RecordLayout, step: u64) -> Result<Vec<u8>> {
    let values: Vec<Value> = layout
        .value_fields()
        .enumerate()
        .map(|(k, f)| match f.ty {
            crate::layout::FieldType::Value(d) if d.is_float() => {
                Value::Float(f64::from(sample(layout, k, step)))
            }
            _ => Value::UInt((step / decimation(layout.type_id) + k as u64) % 2),
        })
        .collect();
    let mut out = Vec::with_capacity(layout.size());
    layout.encode(&values, &mut out)?;
    Ok(out)
}

/// The records of a session with every built-in type: `steps` steps of 10 ms.
pub fn all_type_records(steps: u64) -> Result<Vec<Record>> {
    let layouts = builtin_layouts();
    let mut out = Vec::new();
    for step in 0..steps {
        for layout in &layouts {
            if step.is_multiple_of(decimation(layout.type_id)) {
                out.push(Record {
                    t_us: T0_US + step * DT_US,
                    type_id: layout.type_id,
                    payload: payload(layout, step)?,
                    offset: 0,
                });
            }
        }
    }
    Ok(out)
}

fn write_timeseries(path: &Path, records: &[Record]) -> Result<Vec<u8>> {
    let mut w = Writer::new(Vec::new());
    w.write_header(&FileHeader::new(
        1,
        records.first().map_or(T0_US, |r| r.t_us),
    ))?;
    for r in records {
        w.write_record(r)?;
    }
    let bytes = w.into_inner()?;
    std::fs::write(path, &bytes)?;
    Ok(bytes)
}

fn meta_json(records: &[Record], with_catalog: bool) -> String {
    let mut counts = serde_json::Map::new();
    for l in &builtin_layouts() {
        let n = records.iter().filter(|r| r.type_id == l.type_id).count();
        if n > 0 {
            counts.insert(l.name.clone(), json!(n));
        }
    }
    let t_end = records.last().map_or(T0_US, |r| r.t_us);
    let mut meta = session_meta("recfmt_fixture", counts, t_end, with_catalog);
    meta["files"]["events.jsonl"] = json!({"event_count": 2});
    pretty(&meta)
}

fn pretty(meta: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(meta).unwrap_or_default();
    text.push('\n');
    text
}

/// `meta.json` of a generated session with these record counts, ending at `t_end` (µs), and
/// no events file.
fn session_meta(
    name: &str,
    counts: serde_json::Map<String, serde_json::Value>,
    t_end: u64,
    with_catalog: bool,
) -> serde_json::Value {
    let layouts = builtin_layouts();
    let catalog: serde_json::Map<String, serde_json::Value> = layouts
        .iter()
        .map(|l| {
            let fields: Vec<&str> = l.value_fields().map(|f| f.name.as_str()).collect();
            (
                l.type_id.to_string(),
                json!({"name": l.name, "fields": fields}),
            )
        })
        .collect();
    let mut files = json!({"format": "tlv_v1",
        "header": {"magic": "USVLOG", "endianness": "little", "fw_model_schema": 1},
        "record_counts": counts});
    if with_catalog {
        files["record_catalog"] = serde_json::Value::Object(catalog);
    }
    json!({
        "created_utc": "2026-02-15T12:00:00Z",
        "session_name": name,
        "generator": "recfmt xtask fixtures",
        "git_sha": "0000000",
        "git_dirty": false,
        "fw_model_id": "proc_model_2d_surgev_yawrate_bias",
        "fw_model_schema": 1,
        "scenario": {"name": "fixture", "dt_s": 0.01, "duration_s": (t_end - T0_US) as f64 / 1e6},
        "time": {"t0_us": T0_US, "t_end_us": t_end, "dt_us": DT_US},
        "files": {"timeseries.bin": files},
    })
}

fn write_events(dir: &Path, t_end: u64) -> Result<()> {
    let mut f = std::fs::File::create(dir.join("events.jsonl"))?;
    writeln!(f, r#"{{"t_us": {T0_US}, "type": "MISSION_START"}}"#)?;
    writeln!(
        f,
        r#"{{"t_us": {t_end}, "type": "MODE_CHANGE", "from": "AUTO", "to": "MANUAL", "reason": "fixture end"}}"#
    )?;
    Ok(())
}

/// Writes a session folder with every built-in record type, `meta.json` (with a record
/// catalog) and `events.jsonl`.
pub fn write_all_types_session(dir: &Path, steps: u64) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let records = all_type_records(steps)?;
    write_timeseries(&dir.join("timeseries.bin"), &records)?;
    std::fs::write(dir.join("meta.json"), meta_json(&records, true))?;
    write_events(dir, records.last().map_or(T0_US, |r| r.t_us))?;
    Ok(())
}

/// Writes the all-types session with its last record torn: `cut` bytes removed from the end.
pub fn write_truncated_session(dir: &Path, steps: u64, cut: usize) -> Result<()> {
    write_all_types_session(dir, steps)?;
    let path = dir.join("timeseries.bin");
    let bytes = std::fs::read(&path)?;
    std::fs::write(&path, &bytes[..bytes.len().saturating_sub(cut)])?;
    Ok(())
}

/// The user layout file shipped with the unknown-types fixture: it names type 99.
pub const BATTERY_LAYOUT_TOML: &str = r#"# A record type recfmt does not know: decoded with no code.
[[record]]
type_id = 99
name = "REC_BATTERY"
fields = [
  { name = "voltage", type = "f32", unit = "V" },
  { name = "current", type = "i16", unit = "cA" },
  { name = "cell_mv", type = "u16", count = 3, unit = "mV" },
]
"#;

/// Writes a session (no record catalog) that mixes built-in records with types 99 (described
/// by `layouts.toml` in the folder) and 200 (described nowhere).
pub fn write_unknown_types_session(dir: &Path, steps: u64) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut records = Vec::new();
    for r in all_type_records(steps)? {
        let step = (r.t_us - T0_US) / DT_US;
        let t = r.t_us;
        let first_of_step = r.type_id == 1;
        records.push(r);
        if first_of_step && step.is_multiple_of(4) {
            let mut battery = Vec::new();
            battery_payload(step, &mut battery);
            records.push(Record {
                t_us: t,
                type_id: 99,
                payload: battery,
                offset: 0,
            });
            let len = (step % 3) as usize;
            records.push(Record {
                t_us: t,
                type_id: 200,
                payload: vec![0x5A; len],
                offset: 0,
            });
        }
    }
    write_timeseries(&dir.join("timeseries.bin"), &records)?;
    std::fs::write(dir.join("meta.json"), meta_json(&records, false))?;
    std::fs::write(dir.join("layouts.toml"), BATTERY_LAYOUT_TOML)?;
    Ok(())
}

/// Appends the payload of the `REC_BATTERY` record (type 99) at `step` to `out`. The values
/// wrap rather than overflow, so very long sessions can use it too.
fn battery_payload(step: u64, out: &mut Vec<u8>) {
    out.extend((12.5f32 - step as f32 * 0.01).to_le_bytes());
    out.extend((-150i16).wrapping_add(step as i16).to_le_bytes());
    for cell in 0..3u16 {
        out.extend((4000 + cell * 10).wrapping_add(step as u16).to_le_bytes());
    }
}

/// The IMU record type of [`write_bench_session`], beside the fixture's [`BATTERY_LAYOUT_TOML`]:
/// float arrays, so that exports carry fixed-shape columns.
pub const IMU_LAYOUT_TOML: &str = r#"
[[record]]
type_id = 98
name = "REC_IMU_RAW"
fields = [
  { name = "accel", type = "f32", count = 3, unit = "m/s^2" },
  { name = "gyro", type = "f32", count = 3, unit = "rad/s" },
  { name = "quat", type = "f32", count = 4 },
]
"#;

/// Writes a large session for benchmarks, streaming: every built-in record type at the
/// fixture rates plus the user types of [`IMU_LAYOUT_TOML`] (every step) and
/// [`BATTERY_LAYOUT_TOML`] (every fourth step), until `timeseries.bin` holds at least `min_bytes`. Also writes `meta.json` (record
/// counts, no catalog) and `layouts.toml`; read it with `--layout <dir>/layouts.toml`.
/// Returns the size of `timeseries.bin`.
pub fn write_bench_session(dir: &Path, min_bytes: u64) -> Result<u64> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("layouts.toml"),
        format!("{BATTERY_LAYOUT_TOML}{IMU_LAYOUT_TOML}"),
    )?;
    let builtin = builtin_layouts();
    let file = std::fs::File::create(dir.join("timeseries.bin"))?;
    let mut w = Writer::new(std::io::BufWriter::with_capacity(1 << 20, file));
    w.write_header(&FileHeader::new(1, T0_US))?;
    let mut written = 0u64;
    let mut counts = serde_json::Map::new();
    // Writes one record, counts it under its type name and returns its size in the file.
    let mut emit = |w: &mut Writer<_>, record: &Record, name: &str| -> Result<u64> {
        w.write_record(record)?;
        let n = counts.entry(name).or_insert(json!(0u64));
        *n = json!(n.as_u64().unwrap_or(0) + 1);
        Ok(12 + record.payload.len() as u64)
    };
    let mut record = Record {
        t_us: T0_US,
        type_id: 0,
        payload: Vec::new(),
        offset: 0,
    };
    let mut step = 0u64;
    while written < min_bytes {
        record.t_us = T0_US + step * DT_US;
        for layout in &builtin {
            if step.is_multiple_of(decimation(layout.type_id)) {
                record.type_id = layout.type_id;
                record.payload = payload(layout, step)?;
                written += emit(&mut w, &record, &layout.name)?;
            }
        }
        let s = step as f32;
        record.type_id = 98;
        record.payload.clear();
        for k in 0..10 {
            let v = (s * 0.01 + k as f32) * if k % 2 == 0 { 1.0 } else { -0.5 };
            record.payload.extend(v.to_le_bytes());
        }
        written += emit(&mut w, &record, "REC_IMU_RAW")?;
        if step.is_multiple_of(4) {
            record.type_id = 99;
            record.payload.clear();
            battery_payload(step, &mut record.payload);
            written += emit(&mut w, &record, "REC_BATTERY")?;
        }
        step += 1;
    }
    w.into_inner()?.flush()?;
    let t_end = T0_US + step.saturating_sub(1) * DT_US;
    std::fs::write(
        dir.join("meta.json"),
        pretty(&session_meta("recfmt_bench", counts, t_end, false)),
    )?;
    Ok(std::fs::metadata(dir.join("timeseries.bin"))?.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UsvlogRecording;
    use recfmt_core::{FrameBuf, ReadOptions, RecordingReader, Shape};

    /// The benchmark session reads back with its own layout file: the arrays are fixed-shape
    /// columns and every stream has the row count `meta.json` gives.
    #[test]
    fn bench_session_reads_back_with_its_layouts() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = write_bench_session(dir.path(), 100_000).unwrap();
        assert!(bytes >= 100_000);
        let options = ReadOptions {
            layouts: vec![dir.path().join("layouts.toml")],
            ..ReadOptions::default()
        };
        let mut reader = UsvlogRecording::open(dir.path(), &options).unwrap();
        let schema = reader.schema().clone();
        let imu = schema
            .streams
            .iter()
            .position(|s| s.name == "REC_IMU_RAW")
            .unwrap();
        let accel = &schema.streams[imu].signals[1];
        assert_eq!(
            (accel.name.as_str(), &accel.shape),
            ("accel", &Shape::Fixed(vec![3]))
        );
        let mut rows = vec![0u64; schema.streams.len()];
        let mut frame = FrameBuf::default();
        let mut second_imu = None;
        while reader.read_frame(&mut frame).unwrap() {
            rows[frame.stream] += 1;
            if frame.stream == imu && rows[imu] == 2 {
                second_imu = Some(frame.values[1].clone());
            }
        }
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("meta.json")).unwrap()).unwrap();
        let counts = &meta["files"]["timeseries.bin"]["record_counts"];
        for (stream, n) in schema.streams.iter().zip(&rows) {
            let expected = counts[&stream.name].as_u64().unwrap_or(0);
            assert_eq!(*n, expected, "{}", stream.name);
        }
        assert!(rows[imu] > 100);
        // Step 1: accel[k] = (0.01 + k) times 1 for even k, -0.5 for odd k (f32 arithmetic).
        let want = vec![0.01f32, (0.01f32 + 1.0) * -0.5, 0.01f32 + 2.0];
        assert_eq!(
            second_imu.unwrap(),
            recfmt_core::Value::Array(recfmt_core::ArrayValue::F32(want))
        );
    }
}
