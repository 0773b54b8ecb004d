//! The batch read path (`read_batches`, signal blocks decoded straight into the columns)
//! against the row path (`read_frame`): the same rows per stream, value for value (floats
//! bitwise, NaN equal to NaN), the same integrity report and the same errors, at several
//! capacities, with every stream and with a subset, on the samples, on generated Continuous
//! tapes, and on truncated and damaged copies of both.

#![allow(clippy::unwrap_used)] // tests may unwrap

mod common;

use std::path::Path;
use std::time::Instant;

use recfmt_core::{BatchSet, FrameBuf, Integrity, ReadOptions, RecordingReader, Value};
use recfmt_fgtape::FgTape;
use recfmt_fgtape::continuous::{ContinuousFrame, ContinuousHeader, ExtraProperty, Writer};
use recfmt_fgtape::mp::join_u16_packets;
use recfmt_fgtape::props::{PropValue, PropertyList};
use recfmt_fgtape::signals::{SignalLayout, SignalType, SignalValue};

type Rows = Vec<Vec<Vec<Value>>>;

const CAPACITIES: [usize; 3] = [1, 7, 4096];

fn open(path: &Path, strict: bool) -> recfmt_core::Result<FgTape> {
    let options = ReadOptions {
        strict,
        ..ReadOptions::default()
    };
    Ok(FgTape::open(path, &options)?)
}

/// Rows per stream and the final integrity through `read_frame`.
fn by_rows(reader: &mut dyn RecordingReader) -> recfmt_core::Result<(Rows, Integrity)> {
    let mut streams = vec![Vec::new(); reader.schema().streams.len()];
    let mut frame = FrameBuf::default();
    while reader.read_frame(&mut frame)? {
        streams[frame.stream].push(frame.values.clone());
    }
    Ok((streams, reader.integrity().clone()))
}

/// The same through `read_batches`, taking the full batches after each call.
fn by_batches(
    reader: &mut dyn RecordingReader,
    capacity: usize,
    wanted: &dyn Fn(usize) -> bool,
) -> recfmt_core::Result<(Rows, Integrity)> {
    let schema = reader.schema().clone();
    let mut streams = vec![Vec::new(); schema.streams.len()];
    let mut set = BatchSet::with_streams(&schema, capacity, wanted);
    loop {
        let more = reader.read_batches(&mut set)?;
        if more {
            assert!(set.is_full(), "Ok(true) without a full batch");
        }
        for batch in set.take_ready(more) {
            batch.check_consistent().unwrap();
            assert!(batch.rows() <= capacity, "a batch past its capacity");
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

fn same_float(x: f64, y: f64) -> bool {
    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => same_float(*x, *y),
        _ => a == b,
    }
}

fn assert_same(
    what: &str,
    rows: &recfmt_core::Result<(Rows, Integrity)>,
    batches: recfmt_core::Result<(Rows, Integrity)>,
    wanted: &dyn Fn(usize) -> bool,
) {
    match (rows, batches) {
        (Ok((rows, rows_integrity)), Ok((batches, batch_integrity))) => {
            assert_eq!(rows.len(), batches.len(), "{what}: streams");
            for (stream, (r, b)) in rows.iter().zip(&batches).enumerate() {
                if !wanted(stream) {
                    assert!(b.is_empty(), "{what}: unwanted stream {stream} got rows");
                    continue;
                }
                assert_eq!(r.len(), b.len(), "{what}: stream {stream} row count");
                for (i, (x, y)) in r.iter().zip(b).enumerate() {
                    let equal = x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b));
                    assert!(equal, "{what}: stream {stream} row {i}:\n{x:?}\n{y:?}");
                }
            }
            assert_eq!(rows_integrity, &batch_integrity, "{what}: integrity");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}: errors"),
        (a, b) => panic!(
            "{what}: one path failed: rows {:?}, batches {:?}",
            a.as_ref().err(),
            b.err()
        ),
    }
}

