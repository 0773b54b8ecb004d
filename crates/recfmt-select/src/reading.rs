//! The one loop that reads a recording batch by batch: `read_batches` into a [`BatchSet`],
//! the ready batches taken ([`BatchSet::take_ready`]) and handed on one at a time. Exports,
//! selections, scans, plots and the facade's Arrow readers all read through it.

use std::collections::VecDeque;
use std::iter::FusedIterator;

use recfmt_core::{BatchSet, RecordingReader, Result, StreamBatch};

/// The batches of a recording, one [`StreamBatch`] at a time, in the order they become ready:
/// every batch but a stream's last holds [`BatchSet::capacity`] rows (or about
/// [`BatchSet::MAX_BATCH_BYTES`] of values); the streams and columns read are those the
/// [`BatchSet`] it was given wants.
///
/// After an error the iterator ends: the reader is not asked again.
///
/// ```
/// use recfmt_core::{
///     BatchSet, DType, MemoryRecording, RecordingReader, Schema, SignalDesc, StreamDesc,
///     TimeBase, Value,
/// };
/// use recfmt_select::StreamBatchReader;
///
/// let stream = |name: &str| StreamDesc::new(name, SignalDesc::scalar("t", DType::U64), TimeBase::MICROSECONDS);
/// let schema = Schema { streams: vec![stream("NAV"), stream("ESC")] };
/// let rows = (0..200u64).map(|t| ((t % 2) as usize, vec![Value::UInt(t)]));
/// let reader = MemoryRecording::new(Default::default(), schema).with_rows(rows);
///
/// // Only the NAV stream, 64 rows at a time; ESC rows are skipped.
/// let batches = BatchSet::with_streams(reader.schema(), 64, |stream| stream == 0);
/// let mut rows = 0;
/// for batch in StreamBatchReader::new(reader, batches) {
///     let batch = batch?;
///     assert!(batch.stream() == 0 && batch.rows() <= 64);
///     rows += batch.rows();
/// }
/// assert_eq!(rows, 100);
/// # Ok::<(), recfmt_core::Error>(())
/// ```
#[derive(Debug)]
pub struct StreamBatchReader<R> {
    reader: R,
    queue: BatchQueue,
}

impl<R: RecordingReader> StreamBatchReader<R> {
    /// Reads `reader` into `batches`, made for its schema with the streams and columns wanted
    /// ([`BatchSet::with_streams`], [`BatchSet::with_columns`]). `reader` may be a borrowed
    /// one (`&mut dyn RecordingReader`) the caller goes on using afterwards.
    pub fn new(reader: R, batches: BatchSet) -> Self {
        StreamBatchReader {
            reader,
            queue: BatchQueue::new(batches),
        }
    }

    /// Reads every stream and column of `reader` in batches of `batch_rows` rows.
    pub fn all(reader: R, batch_rows: usize) -> Self {
        let batches = BatchSet::new(reader.schema(), batch_rows);
        Self::new(reader, batches)
    }

    /// The reader, for its schema, progress and integrity (final once the iterator has ended).
    pub fn reader(&self) -> &R {
        &self.reader
    }

    /// The reader, given back.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

impl<R: RecordingReader> Iterator for StreamBatchReader<R> {
    type Item = Result<StreamBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        self.queue.next(&mut self.reader).transpose()
    }
}

impl<R: RecordingReader> FusedIterator for StreamBatchReader<R> {}

/// The state of [`StreamBatchReader`] without the reader, for a reader that reads through
/// another one it owns ([`crate::SelectedReader`]).
#[derive(Debug)]
pub(crate) struct BatchQueue {
    batches: BatchSet,
    ready: VecDeque<StreamBatch>,
    done: bool,
}

impl BatchQueue {
    pub(crate) fn new(batches: BatchSet) -> Self {
        BatchQueue {
            batches,
            ready: VecDeque::new(),
            done: false,
        }
    }

