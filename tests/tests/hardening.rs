//! Regressions of the hardening review (issue 14): inputs that lost data must say so (exit 3),
//! and `validate` must exit non-zero on what it finds.

use std::path::{Path, PathBuf};
use std::process::Output;

use recfmt_tests::{recfmt, samples};
use serde_json::Value;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            stderr(out)
        )
    })
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Item 13: a CARLA log that ends inside a frame (no FrameEnd) is truncated.

/// A CARLA log of `frames` frames (FrameStart, one Position, FrameEnd each); with `cut`, the
/// last frame's FrameEnd packet is left out. Returns the path and the file length.
fn carla_log(dir: &Path, frames: u64, cut: bool) -> (PathBuf, u64) {
    use recfmt::carla::{Flavour, FrameStart, Header, Packet, Position, Vector3, Writer};
    let mut writer = Writer::new(Vec::new(), Flavour::Carla0912);
    writer
        .write_header(&Header::new("Town01", 1_637_676_528))
        .unwrap();
    for id in 1..=frames {
        writer
            .write_packet(&Packet::FrameStart(FrameStart {
                id,
                duration_this: 0.05,
                elapsed: 0.05 * id as f64,
            }))
            .unwrap();
        writer
            .write_packet(&Packet::Position(vec![Position {
                database_id: 24,
                location: Vector3::F32([id as f32, 2.0, 0.5]),
                rotation: Vector3::F32([0.0, 0.0, 90.0]),
            }]))
            .unwrap();
        if !(cut && id == frames) {
            writer.write_packet(&Packet::FrameEnd).unwrap();
        }
    }
    let bytes = writer.into_inner().unwrap();
    let path = dir.join(if cut { "cut.log" } else { "whole.log" });
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes.len() as u64)
}

#[test]
fn carla_log_ending_inside_a_frame_is_truncated_exit_3() {
    let work = tempfile::tempdir().unwrap();
    let (whole, _) = carla_log(work.path(), 4, false);
    let o = recfmt(&["validate", s(&whole)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let (cut, len) = carla_log(work.path(), 4, true);
    let o = recfmt(&["info", "--json", s(&cut)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let info = json_of(&o);
    assert_eq!(info["integrity"]["status"], "truncated");
    assert_eq!(info["integrity"]["truncated_at"], len);
    let warnings = info["integrity"]["warnings"].to_string();
    assert!(warnings.contains("inside frame 4"), "{warnings}");

    let o = recfmt(&["validate", s(&cut)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("truncated"), "{out}");

    // Every complete frame is still converted (and the last one's complete packets).
    let out_dir = work.path().join("csv");
    let o = recfmt(&["convert", s(&cut), "--to", "csv", "-o", s(&out_dir)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let positions = std::fs::read_to_string(out_dir.join("position.csv")).unwrap();
    assert_eq!(positions.lines().count(), 1 + 4, "{positions}");

    // Strict reading refuses it, naming the offset.
    let o = recfmt(&["--strict", "validate", s(&cut)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("at byte {len}")),
        "{}",
        stderr(&o)
    );
}

#[test]
fn carla_sample_cut_between_packets_of_a_frame_is_truncated() {
    let Some(sample) = samples("carla", "log").into_iter().next() else {
        return;
    };
    let bytes = std::fs::read(&sample).unwrap();
    // The end of the first Position packet after the 20th FrameStart: a packet boundary
    // inside a frame.
    let mut reader = recfmt::carla::Reader::new(&bytes[..]);
    reader.read_header().unwrap();
    let mut packet = recfmt::carla::Packet::default();
    let mut cut = None;
    while reader.read_packet(&mut packet).unwrap() > 0 {
        if let recfmt::carla::Packet::FrameStart(f) = &packet
            && f.id == 20
        {
            reader.read_packet(&mut packet).unwrap();
            cut = Some(reader.position() as usize);
            break;
        }
    }
    let cut = cut.expect("a 20th frame");
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("cut.log");
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let o = recfmt(&["validate", "--json", s(&path)]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let v = json_of(&o);
    assert_eq!(v["integrity"]["status"], "truncated");
    assert_eq!(v["valid"], false);
}
