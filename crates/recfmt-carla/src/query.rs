//! CARLA's recorder queries with the server's exact text: `show_recorder_file_info`
//! ([`file_info`]), `show_recorder_collisions` ([`collisions`]) and
//! `show_recorder_actors_blocked` ([`actors_blocked`]), plus structured variants for JSON
//! ([`file_info_data`], [`collisions_data`], [`actors_blocked_data`]).
//!
//! # Fidelity
//!
//! The text is what `CarlaRecorderQuery.cpp` of the build puts in its string (the Python
//! examples `print()` it, which adds one more newline). The queries follow the C++ control
//! flow over a model of its `std::ifstream`, so the quirks come out the same:
//!
//! * numbers use the `ostream` defaults (`%g`, precision 6; UE4 floats are widened to double
//!   first), see [`format_g`]; the collision table switches the stream to `fixed` with
//!   precision 0 at its first row, so its `Duration:` footer then has no decimals;
//! * packets are parsed field by field, not by their size; at the end of the file the last
//!   header is processed once more with stale values (a file cut after a Position packet
//!   repeats its block with `show_all`); short reads keep the old bytes of a record;
//! * EventDel forgets the *last added* actor, not the deleted one (upstream bug), which
//!   matters for names of reused ids;
//! * actors still blocked at the end come out in the iteration order of libc++'s
//!   `std::unordered_map` (a Linux server), and the blocked distance is computed in `float`;
//! * collision categories are `"ovwtha"[type]` (TrafficSign prints `h`, Sensor `a`); types 6
//!   and above print `?`;
//! * the `Date:` line is `strftime("%x %X")` in the C locale for the time zone of the `TZ`
//!   variable ([`TimeZone::from_env`]; UTC when unset, where a server would use its own local
//!   zone).
//!
//! The build decides the text (see [`QueryOptions::flavour`]): 0.9.10–0.9.14 print
//! `Rotation (` and `Brake ` where 0.9.15+ print `Rotation: (` and `Brake: `; 0.9.14–0.9.16
//! and UE5 print a blank line after each Walkers Bones block; the newest ue4-dev (header
//! version 2) prints it at every FrameEnd instead, and a Weather block even without
//! `show_all`. Builds before 0.9.10 are not reproduced.
//!
//! State the server keeps between two queries (the query object is reused) is not modelled:
//! every query starts as on a freshly started server. UE5's PhysicsControl block cannot be
//! printed (its records hold raw memory) and gives [`crate::Error::Io`] with kind
//! `Unsupported` when `show_all` meets one.
//!
//! # Example
//!
//! ```
//! use recfmt_carla::query::{collisions_from, QueryOptions, TimeZone};
//! use recfmt_carla::{Collision, EventAdd, Flavour, FrameStart, Header, Packet, Writer};
//!
//! // A 0.9.13 recording with one collision between a hero car and a prop.
//! let mut w = Writer::new(Vec::new(), Flavour::Carla0912);
//! w.write_header(&Header::new("Town01", 0))?;
//! w.write_packet(&Packet::FrameStart(FrameStart { id: 1, duration_this: -1.0, elapsed: 16.0 }))?;
//! let mut car = EventAdd::default();
//! car.database_id = 122;
//! car.actor_type = 1;
//! car.description.id = "vehicle.yamaha.yzf".into();
//! w.write_packet(&Packet::EventAdd(vec![car]))?;
//! w.write_packet(&Packet::Collision(vec![Collision {
//!     id: 1, database_id1: 122, database_id2: u32::MAX, is_actor1_hero: true, is_actor2_hero: false,
//! }]))?;
//! w.write_packet(&Packet::FrameEnd)?;
//! let bytes = w.into_inner()?;
//!
//! let options = QueryOptions { time_zone: Some(TimeZone::utc()), ..QueryOptions::default() };
//! let mut text = Vec::new();
//! collisions_from(&bytes[..], 'h', 'a', &options, &mut text)?;
//! let text = String::from_utf8(text).unwrap();
//! assert!(text.starts_with("Version: 1\nMap: Town01\nDate: 01/01/70 00:00:00\n\n"));
//! assert!(text.contains(
//!     "\n      16   v o     122 vehicle.yamaha.yzf                  4294967295                                    \n"
//! ));
//! assert!(text.ends_with("\nFrames: 1\nDuration: 16 seconds\n"));
//! # Ok::<(), recfmt_carla::Error>(())
//! ```

