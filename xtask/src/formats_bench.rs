//! `cargo xtask bench formats [--mb N] [--format NAME] [--baseline RECFMT]`: for every
//! format, a full read against `cat` of the same bytes, and the conversion to Parquet (issue
//! 11); with `--baseline`, the same full read and conversion by another `recfmt` binary (a
//! release build of an earlier commit), timed in turns with this tree's, before and after.
//!
//! For USVLOG, ICAREC, Icarus HDF5, CARLA, FlightGear and NanoVer (or only `--format NAME`,
//! one of [`FORMATS`]), an input of at least N MB (10^6 bytes, default 1024) is generated once
//! into `target/bench-data/<format>-<N>mb/`, and regenerated only when missing or smaller than
//! N MB. Every input is written by that format's own writer in the library, streaming (one
//! frame in memory at a time), into `<format>-<N>mb.partial/`, which is renamed when complete
//! (USVLOG: in place, `meta.json` last, as `bench compare` does):
//!
//! - **USVLOG**: `recfmt_tlv::generate::write_bench_session` (every built-in record type plus
//!   two user types read with its `layouts.toml`), shared with `bench compare`.
//! - **ICAREC**: `recfmt_icarec::generate::write_all_types` (the all-types fixture recording:
//!   every signal type, static and dynamic, through the ICAREC `Writer`) with as many frames
//!   as N MB of frames need.
//! - **Icarus HDF5**: `recfmt_icarec::write_icarus_h5` (the `IcarusH5Writer`, as
//!   `recfmt convert --to icarus-h5` uses it) from the ICAREC input of the same size; every
//!   static signal is a dataset of one value per frame, so the file is larger than its source.
//! - **CARLA**: `recfmt_carla::tracks::TrackLogWriter` (the writer behind
//!   `recfmt convert tracks.csv --to carla`), CARLA 0.9.15, from a trajectories table of
//!   [`CARLA_ACTORS`] vehicles and walkers moving over 20 Hz frames.
//! - **FlightGear**: `recfmt_fgtape::FgTapeWriter` (a Continuous tape from the generic model,
//!   uncompressed), one `signals` stream of doubles, floats, ints, int16s, int8s and bools at
//!   128 Hz.
//! - **NanoVer**: `recfmt_nanover::generate::write_bench_traj` (the `.traj` writer), a topology
//!   frame then frames with the positions and velocities of [`NANOVER_PARTICLES`] particles.
//! - **NanoVer zip**: `recfmt_nanover::generate::write_bench_zip` (the `.nanover.zip` writer,
//!   zip64 past 4 GiB), the same frames as one `messages.msgpack` and its `index.msgpack`.
//!
//! After generating, `recfmt info --json` must succeed on the input and report it complete
//! (nothing lost or skipped).
//!
//! Measured with the release `recfmt`, best of [`RUNS`] each, after one `cat` of the input
//! to warm the page cache:
//!
//! - **full read**: `recfmt validate`, which reads every record of every stream but, since
//!   column projection, decodes only the time columns of the fixed-layout formats (USVLOG,
//!   ICAREC, Icarus HDF5, FlightGear signals, CARLA's per-actor packets: their other columns
//!   are skipped, not decoded) and runs the format's own checks (ICAREC: the schema checksum
//!   and the SHA-256 digests in `metadata.json`; NanoVer: its record checker, a second pass).
//!   NanoVer's batch reader leaves the skipped columns undecoded too, parsing every record;
//! - **every value**: the `read_batches` example with `--one-pass` (release build): every
//!   stream read in one pass through the public batch API into Arrow record batches, each
//!   dropped once made: every value of every record decoded, nothing written (an export such
//!   as `--to arrow` would also time writing as many bytes again);
//! - `cat <the input's files> > /dev/null`;
//! - `recfmt convert --to parquet` (zstd, the default) into a fresh folder, and once more
//!   under `cargo xtask peak-rss` for its peak resident memory;
//! - for ICAREC only, whose validate must hash every byte to check the SHA-256 digests in
//!   `metadata.json`: `openssl dgst -sha256 <the input's files>` (when `openssl` is on the
//!   PATH): the time hashing alone takes, about the least a full read that checks the
//!   digests can take.
//!
//! Outputs are deleted after each run. Prints a Markdown table with MB/s (input bytes / time)
//! and the ratio `cat` time / read time against the goal (at least 0.25, a full read within 4x
//! of `cat`); a missed goal is printed, not a failure.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use recfmt_core::{
    DType, FrameBuf, Header, RecordingWriter, Schema, SignalDesc, StreamDesc, TimeBase, Value,
};

