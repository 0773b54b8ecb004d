//! The commands.

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{Context, Result};
use recfmt_core::{FrameBuf, Integrity, ReadOptions, RecordingReader, Schema, Shape, Value};
use serde_json::json;

use crate::Outcome;
use crate::args::{CatArgs, CatOutput, GlobalArgs, InfoArgs, RepairArgs, ValidateArgs};
use crate::scan::{ScanStats, scan};
use recfmt_export::json;

/// The format id of `path`: the one `--format` forces, else the detected one.
fn format_of(global: &GlobalArgs, path: &Path) -> Result<String> {
    Ok(match &global.format {
        Some(f) => f.clone(),
        None => recfmt::default_registry()
            .detect_path(path)?
            .info
            .id
            .to_string(),
    })
}

pub fn open(global: &GlobalArgs, path: &Path) -> Result<Box<dyn RecordingReader>> {
    let options = ReadOptions {
        strict: global.strict,
        resync: global.resync,
        layouts: global.layouts.clone(),
        ..ReadOptions::default()
    };
    let registry = recfmt::default_registry();
    if let Some(build) = &global.carla_build
        && format_of(global, path)? == "carla"
    {
        use recfmt_core::ResultExt;
        let flavour: recfmt_carla::Flavour = build
            .parse()
            .map_err(|e| anyhow::anyhow!("--carla-build {build}: {e}"))?;
        let file = std::io::BufReader::new(std::fs::File::open(path).in_file(path)?);
        let recording = recfmt_carla::CarlaRecording::new_seekable(file, &options, Some(flavour))
            .in_file(path)?;
        return Ok(Box::new(recording));
    }
    if let Some(version) = global.nanover_version
        && format_of(global, path)? == "nanover"
    {
        use recfmt_core::ResultExt;
        let policy = if version == 1 {
            recfmt_nanover::VersionPolicy::V1
        } else {
            recfmt_nanover::VersionPolicy::V2
        };
        let recording =
            recfmt_nanover::NanoverRecording::open_with(path, &options, policy).in_file(path)?;
        return Ok(Box::new(recording));
    }
    Ok(registry.open_path(path, global.format.as_deref(), &options)?)
}

pub fn outcome(integrity: &Integrity) -> Outcome {
    if integrity.lost_data() {
        Outcome::DataLost
    } else {
        Outcome::Complete
    }
}

fn integrity_json(i: &Integrity) -> serde_json::Value {
    json!({
        "status": i.status.name(),
        "bytes_lost": i.bytes_lost,
        "truncated_at": i.truncated_at,
        "records_skipped": i.records_skipped,
        "warnings": i.warnings,
    })
}

fn shape_text(shape: &Shape) -> Option<String> {
    match shape {
        Shape::Scalar => None,
        Shape::Fixed(dims) => Some(
            dims.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join("x"),
        ),
        Shape::Variable => Some("variable".into()),
    }
}

fn info_json(path: &Path, reader: &dyn RecordingReader, stats: &ScanStats) -> serde_json::Value {
    let header = reader.header();
    let schema = reader.schema();
    let streams: Vec<_> = schema
        .streams
        .iter()
        .zip(&stats.streams)
        .map(|(desc, s)| {
            let signals: Vec<_> = desc
                .signals
                .iter()
                .map(|sig| {
                    json!({
                        "name": sig.name,
                        "dtype": sig.dtype.name(),
                        "shape": shape_text(&sig.shape),
                        "unit": sig.unit,
                    })
                })
                .collect();
            json!({
                "name": desc.name,
                "rows": s.rows,
                "start": s.start,
                "end": s.end,
                "rate_hz": s.rate_hz(),
                "time_column": desc.signals.get(desc.time).map(|t| &t.name),
                "time_base": format!("{}/{}", desc.time_base.numer, desc.time_base.denom),
                "signals": signals,
                "metadata": desc.metadata,
            })
        })
        .collect();
    let (start, end) = (stats.start(), stats.end());
    json!({
        "path": path.display().to_string(),
        "format": header.format,
        "format_name": reader.format().name,
        "version": header.version,
        "time": {
            "start": start,
            "end": end,
            "duration": start.zip(end).map(|(a, b)| b - a),
            "system": header.time.map(|t| t.system.name()),
            "epoch": header.time.and_then(|t| t.to_rfc3339(0.0)),
        },
        "rows": stats.rows(),
        "streams": streams,
        "metadata": header.metadata,
        "integrity": integrity_json(reader.integrity()),
    })
}

