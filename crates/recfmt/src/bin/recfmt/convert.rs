//! `recfmt convert`: any recording into tables, one per stream or one merged, with selection,
//! time ranges and provenance; several inputs in parallel.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use recfmt_core::{RecordingReader, TimeSystem};
use recfmt_export::{
    Alignment, CsvOptions, ExportOptions, MergedReader, ParquetCompression, Pattern, Pipeline,
    SelectedReader, Selection, TableFormat, TimeBound, TimeRange,
};
use sha2::{Digest, Sha256};

use crate::Outcome;
use crate::args::{Compression, ConvertArgs, ConvertTo, GlobalArgs, TimeColumn};
use crate::commands::{open, outcome, report_loss};

/// Union merges above this many rows get a warning first.
const UNION_WARN_ROWS: u64 = 10_000_000;

fn patterns(texts: &[String]) -> Result<Vec<Pattern>> {
    Ok(texts
        .iter()
        .map(|t| Pattern::parse(t))
        .collect::<Result<_, _>>()?)
}

fn pipeline(args: &ConvertArgs) -> Result<Pipeline> {
    Ok(Pipeline {
        selection: Selection {
            streams: patterns(&args.streams)?,
            exclude_streams: patterns(&args.exclude_streams)?,
            signals: patterns(&args.signals)?,
            exclude_signals: patterns(&args.exclude_signals)?,
        },
        range: TimeRange {
            start: args.start.as_deref().map(TimeBound::parse).transpose()?,
            end: args.end.as_deref().map(TimeBound::parse).transpose()?,
            carry_last: args.carry_last,
        },
        upcast_f64: args.upcast.is_some(),
        absolute_time: args.time_column.map(|t| match t {
            TimeColumn::Utc => TimeSystem::Utc,
            TimeColumn::Tai => TimeSystem::Tai,
            TimeColumn::Gps => TimeSystem::Gps,
        }),
    })
}

fn delimiter(text: &str) -> Result<u8> {
    match text {
        "tab" | "\\t" => Ok(b'\t'),
        t if t.len() == 1 && t.is_ascii() => Ok(t.as_bytes()[0]),
        t => bail!("--delimiter must be one ASCII character or `tab`, not {t:?}"),
    }
}

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

