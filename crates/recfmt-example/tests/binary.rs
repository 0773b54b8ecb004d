//! The binary beacon log, a reader that implements only `read_row`: its row view and its
//! column view agree, a cut last record is kept out and reported, bad magic is an error with
//! its offset, and it converts to Parquet through the registry like a built-in format.

#![allow(clippy::unwrap_used)] // tests may unwrap

use proptest::prelude::*;
use recfmt::core::{BatchSet, ErrorKind, FrameBuf, ReadOptions, RecordingReader, Value};
use recfmt_example::binary::{BinaryBeaconReader, RECORD_LEN, write_pings};

fn log(pings: &[(u64, u32, f32)]) -> Vec<u8> {
    let mut bytes = Vec::new();
    write_pings(&mut bytes, pings.iter().copied()).unwrap();
    bytes
}

fn rows_by_frames(bytes: &[u8], options: ReadOptions) -> Vec<Vec<Value>> {
    let mut reader = BinaryBeaconReader::new(bytes, options).unwrap();
    let mut frame = FrameBuf::default();
    let mut rows = Vec::new();
    while reader.read_frame(&mut frame).unwrap() {
        assert_eq!(frame.stream, 0);
        rows.push(frame.values.clone());
    }
    rows
}

fn rows_by_batches(bytes: &[u8], capacity: usize) -> Vec<Vec<Value>> {
    let mut reader = BinaryBeaconReader::new(bytes, ReadOptions::default()).unwrap();
    let schema = reader.schema().clone();
    let mut set = BatchSet::new(&schema, capacity);
    let mut rows = Vec::new();
    loop {
        let more = reader.read_batches(&mut set).unwrap();
        for batch in set.take_ready(more) {
            assert!(batch.rows() <= capacity);
            rows.extend((0..batch.rows()).map(|r| batch.row_values(r)));
        }
        if !more {
            return rows;
        }
    }
}

proptest! {
    #[test]
    fn rows_and_columns_hold_the_same_pings(
        pings in proptest::collection::vec((any::<u64>(), any::<u32>(), -120.0f32..0.0), 0..300),
        capacity in 1usize..100,
    ) {
        let bytes = log(&pings);
        let frames = rows_by_frames(&bytes, ReadOptions::default());
        let expected: Vec<Vec<Value>> = pings
            .iter()
            .map(|&(t, b, r)| vec![Value::UInt(t), Value::UInt(u64::from(b)), Value::Float(f64::from(r))])
            .collect();
        prop_assert_eq!(&frames, &expected);
        prop_assert_eq!(rows_by_batches(&bytes, capacity), expected);
    }
}

#[test]
fn a_cut_last_record_is_kept_out_and_reported() {
    let pings = [(0, 1, -50.0), (10, 2, -60.0), (20, 3, -70.0)];
    let bytes = log(&pings);
    let cut = &bytes[..bytes.len() - 5];
    let mut reader = BinaryBeaconReader::new(cut, ReadOptions::default()).unwrap();
    let mut frame = FrameBuf::default();
    let mut rows = 0;
    while reader.read_frame(&mut frame).unwrap() {
        rows += 1;
    }
    assert_eq!(rows, 2);
    let integrity = reader.integrity();
    assert!(integrity.lost_data());
    assert_eq!(integrity.truncated_at, Some(8 + 2 * RECORD_LEN as u64));
    assert_eq!(integrity.bytes_lost, RECORD_LEN as u64 - 5);

    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    let mut reader = BinaryBeaconReader::new(cut, strict).unwrap();
    let err = loop {
        match reader.read_frame(&mut frame) {
            Ok(true) => {}
            Ok(false) => panic!("a strict read of a cut log ended without an error"),
            Err(e) => break e,
        }
    };
    assert_eq!(err.kind(), ErrorKind::Malformed);
    assert!(err.to_string().contains("at byte 40"), "{err}");
}

#[test]
fn a_wrong_magic_is_an_error_at_byte_zero() {
    let err = BinaryBeaconReader::new(&b"BEACONB2........"[..], ReadOptions::default())
        .err()
        .unwrap();
    assert_eq!(err.kind(), ErrorKind::Malformed);
    assert!(err.to_string().contains("at byte 0"), "{err}");
}

#[test]
fn it_converts_to_parquet_through_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("site.beaconbin");
    let pings: Vec<_> = (0..5000u32)
        .map(|i| (u64::from(i) * 1000, i % 7, -40.0 - i as f32 / 1000.0))
        .collect();
    std::fs::write(&input, log(&pings)).unwrap();
    let mut registry = recfmt::default_registry().clone();
    registry.register(&recfmt_example::binary::BINARY_FORMAT);
    let options = recfmt::convert::ConvertOptions {
        target: "parquet".into(),
        ..Default::default()
    };
    let out = dir.path().join("out");
    let report = recfmt::convert::convert(&registry, &input, &out, &options, None).unwrap();
    assert!(!report.integrity.lost_data);
    let file = std::fs::File::open(out.join("pings.parquet")).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = 0;
    for batch in reader {
        let batch = batch.unwrap();
        let names: Vec<_> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        assert_eq!(names, ["t_us", "beacon", "rssi"]);
        rows += batch.num_rows();
    }
    assert_eq!(rows, pings.len());
}
