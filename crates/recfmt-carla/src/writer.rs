//! Writing recordings from recfmt's generic model ([`RecordingWriter`]).
//!
//! Two schemas can be written:
//!
//! * **The adapter's own streams** ([`crate::STREAM_NAMES`], as [`crate::CarlaRecording`]
//!   reads them): each `frame` row starts a frame; the rows of the other streams up to the
//!   next `frame` row become that frame's packets, written in the recorder's order with the
//!   empty "always" packets added ([`Flavour::frame_order`]; the additional-data packets
//!   when the frame has a `platform_time` row). Consecutive `walker_bones` or
//!   `vehicle_wheels` rows of one actor form one record. Reading a recorder file and
//!   writing its rows back gives the same packets, except that the attribute types of
//!   EventAdd, which the `attributes` text does not carry, are guessed from the values.
//! * **A tracks table**: one stream with the columns `id`, `blueprint`, `x`, `y`, `z`
//!   (metres), `roll`, `pitch`, `yaw` (degrees) besides its time column (optional `uid`,
//!   `role_name`; others ignored), written as [`crate::tracks`] does.
//!
//! Any other schema fails in [`RecordingWriter::write_header`] with a message listing what
//! does not fit. The flavour is the header's `flavour` metadata (set by the adapter) unless
//! [`CarlaWriterOptions::flavour`] sets one, else 0.9.15; the map and date come from the
//! `map` and `date_unix` metadata when present.

mod native;
mod tracks_table;

use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

use recfmt_core::{
    AtomicFile, FrameBuf, Header as CoreHeader, RecordingWriter, Replace, Schema, StreamDesc,
    WriteOptions,
};

use crate::flavour::Flavour;
use crate::header::Header;
use crate::io::Writer;
use crate::schema::{schema as adapter_schema, stream_kind};
use crate::tracks::{TrackLogWriter, TrackOptions};
use native::Native;
use tracks_table::Tracks;

/// Settings of [`CarlaWriter`].
#[derive(Debug, Clone, Default)]
pub struct CarlaWriterOptions {
    /// The build to write; by default the header's `flavour` metadata, else 0.9.15.
    pub flavour: Option<Flavour>,
    /// Map name; by default the header's `map` metadata, else `Town01`.
    pub map: Option<String>,
    /// Header date (Unix seconds); by default the `date_unix` metadata, else now.
    pub date: Option<i64>,
}

/// A [`RecordingWriter`] producing a recorder file (see the module documentation).
///
/// ```
/// use recfmt_carla::{CarlaRecording, writer::{CarlaWriter, CarlaWriterOptions}};
/// use recfmt_core::{DType, FrameBuf, Header, RecordingReader, RecordingWriter, Schema, SignalDesc, StreamDesc, TimeBase, Value};
///
/// let mut s = StreamDesc::new("tracks", SignalDesc::scalar("time", DType::F64), TimeBase::SECONDS);
/// for (n, d) in [("id", DType::U32), ("blueprint", DType::Str), ("x", DType::F64), ("y", DType::F64),
///                ("z", DType::F64), ("roll", DType::F64), ("pitch", DType::F64), ("yaw", DType::F64)] {
///     s.signals.push(SignalDesc::scalar(n, d));
/// }
/// let schema = Schema { streams: vec![s] };
/// let mut w = CarlaWriter::new(std::io::Cursor::new(Vec::new()), CarlaWriterOptions::default());
/// w.write_header(&Header::default(), &schema)?;
/// for t in 0..3 {
///     let mut row = FrameBuf::default();
///     row.reset(0, 9);
///     row.values = vec![Value::Float(t as f64), Value::UInt(5), Value::Str("vehicle.audi.tt".into()),
///         Value::Float(1.0 + t as f64), Value::Float(2.0), Value::Float(0.0),
///         Value::Float(0.0), Value::Float(0.0), Value::Float(90.0)];
///     w.write_frame(&row)?;
/// }
/// w.finish()?;
/// let bytes = w.into_inner().unwrap().into_inner();
/// let rec = CarlaRecording::new(&bytes[..], &Default::default(), None)?;
/// assert_eq!(rec.flavour().map(|f| f.name()), Some("0.9.15"));
/// # Ok::<(), recfmt_core::Error>(())
/// ```
#[derive(Debug)]
pub struct CarlaWriter<W: Write + Seek> {
    out: Option<W>,
    options: CarlaWriterOptions,
    mode: Mode<W>,
    rows: u64,
}

#[derive(Debug)]
enum Mode<W: Write + Seek> {
    Unstarted,
    Native(Box<Native<W>>),
    Tracks(Box<Tracks<W>>),
    Finished(Option<W>),
}

