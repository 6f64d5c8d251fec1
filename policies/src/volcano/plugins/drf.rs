//! `drf`: dominant resource fairness between jobs. A job's share is the largest,
//! over the cluster's resource dimensions (including `pods`), of its allocation
//! over the cluster total. Jobs with smaller shares go first; a running pod is a
//! preemption victim when the preemptor's job, with the preemptor added, would
//! still have a smaller (or equal) share than the victim's job without it.
//!
//! With `enableHierarchy: true` (hierarchical DRF, Volcano's hdrf) the plugin also
//! orders queues and picks reclaim victims by shares computed over the queue tree;
//! see [`HierTree`].

use super::super::plugin::{Hooks, Plugin, PluginSpec};
use super::FRes;
use super::queue_tree::{QueueTree, ROOT};
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::{DIMS, Resources};
use lahar_core::session::Session;
use lahar_core::world::{ReachFacts, VictimKey};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("drf", |pc| Box::new(Drf::new(pc.flag("enableHierarchy"))));

/// A job for the hdrf tree: id, queue path below the root, allocated, total request.
type JobEntry<'a> = (JobId, &'a [(String, f64)], FRes, FRes);

/// The hdrf tree together with the allocations it was built from.
type TreeCache = Option<(Vec<(JobId, Resources)>, HierTree)>;

/// Volcano's `shareDelta`.
const SHARE_DELTA: f64 = 1e-6;

/// The drf plugin (no arguments; `enableHierarchy` selects hdrf).
#[derive(Default)]
pub struct Drf {
    hierarchical: bool,
    /// Per queue: its path below the root as (name, weight), from
    /// `volcano.sh/hierarchy` + `volcano.sh/hierarchy-weights` when both are set,
    /// else from the `parent` tree. `None` for the whole session when the tree is
    /// unusable (Volcano then registers none of drf's functions).
    paths: Option<Vec<Vec<(String, f64)>>>,
    /// The tree of the current allocations, keyed by them (rebuilt when any job's
    /// allocation changed).
    cache: RefCell<TreeCache>,
}

/// Dominant share of an allocation.
pub fn dominant_share(alloc: &Resources, total: &Resources) -> f64 {
    (0..DIMS).filter(|&d| total.get(d) > 0).map(|d| alloc.get(d) as f64 / total.get(d) as f64).fold(0.0, f64::max)
}

fn dominant_share_f(alloc: &FRes, total: &Resources) -> f64 {
    (0..DIMS).filter(|&d| total.get(d) > 0).map(|d| alloc[d] / total.get(d) as f64).fold(0.0, f64::max)
}

/// One node of the hdrf tree: an internal node per path element, a leaf per job.
#[derive(Clone, Debug, Default)]
struct HNode {
    weight: f64,
    /// Internal children by path element.
    children: BTreeMap<String, usize>,
    /// Job leaves under this node.
    jobs: BTreeMap<JobId, usize>,
    /// Leaf: the job's total request.
    request: FRes,
    allocated: FRes,
    share: f64,
    saturated: bool,
}

/// Volcano's hierarchical-DRF tree for one set of job allocations. Bottom-up: a job
/// leaf is *saturated* when, on some resource it holds, its allocation reaches its
/// total request, or it requests a resource the cluster has fully allocated. An
/// internal node scales each non-saturated child with a share to the smallest such
/// child share `m` (`allocated · m / share`), adds saturated children as they are,
/// takes the dominant share of the sum, and is saturated when all children are.
#[derive(Clone, Debug)]
pub struct HierTree {
    nodes: Vec<HNode>,
}

