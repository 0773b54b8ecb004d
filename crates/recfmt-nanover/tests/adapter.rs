//! The generic adapter, detection, timelines, sessions and checks on the real samples.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use recfmt_core::{FrameBuf, ReadOptions, RecordingReader, Score, Value};
use recfmt_nanover::{
    FORMAT, FileKind, FindingKind, GetFrameResponse, NanoverRecording, RecordingPaths, Severity,
    SplitRule, Timeline, check, generate, io::Reader, split_files, split_sessions,
};

fn sample(name: &str) -> Option<std::path::PathBuf> {
    common::samples_dir().map(|d| d.join("server-py").join(name))
}

/// Frames, particle rows expected, and state key changes, counted with the low-level reader.
fn expected_rows(traj: &Path) -> (u64, u64, u64) {
    let bytes = std::fs::read(traj).unwrap();
    let mut r = Reader::new(&bytes[..], FileKind::Trajectory);
    let (mut frames, mut particles) = (0, 0);
    while let Some((_, f)) = r.read_frame().unwrap() {
        frames += 1;
        if let Some(p) = f
            .frame
            .as_ref()
            .and_then(|d| d.arrays.get("particle.positions"))
        {
            particles += (p.len() / 3) as u64;
        }
    }
    let mut states = 0;
    let state = traj.with_extension("state");
    if state.is_file() {
        let bytes = std::fs::read(&state).unwrap();
        let mut r = Reader::new(&bytes[..], FileKind::State);
        while let Some((_, s)) = r.read_state().unwrap() {
            states += s.changes().count() as u64;
        }
    }
    (frames, particles, states)
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
        let (frames, particles, states) = expected_rows(&path);
        assert_eq!(counts.get("frames").copied().unwrap_or(0), frames, "{name}");
        assert_eq!(
            counts.get("particles").copied().unwrap_or(0),
            particles,
            "{name}"
        );
        assert_eq!(counts.get("state").copied().unwrap_or(0), states, "{name}");
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

#[test]
fn tutorial_nanotube_gives_energies_and_atom_paths() {
    let Some(path) = sample("tutorials-nanotube-recording.traj") else {
        return;
    };
    let mut rec = NanoverRecording::open(&path, &ReadOptions::default()).unwrap();
    let (frames, potential) = column(&rec, "frames", "energy.potential");
    let (_, count) = column(&rec, "frames", "particle.count");
    let (_, sim_time) = column(&rec, "frames", "system.simulation.time");
    let (particles, x) = column(&rec, "particles", "x");
    let (_, particle) = column(&rec, "particles", "particle");
    let (_, fx_user) = column(&rec, "particles", "fx_user");
    let (_, fx_system) = column(&rec, "particles", "fx_system");
    let (_, residue_id) = column(&rec, "particles", "residue_id");
    let (_, chain_name) = column(&rec, "particles", "chain_name");
    let (_, name) = column(&rec, "particles", "name");
    assert_eq!(rec.schema().streams[particles].entity, Some(particle));
    assert_eq!(
        rec.schema().streams[frames].signals[potential]
            .unit
            .as_deref(),
        Some("kJ/mol")
    );
    let mut row = FrameBuf::default();
    let (mut n_frames, mut path_of_atom_7) = (0, Vec::new());
    let mut forced_rows = 0;
    let mut last_sim_time = -1.0;
    while rec.read_frame(&mut row).unwrap() {
        if row.stream == frames {
            n_frames += 1;
            assert!(row.values[potential].as_f64().is_some());
            // particle.count is only in the first (topology) record, but every row has it.
            assert_eq!(row.values[count], Value::Float(65.0));
            let t = row.values[sim_time].as_f64().unwrap();
            assert!(t >= last_sim_time);
            last_sim_time = t;
        } else if row.stream == particles {
            if row.values[particle] == Value::UInt(7) {
                path_of_atom_7.push(row.values[x].as_f64().unwrap());
                assert_eq!(row.values[name], Value::Str("C8".into()));
                assert_eq!(row.values[residue_id], Value::Str("1".into()));
                assert!(matches!(&row.values[chain_name], Value::Str(_)));
            }
            if row.values[fx_user].as_f64().is_some_and(|f| f != 0.0) {
                forced_rows += 1;
            }
            assert!(row.values[fx_system].as_f64().is_some() || n_frames == 1);
        }
    }
    assert_eq!(n_frames, 1468);
    assert_eq!(path_of_atom_7.len(), 1468);
    assert!(forced_rows > 0, "somebody pulled on the nanotube");
    assert_eq!(rec.header().metadata["max_particles"], "65");
}

#[test]
fn rust_server_quirks_read_as_text_and_counts() {
    let Some(path) = sample("hello.traj") else {
        return;
    };
    let mut rec = NanoverRecording::open(&path, &ReadOptions::default()).unwrap();
    let (particles, residue_id) = column(&rec, "particles", "residue_id");
    let (_, residue_name) = column(&rec, "particles", "residue_name");
    let (_, name) = column(&rec, "particles", "name");
    let mut row = FrameBuf::default();
    let mut first = None;
    while rec.read_frame(&mut row).unwrap() {
        if row.stream == particles && first.is_none() {
            first = Some(row.clone());
        }
    }
    let first = first.unwrap();
    // residue.ids is a FloatArray in Rust recordings; it reads as "1".
    assert_eq!(first.values[residue_id], Value::Str("1".into()));
    assert_eq!(first.values[residue_name], Value::Str("ALA".into()));
    assert_eq!(first.values[name], Value::Str(" N  ".into()));
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
    while let Some(f) = r.read_frame().unwrap() {
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
    let (_, boxv) = column(&rec, "frames", "system.box.vectors");
    let (particles, fx_user) = column(&rec, "particles", "fx_user");
    let (_, particle) = column(&rec, "particles", "particle");
    let (state_stream, key) = column(&rec, "state", "key");
    let (_, value) = column(&rec, "state", "value");
    let (_, removed) = column(&rec, "state", "removed");
    let mut row = FrameBuf::default();
    let mut frame_rows = Vec::new();
    let mut user = Vec::new();
    let mut state_rows = Vec::new();
    while rec.read_frame(&mut row).unwrap() {
        if row.stream == frames {
            frame_rows.push(row.clone());
        } else if row.stream == particles && row.values[particle] == Value::UInt(1) {
            user.push(row.values[fx_user].clone());
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
    assert!(matches!(&frame_rows[0].values[boxv], Value::Array(a) if a.len() == 9));
    // Particle 1's user force: no force arrays, empty (index-typed), then 10 N.
    assert_eq!(user[0], Value::Null);
    assert_eq!(user[1], Value::Float(0.0));
    assert_eq!(user[2], Value::Float(10.0));
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
