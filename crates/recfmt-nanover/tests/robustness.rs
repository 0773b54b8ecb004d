//! Truncated and bit-flipped copies never panic; a truncated file keeps every complete record
//! and reports the lost bytes; garbage is skipped with resync; repair always yields a valid
//! file.

#![allow(clippy::unwrap_used)]

mod common;

use common::Rng;
use recfmt_core::{FrameBuf, IntegrityStatus, ReadOptions, RecordingReader};
use recfmt_nanover::io::{Reader, Record, Timed};
use recfmt_nanover::{
    CheckOptions, FileKind, FindingKind, NanoverRecording, NanoverVerdict, check_reader, generate,
    repair_stream,
};

/// Offsets where records end (header end first).
fn record_ends(bytes: &[u8], kind: FileKind) -> Vec<usize> {
    let mut r = Reader::new(bytes, kind);
    let mut ends = vec![16];
    let mut rec = Record::default();
    while r.read_record(&mut rec).unwrap() {
        ends.push(r.position() as usize);
    }
    assert_eq!(*ends.last().unwrap(), bytes.len());
    ends
}

fn read_truncated(
    bytes: &[u8],
    kind: FileKind,
    known_len: bool,
) -> (usize, recfmt_core::Integrity) {
    read_with(bytes, kind, known_len, false)
}

fn read_with(
    bytes: &[u8],
    kind: FileKind,
    known_len: bool,
    resync: bool,
) -> (usize, recfmt_core::Integrity) {
    let mut r = Reader::new(bytes, kind);
    r.set_resync(resync);
    if known_len {
        r.set_total_len(Some(bytes.len() as u64));
    }
    let mut n = 0;
    let mut rec = Record::default();
    while r.read_record(&mut rec).unwrap() {
        n += 1;
    }
    (n, r.integrity().clone())
}

fn assert_truncation(bytes: &[u8], kind: FileKind, cuts: impl Iterator<Item = usize>) -> usize {
    let ends = record_ends(bytes, kind);
    let mut tried = 0;
    for cut in cuts {
        let cut_bytes = &bytes[..cut];
        let complete = ends.iter().filter(|&&e| e <= cut).count() - 1;
        let lost = (cut - ends[complete]) as u64;
        for (known, resync) in [(false, false), (true, false), (true, true), (false, true)] {
            let (n, integrity) = read_with(cut_bytes, kind, known, resync);
            assert_eq!(n, complete, "cut at {cut}");
            assert_eq!(integrity.bytes_lost, lost, "cut at {cut}");
            if lost > 0 {
                assert_eq!(integrity.status, IntegrityStatus::Truncated, "cut at {cut}");
                assert_eq!(integrity.truncated_at, Some(ends[complete] as u64));
            } else {
                assert!(!integrity.lost_data());
            }
        }
        tried += 1;
    }
    tried
}

#[test]
fn truncation_at_every_byte_of_a_generated_recording() {
    let (traj, state) = generate::small_recording_bytes().unwrap();
    assert_truncation(&traj, FileKind::Trajectory, 16..=traj.len());
    assert_truncation(&state, FileKind::State, 16..=state.len());
}

