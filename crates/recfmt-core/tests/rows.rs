//! A reader that implements only `read_row` gets `read_frame` and `read_batches` from it, and
//! the two views hold the same values (property-tested over random schemas, rows, batch sizes
//! and column selections); values of the wrong type are errors, and a refused row leaves the
//! batch as it was.

use proptest::prelude::*;
use recfmt_core::{
    ArrayValue, BatchSet, DType, Error, ErrorKind, FormatInfo, FrameBuf, Header, Integrity,
    RecordingReader, Result, RowWriter, Schema, Shape, SignalDesc, StreamDesc, TimeBase, Value,
};

static INFO: FormatInfo = FormatInfo {
    id: "cells",
    name: "Cells (test format)",
    extensions: &[],
};

/// One decoded value, as a reader of a typed format holds it.
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    F64(f64),
    F32(f32),
    U32(u32),
    I16(i16),
    Bool(bool),
    Text(String),
    F32s(Vec<f32>),
    Null,
}

impl Cell {
    fn write(&self, row: &mut RowWriter<'_>) -> Result<()> {
        match self {
            Cell::F64(v) => row.push(*v),
            Cell::F32(v) => row.push(*v),
            Cell::U32(v) => row.push(*v),
            Cell::I16(v) => row.push(*v),
            Cell::Bool(v) => row.push(*v),
            Cell::Text(t) => row.push_str(t),
            Cell::F32s(v) => row.push_slice(v),
            Cell::Null => row.push_null(),
        }
    }

    /// What the row path gives for this cell.
    fn value(&self) -> Value {
        match self {
            Cell::F64(v) => Value::Float(*v),
            Cell::F32(v) => Value::Float(f64::from(*v)),
            Cell::U32(v) => Value::UInt(u64::from(*v)),
            Cell::I16(v) => Value::Int(i64::from(*v)),
            Cell::Bool(v) => Value::Bool(*v),
            Cell::Text(t) => Value::Str(t.clone()),
            Cell::F32s(v) => Value::Array(ArrayValue::F32(v.clone())),
            Cell::Null => Value::Null,
        }
    }
}

/// A reader of rows held in memory, written only against `read_row`.
struct CellReader {
    header: Header,
    schema: Schema,
    integrity: Integrity,
    rows: Vec<(usize, Vec<Cell>)>,
    next: usize,
}

impl CellReader {
    fn new(schema: Schema, rows: Vec<(usize, Vec<Cell>)>) -> Self {
        CellReader {
            header: Header::default(),
            schema,
            integrity: Integrity::default(),
            rows,
            next: 0,
        }
    }
}

impl RecordingReader for CellReader {
    fn format(&self) -> &'static FormatInfo {
        &INFO
    }
    fn header(&self) -> &Header {
        &self.header
    }
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn integrity(&self) -> &Integrity {
        &self.integrity
    }
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        let Some((stream, cells)) = self.rows.get(self.next) else {
            return Ok(false);
        };
        self.next += 1;
        if row.begin(*stream)? {
            for cell in cells {
                cell.write(row)?;
            }
            row.finish()?;
        }
        Ok(true)
    }
}

/// The kinds of signal a stream may have, each with a cell generator.
#[derive(Debug, Clone, Copy)]
enum Kind {
    F64,
    F32,
    U32,
    I16,
    Bool,
    Text,
    F32x3,
    F32List,
}

impl Kind {
    fn signal(self, name: String) -> SignalDesc {
        match self {
            Kind::F64 => SignalDesc::scalar(name, DType::F64),
            Kind::F32 => SignalDesc::scalar(name, DType::F32),
            Kind::U32 => SignalDesc::scalar(name, DType::U32),
            Kind::I16 => SignalDesc::scalar(name, DType::I16),
            Kind::Bool => SignalDesc::scalar(name, DType::Bool),
            Kind::Text => SignalDesc::scalar(name, DType::Str),
            Kind::F32x3 => {
                let mut s = SignalDesc::scalar(name, DType::F32);
                s.shape = Shape::Fixed(vec![3]);
                s
            }
            Kind::F32List => {
                let mut s = SignalDesc::scalar(name, DType::F32);
                s.shape = Shape::Variable;
                s
            }
        }
    }

