//! kthena's AutoscalingPolicy (`workload.serving.volcano.sh/v1alpha1`): read
//! field by field, with the defaults its CRD and its mutating webhook give
//! (volcano-sh/kthena at 3cc0572: `pkg/apis/workload/v1alpha1/autoscalingpolicy_types.go`,
//! `pkg/autoscaler/webhook/autoscalingpolicy_mutator.go`), and attached to the
//! ModelServing its `homogeneousTarget` names, which it sizes in serving groups
//! ([`lahar_core::serving::kthena`]), or to every ModelServing of its
//! `heterogeneousTarget` (kthena's cost optimiser,
//! [`lahar_core::serving::kthena_optimizer`]). A `disaggregatedTarget` (role by
//! role) is left out with a warning, as is a policy without a target (an older
//! AutoscalingPolicyBinding's, skipped with it).

use super::ck::{self, Ck, join, known_keys};
use super::yaml::{At, Doc, Node, Val};
use super::{Context, Diagnostic, ImportedJob};
use lahar_core::model::job::GroupAutoscaler;
use lahar_core::serving::kthena::{KthenaSpec, Metric, Panic, Select, Source, Stable};
use lahar_core::serving::kthena_optimizer::{Backend, Hetero};
use std::sync::Arc;

/// A policy as read, before it meets its ModelServings.
pub(crate) struct Read {
    target: Target,
    file: String,
    at: At,
    doc: String,
}

/// What a policy sizes.
enum Target {
    /// One ModelServing (`homogeneousTarget.targetRef`: namespace, name).
    Homogeneous(KthenaSpec, (String, String)),
    /// Several, by kthena's cost optimiser.
    Heterogeneous(Arc<Hetero>),
}

/// The webhook's `scaleDown` when the policy gives none.
const DOWN: Stable = Stable { instances: 0, percent: 100, period_ms: 60_000, select: Select::Or, window_ms: 300_000 };
/// The webhook's `scaleUp.stablePolicy` when the policy gives none.
const UP: Stable = Stable { instances: 4, percent: 100, period_ms: 60_000, select: Select::Or, window_ms: 0 };
/// The webhook's `scaleUp.panicPolicy` when the policy gives none.
const PANIC: Panic = Panic { percent: 0, period_ms: 0, threshold_percent: 200, hold_ms: 0 };

