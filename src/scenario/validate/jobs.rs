//! `jobs:` sources: jobs written out in the scenario, their tasks, policies and
//! topology constraints.

use super::{MAX_REPLICAS, Source, Targets, UNSCHEDULABLE, V, at, comm, fits_somewhere, largest, queues};
use crate::scenario::raw::*;
use lahar_core::model::cluster::Node;
use lahar_core::model::job::{
    DEFAULT_TERMINATION_GRACE, Dependency, JobSpec, NetworkTopology, Policy, PolicyAction, PolicyEvent, TaskSpec,
    TaskTopology,
};
use lahar_core::model::resource::{PODS, Resources};
use lahar_core::model::subgroup::{Partition, from_partitions};
use lahar_core::util::time::{SimDuration, SimTime};
use lahar_workloads::manifest::PriorityClasses;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

fn job(
    v: &mut V<'_>,
    rj: &Spanned<RawJob>,
    path: &str,
    tg: &Targets<'_>,
    classes: &PriorityClasses,
    iterations: bool,
) -> Option<JobSpec> {
    let (queues, node_ids) = (tg.queues, tg.node_ids);
    let before = v.errors.len();
    let r = &rj.value;
    // Job priority: the named class's value (as Volcano reads the PodGroup's class),
    // else `priority`, else the global-default class, else 0. Pods without their own
    // `priority` get the class's value too (Kubernetes admission).
    let class = r.priority_class_name.as_ref().and_then(|c| match classes.by_name.get(&c.value) {
        Some(pc) => {
            if r.priority.is_some() {
                v.err(
                    at(c),
                    format!("{path}.priorityClassName"),
                    "give either `priority` or `priorityClassName`, not both (the class sets the priority)",
                );
            }
            Some((c.value.clone(), pc.value))
        }
        None => {
            let known: Vec<&str> = classes.by_name.keys().map(String::as_str).collect();
            v.err(
                at(c),
                format!("{path}.priorityClassName"),
                format!("PriorityClass `{}` does not exist; defined classes: {}", c.value, known.join(", ")),
            );
            None
        }
    });
    let job_priority = match &class {
        Some((_, value)) => *value,
        None => r.priority.or(classes.global_default()).unwrap_or(0),
    };
    let pod_priority = class.as_ref().map(|c| c.1).or(classes.global_default()).unwrap_or(1);
    // The pods' preemptionPolicy is their class's (Kubernetes' admission).
    let pod_class = match &class {
        Some((name, _)) => classes.by_name.get(name),
        None => classes.by_name.values().find(|c| c.global_default),
    };
    let never_preempts = pod_class.is_some_and(|c| c.preemption_policy == "Never");
    if let Some(why) = lahar_core::util::text::part_name_problem(&r.name.value) {
        v.err(at(&r.name), format!("{path}.name"), why);
    }
    if let Some(why) = r.namespace.as_deref().and_then(lahar_core::util::text::part_name_problem) {
        v.err(at(rj), format!("{path}.namespace"), why);
    }
    for (i, t) in r.tasks.iter().enumerate() {
        if let Some(why) = lahar_core::util::text::part_name_problem(&t.value.name.value) {
            v.err(at(&t.value.name), format!("{path}.tasks[{i}].name"), why);
        }
    }
    if r.name.value.is_empty() {
        v.err(at(&r.name), format!("{path}.name"), "expected a non-empty name");
    }
    let submit = r.submit_at.as_ref().and_then(|d| v.duration(d, &format!("{path}.submitAt"))).unwrap_or_default();
    let queue = match &r.queue {
        Some(q) => queues::queue_ref(v, queues, &q.value, at(q), &format!("{path}.queue")),
        None => queues::queue_ref(v, queues, "default", at(rj), &format!("{path}.queue")),
    };
    let duration = match (&r.duration, iterations) {
        (Some(d), false) => v.duration(d, &format!("{path}.duration")),
        (None, true) => Some(SimDuration::ZERO), // priced from the model once the cluster is known
        (Some(d), true) => {
            v.err(at(d), format!("{path}.duration"), "give either `duration` or `model.iterations`, not both");
            None
        }
        (None, false) => Some(v.default_duration.unwrap_or(SimDuration::UNBOUNDED)),
    };
    if r.tasks.is_empty() {
        v.err(at(rj), format!("{path}.tasks"), "a job needs at least one task");
    }
    let mut task_names: BTreeMap<String, usize> = BTreeMap::new();
    for (i, t) in r.tasks.iter().enumerate() {
        if task_names.insert(t.value.name.value.clone(), i).is_some() {
            v.err(
                at(&t.value.name),
                format!("{path}.tasks[{i}].name"),
                format!("task `{}` is defined twice", t.value.name.value),
            );
        }
    }
    let mut tasks = Vec::new();
    let mut partitions: Vec<Option<Partition>> = Vec::new();
    for (i, rt) in r.tasks.iter().enumerate() {
        let t = &rt.value;
        let tpath = format!("{path}.tasks[{i}]");
        let mut replicas = v.count(&t.replicas, &format!("{tpath}.replicas"), 0).unwrap_or(0);
        if replicas as usize > MAX_REPLICAS {
            let why = format!("{replicas} replicas; a task has at most {MAX_REPLICAS}");
            v.err(at(&t.replicas), format!("{tpath}.replicas"), why);
            replicas = 0;
        }
        let part = t.partition_policy.as_ref().and_then(|p| partition(v, p, replicas, &tpath));
        let min_available = match &t.min_available {
            Some(m) => {
                let x = v.count(m, &format!("{tpath}.minAvailable"), 0).unwrap_or(0);
                if x > replicas {
                    v.err(
                        at(m),
                        format!("{tpath}.minAvailable"),
                        format!("must not exceed replicas ({replicas}), got {x}"),
                    );
                }
                if let Some(p) = part.as_ref().filter(|p| p.min > 0 && p.min * p.size != x) {
                    v.err(
                        at(m),
                        format!("{tpath}.minAvailable"),
                        format!(
                            "must equal partitionPolicy.minPartitions × partitionSize ({} × {}), got {x}",
                            p.min, p.size
                        ),
                    );
                }
                x
            }
            // As Volcano's webhook: minPartitions × partitionSize when minPartitions
            // is set, else every replica.
            None => part.as_ref().filter(|p| p.min > 0).map_or(replicas, |p| p.min * p.size),
        };
        partitions.push(part);
        let mut requests = Resources::ZERO;
        // Under vNPU sharing the chip types' memory and core resources are the
        // pod's ask of chips, not resources of the node.
        let mut npu: BTreeMap<String, i64> = BTreeMap::new();
        let ignored = tg.vnpu.map(lahar_workloads::manifest::vnpu_ignored).unwrap_or_default();
        if let Some(res) = &t.resources {
            for (k, q) in &res.value {
                if ignored.contains(k) {
                    match lahar_core::util::quantity::parse_quantity(&q.0, 1) {
                        Ok(x) if x >= 0 => {
                            npu.insert(k.clone(), x);
                        }
                        _ => v.err(
                            at(res),
                            format!("{tpath}.resources.{k}"),
                            format!("expected a whole number ≥ 0, got `{}`", q.0),
                        ),
                    }
                    continue;
                }
                if k == "pods" {
                    v.err(
                        at(res),
                        format!("{tpath}.resources.pods"),
                        "every pod takes one `pods` slot; do not request it",
                    );
                    continue;
                }
                if let Some((d, x)) = v.quantity(k, q, at(res), &format!("{tpath}.resources.{k}")) {
                    requests.set(d, x);
                }
            }
        }
        requests.set(PODS, 1);
        let vgpu = vgpu_ask(v, &requests);
        let vnpu = tg.vnpu.and_then(|c| vnpu_ask(v, c, &requests, &npu, t, &tpath));
        let numa = numa_ask(v, t, &requests, &tpath);
        let mut depends_on = Vec::new();
        let mut depends_any = false;
        if let Some(d) = &t.depends_on {
            for n in &d.value.name {
                match task_names.get(n) {
                    Some(&k) if k == i => {
                        v.err(at(d), format!("{tpath}.dependsOn"), format!("task `{n}` cannot depend on itself"))
                    }
                    Some(&k) => depends_on.push(Dependency::available(k)),
                    None => v.err(
                        at(d),
                        format!("{tpath}.dependsOn"),
                        format!("task `{n}` does not exist in job `{}`", r.name.value),
                    ),
                }
            }
            depends_any = match d.value.iteration.as_deref() {
                None | Some("all") => false,
                Some("any") => true,
                Some(other) => {
                    v.err(
                        at(d),
                        format!("{tpath}.dependsOn.iteration"),
                        format!("expected `any` or `all`, got `{other}`"),
                    );
                    false
                }
            };
        }
        let mut host_ports: Vec<lahar_core::model::job::HostPort> = Vec::new();
        for (k, port) in t.host_ports.iter().flatten().enumerate() {
            let hp = lahar_core::model::job::HostPort {
                protocol: "TCP".into(),
                ip: lahar_core::model::job::HostPort::ANY_IP.into(),
                port: u16::try_from(port.value).unwrap_or(0),
            };
            if hp.port == 0 {
                let msg = format!("expected a port number from 1 to 65535, got {}", port.value);
                v.err(at(port), format!("{tpath}.hostPorts[{k}]"), msg);
            } else if host_ports.contains(&hp) {
                v.err(at(port), format!("{tpath}.hostPorts[{k}]"), format!("port {} is given twice", hp.port));
            } else {
                host_ports.push(hp);
            }
        }
        tasks.push(TaskSpec {
            node_label_in: Vec::new(),
            name: lahar_core::util::text::shared(&t.name.value),
            replicas,
            min_available,
            requests,
            priority: t.priority.unwrap_or(pod_priority),
            depends_on,
            depends_any,
            node_selector: t.node_selector.clone().unwrap_or_default().into_iter().collect(),
            policies: policies(v, t.policies.as_ref(), &tpath),
            preemptable: t.preemptable.unwrap_or(true),
            never_preempts,
            tolerations: Vec::new(),
            hints: lahar_core::model::job::PodHints { vgpu, vnpu, numa, host_ports, ..Default::default() }.shared(),
            run_time: t.duration.as_ref().and_then(|d| match v.duration(d, &format!("{tpath}.duration")) {
                Some(SimDuration(0)) => {
                    v.err(at(d), format!("{tpath}.duration"), "must be longer than 0");
                    None
                }
                x => x,
            }),
            exits: container_exit(v, t, &tpath),
            stop_code: stop_exit_code(v, t, &tpath),
        });
    }
    if let Some(cycle) = lahar_core::model::job::dependency_cycle(&tasks) {
        v.err(at(rj), format!("{path}.tasks"), format!("dependsOn cycle: {cycle}"));
    }
    let total: u64 = tasks.iter().map(|t| u64::from(t.replicas)).sum();
    if total > MAX_REPLICAS as u64 {
        let why = format!("{total} pods over its tasks; a job has at most {MAX_REPLICAS}");
        v.err(at(rj), format!("{path}.tasks"), why);
    }
    let total = total.min(MAX_REPLICAS as u64) as u32;
    let sum_min: u32 = tasks.iter().map(|t| t.min_available).fold(0, u32::saturating_add);
    let min_available = match &r.min_available {
        Some(m) => {
            let x = v.count(m, &format!("{path}.minAvailable"), 0).unwrap_or(0);
            if x > total {
                v.err(
                    at(m),
                    format!("{path}.minAvailable"),
                    format!("must not exceed the total replicas of all tasks ({total}), got {x}"),
                );
            }
            x
        }
        None => sum_min,
    };
    let max_retry = r.max_retry.as_ref().and_then(|m| v.count(m, &format!("{path}.maxRetry"), 0)).unwrap_or(3);
    let checkpoint = r.checkpoint_interval.as_ref().and_then(|d| v.duration(d, &format!("{path}.checkpointInterval")));
    let estimate = r.estimate.as_ref().and_then(|d| match v.duration(d, &format!("{path}.estimate")) {
        Some(e) if e.micros() == 0 => {
            v.err(at(d), format!("{path}.estimate"), "must be longer than 0");
            None
        }
        e => e,
    });
    let elastic = elastic(v, r, path);
    let grace = r
        .termination_grace_period
        .as_ref()
        .and_then(|d| v.duration(d, &format!("{path}.terminationGracePeriod")))
        .unwrap_or(DEFAULT_TERMINATION_GRACE);
    let network_topology =
        r.network_topology.as_ref().map(|nt| network_topology(v, nt, &format!("{path}.networkTopology")));
    let job_policies = policies(v, r.policies.as_ref(), path);
    let mut initial = Vec::new();
    if let Some(run) = &r.running {
        if submit.micros() != 0 {
            v.err(
                at(run),
                format!("{path}.running"),
                "pods can only be running from the start: leave `submitAt` out or 0",
            );
        }
        for (task, names) in &run.value {
            let Some(&t) = task_names.get(task) else {
                v.err(
                    at(run),
                    format!("{path}.running.{task}"),
                    format!("task `{task}` does not exist in job `{}`", r.name.value),
                );
                continue;
            };
            if names.len() as u32 > tasks[t].replicas {
                v.err(
                    at(run),
                    format!("{path}.running.{task}"),
                    format!("{} pods given as running but the task has {} replicas", names.len(), tasks[t].replicas),
                );
            }
            for (k, n) in names.iter().enumerate() {
                match node_ids.get(n) {
                    Some(&node) => initial.push((t, k as u32, node)),
                    None => v.err(at(run), format!("{path}.running.{task}[{k}]"), format!("node `{n}` does not exist")),
                }
            }
        }
    }
    let task_topology =
        r.task_topology.as_ref().map(|tt| task_topology(v, tt, &task_names, &format!("{path}.taskTopology")));
    if v.errors.len() != before {
        return None;
    }
    let names: Vec<Arc<str>> = tasks.iter().map(|t| t.name.clone()).collect();
    let sub_groups = from_partitions(&names, partitions);
    let mut j = JobSpec {
        name: r.name.value.clone(),
        namespace: lahar_core::util::text::shared(r.namespace.as_deref().unwrap_or("default")),
        kind: "VolcanoJob".into(),
        queue: queue?,
        priority_class: class.map(|c| c.0),
        priority: job_priority,
        submit: SimTime(submit.micros()),
        min_available,
        tasks,
        policies: job_policies,
        max_retry,
        // A PodGroup with its pods, as Volcano's unit tests build them (a VolcanoJob
        // manifest waits for admission: docs/volcano.md § Job controller over time).
        pods_once_admitted: false,
        network_topology,
        sub_groups,
        duration: duration?,
        estimate,
        checkpoint_interval: checkpoint,
        elastic,
        termination_grace: grace,
        task_topology: task_topology.map(Box::new),
        initial,
        ..JobSpec::default()
    };
    j.finish();
    Some(j)
}

