//! End-to-end tests of `export_tables` over an in-memory recording.

#![cfg(all(feature = "parquet", feature = "csv"))]
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int16Type, UInt8Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use recfmt_core::{
    ArrayValue, DType, FormatInfo, FrameBuf, Header, Integrity, MemoryRecording, Metadata,
    RecordingReader, Schema, Shape, SignalDesc, StreamDesc, TimeBase, TimeReference, TimeSystem,
    Value,
};
use recfmt_export::{
    Error, ExportOptions, ParquetCompression, StreamBatcher, TableFormat, export_tables,
};

/// A [`MemoryRecording`] that can fail: after `fail_after` rows its next read is a
/// malformed-input error, and the file names in `watch` are noted just before.
struct Memory {
    inner: MemoryRecording,
    read: usize,
    fail_after: Option<usize>,
    watch: Option<std::path::PathBuf>,
    seen: Vec<String>,
}

impl Memory {
    fn new(schema: Schema, rows: Vec<FrameBuf>) -> Self {
        Memory {
            inner: MemoryRecording::new(header(), schema)
                .with_rows(rows.into_iter().map(|r| (r.stream, r.values))),
            read: 0,
            fail_after: None,
            watch: None,
            seen: Vec::new(),
        }
    }
}

impl RecordingReader for Memory {
    fn format(&self) -> &'static FormatInfo {
        self.inner.format()
    }
    fn header(&self) -> &Header {
        self.inner.header()
    }
    fn schema(&self) -> &Schema {
        self.inner.schema()
    }
    fn integrity(&self) -> &Integrity {
        self.inner.integrity()
    }
    fn read_frame(&mut self, dst: &mut FrameBuf) -> recfmt_core::Result<bool> {
        if self.fail_after == Some(self.read) {
            if let Some(dir) = &self.watch {
                self.seen = dir_names(dir);
            }
            return Err(recfmt_core::Error::malformed(
                "memory",
                1234,
                "a valid record",
            ));
        }
        let more = self.inner.read_frame(dst)?;
        self.read += usize::from(more);
        Ok(more)
    }
    /// Rows read of all rows: the export's progress callback sees these.
    fn progress(&self) -> (u64, Option<u64>) {
        let total = self.read + self.inner.remaining();
        (self.read as u64, Some(total as u64))
    }
}

fn header() -> Header {
    let mut metadata = Metadata::new();
    metadata.insert("generator".into(), "unit test".into());
    Header {
        format: "memory",
        version: "1.2".into(),
        time: Some(TimeReference::parse(TimeSystem::Utc, Some("2020-01-01T00:00:00Z")).unwrap()),
        metadata,
    }
}

fn nav_stream() -> StreamDesc {
    let mut nav = StreamDesc::new(
        "NAV",
        SignalDesc::scalar("t_us", DType::U64).with_unit("us"),
        TimeBase::MICROSECONDS,
    );
    let mut x = SignalDesc::scalar("x", DType::F32).with_unit("m");
    x.metadata.insert("source_id".into(), "7".into());
    x.metadata.insert("recfmt.kept".into(), "yes".into());
    nav.signals.push(x);
    nav.signals.push(SignalDesc::scalar("mode", DType::U8));
    nav.signals.push(SignalDesc::scalar("valid", DType::Bool));
    nav.signals.push(SignalDesc::scalar("name", DType::Str));
    nav.signals.push(
        SignalDesc::scalar("pos", DType::F64)
            .with_unit("m")
            .with_shape(Shape::Fixed(vec![3])),
    );
    nav.metadata.insert("rate".into(), "10 Hz".into());
    nav
}

fn vehicle_stream() -> StreamDesc {
    let mut v = StreamDesc::new(
        "vehicle/1",
        SignalDesc::scalar("t", DType::F64).with_unit("s"),
        TimeBase::SECONDS,
    );
    v.signals.push(SignalDesc::scalar("blob", DType::Bytes));
    v.signals
        .push(SignalDesc::scalar("hist", DType::I16).with_shape(Shape::Variable));
    v.signals
        .push(SignalDesc::scalar("m", DType::F32).with_shape(Shape::Fixed(vec![2, 2])));
    v
}

