//! NUMA placement inputs: what a pod asks (its QoS class, its containers' CPU
//! requests, its `volcano.sh/numa-topology-policy`) and a node's topology (a
//! `Numatopology` object of `nodeinfo.volcano.sh/v1alpha1`, as Volcano's
//! resource exporter writes it). See [`lahar_core::devices::numa`].

use super::ck::{Ck, join};
use super::yaml::{At, Node, Val};
use lahar_core::devices::numa::{
    CpuInfo, CpuSet, CpuTopology, NUMA_POLICY_ANNOTATION, NodeNuma, NumaAsk, NumaContainer, PodAllocation,
    TopologyPolicy,
};
use std::collections::BTreeMap;

/// The policy values, for messages.
const POLICIES: &str = "none, best-effort, restricted or single-numa-node";

/// Reads a topology policy value at `path`.
pub(crate) fn policy(ck: &mut Ck<'_>, v: &str, at: At, path: &str) -> Option<TopologyPolicy> {
    let p = TopologyPolicy::parse(v);
    if p.is_none() {
        ck.err(at, path, format!("expected {POLICIES} (the kubelet's topology manager policies), got `{v}`"));
    }
    p
}

/// A quantity of `c`'s `resources.<part>.<name>` (`scale` 1000 for milli-units),
/// when present and readable (the resource reader reports bad ones).
fn quantity(c: &Node, part: &str, name: &str, scale: i64) -> Option<i64> {
    let q = c.get("resources")?.get(part)?.get(name)?.scalar()?;
    lahar_core::util::quantity::parse_quantity(&q, scale).ok()
}

/// Kubernetes' `ComputePodQOS` on the pod as the API server stores it (a
/// missing request defaults to its limit): Guaranteed when every container,
/// init containers included, limits CPU and memory and the summed requests
/// equal the summed limits.
fn guaranteed(containers: &[Node], init: &[Node]) -> bool {
    let mut req: BTreeMap<&str, i64> = BTreeMap::new();
    let mut lim: BTreeMap<&str, i64> = BTreeMap::new();
    let mut all_limited = true;
    for c in containers.iter().chain(init) {
        let mut limited = 0;
        for (name, scale) in [("cpu", 1000), ("memory", 1)] {
            let l = quantity(c, "limits", name, scale).filter(|&x| x > 0);
            let r = quantity(c, "requests", name, scale).or(l).filter(|&x| x > 0);
            if let Some(r) = r {
                *req.entry(name).or_default() += r;
            }
            if let Some(l) = l {
                *lim.entry(name).or_default() += l;
                limited += 1;
            }
        }
        all_limited &= limited == 2;
    }
    all_limited && !req.is_empty() && req == lim
}

/// What a pod (template) asks of NUMA placement: `None` for a pod that is not
/// Guaranteed and names no policy. `status_qos`: the object's
/// `status.qosClass`, which wins, as in Volcano's `GetPodQOS`.
pub(crate) fn pod_ask(
    ck: &mut Ck<'_>,
    spec: &Node,
    annotations: &BTreeMap<String, (String, At)>,
    path: &str,
    status_qos: Option<String>,
) -> Option<Box<NumaAsk>> {
    let seq = |key: &str| match spec.get(key).map(|n| &n.val) {
        Some(Val::Seq(v)) => v.clone(),
        _ => Vec::new(),
    };
    let (containers, init) = (seq("containers"), seq("initContainers"));
    let policy = annotations
        .get(NUMA_POLICY_ANNOTATION)
        .and_then(|(v, at)| policy(ck, v, *at, &join(path, &format!("metadata.annotations.{NUMA_POLICY_ANNOTATION}"))));
    let guaranteed = match status_qos {
        Some(q) => q == "Guaranteed",
        None => guaranteed(&containers, &init),
    };
    if !guaranteed && policy.is_none() {
        return None;
    }
    let containers = containers
        .iter()
        .map(|c| {
            let cpu = quantity(c, "requests", "cpu", 1000).or_else(|| quantity(c, "limits", "cpu", 1000));
            NumaContainer {
                name: c.get("name").and_then(Node::scalar).unwrap_or_default(),
                // `guaranteedCPUs`: whole requests only.
                cpus: cpu.map(|m| if m % 1000 == 0 { u32::try_from(m / 1000).unwrap_or(u32::MAX) } else { 0 }),
            }
        })
        .collect();
    Some(Box::new(NumaAsk { guaranteed, policy, containers }))
}