impl HierTree {
    /// Builds the tree: `jobs` are (job, queue path below the root, allocated,
    /// total request).
    fn build(jobs: &[JobEntry<'_>], total: &Resources) -> HierTree {
        let mut nodes = vec![HNode { weight: 1.0, ..HNode::default() }];
        let mut total_alloc = [0.0; DIMS];
        for (j, path, alloc, req) in jobs {
            let mut cur = 0;
            for (name, w) in path.iter() {
                cur = match nodes[cur].children.get(name) {
                    Some(&c) => c,
                    None => {
                        nodes.push(HNode { weight: *w, ..HNode::default() });
                        let c = nodes.len() - 1;
                        nodes[cur].children.insert(name.clone(), c);
                        c
                    }
                };
            }
            nodes.push(HNode { weight: 1.0, request: *req, allocated: *alloc, ..HNode::default() });
            let leaf = nodes.len() - 1;
            nodes[cur].jobs.insert(*j, leaf);
            for d in 0..DIMS {
                total_alloc[d] += alloc[d];
            }
        }
        let demanding: [bool; DIMS] = std::array::from_fn(|d| total.get(d) > 0 && total_alloc[d] < total.get(d) as f64);
        let mut t = HierTree { nodes };
        t.update(0, &demanding, total);
        t
    }

    fn update(&mut self, n: usize, demanding: &[bool; DIMS], total: &Resources) {
        let kids: Vec<usize> = self.nodes[n].children.values().chain(self.nodes[n].jobs.values()).copied().collect();
        if kids.is_empty() && n != 0 && self.nodes[n].children.is_empty() {
            // A job leaf.
            let node = &mut self.nodes[n];
            node.share = dominant_share_f(&node.allocated, total);
            // Holding a resource it requests, and either holding all of it or the
            // cluster having none left.
            node.saturated = (0..DIMS)
                .filter(|&d| node.allocated[d] > 0.0 && node.request[d] != 0.0)
                .any(|d| node.allocated[d] >= node.request[d] || !demanding[d]);
            return;
        }
        let mut mdr: f64 = 1.0;
        for &c in &kids {
            self.update(c, demanding, total);
            let k = &self.nodes[c];
            if k.share != 0.0 && !k.saturated {
                mdr = mdr.min(k.share);
            }
        }
        let mut alloc = [0.0; DIMS];
        let mut saturated = true;
        for &c in &kids {
            let k = &self.nodes[c];
            saturated &= k.saturated;
            if k.share != 0.0 {
                let scale = if k.saturated { 1.0 } else { mdr / k.share };
                for d in 0..DIMS {
                    alloc[d] += k.allocated[d] * scale;
                }
            }
        }
        let node = &mut self.nodes[n];
        node.allocated = alloc;
        node.share = dominant_share_f(&alloc, total);
        node.saturated = saturated;
    }

    /// Volcano's `compareQueues`: walk both queues' paths from the root; at the
    /// first level where they differ, unsaturated before saturated, then smaller
    /// `share / weight` first. Negative puts `l` first.
    fn compare(&self, l: &[(String, f64)], r: &[(String, f64)]) -> f64 {
        let (mut ln, mut rn) = (0usize, 0usize);
        // Paths here exclude the root element, so depth counts it back in.
        let depth = l.len().min(r.len()) + 1;
        for i in 0..depth {
            let (a, b) = (&self.nodes[ln], &self.nodes[rn]);
            if !a.saturated && b.saturated {
                return -1.0;
            }
            if a.saturated && !b.saturated {
                return 1.0;
            }
            let (sa, sb) = (a.share / a.weight, b.share / b.weight);
            if sa != sb {
                return sa - sb;
            }
            if i + 1 < depth {
                // A queue without jobs has no node (Volcano would dereference nil).
                match (a.children.get(&l[i].0), b.children.get(&r[i].0)) {
                    (Some(&x), Some(&y)) => (ln, rn) = (x, y),
                    _ => return 0.0,
                }
            }
        }
        0.0
    }
}

/// The hdrf path of every queue (root excluded), as Volcano's
/// `BuildEffectiveQueueHierarchy`: the annotations when both are set, else the
/// parent's path plus (name, weight ≥ 1); `root` has the empty path.
fn queue_paths(ssn: &Session<'_>) -> Option<Vec<Vec<(String, f64)>>> {
    let queues = ssn.queues();
    let tree = QueueTree::build(queues);
    if tree.error.is_some() {
        return None;
    }
    let mut out = Vec::with_capacity(queues.len());
    for (i, q) in queues.iter().enumerate() {
        if let (Some(h), Some(w)) = (&q.spec.hierarchy, &q.spec.hierarchy_weights) {
            let ws: Vec<&str> = w.split('/').collect();
            // Element 0 is the root.
            let path = h
                .split('/')
                .enumerate()
                .skip(1)
                .map(|(k, name)| {
                    let w = ws.get(k).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
                    (name.to_string(), if w < 1.0 { 1.0 } else { w })
                })
                .collect();
            out.push(path);
            continue;
        }
        let path = tree.ancestors[i]
            .iter()
            .copied()
            .chain(std::iter::once(i))
            .filter(|&n| n != tree.root && n < queues.len())
            .map(|n| (queues[n].spec.name.clone(), queues[n].spec.weight.max(1) as f64))
            .collect();
        out.push(if q.spec.name == ROOT { Vec::new() } else { path });
    }
    Some(out)
}

impl Drf {
    /// A drf plugin, hierarchical when `hierarchical`.
    pub fn new(hierarchical: bool) -> Drf {
        Drf { hierarchical, ..Drf::default() }
    }

