//! Helpers every kind shares: error collection with document and field path,
//! typed field access, pod templates, lahar's timing annotations, job assembly.

use super::Diagnostic;
pub(crate) use super::ck::{Ck, Meta, derived_chars, generated_name, join, kind_of, meta, parse_go_bool};
use super::yaml::{At, Node, Val};
use lahar_core::comm::runtime::{CATALOG, JobProfile, lookup};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{
    ContainerExit, InPlace, JobSpec, NetworkTopology, Policy, PolicyAction, PolicyEvent, TaskSpec,
};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::{PODS, ResourceNames, Resources};
use lahar_core::util::time::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// A PriorityClass (`scheduling.k8s.io/v1`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PriorityClass {
    /// `value`.
    pub value: i32,
    /// `globalDefault`.
    pub global_default: bool,
    /// `preemptionPolicy` (`PreemptLowerPriority` or `Never`).
    pub preemption_policy: String,
}

/// The PriorityClasses of a scenario, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PriorityClasses {
    /// By name.
    pub by_name: BTreeMap<String, PriorityClass>,
}

/// The largest value a user-defined PriorityClass may have (Kubernetes'
/// `HighestUserDefinablePriority`); larger values are for the built-in classes.
pub const HIGHEST_USER_PRIORITY: i64 = 1_000_000_000;

/// Kubernetes' built-in PriorityClasses: `system-cluster-critical` (2000000000) and
/// `system-node-critical` (2000001000). Names starting with `system-` are reserved.
pub const BUILTIN_PRIORITY_CLASSES: [(&str, i32); 2] =
    [("system-cluster-critical", 2_000_000_000), ("system-node-critical", 2_000_001_000)];

impl PriorityClasses {
    /// The built-in classes every cluster has ([`BUILTIN_PRIORITY_CLASSES`]).
    pub fn builtin() -> Self {
        let by_name = BUILTIN_PRIORITY_CLASSES
            .iter()
            .map(|&(n, value)| {
                (
                    n.to_string(),
                    PriorityClass { value, global_default: false, preemption_policy: "PreemptLowerPriority".into() },
                )
            })
            .collect();
        PriorityClasses { by_name }
    }
    /// Why a user-defined class `name` with `value` cannot be added, as (the field at
    /// fault: `name`, `value` or `globalDefault`; the message): a name already defined,
    /// a reserved `system-` name, a value above [`HIGHEST_USER_PRIORITY`], or a second
    /// global default. `None` when it can — and for a built-in class listed as
    /// Kubernetes defines it (every `kubectl get priorityclasses` lists them).
    pub fn check(&self, name: &str, value: i64, global_default: bool, policy: &str) -> Option<(&'static str, String)> {
        let builtin = BUILTIN_PRIORITY_CLASSES.iter().find(|(n, _)| *n == name);
        if let Some(&(_, v)) = builtin
            && i64::from(v) == value
            && !global_default
            && policy == "PreemptLowerPriority"
        {
            return None;
        }
        if self.by_name.contains_key(name) {
            return Some((
                "name",
                if let Some((_, v)) = builtin {
                    format!(
                        "PriorityClass `{name}` is built into Kubernetes (value {v}, preemptionPolicy PreemptLowerPriority, not the global default) and cannot be redefined"
                    )
                } else {
                    format!("PriorityClass `{name}` is defined twice")
                },
            ));
        }
        if name.starts_with("system-") {
            return Some((
                "name",
                format!("PriorityClass names starting with `system-` are reserved for Kubernetes, got `{name}`"),
            ));
        }
        if value > HIGHEST_USER_PRIORITY {
            return Some((
                "value",
                format!(
                    "a PriorityClass value must be at most {HIGHEST_USER_PRIORITY} (larger values are for the built-in system classes), got {value}"
                ),
            ));
        }
        if global_default && let Some((n, _)) = self.by_name.iter().find(|(_, c)| c.global_default) {
            return Some((
                "globalDefault",
                format!("PriorityClass `{n}` is already the global default; only one may be"),
            ));
        }
        None
    }
    /// Value of the global-default class, if one is marked.
    pub fn global_default(&self) -> Option<i32> {
        self.by_name.values().find(|c| c.global_default).map(|c| c.value)
    }
    /// Job priority for a PodGroup's `priorityClassName`: its value; absent or
    /// unknown → the global default, else 0 (Volcano's scheduler).
    pub fn job_priority(&self, class: Option<&str>) -> i32 {
        class.and_then(|c| self.by_name.get(c)).map(|c| c.value).or(self.global_default()).unwrap_or(0)
    }
}

/// What a conversion needs from the rest of the scenario.
pub struct Context<'a> {
    /// Queues by name.
    pub queues: &'a BTreeMap<String, QueueId>,
    /// Nodes by name (for pods already running).
    pub nodes: &'a BTreeMap<String, NodeId>,
    /// The nodes, by id (a running pod's vGPU cards are its node's).
    pub node_list: &'a [lahar_core::model::cluster::Node],
    /// Resource names (extended resources get registered as they appear).
    pub names: &'a mut ResourceNames,
    /// PriorityClasses by name.
    pub priority_classes: &'a PriorityClasses,
    /// `spec.defaults.duration`: the run time of objects without `lahar.io/duration`.
    pub default_duration: Option<SimDuration>,
    /// `spec.startTime`: the cluster clock at t = 0, Unix seconds (UTC), from
    /// which recurring objects' schedules are read.
    pub clock_start: i64,
    /// `spec.horizon`: recurring objects' runs are those due by then.
    pub horizon: Option<SimTime>,
    /// The cluster's HyperNode tiers by `tierName`, which `highestTierName` names.
    pub tiers: &'a BTreeMap<String, u32>,
    /// Parts of objects left out, each with where and why (an Argo container
    /// step nothing waits for): reported as warnings.
    pub left_out: Vec<Diagnostic>,
    /// The chip types of Volcano's vNPU sharing, when the conf models it: pods
    /// asking for them get a vNPU ask, and the types' memory and core
    /// resources leave the resource check.
    pub vnpu: Option<&'a lahar_core::devices::vnpu::VnpuConfig>,
    /// The ModelServings' template roles, for the AutoscalingPolicies that
    /// scale them (`disaggregatedTarget`).
    pub serving_roles: Vec<lahar_core::serving::kthena_roles::ServingTemplate>,
}

/// A job read from a manifest.
#[derive(Clone, Debug)]
pub struct ImportedJob {
    /// The job.
    pub spec: JobSpec,
    /// Its model profile (`lahar.io/model`, with `lahar.io/iterations` if given).
    pub profile: Option<JobProfile>,
    /// File it came from.
    pub file: String,
    /// Where in the file: `document N` (`: items[K]` inside a List).
    pub doc: String,
    /// Where the object starts.
    pub at: At,
}

/// The annotation naming the queue of a pod's PodGroup where no other field does
/// (a Pod without a PodGroup, an apps/v1 workload's pods, older training-operator
/// jobs).
pub(crate) const QUEUE_NAME_ANNOTATION: &str = "scheduling.volcano.sh/queue-name";

/// A PodGroup's `volcano.sh/preemptable`, from the annotations of the object its
/// PodGroup takes them from (else its labels), read as Go's `strconv.ParseBool`
/// reads it; `None` when neither is set. Volcano logs a value it cannot parse and
/// takes it as false; lahar refuses it.
pub(crate) fn group_preemptable(
    ck: &mut Ck<'_>,
    labels: &BTreeMap<String, (String, At)>,
    annotations: &BTreeMap<String, (String, At)>,
    path: &str,
) -> Option<bool> {
    const KEY: &str = "volcano.sh/preemptable";
    let (field, (value, at)) = match (annotations.get(KEY), labels.get(KEY)) {
        (Some(a), _) => ("annotations", a),
        (None, Some(l)) => ("labels", l),
        (None, None) => return None,
    };
    match parse_go_bool(value) {
        Some(b) => Some(b),
        None => {
            let other = value.as_str();
            ck.err(
                *at,
                &join(path, &format!("metadata.{field}.{KEY}")),
                format!("expected true or false, got `{other}`"),
            );
            None
        }
    }
}