/// Compares both paths on one file: every stream and subsets, every capacity, lenient and
/// strict. Returns the number of rows the row path gave (0 when it failed).
fn check_file(path: &Path, what: &str) -> usize {
    let mut total = 0;
    for strict in [false, true] {
        let what = format!("{what} (strict {strict})");
        let (rows, streams) = match open(path, strict) {
            Ok(mut r) => {
                let n = r.schema().streams.len();
                (by_rows(&mut r), n)
            }
            Err(e) => {
                // Opening is shared by both paths; nothing more to compare.
                assert!(!e.to_string().is_empty());
                continue;
            }
        };
        if !strict && let Ok((r, _)) = &rows {
            total = r.iter().map(Vec::len).sum();
        }
        let subsets: [(&str, &dyn Fn(usize) -> bool); 4] = [
            ("all", &|_| true),
            ("signals only", &|i| i == 0),
            ("all but signals", &|i| i != 0),
            ("none", &|_| false),
        ];
        for (name, wanted) in subsets {
            for capacity in CAPACITIES {
                let batches = by_batches(&mut open(path, strict).unwrap(), capacity, wanted);
                assert_same(
                    &format!("{what}, {name}, capacity {capacity}"),
                    &rows,
                    batches,
                    wanted,
                );
            }
        }
        assert!(streams <= 3);
    }
    total
}

/// Writes `bytes[..cut]` for several cuts into a temporary folder and checks each copy.
fn check_cuts(bytes: &[u8], what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let len = bytes.len();
    let mut cuts: Vec<usize> = vec![0, 1, 16, 31, 32, 40, 64, 100, 200, 500, 1000];
    cuts.extend([len / 7, len / 3, len / 2, 2 * len / 3, len - len / 10]);
    cuts.extend([len.saturating_sub(100), len.saturating_sub(9)]);
    cuts.extend([len.saturating_sub(5), len.saturating_sub(1)]);
    cuts.retain(|&c| c < len);
    cuts.sort_unstable();
    cuts.dedup();
    for cut in cuts {
        let path = dir.path().join(format!("cut{cut}.fgtape"));
        std::fs::write(&path, &bytes[..cut]).unwrap();
        check_file(&path, &format!("{what} cut at {cut}"));
    }
}

#[test]
fn samples_read_the_same_in_batches() {
    let Some(dir) = common::samples_dir() else {
        return;
    };
    for name in common::SAMPLES {
        let path = dir.join(name);
        let rows = check_file(&path, name);
        assert!(rows > 100, "{name}: only {rows} rows");
    }
}

#[test]
fn truncated_samples_read_the_same_in_batches() {
    let Some(dir) = common::samples_dir() else {
        return;
    };
    for name in common::SAMPLES {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        check_cuts(&bytes, name);
    }
}

/// A Continuous header with `n` signals of each type (property `/p/<type>[<i>]`) and the
/// given data items.
fn continuous_header(compression: i32, n: usize, items: &[&str]) -> ContinuousHeader {
    let mut t = PropertyList::new();
    t.root.set("meta/aircraft-type", PropValue::string("test"));
    t.root
        .set("meta/continuous-compression", PropValue::int(compression));
    t.root.set("meta/tape-duration", PropValue::double(0.0));
    for (i, item) in items.iter().enumerate() {
        t.root.set(&format!("data[{i}]"), PropValue::string(*item));
    }
    t.root.set("signals/name", PropValue::string("Test"));
    let mut k = 0;
    // Interleaved types: the layout sorts them into frame order.
    for i in 0..n {
        for ty in SignalType::ALL.iter().rev() {
            t.root.set(
                &format!("signals/signals/signal[{k}]/type"),
                PropValue::string(ty.name()),
            );
            t.root.set(
                &format!("signals/signals/signal[{k}]/property"),
                PropValue::string(format!("/p/{}[{i}]", ty.name())),
            );
            k += 1;
        }
    }
    let h = ContinuousHeader::new(t.clone()).unwrap();
    if let Some(layout) = &h.signals {
        t.root.set(
            "signals/recorder/record-size",
            PropValue::int(i32::try_from(layout.record_size()).unwrap()),
        );
    }
    ContinuousHeader::new(t).unwrap()
}