#[test]
fn truncated_samples_keep_every_complete_record() {
    let mut rng = Rng(0x5eed);
    for path in common::sample_files() {
        let kind = FileKind::from_path(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let ends = record_ends(&bytes, kind);
        // Around several record boundaries, plus random cuts.
        let mut cuts = Vec::new();
        for &e in ends.iter().step_by((ends.len() / 4).max(1)) {
            for d in [0usize, 1, 5, 23, 24, 25, 40] {
                if e + d <= bytes.len() {
                    cuts.push(e + d);
                }
                if e >= 16 + d {
                    cuts.push(e - d);
                }
            }
        }
        for _ in 0..8 {
            cuts.push(16 + rng.below((bytes.len() - 16) as u64) as usize);
        }
        cuts.retain(|&c| c >= 16);
        let n = assert_truncation(&bytes, kind, cuts.into_iter());
        eprintln!("{}: {n} cuts checked", path.display());
    }
}

fn drain_adapter(traj: &[u8], state: &[u8], options: &ReadOptions) -> u64 {
    let Ok(mut rec) = NanoverRecording::from_bytes(Some(traj), Some(state), options) else {
        return 0;
    };
    let mut row = FrameBuf::default();
    let mut rows = 0;
    while let Ok(true) = rec.read_frame(&mut row) {
        rows += 1;
    }
    let _ = rec.integrity();
    rows
}

fn exercise(bytes: &[u8], kind: FileKind, other: &[u8]) {
    // Plain, resync and strict reading: errors are fine, panics are not.
    for (resync, strict) in [(false, false), (true, false), (false, true)] {
        let mut r = Reader::new(bytes, kind);
        r.set_total_len(Some(bytes.len() as u64));
        r.set_resync(resync);
        r.set_strict(strict);
        loop {
            let next = match kind {
                FileKind::Trajectory => r.read_frame(&mut Timed::default()),
                FileKind::State => r.read_state(&mut Timed::default()),
            };
            if !matches!(next, Ok(true)) {
                break;
            }
        }
    }
    let report = check_reader(
        bytes,
        kind,
        Some(bytes.len() as u64),
        &CheckOptions::default(),
    );
    let _ = report.to_string();
    if let Ok((fixed, summary)) = repair_stream(
        bytes,
        kind,
        Some(bytes.len() as u64),
        Vec::new(),
        &CheckOptions::default(),
    ) {
        let again = check_reader(
            &fixed[..],
            kind,
            Some(fixed.len() as u64),
            &CheckOptions::default(),
        );
        assert!(
            again.is_valid(),
            "repair output not valid: {again}\n{summary:?}"
        );
        assert_eq!(again.records, summary.records_written);
        assert_eq!(again.decoded, summary.records_written);
    }
    for resync in [false, true] {
        let options = ReadOptions {
            resync,
            ..ReadOptions::default()
        };
        match kind {
            FileKind::Trajectory => drain_adapter(bytes, other, &options),
            FileKind::State => drain_adapter(other, bytes, &options),
        };
    }
}

#[test]
fn bit_flipped_copies_never_panic_and_repair_to_valid_files() {
    let (traj, state) = generate::small_recording_bytes().unwrap();
    let mut inputs = vec![(traj.clone(), FileKind::Trajectory, state.clone())];
    inputs.push((state.clone(), FileKind::State, traj.clone()));
    if let Some(dir) = common::samples_dir() {
        let d = dir.join("server-py");
        let t = std::fs::read(d.join("hello_vel_force.traj")).unwrap();
        let s = std::fs::read(d.join("17-ala-recording-multiple.state")).unwrap();
        inputs.push((t, FileKind::Trajectory, s));
    }
    let mut rng = Rng(42);
    for (bytes, kind, other) in &inputs {
        for round in 0..40 {
            let mut copy = bytes.clone();
            let flips = 1 + rng.below(if round % 4 == 0 { 40 } else { 3 });
            for _ in 0..flips {
                let at = rng.below(copy.len() as u64) as usize;
                copy[at] ^= 1 << rng.below(8);
            }
            exercise(&copy, *kind, other);
        }
        // Shuffled chunks and random garbage inserted.
        for _ in 0..10 {
            let mut copy = bytes.clone();
            let at = rng.below(copy.len() as u64) as usize;
            let len = 1 + rng.below(64) as usize;
            let garbage: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            copy.splice(at..at, garbage);
            exercise(&copy, *kind, other);
        }
    }
}

#[test]
fn garbage_between_records_is_skipped_with_resync_and_flagged_like_nanover() {
    let (traj, _) = generate::small_recording_bytes().unwrap();
    let ends = record_ends(&traj, FileKind::Trajectory);
    let at = ends[3];
    let mut copy = traj.clone();
    copy.splice(at..at, [0xAB; 50]);

    // Without resync: everything after the garbage is lost, and reported.
    let (n, integrity) = read_truncated(&copy, FileKind::Trajectory, true);
    assert_eq!(n, 3);
    assert_eq!(integrity.bytes_lost, (copy.len() - at) as u64);

    // With resync: only the garbage is lost.
    let mut r = Reader::new(&copy[..], FileKind::Trajectory);
    r.set_total_len(Some(copy.len() as u64));
    r.set_resync(true);
    let mut frames = 0;
    for frame in r.frames() {
        frame.unwrap();
        frames += 1;
    }
    assert_eq!(frames, 7);
    assert_eq!(r.integrity().bytes_lost, 50);
    assert_eq!(r.integrity().status, IntegrityStatus::Corrupt);

    let report = check_reader(
        &copy[..],
        FileKind::Trajectory,
        Some(copy.len() as u64),
        &CheckOptions::default(),
    );
    let garbage: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::Garbage)
        .collect();
    assert_eq!(garbage.len(), 1);
    assert_eq!(garbage[0].bytes, 50);
    assert_eq!(garbage[0].offset, Some(at as u64));
    assert_eq!(garbage[0].nanover, NanoverVerdict::Flags);
    assert!(report.to_string().contains("DEFECTIVE BLOCK (50) between"));

    // Garbage at the end: NanoVer's checker crashes there.
    let mut copy = traj.clone();
    copy.extend_from_slice(&[0xCD; 30]);
    let report = check_reader(
        &copy[..],
        FileKind::Trajectory,
        Some(copy.len() as u64),
        &CheckOptions::default(),
    );
    let f: Vec<_> = report.missed_by_nanover().collect();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].nanover, NanoverVerdict::Crashes);
    assert_eq!(f[0].bytes, 30);

    // A payload short by fewer than 24 bytes: NanoVer's checker misses it; 24 or more: crashes.
    for (short, verdict) in [
        (1, NanoverVerdict::Misses),
        (23, NanoverVerdict::Misses),
        (24, NanoverVerdict::Crashes),
    ] {
        let cut = &traj[..traj.len() - short];
        let report = check_reader(
            cut,
            FileKind::Trajectory,
            Some(cut.len() as u64),
            &CheckOptions::default(),
        );
        let defects: Vec<_> = report
            .findings
            .iter()
            .filter(|f| f.kind == FindingKind::PayloadPastEnd)
            .collect();
        assert_eq!(defects.len(), 1, "short by {short}");
        assert_eq!(defects[0].nanover, verdict, "short by {short}");
    }
}

