//! Time: the time bases of streams, the time systems MET, UTC, TAI and GPS, absolute
//! instants, and the calendar of Unix time. All of recfmt's time handling lives here.
//!
//! Two layers, so that a format crate whose recordings carry no absolute time does not compile
//! a time library:
//!
//! * Always: [`TimeBase`], [`TimeSystem`], [`TimeReference`] without an epoch, and the
//!   proleptic Gregorian calendar of Unix seconds ([`civil_from_days`], [`unix_to_rfc3339`],
//!   [`unix_to_rfc3339_millis`], [`now_rfc3339`]). Unix time has no leap seconds, so this is
//!   exact integer arithmetic with nothing to look up.
//! * With the feature `hifitime`: absolute epochs (`Epoch`, `TimeReference::parse`,
//!   `TimeReference::with_epoch`). Converting between UTC, TAI and
//!   GPS needs the leap seconds, which come from `hifitime`'s table (kept up to date from the
//!   IERS), so UTC and TAI differ by the right number of seconds at every epoch.
//!
//! The feature only adds: without it no [`TimeReference`] has an epoch, and the methods that
//! need one ([`TimeReference::to_system`], [`TimeReference::to_rfc3339`],
//! [`TimeReference::seconds_at`]) answer "no epoch", as they do for a recording without one.

use std::fmt;
use std::str::FromStr;

#[cfg(feature = "hifitime")]
use hifitime::{Epoch, TimeScale, Unit};

use crate::{Error, Result};

/// Seconds per unit of a time column: `numer / denom`.
///
/// ```
/// use recfmt_core::TimeBase;
/// let micros = TimeBase::MICROSECONDS;
/// assert_eq!(micros.to_seconds_f64(1_500_000.0), 1.5);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeBase {
    /// Numerator.
    pub numer: u64,
    /// Denominator (never zero).
    pub denom: u64,
}

impl TimeBase {
    /// The time column is in seconds.
    pub const SECONDS: TimeBase = TimeBase { numer: 1, denom: 1 };
    /// The time column is in milliseconds.
    pub const MILLISECONDS: TimeBase = TimeBase {
        numer: 1,
        denom: 1_000,
    };
    /// The time column is in microseconds.
    pub const MICROSECONDS: TimeBase = TimeBase {
        numer: 1,
        denom: 1_000_000,
    };
    /// The time column is in nanoseconds.
    pub const NANOSECONDS: TimeBase = TimeBase {
        numer: 1,
        denom: 1_000_000_000,
    };

    /// Builds a time base; fails on a zero denominator.
    pub fn new(numer: u64, denom: u64) -> Result<Self> {
        if denom == 0 {
            return Err(Error::invalid("time base denominator is zero"));
        }
        Ok(TimeBase { numer, denom })
    }

    /// Converts a value of the time column into seconds.
    pub fn to_seconds_f64(self, value: f64) -> f64 {
        value * self.numer as f64 / self.denom as f64
    }

    /// A short unit name for the time column (`s`, `ms`, `us`, `ns`, or `1/N s`).
    pub fn unit_name(self) -> String {
        match (self.numer, self.denom) {
            (1, 1) => "s".into(),
            (1, 1_000) => "ms".into(),
            (1, 1_000_000) => "us".into(),
            (1, 1_000_000_000) => "ns".into(),
            (n, d) => format!("{n}/{d} s"),
        }
    }
}

/// A time system in which recording time can be expressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeSystem {
    /// Mission elapsed time: seconds since an arbitrary start, with no link to a calendar
    /// unless an epoch is given.
    Met,
    /// Coordinated Universal Time (with leap seconds).
    Utc,
    /// International Atomic Time.
    Tai,
    /// GPS time (TAI − 19 s, no leap seconds).
    Gps,
}

impl TimeSystem {
    /// The upper-case name (`MET`, `UTC`, `TAI`, `GPS`).
    pub fn name(self) -> &'static str {
        match self {
            TimeSystem::Met => "MET",
            TimeSystem::Utc => "UTC",
            TimeSystem::Tai => "TAI",
            TimeSystem::Gps => "GPS",
        }
    }

    #[cfg(feature = "hifitime")]
    fn scale(self) -> TimeScale {
        match self {
            TimeSystem::Met | TimeSystem::Utc => TimeScale::UTC,
            TimeSystem::Tai => TimeScale::TAI,
            TimeSystem::Gps => TimeScale::GPST,
        }
    }
}