/// tdm's revocable zone of a pod (Volcano's `GetPodRevocableZone`, annotations
/// only): `volcano.sh/revocable-zone: "*"`, else `volcano.sh/preemptable` true.
/// Volcano reads any other zone value as none; lahar refuses it.
fn revocable(ck: &mut Ck<'_>, annotations: &BTreeMap<String, (String, At)>, path: &str) -> bool {
    const KEY: &str = "volcano.sh/revocable-zone";
    match annotations.get(KEY) {
        Some((v, _)) if v == "*" => true,
        Some((v, at)) => {
            let p = join(path, &format!("metadata.annotations.{KEY}"));
            ck.err(*at, &p, format!("expected `*` (Volcano reads no other zone value), got `{v}`"));
            false
        }
        None => annotations.get("volcano.sh/preemptable").is_some_and(|(v, _)| parse_go_bool(v) == Some(true)),
    }
}

/// A PodGroup's disruption budget for tdm (`volcano.sh/jdb-min-available`, else
/// `volcano.sh/jdb-max-unavailable`: a count or `N%`), from the annotations its
/// PodGroup takes. Volcano reads any other value as 0; lahar refuses it.
/// The PodGroup's sla waiting time: `volcano.sh/sla-waiting-time`, else
/// `sla-waiting-time` (`JobInfo.extractWaitingTime`), a Go duration above 0.
/// Volcano logs and ignores a bad one; lahar refuses it at its place.
pub(crate) fn group_sla_waiting(
    ck: &mut Ck<'_>,
    annotations: &BTreeMap<String, (String, At)>,
    path: &str,
) -> Option<SimDuration> {
    let key = ["volcano.sh/sla-waiting-time", "sla-waiting-time"].into_iter().find(|k| annotations.contains_key(*k))?;
    let (value, at) = &annotations[key];
    match lahar_core::util::time::parse_go_duration(value).filter(|&us| us > 0) {
        Some(us) => Some(SimDuration(us)),
        None => {
            ck.err(
                *at,
                &join(path, &format!("metadata.annotations.{key}")),
                format!("expected a Go duration above 0 (`30m`, `1h30m`), got `{value}`"),
            );
            None
        }
    }
}

pub(crate) fn group_disruption(
    ck: &mut Ck<'_>,
    annotations: &BTreeMap<String, (String, At)>,
    path: &str,
) -> Option<lahar_core::model::budget::BudgetRule> {
    use lahar_core::model::budget::{BudgetRule, IntOrPercent};
    let (key, rule): (&str, fn(IntOrPercent) -> BudgetRule) =
        if annotations.contains_key("volcano.sh/jdb-min-available") {
            ("volcano.sh/jdb-min-available", BudgetRule::MinAvailable)
        } else if annotations.contains_key("volcano.sh/jdb-max-unavailable") {
            ("volcano.sh/jdb-max-unavailable", BudgetRule::MaxUnavailable)
        } else {
            return None;
        };
    let (v, at) = &annotations[key];
    let n = match v.strip_suffix('%') {
        Some(p) => p.parse::<u32>().ok().filter(|&p| p <= 100).map(IntOrPercent::Percent),
        None => v.parse::<u32>().ok().map(IntOrPercent::Int),
    };
    if n.is_none() {
        ck.err(
            *at,
            &join(path, &format!("metadata.annotations.{key}")),
            format!("expected a count or a percentage such as `30%`, got `{v}`"),
        );
    }
    n.map(rule)
}

/// What the scheduler sees of a pod template (or a Pod).
#[derive(Clone, Debug)]
pub(crate) struct PodShape {
    pub requests: Resources,
    /// The containers' `requests` as written (no limit standing in, no init
    /// container): what a controller that sums its template's requests reads
    /// (kthena's PodGroup `minResources`).
    pub written: Resources,
    pub node_selector: Vec<(String, String)>,
    /// Required node affinity `In` terms ([`TaskSpec::node_label_in`]).
    pub node_label_in: Vec<(String, Vec<String>)>,
    pub priority: i32,
    pub preemptable: bool,
    /// `preemptionPolicy: Never` (the pod's, else its PriorityClass's).
    pub never_preempts: bool,
    /// `spec.tolerations`.
    pub tolerations: Vec<lahar_core::model::job::Toleration>,
    /// What the labels and annotations tell Volcano's plugins.
    pub hints: Option<std::sync::Arc<lahar_core::model::job::PodHints>>,
    pub scheduler_name: Option<String>,
    pub labels: BTreeMap<String, (String, At)>,
    pub annotations: BTreeMap<String, (String, At)>,
    /// `spec.terminationGracePeriodSeconds` (a job keeps the longest of its
    /// pods', [`JobHead::grace`]).
    pub grace: Option<SimDuration>,
}

/// The placement fields of the spec of a pod lahar is to place (a template, or
/// a Pod not yet on a node), `spec` at `sp`: a required node affinity of one
/// `nodeSelectorTerms` entry whose `matchExpressions` are all `In` is returned as
/// [`TaskSpec::node_label_in`] terms (Kubernetes' NodeAffinity filter, as
/// Volcano's predicates run it). Every other field that changes where a pod may
/// run and that lahar does not model is refused at its place: other node
/// affinity forms (several terms, other operators, `matchFields`, preferences),
/// inter-pod affinity and anti-affinity where the reader does not read them
/// (`pod_terms`: false), topology spread, and a template's
/// `nodeName` (its pods would bypass the scheduler). A run that placed such
/// pods as if the field were absent would answer another question than the
/// user's.
pub(crate) fn placement_fields(
    ck: &mut Ck<'_>,
    spec: &Node,
    sp: &str,
    template: bool,
    pod_terms: bool,
) -> Vec<(String, Vec<String>)> {
    let why = "lahar does not model it (docs/volcano.md § Job controller over time): remove it to simulate the pod without it";
    // Unknown keys and types are the schema's errors (schema.rs): only what the
    // schema allows and lahar does not model is refused here.
    let label_in = match spec.get("affinity") {
        Some(aff) => {
            let ap = join(sp, "affinity");
            for (key, kind) in [("podAffinity", "affinity"), ("podAntiAffinity", "anti-affinity")] {
                if let Some(n) = aff.get(key).filter(|n| present(n) && !pod_terms) {
                    let msg = format!("inter-pod {kind} changes where the pod may run, and {why}");
                    ck.err(n.at, &join(&ap, key), msg);
                }
            }
            aff.get("nodeAffinity").map(|n| node_affinity(ck, n, &join(&ap, "nodeAffinity"), why)).unwrap_or_default()
        }
        None => Vec::new(),
    };
    if let Some(n) = spec.get("topologySpreadConstraints").filter(|n| present(n)) {
        let key = "topologySpreadConstraints";
        ck.err(n.at, &join(sp, key), format!("`{key}` changes where the pod may run, and {why}"));
    }
    if let Some(n) = spec.get("resourceClaims").filter(|n| present(n)) {
        let msg = format!("dynamic resource claims change where the pod may run, and {why}");
        ck.err(n.at, &join(sp, "resourceClaims"), msg);
    }
    if template && let Some(n) = spec.get("nodeName").filter(|n| present(n)) {
        let msg = "a template's `nodeName` binds every pod to one node without the scheduler (the kubelet admits it), and lahar does not model that; give running pods as Pods with `nodeName` and `status.phase: Running` instead";
        ck.err(n.at, &join(sp, "nodeName"), msg);
    }
    label_in
}

/// True if a field is given and not empty (`null`, `[]` and `{}` say nothing).
fn present(n: &Node) -> bool {
    match &n.val {
        Val::Null => false,
        Val::Seq(s) => !s.is_empty(),
        Val::Map(m) => !m.is_empty(),
        _ => true,
    }
}

