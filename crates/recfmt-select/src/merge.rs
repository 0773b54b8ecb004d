//! One wide table from several streams, with an explicit alignment rule.
//!
//! A k-way merge: every stream must be in time order itself, though streams need not be
//! interleaved in time order in the file. One reader serves every stream, keeping the rows it
//! reads ahead for the others in per-stream queues; when those hold more than 64 MiB, a stream
//! whose next row lies further on gets a reader of its own.
//! So memory stays bounded whatever the recording size, and a recording of many interleaved
//! streams costs one reader, not one per stream. Columns are `t` (seconds, `f64`) then `<stream>.<signal>` for
//! every non-time signal, in their native types.
//!
//! * [`Alignment::Union`]: one row per distinct timestamp of any stream (several rows when one
//!   stream repeats a timestamp); streams without a sample at that time are null.
//! * [`Alignment::AsOf`]: one row per row of a base stream; every other stream contributes its
//!   latest row at or before that time (null before its first row).
//! * [`Alignment::Raster`]: rows at `t0, t0 + dt, ...` up to the last sample of any stream;
//!   floats are interpolated linearly between the samples around each time, integers,
//!   booleans, strings and arrays take the previous sample; outside a stream's own time span
//!   its columns are null.

use std::collections::VecDeque;

use recfmt_core::{
    BatchSet, DType, Error, FormatInfo, FrameBuf, Header, Integrity, RecordingReader, Result,
    Schema, SignalDesc, StreamDesc, TimeBase, Value,
};

/// How rows of different streams line up.
#[derive(Debug, Clone, PartialEq)]
pub enum Alignment {
    /// Union of all timestamps.
    Union,
    /// Onto the time base of the named stream.
    AsOf(String),
    /// A fixed raster with this step in seconds.
    Raster(f64),
}

impl Alignment {
    /// Parses `union`, `asof:STREAM` or `raster:STEP` (`raster:0.01`, `raster:10ms`).
    pub fn parse(text: &str) -> Result<Self> {
        if text == "union" {
            return Ok(Alignment::Union);
        }
        if let Some(stream) = text.strip_prefix("asof:") {
            return Ok(Alignment::AsOf(stream.to_string()));
        }
        if let Some(step) = text.strip_prefix("raster:") {
            let seconds = match crate::TimeBound::parse(step)? {
                crate::TimeBound::Absolute(s) if s > 0.0 => s,
                _ => {
                    return Err(Error::invalid(format!(
                        "raster step {step:?} must be a positive duration"
                    )));
                }
            };
            return Ok(Alignment::Raster(seconds));
        }
        Err(Error::invalid(format!(
            "unknown alignment {text:?} (expected union, asof:STREAM or raster:STEP)"
        )))
    }

    fn describe(&self) -> String {
        match self {
            Alignment::Union => "union".into(),
            Alignment::AsOf(s) => format!("asof:{s}"),
            Alignment::Raster(dt) => format!("raster:{dt}"),
        }
    }
}

/// Name of the merged stream.
pub const MERGED_STREAM: &str = "merged";

/// Opens a fresh reader over the same recording (with the same selection applied).
pub type OpenReader<'a> = dyn FnMut() -> Result<Box<dyn RecordingReader>> + Send + 'a;

/// Bytes of rows the shared reader of a merge holds read ahead for streams that have not
/// asked for them yet; past this, a stream whose next row is further on gets its own reader.
const MERGE_LOOKAHEAD_BYTES: usize = 64 << 20;

/// Rows a raster merge may hold when the caller sets no limit: a billion-row table is
/// already far beyond what the tools that read these tables hold, and a larger raster comes
/// from a damaged time (one record at 2^62 µs) or a mistyped step, not from a real recording.
pub const RASTER_DEFAULT_MAX_ROWS: u64 = 100_000_000;

