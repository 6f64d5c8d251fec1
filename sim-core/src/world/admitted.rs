//! The admitted jobs with pending pods and their terms of the Volcano actions'
//! out-of-reach rule ([`ReachFacts`]), in job order and grouped by facts: one
//! owner for the list and its groups, kept in step by the World as pods move.

use super::Job;
use super::fact_groups::{Digest, FactGroups, Groups};
use crate::model::ids::{JobId, QueueId};
use crate::model::job::PodStatus;
use crate::util::id_set::IdBits;
use crate::util::time::SimTime;

/// A job's terms of the Volcano actions' out-of-reach rule, kept for the admitted
/// jobs with pending pods ([`Admitted`]) in step with their pods: a
/// scheduler that looks at every waiting job in every session reads one small
/// record per job from one array instead of each job's spec, counts and tasks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ReachFacts {
    /// Its queue (from the spec).
    pub queue: QueueId,
    /// Its priority (from the spec).
    pub priority: i32,
    /// minAvailable (from the spec).
    pub min: u32,
    /// Ready + pipelined + pending BestEffort pods.
    pub base: u32,
    /// Running pods.
    pub running: u32,
    /// Tasks with pending pods that request resources (0, 1, or more).
    pub pending_tasks: u32,
    /// The first such task: its index, pending pods and request
    /// ([`super::World::shapes`] index).
    pub task: u32,
    /// See `task`.
    pub pending: u32,
    /// See `task`.
    pub shape: u32,
    /// Placed over all nodes: no sub-groups and no network topology in its spec.
    pub plain: bool,
    /// What its Allocated and Running pods hold is `running` copies of the
    /// request `shape`, and nothing else is placed, waiting or BestEffort
    /// (`base == running`): its allocation is known from these facts.
    pub shaped_alloc: bool,
}

/// A job's [`ReachFacts`], from its spec and counts.
pub fn reach_facts(job: &Job) -> ReachFacts {
    let mut f = ReachFacts {
        queue: job.spec.queue,
        priority: job.spec.priority,
        min: job.spec.min_available,
        base: job.ready_count() + job.waiting_count() + job.pending_best_effort,
        running: job.count(PodStatus::Running),
        plain: job.spec.sub_groups.is_none() && job.spec.network_topology.is_none(),
        ..ReachFacts::default()
    };
    for (t, (state, task)) in job.tasks.iter().zip(&job.spec.tasks).enumerate() {
        let pending = state.counts[PodStatus::Pending.index()];
        if pending == 0 || task.requests.is_best_effort() {
            continue;
        }
        if f.pending_tasks == 0 {
            (f.task, f.pending, f.shape) = (t as u32, pending, state.shape);
        }
        f.pending_tasks += 1;
    }
    f.shaped_alloc = f.base == f.running
        && (f.running == 0
            || f.pending_tasks > 0
                && job.allocated == job.spec.tasks[f.task as usize].requests.times(f.running as i64));
    f
}

/// The admitted jobs with pending pods, each with its [`ReachFacts`], in job
/// order, and the same grouped by facts (settled when read); beside the list,
/// each job's [`Job::revision`], so a walk that asks only whether a job changed
/// reads one array, not each job, and its PodGroup's creation (the groups'
/// order).
#[derive(Clone, Debug, Default)]
pub struct Admitted {
    list: Vec<(JobId, ReachFacts)>,
    /// A bit per listed job: most of the lookups (a job's revision moved, a
    /// pod of it changed) are for jobs not listed, answered without a search.
    listed: IdBits<JobId>,
    revs: Vec<u64>,
    created: Vec<SimTime>,
    groups: FactGroups,
    log: JobLog,
}

/// The jobs whose listing or revision changed, in the order of the changes
/// (with repeats), kept while a reader follows ([`Admitted::follow`]) and cut
/// when it outgrows the list it describes.
#[derive(Clone, Debug, Default)]
struct JobLog {
    on: bool,
    /// The position of `jobs[0]`.
    start: u64,
    jobs: Vec<JobId>,
    /// Tests only: revisions are not logged.
    skip_revisions_for_tests: bool,
}

