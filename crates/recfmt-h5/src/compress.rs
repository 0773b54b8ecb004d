//! Worker threads that run a dataset's filter pipeline (shuffle + deflate) over whole chunks
//! while the writing thread goes on filling the next ones.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};

use hdf5_pure::{ChunkEncoder, ChunkScratch};
use recfmt_core::Result;

use crate::error::internal_error;

/// At most this many compression threads, whatever the machine or the options say: more
/// only adds chunk buffers in flight once the writing thread sets the pace.
const MAX_COMPRESSION_THREADS: usize = 16;

/// At most this many by default (one per core): each thread keeps up to two chunks of up to
/// a few MiB in flight with their spare buffers, so memory must not follow a large machine's
/// core count, and a few compressing threads already outpace the one writing the file.
const DEFAULT_MAX_COMPRESSION_THREADS: usize = 4;

/// How many threads compress chunks beside the writing thread, or `None` to compress on it:
/// without compression (`deflate` is `None`) there is nothing to share out, and with one core
/// a worker would only add a copy of every chunk. `requested` 0 means one per core, at most 4;
/// 1 compresses on the writing thread.
///
/// ```
/// assert_eq!(recfmt_h5::compression_threads(None, 8), None);
/// assert_eq!(recfmt_h5::compression_threads(Some(1), 1), None);
/// assert_eq!(recfmt_h5::compression_threads(Some(1), 3), Some(3));
/// ```
pub fn compression_threads(deflate: Option<u8>, requested: usize) -> Option<usize> {
    deflate?;
    let threads = match requested {
        0 => std::thread::available_parallelism()
            .map_or(1, std::num::NonZero::get)
            .min(DEFAULT_MAX_COMPRESSION_THREADS),
        n => n,
    };
    (threads > 1).then_some(threads.min(MAX_COMPRESSION_THREADS))
}

/// A chunk handed to a compression worker.
struct Job {
    dataset: usize,
    encoder: Arc<ChunkEncoder>,
    raw: Vec<u8>,
    /// A buffer for the compressed chunk, reused from an earlier one.
    encoded: Vec<u8>,
    done: mpsc::SyncSender<Done>,
}

/// A chunk back from a worker, with both buffers.
pub(crate) struct Done {
    pub(crate) dataset: usize,
    pub(crate) raw: Vec<u8>,
    pub(crate) encoded: std::result::Result<Vec<u8>, hdf5_pure::Error>,
}

/// Worker threads that run shuffle + deflate over full chunks while the writing thread goes
/// on encoding rows; the writing thread writes the results in the order it handed the chunks
/// over (each job answers on its own channel, kept in a queue), so the file is the one the
/// single-threaded writer makes.
///
/// Memory stays flat: at most `window` chunks are in flight, and a chunk's two buffers go back
/// to a pool when it is written, so after the first few chunks nothing is allocated.
pub(crate) struct Compressor {
    /// `None` once the workers are told to stop.
    jobs: Option<mpsc::SyncSender<Job>>,
    in_flight: VecDeque<mpsc::Receiver<Done>>,
    window: usize,
    spare_raw: Vec<Vec<u8>>,
    spare_encoded: Vec<Vec<u8>>,
    workers: Vec<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("workers", &self.workers.len())
            .field("in_flight", &self.in_flight.len())
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl Compressor {
    /// Starts `threads` workers.
    pub(crate) fn start(threads: usize) -> std::io::Result<Compressor> {
        // Two chunks per worker keep every worker busy while the writer catches up.
        let window = 2 * threads;
        let (jobs, queue) = mpsc::sync_channel::<Job>(window);
        let queue = Arc::new(Mutex::new(queue));
        let mut compressor = Compressor {
            jobs: Some(jobs),
            in_flight: VecDeque::with_capacity(window),
            window,
            spare_raw: Vec::new(),
            spare_encoded: Vec::new(),
            workers: Vec::with_capacity(threads),
        };
        for i in 0..threads {
            let queue = Arc::clone(&queue);
            let worker = std::thread::Builder::new()
                .name(format!("hdf5-deflate-{i}"))
                .spawn(move || compress_chunks(&queue))?;
            // On error, `compressor` is dropped, which stops the workers already started.
            compressor.workers.push(worker);
        }
        Ok(compressor)
    }

    /// Hands `raw` (a whole chunk of `dataset`) to the workers and returns an empty buffer for
    /// the column's next chunk of `chunk_bytes`.
    pub(crate) fn submit(
        &mut self,
        target: &Path,
        dataset: usize,
        encoder: Arc<ChunkEncoder>,
        raw: Vec<u8>,
        chunk_bytes: usize,
    ) -> Result<Vec<u8>> {
        let (done, answer) = mpsc::sync_channel(1);
        let job = Job {
            dataset,
            encoder,
            raw,
            encoded: self.spare_encoded.pop().unwrap_or_default(),
            done,
        };
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok());
        if !sent {
            return Err(worker_stopped(target));
        }
        self.in_flight.push_back(answer);
        // The smallest spare that holds a chunk, and at most twice its size: a column keeps
        // its buffer, so handing a 4 MiB string chunk's (touched) buffer to a 256 KiB column
        // would grow resident memory by the difference for good.
        let fit = self
            .spare_raw
            .iter()
            .enumerate()
            .filter(|(_, b)| (chunk_bytes..=chunk_bytes.saturating_mul(2)).contains(&b.capacity()))
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        let mut next = match fit {
            Some(i) => self.spare_raw.swap_remove(i),
            None => Vec::with_capacity(chunk_bytes),
        };
        next.clear();
        Ok(next)
    }

