//! LeaderWorkerSet (`leaderworkerset.x-k8s.io/v1`) whose pods name
//! `schedulerName: volcano`, as the LWS controller makes its pods with its
//! Volcano scheduler provider (`pkg/schedulerprovider/volcano_provider.go`,
//! kubernetes-sigs/lws): each of `spec.replicas` groups is a leader pod
//! `<lws>-<i>` (from the leader StatefulSet) and `size − 1` worker pods
//! `<lws>-<i>-<w>` (`w` = 1…, from the group's worker StatefulSet), and one
//! Volcano PodGroup `<lws>-<i>-<revision>` per group: `minMember` = `size` (the
//! default `startupPolicy: LeaderCreated`, which creates the workers with their
//! leader) or 1 (`LeaderReady`: the workers are created once the leader runs,
//! here a dependency on it), `minResources` = the leader's requests plus
//! `size − 1` workers' (`CalculatePGMinResources`), the queue of the
//! LeaderWorkerSet's `scheduling.volcano.sh/queue-name` annotation (else
//! `default`), no PriorityClass (the provider sets none), and the LeaderWorkerSet's
//! `volcano.sh/*` annotations (`inheritVolcanoAnnotations`).
//!
//! The leader's template is `leaderTemplate`, else `workerTemplate`. The group's
//! `restartPolicy` (default `RecreateGroupOnPodRestart`: a pod that fails or is
//! deleted makes the controller delete and recreate the whole group) becomes the
//! policy `RestartJob` on `PodEvicted` and `PodFailed` with no retry limit;
//! `None` (and the deprecated `Default`) restarts the pod alone. Each job is one
//! group; its pods carry the labels the controller gives them (set name, group
//! index, group key, revision), which inter-pod affinity terms can select.
//!
//! Exclusive placement (`leaderworkerset.sigs.k8s.io/exclusive-topology` and its
//! sub-group form) is refused: the controller creates the workers only once the
//! leader is scheduled and pins them to the leader's topology domain, which lahar
//! does not model (docs/manifests.md).

use super::common::{self, Ck, JobHead, join};
use super::yaml::{Doc, Node, Val};
use super::{Context, ImportedJob};
use lahar_core::model::job::{Dependency, JobSpec, Policy, PolicyAction, PolicyEvent};

/// The label key prefix of the controller's pod labels.
const LABEL: &str = "leaderworkerset.sigs.k8s.io";
/// The annotations of exclusive placement.
const EXCLUSIVE: [&str; 2] =
    ["leaderworkerset.sigs.k8s.io/exclusive-topology", "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"];

/// The scheduler of a LeaderWorkerSet's pods: its worker template's, which the
/// leader's template must share (`Err` names the leader's when they differ);
/// `None` without a worker template (an error the reader reports).
pub fn scheduler_of(d: &Doc) -> Option<Result<String, String>> {
    let lwt = d.root.get("spec").and_then(|s| s.get("leaderWorkerTemplate"));
    let template = |key: &str| lwt.and_then(|t| t.get(key)).filter(|t| t.val != Val::Null);
    let of = |t: &Node| {
        t.get("spec")
            .and_then(|s| s.get("schedulerName"))
            .and_then(Node::scalar)
            .unwrap_or_else(|| "default-scheduler".into())
    };
    let worker = of(template("workerTemplate")?);
    Some(match template("leaderTemplate").map(of) {
        Some(leader) if leader != worker => Err(leader),
        _ => Ok(worker),
    })
}

