//! The commands other than `convert`: each calls the library's front door and prints its
//! report.

use std::io::{BufWriter, Write};

use anyhow::{Context, Result};
use recfmt::core::{ArrayValue, FormatOptions, FrameBuf, Schema, Value};
use recfmt::export::{TimeBound, json};
use recfmt::{IntegrityReport, OpenOptions};
use serde_json::json;

use crate::Outcome;
use crate::args::{
    CatArgs, CatOutput, FormatsArgs, GlobalArgs, InfoArgs, RepairArgs, ValidateArgs,
};

/// The open options the global arguments give; the format aliases become format options.
pub fn open_options(global: &GlobalArgs) -> Result<OpenOptions> {
    let mut format_options = FormatOptions::new();
    for text in &global.opts {
        format_options.push_pair(text)?;
    }
    if let Some(build) = &global.carla_build {
        format_options.push("carla.build", build.clone());
    }
    if let Some(version) = global.nanover_version {
        format_options.push("nanover.version", version.to_string());
    }
    Ok(OpenOptions {
        format: global.format.clone(),
        strict: global.strict,
        resync: global.resync,
        layouts: global.layouts.clone(),
        format_options,
        cancel: None,
        threads: global.threads.map(usize::from),
    })
}

/// Says on stderr that input data was lost, with the integrity lines, when it was.
pub fn report_loss(i: &IntegrityReport) {
    if i.lost_data {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "recfmt: warning: input data was lost");
        let _ = write!(err, "{i}");
    }
}

/// `recfmt info`.
pub fn info(global: &GlobalArgs, args: &InfoArgs) -> Result<Outcome> {
    let report = recfmt::inspect::info(
        recfmt::default_registry(),
        &args.path,
        &open_options(global)?,
    )?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.json {
        writeln!(out, "{}", report.to_json())?;
    } else {
        write!(out, "{report}")?;
    }
    out.flush()?;
    Ok(report.outcome())
}

fn text_row(line: &mut String, schema: &Schema, frame: &FrameBuf) {
    let desc = &schema.streams[frame.stream];
    line.push_str(&desc.name);
    for (sig, v) in desc.signals.iter().zip(&frame.values) {
        line.push(' ');
        line.push_str(&sig.name);
        line.push('=');
        match v {
            Value::Str(s) => line.push_str(s),
            other => json::value(line, other, sig.dtype),
        }
    }
}

/// `recfmt cat --at T`: the state of every signal at time `at` (its warnings, such as frame
/// times out of order, on stderr).
fn cat_at(global: &GlobalArgs, args: &CatArgs, at: &str) -> Result<Outcome> {
    let state = recfmt::inspect::state_at_time(
        recfmt::default_registry(),
        &args.path,
        &TimeBound::parse(at)?,
        &open_options(global)?,
    )?;
    for warning in &state.integrity.warnings {
        eprintln!("recfmt: warning: {warning}");
    }
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match args.output {
        CatOutput::Text => {
            writeln!(out, "t = {} (frame {})", state.t, state.frame)?;
            for (name, value) in &state.values {
                writeln!(out, "{name} = {}", state_value_text(value))?;
            }
        }
        CatOutput::Ndjson => {
            let values: serde_json::Map<String, serde_json::Value> = state
                .values
                .iter()
                .map(|(n, v)| (n.clone(), serde_json::Value::String(state_value_text(v))))
                .collect();
            let doc = json!({"t": state.t, "frame": state.frame, "values": values});
            writeln!(out, "{doc}")?;
        }
    }
    out.flush()?;
    Ok(if state.integrity.lost_data {
        Outcome::DataLost
    } else {
        Outcome::Complete
    })
}

/// A value of `cat --at` as text: numbers as Rust prints them (`0.1`, `-3`), booleans as
/// `true`/`false`, arrays (vectors, quaternions, matrices) as `[x, y, z]`.
fn state_value_text(value: &Value) -> String {
    fn list<T: std::fmt::Display>(items: &[T]) -> String {
        let items: Vec<String> = items.iter().map(ToString::to_string).collect();
        format!("[{}]", items.join(", "))
    }
    match value {
        Value::Null => String::new(),
        Value::Bool(v) => v.to_string(),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::Float(v) => v.to_string(),
        Value::Str(s) => s.clone(),
        Value::Array(ArrayValue::Bool(v)) => list(v),
        Value::Array(ArrayValue::Int(v)) => list(v),
        Value::Array(ArrayValue::UInt(v)) => list(v),
        Value::Array(ArrayValue::F32(v)) => list(v),
        Value::Array(ArrayValue::F64(v)) => list(v),
        other => format!("{other:?}"),
    }
}

