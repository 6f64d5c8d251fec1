//! A node's CPU topology (the `cpuDetail` of Volcano's Numatopology) and the
//! CPU picker Volcano's numa-aware plugin runs on it: `takeByTopology`,
//! the NUMA hints of the CPU manager and `Allocate`
//! (`pkg/scheduler/plugins/numaaware/provider/cpumanager`), ported literally.
//!
//! Two of the picker's quirks are Volcano's and kept: the free sockets are the
//! socket ids that are also ids of free CPUs (`Sockets() ∩ CPUs()`), and the
//! free cores of a socket likewise (`CoresInSockets(s) ∩ CPUs()`); and CPUs are
//! grouped into cores by core id alone, which the resource exporter reports
//! per socket, so "core 0" holds core 0 of every socket. The sorts use Go's
//! algorithm (see [`crate::util::gosort`]); the one over sockets starts, in lahar,
//! from ascending socket ids where Volcano starts from Go's map order.

use super::cpuset::{CpuSet, MAX_CPUS};
use crate::util::gosort::sort_slice;

/// Where a logical CPU sits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuInfo {
    /// NUMA node id (below 64).
    pub numa: u32,
    /// Socket (physical package) id.
    pub socket: u32,
    /// Core id, as the resource exporter reports it (unique per socket).
    pub core: u32,
}

/// At most this many NUMA nodes (the kubelet topology manager's default limit).
pub const MAX_NUMA_NODES: usize = 8;

/// A node's CPUs by id, with the groupings the picker asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct CpuTopology {
    info: Vec<Option<CpuInfo>>,
    /// Every CPU of the node.
    pub all: CpuSet,
    /// Distinct (socket, core) pairs: `getPhysicalCoresNum`.
    num_cores: usize,
    /// NUMA node ids, ascending.
    pub numa_nodes: Vec<u32>,
    sockets: Vec<(u32, CpuSet)>,
    cores: Vec<(u32, CpuSet)>,
    numas: Vec<(u32, CpuSet)>,
}

fn group(map: &mut Vec<(u32, CpuSet)>, id: u32, c: u32) {
    match map.binary_search_by_key(&id, |x| x.0) {
        Ok(i) => map[i].1.insert(c),
        Err(i) => map.insert(i, (id, CpuSet::of([c]))),
    }
}

fn lookup(map: &[(u32, CpuSet)], id: u32) -> CpuSet {
    map.binary_search_by_key(&id, |x| x.0).map_or(CpuSet::EMPTY, |i| map[i].1)
}

impl CpuTopology {
    /// The topology of `cpus` (id, place). Ids must be distinct and below
    /// [`MAX_CPUS`], NUMA ids below 64, and at most [`MAX_NUMA_NODES`] NUMA nodes.
    pub fn new(cpus: &[(u32, CpuInfo)]) -> Result<CpuTopology, String> {
        let mut t = CpuTopology {
            info: Vec::new(),
            all: CpuSet::EMPTY,
            num_cores: 0,
            numa_nodes: Vec::new(),
            sockets: Vec::new(),
            cores: Vec::new(),
            numas: Vec::new(),
        };
        let mut pairs = std::collections::BTreeSet::new();
        for &(c, i) in cpus {
            if c as usize >= MAX_CPUS {
                return Err(format!("CPU id {c} is beyond the {MAX_CPUS} lahar models"));
            }
            if i.numa >= 64 {
                return Err(format!("CPU {c}: NUMA node id {} is beyond 63", i.numa));
            }
            if t.all.contains(c) {
                return Err(format!("CPU {c} is listed twice"));
            }
            t.all.insert(c);
            if t.info.len() <= c as usize {
                t.info.resize(c as usize + 1, None);
            }
            t.info[c as usize] = Some(i);
            pairs.insert((i.socket, i.core));
            group(&mut t.sockets, i.socket, c);
            group(&mut t.cores, i.core, c);
            group(&mut t.numas, i.numa, c);
        }
        t.num_cores = pairs.len();
        t.numa_nodes = t.numas.iter().map(|x| x.0).collect();
        if t.numa_nodes.len() > MAX_NUMA_NODES {
            return Err(format!(
                "{} NUMA nodes; the kubelet's topology manager refuses more than {MAX_NUMA_NODES}",
                t.numa_nodes.len()
            ));
        }
        Ok(t)
    }