    fn cell(self) -> BoxedStrategy<Cell> {
        let value = match self {
            Kind::F64 => any::<f64>().prop_map(Cell::F64).boxed(),
            Kind::F32 => any::<f32>().prop_map(Cell::F32).boxed(),
            Kind::U32 => any::<u32>().prop_map(Cell::U32).boxed(),
            Kind::I16 => any::<i16>().prop_map(Cell::I16).boxed(),
            Kind::Bool => any::<bool>().prop_map(Cell::Bool).boxed(),
            Kind::Text => "[a-z]{0,6}".prop_map(Cell::Text).boxed(),
            Kind::F32x3 => proptest::collection::vec(any::<f32>(), 3)
                .prop_map(Cell::F32s)
                .boxed(),
            Kind::F32List => proptest::collection::vec(any::<f32>(), 0..5)
                .prop_map(Cell::F32s)
                .boxed(),
        };
        prop_oneof![9 => value, 1 => Just(Cell::Null)].boxed()
    }
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::F64),
        Just(Kind::F32),
        Just(Kind::U32),
        Just(Kind::I16),
        Just(Kind::Bool),
        Just(Kind::Text),
        Just(Kind::F32x3),
        Just(Kind::F32List),
    ]
}

/// A schema of 1-3 streams (time column `t`, f64, never null) and rows for it.
fn recording() -> impl Strategy<Value = (Schema, Vec<(usize, Vec<Cell>)>)> {
    proptest::collection::vec(proptest::collection::vec(kind(), 0..5), 1..4).prop_flat_map(
        |streams| {
            let schema = Schema {
                streams: streams
                    .iter()
                    .enumerate()
                    .map(|(i, kinds)| {
                        let mut desc = StreamDesc::new(
                            format!("s{i}"),
                            SignalDesc::scalar("t", DType::F64),
                            TimeBase::SECONDS,
                        );
                        for (j, k) in kinds.iter().enumerate() {
                            desc.signals.push(k.signal(format!("v{j}")));
                        }
                        desc
                    })
                    .collect(),
            };
            let row = (0..streams.len()).prop_flat_map(move |stream| {
                let cells: Vec<BoxedStrategy<Cell>> =
                    std::iter::once((0.0f64..1e6).prop_map(Cell::F64).boxed())
                        .chain(streams[stream].iter().map(|k| k.cell()))
                        .collect();
                (Just(stream), cells)
            });
            (Just(schema), proptest::collection::vec(row, 0..60))
        },
    )
}

