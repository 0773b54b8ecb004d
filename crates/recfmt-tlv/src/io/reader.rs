//! The low-level `timeseries.bin` reader: every record, raw, in file order.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};

use recfmt_core::Integrity;

use crate::error::{Error, Result};
use crate::header::{FileHeader, HEADER_LEN};
use crate::record::{RECORD_HEADER_LEN, Record, RecordHeader, RecordRef};

/// Largest record on disk: a 12-byte header and a payload of at most `u16::MAX` bytes.
const MAX_RECORD: usize = RECORD_HEADER_LEN + u16::MAX as usize;
/// Two records must fit so that resync can look one record ahead.
const BUF_CAPACITY: usize = 4 * MAX_RECORD;
/// A resync candidate's time must lie within this many microseconds after the last good record.
const RESYNC_WINDOW_US: u64 = 3_600_000_000;
/// Records in a row that must look right for [`Reader::sync_forward`] to take a byte offset
/// for a record start (fewer when the file ends after them).
const SYNC_CHAIN: usize = 3;

/// Reads `timeseries.bin` record by record with constant memory.
///
/// A torn last record does not fail the read: every complete record is returned, the lost
/// bytes are reported in [`Reader::integrity`] and kept in [`Reader::trailing_bytes`] (so a
/// writer can reproduce the file exactly). In strict mode the torn record is an error instead.
///
/// ```
/// use recfmt_tlv::{FileHeader, Record, io::{Reader, Writer}};
/// let mut w = Writer::new(Vec::new());
/// w.write_header(&FileHeader::new(1, 5))?;
/// w.write_record(&Record { t_us: 5, type_id: 4, payload: vec![0; 8], offset: 0 })?;
/// let bytes = w.into_inner()?;
///
/// let mut r = Reader::new(&bytes[..]);
/// assert_eq!(r.read_header()?.t0_us, 5);
/// let mut record = Record::default();
/// assert!(r.read_record(&mut record)?);
/// assert_eq!((record.type_id, record.offset), (4, 32));
/// assert!(!r.read_record(&mut record)?);
/// # Ok::<(), recfmt_tlv::Error>(())
/// ```
#[derive(Debug)]
pub struct Reader<R> {
    inner: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// File offset of `buf[pos]`.
    offset: u64,
    eof: bool,
    strict: bool,
    resync: Option<BTreeMap<u16, usize>>,
    last_t: Option<u64>,
    trailing: Vec<u8>,
    integrity: Integrity,
    non_monotonic: u64,
    /// The records end at the first one this late ([`Reader::set_stop_us`]).
    stop_us: u64,
}

impl<R: Read> Reader<R> {
    /// Wraps a byte source. Reading is buffered internally; `R` need not be buffered.
    pub fn new(inner: R) -> Self {
        Reader {
            inner,
            buf: vec![0; BUF_CAPACITY].into_boxed_slice(),
            pos: 0,
            end: 0,
            offset: 0,
            eof: false,
            strict: false,
            resync: None,
            last_t: None,
            trailing: Vec::new(),
            integrity: Integrity::default(),
            non_monotonic: 0,
            stop_us: u64::MAX,
        }
    }

