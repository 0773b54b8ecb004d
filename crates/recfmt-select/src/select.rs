//! Selection and time ranges in front of any writer: which streams and signals, which rows.
//!
//! [`SelectedReader`] wraps a [`RecordingReader`] and is one itself, so every exporter and
//! converter gets selection, time ranges, `--carry-last`, upcasting and an absolute time column
//! without knowing about them.

use std::fmt;

use recfmt_core::{
    BatchSet, ColumnBuf, DType, Error, FormatInfo, FrameBuf, Header, Integrity,
    MAX_ABSOLUTE_SECONDS, RecordingReader, Result, Schema, SignalDesc, StreamBatch, StreamDesc,
    TimeReference, TimeSystem, Value,
};

use crate::reading::BatchQueue;

/// A name pattern: exact, glob (`*`, `?`, `[...]`) or regex (`re:` prefix).
#[derive(Clone)]
pub enum Pattern {
    /// Matches one name exactly.
    Exact(String),
    /// A glob such as `REC_*` or `*.raw_sensor_*`.
    Glob(String, globset::GlobMatcher),
    /// A regular expression, matched against the whole name.
    Regex(regex::Regex),
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string())
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Exact(s) | Pattern::Glob(s, _) => f.write_str(s),
            Pattern::Regex(r) => write!(
                f,
                "re:{}",
                r.as_str().trim_start_matches("^(?:").trim_end_matches(")$")
            ),
        }
    }
}

impl Pattern {
    /// Parses `re:<regex>`, a glob (when the text has `*`, `?` or `[`), or an exact name.
    ///
    /// ```
    /// use recfmt_select::Pattern;
    /// assert!(Pattern::parse("REC_*").unwrap().matches("REC_NAV_SOLUTION"));
    /// assert!(Pattern::parse("re:REC_(NAV|ESC).*").unwrap().matches("REC_ESC_OUTPUT"));
    /// assert!(!Pattern::parse("x").unwrap().matches("xx"));
    /// ```
    pub fn parse(text: &str) -> Result<Self> {
        if let Some(re) = text.strip_prefix("re:") {
            let anchored = format!("^(?:{re})$");
            return regex::Regex::new(&anchored)
                .map(Pattern::Regex)
                .map_err(|e| Error::invalid(format!("bad regex {re:?}: {e}")));
        }
        if text.contains(['*', '?', '[']) {
            return globset::GlobBuilder::new(text)
                .literal_separator(false)
                .build()
                .map(|g| Pattern::Glob(text.to_string(), g.compile_matcher()))
                .map_err(|e| Error::invalid(format!("bad glob {text:?}: {e}")));
        }
        Ok(Pattern::Exact(text.to_string()))
    }

    /// True when `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Pattern::Exact(s) => s == name,
            Pattern::Glob(_, g) => g.is_match(name),
            Pattern::Regex(r) => r.is_match(name),
        }
    }

    /// True when `name` matches, or `name` is a member (`name.x`, `name[0]`) of a composite
    /// signal the pattern names exactly, so a composite is addressable as a whole.
    fn matches_signal(&self, name: &str) -> bool {
        if self.matches(name) {
            return true;
        }
        match self {
            Pattern::Exact(s) => name
                .strip_prefix(s.as_str())
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('[')),
            _ => false,
        }
    }
}

/// Which streams and signals to keep. Empty include lists keep everything; excludes win.
///
/// Signal patterns match the signal name or `stream.signal`. The time column of a kept stream
/// is always kept.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Streams to keep.
    pub streams: Vec<Pattern>,
    /// Streams to drop.
    pub exclude_streams: Vec<Pattern>,
    /// Signals to keep.
    pub signals: Vec<Pattern>,
    /// Signals to drop.
    pub exclude_signals: Vec<Pattern>,
}

impl Selection {
    /// True when nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.streams.is_empty()
            && self.exclude_streams.is_empty()
            && self.signals.is_empty()
            && self.exclude_signals.is_empty()
    }

    /// True when the stream named `name` is kept.
    pub fn keeps_stream(&self, name: &str) -> bool {
        (self.streams.is_empty() || self.streams.iter().any(|p| p.matches(name)))
            && !self.exclude_streams.iter().any(|p| p.matches(name))
    }

    /// True when signal `signal` of stream `stream` is kept (a stream's time column is kept
    /// whatever this says).
    pub fn keeps_signal(&self, stream: &str, signal: &str) -> bool {
        let qualified = format!("{stream}.{signal}");
        let hit = |p: &Pattern| p.matches_signal(signal) || p.matches_signal(&qualified);
        (self.signals.is_empty() || self.signals.iter().any(hit))
            && !self.exclude_signals.iter().any(hit)
    }

    /// A JSON description for provenance metadata.
    pub fn describe(&self) -> String {
        let list = |v: &[Pattern]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
        serde_json::json!({
            "streams": list(&self.streams),
            "exclude_streams": list(&self.exclude_streams),
            "signals": list(&self.signals),
            "exclude_signals": list(&self.exclude_signals),
        })
        .to_string()
    }
}

