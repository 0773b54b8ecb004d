//! A recording opened for reading, and its streams as Arrow record batches.
//!
//! [`Recording::batches`] reads one stream as an [`arrow_array::RecordBatchReader`]
//! ([`Batches`]); [`Recording::stream_batches`] reads several in one pass over the file
//! ([`StreamBatches`]). Both read through [`recfmt_export::StreamBatchReader`], the loop every
//! exporter uses, with the selection and time range of [`recfmt_export::SelectedReader`]:
//! columns that are not wanted, and whole streams, are skipped, undecoded where the format
//! allows.
//!
//! Errors: see [`Batches`].
//!
//! [`arrow_array::RecordBatchReader`]: recfmt_export::RecordBatchReader

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use recfmt_core::{Header, Integrity, Metadata, RecordingReader, Schema};
use recfmt_export::{
    ArrowError, Pattern, Pipeline, RecordBatch, RecordBatchReader, SchemaRef, SelectedReader,
    Selection, StreamBatchReader, TimeBound,
};

use crate::{Error, Result};

/// A recording opened by [`crate::open`] or [`crate::open_with`]: its reader and the path it
/// was opened from.
///
/// ```
/// let path = "../../tests/fixtures/generated/usvlog/all_types";
/// let recording = recfmt::open(path)?;
/// assert_eq!(recording.header().format, "usvlog");
/// assert!(recording.schema().stream_index("REC_NAV_SOLUTION").is_some());
/// # Ok::<(), recfmt::Error>(())
/// ```
pub struct Recording {
    path: PathBuf,
    reader: Box<dyn RecordingReader>,
}

impl fmt::Debug for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recording")
            .field("path", &self.path)
            .field("format", &self.reader.header().format)
            .finish_non_exhaustive()
    }
}

impl Recording {
    /// A recording read by `reader`, opened from `path` (which error messages name).
    pub fn new(path: impl Into<PathBuf>, reader: Box<dyn RecordingReader>) -> Self {
        Recording {
            path: path.into(),
            reader,
        }
    }

    /// The path the recording was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the recording says about itself.
    pub fn header(&self) -> &Header {
        self.reader.header()
    }

    /// Its streams and their signals.
    pub fn schema(&self) -> &Schema {
        self.reader.schema()
    }

    /// What has been lost so far (final once the recording has been read to the end).
    pub fn integrity(&self) -> &Integrity {
        self.reader.integrity()
    }

    /// The reader, for reading row by row ([`RecordingReader::read_frame`]).
    pub fn reader_mut(&mut self) -> &mut dyn RecordingReader {
        self.reader.as_mut()
    }

    /// The reader, given back.
    pub fn into_reader(self) -> Box<dyn RecordingReader> {
        self.reader
    }

    /// Stream `stream`, every column, as Arrow record batches of at most
    /// [`BatchOptions::DEFAULT_BATCH_ROWS`] rows.
    ///
    /// ```
    /// let path = "../../tests/fixtures/generated/usvlog/all_types";
    /// let mut rows = 0;
    /// for batch in recfmt::open(path)?.batches("REC_NAV_SOLUTION")? {
    ///     rows += batch?.num_rows();
    /// }
    /// assert_eq!(rows, 200);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// When the recording has no stream of that name (the message names the stream, the
    /// file and the streams there are).
    pub fn batches(self, stream: &str) -> Result<Batches> {
        self.batches_with(stream, &BatchOptions::default())
    }

    /// Stream `stream` as Arrow record batches, with the columns, time range and batch size of
    /// `options`.
    ///
    /// ```
    /// use recfmt::{BatchOptions, export::TimeBound};
    ///
    /// let path = "../../tests/fixtures/generated/usvlog/all_types";
    /// let options = BatchOptions::default()
    ///     .columns(["x"])
    ///     .start(TimeBound::Relative(0.5))
    ///     .batch_rows(16);
    /// let batches = recfmt::open(path)?.batches_with("REC_NAV_SOLUTION", &options)?;
    /// // The time column always comes along.
    /// assert_eq!(batches.schema().fields().len(), 2);
    /// for batch in batches {
    ///     assert!(batch?.num_rows() <= 16);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// When the recording has no stream `stream`, or the stream has no column of a name in
    /// [`BatchOptions::columns`].
    pub fn batches_with(self, stream: &str, options: &BatchOptions) -> Result<Batches> {
        let streams = self.stream_batches_with(&[stream], options)?;
        Ok(Batches { streams })
    }

