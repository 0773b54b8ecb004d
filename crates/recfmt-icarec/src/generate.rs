//! Deterministic synthetic recordings for tests, benchmarks and `cargo xtask fixtures`.
//!
//! Values are simple arithmetic on small integers and binary fractions (no trigonometry), so
//! the bytes are identical on every platform.
//!
//! | fixture | what it covers |
//! |---|---|
//! | [`write_all_types`] | every type, static and dynamic, negative `int32` values, an enum, a boolean `int32`, time in `schema.json`, complete `metadata.json` |
//! | [`write_empty_static`] | no static signal: `static_signals.bin` is 0 bytes; time only in `metadata.json` (GPS) |
//! | [`write_torn`] | the all-types recording of a writer that died inside a frame: a torn last frame, no `metadata.json` |

use std::path::Path;

use serde_json::json;

use recfmt_core::TimeSystem;

use crate::error::Result;
use crate::metadata::{MetadataDoc, Scenario, SelectionSpec};
use crate::schema::{Lifecycle, Schema, SchemaBuilder, SignalSpec};
use crate::time::TimeSpec;
use crate::types::{SignalType, SignalValue};
use crate::writer::{MetadataMode, Writer, WriterOptions, recorder};

/// Creation time stamped on every fixture.
pub const CREATED_AT: &str = "2026-02-16T12:00:00Z";
/// Epoch of the fixtures' time reference.
pub const EPOCH: &str = "2026-02-16T12:00:00Z";
/// Step between frames, seconds (a binary fraction, so times are exact).
pub const DT: f64 = 0.015625;

fn dynamic_specs() -> Vec<SignalSpec> {
    use Lifecycle::Dynamic as D;
    vec![
        SignalSpec::new("Vehicle.Nav.position", &SignalType::Vec3, D).with_units("m"),
        SignalSpec::new("Vehicle.Nav.velocity", &SignalType::Vec3, D).with_units("m/s"),
        SignalSpec::new("Vehicle.Nav.attitude", &SignalType::Quat, D).with_units(""),
        SignalSpec::new("Vehicle.Nav.dcm", &SignalType::Mat3, D).with_units(""),
        SignalSpec::new("Vehicle.Aero.alpha", &SignalType::Double, D).with_units("rad"),
        SignalSpec::new("Vehicle.GNC.step", &SignalType::Int64, D),
        {
            let mut s =
                SignalSpec::new("Vehicle.GNC.mode", &SignalType::Int32, D).with_semantic("enum");
            s.enum_values = Some(json!({"-1": "FAULT", "0": "IDLE", "1": "CLIMB", "2": "CRUISE"}));
            s.description = Some("guidance mode".into());
            s
        },
        SignalSpec::new("Vehicle.Prop.thrust_trim", &SignalType::Int32, D).with_units("N"),
        SignalSpec::new("Vehicle.Prop.engine_on", &SignalType::Bool, D),
        SignalSpec::new("Vehicle.GNC.saturated", &SignalType::Int32, D).with_semantic("boolean"),
        SignalSpec::new("Debug.counter", &SignalType::Int64, D).with_required(false),
    ]
}

fn static_specs() -> Vec<SignalSpec> {
    use Lifecycle::Static as S;
    vec![
        SignalSpec::new("Vehicle.mass", &SignalType::Double, S).with_units("kg"),
        SignalSpec::new("Vehicle.inertia", &SignalType::Mat3, S).with_units("kg*m^2"),
        SignalSpec::new("Vehicle.id", &SignalType::Int64, S),
        SignalSpec::new("Vehicle.config_rev", &SignalType::Int32, S),
        SignalSpec::new("Vehicle.has_payload", &SignalType::Bool, S),
        SignalSpec::new("Vehicle.cg_offset", &SignalType::Vec3, S).with_units("m"),
        SignalSpec::new("Vehicle.initial_attitude", &SignalType::Quat, S)
            .with_default(json!([1.0, 0.0, 0.0, 0.0])),
    ]
}

fn builder() -> Result<SchemaBuilder> {
    let mut b = SchemaBuilder::new("1.2.0", "0.5.0", CREATED_AT)?.component(
        "Vehicle.EOM",
        "RigidBody6DOF",
        0,
        13,
    );
    b.doc_mut().compatibility.min_icarus_version = Some(semver::Version::new(0, 4, 0));
    Ok(b)
}

/// The schema of [`write_all_types`]: every type, dynamic and static.
pub fn all_types_schema() -> Result<Schema> {
    let mut b = builder()?.time(TimeSpec::new(TimeSystem::Utc, Some(EPOCH)));
    for s in dynamic_specs().into_iter().chain(static_specs()) {
        b = b.spec(s);
    }
    b.build()
}

/// The schema of [`write_empty_static`]: the dynamic signals only, no time object.
pub fn dynamic_only_schema() -> Result<Schema> {
    let mut b = builder()?;
    for s in dynamic_specs() {
        b = b.spec(s);
    }
    b.build()
}

