//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The CARLA sample folder, or `None` (with a printed reason) when it is absent and `CI` is
/// not set. With `CI` set, a missing folder fails the test.
pub fn samples_dir() -> Option<PathBuf> {
    let root = std::env::var_os("RECFMT_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/samples"
            ))
        });
    let dir = root.join("carla");
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!("CARLA samples not found at {} (CI is set)", dir.display());
    }
    eprintln!(
        "skipping: CARLA samples not found at {} (set RECFMT_SAMPLES)",
        dir.display()
    );
    None
}

/// The sample logs, sorted by name.
pub fn sample_files() -> Vec<PathBuf> {
    let Some(dir) = samples_dir() else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("read samples dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        4,
        "expected the 4 CARLA sample logs in {}",
        dir.display()
    );
    files
}

/// Expected sha256 of a sample, from SOURCES.txt.
pub fn listed_sha256(name: &str) -> Option<String> {
    let dir = samples_dir()?;
    let text = std::fs::read_to_string(dir.join("SOURCES.txt")).ok()?;
    text.lines()
        .filter(|l| l.starts_with(name))
        .find_map(|l| l.split('|').next_back().map(|s| s.trim().to_owned()))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// An independent walk: header by hand, then `id u8 + size u32` skipping.
/// Returns (frame count, packet count, end offset).
pub fn simple_walk(bytes: &[u8]) -> (usize, usize, usize) {
    let u16_at = |p: usize| u16::from_le_bytes([bytes[p], bytes[p + 1]]) as usize;
    let mut p = 2;
    p += 2 + u16_at(p); // magic
    p += 8; // date
    p += 2 + u16_at(p); // map
    let (mut frames, mut packets) = (0, 0);
    while p + 5 <= bytes.len() {
        let id = bytes[p];
        let size =
            u32::from_le_bytes([bytes[p + 1], bytes[p + 2], bytes[p + 3], bytes[p + 4]]) as usize;
        if p + 5 + size > bytes.len() {
            break;
        }
        p += 5 + size;
        packets += 1;
        if id == 0 {
            frames += 1;
        }
    }
    (frames, packets, p)
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