fn policies(v: &mut V<'_>, raw: Option<&Vec<Spanned<RawPolicy>>>, path: &str) -> Vec<Policy> {
    let mut out = Vec::new();
    for (i, p) in raw.into_iter().flatten().enumerate() {
        let ev = PolicyEvent::parse(&p.value.event.value);
        let ac = PolicyAction::parse(&p.value.action.value);
        if ev.is_none() {
            v.err(
                at(&p.value.event),
                format!("{path}.policies[{i}].event"),
                format!(
                    "unknown event `{}`; expected *, PodEvicted, PodFailed, PodPending, TaskCompleted, TaskFailed, JobUpdated or Unknown",
                    p.value.event.value
                ),
            );
        }
        if ac.is_none() {
            v.err(at(&p.value.action), format!("{path}.policies[{i}].action"), format!("unknown action `{}`; expected RestartJob, RestartTask, RestartPod, RestartPartition, AbortJob, TerminateJob, CompleteJob or ResumeJob", p.value.action.value));
        }
        // As Volcano's job webhook: one policy per event, and `*` alone.
        if let Some(event) = ev
            && let Some(prev) = out
                .iter()
                .find(|q: &&Policy| q.event == event || q.event == PolicyEvent::Any || event == PolicyEvent::Any)
        {
            let why = if prev.event == event {
                "is already handled by an earlier policy"
            } else {
                "cannot stand beside a `*` policy"
            };
            v.err(
                at(&p.value.event),
                format!("{path}.policies[{i}].event"),
                format!("event `{}` {why} (Volcano's admission webhook refuses such a job)", p.value.event.value),
            );
        }
        let timeout = p.value.timeout.as_ref().and_then(|d| v.duration(d, &format!("{path}.policies[{i}].timeout")));
        if let (Some(event), Some(action)) = (ev, ac) {
            out.push(Policy { event, action, timeout });
        }
    }
    out
}

