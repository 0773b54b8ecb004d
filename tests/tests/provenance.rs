//! Provenance: every table names the input's SHA-256, which is computed on its own thread
//! while the export decodes.

use recfmt_tests::{python_with, recfmt, samples};

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
        let run = recfmt(&[
            "convert",
            log.to_str().unwrap(),
            "--to",
            to,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let check = std::process::Command::new(&python)
            .args([
                "-c",
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
print(len(tables))
"#,
                log.to_str().unwrap(),
                out.to_str().unwrap(),
                to,
            ])
            .output()
            .unwrap();
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
}
