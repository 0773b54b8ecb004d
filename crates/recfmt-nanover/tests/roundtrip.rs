//! Round trips: every sample, and generated files in both versions, read back to equal
//! messages (not bytes: NanoVer's Python writer orders map entries differently every run).

#![allow(clippy::unwrap_used)]

mod common;

use prost::Message;
use recfmt_nanover::io::{Reader, Record, Writer};
use recfmt_nanover::{
    FileKind, FrameData, GetFrameResponse, StateUpdate, Version, VersionPolicy, generate,
};

enum Msg {
    Frame(GetFrameResponse),
    State(StateUpdate),
}

fn read_all(bytes: &[u8], kind: FileKind) -> Vec<(u128, Msg, usize)> {
    let mut r = Reader::new(bytes, kind);
    r.set_strict(true);
    r.set_total_len(Some(bytes.len() as u64));
    let mut record = Record::default();
    let mut out = Vec::new();
    while r.read_record(&mut record).unwrap() {
        let msg = match kind {
            FileKind::Trajectory => {
                Msg::Frame(GetFrameResponse::decode(&record.payload[..]).unwrap())
            }
            FileKind::State => Msg::State(StateUpdate::decode(&record.payload[..]).unwrap()),
        };
        out.push((record.timestamp, msg, record.payload.len()));
    }
    assert_eq!(r.position(), bytes.len() as u64);
    out
}

#[test]
fn every_sample_round_trips_to_equal_messages() {
    let mut total = 0;
    for path in common::sample_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let kind = FileKind::from_path(&path).unwrap();
        let original = std::fs::read(&path).unwrap();
        let messages = read_all(&original, kind);

        let mut w = Writer::new(Vec::new(), kind, Version::V2).unwrap();
        for (t, m, payload_len) in &messages {
            match m {
                Msg::Frame(f) => {
                    // Nothing was dropped in decoding: re-encoding gives the same length.
                    assert_eq!(f.encoded_len(), *payload_len, "{name} at t={t}");
                    w.write_frame(*t, f).unwrap();
                }
                Msg::State(s) => {
                    assert_eq!(s.encoded_len(), *payload_len, "{name} at t={t}");
                    w.write_state(*t, s).unwrap();
                }
            }
        }
        let copy = w.finish().unwrap();
        assert_eq!(copy.len(), original.len(), "{name}: same size");
        let again = read_all(&copy, kind);
        assert_eq!(again.len(), messages.len(), "{name}");
        for ((t1, m1, _), (t2, m2, _)) in messages.iter().zip(&again) {
            assert_eq!(t1, t2, "{name}");
            match (m1, m2) {
                (Msg::Frame(a), Msg::Frame(b)) => assert!(a == b, "{name} at t={t1}"),
                (Msg::State(a), Msg::State(b)) => assert!(a == b, "{name} at t={t1}"),
                _ => unreachable!(),
            }
        }
        // Our own output is deterministic: writing it again gives the same bytes.
        let mut w = Writer::new(Vec::new(), kind, Version::V2).unwrap();
        for (t, m, _) in &again {
            match m {
                Msg::Frame(f) => w.write_frame(*t, f).unwrap(),
                Msg::State(s) => w.write_state(*t, s).unwrap(),
            }
        }
        assert!(w.finish().unwrap() == copy, "{name}: deterministic bytes");
        total += messages.len();
        eprintln!("{name}: {} messages round-trip", messages.len());
    }
    if common::samples_dir().is_some() {
        assert_eq!(
            total,
            427 + 1 + 1667 + 1259 + 626 + 125 + 114 + 86 + 454 + 1 + 930 + 685 + 930 + 1468 + 1171
        );
    }
}

#[test]
fn generated_recording_round_trips_in_version_2() {
    let (frames, states) = generate::small_recording();
    let traj = generate::write_traj(Vec::new(), &frames).unwrap();
    let state = generate::write_state(Vec::new(), &states).unwrap();
    let mut r = Reader::new(&traj[..], FileKind::Trajectory);
    let mut back = Vec::new();
    for f in r
        .frames()
        .map(|m| m.unwrap())
        .map(|m| (m.timestamp, m.message))
    {
        back.push(f);
    }
    assert_eq!(back, frames);
    let mut r = Reader::new(&state[..], FileKind::State);
    let mut back = Vec::new();
    for s in r
        .updates()
        .map(|m| m.unwrap())
        .map(|m| (m.timestamp, m.message))
    {
        back.push(s);
    }
    assert_eq!(back, states);
}

