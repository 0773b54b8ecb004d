//! Output tables: one open file per stream, written under a temporary name.

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use recfmt_core::AtomicFile;

use crate::{Error, ExportOptions, TableFormat};

#[cfg(feature = "parquet")]
use crate::ParquetCompression;
#[cfg(feature = "parquet")]
use crate::parquet_footer::{FooterTail, retype_float_orders};

/// A Parquet table: the writer, and its schema for the footer's column orders.
#[cfg(feature = "parquet")]
pub(crate) struct ParquetTable {
    writer: parquet::arrow::ArrowWriter<FooterTail<AtomicFile>>,
    schema: parquet::schema::types::SchemaDescriptor,
    /// Metadata still being computed, and the Arrow schema it joins in the footer.
    pending: Option<(crate::PendingMetadata, SchemaRef)>,
}

/// What the Parquet tables of one export share: the memory bound of their pages in progress.
#[cfg(feature = "parquet")]
pub(crate) type PageMemory = std::sync::Arc<crate::spill::PageMemory>;
/// Nothing to share without Parquet.
#[cfg(not(feature = "parquet"))]
pub(crate) type PageMemory = ();

/// The shared page memory of an export written with `options`.
pub(crate) fn page_memory(options: &ExportOptions) -> PageMemory {
    #[cfg(feature = "parquet")]
    return crate::spill::PageMemory::new(options.row_group_memory);
    #[cfg(not(feature = "parquet"))]
    let _ = options;
}

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
    Parquet(Box<ParquetTable>),
    #[cfg(feature = "csv")]
    Csv(Box<crate::csv::CsvSink<AtomicFile>>),
    #[cfg(feature = "ipc")]
    Arrow(Box<arrow_ipc::writer::FileWriter<AtomicFile>>),
    #[cfg(feature = "ndjson")]
    /// The file, and the writer of its rows, made on the first row.
    Ndjson(Box<AtomicFile>, Option<crate::json::RowWriter>),
}

