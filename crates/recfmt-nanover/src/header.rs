//! The file header, format versions, file kinds and content sniffing.

use std::path::Path;

use prost::Message;

use crate::proto::{FrameData, GetFrameResponse, StateUpdate};

/// The magic number at byte 0 of a version-2 file (`u64` little-endian).
pub const MAGIC: u64 = 6_661_355_757_386_708_963;
/// The format version written after the magic.
pub const FORMAT_VERSION: u64 = 2;
/// Length of the version-2 header: magic and version, two `u64` LE.
pub const HEADER_LEN: usize = 16;
/// Length of a record header: `u128` LE timestamp and `u64` LE payload length.
pub const RECORD_HEADER_LEN: usize = 24;

/// A format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// Rust narupa-rs/nanover-rs, January to July 2023: no header; `.traj` payloads are bare
    /// `FrameData` (no frame index).
    V1,
    /// Every later writer: 16-byte header; `.traj` payloads are `GetFrameResponse`.
    V2,
}

impl Version {
    /// `"1"` or `"2"`.
    pub fn name(self) -> &'static str {
        match self {
            Version::V1 => "1",
            Version::V2 => "2",
        }
    }
}

/// Which version a reader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VersionPolicy {
    /// Version 2 when the magic is there; version 1 only when [`sniff_v1`] is sure.
    #[default]
    Auto,
    /// Read as version 1 (headerless) whatever the first bytes are.
    V1,
    /// Require the version-2 header.
    V2,
}

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A `.traj`: frames (`GetFrameResponse`, or `FrameData` in version 1).
    Trajectory,
    /// A `.state`: shared-state updates (`StateUpdate`).
    State,
}

impl FileKind {
    /// The usual extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            FileKind::Trajectory => "traj",
            FileKind::State => "state",
        }
    }

    /// The kind named by a path's extension (`.traj` or `.state`, any case).
    pub fn from_path(path: &Path) -> Option<FileKind> {
        let ext = path.extension()?.to_str()?;
        if ext.eq_ignore_ascii_case("traj") {
            Some(FileKind::Trajectory)
        } else if ext.eq_ignore_ascii_case("state") {
            Some(FileKind::State)
        } else {
            None
        }
    }

    /// The protobuf message name of a record payload in this kind of file.
    pub fn message_name(self, version: Version) -> &'static str {
        match (self, version) {
            (FileKind::Trajectory, Version::V2) => "GetFrameResponse",
            (FileKind::Trajectory, Version::V1) => "FrameData",
            (FileKind::State, _) => "StateUpdate",
        }
    }

    /// True when `payload` decodes as this kind's message.
    pub fn decodes(self, version: Version, payload: &[u8]) -> bool {
        match (self, version) {
            (FileKind::Trajectory, Version::V2) => GetFrameResponse::decode(payload).is_ok(),
            (FileKind::Trajectory, Version::V1) => FrameData::decode(payload).is_ok(),
            (FileKind::State, _) => StateUpdate::decode(payload).is_ok(),
        }
    }
}

/// The 16 header bytes of a version-2 file.
///
/// ```
/// let h = recfmt_nanover::header_bytes();
/// assert_eq!(h[..8], [0xe3, 0xb7, 0x89, 0x99, 0xc4, 0xe3, 0x71, 0x5c]);
/// assert_eq!(h[8], 2);
/// ```
pub fn header_bytes() -> [u8; HEADER_LEN] {
    let mut h = [0; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC.to_le_bytes());
    h[8..].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    h
}

/// Parses a 24-byte record header into `(timestamp, payload length)`.
pub fn parse_record_header(b: &[u8; RECORD_HEADER_LEN]) -> (u128, u64) {
    let mut ts = [0; 16];
    ts.copy_from_slice(&b[..16]);
    let mut len = [0; 8];
    len.copy_from_slice(&b[16..]);
    (u128::from_le_bytes(ts), u64::from_le_bytes(len))
}

/// Largest timestamp a plausibility check accepts: 2^56 µs (about 2,280 years). Real
/// timestamps count microseconds since the recorder started.
pub const PLAUSIBLE_TIMESTAMP: u128 = 1 << 56;

/// Decides whether `head` (the first bytes of a file) is surely a headerless version-1 file
/// of `kind`.
///
/// Sure means: no magic; the bytes parse as records whose timestamps are plausible
/// (below [`PLAUSIBLE_TIMESTAMP`]) and strictly increasing, and whose payloads decode as the
/// kind's message; and either two complete records are present, or the records end exactly at
/// the end of the file (`head_is_whole_file`).
///
/// ```
/// use recfmt_nanover::{FileKind, sniff_v1};
/// let mut v1 = Vec::new();
/// for t in [10u128, 20] {
///     v1.extend_from_slice(&t.to_le_bytes());
///     v1.extend_from_slice(&0u64.to_le_bytes());
/// }
/// assert!(sniff_v1(&v1, FileKind::Trajectory, true));
/// assert!(!sniff_v1(&[0u8; 48], FileKind::Trajectory, true)); // timestamps 0, 0
/// assert!(!sniff_v1(&recfmt_nanover::header_bytes(), FileKind::Trajectory, true));
/// ```
pub fn sniff_v1(head: &[u8], kind: FileKind, head_is_whole_file: bool) -> bool {
    if head.len() >= 8 && head[..8] == MAGIC.to_le_bytes() {
        return false;
    }
    let mut pos = 0usize;
    let mut last: Option<u128> = None;
    let mut complete = 0;
    while head.len() - pos >= RECORD_HEADER_LEN {
        let mut h = [0; RECORD_HEADER_LEN];
        h.copy_from_slice(&head[pos..pos + RECORD_HEADER_LEN]);
        let (ts, len) = parse_record_header(&h);
        if ts >= PLAUSIBLE_TIMESTAMP || last.is_some_and(|l| ts <= l) {
            return false;
        }
        let Ok(len) = usize::try_from(len) else {
            return false;
        };
        let end = pos + RECORD_HEADER_LEN;
        if head.len() - end < len {
            // The record runs past what we can see: sure only if two came before it.
            return complete >= 2 && !head_is_whole_file;
        }
        if !kind.decodes(Version::V1, &head[end..end + len]) {
            return false;
        }
        last = Some(ts);
        complete += 1;
        pos = end + len;
        if complete >= 2 && !head_is_whole_file {
            return true;
        }
    }
    complete >= 1 && pos == head.len() && head_is_whole_file
        || complete >= 2 && head.len() - pos < RECORD_HEADER_LEN && !head_is_whole_file
}

/// Guesses the kind of a version-2 payload from its first protobuf tag: a `GetFrameResponse`
/// starts with field 1 as a varint (`frame_index`) or field 2 (`frame`); a `StateUpdate` with
/// field 1 as a length-delimited struct. `None` for an empty payload or anything else.
pub fn sniff_kind(payload: &[u8]) -> Option<FileKind> {
    match payload.first()? {
        0x08 | 0x12 => Some(FileKind::Trajectory),
        0x0a => Some(FileKind::State),
        _ => None,
    }
}
