//! The low-level reader: the header, then every record, raw or decoded, in file order.

use std::io::Read;

use prost::Message;
use recfmt_core::{Integrity, Limits, ReadOptions};

use crate::error::{Error, Result};
use crate::header::{
    FileKind, HEADER_LEN, MAGIC, RECORD_HEADER_LEN, Version, VersionPolicy, parse_record_header,
    sniff_v1,
};
use crate::proto::{FrameData, GetFrameResponse, StateUpdate};
use crate::report::{Finding, FindingKind, NanoverVerdict, Severity};

mod framed;
mod resync;
mod seek;

/// NanoVer's checker flags a record that comes this long (120 s) or longer after the previous.
pub const NANOVER_MAX_INTERVAL_US: u128 = 120_000_000;
/// While resynchronising, a candidate record must come less than this long (24 h) after the
/// last good record.
pub const RESYNC_WINDOW_US: u128 = 86_400_000_000;

const RH: usize = RECORD_HEADER_LEN;
const MIN_BUF: usize = 1 << 16;
const MAX_FINDINGS: usize = 10_000;
/// Bytes looked at to decide whether a headerless file is version 1.
const SNIFF_LEN: usize = 4096;

/// One raw record.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Record {
    /// Byte offset of the record header in the file.
    pub offset: u64,
    /// Timestamp: microseconds since the recorder started (`u128` on disk).
    pub timestamp: u128,
    /// The protobuf payload (may be empty: an empty message).
    pub payload: Vec<u8>,
}

/// A decoded message with the timestamp of its record (microseconds since the recorder
/// started, `u128` on disk).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Timed<T> {
    /// The record's timestamp.
    pub timestamp: u128,
    /// The decoded message.
    pub message: T,
}

/// Reads a `.traj` or `.state` record by record with memory bounded by the largest record.
///
/// By default the reader is lenient: a torn last record (or a length field pointing past the
/// end of the file) ends the records, and every complete record before it is kept; the lost
/// bytes are reported in [`Reader::integrity`] and as [`Finding`]s. Timestamps that do not
/// increase are reported, not dropped. With [`Reader::set_resync`], a record header that does
/// not fit is treated as garbage: the reader scans forward one byte at a time, as NanoVer's
/// `nanover-check-recording` does, but accepts a candidate only when its timestamp is
/// plausible, its payload decodes and the record after it fits too. In strict mode, torn
/// records, undecodable payloads and out-of-order timestamps are errors.
///
/// ```
/// use recfmt_nanover::{FileKind, GetFrameResponse, FrameData, io::{Reader, Timed, Writer}};
/// let mut w = Writer::new(Vec::new(), FileKind::Trajectory, recfmt_nanover::Version::V2)?;
/// w.write_frame(5, &GetFrameResponse::new(0, FrameData::default()))?;
/// let mut bytes = w.finish()?;
/// bytes.extend_from_slice(&[1, 2, 3]); // a torn record header
///
/// let mut r = Reader::new(&bytes[..], FileKind::Trajectory);
/// let mut frame = Timed::default();
/// assert!(r.read_frame(&mut frame)?);
/// assert_eq!((frame.timestamp, frame.message.frame_index), (5, 0));
/// assert!(!r.read_frame(&mut frame)?);
/// assert_eq!(r.integrity().bytes_lost, 3);
///
/// // Or as an iterator:
/// let mut r = Reader::new(&bytes[..], FileKind::Trajectory);
/// let times: Vec<u128> = r.frames().map(|f| f.map(|f| f.timestamp)).collect::<Result<_, _>>()?;
/// assert_eq!(times, [5]);
/// # Ok::<(), recfmt_nanover::Error>(())
/// ```
#[derive(Debug)]
pub struct Reader<R> {
    inner: R,
    kind: FileKind,
    label: String,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    offset: u64,
    eof: bool,
    total_len: Option<u64>,
    limits: Limits,
    strict: bool,
    resync: bool,
    policy: VersionPolicy,
    version: Option<Version>,
    last_ts: Option<u128>,
    records: u64,
    decoded: u64,
    done: bool,
    integrity: Integrity,
    findings: Vec<Finding>,
    findings_over: u64,
    /// The last timestamp finding and the record it was about, to merge runs.
    ts_run: Option<(usize, u64)>,
    scratch: Record,
    last_offset: u64,
    /// Bytes read from the source at a time beyond what is needed: all the buffer holds,
    /// or little when records are framed without reading their arrays (`framed.rs`).
    read_ahead: usize,
}

