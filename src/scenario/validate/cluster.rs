//! `spec.cluster`: node groups, explicit nodes, machine lists, the fabric and
//! HyperNodes.

use super::{At, MAX_NODES, V, at};
use crate::scenario::raw::*;
use lahar_core::model::cluster::{GPU_PRODUCT_LABEL, IntraNode, Nics, Node, NodeId};
use lahar_core::model::resource::{GPU, PODS, Resources};
use lahar_core::model::topology::{FabricTier, HyperNodeDecl, Member};
use lahar_core::world::MAX_NODE_GPUS;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub(super) fn hypernodes(v: &mut V<'_>, c: &RawCluster, nodes: &[Node]) -> Option<Vec<HyperNodeDecl>> {
    let RawHyperNodes::List(list) = &c.hyper_nodes.as_ref()?.value else { return None };
    if c.fabric.is_some() {
        v.err(None, "spec.cluster.hyperNodes", "give either `fabric` or `hyperNodes`, not both");
    }
    let by_name: BTreeMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let hn_names: BTreeSet<&str> = list.iter().map(|h| h.value.name.value.as_str()).collect();
    let mut out = Vec::new();
    for (i, h) in list.iter().enumerate() {
        let path = format!("spec.cluster.hyperNodes[{i}]");
        let tier = v.count(&h.value.tier, &format!("{path}.tier"), 0).unwrap_or(1);
        let mut members = Vec::new();
        for m in &h.value.members {
            if let Some(&n) = by_name.get(m.as_str()) {
                members.push(Member::Node(NodeId(n as u32)));
            } else if hn_names.contains(m.as_str()) {
                members.push(Member::HyperNode(m.clone()));
            } else {
                v.err(at(h), format!("{path}.members"), format!("`{m}` is neither a node nor a HyperNode"));
            }
        }
        out.push(HyperNodeDecl {
            name: h.value.name.value.clone(),
            tier,
            tier_name: h.value.tier_name.clone().unwrap_or_default(),
            members,
            label_keys: Vec::new(),
        });
    }
    Some(out)
}

pub(super) fn cluster(v: &mut V<'_>, c: &RawCluster, base: &Path) -> (Vec<Node>, Option<Vec<FabricTier>>) {
    let mut nodes = Vec::new();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |v: &mut V<'_>, node: Node, path: &str, at: At| {
        if let Some(prev) = names.insert(node.name.clone(), path.to_string()) {
            v.err(at, path, format!("node name `{}` is already used by {prev}", node.name));
        } else if let Some(why) = lahar_core::util::text::name_problem(&node.name) {
            v.err(at, path, format!("node name {why}"));
        }
        nodes.push(node);
    };
    // Nodes the groups expand to so far.
    let mut grouped = 0usize;
    for (i, g) in c.node_groups.iter().flatten().enumerate() {
        let path = format!("spec.cluster.nodeGroups[{i}]");
        let Some(count) = &g.value.count else {
            v.err(at(g), &path, "a node group needs `count`");
            continue;
        };
        let mut count = v.count(count, &format!("{path}.count"), 0);
        if let Some(c) = count.filter(|&c| grouped + c as usize > MAX_NODES) {
            // Refused before a single node is built: a huge count would exhaust memory.
            let total = grouped + c as usize;
            let why = format!("the cluster would have {total} nodes; lahar simulates at most {MAX_NODES}");
            v.err(at(g.value.count.as_ref().expect("checked above")), format!("{path}.count"), why);
            count = None;
        }
        if let (Some(template), Some(count)) = (node(v, &g.value, &path), count) {
            grouped += count as usize;
            // The group's chips, once per node it expands to.
            let npus = g.value.vnpu.is_some().then(|| v.compact_npus.pop()).flatten();
            for k in 0..count {
                let mut n = template.clone();
                n.name = format!("{}-{k}", template.name);
                if let Some(c) = &npus {
                    v.compact_npus.push(super::snapshot::CompactNpus { node: n.name.clone(), ..c.clone() });
                }
                for (i, c) in n.vgpu.iter_mut().enumerate() {
                    c.uuid = format!("GPU-{}-{i}", n.name);
                }
                if g.value.absent == Some(true) {
                    v.absent_nodes.insert(n.name.clone());
                }
                add(v, n, &path, at(g));
            }
        }
    }
    for (i, n) in c.nodes.iter().flatten().enumerate() {
        let path = format!("spec.cluster.nodes[{i}]");
        if let Some(cnt) = &n.value.count {
            v.err(at(cnt), format!("{path}.count"), "`count` belongs to nodeGroups; an explicit node is one node");
        }
        if let Some(node) = node(v, &n.value, &path) {
            if n.value.absent == Some(true) {
                v.absent_nodes.insert(node.name.clone());
            }
            add(v, node, &path, at(n));
        }
    }
    if let Some(list) = &c.node_list {
        for (node, path) in node_list(v, list, base) {
            add(v, node, &path, at(list));
        }
    }
    let fabric = c.fabric.as_ref().map(|tiers| {
        let mut out = Vec::new();
        for (i, t) in tiers.iter().enumerate() {
            let path = format!("spec.cluster.fabric[{i}]");
            let tier = t.value.tier.value;
            if tier != i as i64 + 1 {
                v.err(
                    at(&t.value.tier),
                    format!("{path}.tier"),
                    format!("tiers must be listed as 1, 2, 3... in order; expected {}, got {tier}", i + 1),
                );
            }
            let fanout = v.count(&t.value.fanout, &format!("{path}.fanout"), 1).unwrap_or(1);
            let over = t.value.oversubscription.as_ref().map(|o| o.value).unwrap_or(1.0);
            if let Some(o) = &t.value.oversubscription
                && !(o.value >= 1.0 && o.value.is_finite())
            {
                v.err(
                    at(o),
                    format!("{path}.oversubscription"),
                    format!("must be a number ≥ 1.0 (1.0 = non-blocking), got {}", o.value),
                );
            }
            out.push(FabricTier {
                tier: tier.max(1) as u32,
                name: t.value.name.clone(),
                fanout,
                oversubscription: over,
            });
        }
        out
    });
    (nodes, fabric)
}

