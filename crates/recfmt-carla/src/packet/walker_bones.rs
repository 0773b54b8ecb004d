//! WalkerBones (id 19, additional data, 0.9.14+).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;
use crate::primitive::{FString, Vector3};

/// The skeleton pose of one walker (variable size).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WalkerBones {
    /// Recorded actor id.
    pub database_id: u32,
    /// Bones (`u16` count on disk).
    pub bones: Vec<Bone>,
}

/// One bone's transform relative to its parent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Bone {
    /// Bone name.
    pub name: FString,
    /// Relative location, cm.
    pub location: Vector3,
    /// Relative rotation: roll, pitch, yaw in degrees.
    pub rotation: Vector3,
}

impl Record for WalkerBones {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        None
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        let database_id = c.u32()?;
        let n = usize::from(c.u16()?);
        let min = 2 + 2 * c.width.vector_size();
        let mut bones = Vec::with_capacity(n.min(c.remaining() / min));
        for _ in 0..n {
            bones.push(Bone {
                name: c.fstring()?,
                location: c.vector()?,
                rotation: c.vector()?,
            });
        }
        Ok(WalkerBones { database_id, bones })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.database_id);
        out.put_count_u16("bone count", self.bones.len())?;
        for b in &self.bones {
            out.put_fstring("bone name", &b.name)?;
            out.put_vector(&b.location);
            out.put_vector(&b.rotation);
        }
        Ok(())
    }
}
