//! Kubernetes `batch/v1` Jobs whose pods name `schedulerName: volcano`, as
//! Kubernetes' Job controller runs them and Volcano's PodGroup controller groups
//! them: one PodGroup per Job (`podgroup-<job uid>`), `minMember` the Job's
//! `scheduling.volcano.sh/group-min-member` annotation, else 1; `minResources`
//! `minMember` pods' requests; the queue of the pod template's
//! `scheduling.volcano.sh/queue-name` annotation (else `default`) and the
//! template's `priorityClassName`.
//!
//! The Job controller (`syncJob`, pkg/controller/job) keeps `min(parallelism,
//! completions − succeeded)` pods active, makes a new one as each succeeds until
//! `completions` have, replaces a pod that ends without succeeding and fails the
//! Job once more than `backoffLimit` have ([`lahar_core::model::job::BatchRules`]);
//! under `restartPolicy: OnFailure` a failing container (`lahar.io/fail-after`)
//! restarts in place, and the Job fails once its active pods' restarts reach
//! `backoffLimit` (`pastBackoffLimitOnFailure`).
//! Each pod runs the Job's `lahar.io/duration` (else its template's) and then
//! succeeds. Pods are named as the controller names them: `<job>-<5 characters>`,
//! or `<job>-<index>-<5 characters>` under `completionMode: Indexed`. A Job still
//! active `activeDeadlineSeconds` after its creation fails (`DeadlineExceeded`),
//! its active pods deleted ([`lahar_core::model::job::JobSpec::deadline`]).

use super::common::{self, Ck, JobHead};
use super::yaml::{Doc, Node, Val};
use super::{Context, ImportedJob};
use lahar_core::model::job::{BatchRules, InPlace};
use lahar_core::util::time::SimDuration;

/// Fields of a Job spec that change how its pods run or fail and that lahar
/// does not model: refused at their place.
const UNMODELLED: [(&str, &str); 4] = [
    ("podFailurePolicy", "decides which pod failures count against backoffLimit"),
    ("successPolicy", "ends the Job before all its completions"),
    ("backoffLimitPerIndex", "counts failures per index"),
    ("maxFailedIndexes", "fails the Job on failed indexes"),
];

pub(crate) fn job(d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Option<ImportedJob> {
    let root = &d.root;
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    for (key, what) in UNMODELLED {
        ck.unmodelled(spec, key, "spec", what, "Job");
    }
    let parallelism = ck.opt_count(spec, "parallelism", "spec", 0).unwrap_or(1) as u32;
    let completions = ck.opt_count(spec, "completions", "spec", 0).map_or(parallelism, |c| c as u32);
    let backoff_limit = ck.opt_count(spec, "backoffLimit", "spec", 0).unwrap_or(6) as u32;
    let deadline = ck.opt_secs(spec, "activeDeadlineSeconds", "spec");
    // `TerminatingOrFailed`, the default without a podFailurePolicy (which is
    // refused above): a deleted pod's replacement comes when its deletion starts.
    let replace_terminating = match ck.opt_str(spec, "podReplacementPolicy", "spec").as_deref() {
        None | Some("TerminatingOrFailed") => true,
        Some("Failed") => false,
        Some(other) => {
            let at = spec.get("podReplacementPolicy").and_then(|n| n.at);
            let msg = format!("expected `TerminatingOrFailed` or `Failed`, got `{other}`");
            ck.err(at, "spec.podReplacementPolicy", msg);
            true
        }
    };
    let indexed = match ck.opt_str(spec, "completionMode", "spec").as_deref() {
        None | Some("NonIndexed") => false,
        Some("Indexed") => true,
        Some(other) => {
            let at = spec.get("completionMode").and_then(|n| n.at);
            ck.err(at, "spec.completionMode", format!("expected `NonIndexed` or `Indexed`, got `{other}`"));
            false
        }
    };
    let Some(tpl) = spec.get("template") else {
        ck.err(spec.at, "spec.template", "a Job needs a pod `template`");
        return None;
    };
    let shape = common::pod_shape(ck, cx, tpl, "spec.template");
    // The API server defaults a pod template's restartPolicy to Always, which a
    // Job's validation refuses.
    let tspec = tpl.get("spec");
    let policy = tspec.and_then(|s| ck.opt_str(s, "restartPolicy", "spec.template.spec"));
    // (A value outside the enum is refused with the shape.)
    if matches!(policy.as_deref(), None | Some("Always")) {
        let at = tspec.and_then(|s| s.get("restartPolicy")).and_then(|n| n.at).or(tpl.at);
        let got = policy.map_or("the default `Always`".to_string(), |p| format!("`{p}`"));
        let msg = format!("a Job's pods restart `Never` or `OnFailure`, got {got} (Kubernetes rejects the Job)");
        ck.err(at, "spec.template.spec.restartPolicy", msg);
    }
    let most = parallelism.min(completions).max(1);
    let min_member = super::apps::group_min_member(ck, &meta, most, format!("the pods the Job runs at once ({most})"));
    let q = super::apps::template_queue(ck, cx, &shape, root);
    let class = tpl.get("spec").and_then(|s| ck.opt_str(s, "priorityClassName", "spec.template.spec"));
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    // Each pod runs the template's duration, else the Job's; the Job itself
    // ends when its completions have succeeded.
    let run_time = common::task_run_time(ck, &shape, "spec.template")
        .or(timing.as_ref().map(|t| t.duration).filter(|d| *d != SimDuration::UNBOUNDED && d.micros() > 0));
    // Under `OnFailure` the kubelet restarts a failed container in place and
    // the Job controller counts the restarts against `backoffLimit`.
    let exits = common::container_exit(ck, &shape, tpl, "spec.template", InPlace { task_max_retry: None });
    common::no_stop_exit_code(ck, &shape, "spec.template");
    if !ck.ok() {
        return None;
    }
    let mut timing = timing?;
    if run_time.is_some() {
        timing.duration = SimDuration::UNBOUNDED;
    }
    let head = JobHead {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        kind: "Job".to_string(),
        queue: q?,
        priority_class: class,
        min_available: min_member,
        timing,
        grace: shape.grace,
    };
    let mut task = common::task(&meta.name, completions, 0, &shape);
    task.run_time = run_time;
    task.exits = exits;
    let (mut j, profile) = common::assemble(head, vec![task], cx);
    super::apps::controller_group(ck, Some(&meta), &shape, &mut j);
    j.batch = Some(BatchRules { parallelism, backoff_limit, replace_terminating });
    // The deadline bounds the Job's run time as a Slurm time limit does: the
    // estimate, unless `lahar.io/estimate` gives one.
    j.deadline = deadline;
    j.estimate = j.estimate.or(deadline.filter(|d| d.micros() > 0));
    // Kubernetes fails the Job once more than backoffLimit pods failed.
    j.max_retry = backoff_limit.saturating_add(1);
    // Volcano's CalTaskRequests: minMember pods' requests.
    j.min_resources = shape.requests.times(i64::from(min_member));
    let names: Vec<String> = (0..completions)
        .map(|i| {
            let suffix = common::derived_chars(ck, &i.to_string(), 5);
            if indexed { format!("{}-{i}-{suffix}", meta.name) } else { format!("{}-{suffix}", meta.name) }
        })
        .collect();
    j.pod_names = Some(Box::new(vec![names]));
    Some(ImportedJob { spec: j, profile, file: d.file.clone(), doc: d.label(), at: root.at })
}
