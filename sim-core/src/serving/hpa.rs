//! Kubernetes' HorizontalPodAutoscaler (`autoscaling/v2`), as the controller in
//! kubernetes/kubernetes `pkg/controller/podautoscaler` computes it: the replica
//! calculator (`replica_calculator.go`: `calcPlainMetricReplicas`,
//! `getUsageRatioReplicaCount`, the per-pod external and object variants), the
//! reconcile (`horizontal.go`: `reconcileAutoscaler`, `computeReplicasForMetrics`),
//! the stabilisation windows and the scaling policies (`normalizeDesiredReplicas`,
//! `stabilizeRecommendation[WithBehaviors]`, `convertDesiredReplicasWith{Rules,
//! BehaviorRate}`, `calculateScale{Up,Down}Limit…`, `storeScaleEvent`).
//!
//! Every metric an HPA names is read as the request rate of its target (the
//! service's demand, in milli-requests per second): a `Pods` metric as each ready
//! pod's share of it, an `Object` or `External` metric as the whole. Times are the
//! simulated clock's; a recommendation or scale event exactly one window (or
//! policy period) old is out of it — in Kubernetes each sync runs a little after
//! the one before, so such a sample is always a little older than the window.

use super::keda::MetricValue;
use crate::util::time::SimTime;
use std::sync::Arc;

/// The controller's settings (kube-controller-manager flags).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpaConfig {
    /// `--horizontal-pod-autoscaler-sync-period` (µs; default 15 s).
    pub sync_period_us: u64,
    /// `--horizontal-pod-autoscaler-tolerance` (default 0.1).
    pub tolerance: f64,
    /// `--horizontal-pod-autoscaler-downscale-stabilization` (seconds; default 300).
    pub downscale_window_s: u32,
}

impl Default for HpaConfig {
    fn default() -> Self {
        HpaConfig { sync_period_us: 15_000_000, tolerance: 0.1, downscale_window_s: 300 }
    }
}

/// Where a metric comes from (`spec.metrics[].type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `Pods`: a per-pod metric, averaged over the pods that report it.
    Pods,
    /// `Object`: one value of an object (an Ingress, a Service).
    Object,
    /// `External`: a value from outside the cluster (a queue, a load balancer).
    External,
}

/// A metric's target (`target.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `Value`: the whole metric, in milli-units.
    Value(i64),
    /// `AverageValue`: the metric per pod, in milli-units.
    AverageValue(i64),
}

/// One entry of `spec.metrics`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metric {
    /// Its type.
    pub source: Source,
    /// `metric.name`.
    pub name: String,
    /// Its target (`Pods` metrics take only `AverageValue`).
    pub target: Target,
    /// What it reads: the target's demand, or (a KEDA `cron` trigger's
    /// metric) the replicas its windows want.
    pub value: MetricValue,
}

/// `selectPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Select {
    /// `Max` (the default): the policy allowing the biggest change.
    Max,
    /// `Min`: the policy allowing the smallest change.
    Min,
    /// `Disabled`: no change in this direction.
    Disabled,
}

/// One scaling policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// `type: Percent` (else `Pods`).
    pub percent: bool,
    /// `value` (> 0).
    pub value: i32,
    /// `periodSeconds` (1–1800).
    pub period_s: u32,
}

/// `behavior.scaleUp` or `behavior.scaleDown`, defaulted as the API server
/// defaults them (`GenerateHPAScale{Up,Down}Rules`).
#[derive(Clone, Debug, PartialEq)]
pub struct Rules {
    /// `stabilizationWindowSeconds`; `None` (scale-down only) takes the
    /// controller's `downscale_window_s`.
    pub window_s: Option<u32>,
    /// `selectPolicy`.
    pub select: Select,
    /// `policies` (at least one).
    pub policies: Vec<Policy>,
    /// `tolerance` (Kubernetes 1.33+); `None`: the controller's.
    pub tolerance: Option<f64>,
}

impl Rules {
    /// The API server's scale-up default: no window, the larger of 4 pods and
    /// 100% per 15 s.
    pub fn default_up() -> Rules {
        Rules {
            window_s: Some(0),
            select: Select::Max,
            policies: vec![
                Policy { percent: false, value: 4, period_s: 15 },
                Policy { percent: true, value: 100, period_s: 15 },
            ],
            tolerance: None,
        }
    }