/// A compact task's `stopExitCode`: its container's exit code when the kubelet
/// stops it at its pod's deletion (0–255; default 143, SIGTERM's).
fn stop_exit_code(v: &mut V<'_>, t: &RawTask, tpath: &str) -> i32 {
    match &t.stop_exit_code {
        None => lahar_core::model::job::STOPPED_EXIT_CODE,
        Some(c) if (0..=255).contains(&c.value) => c.value as i32,
        Some(c) => {
            v.err(
                at(c),
                format!("{tpath}.stopExitCode"),
                format!("expected an exit code from 0 to 255, got {}", c.value),
            );
            lahar_core::model::job::STOPPED_EXIT_CODE
        }
    }
}

/// A compact task's failing container: `failAfter` (above 0), `exitCode` (1–255,
/// only with `failAfter`; default 1).
fn container_exit(v: &mut V<'_>, t: &RawTask, tpath: &str) -> Option<lahar_core::model::job::ContainerExit> {
    let code = t.exit_code.as_ref().and_then(|c| {
        if (1..=255).contains(&c.value) {
            Some(c.value as i32)
        } else {
            v.err(at(c), format!("{tpath}.exitCode"), format!("expected an exit code from 1 to 255, got {}", c.value));
            None
        }
    });
    let Some(f) = &t.fail_after else {
        if let Some(c) = &t.exit_code {
            v.err(at(c), format!("{tpath}.exitCode"), "an exit code needs `failAfter` (when the container exits)");
        }
        return None;
    };
    match v.duration(f, &format!("{tpath}.failAfter"))? {
        SimDuration(0) => {
            v.err(at(f), format!("{tpath}.failAfter"), "must be longer than 0");
            None
        }
        after => Some(lahar_core::model::job::ContainerExit { after, code: code.unwrap_or(1), in_place: None }),
    }
}