fn seconds(t: Option<f64>) -> String {
    t.map_or_else(|| "-".into(), |t| format!("{t:.6} s"))
}

fn print_integrity(out: &mut impl Write, i: &Integrity) -> std::io::Result<()> {
    let mut line = i.status.name().to_string();
    if let Some(at) = i.truncated_at {
        line.push_str(&format!(", truncated at byte {at}"));
    }
    if i.bytes_lost > 0 {
        line.push_str(&format!(", {} bytes lost", i.bytes_lost));
    }
    if i.records_skipped > 0 {
        line.push_str(&format!(", {} corrupt records skipped", i.records_skipped));
    }
    writeln!(out, "integrity: {line}")?;
    for w in &i.warnings {
        writeln!(out, "  warning: {w}")?;
    }
    Ok(())
}

/// `recfmt info`.
pub fn info(global: &GlobalArgs, args: &InfoArgs) -> Result<Outcome> {
    let mut reader = open(global, &args.path)?;
    let stats =
        scan(reader.as_mut()).with_context(|| format!("reading {}", args.path.display()))?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.json {
        serde_json::to_writer_pretty(&mut out, &info_json(&args.path, reader.as_ref(), &stats))?;
        writeln!(out)?;
    } else {
        let header = reader.header();
        writeln!(out, "file:      {}", args.path.display())?;
        writeln!(
            out,
            "format:    {} ({}), version {}",
            header.format,
            reader.format().name,
            header.version
        )?;
        let (start, end) = (stats.start(), stats.end());
        let duration = start.zip(end).map(|(a, b)| b - a);
        writeln!(
            out,
            "time:      {} .. {} (duration {})",
            seconds(start),
            seconds(end),
            seconds(duration)
        )?;
        writeln!(out, "rows:      {}", stats.rows())?;
        print_integrity(&mut out, reader.integrity())?;
        writeln!(out, "streams:")?;
        for (desc, s) in reader.schema().streams.iter().zip(&stats.streams) {
            let rate = s
                .rate_hz()
                .map_or_else(String::new, |r| format!(", {r:.3} Hz"));
            writeln!(
                out,
                "  {}: {} rows{rate}, {} .. {}",
                desc.name,
                s.rows,
                seconds(s.start),
                seconds(s.end)
            )?;
            for sig in &desc.signals {
                let shape = shape_text(&sig.shape).map_or_else(String::new, |s| format!("[{s}]"));
                let unit = sig
                    .unit
                    .as_deref()
                    .map_or_else(String::new, |u| format!(" ({u})"));
                writeln!(out, "    {}: {}{shape}{unit}", sig.name, sig.dtype)?;
            }
        }
    }
    out.flush()?;
    Ok(outcome(reader.integrity()))
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

/// `recfmt cat --at T`: the state of every signal at time `t`.
fn cat_at(global: &GlobalArgs, args: &CatArgs, t: f64) -> Result<Outcome> {
    let format = format_of(global, &args.path)?;
    if format != "icarec" {
        anyhow::bail!(
            "--at needs a format with random access to frames (icarec); this is {format}"
        );
    }
    let options = recfmt_icarec::OpenOptions {
        verify: global.strict,
        ..Default::default()
    };
    let dir = recfmt_icarec::IcarecDir::open(&args.path, &options)?;
    let state = dir
        .state_at(t)?
        .with_context(|| format!("no frame at or before t = {t} s in {}", args.path.display()))?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match args.output {
        CatOutput::Text => {
            writeln!(out, "t = {} (frame {})", state.t, state.frame)?;
            for (name, value) in &state.values {
                writeln!(out, "{name} = {value}")?;
            }
        }
        CatOutput::Ndjson => {
            let values: serde_json::Map<String, serde_json::Value> = state
                .values
                .iter()
                .map(|(n, v)| (n.clone(), serde_json::Value::String(v.to_string())))
                .collect();
            let doc = json!({"t": state.t, "frame": state.frame, "values": values});
            writeln!(out, "{doc}")?;
        }
    }
    out.flush()?;
    Ok(outcome(dir.integrity()))
}

/// `recfmt cat`.
pub fn cat(global: &GlobalArgs, args: &CatArgs) -> Result<Outcome> {
    if let Some(t) = args.at {
        return cat_at(global, args, t);
    }
    let mut reader = open(global, &args.path)?;
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
            CatOutput::Ndjson => json::row(
                &mut line,
                &schema.streams[frame.stream],
                &frame.values,
                true,
            ),
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
        printed += 1;
    }
    out.flush()?;
    report_loss(reader.integrity());
    Ok(outcome(reader.integrity()))
}

