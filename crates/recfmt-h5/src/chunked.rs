//! Datasets grown a chunk at a time: each column buffers its encoded rows up to one chunk,
//! and full chunks go into the file (through compression workers when there are some) in
//! the order they were filled.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hdf5_pure::{ChunkEncoder, Dataset, DatasetBuilder, Datatype, MaxExtent};
use recfmt_core::{Result, Writeback};

use crate::H5Output;
use crate::compress::{Compressor, Done};
use crate::error::{internal_error, write_error};

/// Declares an empty chunked dataset that grows along its first axis (the rows), unlimited,
/// `chunk_rows` rows per chunk; `trailing` are fixed axes after the rows (a `[3]` vector
/// column is `(rows, 3)`), each held whole by every chunk. `deflate` adds shuffle + deflate
/// at that level. The caller adds its attributes.
///
/// ```
/// let mut skeleton = hdf5_pure::FileBuilder::new();
/// let d = skeleton.create_dataset("xyz");
/// recfmt_h5::declare_appendable(d, hdf5_pure::make_f32_type(), &[3], 1024, Some(1));
/// ```
pub fn declare_appendable<'a>(
    dataset: &'a mut DatasetBuilder,
    datatype: Datatype,
    trailing: &[u64],
    chunk_rows: usize,
    deflate: Option<u8>,
) -> &'a mut DatasetBuilder {
    let mut shape = vec![0];
    let mut maxshape = vec![MaxExtent::Unlimited];
    let mut chunks = vec![chunk_rows as u64];
    for &axis in trailing {
        shape.push(axis);
        maxshape.push(MaxExtent::Fixed(axis));
        chunks.push(axis);
    }
    dataset
        .with_raw_data(datatype, Vec::new(), 0)
        .with_shape(&shape)
        .with_maxshape(&maxshape)
        .with_chunks(&chunks);
    if let Some(level) = deflate {
        dataset.with_shuffle().with_deflate(u32::from(level));
    }
    dataset
}

/// A dataset of a [`ChunkedWriter`], by the order it was opened in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatasetId(usize);

/// One dataset of the file, as the chunk writer sees it.
struct DatasetOut {
    /// `group/dataset`, for error messages.
    path: String,
    dataset: Dataset,
    /// The dataset's filter pipeline, for the compression workers (parallel mode only).
    encoder: Option<Arc<ChunkEncoder>>,
}

/// Where full chunks go: straight into the file through hdf5-pure's own filter step, or
/// through worker threads that compress them while the writing thread fills the next ones,
/// and then into the file in the order they were handed over. hdf5-pure 0.47 only filters
/// chunks inside its own append, so the vendored copy carries a small patch for this
/// (`ChunkEncoder`, `Dataset::append_encoded_chunk`; see `vendor/README.md`): the workers run
/// hdf5-pure's own filter code, and the file is byte for byte the one the single-threaded
/// writer makes. At most two chunks per worker are in flight, and their buffers are reused,
/// so memory does not grow with the recording.
///
/// Whole chunks go through [`ChunkedWriter::write_chunk`]; [`ChunkedWriter::drain`] writes
/// the ones still being compressed, after which each column's last, partial chunk goes
/// through [`ChunkedWriter::write_tail`] (hdf5-pure pads and filters it). [`ColumnBuffer`]
/// does that bookkeeping for one column.
pub struct ChunkedWriter {
    target: PathBuf,
    datasets: Vec<DatasetOut>,
    compressor: Option<Compressor>,
    /// The output's early write-back ([`ChunkedWriter::with_writeback`]), told what each
    /// chunk added.
    writeback: Option<Writeback>,
}

impl std::fmt::Debug for ChunkedWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkedWriter")
            .field("target", &self.target)
            .field("datasets", &self.datasets.len())
            .field("compressor", &self.compressor)
            .field("writeback", &self.writeback)
            .finish()
    }
}

impl ChunkedWriter {
    /// A writer for the datasets of the output `target` (named in errors), compressing on
    /// `threads` worker threads, or on the calling thread when `None` (see
    /// [`compression_threads`](crate::compression_threads)).
    pub fn new(target: &Path, threads: Option<usize>) -> Result<Self> {
        let compressor = match threads {
            Some(threads) => Some(
                Compressor::start(threads)
                    .map_err(|e| recfmt_core::Error::Io(e).in_file(target))?,
            ),
            None => None,
        };
        Ok(ChunkedWriter {
            target: target.to_path_buf(),
            datasets: Vec::new(),
            compressor,
            writeback: None,
        })
    }

    /// A writer for the datasets of `output` ([`ChunkedWriter::new`] for its target), which
    /// also starts the file's write-back as chunks go in ([`H5Output::writeback`]), so the
    /// sync when it closes does not hold up the end of the conversion.
    pub fn for_output(output: &H5Output, threads: Option<usize>) -> Result<Self> {
        let mut writer = Self::new(output.target(), threads)?;
        writer.writeback = output.writeback();
        Ok(writer)
    }

