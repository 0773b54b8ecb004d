//! Checking and repairing recordings.
//!
//! [`check`] reports what NanoVer's `nanover-check-recording` reports (defective blocks,
//! timestamps that do not increase or jump by two minutes or more) and what it misses:
//!
//! * a payload truncated by fewer than 24 bytes (its bounds check leaves out the record
//!   header) and a torn record header at the end (its scan stops silently);
//! * a defective block running to the end of the file (it crashes there);
//! * payloads that are not valid protobuf (it never decodes them);
//! * resets lost to the Python gRPC recorder's aggregation (`system.simulation.counter`
//!   changes on a frame whose index is not 0);
//! * per-particle arrays whose length does not match the particle count, and index arrays
//!   (`particle.residues`, `residue.chains`, `bond.pairs`, `forces.user.index`) pointing past
//!   what they index;
//! * and it notes the writer quirks this crate reads (empty float arrays stored as index
//!   arrays, `residue.ids` as floats) as [`Severity::Info`].
//!
//! Each [`Finding`] says what NanoVer's tool does with it ([`NanoverVerdict`]).
//!
//! [`repair`] writes a valid copy:
//!
//! * garbage between records (found by resynchronising) and a torn last record are dropped;
//! * records whose payload does not decode are dropped;
//! * timestamps are made strictly increasing: a lone outlier between two good neighbours gets
//!   the midpoint of theirs; a step back shifts that record and all later ones so the step
//!   becomes 1 µs (intervals after it are kept); payload bytes are copied unchanged;
//! * a frame whose `system.simulation.counter` changed without a reset gets `frame_index` 0
//!   (re-encoded), so every reader sees the new simulation ([`RepairOptions`]);
//! * pauses of two minutes or more are kept (they are legal; NanoVer's checker would drop the
//!   records after them), as are array-length and index problems (reported only).

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use prost::Message;
use recfmt_core::{AtomicFile, Limits, Replace, ResultExt};

use crate::aggregate::FrameView;
use crate::error::{Error, Result};
use crate::header::{FileKind, RECORD_HEADER_LEN, Version, VersionPolicy};
use crate::io::{Reader, Record, Timed, Writer};
use crate::proto::{GetFrameResponse, StateUpdate, ValueArray, Values};
use crate::report::{FileReport, Finding, FindingKind, NanoverVerdict, Report, Severity};
use crate::timeline::RecordingPaths;

/// Options of [`check_reader`] and [`repair_stream`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOptions {
    /// Size limits (a record longer than `max_record_len` is treated as corrupt).
    pub limits: Limits,
    /// Which versions are accepted.
    pub version: VersionPolicy,
    /// Repair only: give `frame_index` 0 to frames that change `system.simulation.counter`
    /// without a reset (default true).
    pub restore_lost_resets: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            limits: Limits::default(),
            version: VersionPolicy::Auto,
            restore_lost_resets: true,
        }
    }
}

/// The repair options (the same struct as the check options).
pub type RepairOptions = CheckOptions;

/// Checks a recording: either file of a pair checks both (a `.traj` the `.state` beside it
/// and the reverse; see [`RecordingPaths::resolve`]; [`check_file`] checks one file alone).
/// Errors (a missing file) become findings of kind
/// [`FindingKind::Io`].
///
/// ```
/// let dir = std::env::temp_dir().join(format!("nanover-check-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let (traj, state) = recfmt_nanover::generate::small_recording_bytes()?;
/// std::fs::write(dir.join("a.traj"), &traj[..traj.len() - 5])?; // torn last record
/// std::fs::write(dir.join("a.state"), &state)?;
///
/// let report = recfmt_nanover::check(dir.join("a.traj"));
/// assert_eq!(report.files.len(), 2);
/// assert!(!report.files[0].is_valid());
/// assert!(report.files[1].is_valid());
/// // NanoVer's checker misses a payload short by fewer than 24 bytes:
/// assert_eq!(report.files[0].missed_by_nanover().count(), 1);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check(path: impl AsRef<Path>) -> Report {
    let paths = RecordingPaths::resolve(path.as_ref());
    let mut report = Report::default();
    for (p, kind) in [
        (&paths.traj, FileKind::Trajectory),
        (&paths.state, FileKind::State),
    ] {
        if let Some(p) = p {
            report
                .files
                .push(check_file(p, kind, &CheckOptions::default()));
        }
    }
    report
}

