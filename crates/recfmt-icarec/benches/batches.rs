//! Reading a whole ICAREC recording through the generic model: row by row (`read_frame`),
//! batches filled row by row (the default `read_batches`) and native batches, on 400,000
//! all-types frames (86 MB) generated once into `target/bench-data`.

use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use recfmt_core::{BatchSet, FrameBuf, RecordingReader};
use recfmt_icarec::{IcarecRecording, generate};

/// True under `cargo bench` (criterion gets `--bench`); `cargo test --all-targets` runs each
/// benchmark once as a smoke test on a small recording.
fn benchmarking() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn recording() -> PathBuf {
    let (frames, name): (u64, &str) = if benchmarking() {
        (400_000, "icarec-batches.icarec")
    } else {
        (2_000, "icarec-batches-smoke.icarec")
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/bench-data")
        .join(name);
    if !dir.join("metadata.json").exists() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.parent().expect("parent")).expect("bench-data dir");
        generate::write_all_types(&dir, frames).expect("generate the recording");
    }
    dir
}

fn open(dir: &Path) -> IcarecRecording {
    IcarecRecording::open(dir, &Default::default()).expect("open")
}

fn by_rows(dir: &Path) -> u64 {
    let mut rec = open(dir);
    let mut row = FrameBuf::default();
    let mut rows = 0;
    while rec.read_frame(&mut row).expect("row") {
        rows += 1;
    }
    rows
}

fn by_batches(dir: &Path, wanted: fn(usize) -> bool, native: bool) -> u64 {
    let mut rec = open(dir);
    let mut set = BatchSet::with_streams(rec.schema(), 4096, wanted);
    let mut rows = 0;
    loop {
        let more = if native {
            rec.read_batches(&mut set)
        } else {
            recfmt_core::read_batches_by_rows(&mut rec, &mut set)
        }
        .expect("batch");
        rows += set
            .take_at_least(1)
            .iter()
            .map(|b| b.rows() as u64)
            .sum::<u64>();
        if !more {
            return rows;
        }
    }
}

fn batches(c: &mut Criterion) {
    let dir = recording();
    let bytes = std::fs::metadata(dir.join(recfmt_icarec::DYNAMIC_FILE))
        .expect("size")
        .len();
    let mut group = c.benchmark_group("icarec_read");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("read_frame", |b| b.iter(|| by_rows(&dir)));
    group.bench_function("read_batches_by_rows_4096", |b| {
        b.iter(|| by_batches(&dir, |_| true, false))
    });
    group.bench_function("read_batches_4096", |b| {
        b.iter(|| by_batches(&dir, |_| true, true))
    });
    group.bench_function("read_batches_static_only", |b| {
        b.iter(|| by_batches(&dir, |s| s == 1, true))
    });
    group.finish();
}

criterion_group!(benches, batches);
criterion_main!(benches);