use crate::compare::{RUNS, best_of, best_of_alternating, git, load_average, quiet};
use crate::session::ensure_session;
use crate::{disk_usage, files_under, project_root, run};

/// The formats, in the order of the report, as `--format` names them.
pub const FORMATS: [&str; 7] = [
    "usvlog",
    "icarec",
    "icarus-h5",
    "carla",
    "fgtape",
    "nanover",
    "nanover-zip",
];

/// Default input size per format in MB (10^6 bytes): at least 1 GB.
const DEFAULT_MB: u64 = 1024;

/// The goal of issue 11: `cat` time / full read time.
const READ_GOAL: f64 = 0.25;

/// Actors moving in every frame of the CARLA input.
pub const CARLA_ACTORS: u32 = 400;

/// Particles in every frame of the NanoVer input.
pub const NANOVER_PARTICLES: usize = 10_000;

/// A generated input, ready to measure.
pub(crate) struct Input {
    pub(crate) format: &'static str,
    /// What `recfmt` is given.
    pub(crate) path: PathBuf,
    /// Arguments every `recfmt` command needs (USVLOG: its layout file).
    pub(crate) args: Vec<OsString>,
    /// Every file of the input, for `cat`.
    pub(crate) files: Vec<PathBuf>,
    /// Their total size.
    pub(crate) bytes: u64,
}

/// The figures of one format, in seconds.
struct Figures {
    validate: f64,
    every_value: f64,
    cat: f64,
    parquet: f64,
    /// Peak resident memory of one conversion to Parquet, in bytes.
    parquet_peak: u64,
    /// `openssl dgst -sha256` of the input (ICAREC only).
    digest: Option<f64>,
    /// With `--baseline`: the full read and the conversion to Parquet by the baseline binary
    /// and by this one, timed in turns.
    before_after: Option<BeforeAfter>,
}

/// Best times of the baseline binary (`[0]`) and this tree's (`[1]`).
struct BeforeAfter {
    validate: [f64; 2],
    parquet: [f64; 2],
}