pub(crate) fn jobs(d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Vec<ImportedJob> {
    let root = &d.root;
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    for key in EXCLUSIVE {
        if let Some((_, at)) = meta.annotations.get(key) {
            ck.err(
                *at,
                &format!("metadata.annotations.{key}"),
                "exclusive placement makes the controller create the workers only once the leader is scheduled, \
                 pinned to its topology domain, and lahar does not model it: remove the annotation to simulate the \
                 LeaderWorkerSet without it",
            );
        }
    }
    if let Some(Err(other)) = scheduler_of(d) {
        let at = spec.get("leaderWorkerTemplate").and_then(|t| t.get("leaderTemplate")).and_then(|t| t.at);
        ck.err(
            at,
            "spec.leaderWorkerTemplate.leaderTemplate.spec.schedulerName",
            format!("the leader's pods name scheduler `{other}` and the workers' another: a group is placed by one scheduler"),
        );
    }
    let replicas = ck.opt_count(spec, "replicas", "spec", 0).unwrap_or(1) as u32;
    let Some(lwt) = spec.get("leaderWorkerTemplate").filter(|t| t.val != Val::Null) else {
        ck.err(spec.at, "spec.leaderWorkerTemplate", "a LeaderWorkerSet needs a `leaderWorkerTemplate`");
        return Vec::new();
    };
    let lp = "spec.leaderWorkerTemplate";
    let size = ck.opt_count(lwt, "size", lp, 1).unwrap_or(1) as u32;
    // Every group's pods at once, bounded as any job's pods are.
    let total = ck.pods(lwt.get("size").and_then(|n| n.at).or(lwt.at), &join(lp, "size"), replicas, size);
    let leader_ready = match ck.opt_str(spec, "startupPolicy", "spec").as_deref() {
        None | Some("LeaderCreated") => false,
        Some("LeaderReady") => true,
        Some(other) => {
            let at = spec.get("startupPolicy").and_then(|n| n.at);
            ck.err(at, "spec.startupPolicy", format!("expected `LeaderCreated` or `LeaderReady`, got `{other}`"));
            false
        }
    };
    let recreate = match ck.opt_str(lwt, "restartPolicy", lp).as_deref() {
        None | Some("RecreateGroupOnPodRestart") | Some("RecreateGroupAfterStart") => true,
        Some("None") | Some("Default") => false,
        Some(other) => {
            let at = lwt.get("restartPolicy").and_then(|n| n.at);
            ck.err(
                at,
                &join(lp, "restartPolicy"),
                format!(
                    "expected `RecreateGroupOnPodRestart`, `RecreateGroupAfterStart`, `None` or `Default`, got `{other}`"
                ),
            );
            false
        }
    };
    sub_group_policy(ck, lwt, lp, size);
    let Some(wt) = lwt.get("workerTemplate").filter(|t| t.val != Val::Null) else {
        ck.err(lwt.at, &join(lp, "workerTemplate"), "a LeaderWorkerSet needs a `workerTemplate`");
        return Vec::new();
    };
    // LWS runs its pods in StatefulSets (the leaders', and one per group for
    // its workers), whose pods restart `Always`: LWS's webhook lets another
    // policy through, and the API server then rejects the StatefulSet.
    let (whose, rejected) = ("a LeaderWorkerSet's", "the StatefulSet LeaderWorkerSet makes from the template");
    let wp = join(lp, "workerTemplate");
    let worker = common::pod_shape(ck, cx, wt, &wp);
    common::no_container_exit(ck, &worker, &wp);
    common::restarts_always(ck, wt, &wp, whose, rejected);
    let leader = match lwt.get("leaderTemplate").filter(|t| t.val != Val::Null) {
        Some(t) => {
            let p = join(lp, "leaderTemplate");
            let s = common::pod_shape(ck, cx, t, &p);
            common::no_container_exit(ck, &s, &p);
            common::restarts_always(ck, t, &p, whose, rejected);
            s
        }
        None => worker.clone(),
    };
    let queue = common::owner_queue(ck, cx, &meta);
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    if !ck.ok() || total == 0 {
        return Vec::new();
    }
    let (Some(queue), Some(timing)) = (queue, timing) else { return Vec::new() };
    let revision = common::derived_chars(ck, "template-revision-hash", 10);
    let min_member = if leader_ready { 1 } else { size };
    let mut out = Vec::with_capacity(replicas as usize);
    for i in 0..replicas {
        let leader_name = format!("{}-{i}", meta.name);
        let group_key = common::derived_chars(ck, &format!("group-key-{i}"), 16);
        let (index, name) = (i.to_string(), meta.name.clone());
        let labels = [
            (format!("{LABEL}/name"), name.as_str()),
            (format!("{LABEL}/group-index"), index.as_str()),
            (format!("{LABEL}/group-key"), group_key.as_str()),
            (format!("{LABEL}/template-revision-hash"), revision.as_str()),
        ];
        let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let mut lead = common::task("leader", 1, 0, &leader);
        common::add_labels(&mut lead, &labels);
        let mut tasks = vec![lead];
        if size > 1 {
            let mut w = common::task("worker", size - 1, 0, &worker);
            common::add_labels(&mut w, &labels);
            if leader_ready {
                w.depends_on = vec![Dependency::running(0)];
            }
            tasks.push(w);
        }
        let head = JobHead {
            name: format!("{}-{i}-{revision}", meta.name),
            namespace: meta.namespace.clone(),
            kind: "LeaderWorkerSet".to_string(),
            queue,
            priority_class: None,
            min_available: min_member,
            timing: timing.clone(),
            grace: leader.grace.max(worker.grace.filter(|_| size > 1)),
        };
        let (mut j, profile) = common::assemble(head, tasks, cx);
        super::apps::controller_group(ck, Some(&meta), &leader, &mut j);
        // Pods without Volcano's task-spec annotation: one role, so no role
        // minimum splits the gang.
        if size > 1 {
            j.roles = Some(Box::new([0, 0]));
        }
        if recreate {
            j.policies = [PolicyEvent::PodEvicted, PolicyEvent::PodFailed]
                .into_iter()
                .map(|event| Policy { event, action: PolicyAction::RestartJob, timeout: None })
                .collect();
            j.max_retry = u32::MAX;
        }
        j.min_resources = leader.requests + worker.requests.times(i64::from(size - 1));
        let workers = (1..size).map(|w| format!("{leader_name}-{w}")).collect();
        j.pod_names = Some(Box::new(if size > 1 { vec![vec![leader_name], workers] } else { vec![vec![leader_name]] }));
        out.push(ImportedJob { spec: j, profile, file: d.file.clone(), doc: d.label(), at: root.at });
    }
    out
}

/// The LeaderWorkerSet and group index of a job this module made.
pub(crate) fn group_of(job: &JobSpec) -> Option<(&str, u32)> {
    if &*job.kind != "LeaderWorkerSet" {
        return None;
    }
    Some((common::pod_label(job, LABEL, "name")?, common::pod_label(job, LABEL, "group-index")?.parse().ok()?))
}

/// Group `i` of a LeaderWorkerSet, as its controller makes it, from its group
/// `first`: the same pods, named and labelled for index `i` (the PodGroup
/// `<name>-<i>-<revision>`, the leader `<name>-<i>`, the workers
/// `<name>-<i>-<w>`). `ck` names the LeaderWorkerSet's object (group keys derive
/// from it as at reading).
pub(crate) fn group_like(ck: &Ck<'_>, first: &JobSpec, i: u32) -> Option<JobSpec> {
    let (name, _) = group_of(first)?;
    let (name, revision) = (name.to_string(), common::pod_label(first, LABEL, "template-revision-hash")?.to_string());
    let mut j = first.clone();
    let leader_name = format!("{name}-{i}");
    let group_key = common::derived_chars(ck, &format!("group-key-{i}"), 16);
    let index = i.to_string();
    let labels = [(format!("{LABEL}/group-index"), index.as_str()), (format!("{LABEL}/group-key"), group_key.as_str())];
    let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    for t in &mut j.tasks {
        common::add_labels(t, &labels);
    }
    j.name = format!("{name}-{i}-{revision}");
    let size: u32 = j.tasks.iter().map(|t| t.replicas).sum();
    let workers: Vec<String> = (1..size).map(|w| format!("{leader_name}-{w}")).collect();
    j.pod_names = Some(Box::new(if size > 1 { vec![vec![leader_name], workers] } else { vec![vec![leader_name]] }));
    j.group = None;
    Some(j)
}

/// Group `i` of an autoscaled LeaderWorkerSet (see [`group_like`]; its group
/// keys derive from the object's place, `set.origin`, as at reading).
pub(crate) fn make_group(set: &lahar_core::model::job::GroupSet, i: u32) -> Option<JobSpec> {
    let mut errs = Vec::new();
    let ck = Ck::for_object(&set.origin.0, &set.origin.1, &mut errs);
    group_like(&ck, &set.first, i)
}

/// The group index a job named `name` would have among the groups of the
/// LeaderWorkerSet whose group is `first` (`<lws>-<i>-<revision>`).
pub(crate) fn index_in_name(first: &JobSpec, name: &str) -> Option<u32> {
    let (lws, _) = group_of(first)?;
    let revision = common::pod_label(first, LABEL, "template-revision-hash")?;
    name.strip_prefix(lws)?.strip_prefix('-')?.strip_suffix(revision)?.strip_suffix('-')?.parse().ok()
}

/// `subGroupPolicy`, checked as the LWS webhook checks it (it only labels pods
/// and scopes exclusive placement, which lahar refuses).
fn sub_group_policy(ck: &mut Ck<'_>, lwt: &Node, lp: &str, size: u32) {
    let Some(p) = lwt.get("subGroupPolicy").filter(|p| p.val != Val::Null) else { return };
    let pp = join(lp, "subGroupPolicy");
    let excluded = match ck.opt_str(p, "subGroupPolicyType", &pp).as_deref() {
        None | Some("LeaderWorker") => false,
        Some("LeaderExcluded") => true,
        Some(other) => {
            let at = p.get("subGroupPolicyType").and_then(|n| n.at);
            let msg = format!("expected `LeaderWorker` or `LeaderExcluded`, got `{other}`");
            ck.err(at, &join(&pp, "subGroupPolicyType"), msg);
            false
        }
    };
    let Some(sub) = ck.opt_count(p, "subGroupSize", &pp, 1) else { return };
    let sub = sub as u32;
    let at = p.get("subGroupSize").and_then(|n| n.at);
    let sp = join(&pp, "subGroupSize");
    if sub > size {
        ck.err(at, &sp, format!("subGroupSize {sub} cannot be larger than size {size}"));
    } else if excluded && !(size - 1).is_multiple_of(sub) {
        ck.err(at, &sp, format!("size − 1 ({}) must be divisible by subGroupSize {sub} with LeaderExcluded", size - 1));
    } else if !excluded && !size.is_multiple_of(sub) && !(size - 1).is_multiple_of(sub) {
        ck.err(at, &sp, format!("size ({size}) or size − 1 must be divisible by subGroupSize {sub}"));
    }
}
