//! `convert`: any recording into tables (one per stream or one merged), HDF5, another
//! recording format, or an output a format writes in its own way; with selection, time ranges
//! and provenance; several inputs in parallel.
//!
//! The target is looked up, never matched: [`targets`] lists the generic table outputs, every
//! registered format that can be written, and every format's own outputs.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use recfmt_core::{
    FormatDescriptor, OutputSource, RecordingReader, Registry, Replace, SpecialOutput, TimeSystem,
    WriteOptions,
};
use recfmt_export::{
    Alignment, CsvOptions, ExportOptions, MergedReader, ParquetCompression, Pattern, Pipeline,
    SelectedReader, Selection, TableFormat, TimeBound, TimeRange,
};
use serde::Serialize;

use crate::error::Context;

mod digest;
mod tables;

use crate::{Error, IntegrityReport, OpenOptions, Outcome, Result};
use digest::sha256_of;
pub use digest::source_sha256;
use tables::to_tables;

/// Union merges above this many rows get a warning first.
const UNION_WARN_ROWS: u64 = 10_000_000;

/// What to convert into, and how.
#[derive(Debug, Clone)]
pub struct ConvertOptions {
    /// How to open the inputs.
    pub open: OpenOptions,
    /// A target id from [`targets`]: `parquet`, `csv`, `arrow`, `ndjson`, `hdf5`, a format id
    /// (`usvlog`, `carla`, …) or a format's own output (`kml`, `nanover-zip`, …).
    pub target: String,
    /// Parquet compression.
    pub compression: ParquetCompression,
    /// Rows per record batch, at most; see [`recfmt_export::ExportOptions::batch_rows`].
    pub batch_rows: usize,
    /// Parquet: rows per row group, at most (default 1 Mi, as pyarrow); see
    /// [`recfmt_export::ExportOptions::row_group_rows`].
    pub row_group_rows: usize,
    /// Parquet: bytes of encoded pages per row group, at most (default 64 MiB); see
    /// [`recfmt_export::ExportOptions::row_group_bytes`].
    pub row_group_bytes: usize,
    /// Parquet: bytes of finished pages all row groups in progress keep in memory (default
    /// 8 MiB); the rest waits in a temporary file beside the output. See
    /// [`recfmt_export::ExportOptions::row_group_memory`].
    pub row_group_memory: usize,
    /// Parquet: float columns in the `BYTE_STREAM_SPLIT` encoding (smaller files on smooth
    /// signals; older readers cannot read it). See
    /// [`recfmt_export::ExportOptions::byte_stream_split`].
    pub byte_stream_split: bool,
    /// CSV field delimiter: one ASCII character, or `tab`.
    pub delimiter: String,
    /// CSV: a second header row with units.
    pub units_row: bool,
    /// Keep streams matching these names, globs or `re:` regexes.
    pub streams: Vec<String>,
    /// Drop streams matching these.
    pub exclude_streams: Vec<String>,
    /// Keep signals matching these (`name` or `stream.name`).
    pub signals: Vec<String>,
    /// Drop signals matching these.
    pub exclude_signals: Vec<String>,
    /// First time kept (`60s`, `+12.5s`, RFC 3339).
    pub start: Option<String>,
    /// First time no longer kept.
    pub end: Option<String>,
    /// Also keep each stream's last row before `start`.
    pub carry_last: bool,
    /// One merged table: `union`, `asof:STREAM` or `raster:STEP`.
    pub merge: Option<String>,
    /// With a union merge, refuse when it could exceed this many rows.
    pub max_rows: Option<u64>,
    /// Widen float32 signals to float64.
    pub upcast_f64: bool,
    /// Add an absolute time column in this system.
    pub time_column: Option<TimeSystem>,
    /// HDF5: bytes per fixed-width string (default: the longest text, found by a first pass).
    pub string_width: Option<u32>,
    /// Inputs converted at once by [`convert_many`] (default: the number of cores).
    pub jobs: Option<usize>,
    /// Parquet only: write a Hive-partitioned dataset into the output folder,
    /// `<out>/<stream>/source=<recording>/part-N.parquet` with a `source` column, so a fleet
    /// of recordings reads as one table per stream (see [`recfmt_export::export_partitioned`]).
    pub partition: bool,
    /// Partitioned datasets: the recording's name in `source=<name>` and the `source` column
    /// (default: the input's name without its last extension, [`recfmt_export::source_name`]).
    pub source: Option<String>,
    /// Replace outputs that already exist (regular files only; the command line's `--force`).
    /// Without it an existing output is refused before the input is read.
    pub force: bool,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            open: OpenOptions::default(),
            target: "parquet".into(),
            compression: ParquetCompression::Zstd,
            batch_rows: 65_536,
            row_group_rows: ExportOptions::DEFAULT_ROW_GROUP_ROWS,
            row_group_bytes: ExportOptions::DEFAULT_ROW_GROUP_BYTES,
            row_group_memory: ExportOptions::DEFAULT_ROW_GROUP_MEMORY,
            byte_stream_split: false,
            delimiter: ",".into(),
            units_row: false,
            streams: Vec::new(),
            exclude_streams: Vec::new(),
            signals: Vec::new(),
            exclude_signals: Vec::new(),
            start: None,
            end: None,
            carry_last: false,
            merge: None,
            max_rows: None,
            upcast_f64: false,
            time_column: None,
            string_width: None,
            jobs: None,
            partition: false,
            source: None,
            force: false,
        }
    }
}

