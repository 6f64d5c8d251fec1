//! HorizontalPodAutoscalers (`autoscaling/v2`, `v2beta2`, `v1`): read field by
//! field (a built-in kind, so the field lists of `schemas/` do not cover it) and
//! attached to the workload their `scaleTargetRef` names — a Deployment,
//! ReplicaSet or StatefulSet of the same files, or a LeaderWorkerSet or kthena
//! ModelServing, sized in groups ([`super::groups`]). lahar reads every metric as the
//! request rate of its target (`spec.services` gives the demand); Resource and
//! ContainerResource metrics (CPU, memory use) are left out with a warning, as is
//! an HPA whose target is not among the files or is another kind.

use super::ck::{self, Ck, join, known_keys};
use super::yaml::{At, Doc, Node, Val};
use super::{Context, Diagnostic, ImportedJob};
use lahar_core::model::job::{GroupAutoscaler, MAX_PODS_PER_JOB};
use lahar_core::serving::hpa::{Behavior, HpaSpec, Metric, Policy, Rules, Select, Source, Target};
use lahar_core::serving::keda::MetricValue;
use lahar_core::util::quantity::parse_quantity;
use std::sync::Arc;

/// An HPA as read (or as a KEDA ScaledObject makes it), before it meets its
/// target.
pub(crate) struct Read {
    pub(super) spec: HpaSpec,
    /// `scaleTargetRef`: (apiVersion, kind, name) in the HPA's namespace.
    pub(super) target: (String, String, String),
    pub(super) namespace: String,
    pub(super) file: String,
    pub(super) at: At,
    pub(super) doc: String,
    /// The object as messages name it (`HorizontalPodAutoscaler ns/name`,
    /// `ScaledObject ns/name`).
    pub(super) label: String,
}

/// Kinds whose scale an HPA drives in lahar.
const SCALED: [&str; 3] = ["Deployment", "ReplicaSet", "StatefulSet"];