/// For a convert whose input could not be selected from: when the input opens but holds no
/// stream because it was cut before any (a FlightGear tape ending inside its header), there
/// is nothing to write, and that is a loss (exit 3), not an error. `None` otherwise.
pub fn nothing_kept(global: &GlobalArgs, input: &Path) -> Option<(Outcome, Vec<String>)> {
    let reader = open(global, input).ok()?;
    if !reader.schema().streams.is_empty() || !reader.integrity().lost_data() {
        return None;
    }
    report_loss(reader.integrity());
    Some((
        Outcome::DataLost,
        vec![format!(
            "nothing written: {} ends before any stream could be read",
            input.display()
        )],
    ))
}

pub fn report_loss(i: &Integrity) {
    if i.lost_data() {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "recfmt: warning: input data was lost");
        let _ = print_integrity(&mut err, i);
    }
}

/// `recfmt validate`: exit 0 when valid, 3 when input data was lost (truncated or corrupt; the
/// recording is INVALID too), 1 when INVALID for another reason (problems found) or on error.
pub fn validate(global: &GlobalArgs, args: &ValidateArgs) -> Result<Outcome> {
    // A schema to check against must itself be valid: refused before anything is read.
    let current = match &args.against {
        Some(schema) => Some(current_schema(global, schema)?),
        None => None,
    };
    let mut reader = open(global, &args.path)?;
    let stats =
        scan(reader.as_mut()).with_context(|| format!("reading {}", args.path.display()))?;
    let mut problems: Vec<String> = Vec::new();
    for (desc, s) in reader.schema().streams.iter().zip(&stats.streams) {
        if s.backwards > 0 {
            problems.push(format!(
                "stream {}: time goes backwards {} times",
                desc.name, s.backwards
            ));
        }
    }
    let mut notes: Vec<String> = Vec::new();
    let compatibility = match &current {
        Some((schema, schema_problems)) => {
            problems.extend(schema_problems.iter().cloned());
            Some(compatibility(&args.path, schema)?)
        }
        None => None,
    };
    if let Some(report) = &compatibility {
        problems.extend(report.errors().map(ToString::to_string));
    }
    // ICAREC digests: checked whether strict or not (a mismatch is a problem, not a warning).
    if reader.header().format == recfmt_icarec::FORMAT.info.id {
        icarec_digests(&args.path, &mut problems, &mut notes)?;
    }
    // NanoVer has its own record checker (what nanover-check-recording reports, and more).
    if reader.header().format == "nanover" {
        let report = recfmt_nanover::check(&args.path);
        for finding in report.findings() {
            if finding.severity == recfmt_nanover::Severity::Defect {
                problems.push(finding.to_string());
            } else {
                notes.push(finding.to_string());
            }
        }
    }
    let integrity = reader.integrity();
    let valid = !integrity.lost_data() && problems.is_empty();
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if args.json {
        let doc = json!({
            "path": args.path.display().to_string(),
            "format": reader.header().format,
            "version": reader.header().version,
            "valid": valid,
            "rows": stats.rows(),
            "problems": problems,
            "notes": notes,
            "integrity": integrity_json(integrity),
            "compatibility": compatibility
                .as_ref()
                .and_then(|r| serde_json::from_str::<serde_json::Value>(&r.to_json()).ok()),
        });
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{}: {} {}",
            args.path.display(),
            reader.header().format,
            if valid { "valid" } else { "INVALID" }
        )?;
        writeln!(out, "rows: {}", stats.rows())?;
        for p in &problems {
            writeln!(out, "problem: {p}")?;
        }
        for n in &notes {
            writeln!(out, "note: {n}")?;
        }
        print_integrity(&mut out, integrity)?;
        if let Some(report) = &compatibility {
            write!(out, "{report}")?;
        }
    }
    out.flush()?;
    if compatibility.as_ref().is_some_and(|r| !r.compatible) {
        anyhow::bail!(
            "{} is not compatible with {}",
            args.path.display(),
            args.against.as_deref().unwrap_or(Path::new("")).display()
        );
    }
    Ok(if integrity.lost_data() {
        Outcome::DataLost
    } else if problems.is_empty() {
        Outcome::Complete
    } else {
        Outcome::Invalid
    })
}

