//! Resynchronising after a record header that does not fit (opt-in, [`Reader::set_resync`]):
//! scanning forward for a record whose time, payload and successor all hold up.

use std::io::Read;

use super::{RESYNC_WINDOW_US, RH, Reader};
use crate::error::Result;
use crate::header::{PLAUSIBLE_TIMESTAMP, Version};
use crate::report::{Finding, FindingKind, NanoverVerdict, Severity};

impl<R: Read> Reader<R> {
    /// In order after the last good record, within the resync window, and not absurd.
    pub(super) fn plausible_ts(&self, ts: u128) -> bool {
        ts < PLAUSIBLE_TIMESTAMP
            && self
                .last_ts
                .is_none_or(|l| ts > l && ts - l < RESYNC_WINDOW_US)
    }

    /// True when the record of `need` bytes at the cursor is followed by the end of the file,
    /// a torn record header, or a record header that fits and whose timestamp follows this
    /// record's or the last good one's.
    pub(super) fn chains(&self, need: usize, ts: u128, avail: usize) -> bool {
        if avail < need + RH {
            // The end of the file (or a torn header) follows.
            return true;
        }
        let (nts, nlen) = self.peek_header(need);
        let fits = nlen <= self.limits.max_record_len
            && self.total_len.is_none_or(|t| {
                u128::from(self.offset) + need as u128 + RH as u128 + u128::from(nlen)
                    <= u128::from(t)
            });
        let after = |prev: u128| nts > prev && nts - prev < RESYNC_WINDOW_US;
        fits && nts < PLAUSIBLE_TIMESTAMP && (after(ts) || self.last_ts.is_some_and(after))
    }

    /// Scans forward one byte at a time from the record header at the cursor for a plausible
    /// record. Returns false when the input ended first. `torn` is the size of the record at
    /// the cursor when it runs past the end of the file: if no record follows, the file
    /// simply ends inside it, which is reported as a torn tail rather than garbage.
    pub(super) fn resync_forward(&mut self, version: Version, torn: Option<u128>) -> Result<bool> {
        let start = self.offset;
        let prev = self.last_ts;
        let mut skipped = 0u64;
        loop {
            self.consume(1);
            skipped += 1;
            let avail = self.fill(RH)?;
            if avail < RH {
                let lost = skipped + avail as u64;
                self.consume(avail);
                if let Some(needed) = torn {
                    self.report_torn(start, FindingKind::PayloadPastEnd, needed, lost);
                    self.done = true;
                    return Ok(false);
                }
                self.note_garbage(
                    Garbage {
                        start,
                        len: lost,
                        prev,
                        next: None,
                    },
                    NanoverVerdict::Crashes,
                    "no record found after a corrupt record header, up to the end of the file",
                    "no record found after a corrupt record header",
                );
                self.done = true;
                return Ok(false);
            }
            let (ts, len) = self.peek_header(0);
            if len > self.limits.max_record_len || !self.plausible_ts(ts) {
                continue;
            }
            if self.total_len.is_some_and(|t| {
                u128::from(self.offset) + RH as u128 + u128::from(len) > u128::from(t)
            }) {
                continue;
            }
            let need = RH + len as usize;
            let avail = self.fill(need + RH)?;
            if avail < need
                || !self
                    .kind
                    .decodes(version, &self.buf[self.pos + RH..self.pos + need])
                || !self.chains(need, ts, avail)
            {
                continue;
            }
            self.note_garbage(
                Garbage {
                    start,
                    len: skipped,
                    prev,
                    next: Some(ts),
                },
                NanoverVerdict::Flags,
                "bytes that are not records, skipped up to the next plausible record",
                "corrupt record header; resynchronised",
            );
            return Ok(true);
        }
    }

    /// Reports the bytes resync skipped: as a finding of the file's report (`finding`) and as
    /// corrupt bytes of the recording's integrity (`note`, after the file's label).
    fn note_garbage(
        &mut self,
        garbage: Garbage,
        verdict: NanoverVerdict,
        finding: &str,
        note: &str,
    ) {
        let mut f = Finding::new(Severity::Defect, FindingKind::Garbage, verdict, finding)
            .at(garbage.start, garbage.len);
        f.prev_timestamp = garbage.prev;
        f.next_timestamp = garbage.next;
        self.push_finding(f);
        self.integrity.skip_corrupt(
            garbage.start,
            garbage.len,
            &format!("{}: {note}", self.label),
        );
    }
}

/// Bytes skipped by resync: where, how many, and the timestamps around them.
struct Garbage {
    start: u64,
    len: u64,
    prev: Option<u128>,
    next: Option<u128>,
}
