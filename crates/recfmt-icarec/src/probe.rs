//! Detection and the format descriptor for the registry.

use std::io::Read;
use std::path::Path;

use recfmt_core::{FormatDescriptor, Score, Tier};

use crate::frames::DYNAMIC_FILE;
use crate::recording::{INFO, create_boxed, open_boxed};
use crate::schema::SCHEMA_FILE;

/// Scores the first bytes of a plain file: ICAREC is a directory, so always `No`.
///
/// ```
/// assert_eq!(recfmt_icarec::score(b"{\"schema_version\": \"1.0.0\"}"), recfmt_core::Score::No);
/// ```
pub fn score(_head: &[u8]) -> Score {
    Score::No
}

/// Largest `schema.json` detection will parse.
const MAX_PROBE_SCHEMA: u64 = 16 << 20;

/// Scores a directory: `schema.json` and `dynamic_signals.bin` are present and `schema.json`
/// is a JSON object with a `schema_version` string. That is as sure as a magic number.
///
/// ```
/// let dir = tempfile::tempdir()?;
/// assert_eq!(recfmt_icarec::score_dir(dir.path()), recfmt_core::Score::No);
/// recfmt_icarec::generate::write_all_types(dir.path(), 2)?;
/// assert_eq!(recfmt_icarec::score_dir(dir.path()), recfmt_core::Score::Yes(255));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn score_dir(dir: &Path) -> Score {
    if !dir.join(DYNAMIC_FILE).is_file() {
        return Score::No;
    }
    let Ok(file) = std::fs::File::open(dir.join(SCHEMA_FILE)) else {
        return Score::No;
    };
    let mut text = Vec::new();
    if file
        .take(MAX_PROBE_SCHEMA + 1)
        .read_to_end(&mut text)
        .is_err()
        || text.len() as u64 > MAX_PROBE_SCHEMA
    {
        return Score::No;
    }
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&text) else {
        return Score::No;
    };
    match value.get("schema_version") {
        Some(serde_json::Value::String(_)) => Score::Yes(255),
        _ => Score::No,
    }
}

/// The ICAREC format descriptor for a [`recfmt_core::Registry`].
///
/// It also copies recordings faithfully, checks checksums, digests and compatibility with a
/// current schema in `validate` (`--against SCHEMA`). The state at a time is
/// [`crate::find_state`].
pub static FORMAT: FormatDescriptor = FormatDescriptor {
    score_dir: Some(score_dir),
    create: Some(create_boxed),
    copy: Some(crate::hooks::copy),
    validate: Some(recfmt_core::Validator {
        against: Some(crate::hooks::against),
        check: crate::hooks::check,
    }),
    // MAT-files from any recording: what Icarus users load in MATLAB.
    #[cfg(feature = "hdf5")]
    outputs: &crate::mat::OUTPUTS,
    ..FormatDescriptor::new(INFO, Tier::Magic, score, open_boxed)
};
