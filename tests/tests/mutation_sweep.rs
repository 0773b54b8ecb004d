//! The mutation sweep of issue 14: deterministic mutants of every fixture and sample, read
//! through the library's front door (`recfmt::open_with`, `recfmt::validate::validate`,
//! `recfmt::convert::convert`) in this process, under a 2 GiB address-space limit, a per-run
//! time cap and a per-run allocation measure.
//!
//! Every run must end without a panic, within [`TIME_CAP`], with at most
//! [`MEMORY_FACTOR`] × the input's size + [`MEMORY_MARGIN`] bytes allocated at its peak, and
//! with an exit code (as the command line computes it, [`recfmt::Outcome::exit_code_of`]) of
//! 0, 1 or 3 only.
//!
//! **Mutants** of each input's files (seeded per input and index, so any one can be replayed):
//! bit flips, bytes set to 0/0xff/0x7f/0x80, 16/32/64-bit fields (either byte order) bumped
//! or set to extremes, chunks deleted, duplicated, inserted or overwritten from elsewhere, and
//! truncations; one to three per mutant. Each mutant is read leniently; every fourth also with
//! `--strict` or `--resync`, every eighth validated, every sixteenth converted (Parquet or
//! NDJSON, or a FlightGear tape or CARLA log copied faithfully into its own format) into a
//! temporary folder, and every thirty-second run through one of the commands added in round 2
//! (issue 26), in turn: `plot` (overview; every signal; `--track`
//! for FlightGear tapes), `carla map` (CARLA logs), `--to mcap` and `--partition` (see
//! [`commands`]).
//!
//! **Cuts** of each input's main file at every byte (inputs of at most their share of
//! `RECFMT_SWEEP_CUTS`, a budget per format, bytes;
//! larger ones at every byte of the first quarter of the budget, at most 512, and a stride
//! after): the rows read are
//! exactly a prefix of the complete read's rows (for Normal FlightGear tapes, read oldest
//! container first though the file holds the newest first, an ordered subsequence: see
//! [`CutRows`]), never fewer for a longer cut, and the loss is
//! reported (exit 3, or 1 when the cut leaves no readable recording) whenever the format can
//! know it. Where a cut reports `truncated_at = T`, the cut at `T` reads the same rows
//! (everything complete before the tear was read). What a format cannot know:
//!
//! * NanoVer `.traj`/`.state`: a stream of length-prefixed records with no count and no end
//!   marker, so a cut exactly between two records is a shorter valid recording;
//! * CARLA logs: the header holds no frame count and a log has no footer, so a cut right
//!   after a frame's end (or right after the header: a recorder stopped before its first
//!   tick) is a shorter, complete log. A cut anywhere inside a frame is reported (no
//!   FrameEnd);
//! * FlightGear Continuous and Recovery tapes: frames are appended with no count or footer
//!   (that is what makes them crash-safe), so the same holds at a frame boundary;
//! * ICAREC `static_signals.bin`/`schema.json`/`metadata.json` are not cut (JSON and the
//!   static block are all-or-nothing and fail with exit 1).
//!
//! Such a silent cut (exit 0 before the end) is accepted only at a record boundary, checked
//! without trusting the reader: the cut one byte further must then report the loss (a torn
//! record), else the test fails. All other formats must report every cut: USVLOG and ICAREC
//! carry record counts (`meta.json`, `metadata.json`), Normal FlightGear tapes hold their containers' sizes (and gzip has a trailer), HDF5 and
//! zip have directories.
//!
//! Knobs (environment): `RECFMT_SWEEP_MUTANTS` mutants per format (default
//! [`DEFAULT_MUTANTS`], the CI budget; `cargo xtask sweep` runs 10,000 in release),
//! `RECFMT_SWEEP_CUTS` most cuts per format (split over its inputs, at least 64 each), `RECFMT_SWEEP_FULL=1` every sample (default: the
//! smallest sample of each kind), `RECFMT_SWEEP_FORMATS=usvlog,carla` a subset,
//! `RECFMT_SWEEP_JOBS` processes (default: the cores available; formats are dealt out among
//! them), `RECFMT_SWEEP_ONLY=<input>#<index>` one mutant (as a failure prints it), and
//! `RECFMT_SWEEP_COMMANDS=round2` the round-2 commands alone: each mutant read and run
//! through every round-2 command that applies, no cuts.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use peak_alloc::PeakAlloc;
use recfmt::core::{FrameBuf, Value};
use recfmt::plot::ImageKind;
use recfmt::{OpenOptions, Outcome};

#[path = "mutation_sweep/commands.rs"]
mod commands;

use commands::Command;

#[global_allocator]
static ALLOCATED: PeakAlloc = PeakAlloc;

/// The address-space limit of the whole test process.
const ADDRESS_SPACE: u64 = 2 << 30;
/// How long one run (a read, validate or convert of one mutant) may take, in debug builds.
const TIME_CAP: Duration = Duration::from_secs(60);
/// Peak allocation of one run may be this many times the input's size...
const MEMORY_FACTOR: u64 = 10;
/// ...plus this (thread stacks are not counted; buffers, tables and batches are).
const MEMORY_MARGIN: u64 = 64 << 20;
/// Mutants per format when `RECFMT_SWEEP_MUTANTS` is not set.
const DEFAULT_MUTANTS: usize = 1000;
/// Most cuts per format when `RECFMT_SWEEP_CUTS` is not set.
const DEFAULT_CUTS: usize = 1000;

/// Which cuts of a format can go unnoticed (exit 0): the format cannot know them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Silent {
    /// None: every cut must report the loss.
    Never,
    /// A cut exactly between two records (record streams with no count and no end marker).
    AtRecordBoundaries,
}

