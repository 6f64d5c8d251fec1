//! Fruitless preemptor jobs, carried across sessions by class. A preemptor job
//! whose attempt was not kept — a job that holds nothing (no pod placed, no
//! allocation: each search of its pods has the inputs any such job's search
//! with the same pods has) and has no nominated pod — is filed under what its
//! attempt reads: the inputs of its searches pod by pod, the pods gang needs
//! placed to keep it, and for a one-task job that task's minAvailable (its
//! class, [`Ident`]; `Carry::note_fruitless`). At the start of each preempt
//! action ([`Fruitless::defer`]) each class gets a verdict, from the Carry's
//! kept searches (`Carry::defer`):
//! - every search would fail again: its failure is kept, nothing it read moved
//!   (the victim groups and the total are as they were, nothing is to be
//!   re-checked, and no node logged since leaves room for the request within
//!   its future-idle resources plus the allowed groups' pods); or no victim
//!   group is a candidate;
//! - or the class asks one request that may take no victim (asked again of a
//!   pending pod with those inputs when the victim groups moved), so its pods
//!   go only where future-idle room holds them, and the room left in the
//!   cluster holds fewer copies of the request than the pods gang needs;
//! - or else, for one-task jobs, a trial: one job's attempt is made and
//!   retracted ([`lahar_core::session::Session::retract`]), and it answers for
//!   all the class's jobs, which make the same attempt in the same state. A
//!   trial that is kept, or that pipelined a pod after evictions (the close
//!   would nominate it, discarded or not), dissolves the class.
//!
//! The jobs of a class found fruitless are deferred: the action's walk does
//! not ask them and their attempts are not made — each would be discarded and
//! leave the session as it found it, with nothing to nominate. That holds until
//! the action's first commit, which brings the deferred jobs back in their
//! places (preempt's `run`). When the pass reaches one of them, its class's
//! verdict is asked again in the state the commits left
//! ([`Fruitless::recheck`], once per class and state): a class still found
//! fruitless has its job skipped, as its attempt would change nothing; any
//! other job is attempted. A class that may succeed is dissolved and its jobs
//! are walked again; a job whose pods change is named by the World's log of
//! admitted jobs and walked (its filing is then stale and ignored).
//!
//! A backlog of high-priority gangs that wait for room (drf's share refuses
//! their later pods victims) then costs a look per class and session, not a
//! walk, a starving vote, a sort and a memo lookup per job.
//! `a_wrong_fruitless_job_is_caught` shows the contended equivalence property
//! notices classes kept deferred without looking at what changed, and
//! `a_wrong_deferral_is_caught` deferred jobs that do not come back after a
//! commit, and `a_stale_late_verdict_is_caught` deferred jobs skipped after a
//! commit on the verdict given before it.

use lahar_core::model::job::JobId;
use lahar_core::model::queue::QueueId;
use lahar_core::session::Session;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::hash::Hash;

/// At most this many filings are kept; beyond, every job is walked again.
const MAX_FILED: usize = 16384;

/// What identifies a class: the inputs of the searches its jobs' attempts
/// make, pod by pod in task order; the pods its jobs must still place to be
/// kept (gang's minAvailable less their ready and pending BestEffort pods);
/// and, for jobs of one task without sub-groups or network topology, that
/// task's minAvailable (the only other thing gang's verdict reads of them:
/// such jobs make the same attempt in the same state, so one's attempt
/// answers for all — a trial).
/// `K` is a search's inputs (the Carry's key).
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Ident<K> {
    pub(crate) pods: Vec<K>,
    pub(crate) needed: u32,
    pub(crate) task_min: Option<u32>,
}

/// A class of fruitless jobs.
struct Class<K> {
    ident: Ident<K>,
    /// `ident.pods` without repeats.
    keys: Vec<K>,
    /// The queue of its jobs.
    queue: QueueId,
    jobs: Vec<JobId>,
    /// This action's verdict: every attempt is a no-op.
    fruitless: bool,
    /// Its verdict waits for a trial.
    trial: bool,
    /// Its verdict asked again after a commit of this action, with the
    /// state it was asked in ([`Fruitless::recheck`]).
    late: Option<(u64, bool)>,
}

/// Where a job is filed: its class, its revision, and the action it was
/// filed in (a verdict holds only for jobs filed before it).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Filing {
    class: u32,
    rev: u64,
    action: u64,
}

