//! CARLA recordings as OpenSCENARIO scenarios (`convert LOG --to xosc -o run.xosc`): the
//! recorded traffic, replayable with scenario_runner or any OpenSCENARIO 1.0/1.2 engine.
//!
//! # What goes where
//!
//! * The map (`Town03`, `Carla/Maps/Town03` or `/Game/Carla/Maps/Town03` in the header) is
//!   the `RoadNetwork`'s `LogicFile`, as the bare level name `Town03` that scenario_runner
//!   hands to `client.load_world` and compares with the last part of `world.get_map().name`.
//! * Each vehicle and walker (EventAdd actor types 1 and 2) is a `ScenarioObject`: a
//!   `Vehicle` or `Pedestrian` named by its blueprint id, every blueprint attribute as a
//!   `Property` (plus `carla_id`, and scenario_runner's `type = ego_vehicle` for the role
//!   names `hero` and `ego_vehicle`). Its name is its `role_name` when no other actor has the
//!   same one, otherwise `vehicle_<id>` / `walker_<id>`. The bounding box is the recorded one
//!   (BoundingBox packets) when there is one.
//! * Its first pose (its first Position record, or the EventAdd transform) is a
//!   `TeleportAction` in `Init`; its Position records are the vertices of a `Polyline`
//!   followed by a `FollowTrajectoryAction` with absolute timing (`Timing
//!   domainAbsoluteRelative="absolute" scale="1" offset="0"`, following mode `position`),
//!   each vertex timed by its frame's elapsed seconds.
//! * An actor spawned after the first frame gets an `AddEntityAction` at its spawn time, and
//!   one destroyed during the recording a `DeleteEntityAction` at that time (events started
//!   by `SimulationTimeCondition`s).
//! * Recorded weather (Weather packets, newest ue4-dev builds) becomes an
//!   `EnvironmentAction`: the first in `Init`, each change as an event at its time.
//! * The storyboard stops (`StopTrigger`) when the simulation time passes the last frame's.
//!
//! # Axes and units
//!
//! CARLA (Unreal) is left-handed: x forward, y right, z up, centimetres, rotations in degrees
//! (yaw turns x towards +y, pitch raises the nose, roll lowers the right side).
//! OpenSCENARIO (ISO 8855) is right-handed: x forward, y left, z up, metres, radians. Mirroring
//! y turns one into the other: `x = X/100`, `y = -Y/100`, `z = Z/100`, `h = -yaw`,
//! `p = -pitch` (a right-handed rotation about y lowers the nose), `r = roll`, angles × π/180.
//! scenario_runner reads `WorldPosition` back with `y = -y`, `yaw = -h`, and takes `p` and
//! `r` unchanged, so a replay there keeps x, y, z and yaw exactly; pitch changes sign (it is
//! near zero on CARLA's flat towns).
//!
//! # Thinning
//!
//! `xosc.step=S` keeps at most one vertex per `S` seconds of an actor's path, and
//! `xosc.tolerance=M` then leaves out every vertex whose position lies within `M` metres of
//! the point the kept vertices give by linear interpolation in time (Douglas-Peucker on the
//! synchronised distance). The first and last vertices are always kept. Both are 0 (off) by
//! default: every Position record becomes a vertex.
//!
//! # Memory
//!
//! The first pass over the file collects the actors, their point counts, the weather and the
//! last time. Trajectories are gathered by later passes, each for as many actors as fit in
//! [`VERTEX_BUDGET`] vertices (one actor at least), so a long recording costs passes rather
//! than memory.

mod document;
mod thin;

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::ops::Range;
use std::path::Path;

use recfmt_core::{
    FormatOption, FormatOptions, Integrity, OptionKind, ReadOptions, ResultExt, WriteOptions,
    Written,
};

use crate::error::Error;
use crate::flavour::Flavour;
use crate::packet::{ActorType, BoundingBox, EventAdd, Packet, Position, Weather};
use crate::primitive::Vector3;

/// Most trajectory vertices held in memory at once (56 bytes each: about 56 MiB).
pub const VERTEX_BUDGET: u64 = 1 << 20;

