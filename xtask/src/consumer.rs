//! The consumer-crate check: recfmt used as a dependency from outside this workspace.
//!
//! A workspace hides what a user of the crates meets: its `[patch]` sections, its feature
//! unification (a feature one member turns on is on for all), its lock file. So this writes a
//! small crate into a temporary folder, outside the workspace, that depends by path on
//! `recfmt` with its default features and on `recfmt-carla` alone, and builds and runs it.
//! Its `main` (the template `consumer/main.rs.txt`) reads a CARLA sample as Arrow record
//! batches through the facade and checks the kind of the error a corrupt log gives.

use std::path::Path;

use anyhow::{Context, Result};

use crate::{cargo, project_root, run};

/// The consumer's `src/main.rs`: plain Rust, kept as a text file so that editing it needs no
/// escaping and the workspace never compiles it.
const MAIN_RS: &str = include_str!("consumer/main.rs.txt");

/// Builds and runs the consumer crate (see the [module docs](self)). Its build directory is
/// the workspace's `target/consumer`, so later runs reuse the compiled dependencies. Without
/// the samples folder it is only built, unless `CI` is set, which makes that a failure.
pub(crate) fn consumer_check() -> Result<()> {
    let root = project_root();
    let crate_dir = tempfile::Builder::new()
        .prefix("recfmt-consumer-")
        .tempdir()
        .context("creating the consumer crate's folder")?;
    write_crate(&root, crate_dir.path())?;
    let samples = std::env::var_os("RECFMT_SAMPLES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/samples"));
    let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false");
    let run_it = samples.is_dir();
    if !run_it && in_ci {
        anyhow::bail!(
            "CI is set but the samples folder {} is missing",
            samples.display()
        );
    }
    let mut command = cargo();
    command
        .arg(if run_it { "run" } else { "build" })
        .arg("--manifest-path")
        .arg(crate_dir.path().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target/consumer"))
        .env("RECFMT_SAMPLES", &samples)
        .current_dir(crate_dir.path());
    run(&mut command)?;
    if !run_it {
        eprintln!(
            "consumer check: built; not run, the samples folder {} is missing",
            samples.display()
        );
    }
    Ok(())
}

/// Writes the consumer's manifest, lock file and `main.rs` into `dir`.
fn write_crate(root: &Path, dir: &Path) -> Result<()> {
    let path_of = |krate: &str| {
        let path = root.join("crates").join(krate);
        // A TOML basic string: backslashes (Windows paths) and quotes escaped.
        path.display()
            .to_string()
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
    };
    let manifest = format!(
        r#"[package]
name = "recfmt-consumer-check"
version = "0.0.0"
edition = "2024"
publish = false

# A workspace of its own: nothing of recfmt's workspace (patches, features, lints) applies.
[workspace]

[dependencies]
recfmt = {{ path = "{recfmt}" }}
recfmt-carla = {{ path = "{carla}" }}
"#,
        recfmt = path_of("recfmt"),
        carla = path_of("recfmt-carla"),
    );
    std::fs::create_dir_all(dir.join("src"))?;
    std::fs::write(dir.join("Cargo.toml"), manifest)?;
    // The workspace's lock file as a start, so the consumer builds the same versions (and
    // needs no registry update); cargo drops what the consumer does not use.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).context("copying Cargo.lock")?;
    std::fs::write(dir.join("src/main.rs"), MAIN_RS)?;
    Ok(())
}