/// Frame `i`: values that exercise signs, NaN, infinities and every bool bit.
fn continuous_frame(h: &ContinuousHeader, i: usize) -> ContinuousFrame {
    let values = |layout: &SignalLayout| -> Vec<SignalValue> {
        layout
            .signals()
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let x = (i * 31 + k * 7) as i64;
                match s.ty {
                    SignalType::Double => SignalValue::Double(match x % 11 {
                        0 => f64::NAN,
                        1 => f64::NEG_INFINITY,
                        2 => -0.0,
                        _ => x as f64 * -0.37,
                    }),
                    SignalType::Float => SignalValue::Float(match x % 13 {
                        0 => f32::from_bits(0x7fc0_1234),
                        1 => f32::MIN_POSITIVE / 4.0,
                        _ => x as f32 * 1.3,
                    }),
                    SignalType::Int => SignalValue::Int((x * 123_457) as i32 ^ i32::MIN),
                    SignalType::Int16 => SignalValue::Int16(-(x as i16)),
                    SignalType::Int8 => SignalValue::Int8(x as i8),
                    SignalType::Bool => SignalValue::Bool((x / 3) % 2 == 1),
                }
            })
            .collect()
    };
    let items = h
        .data
        .iter()
        .map(|name| match name.as_str() {
            "signals" => {
                let layout = h.signals.as_ref().unwrap();
                let mut block = layout.encode(&values(layout)).unwrap();
                block.extend_from_slice(&[0; 8]);
                block
            }
            "multiplayer" if i % 3 != 1 => {
                join_u16_packets([&[i as u8; 40][..], b"short", &[]]).unwrap()
            }
            "extra-properties" if i.is_multiple_of(4) => {
                recfmt_fgtape::continuous::encode_extra_properties(&[
                    ExtraProperty::Change {
                        path: format!("/sim/x[{i}]"),
                        value: format!("{i}.25"),
                    },
                    ExtraProperty::Removal {
                        path: "/sim/y".into(),
                    },
                ])
                .unwrap()
            }
            _ => Vec::new(),
        })
        .collect();
    ContinuousFrame {
        time: if i == 5 { 1.0 } else { 100.0 + i as f64 / 8.0 },
        items,
        deflate: None,
    }
}

