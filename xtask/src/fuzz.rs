//! `cargo xtask fuzz [--secs N] [--target NAME] [--dev] [--jobs N]`: builds the cargo-fuzz
//! targets of `fuzz/` and runs each with libFuzzer, replaying the committed seeds first; fails
//! on a crash.
//!
//! Build: `RUSTC_BOOTSTRAP=1 cargo fuzz build --sanitizer none --debug-assertions` (the
//! workspace forbids `unsafe`, so AddressSanitizer would mostly watch std and dependencies;
//! debug assertions give overflow checks, see `docs/RELIABILITY.md`). `--dev` builds without
//! optimisations instead: about half the build time and several times fewer executions per
//! second, the better trade for the few seconds per target that CI fuzzes.
//!
//! The targets then run one after the other (or `--jobs N` at a time, one core each), each
//! for `--secs` seconds, with its format's dictionary, the seeds of `fuzz/corpus/<target>` and
//! `fuzz/regressions/<target>` as read-only corpora and `fuzz/target/corpus/<target>` (not
//! committed) as the growing one. Crash inputs land in `fuzz/artifacts/<target>/`, libFuzzer's
//! output in `fuzz/target/logs/<target>.log`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::{cargo, project_root, run};

/// Seconds each target runs when `--secs` is not given.
const DEFAULT_SECS: u64 = 60;

/// Options of a fuzz run.
pub struct FuzzRun {
    /// Seconds per target.
    pub secs: u64,
    /// Only this target (all when `None`).
    pub target: Option<String>,
    /// Build unoptimised (`cargo fuzz build --dev`): quicker to build, slower to run.
    pub dev: bool,
    /// Targets run at the same time (one core each).
    pub jobs: usize,
}

pub fn fuzz(args: &[String]) -> Result<()> {
    let mut run = FuzzRun {
        secs: DEFAULT_SECS,
        target: None,
        dev: false,
        jobs: 1,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--secs" => {
                run.secs = args
                    .next()
                    .context("--secs takes a number of seconds")?
                    .parse()
                    .context("--secs takes a whole number of seconds")?;
            }
            "--target" => run.target = Some(args.next().context("--target takes a name")?.clone()),
            "--dev" => run.dev = true,
            "--jobs" => {
                run.jobs = args
                    .next()
                    .context("--jobs takes a number")?
                    .parse()
                    .context("--jobs takes a whole number")?;
            }
            other => bail!(
                "usage: cargo xtask fuzz [--secs N] [--target NAME] [--dev] [--jobs N] (got {other:?})"
            ),
        }
    }
    fuzz_run(&run)
}

/// Installs cargo-fuzz when missing, builds every target and runs the chosen ones.
pub fn fuzz_run(options: &FuzzRun) -> Result<()> {
    let root = project_root();
    let fuzz_dir = root.join("fuzz");
    let all = targets(&fuzz_dir)?;
    let chosen: Vec<String> = match &options.target {
        Some(t) if all.contains(t) => vec![t.clone()],
        Some(t) => bail!("no fuzz target {t:?}; the targets are: {}", all.join(", ")),
        None => all,
    };

    let started = Instant::now();
    ensure_cargo_fuzz()?;
    let mut build = cargo();
    build.current_dir(&root).env("RUSTC_BOOTSTRAP", "1").args([
        "fuzz",
        "build",
        "--sanitizer",
        "none",
        "--debug-assertions",
    ]);
    if options.dev {
        build.arg("--dev");
    }
    if let [one] = chosen.as_slice() {
        build.arg(one);
    }
    run(&mut build)?;
    eprintln!(
        "xtask fuzz: cargo-fuzz ready and targets built in {:.0} s",
        started.elapsed().as_secs_f64()
    );

    let profile = if options.dev { "debug" } else { "release" };
    let bin_dir = fuzz_dir.join("target").join(host_triple()?).join(profile);
    let mut crashed = Vec::new();
    let mut summary = Vec::new();
    for group in chosen.chunks(options.jobs.max(1)) {
        let outcomes: Vec<Result<Outcome>> = std::thread::scope(|scope| {
            let handles: Vec<_> = group
                .iter()
                .map(|target| {
                    let (fuzz_dir, bin_dir) = (&fuzz_dir, &bin_dir);
                    scope.spawn(move || run_target(fuzz_dir, bin_dir, target, options.secs))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| bail!("a fuzz runner thread panicked"))
                })
                .collect()
        });
        for (target, outcome) in group.iter().zip(outcomes) {
            let outcome = outcome?;
            eprintln!("xtask fuzz: {}", outcome.line);
            if !outcome.ok {
                crashed.push(target.clone());
            }
            summary.push(outcome.line);
        }
    }
    println!("\nfuzz summary ({} s per target):", options.secs);
    for line in &summary {
        println!("  {line}");
    }
    println!(
        "total {:.0} s (install + build + runs)",
        started.elapsed().as_secs_f64()
    );
    if !crashed.is_empty() {
        bail!(
            "fuzz targets failed: {} (inputs under fuzz/artifacts/, logs under fuzz/target/logs/)",
            crashed.join(", ")
        );
    }
    Ok(())
}

