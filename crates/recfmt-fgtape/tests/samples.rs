//! The real sample tapes: the figures of SOURCES.txt, layout detection and byte-exact
//! round trips.

#![allow(clippy::unwrap_used)] // tests may unwrap

mod common;

use recfmt_fgtape::mp::{MpHeader, POS_DATA_ID};
use recfmt_fgtape::normal::{DecidedBy, FrameLayout, MpEncoding, NormalTape, Reader};
use recfmt_fgtape::props::PropertyList;
use recfmt_fgtape::signals::{SignalType, SignalValue};

use common::{SAMPLES, decompressed, sample};

struct Expected {
    name: &'static str,
    layout: FrameLayout,
    signals: usize,
    counts: [usize; 6],
    record_size: usize,
    frames: [usize; 3],
    mp_packets: usize,
    multiplayer: MpEncoding,
    aircraft: &'static str,
    version: &'static str,
}

const EXPECTED: [Expected; 3] = [
    Expected {
        name: SAMPLES[0],
        layout: FrameLayout::Legacy,
        signals: 188,
        counts: [4, 132, 0, 0, 0, 52],
        record_size: 575,
        frames: [1314, 966, 2],
        mp_packets: 0,
        multiplayer: MpEncoding::None,
        aircraft: "dr400-jsbsim",
        version: "2.11.0",
    },
    Expected {
        name: SAMPLES[1],
        layout: FrameLayout::Vector,
        signals: 236,
        counts: [4, 153, 2, 0, 4, 73],
        record_size: 674,
        frames: [406, 0, 0],
        mp_packets: 398,
        multiplayer: MpEncoding::Fg2020_3,
        aircraft: "c172p",
        version: "2020.3.16",
    },
    Expected {
        name: SAMPLES[2],
        layout: FrameLayout::Vector,
        signals: 236,
        counts: [4, 153, 2, 0, 4, 73],
        record_size: 674,
        frames: [499, 0, 0],
        mp_packets: 0,
        multiplayer: MpEncoding::None,
        aircraft: "c172p",
        version: "2020.3.16",
    },
];

#[test]
fn sources_txt_figures() {
    for exp in &EXPECTED {
        let Some(path) = sample(exp.name) else { return };
        let tape = NormalTape::open(&path).unwrap();
        let h = &tape.header;
        assert_eq!(
            h.magic, b"FlightGear Flight Recorder Tape\0",
            "{}",
            exp.name
        );
        assert_eq!(h.signals.signals().len(), exp.signals, "{}", exp.name);
        for (ty, &n) in SignalType::ALL.iter().zip(&exp.counts) {
            assert_eq!(h.signals.count(*ty), n, "{} {ty}", exp.name);
            // The Config's own per-type counts agree.
            let stored = h.config.tree.get(ty.name()).and_then(|n| n.int_value());
            assert_eq!(stored, Some(n as i32), "{} {ty}", exp.name);
        }
        assert_eq!(h.record_size(), exp.record_size, "{}", exp.name);
        assert_eq!(
            h.config
                .tree
                .get("recorder/signal-count")
                .and_then(|n| n.int_value()),
            Some(exp.signals as i32)
        );
        assert_eq!(tape.layout, exp.layout, "{}", exp.name);
        assert_eq!(tape.frame_counts(), exp.frames, "{}", exp.name);
        assert_eq!(h.multiplayer, exp.multiplayer, "{}", exp.name);
        let packets: usize = tape
            .frames_in_time_order()
            .map(|f| f.multiplayer.len())
            .sum();
        assert_eq!(packets, exp.mp_packets, "{}", exp.name);
        let meta = &h.meta.tree;
        assert_eq!(
            meta.get("meta/aircraft-type")
                .and_then(|n| n.string_value()),
            Some(exp.aircraft)
        );
        assert_eq!(h.flightgear_version(), Some(exp.version));
        for (c, data) in tape.raw_data.iter().enumerate() {
            assert_eq!(
                data.declared_size,
                (data.frames.len() * exp.record_size) as u64,
                "{} container {c}",
                exp.name
            );
            for f in &data.frames {
                assert_eq!(f.signals.len(), exp.record_size - 8);
                match exp.layout {
                    FrameLayout::Legacy => assert_eq!(f.padding, None),
                    FrameLayout::Vector => assert_eq!(f.padding, Some([0; 8])),
                }
            }
            // Times rise within each container.
            assert!(data.frames.windows(2).all(|w| w[0].time < w[1].time));
        }
        // Containers do not overlap: long < medium < short.
        let times: Vec<f64> = tape.frames_in_time_order().map(|f| f.time).collect();
        assert!(times.windows(2).all(|w| w[0] < w[1]), "{}", exp.name);
        // tape-duration = end - start.
        let duration = meta
            .get("meta/tape-duration")
            .and_then(|n| n.double_value())
            .unwrap();
        let span = times.last().unwrap() - times.first().unwrap();
        assert!(
            (duration - span).abs() < 1e-6,
            "{}: {duration} vs {span}",
            exp.name
        );
    }
}