/// Checks one file of a known kind.
pub fn check_file(path: &Path, kind: FileKind, options: &CheckOptions) -> FileReport {
    let opened = File::open(path).and_then(|f| {
        let len = f.metadata()?.len();
        Ok((f, len))
    });
    let mut report = match opened {
        Ok((file, len)) => check_reader(BufReader::new(file), kind, Some(len), options),
        Err(e) => {
            let mut r = FileReport::new(None, kind);
            r.findings.push(Finding::new(
                Severity::Defect,
                FindingKind::Io,
                NanoverVerdict::NotApplicable,
                e.to_string(),
            ));
            r
        }
    };
    report.path = Some(path.to_path_buf());
    report
}

fn header_finding(e: &Error) -> Finding {
    let (kind, nanover) = match e {
        Error::BadMagic { .. } => (FindingKind::BadMagic, NanoverVerdict::Crashes),
        Error::UnsupportedVersion { .. } => {
            (FindingKind::UnsupportedVersion, NanoverVerdict::Crashes)
        }
        Error::ShortHeader { .. } => (FindingKind::ShortHeader, NanoverVerdict::Crashes),
        _ => (FindingKind::Io, NanoverVerdict::NotApplicable),
    };
    Finding::new(Severity::Defect, kind, nanover, e.to_string()).at(0, 0)
}

/// Collects semantic findings, merging repeats of the same kind and key.
#[derive(Default)]
struct Semantics {
    findings: Vec<Finding>,
    seen: BTreeMap<(FindingKind, String), usize>,
}

impl Semantics {
    fn note(&mut self, key: &str, finding: Finding) {
        let id = (finding.kind, key.to_string());
        match self.seen.get(&id) {
            Some(&i) => self.findings[i].count += 1,
            None => {
                self.seen.insert(id, self.findings.len());
                self.findings.push(finding);
            }
        }
    }
}

/// Per-particle arrays and their width (elements per particle).
const PARTICLE_ARRAYS: [(&str, usize); 7] = [
    ("particle.positions", 3),
    ("particle.velocities", 3),
    ("particle.forces", 3),
    ("particle.forces.system", 3),
    ("particle.elements", 1),
    ("particle.names", 1),
    ("particle.residues", 1),
];

fn expect_type(
    sem: &mut Semantics,
    at: (u64, u64),
    key: &str,
    array: &ValueArray,
    want: &'static str,
) {
    let ok = match want {
        "float_values" => array.as_floats().is_some(),
        "index_values" => array.as_indices().is_some(),
        _ => true,
    };
    if !ok {
        sem.note(
            key,
            Finding::new(
                Severity::Warning,
                FindingKind::ArrayType,
                NanoverVerdict::NotApplicable,
                format!("{key} is {}, expected {want}", array.kind_name()),
            )
            .at(at.0, 0)
            .record(at.1),
        );
    }
}

fn max_index(array: &ValueArray) -> Option<u32> {
    array.as_indices()?.iter().copied().max()
}

