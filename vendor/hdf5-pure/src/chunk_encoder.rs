//! recfmt patch: filter whole chunks away from the write session.
//!
//! An in-place append runs the dataset's filter pipeline on the thread that holds the
//! session, so a writer of several datasets compresses one chunk at a time however many
//! cores it has. [`ChunkEncoder`] is that pipeline step on its own: taken from a dataset
//! with [`Dataset::chunk_encoder`](crate::Dataset::chunk_encoder), it is `Send`, holds no
//! reference to the file, and encodes one whole chunk into a caller's buffer. The caller
//! then hands the result to
//! [`Dataset::append_encoded_chunk`](crate::Dataset::append_encoded_chunk), which writes it
//! exactly as [`Dataset::append_raw`](crate::Dataset::append_raw) would have written the
//! same raw chunk (same bytes, filter mask 0), so the encoding can run on worker threads
//! while the writes stay in order on one.

#[cfg(not(feature = "std"))]
use alloc::vec::Vec;

use crate::datatype::Datatype;
use crate::error::{Error, FormatError};
use crate::filter_pipeline::{FILTER_DEFLATE, FILTER_SHUFFLE, FilterPipeline};
use crate::filters::{ChunkContext, FilterScratch, compress_chunk_with};

/// One dataset's chunk filter pipeline, detached from the file (see the
/// [module docs](self)). It holds no working state, so one encoder can be shared by every
/// worker thread (`Arc`), each with its own [`ChunkScratch`].
#[derive(Debug, Clone)]
pub struct ChunkEncoder {
    pipeline: Option<FilterPipeline>,
    datatype: Datatype,
    /// Chunk dimensions as the append engine's filter context sees them.
    spatial: Vec<u64>,
    chunk_bytes: usize,
}

/// The working state of [`ChunkEncoder::encode`]: the deflate compressor (about 300 KiB)
/// and one intermediate chunk. Keep one per thread across chunks, of any dataset, so a
/// loop over chunks allocates nothing once warm.
#[derive(Default)]
pub struct ChunkScratch {
    filters: FilterScratch,
    /// Output of a filter that is not the last one (the shuffled chunk, for shuffle + deflate).
    stage: Vec<u8>,
}

impl core::fmt::Debug for ChunkScratch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ChunkScratch")
            .field("stage_capacity", &self.stage.capacity())
            .finish_non_exhaustive()
    }
}

impl ChunkScratch {
    /// An empty scratch; nothing is allocated until a chunk needs it.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ChunkEncoder {
    pub(crate) fn new(
        pipeline: Option<FilterPipeline>,
        datatype: Datatype,
        spatial: Vec<u64>,
        chunk_bytes: usize,
    ) -> Self {
        Self {
            pipeline,
            datatype,
            spatial,
            chunk_bytes,
        }
    }

    /// Bytes of one whole raw chunk: the only length [`encode`](Self::encode) accepts.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }

    /// Whether the dataset has a filter pipeline (without one, encoding is a copy).
    pub fn is_filtered(&self) -> bool {
        self.pipeline.is_some()
    }

    /// Runs the pipeline over one whole raw chunk (`raw.len() == chunk_bytes()`), replacing
    /// the contents of `out` with the stored form, byte for byte what an in-place append of
    /// the same chunk stores.
    pub fn encode(
        &self,
        scratch: &mut ChunkScratch,
        raw: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), Error> {
        if raw.len() != self.chunk_bytes {
            return Err(Error::AppendInPlaceUnsupported(
                "an encoded chunk must be made from exactly one whole raw chunk",
            ));
        }
        let Some(pipeline) = &self.pipeline else {
            out.clear();
            out.extend_from_slice(raw);
            return Ok(());
        };
        let ctx = ChunkContext::from_datatype(&self.spatial, &self.datatype)?;
        let reusable = pipeline
            .filters
            .iter()
            .all(|f| f.filter_id == FILTER_SHUFFLE || f.filter_id == FILTER_DEFLATE);
        if !reusable {
            // Any other filter: the pipeline's own (allocating) path, same bytes.
            let encoded = compress_chunk_with(&mut scratch.filters, raw, pipeline, ctx)?;
            out.clear();
            out.extend_from_slice(&encoded);
            return Ok(());
        }
        // Shuffle and deflate, each into a reused buffer. `stage` holds the input of the
        // next filter once one has run; the last output is swapped into `out`.
        let mut staged = false;
        for filter in &pipeline.filters {
            let input: &[u8] = if staged { &scratch.stage } else { raw };
            match filter.filter_id {
                FILTER_SHUFFLE => crate::filters::shuffle_compress_into(
                    input,
                    ctx.element_size.get() as usize,
                    out,
                )?,
                _ => deflate_into(
                    &mut scratch.filters,
                    input,
                    filter.client_data.first().copied().unwrap_or(6),
                    out,
                )?,
            }
            core::mem::swap(&mut scratch.stage, out);
            staged = true;
        }
        core::mem::swap(&mut scratch.stage, out);
        if !staged {
            out.clear();
            out.extend_from_slice(raw);
        }
        Ok(())
    }
}

#[cfg(feature = "deflate")]
fn deflate_into(
    scratch: &mut FilterScratch,
    input: &[u8],
    level: u32,
    out: &mut Vec<u8>,
) -> Result<(), FormatError> {
    crate::filters::deflate_compress_into(scratch, input, level, out)
}

#[cfg(not(feature = "deflate"))]
fn deflate_into(
    _scratch: &mut FilterScratch,
    _input: &[u8],
    _level: u32,
    _out: &mut Vec<u8>,
) -> Result<(), FormatError> {
    Err(FormatError::UnsupportedFilter(FILTER_DEFLATE))
}