impl ConvertOptions {
    /// True when nothing about the rows changes (no selection, range, merge, upcast or extra
    /// column), so a conversion to the source's own format can be a faithful copy.
    pub fn is_plain(&self) -> bool {
        self.streams.is_empty()
            && self.exclude_streams.is_empty()
            && self.signals.is_empty()
            && self.exclude_signals.is_empty()
            && self.start.is_none()
            && self.end.is_none()
            && self.merge.is_none()
            && !self.upcast_f64
            && self.time_column.is_none()
    }

    /// Whether outputs may be replaced.
    fn replace(&self) -> Replace {
        Replace::forced(self.force)
    }

    /// The options for writing `format`: replacing as asked, and the format options meant
    /// for it ([`Registry::write_options`]).
    pub fn write_options_for(
        &self,
        registry: &Registry,
        format: &FormatDescriptor,
    ) -> Result<WriteOptions> {
        Ok(registry.write_options(format, self.replace(), &self.open.format_options)?)
    }

    /// The write options for `format`'s own output `output`: the format's, and the output's
    /// own (`mat.version`), both checked.
    pub fn output_write_options_for(
        &self,
        registry: &Registry,
        format: &FormatDescriptor,
        output: &SpecialOutput,
    ) -> Result<WriteOptions> {
        let mut options = self.write_options_for(registry, format)?;
        // An output named as its format (CARLA's `carla` from a table) takes the format's
        // own options (`carla.map`); only outputs with options of their own add any.
        if output.options.is_empty() || output.id.eq_ignore_ascii_case(format.info.id) {
            return Ok(options);
        }
        let own =
            registry.output_write_options(output, self.replace(), &self.open.format_options)?;
        for (key, value) in own.format_options.pairs() {
            options.format_options.push(key, value);
        }
        Ok(options)
    }

    fn pipeline(&self) -> Result<Pipeline> {
        fn patterns(texts: &[String]) -> Result<Vec<Pattern>> {
            Ok(texts
                .iter()
                .map(|t| Pattern::parse(t))
                .collect::<Result<_, _>>()?)
        }
        Ok(Pipeline {
            selection: Selection {
                streams: patterns(&self.streams)?,
                exclude_streams: patterns(&self.exclude_streams)?,
                signals: patterns(&self.signals)?,
                exclude_signals: patterns(&self.exclude_signals)?,
            },
            range: TimeRange {
                start: self.start.as_deref().map(TimeBound::parse).transpose()?,
                end: self.end.as_deref().map(TimeBound::parse).transpose()?,
                carry_last: self.carry_last,
            },
            upcast_f64: self.upcast_f64,
            absolute_time: self.time_column,
        })
    }
}

