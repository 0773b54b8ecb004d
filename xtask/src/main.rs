//! Project automation, run as `cargo xtask <task>` (see `.cargo/config.toml`).
//!
//! * `ci`: what `.ci/run` runs: Python interop packages, fmt, clippy, tests, docs, fixtures check,
//!   the consumer crate, every fuzz target replayed and fuzzed briefly.
//! * `consumer`: build and run a crate outside the workspace that depends on `recfmt` (default
//!   features) and `recfmt-carla` by path, as a user would (part of `ci`).
//! * `fixtures [--check]`: regenerate the deterministic fixtures under `tests/fixtures`.
//! * `fuzz [--secs N] [--target NAME] [--dev] [--jobs N]`: build the cargo-fuzz targets under
//!   `fuzz/` and run each (see `docs/RELIABILITY.md`).
//! * `bench [ARGS]`: the criterion benchmarks, the conversion and plot benchmarks, the Python
//!   package against the Rust batch read, recfmt against the Python writers, then every
//!   format's full read against `cat` and conversion to Parquet;
//!   `bench criterion [ARGS]`, `bench convert [--gib N]`, `bench plot [--gib N]`,
//!   `bench python [--mb N] [--gib G]`, `bench compare [--mb N] [--baseline RECFMT]`,
//!   `bench custom [--rows N] [--runs K]` (a `read_row`-only reader against USVLOG) or
//!   `bench formats [--mb N] [--format NAME] [--baseline RECFMT]` or
//!   `bench window [--gb N] [--format NAME]` (a 1 s window against a full scan) runs one of them.
//! * `test [--jobs N]`: the test step of `ci` alone: the workspace's test executables, N at a
//!   time (see `test_runner.rs`).
//! * `sweep [--mutants N]`: the mutation sweep of every sample and fixture in release, with
//!   10,000 mutants per format (the test suite runs fewer).

mod compare;
mod consumer;
mod custom_bench;
mod formats_bench;
mod fuzz;
mod plot_bench;
mod python_bench;
mod session;
mod test_runner;
mod window_bench;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use session::{BenchSession, finish_report, peak_text};

const TASKS: &[(&str, &str)] = &[
    (
        "ci",
        "python interop deps, fmt --check, clippy -D warnings, tests, docs, fixtures --check, \
         the consumer crate, fuzz targets replayed and fuzzed 5 s each",
    ),
    (
        "consumer",
        "build and run a crate outside the workspace that uses recfmt and recfmt-carla by path",
    ),
    (
        "fixtures",
        "write the generated fixtures (--check: fail if the committed ones differ)",
    ),
    (
        "fuzz",
        "build the cargo-fuzz targets (fuzz/) and run each for --secs N (default 60), or only \
         --target NAME; replays the seeds first, fails on a crash; --dev: unoptimised build; --jobs N: N targets at a time",
    ),
    (
        "bench",
        "criterion benchmarks (extra arguments go to cargo bench), a 10 GiB USVLOG \
         converted to Parquet and HDF5 with peak memory measured, a 1 GiB one plotted with \
         peak memory measured, the Python package's reads against the Rust batch read (and \
         its batches() peak memory on 10 GiB), then recfmt against pyarrow and h5py on a \
         400 MB session, then per format (1 GB inputs) the full read against cat and the \
         conversion to Parquet; `bench criterion [ARGS]`, `bench convert [--gib N]`, \
         `bench plot [--gib N]`, `bench python [--mb N] [--gib G]`, `bench compare [--mb N] [--baseline RECFMT]`, \
         `bench custom [--rows N] [--runs K]`, `bench formats [--mb N] [--format NAME] [--baseline RECFMT]` or \
         `bench window [--gb N] [--format NAME]` (1 s out of the middle against a full scan) runs one part",
    ),
    (
        "test",
        "the workspace's test executables (what ci runs, with the interop packages), \
         --jobs N at a time (default: the cores)",
    ),
    (
        "sweep",
        "the mutation sweep (tests/tests/mutation_sweep.rs) in release over every sample, \
         10,000 mutants per format unless --mutants N",
    ),
];

