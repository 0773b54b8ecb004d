//! Every stream's rows over time: one lane per stream showing the row rate, so gaps, rate
//! changes and where a truncated file ends are seen at a glance.

use recfmt_core::{BatchSet, RecordingReader};

use crate::{Reducer, Result, for_each_batch};

/// One stream's lane.
#[derive(Debug, Clone)]
pub struct StreamLane {
    /// Stream name.
    pub name: String,
    /// Rows read (rows without a time included).
    pub rows: u64,
    /// Row times reduced to buckets; a bucket's `count` over its width is the rate.
    pub times: Reducer,
}

impl StreamLane {
    /// Mean rows per second between the first and last row, when there are two or more.
    pub fn mean_rate(&self) -> Option<f64> {
        let ((t0, t1), _) = self.times.bounds()?;
        (self.times.points() > 1 && t1 > t0).then(|| (self.times.points() - 1) as f64 / (t1 - t0))
    }

    /// The longest stretch without rows between the first and last row, in seconds
    /// (resolved to one bucket width).
    pub fn longest_gap(&self) -> Option<(f64, f64)> {
        let mut previous: Option<f64> = None;
        let mut best: Option<(f64, f64)> = None;
        for (_, b) in self.times.buckets() {
            if let Some(p) = previous {
                let gap = b.first.0 - p;
                if best.is_none_or(|(a, z)| gap > z - a) {
                    best = Some((p, b.first.0));
                }
            }
            previous = Some(b.last.0);
        }
        best
    }
}

/// The overview sheet of a recording.
#[derive(Debug, Clone)]
pub struct Overview {
    /// The title.
    pub title: String,
    /// The x axis text.
    pub x_label: String,
    /// One lane per stream, in schema order.
    pub lanes: Vec<StreamLane>,
    /// `complete`, `truncated` or `corrupt`.
    pub integrity: String,
    /// For a truncated file: where it ends (byte offset) and the last row time read.
    pub truncated: Option<(u64, Option<f64>)>,
    /// Bytes lost and corrupt records skipped.
    pub lost: (u64, u64),
}

/// Reads every stream's time column (nothing else is decoded by readers of fixed layouts)
/// and reduces the row times per stream.
pub fn overview(reader: &mut dyn RecordingReader, title: &str) -> Result<crate::Figure> {
    let schema = reader.schema().clone();
    let mut lanes: Vec<StreamLane> = schema
        .streams
        .iter()
        .map(|s| StreamLane {
            name: s.name.clone(),
            rows: 0,
            times: Reducer::default(),
        })
        .collect();
    let batches = BatchSet::with_columns(
        &schema,
        65_536,
        |_| true,
        |s, c| c == schema.streams[s].time,
    );
    for_each_batch(reader, batches, &mut |batch| {
        let lane = &mut lanes[batch.stream()];
        lane.rows += batch.rows() as u64;
        for t in batch
            .times(&schema.streams[batch.stream()])
            .into_iter()
            .flatten()
        {
            lane.times.push(t, 0.0);
        }
        Ok(())
    })?;
    let integrity = reader.integrity();
    let last = lanes
        .iter()
        .filter_map(|l| l.times.bounds().map(|((_, t1), _)| t1))
        .reduce(f64::max);
    let header = reader.header();
    let x_label = match header.time.and_then(|t| t.to_rfc3339(0.0)) {
        Some(epoch) => format!("time [s] since {epoch}"),
        None => "time [s]".to_owned(),
    };
    Ok(crate::Figure::Overview(Overview {
        title: title.to_owned(),
        x_label,
        lanes,
        integrity: integrity.status.name().to_owned(),
        truncated: integrity.truncated_at.map(|at| (at, last)),
        lost: (integrity.bytes_lost, integrity.records_skipped),
    }))
}
