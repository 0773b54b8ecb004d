//! The `recfmt` command line: inspect, print, validate and convert recordings.
//!
//! Exit codes: 0 success, 1 error (and `validate`: INVALID), 2 usage, 3 finished but input
//! data was lost.

mod args;
mod commands;
mod convert;
mod mcap;
mod plot;
mod scan;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command};

/// How a command ended when it did not fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything was read.
    Complete,
    /// The command finished, but the input was truncated or had corrupt records.
    DataLost,
    /// `validate` found problems other than lost data: the recording is INVALID.
    Invalid,
}

const EXIT_ERROR: u8 = 1;
const EXIT_DATA_LOST: u8 = 3;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Info(a) => commands::info(&cli.global, a),
        Command::Cat(a) => commands::cat(&cli.global, a),
        Command::Convert(a) => convert::convert(&cli.global, a),
        Command::Validate(a) => commands::validate(&cli.global, a),
        Command::Recover(a) => commands::recover(&cli.global, a),
        Command::Formats => commands::formats(),
        Command::Carla(c) => commands::carla(&cli.global, c),
        Command::Plot(a) => plot::plot(&cli.global, a),
    };
    match result {
        Ok(Outcome::Complete) => ExitCode::SUCCESS,
        Ok(Outcome::DataLost) => ExitCode::from(EXIT_DATA_LOST),
        Ok(Outcome::Invalid) => ExitCode::from(EXIT_ERROR),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("recfmt: error: {e}");
            let mut shown = e.to_string();
            for cause in e.chain().skip(1) {
                let text = cause.to_string();
                // A file-scoped error already shows its cause after the file name.
                if !shown.ends_with(&text) {
                    eprintln!("  caused by: {text}");
                }
                shown = text;
            }
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// `recfmt cat … | head` closes the pipe early; that is not an error. Format crates wrap I/O
/// errors transparently (the `io::Error` is then not in the source chain), so their wrappers
/// are looked into too.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    let broken = |io: &std::io::Error| io.kind() == std::io::ErrorKind::BrokenPipe;
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(broken)
            || matches!(c.downcast_ref::<recfmt_core::Error>(), Some(recfmt_core::Error::Io(io)) if broken(io))
            || matches!(c.downcast_ref::<recfmt_carla::Error>(), Some(recfmt_carla::Error::Io(io)) if broken(io))
    })
}
