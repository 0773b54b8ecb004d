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

#[test]
fn the_nanotube_recording_converts_to_parquet_and_hdf5_that_pyarrow_and_h5py_read() {
    let Some(traj) = samples("nanover/server-py", "traj")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("examples-nanotube"))
    else {
        return;
    };
    let Some(python) = recfmt_tests::python_with(&["pyarrow", "h5py", "numpy"]) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let tables = work.path().join("tables");
    let h5 = work.path().join("nanotube.h5");
    for (kind, out) in [("parquet", &tables), ("hdf5", &h5)] {
        let o = recfmt(&[
            "convert",
            traj.to_str().unwrap(),
            "--to",
            kind,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{kind}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // pyarrow: positions are list<float32>; h5py: [frames, particles, 3] per session, and the
    // two agree value for value.
    let script = format!(
        r#"
import json, numpy as np, pyarrow.parquet as pq, h5py
t = pq.read_table({frames:?})
assert str(t.schema.field("particle.positions").type) == "list<item: float>", t.schema.field("particle.positions").type
pos = t.column("particle.positions").to_pylist()
sess = t.column("session").to_pylist()
with h5py.File({h5:?}, "r") as f:
    shapes = []
    for name in sorted(k for k in f if k.startswith("session_")):
        d = f[name]["positions"]
        shapes.append(list(d.shape))
        n = int(name.split("_")[1].split(".")[0])
        rows = [p for p, s in zip(pos, sess) if s == n and p is not None]
        got = d[()]
        assert got.dtype == np.float32, got.dtype
        assert got.shape[0] == len(rows), (name, got.shape, len(rows))
        assert np.array_equal(got, np.array(rows, dtype=np.float32).reshape(got.shape)), name
print(json.dumps({{"rows": t.num_rows, "shapes": shapes}}))
"#,
        frames = tables.join("frames.parquet").to_str().unwrap(),
        h5 = h5.to_str().unwrap()
    );
    let o = std::process::Command::new(python)
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(got["rows"].as_u64().unwrap() > 0);
    let shapes = got["shapes"].as_array().unwrap();
    assert!(!shapes.is_empty());
    assert!(shapes.iter().all(|s| s[2] == 3), "{shapes:?}");
}

#[test]
fn sim_switching_splits_into_four_sessions_in_every_form() {
    let Some(traj) = samples("nanover/server-py", "traj")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("sim-switching"))
    else {
        return;
    };
    let zip = samples("nanover/converted", "zip")
        .into_iter()
        .next()
        .unwrap();
    for input in [&traj, &zip] {
        let o = recfmt(&[
            "cat",
            input.to_str().unwrap(),
            "--stream",
            "frames",
            "--output",
            "ndjson",
        ]);
        let mut per_session = std::collections::BTreeMap::<u64, u64>::new();
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let row: Value = serde_json::from_str(line).unwrap();
            *per_session
                .entry(row["session"].as_u64().unwrap())
                .or_default() += 1;
        }
        assert_eq!(
            per_session.values().copied().collect::<Vec<_>>(),
            [104, 108, 127, 115],
            "{}",
            input.display()
        );
    }
}

#[test]
fn version_1_files_read_when_asked_for() {
    use recfmt::nanover::{FileKind, Version, generate, io::Writer};
    let work = tempfile::tempdir().unwrap();
    let traj = work.path().join("old.traj");
    let (frames, _) = generate::small_recording();
    let mut writer = Writer::new(
        std::fs::File::create(&traj).unwrap(),
        FileKind::Trajectory,
        Version::V1,
    )
    .unwrap();
    for (t, frame) in &frames {
        writer.write_frame(*t, frame).unwrap();
    }
    drop(writer);
    let forced = recfmt(&[
        "--format",
        "nanover",
        "--nanover-version",
        "1",
        "info",
        "--json",
        traj.to_str().unwrap(),
    ]);
    assert_eq!(
        forced.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );
    let info: Value = serde_json::from_slice(&forced.stdout).unwrap();
    let rows = info["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "frames")
        .unwrap()["rows"]
        .as_u64()
        .unwrap();
    assert_eq!(rows, frames.len() as u64);
    // Asked for version 2, the same file is refused with what was expected where.
    let v2 = recfmt(&[
        "--format",
        "nanover",
        "--nanover-version",
        "2",
        "info",
        traj.to_str().unwrap(),
    ]);
    assert_eq!(v2.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&v2.stderr).contains("old.traj"),
        "{}",
        String::from_utf8_lossy(&v2.stderr)
    );
}
