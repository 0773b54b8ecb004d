//! The three queries, following the control flow of `CarlaRecorderQuery.cpp`.
//!
//! The C++ keeps one record object per packet kind (members of the query object) and reads
//! every field with `istream::read`. The engine keeps the same records as byte arrays in
//! their packed layout, so that short reads at the end of a file leave the same stale values
//! the server prints. Locals that C++ leaves uninitialised start at zero.

use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Write};

use crate::flavour::{Flavour, PacketKind, VectorWidth, WheelPhysicsLayout};

use super::cfmt::{format_f, push_g, push_padded};
use super::hashmap::LibcxxMap;
use super::localtime::TimeZone;
use super::report::{
    ActorCreated, BlockedRow, CollisionEvent, CollisionRow, FrameEvents, Parenting, RecorderInfo,
};
use super::stream::CStream;

/// Flush the text buffer to the writer beyond this size.
const FLUSH_AT: usize = 1 << 16;
/// Most default-valued list entries emitted after the stream failed (a garbage count at the
/// end of a truncated file would make CARLA loop up to 2^32 times).
const MAX_STALE_ENTRIES: u64 = 1 << 16;

/// How the text of a build differs.
#[derive(Debug, Clone, Copy)]
struct Style {
    /// `Rotation: (` and `Brake: ` (0.9.15+) instead of `Rotation (` and `Brake `.
    colons: bool,
    /// The query prints WalkerBones (0.9.14+).
    bones: bool,
    /// A blank line after each Walkers Bones block.
    bones_blank: bool,
    /// A blank line at every FrameEnd, and a Weather block even without `show_all`
    /// (newest ue4-dev).
    weather_build: bool,
}

impl Style {
    fn of(f: Flavour) -> Style {
        match f {
            Flavour::Carla0910 | Flavour::Carla0912 => Style {
                colons: false,
                bones: false,
                bones_blank: false,
                weather_build: false,
            },
            Flavour::Carla0914 => Style {
                colons: false,
                bones: true,
                bones_blank: true,
                weather_build: false,
            },
            Flavour::Carla0915 | Flavour::Ue4DevDoor21 | Flavour::Carla0916 | Flavour::Ue5 => {
                Style {
                    colons: true,
                    bones: true,
                    bones_blank: true,
                    weather_build: false,
                }
            }
            Flavour::Ue4DevWeather => Style {
                colons: true,
                bones: true,
                bones_blank: false,
                weather_build: true,
            },
        }
    }
}

/// An error the engine cannot reproduce the server's output for.
#[derive(Debug)]
pub(crate) enum EngineError {
    Io(io::Error),
    Unsupported(&'static str),
    StaleLoop(u64),
}

impl From<io::Error> for EngineError {
    fn from(e: io::Error) -> Self {
        EngineError::Io(e)
    }
}

type EResult<T> = Result<T, EngineError>;

/// A table query's result: the header, the rows, the last frame id and elapsed time; `None`
/// when the file is not a recording.
pub(crate) type Table<T> = Option<(RecorderInfo, Vec<T>, u64, f64)>;

fn arr<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[at..at + N]);
    a
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(arr(b, at))
}

fn f32_at(b: &[u8], at: usize) -> f64 {
    f64::from(f32::from_le_bytes(arr(b, at)))
}

fn f32_raw(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes(arr(b, at))
}

fn f64_at(b: &[u8], at: usize) -> f64 {
    f64::from_le_bytes(arr(b, at))
}

/// Text as `TCHAR_TO_UTF8(UTF8_TO_TCHAR(bytes))` gives it back: valid UTF-8 unchanged,
/// each invalid sequence replaced by `?` (Unreal's bogus-character code point).
pub(crate) fn ue_text(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        s.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            s.push('?');
        }
    }
    s
}

/// The actor categories of the collision query, indexed by actor type.
const CATEGORIES: [u8; 6] = *b"ovwtha";

