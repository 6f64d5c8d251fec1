//! A cluster snapshot: what `kubectl get nodes,pods,podgroups,queues,hypernodes,
//! priorityclasses -A -o yaml` prints (one `kind: List`, or `---`-separated
//! documents), split into what the scheduler reads — Nodes, Queues, HyperNodes,
//! PodDisruptionBudgets, and the workload (PodGroups, Pods, PriorityClasses) — and
//! everything else, skipped and counted by kind.

use super::common::{self, Ck};
use super::yaml::{Doc, Node, Val};
use super::{Diagnostic, read};
use lahar_core::model::cluster::{GPU_PRODUCT_LABEL, IntraNode, Nics, Taint};
use lahar_core::model::resource::{GPU_RESOURCE, PODS, ResourceNames, Resources};
use std::collections::BTreeMap;
use std::path::Path;

/// A snapshot's objects, by what the scheduler makes of them.
#[derive(Default)]
pub struct Snapshot {
    /// The cluster's nodes, in file order.
    pub nodes: Vec<lahar_core::model::cluster::Node>,
    /// Node conditions lahar does not model: `PreferNoSchedule` taints (a scoring
    /// preference); (node, what).
    pub constrained: Vec<(String, String)>,
    /// Queue objects.
    pub queues: Vec<Doc>,
    /// HyperNode objects.
    pub hypernodes: Vec<Doc>,
    /// PodDisruptionBudget objects.
    pub budgets: Vec<Doc>,
    /// ConfigMaps holding a device configuration (`device-config.yaml`), which
    /// the conf's deviceshare may name.
    pub config_maps: Vec<Doc>,
    /// PodGroups, Pods and PriorityClasses.
    pub workload: Vec<Doc>,
    /// Objects the scheduler does not read, counted by kind.
    pub skipped: BTreeMap<String, usize>,
    /// The nodes' Ascend chip registrations, in file order: read once the conf
    /// says whether it models vNPU sharing and the device ConfigMap which chip
    /// types there are.
    pub npu_registrations: Vec<NpuRegistration>,
}

/// A node's registration of Ascend chips of one type (its
/// `hami.io/node-register-<commonWord>` annotation, written by Project-HAMi's
/// `ascend-device-plugin`).
#[derive(Clone, Debug)]
pub struct NpuRegistration {
    /// The node.
    pub node: String,
    /// The chip type's `commonWord` (the annotation's suffix).
    pub common_word: String,
    /// The annotation's JSON list of chips.
    pub text: String,
    /// The node's `hami-vnpu-core` annotation, if any.
    pub hami_core: Option<String>,
    /// Where the annotation is (file, line, field path), for errors about it;
    /// its message is empty.
    pub place: Diagnostic,
}

/// Reads the snapshot file `pattern` (relative to `base`).
pub fn snapshot(
    base: &Path,
    pattern: &str,
    names: &mut ResourceNames,
    errs: &mut Vec<Diagnostic>,
) -> Result<Snapshot, Vec<Diagnostic>> {
    let docs = read(base, pattern)?;
    let mut out = Snapshot::default();
    let mut numa = Vec::new();
    // Node names seen, with where: two kubectl outputs concatenated list a node twice.
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for d in docs {
        let (api, kind) = common::kind_of(&d.root);
        let group = api.split('/').next().unwrap_or_default();
        match (group, kind.as_str()) {
            ("v1", "Node") => {
                let here = format!("{}: {}", d.file, d.label());
                let name = d.root.get("metadata").and_then(|m| m.get("name"));
                if let Some((n, first)) = name.and_then(Node::scalar).and_then(|n| seen.get(&n).map(|f| (n, f))) {
                    errs.push(Diagnostic {
                        file: d.file.clone(),
                        at: name.and_then(|n| n.at).or(d.root.at),
                        path: format!("{}: metadata.name", d.label()),
                        message: format!("node `{n}` is listed twice (first at {first})"),
                    });
                    continue;
                }
                if let Some(n) = node(&d, names, errs, &mut out.constrained) {
                    seen.insert(n.name.clone(), here);
                    out.npu_registrations.extend(npu_registrations(&d, &n.name));
                    out.nodes.push(n);
                }
            }
            ("scheduling.volcano.sh", "Queue") => out.queues.push(d),
            ("policy", "PodDisruptionBudget") => out.budgets.push(d),
            ("topology.volcano.sh", "HyperNode") => out.hypernodes.push(d),
            ("nodeinfo.volcano.sh", "Numatopology") => numa.push(d),
            ("v1", "ConfigMap") if d.root.get("data").and_then(|x| x.get(super::DEVICE_CONFIG_KEY)).is_some() => {
                out.config_maps.push(d)
            }
            ("v1", "Pod") | ("scheduling.volcano.sh", "PodGroup") | ("scheduling.k8s.io", "PriorityClass") => {
                out.workload.push(d)
            }
            (_, "") => {
                Ck::new(&d, errs).err(d.root.at, "kind", "expected `apiVersion` and `kind` (a Kubernetes object)")
            }
            // lahar's own files are no cluster objects: a run of them as a
            // snapshot would be an empty cluster that exits 0.
            ("lahar.io", _) => Ck::new(&d, errs).err(
                d.root.at,
                "kind",
                format!(
                    "a lahar {kind} is not a cluster snapshot (`kubectl get nodes,pods,podgroups,queues -A -o yaml`); run it as `lahar {} {}`",
                    if kind == "Sweep" { "sweep" } else { "run" },
                    d.file
                ),
            ),
            _ => *out.skipped.entry(format!("{kind} ({api})")).or_default() += 1,
        }
    }
    // Each node's NUMA topology, from the Numatopology named after it.
    for d in numa {
        let mut ck = Ck::new(&d, errs);
        let Some((name, t)) = super::numa::numatopology(&mut ck, &d.root) else { continue };
        if !ck.ok() {
            continue;
        }
        match out.nodes.iter_mut().find(|n| n.name == name) {
            Some(n) if n.numa.is_some() => {
                ck.err(d.root.at, "metadata.name", format!("a second Numatopology for node `{name}`"))
            }
            Some(n) => n.numa = Some(std::sync::Arc::new(t)),
            None => {
                *out.skipped
                    .entry("Numatopology (nodeinfo.volcano.sh/v1alpha1) of no Node in the snapshot".into())
                    .or_default() += 1
            }
        }
    }
    Ok(out)
}

