//! `convert --partition`: several recordings into one Hive-partitioned Parquet dataset, read
//! back as one table per stream by pyarrow.dataset.

use recfmt_tests::{assert_success, fixture, python_with, recfmt};

#[test]
fn several_recordings_make_one_hive_partitioned_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet");
    let inputs = [fixture("usvlog/all_types"), fixture("usvlog/truncated")];
    let mut args = vec!["convert"];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    args.extend([
        "--to",
        "parquet",
        "--partition",
        "-o",
        out.to_str().unwrap(),
    ]);
    let run = recfmt(&args);
    // The truncated fixture lost data: exit 3, and every complete row is still written.
    assert!(
        matches!(run.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for source in ["all_types", "truncated"] {
        let part = out.join(format!("REC_NAV_SOLUTION/source={source}/part-0.parquet"));
        assert!(part.is_file(), "{} missing", part.display());
    }
    // Rows per source equal `info` of each recording.
    let Some(python) = python_with(&["pyarrow"]) else {
        return;
    };
    let mut expected = Vec::new();
    for input in &inputs {
        let info = recfmt(&["info", input.to_str().unwrap(), "--json"]);
        let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
        let rows = info["streams"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "REC_NAV_SOLUTION")
            .map(|s| s["rows"].as_u64().unwrap())
            .unwrap();
        expected.push(rows);
    }
    let script = format!(
        "import pyarrow.dataset as ds\n\
         t = ds.dataset({:?}, format='parquet', partitioning='hive').to_table()\n\
         import collections\n\
         c = collections.Counter(t.column('source').to_pylist())\n\
         print(c['all_types'], c['truncated'])\n",
        out.join("REC_NAV_SOLUTION").to_str().unwrap()
    );
    let run = std::process::Command::new(python)
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_success(&run, "recfmt convert");
    let counts: Vec<u64> = String::from_utf8_lossy(&run.stdout)
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(counts, expected);
    // Another format than Parquet is refused.
    let run = recfmt(&[
        "convert",
        inputs[0].to_str().unwrap(),
        "--to",
        "csv",
        "--partition",
        "-o",
        dir.path().join("csv").to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(1));
}
