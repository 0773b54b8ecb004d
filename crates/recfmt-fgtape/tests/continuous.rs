//! Continuous and Recovery tapes, built from the byte layout of the spec (no real file exists).

#![allow(clippy::unwrap_used)] // tests may unwrap

use recfmt_core::ReadOptions;
use recfmt_fgtape::continuous::{
    ContinuousFrame, ContinuousHeader, Deflated, ExtraProperty, Reader, Writer,
    decode_extra_properties, encode_extra_properties,
};
use recfmt_fgtape::mp::{join_u16_packets, split_u16_packets};
use recfmt_fgtape::props::{PropValue, PropertyList};
use recfmt_fgtape::signals::SignalValue;

fn header(compression: Option<i32>, items: &[&str]) -> ContinuousHeader {
    let mut t = PropertyList::new();
    t.root.set("meta/aircraft-type", PropValue::string("c172p"));
    if let Some(c) = compression {
        t.root.set("meta/continuous-compression", PropValue::int(c));
    }
    t.root.set("meta/tape-duration", PropValue::double(0.0));
    for (i, item) in items.iter().enumerate() {
        t.root.set(&format!("data[{i}]"), PropValue::string(*item));
    }
    t.root.set("signals/name", PropValue::string("Test"));
    let sigs = [
        ("double", "/position[0]/altitude-ft[0]"),
        ("bool", "/a[0]"),
        ("int", "/b[0]"),
    ];
    for (i, (ty, p)) in sigs.iter().enumerate() {
        t.root.set(
            &format!("signals/signals/signal[{i}]/type"),
            PropValue::string(*ty),
        );
        t.root.set(
            &format!("signals/signals/signal[{i}]/property"),
            PropValue::string(*p),
        );
    }
    t.root.set(
        "signals/recorder/record-size",
        PropValue::int(8 + 8 + 4 + 1),
    );
    ContinuousHeader::new(t).unwrap()
}

fn frame(h: &ContinuousHeader, i: usize) -> ContinuousFrame {
    let items = h
        .data
        .iter()
        .map(|name| match name.as_str() {
            "signals" => {
                let layout = h.signals.as_ref().unwrap();
                let mut block = layout
                    .encode(&[
                        SignalValue::Double(i as f64 * 10.0),
                        SignalValue::Int(-(i as i32)),
                        SignalValue::Bool(i % 2 == 1),
                    ])
                    .unwrap();
                block.extend_from_slice(&[0; 8]);
                block
            }
            "multiplayer" if i.is_multiple_of(2) => {
                join_u16_packets([&[7u8; 33][..], b"xy"]).unwrap()
            }
            "extra-properties" if i.is_multiple_of(3) => encode_extra_properties(&[
                ExtraProperty::Change {
                    path: "/sim/current-view/heading-offset-deg".into(),
                    value: format!("{i}.5"),
                },
                ExtraProperty::Removal {
                    path: "/sim/x".into(),
                },
            ])
            .unwrap(),
            _ => Vec::new(),
        })
        .collect();
    ContinuousFrame {
        time: 100.0 + i as f64 / 8.0,
        items,
        deflate: None,
    }
}

fn build(h: &ContinuousHeader, n: usize) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), h).unwrap();
    for i in 0..n {
        w.write_frame(&frame(h, i)).unwrap();
    }
    w.finish().unwrap()
}

fn read_all(bytes: &[u8]) -> (Vec<ContinuousFrame>, Reader<&[u8]>) {
    let mut r = Reader::new(bytes).unwrap();
    let mut frames = Vec::new();
    let mut f = ContinuousFrame::default();
    while r.read_frame(&mut f).unwrap() {
        frames.push(f.clone());
    }
    (frames, r)
}

const ALL: [&str; 3] = ["signals", "multiplayer", "extra-properties"];

#[test]
fn uncompressed_round_trip_and_item_decoding() {
    let h = header(Some(0), &ALL);
    assert!(!h.compression);
    assert_eq!(h.signals.as_ref().unwrap().record_size(), 21);
    let bytes = build(&h, 10);
    assert_eq!(&bytes[..32], b"FlightGear Flight Recorder Tape\0");
    let (frames, r) = read_all(&bytes);
    assert_eq!(frames.len(), 10);
    assert!(r.truncated().is_none());
    assert_eq!(r.header(), &h);
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(f, &frame(&h, i));
    }
    let layout = h.signals.as_ref().unwrap();
    assert_eq!(
        layout.decode(&frames[3].items[0]).unwrap()[0],
        SignalValue::Double(30.0)
    );
    assert_eq!(split_u16_packets(&frames[2].items[1]).unwrap()[1], b"xy");
    let extra = decode_extra_properties(&frames[3].items[2]).unwrap();
    assert_eq!(
        extra[0],
        ExtraProperty::Change {
            path: "/sim/current-view/heading-offset-deg".into(),
            value: "3.5".into()
        }
    );
    // Byte-exact writing back.
    let mut w = Writer::new(Vec::new(), r.header()).unwrap();
    for f in &frames {
        w.write_frame(f).unwrap();
    }
    assert_eq!(w.finish().unwrap(), bytes);
}

