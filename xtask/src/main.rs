//! Project automation, run as `cargo xtask <task>` (see `.cargo/config.toml`).
//!
//! * `ci`: what `.ci/run` runs: Python interop packages, fmt, clippy, tests, docs, fixtures check.
//! * `fixtures [--check]`: regenerate the deterministic fixtures under `tests/fixtures`.
//! * `bench [ARGS]`: the criterion benchmarks.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const TASKS: &[(&str, &str)] = &[
    (
        "ci",
        "python interop deps, fmt --check, clippy -D warnings, tests, docs, fixtures --check",
    ),
    (
        "fixtures",
        "write the generated fixtures (--check: fail if the committed ones differ)",
    ),
    (
        "bench",
        "run the criterion benchmarks (extra arguments go to cargo bench)",
    ),
];

/// Python packages the interop tests use.
const PY_PACKAGES: &[&str] = &["pyarrow", "pandas", "duckdb", "h5py"];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::env::set_current_dir(project_root())?;
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("fixtures") => fixtures(args.iter().any(|a| a == "--check")),
        Some("bench") => bench(&args[1..]),
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

/// Makes a virtualenv with the interop packages under `target/pyenv`; returns its python.
fn python_env() -> Result<PathBuf> {
    let venv = project_root().join("target/pyenv");
    let python = venv.join("bin/python");
    if !python.exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    }
    let missing = PY_PACKAGES.iter().any(|p| {
        !Command::new(&python)
            .args(["-c", &format!("import {p}")])
            .status()
            .is_ok_and(|s| s.success())
    });
    if missing {
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(PY_PACKAGES))?;
    }
    Ok(python)
}

fn ci() -> Result<()> {
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
    run(cargo()
        .args(["test", "--workspace", "--all-targets"])
        .env("RECFMT_PYTHON", &python))?;
    run(cargo().args(["test", "--workspace", "--doc"]))?;
    run(cargo()
        .args(["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings"))?;
    eprintln!("xtask ci: all checks passed");
    Ok(())
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
fn bench(extra: &[String]) -> Result<()> {
    run(cargo()
        .args(["bench", "-p", "recfmt-tlv", "--bench", "read", "--"])
        .args(extra))?;
    run(cargo()
        .args(["bench", "-p", "recfmt-icarec", "--bench", "state_at", "--"])
        .args(extra))
}
