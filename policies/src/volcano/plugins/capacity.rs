//! `capacity`: per-dimension `deserved` declared on each queue (elastic borrowing
//! up to `capability`). A queue's share is `max(allocated / deserved)` over its
//! deserved dimensions (1 for a queue without `deserved`); a queue may take a pod
//! while `allocated + request ≤ realCapability`, and may reclaim while it stays
//! within capability and below `deserved` on some requested dimension. Queues have
//! no overused check: they may borrow.
//!
//! With `enableHierarchy: true` queues form a tree through `parent` (see
//! [`super::queue_tree`]): limits are inherited and checked along the path to the root.
//! The argument `ancestorReclaimLevel` (0) then also checks ancestors when
//! reclaiming across subtrees (Volcano's `capacity.go`): a victim of another
//! subtree must also be over the deserved share of each of its ancestors up to that
//! many levels above its queue, where the reclaimer's ancestor at the same level is
//! not the same queue; a queue below its deserved share nowhere may still reclaim
//! when one of its ancestors up to that level is; and a victim that would be taken
//! only because it asks for nothing its queue's deserved names is spared when the
//! two queues share a non-root ancestor within the levels and the reclaimer's own
//! queue deserves nothing it asks for either.

use super::super::args::{ArgSpec, ArgType, ArgValue, problem};
use super::super::plugin::{EvictKind, Hooks, Plugin, PluginSpec, Vote};
use super::proportion::real_capability;
use super::queue_tree::QueueTree;
use super::{Admission, FRes, copies_within, f, le, le_on, over_limit, share};
use lahar_core::model::job::{JobId, PodId};
use lahar_core::model::queue::{QueueId, QueueState};
use lahar_core::model::resource::{DIMS, PODS, Resources};
use lahar_core::session::Session;
use std::cmp::Ordering;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("capacity", |pc| {
    Box::new(
        Capacity::new(pc.flag("enableHierarchy"))
            .with_ancestor_level(pc.args.int("ancestorReclaimLevel", 0).max(0) as usize),
    )
})
.args(&[
    ArgSpec::new("ancestorReclaimLevel", ArgType::Int, "0", "ancestor levels reclaim checks (0: leaf queues only)")
        .checked(check_level),
    ArgSpec::new(
        "capacity.DynamicResourceAllocationEnable",
        ArgType::Bool,
        "false",
        "quota on ResourceClaims (lahar's jobs have none)",
    ),
    ArgSpec::new(
        "capacity.DRAConsumableCapacityEnable",
        ArgType::Bool,
        "false",
        "quota on consumable ResourceClaim capacity (lahar's jobs have none)",
    ),
]);

/// A negative level, which Volcano replaces with 0.
fn check_level(_: &str, v: &ArgValue) -> Vec<(String, String)> {
    match v {
        ArgValue::Int(n) if *n < 0 => {
            problem(format!("expected a level of 0 or more, got {n} (Volcano falls back to 0)"))
        }
        _ => Vec::new(),
    }
}

#[derive(Clone, Debug, Default)]
struct Attr {
    deserved: FRes,
    has_deserved: bool,
    guarantee: FRes,
    real_capability: FRes,
}

/// The capacity plugin (no arguments; the `enableHierarchy` flag selects the
/// hierarchical mode).
#[derive(Default)]
pub struct Capacity {
    attrs: Vec<Attr>,
    admission: Vec<Admission>,
    hier: Option<Hier>,
    hierarchical: bool,
    /// `ancestorReclaimLevel` (hierarchical mode only).
    ancestor_level: usize,
}

/// Hierarchical-mode state: the queue tree and, per tree node, its attributes
/// (`Capacity::attrs` then has one entry per node, the implicit root last).
#[derive(Default)]
struct Hier {
    tree: Option<QueueTree>,
    /// Why scheduling is refused this session (Volcano's `readyToSchedule` false).
    broken: Option<String>,
    /// Shares of non-leaf nodes at session open: Volcano refreshes only the leaf's
    /// share on allocate/evict events, so ancestors keep their opening share.
    open_share: Vec<f64>,
}

impl Capacity {
    /// A capacity plugin, hierarchical when `hierarchical`.
    pub fn new(hierarchical: bool) -> Capacity {
        Capacity { hierarchical, ..Capacity::default() }
    }