/// Values compared with NaN equal to NaN (a NaN read back is the same value).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Value::Array(ArrayValue::F32(x)), Value::Array(ArrayValue::F32(y))) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(p, q)| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()))
        }
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Both views of one `read_row` hold the same rows, whatever the batch size and the
    /// streams and columns asked for; skipped columns stay empty.
    #[test]
    fn frames_and_batches_are_two_views_of_one_decode(
        (schema, rows) in recording(),
        capacity in 1usize..20,
        wanted_mask in any::<u8>(),
        column_mask in any::<u16>(),
    ) {
        let mut frames = Vec::new();
        let mut reader = CellReader::new(schema.clone(), rows.clone());
        let mut frame = FrameBuf::default();
        while reader.read_frame(&mut frame).unwrap() {
            frames.push(frame.clone());
        }
        prop_assert_eq!(frames.len(), rows.len());
        for (frame, (stream, cells)) in frames.iter().zip(&rows) {
            prop_assert_eq!(frame.stream, *stream);
            let expected: Vec<Value> = cells.iter().map(Cell::value).collect();
            prop_assert!(frame.values.iter().zip(&expected).all(|(a, b)| same(a, b)));
            prop_assert_eq!(frame.values.len(), expected.len());
        }

        let wanted = |s: usize| wanted_mask & (1 << s) != 0;
        let kept = |_: usize, signal: usize| signal == 0 || column_mask & (1 << signal) != 0;
        let mut reader = CellReader::new(schema.clone(), rows.clone());
        let mut set = BatchSet::with_columns(&schema, capacity, wanted, kept);
        let mut got: Vec<Vec<(usize, Vec<Value>)>> = vec![Vec::new(); schema.streams.len()];
        loop {
            let more = reader.read_batches(&mut set).unwrap();
            for batch in set.take_ready(more) {
                prop_assert!(batch.rows() <= capacity);
                batch.check_consistent().unwrap();
                for (signal, column) in batch.columns().iter().enumerate() {
                    if !kept(batch.stream(), signal) {
                        prop_assert!(column.data().is_empty());
                    }
                }
                for r in 0..batch.rows() {
                    got[batch.stream()].push((batch.stream(), batch.row_values(r)));
                }
            }
            if !more {
                break;
            }
        }
        for (stream, rows_of_stream) in got.iter().enumerate() {
            let expected: Vec<&Vec<Cell>> = rows
                .iter()
                .filter(|(s, _)| *s == stream && wanted(stream))
                .map(|(_, c)| c)
                .collect();
            prop_assert_eq!(rows_of_stream.len(), expected.len());
            for ((_, values), cells) in rows_of_stream.iter().zip(expected) {
                for (signal, (value, cell)) in values.iter().zip(cells).enumerate() {
                    if kept(stream, signal) {
                        prop_assert!(same(value, &cell.value()), "{value:?} != {cell:?}");
                    }
                }
            }
        }
    }
}

fn one_stream(signals: Vec<SignalDesc>) -> Schema {
    let mut desc = StreamDesc::new(
        "pings",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    desc.signals.extend(signals);
    Schema {
        streams: vec![desc],
    }
}

#[test]
fn a_value_of_the_wrong_type_is_an_error_naming_the_signal_and_the_batch_keeps_whole_rows() {
    let schema = one_stream(vec![SignalDesc::scalar("beacon", DType::U32)]);
    let rows = vec![
        (0, vec![Cell::F64(0.0), Cell::U32(7)]),
        (0, vec![Cell::F64(1.0), Cell::F64(7.5)]),
    ];
    let mut reader = CellReader::new(schema.clone(), rows);
    let mut set = BatchSet::new(&schema, 10);
    let err: Error = reader.read_batches(&mut set).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    let text = err.to_string();
    assert!(
        text.contains("\"pings\"") && text.contains("\"beacon\""),
        "{text}"
    );
    assert!(text.contains("7.5"), "{text}");
    let batch = set.take(0);
    assert_eq!(batch.rows(), 1);
    batch.check_consistent().unwrap();
    assert_eq!(batch.row_values(0), vec![Value::Float(0.0), Value::UInt(7)]);
}

#[test]
fn integers_convert_exactly_or_are_refused() {
    let schema = one_stream(vec![
        SignalDesc::scalar("wide", DType::I64),
        SignalDesc::scalar("narrow", DType::U8),
    ]);
    let ok = vec![(0, vec![Cell::F64(0.0), Cell::U32(70_000), Cell::I16(200)])];
    let mut reader = CellReader::new(schema.clone(), ok);
    let mut set = BatchSet::new(&schema, 10);
    assert!(!reader.read_batches(&mut set).unwrap());
    assert_eq!(
        set.take(0).row_values(0),
        vec![Value::Float(0.0), Value::Int(70_000), Value::UInt(200)]
    );

    let too_big = vec![(0, vec![Cell::F64(0.0), Cell::U32(1), Cell::I16(300)])];
    let mut reader = CellReader::new(schema.clone(), too_big);
    let err = reader.read_batches(&mut set).unwrap_err();
    assert!(err.to_string().contains("300 does not fit in u8"), "{err}");
    assert_eq!(set.stream(0).rows(), 0);
}

#[test]
fn a_row_with_too_few_or_too_many_values_is_an_error() {
    let schema = one_stream(vec![SignalDesc::scalar("x", DType::F32)]);
    for cells in [
        vec![Cell::F64(0.0)],
        vec![Cell::F64(0.0), Cell::F32(1.0), Cell::F32(2.0)],
    ] {
        let mut reader = CellReader::new(schema.clone(), vec![(0, cells)]);
        let mut set = BatchSet::new(&schema, 10);
        let err = reader.read_batches(&mut set).unwrap_err();
        assert!(err.to_string().contains("pings"), "{err}");
        assert_eq!(set.stream(0).rows(), 0);
    }
}

#[test]
fn a_row_of_a_stream_the_schema_lacks_is_an_error() {
    let schema = one_stream(vec![]);
    let mut reader = CellReader::new(schema.clone(), vec![(3, vec![Cell::F64(0.0)])]);
    let mut set = BatchSet::new(&schema, 10);
    let err = reader.read_batches(&mut set).unwrap_err();
    assert!(err.to_string().contains("stream 3"), "{err}");
}

/// A reader that implements neither `read_row` nor `read_frame`.
struct Neither(Header, Schema, Integrity);

impl RecordingReader for Neither {
    fn format(&self) -> &'static FormatInfo {
        &INFO
    }
    fn header(&self) -> &Header {
        &self.0
    }
    fn schema(&self) -> &Schema {
        &self.1
    }
    fn integrity(&self) -> &Integrity {
        &self.2
    }
}

