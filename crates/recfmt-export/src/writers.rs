//! Table writers on their own threads: decoding runs on the caller's thread while encoding and
//! compression of each stream's table run on workers, fed through one bounded queue so memory
//! stays flat whatever the recording's size.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use arrow_schema::SchemaRef;
use recfmt_core::{AtomicFile, StreamBatch, StreamDesc};

use crate::sink::Sink;
use crate::{Error, ExportOptions, StreamOutput, TableFormat};

/// Batches queued per worker before the decoding thread waits: enough to smooth out a slow
/// row group, few enough that memory does not grow with the input.
const QUEUE_DEPTH: usize = 2;

/// Most worker threads, whatever the machine: one table is encoded by one thread at a time,
/// and a recording's rows are rarely spread over more heavy streams than this.
const MAX_WORKERS: usize = 4;

/// What a worker needs to open one stream's table.
pub(crate) struct TablePlan {
    pub(crate) desc: StreamDesc,
    pub(crate) schema: SchemaRef,
    pub(crate) path: PathBuf,
    /// A constant text column appended to every batch (a partitioned dataset's `source`): the
    /// schema's last field is that column.
    pub(crate) constant: Option<String>,
}

struct Open {
    /// The plan's schema with the pending metadata merged in (Parquet: without it, see
    /// [`ExportOptions::pending_metadata`]).
    schema: SchemaRef,
    sink: Sink,
    rows: u64,
    line: String,
}

/// A finished but not yet renamed table.
pub(crate) struct Finished {
    pub(crate) file: AtomicFile,
    pub(crate) output: StreamOutput,
}

/// The batches waiting for a worker, in the order the decoding thread sent them.
#[derive(Default)]
struct Queue {
    batches: VecDeque<StreamBatch>,
    /// No more batches will come.
    closed: bool,
    /// A worker failed: the others stop and the sender stops sending.
    failed: bool,
    /// Scratch of [`next_batch`]'s scan, one flag per stream, kept to spare an allocation
    /// per batch.
    seen: Vec<bool>,
}

/// What the workers share: the plans, each stream's open table and the queue. Any worker takes
/// the oldest queued batch whose table no other worker is writing (a table's lock is held from
/// taking its batch until the batch is written), so each table gets its batches in order while
/// the streams spread over the workers as they come: three busy streams on two cores keep both
/// busy, instead of one worker holding two streams.
struct Shared {
    plans: Vec<TablePlan>,
    tables: Vec<Mutex<Option<Open>>>,
    queue: Mutex<Queue>,
    /// Signalled when a batch is queued, a table is released or the queue closes.
    ready: Condvar,
    /// Signalled when a batch is taken or a worker fails (the sender waits on it when full).
    room: Condvar,
    capacity: usize,
    /// Bytes of memory each stream's Parquet row group in progress holds
    /// ([`ExportOptions::ROW_GROUP_BUDGET`] bounds their sum).
    pending: Vec<AtomicUsize>,
    /// The bound of the Parquet pages all tables hold in memory.
    pages: crate::sink::PageMemory,
    /// Tables finished by the workers once the queue closed, by stream.
    finished: Mutex<Vec<Option<Result<Finished, Error>>>>,
    /// The next stream whose table a worker finishes.
    next_to_finish: AtomicUsize,
    options: ExportOptions,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        // A worker panicking while holding the lock leaves a queue still usable.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the export failed: the sender and the other workers stop.
    fn fail(&self) {
        self.queue().failed = true;
        self.room.notify_all();
        self.ready.notify_all();
    }

    /// Wakes the workers after a table was released. The queue's lock is taken first: a
    /// worker that found the table busy is then either waiting, and woken, or not yet
    /// scanning, and sees it free (no wakeup lost between its scan and its wait).
    fn table_released(&self) {
        drop(self.queue());
        self.ready.notify_all();
    }
}

/// The table writers of one export.
pub(crate) struct Writers {
    shared: Arc<Shared>,
    handles: Vec<JoinHandle<Result<(), Error>>>,
}

