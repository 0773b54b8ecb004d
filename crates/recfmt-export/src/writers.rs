//! Table writers on their own threads: decoding runs on the caller's thread while encoding and
//! compression of each stream's table run on workers, fed through bounded queues so memory
//! stays flat whatever the recording's size.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
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

/// What the workers share: the plans and each stream's open table. A stream's batches all go
/// to one worker while any of them is queued, so a table is written by one thread at a time
/// and in order; between bursts it moves to whichever worker has the least queued, so heavy
/// streams spread over the cores.
struct Shared {
    plans: Vec<TablePlan>,
    tables: Vec<Mutex<Option<Open>>>,
    /// Batches of each stream queued or being written.
    in_flight: Vec<AtomicUsize>,
    /// Batches queued at each worker.
    queued: Vec<AtomicUsize>,
    /// Bytes of memory each stream's Parquet row group in progress holds
    /// ([`ExportOptions::ROW_GROUP_BUDGET`] bounds their sum).
    pending: Vec<AtomicUsize>,
    /// The bound of the Parquet pages all tables hold in memory.
    pages: crate::sink::PageMemory,
    options: ExportOptions,
}

/// The table writers of one export.
pub(crate) struct Writers {
    shared: Arc<Shared>,
    senders: Vec<SyncSender<StreamBatch>>,
    handles: Vec<JoinHandle<Result<(), Error>>>,
    /// The worker each stream's batches last went to.
    owner: Vec<usize>,
}

impl Writers {
    /// Starts the workers for the tables of `plans` (indexed by stream).
    pub(crate) fn start(plans: Vec<TablePlan>, options: &ExportOptions) -> Writers {
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
            in_flight: (0..streams).map(|_| AtomicUsize::new(0)).collect(),
            queued: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
            pending: (0..streams).map(|_| AtomicUsize::new(0)).collect(),
            plans,
            pages: crate::sink::page_memory(options),
            options: options.clone(),
        });
        let mut senders = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        for worker in 0..workers {
            let (tx, rx) = sync_channel::<StreamBatch>(QUEUE_DEPTH);
            let shared = Arc::clone(&shared);
            senders.push(tx);
            handles.push(std::thread::spawn(move || work(worker, &rx, &shared)));
        }
        Writers {
            shared,
            senders,
            handles,
            owner: vec![0; streams],
        }
    }

    /// Queues a batch for a writer; waits while that writer's queue is full.
    pub(crate) fn send(&mut self, batch: StreamBatch) -> Result<(), Error> {
        let stream = batch.stream();
        if stream >= self.owner.len() || self.senders.is_empty() {
            return Err(Error::Invalid(format!(
                "a batch of stream {stream}, but the schema has {} streams",
                self.owner.len()
            )));
        }
        let worker = if self.shared.in_flight[stream].load(Ordering::Acquire) > 0 {
            self.owner[stream]
        } else {
            (0..self.senders.len())
                .min_by_key(|&w| self.shared.queued[w].load(Ordering::Acquire))
                .unwrap_or(0)
        };
        self.owner[stream] = worker;
        self.shared.in_flight[stream].fetch_add(1, Ordering::AcqRel);
        self.shared.queued[worker].fetch_add(1, Ordering::AcqRel);
        if self.senders[worker].send(batch).is_err() {
            // The worker stopped on an error: report it.
            return Err(self.stop_with_error());
        }
        Ok(())
    }

    /// Stops every worker and returns the first error one reported.
    fn stop_with_error(&mut self) -> Error {
        self.join()
            .err()
            .unwrap_or_else(|| Error::Invalid("a table writer stopped early".into()))
    }

    /// Closes the queues and waits for the workers; the first error any reported.
    fn join(&mut self) -> Result<(), Error> {
        self.senders.clear();
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

    /// Completes every table (last row groups, footers) and returns them, in stream order,
    /// still under their temporary names.
    pub(crate) fn finish(mut self) -> Result<Vec<Finished>, Error> {
        self.join()?;
        let mut finished = Vec::new();
        for (stream, slot) in self.shared.tables.iter().enumerate() {
            let table = slot.lock().ok().and_then(|mut t| t.take());
            if let Some(table) = table {
                let plan = &self.shared.plans[stream];
                finished.push(Finished {
                    file: table.sink.finish()?,
                    output: StreamOutput {
                        stream: plan.desc.name.clone(),
                        path: plan.path.clone(),
                        rows: table.rows,
                    },
                });
            }
        }
        Ok(finished)
    }
}

impl Drop for Writers {
    fn drop(&mut self) {
        // On an error elsewhere the workers complete what they hold; the unrenamed temporary
        // files are removed when the tables are dropped.
        let _ = self.join();
    }
}

/// One worker: writes every batch it receives into its stream's table (opened on the first
/// batch). On an error it stops: the decoding thread finds its queue closed and collects the
/// error.
fn work(worker: usize, queue: &Receiver<StreamBatch>, shared: &Shared) -> Result<(), Error> {
    let mut outcome = Ok(());
    for batch in queue {
        let stream = batch.stream();
        if outcome.is_ok() {
            outcome = write_batch(shared, batch);
        }
        shared.in_flight[stream].fetch_sub(1, Ordering::AcqRel);
        shared.queued[worker].fetch_sub(1, Ordering::AcqRel);
        if outcome.is_err() {
            // Stop taking batches: the sender sees the closed queue and asks for the error.
            break;
        }
    }
    outcome
}

/// Writes one batch into its stream's table, opening the table on its first batch.
fn write_batch(shared: &Shared, batch: StreamBatch) -> Result<(), Error> {
    let index = batch.stream();
    let (Some(plan), Some(slot)) = (shared.plans.get(index), shared.tables.get(index)) else {
        return Err(Error::Invalid(format!(
            "a batch of stream {index}, but the schema has {} streams",
            shared.plans.len()
        )));
    };
    let options = &shared.options;
    let mut guard = slot
        .lock()
        .map_err(|_| Error::Invalid("a table writer thread panicked".into()))?;
    let batch_rows = batch.rows();
    let schema = match guard.as_ref() {
        Some(table) => table.schema.clone(),
        // Parquet takes the pending metadata when it writes its footer: no wait here.
        None if options.format == TableFormat::Parquet => plan.schema.clone(),
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
