//! CSV tables: Arrow batches flattened into plain columns, formatted straight from the arrays.
//!
//! Layout of a CSV table:
//!
//! * one header row with the column names, then (when asked) a row with each column's unit;
//! * scalar signals are one column each; integers in decimal, floats in the shortest text
//!   that reads back to the same value (`0.1` for the `f32` 0.1, `NaN`, `inf`, `-inf`),
//!   booleans as `true`/`false`, bytes as lowercase hex, nulls as empty cells;
//! * fixed-shape signals are flattened row-major into one column per element, named
//!   `name[0]`, `name[1]`, ... for one dimension and `name[0][0]`, `name[0][1]`, ... for more;
//! * variable-length signals are one column holding a JSON array such as `[1,2,3]` (quoted by
//!   CSV rules since it contains commas); floats use the shortest round-trip text, non-finite
//!   floats are written `NaN`, `Infinity` and `-Infinity` as Python's `json` module accepts;
//!   a null list is an empty cell.

use std::fmt::Write as _;
use std::io::Write;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, ListArray, PrimitiveArray, RecordBatch, StringArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, SchemaRef};

use crate::csv_cell::{float_text, push_bool, push_float_text, push_i64, push_u64};
use crate::mapping::{SHAPE_KEY, parse_shape};

/// Where one CSV column comes from.
#[derive(Debug, Clone)]
enum Source {
    /// A scalar Arrow column, written as is.
    Plain(usize),
    /// Element `index` of the fixed-size lists of column `column`.
    Element { column: usize, index: usize },
    /// The variable-length lists of column `column`, as JSON text.
    Json(usize),
}

/// The flat CSV columns of an Arrow schema.
#[derive(Debug, Clone)]
pub(crate) struct CsvLayout {
    sources: Vec<Source>,
    schema: SchemaRef,
}

impl CsvLayout {
    pub(crate) fn new(schema: &Schema) -> Self {
        let mut sources = Vec::new();
        let mut fields = Vec::new();
        for (column, field) in schema.fields().iter().enumerate() {
            match field.data_type() {
                DataType::FixedSizeList(item, size) => {
                    let size = usize::try_from(*size).unwrap_or(0);
                    let dims = field
                        .metadata()
                        .get(SHAPE_KEY)
                        .and_then(|s| parse_shape(s))
                        .filter(|d| d.iter().map(|&x| x as usize).product::<usize>() == size)
                        .unwrap_or_else(|| vec![u32::try_from(size).unwrap_or(u32::MAX)]);
                    for index in 0..size {
                        let name = format!("{}{}", field.name(), index_suffix(index, &dims));
                        fields.push(
                            Field::new(name, item.data_type().clone(), true)
                                .with_metadata(field.metadata().clone()),
                        );
                        sources.push(Source::Element { column, index });
                    }
                }
                DataType::List(_) | DataType::LargeList(_) => {
                    fields.push(
                        Field::new(field.name(), DataType::Utf8, true)
                            .with_metadata(field.metadata().clone()),
                    );
                    sources.push(Source::Json(column));
                }
                _ => {
                    fields.push(field.as_ref().clone());
                    sources.push(Source::Plain(column));
                }
            }
        }
        CsvLayout {
            sources,
            schema: Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
        }
    }

