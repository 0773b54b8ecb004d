//! Time windows read by seeking against a full scan: for random windows `[start, end)`, the
//! rows a [`SelectedReader`] hands out (which seeks to the start and stops at the end where
//! the format allows) equal the rows of a full scan kept by time, in the same order, value
//! for value, and so do the batches of its `read_batches`, stream by stream. Inputs: generated
//! USVLOG sessions whole, torn (garbage bytes inserted, read with resync) and truncated; the
//! ICAREC fixtures, a copy cut inside a frame, and an Icarus HDF5 file written from one; the
//! CARLA, FlightGear and NanoVer samples; generated CARLA logs (one per build, cut and damaged
//! copies) and FlightGear Continuous, compressed and Recovery tapes (cut copies too);
//! generated NanoVer recordings (several sessions, keys set only now and then) as a
//! `.traj`/`.state` pair whole, torn (read with and without resync), truncated and with keys
//! first set near the end, and as a `.nanover.zip` whole, with its central directory cut and
//! cut inside its index.
//!
//! The readers that stop at the end are also checked to stop: a window early in the file
//! reads only the first part of it (`progress`), so a `stop_time` that does nothing fails.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use recfmt::core::{
    ArrayValue, BatchSet, FrameBuf, IntegrityStatus, ReadOptions, RecordingReader, Value,
};
use recfmt::export::{Pipeline, SelectedReader, TimeBound, TimeRange};
use recfmt_tests::{fixture, samples};

#[path = "support/carla_inputs.rs"]
mod carla_inputs;
#[path = "support/fgtape_inputs.rs"]
mod fgtape_inputs;

/// A row as compared: stream name and the values' debug text (NaN equals NaN).
type Row = (String, String);

