//! Detection and the format descriptor for the registry.

use std::path::Path;

use recfmt_core::{
    Findings, FormatDescriptor, FormatOption, OptionKind, PROBE_LEN, ReadOptions, RecordingReader,
    Score, SpecialOutput, Tier, Validator, WriteOptions,
};

use crate::header::{FORMAT_VERSION, FileKind, MAGIC, sniff_v1};
use crate::recording::{INFO, NanoverRecording};

/// Scores the first bytes of a file: the magic and version 2 are a full match (255); the magic
/// with another version 200 (opening then reports the unsupported version); a zip whose first
/// entry is `index.msgpack` or `messages.msgpack` (a `.nanover.zip`) 230; a headerless
/// version-1 file 120, but only when [`sniff_v1`] is sure (as a trajectory or as a state
/// file).
///
/// ```
/// use recfmt_core::Score;
/// assert_eq!(recfmt_nanover::score(&recfmt_nanover::header_bytes()), Score::Yes(255));
/// assert_eq!(recfmt_nanover::score(b"CARLA\0\0\0\0\0\0\0\0\0\0\0"), Score::No);
/// ```
pub fn score(head: &[u8]) -> Score {
    if head.len() >= 8 && head[..8] == MAGIC.to_le_bytes() {
        if head.len() < 16 {
            return Score::Yes(200);
        }
        let mut v = [0; 8];
        v.copy_from_slice(&head[8..16]);
        return if u64::from_le_bytes(v) == FORMAT_VERSION {
            Score::Yes(255)
        } else {
            Score::Yes(200)
        };
    }
    if crate::recording::zip_head_is_nanover(head) {
        return Score::Yes(230);
    }
    let whole = head.len() < PROBE_LEN;
    if sniff_v1(head, FileKind::Trajectory, whole) || sniff_v1(head, FileKind::State, whole) {
        Score::Yes(120)
    } else {
        Score::No
    }
}

