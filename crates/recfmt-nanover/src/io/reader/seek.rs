//! Moving a [`Reader`] on a seekable source, for time windows: resuming where a first pass
//! left a checkpoint, reading one frame record out of order (to rebuild an aggregated frame),
//! and a binary search over byte offsets that finds record starts by their framing.

use std::io::{Read, Seek, SeekFrom};

use prost::Message;

use super::{RESYNC_WINDOW_US, Reader};
use crate::error::Result;
use crate::header::{
    HEADER_LEN, PLAUSIBLE_TIMESTAMP, RECORD_HEADER_LEN, Version, parse_record_header,
};
use crate::proto::GetFrameResponse;

const RH: u64 = RECORD_HEADER_LEN as u64;
/// Records in a row that confirm a record start found by [`Reader::sync_forward`] (fewer
/// when the file ends first): one header that fits could be payload bytes by chance, three
/// that chain, in time order, with a first payload that decodes, are not.
const CHAIN: usize = 3;
/// A search's bracket this narrow is read record by record instead.
const SEARCH_LINEAR_BYTES: u64 = 64 << 10;
/// Bytes a probe of the search scans for a record start before it gives up on its half.
const SEARCH_SYNC_LIMIT: u64 = 4 << 20;

impl<R: Read + Seek> Reader<R> {
    /// Continues reading at byte `offset` as a full read would there after records whose
    /// last in-order timestamp was `last_ts`: the buffer is dropped and the end of the
    /// records forgotten. `offset` must be a position a full read passes through (a
    /// checkpoint of a first pass over the same file with the same options) or a record start
    /// ([`Reader::sync_forward`]), so the records, resync decisions and timestamp checks from
    /// there are those of the full read.
    pub fn resume_at(&mut self, offset: u64, last_ts: Option<u128>) -> Result<()> {
        self.inner.seek(SeekFrom::Start(offset))?;
        self.pos = 0;
        self.end = 0;
        self.offset = offset;
        self.eof = false;
        self.done = false;
        self.last_ts = last_ts;
        self.ts_run = None;
        Ok(())
    }

    /// Reads `buf.len()` bytes at `offset` straight from the source (not through the
    /// buffer); false when the file ends first.
    fn read_exact_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<bool> {
        self.inner.seek(SeekFrom::Start(offset))?;
        match self.inner.read_exact(buf) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The version-2 frame record whose header is at `offset`, decoded; `None` when no whole
    /// record within the limits is there or its payload does not decode. Leaves the reader's
    /// position undefined: [`Reader::resume_at`] after.
    pub fn frame_at(&mut self, offset: u64) -> Result<Option<GetFrameResponse>> {
        let mut header = [0; RECORD_HEADER_LEN];
        if !self.read_exact_at(offset, &mut header)? {
            return Ok(None);
        }
        let (_, len) = parse_record_header(&header);
        let fits = self
            .total_len
            .is_none_or(|t| u128::from(offset) + u128::from(RH) + u128::from(len) <= u128::from(t));
        if len > self.limits.max_record_len || !fits {
            return Ok(None);
        }
        // Checked against the limit above before it sizes anything.
        let mut payload = vec![0; len as usize];
        if !self.read_exact_at(offset + RH, &mut payload)? {
            return Ok(None);
        }
        Ok(GetFrameResponse::decode(&payload[..]).ok())
    }

    /// Scans forward from byte `from`, at most `limit` bytes, for an offset where records
    /// start: a record header whose timestamp is plausible and whose length fits the limits
    /// and the file, whose payload decodes as this file's message, followed by records that
    /// chain ([`CHAIN`] in all, times increasing and less than a day apart) or by the end of
    /// the file. Returns the offset and the record's timestamp. Needs the file length
    /// ([`Reader::set_total_len`]) and the version; leaves the position undefined.
    pub fn sync_forward(&mut self, from: u64, limit: u64) -> Result<Option<(u64, u128)>> {
        let (Some(file_end), Some(version)) = (self.total_len, self.version) else {
            return Ok(None);
        };
        self.resume_at(from, None)?;
        let mut scanned = 0;
        while scanned <= limit {
            if self.fill(RECORD_HEADER_LEN)? < RECORD_HEADER_LEN {
                return Ok(None);
            }
            let (ts, len) = self.peek_header(0);
            let at = self.offset;
            if ts < PLAUSIBLE_TIMESTAMP
                && len <= self.limits.max_record_len
                && u128::from(at) + u128::from(RH) + u128::from(len) <= u128::from(file_end)
            {
                // The chain is read past the buffer; the source goes back to the buffer's end.
                let buffered_to = at + (self.end - self.pos) as u64;
                let confirmed = self.chain_at(at, ts, len, file_end, version)?;
                self.inner.seek(SeekFrom::Start(buffered_to))?;
                if confirmed {
                    return Ok(Some((at, ts)));
                }
            }
            self.consume(1);
            scanned += 1;
        }
        Ok(None)
    }

    /// True when the record at `at` (timestamp `ts`, payload `len` bytes, already known to
    /// fit) decodes and starts a chain (see [`Reader::sync_forward`]).
    fn chain_at(
        &mut self,
        at: u64,
        ts: u128,
        len: u64,
        file_end: u64,
        version: Version,
    ) -> Result<bool> {
        // Within the limits and the file (checked by the caller).
        let mut payload = vec![0; len as usize];
        if !self.read_exact_at(at + RH, &mut payload)? || !self.kind.decodes(version, &payload) {
            return Ok(false);
        }
        let mut next = at + RH + len;
        let mut prev = ts;
        for _ in 1..CHAIN {
            if file_end.saturating_sub(next) < RH {
                // The end of the file, or a torn header before it.
                return Ok(true);
            }
            let mut header = [0; RECORD_HEADER_LEN];
            if !self.read_exact_at(next, &mut header)? {
                return Ok(true);
            }
            let (t, l) = parse_record_header(&header);
            if t <= prev || t - prev >= RESYNC_WINDOW_US || l > self.limits.max_record_len {
                return Ok(false);
            }
            if u128::from(next) + u128::from(RH) + u128::from(l) > u128::from(file_end) {
                // A torn last record.
                return Ok(true);
            }
            prev = t;
            next += RH + l;
        }
        Ok(true)
    }

    /// Positions the reader at a record start before which every record is earlier than
    /// `target_us`, close before the first that is not: a binary search over byte offsets
    /// whose probes find record starts with [`Reader::sync_forward`], so torn and garbage
    /// bytes are stepped over. Holds for records in time order, as writers emit them; where
    /// a probe finds no record start the search keeps the earlier half, so nothing is
    /// skipped, only more is read. Returns whether it moved past the first record; the
    /// reader then continues from the first record when the file length or version (read
    /// the header first) is unknown.
    pub fn search_time(&mut self, target_us: u128) -> Result<bool> {
        let start = match self.version {
            Some(Version::V2) => HEADER_LEN as u64,
            Some(Version::V1) => 0,
            None => return Ok(false),
        };
        let Some(file_end) = self.total_len else {
            return Ok(false);
        };
        let (mut lo, mut hi) = (start, file_end.max(start));
        while hi - lo > SEARCH_LINEAR_BYTES {
            let mid = lo + (hi - lo) / 2;
            match self.sync_forward(mid, (hi - mid).min(SEARCH_SYNC_LIMIT))? {
                Some((at, t)) if t < target_us => lo = at,
                _ => hi = mid,
            }
        }
        self.resume_at(lo, None)?;
        Ok(lo > start)
    }
}
