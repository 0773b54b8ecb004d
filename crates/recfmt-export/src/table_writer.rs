//! Single tables written from Arrow record batches, as [`RecordBatchWriter`]s: a table file of
//! any batch format ([`TableWriter`]), recfmt's CSV layout into any `Write` ([`CsvWriter`]).
//! Parquet's `ArrowWriter` and Arrow IPC's `FileWriter` are `RecordBatchWriter`s of their own;
//! [`crate::hdf5::Hdf5Writer`] is one too.

use std::path::{Path, PathBuf};

use arrow_array::{RecordBatch, RecordBatchWriter};
use arrow_schema::{ArrowError, SchemaRef};

use crate::sink::Sink;
use crate::{Error, ExportOptions, TableFormat};

/// One table file (Parquet, CSV or Arrow IPC, as [`ExportOptions::format`] says) written from
/// record batches of one schema, under a temporary name until [`TableWriter::finish`] moves it
/// into place; dropped unfinished, it leaves nothing behind. NDJSON tables are written from
/// rows, not batches ([`crate::export_tables`]).
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{Float64Array, RecordBatch, RecordBatchWriter};
/// use arrow_schema::{DataType, Field, Schema};
/// use recfmt_export::{ExportOptions, TableFormat, TableWriter};
///
/// let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
/// let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Float64Array::from(vec![0.5, 1.5]))])?;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("x.csv");
/// let mut table = TableWriter::create(&path, &schema, &ExportOptions::new(TableFormat::Csv))?;
/// table.write(&batch)?;
/// table.close()?;
/// assert_eq!(std::fs::read_to_string(&path)?, "x\n0.5\n1.5\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TableWriter {
    path: PathBuf,
    sink: Sink,
}

impl std::fmt::Debug for TableWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWriter")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl TableWriter {
    /// Starts the table `path` for batches of `schema`, in the format, compression and CSV
    /// dialect of `options`. Fails when `path` exists and may not be replaced, or for a format
    /// written from rows (NDJSON) or left out of this build.
    pub fn create(path: &Path, schema: &SchemaRef, options: &ExportOptions) -> Result<Self, Error> {
        if options.format == TableFormat::Ndjson {
            return Err(Error::Invalid(format!(
                "{}: NDJSON tables are written from rows, not record batches",
                path.display()
            )));
        }
        Ok(TableWriter {
            sink: Sink::create(
                path,
                schema,
                options,
                None,
                &crate::sink::page_memory(options),
            )?,
            path: path.to_path_buf(),
        })
    }

    /// The final path of the table.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Completes the table (Parquet footer, last flush) and moves it into place.
    pub fn finish(self) -> Result<(), Error> {
        let path = self.path;
        self.sink
            .finish()?
            .commit()
            .map_err(|e| Error::io(&path, e))
    }
}

impl RecordBatchWriter for TableWriter {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        self.sink.write(batch).map_err(into_arrow)
    }

    fn close(self) -> Result<(), ArrowError> {
        self.finish().map_err(into_arrow)
    }
}

/// A table in recfmt's [CSV layout](crate#csv-layout) written into any `Write`: a header row
/// (and a units row when asked), then the rows of each batch, flushed after every batch.
///
/// ```
/// use recfmt_core::{DType, Header, SignalDesc, StreamBatch, StreamDesc, TimeBase, Value};
/// use arrow_array::RecordBatchWriter;
/// use recfmt_export::{CsvOptions, CsvWriter, StreamBatcher};
///
/// let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t_us", DType::U64), TimeBase::MICROSECONDS);
/// nav.signals.push(SignalDesc::scalar("x", DType::F32).with_unit("m"));
/// let mut batch = StreamBatch::new(0, &nav.signals, 2);
/// batch.push_values(&[Value::UInt(0), Value::Float(0.1)])?;
/// let schema = std::sync::Arc::new(recfmt_export::arrow_schema(&Header::default(), &nav));
///
/// let options = CsvOptions { units_row: true, ..CsvOptions::default() };
/// let mut csv = CsvWriter::new(Vec::new(), &schema, &options)?;
/// csv.write(&recfmt_export::record_batch(&schema, batch)?)?;
/// assert_eq!(String::from_utf8(csv.into_inner())?, "t_us,x\n,m\n0,0.1\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "csv")]
pub struct CsvWriter<W: std::io::Write> {
    sink: crate::csv::CsvSink<W>,
}

#[cfg(feature = "csv")]
impl<W: std::io::Write> std::fmt::Debug for CsvWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CsvWriter").finish_non_exhaustive()
    }
}

#[cfg(feature = "csv")]
impl<W: std::io::Write> CsvWriter<W> {
    /// Starts a table of `schema` in `inner`, writing the header row(s).
    pub fn new(
        inner: W,
        schema: &arrow_schema::Schema,
        options: &crate::CsvOptions,
    ) -> Result<Self, ArrowError> {
        Ok(CsvWriter {
            sink: crate::csv::CsvSink::new(inner, schema, options)?,
        })
    }

    /// The underlying writer, with everything written to it.
    pub fn into_inner(self) -> W {
        self.sink.into_inner()
    }
}

#[cfg(feature = "csv")]
impl<W: std::io::Write> RecordBatchWriter for CsvWriter<W> {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), ArrowError> {
        self.sink.write(batch)
    }

    fn close(self) -> Result<(), ArrowError> {
        // Every batch is flushed as it is written.
        Ok(())
    }
}

/// `error` as Arrow's writer trait wants it, kept whole for a downcast.
pub(crate) fn into_arrow(error: Error) -> ArrowError {
    ArrowError::ExternalError(Box::new(error))
}

#[cfg(all(test, feature = "parquet", feature = "ipc"))]
mod tests {
    use std::sync::Arc;

    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use arrow_array::{Int32Array, RecordBatch, RecordBatchWriter};
    use arrow_schema::{DataType, Field, Schema};

    use super::TableWriter;
    use crate::{ExportOptions, TableFormat};

    #[test]
    fn a_table_reads_back_and_an_unfinished_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int32, false)]));
        let column = Arc::new(Int32Array::from(vec![1, 2, 3]));
        let batch = RecordBatch::try_new(schema.clone(), vec![column]).unwrap();

        let path = dir.path().join("x.parquet");
        let options = ExportOptions::new(TableFormat::Parquet);
        let mut table = TableWriter::create(&path, &schema, &options).unwrap();
        table.write(&batch).unwrap();
        table.write(&batch).unwrap();
        // Nothing under the final name until the table is complete.
        assert!(!path.exists());
        table.close().unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let values: Vec<i32> =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
                .unwrap()
                .build()
                .unwrap()
                .flat_map(|b| {
                    b.unwrap()
                        .column(0)
                        .as_primitive::<Int32Type>()
                        .values()
                        .to_vec()
                })
                .collect();
        assert_eq!(values, [1, 2, 3, 1, 2, 3]);

        // Dropped before `close`: no file, no temporary one either.
        let options = ExportOptions::new(TableFormat::Arrow);
        let mut table =
            TableWriter::create(&dir.path().join("y.arrow"), &schema, &options).unwrap();
        table.write(&batch).unwrap();
        drop(table);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x.parquet"]);

        // NDJSON tables are written from rows.
        let options = ExportOptions::new(TableFormat::Ndjson);
        assert!(TableWriter::create(&dir.path().join("z.ndjson"), &schema, &options).is_err());
    }
}