    /// The API server's scale-down default: the controller's window, 100% per 15 s.
    pub fn default_down() -> Rules {
        Rules {
            window_s: None,
            select: Select::Max,
            policies: vec![Policy { percent: true, value: 100, period_s: 15 }],
            tolerance: None,
        }
    }
}

/// `spec.behavior`, defaulted.
#[derive(Clone, Debug, PartialEq)]
pub struct Behavior {
    /// `scaleUp`.
    pub up: Rules,
    /// `scaleDown`.
    pub down: Rules,
}

/// A HorizontalPodAutoscaler, as read from its manifest.
#[derive(Clone, Debug, PartialEq)]
pub struct HpaSpec {
    /// `namespace/name` of the HPA.
    pub name: Arc<str>,
    /// `minReplicas` (default 1).
    pub min_replicas: i32,
    /// `maxReplicas`.
    pub max_replicas: i32,
    /// The metrics lahar reads (Resource metrics are left out when read).
    pub metrics: Vec<Metric>,
    /// `behavior`; `None` when the manifest has none (the older rules apply).
    pub behavior: Option<Behavior>,
    /// The KEDA ScaledObject that made this HPA, whose loop moves the target to
    /// and from zero.
    pub keda: Option<Arc<super::keda::KedaSpec>>,
}

/// What the controller sees of its target when it syncs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Observation {
    /// `scale.spec.replicas`: the count it asks for now.
    pub spec_replicas: i32,
    /// `scale.status.replicas`: the target's pods not being deleted.
    pub status_replicas: i32,
    /// Pods the selector lists: Pending ones (unready to the calculator).
    pub pending: u32,
    /// Running pods not yet ready (starting: no metrics yet).
    pub starting: u32,
    /// Running, ready pods (each reports its share of the demand).
    pub ready: u32,
    /// Pods being deleted or failed (ignored), and succeeded pods (no metrics).
    pub ignored: u32,
    /// Pods that succeeded (listed, without metrics).
    pub succeeded: u32,
    /// The target's demand (milli-requests per second); `None`: no metric has a
    /// value.
    pub demand: Option<i64>,
}

impl Observation {
    fn listed(&self) -> u32 {
        self.pending + self.starting + self.ready + self.ignored + self.succeeded
    }
}

/// What one sync decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The new `spec.replicas`, when it changes.
    pub rescale: Option<i32>,
    /// The metrics' proposal before normalisation (-1: none could be computed).
    pub proposed: i32,
    /// Why, as the controller's event or condition says it.
    pub reason: String,
}

#[derive(Clone, Copy, Debug)]
struct ScaleEvent {
    change: i32,
    at: SimTime,
    outdated: bool,
}

/// The controller's memory of one HPA: recent recommendations, recent scale
/// events.
#[derive(Clone, Debug, Default)]
pub struct HpaState {
    recommendations: Vec<(SimTime, i32)>,
    up_events: Vec<ScaleEvent>,
    down_events: Vec<ScaleEvent>,
}

/// Whether `at` is less than `window_s` seconds before `now`.
fn within(now: SimTime, at: SimTime, window_s: u32) -> bool {
    now.micros().saturating_sub(at.micros()) < u64::from(window_s) * 1_000_000
}

fn ceil_i32(x: f64) -> i32 {
    let c = x.ceil();
    if c >= f64::from(i32::MAX) {
        i32::MAX
    } else if c.is_nan() {
        0
    } else {
        c as i32
    }
}

struct Tolerances {
    down: f64,
    up: f64,
}

impl Tolerances {
    fn within(&self, ratio: f64) -> bool {
        (1.0 - self.down) <= ratio && ratio <= (1.0 + self.up)
    }
}

