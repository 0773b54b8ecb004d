//! `cargo test --workspace --all-targets`, with the test executables run side by side.
//!
//! Cargo runs one test executable at a time; most of ours spend their time in one long test
//! (a sweep, a Python client reading every sample), so one of CI's two cores sat idle for
//! most of the suite. This builds the executables as `cargo test --no-run` does, then runs
//! them `jobs` at a time, the longest known first, each as cargo would (in its package's
//! folder, with cargo's environment), printing each one's output when it ends. Every
//! executable runs even after a failure; the failures are listed at the end.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// Test executables that took longest in the last measured CI-like run (2 cores), by
/// target name, longest first: started first so that the short ones fill in beside them.
const LONGEST_FIRST: &[&str] = &[
    "mutation_sweep",
    "interop",
    "mcap",
    "no_panic",
    "batches",
    "h5_corrupt",
    "molecular",
    "windows",
    "xosc",
    "pictures",
    "robustness",
    "acmi",
    "parquet_engines",
    "mat",
    "hardening",
];

/// One test executable to run.
#[derive(Debug)]
struct TestExe {
    /// Its target name (`interop`, or the package name for unit tests).
    name: String,
    package: String,
    manifest_dir: PathBuf,
    executable: PathBuf,
}

/// Builds every test target of the workspace (`cargo test --workspace --all-targets
/// --no-run`) and runs the executables `jobs` at a time with `envs` set; fails if any fails.
pub fn test_workspace(envs: &[(&str, &Path)], jobs: usize) -> Result<()> {
    let exes = build_tests(envs)?;
    let started = Instant::now();
    let queue = Mutex::new(order(exes).into_iter().collect::<VecDeque<_>>());
    let failed = Mutex::new(Vec::new());
    let jobs = jobs.max(1);
    eprintln!("xtask: running the test executables {jobs} at a time");
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let Some(exe) = queue.lock().map(|mut q| q.pop_front()).ok().flatten() else {
                        return;
                    };
                    let begun = Instant::now();
                    let output = run_exe(&exe, envs);
                    let ok = report(&exe, &output, begun.elapsed());
                    if !ok && let Ok(mut failed) = failed.lock() {
                        let tests = match &output {
                            Ok(output) => failed_tests(&String::from_utf8_lossy(&output.stdout)),
                            Err(e) => format!("    could not start it: {e}\n"),
                        };
                        failed.push((exe, tests));
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap_or_default();
    eprintln!(
        "xtask: test executables done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    if failed.is_empty() {
        return Ok(());
    }
    // Each failed executable runs once more, alone, only to say whether the failure depends
    // on timing or load: the run fails either way.
    let mut summary = String::new();
    for (exe, tests) in &failed {
        let again = run_exe(exe, envs).is_ok_and(|o| o.status.success());
        let verdict = if again {
            "passed when run again alone: a failure that depends on timing or load"
        } else {
            "failed again when run alone"
        };
        summary.push_str(&format!(
            "  {} ({}): {verdict}\n{tests}",
            exe.name, exe.package
        ));
    }
    // Again at the very end, short: CI shows only the head and the tail of a long log.
    eprintln!("xtask: FAILED test executables:\n{summary}");
    bail!("{} test executable(s) failed", failed.len());
}

/// The failed tests in a libtest output, each with the first lines of its panic message.
fn failed_tests(stdout: &str) -> String {
    /// Lines of each test's panic message kept in the summary.
    const MESSAGE_LINES: usize = 4;
    let mut summary = String::new();
    // Each failed test's output is a section headed `---- NAME stdout ----`; its panic
    // message is looked for inside its own section only.
    for section in stdout.split("\n---- ").skip(1) {
        let Some((name, output)) = section.split_once(" stdout ----") else {
            continue;
        };
        summary.push_str(&format!("    {name}\n"));
        for message in output
            .lines()
            .skip_while(|l| !l.contains("panicked at"))
            .take(MESSAGE_LINES)
        {
            summary.push_str(&format!("      {message}\n"));
        }
    }
    if summary.is_empty() {
        // No panic section: a crash, a timeout or a failure outside a test.
        summary.push_str("    (no failed test named: see its output above)\n");
    }
    summary
}

/// `cargo test --workspace --all-targets --no-run`, returning the executables it built.
fn build_tests(envs: &[(&str, &Path)]) -> Result<Vec<TestExe>> {
    let mut cmd = super::cargo();
    cmd.args([
        "test",
        "--workspace",
        "--all-targets",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ]);
    for (key, value) in envs {
        cmd.env(key, value);
    }
    eprintln!("$ {cmd:?}");
    let output = cmd
        .stderr(Stdio::inherit())
        .output()
        .context("starting cargo test --no-run")?;
    if !output.status.success() {
        bail!("cargo test --no-run failed with {}", output.status);
    }
    let mut exes = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" || message["profile"]["test"] != true {
            continue;
        }
        let (Some(executable), Some(manifest)) = (
            message["executable"].as_str(),
            message["manifest_path"].as_str(),
        ) else {
            continue;
        };
        let package = message["package_id"]
            .as_str()
            .and_then(package_name)
            .unwrap_or_default();
        exes.push(TestExe {
            name: message["target"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            package,
            manifest_dir: Path::new(manifest)
                .parent()
                .context("a manifest path with no folder")?
                .to_path_buf(),
            executable: PathBuf::from(executable),
        });
    }
    if exes.is_empty() {
        bail!("cargo test --no-run built no test executable");
    }
    Ok(exes)
}