/// One recording to mutate: a folder of files (copied to a working folder), the path inside it
/// that is opened, and the files that are mutated (the first is the main one, and is cut).
struct Input {
    format: &'static str,
    name: String,
    files: Vec<(String, Vec<u8>)>,
    open: String,
    targets: Vec<String>,
    /// Which cuts can go unnoticed (see the module comment).
    silent: Silent,
    /// Signals whose text depends on the whole file, not compared between a cut and the
    /// complete read: NanoVer's `delta_keys` names a key `[key, type]` when the file holds
    /// it with two types, which a cut may not.
    whole_file_signals: &'static [&'static str],
    /// The time columns a cut may leave unknown: a null there stands for any time (a
    /// `.nanover.zip` cut before its index: messages found by decoding `messages.msgpack`
    /// carry no time); a time that is there must be the complete read's.
    time_signals: &'static [&'static str],
    /// How a cut's rows relate to the complete read's (see [`CutRows`]).
    cut_rows: CutRows,
}

/// How the rows of a cut relate to those of the complete read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CutRows {
    /// A prefix, per stream: rows are served in file order.
    Prefix,
    /// An ordered subsequence, per stream: rows are served in time order, which is not the
    /// file order. A Normal FlightGear tape holds its short-, medium- and long-term
    /// containers in that order in the file and is read oldest first (long-term first), so
    /// a cut keeps a prefix of each container it reaches and the rows read are the complete
    /// read's with the tail of some containers left out.
    Subsequence,
}

impl Input {
    fn size(&self) -> u64 {
        self.files.iter().map(|(_, b)| b.len() as u64).sum()
    }
    fn bytes(&self, file: &str) -> &[u8] {
        &self
            .files
            .iter()
            .find(|(n, _)| n == file)
            .expect("target is one of the input's files")
            .1
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn read_folder(dir: &Path) -> Result<Vec<(String, Vec<u8>)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            files.push((
                entry.file_name().to_string_lossy().into_owned(),
                std::fs::read(entry.path())?,
            ));
        }
    }
    files.sort();
    Ok(files)
}

/// A folder recording (USVLOG, ICAREC) as an input: every file of it, opened as the folder.
fn folder_input(format: &'static str, dir: &Path, targets: &[&str]) -> Result<Input> {
    let name = dir
        .file_name()
        .context("folder name")?
        .to_string_lossy()
        .into_owned();
    let files = read_folder(dir)?
        .into_iter()
        .map(|(n, b)| (format!("{name}/{n}"), b))
        .collect();
    Ok(Input {
        format,
        name: format!("{format}:{name}"),
        files,
        open: name.clone(),
        targets: targets.iter().map(|t| format!("{name}/{t}")).collect(),
        silent: Silent::Never,
        whole_file_signals: &[],
        time_signals: &[],
        cut_rows: CutRows::Prefix,
    })
}

/// A one-file recording, with companion files beside it (a `.traj`'s `.state`).
fn file_input(
    format: &'static str,
    name: &str,
    bytes: Vec<u8>,
    companions: Vec<(String, Vec<u8>)>,
    silent: Silent,
) -> Input {
    let mut targets = vec![name.to_string()];
    targets.extend(companions.iter().map(|(n, _)| n.clone()));
    let mut files = vec![(name.to_string(), bytes)];
    files.extend(companions);
    Input {
        format,
        name: format!("{format}:{name}"),
        files,
        open: name.to_string(),
        targets,
        silent,
        whole_file_signals: if format == "nanover" {
            &["delta_keys"]
        } else {
            &[]
        },
        time_signals: if format == "nanover" { &["t_us"] } else { &[] },
        cut_rows: CutRows::Prefix,
    }
}

/// The samples of `folder` with this extension: all with `full`, else the smallest.
fn pick_samples(folder: &str, extension: &str, full: bool) -> Vec<PathBuf> {
    let mut found = recfmt_tests::samples(folder, extension);
    found.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(u64::MAX));
    if !full {
        found.truncate(1);
    }
    found
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A Recovery tape (only `signals`, no `continuous-compression`), built from the spec's layout
/// as FlightGear `next` writes them; no real one exists.
fn recovery_tape(frames: usize) -> Result<Vec<u8>> {
    use recfmt::fgtape::continuous::{ContinuousFrame, ContinuousHeader, Writer};
    use recfmt::fgtape::props::{PropValue, PropertyList};
    use recfmt::fgtape::signals::SignalValue;
    let mut tree = PropertyList::new();
    tree.root
        .set("meta/aircraft-type", PropValue::string("c172p"));
    tree.root.set("meta/tape-duration", PropValue::double(0.0));
    tree.root.set("data[0]", PropValue::string("signals"));
    tree.root.set("signals/name", PropValue::string("Recovery"));
    let signals = [
        ("double", "/position[0]/altitude-ft[0]"),
        ("int", "/b[0]"),
        ("bool", "/a[0]"),
    ];
    for (i, (ty, path)) in signals.iter().enumerate() {
        tree.root.set(
            &format!("signals/signals/signal[{i}]/type"),
            PropValue::string(*ty),
        );
        tree.root.set(
            &format!("signals/signals/signal[{i}]/property"),
            PropValue::string(*path),
        );
    }
    tree.root.set(
        "signals/recorder/record-size",
        PropValue::int(8 + 8 + 4 + 1),
    );
    let header = ContinuousHeader::new(tree)?;
    anyhow::ensure!(header.is_recovery_like(), "not a Recovery header");
    let layout = header.signals.clone().context("signal layout")?;
    let mut writer = Writer::new(Vec::new(), &header)?;
    for i in 0..frames {
        let mut block = layout.encode(&[
            SignalValue::Double(i as f64 * 10.0),
            SignalValue::Int(-(i as i32)),
            SignalValue::Bool(i % 2 == 1),
        ])?;
        block.extend_from_slice(&[0; 8]);
        writer.write_frame(&ContinuousFrame {
            time: 100.0 + i as f64 / 8.0,
            items: vec![block],
            deflate: None,
        })?;
    }
    Ok(writer.finish()?)
}

