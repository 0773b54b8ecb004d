//! Regressions of the second hardening review (issue 26), items 9 to 14: values and names the
//! outputs got wrong. Inputs are made here (the layout of `reproducers/round2/icagen.py`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use recfmt::icarec::{
    Lifecycle, MetadataDoc, MetadataMode, SchemaBuilder, SignalType, SignalValue, TimeSpec, Writer,
    WriterOptions,
};
use recfmt_tests::{python_with, recfmt};
use serde_json::Value;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn ok(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// An ICAREC recording at `dir/name`: one dynamic double per name (value `row + column / 10`),
/// one frame per time, and `epoch` as the time reference.
fn icarec(dir: &Path, name: &str, signals: &[&str], times: &[f64], epoch: &str) -> PathBuf {
    let mut builder = SchemaBuilder::new("2.3.1", "1.5.0", "2026-11-22T10:30:00Z").unwrap();
    for signal in signals {
        builder = builder.signal(signal, SignalType::Double, Lifecycle::Dynamic, "m");
    }
    let schema = builder.build().unwrap();
    let metadata = MetadataDoc {
        time: Some(TimeSpec {
            system: Some("UTC".into()),
            epoch: Some(epoch.into()),
            units: Some("seconds".into()),
            ..TimeSpec::default()
        }),
        ..MetadataDoc::default()
    };
    let path = dir.join(name);
    let options = WriterOptions {
        metadata: MetadataMode::Computed(metadata),
        ..WriterOptions::default()
    };
    let mut writer = Writer::create(&path, schema, &[], options).unwrap();
    let mut payload = vec![0u8; writer.schema().layout().dynamic_size];
    for (row, t) in times.iter().enumerate() {
        for (column, signal) in signals.iter().enumerate() {
            let value = row as f64 + column as f64 / 10.0;
            writer
                .schema()
                .encode(&mut payload, signal, SignalValue::Double(value))
                .unwrap();
        }
        writer.append(*t, &payload).unwrap();
    }
    writer.finish().unwrap();
    path
}

// ---------------------------------------------------------------------------------------------
// Item 9: a signal named `t` (or `stream`) beside the time column.

const CLASHING: [&str; 3] = ["S.a", "t", "stream"];

/// The keys of a JSON object as written, in order (a parser keeps only one of equal keys).
fn keys_as_written(line: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut rest = line;
    // Every key follows `{` or `,` and ends at `":`; values here are numbers or plain strings.
    while let Some(at) = rest.find(['{', ',']) {
        rest = &rest[at + 1..];
        if let Some(body) = rest.strip_prefix('"')
            && let Some(end) = body.find("\":")
        {
            keys.push(body[..end].to_owned());
        }
    }
    keys
}

#[test]
fn a_signal_named_like_the_time_column_is_renamed_the_same_way_everywhere() {
    let work = tempfile::tempdir().unwrap();
    let input = icarec(
        work.path(),
        "named_t.icarec",
        &CLASHING,
        &[0.0, 0.5, 1.0],
        "2024-12-22T00:00:00Z",
    );

    // CSV: one header, every column once.
    let csv = work.path().join("csv");
    let out = recfmt(&["convert", s(&input), "--to", "csv", "-o", s(&csv)]);
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "note: stream \"dynamic\": signal \"t\" is written as column \"t_2\", since another column has its name"
        ),
        "{stderr}"
    );
    let table = std::fs::read_to_string(csv.join("dynamic.csv")).unwrap();
    let mut lines = table.lines();
    assert_eq!(lines.next(), Some("t,S.a,t_2,stream"));
    assert_eq!(lines.next(), Some("0.0,0.0,0.1,0.2"));

    // NDJSON export and `cat --output ndjson`: no key twice; the time stays the time, the
    // stream key stays the stream's name.
    let ndjson = work.path().join("ndjson");
    ok(&recfmt(&[
        "convert",
        s(&input),
        "--to",
        "ndjson",
        "-o",
        s(&ndjson),
    ]));
    let first = std::fs::read_to_string(ndjson.join("dynamic.ndjson")).unwrap();
    let first = first.lines().nth(1).unwrap();
    assert_eq!(keys_as_written(first), ["t", "S.a", "t_2", "stream_2"]);
    let row: Value = serde_json::from_str(first).unwrap();
    assert_eq!(
        (row["t"].as_f64(), row["t_2"].as_f64()),
        (Some(0.5), Some(1.1))
    );

    let cat = recfmt(&[
        "cat",
        s(&input),
        "--output",
        "ndjson",
        "--stream",
        "dynamic",
    ]);
    ok(&cat);
    let rows = text(&cat.stdout);
    let first = rows.lines().nth(1).unwrap();
    assert_eq!(
        keys_as_written(first),
        ["stream", "t", "S.a", "t_2", "stream_2"]
    );
    let row: Value = serde_json::from_str(first).unwrap();
    assert_eq!(row["stream"], "dynamic");
    assert_eq!(
        (row["t"].as_f64(), row["stream_2"].as_f64()),
        (Some(0.5), Some(1.2))
    );

    // Parquet and Arrow IPC read back by pyarrow: one column per name, the renaming in the
    // metadata.
    let parquet = work.path().join("parquet");
    ok(&recfmt(&[
        "convert",
        s(&input),
        "--to",
        "parquet",
        "-o",
        s(&parquet),
    ]));
    let arrow = work.path().join("arrow");
    ok(&recfmt(&[
        "convert",
        s(&input),
        "--to",
        "arrow",
        "-o",
        s(&arrow),
    ]));
    let mcap = work.path().join("named_t.mcap");
    ok(&recfmt(&[
        "convert",
        s(&input),
        "--to",
        "mcap",
        "-o",
        s(&mcap),
    ]));
    if let Some(python) = python_with(&["pyarrow"]) {
        let script = "import json, sys, pyarrow.parquet as pq, pyarrow.feather as feather\n\
            for t in [pq.read_table(sys.argv[1]), feather.read_table(sys.argv[2])]:\n\
            \x20   assert t.column_names == ['t', 'S.a', 't_2', 'stream'], t.column_names\n\
            \x20   assert t.column('t').to_pylist() == [0.0, 0.5, 1.0]\n\
            \x20   assert t.column('t_2').to_pylist() == [0.1, 1.1, 2.1]\n\
            \x20   meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}\n\
            \x20   assert json.loads(meta['recfmt.renamed_columns']) == {'t_2': 't'}, meta\n\
            \x20   assert meta['recfmt.time_column'] == 't'\n\
            print('ok')\n";
        let out = Command::new(python)
            .args([
                "-c",
                script,
                s(&parquet.join("dynamic.parquet")),
                s(&arrow.join("dynamic.arrow")),
            ])
            .output()
            .unwrap();
        assert_eq!(text(&out.stdout).trim(), "ok", "{}", text(&out.stderr));
    }

    // MCAP read back by the mcap package: messages without a key twice, the JSON Schema
    // describing `t` as the time and `t_2` as the signal `t`.
    if let Some(python) = python_with(&["mcap"]) {
        let script = "import json, sys\n\
            from mcap.reader import make_reader\n\
            def unique(pairs):\n\
            \x20   keys = [k for k, _ in pairs]\n\
            \x20   assert len(keys) == len(set(keys)), keys\n\
            \x20   return dict(pairs)\n\
            rows = []\n\
            for schema, channel, message in make_reader(open(sys.argv[1], 'rb')).iter_messages():\n\
            \x20   if channel.topic != '/dynamic':\n\
            \x20       continue\n\
            \x20   rows.append(json.loads(message.data, object_pairs_hook=unique))\n\
            \x20   props = json.loads(schema.data)['properties']\n\
            \x20   meta = channel.metadata\n\
            assert [list(r) for r in rows] == [['t', 'S.a', 't_2', 'stream_2']] * 3, rows\n\
            assert [r['t'] for r in rows] == [0.0, 0.5, 1.0], rows\n\
            assert sorted(props) == ['S.a', 'stream_2', 't', 't_2'], props\n\
            assert 'recfmt.signal' not in props['t'] and props['t_2']['recfmt.signal'] == 't', props\n\
            assert json.loads(meta['recfmt.renamed_columns']) == {'t_2': 't', 'stream_2': 'stream'}, meta\n\
            print('ok')\n";
        let out = Command::new(python)
            .args(["-c", script, s(&mcap)])
            .output()
            .unwrap();
        assert_eq!(text(&out.stdout).trim(), "ok", "{}", text(&out.stderr));
    }
}

