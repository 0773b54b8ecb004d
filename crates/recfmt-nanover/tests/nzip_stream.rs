//! `.nanover.zip` read as a stream (issue 14, items 4, 15 and 18): memory does not grow with
//! index entries, a zip cut short keeps every complete message and says what was lost, and
//! a zip converts to `.traj` + `.state` with the same rows.

#![cfg(feature = "nanover-zip")]
#![allow(clippy::unwrap_used)]

mod common;

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use recfmt_core::{FrameBuf, ReadOptions, RecordingReader};
use recfmt_nanover::NanoverRecording;
use recfmt_nanover::nzip::{ZipEvents, read_nanover_zip};

// ---------------------------------------------------------------------------------------------
// Building zips by hand: stored members, with the local-header variants NanoVer's and other
// writers use.

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// How a member's local header gives its size.
#[derive(Clone, Copy, PartialEq)]
enum Sizes {
    /// In the header's 32-bit fields.
    Plain,
    /// 0xFFFFFFFF in the header, the sizes in the zip64 extra field (as Python writes
    /// `messages.msgpack` when it may grow past 4 GiB).
    Zip64Extra,
    /// 0 in the header with flag bit 3; a signed data descriptor after the data.
    Descriptor,
}

/// A stored zip of `members` (each with its local-header style), with a central directory,
/// and the offset where each member's data starts.
fn stored_zip(members: &[(&str, &[u8], Sizes)]) -> (Vec<u8>, Vec<u64>) {
    let mut out = Vec::new();
    let mut central = Vec::new();
    let mut starts = Vec::new();
    for (name, data, sizes) in members {
        let offset = out.len() as u32;
        let crc = crc32(data);
        let len = data.len() as u32;
        let (flags, crc_field, size_field, extra): (u16, u32, u32, Vec<u8>) = match sizes {
            Sizes::Plain => (0, crc, len, Vec::new()),
            Sizes::Zip64Extra => {
                let mut e = vec![1, 0, 16, 0];
                e.extend_from_slice(&u64::from(len).to_le_bytes());
                e.extend_from_slice(&u64::from(len).to_le_bytes());
                (0, crc, u32::MAX, e)
            }
            Sizes::Descriptor => (8, 0, 0, Vec::new()),
        };
        out.extend_from_slice(b"PK\x03\x04");
        out.extend_from_slice(&45u16.to_le_bytes());
        out.extend_from_slice(&flags.to_le_bytes());
        out.extend_from_slice(&[0; 6]); // stored, time, date
        out.extend_from_slice(&crc_field.to_le_bytes());
        out.extend_from_slice(&size_field.to_le_bytes());
        out.extend_from_slice(&size_field.to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&extra);
        starts.push(out.len() as u64);
        out.extend_from_slice(data);
        if *sizes == Sizes::Descriptor {
            out.extend_from_slice(b"PK\x07\x08");
            out.extend_from_slice(&crc.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        central.extend_from_slice(b"PK\x01\x02");
        central.extend_from_slice(&45u16.to_le_bytes());
        central.extend_from_slice(&45u16.to_le_bytes());
        central.extend_from_slice(&flags.to_le_bytes());
        central.extend_from_slice(&[0; 6]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&len.to_le_bytes());
        central.extend_from_slice(&len.to_le_bytes());
        central.extend_from_slice(&(name.len() as u16).to_le_bytes());
        central.extend_from_slice(&[0; 12]); // extra, comment, disk, attributes
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(b"PK\x05\x06");
    out.extend_from_slice(&[0; 4]);
    let n = members.len() as u16;
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&[0; 2]);
    (out, starts)
}

fn mp_str(out: &mut Vec<u8>, s: &str) {
    assert!(s.len() < 32);
    out.push(0xa0 | s.len() as u8);
    out.extend_from_slice(s.as_bytes());
}

fn mp_u32(out: &mut Vec<u8>, v: u32) {
    out.push(0xce);
    out.extend_from_slice(&v.to_be_bytes());
}

/// A frame message `{frame: {frame.index: i, particle.positions: bin}}` of `particles`
/// particles.
fn frame_message(index: u32, particles: usize) -> Vec<u8> {
    let mut m = vec![0x81];
    mp_str(&mut m, "frame");
    m.push(0x82);
    mp_str(&mut m, "frame.index");
    mp_u32(&mut m, index);
    mp_str(&mut m, "particle.positions");
    let bytes: Vec<u8> = (0..particles * 3)
        .flat_map(|k| (k as f32 * 0.5 + index as f32).to_le_bytes())
        .collect();
    m.push(0xc6);
    m.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    m.extend_from_slice(&bytes);
    m
}

/// `index.msgpack`: one `{offset, length, metadata: {timestamp}}` per `(offset, length)`.
fn index_of(spans: &[(u64, u64)]) -> Vec<u8> {
    let mut m = vec![0xdd];
    m.extend_from_slice(&(spans.len() as u32).to_be_bytes());
    for (i, &(offset, length)) in spans.iter().enumerate() {
        m.push(0x83);
        mp_str(&mut m, "offset");
        mp_u32(&mut m, offset as u32);
        mp_str(&mut m, "length");
        mp_u32(&mut m, length as u32);
        mp_str(&mut m, "metadata");
        m.push(0x81);
        mp_str(&mut m, "timestamp");
        mp_u32(&mut m, 1000 * (i as u32 + 1));
    }
    m
}

/// `count` frame messages and the spans of each in `messages.msgpack`.
fn messages(count: u32, particles: usize) -> (Vec<u8>, Vec<(u64, u64)>) {
    let mut all = Vec::new();
    let mut spans = Vec::new();
    for i in 0..count {
        let m = frame_message(i + 1, particles);
        spans.push((all.len() as u64, m.len() as u64));
        all.extend_from_slice(&m);
    }
    (all, spans)
}

// ---------------------------------------------------------------------------------------------
// Item 4: memory does not grow with index entries.

/// Peak resident memory of this process so far, in KiB (Linux).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

const CHILD_ENV: &str = "RECFMT_NZIP_PEAK_ENTRIES";

/// A zip whose `entries` index entries all point at one message of `particles` particles:
/// the shape of `amp_index_20000.nanover.zip`.
fn amplified_zip(path: &Path, entries: usize, particles: usize) {
    let message = frame_message(1, particles);
    let spans = vec![(0, message.len() as u64); entries];
    let index = index_of(&spans);
    let (zip, _) = stored_zip(&[
        ("messages.msgpack", &message, Sizes::Zip64Extra),
        ("index.msgpack", &index, Sizes::Plain),
    ]);
    std::fs::write(path, zip).unwrap();
}

/// The child half of the test below: reads an amplified zip through the adapter (as `info`
/// and `convert` do) and prints its peak memory.
#[test]
fn peak_memory_child() {
    let Ok(entries) = std::env::var(CHILD_ENV) else {
        return;
    };
    let entries: usize = entries.parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("amp.nanover.zip");
    amplified_zip(&path, entries, 100_000);
    let mut rec = NanoverRecording::open(&path, &ReadOptions::default()).unwrap();
    let mut row = FrameBuf::default();
    let mut rows = 0;
    while rec.read_frame(&mut row).unwrap() {
        rows += 1;
    }
    assert_eq!(rows, entries);
    println!("PEAK_KIB={}", peak_rss_kib().unwrap());
}

fn child_peak_kib(entries: usize) -> u64 {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "peak_memory_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, entries.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .find_map(|l| l.split("PEAK_KIB=").nth(1)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no PEAK_KIB line in {stdout}"))
}

