//! `cargo xtask bench compare [--mb N] [--baseline RECFMT]`: recfmt against the Python
//! writers (issue 11); with `--baseline`, every recfmt figure again, by another `recfmt`
//! binary (a release build of an earlier commit) and this tree's, timed in turns.
//!
//! On one generated USVLOG session (at least N MB, default 400, cached under
//! `target/bench-data/`), times the release `recfmt` converting to Parquet, CSV and HDF5, a full
//! read (`recfmt validate`, which decodes every record) against `cat` of the same bytes, and two
//! copies of the session converted with `-j 2` against the two converted one after the other.
//! `xtask/compare.py` then loads recfmt's Parquet output into memory as decoded columns (not
//! timed) and times pyarrow.parquet, pyarrow.csv and h5py writing the same tables. Every figure
//! is the best of [`RUNS`] runs, each into a fresh output path that is deleted afterwards.
//! The white-noise and random-walk sessions of issue 24 are timed the same way for Parquet, CSV
//! and HDF5. parquet-rs writes the same loaded tables alone too (recfmt-export's
//! `parquet_write_only` example, pyarrow's settings, one thread), so the encoder's own cost
//! stands beside what the whole conversion adds to it.
//!
//! Prints a Markdown table with the ratios and the goals of issue 11. A missed goal is reported,
//! not a failure: this is a measurement.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::session::ensure_session;
use crate::{project_root, python_env};

/// Runs of every measurement; the best one counts.
pub(crate) const RUNS: usize = 3;

/// Default input size in MB (10^6 bytes), about the 382 MB session.
const DEFAULT_MB: u64 = 400;

/// One line of the report: `baseline / recfmt` is compared with `goal` (higher is better for
/// recfmt).
struct Line {
    what: String,
    recfmt: f64,
    baseline_name: String,
    baseline: f64,
    goal: f64,
    goal_text: &'static str,
}

impl Line {
    fn ratio(&self) -> f64 {
        self.baseline / self.recfmt
    }
}

