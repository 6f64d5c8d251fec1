//! `spec.snapshot`: a cluster as `kubectl get nodes,pods,podgroups,queues,hypernodes,
//! priorityclasses -A -o yaml` prints it — its Nodes join the cluster, its Queues and
//! HyperNodes are the scenario's (unless the scenario gives its own), and its
//! PodGroups, Pods and PriorityClasses are a workload source (see docs/manifests.md).

use super::manifests::report;
use super::{At, V, at};
use crate::scenario::Diagnostic;
use crate::scenario::raw::RawSpec;
use lahar_core::devices::vnpu::VnpuConfig;
use lahar_core::model::cluster::Node;
use lahar_core::model::queue::Queue;
use lahar_core::model::topology::HyperNodeDecl;
use lahar_workloads::manifest::{self, Doc};
use std::path::Path;

/// Warning kind: objects of a snapshot the scheduler does not read.
pub(crate) const SNAPSHOT_SKIPPED: &str = "snapshot-objects-skipped";
/// Warning kind: snapshot node taints lahar does not model (`PreferNoSchedule`).
pub(crate) const NODES_CONSTRAINED: &str = "node-constraints-not-modelled";

/// The snapshot's parts, once read.
#[derive(Default)]
pub(super) struct Parts {
    /// Where `spec.snapshot` is written.
    pub at: At,
    pub nodes: Vec<Node>,
    pub queues: Vec<Doc>,
    pub hypernodes: Vec<Doc>,
    pub budgets: Vec<Doc>,
    pub workload: Vec<Doc>,
    pub config_maps: Vec<Doc>,
    /// The nodes' Ascend chip registrations.
    pub npu: Vec<manifest::NpuRegistration>,
}

/// Reads `spec.snapshot`, warning about what is skipped or not modelled.
pub(super) fn read(v: &mut V<'_>, spec: &RawSpec, base: &Path) -> Option<Parts> {
    let p = spec.snapshot.as_ref()?;
    let mut errs = Vec::new();
    let s = match manifest::snapshot(base, &p.value, &mut v.names, &mut errs) {
        Ok(s) => s,
        Err(read_errs) => {
            for e in read_errs {
                if e.path.is_empty() && e.at.is_none() && e.file == p.value {
                    v.err(at(p), "spec.snapshot", e.message);
                } else {
                    v.errors.push(e);
                }
            }
            return None;
        }
    };
    report(v, errs);
    let file = lahar_core::util::files::join(base, &p.value).display().to_string();
    if !s.skipped.is_empty() {
        let n: usize = s.skipped.values().sum();
        let kinds: Vec<String> = s.skipped.iter().map(|(k, c)| format!("{c} {k}")).collect();
        v.warnings.push(crate::scenario::Warning {
            kind: SNAPSHOT_SKIPPED,
            count: n as u64,
            file: file.clone(),
            at: None,
            path: "spec.snapshot".into(),
            message: format!("{n} objects the scheduler does not read were skipped: {}", kinds.join(", ")),
            first_of_many: false,
        });
    }
    if let Some((node, what)) = s.constrained.first() {
        let n = s.constrained.len();
        v.warnings.push(crate::scenario::Warning {
            kind: NODES_CONSTRAINED,
            count: n as u64,
            file,
            at: None,
            path: "spec.snapshot".into(),
            message: format!(
                "{n} node taint{} lahar does not model, the first: node `{node}` is {what}; placement does not prefer other nodes",
                if n == 1 { "" } else { "s" }
            ),
            first_of_many: false,
        });
    }
    Some(Parts {
        at: at(p),
        nodes: s.nodes,
        queues: s.queues,
        hypernodes: s.hypernodes,
        budgets: s.budgets,
        workload: s.workload,
        config_maps: s.config_maps,
        npu: s.npu_registrations,
    })
}

