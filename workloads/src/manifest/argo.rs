//! Argo Workflows (`argoproj.io/v1alpha1`) as Volcano's integration uses them
//! (`example/integrations/argo/` in Volcano's repository): a `Workflow` — its own
//! templates, or a `WorkflowTemplate` / `ClusterWorkflowTemplate` it names in
//! `workflowTemplateRef` — whose `steps` and `dag` templates sequence `resource`
//! templates that create VolcanoJobs.
//!
//! Each resource step becomes the VolcanoJob its manifest describes (parameters
//! substituted), due when the Workflow is created and created by the engine once
//! the steps before it have completed (the same machinery as Volcano's JobFlow,
//! `lahar_core::model::flow`): a `steps` group waits for the whole group before it, a
//! DAG task for its `dependencies`. A step's `successCondition` must be its
//! VolcanoJob's `status.state.phase` being `Completed`; without one, Argo counts
//! the step done once the object is created, and so does lahar. What lahar cannot
//! time — container and script steps (pods of the default scheduler), `when`,
//! loops, `depends` expressions, exit handlers, suspension, deadlines — is an
//! error at its field, never dropped.

use super::common::{self, Ck, join};
use super::yaml::{At, Doc, Node, Val};
use super::{Context, ImportedJob, schema, vcjob};
use lahar_core::model::job::FlowStep;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The workflow templates (`WorkflowTemplate` by (namespace, name),
/// `ClusterWorkflowTemplate` by ("", name)).
pub(crate) type WorkflowTemplates<'d> = BTreeMap<(String, String), &'d Doc>;

const GROUP: &str = "argoproj.io";

/// Marks a container step in a list of steps to wait for.
const UNTIMED: &str = "\u{0}container:";

fn kind_is(d: &Doc, kinds: &[&str]) -> bool {
    let (api, k) = common::kind_of(&d.root);
    api.split('/').next() == Some(GROUP) && kinds.contains(&k.as_str())
}

/// The key a template document is found by.
fn key(d: &Doc) -> (String, String) {
    let (ns, name) = super::ns_name(d);
    if kind_is(d, &["ClusterWorkflowTemplate"]) { (String::new(), name) } else { (ns, name) }
}

/// The workflow templates among `docs`.
pub(crate) fn templates(docs: &[Doc]) -> WorkflowTemplates<'_> {
    docs.iter().filter(|d| kind_is(d, &["WorkflowTemplate", "ClusterWorkflowTemplate"])).map(|d| (key(d), d)).collect()
}

/// The template a Workflow's `workflowTemplateRef` names, as its key.
fn reference(d: &Doc) -> Option<(String, String)> {
    let r = d.root.get("spec")?.get("workflowTemplateRef")?;
    let name = r.get("name").and_then(Node::scalar)?;
    let cluster = r.get("clusterScope").is_some_and(|c| c.val == Val::Bool(true));
    Some(if cluster { (String::new(), name) } else { (super::ns_name(d).0, name) })
}

/// The workflow templates the Workflows among `docs` name.
pub fn used_workflow_templates(docs: &[Doc]) -> BTreeSet<(String, String)> {
    docs.iter().filter(|d| kind_is(d, &["Workflow"])).filter_map(reference).collect()
}

/// Whether `d` is a workflow template no Workflow of `used` names (it runs
/// nothing by itself).
pub fn is_unused_workflow_template(d: &Doc, used: &BTreeSet<(String, String)>) -> bool {
    kind_is(d, &["WorkflowTemplate", "ClusterWorkflowTemplate"]) && !used.contains(&key(d))
}

/// Fields of a Workflow's spec that change what runs or when, which lahar does
/// not model.
const SPEC_REFUSED: &[(&str, &str)] = &[
    ("onExit", "exit handlers"),
    ("hooks", "lifecycle hooks"),
    ("suspend", "a suspended workflow"),
    ("activeDeadlineSeconds", "a workflow deadline"),
    ("parallelism", "a limit on steps running at once"),
    ("retryStrategy", "retries of steps"),
    ("templateDefaults", "template defaults"),
    ("shutdown", "a shut-down workflow"),
];

