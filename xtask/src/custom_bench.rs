//! `cargo xtask bench custom [--rows N] [--runs K]`: a reader written only against the
//! documented trait (the example crate's binary beacon log, which implements `read_row` and
//! nothing else) against the built-in USVLOG reader, converting the same pings (5 M rows by
//! default) to Parquet through the same front door, in the same run, alternating, and the
//! median of each as a ratio. The goal (issue 22): within 10 % of USVLOG.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{cargo, project_root, run};

/// Runs the benchmark; prints both medians and the ratio.
pub fn bench_custom(args: &[String]) -> Result<()> {
    let mut rows: u64 = 5_000_000;
    let mut runs: usize = 7;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let value = rest
            .next()
            .with_context(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--rows" => rows = value.parse().context("--rows takes a whole number")?,
            "--runs" => runs = value.parse().context("--runs takes a whole number")?,
            _ => bail!("usage: cargo xtask bench custom [--rows N] [--runs K]"),
        }
    }
    run(cargo().args([
        "build",
        "--release",
        "-p",
        "recfmt-example",
        "--example",
        "custom_bench",
    ]))?;
    let program = project_root().join("target/release/examples/custom_bench");
    let data = project_root().join(format!("target/bench-data/custom-{rows}"));
    if !data.join("pings.beaconbin").exists() || !data.join("usvlog/timeseries.bin").exists() {
        let _ = std::fs::remove_dir_all(&data);
        run(Command::new(&program)
            .arg("generate")
            .arg(rows.to_string())
            .arg(&data))?;
    }
    let binary = data.join("pings.beaconbin");
    let usvlog = data.join("usvlog");
    let layout = usvlog.join("layouts.toml");
    let out = data.join("out");
    let mut custom = Vec::new();
    let mut builtin = Vec::new();
    for _ in 0..runs {
        custom.push(convert(&program, &binary, &out, None)?);
        builtin.push(convert(&program, &usvlog, &out, Some(&layout))?);
    }
    let (custom, builtin) = (median(&mut custom), median(&mut builtin));
    println!(
        "custom reader (read_row only), {rows} rows to Parquet: {custom:.3} s (median of {runs})"
    );
    println!("built-in USVLOG reader, the same values:        {builtin:.3} s (median of {runs})");
    println!(
        "custom / built-in: {:.2} (goal <= 1.10)",
        custom / builtin.max(1e-9)
    );
    Ok(())
}

/// One conversion into a fresh `out`, timed by the program itself (open to last file moved
/// into place).
fn convert(program: &Path, input: &Path, out: &Path, layout: Option<&Path>) -> Result<f64> {
    let _ = std::fs::remove_dir_all(out);
    let mut command = Command::new(program);
    command.arg("convert").arg(input).arg(out).args(layout);
    let output = command.output()?;
    if !output.status.success() {
        bail!(
            "{command:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .context("the benchmark program printed no time")
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}