/// One end of a time range.
#[derive(Debug, Clone, PartialEq)]
pub enum TimeBound {
    /// Seconds on the recording's own time axis.
    Absolute(f64),
    /// Seconds after the recording's first row (`+12.5s`).
    Relative(f64),
    /// An RFC 3339 instant; needs a recording with an epoch.
    Instant(String),
}

impl TimeBound {
    /// Parses `+12.5s` (relative), `60`, `60s`, `1.5ms`, `2min` (absolute), or RFC 3339 text.
    ///
    /// ```
    /// use recfmt_select::TimeBound;
    /// assert_eq!(TimeBound::parse("+12.5s").unwrap(), TimeBound::Relative(12.5));
    /// assert_eq!(TimeBound::parse("60s").unwrap(), TimeBound::Absolute(60.0));
    /// assert_eq!(TimeBound::parse("250ms").unwrap(), TimeBound::Absolute(0.25));
    /// assert!(matches!(TimeBound::parse("2026-01-01T00:00:00Z").unwrap(), TimeBound::Instant(_)));
    /// ```
    pub fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        let bad = || {
            Error::invalid(format!(
                "bad time {text:?} (expected seconds like 60s or +12.5s, or an RFC 3339 instant)"
            ))
        };
        if t.len() >= 10 && t.as_bytes().get(4) == Some(&b'-') && t.contains('T') {
            return Ok(TimeBound::Instant(t.to_string()));
        }
        let (relative, body) = match t.strip_prefix('+') {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        let split = body
            .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
            .unwrap_or(body.len());
        let (number, unit) = body.split_at(split);
        let value: f64 = number.trim().parse().map_err(|_| bad())?;
        let scale = match unit.trim() {
            "" | "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            "min" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        let seconds = value * scale;
        if !seconds.is_finite() {
            return Err(bad());
        }
        Ok(if relative {
            TimeBound::Relative(seconds)
        } else {
            TimeBound::Absolute(seconds)
        })
    }

    /// Seconds on the recording's axis: `first` is the time of its first row (used by
    /// [`TimeBound::Relative`] only), `header` gives the epoch (for [`TimeBound::Instant`]).
    pub fn resolve(&self, first: f64, header: &Header) -> Result<f64> {
        match self {
            TimeBound::Absolute(s) => Ok(*s),
            TimeBound::Relative(s) => Ok(first + s),
            TimeBound::Instant(text) => header
                .time
                .ok_or_else(|| {
                    Error::invalid(
                        "this recording has no time reference, so RFC 3339 times cannot be used",
                    )
                })?
                .seconds_at(text),
        }
    }
}

/// Rows to keep by time: start inclusive, end exclusive.
#[derive(Debug, Clone, Default)]
pub struct TimeRange {
    /// First time kept.
    pub start: Option<TimeBound>,
    /// First time no longer kept.
    pub end: Option<TimeBound>,
    /// Also emit each stream's last row before `start`, so state at the start survives the cut.
    pub carry_last: bool,
}

impl TimeRange {
    /// True when every row is kept.
    pub fn is_empty(&self) -> bool {
        self.start.is_none() && self.end.is_none()
    }

