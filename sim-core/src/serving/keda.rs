//! KEDA's ScaledObject (`keda.sh/v1alpha1`), as kedacore/keda runs it: the
//! ScaledObject makes a HorizontalPodAutoscaler (`controllers/keda/hpa.go`:
//! `keda-hpa-<name>`, one External metric per trigger, `minReplicas` the
//! ScaledObject's `minReplicaCount` when above 0, else 1), which scales the
//! target between 1 and `maxReplicaCount`; KEDA's own loop polls the triggers
//! every `pollingInterval` and alone moves the target to and from zero (or
//! `idleReplicaCount`): `pkg/scaling/executor/scale_scaledobjects.go`,
//! `RequestScale`, `scaleFromZeroOrIdle`, `scaleToZeroOrIdle`.
//!
//! As with the HPA, every trigger's metric is read as the target's request rate
//! (milli-requests per second): a trigger is *active* when that rate is above its
//! activation threshold. Times are the simulated clock's; a cooldown exactly
//! elapsed has elapsed (KEDA compares with `Before(time.Now())`, and each poll
//! comes a little after the one before).

use crate::util::time::SimTime;
use std::sync::Arc;

/// One trigger, as its scaler reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// The metric's name (`s<index>-<type>`, as KEDA names it).
    pub metric: String,
    /// The activation threshold (milli-units; the scaler's `activation…`
    /// metadata, default 0): active while the value is above it.
    pub activation: i64,
    /// What it reads: the demand, or a `cron` trigger's windows (the same
    /// value its HPA metric reads).
    pub value: MetricValue,
}

/// What an HPA metric (and a KEDA trigger) reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetricValue {
    /// The target's demand (`spec.services`).
    Demand,
    /// A KEDA `cron` trigger's value at each instant.
    Cron(Arc<CronWindows>),
}

impl MetricValue {
    /// The value at `now` (milli-units), `demand` being the target's (`None`:
    /// the metric has no value).
    pub fn at(&self, now: SimTime, demand: Option<i64>) -> Option<i64> {
        match self {
            MetricValue::Demand => demand,
            MetricValue::Cron(w) => Some(w.value_milli(now)),
        }
    }
}

/// KEDA's `cron` scaler (`pkg/scalers/cron_scaler.go`) on the simulated clock:
/// the times of its `start` and `end` schedules, from the clock's start to the
/// first of each after the run's horizon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronWindows {
    /// The `start` schedule's times, ascending.
    pub starts: Vec<SimTime>,
    /// The `end` schedule's times, ascending.
    pub ends: Vec<SimTime>,
    /// `desiredReplicas`.
    pub replicas: i64,
}

impl CronWindows {
    /// `GetMetricsAndActivity`: within the interval when the next end (strictly
    /// after `now`) does not come after the next start — KEDA's two cases
    /// (`nextStart.Before(nextEnd)` or not) reduce to this, since both next
    /// times are after now. A schedule with no next time is Go's zero time,
    /// before every other.
    pub fn active(&self, now: SimTime) -> bool {
        let next = |v: &[SimTime]| v.get(v.partition_point(|&t| t <= now)).copied();
        match (next(&self.starts), next(&self.ends)) {
            (Some(start), Some(end)) => end <= start,
            // No start ahead (the zero time): before every end.
            (None, Some(_)) => true,
            (_, None) => false,
        }
    }

    /// The metric: `desiredReplicas` within the interval, else 0 (milli-units).
    pub fn value_milli(&self, now: SimTime) -> i64 {
        if self.active(now) { self.replicas.saturating_mul(1000) } else { 0 }
    }
}

/// A ScaledObject's settings that KEDA's loop reads (the HPA it makes carries
/// the rest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KedaSpec {
    /// `namespace/name` of the ScaledObject.
    pub name: Arc<str>,
    /// `pollingInterval` (seconds, default 30).
    pub polling_s: u32,
    /// `cooldownPeriod` (seconds, default 300): inactive this long after the last
    /// active poll, the target goes to zero (or `idleReplicaCount`).
    pub cooldown_s: u32,
    /// `initialCooldownPeriod` (seconds, default 0): the same, from the
    /// ScaledObject's creation, while no trigger has been active.
    pub initial_cooldown_s: u32,
    /// `minReplicaCount` (default 0).
    pub min_replicas: i32,
    /// `idleReplicaCount`.
    pub idle_replicas: Option<i32>,
    /// The triggers lahar reads (cpu and memory triggers are left out when read).
    pub triggers: Vec<Trigger>,
    /// `autoscaling.keda.sh/paused-scale-in: "true"`: never to zero or idle.
    pub pause_in: bool,
    /// `autoscaling.keda.sh/paused-scale-out: "true"`: never from zero or idle.
    pub pause_out: bool,
}