    /// Tells the write-back that `bytes` more went into the file.
    fn wrote(&mut self, bytes: usize) {
        if let Some(writeback) = self.writeback.as_mut() {
            writeback.wrote(bytes as u64);
        }
    }

    /// Opens the dataset at `path` of `file` (declared with [`declare_appendable`]) for
    /// appending.
    pub fn open(&mut self, file: &hdf5_pure::File, path: &str) -> Result<DatasetId> {
        let dataset = file
            .dataset(path)
            .map_err(|e| write_error(&self.target, format!("opening {path} for appending"), e))?;
        let encoder = match self.compressor {
            Some(_) => Some(Arc::new(dataset.chunk_encoder().map_err(|e| {
                write_error(&self.target, format!("opening {path} for appending"), e)
            })?)),
            None => None,
        };
        self.datasets.push(DatasetOut {
            path: path.to_owned(),
            dataset,
            encoder,
        });
        Ok(DatasetId(self.datasets.len() - 1))
    }

    fn dataset(&mut self, id: DatasetId) -> Result<&mut DatasetOut> {
        let count = self.datasets.len();
        let target = &self.target;
        self.datasets.get_mut(id.0).ok_or_else(|| {
            internal_error(
                target,
                format!(
                    "dataset {} of {count} does not exist (internal error)",
                    id.0
                ),
            )
        })
    }

    /// Writes (or hands over for compression) one whole raw chunk of dataset `id`, and
    /// returns an empty buffer for the column to fill next: `chunk` itself when it was
    /// written here, else a buffer a finished chunk gave back, so buffers are reused rather
    /// than allocated (and page-faulted in) per chunk.
    pub fn write_chunk(&mut self, id: DatasetId, mut chunk: Vec<u8>) -> Result<Vec<u8>> {
        if self.compressor.is_none() {
            let target = self.target.clone();
            let out = self.dataset(id)?;
            out.dataset
                .append_raw(&chunk)
                .map_err(|e| write_error(&target, format!("appending to {}", out.path), e))?;
            self.wrote(chunk.len());
            chunk.clear();
            return Ok(chunk);
        }
        let encoder = self
            .dataset(id)?
            .encoder
            .clone()
            .ok_or_else(|| internal_error(&self.target, "a dataset has no chunk encoder"))?;
        // Write what is done (and wait while the window is full) before adding a chunk.
        while let Some(done) = self.next_done(false)? {
            self.write_done(done)?;
        }
        let Some(compressor) = self.compressor.as_mut() else {
            return Err(internal_error(&self.target, "the compressor is gone"));
        };
        let chunk_bytes = encoder.chunk_bytes();
        compressor.submit(&self.target, id.0, encoder, chunk, chunk_bytes)
    }

    /// The oldest chunk in flight once it is compressed: waited for when `wait` is set or the
    /// window is full, else only when already done. `None` when there is nothing to write.
    fn next_done(&mut self, wait: bool) -> Result<Option<Done>> {
        let Some(compressor) = self.compressor.as_mut() else {
            return Ok(None);
        };
        compressor.next_done(&self.target, wait)
    }

    /// Writes one compressed chunk into its dataset and keeps its buffers for reuse.
    fn write_done(&mut self, done: Done) -> Result<()> {
        let Done {
            dataset,
            raw,
            encoded,
        } = done;
        let target = self.target.clone();
        let out = self.dataset(DatasetId(dataset))?;
        let encoded = encoded
            .map_err(|e| write_error(&target, format!("compressing a chunk of {}", out.path), e))?;
        let written = encoded.len();
        let encoded = out
            .dataset
            .append_encoded_chunk(encoded)
            .map_err(|e| write_error(&target, format!("appending to {}", out.path), e))?;
        self.wrote(written);
        if let Some(compressor) = self.compressor.as_mut() {
            compressor.recycle(raw, encoded);
        }
        Ok(())
    }

    /// Writes every chunk still in flight; call it before the partial last chunks
    /// ([`ChunkedWriter::write_tail`]), so every full chunk of a dataset comes before them.
    pub fn drain(&mut self) -> Result<()> {
        while let Some(done) = self.next_done(true)? {
            self.write_done(done)?;
        }
        Ok(())
    }

    /// Writes a dataset's last, partial chunk (hdf5-pure pads and filters it); nothing when
    /// `rows` is empty.
    pub fn write_tail(&mut self, id: DatasetId, rows: &[u8]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let target = self.target.clone();
        let out = self.dataset(id)?;
        out.dataset
            .append_raw(rows)
            .map_err(|e| write_error(&target, format!("appending to {}", out.path), e))?;
        self.wrote(rows.len());
        Ok(())
    }
}

