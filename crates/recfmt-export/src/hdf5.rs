//! HDF5 output through the pure-Rust `hdf5-pure` crate (feature `hdf5`).
//!
//! [`Hdf5Writer`] writes the record batches of a [`StreamBatcher`](crate::StreamBatcher) (one
//! per stream) into a single HDF5 file, streaming: every dataset is declared up front, then
//! grown a chunk at a time, so memory stays at most one chunk per column however long the
//! recording is (a column's buffer grows with its rows, so a short column holds only those). The file is written as `.<name>.partial` beside the target and renamed to
//! its final name by [`Hdf5Writer::finish`]; a writer that fails or is dropped before that
//! removes the partial file, so a failed export never leaves a file that looks whole.
//!
//! # Layout
//!
//! * **Root attributes:** `recfmt.format`, `recfmt.version`, `recfmt.time_system` and
//!   `recfmt.epoch` (RFC 3339, UTC; only when the epoch is known) when the header has a time
//!   reference, every header metadata entry as `source.<key>` (keys already starting with
//!   `source.` are kept as they are), then every entry of [`Hdf5Options::metadata`] as given
//!   (overriding the others, e.g. `source.file`, `source.sha256`).
//! * **One group per stream**, at the root, named after the stream ([link names](#names)).
//!   Group attributes: `recfmt.stream` (the original stream name), `recfmt.time_column` (the
//!   *dataset* name of the time column), `recfmt.time_base` (seconds per unit of the time
//!   column, `"1/1000000"`), `recfmt.entity_column` (dataset name of the entity key, for
//!   entity-keyed streams), every stream metadata entry as `stream.<key>`, and
//!   `recfmt.omitted_columns` (an array of original signal names) when the stream has
//!   [columns without an HDF5 form](#omitted-columns).
//! * **One dataset per signal** in the stream's group, in signal order, time column
//!   included. A scalar signal is a 1-D dataset (one element per row), a fixed-shape one a
//!   2-D or higher dataset ([types](#types)). Every dataset is chunked along the rows with
//!   [`Hdf5Options::chunk_rows`] rows per chunk (at most 65 535, and fewer for rows larger
//!   than 64 bytes so that a chunk stays within 4 MiB), unlimited along the rows only, and
//!   compressed with shuffle + deflate when [`Hdf5Options::deflate`] says so. Dataset attributes:
//!   `original_name` (the signal name as the source gives it), `dtype` (the recfmt dtype
//!   name, `"f32"`, `"u8"`, ...), `unit` (when the signal has one), `shape` (`"3"`, `"3x3"`;
//!   fixed shapes only) and every signal metadata entry as `recfmt.<key>`.
//!
//! String attributes are variable-length UTF-8, which h5py returns as `str`.
//!
//! # Types
//!
//! | recfmt dtype | HDF5 element type | h5py reads |
//! |---|---|---|
//! | `bool` | enum of `int8` with `FALSE = 0`, `TRUE = 1` | `bool` |
//! | `i8` ... `u64` | little-endian integer of the same size and sign | `int8` ... `uint64` |
//! | `f32`, `f64` | IEEE float of the same size (an `f32` stays `f32`) | `float32`, `float64` |
//! | `str` | fixed-width UTF-8 string, null-padded, [`Hdf5Options::string_width`] bytes | `bytes` (`S<width>`; `.asstr()` decodes) |
//! | fixed shape `[n]`, `[n, m]`, ... | the element type, the shape as trailing dataset axes | a `(rows, n)` / `(rows, n, m)` dataset |
//!
//! A fixed-shape signal is a dataset with one more axis per shape dimension: a `[3]` vector
//! column is a 2-D dataset `(rows, 3)`, chunked `(chunk_rows, 3)`, unlimited along the rows
//! only. (hdf5-pure 0.47 appends only to rank-1 datasets; the workspace carries a small
//! patch, `vendor/hdf5-pure-0.47.0-recfmt.patch`, that lets it grow these.) One exception:
//! a shape with an axis longer than 65 535 (or with 32 axes) cannot be a chunk dimension
//! every reader accepts, so such a column is a 1-D dataset of HDF5 *array* elements, which
//! h5py reads as `ds.dtype == ('<f4', (n,))` with `ds[()]` of shape `(rows, n)`.
//!
//! # Nulls
//!
//! HDF5 has no null. A null float is written as NaN. A null string is written as the empty
//! string (as in CSV, null and empty cannot be told apart). A null integer or boolean has no
//! faithful representation, so [`Hdf5Writer::write_batch`] fails with [`Error::Value`] naming
//! stream, signal and row, but only when such a null actually occurs.
//!
//! # Strings
//!
//! Appending to a variable-length string dataset is not possible in bounded memory, so text
//! is stored with a fixed width ([`Hdf5Options::string_width`], 64 bytes by default). A value
//! longer than that (in UTF-8 bytes) is never truncated: the write fails with
//! [`Error::Value`] naming stream, signal and row; raise the width and export again. A value
//! holding a NUL character fails the same way, since a null-padded string would read back
//! cut at it.
//!
//! # Omitted columns
//!
//! Two kinds of signal have no streaming HDF5 form yet: `bytes` signals and variable-length
//! (`Shape::Variable`) lists (also fixed shapes with no elements, more than 32 dimensions or
//! more than 4 GiB per row). Such a column gets no dataset, its name is listed in the
//! group's `recfmt.omitted_columns` attribute, and [`Hdf5Writer::write_batch`] fails with
//! [`Error::Value`] as soon as one of its rows holds a value, so nothing is ever dropped
//! silently. Columns that are always null (typically in streams that never get a row, such
//! as usvlog's `unknown` stream) thus cost nothing. [`omitted_columns`] lists them up front,
//! for a caller that prefers to warn or refuse before it starts.
//!
//! # Names
//!
//! HDF5 link names cannot contain `/`, so group and dataset names are the stream and signal
//! names with leading `/` removed and every other `/` (and NUL) replaced by `_`: the
//! FlightGear property `/position/altitude-ft` becomes the dataset `position_altitude-ft`.
//! An empty name, `.` and `..` become `_`. When two names of the same group come out equal,
//! later ones get `_2`, `_3`, ..., as in every output ([`crate::column_names`]: the time
//! column keeps its name, so a signal `t` beside it becomes `t_2`). The original names are
//! kept in the `recfmt.stream` and `original_name` attributes.
//!
//! # Parallel compression
//!
//! Shuffle + deflate of a full chunk is most of the writer's work, and it is independent from
//! chunk to chunk. With compression on and more than one core (see
//! [`Hdf5Options::compression_threads`]), full chunks are handed to a few worker threads
//! while the thread calling [`Hdf5Writer::write_batch`] goes on encoding rows, and it writes
//! each compressed chunk into the file in the order it handed them over. hdf5-pure 0.47 only
//! filters chunks inside its own append, so the vendored copy carries a small patch for this
//! (`ChunkEncoder`, `Dataset::append_encoded_chunk`; see `vendor/README.md`): the workers run
//! hdf5-pure's own filter code, and the file is byte for byte the one the single-threaded
//! writer makes. At most two chunks per worker are in flight, and their buffers are reused,
//! so memory does not grow with the recording. A column's last, partial chunk is written by
//! hdf5-pure's own append when the writer finishes.
//!
//! # Readers
//!
//! The files use the HDF5 1.10+ format (version-3 superblock, extensible-array chunk index);
//! they read with h5py (HDF5 1.14 and 2.0), `h5dump` 1.10 and later, and hdf5-pure itself.
//!
//! ```
//! use recfmt_core::{DType, FrameBuf, Header, SignalDesc, StreamDesc, TimeBase, Value};
//! use recfmt_export::StreamBatcher;
//! use recfmt_export::hdf5::{Hdf5Options, Hdf5Writer};
//!
//! let mut nav = StreamDesc::new("NAV", SignalDesc::scalar("t_us", DType::U64), TimeBase::MICROSECONDS);
//! nav.signals.push(SignalDesc::scalar("x", DType::F32).with_unit("m"));
//! let header = Header { format: "memory", ..Header::default() };
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("out.h5");
//! let streams = [nav];
//! let mut writer = Hdf5Writer::create(&path, &header, &streams, &Hdf5Options::default())?;
//! let mut batcher = StreamBatcher::new(&header, &streams[0], 1024);
//! for i in 0..3u64 {
//!     let row = FrameBuf { stream: 0, values: vec![Value::UInt(i * 1000), Value::Float(0.5)] };
//!     batcher.push(&row)?;
//! }
//! writer.write_batch(0, &batcher.finish_batch()?)?;
//! assert!(!path.exists());
//! writer.finish()?;
//!
//! let file = hdf5_pure::File::open(&path)?;
//! assert_eq!(file.dataset("NAV/x")?.read_f32()?, [0.5, 0.5, 0.5]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, BooleanArray, PrimitiveArray, RecordBatch, StringArray};
use arrow_buffer::NullBuffer;
use hdf5_pure::{
    AttrValue, CharacterSet, ChunkEncoder, ChunkScratch, Dataset, Datatype, EnumTypeBuilder,
    FileAccessProperties, FileBuilder, MaxExtent, MemoryStrategy, StringPadding, SyncPolicy,
};
use recfmt_core::{DType, Header, Metadata, Shape, SignalDesc, StreamDesc};