    /// Makes a torn record an error instead of a reported loss.
    pub fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }

    /// Enables resync after a corrupt length field: `expected` maps known type ids to their
    /// payload sizes. A record whose header is implausible (a known type with the wrong length,
    /// or a time outside the window after the previous record) makes the reader scan forward one
    /// byte at a time for two plausible records in a row; the bytes skipped are reported.
    pub fn set_resync(&mut self, expected: Option<BTreeMap<u16, usize>>) {
        self.resync = expected;
    }

    /// Ends the records at the first one whose `t_us` is `t_us` or later, for a caller that
    /// wants nothing from that time on and knows the records are in time order. In resync
    /// mode an implausible header is resynchronised over first, so garbage does not end them.
    pub fn set_stop_us(&mut self, t_us: u64) {
        self.stop_us = t_us;
    }

    /// Byte offset of the next unread byte.
    pub fn position(&self) -> u64 {
        self.offset
    }

    /// What was lost so far.
    pub fn integrity(&self) -> &Integrity {
        &self.integrity
    }

    /// Mutable access for layers above that find more problems.
    pub fn integrity_mut(&mut self) -> &mut Integrity {
        &mut self.integrity
    }

    /// The bytes of a torn last record, once the end has been reached.
    pub fn trailing_bytes(&self) -> &[u8] {
        &self.trailing
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Unwraps the source (buffered bytes are lost).
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Makes at least `n` bytes available unless the input ends first; returns what is available.
    #[inline]
    fn fill(&mut self, n: usize) -> Result<usize> {
        debug_assert!(n <= self.buf.len());
        if self.end - self.pos >= n || self.eof {
            return Ok(self.end - self.pos);
        }
        self.refill(n)
    }

    /// The slow half of [`Self::fill`]: moves the unread bytes to the front when `n` would not
    /// fit behind them, then reads. Kept out of line so the per-record check stays small.
    #[cold]
    #[inline(never)]
    fn refill(&mut self, n: usize) -> Result<usize> {
        if self.pos + n > self.buf.len() {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        while self.end - self.pos < n {
            match self.inner.read(&mut self.buf[self.end..]) {
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

    fn peek_header(&self) -> RecordHeader {
        let mut head = [0; RECORD_HEADER_LEN];
        head.copy_from_slice(&self.buf[self.pos..self.pos + RECORD_HEADER_LEN]);
        RecordHeader::parse(&head)
    }

    /// Reads the 32-byte file header.
    pub fn read_header(&mut self) -> Result<FileHeader> {
        let available = self.fill(HEADER_LEN)?;
        let header = FileHeader::parse(&self.buf[self.pos..self.pos + available.min(HEADER_LEN)])?;
        self.consume(HEADER_LEN);
        Ok(header)
    }

    /// Reads the next record into `record`, reusing its payload buffer. Returns false at the
    /// end of the records (a torn tail ends them too).
    pub fn read_record(&mut self, record: &mut Record) -> Result<bool> {
        let Some(r) = self.read_record_ref()? else {
            return Ok(false);
        };
        record.t_us = r.t_us;
        record.type_id = r.type_id;
        record.offset = r.offset;
        record.payload.clear();
        record.payload.extend_from_slice(r.payload);
        Ok(true)
    }

    /// The records left, one [`Record`] each (its own payload); the iterator ends at the end
    /// of the records or after the first error.
    ///
    /// ```
    /// use recfmt_tlv::{FileHeader, Record, io::{Reader, Writer}};
    /// let mut w = Writer::new(Vec::new());
    /// w.write_header(&FileHeader::new(1, 0))?;
    /// for t_us in [10, 20] {
    ///     w.write_record(&Record { t_us, type_id: 99, payload: vec![1, 2], offset: 0 })?;
    /// }
    /// let bytes = w.into_inner()?;
    /// let mut r = Reader::new(&bytes[..]);
    /// r.read_header()?;
    /// let times: Vec<u64> = r.records().map(|rec| rec.map(|rec| rec.t_us)).collect::<Result<_, _>>()?;
    /// assert_eq!(times, [10, 20]);
    /// # Ok::<(), recfmt_tlv::Error>(())
    /// ```
    pub fn records(&mut self) -> Records<'_, R> {
        Records {
            reader: self,
            done: false,
        }
    }

    /// Reads the next record without copying it: the payload borrows the reader's buffer until
    /// the next call. `None` at the end of the records (a torn tail ends them too).
    #[inline(always)]
    pub fn read_record_ref(&mut self) -> Result<Option<RecordRef<'_>>> {
        if self.has_buffered_record() {
            return Ok(Some(self.take_buffered_record()));
        }
        self.read_record_ref_slow()
    }

    /// The common case of [`Self::read_record_ref`], small enough to inline into decode
    /// loops: a whole record is already buffered, before the stop time, and no resync check
    /// applies; [`Self::take_buffered_record`] takes it. Everything else takes the full path.
    /// (A loop that tests this and then takes the record keeps the record in registers,
    /// where a `Result<Option<_>>` went through the stack at a cost of a quarter of a
    /// times-only scan.)
    #[inline(always)]
    pub(crate) fn has_buffered_record(&self) -> bool {
        if self.resync.is_some() || self.end - self.pos < RECORD_HEADER_LEN {
            return false;
        }
        let header = self.peek_header();
        self.end - self.pos >= RECORD_HEADER_LEN + usize::from(header.len)
            && header.t_us < self.stop_us
    }

    /// Takes the record [`Self::has_buffered_record`] found.
    #[inline(always)]
    pub(crate) fn take_buffered_record(&mut self) -> RecordRef<'_> {
        let header = self.peek_header();
        let total = RECORD_HEADER_LEN + usize::from(header.len);
        self.take_record(header, total)
    }

    /// Appends to `dst` the records from here on, read from the source straight into it (no
    /// copy through this reader's buffer), while `accept` takes each (given its header and
    /// where it starts in `dst`) and less than `max_bytes` have been appended; returns the
    /// bytes appended, every one of them whole records as they lie in the file. Stops before a
    /// record not wholly read, one at or past the stop time, or one `accept` refuses (which
    /// must then leave no trace of it): those bytes go back to this reader's buffer. Appends
    /// nothing in resync mode, where each header is checked on the full path. Zero says only
    /// that the next record needs [`Self::read_record_ref`].
    pub(crate) fn read_run_into(
        &mut self,
        dst: &mut Vec<u8>,
        max_bytes: usize,
        mut accept: impl FnMut(&RecordHeader, usize) -> bool,
    ) -> Result<usize> {
        if self.resync.is_some() || max_bytes == 0 {
            return Ok(0);
        }
        let base = dst.len();
        let buffered = self.end - self.pos;
        dst.extend_from_slice(&self.buf[self.pos..self.end]);
        (self.pos, self.end) = (0, 0);
        // At most a buffer's worth in all, so that what is left unframed fits back in it.
        let want = max_bytes.min(self.buf.len()).saturating_sub(buffered);
        if want > 0 && !self.eof {
            let read = match (&mut self.inner).take(want as u64).read_to_end(dst) {
                Ok(n) => n,
                Err(e) => {
                    dst.truncate(base + buffered);
                    self.unread(dst, base);
                    return Err(e.into());
                }
            };
            self.eof = read < want;
        }
        let mut at = base;
        let mut last_t = self.last_t;
        while at - base < max_bytes && dst.len() - at >= RECORD_HEADER_LEN {
            let mut head = [0; RECORD_HEADER_LEN];
            head.copy_from_slice(&dst[at..at + RECORD_HEADER_LEN]);
            let header = RecordHeader::parse(&head);
            let total = RECORD_HEADER_LEN + usize::from(header.len);
            if dst.len() - at < total || header.t_us >= self.stop_us || !accept(&header, at) {
                break;
            }
            if let Some(last) = last_t
                && header.t_us < last
            {
                let offset = self.offset + (at - base) as u64;
                self.note_backwards(offset, header.t_us, last);
            }
            last_t = Some(header.t_us);
            at += total;
        }
        self.last_t = last_t;
        self.offset += (at - base) as u64;
        self.unread(dst, at);
        Ok(at - base)
    }

    /// Moves `dst[from..]`, bytes read but not framed, back to the (empty) buffer.
    fn unread(&mut self, dst: &mut Vec<u8>, from: usize) {
        let rest = &dst[from..];
        self.buf[..rest.len()].copy_from_slice(rest);
        (self.pos, self.end) = (0, rest.len());
        dst.truncate(from);
    }

    /// [`Self::read_record_ref`] when the record is not wholly buffered, the input ends, or a
    /// resync check applies.
    #[inline(never)]
    fn read_record_ref_slow(&mut self) -> Result<Option<RecordRef<'_>>> {
        let mut available = self.fill(RECORD_HEADER_LEN)?;
        if available == 0 {
            return Ok(None);
        }
        if available < RECORD_HEADER_LEN {
            self.torn(RECORD_HEADER_LEN as u64, available)?;
            return Ok(None);
        }
        let mut header = self.peek_header();
        if self.resync.is_some() && !self.plausible(&header) {
            if !self.resync_forward()? {
                return Ok(None);
            }
            header = self.peek_header();
        }
        if header.t_us >= self.stop_us {
            // Left unread: every later call stops here again.
            return Ok(None);
        }
        let total = RECORD_HEADER_LEN + usize::from(header.len);
        available = self.fill(total)?;
        if available < total {
            self.torn(total as u64, available)?;
            return Ok(None);
        }
        Ok(Some(self.take_record(header, total)))
    }

    /// Consumes the buffered record `header` starts (`total` bytes with its header), noting a
    /// time that goes backwards.
    #[inline(always)]
    fn take_record(&mut self, header: RecordHeader, total: usize) -> RecordRef<'_> {
        let offset = self.offset;
        if let Some(last) = self.last_t
            && header.t_us < last
        {
            self.note_backwards(offset, header.t_us, last);
        }
        self.last_t = Some(header.t_us);
        let start = self.pos + RECORD_HEADER_LEN;
        self.consume(total);
        RecordRef {
            t_us: header.t_us,
            type_id: header.type_id,
            payload: &self.buf[start..start + usize::from(header.len)],
            offset,
        }
    }

    /// Counts a record whose time is before the previous one's; warns about the first.
    #[cold]
    fn note_backwards(&mut self, offset: u64, t_us: u64, last: u64) {
        self.non_monotonic += 1;
        if self.non_monotonic == 1 {
            self.integrity.warn(format!(
                "t_us goes backwards at byte {offset} ({t_us} after {last})"
            ));
        }
    }

    /// Ends the records at a torn tail: keeps its bytes, reports them, or fails in strict mode.
    fn torn(&mut self, needed: u64, available: usize) -> Result<usize> {
        let offset = self.offset;
        if self.strict {
            return Err(Error::Truncated {
                offset,
                needed,
                available: available as u64,
            });
        }
        self.trailing.clear();
        self.trailing
            .extend_from_slice(&self.buf[self.pos..self.pos + available]);
        self.integrity.truncate(offset, available as u64);
        self.integrity.warn(format!(
            "file ends inside a record at byte {offset}: {available} of {needed} bytes present, record dropped"
        ));
        self.consume(available);
        Ok(0)
    }

    fn plausible(&self, h: &RecordHeader) -> bool {
        let Some(expected) = &self.resync else {
            return true;
        };
        let time_ok = match self.last_t {
            Some(last) => h.t_us >= last && h.t_us - last <= RESYNC_WINDOW_US,
            None => true,
        };
        let len_ok = expected
            .get(&h.type_id)
            .is_none_or(|&size| size == usize::from(h.len));
        time_ok && len_ok
    }

    fn strongly_plausible(&self, h: &RecordHeader) -> bool {
        self.resync
            .as_ref()
            .is_some_and(|e| e.get(&h.type_id) == Some(&usize::from(h.len)))
            && self.plausible(h)
    }

    /// Scans forward for a known record followed by a plausible record (or the end of file).
    /// Returns false when the input ended first.
    fn resync_forward(&mut self) -> Result<bool> {
        let start = self.offset;
        let mut skipped = 0u64;
        loop {
            self.consume(1);
            skipped += 1;
            let available = self.fill(RECORD_HEADER_LEN)?;
            if available < RECORD_HEADER_LEN {
                self.integrity.skip_corrupt(
                    start,
                    skipped + available as u64,
                    "no record found after a corrupt header",
                );
                self.consume(available);
                return Ok(false);
            }
            let candidate = self.peek_header();
            if !self.strongly_plausible(&candidate) {
                continue;
            }
            let total = RECORD_HEADER_LEN + usize::from(candidate.len);
            let available = self.fill(total + RECORD_HEADER_LEN)?;
            let confirmed = if available == total {
                true
            } else if available >= total + RECORD_HEADER_LEN {
                let mut next = [0; RECORD_HEADER_LEN];
                next.copy_from_slice(
                    &self.buf[self.pos + total..self.pos + total + RECORD_HEADER_LEN],
                );
                let next = RecordHeader::parse(&next);
                next.t_us >= candidate.t_us && next.t_us - candidate.t_us <= RESYNC_WINDOW_US
            } else {
                false
            };
            if confirmed {
                self.integrity.skip_corrupt(
                    start,
                    skipped,
                    "implausible record header; resynchronised",
                );
                return Ok(true);
            }
        }
    }
}

