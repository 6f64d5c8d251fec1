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
use lahar_core::serving::kthena_roles::{Layout, Ratio, RoleParam, RolesSpec};
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
    /// The roles inside one ModelServing (`disaggregatedTarget.targetRef`).
    Disaggregated(RolesSpec, (String, String)),
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
    let mut metrics = metric_list(ck, spec, "spec");
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
        ["disaggregatedTarget"] => {}
        [] => {
            left(
                cx,
                "spec",
                "no target (an AutoscalingPolicyBinding of kthena before v0.4 would name it; lahar skips those)",
            );
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
    if let Some(t) = spec.get("disaggregatedTarget") {
        let (roles, target) = disaggregated(ck, t, &ns, &metrics, spec_of)?;
        if !ck.ok() {
            return None;
        }
        return Some(Read {
            target: Target::Disaggregated(roles, target),
            file: d.file.clone(),
            at: root.at,
            doc: d.label(),
        });
    }
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
    let target = object_ref(ck, t, &tp, namespace);
    metric_sources(ck, t, &tp, metrics);
    target
}

/// `parent.targetRef` at `path`: the ModelServing (namespace, name), in
/// `namespace` unless it names another.
fn object_ref(ck: &mut Ck<'_>, t: &Node, tp: &str, namespace: &str) -> Option<(String, String)> {
    let rp = join(tp, "targetRef");
    match t.get("targetRef") {
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
            ck.err(t.at, &rp, "required: the ModelServing to scale");
            None
        }
    }
}

