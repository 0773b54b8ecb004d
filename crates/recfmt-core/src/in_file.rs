//! A reader opened from a path whose errors name that path.

use std::path::PathBuf;

use crate::{
    BatchSet, FormatInfo, FrameBuf, Header, Integrity, ProgressUnit, RecordingReader, Result,
    RowWriter, Schema,
};

/// Wraps the reader [`crate::Registry::open_path`] opened, so an error of `read_frame`,
/// `read_row`, `read_batches` or `seek_time` names the file (once: an error that names a file already,
/// such as one about a file inside a recording directory, is left as it is).
pub(crate) struct InFile {
    path: PathBuf,
    inner: Box<dyn RecordingReader>,
}

impl InFile {
    pub(crate) fn new(path: impl Into<PathBuf>, inner: Box<dyn RecordingReader>) -> Self {
        InFile {
            path: path.into(),
            inner,
        }
    }
}

impl RecordingReader for InFile {
    fn format(&self) -> &'static FormatInfo {
        self.inner.format()
    }
    fn header(&self) -> &Header {
        self.inner.header()
    }
    fn schema(&self) -> &Schema {
        self.inner.schema()
    }
    fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        self.inner
            .read_frame(dst)
            .map_err(|e| e.in_file(&self.path))
    }
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        self.inner.read_row(row).map_err(|e| e.in_file(&self.path))
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
    fn seek_time(&mut self, seconds: f64) -> Result<bool> {
        self.inner
            .seek_time(seconds)
            .map_err(|e| e.in_file(&self.path))
    }
    fn stop_time(&mut self, seconds: f64) -> bool {
        self.inner.stop_time(seconds)
    }
    fn read_batches(&mut self, dst: &mut BatchSet) -> Result<bool> {
        self.inner
            .read_batches(dst)
            .map_err(|e| e.in_file(&self.path))
    }
}