impl JobLog {
    fn note(&mut self, j: JobId, listed: usize) {
        if !self.on {
            return;
        }
        if self.jobs.len() >= 4096 + 2 * listed {
            self.start += self.jobs.len() as u64;
            self.jobs.clear();
        }
        self.jobs.push(j);
    }
}

impl Admitted {
    /// The jobs and their facts, in job order.
    pub fn list(&self) -> &[(JobId, ReachFacts)] {
        &self.list
    }

    /// The listed jobs' revisions, in the list's order.
    pub fn revisions(&self) -> &[u64] {
        &self.revs
    }

    /// Whether job `j` is listed.
    pub fn lists(&self, j: JobId) -> bool {
        self.listed.contains(j)
    }

    /// Listed job `j`'s position in the list.
    fn position(&self, j: JobId) -> Option<usize> {
        if !self.listed.contains(j) {
            return None;
        }
        self.list.binary_search_by_key(&j, |e| e.0).ok()
    }

    /// Listed job `j`'s facts and revision, or `None` when it is not listed.
    pub fn entry(&self, j: JobId) -> Option<(ReachFacts, u64)> {
        let at = self.position(j)?;
        Some((self.list[at].1, self.revs[at]))
    }

    /// Job `j` listed with `facts` at revision `rev` and its PodGroup created
    /// at `created`, or (`None`) not listed.
    pub fn set(&mut self, j: JobId, facts: Option<ReachFacts>, rev: u64, created: SimTime) {
        if facts.is_none() && !self.listed.contains(j) {
            return;
        }
        match (facts, self.list.binary_search_by_key(&j, |e| e.0)) {
            (Some(f), Err(at)) => {
                self.listed.set(j, true);
                self.list.insert(at, (j, f));
                self.revs.insert(at, rev);
                self.created.insert(at, created);
                self.groups.moved(j, None, &self.list, &self.created);
                self.log.note(j, self.list.len());
            }
            (Some(f), Ok(at)) => {
                if self.revs[at] != rev {
                    self.revs[at] = rev;
                    self.note_revision(j);
                }
                if self.created[at] != created {
                    let was = (self.list[at].1, self.created[at]);
                    self.created[at] = created;
                    self.groups.moved(j, Some(was), &self.list, &self.created);
                }
                self.refresh_at(at, f, true);
            }
            (None, Ok(at)) => {
                self.listed.set(j, false);
                let (_, old) = self.list.remove(at);
                self.revs.remove(at);
                let c = self.created.remove(at);
                self.groups.moved(j, Some((old, c)), &self.list, &self.created);
                self.log.note(j, self.list.len());
            }
            (None, Err(_)) => {}
        }
    }

    /// Listed job `j`'s revision is now `rev`.
    pub fn revise(&mut self, j: JobId, rev: u64) {
        if let Some(at) = self.position(j)
            && self.revs[at] != rev
        {
            self.revs[at] = rev;
            self.note_revision(j);
        }
    }

    fn note_revision(&mut self, j: JobId) {
        if !self.log.skip_revisions_for_tests {
            self.log.note(j, self.list.len());
        }
    }

    /// Starts the log of jobs whose listing or revision changes
    /// ([`Admitted::log_since`]).
    pub fn follow(&mut self) {
        self.log.on = true;
    }

    /// The position after the last logged change.
    pub fn log_end(&self) -> u64 {
        self.log.start + self.log.jobs.len() as u64
    }

    /// The jobs listed or unlisted, or whose revision moved while listed,
    /// since position `pos` (with repeats); `None` when the log was cut after
    /// `pos` or nobody follows it.
    pub fn log_since(&self, pos: u64) -> Option<&[JobId]> {
        if !self.log.on || pos < self.log.start || pos > self.log_end() {
            return None;
        }
        Some(&self.log.jobs[(pos - self.log.start) as usize..])
    }

    /// Tests only: revisions stop being logged (a reader of the log then misses
    /// jobs whose pods changed).
    pub fn break_log_for_tests(&mut self) {
        self.log.skip_revisions_for_tests = true;
    }

