//! `seek_time` jumps to the first frame at or after a time: the rows that follow equal a full
//! read filtered by time, and the frames before it are never read.

#![allow(clippy::unwrap_used)]

use recfmt_core::{FrameBuf, RecordingReader};

fn rows(rec: &mut dyn RecordingReader) -> Vec<(String, Vec<recfmt_core::Value>)> {
    let mut out = Vec::new();
    let mut frame = FrameBuf::default();
    while rec.read_frame(&mut frame).unwrap() {
        out.push((
            rec.schema().streams[frame.stream].name.clone(),
            frame.values.clone(),
        ));
    }
    out
}

#[test]
fn seeking_equals_a_filtered_full_read_and_skips_the_frames_before() {
    let dir = tempfile::tempdir().unwrap();
    recfmt_icarec::generate::write_all_types(dir.path(), 2_000).unwrap();
    let open = || (recfmt_icarec::FORMAT.open)(dir.path(), &Default::default()).unwrap();
    let full = rows(open().as_mut());
    for start in [0.0, 0.5, 10.0 + 1.0 / 128.0, 31.0, 1e9] {
        let mut rec = open();
        assert!(rec.seek_time(start).unwrap());
        let mut frame = FrameBuf::default();
        let mut sought = Vec::new();
        let mut first_position = None;
        while rec.read_frame(&mut frame).unwrap() {
            first_position.get_or_insert(rec.progress().0);
            sought.push((
                rec.schema().streams[frame.stream].name.clone(),
                frame.values.clone(),
            ));
        }
        let t = |v: &[recfmt_core::Value]| v[0].as_f64().unwrap();
        let expected: Vec<_> = full
            .iter()
            .filter(|(s, v)| s == "dynamic" && t(v) >= start)
            .cloned()
            .collect();
        let got: Vec<_> = sought
            .iter()
            .filter(|(s, _)| s == "dynamic")
            .cloned()
            .collect();
        assert_eq!(got, expected, "start {start}");
        if let (Some(pos), Some(first)) = (first_position, expected.first()) {
            // The reader is positioned at the first kept frame, not at the start of the file.
            let stride = 216.0;
            let skipped_frames = (t(&first.1) * 64.0).round();
            assert!(
                pos as f64 >= skipped_frames * stride,
                "start {start}: read from byte {pos}"
            );
        }
    }
}

/// `stop_time` ends the frames before the first at or after the end: the rows are those of a
/// full read before it (the static row first, with the first frame's time), the frames after
/// it are never read, and a torn tail after it is not reached, so not reported.
#[test]
fn stopping_ends_the_frames_before_the_end_and_reads_no_further() {
    let dir = tempfile::tempdir().unwrap();
    recfmt_icarec::generate::write_torn(dir.path(), 2_000, 100).unwrap();
    let open = || (recfmt_icarec::FORMAT.open)(dir.path(), &Default::default()).unwrap();
    let mut whole = open();
    let full = rows(whole.as_mut());
    assert!(whole.integrity().lost_data(), "the torn tail is reported");
    let stride = 216;
    let t = |v: &[recfmt_core::Value]| v[0].as_f64().unwrap();
    // Between frames, on a frame's time (that frame is not wanted), before the first frame.
    for end in [3.3, 10.0, -1.0] {
        let mut rec = open();
        assert!(rec.stop_time(end));
        let got = rows(rec.as_mut());
        let expected: Vec<_> = full
            .iter()
            .filter(|(s, v)| s == "static" || t(v) < end)
            .cloned()
            .collect();
        assert_eq!(got, expected, "end {end}");
        let frames = got.iter().filter(|(s, _)| s == "dynamic").count() as u64;
        assert_eq!(rec.progress().0, frames * stride, "end {end}: bytes read");
        assert!(
            !rec.integrity().lost_data(),
            "end {end}: {:?}",
            rec.integrity()
        );
    }
    // An end after the last frame reads to the torn tail and reports it.
    let mut rec = open();
    assert!(rec.stop_time(1e9));
    assert_eq!(rows(rec.as_mut()), full);
    assert!(rec.integrity().lost_data());
}

/// Regression (issue 24): frames that share exactly the start time are all inside the window.
/// The seek used to land on the last of them (the binary search for the last frame at or
/// before the start) and skip the earlier duplicates; it must land on the first.
#[test]
fn seeking_to_a_repeated_time_keeps_every_frame_of_that_time() {
    let dir = tempfile::tempdir().unwrap();
    recfmt_icarec::generate::write_all_types(dir.path(), 400).unwrap();
    // Frames 96..=100 all get frame 96's time (1.5 s): still in order, five of a kind.
    let stride = 216;
    let path = dir.path().join(recfmt_icarec::DYNAMIC_FILE);
    let mut bytes = std::fs::read(&path).unwrap();
    for i in 96..=100 {
        bytes[i * stride..i * stride + 8].copy_from_slice(&1.5f64.to_le_bytes());
    }
    std::fs::write(&path, &bytes).unwrap();
    let open = || (recfmt_icarec::FORMAT.open)(dir.path(), &Default::default()).unwrap();
    let full = rows(open().as_mut());
    let t = |v: &[recfmt_core::Value]| v[0].as_f64().unwrap();
    let at_start = full
        .iter()
        .filter(|(s, v)| s == "dynamic" && t(v) == 1.5)
        .count();
    assert_eq!(at_start, 5, "the test file has five frames at 1.5 s");
    // On the repeated time, just before it, and between it and the next frame.
    for start in [1.5, 1.5 - 1e-9, 1.5 + 1e-9] {
        let mut rec = open();
        assert!(rec.seek_time(start).unwrap());
        let got: Vec<_> = rows(rec.as_mut())
            .into_iter()
            .filter(|(s, _)| s == "dynamic")
            .collect();
        let expected: Vec<_> = full
            .iter()
            .filter(|(s, v)| s == "dynamic" && t(v) >= start)
            .cloned()
            .collect();
        assert_eq!(got.len(), expected.len(), "start {start}");
        assert_eq!(got, expected, "start {start}");
    }
}
