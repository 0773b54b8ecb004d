//! `localtime` + `strftime("%x %X")` in the C locale, with the time zone rules of the `TZ`
//! environment variable as glibc reads them.
//!
//! Supported: an unset or empty `TZ` (UTC, see [`TimeZone::from_env`]), POSIX rule strings
//! (`UTC0`, `EST5`, `JST-9`, `<+0330>-3:30`, `CET-1CEST,M3.5.0,M10.5.0/3`, `EST5EDT` with the
//! default US rules), and zone names or paths of compiled TZif files (`Europe/Berlin`,
//! `:America/New_York`, `/etc/localtime`) looked up in `$TZDIR` or `/usr/share/zoneinfo`.
//! Like glibc, anything that cannot be parsed or found means UTC.

use recfmt_core::{civil_from_days, days_from_civil};
use std::path::{Path, PathBuf};

/// A time zone: how far local time is from UTC at a given instant.
///
/// ```
/// use recfmt_carla::query::TimeZone;
/// let date = 0x619c_e0fd; // 2021-11-23 12:39:25 UTC
/// assert_eq!(TimeZone::utc().format_c_date(date), "11/23/21 12:39:25");
/// assert_eq!(TimeZone::parse("EST5").format_c_date(date), "11/23/21 07:39:25");
/// assert_eq!(TimeZone::parse("CET-1CEST,M3.5.0,M10.5.0/3").format_c_date(date), "11/23/21 13:39:25");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TimeZone {
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Posix(PosixTz),
    TzIf(TzIf),
}

/// A POSIX `TZ` rule. Offsets are seconds east of UTC (the opposite sign of the text).
#[derive(Debug, Clone, PartialEq)]
struct PosixTz {
    std_offset: i64,
    dst: Option<Dst>,
}