fn open(path: &Path, resync: bool) -> Box<dyn RecordingReader> {
    let options = ReadOptions {
        resync,
        ..ReadOptions::default()
    };
    recfmt::default_registry()
        .open_path(path, None, &options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A row of a full scan: its time in seconds (None for rows without one), the row as
/// compared with the row view, its stream and its values as compared with the column view.
type ScannedRow = (Option<f64>, Row, usize, String);

/// Every row of a full scan, and how complete the scan found the input.
fn full_scan(path: &Path, resync: bool) -> (Vec<ScannedRow>, IntegrityStatus) {
    let mut reader = open(path, resync);
    let schema = reader.schema().clone();
    let mut frame = FrameBuf::default();
    let mut rows = Vec::new();
    while reader.read_frame(&mut frame).expect("full scan") {
        let desc = &schema.streams[frame.stream];
        rows.push((
            frame.time_seconds(desc),
            (desc.name.clone(), format!("{:?}", frame.values)),
            frame.stream,
            canonical(&frame.values),
        ));
    }
    (rows, reader.integrity().status)
}

/// The selection of `[start, end)` over `path`, which seeks and stops early.
fn selected(
    path: &Path,
    resync: bool,
    start: f64,
    end: f64,
) -> SelectedReader<Box<dyn RecordingReader>> {
    let pipeline = Pipeline {
        range: TimeRange {
            start: Some(TimeBound::Absolute(start)),
            end: Some(TimeBound::Absolute(end)),
            carry_last: false,
        },
        ..Pipeline::default()
    };
    SelectedReader::new(open(path, resync), &pipeline).expect("select")
}

/// The rows of `[start, end)` read through the selection's `read_frame`.
fn window(path: &Path, resync: bool, start: f64, end: f64) -> Vec<Row> {
    let mut reader = selected(path, resync, start, end);
    let schema = reader.schema().clone();
    let mut frame = FrameBuf::default();
    let mut rows = Vec::new();
    while reader.read_frame(&mut frame).expect("window") {
        let name = schema.streams[frame.stream].name.clone();
        rows.push((name, format!("{:?}", frame.values)));
    }
    rows
}

/// The rows of `[start, end)` read through the selection's `read_batches`, as the exporters
/// take them: per stream, in order (batches do not interleave streams).
fn window_batches(path: &Path, resync: bool, start: f64, end: f64) -> Vec<Vec<String>> {
    let mut reader = selected(path, resync, start, end);
    let schema = reader.schema().clone();
    let mut streams = vec![Vec::new(); schema.streams.len()];
    let mut set = BatchSet::new(&schema, 7);
    loop {
        let more = reader.read_batches(&mut set).expect("window batches");
        for batch in set.take_ready(more) {
            for row in 0..batch.rows() {
                streams[batch.stream()].push(canonical(&batch.row_values(row)));
            }
        }
        if !more {
            break;
        }
    }
    streams
}

/// A row's values as text, float arrays widened to f64 (the column view may keep `f32`
/// arrays where the row view widened them) so the two views compare.
fn canonical(values: &[Value]) -> String {
    let widened: Vec<Value> = values
        .iter()
        .map(|v| match v {
            Value::Array(ArrayValue::F32(a)) => {
                Value::Array(ArrayValue::F64(a.iter().map(|&x| f64::from(x)).collect()))
            }
            other => other.clone(),
        })
        .collect();
    format!("{widened:?}")
}

/// A scanned input: its path, whether it is read with resync, and the full scan's rows.
struct Scanned {
    path: PathBuf,
    resync: bool,
    rows: Vec<ScannedRow>,
    /// The first and last row time.
    span: (f64, f64),
    /// What the full scan reported.
    status: IntegrityStatus,
}

impl Scanned {
    fn new(path: PathBuf, resync: bool) -> Self {
        let (rows, status) = full_scan(&path, resync);
        let times = rows.iter().filter_map(|(t, ..)| *t);
        let span = times.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
            (lo.min(t), hi.max(t))
        });
        assert!(span.0 <= span.1, "{}: no timed rows", path.display());
        Scanned {
            path,
            resync,
            rows,
            span,
            status,
        }
    }

    /// Checks the window that starts at `from` and lasts `length`, both fractions of the span
    /// (a little beyond it on either side).
    fn check(&self, from: f64, length: f64) {
        let (lo, hi) = self.span;
        let width = (hi - lo).max(1e-3);
        let start = lo + (from * 1.2 - 0.1) * width;
        let end = start + length * width;
        let kept = || {
            self.rows
                .iter()
                .filter(move |(t, ..)| t.is_some_and(|t| t >= start && t < end))
        };
        let expected: Vec<Row> = kept().map(|(_, row, ..)| row.clone()).collect();
        let got = window(&self.path, self.resync, start, end);
        if got != expected {
            let first = got.iter().zip(&expected).position(|(a, b)| a != b);
            panic!(
                "{} [{start}, {end}): {} rows, a full scan keeps {}; first difference at row {first:?}: {:?} against {:?}",
                self.path.display(),
                got.len(),
                expected.len(),
                first.and_then(|i| got.get(i)).or(got.last()),
                first.and_then(|i| expected.get(i)).or(expected.last()),
            );
        }
        let batches = window_batches(&self.path, self.resync, start, end);
        let mut expected = vec![Vec::new(); batches.len()];
        for (_, _, stream, values) in kept() {
            expected[*stream].push(values.clone());
        }
        for (stream, (got, expected)) in batches.iter().zip(&expected).enumerate() {
            assert!(
                got == expected,
                "{} [{start}, {end}) by batches, stream {stream}: {} rows, a full scan keeps {}",
                self.path.display(),
                got.len(),
                expected.len(),
            );
        }
    }
}

