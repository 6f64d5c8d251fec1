//! Cron schedules as robfig/cron v3 reads and steps them: the library behind
//! Volcano's CronJob controller, KubeRay's RayCronJob controller and the Spark
//! operator's ScheduledSparkApplication controller (`cron.ParseStandard`: five
//! fields, `@yearly`...`@hourly`, `@every DURATION`, a `TZ=`/`CRON_TZ=` prefix).
//!
//! Times are Unix seconds. Zones come from the IANA database bundled into lahar
//! (the same instants on every machine); `Local`, the zone of a controller that
//! names none, is UTC: the zone of the simulated cluster's clock (`spec.startTime`).

use jiff::tz::TimeZone;
use jiff::{Span, Timestamp, Zoned, civil};

/// Bit 63: the field was `*` or `?` (day-of-month and day-of-week then combine
/// with AND instead of OR, as robfig does).
const STAR: u64 = 1 << 63;

/// A parsed schedule.
#[derive(Clone, Debug)]
pub struct Schedule {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    /// Field bit sets (bit N: value N allowed).
    Spec { second: u64, minute: u64, hour: u64, dom: u64, month: u64, dow: u64, zone: TimeZone },
    /// `@every`: a fixed delay in whole seconds (at least 1).
    Every(i64),
}

struct Bounds {
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const SECONDS: Bounds = Bounds { min: 0, max: 59, names: &[] };
const MINUTES: Bounds = Bounds { min: 0, max: 59, names: &[] };
const HOURS: Bounds = Bounds { min: 0, max: 23, names: &[] };
const DOM: Bounds = Bounds { min: 1, max: 31, names: &[] };
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &["", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
};
const DOW: Bounds = Bounds { min: 0, max: 6, names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"] };

/// A zone by IANA name; `Local` (and the empty name) is UTC, the simulated
/// cluster's zone.
pub fn zone(name: &str) -> Result<TimeZone, String> {
    if name.is_empty() || name == "Local" || name == "UTC" {
        return Ok(TimeZone::UTC);
    }
    TimeZone::get(name).map_err(|_| format!("unknown time zone `{name}` (expected an IANA name such as Asia/Taipei)"))
}

/// Parses `spec` as `cron.ParseStandard` does.
pub fn parse(spec: &str) -> Result<Schedule, String> {
    parse_with(spec, false)
}

/// Parses `spec`; `seconds`: six fields, seconds first (robfig's own tests).
fn parse_with(spec: &str, seconds: bool) -> Result<Schedule, String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    let mut tz = TimeZone::UTC;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let eq = spec.find('=').expect("prefix has one");
        let Some(sp) = spec.find(' ') else { return Err(format!("`{spec}`: expected a schedule after the time zone")) };
        tz = zone(&spec[eq + 1..sp]).map_err(|e| format!("provided bad location: {e}"))?;
        spec = spec[sp..].trim();
    }
    if let Some(d) = spec.strip_prefix('@') {
        return descriptor(d, tz);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    let want = if seconds { 6 } else { 5 };
    if fields.len() != want {
        return Err(format!("expected exactly {want} fields, found {}: `{spec}`", fields.len()));
    }
    let f = if seconds { &fields[..] } else { &["0"].iter().chain(&fields).copied().collect::<Vec<_>>()[..] };
    Ok(Schedule {
        kind: Kind::Spec {
            second: field(f[0], &SECONDS)?,
            minute: field(f[1], &MINUTES)?,
            hour: field(f[2], &HOURS)?,
            dom: field(f[3], &DOM)?,
            month: field(f[4], &MONTHS)?,
            dow: field(f[5], &DOW)?,
            zone: tz,
        },
    })
}

fn descriptor(d: &str, zone: TimeZone) -> Result<Schedule, String> {
    let all = |b: &Bounds| bits(b.min, b.max, 1) | STAR;
    let spec = |minute, hour, dom, month, dow| Schedule {
        kind: Kind::Spec { second: 1, minute, hour, dom, month, dow, zone: zone.clone() },
    };
    Ok(match d {
        "yearly" | "annually" => spec(1, 1, 1 << 1, 1 << 1, all(&DOW)),
        "monthly" => spec(1, 1, 1 << 1, all(&MONTHS), all(&DOW)),
        "weekly" => spec(1, 1, all(&DOM), all(&MONTHS), 1),
        "daily" | "midnight" => spec(1, 1, all(&DOM), all(&MONTHS), all(&DOW)),
        "hourly" => spec(1, all(&HOURS), all(&DOM), all(&MONTHS), all(&DOW)),
        _ => match d.strip_prefix("every ") {
            Some(dur) => {
                let us = lahar_core::util::time::parse_go_duration(dur)
                    .ok_or_else(|| format!("failed to parse duration `@{d}`: expected a Go duration such as 3m"))?;
                // Below a second is a second; the rest is rounded down to seconds.
                Schedule { kind: Kind::Every(((us / 1_000_000) as i64).max(1)) }
            }
            None => return Err(format!("unrecognized descriptor: `@{d}`")),
        },
    })
}

fn bits(min: u32, max: u32, step: u32) -> u64 {
    (min..=max).step_by(step as usize).fold(0, |b, i| b | 1 << i)
}

fn field(f: &str, b: &Bounds) -> Result<u64, String> {
    let mut out = 0;
    for expr in f.split(',').filter(|e| !e.is_empty()) {
        out |= range(expr, b)?;
    }
    Ok(out)
}

fn range(expr: &str, b: &Bounds) -> Result<u64, String> {
    let range_step: Vec<&str> = expr.split('/').collect();
    let low_high: Vec<&str> = range_step[0].split('-').collect();
    let single = low_high.len() == 1;
    let (start, mut end, mut extra);
    if low_high[0] == "*" || low_high[0] == "?" {
        (start, end, extra) = (b.min, b.max, STAR);
    } else {
        start = int_or_name(low_high[0], b)?;
        end = match low_high.len() {
            1 => start,
            2 => int_or_name(low_high[1], b)?,
            _ => return Err(format!("too many hyphens: `{expr}`")),
        };
        extra = 0;
    }
    let step = match range_step.len() {
        1 => 1,
        2 => {
            let step = int(range_step[1])?;
            if single {
                end = b.max;
            }
            if step > 1 {
                extra = 0;
            }
            step
        }
        _ => return Err(format!("too many slashes: `{expr}`")),
    };
    if start < b.min {
        return Err(format!("beginning of range ({start}) below minimum ({}): `{expr}`", b.min));
    }
    if end > b.max {
        return Err(format!("end of range ({end}) above maximum ({}): `{expr}`", b.max));
    }
    if start > end {
        return Err(format!("beginning of range ({start}) beyond end of range ({end}): `{expr}`"));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: `{expr}`"));
    }
    Ok(bits(start, end, step) | extra)
}

fn int_or_name(s: &str, b: &Bounds) -> Result<u32, String> {
    let lower = s.to_ascii_lowercase();
    if let Some(i) = b.names.iter().position(|n| !n.is_empty() && **n == lower) {
        return Ok(i as u32);
    }
    int(s)
}

fn int(s: &str) -> Result<u32, String> {
    match s.parse::<i64>() {
        Ok(n) if n < 0 => Err(format!("negative number ({n}) not allowed: `{s}`")),
        Ok(n) => u32::try_from(n).map_err(|_| format!("failed to parse int from `{s}`")),
        Err(_) => Err(format!("failed to parse int from `{s}`")),
    }
}

impl Schedule {
    /// The first activation strictly after `t` (Unix seconds); `None` when there is
    /// none within five years (`0 0 30 2 *`).
    pub fn next(&self, t: i64) -> Option<i64> {
        match &self.kind {
            Kind::Every(d) => Some(t + d),
            Kind::Spec { second, minute, hour, dom, month, dow, zone } => {
                let s = SpecRef { second: *second, minute: *minute, hour: *hour, dom: *dom, month: *month, dow: *dow };
                s.next(Timestamp::from_second(t).ok()?.to_zoned(zone.clone()))
            }
        }
    }
}

struct SpecRef {
    second: u64,
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
}

fn has(set: u64, v: i8) -> bool {
    set & (1 << v) != 0
}

impl SpecRef {
    fn day_matches(&self, t: &Zoned) -> bool {
        let dom = has(self.dom, t.day());
        let dow = has(self.dow, t.weekday().to_sunday_zero_offset());
        if self.dom & STAR != 0 || self.dow & STAR != 0 { dom && dow } else { dom || dow }
    }