fn nav_row(t: u64, x: Value, mode: u64, valid: Value, name: Value, pos: Value) -> FrameBuf {
    FrameBuf {
        stream: 0,
        values: vec![Value::UInt(t), x, Value::UInt(mode), valid, name, pos],
    }
}

fn f32v(x: f32) -> Value {
    Value::Float(f64::from(x))
}

fn nav_rows() -> Vec<FrameBuf> {
    vec![
        nav_row(
            0,
            f32v(0.1),
            1,
            Value::Bool(true),
            Value::Str("a".into()),
            Value::Array(ArrayValue::F64(vec![1.0, 2.5, -3.0])),
        ),
        nav_row(
            100_000,
            Value::Null,
            255,
            Value::Bool(false),
            Value::Str("b,c".into()),
            Value::Null,
        ),
        nav_row(
            200_000,
            f32v(f32::MAX),
            7,
            Value::Null,
            Value::Null,
            Value::Array(ArrayValue::F64(vec![0.1, 1e-10, 1e300])),
        ),
    ]
}

fn vehicle_rows() -> Vec<FrameBuf> {
    let row = |values| FrameBuf { stream: 1, values };
    vec![
        row(vec![
            Value::Float(0.5),
            Value::Bytes(vec![0xde, 0xad]),
            Value::Array(ArrayValue::Int(vec![1, -2, 3])),
            Value::Array(ArrayValue::F32(vec![1.0, 0.1, 0.2, 4.0])),
        ]),
        row(vec![
            Value::Float(1.0),
            Value::Null,
            Value::Null,
            Value::Null,
        ]),
        row(vec![
            Value::Float(1.5),
            Value::Bytes(vec![]),
            Value::Array(ArrayValue::Int(vec![])),
            Value::Array(ArrayValue::F32(vec![0.0, -0.0, f32::INFINITY, f32::NAN])),
        ]),
    ]
}

/// NAV and vehicle rows interleaved, plus a stream that never has rows.
fn recording() -> Memory {
    let (schema, rows) = recording_parts();
    Memory::new(schema, rows)
}

/// The schema (NAV, vehicle_1 and an empty stream) and rows of [`recording`].
fn recording_parts() -> (Schema, Vec<FrameBuf>) {
    let empty = StreamDesc::new(
        "EMPTY",
        SignalDesc::scalar("t", DType::U32),
        TimeBase::MILLISECONDS,
    );
    let nav = nav_rows();
    let veh = vehicle_rows();
    let mut rows = Vec::new();
    for (a, b) in nav.into_iter().zip(veh) {
        rows.push(a);
        rows.push(b);
    }
    let schema = Schema {
        streams: vec![nav_stream(), vehicle_stream(), empty],
    };
    (schema, rows)
}

fn options(format: TableFormat) -> ExportOptions {
    let mut o = ExportOptions::new(format);
    o.metadata.insert("source.file".into(), "memory.bin".into());
    o
}

fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn read_parquet(path: &Path) -> (arrow_schema::SchemaRef, Vec<RecordBatch>, usize) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let row_groups = builder.metadata().num_row_groups();
    let schema = builder.schema().clone();
    let batches = builder
        .build()
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    (schema, batches, row_groups)
}

