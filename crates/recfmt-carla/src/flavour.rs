//! Builds of the CARLA recorder ("flavours") and the packet kinds each one knows.
//!
//! The header version is 1 in almost every build, yet the layouts differ: UE5 writes 64-bit
//! vectors, the ids from 21 up were renumbered twice, and the wheel records of PhysicsControl
//! grew from 36 to 48 bytes in 0.9.12. A [`Flavour`] names one such layout. The reader
//! detects it from the file (see [`crate::FlavourDetector`]) unless the caller forces one.

use std::fmt;
use std::str::FromStr;

/// The kind of a packet, independent of the id a build gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PacketKind {
    /// Start of a recorded tick (id 0).
    FrameStart,
    /// End of a recorded tick (id 1).
    FrameEnd,
    /// Actors created (id 2).
    EventAdd,
    /// Actors destroyed (id 3).
    EventDel,
    /// Actors attached to a parent (id 4).
    EventParent,
    /// Collisions (id 5).
    Collision,
    /// Actor transforms (id 6).
    Position,
    /// Traffic light states (id 7).
    TrafficLight,
    /// Vehicle controls (id 8).
    VehicleAnim,
    /// Walker speeds (id 9).
    WalkerAnim,
    /// Vehicle light bitmasks (id 10).
    VehicleLight,
    /// Street and building light changes (id 11).
    SceneLight,
    /// Actor velocities (id 12, additional data).
    Kinematics,
    /// Actor bounding boxes (id 13, additional data).
    BoundingBox,
    /// Wall-clock time since the recorder started (id 14, additional data).
    PlatformTime,
    /// Vehicle physics parameters (id 15, additional data).
    PhysicsControl,
    /// Traffic light phase durations (id 16, additional data).
    TrafficLightTime,
    /// Traffic sign trigger volumes (id 17, additional data).
    TriggerVolume,
    /// Frame counter of the frame-data stream (id 18, never written by the recorder).
    FrameCounter,
    /// Walker skeleton poses (id 19, additional data).
    WalkerBones,
    /// Episode visual time (id 20).
    VisualTime,
    /// Wheel steering and rotation (id 21 or 22).
    VehicleWheels,
    /// Two-wheeler speed and engine rotation (id 22 or 23).
    BikerAnim,
    /// Vehicle door states (id 21 or 23).
    VehicleDoor,
    /// Weather parameters (id 24).
    Weather,
}

impl PacketKind {
    /// Every kind, in order of the ids of the newest UE4 build.
    pub const ALL: [PacketKind; 25] = [
        PacketKind::FrameStart,
        PacketKind::FrameEnd,
        PacketKind::EventAdd,
        PacketKind::EventDel,
        PacketKind::EventParent,
        PacketKind::Collision,
        PacketKind::Position,
        PacketKind::TrafficLight,
        PacketKind::VehicleAnim,
        PacketKind::WalkerAnim,
        PacketKind::VehicleLight,
        PacketKind::SceneLight,
        PacketKind::Kinematics,
        PacketKind::BoundingBox,
        PacketKind::PlatformTime,
        PacketKind::PhysicsControl,
        PacketKind::TrafficLightTime,
        PacketKind::TriggerVolume,
        PacketKind::FrameCounter,
        PacketKind::WalkerBones,
        PacketKind::VisualTime,
        PacketKind::VehicleWheels,
        PacketKind::BikerAnim,
        PacketKind::VehicleDoor,
        PacketKind::Weather,
    ];

    /// Snake-case name (`frame_start`, `event_add`, `vehicle_wheels`, ...).
    pub fn name(self) -> &'static str {
        match self {
            PacketKind::FrameStart => "frame_start",
            PacketKind::FrameEnd => "frame_end",
            PacketKind::EventAdd => "event_add",
            PacketKind::EventDel => "event_del",
            PacketKind::EventParent => "event_parent",
            PacketKind::Collision => "collision",
            PacketKind::Position => "position",
            PacketKind::TrafficLight => "traffic_light",
            PacketKind::VehicleAnim => "vehicle_anim",
            PacketKind::WalkerAnim => "walker_anim",
            PacketKind::VehicleLight => "vehicle_light",
            PacketKind::SceneLight => "scene_light",
            PacketKind::Kinematics => "kinematics",
            PacketKind::BoundingBox => "bounding_box",
            PacketKind::PlatformTime => "platform_time",
            PacketKind::PhysicsControl => "physics_control",
            PacketKind::TrafficLightTime => "traffic_light_time",
            PacketKind::TriggerVolume => "trigger_volume",
            PacketKind::FrameCounter => "frame_counter",
            PacketKind::WalkerBones => "walker_bones",
            PacketKind::VisualTime => "visual_time",
            PacketKind::VehicleWheels => "vehicle_wheels",
            PacketKind::BikerAnim => "biker_anim",
            PacketKind::VehicleDoor => "vehicle_door",
            PacketKind::Weather => "weather",
        }
    }
}