/// Nodes of a trace's machine list (`cluster.nodeList`), in file order, each with
/// the path that names it in errors. Only openb's node lists describe machines
/// (`sn,cpu_milli,memory_mib,gpu,model`); GPU nodes get the model as their
/// `nvidia.com/gpu.product` label (what openb's `gpu_spec` selects) and PCIe
/// intra-node links (the list does not say; the trace's jobs carry no model whose
/// run time would depend on it).
fn node_list(v: &mut V<'_>, list: &Spanned<RawNodeList>, base: &Path) -> Vec<(Node, String)> {
    let l = &list.value;
    let path = "spec.cluster.nodeList";
    if l.format.value != "openb" {
        v.err(
            at(&l.format),
            format!("{path}.format"),
            format!("unknown node-list format `{}`; expected openb", l.format.value),
        );
        return Vec::new();
    }
    let pods = match &l.pods {
        Some(p) => v.count(p, &format!("{path}.pods"), 1).unwrap_or(110),
        None => 110,
    };
    let file = lahar_core::util::files::join(base, &l.path.value);
    // Strict: a machine list is the cluster, so a bad row is an error, not a skip.
    let read = match lahar_traces::openb::read_nodes(&file, true) {
        Ok(r) => r,
        Err(e) => {
            v.err(at(&l.path), format!("{path}.path"), e.to_string());
            return Vec::new();
        }
    };
    let mut out = Vec::with_capacity(read.nodes.len());
    for (i, n) in read.nodes.into_iter().enumerate() {
        let npath = format!("{path} ({}, node {} `{}`)", l.path.value, i + 1, n.name);
        if n.gpus > MAX_NODE_GPUS {
            v.err(at(&l.path), &npath, format!("at most {MAX_NODE_GPUS} GPUs per node, got {}", n.gpus));
            continue;
        }
        let mut alloc = Resources::ZERO;
        alloc.set(lahar_core::model::resource::CPU, n.cpu_milli);
        alloc.set(lahar_core::model::resource::MEMORY, n.memory_bytes);
        alloc.set(GPU, i64::from(n.gpus) * 1000);
        alloc.set(PODS, i64::from(pods));
        let gpu_model = n.model.unwrap_or_default();
        let mut labels = BTreeMap::new();
        if !gpu_model.is_empty() {
            labels.insert(GPU_PRODUCT_LABEL.to_string(), gpu_model.clone());
        }
        let node = Node {
            name: n.name,
            labels,
            allocatable: alloc,
            gpu_model,
            intra_node: IntraNode::Pcie,
            taints: Vec::new(),
            nics: Nics::default(),
            speed: 1.0,
            vgpu: Vec::new(),
            vnpu: Vec::new(),
            numa: None,
        };
        out.push((node, npath));
    }
    out
}