/// The state the query object carries from packet to packet.
#[derive(Debug, Default)]
struct EventAddRec {
    id: [u8; 4],
    kind: [u8; 1],
    location: [u8; 24],
    rotation: [u8; 24],
    uid: [u8; 4],
    blueprint: Vec<u8>,
    attributes: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Default values of a `carla::rpc::GearPhysicsControl` (ratio, down, up).
const GEAR_DEFAULT: [f32; 3] = [1.0, 0.5, 0.65];
/// Default values of a `carla::rpc::WheelPhysicsControl` (six floats, three stiffness values,
/// position).
const WHEEL_DEFAULT: [f32; 12] = [
    2.0, 0.25, 70.0, 30.0, 1500.0, 3000.0, 2.0, 17.0, 1000.0, 0.0, 0.0, 0.0,
];

/// The query interpreter over one input.
pub(crate) struct Engine<R> {
    s: CStream<R>,
    flavour: Flavour,
    style: Style,
    vs: usize,
    tz: TimeZone,
    /// Text produced and not yet written.
    pub(crate) out: Vec<u8>,
    hdr_id: [u8; 1],
    hdr_size: [u8; 4],
    frame: [u8; 24],
    total: [u8; 2],
    version: [u8; 2],
    magic: Vec<u8>,
    date: [u8; 8],
    map: Vec<u8>,
    add: EventAddRec,
    del: [u8; 4],
    parent: [u8; 8],
    collision: [u8; 14],
    position: [u8; 52],
    traffic: [u8; 10],
    vehicle: [u8; 21],
    walker: [u8; 8],
    door: [u8; 6],
    light: [u8; 8],
    scene: [u8; 26],
    kinematics: [u8; 52],
    bbox: [u8; 52],
    platform: [u8; 8],
    physics_id: [u8; 4],
    tl_time: [u8; 16],
    bones_id: [u8; 4],
    weather: [u8; 56],
}

impl<R: Read> Engine<R> {
    pub(crate) fn new(input: R, flavour: Flavour, tz: TimeZone) -> Self {
        Engine {
            s: CStream::new(input),
            flavour,
            style: Style::of(flavour),
            vs: flavour.vector_width().vector_size(),
            tz,
            out: Vec::with_capacity(FLUSH_AT + 4096),
            hdr_id: [0],
            hdr_size: [0; 4],
            frame: [0; 24],
            total: [0; 2],
            version: [0; 2],
            magic: Vec::new(),
            date: [0; 8],
            map: Vec::new(),
            add: EventAddRec::default(),
            del: [0; 4],
            parent: [0; 8],
            collision: [0; 14],
            position: [0; 52],
            traffic: [0; 10],
            vehicle: [0; 21],
            walker: [0; 8],
            door: [0; 6],
            light: [0; 8],
            scene: [0; 26],
            kinematics: [0; 52],
            bbox: [0; 52],
            platform: [0; 8],
            physics_id: [0; 4],
            tl_time: [0; 16],
            bones_id: [0; 4],
            weather: [0; 56],
        }
    }

    /// The build reproduced.
    pub(crate) fn flavour(&self) -> Flavour {
        self.flavour
    }

    /// Bytes read from the input so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.s.decoded
    }

    /// Writes the buffered text when it is large (or always with `force`).
    pub(crate) fn flush(&mut self, w: &mut dyn Write, force: bool) -> io::Result<()> {
        if force || self.out.len() >= FLUSH_AT {
            w.write_all(&self.out)?;
            self.out.clear();
        }
        Ok(())
    }

    // ----- primitive output -------------------------------------------------------------

    fn text(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }

    fn int(&mut self, v: impl std::fmt::Display) {
        let _ = write!(self.out, "{v}");
    }

    fn g(&mut self, x: f64) {
        push_g(&mut self.out, x, 6);
    }

    fn vec3(&mut self, v: [f64; 3]) {
        self.text("(");
        self.g(v[0]);
        self.text(", ");
        self.g(v[1]);
        self.text(", ");
        self.g(v[2]);
        self.text(")");
    }

    fn vector_at(&self, b: &[u8], at: usize) -> [f64; 3] {
        match self.flavour.vector_width() {
            VectorWidth::F32 => [f32_at(b, at), f32_at(b, at + 4), f32_at(b, at + 8)],
            VectorWidth::F64 => [f64_at(b, at), f64_at(b, at + 8), f64_at(b, at + 16)],
        }
    }

    fn frame_id(&self) -> u64 {
        u64::from_le_bytes(self.frame[..8].try_into().unwrap_or([0; 8]))
    }

    fn frame_duration(&self) -> f64 {
        f64_at(&self.frame, 8)
    }

    fn frame_elapsed(&self) -> f64 {
        f64_at(&self.frame, 16)
    }

    fn read_total(&mut self) -> io::Result<u16> {
        self.total = self.s.value(self.total)?;
        Ok(u16::from_le_bytes(self.total))
    }

    fn skip_packet(&mut self) -> io::Result<()> {
        self.s.skip(u64::from(u32::from_le_bytes(self.hdr_size)))
    }

    /// `ReadHeader`: false when the loop must stop.
    fn read_packet_header(&mut self) -> io::Result<bool> {
        if !self.s.ok() {
            return Ok(false);
        }
        self.hdr_id = self.s.value(self.hdr_id)?;
        self.hdr_size = self.s.value(self.hdr_size)?;
        Ok(true)
    }

    /// The packet kind the build's `switch` matches, if any.
    fn kind(&self) -> Option<PacketKind> {
        self.flavour.kind_of(self.hdr_id[0])
    }

    // ----- header ------------------------------------------------------------------------

    /// `CheckFileInfo`: reads the info header, prints the common header lines, and returns
    /// the header, or `None` (after printing `File is not a CARLA recorder`) for a wrong magic.
    pub(crate) fn check_file_info(&mut self) -> io::Result<Option<RecorderInfo>> {
        self.version = self.s.value(self.version)?;
        let mut magic = std::mem::take(&mut self.magic);
        self.s.fstring(&mut magic)?;
        self.magic = magic;
        self.date = self.s.value(self.date)?;
        let mut map = std::mem::take(&mut self.map);
        self.s.fstring(&mut map)?;
        self.map = map;
        if !self
            .magic
            .eq_ignore_ascii_case(crate::header::MAGIC.as_bytes())
        {
            self.text("File is not a CARLA recorder\n");
            return Ok(None);
        }
        let info = RecorderInfo {
            version: u16::from_le_bytes(self.version),
            map: ue_text(&self.map),
            date: i64::from_le_bytes(self.date),
            date_text: self.tz.format_c_date(i64::from_le_bytes(self.date)),
        };
        let _ = write!(
            self.out,
            "Version: {}\nMap: {}\nDate: {}\n\n",
            info.version, info.map, info.date_text
        );
        Ok(Some(info))
    }

