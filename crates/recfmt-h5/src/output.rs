//! An HDF5 output file written under a temporary name and moved into place when complete.

use std::path::{Path, PathBuf};

use hdf5_pure::{FileAccessProperties, FileBuilder, MemoryStrategy, SyncPolicy};
use std::fs::File;

use recfmt_core::{AtomicFile, Replace, Result, TempPath, Writeback};

use crate::error::write_error;
use crate::userblock::copy_behind_block;

/// An HDF5 file being written: created from a skeleton ([`FileBuilder`]: the groups, the
/// attributes and the empty datasets declared up front) under a temporary name beside the
/// target (core's [`TempPath`]: hdf5-pure writes by path, so core's `AtomicFile`, a
/// `Write + Seek`, cannot carry it), then open for in-place edits and appends in bounded
/// memory, synced once when closed. [`H5Output::finish`] closes it and moves it to its
/// name; dropped before that, it is closed and removed, so a failed export never leaves a
/// file that looks whole.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let target = dir.path().join("out.h5");
/// let mut skeleton = hdf5_pure::FileBuilder::new();
/// skeleton.set_attr("recfmt.format", recfmt_h5::text("memory"));
/// let out = recfmt_h5::H5Output::create(&target, recfmt_core::Replace::Never, skeleton)?;
/// assert!(!target.exists());
/// out.finish()?;
/// let file = hdf5_pure::File::open(&target)?;
/// assert_eq!(file.root().attrs()?["recfmt.format"].as_str(), Some("memory"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct H5Output {
    // Field order matters: the open file is dropped (closed) before the temporary file is
    // removed.
    file: hdf5_pure::File,
    temp: TempPath,
    target: PathBuf,
    replace: Replace,
    /// Bytes to put in front of the HDF5 file when it is finished (see [`H5Output::with_user_block`]).
    user_block: Option<Vec<u8>>,
}

impl H5Output {
    /// Writes `skeleton` at a temporary path for `target` and opens it for appending.
    ///
    /// Fails with an invalid-request error for a path without a file name, with an I/O
    /// error naming `target` when it exists and `replace` does not allow replacing it or
    /// when the file cannot be written. Nothing is left behind on error.
    pub fn create(target: &Path, replace: Replace, skeleton: FileBuilder) -> Result<Self> {
        if target.file_name().is_none() {
            return Err(recfmt_core::Error::invalid(format!(
                "HDF5 output path {} has no file name",
                target.display()
            )));
        }
        let temp = TempPath::reserve(target, replace)
            .map_err(|e| recfmt_core::Error::Io(e).in_file(target))?;
        skeleton
            .write(temp.path())
            .map_err(|e| write_error(target, "creating the file", e))?;
        // Bounded-memory in-place appends; fsync only once, at close.
        let access = FileAccessProperties::new()
            .with_memory_strategy(MemoryStrategy::Bounded)
            .with_sync_policy(SyncPolicy::OnClose);
        let file = hdf5_pure::File::open_rw_with_options(temp.path(), access)
            .map_err(|e| write_error(target, "opening the file for appending", e))?;
        Ok(H5Output {
            file,
            temp,
            target: target.to_path_buf(),
            replace,
            user_block: None,
        })
    }

    /// Puts `block` (512, 1024, 2048... bytes) in front of the file when it is finished, as
    /// an HDF5 user block: MATLAB's v7.3 header. hdf5-pure appends in bounded memory only to
    /// a file without one, so the file is written without it and then copied once behind it
    /// (the superblock rebased; see `userblock.rs`), which costs one more write of the file.
    pub fn with_user_block(mut self, block: Vec<u8>) -> Self {
        self.user_block = Some(block);
        self
    }

    /// The open file.
    pub fn file(&self) -> &hdf5_pure::File {
        &self.file
    }

    /// The early write-back of the file being written, for its [`ChunkedWriter`](crate::ChunkedWriter)
    /// ([`ChunkedWriter::for_output`](crate::ChunkedWriter::for_output)); `None` when the file
    /// cannot be opened for it (the sync at close then does it all).
    pub fn writeback(&self) -> Option<Writeback> {
        Writeback::open(self.temp.path())
    }

    /// The final path of the file.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Closes the file and moves it to its final name. On error the temporary file is
    /// removed.
    pub fn finish(self) -> Result<()> {
        let H5Output {
            file,
            mut temp,
            target,
            replace,
            user_block,
        } = self;
        // On error `temp` removes the file, closed (dropped) by then.
        file.close()
            .map_err(|e| write_error(&target, "closing the file", e))?;
        let io = |e: std::io::Error| recfmt_core::Error::Io(e).in_file(&target);
        let Some(block) = user_block else {
            return temp.persist().map_err(io);
        };
        let mut out = AtomicFile::create(&target, replace).map_err(io)?;
        let hdf5 = std::io::BufReader::with_capacity(1 << 20, File::open(temp.path()).map_err(io)?);
        copy_behind_block(&block, hdf5, &mut out).map_err(io)?;
        // `temp` is removed when dropped.
        out.commit().map_err(io)
    }
}