#[test]
fn csv_text_is_exact() {
    let dir = tempfile::tempdir().unwrap();
    let mut reader = recording();
    let mut calls = 0;
    let report = export_tables(
        &mut reader,
        dir.path(),
        &options(TableFormat::Csv),
        &mut |done, total| {
            calls += 1;
            assert_eq!(total, Some(6));
            assert!(done <= 6);
        },
    )
    .unwrap();
    assert!(calls >= 1);

    // Streams without rows get no file; names with separators are sanitized.
    assert_eq!(dir_names(dir.path()), ["NAV.csv", "vehicle_1.csv"]);
    assert_eq!(report.outputs.len(), 2);
    assert_eq!(report.outputs[0].stream, "NAV");
    assert_eq!(report.outputs[0].path, dir.path().join("NAV.csv"));
    assert_eq!(report.outputs[0].rows, 3);
    assert_eq!(report.outputs[1].stream, "vehicle/1");
    assert_eq!(report.outputs[1].path, dir.path().join("vehicle_1.csv"));

    let nav = std::fs::read_to_string(dir.path().join("NAV.csv")).unwrap();
    assert_eq!(
        nav,
        "t_us,x,mode,valid,name,pos[0],pos[1],pos[2]\n\
         0,0.1,1,true,a,1.0,2.5,-3.0\n\
         100000,,255,false,\"b,c\",,,\n\
         200000,3.4028235e38,7,,,0.1,1e-10,1e300\n"
    );
    let veh = std::fs::read_to_string(dir.path().join("vehicle_1.csv")).unwrap();
    assert_eq!(
        veh,
        "t,blob,hist,m[0][0],m[0][1],m[1][0],m[1][1]\n\
         0.5,dead,\"[1,-2,3]\",1.0,0.1,0.2,4.0\n\
         1.0,,,,,,\n\
         1.5,,[],0.0,-0.0,inf,NaN\n"
    );
}

#[test]
fn csv_floats_read_back_exactly() {
    // Awkward f32 and f64 values survive the text round trip bit for bit.
    let mut s = StreamDesc::new(
        "F",
        SignalDesc::scalar("t", DType::U64),
        TimeBase::MICROSECONDS,
    );
    s.signals.push(SignalDesc::scalar("a", DType::F32));
    s.signals.push(SignalDesc::scalar("b", DType::F64));
    let f32s = [
        0.1f32,
        1.0 / 3.0,
        f32::MIN_POSITIVE,
        1e-45,
        16_777_217.0,
        -2.5e-8,
    ];
    let f64s = [
        0.1f64,
        1.0 / 3.0,
        f64::MIN_POSITIVE,
        5e-324,
        9_007_199_254_740_993.0,
        1e22,
    ];
    let rows = f32s
        .iter()
        .zip(&f64s)
        .enumerate()
        .map(|(i, (&a, &b))| FrameBuf {
            stream: 0,
            values: vec![Value::UInt(i as u64), f32v(a), Value::Float(b)],
        })
        .collect();
    let mut reader = Memory::new(Schema { streams: vec![s] }, rows);
    let dir = tempfile::tempdir().unwrap();
    export_tables(
        &mut reader,
        dir.path(),
        &options(TableFormat::Csv),
        &mut |_, _| {},
    )
    .unwrap();
    let text = std::fs::read_to_string(dir.path().join("F.csv")).unwrap();
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), f32s.len());
    for (line, (&a, &b)) in lines.iter().zip(f32s.iter().zip(&f64s)) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(
            cells[1].parse::<f32>().unwrap().to_bits(),
            a.to_bits(),
            "{line}"
        );
        assert_eq!(
            cells[2].parse::<f64>().unwrap().to_bits(),
            b.to_bits(),
            "{line}"
        );
    }
}