mod cfmt;
mod engine;
mod hashmap;
mod localtime;
mod report;
mod stream;

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Write};
use std::path::Path;

use recfmt_core::Limits;

use crate::error::{Error, Result};
use crate::flavour::Flavour;
use crate::io::Reader;

pub use cfmt::{format_f, format_g};
pub use localtime::TimeZone;
pub use report::{
    ActorCreated, BlockedReport, BlockedRow, CollisionEvent, CollisionReport, CollisionRow,
    FileInfo, FrameEvents, Parenting, RecorderInfo,
};

use engine::{Engine, EngineError};

/// Settings of a query.
#[derive(Debug, Clone, Default)]
pub struct QueryOptions {
    /// The build whose query code (packet ids, layouts and text) to reproduce; detected from
    /// the file like [`crate::Reader`] does when `None`.
    pub flavour: Option<Flavour>,
    /// Time zone of the `Date:` line; the `TZ` environment variable when `None`.
    pub time_zone: Option<TimeZone>,
    /// Limits for the flavour detection lookahead.
    pub limits: Limits,
}

/// What a text query found, besides its text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuerySummary {
    /// False when the file is not a recorder file (the text is then
    /// `File is not a CARLA recorder`).
    pub recorder: bool,
    /// The build whose query was reproduced.
    pub flavour: Flavour,
    /// The `Frames:` value (id of the last frame).
    pub frames: u64,
    /// The `Duration:` value (elapsed seconds of the last frame).
    pub duration: f64,
    /// Bytes of the file the query read (skipped packet bodies not counted).
    pub bytes_read: u64,
}

/// The text CARLA prints when it cannot open `path` (the path shown as given).
///
/// ```
/// assert_eq!(recfmt_carla::query::not_found_text("x.log"), "File x.log not found on server\n");
/// ```
pub fn not_found_text(path: impl AsRef<Path>) -> String {
    format!("File {} not found on server\n", path.as_ref().display())
}

/// Records what is read through it.
struct Tee<R> {
    inner: R,
    seen: Vec<u8>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.seen.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// Decides the flavour (forced, or detected from the first frame) and returns an input
/// that starts again at byte 0.
fn prepare<R: Read>(
    mut input: R,
    options: &QueryOptions,
) -> io::Result<(Flavour, Cursor<Vec<u8>>, R)> {
    if let Some(f) = options.flavour {
        return Ok((f, Cursor::new(Vec::new()), input));
    }
    let mut tee = Tee {
        inner: &mut input,
        seen: Vec::new(),
    };
    let mut reader = Reader::new(&mut tee).with_limits(options.limits);
    let flavour = match reader.read_header().and_then(|_| reader.detect_flavour()) {
        Ok(f) => f,
        Err(Error::Io(e)) => return Err(e),
        // Not a recorder file, or an unknown version: the query prints what CARLA prints.
        Err(_) => reader.flavour().unwrap_or(Flavour::Carla0912),
    };
    drop(reader);
    let seen = std::mem::take(&mut tee.seen);
    Ok((flavour, Cursor::new(seen), input))
}

fn engine<R: Read>(
    input: R,
    options: &QueryOptions,
) -> io::Result<Engine<io::Chain<Cursor<Vec<u8>>, R>>> {
    let (flavour, head, rest) = prepare(input, options)?;
    let tz = options.time_zone.clone().unwrap_or_else(TimeZone::from_env);
    Ok(Engine::new(head.chain(rest), flavour, tz))
}

fn open(path: &Path) -> Result<BufReader<File>> {
    Ok(BufReader::with_capacity(1 << 16, File::open(path)?))
}

fn engine_error(e: EngineError) -> Error {
    match e {
        EngineError::Io(e) => Error::Io(e),
        EngineError::Unsupported(what) => Error::Io(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("cannot reproduce {what}"),
        )),
        EngineError::StaleLoop(n) => Error::Limit {
            what: "list entries CARLA would print after the end of the file",
            value: n,
            limit: 1 << 16,
            offset: 0,
        },
    }
}

