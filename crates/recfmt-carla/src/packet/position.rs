//! Position (id 6).

use crate::primitive::Vector3;
use crate::record::fixed_record;

fixed_record! {
    /// The transform of one actor in one frame. 28 bytes in UE4, 52 in UE5.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct Position {
        /// Recorded actor id.
        pub database_id: u32 => "id",
        /// Location in centimetres.
        pub location: Vector3 => ["x", "y", "z"] in "cm",
        /// Roll (X), pitch (Y), yaw (Z) in degrees.
        pub rotation: Vector3 => ["roll", "pitch", "yaw"] in "deg",
    }
}
