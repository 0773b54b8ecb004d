//! Streams recfmt recordings into Arrow record batches, Parquet and CSV.
//!
//! [`export_tables`] reads a [`RecordingReader`] to the end and writes one table per stream
//! into a directory: `<stream>.parquet` (zstd by default) or `<stream>.csv`. Rows are gathered
//! per stream by a [`StreamBatcher`] into Arrow record batches of at most
//! [`ExportOptions::batch_rows`] rows, which are written as soon as they are full, so memory
//! stays bounded however long the recording is.
//!
//! Arrow types follow the signal dtypes exactly ([`arrow_schema()`]): an `f32` signal is a
//! `Float32` column, a `u8` signal a `UInt8` column, the time column keeps its native type,
//! fixed-shape signals are `FixedSizeList`s and variable-length ones `List`s. Units and
//! source metadata go into the Arrow field and schema metadata, which Parquet files keep.
//! CSV has no nested columns: see the [`csv` layout](#csv-layout) below.
//!
//! Output files are written under a temporary name (`.<name>.partial`) and only renamed to
//! their final names once every table is complete, so a failed export leaves no file that
//! looks whole.
//!
//! ```
//! use recfmt_core::{
//!     DType, FormatInfo, FrameBuf, Header, Integrity, RecordingReader, Result, Schema,
//!     SignalDesc, StreamDesc, TimeBase, Value,
//! };
//! use recfmt_export::{ExportOptions, TableFormat, export_tables};
//!
//! /// A recording held in memory.
//! struct Memory { header: Header, schema: Schema, rows: Vec<FrameBuf>, next: usize, integrity: Integrity }
//!
//! static INFO: FormatInfo = FormatInfo { id: "memory", name: "In-memory rows", extensions: &[] };
//!
//! impl RecordingReader for Memory {
//!     fn format(&self) -> &'static FormatInfo { &INFO }
//!     fn header(&self) -> &Header { &self.header }
//!     fn schema(&self) -> &Schema { &self.schema }
//!     fn integrity(&self) -> &Integrity { &self.integrity }
//!     fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
//!         let Some(row) = self.rows.get(self.next) else { return Ok(false) };
//!         dst.clone_from(row);
//!         self.next += 1;
//!         Ok(true)
//!     }
//! }
//!
//! let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t_us", DType::U64), TimeBase::MICROSECONDS);
//! nav.signals.push(SignalDesc::scalar("x", DType::F32).with_unit("m"));
//! let row = |t: u64, x: f32| FrameBuf { stream: 0, values: vec![Value::UInt(t), Value::Float(x.into())] };
//! let mut reader = Memory {
//!     header: Header { format: "memory", ..Header::default() },
//!     schema: Schema { streams: vec![nav] },
//!     rows: vec![row(0, 0.1), row(1_000, 2.5)],
//!     next: 0,
//!     integrity: Integrity::default(),
//! };
//!
//! let dir = tempfile::tempdir()?;
//! let report = export_tables(&mut reader, dir.path(), &ExportOptions::new(TableFormat::Csv), &mut |_, _| {})?;
//! assert_eq!(report.outputs[0].rows, 2);
//! let text = std::fs::read_to_string(dir.path().join("NAV.csv"))?;
//! assert_eq!(text, "t_us,x\n0,0.1\n1000,2.5\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # CSV layout
//!
//! * One header row with the column names (units are not written).
//! * Scalar signals are one column each: integers in decimal, floats in the shortest text
//!   that reads back to the same value (`0.1` for the `f32` 0.1; `NaN`, `inf`, `-inf`),
//!   booleans as `true`/`false`, bytes as lowercase hex, nulls as empty cells (so an empty
//!   string and a null string look the same).
//! * Fixed-shape signals are flattened row-major into one column per element, named
//!   `name[0]`, `name[1]`, ... (one dimension) or `name[0][0]`, `name[0][1]`, ... (more).
//! * Variable-length signals are one column holding a JSON array such as `[1,2,3]` (quoted,
//!   as CSV requires for text with commas); non-finite floats in it are written `NaN`,
//!   `Infinity`, `-Infinity`, as Python's `json` module reads them.
//!
//! # Features
//!
//! `parquet` and `csv` (both on by default) enable the two table formats; without one,
//! exporting to it fails with [`Error::Invalid`]. The Arrow mapping and [`StreamBatcher`] are
//! always available.

