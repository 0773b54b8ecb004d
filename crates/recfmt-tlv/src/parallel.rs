//! The two-core batch read of USVLOG (issue 11): records are framed on the caller's thread,
//! cut into blocks of whole records, decoded into per-block columns by worker threads, and
//! appended to the caller's [`BatchSet`] in file order.
//!
//! Why this split: framing only reads records from the file straight into a block and walks
//! their length fields (a record the layouts disagree with goes the full path), so it stays
//! cheap on the caller's thread, which is also the one that writes Parquet/CSV/HDF5 between
//! calls; the per-field decoding, which dominated a single-threaded read, moves to the
//! workers. Every check that can add to the integrity report or fail in strict mode (torn
//! tail, payload lengths, unknown types, record counts, backwards time) stays in the framer,
//! in file order, so the report and the errors are those of the single-threaded path; only
//! their timing moves ahead by the blocks in flight. A strict error ends the framed blocks
//! and is raised once the rows before it have been handed out, as the single-threaded path
//! does.
//!
//! Memory stays flat: at most [`BLOCKS_PER_WORKER`] blocks per worker are in flight, each
//! about [`DEFAULT_BLOCK_BYTES`] of records plus their decoded columns.
//!
//! With one decoding thread (two cores), a block is decoded straight into the caller's
//! batches when the worker is free for it, and copied as above when the worker is the
//! slower thread (see `lend`).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use recfmt_core::{BatchSet, ColumnBuf, ColumnData, RowWriter, Schema, StreamBatch};

mod lend;

use crate::decode::{Gathered, RowDecoder};
use crate::error::{Error, Result};
use crate::io::Reader;
use crate::record::{RECORD_HEADER_LEN, RecordHeader, RecordRef};

/// Bytes of records per block by default: large enough that the per-block costs (a channel
/// round trip, fresh column vectors) vanish, small enough that a few blocks in flight keep the
/// memory far under the 200 MB budget.
pub const DEFAULT_BLOCK_BYTES: usize = 1 << 19;
/// Largest block accepted by [`crate::UsvlogRecording::set_block_bytes`]; record starts in a
/// block are `u32` offsets.
pub const MAX_BLOCK_BYTES: usize = 64 << 20;
/// Blocks queued at or decoded by one worker at a time: two, so a worker starts on its next
/// block while the caller copies the previous one.
const BLOCKS_PER_WORKER: usize = 2;

/// The streams and columns a block is decoded for: those a [`BatchSet`] wants and does not
/// skip. Blocks decoded for another selection are decoded again on the caller's thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection {
    wanted: Vec<bool>,
    skipped: Vec<Vec<bool>>,
}

impl Selection {
    /// The selection of `dst`.
    pub(crate) fn of(dst: &BatchSet) -> Self {
        Selection {
            wanted: (0..dst.len()).map(|s| dst.wants(s)).collect(),
            skipped: (0..dst.len())
                .map(|s| {
                    let columns = dst.stream(s).columns();
                    columns.iter().map(ColumnBuf::is_skipped).collect()
                })
                .collect(),
        }
    }

    /// Empty batches of this selection, with room for about `rows` rows per stream.
    fn batch_set(&self, schema: &Schema, rows: usize) -> BatchSet {
        BatchSet::with_columns(
            schema,
            rows,
            |s| self.wanted.get(s).copied().unwrap_or(false),
            |s, c| {
                !self
                    .skipped
                    .get(s)
                    .and_then(|v| v.get(c))
                    .copied()
                    .unwrap_or(false)
            },
        )
    }
}

/// What the workers need to decode: shared, read-only.
#[derive(Debug)]
struct Shared {
    schema: Schema,
    decoder: RowDecoder,
}

/// Where a record starts in a block's bytes, and its stream.
type RecordStart = (u32, u32);