/// `taskTopology`: every name is a task of the job, and no name repeats within a
/// group or in `taskOrder` (Volcano ignores the whole annotation otherwise).
fn task_topology<T>(
    v: &mut V<'_>,
    tt: &Spanned<RawTaskTopology>,
    task_names: &BTreeMap<String, T>,
    path: &str,
) -> TaskTopology {
    let check = |v: &mut V<'_>, group: &[String], gpath: String| {
        let mut seen = BTreeSet::new();
        for (k, name) in group.iter().enumerate() {
            // Empty names are skipped, as Volcano skips them.
            if name.is_empty() {
                continue;
            }
            if !task_names.contains_key(name) {
                let known: Vec<&str> = task_names.keys().map(String::as_str).collect();
                v.err(
                    at(tt),
                    format!("{gpath}[{k}]"),
                    format!("task `{name}` does not exist in the job; tasks: {}", known.join(", ")),
                );
            } else if !seen.insert(name.as_str()) {
                v.err(at(tt), format!("{gpath}[{k}]"), format!("task `{name}` is listed twice"));
            }
        }
    };
    let t = &tt.value;
    for (i, g) in t.affinity.iter().flatten().enumerate() {
        check(v, g, format!("{path}.affinity[{i}]"));
    }
    for (i, g) in t.anti_affinity.iter().flatten().enumerate() {
        check(v, g, format!("{path}.antiAffinity[{i}]"));
    }
    if let Some(o) = &t.task_order {
        check(v, o, format!("{path}.taskOrder"));
    }
    let clean = |g: &Vec<String>| g.iter().filter(|n| !n.is_empty()).cloned().collect::<Vec<String>>();
    let groups = |v: &Option<Vec<Vec<String>>>| {
        v.iter().flatten().map(clean).filter(|g| !g.is_empty()).collect::<Vec<Vec<String>>>()
    };
    TaskTopology {
        affinity: groups(&t.affinity),
        anti_affinity: groups(&t.anti_affinity),
        task_order: t.task_order.as_ref().map(clean).unwrap_or_default(),
    }
}

