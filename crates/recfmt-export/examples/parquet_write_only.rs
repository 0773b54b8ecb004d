//! parquet-rs writing decoded tables alone, on one thread: the encoder's own cost, beside
//! pyarrow's writing-only figure in `cargo xtask bench compare` (issue 24).
//!
//! ```sh
//! cargo run --release -p recfmt-export --example parquet_write_only -- TABLES_DIR OUT_DIR RUNS
//! ```
//!
//! Loads every `*.parquet` of `TABLES_DIR` into memory (not timed), then writes them all into
//! `OUT_DIR` `RUNS` times with pyarrow's settings in that bench (zstd level 1, no dictionary,
//! column-chunk statistics, row groups of 1 Mi rows) and prints one JSON line with the best
//! wall and CPU seconds (user + sys of this process; one thread writes, so they match).

use std::path::{Path, PathBuf};
use std::time::Instant;

use arrow_array::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

/// Rows per row group, as the bench asks of pyarrow.
const ROW_GROUP_ROWS: usize = 1 << 20;

type Tables = Vec<(String, Vec<RecordBatch>)>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [tables_dir, out_dir, runs] = args.as_slice() else {
        return Err("usage: parquet_write_only TABLES_DIR OUT_DIR RUNS".into());
    };
    let runs: usize = runs.parse()?;
    let tables = load(Path::new(tables_dir))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build();
    let out = PathBuf::from(out_dir);
    let mut best: Option<(f64, f64)> = None;
    for _ in 0..runs.max(1) {
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out)?;
        let cpu = cpu_seconds();
        let started = Instant::now();
        for (name, batches) in &tables {
            let file = std::fs::File::create(out.join(format!("{name}.parquet")))?;
            let mut writer = ArrowWriter::try_new(file, batches[0].schema(), Some(props.clone()))?;
            for batch in batches {
                writer.write(batch)?;
            }
            writer.close()?;
        }
        let (wall, cpu) = (started.elapsed().as_secs_f64(), cpu_seconds() - cpu);
        eprintln!("parquet_write_only: {wall:.3} s, CPU {cpu:.3} s");
        best = Some(best.map_or((wall, cpu), |(w, c)| (w.min(wall), c.min(cpu))));
    }
    let _ = std::fs::remove_dir_all(&out);
    let (wall, cpu) = best.unwrap_or_default();
    println!("{{\"seconds\": {wall:.4}, \"cpu_seconds\": {cpu:.4}}}");
    Ok(())
}

/// Every non-empty `*.parquet` table of `dir`, by file name.
fn load(dir: &Path) -> Result<Tables, Box<dyn std::error::Error>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.retain(|p| p.extension().is_some_and(|e| e == "parquet"));
    paths.sort();
    let mut tables = Vec::new();
    for path in paths {
        let file = std::fs::File::open(&path)?;
        let batches: Vec<RecordBatch> = ParquetRecordBatchReaderBuilder::try_new(file)?
            .with_batch_size(65_536)
            .build()?
            .collect::<Result<_, _>>()?;
        if batches.is_empty() {
            continue;
        }
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        tables.push((name, batches));
    }
    Ok(tables)
}

/// User + system CPU seconds of this process so far (`/proc/self/stat`; 0 where there is none).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse().ok())
        .collect();
    // Clock ticks are 100 per second on Linux.
    ticks.iter().sum::<f64>() / 100.0
}