/// `cargo xtask bench compare [--mb N] [--baseline RECFMT]`.
pub fn bench_compare(args: &[String]) -> Result<()> {
    const USAGE: &str = "usage: cargo xtask bench compare [--mb N] [--baseline RECFMT]";
    let mut mb = DEFAULT_MB;
    let mut baseline_bin: Option<PathBuf> = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().context(USAGE)?;
        match flag.as_str() {
            "--mb" => mb = value.parse().context("--mb takes a whole number")?,
            "--baseline" => {
                let path = PathBuf::from(value);
                if !path.is_file() {
                    bail!("--baseline {value}: no such recfmt binary");
                }
                baseline_bin = Some(path);
            }
            _ => bail!(USAGE),
        }
    }
    let root = project_root();
    // What the release binary is built from (other work may commit while this runs).
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "?".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    crate::build_release_recfmt()?;
    let recfmt = root.join("target/release/recfmt");
    let write_only = build_parquet_write_only()?;
    let python = python_env()?;
    let data = root.join("target/bench-data");
    let session = data.join(format!("usvlog-{mb}mb"));
    ensure_session(&session, mb * 1_000_000)?;
    let twin = data.join(format!("usvlog-{mb}mb-b"));
    link_twin(&session, &twin)?;
    let series = session.join("timeseries.bin");
    let layout = session.join("layouts.toml");
    let input_bytes = std::fs::metadata(&series)?.len();
    let out = data.join("compare-out");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out)?;

    let convert_with = |binary: &Path, input: &[&Path], to: &str, output: &Path| {
        let mut cmd = Command::new(binary);
        cmd.arg("convert").arg("--layout").arg(&layout);
        cmd.args(input).args(["--to", to]).arg("-o").arg(output);
        cmd
    };
    let convert = |input: &[&Path], to: &str, output: &Path, jobs: Option<&str>| {
        let mut cmd = Command::new(&recfmt);
        cmd.arg("convert").arg("--layout").arg(&layout);
        cmd.args(input).args(["--to", to]);
        if let Some(j) = jobs {
            cmd.args(["-j", j]);
        }
        cmd.arg("-o").arg(output);
        cmd
    };

    let load_before = load_average();
    let (parquet, parquet_cpu) =
        best_of_cpu("recfmt --to parquet", &out, "parquet", true, |dir| {
            vec![convert(&[&session], "parquet", dir, None)]
        })?;
    let csv = best_of("recfmt --to csv", &out, "csv", false, |dir| {
        vec![convert(&[&session], "csv", dir, None)]
    })?;
    let hdf5 = best_of("recfmt --to hdf5", &out, "hdf5", false, |dir| {
        vec![convert(
            &[&session],
            "hdf5",
            &dir.join("recording.h5"),
            None,
        )]
    })?;
    let read = best_of("recfmt validate", &out, "validate", false, |_| {
        let mut cmd = Command::new(&recfmt);
        cmd.arg("validate")
            .arg("--layout")
            .arg(&layout)
            .arg(&session);
        vec![cmd]
    })?;
    let cat = best_of("cat", &out, "cat", false, |_| {
        let mut cmd = Command::new("cat");
        cmd.arg(&series);
        vec![cmd]
    })?;
    let parallel = best_of("recfmt -j 2 (two inputs)", &out, "j2", false, |dir| {
        vec![convert(&[&session, &twin], "parquet", dir, Some("2"))]
    })?;
    let sequential = best_of("recfmt one after the other", &out, "seq", false, |dir| {
        vec![
            convert(&[&session], "parquet", &dir.join("a"), None),
            convert(&[&twin], "parquet", &dir.join("b"), None),
        ]
    })?;

    // The Python writers on the tables recfmt wrote (kept from the last Parquet run).
    let py = python_writers(
        &python,
        &out.join("parquet-kept"),
        &out.join("python"),
        false,
    )?;
    let field = |key: &str| match py.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "?".into(),
    };
    let secs = |key: &str| -> Result<f64> {
        py.get(key)
            .and_then(serde_json::Value::as_f64)
            .with_context(|| format!("compare.py printed no number for {key}"))
    };
    let (dict, nodict) = (secs("parquet_dict")?, secs("parquet_nodict")?);
    let (py_parquet, which) = if dict <= nodict {
        (dict, "dictionary on")
    } else {
        (nodict, "dictionary off")
    };
    let py_parquet_cpu = secs(if dict <= nodict {
        "parquet_dict_cpu"
    } else {
        "parquet_nodict_cpu"
    })?;
    let rust_parquet = parquet_rs_alone(&write_only, &out.join("parquet-kept"), &out)?;

    // Issue 24: the same Parquet and CSV comparisons on white-noise and random-walk sessions.
    let mut signal_lines = Vec::new();
    let mut signal_csv = Vec::new();
    let mut signal_hdf5 = Vec::new();
    // With `--baseline`: the CSV of these sessions by both binaries, timed in turns.
    let mut signal_before_after = Vec::new();
    for (kind, name) in [
        (recfmt_tlv::generate::SignalKind::WhiteNoise, "white noise"),
        (recfmt_tlv::generate::SignalKind::RandomWalk, "random walk"),
    ] {
        let steps = mb * 12_500;
        let label = name.replace(' ', "-");
        let dir = data.join(format!("signals-{label}-{steps}"));
        if !dir.join("meta.json").is_file() {
            eprintln!("generating {} ...", dir.display());
            let _ = std::fs::remove_dir_all(&dir);
            recfmt_tlv::generate::write_signal_session(&dir, steps, kind)?;
        }
        let layout = dir.join("layouts.toml");
        // `binary convert --layout L SESSION --to FORMAT -o OUTPUT`.
        let convert = |binary: &Path, to: &str, output: &Path| {
            let mut cmd = Command::new(binary);
            cmd.arg("convert").arg("--layout").arg(&layout).arg(&dir);
            cmd.args(["--to", to, "-o"]).arg(output);
            cmd
        };
        let (wall, cpu) = best_of_cpu(
            &format!("recfmt --to parquet ({name})"),
            &out,
            &label,
            true,
            |target| vec![convert(&recfmt, "parquet", target)],
        )?;
        let csv = best_of(
            &format!("recfmt --to csv ({name})"),
            &out,
            &format!("{label}-csv"),
            false,
            |target| vec![convert(&recfmt, "csv", target)],
        )?;
        let hdf5 = best_of(
            &format!("recfmt --to hdf5 ({name})"),
            &out,
            &format!("{label}-hdf5"),
            false,
            |target| vec![convert(&recfmt, "hdf5", &target.join("recording.h5"))],
        )?;
        if let Some(baseline) = &baseline_bin {
            let binaries = [baseline.as_path(), recfmt.as_path()];
            let what = format!("`convert --to csv` ({name})");
            let times =
                best_of_alternating(&what, &out, &format!("{label}-csv"), |which, target| {
                    convert(binaries[which], "csv", target)
                })?;
            signal_before_after.push((what, times));
        }
        let kept = out.join(format!("{label}-kept"));
        let py = python_writers(&python, &kept, &out.join("python"), false)?;
        let rust_alone = parquet_rs_alone(&write_only, &kept, &out)?;
        std::fs::remove_dir_all(&kept)?;
        let get = |key: &str| py.get(key).and_then(serde_json::Value::as_f64);
        let (Some(d), Some(n), Some(dc), Some(nc), Some(py_csv), Some(py_hdf5)) = (
            get("parquet_dict"),
            get("parquet_nodict"),
            get("parquet_dict_cpu"),
            get("parquet_nodict_cpu"),
            get("csv"),
            get("hdf5"),
        ) else {
            bail!("compare.py printed no Parquet, CSV or HDF5 timings for the {name} session");
        };
        let (py_wall, py_cpu) = if d <= n { (d, dc) } else { (n, nc) };
        let bytes = std::fs::metadata(dir.join("timeseries.bin"))?.len();
        signal_lines.push((name, bytes, wall, cpu, py_wall, py_cpu, rust_alone));
        signal_csv.push((name, bytes, csv, py_csv));
        signal_hdf5.push((name, bytes, hdf5, py_hdf5, 1.5));
    }
    let lines = [
        Line {
            what: "`convert --to parquet` (zstd)".into(),
            recfmt: parquet,
            baseline_name: format!("pyarrow.parquet zstd, best of dictionary on/off ({which})"),
            baseline: py_parquet,
            goal: 1.5,
            goal_text: ">= 1.5x",
        },
        Line {
            what: "`convert --to csv`".into(),
            recfmt: csv,
            baseline_name: "pyarrow.csv.write_csv".into(),
            baseline: secs("csv")?,
            goal: 2.0,
            goal_text: ">= 2x",
        },
        Line {
            what: "`convert --to hdf5`".into(),
            recfmt: hdf5,
            baseline_name: "h5py gzip-1 + shuffle, 65,535-row chunks".into(),
            baseline: secs("hdf5")?,
            goal: 4.0,
            goal_text: ">= 4x",
        },
        Line {
            what: "full read (`validate`)".into(),
            recfmt: read,
            baseline_name: "`cat timeseries.bin > /dev/null`".into(),
            baseline: cat,
            goal: 0.25,
            goal_text: ">= 0.25x (within 4x of cat)",
        },
        Line {
            what: "two inputs, `convert A B --to parquet -j 2`".into(),
            recfmt: parallel,
            baseline_name: "the same two converted one after the other".into(),
            baseline: sequential,
            goal: 1.8,
            goal_text: ">= 1.8x",
        },
    ];

    // Before and after: every recfmt figure once more, the baseline binary and this tree's
    // timed in turns.
    let mut before_after = Vec::new();
    if let Some(baseline) = &baseline_bin {
        let binaries = [baseline.as_path(), recfmt.as_path()];
        for (what, to) in [
            ("`convert --to parquet`", "parquet"),
            ("`convert --to csv`", "csv"),
            ("`convert --to hdf5`", "hdf5"),
        ] {
            let times = best_of_alternating(what, &out, to, |which, dir| {
                let output = if to == "hdf5" {
                    dir.join("recording.h5")
                } else {
                    dir.to_path_buf()
                };
                convert_with(binaries[which], &[&session], to, &output)
            })?;
            before_after.push((what.to_string(), times));
        }
        let times = best_of_alternating("full read (`validate`)", &out, "validate", |which, _| {
            let mut cmd = Command::new(binaries[which]);
            cmd.arg("validate")
                .arg("--layout")
                .arg(&layout)
                .arg(&session);
            cmd
        })?;
        before_after.push(("full read (`validate`)".to_string(), times));
        before_after.append(&mut signal_before_after);
    }

    let _ = std::fs::remove_dir_all(&out);
    println!(
        "\nrecfmt against the Python writers: {} ({:.1} MB timeseries.bin, {} streams, {} rows), \
         best of {RUNS}; recfmt {commit}{}; pyarrow {}, h5py {} (HDF5 {}), numpy {}",
        session.display(),
        input_bytes as f64 / 1e6,
        field("streams"),
        field("rows"),
        if dirty {
            " plus uncommitted changes"
        } else {
            ""
        },
        field("pyarrow_version"),
        field("h5py_version"),
        field("hdf5_version"),
        field("numpy_version"),
    );
    println!(
        "load average (1 min) {load_before} before, {} after: other work on the machine \
         slows both sides",
        load_average()
    );
    println!(
        "pyarrow.parquet zstd: dictionary on {dict:.2} s, off {nodict:.2} s; full read {:.0} MB/s, cat {:.0} MB/s\n",
        input_bytes as f64 / 1e6 / read,
        input_bytes as f64 / 1e6 / cat,
    );
    println!("| what | recfmt s | baseline | baseline s | ratio baseline/recfmt | goal | |");
    println!("|---|---|---|---|---|---|---|");
    for l in &lines {
        let ratio = l.ratio();
        println!(
            "| {} | {:.3} | {} | {:.3} | {:.2}x | {} | {} |",
            l.what,
            l.recfmt,
            l.baseline_name,
            l.baseline,
            ratio,
            l.goal_text,
            if ratio >= l.goal {
                "goal met"
            } else {
                "goal missed"
            }
        );
    }
    println!(
        "\nParquet (zstd), wall and CPU (user + sys) against pyarrow.parquet writing the decoded \
         columns (best of dictionary on/off), best of {RUNS}; goals of issue 24: wall ratio \
         >= 1.25x, CPU ratio <= 1.5x. Beside them, parquet-rs writing the same decoded tables \
         alone on one thread with pyarrow's settings (the `parquet_write_only` example of \
         recfmt-export): what the encoder costs, apart from reading, decoding and hashing\n"
    );
    println!(
        "| session | recfmt wall s | recfmt CPU s | pyarrow wall s | pyarrow CPU s | wall ratio pyarrow/recfmt | CPU ratio recfmt/pyarrow | parquet-rs alone wall / CPU s |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let rows = std::iter::once((
        "`bench compare` session",
        input_bytes,
        parquet,
        parquet_cpu,
        py_parquet,
        py_parquet_cpu,
        rust_parquet,
    ))
    .chain(signal_lines.iter().copied());
    for (name, bytes, wall, cpu, py_wall, py_cpu, (rust_wall, rust_cpu)) in rows {
        println!(
            "| {name} ({:.0} MB) | {wall:.3} | {cpu:.3} | {py_wall:.3} | {py_cpu:.3} | {:.2}x | {:.2}x | {rust_wall:.3} / {rust_cpu:.3} |",
            bytes as f64 / 1e6,
            py_wall / wall,
            cpu / py_cpu,
        );
    }
    println!(
        "\nCSV against pyarrow.csv writing the decoded columns (fixed-size arrays flattened), \
         best of {RUNS}; goal of issue 24: ratio >= 2.5x\n"
    );
    println!("| session | recfmt s | pyarrow.csv s | ratio pyarrow/recfmt | |");
    println!("|---|---|---|---|---|");
    let csv_rows = std::iter::once(("`bench compare` session", input_bytes, csv, secs("csv")?))
        .chain(signal_csv.iter().copied());
    for (name, bytes, recfmt_s, py_s) in csv_rows {
        let ratio = py_s / recfmt_s;
        println!(
            "| {name} ({:.0} MB) | {recfmt_s:.3} | {py_s:.3} | {ratio:.2}x | {} |",
            bytes as f64 / 1e6,
            if ratio >= 2.5 {
                "goal met"
            } else {
                "goal missed"
            }
        );
    }
    println!(
        "\nHDF5 against h5py (gzip-1 + shuffle, 65,535-row chunks) writing the decoded columns, \
         best of {RUNS}; goals of issue 24: >= 1.0x on the `bench compare` session, >= 1.5x on \
         the signal sessions\n"
    );
    println!("| session | recfmt s | h5py s | ratio h5py/recfmt | goal | |");
    println!("|---|---|---|---|---|---|");
    let hdf5_rows = std::iter::once((
        "`bench compare` session",
        input_bytes,
        hdf5,
        secs("hdf5")?,
        1.0,
    ))
    .chain(signal_hdf5.iter().copied());
    for (name, bytes, recfmt_s, py_s, goal) in hdf5_rows {
        let ratio = py_s / recfmt_s;
        println!(
            "| {name} ({:.0} MB) | {recfmt_s:.3} | {py_s:.3} | {ratio:.2}x | >= {goal:.1}x | {} |",
            bytes as f64 / 1e6,
            if ratio >= goal {
                "goal met"
            } else {
                "goal missed"
            }
        );
    }
    if let Some(baseline) = &baseline_bin {
        println!(
            "\nBefore ({}) and after (this tree), timed in turns, best of {RUNS}; ratio = \
             before / after (above 1: faster now)\n",
            baseline.display()
        );
        println!("| what | before s | after s | ratio |");
        println!("|---|---|---|---|");
        for (what, [before, after]) in &before_after {
            println!(
                "| {what} | {before:.3} | {after:.3} | {:.2} |",
                before / after
            );
        }
    }
    Ok(())
}

