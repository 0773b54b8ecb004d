//! The batch path decoding on other threads, block by block, against the single-threaded
//! paths: with blocks of a few kilobytes, a session holds hundreds of block boundaries, and a
//! row dropped, duplicated or moved at one of them shows up as a different batch, call or
//! integrity note. Every run is compared call for call with the single-threaded batch path
//! (same `Ok(true)`/`Ok(false)`/error per call, same full batches taken after each) and row
//! for row with the row path.

use std::path::{Path, PathBuf};

use recfmt_core::{BatchSet, FrameBuf, ReadOptions, RecordingReader, StreamBatch, Value};
use recfmt_tlv::io::{Reader, Writer};
use recfmt_tlv::{Record, UsvlogRecording, generate};

/// Block sizes small enough for many blocks in a test session, odd so that blocks end at
/// every kind of record.
const BLOCK_BYTES: [usize; 3] = [1, 997, 4099];

/// What one call returned: the batches taken after a `read_batches`, or the row of a
/// `read_frame`.
#[derive(Debug, PartialEq)]
enum Step {
    Batches(Result<bool, String>, Vec<StreamBatch>),
    Frame(Result<Option<(usize, Vec<Value>)>, String>),
}

/// How a run reads: every call `read_batches`, or some calls `read_frame` in between.
#[derive(Debug, Clone, Copy)]
enum Mix {
    Batches,
    /// A `read_frame` call after every `n`th `read_batches` call.
    FramesEvery(usize),
}

fn options(strict: bool, layouts: &[PathBuf]) -> ReadOptions {
    ReadOptions {
        strict,
        layouts: layouts.to_vec(),
        ..ReadOptions::default()
    }
}

fn open(
    path: &Path,
    options: &ReadOptions,
    threads: usize,
    block_bytes: usize,
) -> UsvlogRecording<std::io::BufReader<std::fs::File>> {
    let mut recording = UsvlogRecording::open(path, options).expect("open");
    recording.set_decode_threads(threads);
    recording.set_block_bytes(block_bytes);
    recording
}

/// Reads the whole recording and records every call's outcome; the last step is the
/// integrity report (as an error-free frame step of no row, compared by its text).
fn run(
    recording: &mut impl RecordingReader,
    capacity: usize,
    wanted: &dyn Fn(usize) -> bool,
    column: &dyn Fn(usize, usize) -> bool,
    mix: Mix,
) -> (Vec<Step>, String) {
    let schema = recording.schema().clone();
    let mut dst = BatchSet::with_columns(&schema, capacity, wanted, column);
    let mut frame = FrameBuf::default();
    let mut steps = Vec::new();
    let mut calls = 0usize;
    loop {
        calls += 1;
        if let Mix::FramesEvery(n) = mix
            && calls.is_multiple_of(n)
        {
            let result = match recording.read_frame(&mut frame) {
                Ok(true) => Ok(Some((frame.stream, frame.values.clone()))),
                Ok(false) => Ok(None),
                Err(e) => Err(e.to_string()),
            };
            let stop = !matches!(result, Ok(Some(_)));
            steps.push(Step::Frame(result));
            if stop {
                break;
            }
            continue;
        }
        let result = recording.read_batches(&mut dst).map_err(|e| e.to_string());
        let more = matches!(result, Ok(true));
        let taken = dst.take_ready(more);
        steps.push(Step::Batches(result.clone(), taken));
        if !more {
            break;
        }
    }
    (steps, format!("{:?}", recording.integrity()))
}

/// Fails, naming the first call that differs, unless two runs made the same calls.
fn assert_same_calls(expected: &[Step], got: &[Step], what: &str) {
    if let Some(i) = (0..expected.len().max(got.len())).find(|&i| expected.get(i) != got.get(i)) {
        let show = |s: Option<&Step>| {
            let text = format!("{s:?}");
            text.chars().take(1500).collect::<String>()
        };
        panic!(
            "{what}: call {i} of {} differs from the single-threaded batch path\nexpected {}\ngot      {}",
            expected.len(),
            show(expected.get(i)),
            show(got.get(i))
        );
    }
}

/// The rows of a run, per stream, in order.
fn rows_of(steps: &[Step], streams: usize) -> Vec<Vec<Vec<Value>>> {
    let mut rows = vec![Vec::new(); streams];
    for step in steps {
        match step {
            Step::Batches(_, batches) => {
                for b in batches {
                    rows[b.stream()].extend((0..b.rows()).map(|r| b.row_values(r)));
                }
            }
            Step::Frame(Ok(Some((stream, values)))) => rows[*stream].push(values.clone()),
            Step::Frame(_) => {}
        }
    }
    rows
}

