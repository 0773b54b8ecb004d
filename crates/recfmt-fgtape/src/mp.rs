//! Multiplayer packets as FlightGear records them.
//!
//! A packet is a FlightGear MP datagram whose 32-byte header FlightGear has already
//! partly converted to host (little-endian) order before recording it: magic, version,
//! message id, message length and reply port are little-endian, the requested range stays
//! big-endian, and byte 7 of the callsign is forced to NUL. The body keeps its XDR
//! (big-endian) encoding.
//!
//! ```
//! use recfmt_fgtape::mp::MpHeader;
//! let mut packet = vec![0u8; 32];
//! packet[..4].copy_from_slice(&0x4647_4653u32.to_le_bytes());
//! packet[8] = 7;
//! packet[19] = 100; // big-endian range
//! packet[24..30].copy_from_slice(b"MPTEST");
//! let h = MpHeader::parse(&packet).unwrap();
//! assert!(h.has_magic());
//! assert_eq!((h.msg_id, h.requested_range_nm, h.callsign()), (7, 100, "MPTEST".to_string()));
//! ```

/// The MP protocol magic (`"FGFS"`).
pub const MP_MAGIC: u32 = 0x4647_4653;

/// Message id of position packets.
pub const POS_DATA_ID: u32 = 7;

/// Message id of chat packets.
pub const CHAT_MSG_ID: u32 = 1;

/// The header of a recorded MP packet, decoded with its mixed byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MpHeader {
    /// Protocol magic, [`MP_MAGIC`] when valid (stored little-endian).
    pub magic: u32,
    /// Protocol version, `0x00010001` (stored little-endian).
    pub version: u32,
    /// Message id, e.g. [`POS_DATA_ID`] (stored little-endian).
    pub msg_id: u32,
    /// Message length including the header (stored little-endian).
    pub msg_len: u32,
    /// Requested range in nautical miles (stored big-endian: not converted by FlightGear).
    pub requested_range_nm: u32,
    /// Reply port (stored little-endian).
    pub reply_port: u32,
    /// Callsign bytes, NUL-padded.
    pub callsign: [u8; 8],
}

impl MpHeader {
    /// Length of the header in bytes.
    pub const LEN: usize = 32;

    /// Decodes the header of a recorded packet; `None` when the packet is shorter than 32 bytes.
    pub fn parse(packet: &[u8]) -> Option<MpHeader> {
        let le = |i: usize| -> Option<u32> {
            Some(u32::from_le_bytes(packet.get(i..i + 4)?.try_into().ok()?))
        };
        let be = |i: usize| -> Option<u32> {
            Some(u32::from_be_bytes(packet.get(i..i + 4)?.try_into().ok()?))
        };
        Some(MpHeader {
            magic: le(0)?,
            version: le(4)?,
            msg_id: le(8)?,
            msg_len: le(12)?,
            requested_range_nm: be(16)?,
            reply_port: le(20)?,
            callsign: packet.get(24..32)?.try_into().ok()?,
        })
    }

    /// True when the magic is [`MP_MAGIC`].
    pub fn has_magic(&self) -> bool {
        self.magic == MP_MAGIC
    }

    /// The callsign up to its first NUL, lossily decoded as UTF-8.
    pub fn callsign(&self) -> String {
        let end = self.callsign.iter().position(|&b| b == 0).unwrap_or(8);
        String::from_utf8_lossy(&self.callsign[..end]).into_owned()
    }
}

/// Splits a block of `(u16 len, bytes)*` packets (Continuous tapes and `next` Normal tapes).
///
/// `Err(offset)` gives where a length field overruns the block.
///
/// ```
/// let block = [2, 0, b'h', b'i', 0, 0];
/// let packets = recfmt_fgtape::mp::split_u16_packets(&block).unwrap();
/// assert_eq!(packets, vec![&b"hi"[..], &b""[..]]);
/// assert_eq!(recfmt_fgtape::mp::split_u16_packets(&[5, 0, 1]), Err(0));
/// ```
pub fn split_u16_packets(block: &[u8]) -> Result<Vec<&[u8]>, usize> {
    let mut out = Vec::new();
    let mut p = 0usize;
    while p < block.len() {
        let len_bytes = block.get(p..p + 2).ok_or(p)?;
        let len = usize::from(u16::from_le_bytes([len_bytes[0], len_bytes[1]]));
        let packet = block.get(p + 2..p + 2 + len).ok_or(p)?;
        out.push(packet);
        p += 2 + len;
    }
    Ok(out)
}

