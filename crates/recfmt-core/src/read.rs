//! The generic reader trait, read options and the integrity report.

use std::path::PathBuf;

use crate::{BatchSet, FormatInfo, FrameBuf, Header, Limits, Result, RowWriter, Schema};

/// Options every reader understands.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Size limits checked before any allocation sized by the file.
    pub limits: Limits,
    /// Reject deviations from the spec that a lenient reader would tolerate.
    pub strict: bool,
    /// After a corrupt length field, scan forward for the next plausible record instead of
    /// stopping (formats without sync markers only).
    pub resync: bool,
    /// User-defined record layout files, for formats whose records users can define.
    pub layouts: Vec<PathBuf>,
    /// Options of the format being opened (`build`, `version`, …), already resolved for it
    /// by the [`Registry`](crate::Registry): keys unqualified, values checked against the
    /// format's [`FormatOption`](crate::FormatOption)s.
    pub format_options: crate::FormatOptions,
    /// Threads a reader may decode on beside the caller's: `None` for its own default (about
    /// one per core), `Some(0)` to read on the caller's thread alone. Rows are the same
    /// whatever the number.
    pub threads: Option<usize>,
}

/// Whether a read lost data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IntegrityStatus {
    /// Every byte was accounted for.
    #[default]
    Complete,
    /// The file ends inside a record; everything before it was kept.
    Truncated,
    /// Corrupt records were skipped (possibly after a resync).
    Corrupt,
}

impl IntegrityStatus {
    /// `complete`, `truncated` or `corrupt`.
    pub fn name(self) -> &'static str {
        match self {
            IntegrityStatus::Complete => "complete",
            IntegrityStatus::Truncated => "truncated",
            IntegrityStatus::Corrupt => "corrupt",
        }
    }
}

/// What a reader found out about the completeness of its input so far.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Integrity {
    /// Overall status.
    pub status: IntegrityStatus,
    /// Byte offset where a truncated file's last complete record ends.
    pub truncated_at: Option<u64>,
    /// Bytes that could not be turned into records.
    pub bytes_lost: u64,
    /// Corrupt records skipped.
    pub records_skipped: u64,
    /// Human-readable notes (unknown record types kept, non-monotonic time, ...).
    pub warnings: Vec<String>,
}

impl Integrity {
    /// Records a torn tail: the file ends at `offset + lost` inside a record starting at `offset`.
    pub fn truncate(&mut self, offset: u64, lost: u64) {
        self.truncated_at = Some(offset);
        self.bytes_lost += lost;
        if self.status == IntegrityStatus::Complete {
            self.status = IntegrityStatus::Truncated;
        }
    }

    /// Records `lost` bytes of corrupt data skipped at `offset`.
    pub fn skip_corrupt(&mut self, offset: u64, lost: u64, why: &str) {
        self.bytes_lost += lost;
        self.records_skipped += 1;
        self.status = IntegrityStatus::Corrupt;
        self.warn(format!(
            "skipped {lost} corrupt bytes at byte {offset}: {why}"
        ));
    }

    /// Adds a warning, keeping at most 100 so a bad file cannot flood memory.
    pub fn warn(&mut self, message: impl Into<String>) {
        const MAX_WARNINGS: usize = 100;
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(message.into());
        } else if self.warnings.len() == MAX_WARNINGS {
            self.warnings.push("further warnings suppressed".into());
        }
    }

    /// True when data was lost.
    pub fn lost_data(&self) -> bool {
        self.status != IntegrityStatus::Complete
    }
}

/// What [`RecordingReader::progress`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProgressUnit {
    /// Bytes of the input, read in file order: a position is a byte offset.
    #[default]
    Bytes,
    /// Rows: for containers read dataset by dataset, not in file order (HDF5).
    Rows,
}

impl ProgressUnit {
    /// `"byte"` or `"row"`, to name a read position in a message ("before byte 1234").
    pub fn name(self) -> &'static str {
        match self {
            ProgressUnit::Bytes => "byte",
            ProgressUnit::Rows => "row",
        }
    }
}