/// The generated inputs, written once per run: a USVLOG session, a torn copy (garbage bytes
/// inserted at several places, read with resync) and truncated copies.
fn inputs() -> &'static [Scanned] {
    static INPUTS: std::sync::OnceLock<(tempfile::TempDir, Vec<Scanned>)> =
        std::sync::OnceLock::new();
    let (_, scanned) = INPUTS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let whole = dir.path().join("whole");
        recfmt_tlv::generate::write_all_types_session(&whole, 6000).expect("session");
        let bytes = std::fs::read(whole.join("timeseries.bin")).expect("read");
        let mut inputs = vec![(whole.clone(), false)];

        let torn = dir.path().join("torn");
        copy_session(&whole, &torn);
        let mut garbage = bytes.clone();
        for (k, at) in [0.13, 0.4, 0.41, 0.77].iter().enumerate() {
            let offset = (bytes.len() as f64 * at) as usize;
            let junk: Vec<u8> = (0..97 * (k + 1))
                .map(|i| (i as u8).wrapping_mul(151).wrapping_add(k as u8))
                .collect();
            garbage.splice(offset..offset, junk);
        }
        std::fs::write(torn.join("timeseries.bin"), garbage).expect("write");
        inputs.push((torn, true));

        for (name, keep) in [("cut_mid", 0.63), ("cut_tail", 0.999)] {
            let cut = dir.path().join(name);
            copy_session(&whole, &cut);
            let n = (bytes.len() as f64 * keep) as usize;
            std::fs::write(cut.join("timeseries.bin"), &bytes[..n]).expect("write");
            inputs.push((cut, false));
        }
        for f in ["icarec/all_types.icarec", "icarec/torn.icarec"] {
            inputs.push((fixture(f), false));
        }
        // The ICAREC fixture cut inside frame 120 of 200 (metadata.json still counts 200).
        let icarec_cut = dir.path().join("cut.icarec");
        std::fs::create_dir_all(&icarec_cut).expect("dir");
        let icarec = fixture("icarec/all_types.icarec");
        for entry in std::fs::read_dir(&icarec).expect("fixture") {
            let entry = entry.expect("entry");
            std::fs::copy(entry.path(), icarec_cut.join(entry.file_name())).expect("copy");
        }
        let frames = std::fs::read(icarec.join("dynamic_signals.bin")).expect("frames");
        std::fs::write(
            icarec_cut.join("dynamic_signals.bin"),
            &frames[..120 * 216 + 100],
        )
        .expect("write");
        inputs.push((icarec_cut, false));
        let h5 = dir.path().join("icarus.h5");
        let mut source = recfmt::icarec::IcarecRecording::open(
            &fixture("icarec/all_types.icarec"),
            &Default::default(),
        )
        .expect("icarec fixture");
        recfmt::icarec::write_icarus_h5(&mut source, &h5, &Default::default()).expect("icarus h5");
        inputs.push((h5, false));
        inputs.extend(nanover_inputs(dir.path()));
        for p in samples("carla", "log")
            .into_iter()
            .chain(carla_inputs::inputs())
            .chain(samples("fgtape", "fgtape"))
            .chain(fgtape_inputs::inputs())
            .chain(samples("nanover/server-py", "traj").into_iter().take(3))
            .chain(samples("nanover/converted", "zip"))
        {
            inputs.push((p, false));
        }
        let scanned = inputs
            .into_iter()
            .map(|(p, resync)| Scanned::new(p, resync))
            .collect();
        (dir, scanned)
    });
    scanned
}

