//! Collision (id 5).

use crate::record::fixed_record;

fixed_record! {
    /// One collision between two actors.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct Collision {
        /// Running collision counter since the recorder started.
        pub id: u32 => "collision_id",
        /// First actor; `0xFFFFFFFF` (0.9.13+) or 0 (before) when it is not a CARLA actor.
        pub database_id1: u32 => "actor1",
        /// Second actor, same convention.
        pub database_id2: u32 => "actor2",
        /// Whether the first actor has `role_name == "hero"`.
        pub is_actor1_hero: bool => "actor1_hero",
        /// Whether the second actor is the hero.
        pub is_actor2_hero: bool => "actor2_hero",
    }
}