#[test]
fn memory_does_not_grow_with_index_entries_pointing_at_one_message() {
    if peak_rss_kib().is_none() {
        eprintln!("skipping: no /proc/self/status here");
        return;
    }
    // Decoding every entry into a kept frame costs 1.2 MB per entry (100,000 particles):
    // 150 entries would take about 180 MB more than 3. Streaming keeps one message at a time.
    let few = child_peak_kib(3);
    let many = child_peak_kib(150);
    eprintln!("peak RSS: {few} KiB with 3 entries, {many} KiB with 150");
    assert!(
        many < few + 32 * 1024,
        "peak memory grew from {few} KiB (3 entries) to {many} KiB (150 entries)"
    );
}

#[test]
fn the_reader_keeps_a_small_record_per_entry_not_a_frame() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("amp.nanover.zip");
    amplified_zip(&path, 2_000, 5_000);
    let mut events = ZipEvents::open(
        BufReader::new(File::open(&path).unwrap()),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(events.len(), 2_000);
    let message_len = frame_message(1, 5_000).len();
    let mut frames = 0;
    while let Some(e) = events.next_event().unwrap() {
        assert_eq!(e.frame.unwrap().frame.unwrap().arrays.len(), 1);
        frames += 1;
    }
    assert_eq!(frames, 2_000);
    // 24 bytes per entry and one message buffer (2,000 kept frames would be 120 MB).
    let bound = 2_000 * 32 + 2 * message_len;
    assert!(
        events.retained_bytes() <= bound,
        "{} retained bytes, more than {bound}",
        events.retained_bytes()
    );
    assert!(!events.integrity().lost_data());
}

