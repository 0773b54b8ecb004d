//! Packets: a 5-byte header (`id: u8`, `size: u32`) and a body whose layout the id names.

mod animation;
mod bounding_box;
mod collision;
mod door;
mod event;
mod frame;
mod kinematics;
mod light;
mod physics_control;
mod position;
mod traffic_light;
mod walker_bones;
mod weather;

pub use animation::{BikerAnim, VehicleAnim, VehicleWheels, WalkerAnim, WheelAnim};
pub use bounding_box::BoundingBox;
pub use collision::Collision;
pub use door::VehicleDoor;
pub use event::{
    ActorAttribute, ActorDescription, ActorType, AttributeType, EventAdd, EventDel, EventParent,
};
pub use frame::FrameStart;
pub use kinematics::Kinematics;
pub use light::{SceneLight, VehicleLight};
pub use physics_control::{Gear, PhysicsControl, WheelPhysics};
pub use position::Position;
pub use traffic_light::{TrafficLightState, TrafficLightTime};
pub use walker_bones::{Bone, WalkerBones};
pub use weather::Weather;

use crate::codec::cursor::Cursor;
use crate::error::Result;
use crate::flavour::{Flavour, PacketKind, VectorWidth};

/// Size of a packet header: `id: u8` and `size: u32`.
pub const PACKET_HEADER_LEN: usize = 5;

/// Packet ids from this value up are left to users (CARLA's documentation suggests them for
/// custom packets; DReyeVR uses 139–141).
pub const FIRST_USER_ID: u8 = 100;

/// A record of a packet whose body is a `u16` count followed by records.
pub(crate) trait Record: Sized {
    /// Size of one record when it is fixed for a vector width.
    fn fixed_size(width: VectorWidth) -> Option<usize>;
    fn decode(c: &mut Cursor<'_>) -> Result<Self>;
    fn encode(&self, out: &mut Vec<u8>) -> Result<()>;
}

/// One decoded packet, every field kept so that writing it reproduces its bytes.
///
/// The id of a packet is not stored for the known kinds: it follows from the kind and the
/// [`Flavour`] (see [`Packet::id`]). Packets with ids the flavour does not know keep their
/// id and body.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Packet {
    /// Start of a tick.
    FrameStart(FrameStart),
    /// End of a tick (empty body). The default packet.
    #[default]
    FrameEnd,
    /// Actors created.
    EventAdd(Vec<EventAdd>),
    /// Actors destroyed.
    EventDel(Vec<EventDel>),
    /// Actors attached to parents.
    EventParent(Vec<EventParent>),
    /// Collisions.
    Collision(Vec<Collision>),
    /// Actor transforms.
    Position(Vec<Position>),
    /// Traffic light states.
    TrafficLight(Vec<TrafficLightState>),
    /// Vehicle controls.
    VehicleAnim(Vec<VehicleAnim>),
    /// Walker speeds.
    WalkerAnim(Vec<WalkerAnim>),
    /// Vehicle lights.
    VehicleLight(Vec<VehicleLight>),
    /// Scene light changes.
    SceneLight(Vec<SceneLight>),
    /// Actor velocities.
    Kinematics(Vec<Kinematics>),
    /// Actor bounding boxes (local frame).
    BoundingBox(Vec<BoundingBox>),
    /// Wall-clock seconds since the recorder started.
    PlatformTime(f64),
    /// Vehicle physics (UE4 layout).
    PhysicsControl(Vec<PhysicsControl>),
    /// Vehicle physics as written by UE5: the whole body (count included), kept opaque.
    PhysicsControlOpaque(Vec<u8>),
    /// Traffic light phase durations.
    TrafficLightTime(Vec<TrafficLightTime>),
    /// Traffic sign trigger volumes (world frame).
    TriggerVolume(Vec<BoundingBox>),
    /// Frame counter (never written by the recorder).
    FrameCounter(u64),
    /// Walker skeletons.
    WalkerBones(Vec<WalkerBones>),
    /// Episode visual time, seconds.
    VisualTime(f64),
    /// Wheel animation.
    VehicleWheels(Vec<VehicleWheels>),
    /// Two-wheeler animation.
    BikerAnim(Vec<BikerAnim>),
    /// Door states.
    VehicleDoor(Vec<VehicleDoor>),
    /// Weather.
    Weather(Vec<Weather>),
    /// A user packet (id ≥ 100), kept as raw bytes.
    User {
        /// Packet id.
        id: u8,
        /// Body.
        data: Vec<u8>,
    },
    /// A packet whose id the flavour does not know, kept as raw bytes.
    Unknown {
        /// Packet id.
        id: u8,
        /// Body.
        data: Vec<u8>,
    },
}