impl HpaState {
    /// One sync (`reconcileAutoscaler`) at `now`.
    pub fn reconcile(&mut self, spec: &HpaSpec, cfg: &HpaConfig, now: SimTime, obs: &Observation) -> Outcome {
        let current = obs.spec_replicas;
        if self.recommendations.is_empty() {
            self.recommendations.push((now, current));
        }
        let min = spec.min_replicas;
        let (desired, reason, proposed) = if current == 0 && min != 0 {
            return Outcome {
                rescale: None,
                proposed: -1,
                reason: "ScalingDisabled: scaling is disabled since the replica count of the target is zero".into(),
            };
        } else if current > spec.max_replicas {
            (spec.max_replicas, "Current number of replicas above Spec.MaxReplicas".to_string(), -1)
        } else if current < min {
            (min, "Current number of replicas below Spec.MinReplicas".to_string(), -1)
        } else {
            let Some((proposed, metric)) = self.metrics_replicas(spec, cfg, obs, now) else {
                return Outcome {
                    rescale: None,
                    proposed: -1,
                    reason: "FailedComputeMetricsReplicas: no metric could be computed".into(),
                };
            };
            let desired = proposed.max(0);
            let reason = if desired > current {
                format!("{metric} above target")
            } else if desired < current {
                "All metrics below target".to_string()
            } else {
                String::new()
            };
            let desired = match &spec.behavior {
                None => self.normalize(spec, cfg, now, current, desired),
                Some(b) => self.normalize_with_behaviors(spec, b, cfg, now, current, desired),
            };
            if desired == current {
                return Outcome { rescale: None, proposed, reason: "Decided not to scale".into() };
            }
            (desired, reason, proposed)
        };
        self.store_scale_event(spec, now, current, desired);
        Outcome { rescale: Some(desired), proposed, reason }
    }

    /// `computeReplicasForMetrics`: the largest proposal of the metrics that
    /// could be computed, with its metric's description; `None` when none
    /// could, or some could not and the rest would scale down.
    fn metrics_replicas(
        &self,
        spec: &HpaSpec,
        cfg: &HpaConfig,
        obs: &Observation,
        now: SimTime,
    ) -> Option<(i32, String)> {
        let mut replicas = 0;
        let mut name = String::new();
        let mut invalid = 0;
        for m in &spec.metrics {
            let tol = self.tolerances(spec, cfg);
            match metric_replicas(m, obs, &tol, now) {
                Some(r) => {
                    if replicas == 0 || r > replicas {
                        replicas = r;
                        name = match m.source {
                            Source::Pods => format!("pods metric {}", m.name),
                            Source::Object => format!("object metric {}", m.name),
                            Source::External => format!("external metric {}", m.name),
                        };
                    }
                }
                None => invalid += 1,
            }
        }
        if invalid >= spec.metrics.len() || (invalid > 0 && replicas < obs.spec_replicas) {
            return None;
        }
        Some((replicas, name))
    }

    fn tolerances(&self, spec: &HpaSpec, cfg: &HpaConfig) -> Tolerances {
        let b = spec.behavior.as_ref();
        Tolerances {
            down: b.and_then(|b| b.down.tolerance).unwrap_or(cfg.tolerance),
            up: b.and_then(|b| b.up.tolerance).unwrap_or(cfg.tolerance),
        }
    }

    /// `normalizeDesiredReplicas` (no `behavior`): the largest recommendation of
    /// the downscale window, then at most twice the replicas (at least 4), within
    /// `[minReplicas, maxReplicas]`.
    fn normalize(&mut self, spec: &HpaSpec, cfg: &HpaConfig, now: SimTime, current: i32, pre: i32) -> i32 {
        let window = cfg.downscale_window_s;
        let mut max_rec = pre;
        let mut old = None;
        for (i, &(at, rec)) in self.recommendations.iter().enumerate() {
            if !within(now, at, window) {
                old = Some(i);
            } else if rec > max_rec {
                max_rec = rec;
            }
        }
        match old {
            Some(i) => self.recommendations[i] = (now, pre),
            None => self.recommendations.push((now, pre)),
        }
        // calculateScaleUpLimit: max(2 × current, 4).
        let up_limit = (2.0 * f64::from(current)).max(4.0) as i32;
        let max_allowed = spec.max_replicas.min(up_limit);
        if max_rec < spec.min_replicas {
            spec.min_replicas
        } else if max_rec > max_allowed {
            max_allowed
        } else {
            max_rec
        }
    }