/// The options of `--to xosc` (`--opt xosc.version=1.2`).
pub(crate) static OPTIONS: [FormatOption; 3] = [
    FormatOption {
        key: "version",
        kind: OptionKind::Choice(&["1.0", "1.2"]),
        default: Some("1.0"),
        help: "OpenSCENARIO version written: 1.0 (what CARLA's scenario_runner runs) or 1.2",
    },
    FormatOption {
        key: "step",
        kind: OptionKind::Number,
        default: Some("0"),
        help: "keep at most one trajectory vertex per this many seconds (0: every frame)",
    },
    FormatOption {
        key: "tolerance",
        kind: OptionKind::Number,
        default: Some("0"),
        help: "leave out vertices within this many metres of the path the kept ones give (0: keep all)",
    },
];

/// The OpenSCENARIO version written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// 1.0, which scenario_runner reads.
    V1_0,
    /// 1.2.
    V1_2,
}

/// What `--opt xosc.*` asked for.
#[derive(Debug, Clone, Copy)]
pub struct XoscOptions {
    /// The version written.
    pub version: Version,
    /// Shortest time between kept vertices, seconds (0: all).
    pub step: f64,
    /// Largest distance of a left-out vertex from the kept path, metres (0: none left out).
    pub tolerance: f64,
}

impl XoscOptions {
    /// The options from the output's resolved `format_options`.
    pub fn from_options(options: &FormatOptions) -> recfmt_core::Result<Self> {
        let version = match options.get("version").unwrap_or("1.0") {
            "1.0" => Version::V1_0,
            "1.2" => Version::V1_2,
            other => {
                return Err(recfmt_core::Error::invalid(format!(
                    "xosc option version={other}: expected 1.0 or 1.2"
                )));
            }
        };
        let number = |key: &str| -> recfmt_core::Result<f64> {
            let value = options.get_f64(key).unwrap_or(0.0);
            if value.is_finite() && value >= 0.0 {
                Ok(value)
            } else {
                Err(recfmt_core::Error::invalid(format!(
                    "xosc option {key}={value}: expected a number of at least 0"
                )))
            }
        };
        Ok(XoscOptions {
            version,
            step: number("step")?,
            tolerance: number("tolerance")?,
        })
    }
}

/// A pose in OpenSCENARIO's axes and units (metres, radians; see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Pose {
    pub x: f64,
    pub y: f64,
    pub z: f64,
    pub h: f64,
    pub p: f64,
    pub r: f64,
}

impl Pose {
    /// A CARLA location (cm) and rotation (roll, pitch, yaw in degrees) in OpenSCENARIO's
    /// right-handed axes; `None` when a value is not finite.
    pub(crate) fn from_carla(location: &Vector3, rotation: &Vector3) -> Option<Pose> {
        let [x, y, z] = location.to_f64();
        let [roll, pitch, yaw] = rotation.to_f64();
        let pose = Pose {
            x: x / 100.0,
            y: -y / 100.0,
            z: z / 100.0,
            h: (-yaw).to_radians(),
            p: (-pitch).to_radians(),
            r: roll.to_radians(),
        };
        [pose.x, pose.y, pose.z, pose.h, pose.p, pose.r]
            .iter()
            .all(|v| v.is_finite())
            .then_some(pose)
    }
}

/// One trajectory vertex: seconds since the first frame, and the pose then.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Vertex {
    pub t: f64,
    pub pose: Pose,
}

/// Vehicle or walker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Vehicle,
    Walker,
}

/// A box in OpenSCENARIO's axes: centre and full dimensions, metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Extent {
    pub center: [f64; 3],
    pub length: f64,
    pub width: f64,
    pub height: f64,
}

impl Extent {
    fn from_carla(b: &BoundingBox) -> Option<Extent> {
        let [ox, oy, oz] = b.origin.to_f64();
        let [ex, ey, ez] = b.extent.to_f64();
        let e = Extent {
            center: [ox / 100.0, -oy / 100.0, oz / 100.0],
            length: 2.0 * ex / 100.0,
            width: 2.0 * ey / 100.0,
            height: 2.0 * ez / 100.0,
        };
        let values = [
            e.center[0],
            e.center[1],
            e.center[2],
            e.length,
            e.width,
            e.height,
        ];
        let plausible = values.iter().all(|v| v.is_finite())
            && e.length > 0.0
            && e.width > 0.0
            && e.height > 0.0;
        plausible.then_some(e)
    }
}

