//! The native batch path of [`NanoverRecording`] against its row path, on generated inputs:
//! the bench trajectory (many particles, positions and velocities), the small recording
//! (values of every kind, string arrays as JSON, resets, a `.state`), cut copies of both,
//! capacities down to one row, stream and column selections, and the two paths mixed.
//! Rows are compared in order, value for value, so a dropped, doubled or shifted row fails.

#![allow(clippy::unwrap_used)]

use recfmt_core::{
    ArrayValue, BatchSet, FrameBuf, Integrity, IntegrityStatus, ReadOptions, RecordingReader, Value,
};
use recfmt_nanover::{NanoverRecording, generate};

type Rows = Vec<Vec<Vec<Value>>>;

fn open<'a>(traj: Option<&'a [u8]>, state: Option<&'a [u8]>) -> NanoverRecording<&'a [u8]> {
    NanoverRecording::from_bytes(traj, state, &ReadOptions::default()).unwrap()
}

/// Every row of every stream through `read_frame`, and the final integrity.
fn by_rows(rec: &mut impl RecordingReader) -> (Rows, Integrity) {
    let mut streams = vec![Vec::new(); rec.schema().streams.len()];
    let mut frame = FrameBuf::default();
    while rec.read_frame(&mut frame).unwrap() {
        streams[frame.stream].push(frame.values.clone());
    }
    (streams, rec.integrity().clone())
}

/// The same through `read_batches`, taking the ready batches after every call; checks the
/// capacity contract on the way (no batch over capacity, `Ok(true)` only with a full batch).
fn by_batches(rec: &mut impl RecordingReader, mut set: BatchSet) -> (Rows, Integrity) {
    let mut streams = vec![Vec::new(); rec.schema().streams.len()];
    loop {
        let more = rec.read_batches(&mut set).unwrap();
        assert!(
            (0..set.len()).all(|s| set.stream(s).rows() <= set.capacity()),
            "a batch went past the capacity"
        );
        if more {
            assert!(set.is_full(), "Ok(true) without a full batch");
        }
        for batch in set.take_ready(more) {
            batch.check_consistent().unwrap();
            for row in 0..batch.rows() {
                streams[batch.stream()].push(batch.row_values(row));
            }
        }
        if !more {
            assert_eq!(set.rows(), 0, "rows left behind at the end");
            break;
        }
    }
    (streams, rec.integrity().clone())
}

/// Equal values, NaN equal to NaN.
fn same(a: &Value, b: &Value) -> bool {
    let float = |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan());
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => float(*x, *y),
        (Value::Array(ArrayValue::F32(x)), Value::Array(ArrayValue::F32(y))) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| float(f64::from(*p), f64::from(*q)))
        }
        _ => a == b,
    }
}

/// Asserts that `got` holds the rows of `want` for the streams `wanted` names (and none of
/// the others), keeping only the signals `column` names (skipped ones read as null).
fn assert_rows(
    what: &str,
    want: &Rows,
    got: &Rows,
    wanted: &dyn Fn(usize) -> bool,
    column: &dyn Fn(usize, usize) -> bool,
) {
    assert_eq!(want.len(), got.len(), "{what}: streams");
    for (stream, (w, g)) in want.iter().zip(got).enumerate() {
        if !wanted(stream) {
            assert!(g.is_empty(), "{what}: unwanted stream {stream} got rows");
            continue;
        }
        assert_eq!(w.len(), g.len(), "{what}: stream {stream} row count");
        for (i, (x, y)) in w.iter().zip(g).enumerate() {
            assert_eq!(x.len(), y.len(), "{what}: stream {stream} row {i} width");
            for (signal, (a, b)) in x.iter().zip(y).enumerate() {
                let expected = if column(stream, signal) {
                    a
                } else {
                    &Value::Null
                };
                assert!(
                    same(expected, b),
                    "{what}: stream {stream} row {i} signal {signal}:\n{expected:?}\n{b:?}"
                );
            }
        }
    }
}