#[test]
fn parquet_reads_back_with_types_values_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let mut reader = recording();
    let report = export_tables(
        &mut reader,
        dir.path(),
        &options(TableFormat::Parquet),
        &mut |_, _| {},
    )
    .unwrap();
    assert_eq!(dir_names(dir.path()), ["NAV.parquet", "vehicle_1.parquet"]);
    assert_eq!(report.outputs[0].rows, 3);

    let (schema, batches, _) = read_parquet(&dir.path().join("NAV.parquet"));
    // Types follow dtypes exactly.
    let types: Vec<DataType> = schema
        .fields()
        .iter()
        .map(|f| f.data_type().clone())
        .collect();
    assert_eq!(types[0], DataType::UInt64);
    assert_eq!(types[1], DataType::Float32);
    assert_eq!(types[2], DataType::UInt8);
    assert_eq!(types[3], DataType::Boolean);
    assert_eq!(types[4], DataType::Utf8);
    match &types[5] {
        DataType::FixedSizeList(item, 3) => assert_eq!(item.data_type(), &DataType::Float64),
        other => panic!("pos is {other}"),
    }
    // Field metadata.
    let x = schema.field(1);
    assert_eq!(x.metadata()["unit"], "m");
    assert_eq!(x.metadata()["recfmt.dtype"], "f32");
    assert_eq!(x.metadata()["recfmt.source_id"], "7");
    assert_eq!(x.metadata()["recfmt.kept"], "yes");
    assert_eq!(schema.field(0).metadata()["unit"], "us");
    assert!(!schema.field(2).metadata().contains_key("unit"));
    assert_eq!(schema.field(5).metadata()["recfmt.shape"], "3");
    // Schema metadata.
    let meta = schema.metadata();
    assert_eq!(meta["recfmt.format"], "memory");
    assert_eq!(meta["recfmt.version"], "1.2");
    assert_eq!(meta["recfmt.stream"], "NAV");
    assert_eq!(meta["recfmt.time_column"], "t_us");
    assert_eq!(meta["recfmt.time_base"], "1/1000000");
    assert_eq!(meta["recfmt.time_system"], "UTC");
    assert!(
        meta["recfmt.epoch"].starts_with("2020-01-01T00:00:00"),
        "{}",
        meta["recfmt.epoch"]
    );
    assert_eq!(meta["source.generator"], "unit test");
    assert_eq!(meta["stream.rate"], "10 Hz");
    assert_eq!(meta["source.file"], "memory.bin");

    // Plain key/value metadata for readers that ignore the Arrow schema.
    let file = parquet::file::reader::SerializedFileReader::new(
        File::open(dir.path().join("NAV.parquet")).unwrap(),
    )
    .unwrap();
    let kv: BTreeMap<String, String> = parquet::file::reader::FileReader::metadata(&file)
        .file_metadata()
        .key_value_metadata()
        .unwrap()
        .iter()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    assert_eq!(kv["recfmt.stream"], "NAV");
    assert_eq!(kv["source.file"], "memory.bin");
    assert!(kv.contains_key("ARROW:schema"));

    // Float columns (x, pos) are written without a dictionary; integers and text of a table
    // this small keep theirs (Parquet never uses one for booleans).
    use parquet::basic::Type as Physical;
    let row_group = parquet::file::reader::FileReader::metadata(&file).row_group(0);
    let mut checked = 0;
    for column in row_group.columns() {
        let path = column.column_path().string();
        let dictionary = column.dictionary_page_offset().is_some();
        match column.column_type() {
            Physical::FLOAT | Physical::DOUBLE => assert!(!dictionary, "{path}"),
            Physical::BOOLEAN => continue,
            _ => assert!(dictionary, "{path}"),
        }
        checked += 1;
    }
    assert_eq!(checked, 5, "t_us, x, flags, name, pos");

    // Values: identical to what the batcher builds from the same rows.
    assert_eq!(batches.len(), 1);
    let got = &batches[0];
    let mut expected = StreamBatcher::new(&header(), &nav_stream(), 16);
    for row in nav_rows() {
        expected.push(&row).unwrap();
    }
    let expected = expected.finish_batch().unwrap();
    for i in 0..expected.num_columns() {
        assert_eq!(
            got.column(i).to_data(),
            expected.column(i).to_data(),
            "column {i}"
        );
    }
    let x = got.column(1).as_primitive::<Float32Type>();
    assert_eq!(x.value(0), 0.1f32);
    assert!(x.is_null(1));
    assert_eq!(x.value(2), f32::MAX);
    assert_eq!(got.column(0).as_primitive::<UInt64Type>().value(1), 100_000);
    assert_eq!(got.column(2).as_primitive::<UInt8Type>().value(1), 255);
    assert!(got.column(3).is_null(2));
    assert_eq!(got.column(4).as_string::<i32>().value(1), "b,c");
    let pos = got.column(5).as_fixed_size_list();
    assert!(pos.is_null(1));
    assert_eq!(
        pos.value(2).as_primitive::<Float64Type>().values().to_vec(),
        vec![0.1, 1e-10, 1e300]
    );

    // The second stream: variable lists, bytes and a 2x2 matrix.
    let (schema, batches, _) = read_parquet(&dir.path().join("vehicle_1.parquet"));
    assert_eq!(schema.metadata()["recfmt.stream"], "vehicle/1");
    assert_eq!(schema.field(3).metadata()["recfmt.shape"], "2x2");
    let got = &batches[0];
    assert_eq!(got.column(1).as_binary::<i32>().value(0), [0xde, 0xad]);
    let hist = got.column(2).as_list::<i32>();
    assert_eq!(
        hist.value(0).as_primitive::<Int16Type>().values().to_vec(),
        vec![1, -2, 3]
    );
    assert!(hist.is_null(1));
    assert_eq!(hist.value(2).len(), 0);
    assert!(!hist.is_null(2));
}