/// Fields of a step or DAG task lahar does not model.
const STEP_REFUSED: &[(&str, &str)] = &[
    ("when", "conditional steps"),
    ("withItems", "loops"),
    ("withParam", "loops"),
    ("withSequence", "loops"),
    ("onExit", "exit handlers"),
    ("hooks", "lifecycle hooks"),
    ("continueOn", "steps that may fail"),
    ("templateRef", "templates of other WorkflowTemplates"),
    ("inline", "inline templates"),
    ("depends", "`depends` expressions (write `dependencies`)"),
];

/// Fields of a steps, DAG or resource template that change when or whether its
/// steps run, which lahar does not model.
const TEMPLATE_REFUSED: &[(&str, &str)] = &[
    ("activeDeadlineSeconds", "a step deadline"),
    ("timeout", "a step timeout"),
    ("retryStrategy", "retries of steps"),
    ("memoize", "memoized steps"),
    ("synchronization", "mutexes and semaphores"),
    ("parallelism", "a limit on steps running at once"),
];

/// Where a template is expanded: its path, its inputs, the steps it waits for
/// and the calling steps' path.
struct Scope<'s> {
    tp: &'s str,
    inputs: &'s BTreeMap<String, String>,
    after: &'s [String],
    prefix: &'s str,
}

/// One Workflow's expansion: its name, parameters, templates and the jobs made.
struct Run<'a, 'e, 'c> {
    ck: Ck<'e>,
    cx: &'a mut Context<'c>,
    name: String,
    namespace: String,
    uid: String,
    params: BTreeMap<String, String>,
    /// Templates by name: (the document they are in, the node, its path).
    templates: BTreeMap<String, (&'a Doc, &'a Node, String)>,
    flow: Arc<str>,
    /// lahar's annotations of the Workflow, given to jobs whose manifests have none.
    lahar: BTreeMap<String, (String, At)>,
    submit: lahar_core::util::time::SimTime,
    /// Templates being expanded (a template that calls itself never ends).
    stack: Vec<String>,
    /// Leaf steps made so far, to name them uniquely.
    steps: BTreeSet<String>,
    /// Container steps (not simulated) by step: file, where, the field, the kind.
    untimed: BTreeMap<String, (String, At, String, String)>,
    /// The Workflow's `schedulerName` for its pods (its own, else its template's).
    scheduler: Option<String>,
    /// The Workflow's file and place.
    origin: (String, String),
    out: Vec<ImportedJob>,
}

/// The jobs of one Workflow.
pub(crate) fn jobs(
    d: &Doc,
    wfts: &WorkflowTemplates<'_>,
    cx: &mut Context<'_>,
    errs: &mut Vec<super::Diagnostic>,
) -> Vec<ImportedJob> {
    let start = errs.len();
    let out = workflow(d, wfts, cx, errs);
    // A template several steps call is reported once per problem.
    let mut seen = BTreeSet::new();
    let mut k = start;
    while k < errs.len() {
        let e = &errs[k];
        if seen.insert((e.file.clone(), e.at, e.message.clone())) {
            k += 1;
        } else {
            errs.remove(k);
        }
    }
    out
}

