//! The low-level `timeseries.bin` writer.

use std::io::Write;

use crate::error::{Error, Result};
use crate::header::FileHeader;
use crate::record::Record;

/// Writes a header and records exactly as given.
#[derive(Debug)]
pub struct Writer<W: Write> {
    inner: W,
}

impl<W: Write> Writer<W> {
    /// Wraps a sink. Wrap files in a `BufWriter`.
    pub fn new(inner: W) -> Self {
        Writer { inner }
    }

    /// Writes the 32-byte header.
    pub fn write_header(&mut self, header: &FileHeader) -> Result<()> {
        self.inner.write_all(&header.to_bytes())?;
        Ok(())
    }

    /// Writes one record; fails when the payload exceeds the 65,535 bytes a `u16` length holds.
    pub fn write_record(&mut self, record: &Record) -> Result<()> {
        if record.payload.len() > usize::from(u16::MAX) {
            return Err(Error::Unwritable {
                what: format!(
                    "a {}-byte payload (type {}): the length field is a u16",
                    record.payload.len(),
                    record.type_id
                ),
            });
        }
        self.inner.write_all(&record.header().to_bytes())?;
        self.inner.write_all(&record.payload)?;
        Ok(())
    }

    /// Writes raw bytes after the last record (a torn tail read back by
    /// [`crate::io::Reader::trailing_bytes`]), so a damaged file can be reproduced exactly.
    pub fn write_trailing(&mut self, bytes: &[u8]) -> Result<()> {
        self.inner.write_all(bytes)?;
        Ok(())
    }

    /// Flushes and returns the sink.
    pub fn into_inner(mut self) -> Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }

    /// The wrapped sink.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }
}