    /// `normalizeDesiredReplicasWithBehaviors`: stabilised between the lowest
    /// recommendation of the scale-up window and the highest of the scale-down
    /// window, then limited by the policies' rates.
    fn normalize_with_behaviors(
        &mut self,
        spec: &HpaSpec,
        b: &Behavior,
        cfg: &HpaConfig,
        now: SimTime,
        current: i32,
        pre: i32,
    ) -> i32 {
        let up_w = b.up.window_s.unwrap_or(0);
        let down_w = b.down.window_s.unwrap_or(cfg.downscale_window_s);
        let (mut up_rec, mut down_rec) = (pre, pre);
        let mut old = None;
        for (i, &(at, rec)) in self.recommendations.iter().enumerate() {
            let (in_up, in_down) = (within(now, at, up_w), within(now, at, down_w));
            if in_up {
                up_rec = up_rec.min(rec);
            }
            if in_down {
                down_rec = down_rec.max(rec);
            }
            if !in_up && !in_down {
                old = Some(i);
            }
        }
        let mut stabilized = current;
        if stabilized < up_rec {
            stabilized = up_rec;
        }
        if stabilized > down_rec {
            stabilized = down_rec;
        }
        match old {
            Some(i) => self.recommendations[i] = (now, pre),
            None => self.recommendations.push((now, pre)),
        }
        // convertDesiredReplicasWithBehaviorRate.
        if stabilized > current {
            let limit = scale_up_limit(current, &self.up_events, &self.down_events, &b.up, now).max(current);
            let max_allowed = spec.max_replicas.min(limit);
            return stabilized.min(max_allowed);
        }
        if stabilized < current {
            let limit = scale_down_limit(current, &self.up_events, &self.down_events, &b.down, now).min(current);
            let min_allowed = spec.min_replicas.max(limit);
            return stabilized.max(min_allowed);
        }
        stabilized
    }

    /// `storeScaleEvent` (only with a `behavior`).
    fn store_scale_event(&mut self, spec: &HpaSpec, now: SimTime, prev: i32, new: i32) {
        let Some(b) = &spec.behavior else { return };
        let (events, rules, change) = if new > prev {
            (&mut self.up_events, &b.up, new - prev)
        } else {
            (&mut self.down_events, &b.down, prev - new)
        };
        let longest = rules.policies.iter().map(|p| p.period_s).max().unwrap_or(0);
        let mut old = None;
        for (i, e) in events.iter_mut().enumerate() {
            if !within(now, e.at, longest) {
                e.outdated = true;
            }
            if e.outdated {
                old = Some(i);
            }
        }
        let ev = ScaleEvent { change, at: now, outdated: false };
        match old {
            Some(i) => events[i] = ev,
            None => events.push(ev),
        }
    }
}

/// `getReplicasChangePerPeriod`.
fn changed_in(period_s: u32, events: &[ScaleEvent], now: SimTime) -> i32 {
    events.iter().filter(|e| within(now, e.at, period_s)).map(|e| e.change).sum()
}

/// `calculateScaleUpLimitWithScalingRules`.
fn scale_up_limit(current: i32, up: &[ScaleEvent], down: &[ScaleEvent], rules: &Rules, now: SimTime) -> i32 {
    let (mut result, pick): (i32, fn(i32, i32) -> i32) = match rules.select {
        Select::Disabled => return current,
        Select::Min => (i32::MAX, std::cmp::min),
        Select::Max => (i32::MIN, std::cmp::max),
    };
    for p in &rules.policies {
        let start = current - changed_in(p.period_s, up, now) + changed_in(p.period_s, down, now);
        let proposed = if p.percent {
            ceil_i32(f64::from(start) * (1.0 + f64::from(p.value) / 100.0))
        } else {
            start.saturating_add(p.value)
        };
        result = pick(result, proposed);
    }
    result
}

