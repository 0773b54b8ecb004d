//! The CSV writer against `arrow-csv`: for random batches of every column type the export
//! produces, the bytes of `CsvSink` are the bytes `arrow_csv::Writer` writes for the same
//! flattened batch, header and units rows included.
//!
//! `csv.rs` is a private module of the crate, so it is compiled into this test as well, with
//! the few crate items it uses provided here.

#![cfg(feature = "csv")]
#![allow(clippy::unwrap_used, missing_docs, dead_code)]

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, FixedSizeListBuilder, ListBuilder, StringBuilder,
};
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, FixedSizeListArray, Float32Array,
    Float64Array, Int8Array, Int16Array, Int32Array, Int64Array, LargeStringArray, ListArray,
    RecordBatch, RecordBatchOptions, StringArray, UInt8Array, UInt16Array, UInt32Array,
    UInt64Array,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Schema};
use proptest::prelude::*;

pub(crate) use recfmt_export::{CsvOptions, UNIT_KEY};

mod mapping {
    pub(crate) use recfmt_export::SHAPE_KEY;

    /// As the crate's own: the dimensions of a `recfmt.shape` value.
    pub(crate) fn parse_shape(text: &str) -> Option<Vec<u32>> {
        text.split('x').map(|d| d.trim().parse().ok()).collect()
    }
}

#[path = "../src/csv.rs"]
mod csv;
#[path = "../src/csv_cell.rs"]
mod csv_cell;

/// What `arrow-csv` writes for `batches` of `schema`: the header (and units) rows as text
/// cells, then each batch flattened, all through one writer as the sink did before.
fn reference(schema: &Schema, batches: &[RecordBatch], options: &CsvOptions) -> Vec<u8> {
    let layout = csv::CsvLayout::new(schema);
    let mut writer = arrow_csv::WriterBuilder::new()
        .with_header(false)
        .with_delimiter(options.delimiter)
        .build(Vec::new());
    let mut rows = vec![layout.header()];
    if options.units_row {
        rows.push(layout.units());
    }
    let width = layout.header().len();
    let fields: Vec<Field> = (0..width)
        .map(|i| Field::new(format!("c{i}"), DataType::Utf8, false))
        .collect();
    let columns: Vec<ArrayRef> = (0..width)
        .map(|i| {
            let cells: StringArray = rows.iter().map(|row| Some(row[i].as_str())).collect();
            Arc::new(cells) as ArrayRef
        })
        .collect();
    let text = RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(rows.len())),
    )
    .unwrap();
    writer.write(&text).unwrap();
    for batch in batches {
        writer.write(&layout.flatten(batch).unwrap()).unwrap();
    }
    writer.into_inner()
}

/// What `CsvSink` writes for the same.
fn sink(schema: &Schema, batches: &[RecordBatch], options: &CsvOptions) -> Vec<u8> {
    let mut sink = csv::CsvSink::new(Vec::new(), schema, options).unwrap();
    for batch in batches {
        let scalar = |t: &DataType| !matches!(t, DataType::Date32 | DataType::LargeUtf8);
        // Everything but the odd types of `other_types_go_through_arrow_csv` is formatted by
        // the sink itself, not handed to arrow-csv.
        if batch
            .schema()
            .fields()
            .iter()
            .all(|f| scalar(f.data_type()))
        {
            assert!(sink.formats_itself(batch), "{:?}", batch.schema());
        }
        sink.write(batch).unwrap();
    }
    sink.into_inner()
}

fn assert_same(schema: &Schema, batches: &[RecordBatch], options: &CsvOptions) {
    let want = reference(schema, batches, options);
    let got = sink(schema, batches, options);
    if want != got {
        panic!(
            "CSV differs from arrow-csv\n--- arrow-csv\n{}\n--- CsvSink\n{}",
            String::from_utf8_lossy(&want),
            String::from_utf8_lossy(&got)
        );
    }
}

#[derive(Debug, Clone, Copy)]
enum Scalar {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F32,
    F64,
    Bool,
    Utf8,
    Binary,
}