#[test]
fn every_compression_round_trips() {
    for compression in [
        ParquetCompression::Zstd,
        ParquetCompression::Snappy,
        ParquetCompression::None,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(TableFormat::Parquet);
        o.compression = compression;
        export_tables(&mut recording(), dir.path(), &o, &mut |_, _| {}).unwrap();
        let (_, batches, _) = read_parquet(&dir.path().join("NAV.parquet"));
        assert_eq!(batches.iter().map(RecordBatch::num_rows).sum::<usize>(), 3);
    }
}

/// Five NAV rows.
fn five_rows() -> Memory {
    let (schema, rows) = five_rows_parts();
    Memory::new(schema, rows)
}

/// The schema (NAV alone) and rows of [`five_rows`], to change before reading.
fn five_rows_parts() -> (Schema, Vec<FrameBuf>) {
    let (mut schema, _) = recording_parts();
    schema.streams.truncate(1);
    let rows = (0..5u64)
        .map(|i| {
            nav_row(
                i,
                f32v(i as f32 * 0.5),
                i,
                Value::Bool(i % 2 == 0),
                Value::Str(format!("r{i}")),
                Value::Array(ArrayValue::F64(vec![i as f64; 3])),
            )
        })
        .collect();
    (schema, rows)
}

#[test]
fn batch_boundaries_keep_all_rows() {
    for format in [
        TableFormat::Parquet,
        TableFormat::Csv,
        TableFormat::Arrow,
        TableFormat::Ndjson,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(format);
        o.batch_rows = 2;
        o.row_group_rows = 2;
        let report = export_tables(&mut five_rows(), dir.path(), &o, &mut |_, _| {}).unwrap();
        assert_eq!(report.outputs[0].rows, 5);
        let path = &report.outputs[0].path;
        match format {
            TableFormat::Parquet => {
                let (_, batches, row_groups) = read_parquet(path);
                assert_eq!(row_groups, 3);
                let t: Vec<u64> = batches
                    .iter()
                    .flat_map(|b| b.column(0).as_primitive::<UInt64Type>().values().to_vec())
                    .collect();
                assert_eq!(t, [0, 1, 2, 3, 4]);
            }
            TableFormat::Csv => {
                let text = std::fs::read_to_string(path).unwrap();
                let lines: Vec<&str> = text.lines().collect();
                assert_eq!(lines.len(), 6, "{text}");
                assert_eq!(lines[0], "t_us,x,mode,valid,name,pos[0],pos[1],pos[2]");
                assert_eq!(lines[5], "4,2.0,4,true,r4,4.0,4.0,4.0");
            }
            TableFormat::Arrow => {
                let file = std::fs::File::open(path).unwrap();
                let reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
                let schema = reader.schema();
                assert_eq!(
                    schema.field(1).data_type(),
                    &arrow_schema::DataType::Float32
                );
                assert_eq!(
                    schema.field(1).metadata().get("unit").map(String::as_str),
                    Some("m")
                );
                let t: Vec<u64> = reader
                    .map(|b| b.unwrap())
                    .flat_map(|b| b.column(0).as_primitive::<UInt64Type>().values().to_vec())
                    .collect();
                assert_eq!(t, [0, 1, 2, 3, 4]);
            }
            TableFormat::Ndjson => {
                let text = std::fs::read_to_string(path).unwrap();
                let rows: Vec<serde_json::Value> = text
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                assert_eq!(rows.len(), 5);
                assert_eq!(rows[4]["t_us"], 4);
                assert_eq!(rows[4]["x"], 2.0);
                assert_eq!(rows[4]["name"], "r4");
                assert_eq!(rows[4]["pos"], serde_json::json!([4.0, 4.0, 4.0]));
            }
        }
    }
}