impl fmt::Display for PacketKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Width of the floats of an `FVector` on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VectorWidth {
    /// Three `f32` (12 bytes): every UE4 build (0.9.x).
    F32,
    /// Three `f64` (24 bytes): UE5 builds (0.10.x, ue5-dev).
    F64,
}

impl VectorWidth {
    /// Bytes of one vector.
    pub fn vector_size(self) -> usize {
        match self {
            VectorWidth::F32 => 12,
            VectorWidth::F64 => 24,
        }
    }
}

/// How the wheels of a PhysicsControl record are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WheelPhysicsLayout {
    /// 36-byte wheel records (0.9.10–0.9.11).
    Wheel36,
    /// 48-byte wheel records with three stiffness values (0.9.12 onwards, UE4).
    Wheel48,
    /// UE5: the body holds raw memory and is kept as opaque bytes.
    Opaque,
}

/// One build family of the CARLA recorder, as far as the file layout goes.
///
/// Ids 0–17 mean the same in every build; the flavours differ in the vector width, the wheel
/// records of PhysicsControl, and which kinds ids 18–24 name. Ids a flavour does not know
/// are read as [`crate::Packet::Unknown`] (kept as raw bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Flavour {
    /// CARLA 0.9.4–0.9.11: ids 0–17, `f32` vectors, 36-byte PhysicsControl wheels.
    Carla0910,
    /// CARLA 0.9.12–0.9.13: ids 0–17, 48-byte wheels. Ids 18+ are unknown (DReyeVR, a 0.9.13
    /// fork, uses 18 for its own weather packet).
    Carla0912,
    /// CARLA 0.9.14: ids 0–20 (FrameCounter, WalkerBones, VisualTime).
    Carla0914,
    /// CARLA 0.9.15 release: 21 VehicleWheels, 22 BikerAnim.
    Carla0915,
    /// ue4-dev from November 2023 to March 2025: 21 VehicleDoor, 22 VehicleWheels,
    /// 23 BikerAnim.
    Ue4DevDoor21,
    /// CARLA 0.9.16 and ue4-dev from March 2025: 21 VehicleWheels, 22 BikerAnim,
    /// 23 VehicleDoor.
    Carla0916,
    /// ue4-dev from February 2026 (header version 2): as 0.9.16 plus 24 Weather; actor
    /// attribute types are numbered from 1.
    Ue4DevWeather,
    /// UE5 builds (0.10.x, ue5-dev): `f64` vectors, ids as [`Flavour::Ue4DevDoor21`],
    /// PhysicsControl kept opaque.
    Ue5,
}

impl Flavour {
    /// Every flavour, oldest first.
    pub const ALL: [Flavour; 8] = [
        Flavour::Carla0910,
        Flavour::Carla0912,
        Flavour::Carla0914,
        Flavour::Carla0915,
        Flavour::Ue4DevDoor21,
        Flavour::Carla0916,
        Flavour::Ue4DevWeather,
        Flavour::Ue5,
    ];

