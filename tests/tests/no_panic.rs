//! Truncated and bit-flipped copies of every fixture never panic: each read ends in rows plus an
//! integrity report, or in an error.

use recfmt_core::{FrameBuf, ReadOptions, RecordingReader};
use recfmt_tests::fixture;
use recfmt_tlv::{Meta, UsvlogRecording};

fn read_all(
    bytes: &[u8],
    meta: Option<&Meta>,
    options: &ReadOptions,
) -> Result<u64, recfmt_core::Error> {
    let mut rec = UsvlogRecording::new(bytes, meta, &[], options, None)?;
    let mut frame = FrameBuf::default();
    let mut rows = 0;
    while rec.read_frame(&mut frame)? {
        rows += 1;
    }
    Ok(rows)
}

#[test]
fn truncations_and_bit_flips_never_panic() {
    let dir = fixture("usvlog/all_types");
    let bytes = std::fs::read(dir.join("timeseries.bin")).unwrap();
    let meta = Meta::parse(std::fs::read_to_string(dir.join("meta.json")).unwrap()).unwrap();
    let lenient = ReadOptions::default();
    let resync = ReadOptions {
        resync: true,
        ..ReadOptions::default()
    };
    let strict = ReadOptions {
        strict: true,
        ..ReadOptions::default()
    };
    let full_rows = read_all(&bytes, Some(&meta), &lenient).unwrap();

    for cut in (0..bytes.len()).step_by(7) {
        for options in [&lenient, &resync, &strict] {
            let result = read_all(&bytes[..cut], Some(&meta), options);
            if cut >= 32 && !options.strict {
                assert!(
                    result.as_ref().is_ok_and(|&rows| rows <= full_rows),
                    "cut {cut}: {result:?}"
                );
            }
        }
    }

    // Deterministic pseudo-random flips (xorshift), a few bits per copy.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..300 {
        let mut copy = bytes.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() % copy.len() as u64) as usize;
            copy[at] ^= 1 << (next() % 8);
        }
        for options in [&lenient, &resync, &strict] {
            let _ = read_all(&copy, Some(&meta), options);
            let _ = read_all(&copy, None, options);
        }
    }
}

#[test]
fn resync_recovers_the_records_after_a_corrupt_length() {
    let dir = fixture("usvlog/all_types");
    let mut bytes = std::fs::read(dir.join("timeseries.bin")).unwrap();
    // The first record's length field (bytes 32+10..32+12) now claims 0xFFFF bytes.
    bytes[42] = 0xFF;
    bytes[43] = 0xFF;
    let plain = read_all(&bytes, None, &ReadOptions::default()).unwrap();
    let resynced = read_all(
        &bytes,
        None,
        &ReadOptions {
            resync: true,
            ..ReadOptions::default()
        },
    )
    .unwrap();
    let full = read_all(
        &std::fs::read(dir.join("timeseries.bin")).unwrap(),
        None,
        &ReadOptions::default(),
    )
    .unwrap();
    assert!(
        plain < full / 2,
        "without resync the bad length swallows much of the file ({plain})"
    );
    assert_eq!(resynced, full - 1, "resync loses only the corrupt record");
}