/// `networkTopology: {mode, highestTierAllowed}`, read by [`NetworkTopology::parse`].
pub(super) fn network_topology(v: &mut V<'_>, nt: &Spanned<RawNetworkTopology>, path: &str) -> NetworkTopology {
    let tier = nt.value.highest_tier_allowed.as_ref();
    let (out, errors) = NetworkTopology::parse(nt.value.mode.as_deref(), tier.map(|t| t.value));
    for (field, m) in errors {
        let a = match (field, tier) {
            ("highestTierAllowed", Some(t)) => at(t),
            _ => at(nt),
        };
        v.err(a, format!("{path}.{field}"), m);
    }
    out
}

fn check_job_fit(v: &mut V<'_>, j: &JobSpec, nodes: &[Node], raw: &Spanned<RawJob>, path: &str) {
    for (i, t) in j.tasks.iter().enumerate() {
        if t.replicas > 0 && !fits_somewhere(v, nodes, t) {
            let why = if !t.has_label_filter() { String::new() } else { " with a matching nodeSelector".to_string() };
            v.warn(UNSCHEDULABLE, 1, at(&raw.value.tasks[i]), format!("{path}.tasks[{i}]"), format!(
                "job `{}` task `{}`: a pod requests {} GPUs, {} CPU, {} bytes of memory, but no node{why} can hold it (largest node: {}); the job stays pending",
                j.name, t.name, t.requests.gpu_milli() as f64 / 1000.0, t.requests.cpu() as f64 / 1000.0, t.requests.memory(), largest(&v.names, nodes, &t.requests)
            ));
            return;
        }
    }
    if let Some(why) = super::ports_bound_the_gang(v, nodes, j) {
        v.warn(UNSCHEDULABLE, 1, at(raw), path.to_string(), format!("job `{}`: {why}; the job stays pending", j.name));
    }
}

