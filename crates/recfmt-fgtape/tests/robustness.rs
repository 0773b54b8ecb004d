//! Truncated and bit-flipped copies of the real samples never panic, and fail with errors
//! that carry byte offsets.

#![allow(clippy::unwrap_used)] // tests may unwrap

mod common;

use std::io::Write;

use recfmt_core::{Limits, ReadOptions};
use recfmt_fgtape::normal::{NormalTape, Reader};
use recfmt_fgtape::{Error, Offset};

use common::{SAMPLES, decompressed};

/// Cut points: dense at the start (header, containers), then spread over the file.
fn cut_points(len: usize, n: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = (0..64.min(len)).collect();
    cuts.extend((0..n).map(|i| 64 + (len - 64) * i / n));
    cuts.extend([len - 1, len.saturating_sub(8), len.saturating_sub(13)]);
    cuts.sort_unstable();
    cuts.dedup();
    cuts.retain(|&c| c < len);
    cuts
}

/// A small deterministic PRNG (xorshift) so the flips are reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn assert_located(e: &Error, len: usize, context: &str) {
    let offset = e
        .offset()
        .unwrap_or_else(|| panic!("{context}: error without offset: {e}"));
    assert!(
        offset.get() <= len as u64 + 16,
        "{context}: offset {offset} beyond the data: {e}"
    );
    let text = e.to_string();
    assert!(text.contains("byte"), "{context}: {text}");
    // The generic error keeps the offset too.
    let core: recfmt_core::Error = match e {
        Error::Truncated { offset, expected } => Error::Truncated {
            offset: *offset,
            expected: expected.clone(),
        },
        Error::Malformed { offset, expected } => Error::Malformed {
            offset: *offset,
            expected: expected.clone(),
        },
        _ => return,
    }
    .into();
    // ... said as the crate says it (`at decompressed byte N` for a Normal tape), once.
    let core_text = core.to_string();
    assert_eq!(
        core_text.matches(&format!("at {offset}")).count(),
        1,
        "{core}"
    );
}

#[test]
fn truncated_decompressed_tapes_fail_cleanly() {
    for name in SAMPLES {
        let Some(bytes) = decompressed(name) else {
            return;
        };
        for cut in cut_points(bytes.len(), 150) {
            let context = format!("{name} cut at {cut}");
            match NormalTape::read(&bytes[..cut]) {
                Ok(_) => panic!("{context}: a truncated tape was accepted"),
                Err(e) => {
                    assert_located(&e, cut, &context);
                    assert!(e.offset().unwrap().get() <= cut as u64, "{context}: {e}");
                    assert!(
                        matches!(e.offset(), Some(Offset::File(_))),
                        "{context}: {e}"
                    );
                }
            }
        }
    }
}

#[test]
fn truncated_frames_are_delivered_up_to_the_cut() {
    let Some(bytes) = decompressed(SAMPLES[1]) else {
        return;
    };
    let full = NormalTape::read(&bytes[..]).unwrap();
    let cut = bytes.len() - 5000;
    let mut reader = Reader::new(&bytes[..cut]).unwrap();
    reader.read_header().unwrap();
    reader.next_container().unwrap();
    let mut frame = Default::default();
    let mut n = 0;
    let err = loop {
        match reader.read_frame(&mut frame) {
            Ok(true) => {
                assert_eq!(&frame, &full.raw_data[0].frames[n]);
                n += 1;
            }
            Ok(false) => panic!("container ended early without error"),
            Err(e) => break e,
        }
    };
    assert!(err.is_truncation(), "{err}");
    assert!(n > 300 && n < 406, "{n}");
    println!("{err}");
}

#[test]
fn flipped_decompressed_tapes_never_panic_and_round_trip_when_accepted() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for name in SAMPLES {
        let Some(bytes) = decompressed(name) else {
            return;
        };
        let mut accepted = 0;
        let mut rejected = 0;
        for i in 0..300 {
            let mut copy = bytes.clone();
            // Half the flips hit the first 64 KiB (headers, XML, container fields).
            let pos = if i % 2 == 0 {
                (rng.next() % 65536.min(copy.len() as u64)) as usize
            } else {
                (rng.next() % copy.len() as u64) as usize
            };
            let bit = rng.next() % 8;
            copy[pos] ^= 1 << bit;
            let context = format!("{name} bit {bit} of byte {pos}");
            match NormalTape::read(&copy[..]) {
                Ok(tape) => {
                    accepted += 1;
                    // Whatever was accepted is kept faithfully.
                    let written = tape.to_decompressed_bytes().unwrap();
                    assert!(written == copy, "{context}: accepted but not reproduced");
                }
                Err(e) => {
                    rejected += 1;
                    assert_located(&e, copy.len(), &context);
                }
            }
        }
        println!("{name}: {accepted} flips accepted, {rejected} rejected");
        assert!(rejected > 0 && accepted > 0);
    }
}