    /// With Volcano's `ancestorReclaimLevel` (checked by the conf loader: ≥ 0).
    pub fn with_ancestor_level(mut self, level: usize) -> Capacity {
        self.ancestor_level = level;
        self
    }

    /// The ancestor `depth` levels above tree node `n` (1: its parent), if any.
    fn ancestor_at(&self, n: usize, depth: usize) -> Option<usize> {
        let anc = &self.tree()?.ancestors[n];
        (depth >= 1 && depth <= anc.len()).then(|| anc[anc.len() - depth])
    }

    /// Volcano's `sharesAnyNonRootAncestorWithinLevel`.
    fn share_ancestor_within_level(&self, a: usize, b: usize) -> bool {
        let Some(t) = self.tree() else { return false };
        let within = |n: usize| (1..=self.ancestor_level).filter_map(move |d| self.ancestor_at(n, d));
        within(a).any(|x| x != t.root && within(b).any(|y| y == x))
    }

    /// Volcano's `getReclaimeeAncestorToCheck`: the reclaimee queue's ancestor at
    /// `level` when it is not the root and not the reclaimer's ancestor there.
    fn ancestor_to_check(&self, reclaimer: usize, reclaimee: usize, level: usize) -> Option<usize> {
        let t = self.tree()?;
        let a = self.ancestor_at(reclaimee, level).filter(|&a| a != t.root)?;
        (self.ancestor_at(reclaimer, level) != Some(a)).then_some(a)
    }

    fn share(&self, ssn: &Session<'_>, q: QueueId) -> f64 {
        let a = &self.attrs[q.0 as usize];
        if !a.has_deserved { 1.0 } else { share(&f(&ssn.queue(q).allocation()), &a.deserved) }
    }

    fn tree(&self) -> Option<&QueueTree> {
        self.hier.as_ref().and_then(|h| h.tree.as_ref())
    }

    /// Allocation of a tree node: its own queue's plus its descendants'.
    fn node_allocated(&self, ssn: &Session<'_>, n: usize) -> FRes {
        let t = self.tree().expect("hierarchical");
        let nq = ssn.queues().len();
        let mut out = [0.0; DIMS];
        for q in t.subtree_queues(n, nq) {
            let a = f(&ssn.queue(QueueId(q as u32)).allocation());
            for d in 0..DIMS {
                out[d] += a[d];
            }
        }
        out
    }

    fn node_share(&self, ssn: &Session<'_>, n: usize) -> f64 {
        let t = self.tree().expect("hierarchical");
        let a = &self.attrs[n];
        if !a.has_deserved {
            return 1.0;
        }
        if t.is_leaf(n) {
            share(&self.node_allocated(ssn, n), &a.deserved)
        } else {
            self.hier.as_ref().unwrap().open_share[n]
        }
    }

    /// Volcano's `compareShareWithDeserved` on two tree nodes.
    fn compare_nodes(&self, ssn: &Session<'_>, l: usize, r: usize) -> Ordering {
        let o = self.node_share(ssn, l).partial_cmp(&self.node_share(ssn, r)).unwrap_or(Ordering::Equal);
        o.then_with(|| self.attrs[r].has_deserved.cmp(&self.attrs[l].has_deserved))
    }

    fn open_hier(&mut self, ssn: &Session<'_>) {
        let tree = QueueTree::build(ssn.queues());
        let mut broken = tree.error.clone();
        if broken.is_none() {
            for j in ssn.jobs() {
                let q = ssn.job(j).spec.queue.0 as usize;
                if !tree.is_leaf(q) {
                    broken = Some(format!(
                        "queue `{}` of job `{}` is not a leaf queue",
                        ssn.queue(QueueId(q as u32)).spec.name,
                        ssn.job(j).spec.name
                    ));
                    break;
                }
            }
        }
        let attrs = hier_attrs(ssn.queues(), &tree);
        let n = tree.len();
        self.attrs = attrs;
        self.admission = Admission::per_queue(ssn);
        self.hier = Some(Hier { tree: Some(tree), broken, open_share: Vec::new() });
        let shares: Vec<f64> = (0..n)
            .map(|i| {
                if self.attrs[i].has_deserved {
                    share(&self.node_allocated(ssn, i), &self.attrs[i].deserved)
                } else {
                    1.0
                }
            })
            .collect();
        self.hier.as_mut().unwrap().open_share = shares;
    }