/// The rows a raster merge at `step` seconds would write: one per step from the earliest first
/// sample to the latest last sample of any stream, found in one pass over `reader`.
///
/// A time that is NaN or infinite is an error (it has no place on a raster), as is a step
/// that is not a positive finite number.
pub fn raster_rows(reader: &mut dyn RecordingReader, step: f64) -> Result<u64> {
    if !(step.is_finite() && step > 0.0) {
        return Err(Error::invalid(format!(
            "raster step {step} s must be a positive finite duration"
        )));
    }
    // Only the time columns are read (readers of fixed layouts skip the rest undecoded).
    let schema = reader.schema().clone();
    let mut batches = BatchSet::with_columns(
        &schema,
        65_536,
        |_| true,
        |stream, column| column == schema.streams[stream].time,
    );
    let mut rows = vec![0u64; schema.streams.len()];
    let mut span: Option<(f64, f64)> = None;
    loop {
        let more = reader.read_batches(&mut batches)?;
        let (read_to, unit) = (reader.progress().0, reader.progress_unit());
        for batch in batches.take_at_least(1) {
            let Some(desc) = schema.streams.get(batch.stream()) else {
                continue;
            };
            let first_row = rows[batch.stream()];
            rows[batch.stream()] += batch.rows() as u64;
            for (i, t) in batch.times(desc).into_iter().enumerate() {
                let Some(t) = t else { continue };
                if !t.is_finite() {
                    return Err(Error::invalid(format!(
                        "stream {} row {}: time {t} s cannot be placed on a raster (expected a finite time; the record lies before {} {read_to} of the input)",
                        desc.name,
                        first_row + i as u64,
                        unit.name()
                    )));
                }
                span = Some(span.map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))));
            }
        }
        if !more {
            break;
        }
    }
    Ok(span.map_or(0, |(lo, hi)| {
        let steps = ((hi - lo) / step).floor();
        // Saturates: a span of 2^62 µs at 1 ns is still a number to compare with a limit.
        if steps >= u64::MAX as f64 {
            u64::MAX
        } else {
            steps as u64 + 1
        }
    }))
}

/// Refuses a raster merge of `rows` rows above `max_rows` (or [`RASTER_DEFAULT_MAX_ROWS`]
/// when none is given), with the time span it comes from, before anything is written.
pub fn check_raster_rows(rows: u64, step: f64, max_rows: Option<u64>) -> Result<()> {
    let limit = max_rows.unwrap_or(RASTER_DEFAULT_MAX_ROWS);
    if rows > limit {
        let given = if max_rows.is_some() {
            "--max-rows"
        } else {
            "the default limit (raise it with --max-rows)"
        };
        return Err(Error::invalid(format!(
            "a raster of {step} s over this recording's time span ({} s) would write {rows} rows, more than {limit} allowed by {given}; check the recording's times or use a coarser step",
            rows.saturating_sub(1) as f64 * step
        )));
    }
    Ok(())
}

/// Counts rows per stream in one pass: what a union of timestamps can grow to at most.
pub fn count_rows(reader: &mut dyn RecordingReader) -> Result<Vec<u64>> {
    let mut counts = vec![0u64; reader.schema().streams.len()];
    let mut frame = FrameBuf::default();
    while reader.read_frame(&mut frame)? {
        if let Some(c) = counts.get_mut(frame.stream) {
            *c += 1;
        }
    }
    Ok(counts)
}

/// Where a stream's rows come from.
enum Source {
    /// The reader every stream shares, through the stream's queue of rows read ahead.
    Shared,
    /// A reader of its own, skipping other streams' rows.
    Own(Box<dyn RecordingReader>),
}

struct Cursor {
    source: Source,
    /// Rows of this stream the shared reader read ahead (only while the source is shared).
    queue: VecDeque<FrameBuf>,
    stream: usize,
    desc: StreamDesc,
    head: FrameBuf,
    head_t: Option<f64>,
    prev: FrameBuf,
    prev_t: Option<f64>,
    /// First column of this stream in the merged row.
    offset: usize,
    /// Signal indices copied (all but the time column).
    columns: Vec<usize>,
    rows: u64,
}

/// The reader the streams share.
struct Shared {
    reader: Box<dyn RecordingReader>,
    /// The shared reader reached the end.
    done: bool,
    /// Bytes of the rows in every cursor's queue (see [`queued_bytes`]).
    queued: usize,
    /// The row being read.
    scratch: FrameBuf,
    /// Most bytes queued before a stream that needs the shared reader gets its own.
    lookahead: usize,
}

/// About the memory a queued row takes.
fn queued_bytes(row: &FrameBuf) -> usize {
    let heap: usize = row
        .values
        .iter()
        .map(|v| match v {
            Value::Str(s) => s.capacity(),
            Value::Bytes(b) => b.capacity(),
            Value::Array(a) => a.len() * 8,
            _ => 0,
        })
        .sum();
    std::mem::size_of::<FrameBuf>() + row.values.capacity() * std::mem::size_of::<Value>() + heap
}