    /// Fails when the bounds alone show the range inverted: both ends of one kind (seconds on
    /// the axis, or seconds after the first row) and the start after the end. Other pairs are
    /// checked once resolved against the recording ([`SelectedReader`] fails then).
    ///
    /// ```
    /// use recfmt_select::{TimeBound, TimeRange};
    /// let range = |s, e| TimeRange { start: Some(TimeBound::parse(s).unwrap()), end: Some(TimeBound::parse(e).unwrap()), carry_last: false };
    /// assert!(range("1s", "5s").check().is_ok());
    /// assert_eq!(
    ///     range("5s", "1s").check().unwrap_err().to_string(),
    ///     "the time range is inverted: it starts at 5 s, after its end at 1 s"
    /// );
    /// assert!(range("+5s", "1s").check().is_ok()); // known once the first row is read
    /// ```
    pub fn check(&self) -> Result<()> {
        let seconds = |b: &TimeBound| match b {
            TimeBound::Absolute(s) => Some((*s, "")),
            TimeBound::Relative(s) => Some((*s, " after the first row")),
            TimeBound::Instant(_) => None,
        };
        if let (Some(start), Some(end)) = (&self.start, &self.end)
            && let (Some((s, kind)), Some((e, end_kind))) = (seconds(start), seconds(end))
            && kind == end_kind
        {
            return inverted(s, e, kind);
        }
        Ok(())
    }
}

/// The error of a range starting at `start` s after its `end` (`kind` says what the seconds
/// count from), else `Ok`.
fn inverted(start: f64, end: f64, kind: &str) -> Result<()> {
    if start > end {
        return Err(Error::invalid(format!(
            "the time range is inverted: it starts at {start} s{kind}, after its end at {end} s{kind}"
        )));
    }
    Ok(())
}

/// Everything a [`SelectedReader`] changes.
#[derive(Debug, Clone, Default)]
pub struct Pipeline {
    /// Streams and signals.
    pub selection: Selection,
    /// Rows by time.
    pub range: TimeRange,
    /// Widen `f32` signals to `f64`.
    pub upcast_f64: bool,
    /// Add an absolute time column (`t_utc`, `t_tai` or `t_gps`: i64 nanoseconds since
    /// 1970-01-01 in that system) to every stream, when the recording has an epoch. A time
    /// outside what it holds (1677-09-21 to 2262-04-11) is an error, never a clamped value.
    pub absolute_time: Option<TimeSystem>,
}

struct StreamMap {
    /// Index in the inner schema of each kept signal (the absolute time column is extra).
    signals: Vec<usize>,
    /// Output stream index.
    out: usize,
}

/// A reader that applies a [`Pipeline`] to another reader.
pub struct SelectedReader<R> {
    inner: R,
    schema: Schema,
    header: Header,
    map: Vec<Option<StreamMap>>,
    range: TimeRange,
    absolute: Option<(TimeSystem, recfmt_core::TimeReference)>,
    bounds: Option<(f64, f64)>,
    scratch: FrameBuf,
    carried: Vec<Option<FrameBuf>>,
    pending: Vec<FrameBuf>,
    emitted_carry: bool,
    /// The inner reader's batches, made on the first `read_batches` call.
    inner_batches: Option<BatchQueue>,
    upcast_f64: bool,
}

impl<R> fmt::Debug for SelectedReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectedReader")
            .field("schema", &self.schema)
            .field("range", &self.range)
            .finish_non_exhaustive()
    }
}