    /// Streams `streams`, every column, as Arrow record batches in one pass over the file:
    /// each batch comes with the name of its stream, in the order the batches fill.
    ///
    /// ```
    /// let path = "../../tests/fixtures/generated/usvlog/all_types";
    /// let batches = recfmt::open(path)?.stream_batches(&["REC_NAV_SOLUTION", "REC_ESC_OUTPUT"])?;
    /// assert_eq!(batches.streams().count(), 2);
    /// for batch in batches {
    ///     let (stream, batch) = batch?;
    ///     assert!(stream.starts_with("REC_") && batch.num_rows() > 0);
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// When the recording lacks one of the streams.
    pub fn stream_batches(self, streams: &[&str]) -> Result<StreamBatches> {
        self.stream_batches_with(streams, &BatchOptions::default())
    }

    /// Streams `streams` as Arrow record batches in one pass, with the columns, time range
    /// and batch size of `options` (a column needs to be in one of the streams).
    ///
    /// # Errors
    /// When the recording lacks one of the streams, or none of them has a column of a name
    /// in [`BatchOptions::columns`].
    pub fn stream_batches_with(
        self,
        streams: &[&str],
        options: &BatchOptions,
    ) -> Result<StreamBatches> {
        if options.batch_rows == 0 {
            return Err(Error::Invalid("batch_rows must be at least 1".into()));
        }
        let pipeline = self.pipeline(streams, options)?;
        let Recording { path, reader } = self;
        let selected = SelectedReader::new(reader, &pipeline)?;
        let schemas = selected
            .schema()
            .streams
            .iter()
            .map(|desc| {
                Arc::new(recfmt_export::arrow_schema_with(
                    selected.header(),
                    desc,
                    &options.metadata,
                ))
            })
            .collect();
        Ok(StreamBatches {
            path,
            batches: StreamBatchReader::all(selected, options.batch_rows),
            schemas,
        })
    }

    /// What [`SelectedReader`] is to keep of the recording: `streams`, the columns and rows of
    /// `options`; checked against the schema, so a name that matches nothing is an error.
    fn pipeline(&self, streams: &[&str], options: &BatchOptions) -> Result<Pipeline> {
        let schema = self.schema();
        let mut descs = Vec::with_capacity(streams.len());
        for &name in streams {
            let Some(index) = schema.stream_index(name) else {
                let names: Vec<&str> = schema.streams.iter().map(|s| s.name.as_str()).collect();
                return Err(Error::Invalid(format!(
                    "{}: no stream {name:?} (streams: {})",
                    self.path.display(),
                    names.join(", ")
                )));
            };
            descs.push(&schema.streams[index]);
        }
        let mut pipeline = Pipeline::default();
        pipeline.selection.streams = streams
            .iter()
            .map(|&s| Pattern::Exact(s.to_owned()))
            .collect();
        for column in &options.columns {
            // A composite's name selects its members, as `convert --signal` does.
            let wanted = Selection {
                signals: vec![Pattern::Exact(column.clone())],
                ..Selection::default()
            };
            let known = descs.iter().any(|desc| {
                desc.signals
                    .iter()
                    .any(|s| wanted.keeps_signal(&desc.name, &s.name))
            });
            if !known {
                return Err(Error::Invalid(match descs.as_slice() {
                    [desc] => {
                        let names: Vec<&str> =
                            desc.signals.iter().map(|s| s.name.as_str()).collect();
                        format!(
                            "{}: stream {:?} has no column {column:?} (columns: {})",
                            self.path.display(),
                            desc.name,
                            names.join(", ")
                        )
                    }
                    _ => format!(
                        "{}: none of the streams {streams:?} has a column {column:?}",
                        self.path.display()
                    ),
                }));
            }
        }
        pipeline.selection.signals = options
            .columns
            .iter()
            .map(|c| Pattern::Exact(c.clone()))
            .collect();
        pipeline.range.start = options.start.clone();
        pipeline.range.end = options.end.clone();
        Ok(pipeline)
    }
}