/// Generated NanoVer recordings, about 2 MB of `.traj` each: whole (`.traj` + `.state`), torn
/// (garbage inserted into both, read with resync and without), the `.traj` cut mid-record (its
/// `.state` whole), one with keys first set 90% in (also as a zip), and as a `.nanover.zip`
/// whole, cut inside its central directory (read from its local headers) and cut inside
/// `index.msgpack`. The whole pair comes first.
fn nanover_inputs(dir: &Path) -> Vec<(PathBuf, bool)> {
    use recfmt_nanover::generate::{long_recording, write_state, write_traj};
    let (frames, updates) = long_recording(100, 4, 200);
    let traj = write_traj(Vec::new(), &frames).expect("traj");
    let state = write_state(Vec::new(), &updates).expect("state");
    let pair = |name: &str, traj: &[u8], state: &[u8]| {
        let path = dir.join(format!("{name}.traj"));
        std::fs::write(&path, traj).expect("write traj");
        std::fs::write(dir.join(format!("{name}.state")), state).expect("write state");
        path
    };
    let whole = pair("nanover", &traj, &state);
    let torn = |bytes: &[u8], at: &[f64]| {
        let mut out = bytes.to_vec();
        for (k, f) in at.iter().enumerate().rev() {
            let offset = (bytes.len() as f64 * f) as usize;
            let junk: Vec<u8> = (0..53 * (k + 1))
                .map(|i| (i as u8).wrapping_mul(97).wrapping_add(k as u8 + 1))
                .collect();
            out.splice(offset..offset, junk);
        }
        out
    };
    let torn_pair = pair(
        "nanover_torn",
        &torn(&traj, &[0.21, 0.5, 0.83]),
        &torn(&state, &[0.3, 0.6]),
    );
    let cut = pair("nanover_cut", &traj[..traj.len() * 63 / 100], &state);
    // Keys first set late in the file (a value and an array, 90% in), so the schema the open
    // pass declares depends on a record near the end.
    let mut late_frames = frames.clone();
    let at = late_frames.len() * 9 / 10;
    let late = late_frames[at].1.frame.get_or_insert_with(Default::default);
    late.values
        .insert("custom.late".into(), recfmt_nanover::number(7.5));
    late.arrays.insert(
        "custom.late_array".into(),
        recfmt_nanover::ValueArray::floats(vec![1.0, 2.0]),
    );
    let late_traj = write_traj(Vec::new(), &late_frames).expect("traj");
    let late = pair("nanover_late", &late_traj, &state);
    let late_zip = dir.join("nanover_late.nanover.zip");
    let timeline =
        recfmt_nanover::Timeline::from_bytes(Some(&late_traj), Some(&state)).expect("timeline");
    recfmt_nanover::write_zip_events(timeline, &late_zip).expect("zip");
    let zip = dir.join("nanover.nanover.zip");
    let timeline =
        recfmt_nanover::Timeline::from_bytes(Some(&traj), Some(&state)).expect("timeline");
    recfmt_nanover::write_zip_events(timeline, &zip).expect("zip");
    let zip_bytes = std::fs::read(&zip).expect("read zip");
    let zip_cut = dir.join("nanover_cut.nanover.zip");
    std::fs::write(&zip_cut, &zip_bytes[..zip_bytes.len() - 10]).expect("write zip");
    // Cut inside `index.msgpack` (between its local header and the central directory): the
    // messages after the last one the index names are found by decoding, without times.
    let name = b"index.msgpack";
    let hits: Vec<usize> = (zip_bytes.windows(name.len()).enumerate())
        .filter(|(_, w)| w == name)
        .map(|(i, _)| i)
        .collect();
    let (local_header, directory) = (hits[0], hits[hits.len() - 1]);
    let index_cut = dir.join("nanover_index_cut.nanover.zip");
    let cut_at = (local_header + directory) / 2;
    std::fs::write(&index_cut, &zip_bytes[..cut_at]).expect("write zip");
    vec![
        (whole, false),
        (torn_pair.clone(), true),
        // The same garbage read without resync: the records end at the first of it.
        (torn_pair, false),
        (cut, false),
        (late, false),
        (zip, false),
        (zip_cut, false),
        (index_cut, false),
        (late_zip, false),
    ]
}

fn copy_session(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("dir");
    for name in ["timeseries.bin", "meta.json", "events.jsonl"] {
        std::fs::copy(from.join(name), to.join(name)).expect("copy");
    }
}

/// The USVLOG fixture is big enough for the search to probe: its seek must not start at the
/// beginning (else the property below would pass by scanning).
#[test]
fn usvlog_window_reads_a_fraction_of_the_file() {
    let scanned = &inputs()[0];
    let (lo, hi) = scanned.span;
    let mut reader = open(&scanned.path, false);
    let total = reader.progress().1.expect("file size");
    assert!(reader.seek_time(lo + (hi - lo) / 2.0).expect("seek"));
    assert!(reader.stop_time(lo + (hi - lo) / 2.0 + 1.0));
    let mut frame = FrameBuf::default();
    let mut rows = 0;
    while reader.read_frame(&mut frame).expect("read") {
        rows += 1;
    }
    assert!(rows > 0);
    let (read_to, _) = reader.progress();
    assert!(
        read_to < total / 2 + total / 10,
        "read to byte {read_to} of {total}"
    );
}

/// The inputs cut inside a record (or torn) are reported as such by a full scan, so the
/// windows over them test reads of truncated inputs.
#[test]
fn cut_inputs_are_reported_by_a_full_scan() {
    let mut cut = 0;
    for scanned in inputs() {
        let name = scanned
            .path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        if name.starts_with("cut") || name.contains("-cut") || name.starts_with("torn") {
            assert_ne!(
                scanned.status,
                IntegrityStatus::Complete,
                "{}: a full scan found nothing lost",
                scanned.path.display()
            );
            cut += 1;
        }
    }
    // USVLOG (2), ICAREC (2), CARLA (2 builds), FlightGear Continuous (2); more with samples.
    assert!(cut >= 8, "{cut} cut inputs");
}