/// Whole records, in file order, as the framer kept them (records that yield no row, such as
/// a short payload skipped as corrupt, are left out), and their decoded columns.
#[derive(Debug)]
pub(crate) struct Block {
    /// The records back to back: a 12-byte header, then the payload.
    raw: Vec<u8>,
    /// Start in `raw` and stream of each record.
    recs: Vec<RecordStart>,
    /// Records of each stream.
    counts: Vec<usize>,
    /// True when the framer failed (strict) right after the last record, which it kept: a
    /// long payload is appended before its strict error, as on the single-threaded path, and
    /// that row must not end the call as "full" in place of the error.
    error_after_last: bool,
    /// The columns, once decoded, and the selection they were decoded for.
    decoded: Option<(Arc<Selection>, BatchSet)>,
    /// Set while `decoded` holds the caller's own batches, lent to a worker: each stream's
    /// rows before the block, to put them back as they were when decoding fails.
    lent_rows: Option<Vec<usize>>,
    /// The records `next..upto` are the ones the next hand-out takes ([`Block::mark_upto`]),
    /// and `upto_counts` their count per stream (empty: every record left).
    upto: usize,
    upto_counts: Vec<usize>,
    /// The rows were decoded straight into the caller's batches: handing them out only
    /// counts them.
    in_dst: bool,
    /// Records handed out.
    next: usize,
    /// Records of each stream handed out: the row of the stream's next record in `decoded`.
    consumed: Vec<usize>,
}

impl Block {
    fn new(streams: usize) -> Self {
        Block {
            raw: Vec::new(),
            recs: Vec::new(),
            counts: vec![0; streams],
            error_after_last: false,
            decoded: None,
            lent_rows: None,
            upto: 0,
            upto_counts: Vec::new(),
            in_dst: false,
            next: 0,
            consumed: vec![0; streams],
        }
    }

    /// Marks the records the next hand-out into `dst` takes: those left, up to the first
    /// that fills a wanted stream's batch (`upto`, and `upto_counts` per stream when it stops
    /// early). Most blocks fit whole: then no row-by-row scan.
    fn mark_upto(&mut self, dst: &BatchSet) {
        let capacity = dst.capacity();
        let streams = self.counts.len().min(dst.len());
        let fits = (0..streams).all(|s| {
            let rest = self.counts[s] - self.consumed[s];
            !dst.wants(s) || rest == 0 || dst.stream(s).rows() + rest < capacity
        });
        self.upto = self.recs.len();
        self.upto_counts.clear();
        if fits {
            return;
        }
        self.upto_counts.resize(self.counts.len(), 0);
        for (i, &(_, stream)) in self.recs.iter().enumerate().skip(self.next) {
            let s = stream as usize;
            let Some(n) = self.upto_counts.get_mut(s) else {
                continue;
            };
            *n += 1;
            if s < streams && dst.wants(s) && dst.stream(s).rows() + *n >= capacity {
                self.upto = i + 1;
                break;
            }
        }
    }

    /// Counts the records [`Block::mark_upto`] marked as handed out.
    fn advance(&mut self) {
        if self.upto_counts.is_empty() {
            self.consumed.clone_from(&self.counts);
        } else {
            for (c, n) in self.consumed.iter_mut().zip(&self.upto_counts) {
                *c += n;
            }
        }
        self.next = self.upto;
    }

    /// Bytes of records held.
    pub(crate) fn bytes(&self) -> usize {
        self.raw.len()
    }

    /// Appends a record of `stream`.
    pub(crate) fn push(&mut self, stream: usize, record: &RecordRef<'_>) {
        let Ok(len) = u16::try_from(record.payload.len()) else {
            // Unreachable: payloads are at most u16::MAX bytes.
            return;
        };
        let header = RecordHeader {
            t_us: record.t_us,
            type_id: record.type_id,
            len,
        };
        Self::note_record(&mut self.recs, &mut self.counts, stream, self.raw.len());
        self.raw.extend_from_slice(&header.to_bytes());
        self.raw.extend_from_slice(record.payload);
    }

