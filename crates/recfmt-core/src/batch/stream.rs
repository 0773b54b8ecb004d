//! Rows of one stream ([`StreamBatch`]) and the summary of their times.

use std::fmt;

use super::{BatchSet, ColumnBuf, ColumnData};
use crate::{SignalDesc, Value};

/// A value that does not fit its column: which signal, and why (the message names the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchValueError {
    /// Index of the signal in the stream.
    pub signal: usize,
    /// What is wrong with the value.
    pub message: String,
}

impl fmt::Display for BatchValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "signal {}: {}", self.signal, self.message)
    }
}

impl std::error::Error for BatchValueError {}

/// Rows of one stream, a [`ColumnBuf`] per signal.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamBatch {
    stream: usize,
    pub(super) rows: usize,
    pub(super) columns: Vec<ColumnBuf>,
}

impl StreamBatch {
    /// An empty batch for stream `stream` with the given signals, with room for about `rows`
    /// rows.
    pub fn new(stream: usize, signals: &[SignalDesc], rows: usize) -> Self {
        StreamBatch {
            stream,
            rows: 0,
            columns: signals.iter().map(|s| ColumnBuf::new(s, rows)).collect(),
        }
    }

    pub(super) fn empty_like(&self, rows: usize) -> Self {
        StreamBatch {
            stream: self.stream,
            rows: 0,
            columns: self.columns.iter().map(|c| c.empty_like(rows)).collect(),
        }
    }

    /// Index of the stream in the schema.
    pub fn stream(&self) -> usize {
        self.stream
    }

    /// Rows held.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Bytes the values held take (list offsets and validity left out).
    pub fn byte_len(&self) -> usize {
        self.columns.iter().map(|c| c.data.byte_len()).sum()
    }

    /// True when this batch is to be handed on: `capacity` rows, or
    /// [`BatchSet::MAX_BATCH_BYTES`] of values, whichever comes first.
    pub fn is_full(&self, capacity: usize) -> bool {
        BatchSet::full_at(capacity, self.rows, self.byte_len())
    }

    /// True when a column other than `column` (the time, say) is kept: a reader asked for
    /// the times alone can frame its records without visiting their fields.
    pub fn keeps_other_than(&self, column: usize) -> bool {
        self.columns
            .iter()
            .enumerate()
            .any(|(i, c)| i != column && !c.skipped)
    }

    /// Rows this batch takes before it is full ([`StreamBatch::is_full`]): for readers that
    /// append runs of rows of fixed width (the byte bound is met by the last of them).
    pub fn room(&self, capacity: usize) -> usize {
        let rows = capacity.saturating_sub(self.rows);
        match self.fixed_row_bytes() {
            0 => rows,
            row => {
                let bytes = BatchSet::MAX_BATCH_BYTES.saturating_sub(self.byte_len());
                rows.min(bytes.div_ceil(row).max(1))
            }
        }
    }

    /// Bytes one row adds to the kept columns of fixed width: exact for a stream of numbers
    /// (a reader that appends rows itself can count bytes without [`StreamBatch::byte_len`]),
    /// a lower bound where text, bytes or variable-length lists add more.
    pub fn fixed_row_bytes(&self) -> usize {
        self.columns
            .iter()
            .filter(|c| !c.skipped)
            .map(|c| c.dtype.size().unwrap_or(0) * c.width().unwrap_or(0))
            .sum()
    }

    /// True when no row is held.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The columns, one per signal.
    pub fn columns(&self) -> &[ColumnBuf] {
        &self.columns
    }

    /// The columns, for readers that append elements directly (then call
    /// [`StreamBatch::commit_rows`]).
    pub fn columns_mut(&mut self) -> &mut [ColumnBuf] {
        &mut self.columns
    }

    /// The columns, taken apart.
    pub fn into_columns(self) -> Vec<ColumnBuf> {
        self.columns
    }

    /// Counts `n` rows whose elements a reader appended to every column itself.
    pub fn commit_rows(&mut self, n: usize) {
        self.rows += n;
        for column in &mut self.columns {
            column.fill_validity(self.rows);
        }
    }

    /// Drops the rows from `rows` on, and any elements appended past them without being
    /// counted: a reader that wrote into a batch and then failed puts it back as it was.
    pub fn truncate_rows(&mut self, rows: usize) {
        self.rows = self.rows.min(rows);
        for column in &mut self.columns {
            column.truncate_rows(self.rows);
        }
    }

    /// Counts the rows whose values a [`crate::RowWriter`] pushed, one run per column.
    pub(crate) fn commit_pushed_rows(&mut self, rows: usize) {
        self.rows += rows;
    }

    /// Takes back the values of a row that was begun but not finished.
    pub(crate) fn drop_unfinished_row(&mut self) {
        self.truncate_rows(self.rows);
    }

