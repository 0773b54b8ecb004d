//! The `time` object: how recording time `t` maps onto absolute time.

use std::str::FromStr;

use recfmt_core::{Epoch, TimeReference, TimeSystem};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The `time` object of `schema.json` or `metadata.json`.
///
/// `t` is always f64 seconds from `epoch`, read in `system` (MET when absent). The epoch may
/// be given as RFC 3339 text (`epoch`) or as a Julian date in TAI (`epoch_jd_tai`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TimeSpec {
    /// `MET`, `UTC`, `TAI` or `GPS` (GPS = TAI − 19 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// RFC 3339 instant at which `t` = 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
    /// The epoch as a Julian date in TAI (phase-6 plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch_jd_tai: Option<f64>,
    /// TAI − UTC in seconds at the epoch (informative; leap seconds come from hifitime's table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_at: Option<f64>,
    /// Unit of `t`; only `seconds` (or `s`) is defined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<String>,
    /// Time of the first frame (metadata.json).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_start: Option<f64>,
    /// Time of the last frame (metadata.json).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_end: Option<f64>,
    /// Nominal step between frames (metadata.json).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dt: Option<f64>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl TimeSpec {
    /// A time object with a system and an RFC 3339 epoch, in seconds.
    pub fn new(system: TimeSystem, epoch: Option<&str>) -> Self {
        TimeSpec {
            system: Some(system.name().to_string()),
            epoch: epoch.map(str::to_string),
            units: Some("seconds".into()),
            ..TimeSpec::default()
        }
    }

    /// The core time reference: system and epoch.
    ///
    /// ```
    /// use recfmt_icarec::TimeSpec;
    /// use recfmt_core::TimeSystem;
    /// let spec = TimeSpec::new(TimeSystem::Gps, Some("2026-01-01T00:00:00Z"));
    /// let r = spec.reference().unwrap();
    /// assert_eq!(r.system, TimeSystem::Gps);
    /// assert!(r.has_epoch());
    /// ```
    pub fn reference(&self) -> Result<TimeReference, String> {
        if let Some(units) = &self.units
            && !matches!(units.trim(), "seconds" | "second" | "s" | "sec")
        {
            return Err(format!(
                "time.units {units:?} (only \"seconds\" is defined)"
            ));
        }
        let system = match &self.system {
            Some(s) => TimeSystem::from_str(s).map_err(|e| e.to_string())?,
            None => TimeSystem::Met,
        };
        if let Some(epoch) = &self.epoch {
            return TimeReference::parse(system, Some(epoch)).map_err(|e| e.to_string());
        }
        if let Some(jd) = self.epoch_jd_tai {
            if !jd.is_finite() {
                return Err(format!(
                    "time.epoch_jd_tai {jd} is not a finite Julian date"
                ));
            }
            return Ok(TimeReference::with_epoch(system, Epoch::from_jde_tai(jd)));
        }
        Ok(TimeReference::new(system))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn met_is_the_default_and_units_are_checked() {
        let r = TimeSpec::default().reference().unwrap();
        assert_eq!(r, TimeReference::new(TimeSystem::Met));
        let bad = TimeSpec {
            units: Some("minutes".into()),
            ..TimeSpec::default()
        };
        assert!(bad.reference().unwrap_err().contains("minutes"));
    }

    #[test]
    fn julian_date_epochs_are_tai() {
        // J2000.0 is JD 2451545.0 TT = 2000-01-01T11:59:27.816 TAI; in TAI it is JD 2451545.0.
        let spec = TimeSpec {
            system: Some("TAI".into()),
            epoch_jd_tai: Some(2_451_545.0),
            ..TimeSpec::default()
        };
        let r = spec.reference().unwrap();
        let from_text = TimeSpec::new(TimeSystem::Tai, Some("2000-01-01T12:00:00"))
            .reference()
            .unwrap();
        let d = r.to_system(0.0, TimeSystem::Tai).unwrap()
            - from_text.to_system(0.0, TimeSystem::Tai).unwrap();
        assert!(d.abs() < 1e-3, "{d}");
    }

    #[test]
    fn gps_epochs_are_tai_minus_19() {
        let gps = TimeSpec::new(TimeSystem::Gps, Some("2026-01-01T00:00:00Z"))
            .reference()
            .unwrap();
        let tai = gps.to_system(0.0, TimeSystem::Tai).unwrap();
        let g = gps.to_system(0.0, TimeSystem::Gps).unwrap();
        assert_eq!(tai - g, 19.0);
    }
}