/// Gives the nodes' vGPU cards what the device ConfigMap the conf names
/// (`deviceshare.KnownGeometriesCMName` in `…Namespace`) says: MIG geometries,
/// the memory factor, the memory-percentage resource. Without that ConfigMap in
/// the snapshot, Volcano's defaults (no MIG geometries: MIG records fall back to
/// HAMi-core, with a warning). When the conf models vNPU sharing (`vnpu`), gives
/// the nodes the Ascend chips they register of the ConfigMap's chip types and
/// returns those types (without the ConfigMap, Volcano's default: one 310P type).
pub(super) fn device_config(
    v: &mut V<'_>,
    parts: Option<&Parts>,
    id: (String, String),
    nodes: &mut [Node],
    vnpu: bool,
) -> Option<VnpuConfig> {
    let doc = parts.and_then(|p| p.config_maps.iter().find(|d| manifest::config_map_id(d) == id));
    let mut errs = Vec::new();
    let config = doc.and_then(|d| manifest::device_config(d, &mut errs)).unwrap_or_default();
    report(v, errs);
    // A ConfigMap without a `vnpus` section has no chip types; no ConfigMap:
    // Volcano's default one.
    let npu = vnpu.then(|| match doc {
        Some(_) => config.vnpus.clone().unwrap_or(VnpuConfig { hami_core: false, types: Vec::new() }),
        None => VnpuConfig::default(),
    });
    if let Some(npu) = &npu {
        npu_chips(v, npu, parts.map_or(&[][..], |p| &p.npu[..]), nodes);
    }
    let mut fallback: Vec<&str> = Vec::new();
    for n in nodes.iter_mut().filter(|n| !n.vgpu.is_empty()) {
        lahar_core::devices::vgpu::resolve_mig(&mut n.vgpu, &config);
        if n.vgpu.iter().any(|c| c.mig) && !lahar_core::devices::vgpu::node_mig(&n.vgpu) {
            fallback.push(&n.name);
        }
    }
    if let Some(first) = fallback.first() {
        let where_ = match doc {
            Some(_) => format!("the device ConfigMap {}/{} gives no geometries for its last card's model", id.0, id.1),
            None => format!(
                "the snapshot has no device ConfigMap {}/{} (Volcano's defaults have no MIG geometries)",
                id.0, id.1
            ),
        };
        let message = format!(
            "{} node(s) register MIG cards but run in HAMi-core mode, as in Volcano (the first: {first}): {where_}",
            fallback.len()
        );
        v.warn(VGPU_MIG_FALLBACK, fallback.len() as u64, None, "spec.snapshot", message);
    }
    npu
}

/// The nodes' Ascend chips, from their registrations of the chip types in
/// `config`, as Volcano's `NewAscendDevices` sees them: a type the ConfigMap
/// lacks, or that the node does not advertise in `status.allocatable`, is not
/// seen (counted in a warning); a registration lahar cannot read is an error
/// at its annotation.
fn npu_chips(v: &mut V<'_>, config: &VnpuConfig, regs: &[manifest::NpuRegistration], nodes: &mut [Node]) {
    use lahar_core::devices::vnpu::{Chip, ChipType, NodeChips};
    use std::sync::Arc;
    let types: Vec<Arc<ChipType>> = config.types.iter().cloned().map(Arc::new).collect();
    let mut unseen: Vec<String> = Vec::new();
    // The index of type `common_word` if Volcano sees it on `node` (in the
    // ConfigMap, its count resource advertised), else why not, in `unseen`.
    let mut seen = |v: &V<'_>, node: &Node, common_word: &str, what: String| {
        let Some(ti) = types.iter().position(|t| t.common_word == common_word) else {
            unseen.push(format!("node `{}` {what}, a type the device ConfigMap does not list", node.name));
            return None;
        };
        let name = &types[ti].resource_name;
        if v.names.dim(name).is_none_or(|d| node.allocatable.get(d) <= 0) {
            unseen.push(format!("node `{}` {what} but does not advertise `{name}`", node.name));
            return None;
        }
        Some(ti)
    };
    // The node's chips of type `ti`, kept in the ConfigMap's order of types.
    let insert = |node: &mut Node, ti: usize, chips: Vec<Chip>| {
        let after = |c: &NodeChips| types.iter().position(|t| Arc::ptr_eq(t, &c.ty)).unwrap_or(0) > ti;
        let at = node.vnpu.iter().position(after).unwrap_or(node.vnpu.len());
        node.vnpu.insert(at, NodeChips { ty: types[ti].clone(), chips });
    };
    for r in regs {
        let Some(node) = nodes.iter_mut().find(|n| n.name == r.node) else { continue };
        let Some(ti) = seen(v, node, &r.common_word, format!("registers {} chips", r.common_word)) else { continue };
        let hami_core = r.hami_core.as_deref().map_or(config.hami_core, |s| s == "true");
        match manifest::vnpu_chips(&r.text, hami_core) {
            Ok(chips) => insert(node, ti, chips),
            Err(e) => v.errors.push(Diagnostic {
                file: r.place.file.clone(),
                at: r.place.at,
                path: r.place.path.clone(),
                message: e,
            }),
        }
    }
    for c in std::mem::take(&mut v.compact_npus) {
        let Some(node) = nodes.iter_mut().find(|n| n.name == c.node) else { continue };
        let Some(ti) = seen(v, node, &c.common_word, format!("has {} chips (`vnpu`)", c.common_word)) else { continue };
        let hami_core = c.hami_core.unwrap_or(config.hami_core);
        let chip = |i: u32| Chip {
            id: format!("{}-npu{i}", c.node),
            count: c.count,
            devmem: c.memory,
            devcore: if hami_core { 100 } else { c.cores },
            network_id: lahar_core::devices::vnpu::ring_of(&c.common_word, i),
            hami_core,
        };
        insert(node, ti, (0..c.chips).map(chip).collect());
    }
    if let Some(first) = unseen.first() {
        let message = format!(
            "{} Ascend chip registration(s) Volcano does not see, so their chips hold no pod; the first: {first}",
            unseen.len()
        );
        v.warn(VNPU_UNSEEN, unseen.len() as u64, None, "spec.snapshot", message);
    }
}

