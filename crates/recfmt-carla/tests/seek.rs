//! `seek_time` on seekable sources.

mod common;

use std::io::Cursor;

use recfmt_carla::CarlaRecording;
use recfmt_core::{FrameBuf, ReadOptions, RecordingReader};

/// Rows (as text, so NaN values compare) with time at or after `from`.
fn rows_from<R: RecordingReader>(rec: &mut R, from: f64) -> Vec<String> {
    let schema = rec.schema().clone();
    let mut buf = FrameBuf::default();
    let mut out = Vec::new();
    while rec.read_frame(&mut buf).expect("row") {
        let t = buf.time_seconds(&schema.streams[buf.stream]).expect("time");
        if t >= from {
            out.push(format!("{buf:?}"));
        }
    }
    out
}

#[test]
fn seeking_gives_the_rows_of_a_filtered_full_read_and_decodes_less() {
    for path in common::sample_files() {
        let opts = ReadOptions::default();
        let mut full = CarlaRecording::open(&path, &opts).expect("open");
        let all = rows_from(&mut full, f64::NEG_INFINITY);
        let full_decoded = full.bytes_decoded();
        for t in [0.0, 3.3, 10.0, 12.5, 1e9] {
            let mut whole = CarlaRecording::open(&path, &opts).expect("open");
            let want = rows_from(&mut whole, t);
            let mut seeking = CarlaRecording::open(&path, &opts).expect("open");
            assert!(seeking.seek_time(t).expect("seek"));
            let got = rows_from(&mut seeking, t);
            assert_eq!(got.len(), want.len(), "{path:?} at {t}");
            assert!(got == want, "{path:?} at {t}");
            // Nothing before the first frame at or after t was decoded as rows.
            let unfiltered = {
                let mut s = CarlaRecording::open(&path, &opts).expect("open");
                s.seek_time(t).expect("seek");
                rows_from(&mut s, f64::NEG_INFINITY).len()
            };
            assert_eq!(unfiltered, want.len(), "{path:?} at {t}");
            if t > 0.0 {
                assert!(
                    seeking.bytes_decoded() < full_decoded,
                    "{path:?} at {t}: {} vs {full_decoded}",
                    seeking.bytes_decoded()
                );
            }
            if t == 10.0 {
                // About the part after 10 s, plus the scanned headers.
                assert!(seeking.bytes_decoded() < full_decoded * 95 / 100);
            }
        }
        assert!(!all.is_empty());
    }
}

#[test]
fn in_memory_sources_seek_when_opened_seekable() {
    let Some(path) = common::sample_files().into_iter().next() else {
        return;
    };
    let bytes = std::fs::read(path).expect("read");
    let opts = ReadOptions::default();
    let mut plain = CarlaRecording::new(&bytes[..], &opts, None).expect("open");
    assert!(!plain.seek_time(5.0).expect("seek"));
    let mut seekable =
        CarlaRecording::new_seekable(Cursor::new(&bytes[..]), &opts, None).expect("open");
    assert!(seekable.seek_time(5.0).expect("seek"));
    let mut whole = CarlaRecording::new(&bytes[..], &opts, None).expect("open");
    assert_eq!(rows_from(&mut seekable, 5.0), rows_from(&mut whole, 5.0));
    // Seeking again, backwards, after rows were read.
    assert!(seekable.seek_time(1.0).expect("seek"));
    let mut whole = CarlaRecording::new(&bytes[..], &opts, None).expect("open");
    assert_eq!(rows_from(&mut seekable, 1.0), rows_from(&mut whole, 1.0));
}
