//! `cargo xtask bench python [--mb N] [--gib G]`: the Python package against the Rust batch
//! read (issue 13's goals).
//!
//! - Speed: on the generated USVLOG session of at least N MB (default 400, the 382 MB
//!   session), every stream read into Arrow tables, one pass per stream, by the release
//!   `read_batches` example (Rust) and by `Recording.read` (Python, the package built with
//!   `maturin develop --release` into `target/pyenv`); best of [`RUNS`] each, timed inside each
//!   process around the reads only. Goal: Python within 10 % of Rust.
//! - Memory: `Recording.batches()` over every stream of a generated session of at least G GiB
//!   (default 10), and of 1 GiB for comparison, under the peak-RSS wrapper. Goal: under 200 MB.
//! - One pass: `Recording.read_all()` (every stream in one pass) against `read()` of the
//!   largest stream alone, on the same session. Goal: at most 1.3 times.
//! - Scans: `recfmt.polars.scan(...).collect()` and the Spark data source (when pyspark is
//!   installed) over the largest stream, against `pyarrow.parquet.read_table` of its Parquet
//!   conversion (reported, no goal).
//! - Install: `pip install ./python` into a fresh virtualenv, compiling into an empty target
//!   folder from the filled crate cache (the `wheel` profile): time and the extension's size.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::session::{Measured, ensure_session, peak_text};
use crate::{PEAK_RSS_LIMIT_BYTES, cargo, project_root, python_env, run};

/// Runs of the speed measurement; the best one counts.
const RUNS: usize = 3;

/// `cargo xtask bench python [--mb N] [--gib G]`.
pub fn bench_python(args: &[String]) -> Result<()> {
    let mut mb = 400u64;
    let mut gib = 10u64;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().context("a flag needs a value")?;
        match flag.as_str() {
            "--mb" => mb = value.parse().context("--mb takes a whole number")?,
            "--gib" => gib = value.parse().context("--gib takes a whole number")?,
            _ => bail!("usage: cargo xtask bench python [--mb N] [--gib G]"),
        }
    }
    let root = project_root();
    let python = python_env()?;
    let read_batches = build_read_batches()?;
    run(Command::new(&python)
        .args(["-m", "maturin", "develop", "--release"])
        .current_dir(root.join("python"))
        .env("VIRTUAL_ENV", root.join("target/pyenv")))?;
    let script = root.join("xtask/bench_python.py");
    let data = root.join("target/bench-data");

    let session = data.join(format!("usvlog-{mb}mb"));
    ensure_session(&session, mb * 1_000_000)?;
    let layout = session.join("layouts.toml");
    let bytes = std::fs::metadata(session.join("timeseries.bin"))?.len();
    let mut rust_best = f64::INFINITY;
    let mut rust_rows = Value::Null;
    for _ in 0..RUNS {
        let (seconds, rows) = json_line(
            Command::new(&read_batches)
                .arg(&session)
                .arg("--layout")
                .arg(&layout),
        )?;
        rust_best = rust_best.min(seconds);
        rust_rows = rows;
    }
    let (python_seconds, python_rows) = json_line(
        Command::new(&python)
            .arg(&script)
            .arg("read")
            .arg(&session)
            .arg(&layout)
            .arg(RUNS.to_string()),
    )?;
    if python_rows != rust_rows {
        bail!("Python read {python_rows}, Rust read {rust_rows}");
    }
    let ratio = python_seconds / rust_best;
    let mut lines = vec![format!(
        "read every stream into Arrow tables, {:.0} MB: Rust {rust_best:.2} s ({:.0} MB/s), \
         Python {python_seconds:.2} s ({:.0} MB/s): Python/Rust {ratio:.3} (goal <= 1.10: {})",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / rust_best,
        bytes as f64 / 1e6 / python_seconds,
        if ratio <= 1.10 { "met" } else { "MISSED" },
    )];

    lines.extend(one_pass_and_scans(&python, &script, &session, &layout)?);
    lines.push(install_line(&python, &data)?);

    let mut peaks = Vec::new();
    for size in [1, gib] {
        let big = data.join(format!("usvlog-{size}gib"));
        ensure_session(&big, size << 30)?;
        let measured = batches_peak(&python, &script, &big, &data)?;
        lines.push(format!(
            "Recording.batches() over every stream of {:.2} GB: {:.1} s, {}",
            std::fs::metadata(big.join("timeseries.bin"))?.len() as f64 / 1e9,
            measured.seconds,
            peak_text(&measured)
        ));
        peaks.push(measured.peak_bytes);
    }
    println!("\npython benchmark:");
    for line in &lines {
        println!("  {line}");
    }
    if peaks.iter().any(|&p| p >= PEAK_RSS_LIMIT_BYTES) {
        bail!("peak memory at or above 200 MB");
    }
    Ok(())
}

/// Runs the Python batches pass over `session` under the peak-RSS wrapper.
fn batches_peak(python: &Path, script: &Path, session: &Path, data: &Path) -> Result<Measured> {
    let rss_file = data.join("peak-rss");
    let started = std::time::Instant::now();
    run(Command::new(std::env::current_exe()?)
        .arg("peak-rss")
        .arg(&rss_file)
        .arg(python)
        .arg(script)
        .arg("batches")
        .arg(session)
        .arg(session.join("layouts.toml")))?;
    let peak_kib: u64 = std::fs::read_to_string(&rss_file)?.trim().parse()?;
    Ok(Measured {
        seconds: started.elapsed().as_secs_f64(),
        peak_bytes: peak_kib * 1024,
    })
}