/// A `jobs:` source: each job validated, checked against the nodes, and priced by
/// its model when it has one.
pub(super) fn source(
    v: &mut V<'_>,
    list: &[Spanned<RawJob>],
    path: &str,
    t: &Targets<'_>,
    classes: &PriorityClasses,
) -> Source {
    let mut jobs = Vec::new();
    let mut origins = Vec::new();
    for (i, rj) in list.iter().enumerate() {
        let jpath = format!("{path}.jobs[{i}]");
        let prof =
            rj.value.model.as_ref().and_then(|m| comm::model_profile(v, m, &format!("{jpath}.model")).map(Arc::new));
        let iterations = prof.as_ref().is_some_and(|p| p.iterations.is_some());
        if let Some(j) = job(v, rj, &jpath, t, classes, iterations) {
            check_job_fit(v, &j, t.nodes, rj, &jpath);
            if let (Some(p), Some(m)) = (&prof, &rj.value.model)
                && let Err(e) = p.check(j.total_gpus().max(0) as u32)
            {
                v.err(at(m), format!("{jpath}.model"), e);
            }
            jobs.push((j, prof));
            origins.push(super::Origin { file: v.file.to_string(), at: at(&rj.value.name), path: jpath });
        }
    }
    Source::Jobs { jobs, origins, compact: true }
}

