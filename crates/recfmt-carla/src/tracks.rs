//! Recordings from external trajectories: a table of (time, actor id, blueprint, position,
//! rotation) rows becomes a recorder file that CARLA's replayer can play (CARLA issues #5248
//! and #5190).
//!
//! # What is written
//!
//! * The info header (version of the flavour, `CARLA_RECORDER`, date, map).
//! * One frame per distinct time, ids from 1, `elapsed` = time − first time (so the first
//!   frame is at 0, as the recorder writes it), `duration_this` patched to the gap to the
//!   next frame and -1 in the last frame.
//! * In each frame, the packets the recorder writes every frame, in its order
//!   ([`Flavour::frame_order`] without additional data), empty except:
//!   * **EventAdd** for each actor seen for the first time (or again after a gap): its
//!     blueprint, the type the blueprint prefix implies (`vehicle.` 1, `walker.` 2,
//!     `traffic.traffic_light` 3, other `traffic.` 4, `sensor.` 5 from 0.9.12, else 0), the
//!     first location and rotation, the blueprint's numeric `uid`, and a `role_name`
//!     attribute;
//!   * **EventDel** for each actor of the previous frame missing from this one (an actor
//!     is alive from its first row to its last row without gaps; after a gap it is created
//!     again);
//!   * **Position** for every actor of the frame, in row order;
//!   * **VisualTime** (0.9.14+) holds the elapsed time.
//!
//! Positions are given in metres and stored in centimetres (`f32` in UE4 builds, `f64` in
//! UE5); rotations are roll, pitch and yaw in degrees, stored as CARLA stores them (X = roll,
//! Y = pitch, Z = yaw).
//!
//! Replaying: CARLA's replayer spawns each actor from its blueprint. UE4 builds look the
//! blueprint up by its numeric id (`uid`, an index into the server's blueprint definitions);
//! give it in the `uid` column, for instance copied from the `event_add` stream of a
//! recording made with the same server build. Rows without a uid write 0.
//!
//! # Example
//!
//! ```
//! use recfmt_carla::tracks::{TrackRow, write_log_from_tracks};
//! use recfmt_carla::Flavour;
//!
//! let rows = (0..3).map(|i| TrackRow {
//!     time: f64::from(i) * 0.05,
//!     id: 7,
//!     blueprint: "vehicle.tesla.model3".into(),
//!     x: 10.0 + f64::from(i),
//!     ..TrackRow::default()
//! });
//! let mut out = std::io::Cursor::new(Vec::new());
//! let summary = write_log_from_tracks(rows, Flavour::Carla0912, &mut out)?;
//! assert_eq!((summary.frames, summary.actors), (3, 1));
//! let index = recfmt_carla::index_frames(&out.get_ref()[..], &Default::default())?;
//! assert_eq!(index.frames.len(), 3);
//! assert_eq!(index.frames[2].duration_this, -1.0);
//! # Ok::<(), recfmt_carla::Error>(())
//! ```

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::flavour::{Flavour, PacketKind};
use crate::header::Header;
use crate::io::Writer;
use crate::packet::{ActorAttribute, ActorDescription, EventAdd, EventDel, Packet, Position};
use crate::primitive::Vector3;

/// One sample of one actor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrackRow {
    /// Seconds (any origin; rows must not go back in time).
    pub time: f64,
    /// Actor id (the recording's database id).
    pub id: u32,
    /// Blueprint id, e.g. `vehicle.tesla.model3`; used when the actor is first seen.
    pub blueprint: String,
    /// X in metres.
    pub x: f64,
    /// Y in metres.
    pub y: f64,
    /// Z in metres.
    pub z: f64,
    /// Roll in degrees.
    pub roll: f64,
    /// Pitch in degrees.
    pub pitch: f64,
    /// Yaw in degrees.
    pub yaw: f64,
    /// Numeric blueprint id the replayer spawns by (0 when unknown).
    pub uid: u32,
    /// `role_name` attribute; `None` writes `track_<id>`.
    pub role_name: Option<String>,
}

/// Settings of [`TrackLogWriter`].
#[derive(Debug, Clone)]
pub struct TrackOptions {
    /// The build to write for (ids, layouts, per-frame packets).
    pub flavour: Flavour,
    /// Map name for the header; the replayer loads this map.
    pub map: String,
    /// Header date, Unix seconds.
    pub date: i64,
}