/// The targets: the file stems of `fuzz/fuzz_targets/*.rs`, sorted.
fn targets(fuzz_dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(fuzz_dir.join("fuzz_targets"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "rs")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        {
            names.push(stem.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// Installs cargo-fuzz from crates.io unless `cargo fuzz` already runs.
fn ensure_cargo_fuzz() -> Result<()> {
    let present = cargo()
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !present {
        run(cargo().args(["install", "cargo-fuzz", "--locked"]))?;
    }
    Ok(())
}

/// The host target triple (cargo-fuzz builds for it by default).
fn host_triple() -> Result<String> {
    let out = Command::new("rustc").arg("-vV").output()?;
    let text = String::from_utf8(out.stdout)?;
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .context("`rustc -vV` names no host")
}

struct Outcome {
    ok: bool,
    line: String,
}

/// Runs one target's binary for `secs` seconds and reads libFuzzer's final statistics.
fn run_target(fuzz_dir: &Path, bin_dir: &Path, target: &str, secs: u64) -> Result<Outcome> {
    let work = fuzz_dir.join("target/corpus").join(target);
    let artifacts = fuzz_dir.join("artifacts").join(target);
    let logs = fuzz_dir.join("target/logs");
    for dir in [&work, &artifacts, &logs] {
        std::fs::create_dir_all(dir)?;
    }
    let format = target.split('_').next().unwrap_or(target);
    let dict = fuzz_dir.join("dict").join(format!("{format}.dict"));
    let log_path = logs.join(format!("{target}.log"));
    let log = std::fs::File::create(&log_path)?;

    let mut cmd = Command::new(bin_dir.join(target));
    cmd.arg(&work);
    for seeds in [
        fuzz_dir.join("corpus").join(target),
        fuzz_dir.join("regressions").join(target),
    ] {
        if seeds.is_dir() {
            cmd.arg(seeds);
        }
    }
    cmd.arg(format!("-max_total_time={secs}"))
        .arg("-timeout=10")
        .arg("-rss_limit_mb=2048")
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", artifacts.display()));
    if dict.is_file() {
        cmd.arg(format!("-dict={}", dict.display()));
    }
    eprintln!("$ {cmd:?}");
    let status = cmd
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .with_context(|| format!("starting {}", bin_dir.join(target).display()))?;
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let stats = Stats::parse(&text);
    let ok = status.success();
    let mut line = format!(
        "{target}: {} execs, cov {}, ft {}, corpus {}, peak RSS {} MB",
        stats.execs.as_deref().unwrap_or("?"),
        stats.cov.as_deref().unwrap_or("?"),
        stats.ft.as_deref().unwrap_or("?"),
        stats.corpus.as_deref().unwrap_or("?"),
        stats.peak_rss_mb.as_deref().unwrap_or("?"),
    );
    if !ok {
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        eprintln!(
            "--- {target} failed ({status}); end of {}:",
            log_path.display()
        );
        for l in tail.iter().rev() {
            eprintln!("{l}");
        }
        line.push_str(&format!(
            ": FAILED ({status}), input in {}",
            artifacts.display()
        ));
    }
    Ok(Outcome { ok, line })
}

/// libFuzzer's final figures: `stat::` lines, and `cov:`/`ft:`/`corp:` of the last status line.
#[derive(Default)]
struct Stats {
    execs: Option<String>,
    peak_rss_mb: Option<String>,
    cov: Option<String>,
    ft: Option<String>,
    corpus: Option<String>,
}

impl Stats {
    fn parse(text: &str) -> Stats {
        let mut stats = Stats::default();
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("stat::number_of_executed_units:") {
                stats.execs = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("stat::peak_rss_mb:") {
                stats.peak_rss_mb = Some(v.trim().to_string());
            } else if line.starts_with('#') && line.contains(" cov: ") {
                let field = |name: &str| {
                    let mut words = line.split_whitespace();
                    words.find(|w| *w == name)?;
                    words.next().map(str::to_string)
                };
                stats.cov = field("cov:").or(stats.cov.take());
                stats.ft = field("ft:").or(stats.ft.take());
                stats.corpus = field("corp:").or(stats.corpus.take());
            }
        }
        stats
    }
}
