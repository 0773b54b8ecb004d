//! Regressions of the hardening review (issue 14): inputs that lost data must say so (exit 3),
//! and `validate` must exit non-zero on what it finds.

use std::path::{Path, PathBuf};
use std::process::Output;

use recfmt_tests::{recfmt, samples};
use serde_json::Value;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            stderr(out)
        )
    })
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Item 13: a CARLA log that ends inside a frame (no FrameEnd) is truncated.

/// A CARLA log of `frames` frames (FrameStart, one Position, FrameEnd each); with `cut`, the
/// last frame's FrameEnd packet is left out. Returns the path and the file length.
fn carla_log(dir: &Path, frames: u64, cut: bool) -> (PathBuf, u64) {
    use recfmt::carla::{Flavour, FrameStart, Header, Packet, Position, Vector3, Writer};
    let mut writer = Writer::new(Vec::new(), Flavour::Carla0912);
    writer
        .write_header(&Header::new("Town01", 1_637_676_528))
        .unwrap();
    for id in 1..=frames {
        writer
            .write_packet(&Packet::FrameStart(FrameStart {
                id,
                duration_this: 0.05,
                elapsed: 0.05 * id as f64,
            }))
            .unwrap();
        writer
            .write_packet(&Packet::Position(vec![Position {
                database_id: 24,
                location: Vector3::F32([id as f32, 2.0, 0.5]),
                rotation: Vector3::F32([0.0, 0.0, 90.0]),
            }]))
            .unwrap();
        if !(cut && id == frames) {
            writer.write_packet(&Packet::FrameEnd).unwrap();
        }
    }
    let bytes = writer.into_inner().unwrap();
    let path = dir.join(if cut { "cut.log" } else { "whole.log" });
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes.len() as u64)
}

