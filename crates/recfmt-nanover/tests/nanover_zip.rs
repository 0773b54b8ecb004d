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
            NanoverRecording::from_zip(std::io::Cursor::new(&copy[..]), &ReadOptions::default())
        {
            let mut row = FrameBuf::default();
            while let Ok(true) = rec.read_frame(&mut row) {}
        }
    }
}
