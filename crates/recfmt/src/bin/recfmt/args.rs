//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    /// CARLA: read logs as this build (0.9.10, 0.9.12, 0.9.14, 0.9.15, 0.9.16, ue5, …) instead of
    /// detecting it; also the layout of logs built from trajectories tables (default 0.9.15).
    #[arg(long, global = true, value_name = "BUILD")]
    pub carla_build: Option<String>,
    /// NanoVer: read `.traj`/`.state` files as this format version (1: the headerless files of
    /// 2023's Rust server) instead of detecting it.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=2))]
    pub nanover_version: Option<u8>,
    /// A record layout file (JSON or TOML) for record types recfmt does not know. Repeatable.
    #[arg(long = "layout", global = true, value_name = "FILE")]
    pub layouts: Vec<PathBuf>,
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
    /// List the formats this build can read.
    Formats,
    /// CARLA's own recorder queries, with the text CARLA prints (or `--json`).
    #[command(subcommand)]
    Carla(CarlaCommand),
    /// Draw signals against time, or an overview of every stream, as SVG or PNG.
    Plot(Box<crate::plot::PlotArgs>),
}

/// `recfmt carla …`: what `show_recorder_file_info`, `show_recorder_collisions` and
/// `show_recorder_actors_blocked` print, without a running simulator.
#[derive(Debug, Subcommand)]
pub enum CarlaCommand {
    /// The recording's header and frames (`show_recorder_file_info`).
    Info {
        /// A CARLA recorder log.
        path: PathBuf,
        /// Every packet of every frame (CARLA's `show_all`).
        #[arg(long)]
        all: bool,
        /// Print the information as one JSON object instead of CARLA's text.
        #[arg(long)]
        json: bool,
    },
    /// Collisions between actor categories (`show_recorder_collisions`): `a` any, `h` hero,
    /// `v` vehicle, `w` walker, `t` traffic light, `o` other.
    Collisions {
        /// A CARLA recorder log.
        path: PathBuf,
        /// Category of the first actor.
        #[arg(long, default_value_t = 'a')]
        type1: char,
        /// Category of the second actor.
        #[arg(long, default_value_t = 'a')]
        type2: char,
        /// Print JSON instead of CARLA's text.
        #[arg(long)]
        json: bool,
    },
    /// Actors that stayed blocked (`show_recorder_actors_blocked`).
    Blocked {
        /// A CARLA recorder log.
        path: PathBuf,
        /// Shortest blocked time in seconds.
        #[arg(long, default_value_t = 60.0)]
        min_time: f64,
        /// Largest distance in centimetres that still counts as not moving.
        #[arg(long, default_value_t = 100.0)]
        min_distance: f64,
        /// Print JSON instead of CARLA's text.
        #[arg(long)]
        json: bool,
    },
    /// The actors' tracks seen from above, as SVG or PNG.
    Map(crate::plot::CarlaMapArgs),
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
    /// Print the state at this time instead of rows: every signal's value at the last frame
    /// with time <= T, found by binary search (ICAREC recordings).
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub at: Option<f64>,
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
    /// Output kind.
    #[arg(long, value_enum)]
    pub to: ConvertTo,
    /// Output directory (`DIR/<stream>.<ext>`), or with `--to hdf5` the `.h5` file. With several
    /// inputs always a directory: `DIR/<input name>/…` or `DIR/<input name>.h5`.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// Parquet compression.
    #[arg(long, value_enum, default_value_t = Compression::Zstd)]
    pub compression: Compression,
    /// Rows per record batch (and Parquet row group).
    #[arg(long, alias = "row-group-rows", default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_rows: u64,
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
    #[arg(long, allow_hyphen_values = true, value_name = "TIME")]
    pub start: Option<String>,
    /// First time no longer kept (exclusive), same forms as `--start`.
    #[arg(long, allow_hyphen_values = true, value_name = "TIME")]
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
    /// CARLA: the map named in a log built from a trajectories table (`--to carla` from CSV).
    #[arg(long, default_value = "Town01", value_name = "NAME")]
    pub map: String,
    /// Inputs converted at once (default: the number of cores).
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
}

/// Output kinds of `convert`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConvertTo {
    /// Apache Parquet, one file per stream.
    Parquet,
    /// CSV with a header row, one file per stream.
    Csv,
    /// Arrow IPC file (Feather v2), one file per stream.
    Arrow,
    /// Newline-delimited JSON, one file per stream.
    Ndjson,
    /// HDF5, one file (`-o FILE.h5`): a group per stream, a dataset per column.
    Hdf5,
    /// A KML flight track (`-o FILE.kml`): the aircraft, and one track per multiplayer
    /// callsign (FlightGear tapes).
    Kml,
    /// A GPX flight track (`-o FILE.gpx`), as for KML.
    Gpx,
    /// A USVLOG session folder (`-o` names the folder).
    Usvlog,
    /// An ICAREC recording directory.
    Icarec,
    /// The HDF5 layout the Icarus simulator writes (`/time`, `/signals/<name>`, `/metadata`).
    #[value(name = "icarus-h5")]
    IcarusH5,
    /// A CARLA recorder log.
    Carla,
    /// A FlightGear tape.
    Fgtape,
    /// MCAP for Foxglove and Lichtblick (`-o FILE.mcap`): a channel per stream, JSON
    /// messages with a JSON Schema.
    Mcap,
    /// A NanoVer recording (`.traj`, with its `.state` beside it).
    Nanover,
    /// NanoVer's newer single-file recording (`messages.msgpack` + `index.msgpack` in a zip).
    #[value(name = "nanover-zip")]
    NanoverZip,
}

impl ConvertTo {
    /// The recording format id when the target is a recording format rather than tables.
    pub fn recording_format(self) -> Option<&'static str> {
        match self {
            ConvertTo::Usvlog => Some("usvlog"),
            ConvertTo::Icarec => Some("icarec"),
            ConvertTo::IcarusH5 => Some("icarus-h5"),
            ConvertTo::Carla => Some("carla"),
            ConvertTo::Fgtape => Some("fgtape"),
            ConvertTo::Nanover => Some("nanover"),
            _ => None,
        }
    }
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
