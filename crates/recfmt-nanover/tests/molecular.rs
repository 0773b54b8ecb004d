//! Molecular files from generated recordings: session splits, a topology change inside a
//! session, sessions without positions, refusals, and the files' own layout.

#![allow(clippy::unwrap_used)]

use recfmt_core::{Limits, Replace};
use recfmt_nanover::molecular::{MolecularFormat, write_molecular};
use recfmt_nanover::{FrameData, GetFrameResponse, ValueArray, generate};

fn write(frames: &[(u128, GetFrameResponse)], dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("rec.traj");
    let bytes = generate::write_traj(Vec::new(), frames).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

fn positions_frame(index: u32, particles: usize) -> GetFrameResponse {
    let mut f = FrameData::default();
    let values = (0..3 * particles).map(|k| k as f32 * 0.125).collect();
    f.arrays
        .insert("particle.positions".into(), ValueArray::floats(values));
    GetFrameResponse::new(index, f)
}

#[test]
fn a_particle_count_change_inside_a_session_ends_its_frames_with_a_note() {
    let (mut frames, _) = generate::small_recording();
    // Session 0 is frames 0..4 (3 particles); a 5-particle frame without a reset at index 2.
    let t = (frames[1].0 + frames[2].0) / 2;
    frames.insert(2, (t, positions_frame(77, 5)));
    let dir = tempfile::tempdir().unwrap();
    let input = write(&frames, dir.path());
    let out = dir.path().join("out");
    let summary = write_molecular(
        &input,
        &out,
        MolecularFormat::Xyz,
        &Limits::default(),
        Replace::Never,
    )
    .unwrap();
    assert!(summary.folder);
    assert_eq!(summary.files.len(), 2);
    let first = &summary.files[0];
    assert_eq!((first.session, first.particles), (0, 3));
    // Frames 0 and 1 are written; the 5-particle frame and the two after it are not.
    assert_eq!((first.frames, first.dropped_frames), (2, 3));
    assert!(summary.notes.iter().any(|n| n.contains("left out")));
    let text = std::fs::read_to_string(out.join("session_0.xyz")).unwrap();
    assert_eq!(text.lines().filter(|l| *l == "3").count(), 2);
    assert_eq!(summary.files[1].particles, 4);
}

#[test]
fn a_session_without_positions_writes_no_file_and_one_session_writes_a_file() {
    let mut frames = vec![(10, GetFrameResponse::new(0, FrameData::default()))];
    frames.push((20, GetFrameResponse::new(1, FrameData::default())));
    frames.push((30, positions_frame(0, 2)));
    frames.push((40, positions_frame(1, 2)));
    let dir = tempfile::tempdir().unwrap();
    let input = write(&frames, dir.path());
    let out = dir.path().join("one.dcd");
    let summary = write_molecular(
        &input,
        &out,
        MolecularFormat::Dcd,
        &Limits::default(),
        Replace::Never,
    )
    .unwrap();
    assert!(!summary.folder);
    assert_eq!(summary.files.len(), 1);
    assert_eq!((summary.files[0].session, summary.files[0].frames), (1, 2));
    assert!(
        summary
            .notes
            .iter()
            .any(|n| n.contains("without positions"))
    );
    let dcd = std::fs::read(&out).unwrap();
    // Header (84 + 8) + titles (4 + 160 + 8) + atom count (4 + 8), then per frame the
    // unit cell (48 + 8) and three axes of 2 f32 (8 + 8 each).
    assert_eq!(dcd.len(), 92 + 172 + 12 + 2 * (56 + 3 * 16));
    assert_eq!(&dcd[4..8], b"CORD");
    assert_eq!(i32::from_le_bytes(dcd[8..12].try_into().unwrap()), 2);
    // The second frame's x of particle 1: 3 * 0.125 nm = 3.75 Å.
    let second_frame = 92 + 172 + 12 + (56 + 3 * 16);
    let x = second_frame + 56 + 4 + 4;
    assert_eq!(f32::from_le_bytes(dcd[x..x + 4].try_into().unwrap()), 3.75);
}

#[test]
fn no_positions_at_all_is_refused_and_nothing_is_written() {
    let frames = vec![(10, GetFrameResponse::new(0, FrameData::default()))];
    let dir = tempfile::tempdir().unwrap();
    let input = write(&frames, dir.path());
    let out = dir.path().join("none.pdb");
    let err = write_molecular(
        &input,
        &out,
        MolecularFormat::Pdb,
        &Limits::default(),
        Replace::Never,
    )
    .unwrap_err();
    assert_eq!(err.kind(), recfmt_core::ErrorKind::Invalid);
    assert!(
        err.to_string()
            .contains("no session has particle positions")
    );
    assert!(!out.exists());
}

#[test]
fn a_torn_trajectory_keeps_its_complete_frames_and_reports_the_loss() {
    let (frames, _) = generate::small_recording();
    let dir = tempfile::tempdir().unwrap();
    let input = write(&frames, dir.path());
    let bytes = std::fs::read(&input).unwrap();
    std::fs::write(&input, &bytes[..bytes.len() - 5]).unwrap();
    let out = dir.path().join("torn");
    let summary = write_molecular(
        &input,
        &out,
        MolecularFormat::Pdb,
        &Limits::default(),
        Replace::Never,
    )
    .unwrap();
    assert!(summary.integrity.lost_data());
    let pdb = std::fs::read_to_string(out.join("session_1.pdb")).unwrap();
    assert!(pdb.ends_with("END\n"));
    assert_eq!(
        pdb.lines().filter(|l| l.starts_with("MODEL")).count() as u64,
        summary.files[1].frames
    );
}