impl Scalar {
    fn data_type(self) -> DataType {
        match self {
            Scalar::I8 => DataType::Int8,
            Scalar::I16 => DataType::Int16,
            Scalar::I32 => DataType::Int32,
            Scalar::I64 => DataType::Int64,
            Scalar::U8 => DataType::UInt8,
            Scalar::U16 => DataType::UInt16,
            Scalar::U32 => DataType::UInt32,
            Scalar::U64 => DataType::UInt64,
            Scalar::F32 => DataType::Float32,
            Scalar::F64 => DataType::Float64,
            Scalar::Bool => DataType::Boolean,
            Scalar::Utf8 => DataType::Utf8,
            Scalar::Binary => DataType::Binary,
        }
    }

    /// A plain array of `raws`, null where a raw says so and `nulls` allows.
    fn array(self, raws: &[Raw], nulls: bool) -> ArrayRef {
        let valid = |r: &Raw| !(nulls && r.null);
        macro_rules! ints {
            ($array:ty, $t:ty) => {
                Arc::new(
                    raws.iter()
                        .map(|r| valid(r).then_some(r.word as $t))
                        .collect::<$array>(),
                ) as ArrayRef
            };
        }
        match self {
            Scalar::I8 => ints!(Int8Array, i8),
            Scalar::I16 => ints!(Int16Array, i16),
            Scalar::I32 => ints!(Int32Array, i32),
            Scalar::I64 => ints!(Int64Array, i64),
            Scalar::U8 => ints!(UInt8Array, u8),
            Scalar::U16 => ints!(UInt16Array, u16),
            Scalar::U32 => ints!(UInt32Array, u32),
            Scalar::U64 => ints!(UInt64Array, u64),
            Scalar::F32 => Arc::new(
                raws.iter()
                    .map(|r| valid(r).then(|| r.f32()))
                    .collect::<Float32Array>(),
            ),
            Scalar::F64 => Arc::new(
                raws.iter()
                    .map(|r| valid(r).then_some(r.float))
                    .collect::<Float64Array>(),
            ),
            Scalar::Bool => Arc::new(
                raws.iter()
                    .map(|r| valid(r).then_some(r.word & 1 == 1))
                    .collect::<BooleanArray>(),
            ),
            Scalar::Utf8 => Arc::new(
                raws.iter()
                    .map(|r| valid(r).then_some(r.text.as_str()))
                    .collect::<StringArray>(),
            ),
            Scalar::Binary => Arc::new(
                raws.iter()
                    .map(|r| valid(r).then_some(r.bytes.as_slice()))
                    .collect::<BinaryArray>(),
            ),
        }
    }
}

/// The material of one value: each column type takes the part it needs.
#[derive(Debug, Clone)]
struct Raw {
    word: u64,
    float: f64,
    text: String,
    bytes: Vec<u8>,
    null: bool,
}

impl Raw {
    fn f32(&self) -> f32 {
        if self.word & 2 == 2 {
            f32::from_bits((self.word >> 32) as u32)
        } else {
            self.float as f32
        }
    }
}

const FLOATS: &[f64] = &[
    0.0,
    -0.0,
    0.1,
    -0.1,
    1.0,
    -1.0,
    0.5,
    1.5,
    100.0,
    1e7,
    1e15,
    1e16,
    1e17,
    1e20,
    1e21,
    1e22,
    1e-4,
    1e-5,
    1e-7,
    1e-20,
    123456789.0,
    0.30000000000000004,
    f64::NAN,
    -f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    f64::EPSILON,
    5e-324,
    -5e-324,
    f64::from_bits(0x000f_ffff_ffff_ffff),
    f32::MAX as f64,
    f32::MIN_POSITIVE as f64,
    1.401298464324817e-45,
    3.4028234663852886e38,
    16777216.0,
    9007199254740993.0,
];

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(FLOATS),
        any::<u64>().prop_map(f64::from_bits),
        any::<f64>(),
        -1e6..1e6f64,
        any::<i32>().prop_map(f64::from),
        (any::<i16>(), -30..30i32).prop_map(|(m, e)| f64::from(m) * 10f64.powi(e)),
    ]
}

