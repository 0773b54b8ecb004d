//! Kinematics (id 12, additional data).

use crate::primitive::Vector3;
use crate::record::fixed_record;

fixed_record! {
    /// The velocities of one actor. 28 bytes in UE4, 52 in UE5.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct Kinematics {
        /// Recorded actor id.
        pub database_id: u32 => "id",
        /// Linear velocity in m/s (the recorder scales the engine's cm/s by 0.01).
        pub linear_velocity: Vector3 => ["linear_velocity_x", "linear_velocity_y", "linear_velocity_z"] in "m/s",
        /// Angular velocity as the engine reports it (probably deg/s).
        pub angular_velocity: Vector3 => ["angular_velocity_x", "angular_velocity_y", "angular_velocity_z"] in "deg/s",
    }
}
