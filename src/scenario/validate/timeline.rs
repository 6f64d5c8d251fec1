//! `spec.timeline`: operators' actions during the run, checked before any work —
//! one action per entry, its fields known, queues that exist, node patterns that
//! match nodes. Pods and jobs are named as lahar's outputs name them and looked up
//! when the action comes (a job may arrive from a trace); one that is not there
//! then is a counted warning after the run. A conf the scheduler reloads is read
//! and checked here too.

use super::faults::matching;
use super::{V, at};
use crate::scenario::SchedulerChoice;
use crate::scenario::raw::RawStep;
use lahar_core::model::affinity::HOSTNAME;
use lahar_core::model::cluster::{GPU_PRODUCT_LABEL, Node, NodeId, Taint};
use lahar_core::model::queue::QueueId;
use lahar_core::timeline::{Operation, Step};
use lahar_core::util::time::SimTime;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The most distinct confs a run's timeline reloads (each is held parsed for
/// the run; steps naming one conf share it).
pub(crate) const MAX_RELOADED_CONFS: usize = 1_000;

/// What a `conf` step needs: the scenario's folder (its path is relative to it)
/// and the run's first scheduler; and what the steps read, the confs by the
/// index their [`Operation::Conf`] names, one per file (`read`: each file's
/// index, `None` when it was refused, reported once), and their texts as the
/// run's record keeps them ([`Reloads::record`]).
pub(super) struct Reloads<'a> {
    pub(super) base: &'a Path,
    pub(super) first: &'a SchedulerChoice,
    pub(super) confs: Vec<lahar_policies::volcano::conf::SchedulerConf>,
    pub(super) read: BTreeMap<std::path::PathBuf, Option<u32>>,
    pub(super) texts: String,
}

impl Reloads<'_> {
    /// What the run keeps of the confs (`input-timeline-confs.yaml`): each conf's
    /// text once, in the order the timeline names them, as a YAML document
    /// headed by the file as the scenario wrote it (quoted, so a name cannot
    /// break a line) and the first step naming it; `None` without conf steps.
    pub(super) fn record(&mut self) -> Option<String> {
        let texts = std::mem::take(&mut self.texts);
        (!texts.is_empty()).then(|| {
            let head = "# The volcano-scheduler.conf files spec.timeline reloads, each once, in the order the scenario names them.\n";
            format!("{head}{texts}")
        })
    }

    /// Keeps conf `text`, read from `file` as written, first named at `path`
    /// (before the conf itself joins `confs`: its index is their count).
    fn keep(&mut self, file: &str, path: &str, text: &str) {
        let n = self.confs.len();
        self.texts.push_str(&format!("--- # conf {n}: {file:?}, first reloaded by {path}\n{text}"));
        if !text.ends_with('\n') {
            self.texts.push('\n');
        }
    }
}

/// The steps, in time order (ties in the order given); `fixed`: the node
/// label keys HyperNodes select their members by.
pub(super) fn steps(
    v: &mut V<'_>,
    raw: &[Spanned<RawStep>],
    (nodes, fixed): (&[Node], &BTreeSet<String>),
    queues: &BTreeMap<String, QueueId>,
    reloads: &mut Reloads<'_>,
) -> Vec<Step> {
    let mut out = Vec::new();
    for (i, s) in raw.iter().enumerate() {
        let path = format!("spec.timeline[{i}]");
        if let Some(op) = operation(v, &s.value, &path, at(s), (nodes, fixed, queues), reloads)
            && let Some(d) = v.duration(&s.value.at, &format!("{path}.at"))
            && let Some((action, Some(target))) = verbs(&s.value).into_iter().find(|(_, x)| x.is_some())
        {
            let target = target.value.clone();
            out.push(Step { at: SimTime::ZERO.plus(d), op, place: path, action, target });
        }
    }
    out.sort_by_key(|s| s.at);
    out
}

