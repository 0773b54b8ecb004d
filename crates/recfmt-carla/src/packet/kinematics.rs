//! Kinematics (id 12, additional data).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;
use crate::primitive::Vector3;

/// The velocities of one actor. 28 bytes in UE4, 52 in UE5.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Kinematics {
    /// Recorded actor id.
    pub database_id: u32,
    /// Linear velocity in m/s (the recorder scales the engine's cm/s by 0.01).
    pub linear_velocity: Vector3,
    /// Angular velocity as the engine reports it (probably deg/s).
    pub angular_velocity: Vector3,
}

impl Record for Kinematics {
    fn fixed_size(width: VectorWidth) -> Option<usize> {
        Some(4 + 2 * width.vector_size())
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(Kinematics {
            database_id: c.u32()?,
            linear_velocity: c.vector()?,
            angular_velocity: c.vector()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_vector(&self.linear_velocity);
        out.put_vector(&self.angular_velocity);
        Ok(())
    }
}