    /// The header row.
    pub(crate) fn header(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    /// The units row: each column's `unit` metadata, empty where there is none.
    pub(crate) fn units(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| {
                f.metadata()
                    .get(crate::UNIT_KEY)
                    .cloned()
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Flattens a batch of the original schema into the flat schema.
    pub(crate) fn flatten(&self, batch: &RecordBatch) -> Result<RecordBatch, ArrowError> {
        let needed = self.sources.iter().map(|source| match *source {
            Source::Plain(c) | Source::Element { column: c, .. } | Source::Json(c) => c + 1,
        });
        if let Some(needed) = needed.max().filter(|&n| n > batch.num_columns()) {
            return Err(ArrowError::CsvError(format!(
                "expected a batch of at least {needed} columns, found {}",
                batch.num_columns()
            )));
        }
        let columns = self
            .sources
            .iter()
            .map(|source| match *source {
                Source::Plain(c) => Ok(batch.column(c).clone()),
                Source::Element { column, index } => element_column(batch.column(column), index),
                Source::Json(c) => json_column(batch.column(c)),
            })
            .collect::<Result<Vec<_>, _>>()?;
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )
    }
}

/// `[i]` or `[i][j]...` for flat index `index` of an array of shape `dims`, row-major.
fn index_suffix(index: usize, dims: &[u32]) -> String {
    let mut parts = vec![0usize; dims.len()];
    let mut rest = index;
    for (part, &d) in parts.iter_mut().zip(dims).rev() {
        let d = (d as usize).max(1);
        *part = rest % d;
        rest /= d;
    }
    let mut text = String::new();
    for p in parts {
        let _ = write!(text, "[{p}]");
    }
    text
}

fn gather_primitive<T: ArrowPrimitiveType>(
    values: &dyn Array,
    valid: impl Fn(usize) -> bool,
    rows: usize,
    size: usize,
    index: usize,
) -> ArrayRef {
    let values = values.as_primitive::<T>();
    let out: PrimitiveArray<T> = (0..rows)
        .map(|r| {
            let i = r * size + index;
            (valid(r) && values.is_valid(i)).then(|| values.value(i))
        })
        .collect();
    Arc::new(out)
}

/// Element `index` of every fixed-size list of `column`, null where the list is null.
fn element_column(column: &ArrayRef, index: usize) -> Result<ArrayRef, ArrowError> {
    let list = column.as_fixed_size_list_opt().ok_or_else(|| {
        ArrowError::CsvError(format!(
            "expected a fixed-size list, found {}",
            column.data_type()
        ))
    })?;
    let size = usize::try_from(list.value_length()).unwrap_or(0);
    if index >= size {
        return Err(ArrowError::CsvError(format!(
            "expected fixed-size lists of more than {index} elements, found {size}"
        )));
    }
    let rows = list.len();
    let values = list.values().as_ref();
    let valid = |r: usize| list.is_valid(r);
    Ok(match values.data_type() {
        DataType::Int8 => gather_primitive::<Int8Type>(values, valid, rows, size, index),
        DataType::Int16 => gather_primitive::<Int16Type>(values, valid, rows, size, index),
        DataType::Int32 => gather_primitive::<Int32Type>(values, valid, rows, size, index),
        DataType::Int64 => gather_primitive::<Int64Type>(values, valid, rows, size, index),
        DataType::UInt8 => gather_primitive::<UInt8Type>(values, valid, rows, size, index),
        DataType::UInt16 => gather_primitive::<UInt16Type>(values, valid, rows, size, index),
        DataType::UInt32 => gather_primitive::<UInt32Type>(values, valid, rows, size, index),
        DataType::UInt64 => gather_primitive::<UInt64Type>(values, valid, rows, size, index),
        DataType::Float32 => gather_primitive::<Float32Type>(values, valid, rows, size, index),
        DataType::Float64 => gather_primitive::<Float64Type>(values, valid, rows, size, index),
        DataType::Boolean => {
            let v = values.as_boolean();
            let out: BooleanArray = (0..rows)
                .map(|r| {
                    let i = r * size + index;
                    (valid(r) && v.is_valid(i)).then(|| v.value(i))
                })
                .collect();
            Arc::new(out)
        }
        DataType::Utf8 => {
            let v = values.as_string::<i32>();
            let out: StringArray = (0..rows)
                .map(|r| {
                    let i = r * size + index;
                    (valid(r) && v.is_valid(i)).then(|| v.value(i))
                })
                .collect();
            Arc::new(out)
        }
        DataType::Binary => {
            let v = values.as_binary::<i32>();
            let out: BinaryArray = (0..rows)
                .map(|r| {
                    let i = r * size + index;
                    (valid(r) && v.is_valid(i)).then(|| v.value(i))
                })
                .collect();
            Arc::new(out)
        }
        other => {
            return Err(ArrowError::CsvError(format!(
                "cannot flatten arrays of {other} into CSV columns"
            )));
        }
    })
}

/// Writes element `i` of `values` as JSON text.
fn json_element(values: &dyn Array, i: usize, out: &mut String) -> Result<(), ArrowError> {
    if values.is_null(i) {
        out.push_str("null");
        return Ok(());
    }
    fn float(out: &mut String, f: f64, text: std::fmt::Arguments<'_>) {
        if f.is_nan() {
            out.push_str("NaN");
        } else if f.is_infinite() {
            out.push_str(if f > 0.0 { "Infinity" } else { "-Infinity" });
        } else {
            let _ = out.write_fmt(text);
        }
    }
    fn int(out: &mut String, v: impl itoa::Integer) -> std::fmt::Result {
        out.push_str(itoa::Buffer::new().format(v));
        Ok(())
    }
    // `{:?}` prints the shortest text that parses back to the same float, with an exponent
    // for very large and small magnitudes, which JSON accepts.
    let _ = match values.data_type() {
        DataType::Boolean => write!(out, "{}", values.as_boolean().value(i)),
        DataType::Int8 => int(out, values.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => int(out, values.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => int(out, values.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => int(out, values.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => int(out, values.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => int(out, values.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => int(out, values.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => int(out, values.as_primitive::<UInt64Type>().value(i)),
        DataType::Float32 => {
            let f = values.as_primitive::<Float32Type>().value(i);
            float(out, f64::from(f), format_args!("{f:?}"));
            Ok(())
        }
        DataType::Float64 => {
            let f = values.as_primitive::<Float64Type>().value(i);
            float(out, f, format_args!("{f:?}"));
            Ok(())
        }
        DataType::Utf8 => write!(out, "{}", json_string(values.as_string::<i32>().value(i))),
        DataType::Binary => {
            out.push('"');
            for byte in values.as_binary::<i32>().value(i) {
                let _ = write!(out, "{byte:02x}");
            }
            out.push('"');
            Ok(())
        }
        other => {
            return Err(ArrowError::CsvError(format!(
                "cannot write lists of {other} as JSON"
            )));
        }
    };
    Ok(())
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Row `r` of `list` as JSON array text, in `text`.
fn json_list(list: &ListArray, r: usize, text: &mut String) -> Result<(), ArrowError> {
    let values = list.values().as_ref();
    let offsets = list.value_offsets();
    text.clear();
    text.push('[');
    let (start, end) = (offsets[r] as usize, offsets[r + 1] as usize);
    for i in start..end {
        if i > start {
            text.push(',');
        }
        json_element(values, i, text)?;
    }
    text.push(']');
    Ok(())
}

/// The variable-length lists of `column` as JSON array text, null where the list is null.
fn json_column(column: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let list = column.as_list_opt::<i32>().ok_or_else(|| {
        ArrowError::CsvError(format!("expected a list, found {}", column.data_type()))
    })?;
    let mut text = String::new();
    let mut out = Vec::with_capacity(list.len());
    for r in 0..list.len() {
        if list.is_null(r) {
            out.push(None);
            continue;
        }
        json_list(list, r, &mut text)?;
        out.push(Some(text.clone()));
    }
    Ok(Arc::new(StringArray::from(out)))
}

/// Bytes of formatted numbers, booleans and hex: cells made only of these never need quotes
/// unless the delimiter is one of them.
const PLAIN_BYTES: &[u8] = b"0123456789+-.eEinfNatrulsbcd";

/// Text appended to the output buffer before it is handed to the writer.
const FLUSH_AT: usize = 256 * 1024;

/// How the fast path reads one CSV column of a batch.
enum Values<'a> {
    I8(&'a [i8]),
    I16(&'a [i16]),
    I32(&'a [i32]),
    I64(&'a [i64]),
    U8(&'a [u8]),
    U16(&'a [u16]),
    U32(&'a [u32]),
    U64(&'a [u64]),
    F32(&'a [f32]),
    F64(&'a [f64]),
    Bool(&'a BooleanArray),
    Utf8(&'a StringArray),
    Binary(&'a BinaryArray),
    Json(&'a ListArray),
}

/// One CSV column of a batch: cell `r` is value `r * stride + offset` of `values`, empty where
/// the row (`rows`) or the value (`nulls`) is null.
struct Column<'a> {
    values: Values<'a>,
    rows: Option<&'a NullBuffer>,
    nulls: Option<&'a NullBuffer>,
    stride: usize,
    offset: usize,
}

/// The scalar types the fast path formats itself, as element or plain columns.
fn scalar_values(array: &dyn Array) -> Option<Values<'_>> {
    Some(match array.data_type() {
        DataType::Int8 => Values::I8(array.as_primitive::<Int8Type>().values()),
        DataType::Int16 => Values::I16(array.as_primitive::<Int16Type>().values()),
        DataType::Int32 => Values::I32(array.as_primitive::<Int32Type>().values()),
        DataType::Int64 => Values::I64(array.as_primitive::<Int64Type>().values()),
        DataType::UInt8 => Values::U8(array.as_primitive::<UInt8Type>().values()),
        DataType::UInt16 => Values::U16(array.as_primitive::<UInt16Type>().values()),
        DataType::UInt32 => Values::U32(array.as_primitive::<UInt32Type>().values()),
        DataType::UInt64 => Values::U64(array.as_primitive::<UInt64Type>().values()),
        DataType::Float32 => Values::F32(array.as_primitive::<Float32Type>().values()),
        DataType::Float64 => Values::F64(array.as_primitive::<Float64Type>().values()),
        DataType::Boolean => Values::Bool(array.as_boolean()),
        DataType::Utf8 => Values::Utf8(array.as_string::<i32>()),
        DataType::Binary => Values::Binary(array.as_binary::<i32>()),
        _ => return None,
    })
}

/// Whether [`json_element`] writes values of `data_type`.
fn json_supported(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Boolean
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float32
            | DataType::Float64
            | DataType::Utf8
            | DataType::Binary
    )
}

/// A CSV table being written.
///
/// Cells are formatted straight from the Arrow arrays into one reusable buffer, row by row,
/// with the text `arrow-csv` writes for the same flattened batch: integers as `itoa` writes
/// them, floats as `ryu` does (`1.0`, `1e20`, `NaN`, `inf`; [`crate::csv_cell`] says how the
/// same text is written faster), and cells quoted by the `csv` crate's rules (only when they
/// hold the delimiter, a quote, `\r` or `\n`; quotes doubled; a record that is a single empty
/// field written `""`). Batches this writer does not know how to format (types the export
/// never produces) go through `arrow-csv` itself.
pub(crate) struct CsvSink<W: Write> {
    layout: CsvLayout,
    /// The fields of the schema given to [`CsvSink::new`], one per batch column.
    fields: Fields,
    inner: W,
    delimiter: u8,
    /// Bytes that put a cell in quotes.
    special: [bool; 256],
    /// Whether number, boolean and hex cells never need quotes.
    plain_safe: bool,
    buf: Vec<u8>,
    json: String,
}

impl<W: Write> CsvSink<W> {
    /// Starts a table for batches of `schema`, writing the header row.
    pub(crate) fn new(
        inner: W,
        schema: &Schema,
        options: &crate::CsvOptions,
    ) -> Result<Self, ArrowError> {
        let layout = CsvLayout::new(schema);
        let delimiter = options.delimiter;
        let mut special = [false; 256];
        for b in [delimiter, b'"', b'\r', b'\n'] {
            special[usize::from(b)] = true;
        }
        let plain_safe = !PLAIN_BYTES.iter().any(|&b| special[usize::from(b)]);
        let mut sink = CsvSink {
            layout,
            fields: schema.fields().clone(),
            inner,
            delimiter,
            special,
            plain_safe,
            buf: Vec::new(),
            json: String::new(),
        };
        // Header lines follow the same quoting rules as the data.
        let header = sink.layout.header();
        sink.push_text_row(&header);
        if options.units_row {
            let units = sink.layout.units();
            sink.push_text_row(&units);
        }
        sink.flush_buf()?;
        sink.inner.flush()?;
        Ok(sink)
    }

    /// Appends a row of plain text cells to the buffer.
    fn push_text_row(&mut self, cells: &[String]) {
        let start = self.buf.len();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                self.buf.push(self.delimiter);
            }
            push_cell(&mut self.buf, &self.special, cell.as_bytes());
        }
        self.end_row(start, cells.len());
    }

    /// Ends a row that started at `start` of the buffer and has `width` cells.
    fn end_row(&mut self, start: usize, width: usize) {
        // The csv crate writes a record of no bytes at all, a single empty field or none,
        // as `""` so that it reads back as one.
        if width <= 1 && self.buf.len() == start {
            self.buf.extend_from_slice(b"\"\"");
        }
        self.buf.push(b'\n');
    }

    fn flush_buf(&mut self) -> Result<(), ArrowError> {
        self.inner.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    /// Appends a batch of the schema given to [`CsvSink::new`].
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        match self.columns(batch) {
            Some(columns) => self.write_fast(batch.num_rows(), &columns)?,
            None => self.write_general(batch)?,
        }
        self.inner.flush()?;
        Ok(())
    }

    /// The columns of `batch` for the fast path, or `None` when `batch` has columns it does
    /// not format (or that the flattened batch would reject).
    fn columns<'a>(&self, batch: &'a RecordBatch) -> Option<Vec<Column<'a>>> {
        if batch.num_columns() != self.fields.len() {
            return None;
        }
        let rows = batch.num_rows();
        let mut columns = Vec::with_capacity(self.layout.sources.len());
        for source in &self.layout.sources {
            let column = match *source {
                Source::Plain(c) => {
                    let array = batch.column(c);
                    let field = self.fields.get(c)?;
                    if !array.data_type().equals_datatype(field.data_type())
                        || (!field.is_nullable() && array.null_count() > 0)
                        || array.len() != rows
                    {
                        return None;
                    }
                    Column {
                        values: scalar_values(array.as_ref())?,
                        rows: None,
                        nulls: array.nulls(),
                        stride: 1,
                        offset: 0,
                    }
                }
                Source::Element { column, index } => {
                    let list = batch.column(column).as_fixed_size_list_opt()?;
                    let size = usize::try_from(list.value_length()).ok()?;
                    let values = list.values();
                    if index >= size
                        || list.len() != rows
                        || values.len() < rows.checked_mul(size)?
                    {
                        return None;
                    }
                    Column {
                        values: scalar_values(values.as_ref())?,
                        rows: list.nulls(),
                        nulls: values.nulls(),
                        stride: size,
                        offset: index,
                    }
                }
                Source::Json(c) => {
                    let list = batch.column(c).as_list_opt::<i32>()?;
                    if !json_supported(list.values().data_type()) || list.len() != rows {
                        return None;
                    }
                    Column {
                        values: Values::Json(list),
                        rows: None,
                        nulls: list.nulls(),
                        stride: 1,
                        offset: 0,
                    }
                }
            };
            columns.push(column);
        }
        Some(columns)
    }

    /// Formats `rows` rows of `columns`.
    fn write_fast(&mut self, rows: usize, columns: &[Column<'_>]) -> Result<(), ArrowError> {
        let mut floats = zmij::Buffer::new();
        for r in 0..rows {
            let start = self.buf.len();
            for (c, column) in columns.iter().enumerate() {
                if c > 0 {
                    self.buf.push(self.delimiter);
                }
                if column.rows.is_some_and(|n| n.is_null(r)) {
                    continue;
                }
                let i = r * column.stride + column.offset;
                if column.nulls.is_some_and(|n| n.is_null(i)) {
                    continue;
                }
                if !self.plain_safe {
                    self.push_quoted_cell(column, i)?;
                    continue;
                }
                let buf = &mut self.buf;
                match column.values {
                    Values::I8(v) => v.get(i).map(|&x| push_i64(buf, i64::from(x))),
                    Values::I16(v) => v.get(i).map(|&x| push_i64(buf, i64::from(x))),
                    Values::I32(v) => v.get(i).map(|&x| push_i64(buf, i64::from(x))),
                    Values::I64(v) => v.get(i).map(|&x| push_i64(buf, x)),
                    Values::U8(v) => v.get(i).map(|&x| push_u64(buf, u64::from(x))),
                    Values::U16(v) => v.get(i).map(|&x| push_u64(buf, u64::from(x))),
                    Values::U32(v) => v.get(i).map(|&x| push_u64(buf, u64::from(x))),
                    Values::U64(v) => v.get(i).map(|&x| push_u64(buf, x)),
                    Values::F32(v) => v
                        .get(i)
                        .map(|&x| push_float_text(buf, float_text(&mut floats, x))),
                    Values::F64(v) => v
                        .get(i)
                        .map(|&x| push_float_text(buf, float_text(&mut floats, x))),
                    Values::Bool(v) => (i < v.len()).then(|| push_bool(buf, v.value(i))),
                    _ => {
                        self.push_quoted_cell(column, i)?;
                        None
                    }
                };
            }
            self.end_row(start, columns.len());
            if self.buf.len() >= FLUSH_AT {
                self.flush_buf()?;
            }
        }
        self.flush_buf()
    }

    /// Appends value `i` of `column` by the quoting rules: text, hex and JSON cells, and any
    /// cell when the delimiter is a byte numbers or booleans are written with (a rare dialect:
    /// such a cell goes through a scratch buffer of its own).
    fn push_quoted_cell(&mut self, column: &Column<'_>, i: usize) -> Result<(), ArrowError> {
        let mut floats = zmij::Buffer::new();
        let mut cell = Vec::new();
        let plain = &mut cell;
        match column.values {
            Values::I8(v) => v.get(i).map(|&x| push_i64(plain, i64::from(x))),
            Values::I16(v) => v.get(i).map(|&x| push_i64(plain, i64::from(x))),
            Values::I32(v) => v.get(i).map(|&x| push_i64(plain, i64::from(x))),
            Values::I64(v) => v.get(i).map(|&x| push_i64(plain, x)),
            Values::U8(v) => v.get(i).map(|&x| push_u64(plain, u64::from(x))),
            Values::U16(v) => v.get(i).map(|&x| push_u64(plain, u64::from(x))),
            Values::U32(v) => v.get(i).map(|&x| push_u64(plain, u64::from(x))),
            Values::U64(v) => v.get(i).map(|&x| push_u64(plain, x)),
            Values::F32(v) => v
                .get(i)
                .map(|&x| push_float_text(plain, float_text(&mut floats, x))),
            Values::F64(v) => v
                .get(i)
                .map(|&x| push_float_text(plain, float_text(&mut floats, x))),
            Values::Bool(v) => (i < v.len()).then(|| push_bool(plain, v.value(i))),
            Values::Utf8(v) => {
                if i < v.len() {
                    push_cell(&mut self.buf, &self.special, v.value(i).as_bytes());
                }
                return Ok(());
            }
            Values::Binary(v) => {
                if i < v.len() {
                    push_hex(&mut self.buf, &self.special, self.plain_safe, v.value(i));
                }
                return Ok(());
            }
            Values::Json(list) => {
                if i < list.len() {
                    json_list(list, i, &mut self.json)?;
                    push_cell(&mut self.buf, &self.special, self.json.as_bytes());
                }
                return Ok(());
            }
        };
        push_cell(&mut self.buf, &self.special, &cell);
        Ok(())
    }

    /// Writes `batch` flattened, with `arrow-csv`: the path for batches [`CsvSink::columns`]
    /// leaves out. It formats them (or fails on them) as the fast path's reference does.
    fn write_general(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        let flat = self.layout.flatten(batch)?;
        let mut writer = arrow_csv::WriterBuilder::new()
            .with_header(false)
            .with_delimiter(self.delimiter)
            .build(&mut self.inner);
        writer.write(&flat)
    }

    /// Whether `batch` is formatted here rather than by `arrow-csv` (for tests/csv_exact.rs).
    #[cfg(test)]
    #[allow(dead_code)]
    pub(crate) fn formats_itself(&self, batch: &RecordBatch) -> bool {
        self.columns(batch).is_some()
    }

    /// The underlying writer, with everything written to it.
    pub(crate) fn into_inner(self) -> W {
        self.inner
    }
}

/// Appends `cell`, in quotes (with quotes doubled) when it holds a `special` byte.
fn push_cell(buf: &mut Vec<u8>, special: &[bool; 256], cell: &[u8]) {
    if !cell.iter().any(|&b| special[usize::from(b)]) {
        buf.extend_from_slice(cell);
        return;
    }
    buf.reserve(cell.len() + 2);
    buf.push(b'"');
    for part in cell.split_inclusive(|&b| b == b'"') {
        buf.extend_from_slice(part);
        if part.last() == Some(&b'"') {
            buf.push(b'"');
        }
    }
    buf.push(b'"');
}

/// Appends `bytes` as lowercase hex.
fn push_hex(buf: &mut Vec<u8>, special: &[bool; 256], plain_safe: bool, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let start = buf.len();
    buf.reserve(bytes.len() * 2);
    for &b in bytes {
        buf.push(DIGITS[usize::from(b >> 4)]);
        buf.push(DIGITS[usize::from(b & 0xf)]);
    }
    if !plain_safe && buf[start..].iter().any(|&b| special[usize::from(b)]) {
        let hex = buf.split_off(start);
        push_cell(buf, special, &hex);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn index_suffixes_are_row_major() {
        assert_eq!(index_suffix(2, &[3]), "[2]");
        assert_eq!(index_suffix(5, &[2, 3]), "[1][2]");
        assert_eq!(index_suffix(3, &[2, 3]), "[1][0]");
    }

    #[test]
    fn json_strings_escape() {
        assert_eq!(json_string("a\"b\\\n\u{1}"), "\"a\\\"b\\\\\\n\\u0001\"");
    }

    #[test]
    fn zero_column_table_writes_a_header_line() {
        let schema = Schema::empty();
        let sink = CsvSink::new(Vec::new(), &schema, &crate::CsvOptions::default()).unwrap();
        let text = String::from_utf8(sink.into_inner()).unwrap();
        // The csv crate writes a record without fields as `""`.
        assert_eq!(text, "\"\"\n");
    }
}
