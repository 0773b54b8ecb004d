//! NanoVer recordings to molecular files: every NanoVer sample converted with `convert --to
//! pdb|xyz|dcd` is read back by MDAnalysis (and the extended XYZ by ASE), with recfmt's
//! positions x 10, the frame counts and the session splits (`tests/python/check_molecular.py`,
//! whose expectation comes from `recfmt cat --stream frames` alone).

use std::path::Path;
use std::process::Command;

use recfmt_tests::{assert_success, python_with, recfmt, samples};

fn convert(input: &Path, to: &str, out: &Path) {
    let run = recfmt(&[
        "convert",
        input.to_str().unwrap(),
        "--to",
        to,
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        run.status.code(),
        Some(0),
        "{} --to {to}: {}",
        input.display(),
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn mdanalysis_and_ase_read_every_sample_as_pdb_xyz_and_dcd() {
    let inputs: Vec<_> = samples("nanover/server-py", "traj")
        .into_iter()
        .chain(samples("nanover/converted", "zip"))
        .collect();
    if inputs.is_empty() {
        return;
    }
    let Some(python) = python_with(&["MDAnalysis", "ase", "numpy"]) else {
        return;
    };
    let script = recfmt_tests::workspace_root().join("tests/python/check_molecular.py");
    let mut multi_session = 0;
    for input in &inputs {
        let work = tempfile::tempdir().unwrap();
        let outs: Vec<_> = ["pdb", "xyz", "dcd"]
            .iter()
            .map(|to| {
                let out = work.path().join(format!("out.{to}"));
                convert(input, to, &out);
                out
            })
            .collect();
        let cat = recfmt(&[
            "cat",
            input.to_str().unwrap(),
            "--stream",
            "frames",
            "--output",
            "ndjson",
        ]);
        assert_success(&cat, "recfmt cat");
        let rows = work.path().join("rows.ndjson");
        std::fs::write(&rows, &cat.stdout).unwrap();
        let out = Command::new(&python)
            .arg(&script)
            .arg(&rows)
            .args(&outs)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}: {stdout}\n{}",
            input.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let sessions: usize = stdout
            .lines()
            .find_map(|l| l.strip_prefix("sessions "))
            .and_then(|n| n.parse().ok())
            .expect("the checker prints the session count");
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with("ok ")).count(),
            3 * sessions,
            "{}: {stdout}",
            input.display()
        );
        // One file per session: a folder exactly when there are several.
        assert_eq!(outs[0].is_dir(), sessions > 1, "{}", input.display());
        if sessions > 1 {
            multi_session += 1;
        }
    }
    assert!(
        multi_session > 0,
        "the samples include multi-session recordings"
    );
}

#[test]
fn the_state_file_and_the_trajectory_give_the_same_molecular_file() {
    let Some(traj) = samples("nanover/server-py", "traj")
        .into_iter()
        .find(|p| p.with_extension("state").is_file())
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (a, b) = (work.path().join("a.xyz"), work.path().join("b.xyz"));
    convert(&traj, "xyz", &a);
    convert(&traj.with_extension("state"), "xyz", &b);
    let read = |p: &Path| -> Vec<(String, Vec<u8>)> {
        if p.is_dir() {
            recfmt_tests::list_files(p)
                .into_iter()
                .map(|n| {
                    let bytes = std::fs::read(p.join(&n)).unwrap();
                    (n, bytes)
                })
                .collect()
        } else {
            vec![(String::new(), std::fs::read(p).unwrap())]
        }
    };
    let (left, right) = (read(&a), read(&b));
    assert!(!left.is_empty());
    // The titles name the input; everything else is equal.
    let strip = |files: Vec<(String, Vec<u8>)>| -> Vec<(String, usize)> {
        files.into_iter().map(|(n, b)| (n, b.len())).collect()
    };
    assert_eq!(strip(left), strip(right));
}

#[test]
fn an_existing_output_is_kept_untouched() {
    let Some(traj) = samples("nanover/server-py", "traj").into_iter().next() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("taken.pdb");
    std::fs::write(&out, b"keep me").unwrap();
    let run = recfmt(&[
        "convert",
        traj.to_str().unwrap(),
        "--to",
        "pdb",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_ne!(run.status.code(), Some(0));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");
    // Nothing but the file we made is left beside it (no temporary files).
    assert_eq!(recfmt_tests::list_files(work.path()), ["taken.pdb"]);
}