#[test]
fn carla_log_ending_inside_a_frame_is_truncated_exit_3() {
    let work = tempfile::tempdir().unwrap();
    let (whole, _) = carla_log(work.path(), 4, false);
    let o = recfmt(&["validate", s(&whole)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let (cut, len) = carla_log(work.path(), 4, true);
    let o = recfmt(&["info", "--json", s(&cut)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let info = json_of(&o);
    assert_eq!(info["integrity"]["status"], "truncated");
    assert_eq!(info["integrity"]["truncated_at"], len);
    let warnings = info["integrity"]["warnings"].to_string();
    assert!(warnings.contains("inside frame 4"), "{warnings}");

    let o = recfmt(&["validate", s(&cut)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("truncated"), "{out}");

    // Every complete frame is still converted (and the last one's complete packets).
    let out_dir = work.path().join("csv");
    let o = recfmt(&["convert", s(&cut), "--to", "csv", "-o", s(&out_dir)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let positions = std::fs::read_to_string(out_dir.join("position.csv")).unwrap();
    assert_eq!(positions.lines().count(), 1 + 4, "{positions}");

    // Strict reading refuses it, naming the offset.
    let o = recfmt(&["--strict", "validate", s(&cut)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("at byte {len}")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn carla_sample_cut_between_packets_of_a_frame_is_truncated() {
    let Some(sample) = samples("carla", "log").into_iter().next() else {
        return;
    };
    let bytes = std::fs::read(&sample).unwrap();
    // The end of the first Position packet after the 20th FrameStart: a packet boundary
    // inside a frame.
    let mut reader = recfmt::carla::Reader::new(&bytes[..]);
    reader.read_header().unwrap();
    let mut packet = recfmt::carla::Packet::default();
    let mut cut = None;
    while reader.read_packet(&mut packet).unwrap() {
        if let recfmt::carla::Packet::FrameStart(f) = &packet
            && f.id == 20
        {
            reader.read_packet(&mut packet).unwrap();
            cut = Some(reader.position() as usize);
            break;
        }
    }
    let cut = cut.expect("a 20th frame");
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("cut.log");
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let o = recfmt(&["validate", "--json", s(&path)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["integrity"]["status"], "truncated");
    assert_eq!(v["valid"], false);
}

/// `recfmt convert --to carla` of a log cut inside a frame: a copy of every packet, exit 3.
#[test]
fn carla_copy_of_a_log_ending_inside_a_frame_exits_3() {
    let work = tempfile::tempdir().unwrap();
    let (cut, _) = carla_log(work.path(), 3, true);
    let copy = work.path().join("copy.log");
    let o = recfmt(&["convert", s(&cut), "--to", "carla", "-o", s(&copy)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("inside frame 3"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&cut).unwrap(), std::fs::read(&copy).unwrap());
    // A whole log copies with exit 0.
    let (whole, _) = carla_log(work.path(), 3, false);
    let copy = work.path().join("whole-copy.log");
    let o = recfmt(&["convert", s(&whole), "--to", "carla", "-o", s(&copy)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

// ---------------------------------------------------------------------------------------------
// Item 16: a truncated FlightGear tape converts to a tape of its complete frames (exit 3), and a
// tape cut inside its header is truncated (exit 3), not an error.

/// A gzip-compressed legacy-layout tape with `frames` frames in its short-term container.
fn fgtape_bytes(frames: usize) -> Vec<u8> {
    use recfmt::fgtape::normal::{Frame, FrameLayout, Header, NormalTape, RawData};
    use recfmt::fgtape::props::{PropValue, PropertyList};
    use recfmt::fgtape::signals::SignalValue;
    let mut config = PropertyList::new();
    config
        .root
        .set("signals/signal/type", PropValue::string("double"));
    config
        .root
        .set("signals/signal/property", PropValue::string("/altitude-ft"));
    let mut meta = PropertyList::new();
    meta.root
        .set("meta/aircraft-type", PropValue::string("test"));
    meta.root
        .set("meta/version/flightgear", PropValue::string("2018.3.1"));
    let header = Header::new(meta, config).unwrap();
    let rs = header.record_size();
    let frames: Vec<Frame> = (0..frames)
        .map(|i| Frame {
            time: i as f64,
            // Values that do not compress away, so a cut of the gzip stream lands mid-frames.
            signals: header
                .signals
                .encode(&[SignalValue::Double((i as f64 * 0.37).sin() * 1e4)])
                .unwrap(),
            ..Frame::default()
        })
        .collect();
    NormalTape {
        header,
        layout: FrameLayout::Legacy,
        raw_data: [
            RawData::new(frames, rs),
            RawData::default(),
            RawData::default(),
        ],
        trailing: Vec::new(),
    }
    .write_gzip(Vec::new())
    .unwrap()
}

fn signal_rows(info: &Value) -> u64 {
    info["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "signals")
        .map_or(0, |s| s["rows"].as_u64().unwrap())
}

/// Converts a cut tape to a tape: exit 3, and the copy holds exactly the frames `info` reads
/// from the cut input, as a complete tape.
fn assert_cut_tape_copies(cut: &Path, work: &Path) {
    let o = recfmt(&["info", "--json", s(cut)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let rows = signal_rows(&json_of(&o));
    assert!(rows > 0);

    let copy = work.join("copy.fgtape");
    let o = recfmt(&["convert", s(cut), "--to", "fgtape", "-o", s(&copy)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("file ends early"), "{}", stderr(&o));
    let o = recfmt(&["info", "--json", s(&copy)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let info = json_of(&o);
    assert_eq!(info["integrity"]["status"], "complete");
    assert_eq!(signal_rows(&info), rows);

    // The same rows as the CSV conversion of the cut input.
    let csv_in = work.join("csv-in");
    let o = recfmt(&["convert", s(cut), "--to", "csv", "-o", s(&csv_in)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let csv_copy = work.join("csv-copy");
    let o = recfmt(&["convert", s(&copy), "--to", "csv", "-o", s(&csv_copy)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(csv_in.join("signals.csv")).unwrap(),
        std::fs::read_to_string(csv_copy.join("signals.csv")).unwrap()
    );
}

#[test]
fn truncated_fgtape_converts_to_fgtape_with_its_complete_frames() {
    let work = tempfile::tempdir().unwrap();
    let bytes = fgtape_bytes(5000);
    let cut = work.path().join("cut.fgtape");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    assert_cut_tape_copies(&cut, work.path());
}

#[test]
fn truncated_fgtape_sample_converts_to_fgtape_with_its_complete_frames() {
    let Some(sample) = samples("fgtape", "fgtape")
        .into_iter()
        .find(|p| p.to_string_lossy().contains("fg2.11.0"))
    else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let cut = work.path().join("cut.fgtape");
    std::fs::write(&cut, &std::fs::read(&sample).unwrap()[..200_000]).unwrap();
    assert_cut_tape_copies(&cut, work.path());
}

#[test]
fn fgtape_cut_inside_its_header_is_truncated_exit_3() {
    let work = tempfile::tempdir().unwrap();
    let bytes = fgtape_bytes(10);
    // Decompressed, so the cut lands in the header for sure: inside the Config container.
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut plain).unwrap();
    let config_at = plain.len() - 3 * 12 - 10 * 16 - 40;
    let cut = work.path().join("cut.fgtape");
    std::fs::write(&cut, &plain[..config_at]).unwrap();

    for command in [&["info", "--json"][..], &["validate", "--json"][..]] {
        let mut args = command.to_vec();
        args.push(s(&cut));
        let o = recfmt(&args);
        assert_eq!(o.status.code(), Some(3), "{command:?}: {}", stderr(&o));
        let v = json_of(&o);
        assert_eq!(v["integrity"]["status"], "truncated", "{command:?}");
        assert!(
            v["integrity"]["warnings"]
                .to_string()
                .contains("inside its header"),
            "{v}"
        );
    }
    for to in ["parquet", "fgtape"] {
        let out = work.path().join(format!("out-{to}"));
        let o = recfmt(&["convert", s(&cut), "--to", to, "-o", s(&out)]);
        assert_eq!(o.status.code(), Some(3), "--to {to}: {}", stderr(&o));
        assert!(stderr(&o).contains("nothing written"), "{}", stderr(&o));
        assert!(!out.exists(), "--to {to}");
    }
    // Strict reading refuses it.
    let o = recfmt(&["--strict", "info", s(&cut)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("file ends early"), "{}", stderr(&o));
}

// ---------------------------------------------------------------------------------------------
// Item 17: `validate` exits 1 when INVALID (3 when data was lost), always checks ICAREC
// digests, and refuses an invalid schema to check against.

/// A copy of the generated ICAREC fixture, writable.
fn icarec_copy(dir: &Path) -> PathBuf {
    let to = dir.join("rec.icarec");
    recfmt_tests::copy_dir(&recfmt_tests::fixture("icarec/all_types.icarec"), &to).unwrap();
    to
}

fn problems(v: &Value) -> String {
    v["problems"].to_string()
}

#[test]
fn validate_of_a_traj_whose_time_goes_backwards_is_invalid_exit_1() {
    use recfmt::nanover::generate;
    let work = tempfile::tempdir().unwrap();
    let (frames, _) = generate::small_recording();
    assert!(frames.len() >= 3);
    let mut bytes = generate::write_traj(Vec::new(), &frames).unwrap();
    // The third record is stamped before the second (the writer refuses that, so the bytes are
    // patched: records are a u128 timestamp, a u64 length and the payload, after 16 bytes).
    let mut at = 16;
    let mut stamps = Vec::new();
    while at < bytes.len() {
        stamps.push(at);
        let len = u64::from_le_bytes(bytes[at + 16..at + 24].try_into().unwrap()) as usize;
        at += 24 + len;
    }
    let second = u128::from_le_bytes(bytes[stamps[1]..stamps[1] + 16].try_into().unwrap());
    bytes[stamps[2]..stamps[2] + 16].copy_from_slice(&(second - 1).to_le_bytes());
    let traj = work.path().join("backwards.traj");
    std::fs::write(&traj, &bytes).unwrap();

    let o = recfmt(&["validate", s(&traj)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("INVALID"), "{out}");
    assert!(out.contains("backwards"), "{out}");

    let o = recfmt(&["validate", "--json", s(&traj)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["valid"], false);
    assert_eq!(v["integrity"]["status"], "complete");

    // In order, the same recording is valid.
    let (frames, _) = generate::small_recording();
    let ok = work.path().join("ok.traj");
    generate::write_traj(std::fs::File::create(&ok).unwrap(), &frames).unwrap();
    let o = recfmt(&["validate", s(&ok)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn validate_reports_an_icarec_digest_mismatch_without_strict() {
    let work = tempfile::tempdir().unwrap();
    let rec = icarec_copy(work.path());
    let o = recfmt(&["validate", s(&rec)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // One byte of a frame's payload changed: same size, other SHA-256.
    let data = rec.join("dynamic_signals.bin");
    let mut bytes = std::fs::read(&data).unwrap();
    bytes[100] ^= 0xff;
    std::fs::write(&data, &bytes).unwrap();
    let o = recfmt(&["validate", "--json", s(&rec)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["valid"], false);
    let p = problems(&v);
    assert!(
        p.contains("dynamic_signals.bin") && p.contains("at byte 0") && p.contains("sha256"),
        "{p}"
    );
    // --strict still refuses it, as before.
    let o = recfmt(&["--strict", "validate", s(&rec)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("sha256"), "{}", stderr(&o));
}

#[test]
fn validate_reports_an_icarec_schema_checksum_mismatch_as_a_problem() {
    let work = tempfile::tempdir().unwrap();
    let rec = icarec_copy(work.path());
    let schema = rec.join("schema.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&schema).unwrap()).unwrap();
    doc["checksum"] = format!("sha256:{}", "0".repeat(64)).into();
    std::fs::write(&schema, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let o = recfmt(&["validate", "--json", s(&rec)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["valid"], false);
    let p = problems(&v);
    assert!(
        p.contains("schema.json") && p.contains("expected checksum sha256:"),
        "{p}"
    );
}

#[test]
fn validate_against_refuses_an_invalid_schema() {
    let rec = recfmt_tests::fixture("icarec/all_types.icarec");
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(rec.join("schema.json")).unwrap()).unwrap();
    let work = tempfile::tempdir().unwrap();
    // A schema with its checksum recomputed after `edit`, so only the edit makes it invalid.
    let write = |name: &str, edit: &dyn Fn(&mut Value)| -> PathBuf {
        let mut doc = original.clone();
        edit(&mut doc);
        doc.as_object_mut().unwrap().remove("checksum");
        doc["checksum"] = recfmt::icarec::schema_checksum(&doc).into();
        let path = work.path().join(name);
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        path
    };

    let valid = write("valid.json", &|_| {});
    let o = recfmt(&["validate", s(&rec), "--against", s(&valid)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let bad_time = write("bad_time.json", &|d| {
        d["time"] = serde_json::json!({"system": "UTC", "epoch": "not a time", "units": "seconds"});
    });
    let bad_created = write("bad_created.json", &|d| {
        d["created_at"] = "yesterday".into()
    });
    for (schema, what) in [(&bad_time, "time object"), (&bad_created, "created_at")] {
        let o = recfmt(&["validate", s(&rec), "--against", s(schema)]);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("not a valid schema to check against")
                && err.contains("at byte")
                && err.contains(what),
            "{err}"
        );
        assert!(o.stdout.is_empty(), "{what}: refused before any report");
    }

    // A checksum that does not match the schema: a problem (INVALID), an error when strict.
    let mut doc = original.clone();
    doc["checksum"] = format!("sha256:{}", "0".repeat(64)).into();
    let wrong = work.path().join("wrong_checksum.json");
    std::fs::write(&wrong, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let o = recfmt(&["validate", "--json", s(&rec), "--against", s(&wrong)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let p = problems(&json_of(&o));
    assert!(
        p.contains("wrong_checksum.json") && p.contains("checksum"),
        "{p}"
    );
    let o = recfmt(&["--strict", "validate", s(&rec), "--against", s(&wrong)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not a valid schema to check against"),
        "{}",
        stderr(&o)
    );
}

// ---------------------------------------------------------------------------------------------
// Item 1: a non-finite frame time with an absolute time column is bad input, not a panic.

#[test]
fn non_finite_time_with_an_absolute_time_column_is_an_error_not_a_panic() {
    for name in ["icarec_nan_time.icarec", "icarus_nan_time.h5"] {
        let Some(input) = recfmt_tests::reproducer(name) else {
            return;
        };
        for system in ["utc", "tai", "gps"] {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("out");
            let run = recfmt(&[
                "convert",
                s(&input),
                "--to",
                "csv",
                "--time-column",
                system,
                "-o",
                s(&out),
            ]);
            let err = stderr(&run);
            assert_eq!(run.status.code(), Some(1), "{name} {system}: {err}");
            assert!(
                err.contains("time NaN s has no absolute") && err.contains(name),
                "{name} {system}: {err}"
            );
            // Where in the input the bad record lies: a byte offset, or a row of the HDF5
            // file (whose datasets are not read in file order).
            let position = if name.ends_with(".h5") {
                "lies before row "
            } else {
                "lies before byte "
            };
            assert!(err.contains(position), "{name} {system}: {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

#[test]
fn absolute_instants_of_non_finite_or_absurd_times_are_none() {
    use recfmt::core::{TimeReference, TimeSystem};
    let reference = TimeReference::parse(TimeSystem::Utc, Some("2020-01-01T00:00:00Z")).unwrap();
    for t in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300, -1e20] {
        assert_eq!(reference.to_system(t, TimeSystem::Tai), None, "{t}");
        assert_eq!(reference.to_rfc3339(t), None, "{t}");
    }
    assert!(reference.to_system(1.5, TimeSystem::Gps).is_some());
}

// ---------------------------------------------------------------------------------------------
// Items 2 and 3: a raster merge is sized before it starts and refused when absurd.

#[test]
fn raster_merge_over_an_absurd_time_span_is_refused_before_writing() {
    for (name, step) in [
        ("usvlog_time_jump_2e62", "raster:1s"),
        ("nanover_ts_jump_raster_oom.traj", "raster:0.1s"),
    ] {
        let Some(input) = recfmt_tests::reproducer(name) else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let run = recfmt(&[
            "convert",
            s(&input),
            "--merge",
            step,
            "--to",
            "csv",
            "-o",
            s(&out),
        ]);
        let err = stderr(&run);
        assert_eq!(run.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains("would write") && err.contains("--max-rows"),
            "{err}"
        );
        assert!(
            recfmt_tests::list_files(&out).is_empty(),
            "{name}: nothing may be written: {:?}",
            recfmt_tests::list_files(&out)
        );
    }
}

#[test]
fn raster_merge_honours_max_rows_and_counts_rows_exactly() {
    let input = recfmt_tests::fixture("usvlog/all_types");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // The fixture spans a known time; a raster of it at 10 ms has a known row count.
    let info = json_of(&recfmt(&["info", s(&input), "--json"]));
    let (start, end) = (
        info["time"]["start"].as_f64().unwrap(),
        info["time"]["end"].as_f64().unwrap(),
    );
    let rows = ((end - start) / 0.01 + 1e-9).floor() as u64 + 1;
    let too_few = (rows - 1).to_string();
    let run = recfmt(&[
        "convert",
        s(&input),
        "--merge",
        "raster:10ms",
        "--max-rows",
        &too_few,
        "--to",
        "csv",
        "-o",
        s(&out),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(
        stderr(&run).contains(&format!("would write {rows} rows")),
        "{}",
        stderr(&run)
    );
    let enough = rows.to_string();
    let run = recfmt(&[
        "convert",
        s(&input),
        "--merge",
        "raster:10ms",
        "--max-rows",
        &enough,
        "--to",
        "csv",
        "-o",
        s(&out),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let csv = std::fs::read_to_string(out.join("merged.csv")).unwrap();
    assert_eq!(
        csv.lines().count() as u64,
        rows + 1,
        "header plus one line per raster row"
    );
}

// ---------------------------------------------------------------------------------------------
// Items 7-10: outputs never replace what was there unless asked, never through a link, and a
// folder another run is writing is refused.

fn usvlog_fixture() -> PathBuf {
    recfmt_tests::fixture("usvlog/all_types")
}

#[test]
fn an_existing_output_is_refused_without_force_and_replaced_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = usvlog_fixture();
    // A single-file output.
    let h5 = dir.path().join("out.h5");
    std::fs::write(&h5, b"precious").unwrap();
    let run = recfmt(&["convert", s(&input), "--to", "hdf5", "-o", s(&h5)]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(stderr(&run).contains("--force"), "{}", stderr(&run));
    assert_eq!(std::fs::read(&h5).unwrap(), b"precious");
    let run = recfmt(&[
        "--force",
        "convert",
        s(&input),
        "--to",
        "hdf5",
        "-o",
        s(&h5),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(
        std::fs::read(&h5)
            .unwrap()
            .starts_with(b"\x89HDF\r\n\x1a\n")
    );
    // A folder of tables: refused as a whole before anything is written.
    let out = dir.path().join("tables");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("REC_NAV_SOLUTION.csv"), b"precious").unwrap();
    let run = recfmt(&["convert", s(&input), "--to", "csv", "-o", s(&out)]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert_eq!(recfmt_tests::list_files(&out), ["REC_NAV_SOLUTION.csv"]);
    let run = recfmt(&[
        "--force",
        "convert",
        s(&input),
        "--to",
        "csv",
        "-o",
        s(&out),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(recfmt_tests::list_files(&out).len() > 1);
    assert!(
        recfmt_tests::list_files(&out)
            .iter()
            .all(|n| !n.starts_with('.')),
        "no temporary or lock file is left: {:?}",
        recfmt_tests::list_files(&out)
    );
}

#[cfg(unix)]
#[test]
fn outputs_never_go_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let input = usvlog_fixture();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    // A link at the output name is not a regular file: refused even with --force.
    let h5 = dir.path().join("out.h5");
    std::os::unix::fs::symlink(&victim, &h5).unwrap();
    // And links planted at the temporary names older versions used change nothing.
    std::os::unix::fs::symlink(&victim, dir.path().join(".out.h5.partial")).unwrap();
    for force in [false, true] {
        let mut args = vec!["convert", s(&input), "--to", "hdf5", "-o", s(&h5)];
        if force {
            args.insert(0, "--force");
        }
        let run = recfmt(&args);
        assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
        assert!(
            stderr(&run).contains("not a regular file"),
            "{}",
            stderr(&run)
        );
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    assert!(
        std::fs::symlink_metadata(&h5)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A fresh name next to the planted temporary link is written as a regular file.
    let fresh = dir.path().join("fresh.h5");
    std::os::unix::fs::symlink(&victim, dir.path().join(".fresh.h5.partial")).unwrap();
    let run = recfmt(&["convert", s(&input), "--to", "hdf5", "-o", s(&fresh)]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(
        std::fs::symlink_metadata(&fresh)
            .unwrap()
            .file_type()
            .is_file()
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn a_folder_another_run_is_writing_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tables");
    std::fs::create_dir(&out).unwrap();
    // This test process is alive, so its lock is live.
    std::fs::write(
        out.join(".recfmt.lock"),
        format!("{}\n", std::process::id()),
    )
    .unwrap();
    let run = recfmt(&[
        "convert",
        s(&usvlog_fixture()),
        "--to",
        "csv",
        "-o",
        s(&out),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(stderr(&run).contains("another run"), "{}", stderr(&run));
    assert_eq!(recfmt_tests::list_files(&out), [".recfmt.lock"]);
}

#[test]
fn a_failed_conversion_leaves_no_folder_behind() {
    let Some(input) = recfmt_tests::reproducer("icarec_nan_time.icarec") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("new_folder");
    let run = recfmt(&[
        "convert",
        s(&input),
        "--to",
        "csv",
        "--time-column",
        "utc",
        "-o",
        s(&out),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(!out.exists(), "{:?}", recfmt_tests::list_files(&out));
}

// ---------------------------------------------------------------------------------------------
// Item 6: inputs that are not regular files or folders are refused, not read forever.

#[cfg(unix)]
#[test]
fn devices_and_fifos_are_refused_as_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let mut inputs = vec![PathBuf::from("/dev/zero")];
    if made.is_ok_and(|s| s.success()) {
        inputs.push(fifo);
    }
    for input in &inputs {
        for args in [
            vec!["info", s(input)],
            vec![
                "--format",
                "nanover",
                "--nanover-version",
                "1",
                "info",
                s(input),
            ],
            vec!["--format", "usvlog", "validate", s(input)],
        ] {
            let run = recfmt(&args);
            assert_eq!(run.status.code(), Some(1), "{args:?}: {}", stderr(&run));
            assert!(
                stderr(&run).contains("not a regular file or folder"),
                "{}",
                stderr(&run)
            );
        }
        let out = dir.path().join("out");
        let run = recfmt(&[
            "--format",
            "nanover",
            "--nanover-version",
            "1",
            "convert",
            s(input),
            "--to",
            "csv",
            "-o",
            s(&out),
        ]);
        assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
        assert!(!out.exists());
    }
}

// ---------------------------------------------------------------------------------------------
// Item 11: an ICAREC recording cut at a frame boundary lost data (metadata.json says so).

#[test]
fn icarec_cut_at_a_frame_boundary_is_truncated_exit_3() {
    let Some(input) = recfmt_tests::reproducer("icarec_trunc_boundary.icarec") else {
        return;
    };
    let run = recfmt(&["validate", s(&input), "--json"]);
    assert_eq!(run.status.code(), Some(3), "{}", stderr(&run));
    let run = recfmt(&["info", s(&input), "--json"]);
    let info = json_of(&run);
    assert_eq!(info["integrity"]["status"], "truncated", "{info}");
    // 100 of 200 frames of 216 bytes are missing.
    assert_eq!(info["integrity"]["bytes_lost"], 100 * 216, "{info}");
    assert_eq!(info["integrity"]["truncated_at"], 100 * 216, "{info}");
    let run = recfmt(&["--strict", "info", s(&input)]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(stderr(&run).contains("frame_count"), "{}", stderr(&run));
}

// ---------------------------------------------------------------------------------------------
// Item 4: a `.nanover.zip` naming a member twice has no single meaning: refused.

#[test]
fn nanover_zip_with_two_index_members_is_refused() {
    let Some(input) = recfmt_tests::reproducer("dup_index_last_empty.nanover.zip") else {
        return;
    };
    let run = recfmt(&["info", s(&input)]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("one index.msgpack member in the zip, found 2"),
        "{}",
        stderr(&run)
    );
    // The error points at the second copy's central directory entry, not at byte 0.
    let bytes = std::fs::read(&input).unwrap();
    let second = bytes
        .windows(4)
        .enumerate()
        .filter(|(i, w)| *w == b"PK\x01\x02" && bytes[i + 46..].starts_with(b"index.msgpack"))
        .map(|(i, _)| i)
        .nth(1)
        .expect("two index.msgpack directory entries");
    assert!(
        stderr(&run).contains(&format!("at byte {second}:")),
        "{}",
        stderr(&run)
    );
}

// ---------------------------------------------------------------------------------------------
// Item 4: a `.nanover.zip` whose index entries all point at one message costs memory per
// message read, not per entry.

/// Peak resident memory of `recfmt args`, in KiB, from GNU time; `None` where it is missing.
fn recfmt_peak_kib(args: &[&str]) -> Option<(Output, u64)> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        assert!(
            !recfmt_tests::in_ci(),
            "CI is set but /usr/bin/time is missing"
        );
        eprintln!("skipping: no /usr/bin/time");
        return None;
    }
    let out = std::process::Command::new(time)
        .args(["-f", "PEAK_KIB=%M"])
        .arg(recfmt_tests::recfmt_bin())
        .args(args)
        .output()
        .unwrap();
    let kib = stderr(&out)
        .lines()
        .find_map(|l| l.strip_prefix("PEAK_KIB=")?.trim().parse().ok())
        .expect("GNU time's PEAK_KIB line");
    Some((out, kib))
}

#[test]
fn nanover_zip_index_amplification_does_not_multiply_memory() {
    let Some(input) = recfmt_tests::reproducer("amp_index_20000.nanover.zip") else {
        return;
    };
    let Some((run, kib)) = recfmt_peak_kib(&["info", "--json", s(&input)]) else {
        return;
    };
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let info = json_of(&run);
    assert_eq!(info["rows"], 20_000, "{info}");
    // Every entry decoded and kept took 435 MB for this 2.3 MB file; one message at a time
    // stays near the baseline (24 MB measured).
    assert!(kib < 100 * 1024, "peak memory {kib} KiB");
}

// ---------------------------------------------------------------------------------------------
// Item 15: a `.nanover.zip` cut short keeps every complete message, exit 3.

#[test]
fn truncated_nanover_zip_converts_its_complete_messages_exit_3() {
    let Some(input) = recfmt_tests::reproducer("nzip_trunc_half.nanover.zip") else {
        return;
    };
    let o = recfmt(&["info", "--json", s(&input)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let info = json_of(&o);
    assert_eq!(info["integrity"]["status"], "truncated");
    assert_eq!(info["integrity"]["truncated_at"], 418_246);
    assert_eq!(info["rows"], 245, "{info}");
    let warnings = info["integrity"]["warnings"].to_string();
    assert!(warnings.contains("no central directory"), "{warnings}");

    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("csv");
    let o = recfmt(&["convert", s(&input), "--to", "csv", "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let frames = std::fs::read_to_string(out.join("frames.csv")).unwrap();
    assert_eq!(frames.lines().count(), 1 + 244);

    let o = recfmt(&["validate", s(&input)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
}

// ---------------------------------------------------------------------------------------------
// Item 18: `.nanover.zip` validates, converts to `.traj` + `.state`, and copies as a zip.

#[test]
fn nanover_zip_validates_and_converts_to_traj_state_and_zip() {
    let zips = samples("nanover/converted", "zip");
    assert!(!zips.is_empty() || recfmt_tests::samples_dir().is_none());
    for zip in zips {
        let work = tempfile::tempdir().unwrap();
        let o = recfmt(&["validate", "--json", s(&zip)]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v = json_of(&o);
        assert_eq!(v["valid"], true, "{v}");
        let rows = v["rows"].as_u64().unwrap();
        assert!(rows > 0);

        // --to nanover: a .traj and a .state, not the zip's bytes.
        let traj = work.path().join("copy.traj");
        let o = recfmt(&["convert", s(&zip), "--to", "nanover", "-o", s(&traj)]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let head = std::fs::read(&traj).unwrap();
        assert!(
            head.starts_with(&recfmt_nanover_magic()),
            "not a .traj: {:02x?}",
            &head[..8]
        );
        assert!(work.path().join("copy.state").exists());
        // The note says what was done (not "record for record": the zip has messages).
        let said = stderr(&o);
        assert!(
            said.contains("message by message, as a .traj and .state")
                && said.contains("copy.state"),
            "{said}"
        );
        let o = recfmt(&["validate", "--json", s(&traj)]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(json_of(&o)["rows"], rows);

        // --to nanover-zip: a zip, byte for byte for an intact one, that reads back.
        let copy = work.path().join("copy.nanover.zip");
        let o = recfmt(&["convert", s(&zip), "--to", "nanover-zip", "-o", s(&copy)]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&zip).unwrap());
        let o = recfmt(&["validate", "--json", s(&copy)]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(json_of(&o)["rows"], rows);
    }
}

/// The NanoVer magic number, as the first 8 bytes of a `.traj`.
fn recfmt_nanover_magic() -> [u8; 8] {
    6_661_355_757_386_708_963u64.to_le_bytes()
}

#[test]
fn a_truncated_nanover_zip_copies_to_a_valid_zip_of_what_it_holds_exit_3() {
    let Some(input) = recfmt_tests::reproducer("nzip_trunc_half.nanover.zip") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("rest.nanover.zip");
    let o = recfmt(&["convert", s(&input), "--to", "nanover-zip", "-o", s(&copy)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let o = recfmt(&["validate", "--json", s(&copy)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(json_of(&o)["rows"], 245);
}
