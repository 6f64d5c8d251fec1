//! Fruitless preemptors carried across sessions: a preempt search that found no
//! node is remembered with the position of the World's log of changed nodes
//! ([`Session::victim_log_since`]); the next search with the same inputs — in a
//! later session too — looks only at the nodes logged since, and at the nodes
//! whose victims made room but whose walk failed (the walk reads the queue's
//! quota, which the log does not follow). Every other node fails as it did.
//!
//! Why that is exact. A search's nodes fail independently, and a failed attempt
//! leaves the session as it found it. Whether a node passes the room bound, the
//! predicates and the plugins' victim choice is a function of:
//! - the preemptor's inputs, all in `CarryKey` (queue, job and pod priority,
//!   BestEffort-ness, request, and its job with the job's allocation when the job
//!   holds resources — a job that holds nothing has no Running pod to exclude
//!   and a zero share), and the pod has no node selector, label set,
//!   tolerations or hints (only such pods are carried);
//! - the possible victim groups (kept with the failure and compared) and the
//!   cluster's total (drf's shares; compared);
//! - the node's own state: its future-idle room, its pods and their statuses,
//!   its victim sums and taints (each change is logged);
//! - the state of the jobs running on it as the built-in plugins read it —
//!   priority (static), gang (ready counts), conformance (static), drf (the
//!   jobs' allocations): every status change of a job's pod logs every node
//!   where the job runs.
//!
//! A search whose failure would be found again with no node to look at —
//! nothing logged since, nothing to re-check, the same victim groups present
//! (so the same possible groups) and the same total — is skipped whole
//! (`Carry::known_fruitless`): it would fail and record the failure kept.
//!
//! Only confs whose plugins are all known to read nothing else carry failures
//! ([`Carry::new`]); any other plugin (capacity, tdm, pdb, extender, usage,
//! nodegroup, deviceshare...) switches carrying off, as do `--exhaustive`,
//! `--explain` on the pod and inter-pod affinity in the run (an existing pod's
//! anti-affinity refuses the nodes of its domain, which the log does not follow). Reclaim does not carry: proportion's victims follow
//! every queue's allocation. `a_wrong_carry_is_caught` shows the contended
//! equivalence property notices a log that misses the jobs' changes.

use super::super::framework::Framework;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::Resources;
use lahar_core::session::Session;
use lahar_core::world::VictimKey;
use rustc_hash::FxHashMap;

/// The plugins whose victim choice, predicates and room reads only what the
/// log follows (scores only order the nodes that pass, and are recomputed).
const KNOWN: [&str; 10] = [
    "priority",
    "gang",
    "conformance",
    "drf",
    "predicates",
    "proportion",
    "nodeorder",
    "binpack",
    "network-topology-aware",
    "overcommit",
];

/// A preemptor's inputs: queue, job priority, pod priority, BestEffort-ness,
/// request, and its job with the job's allocation when the job holds resources.
type CarryKey = (QueueId, i32, i32, bool, Resources, Option<(JobId, Resources)>);

/// A failed search.
struct Failure {
    /// The possible victim groups it searched.
    allowed: Vec<VictimKey>,
    /// The cluster's total then.
    total: Resources,
    /// The session's victim groups then ([`Session::victim_groups_version`]):
    /// with the same groups, the same inputs give the same `allowed`.
    groups: u64,
    /// The log position after it.
    pos: u64,
    /// Nodes whose victims made room but whose walk failed.
    recheck: Vec<NodeId>,
}

/// At most this many failures are kept; beyond, all are forgotten.
const MAX_FAILURES: usize = 4096;

/// Preempt's failed searches, kept across sessions (owned by the scheduler).
#[derive(Default)]
pub struct Carry {
    on: bool,
    failures: FxHashMap<CarryKey, Failure>,
    /// Per node: the query that last listed it (de-duplicates the log).
    seen: Vec<u32>,
    query: u32,
}

impl Carry {
    /// Carrying for a framework: on only when every configured plugin is one
    /// whose reads the log follows (flat drf).
    pub fn new(fw: &Framework) -> Carry {
        let on = fw.tiers.iter().flatten().all(|s| {
            KNOWN.contains(&s.conf.name.as_str()) && !(s.conf.name == "drf" && s.conf.flag("enableHierarchy"))
        });
        Carry { on, ..Carry::default() }
    }

