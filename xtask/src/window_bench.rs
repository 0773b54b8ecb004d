//! `cargo xtask bench window [--gb N] [--format NAME]`: one second out of the middle of a
//! long recording (`recfmt convert --start S --end S+1 --to parquet`) against a full scan of
//! it (`recfmt validate`), per format (issue 24: under 0.5 s from 10 GB, 1 s for a NanoVer
//! `.traj`; `nanover-zip`, a `.nanover.zip` of the same frames, has 0.5 s).
//!
//! The inputs are those of `bench formats` (the same generators and cache under
//! `target/bench-data/<format>-<MB>mb/`), of at least N GB (10^9 bytes, default 10); the page
//! cache is warmed with one `cat` of each before timing, best of three runs each.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::compare::{best_of, load_average, quiet};
use crate::formats_bench::{FORMATS, Input, prepare};
use crate::project_root;

/// The goal for a one-second window, in seconds: NanoVer `.traj` is allowed 1 s.
fn goal(format: &str) -> f64 {
    if format == "nanover" { 1.0 } else { 0.5 }
}

/// `cargo xtask bench window [--gb N] [--format NAME]`.
pub fn bench_window(args: &[String]) -> Result<()> {
    const USAGE: &str = "usage: cargo xtask bench window [--gb N] [--format NAME]";
    let mut gb = 10.0f64;
    let mut only: Option<String> = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().context(USAGE)?;
        match flag.as_str() {
            "--gb" => gb = value.parse().context("--gb takes a number")?,
            "--format" => only = Some(value.clone()),
            _ => bail!(USAGE),
        }
    }
    if let Some(f) = &only
        && !FORMATS.contains(&f.as_str())
    {
        bail!("unknown format {f} (one of {})", FORMATS.join(", "));
    }
    let recfmt = crate::build_release_recfmt()?;
    let data = project_root().join("target/bench-data");
    let out = data.join("window-out");
    let mb = (gb * 1000.0).round() as u64;
    let mut lines = Vec::new();
    for format in FORMATS {
        if only.as_deref().is_some_and(|f| f != format) {
            continue;
        }
        let input = prepare(format, &data, mb, mb * 1_000_000)?;
        quiet(Command::new("cat").args(&input.files))?;
        let (first, last) = span(&recfmt, &input)?;
        let start = first + (last - first) / 2.0;
        let command = |sub: &str| {
            let mut cmd = Command::new(&recfmt);
            cmd.arg(sub).args(&input.args).arg(&input.path);
            cmd
        };
        let window = best_of(
            &format!("{format}: 1 s window"),
            &out,
            "window",
            false,
            |dir| {
                let mut cmd = command("convert");
                cmd.arg("--start")
                    .arg(format!("{start}"))
                    .arg("--end")
                    .arg(format!("{}", start + 1.0))
                    .args(["--to", "parquet", "-o"])
                    .arg(dir.join("window.parquet"));
                vec![cmd]
            },
        )?;
        let scan = best_of(&format!("{format}: full scan"), &out, "scan", false, |_| {
            vec![command("validate")]
        })?;
        let verdict = if window < goal(format) {
            "met"
        } else {
            "missed"
        };
        lines.push(format!(
            "| {format} | {:.2} GB | {start:.1} s of {:.0} s | {window:.3} s | {scan:.2} s | {:.0}x | < {} s: {verdict} |",
            input.bytes as f64 / 1e9,
            last - first,
            scan / window,
            goal(format),
        ));
    }
    let _ = std::fs::remove_dir_all(&out);
    println!(
        "\n`cargo xtask bench window --gb {gb}` (load average {} at the end)\n",
        load_average()
    );
    println!(
        "| format | input | window starts at | 1 s window (convert --to parquet) | full scan (validate) | ratio | goal |"
    );
    println!("|---|---|---|---|---|---|---|");
    for line in &lines {
        println!("{line}");
    }
    Ok(())
}

/// The earliest and latest row time of the input, from `recfmt info --json`.
fn span(recfmt: &Path, input: &Input) -> Result<(f64, f64)> {
    let output = Command::new(recfmt)
        .arg("info")
        .arg("--json")
        .args(&input.args)
        .arg(&input.path)
        .output()
        .context("running recfmt info")?;
    if !output.status.success() {
        bail!(
            "recfmt info {} failed: {}",
            input.path.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let info: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let streams = info["streams"].as_array().context("info without streams")?;
    let first = streams
        .iter()
        .filter_map(|s| s["start"].as_f64())
        .fold(f64::INFINITY, f64::min);
    let last = streams
        .iter()
        .filter_map(|s| s["end"].as_f64())
        .fold(f64::NEG_INFINITY, f64::max);
    if first > last {
        bail!("{}: no timed rows", input.path.display());
    }
    Ok((first, last))
}