    /// Notes a record of `stream` starting at byte `start` of the block.
    fn note_record(recs: &mut Vec<RecordStart>, counts: &mut [usize], stream: usize, start: usize) {
        let (Ok(start), Ok(stream32)) = (u32::try_from(start), u32::try_from(stream)) else {
            // Unreachable: blocks are cut at MAX_BLOCK_BYTES.
            return;
        };
        recs.push((start, stream32));
        if let Some(n) = counts.get_mut(stream) {
            *n += 1;
        }
    }

    /// Appends the records `reader` reads next, straight from its source, while `stream_of`
    /// gives each a stream (`None`: left for the full path) and the block holds less than
    /// `limit` bytes: one copy by the kernel, none per record. The bytes appended; zero when
    /// the next record needs [`Reader::read_record_ref`].
    pub(crate) fn read_records<R: std::io::Read>(
        &mut self,
        reader: &mut Reader<R>,
        limit: usize,
        mut stream_of: impl FnMut(&RecordHeader) -> Option<usize>,
    ) -> Result<usize> {
        let Block {
            raw, recs, counts, ..
        } = self;
        let room = limit.saturating_sub(raw.len());
        reader.read_run_into(raw, room, |header, start| match stream_of(header) {
            Some(stream) => {
                Self::note_record(recs, counts, stream, start);
                true
            }
            None => false,
        })
    }

    /// Marks the last record as the one the framer failed on.
    pub(crate) fn set_error_after_last(&mut self) {
        self.error_after_last = true;
    }

    /// True when no record is left to hand out.
    fn is_done(&self) -> bool {
        self.next >= self.recs.len()
    }

    /// The record starting at `start`.
    fn record_at(&self, start: u32) -> Option<RecordRef<'_>> {
        let start = start as usize;
        let head: &[u8; RECORD_HEADER_LEN] = self
            .raw
            .get(start..start + RECORD_HEADER_LEN)?
            .try_into()
            .ok()?;
        let header = RecordHeader::parse(head);
        let body = start + RECORD_HEADER_LEN;
        let payload = self.raw.get(body..body + usize::from(header.len))?;
        Some(RecordRef {
            t_us: header.t_us,
            type_id: header.type_id,
            payload,
            offset: 0,
        })
    }
}

/// A block's bytes broke an invariant of the framer: an error, never a panic.
fn corrupt_block() -> Error {
    Error::Core(recfmt_core::Error::invalid(
        "internal error: a USVLOG block holds a record it cannot read".to_owned(),
    ))
}

/// Decodes `block` into columns of `sel`: into `out`, the caller's batches when it lent
/// them, else into batches of the block's own (reusing `spare`, empty batches of the same
/// selection, when they have room for the block). The records of each stream are gathered
/// and written as runs, column by column, through the reader's own decoding; `gathered` is
/// the thread's buffer for that. The batches stay with the block also when decoding fails,
/// so that lent ones go back to the caller.
fn decode(
    shared: &Shared,
    block: &mut Block,
    sel: &Arc<Selection>,
    spare: Option<BatchSet>,
    out: Option<BatchSet>,
    gathered: &mut Gathered,
) -> Result<()> {
    let rows = block.counts.iter().copied().max().unwrap_or(0);
    let (mut set, recs) = match out {
        Some(set) => (set, block.recs.get(block.next..block.upto)),
        None => (
            spare
                .filter(|set| set.capacity() >= rows)
                // A little more than this block's rows, so that the next blocks can use it
                // again.
                .unwrap_or_else(|| sel.batch_set(&shared.schema, rows + rows / 8)),
            Some(&block.recs[..]),
        ),
    };
    let result = match recs {
        Some(recs) => decode_into(shared, block, recs, &mut set, gathered),
        None => Err(corrupt_block()),
    };
    block.decoded = Some((Arc::clone(sel), set));
    result
}