/// One vehicle or walker of the recording, as the first pass found it.
#[derive(Debug, Clone)]
pub(crate) struct Actor {
    pub id: u32,
    pub kind: Kind,
    pub blueprint: String,
    /// Blueprint attributes (id, value), in recorded order.
    pub attributes: Vec<(String, String)>,
    /// The `ScenarioObject` name, unique in the document.
    pub name: String,
    /// Seconds since the first frame when it was created.
    pub spawned: f64,
    /// Seconds since the first frame when it was destroyed, if it was.
    pub deleted: Option<f64>,
    /// Its first pose (first Position record, or the EventAdd transform).
    pub first: Pose,
    /// Position records with a finite pose: the vertices before thinning.
    pub points: u64,
    /// Position records left out because a value was not finite.
    pub skipped: u64,
    /// The recorded bounding box, if any.
    pub extent: Option<Extent>,
}

impl Actor {
    fn role_name(&self) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == "role_name")
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }
}

/// What the first pass found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub map: String,
    /// The recording's date (Unix seconds).
    pub date: i64,
    pub actors: Vec<Actor>,
    /// Weather records (time, record), each different from the one before.
    pub weather: Vec<(f64, Weather)>,
    /// Seconds from the first to the last frame.
    pub end: f64,
    pub frames: u64,
    pub integrity: Integrity,
}