/// Every row through `read_frame` alone, per stream; the error text if the read failed.
fn row_path(path: &Path, options: &ReadOptions) -> (Vec<Vec<Vec<Value>>>, Option<String>) {
    let mut recording = open(path, options, 0, 1 << 20);
    let mut rows = vec![Vec::new(); recording.schema().streams.len()];
    let mut frame = FrameBuf::default();
    loop {
        match recording.read_frame(&mut frame) {
            Ok(true) => rows[frame.stream].push(frame.values.clone()),
            Ok(false) => return (rows, None),
            Err(e) => return (rows, Some(e.to_string())),
        }
    }
}

/// Which streams a run reads.
type Wanted = Box<dyn Fn(usize) -> bool>;

/// Runs the threaded batch path against the single-threaded one over capacities, selections,
/// block sizes and thread counts; returns how many runs were compared.
fn compare_all(path: &Path, options: &ReadOptions, capacities: &[usize]) -> usize {
    let streams = open(path, options, 0, 1 << 20).schema().streams.len();
    let (reference_rows, reference_error) = row_path(path, options);
    let selections: Vec<(&str, Wanted)> = vec![
        ("all", Box::new(|_| true)),
        ("odd", Box::new(|s| s % 2 == 1)),
        ("first", Box::new(|s| s == 0)),
        ("last two", Box::new(move |s| s + 2 >= streams)),
    ];
    let mut runs = 0;
    for &capacity in capacities {
        for (name, wanted) in &selections {
            for (skip_name, column) in [
                (
                    "every column",
                    &(|_, _| true) as &dyn Fn(usize, usize) -> bool,
                ),
                ("every other column", &|_, c| c % 2 == 0),
            ] {
                let mixes = [Mix::Batches, Mix::FramesEvery(3)];
                for (i, &mix) in mixes.iter().enumerate() {
                    let mut single = open(path, options, 0, 1 << 20);
                    let expected = run(&mut single, capacity, wanted, column, mix);
                    let threads = 1 + (runs % 3);
                    let block = BLOCK_BYTES[(runs + i) % BLOCK_BYTES.len()];
                    let mut threaded = open(path, options, threads, block);
                    let got = run(&mut threaded, capacity, wanted, column, mix);
                    let what = format!(
                        "capacity {capacity}, streams {name}, {skip_name}, {mix:?}, \
                         {threads} threads, blocks of {block} bytes"
                    );
                    assert!(
                        threaded.blocks_decoded_in_parallel() > 0,
                        "{what}: no block was decoded on another thread"
                    );
                    assert_same_calls(&expected.0, &got.0, &what);
                    assert_eq!(expected.1, got.1, "{what}: integrity differs");
                    if matches!(mix, Mix::Batches) && skip_name == "every column" {
                        // Row for row against read_frame alone, for the wanted streams.
                        let rows = rows_of(&got.0, streams);
                        for (s, reference) in reference_rows.iter().enumerate() {
                            if wanted(s) && reference_error.is_some() {
                                // The batch path keeps a long payload's row before its strict
                                // error, the row path does not.
                                assert!(
                                    rows[s].starts_with(reference),
                                    "{what}: rows of stream {s}"
                                );
                            } else if wanted(s) {
                                assert!(rows[s] == *reference, "{what}: rows of stream {s}");
                            } else {
                                assert!(rows[s].is_empty(), "{what}: stream {s} not wanted");
                            }
                        }
                        let error = got.0.iter().find_map(|step| match step {
                            Step::Batches(Err(e), _) => Some(e.clone()),
                            _ => None,
                        });
                        assert_eq!(error, reference_error, "{what}: error");
                    }
                    runs += 1;
                }
            }
        }
    }
    runs
}

/// A session with every built-in type, user type 99 (from `layouts.toml`) and unknown type
/// 200 (kept as raw bytes), of `steps` steps.
fn mixed_session(dir: &Path, steps: u64) -> (PathBuf, Vec<PathBuf>) {
    let path = dir.join("mixed");
    generate::write_unknown_types_session(&path, steps).expect("fixture");
    let layouts = vec![path.join("layouts.toml")];
    (path, layouts)
}