/// Fields of a Node that lahar reads or knowingly passes over (kubectl prints them).
const NODE_SPEC: [&str; 7] =
    ["podCIDR", "podCIDRs", "providerID", "unschedulable", "taints", "configSource", "externalID"];
const NODE_STATUS: [&str; 13] = [
    "capacity",
    "allocatable",
    "phase",
    "conditions",
    "addresses",
    "daemonEndpoints",
    "nodeInfo",
    "images",
    "volumesInUse",
    "volumesAttached",
    "config",
    "runtimeHandlers",
    "features",
];

/// A `v1` Node: its name and labels, and `status.allocatable` as the node's
/// resources (`cpu`, `memory`, `pods`, `nvidia.com/gpu` and other extended
/// resources; `ephemeral-storage` and zero quantities are passed over). Its GPU
/// model is the `nvidia.com/gpu.product` label; GPU nodes get NVSwitch intra-node
/// links, as lahar's own nodes do by default.
fn node(
    d: &Doc,
    names: &mut ResourceNames,
    errs: &mut Vec<Diagnostic>,
    constrained: &mut Vec<(String, String)>,
) -> Option<lahar_core::model::cluster::Node> {
    let mut ck = Ck::new(d, errs);
    let root = &d.root;
    let meta = common::meta(&mut ck, root, "", true);
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    let status = root.get("status").unwrap_or(&empty);
    for (part, known, node) in [("spec", &NODE_SPEC[..], spec), ("status", &NODE_STATUS[..], status)] {
        if let Val::Map(m) = &node.val {
            for (k, v) in m {
                if !known.contains(&k.as_str()) {
                    ck.err(
                        v.at,
                        &format!("{part}.{k}"),
                        format!("unknown field of a Node; expected one of: {}", known.join(", ")),
                    );
                }
            }
        }
    }
    if status.get("allocatable").is_none() {
        ck.err(
            status.at.or(root.at),
            "status.allocatable",
            "a Node needs `status.allocatable` (its schedulable resources)",
        );
    }
    let mut alloc = Resources::ZERO;
    // Zero quantities (`hugepages-1Gi: "0"`) name nothing a pod could use here.
    let zero =
        |_: &str, v: &Node| v.scalar().is_some_and(|q| lahar_core::util::quantity::parse_quantity(&q, 1) == Ok(0));
    for (dim, x, _) in ck.resources_where(status, "allocatable", "status", names, |k, v| !zero(k, v)) {
        alloc.set(dim, x);
    }
    if alloc.get(PODS) == 0 {
        // Kubernetes' default kubelet `maxPods`.
        alloc.set(PODS, 110);
    }
    let gpu_at = status.get("allocatable").and_then(|a| a.get(GPU_RESOURCE)).and_then(|n| n.at);
    let most = lahar_core::world::MAX_NODE_GPUS;
    if alloc.gpu_milli() % 1000 != 0 {
        ck.err(gpu_at, &format!("status.allocatable.{GPU_RESOURCE}"), "expected a whole number of GPUs");
    } else if alloc.gpu_milli() > i64::from(most) * 1000 {
        // The same bound as lahar's own nodes: each GPU is a device the node keeps.
        let got = alloc.gpu_milli() / 1000;
        ck.err(
            gpu_at,
            &format!("status.allocatable.{GPU_RESOURCE}"),
            format!("at most {most} GPUs per node, got {got}"),
        );
    }
    let mut taints = Vec::new();
    for (i, t) in ck.seq(spec, "taints", "spec").iter().enumerate() {
        let tp = format!("spec.taints[{i}]");
        let effect = ck.opt_str(t, "effect", &tp).unwrap_or_default();
        if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect.as_str()) {
            let at = t.get("effect").and_then(|n| n.at).or(t.at);
            ck.err(
                at,
                &format!("{tp}.effect"),
                format!("expected NoSchedule, PreferNoSchedule or NoExecute, got `{effect}`"),
            );
        }
        let key = ck.opt_str(t, "key", &tp).unwrap_or_default();
        if effect == "PreferNoSchedule" {
            constrained.push((meta.name.clone(), format!("tainted {key}:PreferNoSchedule (a scoring preference)")));
        }
        taints.push(Taint { key, value: ck.opt_str(t, "value", &tp).unwrap_or_default(), effect });
    }
    // What Kubernetes' controllers put on a cordoned or not-Ready node, should the
    // snapshot not show it yet.
    let mut ensure = |key: &str| {
        if !taints.iter().any(|t| t.key == key && t.repels()) {
            taints.push(Taint { key: key.into(), value: String::new(), effect: "NoSchedule".into() });
        }
    };
    if ck.opt_bool(spec, "unschedulable", "spec") == Some(true) {
        ensure(Taint::UNSCHEDULABLE);
    }
    let ready = ck
        .seq(status, "conditions", "status")
        .iter()
        .find(|c| c.get("type").and_then(Node::scalar).as_deref() == Some("Ready"));
    if let Some(c) = ready
        && c.get("status").and_then(Node::scalar).as_deref() != Some("True")
    {
        ensure("node.kubernetes.io/not-ready");
    }
    let vgpu = vgpu_cards(&mut ck, &meta.annotations, &alloc, names);
    if !ck.ok() {
        return None;
    }
    let labels: BTreeMap<String, String> = meta.labels.into_iter().map(|(k, (v, _))| (k, v)).collect();
    let gpu_model = labels.get(GPU_PRODUCT_LABEL).cloned().unwrap_or_default();
    let gpus = alloc.gpu_milli() > 0;
    Some(lahar_core::model::cluster::Node {
        name: meta.name,
        labels,
        allocatable: alloc,
        gpu_model,
        intra_node: if gpus { IntraNode::NvSwitch } else { IntraNode::Pcie },
        taints,
        nics: Nics::default(),
        speed: 1.0,
        vgpu,
        vnpu: Vec::new(),
        numa: None,
    })
}