#[derive(Debug, Clone, PartialEq)]
struct Dst {
    offset: i64,
    start: (Rule, i64),
    end: (Rule, i64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Rule {
    /// `Jn`: day 1–365, February 29 never counted.
    Julian1(i64),
    /// `n`: day 0–365, February 29 counted.
    Julian0(i64),
    /// `Mm.w.d`: day `d` (0 = Sunday) of week `w` (5 = last) of month `m`.
    Month(i64, i64, i64),
}

/// The transitions of a compiled zone file.
#[derive(Debug, Clone, PartialEq)]
struct TzIf {
    transitions: Vec<(i64, usize)>,
    types: Vec<(i64, bool)>,
    footer: Option<PosixTz>,
}

impl Default for TimeZone {
    fn default() -> Self {
        TimeZone::utc()
    }
}

impl TimeZone {
    /// UTC.
    pub fn utc() -> Self {
        TimeZone {
            kind: Kind::Posix(PosixTz {
                std_offset: 0,
                dst: None,
            }),
        }
    }

    /// The zone the `TZ` environment variable names; UTC when it is unset or empty.
    ///
    /// (A CARLA server with `TZ` unset uses the machine's `/etc/localtime`; this crate
    /// defaults to UTC so that output does not depend on the machine. Set `TZ=:/etc/localtime`
    /// for the machine's zone.)
    pub fn from_env() -> Self {
        match std::env::var("TZ") {
            Ok(tz) => TimeZone::parse(&tz),
            Err(_) => TimeZone::utc(),
        }
    }

    /// Parses a `TZ` value: a POSIX rule string, or a zone file name (optionally after `:`).
    /// Falls back to UTC, as glibc does, when neither works.
    pub fn parse(tz: &str) -> Self {
        if tz.is_empty() {
            return TimeZone::utc();
        }
        if let Some(name) = tz.strip_prefix(':') {
            return load_tzif(name).map_or_else(TimeZone::utc, |z| TimeZone {
                kind: Kind::TzIf(z),
            });
        }
        if let Some(z) = load_tzif(tz) {
            return TimeZone {
                kind: Kind::TzIf(z),
            };
        }
        match parse_posix(tz) {
            Some(p) => TimeZone {
                kind: Kind::Posix(p),
            },
            None => TimeZone::utc(),
        }
    }

    /// Seconds east of UTC at Unix time `t`.
    pub fn offset_at(&self, t: i64) -> i64 {
        match &self.kind {
            Kind::Posix(p) => p.offset_at(t),
            Kind::TzIf(z) => z.offset_at(t),
        }
    }

    /// `strftime("%x %X", localtime(t))` in the C locale: `MM/DD/YY HH:MM:SS`.
    pub fn format_c_date(&self, t: i64) -> String {
        let local = t.saturating_add(self.offset_at(t));
        let (y, m, d) = civil_from_days(local.div_euclid(86_400));
        let s = local.rem_euclid(86_400);
        format!(
            "{m:02}/{d:02}/{:02} {:02}:{:02}:{:02}",
            y.rem_euclid(100),
            s / 3600,
            s % 3600 / 60,
            s % 60
        )
    }
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

impl PosixTz {
    fn offset_at(&self, t: i64) -> i64 {
        let Some(dst) = &self.dst else {
            return self.std_offset;
        };
        let year = civil_from_days((t + self.std_offset).div_euclid(86_400)).0;
        // Start is given in standard time, end in daylight time.
        let start = rule_day(dst.start.0, year) * 86_400 + dst.start.1 - self.std_offset;
        let end = rule_day(dst.end.0, year) * 86_400 + dst.end.1 - dst.offset;
        let in_dst = if start < end {
            t >= start && t < end
        } else {
            !(t >= end && t < start)
        };
        if in_dst { dst.offset } else { self.std_offset }
    }
}

/// Day (since 1970-01-01) on which `rule` falls in `year`.
fn rule_day(rule: Rule, year: i64) -> i64 {
    let jan1 = days_from_civil(year, 1, 1);
    match rule {
        Rule::Julian1(n) => {
            let leap_shift = i64::from(is_leap(year) && n >= 60);
            jan1 + n - 1 + leap_shift
        }
        Rule::Julian0(n) => jan1 + n,
        Rule::Month(m, w, d) => {
            let first = days_from_civil(year, m, 1);
            // 1970-01-01 was a Thursday (weekday 4).
            let wday_first = (first + 4).rem_euclid(7);
            let mut day = first + (d - wday_first).rem_euclid(7) + (w - 1) * 7;
            let next_month = if m == 12 {
                days_from_civil(year + 1, 1, 1)
            } else {
                days_from_civil(year, m + 1, 1)
            };
            while day >= next_month {
                day -= 7;
            }
            day
        }
    }
}

/// Parses a POSIX TZ string; `None` when it is not one.
fn parse_posix(s: &str) -> Option<PosixTz> {
    let mut p = Parser { s: s.as_bytes() };
    p.name()?;
    let std_offset = -p.offset()?;
    if p.s.is_empty() {
        return Some(PosixTz {
            std_offset,
            dst: None,
        });
    }
    p.name()?;
    let dst_offset = if p.s.first().is_some_and(|c| *c != b',') {
        -p.offset()?
    } else {
        std_offset + 3600
    };
    let (start, end) = if p.s.is_empty() {
        // glibc's default when no rule is given: the US rules.
        ((Rule::Month(3, 2, 0), 7200), (Rule::Month(11, 1, 0), 7200))
    } else {
        p.eat(b',')?;
        let start = p.rule()?;
        p.eat(b',')?;
        let end = p.rule()?;
        (start, end)
    };
    if !p.s.is_empty() {
        return None;
    }
    Some(PosixTz {
        std_offset,
        dst: Some(Dst {
            offset: dst_offset,
            start,
            end,
        }),
    })
}

struct Parser<'a> {
    s: &'a [u8],
}

impl Parser<'_> {
    fn eat(&mut self, c: u8) -> Option<()> {
        let (&first, rest) = self.s.split_first()?;
        (first == c).then(|| self.s = rest)
    }

    fn name(&mut self) -> Option<()> {
        if self.eat(b'<').is_some() {
            let end = self.s.iter().position(|&c| c == b'>')?;
            self.s = &self.s[end + 1..];
            return (end >= 3).then_some(());
        }
        let n = self
            .s
            .iter()
            .take_while(|c| c.is_ascii_alphabetic())
            .count();
        self.s = &self.s[n..];
        (n >= 3).then_some(())
    }

    fn number(&mut self) -> Option<i64> {
        let n = self.s.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let v = std::str::from_utf8(&self.s[..n]).ok()?.parse().ok()?;
        self.s = &self.s[n..];
        Some(v)
    }

    /// `[+-]hh[:mm[:ss]]` in seconds, with the sign of the text.
    fn offset(&mut self) -> Option<i64> {
        let sign = match self.s.first() {
            Some(b'-') => {
                self.s = &self.s[1..];
                -1
            }
            Some(b'+') => {
                self.s = &self.s[1..];
                1
            }
            _ => 1,
        };
        let mut secs = self.number()? * 3600;
        if self.eat(b':').is_some() {
            secs += self.number()? * 60;
            if self.eat(b':').is_some() {
                secs += self.number()?;
            }
        }
        Some(sign * secs)
    }

    fn rule(&mut self) -> Option<(Rule, i64)> {
        let rule = if self.eat(b'J').is_some() {
            Rule::Julian1(self.number()?.clamp(1, 365))
        } else if self.eat(b'M').is_some() {
            let m = self.number()?;
            self.eat(b'.')?;
            let w = self.number()?;
            self.eat(b'.')?;
            let d = self.number()?;
            if !(1..=12).contains(&m) || !(1..=5).contains(&w) || d > 6 {
                return None;
            }
            Rule::Month(m, w, d)
        } else {
            Rule::Julian0(self.number()?.min(365))
        };
        let time = if self.eat(b'/').is_some() {
            self.offset()?
        } else {
            7200
        };
        Some((rule, time))
    }
}

/// Reads a compiled zone file by name (relative to `$TZDIR` or `/usr/share/zoneinfo`) or
/// absolute path.
fn load_tzif(name: &str) -> Option<TzIf> {
    if name.is_empty() || name.contains("..") {
        return None;
    }
    let path = if Path::new(name).is_absolute() {
        PathBuf::from(name)
    } else {
        let dir = std::env::var_os("TZDIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/usr/share/zoneinfo"));
        dir.join(name)
    };
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.len() > 1 << 20 {
        return None;
    }
    parse_tzif(&std::fs::read(path).ok()?)
}