#[test]
fn a_partitioned_dataset_renames_a_signal_named_source() {
    let work = tempfile::tempdir().unwrap();
    let input = icarec(
        work.path(),
        "named_source.icarec",
        &["source", "x"],
        &[0.0, 1.0],
        "2024-12-22T00:00:00Z",
    );
    let dataset = work.path().join("ds");
    let out = recfmt(&[
        "convert",
        s(&input),
        "--to",
        "parquet",
        "--partition",
        "-o",
        s(&dataset),
    ]);
    ok(&out);
    assert!(
        text(&out.stderr).contains("signal \"source\" is written as column \"source_2\""),
        "{}",
        text(&out.stderr)
    );
    let part = dataset.join("dynamic/source=named_source/part-0.parquet");
    assert!(part.is_file());
    let Some(python) = python_with(&["pyarrow"]) else {
        return;
    };
    let script = "import sys, pyarrow.parquet as pq\n\
        t = pq.read_table(sys.argv[1])\n\
        assert t.column_names == ['t', 'source_2', 'x', 'source'], t.column_names\n\
        assert t.column('source').to_pylist() == ['named_source'] * 2\n\
        print('ok')\n";
    let out = Command::new(python)
        .args(["-c", script, s(&part)])
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout).trim(), "ok", "{}", text(&out.stderr));
}

