//! Merged tables (each alignment rule, on streams with different rates), selection, time
//! ranges, `--carry-last`, upcasting and the absolute time column, on an in-memory recording
//! whose expected values are worked out by hand.

#![allow(clippy::unwrap_used)] // helpers in a test file fail by panicking

use recfmt_core::{
    DType, FrameBuf, Header, MemoryRecording, RecordingReader, Result, Schema, SignalDesc,
    StreamDesc, TimeBase, TimeReference, TimeSystem, Value,
};
use recfmt_export::{
    Alignment, MergedReader, Pattern, Pipeline, SelectedReader, Selection, TimeBound, TimeRange,
};

/// `fast`: 10 Hz from 0.0 s to 0.9 s, `x` (f32) = 10 t, `n` (i32) = row index.
/// `slow`: 4 Hz from 0.0 s to 0.75 s, `y` (f64) = 100 + t, `label` (str).
/// Rows are interleaved by time, with `slow` after `fast` at equal times.
fn recording() -> MemoryRecording {
    let mut fast = StreamDesc::new(
        "fast",
        SignalDesc::scalar("t_ms", DType::I64).with_unit("ms"),
        TimeBase::MILLISECONDS,
    );
    fast.signals
        .push(SignalDesc::scalar("x", DType::F32).with_unit("m"));
    fast.signals.push(SignalDesc::scalar("n", DType::I32));
    let mut slow = StreamDesc::new(
        "slow",
        SignalDesc::scalar("t_ms", DType::I64).with_unit("ms"),
        TimeBase::MILLISECONDS,
    );
    slow.signals
        .push(SignalDesc::scalar("y", DType::F64).with_unit("s"));
    slow.signals.push(SignalDesc::scalar("label", DType::Str));
    let mut rows = Vec::new();
    for ms in (0..1000).step_by(50) {
        if ms % 100 == 0 {
            let n = ms / 100;
            rows.push((
                0,
                vec![
                    Value::Int(ms),
                    Value::Float(f64::from(ms as f32 / 100.0)),
                    Value::Int(n),
                ],
            ));
        }
        if ms % 250 == 0 && ms < 1000 {
            rows.push((
                1,
                vec![
                    Value::Int(ms),
                    Value::Float(100.0 + ms as f64 / 1000.0),
                    Value::Str(format!("s{ms}")),
                ],
            ));
        }
    }
    let header = Header {
        format: "mem",
        version: "1".into(),
        time: Some(TimeReference::parse(TimeSystem::Utc, Some("2017-01-01T00:00:00Z")).unwrap()),
        metadata: Default::default(),
    };
    let schema = Schema {
        streams: vec![fast, slow],
    };
    MemoryRecording::new(header, schema).with_rows(rows)
}

fn collect(reader: &mut dyn RecordingReader) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    let mut frame = FrameBuf::default();
    while reader.read_frame(&mut frame).unwrap() {
        out.push((
            reader.schema().streams[frame.stream].name.clone(),
            frame.values.clone(),
        ));
    }
    out
}

