//! The generic writer trait, and the options every write call takes.

use crate::{FormatOptions, FrameBuf, Header, Result, Schema};

/// Whether an output may replace a file that already has its name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Replace {
    /// Refuse: the target must not exist (the default, for the command line without `--force`).
    #[default]
    Never,
    /// Replace an existing regular file; still refuse anything else.
    RegularFile,
}

impl Replace {
    /// [`Replace::RegularFile`] when `force`, else [`Replace::Never`].
    pub fn forced(force: bool) -> Self {
        if force {
            Replace::RegularFile
        } else {
            Replace::Never
        }
    }
}

/// How to write one output: passed with each call that writes (a format's `create`, `copy`,
/// `recover` and own outputs), never set for the whole process, so that two conversions in
/// one process (two Python threads) each get what they asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Whether an existing output may be replaced (the command line's `--force`).
    pub replace: Replace,
    /// Options of the format being written (`build`, `version`, …), resolved for it by
    /// [`Registry::write_options`](crate::Registry::write_options): keys unqualified, values
    /// checked against the format's [`FormatOption`](crate::FormatOption)s.
    pub format_options: FormatOptions,
}

impl WriteOptions {
    /// Options that replace existing outputs when `force`, with no format options.
    pub fn forced(force: bool) -> Self {
        WriteOptions {
            replace: Replace::forced(force),
            ..WriteOptions::default()
        }
    }
}

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