mod batch;
#[cfg(feature = "csv")]
mod csv;
#[cfg(feature = "csv")]
mod csv_cell;
mod error;
#[cfg(feature = "hdf5")]
pub mod hdf5;
pub mod json;
mod mapping;
#[cfg(feature = "mcap")]
pub mod mcap;
mod names;
#[cfg(feature = "parquet")]
mod parquet_footer;
mod partition;
mod pending;
mod sink;
#[cfg(feature = "parquet")]
mod spill;
mod table_writer;
mod writers;

use std::path::{Path, PathBuf};
use std::str::FromStr;

use recfmt_core::{AtomicFile, BatchSet, CreatedDirs, DirLock, Metadata, RecordingReader, Replace};

pub use arrow_array::{RecordBatch, RecordBatchReader, RecordBatchWriter};
pub use arrow_schema::{ArrowError, SchemaRef};
pub use batch::{StreamBatcher, record_batch};
pub use error::Error;
pub use mapping::{
    DTYPE_KEY, SHAPE_KEY, STREAM_KEY, UNIT_KEY, arrow_field, arrow_schema, arrow_schema_with,
    arrow_type, signal_type,
};

pub use names::{RENAMED_COLUMNS_KEY, column_names, renamed_columns};

// Selection, time ranges, merges and the batch loop live in `recfmt-select` (no Arrow), so
// that crates that only select (plots) do not compile Arrow; re-exported here unchanged.
pub use partition::{
    SOURCE_COLUMN, check_partitioned, export_partitioned, partition_dir, source_name,
};
pub use pending::PendingMetadata;
pub use recfmt_select::{
    Alignment, MERGED_STREAM, MergedReader, OpenReader, Pattern, Pipeline, RASTER_DEFAULT_MAX_ROWS,
    SelectedReader, Selection, StreamBatchReader, TimeBound, TimeRange, check_raster_rows,
    count_rows, raster_rows,
};
#[cfg(feature = "csv")]
pub use table_writer::CsvWriter;
pub use table_writer::TableWriter;

/// The file format of exported tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TableFormat {
    /// Apache Parquet, one file per stream.
    Parquet,
    /// Comma-separated values with a header row, one file per stream.
    Csv,
    /// Arrow IPC file format (Feather v2), one file per stream.
    Arrow,
    /// Newline-delimited JSON, one object per row, one file per stream.
    Ndjson,
}

impl TableFormat {
    /// The file name extension, without the dot: `"parquet"` or `"csv"`.
    pub fn extension(self) -> &'static str {
        match self {
            TableFormat::Parquet => "parquet",
            TableFormat::Csv => "csv",
            TableFormat::Arrow => "arrow",
            TableFormat::Ndjson => "ndjson",
        }
    }
}

impl FromStr for TableFormat {
    type Err = Error;

    /// Parses `parquet` or `csv` (any case).
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "parquet" | "pq" => Ok(TableFormat::Parquet),
            "csv" => Ok(TableFormat::Csv),
            "arrow" | "ipc" | "feather" => Ok(TableFormat::Arrow),
            "ndjson" | "jsonl" => Ok(TableFormat::Ndjson),
            other => Err(Error::Invalid(format!(
                "unknown table format {other:?} (expected parquet, csv, arrow or ndjson)"
            ))),
        }
    }
}

/// The compression of Parquet column chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ParquetCompression {
    /// Zstandard at level 1, as pyarrow writes it (the default).
    #[default]
    Zstd,
    /// Snappy.
    Snappy,
    /// No compression.
    None,
}

impl FromStr for ParquetCompression {
    type Err = Error;

    /// Parses `zstd`, `snappy` or `none` (also `uncompressed`), any case.
    fn from_str(s: &str) -> Result<Self, Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "zstd" => Ok(ParquetCompression::Zstd),
            "snappy" => Ok(ParquetCompression::Snappy),
            "none" | "uncompressed" => Ok(ParquetCompression::None),
            other => Err(Error::Invalid(format!(
                "unknown Parquet compression {other:?} (expected zstd, snappy or none)"
            ))),
        }
    }
}

