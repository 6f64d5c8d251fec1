//! kthena's own autoscaler: an `AutoscalingPolicy` with a `homogeneousTarget`
//! (one ModelServing, sized in serving groups), as volcano-sh/kthena's
//! `pkg/autoscaler` computes it (read at 3cc0572): the recommendation from the
//! metrics (`algorithm/recommendation.go`), the panic mode (`autoscaler/scaler.go`,
//! `status.go`) and the correction by stabilisation windows and rate limits
//! (`algorithm/revision.go`) over kthena's sliding windows
//! (`datastructure/sliding_window.go`). Time is the run's, in milliseconds, as
//! kthena reads its clock.

use crate::util::time::SimTime;
use std::collections::VecDeque;
use std::sync::Arc;

/// How the rate limits of a direction combine (`selectPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Select {
    /// The larger change (`Or`).
    Or,
    /// The smaller change (`And`).
    And,
}

/// A stable policy (`behavior.scaleDown`, `behavior.scaleUp.stablePolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stable {
    /// Most instances added or removed per `period_ms`.
    pub instances: i32,
    /// Most percent of the instances added or removed per `period_ms`.
    pub percent: i32,
    /// The rate limit's period.
    pub period_ms: i64,
    /// How `instances` and `percent` combine.
    pub select: Select,
    /// The window of recommendations a change must agree with.
    pub window_ms: i64,
}

/// The panic policy (`behavior.scaleUp.panicPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Panic {
    /// Most percent of the instances added per `period_ms` in panic mode.
    pub percent: i32,
    /// The panic rate limit's period.
    pub period_ms: i64,
    /// A recommendation at this percent of the current instances or more
    /// (re)starts panic mode.
    pub threshold_percent: i32,
    /// How long panic mode lasts (none at 0).
    pub hold_ms: i64,
}

/// Where a metric is read (`metricSources`): every metric is the service's
/// request rate in lahar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Scraped from each ready pod of the ModelServing and summed.
    Pod,
    /// One value from Prometheus (an external metric).
    Prometheus,
}

/// One metric of the policy: its target and where it is read.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// Its name in `spec.metrics`.
    pub name: String,
    /// `targetValue`, in thousandths.
    pub target_milli: i64,
    /// Its `metricSources` entry; none: the metric is never read.
    pub source: Option<Source>,
}

/// An AutoscalingPolicy with a homogeneous target, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct KthenaSpec {
    /// `namespace/name`, as scaling.csv names the autoscaler.
    pub name: Arc<str>,
    /// `tolerancePercent`.
    pub tolerance_percent: i32,
    /// `spec.metrics`, in order.
    pub metrics: Vec<Metric>,
    /// `behavior.scaleUp.stablePolicy`.
    pub up: Stable,
    /// `behavior.scaleUp.panicPolicy`.
    pub panic: Panic,
    /// `behavior.scaleDown`.
    pub down: Stable,
    /// `homogeneousTarget.minReplicas`.
    pub min_replicas: i32,
    /// `homogeneousTarget.maxReplicas`.
    pub max_replicas: i32,
}

/// What kthena's metric collector finds at a sync.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reading {
    /// The ModelServing's `spec.replicas`.
    pub replicas: i32,
    /// The service's request rate (milli-requests per second), if it has one.
    pub demand: Option<i64>,
    /// Its pods Running and ready.
    pub ready_pods: u32,
    /// Its pods not (Pending, or Running within their start-up).
    pub unready_pods: u32,
}

/// A sync's outcome: the replicas to set, if any, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The corrected replicas (the ModelServing is patched when they differ).
    pub replicas: i32,
    /// The recommendation before the correction.
    pub recommended: i32,
    /// Whether the correction ran in panic mode.
    pub panic: bool,
}

/// A sliding window of records (`RmqRecordSlidingWindow`): the best value
/// appended within the last `fresh_ms`.
#[derive(Clone, Debug)]
struct Records {
    pool: VecDeque<(i64, i32)>,
    fresh_ms: i64,
    max: bool,
}

impl Records {
    fn new(fresh_ms: i64, max: bool) -> Records {
        Records { pool: VecDeque::new(), fresh_ms, max }
    }
    fn better(&self, a: i32, b: i32) -> bool {
        if self.max { a > b } else { a < b }
    }
    fn expire(&mut self, now: i64) {
        while self.pool.front().is_some_and(|&(t, _)| t + self.fresh_ms < now) {
            self.pool.pop_front();
        }
    }
    fn append(&mut self, v: i32, now: i64) {
        self.expire(now);
        while self.pool.back().is_some_and(|&(_, b)| !self.better(b, v)) {
            self.pool.pop_back();
        }
        self.pool.push_back((now, v));
    }
    fn best(&mut self, now: i64) -> Option<i32> {
        self.expire(now);
        if self.fresh_ms == 0 {
            return None;
        }
        self.pool.front().map(|&(_, v)| v)
    }
}

