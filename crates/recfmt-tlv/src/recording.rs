//! The adapter from USVLOG to the generic recfmt model: one stream per record type.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::{Path, PathBuf};

use recfmt_core::{
    DType, FormatInfo, Header, Integrity, ReadOptions, RecordingReader, RowWriter, Schema,
    SignalDesc, StreamDesc, TimeBase, TimeReference, TimeSystem,
};

use crate::decode::{Gathered, RowDecoder};
use crate::error::{Error, Result};
use crate::events::EventLog;
use crate::io::Reader;
use crate::layout::{LayoutTable, RecordLayout, read_layout_file};
use crate::meta::Meta;
use crate::parallel::{DEFAULT_BLOCK_BYTES, Pipeline};

/// Name of the stream that keeps records of types without a layout, as raw bytes.
pub const UNKNOWN_STREAM: &str = "REC_UNKNOWN";
/// Name of the stream of `events.jsonl` entries.
pub const EVENTS_STREAM: &str = "EVENTS";

/// The files of a session: `timeseries.bin` and, when present, `meta.json` and `events.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionPaths {
    /// The record file.
    pub timeseries: PathBuf,
    /// `meta.json` beside it.
    pub meta: Option<PathBuf>,
    /// `events.jsonl` beside it.
    pub events: Option<PathBuf>,
}

impl SessionPaths {
    /// Resolves a session folder, or a `timeseries.bin` (or any record file) with its siblings.
    pub fn resolve(path: &Path) -> std::io::Result<Self> {
        let (dir, timeseries) = if path.is_dir() {
            (path.to_path_buf(), path.join("timeseries.bin"))
        } else {
            let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
            (dir, path.to_path_buf())
        };
        let sibling = |name: &str| Some(dir.join(name)).filter(|p| p.is_file());
        Ok(SessionPaths {
            meta: sibling("meta.json"),
            events: sibling("events.jsonl"),
            timeseries,
        })
    }
}

/// A USVLOG session read as generic streams.
///
/// Streams, in order: one per record layout in force (named by the record name, columns `t_us`
/// then the fields in their native types), then [`UNKNOWN_STREAM`] (`t_us`, `type_id`,
/// `payload`), then [`EVENTS_STREAM`] when the session has `events.jsonl`.
#[derive(Debug)]
pub struct UsvlogRecording<R> {
    reader: Reader<R>,
    header: Header,
    schema: Schema,
    layouts: Vec<RecordLayout>,
    /// The one decoding of records into rows, shared with the decoding threads.
    decoder: RowDecoder,
    /// Stream index of each type id (`u32::MAX` for types without a layout): a table, because
    /// this lookup runs for every record.
    stream_of_type: Box<[u32]>,
    events: Option<EventLog>,
    /// Records of each stream's type seen, and how many `meta.json` says were written.
    records_seen: Vec<u64>,
    records_expected: Vec<(usize, u64)>,
    strict: bool,
    unknown_counts: BTreeMap<u16, u64>,
    long_payload_warned: HashSet<u16>,
    total_bytes: Option<u64>,
    records_done: bool,
    /// The record file, named in errors raised while reading rows.
    path: Option<PathBuf>,
    /// Threads that decode blocks for the batch path (0: decode on the caller's thread).
    decode_threads: usize,
    /// Bytes of records per block handed to a decoding thread.
    block_bytes: usize,
    /// Resync after a corrupt header is on: the batch path stays on one thread.
    resync: bool,
    /// The blocks of the batch path, once it started decoding on other threads.
    pipeline: Option<Pipeline>,
    /// The address of the last batch set found to want times alone (which one thread reads
    /// faster), so the check is not repeated for every row.
    times_only_set: Option<usize>,
    /// Records framed on the caller's thread for the batch view, per stream, written as
    /// runs (kept between calls for its buffers; empty between calls).
    gathered: Gathered,
    /// The time search of [`RecordingReader::seek_time`], on sources that can seek.
    seek: Option<fn(&mut Self, u64) -> Result<()>>,
}

/// Records framed on the caller's thread before the gathered runs are written: enough that
/// the per-run costs vanish, few enough that the chunk stays in the cache.
const GATHER_RECORDS: usize = 2048;

