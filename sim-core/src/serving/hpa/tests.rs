//! The replica calculator's cases from kubernetes/kubernetes
//! `pkg/controller/podautoscaler/replica_calculator_test.go` whose outcome
//! depends only on the metric's total (lahar's pods share the demand equally),
//! under their Go names in snake case, and hand-checked cases of the
//! stabilisation windows and the scaling policies.

use super::*;

fn secs(s: u64) -> SimTime {
    SimTime(s * 1_000_000)
}

fn obs(spec: i32, ready: u32, demand: i64) -> Observation {
    Observation { spec_replicas: spec, status_replicas: spec, ready, demand: Some(demand), ..Default::default() }
}

fn hpa(metric: Metric, min: i32, max: i32, behavior: Option<Behavior>) -> HpaSpec {
    HpaSpec {
        name: "default/h".into(),
        min_replicas: min,
        max_replicas: max,
        metrics: vec![metric],
        behavior,
        keda: None,
    }
}

/// A metric `qps` of the demand.
fn metric(source: Source, target: Target) -> Metric {
    Metric { source, name: "qps".into(), target, value: MetricValue::Demand }
}

fn pods(avg: i64) -> Metric {
    metric(Source::Pods, Target::AverageValue(avg))
}

fn tol() -> Tolerances {
    Tolerances { down: 0.1, up: 0.1 }
}

/// TestReplicaCalcScaleUpCM: 3 pods at 20, 10, 30 (average 20) against 15 → 4.
#[test]
fn replica_calc_scale_up_cm() {
    assert_eq!(metric_replicas(&pods(15_000), &obs(3, 3, 60_000), &tol(), SimTime::ZERO), Some(4));
}

/// TestReplicaCalcScaleDownCM: 5 pods at 12 against 20 → 3.
#[test]
fn replica_calc_scale_down_cm() {
    assert_eq!(metric_replicas(&pods(20_000), &obs(5, 5, 60_000), &tol(), SimTime::ZERO), Some(3));
}

/// TestReplicaCalcToleranceCM: 3 pods at 20, 21, 21 against 20 → within the
/// tolerance, 3.
#[test]
fn replica_calc_tolerance_cm() {
    assert_eq!(metric_replicas(&pods(20_000), &obs(3, 3, 62_000), &tol(), SimTime::ZERO), Some(3));
}

/// TestReplicaCalcScaleUpCMObject: an object at 20 against 15, 3 ready pods → 4.
#[test]
fn replica_calc_scale_up_cm_object() {
    let m = metric(Source::Object, Target::Value(15_000));
    assert_eq!(metric_replicas(&m, &obs(3, 3, 20_000), &tol(), SimTime::ZERO), Some(4));
}

/// TestReplicaCalcScaleUpCMExternal: 8.6 against 4.4, 1 pod → 2.
#[test]
fn replica_calc_scale_up_cm_external() {
    let m = metric(Source::External, Target::Value(4_400));
    assert_eq!(metric_replicas(&m, &obs(1, 1, 8_600), &tol(), SimTime::ZERO), Some(2));
}

/// TestReplicaCalcScaleUpPerPodCMExternal: 8.6 against 2.15 per pod, 3 pods → 4.
#[test]
fn replica_calc_scale_up_per_pod_cm_external() {
    let m = metric(Source::External, Target::AverageValue(2_150));
    assert_eq!(metric_replicas(&m, &obs(3, 3, 8_600), &tol(), SimTime::ZERO), Some(4));
}

/// TestReplicaCalcScaleDownPerPodCMExternal: 8.6 against 2.867 per pod, 5 pods → 3.
#[test]
fn replica_calc_scale_down_per_pod_cm_external() {
    let m = metric(Source::External, Target::AverageValue(2_867));
    assert_eq!(metric_replicas(&m, &obs(5, 5, 8_600), &tol(), SimTime::ZERO), Some(3));
}