use crate::Error;
use crate::mapping::shape_text;

/// The largest chunk length, in rows, that every HDF5 reader accepts from hdf5-pure 0.47.
///
/// hdf5-pure encodes a chunk dimension above 65 535 in 4 bytes where the C library expects
/// 3, and HDF5 2.0 (the one in current h5py wheels) then refuses to open the dataset.
pub const MAX_CHUNK_ROWS: usize = 65_535;

/// Default width in bytes of string datasets ([`Hdf5Options::string_width`]).
pub const DEFAULT_STRING_WIDTH: u32 = 64;

/// Upper bound on the bytes of one chunk; rows larger than 64 bytes get fewer rows per
/// chunk, so the chunk buffer of one column stays within this (or one row, if larger).
const MAX_CHUNK_BYTES: usize = 4 << 20;

/// The most dimensions an HDF5 dataspace or array datatype may have.
const MAX_RANK: usize = 32;

/// How [`Hdf5Writer`] writes its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hdf5Options {
    /// Rows per chunk of every dataset (default and maximum 65 535, see [`MAX_CHUNK_ROWS`]).
    /// Values outside `1..=65_535` are clamped. Each column buffers up to one chunk in
    /// memory, and columns with rows larger than 64 bytes use fewer rows per chunk so that a
    /// chunk stays within 4 MiB.
    pub chunk_rows: usize,
    /// Deflate level (0 to 9) applied together with the shuffle filter, or `None` for no
    /// compression. Default `Some(1)`.
    pub deflate: Option<u8>,
    /// Width in bytes of the fixed-width string datasets that hold `str` signals (default
    /// [`DEFAULT_STRING_WIDTH`]). Longer values make the export fail rather than being cut.
    /// Must be at least 1.
    pub string_width: u32,
    /// Extra root attributes (e.g. `source.file`, `source.sha256`); they override entries of
    /// the same name.
    pub metadata: Metadata,
    /// Let values of [omitted columns](self#omitted-columns) pass instead of failing the
    /// export. The columns stay listed in each group's `recfmt.omitted_columns`, so a caller
    /// that sets this should also tell its user (the `recfmt` CLI prints a note per column).
    pub skip_omitted_values: bool,
    /// Threads that compress full chunks (shuffle + deflate) beside the thread calling
    /// [`Hdf5Writer::write_batch`], which keeps writing them into the file in order; `0`
    /// (the default) means one per core ([`std::thread::available_parallelism`]), at most 4, `1`
    /// compresses on the calling thread. The file is the same either way. See
    /// [the module docs](self#parallel-compression).
    pub compression_threads: usize,
    /// Whether an existing file at the output path may be replaced (default: no).
    pub replace: recfmt_core::Replace,
}

impl Default for Hdf5Options {
    /// Chunks of 65 535 rows, shuffle + deflate level 1, 64-byte strings, no extra metadata.
    fn default() -> Self {
        Hdf5Options {
            chunk_rows: MAX_CHUNK_ROWS,
            deflate: Some(1),
            string_width: DEFAULT_STRING_WIDTH,
            metadata: Metadata::new(),
            skip_omitted_values: false,
            compression_threads: 0,
            replace: recfmt_core::Replace::Never,
        }
    }
}

/// A signal that gets no dataset because it has no streaming HDF5 form (see
/// [the module docs](self#omitted-columns)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OmittedColumn {
    /// Stream name as in the schema.
    pub stream: String,
    /// Signal name as in the schema.
    pub signal: String,
    /// Why the signal has no HDF5 dataset.
    pub reason: &'static str,
}

/// The signals of `streams` that [`Hdf5Writer`] cannot store and leaves out; writing a
/// non-null value to one of them fails.
///
/// ```
/// use recfmt_core::{DType, Shape, SignalDesc, StreamDesc, TimeBase};
/// let mut s = StreamDesc::new("raw", SignalDesc::scalar("t", DType::U64), TimeBase::MICROSECONDS);
/// s.signals.push(SignalDesc::scalar("payload", DType::Bytes));
/// s.signals.push(SignalDesc::scalar("xs", DType::F32).with_shape(Shape::Variable));
/// let omitted = recfmt_export::hdf5::omitted_columns(&[s]);
/// let names: Vec<_> = omitted.iter().map(|c| c.signal.as_str()).collect();
/// assert_eq!(names, ["payload", "xs"]);
/// ```
pub fn omitted_columns(streams: &[StreamDesc]) -> Vec<OmittedColumn> {
    streams
        .iter()
        .flat_map(|stream| {
            stream.signals.iter().filter_map(|signal| {
                match layout(signal, DEFAULT_STRING_WIDTH, MAX_CHUNK_ROWS) {
                    Layout::Omitted(reason) => Some(OmittedColumn {
                        stream: stream.name.clone(),
                        signal: signal.name.clone(),
                        reason,
                    }),
                    Layout::Stored(_) => None,
                }
            })
        })
        .collect()
}

/// Writes the streams of one recording into one HDF5 file.
///
/// Create it with every stream of the schema, feed it the batches of one
/// [`StreamBatcher`](crate::StreamBatcher) per stream with [`Hdf5Writer::write_batch`] (in
/// any interleaving), then call [`Hdf5Writer::finish`]. See [the module docs](self) for the
/// layout. After an error the writer refuses further writes; drop it, and the partial file
/// goes with it.
#[derive(Debug)]
pub struct Hdf5Writer {
    // Field order matters: the open file is dropped before the temporary file is removed.
    open: Option<OpenFile>,
    temp: recfmt_core::TempPath,
    target: PathBuf,
    failed: bool,
    skip_omitted_values: bool,
}

