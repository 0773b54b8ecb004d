//! `convert LOG --to xosc`: every CARLA sample, in OpenSCENARIO 1.0 and 1.2, validates against
//! the ASAM schema of its version (`xmlschema`) and reads back with scenariogeneration's
//! parser; its actors and trajectory points are the log's, counted here with the crate's
//! own packet reader. Also: a torn log, thinning within its tolerance, a generated log with
//! weather, late spawns and removals, and a version the option refuses.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use recfmt::carla::{
    ActorType, EventAdd, EventDel, Flavour, FrameStart, Header, Packet, Position, Reader, Vector3,
    Weather, Writer,
};
use recfmt_tests::{python_with, recfmt, samples, workspace_root};

/// The ASAM schema of `version` (`1.0` or `1.2`).
fn xsd(version: &str) -> PathBuf {
    workspace_root().join(format!(
        "../shared/specs/openscenario/OpenSCENARIO_{}.xsd",
        version.replace('.', "_")
    ))
}

/// What the log holds, from the packet reader: per vehicle or walker (in creation order),
/// its Position records.
fn log_points(log: &Path) -> Vec<u64> {
    let file = std::io::BufReader::new(std::fs::File::open(log).unwrap());
    let mut reader = Reader::new(file);
    reader.read_header().unwrap();
    let flavour = reader.detect_flavour().unwrap();
    let mut live = HashMap::new();
    let mut points = Vec::new();
    // A torn log ends with the error of its last packet: what came before counts.
    for packet in reader.packets().map_while(Result::ok) {
        match packet {
            Packet::EventAdd(events) => {
                for e in events {
                    let kind = ActorType::from_byte(e.actor_type, flavour);
                    if matches!(kind, ActorType::Vehicle | ActorType::Walker) {
                        live.insert(e.database_id, points.len());
                        points.push(0);
                    }
                }
            }
            Packet::EventDel(events) => {
                for e in events {
                    live.remove(&e.database_id);
                }
            }
            Packet::Position(records) => {
                for r in records {
                    if let Some(&i) = live.get(&r.database_id) {
                        points[i] += 1;
                    }
                }
            }
            _ => {}
        }
    }
    points
}

