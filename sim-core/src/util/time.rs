//! Simulated time: integer microseconds, and the strict duration syntax of scenarios.
//!
//! The clock and every event time are integer microseconds. Durations drawn from
//! a distribution or priced from a model are computed in `f64` and rounded once
//! to the microsecond, where they are made. Outputs render
//! seconds with [`SimTime::secs_string`], which is exact (no rounding).

use std::fmt;

/// A point in simulated time, in microseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

/// Microseconds per second.
pub const MICROS_PER_SEC: u64 = 1_000_000;

impl SimTime {
    /// The start of the simulation.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable time, used as "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Microseconds since start.
    pub fn micros(self) -> u64 {
        self.0
    }
    /// This time plus a duration, saturating at [`SimTime::MAX`].
    pub fn plus(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
    /// The duration since an earlier time (zero if `earlier` is later).
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
    /// Seconds as an exact decimal string (`"90"`, `"1.5"`, `"0.000001"`).
    pub fn secs_string(self) -> String {
        secs_string(self.0)
    }
    /// Seconds as a float, for metrics (never for decisions).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / MICROS_PER_SEC as f64
    }
}

impl SimDuration {
    /// Zero length.
    pub const ZERO: SimDuration = SimDuration(0);
    /// A job's run time when its input gives none: it runs until the run ends (the
    /// horizon, the session limit, or the last other event).
    pub const UNBOUNDED: SimDuration = SimDuration(u64::MAX);
    /// Whether this is [`SimDuration::UNBOUNDED`].
    pub fn is_unbounded(self) -> bool {
        self == SimDuration::UNBOUNDED
    }
    /// From whole seconds.
    pub const fn from_secs(s: u64) -> SimDuration {
        SimDuration(s * MICROS_PER_SEC)
    }
    /// Microseconds.
    pub fn micros(self) -> u64 {
        self.0
    }
    /// Seconds as an exact decimal string.
    pub fn secs_string(self) -> String {
        secs_string(self.0)
    }
    /// Seconds as a float, for metrics (never for decisions).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / MICROS_PER_SEC as f64
    }
}

/// Renders microseconds as exact decimal seconds, without trailing zeros.
pub fn secs_string(us: u64) -> String {
    let mut s = String::new();
    push_secs(&mut s, us);
    s
}

/// Appends [`secs_string`]`(us)` to `out` (for writers that reuse one buffer per
/// field over millions of rows).
pub fn push_secs(out: &mut String, us: u64) {
    let whole = us / MICROS_PER_SEC;
    let frac = us % MICROS_PER_SEC;
    crate::util::text::push_u64(out, whole);
    if frac == 0 {
        return;
    }
    out.push('.');
    // Six digits with leading zeros, then without the trailing ones.
    let mut f = frac;
    let mut digits = [b'0'; 6];
    for d in digits.iter_mut().rev() {
        *d = b'0' + (f % 10) as u8;
        f /= 10;
    }
    let keep = 6 - digits.iter().rev().take_while(|&&d| d == b'0').count();
    for &d in &digits[..keep] {
        out.push(d as char);
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", secs_string(self.0))
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s", secs_string(self.0))
    }
}

/// Why a duration string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Empty input.
    #[error("empty duration; expected e.g. 90s, 15m, 2h, 30d")]
    Empty,
    /// A number was not followed by a unit, or the unit is unknown.
    #[error(
        "bad duration `{0}`: expected an integer followed by a unit (us, ms, s, m, h, d), e.g. 90s, 15m, 2h30m, 30d"
    )]
    Syntax(String),
    /// The value does not fit in 64-bit microseconds.
    #[error("duration `{0}` is too large")]
    Overflow(String),
}

/// Seconds in a day.
pub const DAY_SECS: i64 = 86_400;

/// A wall-clock date and time `YYYY-MM-DDTHH:MM[:SS]` (an optional trailing `Z`),
/// as seconds since 1970-01-01T00:00:00 in the cluster's local time (no zone: the
/// simulated cluster has one clock).
pub fn parse_civil(s: &str) -> Option<i64> {
    let s = s.strip_suffix('Z').unwrap_or(s);
    let (date, time) = s.split_once('T')?;
    let num = |x: &str, len: usize| {
        (x.len() == len && x.bytes().all(|b| b.is_ascii_digit())).then(|| x.parse::<i64>().ok()).flatten()
    };
    let d: Vec<&str> = date.split('-').collect();
    let t: Vec<&str> = time.split(':').collect();
    if d.len() != 3 || !(2..=3).contains(&t.len()) {
        return None;
    }
    let (y, m, day) = (num(d[0], 4)?, num(d[1], 2)?, num(d[2], 2)?);
    let (h, mi) = (num(t[0], 2)?, num(t[1], 2)?);
    let sec = if t.len() == 3 { num(t[2], 2)? } else { 0 };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&m) || day < 1 || day > days_in[m as usize - 1] || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let (yy, mm) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * DAY_SECS + h * 3600 + mi * 60 + sec)
}