impl TrackOptions {
    /// Options for `flavour`, map `Town01`, dated now.
    pub fn new(flavour: Flavour) -> Self {
        let date = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        TrackOptions {
            flavour,
            map: "Town01".into(),
            date,
        }
    }
}

/// What a conversion wrote.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TrackSummary {
    /// Rows consumed.
    pub rows: u64,
    /// Frames written.
    pub frames: u64,
    /// Distinct actor ids.
    pub actors: u64,
    /// EventAdd records (more than `actors` when actors come back after a gap).
    pub created: u64,
    /// EventDel records.
    pub destroyed: u64,
    /// Seconds of the first row (frame 1 is at elapsed 0).
    pub start_time: f64,
    /// Elapsed seconds of the last frame.
    pub duration: f64,
}

/// The actor type byte a blueprint implies.
fn actor_type(blueprint: &str, flavour: Flavour) -> u8 {
    if blueprint.starts_with("vehicle.") {
        1
    } else if blueprint.starts_with("walker.") {
        2
    } else if blueprint.starts_with("traffic.traffic_light") {
        3
    } else if blueprint.starts_with("traffic.") {
        4
    } else if blueprint.starts_with("sensor.") && flavour != Flavour::Carla0910 {
        5
    } else {
        0
    }
}

/// Writes a recording from rows sorted by time, one row at a time.
///
/// Call [`TrackLogWriter::push`] for each row, then [`TrackLogWriter::finish`]. Needs a
/// seekable output to patch each frame's `duration_this`.
#[derive(Debug)]
pub struct TrackLogWriter<W: Write + Seek> {
    w: Writer<W>,
    flavour: Flavour,
    order: Vec<(PacketKind, bool)>,
    current: Option<f64>,
    pending: Vec<TrackRow>,
    pending_ids: HashSet<u32>,
    alive: Vec<u32>,
    seen: HashSet<u32>,
    summary: TrackSummary,
}

impl<W: Write + Seek> TrackLogWriter<W> {
    /// Writes the header and prepares the first frame.
    pub fn new(out: W, options: &TrackOptions) -> Result<Self> {
        let mut w = Writer::new(out, options.flavour);
        let mut header = Header::new(options.map.as_str(), options.date);
        header.version = options.flavour.header_version();
        w.write_header(&header)?;
        Ok(TrackLogWriter {
            w,
            flavour: options.flavour,
            order: options.flavour.frame_order(false),
            current: None,
            pending: Vec::new(),
            pending_ids: HashSet::new(),
            alive: Vec::new(),
            seen: HashSet::new(),
            summary: TrackSummary::default(),
        })
    }

    /// Adds one row. Fails (naming the row by its 1-based number) when its time is not a
    /// finite number, goes back in time, or repeats an actor id at the same time.
    pub fn push(&mut self, row: TrackRow) -> Result<()> {
        self.summary.rows += 1;
        let n = self.summary.rows;
        let bad = |what: String| Error::Tracks {
            location: format!("row {n}"),
            what,
        };
        if !row.time.is_finite() {
            return Err(bad(format!("time {} is not a finite number", row.time)));
        }
        let width = self.flavour.vector_width();
        let fits = |[x, y, z]: [f64; 3]| Vector3::checked(width, x, y, z).is_some();
        if !fits([row.x * 100.0, row.y * 100.0, row.z * 100.0])
            || !fits([row.roll, row.pitch, row.yaw])
        {
            return Err(bad(format!(
                "position ({}, {}, {}) m or rotation ({}, {}, {})° does not fit the 32-bit floats of CARLA {}",
                row.x,
                row.y,
                row.z,
                row.roll,
                row.pitch,
                row.yaw,
                self.flavour.name()
            )));
        }
        match self.current {
            Some(t) if row.time < t => {
                return Err(bad(format!(
                    "time {} is earlier than the previous row's {t}: rows must be sorted by time",
                    row.time
                )));
            }
            Some(t) if row.time > t => self.flush_frame()?,
            Some(_) => {}
            None => self.summary.start_time = row.time,
        }
        self.current = Some(row.time);
        if !self.pending_ids.insert(row.id) {
            return Err(bad(format!(
                "actor {} appears twice at time {}",
                row.id, row.time
            )));
        }
        if self.seen.insert(row.id) {
            self.summary.actors += 1;
        }
        self.pending.push(row);
        Ok(())
    }

