//! The batch read path against the row path: for every fixture, sample and damaged recording,
//! `read_batches` (alone, at several capacities, with some streams unwanted, after a seek, and
//! mixed with `read_frame`) gives exactly the rows, integrity report and error `read_frame`
//! gives.
#![allow(clippy::unwrap_used)] // helpers in a test file fail by panicking

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use recfmt_core::{
    ArrayValue, BatchSet, FrameBuf, Integrity, IntegrityStatus, ReadOptions, RecordingReader, Value,
};
use recfmt_icarec::{DYNAMIC_FILE, FORMAT, generate};

/// What a read gives: each stream's rows in order, the final integrity, and the error that
/// ended it (if any).
#[derive(Debug)]
struct Read {
    rows: Vec<Vec<Vec<Value>>>,
    integrity: Integrity,
    error: Option<String>,
}

type Opener<'a> = &'a dyn Fn() -> Box<dyn RecordingReader>;
type Wanted<'a> = &'a dyn Fn(usize) -> bool;

fn by_frames(rec: &mut dyn RecordingReader, wanted: Wanted) -> Read {
    let mut rows = vec![Vec::new(); rec.schema().streams.len()];
    let mut row = FrameBuf::default();
    let error = loop {
        match rec.read_frame(&mut row) {
            Ok(true) if wanted(row.stream) => rows[row.stream].push(row.values.clone()),
            Ok(true) => {}
            Ok(false) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    Read {
        rows,
        integrity: rec.integrity().clone(),
        error,
    }
}

/// Moves every row of `set` into `rows`, checking what a call may leave in it.
fn drain(set: &mut BatchSet, rows: &mut [Vec<Vec<Value>>], more: bool, wanted: Wanted) {
    let capacity = set.capacity();
    assert!(!more || set.is_full(), "Ok(true) without a full batch");
    assert_eq!(set.len(), rows.len());
    for (s, out) in rows.iter_mut().enumerate() {
        let batch = set.take(s);
        batch.check_consistent().unwrap();
        assert!(
            batch.rows() <= capacity,
            "{} rows in one call",
            batch.rows()
        );
        assert!(wanted(s) || batch.is_empty(), "rows of unwanted stream {s}");
        out.extend((0..batch.rows()).map(|r| batch.row_values(r)));
    }
}

fn by_batches(rec: &mut dyn RecordingReader, capacity: usize, wanted: Wanted) -> Read {
    let mut rows = vec![Vec::new(); rec.schema().streams.len()];
    let mut set = BatchSet::with_streams(rec.schema(), capacity, wanted);
    let error = loop {
        match rec.read_batches(&mut set) {
            Ok(more) => {
                drain(&mut set, &mut rows, more, wanted);
                if !more {
                    break None;
                }
            }
            Err(e) => {
                drain(&mut set, &mut rows, false, wanted);
                break Some(e.to_string());
            }
        }
    };
    Read {
        rows,
        integrity: rec.integrity().clone(),
        error,
    }
}

/// Three rows by `read_frame`, then one `read_batches` call, in turn.
fn mixed(rec: &mut dyn RecordingReader, capacity: usize, wanted: Wanted) -> Read {
    let mut rows = vec![Vec::new(); rec.schema().streams.len()];
    let mut set = BatchSet::with_streams(rec.schema(), capacity, wanted);
    let mut row = FrameBuf::default();
    let error = 'read: loop {
        for _ in 0..3 {
            match rec.read_frame(&mut row) {
                Ok(true) if wanted(row.stream) => rows[row.stream].push(row.values.clone()),
                Ok(true) => {}
                Ok(false) => break 'read None,
                Err(e) => break 'read Some(e.to_string()),
            }
        }
        match rec.read_batches(&mut set) {
            Ok(more) => {
                drain(&mut set, &mut rows, more, wanted);
                if !more {
                    break None;
                }
            }
            Err(e) => {
                drain(&mut set, &mut rows, false, wanted);
                break Some(e.to_string());
            }
        }
    };
    Read {
        rows,
        integrity: rec.integrity().clone(),
        error,
    }
}

/// Equal, with floats compared bit for bit (NaN payloads and -0.0 included).
fn same_value(x: &Value, y: &Value) -> bool {
    match (x, y) {
        (Value::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
        (Value::Array(ArrayValue::F64(a)), Value::Array(ArrayValue::F64(b))) => {
            a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (Value::Array(ArrayValue::F32(a)), Value::Array(ArrayValue::F32(b))) => {
            a.len() == b.len() && a.iter().zip(b).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        _ => x == y,
    }
}

fn assert_same(expected: &Read, got: &Read, what: &str) {
    assert_eq!(expected.error, got.error, "{what}: error");
    assert_eq!(expected.rows.len(), got.rows.len(), "{what}: streams");
    for (s, (e, g)) in expected.rows.iter().zip(&got.rows).enumerate() {
        assert_eq!(e.len(), g.len(), "{what}: rows of stream {s}");
        for (r, (er, gr)) in e.iter().zip(g).enumerate() {
            assert_eq!(er.len(), gr.len(), "{what}: stream {s} row {r}");
            for (c, (ev, gv)) in er.iter().zip(gr).enumerate() {
                assert!(
                    same_value(ev, gv),
                    "{what}: stream {s} row {r} column {c}: {ev:?} != {gv:?}"
                );
            }
        }
    }
    assert_eq!(expected.integrity, got.integrity, "{what}: integrity");
}

/// A stream subset: its name and which stream indexes it wants.
type Subset = (&'static str, fn(usize) -> bool);

const WANTED: [Subset; 4] = [
    ("all streams", |_| true),
    ("dynamic only", |s| s == 0),
    ("static only", |s| s == 1),
    ("no stream", |_| false),
];

/// Reads with only the time column and every third other column kept: skipped columns must
/// stay empty (a `validate` scan decodes nothing else), and kept ones read as the row path.
fn check_skipped_columns(open: Opener, label: &str) {
    let mut expected = by_frames(&mut *open(), &|_| true);
    let mut rec = open();
    let schema = rec.schema().clone();
    let keep = |s: usize, c: usize| c == schema.streams[s].time || c % 3 == 1;
    for (s, rows) in expected.rows.iter_mut().enumerate() {
        for row in rows {
            for (_, v) in row.iter_mut().enumerate().filter(|(c, _)| !keep(s, *c)) {
                *v = Value::Null;
            }
        }
    }
    let mut set = BatchSet::with_columns(&schema, 100, |_| true, keep);
    let mut rows = vec![Vec::new(); schema.streams.len()];
    let error = loop {
        let result = rec.read_batches(&mut set);
        let more = *result.as_ref().unwrap_or(&false);
        for batch in set.take_ready(more) {
            for (c, column) in batch.columns().iter().enumerate() {
                let empty = keep(batch.stream(), c) || column.rows() == 0;
                assert!(empty, "{label}: skipped column {c} holds values");
            }
            rows[batch.stream()].extend((0..batch.rows()).map(|r| batch.row_values(r)));
        }
        match result {
            Ok(true) => {}
            Ok(false) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    let got = Read {
        rows,
        integrity: rec.integrity().clone(),
        error,
    };
    assert_same(&expected, &got, &format!("{label}, some columns"));
}

/// Compares every batch read of `open`'s recording with the row read; returns the row read of
/// all streams.
fn check(open: Opener, label: &str) -> Read {
    check_skipped_columns(open, label);
    for (name, wanted) in WANTED {
        let expected = by_frames(&mut *open(), &wanted);
        for capacity in [1, 7, 4096] {
            let got = by_batches(&mut *open(), capacity, &wanted);
            assert_same(
                &expected,
                &got,
                &format!("{label}, {name}, capacity {capacity}"),
            );
        }
        for capacity in [1, 5] {
            let got = mixed(&mut *open(), capacity, &wanted);
            assert_same(
                &expected,
                &got,
                &format!("{label}, {name}, mixed, capacity {capacity}"),
            );
        }
    }
    by_frames(&mut *open(), &|_| true)
}

/// [`check`], then the same after `seek_time` to the middle dynamic row's time.
fn check_with_seek(open: Opener, label: &str) -> Read {
    let all = check(open, label);
    let dynamic = &all.rows[0];
    if let Some(Value::Float(t)) = dynamic.get(dynamic.len() / 2).map(|r| &r[0]) {
        let t = *t;
        let seek = || {
            let mut rec = open();
            rec.seek_time(t).unwrap();
            rec
        };
        let seeked = check(&seek, &format!("{label} after seek_time({t})"));
        assert!(seeked.rows[0].len() <= dynamic.len());
    }
    all
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/generated/icarec");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    assert!(
        found.iter().any(|p| p.ends_with("torn.icarec")),
        "no torn fixture in {}",
        dir.display()
    );
    found
}

fn options(strict: bool) -> ReadOptions {
    ReadOptions {
        strict,
        ..ReadOptions::default()
    }
}

/// Checks an ICAREC directory leniently and strictly (when it opens strictly).
fn check_icarec(path: &Path) -> Read {
    let label = path.display().to_string();
    let strict_open = || (FORMAT.open)(path, &options(true)).unwrap();
    if (FORMAT.open)(path, &options(true)).is_ok() {
        check(&strict_open, &format!("{label} (strict)"));
    }
    let open = || (FORMAT.open)(path, &options(false)).unwrap();
    check_with_seek(&open, &label)
}

#[test]
fn fixtures_read_the_same_by_batches() {
    for path in fixtures() {
        let all = check_icarec(&path);
        assert!(!all.rows[0].is_empty(), "{}: no frames", path.display());
        if path.ends_with("torn.icarec") {
            assert_eq!(all.integrity.status, IntegrityStatus::Truncated);
            assert!(all.integrity.bytes_lost > 0);
            // Strictly, the torn recording does not even open.
            assert!((FORMAT.open)(&path, &options(true)).is_err());
        }
    }
}

/// The shared samples root, `None` (skipped, with a message) when absent; a failure in CI.
fn samples_root() -> Option<PathBuf> {
    let root = std::env::var_os("RECFMT_SAMPLES").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/samples"),
        PathBuf::from,
    );
    if root.is_dir() {
        return Some(root);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but the samples folder {} is missing",
        root.display()
    );
    eprintln!("skipping samples: {} not found", root.display());
    None
}

/// ICAREC directories and Icarus HDF5 files among the samples (folders `icarec`, `icarus`).
fn samples() -> Vec<PathBuf> {
    let Some(root) = samples_root() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for folder in ["icarec", "icarus"] {
        if let Ok(entries) = std::fs::read_dir(root.join(folder)) {
            found.extend(
                entries.flatten().map(|e| e.path()).filter(|p| {
                    p.is_dir() || p.extension().is_some_and(|e| e == "h5" || e == "hdf5")
                }),
            );
        }
    }
    found.sort();
    if found.is_empty() {
        eprintln!(
            "no ICAREC or Icarus HDF5 samples in {}/icarec or {}/icarus (none are published upstream)",
            root.display(),
            root.display()
        );
    }
    found
}

#[test]
fn samples_read_the_same_by_batches() {
    for path in samples() {
        if path.is_dir() {
            check_icarec(&path);
        } else {
            #[cfg(feature = "hdf5")]
            check_h5(&path);
            #[cfg(not(feature = "hdf5"))]
            eprintln!("skipping {}: feature hdf5 is off", path.display());
        }
    }
}

#[test]
fn a_large_recording_crosses_blocks_the_same_way() {
    // 3000 frames of 216 bytes: three 256 KiB blocks, and a torn tail after them.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.icarec");
    generate::write_torn(&path, 3000, 100).unwrap();
    let all = check_icarec(&path);
    assert_eq!(all.rows[0].len(), 3000);
    assert_eq!(all.integrity.bytes_lost, 100);
}

#[test]
fn a_batch_of_another_schema_fails_as_the_row_path_does() {
    let path = &fixtures()[0];
    let other = recfmt_core::Schema {
        streams: vec![recfmt_core::StreamDesc::new(
            "dynamic",
            recfmt_core::SignalDesc::scalar("t", recfmt_core::DType::Str),
            recfmt_core::TimeBase::SECONDS,
        )],
    };
    let mut a = (FORMAT.open)(path, &options(false)).unwrap();
    let mut b = (FORMAT.open)(path, &options(false)).unwrap();
    let mut set = BatchSet::new(&other, 8);
    let native = a.read_batches(&mut set).unwrap_err().to_string();
    let by_rows = recfmt_core::read_batches_by_rows(&mut *b, &mut BatchSet::new(&other, 8))
        .unwrap_err()
        .to_string();
    assert_eq!(native, by_rows);
}

/// A copy of the all-types recording with `frames` frames, its `dynamic_signals.bin` damaged:
/// bytes overwritten at `pokes` (positions taken modulo the length), then cut to `keep`
/// (modulo the length + 1). No `metadata.json`, as after a crash.
fn damaged(dir: &Path, frames: u64, pokes: &[(usize, u8)], keep: usize) -> PathBuf {
    let path = dir.join("damaged.icarec");
    generate::write_all_types(&path, frames).unwrap();
    std::fs::remove_file(path.join("metadata.json")).unwrap();
    let file = path.join(DYNAMIC_FILE);
    let mut bytes = std::fs::read(&file).unwrap();
    let len = bytes.len();
    if len > 0 {
        for &(at, value) in pokes {
            bytes[at % len] = value;
        }
    }
    bytes.truncate(keep % (len + 1));
    std::fs::write(&file, &bytes).unwrap();
    path
}

/// Byte positions that make interesting damage in the all-types layout: the upper half of an
/// `int32` slot (irregular values) and the sign byte of a frame time (decreasing times).
fn hot_spots(frames: u64) -> Vec<usize> {
    let schema = generate::all_types_schema().unwrap();
    let stride = schema.layout().stride();
    let int32 = schema.placed("Vehicle.GNC.mode").unwrap().offset;
    (0..frames as usize)
        .flat_map(|i| [i * stride + 7, i * stride + 8 + int32 + 5])
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn damaged_recordings_read_the_same_by_batches(
        frames in 0u64..24,
        pokes in prop::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        hot in prop::collection::vec((any::<usize>(), any::<u8>()), 0..3),
        keep in any::<usize>(),
        strict in any::<bool>(),
        capacity in 1usize..6,
        wanted in 0usize..4,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let spots = hot_spots(frames.max(1));
        let mut all_pokes = pokes;
        all_pokes.extend(hot.iter().map(|&(i, v)| (spots[i % spots.len()], v)));
        let path = damaged(dir.path(), frames, &all_pokes, keep);
        let open = || (FORMAT.open)(&path, &options(strict));
        prop_assume!(open().is_ok());
        let (_, wanted) = WANTED[wanted];
        let expected = by_frames(&mut *open().unwrap(), &wanted);
        let got = by_batches(&mut *open().unwrap(), capacity, &wanted);
        assert_same(&expected, &got, "batches");
        let got = mixed(&mut *open().unwrap(), capacity, &wanted);
        assert_same(&expected, &got, "mixed");
    }
}

#[cfg(feature = "hdf5")]
fn check_h5(path: &Path) -> Read {
    let label = path.display().to_string();
    let open = || (recfmt_icarec::HDF5_FORMAT.open)(path, &options(false)).unwrap();
    check(&open, &label)
}

#[cfg(feature = "hdf5")]
#[test]
fn icarus_h5_conversions_of_the_fixtures_read_the_same_by_batches() {
    let dir = tempfile::tempdir().unwrap();
    for (i, path) in fixtures().into_iter().enumerate() {
        let h5 = dir.path().join(format!("converted-{i}.h5"));
        let mut rec = (FORMAT.open)(&path, &options(false)).unwrap();
        recfmt_icarec::write_icarus_h5(&mut *rec, &h5, &Default::default()).unwrap();
        let all = check_h5(&h5);
        assert!(!all.rows[0].is_empty(), "{}: no frames", path.display());
    }
}

/// An Icarus file with narrow dataset types (f32 time, u8/i16/u16/u32/u64 signals), more rows
/// than one read window, and one dataset a row short (a truncation the reader reports).
#[cfg(feature = "hdf5")]
#[test]
fn icarus_h5_narrow_types_and_windows_read_the_same_by_batches() {
    use hdf5_pure::{AttrValue, FileBuilder};
    let frames = 70_000usize;
    let names = [
        "a_u8", "b_i16", "c_u16", "d_u32", "e_u64", "f_i8", "g_static",
    ];
    let mut schema = String::from("{\"signals\": [");
    for (i, n) in names.iter().enumerate() {
        let (ty, lifecycle) = match *n {
            "e_u64" => ("int64", "dynamic"),
            "g_static" => ("double", "static"),
            _ => ("int32", "dynamic"),
        };
        if i > 0 {
            schema.push(',');
        }
        schema += &format!(
            "{{\"name\": \"{n}\", \"type\": \"{ty}\", \"lifecycle\": \"{lifecycle}\", \"offset\": {}}}",
            8 * i
        );
    }
    schema += "]}";
    let mut b = FileBuilder::new();
    let mut signals = b.create_group("signals");
    let seq = |m: usize| (0..frames).map(move |i| i % m);
    signals
        .create_dataset("a_u8")
        .with_u8_data(&seq(256).map(|x| x as u8).collect::<Vec<_>>());
    signals.create_dataset("b_i16").with_i16_data(
        &seq(65_536)
            .map(|x| (x as i32 - 32_768) as i16)
            .collect::<Vec<_>>(),
    );
    signals
        .create_dataset("c_u16")
        .with_u16_data(&seq(65_536).map(|x| x as u16).collect::<Vec<_>>());
    signals.create_dataset("d_u32").with_u32_data(
        &seq(usize::MAX)
            .map(|x| (x as u32).wrapping_mul(65_599))
            .collect::<Vec<_>>(),
    );
    signals.create_dataset("e_u64").with_u64_data(
        &seq(usize::MAX)
            .map(|x| u64::MAX - x as u64)
            .collect::<Vec<_>>(),
    );
    signals.create_dataset("f_i8").with_i8_data(
        &seq(256)
            .take(frames - 1)
            .map(|x| (x as i32 - 128) as i8)
            .collect::<Vec<_>>(),
    );
    signals
        .create_dataset("g_static")
        .with_f64_data(&vec![950.5; frames]);
    b.add_group(signals.finish());
    let mut metadata = b.create_group("metadata");
    metadata.set_attr("schema", AttrValue::VarLenAsciiString(schema));
    b.add_group(metadata.finish());
    b.create_dataset("time")
        .with_f32_data(&(0..frames).map(|i| i as f32 * 0.25).collect::<Vec<_>>());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("narrow.h5");
    b.write(&path).unwrap();

    let all = check_h5(&path);
    assert_eq!(all.rows[0].len(), frames - 1);
    assert_eq!(all.rows[1].len(), 1);
    assert_eq!(all.integrity.status, IntegrityStatus::Truncated);
}

/// Reads `rec` in batches of the default capacity and checks that each batch handed on
/// before the end is full by the byte bound (not by rows: the frames are too many bytes for
/// 65,536 of them in one batch) and at most one frame past it; returns the rows.
fn by_bounded_batches(rec: &mut dyn RecordingReader, label: &str) -> Vec<Vec<Vec<Value>>> {
    let mut rows = vec![Vec::new(); rec.schema().streams.len()];
    let mut set = BatchSet::new(rec.schema(), 65_536);
    let mut handed_on_full = 0;
    loop {
        let more = rec.read_batches(&mut set).unwrap();
        assert!(
            !more || set.is_full(),
            "{label}: Ok(true) without a full batch"
        );
        for batch in set.take_ready(more) {
            let (n, bytes) = (batch.rows(), batch.byte_len());
            if more {
                assert!(
                    n < 65_536 && bytes >= BatchSet::MAX_BATCH_BYTES,
                    "{label}: {n} rows"
                );
                assert!(
                    bytes < BatchSet::MAX_BATCH_BYTES + bytes / n,
                    "{label}: {bytes} bytes"
                );
                handed_on_full += 1;
            }
            rows[batch.stream()].extend((0..n).map(|r| batch.row_values(r)));
        }
        if !more {
            break;
        }
    }
    assert!(
        handed_on_full >= 2,
        "{label}: {handed_on_full} batches handed on full"
    );
    rows
}

/// 150,000 frames of the all-types recording (more than 8 MiB of values in 65,536 rows):
/// the directory and its Icarus HDF5 conversion both hand batches on at the byte bound, with
/// the rows the row path gives.
#[test]
fn batches_of_many_frames_are_handed_on_at_the_byte_bound() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.icarec");
    generate::write_all_types(&path, 150_000).unwrap();
    let open = || (FORMAT.open)(&path, &options(false)).unwrap();
    let expected = by_frames(&mut *open(), &|_| true);
    assert_eq!(by_bounded_batches(&mut *open(), "icarec"), expected.rows);
    #[cfg(feature = "hdf5")]
    {
        let h5 = dir.path().join("wide.h5");
        recfmt_icarec::write_icarus_h5(&mut *open(), &h5, &Default::default()).unwrap();
        let open = || (recfmt_icarec::HDF5_FORMAT.open)(&h5, &options(false)).unwrap();
        let expected = by_frames(&mut *open(), &|_| true);
        assert_eq!(by_bounded_batches(&mut *open(), "icarus h5"), expected.rows);
    }
}
