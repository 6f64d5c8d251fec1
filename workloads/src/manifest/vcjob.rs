//! `batch.volcano.sh/v1alpha1` Job (VolcanoJob), as Volcano's admission webhook
//! defaults it and its job controller turns it into a PodGroup and pods.

use super::common::{self, Ck, JobHead, join};
use super::subgroup;
use super::yaml::{At, Doc, Node, Val};
use super::{Context, ImportedJob};
use lahar_core::model::job::{ContainerExit, Dependency, InPlace, Policy, PolicyAction, PolicyEvent, TaskSpec};
use lahar_core::util::time::SimDuration;
use std::collections::BTreeMap;

pub(crate) fn job(d: &Doc, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Option<ImportedJob> {
    let root = &d.root;
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    let sp = "spec";
    let sched = ck.opt_str(spec, "schedulerName", sp);
    common::check_scheduler(ck, sched.as_deref(), spec.get("schedulerName").and_then(|n| n.at), "spec.schedulerName");
    let job_class = ck.opt_str(spec, "priorityClassName", sp);
    let raw_tasks = ck.seq(spec, "tasks", sp);
    if raw_tasks.is_empty() {
        ck.err(spec.at, "spec.tasks", "a Job needs at least one task");
    }
    // Task names first: dependsOn may name a later task.
    let mut names: Vec<String> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for (i, t) in raw_tasks.iter().enumerate() {
        let tp = format!("spec.tasks[{i}]");
        // The webhook names unnamed tasks `default<i>`.
        let name = ck.opt_str(t, "name", &tp).unwrap_or_else(|| format!("default{i}"));
        if index.insert(name.clone(), i).is_some() {
            ck.err(t.get("name").and_then(|n| n.at), &join(&tp, "name"), format!("task `{name}` is defined twice"));
        }
        names.push(name);
    }
    let mut tasks = Vec::new();
    let mut partitions: Vec<Option<lahar_core::model::subgroup::Partition>> = Vec::new();
    let mut grace: Option<SimDuration> = None;
    // Tasks whose containers restart in place (index, place).
    let mut restarting = Vec::new();
    for (i, t) in raw_tasks.iter().enumerate() {
        let tp = format!("spec.tasks[{i}]");
        // Volcano's CRD gives `replicas` no default: a task without it has no pod.
        let replicas = ck.opt_count(t, "replicas", &tp, 0).unwrap_or(0) as u32;
        if t.get("replicas").is_none_or(|n| n.val == Val::Null) {
            let name = &names[i];
            cx.left_out.push(super::Diagnostic {
                file: ck.file.clone(),
                at: t.at,
                path: format!("{}: {tp}.replicas", ck.doc),
                message: format!(
                    "task `{name}` has no `replicas`, so it has no pod (Volcano's CRD gives the field no default)"
                ),
            });
        }
        let given = ck.opt_int(t, "minAvailable", &tp, 0).map(|m| m as u32);
        let part = subgroup::partition(ck, cx.tiers, t, &tp, replicas, given);
        let min = match given {
            Some(m) if m > replicas => {
                ck.err(
                    t.get("minAvailable").and_then(|n| n.at),
                    &join(&tp, "minAvailable"),
                    format!("must not exceed replicas ({replicas}), got {m}"),
                );
                replicas
            }
            Some(m) => m,
            // The webhook's default: minPartitions × partitionSize when
            // minPartitions is set, else every replica.
            None => part.as_ref().filter(|p| p.min > 0).map_or(replicas, |p| p.min * p.size),
        };
        partitions.push(part);
        let Some(tpl) = t.get("template") else {
            ck.err(t.at, &join(&tp, "template"), "a task needs a pod `template`");
            continue;
        };
        let tplp = join(&tp, "template");
        let tpl = with_job_keys(tpl, &meta);
        let mut shape = common::pod_shape(ck, cx, &tpl, &tplp);
        let tspec = tpl.get("spec");
        // The controller gives pods the job's PriorityClass when their template has none.
        let own = tspec.is_some_and(|s| s.get("priorityClassName").is_some() || s.get("priority").is_some());
        if !own
            && !shape.annotations.contains_key("volcano.sh/task-priority")
            && let Some(c) = job_class.as_ref().and_then(|c| cx.priority_classes.by_name.get(c))
        {
            shape.priority = c.value;
        }
        grace = grace.max(shape.grace);
        // The job controller writes a task's topologyPolicy into its pods'
        // `volcano.sh/numa-topology-policy`, over the template's.
        if let Some(n) = t.get("topologyPolicy") {
            let v = n.scalar().unwrap_or_default();
            if !v.is_empty()
                && let Some(p) = super::numa::policy(ck, &v, n.at, &join(&tp, "topologyPolicy"))
            {
                super::numa::set_policy(&mut shape.hints, p);
            }
        }
        let mut task = common::task(&names[i], replicas, min, &shape);
        task.policies = common::policies(ck, t, &tp);
        // A task's own run time: its pods' `lahar.io/duration`.
        task.run_time = common::task_run_time(ck, &shape, &tplp);
        // The task's `maxRetry`: the restarts in place of its containers at
        // which `TaskFailed` is raised (0 is 3, -1 no limit).
        let task_max_retry = match ck.opt_int(t, "maxRetry", &tp, -1) {
            Some(-1) => None,
            Some(n) if n > 0 => Some(n.min(u32::MAX as i64) as u32),
            _ => Some(3),
        };
        task.exits = common::container_exit(ck, &shape, &tpl, &tplp, InPlace { task_max_retry });
        task.stop_code = common::stop_exit_code(ck, &shape, &tplp);
        // Under `restartPolicy: Always` (the API server's default for a pod)
        // the kubelet restarts a container that succeeded too: the task's run
        // time ends no pod but each run of its container, which restarts in
        // place; its pods end with their job.
        let policy = tspec.and_then(|s| s.get("restartPolicy")).and_then(Node::scalar);
        let always = policy.is_none_or(|p| p == "Always");
        if let Some(d) = task.run_time.filter(|d| always && task.exits.is_none_or(|e| *d <= e.after)) {
            task.exits = Some(ContainerExit { after: d, code: 0, in_place: Some(InPlace { task_max_retry }) });
            task.run_time = None;
        }
        if let Some(dep) = t.get("dependsOn") {
            let dp = join(&tp, "dependsOn");
            for (k, n) in ck.seq(dep, "name", &dp).iter().enumerate() {
                let Some(n) = ck.str(n, &format!("{dp}.name[{k}]")) else { continue };
                match index.get(&n) {
                    Some(&x) if x == i => ck.err(dep.at, &dp, format!("task `{n}` cannot depend on itself")),
                    Some(&x) => task.depends_on.push(Dependency::available(x)),
                    None => ck.err(dep.at, &dp, format!("task `{n}` does not exist in job `{}`", meta.name)),
                }
            }
            task.depends_any = match ck.opt_str(dep, "iteration", &dp).as_deref() {
                None | Some("all") => false,
                Some("any") => true,
                Some(o) => {
                    ck.err(
                        dep.get("iteration").and_then(|n| n.at),
                        &join(&dp, "iteration"),
                        format!("expected `any` or `all`, got `{o}`"),
                    );
                    false
                }
            };
        }
        if task.exits.is_some_and(|e| e.in_place.is_some()) {
            restarting.push((i, t.at));
        }
        tasks.push(task);
    }
    let total: u32 = tasks.iter().map(|t| t.replicas).sum();
    // Webhook default (`patchDefaultMinAvailable`), for a value absent or 0: Σ
    // task minAvailable (a task's defaults to its replicas).
    let min_available = match ck.opt_int(spec, "minAvailable", sp, 0).filter(|&m| m > 0) {
        Some(m) if m as u32 > total => {
            ck.err(
                spec.get("minAvailable").and_then(|n| n.at),
                "spec.minAvailable",
                format!("must not exceed the total replicas of all tasks ({total}), got {m}"),
            );
            total
        }
        Some(m) => m as u32,
        None => tasks.iter().map(|t| t.min_available).sum(),
    };
    let qname = ck.opt_str(spec, "queue", sp).unwrap_or_else(|| "default".into());
    let q = common::queue(ck, cx, &qname, spec.get("queue").and_then(|n| n.at).or(root.at), "spec.queue");
    // Webhook default (`patchDefaultMaxRetry`): 3 for a value absent or 0.
    let max_retry = ck.opt_int(spec, "maxRetry", sp, 0).filter(|&x| x > 0).map(|x| x as u32);
    // The CRD's minimum is 1; the webhook sets no maximum (a minSuccess above the
    // replicas only makes the job Fail when every pod has ended).
    let min_success = ck.opt_count(spec, "minSuccess", sp, 1).map(|x| x as u32);
    let job_policies = common::policies(ck, spec, sp);
    let nt = spec.get("networkTopology").map(|n| common::network_topology(ck, cx.tiers, n, "spec.networkTopology"));
    // Plugins (ssh, svc, env, pytorch, mpi, tensorflow, ray) add environment, services,
    // ports and secrets; none changes what the scheduler sees. Unknown names are errors.
    for (k, n) in ck.map(spec, "plugins", sp) {
        if !["ssh", "svc", "env", "pytorch", "mpi", "tensorflow", "ray"].contains(&k.as_str()) {
            ck.err(
                n.at,
                &format!("spec.plugins.{k}"),
                format!("unknown plugin `{k}`; expected ssh, svc, env, pytorch, mpi, tensorflow or ray"),
            );
        }
    }
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    if let (None, Some(t)) = (cx.horizon, &timing) {
        for &(i, at) in &restarting {
            endless_restarts(ck, &tasks[i], &job_policies, t.duration, at, &format!("spec.tasks[{i}]"));
        }
    }
    let topology = task_topology(ck, &meta.annotations, &tasks);
    // The job controller gives the PodGroup the job's annotations and labels.
    let group_preemptable = common::group_preemptable(ck, &meta.labels, &meta.annotations, "");
    let disruption = common::group_disruption(ck, &meta.annotations, "");
    let sla_waiting = common::group_sla_waiting(ck, &meta.annotations, "");
    if !ck.ok() {
        return None;
    }
    if let Some(c) = lahar_core::model::job::dependency_cycle(&tasks) {
        ck.err(spec.at, "spec.tasks", format!("dependsOn cycle: {c}"));
        return None;
    }
    let head = JobHead {
        name: meta.name,
        namespace: meta.namespace,
        kind: "VolcanoJob".into(),
        queue: q?,
        priority_class: job_class,
        min_available,
        timing: timing?,
        grace,
    };
    let (mut spec_out, profile) = common::assemble(head, tasks, cx);
    // The job controller labels every pod with its job, namespace, queue and task.
    for t in &mut spec_out.tasks {
        let own = lahar_core::model::job::volcano_pod_labels(&spec_out.name, &spec_out.namespace, &qname, &t.name);
        let own: Vec<(&str, &str)> = own.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        common::add_labels(t, &own);
    }
    spec_out.policies = job_policies;
    spec_out.preemptable = group_preemptable;
    spec_out.sla_waiting = sla_waiting;
    // syncJob creates the pods only once the PodGroup has left Pending.
    spec_out.pods_once_admitted = true;
    spec_out.disruption = disruption;
    spec_out.network_topology = nt;
    let names: Vec<std::sync::Arc<str>> = spec_out.tasks.iter().map(|t| t.name.clone()).collect();
    spec_out.sub_groups = lahar_core::model::subgroup::from_partitions(&names, partitions);
    spec_out.task_topology = topology.map(Box::new);
    if let Some(m) = max_retry {
        spec_out.max_retry = m;
    }
    spec_out.min_success = min_success;
    Some(ImportedJob { spec: spec_out, profile, file: d.file.clone(), doc: d.label(), at: root.at })
}

/// The task-topology plugin's annotations: `volcano.sh/task-topology-affinity` and
/// `-anti-affinity` (`"ps,worker;chief"`: groups split by `;`, names by `,`) and
/// `-task-order` (`"ps,worker"`). Names must be tasks of the job (Volcano ignores the
/// job's annotations otherwise; lahar says so). Read from a VolcanoJob (whose
/// PodGroup the job controller gives them) and from a PodGroup given as a
/// manifest, whose tasks are its pods' roles (`volcano.sh/task-spec`, which the
/// plugin's `getTaskName` reads).
pub(crate) fn task_topology(
    ck: &mut Ck<'_>,
    ann: &BTreeMap<String, (String, super::yaml::At)>,
    tasks: &[lahar_core::model::job::TaskSpec],
) -> Option<lahar_core::model::job::TaskTopology> {
    const KEYS: [&str; 3] = [
        "volcano.sh/task-topology-affinity",
        "volcano.sh/task-topology-anti-affinity",
        "volcano.sh/task-topology-task-order",
    ];
    if KEYS.iter().all(|k| !ann.contains_key(*k)) {
        return None;
    }
    let mut names = |key: &str, text: &str, at: super::yaml::At| -> Vec<String> {
        let mut out = Vec::new();
        for n in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if tasks.iter().any(|t| &*t.name == n) {
                out.push(n.to_string());
            } else {
                let known: Vec<&str> = tasks.iter().map(|t| &*t.name).collect();
                ck.err(
                    at,
                    &format!("metadata.annotations.{key}"),
                    format!("unknown task `{n}`; the job's tasks are: {}", known.join(", ")),
                );
            }
        }
        out
    };
    let mut groups = |key: &str| -> Vec<Vec<String>> {
        match ann.get(key) {
            Some((text, at)) => {
                text.split(';').map(|g| names(key, g, *at)).filter(|g: &Vec<String>| !g.is_empty()).collect()
            }
            None => Vec::new(),
        }
    };
    let affinity = groups(KEYS[0]);
    let anti_affinity = groups(KEYS[1]);
    let task_order = groups(KEYS[2]).concat();
    Some(lahar_core::model::job::TaskTopology { affinity, anti_affinity, task_order })
}

