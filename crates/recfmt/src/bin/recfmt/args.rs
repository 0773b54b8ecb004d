//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use recfmt::export::{TimeBound, TimeRange};

/// Read, check and convert simulation and vehicle recordings.
#[derive(Debug, Parser)]
#[command(name = "recfmt", version, about, propagate_version = true)]
pub struct Cli {
    /// Options every command understands.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command understands.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Use this format instead of detecting it (see `recfmt formats`).
    #[arg(long = "format", global = true, value_name = "ID")]
    pub format: Option<String>,
    /// Treat deviations from the spec (torn records, wrong payload lengths) as errors.
    #[arg(long, global = true)]
    pub strict: bool,
    /// After a corrupt length field, scan forward for the next plausible record.
    #[arg(long, global = true)]
    pub resync: bool,
    /// A format's own option, `KEY=VALUE` (`carla.build=0.9.10`; a plain `KEY` applies to the
    /// format at hand). `recfmt formats` lists them. Repeatable.
    #[arg(long = "opt", global = true, value_name = "KEY=VALUE")]
    pub opts: Vec<String>,
    /// Alias of `--opt carla.build=BUILD`: read CARLA logs as this build (0.9.10, 0.9.12,
    /// 0.9.14, 0.9.15, 0.9.16, ue5, …); also the layout of logs built from trajectories tables.
    #[arg(long, global = true, value_name = "BUILD")]
    pub carla_build: Option<String>,
    /// Alias of `--opt nanover.version=N`: read `.traj`/`.state` files as this format version
    /// (1: the headerless files of 2023's Rust server) instead of detecting it.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=2))]
    pub nanover_version: Option<u8>,
    /// A record layout file (JSON or TOML) for record types recfmt does not know. Repeatable.
    #[arg(long = "layout", global = true, value_name = "FILE")]
    pub layouts: Vec<PathBuf>,
    /// Replace outputs that already exist (regular files only; without it, an existing
    /// output is refused before anything is read).
    #[arg(long, global = true)]
    pub force: bool,
    /// Threads that share the work on one input (default: about one per core): at most N-1
    /// decoding beside the reading thread, N table writers (at most 4), N HDF5 compressors;
    /// 1 decodes on the reading thread and encodes on one writer. Outputs hold the same
    /// values either way.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Summarise a recording: format, version, time span, streams, rates, signals, integrity.
    Info(InfoArgs),
    /// Print the rows of a recording.
    Cat(CatArgs),
    /// Convert a recording into one table per stream.
    Convert(Box<ConvertArgs>),
    /// Read a recording completely and report every problem found (exit 0 valid, 1 INVALID,
    /// 3 input data lost).
    Validate(ValidateArgs),
    /// Write every valid record of a damaged recording into a new file (NanoVer: garbage, torn
    /// tails and undecodable records dropped, timestamps made strictly increasing). Exits 3
    /// when anything was dropped or changed.
    #[command(alias = "repair")]
    Recover(RepairArgs),
    /// List the formats this build can read, with what each can do.
    Formats(FormatsArgs),
    /// Draw signals against time, or an overview of every stream, as SVG or PNG.
    Plot(Box<crate::plot::PlotArgs>),
}

/// `recfmt formats`.
#[derive(Debug, Args)]
pub struct FormatsArgs {
    /// Print one JSON array (formats with their options, outputs and queries) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `recfmt info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// A recording file or directory.
    pub path: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `recfmt cat`.
#[derive(Debug, Args)]
pub struct CatArgs {
    /// A recording file or directory.
    pub path: PathBuf,
    /// Only rows of this stream. Repeatable.
    #[arg(long = "stream", value_name = "NAME")]
    pub streams: Vec<String>,
    /// Stop after this many rows.
    #[arg(long)]
    pub limit: Option<u64>,
    /// Output style.
    #[arg(long, value_enum, default_value_t = CatOutput::Text)]
    pub output: CatOutput,
    /// Print the state at this time instead of rows: every signal's value at the frame of
    /// the latest time <= T, found by binary search (ICAREC recordings). Same forms as
    /// convert's `--start`: seconds (`6`, `60s`), after the first frame (`+12.5s`), or
    /// RFC 3339 when the recording has an epoch.
    #[arg(long, value_name = "T", allow_hyphen_values = true, value_parser = time_arg)]
    pub at: Option<String>,
}

/// How `cat` prints rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CatOutput {
    /// One aligned line per row.
    Text,
    /// One JSON object per line.
    Ndjson,
}