/// `affinity.nodeAffinity` at `path` (see [`placement_fields`]): the `In`
/// expressions of its one required term.
fn node_affinity(ck: &mut Ck<'_>, n: &Node, path: &str, why: &str) -> Vec<(String, Vec<String>)> {
    const PREFERRED: &str = "preferredDuringSchedulingIgnoredDuringExecution";
    const REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";
    if let Some(p) = n.get(PREFERRED).filter(|p| present(p)) {
        ck.err(p.at, &join(path, PREFERRED), format!("a preferred node affinity changes node scores, and {why}"));
    }
    let Some(req) = n.get(REQUIRED) else { return Vec::new() };
    let rp = join(path, REQUIRED);
    let terms = ck.seq(req, "nodeSelectorTerms", &rp);
    let tp = join(&rp, "nodeSelectorTerms");
    if terms.len() > 1 {
        let at = req.get("nodeSelectorTerms").and_then(|t| t.at);
        ck.err(at, &tp, format!("{} terms (any one may match) and {why}; lahar reads one term", terms.len()));
        return Vec::new();
    }
    let Some(term) = terms.first() else { return Vec::new() };
    let t0 = format!("{tp}[0]");
    if let Some(f) = term.get("matchFields").filter(|f| present(f)) {
        ck.err(f.at, &join(&t0, "matchFields"), format!("`matchFields` selects nodes by their fields, and {why}"));
    }
    let mut out = Vec::new();
    let ep = join(&t0, "matchExpressions");
    for (i, e) in ck.seq(term, "matchExpressions", &t0).iter().enumerate() {
        let xp = format!("{ep}[{i}]");
        let key = ck.opt_str(e, "key", &xp).unwrap_or_default();
        let op = ck.opt_str(e, "operator", &xp).unwrap_or_default();
        let values: Vec<String> = ck.seq(e, "values", &xp).iter().filter_map(Node::scalar).collect();
        if op != "In" {
            let at = e.get("operator").and_then(|o| o.at).or(e.at);
            ck.err(at, &join(&xp, "operator"), format!("operator `{op}`: lahar models `In` only, and {why}"));
        } else if key.is_empty() || values.is_empty() {
            ck.err(e.at, &xp, "an `In` expression needs a key and at least one value");
        } else {
            out.push((key, values));
        }
    }
    out
}

/// A pod's `restartPolicy` values.
pub(crate) const RESTART_POLICIES: [&str; 3] = ["Always", "OnFailure", "Never"];

/// The pod template at `path` of a controller whose pods restart `Always` (a
/// Deployment's, ReplicaSet's or StatefulSet's: the API server's
/// `ValidatePodTemplateSpecForReplicaSet` and its siblings) leaves
/// `restartPolicy` out or says `Always`; `whose` names the pods ("a
/// StatefulSet's"), `rejected` what Kubernetes rejects. A value outside the
/// enum is [`pod_shape`]'s error.
pub(crate) fn restarts_always(ck: &mut Ck<'_>, tpl: &Node, path: &str, whose: &str, rejected: &str) {
    let Some(node) = tpl.get("spec").and_then(|s| s.get("restartPolicy")) else { return };
    if let Some(p) = node.scalar().filter(|p| p != "Always" && RESTART_POLICIES.contains(&p.as_str())) {
        let msg = format!("{whose} pods restart `Always`, got `{p}` (Kubernetes rejects {rejected})");
        ck.err(node.at, &join(&join(path, "spec"), "restartPolicy"), msg);
    }
}

/// Reads a pod template (`{metadata, spec}`) or a Pod object at `path`.
/// Requests: the sum over containers, each resource's limit standing in for a
/// missing request (as Kubernetes defaults it); init containers raise a dimension
/// to their own largest request. Priority: `spec.priority`, else the value of
/// `spec.priorityClassName` (which must exist), else the global default class, else
/// Volcano's task default 1; the `volcano.sh/task-priority` annotation overrides.
pub(crate) fn pod_shape(ck: &mut Ck<'_>, cx: &mut super::Context<'_>, tpl: &Node, path: &str) -> PodShape {
    let meta = meta(ck, tpl, path, false);
    let empty = Node { at: tpl.at, val: Val::Null };
    let spec = tpl.get("spec").unwrap_or(&empty);
    let sp = join(path, "spec");
    ck.unmodelled(spec, "activeDeadlineSeconds", &sp, "fails the pod once it has run that long", "pod");
    // The API server's enum (`validateRestartPolicy`); which of them a kind
    // allows its reader checks.
    if let Some(p) = ck.opt_str(spec, "restartPolicy", &sp).filter(|p| !RESTART_POLICIES.contains(&p.as_str())) {
        let at = spec.get("restartPolicy").and_then(|n| n.at);
        ck.err(at, &join(&sp, "restartPolicy"), format!("expected `Always`, `OnFailure` or `Never`, got `{p}`"));
    }
    // A Pod object (empty path) is checked by its reader, which knows whether
    // it is already on a node.
    let node_label_in = if path.is_empty() { Vec::new() } else { placement_fields(ck, spec, &sp, true, true) };
    let mut requests = Resources::ZERO;
    let containers = ck.seq(spec, "containers", &sp);
    if containers.is_empty() {
        ck.err(spec.at, &join(&sp, "containers"), "a pod needs at least one container");
    }
    // Under vNPU sharing the chip types' memory and core resources are no
    // resources of the node: Volcano leaves them out of its resource check.
    let ignored = cx.vnpu.map(super::vnpu::ignored).unwrap_or_default();
    // A container's requests, each missing one its limit (as the API server
    // defaults a pod), and the requests as written alone.
    let container_requests = |ck: &mut Ck<'_>, names: &mut ResourceNames, c: &Node, cp: &str| {
        let (mut r, mut written) = (Resources::ZERO, Resources::ZERO);
        let empty = Node { at: c.at, val: Val::Null };
        let res = c.get("resources").unwrap_or(&empty);
        let rp = join(cp, "resources");
        let keep = |k: &str, _: &Node| !ignored.iter().any(|i| i == k);
        for (d, x, _) in ck.resources_where(res, "limits", &rp, names, keep) {
            r.set(d, x);
        }
        for (d, x, _) in ck.resources_where(res, "requests", &rp, names, keep) {
            r.set(d, x);
            written.set(d, x);
        }
        (r, written)
    };
    let mut written = Resources::ZERO;
    for (i, c) in containers.iter().enumerate() {
        let (r, w) = container_requests(ck, cx.names, c, &format!("{sp}.containers[{i}]"));
        requests += r;
        written += w;
    }
    for (i, c) in ck.seq(spec, "initContainers", &sp).iter().enumerate() {
        let (r, _) = container_requests(ck, cx.names, c, &format!("{sp}.initContainers[{i}]"));
        requests = requests.max(&r);
    }
    // The pod's overhead (its RuntimeClass's) comes on top, as Volcano's
    // `amendResourceAccordingToPodFeatures` adds it (api/pod_info.go).
    for (d, x, _) in ck.resources_where(spec, "overhead", &sp, cx.names, |_, _| true) {
        requests.set(d, requests.get(d) + x);
    }
    let vnpu = cx.vnpu.and_then(|c| super::vnpu::pod_ask(ck, containers, &sp, &meta.annotations, path, c));
    if requests.get(PODS) != 0 {
        ck.err(spec.at, &sp, "containers must not request `pods`; every pod takes one pod slot");
    }
    requests.set(PODS, 1);
    let node_selector: Vec<(String, String)> =
        ck.string_map(spec, "nodeSelector", &sp).into_iter().map(|(k, (v, _))| (k, v)).collect();
    let class_name = ck.opt_str(spec, "priorityClassName", &sp);
    let mut priority = match (ck.opt_int(spec, "priority", &sp, i64::from(i32::MIN)), &class_name) {
        (Some(p), _) => p as i32,
        (None, Some(c)) => match cx.priority_classes.by_name.get(c) {
            Some(pc) => pc.value,
            None => {
                let at = spec.get("priorityClassName").and_then(|n| n.at);
                ck.err(at, &join(&sp, "priorityClassName"), format!(
                    "PriorityClass `{c}` does not exist; add a scheduling.k8s.io/v1 PriorityClass to the manifests (Kubernetes rejects such pods)"
                ));
                1
            }
        },
        (None, None) => cx.priority_classes.global_default().unwrap_or(1),
    };
    if let Some((p, at)) = meta.annotations.get("volcano.sh/task-priority") {
        match p.parse::<i32>() {
            Ok(x) => priority = x,
            Err(_) => ck.err(
                *at,
                &format!("{path}.metadata.annotations.volcano.sh/task-priority"),
                format!("expected an integer, got `{p}`"),
            ),
        }
    }
    // The pod's own preemptionPolicy, else its class's (else the global default
    // class's), as Kubernetes' admission sets it.
    let never_preempts = match ck.opt_str(spec, "preemptionPolicy", &sp) {
        Some(p) if p == "Never" => true,
        Some(p) if p == "PreemptLowerPriority" => false,
        Some(p) => {
            let at = spec.get("preemptionPolicy").and_then(|n| n.at);
            ck.err(
                at,
                &join(&sp, "preemptionPolicy"),
                format!("expected `PreemptLowerPriority` or `Never`, got `{p}`"),
            );
            false
        }
        None => {
            let classes = &cx.priority_classes.by_name;
            let class = match &class_name {
                Some(c) => classes.get(c),
                None => classes.values().find(|c| c.global_default),
            };
            class.is_some_and(|c| c.preemption_policy == "Never")
        }
    };
    // Annotation first, then label (`GetPodPreemptable`), read as Go's
    // `strconv.ParseBool` reads it (`True`, `1`, `t`...); anything else means
    // "not preemptable".
    let preemptable = meta
        .annotations
        .get("volcano.sh/preemptable")
        .or(meta.labels.get("volcano.sh/preemptable"))
        .map(|(s, _)| parse_go_bool(s).unwrap_or(false))
        .unwrap_or(true);
    let grace = ck.opt_secs(spec, "terminationGracePeriodSeconds", &sp);
    PodShape {
        grace,
        requests,
        written,
        node_selector,
        node_label_in,
        priority,
        preemptable,
        never_preempts,
        tolerations: tolerations(ck, spec, &sp),
        hints: lahar_core::model::job::PodHints {
            host_ports: host_ports(ck, spec, &sp),
            affinity: super::affinity::pod_affinity(ck, spec, &sp),
            scheduling_gates: scheduling_gates(ck, spec, &sp),
            scoring: scoring(ck, cx.names, &meta.annotations, path),
            cooldown: cooldown(ck, &meta.labels, &meta.annotations, path),
            labels: Some(meta.labels.iter().map(|(k, (v, _))| (k.clone(), v.clone())).collect()),
            revocable: revocable(ck, &meta.annotations, path),
            vgpu: vgpu_ask(ck, containers, &sp, &meta.annotations, path),
            vnpu,
            numa: super::numa::pod_ask(
                ck,
                spec,
                &meta.annotations,
                path,
                tpl.get("status").and_then(|s| s.get("qosClass")).and_then(Node::scalar),
            ),
        }
        .shared(),
        scheduler_name: ck.opt_str(spec, "schedulerName", &sp),
        labels: meta.labels,
        annotations: meta.annotations,
    }
}

