//! `recfmt convert`: the arguments as [`recfmt::convert::ConvertOptions`], a progress bar,
//! and the reports printed.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use recfmt::convert::{ConvertOptions, ConvertReport, Progress};
use recfmt::core::TimeSystem;
use recfmt::export::ParquetCompression;

use crate::Outcome;
use crate::args::{Compression, ConvertArgs, GlobalArgs, TimeColumn};
use crate::commands::{open_options, report_loss};

/// Expands glob patterns among the inputs (for shells that do not).
fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in inputs {
        let text = input.to_string_lossy();
        if !input.exists() && text.contains(['*', '?', '[']) {
            let matches: Vec<PathBuf> = glob::glob(&text)
                .with_context(|| format!("bad glob {text:?}"))?
                .collect::<Result<_, _>>()?;
            if matches.is_empty() {
                bail!("{text}: no file matches");
            }
            out.extend(matches);
        } else {
            out.push(input.clone());
        }
    }
    Ok(out)
}

/// The library's options for these arguments.
fn options(global: &GlobalArgs, args: &ConvertArgs) -> Result<ConvertOptions> {
    let mut open = open_options(global)?;
    if let Some(map) = &args.map {
        open.format_options.push("carla.map", map.clone());
    }
    Ok(ConvertOptions {
        open,
        target: args.to.clone(),
        compression: match args.compression {
            Compression::Zstd => ParquetCompression::Zstd,
            Compression::Snappy => ParquetCompression::Snappy,
            Compression::None => ParquetCompression::None,
        },
        batch_rows: usize::try_from(args.batch_rows).unwrap_or(usize::MAX),
        row_group_rows: usize::try_from(args.row_group_rows).unwrap_or(usize::MAX),
        row_group_bytes: usize::try_from(args.row_group_bytes).unwrap_or(usize::MAX),
        row_group_memory: usize::try_from(args.row_group_memory).unwrap_or(usize::MAX),
        byte_stream_split: args.byte_stream_split,
        delimiter: args.delimiter.clone(),
        units_row: args.units_row,
        streams: args.streams.clone(),
        exclude_streams: args.exclude_streams.clone(),
        signals: args.signals.clone(),
        exclude_signals: args.exclude_signals.clone(),
        start: args.start.clone(),
        end: args.end.clone(),
        carry_last: args.carry_last,
        merge: args.merge.clone(),
        max_rows: args.max_rows,
        upcast_f64: args.upcast.is_some(),
        time_column: args.time_column.map(|t| match t {
            TimeColumn::Utc => TimeSystem::Utc,
            TimeColumn::Tai => TimeSystem::Tai,
            TimeColumn::Gps => TimeSystem::Gps,
        }),
        string_width: args.string_width,
        jobs: args.jobs,
        partition: args.partition,
        source: args.source.clone(),
        force: global.force,
    })
}

fn progress_bar() -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

fn print_notes(report: &ConvertReport) -> Result<()> {
    let mut err = std::io::stderr().lock();
    for n in &report.notes {
        writeln!(err, "{n}")?;
    }
    Ok(())
}

/// `recfmt convert`.
pub fn convert(global: &GlobalArgs, args: &ConvertArgs) -> Result<Outcome> {
    crate::args::check_range(args.start.as_deref(), args.end.as_deref());
    let registry = recfmt::default_registry();
    let inputs = expand_inputs(&args.inputs)?;
    let options = options(global, args)?;
    if inputs.len() == 1 {
        let bar = progress_bar();
        let on_progress = |p: Progress| {
            if let Some(total) = p.total {
                bar.set_length(total);
            }
            bar.set_position(p.done);
        };
        let report = recfmt::convert::convert(
            registry,
            &inputs[0],
            &args.output,
            &options,
            Some(&on_progress),
        )?;
        bar.finish_and_clear();
        report_loss(&report.integrity);
        print_notes(&report)?;
        return Ok(report.outcome);
    }
    let results = recfmt::convert::convert_many(registry, &inputs, &args.output, &options, None)?;
    for report in results.iter().flatten() {
        report_loss(&report.integrity);
    }
    let mut lost = false;
    let mut failed = 0;
    for (input, result) in inputs.iter().zip(results) {
        match result {
            Ok(report) => {
                lost |= report.outcome == Outcome::DataLost;
                print_notes(&report)?;
            }
            Err(e) => {
                failed += 1;
                let e = anyhow::Error::from(e);
                writeln!(
                    std::io::stderr().lock(),
                    "recfmt: error: {}: {e:#}",
                    input.display()
                )?;
            }
        }
    }
    if failed > 0 {
        bail!("{failed} of {} inputs failed", inputs.len());
    }
    Ok(if lost {
        Outcome::DataLost
    } else {
        Outcome::Complete
    })
}