/// How [`export_tables`] writes its tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// Table file format.
    pub format: TableFormat,
    /// Rows per record batch: each stream buffers at most this many rows before handing them
    /// to its table; a batch of large rows is handed on earlier, once it reaches about
    /// `BatchSet::MAX_BATCH_BYTES` of values. Must be at least 1.
    pub batch_rows: usize,
    /// Parquet: rows per row group, at most (pyarrow's 1 Mi by default). Must be at least 1.
    pub row_group_rows: usize,
    /// Parquet: a row group is also closed once its encoded pages reach about this many bytes
    /// (64 MiB by default).
    pub row_group_bytes: usize,
    /// Parquet: bytes of encoded pages that the row groups being built by all tables of one
    /// export keep in memory, at most (8 MiB by default). Pages past it wait in an unnamed
    /// temporary file in the output's directory until their row group is written, so row
    /// groups of 1 Mi rows over many streams do not raise peak memory; the files are the same
    /// byte for byte either way. `0` sends every page to disk.
    pub row_group_memory: usize,
    /// Parquet: float columns (`f32`, `f64`, and their fixed-size arrays) in the
    /// `BYTE_STREAM_SPLIT` encoding, each byte of the values stored together (as HDF5's
    /// shuffle filter does): smooth signals compress several times smaller (the 400 MB bench
    /// session: 169 MB to 32 MB) and the conversion takes less time. Off by default: pyarrow,
    /// DuckDB (0.10 on), Spark (parquet-mr 1.12 on) and polars read it, older readers do not.
    pub byte_stream_split: bool,
    /// Parquet compression (ignored for CSV).
    pub compression: ParquetCompression,
    /// CSV dialect (ignored for other formats).
    pub csv: CsvOptions,
    /// Extra schema-level metadata added to every table (e.g. `source.file`,
    /// `source.sha256`); it overrides entries of the same name.
    pub metadata: Metadata,
    /// More schema-level metadata, still being computed when the export starts (the input's
    /// SHA-256): each table waits for it when it is opened, except Parquet's, which take it
    /// when their footer is written (in the `ARROW:schema` entry and as key/value entries
    /// after `metadata`'s), so computing it overlaps the writing. It overrides `metadata`.
    pub pending_metadata: Option<PendingMetadata>,
    /// Whether existing tables of the same names may be replaced (the command line's
    /// `--force`); otherwise the export is refused before anything is read.
    pub replace: Replace,
    /// Threads that encode tables beside the caller's, which decodes: `0` for one per core
    /// (at most 4), `1` to encode every table on one worker. The files hold the same values
    /// either way.
    pub threads: usize,
}

impl ExportOptions {
    /// Default rows per batch.
    pub const DEFAULT_BATCH_ROWS: usize = 65_536;
    /// Default rows per Parquet row group: 1 Mi, as pyarrow writes them.
    pub const DEFAULT_ROW_GROUP_ROWS: usize = 1 << 20;
    /// Default bytes per Parquet row group: 64 MiB of encoded pages.
    pub const DEFAULT_ROW_GROUP_BYTES: usize = 64 << 20;
    /// Default bytes of Parquet pages in memory for row groups in progress.
    pub const DEFAULT_ROW_GROUP_MEMORY: usize = 8 << 20;
    /// The memory all Parquet tables of one export hold in row groups not yet written, beside
    /// [`ExportOptions::row_group_memory`] of finished pages: values not yet encoded into a
    /// page (up to a page per column), dictionaries. Past it, the largest row group in
    /// progress is written early, so an export of very many wide streams stays flat too. With
    /// pages spilled to disk, a 400 MB USVLOG session of 15 streams held at most 17 MB in all
    /// (8 MiB of it pages) and keeps row groups of 1 Mi rows under 12 MiB; rows of large
    /// arrays (a NanoVer frame: a page holds whole rows) fill it with few rows, and with 32 MiB
    /// a 1 GB trajectory peaked 35 MB higher and spent 0.5 s more spilling its pages.
    pub const ROW_GROUP_BUDGET: usize = 12 << 20;

