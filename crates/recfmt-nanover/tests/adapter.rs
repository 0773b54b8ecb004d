//! The generic adapter, detection, timelines, sessions and checks on the real samples.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use recfmt_core::{ArrayValue, DType, FrameBuf, ReadOptions, RecordingReader, Score, Shape, Value};
use recfmt_nanover::{
    FORMAT, FileKind, FindingKind, GetFrameResponse, NanoverRecording, RecordingPaths, Severity,
    SplitRule, Timeline, check, generate, io::Reader, split_files, split_sessions,
};

fn sample(name: &str) -> Option<std::path::PathBuf> {
    common::samples_dir().map(|d| d.join("server-py").join(name))
}

/// Frames and state rows expected, counted with the low-level reader.
fn expected_rows(traj: &Path) -> (u64, u64) {
    let bytes = std::fs::read(traj).unwrap();
    let mut r = Reader::new(&bytes[..], FileKind::Trajectory);
    let mut frames = 0;
    for frame in r.frames() {
        frame.unwrap();
        frames += 1;
    }
    let mut states = 0;
    let state = traj.with_extension("state");
    if state.is_file() {
        let bytes = std::fs::read(&state).unwrap();
        let mut r = Reader::new(&bytes[..], FileKind::State);
        for s in r.updates().map(|u| u.unwrap().message) {
            states += (s.changes().count() as u64).max(1);
        }
    }
    (frames, states)
}

