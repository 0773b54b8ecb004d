//! `recfmt FORMAT QUERY PATH …`: the named queries of every registered format (CARLA's
//! `info`, `collisions`, `blocked`), as subcommands built from the registry.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Arg, ArgAction, ArgMatches, Command};
use recfmt::core::{FormatOptions, OptionKind, QueryForm, Registry};

use crate::Outcome;

/// The long flag of a parameter key (`min_time` → `min-time`), built once per run.
fn flag_name(key: &'static str) -> &'static str {
    if key.contains('_') {
        Box::leak(key.replace('_', "-").into_boxed_str())
    } else {
        key
    }
}

/// `cli` with one subcommand per format that has queries, and one sub-subcommand per query.
pub fn with_query_commands(mut cli: Command, registry: &Registry) -> Command {
    for format in registry.formats().iter().filter(|f| !f.queries.is_empty()) {
        let mut group = Command::new(format.info.id)
            .about(format!(
                "{}'s own queries, with the text it prints (or --json)",
                format.info.name
            ))
            .subcommand_required(true)
            .arg_required_else_help(true);
        for q in format.queries {
            let mut cmd = Command::new(q.name)
                .about(q.help)
                .arg(
                    Arg::new("path")
                        .required(true)
                        .value_name("PATH")
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("The recording"),
                )
                .arg(
                    Arg::new("json")
                        .long("json")
                        .action(ArgAction::SetTrue)
                        .help("Print JSON instead of text"),
                );
            for p in q.params {
                let mut arg = Arg::new(p.key).long(flag_name(p.key)).help(p.help);
                arg = match p.kind {
                    OptionKind::Flag => arg.action(ArgAction::SetTrue),
                    OptionKind::Choice(words) => arg.value_parser(
                        clap::builder::PossibleValuesParser::new(words.iter().copied()),
                    ),
                    _ => arg,
                };
                if p.kind != OptionKind::Flag
                    && let Some(default) = p.default
                {
                    arg = arg.default_value(default);
                }
                cmd = cmd.arg(arg);
            }
            group = group.subcommand(cmd);
        }
        cli = cli.subcommand(group);
    }
    cli
}

/// Runs the query the command line names, if it names one.
pub fn run_if_query(matches: &ArgMatches, registry: &Registry) -> Option<Result<Outcome>> {
    let (id, group) = matches.subcommand()?;
    let format = registry.by_id(id).filter(|f| !f.queries.is_empty())?;
    let (name, args) = group.subcommand()?;
    let query = format.query(name)?;
    let path = args.get_one::<PathBuf>("path")?.clone();
    let mut params = FormatOptions::new();
    for p in query.params {
        if p.kind == OptionKind::Flag {
            params.push(p.key, args.get_flag(p.key).to_string());
        } else if let Some(value) = args.get_one::<String>(p.key) {
            params.push(p.key, value.clone());
        }
    }
    let form = if args.get_flag("json") {
        QueryForm::Json
    } else {
        QueryForm::Text
    };
    Some(run(registry, id, name, &path, &params, form))
}

fn run(
    registry: &Registry,
    format: &str,
    name: &str,
    path: &std::path::Path,
    params: &FormatOptions,
    form: QueryForm,
) -> Result<Outcome> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = recfmt::ops::query(registry, format, name, path, params, form, &mut out);
    out.flush()?;
    result?;
    Ok(Outcome::Complete)
}
