//! `info`, the capabilities of formats, and the state at a time: what a recording holds, as
//! reports that print as text or serialize as JSON.

use std::path::Path;

use recfmt_core::{BatchSet, RecordingReader, Registry, ResultExt, Shape};
use recfmt_export::StreamBatchReader;
use serde::Serialize;

use crate::{IntegrityReport, OpenOptions, Outcome, Result};

/// Per-stream figures of one pass over a recording.
#[derive(Debug, Clone, Default)]
pub struct StreamStats {
    /// Rows read.
    pub rows: u64,
    /// Earliest time, in seconds.
    pub start: Option<f64>,
    /// Latest time, in seconds.
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
    /// One entry per stream, in schema order.
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
pub fn scan(reader: &mut dyn RecordingReader) -> recfmt_core::Result<ScanStats> {
    let schema = reader.schema().clone();
    let mut stats = ScanStats {
        streams: vec![StreamStats::default(); schema.streams.len()],
    };
    let batches = BatchSet::with_columns(
        &schema,
        SCAN_BATCH_ROWS,
        |_| true,
        |stream, signal| schema.streams[stream].time == signal,
    );
    for batch in StreamBatchReader::new(reader, batches) {
        let batch = batch?;
        let (Some(s), Some(desc)) = (
            stats.streams.get_mut(batch.stream()),
            schema.streams.get(batch.stream()),
        ) else {
            continue;
        };
        s.rows += batch.rows() as u64;
        let mut times = recfmt_core::TimeSummary {
            first: None,
            last: s.last,
            min: s.start,
            max: s.end,
            backwards: s.backwards,
        };
        times.merge(&batch.time_summary(desc));
        (s.start, s.end, s.last, s.backwards) = (times.min, times.max, times.last, times.backwards);
    }
    Ok(stats)
}

/// One signal in [`InfoReport`].
#[derive(Debug, Clone, Serialize)]
pub struct SignalInfo {
    /// Name.
    pub name: String,
    /// Type name (`f32`, `u64`, `str`, …).
    pub dtype: &'static str,
    /// `2x3` for fixed shapes, `variable`, or none for scalars.
    pub shape: Option<String>,
    /// Unit.
    pub unit: Option<String>,
}

/// One stream in [`InfoReport`].
#[derive(Debug, Clone, Serialize)]
pub struct StreamInfo {
    /// Name.
    pub name: String,
    /// Rows.
    pub rows: u64,
    /// Earliest time, seconds.
    pub start: Option<f64>,
    /// Latest time, seconds.
    pub end: Option<f64>,
    /// Mean rate.
    pub rate_hz: Option<f64>,
    /// The time column's name.
    pub time_column: Option<String>,
    /// The time column's unit as `numer/denom` seconds.
    pub time_base: String,
    /// Signals, time column first.
    pub signals: Vec<SignalInfo>,
    /// The stream's metadata.
    pub metadata: recfmt_core::Metadata,
}

/// The time span in [`InfoReport`].
#[derive(Debug, Clone, Serialize)]
pub struct TimeInfo {
    /// Earliest time, seconds.
    pub start: Option<f64>,
    /// Latest time, seconds.
    pub end: Option<f64>,
    /// `end - start`.
    pub duration: Option<f64>,
    /// The time system (`utc`, `tai`, `gps`), when the recording has a time reference.
    pub system: Option<&'static str>,
    /// Second 0 as RFC 3339, when the recording has an epoch.
    pub epoch: Option<String>,
}

/// What `info` reports: format, version, time span, streams, rates, signals, integrity.
#[derive(Debug, Clone, Serialize)]
pub struct InfoReport {
    /// The path as given.
    pub path: String,
    /// Format id.
    pub format: String,
    /// Format name.
    pub format_name: &'static str,
    /// Format version.
    pub version: String,
    /// Time span.
    pub time: TimeInfo,
    /// Total rows.
    pub rows: u64,
    /// Streams in schema order.
    pub streams: Vec<StreamInfo>,
    /// The recording's metadata.
    pub metadata: recfmt_core::Metadata,
    /// What reading lost.
    pub integrity: IntegrityReport,
}

impl InfoReport {
    /// Complete, or data lost.
    pub fn outcome(&self) -> Outcome {
        if self.integrity.lost_data {
            Outcome::DataLost
        } else {
            Outcome::Complete
        }
    }

