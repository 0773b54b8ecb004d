//! Warmstart lookups on a large recording: `state_at(t)` by binary search over the fixed-stride
//! frames of a 1 GB `dynamic_signals.bin` (5,000,000 frames of 216 bytes), generated once into
//! `target/bench-data`.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use recfmt_icarec::{IcarecDir, generate};

/// True under `cargo bench` (criterion gets `--bench`); `cargo test --all-targets` runs each
/// benchmark once as a smoke test, which needs no gigabyte of data.
fn benchmarking() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn recording() -> PathBuf {
    let (frames, name): (u64, &str) = if benchmarking() {
        (5_000_000, "icarec-1g.icarec")
    } else {
        (10_000, "icarec-smoke.icarec")
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/bench-data")
        .join(name);
    let complete = dir.join("metadata.json").exists();
    if !complete {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.parent().expect("parent")).expect("bench-data dir");
        generate::write_all_types(&dir, frames).expect("generate the recording");
    }
    dir
}

fn state_at(c: &mut Criterion) {
    let dir = recording();
    let rec = IcarecDir::open(&dir, &Default::default()).expect("open");
    let len = rec.dynamic_len();
    assert!(!benchmarking() || len > 1_000_000_000, "{len} bytes");
    let end = rec.state_at(f64::MAX).expect("state").expect("a frame").t;
    let mut group = c.benchmark_group("icarec");
    let mut k = 0u64;
    group.bench_function("state_at_1GB", |b| {
        b.iter(|| {
            // Spread the lookups over the whole file so the page cache does not hold them all.
            k = k
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = (k >> 11) as f64 / (1u64 << 53) as f64 * end;
            rec.state_at(t).expect("lookup").expect("a frame").frame
        });
    });
    group.finish();
}

criterion_group!(benches, state_at);
criterion_main!(benches);