// ---------------------------------------------------------------------------------------------
// Item 15: a zip cut short keeps every complete message.

/// Reads `bytes` (a zip, maybe cut) into (frame indices, lost data).
fn read_cut(bytes: &[u8]) -> recfmt_nanover::Result<(Vec<u32>, recfmt_core::Integrity)> {
    let (events, integrity) = read_nanover_zip(std::io::Cursor::new(bytes), &Default::default())?;
    let frames = events
        .iter()
        .map(|e| e.frame.as_ref().unwrap().frame_index)
        .collect();
    Ok((frames, integrity))
}

#[test]
fn a_zip_cut_anywhere_keeps_exactly_its_complete_messages() {
    let (msgs, spans) = messages(12, 40);
    let index = index_of(&spans);
    for sizes in [Sizes::Zip64Extra, Sizes::Descriptor, Sizes::Plain] {
        let (zip, starts) = stored_zip(&[
            ("messages.msgpack", &msgs, sizes),
            ("index.msgpack", &index, Sizes::Plain),
        ]);
        let (full, integrity) = read_cut(&zip).unwrap();
        assert_eq!(full, (1..=12).collect::<Vec<_>>());
        assert!(!integrity.lost_data());
        let data = starts[0];
        // Every cut from inside the first message's data to just before the end of the file.
        for cut in (data as usize + 1..zip.len()).step_by(7) {
            let (frames, integrity) = read_cut(&zip[..cut])
                .unwrap_or_else(|e| panic!("cut at {cut} ({:?}): {e}", sizes as u8));
            let present = (cut as u64).saturating_sub(data);
            let complete = spans.iter().filter(|(o, l)| o + l <= present).count() as u32;
            assert_eq!(
                frames,
                (1..=complete).collect::<Vec<_>>(),
                "cut at {cut} of {}",
                zip.len()
            );
            assert!(integrity.lost_data(), "cut at {cut}: {integrity:?}");
            assert!(
                integrity
                    .warnings
                    .iter()
                    .any(|w| w.contains("no central directory")),
                "{integrity:?}"
            );
        }
    }
}

#[test]
fn messages_cut_after_a_complete_index_keep_the_index_times() {
    // Index first (as some writers order it), messages cut in the middle.
    let (msgs, spans) = messages(10, 30);
    let index = index_of(&spans);
    let (zip, starts) = stored_zip(&[
        ("index.msgpack", &index, Sizes::Plain),
        ("messages.msgpack", &msgs, Sizes::Plain),
    ]);
    let cut = (starts[1] + spans[6].0 + 5) as usize;
    let (events, integrity) =
        read_nanover_zip(std::io::Cursor::new(&zip[..cut]), &Default::default()).unwrap();
    let times: Vec<u128> = events.iter().map(|e| e.timestamp).collect();
    assert_eq!(times, [1000, 2000, 3000, 4000, 5000, 6000]);
    assert!(integrity.lost_data());
    assert!(
        integrity
            .warnings
            .iter()
            .any(|w| w.contains("index entry 6 points past the end of messages.msgpack")),
        "{integrity:?}"
    );
}

/// The `t_us` of every `frames` row of a (maybe cut) zip, read through the generic adapter.
fn frame_times(bytes: &[u8]) -> Vec<Option<u64>> {
    let mut rec = NanoverRecording::from_zip(
        std::io::Cursor::new(bytes.to_vec()),
        &ReadOptions::default(),
    )
    .unwrap();
    let mut row = FrameBuf::default();
    let mut times = Vec::new();
    while rec.read_frame(&mut row).unwrap() {
        times.push(match row.values[0] {
            recfmt_core::Value::UInt(t) => Some(t),
            recfmt_core::Value::Null => None,
            ref other => panic!("t_us is {other:?}"),
        });
    }
    times
}