#[test]
fn a_reader_that_implements_neither_read_method_fails_instead_of_looping() {
    let mut reader = Neither(Header::default(), one_stream(vec![]), Integrity::default());
    let err = reader.read_frame(&mut FrameBuf::default()).unwrap_err();
    assert!(
        err.to_string().contains("neither read_row nor read_frame"),
        "{err}"
    );
    let schema = reader.schema().clone();
    let err = reader
        .read_batches(&mut BatchSet::new(&schema, 4))
        .unwrap_err();
    assert!(
        err.to_string().contains("neither read_row nor read_frame"),
        "{err}"
    );
}

/// A reader written the old way (only `read_frame`) still reads through `read_row` and
/// `read_batches`.
struct FramesOnly(CellReader);

impl RecordingReader for FramesOnly {
    fn format(&self) -> &'static FormatInfo {
        &INFO
    }
    fn header(&self) -> &Header {
        self.0.header()
    }
    fn schema(&self) -> &Schema {
        self.0.schema()
    }
    fn integrity(&self) -> &Integrity {
        self.0.integrity()
    }
    fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        self.0.read_frame(dst)
    }
}

#[test]
fn a_reader_of_frames_gets_batches_through_the_row_writer() {
    let schema = one_stream(vec![SignalDesc::scalar("x", DType::F32)]);
    let rows: Vec<_> = (0..25)
        .map(|i| (0, vec![Cell::F64(f64::from(i)), Cell::F32(i as f32 / 2.0)]))
        .collect();
    let mut reader = FramesOnly(CellReader::new(schema.clone(), rows));
    let mut set = BatchSet::new(&schema, 10);
    let mut total = 0;
    loop {
        let more = reader.read_batches(&mut set).unwrap();
        for batch in set.take_ready(more) {
            assert!(batch.rows() <= 10);
            total += batch.rows();
        }
        if !more {
            break;
        }
    }
    assert_eq!(total, 25);
}

#[test]
fn a_reader_may_skip_the_values_a_projection_left_out_but_not_the_wanted_ones() {
    let schema = one_stream(vec![
        SignalDesc::scalar("beacon", DType::U32),
        SignalDesc::scalar("rssi", DType::F32),
    ]);
    // Only the time and rssi kept: the reader skips beacon without decoding it.
    let mut set = BatchSet::with_columns(&schema, 10, |_| true, |_, column| column != 1);
    {
        let mut row = RowWriter::batches(&mut set);
        for i in 0..3u32 {
            assert!(row.begin(0).unwrap());
            assert!(row.wants_next());
            row.push(f64::from(i)).unwrap();
            assert!(!row.wants_next(), "beacon was left out");
            row.skip().unwrap();
            assert!(row.wants_next());
            let err = row.skip().unwrap_err();
            assert!(
                err.to_string().contains("skipped a value that is wanted"),
                "{err}"
            );
            row.push(-60.0f32 - i as f32).unwrap();
            row.finish().unwrap();
        }
    }
    let batch = set.take(0);
    batch.check_consistent().unwrap();
    assert_eq!(batch.rows(), 3);
    assert_eq!(batch.row_values(2)[2], Value::Float(-62.0));
    // On the row path every value is wanted.
    let mut frame = FrameBuf::default();
    let mut row = RowWriter::frame(&mut frame);
    assert!(row.begin(0).unwrap());
    row.push(0.0f64).unwrap();
    assert!(row.wants_next());
    assert!(row.skip().is_err());
}