impl Hdf5Writer {
    /// Declares every stream (group `/<stream name>`) and every column dataset in a new
    /// file at the temporary path `.<name>.partial` beside `path`, and opens it for
    /// appending.
    ///
    /// Fails with [`Error::Invalid`] for bad options (a deflate level above 9, a zero string
    /// width) or a path without a file name, and with [`Error::Io`] when the file cannot be
    /// written. The directory of `path` must exist. Nothing is left behind on error.
    pub fn create(
        path: &Path,
        header: &Header,
        streams: &[StreamDesc],
        options: &Hdf5Options,
    ) -> Result<Self, Error> {
        if let Some(level) = options.deflate
            && level > 9
        {
            return Err(Error::Invalid(format!(
                "HDF5 deflate level {level} is out of range (0 to 9)"
            )));
        }
        if options.string_width == 0 {
            return Err(Error::Invalid(
                "HDF5 string width must be at least 1 byte".into(),
            ));
        }
        let chunk_rows = options.chunk_rows.clamp(1, MAX_CHUNK_ROWS);
        if path.file_name().is_none() {
            return Err(Error::Invalid(format!(
                "HDF5 output path {} has no file name",
                path.display()
            )));
        }
        let temp = recfmt_core::TempPath::reserve(path, options.replace)
            .map_err(|e| Error::io(path, e))?;
        let h5 = |e: hdf5_pure::Error| hdf5_error(path, "creating the file", e);

        // Declare everything, then write the (small) skeleton file.
        let mut builder = FileBuilder::new();
        for (key, value) in root_attributes(header, &options.metadata) {
            builder.set_attr(&key, AttrValue::VarLenString(value));
        }
        let group_names = unique_link_names(streams.iter().map(|s| s.name.as_str()));
        let mut plans = Vec::with_capacity(streams.len());
        for (stream, group_name) in streams.iter().zip(&group_names) {
            let plan = plan_stream(stream, group_name, options.string_width, chunk_rows);
            let mut group = builder.create_group(group_name);
            for (key, value) in group_attributes(stream, &plan) {
                group.set_attr(&key, value);
            }
            for (signal, column) in stream.signals.iter().zip(&plan.columns) {
                if let Layout::Stored(stored) = &column.layout {
                    declare_dataset(&mut group, &column.link, signal, stored, options).map_err(
                        |e| {
                            Error::Invalid(format!(
                                "stream {:?}, signal {:?}: cannot declare the HDF5 dataset: {e}",
                                stream.name, signal.name
                            ))
                        },
                    )?;
                }
            }
            builder.add_group(group.finish());
            plans.push(plan);
        }
        builder.write(temp.path()).map_err(h5)?;

        // Open it for bounded-memory in-place appends; fsync only once, at close.
        let access = FileAccessProperties::new()
            .with_memory_strategy(MemoryStrategy::Bounded)
            .with_sync_policy(SyncPolicy::OnClose);
        let file = hdf5_pure::File::open_rw_with_options(temp.path(), access).map_err(h5)?;
        let compressor = match compression_threads(options) {
            Some(threads) => Some(Compressor::start(threads).map_err(|e| Error::io(path, e))?),
            None => None,
        };
        let mut sink = ChunkSink {
            datasets: Vec::new(),
            compressor,
        };
        let mut states = Vec::with_capacity(plans.len());
        for (stream, plan) in streams.iter().zip(plans) {
            let mut columns = Vec::with_capacity(plan.columns.len());
            for (signal, column) in stream.signals.iter().zip(plan.columns) {
                columns.push(match column.layout {
                    Layout::Stored(stored) => {
                        let path = format!("{}/{}", plan.group, column.link);
                        let dataset = file.dataset(&path).map_err(h5)?;
                        let encoder = match sink.compressor {
                            Some(_) => Some(Arc::new(dataset.chunk_encoder().map_err(h5)?)),
                            None => None,
                        };
                        sink.datasets.push(DatasetOut {
                            path,
                            dataset,
                            encoder,
                        });
                        Column::Stored(Box::new(StoredColumn {
                            signal: signal.name.clone(),
                            dtype: signal.dtype,
                            pending: Vec::new(),
                            layout: stored,
                            dataset: sink.datasets.len() - 1,
                        }))
                    }
                    Layout::Omitted(reason) => Column::Omitted {
                        signal: signal.name.clone(),
                        reason,
                    },
                });
            }
            states.push(StreamState {
                name: stream.name.clone(),
                columns,
                rows: 0,
            });
        }
        Ok(Hdf5Writer {
            open: Some(OpenFile {
                file,
                streams: states,
                sink,
            }),
            temp,
            target: path.to_path_buf(),
            failed: false,
            skip_omitted_values: options.skip_omitted_values,
        })
    }

    /// The final path of the file.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// Rows written so far to stream `stream` (index into the `streams` given to
    /// [`Hdf5Writer::create`]), or `None` for an index out of range.
    pub fn rows(&self, stream: usize) -> Option<u64> {
        self.open.as_ref()?.streams.get(stream).map(|s| s.rows)
    }

    /// Appends one batch of stream `stream` (index into the `streams` given to
    /// [`Hdf5Writer::create`]). The batch must have the columns of
    /// [`arrow_schema()`](crate::arrow_schema()) of that stream, as a
    /// [`StreamBatcher`](crate::StreamBatcher) makes them; field names and metadata are not
    /// looked at.
    ///
    /// Rows are buffered per column and written a whole chunk at a time. Fails with
    /// [`Error::Value`] for a value HDF5 cannot hold (a null integer or boolean, a string
    /// longer than [`Hdf5Options::string_width`], a value in an
    /// [omitted column](self#omitted-columns)), with [`Error::Invalid`] for a batch that
    /// does not fit the stream, and with [`Error::Io`] when writing fails. After an error the
    /// writer accepts nothing more.
    pub fn write_batch(&mut self, stream: usize, batch: &RecordBatch) -> Result<(), Error> {
        if self.failed {
            return Err(Error::Invalid(format!(
                "{}: an earlier HDF5 write failed; the file cannot be completed",
                self.target.display()
            )));
        }
        let result = self.write_batch_inner(stream, batch);
        if result.is_err() {
            self.failed = true;
        }
        result
    }

    fn write_batch_inner(&mut self, stream: usize, batch: &RecordBatch) -> Result<(), Error> {
        let open = self
            .open
            .as_mut()
            .ok_or_else(|| Error::Invalid("the HDF5 writer is already finished".into()))?;
        let count = open.streams.len();
        let state = open.streams.get_mut(stream).ok_or_else(|| {
            Error::Invalid(format!(
                "HDF5 export: batch for stream {stream}, but the file has {count} streams"
            ))
        })?;
        if batch.num_columns() != state.columns.len() {
            return Err(Error::Invalid(format!(
                "stream {:?}: a batch has {} columns but the stream has {} signals",
                state.name,
                batch.num_columns(),
                state.columns.len()
            )));
        }
        for (column, array) in state.columns.iter_mut().zip(batch.columns()) {
            match column {
                Column::Stored(c) => {
                    c.append(&self.target, &state.name, state.rows, array, &mut open.sink)?;
                }
                Column::Omitted { signal, reason } => {
                    if !self.skip_omitted_values && array.null_count() != array.len() {
                        let row = (0..array.len()).find(|&i| array.is_valid(i)).unwrap_or(0);
                        return Err(Error::Value {
                            stream: state.name.clone(),
                            signal: signal.clone(),
                            message: format!(
                                "row {}: this column has no HDF5 dataset ({reason}); \
                                 export it to Parquet instead",
                                state.rows + row as u64
                            ),
                        });
                    }
                }
            }
        }
        state.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// Writes the buffered rows of every column, closes the file and renames it to its
    /// final name (replacing a file of that name). On error the partial file is removed.
    pub fn finish(mut self) -> Result<(), Error> {
        if self.failed {
            return Err(Error::Invalid(format!(
                "{}: an earlier HDF5 write failed; the file cannot be completed",
                self.target.display()
            )));
        }
        let open = self
            .open
            .take()
            .ok_or_else(|| Error::Invalid("the HDF5 writer is already finished".into()))?;
        // `open` is consumed (and the file closed) before the rename or, on error, before
        // `self.temp` removes the partial file.
        open.close(&self.target)?;
        self.temp.persist().map_err(|e| Error::io(&self.target, e))
    }
}

/// Each batch goes to the stream its schema names (`recfmt.stream` in the schema metadata, as
/// [`arrow_schema()`](crate::arrow_schema()) writes it), or to the only stream of a file of
/// one; [`close`](arrow_array::RecordBatchWriter::close) is [`Hdf5Writer::finish`].
impl arrow_array::RecordBatchWriter for Hdf5Writer {
    fn write(&mut self, batch: &RecordBatch) -> Result<(), arrow_schema::ArrowError> {
        let stream = self
            .stream_of(batch)
            .map_err(crate::table_writer::into_arrow)?;
        self.write_batch(stream, batch)
            .map_err(crate::table_writer::into_arrow)
    }