/// A compact task's `partitionPolicy`, checked as Volcano's webhook checks a
/// VolcanoJob task's: `totalPartitions` and `partitionSize` ≥ 1 and their product
/// the task's replicas, `minPartitions` at most `totalPartitions`.
fn partition(v: &mut V<'_>, p: &Spanned<RawPartitionPolicy>, replicas: u32, tpath: &str) -> Option<Partition> {
    let pp = format!("{tpath}.partitionPolicy");
    let total = v.count(&p.value.total_partitions, &format!("{pp}.totalPartitions"), 1);
    let size = v.count(&p.value.partition_size, &format!("{pp}.partitionSize"), 1);
    let min = match &p.value.min_partitions {
        Some(m) => v.count(m, &format!("{pp}.minPartitions"), 0),
        None => Some(0),
    };
    let nt = p.value.network_topology.as_ref().map(|nt| network_topology(v, nt, &format!("{pp}.networkTopology")));
    let (total, size, min) = (total?, size?, min?);
    if u64::from(total) * u64::from(size) != u64::from(replicas) {
        v.err(
            at(p),
            pp.clone(),
            format!(
                "replicas ({replicas}) must equal totalPartitions × partitionSize ({total} × {size} = {})",
                u64::from(total) * u64::from(size)
            ),
        );
        return None;
    }
    if min > total {
        v.err(at(p), format!("{pp}.minPartitions"), format!("must not exceed totalPartitions ({total}), got {min}"));
        return None;
    }
    Some(Partition { total, size, min, network_topology: nt })
}

/// A compact task's NUMA ask: its pods are Guaranteed when they request CPU
/// and memory (a compact task's requests are its limits), with one container
/// named after the task whose whole CPU request gets exclusive CPUs;
/// `topologyPolicy` is the pods' `volcano.sh/numa-topology-policy`.
fn numa_ask(
    v: &mut V<'_>,
    t: &crate::scenario::raw::RawTask,
    requests: &Resources,
    tpath: &str,
) -> Option<Box<lahar_core::devices::numa::NumaAsk>> {
    use lahar_core::devices::numa::{NumaAsk, NumaContainer, TopologyPolicy};
    use lahar_core::model::resource::{CPU, MEMORY};
    let policy = t.topology_policy.as_ref().and_then(|p| {
        let x = TopologyPolicy::parse(&p.value);
        if x.is_none() {
            v.err(at(p), format!("{tpath}.topologyPolicy"), format!(
                "expected none, best-effort, restricted or single-numa-node (the kubelet's topology manager policies), got `{}`",
                p.value
            ));
        }
        x
    });
    let (cpu, memory) = (requests.get(CPU), requests.get(MEMORY));
    let guaranteed = cpu > 0 && memory > 0;
    if !guaranteed && policy.is_none() {
        return None;
    }
    let cpus = (cpu > 0).then(|| if cpu % 1000 == 0 { u32::try_from(cpu / 1000).unwrap_or(u32::MAX) } else { 0 });
    Some(Box::new(NumaAsk { guaranteed, policy, containers: vec![NumaContainer { name: t.name.value.clone(), cpus }] }))
}

/// A compact task's vGPU ask: its `volcano.sh/vgpu-number`, `-memory` (MiB per
/// card) and `-cores` (percent per card) as one container's, when it names the
/// number or the memory (see [`lahar_core::devices::vgpu::ContainerAsk::of`]).
fn vgpu_ask(v: &V<'_>, requests: &Resources) -> Option<Box<lahar_core::devices::vgpu::VgpuAsk>> {
    use lahar_core::devices::vgpu::{
        ContainerAsk, VGPU_CORES, VGPU_MEMORY, VGPU_MEMORY_PERCENTAGE, VGPU_NUMBER, VgpuAsk,
    };
    // Extended resources are read in milli-units.
    let get = |r: &str| v.names.dim(r).map(|d| requests.get(d) / 1000).filter(|&x| x > 0);
    let c = ContainerAsk::of(get(VGPU_NUMBER), get(VGPU_MEMORY), get(VGPU_CORES))?
        .with_percent(get(VGPU_MEMORY_PERCENTAGE));
    Some(Box::new(VgpuAsk { containers: vec![c], ..Default::default() }))
}

