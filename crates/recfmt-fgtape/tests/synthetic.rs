//! Tapes built from scratch: both layouts, multiplayer blocks, detection corner cases.

#![allow(clippy::unwrap_used)] // tests may unwrap

use recfmt_core::ReadOptions;
use recfmt_fgtape::normal::{
    DecidedBy, Frame, FrameLayout, Header, MpEncoding, NormalTape, RawData, Reader, Writer,
};
use recfmt_fgtape::props::{PropValue, PropertyList};
use recfmt_fgtape::signals::{SignalLayout, SignalValue};
use recfmt_fgtape::{Error, Offset};

fn config(signals: &[(&str, &str)]) -> PropertyList {
    let mut c = PropertyList::new();
    c.root.set("name", PropValue::string("Test Recorder"));
    for (i, (ty, prop)) in signals.iter().enumerate() {
        c.root
            .set(&format!("signals/signal[{i}]/type"), PropValue::string(*ty));
        c.root.set(
            &format!("signals/signal[{i}]/interpolation"),
            PropValue::string("linear"),
        );
        c.root.set(
            &format!("signals/signal[{i}]/property"),
            PropValue::string(*prop),
        );
    }
    let layout = SignalLayout::from_config(&c.root, &Default::default()).unwrap();
    c.root.set(
        "recorder/record-size",
        PropValue::int(layout.record_size() as i32),
    );
    c
}

fn meta(multiplayer: Option<bool>, version: &str) -> PropertyList {
    let mut m = PropertyList::new();
    m.root.set("meta/aircraft-type", PropValue::string("test"));
    m.root
        .set("meta/version/flightgear", PropValue::string(version));
    if let Some(mp) = multiplayer {
        m.root.set("meta/multiplayer", PropValue::bool(mp));
    }
    m
}

const SIGNALS: [(&str, &str); 4] = [
    ("double", "/position[0]/altitude-ft[0]"),
    ("float", "/orientation[0]/roll-deg[0]"),
    ("bool", "/gear[0]/gear[0]/wow[0]"),
    ("int16", "/x[0]"),
];

fn frames(header: &Header, n: usize, t0: f64, mp: bool) -> Vec<Frame> {
    (0..n)
        .map(|i| {
            let values = [
                SignalValue::Double(1000.0 + i as f64),
                SignalValue::Float(i as f32 * 0.5),
                SignalValue::Int16(-(i as i16)),
                SignalValue::Bool(i % 2 == 0),
            ];
            Frame {
                time: t0 + i as f64 * 0.25,
                signals: header.signals.encode(&values).unwrap(),
                padding: None,
                multiplayer: if mp && i % 3 == 0 {
                    vec![vec![0xab; 40 + i], vec![1, 2, 3]]
                } else {
                    Vec::new()
                },
            }
        })
        .collect()
}

fn tape(layout: FrameLayout, mp: Option<bool>, counts: [usize; 3]) -> NormalTape {
    let header = Header::new(meta(mp, "2020.3.16"), config(&SIGNALS)).unwrap();
    let rs = header.record_size();
    let with_mp = mp == Some(true) && layout == FrameLayout::Vector;
    let raw_data = [
        RawData::new(frames(&header, counts[0], 100.0, with_mp), rs),
        RawData::new(frames(&header, counts[1], 50.0, with_mp), rs),
        RawData::new(frames(&header, counts[2], 0.0, with_mp), rs),
    ];
    NormalTape {
        header,
        layout,
        raw_data,
        trailing: Vec::new(),
    }
}

/// Normalises what a reader fills in (vector frames carry explicit zero padding).
fn normalised(mut t: NormalTape) -> NormalTape {
    for c in &mut t.raw_data {
        for f in &mut c.frames {
            if t.layout == FrameLayout::Vector {
                f.padding.get_or_insert([0; 8]);
            } else {
                f.padding = None;
            }
        }
    }
    t
}

