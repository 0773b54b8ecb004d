//! `cargo xtask bench plot [--gib N]`: `recfmt plot` on a generated USVLOG session of at least
//! N GiB (default 1): an overview and one stream's signals, each with its wall time and peak
//! resident memory; fails when a peak reaches the 200 MB the plot issue allows.

use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{PEAK_RSS_LIMIT_BYTES, cargo, project_root, run};

/// Runs the plot benchmark.
pub fn bench_plot(args: &[String]) -> Result<()> {
    let gib: u64 = match args {
        [] => 1,
        [flag, n] if flag == "--gib" => n.parse().context("--gib takes a whole number")?,
        _ => bail!("usage: cargo xtask bench plot [--gib N]"),
    };
    let min_bytes = gib << 30;
    run(cargo().args(["build", "--release", "-p", "recfmt", "--bin", "recfmt"]))?;
    let recfmt = project_root().join("target/release/recfmt");
    let data = project_root().join("target/bench-data");
    let input = data.join(format!("usvlog-{gib}gib"));
    let series = input.join("timeseries.bin");
    if std::fs::metadata(&series).map_or(0, |m| m.len()) < min_bytes
        || !input.join("meta.json").is_file()
    {
        eprintln!("generating {} ({gib} GiB) ...", input.display());
        let _ = std::fs::remove_dir_all(&input);
        recfmt_tlv::generate::write_bench_session(&input, min_bytes)?;
    }
    let input_bytes = std::fs::metadata(&series)?.len();
    let layout = input.join("layouts.toml");
    let out_dir = data.join("plot-out");
    std::fs::create_dir_all(&out_dir)?;
    let mut report = Vec::new();
    let runs: [(&str, &[&str], &str); 2] = [
        ("overview", &[], "overview.png"),
        (
            "signals",
            &["--signal", "REC_NAV_SOLUTION.*"],
            "signals.png",
        ),
    ];
    for (name, extra, file) in runs {
        let rss_file = data.join("peak-rss");
        let started = std::time::Instant::now();
        run(Command::new(std::env::current_exe()?)
            .arg("peak-rss")
            .arg(&rss_file)
            .arg(&recfmt)
            .args(["plot", "--layout"])
            .arg(&layout)
            .arg(&input)
            .args(extra)
            .arg("-o")
            .arg(out_dir.join(file)))?;
        let seconds = started.elapsed().as_secs_f64();
        let peak_kib: u64 = std::fs::read_to_string(&rss_file)?.trim().parse()?;
        let line = format!(
            "plot {name}: input {:.2} GB in {seconds:.1} s ({:.0} MB/s), peak RSS {:.1} MB ({peak_kib} KiB)",
            input_bytes as f64 / 1e9,
            input_bytes as f64 / 1e6 / seconds,
            (peak_kib * 1024) as f64 / 1e6,
        );
        eprintln!("{line}");
        report.push((line, peak_kib * 1024));
    }
    std::fs::remove_dir_all(&out_dir)?;
    println!("\nplot benchmark ({}):", input.display());
    for (line, _) in &report {
        println!("  {line}");
    }
    if let Some((line, _)) = report.iter().find(|(_, p)| *p >= PEAK_RSS_LIMIT_BYTES) {
        bail!("peak memory at or above 200 MB: {line}");
    }
    Ok(())
}