/// An external metric with no replicas yet scales from zero (`getUsageRatioReplicaCount`).
#[test]
fn external_value_from_zero_replicas() {
    let m = metric(Source::External, Target::Value(4_000));
    assert_eq!(metric_replicas(&m, &obs(0, 0, 9_000), &tol(), SimTime::ZERO), Some(3));
}

/// Pending pods count as using nothing on a scale-up: 2 ready pods at 30 each
/// against 10, 2 pending → the average over 4 is 15 → ceil(1.5 × 4) = 6
/// (without the pending pods, ceil(3 × 2) = 6 too; with 4 pending: 10 over 6 →
/// within the tolerance → unchanged).
#[test]
fn pending_pods_damp_a_scale_up() {
    let mut o = obs(4, 2, 60_000);
    o.pending = 2;
    assert_eq!(metric_replicas(&pods(10_000), &o, &tol(), SimTime::ZERO), Some(6));
    let mut o = obs(6, 2, 60_000);
    o.pending = 4;
    assert_eq!(metric_replicas(&pods(10_000), &o, &tol(), SimTime::ZERO), Some(6));
}

/// Starting pods (no metric yet) count as at the target on a scale-down: 2
/// ready pods at 5 against 10, 2 starting → (10 + 20) / 4 = 7.5 → ceil(0.75 × 4) = 3.
#[test]
fn starting_pods_damp_a_scale_down() {
    let mut o = obs(4, 2, 10_000);
    o.starting = 2;
    assert_eq!(metric_replicas(&pods(10_000), &o, &tol(), SimTime::ZERO), Some(3));
}

/// No ready pod: the metrics API has no value, the metric cannot be computed.
#[test]
fn no_ready_pod_no_pods_metric() {
    let mut o = obs(2, 0, 10_000);
    o.pending = 2;
    assert_eq!(metric_replicas(&pods(1_000), &o, &tol(), SimTime::ZERO), None);
}

/// Without `behavior`: a scale-up is limited to max(2 × current, 4) per sync, and a
/// scale-down waits for the highest recommendation of the last 300 s.
#[test]
fn without_behavior_step_by_step() {
    let spec = hpa(pods(10_000), 1, 20, None);
    let cfg = HpaConfig::default();
    let mut st = HpaState::default();
    // 1 replica at 100 req/s against 10 per pod: 10 wanted, at most 4 now.
    let o = st.reconcile(&spec, &cfg, secs(0), &obs(1, 1, 100_000));
    assert_eq!((o.rescale, o.proposed), (Some(4), 10));
    // 4 ready: 25 each → 10 wanted, at most 8.
    let o = st.reconcile(&spec, &cfg, secs(15), &obs(4, 4, 100_000));
    assert_eq!(o.rescale, Some(8));
    let o = st.reconcile(&spec, &cfg, secs(30), &obs(8, 8, 100_000));
    assert_eq!(o.rescale, Some(10));
    // Demand falls to 20: 2 wanted, but 10 was recommended within 300 s.
    let o = st.reconcile(&spec, &cfg, secs(45), &obs(10, 10, 20_000));
    assert_eq!((o.rescale, o.proposed), (None, 2));
    // At 330 s the recommendations of 0–30 s are out of the window; 45 s's (2) and
    // later ones remain: 2.
    for t in (60..330).step_by(15) {
        let o = st.reconcile(&spec, &cfg, secs(t), &obs(10, 10, 20_000));
        assert_eq!(o.rescale, None, "at {t} s");
    }
    let o = st.reconcile(&spec, &cfg, secs(330), &obs(10, 10, 20_000));
    assert_eq!(o.rescale, Some(2));
}