    /// Checks that every column holds exactly [`StreamBatch::rows`] rows; a reader that
    /// appends elements directly is held to this before its batch is used.
    pub fn check_consistent(&self) -> std::result::Result<(), BatchValueError> {
        for (signal, column) in self.columns.iter().enumerate().filter(|(_, c)| !c.skipped) {
            let held = column.rows();
            let flags = column.validity.len();
            if held != self.rows || (flags != 0 && flags != self.rows) {
                return Err(BatchValueError {
                    signal,
                    message: format!(
                        "the column holds {held} rows ({flags} validity flags) but the batch has {}",
                        self.rows
                    ),
                });
            }
        }
        Ok(())
    }

    /// Appends one row given as values, one per signal, with the same checks as the row path:
    /// integers must fit the column type, floats stored in integer columns are refused,
    /// arrays must match a fixed shape. On error nothing of the row is kept.
    pub fn push_values(&mut self, values: &[Value]) -> std::result::Result<(), BatchValueError> {
        if values.len() != self.columns.len() {
            return Err(BatchValueError {
                signal: values.len().min(self.columns.len()),
                message: format!(
                    "a row has {} values but the stream has {} signals",
                    values.len(),
                    self.columns.len()
                ),
            });
        }
        let rows = self.rows;
        for (signal, (column, value)) in self.columns.iter_mut().zip(values).enumerate() {
            column
                .put(value, rows, false)
                .map_err(|message| BatchValueError { signal, message })?;
        }
        for (signal, (column, value)) in self.columns.iter_mut().zip(values).enumerate() {
            column
                .put(value, rows, true)
                .map_err(|message| BatchValueError { signal, message })?;
        }
        self.rows += 1;
        Ok(())
    }

    /// A batch of `rows` rows made of whole columns; fails when a column holds another number
    /// of rows.
    pub fn from_columns(
        stream: usize,
        rows: usize,
        columns: Vec<ColumnBuf>,
    ) -> std::result::Result<Self, BatchValueError> {
        let batch = StreamBatch {
            stream,
            rows,
            columns,
        };
        batch.check_consistent()?;
        Ok(batch)
    }

    /// Appends the rows of `other` (a batch of the same signals); moves them when this batch
    /// is empty, so the common case copies nothing.
    pub fn append(&mut self, other: StreamBatch) -> std::result::Result<(), BatchValueError> {
        if other.columns.len() != self.columns.len() {
            return Err(BatchValueError {
                signal: 0,
                message: format!(
                    "a batch of {} columns cannot take one of {}",
                    self.columns.len(),
                    other.columns.len()
                ),
            });
        }
        if self.rows == 0 {
            self.rows = other.rows;
            self.columns = other.columns;
            return Ok(());
        }
        let rows = self.rows;
        for (signal, (column, theirs)) in self.columns.iter_mut().zip(other.columns).enumerate() {
            column
                .append(theirs, rows, other.rows)
                .map_err(|message| BatchValueError { signal, message })?;
        }
        self.rows += other.rows;
        Ok(())
    }

    /// Keeps the rows `r` for which `keep[r]` is true (rows past `keep`'s end are dropped).
    pub fn retain_rows(&mut self, keep: &[bool]) {
        for column in &mut self.columns {
            column.retain_rows(keep);
        }
        self.rows = keep.iter().take(self.rows).filter(|&&k| k).count();
    }

    /// The time of every row in seconds on the recording's axis (`None` where the time is
    /// null), from the time column `desc` names: what [`FrameBuf::time_seconds`](crate::FrameBuf::time_seconds) gives row by
    /// row.
    pub fn times(&self, desc: &crate::StreamDesc) -> Vec<Option<f64>> {
        let mut times = Vec::with_capacity(self.rows);
        self.for_each_time(desc, |t| times.push(t));
        times
    }

    /// Calls `f` with the time of every row in order, as [`StreamBatch::times`] gives them,
    /// without collecting them first: a scan over every row of a recording (`validate`,
    /// `info`) needs only a running minimum, maximum and order check.
    pub fn for_each_time(&self, desc: &crate::StreamDesc, mut f: impl FnMut(Option<f64>)) {
        let Some(column) = self.columns.get(desc.time) else {
            (0..self.rows).for_each(|_| f(None));
            return;
        };
        let base = desc.time_base;
        let valid = column.validity();
        let is_valid = |row: usize| valid.is_none_or(|v| v.get(row).copied().unwrap_or(true));
        macro_rules! scalar {
            ($v:expr) => {
                for (row, &x) in $v.iter().take(self.rows).enumerate() {
                    f(is_valid(row).then(|| base.to_seconds_f64(x as f64)));
                }
            };
        }
        match (&column.data, column.width()) {
            (ColumnData::U64(v), Some(1)) => scalar!(v),
            (ColumnData::I64(v), Some(1)) => scalar!(v),
            (ColumnData::F64(v), Some(1)) => scalar!(v),
            (ColumnData::F32(v), Some(1)) => scalar!(v),
            (ColumnData::U32(v), Some(1)) => scalar!(v),
            (ColumnData::I32(v), Some(1)) => scalar!(v),
            _ => {
                for row in 0..self.rows {
                    let seconds = column.value(row).as_f64().map(|x| base.to_seconds_f64(x));
                    f(seconds.filter(|_| is_valid(row)));
                }
            }
        }
    }