fn node(v: &mut V<'_>, n: &RawNode, path: &str) -> Option<Node> {
    let errors_before = v.errors.len();
    if n.name.value.is_empty() {
        v.err(at(&n.name), format!("{path}.name"), "expected a non-empty name");
    }
    let mut alloc = Resources::ZERO;
    match &n.cpu {
        Some(q) => {
            if let Some((d, x)) = v.quantity("cpu", &q.value, at(q), &format!("{path}.cpu")) {
                alloc.set(d, x);
            }
        }
        None => v.err(at(&n.name), path, "missing `cpu` (e.g. cpu: 96)"),
    }
    match &n.memory {
        Some(q) => {
            if let Some((d, x)) = v.quantity("memory", &q.value, at(q), &format!("{path}.memory")) {
                alloc.set(d, x);
            }
        }
        None => v.err(at(&n.name), path, "missing `memory` (e.g. memory: 1Ti)"),
    }
    let gpus = match &n.gpus {
        Some(g) => v.count(g, &format!("{path}.gpus"), 0).unwrap_or(0),
        None => 0,
    };
    if gpus > MAX_NODE_GPUS
        && let Some(g) = &n.gpus
    {
        v.err(at(g), format!("{path}.gpus"), format!("at most {MAX_NODE_GPUS} GPUs per node, got {gpus}"));
    }
    alloc.set(GPU, gpus as i64 * 1000);
    let pods = match &n.pods {
        Some(p) => v.count(p, &format!("{path}.pods"), 1).unwrap_or(110),
        None => 110,
    };
    alloc.set(PODS, pods as i64);
    if let Some(ext) = &n.extended_resources {
        for (k, q) in &ext.value {
            let p = format!("{path}.extendedResources.{k}");
            if k == "cpu" || k == "memory" || k == "pods" || k == lahar_core::model::resource::GPU_RESOURCE {
                v.err(at(ext), p, format!("`{k}` has its own field"));
                continue;
            }
            if let Some((d, x)) = v.quantity(k, q, at(ext), &p) {
                alloc.set(d, x);
            }
        }
    }
    let intra = match &n.intra_node {
        Some(s) => IntraNode::parse(&s.value).unwrap_or_else(|| {
            v.err(
                at(s),
                format!("{path}.intraNode"),
                format!("unknown intra-node fabric `{}`; expected nvswitch, nvlink-pairs, pcie or pcie-sys", s.value),
            );
            IntraNode::Pcie
        }),
        None if gpus > 0 => IntraNode::NvSwitch,
        None => IntraNode::Pcie,
    };
    let nics = match &n.nics {
        Some(x) => Nics {
            count: v.count(&x.count, &format!("{path}.nics.count"), 0).unwrap_or(0),
            gbps: v.count(&x.gbps, &format!("{path}.nics.gbps"), 1).unwrap_or(1),
        },
        None => Nics::default(),
    };
    let speed = match &n.speed {
        Some(x) if x.value.is_finite() && x.value > 0.0 && x.value <= 1000.0 => x.value,
        Some(x) => {
            v.err(
                at(x),
                format!("{path}.speed"),
                format!("expected a number above 0 and at most 1000, got {}", x.value),
            );
            1.0
        }
        None => 1.0,
    };
    if let Some(x) = &n.vnpu
        && let Some(c) = compact_npus(v, x, &n.name.value, path)
    {
        compact_npu_resource(v, &c, x, &mut alloc, n.extended_resources.as_ref(), path);
        v.compact_npus.push(c);
    }
    let gpu_model = n.gpu_model.clone().unwrap_or_default();
    // A GPU model is printed (pods.csv, summaries by model) as a node's name is.
    if let Some(why) = lahar_core::util::text::name_problem(&gpu_model) {
        v.err(at(&n.name), format!("{path}.gpuModel"), why);
    }
    let vgpu =
        n.vgpu.as_ref().map(|g| vgpu_cards(v, g, &n.name.value, &gpu_model, &mut alloc, path)).unwrap_or_default();
    let mut labels = n.labels.clone().unwrap_or_default();
    if !gpu_model.is_empty() {
        labels.entry(GPU_PRODUCT_LABEL.to_string()).or_insert_with(|| gpu_model.clone());
    }
    let numa = n.numa.as_ref().and_then(|x| numa_topology(v, x, alloc.get(lahar_core::model::resource::CPU), path));
    (v.errors.len() == errors_before).then(|| Node {
        name: n.name.value.clone(),
        labels,
        allocatable: alloc,
        gpu_model,
        intra_node: intra,
        taints: Vec::new(),
        nics,
        speed,
        vgpu,
        vnpu: Vec::new(),
        numa,
    })
}

