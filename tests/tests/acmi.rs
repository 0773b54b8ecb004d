//! `recfmt convert TAPE --to acmi`: every FlightGear sample, as the Normal tape it is and
//! rewritten as a Continuous and a Recovery tape, becomes `.acmi` and `.zip.acmi` files that
//! `pyacmi` (PyPI) parses; the objects, callsigns and positions it reads equal the tape's
//! `signals` and `multiplayer` rows as `recfmt cat --output ndjson` prints them. A tape cut
//! short converts what it holds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use recfmt::OpenOptions;
use recfmt::core::{FrameBuf, RecordingReader, RecordingWriter, Schema};
use recfmt_tests::{python_with, recfmt, samples};
use serde_json::Value;

/// Loads an ACMI file with pyacmi and prints what it read as JSON: the globals, and per
/// object its name, callsign, type tags, removal time and every keyframe of each field.
const DUMP: &str = r#"
import json, sys
from pyacmi import Acmi
acmi = Acmi()
acmi.load_acmi(filepath=sys.argv[1])
objects = {}
for oid, o in acmi.objects.items():
    fields = {k: [[t, v] for t, v in d.items()] for k, d in o.data.items()}
    objects[oid] = {"name": o.name, "tags": o.tags, "removed_at": o.removed_at, "fields": fields}
json.dump({
    "file_type": acmi.file_type, "file_version": acmi.file_version,
    "data_source": acmi.data_source, "title": acmi.title,
    "reference_time": acmi.reference_time and acmi.reference_time.isoformat(),
    "timeframes": len(acmi.timeframes), "objects": objects,
}, sys.stdout)
"#;

/// The value of `field` at time `t`: the last keyframe at or before `t`.
fn at(object: &Value, field: &str, t: f64) -> Option<f64> {
    let frames = object["fields"][field].as_array()?;
    frames
        .iter()
        .take_while(|f| f[0].as_f64().unwrap() <= t)
        .last()
        .and_then(|f| f[1].as_f64())
}

fn text(object: &Value, field: &str) -> Option<String> {
    let frames = object["fields"][field].as_array()?;
    frames.last().and_then(|f| f[1].as_str()).map(str::to_owned)
}

