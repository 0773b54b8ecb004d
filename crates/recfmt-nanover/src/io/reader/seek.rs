//! Moving a [`Reader`] on a seekable source, for time windows: resuming where a first pass
//! left a checkpoint, reading one frame record out of order (to rebuild an aggregated frame),
//! and skipping the records before a time without decoding them.

use std::io::{Read, Seek, SeekFrom};

use prost::Message;

use super::Reader;
use crate::error::Result;
use crate::header::{RECORD_HEADER_LEN, parse_record_header};
use crate::proto::GetFrameResponse;

const RH: u64 = RECORD_HEADER_LEN as u64;
impl<R: Read + Seek> Reader<R> {
    /// Continues reading at byte `offset` as a full read would there after records whose
    /// last in-order timestamp was `last_ts`: the buffer is dropped and the end of the
    /// records forgotten. `offset` must be a position a full read passes through (a
    /// checkpoint of a first pass over the same file with the same options) or a record start,
    /// so the records, resync decisions and timestamp checks from there are those of the full
    /// read.
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

    /// Moves past the records before the first whose timestamp is `target_us` or later,
    /// framing them without decoding (a `.state`'s rows need no aggregate, so this is where
    /// its rows of a window start). The records are read as a full read reads them (same
    /// resync decisions, timestamp checks and losses), so this holds for torn files and for
    /// times out of order: every record skipped is earlier than the target. Returns whether
    /// any record was skipped.
    pub fn skip_before(&mut self, target_us: u128) -> Result<bool> {
        let mut record = std::mem::take(&mut self.scratch);
        let mut skipped = false;
        let out = loop {
            let last_ts = self.last_ts;
            match self.read_record(&mut record) {
                Ok(true) if record.timestamp < target_us => skipped = true,
                // From the record itself: garbage before it is not skipped (and counted) twice.
                Ok(true) => break self.resume_at(record.offset, last_ts).map(|()| skipped),
                Ok(false) => break Ok(skipped),
                Err(e) => break Err(e),
            }
        };
        self.scratch = record;
        out
    }
}
