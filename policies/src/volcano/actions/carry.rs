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
//!   BestEffort-ness, request, and its job's allocation when the job holds
//!   resources — drf's share reads it; a job that holds nothing has a zero
//!   share), and the pod has no node selector, label set, tolerations or
//!   hints (only such pods are carried);
//! - its job's own pods, which its search passes over: a failure of another
//!   job with the same inputs serves too, with the nodes where either job has
//!   pods looked at again (`Failure::owner`) — broken gangs of one shape,
//!   each holding the same, then share their searches;
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
//! A preemptor job whose attempt was not kept is carried too, by the inputs of
//! its searches (the `fruitless` module): the Carry answers, per class, whether
//! every search would fail again, or too few of a request that may take no
//! victim fit the room left (`Carry::defer`). For these answers it also keeps
//! the searches that found no possible victim group (`Carry::note_bare`).
//!
//! The Carry also keeps, for preempt and for reclaim, the out-of-reach rule's
//! answers on victims per (queue, job priority) (`reach::PairMemo`), lent to
//! each action under the same condition: known plugins read, in their group
//! rules, only the group, the preemptor's job priority and what their
//! `victim_group_stamp` sums up.
//!
//! Only confs whose plugins are all known to read nothing else carry failures
//! ([`Carry::new`]); any other plugin (capacity, tdm, pdb, extender, usage,
//! nodegroup, deviceshare...) switches carrying off, as do `--exhaustive`,
//! `--explain` on the pod and inter-pod affinity in the run (an existing pod's
//! anti-affinity refuses the nodes of its domain, which the log does not follow). Reclaim does not carry: proportion's victims follow
//! every queue's allocation. `a_wrong_carry_is_caught` shows the contended
//! equivalence property notices a log that misses the jobs' changes.

use super::super::framework::Framework;
use super::fruitless::{Fruitless, Ident};
use super::reach::{PairMemo, ReachBuffers};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::Resources;
use lahar_core::session::Session;
use lahar_core::world::{Job, VictimKey};
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
/// request, and its job's allocation when the job holds resources (the job
/// itself is not part of them: see [`Failure::owner`]).
type CarryKey = (QueueId, i32, i32, bool, Resources, Option<Resources>);

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
    /// For a preemptor whose job holds resources: its job, and the nodes
    /// where that job's pods were (`Session::job_nodes`). A job's searches
    /// pass over its own pods and read nothing else of it but its
    /// allocation (in the key), so another job's search with the same inputs
    /// fails as this one did on every node but where either job has pods:
    /// those nodes are looked at again (the first job's pods that moved since
    /// logged their nodes).
    owner: Option<(JobId, Vec<NodeId>)>,
}

/// A failed search that listed no node by the victims: either no victim group
/// was a candidate (every node is skipped), or none was one the plugins may
/// choose from (only a node whose future-idle room holds the pod is tried).
struct Bare {
    /// The session's victim groups then: the same groups, the same answer.
    groups: u64,
    /// The cluster's total then.
    total: Resources,
    /// Some group was a candidate.
    candidate: bool,
    /// The pod whose search it was (asked again when the groups move).
    pod: PodId,
}

/// At most this many failures are kept; beyond, all are forgotten.
const MAX_FAILURES: usize = 4096;

/// Preempt's failed searches, kept across sessions (owned by the scheduler).
#[derive(Default)]
pub struct Carry {
    on: bool,
    /// Gang's votes bind: a job whose pods cannot all be placed is not kept.
    gang_binds: bool,
    failures: FxHashMap<CarryKey, Failure>,
    /// Failed searches with no possible victim group (kept for the fruitless
    /// jobs' classes only; such a search is cheap to make again).
    bare: FxHashMap<CarryKey, Bare>,
    /// Per node: the query that last listed it (de-duplicates the log).
    seen: Vec<u32>,
    query: u32,
    /// The jobs none of whose searches found a node, by class.
    jobs: Fruitless<CarryKey>,
    /// The out-of-reach rule's answers on victims per (queue, job priority),
    /// for preempt and for reclaim.
    pairs: [PairMemo; 2],
    /// The rule's lists for preempt and for reclaim (not memos: emptied when lent).
    buffers: [ReachBuffers; 2],
}

impl Carry {
    /// Carrying for a framework: on only when every configured plugin is one
    /// whose reads the log follows (flat drf).
    pub fn new(fw: &Framework) -> Carry {
        let on = fw.tiers.iter().flatten().all(|s| {
            KNOWN.contains(&s.conf.name.as_str()) && !(s.conf.name == "drf" && s.conf.flag("enableHierarchy"))
        });
        Carry { on, gang_binds: fw.gang_binds(), ..Carry::default() }
    }