#[test]
fn compressed_frames_round_trip_with_flags() {
    let h = header(Some(1), &ALL);
    assert!(h.compression);
    let bytes = build(&h, 12);
    let (frames, r) = read_all(&bytes);
    assert!(r.warnings().is_empty(), "{:?}", r.warnings());
    assert_eq!(frames.len(), 12);
    for (i, f) in frames.iter().enumerate() {
        let mut expected = frame(&h, i);
        let d = f.deflate.as_ref().unwrap();
        assert_eq!(d.flags, h.flags_for(&expected.items));
        assert_eq!(d.flags & 1, 1);
        expected.deflate = f.deflate.clone();
        assert_eq!(f, &expected);
    }
    assert_eq!(frames[0].deflate.as_ref().unwrap().flags, 0b111);
    assert_eq!(frames[1].deflate.as_ref().unwrap().flags, 0b001);
    let mut w = Writer::new(Vec::new(), r.header()).unwrap();
    for f in &frames {
        w.write_frame(f).unwrap();
    }
    assert_eq!(w.finish().unwrap(), bytes);
}

#[test]
fn wrong_flags_warn_or_fail_in_strict_mode() {
    let h = header(Some(1), &ALL);
    let mut f = frame(&h, 1);
    let mut w = Writer::new(Vec::new(), &h).unwrap();
    let mut probe = Writer::new(Vec::new(), &h).unwrap();
    probe.write_frame(&f).unwrap();
    let probe = probe.finish().unwrap();
    let (read, _) = read_all(&probe);
    f.deflate = Some(Deflated {
        flags: 0b100,
        data: read[0].deflate.as_ref().unwrap().data.clone(),
    });
    w.write_frame(&f).unwrap();
    let bytes = w.finish().unwrap();
    let (_, r) = read_all(&bytes);
    assert!(
        r.warnings().iter().any(|w| w.contains("flags")),
        "{:?}",
        r.warnings()
    );
    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    let mut r = Reader::with_options(&bytes[..], &strict).unwrap();
    assert!(r.read_frame(&mut ContinuousFrame::default()).is_err());
}

#[test]
fn torn_last_frame_stops_quietly() {
    for compression in [0, 1] {
        let h = header(Some(compression), &ALL);
        let bytes = build(&h, 6);
        let five = build(&h, 5).len();
        for cut in five + 1..bytes.len() {
            let (frames, r) = read_all(&bytes[..cut]);
            assert_eq!(frames.len(), 5, "cut {cut}");
            let t = r.truncated().unwrap();
            assert_eq!(
                (t.offset.get(), t.bytes),
                (five as u64, (cut - five) as u64)
            );
            let strict = ReadOptions {
                strict: true,
                ..ReadOptions::default()
            };
            let mut r = Reader::with_options(&bytes[..cut], &strict).unwrap();
            let mut f = ContinuousFrame::default();
            for _ in 0..5 {
                assert!(r.read_frame(&mut f).unwrap());
            }
            let e = r.read_frame(&mut f).unwrap_err();
            assert!(e.is_truncation(), "{e}");
        }
    }
}

#[test]
fn recovery_tapes_including_the_known_bad_compressed_ones() {
    let h = header(None, &["signals"]);
    assert!(h.is_recovery_like());
    let bytes = build(&h, 1);
    let (frames, r) = read_all(&bytes);
    assert_eq!(frames.len(), 1);
    assert!(!r.compressed());
    // The bug: a compressed frame under a header without continuous-compression.
    let mut compressed_header = h.clone();
    compressed_header.compression = true;
    let mut w = Writer::new(Vec::new(), &compressed_header).unwrap();
    w.write_frame(&frame(&h, 3)).unwrap();
    let bad = w.finish().unwrap();
    let (frames, r) = read_all(&bad);
    assert!(r.compressed());
    assert!(r.warnings().iter().any(|w| w.contains("Recovery")));
    assert_eq!(frames[0].items, frame(&h, 3).items);
}

#[test]
fn extra_property_records_check_lengths() {
    let long = "x".repeat(40000);
    assert!(
        encode_extra_properties(&[ExtraProperty::Change {
            path: "/a".into(),
            value: long
        }])
        .is_err()
    );
    assert_eq!(decode_extra_properties(&[0xff, 0xff]), Err(0));
    assert_eq!(
        decode_extra_properties(&[2, 0, b'/', b'a', 9, 0, b'x']),
        Err(0)
    );
    assert_eq!(decode_extra_properties(&[]), Ok(vec![]));
}

#[test]
fn damaged_continuous_tapes_never_panic() {
    let h = header(Some(1), &ALL);
    let bytes = build(&h, 8);
    let mut seed = 0x1234_5678_9abc_def1u64;
    for i in 0..2000 {
        let mut copy = bytes.clone();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let pos = (seed % copy.len() as u64) as usize;
        if i % 4 == 0 {
            copy.truncate(pos);
        } else {
            copy[pos] ^= 1 << (seed % 8);
        }
        let Ok(mut r) = Reader::new(&copy[..]) else {
            continue;
        };
        let mut f = ContinuousFrame::default();
        loop {
            match r.read_frame(&mut f) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    assert!(e.offset().is_some(), "{e}");
                    break;
                }
            }
        }
    }
}