/// A sliding window of a line chart (`RmqLineChartSlidingWindow`): each value
/// holds from its append until the next; the best value that held within the
/// last `fresh_ms`, the current one included.
#[derive(Clone, Debug)]
struct Line {
    pool: VecDeque<(i64, i32)>,
    fresh_ms: i64,
    /// The value appended last and when (kthena's `driftTimestamp`, forgotten
    /// after twice the window).
    drifting: Option<(i64, i32)>,
    max: bool,
}

impl Line {
    fn new(fresh_ms: i64, max: bool) -> Line {
        Line { pool: VecDeque::new(), fresh_ms, drifting: None, max }
    }
    fn better(&self, a: i32, b: i32) -> bool {
        if self.max { a > b } else { a < b }
    }
    fn expire(&mut self, now: i64) {
        while self.pool.front().is_some_and(|&(t, _)| t + self.fresh_ms < now) {
            self.pool.pop_front();
        }
        if self.drifting.is_some_and(|(t, _)| t + 2 * self.fresh_ms < now) {
            self.drifting = None;
        }
    }
    fn append(&mut self, v: i32, now: i64) {
        self.expire(now);
        if let Some((_, d)) = self.drifting {
            while self.pool.back().is_some_and(|&(_, b)| !self.better(b, d)) {
                self.pool.pop_back();
            }
            self.pool.push_back((now, d));
        }
        self.drifting = Some((now, v));
    }
    fn best(&mut self, current: i32, now: i64) -> Option<i32> {
        if self.fresh_ms == 0 {
            return None;
        }
        self.expire(now);
        let mut v = current;
        if let Some((_, d)) = self.drifting
            && self.better(d, v)
        {
            v = d;
        }
        if let Some(&(_, f)) = self.pool.front()
            && self.better(f, v)
        {
            v = f;
        }
        Some(v)
    }
}

/// One policy's memory between syncs (kthena's `Status`).
#[derive(Clone, Debug)]
pub struct KthenaState {
    /// When panic mode ends (kthena's `PanicModeEndsAt`, 0 there for never:
    /// `None` here, as the run's clock starts at 0).
    panic_ends_ms: Option<i64>,
    max_recommendation: Records,
    min_recommendation: Records,
    max_corrected: Line,
    min_corrected_stable: Line,
    min_corrected_panic: Line,
}

impl KthenaState {
    /// A policy's state at its creation (`NewStatus`).
    pub fn new(spec: &KthenaSpec) -> KthenaState {
        KthenaState {
            panic_ends_ms: None,
            max_recommendation: Records::new(spec.down.window_ms, true),
            min_recommendation: Records::new(spec.up.window_ms, false),
            max_corrected: Line::new(spec.down.period_ms, true),
            min_corrected_stable: Line::new(spec.up.period_ms, false),
            min_corrected_panic: Line::new(spec.panic.period_ms, false),
        }
    }

    /// One sync at `now` (`Autoscaler.Scale`): `None` when no metric gives a
    /// recommendation (nothing is recorded then).
    pub fn scale(&mut self, spec: &KthenaSpec, now: SimTime, r: &Reading) -> Option<Outcome> {
        let now = (now.micros() / 1000) as i64;
        let recommended = recommend(spec, r)?;
        let current = r.replicas;
        let mut panic = spec.panic.hold_ms > 0 && self.panic_ends_ms.is_some_and(|e| now <= e);
        let refresh = i64::from(recommended) * 100 >= i64::from(current) * i64::from(spec.panic.threshold_percent);
        if refresh {
            panic = spec.panic.hold_ms > 0;
        }
        let corrected = if panic {
            self.for_panic(spec, current, recommended, now)
        } else if recommended < current {
            self.for_scale_down(spec, current, recommended, now)
        } else if recommended > current {
            self.for_scale_up(spec, current, recommended, now)
        } else {
            recommended
        };
        let corrected = corrected.max(spec.min_replicas).min(spec.max_replicas);
        if refresh {
            self.panic_ends_ms = (spec.panic.hold_ms > 0).then_some(now + spec.panic.hold_ms);
        }
        self.max_recommendation.append(recommended, now);
        self.min_recommendation.append(recommended, now);
        self.max_corrected.append(corrected, now);
        self.min_corrected_stable.append(corrected, now);
        self.min_corrected_panic.append(corrected, now);
        Some(Outcome { replicas: corrected, recommended, panic })
    }

