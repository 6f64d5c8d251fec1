//! `network-topology-aware`: confine a job to the lowest HyperNode tier that holds
//! it, and pack pods by network locality.
//!
//! - Job constraint: `networkTopology {mode: hard|soft, highestTierAllowed}`. Hard
//!   without a tier is no constraint; soft becomes hard with the cluster-top tier
//!   (Volcano ≥ 1.15), i.e. "lowest tier that fits, else anywhere".
//! - Gradient (used by allocate for constrained jobs): HyperNodes below the search
//!   root with `tier ≤ highestTierAllowed` whose idle (or future idle) resources
//!   cover the job's `minResources` (any, once the job has pods placed), grouped
//!   by tier, lowest first. The root is the cluster top, or the highest allowed
//!   ancestor of the HyperNode holding the job's running pods.
//! - HyperNode score: binpacking of the job's pending requests into the HyperNode
//!   (`hypernode.binpack.*` weights), × 100 × `weight`.
//! - Node score, constrained job: 1 in the job's current HyperNode, else
//!   `(maxTier − tier(LCA)) / (maxTier − minTier)`, × 100 × `weight`.
//! - Node score, other pods (`hypernode.binpack.normal-pod.enable`, default true):
//!   `Σ_t fading^(t−1) · binpack(tier-t HyperNode) / Σ_t fading^(t−1)` × 100 × `weight`.
//!
//! Arguments: `weight` (1), `hypernode.binpack.cpu` (1), `hypernode.binpack.memory`
//! (1), `hypernode.binpack.resources` and `.resources.<name>`,
//! `hypernode.binpack.normal-pod.enable` (true), `hypernode.binpack.normal-pod.fading`
//! (0.8), `hypernode.gradient.evict.max-hypernodes` (8; 0 or less is 8): how many
//! HyperNodes an eviction gradient keeps, widest first.

use super::super::args::{ArgSpec, ArgType, Args};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use super::super::subjobs;
use super::binpack::{ResourceWeights, binpack_fraction, resource_weights};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::resource::Resources;
use lahar_core::model::topology::{HyperNodeId, Topology};
use lahar_core::session::Session;
use rustc_hash::FxHashMap;
use std::cell::{Cell, RefCell};

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec =
    PluginSpec::new("network-topology-aware", |pc| Box::new(NetworkTopologyAware::new(&pc.args))).args(&[
        ArgSpec::new("weight", ArgType::Int, "1", "the node score's weight"),
        ArgSpec::new("hypernode.binpack.cpu", ArgType::Int, "1", "CPU's weight in the HyperNode binpack"),
        ArgSpec::new("hypernode.binpack.memory", ArgType::Int, "1", "memory's weight in the HyperNode binpack"),
        ArgSpec::new(
            "hypernode.binpack.resources",
            ArgType::Str,
            "",
            "extended resources the HyperNode binpack weighs, comma-separated",
        ),
        ArgSpec::new("hypernode.binpack.resources.<name>", ArgType::Int, "1", "that resource's weight"),
        ArgSpec::new(
            "hypernode.binpack.normal-pod.enable",
            ArgType::Bool,
            "true",
            "score HyperNodes for pods without a network topology too",
        ),
        ArgSpec::new("hypernode.binpack.normal-pod.fading", ArgType::Float, "0.8", "how fast that score fades by tier"),
        ArgSpec::new(
            "hypernode.gradient.evict.max-hypernodes",
            ArgType::Int,
            "8",
            "HyperNodes gangpreempt and gangreclaim plan in per tier",
        ),
    ]);

/// The network-topology-aware plugin.
pub struct NetworkTopologyAware {
    weight: f64,
    weights: ResourceWeights,
    normal_pod: bool,
    fading: f64,
    /// `hypernode.gradient.evict.max-hypernodes`.
    max_evict: usize,
    /// Normal pods' per-HyperNode binpack fractions by pod request: per HyperNode
    /// (epoch computed at, fraction), valid while the HyperNode's `used` is
    /// unchanged (epoch `u64::MAX`: none yet).
    fractions: RefCell<Fractions>,
    /// The last normal-pod score: (pod, World epoch, node's lowest HyperNode,
    /// score). Nodes under the same lowest HyperNode share every HyperNode the
    /// score reads, so while the pod and the epoch are the same, so is the score.
    last_score: Cell<Option<(PodId, u64, HyperNodeId, f64)>>,
    /// `fading^(t−1)` for tiers `t` = 1, 2, … below the cluster's top tier,
    /// made once per top tier (the score weighs each node's chain by them).
    tier_weights: RefCell<Vec<f64>>,
}