#[test]
fn the_adapter_reports_what_validate_needs() {
    let (traj, state) = generate::small_recording_bytes().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ends = record_ends(&traj, FileKind::Trajectory);
    // Torn in the middle of the last record.
    let cut = ends[ends.len() - 2] + 30;
    std::fs::write(dir.path().join("a.traj"), &traj[..cut]).unwrap();
    std::fs::write(dir.path().join("a.state"), &state).unwrap();
    let mut rec =
        (recfmt_nanover::FORMAT.open)(&dir.path().join("a.traj"), &ReadOptions::default()).unwrap();
    let mut row = FrameBuf::default();
    let mut frames = 0;
    while rec.read_frame(&mut row).unwrap() {
        frames += usize::from(row.stream == 0);
    }
    assert_eq!(frames, 6);
    let i = rec.integrity();
    assert_eq!(i.status, IntegrityStatus::Truncated);
    assert_eq!(i.bytes_lost, 30);
    assert_eq!(i.truncated_at, Some(ends[ends.len() - 2] as u64));
    assert!(i.warnings.iter().any(|w| w.starts_with("a.traj: at byte")));

    // Strict mode makes it an error instead.
    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    let mut rec = (recfmt_nanover::FORMAT.open)(&dir.path().join("a.traj"), &strict).unwrap();
    let mut result = Ok(true);
    while matches!(result, Ok(true)) {
        result = rec.read_frame(&mut row);
    }
    assert!(result.is_err());
}