/// The next record of `$reader`, or `return $at_end` when the records end (`?` on an error).
/// A buffered record is tested for and then taken, so it stays in registers: through
/// `read_record_ref`'s `Result<Option<RecordRef>>` it went by the stack, at a cost of a
/// quarter of a times-only scan.
macro_rules! next_record {
    ($reader:expr, $at_end:expr) => {
        if $reader.has_buffered_record() {
            $reader.take_buffered_record()
        } else {
            match $reader.read_record_ref()? {
                Some(record) => record,
                None => return $at_end,
            }
        }
    };
}

// After `next_record!`, which it uses.
mod pipelined;

/// How a gathered chunk of records ended.
enum Chunk {
    /// After [`GATHER_RECORDS`] records: more may follow.
    More,
    /// At the row that fills its stream's batch.
    Full,
    /// At the end of the records.
    End,
}

/// Environment variable that sets the number of USVLOG decoding threads of the batch path
/// (0: decode on the caller's thread), for measurements; by default one per core besides the
/// caller's, up to [`MAX_DECODE_THREADS`], none on a single core.
pub const DECODE_THREADS_ENV: &str = "RECFMT_USVLOG_DECODE_THREADS";
/// Most decoding threads used by default. On two cores one worker beside the framing thread
/// measured as fast as two (0.25 s against 0.26 s for 400 MB) with less CPU time.
pub const MAX_DECODE_THREADS: usize = 3;

/// The default number of decoding threads (see [`DECODE_THREADS_ENV`]).
fn default_decode_threads() -> usize {
    if let Some(n) = std::env::var(DECODE_THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return n.min(16);
    }
    match std::thread::available_parallelism().map_or(1, std::num::NonZero::get) {
        // One core: a thread would only add hand-over costs.
        1 => 0,
        // The caller's thread frames records and takes the decoded blocks.
        n => (n - 1).min(MAX_DECODE_THREADS),
    }
}

/// Static facts about USVLOG.
pub static INFO: FormatInfo = FormatInfo {
    id: crate::FORMAT_ID,
    name: "USVLOG TLV time series (usv-autopilot)",
    extensions: &["bin"],
};

impl UsvlogRecording<BufReader<File>> {
    /// Opens a session folder or a `timeseries.bin`.
    pub fn open(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Self> {
        use recfmt_core::ResultExt;
        let paths = SessionPaths::resolve(path).in_file(path)?;
        let meta = match &paths.meta {
            Some(p) => Some(read_meta(p, options).in_file(p)?),
            None => None,
        };
        let mut user = Vec::new();
        for layout_path in &options.layouts {
            user.extend(read_layout_file(layout_path).in_file(layout_path)?);
        }
        let file = File::open(&paths.timeseries).in_file(&paths.timeseries)?;
        let total = file.metadata().ok().map(|m| m.len());
        let events = match &paths.events {
            Some(p) => Some(BufReader::new(File::open(p).in_file(p)?)),
            None => None,
        };
        let mut recording = UsvlogRecording::new(
            BufReader::with_capacity(1 << 16, file),
            meta.as_ref(),
            &user,
            options,
            events,
        )
        .in_file(&paths.timeseries)?;
        recording.total_bytes = total;
        recording.path = Some(paths.timeseries);
        recording.seek = Some(Self::seek_records);
        Ok(recording)
    }
}

/// A seek's search ends when its bracket is this narrow; the rest is read record by record.
const SEEK_LINEAR_BYTES: u64 = 64 << 10;
/// Bytes a probe of the search scans for a record start before it gives up on its half.
const SEEK_SYNC_LIMIT: u64 = 4 << 20;

impl<R: Read + Seek> UsvlogRecording<R> {
    /// As [`UsvlogRecording::new`], over a seekable source, so that
    /// [`RecordingReader::seek_time`] can search the records by time.
    pub fn new_seekable(
        source: R,
        meta: Option<&Meta>,
        user_layouts: &[RecordLayout],
        options: &ReadOptions,
        events: Option<BufReader<File>>,
    ) -> Result<Self> {
        let mut recording = Self::new(source, meta, user_layouts, options, events)?;
        recording.seek = Some(Self::seek_records);
        Ok(recording)
    }

