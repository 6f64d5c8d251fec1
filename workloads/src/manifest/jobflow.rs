//! Volcano's `JobFlow` and `JobTemplate` (`flow.volcano.sh/v1alpha1`): a flow's
//! steps name JobTemplates; its controller creates the VolcanoJob
//! `<flow>-<step>` of each step from the template's spec once every step it
//! depends on (`dependsOn.targets`) has a Completed job. Each step becomes a job
//! read as a VolcanoJob, due when the flow is created and held by the engine
//! until its targets complete (`lahar_core::model::flow`).

use super::common::{self, Ck, join};
use super::yaml::{At, Doc, Node, Val};
use super::{Context, ImportedJob, ns_name};
use lahar_core::model::job::FlowStep;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// JobTemplates by (namespace, name).
pub(crate) type Templates<'d> = BTreeMap<(String, String), &'d Doc>;

fn is_kind(d: &Doc, kind: &str) -> bool {
    let (api, k) = common::kind_of(&d.root);
    k == kind && api.starts_with("flow.volcano.sh/")
}

/// The JobTemplates among `docs`.
pub(crate) fn templates(docs: &[Doc]) -> Templates<'_> {
    docs.iter().filter(|d| is_kind(d, "JobTemplate")).map(|d| (ns_name(d), d)).collect()
}

/// The JobTemplates the JobFlows among `docs` name, as (namespace, name).
pub fn used_templates(docs: &[Doc]) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for d in docs.iter().filter(|d| is_kind(d, "JobFlow")) {
        let ns = ns_name(d).0;
        let flows = d.root.get("spec").and_then(|s| s.get("flows"));
        if let Some(Val::Seq(fs)) = flows.map(|f| &f.val) {
            out.extend(fs.iter().filter_map(|f| f.get("name").and_then(Node::scalar)).map(|n| (ns.clone(), n)));
        }
    }
    out
}

/// Whether `d` is a JobTemplate no JobFlow of `used` names (it makes no job).
pub fn is_unused_template(d: &Doc, used: &BTreeSet<(String, String)>) -> bool {
    is_kind(d, "JobTemplate") && !used.contains(&ns_name(d))
}

struct Step {
    name: String,
    at: At,
    targets: Vec<(String, At)>,
}

/// The jobs of one JobFlow. `reported`: templates whose problems were reported
/// already (a template two flows use is reported once).
pub(crate) fn jobs(
    d: &Doc,
    templates: &Templates<'_>,
    reported: &mut BTreeSet<(String, String)>,
    cx: &mut Context<'_>,
    ck: &mut Ck<'_>,
) -> Vec<ImportedJob> {
    let root = &d.root;
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    match ck.opt_str(spec, "jobRetainPolicy", "spec").as_deref() {
        None | Some("retain") | Some("delete") => {}
        Some(other) => ck.err(
            spec.get("jobRetainPolicy").and_then(|n| n.at),
            "spec.jobRetainPolicy",
            format!("expected `retain` or `delete`, got `{other}`"),
        ),
    }
    let mut steps: Vec<Step> = Vec::new();
    for (i, f) in ck.seq(spec, "flows", "spec").iter().enumerate() {
        let fp = format!("spec.flows[{i}]");
        let Some(name) = ck.opt_str(f, "name", &fp).filter(|n| !n.is_empty()) else {
            ck.err(f.at, &join(&fp, "name"), "a flow names its JobTemplate");
            continue;
        };
        let at = f.get("name").and_then(|n| n.at);
        if steps.iter().any(|s| s.name == name) {
            ck.err(at, &join(&fp, "name"), format!("flow `{name}` is listed twice"));
            continue;
        }
        let mut targets = Vec::new();
        if let Some(dep) = f.get("dependsOn") {
            let dp = join(&fp, "dependsOn");
            for (k, t) in ck.seq(dep, "targets", &dp).iter().enumerate() {
                if let Some(s) = ck.str(t, &format!("{dp}.targets[{k}]")) {
                    targets.push((s, t.at));
                }
            }
        }
        steps.push(Step { name, at, targets });
    }
    if steps.is_empty() && ck.ok() {
        ck.err(spec.at, "spec.flows", "a JobFlow needs at least one flow");
    }
    check_dag(&steps, ck);
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    if !ck.ok() {
        return Vec::new();
    }
    let Some(timing) = timing else { return Vec::new() };
    let flow: Arc<str> = Arc::from(format!("JobFlow {}/{}", meta.namespace, meta.name));
    let origin = format!("{}.{}", meta.namespace, meta.name);
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        let key = (meta.namespace.clone(), s.name.clone());
        let Some(t) = templates.get(&key) else {
            ck.err(
                s.at,
                &format!("spec.flows[{i}].name"),
                format!(
                    "JobTemplate `{}` is not in the manifests (namespace `{}`); the JobFlow makes its job from it",
                    s.name, meta.namespace
                ),
            );
            continue;
        };
        let mut scratch = Vec::new();
        let first = reported.insert(key);
        let errs: &mut Vec<super::Diagnostic> = if first { &mut *ck.errs } else { &mut scratch };
        let Some(mut job) = template_job(t, &format!("{}-{}", meta.name, s.name), &origin, &meta.annotations, cx, errs)
        else {
            continue;
        };
        job.spec.submit = timing.submit;
        job.spec.flow = Some(Box::new(FlowStep {
            flow: Arc::clone(&flow),
            step: Arc::from(s.name.as_str()),
            targets: s.targets.iter().map(|(t, _)| Arc::from(t.as_str())).collect(),
        }));
        out.push(job);
    }
    out
}

