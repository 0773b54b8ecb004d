//! Table writers on their own threads: decoding runs on the caller's thread while encoding and
//! compression of each stream's table run on workers, fed through bounded queues so memory
//! stays flat whatever the recording's size.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use arrow_schema::SchemaRef;
use recfmt_core::{AtomicFile, StreamBatch, StreamDesc};

use crate::sink::Sink;
use crate::{Error, ExportOptions, StreamOutput, TableFormat};

/// Batches queued per worker before the decoding thread waits: enough to smooth out a slow
/// row group, few enough that memory does not grow with the input.
const QUEUE_DEPTH: usize = 2;

/// Most worker threads, whatever the machine: one table is encoded by one thread, and a
/// recording's rows are rarely spread over more heavy streams than this.
const MAX_WORKERS: usize = 4;

/// What a worker needs to open one stream's table.
pub(crate) struct TablePlan {
    pub(crate) desc: StreamDesc,
    pub(crate) schema: SchemaRef,
    pub(crate) path: PathBuf,
}

struct Open {
    /// The plan's schema with the pending metadata merged in.
    schema: SchemaRef,
    sink: Sink,
    rows: u64,
    line: String,
}

/// A finished but not yet renamed table.
pub(crate) struct Finished {
    pub(crate) stream: usize,
    pub(crate) file: AtomicFile,
    pub(crate) output: StreamOutput,
}

/// The table writers of one export: stream `i` is written by worker `i % workers`.
pub(crate) struct Writers {
    senders: Vec<SyncSender<StreamBatch>>,
    handles: Vec<JoinHandle<Result<Vec<Finished>, Error>>>,
}

impl Writers {
    /// Starts the workers for the tables of `plans` (indexed by stream).
    pub(crate) fn start(plans: Vec<TablePlan>, options: &ExportOptions) -> Writers {
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, MAX_WORKERS)
            .min(plans.len().max(1));
        let plans = Arc::new(plans);
        let mut senders = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        for _ in 0..workers {
            let (tx, rx) = sync_channel::<StreamBatch>(QUEUE_DEPTH);
            let plans = Arc::clone(&plans);
            let options = options.clone();
            senders.push(tx);
            handles.push(std::thread::spawn(move || work(&rx, &plans, &options)));
        }
        Writers { senders, handles }
    }

    /// Queues a batch for its stream's writer; waits while that writer's queue is full.
    pub(crate) fn send(&mut self, batch: StreamBatch) -> Result<(), Error> {
        let worker = batch.stream() % self.senders.len().max(1);
        let Some(sender) = self.senders.get(worker) else {
            return Err(Error::Invalid("no table writer is running".into()));
        };
        if sender.send(batch).is_err() {
            // The worker stopped on an error: report it.
            return Err(self.stop_with_error());
        }
        Ok(())
    }

    /// Stops every worker and returns the first error one reported.
    fn stop_with_error(&mut self) -> Error {
        self.senders.clear();
        let mut first = None;
        for handle in self.handles.drain(..) {
            let result = handle
                .join()
                .unwrap_or_else(|_| Err(Error::Invalid("a table writer thread panicked".into())));
            if let Err(e) = result
                && first.is_none()
            {
                first = Some(e);
            }
        }
        first.unwrap_or_else(|| Error::Invalid("a table writer stopped early".into()))
    }

    /// Completes every table (last row groups, footers) and returns them, in stream order,
    /// still under their temporary names.
    pub(crate) fn finish(mut self) -> Result<Vec<Finished>, Error> {
        self.senders.clear();
        let mut finished = Vec::new();
        let mut first_error = None;
        for handle in self.handles.drain(..) {
            match handle
                .join()
                .unwrap_or_else(|_| Err(Error::Invalid("a table writer thread panicked".into())))
            {
                Ok(tables) => finished.extend(tables),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        finished.sort_by_key(|f| f.stream);
        Ok(finished)
    }
}

impl Drop for Writers {
    fn drop(&mut self) {
        // On an error elsewhere the workers complete what they hold; their unrenamed
        // temporary files are removed when the results are dropped.
        self.senders.clear();
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}

/// One worker: opens tables on their first batch, writes every batch it receives, and
/// completes its tables when the queue closes.
fn work(
    queue: &Receiver<StreamBatch>,
    plans: &[TablePlan],
    options: &ExportOptions,
) -> Result<Vec<Finished>, Error> {
    let mut open: BTreeMap<usize, Open> = BTreeMap::new();
    for batch in queue {
        let index = batch.stream();
        let plan = plans.get(index).ok_or_else(|| {
            Error::Invalid(format!(
                "a batch of stream {index}, but the schema has {} streams",
                plans.len()
            ))
        })?;
        let batch_rows = batch.rows();
        let schema = match open.get(&index) {
            Some(table) => table.schema.clone(),
            None => table_schema(plan, options)?,
        };
        let (record, text_rows) = if options.format == TableFormat::Ndjson {
            (None, Some(batch))
        } else {
            (Some(crate::batch::record_batch(&schema, batch)?), None)
        };
        let table = match open.entry(index) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            // Parquet settles its dictionaries on the first batch.
            std::collections::btree_map::Entry::Vacant(e) => e.insert(Open {
                sink: Sink::create(&plan.path, &schema, options, record.as_ref())?,
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
    }
    let mut finished = Vec::with_capacity(open.len());
    for (stream, table) in open {
        let plan = &plans[stream];
        finished.push(Finished {
            stream,
            file: table.sink.finish()?,
            output: StreamOutput {
                stream: plan.desc.name.clone(),
                path: plan.path.clone(),
                rows: table.rows,
            },
        });
    }
    Ok(finished)
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