/// The formats that end early do: a window over the first fifth of the timed rows, read with
/// `stop_time` alone (no seek), reads less than half of what a full read reads (`progress`
/// from just after opening). A `stop_time` that did nothing would read everything. Only what
/// was read is reported: an input a full scan finds whole is whole after the early end too.
#[test]
fn readers_that_stop_read_the_first_part_only() {
    let must_stop = ["icarec", "carla", "fgtape", "usvlog", "icarus-h5"];
    let mut stopped = std::collections::BTreeSet::new();
    for scanned in inputs() {
        // The time a fifth of the timed rows come before: a fraction of the span would not
        // do, since a torn input read with resync may hold one bogus late time.
        let mut times: Vec<f64> = scanned.rows.iter().filter_map(|(t, ..)| *t).collect();
        times.sort_by(f64::total_cmp);
        let end = times[times.len() / 5];
        let full = {
            let mut reader = open(&scanned.path, scanned.resync);
            let opened = reader.progress().0;
            let mut frame = FrameBuf::default();
            while reader.read_frame(&mut frame).expect("full read") {}
            reader.progress().0.saturating_sub(opened)
        };
        let mut reader = open(&scanned.path, scanned.resync);
        let format = reader.format().id;
        let opened = reader.progress().0;
        if !reader.stop_time(end) {
            assert!(
                !must_stop.contains(&format),
                "{}: a {format} reader that does not stop",
                scanned.path.display()
            );
            continue;
        }
        let schema = reader.schema().clone();
        let mut frame = FrameBuf::default();
        let mut rows = 0;
        while reader.read_frame(&mut frame).expect("stopped read") {
            if frame
                .time_seconds(&schema.streams[frame.stream])
                .is_some_and(|t| t < end)
            {
                rows += 1;
            }
        }
        let expected = scanned
            .rows
            .iter()
            .filter(|(t, ..)| t.is_some_and(|t| t < end))
            .count();
        assert_eq!(rows, expected, "{} before {end}", scanned.path.display());
        let read = reader.progress().0.saturating_sub(opened);
        // NanoVer reads its `.state` to the end whatever the window (its order is not known
        // before it is read), so only its `.traj` stops: `nanover_window_reads_a_fraction_of_
        // the_file` checks that one.
        assert!(
            format == "nanover" || read * 2 < full,
            "{} ({format}): read {read} of {full} for the first fifth",
            scanned.path.display()
        );
        if scanned.status == IntegrityStatus::Complete {
            let integrity = reader.integrity();
            assert_eq!(
                integrity.status,
                IntegrityStatus::Complete,
                "{}: an early end reported as a loss: {:?}",
                scanned.path.display(),
                integrity.warnings
            );
        }
        stopped.insert(format);
    }
    for format in ["icarec", "carla", "fgtape"] {
        assert!(stopped.contains(format), "no {format} input stopped early");
    }
}

/// Reads `[start, end)` of `path` straight from its reader (seek, stop, then every row) and
/// returns how far the reader had read after the first row and at the end, and the total.
fn read_positions(path: &Path, start: f64, end: f64) -> (u64, u64, u64) {
    let mut reader = open(path, false);
    let total = reader.progress().1.expect("file size");
    assert!(
        reader.seek_time(start).expect("seek"),
        "{}: no seek",
        path.display()
    );
    assert!(reader.stop_time(end), "{}: no early end", path.display());
    let mut frame = FrameBuf::default();
    assert!(reader.read_frame(&mut frame).expect("read"));
    let after_first = reader.progress().0;
    while reader.read_frame(&mut frame).expect("read") {}
    (after_first, reader.progress().0, total)
}