/// Reads a recording as rows of streams.
///
/// The schema is known once the reader is open; rows arrive in file order, interleaved across
/// streams.
///
/// A reader implements [`RecordingReader::read_row`]: it decodes the next record and hands
/// its values to a [`RowWriter`], and gets from that one decode path both the row view
/// ([`RecordingReader::read_frame`], values in a reused [`FrameBuf`]) and the typed column
/// view ([`RecordingReader::read_batches`], no [`crate::Value`] per value). Readers written
/// before `read_row` implement `read_frame` instead; the defaults of the two call each other,
/// so a reader must implement at least one of them (one that implements neither fails with
/// an error, not a loop). Readers of fixed layouts may also override `read_batches` to decode
/// whole runs of records at once.
pub trait RecordingReader: Send {
    /// The format this reader reads.
    fn format(&self) -> &'static FormatInfo;
    /// What the recording says about itself.
    fn header(&self) -> &Header;
    /// Streams and their signals.
    fn schema(&self) -> &Schema;
    /// Fills `dst` with the next row. Returns `Ok(false)` at the end of the recording.
    ///
    /// The default asks [`RecordingReader::read_row`].
    fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        crate::rows::read_frame_by_row_writer(self, dst)
    }
    /// Decodes the next record and writes the row it holds (if any, and if its stream is
    /// wanted: see [`RowWriter::begin`]) to `row`. Returns `Ok(false)` at the end of the
    /// recording; `Ok(true)` whether or not a row was written (a record that holds no row,
    /// or a row of a stream nobody wants).
    ///
    /// The default asks [`RecordingReader::read_frame`] and pushes its values.
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        crate::rows::read_row_by_frames(self, row)
    }
    /// What has been lost so far; final once `read_frame` has returned `Ok(false)`.
    fn integrity(&self) -> &Integrity;
    /// Work done and in all, for progress reporting, in [`RecordingReader::progress_unit`]s
    /// (bytes of the input for most formats).
    fn progress(&self) -> (u64, Option<u64>) {
        (0, None)
    }
    /// What [`RecordingReader::progress`] counts: bytes, unless the reader does not read its
    /// input in file order.
    fn progress_unit(&self) -> ProgressUnit {
        ProgressUnit::Bytes
    }
    /// Positions the reader so that, for every stream, no row earlier than `seconds` is skipped
    /// and few rows before it are read (formats with a frame index seek; the rest return
    /// `Ok(false)` and the caller filters while scanning). Only valid before the first row.
    fn seek_time(&mut self, seconds: f64) -> Result<bool> {
        let _ = seconds;
        Ok(false)
    }
    /// Tells the reader that no row at or after `seconds` is wanted, so a reader of
    /// time-ordered records may end once its records reach that time instead of reading the
    /// rest of the file. Returns true when the reader will end early; the caller filters rows
    /// either way (a reader may still hand out a few rows at or after `seconds`). Only valid
    /// before the first row.
    fn stop_time(&mut self, seconds: f64) -> bool {
        let _ = seconds;
        false
    }
    /// Appends rows, in file order, to the batches of `dst` until a wanted stream's batch is
    /// full ([`BatchSet::capacity`] rows, or about [`BatchSet::MAX_BATCH_BYTES`] of values)
    /// or the recording ends; rows of streams `dst`
    /// does not want are skipped. Returns `Ok(false)` once the recording has ended (rows may
    /// still have been appended by that call), `Ok(true)` when the caller should take the
    /// full batches ([`BatchSet::take_ready`]) and call again: after `Ok(true)`,
    /// [`BatchSet::is_full`] holds.
    ///
    /// The values are exactly those [`RecordingReader::read_frame`] gives, and the two may be
    /// mixed. The default writes the rows of [`RecordingReader::read_row`] straight into the
    /// columns; readers of fixed layouts may decode runs of records at once.
    fn read_batches(&mut self, dst: &mut BatchSet) -> Result<bool> {
        crate::rows::read_batches_by_row_writer(self, dst)
    }
}

impl<R: RecordingReader + ?Sized> RecordingReader for Box<R> {
    fn format(&self) -> &'static FormatInfo {
        (**self).format()
    }
    fn header(&self) -> &Header {
        (**self).header()
    }
    fn schema(&self) -> &Schema {
        (**self).schema()
    }
    fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        (**self).read_frame(dst)
    }
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        (**self).read_row(row)
    }
    fn integrity(&self) -> &Integrity {
        (**self).integrity()
    }
    fn progress(&self) -> (u64, Option<u64>) {
        (**self).progress()
    }
    fn progress_unit(&self) -> ProgressUnit {
        (**self).progress_unit()
    }
    fn seek_time(&mut self, seconds: f64) -> Result<bool> {
        (**self).seek_time(seconds)
    }
    fn stop_time(&mut self, seconds: f64) -> bool {
        (**self).stop_time(seconds)
    }
    fn read_batches(&mut self, dst: &mut BatchSet) -> Result<bool> {
        (**self).read_batches(dst)
    }
}

/// A borrowed reader reads as the reader itself, so an adapter that takes its reader by value
/// (a batch iterator, a selection) can also work on one the caller keeps.
impl<R: RecordingReader + ?Sized> RecordingReader for &mut R {
    fn format(&self) -> &'static FormatInfo {
        (**self).format()
    }
    fn header(&self) -> &Header {
        (**self).header()
    }
    fn schema(&self) -> &Schema {
        (**self).schema()
    }
    fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        (**self).read_frame(dst)
    }
    fn read_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        (**self).read_row(row)
    }
    fn integrity(&self) -> &Integrity {
        (**self).integrity()
    }
    fn progress(&self) -> (u64, Option<u64>) {
        (**self).progress()
    }
    fn progress_unit(&self) -> ProgressUnit {
        (**self).progress_unit()
    }
    fn seek_time(&mut self, seconds: f64) -> Result<bool> {
        (**self).seek_time(seconds)
    }
    fn stop_time(&mut self, seconds: f64) -> bool {
        (**self).stop_time(seconds)
    }
    fn read_batches(&mut self, dst: &mut BatchSet) -> Result<bool> {
        (**self).read_batches(dst)
    }
}
