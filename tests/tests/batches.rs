//! The batch read path against the row path: every fixture and sample of every format read
//! with `read_batches` gives, stream by stream, the rows `read_frame` gives, value for value,
//! and the same integrity report; so do selections, time ranges and upcasting on top, and a
//! property test of random capacities and selections.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use recfmt::core::{ArrayValue, BatchSet, Integrity, ReadOptions, RecordingReader, Result, Value};
use recfmt::export::{Pattern, Pipeline, SelectedReader, TimeBound};
use recfmt_tests::{fixture, samples};

#[path = "support/carla_inputs.rs"]
mod carla_inputs;
#[path = "support/fgtape_inputs.rs"]
mod fgtape_inputs;

/// Every input: generated fixtures of the formats that have them, and the upstream samples.
fn inputs() -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = [
        "usvlog/all_types",
        "usvlog/truncated",
        "usvlog/unknown_types",
        "icarec/all_types.icarec",
        "icarec/empty_static.icarec",
        "icarec/torn.icarec",
    ]
    .iter()
    .map(|f| fixture(f))
    .collect();
    all.extend(samples("carla", "log"));
    all.extend(carla_inputs::inputs());
    all.extend(samples("fgtape", "fgtape"));
    all.extend(fgtape_inputs::inputs());
    all.extend(samples("nanover/server-py", "traj"));
    all.extend(samples("nanover/converted", "zip"));
    all
}

fn open(path: &Path) -> Box<dyn RecordingReader> {
    let mut options = ReadOptions::default();
    let layouts = path.join("layouts.toml");
    if layouts.is_file() {
        options.layouts.push(layouts);
    }
    recfmt::default_registry()
        .open_path(path, None, &options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Rows per stream, in order, and the final integrity, through `read_frame`.
fn by_rows(reader: &mut dyn RecordingReader) -> Result<(Vec<Vec<Vec<Value>>>, Integrity)> {
    let mut streams = vec![Vec::new(); reader.schema().streams.len()];
    let mut frame = recfmt::core::FrameBuf::default();
    while reader.read_frame(&mut frame)? {
        streams[frame.stream].push(frame.values.clone());
    }
    Ok((streams, reader.integrity().clone()))
}

/// The same through `read_batches`, taking batches as an exporter does.
fn by_batches(
    reader: &mut dyn RecordingReader,
    capacity: usize,
    wanted: &dyn Fn(usize) -> bool,
) -> Result<(Vec<Vec<Vec<Value>>>, Integrity)> {
    let schema = reader.schema().clone();
    let mut streams = vec![Vec::new(); schema.streams.len()];
    let mut set = BatchSet::with_streams(&schema, capacity, wanted);
    loop {
        let more = reader.read_batches(&mut set)?;
        for batch in set.take_ready(more) {
            batch.check_consistent().expect("consistent batch");
            for row in 0..batch.rows() {
                streams[batch.stream()].push(batch.row_values(row));
            }
        }
        if !more {
            break;
        }
    }
    Ok((streams, reader.integrity().clone()))
}

/// Compares the two paths; a reader error must be the same error on both.
fn assert_same(
    what: &str,
    rows: Result<(Vec<Vec<Vec<Value>>>, Integrity)>,
    batches: Result<(Vec<Vec<Vec<Value>>>, Integrity)>,
    wanted: &dyn Fn(usize) -> bool,
) {
    match (rows, batches) {
        (Ok((rows, rows_integrity)), Ok((batches, batch_integrity))) => {
            for (stream, (r, b)) in rows.iter().zip(&batches).enumerate() {
                if wanted(stream) {
                    assert_eq!(r.len(), b.len(), "{what}: stream {stream} row count");
                    for (i, (x, y)) in r.iter().zip(b).enumerate() {
                        let equal = x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b));
                        assert!(equal, "{what}: stream {stream} row {i}:\n{x:?}\n{y:?}");
                    }
                } else {
                    assert!(b.is_empty(), "{what}: unwanted stream {stream} got rows");
                }
            }
            assert_eq!(rows_integrity, batch_integrity, "{what}: integrity");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}: errors"),
        (a, b) => panic!(
            "{what}: one path failed: rows {:?}, batches {:?}",
            a.err(),
            b.err()
        ),
    }
}