    /// robfig's `SpecSchedule.Next`, step for step: civil steps for months and
    /// days (Go's `AddDate`), absolute ones for hours, minutes and seconds.
    fn next(&self, t: Zoned) -> Option<i64> {
        let tz = t.time_zone().clone();
        let at = |y: i16, m: i8, d: i8, h: i8, mi: i8| civil::date(y, m, d).at(h, mi, 0, 0).to_zoned(tz.clone()).ok();
        let mut t = t.checked_add(Span::new().seconds(1)).ok()?;
        let mut added = false;
        let year_limit = t.year() + 5;
        'wrap: loop {
            if t.year() > year_limit {
                return None;
            }
            while !has(self.month, t.month()) {
                if !added {
                    added = true;
                    t = at(t.year(), t.month(), 1, 0, 0)?;
                }
                t = t.checked_add(Span::new().months(1)).ok()?;
                if t.month() == 1 {
                    continue 'wrap;
                }
            }
            while !self.day_matches(&t) {
                if !added {
                    added = true;
                    t = at(t.year(), t.month(), t.day(), 0, 0)?;
                }
                t = t.checked_add(Span::new().days(1)).ok()?;
                // Midnight may not exist (a DST change at 00:00): back to the day.
                let h = i64::from(t.hour());
                if h != 0 {
                    let shift = if h > 12 { 24 - h } else { -h };
                    t = t.checked_add(Span::new().hours(shift)).ok()?;
                }
                if t.day() == 1 {
                    continue 'wrap;
                }
            }
            // Hours, minutes, seconds: absolute steps of 3600, 60 and 1 s. The first
            // step (if none was taken yet) starts the unit: the hour on the local
            // clock (Go's `time.Date`: zones may be off the hour by 30 or 45
            // minutes), the minute and second by absolute truncation.
            let hour_start = |t: &Zoned| at(t.year(), t.month(), t.day(), t.hour(), 0);
            let minute_start = |t: &Zoned| truncate(t, 60);
            let second_start = |t: &Zoned| truncate(t, 1);
            let units: [UnitStep<'_>; 3] = [
                (self.hour, Zoned::hour, 3600, &hour_start),
                (self.minute, Zoned::minute, 60, &minute_start),
                (self.second, Zoned::second, 1, &second_start),
            ];
            for (set, get, secs, start) in units {
                while !has(set, get(&t)) {
                    if !added {
                        added = true;
                        t = start(&t)?;
                    }
                    t = t.checked_add(Span::new().seconds(secs)).ok()?;
                    if get(&t) == 0 {
                        continue 'wrap;
                    }
                }
            }
            return Some(t.timestamp().as_second());
        }
    }
}