/// `spec.schedulingGates` of a pod spec at `sp`: the gates' names, checked as
/// the API server validates them (`validateSchedulingGates`: qualified names,
/// none twice), at most [`lahar_core::model::job::MAX_SCHEDULING_GATES`].
fn scheduling_gates(ck: &mut Ck<'_>, spec: &Node, sp: &str) -> Vec<String> {
    let path = join(sp, "schedulingGates");
    let mut out: Vec<String> = Vec::new();
    let gates = ck.seq(spec, "schedulingGates", sp);
    let max = lahar_core::model::job::MAX_SCHEDULING_GATES;
    if gates.len() > max {
        let at = spec.get("schedulingGates").and_then(|n| n.at);
        ck.err(at, &path, format!("{} scheduling gates; lahar reads at most {max} per pod", gates.len()));
        return out;
    }
    for (i, g) in gates.iter().enumerate() {
        let gp = format!("{path}[{i}]");
        let Some(name) = ck.opt_str(g, "name", &gp) else {
            ck.err(g.at, &join(&gp, "name"), "a scheduling gate needs a `name`");
            continue;
        };
        let at = g.get("name").and_then(|n| n.at);
        if let Some(why) = lahar_core::util::text::qualified_name_problem(&name) {
            ck.err(at, &join(&gp, "name"), why);
        } else if out.contains(&name) {
            ck.err(
                at,
                &join(&gp, "name"),
                format!("scheduling gate `{name}` is given twice (Kubernetes refuses duplicates)"),
            );
        } else {
            out.push(name);
        }
    }
    out
}

/// The host ports of a pod spec at `sp` (Kubernetes' NodePorts reads the
/// `containers`' ports, not the init containers'): each `ports[]` entry with a
/// `hostPort`, or, under `hostNetwork: true`, every entry (its `hostPort`
/// defaults to its `containerPort`, as the API server sets it). Checked as the
/// API server validates them: ports 1–65535, protocol `TCP` (the default),
/// `UDP` or `SCTP`, `hostIP` an IP address (`0.0.0.0`, every address, when not
/// given), no (protocol, address, port) twice in one pod, and under
/// `hostNetwork` the host port equal to the container port.
fn host_ports(ck: &mut Ck<'_>, spec: &Node, sp: &str) -> Vec<lahar_core::model::job::HostPort> {
    use lahar_core::model::job::HostPort;
    let host_network = ck.opt_bool(spec, "hostNetwork", sp).unwrap_or(false);
    let containers = match spec.get("containers").map(|n| &n.val) {
        Some(Val::Seq(cs)) => cs.as_slice(),
        _ => &[],
    };
    let mut out: Vec<HostPort> = Vec::new();
    for (i, c) in containers.iter().enumerate() {
        let cp = format!("{sp}.containers[{i}]");
        for (k, port) in ck.seq(c, "ports", &cp).iter().enumerate() {
            let pp = format!("{cp}.ports[{k}]");
            let container_port = ck.opt_int(port, "containerPort", &pp, 1);
            let host = ck.opt_int(port, "hostPort", &pp, 0).filter(|&h| h > 0);
            let at = |key: &str| port.get(key).and_then(|n| n.at).or(port.at);
            let host = match (host, host_network) {
                (Some(h), true) if container_port.is_some_and(|c| c != h) => {
                    let msg = format!(
                        "must match `containerPort` ({}) when `hostNetwork` is true (Kubernetes rejects the pod)",
                        container_port.unwrap_or_default()
                    );
                    ck.err(at("hostPort"), &join(&pp, "hostPort"), msg);
                    continue;
                }
                (Some(h), _) => h,
                (None, true) => match container_port {
                    Some(c) => c,
                    None => continue,
                },
                (None, false) => continue,
            };
            for (key, n) in [("hostPort", Some(host)), ("containerPort", container_port)] {
                if let Some(n) = n.filter(|&n| n > 65535) {
                    ck.err(at(key), &join(&pp, key), format!("expected a port number from 1 to 65535, got {n}"));
                }
            }
            let protocol = ck.opt_str(port, "protocol", &pp).unwrap_or_else(|| "TCP".into());
            if !["TCP", "UDP", "SCTP"].contains(&protocol.as_str()) {
                let msg = format!("expected `TCP`, `UDP` or `SCTP`, got `{protocol}`");
                ck.err(at("protocol"), &join(&pp, "protocol"), msg);
            }
            let ip = ck.opt_str(port, "hostIP", &pp).filter(|ip| !ip.is_empty());
            if let Some(ip) = ip.as_deref().filter(|ip| ip.parse::<std::net::IpAddr>().is_err()) {
                let msg = format!("expected an IP address such as `10.0.0.1` or `::1`, got `{ip}`");
                ck.err(at("hostIP"), &join(&pp, "hostIP"), msg);
            }
            let hp = HostPort {
                protocol: protocol.into(),
                ip: ip.as_deref().unwrap_or(HostPort::ANY_IP).into(),
                port: u16::try_from(host).unwrap_or(0),
            };
            if out.contains(&hp) {
                let msg = format!(
                    "host port {}/{} on {} is given twice in the pod; each must be unique (Kubernetes rejects the pod)",
                    hp.port, hp.protocol, hp.ip
                );
                ck.err(at("hostPort"), &join(&pp, "hostPort"), msg);
                continue;
            }
            out.push(hp);
        }
    }
    out
}

