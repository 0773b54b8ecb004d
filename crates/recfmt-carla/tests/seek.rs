//! `seek_time` on seekable sources.

mod common;

use std::io::Cursor;

use recfmt_carla::{CarlaRecording, FrameStart};
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

/// `stop_time` ends the recording at the first frame at or after the end: the rows before it
/// are those of a full read, in order, and the packets after it are not read, seekable
/// source or not. With a seek first, only the window is read.
#[test]
fn stopping_reads_up_to_the_end_only() {
    for path in common::sample_files() {
        let opts = ReadOptions::default();
        let mut full = CarlaRecording::open(&path, &opts).expect("open");
        let span = time_span(&mut full);
        let size = full.progress().1.expect("size");
        let bytes = std::fs::read(&path).expect("read");
        let index = recfmt_carla::index_frames(&bytes[..], &Default::default()).expect("index");
        // Where the FrameStart packet of the first frame at or after `end` ends.
        let stop_at = |end: f64| {
            let frame = index.frames.iter().find(|f| f.elapsed >= end);
            frame.map_or(size, |f| {
                f.offset + (recfmt_carla::PACKET_HEADER_LEN + FrameStart::SIZE) as u64
            })
        };
        // Windows as fractions of the time span: the first fifth, a tenth a third of the way
        // in, and an end at the very first frame (nothing before it).
        let at = |f: f64| span.0 + f * (span.1 - span.0);
        for (start, end) in [
            (f64::NEG_INFINITY, at(0.2)),
            (at(0.3), at(0.4)),
            (f64::NEG_INFINITY, span.0),
        ] {
            let mut whole = CarlaRecording::open(&path, &opts).expect("open");
            let want: Vec<String> = rows_until(&mut whole, start, end);
            for seekable in [true, false] {
                let mut rec: Box<dyn RecordingReader> = if seekable {
                    let mut rec = CarlaRecording::open(&path, &opts).expect("open");
                    if start.is_finite() {
                        assert!(rec.seek_time(start).expect("seek"));
                    }
                    Box::new(rec)
                } else {
                    Box::new(CarlaRecording::new(&bytes[..], &opts, None).expect("open"))
                };
                assert!(rec.stop_time(end));
                let got = rows_until(&mut rec, start, end);
                assert!(got == want, "{path:?} [{start}, {end}) seekable {seekable}");
                // Read up to the FrameStart that ends the window, and not a packet further.
                let read = rec.progress().0;
                assert!(
                    read <= stop_at(end) && read < size,
                    "{path:?} [{start}, {end}) seekable {seekable}: read to {read} of {size}, the frame at {end} ends at {}",
                    stop_at(end)
                );
                assert!(
                    !rec.integrity().lost_data(),
                    "{path:?}: {:?}",
                    rec.integrity()
                );
            }
        }
    }
}

/// The first and last row time of a full read.
fn time_span<R: RecordingReader>(rec: &mut R) -> (f64, f64) {
    let schema = rec.schema().clone();
    let mut buf = FrameBuf::default();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    while rec.read_frame(&mut buf).expect("row") {
        let t = buf.time_seconds(&schema.streams[buf.stream]).expect("time");
        (lo, hi) = (lo.min(t), hi.max(t));
    }
    assert!(lo < hi, "a span of time");
    (lo, hi)
}

/// Rows (as text) with time in `[start, end)`.
fn rows_until<R: RecordingReader + ?Sized>(rec: &mut R, start: f64, end: f64) -> Vec<String> {
    let schema = rec.schema().clone();
    let mut buf = FrameBuf::default();
    let mut out = Vec::new();
    while rec.read_frame(&mut buf).expect("row") {
        let t = buf.time_seconds(&schema.streams[buf.stream]).expect("time");
        if t >= start && t < end {
            out.push(format!("{buf:?}"));
        }
    }
    out
}