    /// The first, last, smallest and largest time of this batch's rows and how many go back
    /// in time, as a fold of [`StreamBatch::for_each_time`] gives them, in one pass the
    /// compiler vectorises where every row has a time: the per-row closure cost a `validate`
    /// of 1 GB of USVLOG about a fifth of its time.
    pub fn time_summary(&self, desc: &crate::StreamDesc) -> TimeSummary {
        let base = desc.time_base;
        let dense = self
            .columns
            .get(desc.time)
            .filter(|c| c.validity.is_empty());
        macro_rules! dense {
            ($v:expr) => {{
                let mut summary = TimeSummary::default();
                let mut times = [0f64; TimeSummary::BLOCK];
                for block in $v[..self.rows.min($v.len())].chunks(TimeSummary::BLOCK) {
                    let times = &mut times[..block.len()];
                    for (t, &x) in times.iter_mut().zip(block) {
                        *t = base.to_seconds_f64(x as f64);
                    }
                    summary.add_block(times);
                }
                summary
            }};
        }
        match dense.map(|c| (&c.data, c.width())) {
            Some((ColumnData::F64(v), Some(1))) => dense!(v),
            Some((ColumnData::U64(v), Some(1))) => dense!(v),
            Some((ColumnData::I64(v), Some(1))) => dense!(v),
            Some((ColumnData::F32(v), Some(1))) => dense!(v),
            Some((ColumnData::U32(v), Some(1))) => dense!(v),
            Some((ColumnData::I32(v), Some(1))) => dense!(v),
            _ => {
                let mut summary = TimeSummary::default();
                self.for_each_time(desc, |t| {
                    if let Some(t) = t {
                        summary.add_block(&[t]);
                    }
                });
                summary
            }
        }
    }

    /// Row `row` as values, as the row path gives it.
    pub fn row_values(&self, row: usize) -> Vec<Value> {
        self.columns.iter().map(|c| c.value(row)).collect()
    }
}

/// A summary of the times of consecutive rows: see [`StreamBatch::time_summary`]. Rows
/// without a time are left out; NaN times count in no minimum or maximum (unless every time
/// is NaN) and never as going back, as `f64::min` and `<` treat them. Where the smallest or
/// largest time is zero and both `-0.0` and `0.0` occur, either sign may be reported.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TimeSummary {
    /// The time of the first row that has one.
    pub first: Option<f64>,
    /// The time of the last row that has one.
    pub last: Option<f64>,
    /// The smallest time.
    pub min: Option<f64>,
    /// The largest time.
    pub max: Option<f64>,
    /// Rows whose time is earlier than the time of the row with a time before them.
    pub backwards: u64,
}

impl TimeSummary {
    /// Times converted and summarised at a time: small enough for the stack and L1.
    const BLOCK: usize = 512;

    /// Adds the rows summarised by `next`, which come after these rows.
    pub fn merge(&mut self, next: &TimeSummary) {
        let (Some(first), Some(last)) = (next.first, next.last) else {
            return;
        };
        if self.last.is_some_and(|before| first < before) {
            self.backwards += 1;
        }
        self.backwards += next.backwards;
        self.first = self.first.or(Some(first));
        self.last = Some(last);
        self.min = match (self.min, next.min) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max = match (self.max, next.max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Adds consecutive times, with eight independent lanes so that the loop vectorises.
    fn add_block(&mut self, times: &[f64]) {
        let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
            return;
        };
        let mut low = [f64::NAN; 8];
        let mut high = [f64::NAN; 8];
        let lanes = times.chunks_exact(8);
        for &t in lanes.remainder() {
            low[0] = low[0].min(t);
            high[0] = high[0].max(t);
        }
        for lane in lanes {
            for i in 0..8 {
                low[i] = low[i].min(lane[i]);
                high[i] = high[i].max(lane[i]);
            }
        }
        let backwards = times.windows(2).filter(|w| w[1] < w[0]).count() as u64;
        self.merge(&TimeSummary {
            first: Some(first),
            last: Some(last),
            min: Some(low.iter().copied().fold(f64::NAN, f64::min)),
            max: Some(high.iter().copied().fold(f64::NAN, f64::max)),
            backwards,
        });
    }
}
