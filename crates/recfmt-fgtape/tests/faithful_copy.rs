//! The faithful copy (`recfmt convert TAPE --to fgtape`, the descriptor's `copy`) of every
//! kind of tape: Continuous tapes as [`FgTapeWriter`] makes them (plain and with compressed
//! frames, with multiplayer and extra-properties items), Recovery tapes (also the known-bad
//! compressed ones), and the real Normal samples. A complete tape copies byte for byte (Normal:
//! its decompressed content); a cut one keeps every complete frame and reports the loss.

#![allow(clippy::unwrap_used)] // tests may unwrap

mod common;

use std::path::Path;

use recfmt_core::{
    DType, FrameBuf, Header, Integrity, IntegrityStatus, ReadOptions, RecordingReader,
    RecordingWriter, Schema, SignalDesc, StreamDesc, TimeBase, Value, WriteOptions,
};
use recfmt_fgtape::continuous::{ContinuousFrame, ContinuousHeader, Reader, Writer};
use recfmt_fgtape::mp::{MP_MAGIC, POS_DATA_ID};
use recfmt_fgtape::{FORMAT, FgTape, FgTapeWriter};

/// The tapes the writer makes.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Signals only, uncompressed.
    Plain,
    /// Signals only, every frame raw DEFLATE.
    Deflated,
    /// Signals, multiplayer and extra properties, uncompressed or compressed.
    AllItems { compressed: bool },
    /// Multiplayer and extra properties without signals (FlightGear with
    /// `record-signals` off), compressed.
    NoSignals,
    /// A Recovery tape: one uncompressed signals frame.
    Recovery,
}

const KINDS: [Kind; 6] = [
    Kind::Plain,
    Kind::Deflated,
    Kind::AllItems { compressed: false },
    Kind::AllItems { compressed: true },
    Kind::NoSignals,
    Kind::Recovery,
];

const FRAMES: usize = 8;

fn time() -> SignalDesc {
    SignalDesc::scalar("t", DType::F64)
}

/// A multiplayer packet as FlightGear records it: the header partly in host order (magic,
/// version, message id, length, reply port little-endian), the callsign, then `body` bytes.
fn packet(i: usize, body: usize) -> Vec<u8> {
    let len = 32 + body;
    let mut p = Vec::with_capacity(len);
    p.extend_from_slice(&MP_MAGIC.to_le_bytes());
    p.extend_from_slice(&0x0001_0001u32.to_le_bytes());
    p.extend_from_slice(&POS_DATA_ID.to_le_bytes());
    p.extend_from_slice(&(len as u32).to_le_bytes());
    p.extend_from_slice(&100u32.to_be_bytes());
    p.extend_from_slice(&5000u32.to_le_bytes());
    p.extend_from_slice(b"MPTEST\0\0");
    p.extend((0..body).map(|k| (k * 7 + i) as u8));
    p
}