#[test]
fn every_fixture_and_sample_reads_the_same_in_batches() {
    let inputs = inputs();
    assert!(inputs.len() >= 6);
    for path in inputs {
        let all = |_: usize| true;
        let rows = by_rows(open(&path).as_mut());
        for capacity in [1, 7, 65_536] {
            let what = format!("{} (capacity {capacity})", path.display());
            let batches = by_batches(open(&path).as_mut(), capacity, &all);
            assert_same(&what, rows_clone(&rows), batches, &all);
        }
        // Only every other stream wanted: the rest are skipped.
        let odd = |i: usize| i % 2 == 1;
        let batches = by_batches(open(&path).as_mut(), 100, &odd);
        assert_same(
            &format!("{} (odd streams)", path.display()),
            rows_clone(&rows),
            batches,
            &odd,
        );
    }
}

/// Columns the caller skips (`BatchSet::with_columns`, as `validate` reads only time
/// columns) stay empty in every reader, so a scan spends nothing on them, and the columns
/// kept read as the row path gives them.
#[test]
fn skipped_columns_stay_empty_and_kept_columns_read_the_same() {
    // Two patterns, so that every column other than the time is skipped in one of them.
    for (path, pick) in inputs().into_iter().flat_map(|p| [(p.clone(), 1), (p, 2)]) {
        let rows = by_rows(open(&path).as_mut());
        let mut reader = open(&path);
        let schema = reader.schema().clone();
        let keep = |stream: usize, signal: usize| {
            signal == schema.streams[stream].time || signal % 3 == pick
        };
        let mut set = BatchSet::with_columns(&schema, 100, |_| true, keep);
        let mut got = vec![Vec::new(); schema.streams.len()];
        let batches = loop {
            let more = match reader.read_batches(&mut set) {
                Ok(more) => more,
                Err(e) => break Err(e),
            };
            for batch in set.take_ready(more) {
                for (signal, column) in batch.columns().iter().enumerate() {
                    if !keep(batch.stream(), signal) {
                        assert!(column.is_skipped());
                        assert_eq!(
                            column.rows(),
                            0,
                            "{}: stream {} signal {signal} was skipped but holds values",
                            path.display(),
                            batch.stream()
                        );
                    }
                }
                for row in 0..batch.rows() {
                    got[batch.stream()].push(batch.row_values(row));
                }
            }
            if !more {
                break Ok((got, reader.integrity().clone()));
            }
        };
        // The row path with the skipped columns blanked, as a skipped column reads.
        let rows = rows.map(|(mut streams, integrity)| {
            for (stream, rows) in streams.iter_mut().enumerate() {
                for row in rows {
                    for (signal, value) in row.iter_mut().enumerate() {
                        if !keep(stream, signal) {
                            *value = Value::Null;
                        }
                    }
                }
            }
            (streams, integrity)
        });
        let all = |_: usize| true;
        assert_same(
            &format!("{} (some columns)", path.display()),
            rows,
            batches,
            &all,
        );
    }
}

/// Equal values, where NaN equals NaN and an `f32` array equals the `f64` array of the same
/// numbers (the row path keeps upcast arrays as `f32` values under an `f64` dtype; both write
/// the same `f64` column).
fn same(a: &Value, b: &Value) -> bool {
    fn float(x: f64, y: f64) -> bool {
        x == y || (x.is_nan() && y.is_nan())
    }
    fn widened(a: &ArrayValue) -> Option<Vec<f64>> {
        match a {
            ArrayValue::F32(v) => Some(v.iter().map(|&x| f64::from(x)).collect()),
            ArrayValue::F64(v) => Some(v.clone()),
            _ => None,
        }
    }
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => float(*x, *y),
        (Value::Array(x), Value::Array(y)) => match (widened(x), widened(y)) {
            (Some(x), Some(y)) => {
                x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| float(*p, *q))
            }
            _ => x == y,
        },
        _ => a == b,
    }
}