impl<R: Read> Reader<R> {
    /// Scans forward, byte by byte, at most `limit` bytes for an offset where a record starts:
    /// `SYNC_CHAIN` records in a row whose headers `known` accepts, each no earlier than the
    /// one before and within `RESYNC_WINDOW_US` of it (or fewer, ending exactly at the end
    /// of the file, or at a torn tail). Leaves the reader there and returns the record's
    /// offset and time, or `None` (reader somewhere in the scanned bytes) when none was found.
    pub fn sync_forward(
        &mut self,
        known: impl Fn(&RecordHeader) -> bool,
        limit: u64,
    ) -> Result<Option<(u64, u64)>> {
        let start = self.offset;
        while self.offset - start < limit {
            let available = self.fill(SYNC_CHAIN * MAX_RECORD)?;
            if available < RECORD_HEADER_LEN {
                return Ok(None);
            }
            let window = &self.buf[self.pos..self.pos + available];
            if let Some(t_us) = chain_starts(window, self.eof, &known) {
                return Ok(Some((self.offset, t_us)));
            }
            self.consume(1);
        }
        Ok(None)
    }
}

/// The time of the record `bytes` starts with, when it and the records after it form a chain
/// that [`Reader::sync_forward`] accepts; `at_eof` tells whether `bytes` ends the file.
fn chain_starts(bytes: &[u8], at_eof: bool, known: &impl Fn(&RecordHeader) -> bool) -> Option<u64> {
    let mut at = 0;
    let mut first = None;
    let mut last: Option<u64> = None;
    for _ in 0..SYNC_CHAIN {
        let Some(head) = bytes.get(at..at + RECORD_HEADER_LEN) else {
            // The chain runs into the end of the file (exactly, or a torn header).
            return first.filter(|_| at_eof);
        };
        let mut raw = [0; RECORD_HEADER_LEN];
        raw.copy_from_slice(head);
        let h = RecordHeader::parse(&raw);
        let in_order = last.is_none_or(|l| h.t_us >= l && h.t_us - l <= RESYNC_WINDOW_US);
        if !known(&h) || !in_order {
            return None;
        }
        first.get_or_insert(h.t_us);
        last = Some(h.t_us);
        at += RECORD_HEADER_LEN + usize::from(h.len);
        if at > bytes.len() {
            // A torn last record: the chain is as long as the file allows.
            return first.filter(|_| at_eof);
        }
    }
    first
}