    fn close(self) -> Result<(), arrow_schema::ArrowError> {
        self.finish().map_err(crate::table_writer::into_arrow)
    }
}

impl Hdf5Writer {
    /// The index of the stream `batch` belongs to, by the stream name in its schema metadata.
    fn stream_of(&self, batch: &RecordBatch) -> Result<usize, Error> {
        let open = self
            .open
            .as_ref()
            .ok_or_else(|| Error::Invalid("the HDF5 writer is already finished".into()))?;
        let schema = batch.schema();
        match schema.metadata().get(crate::STREAM_KEY) {
            Some(name) => open
                .streams
                .iter()
                .position(|s| s.name == *name)
                .ok_or_else(|| {
                    Error::Invalid(format!(
                        "{}: a batch of stream {name:?}, which the file does not declare",
                        self.target.display()
                    ))
                }),
            None if open.streams.len() == 1 => Ok(0),
            None => Err(Error::Invalid(format!(
                "{}: a batch without a `recfmt.stream` schema entry, and the file has {} streams",
                self.target.display(),
                open.streams.len()
            ))),
        }
    }
}

/// The open file and the per-stream state.
struct OpenFile {
    file: hdf5_pure::File,
    streams: Vec<StreamState>,
    sink: ChunkSink,
}

impl std::fmt::Debug for OpenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenFile")
            .field("streams", &self.streams)
            .field("sink", &self.sink)
            .finish_non_exhaustive()
    }
}

impl OpenFile {
    /// Writes the chunks still being compressed, then every column's buffered tail, then
    /// closes the file.
    fn close(self, target: &Path) -> Result<(), Error> {
        let OpenFile {
            file,
            streams,
            mut sink,
        } = self;
        // Every full chunk of a column is in the file before its partial tail.
        sink.drain(target)?;
        for state in streams {
            for column in state.columns {
                if let Column::Stored(c) = column {
                    sink.write_tail(target, c.dataset, &c.pending)?;
                }
            }
        }
        // Workers are stopped and joined before the file closes.
        drop(sink);
        file.close()
            .map_err(|e| hdf5_error(target, "closing the file", e))
    }
}

#[derive(Debug)]
struct StreamState {
    name: String,
    columns: Vec<Column>,
    rows: u64,
}

#[derive(Debug)]
enum Column {
    Stored(Box<StoredColumn>),
    Omitted {
        signal: String,
        reason: &'static str,
    },
}

/// One column being appended to, with its chunk buffer.
#[derive(Debug)]
struct StoredColumn {
    signal: String,
    dtype: DType,
    layout: StoredLayout,
    /// Index of its dataset in [`ChunkSink::datasets`].
    dataset: usize,
    /// Encoded rows not yet written: always less than one chunk between calls (grown with
    /// the rows seen, up to one chunk; see [`grow_pending`]).
    pending: Vec<u8>,
}

impl StoredColumn {
    /// Encodes the rows of `array` into the chunk buffer, writing every chunk it completes.
    fn append(
        &mut self,
        target: &Path,
        stream: &str,
        first_row: u64,
        array: &dyn Array,
        sink: &mut ChunkSink,
    ) -> Result<(), Error> {
        let layout = self.layout.clone();
        let mismatch = || {
            Error::Invalid(format!(
                "stream {stream:?}, signal {:?}: a batch column of type {} does not match the \
                 signal's dtype {}{}",
                self.signal,
                array.data_type(),
                self.dtype,
                if layout.dims.is_empty() {
                    String::new()
                } else {
                    format!(" with fixed shape {}", shape_text(&layout.dims))
                }
            ))
        };
        let (values, row_nulls): (&dyn Array, Option<&NullBuffer>) = if layout.dims.is_empty() {
            (array, None)
        } else {
            let list = array.as_fixed_size_list_opt().ok_or_else(mismatch)?;
            if usize::try_from(list.value_length()).ok() != Some(layout.per_row) {
                return Err(mismatch());
            }
            (list.values().as_ref(), list.nulls())
        };
        let source = Source::new(layout.elem, values).ok_or_else(mismatch)?;
        let nulls = Nulls {
            values,
            rows: row_nulls,
            per_row: layout.per_row,
        };
        let chunk_bytes = layout.chunk_rows * layout.row_bytes;
        let rows = array.len();
        let mut row = 0;
        while row < rows {
            let room = layout.chunk_rows - self.pending.len() / layout.row_bytes;
            let take = room.min(rows - row);
            grow_pending(&mut self.pending, take * layout.row_bytes, chunk_bytes);
            let elements = row * layout.per_row..(row + take) * layout.per_row;
            source
                .encode(&nulls, elements, &mut self.pending)
                .map_err(|(element, message)| Error::Value {
                    stream: stream.to_owned(),
                    signal: self.signal.clone(),
                    message: format!(
                        "row {}: {message}",
                        first_row + (element / layout.per_row) as u64
                    ),
                })?;
            row += take;
            if self.pending.len() >= chunk_bytes {
                let full = std::mem::take(&mut self.pending);
                self.pending = sink.write_chunk(target, self.dataset, full)?;
                if self.pending.capacity() < chunk_bytes {
                    self.pending.reserve_exact(chunk_bytes);
                }
            }
        }
        Ok(())
    }
}

/// Makes room in a column's chunk buffer for `more` bytes, doubling its capacity as rows come
/// but never past one chunk (`chunk_bytes`): the buffer grows with the rows a column has
/// seen, so a file of thousands of short streams does not hold a whole chunk per column.
fn grow_pending(pending: &mut Vec<u8>, more: usize, chunk_bytes: usize) {
    let needed = pending.len() + more;
    if needed <= pending.capacity() {
        return;
    }
    let doubled = pending.capacity().saturating_mul(2).min(chunk_bytes);
    pending.reserve_exact(needed.max(doubled) - pending.len());
}

/// At most this many compression threads, whatever the machine or the options say: more
/// only adds chunk buffers in flight once the writing thread sets the pace.
const MAX_COMPRESSION_THREADS: usize = 16;

/// At most this many by default (one per core): each thread keeps up to two chunks of up to
/// a few MiB in flight with their spare buffers, so memory must not follow a large machine's
/// core count, and a few compressing threads already outpace the one writing the file.
const DEFAULT_MAX_COMPRESSION_THREADS: usize = 4;

/// How many threads compress chunks beside the writing thread, or `None` to compress on it:
/// without compression there is nothing to share out, and with one core a worker would only
/// add a copy of every chunk.
fn compression_threads(options: &Hdf5Options) -> Option<usize> {
    options.deflate?;
    let threads = match options.compression_threads {
        0 => std::thread::available_parallelism()
            .map_or(1, std::num::NonZero::get)
            .min(DEFAULT_MAX_COMPRESSION_THREADS),
        n => n,
    };
    (threads > 1).then_some(threads.min(MAX_COMPRESSION_THREADS))
}

/// One dataset of the file, as the chunk writer sees it.
struct DatasetOut {
    /// `group/dataset`, for error messages.
    path: String,
    dataset: Dataset,
    /// The dataset's filter pipeline, for the compression workers (parallel mode only).
    encoder: Option<Arc<ChunkEncoder>>,
}

/// Where full chunks go: straight into the file through hdf5-pure's own filter step, or
/// through the [`Compressor`]'s workers and then into the file in the order they were
/// handed over.
struct ChunkSink {
    datasets: Vec<DatasetOut>,
    compressor: Option<Compressor>,
}