/// `recfmt convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Recording files or directories (globs are expanded). Several inputs convert in
    /// parallel, one output per input under the output directory.
    #[arg(required = true, value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Output kind: a table format, a recording format, or a format's own output (see
    /// `recfmt formats`).
    #[arg(long, value_parser = targets())]
    pub to: String,
    /// Output directory (`DIR/<stream>.<ext>`), or with `--to hdf5` the `.h5` file. With several
    /// inputs always a directory: `DIR/<input name>/…` or `DIR/<input name>.h5`.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// Parquet compression.
    #[arg(long, value_enum, default_value_t = Compression::Zstd)]
    pub compression: Compression,
    /// Rows per record batch; a batch of large rows (particle arrays) is handed on earlier,
    /// at 8 MiB of values, so memory stays bounded.
    #[arg(long, default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_rows: u64,
    /// Parquet: rows per row group, at most (pyarrow's default).
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub row_group_rows: u64,
    /// Parquet: a row group is also closed at this many bytes of encoded pages (64 MiB);
    /// the row groups all streams are building share a bound of 12 MiB of values not yet
    /// encoded, past which the largest is written early.
    #[arg(long, default_value_t = 64 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub row_group_bytes: u64,
    /// Parquet: bytes of finished pages the row groups in progress keep in memory, all
    /// streams together (8 MiB); the rest wait in an unnamed temporary file beside the output
    /// until their row group is written. 0 sends every page there; the files are the same
    /// either way.
    #[arg(long, default_value_t = 8 << 20, value_name = "BYTES")]
    pub row_group_memory: u64,
    /// Parquet: float columns in the BYTE_STREAM_SPLIT encoding (each byte of the values
    /// stored together, as HDF5's shuffle): several times smaller files on smooth signals.
    /// pyarrow, DuckDB 0.10+, Spark (parquet-mr 1.12+) and polars read it; older readers do
    /// not.
    #[arg(long)]
    pub byte_stream_split: bool,
    /// CSV field delimiter (one character; `tab` for a tab).
    #[arg(long, default_value = ",", value_name = "CHAR")]
    pub delimiter: String,
    /// CSV: add a second header row with units.
    #[arg(long)]
    pub units_row: bool,
    /// Keep streams matching this name, glob or `re:` regex. Repeatable.
    #[arg(long = "stream", value_name = "PATTERN")]
    pub streams: Vec<String>,
    /// Drop streams matching this pattern. Repeatable.
    #[arg(long = "exclude-stream", value_name = "PATTERN")]
    pub exclude_streams: Vec<String>,
    /// Keep signals matching this pattern (`name` or `stream.name`; a composite signal's name
    /// selects all its members). Repeatable.
    #[arg(long = "signal", value_name = "PATTERN")]
    pub signals: Vec<String>,
    /// Drop signals matching this pattern. Repeatable.
    #[arg(long = "exclude-signal", value_name = "PATTERN")]
    pub exclude_signals: Vec<String>,
    /// First time kept (inclusive): seconds on the recording's axis (`60s`), relative to the
    /// first row (`+12.5s`), or RFC 3339 when the recording has an epoch.
    #[arg(long, allow_hyphen_values = true, value_name = "TIME", value_parser = time_arg)]
    pub start: Option<String>,
    /// First time no longer kept (exclusive), same forms as `--start`.
    #[arg(long, allow_hyphen_values = true, value_name = "TIME", value_parser = time_arg)]
    pub end: Option<String>,
    /// Also keep each stream's last row before `--start`.
    #[arg(long)]
    pub carry_last: bool,
    /// One merged wide table instead of one per stream: `union`, `asof:STREAM` or
    /// `raster:STEP` (e.g. `raster:10ms`).
    #[arg(long, alias = "align", value_name = "RULE")]
    pub merge: Option<String>,
    /// With `--merge union` or `raster:STEP`, refuse when the merged table could exceed this
    /// many rows (a raster is refused above 100 M rows unless this says otherwise).
    #[arg(long, value_name = "N")]
    pub max_rows: Option<u64>,
    /// Parquet: a Hive-partitioned dataset in OUTDIR,
    /// `<stream>/source=<recording>/part-N.parquet` with a `source` column (several inputs
    /// share it; adding a recording adds files).
    #[arg(long)]
    pub partition: bool,
    /// With `--partition`: the recording's name in `source=NAME` and the `source` column
    /// (default: the input's file name without its last extension).
    #[arg(long, value_name = "NAME", requires = "partition")]
    pub source: Option<String>,
    /// Widen float32 signals to float64.
    #[arg(long, value_enum)]
    pub upcast: Option<Upcast>,
    /// Add an absolute time column in this system (needs a recording with an epoch).
    #[arg(long, value_enum, value_name = "SYSTEM")]
    pub time_column: Option<TimeColumn>,
    /// HDF5: bytes per fixed-width string value (longer values are an error, never cut).
    /// Default: the longest text in the recording, found by a first pass.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(1..))]
    pub string_width: Option<u32>,
    /// Alias of `--opt carla.map=NAME`: the map named in a log built from a trajectories table.
    #[arg(long, value_name = "NAME")]
    pub map: Option<String>,
    /// Inputs converted at once (default: the number of cores).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
}

