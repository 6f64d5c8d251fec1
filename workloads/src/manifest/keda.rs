//! KEDA's ScaledObject (`keda.sh/v1alpha1`): read field by field and turned into
//! the HorizontalPodAutoscaler KEDA makes for it (kedacore/keda
//! `controllers/keda/hpa.go`), with the settings of KEDA's own loop, which moves
//! the target to and from zero ([`lahar_core::serving::keda`]). Every trigger's
//! metric is read as the target's request rate, as an HPA's are; `cpu` and
//! `memory` triggers (Resource metrics) and scalers lahar does not know are left
//! out with a warning.

use super::ck::{self, Ck, join, known_keys};
use super::hpa::{self, Read};
use super::yaml::{Doc, Node, Val};
use super::{Context, Diagnostic};
use lahar_core::model::job::MAX_PODS_PER_JOB;
use lahar_core::serving::hpa::{Behavior, HpaSpec, Metric, Rules, Select, Source, Target};
use lahar_core::serving::keda::{CronWindows, KedaSpec, MetricValue, Trigger};
use lahar_core::util::quantity::parse_quantity;
use lahar_core::util::time::{MICROS_PER_SEC, SimTime};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A scaler lahar reads: (type, target keys, the target's default, activation
/// keys).
type Scaler = (&'static str, &'static [&'static str], Option<&'static str>, &'static [&'static str]);

/// Scalers whose target lahar reads, from each scaler's metadata in
/// kedacore/keda `pkg/scalers/*_scaler.go`. The first key given is read.
const SCALERS: &[Scaler] = &[
    ("prometheus", &["threshold"], None, &["activationThreshold"]),
    ("metrics-api", &["targetValue"], None, &["activationTargetValue"]),
    ("datadog", &["targetValue", "queryValue"], None, &["activationTargetValue", "activationQueryValue"]),
    ("new-relic", &["threshold"], None, &["activationThreshold"]),
    ("graphite", &["threshold"], Some("100"), &["activationThreshold"]),
    ("influxdb", &["thresholdValue"], None, &["activationThresholdValue"]),
    ("aws-cloudwatch", &["targetMetricValue"], None, &["activationTargetMetricValue"]),
    ("kafka", &["lagThreshold"], Some("10"), &["activationLagThreshold"]),
    ("rabbitmq", &["value"], None, &["activationValue"]),
];

/// KEDA's annotations (`apis/keda/v1alpha1`).
const PAUSED: &str = "autoscaling.keda.sh/paused";
const PAUSED_REPLICAS: &str = "autoscaling.keda.sh/paused-replicas";
const PAUSED_IN: &str = "autoscaling.keda.sh/paused-scale-in";
const PAUSED_OUT: &str = "autoscaling.keda.sh/paused-scale-out";

/// Reads one ScaledObject into the HPA it makes; `None` after errors or when
/// paused (a warning says so).
pub(crate) fn read(d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Option<Read> {
    let root = &d.root;
    known_keys(ck, root, "", &["apiVersion", "kind", "metadata", "spec", "status"]);
    let meta = ck::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    known_keys(
        ck,
        spec,
        "spec",
        &[
            "scaleTargetRef",
            "pollingInterval",
            "initialCooldownPeriod",
            "cooldownPeriod",
            "idleReplicaCount",
            "minReplicaCount",
            "maxReplicaCount",
            "advanced",
            "triggers",
            "fallback",
        ],
    );
    let target = target_ref(ck, spec);
    let polling = ck.opt_int(spec, "pollingInterval", "spec", 1).unwrap_or(30);
    let initial = ck.opt_int(spec, "initialCooldownPeriod", "spec", 0).unwrap_or(0);
    let cooldown = ck.opt_int(spec, "cooldownPeriod", "spec", 0).unwrap_or(300);
    let idle = ck.opt_int(spec, "idleReplicaCount", "spec", 0);
    let min = ck.opt_int(spec, "minReplicaCount", "spec", 0).unwrap_or(0);
    let max = ck.opt_int(spec, "maxReplicaCount", "spec", 0).unwrap_or(100);
    let at = |k: &str| spec.get(k).and_then(|n| n.at);
    for (k, v) in [("minReplicaCount", min), ("maxReplicaCount", max), ("idleReplicaCount", idle.unwrap_or(0))] {
        if v > i64::from(MAX_PODS_PER_JOB) {
            ck.err(
                at(k),
                &join("spec", k),
                format!("must be at most {MAX_PODS_PER_JOB} (pods of one workload), got {v}"),
            );
        }
    }
    // The admission webhook's checks (`verifyReplicaCount`).
    if min > max {
        ck.err(
            at("minReplicaCount"),
            "spec.minReplicaCount",
            format!("MinReplicaCount={min} must be less than MaxReplicaCount={max}"),
        );
    }
    if let Some(i) = idle
        && i >= min
    {
        ck.err(
            at("idleReplicaCount"),
            "spec.idleReplicaCount",
            format!("IdleReplicaCount={i} must be less than MinReplicaCount={min}"),
        );
    }
    let mut left = Vec::new();
    let (behavior, hpa_name) = advanced(ck, spec, &mut left);
    let (metrics, triggers) = triggers(ck, cx, spec, &mut left);
    if let Some(f) = spec.get("fallback").filter(|f| f.val != Val::Null) {
        let fp = "spec.fallback";
        known_keys(ck, f, fp, &["failureThreshold", "replicas", "behavior"]);
        ck.opt_int(f, "failureThreshold", fp, 0);
        ck.opt_int(f, "replicas", fp, 0);
        ck.opt_str(f, "behavior", fp);
        // lahar's scalers fail only without a demand, and then nothing scales.
        left.push((
            fp.into(),
            "fallback (the replicas KEDA sets once its scalers keep failing, as they do here when the workload has \
             no `spec.services` demand) is not modelled"
                .into(),
        ));
    }
    let ann = |k: &str| meta.annotations.get(k).map(|(v, at)| (v.trim().to_string(), *at));
    let flag = |k: &str| ann(k).is_some_and(|(v, _)| v.eq_ignore_ascii_case("true"));
    let paused_replicas = match ann(PAUSED_REPLICAS) {
        Some((v, at)) => match v.parse::<i32>() {
            Ok(n) if n >= 0 && n as u32 <= MAX_PODS_PER_JOB => Some(n),
            _ => {
                ck.err(
                    at,
                    &format!("metadata.annotations.{PAUSED_REPLICAS}"),
                    format!("expected a replica count from 0 to {MAX_PODS_PER_JOB}, got `{v}`"),
                );
                None
            }
        },
        None => None,
    };
    let so_name = format!("{}/{}", meta.namespace, meta.name);
    for (path, why) in left {
        cx.left_out.push(Diagnostic {
            file: d.file.clone(),
            at: root.at,
            path: format!("{}: {path}", d.label()),
            message: format!("ScaledObject {so_name}: {why}"),
        });
    }
    if !ck.ok() {
        return None;
    }
    let name: Arc<str> =
        format!("{}/{}", meta.namespace, hpa_name.unwrap_or_else(|| format!("keda-hpa-{}", meta.name))).into();
    let label = format!("ScaledObject {so_name}");
    let doc = d.label();
    let read = |spec: HpaSpec, target| Read {
        spec,
        target,
        namespace: meta.namespace.clone(),
        file: d.file.clone(),
        at: root.at,
        doc: doc.clone(),
        label: label.clone(),
    };
    if let Some(n) = paused_replicas {
        // KEDA sets the target to `n` and removes the HPA: an HPA held at `n`.
        let spec = HpaSpec { name, min_replicas: n, max_replicas: n, metrics: Vec::new(), behavior: None, keda: None };
        return Some(read(spec, target?));
    }
    if flag(PAUSED) {
        cx.left_out.push(Diagnostic {
            file: d.file.clone(),
            at: root.at,
            path: format!("{doc}: metadata.annotations.{PAUSED}"),
            message: format!(
                "{label} is paused: KEDA leaves its target's replicas as they are, so the ScaledObject is left out"
            ),
        });
        return None;
    }
    let mut behavior = behavior;
    let (pause_in, pause_out) = (flag(PAUSED_IN), flag(PAUSED_OUT));
    // `newHPAForScaledObject`: a paused direction is a Disabled policy.
    if pause_in || pause_out {
        let b = behavior.get_or_insert_with(|| Behavior { up: Rules::default_up(), down: Rules::default_down() });
        if pause_in {
            b.down.select = Select::Disabled;
        }
        if pause_out {
            b.up.select = Select::Disabled;
        }
    }
    let keda = KedaSpec {
        name: so_name.into(),
        polling_s: polling.min(i64::from(u32::MAX)) as u32,
        cooldown_s: cooldown.min(i64::from(u32::MAX)) as u32,
        initial_cooldown_s: initial.min(i64::from(u32::MAX)) as u32,
        min_replicas: min as i32,
        idle_replicas: idle.map(|i| i as i32),
        triggers,
        pause_in,
        pause_out,
    };
    let spec = HpaSpec {
        name,
        // `GetHPAMinReplicas`, `GetHPAMaxReplicas`.
        min_replicas: if min > 0 { min as i32 } else { 1 },
        max_replicas: max as i32,
        metrics,
        behavior,
        keda: Some(Arc::new(keda)),
    };
    Some(read(spec, target?))
}

/// `scaleTargetRef`: `kind` defaults to Deployment, `apiVersion` to apps/v1.
fn target_ref(ck: &mut Ck<'_>, spec: &Node) -> Option<(String, String, String)> {
    let p = "spec.scaleTargetRef";
    let Some(r) = spec.get("scaleTargetRef") else {
        ck.err(spec.at, p, "required: the workload the ScaledObject scales");
        return None;
    };
    known_keys(ck, r, p, &["apiVersion", "kind", "name", "envSourceContainerName"]);
    ck.opt_str(r, "envSourceContainerName", p);
    let api = ck.opt_str(r, "apiVersion", p).unwrap_or_else(|| "apps/v1".into());
    let kind = ck.opt_str(r, "kind", p).unwrap_or_else(|| "Deployment".into());
    let Some(name) = ck.opt_str(r, "name", p) else {
        ck.err(r.at, &join(p, "name"), "required");
        return None;
    };
    Some((api, kind, name))
}

/// `spec.advanced`: the HPA's behavior and name.
fn advanced(ck: &mut Ck<'_>, spec: &Node, left: &mut Vec<(String, String)>) -> (Option<Behavior>, Option<String>) {
    let Some(a) = spec.get("advanced").filter(|a| a.val != Val::Null) else { return (None, None) };
    let p = "spec.advanced";
    known_keys(ck, a, p, &["horizontalPodAutoscalerConfig", "restoreToOriginalReplicaCount", "scalingModifiers"]);
    // Read when the ScaledObject is deleted, which does not happen in a run.
    ck.opt_bool(a, "restoreToOriginalReplicaCount", p);
    if let Some(m) = a.get("scalingModifiers").filter(|m| m.val != Val::Null) {
        let mp = join(p, "scalingModifiers");
        known_keys(ck, m, &mp, &["formula", "target", "activationTarget", "metricType"]);
        if m.get("formula").is_some() {
            left.push((
                mp,
                "scalingModifiers (a formula over the triggers) is not modelled: each trigger is an HPA metric of its own"
                    .into(),
            ));
        }
    }
    let Some(h) = a.get("horizontalPodAutoscalerConfig").filter(|h| h.val != Val::Null) else { return (None, None) };
    let hp = join(p, "horizontalPodAutoscalerConfig");
    known_keys(ck, h, &hp, &["behavior", "name"]);
    let name = ck.opt_str(h, "name", &hp).filter(|n| !n.is_empty());
    let behavior =
        h.get("behavior").filter(|b| b.val != Val::Null).and_then(|b| hpa::behavior(ck, b, &join(&hp, "behavior")));
    (behavior, name)
}

/// `spec.triggers`: the HPA's External metrics and what KEDA's loop reads.
fn triggers(
    ck: &mut Ck<'_>,
    cx: &Context<'_>,
    spec: &Node,
    left: &mut Vec<(String, String)>,
) -> (Vec<Metric>, Vec<Trigger>) {
    let list = ck.seq(spec, "triggers", "spec");
    if spec.get("triggers").is_none() {
        ck.err(spec.at, "spec.triggers", "required: at least one trigger");
    }
    let (mut metrics, mut triggers) = (Vec::new(), Vec::new());
    for (i, t) in list.iter().enumerate() {
        let p = format!("spec.triggers[{i}]");
        known_keys(ck, t, &p, &["type", "name", "useCachedMetrics", "metadata", "authenticationRef", "metricType"]);
        ck.opt_str(t, "name", &p);
        ck.opt_bool(t, "useCachedMetrics", &p);
        if let Some(a) = t.get("authenticationRef").filter(|a| a.val != Val::Null) {
            let ap = join(&p, "authenticationRef");
            known_keys(ck, a, &ap, &["name", "kind"]);
        }
        let Some(ty) = ck.opt_str(t, "type", &p) else {
            ck.err(t.at, &join(&p, "type"), "required");
            continue;
        };
        let md = ck.string_map(t, "metadata", &p);
        let metric_type = ck.opt_str(t, "metricType", &p);
        // `GetMetricTargetType`: AverageValue unless Value is asked for.
        let target_of = |ck: &mut Ck<'_>, value: Option<i64>| match metric_type.as_deref() {
            None | Some("AverageValue") => value.map(Target::AverageValue),
            Some("Value") => value.map(Target::Value),
            Some(o) => {
                let at = t.get("metricType").and_then(|n| n.at);
                let why = format!("expected AverageValue or Value for a {ty} trigger, got `{o}`");
                ck.err(at, &join(&p, "metricType"), why);
                None
            }
        };
        if ty == "cron" {
            // The scaler's target: one replica.
            let target = target_of(ck, Some(1000));
            let Some((name, windows)) = cron_trigger(ck, cx, t, &md, i, &p) else { continue };
            let Some(target) = target else { continue };
            let value = MetricValue::Cron(Arc::new(windows));
            metrics.push(Metric { source: Source::External, name: name.clone(), target, value: value.clone() });
            triggers.push(Trigger { metric: name, activation: 0, value });
            continue;
        }
        if matches!(ty.as_str(), "cpu" | "memory") {
            left.push((
                p.clone(),
                format!("a {ty} trigger (a Resource metric of `{ty}` use, which lahar does not model) is left out"),
            ));
            continue;
        }
        let Some(&(_, keys, default, activation_keys)) = SCALERS.iter().find(|s| s.0 == ty) else {
            let known: Vec<&str> = SCALERS.iter().map(|s| s.0).collect();
            left.push((
                p.clone(),
                format!(
                    "a `{ty}` trigger is left out: lahar reads the targets of {} (and leaves out cpu and memory)",
                    known.join(", ")
                ),
            ));
            continue;
        };
        let mp = join(&p, "metadata");
        let value = |keys: &[&'static str]| keys.iter().find_map(|&k| md.get(k).map(|(v, at)| (k, v.clone(), *at)));
        let target = match (value(keys), default) {
            (Some((k, v, at)), _) => milli(ck, &v, at, &join(&mp, k), true),
            (None, Some(d)) => parse_quantity(d, 1000).ok(),
            (None, None) => {
                ck.err(t.at, &join(&mp, keys[0]), format!("required by the {ty} scaler: its target value"));
                None
            }
        };
        let activation = match value(activation_keys) {
            Some((k, v, at)) => milli(ck, &v, at, &join(&mp, k), false),
            None => Some(0),
        };
        let target = target_of(ck, target);
        let (Some(target), Some(activation)) = (target, activation) else { continue };
        let name = format!("s{i}-{ty}");
        metrics.push(Metric { source: Source::External, name: name.clone(), target, value: MetricValue::Demand });
        triggers.push(Trigger { metric: name, activation, value: MetricValue::Demand });
    }
    (metrics, triggers)
}

/// The most times of a cron trigger's schedule read before the horizon.
const MAX_CRON_TIMES: usize = 100_000;

/// A `cron` trigger (`pkg/scalers/cron_scaler.go`): its metric's name and its
/// schedules' times on the simulated clock, to the first of each after the
/// horizon.
fn cron_trigger(
    ck: &mut Ck<'_>,
    cx: &Context<'_>,
    t: &Node,
    md: &BTreeMap<String, (String, super::yaml::At)>,
    i: usize,
    p: &str,
) -> Option<(String, CronWindows)> {
    let mp = join(p, "metadata");
    let get = |ck: &mut Ck<'_>, k: &str| -> Option<(String, super::yaml::At)> {
        let v = md.get(k).cloned();
        if v.is_none() {
            ck.err(t.at, &join(&mp, k), "required by the cron scaler");
        }
        v
    };
    let tz = get(ck, "timezone");
    let start = get(ck, "start");
    let end = get(ck, "end");
    let replicas = get(ck, "desiredReplicas");
    let (tz, start, end, replicas) = (tz?, start?, end?, replicas?);
    let replicas = match replicas.0.trim().parse::<i64>() {
        Ok(n) if n >= 1 && n <= i64::from(MAX_PODS_PER_JOB) => n,
        _ => {
            let path = join(&mp, "desiredReplicas");
            ck.err(replicas.1, &path, format!("expected a replica count ≥ 1, got `{}`", replicas.0));
            return None;
        }
    };
    if let Err(e) = crate::cron::zone(&tz.0) {
        ck.err(tz.1, &join(&mp, "timezone"), e);
        return None;
    }
    if start.0 == end.0 {
        ck.err(end.1, &join(&mp, "end"), "start and end can not have exactly same time input");
        return None;
    }
    let Some(horizon) = cx.horizon else {
        ck.err(t.at, p, "a cron trigger's schedule runs until the run ends: set `spec.horizon` in the scenario");
        return None;
    };
    let last = cx.clock_start + (horizon.micros() / MICROS_PER_SEC) as i64;
    let times = |ck: &mut Ck<'_>, (text, at): &(String, super::yaml::At), key: &str| -> Option<Vec<SimTime>> {
        let path = join(&mp, key);
        // KEDA's parser: five fields, no descriptors; the zone is `timezone`.
        let t = text.trim();
        if t.starts_with('@') || t.starts_with("TZ=") || t.starts_with("CRON_TZ=") {
            ck.err(*at, &path, format!("expected five cron fields (the zone goes in `timezone`), got `{text}`"));
            return None;
        }
        let sched = crate::cron::parse(&format!("CRON_TZ={} {t}", if tz.0.is_empty() { "UTC" } else { &tz.0 }))
            .map_err(|e| ck.err(*at, &path, format!("error parsing {key} schedule: {e}")))
            .ok()?;
        let mut out = Vec::new();
        let mut now = cx.clock_start;
        while let Some(n) = sched.next(now) {
            if out.len() == MAX_CRON_TIMES {
                ck.err(*at, &path, format!("`{text}` comes more than {MAX_CRON_TIMES} times before the horizon"));
                return None;
            }
            out.push(SimTime(((n - cx.clock_start) as u64).saturating_mul(MICROS_PER_SEC)));
            if n > last {
                break;
            }
            now = n;
        }
        Some(out)
    };
    let starts = times(ck, &start, "start");
    let ends = times(ck, &end, "end");
    let normal =
        |s: &str| s.replace(' ', "").replace('*', "x").replace('/', "Sl").replace('?', "Qm").replace(',', "Cm");
    let name = format!("cron-{}-{}-{}", tz.0, normal(&start.0), normal(&end.0));
    let name: String =
        name.chars().map(|c| if matches!(c, '/' | '.' | ':' | '%' | '(' | ')') { '-' } else { c }).collect();
    Some((format!("s{i}-{name}"), CronWindows { starts: starts?, ends: ends?, replicas }))
}

/// A scaler's number (KEDA parses it as a float) in milli-units: > 0 for a
/// target, ≥ 0 for an activation threshold.
fn milli(ck: &mut Ck<'_>, v: &str, at: super::yaml::At, path: &str, target: bool) -> Option<i64> {
    if target {
        let n = Node { at, val: Val::Str(v.to_string()) };
        return hpa::quantity(ck, &n, path);
    }
    match parse_quantity(v.trim(), 1000) {
        Ok(x) if x >= 0 => Some(x),
        _ => {
            ck.err(at, path, format!("expected a number ≥ 0 such as `5` or `0.5`, got `{v}`"));
            None
        }
    }
}
