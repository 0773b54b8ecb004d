//! The commands added in round 2 (issue 26), run over the mutants through the library calls
//! the command line makes: `recfmt plot` (the overview, every signal, and `--track` for
//! FlightGear tapes), `recfmt carla map`, `convert --to mcap` and `convert --partition`.
//! Figures are rendered in memory, as SVG or PNG, which is where drawing hangs were found.

use std::path::Path;

use recfmt::convert::ConvertOptions;
use recfmt::core::ReadOptions;
use recfmt::plot::{Figure, ImageKind, SignalOptions};
use recfmt::{OpenOptions, Outcome};

/// Image width for every figure: small, so a debug build draws it quickly.
const WIDTH: u32 = 480;

/// A round-2 command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `recfmt plot REC -o OUT`: the overview sheet.
    PlotOverview,
    /// `recfmt plot REC --signal '*' -o OUT`: every numeric signal against time.
    PlotSignals,
    /// `recfmt plot TAPE --track -o OUT`: the ground track of a FlightGear tape.
    PlotTrack,
    /// `recfmt carla map LOG -o OUT`.
    CarlaMap,
    /// `recfmt convert REC --to mcap`.
    Mcap,
    /// `recfmt convert REC --to parquet --partition`.
    Partition,
}

impl Command {
    /// The name in failure messages and counts.
    pub fn name(self) -> &'static str {
        match self {
            Command::PlotOverview => "plot",
            Command::PlotSignals => "plot --signal",
            Command::PlotTrack => "plot --track",
            Command::CarlaMap => "carla map",
            Command::Mcap => "--to mcap",
            Command::Partition => "--partition",
        }
    }

    /// The commands that apply to a format's recordings (the others refuse them at once).
    pub fn for_format(format: &str) -> Vec<Command> {
        let mut out = vec![
            Command::PlotOverview,
            Command::PlotSignals,
            Command::Mcap,
            Command::Partition,
        ];
        match format {
            "fgtape" => out.push(Command::PlotTrack),
            "carla" => out.push(Command::CarlaMap),
            _ => {}
        }
        out
    }

    /// Runs the command on `path`, writing under `out` (removed afterwards; figures stay in
    /// memory, as `image`); the exit code the command line gives.
    pub fn run(self, path: &Path, out: &Path, image: ImageKind) -> u8 {
        match self {
            Command::Mcap => convert(
                path,
                out,
                &ConvertOptions {
                    target: "mcap".into(),
                    ..Default::default()
                },
            ),
            Command::Partition => convert(
                path,
                out,
                &ConvertOptions {
                    target: "parquet".into(),
                    partition: true,
                    ..Default::default()
                },
            ),
            Command::CarlaMap => {
                let result = recfmt::pictures::carla_map(path, &ReadOptions::default())
                    .and_then(|figure| figure.render(image, WIDTH, None))
                    .map(|_| Outcome::Complete);
                Outcome::exit_code_of(&result)
            }
            Command::PlotOverview | Command::PlotSignals | Command::PlotTrack => {
                Outcome::exit_code_of(&plot(self, path, image))
            }
        }
    }
}

/// `recfmt plot` as the command line runs it, the image rendered but not written.
fn plot(command: Command, path: &Path, image: ImageKind) -> anyhow::Result<Outcome> {
    let mut reader =
        recfmt::open_with(recfmt::default_registry(), path, &OpenOptions::default())?.into_reader();
    let title = recfmt::plot::title_for(path, reader.as_ref());
    let (figure, integrity) = match command {
        Command::PlotTrack => {
            let figure = recfmt::pictures::ground_track(reader.as_mut(), &title)?;
            (figure, reader.integrity().clone())
        }
        Command::PlotSignals => {
            let options = SignalOptions {
                title,
                ..Default::default()
            };
            let figure = recfmt::plot::plot_signals(reader, &options)?;
            let Figure::Signals(plot) = &figure else {
                anyhow::bail!("plot_signals gave another kind of figure");
            };
            let integrity = plot.integrity.clone();
            (figure, integrity)
        }
        _ => {
            let figure = recfmt::plot::overview(reader.as_mut(), &title)?;
            (figure, reader.integrity().clone())
        }
    };
    figure.render(image, WIDTH, None)?;
    Ok(Outcome::of(&integrity))
}

/// `recfmt convert` into `out`, which is removed afterwards; the exit code.
pub fn convert(path: &Path, out: &Path, options: &ConvertOptions) -> u8 {
    let result = recfmt::convert::convert(recfmt::default_registry(), path, out, options, None)
        .map(|report| report.outcome);
    let _ = std::fs::remove_dir_all(out);
    let _ = std::fs::remove_file(out);
    Outcome::exit_code_of(&result)
}