/// What [`Recording::batches_with`] and [`Recording::stream_batches_with`] read: which
/// columns, which rows by time, how many rows per batch. The default reads everything in
/// batches of [`BatchOptions::DEFAULT_BATCH_ROWS`] rows.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchOptions {
    /// The columns to read, by signal name (a composite's name reads all its members;
    /// `stream.signal` names one stream's); empty reads every column. A stream's time column
    /// is always read. Columns keep their order in the stream.
    pub columns: Vec<String>,
    /// The first time kept (inclusive): seconds on the recording's axis, after its first row,
    /// or an RFC 3339 instant.
    pub start: Option<TimeBound>,
    /// The first time no longer kept (exclusive).
    pub end: Option<TimeBound>,
    /// Rows per batch (at least 1). A batch of large rows is handed on earlier, once it holds
    /// about [`recfmt_core::BatchSet::MAX_BATCH_BYTES`] of values.
    pub batch_rows: usize,
    /// Entries added to (and overriding) the schema metadata of every batch (provenance such
    /// as `source.file`).
    pub metadata: Metadata,
}

impl BatchOptions {
    /// Rows per batch unless asked otherwise (as `recfmt convert`).
    pub const DEFAULT_BATCH_ROWS: usize = 65_536;

    /// Reads only `columns` (and the time column).
    pub fn columns<S: Into<String>>(mut self, columns: impl IntoIterator<Item = S>) -> Self {
        self.columns = columns.into_iter().map(Into::into).collect();
        self
    }

    /// Keeps rows from `start` on.
    pub fn start(mut self, start: TimeBound) -> Self {
        self.start = Some(start);
        self
    }

    /// Keeps rows before `end`.
    pub fn end(mut self, end: TimeBound) -> Self {
        self.end = Some(end);
        self
    }

    /// Hands batches on at `rows` rows.
    pub fn batch_rows(mut self, rows: usize) -> Self {
        self.batch_rows = rows;
        self
    }

    /// Adds `metadata` to every batch's schema.
    pub fn metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = metadata;
        self
    }
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            columns: Vec::new(),
            start: None,
            end: None,
            batch_rows: Self::DEFAULT_BATCH_ROWS,
            metadata: Metadata::new(),
        }
    }
}

/// The reader under [`Batches`] and [`StreamBatches`].
type Selected = SelectedReader<Box<dyn RecordingReader>>;

/// Several streams of a recording as Arrow record batches, read in one pass
/// ([`Recording::stream_batches`]): an iterator of `(stream name, batch)`, each batch with its
/// stream's schema ([`StreamBatches::schema`]). Batches of one stream come in file order.
pub struct StreamBatches {
    path: PathBuf,
    batches: StreamBatchReader<Selected>,
    /// The Arrow schema of each stream read, by index in the selected schema.
    schemas: Vec<SchemaRef>,
}