/// The generated NanoVer `.traj`/`.state` and `.nanover.zip` are big enough to have many
/// checkpoints: a window near the end starts reading near it (not at the beginning) and ends
/// well before the end of the files, so this fails if seeking or stopping does nothing.
#[test]
fn nanover_window_reads_a_fraction_of_the_file() {
    let nanover: Vec<&Scanned> = inputs()
        .iter()
        .filter(|s| {
            let name = s.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name == "nanover.traj" || name == "nanover.nanover.zip"
        })
        .collect();
    assert_eq!(nanover.len(), 2);
    for scanned in nanover {
        let (lo, hi) = scanned.span;
        let start = lo + (hi - lo) * 0.7;
        let end = lo + (hi - lo) * 0.8;
        let (after_first, at_end, total) = read_positions(&scanned.path, start, end);
        assert!(
            after_first > total / 2,
            "{}: the first row of a window at 70% was read at byte {after_first} of {total}",
            scanned.path.display()
        );
        assert!(
            at_end < total * 9 / 10,
            "{}: a window ending at 80% read to byte {at_end} of {total}",
            scanned.path.display()
        );
        // And what it read is what a full scan keeps.
        scanned.check(0.75 / 1.2 + 0.1 / 1.2, 0.1);
    }
}

/// Opens a file and seeks to a time: the reader, and the bytes its seek read.
type OpenAndSeek = dyn Fn(&Path, f64) -> (Box<dyn RecordingReader>, u64);

/// Opens a long generated input, seeks to nine tenths of its time span (`open_and_seek`
/// gives the reader and the bytes its seek read) and reads a second from there: the seek
/// read under a quarter of the file (a seek that walked the file from the start would read
/// all of it before the window), rows follow, and the rows and batches of that window
/// through [`SelectedReader`] equal a full scan's.
fn check_long_seek(path: &Path, open_and_seek: &OpenAndSeek) {
    let scanned = Scanned::new(path.to_path_buf(), false);
    let (lo, hi) = scanned.span;
    let start = lo + (hi - lo) * 0.9;
    let (mut reader, read) = open_and_seek(path, start);
    let total = std::fs::metadata(path).expect("size").len();
    assert!(
        read > 0 && read * 4 < total,
        "{}: the seek read {read} of {total} bytes",
        path.display()
    );
    let schema = reader.schema().clone();
    let mut frame = FrameBuf::default();
    let mut rows = 0;
    while reader.read_frame(&mut frame).expect("read") {
        let t = frame.time_seconds(&schema.streams[frame.stream]);
        if t.is_some_and(|t| t >= start + 1.0) {
            break;
        }
        rows += 1;
    }
    assert!(rows > 0, "{}: no rows after the seek", path.display());
    // The same window, through SelectedReader, against the full scan.
    scanned.check(1.0 / 1.2, 1.0 / (hi - lo));
}

/// CARLA: the binary search reads a few chunks of a long log (whole, and with junk that
/// holds FrameStart headers in the middle), not the whole file.
#[test]
fn carla_seek_reads_a_small_part_of_a_long_log() {
    let dir = tempfile::tempdir().expect("dir");
    for (name, bytes) in carla_inputs::long_inputs() {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        check_long_seek(&path, &|p, start| {
            let mut rec =
                recfmt::carla::CarlaRecording::open(p, &ReadOptions::default()).expect("open");
            assert!(rec.seek_time(start).expect("seek"));
            let read = rec.seek_bytes_read();
            (Box::new(rec), read)
        });
    }
}

/// FlightGear Continuous (uncompressed and compressed frames, with junk in the middle):
/// the binary search reads a small part of the tape, no index of all of it.
#[test]
fn fgtape_seek_reads_a_small_part_of_a_long_tape() {
    let dir = tempfile::tempdir().expect("dir");
    for (name, bytes) in fgtape_inputs::long_tapes() {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        check_long_seek(&path, &|p, start| {
            let mut tape = recfmt::fgtape::FgTape::open(p, &ReadOptions::default()).expect("open");
            assert!(tape.seek_time(start).expect("seek"));
            let read = tape.seek_bytes_read();
            (Box::new(tape), read)
        });
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Every input, one random window each case.
    #[test]
    fn seeking_windows_equal_a_filtered_full_scan(from in 0.0f64..1.0, length in 0.0f64..0.5) {
        for scanned in inputs() {
            scanned.check(from, length);
        }
    }
}