    /// The `Frames:` / `Duration:` footer; `fixed0` when the stream is in `std::fixed` with
    /// precision 0 (the collision query after a row).
    pub(crate) fn footer(&mut self, fixed0: bool) -> (u64, f64) {
        let (id, elapsed) = (self.frame_id(), self.frame_elapsed());
        let _ = write!(self.out, "\nFrames: {id}\nDuration: ");
        if fixed0 {
            self.text(&format_f(elapsed, 0));
        } else {
            self.g(elapsed);
        }
        self.text(" seconds\n");
        (id, elapsed)
    }

    // ----- records -----------------------------------------------------------------------

    fn read_frame(&mut self) -> io::Result<()> {
        self.frame = self.s.value(self.frame)?;
        Ok(())
    }

    fn read_event_add(&mut self) -> io::Result<()> {
        let vs = self.vs;
        let a = &mut self.add;
        a.id = self.s.value(a.id)?;
        a.kind = self.s.value(a.kind)?;
        self.s.read(&mut a.location[..vs])?;
        self.s.read(&mut a.rotation[..vs])?;
        a.uid = self.s.value(a.uid)?;
        self.s.fstring(&mut a.blueprint)?;
        let n = u16::from_le_bytes(self.s.value([0; 2])?);
        a.attributes.clear();
        for _ in 0..n {
            let _kind = self.s.value([0u8; 1])?;
            let mut id = Vec::new();
            let mut value = Vec::new();
            self.s.fstring(&mut id)?;
            self.s.fstring(&mut value)?;
            a.attributes.push((id, value));
        }
        Ok(())
    }

    fn add_id(&self) -> u32 {
        u32::from_le_bytes(self.add.id)
    }

    /// Reads `len` bytes over the front of a stale record.
    fn read_over<const N: usize>(&mut self, mut old: [u8; N], len: usize) -> io::Result<[u8; N]> {
        self.s.read(&mut old[..len])?;
        Ok(old)
    }

    // ----- show_recorder_file_info -------------------------------------------------------

    fn print_frame(&mut self, collect: &mut Option<&mut Vec<FrameEvents>>) {
        let (id, elapsed) = (self.frame_id(), self.frame_elapsed());
        self.text("Frame ");
        self.int(id);
        self.text(" at ");
        self.g(elapsed);
        self.text(" seconds\n");
        if let Some(c) = collect {
            c.push(FrameEvents {
                frame: id,
                elapsed,
                ..FrameEvents::default()
            });
        }
    }

    /// Reads a count and prints the frame line first when it is non-zero.
    fn counted(
        &mut self,
        printed: &mut bool,
        collect: &mut Option<&mut Vec<FrameEvents>>,
        title: Option<&str>,
    ) -> io::Result<u16> {
        let total = self.read_total()?;
        if total > 0 && !*printed {
            self.print_frame(collect);
            *printed = true;
        }
        if let Some(t) = title {
            self.text(t);
            self.int(total);
            self.text("\n");
        }
        Ok(total)
    }

    /// `QueryInfo`. `collect` receives the event lines as data (used without `show_all`).
    pub(crate) fn file_info(
        &mut self,
        show_all: bool,
        mut collect: Option<&mut Vec<FrameEvents>>,
        w: &mut dyn Write,
    ) -> EResult<Option<(RecorderInfo, u64, f64)>> {
        let Some(info) = self.check_file_info()? else {
            return Ok(None);
        };
        let mut printed = false;
        let c = &mut collect;
        while self.read_packet_header()? {
            self.flush(w, false)?;
            let Some(kind) = self.kind() else {
                self.skip_packet()?;
                continue;
            };
            match kind {
                PacketKind::FrameStart => {
                    self.read_frame()?;
                    if show_all {
                        self.print_frame(c);
                        printed = true;
                    } else {
                        printed = false;
                    }
                }
                PacketKind::FrameEnd => {
                    if self.style.weather_build {
                        self.text("\n");
                    }
                }
                PacketKind::EventAdd => {
                    let total = self.counted(&mut printed, c, None)?;
                    for _ in 0..total {
                        self.read_event_add()?;
                        self.print_create(c);
                    }
                }
                PacketKind::EventDel => {
                    let total = self.counted(&mut printed, c, None)?;
                    for _ in 0..total {
                        self.del = self.s.value(self.del)?;
                        let id = u32::from_le_bytes(self.del);
                        let _ = writeln!(self.out, " Destroy {id}");
                        if let Some(f) = c.as_mut().and_then(|v| v.last_mut()) {
                            f.destroyed.push(id);
                        }
                    }
                }
                PacketKind::EventParent => {
                    let total = self.counted(&mut printed, c, None)?;
                    for _ in 0..total {
                        self.parent = self.s.value(self.parent)?;
                        let (child, parent) = (u32_at(&self.parent, 0), u32_at(&self.parent, 4));
                        let _ = writeln!(self.out, " Parenting {child} with {parent} (parent)");
                        if let Some(f) = c.as_mut().and_then(|v| v.last_mut()) {
                            f.parented.push(Parenting { child, parent });
                        }
                    }
                }
                PacketKind::Collision => {
                    let total = self.counted(&mut printed, c, None)?;
                    for _ in 0..total {
                        self.collision = self.s.value(self.collision)?;
                        let b = self.collision;
                        let ev = CollisionEvent {
                            id: u32_at(&b, 0),
                            actor1: u32_at(&b, 4),
                            actor2: u32_at(&b, 8),
                            actor1_hero: b[12] != 0,
                            actor2_hero: b[13] != 0,
                        };
                        let _ = write!(self.out, " Collision id {} between {}", ev.id, ev.actor1);
                        if ev.actor1_hero {
                            self.text(" (hero) ");
                        }
                        let _ = write!(self.out, " with {}", ev.actor2);
                        if ev.actor2_hero {
                            self.text(" (hero) ");
                        }
                        self.text("\n");
                        if let Some(f) = c.as_mut().and_then(|v| v.last_mut()) {
                            f.collisions.push(ev);
                        }
                    }
                }
                PacketKind::Weather if self.style.weather_build => {
                    let total = self.counted(&mut printed, c, Some(" Weathers: "))?;
                    for _ in 0..total {
                        self.weather = self.s.value(self.weather)?;
                        self.print_weather(c);
                    }
                }
                _ if !show_all => self.skip_packet()?,
                kind => self.show_all_block(kind, &mut printed, c)?,
            }
        }
        let (frames, duration) = self.footer(false);
        self.flush(w, true)?;
        Ok(Some((info, frames, duration)))
    }