/// Every input of the sweep: the generated fixtures, recordings made here by the library's
/// writers (Icarus HDF5, FlightGear Continuous/Recovery/uncompressed, NanoVer), and the
/// samples.
fn inputs(scratch: &Path, full: bool) -> Result<Vec<Input>> {
    let registry = recfmt::default_registry();
    let mut out = Vec::new();
    for name in ["all_types", "unknown_types"] {
        out.push(folder_input(
            "usvlog",
            &recfmt_tests::fixture(&format!("usvlog/{name}")),
            &[
                "timeseries.bin",
                "meta.json",
                "events.jsonl",
                "layouts.toml",
            ][..if name == "all_types" { 3 } else { 2 }],
        )?);
    }
    let icarec_targets = [
        "dynamic_signals.bin",
        "static_signals.bin",
        "schema.json",
        "metadata.json",
    ];
    for name in ["all_types.icarec", "empty_static.icarec"] {
        out.push(folder_input(
            "icarec",
            &recfmt_tests::fixture(&format!("icarec/{name}")),
            &icarec_targets,
        )?);
    }

    // Icarus HDF5, written from the ICAREC fixture by the library's writer.
    let h5 = scratch.join("all_types.h5");
    let mut reader = recfmt::open_with(
        registry,
        &recfmt_tests::fixture("icarec/all_types.icarec"),
        &OpenOptions::default(),
    )?
    .into_reader();
    recfmt::icarec::h5::write_icarus_h5(&mut *reader, &h5, &Default::default())?;
    out.push(file_input(
        "icarus-h5",
        "all_types.h5",
        std::fs::read(&h5)?,
        Vec::new(),
        Silent::Never,
    ));

    for path in pick_samples("carla", "log", full) {
        out.push(file_input(
            "carla",
            &file_name(&path),
            std::fs::read(&path)?,
            Vec::new(),
            Silent::AtRecordBoundaries,
        ));
    }

    // FlightGear: each Normal sample as it is (gzip) and decompressed, its rows as a
    // Continuous tape (plain and compressed), and a Recovery tape.
    for path in pick_samples("fgtape", "fgtape", full) {
        let name = file_name(&path);
        let gz = std::fs::read(&path)?;
        let tape = recfmt::fgtape::normal::NormalTape::read(&gz[..])?;
        for (name, bytes) in [
            (
                name.replace(".fgtape", "-plain.fgtape"),
                tape.to_decompressed_bytes()?,
            ),
            (name.clone(), gz),
        ] {
            let mut input = file_input("fgtape", &name, bytes, Vec::new(), Silent::Never);
            input.cut_rows = CutRows::Subsequence;
            out.push(input);
        }
        for compressed in [false, true] {
            let continuous = scratch.join(name.replace(
                "-normal",
                if compressed {
                    "-continuous-deflate"
                } else {
                    "-continuous"
                },
            ));
            let mut reader =
                recfmt::open_with(registry, &path, &OpenOptions::default())?.into_reader();
            let mut writer =
                recfmt::fgtape::FgTapeWriter::create(&continuous).compressed(compressed);
            use recfmt::core::{RecordingReader, RecordingWriter};
            writer.write_header(reader.header(), reader.schema())?;
            let mut row = FrameBuf::default();
            let mut rows = 0;
            // A few hundred frames are enough to cover the layout; it keeps the input small.
            while rows < 300 && reader.read_frame(&mut row)? {
                writer.write_frame(&row)?;
                rows += 1;
            }
            writer.finish()?;
            out.push(file_input(
                "fgtape",
                &file_name(&continuous),
                std::fs::read(&continuous)?,
                Vec::new(),
                Silent::AtRecordBoundaries,
            ));
        }
    }
    out.push(file_input(
        "fgtape",
        "recovery.fgtape",
        recovery_tape(40)?,
        Vec::new(),
        Silent::AtRecordBoundaries,
    ));

    // NanoVer: the generated small recording (.traj + .state, and as a zip), and samples.
    let (traj, state) = recfmt::nanover::generate::small_recording_bytes()?;
    let (traj_path, state_path) = (scratch.join("small.traj"), scratch.join("small.state"));
    std::fs::write(&traj_path, &traj)?;
    std::fs::write(&state_path, &state)?;
    let zip = scratch.join("small.nanover.zip");
    recfmt::nanover::write_zip(&traj_path, Some(&state_path), &zip)?;
    out.push(file_input(
        "nanover",
        "small.traj",
        traj,
        vec![("small.state".into(), state.clone())],
        Silent::AtRecordBoundaries,
    ));
    out.push(file_input(
        "nanover",
        "small.state",
        state,
        Vec::new(),
        Silent::AtRecordBoundaries,
    ));
    out.push(file_input(
        "nanover",
        "small.nanover.zip",
        std::fs::read(&zip)?,
        Vec::new(),
        Silent::Never,
    ));
    for ext in ["traj", "state"] {
        for path in pick_samples("nanover/server-py", ext, full) {
            out.push(file_input(
                "nanover",
                &file_name(&path),
                std::fs::read(&path)?,
                Vec::new(),
                Silent::AtRecordBoundaries,
            ));
        }
    }
    if full {
        for path in recfmt_tests::samples("nanover/converted", "zip") {
            out.push(file_input(
                "nanover",
                &file_name(&path),
                std::fs::read(&path)?,
                Vec::new(),
                Silent::Never,
            ));
        }
    }
    Ok(out)
}