/// Semantic checks of one decoded frame against the aggregate before it.
fn check_frame(sem: &mut Semantics, view: &mut FrameView, msg: &GetFrameResponse, at: (u64, u64)) {
    let found = |kind, severity, message: String| {
        Finding::new(severity, kind, NanoverVerdict::NotApplicable, message)
            .at(at.0, 0)
            .record(at.1)
    };
    if msg.frame_index != 0 && view.counter_changes(msg) {
        sem.note(
            "counter",
            Finding {
                nanover: NanoverVerdict::Misses,
                ..found(
                    FindingKind::LostReset,
                    Severity::Warning,
                    format!(
                        "system.simulation.counter changes at frame_index {} (a reset merged into a later frame); readers that reset on index 0 only carry stale keys over",
                        msg.frame_index
                    ),
                )
            },
        );
    }
    view.apply(msg);
    let Some(frame) = &msg.frame else { return };
    // Writer quirks.
    for (key, array) in &frame.arrays {
        if array.is_empty()
            && matches!(array.values, Some(Values::IndexValues(_)))
            && key == "forces.user.sparse"
        {
            sem.note(
                key,
                found(
                    FindingKind::EmptyArrayAsIndex,
                    Severity::Info,
                    format!("empty {key} stored as an index array (read as an empty float array)"),
                ),
            );
        }
    }
    if let Some(a) = frame.arrays.get("residue.ids")
        && matches!(a.values, Some(Values::FloatValues(_)))
    {
        sem.note(
            "residue.ids",
            found(
                FindingKind::ResidueIdsAsFloat,
                Severity::Info,
                "residue.ids stored as floats (Rust server); read as text".into(),
            ),
        );
    }
    // Types and lengths, checked on the aggregate when this frame touches them.
    let n = view.particle_count();
    for (key, width) in PARTICLE_ARRAYS {
        let Some(array) = frame.arrays.get(key) else {
            continue;
        };
        let want = match key {
            "particle.names" => "string_values",
            "particle.elements" | "particle.residues" => "index_values",
            _ => "float_values",
        };
        expect_type(sem, at, key, array, want);
        if let Some(n) = n
            && array.len() != n * width
        {
            sem.note(
                key,
                found(
                    FindingKind::ArrayLength,
                    Severity::Warning,
                    format!(
                        "{key} has {} elements for {n} particles (expected {})",
                        array.len(),
                        n * width
                    ),
                ),
            );
        }
    }
    let touches = |keys: &[&str]| {
        keys.iter()
            .any(|k| frame.arrays.contains_key(*k) || frame.values.contains_key(*k))
    };
    let count = |value: &str, array: &str| -> Option<usize> {
        view.number(value)
            .filter(|c| *c >= 0.0 && c.fract() == 0.0)
            .map(|c| c as usize)
            .or_else(|| view.arrays.get(array).map(ValueArray::len))
    };
    let mut out_of_range = |key: &str, limit: Option<usize>, what: &str| {
        if let (Some(array), Some(limit)) = (view.arrays.get(key), limit)
            && let Some(m) = max_index(array)
            && m as usize >= limit
        {
            sem.note(
                key,
                found(
                    FindingKind::IndexOutOfRange,
                    Severity::Warning,
                    format!("{key} refers to {what} {m}, but there are {limit}"),
                ),
            );
        }
    };
    if touches(&["particle.residues", "residue.count", "residue.names"]) {
        out_of_range(
            "particle.residues",
            count("residue.count", "residue.names"),
            "residue",
        );
    }
    if touches(&["residue.chains", "chain.count", "chain.names"]) {
        out_of_range(
            "residue.chains",
            count("chain.count", "chain.names"),
            "chain",
        );
    }
    if touches(&["bond.pairs", "particle.count", "particle.positions"]) {
        out_of_range("bond.pairs", n, "particle");
    }
    if touches(&["forces.user.index", "particle.count", "particle.positions"]) {
        out_of_range("forces.user.index", n, "particle");
    }
    if let Some(pairs) = frame.arrays.get("bond.pairs")
        && pairs.len() % 2 != 0
    {
        sem.note(
            "bond.pairs",
            found(
                FindingKind::ArrayLength,
                Severity::Warning,
                format!("bond.pairs has an odd number of elements ({})", pairs.len()),
            ),
        );
    }
    if let (Some(index), Some(sparse)) = (
        frame.arrays.get("forces.user.index"),
        frame.arrays.get("forces.user.sparse"),
    ) && sparse.len() != 3 * index.len()
    {
        sem.note(
            "forces.user.sparse",
            found(
                FindingKind::ArrayLength,
                Severity::Warning,
                format!(
                    "forces.user.sparse has {} elements for {} forced particles",
                    sparse.len(),
                    index.len()
                ),
            ),
        );
    }
}