impl fmt::Display for TimeSystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TimeSystem {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "MET" => Ok(TimeSystem::Met),
            "UTC" => Ok(TimeSystem::Utc),
            "TAI" => Ok(TimeSystem::Tai),
            "GPS" | "GPST" => Ok(TimeSystem::Gps),
            other => Err(Error::invalid(format!(
                "unknown time system {other:?} (expected MET, UTC, TAI or GPS)"
            ))),
        }
    }
}

/// The largest distance from its epoch, in seconds, at which a recording time still has an
/// absolute instant: about 300,000 years, well inside what an epoch represents, and far
/// beyond any real recording, so a larger value is damage rather than time.
pub const MAX_ABSOLUTE_SECONDS: f64 = 1e13;

/// How a recording's time column maps onto absolute time.
///
/// Seconds in the recording count from the epoch in `system`. A MET recording with an epoch
/// counts elapsed seconds from a UTC instant; one without an epoch has no absolute time.
/// Epochs need the feature `hifitime` (leap seconds come from its table); without it no
/// reference has one. [`TimeReference::new`] makes a reference without an epoch.
///
/// ```
/// use recfmt_core::{TimeReference, TimeSystem};
/// let elapsed = TimeReference::new(TimeSystem::Met);
/// assert!(!elapsed.has_epoch());
/// assert_eq!(elapsed.to_rfc3339(1.5), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeReference {
    /// The system recording time is kept in.
    pub system: TimeSystem,
    /// The instant at which recording time is zero.
    #[cfg(feature = "hifitime")]
    epoch: Option<Epoch>,
}

impl TimeReference {
    /// Recording time in `system` with no absolute instant (elapsed seconds only).
    pub const fn new(system: TimeSystem) -> Self {
        TimeReference {
            system,
            #[cfg(feature = "hifitime")]
            epoch: None,
        }
    }

    /// Recording time in `system`, counted from `epoch`.
    #[cfg(feature = "hifitime")]
    pub const fn with_epoch(system: TimeSystem, epoch: Epoch) -> Self {
        TimeReference {
            system,
            epoch: Some(epoch),
        }
    }

    /// The instant at which recording time is zero, when known.
    #[cfg(feature = "hifitime")]
    pub fn epoch(&self) -> Option<Epoch> {
        self.epoch
    }

    /// Whether recording time has an absolute instant.
    pub fn has_epoch(&self) -> bool {
        #[cfg(feature = "hifitime")]
        {
            self.epoch.is_some()
        }
        #[cfg(not(feature = "hifitime"))]
        {
            false
        }
    }

    /// Parses an RFC 3339 / ISO 8601 epoch read in `system`.
    ///
    /// ```
    /// use recfmt_core::{TimeReference, TimeSystem};
    /// let r = TimeReference::parse(TimeSystem::Utc, Some("2017-01-01T00:00:00Z")).unwrap();
    /// // 37 leap seconds between UTC and TAI from 2017 on.
    /// let tai = r.to_system(0.0, TimeSystem::Tai).unwrap();
    /// let utc = r.to_system(0.0, TimeSystem::Utc).unwrap();
    /// assert_eq!(tai - utc, 37.0);
    /// ```
    #[cfg(feature = "hifitime")]
    pub fn parse(system: TimeSystem, epoch: Option<&str>) -> Result<Self> {
        let epoch = match epoch {
            None => None,
            Some(text) => {
                let trimmed = text.trim().trim_end_matches('Z');
                let e = Epoch::from_gregorian_str(&format!("{trimmed} {}", system.scale()))
                    .or_else(|_| Epoch::from_str(text.trim()))
                    .map_err(|e| Error::invalid(format!("bad epoch {text:?}: {e}")))?;
                Some(e)
            }
        };
        Ok(TimeReference { system, epoch })
    }

    /// The absolute instant of recording time `seconds`, when an epoch is known and the time
    /// is representable: a NaN, infinite or absurd time (beyond [`MAX_ABSOLUTE_SECONDS`] from
    /// the epoch) has no instant.
    #[cfg(feature = "hifitime")]
    pub fn instant(&self, seconds: f64) -> Option<Epoch> {
        if !seconds.is_finite() || seconds.abs() > MAX_ABSOLUTE_SECONDS {
            return None;
        }
        self.epoch.map(|e| e + seconds * Unit::Second)
    }

    /// Recording time `seconds` as seconds since 1970-01-01 in the target system, with
    /// leap seconds applied (so UTC differs from TAI by the leap seconds of that instant).
    /// `None` without an epoch.
    pub fn to_system(&self, seconds: f64, target: TimeSystem) -> Option<f64> {
        #[cfg(feature = "hifitime")]
        {
            let instant = self.instant(seconds)?;
            let unix = Epoch::from_gregorian_utc_at_midnight(1970, 1, 1);
            let tai = || (instant.to_tai_duration() - unix.to_tai_duration()).to_seconds();
            Some(match target {
                TimeSystem::Utc | TimeSystem::Met => instant.to_unix_seconds(),
                TimeSystem::Tai => tai(),
                TimeSystem::Gps => tai() - 19.0,
            })
        }
        #[cfg(not(feature = "hifitime"))]
        {
            let _ = (seconds, target);
            None
        }
    }