/// Creates a writer at `path` (the registry's `create`), for the build of the `build` option
/// (by default the header's `flavour` metadata, else 0.9.15) and the map of the `map`
/// option. The file is written under a temporary name beside `path` and moved into place
/// when [`RecordingWriter::finish`] succeeds, replacing an existing file only as `options`
/// allow; nothing is created when the schema does not fit, and the partial file is removed
/// when the writer is dropped unfinished.
pub fn create(
    path: &Path,
    options: &WriteOptions,
) -> recfmt_core::Result<Box<dyn RecordingWriter>> {
    if path.file_name().is_none() {
        return Err(invalid("output path has no file name"));
    }
    recfmt_core::atomic::check_target(path, options.replace)?;
    let format = &options.format_options;
    let flavour = format
        .get("build")
        .map(|build| {
            build
                .parse::<Flavour>()
                .map_err(|e| invalid(format!("carla.build {build}: {e}")))
        })
        .transpose()?;
    Ok(Box::new(PathWriter {
        target: path.to_path_buf(),
        replace: options.replace,
        options: CarlaWriterOptions {
            flavour,
            map: format.get("map").map(str::to_owned),
            date: None,
        },
        inner: None,
    }))
}

/// [`CarlaWriter`] over a file created once the schema is known to fit.
#[derive(Debug)]
struct PathWriter {
    target: PathBuf,
    replace: Replace,
    options: CarlaWriterOptions,
    inner: Option<CarlaWriter<AtomicFile>>,
}

impl RecordingWriter for PathWriter {
    fn write_header(&mut self, header: &CoreHeader, schema: &Schema) -> recfmt_core::Result<()> {
        check_schema(schema, choose_flavour(&self.options, header))?;
        let file = AtomicFile::create(&self.target, self.replace)?;
        let mut w = CarlaWriter::new(file, self.options.clone());
        w.write_header(header, schema)?;
        self.inner = Some(w);
        Ok(())
    }

    fn write_frame(&mut self, frame: &FrameBuf) -> recfmt_core::Result<()> {
        match &mut self.inner {
            Some(w) => w.write_frame(frame),
            None => Err(invalid("carla writer: write_header must come first")),
        }
    }

    fn finish(&mut self) -> recfmt_core::Result<()> {
        let Some(mut w) = self.inner.take() else {
            return Ok(());
        };
        w.finish()?;
        let file = w
            .into_inner()
            .ok_or_else(|| invalid("carla writer: no output after finish"))?;
        file.commit()?;
        Ok(())
    }
}

pub(super) fn invalid(msg: impl Into<String>) -> recfmt_core::Error {
    recfmt_core::Error::invalid(msg.into())
}

const TRACK_COLUMNS: [&str; 8] = ["id", "blueprint", "x", "y", "z", "roll", "pitch", "yaw"];

impl<W: Write + Seek> CarlaWriter<W> {
    /// A writer to `out`; nothing is written before [`RecordingWriter::write_header`].
    pub fn new(out: W, options: CarlaWriterOptions) -> Self {
        CarlaWriter {
            out: Some(out),
            options,
            mode: Mode::Unstarted,
            rows: 0,
        }
    }

    /// The output, once [`RecordingWriter::finish`] has run.
    pub fn into_inner(self) -> Option<W> {
        match self.mode {
            Mode::Finished(w) => w,
            _ => None,
        }
    }

    fn header_for(&self, header: &CoreHeader, flavour: Flavour) -> Header {
        let meta = &header.metadata;
        let map = self
            .options
            .map
            .clone()
            .or_else(|| meta.get("map").cloned())
            .unwrap_or_else(|| "Town01".into());
        let date = self
            .options
            .date
            .or_else(|| meta.get("date_unix").and_then(|d| d.parse().ok()))
            .unwrap_or_else(|| TrackOptions::new(flavour).date);
        let mut h = Header::new(map.as_str(), date);
        h.version = flavour.header_version();
        h
    }
}

/// The flavour to write: the options', the header metadata's, else 0.9.15.
fn choose_flavour(options: &CarlaWriterOptions, header: &CoreHeader) -> Flavour {
    let meta = header
        .metadata
        .get("flavour")
        .and_then(|f| f.parse::<Flavour>().ok());
    options.flavour.or(meta).unwrap_or(Flavour::Carla0915)
}

/// Fails, listing what does not fit, unless `schema` is the adapter's or a tracks table.
pub fn check_schema(schema: &Schema, flavour: Flavour) -> recfmt_core::Result<()> {
    let native = native_misfits(schema, flavour);
    if native.is_empty() {
        return Ok(());
    }
    let tracks = tracks_misfits(schema);
    if tracks.is_empty() {
        return Ok(());
    }
    Err(misfit_error(&native, &tracks))
}

fn misfit_error(native: &[String], tracks: &[String]) -> recfmt_core::Error {
    invalid(format!(
        "cannot write this schema as a CARLA recording: it is neither carla's own streams ({}) nor a tracks table (one stream with time, {}); {}",
        native.join("; "),
        TRACK_COLUMNS.join(", "),
        tracks.join("; ")
    ))
}