/// Rows written in runs (`begin_rows`, `push_column` and `push_array_column`), as a reader of
/// fixed-size records does: 1,000 pings in runs of up to 37, one column converted (`u32` into
/// a `u64` column), an array column of its own type and one converted (`u8` into `u32`).
struct RunReader(Header, Schema, Integrity, u32);

impl RecordingReader for RunReader {
    fn format(&self) -> &'static FormatInfo {
        &INFO
    }
    fn header(&self) -> &Header {
        &self.0
    }
    fn schema(&self) -> &Schema {
        &self.1
    }
    fn integrity(&self) -> &Integrity {
        &self.2
    }
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        let next = self.3;
        if next == 1000 {
            return Ok(false);
        }
        let run = (1000 - next).min(37) as usize;
        let rows = row.begin_rows(0, run)?;
        if rows == 0 {
            self.3 += run as u32; // not wanted
            return Ok(true);
        }
        let ids = next..next + rows as u32;
        row.push_column(ids.clone().map(|i| f64::from(i) * 0.5))?;
        row.push_column(ids.clone())?;
        if row.wants_next() {
            row.push_column(ids.clone().map(|i| i as f32))?;
        } else {
            row.skip()?;
        }
        if row.wants_next() {
            row.push_array_column(ids.clone().flat_map(|i| [i as u16, 1, 2]), 3)?;
        } else {
            row.skip()?;
        }
        row.push_array_column(ids.flat_map(|i| [(i % 256) as u8, 7]), 2)?;
        row.finish()?;
        self.3 += rows as u32;
        Ok(true)
    }
}

#[test]
fn rows_in_runs_read_as_rows_one_by_one() {
    let array = |name: &str, dtype, n| SignalDesc {
        shape: Shape::Fixed(vec![n]),
        ..SignalDesc::scalar(name, dtype)
    };
    let schema = one_stream(vec![
        SignalDesc::scalar("beacon", DType::U64),
        SignalDesc::scalar("rssi", DType::F32),
        array("cells", DType::U16, 3),
        array("pair", DType::U32, 2),
    ]);
    let reader = || RunReader(Header::default(), schema.clone(), Integrity::default(), 0);
    let mut frames = Vec::new();
    let mut r = reader();
    let mut frame = FrameBuf::default();
    while r.read_frame(&mut frame).unwrap() {
        frames.push(frame.values.clone());
    }
    assert_eq!(frames.len(), 1000);
    assert_eq!(
        frames[999],
        vec![
            Value::Float(499.5),
            Value::UInt(999),
            Value::Float(999.0),
            Value::Array(ArrayValue::UInt(vec![999, 1, 2])),
            Value::Array(ArrayValue::UInt(vec![999 % 256, 7])),
        ]
    );
    for capacity in [1, 100, 4096] {
        let mut r = reader();
        let mut set = BatchSet::new(&schema, capacity);
        let mut rows = Vec::new();
        loop {
            let more = r.read_batches(&mut set).unwrap();
            for batch in set.take_ready(more) {
                batch.check_consistent().unwrap();
                assert!(batch.rows() <= capacity);
                rows.extend((0..batch.rows()).map(|i| batch.row_values(i)));
            }
            if !more {
                break;
            }
        }
        assert_eq!(rows, frames, "capacity {capacity}");
    }
}