/// SHA-256 of a file, or for a directory of the list of its files' relative paths and digests
/// (`<path>\0<hex>\n`, sorted), so a recording folder has one stable digest.
pub fn source_sha256(path: &Path) -> Result<String> {
    fn file_digest(path: &Path) -> Result<String> {
        let mut file = std::fs::File::open(path).with_context(|| format!("{}", path.display()))?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        Ok(hex(&hasher.finalize()))
    }
    if !path.is_dir() {
        return file_digest(path);
    }
    let mut files = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let p = entry?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut manifest = Sha256::new();
    for f in files {
        let relative = f
            .strip_prefix(path)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        manifest.update(relative.as_bytes());
        manifest.update(b"\0");
        manifest.update(file_digest(&f)?.as_bytes());
        manifest.update(b"\n");
    }
    Ok(hex(&manifest.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn progress_bar(total: Option<u64>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// What converting one input gave: its outcome and the lines to report.
type Converted = Result<(Outcome, Vec<String>)>;

fn is_parquet(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet") || e.eq_ignore_ascii_case("pq"))
}

/// Reads a trajectories table from Parquet batch by batch: the columns of the CSV form
/// (`time,id,blueprint,x,y,z,roll,pitch,yaw`, optional `uid` and `role_name`), any numeric type.
fn for_each_parquet_track(
    path: &Path,
    push: &mut dyn FnMut(recfmt_carla::tracks::TrackRow) -> Result<()>,
) -> Result<()> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, UInt32Type};
    use arrow_array::{Array, RecordBatch};
    use arrow_cast::cast;
    use arrow_schema::DataType;
    let file = std::fs::File::open(path).with_context(|| path.display().to_string())?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)?
        .with_batch_size(8192)
        .build()?;
    let mut row_number = 0u64;
    for batch in reader {
        let batch: RecordBatch = batch?;
        let column = |name: &str, to: &DataType| -> Result<Option<arrow_array::ArrayRef>> {
            match batch.schema().index_of(name) {
                Ok(i) => Ok(Some(cast(batch.column(i), to).with_context(|| {
                    format!("{}: column {name} cannot be read as {to}", path.display())
                })?)),
                Err(_) => Ok(None),
            }
        };
        let need = |name: &str, to: &DataType| -> Result<arrow_array::ArrayRef> {
            column(name, to)?.with_context(|| {
                format!(
                    "{}: no column {name} (expected time,id,blueprint,x,y,z,roll,pitch,yaw)",
                    path.display()
                )
            })
        };
        let f = |name| need(name, &DataType::Float64);
        let (time, x, y, z, roll, pitch, yaw) = (
            f("time")?,
            f("x")?,
            f("y")?,
            f("z")?,
            f("roll")?,
            f("pitch")?,
            f("yaw")?,
        );
        let id = need("id", &DataType::UInt32)?;
        let blueprint = need("blueprint", &DataType::Utf8)?;
        let uid = column("uid", &DataType::UInt32)?;
        let role = column("role_name", &DataType::Utf8)?;
        let f64s = |a: &arrow_array::ArrayRef| a.as_primitive::<Float64Type>().clone();
        let (time, x, y, z, roll, pitch, yaw) = (
            f64s(&time),
            f64s(&x),
            f64s(&y),
            f64s(&z),
            f64s(&roll),
            f64s(&pitch),
            f64s(&yaw),
        );
        let id = id.as_primitive::<UInt32Type>().clone();
        let blueprint = blueprint.as_string::<i32>().clone();
        for i in 0..batch.num_rows() {
            row_number += 1;
            let required = [
                &time as &dyn Array,
                &id,
                &blueprint,
                &x,
                &y,
                &z,
                &roll,
                &pitch,
                &yaw,
            ];
            if required.iter().any(|a| a.is_null(i)) {
                bail!(
                    "{}: row {row_number}: a required value is missing",
                    path.display()
                );
            }
            push(recfmt_carla::tracks::TrackRow {
                time: time.value(i),
                id: id.value(i),
                blueprint: blueprint.value(i).to_string(),
                x: x.value(i),
                y: y.value(i),
                z: z.value(i),
                roll: roll.value(i),
                pitch: pitch.value(i),
                yaw: yaw.value(i),
                uid: uid.as_ref().map_or(0, |u| {
                    let u = u.as_primitive::<UInt32Type>();
                    if u.is_null(i) { 0 } else { u.value(i) }
                }),
                role_name: role.as_ref().and_then(|r| {
                    let r = r.as_string::<i32>();
                    (!r.is_null(i)).then(|| r.value(i).to_string())
                }),
            })
            .with_context(|| format!("{}: row {row_number}", path.display()))?;
        }
    }
    Ok(())
}

/// Builds a CARLA log from a trajectories table (CSV with `time,id,blueprint,x,y,z,roll,pitch,yaw`;
/// see `recfmt_carla::tracks`), written under a temporary name.
fn tracks_to_carla(
    global: &GlobalArgs,
    args: &ConvertArgs,
    input: &Path,
    output: &Path,
) -> Result<(Outcome, Vec<String>)> {
    use recfmt_carla::tracks::{TrackLogWriter, TrackOptions, read_tracks_csv};
    let build = global.carla_build.as_deref().unwrap_or("0.9.15");
    let flavour: recfmt_carla::Flavour = build
        .parse()
        .map_err(|e| anyhow::anyhow!("--carla-build {build}: {e}"))?;
    let mut options = TrackOptions::new(flavour);
    options.map.clone_from(&args.map);
    let name = output.file_name().context("the output needs a file name")?;
    let temp = output.with_file_name(format!(".{}.partial", name.to_string_lossy()));
    let result = (|| -> Result<recfmt_carla::tracks::TrackSummary> {
        let file = std::io::BufWriter::new(std::fs::File::create(&temp)?);
        let mut writer = TrackLogWriter::new(file, &options)?;
        if is_parquet(input) {
            for_each_parquet_track(input, &mut |row| Ok(writer.push(row)?))?;
        } else {
            for row in read_tracks_csv(input)? {
                writer.push(row?)?;
            }
        }
        let (file, summary) = writer.finish()?;
        file.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&temp, output)?;
        Ok(summary)
    })();
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            return Err(e.context(format!("building a CARLA log from {}", input.display())));
        }
    };
    Ok((
        Outcome::Complete,
        vec![format!(
            "wrote {} ({} frames, {} actors, from {} rows)",
            output.display(),
            summary.frames,
            summary.actors,
            summary.rows
        )],
    ))
}