    fn print_create(&mut self, c: &mut Option<&mut Vec<FrameEvents>>) {
        let id = self.add_id();
        let kind = self.add.kind[0];
        let blueprint = ue_text(&self.add.blueprint);
        let location = self.vector_at(&self.add.location, 0);
        let _ = write!(self.out, " Create {id}: {blueprint} ({kind}) at ");
        self.vec3(location);
        self.text("\n");
        let mut attributes = Vec::new();
        for (k, v) in &self.add.attributes {
            let (k, v) = (ue_text(k), ue_text(v));
            let _ = writeln!(self.out, "  {k} = {v}");
            if c.is_some() {
                attributes.push((k, v));
            }
        }
        if let Some(f) = c.as_mut().and_then(|v| v.last_mut()) {
            f.created.push(ActorCreated {
                id,
                blueprint,
                actor_type: kind,
                location,
                attributes,
            });
        }
    }

    fn print_weather(&mut self, c: &mut Option<&mut Vec<FrameEvents>>) {
        const NAMES: [&str; 14] = [
            "Cloudiness",
            "Precipitation",
            "PrecipitationDeposits",
            "WindIntensity",
            "SunAzimuthAngle",
            "SunAltitudeAngle",
            "FogDensity",
            "FogDistance",
            "FogFalloff",
            "Wetness",
            "ScatteringIntensity",
            "MieScatteringScale",
            "RayleighScatteringScale",
            "DustStorm",
        ];
        let mut values = [0.0; 14];
        self.text(" ");
        for (i, name) in NAMES.iter().enumerate() {
            values[i] = f32_at(&self.weather, 4 * i);
            let _ = write!(self.out, " {name}: ");
            self.g(values[i]);
        }
        self.text("\n");
        if let Some(f) = c.as_mut().and_then(|v| v.last_mut()) {
            f.weathers.push(values);
        }
    }