/// The writing half of [`decode`]: the records `recs` of `block` as rows of `set`.
fn decode_into(
    shared: &Shared,
    block: &Block,
    recs: &[RecordStart],
    set: &mut BatchSet,
    gathered: &mut Gathered,
) -> Result<()> {
    let mut row = RowWriter::batches(set);
    if let Some(dst) = row.batch_set() {
        gathered.prepare(dst);
    }
    let unknown = shared.decoder.unknown_stream();
    for &(start, stream) in recs {
        let stream = stream as usize;
        let record = block.record_at(start).ok_or_else(corrupt_block)?;
        if stream == unknown {
            shared.decoder.write_row(stream, &record, &mut row)?;
        } else if record.payload.len() < shared.decoder.payload_size(stream) {
            return Err(corrupt_block());
        } else {
            // Read where it lies in the block, not copied beside the stream's others.
            let payload = start + RECORD_HEADER_LEN as u32;
            gathered.push_at(stream, record.t_us, payload);
        }
    }
    gathered.flush_at(&shared.decoder, &block.raw, &mut row)?;
    Ok(())
}

/// Appends rows `from..from + n` of `src` to `dst` (a batch of the same signals) and commits
/// them: a copy of column slices, for a block whose rows are split between two calls.
fn copy_rows(
    dst: &mut StreamBatch,
    src: &StreamBatch,
    from: usize,
    n: usize,
) -> std::result::Result<(), String> {
    for (d, s) in dst.columns_mut().iter_mut().zip(src.columns()) {
        let width = s.width().unwrap_or(1);
        if let ColumnData::Bytes(b) = s.data() {
            for row in from..from + n {
                if let Some(bytes) = b.get(row) {
                    d.push_bytes(bytes)?;
                }
            }
            continue;
        }
        // A skipped column holds no elements: nothing to copy.
        let range = from * width..(from + n) * width;
        macro_rules! copy {
            ($($v:ident),*) => {
                match (d.data_mut(), s.data()) {
                    $((ColumnData::$v(a), ColumnData::$v(b)) => {
                        if let Some(slice) = b.get(range) {
                            a.extend_from_slice(slice);
                        }
                    })*
                    _ => {}
                }
            };
        }
        copy!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64);
    }
    dst.commit_rows(n);
    Ok(())
}

/// One decoding thread and its queues.
#[derive(Debug)]
struct Worker {
    jobs: Option<SyncSender<Job>>,
    done: Receiver<Decoded>,
    handle: Option<JoinHandle<()>>,
}

/// A block to decode.
struct Job {
    block: Block,
    sel: Arc<Selection>,
    spare: Option<BatchSet>,
    /// The caller's batches, lent to decode the block straight into.
    out: Option<BatchSet>,
}

/// A block back from its worker, and whether decoding it succeeded: the block comes back
/// either way, with any batches lent with it.
type Decoded = (Block, Result<()>);

/// The thread body: decodes blocks until the queue closes or the reader is gone.
fn work(shared: &Shared, jobs: &Receiver<Job>, done: &SyncSender<Decoded>) {
    let mut gathered = Gathered::default();
    while let Ok(mut job) = jobs.recv() {
        let (spare, out) = (job.spare.take(), job.out.take());
        let result = decode(shared, &mut job.block, &job.sel, spare, out, &mut gathered);
        if done.send((job.block, result)).is_err() {
            break;
        }
    }
}

/// How the framed records ended.
#[derive(Debug)]
pub(crate) enum End {
    /// At the end of the records (a torn tail included, when lenient).
    Records,
    /// At an error, raised once the rows before it are handed out.
    Failed(Error),
}

impl Pipeline {
    /// Whether the framed records have ended: `Ok(true)` at their end (kept, so every later
    /// call says so again), the error they failed with (once), `Ok(false)` while they go on.
    pub(crate) fn ended(&mut self) -> Result<bool> {
        match self.end.take() {
            Some(End::Records) => {
                self.end = Some(End::Records);
                Ok(true)
            }
            Some(End::Failed(e)) => Err(e),
            None => Ok(false),
        }
    }
}

