//! The generic model written as Continuous tapes and read back.

#![allow(clippy::unwrap_used)] // tests may unwrap

mod common;

use recfmt_core::{
    DType, ErrorKind, FrameBuf, Header, ReadOptions, RecordingReader, RecordingWriter, Schema,
    Shape, SignalDesc, StreamDesc, TimeBase, Value,
};
use recfmt_fgtape::continuous::Reader;
use recfmt_fgtape::{FORMAT, FgTape, FgTapeWriter};

use common::{SAMPLES, sample};

fn rows(tape: &mut dyn RecordingReader) -> Vec<(usize, Vec<Value>)> {
    let mut buf = FrameBuf::default();
    let mut out = Vec::new();
    while tape.read_frame(&mut buf).unwrap() {
        out.push((buf.stream, buf.values.clone()));
    }
    out
}

fn copy(from: &mut dyn RecordingReader, mut to: FgTapeWriter) {
    to.write_header(&from.header().clone(), &from.schema().clone())
        .unwrap();
    let mut buf = FrameBuf::default();
    while from.read_frame(&mut buf).unwrap() {
        to.write_frame(&buf).unwrap();
    }
    to.finish().unwrap();
    to.finish().unwrap(); // harmless
}

#[test]
fn samples_convert_to_continuous_tapes_row_for_row() {
    let dir = tempfile::tempdir().unwrap();
    for name in SAMPLES {
        let Some(path) = sample(name) else { return };
        for compression in [false, true] {
            let out = dir.path().join(format!("{compression}-{name}"));
            let mut normal = FgTape::open(&path, &ReadOptions::default()).unwrap();
            copy(
                &mut normal,
                FgTapeWriter::create(&out).compressed(compression),
            );
            let mut normal = FgTape::open(&path, &ReadOptions::default()).unwrap();
            let expected = rows(&mut normal);
            let mut back = FgTape::open(&out, &ReadOptions::default()).unwrap();
            let h = back.header();
            assert_eq!(h.metadata["fgtape.kind"], "continuous");
            assert_eq!(
                h.metadata["meta/aircraft-type"],
                normal.header().metadata["meta/aircraft-type"]
            );
            assert_eq!(
                h.metadata["meta/continuous-compression"],
                if compression { "1" } else { "0" }
            );
            assert_eq!(
                h.metadata["fgtape.record_size"],
                normal.header().metadata["fgtape.record_size"]
            );
            // Same streams, signals, types and property paths.
            let (a, b) = (normal.schema(), back.schema());
            assert_eq!(a.streams.len(), b.streams.len(), "{name}");
            for (sa, sb) in a.streams.iter().zip(&b.streams) {
                assert_eq!(sa.name, sb.name);
                assert_eq!(sa.signals.len(), sb.signals.len());
                for (x, y) in sa.signals.iter().zip(&sb.signals) {
                    assert_eq!(
                        (&x.name, x.dtype, &x.metadata),
                        (&y.name, y.dtype, &y.metadata)
                    );
                }
            }
            let got = rows(&mut back);
            assert_eq!(got.len(), expected.len(), "{name}");
            assert!(got == expected, "{name}: rows differ");
            assert!(!back.integrity().lost_data());
            // The stored frames carry the 8 unused bytes and, compressed, correct flags.
            let mut r =
                Reader::new(std::io::BufReader::new(std::fs::File::open(&out).unwrap())).unwrap();
            assert!(r.warnings().is_empty(), "{:?}", r.warnings());
            let mut f = Default::default();
            assert!(r.read_frame(&mut f).unwrap());
            let rs = r.header().signals.as_ref().unwrap().record_size();
            assert_eq!(f.items[0].len(), rs);
            assert_eq!(f.items[0][rs - 8..], [0; 8]);
        }
    }
}

fn stream(name: &str, time: SignalDesc, base: TimeBase) -> StreamDesc {
    StreamDesc::new(name, time, base)
}

