//! The recfmt adapter over the real logs and over damaged copies.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;

use recfmt_carla::{CarlaRecording, FORMAT, Flavour, STREAM_NAMES};
use recfmt_core::{FrameBuf, IntegrityStatus, ReadOptions, RecordingReader, Score, Value};

fn rows_per_stream(rec: &mut dyn RecordingReader) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    let mut row = FrameBuf::default();
    let names: Vec<String> = rec
        .schema()
        .streams
        .iter()
        .map(|s| s.name.clone())
        .collect();
    let mut last_time = f64::NEG_INFINITY;
    while rec.read_frame(&mut row).unwrap() {
        let desc = &rec.schema().streams[row.stream];
        assert_eq!(row.values.len(), desc.signals.len(), "{}", desc.name);
        let t = row.time_seconds(desc).unwrap();
        assert!(t >= last_time, "time goes back in {}", desc.name);
        last_time = t;
        assert!(matches!(row.values[1], Value::UInt(_)));
        if let Some(e) = desc.entity {
            assert!(
                row.values[e].as_i64().is_some(),
                "{}: entity {:?}",
                desc.name,
                row.values[e]
            );
        }
        *counts.entry(names[row.stream].clone()).or_insert(0) += 1;
    }
    counts
}

#[test]
fn samples_through_the_adapter() {
    for path in common::sample_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let head = std::fs::read(&path).unwrap();
        assert_eq!((FORMAT.score)(&head[..4096]), Score::Yes(255));

        let mut rec = (FORMAT.open)(&path, &ReadOptions::default()).unwrap();
        assert_eq!(rec.format().id, "carla");
        assert_eq!(rec.header().version, "1");
        assert_eq!(rec.header().metadata["map"], "Town01");
        let names: Vec<&str> = rec
            .schema()
            .streams
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(names, STREAM_NAMES);
        let counts = rows_per_stream(&mut *rec);
        assert_eq!(
            rec.integrity().status,
            IntegrityStatus::Complete,
            "{:?}",
            rec.integrity()
        );
        assert!(rec.integrity().warnings.is_empty());
        let (done, total) = rec.progress();
        assert_eq!(Some(done), total);

        let expected: BTreeMap<&str, usize> = match name.as_str() {
            "sr_0910_DistanceBetweenVehicles.log" => [
                ("frame", 1232),
                ("position", 2460),
                ("event_add", 181),
                ("physics_control", 2),
            ]
            .into(),
            "sr_0910_DistanceToLaneCenter.log" => [
                ("frame", 461),
                ("position", 460),
                ("event_add", 183),
                ("physics_control", 1),
            ]
            .into(),
            "sr_0913_DistanceBetweenVehicles.log" => [
                ("frame", 847),
                ("position", 99939),
                ("event_add", 181),
                ("physics_control", 2),
            ]
            .into(),
            _ => [
                ("frame", 432),
                ("position", 51836),
                ("event_add", 183),
                ("physics_control", 1),
            ]
            .into(),
        };
        for (stream, n) in expected {
            assert_eq!(
                counts.get(stream).copied().unwrap_or(0),
                n,
                "{name}: {stream}"
            );
        }
        println!("{name}: rows {counts:?}");
    }
}

#[test]
fn truncated_sample_is_reported_by_the_adapter() {
    let files = common::sample_files();
    let Some(path) = files.first() else { return };
    let bytes = std::fs::read(path).unwrap();
    let cut = &bytes[..bytes.len() - 1001];
    let mut rec = CarlaRecording::new(cut, &ReadOptions::default(), None).unwrap();
    let counts = rows_per_stream(&mut rec);
    let integrity = rec.integrity().clone();
    assert_eq!(integrity.status, IntegrityStatus::Truncated);
    let at = integrity.truncated_at.unwrap();
    assert!(
        at < cut.len() as u64 && at + integrity.bytes_lost == cut.len() as u64,
        "{integrity:?}"
    );
    assert!(counts["frame"] > 0);

    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    let mut rec = CarlaRecording::new(cut, &strict, None).unwrap();
    let mut row = FrameBuf::default();
    let err = loop {
        match rec.read_frame(&mut row) {
            Ok(true) => {}
            Ok(false) => panic!("strict read of a truncated file succeeded"),
            Err(e) => break e,
        }
    };
    // A torn tail is Truncated (it was Malformed, the kind lost on the way into core), and
    // its offset is said once.
    assert_eq!(err.kind(), recfmt_core::ErrorKind::Truncated);
    let text = err.to_string();
    assert!(text.contains(&format!("at byte {at}")), "{err}");
    assert_eq!(text.matches("at byte").count(), 1, "{err}");
}

#[test]
fn corrupt_packet_is_skipped_in_lenient_mode() {
    let files = common::sample_files();
    let Some(path) = files.first() else { return };
    let mut bytes = std::fs::read(path).unwrap();
    // Break the first Collision packet body's count (frame 1) so its size no longer fits.
    let index = recfmt_carla::index_frames(&bytes[..], &recfmt_core::Limits::default()).unwrap();
    let mut r = recfmt_carla::Reader::new(&bytes[..]);
    r.read_header().unwrap();
    let mut raw = recfmt_carla::RawPacket::default();
    let mut target = None;
    while r.read_raw_packet(&mut raw).unwrap() {
        if raw.id == 5 && raw.offset > index.frames[1].offset {
            target = Some(raw.offset as usize);
            break;
        }
    }
    let at = target.unwrap();
    bytes[at + 5] = 7; // count 7 in a 2-byte body
    let mut rec = CarlaRecording::new(
        &bytes[..],
        &ReadOptions::default(),
        Some(Flavour::Carla0910),
    )
    .unwrap();
    let counts = rows_per_stream(&mut rec);
    let integrity = rec.integrity();
    assert_eq!(integrity.status, IntegrityStatus::Corrupt);
    assert_eq!(integrity.records_skipped, 1);
    assert_eq!(integrity.bytes_lost, 7);
    assert!(
        integrity.warnings[0].contains(&format!("at byte {at}")),
        "{:?}",
        integrity.warnings
    );
    assert_eq!(counts["frame"], index.frames.len());
}