/// `cargo xtask bench formats [--mb N] [--format NAME]`.
pub fn bench_formats(args: &[String]) -> Result<()> {
    const USAGE: &str =
        "usage: cargo xtask bench formats [--mb N] [--format NAME] [--baseline RECFMT]";
    let mut mb = DEFAULT_MB;
    let mut only: Option<&str> = None;
    let mut baseline: Option<PathBuf> = None;
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
                baseline = Some(path);
            }
            "--format" => {
                only = Some(
                    FORMATS
                        .iter()
                        .copied()
                        .find(|f| f == value)
                        .with_context(|| {
                            format!("no format {value:?}: one of {}", FORMATS.join(", "))
                        })?,
                );
            }
            _ => bail!(USAGE),
        }
    }
    if mb == 0 {
        bail!("--mb must be at least 1");
    }
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "?".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    crate::build_release_recfmt()?;
    let read_batches = crate::python_bench::build_read_batches()?;
    let recfmt = project_root().join("target/release/recfmt");
    let data = project_root().join("target/bench-data");
    std::fs::create_dir_all(&data)?;
    let min_bytes = mb * 1_000_000;
    let out = data.join("formats-out");

    let load_before = load_average();
    let mut results = Vec::new();
    for format in FORMATS
        .iter()
        .copied()
        .filter(|f| only.is_none_or(|o| o == *f))
    {
        let input = prepare(format, &data, mb, min_bytes)?;
        check_info(&recfmt, &input)?;
        let _ = std::fs::remove_dir_all(&out);
        std::fs::create_dir_all(&out)?;
        let figures = measure(&recfmt, &read_batches, baseline.as_deref(), &input, &out)?;
        std::fs::remove_dir_all(&out)?;
        results.push((input, figures));
    }

    println!(
        "\nFull read, cat and convert to Parquet per format: inputs of at least {mb} MB in {}, \
         best of {RUNS}; recfmt {commit}{}",
        data.display(),
        if dirty {
            " plus uncommitted changes"
        } else {
            ""
        },
    );
    println!(
        "load average (1 min) {load_before} before, {} after: other work on the machine slows \
         every figure",
        load_average()
    );
    println!(
        "full read = `recfmt validate` (decodes only time columns of fixed-layout formats); \
         every value = the read_batches example --one-pass (every stream into Arrow batches); ratio = cat time / read time, goal >= \
         {READ_GOAL}\n"
    );
    println!(
        "| format | input MB | full read s | MB/s | cat s | MB/s | ratio cat/read | goal | \
         every value s | MB/s | ratio cat/every value | to Parquet s | MB/s | peak MB | \
         openssl dgst -sha256 s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (input, f) in &results {
        let mb = input.bytes as f64 / 1e6;
        let ratio = f.cat / f.validate;
        println!(
            "| {} | {mb:.1} | {:.3} | {:.0} | {:.3} | {:.0} | {ratio:.2} | {} | {:.3} | {:.0} | \
             {:.2} | {:.3} | {:.0} | {:.1} | {} |",
            input.format,
            f.validate,
            mb / f.validate,
            f.cat,
            mb / f.cat,
            if ratio >= READ_GOAL { "met" } else { "missed" },
            f.every_value,
            mb / f.every_value,
            f.cat / f.every_value,
            f.parquet,
            mb / f.parquet,
            f.parquet_peak as f64 / 1e6,
            f.digest.map_or("-".into(), |d| format!("{d:.3}")),
        );
    }
    if let Some(baseline) = &baseline {
        println!(
            "\nBefore ({}) and after (this tree), timed in turns, best of {RUNS}; ratio = \
             before / after (above 1: faster now)\n",
            baseline.display()
        );
        println!(
            "| format | full read before s | after s | ratio | to Parquet before s | after s | \
             ratio |"
        );
        println!("|---|---|---|---|---|---|---|");
        for (input, f) in &results {
            if let Some(ba) = &f.before_after {
                println!(
                    "| {} | {:.3} | {:.3} | {:.2} | {:.3} | {:.3} | {:.2} |",
                    input.format,
                    ba.validate[0],
                    ba.validate[1],
                    ba.validate[0] / ba.validate[1],
                    ba.parquet[0],
                    ba.parquet[1],
                    ba.parquet[0] / ba.parquet[1],
                );
            }
        }
    }
    Ok(())
}

/// Times the full read, the every-value read, `cat` and the conversion to Parquet of `input`.
fn measure(
    recfmt: &Path,
    read_batches: &Path,
    baseline: Option<&Path>,
    input: &Input,
    out: &Path,
) -> Result<Figures> {
    let name = input.format;
    let recfmt_cmd = |command: &str| {
        let mut cmd = Command::new(recfmt);
        cmd.arg(command).args(&input.args).arg(&input.path);
        cmd
    };
    let cat = || {
        let mut cmd = Command::new("cat");
        cmd.args(&input.files);
        cmd
    };
    // Warm the page cache: every figure is of reading from memory.
    quiet(&mut cat())?;
    let validate = best_of(
        &format!("{name}: recfmt validate"),
        out,
        "validate",
        false,
        |_| vec![recfmt_cmd("validate")],
    )?;
    let every_value = best_of(
        &format!("{name}: read_batches --one-pass"),
        out,
        "one-pass",
        false,
        |_| {
            let mut cmd = Command::new(read_batches);
            cmd.args(&input.args).arg(&input.path).arg("--one-pass");
            vec![cmd]
        },
    )?;
    let cat = best_of(&format!("{name}: cat"), out, "cat", false, |_| vec![cat()])?;
    let parquet = best_of(
        &format!("{name}: recfmt convert --to parquet"),
        out,
        "parquet",
        false,
        |dir| {
            let mut cmd = recfmt_cmd("convert");
            cmd.args(["--to", "parquet", "-o"]).arg(dir);
            vec![cmd]
        },
    )?;
    let peak_file = out.join("peak-rss");
    let peak_dir = out.join("parquet-peak");
    std::fs::create_dir_all(&peak_dir)?;
    run(Command::new(std::env::current_exe()?)
        .arg("peak-rss")
        .arg(&peak_file)
        .arg(recfmt)
        .arg("convert")
        .args(&input.args)
        .arg(&input.path)
        .args(["--to", "parquet", "-o"])
        .arg(&peak_dir))?;
    let parquet_peak = std::fs::read_to_string(&peak_file)?.trim().parse::<u64>()? * 1024;
    std::fs::remove_dir_all(&peak_dir)?;
    let has_openssl = Command::new("openssl")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let digest = if name == "icarec" && has_openssl {
        Some(best_of(
            &format!("{name}: openssl dgst -sha256"),
            out,
            "digest",
            false,
            |_| {
                let mut cmd = Command::new("openssl");
                cmd.args(["dgst", "-sha256"]).args(&input.files);
                vec![cmd]
            },
        )?)
    } else {
        None
    };
    let before_after = baseline
        .map(|baseline| before_after(baseline, recfmt, input, out))
        .transpose()?;
    Ok(Figures {
        validate,
        every_value,
        cat,
        parquet,
        parquet_peak,
        digest,
        before_after,
    })
}