impl std::fmt::Debug for ChunkSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkSink")
            .field("datasets", &self.datasets.len())
            .field("compressor", &self.compressor)
            .finish()
    }
}

impl ChunkSink {
    fn dataset(&mut self, target: &Path, index: usize) -> Result<&mut DatasetOut, Error> {
        let count = self.datasets.len();
        self.datasets.get_mut(index).ok_or_else(|| {
            Error::io(
                target,
                std::io::Error::other(format!(
                    "HDF5: dataset {index} of {count} does not exist (internal error)"
                )),
            )
        })
    }

    /// Writes (or hands over for compression) one whole raw chunk of dataset `index`, and
    /// returns an empty buffer for the column to fill next: `chunk` itself when it was
    /// written here, else a buffer a finished chunk gave back, so buffers are reused rather
    /// than allocated (and page-faulted in) per chunk.
    fn write_chunk(
        &mut self,
        target: &Path,
        index: usize,
        mut chunk: Vec<u8>,
    ) -> Result<Vec<u8>, Error> {
        if self.compressor.is_none() {
            let out = self.dataset(target, index)?;
            out.dataset
                .append_raw(&chunk)
                .map_err(|e| hdf5_error(target, &format!("appending to {}", out.path), e))?;
            chunk.clear();
            return Ok(chunk);
        }
        let encoder = self
            .dataset(target, index)?
            .encoder
            .clone()
            .ok_or_else(|| hdf5_error_text(target, "a dataset has no chunk encoder"))?;
        // Write what is done (and wait while the window is full) before adding a chunk.
        while let Some(done) = self.next_done(target, false)? {
            self.write_done(target, done)?;
        }
        let Some(compressor) = self.compressor.as_mut() else {
            return Err(hdf5_error_text(target, "the compressor is gone"));
        };
        let chunk_bytes = encoder.chunk_bytes();
        compressor.submit(target, index, encoder, chunk, chunk_bytes)
    }

    /// The oldest chunk in flight once it is compressed: waited for when `wait` is set or the
    /// window is full, else only when already done. `None` when there is nothing to write.
    fn next_done(&mut self, target: &Path, wait: bool) -> Result<Option<Done>, Error> {
        let Some(compressor) = self.compressor.as_mut() else {
            return Ok(None);
        };
        compressor.next_done(target, wait)
    }

    /// Writes one compressed chunk into its dataset and keeps its buffers for reuse.
    fn write_done(&mut self, target: &Path, done: Done) -> Result<(), Error> {
        let Done {
            dataset,
            raw,
            encoded,
        } = done;
        let out = self.dataset(target, dataset)?;
        let encoded = encoded
            .map_err(|e| hdf5_error(target, &format!("compressing a chunk of {}", out.path), e))?;
        let encoded = out
            .dataset
            .append_encoded_chunk(encoded)
            .map_err(|e| hdf5_error(target, &format!("appending to {}", out.path), e))?;
        if let Some(compressor) = self.compressor.as_mut() {
            compressor.recycle(raw, encoded);
        }
        Ok(())
    }

    /// Writes every chunk still in flight.
    fn drain(&mut self, target: &Path) -> Result<(), Error> {
        while let Some(done) = self.next_done(target, true)? {
            self.write_done(target, done)?;
        }
        Ok(())
    }

    /// Writes a column's last, partial chunk (hdf5-pure pads and filters it).
    fn write_tail(&mut self, target: &Path, index: usize, rows: &[u8]) -> Result<(), Error> {
        if rows.is_empty() {
            return Ok(());
        }
        let out = self.dataset(target, index)?;
        out.dataset
            .append_raw(rows)
            .map_err(|e| hdf5_error(target, &format!("appending to {}", out.path), e))
    }
}

/// A chunk handed to a compression worker.
struct Job {
    dataset: usize,
    encoder: Arc<ChunkEncoder>,
    raw: Vec<u8>,
    /// A buffer for the compressed chunk, reused from an earlier one.
    encoded: Vec<u8>,
    done: mpsc::SyncSender<Done>,
}

/// A chunk back from a worker, with both buffers.
struct Done {
    dataset: usize,
    raw: Vec<u8>,
    encoded: Result<Vec<u8>, hdf5_pure::Error>,
}

/// Worker threads that run shuffle + deflate over full chunks while the writing thread goes
/// on encoding rows; the writing thread writes the results in the order it handed the chunks
/// over (each job answers on its own channel, kept in a queue), so the file is the one the
/// single-threaded writer makes.
///
/// Memory stays flat: at most `window` chunks are in flight, and a chunk's two buffers go back
/// to a pool when it is written, so after the first few chunks nothing is allocated.
struct Compressor {
    /// `None` once the workers are told to stop.
    jobs: Option<mpsc::SyncSender<Job>>,
    in_flight: VecDeque<mpsc::Receiver<Done>>,
    window: usize,
    spare_raw: Vec<Vec<u8>>,
    spare_encoded: Vec<Vec<u8>>,
    workers: Vec<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("workers", &self.workers.len())
            .field("in_flight", &self.in_flight.len())
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl Compressor {
    /// Starts `threads` workers.
    fn start(threads: usize) -> std::io::Result<Compressor> {
        // Two chunks per worker keep every worker busy while the writer catches up.
        let window = 2 * threads;
        let (jobs, queue) = mpsc::sync_channel::<Job>(window);
        let queue = Arc::new(Mutex::new(queue));
        let mut compressor = Compressor {
            jobs: Some(jobs),
            in_flight: VecDeque::with_capacity(window),
            window,
            spare_raw: Vec::new(),
            spare_encoded: Vec::new(),
            workers: Vec::with_capacity(threads),
        };
        for i in 0..threads {
            let queue = Arc::clone(&queue);
            let worker = std::thread::Builder::new()
                .name(format!("hdf5-deflate-{i}"))
                .spawn(move || compress_chunks(&queue))?;
            // On error, `compressor` is dropped, which stops the workers already started.
            compressor.workers.push(worker);
        }
        Ok(compressor)
    }

    /// Hands `raw` (a whole chunk of `dataset`) to the workers and returns an empty buffer for
    /// the column's next chunk of `chunk_bytes`.
    fn submit(
        &mut self,
        target: &Path,
        dataset: usize,
        encoder: Arc<ChunkEncoder>,
        raw: Vec<u8>,
        chunk_bytes: usize,
    ) -> Result<Vec<u8>, Error> {
        let (done, answer) = mpsc::sync_channel(1);
        let job = Job {
            dataset,
            encoder,
            raw,
            encoded: self.spare_encoded.pop().unwrap_or_default(),
            done,
        };
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        if !sent {
            return Err(worker_stopped(target));
        }
        self.in_flight.push_back(answer);
        // The smallest spare that holds a chunk, and at most twice its size: a column keeps
        // its buffer, so handing a 4 MiB string chunk's (touched) buffer to a 256 KiB column
        // would grow resident memory by the difference for good.
        let fit = self
            .spare_raw
            .iter()
            .enumerate()
            .filter(|(_, b)| (chunk_bytes..=chunk_bytes.saturating_mul(2)).contains(&b.capacity()))
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        let mut next = match fit {
            Some(i) => self.spare_raw.swap_remove(i),
            None => Vec::with_capacity(chunk_bytes),
        };
        next.clear();
        Ok(next)
    }

    fn next_done(&mut self, target: &Path, wait: bool) -> Result<Option<Done>, Error> {
        let Some(oldest) = self.in_flight.front() else {
            return Ok(None);
        };
        let done = if wait || self.in_flight.len() >= self.window {
            oldest.recv().map_err(|_| worker_stopped(target))?
        } else {
            match oldest.try_recv() {
                Ok(done) => done,
                Err(mpsc::TryRecvError::Empty) => return Ok(None),
                Err(mpsc::TryRecvError::Disconnected) => return Err(worker_stopped(target)),
            }
        };
        self.in_flight.pop_front();
        Ok(Some(done))
    }

    fn recycle(&mut self, raw: Vec<u8>, encoded: Vec<u8>) {
        // Never more spares than chunks that can be in flight; the oldest go first.
        self.spare_raw.push(raw);
        if self.spare_raw.len() > self.window {
            self.spare_raw.remove(0);
        }
        if self.spare_encoded.len() < self.window {
            self.spare_encoded.push(encoded);
        }
    }
}

impl Drop for Compressor {
    /// Stops and joins the workers; the results of chunks still in flight are thrown away (a
    /// writer is dropped without [`Hdf5Writer::finish`] only when its file is being thrown
    /// away). Chunks already queued are still compressed first: at most two per worker.
    fn drop(&mut self) {
        self.jobs = None;
        self.in_flight.clear();
        for worker in self.workers.drain(..) {
            // A worker that panicked has nothing left to clean up; its chunks were reported
            // as lost by `next_done`.
            let _ = worker.join();
        }
    }
}

/// A compression worker: encodes chunks until the queue closes, with one scratch (deflate
/// state and intermediate buffer) for every dataset.
fn compress_chunks(queue: &Mutex<mpsc::Receiver<Job>>) {
    let mut scratch = ChunkScratch::new();
    loop {
        let job = {
            let queue = queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            queue.recv()
        };
        let Ok(job) = job else {
            return;
        };
        let Job {
            dataset,
            encoder,
            raw,
            mut encoded,
            done,
        } = job;
        let encoded = encoder
            .encode(&mut scratch, &raw, &mut encoded)
            .map(|()| encoded);
        // The writer may be gone (dropped after an error); then the chunk is not wanted.
        let _ = done.send(Done {
            dataset,
            raw,
            encoded,
        });
    }
}

fn worker_stopped(target: &Path) -> Error {
    hdf5_error_text(target, "a chunk compression thread stopped unexpectedly")
}

fn hdf5_error_text(path: &Path, what: &str) -> Error {
    Error::io(path, std::io::Error::other(format!("HDF5: {what}")))
}

fn hdf5_error(path: &Path, what: &str, e: hdf5_pure::Error) -> Error {
    Error::io(path, std::io::Error::other(format!("HDF5: {what}: {e}")))
}

/// The element type of a stored column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    Bool,
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
    /// Fixed-width UTF-8 of this many bytes.
    Str(u32),
}