#[test]
fn a_failing_reader_leaves_no_files() {
    for format in [TableFormat::Parquet, TableFormat::Csv] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let mut reader = recording();
        // Fail after both streams have written a full batch.
        reader.fail_after = Some(5);
        reader.watch = Some(out.clone());
        let mut o = options(format);
        o.batch_rows = 2;
        let err = export_tables(&mut reader, &out, &o, &mut |_, _| {}).unwrap_err();
        // While running, only temporary files existed (the writer threads may not have
        // opened every table yet when the reader fails).
        let ext = format.extension();
        // (`.<table>.<16 random letters and digits, from tempfile>.partial`), besides the run's lock file.
        let temporary = |name: &str| {
            [format!(".NAV.{ext}."), format!(".vehicle_1.{ext}.")]
                .iter()
                .any(|prefix| {
                    name.strip_prefix(prefix.as_str())
                        .and_then(|rest| rest.strip_suffix(".partial"))
                        .is_some_and(|r| {
                            r.len() == 16 && r.bytes().all(|b| b.is_ascii_alphanumeric())
                        })
                })
        };
        for name in &reader.seen {
            assert!(temporary(name) || name == ".recfmt.lock", "{name}");
        }
        assert!(matches!(err, Error::Read(_)), "{err}");
        assert!(err.to_string().contains("byte 1234"), "{err}");
        // The folder this run created goes again: the parent is as it was.
        assert!(!out.exists(), "{:?}", dir_names(&out));
    }
}

#[test]
fn a_value_out_of_range_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let (schema, mut rows) = five_rows_parts();
    rows[3].values[2] = Value::UInt(256);
    let mut reader = Memory::new(schema, rows);
    let mut o = options(TableFormat::Parquet);
    o.batch_rows = 2;
    let err = export_tables(&mut reader, dir.path(), &o, &mut |_, _| {}).unwrap_err();
    match &err {
        Error::Value {
            stream,
            signal,
            message,
        } => {
            assert_eq!(stream, "NAV");
            assert_eq!(signal, "mode");
            assert!(message.contains("256"), "{message}");
        }
        other => panic!("unexpected error {other}"),
    }
    assert!(dir_names(dir.path()).is_empty());
    let core: recfmt_core::Error = err.into();
    assert_eq!(core.kind(), recfmt_core::ErrorKind::Invalid);
}

#[test]
fn rows_of_unknown_streams_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let (schema, mut rows) = five_rows_parts();
    rows[1].stream = 9;
    let mut reader = Memory::new(schema, rows);
    let err = export_tables(
        &mut reader,
        dir.path(),
        &options(TableFormat::Csv),
        &mut |_, _| {},
    )
    .unwrap_err();
    assert!(matches!(err, Error::Invalid(_)), "{err}");
    assert!(dir_names(dir.path()).is_empty());
}

#[test]
fn zero_batch_rows_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(TableFormat::Csv);
    o.batch_rows = 0;
    assert!(matches!(
        export_tables(&mut five_rows(), dir.path(), &o, &mut |_, _| {}),
        Err(Error::Invalid(_))
    ));
}

#[test]
fn reader_errors_convert_back_unchanged() {
    let mut reader = recording();
    reader.fail_after = Some(0);
    let dir = tempfile::tempdir().unwrap();
    let err = export_tables(
        &mut reader,
        dir.path(),
        &options(TableFormat::Csv),
        &mut |_, _| {},
    )
    .unwrap_err();
    let core: recfmt_core::Error = err.into();
    assert_eq!(core.kind(), recfmt_core::ErrorKind::Malformed);
}

#[test]
fn parquet_output_is_reproducible() {
    let export = || {
        let dir = tempfile::tempdir().unwrap();
        export_tables(
            &mut recording(),
            dir.path(),
            &options(TableFormat::Parquet),
            &mut |_, _| {},
        )
        .unwrap();
        std::fs::read(dir.path().join("NAV.parquet")).unwrap()
    };
    assert_eq!(export(), export());
}