    /// The out-of-reach rule's answers on victims kept across sessions for
    /// preempt (or, with `reclaim`, reclaim) ([`PairMemo`]), lent for this
    /// action where carrying applies (every plugin is one whose group rule
    /// reads only the group, the preemptor's job priority and what its stamp
    /// says); given back with [`Carry::keep_reach`].
    pub(crate) fn lend_pairs(&mut self, ssn: &Session<'_>, reclaim: bool) -> Option<PairMemo> {
        self.applies(ssn).then(|| std::mem::take(&mut self.pairs[reclaim as usize]))
    }

    /// Takes back the answers lent by [`Carry::lend_pairs`], and the rule's
    /// lists for the action's next session ([`Carry::lend_buffers`]).
    pub(crate) fn keep_reach(&mut self, (pairs, buffers): (Option<PairMemo>, ReachBuffers), reclaim: bool) {
        if let Some(p) = pairs {
            self.pairs[reclaim as usize] = p;
        }
        self.buffers[reclaim as usize] = buffers;
    }

    /// The out-of-reach rule's lists of preempt (or, with `reclaim`,
    /// reclaim), as the action's last session left them.
    pub(crate) fn lend_buffers(&mut self, reclaim: bool) -> ReachBuffers {
        std::mem::take(&mut self.buffers[reclaim as usize])
    }

    /// True if carrying applies to this session's searches at all (not for a
    /// pod `--explain` watches either).
    fn applies(&self, ssn: &Session<'_>) -> bool {
        self.on && !ssn.is_exhaustive() && !ssn.affinity_on()
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
        let owner = holds(job).then(|| job.allocation());
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
        // Another job's failure: the nodes where either job has pods too.
        let j = ssn.pod(pod).job;
        let owners = match &f.owner {
            Some((o, nodes)) if *o != j => {
                let mut v = ssn.job_nodes(j);
                v.extend_from_slice(nodes);
                v
            }
            _ => Vec::new(),
        };
        self.seen.resize(ssn.node_count(), 0);
        self.query = self.query.wrapping_add(1);
        if self.query == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.query = 1;
        }
        let mut nodes = Vec::new();
        for &n in log.iter().chain(&f.recheck).chain(&owners) {
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
        let own = f.owner.as_ref().is_none_or(|(o, _)| *o == ssn.pod(pod).job);
        quiet && own && f.recheck.is_empty() && f.total == ssn.total() && f.groups == ssn.victim_groups_version()
    }

    /// Notes, before a search for `pod` places anything, that it has no
    /// possible victim group: no group is a candidate (`candidate` false: the
    /// search fails), or none is one the plugins may choose from (the search
    /// tries only the nodes whose future-idle room holds the pod).
    pub(crate) fn note_bare(&mut self, ssn: &Session<'_>, pod: PodId, candidate: bool) {
        if !self.applies(ssn) || ssn.explaining(pod) {
            return;
        }
        let Some(key) = Self::key(ssn, pod) else { return };
        if !candidate {
            self.failures.remove(&key);
        }
        if self.bare.len() >= MAX_FAILURES {
            self.bare.clear();
        }
        self.bare.insert(key, Bare { groups: ssn.victim_groups_version(), total: ssn.total(), candidate, pod });
    }