/// The rows of a recording as `recfmt cat --output ndjson` prints them.
fn rows(tape: &Path) -> Vec<Value> {
    let o = recfmt(&["cat", "--output", "ndjson", tape.to_str().unwrap()]);
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn parse(python: &Path, acmi: &Path) -> Value {
    let o = Command::new(python)
        .args(["-c", DUMP, acmi.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "pyacmi on {}: {}",
        acmi.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn close(got: Option<f64>, want: f64, tolerance: f64, what: &str) {
    let got = got.unwrap_or_else(|| panic!("{what}: missing, want {want}"));
    assert!(
        (got - want).abs() <= tolerance,
        "{what}: {got} != {want} (within {tolerance})"
    );
}

/// Checks the parsed ACMI against the tape's rows: one aircraft object (name, type, every
/// position, orientation and airspeed), one object per callsign (positions at each packet),
/// nothing else.
fn check(acmi: &Value, rows: &[Value], what: &str) {
    assert_eq!(acmi["file_type"], "text/acmi/tacview", "{what}");
    assert_eq!(acmi["file_version"], 2.2, "{what}");
    assert!(
        acmi["data_source"]
            .as_str()
            .is_some_and(|s| s.starts_with("FlightGear ")),
        "{what}: {}",
        acmi["data_source"]
    );
    let objects = acmi["objects"].as_object().unwrap();
    let own = &objects["1"];
    assert_eq!(own["tags"], "Air+FixedWing", "{what}");
    assert!(
        own["name"].as_str().is_some_and(|n| !n.is_empty()),
        "{what}"
    );
    let mut signals = 0;
    // Every row's position is checked, except those overwritten in their own frame.
    let mut callsigns: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_callsign: BTreeMap<String, &Value> = BTreeMap::new();
    for o in objects.values() {
        if let Some(c) = text(o, "CallSign") {
            assert!(by_callsign.insert(c, o).is_none(), "{what}: callsign twice");
        }
    }
    // Rows at one time (a frame's packets of one callsign) share ACMI's frame: the last wins.
    let mut last: BTreeMap<(String, u64), &Value> = BTreeMap::new();
    for row in rows {
        let who = row["callsign"].as_str().unwrap_or("").to_owned();
        let key = format!("{}/{who}", row["stream"].as_str().unwrap());
        last.insert((key, row["t"].as_f64().unwrap().to_bits()), row);
    }
    let last_of = |row: &Value| {
        let who = row["callsign"].as_str().unwrap_or("").to_owned();
        let key = format!("{}/{who}", row["stream"].as_str().unwrap());
        std::ptr::eq(last[&(key, row["t"].as_f64().unwrap().to_bits())], row)
    };
    for row in rows.iter().filter(|r| last_of(r)) {
        let t = row["t"].as_f64().unwrap();
        match row["stream"].as_str().unwrap() {
            "signals" => {
                signals += 1;
                let f = |k: &str| row[k].as_f64().unwrap();
                let w = format!("{what} at {t}");
                close(
                    at(own, "Longitude", t),
                    f("/position/longitude-deg"),
                    5.1e-8,
                    &w,
                );
                close(
                    at(own, "Latitude", t),
                    f("/position/latitude-deg"),
                    5.1e-8,
                    &w,
                );
                close(
                    at(own, "Altitude", t),
                    f("/position/altitude-ft") * 0.3048,
                    0.0051,
                    &w,
                );
                close(at(own, "Roll", t), f("/orientation/roll-deg"), 0.0051, &w);
                close(at(own, "Pitch", t), f("/orientation/pitch-deg"), 0.0051, &w);
                close(at(own, "Yaw", t), f("/orientation/heading-deg"), 0.0051, &w);
                close(
                    at(own, "IAS", t),
                    f("/velocities/airspeed-kt") * 1852.0 / 3600.0,
                    0.0051,
                    &w,
                );
                close(at(own, "AOA", t), f("/orientation/alpha-deg"), 0.0051, &w);
                close(
                    at(own, "AGL", t),
                    f("/position/altitude-agl-ft") * 0.3048,
                    0.0051,
                    &w,
                );
            }
            "multiplayer" => {
                let (Some(callsign), Some(lat)) =
                    (row["callsign"].as_str(), row["latitude_deg"].as_f64())
                else {
                    continue;
                };
                *callsigns.entry(callsign.to_owned()).or_default() += 1;
                let o = by_callsign
                    .get(callsign)
                    .unwrap_or_else(|| panic!("{what}: no object for {callsign}"));
                let w = format!("{what}: {callsign} at {t}");
                close(at(o, "Latitude", t), lat, 5.1e-8, &w);
                close(
                    at(o, "Longitude", t),
                    row["longitude_deg"].as_f64().unwrap(),
                    5.1e-8,
                    &w,
                );
                close(
                    at(o, "Altitude", t),
                    row["altitude_m"].as_f64().unwrap(),
                    0.0051,
                    &w,
                );
                let model = row["model"].as_str().unwrap();
                assert!(
                    model.ends_with(&format!("/{}.xml", o["name"].as_str().unwrap())),
                    "{w}: {model} vs {}",
                    o["name"]
                );
            }
            _ => {}
        }
    }
    assert!(signals > 0, "{what}: no signals rows");
    assert_eq!(
        by_callsign.keys().collect::<BTreeSet<_>>(),
        callsigns.keys().collect::<BTreeSet<_>>(),
        "{what}: callsigns"
    );
    // No gap of 10 s in the samples' packets: one object per callsign, none removed.
    assert_eq!(objects.len(), 1 + callsigns.len(), "{what}: objects");
    assert!(
        objects.values().all(|o| o["removed_at"].is_null()),
        "{what}"
    );
}

/// The sample rewritten as a Continuous tape, and its signals as a Recovery tape (one frame,
/// the last values, as FlightGear rewrites it).
fn rewritten(sample: &Path, dir: &Path) -> Vec<PathBuf> {
    let registry = recfmt::default_registry();
    let stem = sample.file_stem().unwrap().to_string_lossy().into_owned();
    let mut out = Vec::new();
    for recovery in [false, true] {
        let path = dir.join(format!(
            "{stem}-{}.fgtape",
            if recovery { "recovery" } else { "continuous" }
        ));
        let mut reader = recfmt::open_with(registry, sample, &OpenOptions::default())
            .unwrap()
            .into_reader();
        let schema = reader.schema().clone();
        let signals = schema.stream_index("signals").unwrap();
        let kept = if recovery {
            Schema {
                streams: vec![schema.streams[signals].clone()],
            }
        } else {
            schema
        };
        let mut writer = recfmt::fgtape::FgTapeWriter::create(&path).recovery(recovery);
        writer.write_header(reader.header(), &kept).unwrap();
        let mut row = FrameBuf::default();
        while reader.read_frame(&mut row).unwrap() {
            if recovery {
                if row.stream != signals {
                    continue;
                }
                row.stream = 0;
            }
            writer.write_frame(&row).unwrap();
        }
        writer.finish().unwrap();
        out.push(path);
    }
    out
}

fn convert(tape: &Path, out: &Path) -> Option<i32> {
    let o = recfmt(&[
        "convert",
        tape.to_str().unwrap(),
        "--to",
        "acmi",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}: {}",
        tape.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    o.status.code()
}

#[test]
fn every_flightgear_tape_reads_back_in_pyacmi() {
    let Some(python) = python_with(&["pyacmi"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for sample in samples("fgtape", "fgtape") {
        let mut tapes = vec![sample.clone()];
        tapes.extend(rewritten(&sample, work.path()));
        for tape in tapes {
            let rows = rows(&tape);
            let stem = tape.file_stem().unwrap().to_string_lossy().into_owned();
            for name in [format!("{stem}.acmi"), format!("{stem}.zip.acmi")] {
                let out = work.path().join(&name);
                assert_eq!(convert(&tape, &out), Some(0), "{}", tape.display());
                let bytes = std::fs::read(&out).unwrap();
                assert_eq!(
                    bytes.starts_with(b"PK\x03\x04"),
                    name.ends_with(".zip.acmi"),
                    "{name}"
                );
                check(&parse(&python, &out), &rows, &name);
                checked += 1;
            }
        }
    }
    assert!(checked >= 18 || !recfmt_tests::in_ci(), "{checked} files");
}

#[test]
fn a_tape_cut_short_converts_what_it_holds() {
    let Some(python) = python_with(&["pyacmi"]) else {
        return;
    };
    let Some(sample) = samples("fgtape", "fgtape")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("-mp-"))
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let continuous = rewritten(&sample, work.path()).remove(0);
    for tape in [sample, continuous] {
        let bytes = std::fs::read(&tape).unwrap();
        let cut = work.path().join(format!(
            "cut-{}",
            tape.file_name().unwrap().to_string_lossy()
        ));
        std::fs::write(&cut, &bytes[..bytes.len() * 3 / 5]).unwrap();
        let out = work.path().join(format!(
            "{}.acmi",
            cut.file_stem().unwrap().to_string_lossy()
        ));
        assert_eq!(convert(&cut, &out), Some(3), "{}: data lost", cut.display());
        let rows = rows(&cut);
        let full = self::rows(&tape);
        assert!(
            !rows.is_empty() && rows.len() < full.len(),
            "{}: {} of {} rows",
            cut.display(),
            rows.len(),
            full.len()
        );
        check(&parse(&python, &out), &rows, &cut.to_string_lossy());
    }
}