    /// The report as one JSON object (keys sorted, pretty).
    pub fn to_json(&self) -> String {
        crate::report::to_json(self)
    }
}

/// `2x3`, `variable`, or `None` for a scalar.
pub fn shape_text(shape: &Shape) -> Option<String> {
    match shape {
        Shape::Scalar => None,
        Shape::Fixed(dims) => Some(
            dims.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join("x"),
        ),
        Shape::Variable => Some("variable".into()),
    }
}

fn seconds(t: Option<f64>) -> String {
    t.map_or_else(|| "-".into(), |t| format!("{t:.6} s"))
}

impl std::fmt::Display for InfoReport {
    /// The text `recfmt info` prints.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "file:      {}", self.path)?;
        writeln!(
            f,
            "format:    {} ({}), version {}",
            self.format, self.format_name, self.version
        )?;
        writeln!(
            f,
            "time:      {} .. {} (duration {})",
            seconds(self.time.start),
            seconds(self.time.end),
            seconds(self.time.duration)
        )?;
        writeln!(f, "rows:      {}", self.rows)?;
        write!(f, "{}", self.integrity)?;
        writeln!(f, "streams:")?;
        for s in &self.streams {
            let rate = s
                .rate_hz
                .map_or_else(String::new, |r| format!(", {r:.3} Hz"));
            writeln!(
                f,
                "  {}: {} rows{rate}, {} .. {}",
                s.name,
                s.rows,
                seconds(s.start),
                seconds(s.end)
            )?;
            for sig in &s.signals {
                let shape = sig
                    .shape
                    .as_deref()
                    .map_or_else(String::new, |s| format!("[{s}]"));
                let unit = sig
                    .unit
                    .as_deref()
                    .map_or_else(String::new, |u| format!(" ({u})"));
                writeln!(f, "    {}: {}{shape}{unit}", sig.name, sig.dtype)?;
            }
        }
        Ok(())
    }
}

/// Reads the recording at `path` once and summarises it.
pub fn info(registry: &Registry, path: &Path, options: &OpenOptions) -> Result<InfoReport> {
    let mut reader = crate::open_with(registry, path, options)?.into_reader();
    let stats = scan(reader.as_mut()).in_file(path)?;
    Ok(info_report(path, reader.as_ref(), &stats))
}

fn info_report(path: &Path, reader: &dyn RecordingReader, stats: &ScanStats) -> InfoReport {
    let header = reader.header();
    let streams = reader
        .schema()
        .streams
        .iter()
        .zip(&stats.streams)
        .map(|(desc, s)| StreamInfo {
            name: desc.name.clone(),
            rows: s.rows,
            start: s.start,
            end: s.end,
            rate_hz: s.rate_hz(),
            time_column: desc.signals.get(desc.time).map(|t| t.name.clone()),
            time_base: format!("{}/{}", desc.time_base.numer, desc.time_base.denom),
            signals: desc
                .signals
                .iter()
                .map(|sig| SignalInfo {
                    name: sig.name.clone(),
                    dtype: sig.dtype.name(),
                    shape: shape_text(&sig.shape),
                    unit: sig.unit.clone(),
                })
                .collect(),
            metadata: desc.metadata.clone(),
        })
        .collect();
    let (start, end) = (stats.start(), stats.end());
    InfoReport {
        path: path.display().to_string(),
        format: header.format.to_string(),
        format_name: reader.format().name,
        version: header.version.clone(),
        time: TimeInfo {
            start,
            end,
            duration: start.zip(end).map(|(a, b)| b - a),
            system: header.time.map(|t| t.system.name()),
            epoch: header.time.and_then(|t| t.to_rfc3339(0.0)),
        },
        rows: stats.rows(),
        streams,
        metadata: header.metadata.clone(),
        integrity: reader.integrity().into(),
    }
}

/// One option or query parameter in [`FormatSummary`].
#[derive(Debug, Clone, Serialize)]
pub struct OptionSummary {
    /// Key.
    pub key: &'static str,
    /// Default value.
    pub default: Option<&'static str>,
    /// What it does.
    pub help: &'static str,
}

/// One query in [`FormatSummary`].
#[derive(Debug, Clone, Serialize)]
pub struct QuerySummary {
    /// Name.
    pub name: &'static str,
    /// What it answers.
    pub help: &'static str,
    /// Parameters.
    pub params: Vec<OptionSummary>,
}

