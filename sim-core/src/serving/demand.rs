//! A service's offered load over time: requests per second, piecewise constant,
//! in integer milli-requests per second so that every integral is exact.

use crate::util::time::{SimDuration, SimTime};

const HOUR_US: u64 = 3_600_000_000;

/// Requests per second over time (milli-requests per second, ≥ 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Demand {
    /// The same rate for ever.
    Constant(i64),
    /// From each instant, its rate until the next (0 before the first). Sorted by
    /// instant, instants distinct.
    Steps(Vec<(SimTime, i64)>),
    /// `per_hour[h] × weekly[d] / 1000` during hour `h` (0–23) of day `d` (0–6),
    /// time 0 being hour 0 of day 0 (as the synthetic diurnal arrivals).
    Diurnal {
        /// Milli-requests per second for each hour of the day.
        per_hour: Box<[i64; 24]>,
        /// Per-mille factor for each day of the week (1000: unchanged).
        weekly: Box<[i64; 7]>,
    },
    /// `base`, and `peak` during `lasting` from `first` and then every `every`.
    Bursts {
        /// Rate between bursts.
        base: i64,
        /// Rate during a burst.
        peak: i64,
        /// The first burst's start.
        first: SimTime,
        /// From one burst's start to the next (> 0).
        every: SimDuration,
        /// A burst's length (≤ `every`).
        lasting: SimDuration,
    },
}

impl Demand {
    /// The rate at `t` and the instant it next changes (`None`: never).
    pub fn at(&self, t: SimTime) -> (i64, Option<SimTime>) {
        match self {
            Demand::Constant(r) => (*r, None),
            Demand::Steps(steps) => {
                let k = steps.partition_point(|&(at, _)| at <= t);
                let rate = if k == 0 { 0 } else { steps[k - 1].1 };
                (rate, steps.get(k).map(|s| s.0))
            }
            Demand::Diurnal { per_hour, weekly } => {
                let hours = t.micros() / HOUR_US;
                let rate = per_hour[(hours % 24) as usize] * weekly[((hours / 24) % 7) as usize] / 1000;
                (rate, Some(SimTime((hours + 1).saturating_mul(HOUR_US))))
            }
            Demand::Bursts { base, peak, first, every, lasting } => {
                if t < *first {
                    return (*base, Some(*first));
                }
                let every = every.micros().max(1);
                let since = t.micros() - first.micros();
                let start = first.micros() + since / every * every;
                let in_burst = t.micros() - start < lasting.micros();
                if in_burst {
                    (*peak, Some(SimTime(start.saturating_add(lasting.micros()))))
                } else {
                    (*base, Some(SimTime(start.saturating_add(every))))
                }
            }
        }
    }

    /// The highest rate it ever reaches.
    pub fn peak(&self) -> i64 {
        match self {
            Demand::Constant(r) => *r,
            Demand::Steps(s) => s.iter().map(|x| x.1).max().unwrap_or(0),
            Demand::Diurnal { per_hour, weekly } => {
                let h = per_hour.iter().max().copied().unwrap_or(0);
                let w = weekly.iter().max().copied().unwrap_or(0);
                h * w / 1000
            }
            Demand::Bursts { base, peak, .. } => (*base).max(*peak),
        }
    }

    /// Calls `f(from, until, rate)` for each stretch of constant rate covering
    /// `[a, b)`, in order.
    pub fn pieces(&self, a: SimTime, b: SimTime, mut f: impl FnMut(SimTime, SimTime, i64)) {
        let mut t = a;
        while t < b {
            let (rate, next) = self.at(t);
            let until = next.filter(|&n| n > t).map_or(b, |n| n.min(b));
            f(t, until, rate);
            t = until;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    #[test]
    fn steps_hold_until_the_next() {
        let d = Demand::Steps(vec![(s(10), 5000), (s(20), 1000)]);
        assert_eq!(d.at(s(0)), (0, Some(s(10))));
        assert_eq!(d.at(s(10)), (5000, Some(s(20))));
        assert_eq!(d.at(s(19)), (5000, Some(s(20))));
        assert_eq!(d.at(s(25)), (1000, None));
        let mut got = Vec::new();
        d.pieces(s(5), s(30), |a, b, r| got.push((a.micros() / 1_000_000, b.micros() / 1_000_000, r)));
        assert_eq!(got, vec![(5, 10, 0), (10, 20, 5000), (20, 30, 1000)]);
        assert_eq!(d.peak(), 5000);
    }

    #[test]
    fn bursts_repeat() {
        let d = Demand::Bursts {
            base: 1000,
            peak: 9000,
            first: s(100),
            every: SimDuration::from_secs(60),
            lasting: SimDuration::from_secs(10),
        };
        assert_eq!(d.at(s(0)), (1000, Some(s(100))));
        assert_eq!(d.at(s(100)), (9000, Some(s(110))));
        assert_eq!(d.at(s(109)), (9000, Some(s(110))));
        assert_eq!(d.at(s(110)), (1000, Some(s(160))));
        assert_eq!(d.at(s(165)), (9000, Some(s(170))));
    }

    #[test]
    fn diurnal_by_hour_and_day() {
        let mut per_hour = [1000; 24];
        per_hour[1] = 4000;
        let mut weekly = [1000; 7];
        weekly[1] = 500;
        let d = Demand::Diurnal { per_hour: Box::new(per_hour), weekly: Box::new(weekly) };
        assert_eq!(d.at(s(3600)), (4000, Some(s(7200))));
        assert_eq!(d.at(s(86_400 + 3600)), (2000, Some(s(86_400 + 7200))));
        assert_eq!(d.at(s(0)).0, 1000);
        assert_eq!(d.peak(), 4000);
    }
}