/// A kind of `convert` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// One table file per stream (or one merged) in an output directory.
    Tables,
    /// One HDF5 file.
    Hdf5,
    /// One MCAP file for Foxglove and Lichtblick.
    Mcap,
    /// A recording of a registered format.
    Recording,
    /// An output a format writes in its own way.
    Special,
}

/// One `convert` target.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    /// The id `--to` takes.
    pub id: &'static str,
    /// What it writes.
    pub help: String,
    /// What kind of output it is.
    pub kind: TargetKind,
    /// The extension of its single output file, if it writes one.
    pub file_extension: Option<&'static str>,
}

/// The generic table targets this build has.
fn table_targets() -> Vec<(&'static str, &'static str, TableFormat)> {
    let all = [
        (
            "parquet",
            "Apache Parquet, one file per stream",
            TableFormat::Parquet,
            cfg!(feature = "export-parquet"),
        ),
        (
            "csv",
            "CSV with a header row, one file per stream",
            TableFormat::Csv,
            cfg!(feature = "export-csv"),
        ),
        (
            "arrow",
            "Arrow IPC file (Feather v2), one file per stream",
            TableFormat::Arrow,
            cfg!(feature = "export-arrow"),
        ),
        (
            "ndjson",
            "newline-delimited JSON, one file per stream",
            TableFormat::Ndjson,
            cfg!(feature = "export-ndjson"),
        ),
    ];
    all.into_iter()
        .filter(|t| t.3)
        .map(|(id, help, format, _)| (id, help, format))
        .collect()
}

/// Every target `convert` can write with `registry`: the table formats, HDF5, every format
/// that can be written, and the formats' own outputs (each id once).
pub fn targets(registry: &Registry) -> Vec<Target> {
    let mut out: Vec<Target> = table_targets()
        .into_iter()
        .map(|(id, help, _)| Target {
            id,
            help: help.into(),
            kind: TargetKind::Tables,
            file_extension: None,
        })
        .collect();
    #[cfg(feature = "export-hdf5")]
    out.push(Target {
        id: "hdf5",
        help: "HDF5, one file (-o FILE.h5): a group per stream, a dataset per column".into(),
        kind: TargetKind::Hdf5,
        file_extension: Some("h5"),
    });
    #[cfg(feature = "export-mcap")]
    out.push(Target {
        id: "mcap",
        help: "MCAP for Foxglove and Lichtblick, one file (-o FILE.mcap): a channel per stream, JSON messages with a JSON Schema".into(),
        kind: TargetKind::Mcap,
        file_extension: Some("mcap"),
    });
    let mut specials = Vec::new();
    for f in registry.formats() {
        if f.is_target() {
            out.push(Target {
                id: f.info.id,
                help: format!("a {} recording", f.info.name),
                kind: TargetKind::Recording,
                file_extension: None,
            });
        }
        for o in f.outputs {
            specials.push(Target {
                id: o.id,
                help: o.help.into(),
                kind: TargetKind::Special,
                file_extension: o.file_extension,
            });
        }
    }
    for s in specials {
        if !out.iter().any(|t| t.id == s.id) {
            out.push(s);
        }
    }
    out
}

/// One file a conversion wrote.
#[derive(Debug, Clone, Serialize)]
pub struct OutputFile {
    /// Its path.
    pub path: PathBuf,
    /// The stream it holds (none for a whole recording). An HDF5 file, one group per stream,
    /// is listed once for each of its streams, with that stream's rows.
    pub stream: Option<String>,
    /// Rows written (0 when not counted).
    pub rows: u64,
}

/// What converting one input did.
#[derive(Debug, Clone, Serialize)]
pub struct ConvertReport {
    /// The input.
    pub input: PathBuf,
    /// The output (directory or file).
    pub output: PathBuf,
    /// Complete, or input data lost.
    pub outcome: Outcome,
    /// Lines for people, in order (`wrote …`, `note: …`, `warning: …`).
    pub notes: Vec<String>,
    /// What reading the input lost.
    pub integrity: IntegrityReport,
    /// The table files written, with their rows (table and HDF5 targets).
    pub files: Vec<OutputFile>,
}

