//! Output tables: one open file per stream, written under a temporary name.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use recfmt_core::AtomicFile;

use crate::{Error, ExportOptions, TableFormat};

#[cfg(feature = "parquet")]
use crate::ParquetCompression;

/// One table being written.
#[cfg_attr(
    not(any(
        feature = "parquet",
        feature = "csv",
        feature = "ipc",
        feature = "ndjson"
    )),
    allow(dead_code)
)]
pub(crate) struct Sink {
    path: PathBuf,
    inner: Inner,
}

enum Inner {
    #[cfg(feature = "parquet")]
    Parquet(Box<parquet::arrow::ArrowWriter<AtomicFile>>),
    #[cfg(feature = "csv")]
    Csv(Box<crate::csv::CsvSink<AtomicFile>>),
    #[cfg(feature = "ipc")]
    Arrow(Box<arrow_ipc::writer::FileWriter<AtomicFile>>),
    #[cfg(feature = "ndjson")]
    Ndjson(AtomicFile),
}

/// Fails when this build of the crate leaves `format` out.
pub(crate) fn check_format(format: TableFormat) -> Result<(), Error> {
    let available = match format {
        TableFormat::Parquet => cfg!(feature = "parquet"),
        TableFormat::Csv => cfg!(feature = "csv"),
        TableFormat::Arrow => cfg!(feature = "ipc"),
        TableFormat::Ndjson => cfg!(feature = "ndjson"),
    };
    if available {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "recfmt-export was built without the `{}` feature",
            format.extension()
        )))
    }
}

// Without any table format feature, `Inner` has no variants and most of this is unreachable.
#[cfg_attr(
    not(any(
        feature = "parquet",
        feature = "csv",
        feature = "ipc",
        feature = "ndjson"
    )),
    allow(unreachable_code, unused_variables)
)]
impl Sink {
    /// Creates the temporary file for `path` and starts a table of `schema` in it.
    pub(crate) fn create(
        path: &Path,
        schema: &SchemaRef,
        options: &ExportOptions,
    ) -> Result<Self, Error> {
        check_format(options.format)?;
        let file = AtomicFile::create(path).map_err(|e| Error::io(path, e))?;
        let inner = match options.format {
            #[cfg(feature = "parquet")]
            TableFormat::Parquet => {
                Inner::Parquet(Box::new(parquet_writer(path, file, schema, options)?))
            }
            #[cfg(feature = "csv")]
            TableFormat::Csv => Inner::Csv(Box::new(
                crate::csv::CsvSink::new(file, schema, &options.csv)
                    .map_err(|e| Error::arrow(Some(path), e))?,
            )),
            #[cfg(feature = "ipc")]
            TableFormat::Arrow => Inner::Arrow(Box::new(
                arrow_ipc::writer::FileWriter::try_new(file, schema)
                    .map_err(|e| Error::arrow(Some(path), e))?,
            )),
            #[cfg(feature = "ndjson")]
            TableFormat::Ndjson => Inner::Ndjson(file),
            #[allow(unreachable_patterns)]
            _ => return Err(Error::Invalid("table format not available".into())),
        };
        Ok(Sink {
            path: path.to_path_buf(),
            inner,
        })
    }

    /// Appends a batch.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        match &mut self.inner {
            #[cfg(feature = "parquet")]
            Inner::Parquet(w) => w.write(batch).map_err(|e| Error::Parquet {
                path: self.path.clone(),
                source: e,
            }),
            #[cfg(feature = "csv")]
            Inner::Csv(w) => w
                .write(batch)
                .map_err(|e| Error::arrow(Some(&self.path), e)),
            #[cfg(feature = "ipc")]
            Inner::Arrow(w) => w
                .write(batch)
                .map_err(|e| Error::arrow(Some(&self.path), e)),
            #[cfg(feature = "ndjson")]
            Inner::Ndjson(_) => Err(Error::Invalid(
                "NDJSON tables are written row by row, not from batches".into(),
            )),
            #[allow(unreachable_patterns)]
            _ => Err(Error::Invalid("table format not available".into())),
        }
    }

    /// Appends one row as a JSON line (NDJSON tables only; see [`crate::json::row`]).
    pub(crate) fn write_values(
        &mut self,
        desc: &recfmt_core::StreamDesc,
        values: &[recfmt_core::Value],
        line: &mut String,
    ) -> Result<(), Error> {
        match &mut self.inner {
            #[cfg(feature = "ndjson")]
            Inner::Ndjson(file) => {
                use std::io::Write;
                line.clear();
                crate::json::row(line, desc, values, false);
                line.push('\n');
                file.write_all(line.as_bytes())
                    .map_err(|e| Error::io(&self.path, e))
            }
            #[allow(unreachable_patterns)]
            _ => {
                let _ = (desc, values, line);
                Err(Error::Invalid(
                    "rows as JSON lines go to NDJSON tables only".into(),
                ))
            }
        }
    }

    /// Completes the table (Parquet footer, last flush) and returns the still uncommitted file.
    pub(crate) fn finish(self) -> Result<AtomicFile, Error> {
        match self.inner {
            #[cfg(feature = "parquet")]
            Inner::Parquet(w) => w.into_inner().map_err(|e| Error::Parquet {
                path: self.path.clone(),
                source: e,
            }),
            #[cfg(feature = "csv")]
            Inner::Csv(w) => Ok((*w).into_inner()),
            #[cfg(feature = "ipc")]
            Inner::Arrow(mut w) => {
                w.finish().map_err(|e| Error::arrow(Some(&self.path), e))?;
                w.into_inner()
                    .map_err(|e| Error::arrow(Some(&self.path), e))
            }
            #[cfg(feature = "ndjson")]
            Inner::Ndjson(file) => Ok(file),
            #[allow(unreachable_patterns)]
            _ => Err(Error::Invalid("table format not available".into())),
        }
    }
}

#[cfg(feature = "parquet")]
fn parquet_writer(
    path: &Path,
    file: AtomicFile,
    schema: &SchemaRef,
    options: &ExportOptions,
) -> Result<parquet::arrow::ArrowWriter<AtomicFile>, Error> {
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;

    let parquet_error = |e| Error::Parquet {
        path: path.to_path_buf(),
        source: e,
    };
    let compression = match options.compression {
        ParquetCompression::Zstd => {
            Compression::ZSTD(ZstdLevel::try_new(3).map_err(parquet_error)?)
        }
        ParquetCompression::Snappy => Compression::SNAPPY,
        ParquetCompression::None => Compression::UNCOMPRESSED,
    };
    // The Arrow schema (field metadata such as units included) is stored under
    // `ARROW:schema` by the writer; the schema-level metadata is also written as plain
    // key/value metadata so that readers which ignore the Arrow schema see it.
    // Arrow metadata iterates in key order, so files are reproducible.
    let key_values: Vec<KeyValue> = schema
        .metadata()
        .iter()
        .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
        .collect();
    let mut props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(options.batch_rows.max(1)))
        .set_key_value_metadata(Some(key_values));
    // Measured signals rarely repeat a float exactly, so a dictionary only costs time and
    // space there (each row group starts a new one); integers, booleans and text keep it.
    let parquet_schema = parquet::arrow::ArrowSchemaConverter::new()
        .convert(schema)
        .map_err(parquet_error)?;
    for column in parquet_schema.columns() {
        if matches!(
            column.physical_type(),
            parquet::basic::Type::FLOAT | parquet::basic::Type::DOUBLE
        ) {
            props = props.set_column_dictionary_enabled(column.path().clone(), false);
        }
    }
    let props = props.build();
    parquet::arrow::ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(parquet_error)
}
