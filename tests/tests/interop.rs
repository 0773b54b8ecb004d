//! Real clients read every output kind of every recording we have (the generated fixtures and
//! the upstream samples in `../shared/samples`) and compare each value with
//! `recfmt cat --output ndjson`: pyarrow (Parquet, Arrow IPC), duckdb (Parquet), pandas (CSV),
//! the json module (NDJSON). `cargo xtask ci` installs them.

use std::path::{Path, PathBuf};
use std::process::Command;

use recfmt_tests::{fixture, in_ci, python_with, recfmt, workspace_root};

const KINDS: [&str; 4] = ["parquet", "csv", "arrow", "ndjson"];

/// Where the upstream samples are: `RECFMT_SAMPLES`, else `../shared/samples`.
fn samples_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("RECFMT_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/samples"));
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        !in_ci(),
        "CI is set but the samples folder {} is missing",
        dir.display()
    );
    eprintln!("skipping samples: {} not found", dir.display());
    None
}

fn recordings() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = [
        "usvlog/all_types",
        "usvlog/truncated",
        "usvlog/unknown_types",
    ]
    .iter()
    .map(|f| fixture(f))
    .collect();
    if let Some(samples) = samples_dir() {
        for (folder, ext) in [("carla", "log"), ("fgtape", "fgtape")] {
            let mut found: Vec<PathBuf> = std::fs::read_dir(samples.join(folder))
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            found.retain(|p| p.extension().is_some_and(|e| e == ext));
            found.sort();
            assert!(
                !found.is_empty() || !in_ci(),
                "no {folder} samples in {}",
                samples.display()
            );
            out.extend(found);
        }
    }
    out
}

fn check(python: &Path, recording: &Path, work: &Path) {
    let s = recording.to_str().unwrap();
    for kind in KINDS {
        let out = work.join(kind);
        let o = recfmt(&["convert", s, "--to", kind, "-o", out.to_str().unwrap()]);
        assert!(
            matches!(o.status.code(), Some(0 | 3)),
            "{s} --to {kind}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let cat = recfmt(&["cat", s, "--output", "ndjson"]);
    assert!(
        matches!(cat.status.code(), Some(0 | 3)),
        "{s}: {}",
        String::from_utf8_lossy(&cat.stderr)
    );
    let reference = work.join("reference.ndjson");
    std::fs::write(&reference, &cat.stdout).unwrap();
    let script = workspace_root().join("tests/python/interop.py");
    let o = Command::new(python)
        .arg(script)
        .arg(&reference)
        .arg(work)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{s}:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let tables = stdout.lines().filter(|l| l.starts_with("ok ")).count();
    let streams_with_rows = String::from_utf8_lossy(&cat.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| v["stream"].as_str().unwrap_or_default().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    // Each stream with rows: pyarrow parquet, pyarrow arrow, duckdb, pandas csv, json ndjson.
    assert_eq!(tables, streams_with_rows * 5, "{s}:\n{stdout}");
}

#[test]
fn every_client_reads_every_output_of_every_recording() {
    let Some(python) = python_with(&["pyarrow", "pandas", "duckdb", "numpy"]) else {
        return;
    };
    let recordings = recordings();
    for recording in &recordings {
        let work = tempfile::tempdir().unwrap();
        check(&python, recording, work.path());
    }
    eprintln!("checked {} recordings", recordings.len());
}
