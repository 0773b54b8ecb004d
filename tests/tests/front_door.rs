//! The library's front door (`recfmt::inspect`, `validate`, `convert`, `ops`) gives exactly
//! what the command line prints, and the command line's registry-driven parts (`--opt`,
//! `formats`, query subcommands) work.

use std::sync::Mutex;

use recfmt_tests::{fixture, recfmt};
use serde_json::Value;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn info_and_validate_reports_are_what_the_command_line_prints() {
    let registry = recfmt::default_registry();
    for path in [
        fixture("usvlog/all_types"),
        fixture("usvlog/truncated"),
        fixture("icarec/all_types.icarec"),
    ] {
        let s = path.to_str().unwrap();
        let report = recfmt::inspect::info(registry, &path, &Default::default()).unwrap();
        let out = recfmt(&["info", "--json", s]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            report.to_json() + "\n"
        );
        let text = recfmt(&["info", s]);
        assert_eq!(String::from_utf8_lossy(&text.stdout), report.to_string());
        let code = match report.outcome() {
            recfmt::Outcome::Complete => 0,
            _ => 3,
        };
        assert_eq!(out.status.code(), Some(code));

        let report = recfmt::validate::validate(registry, &path, &Default::default()).unwrap();
        let out = recfmt(&["validate", "--json", s]);
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            report.to_json() + "\n"
        );
    }
}

#[test]
fn convert_reports_files_and_progress_through_the_callback() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("tables");
    let options = recfmt::convert::ConvertOptions {
        target: "csv".into(),
        streams: vec!["REC_NAV_SOLUTION".into()],
        ..Default::default()
    };
    let seen = Mutex::new(Vec::new());
    let progress = |p: recfmt::convert::Progress| seen.lock().unwrap().push(p.done);
    let report = recfmt::convert::convert(
        recfmt::default_registry(),
        &fixture("usvlog/all_types"),
        &out,
        &options,
        Some(&progress),
    )
    .unwrap();
    assert_eq!(report.outcome, recfmt::Outcome::Complete);
    assert_eq!(report.files.len(), 1);
    assert_eq!(report.files[0].rows, 200);
    assert!(out.join("REC_NAV_SOLUTION.csv").is_file());
    assert!(!seen.lock().unwrap().is_empty(), "progress was reported");
    let json: Value = serde_json::from_str(&recfmt::to_json(&report)).unwrap();
    assert_eq!(json["outcome"], "complete");
    assert_eq!(json["integrity"]["status"], "complete");

    // A format's own output for another format's recording is refused with what it takes.
    let zip = recfmt::convert::ConvertOptions {
        target: "nanover-zip".into(),
        ..Default::default()
    };
    let err = recfmt::convert::convert(
        recfmt::default_registry(),
        &fixture("usvlog/all_types"),
        &work.path().join("x.zip"),
        &zip,
        None,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("converts NanoVer recordings (.traj/.state); this is usvlog"),
        "{err}"
    );
}

