//! VehicleDoor (id 21 or 23, depending on the build).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;

/// A door of one vehicle opening or closing. 6 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VehicleDoor {
    /// Recorded actor id.
    pub database_id: u32,
    /// FL 0, FR 1, RL 2, RR 3, Hood 4, Trunk 5, All 6.
    pub doors: u8,
    /// Whether the door is open.
    pub is_open: bool,
}

impl Record for VehicleDoor {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        Some(6)
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(VehicleDoor {
            database_id: c.u32()?,
            doors: c.u8()?,
            is_open: c.bool()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_u8(self.doors);
        out.put_bool(self.is_open);
        Ok(())
    }
}
