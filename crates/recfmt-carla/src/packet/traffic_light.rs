//! State of traffic lights (id 7) and TrafficLightTime (id 16).

use crate::record::fixed_record;

fixed_record! {
    /// The state of one traffic light. 10 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct TrafficLightState {
        /// Recorded actor id.
        pub database_id: u32 => "id",
        /// Whether the light's group is frozen.
        pub is_frozen: bool => "frozen",
        /// Seconds spent in the current state.
        pub elapsed_time: f32 => "elapsed_time" in "s",
        /// 0 Red, 1 Yellow, 2 Green, 3 Off.
        pub state: u8 => "state",
    }
    columns(database_id, state, is_frozen, elapsed_time)
}

fixed_record! {
    /// The phase durations of one traffic light. 16 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct TrafficLightTime {
        /// Recorded actor id.
        pub database_id: u32 => "id",
        /// Green phase, seconds.
        pub green_time: f32 => "green_time" in "s",
        /// Yellow phase, seconds.
        pub yellow_time: f32 => "yellow_time" in "s",
        /// Red phase, seconds.
        pub red_time: f32 => "red_time" in "s",
    }
}