/// Parses a Go duration (`300ms`, `1.5h`, `2h45m`) into microseconds, as Go's
/// `time.ParseDuration` reads it (Volcano's conf arguments and annotations).
pub fn parse_go_duration(s: &str) -> Option<u64> {
    let mut rest = s.trim();
    if rest == "0" {
        return Some(0);
    }
    let mut total = 0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let n = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if n == 0 {
            return None;
        }
        let v: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let u = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let mult = match &rest[..u] {
            "ns" => 1e-3,
            "us" | "µs" => 1.0,
            "ms" => 1e3,
            "s" => 1e6,
            "m" => 60e6,
            "h" => 3600e6,
            _ => return None,
        };
        total += v * mult;
        rest = &rest[u..];
    }
    Some(total.round() as u64)
}

/// Parses a duration: one or more `<integer><unit>` groups, units `us`, `ms`, `s`,
/// `m`, `h`, `d`, `w` (e.g. `90s`, `15m`, `2h30m`, `30d`). A bare `0` is accepted.
///
/// ```
/// use lahar_core::util::time::{parse_duration, SimDuration};
/// assert_eq!(parse_duration("15m").unwrap(), SimDuration::from_secs(900));
/// assert_eq!(parse_duration("2h30m").unwrap(), SimDuration::from_secs(9000));
/// assert!(parse_duration("15").is_err());
/// ```
pub fn parse_duration(s: &str) -> Result<SimDuration, DurationError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(DurationError::Empty);
    }
    if t == "0" {
        return Ok(SimDuration::ZERO);
    }
    let bytes = t.as_bytes();
    let mut i = 0;
    let mut total: u64 = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return Err(DurationError::Syntax(t.to_string()));
        }
        let n: u64 = t[start..i].parse().map_err(|_| DurationError::Overflow(t.to_string()))?;
        let ustart = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let mult = match &t[ustart..i] {
            "us" => 1,
            "ms" => 1_000,
            "s" => MICROS_PER_SEC,
            "m" => 60 * MICROS_PER_SEC,
            "h" => 3_600 * MICROS_PER_SEC,
            "d" => 86_400 * MICROS_PER_SEC,
            "w" => 7 * 86_400 * MICROS_PER_SEC,
            _ => return Err(DurationError::Syntax(t.to_string())),
        };
        let part = n.checked_mul(mult).ok_or_else(|| DurationError::Overflow(t.to_string()))?;
        total = total.checked_add(part).ok_or_else(|| DurationError::Overflow(t.to_string()))?;
    }
    Ok(SimDuration(total))
}

#[cfg(test)]
mod tests {

    #[test]
    fn civil_times() {
        assert_eq!(super::parse_civil("1970-01-01T00:00"), Some(0));
        assert_eq!(super::parse_civil("1970-01-02T01:00:30Z"), Some(86_400 + 3_630));
        assert_eq!(super::parse_civil("2026-11-24T12:00:00"), Some(1_795_521_600));
        assert_eq!(super::parse_civil("2024-02-29T00:00"), Some(1_709_164_800));
        assert_eq!(super::parse_civil("2023-02-29T00:00"), None);
        assert_eq!(super::parse_civil("2026-11-24 12:00"), None);
        assert_eq!(super::parse_civil("2026-11-24T24:00"), None);
    }

    use super::*;

    #[test]
    fn parses_the_documented_units() {
        assert_eq!(parse_duration("90s").unwrap().0, 90_000_000);
        assert_eq!(parse_duration("15m").unwrap().0, 900_000_000);
        assert_eq!(parse_duration("2h").unwrap().0, 7_200_000_000);
        assert_eq!(parse_duration("30d").unwrap().0, 2_592_000_000_000);
        assert_eq!(parse_duration("250ms").unwrap().0, 250_000);
        assert_eq!(parse_duration("7us").unwrap().0, 7);
        assert_eq!(parse_duration("1w").unwrap().0, 604_800_000_000);
        assert_eq!(parse_duration("1h30m15s").unwrap().0, 5_415_000_000);
        assert_eq!(parse_duration(" 0 ").unwrap().0, 0);
    }

    #[test]
    fn rejects_malformed_durations() {
        for bad in ["", "15", "s", "1.5h", "-3s", "3x", "h2", "2 h", "1y"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be rejected");
        }
        assert!(matches!(parse_duration("99999999999999999999d"), Err(DurationError::Overflow(_))));
        assert!(matches!(parse_duration("300000000d"), Err(DurationError::Overflow(_))));
    }

    #[test]
    fn renders_exact_seconds() {
        assert_eq!(secs_string(0), "0");
        assert_eq!(secs_string(90_000_000), "90");
        assert_eq!(secs_string(1_500_000), "1.5");
        assert_eq!(secs_string(1), "0.000001");
        assert_eq!(secs_string(3_600_000_123), "3600.000123");
        assert_eq!(secs_string(120_010_000), "120.01");
        assert_eq!(secs_string(7_100_000_000), "7100");
    }
}