/// Blocks in flight and ready, in file order.
#[derive(Debug)]
pub(crate) struct Pipeline {
    shared: Arc<Shared>,
    workers: Vec<Worker>,
    /// Blocks sent to and received from the workers: block `i` goes to worker
    /// `i % workers.len()`, so receiving in turn keeps file order.
    sent: u64,
    received: u64,
    ready: VecDeque<Block>,
    /// Set by the framer when it stopped for good (or at an error).
    pub(crate) end: Option<End>,
    /// Emptied batches of consumed blocks, for the workers to fill again.
    spare: Vec<(Arc<Selection>, BatchSet)>,
    /// Byte and record buffers of consumed blocks, for the framer to fill again: fresh ones
    /// per block cost page faults and regrowth.
    buffers: Vec<(Vec<u8>, Vec<RecordStart>)>,
    /// The selection of the last call, shared by the blocks decoded for it.
    sel: Option<Arc<Selection>>,
    pub(crate) block_bytes: usize,
    /// The rest of a lent block that stopped at a full batch ([`Pipeline::lends`]): it comes
    /// before every block in flight, and goes on in the next call.
    pub(crate) held: VecDeque<Block>,
    /// What the caller's batch set holds while its batches are lent: an empty set, kept for
    /// the next loan.
    placeholder: Option<BatchSet>,
    /// The caller's buffer for decoding a held block straight into its batches.
    gathered: Gathered,
}

impl Pipeline {
    /// Starts `threads` workers (at least one) that decode rows of `schema` with `decoder`;
    /// `None` when a thread cannot be started.
    pub(crate) fn start(
        schema: Schema,
        decoder: RowDecoder,
        threads: usize,
        block_bytes: usize,
    ) -> Option<Self> {
        let shared = Arc::new(Shared { schema, decoder });
        let mut workers = Vec::new();
        for i in 0..threads.max(1) {
            let (jobs_tx, jobs_rx) = sync_channel::<Job>(BLOCKS_PER_WORKER);
            let (done_tx, done_rx) = sync_channel(BLOCKS_PER_WORKER);
            let mine = Arc::clone(&shared);
            let handle = std::thread::Builder::new()
                .name(format!("usvlog-decode-{i}"))
                .spawn(move || work(&mine, &jobs_rx, &done_tx))
                .ok()?;
            workers.push(Worker {
                jobs: Some(jobs_tx),
                done: done_rx,
                handle: Some(handle),
            });
        }
        Some(Pipeline {
            shared,
            workers,
            sent: 0,
            received: 0,
            ready: VecDeque::new(),
            end: None,
            spare: Vec::new(),
            buffers: Vec::new(),
            sel: None,
            block_bytes,
            held: VecDeque::new(),
            placeholder: None,
            gathered: Gathered::default(),
        })
    }

    /// Blocks handed to the workers so far.
    pub(crate) fn blocks_sent(&self) -> u64 {
        self.sent
    }

    /// An empty block for the framer.
    pub(crate) fn new_block(&mut self) -> Block {
        let mut block = Block::new(self.shared.schema.streams.len());
        if let Some((raw, recs)) = self.buffers.pop() {
            (block.raw, block.recs) = (raw, recs);
        } else {
            // Room for a block and the record that ends it.
            block
                .raw
                .reserve(self.block_bytes + RECORD_HEADER_LEN + usize::from(u16::MAX));
        }
        block
    }

    /// The selection of `dst`, shared with the blocks already decoded for an equal one.
    pub(crate) fn selection(&mut self, dst: &BatchSet) -> Arc<Selection> {
        let sel = Selection::of(dst);
        match &self.sel {
            Some(s) if **s == sel => Arc::clone(s),
            _ => {
                let sel = Arc::new(sel);
                self.sel = Some(Arc::clone(&sel));
                sel
            }
        }
    }

    /// True when the framer may cut another block: it has not stopped and the workers have
    /// room.
    pub(crate) fn wants_block(&self) -> bool {
        let in_flight = self.sent - self.received;
        self.end.is_none()
            && self.held.is_empty()
            && in_flight < (self.workers.len() * BLOCKS_PER_WORKER) as u64
    }