fn parse_tzif(b: &[u8]) -> Option<TzIf> {
    let be32 =
        |p: usize| -> Option<u32> { Some(u32::from_be_bytes(b.get(p..p + 4)?.try_into().ok()?)) };
    let counts = |at: usize| -> Option<[usize; 6]> {
        if b.get(at..at + 4)? != b"TZif" {
            return None;
        }
        let mut c = [0usize; 6];
        for (i, slot) in c.iter_mut().enumerate() {
            *slot = be32(at + 20 + 4 * i)? as usize;
        }
        Some(c)
    };
    let [isut, isstd, leap, timecnt, typecnt, charcnt] = counts(0)?;
    let v1_len = timecnt * 5 + typecnt * 6 + charcnt + leap * 8 + isstd + isut;
    let version = *b.get(4)?;
    let (at, time_size) = if version >= b'2' {
        (44 + v1_len, 8usize)
    } else {
        (0, 4)
    };
    let [isut, isstd, leap, timecnt, typecnt, charcnt] = counts(at)?;
    if typecnt == 0 {
        return None;
    }
    let mut p = at + 44;
    let mut transitions = Vec::with_capacity(timecnt.min(b.len()));
    for i in 0..timecnt {
        let q = p + i * time_size;
        let t = if time_size == 8 {
            i64::from_be_bytes(b.get(q..q + 8)?.try_into().ok()?)
        } else {
            i64::from(be32(q)? as i32)
        };
        let idx = usize::from(*b.get(p + timecnt * time_size + i)?);
        transitions.push((t, idx.min(typecnt - 1)));
    }
    p += timecnt * (time_size + 1);
    let mut types = Vec::with_capacity(typecnt);
    for i in 0..typecnt {
        let q = p + i * 6;
        types.push((i64::from(be32(q)? as i32), *b.get(q + 4)? != 0));
    }
    p += typecnt * 6 + charcnt + leap * (time_size + 4) + isstd + isut;
    let footer = if time_size == 8 {
        b.get(p..)
            .and_then(|rest| rest.strip_prefix(b"\n"))
            .and_then(|rest| {
                let end = rest.iter().position(|&c| c == b'\n')?;
                std::str::from_utf8(&rest[..end]).ok()
            })
            .and_then(parse_posix)
    } else {
        None
    };
    Some(TzIf {
        transitions,
        types,
        footer,
    })
}