/// The package name in a cargo package id (`path+file:///x/crates/recfmt-core#0.1.0` or
/// `path+file:///x/tests#recfmt-tests@0.1.0`).
fn package_name(id: &str) -> Option<String> {
    let fragment = id.rsplit_once('#')?.1;
    match fragment.split_once('@') {
        Some((name, _)) => Some(name.to_owned()),
        // No name in the fragment: the folder's name is the package's.
        None => id.rsplit_once('#')?.0.rsplit('/').next().map(str::to_owned),
    }
}

/// The known long executables first (in [`LONGEST_FIRST`] order), then the rest as built.
fn order(mut exes: Vec<TestExe>) -> Vec<TestExe> {
    let rank = |e: &TestExe| {
        LONGEST_FIRST
            .iter()
            .position(|n| *n == e.name)
            .unwrap_or(LONGEST_FIRST.len())
    };
    exes.sort_by_key(rank);
    exes
}

/// Runs one executable as `cargo test` would: in its package's folder, with the variables
/// cargo sets for a test run.
fn run_exe(exe: &TestExe, envs: &[(&str, &Path)]) -> std::io::Result<Output> {
    let mut cmd = Command::new(&exe.executable);
    cmd.current_dir(&exe.manifest_dir)
        .env("CARGO_MANIFEST_DIR", &exe.manifest_dir)
        .env("CARGO_PKG_NAME", &exe.package)
        .stdin(Stdio::null());
    if std::env::var_os("CARGO").is_none() {
        cmd.env("CARGO", "cargo");
    }
    for (key, value) in envs {
        cmd.env(key, value);
    }
    cmd.output()
}

/// Prints how an executable ended (its whole output when it failed); true when it passed.
fn report(exe: &TestExe, output: &std::io::Result<Output>, took: Duration) -> bool {
    let label = format!(
        "{} ({}, {})",
        exe.name,
        exe.package,
        exe.executable
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
    );
    match output {
        Ok(output) if output.status.success() => {
            let stdout = String::from_utf8_lossy(&output.stdout);
            let summary = stdout
                .lines()
                .rev()
                .find(|l| l.starts_with("test result:"))
                .unwrap_or("done");
            eprintln!("  ok   {label} in {:.1} s: {summary}", took.as_secs_f64());
            true
        }
        Ok(output) => {
            eprintln!(
                "  FAIL {label} ({}) in {:.1} s\n--- stdout\n{}\n--- stderr\n{}",
                output.status,
                took.as_secs_f64(),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            false
        }
        Err(e) => {
            eprintln!("  FAIL {label}: could not start it: {e}");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_from_both_id_forms() {
        assert_eq!(
            package_name("path+file:///w/crates/recfmt-core#0.1.0").as_deref(),
            Some("recfmt-core")
        );
        assert_eq!(
            package_name("path+file:///w/tests#recfmt-tests@0.1.0").as_deref(),
            Some("recfmt-tests")
        );
        assert_eq!(package_name("no fragment"), None);
    }

    #[test]
    fn failed_tests_are_named_with_their_panic() {
        let stdout = "running 2 tests\ntest a ... ok\ntest b::c ... FAILED\n\nfailures:\n\n\
                      ---- b::c stdout ----\n\nthread 'b::c' panicked at tests/x.rs:3:5:\n\
                      rows differ\nleft: 1\nright: 2\nmore\nand more\n\nfailures:\n    b::c\n";
        assert_eq!(
            failed_tests(stdout),
            "    b::c\n      thread 'b::c' panicked at tests/x.rs:3:5:\n      rows differ\n\
             \x20     left: 1\n      right: 2\n"
        );
        assert!(failed_tests("crashed").contains("no failed test named"));
    }

    #[test]
    fn the_known_long_executables_go_first() {
        let exe = |name: &str| TestExe {
            name: name.to_owned(),
            package: String::new(),
            manifest_dir: PathBuf::new(),
            executable: PathBuf::new(),
        };
        let names: Vec<String> = order(vec![exe("rows"), exe("interop"), exe("mutation_sweep")])
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["mutation_sweep", "interop", "rows"]);
    }
}
