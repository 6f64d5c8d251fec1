//! KubeRay RayCluster / RayJob / RayService with KubeRay's Volcano batch scheduler:
//! one PodGroup with the head and every worker group; `minMember` = 1 + desired
//! workers, or 1 + each group's `minReplicas` when in-tree autoscaling is on
//! (the groups then start with their desired workers, which the job takes as
//! room frees; for a RayService the autoscaler follows its Serve replicas,
//! [`super::ray_serve`]). A
//! RayService's cluster is the RayCluster KubeRay makes from `rayClusterConfig`,
//! with the service's labels (queue, scheduler, priority class) and a generated
//! name, `<service>-<5 characters>`.

use super::common::{self, Ck, JobHead, join};
use super::yaml::{At, Doc, Node, Val};
use super::{Context, ImportedJob};
use lahar_core::model::job::NetworkTopology;
use std::collections::BTreeMap;

pub(crate) fn job(d: &Doc, kind: &str, cx: &mut Context<'_>, ck: &mut Ck<'_>) -> Option<ImportedJob> {
    let root = &d.root;
    // A RayService's Serve deployments.
    let mut serve = None;
    let meta = common::meta(ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    if kind == "RayJob" {
        ck.unmodelled(
            spec,
            "activeDeadlineSeconds",
            "spec",
            "fails the RayJob once it has been active that long",
            "RayJob",
        );
    }
    let (cluster, cp) = match kind {
        "RayJob" => match spec.get("rayClusterSpec") {
            Some(c) => (c, "spec.rayClusterSpec".to_string()),
            None => {
                let msg = "a RayJob needs `rayClusterSpec` (or `clusterSelector`, to run on an existing RayCluster)";
                ck.err(spec.at, "spec.rayClusterSpec", msg);
                return None;
            }
        },
        "RayService" => {
            if ck.opt_bool(spec, "suspend", "spec") == Some(true) {
                let at = spec.get("suspend").and_then(|n| n.at);
                ck.err(at, "spec.suspend", "a suspended RayService has no RayCluster (KubeRay creates none): nothing to schedule; remove `suspend` to simulate the service");
                return None;
            }
            serve = super::ray_serve::read(ck, cx, d, spec, &format!("{}/{}", meta.namespace, meta.name));
            match spec.get("rayClusterConfig") {
                Some(c) => (c, "spec.rayClusterConfig".to_string()),
                None => {
                    ck.err(spec.at, "spec.rayClusterConfig", "a RayService needs `rayClusterConfig`");
                    return None;
                }
            }
        }
        _ => (spec, "spec".to_string()),
    };
    let autoscaling = ck.opt_bool(cluster, "enableInTreeAutoscaling", &cp).unwrap_or(false);
    let mut ray_autoscaler = autoscaling.then(|| super::ray_serve::autoscaler(ck, cluster, &cp));
    let (mut tasks, mut grace) = (Vec::new(), None);
    // Each task's Ray node, for the Serve deployments' replicas.
    let mut nodes = Vec::new();
    let mut min_member = 1u32;
    match cluster.get("headGroupSpec").and_then(|h| h.get("template")) {
        Some(tpl) => {
            let shape = common::pod_shape(ck, cx, tpl, &format!("{cp}.headGroupSpec.template"));
            common::no_container_exit(ck, &shape, &format!("{cp}.headGroupSpec.template"));
            grace = shape.grace;
            let head_path = join(&cp, "headGroupSpec");
            let head_group = cluster.get("headGroupSpec").unwrap_or(tpl);
            nodes.push(super::ray_serve::node(ck, head_group, &head_path, &shape.requests));
            let mut head = common::task("head", 1, 1, &shape);
            common::add_labels(&mut head, &[("ray.io/group", "headgroup"), ("ray.io/node-type", "head")]);
            tasks.push(head);
        }
        None => ck.err(cluster.at, &join(&cp, "headGroupSpec.template"), "a Ray cluster needs a head pod template"),
    }
    for (i, g) in ck.seq(cluster, "workerGroupSpecs", &cp).iter().enumerate() {
        let gp = format!("{cp}.workerGroupSpecs[{i}]");
        let name = ck.opt_str(g, "groupName", &gp).unwrap_or_else(|| format!("worker{i}"));
        let min = ck.opt_count(g, "minReplicas", &gp, 0).unwrap_or(0) as u32;
        let max = ck.opt_count(g, "maxReplicas", &gp, 0).map(|x| x as u32).unwrap_or(u32::MAX);
        // KubeRay's desired count: replicas (default minReplicas) clamped to [min, max].
        let want = ck.opt_count(g, "replicas", &gp, 0).map(|x| x as u32).unwrap_or(min).clamp(min.min(max), max);
        // With in-tree autoscaling the group starts at that count, and the Ray
        // autoscaler adds workers only for the tasks and actors Ray asks it
        // to place, which lahar does not simulate: the group stays there.
        let hosts = ck.opt_count(g, "numOfHosts", &gp, 1).unwrap_or(1) as u32;
        // A suspended group has no pods and is not part of the PodGroup.
        if ck.opt_bool(g, "suspend", &gp).unwrap_or(false) {
            continue;
        }
        let Some(tpl) = g.get("template") else {
            ck.err(g.at, &join(&gp, "template"), "a worker group needs a pod `template`");
            continue;
        };
        let shape = common::pod_shape(ck, cx, tpl, &join(&gp, "template"));
        common::no_container_exit(ck, &shape, &join(&gp, "template"));
        let pods = ck.pods(g.at, &gp, want, hosts);
        grace = grace.max(shape.grace.filter(|_| pods > 0));
        let gang = if autoscaling { ck.pods(g.at, &gp, min, hosts) } else { pods };
        min_member += gang;
        nodes.push(super::ray_serve::node(ck, g, &gp, &shape.requests));
        if let Some(a) = &mut ray_autoscaler {
            if hosts > 1 && serve.as_ref().is_some_and(|d| !d.is_empty()) {
                // Ray's autoscaler adds and removes a multi-host replica whole.
                cx.left_out.push(super::Diagnostic {
                    file: d.file.clone(),
                    at: g.get("numOfHosts").and_then(|n| n.at).or(g.at),
                    path: format!("{}: {}", d.label(), join(&gp, "numOfHosts")),
                    message: format!(
                        "RayService {}/{}: worker group {name} has {hosts} hosts a replica, which the autoscaler adds and removes whole; lahar does not: the group keeps its workers",
                        meta.namespace, meta.name
                    ),
                });
            } else {
                let bounds = (min.saturating_mul(hosts), max.saturating_mul(hosts));
                a.groups.push(super::ray_serve::group(ck, g, &gp, tasks.len(), bounds));
                if let Some(t) = g.get("idleTimeoutSeconds").filter(|_| !a.v2 && serve.is_some()) {
                    // KubeRay passes a group's own timeout to autoscaler v2 only.
                    cx.left_out.push(super::Diagnostic {
                        file: d.file.clone(),
                        at: t.at,
                        path: format!("{}: {}", d.label(), join(&gp, "idleTimeoutSeconds")),
                        message: format!(
                            "RayService {}/{}: worker group {name}'s own idleTimeoutSeconds applies under autoscaler v2 only (`autoscalerOptions.version: v2`): this v1 autoscaler uses the cluster's",
                            meta.namespace, meta.name
                        ),
                    });
                }
            }
        }
        // The PodGroup has no minTaskMember; per-task minimum stays 0.
        let mut task = common::task(&name, pods, 0, &shape);
        common::add_labels(&mut task, &[("ray.io/group", &name), ("ray.io/node-type", "worker")]);
        tasks.push(task);
    }
    let qname = meta.labels.get("volcano.sh/queue-name").map(|x| x.0.clone()).unwrap_or_else(|| "default".into());
    let qat = meta.labels.get("volcano.sh/queue-name").and_then(|x| x.1).or(root.at);
    let q = common::queue(ck, cx, &qname, qat, "metadata.labels.volcano.sh/queue-name");
    let class = meta.labels.get("ray.io/priority-class-name").map(|x| x.0.clone());
    let topology = network_topology(ck, &meta.labels);
    let timing = common::timing(ck, cx, &meta.annotations, meta.at, "");
    if !ck.ok() {
        return None;
    }
    let head = JobHead {
        name: meta.name,
        namespace: meta.namespace,
        kind: kind.to_string(),
        queue: q?,
        priority_class: class,
        min_available: min_member,
        timing: timing?,
        grace,
    };
    // The RayCluster's name: the object's own, or for a RayService KubeRay's
    // `<service>-<5 random characters>` (derived here, as for generateName).
    let cluster_name = match kind {
        "RayService" => common::generated_name(ck, &format!("{}-", head.name)),
        _ => head.name.clone(),
    };
    let (mut j, profile) = common::assemble(head, tasks, cx);
    j.network_topology = topology;
    if autoscaling && j.elastic.is_none() {
        j.elastic = Some(lahar_core::model::elastic::Elastic::default());
    }
    j.pod_names = Some(Box::new(pod_names(&j, &cluster_name)));
    if let Some(deployments) = serve.filter(|d| !d.is_empty()) {
        j.ray_serve = Some(std::sync::Arc::new(super::ray_serve::spec(deployments, nodes, ray_autoscaler)));
    }
    // KubeRay labels every pod with its cluster.
    for t in &mut j.tasks {
        common::add_labels(t, &[("ray.io/cluster", &cluster_name), ("ray.io/is-ray-node", "yes")]);
    }
    Some(ImportedJob { spec: j, profile, file: d.file.clone(), doc: d.label(), at: root.at })
}

/// Pods as KubeRay names them (`utils.PodName`): the head `<cluster>-head` (its
/// deterministic head-pod name), a group's workers `<cluster>-<group>-worker-<suffix>`,
/// the prefix cut to 50 characters and lower-cased; KubeRay's suffix is 5 random
/// characters, lahar's the worker's index.
fn pod_names(j: &lahar_core::model::job::JobSpec, cluster: &str) -> Vec<Vec<String>> {
    let prefix = |p: String| p.chars().take(50).collect::<String>().to_lowercase();
    j.tasks
        .iter()
        .enumerate()
        .map(|(t, task)| match t {
            0 => vec![format!("{}-head", prefix(cluster.to_string()))],
            _ => {
                let stem = prefix(format!("{cluster}-{}", task.name));
                (0..task.replicas).map(|k| format!("{stem}-worker-{k}")).collect()
            }
        })
        .collect()
}

/// The PodGroup's `networkTopology` from the labels KubeRay's Volcano scheduler reads:
/// `volcano.sh/network-topology-mode` (`hard` or `soft`) and, with it,
/// `volcano.sh/network-topology-highest-tier-allowed` (an integer; KubeRay fails to
/// create the PodGroup otherwise). Without the mode label there is no constraint.
fn network_topology(ck: &mut Ck<'_>, labels: &BTreeMap<String, (String, At)>) -> Option<NetworkTopology> {
    const MODE: &str = "volcano.sh/network-topology-mode";
    const TIER: &str = "volcano.sh/network-topology-highest-tier-allowed";
    let (mode, mode_at) = labels.get(MODE)?;
    let mut tier = None;
    if let Some((t, at)) = labels.get(TIER) {
        match t.trim().parse::<i64>() {
            Ok(x) => tier = Some(x),
            Err(_) => ck.err(*at, &format!("metadata.labels.{TIER}"), format!("expected an integer ≥ 0, got `{t}`")),
        }
    }
    let (nt, errors) = NetworkTopology::parse(Some(mode), tier);
    for (field, m) in errors {
        let (label, at) = if field == "mode" { (MODE, *mode_at) } else { (TIER, labels[TIER].1) };
        ck.err(at, &format!("metadata.labels.{label}"), m);
    }
    Some(nt)
}