    /// Jobs with their queue path, allocation and total request, with `delta`
    /// added to one job's allocation.
    fn jobs<'a>(
        &'a self,
        ssn: &Session<'_>,
        paths: &'a [Vec<(String, f64)>],
        delta: Option<(JobId, &Resources, f64)>,
    ) -> Vec<JobEntry<'a>> {
        ssn.jobs()
            .map(|j| {
                let job = ssn.job(j);
                let mut alloc = super::f(&job.allocation());
                if let Some((_, r, sign)) = delta.filter(|x| x.0 == j) {
                    for (d, a) in alloc.iter_mut().enumerate() {
                        *a += sign * r.get(d) as f64;
                    }
                }
                let req = job
                    .pods
                    .iter()
                    .filter(|&&p| ssn.pod(p).status != PodStatus::Deleted)
                    .fold(Resources::ZERO, |a, &p| a + ssn.pod(p).req);
                (j, paths[job.spec.queue.0 as usize].as_slice(), alloc, super::f(&req))
            })
            .collect()
    }

    fn compare_now(&self, ssn: &Session<'_>, l: QueueId, r: QueueId) -> Option<f64> {
        let paths = self.paths.as_ref()?;
        let key: Vec<(JobId, Resources)> = ssn.jobs().map(|j| (j, ssn.job(j).allocation())).collect();
        let mut cache = self.cache.borrow_mut();
        if cache.as_ref().is_none_or(|(k, _)| *k != key) {
            let tree = HierTree::build(&self.jobs(ssn, paths, None), &ssn.total());
            *cache = Some((key, tree));
        }
        let tree = &cache.as_ref().expect("built").1;
        Some(tree.compare(&paths[l.0 as usize], &paths[r.0 as usize]))
    }
}

