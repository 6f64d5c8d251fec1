//! KubeRay RayCluster / RayJob / RayService with KubeRay's Volcano batch scheduler:
//! one PodGroup with the head and every worker group; `minMember` = 1 + desired
//! workers, or 1 + each group's `minReplicas` when in-tree autoscaling is on
//! (the groups then start with their desired workers, which the job takes as
//! room frees; the Ray autoscaler's demand-driven growth is not simulated). A
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
            serve_autoscaling(ck, cx, d, spec, &format!("{}/{}", meta.namespace, meta.name));
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
    let mut tasks = Vec::new();
    let mut min_member = 1u32;
    match cluster.get("headGroupSpec").and_then(|h| h.get("template")) {
        Some(tpl) => {
            let shape = common::pod_shape(ck, cx, tpl, &format!("{cp}.headGroupSpec.template"));
            common::no_container_exit(ck, &shape, &format!("{cp}.headGroupSpec.template"));
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
        let gang = if autoscaling { ck.pods(g.at, &gp, min, hosts) } else { pods };
        min_member += gang;
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
    // KubeRay labels every pod with its cluster.
    for t in &mut j.tasks {
        common::add_labels(t, &[("ray.io/cluster", &cluster_name), ("ray.io/is-ray-node", "yes")]);
    }
    Some(ImportedJob { spec: j, profile, file: d.file.clone(), doc: d.label(), at: root.at })
}

/// A RayService's Ray Serve applications (`serveConfigV2`, a YAML document in a
/// string): a deployment that Serve autoscales (`autoscaling_config`, or
/// `num_replicas: auto`) is listed as left out — lahar does not simulate Ray
/// Serve's replicas, so the cluster keeps the workers KubeRay starts it with.
/// Text that is not YAML is an error at its line, as Ray refuses the config.
fn serve_autoscaling(ck: &mut Ck<'_>, cx: &mut Context<'_>, d: &Doc, spec: &Node, name: &str) {
    let Some(node) = spec.get("serveConfigV2") else { return };
    let Val::Str(text) = &node.val else { return };
    // Where the text's line 1, column 1 is in the file: a block scalar's
    // location is its first line of text, its indentation stripped.
    let (line, col) = node.at.unwrap_or((1, 1));
    let shifted = |at: At| at.map(|(l, c)| (l + line - 1, c + col - 1));
    let docs = match super::yaml::parse_documents(text, &d.file) {
        Ok(docs) => docs,
        Err((at, msg)) => {
            ck.err(shifted(at).or(node.at), "spec.serveConfigV2", format!("Ray Serve's config is not YAML: {msg}"));
            return;
        }
    };
    for doc in &docs {
        let Some(Val::Seq(apps)) = doc.root.get("applications").map(|a| &a.val) else { continue };
        for (a, app) in apps.iter().enumerate() {
            let Some(Val::Seq(deps)) = app.get("deployments").map(|x| &x.val) else { continue };
            let app_name = app.get("name").and_then(Node::scalar).unwrap_or_else(|| format!("#{a}"));
            for (k, dep) in deps.iter().enumerate() {
                let auto = dep.get("num_replicas").and_then(Node::scalar).is_some_and(|n| n == "auto");
                let config = dep.get("autoscaling_config").is_some_and(|c| c.val != Val::Null);
                if !(auto || config) {
                    continue;
                }
                let dep_name = dep.get("name").and_then(Node::scalar).unwrap_or_else(|| format!("#{k}"));
                let how = if config { "autoscaling_config" } else { "num_replicas: auto" };
                cx.left_out.push(super::Diagnostic {
                    file: d.file.clone(),
                    at: shifted(dep.at).or(node.at),
                    path: format!("{}: spec.serveConfigV2: applications[{a}].deployments[{k}]", d.label()),
                    message: format!(
                        "RayService {name}: Ray Serve autoscales deployment {app_name}/{dep_name} ({how}), which lahar does not simulate: the cluster keeps the workers KubeRay starts it with"
                    ),
                });
            }
        }
    }
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