    /// True when rows framed ahead are still to be handed out, or the framer has stopped: the
    /// next row comes from here, not from the reader.
    pub(crate) fn holds_rows(&self) -> bool {
        self.sent > self.received
            || self.ready.iter().any(|b| !b.is_done())
            || !self.held.is_empty()
            || self.end.is_some()
    }

    /// Sends `block` to its worker to decode for `sel`.
    pub(crate) fn dispatch(&mut self, block: Block, sel: &Arc<Selection>) -> Result<()> {
        if block.recs.is_empty() {
            return Ok(());
        }
        let spare = self
            .spare
            .iter()
            .position(|(s, _)| Arc::ptr_eq(s, sel) || **s == **sel)
            .map(|i| self.spare.swap_remove(i).1);
        let n = self.workers.len() as u64;
        let worker = &self.workers[(self.sent % n) as usize];
        let job = Job {
            block,
            sel: Arc::clone(sel),
            spare,
            out: None,
        };
        match &worker.jobs {
            Some(jobs) if jobs.send(job).is_ok() => {
                self.sent += 1;
                Ok(())
            }
            _ => Err(worker_gone()),
        }
    }

    /// The front block with records left, receiving the next one from its worker when needed
    /// (and putting batches lent with it back into `dst`); `None` when nothing is in flight.
    /// A held block, the rest of a lent one, comes first: the batch path decodes it before
    /// this (`decode_here`), the row path reads its records here.
    fn front(&mut self, dst: Option<&mut BatchSet>) -> Result<Option<&mut Block>> {
        while self.ready.front().is_some_and(Block::is_done) {
            if let Some(block) = self.ready.pop_front() {
                self.recycle(block);
            }
        }
        if self.ready.is_empty()
            && let Some(block) = self.held.pop_front()
        {
            // A held block is the rest of a lent one: it comes before any in flight.
            self.ready.push_back(block);
        } else if self.ready.is_empty() && self.sent > self.received {
            let n = self.workers.len() as u64;
            let worker = &self.workers[(self.received % n) as usize];
            let (mut block, result) = worker.done.recv().map_err(|_| worker_gone())?;
            // Counted before a decoding error is passed on, so that the next block is taken
            // from the next worker, in file order.
            self.received += 1;
            if let Some(rows) = block.lent_rows.take() {
                let (Some(dst), Some((_, mut set))) = (dst, block.decoded.take()) else {
                    return Err(corrupt_block());
                };
                if result.is_err() {
                    // Back as they were: the rows of a failed block are not handed out.
                    lend::cut_back(&mut set, &rows);
                }
                std::mem::swap(dst, &mut set);
                self.placeholder = Some(set);
                block.in_dst = true;
            }
            result?;
            self.ready.push_back(block);
        }
        Ok(self.ready.front_mut())
    }

    /// Keeps the emptied batches of a consumed block for the next one.
    fn recycle(&mut self, mut block: Block) {
        if self.buffers.len() < self.workers.len() * BLOCKS_PER_WORKER {
            block.raw.clear();
            block.recs.clear();
            self.buffers.push((block.raw, block.recs));
        }
        let Some((sel, mut set)) = block.decoded else {
            return;
        };
        if self.spare.len() >= self.workers.len() * BLOCKS_PER_WORKER {
            return;
        }
        for stream in 0..set.len() {
            if set.stream(stream).rows() > 0 {
                // Leaves an empty batch with room for as many rows.
                drop(set.take(stream));
            }
        }
        self.spare.push((sel, set));
    }