/// Reads one AutoscalingPolicy; `None` after errors or when it is left out
/// (a warning says why).
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
        &["tolerancePercent", "metrics", "behavior", "homogeneousTarget", "heterogeneousTarget", "disaggregatedTarget"],
    );
    let tolerance = ck.opt_int(spec, "tolerancePercent", "spec", 0).unwrap_or(10);
    if tolerance > 100 {
        ck.err(spec.get("tolerancePercent").and_then(|n| n.at), "spec.tolerancePercent", "at most 100");
    }
    let mut metrics = Vec::new();
    for (i, m) in ck.seq(spec, "metrics", "spec").iter().enumerate() {
        let p = format!("spec.metrics[{i}]");
        known_keys(ck, m, &p, &["name", "targetValue"]);
        let name = ck.opt_str(m, "name", &p).filter(|n| !n.is_empty());
        let target = match m.get("targetValue") {
            Some(v) => super::hpa::quantity(ck, v, &join(&p, "targetValue")),
            None => {
                ck.err(m.at, &join(&p, "targetValue"), "required");
                None
            }
        };
        if name.is_none() {
            ck.err(m.at, &join(&p, "name"), "required: a metric name");
        }
        if let Some(n) = &name
            && metrics.iter().any(|m: &Metric| m.name == *n)
        {
            ck.err(
                m.get("name").and_then(|v| v.at),
                &join(&p, "name"),
                format!("duplicate metric name {n} is not allowed"),
            );
        }
        if let (Some(name), Some(target_milli)) = (name, target) {
            metrics.push(Metric { name, target_milli, source: None });
        }
    }
    let (up, panic, down) = behavior(ck, spec.get("behavior"));
    let targets: Vec<&str> = ["homogeneousTarget", "heterogeneousTarget", "disaggregatedTarget"]
        .into_iter()
        .filter(|k| spec.get(k).is_some_and(|n| n.val != Val::Null))
        .collect();
    let label = format!("AutoscalingPolicy {}/{}", meta.namespace, meta.name);
    let left = |cx: &mut Context<'_>, path: &str, why: &str| {
        cx.left_out.push(Diagnostic {
            file: d.file.clone(),
            at: root.at,
            path: format!("{}: {path}", d.label()),
            message: format!("{label}: {why}: it is left out"),
        });
    };
    let is_metrics_missing = |ck: &mut Ck<'_>, metrics: &Vec<Metric>| {
        if metrics.is_empty() && ck.ok() {
            ck.err(
                spec.get("metrics").and_then(|n| n.at).or(spec.at),
                "spec.metrics",
                "at least one metric must be set",
            );
        }
    };
    match targets.as_slice() {
        ["homogeneousTarget"] | ["heterogeneousTarget"] => is_metrics_missing(ck, &metrics),
        [] => {
            left(
                cx,
                "spec",
                "no target (an AutoscalingPolicyBinding of kthena before v0.4 would name it; lahar skips those)",
            );
            return None;
        }
        [_] => {
            let why = "a disaggregatedTarget (roles scaled one by one) is not simulated: lahar sizes ModelServings in serving groups";
            left(cx, "spec.disaggregatedTarget", why);
            return None;
        }
        _ => {
            ck.err(spec.at, "spec", format!("exactly one target may be set, got {}", targets.join(", ")));
            return None;
        }
    }
    let ns = meta.namespace.clone();
    let spec_of = |metrics: Vec<Metric>, min: i64, max: i64| KthenaSpec {
        name: format!("{}/{}", meta.namespace, meta.name).into(),
        tolerance_percent: tolerance as i32,
        metrics,
        up,
        panic,
        down,
        min_replicas: min as i32,
        max_replicas: max as i32,
    };
    if let Some(h) = spec.get("heterogeneousTarget") {
        let hp = "spec.heterogeneousTarget";
        known_keys(ck, h, hp, &["params", "costExpansionRatePercent"]);
        let rate = ck.opt_int(h, "costExpansionRatePercent", hp, 0).unwrap_or(200).min(i64::from(i32::MAX)) as i32;
        let params = ck.seq(h, "params", hp);
        if params.is_empty() {
            ck.err(h.at, &join(hp, "params"), "at least one param (a ModelServing and its bounds) is required");
        }
        let mut backends: Vec<Backend> = Vec::new();
        for (i, prm) in params.iter().enumerate() {
            let pp = format!("{hp}.params[{i}]");
            known_keys(ck, prm, &pp, &["target", "cost", "minReplicas", "maxReplicas"]);
            let cost = ck.opt_int(prm, "cost", &pp, 0).unwrap_or(0).min(i64::from(i32::MAX)) as i32;
            let min = required_int(ck, prm, "minReplicas", &pp, 0);
            let max = required_int(ck, prm, "maxReplicas", &pp, 1);
            if let (Some(a), Some(b)) = (min, max)
                && b < a
            {
                ck.err(
                    prm.get("maxReplicas").and_then(|n| n.at),
                    &join(&pp, "maxReplicas"),
                    format!("below minReplicas ({a})"),
                );
            }
            let target = target_ref(ck, prm, &pp, &ns, &mut metrics);
            if let Some((namespace, name)) = &target
                && let Some(j) = backends.iter().position(|b| &*b.namespace == namespace.as_str() && b.name == *name)
            {
                let at = prm.get("target").and_then(|n| n.at).or(prm.at);
                ck.err(
                    at,
                    &join(&pp, "target.targetRef"),
                    format!("ModelServing {namespace}/{name} is params[{j}]'s target too"),
                );
            }
            if let (Some(min), Some(max), Some((namespace, name))) = (min, max, target) {
                backends.push(Backend { namespace: namespace.into(), name, cost, min: min as i32, max: max as i32 });
            }
        }
        if !ck.ok() {
            return None;
        }
        let hetero = Hetero::new(spec_of(metrics, 0, 0), backends, rate);
        return Some(Read {
            target: Target::Heterogeneous(Arc::new(hetero)),
            file: d.file.clone(),
            at: root.at,
            doc: d.label(),
        });
    }
    let h = spec.get("homogeneousTarget").unwrap_or(&empty);
    let hp = "spec.homogeneousTarget";
    known_keys(ck, h, hp, &["target", "minReplicas", "maxReplicas"]);
    let min = required_int(ck, h, "minReplicas", hp, 1);
    let max = required_int(ck, h, "maxReplicas", hp, 1);
    if let (Some(a), Some(b)) = (min, max)
        && b < a
    {
        ck.err(h.get("maxReplicas").and_then(|n| n.at), &join(hp, "maxReplicas"), format!("below minReplicas ({a})"));
    }
    let target = target_ref(ck, h, hp, &ns, &mut metrics);
    let (Some(min), Some(max), Some(target)) = (min, max, target) else { return None };
    if !ck.ok() {
        return None;
    }
    let spec = spec_of(metrics, min, max);
    Some(Read { target: Target::Homogeneous(spec, target), file: d.file.clone(), at: root.at, doc: d.label() })
}