impl Elem {
    fn of(dtype: DType, string_width: u32) -> Option<Elem> {
        Some(match dtype {
            DType::Bool => Elem::Bool,
            DType::I8 => Elem::I8,
            DType::I16 => Elem::I16,
            DType::I32 => Elem::I32,
            DType::I64 => Elem::I64,
            DType::U8 => Elem::U8,
            DType::U16 => Elem::U16,
            DType::U32 => Elem::U32,
            DType::U64 => Elem::U64,
            DType::F32 => Elem::F32,
            DType::F64 => Elem::F64,
            DType::Str => Elem::Str(string_width),
            _ => return None,
        })
    }

    fn size(self) -> usize {
        match self {
            Elem::Bool | Elem::I8 | Elem::U8 => 1,
            Elem::I16 | Elem::U16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
            Elem::Str(width) => width as usize,
        }
    }

    fn datatype(self) -> Result<Datatype, hdf5_pure::FormatError> {
        use hdf5_pure::{
            make_f32_type, make_f64_type, make_i8_type, make_i16_type, make_i32_type,
            make_i64_type, make_u8_type, make_u16_type, make_u32_type, make_u64_type,
        };
        Ok(match self {
            // h5py maps an int8 enum with exactly these members to numpy bool.
            Elem::Bool => EnumTypeBuilder::with_base(make_i8_type())
                .value("FALSE", 0)
                .value("TRUE", 1)
                .build()?,
            Elem::I8 => make_i8_type(),
            Elem::I16 => make_i16_type(),
            Elem::I32 => make_i32_type(),
            Elem::I64 => make_i64_type(),
            Elem::U8 => make_u8_type(),
            Elem::U16 => make_u16_type(),
            Elem::U32 => make_u32_type(),
            Elem::U64 => make_u64_type(),
            Elem::F32 => make_f32_type(),
            Elem::F64 => make_f64_type(),
            Elem::Str(width) => Datatype::String {
                size: width,
                padding: StringPadding::NullPad,
                charset: CharacterSet::Utf8,
            },
        })
    }
}