    /// The next ready batch of `reader`, reading more when none is waiting; `None` once the
    /// recording has ended (or a read failed) and every batch was handed on.
    pub(crate) fn next<R: RecordingReader + ?Sized>(
        &mut self,
        reader: &mut R,
    ) -> Result<Option<StreamBatch>> {
        loop {
            if let Some(batch) = self.ready.pop_front() {
                return Ok(Some(batch));
            }
            if self.done {
                return Ok(None);
            }
            // Ended unless the read succeeds: a failed reader is not called again.
            self.done = true;
            let more = reader.read_batches(&mut self.batches)?;
            self.ready.extend(self.batches.take_ready(more));
            self.done = !more;
        }
    }
}

#[cfg(test)]
mod tests {
    use recfmt_core::{
        DType, FormatInfo, FrameBuf, Header, Integrity, RecordingReader, Result, Schema,
        SignalDesc, StreamDesc, TimeBase, Value,
    };

    use super::*;

    static INFO: FormatInfo = FormatInfo {
        id: "rows",
        name: "Rows in memory",
        extensions: &[],
    };

    /// Rows of two streams, alternating, failing at row `fail_at` when set.
    struct Rows {
        header: Header,
        schema: Schema,
        next: u64,
        rows: u64,
        fail_at: Option<u64>,
        reads: u64,
        integrity: Integrity,
    }

    impl Rows {
        fn new(rows: u64, fail_at: Option<u64>) -> Self {
            let stream = |name: &str| {
                let mut s = StreamDesc::new(
                    name,
                    SignalDesc::scalar("t", DType::U64),
                    TimeBase::MICROSECONDS,
                );
                s.signals.push(SignalDesc::scalar("x", DType::I32));
                s
            };
            Rows {
                header: Header::default(),
                schema: Schema {
                    streams: vec![stream("a"), stream("b")],
                },
                next: 0,
                rows,
                fail_at,
                reads: 0,
                integrity: Integrity::default(),
            }
        }
    }

    impl RecordingReader for Rows {
        fn format(&self) -> &'static FormatInfo {
            &INFO
        }
        fn header(&self) -> &Header {
            &self.header
        }
        fn schema(&self) -> &Schema {
            &self.schema
        }
        fn integrity(&self) -> &Integrity {
            &self.integrity
        }
        fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
            self.reads += 1;
            if self.fail_at == Some(self.next) {
                return Err(recfmt_core::Error::invalid("a bad row"));
            }
            if self.next == self.rows {
                return Ok(false);
            }
            dst.reset((self.next % 2) as usize, 2);
            dst.values[0] = Value::UInt(self.next);
            dst.values[1] = Value::Int(self.next as i64);
            self.next += 1;
            Ok(true)
        }
    }

    #[test]
    fn every_row_comes_once_in_batches_of_at_most_the_capacity() {
        let mut reader = Rows::new(25, None);
        let batches: Vec<StreamBatch> = StreamBatchReader::all(&mut reader, 4)
            .collect::<Result<_>>()
            .unwrap();
        for stream in 0..2 {
            let times: Vec<Value> = batches
                .iter()
                .filter(|b| b.stream() == stream)
                .inspect(|b| assert!(b.rows() <= 4))
                .flat_map(|b| (0..b.rows()).map(|r| b.row_values(r)[0].clone()))
                .collect();
            let expected: Vec<Value> = (0..25u64)
                .filter(|t| (t % 2) as usize == stream)
                .map(Value::UInt)
                .collect();
            assert_eq!(times, expected);
        }
        // The borrowed reader is the caller's again, read to the end.
        assert_eq!(reader.next, 25);
    }

    #[test]
    fn only_the_wanted_streams_are_handed_on() {
        let reader = Rows::new(10, None);
        let set = BatchSet::with_streams(reader.schema(), 3, |s| s == 1);
        let streams: Vec<usize> = StreamBatchReader::new(reader, set)
            .map(|b| b.unwrap().stream())
            .collect();
        assert_eq!(streams, [1, 1]);
    }

    #[test]
    fn an_error_ends_the_batches_without_reading_again() {
        let mut batches = StreamBatchReader::all(Rows::new(100, Some(7)), 4);
        let mut results = Vec::new();
        for result in batches.by_ref() {
            results.push(result.is_ok());
        }
        // Two full batches of stream 0 ... whatever came before, the error is last.
        assert_eq!(results.last(), Some(&false));
        let reads = batches.reader().reads;
        assert!(batches.next().is_none());
        assert_eq!(batches.reader().reads, reads);
    }
}