// ------------------------------------------------------------------------------------------
// Mutations

/// splitmix64: small, seedable, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    /// A chunk length: mostly short, sometimes up to an eighth of the file.
    fn chunk(&mut self, len: usize) -> usize {
        if self.below(4) == 0 {
            1 + self.below((len / 8).max(1))
        } else {
            1 + self.below(64)
        }
    }
}

/// The seed of mutant `index` of `input`: a hash of the name, so adding an input does not
/// change the others' mutants.
fn seed(input: &str, index: usize) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in input.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One to three mutations of `bytes`; returns what was done, for the failure message.
fn mutate(bytes: &mut Vec<u8>, rng: &mut Rng) -> String {
    let mut done = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let len = bytes.len();
        if len == 0 {
            bytes.push(rng.next() as u8);
            done.push("insert into empty".to_string());
            continue;
        }
        let at = rng.below(len);
        match rng.below(9) {
            0 => {
                let bit = rng.below(8);
                bytes[at] ^= 1 << bit;
                done.push(format!("flip bit {bit} of byte {at}"));
            }
            1 => {
                let v = [0u8, 0xff, 0x7f, 0x80][rng.below(4)];
                bytes[at] = v;
                done.push(format!("byte {at} = {v:#x}"));
            }
            2 | 3 => {
                // A length or count field: 2, 4 or 8 bytes, little or big endian, bumped a
                // little or set to an extreme.
                let width = [2usize, 4, 8][rng.below(3)];
                if at + width > len {
                    continue;
                }
                let big = rng.below(2) == 0;
                let mut raw = [0u8; 8];
                raw[..width].copy_from_slice(&bytes[at..at + width]);
                if big {
                    raw[..width].reverse();
                }
                let old = u64::from_le_bytes(raw);
                let max = if width == 8 {
                    u64::MAX
                } else {
                    (1u64 << (8 * width)) - 1
                };
                let new = match rng.below(7) {
                    0 => old.wrapping_add(1),
                    1 => old.wrapping_sub(1),
                    2 => old.wrapping_add(1 + rng.below(4096) as u64),
                    3 => old.wrapping_mul(2),
                    4 => max,
                    5 => max >> 1,
                    _ => 0,
                } & max;
                let mut raw = new.to_le_bytes();
                if big {
                    raw[..width].reverse();
                }
                bytes[at..at + width].copy_from_slice(&raw[..width]);
                done.push(format!(
                    "u{} {} at {at}: {old} -> {new}",
                    width * 8,
                    if big { "BE" } else { "LE" }
                ));
            }
            4 => {
                let n = rng.chunk(len).min(len - at);
                bytes.drain(at..at + n);
                done.push(format!("delete {n} at {at}"));
            }
            5 => {
                let n = rng.chunk(len).min(len - at);
                let chunk = bytes[at..at + n].to_vec();
                let to = rng.below(len + 1);
                bytes.splice(to..to, chunk);
                done.push(format!("duplicate {n} from {at} to {to}"));
            }
            6 => {
                let n = 1 + rng.below(32);
                let chunk: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                bytes.splice(at..at, chunk);
                done.push(format!("insert {n} random at {at}"));
            }
            7 => {
                let n = rng.chunk(len).min(len - at);
                let from = rng.below(len - n + 1);
                let chunk = bytes[from..from + n].to_vec();
                bytes[at..at + n].copy_from_slice(&chunk);
                done.push(format!("overwrite {n} at {at} from {from}"));
            }
            _ => {
                bytes.truncate(at);
                done.push(format!("truncate to {at}"));
            }
        }
    }
    done.join(", ")
}

// ------------------------------------------------------------------------------------------
// Runs

/// What one run is doing, for the watchdog.
static CURRENT: Mutex<Option<(String, Instant)>> = Mutex::new(None);

/// Fails the whole test when one run outlives [`TIME_CAP`] (a hang cannot be interrupted in
/// process; the label says which mutant to replay).
fn start_watchdog() {
    std::thread::spawn(|| {
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let guard = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((label, started)) = guard.as_ref()
                && started.elapsed() > TIME_CAP
            {
                eprintln!(
                    "mutation sweep: FAILED: {label} still running after {:?} (a hang)",
                    TIME_CAP
                );
                std::process::exit(101);
            }
        }
    });
}

/// The largest peak allocation of one run since the last reset, and its input's size.
static LARGEST_PEAK: Mutex<(u64, u64)> = Mutex::new((0, 0));

/// How a run ended.
struct Ran<T> {
    code: u8,
    value: Option<T>,
}

/// Failures found, by kind; the sweep fails when there is any.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn add(&mut self, message: String) {
        eprintln!("  FAIL: {message}");
        self.0.push(message);
    }
}

/// Runs `op` under the watchdog, catching a panic and measuring its peak allocation.
fn guarded<T>(
    label: &str,
    input_size: u64,
    failures: &mut Failures,
    op: impl FnOnce() -> (u8, Option<T>),
) -> Option<Ran<T>> {
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = Some((label.to_string(), Instant::now()));
    let base = ALLOCATED.current_usage();
    ALLOCATED.reset_peak_usage();
    let result = catch_unwind(AssertUnwindSafe(op));
    let peak = ALLOCATED.peak_usage().saturating_sub(base) as u64;
    *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) = None;
    let limit = MEMORY_FACTOR * input_size + MEMORY_MARGIN;
    {
        let mut largest = LARGEST_PEAK.lock().unwrap_or_else(|e| e.into_inner());
        if peak > largest.0 {
            *largest = (peak, input_size);
        }
    }
    if peak > limit {
        failures.add(format!(
            "{label}: allocated {peak} bytes at peak, over {limit} ({MEMORY_FACTOR} x {input_size} + {MEMORY_MARGIN})"
        ));
    }
    match result {
        Ok((code, value)) => {
            if ![0, recfmt::EXIT_ERROR, recfmt::EXIT_DATA_LOST].contains(&code) {
                failures.add(format!("{label}: exit code {code}"));
            }
            Some(Ran { code, value })
        }
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.add(format!("{label}: panic: {text}"));
            None
        }
    }
}