impl Writers {
    /// Starts the workers for the tables of `plans` (indexed by stream).
    pub(crate) fn start(plans: Vec<TablePlan>, options: &ExportOptions) -> Result<Writers, Error> {
        let per_core = || std::thread::available_parallelism().map_or(1, |n| n.get());
        let workers = match options.threads {
            0 => per_core(),
            n => n,
        }
        .clamp(1, MAX_WORKERS)
        .min(plans.len().max(1));
        let streams = plans.len();
        let shared = Arc::new(Shared {
            tables: (0..streams).map(|_| Mutex::new(None)).collect(),
            queue: Mutex::new(Queue::default()),
            ready: Condvar::new(),
            room: Condvar::new(),
            capacity: QUEUE_DEPTH * workers,
            pending: (0..streams).map(|_| AtomicUsize::new(0)).collect(),
            pages: crate::sink::page_memory(options),
            finished: Mutex::new((0..streams).map(|_| None).collect()),
            next_to_finish: AtomicUsize::new(0),
            plans,
            options: options.clone(),
        });
        let mut writers = Writers {
            shared,
            handles: Vec::with_capacity(workers),
        };
        for worker in 0..workers {
            let shared = Arc::clone(&writers.shared);
            // Named, so that a profile tells the writers from the decoding threads.
            let handle = std::thread::Builder::new()
                .name(format!("table-writer-{worker}"))
                .spawn(move || work(&shared))
                .map_err(|e| Error::Invalid(format!("starting a table writer thread: {e}")))?;
            writers.handles.push(handle);
        }
        Ok(writers)
    }

    /// Queues a batch for the writers; waits while the queue is full.
    pub(crate) fn send(&mut self, batch: StreamBatch) -> Result<(), Error> {
        let stream = batch.stream();
        if stream >= self.shared.plans.len() || self.handles.is_empty() {
            return Err(Error::Invalid(format!(
                "a batch of stream {stream}, but the schema has {} streams",
                self.shared.plans.len()
            )));
        }
        let mut queue = self.shared.queue();
        while queue.batches.len() >= self.shared.capacity && !queue.failed {
            queue = self
                .shared
                .room
                .wait(queue)
                .unwrap_or_else(|e| e.into_inner());
        }
        if queue.failed {
            drop(queue);
            return Err(self.stop_with_error());
        }
        queue.batches.push_back(batch);
        drop(queue);
        self.shared.ready.notify_all();
        Ok(())
    }

    /// Stops every worker and returns the first error one reported.
    fn stop_with_error(&mut self) -> Error {
        self.shared.fail();
        self.join()
            .err()
            .unwrap_or_else(|| Error::Invalid("a table writer stopped early".into()))
    }

    /// Closes the queue and waits for the workers (which write what is queued and finish the
    /// tables unless one failed); the first error any reported.
    fn join(&mut self) -> Result<(), Error> {
        self.shared.queue().closed = true;
        self.shared.ready.notify_all();
        let mut first = Ok(());
        for handle in self.handles.drain(..) {
            let result = handle
                .join()
                .unwrap_or_else(|_| Err(Error::Invalid("a table writer thread panicked".into())));
            if first.is_ok() {
                first = result;
            }
        }
        first
    }