// ---------------------------------------------------------------------------------------------
// Item 10: NaN, infinite or overflowing CARLA trajectories.

#[test]
fn carla_trajectories_with_non_finite_or_overflowing_poses_are_refused_by_line() {
    let work = tempfile::tempdir().unwrap();
    let header = "time,id,blueprint,x,y,z,roll,pitch,yaw\n";
    for (row, expected) in [
        (
            "0,1,vehicle.tesla.model3,NaN,0,0,0,0,0",
            "tracks input, line 3: x NaN is not a finite number",
        ),
        (
            "0,1,vehicle.tesla.model3,1,2,0,0,0,-inf",
            "tracks input, line 3: yaw -inf is not a finite number",
        ),
        // 3e38 m is 3e40 cm: beyond f32, which 0.9.x logs store positions in.
        (
            "0,1,vehicle.tesla.model3,3e38,0,0,0,0,0",
            "tracks input, line 3: x 3e38 m is 3e40 cm, beyond the largest f32 this log stores it in",
        ),
    ] {
        let csv = work.path().join("tracks.csv");
        std::fs::write(
            &csv,
            format!("{header}0,2,vehicle.audi.tt,0,0,0,0,0,0\n{row}\n"),
        )
        .unwrap();
        let log = work.path().join("out.log");
        let out = recfmt(&["convert", s(&csv), "--to", "carla", "-o", s(&log)]);
        assert_eq!(out.status.code(), Some(1), "{row}");
        assert!(
            text(&out.stderr).contains(expected),
            "{}",
            text(&out.stderr)
        );
        assert!(!log.exists(), "{row}: a log was left");
    }
}

/// A CARLA log whose second actor has a NaN position and the third one an infinite yaw.
fn carla_log_with_bad_poses(dir: &Path) -> PathBuf {
    use recfmt::carla::{Flavour, FrameStart, Header, Packet, Position, Vector3, Writer};
    let mut writer = Writer::new(Vec::new(), Flavour::Carla0912);
    writer
        .write_header(&Header::new("Town01", 1_637_676_528))
        .unwrap();
    for id in 1..=2u64 {
        writer
            .write_packet(&Packet::FrameStart(FrameStart {
                id,
                duration_this: 0.05,
                elapsed: 0.05 * id as f64,
            }))
            .unwrap();
        let position = |database_id, x: f32, yaw: f32| Position {
            database_id,
            location: Vector3::F32([x, 200.0, 50.0]),
            rotation: Vector3::F32([0.0, 0.0, yaw]),
        };
        writer
            .write_packet(&Packet::Position(vec![
                position(1, 100.0, 90.0),
                position(2, f32::NAN, 0.0),
                position(3, 300.0, f32::INFINITY),
            ]))
            .unwrap();
        writer.write_packet(&Packet::FrameEnd).unwrap();
    }
    let path = dir.join("bad_poses.log");
    std::fs::write(&path, writer.into_inner().unwrap()).unwrap();
    path
}