/// The pod template as the job controller makes its pods (`createJobPod`): the
/// job's `volcano.sh/preemptable`, `volcano.sh/cooldown-time` and
/// `volcano.sh/revocable-zone` annotations, and its `volcano.sh/preemptable` and
/// `volcano.sh/cooldown-time` labels, replace the template's. The template
/// itself when the job has none of them.
fn with_job_keys<'t>(tpl: &'t Node, meta: &common::Meta) -> std::borrow::Cow<'t, Node> {
    const ANNOTATIONS: [&str; 3] = ["volcano.sh/preemptable", "volcano.sh/cooldown-time", "volcano.sh/revocable-zone"];
    const LABELS: [&str; 2] = ["volcano.sh/preemptable", "volcano.sh/cooldown-time"];
    let pick = |keys: &[&str], from: &BTreeMap<String, (String, super::yaml::At)>| -> Vec<(String, Node)> {
        keys.iter()
            .filter_map(|&k| from.get(k).map(|(v, at)| (k.to_string(), Node { at: *at, val: Val::Str(v.clone()) })))
            .collect()
    };
    let (annotations, labels) = (pick(&ANNOTATIONS, &meta.annotations), pick(&LABELS, &meta.labels));
    if annotations.is_empty() && labels.is_empty() {
        return std::borrow::Cow::Borrowed(tpl);
    }
    let mut out = tpl.clone();
    let root = map_of(&mut out, "metadata");
    for (field, keys) in [("annotations", annotations), ("labels", labels)] {
        if keys.is_empty() {
            continue;
        }
        let m = map_of(root, field);
        if let Val::Map(entries) = &mut m.val {
            for (k, v) in keys {
                match entries.iter_mut().find(|(e, _)| *e == k) {
                    Some(e) => e.1 = v,
                    None => entries.push((k, v)),
                }
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The mapping under `key` of mapping `n`, made (empty) when absent or null.
fn map_of<'n>(n: &'n mut Node, key: &str) -> &'n mut Node {
    let at = n.at;
    if !matches!(n.val, Val::Map(_)) {
        n.val = Val::Map(Vec::new());
    }
    let Val::Map(entries) = &mut n.val else { unreachable!("made a mapping above") };
    let i = match entries.iter().position(|(k, _)| k == key) {
        Some(i) => i,
        None => {
            entries.push((key.to_string(), Node { at, val: Val::Map(Vec::new()) }));
            entries.len() - 1
        }
    };
    let child = &mut entries[i].1;
    if !matches!(child.val, Val::Map(_)) {
        child.val = Val::Map(Vec::new());
    }
    child
}

/// A task whose containers restart in place forever keeps its job, and so a
/// run without a horizon, from ending: unless its own run time ends a failing
/// container first, the job's work (of `job_duration`) ends containers that
/// succeed (`Always`: no work is lost at their restarts), or a `TaskFailed`
/// policy that ends or restarts the job (restarts count towards its
/// `maxRetry`) comes with a task `maxRetry`, the scenario needs `spec.horizon`.
fn endless_restarts(
    ck: &mut Ck<'_>,
    task: &TaskSpec,
    job_policies: &[Policy],
    job_duration: SimDuration,
    at: At,
    path: &str,
) {
    let Some(e) = task.exits else { return };
    let Some(in_place) = e.in_place else { return };
    if task.run_time.is_some_and(|d| d <= e.after) || (e.code == 0 && job_duration != SimDuration::UNBOUNDED) {
        return;
    }
    let ends = |p: &Policy| p.event.matches(PolicyEvent::TaskFailed) && p.action != PolicyAction::ResumeJob;
    if in_place.task_max_retry.is_some() && task.policies.iter().chain(job_policies).any(ends) {
        return;
    }
    let after = e.after.secs_string();
    let msg = if e.code == 0 {
        format!(
            "its containers succeed after their run time ({after} s) and the kubelet restarts them in place (`restartPolicy: Always`, the default), so its pods never end: give the template `restartPolicy: OnFailure` or `Never`, give the job a `lahar.io/duration` (its pods end with it), set `spec.horizon` in the scenario, or give the task a `maxRetry` and the job a `TaskFailed` policy that ends or restarts it"
        )
    } else {
        format!(
            "its containers fail every {after} s and restart in place (`restartPolicy` `OnFailure` or `Always`) with nothing to end them: set `spec.horizon` in the scenario, or give the task a `maxRetry` and the job a `TaskFailed` policy that ends or restarts it"
        )
    };
    ck.err(at, path, msg);
}