/// Writes a tape of `kind` with [`FRAMES`] frames at `path`.
fn write_tape(kind: Kind, path: &Path) {
    let signals = !matches!(kind, Kind::NoSignals);
    let items = matches!(kind, Kind::AllItems { .. } | Kind::NoSignals);
    let mut schema = Schema::default();
    if signals {
        let mut s = StreamDesc::new("signals", time(), TimeBase::SECONDS);
        for (name, dtype) in [
            ("/position/altitude-ft", DType::F64),
            ("/orientation/heading-deg", DType::F32),
            ("/engines/engine/rpm", DType::I32),
            ("/gear/position", DType::I16),
            ("/controls/flaps", DType::I8),
            ("/gear/gear/wow", DType::Bool),
        ] {
            s.signals.push(SignalDesc::scalar(name, dtype));
        }
        schema.streams.push(s);
    }
    if items {
        let mut mp = StreamDesc::new("multiplayer", time(), TimeBase::SECONDS);
        mp.signals.push(SignalDesc::scalar("packet", DType::Bytes));
        schema.streams.push(mp);
        let mut extra = StreamDesc::new("extra_properties", time(), TimeBase::SECONDS);
        extra.signals.push(SignalDesc::scalar("path", DType::Str));
        extra.signals.push(SignalDesc::scalar("value", DType::Str));
        extra
            .signals
            .push(SignalDesc::scalar("removed", DType::Bool));
        schema.streams.push(extra);
    }
    let mut header = Header::default();
    header
        .metadata
        .insert("meta/aircraft-type".into(), "c172p".into());
    let writer = FgTapeWriter::create(path);
    let mut writer = match kind {
        Kind::Deflated | Kind::AllItems { compressed: true } | Kind::NoSignals => {
            writer.compressed(true)
        }
        Kind::Recovery => writer.recovery(true),
        _ => writer,
    };
    writer.write_header(&header, &schema).unwrap();
    let stream = |name: &str| schema.stream_index(name).unwrap();
    for i in 0..FRAMES {
        let t = Value::Float(10.0 + i as f64 * 0.25);
        if signals {
            let x = i as f64;
            let values = vec![
                t.clone(),
                Value::Float(1000.0 + 3.5 * x),
                Value::Float(x * 11.25),
                Value::Int(2400 + i as i64),
                Value::Int(-(i as i64)),
                Value::Int(i as i64 % 3),
                Value::Bool(i % 2 == 0),
            ];
            writer
                .write_frame(&FrameBuf {
                    stream: stream("signals"),
                    values,
                })
                .unwrap();
        }
        if items {
            // Packets in most frames (two in some), records in some, removals now and then.
            for k in 0..(i % 3) {
                writer
                    .write_frame(&FrameBuf {
                        stream: stream("multiplayer"),
                        values: vec![t.clone(), Value::Bytes(packet(i + k, 40 + 13 * k))],
                    })
                    .unwrap();
            }
            if i % 2 == 0 || !signals {
                let removed = i % 4 == 2;
                writer
                    .write_frame(&FrameBuf {
                        stream: stream("extra_properties"),
                        values: vec![
                            t.clone(),
                            Value::Str(format!("/sim/current-view/view-number[{}]", i % 2)),
                            if removed {
                                Value::Null
                            } else {
                                Value::Str(format!("{i}.5"))
                            },
                            Value::Bool(removed),
                        ],
                    })
                    .unwrap();
            }
        }
    }
    writer.finish().unwrap();
}

/// The header and frames of a tape, as the low-level reader sees them.
fn frames_of(bytes: &[u8]) -> (ContinuousHeader, Vec<ContinuousFrame>) {
    let mut r = Reader::new(bytes).unwrap();
    let mut frames = Vec::new();
    let mut f = ContinuousFrame::default();
    while r.read_frame(&mut f).unwrap() {
        frames.push(f.clone());
    }
    assert!(r.truncated().is_none());
    (r.header().clone(), frames)
}

/// Where each frame starts, then where the last one ends.
fn boundaries(bytes: &[u8]) -> Vec<usize> {
    let mut r = Reader::new(std::io::Cursor::new(bytes)).unwrap();
    let index = r.index_frames().unwrap();
    assert!(index.stopped.is_none(), "{:?}", index.stopped);
    let mut out: Vec<usize> = index.frames.iter().map(|e| e.offset as usize).collect();
    out.push(index.end as usize);
    assert_eq!(index.end as usize, bytes.len());
    out
}

fn copy(source: &Path, target: &Path) -> recfmt_core::Result<recfmt_core::Copied> {
    let copy = FORMAT.copy.unwrap();
    copy(
        source,
        target,
        &ReadOptions::default(),
        &WriteOptions::default(),
    )
}

#[test]
fn the_writer_makes_every_kind_of_tape() {
    let dir = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let path = dir.path().join("tape.fgtape");
        let _ = std::fs::remove_file(&path);
        write_tape(kind, &path);
        let (header, frames) = frames_of(&std::fs::read(&path).unwrap());
        let names: Vec<&str> = header.data.iter().map(String::as_str).collect();
        let compressed = header.compression;
        match kind {
            Kind::Plain => assert_eq!((names, compressed), (vec!["signals"], false)),
            Kind::Deflated => assert_eq!((names, compressed), (vec!["signals"], true)),
            Kind::AllItems { compressed: c } => assert_eq!(
                (names, compressed),
                (vec!["signals", "multiplayer", "extra-properties"], c)
            ),
            Kind::NoSignals => assert_eq!(
                (names, compressed),
                (vec!["multiplayer", "extra-properties"], true)
            ),
            Kind::Recovery => {
                assert!(header.is_recovery_like());
                assert_eq!(frames.len(), 1);
                // The last time and the last values.
                assert_eq!(frames[0].time, 10.0 + (FRAMES - 1) as f64 * 0.25);
                let layout = header.signals.as_ref().unwrap();
                let values = layout.decode(&frames[0].items[0]).unwrap();
                assert_eq!(
                    values[0],
                    recfmt_fgtape::signals::SignalValue::Double(1000.0 + 3.5 * 7.0)
                );
                continue;
            }
        }
        assert_eq!(frames.len(), FRAMES, "{kind:?}");
        // Compressed frames are stored as DEFLATE, with the flags their items call for.
        for f in &frames {
            assert_eq!(f.deflate.is_some(), compressed, "{kind:?}");
            if let Some(d) = &f.deflate {
                assert_eq!(d.flags, header.flags_for(&f.items), "{kind:?}");
            }
        }
        // The items carry what was written: packets and records in some frames, not all.
        if let Some(mp) = header.item_index("multiplayer") {
            assert!(frames.iter().any(|f| f.items[mp].is_empty()));
            assert!(frames.iter().any(|f| !f.items[mp].is_empty()));
        }
        if let Some(extra) = header.item_index("extra-properties") {
            assert!(frames.iter().any(|f| !f.items[extra].is_empty()));
        }
    }
}