fn not_recorder() -> Error {
    Error::BadMagic {
        offset: 2,
        found: "a different string".into(),
    }
}

/// `show_recorder_file_info(path, show_all)`: writes the server's text to `out`.
///
/// Fails only when the file cannot be opened or read ([`not_found_text`] gives CARLA's
/// message for a missing file) or written; a file that is not a recording prints
/// `File is not a CARLA recorder` and returns a summary with `recorder == false`.
/// The flavour is detected and the time zone read from `TZ`; see [`file_info_from`] to set
/// them.
pub fn file_info(
    path: impl AsRef<Path>,
    show_all: bool,
    out: &mut impl Write,
) -> Result<QuerySummary> {
    file_info_from(
        open(path.as_ref())?,
        show_all,
        &QueryOptions::default(),
        out,
    )
}

/// [`file_info`] over any reader, with options.
pub fn file_info_from<R: Read>(
    input: R,
    show_all: bool,
    options: &QueryOptions,
    out: &mut impl Write,
) -> Result<QuerySummary> {
    let mut e = engine(input, options)?;
    let flavour = e.flavour();
    let r = e.file_info(show_all, None, out).map_err(engine_error);
    e.flush(out, true)?;
    let r = r?;
    Ok(QuerySummary {
        recorder: r.is_some(),
        flavour,
        frames: r.as_ref().map_or(0, |r| r.1),
        duration: r.as_ref().map_or(0.0, |r| r.2),
        bytes_read: e.bytes_read(),
    })
}

/// The events `show_recorder_file_info` without `show_all` prints, as data.
///
/// Fails with [`Error::BadMagic`] for a file that is not a recording.
pub fn file_info_data(path: impl AsRef<Path>) -> Result<FileInfo> {
    file_info_data_from(open(path.as_ref())?, &QueryOptions::default())
}

/// [`file_info_data`] over any reader, with options.
pub fn file_info_data_from<R: Read>(input: R, options: &QueryOptions) -> Result<FileInfo> {
    let mut e = engine(input, options)?;
    let mut frames = Vec::new();
    let r = e
        .file_info(false, Some(&mut frames), &mut io::sink())
        .map_err(engine_error)?;
    let (info, last, duration) = r.ok_or_else(not_recorder)?;
    Ok(FileInfo {
        info,
        flavour: e.flavour().name().to_owned(),
        frames_with_events: frames,
        frames: last,
        duration,
    })
}

/// `show_recorder_collisions(path, type1, type2)`: writes the server's text to `out`.
///
/// The categories are `o` (other), `v` (vehicle), `w` (walker), `t` (traffic light),
/// `h` (hero) and `a` (any). Errors as for [`file_info`].
pub fn collisions(
    path: impl AsRef<Path>,
    type1: char,
    type2: char,
    out: &mut impl Write,
) -> Result<QuerySummary> {
    collisions_from(
        open(path.as_ref())?,
        type1,
        type2,
        &QueryOptions::default(),
        out,
    )
}

/// C++ receives the categories as `char`: a character outside Latin-1 cannot match.
fn category_byte(c: char) -> u8 {
    u8::try_from(u32::from(c)).unwrap_or(0)
}