    /// The oldest chunk in flight once it is compressed: waited for when `wait` is set or the
    /// window is full, else only when already done. `None` when there is nothing to write.
    pub(crate) fn next_done(&mut self, target: &Path, wait: bool) -> Result<Option<Done>> {
        let Some(oldest) = self.in_flight.front() else {
            return Ok(None);
        };
        let done = if wait || self.in_flight.len() >= self.window {
            oldest.recv().map_err(|_| worker_stopped(target))?
        } else {
            match oldest.try_recv() {
                Ok(done) => done,
                Err(mpsc::TryRecvError::Empty) => return Ok(None),
                Err(mpsc::TryRecvError::Disconnected) => return Err(worker_stopped(target)),
            }
        };
        self.in_flight.pop_front();
        Ok(Some(done))
    }

    /// Keeps a written chunk's buffers for the next ones.
    pub(crate) fn recycle(&mut self, raw: Vec<u8>, encoded: Vec<u8>) {
        // Never more spares than chunks that can be in flight; the oldest go first.
        self.spare_raw.push(raw);
        if self.spare_raw.len() > self.window {
            self.spare_raw.remove(0);
        }
        if self.spare_encoded.len() < self.window {
            self.spare_encoded.push(encoded);
        }
    }
}

impl Drop for Compressor {
    /// Stops and joins the workers; the results of chunks still in flight are thrown away (a
    /// writer is dropped before it drained only when its file is being thrown away). Chunks
    /// already queued are still compressed first: at most two per worker.
    fn drop(&mut self) {
        self.jobs = None;
        self.in_flight.clear();
        for worker in self.workers.drain(..) {
            // A worker that panicked has nothing left to clean up; its chunks were reported
            // as lost by `next_done`.
            let _ = worker.join();
        }
    }
}

/// A compression worker: encodes chunks until the queue closes, with one scratch (deflate
/// state and intermediate buffer) for every dataset.
fn compress_chunks(queue: &Mutex<mpsc::Receiver<Job>>) {
    let mut scratch = ChunkScratch::new();
    loop {
        let job = {
            let queue = queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            queue.recv()
        };
        let Ok(job) = job else {
            return;
        };
        let Job {
            dataset,
            encoder,
            raw,
            mut encoded,
            done,
        } = job;
        let encoded = encoder
            .encode(&mut scratch, &raw, &mut encoded)
            .map(|()| encoded);
        // The writer may be gone (dropped after an error); then the chunk is not wanted.
        let _ = done.send(Done {
            dataset,
            raw,
            encoded,
        });
    }
}

fn worker_stopped(target: &Path) -> recfmt_core::Error {
    internal_error(target, "a chunk compression thread stopped unexpectedly")
}