/// `parent.metricSources` at `tp`: each source given to the metric of its
/// name (the first that gives one, when several targets share the metrics).
fn metric_sources(ck: &mut Ck<'_>, t: &Node, tp: &str, metrics: &mut [Metric]) {
    let sp = join(tp, "metricSources");
    for (name, src) in ck.map(t, "metricSources", tp) {
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
}

/// `parent.metrics` at `path`: each a name (unique) and a target value.
fn metric_list(ck: &mut Ck<'_>, parent: &Node, path: &str) -> Vec<Metric> {
    let mut metrics: Vec<Metric> = Vec::new();
    for (i, m) in ck.seq(parent, "metrics", path).iter().enumerate() {
        let p = format!("{path}.metrics[{i}]");
        known_keys(ck, m, &p, &["name", "targetValue"]);
        let name = ck.opt_str(m, "name", &p).filter(|n| !n.is_empty());
        let target = match m.get("targetValue") {
            Some(v) => super::hpa::quantity(ck, v, &join(&p, "targetValue")),
            None => {
                ck.err(m.at, &join(&p, "targetValue"), "required");
                None
            }
        };
        if target.is_some_and(|t| t <= 0) {
            let at = m.get("targetValue").and_then(|v| v.at);
            ck.err(at, &join(&p, "targetValue"), "metric target value must be greater than 0");
        }
        if name.is_none() {
            ck.err(m.at, &join(&p, "name"), "required: a metric name");
        }
        if let Some(n) = &name
            && metrics.iter().any(|m| m.name == *n)
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
    metrics
}

/// `spec.disaggregatedTarget` (`t`), checked as kthena's CRD and validating
/// webhook check it: its ModelServing, and its roles each scaled as a
/// homogeneous target of their own (`spec_of`: the policy's tolerance and
/// behaviour with a role's metrics and bounds), sorted by name.
fn disaggregated(
    ck: &mut Ck<'_>,
    t: &Node,
    namespace: &str,
    policy_metrics: &[Metric],
    spec_of: impl Fn(Vec<Metric>, i64, i64) -> KthenaSpec,
) -> Option<(RolesSpec, (String, String))> {
    let dp = "spec.disaggregatedTarget";
    known_keys(ck, t, dp, &["targetRef", "roles", "ratioConstraint"]);
    let target = object_ref(ck, t, dp, namespace);
    let rp = join(dp, "roles");
    let list = ck.map(t, "roles", dp);
    if list.is_empty() || list.len() > 2 {
        let at = t.get("roles").and_then(|n| n.at).or(t.at);
        ck.err(at, &rp, format!("one or two roles (ModelServing template role names), got {}", list.len()));
    }
    let mut roles: Vec<RoleParam> = Vec::new();
    for (name, r) in list {
        let p = join(&rp, name);
        if name.is_empty() {
            ck.err(
                r.at,
                &rp,
                "role name must refer to a ModelServing.spec.template.roles[].name and must not be empty",
            );
            continue;
        }
        known_keys(ck, r, &p, &["minReplicas", "maxReplicas", "metrics", "metricSources"]);
        let min = required_int(ck, r, "minReplicas", &p, 0);
        let max = required_int(ck, r, "maxReplicas", &p, 1);
        if let (Some(a), Some(b)) = (min, max)
            && a > b
        {
            ck.err(
                r.get("minReplicas").and_then(|n| n.at),
                &join(&p, "minReplicas"),
                "minReplicas must be <= maxReplicas",
            );
        }
        let fixed = matches!((min, max), (Some(a), Some(b)) if b > 0 && a == b);
        let own = metric_list(ck, r, &p);
        if r.get("metrics").is_some_and(|m| m.val != Val::Null) && own.is_empty() && ck.ok() {
            ck.err(r.get("metrics").and_then(|n| n.at), &join(&p, "metrics"), "at least one metric when given");
        }
        if !fixed && own.is_empty() && policy_metrics.is_empty() {
            let msg = "metrics must be set on every non-fixed role when spec.metrics is empty";
            ck.err(r.at, &join(&p, "metrics"), msg);
        }
        let mut effective = if !own.is_empty() {
            own
        } else if fixed {
            Vec::new()
        } else {
            policy_metrics.iter().map(|m| Metric { source: None, ..m.clone() }).collect()
        };
        let sources = ck.map(r, "metricSources", &p);
        if !fixed {
            if sources.is_empty() && !effective.is_empty() {
                let msg = "metricSources must be set on every non-fixed role when metrics are configured";
                ck.err(r.at, &join(&p, "metricSources"), msg);
            }
            for (key, n) in sources {
                if !effective.iter().any(|m| m.name == *key) {
                    let msg = "metricSources key must match an effective metric name";
                    ck.err(n.at, &join(&join(&p, "metricSources"), key), msg);
                }
            }
        }
        metric_sources(ck, r, &p, &mut effective);
        if let (Some(min), Some(max)) = (min, max) {
            roles.push(RoleParam { name: name.clone(), spec: spec_of(effective, min, max) });
        }
    }
    roles.sort_by(|a, b| a.name.cmp(&b.name));
    let ratio = given(t.get("ratioConstraint")).and_then(|c| ratio(ck, c, &roles));
    let target = target?;
    let name = Arc::clone(&spec_of(Vec::new(), 0, 0).name);
    Some((RolesSpec { name, roles, ratio }, target))
}

/// `ratioConstraint` (`c`) over `roles`, checked as the CRD and webhook do.
fn ratio(ck: &mut Ck<'_>, c: &Node, roles: &[RoleParam]) -> Option<Ratio> {
    let p = "spec.disaggregatedTarget.ratioConstraint";
    known_keys(ck, c, p, &["numeratorRole", "denominatorRole", "minRatio", "maxRatio"]);
    let role = |ck: &mut Ck<'_>, key: &str| {
        let name = ck.opt_str(c, key, p);
        if name.is_none() {
            ck.err(c.at, &join(p, key), "required");
        }
        name
    };
    let (num, den) = (role(ck, "numeratorRole"), role(ck, "denominatorRole"));
    let bound = |ck: &mut Ck<'_>, key: &str| match c.get(key) {
        Some(v) => super::hpa::quantity(ck, v, &join(p, key)),
        None => {
            ck.err(c.at, &join(p, key), "required");
            None
        }
    };
    let (lo, hi) = (bound(ck, "minRatio"), bound(ck, "maxRatio"));
    if roles.len() < 2 {
        ck.err(
            c.at,
            "spec.disaggregatedTarget",
            "roles must contain at least two entries when ratioConstraint is configured",
        );
    }
    let (num, den, lo, hi) = (num?, den?, lo?, hi?);
    if num == den {
        let at = c.get("denominatorRole").and_then(|n| n.at);
        ck.err(at, &join(p, "denominatorRole"), "numeratorRole and denominatorRole must differ");
    }
    let find = |ck: &mut Ck<'_>, key: &str, name: &str| {
        let i = roles.iter().position(|r| r.name == name);
        if i.is_none() {
            ck.err(c.get(key).and_then(|n| n.at), &join(p, key), format!("{key} must exist in roles"));
        }
        i
    };
    let (ni, di) = (find(ck, "numeratorRole", &num), find(ck, "denominatorRole", &den));
    if lo > hi {
        ck.err(c.get("minRatio").and_then(|n| n.at), &join(p, "minRatio"), "minRatio must be <= maxRatio");
    }
    let (ni, di) = (ni?, di?);
    let (n, d) = (&roles[ni].spec, &roles[di].spec);
    if (n.min_replicas == 0) != (d.min_replicas == 0) {
        ck.err(c.at, p, "ratio roles must be scalable-to-zero together");
    }
    if lo < 0 || hi <= 0 {
        ck.err(c.at, p, "minRatio must be >= 0 and maxRatio must be > 0");
    } else {
        // kthena compares floats: n.min / d.max > maxRatio, n.max / d.min < minRatio.
        let (lo_f, hi_f) = (lo as f64 / 1000.0, hi as f64 / 1000.0);
        let unreachable = (d.max_replicas > 0 && f64::from(n.min_replicas) / f64::from(d.max_replicas) > hi_f)
            || (d.min_replicas > 0 && f64::from(n.max_replicas) / f64::from(d.min_replicas) < lo_f);
        if unreachable {
            ck.err(c.at, p, "ratioConstraint is not achievable within role replica bounds");
        }
    }
    Some(Ratio { numerator: ni, denominator: di, min_milli: lo, max_milli: hi })
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

