//! `state_at` reads a few small pieces of a large recording, not the whole file.

#![allow(clippy::unwrap_used)] // helpers in a test file fail by panicking

use std::io::{Read, Seek, SeekFrom};

use recfmt_icarec::{IcarecDir, OpenOptions, SignalValue, generate, state_at};

/// Counts bytes read and read calls through a `Read + Seek`.
struct Counting<R> {
    inner: R,
    bytes: u64,
    reads: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        self.reads += 1;
        Ok(n)
    }
}

impl<R: Seek> Seek for Counting<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

#[test]
fn state_at_reads_only_a_few_pages_of_a_large_recording() {
    const FRAMES: u64 = 100_000;
    let tmp = tempfile::tempdir().unwrap();
    generate::write_all_types(tmp.path(), FRAMES).unwrap();
    let rec = IcarecDir::open(tmp.path(), &OpenOptions::default()).unwrap();
    let stride = rec.schema().layout().stride() as u64;
    let path = tmp.path().join("dynamic_signals.bin");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), FRAMES * stride);

    for (t, frame) in [
        (0.0, 0),
        (1234.567, 79_012),
        (12_345.0 * generate::DT, 12_345),
        (1e9, FRAMES - 1),
    ] {
        let mut file = Counting {
            inner: std::fs::File::open(&path).unwrap(),
            bytes: 0,
            reads: 0,
        };
        let state = state_at(rec.schema(), rec.statics(), &mut file, t, &path)
            .unwrap()
            .unwrap();
        assert_eq!(state.frame, frame, "t = {t}");
        assert_eq!(state.t, frame as f64 * generate::DT);
        // ceil(log2(100_000)) = 17 probes of 8 bytes, then one frame.
        assert!(file.reads <= 20, "{} reads", file.reads);
        assert!(file.bytes <= 17 * 8 + stride, "{} bytes read", file.bytes);
        assert!(file.bytes < 4096, "more than one page: {}", file.bytes);
        // Every signal, static ones included, as whole values and as expanded columns.
        for (name, value) in &state.values {
            let expected = generate::dynamic_value(name, frame)
                .or_else(|| generate::static_value(name))
                .unwrap();
            assert_eq!(*value, expected, "{name}");
        }
        assert_eq!(state.values.len(), rec.schema().doc().signals.len());
        assert_eq!(
            state.get("Vehicle.Nav.position.z"),
            Some(SignalValue::Double(1000.0 + frame as f64))
        );
        assert_eq!(
            state.get("Vehicle.inertia.xz"),
            Some(SignalValue::Double(-0.5))
        );
        assert_eq!(
            state.get("Vehicle.config_rev"),
            Some(SignalValue::Int32(-3))
        );
    }

    // Before the first frame there is no state.
    assert_eq!(rec.state_at(-0.001).unwrap(), None);
}

#[test]
fn state_at_ignores_a_torn_last_frame() {
    let tmp = tempfile::tempdir().unwrap();
    generate::write_torn(tmp.path(), 10, 50).unwrap();
    let rec = IcarecDir::open(tmp.path(), &OpenOptions::default()).unwrap();
    let state = rec.state_at(1e9).unwrap().unwrap();
    assert_eq!(state.frame, 9);
}
