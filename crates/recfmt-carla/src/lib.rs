//! CARLA simulator recorder files (`*.log`, `*.rec`): the binary file that
//! `client.start_recorder(name, additional_data)` writes on the CARLA server.
//!
//! # Layers
//!
//! * [`codec`]: sans-IO parsing and encoding of the info header and of single packets.
//! * [`Reader`] / [`Writer`]: streaming over [`std::io::Read`] / [`std::io::Write`], never
//!   holding the whole file; `u64` offsets, sizes checked against [`recfmt_core::Limits`].
//! * [`Packet`]: every packet kind of every build (ids 0–24), with every field kept, so that
//!   read → write reproduces the file byte for byte. Ids a build does not know, and user
//!   packets (id ≥ 100), are kept as raw bytes.
//! * [`Flavour`]: the build family (vector width, ids 21–24, PhysicsControl wheel layout),
//!   detected by [`FlavourDetector`] or forced by the caller.
//! * [`index_frames`]: a one-pass index of frames (id, elapsed time, byte offset), and
//!   [`seek_frame`]: a scan of packet headers to the first frame at a time.
//! * [`CarlaRecording`] and [`FORMAT`]: the adapter to recfmt's generic model (reading,
//!   with [`recfmt_core::RecordingReader::seek_time`] on seekable sources), and
//!   [`writer::CarlaWriter`]: writing from it.
//! * [`query`]: CARLA's `show_recorder_file_info`, `show_recorder_collisions` and
//!   `show_recorder_actors_blocked`, with the server's exact text, and as data.
//! * [`tracks`]: recordings from tables of (time, id, blueprint, position, rotation).
//! * [`xosc`]: recordings as OpenSCENARIO 1.0/1.2 scenarios (`convert --to xosc`).
//!
//! # File layout
//!
//! An info header (version, `CARLA_RECORDER` magic, date, map), then per recorded tick a
//! FrameStart packet, the tick's packets and a FrameEnd packet. Every packet is `id: u8`,
//! `size: u32` and `size` body bytes, little-endian, without padding. The recorder writes,
//! per frame: FrameStart, VisualTime (0.9.14+), EventAdd, EventDel, EventParent, Collision,
//! VehicleDoor (builds with doors), Position, TrafficLight, VehicleAnim, WalkerAnim,
//! VehicleLight, SceneLight (if any), VehicleWheels and BikerAnim (0.9.15+), Weather (if any),
//! then with additional data Kinematics (if any), BoundingBox, TriggerVolume (if any),
//! PlatformTime, PhysicsControl (if any), TrafficLightTime (if any), WalkerBones (0.9.14+),
//! and finally FrameEnd. Packets not marked "if any" are written even when empty.
//!
//! # Example
//!
//! ```
//! use recfmt_carla::{Flavour, FrameStart, Header, Packet, Position, Reader, Vector3, Writer};
//!
//! // Write a one-frame recording into memory.
//! let mut writer = Writer::new(Vec::new(), Flavour::Carla0912);
//! writer.write_header(&Header::new("Town01", 1_637_676_528))?;
//! writer.write_packet(&Packet::FrameStart(FrameStart { id: 1, duration_this: -1.0, elapsed: 0.0 }))?;
//! writer.write_packet(&Packet::Position(vec![Position {
//!     database_id: 24,
//!     location: Vector3::F32([100.0, 200.0, 0.5]),
//!     rotation: Vector3::F32([0.0, 0.0, 90.0]),
//! }]))?;
//! writer.write_packet(&Packet::FrameEnd)?;
//! let bytes = writer.into_inner()?;
//!
//! // Read it back.
//! let mut reader = Reader::new(&bytes[..]);
//! let header = reader.read_header()?;
//! assert_eq!(header.map, "Town01");
//! let mut packet = Packet::default();
//! let mut kinds = Vec::new();
//! while reader.read_packet(&mut packet)? {
//!     kinds.push(packet.name());
//!     if let Packet::Position(records) = &packet {
//!         assert_eq!(records[0].location.z(), 0.5);
//!     }
//! }
//! assert_eq!(kinds, ["frame_start", "position", "frame_end"]);
//! assert_eq!(reader.flavour(), Some(Flavour::Carla0912));
//! # Ok::<(), recfmt_carla::Error>(())
//! ```

#![forbid(unsafe_code)]

pub mod adapter;
mod bisect;
pub mod codec;
mod detect;
mod error;
mod flavour;
mod format;
mod header;
mod index;
mod io;
mod packet;
mod primitive;
pub mod query;
mod record;
pub mod schema;
pub mod tracks;
pub mod writer;
pub mod xosc;

pub use adapter::CarlaRecording;
pub use bisect::{BisectSeek, bisect_frame};
pub use detect::FlavourDetector;
pub use error::{Error, ExpectedSize, Result};
pub use flavour::{Flavour, PacketKind, ParseFlavourError, VectorWidth, WheelPhysicsLayout};
pub use format::FORMAT;
pub use header::{Header, MAGIC};
pub use index::{FrameEntry, FrameIndex, FrameSeek, index_frames, seek_frame};
pub use io::{Packets, RawPacket, Reader, Writer};
pub use packet::{
    ActorAttribute, ActorDescription, ActorType, AttributeType, BikerAnim, Bone, BoundingBox,
    Collision, EventAdd, EventDel, EventParent, FIRST_USER_ID, FrameStart, Gear, Kinematics,
    PACKET_HEADER_LEN, Packet, PhysicsControl, Position, SceneLight, TrafficLightState,
    TrafficLightTime, VehicleAnim, VehicleDoor, VehicleLight, VehicleWheels, WalkerAnim,
    WalkerBones, Weather, WheelAnim, WheelPhysics,
};
pub use primitive::{FString, Vector3};
pub use schema::STREAM_NAMES;

/// The shared model ([`recfmt_core`]) this crate's adapter implements, re-exported so one
/// dependency is enough.
pub use recfmt_core as core;