/// The full read and the conversion to Parquet by `baseline` and by `recfmt`, timed in turns.
fn before_after(baseline: &Path, recfmt: &Path, input: &Input, out: &Path) -> Result<BeforeAfter> {
    let binaries = [baseline, recfmt];
    let command = |which: usize, verb: &str| {
        let mut cmd = Command::new(binaries[which]);
        cmd.arg(verb).args(&input.args).arg(&input.path);
        cmd
    };
    let name = input.format;
    let validate = best_of_alternating(
        &format!("{name}: recfmt validate"),
        out,
        "validate-ba",
        |which, _| command(which, "validate"),
    )?;
    let parquet = best_of_alternating(
        &format!("{name}: recfmt convert --to parquet"),
        out,
        "parquet-ba",
        |which, dir| {
            let mut cmd = command(which, "convert");
            cmd.args(["--to", "parquet", "-o"]).arg(dir);
            cmd
        },
    )?;
    Ok(BeforeAfter { validate, parquet })
}

/// `recfmt info --json` must succeed and report the input complete: the input is what its
/// writer meant, not a recording the reader gave up on.
fn check_info(recfmt: &Path, input: &Input) -> Result<()> {
    let mut cmd = Command::new(recfmt);
    cmd.arg("info")
        .args(&input.args)
        .arg("--json")
        .arg(&input.path)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    let output = cmd.output().with_context(|| format!("starting {cmd:?}"))?;
    if !output.status.success() {
        bail!(
            "{cmd:?} failed with {}: the generated {} input does not read back (delete its \
             folder to generate it again)",
            output.status,
            input.format
        );
    }
    let info: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("recfmt info printed no JSON")?;
    let integrity = &info["integrity"];
    let complete = integrity["status"] == "complete"
        && integrity["bytes_lost"] == 0
        && integrity["records_skipped"] == 0;
    let rows = info["rows"].as_u64().unwrap_or(0);
    if !complete || rows == 0 {
        bail!(
            "recfmt info on the generated {} input {}: {rows} rows, integrity {integrity} \
             (delete the folder to generate it again)",
            input.format,
            input.path.display()
        );
    }
    eprintln!(
        "{}: {} ({:.1} MB, {rows} rows) reads back complete",
        input.format,
        input.path.display(),
        input.bytes as f64 / 1e6
    );
    Ok(())
}