/// Reads one HorizontalPodAutoscaler; `None` after errors.
pub(crate) fn read(d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Option<Read> {
    let root = &d.root;
    let (api, _) = ck::kind_of(root);
    known_keys(ck, root, "", &["apiVersion", "kind", "metadata", "spec", "status"]);
    let meta = ck::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    let v1 = api == "autoscaling/v1";
    let fields: &[&str] = if v1 {
        &["scaleTargetRef", "minReplicas", "maxReplicas", "targetCPUUtilizationPercentage"]
    } else {
        &["scaleTargetRef", "minReplicas", "maxReplicas", "metrics", "behavior"]
    };
    known_keys(ck, spec, "spec", fields);
    let target = target_ref(ck, spec);
    let min = ck.opt_int(spec, "minReplicas", "spec", 0).unwrap_or(1);
    let max = match spec.get("maxReplicas") {
        Some(_) => ck.opt_int(spec, "maxReplicas", "spec", 1),
        None => {
            ck.err(spec.at, "spec.maxReplicas", "required: the most replicas the HPA may set");
            None
        }
    };
    if let Some(m) = max
        && m > i64::from(MAX_PODS_PER_JOB)
    {
        let at = spec.get("maxReplicas").and_then(|n| n.at);
        ck.err(at, "spec.maxReplicas", format!("must be at most {MAX_PODS_PER_JOB} (pods of one workload), got {m}"));
    }
    if min > i64::from(MAX_PODS_PER_JOB) {
        let at = spec.get("minReplicas").and_then(|n| n.at);
        ck.err(at, "spec.minReplicas", format!("must be at most {MAX_PODS_PER_JOB} (pods of one workload), got {min}"));
    }
    if let Some(m) = max
        && min > m
    {
        let at = spec.get("minReplicas").and_then(|n| n.at);
        ck.err(at, "spec.minReplicas", format!("must not exceed maxReplicas ({m}), got {min}"));
    }
    let mut left = Vec::new();
    let metrics = if v1 {
        // v1 scales on CPU only (80% when not given).
        left.push(("spec".to_string(), "an autoscaling/v1 HPA scales on CPU use".to_string()));
        Vec::new()
    } else {
        metrics(ck, spec, &mut left)
    };
    let behavior = spec.get("behavior").filter(|b| b.val != Val::Null).map(|b| behavior(ck, b, "spec.behavior"));
    let name: Arc<str> = format!("{}/{}", meta.namespace, meta.name).into();
    for (path, why) in left {
        cx.left_out.push(Diagnostic {
            file: d.file.clone(),
            at: root.at,
            path: format!("{}: {path}", d.label()),
            message: format!(
                "HorizontalPodAutoscaler {name}: {why}, which lahar does not model (it models request demand): the metric is left out"
            ),
        });
    }
    if !ck.ok() {
        return None;
    }
    let spec = HpaSpec {
        name,
        min_replicas: min as i32,
        max_replicas: max? as i32,
        metrics,
        behavior: behavior.flatten(),
        keda: None,
    };
    let label = format!("HorizontalPodAutoscaler {}", spec.name);
    Some(Read {
        spec,
        target: target?,
        namespace: meta.namespace,
        file: d.file.clone(),
        at: root.at,
        doc: d.label(),
        label,
    })
}

pub(super) fn target_ref(ck: &mut Ck<'_>, spec: &Node) -> Option<(String, String, String)> {
    let Some(r) = spec.get("scaleTargetRef") else {
        ck.err(spec.at, "spec.scaleTargetRef", "required: the workload the HPA scales");
        return None;
    };
    let p = "spec.scaleTargetRef";
    known_keys(ck, r, p, &["apiVersion", "kind", "name"]);
    let api = ck.opt_str(r, "apiVersion", p).unwrap_or_default();
    let kind = ck.opt_str(r, "kind", p);
    let name = ck.opt_str(r, "name", p);
    if kind.is_none() {
        ck.err(r.at, &join(p, "kind"), "required");
    }
    if name.is_none() {
        ck.err(r.at, &join(p, "name"), "required");
    }
    Some((api, kind?, name?))
}

/// A quantity in milli-units, > 0.
pub(super) fn quantity(ck: &mut Ck<'_>, n: &Node, path: &str) -> Option<i64> {
    let s = ck.str(n, path)?;
    match parse_quantity(s.trim(), 1000) {
        Ok(v) if v > 0 => Some(v),
        Ok(_) => {
            ck.err(n.at, path, format!("must be greater than 0, got `{s}`"));
            None
        }
        Err(e) => {
            ck.err(n.at, path, format!("expected a quantity such as `10` or `500m`: {e}"));
            None
        }
    }
}

fn metrics(ck: &mut Ck<'_>, spec: &Node, left: &mut Vec<(String, String)>) -> Vec<Metric> {
    let list = ck.seq(spec, "metrics", "spec");
    if list.is_empty() {
        left.push(("spec.metrics".into(), "no metrics: Kubernetes scales on CPU use (80%)".into()));
    }
    let mut out = Vec::new();
    for (i, m) in list.iter().enumerate() {
        let p = format!("spec.metrics[{i}]");
        known_keys(ck, m, &p, &["type", "pods", "object", "external", "resource", "containerResource"]);
        let ty = ck.opt_str(m, "type", &p);
        let (source, key) = match ty.as_deref() {
            Some("Pods") => (Source::Pods, "pods"),
            Some("Object") => (Source::Object, "object"),
            Some("External") => (Source::External, "external"),
            Some(r @ ("Resource" | "ContainerResource")) => {
                let key = if r == "Resource" { "resource" } else { "containerResource" };
                let what = m.get(key).and_then(|x| x.get("name")).and_then(Node::scalar).unwrap_or_default();
                left.push((p.clone(), format!("a {r} metric (`{what}` use)")));
                continue;
            }
            Some(other) => {
                let at = m.get("type").and_then(|n| n.at);
                ck.err(
                    at,
                    &join(&p, "type"),
                    format!("expected Pods, Object, External, Resource or ContainerResource, got `{other}`"),
                );
                continue;
            }
            None => {
                ck.err(m.at, &join(&p, "type"), "required");
                continue;
            }
        };
        let sp = join(&p, key);
        let Some(src) = m.get(key) else {
            ck.err(m.at, &sp, format!("required with type {}", ty.unwrap_or_default()));
            continue;
        };
        let known: &[&str] =
            if source == Source::Object { &["metric", "target", "describedObject"] } else { &["metric", "target"] };
        known_keys(ck, src, &sp, known);
        let name = match src.get("metric") {
            Some(mm) => {
                let mp = join(&sp, "metric");
                known_keys(ck, mm, &mp, &["name", "selector"]);
                ck.opt_str(mm, "name", &mp)
            }
            None => None,
        };
        let Some(name) = name else {
            ck.err(src.at, &join(&sp, "metric.name"), "required");
            continue;
        };
        let Some(t) = src.get("target") else {
            ck.err(src.at, &join(&sp, "target"), "required");
            continue;
        };
        let tp = join(&sp, "target");
        known_keys(ck, t, &tp, &["type", "value", "averageValue", "averageUtilization"]);
        let target = match ck.opt_str(t, "type", &tp).as_deref() {
            Some("Value") if source != Source::Pods => {
                t.get("value").and_then(|v| quantity(ck, v, &join(&tp, "value"))).map(Target::Value)
            }
            Some("AverageValue") => t
                .get("averageValue")
                .and_then(|v| quantity(ck, v, &join(&tp, "averageValue")))
                .map(Target::AverageValue),
            other => {
                let allowed = if source == Source::Pods { "AverageValue" } else { "Value or AverageValue" };
                let got = other.map_or("nothing".to_string(), |o| format!("`{o}`"));
                ck.err(
                    t.get("type").and_then(|n| n.at).or(t.at),
                    &join(&tp, "type"),
                    format!("expected {allowed}, got {got}"),
                );
                None
            }
        };
        let Some(target) = target else {
            if ck.ok() {
                ck.err(t.at, &tp, "the target's value is missing");
            }
            continue;
        };
        out.push(Metric { source, name, target, value: MetricValue::Demand });
    }
    out
}

/// `behavior` at `path`, defaulted.
pub(super) fn behavior(ck: &mut Ck<'_>, b: &Node, path: &str) -> Option<Behavior> {
    known_keys(ck, b, path, &["scaleUp", "scaleDown"]);
    let up = match b.get("scaleUp").filter(|n| n.val != Val::Null) {
        Some(n) => rules(ck, n, &join(path, "scaleUp"), Rules::default_up())?,
        None => Rules::default_up(),
    };
    let down = match b.get("scaleDown").filter(|n| n.val != Val::Null) {
        Some(n) => rules(ck, n, &join(path, "scaleDown"), Rules::default_down())?,
        None => Rules::default_down(),
    };
    Some(Behavior { up, down })
}

/// `GenerateHPAScale{Up,Down}Rules`: the fields not given keep the default's.
fn rules(ck: &mut Ck<'_>, n: &Node, path: &str, default: Rules) -> Option<Rules> {
    known_keys(ck, n, path, &["stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"]);
    let mut r = default;
    if let Some(w) = ck.opt_int(n, "stabilizationWindowSeconds", path, 0) {
        if w > 3600 {
            let at = n.get("stabilizationWindowSeconds").and_then(|x| x.at);
            ck.err(at, &join(path, "stabilizationWindowSeconds"), format!("must be at most 3600, got {w}"));
        }
        r.window_s = Some(w as u32);
    }
    match ck.opt_str(n, "selectPolicy", path).as_deref() {
        None => {}
        Some("Max") => r.select = Select::Max,
        Some("Min") => r.select = Select::Min,
        Some("Disabled") => r.select = Select::Disabled,
        Some(o) => {
            let at = n.get("selectPolicy").and_then(|x| x.at);
            ck.err(at, &join(path, "selectPolicy"), format!("expected Max, Min or Disabled, got `{o}`"));
        }
    }
    if let Some(list) = n.get("policies").filter(|x| x.val != Val::Null) {
        let pp = join(path, "policies");
        let items = ck.seq(n, "policies", path);
        if items.is_empty() {
            ck.err(list.at, &pp, "must specify at least one policy");
        }
        let mut out = Vec::new();
        for (i, p) in items.iter().enumerate() {
            let ip = format!("{pp}[{i}]");
            known_keys(ck, p, &ip, &["type", "value", "periodSeconds"]);
            let percent = match ck.opt_str(p, "type", &ip).as_deref() {
                Some("Pods") => Some(false),
                Some("Percent") => Some(true),
                other => {
                    let got = other.map_or("nothing".to_string(), |o| format!("`{o}`"));
                    ck.err(
                        p.get("type").and_then(|x| x.at).or(p.at),
                        &join(&ip, "type"),
                        format!("expected Pods or Percent, got {got}"),
                    );
                    None
                }
            };
            let value = ck.opt_int(p, "value", &ip, 1);
            let period = ck.opt_int(p, "periodSeconds", &ip, 1);
            if value.is_none() && p.get("value").is_none() {
                ck.err(p.at, &join(&ip, "value"), "required (> 0)");
            }
            match period {
                Some(s) if s > 1800 => {
                    let at = p.get("periodSeconds").and_then(|x| x.at);
                    ck.err(at, &join(&ip, "periodSeconds"), format!("must be from 1 to 1800, got {s}"));
                }
                None if p.get("periodSeconds").is_none() => {
                    ck.err(p.at, &join(&ip, "periodSeconds"), "required (1 to 1800)")
                }
                _ => {}
            }
            if let (Some(percent), Some(value), Some(period)) = (percent, value, period) {
                out.push(Policy { percent, value: value.min(i64::from(i32::MAX)) as i32, period_s: period as u32 });
            }
        }
        r.policies = out;
    }
    if let Some(t) = n.get("tolerance").filter(|x| x.val != Val::Null) {
        let tp = join(path, "tolerance");
        if let Some(s) = ck.str(t, &tp) {
            match parse_quantity(s.trim(), 1_000_000) {
                Ok(v) if v >= 0 => r.tolerance = Some(v as f64 / 1e6),
                _ => ck.err(t.at, &tp, format!("expected a quantity ≥ 0 such as `0.05` or `50m`, got `{s}`")),
            }
        }
    }
    Some(r)
}

/// Gives each HPA's target its autoscaler, and the target more pod names (as its
/// controller names them, up to twice `maxReplicas`: pods being deleted keep
/// theirs while new ones start). An HPA whose target is not among `jobs`, is
/// of a kind lahar does not scale, or is named by another HPA too is left out.
pub(crate) fn attach(read: Vec<Read>, docs: &[Doc], jobs: &mut [ImportedJob], cx: &mut Context<'_>) {
    let key = |r: &Read| (r.target.1.clone(), r.namespace.clone(), r.target.2.clone());
    let mut count = std::collections::BTreeMap::<(String, String, String), usize>::new();
    for r in &read {
        *count.entry(key(r)).or_default() += 1;
    }
    for r in read {
        let (api, kind, name) = &r.target;
        let left = |cx: &mut Context<'_>, why: String| {
            cx.left_out.push(Diagnostic {
                file: r.file.clone(),
                at: r.at,
                path: format!("{}: spec.scaleTargetRef", r.doc),
                message: format!("{}: {why}: it is left out", r.label),
            });
        };
        let groups = (kind == "LeaderWorkerSet" && api.starts_with("leaderworkerset.x-k8s.io/"))
            || (kind == "ModelServing" && api.starts_with("workload.serving.volcano.sh/"));
        if !groups && (!SCALED.contains(&kind.as_str()) || !(api.is_empty() || api.starts_with("apps/"))) {
            left(
                cx,
                format!(
                    "its target is a {kind} ({api}); lahar autoscales Deployments, ReplicaSets, StatefulSets, LeaderWorkerSets and ModelServings"
                ),
            );
            continue;
        }
        if count[&key(&r)] > 1 {
            left(
                cx,
                format!(
                    "another HPA or ScaledObject scales {kind} {}/{name} too, and Kubernetes then scales neither (AmbiguousSelector)",
                    r.namespace
                ),
            );
            continue;
        }
        if groups {
            let hpa = GroupAutoscaler::Hpa(Arc::new(r.spec));
            if let Err(why) = super::groups::attach(hpa, (&r.namespace, kind, name), jobs) {
                left(cx, why);
            }
            continue;
        }
        let Some(job) = jobs
            .iter_mut()
            .find(|j| &*j.spec.kind == kind && &*j.spec.namespace == r.namespace.as_str() && j.spec.name == *name)
        else {
            left(cx, format!("no {kind} {}/{name} with schedulerName volcano in these files", r.namespace));
            continue;
        };
        let have = job.spec.tasks.first().map_or(0, |t| t.replicas);
        let most = (r.spec.max_replicas.max(0) as u32).saturating_mul(2).max(have).min(MAX_PODS_PER_JOB);
        let start = docs
            .iter()
            .find(|d| d.file == job.file && d.label() == job.doc)
            .and_then(|d| d.root.get("spec")?.get("ordinals")?.get("start")?.scalar())
            .and_then(|s| s.parse::<u32>().ok())
            .unwrap_or(0);
        let mut errs = Vec::new();
        let ck = Ck::for_object(&job.file, &job.doc, &mut errs);
        let names = super::apps::pod_names(&ck, kind, name, start, most);
        job.spec.pod_names = Some(Box::new(vec![names]));
        job.spec.autoscaler = Some(Arc::new(r.spec));
    }
}