/// Reads the schema `validate --against` checks with, refusing one that is itself invalid:
/// what a recording's `schema.json` must pass to open (parse, types, sizes, offsets, a valid
/// `time` object) and an RFC 3339 `created_at`. A checksum that does not match the schema is
/// an error with `--strict` and a problem (INVALID) otherwise, as for a recording.
fn current_schema(
    global: &GlobalArgs,
    schema: &Path,
) -> Result<(recfmt_icarec::Schema, Vec<String>)> {
    let invalid = || {
        format!(
            "{} is not a valid schema to check against",
            schema.display()
        )
    };
    let text = std::fs::read(schema).with_context(|| format!("reading {}", schema.display()))?;
    let (current, raw) =
        recfmt_icarec::Schema::parse(&text, schema, &Default::default()).with_context(invalid)?;
    let doc = current.doc();
    if let Some(time) = &doc.time
        && let Err(what) = time.reference()
    {
        return Err(anyhow::anyhow!(
            "{}: at byte {}: expected a valid time object: {what}",
            schema.display(),
            top_level_key_offset(&text, "time")
        ))
        .with_context(invalid);
    }
    if recfmt_core::TimeReference::parse(recfmt_core::TimeSystem::Utc, Some(&doc.created_at))
        .is_err()
    {
        return Err(anyhow::anyhow!(
            "{}: at byte {}: expected created_at to be an RFC 3339 time, found {:?}",
            schema.display(),
            top_level_key_offset(&text, "created_at"),
            doc.created_at
        ))
        .with_context(invalid);
    }
    let mut problems = Vec::new();
    let computed = recfmt_icarec::schema_checksum(&raw);
    if let Some(found) = &doc.checksum
        && *found != computed
    {
        let e = recfmt_icarec::Error::Checksum {
            path: schema.to_path_buf(),
            offset: top_level_key_offset(&text, "checksum"),
            computed,
            found: found.clone(),
        };
        if global.strict {
            return Err(e).with_context(invalid);
        }
        problems.push(format!("schema to check against: {e}"));
    }
    Ok((current, problems))
}

/// Checks an ICAREC recording against a current `schema.json`.
fn compatibility(
    recording: &Path,
    current: &recfmt_icarec::Schema,
) -> Result<recfmt_icarec::CompatReport> {
    let dir = recfmt_icarec::IcarecDir::open(recording, &Default::default())?;
    Ok(dir.validate_against(current.doc()))
}

/// The checksums of an ICAREC recording, whatever `--strict` says: a `schema.json` checksum
/// that does not match the schema, and data files whose SHA-256 differs from what
/// `metadata.json` records, are problems. (Size mismatches show as a truncated or corrupt
/// read already.)
fn icarec_digests(path: &Path, problems: &mut Vec<String>, notes: &mut Vec<String>) -> Result<()> {
    use recfmt_icarec::{Error, IcarecDir, SCHEMA_FILE};
    let dir = IcarecDir::open(path, &Default::default())?;
    let schema_path = dir.file(SCHEMA_FILE);
    let computed = recfmt_icarec::schema_checksum(dir.raw_schema());
    match &dir.schema().doc().checksum {
        Some(found) if *found == computed => {}
        Some(found) => {
            let text = std::fs::read(&schema_path)
                .with_context(|| format!("reading {}", schema_path.display()))?;
            problems.push(
                Error::Checksum {
                    path: schema_path,
                    offset: top_level_key_offset(&text, "checksum"),
                    computed,
                    found: found.clone(),
                }
                .to_string(),
            );
        }
        None => notes.push(format!(
            "{}: no checksum, so the schema could not be verified",
            schema_path.display()
        )),
    }
    let Some(meta) = dir.metadata() else {
        notes.push(format!(
            "{}: no {}, so the data files could not be verified",
            dir.path().display(),
            recfmt_icarec::METADATA_FILE
        ));
        return Ok(());
    };
    for (name, digest) in &meta.files {
        let file = dir.file(name);
        let Ok(len) = std::fs::metadata(&file).map(|m| m.len()) else {
            continue;
        };
        if len != digest.bytes {
            continue;
        }
        let found = file_sha256(&file)?;
        if !found.eq_ignore_ascii_case(&digest.sha256) {
            problems.push(
                Error::Digest {
                    path: file,
                    offset: 0,
                    expected: format!("sha256 {}", digest.sha256),
                    found: format!("sha256 {found}"),
                }
                .to_string(),
            );
        }
    }
    Ok(())
}

