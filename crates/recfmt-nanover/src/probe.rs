//! Detection and the format descriptor for the registry.

use std::path::Path;

use recfmt_core::{FormatDescriptor, PROBE_LEN, ReadOptions, RecordingReader, Score, Tier};

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

fn open(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Box<dyn RecordingReader>> {
    Ok(Box::new(NanoverRecording::open(path, options)?))
}

/// The NanoVer format descriptor for a [`recfmt_core::Registry`]. Opening either file of a
/// pair reads both; `create` makes a [`crate::NanoverWriter`] (the `frames` + `state` schema
/// that [`crate::NanoverRecording`] reads, written back as `.traj` + `.state`).
pub static FORMAT: FormatDescriptor = FormatDescriptor {
    info: INFO,
    tier: Tier::Magic,
    score,
    score_dir: None,
    open,
    create: Some(crate::write::create),
};