/// Python packages the interop tests and the `recfmt` package's tests use: (module to
/// import, requirement to install).
const PY_PACKAGES: &[(&str, &str)] = &[
    ("pyarrow", "pyarrow"),
    ("pandas", "pandas"),
    ("duckdb", "duckdb"),
    ("h5py", "h5py"),
    ("maturin", "maturin>=1.8,<2"),
    ("pytest", "pytest"),
    ("dask.dataframe", "dask[dataframe]"),
    ("distributed", "distributed"),
    ("polars", "polars"),
    ("mcap", "mcap"),
    // The engines of the `recfmt` package (recfmt.spark runs on a local Spark: Java 17+).
    ("pyspark", "pyspark>=4.0"),
    ("ray.data", "ray[data]"),
    // Tacview ACMI files read back (tests/tests/acmi.rs); pyacmi imports `constantly` without
    // declaring it.
    ("constantly", "constantly"),
    ("pyacmi", "pyacmi"),
    // Molecular tools reading NanoVer's PDB/XYZ/DCD and recfmt.nanover's Universes.
    ("MDAnalysis", "MDAnalysis"),
    ("ase", "ase"),
    // `convert --to xosc`: ASAM's schemas (tests/tests/xosc.rs) and a scenario author's parser.
    ("xmlschema", "xmlschema"),
    ("scenariogeneration", "scenariogeneration"),
    // The readers of `convert --to mat` (tests/tests/mat.rs): MAT 7.3 and MAT 5.
    ("mat73", "mat73"),
    ("scipy.io", "scipy"),
];

/// Runs the task; a failure is printed as its chain of causes, without a backtrace, so that the
/// reason is the last thing in a CI log (CI shows a long log's head and tail only).
fn main() -> std::process::ExitCode {
    match task() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn task() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::env::set_current_dir(project_root())?;
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("consumer") => consumer::consumer_check(),
        Some("fixtures") => fixtures(args.iter().any(|a| a == "--check")),
        Some("fuzz") => fuzz::fuzz(&args[1..]),
        Some("bench") => match args.get(1).map(String::as_str) {
            Some("criterion") => bench_criterion(&args[2..]),
            Some("convert") => bench_convert(&args[2..]),
            Some("compare") => compare::bench_compare(&args[2..]),
            Some("custom") => custom_bench::bench_custom(&args[2..]),
            Some("formats") => formats_bench::bench_formats(&args[2..]),
            Some("plot") => plot_bench::bench_plot(&args[2..]),
            Some("python") => python_bench::bench_python(&args[2..]),
            Some("window") => window_bench::bench_window(&args[2..]),
            _ => {
                bench_criterion(&args[1..])?;
                bench_convert(&[])?;
                plot_bench::bench_plot(&[])?;
                python_bench::bench_python(&[])?;
                compare::bench_compare(&[])?;
                custom_bench::bench_custom(&[])?;
                formats_bench::bench_formats(&[])
            }
        },
        Some("sweep") => sweep(&args[1..]),
        Some("test") => test(&args[1..]),
        // Internal: runs a command and writes its peak resident memory (KiB) to a file.
        Some("peak-rss") => peak_rss(&args[1..]),
        _ => {
            eprintln!("usage: cargo xtask <task>\n");
            for (name, help) in TASKS {
                eprintln!("  {name:<10} {help}");
            }
            bail!("no task given")
        }
    }
}

fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("$ {cmd:?}");
    let status = cmd.status().with_context(|| format!("starting {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// The full mutation sweep: every sample, `--mutants N` (default 10,000) mutants per format,
/// up to 4,000 cuts per format, in release.
fn sweep(args: &[String]) -> Result<()> {
    let mutants = match args {
        [] => "10000".to_string(),
        [flag, n] if flag == "--mutants" => n.clone(),
        _ => bail!("usage: cargo xtask sweep [--mutants N]"),
    };
    run(cargo()
        .args([
            "test",
            "--release",
            "-p",
            "recfmt-tests",
            "--test",
            "mutation_sweep",
        ])
        .env("RECFMT_SWEEP_FULL", "1")
        .env("RECFMT_SWEEP_MUTANTS", mutants)
        .env("RECFMT_SWEEP_CUTS", "4000"))
}

/// `python -m pip install`, quietly: add what to install.
fn pip_install(python: &Path) -> Command {
    let mut pip = Command::new(python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]);
    pip
}

/// The venv's Python with [`PY_PACKAGES`] installed: `target/pyenv`, made and filled when
/// needed, or the venv `RECFMT_PYENV` names (another checkout's, used as it is: nothing is
/// installed into it; a relative path counts from the current folder).
fn python_env() -> Result<PathBuf> {
    if let Some(venv) = std::env::var_os("RECFMT_PYENV") {
        // Made absolute: some benches run this Python from another folder (`python/`).
        let venv = std::path::absolute(PathBuf::from(venv))?;
        let python = venv.join("bin/python");
        if let Some((module, _)) = PY_PACKAGES
            .iter()
            .find(|(module, _)| !imports(&python, module))
        {
            bail!("RECFMT_PYENV: {} cannot import {module}", python.display());
        }
        return Ok(python);
    }
    let venv = project_root().join("target/pyenv");
    let python = venv.join("bin/python");
    if !python.exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    }
    let missing = PY_PACKAGES
        .iter()
        .any(|(module, _)| !imports(&python, module));
    if missing {
        run(pip_install(&python).args(PY_PACKAGES.iter().map(|(_, requirement)| requirement)))?;
    }
    Ok(python)
}

/// Whether `python` can import `module`.
fn imports(python: &Path, module: &str) -> bool {
    Command::new(python)
        .args(["-c", &format!("import {module}")])
        .status()
        .is_ok_and(|s| s.success())
}

/// Seconds each fuzz target runs in `ci` after replaying its seeds (unoptimised build, see
/// `docs/RELIABILITY.md` for what the step costs): 14 targets, about a minute in all.
const CI_FUZZ_SECS: u64 = 5;

