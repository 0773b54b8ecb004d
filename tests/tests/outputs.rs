//! Outputs that cannot hurt the user (issue 26, items 4 to 8): every target checked before the
//! input is read, a failure or an interruption takes back what the run moved or created, and
//! temporary names that fit the file system.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use recfmt_tests::{fixture, recfmt, recfmt_bin};

fn stderr(run: &std::process::Output) -> String {
    String::from_utf8_lossy(&run.stderr).into_owned()
}

/// Every name in `dir`, hidden ones included.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_icarec_output_into_a_folder_holding_files_needs_force_and_keeps_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("icarec/all_types.icarec");
    let out = dir.path().join("ow");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("dynamic_signals.bin"), "precious").unwrap();
    std::fs::write(out.join("metadata.json"), "precious").unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    // A faithful copy (same format) and the generic writer (from USVLOG) alike.
    for source in [input.clone(), fixture("usvlog/all_types")] {
        let run = recfmt(&[
            "convert",
            source.to_str().unwrap(),
            "--to",
            "icarec",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
        assert!(stderr(&run).contains("--force"), "{}", stderr(&run));
        assert_eq!(
            std::fs::read_to_string(out.join("dynamic_signals.bin")).unwrap(),
            "precious"
        );
        assert_eq!(
            names(&out),
            ["dynamic_signals.bin", "metadata.json", "notes.txt"]
        );
        assert_eq!(names(dir.path()), ["ow"], "no temporary folder left");
    }
    let run = recfmt(&[
        "convert",
        input.to_str().unwrap(),
        "--to",
        "icarec",
        "-o",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    for file in ["schema.json", "static_signals.bin", "dynamic_signals.bin"] {
        assert_eq!(
            std::fs::read(out.join(file)).unwrap(),
            std::fs::read(input.join(file)).unwrap(),
            "{file}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(names(dir.path()), ["ow"]);
}

#[cfg(unix)]
#[test]
fn a_link_among_the_recording_files_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("icarec/all_types.icarec");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let out = dir.path().join("ow2");
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("metadata.json")).unwrap();
    for force in [false, true] {
        let mut args = vec![
            "convert",
            input.to_str().unwrap(),
            "--to",
            "icarec",
            "-o",
            out.to_str().unwrap(),
        ];
        if force {
            args.push("--force");
        }
        let run = recfmt(&args);
        assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
        assert_eq!(
            names(&out),
            ["metadata.json"],
            "no half recording (force {force})"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(names(dir.path()), ["ow2", "victim"]);
    }
}

fn partition(input: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "convert",
        input.to_str().unwrap(),
        "--to",
        "parquet",
        "--partition",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend(extra);
    recfmt(&args)
}

#[test]
fn a_dataset_is_locked_per_recording_and_cleaned_of_what_a_killed_run_left() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("ds");
    let input = fixture("usvlog/all_types");
    let run = partition(&input, &ds, &[]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let nav = ds.join("REC_NAV_SOLUTION/source=all_types");
    // What a SIGKILLed run leaves: a temporary part, which readers of `*/*` would choke on.
    let leftover = nav.join(".part-0.parquet.0123456789abcdef.partial");
    std::fs::write(&leftover, "half a part").unwrap();
    // A run of the same recording that is alive holds the lock: refused.
    let lock = ds.join(".recfmt.source=all_types.lock");
    std::fs::write(&lock, format!("{}\n", std::process::id())).unwrap();
    let run = partition(&input, &ds, &["--force"]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(stderr(&run).contains("another run"), "{}", stderr(&run));
    assert!(leftover.exists());
    // Another recording is not held up by it.
    let run = partition(&fixture("usvlog/unknown_types"), &ds, &[]);
    assert!(matches!(run.status.code(), Some(0 | 3)), "{}", stderr(&run));
    std::fs::remove_file(&lock).unwrap();
    // Without --force: refused, and what the dead run left is cleaned up all the same.
    let run = partition(&input, &ds, &[]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(stderr(&run).contains("already exists"), "{}", stderr(&run));
    let run = partition(&input, &ds, &["--force"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(!leftover.exists(), "the killed run's part is gone");
    assert_eq!(names(&nav), ["part-0.parquet"]);
    assert!(!names(&ds).iter().any(|n| n.ends_with(".lock")));
}

#[test]
fn a_failed_partitioned_export_leaves_no_empty_folders() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("ds");
    // Fails while reading (a truncated session read strictly), after its folders were made.
    let run = partition(&fixture("usvlog/truncated"), &ds, &["--strict"]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(walk(&ds).is_empty(), "{:?}", walk(&ds));
}

#[test]
fn hives_null_name_is_refused_as_a_recording_name() {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("ds");
    let run = partition(
        &fixture("usvlog/all_types"),
        &ds,
        &["--source", "__HIVE_DEFAULT_PARTITION__"],
    );
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(stderr(&run).contains("null source"), "{}", stderr(&run));
    assert!(walk(&ds).is_empty(), "{:?}", walk(&ds));
}

/// A USVLOG session big enough that converting it takes a while in any build.
fn big_session(dir: &Path) -> std::path::PathBuf {
    let session = dir.join("big");
    recfmt_tlv::generate::write_bench_session(&session, 40 << 20).unwrap();
    session
}

/// Starts `recfmt args`, waits until a temporary output appears under `watch`, interrupts
/// it with `signal` and waits for it to end.
fn interrupt(args: &[&str], watch: &Path, signal: &str) {
    let mut child = Command::new(recfmt_bin())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let writing = |dir: &Path| {
        walk(dir)
            .iter()
            .any(|n| n.ends_with(".partial") || n.ends_with(".lock"))
    };
    while !writing(watch) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "ended before writing anything"
        );
        assert!(started.elapsed() < Duration::from_secs(60), "no output");
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
}

/// Every name under `dir`, recursively.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            out.push(e.file_name().to_string_lossy().into_owned());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                out.extend(walk(&e.path()));
            }
        }
    }
    out
}

#[test]
fn an_interrupted_conversion_leaves_no_folder_it_created() {
    let dir = tempfile::tempdir().unwrap();
    let input = big_session(dir.path());
    let layouts = input.join("layouts.toml");
    for (to, signal) in [("csv", "-INT"), ("ndjson", "-TERM")] {
        let out = dir.path().join(format!("new/{to}"));
        interrupt(
            &[
                "--layout",
                layouts.to_str().unwrap(),
                "convert",
                input.to_str().unwrap(),
                "--to",
                to,
                "-o",
                out.to_str().unwrap(),
            ],
            dir.path(),
            signal,
        );
        assert_eq!(names(dir.path()), ["big"], "{to}: {:?}", walk(dir.path()));
    }
    // A partitioned dataset: no `source=` folder and no temporary part stays.
    let ds = dir.path().join("ds");
    std::fs::create_dir(&ds).unwrap();
    interrupt(
        &[
            "--layout",
            layouts.to_str().unwrap(),
            "convert",
            input.to_str().unwrap(),
            "--to",
            "parquet",
            "--partition",
            "-o",
            ds.to_str().unwrap(),
        ],
        &ds,
        "-INT",
    );
    assert!(walk(&ds).is_empty(), "{:?}", walk(&ds));
}

#[test]
fn output_names_up_to_255_bytes_can_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("icarec/all_types.icarec");
    for len in [222, 240, 255] {
        let name = format!("{}.h5", "x".repeat(len - 3));
        let out = dir.path().join(&name);
        let run = recfmt(&[
            "convert",
            input.to_str().unwrap(),
            "--to",
            "hdf5",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.status.code(), Some(0), "{len}: {}", stderr(&run));
        assert!(out.is_file());
    }
    // A table named after a long stream in a folder: the same.
    let long_dir = dir.path().join("t".repeat(250));
    let run = recfmt(&[
        "convert",
        input.to_str().unwrap(),
        "--to",
        "mcap",
        "-o",
        long_dir.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
}

#[test]
fn a_failed_hdf5_export_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.h5");
    let run = recfmt(&[
        "convert",
        fixture("usvlog/truncated").to_str().unwrap(),
        "--to",
        "hdf5",
        "-o",
        out.to_str().unwrap(),
        "--strict",
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
}