/// A node's Ascend chip registrations (see [`NpuRegistration`]).
fn npu_registrations(d: &Doc, node: &str) -> Vec<NpuRegistration> {
    let ann = d.root.get("metadata").and_then(|m| m.get("annotations"));
    let Some(Val::Map(m)) = ann.map(|a| &a.val) else { return Vec::new() };
    let hami_core = ann.and_then(|a| a.get(lahar_core::devices::vnpu::NODE_HAMI_CORE)).and_then(Node::scalar);
    let prefix = lahar_core::devices::vnpu::register_annotation("");
    m.iter()
        .filter_map(|(k, v)| {
            let cw = k.strip_prefix(&prefix).filter(|cw| !cw.is_empty())?;
            let mut place = Vec::new();
            Ck::new(d, &mut place).err(v.at, &format!("metadata.annotations.{k}"), "");
            Some(NpuRegistration {
                node: node.to_string(),
                common_word: cw.to_string(),
                text: v.scalar().unwrap_or_default(),
                hami_core: hami_core.clone(),
                place: place.pop()?,
            })
        })
        .collect()
}

/// The node's vGPU cards, from its `volcano.sh/node-vgpu-register` annotation
/// (see [`lahar_core::devices::vgpu::decode_register`]). Volcano sees cards only on a node
/// that also advertises `volcano.sh/vgpu-number`, `-memory` and `-cores` (as the
/// device plugin does): an annotated node without them is refused, not taken as a
/// node without cards.
fn vgpu_cards(
    ck: &mut Ck<'_>,
    annotations: &BTreeMap<String, (String, super::yaml::At)>,
    alloc: &Resources,
    names: &ResourceNames,
) -> Vec<lahar_core::devices::vgpu::VgpuCard> {
    use lahar_core::devices::vgpu::{VGPU_CORES, VGPU_MEMORY, VGPU_NUMBER, VGPU_REGISTER};
    let Some((text, at)) = annotations.get(VGPU_REGISTER) else { return Vec::new() };
    let path = format!("metadata.annotations.{VGPU_REGISTER}");
    let missing: Vec<&str> = [VGPU_NUMBER, VGPU_MEMORY, VGPU_CORES]
        .into_iter()
        .filter(|r| names.dim(r).is_none_or(|d| alloc.get(d) <= 0))
        .collect();
    if !missing.is_empty() {
        ck.err(*at, &path, format!(
            "a node registering vGPU cards must advertise {} in `status.allocatable` (Volcano sees no cards on it otherwise)",
            missing.join(", ")
        ));
    }
    match lahar_core::devices::vgpu::decode_register(text) {
        Ok(cards) => cards,
        Err(e) => {
            ck.err(*at, &path, e);
            Vec::new()
        }
    }
}
