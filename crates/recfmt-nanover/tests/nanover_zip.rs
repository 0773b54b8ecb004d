//! `.nanover.zip` (the converted sample) reads to the same messages as the `.traj`/`.state`
//! it was converted from.

#![cfg(feature = "nanover-zip")]
#![allow(clippy::unwrap_used)]

mod common;

use std::fs::File;

use recfmt_core::{FrameBuf, ReadOptions, RecordingReader, Score};
use recfmt_nanover::{
    FORMAT, NanoverRecording, RecordingPaths, SplitRule, Timeline, nzip::read_nanover_zip,
    split_sessions,
};

#[test]
fn converted_zip_matches_the_original_recording() {
    let Some(dir) = common::samples_dir() else {
        return;
    };
    let zip_path = dir.join("converted/sim-switching-test-recording.nanover.zip");
    let head = std::fs::read(&zip_path).unwrap();
    assert_eq!((FORMAT.score)(&head[..4096]), Score::Yes(230));

    let (events, integrity) =
        read_nanover_zip(File::open(&zip_path).unwrap(), &Default::default()).unwrap();
    assert!(!integrity.lost_data(), "{integrity:?}");
    let original: Vec<_> = Timeline::open(
        &RecordingPaths::resolve(&dir.join("server-py/sim-switching-test-recording.traj")),
        &ReadOptions::default(),
    )
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap();
    assert_eq!(events.len(), 455);
    assert_eq!(events.len(), original.len());
    for (i, (z, o)) in events.iter().zip(&original).enumerate() {
        assert_eq!(z.timestamp, o.timestamp, "event {i}");
        assert_eq!(z.state, o.state, "event {i}");
        // Every frame, with every array and value, is the same message.
        assert!(z.frame == o.frame, "event {i}");
    }

    let sessions = split_sessions(events.into_iter().map(Ok), SplitRule::FrameReset).unwrap();
    let frames: Vec<usize> = sessions.iter().map(|s| s.frames.len()).collect();
    assert_eq!(frames, [104, 108, 127, 115]);

    let mut rec = (FORMAT.open)(&zip_path, &ReadOptions::default()).unwrap();
    let mut rows = 0;
    let mut row = FrameBuf::default();
    while rec.read_frame(&mut row).unwrap() {
        rows += 1;
    }
    assert!(rows > 454);
    assert!(!rec.integrity().lost_data());
}

#[test]
fn damaged_zips_never_panic() {
    let Some(dir) = common::samples_dir() else {
        return;
    };
    let bytes =
        std::fs::read(dir.join("converted/sim-switching-test-recording.nanover.zip")).unwrap();
    let mut rng = common::Rng(7);
    for round in 0..60 {
        let mut copy = bytes.clone();
        if round % 3 == 0 {
            copy.truncate(rng.below(copy.len() as u64) as usize);
        } else {
            for _ in 0..1 + rng.below(20) {
                let at = rng.below(copy.len() as u64) as usize;
                copy[at] ^= 1 << rng.below(8);
            }
        }
        if let Ok(mut rec) =
            NanoverRecording::from_zip(std::io::Cursor::new(copy), &ReadOptions::default())
        {
            let mut row = FrameBuf::default();
            while let Ok(true) = rec.read_frame(&mut row) {}
        }
    }
}

fn zip_entries(path: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let mut z = zip::ZipArchive::new(File::open(path).unwrap()).unwrap();
    (0..z.len())
        .map(|i| {
            let mut e = z.by_index(i).unwrap();
            assert_eq!(e.compression(), zip::CompressionMethod::Stored);
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            (e.name().to_string(), data)
        })
        .collect()
}

