//! The generic writer trait.

use crate::{FrameBuf, Header, Result, Schema};

/// Writes rows of streams into a recording format.
pub trait RecordingWriter {
    /// Starts the recording. Fails, listing what does not fit, when the format cannot hold
    /// this schema.
    fn write_header(&mut self, header: &Header, schema: &Schema) -> Result<()>;
    /// Appends one row.
    fn write_frame(&mut self, frame: &FrameBuf) -> Result<()>;
    /// Completes the recording (flushes, writes indexes). Must be called; calling it twice is
    /// harmless.
    fn finish(&mut self) -> Result<()>;
}