/// A target's `targetRef` (the ModelServing, in `namespace` unless it names
/// another) and its `metricSources`, under `parent.target` at `path`: each
/// source given to the metric of its name (the first backend's that gives one,
/// for a heterogeneous target).
fn target_ref(
    ck: &mut Ck<'_>,
    parent: &Node,
    path: &str,
    namespace: &str,
    metrics: &mut [Metric],
) -> Option<(String, String)> {
    let empty = Node { at: parent.at, val: Val::Null };
    let tp = join(path, "target");
    let t = parent.get("target").unwrap_or(&empty);
    known_keys(ck, t, &tp, &["targetRef", "metricSources"]);
    let rp = join(&tp, "targetRef");
    let target = match t.get("targetRef") {
        Some(r) => {
            known_keys(ck, r, &rp, &["apiVersion", "kind", "name", "namespace", "uid", "resourceVersion", "fieldPath"]);
            let kind = ck.opt_str(r, "kind", &rp).unwrap_or_default();
            if !kind.is_empty() && kind != "ModelServing" {
                let at = r.get("kind").and_then(|n| n.at).or(r.at);
                ck.err(at, &join(&rp, "kind"), format!("targetRef.kind must be ModelServing, but got {kind}"));
            }
            let namespace = ck.opt_str(r, "namespace", &rp).filter(|n| !n.is_empty()).unwrap_or(namespace.to_string());
            let name = ck.opt_str(r, "name", &rp);
            if name.is_none() {
                ck.err(r.at, &join(&rp, "name"), "required");
            }
            name.map(|n| (namespace, n))
        }
        None => {
            ck.err(t.at.or(parent.at), &rp, "required: the ModelServing to scale");
            None
        }
    };
    let sp = join(&tp, "metricSources");
    for (name, src) in ck.map(t, "metricSources", &tp) {
        let p = join(&sp, name);
        known_keys(ck, src, &p, &["pod", "prometheus"]);
        let source = match (src.get("pod"), src.get("prometheus")) {
            (Some(pod), None) => {
                let pp = join(&p, "pod");
                known_keys(ck, pod, &pp, &["name", "uri", "port", "labelSelector"]);
                Some(Source::Pod)
            }
            (None, Some(prom)) => {
                let pp = join(&p, "prometheus");
                known_keys(ck, prom, &pp, &["serverURL", "query", "auth"]);
                for k in ["serverURL", "query"] {
                    if ck.opt_str(prom, k, &pp).is_none() {
                        ck.err(prom.at, &join(&pp, k), "required");
                    }
                }
                Some(Source::Prometheus)
            }
            (Some(_), Some(_)) => {
                ck.err(src.at, &p, "pod and prometheus configs are mutually exclusive");
                None
            }
            (None, None) => {
                ck.err(src.at, &p, "one metric source backend config is required");
                None
            }
        };
        if let Some(m) = metrics.iter_mut().find(|m| m.name == *name && m.source.is_none()) {
            m.source = source;
        }
    }
    target
}