/// A step's action keys as the scenario spells them, with their values (one
/// is given in a valid step).
fn verbs(r: &RawStep) -> [(&'static str, Option<&Spanned<String>>); 17] {
    [
        ("deletePod", r.delete_pod.as_ref()),
        ("deleteJob", r.delete_job.as_ref()),
        ("suspendJob", r.suspend_job.as_ref()),
        ("resumeJob", r.resume_job.as_ref()),
        ("scaleJob", r.scale_job.as_ref()),
        ("queue", r.queue.as_ref()),
        ("cordon", r.cordon.as_ref()),
        ("uncordon", r.uncordon.as_ref()),
        ("addNodes", r.add_nodes.as_ref()),
        ("removeNodes", r.remove_nodes.as_ref()),
        ("taint", r.taint.as_ref()),
        ("untaint", r.untaint.as_ref()),
        ("label", r.label.as_ref()),
        ("unlabel", r.unlabel.as_ref()),
        ("ungatePod", r.ungate_pod.as_ref()),
        ("ungateJob", r.ungate_job.as_ref()),
        ("conf", r.conf.as_ref()),
    ]
}

/// `namespace/name`, or `name` in `default`.
fn object(s: &str) -> (std::sync::Arc<str>, String) {
    match s.split_once('/') {
        Some((ns, name)) => (lahar_core::util::text::shared(ns), name.to_string()),
        None => (lahar_core::util::text::shared("default"), s.to_string()),
    }
}

fn operation(
    v: &mut V<'_>,
    r: &RawStep,
    path: &str,
    whole: super::At,
    (nodes, fixed, queues): (&[Node], &BTreeSet<String>, &BTreeMap<String, QueueId>),
    reloads: &mut Reloads<'_>,
) -> Option<Operation> {
    let given: Vec<&str> = verbs(r).iter().filter(|(_, x)| x.is_some()).map(|(k, _)| *k).collect();
    if given.len() != 1 {
        let what = if given.is_empty() { "none".to_string() } else { given.join(", ") };
        v.err(
            whole,
            path,
            format!(
                "expected exactly one action of deletePod, deleteJob, suspendJob, resumeJob, scaleJob, queue, cordon, uncordon, addNodes, removeNodes, taint, untaint, label, unlabel, ungatePod, ungateJob, conf; got {what}"
            ),
        );
        return None;
    }
    let edits = [
        ("weight", r.weight.is_some()),
        ("state", r.state.is_some()),
        ("reclaimable", r.reclaimable.is_some()),
        ("capability", r.capability.is_some()),
    ];
    if r.queue.is_none() {
        for (k, set) in edits {
            if set {
                v.err(whole, format!("{path}.{k}"), format!("`{k}` edits a queue: it goes with `queue`"));
            }
        }
    }
    let scale_fields = [
        ("task", r.task.is_some()),
        ("replicas", r.replicas.is_some()),
        ("taskMinAvailable", r.task_min_available.is_some()),
        ("minAvailable", r.min_available.is_some()),
    ];
    if r.scale_job.is_none() {
        for (k, set) in scale_fields {
            if set {
                v.err(whole, format!("{path}.{k}"), format!("`{k}` edits a job's sizes: it goes with `scaleJob`"));
            }
        }
    }
    let tainting = r.taint.is_some() || r.untaint.is_some();
    let labelling = r.label.is_some() || r.unlabel.is_some();
    if !tainting && !labelling {
        for (k, set) in [("key", r.key.is_some()), ("value", r.value.is_some())] {
            if set {
                let why =
                    format!("`{k}` names a taint or a label: it goes with `taint`, `untaint`, `label` or `unlabel`");
                v.err(whole, format!("{path}.{k}"), why);
            }
        }
    }
    if !tainting && let Some(e) = &r.effect {
        v.err(at(e), format!("{path}.effect"), "`effect` names a taint: it goes with `taint` or `untaint`");
    }
    if r.delete_pod.is_none()
        && let Some(g) = &r.grace_period
    {
        v.err(at(g), format!("{path}.gracePeriod"), "`gracePeriod` is a deletion's: it goes with `deletePod`");
    }
    if r.ungate_pod.is_none()
        && r.ungate_job.is_none()
        && let Some(g) = &r.gates
    {
        v.err(
            at(g),
            format!("{path}.gates"),
            "`gates` names scheduling gates: it goes with `ungatePod` or `ungateJob`",
        );
    }
    let name = |x: &Spanned<String>, v: &mut V<'_>, field: &str| {
        if x.value.split('/').count() > 2 || x.value.split('/').any(str::is_empty) {
            v.err(at(x), format!("{path}.{field}"), format!("expected `name` or `namespace/name`, got `{}`", x.value));
            return None;
        }
        Some(object(&x.value))
    };
    let nodes_of = |x: &Spanned<String>, v: &mut V<'_>, field: &str| {
        let ids = matching(nodes, &x.value);
        if ids.is_empty() {
            v.err(at(x), format!("{path}.{field}"), format!("`{}` matches no node", x.value));
            return None;
        }
        Some(ids)
    };
    if let Some(x) = &r.delete_pod {
        let (namespace, name) = name(x, v, "deletePod")?;
        let grace = match &r.grace_period {
            Some(g) => Some(v.duration(g, &format!("{path}.gracePeriod"))?),
            None => None,
        };
        return Some(Operation::DeletePod { namespace, name, grace });
    }
    if let Some(x) = &r.delete_job {
        let (namespace, name) = name(x, v, "deleteJob")?;
        return Some(Operation::DeleteJob { namespace, name });
    }
    if let Some(x) = &r.suspend_job {
        let (namespace, name) = name(x, v, "suspendJob")?;
        return Some(Operation::SuspendJob { namespace, name });
    }
    if let Some(x) = &r.resume_job {
        let (namespace, name) = name(x, v, "resumeJob")?;
        return Some(Operation::ResumeJob { namespace, name });
    }
    if let Some(x) = &r.scale_job {
        let (namespace, name) = name(x, v, "scaleJob")?;
        if r.replicas.is_none() && r.task_min_available.is_none() && r.min_available.is_none() {
            v.err(
                at(x),
                format!("{path}.scaleJob"),
                "give what changes: `replicas`, `taskMinAvailable` or `minAvailable`",
            );
            return None;
        }
        let replicas = size(v, &r.replicas, path, "replicas", lahar_core::model::job::MAX_PODS_PER_JOB);
        let task_min_available = size(v, &r.task_min_available, path, "taskMinAvailable", u32::MAX);
        let min_available = size(v, &r.min_available, path, "minAvailable", u32::MAX);
        let task = r.task.as_ref().map(|t| t.value.clone());
        return Some(Operation::ScaleJob {
            namespace,
            name,
            task,
            replicas: replicas?,
            task_min_available: task_min_available?,
            min_available: min_available?,
        });
    }
    if let Some((x, job)) = r.ungate_pod.as_ref().map(|x| (x, false)).or(r.ungate_job.as_ref().map(|x| (x, true))) {
        let verb = if job { "ungateJob" } else { "ungatePod" };
        let (namespace, name) = name(x, v, verb)?;
        let gates = match &r.gates {
            Some(g) if g.value.is_empty() => {
                v.err(
                    at(g),
                    format!("{path}.gates"),
                    "give the gates to remove, or leave `gates` out to remove them all",
                );
                return None;
            }
            Some(g) => {
                let mut out: Vec<String> = Vec::new();
                for (i, n) in g.value.iter().enumerate() {
                    if let Some(why) = lahar_core::util::text::qualified_name_problem(&n.value) {
                        v.err(at(n), format!("{path}.gates[{i}]"), why);
                    } else if !out.contains(&n.value) {
                        out.push(n.value.clone());
                    }
                }
                Some(out)
            }
            None => None,
        };
        return Some(Operation::Ungate { namespace, name, job, gates });
    }
    if let Some(c) = &r.conf {
        let file = lahar_core::util::files::join(reloads.base, &c.value);
        if let Some(&known) = reloads.read.get(&file) {
            return known.map(Operation::Conf);
        }
        let field = format!("{path}.conf");
        if reloads.confs.len() == MAX_RELOADED_CONFS {
            let why = format!(
                "more than {MAX_RELOADED_CONFS} different confs reloaded in one run: steps may name the same conf again"
            );
            v.err(at(c), field, why);
            return None;
        }
        let conf = super::scheduler::reloaded_conf(v, (c, &file), &field, reloads.first);
        let index = conf.map(|(conf, text)| {
            reloads.keep(&c.value, path, &text);
            reloads.confs.push(conf);
            (reloads.confs.len() - 1) as u32
        });
        reloads.read.insert(file, index);
        return index.map(Operation::Conf);
    }
    if let Some(x) = &r.cordon {
        return nodes_of(x, v, "cordon").map(Operation::Cordon);
    }
    if let Some(x) = &r.uncordon {
        return nodes_of(x, v, "uncordon").map(Operation::Uncordon);
    }
    if let Some(x) = &r.add_nodes {
        return nodes_of(x, v, "addNodes").map(Operation::AddNodes);
    }
    if let Some(x) = &r.remove_nodes {
        return nodes_of(x, v, "removeNodes").map(Operation::RemoveNodes);
    }
    if let Some(x) = r.taint.as_ref().or(r.untaint.as_ref()) {
        let verb = if r.taint.is_some() { "taint" } else { "untaint" };
        let nodes = nodes_of(x, v, verb);
        return taint(v, r, (x, verb), path, nodes);
    }
    if let Some(x) = r.label.as_ref().or(r.unlabel.as_ref()) {
        let verb = if r.label.is_some() { "label" } else { "unlabel" };
        let nodes = nodes_of(x, v, verb);
        return label(v, r, (x, verb), path, (nodes, fixed));
    }
    let q = r.queue.as_ref()?;
    let Some(&queue) = queues.get(&q.value) else {
        let known: Vec<&str> = queues.keys().map(String::as_str).collect();
        v.err(at(q), format!("{path}.queue"), format!("no queue `{}`; the queues: {}", q.value, known.join(", ")));
        return None;
    };
    if edits.iter().all(|(_, set)| !set) {
        v.err(at(q), format!("{path}.queue"), "give what changes: `weight`, `state`, `reclaimable` or `capability`");
        return None;
    }
    let weight = match &r.weight {
        Some(w) => Some(v.count(w, &format!("{path}.weight"), 1)?),
        None => None,
    };
    let state = match &r.state {
        Some(s) => Some(super::queues::state(v, s, &format!("{path}.state"))?),
        None => None,
    };
    let capability = r.capability.as_ref().map(|c| v.resource_list(c, &format!("{path}.capability")));
    Some(Operation::Queue { queue, weight, state, reclaimable: r.reclaimable.as_ref().map(|b| b.value), capability })
}

