//! Metadata that is still being computed when an export starts.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;

use recfmt_core::Metadata;

use crate::Error;

/// Schema metadata computed on its own thread while the export decodes, such as the SHA-256
/// of the input: the tables wait for it only when they are opened, so hashing the whole input
/// overlaps with reading it instead of coming first.
///
/// ```
/// use recfmt_export::PendingMetadata;
/// let pending = PendingMetadata::spawn(|| {
///     Ok([("source.sha256".to_owned(), "ab12".to_owned())].into_iter().collect())
/// });
/// assert_eq!(pending.wait()?["source.sha256"], "ab12");
/// # Ok::<(), recfmt_export::Error>(())
/// ```
#[derive(Clone)]
pub struct PendingMetadata {
    inner: Arc<Inner>,
}

type Job = JoinHandle<Result<Metadata, String>>;

struct Inner {
    job: Mutex<Option<Job>>,
    done: OnceLock<Result<Metadata, String>>,
}

impl PendingMetadata {
    /// Starts `job` on a thread of its own; its error message fails the export.
    pub fn spawn(job: impl FnOnce() -> Result<Metadata, String> + Send + 'static) -> Self {
        PendingMetadata {
            inner: Arc::new(Inner {
                job: Mutex::new(Some(std::thread::spawn(job))),
                done: OnceLock::new(),
            }),
        }
    }

    /// Waits for the job (once; later calls return the same result).
    pub fn wait(&self) -> Result<&Metadata, Error> {
        let done = self.inner.done.get_or_init(|| {
            let job = self.inner.job.lock().ok().and_then(|mut job| job.take());
            match job {
                Some(handle) => handle
                    .join()
                    .unwrap_or_else(|_| Err("the metadata thread panicked".into())),
                None => Err("the metadata thread was lost".into()),
            }
        });
        done.as_ref().map_err(|e| Error::Invalid(e.clone()))
    }
}

impl fmt::Debug for PendingMetadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingMetadata")
            .field("done", &self.inner.done.get().is_some())
            .finish()
    }
}

impl PartialEq for PendingMetadata {
    /// The same job.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for PendingMetadata {}