#[test]
fn damaged_compressed_tapes_never_panic() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for name in SAMPLES {
        let Some(path) = common::sample(name) else {
            return;
        };
        let bytes = std::fs::read(path).unwrap();
        for cut in cut_points(bytes.len(), 40) {
            let context = format!("{name} compressed cut at {cut}");
            match NormalTape::read(&bytes[..cut]) {
                Ok(_) => panic!("{context}: accepted"),
                Err(e) => assert_located(&e, usize::MAX / 2, &context),
            }
        }
        for _ in 0..40 {
            let mut copy = bytes.clone();
            let pos = (rng.next() % copy.len() as u64) as usize;
            copy[pos] ^= 1 << (rng.next() % 8);
            let context = format!("{name} compressed flip at {pos}");
            if let Err(e) = NormalTape::read(&copy[..]) {
                assert_located(&e, usize::MAX / 2, &context);
            }
        }
    }
}

#[test]
fn compressed_errors_name_decompressed_offsets() {
    let Some(path) = common::sample(SAMPLES[2]) else {
        return;
    };
    let bytes = std::fs::read(path).unwrap();
    // Cut the gzip stream in the middle.
    let e = NormalTape::read(&bytes[..bytes.len() / 2]).unwrap_err();
    assert!(e.is_truncation(), "{e}");
    assert!(matches!(e.offset(), Some(Offset::Decompressed(_))), "{e}");
    // Corrupt the deflate data.
    let mut copy = bytes.clone();
    for b in &mut copy[5000..5100] {
        *b = !*b;
    }
    let e = NormalTape::read(&copy[..]).unwrap_err();
    assert!(matches!(e.offset(), Some(Offset::Decompressed(_))), "{e}");
    let core: recfmt_core::Error = e.into();
    assert_eq!(core.kind(), recfmt_core::ErrorKind::Malformed);
    println!("{core}");
}

#[test]
fn limits_are_checked_before_allocating() {
    let Some(bytes) = decompressed(SAMPLES[0]) else {
        return;
    };
    let options = ReadOptions {
        limits: Limits {
            max_record_len: 4096,
            ..Limits::default()
        },
        ..ReadOptions::default()
    };
    let mut reader = Reader::with_options(&bytes[..], &options).unwrap();
    let e = reader.read_header().unwrap_err();
    match e {
        Error::Limit {
            what,
            value,
            offset,
            ..
        } => {
            assert_eq!(what, "container size");
            assert_eq!(value, 40929);
            assert_eq!(offset, Offset::File(1083));
        }
        other => panic!("{other}"),
    }
    // A container size of 2^63 in a tiny file is a limit error, not an allocation.
    let mut copy = bytes[..100].to_vec();
    copy[52..60].copy_from_slice(&(1u64 << 63).to_le_bytes());
    let e = NormalTape::read(&copy[..]).unwrap_err();
    assert!(matches!(e, Error::Limit { .. }), "{e}");
    // Within the limit but beyond the data: a truncation, found without allocating it all.
    copy[52..60].copy_from_slice(&(200u64 << 20).to_le_bytes());
    let e = NormalTape::read(&copy[..]).unwrap_err();
    assert!(e.is_truncation(), "{e}");
}

#[test]
fn strict_mode_rejects_trailing_bytes_lenient_keeps_them() {
    let Some(mut bytes) = decompressed(SAMPLES[2]) else {
        return;
    };
    bytes.write_all(b"junk").unwrap();
    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    let e = Reader::with_options(&bytes[..], &strict)
        .unwrap()
        .read_tape()
        .unwrap_err();
    assert_eq!(
        e.offset(),
        Some(Offset::File(bytes.len() as u64 - 4)),
        "{e}"
    );
    let tape = NormalTape::read(&bytes[..]).unwrap();
    assert_eq!(tape.trailing, b"junk");
    assert!(tape.to_decompressed_bytes().unwrap() == bytes);
}