#[test]
fn both_layouts_round_trip_and_are_detected_in_any_container() {
    for layout in [FrameLayout::Legacy, FrameLayout::Vector] {
        for counts in [[5, 0, 0], [0, 7, 0], [0, 0, 3], [4, 6, 2], [1, 1, 1]] {
            let t = tape(layout, None, counts);
            // Strip the version so nothing hints at the layout.
            let mut t = t;
            t.header = Header::new(
                {
                    let mut m = meta(None, "");
                    m.root
                        .child_mut("meta", 0)
                        .unwrap()
                        .children
                        .retain(|c| c.name != "version");
                    m
                },
                config(&SIGNALS),
            )
            .unwrap();
            assert_eq!(t.header.layout_hint(), None);
            let bytes = t.to_decompressed_bytes().unwrap();
            let mut reader = Reader::new(&bytes[..]).unwrap();
            reader.read_header().unwrap();
            let back = reader.read_tape().unwrap();
            assert_eq!(back, normalised(t.clone()), "{layout:?} {counts:?}");
            assert_eq!(back.to_decompressed_bytes().unwrap(), bytes);
            let first_nonempty = counts.iter().position(|&c| c > 0).unwrap();
            let mut reader = Reader::new(&bytes[..]).unwrap();
            reader.read_header().unwrap();
            for _ in 0..=first_nonempty {
                reader.next_container().unwrap();
            }
            assert_eq!(
                reader.layout().unwrap().decided_by,
                DecidedBy::Structure {
                    container: first_nonempty
                }
            );
            // Gzip too.
            let gz = t.write_gzip(Vec::new()).unwrap();
            assert_eq!(NormalTape::read(&gz[..]).unwrap(), normalised(t));
        }
    }
}

#[test]
fn empty_tapes_use_the_hint() {
    for (version, want) in [
        ("2.12.1", FrameLayout::Legacy),
        ("2020.3.1", FrameLayout::Vector),
        ("", FrameLayout::Vector),
    ] {
        let mut t = tape(FrameLayout::Vector, None, [0, 0, 0]);
        t.header = Header::new(meta(None, version), config(&SIGNALS)).unwrap();
        let bytes = t.to_decompressed_bytes().unwrap();
        let mut reader = Reader::new(&bytes[..]).unwrap();
        reader.read_header().unwrap();
        while reader.next_container().unwrap().is_some() {}
        let d = reader.layout().unwrap();
        assert_eq!(
            (d.layout, d.decided_by),
            (want, DecidedBy::Hint),
            "{version}"
        );
    }
}

#[test]
fn multiplayer_2020_3_blocks_round_trip() {
    let t = tape(FrameLayout::Vector, Some(true), [10, 4, 0]);
    assert_eq!(t.header.multiplayer, MpEncoding::Fg2020_3);
    let bytes = t.to_decompressed_bytes().unwrap();
    let back = NormalTape::read(&bytes[..]).unwrap();
    assert_eq!(back, normalised(t));
    let packets: usize = back
        .frames_in_time_order()
        .map(|f| f.multiplayer.len())
        .sum();
    assert_eq!(packets, 2 * (4 + 2));
}

#[test]
fn next_multiplayer_encoding_is_read() {
    // Build a vector tape without MP, then splice `u32 total, (u16 len, bytes)*` blocks in.
    let mut m = meta(None, "2020.4.0");
    m.root.set("meta/data", PropValue::string("signals"));
    m.root.set("meta/data[1]", PropValue::string("multiplayer"));
    let header = Header::new(m, config(&SIGNALS)).unwrap();
    assert_eq!(header.multiplayer, MpEncoding::Next);
    let rs = header.record_size();
    let fs = frames(&header, 3, 1.0, false);
    let mut bytes = Vec::new();
    let mut w = Writer::new(&mut bytes, FrameLayout::Vector);
    let mut plain = header.clone();
    plain.multiplayer = MpEncoding::None;
    w.write_header(&plain).unwrap();
    w.start_raw_data(0).unwrap();
    w.start_raw_data(0).unwrap();
    w.start_raw_data((fs.len() * rs) as u64).unwrap();
    w.finish().unwrap_err(); // frames missing
    let mut out = bytes.clone();
    for f in &fs {
        out.extend_from_slice(&f.time.to_le_bytes());
        out.extend_from_slice(&f.signals);
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&(2 + 5 + 2 + 1u32).to_le_bytes());
        out.extend_from_slice(&5u16.to_le_bytes());
        out.extend_from_slice(b"hello");
        out.extend_from_slice(&1u16.to_le_bytes());
        out.push(b'!');
    }
    let back = NormalTape::read(&out[..]).unwrap();
    assert_eq!(back.layout, FrameLayout::Vector);
    let f = &back.raw_data[2].frames[1];
    assert_eq!(f.multiplayer, vec![b"hello".to_vec(), b"!".to_vec()]);
    // Writing it back is refused: FlightGear never writes this encoding to Normal tapes.
    assert!(matches!(
        back.to_decompressed_bytes(),
        Err(Error::Unsupported(_))
    ));
    // A packet overrunning its block is reported where it starts.
    let mut bad = out.clone();
    let first_block = bytes.len() + 8 + (rs - 8) + 8;
    bad[first_block + 4 + 7..first_block + 4 + 9].copy_from_slice(&9u16.to_le_bytes());
    let e = NormalTape::read(&bad[..]).unwrap_err();
    assert!(matches!(e, Error::Malformed { .. }), "{e}");
}