#[test]
fn mcap_scene_updates_leave_out_entities_that_cannot_be_placed_and_say_so() {
    let work = tempfile::tempdir().unwrap();
    let log = carla_log_with_bad_poses(work.path());
    let mcap = work.path().join("out.mcap");
    let out = recfmt(&["convert", s(&log), "--to", "mcap", "-o", s(&mcap)]);
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "note: 4 scene entities had a position or rotation that is not a finite number"
        ) && stderr.contains("(first: entity 2 logged at"),
        "{stderr}"
    );
    // Every message is JSON Python reads (it refuses bare NaN only with a strict parser, so
    // the check is that no bare NaN or Infinity token is there at all).
    let Some(python) = python_with(&["mcap"]) else {
        return;
    };
    let script = "import json, sys\n\
        from mcap.reader import make_reader\n\
        def strict(x): raise ValueError(x)\n\
        n = 0\n\
        for schema, channel, message in make_reader(open(sys.argv[1], 'rb')).iter_messages():\n\
        \x20   json.loads(message.data, parse_constant=strict)\n\
        \x20   n += channel.topic == '/scene'\n\
        assert n == 2, n\n\
        print('ok')\n";
    let out = Command::new(python)
        .args(["-c", script, s(&mcap)])
        .output()
        .unwrap();
    assert_eq!(text(&out.stdout).trim(), "ok", "{}", text(&out.stderr));
}

// ---------------------------------------------------------------------------------------------
// Item 11: `cat --at` on frame times out of order, and the time forms of `--at`.

const UNSORTED: [f64; 9] = [0.0, 1.0, 2.0, 3.0, 1.5, 0.5, 4.0, f64::NAN, 5.0];

