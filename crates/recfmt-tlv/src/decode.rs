//! The one decoding of records into rows, shared by the reader (row and column views) and
//! the decoding threads of the batch path.
//!
//! Records of a layout are written as runs ([`Run`]): the times and payloads of several
//! records of one stream, decoded column by column into the batch
//! ([`RowWriter::begin_rows`], [`RowWriter::push_column`]); a single record is a run of one,
//! and the row view takes one row per run. A scan that keeps only the times pushes the time
//! column and never looks at the payloads.

use recfmt_core::{Result, RowWriter};

use crate::layout::CompiledLayout;
use crate::record::RecordRef;

/// Records of one stream with a layout, in file order: their times and their payloads
/// (empty when no column but the time is kept).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run<'a> {
    pub(crate) times: &'a [u64],
    pub(crate) payloads: Payloads<'a>,
}

/// Where the payloads of a [`Run`] are.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Payloads<'a> {
    /// Back to back, each cut to the layout's size.
    Packed(&'a [u8]),
    /// Where they lie in a block of whole records: the payload of row `i` starts at byte
    /// `starts[i]` of `bytes` (the decoding threads read them there instead of copying each
    /// stream's payloads together first).
    At { bytes: &'a [u8], starts: &'a [u32] },
}

impl<'a> Payloads<'a> {
    /// The payloads from row `rows` on, of a layout of `size` bytes.
    fn skip(self, rows: usize, size: usize) -> Self {
        match self {
            Payloads::Packed(bytes) => {
                Payloads::Packed(bytes.get(rows.saturating_mul(size)..).unwrap_or_default())
            }
            Payloads::At { bytes, starts } => Payloads::At {
                bytes,
                starts: starts.get(rows..).unwrap_or_default(),
            },
        }
    }
}

/// How each stream's records become rows: the compiled layout of every stream with a layout
/// (by stream index), and the stream of records without one.
#[derive(Debug, Clone)]
pub(crate) struct RowDecoder {
    layouts: Vec<CompiledLayout>,
    unknown_stream: usize,
}

impl RowDecoder {
    /// A decoder for streams `0..layouts.len()` (one per layout) and `unknown_stream`.
    pub(crate) fn new(layouts: Vec<CompiledLayout>, unknown_stream: usize) -> Self {
        RowDecoder {
            layouts,
            unknown_stream,
        }
    }

    /// The stream of records whose type has no layout.
    pub(crate) fn unknown_stream(&self) -> usize {
        self.unknown_stream
    }

    /// Payload bytes of stream `stream`'s layout (0 for the unknown stream).
    pub(crate) fn payload_size(&self, stream: usize) -> usize {
        self.layouts.get(stream).map_or(0, |l| l.size)
    }

    /// Writes `record` as a row of `stream` (when the stream is wanted): `t_us`, then the
    /// layout's fields, or `type_id` and the raw payload for a type without a layout. A
    /// payload of a layout must be at least the layout's size (the framer checks it).
    #[inline]
    pub(crate) fn write_row(
        &self,
        stream: usize,
        record: &RecordRef<'_>,
        row: &mut RowWriter<'_>,
    ) -> Result<()> {
        if stream == self.unknown_stream {
            return write_unknown_row(stream, record, row);
        }
        let payload = record
            .payload
            .get(..self.payload_size(stream))
            .unwrap_or(record.payload);
        let run = Run {
            times: std::slice::from_ref(&record.t_us),
            payloads: Payloads::Packed(payload),
        };
        self.write_run(stream, run, row).map(drop)
    }

    /// Writes the records of `run` as rows of `stream` (a stream with a layout), from the
    /// first on, as one run of rows column by column: as many as the stream's batch takes
    /// before it is full ([`RowWriter::begin_rows`]), one on the row view, one per call for
    /// a layout that is not columnar ([`CompiledLayout::is_columnar`]). Returns the rows written (0 when the stream is not wanted).
    pub(crate) fn write_run(
        &self,
        stream: usize,
        run: Run<'_>,
        row: &mut RowWriter<'_>,
    ) -> Result<usize> {
        let Some(layout) = self.layouts.get(stream) else {
            return Err(recfmt_core::Error::invalid(format!(
                "USVLOG stream {stream} has no record layout"
            )));
        };
        let most = if layout.is_columnar() {
            run.times.len()
        } else {
            run.times.len().min(1)
        };
        let rows = row.begin_rows(stream, most)?;
        if rows == 0 {
            return Ok(0);
        }
        row.push_column(run.times[..rows].iter().copied())?;
        if row.skip_rest() {
            // The times alone are wanted (`recfmt validate`): the payloads are not read.
            row.finish()?;
            return Ok(rows);
        }
        match run.payloads {
            Payloads::Packed(payloads) => layout.write_columns(payloads, rows, row)?,
            Payloads::At { bytes, starts } => layout.write_columns_at(bytes, starts, rows, row)?,
        }
        row.finish()?;
        Ok(rows)
    }