    /// The blocks printed only with `show_all`.
    fn show_all_block(
        &mut self,
        kind: PacketKind,
        printed: &mut bool,
        c: &mut Option<&mut Vec<FrameEvents>>,
    ) -> EResult<()> {
        let vs = self.vs;
        let colon = if self.style.colons { ":" } else { "" };
        match kind {
            PacketKind::Position => {
                let total = self.counted(printed, c, Some(" Positions: "))?;
                for _ in 0..total {
                    self.position = self.read_over(self.position, 4 + 2 * vs)?;
                    let b = self.position;
                    let _ = write!(self.out, "  Id: {} Location: ", u32_at(&b, 0));
                    self.vec3(self.vector_at(&b, 4));
                    let _ = write!(self.out, " Rotation{colon} ");
                    self.vec3(self.vector_at(&b, 4 + vs));
                    self.text("\n");
                }
            }
            PacketKind::TrafficLight => {
                let total = self.counted(printed, c, Some(" State traffic lights: "))?;
                for _ in 0..total {
                    self.traffic = self.s.value(self.traffic)?;
                    let b = self.traffic;
                    let _ = write!(self.out, "  Id: {} state: ", u32_at(&b, 0));
                    self.out.push(0x30u8.wrapping_add(b[9]));
                    let _ = write!(self.out, " frozen: {} elapsedTime: ", b[4]);
                    self.g(f32_at(&b, 5));
                    self.text("\n");
                }
            }
            PacketKind::VehicleAnim => {
                let total = self.counted(printed, c, Some(" Vehicle animations: "))?;
                for _ in 0..total {
                    self.vehicle = self.s.value(self.vehicle)?;
                    let b = self.vehicle;
                    let _ = write!(self.out, "  Id: {} Steering: ", u32_at(&b, 0));
                    self.g(f32_at(&b, 4));
                    self.text(" Throttle: ");
                    self.g(f32_at(&b, 8));
                    let _ = write!(self.out, " Brake{colon} ");
                    self.g(f32_at(&b, 12));
                    let gear = i32::from_le_bytes(arr(&b, 17));
                    let _ = writeln!(self.out, " Handbrake: {} Gear: {gear}", b[16]);
                }
            }
            PacketKind::WalkerAnim => {
                let total = self.counted(printed, c, Some(" Walker animations: "))?;
                for _ in 0..total {
                    self.walker = self.s.value(self.walker)?;
                    let b = self.walker;
                    let _ = write!(self.out, "  Id: {} speed: ", u32_at(&b, 0));
                    self.g(f32_at(&b, 4));
                    self.text("\n");
                }
            }
            PacketKind::VehicleDoor => {
                let total = self.counted(printed, c, Some(" Vehicle door animations: "))?;
                for _ in 0..total {
                    self.door = self.s.value(self.door)?;
                    let b = self.door;
                    let _ = write!(self.out, "  Id: {}\n  Doors opened: ", u32_at(&b, 0));
                    const DOORS: [&str; 7] = [
                        "Front Left",
                        "Front Right",
                        "Rear Left",
                        "Rear Right",
                        "Hood",
                        "Trunk",
                        "All",
                    ];
                    if let Some(name) = DOORS.get(usize::from(b[4])) {
                        let _ = writeln!(self.out, " {name} ");
                    }
                }
            }
            PacketKind::VehicleLight => {
                let total = self.counted(printed, c, Some(" Vehicle light animations: "))?;
                for _ in 0..total {
                    self.light = self.s.value(self.light)?;
                    let b = self.light;
                    let state = u32_at(&b, 4);
                    const LIGHTS: [(u32, &str); 11] = [
                        (0x1, "Position"),
                        (0x2, "LowBeam"),
                        (0x4, "HighBeam"),
                        (0x8, "Brake"),
                        (0x10, "RightBlinker"),
                        (0x20, "LeftBlinker"),
                        (0x40, "Reverse"),
                        (0x100, "Interior"),
                        (0x80, "Fog"),
                        (0x200, "Special1"),
                        (0x400, "Special2"),
                    ];
                    let names: Vec<&str> = LIGHTS
                        .iter()
                        .filter(|(bit, _)| state & bit != 0)
                        .map(|(_, n)| *n)
                        .collect();
                    let list = if names.is_empty() {
                        "None".to_owned()
                    } else {
                        names.join(" ")
                    };
                    let _ = writeln!(self.out, "  Id: {} {list}", u32_at(&b, 0));
                }
            }
            PacketKind::SceneLight => {
                let total = self.counted(printed, c, Some(" Scene light changes: "))?;
                for _ in 0..total {
                    self.scene = self.s.value(self.scene)?;
                    let b = self.scene;
                    let on = if b[24] != 0 { "True" } else { "False" };
                    let id = i32::from_le_bytes(arr(&b, 0));
                    let _ = write!(self.out, "  Id: {id} enabled: {on} intensity: ");
                    self.g(f32_at(&b, 4));
                    self.text(" RGB_color: ");
                    self.vec3([f32_at(&b, 8), f32_at(&b, 12), f32_at(&b, 16)]);
                    self.text("\n");
                }
            }
            PacketKind::Kinematics => {
                let total = self.counted(printed, c, Some(" Dynamic actors: "))?;
                for _ in 0..total {
                    self.kinematics = self.read_over(self.kinematics, 4 + 2 * vs)?;
                    let b = self.kinematics;
                    let _ = write!(self.out, "  Id: {} linear_velocity: ", u32_at(&b, 0));
                    self.vec3(self.vector_at(&b, 4));
                    self.text(" angular_velocity: ");
                    self.vec3(self.vector_at(&b, 4 + vs));
                    self.text("\n");
                }
            }
            PacketKind::BoundingBox | PacketKind::TriggerVolume => {
                let title = if kind == PacketKind::BoundingBox {
                    " Actor bounding boxes: "
                } else {
                    " Actor trigger volumes: "
                };
                let total = self.counted(printed, c, Some(title))?;
                for _ in 0..total {
                    self.bbox = self.read_over(self.bbox, 4 + 2 * vs)?;
                    let b = self.bbox;
                    let _ = write!(self.out, "  Id: {} origin: ", u32_at(&b, 0));
                    self.vec3(self.vector_at(&b, 4));
                    self.text(" extension: ");
                    self.vec3(self.vector_at(&b, 4 + vs));
                    self.text("\n");
                }
            }
            PacketKind::PlatformTime => {
                if !*printed {
                    self.print_frame(c);
                    *printed = true;
                }
                self.platform = self.s.value(self.platform)?;
                self.text(" Current platform time: ");
                self.g(f64_at(&self.platform, 0));
                self.text("\n");
            }
            PacketKind::PhysicsControl => {
                if self.flavour.wheel_physics() == WheelPhysicsLayout::Opaque {
                    return Err(EngineError::Unsupported(
                        "the UE5 PhysicsControl block of show_all (its records hold raw memory)",
                    ));
                }
                let total = self.counted(printed, c, Some(" Physics Control events: "))?;
                for _ in 0..total {
                    self.physics_record()?;
                }
            }
            PacketKind::TrafficLightTime => {
                let total = self.counted(printed, c, Some(" Traffic Light time events: "))?;
                for _ in 0..total {
                    self.tl_time = self.s.value(self.tl_time)?;
                    let b = self.tl_time;
                    let _ = write!(self.out, "  Id: {} green_time: ", u32_at(&b, 0));
                    self.g(f32_at(&b, 4));
                    self.text(" yellow_time: ");
                    self.g(f32_at(&b, 8));
                    self.text(" red_time: ");
                    self.g(f32_at(&b, 12));
                    self.text("\n");
                }
            }
            PacketKind::WalkerBones if self.style.bones => {
                let total = self.counted(printed, c, Some(" Walkers Bones: "))?;
                for _ in 0..total {
                    self.bones_id = self.s.value(self.bones_id)?;
                    let _ = writeln!(self.out, "  Id: {}", u32::from_le_bytes(self.bones_id));
                    let n = u16::from_le_bytes(self.s.value([0; 2])?);
                    let (mut name, mut loc, mut rot) = (Vec::new(), [0u8; 24], [0u8; 24]);
                    for _ in 0..n {
                        self.s.fstring(&mut name)?;
                        self.s.read(&mut loc[..vs])?;
                        self.s.read(&mut rot[..vs])?;
                        let _ = write!(self.out, "     Bone: \"{}\" relative: Loc", ue_text(&name));
                        self.vec3(self.vector_at(&loc, 0));
                        self.text(" Rot");
                        self.vec3(self.vector_at(&rot, 0));
                        self.text("\n");
                    }
                }
                if self.style.bones_blank {
                    self.text("\n");
                }
            }
            _ => self.skip_packet()?,
        }
        Ok(())
    }