#[test]
fn record_size_mismatch_is_rejected() {
    let mut c = config(&SIGNALS);
    c.root.set("recorder/record-size", PropValue::int(999));
    let e = Header::new(meta(None, "2020.3.16"), c.clone()).unwrap_err();
    assert!(e.to_string().contains("record-size 999"), "{e}");
    // 0 disables the check, as in FlightGear.
    c.root.set("recorder/record-size", PropValue::int(0));
    Header::new(meta(None, "2020.3.16"), c).unwrap();
}

#[test]
fn legacy_tape_read_as_vector_fails_like_flightgear() {
    // FlightGear 2020.3 fails at the second container header; our reader detects instead,
    // but a damaged chain is reported at the container header.
    let t = tape(FrameLayout::Legacy, None, [4, 3, 2]);
    let mut bytes = t.to_decompressed_bytes().unwrap();
    let n = bytes.len();
    // Break the medium container's type field.
    let medium_at = n - 12 - 2 * t.header.record_size() - 12 - 3 * t.header.record_size();
    bytes[medium_at] = 7;
    let e = NormalTape::read(&bytes[..]).unwrap_err();
    assert!(matches!(e.offset(), Some(Offset::File(_))), "{e}");
    assert!(e.to_string().contains("legacy layout"), "{e}");
}

#[test]
fn size_remainders_warn_or_fail_in_strict_mode() {
    let t = tape(FrameLayout::Vector, None, [3, 0, 0]);
    let mut t2 = t.clone();
    t2.raw_data[0].declared_size += 5;
    let bytes = t2.to_decompressed_bytes().unwrap();
    let mut reader = Reader::new(&bytes[..]).unwrap();
    reader.read_header().unwrap();
    while reader.read_raw_data().unwrap().is_some() {}
    assert!(
        reader
            .warnings()
            .iter()
            .any(|w| w.contains("not a multiple")),
        "{:?}",
        reader.warnings()
    );
    assert_eq!(
        NormalTape::read(&bytes[..])
            .unwrap()
            .to_decompressed_bytes()
            .unwrap(),
        bytes
    );
    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    assert!(
        Reader::with_options(&bytes[..], &strict)
            .unwrap()
            .read_tape()
            .is_err()
    );
}

#[test]
fn writer_refuses_inconsistent_input() {
    let t = tape(FrameLayout::Vector, Some(true), [3, 0, 0]);
    // MP packets cannot go into a legacy tape.
    let mut legacy = t.clone();
    legacy.layout = FrameLayout::Legacy;
    assert!(legacy.to_decompressed_bytes().is_err());
    // Frame count must match the size field.
    let mut wrong = t.clone();
    wrong.raw_data[0].frames.pop();
    assert!(wrong.to_decompressed_bytes().is_err());
    // Signal blocks must have the layout's length.
    let mut short = t;
    short.raw_data[0].frames[0].signals.pop();
    assert!(short.to_decompressed_bytes().is_err());
}
