//! Tapes that end early: a lenient whole-tape read keeps exactly the complete frames (so a
//! faithful copy can be written from it), and the adapter reports a tape cut inside its
//! header as truncated instead of failing.

#![allow(clippy::unwrap_used)] // tests may unwrap

mod common;

use recfmt_core::{IntegrityStatus, ReadOptions, RecordingReader};
use recfmt_fgtape::FgTape;
use recfmt_fgtape::normal::{Frame, FrameLayout, Header, NormalTape, RawData, Reader};
use recfmt_fgtape::props::{PropValue, PropertyList};
use recfmt_fgtape::signals::{SignalLayout, SignalValue};

/// A legacy-layout tape (FlightGear 2018.3, so the Meta tree hints the layout) with `counts`
/// frames in its short-, medium- and long-term containers.
fn tape(counts: [usize; 3]) -> NormalTape {
    let mut config = PropertyList::new();
    for (i, (ty, prop)) in [("double", "/position/altitude-ft"), ("float", "/x")]
        .iter()
        .enumerate()
    {
        config
            .root
            .set(&format!("signals/signal[{i}]/type"), PropValue::string(*ty));
        config.root.set(
            &format!("signals/signal[{i}]/property"),
            PropValue::string(*prop),
        );
    }
    let layout = SignalLayout::from_config(&config.root, &Default::default()).unwrap();
    config.root.set(
        "recorder/record-size",
        PropValue::int(layout.record_size() as i32),
    );
    let mut meta = PropertyList::new();
    meta.root
        .set("meta/aircraft-type", PropValue::string("test"));
    meta.root
        .set("meta/version/flightgear", PropValue::string("2018.3.1"));
    let header = Header::new(meta, config).unwrap();
    let rs = header.record_size();
    let frames = |n: usize, t0: f64| -> Vec<Frame> {
        (0..n)
            .map(|i| Frame {
                time: t0 + i as f64 * 0.5,
                signals: header
                    .signals
                    .encode(&[
                        SignalValue::Double(100.0 + i as f64),
                        SignalValue::Float(i as f32),
                    ])
                    .unwrap(),
                padding: None,
                multiplayer: Vec::new(),
            })
            .collect()
    };
    let raw_data = [
        RawData::new(frames(counts[0], 100.0), rs),
        RawData::new(frames(counts[1], 50.0), rs),
        RawData::new(frames(counts[2], 0.0), rs),
    ];
    NormalTape {
        header,
        layout: FrameLayout::Legacy,
        raw_data,
        trailing: Vec::new(),
    }
}

#[test]
fn a_cut_tape_keeps_exactly_its_complete_frames_and_copies() {
    let counts = [4, 3, 2];
    let full = tape(counts);
    let bytes = full.to_decompressed_bytes().unwrap();
    let rs = full.header.record_size();
    let header_len = tape([0; 3]).to_decompressed_bytes().unwrap().len() - 3 * 12;
    // Where each container's frames start (after its 12-byte container header).
    let mut starts = Vec::new();
    let mut at = header_len;
    for n in counts {
        starts.push(at + 12);
        at += 12 + n * rs;
    }
    assert_eq!(at, bytes.len());

    for cut in 0..=bytes.len() {
        let result = Reader::new(&bytes[..cut]).unwrap().read_tape_lenient();
        if cut < header_len {
            let e = result.unwrap_err();
            assert!(e.is_truncation(), "cut {cut}: {e}");
            continue;
        }
        let (kept, error) = result.unwrap();
        // Expected: the frames that fit before the cut, container by container.
        let expected: Vec<usize> = (0..3)
            .map(|i| {
                let fit = cut.saturating_sub(starts[i]) / rs;
                if cut < starts[i] {
                    0
                } else {
                    fit.min(counts[i])
                }
            })
            .collect();
        assert_eq!(kept.frame_counts().to_vec(), expected, "cut {cut}");
        assert_eq!(error.is_some(), cut < bytes.len(), "cut {cut}: {error:?}");
        if let Some(e) = &error {
            assert!(e.is_truncation(), "cut {cut}: {e}");
            assert!(e.offset().unwrap().get() <= cut as u64, "cut {cut}: {e}");
        }
        for (i, &n) in expected.iter().enumerate() {
            assert_eq!(
                kept.raw_data[i].frames[..],
                full.raw_data[i].frames[..n],
                "cut {cut}, container {i}"
            );
            assert_eq!(
                kept.raw_data[i].declared_size,
                (n * rs) as u64,
                "cut {cut}, container {i}"
            );
        }
        // What was kept writes out as a complete tape that reads back the same.
        let copy = kept.write_gzip(Vec::new()).unwrap();
        let back = NormalTape::read(&copy[..]).unwrap();
        assert_eq!(back, kept, "cut {cut}");
    }
}