    /// Short name, also accepted by [`Flavour::from_str`]: `0.9.10`, `0.9.12`, `0.9.14`,
    /// `0.9.15`, `ue4-dev-door21`, `0.9.16`, `ue4-dev-weather`, `ue5`.
    pub fn name(self) -> &'static str {
        match self {
            Flavour::Carla0910 => "0.9.10",
            Flavour::Carla0912 => "0.9.12",
            Flavour::Carla0914 => "0.9.14",
            Flavour::Carla0915 => "0.9.15",
            Flavour::Ue4DevDoor21 => "ue4-dev-door21",
            Flavour::Carla0916 => "0.9.16",
            Flavour::Ue4DevWeather => "ue4-dev-weather",
            Flavour::Ue5 => "ue5",
        }
    }

    /// Width of vectors on disk.
    pub fn vector_width(self) -> VectorWidth {
        match self {
            Flavour::Ue5 => VectorWidth::F64,
            _ => VectorWidth::F32,
        }
    }

    /// Layout of the PhysicsControl wheel records.
    pub fn wheel_physics(self) -> WheelPhysicsLayout {
        match self {
            Flavour::Carla0910 => WheelPhysicsLayout::Wheel36,
            Flavour::Ue5 => WheelPhysicsLayout::Opaque,
            _ => WheelPhysicsLayout::Wheel48,
        }
    }

    /// The header version this build writes (2 only for [`Flavour::Ue4DevWeather`]).
    pub fn header_version(self) -> u16 {
        match self {
            Flavour::Ue4DevWeather => 2,
            _ => 1,
        }
    }

    /// The kind id `id` names in this build, or `None` for ids the build does not use
    /// (including user ids ≥ 100).
    ///
    /// ```
    /// use recfmt_carla::{Flavour, PacketKind};
    /// assert_eq!(Flavour::Carla0915.kind_of(21), Some(PacketKind::VehicleWheels));
    /// assert_eq!(Flavour::Ue4DevDoor21.kind_of(21), Some(PacketKind::VehicleDoor));
    /// assert_eq!(Flavour::Carla0912.kind_of(18), None);
    /// ```
    pub fn kind_of(self, id: u8) -> Option<PacketKind> {
        let max = self.max_id();
        if id > max {
            return None;
        }
        match id {
            0..=20 => PacketKind::ALL.get(usize::from(id)).copied(),
            21..=24 => {
                let order: [PacketKind; 4] = match self {
                    Flavour::Ue4DevDoor21 | Flavour::Ue5 => [
                        PacketKind::VehicleDoor,
                        PacketKind::VehicleWheels,
                        PacketKind::BikerAnim,
                        PacketKind::Weather,
                    ],
                    _ => [
                        PacketKind::VehicleWheels,
                        PacketKind::BikerAnim,
                        PacketKind::VehicleDoor,
                        PacketKind::Weather,
                    ],
                };
                order.get(usize::from(id - 21)).copied()
            }
            _ => None,
        }
    }

    /// The id of `kind` in this build, or `None` when the build has no such packet.
    ///
    /// ```
    /// use recfmt_carla::{Flavour, PacketKind};
    /// assert_eq!(Flavour::Carla0916.id_of(PacketKind::VehicleDoor), Some(23));
    /// assert_eq!(Flavour::Carla0914.id_of(PacketKind::VehicleDoor), None);
    /// ```
    pub fn id_of(self, kind: PacketKind) -> Option<u8> {
        (0..=self.max_id()).find(|&id| self.kind_of(id) == Some(kind))
    }

    /// The packets the recorder writes in each frame, in its order (`ACarlaRecorder::Write`),
    /// each with `true` when it is written even without records ("always", an empty packet
    /// is a `00 00` count) and `false` when it is skipped when empty. `additional_data` is
    /// the `start_recorder` flag that adds Kinematics, BoundingBox, TriggerVolume,
    /// PlatformTime, PhysicsControl, TrafficLightTime and WalkerBones.
    ///
    /// ```
    /// use recfmt_carla::{Flavour, PacketKind};
    /// let order = Flavour::Carla0916.frame_order(false);
    /// assert_eq!(order[0], (PacketKind::FrameStart, true));
    /// assert_eq!(order[1], (PacketKind::VisualTime, true));
    /// assert_eq!(order[6], (PacketKind::VehicleDoor, true));
    /// assert_eq!(order.last(), Some(&(PacketKind::FrameEnd, true)));
    /// assert!(!Flavour::Carla0910.frame_order(true).iter().any(|(k, _)| *k == PacketKind::VisualTime));
    /// ```
    pub fn frame_order(self, additional_data: bool) -> Vec<(PacketKind, bool)> {
        use PacketKind::*;
        let mut order = vec![
            (FrameStart, true),
            (VisualTime, true),
            (EventAdd, true),
            (EventDel, true),
            (EventParent, true),
            (Collision, true),
            (VehicleDoor, true),
            (Position, true),
            (TrafficLight, true),
            (VehicleAnim, true),
            (WalkerAnim, true),
            (VehicleLight, true),
            (SceneLight, false),
            (VehicleWheels, true),
            (BikerAnim, true),
            (Weather, false),
        ];
        if additional_data {
            order.extend([
                (Kinematics, false),
                (BoundingBox, true),
                (TriggerVolume, false),
                (PlatformTime, true),
                (PhysicsControl, false),
                (TrafficLightTime, false),
                (WalkerBones, true),
            ]);
        }
        order.push((FrameEnd, true));
        order.retain(|(k, _)| self.id_of(*k).is_some());
        order
    }

    fn max_id(self) -> u8 {
        match self {
            Flavour::Carla0910 | Flavour::Carla0912 => 17,
            Flavour::Carla0914 => 20,
            Flavour::Carla0915 => 22,
            Flavour::Ue4DevDoor21 | Flavour::Carla0916 | Flavour::Ue5 => 23,
            Flavour::Ue4DevWeather => 24,
        }
    }
}