fn workflow(
    d: &Doc,
    wfts: &WorkflowTemplates<'_>,
    cx: &mut Context<'_>,
    errs: &mut Vec<super::Diagnostic>,
) -> Vec<ImportedJob> {
    let mut ck = Ck::new(d, errs);
    let meta = common::meta(&mut ck, &d.root, "", true);
    let empty = Node { at: d.root.at, val: Val::Null };
    let spec = d.root.get("spec").unwrap_or(&empty);
    let referenced = reference(d).map(|k| (k, spec.get("workflowTemplateRef").and_then(|r| r.at)));
    let wft = match referenced {
        Some((k, at)) => match wfts.get(&k) {
            Some(t) => Some(*t),
            None => {
                let what = if k.0.is_empty() {
                    "ClusterWorkflowTemplate".to_string()
                } else {
                    format!("WorkflowTemplate (namespace `{}`)", k.0)
                };
                ck.err(at, "spec.workflowTemplateRef.name", format!("{what} `{}` is not in the manifests", k.1));
                return Vec::new();
            }
        },
        None => None,
    };
    let wspec = wft.and_then(|t| t.root.get("spec"));
    // Each spec's problems in its own file; parameters: the template's, then the
    // Workflow's over them (one without a value has none: using it is an error).
    let mut params = BTreeMap::new();
    for (doc, s) in [(wft, wspec), (Some(d), Some(spec))] {
        let (Some(doc), Some(s)) = (doc, s) else { continue };
        let home = enter(&mut ck, doc);
        for (f, what) in SPEC_REFUSED {
            if let Some(n) = s.get(f).filter(|n| n.val != Val::Null && n.val != Val::Bool(false)) {
                ck.err(n.at, &join("spec", f), format!("lahar does not model {what}"));
            }
        }
        if let Some(args) = s.get("arguments") {
            for (k, p) in ck.seq(args, "parameters", "spec.arguments").iter().enumerate() {
                let pp = format!("spec.arguments.parameters[{k}]");
                if let (Some(n), Some(v)) = (ck.opt_str(p, "name", &pp), ck.opt_str(p, "value", &pp)) {
                    params.insert(n, v);
                }
            }
        }
        leave(&mut ck, home);
    }
    let timing = common::timing(&mut ck, cx, &meta.annotations, meta.at, "");
    let entrypoint = ck
        .opt_str(spec, "entrypoint", "spec")
        .or_else(|| wspec.and_then(|s| s.get("entrypoint")).and_then(Node::scalar));
    let uid = format!("lahar-{}", common::derived_chars(&ck, "uid", 10));
    let Some(timing) = timing else { return Vec::new() };
    let Some(entry) = entrypoint else {
        ck.err(spec.at, "spec.entrypoint", "a Workflow needs an entrypoint (its own or its WorkflowTemplate's)");
        return Vec::new();
    };
    let lahar = meta
        .annotations
        .iter()
        .filter(|(k, _)| k.starts_with("lahar.io/") && *k != "lahar.io/submit-at")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut run = Run {
        ck,
        cx,
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid,
        params,
        templates: BTreeMap::new(),
        flow: Arc::from(format!("Workflow {}/{}", meta.namespace, meta.name)),
        lahar,
        submit: timing.submit,
        stack: Vec::new(),
        steps: BTreeSet::new(),
        untimed: BTreeMap::new(),
        origin: (d.file.clone(), d.label()),
        scheduler: [Some(spec), wspec]
            .into_iter()
            .flatten()
            .find_map(|s| s.get("schedulerName").and_then(Node::scalar)),
        out: Vec::new(),
    };
    // The Workflow's own templates win over its WorkflowTemplate's.
    for (doc, s) in [(wft, wspec), (Some(d), Some(spec))] {
        let (Some(doc), Some(s)) = (doc, s) else { continue };
        if let Some(Val::Seq(ts)) = s.get("templates").map(|t| &t.val) {
            for (i, t) in ts.iter().enumerate() {
                if let Some(n) = t.get("name").and_then(Node::scalar) {
                    run.templates.insert(n, (doc, t, format!("spec.templates[{i}]")));
                }
            }
        }
    }
    let at = spec.get("entrypoint").and_then(|n| n.at).or(spec.at);
    run.expand(&entry, &BTreeMap::new(), &[], "", at, "spec.entrypoint");
    if !run.ck.ok() {
        return Vec::new();
    }
    // Container steps nothing waits for: left out, each a warning.
    for (step, (file, at, path, kind)) in std::mem::take(&mut run.untimed) {
        let what = match kind.strip_prefix("resource:") {
            Some(scheduler) => format!(
                "its `resource` template creates a batch/v1 Job whose pods schedulerName `{scheduler}` places, not Volcano"
            ),
            None => {
                format!("a `{kind}` template's pod goes to the default scheduler and runs for as long as its command")
            }
        };
        let message = format!("Workflow `{}` step `{step}`: {what}; nothing waits for it, so it is left out", run.name);
        run.cx.left_out.push(super::Diagnostic { file, at, path, message });
    }
    run.out
}

/// The kind of template an untimed step is, for messages (`resource` for a
/// resource step that creates another scheduler's Job).
fn untimed_kind(kind: &str) -> &str {
    if kind.starts_with("resource:") { "resource" } else { kind }
}

/// The scheduler of a `batch/v1` Job manifest whose pods another scheduler
/// places (`default-scheduler` when it names none); `None` for anything else
/// (a VolcanoJob, a Job of Volcano's, text that does not parse).
fn default_scheduler_job(text: &str) -> Option<String> {
    let docs = super::yaml::parse_documents(text, "").ok()?;
    let [d] = docs.as_slice() else { return None };
    let (api, kind) = common::kind_of(&d.root);
    if api != "batch/v1" || kind != "Job" {
        return None;
    }
    Some(super::apps::scheduler_of(d)).filter(|s| s != "volcano")
}