#[test]
fn cat_at_finds_the_latest_frame_at_or_before_t_when_times_are_out_of_order() {
    let work = tempfile::tempdir().unwrap();
    let input = icarec(
        work.path(),
        "unsorted.icarec",
        &["S.a"],
        &UNSORTED,
        "2024-12-22T00:00:00Z",
    );
    for (at, expected) in [
        ("6", "t = 5 (frame 8)"),
        ("2.5", "t = 2 (frame 2)"),
        ("1.2s", "t = 1 (frame 1)"),
    ] {
        let out = recfmt(&["cat", s(&input), "--at", at]);
        ok(&out);
        assert_eq!(
            text(&out.stdout).lines().next(),
            Some(expected),
            "--at {at}"
        );
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(
                "frame times are not in order (frame 4 has time 1.5 s, before the 3 s of an earlier frame): every frame time was read"
            ),
            "--at {at}: {stderr}"
        );
    }
    // Strict: refused.
    let out = recfmt(&["--strict", "cat", s(&input), "--at", "6"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("frame times are not in order"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn cat_at_takes_the_time_forms_of_start() {
    let work = tempfile::tempdir().unwrap();
    let input = icarec(
        work.path(),
        "sorted.icarec",
        &["S.a"],
        &[10.0, 11.0, 12.0, 13.0],
        "2024-12-22T00:00:00Z",
    );
    for (at, expected) in [
        ("12", "t = 12 (frame 2)"),
        ("12500ms", "t = 12 (frame 2)"),
        ("+1.5s", "t = 11 (frame 1)"),
        ("2024-12-22T00:00:13Z", "t = 13 (frame 3)"),
    ] {
        let out = recfmt(&["cat", s(&input), "--at", at]);
        ok(&out);
        assert_eq!(
            text(&out.stdout).lines().next(),
            Some(expected),
            "--at {at}"
        );
        assert_eq!(text(&out.stderr), "", "--at {at}");
    }
    let out = recfmt(&["cat", s(&input), "--at", "NaNs"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

// ---------------------------------------------------------------------------------------------
// Item 12: an absolute time column outside 1677-2262.

#[test]
fn an_absolute_time_past_2262_is_an_error_not_a_saturated_value() {
    let work = tempfile::tempdir().unwrap();
    let input = icarec(
        work.path(),
        "epoch_2262.icarec",
        &["S.a"],
        &[0.0, 1.0],
        "2262-06-01T00:00:00Z",
    );
    let out_dir = work.path().join("out");
    let out = recfmt(&[
        "convert",
        s(&input),
        "--time-column",
        "utc",
        "--to",
        "csv",
        "-o",
        s(&out_dir),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("time 0 s (2262-06-01T00:00:00.000000Z) has no value in the absolute UTC time column, which holds i64 nanoseconds since 1970-01-01, from 1677-09-21 to 2262-04-11"),
        "{stderr}"
    );
    assert!(!out_dir.join("dynamic.csv").exists());

    // Inside the span, the column holds the instant.
    let input = icarec(
        work.path(),
        "epoch_2262_early.icarec",
        &["S.a"],
        &[0.0],
        "2262-04-11T00:00:00Z",
    );
    let out_dir = work.path().join("early");
    ok(&recfmt(&[
        "convert",
        s(&input),
        "--time-column",
        "utc",
        "--to",
        "csv",
        "-o",
        s(&out_dir),
    ]));
    let table = std::fs::read_to_string(out_dir.join("dynamic.csv")).unwrap();
    assert_eq!(table.lines().nth(1), Some("0.0,0.0,9223286400000000000"));
}

// ---------------------------------------------------------------------------------------------
// Item 13: MCAP log times that overflow.

#[test]
fn mcap_log_times_past_u64_are_named_as_such() {
    let work = tempfile::tempdir().unwrap();
    let input = icarec(
        work.path(),
        "overflow.icarec",
        &["S.a"],
        &[0.0, 1e10, 1e300],
        "2024-12-22T00:00:00Z",
    );
    let mcap = work.path().join("x.mcap");
    let out = recfmt(&["convert", s(&input), "--to", "mcap", "-o", s(&mcap)]);
    ok(&out);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("note: 1 rows had times past the last MCAP log time")
            && stderr.contains("(first: stream \"dynamic\", t = 1e300 s)"),
        "{stderr}"
    );
    assert!(!stderr.contains("before zero"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// Item 14: bad and inverted time ranges are usage errors.

#[test]
fn bad_or_inverted_time_ranges_are_usage_errors() {
    let work = tempfile::tempdir().unwrap();
    let input = icarec(
        work.path(),
        "range.icarec",
        &["S.a"],
        &[0.0, 1.0, 2.0],
        "2024-12-22T00:00:00Z",
    );
    let out_dir = work.path().join("out");
    let svg = work.path().join("x.svg");
    for args in [
        vec![
            "convert",
            s(&input),
            "--to",
            "csv",
            "-o",
            s(&out_dir),
            "--start",
            "NaNs",
        ],
        vec![
            "convert",
            s(&input),
            "--to",
            "csv",
            "-o",
            s(&out_dir),
            "--end",
            "infs",
        ],
        vec![
            "plot",
            s(&input),
            "--signal",
            "S.*",
            "-o",
            s(&svg),
            "--start",
            "NaNs",
        ],
    ] {
        let out = recfmt(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("bad time"),
            "{}",
            text(&out.stderr)
        );
    }
    for args in [
        vec![
            "convert",
            s(&input),
            "--to",
            "csv",
            "-o",
            s(&out_dir),
            "--start",
            "5s",
            "--end",
            "1s",
        ],
        vec![
            "plot",
            s(&input),
            "--signal",
            "S.*",
            "-o",
            s(&svg),
            "--start",
            "5s",
            "--end",
            "1s",
        ],
    ] {
        let out = recfmt(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(
                "--start 5s is after --end 1s: the time range is inverted: it starts at 5 s, after its end at 1 s"
            ),
            "{}",
            text(&out.stderr)
        );
    }
    assert!(!out_dir.exists() && !svg.exists());

    // Bounds of different kinds are compared once resolved: exit 1, naming the range.
    let out = recfmt(&[
        "convert",
        s(&input),
        "--to",
        "csv",
        "-o",
        s(&out_dir),
        "--start",
        "+1.5s",
        "--end",
        "1s",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(
            "the time range is inverted: it starts at 1.5 s on the recording's axis, after its end at 1 s"
        ),
        "{}",
        text(&out.stderr)
    );
}