/// Rows of [`NetworkTopologyAware::fraction`]'s cache.
#[derive(Default)]
struct Fractions {
    /// Row of each pod request.
    rows: FxHashMap<Resources, usize>,
    /// Per row, per HyperNode: (epoch computed at, fraction).
    data: Vec<Vec<(u64, f64)>>,
    /// The last request looked up and its row (a pod is scored on many nodes).
    last: Option<(Resources, usize)>,
}

/// Pod requests whose HyperNode fractions are kept before the cache starts over.
const FRACTION_SHAPES: usize = 64;

impl NetworkTopologyAware {
    /// Reads the arguments.
    pub fn new(args: &Args) -> Self {
        NetworkTopologyAware {
            weight: args.int("weight", 1) as f64,
            weights: resource_weights(args, "hypernode.binpack."),
            normal_pod: args.bool("hypernode.binpack.normal-pod.enable", true),
            fading: args.float("hypernode.binpack.normal-pod.fading", 0.8),
            max_evict: match args.int("hypernode.gradient.evict.max-hypernodes", 8) {
                n if n <= 0 => 8,
                n => n as usize,
            },
            fractions: RefCell::default(),
            last_score: Cell::new(None),
            tier_weights: RefCell::default(),
        }
    }

    /// binpack of `req` into HyperNode `h`, reused while `h`'s `used` is unchanged
    /// (recomputed every time with `--exhaustive`).
    fn fraction(&self, ssn: &Session<'_>, h: HyperNodeId, req: &Resources) -> f64 {
        if ssn.is_exhaustive() {
            return self.compute_fraction(ssn, h, req);
        }
        let mut cache = self.fractions.borrow_mut();
        let row = cache.row(ssn, req);
        self.kept_fraction(ssn, &mut cache.data[row], h, req)
    }

    fn compute_fraction(&self, ssn: &Session<'_>, h: HyperNodeId, req: &Resources) -> f64 {
        binpack_fraction(ssn, &self.weights, &ssn.hypernode_allocatable(h), &ssn.hypernode_used(h), req)
    }

    /// [`NetworkTopologyAware::fraction`] through `row`, the cache's row of `req`.
    #[inline(always)]
    fn kept_fraction(&self, ssn: &Session<'_>, row: &mut [(u64, f64)], h: HyperNodeId, req: &Resources) -> f64 {
        let slot = &mut row[h.0 as usize];
        if slot.0 == u64::MAX || ssn.hypernode_used_epoch(h) > slot.0 {
            *slot = (ssn.epoch(), self.compute_fraction(ssn, h, req));
        }
        slot.1
    }

    /// A normal pod's score on `node`:
    /// `Σ_t fading^(t−1) · binpack(tier-t group) / Σ_t fading^(t−1)` × 100 ×
    /// `weight` over the tiers below the top, each fraction from `fraction`
    /// (1 for a tier without a group in the node's chain).
    fn normal_score(&self, topo: &Topology, node: NodeId, fraction: impl FnMut(HyperNodeId) -> f64) -> f64 {
        let weights = self.tier_weights(topo);
        self.score_with(topo, &weights, node, fraction)
    }

