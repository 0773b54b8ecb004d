//! Findings about a recording: what [`crate::check`] reports and the low-level reader notes.

use std::fmt;
use std::path::PathBuf;

use crate::header::{FileKind, Version};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A known writer quirk that readers must accept; nothing is wrong.
    Info,
    /// Legal but suspicious, or something other tools choke on; no data is lost.
    Warning,
    /// A defective record or block: data is lost or wrong, and [`crate::repair`] changes it.
    Defect,
}

impl Severity {
    /// `info`, `warning` or `defect`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Defect => "defect",
        }
    }
}

/// What NanoVer's own `nanover-check-recording` (nanover-server-py, last protobuf version)
/// does with the same problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NanoverVerdict {
    /// It reports a `DEFECTIVE BLOCK` too (and its repair drops the bytes).
    Flags,
    /// It says nothing (for example a payload short by fewer than 24 bytes, or a payload
    /// that is not valid protobuf).
    Misses,
    /// It crashes (a defective block running to the end of the file, a bad magic number).
    Crashes,
    /// Not a question for that tool (semantic checks, quirks).
    NotApplicable,
}

impl NanoverVerdict {
    /// A short phrase for reports.
    pub fn phrase(self) -> &'static str {
        match self {
            NanoverVerdict::Flags => "nanover-check-recording flags it",
            NanoverVerdict::Misses => "nanover-check-recording misses it",
            NanoverVerdict::Crashes => "nanover-check-recording crashes on it",
            NanoverVerdict::NotApplicable => "",
        }
    }
}

/// The kinds of findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum FindingKind {
    /// The file could not be opened or read.
    Io,
    /// The file does not start with the magic number and is not a sure version-1 file.
    BadMagic,
    /// The header names a version other than 2.
    UnsupportedVersion,
    /// The file is shorter than its 16-byte header.
    ShortHeader,
    /// The file ends inside a 24-byte record header.
    TornRecordHeader,
    /// A record's payload runs past the end of the file (a torn last record, or a corrupt
    /// length field).
    PayloadPastEnd,
    /// A record length exceeds the configured limit and the file length is unknown.
    RecordTooLarge,
    /// Bytes that are not records, skipped up to the next plausible record (or the end).
    Garbage,
    /// A record whose payload is not the expected protobuf message.
    CorruptPayload,
    /// A record whose timestamp is not after the previous record's.
    TimestampNotIncreasing,
    /// Two minutes or more between records (NanoVer's checker treats it as a defect).
    TimestampGap,
    /// `system.simulation.counter` changed on a frame whose index is not 0: a reset merged
    /// away by the Python gRPC recorder's aggregation.
    LostReset,
    /// A per-particle array whose length does not match the particle count.
    ArrayLength,
    /// An index array pointing past the particles, residues or chains it refers to.
    IndexOutOfRange,
    /// An array of an unexpected type that no reader quirk covers.
    ArrayType,
    /// A writer quirk: an empty float array stored as an index array.
    EmptyArrayAsIndex,
    /// A writer quirk: `residue.ids` stored as floats (Rust server).
    ResidueIdsAsFloat,
    /// Only the reader's limit on findings was reached; later ones are counted, not listed.
    TooManyFindings,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How bad it is.
    pub severity: Severity,
    /// What it is.
    pub kind: FindingKind,
    /// Byte offset in the file, when it concerns bytes.
    pub offset: Option<u64>,
    /// Bytes affected (skipped, lost or dropped); 0 when none.
    pub bytes: u64,
    /// Index of the record (0-based, counting readable records) when it concerns one.
    pub record: Option<u64>,
    /// How many consecutive records or places it stands for (at least 1).
    pub count: u64,
    /// Timestamp (µs) of the last good record before it.
    pub prev_timestamp: Option<u128>,
    /// Timestamp (µs) of the first good record after it.
    pub next_timestamp: Option<u128>,
    /// What NanoVer's checker does with it.
    pub nanover: NanoverVerdict,
    /// Human-readable detail.
    pub message: String,
}

impl Finding {
    /// A finding with no position.
    pub fn new(
        severity: Severity,
        kind: FindingKind,
        nanover: NanoverVerdict,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            severity,
            kind,
            offset: None,
            bytes: 0,
            record: None,
            count: 1,
            prev_timestamp: None,
            next_timestamp: None,
            nanover,
            message: message.into(),
        }
    }

    /// Sets the byte offset and the bytes affected.
    pub fn at(mut self, offset: u64, bytes: u64) -> Self {
        self.offset = Some(offset);
        self.bytes = bytes;
        self
    }

    /// Sets the record index.
    pub fn record(mut self, record: u64) -> Self {
        self.record = Some(record);
        self
    }
}

