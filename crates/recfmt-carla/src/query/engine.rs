//! The three queries, following the control flow of `CarlaRecorderQuery.cpp`.
//!
//! The C++ keeps one record object per packet kind (members of the query object) and reads
//! every field with `istream::read`. The engine keeps the same records as byte arrays in
//! their packed layout, so that short reads at the end of a file leave the same stale values
//! the server prints. Locals that C++ leaves uninitialised start at zero.

use std::io::{self, Read, Write};

use crate::flavour::{Flavour, PacketKind, VectorWidth, WheelPhysicsLayout};
use crate::packet::{
    BoundingBox, Collision, EventDel, EventParent, Kinematics, Position, SceneLight,
    TrafficLightState, TrafficLightTime, VehicleAnim, VehicleDoor, VehicleLight, WalkerAnim,
    Weather,
};
use crate::record::FixedRecord;

mod blocked;
mod collisions;
mod file_info;

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

/// Offset of `is_frozen` in a TrafficLight record and of `handbrake` in a VehicleAnim record:
/// the query prints these bytes as stored, which a decoded `bool` cannot give back.
const TRAFFIC_FROZEN_AT: usize = 4;
const VEHICLE_HANDBRAKE_AT: usize = 16;

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
    width: VectorWidth,
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
            width: flavour.vector_width(),
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
}
