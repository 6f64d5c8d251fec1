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

use super::ReachFacts;
use crate::model::ids::JobId;
use std::collections::{BTreeMap, BTreeSet};

/// Jobs noted before the groups are settled without being asked (a scheduler
/// that never reads them, such as a baseline, keeps the list bounded).
const MAX_NOTED: usize = 1 << 16;

/// The admitted list ([`super::admitted::Admitted`]) grouped by facts, settled on demand.
#[derive(Clone, Debug, Default)]
pub struct FactGroups {
    /// The jobs of each distinct facts, in job order, as last settled.
    groups: BTreeMap<ReachFacts, BTreeSet<JobId>>,
    /// Jobs whose facts changed since the groups were settled, each with the
    /// facts it was filed under at its first change (`None`: not filed); later
    /// entries of the same job are ignored.
    moved: Vec<(JobId, Option<ReachFacts>)>,
}

impl FactGroups {
    /// Notes that job `j`, filed under `was` when the groups were last settled
    /// or at an earlier note, changed its facts. `list` is the admitted list
    /// after the change (read only when the notes are too many).
    pub fn moved(&mut self, j: JobId, was: Option<ReachFacts>, list: &[(JobId, ReachFacts)]) {
        self.moved.push((j, was));
        if self.moved.len() >= MAX_NOTED {
            self.sync(list);
        }
    }

    /// Files every noted job under its facts in `list` (the World's admitted
    /// list), or removes it when it is not listed.
    pub fn sync(&mut self, list: &[(JobId, ReachFacts)]) {
        if self.moved.is_empty() {
            return;
        }
        // The first note of each job carries the facts it is filed under.
        self.moved.sort_by_key(|e| e.0);
        self.moved.dedup_by_key(|e| e.0);
        for &(j, was) in &self.moved {
            let now = list.binary_search_by_key(&j, |e| e.0).ok().map(|at| list[at].1);
            regroup(&mut self.groups, j, was, now);
        }
        self.moved.clear();
    }

    /// The groups when settled; `None` while changes are noted and not settled.
    pub fn settled(&self) -> Option<&BTreeMap<ReachFacts, BTreeSet<JobId>>> {
        self.moved.is_empty().then_some(&self.groups)
    }

    /// Checks the groups against `list` as [`FactGroups::sync`] would leave
    /// them: each job filed under its noted facts if it moved, else under its
    /// listed ones.
    pub fn check(&self, list: &[(JobId, ReachFacts)]) -> Result<(), String> {
        let mut first: BTreeMap<JobId, Option<ReachFacts>> = BTreeMap::new();
        for &(j, was) in &self.moved {
            first.entry(j).or_insert(was);
        }
        let mut want: BTreeMap<ReachFacts, BTreeSet<JobId>> = BTreeMap::new();
        for &(j, f) in list.iter().filter(|e| !first.contains_key(&e.0)) {
            want.entry(f).or_default().insert(j);
        }
        for (&j, was) in &first {
            if let Some(f) = was {
                want.entry(*f).or_default().insert(j);
            }
        }
        if want != self.groups {
            return Err("the admitted jobs' groups out of date".into());
        }
        Ok(())
    }
}

/// Moves job `j` from group `old` to group `new` (`None`: not filed).
fn regroup(
    groups: &mut BTreeMap<ReachFacts, BTreeSet<JobId>>,
    j: JobId,
    old: Option<ReachFacts>,
    new: Option<ReachFacts>,
) {
    if old == new {
        return;
    }
    if let Some(o) = old
        && let Some(set) = groups.get_mut(&o)
    {
        set.remove(&j);
        if set.is_empty() {
            groups.remove(&o);
        }
    }
    if let Some(n) = new {
        groups.entry(n).or_default().insert(j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(base: u32) -> ReachFacts {
        ReachFacts { base, min: 2, ..ReachFacts::default() }
    }

    #[test]
    fn a_job_that_moved_and_came_back_stays_in_its_group() {
        let mut g = FactGroups::default();
        let mut list = vec![(JobId(1), facts(0)), (JobId(2), facts(0))];
        g.moved(JobId(1), None, &list);
        g.moved(JobId(2), None, &list);
        g.sync(&list);
        let one: Vec<JobId> = g.settled().unwrap()[&facts(0)].iter().copied().collect();
        assert_eq!(one, vec![JobId(1), JobId(2)]);
        // Job 1 placed a pod (base 1), then the step was discarded (base 0).
        list[0].1 = facts(1);
        g.moved(JobId(1), Some(facts(0)), &list);
        assert!(g.settled().is_none(), "unsettled groups are not handed out");
        assert_eq!(g.check(&list), Ok(()));
        list[0].1 = facts(0);
        g.moved(JobId(1), Some(facts(1)), &list);
        g.sync(&list);
        assert_eq!(g.settled().unwrap().len(), 1);
        // Job 2 placed a pod and kept it; job 1 left the list.
        list[1].1 = facts(1);
        g.moved(JobId(2), Some(facts(0)), &list);
        list.remove(0);
        g.moved(JobId(1), Some(facts(0)), &list);
        g.sync(&list);
        let settled = g.settled().unwrap();
        assert_eq!(settled.len(), 1);
        assert_eq!(settled[&facts(1)].iter().copied().collect::<Vec<_>>(), vec![JobId(2)]);
        assert_eq!(g.check(&list), Ok(()));
    }

    #[test]
    fn the_check_sees_a_job_filed_wrong() {
        let mut g = FactGroups::default();
        let list = vec![(JobId(1), facts(0))];
        g.moved(JobId(1), None, &list);
        g.sync(&list);
        let moved = vec![(JobId(1), facts(1))];
        assert!(g.check(&moved).is_err(), "a change not noted is caught");
    }

    #[test]
    fn many_notes_settle_on_their_own() {
        let mut g = FactGroups::default();
        let list = vec![(JobId(1), facts(0))];
        for _ in 0..MAX_NOTED {
            g.moved(JobId(1), None, &list);
        }
        assert!(g.settled().is_some());
        assert_eq!(g.check(&list), Ok(()));
    }
}