/// A reader yielding one merged stream.
pub struct MergedReader<'a> {
    cursors: Vec<Cursor>,
    shared: Shared,
    /// Opens the readers of streams that leave the shared one.
    open: Box<OpenReader<'a>>,
    alignment: Alignment,
    header: Header,
    schema: Schema,
    format: &'static FormatInfo,
    /// Next raster index and origin.
    raster: Option<(u64, f64)>,
    base: usize,
}

impl std::fmt::Debug for MergedReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergedReader")
            .field("alignment", &self.alignment)
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl<'a> MergedReader<'a> {
    /// Opens a reader through `open` and merges its streams. That reader serves every
    /// stream, queuing up to 64 MiB of rows read ahead; a stream whose next row lies further
    /// on gets a reader of its own, also from `open`. A raster is checked first against
    /// [`RASTER_DEFAULT_MAX_ROWS`] (see [`MergedReader::with_max_rows`]).
    pub fn new(
        open: impl FnMut() -> Result<Box<dyn RecordingReader>> + Send + 'a,
        alignment: Alignment,
    ) -> Result<Self> {
        Self::with_max_rows(open, alignment, None)
    }

    /// As [`MergedReader::new`], with the row limit of a raster merge: one pass over the
    /// recording finds its time span, and a raster that would exceed `max_rows` (default
    /// [`RASTER_DEFAULT_MAX_ROWS`]) or meets a non-finite time is refused before any row is
    /// produced.
    pub fn with_max_rows(
        open: impl FnMut() -> Result<Box<dyn RecordingReader>> + Send + 'a,
        alignment: Alignment,
        max_rows: Option<u64>,
    ) -> Result<Self> {
        Self::build(Box::new(open), alignment, max_rows, MERGE_LOOKAHEAD_BYTES)
    }

    /// [`MergedReader::with_max_rows`] with `lookahead` bytes of rows read ahead at most.
    fn build(
        mut open: Box<OpenReader<'a>>,
        alignment: Alignment,
        max_rows: Option<u64>,
        lookahead: usize,
    ) -> Result<Self> {
        if let Alignment::Raster(step) = alignment {
            let rows = raster_rows(open()?.as_mut(), step)?;
            check_raster_rows(rows, step, max_rows)?;
        }
        let first = open()?;
        let header = first.header().clone();
        let format = first.format();
        let streams = first.schema().streams.clone();
        if let Some(keyed) = streams.iter().find(|s| s.entity.is_some()) {
            return Err(Error::invalid(format!(
                "stream {} is keyed by entity (one row per entity per tick); merge it per entity or convert it as its own table",
                keyed.name
            )));
        }
        let mut merged = StreamDesc::new(
            MERGED_STREAM,
            SignalDesc::scalar("t", DType::F64).with_unit("s"),
            TimeBase::SECONDS,
        );
        merged
            .metadata
            .insert("recfmt.alignment".into(), alignment.describe());
        let mut cursors = Vec::new();
        for (stream, desc) in streams.iter().enumerate() {
            let offset = merged.signals.len();
            let mut columns = Vec::new();
            for (i, sig) in desc.signals.iter().enumerate() {
                if i == desc.time {
                    continue;
                }
                let mut sig = sig.clone();
                sig.metadata
                    .insert("recfmt.stream".into(), desc.name.clone());
                sig.metadata
                    .insert("recfmt.signal".into(), sig.name.clone());
                sig.name = format!("{}.{}", desc.name, sig.name);
                merged.signals.push(sig);
                columns.push(i);
            }
            cursors.push(Cursor {
                source: Source::Shared,
                queue: VecDeque::new(),
                stream,
                desc: desc.clone(),
                head: FrameBuf::default(),
                head_t: None,
                prev: FrameBuf::default(),
                prev_t: None,
                offset,
                columns,
                rows: 0,
            });
        }
        let base = match &alignment {
            Alignment::AsOf(name) => {
                streams
                    .iter()
                    .position(|s| &s.name == name)
                    .ok_or_else(|| {
                        let names: Vec<_> = streams.iter().map(|s| s.name.as_str()).collect();
                        Error::invalid(format!(
                            "asof stream {name:?} is not among the merged streams ({})",
                            names.join(", ")
                        ))
                    })?
            }
            _ => 0,
        };
        let mut reader = MergedReader {
            cursors,
            shared: Shared {
                reader: first,
                done: false,
                queued: 0,
                scratch: FrameBuf::default(),
                lookahead,
            },
            open,
            alignment,
            header,
            schema: Schema {
                streams: vec![merged],
            },
            format,
            raster: None,
            base,
        };
        // Every cursor exists before the first is advanced: rows the shared reader meets on
        // the way are queued for their streams.
        for i in 0..reader.cursors.len() {
            reader.advance(i)?;
        }
        Ok(reader)
    }

    /// Moves `head` to `prev` and reads the next row of stream `i` into `head`.
    fn advance(&mut self, i: usize) -> Result<()> {
        let cursor = &mut self.cursors[i];
        if cursor.head_t.is_some() {
            std::mem::swap(&mut cursor.prev, &mut cursor.head);
            cursor.prev_t = cursor.head_t;
        }
        cursor.head_t = None;
        if !self.next_row(i)? {
            return Ok(());
        }
        let cursor = &mut self.cursors[i];
        let t = cursor.head.time_seconds(&cursor.desc).ok_or_else(|| {
            Error::invalid(format!(
                "stream {} has a row without a time",
                cursor.desc.name
            ))
        })?;
        if !t.is_finite() {
            return Err(Error::invalid(format!(
                "stream {} row {}: time {t} s cannot be merged (expected a finite time)",
                cursor.desc.name, cursor.rows
            )));
        }
        if let Some(p) = cursor.prev_t
            && t < p
        {
            return Err(Error::invalid(format!(
                "stream {} goes back in time at row {} ({t} s after {p} s): merged tables need each stream in time order",
                cursor.desc.name, cursor.rows
            )));
        }
        cursor.rows += 1;
        cursor.head_t = Some(t);
        Ok(())
    }

    /// Reads the next row of stream `i` into its `head`: from its queue or the shared reader
    /// (queuing other streams' rows met on the way), or from its own reader. `false` at the
    /// end of the stream.
    fn next_row(&mut self, i: usize) -> Result<bool> {
        loop {
            let cursor = &mut self.cursors[i];
            if let Source::Own(reader) = &mut cursor.source {
                while reader.read_frame(&mut cursor.head)? {
                    if cursor.head.stream == cursor.stream {
                        return Ok(true);
                    }
                }
                return Ok(false);
            }
            if let Some(row) = cursor.queue.pop_front() {
                self.shared.queued -= queued_bytes(&row);
                cursor.head = row;
                return Ok(true);
            }
            if self.shared.done {
                return Ok(false);
            }
            if self.shared.queued > self.shared.lookahead {
                self.detach(i)?;
                continue;
            }
            let shared = &mut self.shared;
            if !shared.reader.read_frame(&mut shared.scratch)? {
                shared.done = true;
                continue;
            }
            let stream = shared.scratch.stream;
            if stream == i {
                std::mem::swap(&mut self.cursors[i].head, &mut shared.scratch);
                return Ok(true);
            }
            if let Some(other) = self.cursors.get_mut(stream)
                && matches!(other.source, Source::Shared)
            {
                let row = std::mem::take(&mut shared.scratch);
                shared.queued += queued_bytes(&row);
                other.queue.push_back(row);
            }
        }
    }

    /// Gives stream `i` (whose queue is empty) a reader of its own, past the rows it took.
    fn detach(&mut self, i: usize) -> Result<()> {
        let mut reader = (self.open)()?;
        let cursor = &mut self.cursors[i];
        // Every row of this stream the shared reader passed was queued and taken: `rows`.
        let mut skipped = 0;
        while skipped < cursor.rows && reader.read_frame(&mut cursor.head)? {
            if cursor.head.stream == cursor.stream {
                skipped += 1;
            }
        }
        cursor.source = Source::Own(reader);
        Ok(())
    }

    fn start_row(&self, dst: &mut FrameBuf, t: f64) {
        let width = self.schema.streams[0].signals.len();
        dst.reset(0, width);
        for v in &mut dst.values {
            *v = Value::Null;
        }
        dst.values[0] = Value::Float(t);
    }

    fn copy(cursor: &Cursor, row: &FrameBuf, dst: &mut FrameBuf) {
        for (k, &i) in cursor.columns.iter().enumerate() {
            if let Some(v) = row.values.get(i) {
                dst.values[cursor.offset + k].clone_from(v);
            }
        }
    }

    fn union_row(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        let Some(t) = self
            .cursors
            .iter()
            .filter_map(|c| c.head_t)
            .reduce(f64::min)
        else {
            return Ok(false);
        };
        self.start_row(dst, t);
        for i in 0..self.cursors.len() {
            let cursor = &self.cursors[i];
            if cursor.head_t == Some(t) {
                Self::copy(cursor, &cursor.head, dst);
                self.advance(i)?;
            }
        }
        Ok(true)
    }

    fn asof_row(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        let Some(t) = self.cursors[self.base].head_t else {
            return Ok(false);
        };
        self.start_row(dst, t);
        let base = self.base;
        for i in 0..self.cursors.len() {
            if i == base {
                let cursor = &self.cursors[i];
                Self::copy(cursor, &cursor.head, dst);
                self.advance(i)?;
                continue;
            }
            while self.cursors[i].head_t.is_some_and(|h| h <= t) {
                self.advance(i)?;
            }
            let cursor = &self.cursors[i];
            if cursor.prev_t.is_some() {
                Self::copy(cursor, &cursor.prev, dst);
            }
        }
        Ok(true)
    }

    fn raster_row(&mut self, dst: &mut FrameBuf, step: f64) -> Result<bool> {
        let (k, t0) = match self.raster {
            Some(r) => r,
            None => {
                let Some(t0) = self
                    .cursors
                    .iter()
                    .filter_map(|c| c.head_t)
                    .reduce(f64::min)
                else {
                    return Ok(false);
                };
                (0, t0)
            }
        };
        // Snapped to the nanosecond so that 1.0 + 38 × 0.05 lands on the sample at 2.9.
        let t = ((t0 + k as f64 * step) * 1e9).round() / 1e9;
        for i in 0..self.cursors.len() {
            while self.cursors[i].head_t.is_some_and(|h| h <= t) {
                self.advance(i)?;
            }
        }
        // Past the last sample of every stream: done.
        let any_left = self
            .cursors
            .iter()
            .any(|c| c.head_t.is_some() || c.prev_t.is_some_and(|p| p >= t));
        if !any_left {
            return Ok(false);
        }
        self.raster = Some((k + 1, t0));
        self.start_row(dst, t);
        for cursor in &mut self.cursors {
            let Some(pt) = cursor.prev_t else {
                continue; // before the stream's first sample
            };
            match cursor.head_t {
                None if pt < t => continue, // after the stream's last sample
                Some(ht) if ht > pt && pt < t => {
                    let w = (t - pt) / (ht - pt);
                    for (k, &i) in cursor.columns.iter().enumerate() {
                        let dtype = cursor.desc.signals[i].dtype;
                        let slot = &mut dst.values[cursor.offset + k];
                        match (&cursor.prev.values[i], &cursor.head.values[i]) {
                            (Value::Float(a), Value::Float(b)) if dtype.is_float() => {
                                let v = a + (b - a) * w;
                                *slot = Value::Float(if dtype == DType::F32 {
                                    f64::from(v as f32)
                                } else {
                                    v
                                });
                            }
                            (prev, _) => slot.clone_from(prev),
                        }
                    }
                }
                _ => Self::copy(cursor, &cursor.prev, dst),
            }
        }
        Ok(true)
    }
}

