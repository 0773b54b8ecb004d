//! `cargo xtask bench plot [--gib N]`: `recfmt plot` on a generated USVLOG session of at least
//! N GiB (default 1): an overview and one stream's signals, each with its wall time and peak
//! resident memory; fails when a peak reaches the 200 MB the plot issue allows.

use std::ffi::OsStr;

use anyhow::Result;

use crate::session::{BenchSession, finish_report, peak_text};

/// Runs the plot benchmark.
pub fn bench_plot(args: &[String]) -> Result<()> {
    let session = BenchSession::prepare(args, 1, "cargo xtask bench plot [--gib N]")?;
    let out_dir = session.data.join("plot-out");
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
    for (name, signals, file) in runs {
        let output = out_dir.join(file);
        let mut extra: Vec<&OsStr> = signals.iter().map(OsStr::new).collect();
        extra.extend([OsStr::new("-o"), output.as_os_str()]);
        let measured = session.measure("plot", &extra)?;
        let line = format!(
            "plot {name}: {}, {}",
            session.throughput(&measured),
            peak_text(&measured)
        );
        eprintln!("{line}");
        report.push((line, measured.peak_bytes));
    }
    std::fs::remove_dir_all(&out_dir)?;
    finish_report("plot benchmark", &session.input, &report)
}