/// The fruitless jobs by class (owned by the Carry).
pub(crate) struct Fruitless<K> {
    ids: FxHashMap<Ident<K>, u32>,
    classes: BTreeMap<u32, Class<K>>,
    filed: FxHashMap<JobId, Filing>,
    next: u32,
    /// Filings made since the memo was last emptied (with stale ones).
    count: usize,
    /// Counts the actions ([`Fruitless::defer`]).
    action: u64,
}

impl<K> Default for Fruitless<K> {
    fn default() -> Self {
        Fruitless {
            ids: FxHashMap::default(),
            classes: BTreeMap::new(),
            filed: FxHashMap::default(),
            next: 0,
            count: 0,
            action: 0,
        }
    }
}

impl<K: Copy + Eq + Hash> Fruitless<K> {
    /// Gives this action's verdicts: a class that `fails` (given its searches'
    /// inputs without repeats and the pods its jobs need) keeps its jobs
    /// deferred; a class of one-task jobs that may not is left to a trial
    /// ([`Fruitless::trials`]); the jobs of the others are returned, ascending
    /// (they must be walked), and their classes dissolved. With `applies`
    /// false (or the memo grown too large) every job is returned.
    pub(crate) fn defer(
        &mut self,
        ssn: &Session<'_>,
        applies: bool,
        mut fails: impl FnMut(&[K], u32, &[JobId]) -> bool,
    ) -> Vec<JobId> {
        self.action += 1;
        let mut released = Vec::new();
        if !applies || self.count > MAX_FILED {
            released.extend(self.filed.keys().copied().filter(|&j| ssn.has_job(j)));
            self.ids.clear();
            self.classes.clear();
            self.filed.clear();
            self.count = 0;
        } else {
            let mut gone = Vec::new();
            for (&id, class) in self.classes.iter_mut() {
                class.late = None;
                class.fruitless = fails(&class.keys, class.ident.needed, &class.jobs);
                class.trial = !class.fruitless && class.ident.task_min.is_some();
                if !class.fruitless && !class.trial {
                    gone.push(id);
                }
            }
            for id in gone {
                released.extend(self.dissolve(ssn, id));
            }
        }
        released.sort_unstable();
        released.dedup();
        released
    }

    /// The classes whose verdict waits for a trial, each with the job to try:
    /// its first job still filed there at its revision. A class with none is
    /// dissolved (nothing of it is deferred).
    pub(crate) fn trials(&mut self, ssn: &Session<'_>) -> Vec<(u32, JobId)> {
        let mut out = Vec::new();
        let mut empty = Vec::new();
        for (&id, class) in &self.classes {
            if !class.trial {
                continue;
            }
            match class.jobs.iter().copied().find(|&j| self.filed_at(ssn, j, id)) {
                Some(j) => out.push((id, j)),
                None => empty.push(id),
            }
        }
        for id in empty {
            self.dissolve(ssn, id);
        }
        out
    }

    /// Gives a trial's verdict on class `id`: when the tried job's attempt
    /// would be a no-op (`fruitless`), so is every attempt of the class's
    /// jobs, which are deferred; else the class is dissolved and its jobs are
    /// returned (they must be walked).
    pub(crate) fn settle(&mut self, ssn: &Session<'_>, id: u32, fruitless: bool) -> Vec<JobId> {
        if fruitless {
            if let Some(class) = self.classes.get_mut(&id) {
                class.fruitless = true;
                class.trial = false;
            }
            return Vec::new();
        }
        self.dissolve(ssn, id)
    }

    /// True if job `j` exists, at the revision it was filed at, in class `id`.
    fn filed_at(&self, ssn: &Session<'_>, j: JobId, id: u32) -> bool {
        self.filed.get(&j).is_some_and(|f| f.class == id && ssn.has_job(j) && ssn.job(j).revision == f.rev)
    }

    /// Dissolves class `id`: returns its jobs still filed there (existing).
    fn dissolve(&mut self, ssn: &Session<'_>, id: u32) -> Vec<JobId> {
        let Some(class) = self.classes.remove(&id) else { return Vec::new() };
        self.ids.remove(&class.ident);
        let mut out = Vec::new();
        for j in class.jobs {
            if self.filed.get(&j).is_some_and(|f| f.class == id) {
                self.filed.remove(&j);
                if ssn.has_job(j) {
                    out.push(j);
                }
            }
        }
        out
    }