/// A compact node's `vnpu` chips, checked: `chips`, `count`, `memory` at least
/// 1, `cores` at least 0, a type without spaces.
fn compact_npus(v: &mut V<'_>, x: &Spanned<RawVnpu>, node: &str, path: &str) -> Option<super::snapshot::CompactNpus> {
    let p = format!("{path}.vnpu");
    let kind = &x.value.kind;
    if kind.value.is_empty() || kind.value.contains(char::is_whitespace) {
        v.err(at(kind), format!("{p}.type"), "expected a chip type's commonWord, such as Ascend310P or Ascend910B3");
        return None;
    }
    let chips = v.count(&x.value.chips, &format!("{p}.chips"), 1)?;
    let count = v.count(&x.value.count, &format!("{p}.count"), 1)?;
    let memory = v.count(&x.value.memory, &format!("{p}.memory"), 1)?;
    let cores = v.count(&x.value.cores, &format!("{p}.cores"), 0)?;
    if chips > 64 {
        v.err(at(&x.value.chips), format!("{p}.chips"), format!("at most 64 chips per type, got {chips}"));
        return None;
    }
    Some(super::snapshot::CompactNpus {
        node: node.to_string(),
        common_word: kind.value.clone(),
        chips,
        count,
        memory: i64::from(memory),
        cores: i64::from(cores),
        hami_core: x.value.hami_core,
    })
}

/// The count resource a compact node's chips give: `huawei.com/<type>` =
/// chips × count (the device plugin's name in every published ConfigMap),
/// unless `extendedResources` sets it.
fn compact_npu_resource(
    v: &mut V<'_>,
    c: &super::snapshot::CompactNpus,
    x: &Spanned<RawVnpu>,
    alloc: &mut Resources,
    ext: Option<&Spanned<BTreeMap<String, crate::scenario::raw::Quantity>>>,
    path: &str,
) {
    let name = format!("huawei.com/{}", c.common_word);
    if ext.is_some_and(|e| e.value.contains_key(&name)) {
        return;
    }
    let q = crate::scenario::raw::Quantity((i64::from(c.chips) * i64::from(c.count)).to_string());
    if let Some((d, n)) = v.quantity(&name, &q, at(x), &format!("{path}.vnpu")) {
        alloc.set(d, n);
    }
}

/// A node's `numa` topology: its `cpu` CPUs over `sockets` sockets (default:
/// one per NUMA node) of `numaNodes` NUMA nodes, `threadsPerCore` threads per
/// core (default 2), numbered as Linux numbers an x86 machine's: the first
/// thread of every core, socket by socket, then the second; core ids count
/// from 0 on each socket; each socket's cores split evenly over its NUMA
/// nodes. All CPUs are free when the run starts; `reserved` CPUs (taken as
/// Volcano takes `resReserved`) go to no pod.
fn numa_topology(
    v: &mut V<'_>,
    r: &Spanned<crate::scenario::raw::RawNuma>,
    cpu_milli: i64,
    path: &str,
) -> Option<std::sync::Arc<lahar_core::devices::numa::NodeNuma>> {
    use lahar_core::devices::numa::{CpuInfo, CpuTopology, NodeNuma, TopologyPolicy, take_by_topology};
    let p = format!("{path}.numa");
    let x = &r.value;
    let numa = v.count(&x.numa_nodes, &format!("{p}.numaNodes"), 1)?;
    let sockets = x.sockets.as_ref().map_or(Some(numa), |s| v.count(s, &format!("{p}.sockets"), 1))?;
    let threads = x.threads_per_core.as_ref().map_or(Some(2), |s| v.count(s, &format!("{p}.threadsPerCore"), 1))?;
    let topology = TopologyPolicy::parse(&x.topology_policy.value);
    if topology.is_none() {
        v.err(at(&x.topology_policy), format!("{p}.topologyPolicy"), format!(
            "expected none, best-effort, restricted or single-numa-node (the kubelet's topology manager policies), got `{}`",
            x.topology_policy.value
        ));
    }
    let cpu_static = match x.cpu_manager_policy.as_ref().map(|s| s.value.as_str()) {
        None | Some("static") => true,
        Some("none") => false,
        Some(o) => {
            let s = x.cpu_manager_policy.as_ref().expect("some");
            v.err(at(s), format!("{p}.cpuManagerPolicy"), format!("expected `static` or `none`, got `{o}`"));
            false
        }
    };
    let cpus = cpu_milli / 1000;
    let per_core_group = u64::from(sockets) * u64::from(threads);
    if numa % sockets != 0 {
        v.err(at(r), format!("{p}.numaNodes"), format!("{numa} NUMA nodes do not split evenly over {sockets} sockets"));
        return None;
    }
    let k = u64::from(numa / sockets);
    if cpu_milli % 1000 != 0 || cpus <= 0 || !(cpus as u64).is_multiple_of(per_core_group * k) {
        v.err(at(r), p.clone(), format!(
            "the node's cpu ({}) must be a whole number of CPUs that splits into {sockets} socket(s) × {threads} thread(s) per core × {k} NUMA node(s) per socket",
            cpu_milli as f64 / 1000.0
        ));
        return None;
    }
    let per_socket = cpus as u64 / per_core_group;
    let per_numa = per_socket / k;
    let mut list = Vec::new();
    for t in 0..u64::from(threads) {
        for s in 0..u64::from(sockets) {
            for c in 0..per_socket {
                let id = t * u64::from(sockets) * per_socket + s * per_socket + c;
                let info = CpuInfo { numa: (s * k + c / per_numa) as u32, socket: s as u32, core: c as u32 };
                list.push((id as u32, info));
            }
        }
    }
    let topo = match CpuTopology::new(&list) {
        Ok(t) => t,
        Err(e) => {
            v.err(at(r), p, e);
            return None;
        }
    };
    let reserved = match &x.reserved {
        Some(s) => {
            let n = v.count(s, &format!("{p}.reserved"), 0)? as usize;
            if n > topo.all.len() {
                v.err(at(s), format!("{p}.reserved"), format!("{n} CPUs reserved of {}", topo.all.len()));
                return None;
            }
            take_by_topology(&topo, &topo.all, n).unwrap_or_default()
        }
        None => Default::default(),
    };
    Some(std::sync::Arc::new(NodeNuma {
        cpu_static,
        topology,
        allocatable: topo.all,
        topo,
        has_cpu: true,
        reserved,
        pod_allocations: Vec::new(),
    }))
}