/// Converts `log` to `out` with `opts`; returns the exit code and stderr.
fn convert(log: &Path, out: &Path, opts: &[&str]) -> (Option<i32>, String) {
    let mut args = vec![
        "convert",
        log.to_str().unwrap(),
        "--to",
        "xosc",
        "-o",
        out.to_str().unwrap(),
    ];
    for opt in opts {
        args.extend(["--opt", opt]);
    }
    let output = recfmt(&args);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Runs the checker; returns its JSON answer.
fn check(
    python: &Path,
    xosc: &Path,
    version: &str,
    thinned: Option<(&Path, f64)>,
) -> serde_json::Value {
    let mut cmd = Command::new(python);
    cmd.arg(workspace_root().join("tests/python/check_xosc.py"))
        .arg(xosc)
        .arg(xsd(version));
    if let Some((path, tolerance)) = thinned {
        cmd.arg(path).arg(tolerance.to_string());
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}: {stdout}\n{}",
        xosc.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

/// The checker's answer equals the log's actors and points (a trajectory needs two points).
fn assert_matches_log(answer: &serde_json::Value, points: &[u64], version: &str) {
    assert_eq!(answer["version"], version);
    assert_eq!(answer["objects"].as_u64(), Some(points.len() as u64));
    let expected: u64 = points.iter().filter(|&&n| n >= 2).sum();
    let written: u64 = answer["vertices"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(written, expected, "{answer}");
    let trajectories = points.iter().filter(|&&n| n >= 2).count();
    assert_eq!(answer["vertices"].as_object().unwrap().len(), trajectories);
}

#[test]
fn every_carla_sample_is_a_valid_scenario_of_both_versions_with_the_logs_actors_and_points() {
    let logs = samples("carla", "log");
    if logs.is_empty() {
        return;
    }
    let Some(python) = python_with(&["xmlschema", "scenariogeneration"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    for log in &logs {
        let points = log_points(log);
        assert!(points.iter().sum::<u64>() > 0, "{}", log.display());
        for version in ["1.0", "1.2"] {
            let out = work.path().join(format!(
                "{}-{version}.xosc",
                log.file_stem().unwrap().to_string_lossy()
            ));
            let (code, stderr) = convert(log, &out, &[&format!("xosc.version={version}")]);
            assert_eq!(code, Some(0), "{}: {stderr}", log.display());
            let answer = check(&python, &out, version, None);
            assert_matches_log(&answer, &points, version);
            assert_eq!(answer["road"], "Town01");
        }
    }
}

#[test]
fn a_torn_log_gives_a_valid_scenario_of_what_it_holds_and_says_what_was_lost() {
    let Some(log) = samples("carla", "log").into_iter().next() else {
        return;
    };
    let Some(python) = python_with(&["xmlschema", "scenariogeneration"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(&log).unwrap();
    let torn = work.path().join("torn.log");
    // Cut inside a packet, well into the recording.
    std::fs::write(&torn, &bytes[..bytes.len() * 3 / 5 + 7]).unwrap();
    let points = log_points(&torn);
    let out = work.path().join("torn.xosc");
    let (code, stderr) = convert(&torn, &out, &[]);
    assert_eq!(code, Some(3), "data lost is exit code 3: {stderr}");
    assert!(stderr.contains("truncated"), "{stderr}");
    let answer = check(&python, &out, "1.0", None);
    assert_matches_log(&answer, &points, "1.0");
}

#[test]
fn thinning_leaves_out_only_vertices_within_the_tolerance() {
    let Some(log) = samples("carla", "log").into_iter().next() else {
        return;
    };
    let Some(python) = python_with(&["xmlschema", "scenariogeneration"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (full, thinned) = (work.path().join("full.xosc"), work.path().join("thin.xosc"));
    assert_eq!(convert(&log, &full, &[]).0, Some(0));
    let (code, stderr) = convert(&log, &thinned, &["xosc.tolerance=0.05"]);
    assert_eq!(code, Some(0), "{stderr}");
    check(&python, &thinned, "1.0", None);
    let answer = check(&python, &full, "1.0", Some((&thinned, 0.05)));
    let all: u64 = log_points(&log).iter().filter(|&&n| n >= 2).sum();
    let kept = answer["thinned"].as_u64().unwrap();
    assert!(kept < all / 2, "{kept} of {all} vertices kept");
}

/// A log of the newest ue4-dev build (Weather packets): a car from the start, one that comes
/// later and leaves, a walker, and a weather change.
fn generated_log(path: &Path) {
    let mut writer = Writer::new(Vec::new(), Flavour::Ue4DevWeather);
    let mut header = Header::new("/Game/Carla/Maps/Town03", 1_700_000_000);
    header.version = 2;
    writer.write_header(&header).unwrap();
    let add = |id, actor_type, blueprint: &str, role: &str| EventAdd {
        database_id: id,
        actor_type,
        location: Vector3::F32([0.0, 0.0, 0.0]),
        rotation: Vector3::F32([0.0, 0.0, 0.0]),
        description: recfmt::carla::ActorDescription {
            uid: 1,
            id: blueprint.into(),
            attributes: vec![recfmt::carla::ActorAttribute {
                kind: 4,
                id: "role_name".into(),
                value: role.into(),
            }],
        },
    };
    let pos = |id, x: f32, y: f32, yaw: f32| Position {
        database_id: id,
        location: Vector3::F32([x, y, 50.0]),
        rotation: Vector3::F32([0.0, 0.0, yaw]),
    };
    let clear = Weather {
        cloudiness: 5.0,
        sun_altitude_angle: 45.0,
        ..Weather::default()
    };
    let storm = Weather {
        cloudiness: 90.0,
        precipitation: 80.0,
        fog_density: 20.0,
        fog_distance: 30.0,
        ..clear
    };
    for frame in 0..20u64 {
        let t = frame as f64 * 0.1;
        writer
            .write_packet(&Packet::FrameStart(FrameStart {
                id: frame + 1,
                duration_this: 0.1,
                elapsed: t,
            }))
            .unwrap();
        let mut adds = Vec::new();
        if frame == 0 {
            adds.push(add(10, 1, "vehicle.tesla.model3", "hero"));
            adds.push(add(30, 2, "walker.pedestrian.0001", ""));
        }
        if frame == 5 {
            adds.push(add(20, 1, "vehicle.audi.a2", "autopilot"));
        }
        writer.write_packet(&Packet::EventAdd(adds)).unwrap();
        let dels = if frame == 15 {
            vec![EventDel { database_id: 20 }]
        } else {
            vec![]
        };
        writer.write_packet(&Packet::EventDel(dels)).unwrap();
        let x = frame as f32 * 100.0;
        let mut positions = vec![pos(10, x, 200.0, 90.0), pos(30, 0.0, -x, 180.0)];
        if (5..15).contains(&frame) {
            positions.push(pos(20, x, 600.0, 0.0));
        }
        writer.write_packet(&Packet::Position(positions)).unwrap();
        if frame == 0 || frame == 10 {
            let weather = if frame == 0 { clear } else { storm };
            writer
                .write_packet(&Packet::Weather(vec![weather]))
                .unwrap();
        }
        writer.write_packet(&Packet::FrameEnd).unwrap();
    }
    std::fs::write(path, writer.into_inner().unwrap()).unwrap();
}

#[test]
fn weather_spawns_removals_and_axes_of_a_generated_log() {
    let Some(python) = python_with(&["xmlschema", "scenariogeneration"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("weather.log");
    generated_log(&log);
    for version in ["1.0", "1.2"] {
        let out = work.path().join(format!("weather-{version}.xosc"));
        let opts = [
            format!("xosc.version={version}"),
            "carla.build=ue4-dev-weather".to_owned(),
        ];
        let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
        let (code, stderr) = convert(&log, &out, &opts);
        assert_eq!(code, Some(0), "{stderr}");
        let answer = check(&python, &out, version, None);
        assert_eq!(answer["road"], "Town03");
        assert_eq!(
            answer["names"],
            serde_json::json!(["autopilot", "hero", "walker_30"])
        );
        assert_eq!(
            answer["vertices"],
            serde_json::json!({"hero": 20, "autopilot": 10, "walker_30": 20})
        );
        let xml = std::fs::read_to_string(&out).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let count = |tag: &str| doc.descendants().filter(|n| n.has_tag_name(tag)).count();
        assert_eq!(count("AddEntityAction"), 1);
        assert_eq!(count("DeleteEntityAction"), 1);
        assert_eq!(
            count("EnvironmentAction"),
            2,
            "the first weather and its change"
        );
        // The hero at x = 10 m, CARLA y = 2 m heading +90° (towards +y, right): y = -2 m and
        // h = -π/2 in OpenSCENARIO's right-handed axes.
        let hero_second = doc
            .descendants()
            .filter(|n| n.has_tag_name("Trajectory") && n.attribute("name") == Some("hero_path"))
            .flat_map(|t| t.descendants().filter(|n| n.has_tag_name("Vertex")))
            .nth(10)
            .unwrap();
        assert_eq!(hero_second.attribute("time"), Some("1"));
        let wp = hero_second
            .descendants()
            .find(|n| n.has_tag_name("WorldPosition"))
            .unwrap();
        let value = |a: &str| wp.attribute(a).unwrap().parse::<f64>().unwrap();
        assert_eq!((value("x"), value("y"), value("z")), (10.0, -2.0, 0.5));
        assert!((value("h") + std::f64::consts::FRAC_PI_2).abs() < 1e-6);
        let stop = doc
            .descendants()
            .filter(|n| n.has_tag_name("StopTrigger"))
            .flat_map(|n| {
                n.descendants()
                    .filter(|c| c.has_tag_name("SimulationTimeCondition"))
            })
            .next_back()
            .unwrap();
        assert!((stop.attribute("value").unwrap().parse::<f64>().unwrap() - 1.9).abs() < 1e-9);
    }
}

#[test]
fn an_unknown_version_is_refused_before_anything_is_written() {
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("small.log");
    generated_log(&log);
    let out = work.path().join("run.xosc");
    let (code, stderr) = convert(
        &log,
        &out,
        &["xosc.version=9", "carla.build=ue4-dev-weather"],
    );
    assert_ne!(code, Some(0));
    assert!(
        stderr.contains("xosc option version=9: expected one of 1.0, 1.2"),
        "{stderr}"
    );
    assert!(!out.exists());
}
