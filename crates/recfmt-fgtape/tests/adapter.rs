//! The recfmt adapter over real and synthetic tapes.

#![allow(clippy::unwrap_used)] // tests may unwrap

mod common;

use std::io::Read;

use recfmt_core::{
    DType, FrameBuf, IntegrityStatus, PROBE_LEN, ReadOptions, RecordingReader, Registry, Score,
    Value,
};
use recfmt_fgtape::continuous::{ContinuousFrame, ContinuousHeader, ExtraProperty, Writer};
use recfmt_fgtape::props::{PropValue, PropertyList};
use recfmt_fgtape::{FORMAT, FgTape};

use common::{SAMPLES, sample};

struct Counts {
    signals: usize,
    mp: usize,
    columns: usize,
}

fn read_all(tape: &mut FgTape) -> (Counts, Vec<f64>) {
    let mut buf = FrameBuf::default();
    let mut counts = Counts {
        signals: 0,
        mp: 0,
        columns: 0,
    };
    let mut times = Vec::new();
    let signals = tape.schema().stream_index("signals");
    let mp = tape.schema().stream_index("multiplayer");
    while tape.read_frame(&mut buf).unwrap() {
        if Some(buf.stream) == signals {
            counts.signals += 1;
            counts.columns = buf.values.len();
            times.push(buf.values[0].as_f64().unwrap());
        } else if Some(buf.stream) == mp {
            counts.mp += 1;
            assert_eq!(buf.values[1], Value::Str("MPTEST".into()));
            assert_eq!(buf.values[2], Value::UInt(7));
        }
    }
    (counts, times)
}

#[test]
fn samples_through_the_adapter() {
    let expected = [
        (2282, 0, 188, "2.11.0"),
        (406, 398, 236, "2020.3.16"),
        (499, 0, 236, "2020.3.16"),
    ];
    for (name, (frames, mp, signals, version)) in SAMPLES.iter().zip(expected) {
        let Some(path) = sample(name) else { return };
        // Detection from the first bytes.
        let mut head = Vec::new();
        std::fs::File::open(&path)
            .unwrap()
            .take(PROBE_LEN as u64)
            .read_to_end(&mut head)
            .unwrap();
        assert_eq!((FORMAT.score)(&head), Score::Yes(255), "{name}");
        let mut registry = Registry::default();
        registry.register(&FORMAT);
        assert_eq!(registry.detect_path(&path).unwrap().info.id, "fgtape");

        let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
        assert_eq!(tape.header().version, version);
        assert_eq!(tape.header().metadata["fgtape.kind"], "normal");
        let schema = tape.schema();
        let s = &schema.streams[schema.stream_index("signals").unwrap()];
        assert_eq!(s.signals.len(), signals + 1);
        assert_eq!(s.signals[0].name, "t");
        assert_eq!(s.signals[1].name, "/position/longitude-deg");
        assert_eq!(s.signals[1].dtype, DType::F64);
        assert_eq!(
            s.signals[1].metadata["property"],
            "/position[0]/longitude-deg[0]"
        );
        assert_eq!(s.signals[5].dtype, DType::F32);
        assert_eq!(s.signals.last().unwrap().dtype, DType::Bool);
        assert_eq!(
            schema.stream_index("multiplayer").is_some(),
            mp > 0,
            "{name}"
        );
        let (counts, times) = read_all(&mut tape);
        assert_eq!(
            (counts.signals, counts.mp, counts.columns),
            (frames, mp, signals + 1),
            "{name}"
        );
        assert!(
            times.windows(2).all(|w| w[0] < w[1]),
            "{name}: rows not in time order"
        );
        assert_eq!(tape.integrity().status, IntegrityStatus::Complete, "{name}");
    }
}

#[test]
fn truncated_tapes_keep_what_was_read() {
    let Some(path) = sample(SAMPLES[1]) else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.fgtape");
    std::fs::write(&cut, &bytes[..bytes.len() * 3 / 4]).unwrap();
    let mut tape = FgTape::open(&cut, &ReadOptions::default()).unwrap();
    let (counts, _) = read_all(&mut tape);
    assert!(
        counts.signals > 100 && counts.signals < 406,
        "{}",
        counts.signals
    );
    assert_eq!(tape.integrity().status, IntegrityStatus::Truncated);
    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    let e = FgTape::open(&cut, &strict).unwrap_err();
    let core: recfmt_core::Error = e.into();
    assert_eq!(core.kind(), recfmt_core::ErrorKind::Malformed);
}

#[test]
fn continuous_tape_through_the_adapter() {
    let mut t = PropertyList::new();
    t.root.set("meta/aircraft-type", PropValue::string("ufo"));
    t.root.set("meta/continuous-compression", PropValue::int(1));
    t.root.set("data", PropValue::string("signals"));
    t.root.set("data[1]", PropValue::string("multiplayer"));
    t.root.set("data[2]", PropValue::string("extra-properties"));
    t.root
        .set("signals/signals/signal/type", PropValue::string("int8"));
    t.root.set(
        "signals/signals/signal/property",
        PropValue::string("/x[0]/y[2]"),
    );
    let h = ContinuousHeader::new(t).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ufo-continuous.fgtape");
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), &h).unwrap();
    let mut packet = [0u8; 32];
    packet[24..27].copy_from_slice(b"ABC");
    for i in 0..4u8 {
        let extra = recfmt_fgtape::continuous::encode_extra_properties(&[ExtraProperty::Removal {
            path: "/p".into(),
        }])
        .unwrap();
        let mp = recfmt_fgtape::mp::join_u16_packets([&packet[..]]).unwrap();
        w.write_frame(&ContinuousFrame {
            time: f64::from(i),
            items: vec![vec![i, 0, 0, 0, 0, 0, 0, 0, 0], mp, extra],
            deflate: None,
        })
        .unwrap();
    }
    w.finish().unwrap();
    // Append a torn frame.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[0, 0, 0, 0]);
    std::fs::write(&path, &bytes).unwrap();

    assert_eq!((FORMAT.score)(&bytes), Score::Yes(255));
    let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(tape.header().metadata["fgtape.kind"], "continuous");
    let names: Vec<_> = tape
        .schema()
        .streams
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["signals", "multiplayer", "extra_properties"]);
    assert_eq!(tape.schema().streams[0].signals[1].name, "/x/y[2]");
    let mut buf = FrameBuf::default();
    let mut rows = Vec::new();
    while tape.read_frame(&mut buf).unwrap() {
        rows.push((buf.stream, buf.values.clone()));
    }
    assert_eq!(rows.len(), 12);
    assert_eq!(rows[3].1, vec![Value::Float(1.0), Value::Int(1)]);
    assert_eq!(rows[4].1[1], Value::Str("ABC".into()));
    assert_eq!(
        rows[5].1,
        vec![
            Value::Float(1.0),
            Value::Str("/p".into()),
            Value::Null,
            Value::Bool(true)
        ]
    );
    let integrity = tape.integrity();
    assert_eq!(integrity.status, IntegrityStatus::Truncated);
    assert_eq!(integrity.truncated_at, Some(bytes.len() as u64 - 4));
}