fn rows_clone(
    rows: &Result<(Vec<Vec<Vec<Value>>>, Integrity)>,
) -> Result<(Vec<Vec<Vec<Value>>>, Integrity)> {
    match rows {
        Ok(r) => Ok(r.clone()),
        Err(e) => Err(recfmt::core::Error::invalid(e.to_string())),
    }
}

/// A pipeline over `path`: the time span of its first stream with rows, cut at `from` and
/// `to` (fractions), some signals, optionally upcast.
fn pipeline(path: &Path, from: f64, to: f64, signal_glob: &str, upcast: bool) -> Pipeline {
    let (start, end) = {
        let mut reader = open(path);
        let schema = reader.schema().clone();
        let mut frame = recfmt::core::FrameBuf::default();
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        while let Ok(true) = reader.read_frame(&mut frame) {
            if let Some(t) = frame.time_seconds(&schema.streams[frame.stream]) {
                lo = lo.min(t);
                hi = hi.max(t);
            }
        }
        (lo, hi)
    };
    let mut p = Pipeline::default();
    if start.is_finite() && end.is_finite() {
        p.range.start = Some(TimeBound::Absolute(start + (end - start) * from));
        p.range.end = Some(TimeBound::Absolute(start + (end - start) * to));
    }
    p.selection.signals = vec![Pattern::parse(signal_glob).expect("pattern")];
    p.upcast_f64 = upcast;
    p
}

fn selected(path: &Path, p: &Pipeline) -> Result<Box<dyn RecordingReader>> {
    Ok(Box::new(SelectedReader::new(open(path), p)?))
}