impl<R: Read + Seek> Reader<R> {
    /// Moves to byte `offset` of the file, dropping what is buffered; the next record is read
    /// from there (which should be a record start: see [`Reader::sync_forward`]).
    pub fn seek_to(&mut self, offset: u64) -> Result<()> {
        self.inner.seek(SeekFrom::Start(offset))?;
        self.pos = 0;
        self.end = 0;
        self.offset = offset;
        self.eof = false;
        self.last_t = None;
        Ok(())
    }

    /// The length of the file, leaving the position where it was.
    pub fn file_len(&mut self) -> Result<u64> {
        let len = self.inner.seek(SeekFrom::End(0))?;
        self.seek_to(self.offset)?;
        Ok(len)
    }
}

/// The iterator of [`Reader::records`].
#[derive(Debug)]
pub struct Records<'a, R> {
    reader: &'a mut Reader<R>,
    done: bool,
}

impl<R: Read> Iterator for Records<'_, R> {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        recfmt_core::next_read(&mut self.done, |record| self.reader.read_record(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Writer;

    fn file(records: &[(u64, u16, usize)]) -> Vec<u8> {
        let mut w = Writer::new(Vec::new());
        w.write_header(&FileHeader::new(1, 0)).unwrap();
        for &(t_us, type_id, len) in records {
            w.write_record(&Record {
                t_us,
                type_id,
                payload: vec![0xAB; len],
                offset: 0,
            })
            .unwrap();
        }
        w.into_inner().unwrap()
    }

    fn read_all(bytes: &[u8], resync: bool) -> (Vec<Record>, Integrity) {
        let mut r = Reader::new(bytes);
        if resync {
            r.set_resync(Some(BTreeMap::from([(1, 24), (4, 8)])));
        }
        r.read_header().unwrap();
        let mut out = Vec::new();
        let mut rec = Record::default();
        while r.read_record(&mut rec).unwrap() {
            out.push(rec.clone());
        }
        (out, r.integrity().clone())
    }

    #[test]
    fn torn_tail_keeps_complete_records_at_every_cut() {
        let bytes = file(&[(10, 1, 24), (20, 4, 8), (30, 99, 3)]);
        let ends = [32, 32 + 36, 32 + 36 + 20, bytes.len()];
        for cut in 32..=bytes.len() {
            let (records, integrity) = read_all(&bytes[..cut], false);
            let complete = ends.iter().filter(|&&e| e <= cut).count() - 1;
            assert_eq!(records.len(), complete, "cut at {cut}");
            let lost = cut - ends[complete];
            assert_eq!(integrity.bytes_lost, lost as u64, "cut at {cut}");
            assert_eq!(integrity.lost_data(), lost > 0);
            if lost > 0 {
                assert_eq!(integrity.truncated_at, Some(ends[complete] as u64));
            }
        }
    }

    #[test]
    fn strict_mode_fails_on_a_torn_tail() {
        let bytes = file(&[(10, 1, 24)]);
        let mut r = Reader::new(&bytes[..bytes.len() - 1]);
        r.set_strict(true);
        r.read_header().unwrap();
        let err = r.read_record(&mut Record::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "at byte 32: expected 36 bytes of a record, file ends after 35"
        );
    }

    #[test]
    fn resync_skips_a_corrupt_length() {
        let mut bytes = file(&[(10, 1, 24), (20, 4, 8), (30, 1, 24), (40, 4, 8)]);
        // Corrupt the length of the second record (at 32 + 36, len at +10).
        let at = 32 + 36 + 10;
        bytes[at] = 0xFF;
        let (plain, _) = read_all(&bytes, false);
        assert!(plain.len() < 4);
        let (records, integrity) = read_all(&bytes, true);
        let times: Vec<u64> = records.iter().map(|r| r.t_us).collect();
        assert_eq!(times, [10, 30, 40]);
        assert_eq!(integrity.bytes_lost, 20);
        assert_eq!(integrity.records_skipped, 1);
    }
}