    /// Where CPU `c` sits (Go's zero value for a CPU not in the topology).
    pub fn info(&self, c: u32) -> CpuInfo {
        self.info.get(c as usize).copied().flatten().unwrap_or_default()
    }
    fn cpus_per_core(&self) -> usize {
        self.all.len().checked_div(self.num_cores).unwrap_or(0)
    }
    fn cpus_per_socket(&self) -> usize {
        self.all.len().checked_div(self.sockets.len()).unwrap_or(0)
    }
    /// The CPUs of NUMA node `n`.
    pub fn numa_cpus(&self, n: u32) -> CpuSet {
        lookup(&self.numas, n)
    }
    /// The CPUs of the NUMA nodes in `mask`.
    pub fn mask_cpus(&self, mask: u64) -> CpuSet {
        self.numas.iter().filter(|(n, _)| mask & (1 << n) != 0).fold(CpuSet::EMPTY, |a, (_, s)| a.union(s))
    }
    /// The NUMA nodes `cpus` span.
    pub fn numa_count(&self, cpus: &CpuSet) -> u32 {
        cpus.iter().fold(0u64, |m, c| m | 1 << self.info(c).numa).count_ones()
    }
    /// Socket ids of the CPUs in `d`, ascending.
    fn sockets_of(&self, d: &CpuSet) -> Vec<u32> {
        self.sockets.iter().filter(|(_, s)| s.meets(d)).map(|x| x.0).collect()
    }
    /// Core ids of the CPUs in `d` on socket `s`, ascending.
    fn cores_in_socket(&self, s: u32, d: &CpuSet) -> Vec<u32> {
        let mut v: Vec<u32> = lookup(&self.sockets, s).and(d).iter().map(|c| self.info(c).core).collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// Volcano's `takeByTopology`: `n` CPUs of `avail`, whole sockets first, then
/// whole cores, then single threads. `None` when it fails.
pub fn take_by_topology(t: &CpuTopology, avail: &CpuSet, n: usize) -> Option<CpuSet> {
    let mut details = avail.and(&t.all);
    let mut need = n as isize;
    let mut result = CpuSet::EMPTY;
    if need < 1 {
        return Some(result);
    }
    if need > details.len() as isize {
        return None;
    }
    let take = |s: CpuSet, result: &mut CpuSet, details: &mut CpuSet, need: &mut isize| {
        *result = result.union(&s);
        *details = details.minus(result);
        *need -= s.len() as isize;
    };
    let per_socket = t.cpus_per_socket() as isize;
    if need >= per_socket {
        // `Sockets() ∩ CPUs()`: socket ids that are free CPU ids.
        let free: Vec<u32> = t.sockets_of(&details).into_iter().filter(|&s| details.contains(s)).collect();
        for s in free {
            take(lookup(&t.sockets, s).and(&details), &mut result, &mut details, &mut need);
            if need < 1 {
                return Some(result);
            }
            if need < per_socket {
                break;
            }
        }
    }
    let per_core = t.cpus_per_core() as isize;
    if need >= per_core {
        for c in free_cores(t, &details) {
            take(lookup(&t.cores, c).and(&details), &mut result, &mut details, &mut need);
            if need < 1 {
                return Some(result);
            }
            if need < per_core {
                break;
            }
        }
    }
    for c in free_cpus(t, &details, &result) {
        if need >= 1 {
            take(CpuSet::of([c]), &mut result, &mut details, &mut need);
        }
        if need < 1 {
            return Some(result);
        }
    }
    None
}

/// `freeCores`: sockets by how many of their core ids are free CPU ids, then
/// each socket's such core ids ascending.
fn free_cores(t: &CpuTopology, d: &CpuSet) -> Vec<u32> {
    let free_of = |s: u32| -> Vec<u32> { t.cores_in_socket(s, d).into_iter().filter(|&c| d.contains(c)).collect() };
    let mut keyed: Vec<(usize, u32)> = t.sockets_of(d).into_iter().map(|s| (free_of(s).len(), s)).collect();
    sort_slice(&mut keyed, |a, b| a.0 < b.0 || a.1 < b.1);
    keyed.into_iter().flat_map(|(_, s)| free_of(s)).collect()
}

/// `freeCPUs`: the free cores in Volcano's (inconsistent) order, each core's
/// free CPUs ascending.
fn free_cpus(t: &CpuTopology, d: &CpuSet, result: &CpuSet) -> Vec<u32> {
    #[derive(Clone, Copy)]
    struct Key {
        core: u32,
        socket: u32,
        colo: usize,
        socket_free: usize,
        core_free: usize,
    }
    let mut cores: Vec<u32> = d.iter().map(|c| t.info(c).core).collect();
    cores.sort_unstable();
    cores.dedup();
    let mut keys: Vec<Key> = cores
        .into_iter()
        .map(|core| {
            let all = lookup(&t.cores, core);
            let socket = t.info(all.iter().next().expect("a core has CPUs")).socket;
            let in_socket = lookup(&t.sockets, socket);
            Key {
                core,
                socket,
                colo: in_socket.and(result).len(),
                socket_free: in_socket.and(d).len(),
                core_free: all.and(d).len(),
            }
        })
        .collect();
    sort_slice(&mut keys, |i, j| {
        i.colo > j.colo
            || i.socket_free < j.socket_free
            || i.core_free < j.core_free
            || i.socket < j.socket
            || i.core < j.core
    });
    keys.into_iter().flat_map(|k| lookup(&t.cores, k.core).and(d).iter().collect::<Vec<_>>()).collect()
}

/// A NUMA affinity (a bit mask of NUMA nodes; `None`: any) and whether it is
/// preferred: the kubelet topology manager's `TopologyHint`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hint {
    /// The NUMA nodes.
    pub mask: Option<u64>,
    /// Preferred.
    pub preferred: bool,
}

impl Hint {
    /// A hint on `nodes`.
    pub fn on(nodes: &[u32], preferred: bool) -> Hint {
        Hint { mask: Some(nodes.iter().fold(0, |m, n| m | 1 << n)), preferred }
    }
}

/// Every subset of `bits`, by size, then in lexicographic order of positions:
/// the kubelet's `IterateBitMasks`.
pub fn iterate_masks(bits: &[u32], mut f: impl FnMut(u64)) {
    fn rec(bits: &[u32], accum: u64, left: usize, f: &mut dyn FnMut(u64)) {
        if left == 0 {
            f(accum);
            return;
        }
        for i in 0..bits.len() {
            rec(&bits[i + 1..], accum | 1 << bits[i], left - 1, f);
        }
    }
    for size in 1..=bits.len() {
        rec(bits, 0, size, &mut f);
    }
}

/// `generateCPUTopologyHints`: each NUMA set with `request` free CPUs, the
/// smallest sets (among those the whole topology could hold the request in)
/// preferred.
pub fn cpu_hints(t: &CpuTopology, avail: &CpuSet, request: usize) -> Vec<Hint> {
    let mut min = t.numa_nodes.len() as u32;
    let mut hints = Vec::new();
    iterate_masks(&t.numa_nodes, |mask| {
        let cpus = t.mask_cpus(mask);
        if cpus.len() >= request && mask.count_ones() < min {
            min = mask.count_ones();
        }
        // An available CPU the topology lacks counts as NUMA node 0 (Go's zero value).
        let matching = avail.and(&cpus).len() + if mask & 1 != 0 { avail.minus(&t.all).len() } else { 0 };
        if matching >= request {
            hints.push(Hint { mask: Some(mask), preferred: false });
        }
    });
    for h in &mut hints {
        h.preferred = h.mask.expect("set").count_ones() == min;
    }
    hints
}

/// The CPU manager's `Allocate`: `request` CPUs of `avail`, those of the best
/// hint's NUMA nodes first. Empty when a take fails (as Volcano returns it).
pub fn allocate(t: &CpuTopology, avail: &CpuSet, request: usize, best: &Hint) -> CpuSet {
    let mut result = CpuSet::EMPTY;
    if let Some(mask) = best.mask {
        let aligned = avail.and(&t.mask_cpus(mask));
        let n = request.min(aligned.len());
        match take_by_topology(t, &aligned, n) {
            Some(a) => result = a,
            None => return CpuSet::EMPTY,
        }
    }
    match take_by_topology(t, &avail.minus(&result), request - result.len()) {
        Some(rest) => result.union(&rest),
        None => CpuSet::EMPTY,
    }
}