    fn flush_frame(&mut self) -> Result<()> {
        let Some(time) = self.current else {
            return Ok(());
        };
        let elapsed = time - self.summary.start_time;
        self.summary.frames += 1;
        self.summary.duration = elapsed;
        let width = self.flavour.vector_width();
        let cm = |v: f64| v * 100.0;
        let alive: HashSet<u32> = self.alive.iter().copied().collect();
        let mut adds = Vec::new();
        let mut positions = Vec::with_capacity(self.pending.len());
        for r in &self.pending {
            let location = Vector3::new(width, cm(r.x), cm(r.y), cm(r.z));
            let rotation = Vector3::new(width, r.roll, r.pitch, r.yaw);
            if !alive.contains(&r.id) {
                let string_type = if self.flavour.header_version() >= 2 {
                    4
                } else {
                    3
                };
                let role = r
                    .role_name
                    .clone()
                    .unwrap_or_else(|| format!("track_{}", r.id));
                adds.push(EventAdd {
                    database_id: r.id,
                    actor_type: actor_type(&r.blueprint, self.flavour),
                    location,
                    rotation,
                    description: ActorDescription {
                        uid: r.uid,
                        id: r.blueprint.as_str().into(),
                        attributes: vec![ActorAttribute {
                            kind: string_type,
                            id: "role_name".into(),
                            value: role.into(),
                        }],
                    },
                });
            }
            positions.push(Position {
                database_id: r.id,
                location,
                rotation,
            });
        }
        let mut dels: Vec<EventDel> = self
            .alive
            .iter()
            .filter(|id| !self.pending_ids.contains(id))
            .map(|&database_id| EventDel { database_id })
            .collect();
        dels.sort_by_key(|d| d.database_id);
        self.summary.created += adds.len() as u64;
        self.summary.destroyed += dels.len() as u64;

        let mut adds = Some(adds);
        let mut dels = Some(dels);
        let mut positions = Some(positions);
        for &(kind, always) in &self.order {
            let packet = match kind {
                PacketKind::FrameStart => {
                    self.w.begin_frame(self.summary.frames, elapsed)?;
                    continue;
                }
                PacketKind::FrameEnd => Packet::FrameEnd,
                PacketKind::VisualTime => Packet::VisualTime(elapsed),
                PacketKind::EventAdd => Packet::EventAdd(adds.take().unwrap_or_default()),
                PacketKind::EventDel => Packet::EventDel(dels.take().unwrap_or_default()),
                PacketKind::Position => Packet::Position(positions.take().unwrap_or_default()),
                _ if !always => continue,
                k => empty_packet(k),
            };
            self.w.write_packet(&packet)?;
        }
        self.alive = self.pending.iter().map(|r| r.id).collect();
        self.pending.clear();
        self.pending_ids.clear();
        Ok(())
    }

    /// Writes the last frame, flushes, and returns the output and a summary.
    pub fn finish(mut self) -> Result<(W, TrackSummary)> {
        self.flush_frame()?;
        let summary = self.summary;
        Ok((self.w.into_inner()?, summary))
    }
}

/// An "always" packet with no records.
pub(crate) fn empty_packet(kind: PacketKind) -> Packet {
    match kind {
        PacketKind::FrameStart => Packet::FrameStart(Default::default()),
        PacketKind::FrameEnd => Packet::FrameEnd,
        PacketKind::EventAdd => Packet::EventAdd(Vec::new()),
        PacketKind::EventDel => Packet::EventDel(Vec::new()),
        PacketKind::EventParent => Packet::EventParent(Vec::new()),
        PacketKind::Collision => Packet::Collision(Vec::new()),
        PacketKind::Position => Packet::Position(Vec::new()),
        PacketKind::TrafficLight => Packet::TrafficLight(Vec::new()),
        PacketKind::VehicleAnim => Packet::VehicleAnim(Vec::new()),
        PacketKind::WalkerAnim => Packet::WalkerAnim(Vec::new()),
        PacketKind::VehicleLight => Packet::VehicleLight(Vec::new()),
        PacketKind::SceneLight => Packet::SceneLight(Vec::new()),
        PacketKind::Kinematics => Packet::Kinematics(Vec::new()),
        PacketKind::BoundingBox => Packet::BoundingBox(Vec::new()),
        PacketKind::PlatformTime => Packet::PlatformTime(0.0),
        PacketKind::PhysicsControl => Packet::PhysicsControl(Vec::new()),
        PacketKind::TrafficLightTime => Packet::TrafficLightTime(Vec::new()),
        PacketKind::TriggerVolume => Packet::TriggerVolume(Vec::new()),
        PacketKind::FrameCounter => Packet::FrameCounter(0),
        PacketKind::WalkerBones => Packet::WalkerBones(Vec::new()),
        PacketKind::VisualTime => Packet::VisualTime(0.0),
        PacketKind::VehicleWheels => Packet::VehicleWheels(Vec::new()),
        PacketKind::BikerAnim => Packet::BikerAnim(Vec::new()),
        PacketKind::VehicleDoor => Packet::VehicleDoor(Vec::new()),
        PacketKind::Weather => Packet::Weather(Vec::new()),
    }
}

