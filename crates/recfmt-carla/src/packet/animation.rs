//! Animation packets: AnimVehicle (id 8), AnimWalker (id 9), AnimVehicleWheels (id 21 or 22)
//! and AnimBiker (id 22 or 23).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;
use crate::record::fixed_record;

fixed_record! {
    /// The controls of one vehicle. 21 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct VehicleAnim {
        /// Recorded actor id.
        pub database_id: u32 => "id",
        /// Steering, -1 to 1.
        pub steering: f32 => "steering",
        /// Throttle, 0 to 1.
        pub throttle: f32 => "throttle",
        /// Brake, 0 to 1.
        pub brake: f32 => "brake",
        /// Hand brake engaged.
        pub handbrake: bool => "handbrake",
        /// Current gear.
        pub gear: i32 => "gear",
    }
}

fixed_record! {
    /// The speed of one walker. 8 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct WalkerAnim {
        /// Recorded actor id.
        pub database_id: u32 => "id",
        /// Speed in Unreal units (cm/s).
        pub speed: f32 => "speed" in "cm/s",
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

fixed_record! {
    /// The state of one two-wheeler. 12 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct BikerAnim {
        /// Recorded actor id.
        pub database_id: u32 => "id",
        /// Forward speed in Unreal units.
        pub forward_speed: f32 => "forward_speed",
        /// Engine rpm divided by the maximum rpm.
        pub engine_rotation: f32 => "engine_rotation",
    }
}