/// The encoded rows of one column not yet written: always less than one chunk between calls.
///
/// The buffer grows with the rows the column has seen, doubling up to one chunk, so a file
/// of thousands of short streams does not hold a whole chunk per column.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let target = dir.path().join("out.h5");
/// let mut skeleton = hdf5_pure::FileBuilder::new();
/// recfmt_h5::declare_appendable(skeleton.create_dataset("x"), hdf5_pure::make_u16_type(), &[], 4, None);
/// let out = recfmt_h5::H5Output::create(&target, recfmt_core::Replace::Never, skeleton)?;
/// let mut chunks = recfmt_h5::ChunkedWriter::for_output(&out, None)?;
/// let mut x = recfmt_h5::ColumnBuffer::new(chunks.open(out.file(), "x")?, 4 * 2);
/// for v in 0..10u16 {
///     x.push(&v.to_le_bytes(), &mut chunks)?;
/// }
/// chunks.drain()?;
/// x.finish(&mut chunks)?;
/// drop(chunks);
/// out.finish()?;
/// let file = hdf5_pure::File::open(&target)?;
/// assert_eq!(file.dataset("x")?.read_u16()?, (0..10).collect::<Vec<u16>>());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ColumnBuffer {
    dataset: DatasetId,
    pending: Vec<u8>,
    chunk_bytes: usize,
}

impl ColumnBuffer {
    /// An empty buffer for dataset `dataset`, whose chunks hold `chunk_bytes` bytes.
    pub fn new(dataset: DatasetId, chunk_bytes: usize) -> Self {
        ColumnBuffer {
            dataset,
            pending: Vec::new(),
            chunk_bytes: chunk_bytes.max(1),
        }
    }

    /// The dataset it fills.
    pub fn dataset(&self) -> DatasetId {
        self.dataset
    }

    /// Bytes of a whole chunk.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }

    /// Bytes buffered now.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// The capacity of the buffer, in bytes (at most one chunk).
    pub fn capacity(&self) -> usize {
        self.pending.capacity()
    }

    /// The buffer with room for `more` bytes, for the caller to append encoded rows to (no
    /// more than make it one chunk; then [`ColumnBuffer::write_if_full`]).
    pub fn reserve(&mut self, more: usize) -> &mut Vec<u8> {
        let needed = self.pending.len() + more;
        if needed > self.pending.capacity() {
            let doubled = self
                .pending
                .capacity()
                .saturating_mul(2)
                .min(self.chunk_bytes);
            self.pending
                .reserve_exact(needed.max(doubled) - self.pending.len());
        }
        &mut self.pending
    }

    /// Writes the chunk when the buffer holds a whole one.
    pub fn write_if_full(&mut self, writer: &mut ChunkedWriter) -> Result<()> {
        if self.pending.len() >= self.chunk_bytes {
            let full = std::mem::take(&mut self.pending);
            self.pending = writer.write_chunk(self.dataset, full)?;
            if self.pending.capacity() < self.chunk_bytes {
                self.pending.reserve_exact(self.chunk_bytes);
            }
        }
        Ok(())
    }

    /// Appends `bytes` (whole rows that do not go past the chunk) and writes the chunk when
    /// it is full.
    pub fn push(&mut self, bytes: &[u8], writer: &mut ChunkedWriter) -> Result<()> {
        self.reserve(bytes.len()).extend_from_slice(bytes);
        self.write_if_full(writer)
    }

    /// Writes the rows still buffered as the dataset's last, partial chunk; call it after
    /// [`ChunkedWriter::drain`].
    pub fn finish(&mut self, writer: &mut ChunkedWriter) -> Result<()> {
        writer.write_tail(self.dataset, &self.pending)?;
        self.pending.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_tell_the_write_back_what_they_added_and_read_back_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("big.h5");
        let mut skeleton = hdf5_pure::FileBuilder::new();
        let chunk_rows = 65_536;
        declare_appendable(
            skeleton.create_dataset("x"),
            hdf5_pure::make_u64_type(),
            &[],
            chunk_rows,
            None,
        );
        let out = crate::H5Output::create(&target, recfmt_core::Replace::Never, skeleton)
            .expect("create");
        let mut chunks = ChunkedWriter::for_output(&out, None).expect("writer");
        let mut x = ColumnBuffer::new(chunks.open(out.file(), "x").expect("open"), chunk_rows * 8);
        // 20 MiB of values, 2.5 write-back steps, and a partial last chunk.
        let rows = (20 << 20) / 8 + 1_000;
        for v in 0..rows as u64 {
            x.push(&v.to_le_bytes(), &mut chunks).expect("push");
        }
        let reported = chunks.writeback.as_ref().map(Writeback::unsubmitted);
        assert!(
            reported.is_some_and(|b| b > 0 && b < 8 << 20),
            "{reported:?}: the whole chunks since the last request"
        );
        chunks.drain().expect("drain");
        x.finish(&mut chunks).expect("tail");
        drop(chunks);
        out.finish().expect("finish");
        let file = hdf5_pure::File::open(&target).expect("open");
        let values = file.dataset("x").expect("x").read_u64().expect("read");
        assert!(values == (0..rows as u64).collect::<Vec<u64>>());
    }
}
