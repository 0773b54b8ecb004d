//! What the release-binary benchmarks share: a generated USVLOG session of at least N GiB, and
//! running the release `recfmt` on it under the peak-RSS wrapper.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{PEAK_RSS_LIMIT_BYTES, project_root, run};

/// The release binary and a generated session it runs on.
pub struct BenchSession {
    /// `target/release/recfmt`, freshly built.
    pub recfmt: PathBuf,
    /// `target/bench-data`, where inputs, outputs and the peak-RSS file live.
    pub data: PathBuf,
    /// The session folder (`timeseries.bin`, `meta.json`, `layouts.toml`).
    pub input: PathBuf,
    /// Size of `timeseries.bin`.
    pub input_bytes: u64,
}

/// One measured run: wall time and peak resident memory.
pub struct Measured {
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Peak resident set size in bytes.
    pub peak_bytes: u64,
}

impl BenchSession {
    /// Parses `[--gib N]` (defaulting to `default_gib`), builds the release binary and generates
    /// the session unless one of that size is already there.
    pub fn prepare(args: &[String], default_gib: u64, usage: &str) -> Result<Self> {
        let gib: u64 = match args {
            [] => default_gib,
            [flag, n] if flag == "--gib" => n.parse().context("--gib takes a whole number")?,
            _ => bail!("usage: {usage}"),
        };
        let min_bytes = gib << 30;
        crate::build_release_recfmt()?;
        let data = project_root().join("target/bench-data");
        let input = data.join(format!("usvlog-{gib}gib"));
        let series = input.join("timeseries.bin");
        ensure_session(&input, min_bytes)?;
        Ok(Self {
            recfmt: project_root().join("target/release/recfmt"),
            input_bytes: std::fs::metadata(&series)?.len(),
            data,
            input,
        })
    }

    /// The session's record layouts, for `--layout`.
    pub fn layout(&self) -> PathBuf {
        self.input.join("layouts.toml")
    }

    /// Runs `recfmt <command> --layout L INPUT <extra...>` under the peak-RSS wrapper.
    pub fn measure(&self, command: &str, extra: &[&std::ffi::OsStr]) -> Result<Measured> {
        let rss_file = self.data.join("peak-rss");
        let started = std::time::Instant::now();
        run(Command::new(std::env::current_exe()?)
            .arg("peak-rss")
            .arg(&rss_file)
            .arg(&self.recfmt)
            .args([command, "--layout"])
            .arg(self.layout())
            .arg(&self.input)
            .args(extra))?;
        let seconds = started.elapsed().as_secs_f64();
        let peak_kib: u64 = std::fs::read_to_string(&rss_file)?.trim().parse()?;
        Ok(Measured {
            seconds,
            peak_bytes: peak_kib * 1024,
        })
    }

    /// `input X GB in S s (R MB/s)`, the common start of a report line.
    pub fn throughput(&self, measured: &Measured) -> String {
        format!(
            "input {:.2} GB in {:.1} s ({:.0} MB/s)",
            self.input_bytes as f64 / 1e9,
            measured.seconds,
            self.input_bytes as f64 / 1e6 / measured.seconds,
        )
    }
}

/// Generates a USVLOG bench session of at least `min_bytes` in `session` unless one is there.
pub fn ensure_session(session: &Path, min_bytes: u64) -> Result<()> {
    let have = std::fs::metadata(session.join("timeseries.bin")).map_or(0, |m| m.len());
    if have >= min_bytes && session.join("meta.json").is_file() {
        return Ok(());
    }
    eprintln!("generating {} ...", session.display());
    let started = std::time::Instant::now();
    let _ = std::fs::remove_dir_all(session);
    recfmt_tlv::generate::write_bench_session(session, min_bytes)?;
    eprintln!("generated in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// Prints the report under `title` and fails when any run's peak reached the 200 MB limit.
pub fn finish_report(title: &str, input: &Path, report: &[(String, u64)]) -> Result<()> {
    println!("\n{title} ({}):", input.display());
    for (line, _) in report {
        println!("  {line}");
    }
    if let Some((line, _)) = report.iter().find(|(_, p)| *p >= PEAK_RSS_LIMIT_BYTES) {
        bail!("peak memory at or above 200 MB: {line}");
    }
    Ok(())
}

/// `peak RSS X MB (K KiB)`.
pub fn peak_text(measured: &Measured) -> String {
    format!(
        "peak RSS {:.1} MB ({} KiB)",
        measured.peak_bytes as f64 / 1e6,
        measured.peak_bytes / 1024
    )
}