/// What one registered format can do, as `recfmt formats` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct FormatSummary {
    /// Id.
    pub id: &'static str,
    /// Name.
    pub name: &'static str,
    /// File extensions.
    pub extensions: &'static [&'static str],
    /// `write`, `copy`, `validate`, `recover`, `state-at`, `options`, `outputs`, `queries`.
    pub capabilities: Vec<&'static str>,
    /// Its options.
    pub options: Vec<OptionSummary>,
    /// Ids of the `convert` targets it writes in its own way.
    pub outputs: Vec<&'static str>,
    /// Its named queries.
    pub queries: Vec<QuerySummary>,
}

fn option_summaries(options: &[recfmt_core::FormatOption]) -> Vec<OptionSummary> {
    options
        .iter()
        .map(|o| OptionSummary {
            key: o.key,
            default: o.default,
            help: o.help,
        })
        .collect()
}

/// Every registered format and what it can do, in registration order.
pub fn formats(registry: &Registry) -> Vec<FormatSummary> {
    registry
        .formats()
        .iter()
        .map(|f| FormatSummary {
            id: f.info.id,
            name: f.info.name,
            extensions: f.info.extensions,
            capabilities: crate::front_end::capabilities(f),
            options: option_summaries(f.options),
            outputs: f.outputs.iter().map(|o| o.id).collect(),
            queries: f
                .queries
                .iter()
                .map(|q| QuerySummary {
                    name: q.name,
                    help: q.help,
                    params: option_summaries(q.params),
                })
                .collect(),
        })
        .collect()
}

/// [`state_at`] at a time written as `convert --start` takes it: seconds on the recording's
/// axis (`60s`), seconds after its first row (`+12.5s`, which reads that row), or an RFC 3339
/// instant when the recording has an epoch.
pub fn state_at_time(
    registry: &Registry,
    path: &Path,
    at: &recfmt_export::TimeBound,
    options: &OpenOptions,
) -> Result<StateReport> {
    let t = match at {
        recfmt_export::TimeBound::Absolute(t) => *t,
        _ => {
            let mut reader = crate::open_with(registry, path, options)?.into_reader();
            let first = match at {
                recfmt_export::TimeBound::Relative(_) => first_time(reader.as_mut())?
                    .ok_or_else(|| {
                        crate::Error::Invalid(format!(
                            "{} has no row with a time, so a time relative to the first row means nothing",
                            path.display()
                        ))
                    })?,
                _ => 0.0,
            };
            at.resolve(first, reader.header())?
        }
    };
    state_at(registry, path, t, options)
}

/// The time of the first row that has one.
fn first_time(reader: &mut dyn RecordingReader) -> Result<Option<f64>> {
    let mut frame = recfmt_core::FrameBuf::default();
    while reader.read_frame(&mut frame)? {
        let desc = &reader.schema().streams[frame.stream];
        if let Some(t) = frame.time_seconds(desc).filter(|t| t.is_finite()) {
            return Ok(Some(t));
        }
    }
    Ok(None)
}

/// What [`state_at`] found.
#[derive(Debug, Clone)]
pub struct StateReport {
    /// The time of the frame found, in seconds.
    pub t: f64,
    /// Its frame number.
    pub frame: u64,
    /// Signal names and their values, in schema order (the front end renders them).
    pub values: Vec<(String, recfmt_core::Value)>,
    /// What opening the recording found.
    pub integrity: IntegrityReport,
}

/// Every signal's value at the last frame at or before `t`, for formats with random access
/// to frames (ICAREC).
pub fn state_at(
    registry: &Registry,
    path: &Path,
    t: f64,
    options: &OpenOptions,
) -> Result<StateReport> {
    let format = crate::format_of(registry, path, options)?;
    let Some(find) = crate::front_end::hooks(format.info.id).and_then(|h| h.state_at) else {
        let able = crate::front_end::formats_with(registry, |h| h.state_at.is_some());
        return Err(crate::Error::Invalid(format!(
            "--at needs a format with random access to frames ({}); this is {}",
            able.join(", "),
            format.info.id
        )));
    };
    let read = options.read_options_for(registry, format)?;
    let (state, integrity) = find(path, t, &read)?;
    let state = state.ok_or_else(|| {
        crate::Error::Invalid(format!(
            "no frame at or before t = {t} s in {}",
            path.display()
        ))
    })?;
    Ok(StateReport {
        t: state.t,
        frame: state.frame,
        values: state.values,
        integrity: (&integrity).into(),
    })
}
