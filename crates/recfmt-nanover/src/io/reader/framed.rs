//! Framing a `.traj` without reading its arrays: the open pass needs each record's place,
//! time and keys, not its positions and velocities, so a record's keys are walked from the
//! file ([`crate::wire::walk_frame`]) and its arrays skipped with a seek. The records are
//! those a full read gives (the same header checks, torn tails and timestamp checks).

use std::io::{Read, Seek, SeekFrom};

use super::{RH, Reader, Record};
use crate::error::Result;
use crate::header::Version;
use crate::skim::{ByteSource, READ_AHEAD, Skim, W, ended};
use crate::wire::{FrameKeys, frame_keys, walk_frame};

/// The payload under the reader's cursor, read forward within the buffer or past it.
impl<R: Read + Seek> ByteSource for Reader<R> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let avail = self.fill(n)?;
        if avail < n {
            return Err(ended((n - avail) as u64));
        }
        let at = self.pos;
        self.consume(n);
        Ok(&self.buf[at..at + n])
    }

    fn skip(&mut self, n: u64) -> Result<()> {
        let buffered = (self.end - self.pos) as u64;
        if n <= buffered {
            self.consume(n as usize);
            return Ok(());
        }
        let beyond = i64::try_from(n - buffered).map_err(|_| ended(n))?;
        self.inner.seek(SeekFrom::Current(beyond))?;
        self.pos = 0;
        self.end = 0;
        self.eof = false;
        self.offset += n;
        Ok(())
    }
}

impl<R: Read + Seek> Reader<R> {
    /// Reads the next record's header and the keys of its frame ([`FrameKeys`]; an error
    /// where the payload is not a frame), skipping its arrays; `None` at the end of the
    /// records. The payload is read into `record` only where `wants_payload` says so from
    /// the keys (to decode the record). With resync on, or without the file length, records
    /// are read whole (resync decisions decode payloads).
    pub(crate) fn read_record_keys(
        &mut self,
        record: &mut Record,
        wants_payload: impl FnOnce(&W<FrameKeys>) -> bool,
    ) -> Result<Option<W<FrameKeys>>> {
        let version = self.version_or_header()?;
        let bare = version == Version::V1;
        if self.resync || self.total_len.is_none() {
            if !self.read_record(record)? {
                return Ok(None);
            }
            return Ok(Some(frame_keys(&record.payload, bare)));
        }
        self.read_ahead = READ_AHEAD;
        let Some((ts, len)) = self.next_header(version)? else {
            return Ok(None);
        };
        let at = self.offset;
        self.consume(RH);
        let mut skim = Skim::new(self, len);
        let keys = walk_frame(&mut skim, bare);
        skim.finish()?;
        record.offset = at;
        self.last_offset = at;
        record.timestamp = ts;
        record.payload.clear();
        if wants_payload(&keys) {
            self.load_payload(at + RH as u64, len, &mut record.payload)?;
        }
        let avail = self.fill(RH)?;
        let next_ts = (avail >= RH).then(|| self.peek_header(0).0);
        self.check_timestamp(ts, next_ts, at)?;
        self.records += 1;
        Ok(Some(keys))
    }

    /// Reads the `len` payload bytes at `start` (a record just framed, which ends at the
    /// cursor) into `payload`; `len` was checked against the limits.
    fn load_payload(&mut self, start: u64, len: u64, payload: &mut Vec<u8>) -> Result<()> {
        self.inner.seek(SeekFrom::Start(start))?;
        payload.resize(len as usize, 0);
        self.inner.read_exact(payload)?;
        self.pos = 0;
        self.end = 0;
        self.eof = false;
        Ok(())
    }
}