    /// The class that defers job `j` in this action, if any, given the job's
    /// revision (read from the job when `None`).
    fn deferring(&self, ssn: &Session<'_>, j: JobId, rev: Option<u64>) -> Option<&Class<K>> {
        let f = self.filed.get(&j)?;
        let class = self.classes.get(&f.class)?;
        let current = f.action < self.action && class.fruitless;
        (current && f.rev == rev.unwrap_or_else(|| ssn.job(j).revision)).then_some(class)
    }

    /// True if job `j` (at revision `rev`, read from the job when `None`) is
    /// deferred in this action.
    pub(crate) fn deferred(&self, ssn: &Session<'_>, j: JobId, rev: Option<u64>) -> bool {
        self.deferring(ssn, j, rev).is_some()
    }

    /// True if job `j`, deferred in this action, is still fruitless in the
    /// session's current state, which a commit of this action changed: its
    /// class's verdict, `fails`, asked again now. `state` names the state (the
    /// verdict is asked once per class and state). A job found so would make
    /// an attempt that fails and leaves the session as it found it, so the
    /// pass skips it; one that is not deferred, or whose class may succeed
    /// now, is attempted.
    pub(crate) fn recheck(
        &mut self,
        ssn: &Session<'_>,
        j: JobId,
        state: u64,
        fails: impl FnOnce(&[K], u32, &[JobId]) -> bool,
    ) -> bool {
        if self.deferring(ssn, j, None).is_none() {
            return false;
        }
        let Some(class) = self.filed.get(&j).and_then(|f| self.classes.get_mut(&f.class)) else { return false };
        // The deliberately stale verdict of the equivalence tests is the one
        // given at the action's start, whatever the commits since.
        if ssn.planted.stale_late_verdict {
            return true;
        }
        if let Some((at, verdict)) = class.late
            && at == state
        {
            return verdict;
        }
        let verdict = fails(&class.keys, class.ident.needed, &class.jobs);
        class.late = Some((state, verdict));
        verdict
    }

    /// The queues with deferred classes.
    pub(crate) fn queues(&self) -> Vec<QueueId> {
        self.classes.values().filter(|c| c.fruitless).map(|c| c.queue).collect()
    }

