//! Collision (id 5).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;

/// One collision between two actors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Collision {
    /// Running collision counter since the recorder started.
    pub id: u32,
    /// First actor; `0xFFFFFFFF` (0.9.13+) or 0 (before) when it is not a CARLA actor.
    pub database_id1: u32,
    /// Second actor, same convention.
    pub database_id2: u32,
    /// Whether the first actor has `role_name == "hero"`.
    pub is_actor1_hero: bool,
    /// Whether the second actor is the hero.
    pub is_actor2_hero: bool,
}

impl Record for Collision {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        Some(14)
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(Collision {
            id: c.u32()?,
            database_id1: c.u32()?,
            database_id2: c.u32()?,
            is_actor1_hero: c.bool()?,
            is_actor2_hero: c.bool()?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_u32(self.id);
        out.put_u32(self.database_id1);
        out.put_u32(self.database_id2);
        out.put_bool(self.is_actor1_hero);
        out.put_bool(self.is_actor2_hero);
        Ok(())
    }
}