/// What a pod asks of Volcano's vGPU cards: each container whose limits name
/// `volcano.sh/vgpu-number` or `volcano.sh/vgpu-memory` (Volcano's
/// `ExtractResourceRequest`: memory without a count is one card; the memory and
/// cores limits, else requests, per card; no memory is all of each card's), and
/// the annotations that choose cards. Counts must be whole; `volcano.sh/vgpu-mode`
/// must be `hami-core` or `mig` and `volcano.sh/vgpu-podgroup-policy` `spread`,
/// the only value Volcano reads.
fn vgpu_ask(
    ck: &mut Ck<'_>,
    containers: &[Node],
    sp: &str,
    annotations: &BTreeMap<String, (String, At)>,
    path: &str,
) -> Option<Box<lahar_core::devices::vgpu::VgpuAsk>> {
    use lahar_core::devices::vgpu::{
        ContainerAsk, VGPU_CORES, VGPU_MEMORY, VGPU_MEMORY_PERCENTAGE, VGPU_NUMBER, VgpuAsk, uuid_list,
    };
    let mut ask = VgpuAsk::default();
    for (i, c) in containers.iter().enumerate() {
        let res = c.get("resources");
        let whole = |ck: &mut Ck<'_>, part: &str, name: &str| -> Option<i64> {
            let n = res?.get(part)?.get(name)?;
            let q = n.scalar()?;
            match lahar_core::util::quantity::parse_quantity(&q, 1000) {
                Ok(x) if x >= 0 && x % 1000 == 0 => Some(x / 1000),
                // Negative or unparsable quantities are the resource reader's errors.
                Ok(x) if x >= 0 => {
                    ck.err(
                        n.at,
                        &format!("{sp}.containers[{i}].resources.{part}.{name}"),
                        format!("expected a whole number, got `{q}`"),
                    );
                    None
                }
                _ => None,
            }
        };
        let nums = whole(ck, "limits", VGPU_NUMBER);
        // Kubernetes requires an extended resource's request to equal its limit.
        for name in [VGPU_NUMBER, VGPU_MEMORY, VGPU_CORES, VGPU_MEMORY_PERCENTAGE] {
            if let (Some(l), Some(r)) = (whole(ck, "limits", name), whole(ck, "requests", name))
                && l != r
            {
                let at = res.and_then(|r| r.get("requests")).and_then(|m| m.get(name)).and_then(|n| n.at);
                ck.err(
                    at,
                    &format!("{sp}.containers[{i}].resources.requests.{name}"),
                    format!("must equal its limit ({l}), as Kubernetes requires of extended resources; got {r}"),
                );
            }
        }
        let limit_mem = whole(ck, "limits", VGPU_MEMORY);
        let memory = limit_mem.or_else(|| whole(ck, "requests", VGPU_MEMORY));
        let cores = whole(ck, "limits", VGPU_CORES).or_else(|| whole(ck, "requests", VGPU_CORES));
        if nums.is_none() && limit_mem.is_none() {
            continue;
        }
        let percent =
            whole(ck, "limits", VGPU_MEMORY_PERCENTAGE).or_else(|| whole(ck, "requests", VGPU_MEMORY_PERCENTAGE));
        if let Some(c) = ContainerAsk::of(nums, memory, cores) {
            ask.containers.push(c.with_percent(percent));
        }
    }
    if ask.containers.is_empty() {
        return None;
    }
    let text = |key: &str| annotations.get(key).map(|(v, at)| (v.clone(), *at));
    let apath = |key: &str| {
        format!("{}metadata.annotations.{key}", if path.is_empty() { String::new() } else { format!("{path}.") })
    };
    if let Some((m, at)) = text("volcano.sh/vgpu-mode") {
        if m != lahar_core::devices::vgpu::HAMI_CORE && m != lahar_core::devices::vgpu::MIG {
            ck.err(at, &apath("volcano.sh/vgpu-mode"), format!("expected `hami-core` or `mig`, got `{m}`"));
        }
        ask.mode = Some(m);
    }
    if let Some((p, at)) = text("volcano.sh/vgpu-podgroup-policy") {
        if p != "spread" {
            ck.err(
                at,
                &apath("volcano.sh/vgpu-podgroup-policy"),
                format!("expected `spread` (the only value Volcano reads), got `{p}`"),
            );
        }
        ask.spread = p == "spread";
    }
    ask.use_types = text("nvidia.com/use-gputype").map(|x| x.0);
    ask.nouse_types = text("nvidia.com/nouse-gputype").map(|x| x.0);
    let (allow, deny) = (
        text("volcano.sh/vgpu-use-gpuuuid").map(|x| x.0).unwrap_or_default(),
        text("volcano.sh/vgpu-nouse-gpuuuid").map(|x| x.0).unwrap_or_default(),
    );
    ask.use_uuids = uuid_list(&allow);
    ask.nouse_uuids = uuid_list(&deny);
    ask.uuid_text = (allow, deny);
    Some(Box::new(ask))
}

/// resource-strategy-fit's pod-level scoring: the
/// `volcano.sh/resource-strategy-scoring-type` annotation (`MostAllocated` or
/// `LeastAllocated`) with the JSON weights of `volcano.sh/resource-strategy-weight`
/// (`{"nvidia.com/gpu": 2}`). Volcano scores such a pod 0 on every node when the
/// weights are missing or not JSON, and ignores weights without a type: lahar
/// refuses all three, with the annotation's place.
fn scoring(
    ck: &mut Ck<'_>,
    names: &ResourceNames,
    ann: &BTreeMap<String, (String, At)>,
    path: &str,
) -> Option<lahar_core::model::job::TaskScoring> {
    const TYPE: &str = "volcano.sh/resource-strategy-scoring-type";
    const WEIGHT: &str = "volcano.sh/resource-strategy-weight";
    let ap = |k: &str| format!("{}.{k}", join(path, "metadata.annotations"));
    let kind = ann.get(TYPE).filter(|(t, _)| !t.is_empty());
    let weights = ann.get(WEIGHT).filter(|(w, _)| !w.is_empty());
    let Some((kind, at)) = kind else {
        if let Some((_, at)) = weights {
            ck.err(*at, &ap(WEIGHT), format!("is read only with the {TYPE} annotation, which this pod does not have"));
        }
        return None;
    };
    let most = match kind.as_str() {
        "MostAllocated" => true,
        "LeastAllocated" => false,
        other => {
            ck.err(*at, &ap(TYPE), format!("expected MostAllocated or LeastAllocated, got `{other}`"));
            return None;
        }
    };
    let Some((text, wat)) = weights else {
        ck.err(
            *at,
            &ap(TYPE),
            format!("needs the {WEIGHT} annotation (JSON resource → weight); Volcano scores the pod 0 without it"),
        );
        return None;
    };
    match serde_json::from_str::<BTreeMap<String, i64>>(text) {
        Ok(m) => Some(lahar_core::model::job::TaskScoring {
            most_allocated: most,
            // A resource no pod requests so far is not one this pod requests: it
            // would never be scored.
            weights: m.iter().filter_map(|(n, w)| names.dim(n).map(|d| (d, *w))).collect(),
        }),
        Err(e) => {
            ck.err(*wat, &ap(WEIGHT), format!("expected a JSON object of resource → integer weight ({e})"));
            None
        }
    }
}