/// One thing the walk over the packets reports, with the actor's index in [`Scan::actors`].
enum Step<'a> {
    Added(usize, &'a EventAdd, Kind, f64),
    Deleted(usize, f64),
    Position(usize, &'a Position, f64),
    BoundingBox(usize, &'a BoundingBox),
    Weather(&'a Weather, f64),
    Frame(f64),
}

/// Reads every packet of `path` once (the crate's one packet reader, torn tails kept out and
/// reported in `integrity`), following which actor index each recorded id stands for, and
/// hands vehicles' and walkers' events to `on`. Returns the header's map and date.
fn walk(
    path: &Path,
    read: &ReadOptions,
    flavour: Option<Flavour>,
    integrity: &mut Integrity,
    mut on: impl FnMut(Step<'_>),
) -> Result<(String, i64), Error> {
    let file = BufReader::with_capacity(crate::io::FILE_BUFFER, File::open(path)?);
    let mut reader = crate::Reader::new(file)
        .with_limits(read.limits)
        .with_flavour(flavour);
    let header = reader.read_header()?;
    let flavour = reader.detect_flavour()?;
    let mut packet = Packet::default();
    // Recorded id -> actor index while the actor lives; indices count vehicle and walker
    // EventAdds in file order, so every pass numbers the actors alike.
    let mut live: HashMap<u32, usize> = HashMap::new();
    let mut next_index = 0usize;
    let (mut first, mut now) = (None::<f64>, 0.0);
    let then = "the scenario ends with the packet before it";
    while reader.read_packet_or_torn(&mut packet, integrity, path, then)? {
        match &packet {
            Packet::FrameStart(frame) => {
                let t0 = *first.get_or_insert(frame.elapsed);
                now = frame.elapsed - t0;
                on(Step::Frame(now));
            }
            Packet::EventAdd(events) => {
                for event in events {
                    let kind = match ActorType::from_byte(event.actor_type, flavour) {
                        ActorType::Vehicle => Kind::Vehicle,
                        ActorType::Walker => Kind::Walker,
                        _ => continue,
                    };
                    live.insert(event.database_id, next_index);
                    on(Step::Added(next_index, event, kind, now));
                    next_index += 1;
                }
            }
            Packet::EventDel(events) => {
                for event in events {
                    if let Some(index) = live.remove(&event.database_id) {
                        on(Step::Deleted(index, now));
                    }
                }
            }
            Packet::Position(records) => {
                for record in records {
                    if let Some(&index) = live.get(&record.database_id) {
                        on(Step::Position(index, record, now));
                    }
                }
            }
            Packet::BoundingBox(records) => {
                for record in records {
                    if let Some(&index) = live.get(&record.database_id) {
                        on(Step::BoundingBox(index, record));
                    }
                }
            }
            Packet::Weather(records) => {
                for weather in records {
                    on(Step::Weather(weather, now));
                }
            }
            _ => {}
        }
    }
    Ok((header.map.to_string_lossy().into_owned(), header.date))
}

/// The first pass: actors, point counts, weather, times.
fn scan(path: &Path, read: &ReadOptions, flavour: Option<Flavour>) -> Result<Scan, Error> {
    let mut scan = Scan::default();
    let mut integrity = Integrity::default();
    let (map, date) = walk(path, read, flavour, &mut integrity, |step| match step {
        Step::Frame(t) => {
            scan.frames += 1;
            scan.end = t;
        }
        Step::Added(index, event, kind, t) => {
            debug_assert_eq!(index, scan.actors.len());
            scan.actors.push(Actor {
                id: event.database_id,
                kind,
                blueprint: text(&event.description.id.to_string_lossy()),
                attributes: event
                    .description
                    .attributes
                    .iter()
                    .map(|a| {
                        (
                            text(&a.id.to_string_lossy()),
                            text(&a.value.to_string_lossy()),
                        )
                    })
                    .collect(),
                name: String::new(),
                spawned: t,
                deleted: None,
                first: Pose::from_carla(&event.location, &event.rotation).unwrap_or_default(),
                points: 0,
                skipped: 0,
                extent: None,
            });
        }
        Step::Deleted(index, t) => {
            if let Some(actor) = scan.actors.get_mut(index) {
                actor.deleted = Some(t);
            }
        }
        Step::Position(index, record, _) => {
            if let Some(actor) = scan.actors.get_mut(index) {
                match Pose::from_carla(&record.location, &record.rotation) {
                    Some(pose) => {
                        if actor.points == 0 {
                            actor.first = pose;
                        }
                        actor.points += 1;
                    }
                    None => actor.skipped += 1,
                }
            }
        }
        Step::BoundingBox(index, record) => {
            if let Some(actor) = scan.actors.get_mut(index)
                && actor.extent.is_none()
            {
                actor.extent = Extent::from_carla(record);
            }
        }
        Step::Weather(weather, t) => {
            if scan.weather.last().is_none_or(|(_, w)| w != weather) {
                scan.weather.push((t, *weather));
            }
        }
    })?;
    scan.map = map;
    scan.date = date;
    scan.integrity = integrity;
    name_actors(&mut scan.actors);
    Ok(scan)
}

/// Unique `ScenarioObject` names: the role name when no other actor has it, else
/// `vehicle_<id>` / `walker_<id>` (with `_2`, `_3`, … for an id used again).
fn name_actors(actors: &mut [Actor]) {
    let mut roles: HashMap<String, usize> = HashMap::new();
    for actor in actors.iter() {
        if let Some(role) = actor.role_name() {
            *roles.entry(role.to_owned()).or_default() += 1;
        }
    }
    let mut used = HashSet::new();
    for actor in actors.iter_mut() {
        let base = match actor.role_name() {
            Some(role) if roles.get(role) == Some(&1) => role.to_owned(),
            _ => match actor.kind {
                Kind::Vehicle => format!("vehicle_{}", actor.id),
                Kind::Walker => format!("walker_{}", actor.id),
            },
        };
        let mut name = base.clone();
        let mut n = 2;
        while !used.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        actor.name = name;
    }
}

/// Text as XML 1.0 may hold it: characters it forbids become U+FFFD.
fn text(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// The map as scenario_runner names it: the level's last path part, without `.umap`.
pub(crate) fn level_name(map: &str) -> &str {
    let last = map.rsplit(['/', '\\']).next().unwrap_or(map);
    let last = last.strip_suffix(".umap").unwrap_or(last);
    if last.is_empty() { map } else { last }
}

/// Consecutive ranges of actors whose points together stay within `budget` (an actor with
/// more points than the budget gets a range of its own).
fn batches(points: impl IntoIterator<Item = u64>, budget: u64) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut sum, mut len) = (0usize, 0u64, 0usize);
    for (i, n) in points.into_iter().enumerate() {
        if i > start && sum.saturating_add(n) > budget {
            out.push(start..i);
            start = i;
            sum = 0;
        }
        sum = sum.saturating_add(n);
        len = i + 1;
    }
    if len > start {
        out.push(start..len);
    }
    out
}

/// A later pass: the vertices of the actors in `range`.
fn gather(
    path: &Path,
    read: &ReadOptions,
    flavour: Option<Flavour>,
    actors: &[Actor],
    range: Range<usize>,
) -> Result<Vec<Vec<Vertex>>, Error> {
    let mut tracks: Vec<Vec<Vertex>> = actors[range.clone()]
        .iter()
        .map(|a| Vec::with_capacity(usize::try_from(a.points.min(VERTEX_BUDGET)).unwrap_or(0)))
        .collect();
    let mut ignored = Integrity::default();
    walk(path, read, flavour, &mut ignored, |step| {
        if let Step::Position(index, record, t) = step
            && range.contains(&index)
            && let Some(pose) = Pose::from_carla(&record.location, &record.rotation)
        {
            tracks[index - range.start].push(Vertex { t, pose });
        }
    })?;
    Ok(tracks)
}

/// `convert --to xosc`: writes `output` from the CARLA log at `input`, under a temporary
/// name until complete.
pub(crate) fn write_xosc(
    input: &Path,
    output: &Path,
    read: &ReadOptions,
    write: &WriteOptions,
) -> recfmt_core::Result<Written> {
    let options = XoscOptions::from_options(&write.format_options)?;
    let flavour = crate::format::build_option(&read.format_options)?;
    let scan = scan(input, read, flavour)
        .map_err(recfmt_core::Error::from)
        .in_file(input)?;
    let file = recfmt_core::AtomicFile::create(output, write.replace).in_file(output)?;
    let mut doc = document::Document::new(BufWriter::new(file), options.version);
    let mut kept = 0u64;
    let result = (|| -> recfmt_core::Result<()> {
        doc.begin(&scan, input).in_file(output)?;
        for range in batches(scan.actors.iter().map(|a| a.points), VERTEX_BUDGET) {
            let tracks = gather(input, read, flavour, &scan.actors, range.clone())
                .map_err(recfmt_core::Error::from)
                .in_file(input)?;
            for (actor, track) in scan.actors[range].iter().zip(tracks) {
                let track = thin::thin(track, options.step, options.tolerance);
                kept += track.len() as u64;
                doc.actor_group(actor, &track).in_file(output)?;
            }
        }
        doc.end(&scan).in_file(output)
    })();
    result?;
    let file = doc
        .into_inner()
        .into_inner()
        .map_err(|e| e.into_error())
        .in_file(output)?;
    file.commit().in_file(output)?;
    let points: u64 = scan.actors.iter().map(|a| a.points).sum();
    let mut notes = vec![format!(
        "wrote {} (OpenSCENARIO {}, map {}, {} actors, {} of {} trajectory points, {:.3} s)",
        output.display(),
        match options.version {
            Version::V1_0 => "1.0",
            Version::V1_2 => "1.2",
        },
        level_name(&scan.map),
        scan.actors.len(),
        kept,
        points,
        scan.end
    )];
    let skipped: u64 = scan.actors.iter().map(|a| a.skipped).sum();
    if skipped > 0 {
        notes.push(format!(
            "note: {skipped} Position records with values that are not finite were left out"
        ));
    }
    Ok(Written {
        notes,
        integrity: Some(scan.integrity),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_named_as_scenario_runner_loads_them() {
        assert_eq!(level_name("Town03"), "Town03");
        assert_eq!(level_name("Carla/Maps/Town03"), "Town03");
        assert_eq!(
            level_name("/Game/Carla/Maps/Town10HD_Opt.umap"),
            "Town10HD_Opt"
        );
        assert_eq!(level_name(""), "");
    }

    #[test]
    fn batches_stay_within_the_budget_and_cover_every_actor() {
        assert_eq!(batches([3, 3, 3, 10, 1], 6), vec![0..2, 2..3, 3..4, 4..5]);
        assert_eq!(batches([1, 1, 1], 100), vec![0..3]);
        assert!(batches(std::iter::empty(), 10).is_empty());
    }

    #[test]
    fn poses_mirror_y_and_turn_degrees_into_radians() {
        let pose = Pose::from_carla(
            &Vector3::F64([100.0, 250.0, -50.0]),
            &Vector3::F64([10.0, 20.0, 90.0]),
        )
        .unwrap();
        assert_eq!((pose.x, pose.y, pose.z), (1.0, -2.5, -0.5));
        assert!((pose.h + std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert!((pose.p + 20f64.to_radians()).abs() < 1e-12);
        assert!((pose.r - 10f64.to_radians()).abs() < 1e-12);
        assert!(
            Pose::from_carla(&Vector3::F64([f64::NAN, 0.0, 0.0]), &Vector3::default()).is_none()
        );
    }

    #[test]
    fn xml_text_drops_forbidden_characters() {
        assert_eq!(text("a\u{1}b\tc"), "a\u{FFFD}b\tc");
    }
}