    /// `fading^(t−1)` for the tiers below `topo`'s top, made the first time.
    fn tier_weights(&self, topo: &Topology) -> std::cell::RefMut<'_, Vec<f64>> {
        let mut weights = self.tier_weights.borrow_mut();
        let below_top = topo.top_tier().saturating_sub(1) as usize;
        if weights.len() != below_top {
            *weights = (1..topo.top_tier()).map(|t| self.fading.powi(t as i32 - 1)).collect();
        }
        weights
    }

    /// [`NetworkTopologyAware::normal_score`] with the tier weights at hand
    /// (one borrow for a whole list of nodes).
    #[inline(always)]
    fn score_with(
        &self,
        topo: &Topology,
        weights: &[f64],
        node: NodeId,
        mut fraction: impl FnMut(HyperNodeId) -> f64,
    ) -> f64 {
        let (mut num, mut den) = (0.0, 0.0);
        for (&tw, &group) in weights.iter().zip(topo.groups_below_top(node)) {
            let ts = group.map_or(1.0, &mut fraction);
            num += tw * ts;
            den += tw;
        }
        if den > 0.0 { num / den * 100.0 * self.weight } else { 0.0 }
    }
}

impl Fractions {
    /// The row of `req` (a new, empty one the first time; the cache starts over
    /// past [`FRACTION_SHAPES`] requests).
    fn row(&mut self, ssn: &Session<'_>, req: &Resources) -> usize {
        if let Some((r, row)) = self.last
            && r == *req
        {
            return row;
        }
        let row = match self.rows.get(req) {
            Some(&row) => row,
            None => {
                if self.data.len() >= FRACTION_SHAPES {
                    *self = Fractions::default();
                }
                self.data.push(vec![(u64::MAX, 0.0); ssn.cluster().topology.hypernodes.len()]);
                let row = self.data.len() - 1;
                self.rows.insert(*req, row);
                row
            }
        };
        self.last = Some((*req, row));
        row
    }
}

/// The highest tier a job may span, if it is topology-constrained.
pub fn tier_limit(ssn: &Session<'_>, j: JobId) -> Option<u32> {
    let nt = ssn.job(j).spec.network_topology.as_ref()?;
    let top = ssn.cluster().topology.top_tier();
    if nt.hard { nt.highest_tier_allowed.map(|t| t.min(top)) } else { Some(top) }
}

/// The highest tier sub-job `s` of job `j` may span, if it is constrained: its own
/// `highestTierAllowed` when hard; when soft, the job's hard limit (else the
/// cluster top), as Volcano's session converts soft sub-jobs. For a job without
/// sub-groups, sub-job 0 is the job ([`tier_limit`]).
pub fn sub_tier_limit(ssn: &Session<'_>, j: JobId, s: u32) -> Option<u32> {
    let nt = subjobs::topology(ssn, j, s)?;
    let top = ssn.cluster().topology.top_tier();
    if nt.hard {
        return nt.highest_tier_allowed.map(|t| t.min(top));
    }
    Some(match &ssn.job(j).spec.network_topology {
        Some(jn) if jn.hard => jn.highest_tier_allowed.map_or(top, |t| t.min(top)),
        _ => top,
    })
}

/// True if the job or one of its sub-groups has a network topology (Volcano's
/// `ContainsNetworkTopology`).
pub fn contains_topology(ssn: &Session<'_>, j: JobId) -> bool {
    let spec = &ssn.job(j).spec;
    spec.network_topology.is_some()
        || spec.sub_groups.as_ref().is_some_and(|g| g.policies.iter().any(|p| p.network_topology.is_some()))
}

/// True if the job is placed HyperNode by HyperNode (Volcano's
/// `ContainsHardTopology() || ContainsSubJobPolicy()`, soft modes converted).
pub fn placed_by_hypernode(ssn: &Session<'_>, j: JobId) -> bool {
    subjobs::has_policy(ssn, j) || tier_limit(ssn, j).is_some()
}