impl Run<'_, '_, '_> {
    /// Expands template `name` called with `args`, after the steps `after`
    /// complete; `prefix`: the calling steps' path. Returns the steps whose
    /// completion completes it.
    fn expand(
        &mut self,
        name: &str,
        args: &BTreeMap<String, String>,
        after: &[String],
        prefix: &str,
        at: At,
        path: &str,
    ) -> Vec<String> {
        let Some(&(doc, t, ref tp)) = self.templates.get(name) else {
            self.ck.err(at, path, format!("template `{name}` is not in the Workflow or its WorkflowTemplate"));
            return Vec::new();
        };
        let tp = tp.clone();
        if self.stack.iter().any(|s| s == name) {
            self.ck.err(at, path, format!("template `{name}` calls itself: without `when` it never ends"));
            return Vec::new();
        }
        // Inputs: the call's arguments over the template's defaults; one with
        // neither is the call's mistake.
        let mut inputs = BTreeMap::new();
        for p in t.get("inputs").and_then(|i| i.get("parameters")).map_or(&[][..], |ps| match &ps.val {
            Val::Seq(ps) => ps.as_slice(),
            _ => &[],
        }) {
            let Some(n) = p.get("name").and_then(Node::scalar) else { continue };
            match args.get(&n).cloned().or_else(|| p.get("value").and_then(Node::scalar)) {
                Some(v) => {
                    inputs.insert(n, v);
                }
                None => self.ck.err(
                    at,
                    path,
                    format!("template `{name}` needs parameter `{n}`, which the call does not give"),
                ),
            }
        }
        // A WorkflowTemplate's template: its problems are reported in its file.
        let home = enter(&mut self.ck, doc);
        if let Some(i) = t.get("inputs") {
            for (k, p) in self.ck.seq(i, "parameters", &join(&tp, "inputs")).iter().enumerate() {
                self.ck.opt_str(p, "name", &format!("{tp}.inputs.parameters[{k}]"));
            }
        }
        self.stack.push(name.to_string());
        let kinds: Vec<&str> =
            ["steps", "dag", "resource", "container", "script", "containerSet", "suspend", "data", "http", "plugin"]
                .into_iter()
                .filter(|k| t.get(k).is_some_and(|n| n.val != Val::Null))
                .collect();
        let scope = Scope { tp: &tp, inputs: &inputs, after, prefix };
        if matches!(kinds.as_slice(), ["steps" | "dag" | "resource"]) {
            for (f, what) in TEMPLATE_REFUSED {
                if let Some(n) = t.get(f).filter(|n| n.val != Val::Null) {
                    self.ck.err(n.at, &join(&tp, f), format!("lahar does not model {what}"));
                }
            }
        }
        let exits = match kinds.as_slice() {
            ["steps"] => self.steps(t, &scope),
            ["dag"] => self.dag(t, &scope),
            ["resource"] => self.resource(t, &scope, name, (at, path)),
            // A pod of the default scheduler, for as long as its command runs: left
            // out (with a warning) unless a step waits for it.
            [k @ ("container" | "script" | "containerSet")]
                if t.get("schedulerName").and_then(Node::scalar).or(self.scheduler.clone()).as_deref()
                    == Some("volcano") =>
            {
                let n = t.get(k).expect("listed");
                self.ck.err(n.at, &join(&tp, k), format!("a `{k}` step whose pod Volcano schedules (schedulerName: volcano) is not modelled: lahar cannot time its command"));
                Vec::new()
            }
            [k @ ("container" | "script" | "containerSet")] => {
                let step = unique(&mut self.steps, prefix.trim_end_matches('.'));
                let n = t.get(k).expect("listed");
                let path = format!("{}: {}", self.ck.doc, join(&tp, k));
                self.untimed.insert(step.clone(), (self.ck.file.clone(), n.at, path, k.to_string()));
                vec![format!("{UNTIMED}{step}")]
            }
            [k] => {
                let n = t.get(k).expect("listed");
                self.ck.err(n.at, &join(&tp, k), format!("a `{k}` template is not simulated (its pod goes to the default scheduler, or it runs no pod lahar can time): lahar reads steps, dag and resource templates that create VolcanoJobs"));
                Vec::new()
            }
            _ => {
                self.ck.err(t.at, &tp, "a template needs exactly one of steps, dag, resource...");
                Vec::new()
            }
        };
        self.stack.pop();
        leave(&mut self.ck, home);
        exits
    }

    /// A call's arguments, substituted in the caller's scope.
    fn arguments(&mut self, step: &Node, sp: &str, inputs: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        if let Some(a) = step.get("arguments") {
            for (k, p) in self.ck.seq(a, "parameters", &join(sp, "arguments")).iter().enumerate() {
                let pp = format!("{sp}.arguments.parameters[{k}]");
                if let (Some(n), Some(v)) = (self.ck.opt_str(p, "name", &pp), p.get("value").and_then(Node::scalar)) {
                    let at = p.get("value").and_then(|n| n.at);
                    out.insert(n, self.substitute(&v, inputs, at, &join(&pp, "value")));
                }
            }
        }
        out
    }

    /// Refuses the fields of a step or task lahar does not model.
    fn refuse_step_fields(&mut self, step: &Node, sp: &str) -> bool {
        let mut ok = true;
        for (f, what) in STEP_REFUSED {
            if let Some(n) = step.get(f).filter(|n| n.val != Val::Null) {
                self.ck.err(n.at, &join(sp, f), format!("lahar does not model {what}"));
                ok = false;
            }
        }
        ok
    }

    /// A step or task calling a template: what completes it, or `None` when it is
    /// refused (reported).
    fn call(&mut self, step: &Node, sp: &str, scope: &Scope<'_>, before: &[String]) -> Option<Vec<String>> {
        if !self.refuse_step_fields(step, sp) {
            return None;
        }
        let Some(tpl) = self.ck.opt_str(step, "template", sp) else {
            self.ck.err(step.at, &join(sp, "template"), "a step names the template it runs");
            return None;
        };
        let name = step.get("name").and_then(Node::scalar).unwrap_or_default();
        let args = self.arguments(step, sp, scope.inputs);
        let at = step.get("template").and_then(|n| n.at);
        let prefix = format!("{}{name}.", scope.prefix);
        Some(self.expand(&tpl, &args, before, &prefix, at, &join(sp, "template")))
    }

    /// A `steps` template: each group after the whole group before it.
    fn steps(&mut self, t: &Node, scope: &Scope<'_>) -> Vec<String> {
        let mut before: Vec<String> = scope.after.to_vec();
        for (g, group) in self.ck.seq(t, "steps", scope.tp).iter().enumerate() {
            let gp = format!("{}.steps[{g}]", scope.tp);
            let Val::Seq(steps) = &group.val else {
                self.ck.err(group.at, &gp, "expected a list of parallel steps");
                continue;
            };
            let mut exits = Vec::new();
            for (k, step) in steps.iter().enumerate() {
                let sp = format!("{gp}[{k}]");
                if self.ck.opt_str(step, "name", &sp).is_none() {
                    self.ck.err(step.at, &join(&sp, "name"), "a step needs a name");
                    continue;
                }
                exits.extend(self.call(step, &sp, scope, &before).unwrap_or_default());
            }
            // A group whose steps all complete at creation passes its wait on.
            if !exits.is_empty() {
                before = exits;
            }
        }
        before
    }

    /// A `dag` template: each task after the tasks it lists in `dependencies`.
    fn dag(&mut self, t: &Node, scope: &Scope<'_>) -> Vec<String> {
        let dag = t.get("dag").expect("a dag template");
        let dp = join(scope.tp, "dag");
        if let Some(n) = dag.get("target").filter(|n| n.val != Val::Null) {
            self.ck.err(n.at, &join(&dp, "target"), "a DAG target (running part of the DAG) is not modelled");
        }
        let tasks = self.ck.seq(dag, "tasks", &dp);
        let names: Vec<Option<String>> = tasks.iter().map(|t| t.get("name").and_then(Node::scalar)).collect();
        let mut depends: Vec<Vec<String>> = Vec::with_capacity(tasks.len());
        for (k, task) in tasks.iter().enumerate() {
            let sp = format!("{dp}.tasks[{k}]");
            if names[k].is_none() {
                self.ck.err(task.at, &join(&sp, "name"), "a task needs a name");
            }
            depends.push(self.ck.seq(task, "dependencies", &sp).iter().filter_map(Node::scalar).collect());
        }
        let mut exits: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut done: Vec<bool> = names.iter().map(Option::is_none).collect();
        // Tasks in dependency order; a task whose dependencies never resolve is
        // reported once no progress is made.
        let mut progress = true;
        while progress {
            progress = false;
            for (k, task) in tasks.iter().enumerate() {
                if done[k] || depends[k].iter().any(|x| !exits.contains_key(x)) {
                    continue;
                }
                done[k] = true;
                progress = true;
                let mut before: Vec<String> = if depends[k].is_empty() { scope.after.to_vec() } else { Vec::new() };
                for x in &depends[k] {
                    before.extend(exits[x].iter().cloned());
                }
                before.sort();
                before.dedup();
                let sp = format!("{dp}.tasks[{k}]");
                let e = self.call(task, &sp, scope, &before).unwrap_or_default();
                // A task done at creation passes its wait on to its dependents.
                let name = names[k].clone().expect("named tasks only");
                exits.insert(name, if e.is_empty() { before } else { e });
            }
        }
        for (k, task) in tasks.iter().enumerate().filter(|(k, _)| !done[*k]) {
            let sp = format!("{dp}.tasks[{k}].dependencies");
            let known: Vec<&str> = names.iter().flatten().map(String::as_str).collect();
            self.ck.err(
                task.get("dependencies").and_then(|n| n.at).or(task.at),
                &sp,
                format!("the dependencies name no task of this DAG or form a cycle (tasks: {})", known.join(", ")),
            );
        }
        let mut all: Vec<String> = exits.into_values().flatten().collect();
        all.sort();
        all.dedup();
        all
    }

    /// A `resource` template: the VolcanoJob it creates.
    fn resource(&mut self, t: &Node, scope: &Scope<'_>, template: &str, call: (At, &str)) -> Vec<String> {
        let r = t.get("resource").expect("a resource template");
        let rp = join(scope.tp, "resource");
        let (inputs, after, prefix) = (scope.inputs, scope.after, scope.prefix);
        // A step after a container step: the container's run time is unknown.
        if let Some(u) = after.iter().find_map(|s| s.strip_prefix(UNTIMED)) {
            let kind = self.untimed.get(u).map_or("container", |x| untimed_kind(&x.3)).to_string();
            let step = prefix.trim_end_matches('.');
            self.ck.err(call.0, call.1, format!("step `{step}` waits for step `{u}`, a `{kind}` template lahar does not simulate (its pod goes to the default scheduler and its run time is unknown)"));
            return Vec::new();
        }
        match self.ck.opt_str(r, "action", &rp).as_deref() {
            Some("create") => {}
            other => {
                let at = r.get("action").and_then(|n| n.at).or(r.at);
                let got = other.map_or("nothing".to_string(), |o| format!("`{o}`"));
                self.ck.err(
                    at,
                    &join(&rp, "action"),
                    format!("expected `create` (lahar reads resource steps that create VolcanoJobs), got {got}"),
                );
                return Vec::new();
            }
        }
        if let Some(n) = r.get("manifestFrom") {
            self.ck.err(
                n.at,
                &join(&rp, "manifestFrom"),
                "a manifest from an artifact is not modelled: give `manifest`",
            );
            return Vec::new();
        }
        let Some(m) = r.get("manifest") else {
            self.ck.err(r.at, &join(&rp, "manifest"), "a resource template needs its manifest");
            return Vec::new();
        };
        let mp = join(&rp, "manifest");
        let Some(text) = self.ck.str(m, &mp) else { return Vec::new() };
        let text = self.substitute(&text, inputs, m.at, &mp);
        let step = unique(&mut self.steps, prefix.trim_end_matches('.'));
        let waits = r.get("successCondition").is_some_and(|c| c.val != Val::Null);
        // A Kubernetes Job of the default scheduler (Argo's own examples make
        // them): Volcano never sees its pods, so the step is left out as a
        // container step is; a step that waits for its completion cannot be timed.
        if let Some(other) = default_scheduler_job(&text) {
            let path = format!("{}: {mp}", self.ck.doc);
            let kind = format!("resource:{other}");
            self.untimed.insert(step.clone(), (self.ck.file.clone(), m.at, path, kind));
            return if waits { vec![format!("{UNTIMED}{step}")] } else { Vec::new() };
        }
        // Done when the job is Completed, or at creation without a condition.
        let waits = match self.ck.opt_str(r, "successCondition", &rp) {
            None => false,
            Some(c) if is_completed(&c) => true,
            Some(c) => {
                let at = r.get("successCondition").and_then(|n| n.at);
                self.ck.err(
                    at,
                    &join(&rp, "successCondition"),
                    format!(
                        "lahar reads a step's success as its VolcanoJob's `status.state.phase = Completed`, got `{c}`"
                    ),
                );
                return Vec::new();
            }
        };
        let Some(job) = self.job(&text, m.at, &mp, &step, template) else { return Vec::new() };
        let mut job = job;
        job.spec.submit = self.submit;
        job.spec.flow = Some(Box::new(FlowStep {
            flow: Arc::clone(&self.flow),
            step: Arc::from(step.as_str()),
            targets: after.iter().map(|s| Arc::from(s.as_str())).collect(),
        }));
        self.out.push(job);
        if waits { vec![step] } else { Vec::new() }
    }

    /// The VolcanoJob of a manifest (already substituted), its problems reported
    /// at the manifest's lines.
    fn job(&mut self, text: &str, at: At, mp: &str, step: &str, template: &str) -> Option<ImportedJob> {
        let docs = match super::yaml::parse_documents(text, &self.ck.file) {
            Ok(d) => d,
            Err((a, e)) => {
                self.ck.err(shifted(a, at).or(at), mp, e);
                return None;
            }
        };
        let [inner] = docs.as_slice() else {
            self.ck.err(at, mp, format!("expected one object in the manifest, got {}", docs.len()));
            return None;
        };
        let (api, kind) = common::kind_of(&inner.root);
        if api.split('/').next() != Some("batch.volcano.sh") || kind != "Job" {
            self.ck.err(at, mp, format!("template `{template}` creates a `{kind}` ({api}): lahar reads resource steps that create VolcanoJobs (batch.volcano.sh Job)"));
            return None;
        }
        let mut root = inner.root.clone();
        shift_node(&mut root, at);
        // generateName: the API server's random suffix, derived from the step;
        // the namespace: the Workflow's; lahar's annotations: the Workflow's when
        // the manifest gives none of its own.
        let meta = entry(&mut root, "metadata");
        let has_name = meta.get("name").and_then(Node::scalar).is_some_and(|n| !n.is_empty());
        if !has_name && let Some(prefix) = meta.get("generateName").and_then(Node::scalar) {
            // Derived from the file and place reported into, and the step; a
            // WorkflowTemplate's step also from the Workflow, which Workflows sharing
            // it tell apart.
            let salt = if (&self.ck.file, &self.ck.doc) == (&self.origin.0, &self.origin.1) {
                step.to_string()
            } else {
                format!("{}\0{step}", self.flow)
            };
            let name = format!("{prefix}{}", common::derived_chars(&self.ck, &salt, 5));
            set(meta, "name", Node { at: meta.at, val: Val::Str(name) });
        }
        if meta.get("namespace").is_none() {
            let ns = self.namespace.clone();
            set(meta, "namespace", Node { at: meta.at, val: Val::Str(ns) });
        }
        let ann = entry(meta, "annotations");
        if let Some(n) = ann.get("lahar.io/submit-at") {
            self.ck.err(
                n.at,
                &format!("{mp}: metadata.annotations.lahar.io/submit-at"),
                "a Workflow creates this job: give the Workflow the time",
            );
            return None;
        }
        if let Val::Null = ann.val {
            ann.val = Val::Map(Vec::new());
        }
        if let Val::Map(m) = &mut ann.val {
            for (k, (v, a)) in &self.lahar {
                if !m.iter().any(|(x, _)| x == k) {
                    m.push((k.clone(), Node { at: *a, val: Val::Str(v.clone()) }));
                }
            }
        }
        let doc = Doc { file: self.ck.file.clone(), index: 0, item: None, root, text: self.ck.text.clone() };
        let label = format!("{}: {mp} (step `{step}`)", self.ck.doc);
        let mut ck = Ck::new(&doc, &mut *self.ck.errs);
        ck.doc = label;
        schema::check(&doc, &mut ck);
        let job = vcjob::job(&doc, self.cx, &mut ck);
        job.map(|mut j| {
            j.doc = self.ck.doc.clone();
            j
        })
    }

    /// `{{...}}` variables replaced: `inputs.parameters.*`, `workflow.parameters.*`,
    /// `workflow.name`, `workflow.namespace`, `workflow.uid`; any other is an error.
    fn substitute(&mut self, text: &str, inputs: &BTreeMap<String, String>, at: At, path: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find("{{") {
            let here = position(text, text.len() - rest.len() + i, at);
            out.push_str(&rest[..i]);
            let Some(j) = rest[i..].find("}}") else {
                out.push_str(&rest[i..]);
                return out;
            };
            let var = rest[i + 2..i + j].trim();
            let value = if let Some(p) = var.strip_prefix("inputs.parameters.") {
                inputs.get(p).cloned()
            } else if let Some(p) = var.strip_prefix("workflow.parameters.") {
                self.params.get(p).cloned()
            } else {
                match var {
                    "workflow.name" => Some(self.name.clone()),
                    "workflow.namespace" => Some(self.namespace.clone()),
                    "workflow.uid" => Some(self.uid.clone()),
                    _ => None,
                }
            };
            match value {
                Some(v) => out.push_str(&v),
                None => {
                    self.ck.err(here, path, format!("`{{{{{var}}}}}`: lahar knows the variables inputs.parameters.*, workflow.parameters.*, workflow.name, workflow.namespace and workflow.uid, and this one has no value"));
                    out.push_str(&rest[i..i + j + 2]);
                }
            }
            rest = &rest[i + j + 2..];
        }
        out.push_str(rest);
        out
    }
}