/// Reads `traj`/`state` both ways at several capacities and selections and compares.
fn compare(what: &str, traj: Option<&[u8]>, state: Option<&[u8]>) -> (Rows, Integrity) {
    let (rows, integrity) = by_rows(&mut open(traj, state));
    let all = |_: usize| true;
    let every = |_: usize, _: usize| true;
    for capacity in [1, 2, 3, 7, 64, 65_536] {
        let mut rec = open(traj, state);
        let set = BatchSet::new(rec.schema(), capacity);
        let (got, got_integrity) = by_batches(&mut rec, set);
        let what = format!("{what} (capacity {capacity})");
        assert_rows(&what, &rows, &got, &all, &every);
        assert_eq!(integrity, got_integrity, "{what}: integrity");
    }
    for stream in 0..rows.len() {
        let only = move |s: usize| s == stream;
        let mut rec = open(traj, state);
        let set = BatchSet::with_streams(rec.schema(), 5, only);
        let (got, got_integrity) = by_batches(&mut rec, set);
        let what = format!("{what} (stream {stream} only)");
        assert_rows(&what, &rows, &got, &only, &every);
        assert_eq!(integrity, got_integrity, "{what}: integrity");
    }
    // Every other column skipped (the time column kept), as a selection asks for.
    let some = |_: usize, signal: usize| signal == 0 || signal % 2 == 1;
    let mut rec = open(traj, state);
    let set = BatchSet::with_columns(rec.schema(), 4, all, some);
    let (got, _) = by_batches(&mut rec, set);
    assert_rows(&format!("{what} (odd columns)"), &rows, &got, &all, &some);
    (rows, integrity)
}

/// The bench trajectory: every step frame's positions and velocities come out of the native
/// path as the row path gives them, one row per record, in order.
#[test]
fn bench_trajectory_reads_the_same_in_batches() {
    let (traj, frames) = generate::write_bench_traj(Vec::new(), 40, 60_000).unwrap();
    let (rows, integrity) = compare("bench", Some(&traj), None);
    assert_eq!(rows[0].len() as u64, frames);
    assert!(!integrity.lost_data());
    // The rows are distinct (frame_index counts up), so a shifted row could not compare equal.
    let indices: Vec<_> = rows[0].iter().map(|r| r[1].clone()).collect();
    let expected: Vec<_> = (0..frames).map(Value::UInt).collect();
    assert_eq!(indices, expected);
}

/// A bench trajectory cut inside its last record, and again inside the record before:
/// the complete records are kept by both paths, with the same truncation report.
#[test]
fn cut_bench_trajectory_reads_the_same_in_batches() {
    let (traj, frames) = generate::write_bench_traj(Vec::new(), 40, 30_000).unwrap();
    let record = traj.len() / usize::try_from(frames).unwrap();
    for cut in [traj.len() - 7, traj.len() - record - 100, 16 + 3] {
        let (rows, integrity) = compare(&format!("cut at {cut}"), Some(&traj[..cut]), None);
        assert_eq!(integrity.status, IntegrityStatus::Truncated, "cut at {cut}");
        assert!(rows[0].len() < usize::try_from(frames).unwrap());
    }
}

/// The small recording (a `.traj` and a `.state`; numbers, booleans, text, JSON values,
/// string arrays, resets), whole and cut at every byte of the `.traj`.
#[test]
fn small_recording_reads_the_same_in_batches_whole_and_cut() {
    let (traj, state) = generate::small_recording_bytes().unwrap();
    let (rows, integrity) = compare("small", Some(&traj), Some(&state));
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].len(), 7);
    assert!(!rows[1].is_empty());
    assert!(!integrity.lost_data());
    compare("state only", None, Some(&state));
    compare("traj only", Some(&traj), None);
    for cut in 16..traj.len() {
        let all = |_: usize| true;
        let every = |_: usize, _: usize| true;
        let (rows, integrity) = by_rows(&mut open(Some(&traj[..cut]), Some(&state)));
        for capacity in [1, 3] {
            let mut rec = open(Some(&traj[..cut]), Some(&state));
            let set = BatchSet::new(rec.schema(), capacity);
            let (got, got_integrity) = by_batches(&mut rec, set);
            let what = format!("cut at {cut} (capacity {capacity})");
            assert_rows(&what, &rows, &got, &all, &every);
            assert_eq!(integrity, got_integrity, "{what}: integrity");
        }
    }
}