fn text() -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec![
        'a', 'b', 'Z', ' ', ',', ';', '"', '\'', '\n', '\r', '\t', '|', '1', 'e', '-', '.', '\\',
        'é', '∞', '\u{0}', '\u{1f}',
    ]);
    prop_oneof![
        Just(String::new()),
        Just(" ".to_owned()),
        Just("\"".to_owned()),
        prop::collection::vec(chars, 0..8).prop_map(|c| c.into_iter().collect()),
    ]
}

fn raw() -> impl Strategy<Value = Raw> {
    (
        prop_oneof![
            any::<u64>(),
            Just(0u64),
            Just(u64::MAX),
            Just(1u64 << 63),
            Just(0x7fff_ffff_ffff_ffff),
            (0..300u64),
        ],
        float(),
        text(),
        prop::collection::vec(any::<u8>(), 0..5),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(word, float, text, bytes, null)| Raw {
            word,
            float,
            text,
            bytes,
            null,
        })
}

#[derive(Debug, Clone)]
enum Kind {
    Plain(Scalar),
    /// Fixed-size lists of `size` elements, with a `recfmt.shape` when given.
    Fixed(Scalar, usize, Option<&'static str>),
    List(Scalar),
}

#[derive(Debug, Clone)]
struct ColumnSpec {
    kind: Kind,
    name: String,
    unit: Option<String>,
    nullable: bool,
}

fn scalar() -> impl Strategy<Value = Scalar> {
    prop::sample::select(vec![
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::F32,
        Scalar::F64,
        Scalar::Bool,
        Scalar::Utf8,
        Scalar::Binary,
    ])
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => scalar().prop_map(Kind::Plain),
        2 => (scalar(), 0..4usize).prop_map(|(s, n)| Kind::Fixed(s, n, None)),
        1 => scalar().prop_map(|s| Kind::Fixed(s, 4, Some("2x2"))),
        1 => scalar().prop_map(|s| Kind::Fixed(s, 2, Some("1x2"))),
        2 => scalar().prop_map(Kind::List),
    ]
}

fn column_spec() -> impl Strategy<Value = ColumnSpec> {
    (
        kind(),
        prop_oneof![3 => "[a-z]{1,6}", 1 => text()],
        prop::option::of(text()),
        any::<bool>(),
    )
        .prop_map(|(kind, name, unit, nullable)| ColumnSpec {
            kind,
            name,
            unit,
            nullable,
        })
}

impl ColumnSpec {
    fn field(&self) -> Field {
        let mut meta = HashMap::new();
        if let Some(unit) = &self.unit {
            meta.insert(UNIT_KEY.to_owned(), unit.clone());
        }
        let data_type = match &self.kind {
            Kind::Plain(s) => s.data_type(),
            Kind::Fixed(s, n, shape) => {
                if let Some(shape) = shape {
                    meta.insert(mapping::SHAPE_KEY.to_owned(), (*shape).to_owned());
                }
                DataType::FixedSizeList(
                    Arc::new(Field::new_list_field(s.data_type(), true)),
                    *n as i32,
                )
            }
            Kind::List(s) => DataType::List(Arc::new(Field::new_list_field(s.data_type(), true))),
        };
        Field::new(&self.name, data_type, self.nullable).with_metadata(meta)
    }