impl<R: Read> Reader<R> {
    /// Wraps a byte source holding a file of `kind`. Reading is buffered internally.
    pub fn new(inner: R, kind: FileKind) -> Self {
        Reader {
            inner,
            kind,
            label: kind.extension().to_string(),
            buf: Vec::new(),
            pos: 0,
            end: 0,
            offset: 0,
            eof: false,
            total_len: None,
            limits: Limits::default(),
            strict: false,
            resync: false,
            policy: VersionPolicy::Auto,
            version: None,
            last_ts: None,
            records: 0,
            decoded: 0,
            done: false,
            integrity: Integrity::default(),
            findings: Vec::new(),
            findings_over: 0,
            ts_run: None,
            scratch: Record::default(),
            last_offset: 0,
            read_ahead: usize::MAX,
        }
    }

    /// Applies the shared read options: limits, strict and resync.
    pub fn with_options(mut self, options: &ReadOptions) -> Self {
        self.limits = options.limits;
        self.strict = options.strict;
        self.resync = options.resync;
        self
    }

    /// Sets the size limits (the record length is checked before any allocation).
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Makes torn records, undecodable payloads and out-of-order timestamps errors.
    pub fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }

    /// Enables resynchronisation after a record header that does not fit (see the type docs).
    pub fn set_resync(&mut self, resync: bool) {
        self.resync = resync;
    }

    /// Chooses which versions are accepted (default: [`VersionPolicy::Auto`]).
    pub fn set_version_policy(&mut self, policy: VersionPolicy) {
        self.policy = policy;
    }

    /// Tells the reader the file length, so a length field pointing past the end is known
    /// at once (without reading) and a length above the limit is a torn tail, not an error.
    pub fn set_total_len(&mut self, len: Option<u64>) {
        self.total_len = len;
    }

    /// Names the file in warnings (default: the kind's extension).
    pub fn set_label(&mut self, label: impl Into<String>) {
        self.label = label.into();
    }

    /// The kind of file this reader reads.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// The version, once the header has been read.
    pub fn version(&self) -> Option<Version> {
        self.version
    }

    /// Byte offset of the next unread byte.
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// Records returned so far by [`Reader::read_record`] (including, through the decoding
    /// helpers, ones whose payload then failed to decode).
    pub fn records(&self) -> u64 {
        self.records
    }

    /// What was lost so far.
    pub fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    /// Mutable access for layers above that find more problems.
    pub fn integrity_mut(&mut self) -> &mut Integrity {
        &mut self.integrity
    }

    /// Structured findings so far (framing, payloads, timestamps), in file order.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// Takes the findings collected so far.
    pub fn take_findings(&mut self) -> Vec<Finding> {
        self.ts_run = None;
        if self.findings_over > 0 {
            let over = self.findings_over;
            self.findings_over = 0;
            let mut f = std::mem::take(&mut self.findings);
            f.push(Finding {
                count: over,
                ..Finding::new(
                    Severity::Warning,
                    FindingKind::TooManyFindings,
                    NanoverVerdict::NotApplicable,
                    format!("{over} further findings not listed"),
                )
            });
            return f;
        }
        std::mem::take(&mut self.findings)
    }

    /// Byte offset of the last record returned (raw or decoded).
    pub fn last_record_offset(&self) -> u64 {
        self.last_offset
    }

    /// Messages decoded so far by [`Reader::read_frame`] / [`Reader::read_state`].
    pub fn decoded(&self) -> u64 {
        self.decoded
    }

    /// Timestamp of the last record accepted in order.
    pub fn last_timestamp(&self) -> Option<u128> {
        self.last_ts
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Unwraps the source (buffered bytes are lost).
    pub fn into_inner(self) -> R {
        self.inner
    }

    fn push_finding(&mut self, finding: Finding) {
        if self.findings.len() < MAX_FINDINGS {
            self.findings.push(finding);
        } else {
            self.findings_over += 1;
        }
    }

    /// Makes at least `n` bytes available unless the input ends first; returns what is
    /// available. `n` must have been checked against the limits.
    fn fill(&mut self, n: usize) -> Result<usize> {
        if self.end - self.pos >= n || self.eof {
            return Ok(self.end - self.pos);
        }
        if self.pos + n > self.buf.len() {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            if self.buf.len() < n {
                self.buf.resize(n.max(MIN_BUF), 0);
            }
        }
        let stop = self
            .buf
            .len()
            .min(self.pos.saturating_add(n.max(self.read_ahead)));
        while self.end - self.pos < n {
            match self.inner.read(&mut self.buf[self.end..stop]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(self.end - self.pos)
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
        self.offset += n as u64;
    }

    fn peek_header(&self, at: usize) -> (u128, u64) {
        let mut h = [0; RH];
        h.copy_from_slice(&self.buf[self.pos + at..self.pos + at + RH]);
        parse_record_header(&h)
    }

    /// Reads the header (version 2) or decides the file is version 1, per the policy.
    /// Called by the record readers when needed; calling it again returns the same version.
    pub fn read_header(&mut self) -> Result<Version> {
        if let Some(v) = self.version {
            return Ok(v);
        }
        let avail = self.fill(SNIFF_LEN)?;
        let head = &self.buf[self.pos..self.pos + avail];
        let magic = MAGIC.to_le_bytes();
        let has_magic = avail >= 8 && head[..8] == magic;
        let magic_prefix = head.len() < 8 && magic.starts_with(head);
        let version = match self.policy {
            VersionPolicy::V1 => Version::V1,
            VersionPolicy::V2 | VersionPolicy::Auto if has_magic => {
                if avail < HEADER_LEN {
                    return Err(Error::ShortHeader {
                        found: avail as u64,
                    });
                }
                let mut v = [0; 8];
                v.copy_from_slice(&head[8..16]);
                let found = u64::from_le_bytes(v);
                if found != crate::FORMAT_VERSION {
                    return Err(Error::UnsupportedVersion { found });
                }
                self.consume(HEADER_LEN);
                Version::V2
            }
            VersionPolicy::Auto if !magic_prefix && sniff_v1(head, self.kind, self.eof) => {
                Version::V1
            }
            _ if magic_prefix => {
                return Err(Error::ShortHeader {
                    found: avail as u64,
                });
            }
            _ => {
                return Err(Error::BadMagic {
                    expected: MAGIC,
                    found: head[..avail.min(8)].to_vec(),
                });
            }
        };
        self.version = Some(version);
        Ok(version)
    }

    fn version_or_header(&mut self) -> Result<Version> {
        match self.version {
            Some(v) => Ok(v),
            None => self.read_header(),
        }
    }

    /// Reads the next record into `record`, reusing its payload buffer. Returns `Ok(false)` at
    /// the end of the records (a torn tail ends them too, unless strict).
    pub fn read_record(&mut self, record: &mut Record) -> Result<bool> {
        let version = self.version_or_header()?;
        loop {
            let Some((ts, len)) = self.next_header(version)? else {
                return Ok(false);
            };
            let needed = RH as u128 + u128::from(len);
            // Checked against the limit by `next_header`, so this fits in memory.
            let need = RH + len as usize;
            let avail = self.fill(need + RH)?;
            if avail < need {
                if self.resync {
                    if self.resync_forward(version, Some(needed))? {
                        continue;
                    }
                    return Ok(false);
                }
                return self.torn(FindingKind::PayloadPastEnd, needed, avail as u64);
            }
            let next_ts = (avail >= need + RH).then(|| self.peek_header(need).0);
            if self.resync {
                let ts_ok = self.plausible_ts(ts);
                let decodes = self
                    .kind
                    .decodes(version, &self.buf[self.pos + RH..self.pos + need]);
                let accept =
                    (ts_ok && decodes) || ((ts_ok || decodes) && self.chains(need, ts, avail));
                if !accept {
                    if self.resync_forward(version, None)? {
                        continue;
                    }
                    return Ok(false);
                }
            }
            record.offset = self.offset;
            self.last_offset = self.offset;
            record.timestamp = ts;
            record.payload.clear();
            record
                .payload
                .extend_from_slice(&self.buf[self.pos + RH..self.pos + need]);
            self.check_timestamp(ts, next_ts, self.offset)?;
            self.consume(need);
            self.records += 1;
            return Ok(true);
        }
    }

    /// The timestamp and payload length of the next record header that fits (within the
    /// limits and, when the file length is known, the file), with the cursor on it; `None`
    /// at the end of the records. A header that does not fit ends the records as a torn
    /// tail, or is resynchronised past.
    fn next_header(&mut self, version: Version) -> Result<Option<(u128, u64)>> {
        loop {
            if self.done {
                return Ok(None);
            }
            let avail = self.fill(RH)?;
            if avail == 0 {
                self.done = true;
                return Ok(None);
            }
            if avail < RH {
                self.torn(FindingKind::TornRecordHeader, RH as u128, avail as u64)?;
                return Ok(None);
            }
            let (ts, len) = self.peek_header(0);
            let needed = RH as u128 + u128::from(len);
            let remaining = self.total_len.map(|t| t.saturating_sub(self.offset));
            let past_end = remaining.is_some_and(|r| needed > u128::from(r));
            let too_large = len > self.limits.max_record_len;
            if past_end || too_large {
                if self.resync {
                    let hint = past_end.then_some(needed);
                    if self.resync_forward(version, hint)? {
                        continue;
                    }
                    return Ok(None);
                }
                if let Some(r) = remaining.filter(|_| past_end) {
                    self.torn(FindingKind::PayloadPastEnd, needed, r)?;
                    return Ok(None);
                }
                return Err(Error::Core(recfmt_core::Error::Limit {
                    what: "nanover record length",
                    value: len,
                    limit: self.limits.max_record_len,
                    offset: self.offset + 16,
                }));
            }
            return Ok(Some((ts, len)));
        }
    }

    /// Checks the timestamp of the record at byte `at` against the last one (`next_ts`: the
    /// record after it, when there is one).
    fn check_timestamp(&mut self, ts: u128, next_ts: Option<u128>, at: u64) -> Result<()> {
        let record = self.records;
        let Some(last) = self.last_ts else {
            self.last_ts = Some(ts);
            return Ok(());
        };
        if ts > last {
            if ts - last >= NANOVER_MAX_INTERVAL_US {
                let mut f = Finding::new(
                    Severity::Warning,
                    FindingKind::TimestampGap,
                    NanoverVerdict::Flags,
                    format!(
                        "{:.1} s after the previous record (NanoVer's checker drops records 120 s or more apart)",
                        (ts - last) as f64 / 1e6
                    ),
                )
                .at(at, 0)
                .record(record);
                f.prev_timestamp = Some(last);
                f.next_timestamp = Some(ts);
                self.push_finding(f);
                self.integrity.warn(format!(
                    "{}: at byte {}: {:.1} s since the previous record (NanoVer's checker flags pauses of 120 s or more)",
                    self.label,
                    at,
                    (ts - last) as f64 / 1e6
                ));
            }
            self.last_ts = Some(ts);
            return Ok(());
        }
        if self.strict {
            return Err(Error::TimestampOrder {
                offset: at,
                previous: last,
                found: ts,
            });
        }
        // Merge a run of consecutive out-of-order records into one finding.
        match self.ts_run {
            Some((i, r)) if r + 1 == record && i < self.findings.len() => {
                self.findings[i].count += 1;
                self.ts_run = Some((i, record));
            }
            _ => {
                let mut f = Finding::new(
                    Severity::Defect,
                    FindingKind::TimestampNotIncreasing,
                    NanoverVerdict::Flags,
                    format!("timestamp {ts} us is not after the previous {last} us"),
                )
                .at(at, 0)
                .record(record);
                f.prev_timestamp = Some(last);
                f.next_timestamp = next_ts;
                self.integrity.warn(format!(
                    "{}: at byte {}: timestamp {ts} us is not after the previous {last} us",
                    self.label, at
                ));
                self.push_finding(f);
                if self.findings.len() <= MAX_FINDINGS {
                    self.ts_run = Some((self.findings.len() - 1, record));
                }
            }
        }
        // A step back (the next record follows this one but not the last good one) moves the
        // reference; a lone outlier does not.
        if next_ts.is_some_and(|n| n > ts && n <= last) {
            self.last_ts = Some(ts);
        }
        Ok(())
    }

    /// Ends the records at a torn tail: reports it, or fails in strict mode.
    fn torn(&mut self, kind: FindingKind, needed: u128, available: u64) -> Result<bool> {
        let offset = self.offset;
        if self.strict {
            return Err(Error::Truncated {
                offset,
                needed,
                available,
            });
        }
        self.report_torn(offset, kind, needed, available);
        let buffered = (self.end - self.pos).min(usize::try_from(available).unwrap_or(usize::MAX));
        self.pos += buffered;
        self.offset += available;
        self.done = true;
        Ok(false)
    }

    /// Reports a record at `offset` of which only `available` of `needed` bytes exist.
    fn report_torn(&mut self, offset: u64, kind: FindingKind, needed: u128, available: u64) {
        let missing = needed.saturating_sub(u128::from(available));
        let (what, nanover) = match kind {
            FindingKind::TornRecordHeader => (
                format!("file ends inside a record header ({available} of 24 bytes)"),
                NanoverVerdict::Misses,
            ),
            _ => (
                format!(
                    "record needs {needed} bytes, file ends after {available} ({missing} missing)"
                ),
                // NanoVer's bounds check leaves out the 24-byte record header.
                if missing < RH as u128 {
                    NanoverVerdict::Misses
                } else {
                    NanoverVerdict::Crashes
                },
            ),
        };
        let mut f =
            Finding::new(Severity::Defect, kind, nanover, what.clone()).at(offset, available);
        f.prev_timestamp = self.last_ts;
        self.push_finding(f);
        self.integrity.truncate(offset, available);
        self.integrity.warn(format!(
            "{}: at byte {offset}: {what}; record dropped",
            self.label
        ));
    }

    fn corrupt(&mut self, e: prost::DecodeError, version: Version, record: &Record) -> Result<()> {
        let offset = record.offset;
        let message = self.kind.message_name(version);
        if self.strict {
            return Err(Error::Decode {
                offset,
                message,
                source: e,
            });
        }
        let bytes = (RH + record.payload.len()) as u64;
        let mut f = Finding::new(
            Severity::Defect,
            FindingKind::CorruptPayload,
            NanoverVerdict::Misses,
            format!("payload is not a valid {message}: {e}"),
        )
        .at(offset, bytes)
        .record(self.records - 1);
        f.prev_timestamp = Some(record.timestamp);
        self.push_finding(f);
        self.integrity.skip_corrupt(
            offset,
            bytes,
            &format!("{}: payload is not a valid {message}: {e}", self.label),
        );
        Ok(())
    }

    /// Reads and decodes the next frame of a `.traj`. A version-1 `FrameData` comes back
    /// wrapped in a `GetFrameResponse` whose `frame_index` is its ordinal among the decoded
    /// frames (so only the first one resets). Undecodable payloads are skipped and reported
    /// (errors in strict mode).
    /// `false` at the end.
    pub fn read_frame(&mut self, frame: &mut Timed<GetFrameResponse>) -> Result<bool> {
        if self.kind != FileKind::Trajectory {
            return Err(Error::Core(recfmt_core::Error::invalid(
                "read_frame called on a .state reader",
            )));
        }
        let version = self.version_or_header()?;
        let mut record = std::mem::take(&mut self.scratch);
        let out = loop {
            if !self.read_record(&mut record)? {
                break false;
            }
            let decoded = match version {
                Version::V2 => GetFrameResponse::decode(&record.payload[..]),
                Version::V1 => {
                    FrameData::decode(&record.payload[..]).map(|frame| GetFrameResponse {
                        frame_index: u32::try_from(self.decoded).unwrap_or(u32::MAX),
                        frame: Some(frame),
                    })
                }
            };
            match decoded {
                Ok(m) => {
                    self.decoded += 1;
                    frame.timestamp = record.timestamp;
                    frame.message = m;
                    break true;
                }
                Err(e) => {
                    if let Err(err) = self.corrupt(e, version, &record) {
                        self.scratch = record;
                        return Err(err);
                    }
                }
            }
        };
        self.scratch = record;
        Ok(out)
    }

    /// Reads and decodes the next update of a `.state`. Undecodable payloads are skipped and
    /// reported (errors in strict mode).
    /// `false` at the end.
    pub fn read_state(&mut self, update: &mut Timed<StateUpdate>) -> Result<bool> {
        if self.kind != FileKind::State {
            return Err(Error::Core(recfmt_core::Error::invalid(
                "read_state called on a .traj reader",
            )));
        }
        let version = self.version_or_header()?;
        let mut record = std::mem::take(&mut self.scratch);
        let out = loop {
            if !self.read_record(&mut record)? {
                break false;
            }
            match StateUpdate::decode(&record.payload[..]) {
                Ok(m) => {
                    self.decoded += 1;
                    update.timestamp = record.timestamp;
                    update.message = m;
                    break true;
                }
                Err(e) => {
                    if let Err(err) = self.corrupt(e, version, &record) {
                        self.scratch = record;
                        return Err(err);
                    }
                }
            }
        };
        self.scratch = record;
        Ok(out)
    }

    /// The frames left in a `.traj`, each decoded ([`Reader::read_frame`]); an error ends
    /// the iteration.
    pub fn frames(&mut self) -> Messages<'_, R, GetFrameResponse> {
        Messages::new(self, Reader::read_frame)
    }

    /// The updates left in a `.state`, each decoded ([`Reader::read_state`]); an error ends
    /// the iteration.
    pub fn updates(&mut self) -> Messages<'_, R, StateUpdate> {
        Messages::new(self, Reader::read_state)
    }
}

/// The decoded messages of a [`Reader`]: [`Reader::frames`] or [`Reader::updates`].
pub struct Messages<'a, R, T> {
    reader: &'a mut Reader<R>,
    read: fn(&mut Reader<R>, &mut Timed<T>) -> Result<bool>,
    failed: bool,
}

impl<'a, R, T> Messages<'a, R, T> {
    fn new(
        reader: &'a mut Reader<R>,
        read: fn(&mut Reader<R>, &mut Timed<T>) -> Result<bool>,
    ) -> Self {
        Messages {
            reader,
            read,
            failed: false,
        }
    }
}

impl<R, T> std::fmt::Debug for Messages<'_, R, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messages")
            .field("failed", &self.failed)
            .finish()
    }
}

impl<R, T: Default> Iterator for Messages<'_, R, T> {
    type Item = Result<Timed<T>>;

    fn next(&mut self) -> Option<Self::Item> {
        recfmt_core::next_read(&mut self.failed, |message| {
            (self.read)(self.reader, message)
        })
    }
}