/// Progress of one input: bytes (or rows) done, and the total when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Which input (its index in [`convert_many`]'s list; 0 for [`convert`]).
    pub input: usize,
    /// Done so far.
    pub done: u64,
    /// The total, when known.
    pub total: Option<u64>,
}

/// Called with progress from the converting threads.
pub type ProgressFn<'a> = &'a (dyn Fn(Progress) + Sync);

/// Where one output goes when several inputs are converted into `dir`: `DIR/<input name>`, or
/// `DIR/<input name>.<ext>` for targets that write one file.
pub fn output_for(registry: &Registry, target: &str, dir: &Path, input: &Path) -> PathBuf {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "input".into());
    let ext = targets(registry)
        .into_iter()
        .find(|t| t.id == target && t.kind != TargetKind::Recording)
        .and_then(|t| t.file_extension);
    match ext {
        Some(ext) => dir.join(format!("{name}.{ext}")),
        None => dir.join(name),
    }
}

/// Converts several inputs in parallel, one output each under `dir` (see [`output_for`]).
/// Every input gets its result, in input order; two inputs that would write the same output
/// are refused before anything is written.
pub fn convert_many(
    registry: &Registry,
    inputs: &[PathBuf],
    dir: &Path,
    options: &ConvertOptions,
    progress: Option<ProgressFn<'_>>,
) -> Result<Vec<Result<ConvertReport>>> {
    let mut outputs: Vec<PathBuf> = Vec::new();
    for input in inputs {
        // A partitioned dataset is one folder for the whole fleet, a partition per input.
        let target = if options.partition {
            dir.join(source_of(options, input))
        } else {
            output_for(registry, &options.target, dir, input)
        };
        if outputs.contains(&target) {
            return Err(Error::Invalid(format!(
                "two inputs would both write {}: convert them separately",
                target.display()
            )));
        }
        outputs.push(target);
    }
    let jobs = options
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .clamp(1, inputs.len().max(1));
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<Result<ConvertReport>>>> =
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
                    let on_progress = |done, total| {
                        if let Some(p) = progress {
                            p(Progress {
                                input: i,
                                done,
                                total,
                            });
                        }
                    };
                    let output = if options.partition { dir } else { &outputs[i] };
                    let result = convert_with(registry, input, output, options, &on_progress);
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                }
            });
        }
    });
    Ok(results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(Error::Invalid("not converted".into()))))
        .collect())
}

/// Converts one recording (or, for targets built from tables, one table) into `output`.
pub fn convert(
    registry: &Registry,
    input: &Path,
    output: &Path,
    options: &ConvertOptions,
    progress: Option<ProgressFn<'_>>,
) -> Result<ConvertReport> {
    let on_progress = |done, total| {
        if let Some(p) = progress {
            p(Progress {
                input: 0,
                done,
                total,
            });
        }
    };
    convert_with(registry, input, output, options, &on_progress)
}

/// A report of `notes` and the integrity to report.
fn report(
    input: &Path,
    output: &Path,
    notes: Vec<String>,
    integrity: &recfmt_core::Integrity,
) -> ConvertReport {
    ConvertReport {
        input: input.to_path_buf(),
        output: output.to_path_buf(),
        outcome: Outcome::of(integrity),
        notes,
        integrity: integrity.into(),
        files: Vec::new(),
    }
}

/// The format output `target` of a format built from tables that reads `input`, if any.
fn table_output(
    registry: &Registry,
    target: &str,
    input: &Path,
) -> Option<(&'static FormatDescriptor, &'static SpecialOutput)> {
    use recfmt_core::TableReader;
    let ext = input.extension()?.to_str()?;
    registry.formats().iter().find_map(|f| {
        let o = f.outputs.iter().find(|o| o.id == target)?;
        let OutputSource::Table { extensions, .. } = o.source else {
            return None;
        };
        let readable = extensions
            .iter()
            .chain(crate::tables::Tables.extensions())
            .any(|e| e.eq_ignore_ascii_case(ext));
        readable.then_some((*f, o))
    })
}