impl<R: RecordingReader> SelectedReader<R> {
    /// Wraps `inner`. Fails when the selection keeps no stream, names an absolute time
    /// column the recording cannot have, or the time range is inverted ([`TimeRange::check`];
    /// reading fails when it turns out inverted once resolved).
    pub fn new(inner: R, pipeline: &Pipeline) -> Result<Self> {
        pipeline.range.check()?;
        let in_schema = inner.schema();
        let mut header = inner.header().clone();
        let absolute = match pipeline.absolute_time {
            None => None,
            Some(system) => match header.time {
                Some(reference) if reference.has_epoch() => Some((system, reference)),
                _ => {
                    return Err(Error::invalid(format!(
                        "an absolute {system} time column needs a recording with an epoch; this {} recording has none",
                        header.format
                    )));
                }
            },
        };
        let mut schema = Schema::default();
        let mut map = Vec::new();
        for stream in &in_schema.streams {
            if !pipeline.selection.keeps_stream(&stream.name) {
                map.push(None);
                continue;
            }
            let mut signals = Vec::new();
            let mut out = StreamDesc {
                signals: Vec::new(),
                ..stream.clone()
            };
            for (i, sig) in stream.signals.iter().enumerate() {
                let keep = i == stream.time
                    || stream.entity == Some(i)
                    || pipeline.selection.keeps_signal(&stream.name, &sig.name);
                if !keep {
                    continue;
                }
                if i == stream.time {
                    out.time = out.signals.len();
                }
                if stream.entity == Some(i) {
                    out.entity = Some(out.signals.len());
                }
                let mut sig = sig.clone();
                if pipeline.upcast_f64 && sig.dtype == DType::F32 {
                    sig.dtype = DType::F64;
                    sig.metadata
                        .insert("recfmt.upcast_from".into(), "f32".into());
                }
                out.signals.push(sig);
                signals.push(i);
            }
            if let Some((system, _)) = absolute {
                let mut sig = SignalDesc::scalar(
                    format!("t_{}", system.name().to_ascii_lowercase()),
                    DType::I64,
                )
                .with_unit(format!("ns since 1970-01-01T00:00:00 {system}"));
                sig.metadata
                    .insert("recfmt.time_system".into(), system.name().into());
                out.signals.push(sig);
            }
            map.push(Some(StreamMap {
                signals,
                out: schema.streams.len(),
            }));
            schema.streams.push(out);
        }
        if schema.streams.is_empty() {
            let names: Vec<_> = in_schema.streams.iter().map(|s| s.name.as_str()).collect();
            return Err(Error::invalid(format!(
                "the selection keeps no stream (streams: {})",
                names.join(", ")
            )));
        }
        if !pipeline.selection.is_empty() {
            header
                .metadata
                .insert("recfmt.selection".into(), pipeline.selection.describe());
        }
        let carried = vec![None; in_schema.streams.len()];
        let mut reader = SelectedReader {
            inner,
            schema,
            header,
            map,
            range: pipeline.range.clone(),
            absolute,
            bounds: None,
            scratch: FrameBuf::default(),
            carried,
            pending: Vec::new(),
            emitted_carry: false,
            inner_batches: None,
            upcast_f64: pipeline.upcast_f64,
        };
        // Bounds known before the first row let the reader skip what lies outside them: a
        // seek to the start (unless the rows before it are carried), an early end.
        let known = |bound: &Option<TimeBound>, header: &Header| match bound {
            Some(b @ (TimeBound::Absolute(_) | TimeBound::Instant(_))) => {
                b.resolve(f64::NAN, header).ok()
            }
            _ => None,
        };
        if let Some(start) = known(&reader.range.start, &reader.header)
            && !reader.range.carry_last
        {
            reader.inner.seek_time(start)?;
        }
        if let Some(end) = known(&reader.range.end, &reader.header) {
            reader.inner.stop_time(end);
        }
        Ok(reader)
    }

    /// The wrapped reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// The resolved `[start, end)` in recording seconds, once the first row has been read.
    pub fn resolved_range(&self) -> Option<(f64, f64)> {
        self.bounds
    }

    fn resolve(&mut self, first: f64) -> Result<(f64, f64)> {
        if let Some(b) = self.bounds {
            return Ok(b);
        }
        let start = match &self.range.start {
            Some(b) => b.resolve(first, &self.header)?,
            None => f64::NEG_INFINITY,
        };
        let end = match &self.range.end {
            Some(b) => b.resolve(first, &self.header)?,
            None => f64::INFINITY,
        };
        inverted(start, end, " on the recording's axis")?;
        self.bounds = Some((start, end));
        Ok((start, end))
    }

    /// Copies the kept values of `src` (a row of the inner reader) into `dst`.
    fn project(&self, src: &FrameBuf, dst: &mut FrameBuf) -> Result<()> {
        let Some(Some(m)) = self.map.get(src.stream) else {
            return Ok(());
        };
        let desc = &self.schema.streams[m.out];
        dst.reset(m.out, desc.signals.len());
        for (slot, &i) in m.signals.iter().enumerate() {
            if let Some(v) = src.values.get(i) {
                dst.values[slot].clone_from(v);
            }
        }
        if let Some((system, reference)) = &self.absolute {
            let t = src.time_seconds(&self.inner.schema().streams[src.stream]);
            let read_to = (self.inner.progress().0, self.inner.progress_unit());
            dst.values[desc.signals.len() - 1] =
                absolute_ns(&desc.name, reference, *system, t, read_to)?;
        }
        Ok(())
    }

    /// True when batches can be selected column by column: no `--carry-last` (its rows go
    /// out in file order around the start) and no bound relative to the first row (which
    /// needs the file order across streams).
    fn batch_ready(&self) -> bool {
        let relative = |b: &Option<TimeBound>| matches!(b, Some(TimeBound::Relative(_)));
        !self.range.carry_last && !relative(&self.range.start) && !relative(&self.range.end)
    }

