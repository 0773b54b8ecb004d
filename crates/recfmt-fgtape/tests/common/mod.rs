//! Locating the shared sample tapes.

#![allow(dead_code, clippy::unwrap_used)] // test helpers may unwrap

use std::io::Read;
use std::path::PathBuf;

/// The real samples: file name, and whether the frame layout is legacy.
pub const SAMPLES: [&str; 3] = [
    "fg2.11.0-dr400-jsbsim-normal.fgtape",
    "fg2020.3.16-c172p-normal-mp-short.fgtape",
    "fg2020.3.16-c172p-normal-nomp.fgtape",
];

/// The `fgtape` sample folder, or `None` (with a printed reason) when it is absent.
/// Panics when absent and `CI` is set.
pub fn samples_dir() -> Option<PathBuf> {
    let base = std::env::var_os("RECFMT_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/samples"
            ))
        });
    let dir = base.join("fgtape");
    if dir.join(SAMPLES[0]).is_file() {
        return Some(dir);
    }
    let reason = format!("fgtape samples not found in {}", dir.display());
    if std::env::var_os("CI").is_some() {
        panic!("{reason} (CI is set, so missing samples are an error)");
    }
    eprintln!("skipping: {reason}");
    None
}

/// A sample's path, or `None` when the samples are absent.
pub fn sample(name: &str) -> Option<PathBuf> {
    let path = samples_dir()?.join(name);
    assert!(path.is_file(), "sample {} missing", path.display());
    Some(path)
}

/// The decompressed content of a sample.
pub fn decompressed(name: &str) -> Option<Vec<u8>> {
    let compressed = std::fs::read(sample(name)?).unwrap();
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(&compressed[..])
        .read_to_end(&mut out)
        .unwrap();
    Some(out)
}