fn convert_with(
    registry: &Registry,
    input: &Path,
    output: &Path,
    options: &ConvertOptions,
    on_progress: &(dyn Fn(u64, Option<u64>) + Sync),
) -> Result<ConvertReport> {
    registry.check_options(&options.open.format_options)?;
    // A cancelled call starts no further input (the copies below read without a reader).
    if let Some(cancel) = &options.open.cancel {
        cancel.check()?;
    }
    if let Some((format, out)) = table_output(registry, &options.target, input)
        && let OutputSource::Table { write, .. } = out.source
    {
        let read = options.open.read_options_for(registry, format)?;
        let write_options = options.output_write_options_for(registry, format, out)?;
        let written = write(input, output, &read, &write_options, &crate::tables::Tables)?;
        let integrity = written.integrity.unwrap_or_default();
        return Ok(report(input, output, written.notes, &integrity));
    }
    check_output(registry, output, options)?;
    let pipeline = options.pipeline()?;
    let open_selected = || -> recfmt_core::Result<Box<dyn RecordingReader>> {
        let reader = crate::open_with(registry, input, &options.open)
            .map_err(Error::into_core)?
            .into_reader();
        Ok(Box::new(SelectedReader::new(reader, &pipeline)?))
    };
    let mut reader: Box<dyn RecordingReader + '_> = match open_selected() {
        Ok(reader) => reader,
        Err(e) => return nothing_kept(registry, input, output, options).ok_or(e.into()),
    };
    let mut notes = Vec::new();

    if let Some(rule) = &options.merge {
        let alignment = Alignment::parse(rule)?;
        if alignment == Alignment::Union {
            let counts = recfmt_export::count_rows(reader.as_mut())?;
            let estimate: u64 = counts.iter().sum();
            if options.max_rows.is_some_and(|max| estimate > max) {
                return Err(Error::Invalid(format!(
                    "a union of timestamps could reach {estimate} rows, more than --max-rows; use --merge asof:STREAM or raster:STEP"
                )));
            }
            if estimate > UNION_WARN_ROWS {
                notes.push(format!(
                    "warning: the union of timestamps can reach {estimate} rows (the sum of all streams); --merge asof:STREAM or raster:STEP keeps it smaller"
                ));
            }
        }
        reader = Box::new(MergedReader::with_max_rows(
            open_selected,
            alignment,
            options.max_rows,
        )?);
    }

    let target = options.target.as_str();
    if let Some(format) = registry.by_id(target).filter(|f| f.is_target()) {
        return to_recording(registry, input, output, options, format, reader, notes);
    }
    let source_format = reader.header().format;
    for f in registry.formats() {
        for out in f.outputs.iter().filter(|o| o.id == target) {
            match out.source {
                OutputSource::Rows(write) => {
                    let read = options.open.read_options_for(registry, f)?;
                    let write_options = options.output_write_options_for(registry, f, out)?;
                    let written = write(reader.as_mut(), output, &read, &write_options)?;
                    notes.extend(written.notes);
                    let integrity = written
                        .integrity
                        .unwrap_or_else(|| reader.integrity().clone());
                    return Ok(report(input, output, notes, &integrity));
                }
                OutputSource::Own { write, .. }
                    if f.info.id == source_format && options.is_plain() =>
                {
                    let read = options.open.read_options_for(registry, f)?;
                    let write_options = options.output_write_options_for(registry, f, out)?;
                    let written = write(input, output, &read, &write_options)?;
                    notes.extend(written.notes);
                    let integrity = written
                        .integrity
                        .unwrap_or_else(|| reader.integrity().clone());
                    return Ok(report(input, output, notes, &integrity));
                }
                OutputSource::Own { accepts, .. } if !is_generic(target) => {
                    return Err(Error::Invalid(format!(
                        "--to {target} converts {accepts}; this is {source_format}"
                    )));
                }
                _ => {}
            }
        }
    }
    to_tables(registry, input, output, options, reader, notes, on_progress)
}

