//! CSV tables: Arrow batches flattened into plain columns and written with `arrow-csv`.
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
    Array, ArrayRef, BinaryArray, BooleanArray, PrimitiveArray, RecordBatch, StringArray,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};

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

    /// The flat schema: one field per CSV column.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
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
    // `{:?}` prints the shortest text that parses back to the same float, with an exponent
    // for very large and small magnitudes, which JSON accepts.
    let _ = match values.data_type() {
        DataType::Boolean => write!(out, "{}", values.as_boolean().value(i)),
        DataType::Int8 => write!(out, "{}", values.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => write!(out, "{}", values.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => write!(out, "{}", values.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => write!(out, "{}", values.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => write!(out, "{}", values.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => write!(out, "{}", values.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => write!(out, "{}", values.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => write!(out, "{}", values.as_primitive::<UInt64Type>().value(i)),
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

/// The variable-length lists of `column` as JSON array text, null where the list is null.
fn json_column(column: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let list = column.as_list_opt::<i32>().ok_or_else(|| {
        ArrowError::CsvError(format!("expected a list, found {}", column.data_type()))
    })?;
    let values = list.values().as_ref();
    let offsets = list.value_offsets();
    let mut text = String::new();
    let mut out = Vec::with_capacity(list.len());
    for r in 0..list.len() {
        if list.is_null(r) {
            out.push(None);
            continue;
        }
        text.clear();
        text.push('[');
        let (start, end) = (offsets[r] as usize, offsets[r + 1] as usize);
        for i in start..end {
            if i > start {
                text.push(',');
            }
            json_element(values, i, &mut text)?;
        }
        text.push(']');
        out.push(Some(text.clone()));
    }
    Ok(Arc::new(StringArray::from(out)))
}

/// A CSV table being written.
pub(crate) struct CsvSink<W: Write> {
    layout: CsvLayout,
    writer: arrow_csv::Writer<W>,
}

impl<W: Write> CsvSink<W> {
    /// Starts a table for batches of `schema`, writing the header row.
    pub(crate) fn new(
        inner: W,
        schema: &Schema,
        options: &crate::CsvOptions,
    ) -> Result<Self, ArrowError> {
        let layout = CsvLayout::new(schema);
        let writer = arrow_csv::WriterBuilder::new()
            .with_header(false)
            .with_delimiter(options.delimiter)
            .build(inner);
        let mut sink = CsvSink { layout, writer };
        // Header lines go through the same writer as the data, so they are quoted by the
        // same rules.
        let mut rows = vec![sink.layout.header()];
        if options.units_row {
            rows.push(sink.layout.units());
        }
        sink.write_text_rows(&rows)?;
        Ok(sink)
    }

    /// Writes rows of plain text cells, one per CSV column.
    fn write_text_rows(&mut self, rows: &[Vec<String>]) -> Result<(), ArrowError> {
        let width = self.layout.schema().fields().len();
        let fields: Vec<Field> = (0..width)
            .map(|i| Field::new(format!("c{i}"), DataType::Utf8, false))
            .collect();
        let columns: Vec<ArrayRef> = (0..width)
            .map(|i| {
                let cells: StringArray = rows
                    .iter()
                    .map(|row| Some(row.get(i).map(String::as_str).unwrap_or("")))
                    .collect();
                Arc::new(cells) as ArrayRef
            })
            .collect();
        let batch = RecordBatch::try_new_with_options(
            Arc::new(Schema::new(fields)),
            columns,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows.len())),
        )?;
        self.writer.write(&batch)
    }

    /// Appends a batch of the schema given to [`CsvSink::new`].
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        let flat = self.layout.flatten(batch)?;
        self.writer.write(&flat)
    }

    /// The underlying writer, with everything written to it.
    pub(crate) fn into_inner(self) -> W {
        self.writer.into_inner()
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