#[test]
fn converting_the_sample_gives_the_shipped_zip() {
    let Some(dir) = common::samples_dir() else {
        return;
    };
    let shipped = dir.join("converted/sim-switching-test-recording.nanover.zip");
    let traj = dir.join("server-py/sim-switching-test-recording.traj");
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("sim.nanover.zip");
    let state = RecordingPaths::resolve(&traj).state.unwrap();
    let summary = recfmt_nanover::write_zip(&traj, Some(&state), &out).unwrap();
    assert_eq!(
        (summary.messages, summary.frames, summary.states),
        (455, 454, 1)
    );
    assert_eq!(summary.values_changed, 0);
    assert!(!summary.integrity.lost_data());
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".partial"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");

    // Our reader sees exactly the same events in both.
    let read = |p: &std::path::Path| {
        let (events, integrity) =
            read_nanover_zip(File::open(p).unwrap(), &Default::default()).unwrap();
        assert!(!integrity.lost_data());
        events
    };
    let (ours, theirs) = (read(&out), read(&shipped));
    assert_eq!(ours.len(), 455);
    assert!(ours == theirs, "events differ");

    // Same entries in the same order; index.msgpack byte-identical; messages.msgpack the
    // same length (map key order differs: NanoVer's follows Python set order).
    let (a, b) = (zip_entries(&out), zip_entries(&shipped));
    let names = |e: &[(String, Vec<u8>)]| e.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), ["messages.msgpack", "index.msgpack"]);
    assert_eq!(names(&a), names(&b));
    assert_eq!(a[1].1, b[1].1, "index.msgpack differs");
    assert_eq!(a[0].1.len(), b[0].1.len());
    // The whole zip has the same size and the same bytes outside messages.msgpack's data
    // and the two CRC fields of that entry (local header at 14, central directory).
    let (x, y) = (
        std::fs::read(&out).unwrap(),
        std::fs::read(&shipped).unwrap(),
    );
    assert_eq!(x.len(), y.len());
    let data = 66..66 + a[0].1.len();
    let cd = y.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    let differing: Vec<usize> = (0..x.len())
        .filter(|&i| x[i] != y[i] && !data.contains(&i))
        .collect();
    assert!(
        differing
            .iter()
            .all(|&i| (14..18).contains(&i) || (cd + 16..cd + 20).contains(&i)),
        "bytes differ outside the messages and their CRC: {:?}",
        &differing[..differing.len().min(20)]
    );
}

#[test]
fn a_zip_of_every_sample_reads_back_as_its_messages() {
    let Some(dir) = common::samples_dir() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    for traj in common::sample_files() {
        if traj.extension().is_none_or(|e| e != "traj") {
            continue;
        }
        let name = traj.file_name().unwrap().to_string_lossy().into_owned();
        let paths = RecordingPaths::resolve(&traj);
        let out = work.path().join(format!("{name}.nanover.zip"));
        let summary = recfmt_nanover::write_zip(&traj, paths.state.as_deref(), &out).unwrap();
        let (events, integrity) =
            read_nanover_zip(File::open(&out).unwrap(), &Default::default()).unwrap();
        assert!(!integrity.lost_data(), "{name}");
        assert_eq!(events.len() as u64, summary.messages, "{name}");
        // Frames: the same count, indices and positions as the .traj.
        let original: Vec<_> = Timeline::open(&paths, &ReadOptions::default())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let frames = |ev: &[recfmt_nanover::Event]| -> Vec<(u128, u32, Option<Vec<f32>>)> {
            ev.iter()
                .filter_map(|e| {
                    let f = e.frame.as_ref()?;
                    let pos = f
                        .frame
                        .as_ref()
                        .and_then(|d| d.arrays.get("particle.positions"))
                        .and_then(|a| a.as_floats())
                        .map(<[f32]>::to_vec);
                    Some((e.timestamp, f.frame_index, pos))
                })
                .collect()
        };
        assert!(frames(&events) == frames(&original), "{name}");
        eprintln!(
            "{name}: {} messages, {} bytes",
            summary.messages, summary.bytes
        );
        let _ = &dir;
    }
}