/// Spark's tests (python/tests/test_engines.py) need a Java runtime: CI installs one from apt
/// when none is on the PATH (Debian's OpenJDK 17 headless), else says the Spark tests skip.
fn ensure_java() {
    let has_java = || {
        Command::new("java")
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if has_java() {
        return;
    }
    eprintln!("$ apt-get install openjdk-17-jre-headless (Java for the Spark tests)");
    let _ = Command::new("sh")
        .args([
            "-c",
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
             openjdk-17-jre-headless || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
             default-jre-headless",
        ])
        .status();
    if !has_java() {
        eprintln!("warning: no Java runtime and apt could not install one: the Spark tests skip");
    }
}

/// GNU Octave for the MAT-file tests (`octave --eval "load(...)"`), from apt like Java.
fn ensure_octave() {
    let has_octave = || {
        Command::new("octave-cli")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if has_octave() {
        return;
    }
    eprintln!("$ apt-get install octave-cli (GNU Octave for the MAT-file tests)");
    let _ = Command::new("sh")
        .args([
            "-c",
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
             octave-cli || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq octave",
        ])
        .status();
    if !has_octave() {
        eprintln!("warning: no GNU Octave and apt could not install it: the MAT tests fail in CI");
    }
}

/// Test executables run at a time: one per core.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// `cargo xtask test [--jobs N]`: the test step of `ci` alone (the interop packages
/// installed first).
fn test(args: &[String]) -> Result<()> {
    let jobs = match args.iter().position(|a| a == "--jobs") {
        Some(i) => args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .context("--jobs takes a number")?,
        None => default_jobs(),
    };
    let python = python_env()?;
    test_runner::test_workspace(&[("RECFMT_PYTHON", &python)], jobs)
}

fn ci() -> Result<()> {
    report_free_disk("at the start", CI_DISK_GIB);
    ensure_java();
    ensure_octave();
    let python = python_env()?;
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    fixtures(true)?;
    // `cargo test --workspace --all-targets`, the executables side by side (test_runner.rs).
    test_runner::test_workspace(&[("RECFMT_PYTHON", &python)], default_jobs())?;
    run(cargo().args(["test", "--workspace", "--doc"]))?;
    consumer::consumer_check()?;
    python_package(&python)?;
    run(cargo()
        .args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings"))?;
    // Every fuzz target replays its seeds and regression inputs, then fuzzes briefly.
    fuzz::fuzz_run(&fuzz::FuzzRun {
        secs: CI_FUZZ_SECS,
        target: None,
        dev: true,
        jobs: 2,
    })?;
    report_free_disk("at the end", 1.0);
    eprintln!("xtask ci: all checks passed");
    Ok(())
}

/// What a `ci` run on a fresh clone writes, in GiB: the debug and release builds, the Python
/// env, the wheel and the fuzz targets (11.5-11.6 GiB measured on 2026-11-29).
const CI_DISK_GIB: f64 = 12.0;

/// Prints the space left on the disk that holds `target/` (`df`), with a warning under
/// `warn_below` GiB: a run that fills the disk fails in whatever writes next, far from the
/// cause, so the log says how close it came.
fn report_free_disk(when: &str, warn_below: f64) {
    let target = project_root().join("target");
    let _ = std::fs::create_dir_all(&target);
    let free = Command::new("df")
        .args(["-Pk"])
        .arg(&target)
        .output()
        .ok()
        .and_then(|out| {
            // `df -P`: a header line, then the file system's line; the fourth field is free KiB.
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.lines()
                .nth(1)?
                .split_whitespace()
                .nth(3)?
                .parse::<u64>()
                .ok()
        });
    match free {
        Some(kib) => {
            let gib = kib as f64 / (1024.0 * 1024.0);
            eprintln!("xtask ci: {gib:.1} GiB free on the disk of target/ {when}");
            if gib < warn_below {
                eprintln!(
                    "warning: less than {warn_below:.0} GiB free {when}: a run on a fresh clone \
                     writes about {CI_DISK_GIB:.0} GiB and may run out of disk"
                );
            }
        }
        None => eprintln!("xtask ci: could not read the free disk space ({when})"),
    }
}

/// Builds the `recfmt` Python package as an abi3 wheel (`maturin build`, dev profile, in the
/// workspace target directory, so the dependencies the Rust tests compiled are reused),
/// installs that wheel into `target/pyenv` as a user's `pip install` would, and runs its pytest
/// suite against the `recfmt` binary of the same build.
fn python_package(python: &Path) -> Result<()> {
    let root = project_root();
    let wheels = root.join("target/wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    run(cargo().args([
        "build",
        "-p",
        "recfmt",
        "--bin",
        "recfmt",
        "--features",
        "cli",
    ]))?;
    run(Command::new(python)
        .args(["-m", "maturin", "build", "--profile", "dev", "--out"])
        .arg(&wheels)
        .current_dir(root.join("python")))?;
    let wheel = files_under(&wheels)?
        .into_iter()
        .find(|f| f.extension().is_some_and(|e| e == "whl"))
        .context("maturin built no wheel")?;
    run(pip_install(python)
        .args(["--no-deps", "--force-reinstall"])
        .arg(wheels.join(wheel)))?;
    // The tests must import the installed wheel, not the source folder.
    run(Command::new(python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "python/tests",
        ])
        .env("RECFMT_EXPECT_WHEEL", "1")
        .env("RECFMT_BIN", root.join("target/debug/recfmt")))
}

/// Builds the release `recfmt` binary (with the command line's features) the benchmarks run
/// and returns its path.
fn build_release_recfmt() -> Result<PathBuf> {
    run(cargo().args([
        "build",
        "--release",
        "-p",
        "recfmt",
        "--bin",
        "recfmt",
        "--features",
        "cli",
    ]))?;
    Ok(project_root().join("target/release/recfmt"))
}

/// Generated fixtures: (folder under tests/fixtures, writer).
fn fixture_set(root: &Path) -> Result<()> {
    use recfmt_tlv::generate;
    let usvlog = root.join("usvlog");
    generate::write_all_types_session(&usvlog.join("all_types"), 200)?;
    generate::write_truncated_session(&usvlog.join("truncated"), 200, 7)?;
    generate::write_unknown_types_session(&usvlog.join("unknown_types"), 120)?;
    let icarec = root.join("icarec");
    recfmt_icarec::generate::write_all_types(&icarec.join("all_types.icarec"), 200)?;
    recfmt_icarec::generate::write_empty_static(&icarec.join("empty_static.icarec"), 50)?;
    recfmt_icarec::generate::write_torn(&icarec.join("torn.icarec"), 50, 9)?;
    Ok(())
}

fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir)?.to_path_buf());
            }
        }
    }
    out.sort();
    Ok(out)
}