/// A node's `vgpu` cards: `cards` cards of `memory` MiB, each shared by up to
/// `split` pods (default 10, the device plugin's `deviceSplitCount`), of type
/// `type` (default `NVIDIA-<gpuModel>`, else `NVIDIA`), with UUIDs
/// `GPU-<node>-<i>`. Like the device plugin, the node then advertises
/// `volcano.sh/vgpu-number` = cards × split, `volcano.sh/vgpu-memory` = cards ×
/// memory and `volcano.sh/vgpu-cores` = 100 × cards, unless `extendedResources`
/// says otherwise.
fn vgpu_cards(
    v: &mut V<'_>,
    g: &crate::scenario::raw::RawVgpu,
    name: &str,
    gpu_model: &str,
    alloc: &mut Resources,
    path: &str,
) -> Vec<lahar_core::devices::vgpu::VgpuCard> {
    use lahar_core::devices::vgpu::{VGPU_CORES, VGPU_MEMORY, VGPU_NUMBER, VgpuCard};
    let cards = v.count(&g.cards, &format!("{path}.vgpu.cards"), 1).unwrap_or(0);
    if cards > MAX_NODE_GPUS {
        v.err(
            at(&g.cards),
            format!("{path}.vgpu.cards"),
            format!("at most {MAX_NODE_GPUS} cards per node, got {cards}"),
        );
        return Vec::new();
    }
    let memory = v.count(&g.memory, &format!("{path}.vgpu.memory"), 1).unwrap_or(0);
    let split = g.split.as_ref().map_or(Some(10), |s| v.count(s, &format!("{path}.vgpu.split"), 1)).unwrap_or(0);
    let kind = match &g.kind {
        Some(k) => k.clone(),
        None if gpu_model.is_empty() => "NVIDIA".into(),
        None => format!("NVIDIA-{gpu_model}"),
    };
    if cards == 0 || memory == 0 || split == 0 {
        return Vec::new();
    }
    for (r, x) in [(VGPU_NUMBER, cards * split), (VGPU_MEMORY, cards * memory), (VGPU_CORES, cards * 100)] {
        match v.names.dim_or_register(r) {
            Ok(d) if alloc.get(d) == 0 => alloc.set(d, i64::from(x) * 1000),
            Ok(_) => {}
            Err(e) => v.err(at(&g.cards), format!("{path}.vgpu"), e.to_string()),
        }
    }
    (0..cards).map(|i| VgpuCard::new(&format!("GPU-{name}-{i}"), split, i64::from(memory), &kind)).collect()
}
