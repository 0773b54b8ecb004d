//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The NanoVer sample folder (`.../samples/nanover`), or `None` (with a printed reason) when it
/// is absent and `CI` is not set. With `CI` set, a missing folder fails the test.
pub fn samples_dir() -> Option<PathBuf> {
    let root = std::env::var_os("RECFMT_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/samples"
            ))
        });
    let dir = root.join("nanover");
    if dir.join("server-py").is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!("NanoVer samples not found at {} (CI is set)", dir.display());
    }
    eprintln!(
        "skipping: NanoVer samples not found at {} (set RECFMT_SAMPLES)",
        dir.display()
    );
    None
}

/// Every `.traj` and `.state` sample, sorted by name.
pub fn sample_files() -> Vec<PathBuf> {
    let Some(dir) = samples_dir() else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("server-py"))
        .expect("read samples dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "traj" || e == "state"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 15, "expected the 15 NanoVer sample files");
    files
}

/// A small deterministic random generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
