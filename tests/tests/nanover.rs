//! NanoVer through the command line: `validate` reports defective records, `recover` writes a
//! copy that validates, and the samples read as valid.

use recfmt_tests::{recfmt, samples};
use serde_json::Value;

#[test]
fn samples_validate_and_a_damaged_copy_is_reported_then_recovered() {
    let trajs = samples("nanover/server-py", "traj");
    for traj in &trajs {
        let o = recfmt(&["validate", "--json", traj.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}: {}",
            traj.display(),
            String::from_utf8_lossy(&o.stdout)
        );
    }
    let Some(source) = trajs.iter().find(|p| p.ends_with("hello.traj")) else {
        return;
    };
    let bytes = std::fs::read(source).unwrap();
    let work = tempfile::tempdir().unwrap();
    let damaged = work.path().join("damaged.traj");
    // 40 bytes of garbage between records, and a torn tail.
    let cut = 3000.min(bytes.len() / 2);
    let mut copy = bytes[..cut].to_vec();
    copy.extend((0..40u8).map(|i| i.wrapping_mul(97).wrapping_add(13)));
    copy.extend(&bytes[cut..bytes.len() - 5]);
    std::fs::write(&damaged, &copy).unwrap();

    let o = recfmt(&["validate", "--json", damaged.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let problems: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        problems.iter().any(|p| p.contains("defect")),
        "{problems:?}"
    );

    let fixed = work.path().join("fixed.traj");
    let o = recfmt(&[
        "recover",
        damaged.to_str().unwrap(),
        "-o",
        fixed.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "bytes were dropped: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = recfmt(&["validate", "--json", fixed.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["valid"],
        true
    );

    // An intact file recovers with nothing dropped (exit 0); `repair` is an alias.
    let again = work.path().join("again.traj");
    let o = recfmt(&[
        "repair",
        fixed.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let usv = recfmt(&[
        "recover",
        recfmt_tests::fixture("usvlog/truncated").to_str().unwrap(),
        "-o",
        work.path().join("x").to_str().unwrap(),
    ]);
    assert_eq!(usv.status.code(), Some(1));
}
