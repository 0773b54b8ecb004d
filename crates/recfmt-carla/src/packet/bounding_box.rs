//! BoundingBox (id 13) and TriggerVolume (id 17), which share one record layout.

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;
use crate::primitive::Vector3;

/// A box of one actor. 28 bytes in UE4, 52 in UE5.
///
/// In BoundingBox packets the box is in the actor's local frame (values may be NaN or
/// infinite, e.g. for the spectator); in TriggerVolume packets it is in world coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BoundingBox {
    /// Recorded actor id.
    pub database_id: u32,
    /// Box centre, cm.
    pub origin: Vector3,
    /// Half extent, cm.
    pub extent: Vector3,
}

impl Record for BoundingBox {
    fn fixed_size(width: VectorWidth) -> Option<usize> {
        Some(4 + 2 * width.vector_size())
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(BoundingBox {
            database_id: c.u32()?,
            origin: c.vector()?,
            extent: c.vector()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_vector(&self.origin);
        out.put_vector(&self.extent);
        Ok(())
    }
}