#[test]
fn selections_and_time_ranges_read_the_same_in_batches() {
    for path in inputs() {
        for (from, to, glob, upcast) in [
            (0.25, 0.75, "*", true),
            (0.0, 0.5, "t*", false),
            (0.5, 2.0, "*[xyz]*", true),
        ] {
            let p = pipeline(&path, from, to, glob, upcast);
            let what = format!("{} {from}..{to} {glob}", path.display());
            let (Ok(mut a), Ok(mut b)) = (selected(&path, &p), selected(&path, &p)) else {
                continue; // the selection keeps no stream of this recording
            };
            let all = |_: usize| true;
            assert_same(
                &what,
                by_rows(a.as_mut()),
                by_batches(b.as_mut(), 50, &all),
                &all,
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_capacities_and_selections_match_the_row_path(
        input in 0usize..64,
        capacity in 1usize..3000,
        from in 0.0f64..1.0,
        span in 0.0f64..1.2,
        stream_mask in any::<u32>(),
        upcast in any::<bool>(),
        glob in prop::sample::select(vec!["*", "t*", "*_*", "*a*"]),
    ) {
        let inputs = inputs();
        let path = &inputs[input % inputs.len()];
        let p = pipeline(path, from, from + span, glob, upcast);
        let (Ok(mut a), Ok(mut b)) = (selected(path, &p), selected(path, &p)) else {
            return Ok(());
        };
        let wanted = move |i: usize| stream_mask & (1 << (i % 32)) != 0;
        assert_same(
            &format!("{} cap {capacity}", path.display()),
            by_rows(a.as_mut()),
            by_batches(b.as_mut(), capacity, &wanted),
            &wanted,
        );
    }
}

/// A copy of `path` (a file or a folder) in `dir`, with its largest file cut to `keep` of its
/// bytes and, when `flip` is given, one byte at that fraction of what is left xor-ed with 0x5a.
fn damaged_copy(path: &Path, dir: &Path, keep: f64, flip: Option<f64>) -> PathBuf {
    let copy = dir.join(path.file_name().expect("input has a name"));
    let largest = if path.is_dir() {
        std::fs::create_dir_all(&copy).expect("copy folder");
        let mut largest: Option<(u64, PathBuf)> = None;
        for entry in std::fs::read_dir(path).expect("read input folder") {
            let entry = entry.expect("folder entry");
            if !entry.file_type().expect("file type").is_file() {
                continue;
            }
            let target = copy.join(entry.file_name());
            std::fs::copy(entry.path(), &target).expect("copy file");
            let len = entry.metadata().expect("metadata").len();
            if largest.as_ref().is_none_or(|(l, _)| len > *l) {
                largest = Some((len, target));
            }
        }
        largest.expect("input folder holds a file").1
    } else {
        std::fs::copy(path, &copy).expect("copy file");
        copy.clone()
    };
    let mut bytes = std::fs::read(&largest).expect("read copy");
    bytes.truncate((bytes.len() as f64 * keep) as usize);
    if let Some(at) = flip
        && !bytes.is_empty()
    {
        let i = ((bytes.len() - 1) as f64 * at) as usize;
        bytes[i] ^= 0x5a;
    }
    std::fs::write(&largest, bytes).expect("write damaged copy");
    copy
}

fn open_with(path: &Path, strict: bool) -> Result<Box<dyn RecordingReader>> {
    let mut options = ReadOptions {
        strict,
        ..ReadOptions::default()
    };
    let layouts = path.join("layouts.toml");
    if layouts.is_file() {
        options.layouts.push(layouts);
    }
    recfmt::default_registry().open_path(path, None, &options)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Torn and damaged copies of every input, strict and lenient: both paths keep the same
    /// rows, report the same integrity, or fail with the same error (opening may fail too,
    /// for both alike, since both open the same bytes).
    #[test]
    fn torn_and_damaged_inputs_read_the_same_on_both_paths(
        input in 0usize..64,
        keep in 0.3f64..1.0,
        flip in prop::option::of(0.0f64..1.0),
        strict in any::<bool>(),
        capacity in 1usize..500,
    ) {
        let inputs = inputs();
        let path = &inputs[input % inputs.len()];
        let dir = tempfile::tempdir().expect("temp dir");
        let copy = damaged_copy(path, dir.path(), keep, flip);
        let what = format!("{} cut to {keep:.3}, flip {flip:?}, strict {strict}", path.display());
        let (Ok(mut a), Ok(mut b)) = (open_with(&copy, strict), open_with(&copy, strict)) else {
            return Ok(());
        };
        let all = |_: usize| true;
        assert_same(&what, by_rows(a.as_mut()), by_batches(b.as_mut(), capacity, &all), &all);
    }
}

/// An ICAREC recording of many blocks of frames with every kind of damage its reader reports:
/// irregular `int32` slots (static and dynamic), a time that goes back, a torn tail. Read
/// leniently (warnings) and strictly (the first damage is the error), batches as rows.
/// (Was the ICAREC crate's own equivalence suite.)
#[test]
fn a_damaged_icarec_of_many_blocks_reads_the_same_in_batches() {
    let source = fixture("icarec/all_types.icarec");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.icarec");
    std::fs::create_dir(&path).unwrap();
    for file in ["schema.json", "static_signals.bin"] {
        std::fs::copy(source.join(file), path.join(file)).unwrap();
    }
    let layout = recfmt::icarec::IcarecDir::open(&source, &Default::default()).unwrap();
    let stride = layout.schema().layout().stride();
    let offset = |name: &str| layout.schema().placed(name).unwrap().offset;
    let frames = std::fs::read(source.join("dynamic_signals.bin")).unwrap();
    // 3000 frames (three 256 KiB read blocks and more), times rewritten to rise.
    let mut bytes: Vec<u8> = frames
        .chunks_exact(stride)
        .cycle()
        .take(3000)
        .flatten()
        .copied()
        .collect();
    for (i, frame) in bytes.chunks_exact_mut(stride).enumerate() {
        frame[..8].copy_from_slice(&(i as f64 * 0.01).to_le_bytes());
    }
    bytes[1500 * stride + 8 + offset("Vehicle.GNC.mode") + 5] = 0x5a;
    bytes[2100 * stride + 7] = 0x80; // a negative time
    let mut statics = std::fs::read(path.join("static_signals.bin")).unwrap();
    statics[offset("Vehicle.config_rev") + 5] = 0x11;
    std::fs::write(path.join("static_signals.bin"), statics).unwrap();

    // Strictly, a torn recording does not open: that copy has no torn tail.
    for strict in [false, true] {
        let tail: &[u8] = if strict { &[] } else { &[7; 100] };
        std::fs::write(
            path.join("dynamic_signals.bin"),
            [&bytes[..], tail].concat(),
        )
        .unwrap();
        let options = ReadOptions {
            strict,
            ..ReadOptions::default()
        };
        let open = || {
            recfmt::default_registry()
                .open_path(&path, None, &options)
                .unwrap()
        };
        let rows = by_rows(open().as_mut());
        if !strict {
            let integrity = &rows.as_ref().unwrap().1;
            assert_eq!(integrity.bytes_lost, 100);
            assert_eq!(integrity.warnings.len(), 4, "{:?}", integrity.warnings);
        }
        let all = |_: usize| true;
        for capacity in [1, 7, 4096] {
            let what = format!("damaged icarec (strict {strict}, capacity {capacity})");
            let batches = by_batches(open().as_mut(), capacity, &all);
            assert_same(&what, rows_clone(&rows), batches, &all);
        }
    }
}

/// NanoVer's small generated recording (a `.traj` and a `.state`: numbers, booleans, text,
/// JSON values, string arrays, resets), whole, each file alone, and its `.traj` cut every
/// 4 bytes: batches (every capacity, one stream, every other column) as rows. (Was the NanoVer
/// crate's own equivalence suite.)
#[test]
fn nanover_small_recording_whole_and_cut_reads_the_same_in_batches() {
    use recfmt_nanover::{NanoverRecording, generate};
    let (traj, state) = generate::small_recording_bytes().unwrap();
    fn open<'a>(traj: Option<&'a [u8]>, state: Option<&'a [u8]>) -> Box<dyn RecordingReader + 'a> {
        let rec = NanoverRecording::from_bytes(traj, state, &ReadOptions::default()).unwrap();
        Box::new(rec)
    }
    let mut inputs = vec![
        (Some(&traj[..]), Some(&state[..])),
        (None, Some(&state[..])),
    ];
    inputs.extend(
        (16..=traj.len())
            .step_by(4)
            .map(|cut| (Some(&traj[..cut]), Some(&state[..]))),
    );
    let all = |_: usize| true;
    for (traj, state) in inputs {
        let what = format!("small .traj of {:?} bytes", traj.map(<[u8]>::len));
        let rows = by_rows(open(traj, state).as_mut());
        for capacity in [1, 3, 64] {
            let batches = by_batches(open(traj, state).as_mut(), capacity, &all);
            assert_same(
                &format!("{what} (capacity {capacity})"),
                rows_clone(&rows),
                batches,
                &all,
            );
        }
        let only_state = |s: usize| s == 1;
        let batches = by_batches(open(traj, state).as_mut(), 5, &only_state);
        assert_same(
            &format!("{what} (one stream)"),
            rows_clone(&rows),
            batches,
            &only_state,
        );
        // Every other column skipped, the time kept: the skipped ones read as null.
        let mut reader = open(traj, state);
        let schema = reader.schema().clone();
        let keep = |_: usize, signal: usize| signal == 0 || signal % 2 == 1;
        let mut set = BatchSet::with_columns(&schema, 4, all, keep);
        let mut got = vec![Vec::new(); schema.streams.len()];
        while {
            let more = reader.read_batches(&mut set).unwrap();
            for batch in set.take_ready(more) {
                got[batch.stream()].extend((0..batch.rows()).map(|r| batch.row_values(r)));
            }
            more
        } {}
        let blanked = rows_clone(&rows).map(|(mut streams, integrity)| {
            for row in streams.iter_mut().flatten() {
                for (signal, value) in row.iter_mut().enumerate() {
                    if !keep(0, signal) {
                        *value = Value::Null;
                    }
                }
            }
            (streams, integrity)
        });
        let got = Ok((got, reader.integrity().clone()));
        assert_same(&format!("{what} (odd columns)"), blanked, got, &all);
    }
}