impl fmt::Display for Flavour {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`Flavour`] name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown CARLA flavour {0:?} (known: 0.9.10, 0.9.12, 0.9.14, 0.9.15, ue4-dev-door21, 0.9.16, ue4-dev-weather, ue5)"
)]
pub struct ParseFlavourError(pub String);

impl FromStr for Flavour {
    type Err = ParseFlavourError;

    /// Parses a flavour name. Release numbers map onto the flavour that covers them
    /// (`0.9.4` … `0.9.11` → [`Flavour::Carla0910`], `0.9.13` → [`Flavour::Carla0912`],
    /// `0.10` → [`Flavour::Ue5`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let t = t.strip_prefix('v').unwrap_or(&t);
        Ok(match t {
            "0.9.4" | "0.9.5" | "0.9.6" | "0.9.7" | "0.9.8" | "0.9.9" | "0.9.10" | "0.9.11" => {
                Flavour::Carla0910
            }
            "0.9.12" | "0.9.13" => Flavour::Carla0912,
            "0.9.14" => Flavour::Carla0914,
            "0.9.15" => Flavour::Carla0915,
            "ue4-dev-door21" | "door21" => Flavour::Ue4DevDoor21,
            "0.9.16" => Flavour::Carla0916,
            "ue4-dev-weather" | "weather" => Flavour::Ue4DevWeather,
            "ue5" | "ue5-dev" | "0.10" | "0.10.0" => Flavour::Ue5,
            _ => return Err(ParseFlavourError(s.to_owned())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_in_every_flavour() {
        for f in Flavour::ALL {
            for id in 0..=255u8 {
                if let Some(kind) = f.kind_of(id) {
                    assert_eq!(f.id_of(kind), Some(id), "{f} {id}");
                }
            }
            assert_eq!(f.name().parse::<Flavour>(), Ok(f));
        }
    }

    #[test]
    fn renumbered_ids() {
        use PacketKind::*;
        let row = |f: Flavour| [21, 22, 23, 24].map(|id| f.kind_of(id));
        assert_eq!(
            row(Flavour::Carla0915),
            [Some(VehicleWheels), Some(BikerAnim), None, None]
        );
        assert_eq!(
            row(Flavour::Ue4DevDoor21),
            [
                Some(VehicleDoor),
                Some(VehicleWheels),
                Some(BikerAnim),
                None
            ]
        );
        assert_eq!(
            row(Flavour::Carla0916),
            [
                Some(VehicleWheels),
                Some(BikerAnim),
                Some(VehicleDoor),
                None
            ]
        );
        assert_eq!(
            row(Flavour::Ue4DevWeather),
            [
                Some(VehicleWheels),
                Some(BikerAnim),
                Some(VehicleDoor),
                Some(Weather)
            ]
        );
        assert_eq!(row(Flavour::Ue5), row(Flavour::Ue4DevDoor21));
        assert_eq!(Flavour::Carla0912.kind_of(17), Some(TriggerVolume));
        assert_eq!(Flavour::Carla0914.kind_of(18), Some(FrameCounter));
    }
}
