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
    // A tape cut short is Truncated (it was Malformed before the kind survived into core).
    assert_eq!(core.kind(), recfmt_core::ErrorKind::Truncated);
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

/// Every row of a reader: (stream, values).
fn rows(tape: &mut FgTape) -> Vec<(usize, Vec<Value>)> {
    let mut buf = FrameBuf::default();
    let mut out = Vec::new();
    while tape.read_frame(&mut buf).unwrap() {
        out.push((buf.stream, buf.values.clone()));
    }
    out
}

fn same_number(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// The adapter streams Normal tapes container by container; its rows must be the frames of
/// the whole tape in time order, value for value, with each frame's packets after it.
#[test]
fn normal_rows_equal_the_whole_tape_in_time_order() {
    for name in SAMPLES {
        let Some(path) = sample(name) else { return };
        let whole = recfmt_fgtape::normal::NormalTape::open(&path).unwrap();
        let layout = &whole.header.signals;
        let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
        let signals = tape.schema().stream_index("signals").unwrap();
        let all = rows(&mut tape);
        let mut it = all.iter();
        let mut frames = 0;
        for frame in whole.frames_in_time_order() {
            let (stream, values) = it.next().unwrap();
            assert_eq!(*stream, signals);
            assert_eq!(values[0], Value::Float(frame.time));
            let decoded = layout.decode(&frame.signals).unwrap();
            assert_eq!(values.len(), decoded.len() + 1);
            for (v, d) in values[1..].iter().zip(&decoded) {
                assert!(same_number(v.as_f64().unwrap(), d.as_f64()), "{name}");
            }
            for packet in &frame.multiplayer {
                let (stream, values) = it.next().unwrap();
                assert_ne!(*stream, signals);
                assert_eq!(values[0], Value::Float(frame.time));
                let packet_column = tape.schema().streams[*stream]
                    .signal_index("packet")
                    .unwrap();
                assert_eq!(values[packet_column], Value::Bytes(packet.clone()));
            }
            frames += 1;
        }
        assert!(it.next().is_none(), "{name}: extra rows");
        assert_eq!(frames, whole.frame_counts().iter().sum::<usize>());
        assert_eq!(
            tape.progress(),
            (tape.progress().1.unwrap(), tape.progress().1)
        );
        // Normal tapes are one gzip stream: no seeking.
        let mut again = FgTape::open(&path, &ReadOptions::default()).unwrap();
        assert!(!again.seek_time(100.0).unwrap());
        assert_eq!(rows(&mut again).len(), all.len());
    }
}

/// A tape cut inside its medium-term container: the short-term frames, then the medium-term
/// frames before the cut, in time order, and a truncation report.
#[test]
fn normal_tape_cut_in_the_middle_container() {
    let Some(bytes) = common::decompressed(SAMPLES[0]) else {
        return;
    };
    let whole = recfmt_fgtape::normal::NormalTape::read(&bytes[..]).unwrap();
    let [short, medium, _] = whole.frame_counts();
    assert!(short > 0 && medium > 10);
    // Find the medium container's middle: decompressed stream offsets of its frames.
    let mut reader = recfmt_fgtape::normal::Reader::new(&bytes[..]).unwrap();
    reader.read_header().unwrap();
    reader.next_container().unwrap();
    reader.next_container().unwrap();
    let mut frame = Default::default();
    for _ in 0..medium / 2 {
        assert!(reader.read_frame(&mut frame).unwrap());
    }
    let cut = reader.position() as usize + 100;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.fgtape");
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(
        tape.header().metadata["fgtape.frames"],
        format!("short-term={short} medium-term={} long-term=0", medium / 2)
    );
    let got: Vec<f64> = rows(&mut tape)
        .iter()
        .map(|(_, v)| v[0].as_f64().unwrap())
        .collect();
    let expected: Vec<f64> = whole.raw_data[1].frames[..medium / 2]
        .iter()
        .chain(&whole.raw_data[0].frames)
        .map(|f| f.time)
        .collect();
    assert_eq!(got, expected);
    assert_eq!(tape.integrity().status, IntegrityStatus::Truncated);
}

/// A Continuous tape with every item kind (compressed or not) and a torn last frame.
fn continuous_file(dir: &std::path::Path, compression: i32) -> std::path::PathBuf {
    let mut t = PropertyList::new();
    t.root.set("meta/aircraft-type", PropValue::string("ufo"));
    t.root
        .set("meta/continuous-compression", PropValue::int(compression));
    t.root.set("data", PropValue::string("signals"));
    t.root.set("data[1]", PropValue::string("multiplayer"));
    t.root.set("data[2]", PropValue::string("extra-properties"));
    t.root
        .set("signals/signals/signal/type", PropValue::string("float"));
    t.root.set(
        "signals/signals/signal/property",
        PropValue::string("/v[0]"),
    );
    let h = ContinuousHeader::new(t).unwrap();
    let path = dir.join(format!("seek-{compression}.fgtape"));
    let mut w = Writer::new(std::fs::File::create(&path).unwrap(), &h).unwrap();
    let mut packet = [0u8; 32];
    packet[24..26].copy_from_slice(b"MP");
    for i in 0..50u16 {
        let mut signals = (f32::from(i) * 0.5).to_le_bytes().to_vec();
        signals.extend_from_slice(&[0; 8]);
        let mp = if i % 3 == 0 {
            recfmt_fgtape::mp::join_u16_packets([&packet[..], &packet[..]]).unwrap()
        } else {
            Vec::new()
        };
        let extra = if i % 4 == 1 {
            recfmt_fgtape::continuous::encode_extra_properties(&[ExtraProperty::Change {
                path: "/sim/current-view/x".into(),
                value: i.to_string(),
            }])
            .unwrap()
        } else {
            Vec::new()
        };
        w.write_frame(&ContinuousFrame {
            time: 10.0 + f64::from(i) * 0.25,
            items: vec![signals, mp, extra],
            deflate: None,
        })
        .unwrap();
    }
    w.finish().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[1, 2, 3]);
    std::fs::write(&path, &bytes).unwrap();
    path
}

