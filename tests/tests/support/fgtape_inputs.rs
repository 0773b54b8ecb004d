//! Generated FlightGear inputs for the generic reader tests: the tapes the samples do not
//! cover (Continuous, compressed, Recovery) and cut copies.

use std::path::PathBuf;

use recfmt_tests::samples;

/// FlightGear tapes the samples do not cover, written once per run under the test's temporary
/// folder: Continuous tapes (uncompressed and compressed) with signals of every type,
/// multiplayer packets and extra properties, a Recovery tape, and truncated copies of the
/// Continuous tapes and of the first Normal sample (each cut inside a frame).
pub fn inputs() -> Vec<PathBuf> {
    use recfmt::fgtape::continuous::{
        ContinuousFrame, ContinuousHeader, ExtraProperty, Writer, encode_extra_properties,
    };
    use recfmt::fgtape::mp::join_u16_packets;
    use recfmt::fgtape::props::{PropValue, PropertyList};
    use recfmt::fgtape::signals::{SignalType, SignalValue};
    static WRITTEN: std::sync::OnceLock<(tempfile::TempDir, Vec<PathBuf>)> =
        std::sync::OnceLock::new();

    let tape = |compression: Option<i32>, items: &[&str]| -> Vec<u8> {
        let mut t = PropertyList::new();
        t.root.set("meta/aircraft-type", PropValue::string("test"));
        if let Some(c) = compression {
            t.root.set("meta/continuous-compression", PropValue::int(c));
        }
        for (i, item) in items.iter().enumerate() {
            t.root.set(&format!("data[{i}]"), PropValue::string(*item));
        }
        // Two signals of each type, interleaved, and 9 bools for a second bool byte.
        for (k, ty) in SignalType::ALL.iter().cycle().take(19).enumerate() {
            let ty = if k >= 12 { SignalType::Bool } else { *ty };
            t.root.set(
                &format!("signals/signals/signal[{k}]/type"),
                PropValue::string(ty.name()),
            );
            t.root.set(
                &format!("signals/signals/signal[{k}]/property"),
                PropValue::string(format!("/p/{}[{k}]", ty.name())),
            );
        }
        let header = ContinuousHeader::new(t).expect("header");
        let mut w = Writer::new(Vec::new(), &header).expect("writer");
        for i in 0..40usize {
            let items = header.data.iter().map(|name| match name.as_str() {
                "signals" => {
                    let layout = header.signals.as_ref().expect("layout");
                    let values: Vec<SignalValue> = layout
                        .signals()
                        .iter()
                        .enumerate()
                        .map(|(j, s)| {
                            let x = (i * 31 + j * 7) as i32;
                            match s.ty {
                                SignalType::Double => SignalValue::Double(if x % 11 == 0 {
                                    f64::NAN
                                } else {
                                    f64::from(x) * -0.37
                                }),
                                SignalType::Float => SignalValue::Float(x as f32 * 1.3),
                                SignalType::Int => SignalValue::Int(x.wrapping_mul(123_457)),
                                SignalType::Int16 => SignalValue::Int16(-(x as i16)),
                                SignalType::Int8 => SignalValue::Int8(x as i8),
                                SignalType::Bool => SignalValue::Bool((x / 3) % 2 == 1),
                            }
                        })
                        .collect();
                    let mut block = layout.encode(&values).expect("block");
                    block.extend_from_slice(&[0; 8]);
                    block
                }
                "multiplayer" if i % 3 != 1 => {
                    join_u16_packets([&[i as u8; 40][..], b"short"]).expect("packets")
                }
                "extra-properties" if i.is_multiple_of(4) => encode_extra_properties(&[
                    ExtraProperty::Change {
                        path: format!("/sim/x[{i}]"),
                        value: format!("{i}.25"),
                    },
                    ExtraProperty::Removal {
                        path: "/sim/y".into(),
                    },
                ])
                .expect("extra properties"),
                _ => Vec::new(),
            });
            let frame = ContinuousFrame {
                time: 100.0 + i as f64 / 8.0,
                items: items.collect(),
                deflate: None,
            };
            w.write_frame(&frame).expect("frame");
        }
        w.finish().expect("tape")
    };
    WRITTEN
        .get_or_init(|| {
            // A folder per test process, so test binaries running at once do not share files.
            let dir = tempfile::tempdir().expect("temporary folder");
            let all = ["signals", "multiplayer", "extra-properties"];
            let continuous = tape(Some(0), &all);
            let compressed = tape(Some(1), &all);
            let mut files = vec![
                ("continuous.fgtape", continuous.clone()),
                ("compressed.fgtape", compressed.clone()),
                ("recovery.fgtape", tape(None, &["signals"])),
                (
                    "continuous-cut.fgtape",
                    continuous[..continuous.len() * 2 / 3].to_vec(),
                ),
                (
                    "compressed-cut.fgtape",
                    compressed[..compressed.len() * 3 / 5].to_vec(),
                ),
            ];
            files.extend(long_tapes());
            if let Some(normal) = samples("fgtape", "fgtape").first() {
                let bytes = std::fs::read(normal).expect("sample");
                files.push(("normal-cut.fgtape", bytes[..bytes.len() / 2].to_vec()));
            }
            let paths = files
                .into_iter()
                .map(|(name, bytes)| {
                    let path = dir.path().join(name);
                    std::fs::write(&path, bytes).expect("tape written");
                    path
                })
                .collect();
            (dir, paths)
        })
        .1
        .clone()
}