#[test]
fn a_times_only_projection_skips_the_rest_of_a_row_and_a_run_of_rows_stops_at_a_full_batch() {
    let schema = one_stream(vec![
        SignalDesc::scalar("beacon", DType::U32),
        SignalDesc::scalar("rssi", DType::F32),
    ]);
    let mut set = BatchSet::with_columns(&schema, 2, |_| true, |_, column| column == 0);
    {
        let mut row = RowWriter::batches(&mut set);
        assert!(!row.skip_rest(), "no row begun");
        for i in 0..2u32 {
            assert!(row.has_room());
            assert!(row.begin(0).unwrap());
            assert!(!row.skip_rest(), "the time is wanted");
            row.push(f64::from(i)).unwrap();
            assert!(row.skip_rest(), "beacon and rssi were left out");
            row.finish().unwrap();
        }
        assert!(!row.has_room(), "the batch of 2 rows is full");
    }
    let batch = set.take(0);
    batch.check_consistent().unwrap();
    assert_eq!(batch.rows(), 2);
    // The row path takes one row per call, and every value is wanted.
    let mut frame = FrameBuf::default();
    let mut row = RowWriter::frame(&mut frame);
    assert!(!row.has_room());
    assert!(row.begin(0).unwrap());
    row.push(0.0f64).unwrap();
    assert!(!row.skip_rest());
}

/// The byte bound ends a batch at the same row whether the stream's columns have a fixed
/// width (the writer then measures the bytes only when the bound is near) or not.
#[test]
fn a_batch_ends_at_the_byte_bound_with_fixed_and_variable_width_columns() {
    for variable in [false, true] {
        let mut signals = vec![SignalDesc::scalar("rssi", DType::F32)];
        if variable {
            signals.push(SignalDesc::scalar("label", DType::Str));
        }
        let schema = one_stream(signals);
        let mut set = BatchSet::new(&schema, usize::MAX / 2);
        let mut row = RowWriter::batches(&mut set);
        let mut written = 0usize;
        // 12 bytes a row (plus 4 of text and its 4-byte offset): the bound is met at the row
        // that reaches it.
        let per_row = if variable { 20 } else { 12 };
        let expected = BatchSet::MAX_BATCH_BYTES.div_ceil(per_row);
        while row.has_room() {
            assert!(row.begin(0).unwrap());
            row.push(written as f64).unwrap();
            row.push(-60.0f32).unwrap();
            if variable {
                row.push_str("abcd").unwrap();
            }
            row.finish().unwrap();
            written += 1;
            assert!(
                written <= expected,
                "the batch was not ended at {expected} rows"
            );
        }
        drop(row);
        assert_eq!(written, expected, "variable width: {variable}");
        assert!(set.stream(0).byte_len() >= BatchSet::MAX_BATCH_BYTES);
    }
}

#[test]
fn a_reader_may_skip_the_rest_of_a_row_when_nothing_after_is_kept() {
    let schema = one_stream(vec![
        SignalDesc::scalar("beacon", DType::U32),
        SignalDesc::scalar("rssi", DType::F32),
    ]);
    // Only the time kept (as `validate` asks): one skip_rest after it.
    let mut set = BatchSet::with_columns(&schema, 10, |_| true, |_, column| column == 0);
    {
        let mut row = RowWriter::batches(&mut set);
        assert!(row.begin(0).unwrap());
        assert!(row.wants_rest());
        assert!(!row.skip_rest(), "the time is kept");
        row.push(1.5f64).unwrap();
        assert!(!row.wants_rest());
        assert!(row.skip_rest());
        row.finish().unwrap();
    }
    let batch = set.take(0);
    batch.check_consistent().unwrap();
    assert_eq!(batch.rows(), 1);
    assert_eq!(batch.row_values(0)[0], Value::Float(1.5));
    // On the row path every value is wanted.
    let mut frame = FrameBuf::default();
    let mut row = RowWriter::frame(&mut frame);
    assert!(row.begin(0).unwrap());
    row.push(0.0f64).unwrap();
    assert!(row.wants_rest());
    assert!(!row.skip_rest());
}