/// The value of dynamic signal `name` in frame `i`.
pub fn dynamic_value(name: &str, i: u64) -> Option<SignalValue> {
    let x = i as f64;
    let n = i as i64;
    Some(match name {
        "Vehicle.Nav.position" => SignalValue::Vec3([x * 0.5, -x * 0.25, 1000.0 + x]),
        "Vehicle.Nav.velocity" => SignalValue::Vec3([50.0, -0.125 * x, -1.5]),
        "Vehicle.Nav.attitude" => SignalValue::Quat([1.0, 0.0, -0.0, x / 1024.0]),
        "Vehicle.Nav.dcm" => {
            let mut m = [0.0; 9];
            for (k, v) in m.iter_mut().enumerate() {
                *v = k as f64 - x / 8.0;
            }
            SignalValue::Mat3(m)
        }
        "Vehicle.Aero.alpha" => SignalValue::Double(0.0625 - x / 4096.0),
        "Vehicle.GNC.step" => SignalValue::Int64(n * 1_000_003 - 5),
        "Vehicle.GNC.mode" => SignalValue::Int32((i % 4) as i32 - 1),
        "Vehicle.Prop.thrust_trim" => SignalValue::Int32(-100_000 - 7 * (i % 1000) as i32),
        "Vehicle.Prop.engine_on" => SignalValue::Bool(!i.is_multiple_of(3)),
        "Vehicle.GNC.saturated" => SignalValue::Int32(i32::from(i.is_multiple_of(5))),
        "Debug.counter" => SignalValue::Int64(-n),
        _ => return None,
    })
}

/// The value of static signal `name`.
pub fn static_value(name: &str) -> Option<SignalValue> {
    Some(match name {
        "Vehicle.mass" => SignalValue::Double(950.5),
        "Vehicle.inertia" => SignalValue::Mat3([10.0, 0.0, -0.5, 0.0, 12.0, 0.0, -0.5, 0.0, 8.0]),
        "Vehicle.id" => SignalValue::Int64(-42),
        "Vehicle.config_rev" => SignalValue::Int32(-3),
        "Vehicle.has_payload" => SignalValue::Bool(true),
        "Vehicle.cg_offset" => SignalValue::Vec3([0.25, 0.0, -0.125]),
        "Vehicle.initial_attitude" => SignalValue::Quat([1.0, 0.0, 0.0, 0.0]),
        _ => return None,
    })
}

/// Encodes the static block of `schema` from [`static_value`].
pub fn statics(schema: &Schema) -> Result<Vec<u8>> {
    let mut out = vec![0u8; schema.layout().static_size];
    for s in &schema.doc().signals {
        if s.lifecycle == Lifecycle::Static
            && let Some(v) = static_value(&s.name)
        {
            schema.encode(&mut out, &s.name, v)?;
        }
    }
    Ok(out)
}

/// Encodes frame `i`'s payload of `schema` from [`dynamic_value`] into `out`.
pub fn payload(schema: &Schema, i: u64, out: &mut Vec<u8>) -> Result<()> {
    out.clear();
    out.resize(schema.layout().dynamic_size, 0);
    for s in &schema.doc().signals {
        if s.lifecycle == Lifecycle::Dynamic
            && let Some(v) = dynamic_value(&s.name, i)
        {
            schema.encode(out, &s.name, v)?;
        }
    }
    Ok(())
}

fn template(time: Option<TimeSpec>) -> MetadataDoc {
    MetadataDoc {
        recorder: Some(recorder()),
        scenario: Some(Scenario {
            name: Some("fixture".into()),
            config_path: Some("scenarios/fixture.yaml".into()),
            ..Scenario::default()
        }),
        time: Some(TimeSpec {
            dt: Some(DT),
            ..time.unwrap_or_default()
        }),
        decimation: Some(1),
        selection: Some(SelectionSpec {
            mode: Some("all".into()),
            ..SelectionSpec::default()
        }),
        ..MetadataDoc::default()
    }
}

fn write(dir: &Path, schema: Schema, frames: u64, metadata: MetadataDoc) -> Result<Writer> {
    let statics = statics(&schema)?;
    let mut w = Writer::create(
        dir,
        schema,
        &statics,
        WriterOptions {
            metadata: MetadataMode::Computed(metadata),
            ..WriterOptions::default()
        },
    )?;
    let mut buf = Vec::new();
    for i in 0..frames {
        payload(w.schema(), i, &mut buf)?;
        w.append(i as f64 * DT, &buf)?;
    }
    Ok(w)
}

/// Writes the all-types recording with `frames` frames.
pub fn write_all_types(dir: &Path, frames: u64) -> Result<()> {
    let time = TimeSpec::new(TimeSystem::Utc, Some(EPOCH));
    write(dir, all_types_schema()?, frames, template(Some(time)))?.finish()
}

/// Writes a recording without static signals (`static_signals.bin` is empty) whose time
/// object (GPS) is only in `metadata.json`.
pub fn write_empty_static(dir: &Path, frames: u64) -> Result<()> {
    let time = TimeSpec::new(TimeSystem::Gps, Some("2026-02-16T12:00:00"));
    write(dir, dynamic_only_schema()?, frames, template(Some(time)))?.finish()
}

/// Writes the all-types recording as left by a writer that died while writing frame
/// `frames`: `frames` complete frames, then the first `torn_bytes` bytes of the next one, and
/// no `metadata.json`. `torn_bytes` is clamped to `1..stride`.
pub fn write_torn(dir: &Path, frames: u64, torn_bytes: usize) -> Result<()> {
    let time = TimeSpec::new(TimeSystem::Utc, Some(EPOCH));
    let mut w = write(dir, all_types_schema()?, frames, template(Some(time)))?;
    let mut buf = Vec::new();
    payload(w.schema(), frames, &mut buf)?;
    let mut next = (frames as f64 * DT).to_le_bytes().to_vec();
    next.extend_from_slice(&buf);
    let cut = torn_bytes.clamp(1, next.len() - 1);
    w.write_torn_tail(&next[..cut])?;
    // Dropped without finish(): no metadata.json, as after a crash.
    drop(w);
    Ok(())
}
