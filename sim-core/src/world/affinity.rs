//! Inter-pod affinity and anti-affinity (Kubernetes' InterPodAffinity plugin,
//! which Volcano's predicates plugin runs as a filter and its nodeorder plugin
//! as a score): the pods each node holds in the plugins' view, and the filter's
//! and the score's answers from them.
//!
//! The view is the predicates plugin's, which host ports read too (`view.rs`):
//! an evicted pod stops counting for the rest of its session and counts again
//! from the next session while it is Releasing.
//!
//! The ledger is kept from the first job with affinity terms on (until then no
//! answer can depend on it), for every pod: an incoming pod's terms may match any
//! pod. The filter (`PreFilter` + `Filter`):
//! - **affinity** (`UnschedulableAndUnresolvable`): for each required term the
//!   node has the topology label, and some listed pod in the node's domain
//!   matches all the pod's required terms — unless no listed pod anywhere does
//!   and the pod matches its own terms (the first pod of a group);
//! - **anti-affinity** (`Unschedulable`): no listed pod in the node's domain of a
//!   required anti-affinity term matches the term;
//! - **existing pods' anti-affinity** (`Unschedulable`): no listed pod whose
//!   required anti-affinity term matches the incoming pod is in the node's domain
//!   of that term.
//!
//! The score (`PreScore` + `Score`): each listed pod adds, at its node's value of
//! a term's topology key, the weight of the incoming pod's preferred affinity
//! terms it matches (minus, for anti-affinity), and the weight of its own
//! preferred terms the incoming pod matches; a node scores the sum over the keys
//! of its values. Volcano builds the plugin with zero-valued arguments, so
//! `hardPodAffinityWeight` is 0 (existing pods' required affinity adds nothing)
//! and existing pods' preferred terms always count.

use super::World;
use super::view::NodeView;
use crate::model::affinity::{AffinityTerm, PodAffinity, node_label, node_labels};
use crate::model::ids::NodeId;
use crate::model::ids::{JobId, PodId};
use crate::model::job::PodStatus;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// Why the filter refuses a node (Kubernetes' reasons).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AffinityRefusal {
    /// The pod's required affinity: evicting cannot help.
    Affinity,
    /// The pod's required anti-affinity.
    AntiAffinity,
    /// A listed pod's required anti-affinity.
    ExistingAntiAffinity,
}

impl AffinityRefusal {
    /// Kubernetes' reason.
    pub fn reason(self) -> &'static str {
        match self {
            AffinityRefusal::Affinity => "node(s) didn't match pod affinity rules",
            AffinityRefusal::AntiAffinity => "node(s) didn't match pod anti-affinity rules",
            AffinityRefusal::ExistingAntiAffinity => "node(s) didn't satisfy existing pods anti-affinity rules",
        }
    }
    /// True if evicting pods could lift the refusal (`Unschedulable`).
    pub fn resolvable(self) -> bool {
        self != AffinityRefusal::Affinity
    }
}

/// (topology key, value) → count.
type Counts = BTreeMap<(String, String), i64>;

/// The filter's counts for one pod in one state of the ledger (`PreFilter`).
#[derive(Debug, Default)]
struct PreFilter {
    pod: Option<PodId>,
    version: u64,
    /// Listed pods matching all of the pod's required affinity terms.
    affinity: Counts,
    /// Listed pods matching each of the pod's required anti-affinity terms.
    anti: Counts,
    /// Listed pods whose required anti-affinity terms match the pod.
    existing: Counts,
}

/// The pods each node holds in the plugins' view.
#[derive(Debug, Default)]
pub(crate) struct AffinityLedger {
    /// The pods in the predicates' view of each node (`view.rs`): the listed pods.
    view: NodeView,
    /// The listed pods whose required anti-affinity terms may refuse any pod.
    anti: BTreeSet<PodId>,
    /// The listed pods with any terms (Kubernetes' `PodsWithAffinity`): the
    /// only ones that score a pod without preferred terms of its own.
    termed: BTreeSet<PodId>,
    /// Bumped at every change of a list.
    version: u64,
    /// The last pod's counts.
    memo: RefCell<PreFilter>,
    /// See `PlantedBugs::wrong_affinity`.
    wrong_for_tests: bool,
}

