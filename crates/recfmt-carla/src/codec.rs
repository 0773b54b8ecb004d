//! Sans-IO encoding and decoding: the info header and single packets, from and to byte slices.
//!
//! [`crate::Reader`] and [`crate::Writer`] are thin streaming layers over these functions;
//! use them directly when the bytes come from somewhere else (a memory map, a network
//! buffer).
//!
//! ```
//! use recfmt_carla::{codec, Flavour, Packet};
//! use recfmt_core::Limits;
//!
//! let mut bytes = Vec::new();
//! codec::encode_packet(&Packet::VisualTime(12.5), Flavour::Carla0914, &mut bytes)?;
//! assert_eq!(bytes.len(), 5 + 8);
//!
//! let mut packet = Packet::default();
//! let used = codec::parse_packet(&bytes, 0, Flavour::Carla0914, &Limits::default(), &mut packet)?;
//! assert_eq!(used, Some(13));
//! assert_eq!(packet, Packet::VisualTime(12.5));
//! // An incomplete packet asks for more input.
//! assert_eq!(codec::parse_packet(&bytes[..7], 0, Flavour::Carla0914, &Limits::default(), &mut packet)?, None);
//! # Ok::<(), recfmt_carla::Error>(())
//! ```

pub(crate) mod cursor;

use recfmt_core::Limits;

use crate::error::{Error, ExpectedSize, Result, check_limit};
use crate::flavour::{Flavour, PacketKind, WheelPhysicsLayout};
use crate::header::Header;
use crate::packet::{
    BikerAnim, BoundingBox, Collision, EventAdd, EventDel, EventParent, FIRST_USER_ID, FrameStart,
    Kinematics, PACKET_HEADER_LEN, Packet, PhysicsControl, Position, Record, SceneLight,
    TrafficLightState, TrafficLightTime, VehicleAnim, VehicleDoor, VehicleLight, VehicleWheels,
    WalkerAnim, WalkerBones, Weather,
};
use crate::primitive::FString;
use cursor::{Cursor, PacketCtx, Put};

/// Parses the info header at the start of `input`.
///
/// Returns `Ok(None)` when `input` is too short to hold the whole header, and the header and
/// its length otherwise. Fails when the magic is not `CARLA_RECORDER` (compared ignoring
/// case). The version is not checked here.
pub fn parse_header(input: &[u8]) -> Result<Option<(Header, usize)>> {
    let Some(fixed) = input.get(..4) else {
        return Ok(None);
    };
    let version = u16::from_le_bytes([fixed[0], fixed[1]]);
    let magic_len = usize::from(u16::from_le_bytes([fixed[2], fixed[3]]));
    if magic_len != crate::header::MAGIC.len() {
        return Err(Error::BadMagic {
            offset: 2,
            found: format!("a {magic_len}-byte string"),
        });
    }
    let Some(magic) = input.get(4..4 + magic_len) else {
        return Ok(None);
    };
    if !Header::is_magic(magic) {
        return Err(Error::BadMagic {
            offset: 2,
            found: format!("{:?}", String::from_utf8_lossy(magic)),
        });
    }
    let at = 4 + magic_len;
    let Some(rest) = input.get(at..at + 10) else {
        return Ok(None);
    };
    let mut date = [0u8; 8];
    date.copy_from_slice(&rest[..8]);
    let map_len = usize::from(u16::from_le_bytes([rest[8], rest[9]]));
    let Some(map) = input.get(at + 10..at + 10 + map_len) else {
        return Ok(None);
    };
    Ok(Some((
        Header {
            version,
            magic: FString::from_bytes(magic),
            date: i64::from_le_bytes(date),
            map: FString::from_bytes(map),
        },
        at + 10 + map_len,
    )))
}

/// Appends the encoded info header to `out`.
pub fn encode_header(header: &Header, out: &mut Vec<u8>) -> Result<()> {
    out.put_u16(header.version);
    out.put_fstring("magic", &header.magic)?;
    out.put_i64(header.date);
    out.put_fstring("map name", &header.map)?;
    Ok(())
}