#[test]
fn dr400_time_ranges_and_values() {
    let Some(path) = sample(SAMPLES[0]) else {
        return;
    };
    let tape = NormalTape::open(&path).unwrap();
    let meta = &tape.header.meta.tree;
    assert_eq!(
        meta.get("meta/closest-airport-id")
            .and_then(|n| n.string_value()),
        Some("LFLG")
    );
    let duration = meta.get("meta/tape-duration").unwrap();
    assert_eq!(duration.string_value(), Some("606.7833333"));
    // Spec §4.2: long 4.7–10.6 s, medium 11.9–551.5 s, short 551.5–611.5 s.
    let ranges = [(551.5, 611.5), (11.9, 551.5), (4.7, 10.6)];
    for (data, (lo, hi)) in tape.raw_data.iter().zip(ranges) {
        let first = data.frames.first().unwrap().time;
        let last = data.frames.last().unwrap().time;
        assert!((first - lo).abs() < 0.06, "{first} vs {lo}");
        assert!((last - hi).abs() < 0.06, "{last} vs {hi}");
    }
    // Decoded values are plausible: LFLG (Grenoble-Le Versoud) is near 5.85 E, 45.22 N.
    let layout = &tape.header.signals;
    assert_eq!(layout.signals()[0].name(), "/position/longitude-deg");
    assert_eq!(layout.signals()[1].name(), "/position/latitude-deg");
    let first = tape.frames_in_time_order().next().unwrap();
    let values = layout.decode(&first.signals).unwrap();
    let SignalValue::Double(lon) = values[0] else {
        panic!("{:?}", values[0])
    };
    let SignalValue::Double(lat) = values[1] else {
        panic!("{:?}", values[1])
    };
    assert!(
        (lon - 5.85).abs() < 0.2 && (lat - 45.22).abs() < 0.2,
        "{lon} {lat}"
    );
    assert!(matches!(values.last(), Some(SignalValue::Bool(_))));
}

#[test]
fn c172p_values_and_multiplayer() {
    let Some(path) = sample(SAMPLES[1]) else {
        return;
    };
    let tape = NormalTape::open(&path).unwrap();
    let meta = &tape.header.meta.tree;
    assert_eq!(
        meta.get("meta/user-data/description")
            .and_then(|n| n.string_value()),
        Some("research-sample")
    );
    assert_eq!(
        meta.get("meta/user-data/author-name")
            .and_then(|n| n.string_value()),
        Some("fgtape-research")
    );
    assert_eq!(
        meta.get("meta/multiplayer").and_then(|n| n.bool_value()),
        Some(true)
    );
    let frames: Vec<_> = tape.frames_in_time_order().collect();
    assert_eq!(frames[0].time, 1.0);
    let layout = &tape.header.signals;
    let values = layout.decode(&frames[0].signals).unwrap();
    // KSFO is near 122.4 W, 37.6 N.
    let (lon, lat) = (values[0].as_f64(), values[1].as_f64());
    assert!(
        (lon + 122.4).abs() < 0.5 && (lat - 37.6).abs() < 0.5,
        "{lon} {lat}"
    );
    let active = layout
        .signals()
        .iter()
        .position(|s| s.property == "/controls[0]/engines[0]/active-engine[0]")
        .unwrap();
    assert_eq!(layout.signals()[active].ty, SignalType::Int);
    let mut packets = 0;
    for f in &frames {
        for p in &f.multiplayer {
            let h = MpHeader::parse(p).unwrap();
            assert!(h.has_magic());
            assert_eq!(h.version, 0x0001_0001);
            assert_eq!(h.msg_id, POS_DATA_ID);
            assert_eq!(h.msg_len as usize, p.len());
            assert_eq!(h.requested_range_nm, 100);
            assert_eq!(h.callsign(), "MPTEST");
            packets += 1;
        }
    }
    assert_eq!(packets, 398);
}