/// The rows a read gave and how it ended.
struct Read {
    /// Each stream's name and its signals' names.
    schema: Vec<(String, Vec<String>)>,
    rows: Vec<(usize, Vec<Value>)>,
    truncated_at: Option<u64>,
}

/// `recfmt cat`: every row (kept when `keep`), and the exit code the command line gives.
fn read(path: &Path, options: &OpenOptions, keep: bool) -> (u8, Option<Read>) {
    let result = (|| -> recfmt::Result<(Outcome, Read)> {
        let mut reader =
            recfmt::open_with(recfmt::default_registry(), path, options)?.into_reader();
        let mut frame = FrameBuf::default();
        let mut rows = Vec::new();
        while reader.read_frame(&mut frame)? {
            if keep {
                rows.push((frame.stream, frame.values.clone()));
            }
        }
        let integrity = reader.integrity();
        let schema = reader
            .schema()
            .streams
            .iter()
            .map(|s| {
                let signals = s.signals.iter().map(|g| g.name.clone()).collect();
                (s.name.clone(), signals)
            })
            .collect();
        let read = Read {
            schema,
            rows,
            truncated_at: integrity.truncated_at,
        };
        Ok((Outcome::of(integrity), read))
    })();
    match result {
        Ok((outcome, read)) => (outcome.exit_code(), Some(read)),
        Err(e) => (Outcome::exit_code_of::<recfmt::Error>(&Err(e)), None),
    }
}

fn validate(path: &Path, options: &OpenOptions) -> (u8, Option<()>) {
    let options = recfmt::validate::ValidateOptions {
        open: options.clone(),
        against: None,
    };
    let result = recfmt::validate::validate(recfmt::default_registry(), path, &options)
        .map(|report| report.outcome());
    (Outcome::exit_code_of(&result), None)
}

/// Value equality where NaN equals NaN (mutated floats and real data can hold NaN) and empty
/// arrays are equal whatever their element type (formats that type columns from the data
/// type an empty array by what later rows hold).
fn same_value(a: &Value, b: &Value) -> bool {
    if a == b {
        return true;
    }
    let (a, b) = (format!("{a:?}"), format!("{b:?}"));
    let empty_array = |s: &str| s.starts_with("Array(") && s.ends_with("([]))");
    a == b || (empty_array(&a) && empty_array(&b))
}

/// Where the rows of `got` stop being a prefix of those of `full`, per stream, if they do: a
/// description of the first row that differs.
///
/// Per stream, because a recording of several files (a `.traj` and its `.state`) interleaves
/// their rows by time, and a cut of one file leaves the other's rows complete. By signal
/// name, because formats that find their columns in the data (NanoVer) have fewer in a cut:
/// a column the cut does not have must be null in the complete read's row. Signals in `loose`
/// are not compared; those in `unknown_ok` may be null (unknown) in a cut.
fn not_a_prefix(
    got: &Read,
    full: &Read,
    loose: &[&str],
    unknown_ok: &[&str],
    cut_rows: CutRows,
) -> Option<String> {
    let mut by_stream: BTreeMap<usize, Vec<&Vec<Value>>> = BTreeMap::new();
    for (stream, values) in &full.rows {
        by_stream.entry(*stream).or_default().push(values);
    }
    let short = |text: String| text.chars().take(300).collect::<String>();
    /// How a stream of the cut maps onto the complete read's: the stream, each signal's
    /// column there, and the complete read's columns the cut does not have.
    struct Mapping<'a> {
        full_stream: usize,
        columns: Vec<Option<usize>>,
        missing: Vec<usize>,
        loose: Vec<bool>,
        unknown_ok: Vec<bool>,
        name: &'a str,
    }
    let mut mappings: BTreeMap<usize, Option<Mapping>> = BTreeMap::new();
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    for (stream, values) in &got.rows {
        let mapping = mappings.entry(*stream).or_insert_with(|| {
            let (name, got_signals) = &got.schema[*stream];
            let full_stream = full.schema.iter().position(|(n, _)| n == name)?;
            let full_signals = &full.schema[full_stream].1;
            let columns: Vec<Option<usize>> = got_signals
                .iter()
                .map(|g| full_signals.iter().position(|s| s == g))
                .collect();
            let missing = (0..full_signals.len())
                .filter(|at| !columns.contains(&Some(*at)))
                .collect();
            Some(Mapping {
                full_stream,
                columns,
                missing,
                loose: got_signals
                    .iter()
                    .map(|g| loose.contains(&g.as_str()))
                    .collect(),
                unknown_ok: got_signals
                    .iter()
                    .map(|g| unknown_ok.contains(&g.as_str()))
                    .collect(),
                name,
            })
        });
        let Some(m) = mapping else {
            let name = &got.schema[*stream].0;
            return Some(format!("stream {name:?} is not in the complete read"));
        };
        let name = m.name;
        // The first difference between this row and `expected`, if any.
        let differs = |k: usize, expected: &[Value]| -> Option<String> {
            for (slot, value) in values.iter().enumerate() {
                let at = m.columns.get(slot).copied().flatten();
                let same = at.is_some_and(|at| {
                    m.loose[slot]
                        || (m.unknown_ok[slot] && *value == Value::Null)
                        || same_value(value, &expected[at])
                });
                if !same {
                    let signal = &got.schema[*stream].1.get(slot);
                    return Some(format!(
                        "stream {name:?} row {k} signal {signal:?}: read {}, expected {}",
                        short(format!("{value:?}")),
                        short(format!("{:?}", at.map(|at| &expected[at])))
                    ));
                }
            }
            m.missing
                .iter()
                .find(|&&at| expected[at] != Value::Null)
                .map(|&at| {
                    format!(
                        "stream {name:?} row {k}: signal {:?} is missing, expected {}",
                        full.schema[m.full_stream].1[at],
                        short(format!("{:?}", expected[at]))
                    )
                })
        };
        let k = seen.entry(m.full_stream).or_default();
        let rows = by_stream.get(&m.full_stream).map_or(&[][..], Vec::as_slice);
        let Some(expected) = rows.get(*k) else {
            return Some(format!(
                "stream {name:?} has more rows than the complete read"
            ));
        };
        match cut_rows {
            CutRows::Prefix => {
                if let Some(diff) = differs(*k, expected) {
                    return Some(diff);
                }
                *k += 1;
            }
            CutRows::Subsequence => {
                // The earliest match is the right one: a later row can only match later.
                let first = *k;
                let Some(found) = (first..rows.len()).find(|&j| differs(j, rows[j]).is_none())
                else {
                    return Some(format!(
                        "stream {name:?}: a row read is not among the complete read's rows \
                         from row {first} on (there: {})",
                        differs(first, expected).unwrap_or_default()
                    ));
                };
                *k = found + 1;
            }
        }
    }
    None
}