/// How one signal is stored.
#[derive(Debug, Clone)]
enum Layout {
    Stored(StoredLayout),
    Omitted(&'static str),
}

#[derive(Debug, Clone)]
struct StoredLayout {
    elem: Elem,
    /// Array dimensions of a fixed shape; empty for scalars.
    dims: Vec<u32>,
    /// Elements per row.
    per_row: usize,
    /// Bytes per row.
    row_bytes: usize,
    /// Rows per chunk.
    chunk_rows: usize,
}

fn layout(signal: &SignalDesc, string_width: u32, chunk_rows: usize) -> Layout {
    let Some(elem) = Elem::of(signal.dtype, string_width) else {
        return Layout::Omitted(if signal.dtype == DType::Bytes {
            "bytes signals have no streaming HDF5 form"
        } else {
            "this dtype has no HDF5 form"
        });
    };
    let dims = match &signal.shape {
        Shape::Scalar => Vec::new(),
        Shape::Variable => {
            return Layout::Omitted(
                "variable-length lists cannot be appended to an HDF5 dataset in bounded memory",
            );
        }
        Shape::Fixed(dims) if dims.is_empty() || dims.contains(&0) => {
            return Layout::Omitted("a fixed shape without elements has no HDF5 form");
        }
        Shape::Fixed(dims) if dims.len() > MAX_RANK => {
            return Layout::Omitted("HDF5 array types have at most 32 dimensions");
        }
        Shape::Fixed(dims) => dims.clone(),
    };
    let per_row = signal.shape.element_count().unwrap_or(usize::MAX);
    let row_bytes = per_row.checked_mul(elem.size());
    match row_bytes {
        Some(row_bytes) if u32::try_from(row_bytes).is_ok() && i32::try_from(per_row).is_ok() => {
            Layout::Stored(StoredLayout {
                elem,
                dims,
                per_row,
                row_bytes,
                chunk_rows: chunk_rows.min(MAX_CHUNK_BYTES / row_bytes).max(1),
            })
        }
        _ => Layout::Omitted("rows of more than 4 GiB have no HDF5 form"),
    }
}

struct ColumnPlan {
    link: String,
    layout: Layout,
}

struct StreamPlan {
    group: String,
    columns: Vec<ColumnPlan>,
}

fn plan_stream(
    stream: &StreamDesc,
    group: &str,
    string_width: u32,
    chunk_rows: usize,
) -> StreamPlan {
    let links = crate::names::column_names_from(stream, &[], link_name);
    let columns = stream
        .signals
        .iter()
        .zip(links)
        .map(|(signal, link)| ColumnPlan {
            link,
            layout: layout(signal, string_width, chunk_rows),
        })
        .collect();
    StreamPlan {
        group: group.to_owned(),
        columns,
    }
}

/// Whether a fixed shape can be stored as trailing dataset axes, each held whole by one chunk.
///
/// A dataspace has at most 32 axes, one of which is the rows. And hdf5-pure encodes a chunk
/// dimension above 65 535 in 4 bytes where the C library expects 3, which HDF5 2.0 refuses
/// (see [`MAX_CHUNK_ROWS`]); an axis that long therefore keeps the shape in an HDF5 array
/// element type instead, whose dimensions have no such limit.
fn dataset_axes_hold(dims: &[u32]) -> bool {
    dims.len() < MAX_RANK && dims.iter().all(|&d| d as usize <= MAX_CHUNK_ROWS)
}

/// Declares one empty chunked dataset, unlimited along the rows.
fn declare_dataset(
    group: &mut hdf5_pure::GroupBuilder,
    link: &str,
    signal: &SignalDesc,
    layout: &StoredLayout,
    options: &Hdf5Options,
) -> Result<(), hdf5_pure::FormatError> {
    let element = layout.elem.datatype()?;
    // Rows first, unlimited; a fixed shape adds one fixed axis per dimension, held whole by
    // every chunk, or else becomes an array element type.
    let mut shape = vec![0];
    let mut maxshape = vec![MaxExtent::Unlimited];
    let mut chunks = vec![layout.chunk_rows as u64];
    let datatype = if dataset_axes_hold(&layout.dims) {
        for axis in layout.dims.iter().map(|&d| u64::from(d)) {
            shape.push(axis);
            maxshape.push(MaxExtent::Fixed(axis));
            chunks.push(axis);
        }
        element
    } else {
        Datatype::Array {
            base_type: Box::new(element),
            dimensions: layout.dims.clone(),
        }
    };
    let dataset = group
        .create_dataset(link)
        .with_raw_data(datatype, Vec::new(), 0)
        .with_shape(&shape)
        .with_maxshape(&maxshape)
        .with_chunks(&chunks);
    if let Some(level) = options.deflate {
        dataset.with_shuffle().with_deflate(u32::from(level));
    }
    for (key, value) in dataset_attributes(signal) {
        dataset.set_attr(&key, AttrValue::VarLenString(value));
    }
    Ok(())
}

fn prefixed(key: &str, prefix: &str) -> String {
    if key.starts_with(prefix) {
        key.to_owned()
    } else {
        format!("{prefix}{key}")
    }
}

fn root_attributes(header: &Header, extra: &Metadata) -> BTreeMap<String, String> {
    let mut attrs = BTreeMap::new();
    attrs.insert("recfmt.format".to_owned(), header.format.to_owned());
    attrs.insert("recfmt.version".to_owned(), header.version.clone());
    if let Some(reference) = &header.time {
        attrs.insert(
            "recfmt.time_system".to_owned(),
            reference.system.name().to_owned(),
        );
        if let Some(epoch) = reference.to_rfc3339(0.0) {
            attrs.insert("recfmt.epoch".to_owned(), epoch);
        }
    }
    for (k, v) in &header.metadata {
        attrs.insert(prefixed(k, "source."), v.clone());
    }
    for (k, v) in extra {
        attrs.insert(k.clone(), v.clone());
    }
    attrs
}

fn group_attributes(stream: &StreamDesc, plan: &StreamPlan) -> BTreeMap<String, AttrValue> {
    let mut attrs = BTreeMap::new();
    attrs.insert("recfmt.stream".to_owned(), stream.name.clone());
    if let Some(time) = plan.columns.get(stream.time) {
        attrs.insert("recfmt.time_column".to_owned(), time.link.clone());
    }
    attrs.insert(
        "recfmt.time_base".to_owned(),
        format!("{}/{}", stream.time_base.numer, stream.time_base.denom),
    );
    if let Some(entity) = stream.entity.and_then(|i| plan.columns.get(i)) {
        attrs.insert("recfmt.entity_column".to_owned(), entity.link.clone());
    }
    for (k, v) in &stream.metadata {
        attrs.insert(prefixed(k, "stream."), v.clone());
    }
    let mut attrs: BTreeMap<String, AttrValue> = attrs
        .into_iter()
        .map(|(k, v)| (k, AttrValue::VarLenString(v)))
        .collect();
    let omitted: Vec<String> = stream
        .signals
        .iter()
        .zip(&plan.columns)
        .filter(|(_, c)| matches!(c.layout, Layout::Omitted(_)))
        .map(|(s, _)| s.name.clone())
        .collect();
    if !omitted.is_empty() {
        attrs.insert(
            "recfmt.omitted_columns".to_owned(),
            AttrValue::VarLenStringArray(omitted),
        );
    }
    attrs
}

fn dataset_attributes(signal: &SignalDesc) -> BTreeMap<String, String> {
    let mut attrs = BTreeMap::new();
    for (k, v) in &signal.metadata {
        attrs.insert(prefixed(k, "recfmt."), v.clone());
    }
    attrs.insert("original_name".to_owned(), signal.name.clone());
    attrs.insert("dtype".to_owned(), signal.dtype.name().to_owned());
    if let Shape::Fixed(dims) = &signal.shape {
        attrs.insert("shape".to_owned(), shape_text(dims));
    }
    if let Some(unit) = &signal.unit {
        attrs.insert(crate::UNIT_KEY.to_owned(), unit.clone());
    }
    attrs
}

/// One HDF5 link name for a stream or signal name (see [the module docs](self#names)).
fn link_name(name: &str) -> String {
    let trimmed = name.trim_start_matches('/');
    let link: String = trimmed
        .chars()
        .map(|c| if c == '/' || c == '\0' { '_' } else { c })
        .collect();
    if link.is_empty() || link == "." || link == ".." {
        "_".into()
    } else {
        link
    }
}

/// Link names for `names`, made unique by appending `_2`, `_3`, ... (the rule of
/// [`crate::column_names`]).
fn unique_link_names<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut taken = crate::names::UniqueNames::new();
    names.map(|name| taken.claim(&link_name(name))).collect()
}

/// Which elements of a column are null: the element's own null bit, or its row's.
struct Nulls<'a> {
    values: &'a dyn Array,
    rows: Option<&'a NullBuffer>,
    per_row: usize,
}

impl Nulls<'_> {
    fn any(&self) -> bool {
        self.values.null_count() > 0 || self.rows.is_some_and(|n| n.null_count() > 0)
    }

    fn is_null(&self, element: usize) -> bool {
        self.values.is_null(element) || self.rows.is_some_and(|n| n.is_null(element / self.per_row))
    }
}