/// The one-pass read against one stream's, and the polars and Spark scans against Parquet.
fn one_pass_and_scans(
    python: &Path,
    script: &Path,
    session: &Path,
    layout: &Path,
) -> Result<Vec<String>> {
    let onepass = json_value(
        Command::new(python)
            .arg(script)
            .args(["onepass".as_ref(), session.as_os_str(), layout.as_os_str()])
            .arg(RUNS.to_string()),
    )?;
    let all = onepass["seconds"].as_f64().context("no seconds")?;
    let one = onepass["one_stream_seconds"]
        .as_f64()
        .context("no one_stream_seconds")?;
    let stream = onepass["one_stream"]
        .as_str()
        .context("no one_stream")?
        .to_owned();
    let ratio = all / one;
    let mut lines = vec![format!(
        "read_all() of every stream in one pass {all:.2} s, read() of {stream} alone {one:.2} s: \
         {ratio:.2}x (goal <= 1.3: {})",
        if ratio <= 1.3 { "met" } else { "MISSED" }
    )];
    let parquet_dir = session.with_extension("parquet");
    let parquet = parquet_dir.join(format!("{stream}.parquet"));
    if !parquet.exists() {
        run(Command::new(python).args([
            "-c".as_ref(),
            "import sys, recfmt; recfmt.convert(sys.argv[1], 'parquet', out=sys.argv[2], \
             layouts=[sys.argv[3]], streams=[sys.argv[4]], force=True)"
                .as_ref(),
            session.as_os_str(),
            parquet_dir.as_os_str(),
            layout.as_os_str(),
            stream.as_ref(),
        ]))?;
    }
    let scans = json_value(
        Command::new(python)
            .arg(script)
            .args(["scans".as_ref(), session.as_os_str(), layout.as_os_str()])
            .arg(&stream)
            .arg(&parquet),
    )?;
    let parquet_seconds = scans["parquet_seconds"]
        .as_f64()
        .context("no parquet_seconds")?;
    let polars = scans["polars_seconds"]
        .as_f64()
        .context("no polars_seconds")?;
    let spark = scans["spark_seconds"]
        .as_f64()
        .map_or("not installed".to_owned(), |s| {
            format!("{s:.2} s ({:.1}x)", s / parquet_seconds)
        });
    lines.push(format!(
        "{stream}, {} rows: pyarrow.parquet.read_table {parquet_seconds:.2} s, \
         recfmt.polars.scan().collect() {polars:.2} s ({:.1}x), Spark data source {spark}",
        scans["rows"],
        polars / parquet_seconds
    ));
    Ok(lines)
}

/// `pip install ./python` into a fresh virtualenv, compiled into an empty target folder.
fn install_line(python: &Path, data: &Path) -> Result<String> {
    let venv = data.join("install-venv");
    let target = data.join("install-target");
    let _ = std::fs::remove_dir_all(&venv);
    let _ = std::fs::remove_dir_all(&target);
    run(Command::new(python).args(["-m", "venv"]).arg(&venv))?;
    let started = std::time::Instant::now();
    run(Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg(project_root().join("python"))
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_INCREMENTAL", "0"))?;
    let seconds = started.elapsed().as_secs_f64();
    let extension = crate::files_under(&venv)?
        .into_iter()
        .find(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("_recfmt") && n.ends_with(".so"))
        })
        .context("the installed package has no extension module")?;
    let bytes = std::fs::metadata(venv.join(&extension))?.len();
    let _ = std::fs::remove_dir_all(&target);
    Ok(format!(
        "pip install ./python into a fresh venv (empty target folder, filled crate cache): \
         {seconds:.0} s (goal <= 360 s: {}), extension {:.1} MB",
        if seconds <= 360.0 { "met" } else { "MISSED" },
        bytes as f64 / 1e6
    ))
}

/// Runs `cmd` and reads the JSON object on the last line it prints.
pub(crate) fn json_value(cmd: &mut Command) -> Result<Value> {
    let output = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !output.status.success() {
        bail!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let last = text
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or("");
    serde_json::from_str(last).with_context(|| format!("{cmd:?} printed no JSON line"))
}

/// Runs `cmd` and reads its one JSON line `{"seconds": S, "rows": {...}}`.
fn json_line(cmd: &mut Command) -> Result<(f64, Value)> {
    let output = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !output.status.success() {
        bail!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let line: Value = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("{cmd:?} printed no JSON line"))?;
    let seconds = line["seconds"]
        .as_f64()
        .context("no \"seconds\" in the JSON line")?;
    Ok((seconds, line["rows"].clone()))
}

/// Builds the release `read_batches` example (the documented batch read, `crates/recfmt/
/// examples/read_batches.rs`) and returns its path.
pub(crate) fn build_read_batches() -> Result<std::path::PathBuf> {
    run(cargo().args([
        "build",
        "--release",
        "-p",
        "recfmt",
        "--example",
        "read_batches",
        // The binary's features, so the two builds share the compiled library.
        "--features",
        "cli",
    ]))?;
    Ok(project_root().join("target/release/examples/read_batches"))
}
