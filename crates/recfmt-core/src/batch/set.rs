//! One batch per stream of a schema ([`BatchSet`]) and the default batch read path.

use super::StreamBatch;
use crate::{Error, FrameBuf, Result, Schema};

/// One [`StreamBatch`] per stream of a schema, filled in file order by
/// [`crate::RecordingReader::read_batches`] until one stream's batch is full (see
/// [`BatchSet::is_full`]).
///
/// Streams the caller does not want are never filled, and readers that decode natively skip
/// their records without decoding them.
#[derive(Debug, Clone)]
pub struct BatchSet {
    batches: Vec<StreamBatch>,
    wanted: Vec<bool>,
    capacity: usize,
    /// The row the default (row by row) read path reuses.
    pub(crate) scratch: FrameBuf,
}

impl BatchSet {
    /// Batches for every stream of `schema`, each full at `capacity` rows (at least 1).
    pub fn new(schema: &Schema, capacity: usize) -> Self {
        Self::with_streams(schema, capacity, |_| true)
    }

    /// Batches for the streams for which `wanted(index)` is true; rows of other streams are
    /// skipped by the reader.
    pub fn with_streams(schema: &Schema, capacity: usize, wanted: impl Fn(usize) -> bool) -> Self {
        Self::with_columns(schema, capacity, wanted, |_, _| true)
    }