fn fixtures(check: bool) -> Result<()> {
    let committed = project_root().join("tests/fixtures/generated");
    if !check {
        if committed.exists() {
            std::fs::remove_dir_all(&committed)?;
        }
        fixture_set(&committed)?;
        eprintln!("wrote {}", committed.display());
        return Ok(());
    }
    let fresh = project_root().join("target/fixtures-check");
    if fresh.exists() {
        std::fs::remove_dir_all(&fresh)?;
    }
    fixture_set(&fresh)?;
    let (a, b) = (files_under(&committed)?, files_under(&fresh)?);
    if a != b {
        bail!(
            "generated fixture files differ from tests/fixtures/generated: run `cargo xtask fixtures`"
        );
    }
    for f in &a {
        if std::fs::read(committed.join(f))? != std::fs::read(fresh.join(f))? {
            bail!("{} is stale: run `cargo xtask fixtures`", f.display());
        }
    }
    eprintln!("fixtures up to date ({} files)", a.len());
    Ok(())
}

/// The criterion benchmarks: USVLOG decode, ICAREC warmstart lookups on a 1 GB recording.
fn bench_criterion(extra: &[String]) -> Result<()> {
    run(cargo()
        .args(["bench", "-p", "recfmt-tlv", "--bench", "read", "--"])
        .args(extra))?;
    run(cargo()
        .args(["bench", "-p", "recfmt-icarec", "--bench", "state_at", "--"])
        .args(extra))
}

/// The memory ceiling the export issue sets for converting a 10 GB input.
const PEAK_RSS_LIMIT_BYTES: u64 = 200 * 1000 * 1000;

/// Converts a generated USVLOG session of at least `--gib N` GiB (default 10) to Parquet and to
/// HDF5 with the release `recfmt` binary, and reports wall time, throughput, output size and
/// peak resident memory of each; fails when a peak reaches [`PEAK_RSS_LIMIT_BYTES`].
///
/// The session (every built-in record type plus user records with fixed-size arrays, read
/// with its `layouts.toml`) is generated once into `target/bench-data/` and reused; the
/// outputs are deleted after measuring, so the run needs free disk of about twice the input.
fn bench_convert(args: &[String]) -> Result<()> {
    let session = BenchSession::prepare(args, 10, "cargo xtask bench convert [--gib N]")?;
    let out_dir = session.data.join("convert-out");
    let mut report = Vec::new();
    for (kind, target) in [("parquet", "parquet"), ("hdf5", "recording.h5")] {
        let _ = std::fs::remove_dir_all(&out_dir);
        std::fs::create_dir_all(&out_dir)?;
        let output = out_dir.join(target);
        let extra = [
            OsStr::new("--to"),
            OsStr::new(kind),
            OsStr::new("-o"),
            output.as_os_str(),
        ];
        let measured = session.measure("convert", &extra)?;
        let output_bytes = disk_usage(&output)?;
        let line = format!(
            "{kind}: {}, output {:.2} GB, {}",
            session.throughput(&measured),
            output_bytes as f64 / 1e9,
            peak_text(&measured),
        );
        eprintln!("{line}");
        report.push((line, measured.peak_bytes));
        std::fs::remove_dir_all(&out_dir)?;
    }
    finish_report("convert benchmark", &session.input, &report)
}

/// Bytes of a file, or of every file under a directory.
fn disk_usage(path: &Path) -> Result<u64> {
    if path.is_file() {
        return Ok(std::fs::metadata(path)?.len());
    }
    files_under(path)?
        .iter()
        .map(|f| Ok(std::fs::metadata(path.join(f))?.len()))
        .sum()
}

/// `peak-rss FILE CMD ARGS...`: runs CMD as this process's only child and writes its peak
/// resident set (KiB, from `getrusage(RUSAGE_CHILDREN)`) to FILE. A separate process, so the
/// figure is the child's alone and not that of an earlier `cargo build`.
fn peak_rss(args: &[String]) -> Result<()> {
    let [file, cmd, rest @ ..] = args else {
        bail!("usage: cargo xtask peak-rss FILE CMD [ARGS...]");
    };
    run(Command::new(cmd).args(rest))?;
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)?;
    std::fs::write(file, usage.max_rss().to_string())?;
    Ok(())
}