/// The webhook's checks: every target is a flow of this JobFlow, and the graph
/// has no cycle.
fn check_dag(steps: &[Step], ck: &mut Ck<'_>) {
    let index: BTreeMap<&str, usize> = steps.iter().enumerate().map(|(i, s)| (s.name.as_str(), i)).collect();
    let mut ok = true;
    for (i, s) in steps.iter().enumerate() {
        for (k, (t, at)) in s.targets.iter().enumerate() {
            if !index.contains_key(t.as_str()) {
                let known: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
                ck.err(
                    *at,
                    &format!("spec.flows[{i}].dependsOn.targets[{k}]"),
                    format!(
                        "jobflow Flow is not DAG: vertex is not defined: `{t}` is no flow of this JobFlow (flows: {})",
                        known.join(", ")
                    ),
                );
                ok = false;
            }
        }
    }
    if !ok {
        return;
    }
    // Depth-first search for a cycle, reporting it as `a -> b -> a`.
    fn visit(i: usize, steps: &[Step], index: &BTreeMap<&str, usize>, state: &mut [u8], path: &mut Vec<usize>) -> bool {
        state[i] = 1;
        path.push(i);
        for (t, _) in &steps[i].targets {
            let j = index[t.as_str()];
            if state[j] == 1 {
                path.push(j);
                return true;
            }
            if state[j] == 0 && visit(j, steps, index, state, path) {
                return true;
            }
        }
        path.pop();
        state[i] = 2;
        false
    }
    let mut state = vec![0u8; steps.len()];
    for i in 0..steps.len() {
        let mut path = Vec::new();
        if state[i] == 0 && visit(i, steps, &index, &mut state, &mut path) {
            let start = path.iter().position(|&p| p == *path.last().expect("a cycle")).unwrap_or(0);
            let names: Vec<&str> = path[start..].iter().map(|&p| steps[p].name.as_str()).collect();
            ck.err(
                steps[path[start]].at,
                "spec.flows",
                format!("jobflow Flow is not DAG: `{}` depend on each other", names.join(" -> ")),
            );
            return;
        }
    }
}

/// The VolcanoJob the controller creates from template `t` (its spec, the
/// controller's labels and annotations, and lahar's annotations: the template's,
/// else the flow's), its problems reported to `errs` at the template.
fn template_job(
    t: &Doc,
    name: &str,
    origin: &str,
    flow_ann: &BTreeMap<String, (String, At)>,
    cx: &mut Context<'_>,
    errs: &mut Vec<super::Diagnostic>,
) -> Option<ImportedJob> {
    let mut ck = Ck::new(t, errs);
    let tmeta = common::meta(&mut ck, &t.root, "", true);
    if let Some((_, at)) = tmeta.annotations.get("lahar.io/submit-at") {
        ck.err(*at, "metadata.annotations.lahar.io/submit-at", "a JobFlow creates this job: give the JobFlow the time");
        return None;
    }
    let mut ann: BTreeMap<String, (String, At)> = flow_ann
        .iter()
        .filter(|(k, _)| k.starts_with("lahar.io/") && *k != "lahar.io/submit-at")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    ann.extend(
        tmeta.annotations.iter().filter(|(k, _)| k.starts_with("lahar.io/")).map(|(k, v)| (k.clone(), v.clone())),
    );
    let at = t.root.get("metadata").and_then(|m| m.at).or(t.root.at);
    let s = |v: &str| Node { at, val: Val::Str(v.to_string()) };
    let created_by = |tpl: &str| Node {
        at,
        val: Val::Map(vec![
            ("volcano.sh/createdByJobFlow".into(), s(origin)),
            ("volcano.sh/createdByJobTemplate".into(), s(tpl)),
        ]),
    };
    let tpl = format!("{}.{}", tmeta.namespace, tmeta.name);
    let mut annotations = created_by(&tpl);
    if let Val::Map(m) = &mut annotations.val {
        m.extend(ann.into_iter().map(|(k, (v, a))| (k, Node { at: a, val: Val::Str(v) })));
    }
    let metadata = Node {
        at,
        val: Val::Map(vec![
            ("name".into(), s(name)),
            ("namespace".into(), s(&tmeta.namespace)),
            ("labels".into(), created_by(&tpl)),
            ("annotations".into(), annotations),
        ]),
    };
    let empty = Node { at: t.root.at, val: Val::Null };
    let inner = t.made("batch.volcano.sh/v1alpha1", "Job", metadata, t.root.get("spec").unwrap_or(&empty).clone());
    let mut job = super::vcjob::job(&inner, cx, &mut ck)?;
    job.doc = t.label();
    Some(job)
}
