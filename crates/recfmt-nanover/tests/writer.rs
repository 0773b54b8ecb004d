//! Writing NanoVer recordings from the generic model (`NanoverWriter`, the registry's
//! `create`), and faithful low-level copies (`copy_recording`).

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use recfmt_core::{
    DType, FrameBuf, Header, ReadOptions, RecordingReader, RecordingWriter, Schema, SignalDesc,
    StreamDesc, TimeBase,
};
use recfmt_nanover::{
    FORMAT, FileKind, GetFrameResponse, NanoverRecording, NanoverWriter, RecordingPaths,
    StateUpdate, copy_recording, generate, io::Reader,
};

type Decoded = (Vec<(u128, GetFrameResponse)>, Vec<(u128, StateUpdate)>);

fn decode(traj: Option<&Path>, state: Option<&Path>) -> Decoded {
    let mut frames = Vec::new();
    if let Some(p) = traj {
        let bytes = std::fs::read(p).unwrap();
        let mut r = Reader::new(&bytes[..], FileKind::Trajectory);
        r.set_strict(true);
        for f in r
            .frames()
            .map(|m| m.unwrap())
            .map(|m| (m.timestamp, m.message))
        {
            frames.push(f);
        }
    }
    let mut states = Vec::new();
    if let Some(p) = state {
        let bytes = std::fs::read(p).unwrap();
        let mut r = Reader::new(&bytes[..], FileKind::State);
        r.set_strict(true);
        for s in r
            .updates()
            .map(|m| m.unwrap())
            .map(|m| (m.timestamp, m.message))
        {
            states.push(s);
        }
    }
    (frames, states)
}

/// Reads `path` through the registry and writes it back through the registry's `create`.
fn convert(path: &Path, out: &Path) -> u64 {
    let mut rec = (FORMAT.open)(path, &ReadOptions::default()).unwrap();
    let mut w = (FORMAT.create.unwrap())(out, &Default::default()).unwrap();
    w.write_header(rec.header(), rec.schema()).unwrap();
    let mut row = FrameBuf::default();
    let mut rows = 0;
    while rec.read_frame(&mut row).unwrap() {
        w.write_frame(&row).unwrap();
        rows += 1;
    }
    w.finish().unwrap();
    w.finish().unwrap(); // harmless twice
    rows
}

#[test]
fn every_sample_converts_back_to_the_same_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut total = 0;
    for path in common::sample_files() {
        if FileKind::from_path(&path) != Some(FileKind::Trajectory) {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let out = dir.path().join(&name);
        let rows = convert(&path, &out);
        let src = RecordingPaths::resolve(&path);
        let dst = RecordingPaths::resolve(&out);
        assert_eq!(src.state.is_some(), dst.state.is_some(), "{name}");
        let original = decode(src.traj.as_deref(), src.state.as_deref());
        let again = decode(dst.traj.as_deref(), dst.state.as_deref());
        assert_eq!(original.0.len(), again.0.len(), "{name}");
        for (i, (a, b)) in original.0.iter().zip(&again.0).enumerate() {
            assert!(a == b, "{name}: frame record {i} differs");
        }
        assert_eq!(original.1.len(), again.1.len(), "{name}");
        for (i, (a, b)) in original.1.iter().zip(&again.1).enumerate() {
            assert!(a == b, "{name}: state record {i} differs:\n{a:?}\n{b:?}");
        }
        // Same messages, same encoded size (only map order may differ from Python's).
        let size = |p: &Option<std::path::PathBuf>| {
            p.as_ref().map(|p| std::fs::metadata(p).unwrap().len())
        };
        assert_eq!(size(&src.traj), size(&dst.traj), "{name}");
        assert_eq!(size(&src.state), size(&dst.state), "{name}");
        total += original.0.len() + original.1.len();
        eprintln!(
            "{name}: {rows} rows, {} + {} messages equal",
            original.0.len(),
            original.1.len()
        );
    }
    if common::samples_dir().is_some() {
        // All 15 files: 9,944 records.
        assert_eq!(total, 9944);
    }
}

#[test]
fn generated_recording_round_trips_byte_for_byte() {
    let (traj, state) = generate::small_recording_bytes().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("g.traj"), &traj).unwrap();
    std::fs::write(dir.path().join("g.state"), &state).unwrap();
    // Either file names the pair; the output can be named by its .state too.
    convert(&dir.path().join("g.state"), &dir.path().join("out.state"));
    assert_eq!(std::fs::read(dir.path().join("out.traj")).unwrap(), traj);
    assert_eq!(std::fs::read(dir.path().join("out.state")).unwrap(), state);
}