/// A second session folder holding the same files (hard links, or copies where linking fails),
/// so that two inputs with different names convert the same bytes.
fn link_twin(session: &Path, twin: &Path) -> Result<()> {
    let _ = std::fs::remove_dir_all(twin);
    std::fs::create_dir_all(twin)?;
    for entry in std::fs::read_dir(session)? {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            continue;
        }
        let (from, to) = (entry.path(), twin.join(entry.file_name()));
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to)
                .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
        }
    }
    Ok(())
}

/// Builds the `parquet_write_only` example of recfmt-export in release; its path.
fn build_parquet_write_only() -> Result<PathBuf> {
    crate::run(crate::cargo().args([
        "build",
        "--release",
        "-p",
        "recfmt-export",
        "--example",
        "parquet_write_only",
    ]))?;
    Ok(project_root().join("target/release/examples/parquet_write_only"))
}

/// parquet-rs writing the tables of `kept` alone, best of 3: (wall, CPU) seconds.
fn parquet_rs_alone(binary: &Path, kept: &Path, out: &Path) -> Result<(f64, f64)> {
    let line = crate::python_bench::json_value(
        Command::new(binary)
            .arg(kept)
            .arg(out.join("parquet-rs"))
            .arg("3"),
    )?;
    let get = |key: &str| {
        line.get(key)
            .and_then(serde_json::Value::as_f64)
            .with_context(|| format!("{} printed no {key}", binary.display()))
    };
    Ok((get("seconds")?, get("cpu_seconds")?))
}