/// The workers write each table's batches in order, whichever worker takes a stream's next
/// burst: tiny batches of two streams give the same bytes as one batch per stream.
#[test]
fn csv_tables_from_many_small_batches_equal_one_batch() {
    let (mut schema, _) = recording_parts();
    schema.streams.truncate(2);
    let rows: Vec<FrameBuf> = (0..3000u64)
        .map(|i| {
            let mut row = nav_row(
                i,
                f32v(i as f32 * 0.25),
                i % 200,
                Value::Bool(i % 3 == 0),
                Value::Str(format!("row {i}, \"quoted\"")),
                Value::Array(ArrayValue::F64(vec![i as f64 / 7.0; 3])),
            );
            if i % 5 == 0 {
                // A row of the second stream now and then, so both tables are busy.
                row = FrameBuf {
                    stream: 1,
                    values: vehicle_rows()[0].values.clone(),
                };
            }
            row
        })
        .collect();
    let export = |batch_rows: usize| {
        let dir = tempfile::tempdir().unwrap();
        let mut reader = Memory::new(schema.clone(), rows.clone());
        let mut o = options(TableFormat::Csv);
        o.batch_rows = batch_rows;
        // Two writers whatever the machine: either may take either table's next batch.
        o.threads = 2;
        export_tables(&mut reader, dir.path(), &o, &mut |_, _| {}).unwrap();
        let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
        (read("NAV.csv"), read("vehicle_1.csv"))
    };
    let whole = export(100_000);
    assert_eq!(
        String::from_utf8_lossy(&whole.0).lines().count(),
        1 + 2400,
        "header and NAV rows"
    );
    // A race in taking batches showed in most runs of five attempts; twenty cost 0.3 s.
    for attempt in 0..20 {
        let small = export(7);
        assert!(small.0 == whole.0, "NAV.csv differs (attempt {attempt})");
        assert!(
            small.1 == whole.1,
            "vehicle_1.csv differs (attempt {attempt})"
        );
    }
}

/// Row groups are sized on their own, not at batches, and the footer declares float columns in
/// the order pyarrow writes (`TYPE_ORDER`), so engines that predate IEEE 754 total order use
/// their min/max.
#[test]
fn parquet_row_groups_span_batches_and_float_orders_are_type_defined() {
    use parquet::basic::{ColumnOrder, Type as Physical};
    use parquet::file::reader::FileReader;
    use parquet::file::statistics::Statistics;

    for (row_group_rows, groups) in [(ExportOptions::DEFAULT_ROW_GROUP_ROWS, 1), (3, 2)] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(TableFormat::Parquet);
        o.batch_rows = 2;
        o.row_group_rows = row_group_rows;
        let report = export_tables(&mut five_rows(), dir.path(), &o, &mut |_, _| {}).unwrap();
        let file = parquet::file::serialized_reader::SerializedFileReader::new(
            File::open(&report.outputs[0].path).unwrap(),
        )
        .unwrap();
        let metadata = file.metadata();
        assert_eq!(metadata.num_row_groups(), groups);
        let orders = metadata.file_metadata().column_orders().unwrap();
        let mut floats = 0;
        for (i, column) in metadata.row_group(0).columns().iter().enumerate() {
            assert!(
                matches!(orders[i], ColumnOrder::TYPE_DEFINED_ORDER(_)),
                "{:?}",
                orders[i]
            );
            let bounds = match column.statistics() {
                Some(Statistics::Double(s)) => s.min_opt().is_some() && s.max_opt().is_some(),
                Some(Statistics::Float(s)) => s.min_opt().is_some() && s.max_opt().is_some(),
                _ => continue,
            };
            assert!(matches!(
                column.column_type(),
                Physical::FLOAT | Physical::DOUBLE
            ));
            assert!(bounds, "{}", column.column_path());
            floats += 1;
        }
        assert_eq!(floats, 2, "x and pos");
    }
}