/// Checks one file from a byte source. Give `total_len` when known: it lets a corrupt length
/// field be told apart from a long record without reading.
pub fn check_reader<R: Read>(
    source: R,
    kind: FileKind,
    total_len: Option<u64>,
    options: &CheckOptions,
) -> FileReport {
    let mut report = FileReport::new(None, kind);
    report.bytes = total_len.unwrap_or(0);
    let mut reader = Reader::new(source, kind);
    reader.set_total_len(total_len);
    reader.set_resync(true);
    reader.set_limits(options.limits);
    reader.set_version_policy(options.version);
    match reader.read_header() {
        Ok(v) => report.version = Some(v),
        Err(e) => {
            report.findings.push(header_finding(&e));
            return report;
        }
    }
    let mut sem = Semantics::default();
    let mut view = FrameView::new();
    let mut first = None;
    let mut last = None;
    loop {
        let next = match kind {
            FileKind::Trajectory => {
                let mut frame = Timed::default();
                reader.read_frame(&mut frame).map(|more| {
                    more.then(|| {
                        let at = (reader.last_record_offset(), reader.records() - 1);
                        if frame.message.frame_index == 0 {
                            report.resets += 1;
                        }
                        check_frame(&mut sem, &mut view, &frame.message, at);
                        frame.timestamp
                    })
                })
            }
            FileKind::State => {
                let mut update = Timed::default();
                reader
                    .read_state(&mut update)
                    .map(|more| more.then_some(update.timestamp))
            }
        };
        match next {
            Ok(Some(t)) => {
                first.get_or_insert(t);
                last = Some(t);
            }
            Ok(None) => break,
            Err(e) => {
                report.findings.push(Finding::new(
                    Severity::Defect,
                    FindingKind::Io,
                    NanoverVerdict::NotApplicable,
                    e.to_string(),
                ));
                break;
            }
        }
    }
    if total_len.is_none() {
        report.bytes = reader.position();
    }
    report.records = reader.records();
    report.decoded = reader.decoded();
    report.first_timestamp = first;
    report.last_timestamp = last;
    let mut findings = reader.take_findings();
    findings.extend(sem.findings);
    findings.sort_by_key(|f| f.offset.unwrap_or(u64::MAX));
    report.findings.extend(findings);
    report
}

/// What [`repair`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairSummary {
    /// Trajectory or state.
    pub kind: FileKind,
    /// The version read and written.
    pub version: Version,
    /// Records found (sound framing).
    pub records_in: u64,
    /// Records written.
    pub records_written: u64,
    /// Records dropped because their payload does not decode.
    pub records_dropped: u64,
    /// Bytes dropped: garbage, torn tail and dropped records.
    pub bytes_dropped: u64,
    /// Records whose timestamp was changed.
    pub timestamps_fixed: u64,
    /// Frames given `frame_index` 0 because their simulation counter changed.
    pub resets_restored: u64,
    /// What the check found on the way (framing, payloads, timestamps).
    pub findings: Vec<Finding>,
}

impl RepairSummary {
    /// True when the repaired copy lacks something the input had: records whose payload did
    /// not decode, garbage between records, or a torn last record (`records_dropped > 0` or
    /// `bytes_dropped > 0`). A caller (`recfmt recover`) should then report data loss.
    pub fn lost_data(&self) -> bool {
        self.records_dropped > 0 || self.bytes_dropped > 0
    }

    /// True when the copy differs from the input at all: [`RepairSummary::lost_data`], or
    /// timestamps changed, or resets restored. False means the input was already valid and
    /// the copy has the same records.
    pub fn changed(&self) -> bool {
        self.lost_data() || self.timestamps_fixed > 0 || self.resets_restored > 0
    }
}

/// Makes timestamps strictly increasing with the rules of the module docs.
#[derive(Debug, Default)]
struct TimestampFixer {
    prev: Option<u128>,
    offset: i128,
}

fn shift(t: u128, offset: i128) -> u128 {
    let t = i128::try_from(t)
        .unwrap_or(i128::MAX)
        .saturating_add(offset);
    u128::try_from(t).unwrap_or(0)
}

impl TimestampFixer {
    fn fix(&mut self, raw: u128, next: Option<u128>, next2: Option<u128>) -> u128 {
        let t = shift(raw, self.offset);
        let next = next.map(|n| shift(n, self.offset));
        let next2 = next2.map(|n| shift(n, self.offset));
        let out = match self.prev {
            None => match (next, next2) {
                // A first record after its successors, which themselves increase.
                (Some(n), Some(n2)) if t >= n && n < n2 && n > 0 => {
                    n.saturating_sub(n2 - n).min(n - 1)
                }
                _ => t,
            },
            Some(p) => {
                if t > p && next.is_none_or(|n| t < n || n <= p) {
                    t
                } else if let Some(n) = next.filter(|&n| n > p + 1) {
                    p + (n - p) / 2
                } else if t <= p {
                    let step = i128::try_from(p + 1 - t).unwrap_or(i128::MAX);
                    self.offset = self.offset.saturating_add(step);
                    p + 1
                } else {
                    p + 1
                }
            }
        };
        self.prev = Some(out);
        out
    }
}