/// Whether ModelServing `namespace/name` among `jobs` has an autoscaler.
fn taken(jobs: &[ImportedJob], namespace: &str, name: &str) -> bool {
    jobs.iter().any(|j| {
        &*j.spec.namespace == namespace
            && j.spec.group.is_some()
            && super::kthena::group_of(&j.spec).is_some_and(|(n, _)| n == name)
    })
}

/// Gives ModelServing `namespace/name` the disaggregated policy `spec`: its
/// roles found in the template, each serving group's job given room for the
/// most replicas the policy may ask of each role.
fn roles_attach(
    spec: RolesSpec,
    (namespace, name): (&str, &str),
    jobs: &mut [ImportedJob],
    cx: &Context<'_>,
) -> Result<(), String> {
    if taken(jobs, namespace, name) {
        return Err(format!("another autoscaler scales ModelServing {namespace}/{name} too"));
    }
    let members = super::groups::members(jobs, (namespace, "ModelServing", name))?;
    let Some(template) = cx.serving_roles.iter().find(|s| s.namespace == namespace && s.name == name) else {
        return Err(format!("no ModelServing {namespace}/{name} in these files"));
    };
    let mut of_policy = Vec::new();
    for r in &spec.roles {
        match template.roles.iter().position(|t| t.name == r.name) {
            Some(i) => of_policy.push(i),
            None => return Err(format!("role {} not found in model serving {namespace}/{name}", r.name)),
        }
    }
    let room: Vec<u32> = template
        .roles
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let most = of_policy.iter().position(|&o| o == i).map_or(0, |p| spec.roles[p].spec.max_replicas);
            t.replicas.max(most.max(0) as u32)
        })
        .collect();
    let per_group: u64 = template.roles.iter().zip(&room).map(|(t, &n)| u64::from(n) * u64::from(1 + t.workers)).sum();
    let total = per_group * members.len() as u64;
    if total > u64::from(lahar_core::model::job::MAX_PODS_PER_JOB) {
        return Err(format!(
            "{} serving groups of up to {per_group} pods could make more than {} pods, the most an object makes",
            members.len(),
            lahar_core::model::job::MAX_PODS_PER_JOB
        ));
    }
    let mut laid = None;
    for &(_, k) in &members {
        match super::kthena::make_room(&mut jobs[k].spec, &template.roles, &room) {
            Some(l) => laid = Some(l),
            None => return Err("a role it may grow has no replica as written to make more from".into()),
        }
    }
    let layout = Layout { roles: laid.expect("a group at least"), of_policy };
    let autoscaler = GroupAutoscaler::KthenaRoles(Arc::new(spec), Arc::new(layout));
    super::groups::attach(autoscaler, (namespace, "ModelServing", name), jobs)
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
            Target::Disaggregated(spec, (namespace, ms)) => {
                let label = format!("AutoscalingPolicy {}", spec.name);
                if let Err(why) = roles_attach(spec, (&namespace, &ms), jobs, cx) {
                    cx.left_out.push(Diagnostic {
                        file: r.file.clone(),
                        at: r.at,
                        path: format!("{}: spec.disaggregatedTarget.targetRef", r.doc),
                        message: format!("{label}: {why}: it is left out"),
                    });
                }
                continue;
            }
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