    /// Options for `format` with 65 536 rows per batch, Parquet row groups of 1 Mi rows or
    /// 64 MiB, zstd and no extra metadata.
    pub fn new(format: TableFormat) -> Self {
        ExportOptions {
            format,
            batch_rows: Self::DEFAULT_BATCH_ROWS,
            row_group_rows: Self::DEFAULT_ROW_GROUP_ROWS,
            row_group_bytes: Self::DEFAULT_ROW_GROUP_BYTES,
            row_group_memory: Self::DEFAULT_ROW_GROUP_MEMORY,
            byte_stream_split: false,
            compression: ParquetCompression::default(),
            csv: CsvOptions::default(),
            metadata: Metadata::new(),
            pending_metadata: None,
            replace: Replace::Never,
            threads: 0,
        }
    }
}

/// CSV dialect options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsvOptions {
    /// Field delimiter (default `,`).
    pub delimiter: u8,
    /// Write a second header row with each column's unit (empty where there is none).
    pub units_row: bool,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            delimiter: b',',
            units_row: false,
        }
    }
}

/// One table written by [`export_tables`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamOutput {
    /// Stream name as in the schema.
    pub stream: String,
    /// The file written.
    pub path: PathBuf,
    /// Rows written.
    pub rows: u64,
}

/// What [`export_tables`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExportReport {
    /// One entry per stream that had rows, in schema order. Streams without rows get no file.
    pub outputs: Vec<StreamOutput>,
}

/// Turns a stream name into a file name stem: path separators, characters that Windows
/// forbids in file names and control characters become `_`; an empty name, `.` and `..`
/// become `_` too.
///
/// ```
/// assert_eq!(recfmt_export::file_stem("vehicle/1"), "vehicle_1");
/// assert_eq!(recfmt_export::file_stem(".."), "_");
/// assert_eq!(recfmt_export::file_stem("NAV"), "NAV");
/// ```
pub fn file_stem(stream: &str) -> String {
    let stem: String = stream
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c if c.is_control() => '_',
            c => c,
        })
        .collect();
    if stem.is_empty() || stem == "." || stem == ".." {
        "_".into()
    } else {
        stem
    }
}

/// File name stems for all streams: sanitized names ([`file_stem`]), made unique (ignoring
/// case, for case-insensitive file systems) by appending `_2`, `_3`, ... (the rule of
/// [`column_names`]).
pub(crate) fn unique_stems(names: &[&str]) -> Vec<String> {
    let mut taken = names::UniqueNames::ignoring_case();
    names
        .iter()
        .map(|name| taken.claim(&file_stem(name)))
        .collect()
}

/// Output paths for all streams: `out_dir/<unique stem>.<ext>`.
fn output_paths(out_dir: &Path, names: &[&str], ext: &str) -> Vec<PathBuf> {
    unique_stems(names)
        .into_iter()
        .map(|stem| out_dir.join(format!("{stem}.{ext}")))
        .collect()
}

/// Moves every finished table into place as one output ([`recfmt_core::atomic::commit_all`]):
/// all of them, or none when one move fails.
pub(crate) fn commit_all(finished: Vec<writers::Finished>) -> Result<Vec<StreamOutput>, Error> {
    let (files, outputs): (Vec<AtomicFile>, Vec<StreamOutput>) =
        finished.into_iter().map(|f| (f.file, f.output)).unzip();
    recfmt_core::atomic::commit_all(files).map_err(|(i, e)| Error::io(&outputs[i].path, e))?;
    Ok(outputs)
}

/// The tables [`export_tables`] writes for `schema` into `out_dir`, refused before anything is
/// read when one exists and [`ExportOptions::replace`] does not allow replacing it (or it is
/// not a regular file). Front ends call it before they start reading the input for anything
/// else (a digest of the input).
pub fn check_tables(
    schema: &recfmt_core::Schema,
    out_dir: &Path,
    options: &ExportOptions,
) -> Result<Vec<PathBuf>, Error> {
    let names: Vec<&str> = schema.streams.iter().map(|s| s.name.as_str()).collect();
    let paths = output_paths(out_dir, &names, options.format.extension());
    for path in &paths {
        recfmt_core::atomic::check_target(path, options.replace).map_err(|e| Error::io(path, e))?;
    }
    Ok(paths)
}