/// Runs `xtask/compare.py` on the Parquet tables in `tables` (scratch space under `scratch`) and
/// returns the JSON object it prints; with `no_hdf5`, only the Parquet and CSV writers are timed.
fn python_writers(
    python: &Path,
    tables: &Path,
    scratch: &Path,
    no_hdf5: bool,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    eprintln!("$ python xtask/compare.py (loads {})", tables.display());
    let mut cmd = Command::new(python);
    cmd.arg(project_root().join("xtask/compare.py"))
        .arg("--tables")
        .arg(tables)
        .arg("--out")
        .arg(scratch)
        .args(["--runs", &RUNS.to_string()]);
    if no_hdf5 {
        cmd.arg("--no-hdf5");
    }
    let output = cmd
        .stderr(Stdio::inherit())
        .output()
        .context("starting xtask/compare.py")?;
    if !output.status.success() {
        bail!("xtask/compare.py failed with {}", output.status);
    }
    serde_json::from_slice(&output.stdout).context("xtask/compare.py did not print one JSON object")
}

/// CPU seconds (user + sys) of every child process waited for so far.
fn children_cpu() -> Result<f64> {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN)?;
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    Ok(secs(usage.user_time()) + secs(usage.system_time()))
}

/// Best wall time of [`RUNS`] runs of the commands `make(dir)` returns, run one after the other
/// with `dir` a fresh, empty folder under `out` that is deleted after the run. With `keep`, the
/// last run's folder is kept as `out/<label>-kept`.
pub(crate) fn best_of(
    name: &str,
    out: &Path,
    label: &str,
    keep: bool,
    make: impl Fn(&Path) -> Vec<Command>,
) -> Result<f64> {
    best_of_cpu(name, out, label, keep, make).map(|(wall, _)| wall)
}

