//! Weather (id 24, newest ue4-dev).

use crate::record::fixed_record;

fixed_record! {
    /// The weather parameters. 14 `f32`, 56 bytes.
    #[derive(Debug, Clone, Copy, PartialEq, Default)]
    pub struct Weather {
        /// Cloudiness, 0–100.
        pub cloudiness: f32 => "cloudiness",
        /// Precipitation, 0–100.
        pub precipitation: f32 => "precipitation",
        /// Puddles, 0–100.
        pub precipitation_deposits: f32 => "precipitation_deposits",
        /// Wind, 0–100.
        pub wind_intensity: f32 => "wind_intensity",
        /// Sun azimuth, degrees.
        pub sun_azimuth_angle: f32 => "sun_azimuth_angle",
        /// Sun altitude, degrees.
        pub sun_altitude_angle: f32 => "sun_altitude_angle",
        /// Fog density, 0–100.
        pub fog_density: f32 => "fog_density",
        /// Fog start distance, metres.
        pub fog_distance: f32 => "fog_distance",
        /// Fog falloff.
        pub fog_falloff: f32 => "fog_falloff",
        /// Wetness, 0–100.
        pub wetness: f32 => "wetness",
        /// Scattering intensity.
        pub scattering_intensity: f32 => "scattering_intensity",
        /// Mie scattering scale.
        pub mie_scattering_scale: f32 => "mie_scattering_scale",
        /// Rayleigh scattering scale.
        pub rayleigh_scattering_scale: f32 => "rayleigh_scattering_scale",
        /// Dust storm, 0–100.
        pub dust_storm: f32 => "dust_storm",
    }
}

impl Weather {
    /// The fields in file order.
    pub fn to_array(&self) -> [f32; 14] {
        [
            self.cloudiness,
            self.precipitation,
            self.precipitation_deposits,
            self.wind_intensity,
            self.sun_azimuth_angle,
            self.sun_altitude_angle,
            self.fog_density,
            self.fog_distance,
            self.fog_falloff,
            self.wetness,
            self.scattering_intensity,
            self.mie_scattering_scale,
            self.rayleigh_scattering_scale,
            self.dust_storm,
        ]
    }

    /// Builds the record from the fields in file order.
    pub fn from_array(a: [f32; 14]) -> Self {
        let [
            cloudiness,
            precipitation,
            precipitation_deposits,
            wind_intensity,
            sun_azimuth_angle,
            sun_altitude_angle,
            fog_density,
            fog_distance,
            fog_falloff,
            wetness,
            scattering_intensity,
            mie_scattering_scale,
            rayleigh_scattering_scale,
            dust_storm,
        ] = a;
        Weather {
            cloudiness,
            precipitation,
            precipitation_deposits,
            wind_intensity,
            sun_azimuth_angle,
            sun_altitude_angle,
            fog_density,
            fog_distance,
            fog_falloff,
            wetness,
            scattering_intensity,
            mie_scattering_scale,
            rayleigh_scattering_scale,
            dust_storm,
        }
    }
}