/// Reports into `d`'s file and place from now on; returns where it reported
/// before, for [`leave`] (nothing when it is there already).
fn enter(ck: &mut Ck<'_>, d: &Doc) -> Option<(String, String)> {
    let label = d.label();
    (d.file != ck.file || label != ck.doc)
        .then(|| (std::mem::replace(&mut ck.file, d.file.clone()), std::mem::replace(&mut ck.doc, label)))
}

/// Reports where it did before [`enter`].
fn leave(ck: &mut Ck<'_>, home: Option<(String, String)>) {
    if let Some((file, doc)) = home {
        (ck.file, ck.doc) = (file, doc);
    }
}

/// `status.state.phase = Completed` (or `==`), Argo's condition syntax.
fn is_completed(c: &str) -> bool {
    let c: String = c.chars().filter(|ch| !ch.is_whitespace()).collect();
    c == "status.state.phase=Completed" || c == "status.state.phase==Completed"
}

/// A step name not used yet (a template called twice from one step path).
fn unique(used: &mut BTreeSet<String>, base: &str) -> String {
    let mut name = base.to_string();
    let mut k = 1;
    while !used.insert(name.clone()) {
        k += 1;
        name = format!("{base}#{k}");
    }
    name
}

/// A position inside a manifest as a position in the file: `manifest` is where
/// the value's text starts (the first line of a block scalar, at its
/// indentation), and its lines follow one another.
fn shifted(inner: At, manifest: At) -> At {
    match (inner, manifest) {
        (Some((l, c)), Some((ml, mc))) => Some((l + ml - 1, c + mc - 1)),
        _ => None,
    }
}