impl fmt::Debug for StreamBatches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamBatches")
            .field("path", &self.path)
            .field(
                "streams",
                &self.streams().map(|(s, _)| s).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl StreamBatches {
    /// The path the recording was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The streams read and their Arrow schemas, in the recording's order.
    pub fn streams(&self) -> impl Iterator<Item = (&str, &SchemaRef)> {
        let streams = &self.batches.reader().schema().streams;
        streams.iter().map(|s| s.name.as_str()).zip(&self.schemas)
    }

    /// The Arrow schema of the batches of `stream`, when it is one of those read.
    pub fn schema(&self, stream: &str) -> Option<&SchemaRef> {
        self.streams().find(|(s, _)| *s == stream).map(|(_, s)| s)
    }

    /// What has been lost so far; final once the iterator has ended.
    pub fn integrity(&self) -> &Integrity {
        self.batches.reader().integrity()
    }

    /// Work done and in all, as [`RecordingReader::progress`] counts it.
    pub fn progress(&self) -> (u64, Option<u64>) {
        self.batches.reader().progress()
    }

    /// The next batch and its stream's name, `None` at the end; errors as [`Error`] (the
    /// iterator yields them as [`ArrowError`]).
    pub fn next_batch(&mut self) -> Result<Option<(String, RecordBatch)>> {
        let Some(batch) = self.batches.next() else {
            return Ok(None);
        };
        let batch = batch
            .map_err(|e| Error::Core(e).context(format!("reading {}", self.path.display())))?;
        let stream = batch.stream();
        let (Some(desc), Some(schema)) = (
            self.batches.reader().schema().streams.get(stream),
            self.schemas.get(stream),
        ) else {
            return Err(Error::Invalid(format!(
                "{}: a batch of stream {stream}, which the selection lacks",
                self.path.display()
            )));
        };
        let name = desc.name.clone();
        Ok(Some((name, recfmt_export::record_batch(schema, batch)?)))
    }
}

impl Iterator for StreamBatches {
    type Item = std::result::Result<(String, RecordBatch), ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map_err(into_arrow).transpose()
    }
}

impl std::iter::FusedIterator for StreamBatches {}

/// One stream of a recording as Arrow record batches ([`Recording::batches`]): an
/// [`arrow_array::RecordBatchReader`], so it goes wherever Arrow readers go (Parquet's
/// `ArrowWriter`, DataFusion, the C stream interface).
///
/// # Errors
///
/// Opening and asking for a stream fail with [`crate::Error`]. The iterators ([`Batches`],
/// [`StreamBatches`]) yield [`ArrowError`]s, as Arrow's reader trait wants; a recfmt error
/// travels inside as [`ArrowError::ExternalError`] holding a boxed [`crate::Error`], so its
/// kind is recovered by a downcast ([`Batches::next_batch`] returns the [`crate::Error`]
/// itself). After a read error the iterator ends.
///
/// ```
/// use recfmt::export::ArrowError;
///
/// // A record torn by the end of the file is an error under `strict`.
/// let path = std::path::Path::new("../../tests/fixtures/generated/usvlog/truncated");
/// let options = recfmt::OpenOptions { strict: true, ..Default::default() };
/// let recording = recfmt::open_with(recfmt::default_registry(), path, &options)?;
/// let stream = recording.schema().streams[0].name.clone();
/// let error = recording.batches(&stream)?.find_map(Result::err).expect("a read error");
/// let ArrowError::ExternalError(inner) = &error else { panic!("{error}") };
/// let error: &recfmt::Error = inner.downcast_ref().expect("a recfmt::Error");
/// assert!(matches!(error, recfmt::Error::Context { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// [`arrow_array::RecordBatchReader`]: recfmt_export::RecordBatchReader
#[derive(Debug)]
pub struct Batches {
    streams: StreamBatches,
}

impl Batches {
    /// The Arrow schema of every batch (also [`RecordBatchReader::schema`]).
    pub fn schema(&self) -> SchemaRef {
        self.streams.schemas[0].clone()
    }

    /// The path the recording was opened from.
    pub fn path(&self) -> &Path {
        self.streams.path()
    }

    /// What has been lost so far; final once the iterator has ended.
    pub fn integrity(&self) -> &Integrity {
        self.streams.integrity()
    }

    /// Work done and in all, as [`RecordingReader::progress`] counts it.
    pub fn progress(&self) -> (u64, Option<u64>) {
        self.streams.progress()
    }

    /// The next batch, `None` at the end; errors as [`Error`] (the iterator yields them as
    /// [`ArrowError`]).
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        Ok(self.streams.next_batch()?.map(|(_, batch)| batch))
    }
}

impl Iterator for Batches {
    type Item = std::result::Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map_err(into_arrow).transpose()
    }
}

impl std::iter::FusedIterator for Batches {}

impl RecordBatchReader for Batches {
    fn schema(&self) -> SchemaRef {
        Batches::schema(self)
    }
}

/// `error` as Arrow's reader trait wants it, kept whole for a downcast.
fn into_arrow(error: Error) -> ArrowError {
    ArrowError::ExternalError(Box::new(error))
}