    /// Completes every table (last row groups, footers; on the workers, several at once) and
    /// returns them, in stream order, still under their temporary names.
    pub(crate) fn finish(mut self) -> Result<Vec<Finished>, Error> {
        self.join()?;
        let finished = std::mem::take(
            &mut *self
                .shared
                .finished
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        // Each table either finished or failed; the first failure wins, and the finished
        // tables are dropped with their temporary files.
        finished.into_iter().flatten().collect()
    }
}

impl Drop for Writers {
    fn drop(&mut self) {
        // On an error elsewhere the workers stop; the unrenamed temporary files are removed
        // when the tables are dropped.
        self.shared.fail();
        let _ = self.join();
    }
}

/// One worker: writes queued batches into their streams' tables (opened on their first
/// batch), then, once the queue closes, finishes tables no other worker has taken. On an
/// error it marks the export failed and stops.
fn work(shared: &Shared) -> Result<(), Error> {
    let _panic = FailOnPanic(shared);
    while let Some((batch, mut table)) = next_batch(shared) {
        let result = write_batch(shared, batch, &mut table);
        drop(table);
        // Its next batch may be waiting for the table just released.
        shared.table_released();
        if let Err(e) = result {
            shared.fail();
            return Err(e);
        }
    }
    if shared.queue().failed {
        return Ok(());
    }
    loop {
        let stream = shared.next_to_finish.fetch_add(1, Ordering::AcqRel);
        let Some(slot) = shared.tables.get(stream) else {
            return Ok(());
        };
        let open = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(table) = open else {
            continue;
        };
        let plan = &shared.plans[stream];
        let result = table.sink.finish().map(|file| Finished {
            file,
            output: StreamOutput {
                stream: plan.desc.name.clone(),
                path: plan.path.clone(),
                rows: table.rows,
            },
        });
        let failed = result.is_err();
        shared.finished.lock().unwrap_or_else(|e| e.into_inner())[stream] = Some(result);
        if failed {
            shared.fail();
            return Ok(());
        }
    }
}

/// Marks the export failed when a worker panics, so that nobody waits for a batch whose table
/// it held (the sender for room in the queue, the other workers for the table).
struct FailOnPanic<'a>(&'a Shared);

impl Drop for FailOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.fail();
        }
    }
}

/// The oldest queued batch whose table no worker holds, with that table locked; `None` once
/// the queue is closed and empty, or the export failed.
fn next_batch(shared: &Shared) -> Option<(StreamBatch, MutexGuard<'_, Option<Open>>)> {
    use std::sync::TryLockError;
    let mut queue = shared.queue();
    loop {
        if queue.failed {
            return None;
        }
        let mut poisoned = false;
        // Only a stream's oldest queued batch may be taken: a table that was busy when its
        // oldest batch was looked at may be released before a later one is.
        let Queue { batches, seen, .. } = &mut *queue;
        seen.clear();
        seen.resize(shared.tables.len(), false);
        let free = batches.iter().enumerate().find_map(|(i, batch)| {
            let first = seen.get_mut(batch.stream())?;
            if std::mem::replace(first, true) {
                return None;
            }
            match shared.tables.get(batch.stream())?.try_lock() {
                Ok(table) => Some((i, table)),
                Err(TryLockError::WouldBlock) => None,
                Err(TryLockError::Poisoned(_)) => {
                    // A worker panicked writing this table: the export has failed.
                    poisoned = true;
                    None
                }
            }
        });
        if poisoned {
            queue.failed = true;
            drop(queue);
            shared.room.notify_all();
            shared.ready.notify_all();
            return None;
        }
        if let Some((i, table)) = free {
            let batch = queue.batches.remove(i)?;
            drop(queue);
            shared.room.notify_one();
            return Some((batch, table));
        }
        if queue.closed && queue.batches.is_empty() {
            return None;
        }
        queue = shared.ready.wait(queue).unwrap_or_else(|e| e.into_inner());
    }
}