    /// RFC 3339 text of recording time `seconds` in UTC, when an epoch is known.
    pub fn to_rfc3339(&self, seconds: f64) -> Option<String> {
        #[cfg(feature = "hifitime")]
        {
            self.instant(seconds)
                .map(|e| format!("{}Z", e.to_time_scale(TimeScale::UTC).to_isoformat()))
        }
        #[cfg(not(feature = "hifitime"))]
        {
            let _ = seconds;
            None
        }
    }

    /// The epoch as ISO 8601 text in the reference's own system (`Z` for UTC and MET, none
    /// for TAI and GPS), with whole seconds when it has no fraction; `None` without an epoch.
    /// `TimeReference::parse` reads it back.
    pub fn epoch_text(&self) -> Option<String> {
        #[cfg(feature = "hifitime")]
        {
            let iso = self
                .epoch?
                .to_time_scale(self.system.scale())
                .to_isoformat();
            let iso = iso.strip_suffix(".000000").unwrap_or(&iso);
            Some(match self.system {
                TimeSystem::Met | TimeSystem::Utc => format!("{iso}Z"),
                TimeSystem::Tai | TimeSystem::Gps => iso.to_string(),
            })
        }
        #[cfg(not(feature = "hifitime"))]
        {
            None
        }
    }

    /// Recording seconds at an absolute UTC instant given as RFC 3339 text.
    pub fn seconds_at(&self, rfc3339: &str) -> Result<f64> {
        let no_epoch =
            || Error::invalid("this recording has no epoch, so absolute times cannot be used");
        #[cfg(feature = "hifitime")]
        {
            let epoch = self.epoch.ok_or_else(no_epoch)?;
            let at = Epoch::from_str(rfc3339.trim())
                .map_err(|e| Error::invalid(format!("bad time {rfc3339:?}: {e}")))?;
            Ok((at - epoch).to_seconds())
        }
        #[cfg(not(feature = "hifitime"))]
        {
            let _ = rfc3339;
            Err(no_epoch())
        }
    }
}