/// With `behavior` (the defaults): scale-up by max(4 pods, 100%) per 15 s, counting
/// the changes made within the period; scale-down after the 300 s window.
#[test]
fn default_behavior_limits_by_period() {
    let b = Behavior { up: Rules::default_up(), down: Rules::default_down() };
    let spec = hpa(pods(10_000), 1, 100, Some(b));
    let cfg = HpaConfig::default();
    let mut st = HpaState::default();
    let o = st.reconcile(&spec, &cfg, secs(0), &obs(2, 2, 500_000));
    // 50 wanted; the period started at 2: max(2 + 4, 2 × 2) = 6.
    assert_eq!((o.rescale, o.proposed), (Some(6), 50));
    // 10 s later (inside the period, 4 added): the period started at 2 → still 6.
    let o = st.reconcile(&spec, &cfg, secs(10), &obs(6, 6, 500_000));
    assert_eq!(o.rescale, None);
    // 15 s after the event it is out of the period: from 6, max(10, 12) = 12.
    let o = st.reconcile(&spec, &cfg, secs(15), &obs(6, 6, 500_000));
    assert_eq!(o.rescale, Some(12));
}

/// A custom behavior: `selectPolicy: Min` over 1 pod / 60 s and 10% / 60 s; a
/// scale-down window of 0 with a policy of 1 pod per 30 s.
#[test]
fn custom_behavior() {
    let up = Rules {
        window_s: Some(0),
        select: Select::Min,
        policies: vec![
            Policy { percent: false, value: 1, period_s: 60 },
            Policy { percent: true, value: 10, period_s: 60 },
        ],
        tolerance: None,
    };
    let down = Rules {
        window_s: Some(0),
        select: Select::Max,
        policies: vec![Policy { percent: false, value: 1, period_s: 30 }],
        tolerance: None,
    };
    let spec = hpa(pods(10_000), 1, 100, Some(Behavior { up, down }));
    let cfg = HpaConfig::default();
    let mut st = HpaState::default();
    // 20 ready at 30 each: 60 wanted; min(20 + 1, ceil(20 × 1.1) = 22) = 21.
    let o = st.reconcile(&spec, &cfg, secs(0), &obs(20, 20, 600_000));
    assert_eq!(o.rescale, Some(21));
    // Within 60 s nothing more.
    let o = st.reconcile(&spec, &cfg, secs(45), &obs(21, 21, 630_000));
    assert_eq!(o.rescale, None);
    let o = st.reconcile(&spec, &cfg, secs(60), &obs(21, 21, 630_000));
    assert_eq!(o.rescale, Some(22));
    // Demand gone to 1 per pod: down by one pod per 30 s from the replicas at the
    // period's start, which counts back the pod added at 60 s (15 s ago): 21 - 1.
    let o = st.reconcile(&spec, &cfg, secs(75), &obs(22, 22, 22_000));
    assert_eq!(o.rescale, Some(20));
    // At 90 s the period started at 22 (two removed at 75 s): no lower than 20.
    let o = st.reconcile(&spec, &cfg, secs(90), &obs(20, 20, 20_000));
    assert_eq!(o.rescale, None);
    let o = st.reconcile(&spec, &cfg, secs(105), &obs(20, 20, 20_000));
    assert_eq!(o.rescale, Some(19));
}

/// Replicas outside `[minReplicas, maxReplicas]` are brought inside without
/// reading the metrics; a target at 0 replicas is left alone.
#[test]
fn bounds_and_zero() {
    let spec = hpa(pods(10_000), 2, 5, None);
    let cfg = HpaConfig::default();
    let mut st = HpaState::default();
    assert_eq!(st.reconcile(&spec, &cfg, secs(0), &obs(9, 9, 0)).rescale, Some(5));
    assert_eq!(st.reconcile(&spec, &cfg, secs(15), &obs(1, 1, 0)).rescale, Some(2));
    assert_eq!(st.reconcile(&spec, &cfg, secs(30), &obs(0, 0, 90_000)).rescale, None);
    // No demand at all: no metric can be computed, nothing changes.
    let mut o = obs(3, 3, 0);
    o.demand = None;
    assert_eq!(st.reconcile(&spec, &cfg, secs(45), &o).rescale, None);
}