    fn broken(&self) -> bool {
        self.hier.as_ref().is_some_and(|h| h.broken.is_some())
    }

    /// Σ of the admission bookkeeping over a node's subtree.
    fn node_admission(&self, ssn: &Session<'_>, n: usize) -> Admission {
        let t = self.tree().expect("hierarchical");
        let mut out = Admission::default();
        for q in t.subtree_queues(n, ssn.queues().len()) {
            for d in 0..DIMS {
                out.inqueue[d] += self.admission[q].inqueue[d];
                out.elastic[d] += self.admission[q].elastic[d];
            }
        }
        out
    }
}

/// Attributes of every node of the queue tree (Volcano's `checkHierarchicalQueue`):
/// the root's capability is ∞ where unset; a child inherits unset capability
/// dimensions (cpu/memory ≤ 0 count as unset) from its parent; deserved is raised to
/// guarantee; the root's deserved and guarantee are the sums over its children; and
/// `realCapability = min(ExceededPart(parent.realCapability, Σ sibling guarantees) +
/// guarantee, capability)`.
fn hier_attrs(queues: &[lahar_core::world::QueueState], tree: &QueueTree) -> Vec<Attr> {
    let n = tree.len();
    let mut attrs = vec![Attr::default(); n];
    // Own values; unset capability dimensions are filled from the parent below.
    let mut cap_set = vec![[false; DIMS]; n];
    for (i, q) in queues.iter().enumerate() {
        let a = &mut attrs[i];
        for d in 0..DIMS {
            a.guarantee[d] = q.spec.guarantee.get_or(d, 0) as f64;
            let des = if q.spec.deserved.has(d) { q.spec.deserved.values.get(d) as f64 } else { 0.0 };
            a.deserved[d] = des;
            let c = q.spec.capability.get_or(d, 0);
            // cpu/memory ≤ 0 count as unset, as in Volcano.
            cap_set[i][d] = q.spec.capability.has(d) && !(d <= 1 && c <= 0);
            a.real_capability[d] = c as f64;
        }
    }
    // Top-down: root capability (∞ where unset), children inherit unset dimensions,
    // deserved raised to guarantee, root deserved/guarantee = Σ children,
    // realCapability = min(ExceededPart(parent.realCapability, Σ child guarantees)
    // + guarantee, capability). `real_capability` holds the capability until set.
    let mut cap = vec![[f64::INFINITY; DIMS]; n];
    for d in 0..DIMS {
        if cap_set.get(tree.root).is_some_and(|c| c[d]) {
            cap[tree.root][d] = attrs[tree.root].real_capability[d];
        }
    }
    attrs[tree.root].real_capability = cap[tree.root];
    let mut order = vec![tree.root];
    let mut k = 0;
    while k < order.len() {
        let p = order[k];
        k += 1;
        let kids = tree.children[p].clone();
        let mut sum_g = [0.0; DIMS];
        let mut sum_d = [0.0; DIMS];
        for &c in &kids {
            for d in 0..DIMS {
                attrs[c].deserved[d] = attrs[c].deserved[d].max(attrs[c].guarantee[d]);
                sum_d[d] += attrs[c].deserved[d];
                sum_g[d] += attrs[c].guarantee[d];
                cap[c][d] = if cap_set[c][d] { attrs[c].real_capability[d] } else { cap[p][d] };
            }
        }
        if p == tree.root {
            attrs[p].deserved = sum_d;
            attrs[p].guarantee = sum_g;
        }
        let prc = attrs[p].real_capability;
        for &c in &kids {
            for d in 0..DIMS {
                let base = (prc[d] - sum_g[d]).max(0.0);
                attrs[c].real_capability[d] = (base + attrs[c].guarantee[d]).min(cap[c][d]);
            }
            order.push(c);
        }
    }
    for a in &mut attrs {
        a.has_deserved = a.deserved.iter().any(|&v| v >= 0.1);
    }
    attrs
}