/// [`collisions`] over any reader, with options.
pub fn collisions_from<R: Read>(
    input: R,
    type1: char,
    type2: char,
    options: &QueryOptions,
    out: &mut impl Write,
) -> Result<QuerySummary> {
    let mut e = engine(input, options)?;
    let flavour = e.flavour();
    let r = e
        .collisions(category_byte(type1), category_byte(type2), out)
        .map_err(engine_error);
    e.flush(out, true)?;
    let r = r?;
    Ok(QuerySummary {
        recorder: r.is_some(),
        flavour,
        frames: r.as_ref().map_or(0, |r| r.2),
        duration: r.as_ref().map_or(0.0, |r| r.3),
        bytes_read: e.bytes_read(),
    })
}

/// The rows of [`collisions`] as data.
pub fn collisions_data(
    path: impl AsRef<Path>,
    type1: char,
    type2: char,
) -> Result<CollisionReport> {
    collisions_data_from(open(path.as_ref())?, type1, type2, &QueryOptions::default())
}

/// [`collisions_data`] over any reader, with options.
pub fn collisions_data_from<R: Read>(
    input: R,
    type1: char,
    type2: char,
    options: &QueryOptions,
) -> Result<CollisionReport> {
    let mut e = engine(input, options)?;
    let (info, rows, frames, duration) = e
        .collisions(category_byte(type1), category_byte(type2), &mut io::sink())
        .map_err(engine_error)?
        .ok_or_else(not_recorder)?;
    Ok(CollisionReport {
        info,
        flavour: e.flavour().name().to_owned(),
        type1,
        type2,
        rows,
        frames,
        duration,
    })
}

/// `show_recorder_actors_blocked(path, min_time, min_distance)`: writes the server's text
/// to `out`. `min_time` is in seconds and `min_distance` in centimetres (CARLA's defaults
/// are 30 and 10; the Python example passes 30 and 100). Errors as for [`file_info`].
pub fn actors_blocked(
    path: impl AsRef<Path>,
    min_time: f64,
    min_distance: f64,
    out: &mut impl Write,
) -> Result<QuerySummary> {
    actors_blocked_from(
        open(path.as_ref())?,
        min_time,
        min_distance,
        &QueryOptions::default(),
        out,
    )
}

/// [`actors_blocked`] over any reader, with options.
pub fn actors_blocked_from<R: Read>(
    input: R,
    min_time: f64,
    min_distance: f64,
    options: &QueryOptions,
    out: &mut impl Write,
) -> Result<QuerySummary> {
    let mut e = engine(input, options)?;
    let flavour = e.flavour();
    let r = e.blocked(min_time, min_distance, out).map_err(engine_error);
    e.flush(out, true)?;
    let r = r?;
    Ok(QuerySummary {
        recorder: r.is_some(),
        flavour,
        frames: r.as_ref().map_or(0, |r| r.2),
        duration: r.as_ref().map_or(0.0, |r| r.3),
        bytes_read: e.bytes_read(),
    })
}

/// The rows of [`actors_blocked`] as data.
pub fn actors_blocked_data(
    path: impl AsRef<Path>,
    min_time: f64,
    min_distance: f64,
) -> Result<BlockedReport> {
    actors_blocked_data_from(
        open(path.as_ref())?,
        min_time,
        min_distance,
        &QueryOptions::default(),
    )
}

/// [`actors_blocked_data`] over any reader, with options.
pub fn actors_blocked_data_from<R: Read>(
    input: R,
    min_time: f64,
    min_distance: f64,
    options: &QueryOptions,
) -> Result<BlockedReport> {
    let mut e = engine(input, options)?;
    let (info, rows, frames, duration) = e
        .blocked(min_time, min_distance, &mut io::sink())
        .map_err(engine_error)?
        .ok_or_else(not_recorder)?;
    Ok(BlockedReport {
        info,
        flavour: e.flavour().name().to_owned(),
        min_time,
        min_distance,
        rows,
        frames,
        duration,
    })
}