#[test]
fn every_sample_is_detected_and_read_through_the_adapter() {
    for path in common::sample_files() {
        let head = std::fs::read(&path).unwrap();
        assert_eq!(
            (FORMAT.score)(&head[..head.len().min(4096)]),
            Score::Yes(255)
        );
        if FileKind::from_path(&path) != Some(FileKind::Trajectory) {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut rec = (FORMAT.open)(&path, &ReadOptions::default()).unwrap();
        assert_eq!(rec.header().version, "2");
        let schema = rec.schema().clone();
        let frames_desc = &schema.streams[schema.stream_index("frames").unwrap()];
        assert_eq!(frames_desc.signals[0].name, "t_us");
        assert_eq!(frames_desc.signals[0].dtype, DType::U64);
        assert_eq!(frames_desc.signals[1].name, "frame_index");
        assert_eq!(frames_desc.signals[2].name, "session");
        let positions = frames_desc.signal_index("particle.positions").unwrap();
        assert_eq!(frames_desc.signals[positions].dtype, DType::F32);
        assert_eq!(frames_desc.signals[positions].shape, Shape::Variable);
        let mut counts = BTreeMap::<String, u64>::new();
        let mut last_t = f64::MIN;
        let mut row = FrameBuf::default();
        while rec.read_frame(&mut row).unwrap() {
            let desc = &schema.streams[row.stream];
            *counts.entry(desc.name.clone()).or_default() += 1;
            let t = row.time_seconds(desc).unwrap();
            assert!(t >= last_t, "{name}: rows out of time order");
            last_t = t;
            assert_eq!(row.values.len(), desc.signals.len());
        }
        assert!(
            !rec.integrity().lost_data(),
            "{name}: {:?}",
            rec.integrity()
        );
        let (frames, states) = expected_rows(&path);
        assert_eq!(counts.get("frames").copied().unwrap_or(0), frames, "{name}");
        assert_eq!(counts.get("state").copied().unwrap_or(0), states, "{name}");
        assert_eq!(
            schema.streams.len(),
            if states > 0 { 2 } else { 1 },
            "{name}"
        );
        eprintln!("{name}: rows {counts:?}");
    }
}

fn column(rec: &dyn RecordingReader, stream: &str, signal: &str) -> (usize, usize) {
    let s = rec.schema().stream_index(stream).unwrap();
    let i = rec.schema().streams[s]
        .signal_index(signal)
        .unwrap_or_else(|| panic!("{stream}.{signal} missing"));
    (s, i)
}

fn floats(v: &Value) -> &[f32] {
    match v {
        Value::Array(ArrayValue::F32(f)) => f,
        other => panic!("not an f32 list: {other:?}"),
    }
}

fn uints(v: &Value) -> &[u64] {
    match v {
        Value::Array(ArrayValue::UInt(u)) => u,
        other => panic!("not a u32 list: {other:?}"),
    }
}

fn json(v: &Value) -> serde_json::Value {
    match v {
        Value::Str(s) => serde_json::from_str(s).unwrap(),
        other => panic!("not JSON text: {other:?}"),
    }
}

#[test]
fn tutorial_nanotube_gives_energies_and_atom_paths() {
    let Some(path) = sample("tutorials-nanotube-recording.traj") else {
        return;
    };
    let mut rec = NanoverRecording::open(&path, &ReadOptions::default()).unwrap();
    let (frames, potential) = column(&rec, "frames", "energy.potential");
    let (_, count) = column(&rec, "frames", "particle.count");
    let (_, sim_time) = column(&rec, "frames", "system.simulation.time");
    let (_, positions) = column(&rec, "frames", "particle.positions");
    let (_, names) = column(&rec, "frames", "particle.names");
    let (_, elements) = column(&rec, "frames", "particle.elements");
    let (_, user_index) = column(&rec, "frames", "forces.user.index");
    let (_, user_sparse) = column(&rec, "frames", "forces.user.sparse");
    let (_, residue_ids) = column(&rec, "frames", "residue.ids");
    let desc = &rec.schema().streams[frames];
    assert_eq!(desc.signals[potential].unit.as_deref(), Some("kJ/mol"));
    assert_eq!(desc.signals[positions].unit.as_deref(), Some("nm"));
    assert_eq!(desc.signals[elements].dtype, DType::U32);
    assert_eq!(desc.signals[names].dtype, DType::Str);
    let mut row = FrameBuf::default();
    let (mut n_frames, mut path_of_atom_7) = (0, Vec::new());
    let mut forced_rows = 0;
    let mut last_sim_time = -1.0;
    while rec.read_frame(&mut row).unwrap() {
        if row.stream != frames {
            continue;
        }
        n_frames += 1;
        assert!(row.values[potential].as_f64().is_some());
        // particle.count is only in the first (topology) record, but every row has it.
        assert_eq!(row.values[count], Value::Float(65.0));
        let t = row.values[sim_time].as_f64().unwrap();
        assert!(t >= last_sim_time);
        last_sim_time = t;
        let xyz = floats(&row.values[positions]);
        assert_eq!(xyz.len(), 65 * 3);
        path_of_atom_7.push(xyz[3 * 7]);
        assert_eq!(json(&row.values[names])[7], "C8");
        assert_eq!(json(&row.values[residue_ids])[0], "1");
        assert_eq!(uints(&row.values[elements]).len(), 65);
        if n_frames == 1 {
            // The topology record comes before any iMD force key.
            assert_eq!(row.values[user_index], Value::Null);
            continue;
        }
        let forced = uints(&row.values[user_index]).len();
        assert_eq!(floats(&row.values[user_sparse]).len(), 3 * forced);
        if forced > 0 {
            forced_rows += 1;
        }
    }
    assert_eq!(n_frames, 1468);
    assert_eq!(path_of_atom_7.len(), 1468);
    assert!(
        path_of_atom_7.windows(2).any(|w| w[0] != w[1]),
        "atom 7 moves"
    );
    assert!(forced_rows > 0, "somebody pulled on the nanotube");
    assert_eq!(rec.header().metadata["max_particles"], "65");
}

#[test]
fn rust_server_quirks_keep_their_types() {
    let Some(path) = sample("hello.traj") else {
        return;
    };
    let mut rec = NanoverRecording::open(&path, &ReadOptions::default()).unwrap();
    let (frames, residue_ids) = column(&rec, "frames", "residue.ids");
    let (_, residue_names) = column(&rec, "frames", "residue.names");
    let (_, names) = column(&rec, "frames", "particle.names");
    let (_, positions) = column(&rec, "frames", "particle.positions");
    // residue.ids is a FloatArray in Rust recordings: a list of f32.
    assert_eq!(
        rec.schema().streams[frames].signals[residue_ids].dtype,
        DType::F32
    );
    let mut row = FrameBuf::default();
    let mut first = None;
    while rec.read_frame(&mut row).unwrap() {
        if row.stream == frames && row.values[positions] != Value::Null && first.is_none() {
            first = Some(row.clone());
        }
    }
    let first = first.unwrap();
    assert_eq!(floats(&first.values[residue_ids])[..3], [1.0, 2.0, 3.0]);
    assert_eq!(json(&first.values[residue_names])[0], "ALA");
    assert_eq!(json(&first.values[names])[0], " N  ");
}

#[test]
fn session_column_matches_split_sessions_on_every_sample() {
    for path in common::sample_files() {
        if FileKind::from_path(&path) != Some(FileKind::Trajectory) {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for counter in [false, true] {
            let rule = if counter {
                SplitRule::ResetOrCounterChange
            } else {
                SplitRule::FrameReset
            };
            let paths = RecordingPaths::resolve(&path);
            let sessions = split_sessions(
                Timeline::open(&paths, &ReadOptions::default()).unwrap(),
                rule,
            )
            .unwrap();
            let expected: Vec<u64> = sessions
                .iter()
                .flat_map(|s| std::iter::repeat_n(s.index as u64, s.frames.len()))
                .collect();
            let mut rec = NanoverRecording::open(&path, &ReadOptions::default())
                .unwrap()
                .with_counter_resets(counter);
            let (frames, session) = column(&rec, "frames", "session");
            let mut row = FrameBuf::default();
            let mut got = Vec::new();
            while rec.read_frame(&mut row).unwrap() {
                if row.stream == frames {
                    got.push(row.values[session].as_u64().unwrap());
                }
            }
            assert_eq!(got, expected, "{name} counter={counter}");
        }
    }
}

#[test]
fn either_file_of_a_pair_opens_the_recording() {
    let Some(path) = sample("test_core-nanotube-example-recording.state") else {
        return;
    };
    let rec = NanoverRecording::open(&path, &ReadOptions::default()).unwrap();
    let names: Vec<_> = rec
        .schema()
        .streams
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["frames", "state"]);
    assert!(rec.header().metadata["traj"].ends_with(".traj"));
}

#[test]
fn merged_timeline_and_sessions_match_the_spec_vectors() {
    let Some(dir) = common::samples_dir() else {
        return;
    };
    let d = dir.join("server-py");
    // test_core nanotube: 930 frames + 685 state updates, no shared timestamp.
    let paths = RecordingPaths::resolve(&d.join("test_core-nanotube-example-recording.traj"));
    assert!(paths.state.is_some());
    let events = Timeline::open(&paths, &ReadOptions::default())
        .unwrap()
        .count();
    assert_eq!(events, 1615);

    let frames_per_session = |name: &str, rule: SplitRule| {
        let paths = RecordingPaths::resolve(&d.join(name));
        let timeline = Timeline::open(&paths, &ReadOptions::default()).unwrap();
        let sessions = split_sessions(timeline, rule).unwrap();
        let frames: Vec<usize> = sessions.iter().map(|s| s.frames.len()).collect();
        let particles: Vec<Option<usize>> = sessions.iter().map(|s| s.particle_count()).collect();
        for s in &sessions[1..] {
            assert_eq!(s.frames[0].0, 0, "later sessions start at 0");
            assert_eq!(s.frames[0].1.frame_index, 0);
        }
        (frames, particles)
    };
    for rule in [SplitRule::FrameReset, SplitRule::ResetOrCounterChange] {
        let (f, p) = frames_per_session("sim-switching-test-recording.traj", rule.clone());
        assert_eq!(f, [104, 108, 127, 115]);
        assert_eq!(p, [Some(65), Some(173), Some(65), Some(173)]);
        let (f, _) = frames_per_session("17-ala-recording-multiple.traj", rule);
        assert_eq!(f, [252, 115, 29, 31]);
    }
    // Splitting on the simulation counter as a key (NanoVer's `-s`).
    let (f, _) = frames_per_session(
        "sim-switching-test-recording.traj",
        SplitRule::KeyChange("system.simulation.counter".into()),
    );
    assert_eq!(f, [104, 108, 127, 115]);
    // A recording that starts with a reset does not give an empty first part.
    let (f, _) = frames_per_session("hello.traj", SplitRule::FrameReset);
    assert_eq!(f, [1, 625]);
}

#[test]
fn split_files_write_standalone_parts() {
    let Some(path) = sample("sim-switching-test-recording.traj") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let parts = split_files(
        &RecordingPaths::resolve(&path),
        &dir.path().join("sim"),
        SplitRule::FrameReset,
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(parts.len(), 4);
    let frames: Vec<u64> = parts.iter().map(|p| p.frames).collect();
    assert_eq!(frames, [104, 108, 127, 115]);
    // The state (one key set before the first frame) is carried into every part.
    assert!(parts.iter().all(|p| p.states == 1));
    for part in &parts {
        let report = check(part.traj.as_ref().unwrap());
        assert!(report.is_valid(), "{report}");
        assert_eq!(report.files.len(), 2);
    }
    assert!(dir.path().join("sim-03.traj").is_file());
}

#[test]
fn every_sample_checks_valid_with_known_quirks_noted() {
    for path in common::sample_files() {
        if FileKind::from_path(&path) != Some(FileKind::Trajectory) {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let report = check(&path);
        assert!(report.is_valid(), "{name}: {report}");
        let traj = &report.files[0];
        let rust = name.starts_with("hello") || name.contains("nanotube-example");
        let float_ids = traj
            .findings
            .iter()
            .any(|f| f.kind == FindingKind::ResidueIdsAsFloat && f.severity == Severity::Info);
        assert_eq!(float_ids, rust, "{name}: {traj}");
        assert!(
            !traj
                .findings
                .iter()
                .any(|f| f.severity == Severity::Warning),
            "{name}: {traj}"
        );
    }
}

#[test]
fn a_merged_reset_is_found_split_and_repaired() {
    let (mut frames, states) = generate::small_recording();
    // The gRPC recorder merged the second session's reset into the next frame.
    frames[4].1.frame_index = 9;
    let traj = generate::write_traj(Vec::new(), &frames).unwrap();
    let state = generate::write_state(Vec::new(), &states).unwrap();

    let report = recfmt_nanover::check_reader(
        &traj[..],
        FileKind::Trajectory,
        Some(traj.len() as u64),
        &Default::default(),
    );
    let lost: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::LostReset)
        .collect();
    assert_eq!(lost.len(), 1, "{report}");
    assert_eq!(lost[0].record, Some(4));

    let count = |rule| {
        split_sessions(
            Timeline::from_bytes(Some(&traj), Some(&state)).unwrap(),
            rule,
        )
        .unwrap()
        .len()
    };
    assert_eq!(count(SplitRule::FrameReset), 1);
    assert_eq!(count(SplitRule::ResetOrCounterChange), 2);

    let (fixed, summary) = recfmt_nanover::repair_stream(
        &traj[..],
        FileKind::Trajectory,
        Some(traj.len() as u64),
        Vec::new(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(summary.resets_restored, 1);
    let mut r = Reader::new(&fixed[..], FileKind::Trajectory);
    let mut back: Vec<(u128, GetFrameResponse)> = Vec::new();
    for f in r
        .frames()
        .map(|m| m.unwrap())
        .map(|m| (m.timestamp, m.message))
    {
        back.push(f);
    }
    frames[4].1.frame_index = 0;
    assert_eq!(back, frames);

    // The adapter notes it, and can reset there.
    let rec = NanoverRecording::from_bytes(Some(&traj), Some(&state), &ReadOptions::default())
        .unwrap()
        .with_counter_resets(true);
    let mut rec = rec;
    let (frames_stream, session) = column(&rec, "frames", "session");
    let mut row = FrameBuf::default();
    let mut sessions = Vec::new();
    while rec.read_frame(&mut row).unwrap() {
        if row.stream == frames_stream {
            sessions.push(row.values[session].as_u64().unwrap());
        }
    }
    assert_eq!(sessions, [0, 0, 0, 0, 1, 1, 1]);
    assert!(
        rec.integrity()
            .warnings
            .iter()
            .any(|w| w.contains("without a reset"))
    );
}

#[test]
fn generated_recording_through_the_adapter() {
    let (traj, state) = generate::small_recording_bytes().unwrap();
    let mut rec =
        NanoverRecording::from_bytes(Some(&traj), Some(&state), &ReadOptions::default()).unwrap();
    let (frames, custom_list) = column(&rec, "frames", "custom.list");
    let (_, custom_bool) = column(&rec, "frames", "custom.bool");
    let (_, custom_null) = column(&rec, "frames", "custom.null");
    let (_, boxv) = column(&rec, "frames", "system.box.vectors");
    let (_, sparse) = column(&rec, "frames", "forces.user.sparse");
    let (_, delta) = column(&rec, "frames", "delta_keys");
    let (state_stream, key) = column(&rec, "state", "key");
    let (_, value) = column(&rec, "state", "value");
    let (_, removed) = column(&rec, "state", "removed");
    let desc = &rec.schema().streams[frames];
    assert_eq!(desc.signals.last().unwrap().name, "delta_keys");
    assert_eq!(desc.signals[custom_null].metadata["nanover.type"], "json");
    let mut row = FrameBuf::default();
    let mut frame_rows = Vec::new();
    let mut state_rows = Vec::new();
    while rec.read_frame(&mut row).unwrap() {
        if row.stream == frames {
            frame_rows.push(row.clone());
        } else if row.stream == state_stream {
            state_rows.push((
                row.values[key].clone(),
                row.values[value].clone(),
                row.values[removed].clone(),
            ));
        }
    }
    assert_eq!(frame_rows.len(), 7);
    assert_eq!(
        frame_rows[2].values[custom_list],
        Value::Str(r#"[1,"a"]"#.into())
    );
    assert_eq!(frame_rows[2].values[custom_bool], Value::Bool(true));
    // The custom keys stay in the aggregate until the reset.
    assert_eq!(frame_rows[3].values[custom_bool], Value::Bool(true));
    assert_eq!(frame_rows[4].values[custom_bool], Value::Null);
    assert_eq!(floats(&frame_rows[0].values[boxv]).len(), 9);
    // forces.user.sparse: absent, empty (stored as an index array), then one force.
    assert_eq!(frame_rows[0].values[sparse], Value::Null);
    assert!(floats(&frame_rows[1].values[sparse]).is_empty());
    assert_eq!(floats(&frame_rows[2].values[sparse]), [10.0, -5.0, 2.5]);
    // The delta names the record's own keys, and the index-typed empty array.
    let d1 = json(&frame_rows[1].values[delta]);
    assert!(
        d1.as_array()
            .unwrap()
            .contains(&serde_json::json!(["forces.user.sparse", "index"]))
    );
    assert!(
        d1.as_array()
            .unwrap()
            .contains(&serde_json::json!("particle.positions"))
    );
    assert!(
        !d1.as_array()
            .unwrap()
            .contains(&serde_json::json!("particle.names"))
    );
    assert_eq!(state_rows.len(), 7);
    assert_eq!(
        state_rows[3],
        (
            Value::Str("interaction.abc".into()),
            Value::Str("null".into()),
            Value::Bool(true)
        )
    );
}