/// Where byte `i` of a value's text is in the file (`at`: where the text starts).
fn position(text: &str, i: usize, at: At) -> At {
    let before = &text[..i];
    let line = before.matches('\n').count() as u64;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u64;
    at.map(|(l, c)| (l + line, c + col))
}

fn shift_node(n: &mut Node, manifest: At) {
    n.at = shifted(n.at, manifest).or(manifest);
    match &mut n.val {
        Val::Seq(s) => s.iter_mut().for_each(|x| shift_node(x, manifest)),
        Val::Map(m) => m.iter_mut().for_each(|(_, x)| shift_node(x, manifest)),
        _ => {}
    }
}

/// The map entry `k` of `n` (made a map if it is not), created null if absent.
fn entry<'n>(n: &'n mut Node, k: &str) -> &'n mut Node {
    if !matches!(n.val, Val::Map(_)) {
        n.val = Val::Map(Vec::new());
    }
    let Val::Map(m) = &mut n.val else { unreachable!("made a map above") };
    if let Some(i) = m.iter().position(|(x, _)| x == k) {
        return &mut m[i].1;
    }
    m.push((k.to_string(), Node { at: n.at, val: Val::Null }));
    &mut m.last_mut().expect("pushed").1
}

fn set(n: &mut Node, k: &str, v: Node) {
    *entry(n, k) = v;
}
