//! Parquet that engines like to read: pyarrow sees min/max statistics on every column, floats
//! included, and DuckDB answers a query for one second of a long stream from the one row group
//! that holds it (its own profile says how many row groups and bytes it read); with
//! `--byte-stream-split` both read the same values from float columns in that encoding.

use std::path::Path;
use std::process::Command;

use recfmt_tests::{
    assert_success, files_with_bytes, fixture, python_with, recfmt, workspace_root,
};

fn check_engines(python: &Path, args: &[&str]) -> String {
    let out = Command::new(python)
        .arg(workspace_root().join("tests/python/check_engines.py"))
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn convert(input: &Path, out: &Path, extra: &[&str]) {
    let mut args = vec![
        "convert",
        input.to_str().unwrap(),
        "--to",
        "parquet",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    assert_success(&recfmt(&args), "recfmt convert --to parquet");
}

#[test]
fn pyarrow_reads_min_and_max_of_every_column_floats_included() {
    let Some(python) = python_with(&["pyarrow"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("parquet");
    // Small row groups, so each table has many chunks to check.
    convert(
        &fixture("usvlog/all_types"),
        &out,
        &["--row-group-rows", "16"],
    );
    let report = check_engines(&python, &["stats", out.to_str().unwrap()]);
    let files = std::fs::read_dir(&out).unwrap().count();
    assert!(files > 10, "{report}");
    assert_eq!(
        report.lines().filter(|l| l.starts_with("ok ")).count(),
        files,
        "{report}"
    );
    // Every float column of the fixture was checked in several row groups.
    assert!(
        report.contains("ok REC_NAV_SOLUTION.parquet 13 "),
        "{report}"
    );
}

#[test]
fn duckdb_reads_one_second_of_a_long_stream_from_one_row_group() {
    let Some(python) = python_with(&["pyarrow", "duckdb"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let session = work.path().join("session");
    recfmt_tlv::generate::write_bench_session(&session, 34_000_000).unwrap();
    let out = work.path().join("parquet");
    let layout = session.join("layouts.toml");
    const GROUP_ROWS: u64 = 4096;
    // Row groups far smaller than a batch: they are cut at the row-group bound, not the batch.
    convert(
        &session,
        &out,
        &[
            "--layout",
            layout.to_str().unwrap(),
            "--stream",
            "REC_IMU_RAW",
            "--row-group-rows",
            &GROUP_ROWS.to_string(),
        ],
    );
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(session.join("meta.json")).unwrap()).unwrap();
    let rows = meta["files"]["timeseries.bin"]["record_counts"]["REC_IMU_RAW"]
        .as_u64()
        .unwrap();
    // One second (100 rows at 100 Hz) inside the sixth row group.
    let first_row = 5 * GROUP_ROWS + 200;
    let dt = recfmt_tlv::generate::DT_US;
    let start = recfmt_tlv::generate::T0_US + first_row * dt;
    let end = start + 1_000_000;
    let file = out.join("REC_IMU_RAW.parquet");
    let report = check_engines(
        &python,
        &[
            "window",
            file.to_str().unwrap(),
            &start.to_string(),
            &end.to_string(),
        ],
    );
    eprintln!("{report}");
    let got: serde_json::Value = serde_json::from_str(report.trim()).unwrap();
    assert_eq!(got["rows"], 1_000_000 / dt, "{report}");
    assert_eq!(
        got["row_groups_in_file"].as_u64().unwrap(),
        rows.div_ceil(GROUP_ROWS),
        "{report}"
    );
    assert!(got["row_groups"].as_u64().unwrap() >= 25, "{report}");
    assert_eq!(got["row_groups_scanned"], 1, "{report}");
    let (read, size) = (
        got["bytes_read"].as_u64().unwrap(),
        got["file_bytes"].as_u64().unwrap(),
    );
    assert!(
        read * 20 < size,
        "DuckDB read {read} of {size} bytes: {report}"
    );
}

/// `--row-group-memory` moves finished pages between memory and the temporary file beside the
/// output; the tables come out the same bytes. A generated session with several pages per
/// column and small row groups, so pages are put aside and taken back many times.
#[test]
fn pages_in_memory_or_beside_the_output_give_the_same_tables() {
    let work = tempfile::tempdir().unwrap();
    let session = work.path().join("session");
    recfmt_tlv::generate::write_bench_session(&session, 6_000_000).unwrap();
    let layout = session.join("layouts.toml");
    let tables = |memory: &str| {
        let out = work.path().join(format!("parquet-{memory}"));
        convert(
            &session,
            &out,
            &[
                "--layout",
                layout.to_str().unwrap(),
                "--threads",
                "1",
                "--row-group-rows",
                "50000",
                "--row-group-memory",
                memory,
            ],
        );
        files_with_bytes(&out)
    };
    let in_memory = tables("1000000000");
    assert!(in_memory.len() > 3, "one table per stream");
    for memory in ["0", "65536"] {
        let tables = tables(memory);
        assert_eq!(
            tables.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            in_memory.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            "only the tables are left in the folder (--row-group-memory {memory})"
        );
        for ((name, bytes), (_, expected)) in tables.iter().zip(&in_memory) {
            assert!(
                bytes == expected,
                "{name} differs with --row-group-memory {memory}"
            );
        }
    }
}

/// `--byte-stream-split`: float columns (array elements too) in the BYTE_STREAM_SPLIT
/// encoding, which pyarrow, polars and DuckDB read as the same values; on the generated session's
/// smooth signals the tables come out smaller.
#[test]
fn byte_stream_split_floats_read_the_same_in_pyarrow_polars_and_duckdb() {
    let Some(python) = python_with(&["pyarrow", "duckdb", "polars"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let session = work.path().join("session");
    recfmt_tlv::generate::write_bench_session(&session, 6_000_000).unwrap();
    let layout = session.join("layouts.toml");
    let (plain, split) = (work.path().join("plain"), work.path().join("split"));
    convert(&session, &plain, &["--layout", layout.to_str().unwrap()]);
    convert(
        &session,
        &split,
        &["--layout", layout.to_str().unwrap(), "--byte-stream-split"],
    );
    let report = check_engines(
        &python,
        &["split", plain.to_str().unwrap(), split.to_str().unwrap()],
    );
    assert!(report.contains("ok REC_IMU_RAW.parquet 3"), "{report}");
    let sizes: Vec<u64> = report
        .lines()
        .find_map(|l| l.strip_prefix("bytes "))
        .expect("sizes")
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(sizes[1] < sizes[0] / 2, "{report}");
}