#[test]
fn version_1_round_trips_and_is_detected() {
    let (frames, states) = generate::small_recording();
    let mut w = Writer::new(Vec::new(), FileKind::Trajectory, Version::V1).unwrap();
    for (t, f) in &frames {
        w.write_frame(*t, f).unwrap();
    }
    let traj = w.finish().unwrap();
    assert_ne!(traj[..8], recfmt_nanover::MAGIC.to_le_bytes());
    let mut w = Writer::new(Vec::new(), FileKind::State, Version::V1).unwrap();
    for (t, s) in &states {
        w.write_state(*t, s).unwrap();
    }
    let state = w.finish().unwrap();

    // Auto-detected.
    let mut r = Reader::new(&traj[..], FileKind::Trajectory);
    assert_eq!(r.read_header().unwrap(), Version::V1);
    let mut back: Vec<(u128, FrameData)> = Vec::new();
    let mut indices = Vec::new();
    for (t, f) in r
        .frames()
        .map(|m| m.unwrap())
        .map(|m| (m.timestamp, m.message))
    {
        indices.push(f.frame_index);
        back.push((t, f.frame.unwrap()));
    }
    let expected: Vec<(u128, FrameData)> = frames
        .iter()
        .map(|(t, f)| (*t, f.frame.clone().unwrap()))
        .collect();
    assert_eq!(back, expected);
    // Version 1 has no index: the ordinal stands in, so only the first frame resets.
    assert_eq!(indices, (0..frames.len() as u32).collect::<Vec<_>>());
    assert!(recfmt_nanover::score(&traj) != recfmt_core::Score::No);

    let mut r = Reader::new(&state[..], FileKind::State);
    let mut back = Vec::new();
    for s in r
        .updates()
        .map(|m| m.unwrap())
        .map(|m| (m.timestamp, m.message))
    {
        back.push(s);
    }
    assert_eq!(back, states);
    assert_eq!(r.version(), Some(Version::V1));

    // Forced version 2 refuses it; forced version 1 reads it.
    let mut r = Reader::new(&traj[..], FileKind::Trajectory);
    r.set_version_policy(VersionPolicy::V2);
    assert!(r.read_header().is_err());
    let mut r = Reader::new(&traj[..], FileKind::Trajectory);
    r.set_version_policy(VersionPolicy::V1);
    assert_eq!(r.read_header().unwrap(), Version::V1);
}

#[test]
fn edge_files_header_only_and_empty_payloads() {
    // Header only.
    let header = recfmt_nanover::header_bytes();
    let mut r = Reader::new(&header[..], FileKind::Trajectory);
    assert!(r.frames().next().is_none());
    assert!(!r.integrity().lost_data());
    // A zero-length payload is a legal empty message; `12 00` is an empty FrameData.
    let mut w = Writer::new(Vec::new(), FileKind::Trajectory, Version::V2).unwrap();
    w.write_record(1, &[]).unwrap();
    w.write_record(2, &[0x12, 0x00]).unwrap();
    let bytes = w.finish().unwrap();
    let mut r = Reader::new(&bytes[..], FileKind::Trajectory);
    assert_eq!(
        r.frames()
            .next()
            .transpose()
            .unwrap()
            .map(|m| (m.timestamp, m.message)),
        Some((1, GetFrameResponse::default()))
    );
    assert_eq!(
        r.frames()
            .next()
            .transpose()
            .unwrap()
            .map(|m| (m.timestamp, m.message)),
        Some((2, GetFrameResponse::new(0, FrameData::default())))
    );
    let mut w = Writer::new(Vec::new(), FileKind::State, Version::V2).unwrap();
    w.write_record(1, &[]).unwrap();
    let bytes = w.finish().unwrap();
    let mut r = Reader::new(&bytes[..], FileKind::State);
    assert_eq!(
        r.updates()
            .next()
            .transpose()
            .unwrap()
            .map(|m| (m.timestamp, m.message)),
        Some((1, StateUpdate::default()))
    );
    // An empty file is not a recording.
    let mut r = Reader::new(&[][..], FileKind::Trajectory);
    assert!(r.read_header().is_err());
}

#[test]
fn version_1_files_open_through_the_format_descriptor() {
    let (frames, states) = generate::small_recording();
    let dir = tempfile::tempdir().unwrap();
    let mut w = Writer::new(Vec::new(), FileKind::Trajectory, Version::V1).unwrap();
    for (t, f) in &frames {
        w.write_frame(*t, f).unwrap();
    }
    std::fs::write(dir.path().join("old.traj"), w.finish().unwrap()).unwrap();
    let mut w = Writer::new(Vec::new(), FileKind::State, Version::V1).unwrap();
    for (t, s) in &states {
        w.write_state(*t, s).unwrap();
    }
    std::fs::write(dir.path().join("old.state"), w.finish().unwrap()).unwrap();

    use recfmt_core::{FrameBuf, ReadOptions, RecordingReader};
    let mut rec =
        (recfmt_nanover::FORMAT.open)(&dir.path().join("old.traj"), &ReadOptions::default())
            .unwrap();
    assert_eq!(rec.header().version, "1");
    let mut row = FrameBuf::default();
    let mut per_stream = [0; 2];
    while rec.read_frame(&mut row).unwrap() {
        per_stream[row.stream] += 1;
    }
    assert_eq!(per_stream, [7, 7]);
    assert!(!rec.integrity().lost_data());

    // A .state without a .traj beside it gives the state stream only.
    let alone = tempfile::tempdir().unwrap();
    std::fs::copy(dir.path().join("old.state"), alone.path().join("old.state")).unwrap();
    let mut rec =
        (recfmt_nanover::FORMAT.open)(&alone.path().join("old.state"), &ReadOptions::default())
            .unwrap();
    let names: Vec<_> = rec
        .schema()
        .streams
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(names, ["state"]);
    let mut rows = 0;
    while rec.read_frame(&mut row).unwrap() {
        rows += 1;
    }
    assert_eq!(rows, 7);
}