    /// Writes the rows of `run` (all of them) in as many runs as the batches take.
    pub(crate) fn write_all(
        &self,
        stream: usize,
        run: Run<'_>,
        row: &mut RowWriter<'_>,
    ) -> Result<()> {
        let size = self.payload_size(stream);
        let mut done = 0;
        while done < run.times.len() {
            let rest = Run {
                times: &run.times[done..],
                payloads: run.payloads.skip(done, size),
            };
            match self.write_run(stream, rest, row)? {
                0 => break,
                n => done += n,
            }
        }
        Ok(())
    }
}

/// A record of a type without a layout: `t_us`, `type_id` and the raw payload.
fn write_unknown_row(stream: usize, record: &RecordRef<'_>, row: &mut RowWriter<'_>) -> Result<()> {
    if !row.begin(stream)? {
        return Ok(());
    }
    row.push(record.t_us)?;
    if !row.skip_rest() {
        row.push(record.type_id)?;
        if row.wants_next() {
            row.push_bytes(record.payload)?;
        } else {
            row.skip()?;
        }
    }
    row.finish()
}

/// Records of a layout gathered per stream, in file order, to be written as runs
/// ([`Gathered::flush`]): the caller's thread gathers a chunk of framed records, a decoding
/// thread a block's. Records of the unknown stream are written as they come, not gathered.
#[derive(Debug, Default)]
pub(crate) struct Gathered {
    streams: Vec<StreamRecords>,
}

/// One stream's gathered records.
#[derive(Debug, Default)]
struct StreamRecords {
    /// Rows of this stream are wanted.
    wanted: bool,
    /// Columns besides the time are kept: payloads are gathered too.
    values: bool,
    /// Rows the stream's batch takes before it is full.
    room: usize,
    times: Vec<u64>,
    payloads: Vec<u8>,
    /// Where each payload starts in the block being decoded ([`Gathered::push_at`]).
    starts: Vec<u32>,
}

impl Gathered {
    /// Starts a chunk for the batches of `dst`: what each stream wants, and its room.
    pub(crate) fn prepare(&mut self, dst: &recfmt_core::BatchSet) {
        self.streams.resize_with(dst.len(), StreamRecords::default);
        let capacity = dst.capacity();
        for (s, run) in self.streams.iter_mut().enumerate() {
            let batch = dst.stream(s);
            run.wanted = dst.wants(s);
            run.values = batch.keeps_other_than(0);
            run.room = batch.room(capacity).max(1);
            run.times.clear();
            run.payloads.clear();
            run.starts.clear();
        }
    }

    /// Adds a record of `stream` (`payload` cut to its layout's size). True when it is the
    /// row that fills the stream's batch: the chunk ends with it, as the row-by-row path
    /// stops after that row.
    #[inline]
    pub(crate) fn push(&mut self, stream: usize, t_us: u64, payload: &[u8]) -> bool {
        let Some(run) = self.streams.get_mut(stream) else {
            return false;
        };
        if !run.wanted {
            return false;
        }
        run.times.push(t_us);
        if run.values {
            run.payloads.extend_from_slice(payload);
        }
        run.room = run.room.saturating_sub(1);
        run.room == 0
    }

    /// Adds a record of `stream` whose payload starts at byte `start` of the block that
    /// [`Gathered::flush_at`] is then given: its payload is not copied.
    #[inline]
    pub(crate) fn push_at(&mut self, stream: usize, t_us: u64, start: u32) {
        let Some(run) = self.streams.get_mut(stream) else {
            return;
        };
        if !run.wanted {
            return;
        }
        run.times.push(t_us);
        if run.values {
            run.starts.push(start);
        }
    }

    /// Writes every gathered record to `row`, stream by stream, as runs, and empties the
    /// chunk (also when writing fails).
    pub(crate) fn flush(&mut self, decoder: &RowDecoder, row: &mut RowWriter<'_>) -> Result<()> {
        self.flush_from(decoder, None, row)
    }

    /// [`Gathered::flush`] for records added with [`Gathered::push_at`], whose payloads lie
    /// in `block`.
    pub(crate) fn flush_at(
        &mut self,
        decoder: &RowDecoder,
        block: &[u8],
        row: &mut RowWriter<'_>,
    ) -> Result<()> {
        self.flush_from(decoder, Some(block), row)
    }

    fn flush_from(
        &mut self,
        decoder: &RowDecoder,
        block: Option<&[u8]>,
        row: &mut RowWriter<'_>,
    ) -> Result<()> {
        let mut result = Ok(());
        for (stream, run) in self.streams.iter_mut().enumerate() {
            if !run.times.is_empty() && result.is_ok() {
                let payloads = match block {
                    Some(bytes) => Payloads::At {
                        bytes,
                        starts: &run.starts,
                    },
                    None => Payloads::Packed(&run.payloads),
                };
                let records = Run {
                    times: &run.times,
                    payloads,
                };
                result = decoder.write_all(stream, records, row);
            }
            run.times.clear();
            run.payloads.clear();
            run.starts.clear();
        }
        result
    }
}
