//! The format descriptor: how the registry detects, opens, writes and copies CARLA logs,
//! builds them from trajectories tables, and runs CARLA's recorder queries. It names the
//! adapter and the writer; they know nothing of each other (both use [`crate::schema`]).

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::Path;

use recfmt_core::{
    DType, FormatDescriptor, FormatInfo, FormatOption, FormatOptions, Integrity, OptionKind,
    OutputSource, Query, QueryForm, ReadOptions, RecordingReader, Replace, ResultExt,
    SpecialOutput, TableColumn, TableReader, Tier, Value, WriteOptions, Written,
};

use crate::adapter::{CarlaRecording, score};
use crate::error::{Error, FORMAT_ID};
use crate::flavour::Flavour;
use crate::tracks::{TrackLogWriter, TrackOptions, TrackRow, TrackSummary, read_tracks_csv};

/// The format descriptor for the recfmt registry: id `carla`, extensions `log` and `rec`,
/// detected by the `CARLA_RECORDER` magic. Files open seekable (so `seek_time` works), can be
/// created from the generic model with [`crate::writer::CarlaWriter`], copied packet for
/// packet, built from trajectories tables (`build`, `map` options), and queried as CARLA's
/// `show_recorder_*` functions do.
pub static FORMAT: FormatDescriptor = FormatDescriptor {
    create: Some(crate::writer::create),
    options: &OPTIONS,
    copy: Some(copy),
    outputs: &OUTPUTS,
    queries: &QUERIES,
    ..FormatDescriptor::new(
        FormatInfo {
            id: FORMAT_ID,
            name: "CARLA recorder",
            extensions: &["log", "rec"],
        },
        Tier::Magic,
        score,
        open,
    )
};

static OPTIONS: [FormatOption; 2] = [
    FormatOption {
        key: "build",
        kind: OptionKind::Text,
        default: None,
        help: "read logs as this build (0.9.10, 0.9.12, 0.9.14, 0.9.15, 0.9.16, ue5, …) instead of detecting it; also the layout of logs built from trajectories tables (default 0.9.15)",
    },
    FormatOption {
        key: "map",
        kind: OptionKind::Text,
        default: Some("Town01"),
        help: "the map named in a log built from a trajectories table",
    },
];

/// The `build` option as a flavour.
fn build_option(options: &FormatOptions) -> recfmt_core::Result<Option<Flavour>> {
    options
        .get("build")
        .map(|build| {
            build
                .parse::<Flavour>()
                .map_err(|e| recfmt_core::Error::invalid(format!("--carla-build {build}: {e}")))
        })
        .transpose()
}

fn open(path: &Path, options: &ReadOptions) -> recfmt_core::Result<Box<dyn RecordingReader>> {
    match build_option(&options.format_options)? {
        Some(flavour) => {
            let file =
                BufReader::with_capacity(crate::io::FILE_BUFFER, File::open(path).in_file(path)?);
            let recording =
                CarlaRecording::new_seekable(file, options, Some(flavour)).in_file(path)?;
            Ok(Box::new(recording))
        }
        None => Ok(Box::new(CarlaRecording::open(path, options)?)),
    }
}

/// A CARLA error as a core error that keeps its text and kind (I/O errors stay I/O errors).
fn keep(e: Error) -> recfmt_core::Error {
    e.into()
}

