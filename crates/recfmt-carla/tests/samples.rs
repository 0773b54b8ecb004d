//! The four real CARLA logs: byte-exact round trip, size checks, frame index, flavours.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;

use recfmt_carla::{Flavour, Packet, Reader, Writer, index_frames};
use recfmt_core::Limits;

#[test]
fn samples_round_trip_byte_identical() {
    for path in common::sample_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let original = std::fs::read(&path).unwrap();
        if let Some(listed) = common::listed_sha256(&name) {
            assert_eq!(
                common::sha256_hex(&original),
                listed,
                "{name}: sample differs from SOURCES.txt"
            );
        }

        let mut reader = Reader::new(BufReader::new(File::open(&path).unwrap()));
        let header = reader.read_header().unwrap();
        assert_eq!(header.version, 1);
        assert_eq!(header.map, "Town01");
        let mut packet = Packet::default();
        let mut more = reader.read_packet(&mut packet).unwrap();
        let flavour = reader.flavour().unwrap();
        let mut writer = Writer::new(Vec::with_capacity(original.len()), flavour);
        writer.write_header(&header).unwrap();
        let mut counts: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
        let mut packets = 0;
        let mut frames = Vec::new();
        while more {
            let offset = reader.last_packet_offset();
            assert_eq!(writer.position(), offset, "{name}: offsets diverge");
            let written = writer.write_packet(&packet).unwrap();
            assert_eq!(
                written as u64,
                reader.last_packet_len(),
                "{name}: packet at {offset} changed size"
            );
            let e = counts.entry(packet.name()).or_default();
            e.0 += 1;
            e.1 += packet.record_count();
            packets += 1;
            if let Packet::FrameStart(f) = &packet {
                frames.push(*f);
            }
            assert!(
                !matches!(packet, Packet::Unknown { .. } | Packet::User { .. }),
                "{name}: unexpected raw packet at {offset}"
            );
            more = reader.read_packet(&mut packet).unwrap();
        }
        let out = writer.into_inner().unwrap();
        assert_eq!(out.len(), original.len(), "{name}: length differs");
        assert!(out == original, "{name}: bytes differ");
        assert_eq!(common::sha256_hex(&out), common::sha256_hex(&original));

        let expected_flavour = if name.contains("0910") {
            Flavour::Carla0910
        } else {
            Flavour::Carla0912
        };
        assert_eq!(flavour, expected_flavour, "{name}: flavour");

        // Frame chain: ids 1.., elapsed 0 at frame 1, elapsed[k] + duration[k] == elapsed[k+1],
        // last duration -1.
        assert_eq!(frames[0].id, 1);
        assert_eq!(frames[0].elapsed, 0.0);
        for (k, w) in frames.windows(2).enumerate() {
            assert_eq!(w[1].id, w[0].id + 1, "{name}: frame {k}");
            assert!(
                (w[0].elapsed + w[0].duration_this - w[1].elapsed).abs() < 1e-9,
                "{name}: frame {k} chain"
            );
        }
        assert_eq!(frames.last().unwrap().duration_this, -1.0);

        println!(
            "{name}: flavour {flavour}, {packets} packets, {} frames, {:.3} s, round trip identical ({} bytes, sha256 {})",
            frames.len(),
            frames.last().unwrap().elapsed,
            out.len(),
            common::sha256_hex(&out)
        );
        println!("  packets (records): {counts:?}");
    }
}

#[test]
fn frame_index_matches_simple_walk() {
    for path in common::sample_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let (walk_frames, walk_packets, walk_end) = common::simple_walk(&bytes);
        assert_eq!(walk_end, bytes.len(), "{name}: walk did not end at EOF");

        let index = index_frames(
            BufReader::new(File::open(&path).unwrap()),
            &Limits::default(),
        )
        .unwrap();
        assert!(index.error.is_none(), "{name}: {:?}", index.error);
        assert_eq!(index.frames.len(), walk_frames, "{name}: frames");
        assert_eq!(index.packets as usize, walk_packets, "{name}: packets");
        assert_eq!(index.end, bytes.len() as u64);
        for (k, f) in index.frames.iter().enumerate() {
            assert_eq!(f.id, k as u64 + 1);
            assert_eq!(bytes[f.offset as usize], 0, "{name}: frame {k} offset");
            let end = f.end.expect("complete frame") as usize;
            assert_eq!(
                &bytes[end - 5..end],
                &[1, 0, 0, 0, 0],
                "{name}: frame {k} end"
            );
        }
        assert_eq!(index.frames.last().unwrap().end, Some(bytes.len() as u64));
        println!(
            "{name}: {} frames (simple walk {walk_frames}), {} packets, last elapsed {:.3} s",
            index.frames.len(),
            index.packets,
            index.frames.last().unwrap().elapsed
        );
    }
}

#[test]
fn position_counts_per_frame() {
    for path in common::sample_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut reader = Reader::new(BufReader::new(File::open(&path).unwrap()));
        reader.read_header().unwrap();
        let mut packet = Packet::default();
        let mut histogram: BTreeMap<usize, usize> = BTreeMap::new();
        let mut first_event_add = None;
        while reader.read_packet(&mut packet).unwrap() {
            match &packet {
                Packet::Position(v) => *histogram.entry(v.len()).or_default() += 1,
                Packet::EventAdd(v) if first_event_add.is_none() => first_event_add = Some(v.len()),
                _ => {}
            }
        }
        println!(
            "{name}: Position records per frame {histogram:?}, first EventAdd {first_event_add:?}"
        );
        if name == "sr_0913_DistanceBetweenVehicles.log" {
            assert!(histogram.contains_key(&118), "{name}: {histogram:?}");
        }
        if name == "sr_0913_DistanceToLaneCenter.log" {
            assert!(histogram.contains_key(&120), "{name}: {histogram:?}");
        }
    }
}

#[test]
fn forced_wrong_wheel_layout_fails_with_a_named_size_error() {
    for path in common::sample_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let wrong = if name.contains("0910") {
            Flavour::Carla0912
        } else {
            Flavour::Carla0910
        };
        let mut reader =
            Reader::new(BufReader::new(File::open(&path).unwrap())).with_flavour(Some(wrong));
        reader.read_header().unwrap();
        let mut errors = Vec::new();
        for e in reader.packets().filter_map(Result::err) {
            assert!(e.is_recoverable(), "{e}");
            errors.push(e.to_string());
        }
        assert_eq!(errors.len(), 1, "{name}: {errors:?}");
        assert!(
            errors[0].starts_with("physics_control packet (id 15) at byte "),
            "{}",
            errors[0]
        );
        println!("{name} forced to {wrong}: {}", errors[0]);
    }
}