fn merged(alignment: Alignment) -> (Vec<String>, Vec<Vec<Value>>) {
    let open = || -> Result<Box<dyn RecordingReader>> { Ok(Box::new(recording())) };
    let mut reader = MergedReader::new(open, alignment).unwrap();
    let names = reader.schema().streams[0]
        .signals
        .iter()
        .map(|s| s.name.clone())
        .collect();
    let rows = collect(&mut reader).into_iter().map(|(_, v)| v).collect();
    (names, rows)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn merged_columns_are_time_then_stream_dot_signal_in_native_types() {
    let open = || -> Result<Box<dyn RecordingReader>> { Ok(Box::new(recording())) };
    let reader = MergedReader::new(open, Alignment::Union).unwrap();
    let s = &reader.schema().streams[0];
    let cols: Vec<(&str, DType)> = s
        .signals
        .iter()
        .map(|x| (x.name.as_str(), x.dtype))
        .collect();
    assert_eq!(
        cols,
        [
            ("t", DType::F64),
            ("fast.x", DType::F32),
            ("fast.n", DType::I32),
            ("slow.y", DType::F64),
            ("slow.label", DType::Str)
        ]
    );
    assert_eq!(s.signals[1].unit.as_deref(), Some("m"));
}

#[test]
fn union_has_one_row_per_distinct_timestamp_and_nulls_elsewhere() {
    let (_, rows) = merged(Alignment::Union);
    // fast: 0.0..0.9 (10 times); slow: 0.0, 0.25, 0.5, 0.75; shared: 0.0, 0.5.
    assert_eq!(rows.len(), 10 + 4 - 2);
    let times: Vec<f64> = rows.iter().map(|r| f(&r[0])).collect();
    assert_eq!(times[..4], [0.0, 0.1, 0.2, 0.25]);
    let at_025 = &rows[3];
    assert_eq!(at_025[1], Value::Null);
    assert_eq!(at_025[3], Value::Float(100.25));
    let at_05 = rows.iter().find(|r| f(&r[0]) == 0.5).unwrap();
    assert_eq!(at_05[2], Value::Int(5));
    assert_eq!(at_05[4], Value::Str("s500".into()));
}

#[test]
fn asof_takes_the_latest_row_at_or_before_each_base_time() {
    let (_, rows) = merged(Alignment::AsOf("fast".into()));
    assert_eq!(rows.len(), 10);
    // At 0.3 s the latest slow row is the one at 0.25 s; at 0.9 s the one at 0.75 s.
    assert_eq!(rows[3][3], Value::Float(100.25));
    assert_eq!(rows[3][4], Value::Str("s250".into()));
    assert_eq!(rows[9][3], Value::Float(100.75));
    let (_, onto_slow) = merged(Alignment::AsOf("slow".into()));
    assert_eq!(onto_slow.len(), 4);
    // At 0.75 s the latest fast row is the one at 0.7 s: n = 7.
    assert_eq!(onto_slow[3][2], Value::Int(7));
}

#[test]
fn raster_interpolates_floats_and_holds_other_types() {
    let (_, rows) = merged(Alignment::Raster(0.05));
    // From 0.0 to the last sample of any stream (0.9 s): 19 rows.
    assert_eq!(rows.len(), 19);
    let at = |t: f64| rows.iter().find(|r| (f(&r[0]) - t).abs() < 1e-9).unwrap();
    // fast.x = 10 t, linear between 0.1 and 0.2 at 0.15; stays f32.
    assert_eq!(at(0.15)[1], Value::Float(f64::from(1.5f32)));
    // fast.n holds the previous sample.
    assert_eq!(at(0.15)[2], Value::Int(1));
    // slow.y between 0.0 (100.0) and 0.25 (100.25) at 0.1: 100.1.
    assert!((f(&at(0.1)[3]) - 100.1).abs() < 1e-12);
    assert_eq!(at(0.1)[4], Value::Str("s0".into()));
    // After slow's last sample (0.75 s) its columns are null.
    assert_eq!(at(0.8)[3], Value::Null);
    assert_eq!(at(0.8)[1], Value::Float(8.0));
}

#[test]
fn alignment_rules_parse() {
    assert_eq!(
        Alignment::parse("raster:10ms").unwrap(),
        Alignment::Raster(0.01)
    );
    assert_eq!(
        Alignment::parse("asof:nav").unwrap(),
        Alignment::AsOf("nav".into())
    );
    assert!(Alignment::parse("raster:-1s").is_err());
    assert!(Alignment::parse("nearest").is_err());
    let open = || -> Result<Box<dyn RecordingReader>> { Ok(Box::new(recording())) };
    let err = MergedReader::new(open, Alignment::AsOf("nope".into())).unwrap_err();
    assert!(err.to_string().contains("fast, slow"), "{err}");
}

fn selected(pipeline: Pipeline) -> (Schema, Vec<(String, Vec<Value>)>) {
    let mut reader = SelectedReader::new(recording(), &pipeline).unwrap();
    let schema = reader.schema().clone();
    (schema, collect(&mut reader))
}

#[test]
fn selection_by_exact_glob_and_regex_keeps_the_time_column() {
    let (schema, rows) = selected(Pipeline {
        selection: Selection {
            streams: vec![Pattern::parse("f*").unwrap()],
            signals: vec![Pattern::parse("re:x|nothing").unwrap()],
            ..Selection::default()
        },
        ..Pipeline::default()
    });
    assert_eq!(schema.streams.len(), 1);
    let names: Vec<_> = schema.streams[0]
        .signals
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["t_ms", "x"]);
    assert_eq!(rows.len(), 10);
    assert_eq!(rows[2].1, [Value::Int(200), Value::Float(2.0)]);

    let (schema, _) = selected(Pipeline {
        selection: Selection {
            exclude_streams: vec![Pattern::parse("fast").unwrap()],
            exclude_signals: vec![Pattern::parse("slow.label").unwrap()],
            ..Selection::default()
        },
        ..Pipeline::default()
    });
    let names: Vec<_> = schema.streams[0]
        .signals
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(
        (schema.streams[0].name.as_str(), names),
        ("slow", vec!["t_ms", "y"])
    );

    let none = SelectedReader::new(
        recording(),
        &Pipeline {
            selection: Selection {
                streams: vec![Pattern::parse("zzz").unwrap()],
                ..Selection::default()
            },
            ..Pipeline::default()
        },
    );
    assert!(none.unwrap_err().to_string().contains("keeps no stream"));
}