    fn for_panic(&mut self, spec: &KthenaSpec, current: i32, recommended: i32, now: i64) -> i32 {
        let mut c = recommended;
        if let Some(past) = self.min_corrected_panic.best(current, now).filter(|&p| p > 0) {
            // Go's int32(float64) truncates toward zero.
            let relative = past + (f64::from(past) * f64::from(spec.panic.percent) / 100.0) as i32;
            c = c.min(relative);
        }
        c.max(current)
    }

    fn for_scale_down(&mut self, spec: &KthenaSpec, current: i32, recommended: i32, now: i64) -> i32 {
        let mut c = recommended;
        if let Some(b) = self.max_recommendation.best(now) {
            c = c.max(b);
        }
        if let Some(past) = self.max_corrected.best(current, now) {
            let absolute = past - spec.down.instances;
            let relative = past - past * spec.down.percent / 100;
            let limit = match spec.down.select {
                Select::Or => absolute.min(relative),
                Select::And => absolute.max(relative),
            };
            c = c.max(limit);
        }
        c.min(current)
    }

    fn for_scale_up(&mut self, spec: &KthenaSpec, current: i32, recommended: i32, now: i64) -> i32 {
        let mut c = recommended;
        if let Some(b) = self.min_recommendation.best(now) {
            c = c.min(b);
        }
        if let Some(past) = self.min_corrected_stable.best(current, now) {
            let absolute = past + spec.up.instances;
            let relative = past + past * spec.up.percent / 100;
            let limit = match spec.up.select {
                Select::Or => absolute.max(relative),
                Select::And => absolute.min(relative),
            };
            c = c.min(limit);
        }
        c.max(current)
    }
}

/// `GetRecommendedInstances`: the largest of the metrics' desired instances,
/// within `[minReplicas, maxReplicas]`; `None` when no metric has a value.
fn recommend(spec: &KthenaSpec, r: &Reading) -> Option<i32> {
    let current = r.replicas;
    if current < spec.min_replicas {
        return Some(spec.min_replicas);
    }
    if current > spec.max_replicas {
        return Some(spec.max_replicas);
    }
    let tolerance = f64::from(spec.tolerance_percent) * 0.01;
    let demand = r.demand.map(|d| d as f64 / 1000.0);
    let mut best: Option<i32> = None;
    for m in &spec.metrics {
        let target = m.target_milli as f64 / 1000.0;
        let desired = match (m.source, demand) {
            (Some(Source::Prometheus), Some(d)) => Some(external(current, tolerance, target, d)),
            // A pod metric is the sum over the ready pods (each its share of the
            // demand): none while no pod is ready.
            (Some(Source::Pod), Some(d)) if r.ready_pods > 0 => {
                Some(per_instance(current, tolerance, target, d, r.unready_pods))
            }
            _ => None,
        };
        if let Some(d) = desired {
            best = Some(best.map_or(d, |b| b.max(d)));
        }
    }
    best.map(|b| b.max(spec.min_replicas).min(spec.max_replicas))
}

/// `getDesiredInstancesForSingleExternalMetric`.
fn external(current: i32, tolerance: f64, target: f64, metric: f64) -> i32 {
    let desired = metric / target;
    let ratio = desired / f64::from(current);
    if (ratio - 1.0).abs() <= tolerance {
        return current;
    }
    ceil_instances(desired)
}

/// `getDesiredInstancesForSingleInstanceMetric` with kthena's one summed
/// reading (its collector passes the ready pods' sum as one instance's).
fn per_instance(current: i32, tolerance: f64, target: f64, sum: f64, unready: u32) -> i32 {
    let ratio = sum / target;
    let up = |r: f64| r >= 1.0;
    let add_unready = unready > 0 && up(ratio);
    if !add_unready {
        if (ratio - 1.0).abs() <= tolerance {
            return current;
        }
        return ceil_instances(ratio);
    }
    let count = 1.0 + f64::from(unready);
    let new_ratio = sum / count / target;
    if (new_ratio - 1.0).abs() <= tolerance || up(ratio) != up(new_ratio) {
        return current;
    }
    let desired = ceil_instances(new_ratio * count);
    if (!up(new_ratio) && desired > current) || (up(new_ratio) && desired < current) {
        return current;
    }
    desired
}

