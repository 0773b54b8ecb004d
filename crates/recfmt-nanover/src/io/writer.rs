//! The low-level writer.

use std::io::Write;

use prost::Message;

use crate::error::{Error, Result};
use crate::header::{FileKind, HEADER_LEN, Version, header_bytes};
use crate::proto::{FrameData, GetFrameResponse, StateUpdate};

/// Writes a `.traj` or `.state`: the header (version 2), then records with strictly
/// increasing timestamps.
///
/// Messages are encoded by prost with map entries in key order, so the same messages always
/// give the same bytes (NanoVer's Python writer does not guarantee that; compare decoded
/// messages, not bytes, when checking a round trip against its files).
///
/// ```
/// use recfmt_nanover::{FileKind, StateUpdate, Version, io::{Reader, Timed, Writer}, number};
/// let mut w = Writer::new(Vec::new(), FileKind::State, Version::V2)?;
/// let update = StateUpdate::from_pairs([("scene", number(1.0))]);
/// w.write_state(10, &update)?;
/// assert!(w.write_state(10, &update).is_err()); // not after the previous timestamp
/// let bytes = w.finish()?;
///
/// let mut r = Reader::new(&bytes[..], FileKind::State);
/// let mut read = Timed::default();
/// assert!(r.read_state(&mut read)?);
/// assert_eq!((read.timestamp, read.message), (10, update));
/// # Ok::<(), recfmt_nanover::Error>(())
/// ```
#[derive(Debug)]
pub struct Writer<W: Write> {
    inner: W,
    kind: FileKind,
    version: Version,
    last: Option<u128>,
    require_increasing: bool,
    position: u64,
    records: u64,
    scratch: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// Starts a file of `kind` in `version`: writes the 16-byte header for version 2 (version
    /// 1 has none). Wrap files in a `BufWriter`.
    pub fn new(mut inner: W, kind: FileKind, version: Version) -> Result<Self> {
        let mut position = 0;
        if version == Version::V2 {
            inner.write_all(&header_bytes())?;
            position = HEADER_LEN as u64;
        }
        Ok(Writer {
            inner,
            kind,
            version,
            last: None,
            require_increasing: true,
            position,
            records: 0,
            scratch: Vec::new(),
        })
    }

    /// Allows timestamps that do not increase (to reproduce a damaged file as it was). On by
    /// default: NanoVer's checker treats such records as defective.
    pub fn set_require_increasing(&mut self, require: bool) {
        self.require_increasing = require;
    }

    /// The kind of file being written.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// The version being written.
    pub fn version(&self) -> Version {
        self.version
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Timestamp of the last record written.
    pub fn last_timestamp(&self) -> Option<u128> {
        self.last
    }

    /// Writes one record with an already encoded payload.
    pub fn write_record(&mut self, timestamp: u128, payload: &[u8]) -> Result<()> {
        if self.require_increasing
            && let Some(previous) = self.last
            && timestamp <= previous
        {
            return Err(Error::TimestampOrder {
                offset: self.position,
                previous,
                found: timestamp,
            });
        }
        self.inner.write_all(&timestamp.to_le_bytes())?;
        self.inner
            .write_all(&(payload.len() as u64).to_le_bytes())?;
        self.inner.write_all(payload)?;
        self.position += 24 + payload.len() as u64;
        self.records += 1;
        self.last = Some(timestamp);
        Ok(())
    }

    /// Writes a frame. Version 1 stores the bare `FrameData` (the index is dropped; a
    /// missing frame is written as an empty one).
    pub fn write_frame(&mut self, timestamp: u128, frame: &GetFrameResponse) -> Result<()> {
        self.expect(FileKind::Trajectory)?;
        let mut payload = std::mem::take(&mut self.scratch);
        payload.clear();
        match self.version {
            Version::V2 => frame.encode(&mut payload),
            Version::V1 => match &frame.frame {
                Some(f) => f.encode(&mut payload),
                None => FrameData::default().encode(&mut payload),
            },
        }
        .map_err(|e| Error::Unwritable {
            what: format!("frame: {e}").into(),
        })?;
        let r = self.write_record(timestamp, &payload);
        self.scratch = payload;
        r
    }

    /// Writes a state update.
    pub fn write_state(&mut self, timestamp: u128, update: &StateUpdate) -> Result<()> {
        self.expect(FileKind::State)?;
        let mut payload = std::mem::take(&mut self.scratch);
        payload.clear();
        update.encode(&mut payload).map_err(|e| Error::Unwritable {
            what: format!("state update: {e}").into(),
        })?;
        let r = self.write_record(timestamp, &payload);
        self.scratch = payload;
        r
    }

    fn expect(&self, kind: FileKind) -> Result<()> {
        if self.kind == kind {
            Ok(())
        } else {
            Err(Error::Unwritable {
                what: format!(
                    "a {} message into a .{} file",
                    match kind {
                        FileKind::Trajectory => "frame",
                        FileKind::State => "state",
                    },
                    self.kind.extension()
                )
                .into(),
            })
        }
    }

    /// The wrapped sink.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Flushes and returns the sink.
    pub fn finish(mut self) -> Result<W> {
        self.inner.flush()?;
        Ok(self.inner)
    }
}
