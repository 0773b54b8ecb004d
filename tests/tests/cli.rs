//! The `recfmt` command line on generated USVLOG sessions: contracts of `info`, `cat`,
//! `convert` and `validate`, exit codes, and behaviour on bad input.

use recfmt_tests::{copy_dir, fixture, list_files, recfmt};
use serde_json::Value;

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn info_json_reports_streams_time_and_integrity() {
    let path = fixture("usvlog/all_types");
    let out = recfmt(&["info", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let info = json_of(&out);
    assert_eq!(info["format"], "usvlog");
    assert_eq!(info["version"], "1");
    assert_eq!(info["time"]["start"], 1.0);
    assert_eq!(info["time"]["end"], 2.99);
    assert_eq!(info["integrity"]["status"], "complete");
    assert_eq!(info["integrity"]["bytes_lost"], 0);

    // Row counts agree with what the generator wrote into meta.json.
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(path.join("meta.json")).unwrap()).unwrap();
    let counts = meta["files"]["timeseries.bin"]["record_counts"]
        .as_object()
        .unwrap();
    assert_eq!(counts.len(), 13);
    let streams = info["streams"].as_array().unwrap();
    for (name, n) in counts {
        let s = streams
            .iter()
            .find(|s| s["name"] == *name)
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(s["rows"], *n, "{name}");
    }
    let nav = streams
        .iter()
        .find(|s| s["name"] == "REC_NAV_SOLUTION")
        .unwrap();
    assert_eq!(nav["rate_hz"], 100.0);
    let signals = nav["signals"].as_array().unwrap();
    assert_eq!(signals[0]["name"], "t_us");
    assert_eq!(signals[0]["dtype"], "u64");
    assert_eq!(signals[3]["name"], "psi");
    assert_eq!(signals[3]["dtype"], "f32");
    assert_eq!(signals[3]["unit"], "rad");
    let mission = streams
        .iter()
        .find(|s| s["name"] == "REC_MISSION_STATE")
        .unwrap();
    let dtypes: Vec<_> = mission["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["dtype"].clone())
        .collect();
    assert_eq!(dtypes[..4], ["u64", "u16", "u8", "u8"]);
}

#[test]
fn truncated_copy_reports_the_loss_and_exits_3() {
    let path = fixture("usvlog/truncated");
    let out = recfmt(&["info", path.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let info = json_of(&out);
    assert_eq!(info["integrity"]["status"], "truncated");
    // The last record (a 24-byte REC_SENSOR_GYRO) lost 7 of its bytes; 17 remain.
    assert_eq!(info["integrity"]["bytes_lost"], 17);
    let full = std::fs::metadata(fixture("usvlog/all_types/timeseries.bin"))
        .unwrap()
        .len();
    assert_eq!(info["integrity"]["truncated_at"], full - 24);
    let gyro = info["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "REC_SENSOR_GYRO")
        .unwrap();
    assert_eq!(gyro["rows"], 199, "every complete record is kept");

    let text = recfmt(&["info", path.to_str().unwrap()]);
    assert_eq!(text.status.code(), Some(3));
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("truncated at byte"), "{stdout}");

    let validate = recfmt(&["validate", path.to_str().unwrap(), "--json"]);
    assert_eq!(validate.status.code(), Some(3));
    assert_eq!(json_of(&validate)["valid"], false);
}

#[test]
fn strict_mode_turns_a_torn_record_into_an_error_with_its_offset() {
    let path = fixture("usvlog/truncated");
    let out = recfmt(&["info", "--strict", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("timeseries.bin") && err.contains("at byte"),
        "{err}"
    );
}

#[test]
fn a_file_that_is_no_recording_names_the_formats_tried() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.bin");
    std::fs::write(&path, b"this is not a recording").unwrap();
    let out = recfmt(&["info", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("notes.bin") && err.contains("tried: usvlog"),
        "{err}"
    );

    for bytes in [&b""[..], b"USV", b"USVLOG\x01\x00\x00\x00\x02"] {
        std::fs::write(&path, bytes).unwrap();
        let out = recfmt(&["info", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{bytes:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
}

#[test]
fn forcing_a_format_reports_what_was_expected_where() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.bin");
    std::fs::write(
        &path,
        b"USVLOG\x01\x00\x00\x00\x02 and more bytes to fill thirty-two",
    )
    .unwrap();
    let out = recfmt(&["--format", "usvlog", "info", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("at byte 10: expected endianness 1"),
        "{}",
        stderr(&out)
    );
    let out = recfmt(&["info", "--format", "nope", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("known: usvlog"), "{}", stderr(&out));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(recfmt(&["info"]).status.code(), Some(2));
    assert_eq!(recfmt(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        recfmt(&["convert", "x", "--to", "xlsx", "-o", "y"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(recfmt(&["--help"]).status.code(), Some(0));
}

#[test]
fn timeseries_file_and_session_folder_read_the_same() {
    let folder = recfmt(&[
        "info",
        "--json",
        fixture("usvlog/all_types").to_str().unwrap(),
    ]);
    let file = recfmt(&[
        "info",
        "--json",
        fixture("usvlog/all_types/timeseries.bin").to_str().unwrap(),
    ]);
    let (a, b) = (json_of(&folder), json_of(&file));
    assert_eq!(a["streams"], b["streams"]);
}

#[test]
fn cat_prints_ndjson_rows_with_exact_float32_text() {
    let path = fixture("usvlog/all_types");
    let out = recfmt(&[
        "cat",
        path.to_str().unwrap(),
        "--stream",
        "REC_ESC_OUTPUT",
        "--limit",
        "3",
        "--output",
        "ndjson",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["stream"], "REC_ESC_OUTPUT");
    assert_eq!(lines[1]["t_us"], 1_010_000);
    // Generator: u_L = (0.1*step + 5) * 1/8 at step 1, computed in f32.
    let expected = (1.0f32 * 0.1 + 5.0) * 1.0 / 8.0;
    assert_eq!(lines[1]["u_L"].as_f64().unwrap() as f32, expected);
    let out = recfmt(&["cat", path.to_str().unwrap(), "--stream", "NOPE"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("REC_NAV_SOLUTION"),
        "lists the streams"
    );
}

#[test]
fn user_layouts_decode_unknown_records_and_the_rest_stay_raw() {
    let dir = fixture("usvlog/unknown_types");
    let layout = dir.join("layouts.toml");
    let out = recfmt(&[
        "info",
        "--json",
        "--layout",
        layout.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let info = json_of(&out);
    let streams = info["streams"].as_array().unwrap();
    let battery = streams.iter().find(|s| s["name"] == "REC_BATTERY").unwrap();
    assert_eq!(battery["rows"], 30);
    assert_eq!(battery["signals"][3]["shape"], "3");
    let unknown = streams.iter().find(|s| s["name"] == "REC_UNKNOWN").unwrap();
    assert_eq!(unknown["rows"], 30, "type 200 kept raw");

    let without = json_of(&recfmt(&["info", "--json", dir.to_str().unwrap()]));
    let unknown = without["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "REC_UNKNOWN")
        .unwrap();
    assert_eq!(unknown["rows"], 60, "types 99 and 200 both kept raw");

    let cat = recfmt(&[
        "cat",
        "--layout",
        layout.to_str().unwrap(),
        dir.to_str().unwrap(),
        "--stream",
        "REC_BATTERY",
        "--limit",
        "1",
        "--output",
        "ndjson",
    ]);
    let row: Value = serde_json::from_slice(&cat.stdout).unwrap();
    assert_eq!(row["voltage"], 12.5);
    assert_eq!(row["current"], -150);
    assert_eq!(row["cell_mv"], serde_json::json!([4000, 4010, 4020]));
}

#[test]
fn convert_csv_writes_one_file_per_stream_with_native_values() {
    let out_dir = tempfile::tempdir().unwrap();
    let path = fixture("usvlog/all_types");
    let out = recfmt(&[
        "convert",
        path.to_str().unwrap(),
        "--to",
        "csv",
        "-o",
        out_dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let files = list_files(out_dir.path());
    assert_eq!(files.len(), 14, "13 record types and the events: {files:?}");
    assert!(
        files
            .iter()
            .all(|f| f.ends_with(".csv") && !f.starts_with('.')),
        "{files:?}"
    );
    let csv = std::fs::read_to_string(out_dir.path().join("REC_ESC_OUTPUT.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("t_us,u_L,u_R"));
    assert_eq!(lines.clone().count(), 200);
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(first[0], "1000000");
    assert_eq!(first[1].parse::<f32>().unwrap(), 5.0f32 / 8.0);
}

#[test]
fn a_failed_conversion_leaves_no_file_that_looks_whole() {
    let out_dir = tempfile::tempdir().unwrap();
    let path = fixture("usvlog/truncated");
    // Strict mode fails at the torn record, after every stream has received rows.
    let out = recfmt(&[
        "convert",
        "--strict",
        path.to_str().unwrap(),
        "--to",
        "parquet",
        "-o",
        out_dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(list_files(out_dir.path()), Vec::<String>::new());
}

#[test]
fn converting_a_truncated_session_keeps_the_rows_and_exits_3() {
    let work = tempfile::tempdir().unwrap();
    let session = work.path().join("session");
    copy_dir(&fixture("usvlog/truncated"), &session).unwrap();
    let out_dir = work.path().join("out");
    let out = recfmt(&[
        "convert",
        session.to_str().unwrap(),
        "--to",
        "csv",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("lost"), "{}", stderr(&out));
    let gyro = std::fs::read_to_string(out_dir.join("REC_SENSOR_GYRO.csv")).unwrap();
    assert_eq!(gyro.lines().count(), 1 + 199);
}

#[test]
fn icarec_validate_against_a_current_schema_reports_each_problem() {
    let rec = fixture("icarec/all_types.icarec");
    let same = recfmt(&[
        "validate",
        rec.to_str().unwrap(),
        "--against",
        rec.join("schema.json").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(same.status.code(), Some(0), "{}", stderr(&same));
    assert_eq!(json_of(&same)["compatibility"]["compatible"], true);

    let mut schema: Value =
        serde_json::from_str(&std::fs::read_to_string(rec.join("schema.json")).unwrap()).unwrap();
    let signals = schema["signals"].as_array_mut().unwrap();
    let changed = signals.iter_mut().find(|s| s["type"] == "int64").unwrap();
    changed["type"] = "double".into();
    let name = changed["name"].as_str().unwrap().to_string();
    let work = tempfile::tempdir().unwrap();
    let current = work.path().join("schema.json");
    std::fs::write(&current, serde_json::to_string_pretty(&schema).unwrap()).unwrap();
    let out = recfmt(&[
        "validate",
        rec.to_str().unwrap(),
        "--against",
        current.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "type mismatch for '{name}': recording=int64, current=double"
        )),
        "{text}"
    );
}

#[test]
fn icarec_cat_at_prints_the_state_at_a_time() {
    let rec = fixture("icarec/all_types.icarec");
    let out = recfmt(&[
        "cat",
        rec.to_str().unwrap(),
        "--at",
        "0.505",
        "--output",
        "ndjson",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let state = json_of(&out);
    assert_eq!(state["t"], 0.5);
    assert_eq!(state["frame"], 32);
    // The generator's frames are 1/64 s apart: frame 32 is the last at or before 0.505 s.
    let rows = recfmt(&[
        "cat",
        rec.to_str().unwrap(),
        "--stream",
        "dynamic",
        "--output",
        "ndjson",
        "--limit",
        "33",
    ]);
    let last: Value = serde_json::from_str(
        String::from_utf8_lossy(&rows.stdout)
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["t"], 0.5);
    assert_eq!(
        state["values"]["Vehicle.Aero.alpha"],
        last["Vehicle.Aero.alpha"].to_string()
    );
    let usv = recfmt(&[
        "cat",
        fixture("usvlog/all_types").to_str().unwrap(),
        "--at",
        "1",
    ]);
    assert_eq!(usv.status.code(), Some(1));
}

#[test]
fn several_inputs_convert_in_parallel_one_output_each() {
    let out = tempfile::tempdir().unwrap();
    let a = fixture("usvlog/all_types");
    let b = fixture("icarec/all_types.icarec");
    let o = recfmt(&[
        "convert",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--to",
        "csv",
        "-o",
        out.path().to_str().unwrap(),
        "-j",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(list_files(out.path()), ["all_types", "all_types.icarec"]);
    assert_eq!(
        list_files(&out.path().join("all_types.icarec")),
        ["dynamic.csv", "static.csv"]
    );
    assert_eq!(list_files(&out.path().join("all_types")).len(), 14);

    // A glob the shell did not expand: every match converts; the torn one makes the exit 3.
    let out2 = tempfile::tempdir().unwrap();
    let pattern = format!("{}/*.icarec", fixture("icarec").display());
    let o = recfmt(&[
        "convert",
        &pattern,
        "--to",
        "hdf5",
        "-o",
        out2.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert_eq!(
        list_files(out2.path()),
        [
            "all_types.icarec.h5",
            "empty_static.icarec.h5",
            "torn.icarec.h5"
        ]
    );
}

#[test]
fn time_range_and_absolute_time_column_from_the_command_line() {
    let out = tempfile::tempdir().unwrap();
    let rec = fixture("icarec/all_types.icarec");
    let o = recfmt(&[
        "convert",
        rec.to_str().unwrap(),
        "--to",
        "ndjson",
        "-o",
        out.path().to_str().unwrap(),
        "--stream",
        "dynamic",
        "--signal",
        "Vehicle.Nav.position",
        "--start",
        "+0.5s",
        "--end",
        "2026-02-16T12:00:01Z",
        "--time-column",
        "tai",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.path().join("dynamic.ndjson")).unwrap();
    let rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Frames every 1/64 s: [0.5, 1.0) holds 32 of them.
    assert_eq!(rows.len(), 32);
    assert_eq!(rows[0]["t"], 0.5);
    // Columns in schema order: the time column, the composite's members, the TAI column.
    let first = text.lines().next().unwrap();
    let order: Vec<usize> = [
        "\"t\":",
        "\"Vehicle.Nav.position.x\":",
        "\"Vehicle.Nav.position.z\":",
        "\"t_tai\":",
    ]
    .iter()
    .map(|k| first.find(k).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{first}");
    assert_eq!(rows[0].as_object().unwrap().len(), 5, "{first}");
    // 2026-02-16T12:00:00.5 UTC + 37 s = TAI, in ns since 1970.
    assert_eq!(
        rows[0]["t_tai"],
        1_771_243_200_500_000_000i64 + 37_000_000_000
    );
}
