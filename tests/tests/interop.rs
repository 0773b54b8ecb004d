//! Real clients read every output kind of every recording we have (the generated fixtures and
//! the upstream samples in `../shared/samples`) and compare each value with
//! `recfmt cat --output ndjson`: pyarrow (Parquet, Arrow IPC), duckdb (Parquet), pandas (CSV),
//! the json module (NDJSON), h5py (HDF5). `cargo xtask ci` installs them.

use std::path::{Path, PathBuf};

use std::process::Command;

use recfmt_tests::{fixture, python_with, recfmt, samples, workspace_root};

const KINDS: [&str; 4] = ["parquet", "csv", "arrow", "ndjson"];

fn check(python: &Path, recording: &Path, work: &Path) {
    let s = recording.to_str().unwrap();
    // A session folder that ships a layout file for its own record types is read with it, so
    // its user-defined records (fixed-size arrays among them) are checked as columns.
    let layout_file = recording.join("layouts.toml");
    let layout = layout_file.to_str().unwrap();
    let recfmt = |args: &[&str]| {
        let mut args = args.to_vec();
        if layout_file.is_file() {
            args.extend(["--layout", layout]);
        }
        recfmt(&args)
    };
    for kind in KINDS {
        let out = work.join(kind);
        let o = recfmt(&["convert", s, "--to", kind, "-o", out.to_str().unwrap()]);
        assert!(
            matches!(o.status.code(), Some(0 | 3)),
            "{s} --to {kind}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // NanoVer's HDF5 has its own per-session layout (tests/nanover.rs checks it); every other
    // format gets a group per stream, checked here with h5py.
    let nanover = recording
        .extension()
        .is_some_and(|e| e == "traj" || e == "zip");
    if !nanover {
        let h5 = work.join("recording.h5");
        let o = recfmt(&["convert", s, "--to", "hdf5", "-o", h5.to_str().unwrap()]);
        assert!(
            matches!(o.status.code(), Some(0 | 3)),
            "{s} --to hdf5: {}",
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
    // Each stream with rows: pyarrow parquet, pyarrow arrow, duckdb, pandas csv, json ndjson,
    // h5py.
    let readers = if nanover { 5 } else { 6 };
    assert_eq!(tables, streams_with_rows * readers, "{s}:\n{stdout}");
}

/// Checks every recording with every client; one test per format so they run in parallel.
fn check_all(recordings: Vec<PathBuf>) {
    let Some(python) = python_with(&["pyarrow", "pandas", "duckdb", "numpy", "h5py"]) else {
        return;
    };
    for recording in &recordings {
        let work = tempfile::tempdir().unwrap();
        check(&python, recording, work.path());
    }
    eprintln!("checked {} recordings", recordings.len());
}

#[test]
fn usvlog_fixtures() {
    check_all(
        [
            "usvlog/all_types",
            "usvlog/truncated",
            "usvlog/unknown_types",
        ]
        .iter()
        .map(|f| fixture(f))
        .collect(),
    );
}

#[test]
fn icarec_fixtures() {
    let names = [
        "icarec/all_types.icarec",
        "icarec/empty_static.icarec",
        "icarec/torn.icarec",
    ];
    check_all(names.iter().map(|f| fixture(f)).collect());
}

#[test]
fn carla_samples() {
    check_all(samples("carla", "log"));
}

#[test]
fn fgtape_samples() {
    check_all(samples("fgtape", "fgtape"));
}

#[test]
fn nanover_samples() {
    let mut all = samples("nanover/server-py", "traj");
    all.extend(samples("nanover/converted", "zip"));
    check_all(all);
}
