//! HDF5 output through the pure-Rust `hdf5-pure` crate (feature `hdf5`).
//!
//! [`Hdf5Writer`] writes the record batches of a [`StreamBatcher`](crate::StreamBatcher) (one
//! per stream) into a single HDF5 file, streaming: every dataset is declared up front, then
//! grown a chunk at a time, so memory stays at most one chunk per column however long the
//! recording is (a column's buffer grows with its rows, so a short column holds only those).
//! The file is written under a temporary name beside the target and renamed to
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
//! each compressed chunk into the file in the order it handed them over: the workers run
//! hdf5-pure's own filter code, and the file is byte for byte the one the single-threaded
//! writer makes (the chunk writer of `recfmt-h5`, the HDF5 writing module every HDF5 output
//! shares, does this). At most two chunks per worker are in flight, and their buffers are reused,
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

mod encode;
mod layout;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_buffer::NullBuffer;
use hdf5_pure::FileBuilder;
use recfmt_core::{DType, ErrorKind, Header, Metadata, StreamDesc};
use recfmt_h5::{ChunkedWriter, ColumnBuffer, H5Output};

use crate::Error;
use crate::mapping::shape_text;
use encode::{Nulls, Source};
use layout::{
    Layout, StoredLayout, declare_dataset, group_attributes, layout, plan_stream, root_attributes,
    unique_link_names,
};

/// The largest chunk length, in rows, that every HDF5 reader accepts from hdf5-pure 0.47.
///
/// hdf5-pure encodes a chunk dimension above 65 535 in 4 bytes where the C library expects
/// 3, and HDF5 2.0 (the one in current h5py wheels) then refuses to open the dataset.
pub const MAX_CHUNK_ROWS: usize = recfmt_h5::MAX_CHUNK_ROWS;

/// Default width in bytes of string datasets ([`Hdf5Options::string_width`]).
pub const DEFAULT_STRING_WIDTH: u32 = 64;

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
    /// Root attributes still being computed when the export starts (the input's SHA-256):
    /// waited for when the file is finished and set then, as [`Self::metadata`] entries are,
    /// so that computing them overlaps the writing instead of coming first.
    pub pending_metadata: Option<crate::PendingMetadata>,
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
            pending_metadata: None,
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
    open: Option<OpenFile>,
    target: PathBuf,
    failed: bool,
    skip_omitted_values: bool,
}

impl Hdf5Writer {
    /// Declares every stream (group `/<stream name>`) and every column dataset in a new
    /// file at a temporary path beside `path`, and opens it for appending.
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