impl Plugin for Capacity {
    fn name(&self) -> &'static str {
        "capacity"
    }
    fn hooks(&self) -> Hooks {
        Hooks::RECLAIMABLE
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        if self.hierarchical {
            self.open_hier(ssn);
            return;
        }
        let total = ssn.total();
        let sum_g = ssn.queues().iter().fold(Resources::ZERO, |a, q| {
            let mut g = Resources::ZERO;
            for d in 0..DIMS {
                g.set(d, q.spec.guarantee.get_or(d, 0));
            }
            a + g
        });
        self.attrs = ssn
            .queues()
            .iter()
            .map(|q| {
                let rc = real_capability(&total, &sum_g, &q.spec);
                let mut a = Attr { real_capability: rc, has_deserved: !q.spec.deserved.is_empty(), ..Attr::default() };
                for d in 0..DIMS {
                    a.guarantee[d] = q.spec.guarantee.get_or(d, 0) as f64;
                    let des = if q.spec.deserved.has(d) { q.spec.deserved.values.get(d) as f64 } else { 0.0 };
                    a.deserved[d] = des.min(rc[d]).max(a.guarantee[d]);
                }
                a
            })
            .collect();
        self.admission = Admission::per_queue(ssn);
    }
    fn queue_order(&self, ssn: &Session<'_>, l: QueueId, r: QueueId) -> Option<Ordering> {
        let (pl, pr) = (ssn.queue(l).spec.priority, ssn.queue(r).spec.priority);
        if pl != pr {
            return Some(pr.cmp(&pl));
        }
        if let Some(t) = self.tree() {
            // Leaves first; two leaves compare their ancestors just below the deepest
            // shared one (or themselves).
            let (l, r) = (l.0 as usize, r.0 as usize);
            return Some(match (t.is_leaf(l), t.is_leaf(r)) {
                (true, false) => Ordering::Less,
                (false, true) => Ordering::Greater,
                (false, false) => self.compare_nodes(ssn, l, r),
                (true, true) => {
                    let level = t.common_level(l, r);
                    let lp = t.ancestors[l].get(level + 1).copied().unwrap_or(l);
                    let rp = t.ancestors[r].get(level + 1).copied().unwrap_or(r);
                    self.compare_nodes(ssn, lp, rp)
                }
            });
        }
        let o = self.share(ssn, l).partial_cmp(&self.share(ssn, r)).unwrap_or(Ordering::Equal);
        if o.is_ne() {
            return Some(o);
        }
        let (dl, dr) = (self.attrs[l.0 as usize].has_deserved, self.attrs[r.0 as usize].has_deserved);
        Some(dr.cmp(&dl))
    }
    fn victim_queue_order(&self, _ssn: &Session<'_>, l: QueueId, r: QueueId, preemptor: QueueId) -> Option<Ordering> {
        // Hierarchical only: the victim queue sharing the deepest ancestor with the
        // preemptor's queue first; a tie is no opinion.
        let t = self.tree()?;
        let p = preemptor.0 as usize;
        let (ll, rl) = (t.common_level(l.0 as usize, p), t.common_level(r.0 as usize, p));
        (ll != rl).then(|| rl.cmp(&ll))
    }
    fn allocatable(&self, ssn: &Session<'_>, q: QueueId, pod: PodId) -> Option<bool> {
        let qs = ssn.queue(q);
        if qs.spec.state != QueueState::Open {
            return Some(false);
        }
        let req = ssn.pod(pod).req;
        if let Some(t) = self.tree() {
            let n = q.0 as usize;
            if self.broken() || !t.is_leaf(n) {
                return Some(false);
            }
            // The queue and every ancestor must stay within its realCapability.
            return Some(std::iter::once(n).chain(t.ancestors[n].iter().rev().copied()).all(|a| {
                let mut used = self.node_allocated(ssn, a);
                let r = f(&req);
                for d in 0..DIMS {
                    used[d] += r[d];
                }
                le_on(&used, &self.attrs[a].real_capability, &req)
            }));
        }
        Some(le_on(&f(&(qs.allocation() + req)), &self.attrs[q.0 as usize].real_capability, &req))
    }
    fn allocatable_copies(&self, ssn: &Session<'_>, q: QueueId, req: &Resources, cap: u32) -> Option<u32> {
        let qs = ssn.queue(q);
        // A hierarchy sums its queues' allocations in floating point: not
        // counted (the votes are asked as they come); a closed queue admits none.
        if self.tree().is_some() && qs.spec.state == QueueState::Open {
            return None;
        }
        Some(copies_within(qs, req, cap, &self.attrs[q.0 as usize].real_capability))
    }
    fn allocatable_why(&self, ssn: &Session<'_>, q: QueueId, pod: PodId, ahead: &Resources) -> Option<String> {
        let qs = ssn.queue(q);
        if qs.spec.state != QueueState::Open {
            return Some(format!("the queue is {:?}, not Open", qs.spec.state));
        }
        let req = ssn.pod(pod).req;
        if let Some(t) = self.tree() {
            let n = q.0 as usize;
            if self.broken() {
                return Some("the queue hierarchy is invalid: no queue takes pods".to_string());
            }
            if !t.is_leaf(n) {
                return Some(format!("queue {} is not a leaf of the hierarchy", qs.spec.name));
            }
            return std::iter::once(n).chain(t.ancestors[n].iter().rev().copied()).find_map(|a| {
                let mut used = self.node_allocated(ssn, a);
                let extra = f(ahead);
                for d in 0..DIMS {
                    used[d] += extra[d];
                }
                let why = over_limit(ssn, &used, &req, &self.attrs[a].real_capability, "capability")?;
                let name = ssn.queues().get(a).map_or("root", |q| q.spec.name.as_str());
                Some(format!("queue {name}: {why}"))
            });
        }
        over_limit(ssn, &f(&(qs.allocation() + *ahead)), &req, &self.attrs[q.0 as usize].real_capability, "capability")
    }
    fn preemptive(&self, ssn: &Session<'_>, q: QueueId, req: &Resources) -> Option<bool> {
        if self.broken() || ssn.queue(q).spec.state != QueueState::Open {
            return Some(false);
        }
        // Against the queue's own realCapability only (ancestors are not checked).
        let req = *req;
        if !le_on(&f(&(ssn.queue(q).allocation() + req)), &self.attrs[q.0 as usize].real_capability, &req) {
            return Some(false);
        }
        let after = f(&(ssn.queue(q).allocation() + req));
        let below = |after: &FRes, des: &FRes| (0..DIMS).any(|d| d != PODS && req.get(d) > 0 && after[d] <= des[d]);
        if below(&after, &self.attrs[q.0 as usize].deserved) {
            return Some(true);
        }
        // With ancestorReclaimLevel, an ancestor below its deserved share (not the
        // root) lets the queue reclaim too.
        let root = self.tree().map(|t| t.root);
        Some((1..=self.ancestor_level).filter_map(|d| self.ancestor_at(q.0 as usize, d)).any(|a| {
            if Some(a) == root {
                return false;
            }
            let mut after = self.node_allocated(ssn, a);
            let r = f(&req);
            for d in 0..DIMS {
                after[d] += r[d];
            }
            below(&after, &self.attrs[a].deserved)
        }))
    }
    fn reclaimable(&self, ssn: &Session<'_>, reclaimer: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        if self.broken() {
            return Some(Vec::new());
        }
        let rreq = ssn.pod(reclaimer).req;
        let rq = ssn.job(ssn.pod(reclaimer).job).spec.queue.0 as usize;
        let levels = if self.tree().is_some() { self.ancestor_level } else { 0 };
        let mut running: Vec<Option<FRes>> = vec![None; self.attrs.len()];
        let mut out = Vec::new();
        // Volcano's isImmediateVictim / checkDeservedExceedance: the reclaimee asks
        // for nothing `deserved` names, or `allocated` is above `deserved` on a
        // dimension it asks for.
        let relevant = |req: &Resources, des: &FRes| (0..DIMS).any(|d| d != PODS && req.get(d) > 0 && des[d] > 0.0);
        let over = |req: &Resources, alloc: &FRes, des: &FRes| {
            (0..DIMS).any(|d| d != PODS && req.get(d) > 0 && des[d] > 0.0 && alloc[d] > des[d])
        };
        for &c in cands {
            let v = ssn.pod(c);
            let q = ssn.job(v.job).spec.queue;
            let qi = q.0 as usize;
            let a = &self.attrs[qi];
            // Skip a reclaimee that shares no resource dimension with the reclaimer.
            if !(0..DIMS).any(|d| d != PODS && v.req.get(d) > 0 && rreq.get(d) > 0) {
                continue;
            }
            let alloc = *running[qi].get_or_insert_with(|| f(&ssn.queue(q).allocation()));
            let mut after = alloc;
            let vr = f(&v.req);
            for d in 0..DIMS {
                after[d] -= vr[d];
            }
            // Never below the queue's guarantee.
            if !le(&a.guarantee, &after) {
                continue;
            }
            let immediate = !relevant(&v.req, &a.deserved);
            if immediate {
                // No real contention inside a shared subtree: both leaves deserve
                // nothing of what they ask for.
                if levels > 0 && self.share_ancestor_within_level(rq, qi) && !relevant(&rreq, &self.attrs[rq].deserved)
                {
                    continue;
                }
            } else if !over(&v.req, &alloc, &a.deserved) {
                continue;
            }
            // Each ancestor to check (up to the level, outside the reclaimer's own
            // subtree at that level) must be over its deserved share too.
            let mut checked: Vec<usize> = Vec::new();
            let mut eligible = true;
            for level in 1..=levels {
                let Some(anc) = self.ancestor_to_check(rq, qi, level) else { continue };
                let aa = &self.attrs[anc];
                let anc_alloc = *running[anc].get_or_insert_with(|| self.node_allocated(ssn, anc));
                // Taken off the ancestor's running allocation too when the victim is
                // chosen, as Volcano does for every ancestor it looked at.
                checked.push(anc);
                if !relevant(&v.req, &aa.deserved) {
                    continue;
                }
                if !over(&v.req, &anc_alloc, &aa.deserved) {
                    eligible = false;
                    break;
                }
            }
            if !eligible {
                continue;
            }
            running[qi] = Some(after);
            for anc in checked {
                let x = running[anc].as_mut().expect("counted");
                for d in 0..DIMS {
                    x[d] -= vr[d];
                }
            }
            out.push(c);
        }
        Some(out)
    }
    fn unified_evictable(&self, ssn: &Session<'_>, kind: EvictKind, _: JobId, cands: &[PodId]) -> Option<Vec<PodId>> {
        // gangpreempt: no filter (legacy preempt has none from capacity either).
        if kind == EvictKind::GangPreempt {
            return Some(cands.to_vec());
        }
        if self.broken() {
            return Some(Vec::new());
        }
        // gangreclaim: each victim queue keeps its guarantee, and gives pods back
        // only on dimensions it holds above its deserved share (or pods asking for
        // nothing it deserves). No ancestor levels and no shared-dimension check
        // with the reclaimer here, as in Volcano.
        let mut running: Vec<Option<FRes>> = vec![None; self.attrs.len()];
        let mut out = Vec::new();
        for &c in cands {
            let v = ssn.pod(c);
            let q = ssn.job(v.job).spec.queue;
            let a = &self.attrs[q.0 as usize];
            let alloc = running[q.0 as usize].get_or_insert_with(|| f(&ssn.queue(q).allocation()));
            let mut after = *alloc;
            let vr = f(&v.req);
            for d in 0..DIMS {
                after[d] -= vr[d];
            }
            if !le(&a.guarantee, &after) {
                continue;
            }
            let relevant = (0..DIMS).any(|d| d != PODS && v.req.get(d) > 0 && a.deserved[d] > 0.0);
            let over =
                (0..DIMS).any(|d| d != PODS && v.req.get(d) > 0 && a.deserved[d] > 0.0 && alloc[d] > a.deserved[d]);
            if !relevant || over {
                *alloc = after;
                out.push(c);
            }
        }
        Some(out)
    }
    fn enqueue_refusal(&self, ssn: &Session<'_>, j: JobId) -> Option<String> {
        let q = ssn.job(j).spec.queue.0 as usize;
        if self.tree().is_some() {
            return None;
        }
        self.admission[q].refusal(ssn, j, &self.attrs[q].real_capability)
    }
    fn job_enqueueable(&self, ssn: &Session<'_>, j: JobId) -> Option<Vote> {
        let spec = &ssn.job(j).spec;
        self.shape_enqueueable(ssn, spec.queue, &spec.min_resources)
    }
    fn shape_enqueueable(&self, ssn: &Session<'_>, qid: QueueId, minr: &Resources) -> Option<Vote> {
        let q = qid.0 as usize;
        let Some(t) = self.tree() else {
            return Some(self.admission[q].vote(ssn, qid, minr, &self.attrs[q].real_capability));
        };
        if self.broken() || !t.is_leaf(q) || ssn.queue(qid).spec.state != QueueState::Open {
            return Some(-1);
        }
        if minr.is_zero() {
            return Some(1);
        }
        // minResources + allocated + inqueue − elastic ≤ realCapability, for the queue
        // and every ancestor (each with its subtree's sums).
        let mr = f(minr);
        let ok = std::iter::once(q).chain(t.ancestors[q].iter().rev().copied()).all(|a| {
            let (alloc, adm) = (self.node_allocated(ssn, a), self.node_admission(ssn, a));
            let mut need = [0.0; DIMS];
            for d in 0..DIMS {
                need[d] = mr[d] + alloc[d] + adm.inqueue[d] - adm.elastic[d];
            }
            le_on(&need, &self.attrs[a].real_capability, minr)
        });
        Some(if ok { 1 } else { -1 })
    }
    fn job_enqueued(&mut self, ssn: &Session<'_>, j: JobId) {
        // Ancestors see it through their subtree sums.
        self.admission[ssn.job(j).spec.queue.0 as usize].admit(ssn, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lahar_core::model::queue::Queue;
    use lahar_core::model::resource::{CPU, MEMORY};
    use lahar_core::world::QueueState;

    /// (name, parent, capability cpu, guarantee cpu, deserved cpu), millicores; 0 = unset.
    fn queues(spec: &[(&str, Option<&str>, i64, i64, i64)]) -> Vec<QueueState> {
        spec.iter()
            .map(|&(n, p, c, g, d)| {
                let mut q = Queue::new(n);
                q.parent = p.map(str::to_string);
                if c > 0 {
                    q.capability.put(CPU, c);
                }
                if g > 0 {
                    q.guarantee.put(CPU, g);
                }
                if d > 0 {
                    q.deserved.put(CPU, d);
                }
                QueueState::new(q)
            })
            .collect()
    }

    #[test]
    fn hierarchical_attributes_follow_the_tree() {
        // eng{dev, prod}, ops under an implicit root (node 4).
        let qs = queues(&[
            ("eng", None, 8000, 2000, 4000),
            ("dev", Some("eng"), 0, 1000, 3000),
            ("prod", Some("eng"), 6000, 2000, 1000),
            ("ops", None, 0, 0, 2000),
        ]);
        let t = QueueTree::build(&qs);
        let a = hier_attrs(&qs, &t);
        let cpu = |i: usize| (a[i].deserved[CPU], a[i].guarantee[CPU], a[i].real_capability[CPU]);
        // Root: deserved = 4 + 2, guarantee = 2 + 0, capability unlimited.
        assert_eq!(cpu(4), (6000.0, 2000.0, f64::INFINITY));
        // eng: min(∞ − 2 + 2, 8); its deserved is its own (not the children's 3 + 2).
        assert_eq!(cpu(0), (4000.0, 2000.0, 8000.0));
        // dev inherits eng's cpu capability 8: min(8 − 3 + 1, 8) = 6.
        assert_eq!(cpu(1), (3000.0, 1000.0, 6000.0));
        // prod: deserved raised to its guarantee 2; min(8 − 3 + 2, 6) = 6.
        assert_eq!(cpu(2), (2000.0, 2000.0, 6000.0));
        assert_eq!(cpu(3), (2000.0, 0.0, f64::INFINITY));
        // Memory is unlimited along the whole tree.
        assert!(a.iter().all(|x| x.real_capability[MEMORY] == f64::INFINITY));
    }

    #[test]
    fn sibling_guarantees_shrink_real_capability() {
        // a{b (guarantee 3), c (guarantee 4)}; a capped at 5 cpus: ExceededPart(5, 7) = 0.
        let qs = queues(&[("a", None, 5000, 0, 0), ("b", Some("a"), 0, 3000, 0), ("c", Some("a"), 0, 4000, 0)]);
        let t = QueueTree::build(&qs);
        let a = hier_attrs(&qs, &t);
        assert_eq!(a[1].real_capability[CPU], 3000.0);
        assert_eq!(a[2].real_capability[CPU], 4000.0);
        assert!(a[1].has_deserved && !a[0].has_deserved);
    }

    #[test]
    fn explicit_root_capability_bounds_children() {
        let qs = queues(&[("root", None, 10000, 0, 0), ("x", None, 0, 0, 0), ("y", Some("root"), 12000, 0, 0)]);
        let t = QueueTree::build(&qs);
        let a = hier_attrs(&qs, &t);
        assert_eq!(a[0].real_capability[CPU], 10000.0);
        assert_eq!(a[1].real_capability[CPU], 10000.0);
        // A child's capability above its parent's is only logged by Volcano; the
        // parent's realCapability bounds it.
        assert_eq!(a[2].real_capability[CPU], 10000.0);
    }
}