#[test]
fn edge_messages_round_trip() {
    use recfmt_nanover::io::Writer;
    use recfmt_nanover::{FrameData, Struct, ValueArray, Version};
    let dir = tempfile::tempdir().unwrap();
    // No FrameData, an empty one, an array with no variant, empty state updates of both
    // kinds, and a value of every kind.
    let (mut frames, _) = generate::small_recording();
    frames.insert(
        0,
        (
            10,
            GetFrameResponse {
                frame_index: 0,
                frame: None,
            },
        ),
    );
    frames.insert(1, (20, GetFrameResponse::new(0, FrameData::default())));
    let mut odd = FrameData::default();
    odd.arrays.insert("odd".into(), ValueArray { values: None });
    odd.arrays
        .insert("forces.user.sparse".into(), ValueArray::indices(vec![]));
    frames.push((900_000, GetFrameResponse::new(3, odd)));
    let mut w = Writer::new(Vec::new(), FileKind::Trajectory, Version::V2).unwrap();
    for (t, f) in &frames {
        w.write_frame(*t, f).unwrap();
    }
    std::fs::write(dir.path().join("e.traj"), w.finish().unwrap()).unwrap();
    let states = vec![
        (5, StateUpdate::default()),
        (
            6,
            StateUpdate {
                changed_keys: Some(Struct::default()),
            },
        ),
        (
            7,
            StateUpdate::from_pairs([("x", recfmt_nanover::number(0.1 + 0.2))]),
        ),
    ];
    let mut w = Writer::new(Vec::new(), FileKind::State, Version::V2).unwrap();
    for (t, s) in &states {
        w.write_state(*t, s).unwrap();
    }
    std::fs::write(dir.path().join("e.state"), w.finish().unwrap()).unwrap();

    convert(&dir.path().join("e.traj"), &dir.path().join("f.traj"));
    let (f2, s2) = decode(
        Some(&dir.path().join("f.traj")),
        Some(&dir.path().join("f.state")),
    );
    assert_eq!(f2, frames);
    assert_eq!(s2, states);
}

#[test]
fn a_foreign_schema_is_refused_with_what_does_not_fit() {
    let mut nav = StreamDesc::new(
        "NAV",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    nav.signals.push(SignalDesc::scalar("x", DType::F32));
    let mut frames = StreamDesc::new(
        "frames",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    frames
        .signals
        .push(SignalDesc::scalar("energy", DType::F64));
    let schema = Schema {
        streams: vec![nav, frames],
    };
    let dir = tempfile::tempdir().unwrap();
    let mut w = NanoverWriter::new(&dir.path().join("x.traj"));
    let e = w
        .write_header(&Header::default(), &schema)
        .unwrap_err()
        .to_string();
    for part in [
        "stream \"NAV\"",
        "frames: no column frame_index",
        "frames: no column delta_keys",
        "frames.energy: not a NanoVer key column",
    ] {
        assert!(e.contains(part), "{part} missing from: {e}");
    }
    assert!(w.finish().is_ok());
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing written"
    );
}

#[test]
fn an_unfinished_writer_leaves_nothing() {
    let (traj, state) = generate::small_recording_bytes().unwrap();
    let mut rec =
        NanoverRecording::from_bytes(Some(&traj), Some(&state), &ReadOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    {
        let mut w = NanoverWriter::new(&dir.path().join("x.traj"));
        w.write_header(rec.header(), rec.schema()).unwrap();
        let mut row = FrameBuf::default();
        rec.read_frame(&mut row).unwrap();
        w.write_frame(&row).unwrap();
    }
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn copies_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    for (i, path) in common::sample_files().into_iter().enumerate() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // A folder per copy: a .traj and its .state copy to the same pair of names.
        let out = dir.path().join(i.to_string()).join(format!("copy-{name}"));
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let summary = copy_recording(&path, &out).unwrap();
        assert!(!summary.lost_data(), "{name}");
        for f in &summary.files {
            assert_eq!(
                std::fs::read(&f.source).unwrap(),
                std::fs::read(&f.target).unwrap(),
                "{name}: {}",
                f.target.display()
            );
        }
        let partner = RecordingPaths::resolve(&path);
        let expected = usize::from(partner.traj.is_some()) + usize::from(partner.state.is_some());
        assert_eq!(summary.files.len(), expected, "{name}");
    }
    // A torn copy keeps every complete record and says what it lost.
    let (traj, _) = generate::small_recording_bytes().unwrap();
    std::fs::write(dir.path().join("torn.traj"), &traj[..traj.len() - 3]).unwrap();
    let s = copy_recording(&dir.path().join("torn.traj"), &dir.path().join("c.traj")).unwrap();
    assert!(s.lost_data());
    assert_eq!(s.files[0].records, 6);
}