#[test]
fn seeking_in_continuous_tapes_equals_filtering_the_full_read() {
    let dir = tempfile::tempdir().unwrap();
    for compression in [0, 1] {
        let path = continuous_file(dir.path(), compression);
        let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
        let full = rows(&mut tape);
        assert_eq!(tape.integrity().status, IntegrityStatus::Truncated);
        let truncated_at = tape.integrity().truncated_at;
        assert_eq!(full.iter().filter(|(s, _)| *s == 0).count(), 50);
        for start in [
            f64::NEG_INFINITY,
            0.0,
            10.0,
            10.1,
            12.25,
            17.5,
            22.25,
            22.3,
            1e9,
        ] {
            let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
            assert!(tape.seek_time(start).unwrap());
            let got = rows(&mut tape);
            let expected: Vec<_> = full
                .iter()
                .filter(|(_, v)| v[0].as_f64().unwrap() >= start)
                .cloned()
                .collect();
            assert_eq!(got, expected, "compression {compression}, start {start}");
            // The torn tail is still reported.
            assert_eq!(tape.integrity().status, IntegrityStatus::Truncated);
            assert_eq!(tape.integrity().truncated_at, truncated_at);
        }
        // Seeking again (the index is kept) and NaN.
        let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
        assert!(tape.seek_time(20.0).unwrap());
        assert!(tape.seek_time(11.0).unwrap());
        assert!(!tape.seek_time(f64::NAN).unwrap());
        let got = rows(&mut tape);
        assert_eq!(got[0].1[0], Value::Float(11.0));
        assert_eq!(
            got.len(),
            full.iter()
                .filter(|(_, v)| v[0].as_f64().unwrap() >= 11.0)
                .count()
        );
    }
}