/// Opens with the `version` option when given (1: the headerless files of 2023's Rust
/// server, 2: require the header).
fn open(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Box<dyn RecordingReader>> {
    let policy = match options.format_options.get_i64("version") {
        Some(1) => crate::VersionPolicy::V1,
        Some(_) => crate::VersionPolicy::V2,
        None => crate::VersionPolicy::Auto,
    };
    Ok(Box::new(NanoverRecording::open_with(
        path, options, policy,
    )?))
}

/// The options NanoVer understands.
static OPTIONS: [FormatOption; 1] = [FormatOption {
    key: "version",
    kind: OptionKind::Integer { min: 1, max: 2 },
    default: None,
    help: "read .traj/.state files as this format version (1: the headerless files of 2023's Rust server) instead of detecting it",
}];

/// A faithful copy of a `.traj`/`.state`; a `.nanover.zip` becomes a `.traj` + `.state`.
/// What reading lost is returned, so a damaged source is reported.
fn copy(
    source: &Path,
    target: &Path,
    _: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<recfmt_core::Copied> {
    let copied = crate::copy_recording_with(source, target, write.replace)?;
    let how = if crate::recording::is_nanover_zip(source) {
        "message by message, as a .traj and .state"
    } else {
        "record for record"
    };
    let targets: Vec<String> = copied
        .files
        .iter()
        .map(|f| f.target.display().to_string())
        .collect();
    Ok(recfmt_core::Copied {
        summary: format!(
            "copied {} to {} {how}",
            source.display(),
            targets.join(" and ")
        ),
        integrity: copied.integrity(),
    })
}

/// NanoVer's own record checker: defects are problems, the rest notes. A `.nanover.zip`
/// has no records to check: every message is decoded instead.
fn check(path: &Path, _: Option<&Path>, read: &ReadOptions) -> recfmt_core::Result<Findings> {
    if crate::recording::is_nanover_zip(path) {
        return check_zip(path, read);
    }
    let report = crate::check(path);
    let mut findings = Findings::default();
    for finding in report.findings() {
        if finding.severity == crate::Severity::Defect {
            findings.problems.push(finding.to_string());
        } else {
            findings.notes.push(finding.to_string());
        }
    }
    Ok(findings)
}

/// Decodes every message of a `.nanover.zip` (one at a time): what was lost is in the
/// reader's integrity, which `validate` reports; the notes count what the zip holds.
#[cfg(feature = "nanover-zip")]
fn check_zip(path: &Path, read: &ReadOptions) -> recfmt_core::Result<Findings> {
    use recfmt_core::ResultExt;
    let file = std::fs::File::open(path).in_file(path)?;
    let mut events =
        crate::nzip::ZipEvents::open(std::io::BufReader::new(file), &read.limits).in_file(path)?;
    let entries = events.len();
    let (mut frames, mut states) = (0u64, 0u64);
    while let Some(e) = events.next_event().in_file(path)? {
        frames += u64::from(e.frame.is_some());
        states += u64::from(e.state.is_some());
    }
    let mut findings = Findings::default();
    findings.notes.push(format!(
        ".nanover.zip: {entries} index entries, {frames} frames and {states} state updates decoded"
    ));
    Ok(findings)
}

#[cfg(not(feature = "nanover-zip"))]
fn check_zip(path: &Path, _: &ReadOptions) -> recfmt_core::Result<Findings> {
    Err(crate::recording::zip_unsupported(path))
}

#[cfg(feature = "nanover-zip")]
fn write_zip(
    input: &Path,
    output: &Path,
    read: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<recfmt_core::Written> {
    recfmt_core::atomic::check_target(output, write.replace)?;
    if crate::recording::is_nanover_zip(input) {
        return copy_zip(input, output, read, write);
    }
    let paths = crate::RecordingPaths::resolve(input);
    let timeline = crate::Timeline::open(&paths, &ReadOptions::default())?;
    let summary = crate::write_zip_events_with(timeline, output, write.replace)?;
    Ok(recfmt_core::Written {
        notes: vec![format!(
            "wrote {} ({} frames, {} state updates)",
            output.display(),
            summary.frames,
            summary.states
        )],
        integrity: None,
    })
}

/// A `.nanover.zip` into a `.nanover.zip`: an intact one is copied byte for byte (after
/// every message decoded); a damaged one is written anew from the messages it still holds,
/// with what was lost reported.
#[cfg(feature = "nanover-zip")]
fn copy_zip(
    input: &Path,
    output: &Path,
    read: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<recfmt_core::Written> {
    use recfmt_core::{AtomicFile, ResultExt};
    let open = || -> recfmt_core::Result<_> {
        let file = std::fs::File::open(input).in_file(input)?;
        crate::nzip::ZipEvents::open(std::io::BufReader::new(file), &read.limits).in_file(input)
    };
    let mut events = open()?;
    let mut messages = 0u64;
    while events.next_event().in_file(input)?.is_some() {
        messages += 1;
    }
    if !events.integrity().lost_data() {
        let mut source = std::fs::File::open(input).in_file(input)?;
        let mut out = AtomicFile::create(output, write.replace).in_file(output)?;
        let bytes = std::io::copy(&mut source, &mut out).in_file(output)?;
        out.commit().in_file(output)?;
        return Ok(recfmt_core::Written {
            notes: vec![format!(
                "copied {} to {} byte for byte ({messages} messages, {bytes} bytes)",
                input.display(),
                output.display()
            )],
            integrity: Some(recfmt_core::Integrity::default()),
        });
    }
    events.rewind();
    let summary = crate::write_zip_events_with(
        (&mut events).map(|e| e.map_err(|e| recfmt_core::Error::from(e).in_file(input).into())),
        output,
        write.replace,
    )?;
    Ok(recfmt_core::Written {
        notes: vec![format!(
            "wrote {} from the {} frames and {} state updates {} still holds",
            output.display(),
            summary.frames,
            summary.states,
            input.display()
        )],
        integrity: Some(events.integrity().clone()),
    })
}

/// HDF5 with positions as [frames x particles x 3] per session (the generic exporter has no
/// list columns).
#[cfg(feature = "hdf5")]
fn write_hdf5(
    input: &Path,
    output: &Path,
    _: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<recfmt_core::Written> {
    recfmt_core::atomic::check_target(output, write.replace)?;
    let options = crate::hdf5::Hdf5Options {
        replace: write.replace,
        ..Default::default()
    };
    let summary = crate::hdf5::write_hdf5(input, output, &options)?;
    let mut notes: Vec<String> = summary.notes.iter().map(|n| format!("note: {n}")).collect();
    notes.push(format!(
        "wrote {} ({} sessions, {} state rows)",
        output.display(),
        summary.sessions.len(),
        summary.state_rows
    ));
    Ok(recfmt_core::Written {
        notes,
        integrity: Some(summary.integrity),
    })
}

#[cfg(any(feature = "nanover-zip", feature = "hdf5"))]
const ACCEPTS: &str = "NanoVer recordings (.traj/.state)";

static OUTPUTS: &[SpecialOutput] = &[
    #[cfg(feature = "nanover-zip")]
    SpecialOutput {
        id: "nanover-zip",
        help: "NanoVer's newer single-file recording (`messages.msgpack` + `index.msgpack` in a zip)",
        file_extension: None,
        source: recfmt_core::OutputSource::Own {
            accepts: ACCEPTS,
            write: write_zip,
        },
        options: &[],
    },
    #[cfg(feature = "hdf5")]
    SpecialOutput {
        id: "hdf5",
        help: "HDF5 with a group per session and positions as [frames x particles x 3]",
        file_extension: Some("h5"),
        source: recfmt_core::OutputSource::Own {
            accepts: ACCEPTS,
            write: write_hdf5,
        },
        options: &[],
    },
];

/// The NanoVer format descriptor for a [`recfmt_core::Registry`]. Opening either file of a
/// pair reads both; `create` makes a [`crate::NanoverWriter`] (the `frames` + `state` schema
/// that [`crate::NanoverRecording`] reads, written back as `.traj` + `.state`).
/// It also copies faithfully, has the `version` option, checks records in `validate`,
/// and writes `.nanover.zip` and its own HDF5 layout.
pub static FORMAT: FormatDescriptor = FormatDescriptor {
    create: Some(crate::write::create),
    options: &OPTIONS,
    copy: Some(copy),
    validate: Some(Validator {
        against: None,
        check,
    }),
    outputs: OUTPUTS,
    ..FormatDescriptor::new(INFO, Tier::Magic, score, open)
};
