//! The admitted waiting jobs grouped by their out-of-reach facts
//! ([`super::ReachFacts`]), brought up to date when an action reads them.
//!
//! A session's tentative placements change a job's facts with every pod placed
//! and change them back when the step is discarded; filing the job under each
//! intermediate group (a map lookup, a set removal and insertion, often a set
//! made and dropped) cost about 4% of a million-job run. Instead the World notes
//! which jobs moved and under which facts each was filed, and the groups are
//! settled only when an action asks for them ([`FactGroups::sync`]); a job that
//! moved and came back is not touched.
//!
//! Each group holds its jobs by (PodGroup creation, id): Volcano's job order
//! falls back on the creation, so a reader whose job-order keys the facts
//! decide reads a group in that order without looking at the jobs.
//!
//! Beside the groups, their [`Digest`]: what preempt's and reclaim's rule
//! needs to know to set every group aside at once, kept as groups come and go.

use super::ReachFacts;
use crate::model::ids::{JobId, QueueId};
use crate::util::time::SimTime;
use std::collections::{BTreeMap, BTreeSet};

/// A job as a group holds it: its PodGroup's creation, then its id.
pub type Filed = (SimTime, JobId);

/// The admitted waiting jobs of each distinct facts.
pub type Groups = BTreeMap<ReachFacts, BTreeSet<Filed>>;

/// Jobs noted before the groups are settled without being asked (a scheduler
/// that never reads them, such as a baseline, keeps the list bounded).
const MAX_NOTED: usize = 1 << 16;

/// The groups' facts summed up for the out-of-reach rule of preempt and reclaim
/// (a job is set aside when its gang cannot reach minAvailable on the free
/// slots and it has no victim): which (queue, priority) pairs have groups, and
/// for the groups one count of free slots decides, how many pods each is short,
/// per request. If no pair has a victim and, per request, the group shortest of
/// minAvailable cannot find its pods in the free slots, every group is set
/// aside without walking them. Counted per group (a group is one distinct facts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Digest {
    /// Groups per (queue, job priority).
    pub pairs: BTreeMap<(QueueId, i32), u32>,
    /// Groups with one task of pending pods that request resources, short of
    /// minAvailable by `short` pods and with at least as many pending: per
    /// (request index, `short`), how many.
    pub short: BTreeMap<(u32, u32), u32>,
    /// Groups the rule keeps on their facts alone (ready or pipelined at
    /// minAvailable) or asks job by job (several tasks with pending pods).
    pub others: u32,
    /// The facts of the groups with Running pods (preempt asks their jobs one
    /// by one: their own pods are candidates).
    pub running: BTreeSet<ReachFacts>,
}

impl Digest {
    /// The digest of `groups`, counted afresh.
    pub fn of(groups: &Groups) -> Digest {
        let mut d = Digest::default();
        for f in groups.keys() {
            d.count(f, 1);
        }
        d
    }

    /// Adds (`by` 1) or takes away (`by` -1) the group of facts `f`.
    fn count(&mut self, f: &ReachFacts, by: i32) {
        fn bump<K: Ord + Copy>(m: &mut BTreeMap<K, u32>, k: K, by: i32) {
            let n = m.entry(k).or_default();
            *n = n.wrapping_add_signed(by);
            if *n == 0 {
                m.remove(&k);
            }
        }
        bump(&mut self.pairs, (f.queue, f.priority), by);
        if f.running > 0 {
            if by > 0 {
                self.running.insert(*f);
            } else {
                self.running.remove(f);
            }
        }
        if f.pending_tasks > 1 || f.base >= f.min {
            self.others = self.others.wrapping_add_signed(by);
        } else if f.pending_tasks == 1 && f.pending >= f.min - f.base {
            bump(&mut self.short, (f.shape, f.min - f.base), by);
        }
    }
}

/// The admitted list ([`super::admitted::Admitted`]) grouped by facts, settled on demand.
#[derive(Clone, Debug, Default)]
pub struct FactGroups {
    /// The jobs of each distinct facts, by creation, as last settled.
    groups: Groups,
    /// The groups' digest, kept with them.
    digest: Digest,
    /// Jobs whose facts or creation changed since the groups were settled,
    /// each with the facts and creation it was filed under at its first
    /// change (`None`: not filed); later entries of the same job are ignored.
    moved: Vec<(JobId, Option<(ReachFacts, SimTime)>)>,
}

impl FactGroups {
    /// Notes that job `j`, filed under `was` when the groups were last settled
    /// or at an earlier note, changed its facts or creation. `list` and
    /// `created` are the admitted list and its jobs' creations after the
    /// change (read only when the notes are too many).
    pub fn moved(
        &mut self,
        j: JobId,
        was: Option<(ReachFacts, SimTime)>,
        list: &[(JobId, ReachFacts)],
        created: &[SimTime],
    ) {
        self.moved.push((j, was));
        if self.moved.len() >= MAX_NOTED {
            self.sync(list, created);
        }
    }