/// What one poll decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Poll {
    /// The new `spec.replicas` of the target, when KEDA sets it.
    pub rescale: Option<i32>,
    /// Why, as KEDA's event says it.
    pub reason: String,
}

/// KEDA's memory of one ScaledObject.
#[derive(Clone, Debug, Default)]
pub struct KedaState {
    /// `status.lastActiveTime`.
    last_active: Option<SimTime>,
    /// The ScaledObject's creation (its first poll).
    created: Option<SimTime>,
}

impl KedaState {
    /// One poll at `now` (`RequestScale`): `current` is the target's
    /// `spec.replicas`, `demand` the request rate its triggers read (`None`: no
    /// trigger has a value, every scaler errs — nothing is scaled).
    pub fn poll(&mut self, spec: &KedaSpec, now: SimTime, current: i32, demand: Option<i64>) -> Poll {
        let created = *self.created.get_or_insert(now);
        let none = |why: &str| Poll { rescale: None, reason: why.to_string() };
        let values: Vec<Option<i64>> = spec.triggers.iter().map(|t| t.value.at(now, demand)).collect();
        if values.iter().all(Option::is_none) {
            return none("TriggerError: no trigger has a value");
        }
        let active: Vec<&str> = spec
            .triggers
            .iter()
            .zip(&values)
            .filter(|(t, v)| v.is_some_and(|v| v > t.activation))
            .map(|(t, _)| t.metric.as_str())
            .collect();
        let min = spec.min_replicas;
        if !active.is_empty() {
            if (spec.idle_replicas.is_some() && current < min) || current == 0 {
                // scaleFromZeroOrIdle.
                if spec.pause_out {
                    return none("paused-scale-out");
                }
                let to = if min > 0 { min } else { 1 };
                self.last_active = Some(now);
                return Poll {
                    rescale: Some(to),
                    reason: format!("KEDAScaleTargetActivated: triggered by {}", active.join(";")),
                };
            }
            self.last_active = Some(now);
            return none("ScalerActive");
        }
        let idle_above = spec.idle_replicas.is_some_and(|i| current > i);
        if idle_above || (current > 0 && min == 0) {
            // scaleToZeroOrIdle.
            if spec.pause_in {
                return none("paused-scale-in");
            }
            let elapsed =
                |since: SimTime, s: u32| now.micros().saturating_sub(since.micros()) >= u64::from(s) * 1_000_000;
            let cooled = match self.last_active {
                None => elapsed(created, spec.initial_cooldown_s),
                Some(t) => elapsed(t, spec.cooldown_s),
            };
            if !cooled {
                return none("ScalerCooldown");
            }
            let (to, which) = match spec.idle_replicas {
                Some(i) => (i, "idleReplicaCount"),
                None => (min, "minReplicaCount"),
            };
            if to == current {
                return none("ScalerNotActive");
            }
            return Poll { rescale: Some(to), reason: format!("KEDAScaleTargetDeactivated: to {which}") };
        }
        if spec.idle_replicas.is_none() && current < min {
            return Poll { rescale: Some(min), reason: "ScaleTarget set to minReplicaCount".into() };
        }
        none("ScalerNotActive")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(min: i32, idle: Option<i32>) -> KedaSpec {
        KedaSpec {
            name: "default/so".into(),
            polling_s: 30,
            cooldown_s: 300,
            initial_cooldown_s: 0,
            min_replicas: min,
            idle_replicas: idle,
            triggers: vec![Trigger { metric: "s0-prometheus".into(), activation: 2_000, value: MetricValue::Demand }],
            pause_in: false,
            pause_out: false,
        }
    }

    fn s(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    #[test]
    fn inactive_at_creation_goes_to_zero_at_once() {
        let mut st = KedaState::default();
        let p = st.poll(&spec(0, None), s(0), 1, Some(0));
        assert_eq!(p.rescale, Some(0));
        assert_eq!(p.reason, "KEDAScaleTargetDeactivated: to minReplicaCount");
    }

    #[test]
    fn activation_is_strictly_above_the_threshold() {
        let mut st = KedaState::default();
        let sp = spec(0, None);
        assert_eq!(st.poll(&sp, s(0), 0, Some(2_000)).rescale, None);
        let p = st.poll(&sp, s(30), 0, Some(2_001));
        assert_eq!(p.rescale, Some(1));
        assert_eq!(p.reason, "KEDAScaleTargetActivated: triggered by s0-prometheus");
    }

    #[test]
    fn cooldown_counts_from_the_last_active_poll() {
        let mut st = KedaState::default();
        let sp = spec(0, None);
        assert_eq!(st.poll(&sp, s(0), 0, Some(5_000)).rescale, Some(1));
        // Active, replicas above zero: the HPA's business; the time is kept.
        assert_eq!(st.poll(&sp, s(30), 3, Some(5_000)).rescale, None);
        // Inactive from 60 s: cooling down until 30 + 300.
        for t in [60, 90, 300] {
            assert_eq!(st.poll(&sp, s(t), 3, Some(0)).reason, "ScalerCooldown", "at {t}");
        }
        assert_eq!(st.poll(&sp, s(330), 3, Some(0)).rescale, Some(0));
    }

    #[test]
    fn a_minimum_above_zero_starts_there_and_is_restored() {
        let mut st = KedaState::default();
        let sp = spec(2, None);
        assert_eq!(st.poll(&sp, s(0), 0, Some(5_000)).rescale, Some(2));
        // Inactive with min 2 and no idle count: never below it.
        assert_eq!(st.poll(&sp, s(1000), 2, Some(0)).rescale, None);
        assert_eq!(st.poll(&sp, s(1030), 1, Some(0)).rescale, Some(2));
    }

    #[test]
    fn idle_replicas_between_activity() {
        let mut st = KedaState::default();
        let sp = spec(3, Some(0));
        assert_eq!(st.poll(&sp, s(0), 5, Some(0)).rescale, Some(0));
        // Active while below the minimum: to the minimum.
        assert_eq!(st.poll(&sp, s(30), 0, Some(9_000)).rescale, Some(3));
        assert_eq!(st.poll(&sp, s(60), 3, Some(0)).reason, "ScalerCooldown");
        assert_eq!(st.poll(&sp, s(330), 3, Some(0)).rescale, Some(0));
    }

    #[test]
    fn cron_windows_follow_keda_s_next_times() {
        // Starts at 100 and 300, ends at 200 and 250.
        let w = CronWindows { starts: vec![s(100), s(300)], ends: vec![s(200), s(250)], replicas: 4 };
        let at = |t| w.active(s(t));
        // Before 100: next start 100, next end 200 → not within.
        assert!(!at(0) && !at(99));
        // From 100 (its own start is not "next"): next start 300, next end 200.
        assert!(at(100) && at(199));
        // At 200 the next end is 250, before the next start: still within.
        assert!(at(200) && at(249));
        // From 250: next end none ahead → Go's zero time: not within.
        assert!(!at(250) && !at(299));
        // From 300: no start ahead (zero time) but no end either.
        assert!(!at(300));
        assert_eq!(w.value_milli(s(150)), 4000);
        assert_eq!(w.value_milli(s(50)), 0);
        let mut st = KedaState::default();
        let mut sp = spec(0, None);
        sp.triggers = vec![Trigger { metric: "s0-cron".into(), activation: 0, value: MetricValue::Cron(Arc::new(w)) }];
        // A cron trigger has a value without any demand.
        assert_eq!(st.poll(&sp, s(0), 1, None).rescale, Some(0));
        assert_eq!(st.poll(&sp, s(120), 0, None).rescale, Some(1));
    }

    #[test]
    fn paused_directions_and_errors_change_nothing() {
        let mut st = KedaState::default();
        let mut sp = spec(0, None);
        sp.pause_in = true;
        assert_eq!(st.poll(&sp, s(0), 2, Some(0)).rescale, None);
        sp.pause_in = false;
        sp.pause_out = true;
        assert_eq!(st.poll(&sp, s(0), 0, Some(9_000)).rescale, None);
        assert_eq!(st.poll(&spec(0, None), s(0), 2, None).rescale, None);
    }
}
