//! `events.jsonl`: one JSON object per line, read as rows of the events stream after the
//! records.

use std::fs::File;
use std::io::{BufRead, BufReader};

use recfmt_core::{Integrity, RowWriter};

use crate::error::{Error, Result};

/// Longest `events.jsonl` line kept, in bytes; a longer line is skipped as corrupt without
/// ever being held whole in memory.
pub const MAX_EVENT_LINE_LEN: usize = 1 << 20;

/// The events of a session, read line by line.
#[derive(Debug)]
pub(crate) struct EventLog {
    file: BufReader<File>,
    /// Index of the events stream in the schema.
    stream: usize,
    /// Lines read.
    line: u64,
    /// Byte offset of the next line.
    offset: u64,
    /// Events read, and how many `meta.json` says the file holds.
    read: u64,
    expected: Option<u64>,
    /// The line being read, reused.
    text: Vec<u8>,
}

impl EventLog {
    /// Events of `file`, rows of stream `stream`; `expected` is `meta.json`'s count.
    pub(crate) fn new(file: BufReader<File>, stream: usize, expected: Option<u64>) -> Self {
        EventLog {
            file,
            stream,
            line: 0,
            offset: 0,
            read: 0,
            expected,
            text: Vec::new(),
        }
    }

    /// Reads the next line into `self.text` (without its line break), holding at most
    /// [`MAX_EVENT_LINE_LEN`] bytes of it. Returns the line's byte length, or `None` at the
    /// end of the file.
    fn next_line(&mut self) -> std::io::Result<Option<usize>> {
        self.text.clear();
        let mut length = 0usize;
        loop {
            let available = self.file.fill_buf()?;
            if available.is_empty() {
                return Ok((length > 0).then_some(length));
            }
            let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if self.text.len() + chunk.len() <= MAX_EVENT_LINE_LEN {
                self.text.extend_from_slice(chunk);
            }
            length += chunk.len();
            let used = done.unwrap_or(chunk.len());
            self.file.consume(used);
            self.offset += used as u64;
            if done.is_some() {
                return Ok(Some(length));
            }
        }
    }

    /// Writes the next event as a row (`t_us`, `type`, the line): true, or false at the end.
    /// A line that is too long or not a JSON object is skipped as corrupt (an error when
    /// strict); fewer events than `meta.json` counts is data lost.
    pub(crate) fn next_row(
        &mut self,
        row: &mut RowWriter<'_>,
        integrity: &mut Integrity,
        strict: bool,
    ) -> Result<bool> {
        loop {
            let start = self.offset;
            let length = match self.next_line() {
                Ok(Some(length)) => length,
                Ok(None) => break,
                Err(e) => {
                    integrity.warn(format!("events.jsonl line {}: {e}", self.line + 1));
                    break;
                }
            };
            self.line += 1;
            let text = std::str::from_utf8(&self.text).unwrap_or("");
            if length <= MAX_EVENT_LINE_LEN && text.trim().is_empty() && self.text.is_ascii() {
                continue;
            }
            let parsed = (length <= MAX_EVENT_LINE_LEN)
                .then(|| serde_json::from_str::<serde_json::Value>(text).ok())
                .flatten()
                .filter(serde_json::Value::is_object);
            let Some(event) = parsed else {
                let why = if length > MAX_EVENT_LINE_LEN {
                    format!("longer than {MAX_EVENT_LINE_LEN} bytes")
                } else {
                    "not a JSON object".into()
                };
                if strict {
                    return Err(Error::Core(recfmt_core::Error::malformed(
                        crate::FORMAT_ID,
                        start,
                        format!("a JSON object on events.jsonl line {}", self.line),
                    )));
                }
                let what = format!("events.jsonl line {} (byte {start}): {why}", self.line);
                integrity.skip_corrupt(start, length as u64, &what);
                continue;
            };
            self.read += 1;
            if row.begin(self.stream)? {
                match event.get("t_us").and_then(serde_json::Value::as_u64) {
                    Some(t) => row.push(t)?,
                    None => row.push_null()?,
                }
                match event.get("type").and_then(serde_json::Value::as_str) {
                    Some(t) => row.push_str(t)?,
                    None => row.push_null()?,
                }
                row.push_str(text.trim())?;
                row.finish()?;
            }
            return Ok(true);
        }
        self.check_count(integrity, strict)?;
        Ok(false)
    }

    /// At the end of the file: fewer events than `meta.json` counts were lost (an error when
    /// strict). Checked once.
    fn check_count(&mut self, integrity: &mut Integrity, strict: bool) -> Result<()> {
        let Some(expected) = self.expected.take() else {
            return Ok(());
        };
        if self.read >= expected {
            return Ok(());
        }
        let lost = expected - self.read;
        if strict {
            return Err(Error::Core(recfmt_core::Error::malformed(
                crate::FORMAT_ID,
                self.offset,
                format!("{lost} more events.jsonl lines (meta.json counts {expected})"),
            )));
        }
        if !integrity.lost_data() {
            integrity.truncate(self.offset, 0);
        }
        integrity.warn(format!(
            "meta.json counts {expected} events but events.jsonl holds {}: {lost} lost",
            self.read
        ));
        Ok(())
    }
}
