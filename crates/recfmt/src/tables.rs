//! Tables that format crates do not read themselves: Parquet (through Arrow, which format
//! crates stay free of), handed to outputs built from tables such as CARLA logs from
//! trajectories.

use std::path::Path;

use recfmt_core::{TableColumn, TableReader, Value};

/// Reads Parquet tables for [`recfmt_core::OutputSource::Table`] outputs.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tables;

#[cfg(feature = "tables-parquet")]
impl TableReader for Tables {
    fn extensions(&self) -> &[&'static str] {
        &["parquet", "pq"]
    }

    fn for_each_row(
        &self,
        path: &Path,
        columns: &[TableColumn],
        row: &mut dyn FnMut(&[Value]) -> recfmt_core::Result<()>,
    ) -> recfmt_core::Result<()> {
        parquet_rows(path, columns, row)
    }
}

#[cfg(not(feature = "tables-parquet"))]
impl TableReader for Tables {
    fn extensions(&self) -> &[&'static str] {
        &[]
    }

    fn for_each_row(
        &self,
        path: &Path,
        _: &[TableColumn],
        _: &mut dyn FnMut(&[Value]) -> recfmt_core::Result<()>,
    ) -> recfmt_core::Result<()> {
        Err(recfmt_core::Error::invalid(format!(
            "{}: this build of recfmt reads no tables of this kind",
            path.display()
        )))
    }
}

/// Reads a Parquet table batch by batch, casting each wanted column to its type.
#[cfg(feature = "tables-parquet")]
fn parquet_rows(
    path: &Path,
    columns: &[TableColumn],
    row: &mut dyn FnMut(&[Value]) -> recfmt_core::Result<()>,
) -> recfmt_core::Result<()> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int64Type, UInt32Type, UInt64Type};
    use arrow_array::{Array, ArrayRef, RecordBatch};
    use arrow_cast::cast;
    use arrow_schema::DataType;
    use recfmt_core::{DType, Error};

    let fail = |e: &dyn std::fmt::Display| Error::invalid(format!("{}: {e}", path.display()));
    let file =
        std::fs::File::open(path).map_err(|e| Error::context(path.display().to_string(), e))?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.with_batch_size(8192).build())
        .map_err(|e| fail(&e))?;
    let arrow_type = |d: DType| match d {
        DType::F64 | DType::F32 => DataType::Float64,
        DType::U32 => DataType::UInt32,
        DType::U8 | DType::U16 | DType::U64 => DataType::UInt64,
        DType::Bool => DataType::Boolean,
        DType::Str => DataType::Utf8,
        _ => DataType::Int64,
    };
    let expected: Vec<&str> = columns
        .iter()
        .filter(|c| c.required)
        .map(|c| c.name)
        .collect();
    let mut row_number = 0u64;
    let mut values = vec![Value::Null; columns.len()];
    for batch in reader {
        let batch: RecordBatch = batch.map_err(|e| fail(&e))?;
        let mut arrays: Vec<Option<ArrayRef>> = Vec::with_capacity(columns.len());
        for c in columns {
            let to = arrow_type(c.dtype);
            match batch.schema().index_of(c.name) {
                Ok(i) => arrays.push(Some(cast(batch.column(i), &to).map_err(|_| {
                    Error::invalid(format!(
                        "{}: column {} cannot be read as {to}",
                        path.display(),
                        c.name
                    ))
                })?)),
                Err(_) if c.required => {
                    return Err(Error::invalid(format!(
                        "{}: no column {} (expected {})",
                        path.display(),
                        c.name,
                        expected.join(",")
                    )));
                }
                Err(_) => arrays.push(None),
            }
        }
        for i in 0..batch.num_rows() {
            row_number += 1;
            for ((c, array), value) in columns.iter().zip(&arrays).zip(values.iter_mut()) {
                *value = match array {
                    Some(a) if !a.is_null(i) => match a.data_type() {
                        DataType::Float64 => Value::Float(a.as_primitive::<Float64Type>().value(i)),
                        DataType::UInt32 => {
                            Value::UInt(u64::from(a.as_primitive::<UInt32Type>().value(i)))
                        }
                        DataType::UInt64 => Value::UInt(a.as_primitive::<UInt64Type>().value(i)),
                        DataType::Int64 => Value::Int(a.as_primitive::<Int64Type>().value(i)),
                        DataType::Boolean => Value::Bool(a.as_boolean().value(i)),
                        _ => Value::Str(a.as_string::<i32>().value(i).to_owned()),
                    },
                    _ if c.required => {
                        return Err(Error::invalid(format!(
                            "{}: row {row_number}: a required value is missing",
                            path.display()
                        )));
                    }
                    _ => Value::Null,
                };
            }
            row(&values)
                .map_err(|e| Error::context(format!("{}: row {row_number}", path.display()), e))?;
        }
    }
    Ok(())
}
