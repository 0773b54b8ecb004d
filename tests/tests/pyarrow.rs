//! A real client reads what we write: pyarrow opens every Parquet table of the generated
//! session and checks row counts, float32 columns, values (against `recfmt cat --output
//! ndjson`) and units metadata.

use std::process::Command;

use recfmt_tests::{fixture, python_with, recfmt};

#[test]
fn pyarrow_reads_every_table_with_native_types_values_and_units() {
    let Some(python) = python_with(&["pyarrow", "numpy"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let session = fixture("usvlog/all_types");
    let out_dir = work.path().join("parquet");
    let convert = recfmt(&[
        "convert",
        session.to_str().unwrap(),
        "--to",
        "parquet",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(
        convert.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&convert.stderr)
    );

    let cat = recfmt(&["cat", session.to_str().unwrap(), "--output", "ndjson"]);
    assert!(cat.status.success());
    let ndjson = work.path().join("rows.ndjson");
    std::fs::write(&ndjson, &cat.stdout).unwrap();

    // Expected counts come from the generator's meta.json, not from recfmt.
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("meta.json")).unwrap()).unwrap();
    let counts = work.path().join("counts.json");
    std::fs::write(
        &counts,
        meta["files"]["timeseries.bin"]["record_counts"].to_string(),
    )
    .unwrap();

    let script = recfmt_tests::workspace_root().join("tests/python/check_parquet.py");
    let out = Command::new(python)
        .arg(script)
        .args([&out_dir, &ndjson, &counts])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        13,
        "{stdout}"
    );
}