/// cdp's `volcano.sh/cooldown-time`, a pod label (read first) or annotation: a Go
/// duration. Volcano reads a bad one as no cooldown; lahar refuses it.
fn cooldown(
    ck: &mut Ck<'_>,
    labels: &BTreeMap<String, (String, At)>,
    ann: &BTreeMap<String, (String, At)>,
    path: &str,
) -> Option<lahar_core::util::time::SimDuration> {
    const KEY: &str = "volcano.sh/cooldown-time";
    let (where_, (text, at)) = match (labels.get(KEY), ann.get(KEY)) {
        (Some(l), _) => ("labels", l),
        (None, Some(a)) => ("annotations", a),
        (None, None) => return None,
    };
    match lahar_core::util::time::parse_go_duration(text) {
        Some(us) => Some(lahar_core::util::time::SimDuration(us)),
        None => {
            let p = format!("{}.{KEY}", join(path, &format!("metadata.{where_}")));
            ck.err(
                *at,
                &p,
                format!("expected a Go duration such as 600s or 10m, got `{text}` (Volcano reads it as no cooldown)"),
            );
            None
        }
    }
}

/// `spec.tolerations[]`: `key`, `operator` (`Equal`, the default, or `Exists`),
/// `value`, `effect` (empty: every effect). `tolerationSeconds` (how long a pod
/// stays on a node tainted `NoExecute` after the fact) does not matter to placement.
pub(crate) fn tolerations(ck: &mut Ck<'_>, spec: &Node, sp: &str) -> Vec<lahar_core::model::job::Toleration> {
    let mut out = Vec::new();
    for (i, t) in ck.seq(spec, "tolerations", sp).iter().enumerate() {
        let tp = format!("{}[{i}]", join(sp, "tolerations"));
        let exists = match ck.opt_str(t, "operator", &tp).as_deref() {
            None | Some("Equal") => false,
            Some("Exists") => true,
            Some(other) => {
                ck.err(
                    t.get("operator").and_then(|n| n.at),
                    &join(&tp, "operator"),
                    format!("expected `Equal` or `Exists`, got `{other}`"),
                );
                false
            }
        };
        let effect = ck.opt_str(t, "effect", &tp).unwrap_or_default();
        if !["", "NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect.as_str()) {
            ck.err(
                t.get("effect").and_then(|n| n.at),
                &join(&tp, "effect"),
                format!("expected NoSchedule, PreferNoSchedule or NoExecute, got `{effect}`"),
            );
        }
        out.push(lahar_core::model::job::Toleration {
            key: ck.opt_str(t, "key", &tp).unwrap_or_default(),
            exists,
            value: ck.opt_str(t, "value", &tp).unwrap_or_default(),
            effect,
        });
    }
    out
}

/// Checks a schedulerName: lahar simulates Volcano, so pods for another scheduler
/// would never be scheduled by it.
pub(crate) fn check_scheduler(ck: &mut Ck<'_>, name: Option<&str>, at: At, path: &str) {
    if let Some(n) = name
        && n != "volcano"
    {
        ck.err(
            at,
            path,
            format!("schedulerName `{n}`: lahar simulates Volcano; expected `volcano` or no schedulerName"),
        );
    }
}

/// Timing from lahar's annotations.
#[derive(Clone)]
pub(crate) struct Timing {
    pub submit: SimTime,
    pub duration: SimDuration,
    /// `lahar.io/estimate`: the user's run-time estimate.
    pub estimate: Option<SimDuration>,
    pub profile: Option<JobProfile>,
    pub checkpoint: Option<SimDuration>,
    pub elastic: Option<lahar_core::model::elastic::Elastic>,
}

/// Reads `lahar.io/submit-at`, `lahar.io/duration`, `lahar.io/estimate`, `lahar.io/model`,
/// `lahar.io/iterations` and `lahar.io/checkpoint-interval`; without `lahar.io/duration` (or a model with
/// `lahar.io/iterations`) the run time is `spec.defaults.duration`, else
/// [`SimDuration::UNBOUNDED`].
pub(crate) fn timing(
    ck: &mut Ck<'_>,
    cx: &super::Context<'_>,
    ann: &BTreeMap<String, (String, At)>,
    _obj_at: At,
    path: &str,
) -> Option<Timing> {
    let ap = join(path, "metadata.annotations");
    let f = |k: &str| format!("{ap}.{k}");
    let submit = match ann.get("lahar.io/submit-at") {
        Some((s, at)) => ck.duration(s, *at, &f("lahar.io/submit-at")).unwrap_or_default(),
        None => SimDuration::ZERO,
    };
    let checkpoint = ann
        .get("lahar.io/checkpoint-interval")
        .and_then(|(s, at)| ck.duration(s, *at, &f("lahar.io/checkpoint-interval")));
    // `lahar.io/scaling` and `lahar.io/resize-overhead` make the job elastic.
    let curve = ann.get("lahar.io/scaling").and_then(|(s, at)| {
        lahar_core::model::elastic::ScalingCurve::parse(s).map_err(|e| ck.err(*at, &f("lahar.io/scaling"), e)).ok()
    });
    let overhead =
        ann.get("lahar.io/resize-overhead").and_then(|(s, at)| ck.duration(s, *at, &f("lahar.io/resize-overhead")));
    let elastic = (ann.contains_key("lahar.io/scaling") || ann.contains_key("lahar.io/resize-overhead")).then(|| {
        let d = lahar_core::model::elastic::Elastic::default();
        lahar_core::model::elastic::Elastic {
            curve: curve.unwrap_or(d.curve),
            resize_overhead: overhead.unwrap_or(d.resize_overhead),
        }
    });
    let mut profile = match ann.get("lahar.io/model") {
        Some((m, at)) => match lookup(m) {
            Some(p) => Some(JobProfile::from_catalog(p)),
            None => {
                let known: Vec<&str> = CATALOG.iter().map(|c| c.name).collect();
                ck.err(
                    *at,
                    &f("lahar.io/model"),
                    format!("unknown model `{m}`; the catalog has: {}", known.join(", ")),
                );
                None
            }
        },
        None => None,
    };
    if let Some((n, at)) = ann.get("lahar.io/iterations") {
        match n.trim().parse::<u64>() {
            Ok(x) if x >= 1 => {
                if let Some(p) = &mut profile {
                    p.iterations = Some(x);
                } else if !ann.contains_key("lahar.io/model") {
                    ck.err(*at, &f("lahar.io/iterations"), "`lahar.io/iterations` needs `lahar.io/model`");
                }
            }
            _ => ck.err(*at, &f("lahar.io/iterations"), format!("expected an integer ≥ 1, got `{n}`")),
        }
    }
    let iterations = ann.contains_key("lahar.io/iterations");
    let duration = match (ann.get("lahar.io/duration"), iterations) {
        (Some((d, at)), false) => ck.duration(d, *at, &f("lahar.io/duration")),
        (Some((_, at)), true) => {
            ck.err(*at, &f("lahar.io/duration"), "give either `lahar.io/duration` or `lahar.io/iterations`, not both");
            None
        }
        (None, true) => Some(SimDuration::ZERO), // priced from the model once the cluster is known
        (None, false) => Some(cx.default_duration.unwrap_or(SimDuration::UNBOUNDED)),
    };
    let estimate = ann.get("lahar.io/estimate").and_then(|(s, at)| {
        let e = ck.duration(s, *at, &f("lahar.io/estimate"))?;
        if e.micros() == 0 {
            ck.err(*at, &f("lahar.io/estimate"), "must be longer than 0");
            return None;
        }
        Some(e)
    });
    Some(Timing { submit: SimTime(submit.micros()), duration: duration?, estimate, profile, checkpoint, elastic })
}