/// The typed elements of a column.
enum Source<'a> {
    Bool(&'a BooleanArray),
    I8(&'a PrimitiveArray<Int8Type>),
    I16(&'a PrimitiveArray<Int16Type>),
    I32(&'a PrimitiveArray<Int32Type>),
    I64(&'a PrimitiveArray<Int64Type>),
    U8(&'a PrimitiveArray<UInt8Type>),
    U16(&'a PrimitiveArray<UInt16Type>),
    U32(&'a PrimitiveArray<UInt32Type>),
    U64(&'a PrimitiveArray<UInt64Type>),
    F32(&'a PrimitiveArray<Float32Type>),
    F64(&'a PrimitiveArray<Float64Type>),
    Str(&'a StringArray, u32),
}

/// An element that cannot be written: its index and what is wrong.
type ElementError = (usize, String);

impl<'a> Source<'a> {
    fn new(elem: Elem, values: &'a dyn Array) -> Option<Self> {
        Some(match elem {
            Elem::Bool => Source::Bool(values.as_boolean_opt()?),
            Elem::I8 => Source::I8(values.as_primitive_opt()?),
            Elem::I16 => Source::I16(values.as_primitive_opt()?),
            Elem::I32 => Source::I32(values.as_primitive_opt()?),
            Elem::I64 => Source::I64(values.as_primitive_opt()?),
            Elem::U8 => Source::U8(values.as_primitive_opt()?),
            Elem::U16 => Source::U16(values.as_primitive_opt()?),
            Elem::U32 => Source::U32(values.as_primitive_opt()?),
            Elem::U64 => Source::U64(values.as_primitive_opt()?),
            Elem::F32 => Source::F32(values.as_primitive_opt()?),
            Elem::F64 => Source::F64(values.as_primitive_opt()?),
            Elem::Str(width) => Source::Str(values.as_string_opt::<i32>()?, width),
        })
    }

    /// Appends the little-endian bytes of `elements` to `out`.
    fn encode(
        &self,
        nulls: &Nulls<'_>,
        elements: Range<usize>,
        out: &mut Vec<u8>,
    ) -> Result<(), ElementError> {
        match self {
            Source::Bool(a) => {
                for i in elements {
                    if nulls.is_null(i) {
                        return Err((i, null_message("bool")));
                    }
                    out.push(u8::from(a.value(i)));
                }
                Ok(())
            }
            Source::I8(a) => put_ints(a, nulls, elements, out, "i8"),
            Source::I16(a) => put_ints(a, nulls, elements, out, "i16"),
            Source::I32(a) => put_ints(a, nulls, elements, out, "i32"),
            Source::I64(a) => put_ints(a, nulls, elements, out, "i64"),
            Source::U8(a) => put_ints(a, nulls, elements, out, "u8"),
            Source::U16(a) => put_ints(a, nulls, elements, out, "u16"),
            Source::U32(a) => put_ints(a, nulls, elements, out, "u32"),
            Source::U64(a) => put_ints(a, nulls, elements, out, "u64"),
            Source::F32(a) => {
                put_floats(a, nulls, elements, out);
                Ok(())
            }
            Source::F64(a) => {
                put_floats(a, nulls, elements, out);
                Ok(())
            }
            Source::Str(a, width) => put_strings(a, *width, nulls, elements, out),
        }
    }
}

fn null_message(dtype: &str) -> String {
    format!(
        "null in a {dtype} column: HDF5 {dtype} datasets cannot hold a null \
         (only float nulls have a form, NaN); export to Parquet to keep nulls"
    )
}

/// Numbers written as little-endian bytes.
trait LeBytes: Copy {
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! le_bytes {
    ($($t:ty),*) => {$(
        impl LeBytes for $t {
            #[inline]
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
le_bytes!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

/// Floats with a NaN for nulls.
trait FloatLe: LeBytes {
    const NAN: Self;
}

impl FloatLe for f32 {
    const NAN: Self = f32::NAN;
}

impl FloatLe for f64 {
    const NAN: Self = f64::NAN;
}

fn put_ints<T>(
    a: &PrimitiveArray<T>,
    nulls: &Nulls<'_>,
    elements: Range<usize>,
    out: &mut Vec<u8>,
    dtype: &str,
) -> Result<(), ElementError>
where
    T: ArrowPrimitiveType,
    T::Native: LeBytes,
{
    let any_null = nulls.any();
    for i in elements {
        if any_null && nulls.is_null(i) {
            return Err((i, null_message(dtype)));
        }
        a.value(i).put(out);
    }
    Ok(())
}

fn put_floats<T>(
    a: &PrimitiveArray<T>,
    nulls: &Nulls<'_>,
    elements: Range<usize>,
    out: &mut Vec<u8>,
) where
    T: ArrowPrimitiveType,
    T::Native: FloatLe,
{
    if nulls.any() {
        for i in elements {
            let v = if nulls.is_null(i) {
                T::Native::NAN
            } else {
                a.value(i)
            };
            v.put(out);
        }
    } else {
        for &v in &a.values()[elements] {
            v.put(out);
        }
    }
}

fn put_strings(
    a: &StringArray,
    width: u32,
    nulls: &Nulls<'_>,
    elements: Range<usize>,
    out: &mut Vec<u8>,
) -> Result<(), ElementError> {
    let width = width as usize;
    for i in elements {
        let text = if nulls.is_null(i) { "" } else { a.value(i) };
        let bytes = text.as_bytes();
        if bytes.len() > width {
            return Err((
                i,
                format!(
                    "a text of {} bytes does not fit the HDF5 string width of {width} bytes; \
                     raise the string width (Hdf5Options::string_width)",
                    bytes.len()
                ),
            ));
        }
        if bytes.contains(&0) {
            return Err((
                i,
                "a text holding a NUL character cannot be stored in a null-padded HDF5 string"
                    .to_owned(),
            ));
        }
        out.extend_from_slice(bytes);
        out.resize(out.len() + (width - bytes.len()), 0);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunk buffer capacities of every stored column, in bytes.
    fn pending_capacities(writer: &Hdf5Writer) -> Vec<usize> {
        let open = writer.open.as_ref().unwrap();
        open.streams
            .iter()
            .flat_map(|s| &s.columns)
            .filter_map(|c| match c {
                Column::Stored(c) => Some(c.pending.capacity()),
                Column::Omitted { .. } => None,
            })
            .collect()
    }

    #[test]
    fn chunk_buffers_grow_with_the_rows_seen() {
        use recfmt_core::{FrameBuf, TimeBase, Value};
        let mut nav = StreamDesc::new(
            "NAV",
            SignalDesc::scalar("t_us", DType::U64),
            TimeBase::MICROSECONDS,
        );
        nav.signals.push(SignalDesc::scalar("x", DType::F32));
        let header = Header {
            format: "memory",
            ..Header::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.h5");
        let streams = [nav];
        let options = Hdf5Options {
            compression_threads: 1,
            ..Hdf5Options::default()
        };
        let mut writer = Hdf5Writer::create(&path, &header, &streams, &options).unwrap();
        let mut batcher = crate::StreamBatcher::new(&header, &streams[0], 100_000);
        let mut rows = 0u64;
        let mut write = |writer: &mut Hdf5Writer, n: u64| {
            for _ in 0..n {
                let row = FrameBuf {
                    stream: 0,
                    values: vec![Value::UInt(rows), Value::Float(0.5)],
                };
                batcher.push(&row).unwrap();
                rows += 1;
            }
            writer
                .write_batch(0, &batcher.finish_batch().unwrap())
                .unwrap();
        };
        // One row holds a few bytes per column, not a whole chunk (65 535 rows: 512 KiB for
        // the times), which 5000 one-row streams multiplied into gigabytes.
        write(&mut writer, 1);
        let held = pending_capacities(&writer);
        assert!(held.iter().all(|&c| c <= 64), "{held:?}");
        // A thousand rows: doubled as they came, within twice what they need.
        write(&mut writer, 999);
        let held = pending_capacities(&writer);
        assert!(held[0] >= 8000 && held[0] <= 16_000, "{held:?}");
        assert!(held[1] >= 4000 && held[1] <= 8000, "{held:?}");
        // Never past one chunk.
        write(&mut writer, 100_000);
        let held = pending_capacities(&writer);
        assert!(held[0] <= MAX_CHUNK_ROWS * 8, "{held:?}");
        assert!(held[1] <= MAX_CHUNK_ROWS * 4, "{held:?}");
        writer.finish().unwrap();
        let file = hdf5_pure::File::open(&path).unwrap();
        let x = file.dataset("NAV/x").unwrap().read_f32().unwrap();
        assert_eq!(x.len(), 101_000);
        assert!(x.iter().all(|&v| v == 0.5));
    }

    #[test]
    fn link_names_are_sanitized_and_unique() {
        let names = unique_link_names(
            [
                "/position/altitude-ft",
                "position_altitude-ft",
                "x",
                "",
                ".",
                "..",
                "a\0b",
            ]
            .into_iter(),
        );
        assert_eq!(
            names,
            [
                "position_altitude-ft",
                "position_altitude-ft_2",
                "x",
                "_",
                "__2",
                "__3",
                "a_b"
            ]
        );
        assert_eq!(link_name("/"), "_");
    }

    #[test]
    fn chunks_shrink_for_wide_rows() {
        let wide = SignalDesc::scalar("m", DType::F64).with_shape(Shape::Fixed(vec![64, 64]));
        let Layout::Stored(l) = layout(&wide, 64, MAX_CHUNK_ROWS) else {
            panic!("stored");
        };
        assert_eq!(l.row_bytes, 64 * 64 * 8);
        assert_eq!(l.chunk_rows, 128);
        let narrow = SignalDesc::scalar("x", DType::F64);
        let Layout::Stored(l) = layout(&narrow, 64, MAX_CHUNK_ROWS) else {
            panic!("stored");
        };
        assert_eq!(l.chunk_rows, MAX_CHUNK_ROWS);
    }
}
