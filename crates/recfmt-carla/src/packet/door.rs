//! VehicleDoor (id 21 or 23, depending on the build).

use crate::record::fixed_record;

fixed_record! {
    /// A door of one vehicle opening or closing. 6 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct VehicleDoor {
        /// Recorded actor id.
        pub database_id: u32 => "id",
        /// FL 0, FR 1, RL 2, RR 3, Hood 4, Trunk 5, All 6.
        pub doors: u8 => "door",
        /// Whether the door is open.
        pub is_open: bool => "open",
    }
}