/// Writes one batch into its stream's table, opening the table on its first batch.
/// `guard` is the stream's table, locked by this worker.
fn write_batch(shared: &Shared, batch: StreamBatch, guard: &mut Option<Open>) -> Result<(), Error> {
    let index = batch.stream();
    let Some(plan) = shared.plans.get(index) else {
        return Err(Error::Invalid(format!(
            "a batch of stream {index}, but the schema has {} streams",
            shared.plans.len()
        )));
    };
    let options = &shared.options;
    let batch_rows = batch.rows();
    let schema = match guard.as_ref() {
        Some(table) => table.schema.clone(),
        None if crate::sink::takes_pending_metadata_at_finish(options.format) => {
            plan.schema.clone()
        }
        None => table_schema(plan, options)?,
    };
    let (record, text_rows) = if options.format == TableFormat::Ndjson {
        (None, Some(batch))
    } else {
        let record = match &plan.constant {
            None => crate::batch::record_batch(&schema, batch)?,
            Some(value) => with_constant(&schema, batch, value)?,
        };
        (Some(record), None)
    };
    let table = match guard.as_mut() {
        Some(table) => table,
        // Parquet settles its dictionaries on the first batch.
        None => guard.insert(Open {
            sink: Sink::create(&plan.path, &schema, options, record.as_ref(), &shared.pages)?,
            schema,
            rows: 0,
            line: String::new(),
        }),
    };
    table.rows += batch_rows as u64;
    match (record, text_rows) {
        (Some(record), _) => table.sink.write(&record)?,
        (None, Some(batch)) => {
            for row in 0..batch.rows() {
                let values = batch.row_values(row);
                table
                    .sink
                    .write_values(&plan.desc, &values, &mut table.line)?;
            }
        }
        (None, None) => {}
    }
    shared.pending[index].store(table.sink.pending_bytes(), Ordering::Release);
    keep_row_groups_in_budget(shared, index, &mut table.sink)
}

/// While the row groups in progress of all tables hold more than
/// [`ExportOptions::ROW_GROUP_BUDGET`] beside their pages kept in memory
/// ([`ExportOptions::row_group_memory`]), writes the largest one now. `own` is the table this
/// worker holds (stream `index`); another table is only taken when no worker is writing it, so
/// workers never wait for each other here.
fn keep_row_groups_in_budget(shared: &Shared, index: usize, own: &mut Sink) -> Result<(), Error> {
    let budget = ExportOptions::ROW_GROUP_BUDGET.saturating_add(shared.options.row_group_memory);
    loop {
        let sizes = shared.pending.iter().map(|p| p.load(Ordering::Acquire));
        if sizes.clone().sum::<usize>() <= budget {
            return Ok(());
        }
        let Some((largest, _)) = sizes.enumerate().max_by_key(|&(_, size)| size) else {
            return Ok(());
        };
        if largest == index {
            own.close_row_group()?;
            shared.pending[index].store(own.pending_bytes(), Ordering::Release);
            continue;
        }
        let Ok(mut guard) = shared.tables[largest].try_lock() else {
            // Being written by another worker, which checks the budget when it is done.
            return Ok(());
        };
        let written = match guard.as_mut() {
            Some(other) => {
                other.sink.close_row_group()?;
                other.sink.pending_bytes()
            }
            None => 0,
        };
        shared.pending[largest].store(written, Ordering::Release);
        drop(guard);
        shared.table_released();
    }
}

/// `batch` as a record batch of `schema`, whose last field is a text column holding `value`
/// in every row.
fn with_constant(
    schema: &SchemaRef,
    batch: StreamBatch,
    value: &str,
) -> Result<arrow_array::RecordBatch, Error> {
    let own: Vec<usize> = (0..schema.fields().len().saturating_sub(1)).collect();
    let base = Arc::new(schema.project(&own).map_err(|e| Error::arrow(None, e))?);
    let rows = batch.rows();
    let mut columns = crate::batch::record_batch(&base, batch)?.columns().to_vec();
    columns.push(Arc::new(arrow_array::StringArray::from_iter_values(
        std::iter::repeat_n(value, rows),
    )));
    arrow_array::RecordBatch::try_new(schema.clone(), columns).map_err(|e| Error::arrow(None, e))
}

/// The plan's schema with the pending metadata (waited for here) merged in.
fn table_schema(plan: &TablePlan, options: &ExportOptions) -> Result<SchemaRef, Error> {
    Ok(match &options.pending_metadata {
        None => plan.schema.clone(),
        Some(pending) => {
            let mut metadata = plan.schema.metadata().clone();
            metadata.extend(pending.wait()?.clone());
            Arc::new(plan.schema.as_ref().clone().with_metadata(metadata))
        }
    })
}