        // Declare everything, then write the (small) skeleton file.
        let mut builder = FileBuilder::new();
        for (key, value) in root_attributes(header, &options.metadata) {
            builder.set_attr(&key, recfmt_h5::text(value));
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
        let output =
            H5Output::create(path, options.replace, builder).map_err(|e| output_error(path, e))?;
        let threads = recfmt_h5::compression_threads(options.deflate, options.compression_threads);
        let mut chunks =
            ChunkedWriter::for_output(&output, threads).map_err(|e| output_error(path, e))?;
        let mut states = Vec::with_capacity(plans.len());
        for (stream, plan) in streams.iter().zip(plans) {
            let mut columns = Vec::with_capacity(plan.columns.len());
            for (signal, column) in stream.signals.iter().zip(plan.columns) {
                columns.push(match column.layout {
                    Layout::Stored(stored) => {
                        let dataset = chunks
                            .open(output.file(), &format!("{}/{}", plan.group, column.link))
                            .map_err(|e| output_error(path, e))?;
                        Column::Stored(Box::new(StoredColumn {
                            signal: signal.name.clone(),
                            dtype: signal.dtype,
                            buffer: ColumnBuffer::new(
                                dataset,
                                stored.chunk_rows * stored.row_bytes,
                            ),
                            layout: stored,
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
                streams: states,
                chunks,
                output,
                pending: options.pending_metadata.clone(),
            }),
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
                    c.append(
                        &self.target,
                        &state.name,
                        state.rows,
                        array,
                        &mut open.chunks,
                    )?;
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
        open.close(&self.target)
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

/// Sets `metadata` as root attributes of the open file, replacing any of the same name, and
/// commits them.
fn set_root_attributes(output: &H5Output, metadata: &Metadata) -> recfmt_core::Result<()> {
    let file = output.file();
    let edit = || -> Result<(), hdf5_pure::Error> {
        let root = file.root();
        for (key, value) in metadata {
            root.set_attr(key, recfmt_h5::text(value.clone()))?;
        }
        file.commit()
    };
    edit().map_err(|e| recfmt_h5::write_error(output.target(), "setting the root attributes", e))
}

/// The open file and the per-stream state.
#[derive(Debug)]
struct OpenFile {
    // Field order matters on drop: the columns, then the chunk writer (its workers stop and
    // its dataset handles go), then the output (closed, and removed when not finished).
    streams: Vec<StreamState>,
    chunks: ChunkedWriter,
    output: H5Output,
    /// Root attributes to set once they are computed, before the file closes.
    pending: Option<crate::PendingMetadata>,
}

impl OpenFile {
    /// Writes the chunks still being compressed, then every column's buffered tail, then
    /// closes the file and moves it to its name.
    fn close(self, target: &Path) -> Result<(), Error> {
        let OpenFile {
            streams,
            mut chunks,
            output,
            pending,
        } = self;
        let written = (|| {
            // Every full chunk of a column is in the file before its partial tail.
            chunks.drain()?;
            for state in streams {
                for column in state.columns {
                    if let Column::Stored(mut c) = column {
                        c.buffer.finish(&mut chunks)?;
                    }
                }
            }
            Ok(())
        })();
        // Workers are stopped and joined, and the datasets let go, before the file closes.
        drop(chunks);
        written.map_err(|e| output_error(target, e))?;
        if let Some(pending) = pending {
            set_root_attributes(&output, pending.wait()?).map_err(|e| output_error(target, e))?;
        }
        output.finish().map_err(|e| output_error(target, e))
    }
}

/// An error of the HDF5 writing module as this crate's: a failed output stays an
/// [`Error::Io`] naming the file (the path said once), anything else converts as usual.
fn output_error(target: &Path, e: recfmt_core::Error) -> Error {
    if e.kind() != ErrorKind::Io {
        return Error::from(e);
    }
    let source = match e {
        recfmt_core::Error::File { source, .. } => match *source {
            recfmt_core::Error::Io(io) => io,
            other => std::io::Error::other(other.in_file(target)),
        },
        recfmt_core::Error::Io(io) => io,
        other => std::io::Error::other(other.in_file(target)),
    };
    Error::io(target, source)
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
    /// Encoded rows not yet written: always less than one chunk between calls (grown with
    /// the rows seen, up to one chunk).
    buffer: ColumnBuffer,
}

impl StoredColumn {
    /// Encodes the rows of `array` into the chunk buffer, writing every chunk it completes.
    fn append(
        &mut self,
        target: &Path,
        stream: &str,
        first_row: u64,
        array: &dyn Array,
        chunks: &mut ChunkedWriter,
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
        let rows = array.len();
        let mut row = 0;
        while row < rows {
            let room = layout.chunk_rows - self.buffer.len() / layout.row_bytes;
            let take = room.min(rows - row);
            let pending = self.buffer.reserve(take * layout.row_bytes);
            let elements = row * layout.per_row..(row + take) * layout.per_row;
            source
                .encode(&nulls, elements, pending)
                .map_err(|(element, message)| Error::Value {
                    stream: stream.to_owned(),
                    signal: self.signal.clone(),
                    message: format!(
                        "row {}: {message}",
                        first_row + (element / layout.per_row) as u64
                    ),
                })?;
            row += take;
            self.buffer
                .write_if_full(chunks)
                .map_err(|e| output_error(target, e))?;
        }
        Ok(())
    }
}