/// Reads the packet header at the start of `input`: `(id, body size)`, or `None` when fewer
/// than 5 bytes are given.
pub fn peek_packet_header(input: &[u8]) -> Option<(u8, u32)> {
    let h = input.get(..PACKET_HEADER_LEN)?;
    Some((h[0], u32::from_le_bytes([h[1], h[2], h[3], h[4]])))
}

/// Snake-case name of the packet with `id` in `flavour` (`user`, `unknown` otherwise).
pub fn packet_name(id: u8, flavour: Option<Flavour>) -> &'static str {
    match flavour.and_then(|f| f.kind_of(id)) {
        Some(kind) => kind.name(),
        None if id >= FIRST_USER_ID => "user",
        None => "unknown",
    }
}

/// Parses one whole packet (header and body) at the start of `input` into `dst`.
///
/// `offset` is the position of `input[0]` in the file, used in error messages. Returns
/// `Ok(None)` when `input` does not yet hold the whole packet, and the number of bytes used
/// otherwise. The size field is checked against `limits` before anything else.
pub fn parse_packet(
    input: &[u8],
    offset: u64,
    flavour: Flavour,
    limits: &Limits,
    dst: &mut Packet,
) -> Result<Option<usize>> {
    let Some((id, size)) = peek_packet_header(input) else {
        return Ok(None);
    };
    check_limit(
        "packet size",
        u64::from(size),
        limits.max_record_len,
        offset,
    )?;
    let total = PACKET_HEADER_LEN as u64 + u64::from(size);
    let Ok(total) = usize::try_from(total) else {
        return Err(Error::Limit {
            what: "packet size",
            value: u64::from(size),
            limit: usize::MAX as u64,
            offset,
        });
    };
    let Some(body) = input.get(PACKET_HEADER_LEN..total) else {
        return Ok(None);
    };
    decode_body(id, body, offset, flavour, limits, dst)?;
    Ok(Some(total))
}

macro_rules! list {
    ($dst:ident, $c:ident, $variant:ident, $ty:ty) => {{
        let mut v = match std::mem::take($dst) {
            Packet::$variant(v) => v,
            _ => Vec::new(),
        };
        let r = decode_list::<$ty>(&mut $c, &mut v);
        *$dst = Packet::$variant(v);
        r
    }};
}

