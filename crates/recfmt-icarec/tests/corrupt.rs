//! Truncated and bit-flipped inputs never panic; errors name the file, the byte offset and
//! what was expected.

#![allow(clippy::unwrap_used)] // helpers in a test file fail by panicking

use std::path::Path;

use recfmt_core::{FrameBuf, ReadOptions, RecordingReader};
use recfmt_icarec::{IcarecDir, IcarecRecording, OpenOptions, generate};

const FILES: [&str; 4] = [
    "schema.json",
    "static_signals.bin",
    "dynamic_signals.bin",
    "metadata.json",
];

/// Opens and reads everything; returns the error text, if any.
fn exercise(dir: &Path, options: &OpenOptions) -> Option<String> {
    let rec = match IcarecDir::open(dir, options) {
        Ok(r) => r,
        Err(e) => return Some(recfmt_core::Error::from(e).to_string()),
    };
    let _ = rec.state_at(0.5);
    let _ = rec.state_at(f64::NAN);
    let _ = rec.static_values();
    let mut adapter = match IcarecRecording::from_dir(rec, options.read.strict) {
        Ok(a) => a,
        Err(e) => return Some(recfmt_core::Error::from(e).to_string()),
    };
    let mut row = FrameBuf::default();
    loop {
        match adapter.read_frame(&mut row) {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => return Some(e.to_string()),
        }
    }
}

fn check_error(text: &str, context: &str) {
    let names_file = FILES.iter().any(|f| text.contains(f));
    assert!(names_file, "{context}: error names no file: {text}");
    assert!(
        text.contains("at byte "),
        "{context}: no byte offset: {text}"
    );
    assert!(
        text.contains("expected") || text.contains("limit exceeded"),
        "{context}: no expectation: {text}"
    );
}

fn fixture(root: &Path) -> std::path::PathBuf {
    let dir = root.join("orig");
    generate::write_all_types(&dir, 6).unwrap();
    dir
}

fn options(strict: bool, verify: bool) -> OpenOptions {
    OpenOptions {
        read: ReadOptions {
            strict,
            ..ReadOptions::default()
        },
        verify,
        skip_unknown_types: false,
    }
}

#[test]
fn truncated_files_never_panic_and_errors_say_where() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = fixture(tmp.path());
    let work = tmp.path().join("work");
    for name in FILES {
        let bytes = std::fs::read(orig.join(name)).unwrap();
        let step = (bytes.len() / 200).max(1);
        for len in (0..bytes.len()).step_by(step) {
            copy_dir(&orig, &work);
            std::fs::write(work.join(name), &bytes[..len]).unwrap();
            for (strict, verify) in [(false, false), (true, true)] {
                if let Some(err) = exercise(&work, &options(strict, verify)) {
                    check_error(&err, &format!("{name} cut to {len}"));
                } else if name != "dynamic_signals.bin" && (name != "metadata.json" || verify) {
                    panic!("{name} cut to {len} was accepted (strict {strict}, verify {verify})");
                }
            }
        }
    }
}

#[test]
fn bit_flips_never_panic_and_errors_say_where() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = fixture(tmp.path());
    let work = tmp.path().join("work");
    let mut errors = 0;
    let mut runs = 0;
    for name in FILES {
        let bytes = std::fs::read(orig.join(name)).unwrap();
        let step = (bytes.len() / 250).max(1);
        for (k, at) in (0..bytes.len()).step_by(step).enumerate() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 1 << (k % 8);
            copy_dir(&orig, &work);
            std::fs::write(work.join(name), &flipped).unwrap();
            for (strict, verify) in [(false, false), (true, true)] {
                runs += 1;
                if let Some(err) = exercise(&work, &options(strict, verify)) {
                    errors += 1;
                    check_error(&err, &format!("{name} bit {} at {at}", k % 8));
                }
            }
        }
    }
    // With verification on every flip is caught (checksum or digest).
    assert!(errors * 2 >= runs, "{errors} errors in {runs} runs");
}

#[test]
fn verification_catches_every_flip_and_lenient_reading_warns() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = fixture(tmp.path());
    let work = tmp.path().join("work");
    for name in ["schema.json", "static_signals.bin", "dynamic_signals.bin"] {
        let bytes = std::fs::read(orig.join(name)).unwrap();
        // A flip inside the data, not the structure: a signal name letter, a value byte.
        let at = match name {
            "schema.json" => {
                let text = String::from_utf8(bytes.clone()).unwrap();
                text.find("Vehicle.Aero.alpha").unwrap() + 9
            }
            _ => bytes.len() / 2,
        };
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x01;
        copy_dir(&orig, &work);
        std::fs::write(work.join(name), &flipped).unwrap();
        let err = exercise(&work, &options(false, true)).expect("verify must fail");
        check_error(&err, name);
        assert!(err.contains(name), "{err}");
        let lenient = IcarecDir::open(&work, &options(false, false)).unwrap();
        if name == "schema.json" {
            let w = &lenient.integrity().warnings;
            assert!(
                w.iter().any(|w| w.contains("expected checksum sha256:")),
                "{w:?}"
            );
        }
    }
}