/// Repairs one file from a byte source into `output` (see the module docs for what changes).
/// Returns the sink and a summary.
pub fn repair_stream<R: Read, W: Write>(
    source: R,
    kind: FileKind,
    total_len: Option<u64>,
    output: W,
    options: &RepairOptions,
) -> Result<(W, RepairSummary)> {
    let mut reader = Reader::new(source, kind);
    reader.set_total_len(total_len);
    reader.set_resync(true);
    reader.set_limits(options.limits);
    reader.set_version_policy(options.version);
    let version = reader.read_header()?;
    let mut writer = Writer::new(output, kind, version)?;
    let mut summary = RepairSummary {
        kind,
        version,
        records_in: 0,
        records_written: 0,
        records_dropped: 0,
        bytes_dropped: 0,
        timestamps_fixed: 0,
        resets_restored: 0,
        findings: Vec::new(),
    };
    let mut queue: VecDeque<Record> = VecDeque::new();
    let mut fixer = TimestampFixer::default();
    let mut view = FrameView::new();
    let mut ended = false;
    let mut scratch = Vec::new();
    loop {
        while !ended && queue.len() < 3 {
            let mut record = Record::default();
            if !reader.read_record(&mut record)? {
                ended = true;
                break;
            }
            summary.records_in += 1;
            let payload_ok = match (kind, version) {
                (FileKind::State, _) => StateUpdate::decode(&record.payload[..]).is_ok(),
                (FileKind::Trajectory, Version::V1) => {
                    crate::proto::FrameData::decode(&record.payload[..]).is_ok()
                }
                (FileKind::Trajectory, Version::V2) => {
                    match GetFrameResponse::decode(&record.payload[..]) {
                        Ok(mut msg) => {
                            if options.restore_lost_resets
                                && msg.frame_index != 0
                                && view.counter_changes(&msg)
                            {
                                msg.frame_index = 0;
                                record.payload = msg.encode_to_vec();
                                summary.resets_restored += 1;
                            }
                            view.apply(&msg);
                            true
                        }
                        Err(_) => false,
                    }
                }
            };
            if payload_ok {
                queue.push_back(record);
            } else {
                summary.records_dropped += 1;
                summary.bytes_dropped += (RECORD_HEADER_LEN + record.payload.len()) as u64;
                let mut f = Finding::new(
                    Severity::Defect,
                    FindingKind::CorruptPayload,
                    NanoverVerdict::Misses,
                    format!(
                        "payload is not a valid {}; record dropped",
                        kind.message_name(version)
                    ),
                )
                .at(
                    record.offset,
                    (RECORD_HEADER_LEN + record.payload.len()) as u64,
                );
                f.prev_timestamp = Some(record.timestamp);
                summary.findings.push(f);
            }
        }
        let Some(record) = queue.pop_front() else {
            break;
        };
        let next = queue.front().map(|r| r.timestamp);
        let next2 = queue.get(1).map(|r| r.timestamp);
        let t = fixer.fix(record.timestamp, next, next2);
        if t != record.timestamp {
            summary.timestamps_fixed += 1;
        }
        scratch.clear();
        scratch.extend_from_slice(&record.payload);
        writer.write_record(t, &scratch)?;
        summary.records_written += 1;
    }
    let integrity = reader.integrity().clone();
    summary.bytes_dropped += integrity.bytes_lost;
    let mut findings = reader.take_findings();
    findings.append(&mut summary.findings);
    findings.sort_by_key(|f| f.offset.unwrap_or(u64::MAX));
    summary.findings = findings;
    Ok((writer.finish()?, summary))
}

/// Repairs the file at `input` into `output` (written under a temporary name and renamed when
/// complete). The kind comes from the input's extension (else its content).
///
/// ```
/// let dir = std::env::temp_dir().join(format!("nanover-repair-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let (mut traj, _) = recfmt_nanover::generate::small_recording_bytes()?;
/// let first_len = u64::from_le_bytes(traj[32..40].try_into()?) as usize;
/// let boundary = 16 + 24 + first_len;
/// traj.splice(boundary..boundary, [0xAB; 37]); // garbage between records 0 and 1
/// std::fs::write(dir.join("a.traj"), &traj)?;
///
/// let summary = recfmt_nanover::repair(&dir.join("a.traj"), &dir.join("fixed.traj"))?;
/// assert_eq!(summary.records_written, 7);
/// assert!(summary.lost_data()); // the 37 bytes of garbage
/// assert_eq!(summary.bytes_dropped, 37);
/// assert!(recfmt_nanover::check(dir.join("fixed.traj")).is_valid());
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn repair(input: &Path, output: &Path) -> recfmt_core::Result<RepairSummary> {
    repair_with(input, output, &RepairOptions::default())
}