    /// Appends the rows of the next framed block to `dst`, in file order, stopping early when
    /// a wanted stream reaches its capacity: `Some(true)` then, `Some(false)` when the block
    /// was used up, `None` when no block is in flight or ready.
    pub(crate) fn fill_next_block(
        &mut self,
        dst: &mut BatchSet,
        sel: &Arc<Selection>,
    ) -> Result<Option<bool>> {
        let shared = Arc::clone(&self.shared);
        let Some(block) = self.front(Some(dst))? else {
            return Ok(None);
        };
        if block.in_dst {
            block.in_dst = false;
            block.advance();
            let full = any_full(dst, block.counts.len());
            if !block.is_done() {
                // Stopped at a full batch: the rest goes on in the next call, decoded straight
                // into the caller's batches again, before any block framed after it.
                if let Some(rest) = self.ready.pop_front() {
                    self.held.push_front(rest);
                }
            }
            return Ok(Some(full));
        }
        if !block
            .decoded
            .as_ref()
            .is_some_and(|(s, _)| Arc::ptr_eq(s, sel) || **s == **sel)
        {
            // Decoded for another selection (the caller changed its batch set), or not at all
            // (held back, then handed out on the row path): again, here, for this one.
            decode(&shared, block, sel, None, None, &mut Gathered::default())?;
        }
        consume(block, dst).map(Some)
    }

    /// Writes the next framed row to `row` (for [`recfmt_core::RecordingReader::read_frame`]
    /// mixed with batches): false when no framed row is left.
    pub(crate) fn next_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        let shared = Arc::clone(&self.shared);
        let Some(block) = self.front(None)? else {
            return Ok(false);
        };
        let Some(&(start, stream)) = block.recs.get(block.next) else {
            return Ok(false);
        };
        let stream = stream as usize;
        if let Some(c) = block.consumed.get_mut(stream) {
            *c += 1;
        }
        block.next += 1;
        if block.error_after_last && block.is_done() {
            // The row path fails on this record (a long payload, strict) without returning it.
            return Ok(false);
        }
        let record = block.record_at(start).ok_or_else(corrupt_block)?;
        shared.decoder.write_row(stream, &record, row)?;
        Ok(true)
    }
}

/// Hands the rows of `block` left to `dst`, stopping after the first row that fills its
/// stream to the capacity (true), as the single-threaded path stops.
fn consume(block: &mut Block, dst: &mut BatchSet) -> Result<bool> {
    let before = block.consumed.clone();
    block.mark_upto(dst);
    block.advance();
    let Some((_, set)) = block.decoded.as_mut() else {
        return Err(corrupt_block());
    };
    for (s, &from) in before.iter().enumerate().take(dst.len()) {
        let n = block.consumed[s] - from;
        if n == 0 || !dst.wants(s) {
            continue;
        }
        // Copied, never moved in: `dst`'s columns have room for a whole batch (reserved when
        // the caller took the last one), where a moved block-sized column would grow by
        // doubling past the capacity (measured: 21 MB more peak memory converting 10 GB to
        // Parquet).
        copy_rows(dst.stream_mut(s), set.stream(s), from, n)
            .map_err(|e| Error::Core(recfmt_core::Error::invalid(e)))?;
    }
    // The row a strict error follows does not end the call: the error does. A batch of large
    // records is handed on at `BatchSet::MAX_BATCH_BYTES` too, a block (at most
    // `MAX_BLOCK_BYTES` of input) past the bound at most.
    let error_follows = block.is_done() && block.error_after_last;
    Ok(!error_follows && any_full(dst, block.counts.len()))
}

/// True when a wanted stream among the first `streams` of `dst` is full.
fn any_full(dst: &BatchSet, streams: usize) -> bool {
    let capacity = dst.capacity();
    (0..streams.min(dst.len())).any(|s| dst.wants(s) && dst.stream(s).is_full(capacity))
}

/// A worker that stopped (it panicked, or its queue closed): an error, never a hang.
fn worker_gone() -> Error {
    Error::Core(recfmt_core::Error::invalid(
        "a USVLOG decoding thread stopped unexpectedly".to_owned(),
    ))
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        // Closing the job queues ends the workers' loops, and dropping the result queues makes
        // a worker's next hand-over fail, so each stops after at most the block it is on and
        // one queued block, and none waits on a full result queue while it is joined.
        for worker in &mut self.workers {
            drop(worker.jobs.take());
            let (_, closed) = sync_channel(0);
            drop(std::mem::replace(&mut worker.done, closed));
        }
        for worker in &mut self.workers {
            if let Some(handle) = worker.handle.take() {
                let _ = handle.join();
            }
        }
    }
}