#[test]
fn checksum_mismatch_is_a_warning_by_default_and_an_error_with_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = fixture(tmp.path());
    let path = orig.join("schema.json");
    let text = std::fs::read_to_string(&path).unwrap();
    // Reformatting does not change the checksum (it covers the canonical JSON).
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    std::fs::write(&path, serde_json::to_string(&value).unwrap()).unwrap();
    let rec = IcarecDir::open(&orig, &options(false, true)).unwrap();
    assert!(rec.integrity().warnings.is_empty());

    let changed = text.replace("\"units\": \"rad\"", "\"units\": \"deg\"");
    assert_ne!(changed, text);
    std::fs::write(&path, &changed).unwrap();
    let rec = IcarecDir::open(&orig, &options(false, false)).unwrap();
    assert_eq!(
        rec.integrity().warnings.len(),
        1,
        "{:?}",
        rec.integrity().warnings
    );
    let checksum_at = changed.find("\"checksum\"").unwrap();
    let err = IcarecDir::open(&orig, &options(false, true))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains(&format!(
            "schema.json: at byte {checksum_at}: expected checksum sha256:"
        )),
        "{err}"
    );

    let stripped = text.replace(
        &format!(
            ",\n  \"checksum\": {}",
            serde_json::to_string(&value["checksum"]).unwrap()
        ),
        "",
    );
    assert_ne!(stripped, text);
    std::fs::write(&path, stripped).unwrap();
    let err = IcarecDir::open(&orig, &options(false, true))
        .err()
        .unwrap()
        .to_string();
    assert!(err.ends_with("found none"), "{err}");
}

#[test]
fn static_block_of_the_wrong_size_is_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = fixture(tmp.path());
    let mut bytes = std::fs::read(orig.join("static_signals.bin")).unwrap();
    let s = bytes.len();
    bytes.push(0);
    std::fs::write(orig.join("static_signals.bin"), &bytes).unwrap();
    let err =
        recfmt_core::Error::from(IcarecDir::open(&orig, &OpenOptions::default()).unwrap_err());
    assert_eq!(err.kind(), recfmt_core::ErrorKind::Malformed);
    let text = err.to_string();
    assert!(
        text.ends_with(&format!(
            "static_signals.bin: icarec: at byte {s}: expected exactly {s} bytes (the static block: max offset + size over static signals), found {}",
            s + 1
        )),
        "{text}"
    );
}

#[test]
fn irregular_int32_slots_warn_once_or_fail_in_strict_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = fixture(tmp.path());
    let rec = IcarecDir::open(&orig, &OpenOptions::default()).unwrap();
    let mode = rec.schema().placed("Vehicle.GNC.mode").unwrap().offset;
    let stride = rec.schema().layout().stride();
    let path = orig.join("dynamic_signals.bin");
    let mut bytes = std::fs::read(&path).unwrap();
    for frame in [1, 3] {
        bytes[frame * stride + 8 + mode + 6] = 0x12;
    }
    std::fs::write(&path, &bytes).unwrap();
    let mut adapter = IcarecRecording::open(&orig, &OpenOptions::default()).unwrap();
    let mut row = FrameBuf::default();
    while adapter.read_frame(&mut row).unwrap() {}
    let w = &adapter.integrity().warnings;
    assert_eq!(w.len(), 1, "{w:?}");
    let at = stride + 8 + mode;
    assert!(
        w[0].contains(&format!(
            "dynamic_signals.bin: at byte {at}: expected int32"
        )),
        "{w:?}"
    );
    assert!(
        exercise(&orig, &options(true, false))
            .unwrap()
            .contains(&format!(
                "at byte {at}: expected int32 \"Vehicle.GNC.mode\""
            ))
    );
}

#[test]
fn missing_files_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = fixture(tmp.path());
    std::fs::remove_file(orig.join("dynamic_signals.bin")).unwrap();
    let err = IcarecDir::open(&orig, &OpenOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("dynamic_signals.bin"), "{err}");
    assert!(
        IcarecDir::open(&tmp.path().join("nowhere"), &OpenOptions::default())
            .unwrap_err()
            .to_string()
            .contains("schema.json")
    );
}

#[test]
fn huge_declared_frames_do_not_allocate() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = fixture(tmp.path());
    let path = orig.join("schema.json");
    let text = std::fs::read_to_string(&path).unwrap();
    // Move Debug.counter to 200 MB: a 200 MB stride over a ~1 kB file.
    let debug = text.find("\"Debug.counter\"").unwrap();
    let offset_at = debug + text[debug..].find("\"offset\": ").unwrap() + "\"offset\": ".len();
    let end = offset_at + text[offset_at..].find(',').unwrap();
    let changed = format!("{}{}{}", &text[..offset_at], 200_000_000, &text[end..]);
    std::fs::write(&path, changed).unwrap();
    let rec = IcarecDir::open(&orig, &OpenOptions::default()).unwrap();
    assert_eq!(rec.frame_count(), 0);
    assert!(exercise(&orig, &OpenOptions::default()).is_none());
    // Above the record limit it is refused outright.
    let small = OpenOptions {
        read: ReadOptions {
            limits: recfmt_core::Limits {
                max_record_len: 1 << 20,
                ..recfmt_core::Limits::default()
            },
            ..ReadOptions::default()
        },
        ..OpenOptions::default()
    };
    let err = exercise(&orig, &small).unwrap();
    assert!(
        err.contains("within the payload limit of 1048576 bytes"),
        "{err}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in FILES {
        let src = from.join(f);
        if src.exists() {
            std::fs::copy(&src, to.join(f)).unwrap();
        }
    }
}