/// A `scaleJob` size `f` (field `k`): absent, or an integer from 0 to `max`
/// (replicas: the pods-per-job limit every input kind has). `None` if bad.
fn size(v: &mut V<'_>, f: &Option<Spanned<i64>>, path: &str, k: &str, max: u32) -> Option<Option<u32>> {
    let Some(n) = f else { return Some(None) };
    let field = format!("{path}.{k}");
    let n = v.count(n, &field, 0)?;
    if n > max {
        let x = f.as_ref().expect("given");
        v.err(at(x), field, format!("{n} pods exceed the limit of {max} per job"));
        return None;
    }
    Some(Some(n))
}

/// `label: PATTERN` with `key` and `value`, or `unlabel: PATTERN` with `key`
/// (`x`, named `verb`), on `nodes` (None: the pattern matched nothing, already
/// reported). Refused: a label lahar reads once, at the start — the GPU model
/// (the node's hardware), the hostname (the node's name) and the `fixed` keys
/// HyperNodes select their members by.
fn label(
    v: &mut V<'_>,
    r: &RawStep,
    (x, verb): (&Spanned<String>, &str),
    path: &str,
    (nodes, fixed): (Option<Vec<NodeId>>, &BTreeSet<String>),
) -> Option<Operation> {
    let key = match &r.key {
        None => {
            v.err(at(x), format!("{path}.key"), format!("`{verb}` needs the label's `key`"));
            None
        }
        Some(k) => {
            let why = if let Some(why) = lahar_core::util::text::qualified_name_problem(&k.value) {
                Some(why)
            } else if k.value == GPU_PRODUCT_LABEL {
                Some(format!("`{GPU_PRODUCT_LABEL}` is the node's GPU model, which lahar fixes with its hardware"))
            } else if k.value == HOSTNAME {
                Some(format!("`{HOSTNAME}` is the node's name, which lahar fixes"))
            } else if fixed.contains(&k.value) {
                Some(format!(
                    "`{}` selects HyperNode members (`labelMatch`), which lahar resolves once, at the start",
                    k.value
                ))
            } else {
                None
            };
            match why {
                Some(why) => {
                    v.err(at(k), format!("{path}.key"), why);
                    None
                }
                None => Some(k.value.clone()),
            }
        }
    };
    let value = match (&r.value, r.label.is_some()) {
        (Some(val), false) => {
            v.err(at(val), format!("{path}.value"), "`unlabel` removes a label by key: no `value`");
            return None;
        }
        (Some(val), true) => match lahar_core::util::text::label_value_problem(&val.value) {
            Some(why) => {
                v.err(at(val), format!("{path}.value"), why);
                return None;
            }
            None => Some(val.value.clone()),
        },
        (None, true) => {
            v.err(at(x), format!("{path}.value"), "`label` needs the label's `value` (`''` for an empty one)");
            return None;
        }
        (None, false) => None,
    };
    Some(Operation::Label { nodes: nodes?, key: key?, value })
}

