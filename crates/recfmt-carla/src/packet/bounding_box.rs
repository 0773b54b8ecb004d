//! BoundingBox (id 13) and TriggerVolume (id 17), which share one record layout.

use crate::primitive::Vector3;
use crate::record::fixed_record;

fixed_record! {
    /// A box of one actor. 28 bytes in UE4, 52 in UE5.
    ///
    /// In BoundingBox packets the box is in the actor's local frame (values may be NaN or
    /// infinite, e.g. for the spectator); in TriggerVolume packets it is in world coordinates.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct BoundingBox {
        /// Recorded actor id.
        pub database_id: u32 => "id",
        /// Box centre, cm.
        pub origin: Vector3 => ["origin_x", "origin_y", "origin_z"] in "cm",
        /// Half extent, cm.
        pub extent: Vector3 => ["extent_x", "extent_y", "extent_z"] in "cm",
    }
}