/// Writes a recording for `flavour` from rows sorted by time (map `Town01`, dated now; use
/// [`TrackLogWriter`] to choose). Returns a summary; `out` holds the file.
pub fn write_log_from_tracks<W: Write + Seek>(
    rows: impl IntoIterator<Item = TrackRow>,
    flavour: Flavour,
    out: W,
) -> Result<TrackSummary> {
    let mut w = TrackLogWriter::new(out, &TrackOptions::new(flavour))?;
    for row in rows {
        w.push(row)?;
    }
    Ok(w.finish()?.1)
}

/// The columns a tracks CSV needs.
pub const CSV_COLUMNS: [&str; 9] = [
    "time",
    "id",
    "blueprint",
    "x",
    "y",
    "z",
    "roll",
    "pitch",
    "yaw",
];

/// Reads a tracks CSV row by row.
///
/// The first line names the columns: `time` (s), `id` (unsigned integer), `blueprint`,
/// `x`, `y`, `z` (m), `roll`, `pitch`, `yaw` (deg), in any order and any case; optional
/// `uid` (unsigned integer) and `role_name`; other columns are ignored. The separator is
/// `,` (or `;` or a tab when the header line has no comma). Fields may be quoted with `"`
/// (`""` inside quotes is a quote); a field cannot span lines. Blank lines and lines
/// starting with `#` are skipped. A bad value fails with [`Error::Tracks`] naming the line
/// and column.
///
/// ```
/// use recfmt_carla::tracks::TrackCsvReader;
/// let csv = "time,id,blueprint,x,y,z,roll,pitch,yaw,speed\n0.5,7,vehicle.audi.tt,1,2,0.1,0,0,90,3.2\n";
/// let rows: Vec<_> = TrackCsvReader::new(csv.as_bytes())?.collect::<Result<_, _>>()?;
/// assert_eq!(rows[0].yaw, 90.0);
/// assert_eq!(rows[0].blueprint, "vehicle.audi.tt");
/// let bad = "time,id,blueprint,x,y,z,roll,pitch,yaw\n0,x,v,0,0,0,0,0,0\n";
/// let err = TrackCsvReader::new(bad.as_bytes())?.next().unwrap().unwrap_err();
/// assert_eq!(err.to_string(), "tracks input, line 2: column id: \"x\" is not an unsigned integer");
/// # Ok::<(), recfmt_carla::Error>(())
/// ```
#[derive(Debug)]
pub struct TrackCsvReader<R> {
    input: R,
    line: u64,
    separator: u8,
    columns: [usize; 9],
    uid: Option<usize>,
    role: Option<usize>,
    buf: String,
    fields: Vec<String>,
    done: bool,
}

/// Opens a tracks CSV file; see [`TrackCsvReader`] for the columns.
pub fn read_tracks_csv(path: impl AsRef<Path>) -> Result<TrackCsvReader<BufReader<File>>> {
    TrackCsvReader::new(BufReader::new(File::open(path)?))
}

fn split_fields(line: &str, sep: u8, out: &mut Vec<String>) -> std::result::Result<(), String> {
    out.clear();
    let bytes = line.as_bytes();
    let mut i = 0;
    loop {
        let mut field = Vec::new();
        if bytes.get(i) == Some(&b'"') {
            i += 1;
            loop {
                match bytes.get(i) {
                    None => return Err("unterminated quoted field".into()),
                    Some(b'"') if bytes.get(i + 1) == Some(&b'"') => {
                        field.push(b'"');
                        i += 2;
                    }
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(&c) => {
                        field.push(c);
                        i += 1;
                    }
                }
            }
            while bytes.get(i).is_some_and(|&c| c != sep) {
                i += 1;
            }
        } else {
            while let Some(&c) = bytes.get(i) {
                if c == sep {
                    break;
                }
                field.push(c);
                i += 1;
            }
        }
        out.push(String::from_utf8_lossy(&field).trim().to_owned());
        if i >= bytes.len() {
            return Ok(());
        }
        i += 1;
    }
}

