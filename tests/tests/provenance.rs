//! Provenance: every table names the input's SHA-256, which is computed on its own thread
//! while the export decodes (Parquet tables and HDF5 files take it when they are finished,
//! the others wait for it when they open); a time window's tables name the window instead.

use recfmt_tests::{assert_success, python_with, recfmt, samples};

/// Runs `recfmt args` and fails the test with its stderr unless it succeeds.
fn run_recfmt(args: &[&str]) {
    let run = recfmt(args);
    assert_success(&run, "recfmt");
}

/// Runs a Python check script with `args` and fails the test with its stderr unless it
/// succeeds.
fn run_python(python: &std::path::Path, script: &str, args: &[&str]) {
    let check = std::process::Command::new(python)
        .args(["-c", script])
        .args(args)
        .output()
        .unwrap();
    assert_success(&check, "the Python check");
}

#[test]
fn every_table_carries_the_inputs_sha256() {
    let Some(log) = samples("carla", "log").into_iter().next() else {
        return;
    };
    let Some(python) = python_with(&["pyarrow"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for to in ["parquet", "arrow"] {
        let out = dir.path().join(to);
        run_recfmt(&[
            "convert",
            log.to_str().unwrap(),
            "--to",
            to,
            "-o",
            out.to_str().unwrap(),
        ]);
        run_python(
            &python,
            r#"
import glob, hashlib, sys
import pyarrow.parquet as pq, pyarrow.ipc as ipc
log, out, kind = sys.argv[1:]
digest = hashlib.sha256(open(log, 'rb').read()).hexdigest()
tables = sorted(glob.glob(out + '/*.' + kind))
assert tables, 'no tables'
for t in tables:
    schema = pq.read_schema(t) if kind == 'parquet' else ipc.open_file(t).schema
    assert schema.metadata[b'source.sha256'].decode() == digest, (t, schema.metadata)
    if kind == 'parquet':
        # Also among the footer's plain key/value entries, which Parquet tables get when
        # they are finished, for readers that ignore the Arrow schema.
        plain = pq.ParquetFile(t).metadata.metadata
        assert plain[b'source.sha256'].decode() == digest, (t, plain)
print(len(tables))
"#,
            &[log.to_str().unwrap(), out.to_str().unwrap(), to],
        );
    }
}

/// An HDF5 file gets the digest as a root attribute when it is finished (the hashing runs
/// beside the writing, not before it), beside the attributes set when it was created.
#[test]
fn an_hdf5_file_carries_the_inputs_sha256() {
    let Some(log) = samples("carla", "log").into_iter().next() else {
        return;
    };
    let Some(python) = python_with(&["h5py"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.h5");
    run_recfmt(&[
        "convert",
        log.to_str().unwrap(),
        "--to",
        "hdf5",
        "-o",
        out.to_str().unwrap(),
    ]);
    run_python(
        &python,
        r#"
import hashlib, sys
import h5py
log, out, name = sys.argv[1:]
digest = hashlib.sha256(open(log, 'rb').read()).hexdigest()
with h5py.File(out, 'r') as f:
    assert f.attrs['source.sha256'] == digest, dict(f.attrs)
    assert f.attrs['source.file'] == name, dict(f.attrs)
    assert len(f.keys()) > 0
"#,
        &[
            log.to_str().unwrap(),
            out.to_str().unwrap(),
            log.file_name().unwrap().to_str().unwrap(),
        ],
    );
}

/// A time window's tables go without the digest (it would read the whole input, which the
/// window's seek avoids) and say which window they hold instead.
#[test]
fn a_window_names_its_range_and_skips_the_digest() {
    let Some(log) = samples("carla", "log").into_iter().next() else {
        return;
    };
    let Some(python) = python_with(&["pyarrow"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("window");
    run_recfmt(&[
        "convert",
        log.to_str().unwrap(),
        "--start",
        "1",
        "--end",
        "2",
        "--to",
        "parquet",
        "-o",
        out.to_str().unwrap(),
    ]);
    run_python(
        &python,
        r#"
import glob, json, sys
import pyarrow.parquet as pq
tables = sorted(glob.glob(sys.argv[1] + '/*.parquet'))
assert tables, 'no tables'
for t in tables:
    meta = pq.read_schema(t).metadata
    assert b'source.sha256' not in meta, (t, meta)
    assert json.loads(meta[b'recfmt.time_range']) == {'start': '1', 'end': '2', 'carry_last': False}, meta
    assert meta[b'source.file'].decode() == sys.argv[2], meta
"#,
        &[
            out.to_str().unwrap(),
            log.file_name().unwrap().to_str().unwrap(),
        ],
    );
}