/// Damaged Normal tapes through the two-pass adapter: no panic, and the rows read are
/// exactly the frames the first pass kept.
#[test]
fn damaged_normal_tapes_through_the_adapter() {
    let Some(bytes) = common::decompressed(SAMPLES[1]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("damaged.fgtape");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..60 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut copy = bytes.clone();
        let pos = 4000 + (seed % (copy.len() as u64 - 4000)) as usize;
        if i % 3 == 0 {
            copy.truncate(pos);
        } else {
            copy[pos] ^= 1 << (seed % 8);
        }
        std::fs::write(&path, &copy).unwrap();
        let Ok(mut tape) = FgTape::open(&path, &ReadOptions::default()) else {
            continue;
        };
        let frames: usize = tape.header().metadata["fgtape.frames"]
            .split(' ')
            .map(|kv| kv.split_once('=').unwrap().1.parse::<usize>().unwrap())
            .sum();
        let signals = tape.schema().stream_index("signals");
        let mut buf = FrameBuf::default();
        let mut n = 0;
        while tape.read_frame(&mut buf).unwrap() {
            if Some(buf.stream) == signals {
                n += 1;
            }
        }
        assert_eq!(n, frames, "case {i} at {pos}");
    }
}

/// `stop_time` on Continuous tapes: the rows before the end, as a full read gives them, with
/// or without a seek first; the file is read only up to the first frame at or after the end,
/// so the torn tail after it is not reached (and not reported). An end after the last frame
/// reads to the tail and reports it.
#[test]
fn stopping_in_continuous_tapes_reads_up_to_the_end_only() {
    let dir = tempfile::tempdir().unwrap();
    for compression in [0, 1] {
        let path = continuous_file(dir.path(), compression);
        let full = rows(&mut FgTape::open(&path, &ReadOptions::default()).unwrap());
        let size = std::fs::metadata(&path).unwrap().len();
        let t = |v: &[Value]| v[0].as_f64().unwrap();
        for (start, end) in [(None, 12.0), (None, 12.1), (Some(11.0), 13.0), (None, 0.0)] {
            let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
            if let Some(start) = start {
                assert!(tape.seek_time(start).unwrap());
            }
            assert!(tape.stop_time(end));
            let got = rows(&mut tape);
            let from = start.unwrap_or(f64::NEG_INFINITY);
            let expected: Vec<_> = full
                .iter()
                .filter(|(_, v)| t(v) >= from && t(v) < end)
                .cloned()
                .collect();
            assert_eq!(got, expected, "compression {compression}, [{from}, {end})");
            let (read, _) = tape.progress();
            assert!(
                read < size / 2,
                "compression {compression}: read {read} of {size}"
            );
            assert_eq!(tape.integrity().status, IntegrityStatus::Complete);
        }
        let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
        assert!(tape.stop_time(1e9));
        assert_eq!(rows(&mut tape), full);
        assert_eq!(tape.integrity().status, IntegrityStatus::Truncated);
    }
}

/// `stop_time` on Normal tapes: rows come container by container in time order, so the
/// rows before the end are those of a full read, and the containers after it are not
/// decompressed again (the frames emitted, which `progress` counts, stop there).
#[test]
fn stopping_in_normal_tapes_emits_the_frames_before_the_end_only() {
    for name in SAMPLES {
        let Some(path) = common::sample(name) else {
            return;
        };
        let full = rows(&mut FgTape::open(&path, &ReadOptions::default()).unwrap());
        let t = |v: &[Value]| v[0].as_f64().unwrap();
        let first = full.iter().map(|(_, v)| t(v)).fold(f64::INFINITY, f64::min);
        let last = full
            .iter()
            .map(|(_, v)| t(v))
            .fold(f64::NEG_INFINITY, f64::max);
        let end = first + (last - first) / 5.0;
        let mut tape = FgTape::open(&path, &ReadOptions::default()).unwrap();
        assert!(tape.stop_time(end));
        let got = rows(&mut tape);
        let expected: Vec<_> = full.iter().filter(|(_, v)| t(v) < end).cloned().collect();
        assert!(!expected.is_empty());
        assert_eq!(got, expected, "{name}: before {end}");
        let (read, total) = tape.progress();
        let total = total.unwrap();
        assert!(read < total / 2, "{name}: progress {read} of {total}");
        assert_eq!(tape.integrity().status, IntegrityStatus::Complete);
    }
}