    /// `u32` count of a `ReadStdVector` (0 when the read fails), checked against the
    /// stale-loop bound.
    fn vec_count(&mut self) -> EResult<u32> {
        let n = u32::from_le_bytes(self.s.value([0; 4])?);
        Ok(n)
    }

    fn stale_guard(&self, remaining: u64) -> EResult<()> {
        if !self.s.ok() && remaining > MAX_STALE_ENTRIES {
            return Err(EngineError::StaleLoop(remaining));
        }
        Ok(())
    }

    /// One PhysicsControl record: read into `carla::rpc::VehiclePhysicsControl` defaults,
    /// converted to the engine's `FVehiclePhysicsControl` and back, then printed.
    fn physics_record(&mut self) -> EResult<()> {
        self.physics_id = self.s.value(self.physics_id)?;
        let f = |s: &mut CStream<R>, default: f32| -> io::Result<f32> {
            Ok(f32::from_le_bytes(s.value(default.to_le_bytes())?))
        };
        let max_rpm = f(&mut self.s, 5000.0)?;
        let moi = f(&mut self.s, 1.0)?;
        let damping_full = f(&mut self.s, 0.15)?;
        let damping_engaged = f(&mut self.s, 2.0)?;
        let damping_disengaged = f(&mut self.s, 0.35)?;
        let autobox = self.s.value([1u8])?[0] != 0;
        let clutch = f(&mut self.s, 10.0)?;
        let final_ratio = f(&mut self.s, 4.0)?;
        let mass = f(&mut self.s, 1000.0)?;
        let drag = f(&mut self.s, 0.3)?;
        let mut com = [0f32; 3];
        for v in &mut com {
            *v = f(&mut self.s, 0.0)?;
            // geom::Location → FVector (×100) → geom::Location (×0.01), in float.
            *v = 1e-2f32 * (1e2f32 * *v);
        }
        let torque = self.curve()?;
        let n = self.vec_count()?;
        let mut gears = Vec::new();
        for i in 0..n {
            self.stale_guard(u64::from(n - i))?;
            let mut g = GEAR_DEFAULT;
            for v in &mut g {
                *v = f(&mut self.s, *v)?;
            }
            gears.push(g);
        }
        let steering = self.curve()?;
        let stiffness = self.flavour.wheel_physics() == WheelPhysicsLayout::Wheel48;
        let n = self.vec_count()?;
        let mut wheels = Vec::new();
        for i in 0..n {
            self.stale_guard(u64::from(n - i))?;
            let mut w = WHEEL_DEFAULT;
            for (k, v) in w.iter_mut().enumerate() {
                if stiffness || !(6..9).contains(&k) {
                    *v = f(&mut self.s, *v)?;
                }
            }
            wheels.push(w);
        }

        let id = u32::from_le_bytes(self.physics_id);
        let _ = writeln!(self.out, "  Id: {id}");
        for (name, v) in [
            ("max_rpm", max_rpm),
            ("MOI", moi),
            ("damping_rate_full_throttle", damping_full),
            ("damping_rate_zero_throttle_clutch_engaged", damping_engaged),
            (
                "damping_rate_zero_throttle_clutch_disengaged",
                damping_disengaged,
            ),
        ] {
            let _ = write!(self.out, "   {name} = ");
            self.g(f64::from(v));
            self.text("\n");
        }
        let _ = writeln!(self.out, "   use_gear_auto_box = {autobox}");
        // gear_switch_time is not recorded: the rpc default survives the round trip.
        for (name, v) in [
            ("gear_switch_time", 0.5f32),
            ("clutch_strength", clutch),
            ("final_ratio", final_ratio),
            ("mass", mass),
            ("drag_coefficient", drag),
        ] {
            let _ = write!(self.out, "   {name} = ");
            self.g(f64::from(v));
            self.text("\n");
        }
        self.text("   center_of_mass = ");
        self.vec3(com.map(f64::from));
        self.text("\n   torque_curve =");
        for (x, y) in torque {
            self.text(" (");
            self.g(f64::from(x));
            self.text(", ");
            self.g(f64::from(y));
            self.text(")");
        }
        self.text("\n   steering_curve =");
        for (x, y) in steering {
            self.text(" (");
            self.g(f64::from(x));
            self.text(", ");
            self.g(f64::from(y));
            self.text(")");
        }
        self.text("\n   forward_gears:\n");
        for (i, g) in gears.iter().enumerate() {
            let _ = write!(self.out, "    gear {i}: ratio ");
            self.g(f64::from(g[0]));
            self.text(" down_ratio ");
            self.g(f64::from(g[1]));
            self.text(" up_ratio ");
            self.g(f64::from(g[2]));
            self.text("\n");
        }
        self.text("   wheels:\n");
        for (i, w) in wheels.iter().enumerate() {
            let _ = write!(self.out, "    wheel {i}:");
            for (k, name) in [
                "tire_friction",
                "damping_rate",
                "max_steer_angle",
                "radius",
                "max_brake_torque",
                "max_handbrake_torque",
            ]
            .iter()
            .enumerate()
            {
                let _ = write!(self.out, " {name} ");
                self.g(f64::from(w[k]));
            }
            self.text(" position ");
            self.vec3([f64::from(w[9]), f64::from(w[10]), f64::from(w[11])]);
            self.text("\n");
        }
        Ok(())
    }

