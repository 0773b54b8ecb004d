//! Reads streams of a recording into Arrow record batches, one pass per stream, as a Rust user
//! of the batch API would (and as `recfmt.Recording.read` does from Python), and prints how
//! long the reads took. `cargo xtask bench python` compares it with the Python package.
//!
//! ```text
//! cargo run --release --example read_batches -- PATH [--layout FILE]... [--stream NAME]...
//! cargo run --release --example read_batches -- PATH [--layout FILE]... --one-pass
//! ```
//! prints one JSON line: `{"seconds": S, "rows": {"<stream>": N, ...}}`.
//!
//! `--one-pass` reads every stream in a single pass instead, each record batch dropped once
//! made (memory stays at one batch per stream): the full read of `cargo xtask bench formats`,
//! every value decoded into Arrow and nothing written.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use recfmt::core::{BatchSet, ReadOptions, RecordingReader};

/// Rows per batch, as `recfmt convert` and the Python package use.
const BATCH_ROWS: usize = 65_536;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut options = ReadOptions::default();
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
        let mut reader = registry.open_path(&path, None, &options)?;
        let rows = read_all(reader.as_mut())?;
        let seconds = started.elapsed().as_secs_f64();
        println!("{}", serde_json::json!({"seconds": seconds, "rows": rows}));
        return Ok(());
    }
    if streams.is_empty() {
        let reader = registry.open_path(&path, None, &options)?;
        streams = reader
            .schema()
            .streams
            .iter()
            .map(|s| s.name.clone())
            .collect();
    }
    let started = Instant::now();
    let mut rows = serde_json::Map::new();
    for stream in &streams {
        let mut reader = registry.open_path(&path, None, &options)?;
        let table = read_stream(reader.as_mut(), stream)?;
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
    let mut batches = BatchSet::new(&schema, BATCH_ROWS);
    loop {
        let more = reader.read_batches(&mut batches)?;
        for batch in batches.take_ready(more) {
            let stream = batch.stream();
            let arrow = recfmt::export::record_batch(&arrow_schemas[stream], batch)?;
            rows[stream] += arrow.num_rows();
        }
        if !more {
            break;
        }
    }
    Ok(schema
        .streams
        .iter()
        .zip(rows)
        .map(|(desc, n)| (desc.name.clone(), n.into()))
        .collect())
}

/// Every row of `stream` as record batches of [`BATCH_ROWS`] rows (the last one shorter).
fn read_stream(
    reader: &mut dyn RecordingReader,
    stream: &str,
) -> Result<Vec<recfmt::export::RecordBatch>, Box<dyn std::error::Error>> {
    let schema = reader.schema().clone();
    let index = schema.stream_index(stream).ok_or("no such stream")?;
    let arrow_schema = Arc::new(recfmt::export::arrow_schema(
        reader.header(),
        &schema.streams[index],
    ));
    let mut batches = BatchSet::with_streams(&schema, BATCH_ROWS, |s| s == index);
    let mut table = Vec::new();
    loop {
        let more = reader.read_batches(&mut batches)?;
        for batch in batches.take_ready(more) {
            table.push(recfmt::export::record_batch(&arrow_schema, batch)?);
        }
        if !more {
            return Ok(table);
        }
    }
}
