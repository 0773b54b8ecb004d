//! `recfmt plot` and `recfmt carla map`: pictures of recordings (see `recfmt::plot`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{ArgMatches, Args, Command, FromArgMatches, ValueEnum};
use recfmt::core::{Integrity, RecordingReader, Replace};
use recfmt::export::{Pattern, Pipeline, SelectedReader, TimeBound, TimeRange};
use recfmt::plot::{Figure, Panels, SignalOptions};

use crate::Outcome;
use crate::args::GlobalArgs;
use crate::commands::{open_options, report_loss};

/// `recfmt plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// A recording file or directory.
    pub path: PathBuf,
    /// Plot signals matching this pattern against time (`name` or `stream.name`, glob or
    /// `re:` regex, as convert's `--signal`). Repeatable. Without any: an overview of every
    /// stream's rows over time.
    #[arg(long = "signal", value_name = "PATTERN")]
    pub signals: Vec<String>,
    /// First time shown (same forms as convert's `--start`).
    #[arg(long, allow_hyphen_values = true, value_name = "TIME", value_parser = crate::args::time_arg)]
    pub start: Option<String>,
    /// First time no longer shown (same forms as `--start`).
    #[arg(long, allow_hyphen_values = true, value_name = "TIME", value_parser = crate::args::time_arg)]
    pub end: Option<String>,
    /// One panel per unit or one per stream.
    #[arg(long, value_enum, default_value_t = PanelsArg::Unit)]
    pub panels: PanelsArg,
    /// Draw the ground track (longitude/latitude) and altitude profile instead (recordings
    /// with aircraft positions, such as FlightGear tapes).
    #[arg(long, conflicts_with_all = ["signals", "start", "end"])]
    pub track: bool,
    /// The picture: `.svg` or `.png`.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Width in pixels.
    #[arg(long, default_value_t = 1200, value_parser = clap::value_parser!(u32).range(64..=16384))]
    pub width: u32,
    /// Height in pixels (default: enough for every panel or stream).
    #[arg(long, value_parser = clap::value_parser!(u32).range(64..=16384))]
    pub height: Option<u32>,
}

/// `--panels`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PanelsArg {
    /// One panel per unit.
    Unit,
    /// One panel per stream.
    Stream,
}

/// `recfmt carla map`.
#[derive(Debug, Args)]
pub struct CarlaMapArgs {
    /// A CARLA recorder log.
    pub path: PathBuf,
    /// The picture: `.svg` or `.png`.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Width in pixels.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(64..=16384))]
    pub width: u32,
    /// Height in pixels.
    #[arg(long, value_parser = clap::value_parser!(u32).range(64..=16384))]
    pub height: Option<u32>,
}

/// Refuses, before anything is read, an output that exists unless `--force`.
fn check_output(global: &GlobalArgs, output: &Path) -> Result<Replace> {
    let replace = Replace::forced(global.force);
    recfmt::core::atomic::check_target(output, replace)?;
    Ok(replace)
}

fn write(
    figure: &Figure,
    output: &Path,
    width: u32,
    height: Option<u32>,
    replace: Replace,
) -> Result<()> {
    let folders = match output.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => recfmt::core::CreatedDirs::create(parent)?,
        None => recfmt::core::CreatedDirs::default(),
    };
    figure
        .write(output, width, height, replace)
        .with_context(|| format!("drawing {}", output.display()))?;
    folders.keep();
    eprintln!("wrote {}", output.display());
    Ok(())
}

fn finish(integrity: &Integrity) -> Outcome {
    report_loss(&integrity.into());
    Outcome::of(integrity)
}

/// The `carla` group the registry's queries build, with `map` added (a picture, not a query).
pub fn with_carla_map(cli: Command) -> Command {
    if cli.find_subcommand("carla").is_none() {
        return cli;
    }
    cli.mut_subcommand("carla", |group| {
        group.subcommand(
            CarlaMapArgs::augment_args(Command::new("map"))
                .about("The actors' tracks seen from above, as SVG or PNG"),
        )
    })
}

/// Runs `recfmt carla map` if the command line names it.
pub fn run_if_carla_map(matches: &ArgMatches) -> Option<Result<Outcome>> {
    let ("carla", group) = matches.subcommand()? else {
        return None;
    };
    let ("map", args) = group.subcommand()? else {
        return None;
    };
    let run = || {
        let global = GlobalArgs::from_arg_matches(args)?;
        let map = CarlaMapArgs::from_arg_matches(args)?;
        carla_map(&global, &map)
    };
    Some(run())
}

/// `recfmt plot`.
pub fn plot(global: &GlobalArgs, args: &PlotArgs) -> Result<Outcome> {
    crate::args::check_range(args.start.as_deref(), args.end.as_deref());
    // Refuse a bad output name, or an existing output, before reading anything.
    recfmt::plot::ImageKind::from_path(&args.output)?;
    let replace = check_output(global, &args.output)?;
    let mut reader = recfmt::open_with(
        recfmt::default_registry(),
        &args.path,
        &open_options(global)?,
    )?
    .into_reader();
    let title = recfmt::plot::title_for(&args.path, reader.as_ref());
    let range = TimeRange {
        start: args.start.as_deref().map(TimeBound::parse).transpose()?,
        end: args.end.as_deref().map(TimeBound::parse).transpose()?,
        carry_last: false,
    };
    let reading = || format!("reading {}", args.path.display());
    if args.track {
        let figure =
            recfmt::pictures::ground_track(reader.as_mut(), &title).with_context(reading)?;
        write(&figure, &args.output, args.width, args.height, replace)?;
        return Ok(finish(reader.integrity()));
    }
    if args.signals.is_empty() {
        let mut reader: Box<dyn RecordingReader> = if range.is_empty() {
            reader
        } else {
            let pipeline = Pipeline {
                range,
                ..Pipeline::default()
            };
            Box::new(SelectedReader::new(reader, &pipeline)?)
        };
        let figure = recfmt::plot::overview(reader.as_mut(), &title).with_context(reading)?;
        write(&figure, &args.output, args.width, args.height, replace)?;
        return Ok(finish(reader.integrity()));
    }
    let options = SignalOptions {
        signals: args
            .signals
            .iter()
            .map(|s| Pattern::parse(s))
            .collect::<Result<_, _>>()?,
        range,
        panels: match args.panels {
            PanelsArg::Unit => Panels::Unit,
            PanelsArg::Stream => Panels::Stream,
        },
        title,
    };
    let figure = recfmt::plot::plot_signals(reader, &options).with_context(reading)?;
    let Figure::Signals(plot) = &figure else {
        anyhow::bail!("plot_signals gave another kind of figure");
    };
    for note in &plot.notes {
        eprintln!("note: {note}");
    }
    write(&figure, &args.output, args.width, args.height, replace)?;
    Ok(finish(&plot.integrity))
}

/// `recfmt carla map`.
pub fn carla_map(global: &GlobalArgs, args: &CarlaMapArgs) -> Result<Outcome> {
    recfmt::plot::ImageKind::from_path(&args.output)?;
    let replace = check_output(global, &args.output)?;
    let registry = recfmt::default_registry();
    let carla = registry
        .by_id("carla")
        .context("this build of recfmt reads no CARLA logs")?;
    let options = open_options(global)?.read_options_for(registry, carla)?;
    let figure = recfmt::pictures::carla_map(&args.path, &options)
        .with_context(|| format!("reading {}", args.path.display()))?;
    write(&figure, &args.output, args.width, args.height, replace)?;
    Ok(Outcome::Complete)
}
