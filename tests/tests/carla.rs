//! `recfmt carla info|collisions|blocked` and logs built from trajectories tables.

use recfmt_tests::{recfmt, samples};
use serde_json::Value;

#[test]
fn queries_print_carla_text_and_json() {
    for log in samples("carla", "log") {
        let s = log.to_str().unwrap();
        let o = recfmt(&["carla", "info", s]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8(o.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[..2], ["Version: 1", "Map: Town01"], "{s}");
        assert!(lines[2].starts_with("Date: "), "{s}");
        // The frame count CARLA prints agrees with recfmt's own frame stream.
        let info: Value = serde_json::from_slice(&recfmt(&["info", "--json", s]).stdout).unwrap();
        let frames = info["streams"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == "frame")
            .unwrap()["rows"]
            .as_u64()
            .unwrap();
        let printed = lines
            .iter()
            .find_map(|l| l.strip_prefix("Frames: "))
            .unwrap();
        assert_eq!(printed.trim().parse::<u64>().unwrap(), frames, "{s}");

        let json: Value =
            serde_json::from_slice(&recfmt(&["carla", "info", s, "--json"]).stdout).unwrap();
        assert_eq!(json["info"]["map"], "Town01");
        for q in [
            vec!["carla", "collisions", s, "--type1", "v", "--type2", "a"],
            vec!["carla", "blocked", s, "--min-time", "1"],
        ] {
            let o = recfmt(&q);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{q:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let mut with_json = q.clone();
            with_json.push("--json");
            let j = recfmt(&with_json);
            assert!(serde_json::from_slice::<Value>(&j.stdout).is_ok(), "{q:?}");
        }
    }
    let not_a_log = recfmt(&["carla", "info", env!("CARGO_MANIFEST_PATH")]);
    assert_eq!(not_a_log.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&not_a_log.stdout).trim(),
        "File is not a CARLA recorder"
    );
}

#[test]
fn a_trajectories_csv_becomes_a_log_whose_position_stream_gives_the_tracks_back() {
    let work = tempfile::tempdir().unwrap();
    let csv = work.path().join("tracks.csv");
    let mut text = String::from("time,id,blueprint,x,y,z,roll,pitch,yaw\n");
    let mut expected = Vec::new();
    for step in 0..50u32 {
        let t = f64::from(step) * 0.05;
        for (id, bp) in [
            (7u32, "vehicle.tesla.model3"),
            (9, "walker.pedestrian.0001"),
        ] {
            if id == 9 && step >= 30 {
                continue; // the walker leaves early
            }
            let (x, y, yaw) = (
                f64::from(step) * 0.5 + f64::from(id),
                3.25 * f64::from(id),
                f64::from(step) * 1.5,
            );
            text.push_str(&format!("{t},{id},{bp},{x},{y},0.5,0,0,{yaw}\n"));
            expected.push((id, x, y, yaw));
        }
    }
    std::fs::write(&csv, text).unwrap();
    let log = work.path().join("tracks.log");
    let o = recfmt(&[
        "convert",
        csv.to_str().unwrap(),
        "--to",
        "carla",
        "-o",
        log.to_str().unwrap(),
        "--map",
        "Town03",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let cat = recfmt(&[
        "cat",
        log.to_str().unwrap(),
        "--stream",
        "position",
        "--output",
        "ndjson",
    ]);
    let rows: Vec<Value> = String::from_utf8_lossy(&cat.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), expected.len());
    for (row, (id, x, y, yaw)) in rows.iter().zip(&expected) {
        // CARLA stores centimetres as f32.
        assert_eq!(row["id"], *id);
        assert_eq!(row["x"].as_f64().unwrap() as f32, (x * 100.0) as f32);
        assert_eq!(row["y"].as_f64().unwrap() as f32, (y * 100.0) as f32);
        assert_eq!(row["yaw"].as_f64().unwrap() as f32, *yaw as f32);
    }
    let info = String::from_utf8(recfmt(&["carla", "info", log.to_str().unwrap()]).stdout).unwrap();
    assert!(info.contains("Map: Town03"), "{info}");
    assert!(
        info.contains("vehicle.tesla.model3") && info.contains("Destroy 9"),
        "{info}"
    );

    std::fs::write(
        &csv,
        "time,id,blueprint,x,y,z,roll,pitch,yaw\n0,1,v,1,2,3,0,0,0\nzero,1,v,1,2,3,0,0,0\n",
    )
    .unwrap();
    let bad = recfmt(&[
        "convert",
        csv.to_str().unwrap(),
        "--to",
        "carla",
        "-o",
        log.with_extension("bad.log").to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("line 3"), "{err}");
    assert!(!log.with_extension("bad.log").exists());
}

#[test]
fn a_trajectories_parquet_gives_the_same_log_as_the_csv() {
    let Some(python) = recfmt_tests::python_with(&["pyarrow"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let csv = work.path().join("tracks.csv");
    let mut text = String::from("time,id,blueprint,x,y,z,roll,pitch,yaw,role_name\n");
    for step in 0..20u32 {
        let t = f64::from(step) * 0.1;
        text.push_str(&format!(
            "{t},3,vehicle.audi.tt,{},{},0.3,0,0.5,{},hero\n",
            f64::from(step) * 1.25,
            -2.5,
            f64::from(step) * 3.0
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let parquet = work.path().join("tracks.parquet");
    // pandas-style types: int64 ids, float64 positions.
    let script = format!(
        "import pyarrow.csv as c, pyarrow.parquet as p; p.write_table(c.read_csv({:?}), {:?})",
        csv.to_str().unwrap(),
        parquet.to_str().unwrap()
    );
    let o = std::process::Command::new(python)
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let positions = |input: &std::path::Path, name: &str| {
        let log = work.path().join(name);
        let o = recfmt(&[
            "convert",
            input.to_str().unwrap(),
            "--to",
            "carla",
            "-o",
            log.to_str().unwrap(),
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        recfmt(&[
            "cat",
            log.to_str().unwrap(),
            "--stream",
            "position",
            "--output",
            "ndjson",
        ])
        .stdout
    };
    let from_csv = positions(&csv, "a.log");
    assert_eq!(String::from_utf8_lossy(&from_csv).lines().count(), 20);
    assert_eq!(positions(&parquet, "b.log"), from_csv);
}

#[test]
fn the_build_can_be_forced_and_a_wrong_one_names_the_impossible_packet() {
    let Some(log) = samples("carla", "log")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("0910"))
    else {
        return;
    };
    let s = log.to_str().unwrap();
    let right = recfmt(&["info", "--json", "--carla-build", "0.9.10", s]);
    assert_eq!(right.status.code(), Some(0));
    let info: Value = serde_json::from_slice(&right.stdout).unwrap();
    assert_eq!(
        (
            info["metadata"]["flavour"].as_str(),
            info["metadata"]["flavour_source"].as_str()
        ),
        (Some("0.9.10"), Some("forced"))
    );

    // 0.9.10 wheels are 36 bytes; a 0.9.12 reading expects 48, so the packet does not parse:
    // the error names the packet, its offset and what was expected.
    let wrong = recfmt(&["info", "--json", "--carla-build", "0.9.12", s]);
    assert_eq!(wrong.status.code(), Some(3));
    let info: Value = serde_json::from_slice(&wrong.stdout).unwrap();
    let warning = info["integrity"]["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("physics_control packet (id 15) at byte")
            && (warning.contains("expected") || warning.contains("must be")),
        "{warning}"
    );

    let unknown = recfmt(&["info", "--carla-build", "9.99", s]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("known: 0.9.10"));
}