#[test]
fn time_range_start_inclusive_end_exclusive_absolute_and_relative() {
    let range = |start: &str, end: &str, carry_last: bool| Pipeline {
        range: TimeRange {
            start: Some(TimeBound::parse(start).unwrap()),
            end: Some(TimeBound::parse(end).unwrap()),
            carry_last,
        },
        ..Pipeline::default()
    };
    let (_, rows) = selected(range("0.25s", "500ms", false));
    let times: Vec<(String, Value)> = rows
        .iter()
        .map(|(s, v)| (s.clone(), v[0].clone()))
        .collect();
    assert_eq!(
        times,
        [
            ("slow".into(), Value::Int(250)),
            ("fast".into(), Value::Int(300)),
            ("fast".into(), Value::Int(400))
        ]
    );
    let (_, relative) = selected(range("+0.25s", "+0.5s", false));
    assert_eq!(relative, rows);

    // carry-last: the last row of each stream before 0.25 s comes first.
    let (_, carried) = selected(range("0.26s", "0.35s", true));
    let got: Vec<(String, Value)> = carried
        .iter()
        .map(|(s, v)| (s.clone(), v[0].clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("fast".into(), Value::Int(200)),
            ("slow".into(), Value::Int(250)),
            ("fast".into(), Value::Int(300))
        ]
    );

    // RFC 3339 bounds need the epoch (2017-01-01T00:00:00Z).
    let (_, by_instant) = selected(range(
        "2017-01-01T00:00:00.25Z",
        "2017-01-01T00:00:00.5Z",
        false,
    ));
    assert_eq!(by_instant, rows);
}

#[test]
fn upcast_and_absolute_time_columns() {
    let (schema, rows) = selected(Pipeline {
        upcast_f64: true,
        absolute_time: Some(TimeSystem::Tai),
        ..Pipeline::default()
    });
    let fast = &schema.streams[0];
    assert_eq!(fast.signals[1].dtype, DType::F64);
    assert_eq!(fast.signals.last().unwrap().name, "t_tai");
    // 2017-01-01T00:00:00 UTC is 1483228800 s after the Unix epoch; TAI is 37 s ahead.
    let first = &rows[0].1;
    assert_eq!(
        first.last().unwrap(),
        &Value::Int((1_483_228_800 + 37) * 1_000_000_000)
    );
    let row_at_100ms = &rows
        .iter()
        .find(|(s, v)| s == "fast" && v[0] == Value::Int(100))
        .unwrap()
        .1;
    assert_eq!(
        row_at_100ms.last().unwrap(),
        &Value::Int((1_483_228_800 + 37) * 1_000_000_000 + 100_000_000)
    );
}