impl Plugin for Drf {
    fn name(&self) -> &'static str {
        "drf"
    }
    fn hooks(&self) -> Hooks {
        Hooks::JOB_ORDER.and(Hooks::PREEMPTABLE).and(if self.hierarchical {
            Hooks::RECLAIMABLE
        } else {
            Hooks::NEVER_ABSTAINS
        })
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        self.cache = RefCell::new(None);
        self.paths = if self.hierarchical { queue_paths(ssn) } else { None };
    }
    fn job_order_key(&self, ssn: &Session<'_>, j: JobId) -> Option<f64> {
        if self.hierarchical && self.paths.is_none() {
            return None;
        }
        // Smaller dominant share first.
        Some(dominant_share(&ssn.job(j).allocation(), &ssn.total()))
    }
    fn job_order_key_of_facts(&self, ssn: &Session<'_>, f: &ReachFacts) -> Option<f64> {
        if self.hierarchical && self.paths.is_none() {
            return None;
        }
        // No Allocated or Running pod (they are within `base`): nothing
        // allocated; or all it holds is its Running pods of the request `shape`.
        if f.base == 0 {
            return Some(dominant_share(&Resources::ZERO, &ssn.total()));
        }
        f.shaped_alloc.then(|| dominant_share(&ssn.shape(f.shape).times(f.running as i64), &ssn.total()))
    }
    fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Option<Ordering> {
        if self.hierarchical && self.paths.is_none() {
            return None;
        }
        let t = ssn.total();
        let (a, b) = (dominant_share(&ssn.job(l).allocation(), &t), dominant_share(&ssn.job(r).allocation(), &t));
        Some(a.partial_cmp(&b).unwrap_or(Ordering::Equal))
    }
    fn queue_order(&self, ssn: &Session<'_>, l: QueueId, r: QueueId) -> Option<Ordering> {
        let c = self.compare_now(ssn, l, r)?;
        Some(c.partial_cmp(&0.0).unwrap_or(Ordering::Equal))
    }
    fn preemptable(&self, ssn: &Session<'_>, preemptor: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        if self.hierarchical && self.paths.is_none() {
            return None;
        }
        let t = ssn.total();
        let p = ssn.pod(preemptor);
        let ls = dominant_share(&(ssn.job(p.job).allocation() + p.req), &t);
        // Per job, what its earlier candidates took away.
        let mut removed: Vec<(JobId, Resources)> = Vec::new();
        let mut out = Vec::new();
        for &c in cands {
            let v = ssn.pod(c);
            let r = super::per_job(&mut removed, v.job, || Resources::ZERO);
            *r += v.req;
            let rs = dominant_share(&(ssn.job(v.job).allocation() - *r), &t);
            if ls < rs || (ls - rs).abs() <= SHARE_DELTA {
                out.push(c);
            }
        }
        Some(out)
    }
    fn victim_group_ok_now(&self, ssn: &Session<'_>, preemptor: PodId, reclaim: bool, key: VictimKey) -> Option<bool> {
        // A lone pod's job holds nothing once it is taken away: `preemptable`'s
        // test then compares the preemptor's share with a share of zero.
        if reclaim || self.hierarchical || !(key.lone || ssn.planted.wrong_victim_verdict) {
            return None;
        }
        let p = ssn.pod(preemptor);
        let ls = dominant_share(&(ssn.job(p.job).allocation() + p.req), &ssn.total());
        let rs = dominant_share(&Resources::ZERO, &ssn.total());
        Some(ls < rs || (ls - rs).abs() <= SHARE_DELTA)
    }
    fn reclaimable(&self, ssn: &Session<'_>, reclaimer: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        // hdrf only: a reclaimee is a victim when, with the reclaimer's request moved
        // in and the reclaimee's out (each reclaimee on its own), the reclaimer's
        // queue still comes first.
        let paths = self.paths.as_ref()?;
        let total = ssn.total();
        let rp = ssn.pod(reclaimer);
        let lq = ssn.job(rp.job).spec.queue.0 as usize;
        let mut base = self.jobs(ssn, paths, Some((rp.job, &rp.req, 1.0)));
        let mut out = Vec::new();
        for &c in cands {
            let v = ssn.pod(c);
            let rq = ssn.job(v.job).spec.queue.0 as usize;
            let Some(k) = base.iter().position(|x| x.0 == v.job) else { continue };
            let saved = base[k].2;
            let vr = super::f(&v.req);
            for d in 0..DIMS {
                base[k].2[d] -= vr[d];
            }
            let tree = HierTree::build(&base, &total);
            base[k].2 = saved;
            if tree.compare(&paths[lq], &paths[rq]) < 0.0 {
                out.push(c);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lahar_core::model::resource::{CPU, MEMORY};

    fn res(cpu: f64, mem: f64) -> FRes {
        let mut r = [0.0; DIMS];
        r[CPU] = cpu;
        r[MEMORY] = mem;
        r
    }

    fn total(cpu: i64, mem: i64) -> Resources {
        let mut r = Resources::ZERO;
        r.set(CPU, cpu);
        r.set(MEMORY, mem);
        r
    }

    fn p(v: &[(&str, f64)]) -> Vec<(String, f64)> {
        v.iter().map(|(n, w)| (n.to_string(), *w)).collect()
    }

    /// Volcano's hdrf design example shape: two queues under root, one job each.
    /// Job A holds (1 cpu, 4 mem) of (10, 10) and wants more; job B holds (3, 1) and
    /// wants more. Shares 0.4 and 0.3; with weights 1 and 1 B's queue goes first;
    /// with weight 2 on A's queue, A's 0.4/2 = 0.2 < 0.3 goes first.
    #[test]
    fn queue_order_by_weighted_share() {
        let (qa, qb) = (p(&[("a", 1.0)]), p(&[("b", 1.0)]));
        let jobs = vec![
            (JobId(0), qa.as_slice(), res(1.0, 4.0), res(5.0, 5.0)),
            (JobId(1), qb.as_slice(), res(3.0, 1.0), res(5.0, 5.0)),
        ];
        let t = HierTree::build(&jobs, &total(10, 10));
        assert!((t.compare(&qa, &qb) - 0.1).abs() < 1e-12);
        let qa2 = p(&[("a", 2.0)]);
        let jobs = vec![
            (JobId(0), qa2.as_slice(), res(1.0, 4.0), res(5.0, 5.0)),
            (JobId(1), qb.as_slice(), res(3.0, 1.0), res(5.0, 5.0)),
        ];
        let t = HierTree::build(&jobs, &total(10, 10));
        assert!((t.compare(&qa2, &qb) - (0.2 - 0.3)).abs() < 1e-12);
    }

    /// A job whose allocation reached its request is saturated, and so is its queue:
    /// it goes after an unsaturated queue whatever the shares.
    #[test]
    fn saturated_queues_go_last() {
        let (qa, qb) = (p(&[("a", 1.0)]), p(&[("b", 1.0)]));
        let jobs = vec![
            (JobId(0), qa.as_slice(), res(1.0, 1.0), res(1.0, 1.0)),
            (JobId(1), qb.as_slice(), res(6.0, 6.0), res(8.0, 8.0)),
        ];
        let t = HierTree::build(&jobs, &total(10, 10));
        assert_eq!(t.compare(&qa, &qb), 1.0);
        assert_eq!(t.compare(&qb, &qa), -1.0);
    }

    /// Internal nodes scale unsaturated children to the smallest child share: with
    /// 20 cpus, eng{dev (2 cpus, 0.1), prod (6, 0.3)} counts as 2 + 6 × 0.1/0.3 = 4
    /// cpus (0.2), below ops (5, 0.25) although prod alone is above it.
    #[test]
    fn internal_node_scales_children_to_the_minimum_share() {
        let (dev, prod, ops) =
            (p(&[("eng", 1.0), ("dev", 1.0)]), p(&[("eng", 1.0), ("prod", 1.0)]), p(&[("ops", 1.0)]));
        let jobs = vec![
            (JobId(0), dev.as_slice(), res(2.0, 0.0), res(9.0, 0.0)),
            (JobId(1), prod.as_slice(), res(6.0, 0.0), res(9.0, 0.0)),
            (JobId(2), ops.as_slice(), res(5.0, 0.0), res(9.0, 0.0)),
        ];
        let t = HierTree::build(&jobs, &total(20, 10));
        let eng = t.nodes[0].children["eng"];
        assert!((t.nodes[eng].share - 0.2).abs() < 1e-12);
        assert!((t.compare(&dev, &ops) - (0.2 - 0.25)).abs() < 1e-12);
        assert!((t.compare(&prod, &ops) - (0.2 - 0.25)).abs() < 1e-12);
        // Inside eng, dev (0.2) comes before prod (0.6).
        assert!((t.compare(&dev, &prod) - (0.1 - 0.3)).abs() < 1e-12);
    }
}