/// `getCeilDesiredInstances`.
fn ceil_instances(v: f64) -> i32 {
    if v.is_nan() {
        return 0;
    }
    let v = v.ceil();
    if v < 1e9 { (v as i32).max(0) } else { 1_000_000_000 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> KthenaSpec {
        KthenaSpec {
            name: "default/p".into(),
            tolerance_percent: 10,
            metrics: vec![Metric { name: "rps".into(), target_milli: 10_000, source: Some(Source::Prometheus) }],
            up: Stable { instances: 2, percent: 100, period_ms: 15_000, select: Select::Or, window_ms: 0 },
            panic: Panic { percent: 200, period_ms: 5_000, threshold_percent: 200, hold_ms: 30_000 },
            down: Stable { instances: 1, percent: 100, period_ms: 15_000, select: Select::Or, window_ms: 30_000 },
            min_replicas: 1,
            max_replicas: 10,
        }
    }

    fn at(s: u64) -> SimTime {
        SimTime(s * 1_000_000)
    }

    fn reading(replicas: i32, rps: i64) -> Reading {
        Reading { replicas, demand: Some(rps * 1000), ready_pods: replicas as u32, ..Default::default() }
    }

    /// The windows as kthena's tests describe them: a record window keeps the
    /// best value appended within its freshness; a line chart's value holds
    /// until the next append.
    #[test]
    fn sliding_windows_keep_the_best_fresh_value() {
        let mut r = Records::new(10, true);
        r.append(3, 0);
        r.append(5, 4);
        r.append(2, 8);
        assert_eq!(r.best(12), Some(5));
        assert_eq!(r.best(15), Some(2), "5, appended at 4, is stale after 14");
        assert_eq!(Records::new(0, true).best(0), None);
        let mut l = Line::new(10, false);
        l.append(4, 0);
        assert_eq!(l.best(9, 5), Some(4), "the value still holding");
        l.append(8, 6);
        assert_eq!(l.best(9, 12), Some(4), "4 held until 6, within 10 of 12");
        assert_eq!(l.best(9, 17), Some(8), "4 ended at 6: stale at 17");
        assert_eq!(l.best(9, 37), Some(9), "the drifting 8 is forgotten after twice the window");
    }

    /// By hand, syncs 15 s apart (target 10 req/s an instance, tolerance 10%):
    /// - 0 s: 25 req/s on 1 → 2.5 → 3, at least 200% of 1: panic mode until
    ///   30 s; panic's limit from the last corrected count (1, the current):
    ///   1 + 200% = 3 → 3.
    /// - 15 s: 45 req/s on 3 → 5, in panic mode; limit 3 + 200% = 9 → 5.
    /// - 30 s: 5 req/s on 5 → 1, still panic (until 30 s included): panic never
    ///   scales down → 5.
    /// - 45 s: stable; the 30 s window of recommendations still holds the 5 of
    ///   15 s → 5.
    /// - 60 s: the window's best is 1; the scale-down limit from the corrected
    ///   counts of the last 15 s (5): `Or` of 5 − 1 and 5 − 100% → 0 → 1.
    #[test]
    fn a_policy_step_by_step() {
        let s = spec();
        let mut st = KthenaState::new(&s);
        let step = |st: &mut KthenaState, t: u64, r: Reading| {
            st.scale(&s, at(t), &r).map(|o| (o.recommended, o.replicas, o.panic))
        };
        assert_eq!(step(&mut st, 0, reading(1, 25)), Some((3, 3, true)));
        assert_eq!(step(&mut st, 15, reading(3, 45)), Some((5, 5, true)));
        assert_eq!(step(&mut st, 30, reading(5, 5)), Some((1, 5, true)));
        assert_eq!(step(&mut st, 45, reading(5, 5)), Some((1, 5, false)));
        assert_eq!(step(&mut st, 60, reading(5, 5)), Some((1, 1, false)));
        // Within the tolerance: as it is.
        assert_eq!(step(&mut st, 75, reading(1, 10)), Some((1, 1, false)));
        // No demand, no metric: no recommendation.
        assert_eq!(step(&mut st, 90, Reading { replicas: 1, ..Default::default() }), None);
    }

    /// A pod metric with pods still starting: kthena adds them to the count on
    /// the way up, and keeps the instances while the sum does not exceed the
    /// target for all of them.
    #[test]
    fn unready_pods_damp_a_pod_metric_scale_up() {
        let mut s = spec();
        s.metrics[0].source = Some(Source::Pod);
        s.panic.threshold_percent = 1000;
        let r = Reading { replicas: 2, demand: Some(25_000), ready_pods: 1, unready_pods: 2 };
        // 25 / 10 = 2.5 ≥ 1; with 2 unready: 25 / 3 / 10 = 0.83: the direction flips → current.
        assert_eq!(recommend(&s, &r), Some(2));
        let r = Reading { demand: Some(45_000), ..r };
        // 45 / 3 / 10 = 1.5 → ceil(1.5 × 3) = 5.
        assert_eq!(recommend(&s, &r), Some(5));
        assert_eq!(recommend(&s, &Reading { ready_pods: 0, ..r }), None);
    }
}
