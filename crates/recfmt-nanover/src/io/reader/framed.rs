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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::FileKind;

    /// What the open pass takes from each record: where, when, its keys, and the reader's
    /// state after it; then how the records ended.
    type Seen = (Vec<(u64, u128, W<FrameKeys>, Option<u128>, u64)>, String);

    fn reader(bytes: &[u8]) -> Reader<std::io::Cursor<&[u8]>> {
        let mut r = Reader::new(std::io::Cursor::new(bytes), FileKind::Trajectory);
        r.set_total_len(Some(bytes.len() as u64));
        r
    }

    fn framed(bytes: &[u8]) -> Seen {
        let mut r = reader(bytes);
        let mut record = Record::default();
        let mut seen = Vec::new();
        let end = loop {
            match r.read_record_keys(&mut record, |_| false) {
                Ok(Some(keys)) => seen.push((
                    record.offset,
                    record.timestamp,
                    keys,
                    r.last_timestamp(),
                    r.position(),
                )),
                Ok(None) => break format!("{:?}", r.integrity()),
                Err(e) => break e.to_string(),
            }
        };
        (seen, end)
    }

    fn whole(bytes: &[u8]) -> Seen {
        let mut r = reader(bytes);
        let mut record = Record::default();
        let mut seen = Vec::new();
        let bare = match r.read_header() {
            Ok(v) => v == Version::V1,
            Err(e) => return (seen, e.to_string()),
        };
        let end = loop {
            match r.read_record(&mut record) {
                Ok(true) => seen.push((
                    record.offset,
                    record.timestamp,
                    frame_keys(&record.payload, bare),
                    r.last_timestamp(),
                    r.position(),
                )),
                Ok(false) => break format!("{:?}", r.integrity()),
                Err(e) => break e.to_string(),
            }
        };
        (seen, end)
    }

    /// Framing gives the records, keys, timestamps checks and losses of reading whole, on an
    /// intact file and on copies with a byte changed anywhere (record headers broken, payloads
    /// refused, keys retyped) or cut anywhere.
    #[test]
    fn framing_agrees_with_reading_whole() {
        let (traj, _) = crate::generate::small_recording_bytes().unwrap();
        assert_eq!(framed(&traj), whole(&traj));
        assert!(framed(&traj).0.len() == 7);
        for at in 0..traj.len() {
            for value in [0x00, 0x7f, 0xff, traj[at] ^ 0x01] {
                let mut bad = traj.clone();
                bad[at] = value;
                assert_eq!(framed(&bad), whole(&bad), "byte {at} set to {value:#x}");
            }
            assert_eq!(framed(&traj[..at]), whole(&traj[..at]), "cut at {at}");
        }
    }

    /// The payload is read where asked for, as reading whole reads it.
    #[test]
    fn a_payload_asked_for_is_read() {
        let (traj, _) = crate::generate::small_recording_bytes().unwrap();
        let (mut a, mut b) = (reader(&traj), reader(&traj));
        let (mut ra, mut rb) = (Record::default(), Record::default());
        while a.read_record_keys(&mut ra, |_| true).unwrap().is_some() {
            assert!(b.read_record(&mut rb).unwrap());
            assert_eq!(ra, rb);
        }
        assert!(!b.read_record(&mut rb).unwrap());
    }
}
