//! Reads streams of a recording into Arrow record batches, one pass per stream, as a Rust user
//! of the library would (`recfmt::open_with(..)?.batches(stream)?`, which is what
//! `recfmt.Recording.read` does from Python), and prints how long the reads took. `cargo xtask bench python` compares it with the Python package.
//!
//! ```text
//! cargo run --release --example read_batches -- PATH [--layout FILE]... [--stream NAME]...
//! cargo run --release --example read_batches -- PATH [--layout FILE]... --one-pass
//! ```
//! prints one JSON line: `{"seconds": S, "rows": {"<stream>": N, ...}}`.
//!
//! `--one-pass` reads every stream in a single pass instead (`StreamBatchReader`, the loop the
//! exporters use), each record batch dropped once made (memory stays at one batch per stream):
//! the full read of `cargo xtask bench formats`, every value decoded into Arrow and nothing
//! written.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use recfmt::OpenOptions;
use recfmt::core::RecordingReader;
use recfmt::export::StreamBatchReader;

/// Rows per batch, as `recfmt convert` and the Python package use.
const BATCH_ROWS: usize = recfmt::BatchOptions::DEFAULT_BATCH_ROWS;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut options = OpenOptions::default();
    let mut streams = Vec::new();
    let mut one_pass = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--one-pass" => one_pass = true,
            "--layout" => options
                .layouts
                .push(args.next().ok_or("--layout FILE")?.into()),
            "--stream" => streams.push(args.next().ok_or("--stream NAME")?),
            _ => path = Some(PathBuf::from(arg)),
        }
    }
    let path = path.ok_or("usage: read_batches PATH [--layout FILE]... [--stream NAME]...")?;
    let registry = recfmt::default_registry();
    if one_pass {
        let started = Instant::now();
        let mut reader = recfmt::open_with(registry, &path, &options)?.into_reader();
        let rows = read_all(reader.as_mut())?;
        let seconds = started.elapsed().as_secs_f64();
        println!("{}", serde_json::json!({"seconds": seconds, "rows": rows}));
        return Ok(());
    }
    if streams.is_empty() {
        let recording = recfmt::open_with(registry, &path, &options)?;
        streams = recording
            .schema()
            .streams
            .iter()
            .map(|s| s.name.clone())
            .collect();
    }
    let started = Instant::now();
    let mut rows = serde_json::Map::new();
    for stream in &streams {
        let table: Vec<recfmt::export::RecordBatch> = recfmt::open_with(registry, &path, &options)?
            .batches(stream)?
            .collect::<Result<_, _>>()?;
        let n: usize = table.iter().map(|batch| batch.num_rows()).sum();
        rows.insert(stream.clone(), n.into());
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("{}", serde_json::json!({"seconds": seconds, "rows": rows}));
    Ok(())
}

/// Every stream in one pass, as record batches that are made and dropped: rows per stream.
fn read_all(
    reader: &mut dyn RecordingReader,
) -> Result<serde_json::Map<String, serde_json::Value>, Box<dyn std::error::Error>> {
    let schema = reader.schema().clone();
    let arrow_schemas: Vec<_> = schema
        .streams
        .iter()
        .map(|desc| Arc::new(recfmt::export::arrow_schema(reader.header(), desc)))
        .collect();
    let mut rows = vec![0usize; schema.streams.len()];
    for batch in StreamBatchReader::all(reader, BATCH_ROWS) {
        let batch = batch?;
        let stream = batch.stream();
        let arrow = recfmt::export::record_batch(&arrow_schemas[stream], batch)?;
        rows[stream] += arrow.num_rows();
    }
    Ok(schema
        .streams
        .iter()
        .zip(rows)
        .map(|(desc, n)| (desc.name.clone(), n.into()))
        .collect())
}
