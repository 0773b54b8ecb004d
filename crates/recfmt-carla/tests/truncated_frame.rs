//! A log that ends inside a frame (at a packet boundary, without the frame's FrameEnd packet)
//! was cut: every real log ends with a FrameEnd. The adapter keeps every complete packet and
//! reports the recording as truncated (an error when strict).

#![allow(clippy::unwrap_used)]

mod common;

use recfmt_carla::{
    CarlaRecording, Flavour, FrameStart, Header, Packet, Position, Vector3, Writer,
};
use recfmt_core::{FrameBuf, Integrity, IntegrityStatus, ReadOptions, RecordingReader, Value};

/// A log of `frames` frames, each FrameStart, one Position packet and FrameEnd; returns the
/// bytes and the offset where each packet ends.
fn log(frames: u64) -> (Vec<u8>, Vec<(usize, &'static str)>) {
    let mut writer = Writer::new(Vec::new(), Flavour::Carla0912);
    writer
        .write_header(&Header::new("Town01", 1_637_676_528))
        .unwrap();
    let mut ends = Vec::new();
    for id in 1..=frames {
        let packets = [
            Packet::FrameStart(FrameStart {
                id,
                duration_this: 0.05,
                elapsed: 0.05 * id as f64,
            }),
            Packet::Position(vec![Position {
                database_id: 24,
                location: Vector3::F32([id as f32, 2.0, 0.5]),
                rotation: Vector3::F32([0.0, 0.0, 90.0]),
            }]),
            Packet::FrameEnd,
        ];
        for p in &packets {
            writer.write_packet(p).unwrap();
            ends.push((writer.position() as usize, p.name()));
        }
    }
    (writer.into_inner().unwrap(), ends)
}

/// Reads every row: (stream name, frame id) per row, and the final integrity.
fn read_all(bytes: &[u8], strict: bool) -> recfmt_core::Result<(Vec<(String, u64)>, Integrity)> {
    let options = ReadOptions {
        strict,
        ..ReadOptions::default()
    };
    let mut rec = CarlaRecording::new(bytes, &options, None)?;
    let mut rows = Vec::new();
    let mut row = FrameBuf::default();
    while rec.read_frame(&mut row)? {
        let Value::UInt(frame) = row.values[1] else {
            panic!("frame id {:?}", row.values[1]);
        };
        rows.push((rec.schema().streams[row.stream].name.clone(), frame));
    }
    Ok((rows, rec.integrity().clone()))
}

#[test]
fn a_log_ending_with_frame_end_is_complete() {
    let (bytes, _) = log(3);
    let (rows, integrity) = read_all(&bytes, false).unwrap();
    assert_eq!(integrity.status, IntegrityStatus::Complete, "{integrity:?}");
    assert_eq!(
        rows.iter().filter(|(s, _)| s == "position").count(),
        3,
        "{rows:?}"
    );
    read_all(&bytes, true).unwrap();
}

#[test]
fn a_log_ending_inside_a_frame_is_truncated_and_keeps_every_packet() {
    let (bytes, ends) = log(3);
    // Cut after the third frame's Position packet: its FrameEnd is missing.
    let (cut, name) = ends[ends.len() - 2];
    assert_eq!(name, "position");
    let (rows, integrity) = read_all(&bytes[..cut], false).unwrap();
    assert_eq!(
        integrity.status,
        IntegrityStatus::Truncated,
        "{integrity:?}"
    );
    assert_eq!(integrity.truncated_at, Some(cut as u64));
    assert_eq!(integrity.bytes_lost, 0);
    let warning = integrity.warnings.join("\n");
    assert!(
        warning.contains("inside frame 3")
            && warning.contains(&format!("FrameEnd packet at byte {cut}")),
        "{warning}"
    );
    // The two complete frames, and the complete packets of the third.
    let frames: Vec<u64> = rows
        .iter()
        .filter(|(s, _)| s == "frame")
        .map(|r| r.1)
        .collect();
    assert_eq!(frames, [1, 2, 3]);
    let positions: Vec<u64> = rows
        .iter()
        .filter(|(s, _)| s == "position")
        .map(|r| r.1)
        .collect();
    assert_eq!(positions, [1, 2, 3]);

    // Cut right after the FrameStart: truncated too.
    let (cut, name) = ends[ends.len() - 3];
    assert_eq!(name, "frame_start");
    let (rows, integrity) = read_all(&bytes[..cut], false).unwrap();
    assert_eq!(
        integrity.status,
        IntegrityStatus::Truncated,
        "{integrity:?}"
    );
    assert_eq!(
        rows.iter().filter(|(s, _)| s == "position").count(),
        2,
        "{rows:?}"
    );
}

#[test]
fn strict_reading_of_a_log_ending_inside_a_frame_fails_at_the_end() {
    let (bytes, ends) = log(2);
    let (cut, _) = ends[ends.len() - 2];
    let err = read_all(&bytes[..cut], true).unwrap_err().to_string();
    assert!(
        err.contains(&format!("at byte {cut}")) && err.contains("FrameEnd packet ending frame 2"),
        "{err}"
    );
}

#[test]
fn sample_cut_at_every_packet_boundary_of_a_frame() {
    let Some(path) = common::sample_files().into_iter().next() else {
        return;
    };
    let bytes = std::fs::read(&path).unwrap();
    // Packet boundaries of the 10th frame: (end offset, packet is a FrameEnd).
    let mut reader = recfmt_carla::Reader::new(&bytes[..]);
    reader.read_header().unwrap();
    let mut packet = Packet::default();
    let mut boundaries = Vec::new();
    let mut frame = 0;
    while reader.read_packet(&mut packet).unwrap() {
        if let Packet::FrameStart(f) = &packet {
            frame = f.id;
        }
        if frame == 10 {
            boundaries.push((
                reader.position() as usize,
                matches!(packet, Packet::FrameEnd),
            ));
        }
        if frame > 10 {
            break;
        }
    }
    assert!(boundaries.len() > 3, "{boundaries:?}");
    for (cut, frame_end) in boundaries {
        let (rows, integrity) = read_all(&bytes[..cut], false).unwrap();
        let expected = if frame_end {
            IntegrityStatus::Complete
        } else {
            IntegrityStatus::Truncated
        };
        assert_eq!(integrity.status, expected, "cut at {cut}: {integrity:?}");
        let frames = rows.iter().filter(|(s, _)| s == "frame").count();
        assert_eq!(frames, 10, "cut at {cut}");
    }
}
