//! The provenance digest: SHA-256 of the input file or folder.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// SHA-256 of a file, or for a directory of the list of its files' relative paths and digests
/// (`<path>\0<hex>\n`, sorted), so a recording folder has one stable digest.
pub fn source_sha256(path: &Path) -> Result<String> {
    sha256_of(path, None)
}

/// [`source_sha256`], stopping between two chunks once `cancel` is cancelled (the tables of
/// a conversion wait for the digest before their first row).
pub(super) fn sha256_of(path: &Path, cancel: Option<&crate::Cancel>) -> Result<String> {
    let file_digest = |path: &Path| -> Result<String> {
        let mut file = std::fs::File::open(path)
            .map_err(|e| Error::from(e).context(path.display().to_string()))?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            if let Some(cancel) = cancel {
                cancel.check()?;
            }
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        Ok(hex(&hasher.finalize()))
    };
    if !path.is_dir() {
        return file_digest(path);
    }
    let mut files = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut manifest = Sha256::new();
    for f in files {
        let relative = f
            .strip_prefix(path)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        manifest.update(relative.as_bytes());
        manifest.update(b"\0");
        manifest.update(file_digest(&f)?.as_bytes());
        manifest.update(b"\n");
    }
    Ok(hex(&manifest.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
