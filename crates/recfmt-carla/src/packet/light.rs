//! VehicleLight (id 10) and SceneLight (id 11).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;

/// The lights of one vehicle. 8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VehicleLight {
    /// Recorded actor id.
    pub database_id: u32,
    /// `carla::rpc::VehicleLightState` bitmask: 0x1 Position, 0x2 LowBeam, 0x4 HighBeam,
    /// 0x8 Brake, 0x10 RightBlinker, 0x20 LeftBlinker, 0x40 Reverse, 0x80 Fog,
    /// 0x100 Interior, 0x200 Special1, 0x400 Special2.
    pub state: u32,
}

impl Record for VehicleLight {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        Some(8)
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(VehicleLight {
            database_id: c.u32()?,
            state: c.u32()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_u32(self.state);
        Ok(())
    }
}

/// A change of one street or building light. 26 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SceneLight {
    /// Light id (-1 occurs).
    pub light_id: i32,
    /// Intensity.
    pub intensity: f32,
    /// Linear colour R, G, B, A.
    pub color: [f32; 4],
    /// Whether the light is on.
    pub on: bool,
    /// 0 Null, 1 Vehicle, 2 Street, 3 Building, 4 Other.
    pub light_type: u8,
}

impl Record for SceneLight {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        Some(26)
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(SceneLight {
            light_id: c.i32()?,
            intensity: c.f32()?,
            color: c.f32s()?,
            on: c.bool()?,
            light_type: c.u8()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_i32(self.light_id);
        out.put_f32(self.intensity);
        out.put_f32s(&self.color);
        out.put_bool(self.on);
        out.put_u8(self.light_type);
        Ok(())
    }
}
