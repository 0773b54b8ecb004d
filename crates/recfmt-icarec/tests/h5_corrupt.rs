//! Truncated and bit-flipped Icarus HDF5 files (feature `hdf5`): opening and reading them gives
//! rows or an error, never a panic.
//!
//! A file of its own so the panic hook that counts panics caught inside hdf5-pure (by the
//! reader's guard) sees no other test's panics.
#![cfg(feature = "hdf5")]
#![allow(clippy::unwrap_used)] // helpers in a test file fail by panicking

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use recfmt_core::{FrameBuf, ReadOptions};
use recfmt_icarec::{HDF5_FORMAT, IcarecRecording, IcarusH5Options, generate, write_icarus_h5};

static PANICS: AtomicUsize = AtomicUsize::new(0);

#[derive(Debug, Default)]
struct Tally {
    cases: usize,
    opened: usize,
    open_errors: usize,
    read_errors: usize,
    complete: usize,
}

/// Opens and reads `bytes` as an Icarus HDF5 file; any panic here fails the test.
fn exercise(path: &Path, bytes: &[u8], tally: &mut Tally) {
    std::fs::write(path, bytes).unwrap();
    tally.cases += 1;
    let mut rec = match (HDF5_FORMAT.open)(path, &ReadOptions::default()) {
        Ok(r) => r,
        Err(e) => {
            // Errors name the file.
            assert!(e.to_string().contains(&*path.to_string_lossy()), "{e}");
            tally.open_errors += 1;
            return;
        }
    };
    tally.opened += 1;
    let mut row = FrameBuf::default();
    // A flipped extent can declare many rows of fill values; a few thousand rows show the
    // reader copes.
    for _ in 0..5_000 {
        match rec.read_frame(&mut row) {
            Ok(true) => {}
            Ok(false) => {
                tally.complete += 1;
                return;
            }
            Err(_) => {
                tally.read_errors += 1;
                return;
            }
        }
    }
}

fn sources(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let icarec = dir.join("src.icarec");
    generate::write_all_types(&icarec, 40).unwrap();
    let ours = dir.join("ours.h5");
    let mut rec = IcarecRecording::open(&icarec, &Default::default()).unwrap();
    // Small chunks: several per dataset, and a small file to rewrite thousands of times.
    let options = IcarusH5Options {
        chunk_rows: Some(16),
        deflate: None,
    };
    write_icarus_h5(&mut rec, &ours, &options).unwrap();
    let mut out = vec![("recfmt writer".to_string(), std::fs::read(&ours).unwrap())];
    // A file written by libhdf5 (h5py, as HighFive would), when that Python is available.
    let py = std::env::var_os("RECFMT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/pyenv/bin/python")
        });
    let lib = dir.join("libhdf5.h5");
    let ok = std::process::Command::new(&py)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/icarus_h5py.py"))
        .arg("write")
        .arg(&lib)
        .arg("40")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        out.push(("libhdf5 via h5py".to_string(), std::fs::read(&lib).unwrap()));
    } else {
        eprintln!("no python with h5py: only the recfmt-written file is corrupted");
    }
    out
}

#[test]
fn truncated_and_bit_flipped_files_never_panic() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("case.h5");
    for (name, bytes) in sources(dir.path()) {
        let mut tally = Tally::default();
        let before = PANICS.load(Ordering::SeqCst);
        // Every prefix up to 4 KiB (superblock, root group, first headers), then ~400 more.
        let step = (bytes.len() / 400).max(1);
        let cuts = (0..bytes.len().min(4096)).chain((4096..bytes.len()).step_by(step));
        for cut in cuts {
            exercise(&case, &bytes[..cut], &mut tally);
        }
        // One flipped bit at ~3000 positions spread over the file, every position in the
        // first 2 KiB.
        let step = (bytes.len() / 3000).max(1);
        let positions = (0..bytes.len().min(2048)).chain((2048..bytes.len()).step_by(step));
        for (k, pos) in positions.enumerate() {
            let mut flipped = bytes.clone();
            flipped[pos] ^= 1 << (k % 8);
            exercise(&case, &flipped, &mut tally);
        }
        let caught = PANICS.load(Ordering::SeqCst) - before;
        eprintln!(
            "{name}: {} bytes, {tally:?}, hdf5-pure panics caught by the guard: {caught}",
            bytes.len()
        );
        assert!(tally.open_errors > 0 && tally.complete > 0);
    }
}