/// A queue by name; unknown → error listing the defined ones.
/// The queue an operator gives the PodGroups it makes for an object: the
/// object's own `scheduling.volcano.sh/queue-name` annotation, else `default`
/// (the LWS controller's Volcano provider, kthena's ModelServing controller).
pub(crate) fn owner_queue(ck: &mut Ck<'_>, cx: &super::Context<'_>, meta: &Meta) -> Option<QueueId> {
    match meta.annotations.get(QUEUE_NAME_ANNOTATION) {
        Some((q, at)) => queue(ck, cx, q, *at, &format!("metadata.annotations.{QUEUE_NAME_ANNOTATION}")),
        None => queue(ck, cx, "default", meta.at, "metadata"),
    }
}

pub(crate) fn queue(ck: &mut Ck<'_>, cx: &super::Context<'_>, name: &str, at: At, path: &str) -> Option<QueueId> {
    let q = cx.queues.get(name).copied();
    if q.is_none() {
        let known: Vec<&str> = cx.queues.keys().map(String::as_str).collect();
        ck.err(at, path, format!("queue `{name}` does not exist; defined queues: {}", known.join(", ")));
    }
    q
}

/// `networkTopology: {mode, highestTierAllowed | highestTierName}`, read by
/// [`NetworkTopology::parse`]. A tier name is the `tierName` of the cluster's
/// HyperNodes, turned into its tier as Volcano's session does; one the cluster does
/// not have is an error (Volcano logs it and leaves the job unconstrained), and so
/// are both fields at once (Volcano's webhook refuses them).
pub(crate) fn network_topology(
    ck: &mut Ck<'_>,
    tiers: &BTreeMap<String, u32>,
    n: &Node,
    path: &str,
) -> NetworkTopology {
    let mode = ck.opt_str(n, "mode", path);
    let mut tier = ck.opt_int(n, "highestTierAllowed", path, i64::MIN);
    if let Some(name) = ck.opt_str(n, "highestTierName", path) {
        let at = n.get("highestTierName").and_then(|f| f.at);
        let field = join(path, "highestTierName");
        if tier.is_some() {
            ck.err(at, &field, "must not specify `highestTierAllowed` and `highestTierName` simultaneously");
        } else if let Some(&t) = tiers.get(&name) {
            tier = Some(i64::from(t));
        } else if tiers.is_empty() {
            ck.err(at, &field, format!("no HyperNode of the cluster has a `tierName`; `{name}` names no tier"));
        } else {
            let known: Vec<String> = tiers.iter().map(|(k, t)| format!("{k} (tier {t})")).collect();
            ck.err(
                at,
                &field,
                format!("no HyperNode tier is named `{name}`; the cluster's tiers: {}", known.join(", ")),
            );
        }
    }
    let (nt, errors) = NetworkTopology::parse(mode.as_deref(), tier);
    for (field, m) in errors {
        ck.err(n.get(field).and_then(|f| f.at), &join(path, field), m);
    }
    nt
}

/// `policies: [{event | events, action}]`.
/// Admission checks them as Volcano's job webhook does (`validatePolicies`): an event
/// named by two policies, or `*` beside another event, is refused.
pub(crate) fn policies(ck: &mut Ck<'_>, parent: &Node, path: &str) -> Vec<Policy> {
    let mut out = Vec::new();
    let pp = join(path, "policies");
    // Events named so far, across this list's policies (one policy may repeat one).
    let mut seen: Vec<String> = Vec::new();
    let mut codes: Vec<i32> = Vec::new();
    for (i, p) in ck.seq(parent, "policies", path).iter().enumerate() {
        let ip = format!("{pp}[{i}]");
        let mut events: Vec<(String, At)> = Vec::new();
        if let Some(e) = ck.opt_str(p, "event", &ip) {
            events.push((e, p.get("event").and_then(|n| n.at)));
        }
        for (k, e) in ck.seq(p, "events", &ip).iter().enumerate() {
            if let Some(s) = ck.str(e, &format!("{ip}.events[{k}]")) {
                events.push((s, e.at));
            }
        }
        // exitCode: a failed pod's container exit code (`lahar.io/exit-code`), as
        // Volcano's webhook checks it (`validatePolicies`).
        let mut exit: Option<i32> = None;
        if let Some(c) = p.get("exitCode") {
            let path = join(&ip, "exitCode");
            match c.scalar().and_then(|v| v.trim().parse::<i32>().ok()) {
                _ if !events.is_empty() => ck.err(c.at, &path, "must not specify event and exitCode simultaneously"),
                Some(0) => ck.err(c.at, &path, "0 is not a valid error code"),
                Some(code) if codes.contains(&code) => ck.err(c.at, &path, format!("duplicate exitCode {code}")),
                Some(code) => {
                    codes.push(code);
                    exit = Some(code);
                }
                None => ck.err(c.at, &path, "expected an integer exit code"),
            }
        } else if events.is_empty() {
            ck.err(p.at, &ip, "either event and exitCode should be specified");
        }
        // metav1.Duration: a Go duration string.
        let timeout = ck.opt_str(p, "timeout", &ip).and_then(|t| match lahar_core::util::time::parse_go_duration(&t) {
            Some(us) => Some(SimDuration(us)),
            None => {
                let at = p.get("timeout").and_then(|n| n.at);
                ck.err(at, &join(&ip, "timeout"), format!("expected a Go duration (`30s`, `10m`), got `{t}`"));
                None
            }
        });
        let action = ck.opt_str(p, "action", &ip);
        let ac = action.as_deref().and_then(PolicyAction::parse);
        if ac.is_none() {
            ck.err(p.at, &join(&ip, "action"), format!(
                "unknown action `{}`; expected RestartJob, RestartTask, RestartPod, RestartPartition, AbortJob, TerminateJob, CompleteJob or ResumeJob",
                action.unwrap_or_default()
            ));
        }
        let mut mine: Vec<&str> = Vec::new();
        for (e, at) in &events {
            if mine.contains(&e.as_str()) {
                continue;
            }
            mine.push(e);
            if seen.contains(e) {
                ck.err(*at, &join(&ip, "event"), format!(
                    "event `{e}` is already handled by an earlier policy; Volcano's admission webhook refuses a job whose policies repeat an event (duplicate event across different policy)"
                ));
            } else if (e == "*" && !seen.is_empty()) || (e != "*" && seen.iter().any(|s| s == "*")) {
                ck.err(
                    *at,
                    &join(&ip, "event"),
                    "with a `*` policy no other event may be given (Volcano's admission webhook refuses the job)",
                );
            }
            seen.push(e.clone());
        }
        if let (Some(code), Some(action)) = (exit, ac) {
            out.push(Policy { event: PolicyEvent::ExitCode(code), action, timeout });
        }
        for (e, at) in events {
            match (PolicyEvent::parse(&e), ac) {
                (Some(event), Some(action)) => out.push(Policy { event, action, timeout }),
                (None, _) => ck.err(
                    at,
                    &join(&ip, "event"),
                    format!("unknown event `{e}`; expected *, PodEvicted, PodFailed, PodPending, TaskCompleted, TaskFailed, JobUpdated or Unknown"),
                ),
                _ => {}
            }
        }
    }
    out
}

/// The value of label `<prefix>/<key>` on the pods of a job's first task (a
/// controller's label on the group's first pods).
pub(crate) fn pod_label<'a>(job: &'a JobSpec, prefix: &str, key: &str) -> Option<&'a str> {
    let labels = job.tasks.first()?.hints.as_ref()?.labels.as_ref()?;
    let key = format!("{prefix}/{key}");
    labels.iter().find(|(k, _)| *k == key).map(|(_, v)| v.as_str())
}