/// The records of a session's `timeseries.bin`.
fn records(path: &Path) -> Vec<Record> {
    let bytes = std::fs::read(path.join("timeseries.bin")).expect("read");
    let mut reader = Reader::new(&bytes[..]);
    reader.read_header().expect("header");
    let mut out = Vec::new();
    let mut record = Record::default();
    while reader.read_record(&mut record).expect("record") {
        out.push(record.clone());
    }
    out
}

/// Rewrites a session's `timeseries.bin` from `records`.
fn rewrite(path: &Path, records: &[Record]) {
    let mut w = Writer::new(Vec::new());
    w.write_header(&recfmt_tlv::FileHeader::new(1, records[0].t_us))
        .expect("header");
    for r in records {
        w.write_record(r).expect("record");
    }
    std::fs::write(path.join("timeseries.bin"), w.into_inner().expect("bytes")).expect("write");
}

const CAPACITIES: [usize; 5] = [1, 3, 7, 250, 100_000];

#[test]
fn blocks_keep_every_row_in_order_at_every_capacity_and_selection() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, layouts) = mixed_session(dir.path(), 600);
    let size = std::fs::metadata(path.join("timeseries.bin"))
        .expect("size")
        .len();
    // Hundreds of blocks of 997 bytes.
    assert!(size > 100 * 997, "{size} bytes");
    let runs = compare_all(&path, &options(false, &layouts), &CAPACITIES);
    assert_eq!(runs, 80);
}

#[test]
fn a_torn_tail_is_reported_alike_lenient_and_strict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("torn");
    generate::write_truncated_session(&path, 400, 5).expect("fixture");
    for strict in [false, true] {
        let options = options(strict, &[]);
        let (_, error) = row_path(&path, &options);
        assert_eq!(error.is_some(), strict, "{error:?}");
        compare_all(&path, &options, &[1, 7, 100_000]);
    }
}

#[test]
fn a_corrupt_record_mid_file_is_skipped_or_fails_at_the_same_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, layouts) = mixed_session(dir.path(), 400);
    let mut all = records(&path);
    let middle = all.len() / 2;
    let known = |r: &Record| r.type_id != 200;
    // A short payload (skipped as corrupt) in the middle, a long one (kept, extra bytes
    // ignored) near the end.
    let short = (middle..all.len())
        .find(|&i| known(&all[i]))
        .expect("record");
    all[short].payload.pop();
    let long = (all.len() * 3 / 4..all.len())
        .find(|&i| known(&all[i]))
        .expect("record");
    all[long].payload.extend([1, 2, 3]);
    rewrite(&path, &all);
    for strict in [false, true] {
        let options = options(strict, &layouts);
        let (rows, error) = row_path(&path, &options);
        if strict {
            let error = error.expect("strict read fails");
            assert!(error.contains("byte"), "{error}");
        } else {
            assert!(error.is_none(), "{error:?}");
            assert!(rows.iter().map(Vec::len).sum::<usize>() > 0);
        }
        compare_all(&path, &options, &CAPACITIES);
    }
}

#[test]
fn time_going_backwards_is_noted_alike_at_the_same_byte() {
    // Records read straight into blocks note a time that goes backwards at the byte the row
    // path names: swap the times of records here and there, some at block edges.
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, layouts) = mixed_session(dir.path(), 400);
    let mut all = records(&path);
    for i in (7..all.len() - 1).step_by(all.len() / 9) {
        let (a, b) = (all[i].t_us, all[i + 1].t_us);
        (all[i].t_us, all[i + 1].t_us) = (b + 5, a);
    }
    rewrite(&path, &all);
    let options = options(false, &layouts);
    let mut single = open(&path, &options, 0, 1 << 20);
    let reference = run(&mut single, 100_000, &|_| true, &|_, _| true, Mix::Batches);
    let warned = reference.1;
    assert!(warned.contains("goes backwards at byte"), "{warned}");
    compare_all(&path, &options, &CAPACITIES);
}

#[test]
fn a_strict_long_payload_that_fills_a_batch_still_fails_first() {
    // The row of a long payload is appended before its strict error: at the capacity it must
    // not make the call return "full" first. Capacities 1..=4 put it at every position.
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, layouts) = mixed_session(dir.path(), 200);
    let mut all = records(&path);
    let long = (all.len() / 2..all.len())
        .find(|&i| all[i].type_id != 200)
        .expect("record");
    all[long].payload.push(0);
    rewrite(&path, &all);
    compare_all(&path, &options(true, &layouts), &[1, 2, 3, 4]);
}