    /// Listed job `j`'s facts are now `facts`; the groups are told unless `note`
    /// is false (a deliberately stale index, for tests).
    pub fn refresh(&mut self, j: JobId, facts: ReachFacts, note: bool) {
        if let Some(at) = self.position(j) {
            self.refresh_at(at, facts, note);
        }
    }

    /// [`Admitted::refresh`] of the job at `at` in the list.
    fn refresh_at(&mut self, at: usize, facts: ReachFacts, note: bool) {
        let (j, old) = self.list[at];
        self.list[at].1 = facts;
        if old != facts && note {
            self.groups.moved(j, Some((old, self.created[at])), &self.list, &self.created);
        }
    }

    /// Settles the groups after the changes noted since they were last settled.
    pub fn sync_groups(&mut self) {
        self.groups.sync(&self.list, &self.created);
    }

    /// The groups when settled; `None` while changes are not.
    pub fn groups(&self) -> Option<&Groups> {
        self.groups.settled()
    }

    /// The groups' [`Digest`] when settled; `None` while changes are not.
    pub fn digest(&self) -> Option<&Digest> {
        self.groups.digest()
    }

    /// Checks the list, the revisions, the creations and the groups against
    /// `listed`, `revs` and `created`, the admitted jobs, their facts,
    /// revisions and PodGroup creations read afresh.
    pub fn check(&self, listed: &[(JobId, ReachFacts)], revs: &[u64], created: &[SimTime]) -> Result<(), String> {
        if listed != self.list.as_slice() {
            return Err("the admitted jobs' list out of date".into());
        }
        if revs != self.revs.as_slice() {
            return Err("the admitted jobs' revisions out of date".into());
        }
        if created != self.created.as_slice() {
            return Err("the admitted jobs' PodGroup creations out of date".into());
        }
        if self.listed.count() != listed.len() || listed.iter().any(|e| !self.listed.contains(e.0)) {
            return Err("the admitted jobs' membership bits out of date".into());
        }
        self.groups.check(listed, created)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(q: u32) -> ReachFacts {
        ReachFacts { queue: QueueId(q), ..ReachFacts::default() }
    }

    /// The log names jobs listed, revised and unlisted after a reader starts
    /// following it, not changes of facts alone nor revisions of unlisted jobs.
    #[test]
    fn the_log_names_listings_and_revisions() {
        let mut a = Admitted::default();
        a.set(JobId(1), Some(facts(0)), 1, SimTime::ZERO);
        assert_eq!(a.log_since(0), None, "nobody follows yet");
        a.follow();
        let pos = a.log_end();
        a.set(JobId(2), Some(facts(0)), 1, SimTime::ZERO);
        a.refresh(JobId(1), facts(1), true);
        a.revise(JobId(1), 1);
        a.revise(JobId(7), 3);
        a.revise(JobId(1), 2);
        a.set(JobId(2), Some(facts(1)), 1, SimTime::ZERO);
        a.set(JobId(2), None, 1, SimTime::ZERO);
        assert_eq!(a.log_since(pos), Some(&[JobId(2), JobId(1), JobId(2)][..]));
        assert_eq!(a.log_since(a.log_end()), Some(&[][..]));
        assert_eq!(a.log_since(a.log_end() + 1), None);
        assert_eq!(a.entry(JobId(1)), Some((facts(1), 2)));
        assert_eq!(a.entry(JobId(2)), None);
    }

    /// A log that outgrows the list is cut: a reader from before the cut is told.
    #[test]
    fn a_cut_log_answers_none() {
        let mut a = Admitted::default();
        a.follow();
        a.set(JobId(1), Some(facts(0)), 0, SimTime::ZERO);
        let pos = a.log_end();
        for rev in 1..=5000 {
            a.revise(JobId(1), rev);
        }
        assert_eq!(a.log_since(pos), None);
        let end = a.log_end();
        assert_eq!(end, 5001);
        a.revise(JobId(1), 5001);
        assert_eq!(a.log_since(end), Some(&[JobId(1)][..]));
    }
}
