//! Decode throughput of USVLOG: the raw record reader, the generic adapter row by row (rows
//! of decoded values) and in batches (typed column vectors), over an in-memory session written
//! by the crate's own generator.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use recfmt_core::{BatchSet, FrameBuf, ReadOptions, RecordingReader};
use recfmt_tlv::io::{Reader, Writer};
use recfmt_tlv::{FileHeader, Record, UsvlogRecording, generate};

fn session_bytes(steps: u64) -> Vec<u8> {
    let mut w = Writer::new(Vec::new());
    w.write_header(&FileHeader::new(1, generate::T0_US))
        .expect("header");
    for r in generate::all_type_records(steps).expect("records") {
        w.write_record(&r).expect("record");
    }
    w.into_inner().expect("bytes")
}

fn read(c: &mut Criterion) {
    let bytes = session_bytes(50_000);
    let mut group = c.benchmark_group("usvlog");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("records", |b| {
        b.iter(|| {
            let mut reader = Reader::new(&bytes[..]);
            reader.read_header().expect("header");
            let mut record = Record::default();
            let mut n = 0u64;
            while reader.read_record(&mut record).expect("record") {
                n += 1;
            }
            n
        });
    });
    group.bench_function("rows", |b| {
        b.iter(|| {
            let options = ReadOptions::default();
            let mut rec =
                UsvlogRecording::new(&bytes[..], None, &[], &options, None).expect("open");
            let mut frame = FrameBuf::default();
            let mut n = 0u64;
            while rec.read_frame(&mut frame).expect("row") {
                n += 1;
            }
            n
        });
    });
    group.bench_function("batches", |b| {
        b.iter(|| {
            let options = ReadOptions::default();
            let mut rec =
                UsvlogRecording::new(&bytes[..], None, &[], &options, None).expect("open");
            let schema = rec.schema().clone();
            let mut batches = BatchSet::new(&schema, 65_536);
            let mut n = 0usize;
            loop {
                let more = rec.read_batches(&mut batches).expect("batch");
                for batch in batches.take_ready(more) {
                    n += batch.rows();
                }
                if !more {
                    break n;
                }
            }
        });
    });
    group.finish();
}

criterion_group!(benches, read);
criterion_main!(benches);
