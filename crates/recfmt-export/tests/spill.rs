//! Parquet pages of row groups in progress past `ExportOptions::row_group_memory` wait in a
//! temporary file: the tables must be the same bytes however many pages went there.

#![cfg(feature = "parquet")]
#![allow(clippy::unwrap_used, missing_docs)]

use recfmt_core::{
    ArrayValue, DType, Header, MemoryRecording, Metadata, Schema, Shape, SignalDesc, StreamDesc,
    TimeBase, Value,
};
use recfmt_export::{ExportOptions, TableFormat, export_tables};

/// Two streams written at once, with floats that do not compress, text and fixed-size arrays:
/// 300,000 rows of `signals`, so each column has several pages and row groups of 100,000 rows.
fn recording() -> MemoryRecording {
    let mut signals = StreamDesc::new(
        "signals",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    signals.signals.push(SignalDesc::scalar("x", DType::F64));
    signals
        .signals
        .push(SignalDesc::scalar("q", DType::F32).with_shape(Shape::Fixed(vec![4])));
    let mut events = StreamDesc::new(
        "events",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    events.signals.push(SignalDesc::scalar("text", DType::Str));
    let header = Header {
        format: "memory",
        version: "1".into(),
        time: None,
        metadata: Metadata::new(),
    };
    let schema = Schema {
        streams: vec![signals, events],
    };
    // A xorshift sequence: values a dictionary or zstd cannot shrink.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut noise = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let rows = (0..300_000u64).flat_map(move |i| {
        let x = f64::from_bits(noise() >> 2);
        let q: Vec<f32> = (0..4).map(|_| noise() as u32 as f32).collect();
        let signal = (
            0,
            vec![
                Value::UInt(i * 20),
                Value::Float(x),
                Value::Array(ArrayValue::F32(q)),
            ],
        );
        let event = (i % 10 == 0).then(|| {
            (
                1,
                vec![
                    Value::UInt(i * 20),
                    Value::Str(format!("event {} at {i}", noise() % 1000)),
                ],
            )
        });
        std::iter::once(signal).chain(event)
    });
    MemoryRecording::new(header, schema).with_rows(rows)
}

fn tables(row_group_memory: usize) -> Vec<Vec<u8>> {
    tables_with(row_group_memory, 4096, 0)
}

/// The two tables' bytes, written with `batch_rows` per batch by `threads` writers.
fn tables_with(row_group_memory: usize, batch_rows: usize, threads: usize) -> Vec<Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    let mut options = ExportOptions::new(TableFormat::Parquet);
    options.batch_rows = batch_rows;
    options.threads = threads;
    options.row_group_rows = 100_000;
    options.row_group_memory = row_group_memory;
    export_tables(&mut recording(), dir.path(), &options, &mut |_, _| {}).unwrap();
    let tables = ["signals.parquet", "events.parquet"]
        .iter()
        .map(|name| std::fs::read(dir.path().join(name)).unwrap())
        .collect();
    // The spill files are unnamed: nothing is left beside the tables.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    tables
}

#[test]
fn tables_are_the_same_bytes_whether_pages_wait_in_memory_or_on_disk() {
    let in_memory = tables(usize::MAX);
    let file = parquet::file::serialized_reader::SerializedFileReader::new(bytes::Bytes::from(
        in_memory[0].clone(),
    ))
    .unwrap();
    use parquet::file::reader::FileReader;
    let metadata = file.metadata();
    assert_eq!(metadata.num_row_groups(), 3, "row groups of 100,000 rows");
    assert!(
        metadata.row_group(0).compressed_size() > 2 << 20,
        "several pages per column chunk"
    );
    for (name, memory) in [("on disk", 0), ("partly on disk", 1 << 20)] {
        let tables = tables(memory);
        assert!(tables == in_memory, "the tables differ with pages {name}");
    }
}

/// Parquet's bytes do not depend on how many writers share the tables while no memory bound
/// cuts a row group early (as here: pages, row groups and spilled pages alike). The race of taking a stream's batches out of order is caught by
/// `csv_tables_from_many_small_batches_equal_one_batch` (`export.rs`), whose recording keeps
/// the queue fuller than this one does.
#[test]
fn two_writers_write_the_same_tables_as_one() {
    let one = tables_with(1 << 20, 500, 1);
    for attempt in 0..2 {
        let two = tables_with(1 << 20, 500, 2);
        assert!(
            two == one,
            "the tables differ with two writers (attempt {attempt})"
        );
    }
}