#[test]
fn messages_recovered_without_their_index_have_unknown_times_not_zero() {
    let (msgs, spans) = messages(8, 10);
    let index = index_of(&spans);
    // Messages first (as NanoVer writes them), cut inside the index: the index's first
    // entries keep their times, the messages after them are found by decoding and have none.
    let (zip, starts) = stored_zip(&[
        ("messages.msgpack", &msgs, Sizes::Zip64Extra),
        ("index.msgpack", &index, Sizes::Plain),
    ]);
    let whole = frame_times(&zip);
    assert_eq!(whole, (1..=8).map(|i| Some(1000 * i)).collect::<Vec<_>>());
    // Index bytes: a 5-byte array header, then entries of equal size.
    let entry = (index.len() - 5) / 8;
    let cut = starts[1] as usize + 5 + 3 * entry + entry / 2;
    let times = frame_times(&zip[..cut]);
    assert_eq!(
        times,
        [
            Some(1000),
            Some(2000),
            Some(3000),
            None,
            None,
            None,
            None,
            None
        ]
    );
    // The index lost entirely (cut at its local header): every time is unknown.
    let cut = starts[1] as usize - 10;
    assert_eq!(frame_times(&zip[..cut]), [None; 8]);
    // ZipEvents says which times it knows; the timestamp it gives then is the last known.
    let mut events = ZipEvents::open(
        std::io::Cursor::new(&zip[..starts[1] as usize + 5 + 2 * entry]),
        &Default::default(),
    )
    .unwrap();
    let mut seen = Vec::new();
    while let Some(e) = events.next_event().unwrap() {
        seen.push((e.timestamp, events.time_known()));
    }
    assert_eq!(seen[..3], [(1000, true), (2000, true), (2000, false)]);
    assert!(seen[2..].iter().all(|&s| s == (2000, false)), "{seen:?}");
}

#[test]
fn a_zip_cut_inside_its_first_header_is_an_error_naming_the_offset() {
    let (msgs, spans) = messages(2, 3);
    let (zip, _) = stored_zip(&[
        ("messages.msgpack", &msgs, Sizes::Plain),
        ("index.msgpack", &index_of(&spans), Sizes::Plain),
    ]);
    let err = read_cut(&zip[..20]).unwrap_err().to_string();
    assert!(err.contains("at byte 0"), "{err}");
    assert!(err.contains("local file header"), "{err}");
}

#[test]
fn the_truncated_reproducer_reads_its_complete_messages() {
    let dir = std::env::var_os("RECFMT_REPRODUCERS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/reproducers").into()
        });
    let path = Some(dir.join("nzip_trunc_half.nanover.zip")).filter(|p| p.exists());
    let Some(path) = path else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but the reproducers are missing"
        );
        eprintln!("skipping: nzip_trunc_half.nanover.zip not found");
        return;
    };
    let (events, integrity) =
        read_nanover_zip(File::open(&path).unwrap(), &Default::default()).unwrap();
    // The first 245 of the sample's 455 messages end before the cut at byte 419,186.
    assert_eq!(events.len(), 245);
    assert_eq!(events.iter().filter(|e| e.frame.is_some()).count(), 244);
    assert!(integrity.lost_data());
    assert_eq!(integrity.truncated_at, Some(418_246));
    // The same messages as the intact sample's first 245.
    let sample = common::samples_dir()
        .unwrap()
        .join("converted/sim-switching-test-recording.nanover.zip");
    let (whole, _) = read_nanover_zip(File::open(sample).unwrap(), &Default::default()).unwrap();
    for (i, (cut, full)) in events.iter().zip(&whole).enumerate() {
        assert!(
            cut.frame == full.frame && cut.state == full.state,
            "message {i}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Item 18: a zip converts to .traj + .state with the same rows.

fn rows_of(path: &Path) -> Vec<FrameBuf> {
    let mut rec = NanoverRecording::open(path, &ReadOptions::default()).unwrap();
    let mut rows = Vec::new();
    let mut row = FrameBuf::default();
    while rec.read_frame(&mut row).unwrap() {
        rows.push(row.clone());
    }
    assert!(!rec.integrity().lost_data());
    rows
}

#[test]
fn a_zip_copied_as_nanover_is_a_traj_and_state_with_the_same_rows() {
    let Some(dir) = common::samples_dir() else {
        return;
    };
    let zip = dir.join("converted/sim-switching-test-recording.nanover.zip");
    let out = tempfile::tempdir().unwrap();
    let traj = out.path().join("copy.traj");
    let summary = recfmt_nanover::copy_recording(&zip, &traj).unwrap();
    assert!(!summary.lost_data());
    let files: Vec<_> = summary.files.iter().map(|f| (f.kind, f.records)).collect();
    assert_eq!(
        files,
        [
            (Some(recfmt_nanover::FileKind::Trajectory), 454),
            (Some(recfmt_nanover::FileKind::State), 1)
        ]
    );
    assert!(
        std::fs::read(&traj)
            .unwrap()
            .starts_with(&recfmt_nanover::header_bytes())
    );
    assert!(out.path().join("copy.state").exists());
    let from_zip = rows_of(&zip);
    let from_pair = rows_of(&traj);
    assert_eq!(from_zip.len(), 455);
    assert!(from_zip == from_pair, "the rows differ");
}