    /// Batches for the streams for which `wanted(stream)` is true, holding only the columns
    /// for which `column(stream, signal)` is true: the others are skipped (they hold no
    /// values, and readers of fixed layouts do not decode them). For scans that need a few
    /// columns, such as the time column.
    pub fn with_columns(
        schema: &Schema,
        capacity: usize,
        wanted: impl Fn(usize) -> bool,
        column: impl Fn(usize, usize) -> bool,
    ) -> Self {
        let capacity = capacity.max(1);
        BatchSet {
            batches: schema
                .streams
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let mut batch = StreamBatch::new(i, &s.signals, capacity);
                    for (signal, c) in batch.columns.iter_mut().enumerate() {
                        c.skipped = !column(i, signal);
                    }
                    batch
                })
                .collect(),
            wanted: (0..schema.streams.len()).map(wanted).collect(),
            capacity,
            scratch: FrameBuf::default(),
        }
    }

    /// Rows per stream at which a batch is full.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of streams (wanted or not).
    pub fn len(&self) -> usize {
        self.batches.len()
    }

    /// True when the schema has no stream.
    pub fn is_empty(&self) -> bool {
        self.batches.is_empty()
    }

    /// True when rows of stream `stream` are to be read.
    pub fn wants(&self, stream: usize) -> bool {
        self.wanted.get(stream).copied().unwrap_or(false)
    }

    /// The column of signal `signal` of stream `stream`, if there is one (the row writer's
    /// fast path).
    #[inline(always)]
    pub(crate) fn column_mut(
        &mut self,
        stream: usize,
        signal: usize,
    ) -> Option<&mut super::ColumnBuf> {
        self.batches.get_mut(stream)?.columns.get_mut(signal)
    }

    /// The batch of stream `stream`.
    ///
    /// # Panics
    /// When `stream` is not a stream of the schema the set was made for.
    pub fn stream(&self, stream: usize) -> &StreamBatch {
        &self.batches[stream]
    }

    /// The batch of stream `stream`, for a reader to fill.
    ///
    /// # Panics
    /// When `stream` is not a stream of the schema the set was made for.
    pub fn stream_mut(&mut self, stream: usize) -> &mut StreamBatch {
        &mut self.batches[stream]
    }

    /// Values one stream's batch may hold before it is handed on, whatever its row count:
    /// rows of large arrays (a NanoVer frame of 10,000 particles is 240 KB) would otherwise
    /// fill a batch of [`BatchSet::capacity`] rows with gigabytes.
    pub const MAX_BATCH_BYTES: usize = 8 << 20;

    /// True when some stream's batch is full ([`StreamBatch::is_full`]: it holds
    /// [`BatchSet::capacity`] rows or [`BatchSet::MAX_BATCH_BYTES`] of values): the reader
    /// stops and the caller takes the full batches.
    pub fn is_full(&self) -> bool {
        self.batches.iter().any(|b| b.is_full(self.capacity))
    }

    /// The rule of [`StreamBatch::is_full`] for a batch of `rows` rows and `bytes` of values,
    /// for readers that count both as they append.
    pub fn full_at(capacity: usize, rows: usize, bytes: usize) -> bool {
        rows >= capacity || (rows > 0 && bytes >= Self::MAX_BATCH_BYTES)
    }

    /// Rows held over all streams.
    pub fn rows(&self) -> usize {
        self.batches.iter().map(|b| b.rows).sum()
    }

    /// Takes the rows of stream `stream`, leaving an empty batch in their place.
    ///
    /// # Panics
    /// When `stream` is not a stream of the schema the set was made for.
    pub fn take(&mut self, stream: usize) -> StreamBatch {
        // Room for as many rows as the taken batch held: a stream that filled one batch will
        // likely fill the next, and reserving up front spares the copies of growing vectors.
        let rows = self.batches[stream].rows.min(self.capacity);
        let fresh = self.batches[stream].empty_like(rows);
        std::mem::replace(&mut self.batches[stream], fresh)
    }

    /// The batches to hand on after a [`crate::RecordingReader::read_batches`] call that
    /// returned `more`: the full ones while rows may follow (so every batch but a stream's last
    /// is whole), every non-empty one once the recording has ended.
    pub fn take_ready(&mut self, more: bool) -> Vec<StreamBatch> {
        if !more {
            return self.take_at_least(1);
        }
        let capacity = self.capacity;
        self.take_where(|b| b.is_full(capacity))
    }

    /// Takes every batch that holds at least `min_rows` rows, in stream order.
    pub fn take_at_least(&mut self, min_rows: usize) -> Vec<StreamBatch> {
        let min_rows = min_rows.max(1);
        self.take_where(|b| b.rows >= min_rows)
    }

    /// Takes every batch `take` picks, in stream order.
    fn take_where(&mut self, take: impl Fn(&StreamBatch) -> bool) -> Vec<StreamBatch> {
        (0..self.batches.len())
            .filter(|&i| take(&self.batches[i]))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|i| self.take(i))
            .collect()
    }

    /// Appends a row read by [`crate::RecordingReader::read_frame`] to its stream's batch.
    pub fn push_frame(&mut self, frame: &FrameBuf, schema: &Schema) -> Result<()> {
        let Some(batch) = self.batches.get_mut(frame.stream) else {
            return Err(Error::invalid(format!(
                "the reader returned a row of stream {}, but the schema has {} streams",
                frame.stream,
                self.batches.len()
            )));
        };
        batch.push_values(&frame.values).map_err(|e| {
            let desc = schema.streams.get(frame.stream);
            let stream = desc.map_or("?", |d| d.name.as_str());
            let signal = desc
                .and_then(|d| d.signals.get(e.signal))
                .map_or("?", |s| s.name.as_str());
            Error::Value {
                stream: stream.to_owned(),
                signal: signal.to_owned(),
                message: e.message,
            }
        })
    }
}

/// The default [`crate::RecordingReader::read_batches`]: rows from `read_frame`, pushed one by
/// one with the row path's checks.
pub fn read_batches_by_rows<R: crate::RecordingReader + ?Sized>(
    reader: &mut R,
    dst: &mut BatchSet,
) -> Result<bool> {
    let mut frame = std::mem::take(&mut dst.scratch);
    let result = (|| {
        if dst.is_full() {
            return Ok(true);
        }
        loop {
            if !reader.read_frame(&mut frame)? {
                return Ok(false);
            }
            let stream = frame.stream;
            // `push_frame` refuses a stream the schema lacks.
            if stream >= dst.len() || dst.wants(stream) {
                dst.push_frame(&frame, reader.schema())?;
                if dst.stream(stream).is_full(dst.capacity) {
                    return Ok(true);
                }
            }
        }
    })();
    dst.scratch = frame;
    result
}