/// Gives the pods of a shape a task's `topologyPolicy` (Volcano's job
/// controller writes it into their `volcano.sh/numa-topology-policy`).
pub(crate) fn set_policy(hints: &mut Option<std::sync::Arc<lahar_core::model::job::PodHints>>, p: TopologyPolicy) {
    let mut h = hints.as_deref().cloned().unwrap_or_default();
    let ask =
        h.numa.get_or_insert_with(|| Box::new(NumaAsk { guaranteed: false, policy: None, containers: Vec::new() }));
    ask.policy = Some(p);
    *hints = h.shared();
}

/// Fields of a Numatopology's `spec`.
const SPEC: [&str; 5] = ["policies", "numares", "cpuDetail", "resReserved", "podAllocations"];

/// Reads a `Numatopology` (its `metadata.name` names its node).
pub(crate) fn numatopology(ck: &mut Ck<'_>, root: &Node) -> Option<(String, NodeNuma)> {
    let name = root.get("metadata").and_then(|m| m.get("name")).and_then(Node::scalar).unwrap_or_default();
    if name.is_empty() {
        ck.err(root.at, "metadata.name", "a Numatopology is named after its node; expected a name");
    }
    let empty = Node { at: root.at, val: Val::Null };
    let spec = root.get("spec").unwrap_or(&empty);
    if let Val::Map(m) = &spec.val {
        for (k, v) in m {
            if !SPEC.contains(&k.as_str()) {
                ck.err(
                    v.at,
                    &format!("spec.{k}"),
                    format!("unknown field of a Numatopology; expected one of: {}", SPEC.join(", ")),
                );
            }
        }
    }
    // Policies: the two the exporter writes, with the kubelet's values.
    let mut cpu_static = false;
    let mut topology = None;
    for (k, (v, at)) in ck.string_map(spec, "policies", "spec") {
        let p = format!("spec.policies.{k}");
        match k.as_str() {
            "CPUManagerPolicy" => match v.as_str() {
                "static" => cpu_static = true,
                "none" | "" => {}
                _ => ck.err(
                    at,
                    &p,
                    format!("expected `static` or `none` (the kubelet's CPU manager policies), got `{v}`"),
                ),
            },
            "TopologyManagerPolicy" if v.is_empty() => {}
            "TopologyManagerPolicy" => topology = policy(ck, &v, at, &p),
            _ => ck.err(at, &p, "unknown policy; expected CPUManagerPolicy or TopologyManagerPolicy"),
        }
    }
    // The CPUs.
    let mut cpus = Vec::new();
    if let Some(d) = spec.get("cpuDetail") {
        match &d.val {
            Val::Map(m) => {
                for (k, v) in m {
                    let p = format!("spec.cpuDetail.{k}");
                    let Ok(id) = k.parse::<u32>() else {
                        ck.err(v.at, &p, format!("expected a CPU id, got `{k}`"));
                        continue;
                    };
                    let mut info = CpuInfo::default();
                    if let Val::Map(f) = &v.val {
                        for (fk, fv) in f {
                            let slot = match fk.as_str() {
                                "numa" => &mut info.numa,
                                "socket" => &mut info.socket,
                                "core" => &mut info.core,
                                _ => {
                                    ck.err(fv.at, &format!("{p}.{fk}"), "unknown field; expected numa, socket or core");
                                    continue;
                                }
                            };
                            match fv.scalar().and_then(|s| s.parse::<u32>().ok()) {
                                Some(x) => *slot = x,
                                None => ck.err(fv.at, &format!("{p}.{fk}"), "expected a whole number ≥ 0"),
                            }
                        }
                    } else {
                        ck.err(v.at, &p, "expected {numa, socket, core}");
                    }
                    cpus.push((id, info));
                }
            }
            _ => ck.err(d.at, "spec.cpuDetail", "expected a map of CPU ids to {numa, socket, core}"),
        }
    }
    if cpus.is_empty() {
        ck.err(spec.at, "spec.cpuDetail", "a Numatopology needs its CPUs (`cpuDetail`)");
    }
    let topo = match CpuTopology::new(&cpus) {
        Ok(t) => t,
        Err(e) => {
            ck.err(spec.get("cpuDetail").and_then(|n| n.at), "spec.cpuDetail", e);
            return None;
        }
    };
    // The CPU pool.
    let mut has_cpu = false;
    let mut allocatable = CpuSet::EMPTY;
    if let Some(Val::Map(m)) = spec.get("numares").map(|n| &n.val) {
        for (k, v) in m {
            let p = format!("spec.numares.{k}");
            if k != "cpu" {
                ck.err(v.at, &p, "only the `cpu` pool is read (the resource exporter reports no other)");
                continue;
            }
            has_cpu = true;
            if let Val::Map(f) = &v.val {
                for (fk, fv) in f {
                    match fk.as_str() {
                        "allocatable" => match CpuSet::parse(&fv.scalar().unwrap_or_default()) {
                            Ok(s) if s.minus(&topo.all).is_empty() => allocatable = s,
                            Ok(s) => ck.err(
                                fv.at,
                                &format!("{p}.allocatable"),
                                format!("CPUs {} are not in `cpuDetail`", s.minus(&topo.all)),
                            ),
                            Err(e) => ck.err(
                                fv.at,
                                &format!("{p}.allocatable"),
                                format!("expected a CPU list such as `0-3,8`: {e}"),
                            ),
                        },
                        "capacity" => {}
                        _ => ck.err(fv.at, &format!("{p}.{fk}"), "unknown field; expected allocatable or capacity"),
                    }
                }
            }
        }
    }
    // Reserved CPUs: whole CPUs, rounded up.
    let mut reserved = CpuSet::EMPTY;
    for (k, (v, at)) in ck.string_map(spec, "resReserved", "spec") {
        let p = format!("spec.resReserved.{k}");
        if k != "cpu" {
            continue;
        }
        match lahar_core::util::quantity::parse_quantity(&v, 1000) {
            Ok(m) if m >= 0 => {
                let n = (m as usize).div_ceil(1000);
                reserved = lahar_core::devices::numa::take_by_topology(&topo, &topo.all, n).unwrap_or_default();
            }
            _ => ck.err(at, &p, format!("expected a CPU quantity such as `1` or `1500m`, got `{v}`")),
        }
    }
    // The kubelet's assignments.
    let mut pod_allocations = Vec::new();
    for (i, a) in ck.seq(spec, "podAllocations", "spec").iter().enumerate() {
        let ap = format!("spec.podAllocations[{i}]");
        let s = |k: &str| a.get(k).and_then(Node::scalar).unwrap_or_default();
        let mut cpus = CpuSet::EMPTY;
        for (j, c) in ck.seq(a, "containerAllocations", &ap).iter().enumerate() {
            let cp = format!("{ap}.containerAllocations[{j}].allocations.cpu");
            if let Some(text) = c.get("allocations").and_then(|x| x.get("cpu")) {
                match CpuSet::parse(&text.scalar().unwrap_or_default()) {
                    Ok(x) if x.minus(&topo.all).is_empty() => cpus = cpus.union(&x),
                    Ok(x) => ck.err(text.at, &cp, format!("CPUs {} are not in `cpuDetail`", x.minus(&topo.all))),
                    Err(e) => ck.err(text.at, &cp, format!("expected a CPU list such as `0-3,8`: {e}")),
                }
            }
        }
        pod_allocations.push(PodAllocation { uid: s("uid"), namespace: s("namespace"), name: s("name"), cpus });
    }
    Some((name, NodeNuma { cpu_static, topology, topo, has_cpu, allocatable, reserved, pod_allocations }))
}
