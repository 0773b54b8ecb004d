//! A real client reads what we write: the `mcap` Python package opens the MCAP file of every
//! sample and generated fixture and checks every channel, schema and message against
//! `recfmt cat --output ndjson` (tests/python/check_mcap.py); here its summary is checked
//! against `recfmt info --json`.

use std::path::{Path, PathBuf};
use std::process::Command;

use recfmt_tests::{assert_success, fixture, python_with, recfmt, samples, workspace_root};

fn recordings() -> Vec<PathBuf> {
    let mut all = Vec::new();
    all.extend(samples("carla", "log"));
    all.extend(samples("fgtape", "fgtape"));
    all.extend(samples("nanover/server-py", "traj"));
    all.extend(samples("nanover/converted", "zip"));
    all.push(fixture("usvlog/all_types"));
    all.push(fixture("usvlog/unknown_types"));
    all.push(fixture("icarec/all_types.icarec"));
    all
}

fn check(python: &Path, recording: &Path, work: &Path) -> serde_json::Value {
    let path = recording.to_str().unwrap();
    // Outputs are never replaced without --force: each recording gets a folder of its own.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let work = &work.join(format!("run{run}"));
    std::fs::create_dir_all(work).unwrap();
    let out_file = work.join("out.mcap");
    let convert = recfmt(&[
        "convert",
        path,
        "--to",
        "mcap",
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(
        convert.status.code(),
        Some(0),
        "{path}: {}",
        String::from_utf8_lossy(&convert.stderr)
    );
    let leftovers: Vec<_> = std::fs::read_dir(work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".partial"))
        .collect();
    assert!(leftovers.is_empty(), "{path}: left {leftovers:?}");
    let cat = recfmt(&["cat", path, "--output", "ndjson"]);
    assert!(cat.status.success(), "{path}");
    let ndjson = work.join("rows.ndjson");
    std::fs::write(&ndjson, &cat.stdout).unwrap();
    let script = workspace_root().join("tests/python/check_mcap.py");
    let out = Command::new(python)
        .arg(script)
        .args([&out_file, &ndjson, recording])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{path}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap()
}

#[test]
fn every_recording_converts_to_mcap_that_the_mcap_package_reads_back() {
    let Some(python) = python_with(&["mcap"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    for recording in recordings() {
        let path = recording.to_str().unwrap();
        let summary = check(&python, &recording, work.path());
        let info = recfmt(&["info", "--json", path]);
        let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
        let streams = info["streams"].as_array().unwrap();
        let channels = summary["channels"].as_object().unwrap();
        // One channel per stream with the stream's rows, plus the scene for CARLA.
        for stream in streams {
            let topic = format!("/{}", stream["name"].as_str().unwrap());
            assert_eq!(
                channels.get(&topic),
                Some(&stream["rows"]),
                "{path}: {topic}"
            );
            assert_eq!(
                summary["schemas"][&topic], stream["name"],
                "{path}: {topic}"
            );
        }
        let scene = info["format"] == "carla";
        assert_eq!(
            channels.len(),
            streams.len() + usize::from(scene),
            "{path}: {channels:?}"
        );
        if scene {
            assert_eq!(summary["schemas"]["/scene"], "foxglove.SceneUpdate");
            let positions = streams.iter().find(|s| s["name"] == "position").unwrap();
            assert_eq!(summary["scene_entities"], positions["rows"], "{path}");
            assert!(summary["scene_messages"].as_u64().unwrap() > 0);
        }
        assert_eq!(
            summary["metadata"],
            serde_json::json!(["recfmt.provenance"])
        );
    }
}

#[test]
fn mcap_honours_selection_and_refuses_nothing_silently() {
    let Some(python) = python_with(&["mcap"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let session = fixture("usvlog/all_types");
    let out_file = work.path().join("nav.mcap");
    let convert = recfmt(&[
        "convert",
        session.to_str().unwrap(),
        "--to",
        "mcap",
        "--stream",
        "REC_NAV_SOLUTION",
        "--start",
        "+0.05s",
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(
        convert.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&convert.stderr)
    );
    let script = r#"
import json, sys
from mcap.reader import make_reader
r = make_reader(open(sys.argv[1], "rb"))
s = r.get_summary()
meta = {m.name: dict(m.metadata) for m in r.iter_metadata()}
print(json.dumps({"topics": sorted(c.topic for c in s.channels.values()),
  "messages": s.statistics.message_count, "range": meta["recfmt.provenance"].get("recfmt.time_range")}))
"#;
    let out = Command::new(python)
        .args(["-c", script])
        .arg(&out_file)
        .output()
        .unwrap();
    assert_success(&out, "the Python reader");
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["topics"], serde_json::json!(["/REC_NAV_SOLUTION"]));
    let all = recfmt(&[
        "cat",
        session.to_str().unwrap(),
        "--stream",
        "REC_NAV_SOLUTION",
        "--output",
        "ndjson",
    ]);
    let total = String::from_utf8_lossy(&all.stdout).lines().count() as u64;
    let kept = got["messages"].as_u64().unwrap();
    assert!(kept > 0 && kept < total, "{kept} of {total}");
    assert!(got["range"].as_str().unwrap().contains("+0.05s"));
}

#[test]
fn mcap_carries_the_provenance_keys_of_a_parquet_export() {
    let Some(python) = python_with(&["mcap", "pyarrow"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let session = fixture("usvlog/all_types");
    let mcap_file = work.path().join("all.mcap");
    let parquet_dir = work.path().join("parquet");
    for (to, out) in [("mcap", &mcap_file), ("parquet", &parquet_dir)] {
        let convert = recfmt(&[
            "convert",
            session.to_str().unwrap(),
            "--to",
            to,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(
            convert.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&convert.stderr)
        );
    }
    // The provenance record plus a channel's metadata hold exactly the keys and values of
    // the same stream's Parquet schema metadata (source path aside, it is the same input).
    let script = r#"
import json, sys
import pyarrow.parquet as pq
from mcap.reader import make_reader
r = make_reader(open(sys.argv[1], "rb"))
s = r.get_summary()
prov = {m.name: dict(m.metadata) for m in r.iter_metadata()}["recfmt.provenance"]
channel = next(c for c in s.channels.values() if c.topic == "/REC_NAV_SOLUTION")
mine = {**prov, **channel.metadata}
theirs = {k.decode(): v.decode() for k, v in pq.read_schema(sys.argv[2] + "/REC_NAV_SOLUTION.parquet").metadata.items() if not k.startswith(b"ARROW:")}
print(json.dumps({"mcap": mine, "parquet": theirs}))
"#;
    let out = Command::new(python)
        .args(["-c", script])
        .arg(&mcap_file)
        .arg(&parquet_dir)
        .output()
        .unwrap();
    assert_success(&out, "the Python reader");
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["mcap"], got["parquet"]);
    assert_eq!(
        got["mcap"]["source.sha256"].as_str().map(str::len),
        Some(64)
    );
}