#[test]
fn a_compressed_sample_cut_short_keeps_what_the_adapter_reads() {
    let Some(path) = common::sample(common::SAMPLES[0]) else {
        return;
    };
    let full = NormalTape::open(&path).unwrap();
    let compressed = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut_path = dir.path().join("cut.fgtape");
    std::fs::write(&cut_path, &compressed[..200_000]).unwrap();

    let (kept, error) = NormalTape::open_lenient(&cut_path).unwrap();
    assert!(error.unwrap().is_truncation());
    let n: usize = kept.frame_counts().iter().sum();
    assert!(n > 0);
    for i in 0..3 {
        let k = kept.raw_data[i].frames.len();
        assert_eq!(kept.raw_data[i].frames[..], full.raw_data[i].frames[..k]);
    }
    // The adapter's first pass kept as many frames in each container.
    let adapter = FgTape::open(&cut_path, &ReadOptions::default()).unwrap();
    assert_eq!(adapter.integrity().status, IntegrityStatus::Truncated);
    let frames = kept.frame_counts();
    assert_eq!(
        adapter.header().metadata["fgtape.frames"],
        format!(
            "short-term={} medium-term={} long-term={}",
            frames[0], frames[1], frames[2]
        )
    );
}

#[test]
fn a_tape_cut_inside_its_header_is_truncated_not_an_error() {
    let full = tape([2, 0, 0]);
    let bytes = full.to_decompressed_bytes().unwrap();
    let header_len = tape([0; 3]).to_decompressed_bytes().unwrap().len() - 3 * 12;
    let config_len = full.header.config.payload.len();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.fgtape");
    // Inside the endian marker, the magic, the Meta and the Config containers.
    for cut in [2, 30, 60, header_len - config_len / 2, header_len - 1] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let tape = FgTape::open(&path, &ReadOptions::default())
            .unwrap_or_else(|e| panic!("cut {cut}: {e}"));
        let integrity = tape.integrity();
        assert_eq!(integrity.status, IntegrityStatus::Truncated, "cut {cut}");
        assert!(integrity.truncated_at.unwrap() <= cut as u64, "cut {cut}");
        assert!(
            integrity.warnings.join("\n").contains("inside its header"),
            "cut {cut}: {integrity:?}"
        );
        assert!(tape.schema().streams.is_empty(), "cut {cut}");
        // The Meta tree is kept once its container is complete.
        let meta = &tape.header().metadata;
        let meta_complete = cut >= header_len - config_len - 12;
        assert_eq!(
            meta.get("meta/aircraft-type").map(String::as_str),
            meta_complete.then_some("test"),
            "cut {cut}"
        );
        assert_eq!(
            meta.get("fgtape.frames").map(String::as_str),
            Some("short-term=0 medium-term=0 long-term=0")
        );

        // Strict reading refuses it, with the offset.
        let strict = ReadOptions {
            strict: true,
            ..ReadOptions::default()
        };
        let e = FgTape::open(&path, &strict).unwrap_err();
        assert!(e.is_truncation(), "cut {cut}: {e}");
        assert!(e.to_string().contains("byte"), "cut {cut}: {e}");
    }
}