/// [`best_of`], and the least CPU time (user + sys of the commands and their threads) of the
/// runs.
pub(crate) fn best_of_cpu(
    name: &str,
    out: &Path,
    label: &str,
    keep: bool,
    make: impl Fn(&Path) -> Vec<Command>,
) -> Result<(f64, f64)> {
    let mut times = Vec::new();
    let mut cpus = Vec::new();
    for i in 0..RUNS {
        let dir = out.join(format!("{label}-{i}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let mut commands = make(&dir);
        let cpu = children_cpu()?;
        let started = Instant::now();
        for cmd in &mut commands {
            quiet(cmd)?;
        }
        times.push(started.elapsed().as_secs_f64());
        cpus.push(children_cpu()? - cpu);
        if keep && i + 1 == RUNS {
            std::fs::rename(&dir, out.join(format!("{label}-kept")))?;
        } else {
            std::fs::remove_dir_all(&dir)?;
        }
    }
    let shown: Vec<String> = times.iter().map(|t| format!("{t:.2} s")).collect();
    let shown_cpu: Vec<String> = cpus.iter().map(|t| format!("{t:.2} s")).collect();
    eprintln!("{name}: {}; CPU {}", shown.join(", "), shown_cpu.join(", "));
    let least = |v: Vec<f64>| v.into_iter().fold(f64::INFINITY, f64::min);
    Ok((least(times), least(cpus)))
}

/// Best times of two commands timed in turns (a, b, a, b, ...), [`RUNS`] each: a before/after
/// pair measured this way sees the same machine load, which a noisy machine needs.
pub(crate) fn best_of_alternating(
    name: &str,
    out: &Path,
    label: &str,
    make: impl Fn(usize, &Path) -> Command,
) -> Result<[f64; 2]> {
    let mut best = [f64::INFINITY; 2];
    let mut shown = [Vec::new(), Vec::new()];
    for i in 0..RUNS {
        for (which, slot) in best.iter_mut().enumerate() {
            let dir = out.join(format!("{label}-{which}-{i}"));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir)?;
            let mut cmd = make(which, &dir);
            let started = Instant::now();
            quiet(&mut cmd)?;
            let took = started.elapsed().as_secs_f64();
            std::fs::remove_dir_all(&dir)?;
            *slot = slot.min(took);
            shown[which].push(format!("{took:.2} s"));
        }
    }
    eprintln!(
        "{name}: before {}; after {}",
        shown[0].join(", "),
        shown[1].join(", ")
    );
    Ok(best)
}

/// Runs a command with its output discarded (shown only when it fails).
pub(crate) fn quiet(cmd: &mut Command) -> Result<()> {
    let output = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("starting {cmd:?}"))?;
    if !output.status.success() {
        bail!(
            "{cmd:?} failed with {}:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// The 1-minute load average from `/proc/loadavg`, or `?`.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

pub(crate) fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}