impl TzIf {
    fn offset_at(&self, t: i64) -> i64 {
        match self.transitions.iter().rposition(|&(when, _)| when <= t) {
            Some(i) if i + 1 == self.transitions.len() && self.footer.is_some() => {
                self.footer.as_ref().map_or(0, |f| f.offset_at(t))
            }
            Some(i) => self.types[self.transitions[i].1].0,
            None if self.transitions.is_empty() && self.footer.is_some() => {
                self.footer.as_ref().map_or(0, |f| f.offset_at(t))
            }
            None => {
                // Before the first transition: the first standard-time type.
                self.types
                    .iter()
                    .find(|(_, dst)| !dst)
                    .or(self.types.first())
                    .map_or(0, |(off, _)| *off)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_and_fixed_offsets() {
        let t = 0x619c_e0fd;
        assert_eq!(TimeZone::utc().format_c_date(t), "11/23/21 12:39:25");
        assert_eq!(TimeZone::parse("").format_c_date(t), "11/23/21 12:39:25");
        assert_eq!(
            TimeZone::parse("UTC0").format_c_date(t),
            "11/23/21 12:39:25"
        );
        assert_eq!(
            TimeZone::parse("JST-9").format_c_date(t),
            "11/23/21 21:39:25"
        );
        assert_eq!(
            TimeZone::parse("<+0330>-3:30").format_c_date(t),
            "11/23/21 16:09:25"
        );
        assert_eq!(
            TimeZone::parse("garbage").format_c_date(t),
            "11/23/21 12:39:25"
        );
        assert_eq!(TimeZone::utc().format_c_date(0), "01/01/70 00:00:00");
        assert_eq!(TimeZone::utc().format_c_date(-1), "12/31/69 23:59:59");
        assert_eq!(
            TimeZone::utc().format_c_date(951_782_400),
            "02/29/00 00:00:00"
        );
    }

    #[test]
    fn dst_rules() {
        let z = TimeZone::parse("EST5EDT,M3.2.0,M11.1.0");
        // 2023-03-12 06:59:59 UTC is 01:59:59 EST; one second later it is 03:00:00 EDT.
        assert_eq!(z.format_c_date(1_678_604_399), "03/12/23 01:59:59");
        assert_eq!(z.format_c_date(1_678_604_400), "03/12/23 03:00:00");
        // 2023-11-05 05:59:59 UTC is 01:59:59 EDT, then 01:00:00 EST.
        assert_eq!(z.format_c_date(1_699_163_999), "11/05/23 01:59:59");
        assert_eq!(z.format_c_date(1_699_164_000), "11/05/23 01:00:00");
        // Without rules, the US rules apply (when no zone file has the name).
        let d = TimeZone::parse("ABC5DEF");
        assert_eq!(d.offset_at(1_678_604_400), z.offset_at(1_678_604_400));
        assert_eq!(d.offset_at(1_699_164_000), z.offset_at(1_699_164_000));
        // Southern hemisphere: DST across the new year.
        let nz = TimeZone::parse("NZST-12NZDT,M9.5.0,M4.1.0/3");
        assert_eq!(nz.offset_at(1_672_531_200), 13 * 3600); // 2023-01-01
        assert_eq!(nz.offset_at(1_688_169_600), 12 * 3600); // 2023-07-01
        let j = TimeZone::parse("XXX0YYY,J60/0,J300/0");
        assert_eq!(j.offset_at(days_from_civil(2024, 3, 1) * 86_400), 3600);
        assert_eq!(j.offset_at(days_from_civil(2024, 2, 29) * 86_400), 0);
    }

    #[test]
    fn zone_files_when_installed() {
        let Some(z) = load_tzif("Europe/Berlin") else {
            eprintln!("skipping: no zoneinfo database");
            return;
        };
        let z = TimeZone {
            kind: Kind::TzIf(z),
        };
        assert_eq!(z.format_c_date(0x619c_e0fd), "11/23/21 13:39:25");
        assert_eq!(z.format_c_date(1_688_169_600), "07/01/23 02:00:00");
        // Far future: the footer rule applies.
        assert_eq!(z.offset_at(4_102_444_800 + 180 * 86_400), 7200);
    }

    #[test]
    fn calendar_round_trip() {
        for days in [-719_468, -1, 0, 59, 365, 11_016, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