impl AffinityLedger {
    /// A ledger over `view`, whose pods' terms are then entered by the caller.
    pub(super) fn new(view: NodeView) -> AffinityLedger {
        AffinityLedger { view, ..Default::default() }
    }

    /// Enters a pod now in the view in the sets its terms put it in.
    fn enter(&mut self, pod: PodId, terms: Option<&PodAffinity>) {
        if let Some(a) = terms {
            self.termed.insert(pod);
            if !a.required_anti.is_empty() {
                self.anti.insert(pod);
            }
        }
    }
}

impl World {
    /// True once some job's pods have inter-pod affinity terms: only then may a
    /// placement depend on the pods of other nodes.
    pub fn affinity_on(&self) -> bool {
        self.affinity.is_some()
    }

    /// Starts the ledger from the pods on the nodes now (between sessions: none
    /// is Pipelined, every Releasing pod counts).
    pub(super) fn start_affinity(&mut self) {
        if self.affinity.is_some() {
            return;
        }
        let mut l = AffinityLedger::new(NodeView::of(self.nodes.iter().map(|ns| ns.pods.clone()).collect()));
        let pods: Vec<PodId> = l.view.all().map(|(_, p)| p).collect();
        for p in pods {
            l.enter(p, self.terms_of(p));
        }
        self.affinity = Some(Box::new(l));
    }

    /// Moves a pod between the nodes' lists along its status change (see the
    /// module's comment).
    pub(super) fn move_affine(
        &mut self,
        pod: PodId,
        was: (PodStatus, Option<NodeId>),
        now: (PodStatus, Option<NodeId>),
    ) {
        let Some(mut l) = self.affinity.take() else { return };
        l.version += 1;
        l.anti.remove(&pod);
        l.termed.remove(&pod);
        if l.view.shift(pod, was, now) {
            l.enter(pod, self.terms_of(pod));
        }
        self.affinity = Some(l);
    }

    /// A node's labels changed: the listed pods' domains may have moved, so
    /// the filter's memo of counts by domain is stale.
    pub(super) fn affinity_labels_changed(&mut self) {
        if let Some(l) = self.affinity.as_deref_mut() {
            l.version += 1;
        }
    }

    /// A new session: pods evicted in an earlier one count again while they are
    /// still Releasing on their node.
    pub fn settle_affinity(&mut self) {
        let Some(mut l) = self.affinity.take() else { return };
        let pods = &self.pods;
        let back = l.view.settle(|p, n| {
            let p = &pods[p];
            p.status == PodStatus::Releasing && p.node == Some(n)
        });
        for pod in back {
            l.version += 1;
            l.enter(pod, self.terms_of(pod));
        }
        self.affinity = Some(l);
    }

    /// The labels and namespace of a pod (its job's, its task's).
    fn pod_meta(&self, pod: PodId) -> (Vec<(String, String)>, &str) {
        let p = &self.pods[pod];
        let job = &self.jobs[p.job];
        let queue = &self.queues[job.spec.queue].spec.name;
        (job.spec.pod_labels(p.task as usize, queue), &job.spec.namespace)
    }

    fn terms_of(&self, pod: PodId) -> Option<&PodAffinity> {
        let p = &self.pods[pod];
        self.job_terms(p.job, p.task)
    }

    fn job_terms(&self, job: JobId, task: u16) -> Option<&PodAffinity> {
        self.jobs[job].spec.tasks[task as usize].pod_affinity()
    }

    /// Every listed pod with its node, or (`only`) those of one of the ledger's
    /// sets, in pod-id order.
    fn listed(&self, only: Option<&BTreeSet<PodId>>) -> Vec<(NodeId, PodId)> {
        let Some(l) = self.affinity.as_deref() else { return Vec::new() };
        match only {
            Some(set) => set.iter().filter_map(|&p| self.pods[p].node.map(|n| (n, p))).collect(),
            None => l.view.all().collect(),
        }
    }