/// Lowercase hex SHA-256 of a file, read in blocks.
fn file_sha256(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut file = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file
            .read(&mut buf)
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The byte offset of the opening quote of member `key` of the top-level JSON object in
/// `text` (already parsed, so valid JSON), or 0 when it is not there.
fn top_level_key_offset(text: &[u8], key: &str) -> u64 {
    let mut depth = 0usize;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i;
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    i += if text[i] == b'\\' { 2 } else { 1 };
                }
                let name = text.get(start + 1..i).unwrap_or_default();
                let rest = text.get(i + 1..).unwrap_or_default();
                let is_key = rest
                    .iter()
                    .find(|b| !b.is_ascii_whitespace())
                    .is_some_and(|&b| b == b':');
                if depth == 1 && is_key && name == key.as_bytes() {
                    return start as u64;
                }
            }
            _ => {}
        }
        i += 1;
    }
    0
}

/// `recfmt formats`.
pub fn formats() -> Result<Outcome> {
    for f in recfmt::default_registry().formats() {
        let write = if f.create.is_some() {
            "read/write"
        } else {
            "read"
        };
        println!("{:<10} {write:<10} {}", f.info.id, f.info.name);
    }
    Ok(Outcome::Complete)
}

/// `recfmt carla info|collisions|blocked`.
pub fn carla(global: &GlobalArgs, command: &crate::args::CarlaCommand) -> Result<Outcome> {
    use crate::args::CarlaCommand;
    use recfmt_carla::query;
    if let CarlaCommand::Map(args) = command {
        return crate::plot::carla_map(global, args);
    }
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let summary = match command {
        CarlaCommand::Info {
            path,
            all,
            json: true,
        } => {
            let _ = all;
            serde_json::to_writer_pretty(&mut out, &query::file_info_data(path)?)?;
            writeln!(out)?;
            None
        }
        CarlaCommand::Info {
            path,
            all,
            json: false,
        } => Some(query::file_info(path, *all, &mut out)?),
        CarlaCommand::Collisions {
            path,
            type1,
            type2,
            json: true,
        } => {
            serde_json::to_writer_pretty(&mut out, &query::collisions_data(path, *type1, *type2)?)?;
            writeln!(out)?;
            None
        }
        CarlaCommand::Collisions {
            path,
            type1,
            type2,
            json: false,
        } => Some(query::collisions(path, *type1, *type2, &mut out)?),
        CarlaCommand::Blocked {
            path,
            min_time,
            min_distance,
            json: true,
        } => {
            serde_json::to_writer_pretty(
                &mut out,
                &query::actors_blocked_data(path, *min_time, *min_distance)?,
            )?;
            writeln!(out)?;
            None
        }
        CarlaCommand::Blocked {
            path,
            min_time,
            min_distance,
            json: false,
        } => Some(query::actors_blocked(
            path,
            *min_time,
            *min_distance,
            &mut out,
        )?),
        CarlaCommand::Map(_) => None,
    };
    out.flush()?;
    if summary.is_some_and(|s| !s.recorder) {
        anyhow::bail!("not a CARLA recorder file");
    }
    Ok(Outcome::Complete)
}

/// `recfmt recover` (alias `repair`).
pub fn recover(global: &GlobalArgs, args: &RepairArgs) -> Result<Outcome> {
    let format = format_of(global, &args.path)?;
    if format != "nanover" {
        anyhow::bail!(
            "recover is available for NanoVer recordings; for {format}, `recfmt convert --to {format}` keeps every complete record"
        );
    }
    let summary = recfmt_nanover::repair(&args.path, &args.output)?;
    eprintln!(
        "wrote {}: {} of {} records kept, {} dropped ({} bytes), {} timestamps fixed, {} resets restored",
        args.output.display(),
        summary.records_written,
        summary.records_in,
        summary.records_dropped,
        summary.bytes_dropped,
        summary.timestamps_fixed,
        summary.resets_restored
    );
    let changed = summary.records_dropped > 0
        || summary.bytes_dropped > 0
        || summary.timestamps_fixed > 0
        || summary.resets_restored > 0;
    Ok(if changed {
        Outcome::DataLost
    } else {
        Outcome::Complete
    })
}