/// Adds the labels a controller gives its pods to `task`'s (a controller's label
/// replaces the template's of the same key).
pub(crate) fn add_labels(task: &mut TaskSpec, extra: &[(&str, &str)]) {
    let mut hints = task.hints.as_deref().cloned().unwrap_or_default();
    let labels = hints.labels.get_or_insert_with(Vec::new);
    for &(k, v) in extra {
        match labels.binary_search_by(|(l, _)| l.as_str().cmp(k)) {
            Ok(i) => labels[i].1 = v.to_string(),
            Err(i) => labels.insert(i, (k.to_string(), v.to_string())),
        }
    }
    task.hints = hints.shared();
}

/// A task's own run time: its pod template's `lahar.io/duration` (`template`: the
/// template's path); none when absent or zero.
pub(crate) fn task_run_time(ck: &mut Ck<'_>, shape: &PodShape, template: &str) -> Option<SimDuration> {
    let (d, at) = shape.annotations.get("lahar.io/duration")?;
    let path = format!("{template}.metadata.annotations.lahar.io/duration");
    ck.duration(d, *at, &path).filter(|d| d.micros() > 0)
}

/// A failing container: the pod template's `lahar.io/fail-after` (each run of
/// the container exits with a failure after that long) and `lahar.io/exit-code`
/// (1–255, default 1). Under `restartPolicy: OnFailure` or `Always` (the
/// default) the kubelet restarts the container in place (`in_place`: how the
/// kind's controller counts the restarts). `template`: the template node,
/// `path` its field path.
pub(crate) fn container_exit(
    ck: &mut Ck<'_>,
    shape: &PodShape,
    template: &Node,
    path: &str,
    in_place: InPlace,
) -> Option<ContainerExit> {
    let key = |k: &str| format!("{path}.metadata.annotations.{k}");
    let code = shape.annotations.get(EXIT_CODE).and_then(|(v, at)| match v.trim().parse::<i32>() {
        Ok(c) if (1..=255).contains(&c) => Some((c, *at)),
        _ => {
            ck.err(*at, &key(EXIT_CODE), format!("expected an exit code from 1 to 255, got `{v}`"));
            None
        }
    });
    let Some((after, at)) = shape.annotations.get(FAIL_AFTER) else {
        if let Some((_, at)) = code {
            ck.err(at, &key(EXIT_CODE), format!("an exit code needs `{FAIL_AFTER}` (when the container exits)"));
        }
        return None;
    };
    let after = ck.duration(after, *at, &key(FAIL_AFTER))?;
    if after.micros() == 0 {
        ck.err(*at, &key(FAIL_AFTER), "a container runs for some time before it exits: expected a duration above 0");
        return None;
    }
    let restart = template.get("spec").and_then(|s| s.get("restartPolicy"));
    let policy = restart.and_then(Node::scalar).unwrap_or_else(|| "Always".to_string());
    let code = code.map_or(1, |c| c.0);
    match policy.as_str() {
        "Never" => Some(ContainerExit { after, code, in_place: None }),
        "OnFailure" | "Always" => Some(ContainerExit { after, code, in_place: Some(in_place) }),
        // Any other value was refused with the template's shape.
        _ => None,
    }
}

/// The exit code of a VolcanoJob task's container when the kubelet stops it
/// at its pod's deletion: the template's `lahar.io/stop-exit-code` (0–255),
/// else 143 ([`lahar_core::model::job::STOPPED_EXIT_CODE`]). `path`: the
/// template's field path.
pub(crate) fn stop_exit_code(ck: &mut Ck<'_>, shape: &PodShape, path: &str) -> i32 {
    let default = lahar_core::model::job::STOPPED_EXIT_CODE;
    let Some((v, at)) = shape.annotations.get(STOP_EXIT_CODE) else { return default };
    match v.trim().parse::<i32>() {
        Ok(c) if (0..=255).contains(&c) => c,
        _ => {
            let field = format!("{path}.metadata.annotations.{STOP_EXIT_CODE}");
            ck.err(*at, &field, format!("expected an exit code from 0 to 255, got `{v}`"));
            default
        }
    }
}

/// Refuses a failing container where it is not read (every kind but a
/// VolcanoJob's task templates and a batch/v1 Job's template), and a stopped
/// container's exit code ([`no_stop_exit_code`]): never placed as if the
/// annotation were absent.
pub(crate) fn no_container_exit(ck: &mut Ck<'_>, shape: &PodShape, path: &str) {
    refuse(ck, shape, path, &[FAIL_AFTER, EXIT_CODE], "a VolcanoJob's task templates and a batch/v1 Job's template");
    no_stop_exit_code(ck, shape, path);
}

/// Refuses `lahar.io/stop-exit-code` where it is not read (every kind but a
/// VolcanoJob's task templates: only Volcano's job controller hears a deleted
/// pod's terminal phase).
pub(crate) fn no_stop_exit_code(ck: &mut Ck<'_>, shape: &PodShape, path: &str) {
    refuse(ck, shape, path, &[STOP_EXIT_CODE], "a VolcanoJob's task templates");
}

/// An error for each of annotations `keys` the template at `path` gives:
/// they are read on `read_on` only.
fn refuse(ck: &mut Ck<'_>, shape: &PodShape, path: &str, keys: &[&str], read_on: &str) {
    for k in keys {
        if let Some((_, at)) = shape.annotations.get(*k) {
            let field =
                format!("{}metadata.annotations.{k}", if path.is_empty() { String::new() } else { format!("{path}.") });
            ck.err(*at, &field, format!("`{k}` is read on {read_on} only"));
        }
    }
}

/// The annotation that makes a pod's container exit with a failure.
pub(crate) const FAIL_AFTER: &str = "lahar.io/fail-after";
/// The failing container's exit code.
pub(crate) const EXIT_CODE: &str = "lahar.io/exit-code";
/// A VolcanoJob task's container's exit code when the kubelet stops it.
pub(crate) const STOP_EXIT_CODE: &str = "lahar.io/stop-exit-code";

/// A task from a pod shape.
pub(crate) fn task(name: &str, replicas: u32, min_available: u32, shape: &PodShape) -> TaskSpec {
    TaskSpec {
        node_label_in: shape.node_label_in.clone(),
        name: lahar_core::util::text::shared(name),
        replicas,
        min_available,
        requests: shape.requests,
        priority: shape.priority,
        depends_on: Vec::new(),
        depends_any: false,
        node_selector: shape.node_selector.clone(),
        policies: Vec::new(),
        preemptable: shape.preemptable,
        never_preempts: shape.never_preempts,
        tolerations: shape.tolerations.clone(),
        hints: shape.hints.clone(),
        run_time: None,
        exits: None,
        stop_code: lahar_core::model::job::STOPPED_EXIT_CODE,
    }
}

/// The fields of a job that are not its tasks.
pub(crate) struct JobHead {
    pub name: String,
    pub namespace: String,
    pub kind: String,
    pub queue: QueueId,
    pub priority_class: Option<String>,
    pub min_available: u32,
    pub timing: Timing,
    /// The longest `terminationGracePeriodSeconds` of its pod templates
    /// (`None`: Kubernetes' default, 30 s).
    pub grace: Option<SimDuration>,
}

/// Assembles a job; `minResources` as Volcano's controller computes it.
pub(crate) fn assemble(h: JobHead, tasks: Vec<TaskSpec>, cx: &super::Context<'_>) -> (JobSpec, Option<JobProfile>) {
    let mut j = JobSpec {
        name: h.name,
        namespace: lahar_core::util::text::shared(&h.namespace),
        kind: lahar_core::util::text::shared(&h.kind),
        queue: h.queue,
        priority: cx.priority_classes.job_priority(h.priority_class.as_deref()),
        priority_class: h.priority_class,
        submit: h.timing.submit,
        min_available: h.min_available,
        tasks,
        duration: h.timing.duration,
        estimate: h.timing.estimate,
        checkpoint_interval: h.timing.checkpoint,
        elastic: h.timing.elastic.clone(),
        ..JobSpec::default()
    };
    if let Some(g) = h.grace {
        j.termination_grace = g;
    }
    j.finish();
    (j, h.timing.profile)
}