/// Writes the input's files under `work` (a fresh folder) and returns the path to open.
fn lay_out(input: &Input, work: &Path) -> Result<PathBuf> {
    if work.exists() {
        std::fs::remove_dir_all(work)?;
    }
    for (name, bytes) in &input.files {
        let path = work.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, bytes)?;
    }
    Ok(work.join(&input.open))
}

#[derive(Default)]
struct Counts {
    mutants: usize,
    runs: usize,
    cuts: usize,
    codes: BTreeMap<u8, usize>,
    /// Runs of each round-2 command.
    commands: BTreeMap<&'static str, usize>,
}

/// Cuts of the input's main file: rows are a prefix of the complete read's, never fewer for a
/// longer cut, and the loss is reported unless the format cannot know it.
fn sweep_cuts(
    input: &Input,
    work: &Path,
    max_cuts: usize,
    failures: &mut Failures,
    counts: &mut Counts,
) -> Result<()> {
    let path = lay_out(input, work)?;
    let target = &input.targets[0];
    let full_bytes = input.bytes(target).to_vec();
    let size = input.size();
    let lenient = OpenOptions::default();
    let label = format!("{} complete read", input.name);
    let Some(Ran {
        code,
        value: Some(full),
    }) = guarded(&label, size, failures, || read(&path, &lenient, true))
    else {
        failures.add(format!("{label}: the unmutated input does not read"));
        return Ok(());
    };
    if code != 0 {
        failures.add(format!(
            "{label}: exit {code} for the unmutated input (expected 0)"
        ));
        return Ok(());
    }
    let len = full_bytes.len();
    // Every byte of the head (headers are where most of the structure is), then a stride.
    let head = (max_cuts / 4).min(512);
    let stride = if len <= max_cuts {
        1
    } else {
        len.div_ceil(max_cuts.saturating_sub(head).max(1))
    };
    let cuts: Vec<usize> = (0..len)
        .filter(|&c| len <= max_cuts || c < head || c % stride == 0)
        .collect();
    let target_path = work.join(target);
    let mut read_cut = |cut: usize, failures: &mut Failures| -> Option<Ran<Read>> {
        std::fs::write(&target_path, &full_bytes[..cut]).ok()?;
        let label = format!("{} cut {target} at byte {cut} of {len}", input.name);
        let ran = guarded(&label, size, failures, || read(&path, &lenient, true))?;
        *counts.codes.entry(ran.code).or_default() += 1;
        counts.cuts += 1;
        Some(ran)
    };
    let mut previous_rows = 0usize;
    for &cut in &cuts {
        let label = format!("{} cut {target} at byte {cut} of {len}", input.name);
        let Some(ran) = read_cut(cut, failures) else {
            continue;
        };
        let Some(got) = ran.value else {
            continue; // exit 1: nothing readable left (checked to be 0/1/3 already)
        };
        let n = got.rows.len();
        if let Some(diff) = not_a_prefix(
            &got,
            &full,
            input.whole_file_signals,
            input.time_signals,
            input.cut_rows,
        ) {
            failures.add(format!(
                "{label}: the {n} rows are not a prefix of the complete read's {} ({diff})",
                full.rows.len()
            ));
            continue;
        }
        if n < previous_rows {
            failures.add(format!(
                "{label}: {n} rows, fewer than the {previous_rows} of a shorter cut"
            ));
        }
        previous_rows = previous_rows.max(n);
        let allowed = match input.silent {
            Silent::Never => false,
            Silent::AtRecordBoundaries => true,
        };
        if ran.code == 0 {
            if !allowed {
                failures.add(format!(
                    "{label}: {n} rows, exit 0: the loss is not reported"
                ));
            } else if cut + 1 < len {
                // A silent cut must be a record boundary: one byte more tears a record.
                if let Some(next) = read_cut(cut + 1, failures)
                    && next.code == 0
                {
                    failures.add(format!(
                        "{label}: exit 0, and exit 0 again one byte later: a torn record went unreported"
                    ));
                }
            }
        }
        if let Some(t) = got.truncated_at
            && (t as usize) < cut
            && cut % 16 == 0
        {
            // Everything complete before the tear was read: the cut at the tear reads the same.
            if let Some(Ran {
                value: Some(at_tear),
                ..
            }) = read_cut(t as usize, failures)
                && at_tear.rows.len() != n
            {
                failures.add(format!(
                    "{label}: {n} rows, but the cut at its truncated_at {t} reads {}",
                    at_tear.rows.len()
                ));
            }
        }
    }
    std::fs::write(&target_path, &full_bytes)?;
    Ok(())
}