    /// A curve as `ReadStdVector<Vector2D>` reads it and `FRichCurve::AddKey` re-sorts it:
    /// each key goes before the first key whose time is not less than its own.
    fn curve(&mut self) -> EResult<Vec<(f32, f32)>> {
        let n = self.vec_count()?;
        let mut keys: Vec<(f32, f32)> = Vec::new();
        for i in 0..n {
            self.stale_guard(u64::from(n - i))?;
            let b = self.s.value([0u8; 8])?;
            let (x, y) = (f32_raw(&b, 0), f32_raw(&b, 4));
            let at = keys
                .iter()
                .position(|k| k.0 >= x || k.0.is_nan() || x.is_nan());
            let at = match at {
                // `Keys[i].Time < InTime` is false for NaN on either side: stop there.
                Some(i) => i,
                None => keys.len(),
            };
            keys.insert(at, (x, y));
        }
        Ok(keys)
    }

    // ----- show_recorder_collisions ------------------------------------------------------

    /// `QueryCollisions`.
    pub(crate) fn collisions(
        &mut self,
        cat1: u8,
        cat2: u8,
        w: &mut dyn Write,
    ) -> EResult<Table<CollisionRow>> {
        let Some(info) = self.check_file_info()? else {
            return Ok(None);
        };
        // Actors by id: (type, blueprint); `Actors[id]` inserts (0, "").
        let mut actors: HashMap<u32, (u8, String)> = HashMap::new();
        let mut old: HashSet<(u32, u32)> = HashSet::new();
        let mut new: HashSet<(u32, u32)> = HashSet::new();
        let mut rows = Vec::new();
        let mut hdr = Vec::new();
        push_padded(&mut hdr, b"Time", 8, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Types", 6, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Id", 6, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Actor 1", 35, false);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Id", 6, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Actor 2", 35, false);
        hdr.push(b'\n');
        self.out.extend_from_slice(&hdr);
        while self.read_packet_header()? {
            self.flush(w, false)?;
            match self.kind() {
                Some(PacketKind::FrameStart) => {
                    self.read_frame()?;
                    old = std::mem::take(&mut new);
                }
                Some(PacketKind::FrameEnd) => {}
                Some(PacketKind::EventAdd) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.read_event_add()?;
                        actors.insert(
                            self.add_id(),
                            (self.add.kind[0], ue_text(&self.add.blueprint)),
                        );
                    }
                }
                Some(PacketKind::EventDel) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.del = self.s.value(self.del)?;
                        // Upstream erases the last *added* id, not the deleted one.
                        actors.remove(&self.add_id());
                    }
                }
                Some(PacketKind::Collision) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.collision = self.s.value(self.collision)?;
                        let b = self.collision;
                        let (id1, id2) = (u32_at(&b, 4), u32_at(&b, 8));
                        let (hero1, hero2) = (b[12] != 0, b[13] != 0);
                        let mut category = |id: u32| -> u8 {
                            if id == u32::MAX {
                                return b'o';
                            }
                            let kind = actors.entry(id).or_default().0;
                            CATEGORIES.get(usize::from(kind)).copied().unwrap_or(b'?')
                        };
                        let (t1, t2) = (category(id1), category(id2));
                        let pass = |cat: u8, t: u8, hero: bool| {
                            cat == b'a' || cat == t || (cat == b'h' && hero)
                        };
                        if pass(cat1, t1, hero1) && pass(cat2, t2, hero2) {
                            if !old.contains(&(id1, id2)) {
                                let name1 = actors.entry(id1).or_default().1.clone();
                                let name2 = actors.entry(id2).or_default().1.clone();
                                let row = CollisionRow {
                                    time: self.frame_elapsed(),
                                    type1: char::from(t1),
                                    type2: char::from(t2),
                                    actor1: id1,
                                    name1,
                                    actor2: id2,
                                    name2,
                                };
                                self.collision_line(&row);
                                rows.push(row);
                            }
                            new.insert((id1, id2));
                        }
                    }
                }
                _ => self.skip_packet()?,
            }
        }
        let (frames, duration) = self.footer(!rows.is_empty());
        self.flush(w, true)?;
        Ok(Some((info, rows, frames, duration)))
    }

    fn collision_line(&mut self, r: &CollisionRow) {
        let o = &mut self.out;
        push_padded(o, format_f(r.time, 0).as_bytes(), 8, true);
        let _ = write!(o, "   {} {}  ", r.type1, r.type2);
        push_padded(o, r.actor1.to_string().as_bytes(), 6, true);
        o.push(b' ');
        push_padded(o, r.name1.as_bytes(), 35, false);
        o.push(b' ');
        push_padded(o, r.actor2.to_string().as_bytes(), 6, true);
        o.push(b' ');
        push_padded(o, r.name2.as_bytes(), 35, false);
        o.push(b'\n');
    }

    // ----- show_recorder_actors_blocked --------------------------------------------------

    /// `QueryBlocked`.
    pub(crate) fn blocked(
        &mut self,
        min_time: f64,
        min_distance: f64,
        w: &mut dyn Write,
    ) -> EResult<Table<BlockedRow>> {
        let Some(info) = self.check_file_info()? else {
            return Ok(None);
        };
        let mut hdr = Vec::new();
        push_padded(&mut hdr, b"Time", 8, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Id", 6, true);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Actor", 35, false);
        hdr.push(b' ');
        push_padded(&mut hdr, b"Duration", 10, true);
        hdr.push(b'\n');
        self.out.extend_from_slice(&hdr);

        let mut actors: LibcxxMap<Blocked> = LibcxxMap::new();
        // `std::multimap<double, std::string, std::greater<double>>`.
        let mut results: Vec<BlockedRow> = Vec::new();
        let insert = |results: &mut Vec<BlockedRow>, row: BlockedRow| {
            let at = results.partition_point(|r| {
                row.duration.partial_cmp(&r.duration) != Some(std::cmp::Ordering::Greater)
            });
            results.insert(at, row);
        };
        let vs = self.vs;
        while self.read_packet_header()? {
            self.flush(w, false)?;
            match self.kind() {
                Some(PacketKind::FrameStart) => self.read_frame()?,
                Some(PacketKind::FrameEnd) => {}
                Some(PacketKind::EventAdd) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.read_event_add()?;
                        let fresh = Blocked {
                            name: ue_text(&self.add.blueprint),
                            ..Blocked::default()
                        };
                        *actors.entry(self.add_id(), Blocked::default) = fresh;
                    }
                }
                Some(PacketKind::EventDel) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.del = self.s.value(self.del)?;
                        actors.erase(self.add_id());
                    }
                }
                Some(PacketKind::Position) => {
                    let total = self.read_total()?;
                    for _ in 0..total {
                        self.position = self.read_over(self.position, 4 + 2 * vs)?;
                        let b = self.position;
                        let id = u32_at(&b, 0);
                        let loc = self.vector_at(&b, 4);
                        let (elapsed, step) = (self.frame_elapsed(), self.frame_duration());
                        let ue5 = self.flavour.vector_width() == VectorWidth::F64;
                        let a = actors.entry(id, Blocked::default);
                        if distance(a.last, loc, ue5) < min_distance {
                            if a.duration == 0.0 {
                                a.time = elapsed;
                            }
                            a.duration += step;
                        } else {
                            if a.duration >= min_time {
                                let row = BlockedRow {
                                    time: a.time,
                                    id,
                                    blueprint: a.name.clone(),
                                    duration: a.duration,
                                };
                                insert(&mut results, row);
                            }
                            a.duration = 0.0;
                            a.last = loc;
                        }
                    }
                }
                _ => self.skip_packet()?,
            }
        }
        for (id, a) in actors.iter() {
            if a.duration >= min_time {
                let row = BlockedRow {
                    time: a.time,
                    id,
                    blueprint: a.name.clone(),
                    duration: a.duration,
                };
                insert(&mut results, row);
            }
        }
        for r in &results {
            let o = &mut self.out;
            push_padded(o, format_f(r.time, 0).as_bytes(), 8, true);
            o.push(b' ');
            push_padded(o, r.id.to_string().as_bytes(), 6, true);
            o.push(b' ');
            push_padded(o, r.blueprint.as_bytes(), 35, false);
            o.push(b' ');
            push_padded(o, format_f(r.duration, 0).as_bytes(), 10, true);
            o.push(b'\n');
        }
        let (frames, duration) = self.footer(false);
        self.flush(w, true)?;
        Ok(Some((info, results, frames, duration)))
    }
}

/// An actor of the blocked query.
#[derive(Debug, Default)]
struct Blocked {
    name: String,
    last: [f64; 3],
    time: f64,
    duration: f64,
}

/// `FVector::Distance`: in `float` for UE4 builds (the values are `f32`), `double` for UE5.
fn distance(a: [f64; 3], b: [f64; 3], ue5: bool) -> f64 {
    if ue5 {
        let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
    } else {
        let d = [
            b[0] as f32 - a[0] as f32,
            b[1] as f32 - a[1] as f32,
            b[2] as f32 - a[2] as f32,
        ];
        f64::from((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt())
    }
}