/// Long Continuous tapes (uncompressed and compressed; a few MB: the binary search of
/// `seek_time` probes them), with multiplayer and extra-property items in some frames and,
/// in the damaged copy, 30 KB of junk in the multiplayer item of a frame in the middle
/// (copies of frame starts with earlier times among it, which the search must not take
/// for frame starts; a full scan reads them as one item).
pub fn long_tapes() -> Vec<(&'static str, Vec<u8>)> {
    use recfmt::fgtape::continuous::{
        ContinuousFrame, ContinuousHeader, ExtraProperty, Writer, encode_extra_properties,
    };
    use recfmt::fgtape::mp::join_u16_packets;
    use recfmt::fgtape::props::{PropValue, PropertyList};

    let tape = |compression: i32, junk_at: Option<usize>| -> Vec<u8> {
        let mut t = PropertyList::new();
        t.root.set("meta/aircraft-type", PropValue::string("test"));
        t.root
            .set("meta/continuous-compression", PropValue::int(compression));
        for (i, item) in ["signals", "multiplayer", "extra-properties"]
            .iter()
            .enumerate()
        {
            t.root.set(&format!("data[{i}]"), PropValue::string(*item));
        }
        for (k, ty) in ["double", "float", "int", "bool"].iter().enumerate() {
            t.root.set(
                &format!("signals/signals/signal[{k}]/type"),
                PropValue::string(*ty),
            );
            t.root.set(
                &format!("signals/signals/signal[{k}]/property"),
                PropValue::string(format!("/p/{ty}[{k}]")),
            );
        }
        let header = ContinuousHeader::new(t).expect("header");
        let layout = header.signals.clone().expect("layout");
        let mut w = Writer::new(Vec::new(), &header).expect("writer");
        let lure = |time: f64, k: usize| {
            let mut b = (time - 1.0 - k as f64).to_le_bytes().to_vec();
            b.extend_from_slice(&(layout.block_len() as u32).to_le_bytes());
            b.extend((0..layout.block_len() + 9).map(|j| (j * 37 + k) as u8));
            b
        };
        for i in 0..60_000usize {
            let time = 50.0 + i as f64 / 20.0;
            let values = vec![
                recfmt::fgtape::signals::SignalValue::Double(time * 2.0),
                recfmt::fgtape::signals::SignalValue::Float(i as f32),
                recfmt::fgtape::signals::SignalValue::Int(i as i32),
                recfmt::fgtape::signals::SignalValue::Bool(i % 3 == 0),
            ];
            let signals = layout.encode(&values).expect("block");
            let multiplayer = if junk_at == Some(i) {
                let junk: Vec<u8> = (0..800).flat_map(|k| lure(time, k)).collect();
                let third = junk.len() / 3;
                join_u16_packets(junk.chunks(third)).expect("packets")
            } else if i % 11 == 0 {
                join_u16_packets([&lure(time, i)[..]]).expect("packets")
            } else {
                Vec::new()
            };
            let extra = if i % 13 == 0 {
                encode_extra_properties(&[ExtraProperty::Change {
                    path: format!("/sim/x[{}]", i % 5),
                    value: format!("{i}"),
                }])
                .expect("extra properties")
            } else {
                Vec::new()
            };
            w.write_frame(&ContinuousFrame {
                time,
                items: vec![signals, multiplayer, extra],
                deflate: None,
            })
            .expect("frame");
        }
        w.finish().expect("tape")
    };
    vec![
        ("long.fgtape", tape(0, None)),
        ("long-damaged.fgtape", tape(0, Some(30_000))),
        ("long-compressed.fgtape", tape(1, Some(30_000))),
    ]
}