fn seconds(ts: Option<u128>, none: &str) -> String {
    match ts {
        Some(t) => format!("{:.2}s", t as f64 / 1e6),
        None => none.to_string(),
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.severity.name())?;
        if self.kind == FindingKind::Garbage {
            // The wording of nanover-check-recording, so users can compare.
            write!(
                f,
                "DEFECTIVE BLOCK ({}) between {} and {}: ",
                self.bytes,
                seconds(self.prev_timestamp, "START"),
                seconds(self.next_timestamp, "END")
            )?;
        }
        if let Some(o) = self.offset {
            write!(f, "at byte {o}: ")?;
        }
        if let Some(r) = self.record {
            write!(f, "record {r}: ")?;
        }
        f.write_str(&self.message)?;
        if self.count > 1 {
            write!(f, " ({} times)", self.count)?;
        }
        let phrase = self.nanover.phrase();
        if !phrase.is_empty() {
            write!(f, " [{phrase}]")?;
        }
        Ok(())
    }
}

/// What [`crate::check`] found in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The file, when checked from a path.
    pub path: Option<PathBuf>,
    /// Trajectory or state.
    pub kind: FileKind,
    /// The version read, when the header could be read.
    pub version: Option<Version>,
    /// File length in bytes.
    pub bytes: u64,
    /// Records whose framing was sound (kept by the reader, including ones with a corrupt
    /// payload or a bad timestamp).
    pub records: u64,
    /// Records whose payload decoded.
    pub decoded: u64,
    /// Timestamp of the first record.
    pub first_timestamp: Option<u128>,
    /// Timestamp of the last record.
    pub last_timestamp: Option<u128>,
    /// Frames with `frame_index == 0` (trajectories).
    pub resets: u64,
    /// Everything found, in file order.
    pub findings: Vec<Finding>,
}

impl FileReport {
    /// An empty report.
    pub fn new(path: Option<PathBuf>, kind: FileKind) -> Self {
        FileReport {
            path,
            kind,
            version: None,
            bytes: 0,
            records: 0,
            decoded: 0,
            first_timestamp: None,
            last_timestamp: None,
            resets: 0,
            findings: Vec::new(),
        }
    }

    /// True when no finding is a [`Severity::Defect`].
    pub fn is_valid(&self) -> bool {
        !self.findings.iter().any(|f| f.severity == Severity::Defect)
    }

    /// The findings of one severity.
    pub fn with_severity(&self, severity: Severity) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.severity == severity)
    }

    /// The defects that NanoVer's checker does not report (or crashes on).
    pub fn missed_by_nanover(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| {
            f.severity == Severity::Defect
                && matches!(f.nanover, NanoverVerdict::Misses | NanoverVerdict::Crashes)
        })
    }
}

impl fmt::Display for FileReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.path.as_ref().map_or_else(
            || self.kind.extension().to_string(),
            |p| p.display().to_string(),
        );
        let version = self.version.map_or("?", Version::name);
        write!(
            f,
            "{name}: version {version}, {} bytes, {} records ({} decoded)",
            self.bytes, self.records, self.decoded
        )?;
        if let (Some(a), Some(b)) = (self.first_timestamp, self.last_timestamp) {
            write!(f, ", {} .. {}", seconds(Some(a), ""), seconds(Some(b), ""))?;
        }
        writeln!(
            f,
            ": {}",
            if self.is_valid() {
                "no defects"
            } else {
                "DEFECTIVE"
            }
        )?;
        for finding in &self.findings {
            writeln!(f, "  {finding}")?;
        }
        Ok(())
    }
}

/// What [`crate::check`] found in a recording (a `.traj` and its `.state`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// One report per file, trajectory first.
    pub files: Vec<FileReport>,
}

impl Report {
    /// True when no file has a defect.
    pub fn is_valid(&self) -> bool {
        self.files.iter().all(FileReport::is_valid)
    }

    /// Every finding of every file.
    pub fn findings(&self) -> impl Iterator<Item = &Finding> {
        self.files.iter().flat_map(|f| f.findings.iter())
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for file in &self.files {
            write!(f, "{file}")?;
        }
        Ok(())
    }
}