/// One run of a mutant: its exit code, and the rows when it read them.
type Op<'a> = Box<dyn FnOnce() -> (u8, Option<Read>) + 'a>;

/// Mutant `index` of `input`, run through read, and sometimes strict/resync reads, validate
/// and convert.
fn run_mutant(
    input: &Input,
    index: usize,
    work: &Path,
    path: &Path,
    failures: &mut Failures,
    counts: &mut Counts,
) -> Result<()> {
    let mut rng = Rng(seed(&input.name, index));
    // The main file most of the time, the others (JSON, companions) now and then.
    let target = if input.targets.len() == 1 || rng.below(5) != 0 {
        &input.targets[0]
    } else {
        &input.targets[1 + rng.below(input.targets.len() - 1)]
    };
    let original = input.bytes(target);
    let mut bytes = original.to_vec();
    let what = mutate(&mut bytes, &mut rng);
    let target_path = work.join(target);
    std::fs::write(&target_path, &bytes)?;
    // The larger of the input and the mutant.
    let size = input.size() + (bytes.len() as u64).saturating_sub(original.len() as u64);
    let label = format!(
        "{}#{index} ({target}: {what}; replay with RECFMT_SWEEP_ONLY='{}#{index}')",
        input.name, input.name
    );
    let mut ops: Vec<(&str, Op)> = vec![(
        "read",
        Box::new(|| read(path, &OpenOptions::default(), false)),
    )];
    let round2 = Command::for_format(input.format);
    let image = if index.is_multiple_of(2) {
        ImageKind::Svg
    } else {
        ImageKind::Png
    };
    let round2_out = work.join(format!("out-{index}-round2"));
    let round2_op = |command: Command| -> (&'static str, Op) {
        let out = round2_out.clone();
        (
            command.name(),
            Box::new(move || (command.run(path, &out, image), None)),
        )
    };
    if round2_only() {
        // Only the round-2 commands, every one on every mutant.
        ops.extend(round2.iter().map(|&c| round2_op(c)));
        return run_ops(
            &label,
            size,
            ops,
            failures,
            counts,
            (&target_path, original),
        );
    }
    if index % 32 == 9 {
        ops.push(round2_op(round2[(index / 32) % round2.len()]));
    }
    match index % 4 {
        1 => ops.push((
            "strict read",
            Box::new(|| {
                read(
                    path,
                    &OpenOptions {
                        strict: true,
                        ..Default::default()
                    },
                    false,
                )
            }),
        )),
        2 => ops.push((
            "resync read",
            Box::new(|| {
                read(
                    path,
                    &OpenOptions {
                        resync: true,
                        ..Default::default()
                    },
                    false,
                )
            }),
        )),
        _ => {}
    }
    if index % 8 == 3 {
        ops.push((
            "validate",
            Box::new(|| {
                let (code, _) = validate(path, &OpenOptions::default());
                (code, None)
            }),
        ));
    }
    let out = work.join(format!("out-{index}"));
    if index % 16 == 5 {
        let target = match (index % 64, input.format) {
            // A faithful copy, for the formats that have one.
            (21, "fgtape" | "carla") => input.format,
            (5 | 37, _) => "parquet",
            _ => "ndjson",
        };
        ops.push((
            target,
            Box::new(move || {
                let options = recfmt::convert::ConvertOptions {
                    target: target.into(),
                    ..Default::default()
                };
                (commands::convert(path, &out, &options), None)
            }),
        ));
    }
    run_ops(
        &label,
        size,
        ops,
        failures,
        counts,
        (&target_path, original),
    )
}

