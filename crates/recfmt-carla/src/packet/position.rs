//! Position (id 6).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;
use crate::primitive::Vector3;

/// The transform of one actor in one frame. 28 bytes in UE4, 52 in UE5.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Position {
    /// Recorded actor id.
    pub database_id: u32,
    /// Location in centimetres.
    pub location: Vector3,
    /// Roll (X), pitch (Y), yaw (Z) in degrees.
    pub rotation: Vector3,
}

impl Record for Position {
    fn fixed_size(width: VectorWidth) -> Option<usize> {
        Some(4 + 2 * width.vector_size())
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(Position {
            database_id: c.u32()?,
            location: c.vector()?,
            rotation: c.vector()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_vector(&self.location);
        out.put_vector(&self.rotation);
        Ok(())
    }
}