    /// This action's verdicts on the fruitless jobs ([`Fruitless::defer`]):
    /// returns the jobs that must be walked again, ascending.
    /// `no_victim` answers whether a search for a pod would find no victim
    /// group the plugins may choose from (asked of a bare failure's pod when
    /// the victim groups moved since).
    pub(crate) fn defer(&mut self, ssn: &Session<'_>, no_victim: impl Fn(&Session<'_>, PodId) -> bool) -> Vec<JobId> {
        let applies = self.applies(ssn) && !ssn.explaining_any();
        let (failures, bare, gang_binds) = (&mut self.failures, &mut self.bare, self.gang_binds);
        self.jobs.defer(ssn, applies, |keys, needed, jobs| {
            class_fails(failures, bare, gang_binds, ssn, (keys, needed, jobs), &no_victim)
        })
    }

    /// True if job `j`, deferred in this action, is still fruitless now that a
    /// commit of this action changed the session (`state` counts the action's
    /// commits): its class's verdict asked again ([`Fruitless::recheck`]).
    pub(crate) fn still_deferred(
        &mut self,
        ssn: &Session<'_>,
        j: JobId,
        state: u64,
        no_victim: impl Fn(&Session<'_>, PodId) -> bool,
    ) -> bool {
        if !self.applies(ssn) || ssn.explaining_any() {
            return false;
        }
        let (failures, bare, gang_binds) = (&mut self.failures, &mut self.bare, self.gang_binds);
        self.jobs.recheck(ssn, j, state, |keys, needed, jobs| {
            class_fails(failures, bare, gang_binds, ssn, (keys, needed, jobs), &no_victim)
        })
    }

    /// True if job `j` (at revision `rev`, read from the job when `None`) is
    /// deferred in this action.
    pub(crate) fn deferred(&self, ssn: &Session<'_>, j: JobId, rev: Option<u64>) -> bool {
        self.jobs.deferred(ssn, j, rev)
    }

    /// The classes whose verdict waits for a trial, with the job to try
    /// ([`Fruitless::trials`]).
    pub(crate) fn trials(&mut self, ssn: &Session<'_>) -> Vec<(u32, JobId)> {
        self.jobs.trials(ssn)
    }

    /// A trial's verdict ([`Fruitless::settle`]): returns the jobs to walk.
    pub(crate) fn settle(&mut self, ssn: &Session<'_>, class: u32, fruitless: bool) -> Vec<JobId> {
        self.jobs.settle(ssn, class, fruitless || ssn.planted.wrong_fruitless_job)
    }

    /// The queues with deferred jobs.
    pub(crate) fn deferred_queues(&self) -> Vec<QueueId> {
        self.jobs.queues()
    }

    /// The deferred jobs of queue `q`, ascending.
    pub(crate) fn deferred_of(&self, ssn: &Session<'_>, q: QueueId) -> Vec<JobId> {
        self.jobs.deferred_of(ssn, q)
    }

    /// Files job `j` as fruitless after an attempt that tried pods `tried` and
    /// was not kept (the session is as the attempt found it): when the job
    /// holds nothing, has no nominated pod, and each of those searches has its
    /// failure (or its lack of a possible victim group) kept. Nothing is filed
    /// for a job `--explain` watches.
    /// `tried` lists the pods (asked only when the job may be filed).
    pub(crate) fn note_fruitless(&mut self, ssn: &Session<'_>, j: JobId, tried: impl FnOnce() -> Vec<PodId>) {
        if !self.applies(ssn) || ssn.explaining_job(j) {
            return;
        }
        let job = ssn.job(j);
        if holds(job)
            || job.pods.iter().any(|&p| ssn.pod(p).status == PodStatus::Pending && ssn.pod(p).nominated.is_some())
        {
            return;
        }
        let tried = tried();
        if tried.is_empty() {
            return;
        }
        let mut pods: Vec<CarryKey> = Vec::with_capacity(tried.len());
        let mut keys: Vec<CarryKey> = Vec::new();
        for &p in &tried {
            let Some(k) = Self::key(ssn, p) else { return };
            if !keys.contains(&k) {
                if !self.failures.contains_key(&k) && !self.bare.contains_key(&k) {
                    return;
                }
                keys.push(k);
            }
            pods.push(k);
        }
        // The pods still to be placed for gang to call the job pipelined.
        let needed = job.spec.min_available.saturating_sub(job.ready_count() + job.pending_best_effort);
        let spec = &job.spec;
        let one = spec.tasks.len() == 1 && spec.sub_groups.is_none() && spec.network_topology.is_none();
        let task_min = one.then(|| spec.tasks[0].min_available);
        self.jobs.file(ssn, j, Ident { pods, needed, task_min });
    }

    /// Records the outcome of a search for `pod` over the possible groups
    /// `allowed`: a failure with the nodes whose walk failed (`recheck`), or a
    /// success (an earlier failure with the same inputs stays: the nodes the
    /// success changed are logged, every other node fails as it did).
    pub(crate) fn record(
        &mut self,
        ssn: &mut Session<'_>,
        pod: PodId,
        allowed: &[VictimKey],
        failed: Option<Vec<NodeId>>,
    ) {
        if !self.applies(ssn) || ssn.explaining(pod) {
            return;
        }
        if allowed.is_empty() {
            return;
        }
        let Some(key) = Self::key(ssn, pod) else { return };
        self.bare.remove(&key);
        let Some(recheck) = failed else {
            // The deliberately wrong carry of the equivalence tests takes the
            // success's own changes as looked at.
            if ssn.planted.wrong_kept_failure
                && let Some(f) = self.failures.get_mut(&key)
            {
                f.pos = ssn.victim_log_end();
            }
            return;
        };
        ssn.follow_victim_log();
        if self.failures.len() >= MAX_FAILURES {
            self.failures.clear();
        }
        let j = ssn.pod(pod).job;
        let owner = key.5.is_some().then(|| (j, ssn.job_nodes(j)));
        let f = Failure {
            owner,
            allowed: allowed.to_vec(),
            total: ssn.total(),
            groups: ssn.victim_groups_version(),
            pos: ssn.victim_log_end(),
            recheck,
        };
        self.failures.insert(key, f);
    }
}

