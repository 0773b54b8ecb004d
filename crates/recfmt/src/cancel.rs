//! Stopping a long read from another thread: a [`Cancel`] travels with the call (in
//! [`crate::OpenOptions::cancel`]), and every recording opened with it stops at its next
//! record or batch once it is cancelled. No global state: two calls running at the same time
//! each have their own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use recfmt_core::{
    BatchSet, FormatInfo, FrameBuf, Header, Integrity, ProgressUnit, RecordingReader, RowWriter,
    Schema,
};

/// A request to stop, shared by whoever may ask (a Ctrl-C handler) and the work that checks
/// it. Clones share the one flag.
///
/// ```
/// let cancel = recfmt::Cancel::new();
/// let options = recfmt::OpenOptions { cancel: Some(cancel.clone()), ..Default::default() };
/// cancel.cancel();
/// let path = "../../tests/fixtures/generated/usvlog/all_types";
/// let err = recfmt::inspect::info(recfmt::default_registry(), path.as_ref(), &options).unwrap_err();
/// assert!(err.to_string().ends_with("cancelled"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A request not yet made.
    pub fn new() -> Self {
        Cancel::default()
    }

    /// Asks every read holding this token (or a clone) to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err` once cancelled: an I/O error of kind `Interrupted`, "cancelled". A call that
    /// fails after its token was cancelled was stopped by it (the caller knows its token).
    pub fn check(&self) -> recfmt_core::Result<()> {
        if self.is_cancelled() {
            Err(cancelled())
        } else {
            Ok(())
        }
    }
}

/// The error of a read stopped by its [`Cancel`]: an I/O error of kind `Interrupted`.
pub(crate) fn cancelled() -> recfmt_core::Error {
    recfmt_core::Error::Io(std::io::Error::new(
        std::io::ErrorKind::Interrupted,
        "cancelled",
    ))
}

/// A reader that stops with [`cancelled`] at its next record or batch once `cancel` is set;
/// otherwise exactly the reader it wraps.
pub(crate) struct CancellableReader {
    pub(crate) inner: Box<dyn RecordingReader>,
    pub(crate) cancel: Cancel,
}

impl RecordingReader for CancellableReader {
    fn format(&self) -> &'static FormatInfo {
        self.inner.format()
    }
    fn header(&self) -> &Header {
        self.inner.header()
    }
    fn schema(&self) -> &Schema {
        self.inner.schema()
    }
    fn read_frame(&mut self, dst: &mut FrameBuf) -> recfmt_core::Result<bool> {
        self.cancel.check()?;
        self.inner.read_frame(dst)
    }
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> recfmt_core::Result<bool> {
        self.cancel.check()?;
        self.inner.read_row(row)
    }
    fn integrity(&self) -> &Integrity {
        self.inner.integrity()
    }
    fn progress(&self) -> (u64, Option<u64>) {
        self.inner.progress()
    }
    fn progress_unit(&self) -> ProgressUnit {
        self.inner.progress_unit()
    }
    fn seek_time(&mut self, seconds: f64) -> recfmt_core::Result<bool> {
        self.cancel.check()?;
        self.inner.seek_time(seconds)
    }
    fn read_batches(&mut self, dst: &mut BatchSet) -> recfmt_core::Result<bool> {
        self.cancel.check()?;
        self.inner.read_batches(dst)
    }
}
