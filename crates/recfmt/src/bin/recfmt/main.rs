//! The `recfmt` command line: inspect, print, validate and convert recordings.
//!
//! Every command goes through the `recfmt` library's front door and the default format
//! registry; this binary only parses arguments and prints reports.
//!
//! Exit codes: 0 success, 1 error (and `validate`: INVALID), 2 usage, 3 finished but input
//! data was lost.

mod args;
mod commands;
mod convert;
mod memory;
mod plot;
mod query;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use args::{Cli, Command};
pub use recfmt::Outcome;

/// Exit code after SIGINT or SIGTERM, as shells report a process a signal ended (128 + 2).
const EXIT_INTERRUPTED: i32 = 130;

fn main() -> ExitCode {
    memory::return_freed_memory();
    // Ctrl-C or a termination request: remove every unfinished output, so the folder is as
    // the run found it, then stop.
    let _ = ctrlc::set_handler(|| {
        recfmt::core::atomic::remove_pending();
        eprintln!("recfmt: interrupted; unfinished outputs removed");
        std::process::exit(EXIT_INTERRUPTED);
    });
    let registry = recfmt::default_registry();
    let cli = plot::with_carla_map(query::with_query_commands(Cli::command(), registry));
    let matches = cli.get_matches();
    let result = match plot::run_if_carla_map(&matches)
        .or_else(|| query::run_if_query(&matches, registry))
    {
        Some(result) => result,
        None => {
            let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
            match &cli.command {
                Command::Info(a) => commands::info(&cli.global, a),
                Command::Cat(a) => commands::cat(&cli.global, a),
                Command::Convert(a) => convert::convert(&cli.global, a),
                Command::Validate(a) => commands::validate(&cli.global, a),
                Command::Recover(a) => commands::recover(&cli.global, a),
                Command::Formats(a) => commands::formats(a),
                Command::Plot(a) => plot::plot(&cli.global, a),
            }
        }
    };
    if recfmt::core::atomic::interrupted() {
        // The handler is removing the unfinished outputs and ends the process with
        // EXIT_INTERRUPTED: an error from an output removed under this thread (or its end)
        // must not exit first with another code, nor cut the removal short.
        loop {
            std::thread::park();
        }
    }
    if let Err(e) = &result
        && is_broken_pipe(e)
    {
        return ExitCode::SUCCESS;
    }
    let code = Outcome::exit_code_of(&result);
    match result {
        Ok(_) => ExitCode::from(code),
        Err(e) => {
            eprintln!("recfmt: error: {e}");
            let mut shown = e.to_string();
            for cause in e.chain().skip(1) {
                let text = cause.to_string();
                // Messages say their cause after what failed (`converting a into b: a: …`):
                // a cause already in the text shown is not printed again.
                if !shown.contains(&text) {
                    eprintln!("  caused by: {text}");
                    shown.push('\n');
                    shown.push_str(&text);
                }
            }
            ExitCode::from(code)
        }
    }
}

/// `recfmt cat … | head` closes the pipe early; that is not an error. Errors wrap I/O errors
/// transparently (the `io::Error` is then not in the source chain), so they are asked.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    let broken = |io: &std::io::Error| io.kind() == std::io::ErrorKind::BrokenPipe;
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(broken)
            || c.downcast_ref::<recfmt::core::Error>()
                .and_then(recfmt::core::Error::io_error)
                .is_some_and(broken)
            || c.downcast_ref::<recfmt::Error>()
                .and_then(recfmt::Error::io_error)
                .is_some_and(broken)
    })
}