    /// Adds 1 at `n`'s value of `key` (when it has the label).
    fn count(&self, c: &mut Counts, n: NodeId, key: &str) {
        if let Some(v) = node_label(self.cluster.node(n), key) {
            *c.entry((key.to_string(), v.to_string())).or_insert(0) += 1;
        }
    }

    /// The filter's counts for `pod` (`PreFilter`), from the memo when the
    /// ledger has not changed since it was made for the same pod.
    fn prefilter(&self, pod: PodId) -> std::cell::Ref<'_, PreFilter> {
        let l = self.affinity.as_deref().expect("asked with the ledger on");
        {
            let m = l.memo.borrow();
            if m.pod == Some(pod) && m.version == l.version {
                return m;
            }
        }
        let (labels, ns) = self.pod_meta(pod);
        let own = self.terms_of(pod);
        let mut s = PreFilter { pod: Some(pod), version: l.version, ..Default::default() };
        // A pod without required terms of its own meets only the listed pods'
        // anti-affinity.
        let mine = own.is_some_and(|a| !a.required.is_empty() || !a.required_anti.is_empty());
        for (n, q) in self.listed((!mine).then_some(&l.anti)) {
            if q == pod {
                continue;
            }
            let qp = &self.pods[q];
            let theirs = self.job_terms(qp.job, qp.task);
            if !mine && theirs.is_none_or(|a| a.required_anti.is_empty()) {
                continue;
            }
            let (ql, qns) = self.pod_meta(q);
            if let Some(a) = own {
                if !a.required.is_empty() && a.required.iter().all(|t| t.matches((&labels, ns), &ql, qns)) {
                    for t in &a.required {
                        self.count(&mut s.affinity, n, &t.topology_key);
                    }
                }
                for t in a.required_anti.iter().filter(|t| t.matches((&labels, ns), &ql, qns)) {
                    self.count(&mut s.anti, n, &t.topology_key);
                }
            }
            for t in theirs.into_iter().flat_map(|a| &a.required_anti) {
                if t.matches((&ql, qns), &labels, ns) {
                    self.count(&mut s.existing, n, &t.topology_key);
                }
            }
        }
        *l.memo.borrow_mut() = s;
        l.memo.borrow()
    }

    /// The filter's answer for `pod` on node `n` (`Filter`): `None` if it
    /// passes. Always passes while the ledger is off.
    pub fn affinity_refusal(&self, pod: PodId, n: NodeId) -> Option<AffinityRefusal> {
        self.affinity.as_ref()?;
        let s = self.prefilter(pod);
        let node = self.cluster.node(n);
        let at = |c: &Counts, t: &AffinityTerm| {
            node_label(node, &t.topology_key)
                .map(|v| c.get(&(t.topology_key.clone(), v.to_string())).copied().unwrap_or(0))
        };
        if let Some(a) = self.terms_of(pod) {
            let mut exist = true;
            for t in &a.required {
                match at(&s.affinity, t) {
                    None => return Some(AffinityRefusal::Affinity),
                    Some(c) if c <= 0 => exist = false,
                    Some(_) => {}
                }
            }
            if !exist {
                let (labels, ns) = self.pod_meta(pod);
                let first = s.affinity.is_empty() && a.required.iter().all(|t| t.matches((&labels, ns), &labels, ns));
                if !first {
                    return Some(AffinityRefusal::Affinity);
                }
            }
            if a.required_anti.iter().any(|t| at(&s.anti, t).is_some_and(|c| c > 0)) {
                return Some(AffinityRefusal::AntiAffinity);
            }
        }
        let hit = |(k, v): (&str, &str)| s.existing.get(&(k.to_string(), v.to_string())).is_some_and(|&c| c > 0);
        if !s.existing.is_empty() && node_labels(node).any(hit) {
            return Some(AffinityRefusal::ExistingAntiAffinity);
        }
        None
    }

    /// True once some job of the run has affinity terms: from then on a
    /// session's placements can change what the InterPodAffinity filter says.
    pub fn affinity_in_play(&self) -> bool {
        self.affinity.is_some()
    }

    /// True if the pod's filter may refuse some node: the ledger is on and the
    /// pod has required terms, or some listed pod has required anti-affinity.
    pub fn affinity_may_refuse(&self, pod: PodId) -> bool {
        self.affinity.as_deref().is_some_and(|l| {
            (!l.anti.is_empty() && !l.wrong_for_tests)
                || self.terms_of(pod).is_some_and(|a| !a.required.is_empty() || !a.required_anti.is_empty())
        })
    }

    /// See `PlantedBugs::wrong_affinity`.
    pub fn break_affinity_for_tests(&mut self) {
        if let Some(l) = self.affinity.as_deref_mut() {
            l.wrong_for_tests = true;
        }
    }

    /// True if the pod's affinity filter can refuse a node for a reason no
    /// eviction lifts (required affinity terms).
    pub fn affinity_unresolvable_possible(&self, pod: PodId) -> bool {
        self.affinity.is_some() && self.terms_of(pod).is_some_and(|a| !a.required.is_empty())
    }

    /// The score's raw values of `pod` on each of `nodes` (`PreScore` +
    /// `Score`), or `None` when no pod adds to any domain (the plugin skips).
    pub fn affinity_scores(&self, pod: PodId, nodes: &[NodeId]) -> Option<Vec<i64>> {
        self.affinity.as_ref()?;
        if nodes.is_empty() {
            return None;
        }
        let own = self.terms_of(pod);
        let constrained = own.is_some_and(PodAffinity::has_preferred);
        let (labels, ns) = self.pod_meta(pod);
        let mut topo: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
        let mut add_at = |n: NodeId, key: &str, w: i64| {
            if let Some(v) = node_label(self.cluster.node(n), key) {
                *topo.entry(key.to_string()).or_default().entry(v.to_string()).or_insert(0) += w;
            }
        };
        // Unless the pod has preferred terms, only pods with terms score it.
        let termed = self.affinity.as_deref().map(|l| &l.termed);
        for (n, q) in self.listed(if constrained { None } else { termed }) {
            if q == pod {
                continue;
            }
            let qp = &self.pods[q];
            let theirs = self.job_terms(qp.job, qp.task);
            if !constrained && theirs.is_none() {
                continue;
            }
            let (ql, qns) = self.pod_meta(q);
            if let Some(a) = own {
                for w in a.preferred.iter().filter(|w| w.term.matches((&labels, ns), &ql, qns)) {
                    add_at(n, &w.term.topology_key, w.weight);
                }
                for w in a.preferred_anti.iter().filter(|w| w.term.matches((&labels, ns), &ql, qns)) {
                    add_at(n, &w.term.topology_key, -w.weight);
                }
            }
            if let Some(b) = theirs {
                for w in b.preferred.iter().filter(|w| w.term.matches((&ql, qns), &labels, ns)) {
                    add_at(n, &w.term.topology_key, w.weight);
                }
                for w in b.preferred_anti.iter().filter(|w| w.term.matches((&ql, qns), &labels, ns)) {
                    add_at(n, &w.term.topology_key, -w.weight);
                }
            }
        }
        if topo.is_empty() {
            return None;
        }
        let score = |n: NodeId| {
            let node = self.cluster.node(n);
            topo.iter().map(|(k, vs)| node_label(node, k).and_then(|v| vs.get(v)).copied().unwrap_or(0)).sum()
        };
        Some(nodes.iter().map(|&n| score(n)).collect())
    }
}

/// Kubernetes' `NormalizeScore` for the inter-pod affinity score: each raw value
/// mapped linearly onto 0..100 between the candidates' least and greatest
/// (truncated), all 0 when they are equal.
pub fn normalize_affinity(raw: &[i64]) -> Vec<i64> {
    let (min, max) = (raw.iter().copied().min().unwrap_or(0), raw.iter().copied().max().unwrap_or(0));
    let diff = max - min;
    raw.iter().map(|&s| if diff > 0 { (100.0 * ((s - min) as f64 / diff as f64)) as i64 } else { 0 }).collect()
}