fn continuous_tape(compression: i32, signals: usize, items: &[&str], frames: usize) -> Vec<u8> {
    let h = continuous_header(compression, signals, items);
    let mut w = Writer::new(Vec::new(), &h).unwrap();
    for i in 0..frames {
        w.write_frame(&continuous_frame(&h, i)).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn continuous_tapes_read_the_same_in_batches() {
    let dir = tempfile::tempdir().unwrap();
    let layouts: [&[&str]; 4] = [
        &["signals", "multiplayer", "extra-properties"],
        &["multiplayer", "signals"],
        &["extra-properties"],
        &["signals"],
    ];
    for compression in [0, 1] {
        for (k, items) in layouts.iter().enumerate() {
            // 9 bools: a second bool byte.
            let bytes = continuous_tape(compression, 9, items, 50);
            let what = format!("continuous {compression} {items:?}");
            let path = dir.path().join(format!("c{compression}_{k}.fgtape"));
            std::fs::write(&path, &bytes).unwrap();
            assert!(check_file(&path, &what) >= 20, "{what}");
            check_cuts(&bytes, &what);
        }
    }
}

/// Bytes flipped in a Continuous tape: damaged lengths, items and flags give the same rows,
/// integrity and errors on both paths.
#[test]
fn damaged_continuous_tapes_read_the_same_in_batches() {
    let dir = tempfile::tempdir().unwrap();
    for compression in [0, 1] {
        let bytes = continuous_tape(compression, 2, &["signals", "multiplayer"], 12);
        let step = (bytes.len() / 60).max(1);
        for at in (0..bytes.len()).step_by(step) {
            for flip in [0xffu8, 0x80] {
                let mut damaged = bytes.clone();
                damaged[at] ^= flip;
                let path = dir.path().join("damaged.fgtape");
                std::fs::write(&path, &damaged).unwrap();
                check_file(
                    &path,
                    &format!("continuous {compression} byte {at} ^ {flip:#x}"),
                );
            }
        }
    }
}

/// Calls of both kinds mixed, and a seek first: the rows follow on from each other.
#[test]
fn mixed_calls_and_seeks_give_the_row_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = continuous_tape(0, 3, &["signals", "multiplayer", "extra-properties"], 40);
    let path = dir.path().join("c.fgtape");
    std::fs::write(&path, &bytes).unwrap();
    for seek in [None, Some(0.0), Some(102.0), Some(1e9)] {
        let opened = || {
            let mut r = open(&path, false).unwrap();
            if let Some(s) = seek {
                assert!(r.seek_time(s).unwrap());
            }
            r
        };
        let expected = by_rows(&mut opened());
        for capacity in CAPACITIES {
            let all = |_: usize| true;
            assert_same(
                &format!("seek {seek:?}, capacity {capacity}"),
                &expected,
                by_batches(&mut opened(), capacity, &all),
                &all,
            );
            // Alternate: a batch call, then one row, and so on.
            let mut r = opened();
            let schema = r.schema().clone();
            let mut rows: Rows = vec![Vec::new(); schema.streams.len()];
            let mut set = BatchSet::new(&schema, capacity);
            let mut frame = FrameBuf::default();
            loop {
                let more = r.read_batches(&mut set).unwrap();
                for batch in set.take_at_least(1) {
                    for row in 0..batch.rows() {
                        rows[batch.stream()].push(batch.row_values(row));
                    }
                }
                if !more {
                    break;
                }
                if r.read_frame(&mut frame).unwrap() {
                    rows[frame.stream].push(frame.values.clone());
                }
            }
            assert_same(
                &format!("seek {seek:?}, mixed, capacity {capacity}"),
                &expected,
                Ok((rows, r.integrity().clone())),
                &all,
            );
        }
    }
}

/// Throughput of both paths on the largest sample and on a generated Continuous tape of 240
/// signals by 40 000 frames. `cargo test --release -p recfmt-fgtape --test batches -- \
/// --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check"]
fn throughput() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    if let Some(samples) = common::samples_dir() {
        inputs.push(samples.join(common::SAMPLES[0]));
    }
    let big = dir.path().join("big.fgtape");
    std::fs::write(&big, continuous_tape(0, 40, &["signals"], 40_000)).unwrap();
    inputs.push(big);
    for path in inputs {
        let size = std::fs::metadata(&path).unwrap().len() as f64 / 1e6;
        // read_frame alone, the row-by-row default read_batches, the native read_batches.
        let mut best = [f64::INFINITY; 3];
        let mut n = [0usize; 3];
        for _ in 0..5 {
            let t = Instant::now();
            n[0] = by_rows_count(&mut open(&path, false).unwrap()).0;
            best[0] = best[0].min(t.elapsed().as_secs_f64());
            for native in [false, true] {
                let t = Instant::now();
                n[1 + usize::from(native)] = batch_count(&mut open(&path, false).unwrap(), native);
                let k = 1 + usize::from(native);
                best[k] = best[k].min(t.elapsed().as_secs_f64());
            }
        }
        assert!(n[0] == n[1] && n[1] == n[2]);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        println!("{name}: {size:.2} MB, {} rows", n[0]);
        for (k, label) in [
            "read_frame",
            "read_batches_by_rows",
            "read_batches (native)",
        ]
        .iter()
        .enumerate()
        {
            println!(
                "  {label:>22}: {:8.1} ms {:10.0} rows/s {:7.1} MB/s",
                best[k] * 1e3,
                n[k] as f64 / best[k],
                size / best[k]
            );
        }
    }
}

/// Rows through `read_batches` (native or the row-by-row default) at capacity 4096.
fn batch_count(r: &mut FgTape, native: bool) -> usize {
    let schema = r.schema().clone();
    let mut set = BatchSet::new(&schema, 4096);
    let mut rows = 0;
    loop {
        let more = if native {
            r.read_batches(&mut set).unwrap()
        } else {
            recfmt_core::read_batches_by_rows(r, &mut set).unwrap()
        };
        rows += set.take_ready(more).iter().map(|b| b.rows()).sum::<usize>();
        if !more {
            return rows;
        }
    }
}

/// Rows through `read_frame`, counted (the values are dropped as a consumer would).
fn by_rows_count(reader: &mut dyn RecordingReader) -> (usize, Integrity) {
    let mut frame = FrameBuf::default();
    let mut n = 0;
    while reader.read_frame(&mut frame).unwrap() {
        n += 1;
    }
    (n, reader.integrity().clone())
}