/// Reads `reader` to the end and writes one table per stream into `out_dir`.
///
/// Each stream with rows becomes `out_dir/<stream>.<ext>` ([`file_stem`] of the stream name;
/// if two streams map to the same name, later ones get `_2`, `_3`, ...). `out_dir` is created
/// when missing. Each stream buffers at most [`ExportOptions::batch_rows`] rows.
/// `progress` is called every few thousand rows and at the end with
/// [`RecordingReader::progress`].
///
/// Tables are written to temporary files and renamed only after the whole recording was read
/// and every table completed. On error nothing is renamed and every temporary file is
/// removed, so a failed export leaves no table behind (existing files of the same names are
/// left as they were).
pub fn export_tables(
    reader: &mut dyn RecordingReader,
    out_dir: &Path,
    options: &ExportOptions,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<ExportReport, Error> {
    check_options(options)?;
    // Folders this run makes go again (only when empty) if it fails or is interrupted.
    let created = CreatedDirs::create(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let lock = DirLock::acquire(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let report = export_tables_locked(reader, out_dir, options, progress);
    drop(lock);
    if report.is_ok() {
        created.keep();
    }
    report
}

/// Refuses sizes of zero and table formats this build left out.
pub(crate) fn check_options(options: &ExportOptions) -> Result<(), Error> {
    for (name, value) in [
        ("batch_rows", options.batch_rows),
        ("row_group_rows", options.row_group_rows),
        ("row_group_bytes", options.row_group_bytes),
    ] {
        if value == 0 {
            return Err(Error::Invalid(format!("{name} must be at least 1")));
        }
    }
    sink::check_format(options.format)
}

/// [`export_tables`] once `out_dir` exists and is locked for this run.
fn export_tables_locked(
    reader: &mut dyn RecordingReader,
    out_dir: &Path,
    options: &ExportOptions,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<ExportReport, Error> {
    let header = reader.header().clone();
    let schema = reader.schema().clone();
    let names: Vec<&str> = schema.streams.iter().map(|s| s.name.as_str()).collect();
    let paths = output_paths(out_dir, &names, options.format.extension());
    // Refused before anything is read: an existing table is replaced only when allowed.
    for path in &paths {
        recfmt_core::atomic::check_target(path, options.replace).map_err(|e| Error::io(path, e))?;
    }
    let plans = paths
        .into_iter()
        .zip(&schema.streams)
        .map(|(path, desc)| writers::TablePlan {
            schema: std::sync::Arc::new(mapping::arrow_schema_with(
                &header,
                desc,
                &options.metadata,
            )),
            desc: desc.clone(),
            path,
            constant: None,
        })
        .collect();

    // Decoding here, encoding on the writers' threads.
    let mut writers = writers::Writers::start(plans, options)?;
    let batches = BatchSet::new(&schema, options.batch_rows);
    read_all_batches(reader, batches, progress, &mut |batch| {
        writers.send(batch).map(|()| true)
    })?;
    let outputs = commit_all(writers.finish()?)?;

    let (done, total) = reader.progress();
    progress(done, total);
    Ok(ExportReport { outputs })
}

/// Reads `reader` to the end and writes every stream into one HDF5 file at `path`: a group per
/// stream, a chunked dataset per column (see [`hdf5`] for the layout). The file appears only
/// when complete. Streams are declared up front, so streams without rows are empty groups.
/// Returns one [`StreamOutput`] per stream (all with `path`).
#[cfg(feature = "hdf5")]
pub fn export_hdf5(
    reader: &mut dyn RecordingReader,
    path: &Path,
    options: &hdf5::Hdf5Options,
    batch_rows: usize,
    progress: &mut dyn FnMut(u64, Option<u64>),
) -> Result<ExportReport, Error> {
    if batch_rows == 0 {
        return Err(Error::Invalid("batch_rows must be at least 1".into()));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let header = reader.header().clone();
    let schema = reader.schema().clone();
    let writer = hdf5::Hdf5Writer::create(path, &header, &schema.streams, options)?;
    let schemas: Vec<arrow_schema::SchemaRef> = schema
        .streams
        .iter()
        .map(|s| std::sync::Arc::new(mapping::arrow_schema_with(&header, s, &options.metadata)))
        .collect();

    // Decoding here; building, compressing and writing chunks on the writer's thread.
    let (queue, batches_in) =
        std::sync::mpsc::sync_channel::<recfmt_core::StreamBatch>(HDF5_QUEUE_DEPTH);
    let encoder = std::thread::spawn(move || -> Result<hdf5::Hdf5Writer, Error> {
        let mut writer = writer;
        for batch in batches_in {
            let index = batch.stream();
            let schema = schemas.get(index).ok_or_else(|| {
                Error::Invalid(format!(
                    "the reader returned a row of stream {index}, which the schema lacks"
                ))
            })?;
            writer.write_batch(index, &batch::record_batch(schema, batch)?)?;
        }
        Ok(writer)
    });
    let join = |encoder: std::thread::JoinHandle<Result<hdf5::Hdf5Writer, Error>>| {
        encoder
            .join()
            .unwrap_or_else(|_| Err(Error::Invalid("the HDF5 writer thread panicked".into())))
    };
    let batches = BatchSet::new(&schema, batch_rows);
    // A failed send means the writer stopped on an error, which `join` reports.
    let read = read_all_batches(reader, batches, progress, &mut |batch| {
        Ok(queue.send(batch).is_ok())
    });
    drop(queue);
    let writer = join(encoder);
    read?;
    let writer = writer?;
    let outputs = schema
        .streams
        .iter()
        .enumerate()
        .map(|(i, s)| StreamOutput {
            stream: s.name.clone(),
            path: path.to_path_buf(),
            rows: writer.rows(i).unwrap_or(0),
        })
        .collect();
    writer.finish()?;
    let (done, total) = reader.progress();
    progress(done, total);
    Ok(ExportReport { outputs })
}

/// Batches queued for the HDF5 writer's thread before decoding waits. Batches come in bursts,
/// one per stream whenever a batch set fills: with room for 4, decoding waited out each burst
/// and the writer then waited for the next (a 400 MB session of 15 streams took 0.67 s; 0.60 s
/// with 16, at 10-15 MB more peak memory).
#[cfg(feature = "hdf5")]
const HDF5_QUEUE_DEPTH: usize = 16;

/// Reads `reader` to the end in `batches`, handing every batch ready to be written to `send`
/// (which returns false to stop early) and reporting progress after each.
fn read_all_batches(
    reader: &mut dyn RecordingReader,
    batches: BatchSet,
    progress: &mut dyn FnMut(u64, Option<u64>),
    send: &mut dyn FnMut(recfmt_core::StreamBatch) -> Result<bool, Error>,
) -> Result<(), Error> {
    let mut batches = StreamBatchReader::new(reader, batches);
    while let Some(batch) = batches.next() {
        if !send(batch?)? {
            return Ok(());
        }
        let (done, total) = batches.reader().progress();
        progress(done, total);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names_are_sanitized_and_unique() {
        let paths = output_paths(Path::new("out"), &["a/b", "a_b", "A_B", "x"], "csv");
        let names: Vec<String> = paths
            .iter()
            .map(|p| {
                p.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(names, ["a_b.csv", "a_b_2.csv", "A_B_3.csv", "x.csv"]);
    }

    #[test]
    fn option_names_parse() {
        assert_eq!("CSV".parse::<TableFormat>().ok(), Some(TableFormat::Csv));
        assert_eq!(
            "uncompressed".parse::<ParquetCompression>().ok(),
            Some(ParquetCompression::None)
        );
        assert!("xlsx".parse::<TableFormat>().is_err());
        assert_eq!(ExportOptions::new(TableFormat::Parquet).batch_rows, 65_536);
    }
}