#[test]
fn records_cut_at_a_boundary_are_counted_from_meta_json_alike() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, layouts) = mixed_session(dir.path(), 300);
    let all = records(&path);
    rewrite(&path, &all[..all.len() * 2 / 3]);
    for strict in [false, true] {
        compare_all(&path, &options(strict, &layouts), &[5, 100_000]);
    }
}

#[test]
fn a_large_session_in_default_blocks_matches_the_single_threaded_path() {
    // The benchmark's record mix, with blocks of the default size (several of them).
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bench");
    generate::write_bench_session(&path, 5_000_000).expect("fixture");
    let options = options(false, &[path.join("layouts.toml")]);
    for (capacity, threads) in [(65_536, 2), (4_099, 1), (100_000, 3)] {
        let mut single = UsvlogRecording::open(&path, &options).expect("open");
        single.set_decode_threads(0);
        let expected = run(&mut single, capacity, &|_| true, &|_, _| true, Mix::Batches);
        let mut threaded = UsvlogRecording::open(&path, &options).expect("open");
        threaded.set_decode_threads(threads);
        let got = run(
            &mut threaded,
            capacity,
            &|_| true,
            &|_, _| true,
            Mix::Batches,
        );
        assert!(threaded.blocks_decoded_in_parallel() > 1);
        assert_same_calls(&expected.0, &got.0, &format!("capacity {capacity}"));
        assert_eq!(expected.1, got.1);
    }
}

#[test]
fn a_scan_of_the_time_columns_alone_stays_on_one_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, layouts) = mixed_session(dir.path(), 300);
    let options = options(false, &layouts);
    let mut single = open(&path, &options, 0, 997);
    let times_only = |_: usize, c: usize| c == 0;
    let expected = run(&mut single, 64, &|_| true, &times_only, Mix::Batches);
    let mut threaded = open(&path, &options, 2, 997);
    let got = run(&mut threaded, 64, &|_| true, &times_only, Mix::Batches);
    assert_eq!(threaded.blocks_decoded_in_parallel(), 0);
    assert_same_calls(&expected.0, &got.0, "times only");
    assert_eq!(expected.1, got.1);
}

#[test]
fn a_reader_dropped_mid_read_stops_its_threads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, layouts) = mixed_session(dir.path(), 300);
    let options = options(false, &layouts);
    for _ in 0..20 {
        let mut recording = open(&path, &options, 2, 997);
        let mut dst = BatchSet::new(&recording.schema().clone(), 5);
        assert!(recording.read_batches(&mut dst).expect("read"));
        // Dropped with blocks in flight: must return (joining the threads), not hang.
    }
}

/// Unknown records of 60,000 bytes: batches of the default 65,536-row capacity are handed on
/// at `BatchSet::MAX_BATCH_BYTES` of values instead (a batch of 65,536 such rows would hold
/// almost 4 GB), on one thread and on several, with every row kept in order.
#[test]
fn batches_of_large_records_are_handed_on_at_the_byte_bound() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, layouts) = mixed_session(dir.path(), 20);
    let mut all = records(&path);
    let last = all.last().expect("records").t_us;
    all.extend((0..400u64).map(|i| Record {
        t_us: last + 1 + i,
        type_id: 200,
        payload: (0..60_000u32).map(|b| (b as u8) ^ (i as u8)).collect(),
        offset: 0,
    }));
    rewrite(&path, &all);
    let options = options(false, &layouts);
    let (reference, error) = row_path(&path, &options);
    assert_eq!(error, None);
    for threads in [0, 2] {
        let mut recording = open(&path, &options, threads, 1 << 20);
        let streams = recording.schema().streams.len();
        let (steps, _) = run(
            &mut recording,
            65_536,
            &|_| true,
            &|_, _| true,
            Mix::Batches,
        );
        assert_eq!(rows_of(&steps, streams), reference, "{threads} threads");
        let mut handed_on_full = 0;
        for step in &steps {
            let Step::Batches(Ok(more), batches) = step else {
                continue;
            };
            for batch in batches {
                let bytes = batch.byte_len();
                // At most one block of input (1 MiB here) past the bound.
                assert!(
                    bytes < BatchSet::MAX_BATCH_BYTES + (2 << 20),
                    "{threads} threads: a batch of {} rows holds {bytes} bytes",
                    batch.rows()
                );
                if *more {
                    assert!(batch.is_full(65_536));
                    handed_on_full += 1;
                }
            }
        }
        assert!(
            handed_on_full >= 2,
            "{threads} threads: {handed_on_full} full batches"
        );
    }
}