/// `calculateScaleDownLimitWithBehaviors`.
fn scale_down_limit(current: i32, up: &[ScaleEvent], down: &[ScaleEvent], rules: &Rules, now: SimTime) -> i32 {
    let (mut result, pick): (i32, fn(i32, i32) -> i32) = match rules.select {
        Select::Disabled => return current,
        Select::Min => (i32::MIN, std::cmp::max),
        Select::Max => (i32::MAX, std::cmp::min),
    };
    for p in &rules.policies {
        let start = current - changed_in(p.period_s, up, now) + changed_in(p.period_s, down, now);
        let proposed = if p.percent {
            (f64::from(start) * (1.0 - f64::from(p.value) / 100.0)) as i32
        } else {
            start.saturating_sub(p.value)
        };
        result = pick(result, proposed);
    }
    result
}

/// One metric's proposal (`computeReplicasForMetric`); `None`: it cannot be
/// computed (no value, no pods).
fn metric_replicas(m: &Metric, obs: &Observation, tol: &Tolerances, now: SimTime) -> Option<i32> {
    let demand = m.value.at(now, obs.demand)?;
    match (m.source, m.target) {
        (Source::Pods, Target::AverageValue(target)) => pods_replicas(obs, demand, target, tol),
        // A Pods metric takes only an average (the API server refuses others).
        (Source::Pods, Target::Value(_)) => None,
        (Source::Object | Source::External, Target::Value(target)) => {
            let ratio = demand as f64 / target as f64;
            usage_ratio_replicas(obs, ratio, tol)
        }
        (Source::Object | Source::External, Target::AverageValue(target)) => {
            // GetObjectPerPodMetricReplicas / GetExternalPerPodMetricReplicas.
            let status = obs.status_replicas;
            let ratio = demand as f64 / (target as f64 * f64::from(status));
            if tol.within(ratio) { Some(status) } else { Some(ceil_i32(demand as f64 / target as f64)) }
        }
    }
}

/// `getUsageRatioReplicaCount`.
fn usage_ratio_replicas(obs: &Observation, ratio: f64, tol: &Tolerances) -> Option<i32> {
    let current = obs.spec_replicas;
    if current == 0 {
        return Some(ceil_i32(ratio));
    }
    if tol.within(ratio) {
        return Some(current);
    }
    if obs.listed() == 0 {
        return None;
    }
    Some(ceil_i32(ratio * f64::from(obs.ready)))
}

/// `GetMetricReplicas` → `calcPlainMetricReplicas` for a Pods metric: each
/// ready pod reports an equal share of the demand; pending pods are unready,
/// starting and succeeded pods have no metrics yet, deleted and failed pods are
/// ignored.
fn pods_replicas(obs: &Observation, demand: i64, target: i64, tol: &Tolerances) -> Option<i32> {
    if obs.ready == 0 || obs.listed() == 0 {
        // No pod reports the metric: the metrics API answers none.
        return None;
    }
    let ready = i64::from(obs.ready);
    let share = demand / ready;
    // GetMetricUsageRatio: the integer average over the pods with a value.
    let ratio_of = |total: i64, n: i64| {
        let usage = total / n;
        usage as f64 / target as f64
    };
    let ratio = ratio_of(share * ready, ready);
    let missing = i64::from(obs.starting + obs.succeeded);
    let unready = i64::from(obs.pending);
    let scale_up_with_unready = unready > 0 && ratio > 1.0;
    if !scale_up_with_unready && missing == 0 {
        if tol.within(ratio) {
            return Some(obs.spec_replicas);
        }
        return Some(ceil_i32(ratio * ready as f64));
    }
    let mut total = share * ready;
    let mut n = ready;
    if missing > 0 {
        if ratio < 1.0 {
            // On a scale-down, missing pods count as using the target.
            total += target * missing;
            n += missing;
        } else if ratio > 1.0 {
            // On a scale-up, as using nothing.
            n += missing;
        }
    }
    if scale_up_with_unready {
        n += unready;
    }
    let new_ratio = ratio_of(total, n);
    if tol.within(new_ratio) || (ratio < 1.0 && new_ratio > 1.0) || (ratio > 1.0 && new_ratio < 1.0) {
        return Some(obs.spec_replicas);
    }
    let new = ceil_i32(new_ratio * n as f64);
    if (new_ratio < 1.0 && new > obs.spec_replicas) || (new_ratio > 1.0 && new < obs.spec_replicas) {
        return Some(obs.spec_replicas);
    }
    Some(new)
}

#[cfg(test)]
mod tests;