/// Runs a mutant's operations, counts them, and puts the mutated file back as it was.
fn run_ops(
    label: &str,
    size: u64,
    ops: Vec<(&'static str, Op)>,
    failures: &mut Failures,
    counts: &mut Counts,
    (target_path, original): (&Path, &[u8]),
) -> Result<()> {
    let round2: Vec<&str> = Command::for_format("carla")
        .into_iter()
        .chain(Command::for_format("fgtape"))
        .map(Command::name)
        .collect();
    for (name, op) in ops {
        let label = format!("{label} {name}");
        if let Some(ran) = guarded(&label, size, failures, op) {
            *counts.codes.entry(ran.code).or_default() += 1;
        }
        counts.runs += 1;
        if round2.contains(&name) {
            *counts.commands.entry(name).or_default() += 1;
        }
    }
    counts.mutants += 1;
    std::fs::write(target_path, original)?;
    Ok(())
}

/// `RECFMT_SWEEP_COMMANDS=round2`: each mutant is read and run through every round-2 command
/// that applies, and nothing else.
fn round2_only() -> bool {
    std::env::var("RECFMT_SWEEP_COMMANDS").is_ok_and(|v| v == "round2")
}

/// Set in the sweep's own child processes (see [`in_processes`]).
const CHILD: &str = "RECFMT_SWEEP_CHILD";

/// Runs the formats in `jobs` child processes of this binary (`RECFMT_SWEEP_JOBS`, default
/// the cores available), so the sweep uses every core while each process still measures its
/// own runs' memory and holds its own address-space limit. Formats are dealt out by their
/// cost in the CI configuration, largest first, to the least loaded process.
fn in_processes(formats: &[&str], jobs: usize, started: Instant) -> Result<()> {
    let cost = |f: &str| match f {
        "carla" | "fgtape" => 4,
        "icarus-h5" => 2,
        _ => 1,
    };
    let mut order = formats.to_vec();
    order.sort_by_key(|f| std::cmp::Reverse(cost(f)));
    let mut groups: Vec<(u32, Vec<&str>)> = vec![(0, Vec::new()); jobs.min(formats.len())];
    for format in order {
        let lightest = groups
            .iter_mut()
            .min_by_key(|(load, _)| *load)
            .expect("at least one group");
        lightest.0 += cost(format);
        lightest.1.push(format);
    }
    let exe = std::env::current_exe()?;
    let children = groups
        .iter()
        .map(|(_, group)| {
            std::process::Command::new(&exe)
                .env("RECFMT_SWEEP_FORMATS", group.join(","))
                .env(CHILD, "1")
                .spawn()
                .with_context(|| format!("starting the sweep of {}", group.join(",")))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut failed = Vec::new();
    for (mut child, (_, group)) in children.into_iter().zip(&groups) {
        if !child.wait()?.success() {
            failed.push(group.join(","));
        }
    }
    eprintln!(
        "mutation sweep: {:.1?} in all, {} processes",
        started.elapsed(),
        groups.len()
    );
    anyhow::ensure!(
        failed.is_empty(),
        "mutation sweep failed for {}",
        failed.join("; ")
    );
    println!("mutation sweep: 1 passed, 0 failed");
    Ok(())
}

fn main() -> Result<()> {
    let cap = rlimit::Resource::AS.get()?;
    let limit = ADDRESS_SPACE.min(cap.1);
    rlimit::Resource::AS.set(limit, cap.1)?;
    start_watchdog();
    // Panics are caught and reported per mutant; the default hook's backtrace note is noise.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        eprint!("  panic in the sweep: ");
        default_hook(info);
    }));

    let started = Instant::now();
    let full = std::env::var_os("RECFMT_SWEEP_FULL").is_some_and(|v| v == "1");
    let mutants = env_usize("RECFMT_SWEEP_MUTANTS", DEFAULT_MUTANTS);
    let max_cuts = env_usize("RECFMT_SWEEP_CUTS", DEFAULT_CUTS);
    let formats: Option<Vec<String>> = std::env::var("RECFMT_SWEEP_FORMATS")
        .ok()
        .map(|v| v.split(',').map(str::to_string).collect());
    let only = std::env::var("RECFMT_SWEEP_ONLY").ok();

    let scratch = tempfile::tempdir()?;
    let mut all = inputs(scratch.path(), full)?;
    if let Some(formats) = &formats {
        all.retain(|i| formats.iter().any(|f| f == i.format));
    }
    let mut format_names: Vec<&'static str> = all.iter().map(|i| i.format).collect();
    format_names.dedup();
    let jobs = env_usize(
        "RECFMT_SWEEP_JOBS",
        std::thread::available_parallelism().map_or(1, usize::from),
    );
    if only.is_none() && std::env::var_os(CHILD).is_none() && jobs > 1 && format_names.len() > 1 {
        return in_processes(&format_names, jobs, started);
    }
    let mut failures = Failures::default();
    let mut per_format: BTreeMap<&str, Counts> = BTreeMap::new();

    if let Some(only) = &only {
        let (name, index) = only
            .rsplit_once('#')
            .context("RECFMT_SWEEP_ONLY=<input>#<index>")?;
        let index: usize = index.parse()?;
        let input = all
            .iter()
            .find(|i| i.name == name)
            .with_context(|| format!("no input {name}"))?;
        let work = scratch.path().join("work");
        let path = lay_out(input, &work)?;
        let mut counts = Counts::default();
        run_mutant(input, index, &work, &path, &mut failures, &mut counts)?;
        eprintln!("replayed {only}: exit codes {:?}", counts.codes);
        anyhow::ensure!(failures.0.is_empty(), "{} failures", failures.0.len());
        return Ok(());
    }

    for format in format_names {
        let format_started = Instant::now();
        let inputs: Vec<&Input> = all.iter().filter(|i| i.format == format).collect();
        *LARGEST_PEAK.lock().unwrap_or_else(|e| e.into_inner()) = (0, 0);
        let counts = per_format.entry(format).or_default();
        for (k, input) in inputs.iter().enumerate() {
            let work = scratch.path().join("work");
            // The cut budget is the format's, split over its inputs.
            let budget = (max_cuts / inputs.len()).max(64);
            if !round2_only() {
                sweep_cuts(input, &work, budget, &mut failures, counts)?;
            }
            let path = lay_out(input, &work)?;
            // Mutants split evenly over the format's inputs.
            let share = mutants / inputs.len() + usize::from(k < mutants % inputs.len());
            for index in 0..share {
                run_mutant(input, index, &work, &path, &mut failures, counts)?;
            }
        }
        let (peak, of) = *LARGEST_PEAK.lock().unwrap_or_else(|e| e.into_inner());
        eprintln!(
            "{format}: {} inputs, {} mutants ({} runs), {} cuts, exit codes {:?}, \
             round-2 runs {:?}, largest peak {:.1} MiB (input {:.2} MiB), {:.1?}",
            inputs.len(),
            counts.mutants,
            counts.runs,
            counts.cuts,
            counts.codes,
            counts.commands,
            peak as f64 / 1048576.0,
            of as f64 / 1048576.0,
            format_started.elapsed()
        );
    }
    eprintln!("mutation sweep: {:.1?} in all", started.elapsed());
    if !failures.0.is_empty() {
        eprintln!("mutation sweep: {} failures:", failures.0.len());
        for f in &failures.0 {
            eprintln!("  {f}");
        }
        anyhow::bail!("mutation sweep: {} failures", failures.0.len());
    }
    if std::env::var_os(CHILD).is_none() {
        println!("mutation sweep: 1 passed, 0 failed");
    }
    Ok(())
}
