//! Output files written under a temporary name and renamed into place when complete.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A file that only appears under its final name once [`AtomicFile::commit`] succeeds.
///
/// Until then it lives beside the target as `.<name>.partial`; if the writer fails or is
/// dropped, the partial file is removed, so a failure never leaves a file that looks whole.
///
/// ```
/// use std::io::Write;
/// let dir = std::env::temp_dir().join(format!("recfmt-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let target = dir.join("out.csv");
/// let mut f = recfmt_core::AtomicFile::create(&target).unwrap();
/// f.write_all(b"a,b\n").unwrap();
/// assert!(!target.exists());
/// f.commit().unwrap();
/// assert!(target.exists());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct AtomicFile {
    writer: Option<BufWriter<File>>,
    temp: PathBuf,
    target: PathBuf,
}

impl AtomicFile {
    /// Creates the temporary file for `target`.
    pub fn create(target: impl AsRef<Path>) -> io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        let name = target.file_name().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
        })?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(".partial");
        let temp = target.with_file_name(temp_name);
        let file = File::create(&temp)?;
        Ok(AtomicFile {
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
            temp,
            target,
        })
    }

    /// The final path.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes, syncs and renames the file to its final name.
    pub fn commit(mut self) -> io::Result<()> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| io::Error::other("atomic file already finished"))?;
        let file = writer.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.temp, &self.target)
    }

    fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        self.writer
            .as_mut()
            .ok_or_else(|| io::Error::other("atomic file already finished"))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer()?.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer()?.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

/// Writers that go back to patch what they wrote (MCAP chunk headers, HDF5 superblocks) seek
/// within the temporary file.
impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.writer()?.seek(pos)
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            // Not committed: the output is incomplete, so it must not stay behind.
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}