#[test]
fn targets_and_formats_come_from_the_registry() {
    let registry = recfmt::default_registry();
    let ids: Vec<_> = recfmt::convert::targets(registry)
        .iter()
        .map(|t| t.id)
        .collect();
    for id in [
        "parquet",
        "csv",
        "hdf5",
        "usvlog",
        "carla",
        "kml",
        "gpx",
        "nanover-zip",
    ] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    assert_eq!(ids.iter().filter(|i| **i == "hdf5").count(), 1);

    let out = recfmt(&["formats", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let formats: Value = serde_json::from_slice(&out.stdout).unwrap();
    let carla = formats
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "carla")
        .unwrap();
    let queries: Vec<_> = carla["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["name"].as_str().unwrap())
        .collect();
    assert_eq!(queries, ["info", "collisions", "blocked"]);
    let text = String::from_utf8_lossy(&recfmt(&["formats"]).stdout).into_owned();
    assert!(text.starts_with("usvlog     read/write "), "{text}");
    assert!(text.contains("outputs (--to): kml, gpx"), "{text}");
}

#[test]
fn format_options_are_checked_and_apply_only_to_their_format() {
    let usv = fixture("usvlog/all_types");
    let s = usv.to_str().unwrap();
    // Another format's option is no concern of a USVLOG session.
    let o = recfmt(&["info", "--opt", "carla.build=0.9.10", s]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // An unknown format, an unknown key, a bad value: errors before anything is read.
    for (opt, says) in [
        ("nope.x=1", "unknown format id \"nope\""),
        ("carla.speed=1", "no format has an option \"speed\""),
        (
            "nanover.version=7",
            "nanover option version=7: expected an integer in 1..=2",
        ),
        ("build", "expected key=value"),
    ] {
        let o = recfmt(&["info", "--opt", opt, s]);
        assert_eq!(o.status.code(), Some(1), "{opt}");
        assert!(stderr(&o).contains(says), "{opt}: {}", stderr(&o));
    }
    // A plain key applies to the format read, which must know it.
    let o = recfmt(&["info", "--opt", "build=0.9.10", s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("usvlog has no option \"build\""),
        "{}",
        stderr(&o)
    );
    // USVLOG layouts as a format option read like --layout.
    let dir = fixture("usvlog/unknown_types");
    let layout = dir.join("layouts.toml");
    let via_opt = recfmt(&[
        "info",
        "--json",
        "--opt",
        &format!("usvlog.layout={}", layout.display()),
        dir.to_str().unwrap(),
    ]);
    let via_flag = recfmt(&[
        "info",
        "--json",
        "--layout",
        layout.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(via_opt.status.code(), Some(0), "{}", stderr(&via_opt));
    assert_eq!(via_opt.stdout, via_flag.stdout);
}

#[test]
fn recover_is_refused_for_formats_without_it() {
    let work = tempfile::tempdir().unwrap();
    let err = recfmt::ops::recover(
        recfmt::default_registry(),
        &fixture("usvlog/all_types"),
        &work.path().join("x"),
        &Default::default(),
        Default::default(),
    )
    .unwrap_err();
    assert!(matches!(err, recfmt::Error::Invalid(_)), "{err:?}");
    assert!(
        err.to_string().contains("recover is available for nanover"),
        "{err}"
    );
}

#[test]
fn a_cancelled_call_stops_reading_and_commits_nothing() {
    let registry = recfmt::default_registry();
    let input = fixture("usvlog/all_types");
    for target in ["parquet", "csv", "hdf5"] {
        let work = tempfile::tempdir().unwrap();
        let out = work.path().join("out");
        let cancel = recfmt::Cancel::new();
        let options = recfmt::convert::ConvertOptions {
            open: recfmt::OpenOptions {
                cancel: Some(cancel.clone()),
                ..Default::default()
            },
            target: target.into(),
            batch_rows: 16,
            ..Default::default()
        };
        // Cancelled once the conversion has started writing (its first progress report).
        let progress = |_: recfmt::convert::Progress| cancel.cancel();
        let err = recfmt::convert::convert(registry, &input, &out, &options, Some(&progress))
            .expect_err(target);
        assert!(cancelled_by_its_token(&cancel, &err), "{target}: {err}");
        let left: Vec<_> = std::fs::read_dir(work.path())
            .unwrap()
            .flatten()
            .flat_map(|e| walk(&e.path()))
            .filter(|p| p.is_file())
            .collect();
        assert!(left.is_empty(), "{target}: {left:?}");
    }
    // info and validate stop too; another call, with its own token, is not affected.
    let cancelled = recfmt::Cancel::new();
    cancelled.cancel();
    let open = recfmt::OpenOptions {
        cancel: Some(cancelled.clone()),
        ..Default::default()
    };
    let err = recfmt::inspect::info(registry, &input, &open).unwrap_err();
    assert!(cancelled_by_its_token(&cancelled, &err), "{err}");
    let validate = recfmt::validate::ValidateOptions {
        open,
        ..Default::default()
    };
    let err = recfmt::validate::validate(registry, &input, &validate).unwrap_err();
    assert!(cancelled_by_its_token(&cancelled, &err), "{err}");
    assert!(recfmt::inspect::info(registry, &input, &Default::default()).is_ok());
}

fn cancelled_by_its_token(cancel: &recfmt::Cancel, err: &recfmt::Error) -> bool {
    cancel.is_cancelled()
        && err.kind() == recfmt::core::ErrorKind::Io
        && err.to_string().ends_with("cancelled")
}

fn walk(path: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = vec![path.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(path) {
        for entry in entries.flatten() {
            found.extend(walk(&entry.path()));
        }
    }
    found
}