    /// Files every noted job under its facts and creation in `list` and
    /// `created` (the World's admitted list), or removes it when it is not listed.
    pub fn sync(&mut self, list: &[(JobId, ReachFacts)], created: &[SimTime]) {
        if self.moved.is_empty() {
            return;
        }
        // The first note of each job carries the facts it is filed under.
        self.moved.sort_by_key(|e| e.0);
        self.moved.dedup_by_key(|e| e.0);
        for &(j, was) in &self.moved {
            let now = list.binary_search_by_key(&j, |e| e.0).ok().map(|at| (list[at].1, created[at]));
            regroup(&mut self.groups, &mut self.digest, j, was, now);
        }
        self.moved.clear();
    }

    /// The groups when settled; `None` while changes are noted and not settled.
    pub fn settled(&self) -> Option<&Groups> {
        self.moved.is_empty().then_some(&self.groups)
    }

    /// The settled groups' [`Digest`]; `None` while changes are noted and not settled.
    pub fn digest(&self) -> Option<&Digest> {
        self.moved.is_empty().then_some(&self.digest)
    }

    /// Checks the groups against `list` and `created` as [`FactGroups::sync`]
    /// would leave them: each job filed under its noted facts and creation if
    /// it moved, else under its listed ones.
    pub fn check(&self, list: &[(JobId, ReachFacts)], created: &[SimTime]) -> Result<(), String> {
        let mut first: BTreeMap<JobId, Option<(ReachFacts, SimTime)>> = BTreeMap::new();
        for &(j, was) in &self.moved {
            first.entry(j).or_insert(was);
        }
        let mut want = Groups::new();
        for (&(j, f), &c) in list.iter().zip(created).filter(|e| !first.contains_key(&e.0.0)) {
            want.entry(f).or_default().insert((c, j));
        }
        for (&j, was) in &first {
            if let Some((f, c)) = was {
                want.entry(*f).or_default().insert((*c, j));
            }
        }
        if want != self.groups {
            return Err("the admitted jobs' groups out of date".into());
        }
        if Digest::of(&self.groups) != self.digest {
            return Err("the admitted jobs' groups' digest out of date".into());
        }
        Ok(())
    }
}

