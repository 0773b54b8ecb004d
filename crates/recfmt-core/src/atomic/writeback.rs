//! Early write-back of an output while it is written.
//!
//! Every output is synced before it is moved into place, so that a crash never leaves a
//! complete name over incomplete contents. Left alone, the kernel holds a fresh output's pages
//! until that sync, which then waits for all of them at the very end of a conversion (about
//! 60 ms for the 170 MB of a 400 MB USVLOG session's Parquet, 70 ms for the 177 MB HDF5 of a
//! white-noise session, with both cores idle). Asking for the write-back as the file grows lets
//! the disk work beside the encoders.

use std::fs::File;
use std::path::Path;

/// Bytes written to an output between two requests to start its write-back.
const EVERY: u64 = 8 << 20;

/// Bytes written since the last request to start the write-back.
#[derive(Debug, Default)]
pub(super) struct Unsubmitted(pub(super) u64);

impl Unsubmitted {
    /// Counts `bytes` more; true (and the count starts again) once they reach [`EVERY`].
    pub(super) fn due(&mut self, bytes: u64) -> bool {
        self.0 += bytes;
        if self.0 < EVERY {
            return false;
        }
        self.0 = 0;
        true
    }
}

/// The early write-back of a file that another writer fills by path (an HDF5 library
/// writing a [`TempPath`](super::TempPath)), through a read-only handle of its own: that
/// writer reports what it wrote with [`Writeback::wrote`].
#[derive(Debug)]
pub struct Writeback {
    file: File,
    unsubmitted: Unsubmitted,
}

impl Writeback {
    /// For the file at `path`; `None` when it cannot be opened (the write-back is advisory:
    /// the sync before the move does it all then).
    pub fn open(path: &Path) -> Option<Writeback> {
        let file = File::open(path).ok()?;
        Some(Writeback {
            file,
            unsubmitted: Unsubmitted::default(),
        })
    }

    /// Counts `bytes` more written to the file; every 8 MiB starts their write-back.
    pub fn wrote(&mut self, bytes: u64) {
        if self.unsubmitted.due(bytes) {
            start(&self.file);
        }
    }

    /// Bytes reported since the last request: what the sync at close still has to write.
    pub fn unsubmitted(&self) -> u64 {
        self.unsubmitted.0
    }
}

/// Starts writing back the file's dirty pages without waiting for them (Linux
/// `sync_file_range(SYNC_FILE_RANGE_WRITE)`); advisory, so a failure is ignored: the sync
/// before the move still writes and checks everything.
#[cfg(target_os = "linux")]
pub(super) fn start(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: the call takes an open descriptor (borrowed from `file` for its duration) and
    // integers; it reads and writes no memory of this process.
    #[allow(unsafe_code)]
    let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

/// Elsewhere the sync before the move does all of it.
#[cfg(not(target_os = "linux"))]
pub(super) fn start(_file: &File) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_due_every_8_mib() {
        let mut unsubmitted = Unsubmitted::default();
        let due: Vec<bool> = (0..40).map(|_| unsubmitted.due(1 << 20)).collect();
        let at: Vec<usize> = (0..due.len()).filter(|&i| due[i]).collect();
        assert_eq!(at, [7, 15, 23, 31, 39]);
        // One write larger than the step is one request, and the count starts again.
        assert!(unsubmitted.due(100 << 20));
        assert!(!unsubmitted.due(1));
    }
}