    /// A column of `rows` rows from `raws` (at least `4 * rows` of them).
    fn array(&self, rows: usize, raws: &[Raw]) -> ArrayRef {
        let row_nulls = || {
            self.nullable.then(|| {
                NullBuffer::from_iter(raws[..rows].iter().map(|r| !r.null || r.word & 4 == 0))
            })
        };
        match &self.kind {
            Kind::Plain(s) => s.array(&raws[..rows], self.nullable),
            Kind::Fixed(s, n, _) => {
                let values = s.array(&raws[..rows * n], true);
                let field = Arc::new(Field::new_list_field(s.data_type(), true));
                Arc::new(
                    FixedSizeListArray::try_new_with_length(
                        field,
                        *n as i32,
                        values,
                        row_nulls(),
                        rows,
                    )
                    .unwrap(),
                )
            }
            Kind::List(s) => {
                let lengths: Vec<usize> = raws[..rows]
                    .iter()
                    .map(|r| (r.word >> 8) as usize % 4)
                    .collect();
                let total: usize = lengths.iter().sum();
                let values = s.array(&raws[rows..rows + total], true);
                let field = Arc::new(Field::new_list_field(s.data_type(), true));
                Arc::new(ListArray::new(
                    field,
                    OffsetBuffer::from_lengths(lengths),
                    values,
                    row_nulls(),
                ))
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Case {
    columns: Vec<ColumnSpec>,
    delimiter: u8,
    units_row: bool,
    /// Per batch: rows, rows sliced off the front, and the material.
    batches: Vec<(usize, usize, Vec<Vec<Raw>>)>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(column_spec(), 0..6),
        prop::sample::select(vec![
            b',', b',', b',', b';', b'\t', b'|', b' ', b'1', b'e', b'a', b'"', b'\n', 0xe2,
        ]),
        any::<bool>(),
        prop::collection::vec(
            (0..12usize, prop_oneof![3 => Just(0usize), 1 => 1..3usize]),
            1..4,
        ),
    )
        .prop_flat_map(|(columns, delimiter, units_row, shapes)| {
            let width = columns.len();
            let batches: Vec<_> = shapes
                .into_iter()
                .map(|(rows, skip)| {
                    let all = rows + skip;
                    (
                        Just(rows),
                        Just(skip),
                        prop::collection::vec(prop::collection::vec(raw(), 4 * all), width),
                    )
                })
                .collect();
            (Just(columns), Just(delimiter), Just(units_row), batches)
        })
        .prop_map(|(columns, delimiter, units_row, batches)| Case {
            columns,
            delimiter,
            units_row,
            batches,
        })
}

impl Case {
    fn schema(&self) -> Schema {
        Schema::new(
            self.columns
                .iter()
                .map(ColumnSpec::field)
                .collect::<Vec<_>>(),
        )
    }

    fn batches(&self, schema: &Arc<Schema>) -> Vec<RecordBatch> {
        self.batches
            .iter()
            .map(|(rows, skip, raws)| {
                let all = rows + skip;
                let arrays: Vec<ArrayRef> = self
                    .columns
                    .iter()
                    .zip(raws)
                    .map(|(spec, raws)| spec.array(all, raws))
                    .collect();
                let batch = RecordBatch::try_new_with_options(
                    schema.clone(),
                    arrays,
                    &RecordBatchOptions::new().with_row_count(Some(all)),
                )
                .unwrap();
                batch.slice(*skip, *rows)
            })
            .collect()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn random_batches_match_arrow_csv(case in case()) {
        let schema = Arc::new(case.schema());
        let batches = case.batches(&schema);
        let options = CsvOptions { delimiter: case.delimiter, units_row: case.units_row };
        assert_same(&schema, &batches, &options);
    }
}

fn one_column(name: &str, array: ArrayRef) -> (Schema, RecordBatch) {
    let schema = Arc::new(Schema::new(vec![Field::new(
        name,
        array.data_type().clone(),
        true,
    )]));
    let batch = RecordBatch::try_new(schema.clone(), vec![array]).unwrap();
    (schema.as_ref().clone(), batch)
}

#[test]
fn every_listed_float_matches() {
    let f64s: Float64Array = FLOATS.iter().copied().map(Some).collect();
    let f32s: Float32Array = FLOATS.iter().map(|&f| Some(f as f32)).collect();
    let subnormals: Float32Array = [1u32, 2, 0x7f_ffff, 0x80_0001, 0x7f80_0001, 0xff80_0001]
        .into_iter()
        .map(|b| Some(f32::from_bits(b)))
        .collect();
    for array in [
        Arc::new(f64s) as ArrayRef,
        Arc::new(f32s),
        Arc::new(subnormals),
    ] {
        let (schema, batch) = one_column("x", array);
        assert_same(&schema, &[batch], &CsvOptions::default());
    }
    // Exhaustive over a band of f32 bit patterns around 1.0 and the subnormal edge.
    let band: Float32Array = (0x3f7f_0000u32..0x3f81_0000)
        .chain(0..0x1_0000)
        .chain(0x7f7f_0000..0x7f80_0010)
        .map(|b| Some(f32::from_bits(b)))
        .collect();
    let (schema, batch) = one_column("x", Arc::new(band));
    assert_same(&schema, &[batch], &CsvOptions::default());
}

#[test]
fn single_column_empty_cells_are_quoted_pairs() {
    let strings: StringArray = [Some(""), None, Some(" "), Some("a"), Some("")]
        .into_iter()
        .collect();
    let (schema, batch) = one_column("", Arc::new(strings));
    assert_same(
        &schema,
        std::slice::from_ref(&batch),
        &CsvOptions::default(),
    );
    let output = sink(&schema, &[batch], &CsvOptions::default());
    assert_eq!(
        String::from_utf8(output).unwrap(),
        "\"\"\n\"\"\n\"\"\n \na\n\"\"\n"
    );
}

#[test]
fn zero_columns_write_a_quoted_pair_per_row() {
    let schema = Schema::empty();
    let batch = RecordBatch::try_new_with_options(
        Arc::new(schema.clone()),
        vec![],
        &RecordBatchOptions::new().with_row_count(Some(3)),
    )
    .unwrap();
    let options = CsvOptions {
        delimiter: b',',
        units_row: true,
    };
    assert_same(&schema, &[batch], &options);
}

#[test]
fn builders_and_nested_nulls_match() {
    // Fixed-size lists of strings and bytes with null rows and null elements.
    let mut strings = FixedSizeListBuilder::new(StringBuilder::new(), 2);
    let mut bytes = FixedSizeListBuilder::new(BinaryBuilder::new(), 2);
    let mut bools = ListBuilder::new(BooleanBuilder::new());
    for r in 0..6 {
        strings.values().append_value(format!("a,{r}"));
        strings.values().append_null();
        strings.append(r % 3 != 0);
        bytes.values().append_value([r as u8, 0xab]);
        bytes.values().append_value([]);
        bytes.append(r % 2 == 0);
        bools.values().append_value(r % 2 == 0);
        bools.values().append_null();
        bools.append(r != 4);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(strings.finish()),
        Arc::new(bytes.finish()),
        Arc::new(bools.finish()),
    ];
    let fields: Vec<Field> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    for delimiter in [b',', b'a', b'0'] {
        let options = CsvOptions {
            delimiter,
            units_row: false,
        };
        assert_same(&schema, &[batch.clone(), batch.slice(1, 4)], &options);
    }
}

#[test]
fn other_types_go_through_arrow_csv() {
    // Types the export never produces still come out as arrow-csv writes them.
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Date32Array::from(vec![Some(0), None, Some(19_000)])),
        Arc::new(LargeStringArray::from(vec![Some("x,y"), Some(""), None])),
        Arc::new(Float64Array::from(vec![Some(0.1), None, Some(f64::NAN)])),
    ];
    let fields: Vec<Field> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| Field::new(format!("c{i}"), c.data_type().clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).unwrap();
    assert_same(&schema, &[batch], &CsvOptions::default());
}

#[test]
fn mismatched_batches_fail_without_panicking() {
    let schema = Schema::new(vec![
        Field::new("a", DataType::Float32, true),
        Field::new("b", DataType::Float64, true),
    ]);
    let mut sink = csv::CsvSink::new(Vec::new(), &schema, &CsvOptions::default()).unwrap();
    let short = Arc::new(Schema::new(vec![Field::new("a", DataType::Float32, true)]));
    let batch = RecordBatch::try_new(
        short,
        vec![Arc::new(arrow_array::PrimitiveArray::<Float32Type>::from(
            vec![1.0f32],
        ))],
    )
    .unwrap();
    assert!(sink.write(&batch).is_err());
    let wrong = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Float64, true),
        Field::new("b", DataType::Float64, true),
    ]));
    let batch = RecordBatch::try_new(
        wrong,
        vec![
            Arc::new(arrow_array::PrimitiveArray::<Float64Type>::from(vec![1.0])),
            Arc::new(arrow_array::PrimitiveArray::<Float64Type>::from(vec![2.0])),
        ],
    )
    .unwrap();
    assert!(sink.write(&batch).is_err());
}