    /// Applies the pipeline to one batch of the inner reader: the kept columns (widened when
    /// asked), the rows inside the time range, the absolute time column.
    fn select_batch(&mut self, batch: StreamBatch) -> Result<Option<StreamBatch>> {
        let inner_stream = batch.stream();
        let Some(Some(m)) = self.map.get(inner_stream) else {
            return Ok(None);
        };
        let out = m.out;
        let in_desc = &self.inner.schema().streams[inner_stream];
        let rows = batch.rows();
        let needs_time = !self.range.is_empty() || self.absolute.is_some();
        let times: Vec<Option<f64>> = if needs_time {
            batch.times(in_desc)
        } else {
            Vec::new()
        };
        let mut columns: Vec<Option<ColumnBuf>> =
            batch.into_columns().into_iter().map(Some).collect();
        let mut kept = Vec::with_capacity(m.signals.len() + 1);
        for &i in &m.signals {
            let mut column = columns.get_mut(i).and_then(Option::take).ok_or_else(|| {
                Error::invalid(format!("a batch of stream {inner_stream} lacks column {i}"))
            })?;
            if self.upcast_f64 {
                column.widen_to_f64();
            }
            kept.push(column);
        }
        let desc = &self.schema.streams[out];
        if let Some((system, reference)) = &self.absolute
            && let Some(signal) = desc.signals.last()
        {
            let mut column = ColumnBuf::new(signal, rows);
            let read_to = (self.inner.progress().0, self.inner.progress_unit());
            for (r, t) in times.iter().enumerate() {
                let ns = absolute_ns(&desc.name, reference, *system, *t, read_to)?;
                column
                    .push_value(&ns, r)
                    .map_err(|e| Error::invalid(format!("{}: {e}", signal.name)))?;
            }
            kept.push(column);
        }
        let mut selected = StreamBatch::from_columns(out, rows, kept)
            .map_err(|e| Error::invalid(format!("stream {:?}: {}", desc.name, e.message)))?;
        if !self.range.is_empty() && rows > 0 {
            let first = times.iter().flatten().next().copied().unwrap_or(0.0);
            let (start, end) = self.resolve(first)?;
            let keep: Vec<bool> = times
                .iter()
                .map(|t| t.is_some_and(|t| t >= start && t < end))
                .collect();
            if keep.iter().any(|k| !k) {
                selected.retain_rows(&keep);
            }
        }
        Ok(Some(selected))
    }

    fn flush_carried(&mut self) {
        if self.emitted_carry {
            return;
        }
        self.emitted_carry = true;
        for carried in self.carried.iter_mut().rev() {
            if let Some(row) = carried.take() {
                self.pending.push(row);
            }
        }
    }
}

impl<R: RecordingReader> RecordingReader for SelectedReader<R> {
    fn format(&self) -> &'static FormatInfo {
        self.inner.format()
    }

    fn header(&self) -> &Header {
        &self.header
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        loop {
            if let Some(row) = self.pending.pop() {
                self.project(&row, dst)?;
                return Ok(true);
            }
            let mut src = std::mem::take(&mut self.scratch);
            if !self.inner.read_frame(&mut src)? {
                self.scratch = src;
                if self.range.carry_last && !self.emitted_carry {
                    self.flush_carried();
                    continue;
                }
                return Ok(false);
            }
            if !matches!(self.map.get(src.stream), Some(Some(_))) {
                self.scratch = src;
                continue;
            }
            if self.range.is_empty() {
                self.project(&src, dst)?;
                self.scratch = src;
                return Ok(true);
            }
            let time = src.time_seconds(&self.inner.schema().streams[src.stream]);
            let Some(t) = time else {
                // A row without a time cannot be placed in a range: drop it.
                self.scratch = src;
                continue;
            };
            let (start, end) = self.resolve(t)?;
            if t < start {
                if self.range.carry_last {
                    let slot = &mut self.carried[src.stream];
                    match slot {
                        Some(row) => row.clone_from(&src),
                        None => *slot = Some(src.clone()),
                    }
                }
                self.scratch = src;
                continue;
            }
            if t >= end {
                self.scratch = src;
                continue;
            }
            if self.range.carry_last && !self.emitted_carry {
                // Emit the carried rows first, then this one.
                self.flush_carried();
                self.pending.insert(0, src.clone());
                self.scratch = src;
                continue;
            }
            self.project(&src, dst)?;
            self.scratch = src;
            return Ok(true);
        }
    }

    fn read_batches(&mut self, dst: &mut BatchSet) -> Result<bool> {
        if !self.batch_ready() {
            return recfmt_core::read_batches_by_rows(self, dst);
        }
        let mut inner = match self.inner_batches.take() {
            Some(queue) => queue,
            None => {
                let map = &self.map;
                let schema = self.inner.schema();
                let wanted = |i: usize| matches!(map.get(i), Some(Some(m)) if dst.wants(m.out));
                // Only the kept columns and the time column are read.
                let column = |stream: usize, signal: usize| {
                    schema.streams[stream].time == signal
                        || matches!(map.get(stream), Some(Some(m)) if m.signals.contains(&signal))
                };
                BatchQueue::new(BatchSet::with_columns(
                    schema,
                    dst.capacity(),
                    wanted,
                    column,
                ))
            }
        };
        let result = (|| loop {
            let Some(batch) = inner.next(&mut self.inner)? else {
                return Ok(false);
            };
            if let Some(selected) = self.select_batch(batch)? {
                let out = selected.stream();
                dst.stream_mut(out)
                    .append(selected)
                    .map_err(|e| Error::invalid(format!("stream {out}: {}", e.message)))?;
            }
            if dst.is_full() {
                return Ok(true);
            }
        })();
        self.inner_batches = Some(inner);
        result
    }

    fn integrity(&self) -> &Integrity {
        self.inner.integrity()
    }

    fn progress(&self) -> (u64, Option<u64>) {
        self.inner.progress()
    }

    fn progress_unit(&self) -> recfmt_core::ProgressUnit {
        self.inner.progress_unit()
    }
}