/// Decodes a packet body into `dst`, reusing `dst`'s buffers when it already holds a packet
/// of the same kind.
///
/// `offset` is the file offset of the packet header (for error messages). Ids `flavour`
/// does not know become [`Packet::User`] (id ≥ 100) or [`Packet::Unknown`]. On error `dst`
/// holds unspecified content.
pub fn decode_body(
    id: u8,
    body: &[u8],
    offset: u64,
    flavour: Flavour,
    limits: &Limits,
    dst: &mut Packet,
) -> Result<()> {
    let Some(kind) = flavour.kind_of(id) else {
        let mut data = match std::mem::take(dst) {
            Packet::User { data, .. } | Packet::Unknown { data, .. } => data,
            Packet::PhysicsControlOpaque(data) => data,
            _ => Vec::new(),
        };
        data.clear();
        data.extend_from_slice(body);
        *dst = if id >= FIRST_USER_ID {
            Packet::User { id, data }
        } else {
            Packet::Unknown { id, data }
        };
        return Ok(());
    };
    let ctx = PacketCtx {
        packet: kind.name(),
        id,
        offset,
    };
    let mut c = Cursor::new(body, ctx, flavour.vector_width(), limits);
    match kind {
        PacketKind::FrameStart => {
            exact(&c, FrameStart::SIZE)?;
            *dst = Packet::FrameStart(FrameStart::decode(&mut c)?);
        }
        PacketKind::FrameEnd => {
            exact(&c, 0)?;
            *dst = Packet::FrameEnd;
        }
        PacketKind::PlatformTime => {
            exact(&c, 8)?;
            *dst = Packet::PlatformTime(c.f64()?);
        }
        PacketKind::FrameCounter => {
            exact(&c, 8)?;
            *dst = Packet::FrameCounter(c.u64()?);
        }
        PacketKind::VisualTime => {
            exact(&c, 8)?;
            *dst = Packet::VisualTime(c.f64()?);
        }
        PacketKind::EventAdd => list!(dst, c, EventAdd, EventAdd)?,
        PacketKind::EventDel => list!(dst, c, EventDel, EventDel)?,
        PacketKind::EventParent => list!(dst, c, EventParent, EventParent)?,
        PacketKind::Collision => list!(dst, c, Collision, Collision)?,
        PacketKind::Position => list!(dst, c, Position, Position)?,
        PacketKind::TrafficLight => list!(dst, c, TrafficLight, TrafficLightState)?,
        PacketKind::VehicleAnim => list!(dst, c, VehicleAnim, VehicleAnim)?,
        PacketKind::WalkerAnim => list!(dst, c, WalkerAnim, WalkerAnim)?,
        PacketKind::VehicleLight => list!(dst, c, VehicleLight, VehicleLight)?,
        PacketKind::SceneLight => list!(dst, c, SceneLight, SceneLight)?,
        PacketKind::Kinematics => list!(dst, c, Kinematics, Kinematics)?,
        PacketKind::BoundingBox => list!(dst, c, BoundingBox, BoundingBox)?,
        PacketKind::TrafficLightTime => list!(dst, c, TrafficLightTime, TrafficLightTime)?,
        PacketKind::TriggerVolume => list!(dst, c, TriggerVolume, BoundingBox)?,
        PacketKind::WalkerBones => list!(dst, c, WalkerBones, WalkerBones)?,
        PacketKind::VehicleWheels => list!(dst, c, VehicleWheels, VehicleWheels)?,
        PacketKind::BikerAnim => list!(dst, c, BikerAnim, BikerAnim)?,
        PacketKind::VehicleDoor => list!(dst, c, VehicleDoor, VehicleDoor)?,
        PacketKind::Weather => list!(dst, c, Weather, Weather)?,
        PacketKind::PhysicsControl => match flavour.wheel_physics() {
            WheelPhysicsLayout::Opaque => {
                let mut data = match std::mem::take(dst) {
                    Packet::PhysicsControlOpaque(d)
                    | Packet::User { data: d, .. }
                    | Packet::Unknown { data: d, .. } => d,
                    _ => Vec::new(),
                };
                data.clear();
                data.extend_from_slice(c.rest());
                *dst = Packet::PhysicsControlOpaque(data);
            }
            layout => {
                let stiffness = layout == WheelPhysicsLayout::Wheel48;
                let mut v = match std::mem::take(dst) {
                    Packet::PhysicsControl(v) => v,
                    _ => Vec::new(),
                };
                v.clear();
                let r = decode_physics(&mut c, &mut v, stiffness);
                *dst = Packet::PhysicsControl(v);
                r?;
            }
        },
    }
    Ok(())
}

fn exact(c: &Cursor<'_>, n: usize) -> Result<()> {
    if c.len() != n {
        return Err(c.size_error(ExpectedSize::Exactly(n as u64)));
    }
    Ok(())
}

fn count(c: &mut Cursor<'_>) -> Result<usize> {
    if c.len() < 2 {
        return Err(c.size_error(ExpectedSize::AtLeast(2)));
    }
    Ok(usize::from(c.u16()?))
}

fn decode_list<T: Record>(c: &mut Cursor<'_>, v: &mut Vec<T>) -> Result<()> {
    v.clear();
    let n = count(c)?;
    match T::fixed_size(c.width) {
        Some(size) => {
            let expected = 2 + (n as u64) * (size as u64);
            if c.len() as u64 != expected {
                return Err(c.size_error(ExpectedSize::Exactly(expected)));
            }
            v.reserve(n);
        }
        None => v.reserve(n.min(c.remaining())),
    }
    for _ in 0..n {
        v.push(T::decode(c)?);
    }
    c.finish()
}

fn decode_physics(c: &mut Cursor<'_>, v: &mut Vec<PhysicsControl>, stiffness: bool) -> Result<()> {
    let n = count(c)?;
    // A record takes at least 80 bytes (no curves, gears or wheels).
    v.reserve(n.min(c.remaining() / 80));
    for _ in 0..n {
        v.push(PhysicsControl::decode(c, stiffness)?);
    }
    c.finish()
}

