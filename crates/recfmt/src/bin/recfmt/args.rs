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
    Convert(ConvertArgs),
    /// Read a recording completely and report every problem found.
    Validate(ValidateArgs),
    /// List the formats this build can read.
    Formats,
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
    /// A recording file or directory.
    pub path: PathBuf,
    /// Output kind.
    #[arg(long, value_enum)]
    pub to: ConvertTo,
    /// Output directory: one file per stream, `DIR/<stream>.<ext>`.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: PathBuf,
    /// Parquet compression.
    #[arg(long, value_enum, default_value_t = Compression::Zstd)]
    pub compression: Compression,
    /// Rows per record batch (and Parquet row group flush).
    #[arg(long, default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(1..))]
    pub batch_rows: u64,
}

/// Output kinds of `convert`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConvertTo {
    /// Apache Parquet, one file per stream.
    Parquet,
    /// CSV with a header row, one file per stream.
    Csv,
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

/// `recfmt validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// A recording file or directory.
    pub path: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}
