//! Data lost where only the side files can tell: a `timeseries.bin` cut at a record boundary
//! (`meta.json` counts more records), corrupt or overlong `events.jsonl` lines, and fewer
//! events than `meta.json` counts. Each is reported (data lost, exit 3 from the CLI) and is an
//! error when strict.

use std::path::{Path, PathBuf};

use recfmt_core::{FrameBuf, IntegrityStatus, ReadOptions, RecordingReader};
use recfmt_tlv::UsvlogRecording;
use recfmt_tlv::generate;
use recfmt_tlv::io::Reader;

fn session(dir: &Path) -> PathBuf {
    let path = dir.join("session");
    generate::write_all_types_session(&path, 200).expect("fixture");
    path
}

fn read_all(path: &Path, strict: bool) -> recfmt_core::Result<(u64, recfmt_core::Integrity)> {
    let options = ReadOptions {
        strict,
        ..ReadOptions::default()
    };
    let mut recording = UsvlogRecording::open(path, &options)?;
    let mut frame = FrameBuf::default();
    let mut rows = 0;
    while recording.read_frame(&mut frame)? {
        rows += 1;
    }
    Ok((rows, recording.integrity().clone()))
}

/// Byte offset where record `index` starts.
fn record_offset(timeseries: &Path, index: usize) -> u64 {
    let bytes = std::fs::read(timeseries).expect("read");
    let mut reader = Reader::new(&bytes[..]);
    reader.read_header().expect("header");
    let mut offset = 0;
    for _ in 0..=index {
        offset = reader
            .read_record_ref()
            .expect("record")
            .expect("enough records")
            .offset;
    }
    offset
}

#[test]
fn a_cut_at_a_record_boundary_is_lost_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = session(dir.path());
    let (complete_rows, integrity) = read_all(&path, false).expect("read");
    assert_eq!(integrity.status, IntegrityStatus::Complete, "{integrity:?}");

    let timeseries = path.join("timeseries.bin");
    let cut = record_offset(&timeseries, 500);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&timeseries)
        .expect("open");
    file.set_len(cut).expect("cut");

    let (rows, integrity) = read_all(&path, false).expect("a lenient read keeps every record");
    assert!(rows < complete_rows);
    assert_eq!(integrity.status, IntegrityStatus::Truncated);
    assert_eq!(integrity.truncated_at, Some(cut));
    assert!(
        integrity
            .warnings
            .iter()
            .any(|w| w.contains("records lost")),
        "{:?}",
        integrity.warnings
    );
    let err = read_all(&path, true).expect_err("strict");
    assert!(err.to_string().contains(&format!("at byte {cut}")), "{err}");
}

#[test]
fn corrupt_and_overlong_event_lines_are_lost_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = session(dir.path());
    let events = path.join("events.jsonl");
    let good = std::fs::read_to_string(&events).expect("events");
    let first_line_len = good.lines().next().map_or(0, str::len);
    let long = format!(
        "{{\"t_us\": 1, \"type\": \"X\", \"pad\": \"{}\"}}",
        "a".repeat(3 << 20)
    );
    let text = format!("{good}not json\n{long}\n");
    std::fs::write(&events, &text).expect("write");

    let (_, integrity) = read_all(&path, false).expect("lenient");
    assert_eq!(integrity.status, IntegrityStatus::Corrupt);
    assert_eq!(integrity.records_skipped, 2);
    let warnings = integrity.warnings.join("\n");
    assert!(warnings.contains("not a JSON object"), "{warnings}");
    assert!(warnings.contains("longer than"), "{warnings}");
    assert!(
        warnings.contains(&format!("at byte {}", good.len())),
        "{warnings}"
    );
    assert!(first_line_len > 0);

    let err = read_all(&path, true).expect_err("strict");
    assert!(err.to_string().contains("events.jsonl"), "{err}");
}

#[test]
fn fewer_events_than_meta_counts_is_lost_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = session(dir.path());
    let events = path.join("events.jsonl");
    let good = std::fs::read_to_string(&events).expect("events");
    let first = good.lines().next().expect("an event");
    std::fs::write(&events, format!("{first}\n")).expect("write");

    let (_, integrity) = read_all(&path, false).expect("lenient");
    assert_eq!(
        integrity.status,
        IntegrityStatus::Truncated,
        "{integrity:?}"
    );
    assert!(
        integrity.warnings.iter().any(|w| w.contains("events")),
        "{:?}",
        integrity.warnings
    );
    assert!(read_all(&path, true).is_err());
}
