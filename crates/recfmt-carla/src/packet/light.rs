//! VehicleLight (id 10) and SceneLight (id 11).

use crate::record::fixed_record;

fixed_record! {
    /// The lights of one vehicle. 8 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    pub struct VehicleLight {
        /// Recorded actor id.
        pub database_id: u32 => "id",
        /// `carla::rpc::VehicleLightState` bitmask: 0x1 Position, 0x2 LowBeam, 0x4 HighBeam,
        /// 0x8 Brake, 0x10 RightBlinker, 0x20 LeftBlinker, 0x40 Reverse, 0x80 Fog,
        /// 0x100 Interior, 0x200 Special1, 0x400 Special2.
        pub state: u32 => "state",
    }
}

fixed_record! {
    /// A change of one street or building light. 26 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct SceneLight {
        /// Light id (-1 occurs).
        pub light_id: i32 => "id",
        /// Intensity.
        pub intensity: f32 => "intensity",
        /// Linear colour R, G, B, A.
        pub color: [f32; 4] => ["r", "g", "b", "a"],
        /// Whether the light is on.
        pub on: bool => "on",
        /// 0 Null, 1 Vehicle, 2 Street, 3 Building, 4 Other.
        pub light_type: u8 => "light_type",
    }
}