#[test]
fn a_recovery_tape_holds_only_signals() {
    let dir = tempfile::tempdir().unwrap();
    let mut mp = StreamDesc::new("multiplayer", time(), TimeBase::SECONDS);
    mp.signals.push(SignalDesc::scalar("packet", DType::Bytes));
    let schema = Schema { streams: vec![mp] };
    let mut w = FgTapeWriter::create(dir.path().join("r.fgtape")).recovery(true);
    let e = w.write_header(&Header::default(), &schema).unwrap_err();
    assert!(
        e.to_string().contains("a Recovery tape holds only signals"),
        "{e}"
    );
    assert!(e.to_string().contains("no signals stream"), "{e}");

    // No row, no frame to write: an error, and no file.
    let mut s = StreamDesc::new("signals", time(), TimeBase::SECONDS);
    s.signals.push(SignalDesc::scalar("/x", DType::F64));
    let schema = Schema { streams: vec![s] };
    let path = dir.path().join("empty.fgtape");
    let mut w = FgTapeWriter::create(&path).recovery(true);
    w.write_header(&Header::default(), &schema).unwrap();
    let e = w.finish().unwrap_err();
    assert!(e.to_string().contains("one frame"), "{e}");
    assert!(!path.exists());
}

#[test]
fn complete_tapes_of_every_kind_copy_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    for (k, kind) in KINDS.into_iter().enumerate() {
        let source = dir.path().join(format!("{k}.fgtape"));
        write_tape(kind, &source);
        let target = dir.path().join(format!("{k}-copy.fgtape"));
        let copied = copy(&source, &target).unwrap();
        assert_eq!(
            std::fs::read(&source).unwrap(),
            std::fs::read(&target).unwrap(),
            "{kind:?}"
        );
        assert!(!copied.integrity.lost_data(), "{kind:?}");
        assert!(copied.integrity.warnings.is_empty(), "{kind:?}");
        let expected = match kind {
            Kind::Recovery => "Recovery tape",
            _ => "Continuous tape",
        };
        assert!(copied.summary.contains(expected), "{}", copied.summary);
        assert!(
            copied.summary.contains("byte for byte"),
            "{}",
            copied.summary
        );
    }
}

/// The copy of a cut tape: every complete frame before the cut, byte for byte, and the loss
/// reported where the cut frame starts.
fn check_cut(kind: Kind, full: &[u8], cut: usize, dir: &Path) {
    let bounds = boundaries(full);
    let source = dir.join("cut.fgtape");
    let target = dir.join("cut-copy.fgtape");
    let _ = std::fs::remove_file(&target);
    std::fs::write(&source, &full[..cut]).unwrap();
    let copied = copy(&source, &target).unwrap_or_else(|e| panic!("{kind:?} cut {cut}: {e}"));
    // The frames that end at or before the cut.
    let kept = bounds[1..].iter().filter(|&&end| end <= cut).count();
    let kept_end = bounds[kept];
    let out = std::fs::read(&target).unwrap();
    assert_eq!(out.len(), kept_end, "{kind:?} cut {cut}");
    assert!(out[..] == full[..kept_end], "{kind:?} cut {cut}");
    let integrity: &Integrity = &copied.integrity;
    if cut == kept_end {
        // A cut between frames: a shorter, complete tape (the format has no frame count).
        assert!(!integrity.lost_data(), "{kind:?} cut {cut}: {integrity:?}");
    } else {
        assert_eq!(integrity.status, IntegrityStatus::Truncated, "{kind:?}");
        assert_eq!(integrity.truncated_at, Some(kept_end as u64), "{kind:?}");
        assert_eq!(integrity.bytes_lost, (cut - kept_end) as u64, "{kind:?}");
        let text = integrity.warnings.join("\n");
        assert!(
            text.contains(&format!("keeps the {kept} complete frames")),
            "{kind:?} cut {cut}: {text}"
        );
    }
    // The copy reads whole, with every kept frame.
    let back = FgTape::open(&target, &ReadOptions::default()).unwrap();
    assert!(!back.integrity().lost_data(), "{kind:?} cut {cut}");
    assert_eq!(frames_of(&out).1.len(), kept, "{kind:?} cut {cut}");
}