/// `(year, month 1–12, day 1–31)` of a count of days since 1970-01-01, proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`). Exact integer arithmetic: Unix time has no leap
/// seconds, so this is the calendar of Unix timestamps.
///
/// ```
/// assert_eq!(recfmt_core::civil_from_days(0), (1970, 1, 1));
/// assert_eq!(recfmt_core::civil_from_days(11_016), (2000, 2, 29));
/// assert_eq!(recfmt_core::civil_from_days(-1), (1969, 12, 31));
/// ```
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Days since 1970-01-01 of a proleptic Gregorian date, the inverse of [`civil_from_days`].
///
/// ```
/// assert_eq!(recfmt_core::days_from_civil(2000, 2, 29), 11_016);
/// ```
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DDThh:mm:ssZ` of Unix seconds.
///
/// ```
/// assert_eq!(recfmt_core::unix_to_rfc3339(0x619c_e0fd), "2021-11-23T12:39:25Z");
/// assert_eq!(recfmt_core::unix_to_rfc3339(-1), "1969-12-31T23:59:59Z");
/// ```
pub fn unix_to_rfc3339(secs: i64) -> String {
    let (date, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    format!("{}Z", date_and_time(date, rem))
}

/// `YYYY-MM-DDThh:mm:ss.sssZ` of Unix seconds rounded to the millisecond; `None` for a time
/// outside the years 0000 to 9999 (or not finite), which has no such text.
///
/// ```
/// use recfmt_core::unix_to_rfc3339_millis;
/// assert_eq!(unix_to_rfc3339_millis(1_709_164_800.25).as_deref(), Some("2024-02-29T00:00:00.250Z"));
/// assert_eq!(unix_to_rfc3339_millis(-1.5).as_deref(), Some("1969-12-31T23:59:58.500Z"));
/// assert_eq!(unix_to_rfc3339_millis(f64::NAN), None);
/// ```
pub fn unix_to_rfc3339_millis(unix_seconds: f64) -> Option<String> {
    let ms = (unix_seconds * 1000.0).round();
    // 0000-01-01T00:00:00Z to 10000-01-01T00:00:00Z (excluded); NaN fails the test too.
    if !(-62_167_219_200_000.0..253_402_300_800_000.0).contains(&ms) {
        return None;
    }
    let ms = ms as i64;
    let (date, of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    Some(format!(
        "{}.{:03}Z",
        date_and_time(date, of_day / 1000),
        of_day % 1000
    ))
}

/// The current time as `YYYY-MM-DDThh:mm:ssZ` (UTC, whole seconds), from the system clock;
/// a clock before 1970 reads as 1970-01-01T00:00:00Z.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 2));
    unix_to_rfc3339(secs)
}

/// `YYYY-MM-DDThh:mm:ss` of a day since 1970-01-01 and a second of that day.
fn date_and_time(days: i64, second_of_day: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        second_of_day / 3600,
        second_of_day % 3600 / 60,
        second_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "hifitime")]
    #[test]
    fn leap_seconds_follow_the_table() {
        let r1999 = TimeReference::parse(TimeSystem::Utc, Some("1999-06-01T00:00:00Z")).unwrap();
        let r2020 = TimeReference::parse(TimeSystem::Utc, Some("2020-06-01T00:00:00Z")).unwrap();
        let d = |r: &TimeReference| {
            r.to_system(0.0, TimeSystem::Tai).unwrap() - r.to_system(0.0, TimeSystem::Utc).unwrap()
        };
        assert_eq!(d(&r1999), 32.0);
        assert_eq!(d(&r2020), 37.0);
        let gps_minus_utc = r2020.to_system(0.0, TimeSystem::Gps).unwrap()
            - r2020.to_system(0.0, TimeSystem::Utc).unwrap();
        assert_eq!(gps_minus_utc, 18.0);
    }

    #[cfg(feature = "hifitime")]
    #[test]
    fn gps_epoch_is_tai_minus_19() {
        let gps = TimeReference::parse(TimeSystem::Gps, Some("2020-06-01T00:00:00")).unwrap();
        let tai = gps.to_system(0.0, TimeSystem::Tai).unwrap();
        let g = gps.to_system(0.0, TimeSystem::Gps).unwrap();
        assert_eq!(tai - g, 19.0);
    }

    #[test]
    fn time_system_names_parse() {
        assert_eq!("gps".parse::<TimeSystem>().unwrap(), TimeSystem::Gps);
        assert!("TT".parse::<TimeSystem>().is_err());
    }

    #[cfg(feature = "hifitime")]
    #[test]
    fn epoch_text_reads_back_in_its_own_system() {
        for (system, text) in [
            (TimeSystem::Utc, "2026-02-16T12:00:00Z"),
            (TimeSystem::Met, "2026-02-16T12:00:00.500000Z"),
            (TimeSystem::Tai, "2026-02-16T12:00:37"),
            (TimeSystem::Gps, "2026-02-16T12:00:18"),
        ] {
            let r = TimeReference::parse(system, Some(text)).unwrap();
            assert_eq!(r.epoch_text().as_deref(), Some(text), "{system}");
            assert_eq!(TimeReference::parse(system, Some(text)).unwrap(), r);
        }
        assert_eq!(TimeReference::new(TimeSystem::Utc).epoch_text(), None);
    }

    #[test]
    fn without_an_epoch_there_is_no_absolute_time() {
        let r = TimeReference::new(TimeSystem::Utc);
        assert!(!r.has_epoch());
        assert_eq!(r.to_system(0.0, TimeSystem::Tai), None);
        assert_eq!(r.to_rfc3339(0.0), None);
        assert!(r.seconds_at("2020-01-01T00:00:00Z").is_err());
    }

    #[test]
    fn millisecond_text_rounds_and_stays_in_four_digit_years() {
        assert_eq!(
            unix_to_rfc3339_millis(0.0).as_deref(),
            Some("1970-01-01T00:00:00.000Z")
        );
        // 23:59:59.9996 rounds up into the next day.
        assert_eq!(
            unix_to_rfc3339_millis(951_782_400.0 + 86_399.999_6).as_deref(),
            Some("2000-03-01T00:00:00.000Z")
        );
        assert_eq!(
            unix_to_rfc3339_millis(-62_167_219_200.0).as_deref(),
            Some("0000-01-01T00:00:00.000Z")
        );
        assert_eq!(unix_to_rfc3339_millis(253_402_300_800.0), None);
        assert_eq!(unix_to_rfc3339_millis(1e300), None);
        assert_eq!(unix_to_rfc3339_millis(f64::INFINITY), None);
    }

    #[test]
    fn now_is_a_whole_second_utc_time() {
        let now = now_rfc3339();
        assert_eq!(now.len(), "2026-01-01T00:00:00Z".len(), "{now}");
        assert!(now.as_str() > "2020" && now.ends_with('Z'), "{now}");
    }
}