/// Where a unit (hour, minute, second) containing a time starts.
type UnitStart<'a> = dyn Fn(&Zoned) -> Option<Zoned> + 'a;
/// A unit's field set, its value in a time, its length in seconds, its start.
type UnitStep<'a> = (u64, fn(&Zoned) -> i8, i64, &'a UnitStart<'a>);

/// Go's `Time.Truncate`: down to a multiple of `secs` of absolute time.
fn truncate(t: &Zoned, secs: i64) -> Option<Zoned> {
    let s = t.timestamp().as_second();
    Some(Timestamp::from_second(s - s.rem_euclid(secs)).ok()?.to_zoned(t.time_zone().clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `2012-07-09T14:45:00` in UTC, or with an offset (`-0500`).
    fn at(s: &str) -> i64 {
        let (civil_part, off) = match s.len() {
            19 => (s, 0),
            24 => {
                let o = &s[19..];
                let sign = if o.starts_with('-') { -1 } else { 1 };
                (&s[..19], sign * (o[1..3].parse::<i64>().unwrap() * 3600 + o[3..5].parse::<i64>().unwrap() * 60))
            }
            _ => panic!("{s}"),
        };
        lahar_core::util::time::parse_civil(civil_part).unwrap() - off
    }

    /// robfig/cron's TestActivation: whether `spec` fires at `time` (UTC).
    #[test]
    fn robfig_test_activation() {
        let cases = [
            ("2012-07-09T15:00:00", "0/15 * * * *", true),
            ("2012-07-09T15:45:00", "0/15 * * * *", true),
            ("2012-07-09T15:40:00", "0/15 * * * *", false),
            ("2012-07-09T15:05:00", "5/15 * * * *", true),
            ("2012-07-09T15:20:00", "5/15 * * * *", true),
            ("2012-07-09T15:50:00", "5/15 * * * *", true),
            ("2012-07-15T15:00:00", "0/15 * * Jul *", true),
            ("2012-07-15T15:00:00", "0/15 * * Jun *", false),
            ("2012-07-15T08:30:00", "30 08 ? Jul Sun", true),
            ("2012-07-15T08:30:00", "30 08 15 Jul ?", true),
            ("2012-07-16T08:30:00", "30 08 ? Jul Sun", false),
            ("2012-07-16T08:30:00", "30 08 15 Jul ?", false),
            ("2012-07-09T15:00:00", "@hourly", true),
            ("2012-07-09T15:04:00", "@hourly", false),
            ("2012-07-09T15:00:00", "@daily", false),
            ("2012-07-09T00:00:00", "@daily", true),
            ("2012-07-09T00:00:00", "@weekly", false),
            ("2012-07-08T00:00:00", "@weekly", true),
            ("2012-07-08T01:00:00", "@weekly", false),
            ("2012-07-08T00:00:00", "@monthly", false),
            ("2012-07-01T00:00:00", "@monthly", true),
            ("2012-07-15T00:00:00", "* * 1,15 * Sun", true),
            ("2012-06-15T00:00:00", "* * 1,15 * Sun", true),
            ("2012-08-01T00:00:00", "* * 1,15 * Sun", true),
            ("2012-07-15T00:00:00", "* * */10 * Sun", true),
            ("2012-07-15T00:00:00", "* * * * Mon", false),
            ("2012-07-09T00:00:00", "* * 1,15 * *", false),
            ("2012-07-15T00:00:00", "* * 1,15 * *", true),
            ("2012-07-15T00:00:00", "* * */2 * Sun", true),
        ];
        for (time, spec, fires) in cases {
            let t = at(time);
            let next = parse(spec).unwrap().next(t - 1);
            assert_eq!(next == Some(t), fires, "{spec} at {time}: {next:?}");
        }
    }

    /// robfig/cron's TestNext (six fields, seconds first), DST cases included.
    #[test]
    fn robfig_test_next() {
        let ny = "TZ=America/New_York ";
        let cases: Vec<(&str, String, &str)> = vec![
            ("2012-07-09T14:45:00", "0 0/15 * * * *".into(), "2012-07-09T15:00:00"),
            ("2012-07-09T14:59:00", "0 0/15 * * * *".into(), "2012-07-09T15:00:00"),
            ("2012-07-09T14:59:59", "0 0/15 * * * *".into(), "2012-07-09T15:00:00"),
            ("2012-07-09T15:45:00", "0 20-35/15 * * * *".into(), "2012-07-09T16:20:00"),
            ("2012-07-09T23:46:00", "0 */15 * * * *".into(), "2012-07-10T00:00:00"),
            ("2012-07-09T23:45:00", "0 20-35/15 * * * *".into(), "2012-07-10T00:20:00"),
            ("2012-07-09T23:35:51", "15/35 20-35/15 * * * *".into(), "2012-07-10T00:20:15"),
            ("2012-07-09T23:35:51", "15/35 20-35/15 1/2 * * *".into(), "2012-07-10T01:20:15"),
            ("2012-07-09T23:35:51", "15/35 20-35/15 10-12 * * *".into(), "2012-07-10T10:20:15"),
            ("2012-07-09T23:35:51", "15/35 20-35/15 1/2 */2 * *".into(), "2012-07-11T01:20:15"),
            ("2012-07-09T23:35:51", "15/35 20-35/15 * 9-20 * *".into(), "2012-07-10T00:20:15"),
            ("2012-07-09T23:35:51", "15/35 20-35/15 * 9-20 Jul *".into(), "2012-07-10T00:20:15"),
            ("2012-07-09T23:35:00", "0 0 0 9 Apr-Oct ?".into(), "2012-08-09T00:00:00"),
            ("2012-07-09T23:35:00", "0 0 0 */5 Apr,Aug,Oct Mon".into(), "2012-08-01T00:00:00"),
            ("2012-07-09T23:35:00", "0 0 0 */5 Oct Mon".into(), "2012-10-01T00:00:00"),
            ("2012-07-09T23:35:00", "0 0 0 * Feb Mon".into(), "2013-02-04T00:00:00"),
            ("2012-07-09T23:35:00", "0 0 0 * Feb Mon/2".into(), "2013-02-01T00:00:00"),
            ("2012-12-31T23:59:45", "0 * * * * *".into(), "2013-01-01T00:00:00"),
            ("2012-07-09T23:35:00", "0 0 0 29 Feb ?".into(), "2016-02-29T00:00:00"),
            ("2012-03-11T00:00:00-0500", format!("{ny}0 30 2 11 Mar ?"), "2013-03-11T02:30:00-0400"),
            ("2012-03-11T00:00:00-0500", format!("{ny}0 0 * * * ?"), "2012-03-11T01:00:00-0500"),
            ("2012-03-11T01:00:00-0500", format!("{ny}0 0 * * * ?"), "2012-03-11T03:00:00-0400"),
            ("2012-03-11T03:00:00-0400", format!("{ny}0 0 * * * ?"), "2012-03-11T04:00:00-0400"),
            ("2012-03-11T04:00:00-0400", format!("{ny}0 0 * * * ?"), "2012-03-11T05:00:00-0400"),
            ("2012-03-11T01:00:00-0500", "CRON_TZ=America/New_York 0 0 * * * ?".into(), "2012-03-11T03:00:00-0400"),
            ("2012-03-11T00:00:00-0500", format!("{ny}0 0 1 * * ?"), "2012-03-11T01:00:00-0500"),
            ("2012-03-11T01:00:00-0500", format!("{ny}0 0 1 * * ?"), "2012-03-12T01:00:00-0400"),
            ("2012-03-11T00:00:00-0500", format!("{ny}0 0 2 * * ?"), "2012-03-12T02:00:00-0400"),
            ("2012-11-04T00:00:00-0400", format!("{ny}0 30 2 04 Nov ?"), "2012-11-04T02:30:00-0500"),
            ("2012-11-04T01:45:00-0400", format!("{ny}0 30 1 04 Nov ?"), "2012-11-04T01:30:00-0500"),
            ("2012-11-04T00:00:00-0400", format!("{ny}0 0 * * * ?"), "2012-11-04T01:00:00-0400"),
            ("2012-11-04T01:00:00-0400", format!("{ny}0 0 * * * ?"), "2012-11-04T01:00:00-0500"),
            ("2012-11-04T01:00:00-0500", format!("{ny}0 0 * * * ?"), "2012-11-04T02:00:00-0500"),
            ("2012-11-04T00:00:00-0400", format!("{ny}0 0 1 * * ?"), "2012-11-04T01:00:00-0400"),
            ("2012-11-04T01:00:00-0400", format!("{ny}0 0 1 * * ?"), "2012-11-04T01:00:00-0500"),
            ("2012-11-04T01:00:00-0500", format!("{ny}0 0 1 * * ?"), "2012-11-05T01:00:00-0500"),
            ("2012-11-04T00:00:00-0400", format!("{ny}0 0 2 * * ?"), "2012-11-04T02:00:00-0500"),
            ("2012-11-04T02:00:00-0500", format!("{ny}0 0 2 * * ?"), "2012-11-05T02:00:00-0500"),
            ("2012-11-04T00:00:00-0400", format!("{ny}0 0 3 * * ?"), "2012-11-04T03:00:00-0500"),
            ("2012-11-04T03:00:00-0500", format!("{ny}0 0 3 * * ?"), "2012-11-05T03:00:00-0500"),
            ("2012-11-04T00:00:00-0400", format!("{ny}0 0 3 3 * ?"), "2012-12-03T03:00:00-0500"),
            ("2018-10-17T05:00:00-0400", "TZ=America/Sao_Paulo 0 0 9 10 * ?".into(), "2018-11-10T06:00:00-0500"),
            ("2018-02-14T05:00:00-0500", "TZ=America/Sao_Paulo 0 0 9 22 * ?".into(), "2018-02-22T07:00:00-0500"),
        ];
        for (time, spec, want) in &cases {
            let s = parse_with(spec, true).unwrap();
            assert_eq!(s.next(at(time)), Some(at(want)), "{spec} after {time}");
        }
        // Unsatisfiable.
        for spec in ["0 0 0 30 Feb ?", "0 0 0 31 Apr ?"] {
            assert_eq!(parse_with(spec, true).unwrap().next(at("2012-07-09T23:35:00")), None, "{spec}");
        }
    }

    #[test]
    fn every_and_bad_specs() {
        let s = parse("@every 3m").unwrap();
        assert_eq!(s.next(100), Some(280));
        assert_eq!(parse("@every 10ms").unwrap().next(0), Some(1));
        assert_eq!(parse("@every 1m30.5s").unwrap().next(0), Some(90));
        let err = |s: &str| parse(s).unwrap_err();
        assert_eq!(err(""), "empty spec string");
        assert!(err("* * * *").contains("expected exactly 5 fields, found 4"), "{}", err("* * * *"));
        assert!(err("60 * * * *").contains("end of range (60) above maximum (59)"));
        assert!(err("* * 0 * *").contains("beginning of range (0) below minimum (1)"));
        assert!(err("5-1 * * * *").contains("beyond end of range"));
        assert!(err("*/0 * * * *").contains("step of range should be a positive number"));
        assert!(err("* * * * 7").contains("end of range (7) above maximum (6)"), "robfig's days of week are 0-6");
        assert!(err("@fortnightly").contains("unrecognized descriptor"));
        assert!(err("TZ=Mars/Olympus * * * * *").contains("unknown time zone `Mars/Olympus`"));
        // Names in any case; `?` is `*`.
        assert_eq!(parse("0 9 ? jan MON").unwrap().next(at("2024-01-01T09:00:00")), Some(at("2024-01-08T09:00:00")));
    }

    /// robfig/cron's TestRange: bits and errors of one range expression.
    #[test]
    fn robfig_test_range() {
        let b = |min, max| Bounds { min, max, names: &[] };
        let ok = [
            ("5", 0, 7, 1 << 5),
            ("0", 0, 7, 1),
            ("7", 0, 7, 1 << 7),
            ("5-5", 0, 7, 1 << 5),
            ("5-6", 0, 7, 1 << 5 | 1 << 6),
            ("5-7", 0, 7, 1 << 5 | 1 << 6 | 1 << 7),
            ("5-6/2", 0, 7, 1 << 5),
            ("5-7/2", 0, 7, 1 << 5 | 1 << 7),
            ("5-7/1", 0, 7, 1 << 5 | 1 << 6 | 1 << 7),
            ("*", 1, 3, 1 << 1 | 1 << 2 | 1 << 3 | STAR),
            ("*/2", 1, 3, 1 << 1 | 1 << 3),
        ];
        for (expr, min, max, want) in ok {
            assert_eq!(range(expr, &b(min, max)), Ok(want), "{expr}");
        }
        let bad = [
            ("5--5", 0, 0, "too many hyphens"),
            ("jan-x", 0, 0, "failed to parse int from"),
            ("2-x", 1, 5, "failed to parse int from"),
            ("*/-12", 0, 0, "negative number"),
            ("*//2", 0, 0, "too many slashes"),
            ("1", 3, 5, "below minimum"),
            ("6", 3, 5, "above maximum"),
            ("5-3", 3, 5, "beyond end of range"),
            ("*/0", 0, 0, "should be a positive number"),
        ];
        for (expr, min, max, want) in bad {
            let e = range(expr, &b(min, max)).unwrap_err();
            assert!(e.contains(want), "{expr}: {e}");
        }
    }

    /// robfig/cron's TestErrors, TestStandardSpecSchedule's errors and
    /// TestSlash0NoHang.
    #[test]
    fn robfig_test_errors() {
        for spec in ["xyz", "60 0 * * *", "0 60 * * *", "0 0 * * XYZ", "TZ=America/New_York 15/0 * * * *"] {
            assert!(parse(spec).is_err(), "{spec}");
        }
        assert!(parse("5 j * * *").unwrap_err().contains("failed to parse int from"));
        assert!(parse("* * * *").unwrap_err().contains("expected exactly 5 fields"));
    }

    /// robfig/cron's TestNextWithTz: a schedule read in the start time's zone
    /// (+05:30; here named in the schedule).
    #[test]
    fn robfig_test_next_with_tz() {
        let want = at("2016-01-03T14:14:00+0530");
        for (time, spec) in [
            ("2016-01-03T13:09:03+0530", "14 14 * * *"),
            ("2016-01-03T04:09:03+0530", "14 14 * * ?"),
            ("2016-01-03T14:09:03+0530", "14 14 * * *"),
            ("2016-01-03T14:00:00+0530", "14 14 * * ?"),
        ] {
            let s = parse(&format!("TZ=Asia/Kolkata {spec}")).unwrap();
            assert_eq!(s.next(at(time)), Some(want), "{spec} after {time}");
        }
    }

    /// A zone off the hour (India, UTC+5:30): hours start on the local clock.
    #[test]
    fn a_half_hour_zone() {
        let s = parse("TZ=Asia/Kolkata 0 9 * * *").unwrap();
        // 09:00 IST is 03:30 UTC.
        assert_eq!(s.next(at("2026-01-05T00:10:00")), Some(at("2026-01-05T03:30:00")));
        assert_eq!(s.next(at("2026-01-05T03:30:00")), Some(at("2026-01-06T03:30:00")));
    }

    /// The RayCronJob sample's zone: 21:45 in Taipei (UTC+8) is 13:45 UTC.
    #[test]
    fn a_named_zone() {
        let s = parse("TZ=Asia/Taipei 45 21 * * *").unwrap();
        assert_eq!(s.next(at("2026-01-05T00:00:00")), Some(at("2026-01-05T13:45:00")));
        assert_eq!(s.next(at("2026-01-05T13:45:00")), Some(at("2026-01-06T13:45:00")));
    }
}