/// Tries to decode a UE4 PhysicsControl body with both wheel layouts; returns the layouts
/// that consume the body exactly.
pub(crate) fn physics_layouts_that_fit(body: &[u8], limits: &Limits) -> (bool, bool) {
    let ctx = PacketCtx {
        packet: PacketKind::PhysicsControl.name(),
        id: 15,
        offset: 0,
    };
    let fits = |stiffness: bool| {
        let mut c = Cursor::new(body, ctx, crate::VectorWidth::F32, limits);
        let mut v = Vec::new();
        decode_physics(&mut c, &mut v, stiffness).is_ok()
    };
    (fits(false), fits(true))
}

/// Appends `packet` (header and body) to `out`, with the id `flavour` gives its kind.
///
/// Fails with [`Error::NotInFlavour`] when the flavour has no id for the kind, and with
/// [`Error::TooLarge`] when a count, string or the body does not fit its field.
pub fn encode_packet(packet: &Packet, flavour: Flavour, out: &mut Vec<u8>) -> Result<()> {
    let id = packet.id(flavour).ok_or(Error::NotInFlavour {
        packet: packet.name(),
        flavour,
    })?;
    let start = out.len();
    out.put_u8(id);
    out.put_u32(0);
    encode_body(packet, out)?;
    let size = out.len() - start - PACKET_HEADER_LEN;
    let size = u32::try_from(size).map_err(|_| Error::TooLarge {
        what: "packet body",
        len: size as u64,
        max: u64::from(u32::MAX),
    })?;
    out[start + 1..start + PACKET_HEADER_LEN].copy_from_slice(&size.to_le_bytes());
    Ok(())
}

fn encode_list<T: Record>(what: &'static str, v: &[T], out: &mut Vec<u8>) -> Result<()> {
    out.put_count_u16(what, v.len())?;
    for r in v {
        r.encode(out)?;
    }
    Ok(())
}

/// Appends the body of `packet` (without the 5-byte header) to `out`.
pub fn encode_body(packet: &Packet, out: &mut Vec<u8>) -> Result<()> {
    const N: &str = "record count";
    match packet {
        Packet::FrameStart(f) => f.encode(out),
        Packet::FrameEnd => {}
        Packet::PlatformTime(t) | Packet::VisualTime(t) => out.put_f64(*t),
        Packet::FrameCounter(n) => out.put_u64(*n),
        Packet::EventAdd(v) => encode_list(N, v, out)?,
        Packet::EventDel(v) => encode_list(N, v, out)?,
        Packet::EventParent(v) => encode_list(N, v, out)?,
        Packet::Collision(v) => encode_list(N, v, out)?,
        Packet::Position(v) => encode_list(N, v, out)?,
        Packet::TrafficLight(v) => encode_list(N, v, out)?,
        Packet::VehicleAnim(v) => encode_list(N, v, out)?,
        Packet::WalkerAnim(v) => encode_list(N, v, out)?,
        Packet::VehicleLight(v) => encode_list(N, v, out)?,
        Packet::SceneLight(v) => encode_list(N, v, out)?,
        Packet::Kinematics(v) => encode_list(N, v, out)?,
        Packet::BoundingBox(v) | Packet::TriggerVolume(v) => encode_list(N, v, out)?,
        Packet::TrafficLightTime(v) => encode_list(N, v, out)?,
        Packet::WalkerBones(v) => encode_list(N, v, out)?,
        Packet::VehicleWheels(v) => encode_list(N, v, out)?,
        Packet::BikerAnim(v) => encode_list(N, v, out)?,
        Packet::VehicleDoor(v) => encode_list(N, v, out)?,
        Packet::Weather(v) => encode_list(N, v, out)?,
        Packet::PhysicsControl(v) => {
            out.put_count_u16(N, v.len())?;
            for r in v {
                r.encode(out)?;
            }
        }
        Packet::PhysicsControlOpaque(data)
        | Packet::User { data, .. }
        | Packet::Unknown { data, .. } => out.extend_from_slice(data),
    }
    Ok(())
}
