//! `export_partitioned`: the Hive layout, the `source` column, adding and replacing recordings.

#![cfg(feature = "parquet")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use recfmt_core::{
    DType, Header, MemoryRecording, RecordingReader, Schema, SignalDesc, StreamDesc, TimeBase,
    Value,
};
use recfmt_export::{
    Error, ExportOptions, SOURCE_COLUMN, TableFormat, export_partitioned, partition_dir,
};

/// `nav` NAV rows (x = offset + i) and `evt` EVT rows.
fn recording(nav: u64, evt: u64, offset: f32) -> MemoryRecording {
    let mut nav_desc = StreamDesc::new(
        "NAV",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    nav_desc
        .signals
        .push(SignalDesc::scalar("x", DType::F32).with_unit("m"));
    let mut evt_desc = StreamDesc::new(
        "EVT",
        SignalDesc::scalar("t_us", DType::U64),
        TimeBase::MICROSECONDS,
    );
    evt_desc
        .signals
        .push(SignalDesc::scalar("code", DType::U64));
    let mut rows = Vec::new();
    for i in 0..nav.max(evt) {
        if i < nav {
            rows.push((
                0,
                vec![
                    Value::UInt(i * 10),
                    Value::Float((offset + i as f32).into()),
                ],
            ));
        }
        if i < evt {
            rows.push((1, vec![Value::UInt(i * 10 + 5), Value::UInt(i)]));
        }
    }
    let header = Header {
        format: "memory",
        ..Header::default()
    };
    let schema = Schema {
        streams: vec![nav_desc, evt_desc],
    };
    MemoryRecording::new(header, schema).with_rows(rows)
}

fn read_parquet(path: &Path) -> Vec<RecordBatch> {
    read_parquet_with_schema(path).1
}

/// The file's schema (with its metadata) and its batches.
fn read_parquet_with_schema(path: &Path) -> (arrow_schema::SchemaRef, Vec<RecordBatch>) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let schema = builder.schema().clone();
    let batches = builder.build().unwrap().map(Result::unwrap).collect();
    (schema, batches)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn options() -> ExportOptions {
    let mut options = ExportOptions::new(TableFormat::Parquet);
    options.batch_rows = 7;
    options
}

#[test]
fn each_recording_gets_its_own_partition_with_a_source_column() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let report = export_partitioned(
        &mut recording(20, 3, 0.0),
        root,
        "boat1",
        &options(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(report.outputs.len(), 2);
    assert_eq!(report.outputs[0].rows, 20);
    assert_eq!(report.outputs[1].rows, 3);
    let b1_nav = root.join("NAV/source=boat1/part-0.parquet");
    let first_modified = std::fs::metadata(&b1_nav).unwrap().modified().unwrap();

    export_partitioned(
        &mut recording(5, 0, 100.0),
        root,
        "boat2",
        &options(),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(
        files_under(root),
        [
            root.join("EVT/source=boat1/part-0.parquet"),
            root.join("NAV/source=boat1/part-0.parquet"),
            root.join("NAV/source=boat2/part-0.parquet"),
        ],
        "boat2 has no EVT rows, so no EVT folder"
    );
    // Adding boat2 did not rewrite boat1.
    assert_eq!(
        std::fs::metadata(&b1_nav).unwrap().modified().unwrap(),
        first_modified
    );

    let (schema, batches) = read_parquet_with_schema(&root.join("NAV/source=boat2/part-0.parquet"));
    assert_eq!(schema.field(2).name(), SOURCE_COLUMN);
    assert_eq!(schema.field(1).metadata()["unit"], "m");
    assert_eq!(schema.metadata()["recfmt.time_column"], "t_us");
    let mut t = Vec::new();
    let mut x = Vec::new();
    for batch in &batches {
        t.extend(
            batch
                .column(0)
                .as_primitive::<UInt64Type>()
                .values()
                .iter()
                .copied(),
        );
        x.extend(
            batch
                .column(1)
                .as_primitive::<Float32Type>()
                .values()
                .iter()
                .copied(),
        );
        let source = batch.column(2).as_string::<i32>();
        assert_eq!(source.null_count(), 0);
        assert!(source.iter().all(|s| s == Some("boat2")));
    }
    assert_eq!(t, [0, 10, 20, 30, 40]);
    assert_eq!(x, [100.0, 101.0, 102.0, 103.0, 104.0]);
}

#[test]
fn exporting_a_recording_again_replaces_only_its_parts() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    export_partitioned(
        &mut recording(4, 4, 0.0),
        root,
        "a",
        &options(),
        &mut |_, _| {},
    )
    .unwrap();
    export_partitioned(
        &mut recording(4, 4, 0.0),
        root,
        "b",
        &options(),
        &mut |_, _| {},
    )
    .unwrap();
    // A part left by some earlier, larger export of `a`.
    let stale = partition_dir(root, "NAV", "a").join("part-1.parquet");
    std::fs::copy(
        partition_dir(root, "NAV", "a").join("part-0.parquet"),
        &stale,
    )
    .unwrap();
    let unrelated = partition_dir(root, "NAV", "a").join("notes.txt");
    std::fs::write(&unrelated, "kept").unwrap();

    // `a` again is refused unless replacing is allowed (`--force`), before anything changes.
    let err = export_partitioned(
        &mut recording(2, 0, 50.0),
        root,
        "a",
        &options(),
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    // The refused file is named once, not as `path: path already exists`.
    let part = partition_dir(root, "NAV", "a").join("part-0.parquet");
    assert_eq!(
        err.to_string()
            .matches(&*part.display().to_string())
            .count(),
        1,
        "{err}"
    );
    assert!(stale.exists());
    // Allowed: `a` again, now without EVT rows: its EVT part goes, b's stays.
    let replacing = ExportOptions {
        replace: recfmt_core::Replace::RegularFile,
        ..options()
    };
    export_partitioned(
        &mut recording(2, 0, 50.0),
        root,
        "a",
        &replacing,
        &mut |_, _| {},
    )
    .unwrap();
    assert!(!stale.exists());
    assert!(unrelated.exists());
    assert!(!partition_dir(root, "EVT", "a").exists());
    assert!(
        partition_dir(root, "EVT", "b")
            .join("part-0.parquet")
            .exists()
    );
    let rows: usize = read_parquet(&partition_dir(root, "NAV", "a").join("part-0.parquet"))
        .iter()
        .map(RecordBatch::num_rows)
        .sum();
    assert_eq!(rows, 2);
    let rows: usize = read_parquet(&partition_dir(root, "NAV", "b").join("part-0.parquet"))
        .iter()
        .map(RecordBatch::num_rows)
        .sum();
    assert_eq!(rows, 4);
}

#[test]
fn other_formats_are_refused_and_a_source_signal_is_renamed() {
    let dir = tempfile::tempdir().unwrap();
    let csv = ExportOptions::new(TableFormat::Csv);
    let err = export_partitioned(
        &mut recording(1, 1, 0.0),
        dir.path(),
        "a",
        &csv,
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");

    // A stream with a column named like the partition column.
    let mut schema = recording(1, 0, 0.0).schema().clone();
    schema.streams[0]
        .signals
        .push(SignalDesc::scalar(SOURCE_COLUMN, DType::U64));
    let mut clash = MemoryRecording::new(Header::default(), schema)
        .with_rows([(0, vec![Value::UInt(0), Value::Float(0.0), Value::UInt(1)])]);
    export_partitioned(&mut clash, dir.path(), "a", &options(), &mut |_, _| {}).unwrap();
    let (schema, _) =
        read_parquet_with_schema(&partition_dir(dir.path(), "NAV", "a").join("part-0.parquet"));
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names[names.len() - 2..], ["source_2", "source"]);
    assert_eq!(
        schema.metadata()["recfmt.renamed_columns"],
        r#"{"source_2":"source"}"#
    );
}