impl Packet {
    /// The packet's kind, `None` for user and unknown packets.
    pub fn kind(&self) -> Option<PacketKind> {
        Some(match self {
            Packet::FrameStart(_) => PacketKind::FrameStart,
            Packet::FrameEnd => PacketKind::FrameEnd,
            Packet::EventAdd(_) => PacketKind::EventAdd,
            Packet::EventDel(_) => PacketKind::EventDel,
            Packet::EventParent(_) => PacketKind::EventParent,
            Packet::Collision(_) => PacketKind::Collision,
            Packet::Position(_) => PacketKind::Position,
            Packet::TrafficLight(_) => PacketKind::TrafficLight,
            Packet::VehicleAnim(_) => PacketKind::VehicleAnim,
            Packet::WalkerAnim(_) => PacketKind::WalkerAnim,
            Packet::VehicleLight(_) => PacketKind::VehicleLight,
            Packet::SceneLight(_) => PacketKind::SceneLight,
            Packet::Kinematics(_) => PacketKind::Kinematics,
            Packet::BoundingBox(_) => PacketKind::BoundingBox,
            Packet::PlatformTime(_) => PacketKind::PlatformTime,
            Packet::PhysicsControl(_) | Packet::PhysicsControlOpaque(_) => {
                PacketKind::PhysicsControl
            }
            Packet::TrafficLightTime(_) => PacketKind::TrafficLightTime,
            Packet::TriggerVolume(_) => PacketKind::TriggerVolume,
            Packet::FrameCounter(_) => PacketKind::FrameCounter,
            Packet::WalkerBones(_) => PacketKind::WalkerBones,
            Packet::VisualTime(_) => PacketKind::VisualTime,
            Packet::VehicleWheels(_) => PacketKind::VehicleWheels,
            Packet::BikerAnim(_) => PacketKind::BikerAnim,
            Packet::VehicleDoor(_) => PacketKind::VehicleDoor,
            Packet::Weather(_) => PacketKind::Weather,
            Packet::User { .. } | Packet::Unknown { .. } => return None,
        })
    }

    /// Snake-case name of the kind, `user` or `unknown`.
    pub fn name(&self) -> &'static str {
        match self {
            Packet::User { .. } => "user",
            Packet::Unknown { .. } => "unknown",
            p => p.kind().map_or("unknown", PacketKind::name),
        }
    }

    /// The id this packet has in `flavour`, `None` when the flavour has no such kind.
    pub fn id(&self, flavour: Flavour) -> Option<u8> {
        match self {
            Packet::User { id, .. } | Packet::Unknown { id, .. } => Some(*id),
            p => p.kind().and_then(|k| flavour.id_of(k)),
        }
    }

    /// Number of records (1 for packets without a count, 0 for FrameEnd).
    pub fn record_count(&self) -> usize {
        match self {
            Packet::FrameEnd => 0,
            Packet::FrameStart(_)
            | Packet::PlatformTime(_)
            | Packet::FrameCounter(_)
            | Packet::VisualTime(_)
            | Packet::User { .. }
            | Packet::Unknown { .. } => 1,
            Packet::EventAdd(v) => v.len(),
            Packet::EventDel(v) => v.len(),
            Packet::EventParent(v) => v.len(),
            Packet::Collision(v) => v.len(),
            Packet::Position(v) => v.len(),
            Packet::TrafficLight(v) => v.len(),
            Packet::VehicleAnim(v) => v.len(),
            Packet::WalkerAnim(v) => v.len(),
            Packet::VehicleLight(v) => v.len(),
            Packet::SceneLight(v) => v.len(),
            Packet::Kinematics(v) => v.len(),
            Packet::BoundingBox(v) | Packet::TriggerVolume(v) => v.len(),
            Packet::PhysicsControl(v) => v.len(),
            Packet::PhysicsControlOpaque(data) => data
                .get(..2)
                .map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]]))),
            Packet::TrafficLightTime(v) => v.len(),
            Packet::WalkerBones(v) => v.len(),
            Packet::VehicleWheels(v) => v.len(),
            Packet::BikerAnim(v) => v.len(),
            Packet::VehicleDoor(v) => v.len(),
            Packet::Weather(v) => v.len(),
        }
    }
}
