//! `recfmt convert --to <recording format>`: a faithful copy when the formats agree, the
//! generic writer otherwise, and a clear refusal listing what does not fit.

use recfmt_tests::{fixture, list_files, recfmt, samples};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn usvlog_to_usvlog_is_a_byte_identical_copy_torn_tail_included() {
    let work = tempfile::tempdir().unwrap();
    for name in ["all_types", "truncated", "unknown_types"] {
        let source = fixture(&format!("usvlog/{name}"));
        let target = work.path().join(name);
        let o = recfmt(&[
            "convert",
            source.to_str().unwrap(),
            "--to",
            "usvlog",
            "-o",
            target.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        // The session's own files (the fixture's layouts.toml is not part of a session).
        for file in list_files(&source)
            .into_iter()
            .filter(|f| f != "layouts.toml")
        {
            assert_eq!(
                std::fs::read(source.join(&file)).unwrap(),
                std::fs::read(target.join(&file)).unwrap(),
                "{name}/{file}"
            );
        }
    }
}

#[test]
fn selected_streams_go_through_the_generic_writer_and_read_back_the_same() {
    let work = tempfile::tempdir().unwrap();
    let source = fixture("usvlog/all_types");
    let target = work.path().join("nav_only");
    convert(
        &source,
        "usvlog",
        &target,
        &[
            "--stream",
            "REC_NAV_SOLUTION",
            "--stream",
            "REC_MISSION_STATE",
            "--start",
            "+0.5s",
        ],
    );
    let cat = |path: &std::path::Path, stream: &str| {
        let o = recfmt(&[
            "cat",
            path.to_str().unwrap(),
            "--stream",
            stream,
            "--output",
            "ndjson",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    for stream in ["REC_NAV_SOLUTION", "REC_MISSION_STATE"] {
        let original: Vec<String> = cat(&source, stream)
            .lines()
            .filter(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["t_us"].as_u64().unwrap() >= 1_500_000
            })
            .map(String::from)
            .collect();
        let copy: Vec<String> = cat(&target, stream).lines().map(String::from).collect();
        assert!(!copy.is_empty());
        assert_eq!(copy, original, "{stream}");
    }
}

#[test]
fn a_recording_that_does_not_fit_is_refused_with_the_reasons_and_leaves_nothing() {
    let Some(carla) = samples("carla", "log").into_iter().next() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("out");
    let o = recfmt(&[
        "convert",
        carla.to_str().unwrap(),
        "--to",
        "usvlog",
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("does not fit USVLOG")
            && err.contains("stream position")
            && err.contains("known record types"),
        "{err}"
    );
    assert_eq!(
        list_files(work.path()),
        Vec::<String>::new(),
        "no partial folder left"
    );
}

/// `recfmt convert SOURCE --to FORMAT -o TARGET EXTRA...`, asserting success.
fn convert(source: &std::path::Path, format: &str, target: &std::path::Path, extra: &[&str]) {
    let mut args = vec![
        "convert",
        source.to_str().unwrap(),
        "--to",
        format,
        "-o",
        target.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = recfmt(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}: {}",
        source.display(),
        stderr(&o)
    );
}

#[test]
fn carla_and_fgtape_copy_faithfully() {
    let work = tempfile::tempdir().unwrap();
    for log in samples("carla", "log") {
        let target = work.path().join(log.file_name().unwrap());
        convert(&log, "carla", &target, &[]);
        assert_eq!(
            std::fs::read(&log).unwrap(),
            std::fs::read(&target).unwrap(),
            "{}",
            log.display()
        );
    }
    let content = |p: &std::path::Path| {
        let mut out = Vec::new();
        let file = std::fs::File::open(p).unwrap();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(file), &mut out).unwrap();
        out
    };
    for tape in samples("fgtape", "fgtape") {
        let target = work.path().join(tape.file_name().unwrap());
        convert(&tape, "fgtape", &target, &[]);
        assert_eq!(content(&tape), content(&target), "{}", tape.display());
    }
}

#[test]
fn usvlog_to_icarec_keeps_every_value_and_pyarrow_reads_it_back() {
    let work = tempfile::tempdir().unwrap();
    let source = fixture("usvlog/all_types");
    let rec = work.path().join("nav.icarec");
    convert(
        &source,
        "icarec",
        &rec,
        &[
            "--stream",
            "REC_NAV_SOLUTION",
            "--stream",
            "REC_SENSOR_GNSS",
            "--merge",
            "asof:REC_NAV_SOLUTION",
        ],
    );

    // Every NAV value comes back (float32 widened exactly to ICAREC's doubles).
    let nav = recfmt(&[
        "cat",
        source.to_str().unwrap(),
        "--stream",
        "REC_NAV_SOLUTION",
        "--output",
        "ndjson",
    ]);
    let nav: Vec<serde_json::Value> = String::from_utf8_lossy(&nav.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let dynamic = recfmt(&[
        "cat",
        rec.to_str().unwrap(),
        "--stream",
        "dynamic",
        "--output",
        "ndjson",
    ]);
    let dynamic: Vec<serde_json::Value> = String::from_utf8_lossy(&dynamic.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(dynamic.len(), nav.len());
    for (d, n) in dynamic.iter().zip(&nav) {
        assert_eq!(d["t"].as_f64().unwrap(), n["t_us"].as_f64().unwrap() / 1e6);
        for field in ["x", "y", "psi", "v", "r", "b_g"] {
            let want = n[field].as_f64().unwrap() as f32;
            assert_eq!(
                d[format!("REC_NAV_SOLUTION.{field}")].as_f64().unwrap(),
                f64::from(want),
                "{field}"
            );
        }
    }

    // And the ICAREC recording converts to Parquet that pyarrow reads with the same values.
    let Some(python) = recfmt_tests::python_with(&["pyarrow"]) else {
        return;
    };
    let tables = work.path().join("tables");
    let o = recfmt(&[
        "convert",
        rec.to_str().unwrap(),
        "--to",
        "parquet",
        "-o",
        tables.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let script = format!(
        "import pyarrow.parquet as p, json; t = p.read_table({:?}); \
         print(json.dumps([t.num_rows, str(t.schema.field('REC_NAV_SOLUTION.x').type), t.column('REC_NAV_SOLUTION.x').to_pylist()[7], t.column('REC_SENSOR_GNSS.x').to_pylist()[15]]))",
        tables.join("dynamic.parquet").to_str().unwrap()
    );
    let o = std::process::Command::new(python)
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(got[0], nav.len());
    assert_eq!(got[1], "double");
    assert_eq!(
        got[2].as_f64().unwrap(),
        f64::from(nav[7]["x"].as_f64().unwrap() as f32)
    );
    // Row 15 is t = 1.15 s: the latest GNSS row at or before it is the one at 1.1 s.
    let gnss = recfmt(&[
        "cat",
        source.to_str().unwrap(),
        "--stream",
        "REC_SENSOR_GNSS",
        "--output",
        "ndjson",
        "--limit",
        "2",
    ]);
    let second: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&gnss.stdout)
            .lines()
            .nth(1)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(second["t_us"], 1_100_000);
    assert_eq!(
        got[3].as_f64().unwrap(),
        f64::from(second["x"].as_f64().unwrap() as f32)
    );
}