/// Whether tables of `format` take [`ExportOptions::pending_metadata`] when they are finished
/// (Parquet, in its footer) instead of waiting for it when they are opened with their schema.
pub(crate) fn takes_pending_metadata_at_finish(format: TableFormat) -> bool {
    format == TableFormat::Parquet
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
    /// `first`, the table's first batch when known, lets Parquet leave out dictionaries that
    /// would not pay. Parquet pages in progress count against `pages`.
    pub(crate) fn create(
        path: &Path,
        schema: &SchemaRef,
        options: &ExportOptions,
        first: Option<&RecordBatch>,
        pages: &PageMemory,
    ) -> Result<Self, Error> {
        check_format(options.format)?;
        #[cfg(not(feature = "parquet"))]
        let _ = (first, pages);
        #[cfg(not(any(feature = "parquet", feature = "csv", feature = "ipc")))]
        let _ = schema;
        let file = AtomicFile::create(path, options.replace).map_err(|e| Error::io(path, e))?;
        let inner = match options.format {
            #[cfg(feature = "parquet")]
            TableFormat::Parquet => Inner::Parquet(Box::new(parquet_table(
                path, file, schema, options, first, pages,
            )?)),
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
            TableFormat::Ndjson => Inner::Ndjson(Box::new(file), None),
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
            Inner::Parquet(t) => t.writer.write(batch).map_err(|e| Error::Parquet {
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
            Inner::Ndjson(..) => {
                let _ = batch;
                Err(Error::Invalid(
                    "NDJSON tables are written row by row, not from batches".into(),
                ))
            }
            #[allow(unreachable_patterns)]
            _ => Err(Error::Invalid("table format not available".into())),
        }
    }

    /// Bytes of memory held by a Parquet row group not yet written (0 for other formats):
    /// parquet-rs's estimate of what its column writers hold (pages kept in memory,
    /// dictionaries, values not yet encoded), not of the row group's encoded size, which
    /// counts spilled pages too.
    pub(crate) fn pending_bytes(&self) -> usize {
        match &self.inner {
            #[cfg(feature = "parquet")]
            Inner::Parquet(t) => t.writer.memory_size(),
            #[allow(unreachable_patterns)]
            _ => 0,
        }
    }

    /// Writes the Parquet row group being built now, however small (nothing for other formats).
    pub(crate) fn close_row_group(&mut self) -> Result<(), Error> {
        match &mut self.inner {
            #[cfg(feature = "parquet")]
            Inner::Parquet(t) => t.writer.flush().map_err(|e| Error::Parquet {
                path: self.path.clone(),
                source: e,
            }),
            #[allow(unreachable_patterns)]
            _ => Ok(()),
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
            Inner::Ndjson(file, rows) => {
                use std::io::Write;
                line.clear();
                rows.get_or_insert_with(|| crate::json::RowWriter::new(desc, false))
                    .write(line, values);
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
            Inner::Parquet(t) => {
                let ParquetTable {
                    mut writer,
                    schema,
                    pending,
                } = *t;
                if let Some((pending, arrow_schema)) = pending {
                    append_pending_metadata(&mut writer, &arrow_schema, pending.wait()?);
                }
                let mut file = writer.into_inner().map_err(|e| Error::Parquet {
                    path: self.path.clone(),
                    source: e,
                })?;
                retype_float_orders(&mut file, &schema).map_err(|e| Error::io(&self.path, e))?;
                Ok(file.into_inner())
            }
            #[cfg(feature = "csv")]
            Inner::Csv(w) => Ok((*w).into_inner()),
            #[cfg(feature = "ipc")]
            Inner::Arrow(mut w) => {
                w.finish().map_err(|e| Error::arrow(Some(&self.path), e))?;
                w.into_inner()
                    .map_err(|e| Error::arrow(Some(&self.path), e))
            }
            #[cfg(feature = "ndjson")]
            Inner::Ndjson(file, _) => Ok(*file),
            #[allow(unreachable_patterns)]
            _ => Err(Error::Invalid("table format not available".into())),
        }
    }
}

/// True for a scalar integer column that is strictly increasing, or whose values are more than
/// half distinct: a dictionary cannot make it smaller.
#[cfg(feature = "parquet")]
fn integers_rarely_repeat(column: &arrow_array::ArrayRef) -> bool {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
    };
    use arrow_schema::DataType;

    fn check<T>(values: impl Iterator<Item = T> + Clone, len: usize) -> bool
    where
        T: PartialOrd + Eq + std::hash::Hash + Copy,
    {
        let mut pairs = values.clone().zip(values.clone().skip(1));
        if pairs.all(|(a, b)| a < b) {
            return true;
        }
        let distinct: std::collections::HashSet<T> = values.collect();
        distinct.len() * 2 > len
    }
    // Small tables gain nothing either way; keep the default there.
    const MIN_ROWS: usize = 64;
    let len = column.len();
    if column.null_count() > 0 || len < MIN_ROWS {
        return false;
    }
    macro_rules! primitive {
        ($t:ty) => {
            check(column.as_primitive::<$t>().values().iter().copied(), len)
        };
    }
    match column.data_type() {
        DataType::Int8 => primitive!(Int8Type),
        DataType::Int16 => primitive!(Int16Type),
        DataType::Int32 => primitive!(Int32Type),
        DataType::Int64 => primitive!(Int64Type),
        DataType::UInt8 => primitive!(UInt8Type),
        DataType::UInt16 => primitive!(UInt16Type),
        DataType::UInt32 => primitive!(UInt32Type),
        DataType::UInt64 => primitive!(UInt64Type),
        _ => false,
    }
}

/// The zstd level of Parquet pages: 1, Arrow C++'s (and so pyarrow's) default, which keeps
/// most of level 3's ratio on sampled signals at a fraction of its time.
#[cfg(feature = "parquet")]
const ZSTD_LEVEL: i32 = 1;

#[cfg(feature = "parquet")]
fn parquet_table(
    path: &Path,
    file: AtomicFile,
    schema: &SchemaRef,
    options: &ExportOptions,
    first: Option<&RecordBatch>,
    pages: &PageMemory,
) -> Result<ParquetTable, Error> {
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::{EnabledStatistics, WriterProperties};

    let parquet_error = |e| Error::Parquet {
        path: path.to_path_buf(),
        source: e,
    };
    let compression = match options.compression {
        ParquetCompression::Zstd => {
            Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL).map_err(parquet_error)?)
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
    // Statistics per column chunk, as pyarrow writes by default, not per page: the page-level
    // column index is held in memory for every row group until the footer is written, so it
    // made peak memory grow with the input (138 MB at 1 GB, 176 MB at 10 GB of USVLOG).
    let mut props = WriterProperties::builder()
        .set_compression(compression)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        // Row groups as pyarrow writes them (1 Mi rows), closed earlier once parquet-rs
        // estimates their encoded pages at the byte bound (rows of large arrays).
        .set_max_row_group_row_count(Some(options.row_group_rows.max(1)))
        .set_max_row_group_bytes(Some(options.row_group_bytes.max(1)))
        .set_key_value_metadata(Some(key_values));
    // Measured signals rarely repeat a float exactly, so a dictionary only costs time and
    // space there (each row group starts a new one); integers, booleans and text keep it.
    let parquet_schema = parquet::arrow::ArrowSchemaConverter::new()
        .convert(schema)
        .map_err(parquet_error)?;
    // Integer columns whose first batch is strictly increasing (time, counters) or mostly
    // distinct would only fill a dictionary until it gives up: they go without one too.
    let unique_integers: Vec<&str> = first
        .map(|batch| {
            schema
                .fields()
                .iter()
                .zip(batch.columns())
                .filter(|(_, column)| integers_rarely_repeat(column))
                .map(|(field, _)| field.name().as_str())
                .collect()
        })
        .unwrap_or_default();
    for column in parquet_schema.columns() {
        let path = column.path().parts();
        let unique = path.len() == 1 && unique_integers.contains(&path[0].as_str());
        let float = matches!(
            column.physical_type(),
            parquet::basic::Type::FLOAT | parquet::basic::Type::DOUBLE
        );
        if unique || float {
            props = props.set_column_dictionary_enabled(column.path().clone(), false);
        }
        if float && options.byte_stream_split {
            props = props.set_column_encoding(
                column.path().clone(),
                parquet::basic::Encoding::BYTE_STREAM_SPLIT,
            );
        }
    }
    let props = props.build();
    let file = FooterTail::new(file, &parquet_schema);
    // With metadata still pending, `ARROW:schema` is written with it, at the footer
    // (`takes_pending_metadata_at_finish`).
    let pending = options.pending_metadata.clone();
    let writer_options = parquet::arrow::arrow_writer::ArrowWriterOptions::new()
        .with_properties(props)
        .with_skip_arrow_metadata(pending.is_some())
        .with_page_store_factory(crate::spill::TablePages::new(pages, path));
    let writer =
        parquet::arrow::ArrowWriter::try_new_with_options(file, schema.clone(), writer_options)
            .map_err(parquet_error)?;
    Ok(ParquetTable {
        writer,
        schema: parquet_schema,
        pending: pending.map(|p| (p, schema.clone())),
    })
}

/// Adds `pending` to the footer of a table of `schema` started without it: as key/value
/// entries after the schema's own, and in the `ARROW:schema` entry (`schema` with `pending`
/// merged in), which Arrow readers take the schema's metadata from.
#[cfg(feature = "parquet")]
fn append_pending_metadata(
    writer: &mut parquet::arrow::ArrowWriter<FooterTail<AtomicFile>>,
    schema: &SchemaRef,
    pending: &recfmt_core::Metadata,
) {
    use parquet::file::metadata::KeyValue;
    use parquet::file::properties::WriterProperties;

    for (key, value) in pending {
        writer.append_key_value_metadata(KeyValue::new(key.clone(), value.clone()));
    }
    let mut metadata = schema.metadata().clone();
    metadata.extend(pending.iter().map(|(k, v)| (k.clone(), v.clone())));
    let merged = arrow_schema::Schema::new_with_metadata(schema.fields().clone(), metadata);
    // parquet-rs encodes `ARROW:schema` into writer properties only; take it from there.
    let mut scratch = WriterProperties::builder().build();
    parquet::arrow::add_encoded_arrow_schema_to_metadata(&merged, &mut scratch);
    let encoded = scratch
        .key_value_metadata()
        .into_iter()
        .flatten()
        .find(|kv| kv.key == parquet::arrow::ARROW_SCHEMA_META_KEY);
    if let Some(kv) = encoded {
        writer.append_key_value_metadata(kv.clone());
    }
}

#[cfg(all(test, feature = "parquet"))]
mod tests {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int32Array, UInt64Array};

    use super::integers_rarely_repeat;

    #[test]
    fn dictionaries_are_left_out_where_values_do_not_repeat() {
        let time: ArrayRef = Arc::new(UInt64Array::from_iter_values((0..1000).map(|t| t * 10)));
        let modes: ArrayRef = Arc::new(Int32Array::from_iter_values((0..1000).map(|i| i % 4)));
        let noise: ArrayRef = Arc::new(Int32Array::from_iter_values(
            (0..1000).map(|i: i32| i.wrapping_mul(7919) % 997),
        ));
        let short: ArrayRef = Arc::new(UInt64Array::from_iter_values(0..10));
        assert!(integers_rarely_repeat(&time));
        assert!(!integers_rarely_repeat(&modes));
        assert!(integers_rarely_repeat(&noise));
        assert!(!integers_rarely_repeat(&short));
    }
}