    /// Positions the reader at a record start before which every record is earlier than
    /// `target_us`, close before the first that is not: a binary search over byte offsets
    /// that, at each probe, scans forward to the next offset where records start
    /// ([`Reader::sync_forward`]: known types with their exact lengths, times in order), so
    /// torn and garbage bytes are stepped over. Holds for records in time order, as writers
    /// emit them; where no record start is found the search keeps the earlier half, so
    /// nothing is skipped, only more is read.
    fn seek_records(&mut self, target_us: u64) -> Result<()> {
        let data_start = crate::header::HEADER_LEN as u64;
        let file_end = match self.total_bytes {
            Some(n) => n,
            None => self.reader.file_len()?,
        };
        let sizes: Vec<Option<u16>> = self
            .stream_of_type
            .iter()
            .map(|&s| {
                let size = (s != u32::MAX).then(|| self.decoder.payload_size(s as usize))?;
                u16::try_from(size).ok()
            })
            .collect();
        let known = |h: &crate::RecordHeader| sizes[usize::from(h.type_id)] == Some(h.len);
        // Every record before `lo` (a record start) is earlier than the target.
        let (mut lo, mut hi) = (data_start, file_end.max(data_start));
        while hi - lo > SEEK_LINEAR_BYTES {
            let mid = lo + (hi - lo) / 2;
            self.reader.seek_to(mid)?;
            let limit = (hi - mid).min(SEEK_SYNC_LIMIT);
            match self.reader.sync_forward(known, limit)? {
                Some((at, t_us)) if t_us < target_us => lo = at,
                _ => hi = mid,
            }
        }
        self.reader.seek_to(lo)?;
        Ok(())
    }
}

fn read_meta(path: &Path, options: &ReadOptions) -> Result<Meta> {
    let len = std::fs::metadata(path)?.len();
    recfmt_core::Limits::check("meta.json size", len, options.limits.max_side_file_len, 0)?;
    Meta::parse(std::fs::read_to_string(path)?)
}

impl<R: Read> UsvlogRecording<R> {
    /// Builds the adapter over a `timeseries.bin` byte source, with an optional `meta.json`
    /// and user layouts; reads the file header.
    pub fn new(
        source: R,
        meta: Option<&Meta>,
        user_layouts: &[RecordLayout],
        options: &ReadOptions,
        events: Option<BufReader<File>>,
    ) -> Result<Self> {
        let catalog = meta.map(Meta::record_catalog).transpose()?.flatten();
        let table = LayoutTable::resolve(catalog.as_ref(), user_layouts);
        let mut reader = Reader::new(source);
        reader.set_strict(options.strict);
        if options.resync {
            reader.set_resync(Some(
                table.layouts().map(|l| (l.type_id, l.size())).collect(),
            ));
        }
        let file_header = reader.read_header()?;
        for note in &table.notes {
            reader.integrity_mut().warn(note.clone());
        }

        let mut metadata = meta.map(Meta::flattened).unwrap_or_default();
        metadata.insert(
            "fw_model_schema".into(),
            file_header.fw_model_schema.to_string(),
        );
        metadata.insert("t0_us".into(), file_header.t0_us.to_string());
        if let Some(id) = meta.and_then(Meta::fw_model_id) {
            metadata.insert("fw_model_id".into(), id.to_string());
        }
        if let Some(m) = meta
            && let Some(s) = m.fw_model_schema()
            && s != u64::from(file_header.fw_model_schema)
        {
            reader.integrity_mut().warn(format!(
                "meta.json says fw_model_schema {s}, timeseries.bin says {}",
                file_header.fw_model_schema
            ));
        }
        let header = Header {
            format: crate::FORMAT_ID,
            version: file_header.fw_model_schema.to_string(),
            time: Some(TimeReference::new(TimeSystem::Met)),
            metadata,
        };

        let time_signal = || SignalDesc::scalar("t_us", DType::U64).with_unit("us");
        let mut schema = Schema::default();
        let mut layouts = Vec::new();
        let mut stream_of_type = vec![u32::MAX; usize::from(u16::MAX) + 1].into_boxed_slice();
        for layout in table.layouts() {
            let mut name = layout.name.clone();
            if schema.stream_index(&name).is_some() {
                name = format!("{name}_{}", layout.type_id);
            }
            let mut stream = StreamDesc::new(name, time_signal(), TimeBase::MICROSECONDS);
            stream.signals.extend(layout.signals());
            stream
                .metadata
                .insert("type_id".into(), layout.type_id.to_string());
            stream
                .metadata
                .insert("payload_bytes".into(), layout.size().to_string());
            stream_of_type[usize::from(layout.type_id)] = schema.streams.len() as u32;
            schema.streams.push(stream);
            layouts.push(layout.clone());
        }
        let unknown_stream = schema.streams.len();
        let mut unknown = StreamDesc::new(UNKNOWN_STREAM, time_signal(), TimeBase::MICROSECONDS);
        unknown
            .signals
            .push(SignalDesc::scalar("type_id", DType::U16));
        unknown
            .signals
            .push(SignalDesc::scalar("payload", DType::Bytes));
        schema.streams.push(unknown);
        let events = events.map(|file| {
            let mut s = StreamDesc::new(EVENTS_STREAM, time_signal(), TimeBase::MICROSECONDS);
            s.signals.push(SignalDesc::scalar("type", DType::Str));
            s.signals.push(SignalDesc::scalar("json", DType::Str));
            schema.streams.push(s);
            EventLog::new(
                file,
                schema.streams.len() - 1,
                meta.and_then(Meta::event_count),
            )
        });

        let records_expected = meta
            .map(Meta::record_counts)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, n)| Some((layouts.iter().position(|l| l.name == name)?, n)))
            .collect();
        Ok(UsvlogRecording {
            records_seen: vec![0; layouts.len()],
            records_expected,
            reader,
            header,
            schema,
            decoder: RowDecoder::new(
                layouts.iter().map(RecordLayout::compile).collect(),
                unknown_stream,
            ),
            layouts,
            stream_of_type,
            events,
            strict: options.strict,
            unknown_counts: BTreeMap::new(),
            long_payload_warned: HashSet::new(),
            total_bytes: None,
            records_done: false,
            path: None,
            decode_threads: options
                .threads
                .map_or_else(default_decode_threads, |n| n.min(MAX_DECODE_THREADS)),
            block_bytes: DEFAULT_BLOCK_BYTES,
            resync: options.resync,
            pipeline: None,
            times_only_set: None,
            gathered: Gathered::default(),
            seek: None,
        })
    }

    /// The next record's row (true), or false when the records end. On the batch path with
    /// decoding threads ([`Self::set_decode_threads`]) a call appends whole decoded blocks
    /// until a batch is full; rows framed ahead by it are handed out first on the row path.
    fn next_records(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        if let Some(dst) = row.batch_set()
            && self.use_pipeline(dst)
            && let Some(dst) = row.batch_set_mut()
        {
            return self.pipelined_batches(dst);
        }
        if let Some(p) = self.pipeline.as_mut()
            && p.holds_rows()
        {
            if p.next_row(row)? {
                return Ok(true);
            }
            if p.ended()? {
                return Ok(false);
            }
        }
        if row.batch_set().is_some() {
            return self.gather_record_rows(row);
        }
        self.next_record_row(row)
    }

    /// The batch path on the caller's thread: frames chunks of records, gathering each
    /// stream's records, and writes them as runs, column by column, until a wanted stream's
    /// batch is full (true) or the records end (false). Same rows, checks and integrity notes
    /// as record by record; the rows framed before an error are written before it is raised.
    fn gather_record_rows(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        let mut gathered = std::mem::take(&mut self.gathered);
        let result = loop {
            let Some(dst) = row.batch_set() else {
                break Ok(false);
            };
            gathered.prepare(dst);
            let framed = self.gather_chunk(&mut gathered, row);
            let written = gathered.flush(&self.decoder, row).map_err(Error::from);
            match framed.and_then(|chunk| written.map(|()| chunk)) {
                Ok(Chunk::End) => break Ok(false),
                Ok(Chunk::Full) => break Ok(true),
                Ok(Chunk::More) if !row.has_room() => break Ok(true),
                Ok(Chunk::More) => {}
                Err(e) => break Err(e),
            }
        };
        self.gathered = gathered;
        result
    }

    /// Frames up to [`GATHER_RECORDS`] records into `gathered` (a record of no layout is
    /// written to `row` at once), with every check and integrity note of
    /// [`Self::next_record_row`].
    fn gather_chunk(&mut self, gathered: &mut Gathered, row: &mut RowWriter<'_>) -> Result<Chunk> {
        for _ in 0..GATHER_RECORDS {
            let record = next_record!(self.reader, Ok(Chunk::End));
            let stream = self.stream_of_type[usize::from(record.type_id)] as usize;
            if stream == u32::MAX as usize {
                *self.unknown_counts.entry(record.type_id).or_default() += 1;
                let unknown = self.decoder.unknown_stream();
                self.decoder.write_row(unknown, &record, row)?;
                if !row.has_room() {
                    return Ok(Chunk::Full);
                }
                continue;
            }
            self.records_seen[stream] += 1;
            let (expected, found) = (self.decoder.payload_size(stream), record.payload.len());
            let full = match record.payload.get(..expected) {
                Some(payload) => gathered.push(stream, record.t_us, payload),
                None => false,
            };
            if found != expected {
                let (offset, type_id) = (record.offset, record.type_id);
                self.payload_length_mismatch(offset, type_id, stream, expected, found)?;
            }
            if full {
                return Ok(Chunk::Full);
            }
        }
        Ok(Chunk::More)
    }

    /// The low-level reader underneath.
    pub fn get_ref(&self) -> &Reader<R> {
        &self.reader
    }

    /// The row view: reads records until one yields a row (written to `row`): true, or false
    /// at the end of the records. (Were it given batches, it would go on while they have
    /// room, [`RowWriter::has_room`]; the batch path gathers runs instead,
    /// [`Self::gather_record_rows`].)
    #[inline]
    fn next_record_row(&mut self, row: &mut RowWriter<'_>) -> Result<bool> {
        loop {
            let record = next_record!(self.reader, Ok(false));
            let stream = self.stream_of_type[usize::from(record.type_id)] as usize;
            if stream == u32::MAX as usize {
                *self.unknown_counts.entry(record.type_id).or_default() += 1;
                let unknown = self.decoder.unknown_stream();
                self.decoder.write_row(unknown, &record, row)?;
                if !row.has_room() {
                    return Ok(true);
                }
                continue;
            }
            self.records_seen[stream] += 1;
            let (expected, found) = (self.decoder.payload_size(stream), record.payload.len());
            if found >= expected {
                self.decoder.write_row(stream, &record, row)?;
                if found == expected {
                    if !row.has_room() {
                        return Ok(true);
                    }
                    continue;
                }
            }
            let (offset, type_id) = (record.offset, record.type_id);
            if self.payload_length_mismatch(offset, type_id, stream, expected, found)?
                && !row.has_room()
            {
                return Ok(true);
            }
        }
    }

    /// A payload whose length disagrees with its layout: an error when strict; a short one is
    /// skipped as corrupt (false), a long one is kept with its extra bytes ignored (true),
    /// warned about once per record type.
    fn payload_length_mismatch(
        &mut self,
        offset: u64,
        type_id: u16,
        stream: usize,
        expected: usize,
        found: usize,
    ) -> Result<bool> {
        let mismatch = Error::PayloadLength {
            offset,
            type_id,
            name: self.layouts[stream].name.clone(),
            expected,
            found,
        };
        if self.strict {
            return Err(mismatch);
        }
        if found < expected {
            let lost = (found + crate::record::RECORD_HEADER_LEN) as u64;
            self.reader
                .integrity_mut()
                .skip_corrupt(offset, lost, &mismatch.to_string());
            return Ok(false);
        }
        if self.long_payload_warned.insert(type_id) {
            self.reader.integrity_mut().warn(format!(
                "{mismatch}; extra bytes ignored (further ones not reported)"
            ));
        }
        Ok(true)
    }

    /// A record-file result as the generic one, its error naming the record file when known.
    fn in_records<T>(&self, result: Result<T>) -> recfmt_core::Result<T> {
        let result = result.map_err(recfmt_core::Error::from);
        match &self.path {
            Some(path) => result.map_err(|e| e.in_file(path)),
            None => result,
        }
    }

    /// Called once when the records end: notes the unknown record types kept, and compares
    /// the records found with the counts `meta.json` gives: fewer means the file was cut at a
    /// record boundary, which only those counts can tell (an error when strict).
    fn finish_records(&mut self) -> Result<()> {
        self.records_done = true;
        let counts = std::mem::take(&mut self.unknown_counts);
        for (type_id, n) in counts {
            self.reader.integrity_mut().warn(format!(
                "{n} records of unknown type {type_id} kept as raw bytes in {UNKNOWN_STREAM}"
            ));
        }
        let end = self.reader.position();
        for &(stream, expected) in &self.records_expected {
            let seen = self.records_seen[stream];
            if seen >= expected {
                continue;
            }
            let name = &self.layouts[stream].name;
            let missing = format!(
                "meta.json counts {expected} {name} records but timeseries.bin ends at byte \
                 {end} after {seen}: {} records lost",
                expected - seen
            );
            if self.strict {
                return Err(Error::Core(recfmt_core::Error::malformed(
                    crate::FORMAT_ID,
                    end,
                    format!(
                        "{} more {name} records (meta.json counts {expected})",
                        expected - seen
                    ),
                )));
            }
            let integrity = self.reader.integrity_mut();
            if !integrity.lost_data() {
                integrity.truncate(end, 0);
            }
            integrity.warn(missing);
        }
        Ok(())
    }
}

