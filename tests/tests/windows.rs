//! Time windows read by seeking against a full scan: for random windows `[start, end)`, the
//! rows a [`SelectedReader`] hands out (which seeks to the start and stops at the end where
//! the format allows) equal the rows of a full scan kept by time, in the same order, value
//! for value. Inputs: generated USVLOG sessions whole, torn (garbage bytes inserted, read with
//! resync) and truncated; the ICAREC fixtures and an Icarus HDF5 file written from one; the CARLA, FlightGear and NanoVer samples.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use recfmt::core::{FrameBuf, ReadOptions, RecordingReader};
use recfmt::export::{Pipeline, SelectedReader, TimeBound, TimeRange};
use recfmt_tests::{fixture, samples};

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

/// Every row of a full scan with its time in seconds (None for rows without one).
fn full_scan(path: &Path, resync: bool) -> Vec<(Option<f64>, Row)> {
    let mut reader = open(path, resync);
    let schema = reader.schema().clone();
    let mut frame = FrameBuf::default();
    let mut rows = Vec::new();
    while reader.read_frame(&mut frame).expect("full scan") {
        let desc = &schema.streams[frame.stream];
        rows.push((
            frame.time_seconds(desc),
            (desc.name.clone(), format!("{:?}", frame.values)),
        ));
    }
    rows
}

/// The rows of `[start, end)` read through the selection, which seeks and stops early.
fn window(path: &Path, resync: bool, start: f64, end: f64) -> Vec<Row> {
    let pipeline = Pipeline {
        range: TimeRange {
            start: Some(TimeBound::Absolute(start)),
            end: Some(TimeBound::Absolute(end)),
            carry_last: false,
        },
        ..Pipeline::default()
    };
    let mut reader = SelectedReader::new(open(path, resync), &pipeline).expect("select");
    let schema = reader.schema().clone();
    let mut frame = FrameBuf::default();
    let mut rows = Vec::new();
    while reader.read_frame(&mut frame).expect("window") {
        let name = schema.streams[frame.stream].name.clone();
        rows.push((name, format!("{:?}", frame.values)));
    }
    rows
}

/// A scanned input: its path, whether it is read with resync, and the full scan's rows.
struct Scanned {
    path: PathBuf,
    resync: bool,
    rows: Vec<(Option<f64>, Row)>,
    /// The first and last row time.
    span: (f64, f64),
}

impl Scanned {
    fn new(path: PathBuf, resync: bool) -> Self {
        let rows = full_scan(&path, resync);
        let times = rows.iter().filter_map(|(t, _)| *t);
        let span = times.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| {
            (lo.min(t), hi.max(t))
        });
        assert!(span.0 <= span.1, "{}: no timed rows", path.display());
        Scanned {
            path,
            resync,
            rows,
            span,
        }
    }

    /// Checks the window that starts at `from` and lasts `length`, both fractions of the span
    /// (a little beyond it on either side).
    fn check(&self, from: f64, length: f64) {
        let (lo, hi) = self.span;
        let width = (hi - lo).max(1e-3);
        let start = lo + (from * 1.2 - 0.1) * width;
        let end = start + length * width;
        let expected: Vec<Row> = self
            .rows
            .iter()
            .filter(|(t, _)| t.is_some_and(|t| t >= start && t < end))
            .map(|(_, row)| row.clone())
            .collect();
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
        let h5 = dir.path().join("icarus.h5");
        let mut source = recfmt::icarec::IcarecRecording::open(
            &fixture("icarec/all_types.icarec"),
            &Default::default(),
        )
        .expect("icarec fixture");
        recfmt::icarec::write_icarus_h5(&mut source, &h5, &Default::default()).expect("icarus h5");
        inputs.push((h5, false));
        for p in samples("carla", "log")
            .into_iter()
            .chain(samples("fgtape", "fgtape"))
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