/// `recfmt cat`.
pub fn cat(global: &GlobalArgs, args: &CatArgs) -> Result<Outcome> {
    if let Some(at) = &args.at {
        return cat_at(global, args, at);
    }
    let mut reader = recfmt::open_with(
        recfmt::default_registry(),
        &args.path,
        &open_options(global)?,
    )?
    .into_reader();
    let schema = reader.schema().clone();
    let mut wanted = vec![args.streams.is_empty(); schema.streams.len()];
    for name in &args.streams {
        let index = schema.stream_index(name).with_context(|| {
            let names: Vec<_> = schema.streams.iter().map(|s| s.name.as_str()).collect();
            format!("no stream {name:?} (streams: {})", names.join(", "))
        })?;
        wanted[index] = true;
    }
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let rows_json: Vec<json::RowWriter> = schema
        .streams
        .iter()
        .map(|desc| json::RowWriter::new(desc, true))
        .collect();
    let mut frame = FrameBuf::default();
    let mut line = String::new();
    let mut printed = 0u64;
    while args.limit.is_none_or(|limit| printed < limit) && reader.read_frame(&mut frame)? {
        if !wanted.get(frame.stream).copied().unwrap_or(false) {
            continue;
        }
        line.clear();
        match args.output {
            CatOutput::Text => text_row(&mut line, &schema, &frame),
            CatOutput::Ndjson => rows_json[frame.stream].write(&mut line, &frame.values),
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
        printed += 1;
    }
    out.flush()?;
    let integrity = IntegrityReport::from(reader.integrity());
    report_loss(&integrity);
    Ok(if integrity.lost_data {
        Outcome::DataLost
    } else {
        Outcome::Complete
    })
}

/// `recfmt validate`: exit 0 when valid, 3 when input data was lost (truncated or corrupt; the
/// recording is INVALID too), 1 when INVALID for another reason (problems found), when not
/// compatible with `--against`, or on error.
pub fn validate(global: &GlobalArgs, args: &ValidateArgs) -> Result<Outcome> {
    let options = recfmt::validate::ValidateOptions {
        open: open_options(global)?,
        against: args.against.clone(),
    };
    let report = recfmt::validate::validate(recfmt::default_registry(), &args.path, &options)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.json {
        writeln!(out, "{}", report.to_json())?;
    } else {
        write!(out, "{report}")?;
    }
    out.flush()?;
    if !report.compatible {
        anyhow::bail!(
            "{} is not compatible with {}",
            args.path.display(),
            args.against
                .as_deref()
                .unwrap_or(std::path::Path::new(""))
                .display()
        );
    }
    Ok(report.outcome())
}

/// `recfmt recover` (alias `repair`).
pub fn recover(global: &GlobalArgs, args: &RepairArgs) -> Result<Outcome> {
    let report = recfmt::ops::recover(
        recfmt::default_registry(),
        &args.path,
        &args.output,
        &open_options(global)?,
        recfmt::core::Replace::forced(global.force),
    )?;
    eprintln!(
        "wrote {}: {}",
        args.output.display(),
        recovered_summary(&report.recovered)
    );
    Ok(report.outcome())
}

/// What `recover` did, in one line: `5 of 7 records kept, 2 dropped (80 bytes), 0 timestamps
/// fixed, 0 resets restored` (each further repair by its name, `_` read as a space).
fn recovered_summary(r: &recfmt::front_end::Recovered) -> String {
    let mut line = format!(
        "{} of {} records kept, {} dropped ({} bytes)",
        r.records_written, r.records_in, r.records_dropped, r.bytes_dropped
    );
    for (name, count) in &r.repairs {
        line.push_str(&format!(", {count} {}", name.replace('_', " ")));
    }
    line
}

/// `recfmt formats`: one line per format (id, read or read/write, name), then what else it
/// can do; or everything as JSON.
pub fn formats(args: &FormatsArgs) -> Result<Outcome> {
    let registry = recfmt::default_registry();
    let summaries = recfmt::inspect::formats(registry);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.json {
        writeln!(out, "{}", recfmt::to_json(&summaries))?;
        out.flush()?;
        return Ok(Outcome::Complete);
    }
    for f in &summaries {
        let write = if f.capabilities.contains(&"write") {
            "read/write"
        } else {
            "read"
        };
        writeln!(out, "{:<10} {write:<10} {}", f.id, f.name)?;
        let indent = " ".repeat(11);
        let more: Vec<_> = f
            .capabilities
            .iter()
            .filter(|c| **c != "write")
            .copied()
            .collect();
        if !more.is_empty() {
            writeln!(out, "{indent}can: {}", more.join(", "))?;
        }
        let keys = |o: &[recfmt::inspect::OptionSummary]| {
            o.iter().map(|o| o.key).collect::<Vec<_>>().join(", ")
        };
        if !f.options.is_empty() {
            writeln!(
                out,
                "{indent}options (--opt {}.KEY=VALUE): {}",
                f.id,
                keys(&f.options)
            )?;
        }
        if !f.outputs.is_empty() {
            writeln!(out, "{indent}outputs (--to): {}", f.outputs.join(", "))?;
        }
        for q in &f.queries {
            let params = if q.params.is_empty() {
                String::new()
            } else {
                format!(" [{}]", keys(&q.params))
            };
            writeln!(
                out,
                "{indent}query `recfmt {} {}`{params}: {}",
                f.id, q.name, q.help
            )?;
        }
    }
    out.flush()?;
    Ok(Outcome::Complete)
}