/// A class's verdict ([`Carry::defer`]): true if every attempt of its jobs —
/// searches with inputs `keys`, kept with `needed` pods placed — would fail
/// now and leave the session as it found it.
fn class_fails(
    failures: &mut FxHashMap<CarryKey, Failure>,
    bare: &mut FxHashMap<CarryKey, Bare>,
    gang_binds: bool,
    ssn: &Session<'_>,
    (keys, needed, jobs): (&[CarryKey], u32, &[JobId]),
    no_victim: &impl Fn(&Session<'_>, PodId) -> bool,
) -> bool {
    // One request with no possible victim: the pods go only where the
    // future-idle room holds them, and the job is kept only with `needed` of
    // them placed.
    if let [key] = keys
        && gang_binds
        && bare.get_mut(key).is_some_and(|b| b.candidate && bare_holds(b, key, ssn, jobs, no_victim))
    {
        return ssn.planted.wrong_fruitless_job || ssn.slots_up_to(&key.4, needed) < needed;
    }
    keys.iter().all(|k| still_fails(failures, bare, ssn, k))
}

/// True if a search with inputs `key` would fail now for want of a node: a
/// failure with those inputs is kept, with the same victim groups and
/// total and nothing to re-check, and every node logged since leaves too
/// little room — its future-idle resources plus the allowed groups' pods —
/// for the request (the room bound the search lists its nodes by). The
/// failure is then brought up to now: a search would record the same.
/// True if job `job` holds anything: a pod Allocated, Running, Pipelined or
/// Releasing, or an allocation (a search's inputs then include the job).
pub(crate) fn holds(job: &Job) -> bool {
    [PodStatus::Allocated, PodStatus::Running, PodStatus::Pipelined, PodStatus::Releasing]
        .iter()
        .any(|&s| job.count(s) > 0)
        || !job.allocation().is_zero()
}

/// True if the bare failure `b` of a search with inputs `key` still has no
/// possible victim group: the total is as it was, and the victim groups are
/// too, or a pending pod with the same inputs — the search's, or one of
/// `jobs`' — finds none among them now (`no_victim`; the record is then
/// brought up to now).
fn bare_holds(
    b: &mut Bare,
    key: &CarryKey,
    ssn: &Session<'_>,
    jobs: &[JobId],
    no_victim: impl Fn(&Session<'_>, PodId) -> bool,
) -> bool {
    if b.total != ssn.total() {
        return false;
    }
    if b.groups == ssn.victim_groups_version() {
        return true;
    }
    let same = |p: PodId| {
        ssn.has_pod(p) && ssn.pod(p).status == PodStatus::Pending && Carry::key(ssn, p).as_ref() == Some(key)
    };
    if !same(b.pod) {
        // The first pending pod of the first job filed that still has one.
        let pods = jobs.iter().filter(|&&j| ssn.has_job(j)).flat_map(|&j| ssn.job(j).pods.iter().copied());
        let Some(p) = pods.take(64).find(|&p| same(p)) else { return false };
        b.pod = p;
    }
    if !no_victim(ssn, b.pod) {
        return false;
    }
    b.groups = ssn.victim_groups_version();
    true
}

fn still_fails(
    failures: &mut FxHashMap<CarryKey, Failure>,
    bare: &FxHashMap<CarryKey, Bare>,
    ssn: &Session<'_>,
    key: &CarryKey,
) -> bool {
    if let Some(b) = bare.get(key) {
        // Without a candidate every node is skipped; without a group to
        // choose from, only a node whose room holds the pod is tried.
        return b.groups == ssn.victim_groups_version()
            && b.total == ssn.total()
            && (!b.candidate || ssn.planted.wrong_fruitless_job || ssn.first_fit(&key.4, 0).is_none());
    }
    let Some(f) = failures.get_mut(key) else { return false };
    if f.total != ssn.total() || f.groups != ssn.victim_groups_version() || !f.recheck.is_empty() {
        return false;
    }
    let Some(log) = ssn.victim_log_since(f.pos) else { return false };
    // The deliberately wrong skip of the equivalence tests ignores the log.
    if !ssn.planted.wrong_fruitless_job && log.iter().any(|&n| key.4.fits_in(&ssn.victim_bound(n, &f.allowed))) {
        return false;
    }
    f.pos = ssn.victim_log_end();
    true
}