#[test]
fn other_recordings_fit_when_their_signals_do() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = stream(
        "data",
        SignalDesc::scalar("time_ms", DType::I64),
        TimeBase::MILLISECONDS,
    );
    s.signals
        .push(SignalDesc::scalar("speed (m/s)", DType::F32));
    s.signals.push(SignalDesc::scalar("gear", DType::U8));
    s.signals.push(SignalDesc::scalar("mode", DType::U16));
    s.signals.push(SignalDesc::scalar("on", DType::Bool));
    let schema = Schema { streams: vec![s] };
    let mut header = Header::default();
    header
        .metadata
        .insert("meta/aircraft-type".into(), "ufo".into());
    header
        .metadata
        .insert("meta/bad key".into(), "ignored".into());
    header.metadata.insert("other".into(), "ignored".into());
    let path = dir.path().join("generic.fgtape");
    let mut w = FgTapeWriter::create(&path);
    w.write_header(&header, &schema).unwrap();
    let row = |t: i64, v: Vec<Value>| {
        let mut values = vec![Value::Int(t)];
        values.extend(v);
        FrameBuf { stream: 0, values }
    };
    w.write_frame(&row(
        0,
        vec![
            Value::Float(1.5),
            Value::UInt(200),
            Value::UInt(65535),
            Value::Bool(true),
        ],
    ))
    .unwrap();
    // Nulls repeat the last value; an integral float fits an integer signal.
    w.write_frame(&row(
        250,
        vec![Value::Null, Value::Float(3.0), Value::Null, Value::Int(0)],
    ))
    .unwrap();
    // Out of range for the signal: an error naming the row and the column.
    let e = w
        .write_frame(&row(
            500,
            vec![Value::Null, Value::UInt(70_000), Value::Null, Value::Null],
        ))
        .unwrap_err();
    assert!(e.to_string().contains("row 3: gear"), "{e}");
    w.finish().unwrap();

    let mut back = FgTape::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(back.header().metadata["meta/aircraft-type"], "ufo");
    assert!(!back.header().metadata.contains_key("meta/bad key"));
    let names: Vec<(String, DType)> = back.schema().streams[0]
        .signals
        .iter()
        .map(|s| (s.name.clone(), s.dtype))
        .collect();
    assert_eq!(
        names,
        [
            ("t".into(), DType::F64),
            ("/speed__m/s_".into(), DType::F32),
            ("/mode".into(), DType::I32),
            ("/gear".into(), DType::I16),
            ("/on".into(), DType::Bool),
        ]
    );
    let got = rows(&mut back);
    assert_eq!(
        got,
        [
            (
                0,
                vec![
                    Value::Float(0.0),
                    Value::Float(1.5),
                    Value::Int(65535),
                    Value::Int(200),
                    Value::Bool(true)
                ]
            ),
            (
                0,
                vec![
                    Value::Float(0.25),
                    Value::Float(1.5),
                    Value::Int(65535),
                    Value::Int(3),
                    Value::Bool(false)
                ]
            ),
        ]
    );
}

#[test]
fn what_does_not_fit_is_listed_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = stream(
        "signals",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    s.signals.push(SignalDesc::scalar("/ok", DType::F64));
    s.signals.push(SignalDesc::scalar("label", DType::Str));
    s.signals.push(SignalDesc::scalar("big", DType::U64));
    s.signals
        .push(SignalDesc::scalar("/v", DType::F32).with_shape(Shape::Fixed(vec![3])));
    s.signals.push(SignalDesc::scalar("/ok[0]", DType::F32));
    let other = stream(
        "poses",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    let mut mp = stream(
        "multiplayer",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    mp.signals.push(SignalDesc::scalar("packet", DType::Str));
    let schema = Schema {
        streams: vec![s, other, mp],
    };
    let path = dir.path().join("misfit.fgtape");
    let mut w = FgTapeWriter::create(&path);
    let e = w.write_header(&Header::default(), &schema).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    let text = e.to_string();
    for part in [
        "signals/label: scalar str",
        "signals/big: scalar u64",
        "signals//v: array of f32",
        "signals//ok[0]: property",
        "stream \"poses\"",
        "multiplayer: needs a packet column of type bytes",
    ] {
        assert!(text.contains(part), "{part:?} missing from: {text}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Rows before the header, and an empty schema.
    assert!(w.write_frame(&FrameBuf::default()).is_err());
    assert!(
        w.write_header(&Header::default(), &Schema::default())
            .is_err()
    );
    w.finish().unwrap();
}

#[test]
fn the_registry_can_create_tapes() {
    let create = FORMAT.create.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.fgtape");
    let mut w = create(&path, &Default::default()).unwrap();
    let mut s = stream(
        "signals",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    s.signals.push(SignalDesc::scalar("/x", DType::I8));
    w.write_header(&Header::default(), &Schema { streams: vec![s] })
        .unwrap();
    for i in 0..3i64 {
        w.write_frame(&FrameBuf {
            stream: 0,
            values: vec![Value::Float(i as f64), Value::Int(-i)],
        })
        .unwrap();
    }
    // Not finished: dropping the writer leaves no file.
    drop(w);
    assert!(!path.exists());
    let mut w = create(&path, &Default::default()).unwrap();
    let mut s = stream(
        "signals",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    s.signals.push(SignalDesc::scalar("/x", DType::I8));
    w.write_header(&Header::default(), &Schema { streams: vec![s] })
        .unwrap();
    w.write_frame(&FrameBuf {
        stream: 0,
        values: vec![Value::Float(0.5), Value::Int(-7)],
    })
    .unwrap();
    w.finish().unwrap();
    let mut back = FgTape::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(
        rows(&mut back),
        [(0, vec![Value::Float(0.5), Value::Int(-7)])]
    );
}