/// Joins packets into a `(u16 len, bytes)*` block; fails on a packet longer than 65535 bytes.
pub fn join_u16_packets<'a>(
    packets: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Vec<u8>, crate::Error> {
    let mut out = Vec::new();
    for p in packets {
        let len = u16::try_from(p.len()).map_err(|_| {
            crate::Error::invalid(format!(
                "multiplayer packet of {} bytes exceeds 65535",
                p.len()
            ))
        })?;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(p);
    }
    Ok(out)
}

/// The start of a `POS_DATA` ([`POS_DATA_ID`]) message body: what a track needs.
///
/// The body follows the 32-byte header and keeps FlightGear's XDR (big-endian) encoding:
/// `model[96]` (NUL-padded text), `f64 time`, `f64 lag`, `f64 position[3]` (Earth-centred,
/// Earth-fixed cartesian coordinates in metres), `f32 orientation[3]` (angle-axis, radians,
/// in the ECEF frame), then velocities, accelerations and property data, which are not
/// decoded here.
///
/// ```
/// use recfmt_fgtape::mp::{PositionMsg, POS_DATA_ID};
/// let mut packet = vec![0u8; 32 + 96 + 8 + 8 + 24 + 12];
/// packet[..4].copy_from_slice(&0x4647_4653u32.to_le_bytes());
/// packet[8..12].copy_from_slice(&POS_DATA_ID.to_le_bytes());
/// packet[32..37].copy_from_slice(b"ufo.x");
/// packet[144..152].copy_from_slice(&6_378_137.0f64.to_be_bytes());
/// let msg = PositionMsg::parse(&packet).unwrap();
/// assert_eq!((msg.model.as_str(), msg.position), ("ufo.x", [6_378_137.0, 0.0, 0.0]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PositionMsg {
    /// The aircraft model path (`Aircraft/c172p/Models/c172p.xml`).
    pub model: String,
    /// The sender's simulation time, seconds.
    pub time: f64,
    /// The sender's lag estimate, seconds.
    pub lag: f64,
    /// Position in Earth-centred, Earth-fixed cartesian coordinates (WGS84), metres.
    pub position: [f64; 3],
    /// Orientation as an angle-axis vector in the ECEF frame, radians.
    pub orientation: [f32; 3],
}

impl PositionMsg {
    /// Byte offset of the model name in a packet.
    pub const MODEL_AT: usize = MpHeader::LEN;
    /// Byte offset of the ECEF position in a packet.
    pub const POSITION_AT: usize = MpHeader::LEN + 96 + 16;
    /// The shortest packet that holds every field decoded here.
    pub const MIN_LEN: usize = Self::POSITION_AT + 24 + 12;

    /// Decodes the position fields of a recorded packet; `None` unless it has the magic, the
    /// message id [`POS_DATA_ID`] and at least [`PositionMsg::MIN_LEN`] bytes.
    pub fn parse(packet: &[u8]) -> Option<PositionMsg> {
        let header = MpHeader::parse(packet)?;
        if !header.has_magic() || header.msg_id != POS_DATA_ID || packet.len() < Self::MIN_LEN {
            return None;
        }
        let f64_at = |i: usize| -> Option<f64> {
            Some(f64::from_be_bytes(packet.get(i..i + 8)?.try_into().ok()?))
        };
        let f32_at = |i: usize| -> Option<f32> {
            Some(f32::from_be_bytes(packet.get(i..i + 4)?.try_into().ok()?))
        };
        let model = packet.get(Self::MODEL_AT..Self::MODEL_AT + 96)?;
        let end = model.iter().position(|&b| b == 0).unwrap_or(model.len());
        let p = Self::POSITION_AT;
        Some(PositionMsg {
            model: String::from_utf8_lossy(&model[..end]).into_owned(),
            time: f64_at(Self::MODEL_AT + 96)?,
            lag: f64_at(Self::MODEL_AT + 104)?,
            position: [f64_at(p)?, f64_at(p + 8)?, f64_at(p + 16)?],
            orientation: [f32_at(p + 24)?, f32_at(p + 28)?, f32_at(p + 32)?],
        })
    }
}
