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

use super::ReachFacts;
use crate::model::ids::JobId;
use crate::util::time::SimTime;
use std::collections::{BTreeMap, BTreeSet};

/// A job as a group holds it: its PodGroup's creation, then its id.
pub type Filed = (SimTime, JobId);

/// The admitted waiting jobs of each distinct facts.
pub type Groups = BTreeMap<ReachFacts, BTreeSet<Filed>>;

/// Jobs noted before the groups are settled without being asked (a scheduler
/// that never reads them, such as a baseline, keeps the list bounded).
const MAX_NOTED: usize = 1 << 16;

/// The admitted list ([`super::admitted::Admitted`]) grouped by facts, settled on demand.
#[derive(Clone, Debug, Default)]
pub struct FactGroups {
    /// The jobs of each distinct facts, by creation, as last settled.
    groups: Groups,
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
            regroup(&mut self.groups, j, was, now);
        }
        self.moved.clear();
    }

    /// The groups when settled; `None` while changes are noted and not settled.
    pub fn settled(&self) -> Option<&Groups> {
        self.moved.is_empty().then_some(&self.groups)
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
        Ok(())
    }
}

/// Moves job `j` from group `old` to group `new` (`None`: not filed), each
/// with the creation it is filed under.
fn regroup(groups: &mut Groups, j: JobId, old: Option<(ReachFacts, SimTime)>, new: Option<(ReachFacts, SimTime)>) {
    if old == new {
        return;
    }
    if let Some((o, c)) = old
        && let Some(set) = groups.get_mut(&o)
    {
        set.remove(&(c, j));
        if set.is_empty() {
            groups.remove(&o);
        }
    }
    if let Some((n, c)) = new {
        groups.entry(n).or_default().insert((c, j));
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