/// A field given (present and not null).
fn given(n: Option<&Node>) -> Option<&Node> {
    n.filter(|n| n.val != Val::Null)
}

/// An int the CRD requires, at least `min`.
fn required_int(ck: &mut Ck<'_>, parent: &Node, key: &str, path: &str, min: i64) -> Option<i64> {
    if parent.get(key).is_none() {
        ck.err(parent.at, &join(path, key), "required");
        return None;
    }
    let v = ck.opt_int(parent, key, path, min)?;
    if v > i64::from(lahar_core::model::job::MAX_PODS_PER_JOB) {
        ck.err(parent.get(key).and_then(|n| n.at), &join(path, key), "at most 1000000");
        return None;
    }
    Some(v)
}

/// `spec.behavior`: the webhook's defaults for what is absent, the CRD's for
/// the fields of what is given.
fn behavior(ck: &mut Ck<'_>, b: Option<&Node>) -> (Stable, Panic, Stable) {
    let Some(b) = given(b) else { return (UP, PANIC, DOWN) };
    let p = "spec.behavior";
    known_keys(ck, b, p, &["scaleUp", "scaleDown"]);
    let (up_node, down_node) = (given(b.get("scaleUp")), given(b.get("scaleDown")));
    if up_node.is_none() && down_node.is_none() {
        return (UP, PANIC, DOWN);
    }
    let down = match down_node {
        Some(n) => stable(ck, n, &join(p, "scaleDown"), 300_000),
        None => DOWN,
    };
    let Some(u) = up_node else { return (UP, PANIC, down) };
    let up_path = join(p, "scaleUp");
    known_keys(ck, u, &up_path, &["stablePolicy", "panicPolicy"]);
    let up = match given(u.get("stablePolicy")) {
        Some(n) => stable(ck, n, &join(&up_path, "stablePolicy"), 0),
        None => UP,
    };
    let panic = match given(u.get("panicPolicy")) {
        Some(n) => panic_policy(ck, n, &join(&up_path, "panicPolicy")),
        None => PANIC,
    };
    (up, panic, down)
}

/// A stable policy given: the CRD's defaults (1 instance, 100%, 15 s, `Or`)
/// and the webhook's window (`window_ms`) for what it leaves out.
fn stable(ck: &mut Ck<'_>, n: &Node, path: &str, window_ms: i64) -> Stable {
    known_keys(ck, n, path, &["instances", "percent", "period", "selectPolicy", "stabilizationWindow"]);
    let percent = ck.opt_int(n, "percent", path, 0).unwrap_or(100);
    if percent > 1000 {
        ck.err(n.get("percent").and_then(|v| v.at), &join(path, "percent"), "at most 1000");
    }
    let select = match ck.opt_str(n, "selectPolicy", path).as_deref() {
        None | Some("Or") => Select::Or,
        Some("And") => Select::And,
        Some(other) => {
            let at = n.get("selectPolicy").and_then(|v| v.at);
            ck.err(at, &join(path, "selectPolicy"), format!("expected `Or` or `And`, got `{other}`"));
            Select::Or
        }
    };
    Stable {
        instances: ck.opt_int(n, "instances", path, 0).unwrap_or(1).min(i64::from(i32::MAX)) as i32,
        percent: percent.min(1000) as i32,
        period_ms: millis(ck, n, "period", path).unwrap_or(15_000),
        select,
        window_ms: millis(ck, n, "stabilizationWindow", path).unwrap_or(window_ms),
    }
}