#[test]
fn layout_is_detected_without_hints() {
    for exp in &EXPECTED {
        let Some(bytes) = decompressed(exp.name) else {
            return;
        };
        let mut reader = Reader::new(&bytes[..]).unwrap();
        let header = reader.read_header().unwrap();
        let hint = header.layout_hint();
        // The hints agree with the structure where they exist...
        assert!(hint.is_none() || hint == Some(exp.layout), "{}", exp.name);
        reader.next_container().unwrap();
        let decision = reader.layout().unwrap();
        assert_eq!(decision.layout, exp.layout, "{}", exp.name);
        assert_eq!(decision.decided_by, DecidedBy::Structure { container: 0 });

        // ...and removing every hint (multiplayer flag, version) changes nothing.
        let tape = NormalTape::read(&bytes[..]).unwrap();
        let mut meta = tape.header.meta.tree.clone();
        let m = meta.root.child_mut("meta", 0).unwrap();
        m.children
            .retain(|c| c.name != "multiplayer" && c.name != "version");
        let mut stripped = tape.clone();
        stripped.header.meta = recfmt_fgtape::normal::XmlContainer::from_tree(meta);
        stripped.header.multiplayer = tape.header.multiplayer;
        if exp.multiplayer == MpEncoding::None {
            stripped.header = recfmt_fgtape::normal::Header::from_parts(
                stripped.header.magic.clone(),
                stripped.header.meta.clone(),
                stripped.header.config.clone(),
                &Default::default(),
                recfmt_fgtape::Offset::File(0),
            )
            .unwrap();
            assert_eq!(stripped.header.layout_hint(), None);
            let bytes = stripped.to_decompressed_bytes().unwrap();
            let again = NormalTape::read(&bytes[..]).unwrap();
            assert_eq!(again.layout, exp.layout, "{} without hints", exp.name);
        }
    }
}

#[test]
fn decompressed_round_trip_is_byte_identical() {
    for name in SAMPLES {
        let Some(bytes) = decompressed(name) else {
            return;
        };
        let tape = NormalTape::read(&bytes[..]).unwrap();
        let written = tape.to_decompressed_bytes().unwrap();
        assert_eq!(written.len(), bytes.len(), "{name}");
        assert!(written == bytes, "{name}: round trip differs");
        // Through gzip too: the compressed form differs, the content does not.
        let gz = tape.write_gzip(Vec::new()).unwrap();
        assert_eq!(&gz[..2], &[0x1f, 0x8b]);
        let again = NormalTape::read(&gz[..]).unwrap();
        assert_eq!(again, tape, "{name}");
    }
}

#[test]
fn property_lists_write_back_as_simgear_wrote_them() {
    for name in SAMPLES {
        let Some(bytes) = decompressed(name) else {
            return;
        };
        let tape = NormalTape::read(&bytes[..]).unwrap();
        for c in [&tape.header.meta, &tape.header.config] {
            let text = c.text();
            assert_eq!(c.tree.to_xml(), text, "{name}");
            assert_eq!(PropertyList::parse(text).unwrap(), c.tree);
        }
    }
}

#[test]
fn streaming_reader_matches_whole_tape() {
    let Some(path) = sample(SAMPLES[1]) else {
        return;
    };
    let tape = NormalTape::open(&path).unwrap();
    let mut reader = Reader::open(&path).unwrap();
    reader.read_header().unwrap();
    let mut frame = Default::default();
    let mut i = 0;
    let all: Vec<_> = tape.raw_data.iter().flat_map(|c| c.frames.iter()).collect();
    while let Some(h) = reader.next_container().unwrap() {
        assert_eq!(h.frames as usize, tape.raw_data[h.index].frames.len());
        while reader.read_frame(&mut frame).unwrap() {
            assert_eq!(&frame, all[i]);
            i += 1;
        }
    }
    assert_eq!(i, all.len());
    assert!(reader.warnings().is_empty(), "{:?}", reader.warnings());
    assert!(reader.compressed_position() > 0);
}