/// 2^63: the absolute time column's i64 nanoseconds lie in `[-2^63, 2^63)`.
const I64_SPAN: f64 = 9_223_372_036_854_775_808.0;

/// The absolute time column's value for recording time `t` (nanoseconds since 1970 in
/// `system`). A row without a time has none; a NaN, infinite or absurd time is damaged input
/// and an error, not a silent gap, naming where the reader had got to (`read_to`, its
/// `progress()` and what that counts; the bad record lies before it).
fn absolute_ns(
    stream: &str,
    reference: &TimeReference,
    system: TimeSystem,
    t: Option<f64>,
    read_to: (u64, recfmt_core::ProgressUnit),
) -> Result<Value> {
    let Some(t) = t else {
        return Ok(Value::Null);
    };
    match reference.to_system(t, system) {
        // i64 nanoseconds since 1970 reach from 1677-09-21 to 2262-04-11; a cast would
        // saturate to i64::MAX silently.
        Some(s) if (-I64_SPAN..I64_SPAN).contains(&(s * 1e9).round()) => {
            Ok(Value::Int((s * 1e9).round() as i64))
        }
        Some(s) => Err(Error::invalid(format!(
            "stream {stream:?}: time {t} s ({}) has no value in the absolute {system} time column, \
             which holds i64 nanoseconds since 1970-01-01, from 1677-09-21 to 2262-04-11 \
             (the record lies before {} {} of the input; convert without an absolute time column)",
            reference
                .to_rfc3339(t)
                .unwrap_or_else(|| format!("{s:e} s after 1970-01-01T00:00:00 {system}")),
            read_to.1.name(),
            read_to.0
        ))),
        None if !reference.has_epoch() => Ok(Value::Null),
        None => Err(Error::invalid(format!(
            "stream {stream:?}: time {t} s has no absolute {system} instant \
             (expected a finite time within {MAX_ABSOLUTE_SECONDS:e} s of the recording's epoch; \
             the record lies before {} {} of the input)",
            read_to.1.name(),
            read_to.0
        ))),
    }
}

#[cfg(test)]
mod tests {
    use recfmt_core::{ProgressUnit, TimeReference};

    use super::*;

    #[test]
    fn absolute_times_outside_i64_nanoseconds_are_errors_not_saturated() {
        let at = |epoch: &str, t: f64| {
            let reference = TimeReference::parse(TimeSystem::Utc, Some(epoch)).unwrap();
            absolute_ns(
                "s",
                &reference,
                TimeSystem::Utc,
                Some(t),
                (48, ProgressUnit::Bytes),
            )
        };
        assert_eq!(
            at("2262-04-11T00:00:00Z", 0.0).unwrap(),
            Value::Int(9_223_286_400_000_000_000)
        );
        assert_eq!(
            at("1677-09-22T00:00:00Z", 0.0).unwrap(),
            Value::Int(-9_223_286_400_000_000_000)
        );
        for (epoch, t) in [
            ("2262-06-01T00:00:00Z", 0.0),
            ("2262-04-11T00:00:00Z", 86_400.0),
            ("1677-09-21T00:00:00Z", 0.0),
        ] {
            let err = at(epoch, t).unwrap_err().to_string();
            assert!(
                err.contains("from 1677-09-21 to 2262-04-11"),
                "{epoch} + {t}: {err}"
            );
        }
    }
}