impl<R: Read + Send> RecordingReader for UsvlogRecording<R> {
    fn format(&self) -> &'static FormatInfo {
        &INFO
    }

    fn header(&self) -> &Header {
        &self.header
    }

    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn read_row(&mut self, row: &mut RowWriter<'_>) -> recfmt_core::Result<bool> {
        if !self.records_done {
            let next = self.next_records(row);
            if self.in_records(next)? {
                return Ok(true);
            }
            let finished = self.finish_records();
            self.in_records(finished)?;
        }
        let Some(events) = self.events.as_mut() else {
            return Ok(false);
        };
        let event = events
            .next_row(row, self.reader.integrity_mut(), self.strict)
            .map_err(recfmt_core::Error::from);
        match (&self.path, event) {
            (Some(path), Err(e)) => Err(e.in_file(path.with_file_name("events.jsonl"))),
            (_, event) => event,
        }
    }

    fn integrity(&self) -> &Integrity {
        self.reader.integrity()
    }

    fn progress(&self) -> (u64, Option<u64>) {
        (self.reader.position(), self.total_bytes)
    }

    /// Searches the records for the time on sources opened seekable
    /// ([`UsvlogRecording::open`], [`UsvlogRecording::new_seekable`]); see
    /// `UsvlogRecording::seek_records`. `events.jsonl` is still read whole. The record
    /// counts of `meta.json` are no longer compared, as the records before the start are not
    /// read.
    fn seek_time(&mut self, seconds: f64) -> recfmt_core::Result<bool> {
        let Some(seek) = self.seek else {
            return Ok(false);
        };
        if seconds.is_nan() || self.pipeline.is_some() || self.records_done {
            return Ok(false);
        }
        // Records earlier than this are surely before `seconds` (µs as seconds round).
        let target_us = ((seconds * 1e6).floor() as u64).saturating_sub(1);
        if target_us == 0 {
            return Ok(false);
        }
        let sought = seek(self, target_us);
        self.in_records(sought)?;
        self.records_expected.clear();
        Ok(true)
    }

    /// Ends the records at the first one at least `seconds` late, assuming them in time
    /// order (as the search of [`RecordingReader::seek_time`] does); `events.jsonl` is still
    /// read whole.
    fn stop_time(&mut self, seconds: f64) -> bool {
        if seconds.is_nan() || self.pipeline.is_some() {
            return false;
        }
        // Records earlier than this may still be before `seconds`: the caller filters them.
        let stop_us = ((seconds * 1e6).ceil() as u64).saturating_add(2);
        self.reader.set_stop_us(stop_us);
        self.records_expected.clear();
        true
    }
}