/// The panic policy given: the CRD's defaults (1000%, threshold 200%, hold
/// 60 s); its `period` is required.
fn panic_policy(ck: &mut Ck<'_>, n: &Node, path: &str) -> Panic {
    known_keys(ck, n, path, &["percent", "period", "panicThresholdPercent", "panicModeHold"]);
    let percent = ck.opt_int(n, "percent", path, 0).unwrap_or(1000);
    let threshold = ck.opt_int(n, "panicThresholdPercent", path, 110).unwrap_or(200);
    for (k, v) in [("percent", percent), ("panicThresholdPercent", threshold)] {
        if v > 1000 {
            ck.err(n.get(k).and_then(|x| x.at), &join(path, k), "at most 1000");
        }
    }
    let period = millis(ck, n, "period", path);
    if n.get("period").is_none() {
        ck.err(n.at, &join(path, "period"), "required: the panic rate limit's period");
    }
    Panic {
        percent: percent.min(1000) as i32,
        period_ms: period.unwrap_or(0),
        threshold_percent: threshold.min(1000) as i32,
        hold_ms: millis(ck, n, "panicModeHold", path).unwrap_or(60_000),
    }
}

/// A Go duration field in milliseconds (truncated, as Go's `Milliseconds`),
/// between 0 and 30 minutes as kthena's validating webhook wants.
fn millis(ck: &mut Ck<'_>, n: &Node, key: &str, path: &str) -> Option<i64> {
    let v = n.get(key)?;
    let p = join(path, key);
    let text = ck.str(v, &p)?;
    let d = ck.duration(&text, v.at, &p)?;
    if d.0 > 30 * 60 * 1_000_000 {
        ck.err(v.at, &p, format!("must be between 0 and 30 minutes, got {text}"));
        return None;
    }
    Some((d.0 / 1000) as i64)
}

/// A ModelServing (namespace, name) and the autoscaler that sizes it.
type Sized = ((String, String), GroupAutoscaler);

/// Gives each policy's ModelServings their autoscaler (see
/// [`super::groups::attach`]); a policy whose target is not among `jobs`,
/// or is another autoscaler's too, is left out (a heterogeneous target
/// whole: kthena sizes none of its backends while one is missing).
pub(crate) fn attach(read: Vec<Read>, jobs: &mut [ImportedJob], cx: &mut Context<'_>) {
    for r in read {
        let (name, path, targets): (Arc<str>, &str, Vec<Sized>) = match r.target {
            Target::Homogeneous(spec, target) => {
                let name = Arc::clone(&spec.name);
                (
                    name,
                    "spec.homogeneousTarget.target.targetRef",
                    vec![(target, GroupAutoscaler::Kthena(Arc::new(spec)))],
                )
            }
            Target::Heterogeneous(h) => {
                let targets = (0..h.backends.len())
                    .map(|i| {
                        let b = &h.backends[i];
                        ((b.namespace.to_string(), b.name.clone()), GroupAutoscaler::KthenaHetero(Arc::clone(&h), i))
                    })
                    .collect();
                (Arc::clone(&h.spec.name), "spec.heterogeneousTarget.params", targets)
            }
        };
        let label = format!("AutoscalingPolicy {name}");
        let taken = |jobs: &[ImportedJob], namespace: &str, name: &str| {
            jobs.iter().any(|j| {
                &*j.spec.namespace == namespace
                    && j.spec.group.is_some()
                    && super::kthena::group_of(&j.spec).is_some_and(|(n, _)| n == name)
            })
        };
        // Every target checked before any is given the policy.
        let mut outcome = Ok(());
        for ((namespace, name), _) in &targets {
            if taken(jobs, namespace, name) {
                outcome = Err(format!("another autoscaler scales ModelServing {namespace}/{name} too"));
            } else if let Err(e) = super::groups::members(jobs, (namespace, "ModelServing", name)) {
                outcome = Err(e);
            }
            if outcome.is_err() {
                break;
            }
        }
        if outcome.is_ok() {
            for ((namespace, name), autoscaler) in targets {
                outcome = super::groups::attach(autoscaler, (&namespace, "ModelServing", &name), jobs);
                if outcome.is_err() {
                    break;
                }
            }
        }
        if let Err(why) = outcome {
            cx.left_out.push(Diagnostic {
                file: r.file.clone(),
                at: r.at,
                path: format!("{}: {path}", r.doc),
                message: format!("{label}: {why}: it is left out"),
            });
        }
    }
}