    /// The deferred jobs of queue `q`, ascending.
    pub(crate) fn deferred_of(&self, ssn: &Session<'_>, q: QueueId) -> Vec<JobId> {
        let mut v: Vec<JobId> = self
            .classes
            .values()
            .filter(|c| c.fruitless && c.queue == q)
            .flat_map(|c| c.jobs.iter().copied())
            .filter(|&j| ssn.has_job(j) && self.deferred(ssn, j, None))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Files job `j` at its current revision under the class `ident`.
    pub(crate) fn file(&mut self, ssn: &Session<'_>, j: JobId, ident: Ident<K>) {
        let id = match self.ids.get(&ident) {
            Some(&id) => id,
            None => {
                let id = self.next;
                self.next += 1;
                let mut keys: Vec<K> = Vec::new();
                for k in &ident.pods {
                    if !keys.contains(k) {
                        keys.push(*k);
                    }
                }
                let queue = ssn.job(j).spec.queue;
                let class = Class {
                    ident: ident.clone(),
                    keys,
                    queue,
                    jobs: Vec::new(),
                    fruitless: false,
                    trial: false,
                    late: None,
                };
                self.classes.insert(id, class);
                self.ids.insert(ident, id);
                id
            }
        };
        let filing = Filing { class: id, rev: ssn.job(j).revision, action: self.action };
        if self.filed.insert(j, filing).is_some_and(|f| f.class == id) {
            // Already among the class's jobs.
            return;
        }
        if let Some(class) = self.classes.get_mut(&id) {
            class.jobs.push(j);
            self.count += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lahar_core::model::cluster::{Cluster, Node};
    use lahar_core::model::job::{JobSpec, TaskSpec};
    use lahar_core::model::queue::Queue;
    use lahar_core::model::resource::{ResourceNames, Resources};
    use lahar_core::model::topology::Topology;
    use lahar_core::util::rng::RngStreams;
    use lahar_core::util::time::SimTime;
    use lahar_core::world::World;

    fn world(jobs: usize) -> World {
        let node = Node::plain("n0", Resources::new(64_000, 1 << 40, 8000, 110), "H100");
        let spec = |i: usize| JobSpec {
            name: format!("j{i}"),
            min_available: 1,
            tasks: vec![TaskSpec { name: "w".into(), replicas: 1, min_available: 1, ..TaskSpec::default() }],
            ..JobSpec::default()
        };
        let cluster = Cluster::new(vec![node], ResourceNames::default(), Topology::flat(1));
        let mut w = World::new(cluster, vec![Queue::new("default")], (0..jobs).map(spec).collect());
        for j in 0..jobs as u32 {
            w.activate(JobId(j));
            w.create_pod(JobId(j), 0, 0, SimTime::ZERO);
        }
        w
    }

    fn ident(key: u32, task_min: Option<u32>) -> Ident<u32> {
        Ident { pods: vec![key, key], needed: 2, task_min }
    }

    /// Hand-checked bookkeeping: a class found fruitless defers the jobs filed
    /// before the action (not one filed during it), a class that may succeed
    /// gives its jobs back to the walk, a job revised since its filing is not
    /// deferred, a one-task class waits for its trial, and a session where
    /// the memo does not apply gives every job back.
    #[test]
    fn classes_defer_release_and_wait_for_trials() {
        let mut w = world(4);
        let mut rng = RngStreams::new(0).stream("t", 0);
        let (j0, j1, j2, j3) = (JobId(0), JobId(1), JobId(2), JobId(3));
        let mut memo: Fruitless<u32> = Fruitless::default();
        {
            let ssn = Session::new(&mut w, SimTime::ZERO, 1, &mut rng);
            memo.file(&ssn, j0, ident(7, None));
            memo.file(&ssn, j1, ident(7, None));
            memo.file(&ssn, j2, ident(8, None));
            memo.file(&ssn, j3, ident(9, Some(1)));
            // Class 7 fails again; 8 may succeed (no trial: not one task); 9 waits.
            let released = memo.defer(&ssn, true, |keys, needed, _| {
                assert_eq!(needed, 2);
                keys == [7]
            });
            assert_eq!(released, vec![j2]);
            assert!(memo.deferred(&ssn, j0, None) && memo.deferred(&ssn, j1, None));
            assert!(!memo.deferred(&ssn, j2, None) && !memo.deferred(&ssn, j3, None));
            assert_eq!(memo.queues(), vec![QueueId(0)]);
            assert_eq!(memo.deferred_of(&ssn, QueueId(0)), vec![j0, j1]);
            let trials = memo.trials(&ssn);
            assert_eq!(trials.len(), 1);
            assert_eq!(trials[0].1, j3);
            // A job filed in this action is not deferred by its verdicts.
            memo.file(&ssn, j2, ident(7, None));
            assert!(!memo.deferred(&ssn, j2, None));
            // The trial says the class may succeed: its job goes back.
            assert_eq!(memo.settle(&ssn, trials[0].0, false), vec![j3]);
            assert!(!memo.deferred(&ssn, j3, None));
            ssn.close();
        }
        // j0's pods change: its filing is stale.
        w.create_pod(j0, 0, 1, SimTime::ZERO);
        {
            let ssn = Session::new(&mut w, SimTime(1), 2, &mut rng);
            assert!(memo.defer(&ssn, true, |_, _, _| true).is_empty());
            assert!(!memo.deferred(&ssn, j0, None), "revised since its filing");
            assert!(memo.deferred(&ssn, j1, None) && memo.deferred(&ssn, j2, None));
            assert_eq!(memo.deferred_of(&ssn, QueueId(0)), vec![j1, j2]);
            // The class may succeed now: every job filed there goes back.
            assert_eq!(memo.defer(&ssn, true, |_, _, _| false), vec![j0, j1, j2]);
            memo.file(&ssn, j1, ident(7, Some(1)));
            memo.file(&ssn, j3, ident(7, Some(1)));
            // A trial that finds the class fruitless defers it.
            assert!(memo.defer(&ssn, true, |_, _, _| false).is_empty());
            let trials = memo.trials(&ssn);
            assert_eq!(trials.iter().map(|t| t.1).collect::<Vec<_>>(), vec![j1]);
            assert!(memo.settle(&ssn, trials[0].0, true).is_empty());
            assert!(memo.deferred(&ssn, j1, None) && memo.deferred(&ssn, j3, None));
            // Not applying (an explained or exhaustive session): all go back.
            assert_eq!(memo.defer(&ssn, false, |_, _, _| true), vec![j1, j3]);
            assert!(!memo.deferred(&ssn, j1, None));
            ssn.close();
        }
    }
}