/// Every complete packet, up to a torn one. A log that ends inside a frame (without its
/// FrameEnd packet) is cut before that frame's end too, and the integrity says so.
fn copy(
    source: &Path,
    target: &Path,
    _: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<recfmt_core::Copied> {
    recfmt_core::atomic::check_target(target, write.replace)?;
    let integrity = copy_packets(source, target, write.replace)
        .map_err(recfmt_core::Error::from)
        .in_file(source)?;
    Ok(recfmt_core::Copied {
        summary: format!(
            "copied {} to {} packet for packet",
            source.display(),
            target.display()
        ),
        integrity,
    })
}

fn copy_packets(source: &Path, target: &Path, replace: Replace) -> Result<Integrity, Error> {
    use crate::Packet;
    let mut integrity = Integrity::default();
    let file = BufReader::with_capacity(crate::io::FILE_BUFFER, File::open(source)?);
    let mut reader = crate::Reader::new(file);
    let header = reader.read_header()?;
    let flavour = reader.detect_flavour()?;
    let out = recfmt_core::AtomicFile::create(target, replace)?;
    let mut writer = crate::Writer::new(out, flavour);
    writer.write_header(&header)?;
    let mut packet = Packet::default();
    // The frame being copied (id, offset of its FrameStart) until its FrameEnd.
    let mut open_frame = None;
    loop {
        match reader.read_packet(&mut packet) {
            Ok(false) => break,
            Ok(true) => {}
            Err(Error::Truncated {
                what,
                offset,
                available,
                ..
            }) => {
                integrity.truncate(offset, available);
                integrity.warn(format!(
                    "{}: truncated {what} at byte {offset}: the copy ends with the packet before it",
                    source.display()
                ));
                open_frame = None;
                break;
            }
            Err(e) => return Err(e),
        }
        match &packet {
            Packet::FrameStart(f) => open_frame = Some((f.id, reader.last_packet_offset())),
            Packet::FrameEnd => open_frame = None,
            _ => {}
        }
        writer.write_packet(&packet)?;
    }
    if let Some((id, start)) = open_frame {
        let end = reader.position();
        integrity.truncate(end, 0);
        integrity.warn(format!(
            "{}: the file ends inside frame {id} (FrameStart at byte {start}): expected a FrameEnd packet at byte {end}",
            source.display()
        ));
    }
    writer.into_inner()?.commit()?;
    Ok(integrity)
}

static OUTPUTS: [SpecialOutput; 1] = [SpecialOutput {
    id: FORMAT_ID,
    help: "a CARLA log from a trajectories table (CSV or Parquet: time,id,blueprint,x,y,z,roll,pitch,yaw; optional uid, role_name)",
    file_extension: None,
    source: OutputSource::Table {
        extensions: &["csv"],
        write: from_table,
    },
    options: &[],
}];

/// The columns of a trajectories table.
static TRACK_COLUMNS: [TableColumn; 11] = {
    const fn col(name: &'static str, dtype: DType, required: bool) -> TableColumn {
        TableColumn {
            name,
            dtype,
            required,
        }
    }
    [
        col("time", DType::F64, true),
        col("id", DType::U32, true),
        col("blueprint", DType::Str, true),
        col("x", DType::F64, true),
        col("y", DType::F64, true),
        col("z", DType::F64, true),
        col("roll", DType::F64, true),
        col("pitch", DType::F64, true),
        col("yaw", DType::F64, true),
        col("uid", DType::U32, false),
        col("role_name", DType::Str, false),
    ]
};

/// One row of [`TRACK_COLUMNS`] values.
fn track_row(values: &[Value]) -> TrackRow {
    let f = |i: usize| match values.get(i) {
        Some(Value::Float(x)) => *x,
        _ => 0.0,
    };
    let u = |i: usize| match values.get(i) {
        Some(Value::UInt(x)) => u32::try_from(*x).unwrap_or(u32::MAX),
        _ => 0,
    };
    let s = |i: usize| match values.get(i) {
        Some(Value::Str(x)) => Some(x.clone()),
        _ => None,
    };
    TrackRow {
        time: f(0),
        id: u(1),
        blueprint: s(2).unwrap_or_default(),
        x: f(3),
        y: f(4),
        z: f(5),
        roll: f(6),
        pitch: f(7),
        yaw: f(8),
        uid: u(9),
        role_name: s(10),
    }
}

/// `error` about a tracks row located at `line` of a CSV file instead.
fn at_line(error: Error, line: u64) -> Error {
    match error {
        Error::Tracks { what, .. } => Error::Tracks {
            location: format!("line {line}"),
            what,
        },
        other => other,
    }
}

/// Builds a CARLA log from a trajectories table (see [`crate::tracks`]), written under a
/// temporary name: CSV read here, other tables through `tables`.
fn from_table(
    input: &Path,
    output: &Path,
    options: &ReadOptions,
    write: &WriteOptions,
    tables: &dyn TableReader,
) -> recfmt_core::Result<Written> {
    let flavour = build_option(&options.format_options)?.unwrap_or(Flavour::Carla0915);
    let mut track_options = TrackOptions::new(flavour);
    if let Some(map) = options.format_options.get("map") {
        map.clone_into(&mut track_options.map);
    }
    let csv = input
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let file = recfmt_core::AtomicFile::create(output, write.replace).in_file(output)?;
    let result = (|| -> recfmt_core::Result<TrackSummary> {
        let mut writer = TrackLogWriter::new(file, &track_options).map_err(keep)?;
        if csv {
            let mut rows = read_tracks_csv(input).map_err(keep)?;
            while let Some(row) = rows.next() {
                // A row the writer refuses is named by its line, as the reader names its own.
                writer
                    .push(row.map_err(keep)?)
                    .map_err(|e| keep(at_line(e, rows.line())))?;
            }
        } else {
            tables.for_each_row(input, &TRACK_COLUMNS, &mut |values| {
                writer.push(track_row(values)).map_err(keep)
            })?;
        }
        let (file, summary) = writer.finish().map_err(keep)?;
        file.commit().in_file(output)?;
        Ok(summary)
    })();
    let summary = result.map_err(|e| {
        recfmt_core::Error::context(format!("building a CARLA log from {}", input.display()), e)
    })?;
    Ok(Written {
        notes: vec![format!(
            "wrote {} ({} frames, {} actors, from {} rows)",
            output.display(),
            summary.frames,
            summary.actors,
            summary.rows
        )],
        integrity: None,
    })
}

static QUERIES: [Query; 3] = [
    Query {
        name: "info",
        help: "the recording's header and frames (show_recorder_file_info)",
        params: &[FormatOption {
            key: "all",
            kind: OptionKind::Flag,
            default: Some("false"),
            help: "every packet of every frame (CARLA's show_all)",
        }],
        run: query_info,
    },
    Query {
        name: "collisions",
        help: "collisions between actor categories (show_recorder_collisions): a any, h hero, v vehicle, w walker, t traffic light, o other",
        params: &[
            FormatOption {
                key: "type1",
                kind: OptionKind::Choice(&["a", "h", "v", "w", "t", "o"]),
                default: Some("a"),
                help: "category of the first actor",
            },
            FormatOption {
                key: "type2",
                kind: OptionKind::Choice(&["a", "h", "v", "w", "t", "o"]),
                default: Some("a"),
                help: "category of the second actor",
            },
        ],
        run: query_collisions,
    },
    Query {
        name: "blocked",
        help: "actors that stayed blocked (show_recorder_actors_blocked)",
        params: &[
            FormatOption {
                key: "min_time",
                kind: OptionKind::Number,
                default: Some("60"),
                help: "shortest blocked time in seconds",
            },
            FormatOption {
                key: "min_distance",
                kind: OptionKind::Number,
                default: Some("100"),
                help: "largest distance in centimetres that still counts as not moving",
            },
        ],
        run: query_blocked,
    },
];

/// The text form's outcome: a file that is not a recording printed CARLA's message and fails.
fn text_done(summary: crate::query::QuerySummary) -> recfmt_core::Result<()> {
    if summary.recorder {
        Ok(())
    } else {
        Err(recfmt_core::Error::invalid("not a CARLA recorder file"))
    }
}

#[cfg(feature = "serde")]
fn json(out: &mut dyn Write, data: &impl serde::Serialize) -> recfmt_core::Result<()> {
    serde_json::to_writer_pretty(&mut *out, data).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

#[cfg(not(feature = "serde"))]
fn json<T>(_: &mut dyn Write, _: &T) -> recfmt_core::Result<()> {
    Err(recfmt_core::Error::unsupported(
        FORMAT_ID,
        "JSON query answers need the `serde` feature of recfmt-carla",
    ))
}

fn query_info(
    path: &Path,
    params: &FormatOptions,
    form: QueryForm,
    mut out: &mut dyn Write,
) -> recfmt_core::Result<()> {
    use crate::query;
    match form {
        QueryForm::Json => json(out, &query::file_info_data(path).map_err(keep)?),
        QueryForm::Text => {
            text_done(query::file_info(path, params.flag("all"), &mut out).map_err(keep)?)
        }
    }
}

fn category(params: &FormatOptions, key: &str) -> char {
    params
        .get(key)
        .and_then(|s| s.chars().next())
        .unwrap_or('a')
}

fn query_collisions(
    path: &Path,
    params: &FormatOptions,
    form: QueryForm,
    mut out: &mut dyn Write,
) -> recfmt_core::Result<()> {
    use crate::query;
    let (type1, type2) = (category(params, "type1"), category(params, "type2"));
    match form {
        QueryForm::Json => json(
            out,
            &query::collisions_data(path, type1, type2).map_err(keep)?,
        ),
        QueryForm::Text => {
            text_done(query::collisions(path, type1, type2, &mut out).map_err(keep)?)
        }
    }
}

fn query_blocked(
    path: &Path,
    params: &FormatOptions,
    form: QueryForm,
    mut out: &mut dyn Write,
) -> recfmt_core::Result<()> {
    use crate::query;
    let min_time = params.get_f64("min_time").unwrap_or(60.0);
    let min_distance = params.get_f64("min_distance").unwrap_or(100.0);
    match form {
        QueryForm::Json => json(
            out,
            &query::actors_blocked_data(path, min_time, min_distance).map_err(keep)?,
        ),
        QueryForm::Text => {
            text_done(query::actors_blocked(path, min_time, min_distance, &mut out).map_err(keep)?)
        }
    }
}