/// Checks a time as `--start`, `--end` and `--at` take it ([`TimeBound::parse`]), so a bad
/// one is a usage error (exit 2).
pub fn time_arg(text: &str) -> Result<String, String> {
    TimeBound::parse(text)
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

/// Refuses, as a usage error (exit 2), a `--start` after `--end` when the two can be compared
/// before reading ([`TimeRange::check`]).
pub fn check_range(start: Option<&str>, end: Option<&str>) {
    let bound = |text: Option<&str>| text.and_then(|t| TimeBound::parse(t).ok());
    let range = TimeRange {
        start: bound(start),
        end: bound(end),
        carry_last: false,
    };
    if let Err(e) = range.check() {
        let message = format!(
            "--start {} is after --end {}: {e}",
            start.unwrap_or_default(),
            end.unwrap_or_default()
        );
        Cli::command()
            .error(clap::error::ErrorKind::ArgumentConflict, message)
            .exit();
    }
}

/// The targets of `--to`, looked up in the default registry.
fn targets() -> clap::builder::PossibleValuesParser {
    let values: Vec<clap::builder::PossibleValue> =
        recfmt::convert::targets(recfmt::default_registry())
            .into_iter()
            .map(|t| clap::builder::PossibleValue::new(t.id).help(t.help))
            .collect();
    clap::builder::PossibleValuesParser::new(values)
}

/// Target of `--upcast`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Upcast {
    /// float32 to float64.
    F64,
}

/// Time systems for `--time-column`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimeColumn {
    /// Coordinated Universal Time.
    Utc,
    /// International Atomic Time.
    Tai,
    /// GPS time.
    Gps,
}

/// Parquet compression codecs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Compression {
    /// zstd (the default).
    Zstd,
    /// Snappy.
    Snappy,
    /// No compression.
    None,
}

/// `recfmt recover`.
#[derive(Debug, Args)]
pub struct RepairArgs {
    /// The damaged recording file.
    pub path: PathBuf,
    /// Where the repaired copy goes.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
}

/// `recfmt validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// A recording file or directory.
    pub path: PathBuf,
    /// Also check the recording against this current schema (ICAREC `schema.json`): same
    /// version, additive changes, removed signals, type changes, minimum versions.
    #[arg(long, value_name = "SCHEMA")]
    pub against: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}