/// `read_frame` and `read_batches` mixed on one reader give the rows in order, none twice.
#[test]
fn rows_and_batches_mix() {
    let (traj, state) = generate::small_recording_bytes().unwrap();
    let (rows, _) = by_rows(&mut open(Some(&traj), Some(&state)));
    let mut rec = open(Some(&traj), Some(&state));
    let mut set = BatchSet::new(rec.schema(), 2);
    let mut got = vec![Vec::new(); rows.len()];
    let mut frame = FrameBuf::default();
    loop {
        let row = rec.read_frame(&mut frame).unwrap();
        if row {
            got[frame.stream].push(frame.values.clone());
        }
        rec.read_batches(&mut set).unwrap();
        for batch in set.take_ready(false) {
            for r in 0..batch.rows() {
                got[batch.stream()].push(batch.row_values(r));
            }
        }
        if !row {
            break;
        }
    }
    // Each stream's rows in order: mixing may interleave streams differently, not rows.
    let all = |_: usize| true;
    let every = |_: usize, _: usize| true;
    assert_rows("mixed", &rows, &got, &all, &every);
}

/// A batch set made for another schema is not filled natively: the row path reports the
/// mismatch, as it would for any reader.
#[test]
fn a_set_for_another_schema_is_refused_as_on_the_row_path() {
    let (traj, state) = generate::small_recording_bytes().unwrap();
    let (bench, _) = generate::write_bench_traj(Vec::new(), 4, 2_000).unwrap();
    let other = open(Some(&bench), None).schema().clone();
    let mut rec = open(Some(&traj), Some(&state));
    let mut set = BatchSet::new(&other, 16);
    let err = rec.read_batches(&mut set).unwrap_err().to_string();
    let mut rec = open(Some(&traj), Some(&state));
    let mut set = BatchSet::new(&other, 16);
    let by_rows = recfmt_core::read_batches_by_rows(&mut rec, &mut set)
        .unwrap_err()
        .to_string();
    assert_eq!(err, by_rows);
}

/// Frames of 40,000 particles (about 2 MB of values each): a batch of the
/// default 65,536-row capacity is handed on once it holds `BatchSet::MAX_BATCH_BYTES` of
/// values, not after 65,536 frames, so memory stays bounded; the rows are those of the row
/// path all the same.
#[test]
fn batches_of_large_frames_are_cut_at_the_byte_bound() {
    let (traj, frames) = generate::write_bench_traj(Vec::new(), 40_000, 40_000_000).unwrap();
    let (rows, _) = by_rows(&mut open(Some(&traj), None));
    let mut rec = open(Some(&traj), None);
    let mut set = BatchSet::new(rec.schema(), 65_536);
    let mut got = vec![Vec::new(); rec.schema().streams.len()];
    let mut taken = Vec::new();
    loop {
        let more = rec.read_batches(&mut set).unwrap();
        for batch in set.take_ready(more) {
            taken.push((batch.rows(), batch.byte_len(), more));
            got[batch.stream()].extend((0..batch.rows()).map(|r| batch.row_values(r)));
        }
        if !more {
            break;
        }
    }
    assert_eq!(got[0].len() as u64, frames);
    assert_eq!(got, rows);
    let full: Vec<_> = taken.iter().filter(|(_, _, more)| *more).collect();
    assert!(full.len() >= 3, "{taken:?}");
    for &&(rows, bytes, _) in &full {
        assert!(
            bytes >= BatchSet::MAX_BATCH_BYTES,
            "{rows} rows, {bytes} bytes"
        );
        // Handed on at the first row past the bound: the rows before it were below it.
        let row = bytes / rows;
        assert!(
            bytes < BatchSet::MAX_BATCH_BYTES + row,
            "{rows} rows, {bytes} bytes"
        );
    }
}