/// Refuses, before the input is read, an output that exists where this conversion writes
/// one file or one recording, unless replacing is allowed. Table outputs check their files
/// once the streams are known (still before reading rows).
fn check_output(registry: &Registry, output: &Path, options: &ConvertOptions) -> Result<()> {
    let target = options.target.as_str();
    let single = targets(registry).into_iter().any(|t| {
        t.id == target
            && (t.kind == TargetKind::Recording || t.file_extension.is_some())
            && !(options.partition && t.kind == TargetKind::Tables)
    });
    if !single {
        return Ok(());
    }
    let replace = options.replace();
    let checked = if output.is_dir() {
        recfmt_core::atomic::check_folder(output, replace, &[])
    } else {
        recfmt_core::atomic::check_target(output, replace)
    };
    checked.map_err(|e| Error::from(recfmt_core::Error::from(e)))
}

/// The name `input` gets in a partitioned dataset.
fn source_of(options: &ConvertOptions, input: &Path) -> String {
    options
        .source
        .clone()
        .unwrap_or_else(|| recfmt_export::source_name(input))
}

/// True for the generic targets (tables, HDF5 and MCAP).
fn is_generic(target: &str) -> bool {
    target == "hdf5" || target == "mcap" || table_targets().iter().any(|(id, _, _)| *id == target)
}

/// For an input that could not be selected from: when it opens but holds no stream because
/// it was cut before any (a FlightGear tape ending inside its header), there is nothing to
/// write, and that is a loss, not an error. `None` otherwise.
fn nothing_kept(
    registry: &Registry,
    input: &Path,
    output: &Path,
    options: &ConvertOptions,
) -> Option<ConvertReport> {
    let reader = crate::open_with(registry, input, &options.open).ok()?;
    if !reader.schema().streams.is_empty() || !reader.integrity().lost_data() {
        return None;
    }
    Some(report(
        input,
        output,
        vec![format!(
            "nothing written: {} ends before any stream could be read",
            input.display()
        )],
        reader.integrity(),
    ))
}

/// Into a recording format: a faithful copy when source and target formats agree and
/// nothing is selected, else the rows through the target's generic writer, which refuses
/// (listing what does not fit) recordings it cannot hold.
fn to_recording(
    registry: &Registry,
    input: &Path,
    output: &Path,
    options: &ConvertOptions,
    format: &'static FormatDescriptor,
    mut reader: Box<dyn RecordingReader + '_>,
    mut notes: Vec<String>,
) -> Result<ConvertReport> {
    let id = format.info.id;
    if options.is_plain()
        && reader.header().format == id
        && let Some(copy) = format.copy
    {
        let read = options.open.read_options_for(registry, format)?;
        let write_options = options.write_options_for(registry, format)?;
        let copied = copy(input, output, &read, &write_options)?;
        notes.push(copied.summary);
        return Ok(report(input, output, notes, &copied.integrity));
    }
    let create = format.create.ok_or_else(|| {
        Error::Invalid(format!(
            "recfmt cannot write {} recordings from other formats yet",
            format.info.name
        ))
    })?;
    let mut writer = create(output, &options.write_options_for(registry, format)?)?;
    let streams = reader.schema().streams.len();
    writer
        .write_header(reader.header(), reader.schema())
        .context_with(|| {
            let hint = if streams > 1 {
                "\n  hint: keep one stream with --stream NAME, or merge them into one with --merge asof:STREAM"
            } else {
                ""
            };
            format!("converting {} to {id}{hint}", input.display())
        })?;
    let mut frame = recfmt_core::FrameBuf::default();
    let mut rows = 0u64;
    while reader.read_frame(&mut frame)? {
        writer.write_frame(&frame)?;
        rows += 1;
    }
    writer.finish()?;
    notes.push(format!("wrote {} ({rows} rows)", output.display()));
    let mut r = report(input, output, notes, reader.integrity());
    r.files.push(OutputFile {
        path: output.to_path_buf(),
        stream: None,
        rows,
    });
    Ok(r)
}
