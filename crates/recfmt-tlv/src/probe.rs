//! Detection and the format descriptor for the registry.

use std::io::Read;
use std::path::Path;

use recfmt_core::{FormatDescriptor, ReadOptions, RecordingReader, Score, Tier};

use crate::header::MAGIC;
use crate::recording::{INFO, UsvlogRecording};

/// Scores the first bytes of a file: `USVLOG` at byte 0 is a full match.
///
/// ```
/// use recfmt_core::Score;
/// assert_eq!(recfmt_tlv::score(b"USVLOG\x01\0\0\0\x01"), Score::Yes(255));
/// assert_eq!(recfmt_tlv::score(b"CARLA"), Score::No);
/// ```
pub fn score(head: &[u8]) -> Score {
    if head.starts_with(MAGIC) {
        Score::Yes(255)
    } else {
        Score::No
    }
}

/// Scores a directory: a session folder holds a `timeseries.bin` that starts with the magic.
pub fn score_dir(dir: &Path) -> Score {
    let mut head = [0u8; 6];
    let ok = std::fs::File::open(dir.join("timeseries.bin"))
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok();
    if ok { score(&head) } else { Score::No }
}

fn open(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Box<dyn RecordingReader>> {
    Ok(Box::new(UsvlogRecording::open(path, options)?))
}

fn create(
    path: &Path,
    write: &recfmt_core::WriteOptions,
) -> recfmt_core::Result<Box<dyn recfmt_core::RecordingWriter>> {
    use recfmt_core::ResultExt;
    Ok(Box::new(
        crate::UsvlogRecordingWriter::create_with(path, write.replace).in_file(path)?,
    ))
}

/// The USVLOG format descriptor for a [`recfmt_core::Registry`].
/// Besides reading and writing it copies sessions byte for byte and takes `layout` options
/// (record layout files, as `ReadOptions::layouts`).
pub static FORMAT: FormatDescriptor = FormatDescriptor {
    score_dir: Some(score_dir),
    create: Some(create),
    options: &OPTIONS,
    copy: Some(copy),
    ..FormatDescriptor::new(INFO, Tier::Magic, score, open_with_layouts)
};

static OPTIONS: [recfmt_core::FormatOption; 1] = [recfmt_core::FormatOption {
    key: "layout",
    kind: recfmt_core::OptionKind::Path,
    default: None,
    help: "a record layout file (JSON or TOML) for record types recfmt does not know (repeatable)",
}];

/// Opens with the `layout` options added to the layouts of `options`.
fn open_with_layouts(
    path: &Path,
    options: &ReadOptions,
) -> recfmt_core::Result<Box<dyn RecordingReader>> {
    if options.format_options.get("layout").is_none() {
        return open(path, options);
    }
    let mut options = options.clone();
    let extra: Vec<std::path::PathBuf> = options
        .format_options
        .get_all("layout")
        .map(std::path::PathBuf::from)
        .collect();
    options.layouts.extend(extra);
    open(path, &options)
}

fn copy(
    source: &Path,
    target: &Path,
    _: &ReadOptions,
    write: &recfmt_core::WriteOptions,
) -> recfmt_core::Result<recfmt_core::Copied> {
    use recfmt_core::ResultExt;
    crate::copy_session_with(source, target, write.replace).in_file(source)?;
    Ok(recfmt_core::Copied {
        summary: format!(
            "copied {} to {} record for record",
            source.display(),
            target.display()
        ),
        integrity: recfmt_core::Integrity::default(),
    })
}