/// Moves job `j` from group `old` to group `new` (`None`: not filed), each
/// with the creation it is filed under; a group that comes or goes is counted
/// in `digest`.
fn regroup(
    groups: &mut Groups,
    digest: &mut Digest,
    j: JobId,
    old: Option<(ReachFacts, SimTime)>,
    new: Option<(ReachFacts, SimTime)>,
) {
    if old == new {
        return;
    }
    if let Some((o, c)) = old
        && let Some(set) = groups.get_mut(&o)
    {
        set.remove(&(c, j));
        if set.is_empty() {
            groups.remove(&o);
            digest.count(&o, -1);
        }
    }
    if let Some((n, c)) = new {
        let set = groups.entry(n).or_default();
        if set.is_empty() {
            digest.count(&n, 1);
        }
        set.insert((c, j));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(base: u32) -> ReachFacts {
        ReachFacts { base, min: 2, ..ReachFacts::default() }
    }

    const T0: SimTime = SimTime(0);

    #[test]
    fn a_job_that_moved_and_came_back_stays_in_its_group() {
        let mut g = FactGroups::default();
        let mut list = vec![(JobId(1), facts(0)), (JobId(2), facts(0))];
        let mut created = vec![T0, T0];
        g.moved(JobId(1), None, &list, &created);
        g.moved(JobId(2), None, &list, &created);
        g.sync(&list, &created);
        let one: Vec<Filed> = g.settled().unwrap()[&facts(0)].iter().copied().collect();
        assert_eq!(one, vec![(T0, JobId(1)), (T0, JobId(2))]);
        // Job 1 placed a pod (base 1), then the step was discarded (base 0).
        list[0].1 = facts(1);
        g.moved(JobId(1), Some((facts(0), T0)), &list, &created);
        assert!(g.settled().is_none(), "unsettled groups are not handed out");
        assert_eq!(g.check(&list, &created), Ok(()));
        list[0].1 = facts(0);
        g.moved(JobId(1), Some((facts(1), T0)), &list, &created);
        g.sync(&list, &created);
        assert_eq!(g.settled().unwrap().len(), 1);
        // Job 2 placed a pod and kept it; job 1 left the list.
        list[1].1 = facts(1);
        g.moved(JobId(2), Some((facts(0), T0)), &list, &created);
        list.remove(0);
        created.remove(0);
        g.moved(JobId(1), Some((facts(0), T0)), &list, &created);
        g.sync(&list, &created);
        let settled = g.settled().unwrap();
        assert_eq!(settled.len(), 1);
        assert_eq!(settled[&facts(1)].iter().copied().collect::<Vec<_>>(), vec![(T0, JobId(2))]);
        assert_eq!(g.check(&list, &created), Ok(()));
    }

    /// A group reads its jobs by creation; a job made anew (a new PodGroup,
    /// the same facts) is filed again under its new creation.
    #[test]
    fn a_group_holds_its_jobs_by_creation() {
        let mut g = FactGroups::default();
        let list = vec![(JobId(1), facts(0)), (JobId(2), facts(0))];
        let mut created = vec![SimTime(9), SimTime(4)];
        g.moved(JobId(1), None, &list, &created);
        g.moved(JobId(2), None, &list, &created);
        g.sync(&list, &created);
        let order: Vec<JobId> = g.settled().unwrap()[&facts(0)].iter().map(|e| e.1).collect();
        assert_eq!(order, vec![JobId(2), JobId(1)]);
        // Job 2 left the list and came back with a new PodGroup.
        g.moved(JobId(2), Some((facts(0), SimTime(4))), &list[..1], &created[..1]);
        created[1] = SimTime(12);
        g.moved(JobId(2), None, &list, &created);
        g.sync(&list, &created);
        let order: Vec<Filed> = g.settled().unwrap()[&facts(0)].iter().copied().collect();
        assert_eq!(order, vec![(SimTime(9), JobId(1)), (SimTime(12), JobId(2))]);
        assert_eq!(g.check(&list, &created), Ok(()));
    }

    /// The digest counts each group once, as groups come and go: one with a
    /// task of pending pods short by 2 of minAvailable (request 7), one that
    /// cannot reach it (1 pending, 2 short), one with Running pods, and one
    /// kept on its facts (ready at minAvailable).
    #[test]
    fn the_digest_follows_the_groups() {
        let short = ReachFacts { min: 2, pending_tasks: 1, pending: 2, shape: 7, ..ReachFacts::default() };
        let hopeless = ReachFacts { pending: 1, ..short };
        let running = ReachFacts { priority: 5, base: 1, running: 1, pending: 1, ..short };
        let kept = ReachFacts { base: 2, ..short };
        let mut g = FactGroups::default();
        let list =
            vec![(JobId(1), short), (JobId(2), short), (JobId(3), hopeless), (JobId(4), running), (JobId(5), kept)];
        let created = [T0; 5];
        for e in &list {
            g.moved(e.0, None, &list, &created);
        }
        g.sync(&list, &created);
        let d = g.digest().unwrap();
        let pair = (QueueId(0), 0);
        assert_eq!(d.pairs.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), vec![(pair, 3), ((QueueId(0), 5), 1)]);
        // The two jobs of `short` are one group; `running` is 1 short with 1 pending.
        assert_eq!(d.short.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), vec![((7, 1), 1), ((7, 2), 1)]);
        assert_eq!((d.others, d.running.iter().copied().collect::<Vec<_>>()), (1, vec![running]));
        assert_eq!(g.check(&list, &created), Ok(()));
        // Job 1 leaves: its group stays (job 2); then job 2 leaves, and jobs 4 and 5.
        let rest = vec![list[2]];
        for j in [1, 2, 4, 5] {
            let was = list.iter().find(|e| e.0 == JobId(j)).map(|e| (e.1, T0));
            g.moved(JobId(j), was, &rest, &created[..1]);
        }
        g.sync(&rest, &created[..1]);
        let d = g.digest().unwrap();
        assert_eq!(d.pairs.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), vec![(pair, 1)]);
        assert!(d.short.is_empty() && d.running.is_empty() && d.others == 0);
        assert_eq!(g.check(&rest, &created[..1]), Ok(()));
        // A digest out of step with its groups is caught.
        g.digest.others = 1;
        assert!(g.check(&rest, &created[..1]).is_err());
    }

    #[test]
    fn the_check_sees_a_job_filed_wrong() {
        let mut g = FactGroups::default();
        let list = vec![(JobId(1), facts(0))];
        g.moved(JobId(1), None, &list, &[T0]);
        g.sync(&list, &[T0]);
        let moved = vec![(JobId(1), facts(1))];
        assert!(g.check(&moved, &[T0]).is_err(), "a change not noted is caught");
        assert!(g.check(&list, &[SimTime(1)]).is_err(), "a creation not noted is caught");
    }

    #[test]
    fn many_notes_settle_on_their_own() {
        let mut g = FactGroups::default();
        let list = vec![(JobId(1), facts(0))];
        for _ in 0..MAX_NOTED {
            g.moved(JobId(1), None, &list, &[T0]);
        }
        assert!(g.settled().is_some());
        assert_eq!(g.check(&list, &[T0]), Ok(()));
    }
}