fn placed(ssn: &Session<'_>, pods: impl Iterator<Item = PodId>) -> Vec<NodeId> {
    let mut v: Vec<NodeId> = pods
        .filter(|&p| matches!(ssn.pod(p).status, PodStatus::Allocated | PodStatus::Pipelined | PodStatus::Running))
        .filter_map(|p| ssn.pod(p).node)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The sub-job of a pod scored by locality (its sub-job is topology-constrained),
/// `None` for a normal pod.
fn topology_aware_pod(ssn: &Session<'_>, pod: PodId) -> Option<u32> {
    let j = ssn.pod(pod).job;
    // Most pods: no topology anywhere in their job (scored for every node).
    let spec = &ssn.job(j).spec;
    if spec.network_topology.is_none() && spec.sub_groups.is_none() {
        return None;
    }
    let s = subjobs::of_pod(ssn, pod);
    sub_tier_limit(ssn, j, s).map(|_| s)
}

/// Nodes of a job's placed pods (allocated, pipelined or running), ascending.
pub fn placed_nodes(ssn: &Session<'_>, j: JobId) -> Vec<NodeId> {
    placed(ssn, ssn.job(j).pods.iter().copied())
}

/// Nodes of sub-job `s`'s placed pods, ascending.
pub fn sub_placed_nodes(ssn: &Session<'_>, j: JobId, s: u32) -> Vec<NodeId> {
    placed(ssn, subjobs::pods(ssn, j, s))
}

/// Volcano's `getSearchRoot`: `within`, narrowed to the highest HyperNode within
/// `limit` above `lca` (the placed pods' lowest common HyperNode); `None` when the
/// two do not nest or `lca` is above `limit`.
fn search_root(
    topo: &lahar_core::model::topology::Topology,
    within: HyperNodeId,
    lca: Option<HyperNodeId>,
    limit: u32,
) -> Option<HyperNodeId> {
    let Some(h) = lca else { return Some(within) };
    if topo.get(h).tier > limit {
        return None;
    }
    let highest = highest_allowed(topo, h, limit);
    let under = |a: HyperNodeId, b: HyperNodeId| {
        let mut x = Some(a);
        while let Some(y) = x {
            if y == b {
                return true;
            }
            x = topo.get(y).parent;
        }
        false
    };
    if under(within, highest) {
        Some(within)
    } else if under(highest, within) {
        Some(highest)
    } else {
        None
    }
}

/// The highest ancestor of `h` (itself included) within tier `limit`.
fn highest_allowed(topo: &lahar_core::model::topology::Topology, h: HyperNodeId, limit: u32) -> HyperNodeId {
    let mut r = h;
    while let Some(p) = topo.get(r).parent.filter(|&p| topo.get(p).tier <= limit) {
        r = p;
    }
    r
}

/// The HyperNodes under `root` (itself included) up to tier `limit` that pass
/// `eligible`, by tier (lowest first), each tier in id order.
fn gradient_rows(
    topo: &lahar_core::model::topology::Topology,
    root: HyperNodeId,
    limit: u32,
    eligible: impl Fn(HyperNodeId) -> bool,
) -> Vec<Vec<HyperNodeId>> {
    // A HyperNode without HyperNodes under it (a leaf, the common root of a
    // sub-job's search): itself or nothing, without building the tiers.
    if topo.get(root).children.is_empty() {
        return if topo.get(root).tier <= limit && eligible(root) { vec![vec![root]] } else { Vec::new() };
    }
    let mut by_tier: std::collections::BTreeMap<u32, Vec<HyperNodeId>> = Default::default();
    let mut stack = vec![root];
    while let Some(h) = stack.pop() {
        let hn = topo.get(h);
        stack.extend(hn.children.iter().rev().copied());
        if hn.tier <= limit && eligible(h) {
            by_tier.entry(hn.tier).or_default().push(h);
        }
    }
    for v in by_tier.values_mut() {
        v.sort_unstable();
    }
    by_tier.into_values().collect()
}

/// Volcano's `reverseAndCapEvictionGradients`: the rows (lowest tier first)
/// widest first, at most `max` HyperNodes in all, a cut row keeping its last
/// ones; `max` 0 keeps the rows as they are.
pub fn reverse_and_cap<T: Clone>(rows: Vec<Vec<T>>, max: usize) -> Vec<Vec<T>> {
    if max == 0 {
        return rows;
    }
    let mut left = max;
    let mut out = Vec::new();
    for row in rows.into_iter().rev() {
        if left == 0 {
            break;
        }
        let keep = row.len().min(left);
        out.push(row[row.len() - keep..].to_vec());
        left -= keep;
    }
    out
}

impl Plugin for NetworkTopologyAware {
    fn name(&self) -> &'static str {
        "network-topology-aware"
    }
    fn hooks(&self) -> Hooks {
        Hooks::NODE_SCORE
    }
    fn hypernode_gradient(&self, ssn: &Session<'_>, j: JobId) -> Option<Vec<Vec<HyperNodeId>>> {
        let limit = tier_limit(ssn, j)?;
        let topo = &ssn.cluster().topology;
        let placed = placed_nodes(ssn, j);
        let Some(root) = search_root(topo, topo.top(), topo.lowest_common(&placed), limit) else {
            return Some(Vec::new());
        };
        let minr = ssn.job(j).spec.min_resources;
        Some(gradient_rows(topo, root, limit, |h| {
            !placed.is_empty() || minr.fits_in(&ssn.hypernode_idle(h)) || minr.fits_in(&ssn.hypernode_future_idle(h))
        }))
    }
    fn hypernode_gradient_evict(
        &self,
        ssn: &Session<'_>,
        j: JobId,
        within: HyperNodeId,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        let Some(limit) =
            tier_limit(ssn, j).filter(|_| ssn.job(j).spec.network_topology.as_ref().is_some_and(|t| t.hard))
        else {
            return Some(vec![vec![within]]);
        };
        let topo = &ssn.cluster().topology;
        let placed = placed_nodes(ssn, j);
        let Some(root) = search_root(topo, within, topo.lowest_common(&placed), limit) else {
            return Some(Vec::new());
        };
        // Eligible for eviction: the job's minimum fits the HyperNode's allocatable.
        let minr = ssn.job(j).spec.min_resources;
        let rows =
            gradient_rows(topo, root, limit, |h| !placed.is_empty() || minr.fits_in(&ssn.hypernode_allocatable(h)));
        Some(reverse_and_cap(rows, self.max_evict))
    }
    fn sub_job_gradient(
        &self,
        ssn: &Session<'_>,
        j: JobId,
        s: u32,
        within: HyperNodeId,
        evict: bool,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        // Eviction plans follow only a hard topology (as for jobs).
        let hard = !evict || subjobs::topology(ssn, j, s).is_some_and(|t| t.hard);
        let Some(limit) = sub_tier_limit(ssn, j, s).filter(|_| hard) else { return Some(vec![vec![within]]) };
        let topo = &ssn.cluster().topology;
        let placed = sub_placed_nodes(ssn, j, s);
        let Some(root) = search_root(topo, within, topo.lowest_common(&placed), limit) else {
            return Some(Vec::new());
        };
        // Volcano's `GetMinResources` of a sub-job: its pending pods' requests,
        // which must fit a HyperNode's idle or future-idle resources, or for an
        // eviction plan its allocatable.
        let minr = subjobs::min_resources(ssn, j, s);
        let rows = gradient_rows(topo, root, limit, |h| {
            !placed.is_empty()
                || match evict {
                    false => minr.fits_in(&ssn.hypernode_idle(h)) || minr.fits_in(&ssn.hypernode_future_idle(h)),
                    true => minr.fits_in(&ssn.hypernode_allocatable(h)),
                }
        });
        Some(if evict { reverse_and_cap(rows, self.max_evict) } else { rows })
    }
    fn hypernode_scores(&self, ssn: &Session<'_>, j: JobId, s: u32, cands: &[HyperNodeId]) -> Option<Vec<f64>> {
        // Volcano's HyperNodeOrderFn: binpack of every pod of the sub-job (its
        // `Tasks`, placed or not) into each HyperNode; the HyperNodes tied at the
        // top add the share of the sub-job's pods already on their nodes.
        let live = || subjobs::pods(ssn, j, s).filter(|&p| ssn.pod(p).status != PodStatus::Deleted);
        let req = live().fold(Resources::ZERO, |a, p| a + ssn.pod(p).req);
        let mut v: Vec<f64> = cands
            .iter()
            .map(|&h| binpack_fraction(ssn, &self.weights, &ssn.hypernode_allocatable(h), &ssn.hypernode_used(h), &req))
            .collect();
        let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let tied: Vec<usize> = (0..v.len()).filter(|&i| v[i] == max).collect();
        if tied.len() > 1 {
            let pods: Vec<PodId> = live().collect();
            let topo = &ssn.cluster().topology;
            for i in tied.into_iter().filter(|_| !pods.is_empty()) {
                let nodes = &topo.get(cands[i]).nodes;
                let on =
                    pods.iter().filter(|&&p| ssn.pod(p).node.is_some_and(|n| nodes.binary_search(&n).is_ok())).count();
                v[i] += on as f64 / pods.len() as f64;
            }
        }
        Some(v.into_iter().map(|x| x * 100.0 * self.weight).collect())
    }
    fn score_by_node(&self, _: &Session<'_>, _: PodId) -> bool {
        // A constrained job's score follows its own placement; a normal pod's reads
        // HyperNode sums (whose fractions `fraction` keeps).
        false
    }
    fn add_node_scores(&self, ssn: &Session<'_>, pod: PodId, nodes: &[NodeId], sums: &mut [f64]) {
        // A normal pod's score is shared by the nodes of one lowest HyperNode:
        // computed at the first node of each run of them (as `last_score` would
        // return it for the others).
        if ssn.is_exhaustive() || !self.normal_pod || topology_aware_pod(ssn, pod).is_some() {
            for (sum, &n) in sums.iter_mut().zip(nodes) {
                if let Some(s) = self.node_score(ssn, pod, n) {
                    *sum += s;
                }
            }
            return;
        }
        // One borrow of the fraction cache and one lookup of the pod's row for
        // the whole list.
        let topo = &ssn.cluster().topology;
        let req = ssn.pod(pod).req;
        let mut cache = self.fractions.borrow_mut();
        let row = cache.row(ssn, &req);
        let row = &mut cache.data[row];
        let weights = self.tier_weights(topo);
        let mut run: Option<(HyperNodeId, f64)> = None;
        for (sum, &n) in sums.iter_mut().zip(nodes) {
            let group = topo.leaf(n);
            let s = match run {
                Some((g, s)) if g == group => s,
                _ => {
                    let s = self.score_with(topo, &weights, n, |h| self.kept_fraction(ssn, row, h, &req));
                    run = Some((group, s));
                    s
                }
            };
            *sum += s;
        }
        if let Some((group, s)) = run {
            self.last_score.set(Some((pod, ssn.epoch(), group, s)));
        }
    }
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        let topo = &ssn.cluster().topology;
        // Only normal pods' scores are remembered, so a hit is one.
        let group = topo.leaf(node);
        let epoch = ssn.epoch();
        if !ssn.is_exhaustive()
            && let Some((p, e, g, score)) = self.last_score.get()
            && (p, e, g) == (pod, epoch, group)
        {
            return Some(score);
        }
        if let Some(s) = topology_aware_pod(ssn, pod) {
            let mut placed = sub_placed_nodes(ssn, ssn.pod(pod).job, s);
            if placed.is_empty() {
                return Some(0.0);
            }
            let a = topo.lowest_common(&placed)?;
            let h = topo.leaf(node);
            let (max, min) = (topo.top_tier() as f64, 1.0);
            let s = if h == a {
                1.0
            } else {
                placed.push(node);
                let lca = topo.lowest_common(&placed)?;
                if max > min { (max - topo.get(lca).tier as f64) / (max - min) } else { 1.0 }
            };
            return Some(s * 100.0 * self.weight);
        }
        if !self.normal_pod {
            return None;
        }
        let req = ssn.pod(pod).req;
        let score = self.normal_score(topo, node, |h| self.fraction(ssn, h, &req));
        self.last_score.set(Some((pod, epoch, group, score)));
        Some(score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Volcano's TestReverseAndCapEvictionGradients.
    #[test]
    fn test_reverse_and_cap_eviction_gradients() {
        let rows = vec![vec!["a", "b"], vec!["c", "d"]];
        assert_eq!(reverse_and_cap(rows.clone(), 3), [vec!["c", "d"], vec!["b"]]);
        assert_eq!(reverse_and_cap(rows.clone(), 0), rows);
    }
}