/// Why the schema is not the adapter's: empty when it is.
fn native_misfits(schema: &Schema, flavour: Flavour) -> Vec<String> {
    let own = adapter_schema(flavour);
    let mut problems = Vec::new();
    for s in &schema.streams {
        match own.streams.iter().find(|o| o.name == s.name) {
            None => problems.push(format!("stream {:?} is not a carla stream", s.name)),
            Some(o) => {
                let names =
                    |d: &StreamDesc| d.signals.iter().map(|x| x.name.clone()).collect::<Vec<_>>();
                if names(o) != names(s) {
                    problems.push(format!(
                        "stream {:?} has columns [{}], carla's are [{}]",
                        s.name,
                        names(s).join(", "),
                        names(o).join(", ")
                    ));
                }
            }
        }
    }
    if schema.stream_index("frame").is_none() {
        problems.push("no \"frame\" stream".into());
    }
    problems
}

/// Why the schema is not a tracks table: empty when it is.
fn tracks_misfits(schema: &Schema) -> Vec<String> {
    if schema.streams.len() != 1 {
        return vec![format!(
            "a tracks table is one stream, this schema has {}",
            schema.streams.len()
        )];
    }
    let s = &schema.streams[0];
    let missing: Vec<&str> = TRACK_COLUMNS
        .iter()
        .copied()
        .filter(|c| find_col(s, c).is_none())
        .collect();
    if missing.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "stream {:?} lacks the tracks column(s) {}",
            s.name,
            missing.join(", ")
        )]
    }
}

fn find_col(s: &StreamDesc, name: &str) -> Option<usize> {
    s.signals
        .iter()
        .position(|x| x.name.eq_ignore_ascii_case(name))
}

impl<W: Write + Seek> RecordingWriter for CarlaWriter<W> {
    fn write_header(&mut self, header: &CoreHeader, schema: &Schema) -> recfmt_core::Result<()> {
        if !matches!(self.mode, Mode::Unstarted) {
            return Err(invalid("carla writer: write_header called twice"));
        }
        let flavour = choose_flavour(&self.options, header);
        let out = self
            .out
            .take()
            .ok_or_else(|| invalid("carla writer: no output"))?;
        let native = native_misfits(schema, flavour);
        if native.is_empty() {
            let mut w = Writer::new(out, flavour);
            w.write_header(&self.header_for(header, flavour))?;
            let kinds = schema
                .streams
                .iter()
                .map(|s| stream_kind(&s.name))
                .collect();
            self.mode = Mode::Native(Box::new(Native {
                w,
                flavour,
                kinds,
                frame: None,
                packets: Vec::new(),
                additional: false,
            }));
            return Ok(());
        }
        let tracks = tracks_misfits(schema);
        if tracks.is_empty() {
            let s = &schema.streams[0];
            let h = self.header_for(header, flavour);
            let options = TrackOptions {
                flavour,
                map: h.map.to_string(),
                date: h.date,
            };
            let mut cols = [0usize; 8];
            for (slot, name) in cols.iter_mut().zip(TRACK_COLUMNS) {
                *slot = find_col(s, name).unwrap_or(0);
            }
            self.mode = Mode::Tracks(Box::new(Tracks {
                writer: TrackLogWriter::new(out, &options)?,
                desc: s.clone(),
                cols,
                uid: find_col(s, "uid"),
                role: find_col(s, "role_name"),
            }));
            return Ok(());
        }
        self.out = Some(out);
        Err(misfit_error(&native, &tracks))
    }

    fn write_frame(&mut self, frame: &FrameBuf) -> recfmt_core::Result<()> {
        self.rows += 1;
        let row = self.rows;
        match &mut self.mode {
            Mode::Native(n) => n.row(frame, row),
            Mode::Tracks(t) => t.row(frame, row),
            Mode::Unstarted => Err(invalid("carla writer: write_header must come first")),
            Mode::Finished(_) => Err(invalid("carla writer: write_frame after finish")),
        }
    }

    fn finish(&mut self) -> recfmt_core::Result<()> {
        let mode = std::mem::replace(&mut self.mode, Mode::Finished(None));
        let out = match mode {
            Mode::Native(mut n) => {
                n.flush_frame()?;
                n.w.into_inner()?
            }
            Mode::Tracks(t) => t.writer.finish()?.0,
            Mode::Finished(w) => {
                self.mode = Mode::Finished(w);
                return Ok(());
            }
            Mode::Unstarted => {
                self.mode = Mode::Unstarted;
                return Err(invalid("carla writer: finish before write_header"));
            }
        };
        self.mode = Mode::Finished(Some(out));
        Ok(())
    }
}