impl<R: BufRead> TrackCsvReader<R> {
    /// Reads the header line.
    pub fn new(mut input: R) -> Result<Self> {
        let mut buf = String::new();
        let mut line = 0u64;
        loop {
            buf.clear();
            if input.read_line(&mut buf)? == 0 {
                return Err(Error::Tracks {
                    location: "line 1".into(),
                    what: format!("no header line (expected {})", CSV_COLUMNS.join(",")),
                });
            }
            line += 1;
            let t = buf.trim();
            if !t.is_empty() && !t.starts_with('#') {
                break;
            }
        }
        let header = buf
            .trim_end_matches(['\n', '\r'])
            .trim_start_matches('\u{feff}');
        let separator = if header.contains(',') {
            b','
        } else if header.contains(';') {
            b';'
        } else if header.contains('\t') {
            b'\t'
        } else {
            b','
        };
        let mut names = Vec::new();
        split_fields(header, separator, &mut names).map_err(|what| Error::Tracks {
            location: format!("line {line}"),
            what,
        })?;
        let find = |name: &str| names.iter().position(|n| n.eq_ignore_ascii_case(name));
        let mut columns = [0usize; 9];
        let mut missing = Vec::new();
        for (slot, name) in columns.iter_mut().zip(CSV_COLUMNS) {
            match find(name) {
                Some(i) => *slot = i,
                None => missing.push(name),
            }
        }
        if !missing.is_empty() {
            return Err(Error::Tracks {
                location: format!("line {line}"),
                what: format!(
                    "missing column(s) {} (need {})",
                    missing.join(", "),
                    CSV_COLUMNS.join(",")
                ),
            });
        }
        Ok(TrackCsvReader {
            input,
            line,
            separator,
            columns,
            uid: find("uid"),
            role: find("role_name"),
            buf,
            fields: Vec::new(),
            done: false,
        })
    }

    fn parse_row(&self) -> std::result::Result<TrackRow, String> {
        let get = |i: usize| self.fields.get(i).map_or("", String::as_str);
        let col = |k: usize| get(self.columns[k]);
        let float = |k: usize| -> std::result::Result<f64, String> {
            let v = col(k);
            v.parse::<f64>()
                .map_err(|_| format!("column {}: {v:?} is not a number", CSV_COLUMNS[k]))
        };
        let id_text = col(1);
        let id = id_text
            .parse::<u32>()
            .map_err(|_| format!("column id: {id_text:?} is not an unsigned integer"))?;
        let uid = match self.uid.map(get).filter(|s| !s.is_empty()) {
            Some(u) => u
                .parse::<u32>()
                .map_err(|_| format!("column uid: {u:?} is not an unsigned integer"))?,
            None => 0,
        };
        let blueprint = col(2);
        if blueprint.is_empty() {
            return Err("column blueprint: empty".into());
        }
        Ok(TrackRow {
            time: float(0)?,
            id,
            blueprint: blueprint.to_owned(),
            x: float(3)?,
            y: float(4)?,
            z: float(5)?,
            roll: float(6)?,
            pitch: float(7)?,
            yaw: float(8)?,
            uid,
            role_name: self
                .role
                .map(get)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        })
    }
}

impl<R: BufRead> Iterator for TrackCsvReader<R> {
    type Item = Result<TrackRow>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            match self.input.read_line(&mut self.buf) {
                Ok(0) => self.done = true,
                Ok(_) => {
                    self.line += 1;
                    let t = self.buf.trim();
                    if t.is_empty() || t.starts_with('#') {
                        continue;
                    }
                    let line = self.buf.trim_end_matches(['\n', '\r']).to_owned();
                    let location = format!("line {}", self.line);
                    let r = split_fields(&line, self.separator, &mut self.fields)
                        .and_then(|()| self.parse_row());
                    return Some(r.map_err(|what| Error::Tracks { location, what }));
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e.into()));
                }
            }
        }
        None
    }
}