/// `taint: PATTERN` or `untaint: PATTERN` (`x`, named `verb`) on `nodes` (None:
/// the pattern matched nothing, already reported) with `key`, `value` and `effect`.
fn taint(
    v: &mut V<'_>,
    r: &RawStep,
    (x, verb): (&Spanned<String>, &str),
    path: &str,
    nodes: Option<Vec<NodeId>>,
) -> Option<Operation> {
    let key = match &r.key {
        Some(k) if k.value == Taint::UNSCHEDULABLE => {
            v.err(at(k), format!("{path}.key"), "the cordon's taint: use `cordon` and `uncordon`");
            None
        }
        Some(k) if k.value.is_empty() => {
            v.err(at(k), format!("{path}.key"), "expected a non-empty taint key");
            None
        }
        Some(k) => Some(k.value.clone()),
        None => {
            v.err(at(x), format!("{path}.key"), format!("`{verb}` needs the taint's `key`"));
            None
        }
    };
    let effect = match &r.effect {
        Some(e) if matches!(e.value.as_str(), "NoSchedule" | "NoExecute") => Some(e.value.clone()),
        Some(e) if e.value == "PreferNoSchedule" && r.untaint.is_some() => Some(e.value.clone()),
        Some(e) if e.value == "PreferNoSchedule" => {
            let why =
                "a PreferNoSchedule taint is a scoring preference lahar does not model; give NoSchedule or NoExecute";
            v.err(at(e), format!("{path}.effect"), why);
            return None;
        }
        Some(e) => {
            let why = format!("expected NoSchedule, NoExecute or PreferNoSchedule, got `{}`", e.value);
            v.err(at(e), format!("{path}.effect"), why);
            return None;
        }
        None if r.taint.is_some() => {
            v.err(at(x), format!("{path}.effect"), "`taint` needs the taint's `effect` (NoSchedule or NoExecute)");
            return None;
        }
        None => None,
    };
    if let (Some(val), true) = (&r.value, r.untaint.is_some()) {
        v.err(at(val), format!("{path}.value"), "`untaint` removes a taint by key (and effect): no `value`");
    }
    let (nodes, key) = (nodes?, key?);
    Some(match r.taint {
        Some(_) => {
            let value = r.value.as_ref().map(|x| x.value.clone()).unwrap_or_default();
            Operation::Taint { nodes, taint: Taint { key, value, effect: effect.expect("checked above") } }
        }
        None => Operation::Untaint { nodes, key, effect },
    })
}