#[test]
fn cut_tapes_of_every_kind_keep_every_complete_frame() {
    let dir = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let source = dir.path().join("full.fgtape");
        let _ = std::fs::remove_file(&source);
        write_tape(kind, &source);
        let full = std::fs::read(&source).unwrap();
        let bounds = boundaries(&full);
        // At each frame's start, one byte in, inside its time, half-way, one byte short.
        let mut cuts = Vec::new();
        for pair in bounds.windows(2) {
            let (start, end) = (pair[0], pair[1]);
            cuts.extend([start, start + 1, start + 9, (start + end) / 2, end - 1]);
        }
        cuts.push(full.len());
        for cut in cuts {
            check_cut(kind, &full, cut, dir.path());
        }
    }
}

#[test]
fn a_tape_cut_inside_its_header_cannot_be_copied() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("full.fgtape");
    write_tape(Kind::AllItems { compressed: true }, &source);
    let full = std::fs::read(&source).unwrap();
    let frames_start = boundaries(&full)[0];
    let cut = dir.path().join("cut.fgtape");
    let target = dir.path().join("copy.fgtape");
    for at in [33, 36, 100, frames_start - 1] {
        std::fs::write(&cut, &full[..at]).unwrap();
        let e = copy(&cut, &target).unwrap_err();
        assert!(e.to_string().contains("file ends early"), "cut {at}: {e}");
        assert!(e.to_string().contains("cut.fgtape"), "cut {at}: {e}");
        assert!(!target.exists(), "cut {at}");
    }
}

#[test]
fn strict_copies_refuse_a_cut_frame() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("full.fgtape");
    write_tape(Kind::Deflated, &source);
    let full = std::fs::read(&source).unwrap();
    let cut = dir.path().join("cut.fgtape");
    std::fs::write(&cut, &full[..full.len() - 3]).unwrap();
    let target = dir.path().join("copy.fgtape");
    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    let e = (FORMAT.copy.unwrap())(&cut, &target, &strict, &WriteOptions::default()).unwrap_err();
    assert!(e.to_string().contains("file ends early"), "{e}");
    assert!(!target.exists());
}

#[test]
fn a_recovery_tape_written_compressed_by_mistake_copies_as_it_is() {
    // FlightGear `next` 2021-07-31 to 2022-01-08: a compressed frame under a Recovery header
    // without `continuous-compression` (spec §6). The reader recognises it at the frame.
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.fgtape");
    write_tape(Kind::Recovery, &good);
    let (header, frames) = frames_of(&std::fs::read(&good).unwrap());
    let mut compressed = header.clone();
    compressed.compression = true;
    let mut w = Writer::new(Vec::new(), &compressed).unwrap();
    w.write_frame(&frames[0]).unwrap();
    let bad_bytes = w.finish().unwrap();
    let bad = dir.path().join("bad.fgtape");
    std::fs::write(&bad, &bad_bytes).unwrap();

    let target = dir.path().join("copy.fgtape");
    let copied = copy(&bad, &target).unwrap();
    assert_eq!(std::fs::read(&target).unwrap(), bad_bytes);
    assert!(!copied.integrity.lost_data());
    assert!(
        copied
            .integrity
            .warnings
            .join("\n")
            .contains("known FlightGear bug"),
        "{:?}",
        copied.integrity.warnings
    );
}

#[test]
fn the_real_normal_samples_still_copy_their_content() {
    let dir = tempfile::tempdir().unwrap();
    for name in common::SAMPLES {
        let Some(path) = common::sample(name) else {
            return;
        };
        let target = dir.path().join(name);
        let copied = copy(&path, &target).unwrap();
        assert!(!copied.integrity.lost_data(), "{name}");
        let mut back = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(&target).unwrap()),
            &mut back,
        )
        .unwrap();
        assert!(back == common::decompressed(name).unwrap(), "{name}");
    }
}