impl RecordingReader for MergedReader<'_> {
    fn format(&self) -> &'static FormatInfo {
        self.format
    }

    fn header(&self) -> &Header {
        &self.header
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn read_frame(&mut self, dst: &mut FrameBuf) -> Result<bool> {
        let more = match self.alignment.clone() {
            Alignment::Union => self.union_row(dst)?,
            Alignment::AsOf(_) => self.asof_row(dst)?,
            Alignment::Raster(step) => self.raster_row(dst, step)?,
        };
        // The shared reader reads to the end, so its integrity covers the whole file.
        while !more && !self.shared.done {
            let shared = &mut self.shared;
            shared.done = !shared.reader.read_frame(&mut shared.scratch)?;
        }
        Ok(more)
    }

    fn integrity(&self) -> &Integrity {
        self.shared.reader.integrity()
    }

    fn progress(&self) -> (u64, Option<u64>) {
        self.shared.reader.progress()
    }

    fn progress_unit(&self) -> recfmt_core::ProgressUnit {
        self.shared.reader.progress_unit()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use recfmt_core::MemoryRecording;

    use super::*;

    /// `streams` streams `S0`, `S1`, ... of (`t` seconds, `v`), `rows` rows each at t = 0, 1,
    /// ...: interleaved in time order, or stream after stream.
    fn recording(streams: usize, rows: usize, interleaved: bool) -> MemoryRecording {
        let descs = (0..streams)
            .map(|s| {
                let mut d = StreamDesc::new(
                    format!("S{s}"),
                    SignalDesc::scalar("t", DType::F64),
                    TimeBase::SECONDS,
                );
                d.signals.push(SignalDesc::scalar("v", DType::I64));
                d
            })
            .collect();
        let row = |s: usize, r: usize| {
            let v = (s * 1000 + r) as i64;
            (s, vec![Value::Float(r as f64), Value::Int(v)])
        };
        let rows: Vec<_> = if interleaved {
            (0..rows)
                .flat_map(|r| (0..streams).map(move |s| (s, r)))
                .map(|(s, r)| row(s, r))
                .collect()
        } else {
            (0..streams)
                .flat_map(|s| (0..rows).map(move |r| (s, r)))
                .map(|(s, r)| row(s, r))
                .collect()
        };
        let header = Header {
            format: "mem",
            ..Header::default()
        };
        MemoryRecording::new(header, Schema { streams: descs }).with_rows(rows)
    }

    /// Every merged row, and how many readers the merge opened.
    fn merge(
        streams: usize,
        rows: usize,
        interleaved: bool,
        alignment: Alignment,
        lookahead: usize,
    ) -> (Vec<Vec<Value>>, usize) {
        let opened = AtomicUsize::new(0);
        let open = || -> Result<Box<dyn RecordingReader>> {
            opened.fetch_add(1, Ordering::Relaxed);
            Ok(Box::new(recording(streams, rows, interleaved)))
        };
        let mut reader = MergedReader::build(Box::new(open), alignment, None, lookahead).unwrap();
        let mut out = Vec::new();
        let mut frame = FrameBuf::default();
        while reader.read_frame(&mut frame).unwrap() {
            out.push(frame.values.clone());
        }
        drop(reader);
        (out, opened.into_inner())
    }

    #[test]
    fn many_interleaved_streams_share_one_reader() {
        // One reader per stream took 3.9 GB for 1000 one-row USVLOG streams.
        for alignment in [
            Alignment::Union,
            Alignment::AsOf("S3".into()),
            Alignment::Raster(0.5),
        ] {
            let raster = matches!(alignment, Alignment::Raster(_));
            let (rows, opened) = merge(1000, 2, true, alignment, MERGE_LOOKAHEAD_BYTES);
            // A raster counts its rows in a pass of its own first.
            assert_eq!(opened, if raster { 2 } else { 1 });
            assert_eq!(rows.len(), if raster { 3 } else { 2 });
            assert_eq!(rows[1][0], Value::Float(if raster { 0.5 } else { 1.0 }));
            assert_eq!(rows[0][1 + 999], Value::Int(999_000));
        }
    }

    #[test]
    fn streams_far_apart_in_the_file_get_their_own_reader_and_the_same_rows() {
        for alignment in [
            Alignment::Union,
            Alignment::AsOf("S1".into()),
            Alignment::Raster(0.25),
        ] {
            let (whole, _) = merge(4, 300, false, alignment.clone(), usize::MAX);
            let (bounded, opened) = merge(4, 300, false, alignment.clone(), 2048);
            assert_eq!(whole, bounded, "{alignment:?}");
            // Streams 1 to 3 lie behind hundreds of rows of stream 0: each has its own reader.
            let raster = usize::from(matches!(alignment, Alignment::Raster(_)));
            assert_eq!(opened, 1 + 3 + raster, "{alignment:?}");
            let first = &whole[0];
            assert_eq!(first[0], Value::Float(0.0));
            assert_eq!(first[1..].iter().filter(|v| **v != Value::Null).count(), 4);
        }
        let (union, _) = merge(4, 300, false, Alignment::Union, 2048);
        assert_eq!(union.len(), 300);
        assert_eq!(union[299][1 + 3], Value::Int(3299));
    }
}
