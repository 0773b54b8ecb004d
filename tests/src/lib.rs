//! Helpers shared by the cross-crate and command-line tests: where the `recfmt` binary, the
//! generated fixtures, the shared samples and a Python with the interop packages are.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// A generated fixture under `tests/fixtures/generated` (see `cargo xtask fixtures`).
pub fn fixture(relative: &str) -> PathBuf {
    workspace_root()
        .join("tests/fixtures/generated")
        .join(relative)
}

/// True when running in CI, where missing samples or tools are failures, not skips.
pub fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
}

/// The `recfmt` binary of this build profile, built on first use.
///
/// Integration tests of another package cannot see `CARGO_BIN_EXE_recfmt`, so this asks cargo
/// to build it (a no-op when it is fresh) and takes it from the target directory.
pub fn recfmt_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test executable path");
        // target/<profile>/deps/<test> -> target/<profile>
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target profile directory")
            .to_path_buf();
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "recfmt",
            "--bin",
            "recfmt",
            "--features",
            "cli",
        ])
        .current_dir(workspace_root());
        if release {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build for the recfmt binary");
        assert!(status.success(), "building the recfmt binary failed");
        profile_dir.join(format!("recfmt{}", std::env::consts::EXE_SUFFIX))
    })
}

/// Runs `recfmt` with `args`.
pub fn recfmt(args: &[&str]) -> Output {
    Command::new(recfmt_bin())
        .args(args)
        .output()
        .expect("run recfmt")
}

/// Fails the test unless `output` (of a command run for `what`) succeeded, showing its stderr.
#[track_caller]
pub fn assert_success(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A Python interpreter that can import `modules`, or `None` (a CI run panics instead).
///
/// `cargo xtask ci` sets `RECFMT_PYTHON` to a virtualenv with the interop packages.
pub fn python_with(modules: &[&str]) -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = std::env::var_os("RECFMT_PYTHON")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            workspace_root().join("target/pyenv/bin/python"),
            "python3".into(),
        ])
        .collect();
    let import = format!("import {}", modules.join(", "));
    for python in candidates {
        let ok = Command::new(&python)
            .args(["-c", &import])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Some(python);
        }
    }
    assert!(
        !in_ci(),
        "CI is set but no Python can import {modules:?}: run `cargo xtask ci`, which installs them"
    );
    eprintln!("skipping: no Python with {modules:?} (run `cargo xtask ci` to install them)");
    None
}

/// Copies a directory tree (fixtures are small).
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// Every file below `dir`, sorted, relative to `dir`.
pub fn list_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    out.sort();
    out
}

/// The files directly in `dir`, sorted by name, each with its bytes: to compare two outputs
/// byte for byte.
pub fn files_with_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let path = e.expect("a folder entry").path();
            let name = path
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (name, bytes)
        })
        .collect();
    out.sort();
    out
}

/// Where the upstream samples are: `RECFMT_SAMPLES`, else `../shared/samples`. `None` (with a
/// printed reason) when absent; a CI run fails instead.
pub fn samples_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("RECFMT_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/samples"));
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        !in_ci(),
        "CI is set but the samples folder {} is missing",
        dir.display()
    );
    eprintln!("skipping samples: {} not found", dir.display());
    None
}

/// The sample files of one format folder with this extension, sorted (empty without samples).
pub fn samples(folder: &str, extension: &str) -> Vec<PathBuf> {
    let Some(root) = samples_dir() else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(folder))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.retain(|p| p.extension().is_some_and(|e| e == extension));
    found.sort();
    assert!(
        !found.is_empty() || !in_ci(),
        "no {folder} samples in {}",
        root.display()
    );
    found
}

/// An input of the hardening review from `../shared/reproducers` (`RECFMT_REPRODUCERS`
/// overrides). `None` (with a printed reason) when absent; a CI run fails instead.
pub fn reproducer(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("RECFMT_REPRODUCERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/reproducers"));
    let path = dir.join(name);
    if path.exists() {
        return Some(path);
    }
    assert!(!in_ci(), "CI is set but {} is missing", path.display());
    eprintln!("skipping: {} not found", path.display());
    None
}
