//! Weather (id 24, newest ue4-dev).

use crate::codec::cursor::{Cursor, Put};
use crate::error::Result;
use crate::flavour::VectorWidth;
use crate::packet::Record;

/// The weather parameters. 14 `f32`, 56 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Weather {
    /// Cloudiness, 0–100.
    pub cloudiness: f32,
    /// Precipitation, 0–100.
    pub precipitation: f32,
    /// Puddles, 0–100.
    pub precipitation_deposits: f32,
    /// Wind, 0–100.
    pub wind_intensity: f32,
    /// Sun azimuth, degrees.
    pub sun_azimuth_angle: f32,
    /// Sun altitude, degrees.
    pub sun_altitude_angle: f32,
    /// Fog density, 0–100.
    pub fog_density: f32,
    /// Fog start distance, metres.
    pub fog_distance: f32,
    /// Fog falloff.
    pub fog_falloff: f32,
    /// Wetness, 0–100.
    pub wetness: f32,
    /// Scattering intensity.
    pub scattering_intensity: f32,
    /// Mie scattering scale.
    pub mie_scattering_scale: f32,
    /// Rayleigh scattering scale.
    pub rayleigh_scattering_scale: f32,
    /// Dust storm, 0–100.
    pub dust_storm: f32,
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

    /// Field names in file order (snake case).
    pub const FIELD_NAMES: [&'static str; 14] = [
        "cloudiness",
        "precipitation",
        "precipitation_deposits",
        "wind_intensity",
        "sun_azimuth_angle",
        "sun_altitude_angle",
        "fog_density",
        "fog_distance",
        "fog_falloff",
        "wetness",
        "scattering_intensity",
        "mie_scattering_scale",
        "rayleigh_scattering_scale",
        "dust_storm",
    ];
}

impl Record for Weather {
    fn fixed_size(_: VectorWidth) -> Option<usize> {
        Some(56)
    }

    fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(Weather::from_array(c.f32s()?))
    }

    fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        out.put_f32s(&self.to_array());
        Ok(())
    }
}