    fn key(ssn: &Session<'_>, pod: PodId) -> Option<CarryKey> {
        let p = ssn.pod(pod);
        let job = ssn.job(p.job);
        let task = &job.spec.tasks[p.task as usize];
        let plain = task.node_selector.is_empty()
            && task.node_label_in.is_empty()
            && task.tolerations.is_empty()
            && task.hints.is_none();
        if !plain {
            return None;
        }
        let holds = [PodStatus::Allocated, PodStatus::Running, PodStatus::Pipelined, PodStatus::Releasing]
            .iter()
            .any(|&s| job.count(s) > 0)
            || !job.allocated.is_zero();
        let owner = holds.then_some((p.job, job.allocation()));
        Some((job.spec.queue, job.spec.priority, p.priority, p.best_effort, p.req, owner))
    }

    /// The nodes a search for `pod` needs to look at, when an earlier search
    /// with the same inputs failed and nothing it read changed elsewhere: the
    /// nodes logged since, and those to re-check, ascending. `None`: search every
    /// node.
    pub(crate) fn nodes(&mut self, ssn: &mut Session<'_>, pod: PodId, allowed: &[VictimKey]) -> Option<Vec<NodeId>> {
        // With no possible victim group the search lists only the nodes whose
        // future-idle room holds the pod (the free-resource index): cheap, and
        // not worth the log.
        if !self.on || ssn.is_exhaustive() || ssn.explaining(pod) || allowed.is_empty() || ssn.affinity_on() {
            return None;
        }
        let key = Self::key(ssn, pod)?;
        let f = self.failures.get(&key)?;
        if f.allowed != allowed || f.total != ssn.total() {
            return None;
        }
        let log = ssn.victim_log_since(f.pos)?;
        self.seen.resize(ssn.node_count(), 0);
        self.query = self.query.wrapping_add(1);
        if self.query == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.query = 1;
        }
        let mut nodes = Vec::new();
        for &n in log.iter().chain(&f.recheck) {
            let s = &mut self.seen[n.0 as usize];
            if *s != self.query {
                *s = self.query;
                nodes.push(n);
            }
        }
        nodes.sort_unstable();
        Some(nodes)
    }

    /// True if a search for `pod` would look at no node: one with the same
    /// inputs failed, nothing was logged since, no node is to be re-checked,
    /// and the victim groups and the cluster's total are as they were (so the
    /// search's possible groups would be too). The search then fails as it
    /// did, and its record would be the one kept: it can be skipped whole,
    /// before its possible groups are even listed.
    pub(crate) fn known_fruitless(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        if !self.on || ssn.is_exhaustive() || ssn.explaining(pod) || ssn.affinity_on() {
            return false;
        }
        let Some(f) = Self::key(ssn, pod).and_then(|k| self.failures.get(&k)) else { return false };
        // The deliberately wrong skip of the equivalence tests takes any failure
        // with the same inputs as fruitless.
        if ssn.planted.wrong_fruitless {
            return true;
        }
        let quiet = ssn.victim_log_since(f.pos).is_some_and(<[NodeId]>::is_empty);
        quiet && f.recheck.is_empty() && f.total == ssn.total() && f.groups == ssn.victim_groups_version()
    }

    /// Records the outcome of a search for `pod` over the possible groups
    /// `allowed`: a failure with the nodes whose walk failed (`recheck`), or a
    /// success (the entry goes: the state changed).
    pub(crate) fn record(
        &mut self,
        ssn: &mut Session<'_>,
        pod: PodId,
        allowed: &[VictimKey],
        failed: Option<Vec<NodeId>>,
    ) {
        if !self.on || ssn.is_exhaustive() || ssn.explaining(pod) || allowed.is_empty() || ssn.affinity_on() {
            return;
        }
        let Some(key) = Self::key(ssn, pod) else { return };
        let Some(recheck) = failed else {
            self.failures.remove(&key);
            return;
        };
        ssn.follow_victim_log();
        if self.failures.len() >= MAX_FAILURES {
            self.failures.clear();
        }
        let f = Failure {
            allowed: allowed.to_vec(),
            total: ssn.total(),
            groups: ssn.victim_groups_version(),
            pos: ssn.victim_log_end(),
            recheck,
        };
        self.failures.insert(key, f);
    }
}