/// Converts one input into `output`; returns what happened and the lines to report.
fn convert_one(
    global: &GlobalArgs,
    args: &ConvertArgs,
    input: &Path,
    output: &Path,
) -> Result<(Outcome, Vec<String>)> {
    if args.to == ConvertTo::Carla
        && (input
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
            || is_parquet(input))
    {
        return tracks_to_carla(global, args, input, output);
    }
    let pipeline = pipeline(args)?;
    let open_selected = || -> recfmt_core::Result<Box<dyn RecordingReader>> {
        let reader = open(global, input).map_err(|e| recfmt_core::Error::invalid(e.to_string()))?;
        Ok(Box::new(SelectedReader::new(reader, &pipeline)?))
    };
    let mut reader: Box<dyn RecordingReader> = match open_selected() {
        Ok(reader) => reader,
        Err(e) => return crate::commands::nothing_kept(global, input).ok_or_else(|| e.into()),
    };
    let mut notes = Vec::new();

    if let Some(rule) = &args.merge {
        let alignment = Alignment::parse(rule)?;
        if alignment == Alignment::Union {
            let counts = recfmt_export::count_rows(reader.as_mut())?;
            let estimate: u64 = counts.iter().sum();
            if args.max_rows.is_some_and(|max| estimate > max) {
                bail!(
                    "a union of timestamps could reach {estimate} rows, more than --max-rows; use --merge asof:STREAM or raster:STEP"
                );
            }
            if estimate > UNION_WARN_ROWS {
                notes.push(format!(
                    "warning: the union of timestamps can reach {estimate} rows (the sum of all streams); --merge asof:STREAM or raster:STEP keeps it smaller"
                ));
            }
        }
        let mut open_fn = open_selected;
        reader = Box::new(MergedReader::with_max_rows(
            &mut open_fn,
            alignment,
            args.max_rows,
        )?);
    }

    if let Some(format) = args.to.recording_format() {
        return convert_to_recording(args, input, output, format, reader, notes);
    }
    if matches!(args.to, ConvertTo::Kml | ConvertTo::Gpx) {
        return convert_to_track(args, output, reader, notes);
    }
    if args.to == ConvertTo::Mcap {
        return crate::mcap::convert_to_mcap(args, input, output, reader, notes);
    }
    if reader.header().format == "nanover" && is_plain(args) {
        // NanoVer has layouts of its own: the zip, and HDF5 with positions as
        // [frames x particles x 3] per session (the generic exporter has no list columns).
        match args.to {
            ConvertTo::NanoverZip => {
                let paths = recfmt_nanover::RecordingPaths::resolve(input);
                let timeline = recfmt_nanover::Timeline::open(&paths, &Default::default())?;
                let summary = recfmt_nanover::write_zip_events(timeline, output)?;
                notes.push(format!(
                    "wrote {} ({} frames, {} state updates)",
                    output.display(),
                    summary.frames,
                    summary.states
                ));
                return Ok((outcome(reader.integrity()), notes));
            }
            ConvertTo::Hdf5 => {
                let summary = recfmt_nanover::hdf5::write_hdf5(input, output, &Default::default())?;
                notes.extend(summary.notes.iter().map(|n| format!("note: {n}")));
                notes.push(format!(
                    "wrote {} ({} sessions, {} state rows)",
                    output.display(),
                    summary.sessions.len(),
                    summary.state_rows
                ));
                report_loss(&summary.integrity);
                return Ok((outcome(&summary.integrity), notes));
            }
            _ => {}
        }
    }
    if args.to == ConvertTo::NanoverZip {
        bail!(
            "--to nanover-zip converts NanoVer recordings (.traj/.state); this is {}",
            reader.header().format
        );
    }

    // The input's digest is computed on a thread of its own while the export decodes.
    let digest = {
        let input = input.to_path_buf();
        recfmt_export::PendingMetadata::spawn(move || {
            let sha256 = source_sha256(&input).map_err(|e| format!("{e:#}"))?;
            Ok([("source.sha256".to_owned(), sha256)].into_iter().collect())
        })
    };
    let mut options = ExportOptions::new(match args.to {
        ConvertTo::Parquet => TableFormat::Parquet,
        ConvertTo::Csv => TableFormat::Csv,
        ConvertTo::Arrow => TableFormat::Arrow,
        ConvertTo::Ndjson => TableFormat::Ndjson,
        // HDF5 is written by its own writer below; the table options still apply.
        ConvertTo::Hdf5 => TableFormat::Parquet,
        other => bail!("--to {other:?} is not a table format"),
    });
    options.batch_rows = usize::try_from(args.batch_rows).unwrap_or(usize::MAX);
    options.compression = match args.compression {
        Compression::Zstd => ParquetCompression::Zstd,
        Compression::Snappy => ParquetCompression::Snappy,
        Compression::None => ParquetCompression::None,
    };
    options.csv = CsvOptions {
        delimiter: delimiter(&args.delimiter)?,
        units_row: args.units_row,
    };
    options.pending_metadata = Some(digest.clone());
    let meta = &mut options.metadata;
    meta.insert(
        "source.file".into(),
        input.file_name().map_or_else(
            || input.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
    );
    meta.insert("source.path".into(), input.display().to_string());
    meta.insert("source.format".into(), reader.header().format.to_string());
    meta.insert("source.version".into(), reader.header().version.clone());
    meta.insert("recfmt.recfmt_version".into(), recfmt::VERSION.into());
    if args.start.is_some() || args.end.is_some() {
        let range = serde_json::json!({"start": args.start, "end": args.end, "carry_last": args.carry_last});
        meta.insert("recfmt.time_range".into(), range.to_string());
    }

    let bar = progress_bar(reader.progress().1);
    let mut on_progress = |done, total: Option<u64>| {
        if let Some(total) = total {
            bar.set_length(total);
        }
        bar.set_position(done);
    };
    let report = if args.to == ConvertTo::Hdf5 {
        for o in recfmt_export::hdf5::omitted_columns(&reader.schema().streams) {
            notes.push(format!(
                "note: HDF5 has no column for {}.{} ({}); it is listed in the group's recfmt.omitted_columns",
                o.stream, o.signal, o.reason
            ));
        }
        let string_width = match args.string_width {
            Some(width) => width,
            None => longest_text(global, args, input)?,
        };
        let mut metadata = options.metadata.clone();
        metadata.extend(digest.wait()?.clone());
        let hdf5 = recfmt_export::hdf5::Hdf5Options {
            string_width,
            metadata,
            skip_omitted_values: true,
            ..Default::default()
        };
        recfmt_export::export_hdf5(reader.as_mut(), output, &hdf5, options.batch_rows, &mut on_progress)
    } else {
        recfmt_export::export_tables(reader.as_mut(), output, &options, &mut on_progress)
    }
    .with_context(|| format!("converting {} into {}", input.display(), output.display()))?;
    bar.finish_and_clear();
    if args.to == ConvertTo::Hdf5 {
        let rows: u64 = report.outputs.iter().map(|o| o.rows).sum();
        notes.push(format!(
            "wrote {} ({} streams, {rows} rows)",
            output.display(),
            report.outputs.len()
        ));
    } else {
        for o in &report.outputs {
            notes.push(format!("wrote {} ({} rows)", o.path.display(), o.rows));
        }
    }
    if report.outputs.is_empty() {
        notes.push(format!(
            "{}: no rows selected, nothing written",
            input.display()
        ));
    }
    Ok((outcome(reader.integrity()), notes)).inspect(|_| report_loss(reader.integrity()))
}

/// The byte length of the longest text value the conversion will write (at least 1), read in a
/// first streaming pass, so HDF5's fixed-width strings fit without cutting anything.
fn longest_text(global: &GlobalArgs, args: &ConvertArgs, input: &Path) -> Result<u32> {
    let pipeline = pipeline(args)?;
    let reader = open(global, input)?;
    let mut reader = SelectedReader::new(reader, &pipeline)?;
    let texts: Vec<Vec<usize>> = reader
        .schema()
        .streams
        .iter()
        .map(|s| {
            s.signals
                .iter()
                .enumerate()
                .filter(|(_, sig)| sig.dtype == recfmt_core::DType::Str)
                .map(|(i, _)| i)
                .collect()
        })
        .collect();
    if texts.iter().all(Vec::is_empty) {
        return Ok(1);
    }
    let mut longest = 1usize;
    let mut frame = recfmt_core::FrameBuf::default();
    while reader.read_frame(&mut frame)? {
        for &i in &texts[frame.stream] {
            if let Some(recfmt_core::Value::Str(text)) = frame.values.get(i) {
                longest = longest.max(text.len());
            }
        }
    }
    u32::try_from(longest).context("a text value longer than 4 GiB")
}

/// Writes the flight tracks of a recording with position signals as KML or GPX. Times are
/// absolute when the recording has an epoch, else replay seconds (see `recfmt_fgtape::track`).
fn convert_to_track(
    args: &ConvertArgs,
    output: &Path,
    mut reader: Box<dyn RecordingReader>,
    mut notes: Vec<String>,
) -> Result<(Outcome, Vec<String>)> {
    use recfmt_fgtape::track::{TrackFormat, TrackOptions, Tracks};
    let format = if args.to == ConvertTo::Kml {
        TrackFormat::Kml
    } else {
        TrackFormat::Gpx
    };
    let epoch = reader.header().time.and_then(|t| t.epoch);
    let tracks = Tracks::from_reader(&mut reader)?;
    if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut file = recfmt_core::AtomicFile::create(output)?;
    format.write(
        &tracks,
        &mut file,
        &TrackOptions {
            epoch,
            ..Default::default()
        },
    )?;
    file.commit()?;
    let points: usize = tracks.iter().map(|t| t.points.len()).sum();
    notes.push(format!(
        "wrote {} ({} tracks, {points} points)",
        output.display(),
        tracks.iter().count()
    ));
    report_loss(reader.integrity());
    Ok((outcome(reader.integrity()), notes))
}

/// True when the command changes nothing about the rows (no selection, range, merge, upcast or
/// extra column), so a conversion to the source's own format can be a faithful copy.
fn is_plain(args: &ConvertArgs) -> bool {
    args.streams.is_empty()
        && args.exclude_streams.is_empty()
        && args.signals.is_empty()
        && args.exclude_signals.is_empty()
        && args.start.is_none()
        && args.end.is_none()
        && args.merge.is_none()
        && args.upcast.is_none()
        && args.time_column.is_none()
}

/// Converts into a recording format: a faithful copy when source and target formats agree and
/// nothing is selected, else the rows through the target's generic writer, which refuses
/// (listing what does not fit) recordings it cannot hold.
fn convert_to_recording(
    args: &ConvertArgs,
    input: &Path,
    output: &Path,
    format: &str,
    mut reader: Box<dyn RecordingReader>,
    mut notes: Vec<String>,
) -> Result<(Outcome, Vec<String>)> {
    if is_plain(args)
        && reader.header().format == format
        && let Some(copied) = recfmt::copy_faithfully(format, input, output)?
    {
        notes.push(format!(
            "copied {} to {} record for record",
            input.display(),
            output.display()
        ));
        report_loss(&copied);
        return Ok((outcome(&copied), notes));
    }
    let registry = recfmt::default_registry();
    let descriptor = registry
        .by_id(format)
        .with_context(|| format!("this build of recfmt has no {format} support"))?;
    let create = descriptor.create.with_context(|| {
        format!(
            "recfmt cannot write {} recordings from other formats yet",
            descriptor.info.name
        )
    })?;
    let mut writer = create(output)?;
    let streams = reader.schema().streams.len();
    writer
        .write_header(reader.header(), reader.schema())
        .with_context(|| {
            let hint = if streams > 1 {
                "\n  hint: keep one stream with --stream NAME, or merge them into one with --merge asof:STREAM"
            } else {
                ""
            };
            format!("converting {} to {format}{hint}", input.display())
        })?;
    let mut frame = recfmt_core::FrameBuf::default();
    let mut rows = 0u64;
    while reader.read_frame(&mut frame)? {
        writer.write_frame(&frame)?;
        rows += 1;
    }
    writer.finish()?;
    notes.push(format!("wrote {} ({rows} rows)", output.display()));
    report_loss(reader.integrity());
    Ok((outcome(reader.integrity()), notes))
}

/// `recfmt convert`.
pub fn convert(global: &GlobalArgs, args: &ConvertArgs) -> Result<Outcome> {
    let inputs = expand_inputs(&args.inputs)?;
    if inputs.len() == 1 {
        let (outcome, notes) = convert_one(global, args, &inputs[0], &args.output)?;
        let mut err = std::io::stderr().lock();
        for n in notes {
            writeln!(err, "{n}")?;
        }
        return Ok(outcome);
    }
    // One output directory per input, named after it; refuse names that collide.
    let mut targets = Vec::new();
    for input in &inputs {
        let name = input
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "input".into());
        let target = if let Some(ext) = match args.to {
            ConvertTo::Hdf5 => Some("h5"),
            ConvertTo::Kml => Some("kml"),
            ConvertTo::Gpx => Some("gpx"),
            ConvertTo::Mcap => Some("mcap"),
            _ => None,
        } {
            args.output.join(format!("{name}.{ext}"))
        } else {
            args.output.join(name)
        };
        if targets.contains(&target) {
            bail!(
                "two inputs would both write {}: convert them separately",
                target.display()
            );
        }
        targets.push(target);
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .clamp(1, inputs.len());
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<Converted>>> =
        Mutex::new((0..inputs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap_or_else(|e| e.into_inner());
                        let i = *n;
                        *n += 1;
                        i
                    };
                    let Some(input) = inputs.get(i) else { break };
                    let result = convert_one(global, args, input, &targets[i]);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                }
            });
        }
    });
    let mut lost = false;
    let mut failed = 0;
    let mut err = std::io::stderr().lock();
    for (input, result) in inputs
        .iter()
        .zip(results.into_inner().unwrap_or_else(|e| e.into_inner()))
    {
        match result {
            Some(Ok((o, notes))) => {
                lost |= o == Outcome::DataLost;
                for n in notes {
                    writeln!(err, "{n}")?;
                }
            }
            Some(Err(e)) => {
                failed += 1;
                writeln!(err, "recfmt: error: {}: {e:#}", input.display())?;
            }
            None => {}
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
