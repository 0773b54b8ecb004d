//! Animation packets: AnimVehicle (id 8), AnimWalker (id 9), AnimVehicleWheels (id 21 or 22)
//! and AnimBiker (id 22 or 23).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;

/// The controls of one vehicle. 21 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct VehicleAnim {
    /// Recorded actor id.
    pub database_id: u32,
    /// Steering, -1 to 1.
    pub steering: f32,
    /// Throttle, 0 to 1.
    pub throttle: f32,
    /// Brake, 0 to 1.
    pub brake: f32,
    /// Hand brake engaged.
    pub handbrake: bool,
    /// Current gear.
    pub gear: i32,
}

impl Record for VehicleAnim {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        Some(21)
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(VehicleAnim {
            database_id: c.u32()?,
            steering: c.f32()?,
            throttle: c.f32()?,
            brake: c.f32()?,
            handbrake: c.bool()?,
            gear: c.i32()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_f32(self.steering);
        out.put_f32(self.throttle);
        out.put_f32(self.brake);
        out.put_bool(self.handbrake);
        out.put_i32(self.gear);
        Ok(())
    }
}

/// The speed of one walker. 8 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WalkerAnim {
    /// Recorded actor id.
    pub database_id: u32,
    /// Speed in Unreal units (cm/s).
    pub speed: f32,
}

impl Record for WalkerAnim {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        Some(8)
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(WalkerAnim {
            database_id: c.u32()?,
            speed: c.f32()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_f32(self.speed);
        Ok(())
    }
}

/// The wheels of one vehicle (variable size: a `u32` wheel count, then 9 bytes per wheel).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VehicleWheels {
    /// Recorded actor id.
    pub database_id: u32,
    /// One entry per wheel.
    pub wheels: Vec<WheelAnim>,
}

/// The animation state of one wheel. 9 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WheelAnim {
    /// Wheel position: FL 0, FR 1, BL 2, BR 3, ML 4, MR 5 (two-wheelers: front 0, back 1).
    pub location: u8,
    /// Steering angle, degrees.
    pub steering_angle: f32,
    /// Tyre rotation, degrees.
    pub tire_rotation: f32,
}

impl Record for VehicleWheels {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        None
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        let database_id = c.u32()?;
        let n = c.array_count("wheel count", 9)?;
        let mut wheels = Vec::with_capacity(n);
        for _ in 0..n {
            wheels.push(WheelAnim {
                location: c.u8()?,
                steering_angle: c.f32()?,
                tire_rotation: c.f32()?,
            });
        }
        Ok(VehicleWheels {
            database_id,
            wheels,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_count_u32("wheel count", self.wheels.len())?;
        for w in &self.wheels {
            out.put_u8(w.location);
            out.put_f32(w.steering_angle);
            out.put_f32(w.tire_rotation);
        }
        Ok(())
    }
}

/// The state of one two-wheeler. 12 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BikerAnim {
    /// Recorded actor id.
    pub database_id: u32,
    /// Forward speed in Unreal units.
    pub forward_speed: f32,
    /// Engine rpm divided by the maximum rpm.
    pub engine_rotation: f32,
}

impl Record for BikerAnim {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        Some(12)
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(BikerAnim {
            database_id: c.u32()?,
            forward_speed: c.f32()?,
            engine_rotation: c.f32()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_f32(self.forward_speed);
        out.put_f32(self.engine_rotation);
        Ok(())
    }
}