/// A compact task's vNPU ask: for each chip type of `config`, its count
/// resource (a request) and its memory and core resources (`npu`, read apart),
/// as one container's; `vnpuMode: hami-core` as the pod annotation.
fn vnpu_ask(
    v: &mut V<'_>,
    config: &lahar_core::devices::vnpu::VnpuConfig,
    requests: &Resources,
    npu: &BTreeMap<String, i64>,
    t: &RawTask,
    tpath: &str,
) -> Option<Box<lahar_core::devices::vnpu::NpuAsk>> {
    let hami_core = match &t.vnpu_mode {
        Some(m) if m.value == "hami-core" => true,
        Some(m) => {
            v.err(
                at(m),
                format!("{tpath}.vnpuMode"),
                format!("expected `hami-core` (leave it out for template mode), got `{}`", m.value),
            );
            false
        }
        None => false,
    };
    let mut ask = lahar_core::devices::vnpu::NpuAsk { types: Vec::new(), hami_core };
    for ty in &config.types {
        // Extended resources are read in milli-units.
        let count = v.names.dim(&ty.resource_name).map(|d| requests.get(d)).filter(|&x| x > 0);
        if count.is_some_and(|c| c % 1000 != 0) {
            v.err(None, format!("{tpath}.resources.{}", ty.resource_name), "expected a whole number of chips");
            continue;
        }
        let count = count.map(|c| c / 1000);
        let memory = npu.get(&ty.resource_memory_name).copied();
        let cores = npu.get(&ty.resource_core_name()).copied();
        if count.is_none() && memory.is_none() {
            if cores.is_some() {
                v.err(
                    None,
                    format!("{tpath}.resources.{}", ty.resource_core_name()),
                    format!(
                        "AI cores ask for nothing without `{}` or `{}` (Volcano reads a chip ask from those)",
                        ty.resource_name, ty.resource_memory_name
                    ),
                );
            }
            continue;
        }
        if cores.is_some() && !hami_core {
            v.err(
                None,
                format!("{tpath}.resources.{}", ty.resource_core_name()),
                "AI cores are set only in hami-core mode: give the task `vnpuMode: hami-core`",
            );
        }
        ask.types.push((ty.common_word.clone(), vec![lahar_core::devices::vnpu::Written { count, memory, cores }]));
    }
    (!ask.types.is_empty()).then(|| Box::new(ask))
}

/// A compact job's `scaling` and `resizeOverhead`: either makes it elastic.
fn elastic(v: &mut V<'_>, r: &RawJob, path: &str) -> Option<lahar_core::model::elastic::Elastic> {
    if r.scaling.is_none() && r.resize_overhead.is_none() {
        return None;
    }
    Some(elastic_settings(v, r.scaling.as_ref(), r.resize_overhead.as_ref(), path))
}

/// `scaling` and `resizeOverhead` under `path` (defaults: linear, 30 s).
pub(super) fn elastic_settings(
    v: &mut V<'_>,
    scaling: Option<&Spanned<String>>,
    overhead: Option<&Spanned<String>>,
    path: &str,
) -> lahar_core::model::elastic::Elastic {
    let d = lahar_core::model::elastic::Elastic::default();
    let curve = match scaling {
        Some(s) => lahar_core::model::elastic::ScalingCurve::parse(&s.value)
            .map_err(|e| v.err(at(s), format!("{path}.scaling"), e))
            .unwrap_or(d.curve),
        None => d.curve,
    };
    let resize_overhead =
        overhead.and_then(|o| v.duration(o, &format!("{path}.resizeOverhead"))).unwrap_or(d.resize_overhead);
    lahar_core::model::elastic::Elastic { curve, resize_overhead }
}