/// [`repair`] with options.
pub fn repair_with(
    input: &Path,
    output: &Path,
    options: &RepairOptions,
) -> recfmt_core::Result<RepairSummary> {
    repair_replacing(input, output, options, Replace::Never)
}

/// [`repair_with`], replacing an existing `output` as `replace` allows.
pub fn repair_replacing(
    input: &Path,
    output: &Path,
    options: &RepairOptions,
    replace: Replace,
) -> recfmt_core::Result<RepairSummary> {
    recfmt_core::atomic::check_target(output, replace)?;
    let kind = FileKind::from_path(input)
        .or_else(|| crate::timeline::sniff_path(input))
        .unwrap_or(FileKind::Trajectory);
    let file = File::open(input).in_file(input)?;
    let len = file.metadata().in_file(input)?.len();
    let out = AtomicFile::create(output, replace).in_file(output)?;
    let (out, summary) = repair_stream(
        BufReader::new(file),
        kind,
        Some(len),
        BufWriter::new(out),
        options,
    )
    .in_file(input)?;
    let out = out
        .into_inner()
        .map_err(|e| e.into_error())
        .in_file(output)?;
    out.commit().in_file(output)?;
    Ok(summary)
}

/// The path NanoVer's checker writes a repaired copy to: `<stem>--repaired--.<ext>`.
pub fn repaired_path(input: &Path) -> PathBuf {
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let ext = input
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    input.with_file_name(format!("{stem}--repaired--{ext}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix_all(raw: &[u128]) -> Vec<u128> {
        let mut f = TimestampFixer::default();
        (0..raw.len())
            .map(|i| f.fix(raw[i], raw.get(i + 1).copied(), raw.get(i + 2).copied()))
            .collect()
    }

    #[test]
    fn the_summary_says_whether_anything_was_dropped_or_changed() {
        let repair = |bytes: &[u8]| {
            repair_stream(
                bytes,
                FileKind::Trajectory,
                Some(bytes.len() as u64),
                Vec::new(),
                &RepairOptions::default(),
            )
            .unwrap()
            .1
        };
        let (traj, _) = crate::generate::small_recording_bytes().unwrap();
        let intact = repair(&traj);
        assert!(!intact.lost_data() && !intact.changed(), "{intact:?}");
        let torn = repair(&traj[..traj.len() - 3]);
        assert!(torn.lost_data() && torn.changed());
        assert_eq!((torn.records_written, torn.records_dropped), (6, 0));
        assert!(torn.bytes_dropped > 0);
        // Timestamps made increasing: changed, but nothing lost.
        let (mut frames, _) = crate::generate::small_recording();
        frames[2].0 = frames[1].0;
        let mut w = Writer::new(Vec::new(), FileKind::Trajectory, Version::V2).unwrap();
        w.set_require_increasing(false);
        for (t, f) in &frames {
            w.write_frame(*t, f).unwrap();
        }
        let fixed = repair(&w.finish().unwrap());
        assert!(!fixed.lost_data() && fixed.changed());
        assert_eq!(fixed.timestamps_fixed, 1);
    }

    #[test]
    fn timestamp_fixes() {
        assert_eq!(fix_all(&[10, 20, 30]), [10, 20, 30]);
        // Low and high outliers get the midpoint of their neighbours.
        assert_eq!(fix_all(&[10, 20, 5, 40, 50]), [10, 20, 30, 40, 50]);
        assert_eq!(fix_all(&[10, 20, 99_999, 40, 50]), [10, 20, 30, 40, 50]);
        // A step back shifts the rest, keeping intervals.
        assert_eq!(fix_all(&[10, 20, 30, 5, 6, 8]), [10, 20, 30, 31, 32, 34]);
        // Equal timestamps.
        assert_eq!(fix_all(&[10, 10, 10, 40]), [10, 11, 26, 41]);
        // A first record after its successors.
        assert_eq!(fix_all(&[1 << 50, 20, 30, 40]), [10, 20, 30, 40]);
        // Three records, the middle one off: it is the outlier.
        assert_eq!(fix_all(&[10, 20, 15]), [10, 12, 15]);
        for raw in [
            [5u128, 4, 3, 2, 1],
            [0, 0, 0, 0, 0],
            [u128::MAX, 0, u128::MAX, 1, 2],
        ] {
            let out = fix_all(&raw);
            assert!(out.windows(2).all(|w| w[0] < w[1]), "{raw:?} -> {out:?}");
        }
    }
}
