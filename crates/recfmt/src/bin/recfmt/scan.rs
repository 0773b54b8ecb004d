//! One streaming pass over a recording, collecting what `info` and `validate` report.

use recfmt_core::{BatchSet, RecordingReader, Result};

/// Per-stream figures.
#[derive(Debug, Clone, Default)]
pub struct StreamStats {
    pub rows: u64,
    pub start: Option<f64>,
    pub end: Option<f64>,
    /// Rows whose time is earlier than the row before in the same stream.
    pub backwards: u64,
    last: Option<f64>,
}

impl StreamStats {
    /// Mean rate in rows per second over the stream's own time span, rounded to 1e-9 Hz so
    /// that 199 rows over 1.99 s read as 100 Hz, not 99.99999999999999.
    pub fn rate_hz(&self) -> Option<f64> {
        let (start, end) = (self.start?, self.end?);
        (self.rows > 1 && end > start)
            .then(|| ((self.rows - 1) as f64 / (end - start) * 1e9).round() / 1e9)
    }
}

/// Figures for the whole recording.
#[derive(Debug, Clone, Default)]
pub struct ScanStats {
    pub streams: Vec<StreamStats>,
}

impl ScanStats {
    /// Earliest time of any stream, in seconds.
    pub fn start(&self) -> Option<f64> {
        self.streams.iter().filter_map(|s| s.start).reduce(f64::min)
    }

    /// Latest time of any stream, in seconds.
    pub fn end(&self) -> Option<f64> {
        self.streams.iter().filter_map(|s| s.end).reduce(f64::max)
    }

    /// Total rows.
    pub fn rows(&self) -> u64 {
        self.streams.iter().map(|s| s.rows).sum()
    }
}

/// Rows per stream and batch in the scan.
const SCAN_BATCH_ROWS: usize = 65_536;

/// Reads every row once, in batches of time columns (formats with fixed layouts decode nothing
/// else).
pub fn scan(reader: &mut dyn RecordingReader) -> Result<ScanStats> {
    let schema = reader.schema().clone();
    let mut stats = ScanStats {
        streams: vec![StreamStats::default(); schema.streams.len()],
    };
    // Only the time columns are read: rows and times are all a scan needs.
    let mut batches = BatchSet::with_columns(
        &schema,
        SCAN_BATCH_ROWS,
        |_| true,
        |stream, signal| schema.streams[stream].time == signal,
    );
    loop {
        let more = reader.read_batches(&mut batches)?;
        for batch in batches.take_ready(more) {
            let (Some(s), Some(desc)) = (
                stats.streams.get_mut(batch.stream()),
                schema.streams.get(batch.stream()),
            ) else {
                continue;
            };
            s.rows += batch.rows() as u64;
            for t in batch.times(desc).into_iter().flatten() {
                s.start = Some(s.start.map_or(t, |v| v.min(t)));
                s.end = Some(s.end.map_or(t, |v| v.max(t)));
                if s.last.is_some_and(|last| t < last) {
                    s.backwards += 1;
                }
                s.last = Some(t);
            }
        }
        if !more {
            return Ok(stats);
        }
    }
}