/// A compact node's `vnpu`, given its type once the device ConfigMap is read.
#[derive(Clone, Debug)]
pub(crate) struct CompactNpus {
    /// The node.
    pub node: String,
    /// The chip type's `commonWord`.
    pub common_word: String,
    /// Chips, vNPUs per chip, MiB per chip, AI cores per chip.
    pub chips: u32,
    pub count: u32,
    pub memory: i64,
    pub cores: i64,
    /// `hamiCore`, if given (else the ConfigMap's `hamiVnpuCore`).
    pub hami_core: Option<bool>,
}

/// Warning kind: Ascend chip registrations Volcano's vNPU sharing does not see.
pub(crate) const VNPU_UNSEEN: &str = "vnpu-chips-unseen";

/// Device ConfigMaps of the snapshot that no conf reads (the conf models no vGPU,
/// or its deviceshare names another): counted as skipped objects.
pub(super) fn unused_device_configs(v: &mut V<'_>, parts: &Parts, used: Option<&(String, String)>) {
    let unused: Vec<(String, String)> =
        parts.config_maps.iter().map(manifest::config_map_id).filter(|id| used != Some(id)).collect();
    let Some(first) = unused.first() else { return };
    let why = match used {
        Some((ns, name)) => format!("the conf's deviceshare reads {ns}/{name}"),
        None => "the conf models no vGPU or vNPU sharing".to_string(),
    };
    let message = format!(
        "{} device ConfigMap(s) (`device-config.yaml`) were skipped, the first {}/{}: {why}",
        unused.len(),
        first.0,
        first.1
    );
    v.warn(SNAPSHOT_SKIPPED, unused.len() as u64, parts.at, "spec.snapshot", message);
}

/// Warning kind: MIG cards that run in HAMi-core mode for want of geometries.
pub(crate) const VGPU_MIG_FALLBACK: &str = "vgpu-mig-fallback";

/// The snapshot's Queues (with Volcano's `default` queue when it lists none of
/// that name: Volcano creates it in every cluster).
pub(super) fn queues(v: &mut V<'_>, parts: &Parts) -> Vec<Queue> {
    let mut errs = Vec::new();
    let mut q = manifest::queues(&parts.queues, &mut v.names, &mut errs);
    report(v, errs);
    if !q.iter().any(|q| q.name == "default") {
        q.insert(0, Queue::new("default"));
    }
    q
}

/// The snapshot's HyperNodes over the cluster's nodes.
pub(super) fn hypernodes(v: &mut V<'_>, parts: &Parts, nodes: &[Node]) -> Vec<HyperNodeDecl> {
    let refs: Vec<manifest::NodeRef<'_>> =
        nodes.iter().map(|n| manifest::NodeRef { name: &n.name, labels: &n.labels }).collect();
    let mut errs = Vec::new();
    let out = manifest::hypernodes(&parts.hypernodes, &refs, &mut errs);
    report(v, errs);
    out
}