/// The input of `format`, generated unless a complete one of at least `min_bytes` is cached.
pub(crate) fn prepare(format: &'static str, data: &Path, mb: u64, min_bytes: u64) -> Result<Input> {
    let dir = data.join(format!("{format}-{mb}mb"));
    let (name, args): (&str, Vec<OsString>) = match format {
        "usvlog" => {
            // Shared with `bench compare`, which caches the same session under the same name.
            ensure_session(&dir, min_bytes)?;
            let layout = dir.join("layouts.toml");
            return input(
                format,
                &dir,
                dir.clone(),
                vec!["--layout".into(), layout.into()],
            );
        }
        "icarec" => {
            cached(&dir, min_bytes, |tmp| {
                icarec(&tmp.join("bench.icarec"), min_bytes)
            })?;
            ("bench.icarec", Vec::new())
        }
        "icarus-h5" => {
            let source = prepare("icarec", data, mb, min_bytes)?;
            cached(&dir, min_bytes, |tmp| {
                let mut reader =
                    recfmt_icarec::IcarecRecording::open(&source.path, &Default::default())?;
                recfmt_icarec::write_icarus_h5(
                    &mut reader,
                    &tmp.join("bench.h5"),
                    &recfmt_icarec::IcarusH5Options::default(),
                )?;
                Ok(())
            })?;
            ("bench.h5", Vec::new())
        }
        "carla" => {
            cached(&dir, min_bytes, |tmp| {
                carla(&tmp.join("bench.log"), min_bytes)
            })?;
            ("bench.log", Vec::new())
        }
        "fgtape" => {
            cached(&dir, min_bytes, |tmp| {
                fgtape(&tmp.join("bench.fgtape"), min_bytes)
            })?;
            ("bench.fgtape", Vec::new())
        }
        "nanover" => {
            cached(&dir, min_bytes, |tmp| {
                nanover(&tmp.join("bench.traj"), min_bytes)
            })?;
            ("bench.traj", Vec::new())
        }
        "nanover-zip" => {
            cached(&dir, min_bytes, |tmp| {
                recfmt_nanover::generate::write_bench_zip(
                    &tmp.join("bench.nanover.zip"),
                    NANOVER_PARTICLES,
                    min_bytes,
                )?;
                Ok(())
            })?;
            ("bench.nanover.zip", Vec::new())
        }
        other => bail!("no generator for {other}"),
    };
    input(format, &dir, dir.join(name), args)
}

/// The [`Input`] whose files are everything under `dir`.
fn input(format: &'static str, dir: &Path, path: PathBuf, args: Vec<OsString>) -> Result<Input> {
    let files: Vec<PathBuf> = files_under(dir)?.into_iter().map(|f| dir.join(f)).collect();
    Ok(Input {
        format,
        path,
        args,
        files,
        bytes: disk_usage(dir)?,
    })
}

/// Makes sure `dir` holds a complete input of at least `min_bytes`: kept when it does, else
/// `generate` writes one into `dir.partial`, which is checked and renamed to `dir`.
fn cached(dir: &Path, min_bytes: u64, generate: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    if dir.is_dir() && disk_usage(dir)? >= min_bytes {
        return Ok(());
    }
    let mut partial = dir.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    for old in [dir, partial.as_path()] {
        if old.exists() {
            std::fs::remove_dir_all(old).with_context(|| format!("removing {}", old.display()))?;
        }
    }
    std::fs::create_dir_all(&partial)?;
    eprintln!("generating {} ...", dir.display());
    let started = std::time::Instant::now();
    generate(&partial).with_context(|| format!("generating {}", dir.display()))?;
    let bytes = disk_usage(&partial)?;
    if bytes < min_bytes {
        bail!(
            "the generator wrote {bytes} bytes into {}, fewer than the {min_bytes} asked for",
            partial.display()
        );
    }
    std::fs::rename(&partial, dir)?;
    // The generators stream: this process's peak stays small whatever the size.
    let peak_kib = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .map_or(0, |u| u.max_rss());
    eprintln!(
        "generated {:.1} MB in {:.1} s (xtask peak RSS so far, startup included: {:.1} MB)",
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64(),
        peak_kib as f64 * 1024.0 / 1e6
    );
    Ok(())
}

/// The all-types ICAREC recording with enough frames for `min_bytes` of frames.
fn icarec(path: &Path, min_bytes: u64) -> Result<()> {
    let schema = recfmt_icarec::generate::all_types_schema()?;
    // Each frame is its f64 time and the dynamic block.
    let stride = 8 + schema.layout().dynamic_size as u64;
    recfmt_icarec::generate::write_all_types(path, min_bytes.div_ceil(stride))?;
    Ok(())
}

/// A CARLA 0.9.15 log from a trajectories table: [`CARLA_ACTORS`] actors (one in four a
/// walker) moving in every 20 Hz frame, until the Position records alone fill `min_bytes`.
fn carla(path: &Path, min_bytes: u64) -> Result<()> {
    use recfmt_carla::tracks::{TrackLogWriter, TrackOptions, TrackRow};
    const BLUEPRINTS: [&str; 4] = [
        "vehicle.tesla.model3",
        "vehicle.audi.tt",
        "vehicle.lincoln.mkz_2020",
        "walker.pedestrian.0001",
    ];
    // A Position record: actor id (u32), location and rotation (3 f32 each). Frame headers
    // and the empty per-frame packets come on top, so the file exceeds `min_bytes`.
    let position_bytes = 4 + 6 * 4;
    let frames = min_bytes.div_ceil(u64::from(CARLA_ACTORS) * position_bytes);
    let flavour = recfmt_carla::Flavour::Carla0915;
    let options = TrackOptions {
        date: 1_771_243_200,
        ..TrackOptions::new(flavour)
    };
    let file = std::fs::File::create(path)?;
    let mut w = TrackLogWriter::new(std::io::BufWriter::with_capacity(1 << 20, file), &options)?;
    for frame in 0..frames {
        let t = frame as f64 * 0.05;
        for actor in 0..CARLA_ACTORS {
            let a = f64::from(actor);
            let speed = 1.0 + f64::from(actor % 7);
            w.push(TrackRow {
                time: t,
                id: actor + 1,
                blueprint: BLUEPRINTS[actor as usize % BLUEPRINTS.len()].into(),
                x: a * 4.0 + speed * t,
                y: -a * 2.0 + 0.5 * t,
                z: 0.25,
                roll: 0.0,
                pitch: (a * 0.01) % 5.0,
                yaw: (a + t * 10.0) % 360.0,
                ..TrackRow::default()
            })?;
        }
    }
    let (mut out, _) = w.finish()?;
    out.flush()?;
    Ok(())
}

/// A FlightGear Continuous tape (uncompressed) of one `signals` stream at 128 Hz: 64
/// doubles, 32 floats, 16 ints, 8 int16s, 8 int8s and 8 bools per frame, until the time and
/// the non-bool values alone fill `min_bytes`.
fn fgtape(path: &Path, min_bytes: u64) -> Result<()> {
    let kinds: [(&str, DType, usize, u64); 6] = [
        ("double", DType::F64, 64, 8),
        ("float", DType::F32, 32, 4),
        ("int", DType::I32, 16, 4),
        ("int16", DType::I16, 8, 2),
        ("int8", DType::I8, 8, 1),
        // Bools may be stored as bits: not counted.
        ("bool", DType::Bool, 8, 0),
    ];
    let mut stream = StreamDesc::new(
        "signals",
        SignalDesc::scalar("t", DType::F64),
        TimeBase::SECONDS,
    );
    let mut frame_bytes = 8u64;
    for (name, dtype, count, size) in kinds {
        for i in 0..count {
            stream
                .signals
                .push(SignalDesc::scalar(format!("/bench/{name}-{i:03}"), dtype));
        }
        frame_bytes += count as u64 * size;
    }
    let schema = Schema {
        streams: vec![stream],
    };
    let frames = min_bytes.div_ceil(frame_bytes);
    let mut w = recfmt_fgtape::FgTapeWriter::create(path);
    w.write_header(&Header::default(), &schema)?;
    let mut row = FrameBuf::default();
    for frame in 0..frames {
        row.values.clear();
        row.values.push(Value::Float(frame as f64 / 128.0));
        let f = frame as i64;
        for (_, dtype, count, _) in kinds {
            for i in 0..count as i64 {
                row.values.push(match dtype {
                    DType::F64 => Value::Float(f as f64 * 0.01 + i as f64),
                    DType::F32 => Value::Float((f % 10_000) as f64 * 0.5 - i as f64),
                    DType::I32 => Value::Int((f + i) % 1_000_000),
                    DType::I16 => Value::Int((f + i) % 30_000),
                    DType::I8 => Value::Int((f + i) % 100 - 50),
                    _ => Value::Bool((f + i) % 3 == 0),
                });
            }
        }
        w.write_frame(&row)?;
    }
    w.finish()?;
    Ok(())
}

/// A NanoVer `.traj` of [`NANOVER_PARTICLES`] particles of at least `min_bytes`.
fn nanover(path: &Path, min_bytes: u64) -> Result<()> {
    let out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let (mut out, _) =
        recfmt_nanover::generate::write_bench_traj(out, NANOVER_PARTICLES, min_bytes)?;
    out.flush()?;
    Ok(())
}
