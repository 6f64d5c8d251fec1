//! The controllers of recurring objects (Volcano's CronJob, KubeRay's RayCronJob,
//! the Spark operator's ScheduledSparkApplication) as the engine needs them: each
//! run is a job of its own, due at its scheduled time, and the object's
//! concurrency policy decides then whether it is created, held back or replaces
//! the runs still active. The schedule itself was expanded into runs when the
//! input was read (`Recurrence` on each run's spec).

use crate::model::job::{Concurrency, Recurrence};

use crate::model::ids::JobId;
use crate::util::time::SimTime;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What the controller does with a run whose time came.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Due {
    /// Create it now.
    Create,
    /// Create it after deleting these active runs (Replace).
    Replace(Vec<JobId>),
    /// Keep it back: it may be created when the active run ends.
    Hold,
    /// Never create it.
    Skip,
}

/// A run held back under Forbid.
#[derive(Clone, Copy, Debug)]
struct Held {
    job: JobId,
    slot: SimTime,
}

#[derive(Debug, Default)]
struct Series {
    /// Runs created and not finished, in creation order.
    active: Vec<JobId>,
    held: Option<Held>,
}

/// Per recurring object: its runs not created and the active ones it deleted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeriesCounts {
    /// Runs never created: held back by Forbid and not started before a later
    /// one or the end of the run, or past `startingDeadlineSeconds`.
    pub skipped: u64,
    /// The scheduled time of the first run skipped.
    pub first_skipped: Option<SimTime>,
    /// Active runs deleted by Replace.
    pub replaced: u64,
}

/// Every recurring object's state.
#[derive(Debug, Default)]
pub(crate) struct Recurring {
    series: BTreeMap<Arc<str>, Series>,
    /// What the policies did, per object (in name order).
    pub counts: BTreeMap<Arc<str>, SeriesCounts>,
}

impl Recurring {
    fn skip(&mut self, series: &Arc<str>, slot: SimTime) {
        let c = self.counts.entry(Arc::clone(series)).or_default();
        c.skipped += 1;
        c.first_skipped.get_or_insert(slot);
    }

    /// Run `j`'s scheduled time came, at `now`; the runs it returns as skipped
    /// (a run it superseded in the hold, or itself) are never created.
    pub(crate) fn due(&mut self, j: JobId, r: &Recurrence, now: SimTime) -> (Due, Option<JobId>) {
        if r.deadline.is_some_and(|d| now.since(r.slot) >= d) {
            self.skip(&r.series, r.slot);
            return (Due::Skip, None);
        }
        let s = self.series.entry(Arc::clone(&r.series)).or_default();
        match r.policy {
            Concurrency::Allow => (Due::Create, None),
            Concurrency::Replace if s.active.is_empty() => (Due::Create, None),
            Concurrency::Replace => {
                let old = std::mem::take(&mut s.active);
                self.counts.entry(Arc::clone(&r.series)).or_default().replaced += old.len() as u64;
                (Due::Replace(old), None)
            }
            Concurrency::Forbid if s.active.is_empty() => (Due::Create, None),
            Concurrency::Forbid if !r.late_start => {
                self.skip(&r.series, r.slot);
                (Due::Skip, None)
            }
            Concurrency::Forbid => {
                // The controller only ever creates the latest time it missed.
                let before = s.held.replace(Held { job: j, slot: r.slot });
                if let Some(b) = before {
                    self.skip(&r.series, b.slot);
                }
                (Due::Hold, before.map(|b| b.job))
            }
        }
    }

    /// Run `j` was created.
    pub(crate) fn created(&mut self, j: JobId, r: &Recurrence) {
        self.series.entry(Arc::clone(&r.series)).or_default().active.push(j);
    }

    /// Run `j` finished (or was deleted) at `now`: the run held back to create
    /// now, if any, and the one to forget (held too long).
    pub(crate) fn ended(&mut self, j: JobId, r: &Recurrence, now: SimTime) -> (Option<JobId>, Option<JobId>) {
        let Some(s) = self.series.get_mut(&r.series) else { return (None, None) };
        s.active.retain(|&a| a != j);
        if !s.active.is_empty() {
            return (None, None);
        }
        let Some(h) = s.held.take() else { return (None, None) };
        if r.deadline.is_some_and(|d| now.since(h.slot) >= d) {
            self.skip(&r.series, h.slot);
            return (None, Some(h.job));
        }
        (Some(h.job), None)
    }

    /// The run ends: runs still held back were never created.
    pub(crate) fn finish(&mut self) -> Vec<JobId> {
        let mut out = Vec::new();
        let held: Vec<(Arc<str>, Held)> =
            self.series.iter_mut().filter_map(|(k, s)| s.held.take().map(|h| (Arc::clone(k), h))).collect();
        for (k, h) in held {
            self.skip(&k, h.slot);
            out.push(h.job);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::time::SimDuration;

    fn rec(policy: Concurrency, slot: u64, late_start: bool, deadline: Option<u64>) -> Recurrence {
        Recurrence {
            series: Arc::from("CronJob default/c"),
            slot: SimTime(slot),
            policy,
            late_start,
            deadline: deadline.map(SimDuration),
        }
    }

    #[test]
    fn forbid_holds_the_latest_and_starts_it_when_the_active_run_ends() {
        let mut r = Recurring::default();
        let a = rec(Concurrency::Forbid, 10, true, None);
        assert_eq!(r.due(JobId(0), &a, SimTime(10)), (Due::Create, None));
        r.created(JobId(0), &a);
        let b = rec(Concurrency::Forbid, 20, true, None);
        assert_eq!(r.due(JobId(1), &b, SimTime(20)), (Due::Hold, None));
        let c = rec(Concurrency::Forbid, 30, true, None);
        // The later time supersedes the earlier one, which is never created.
        assert_eq!(r.due(JobId(2), &c, SimTime(30)), (Due::Hold, Some(JobId(1))));
        assert_eq!(r.ended(JobId(0), &a, SimTime(35)), (Some(JobId(2)), None));
        let k = &r.counts[&*a.series];
        assert_eq!((k.skipped, k.first_skipped, k.replaced), (1, Some(SimTime(20)), 0));
    }

    #[test]
    fn a_deadline_drops_runs_held_too_long_and_zero_creates_nothing() {
        let mut r = Recurring::default();
        let a = rec(Concurrency::Forbid, 10, true, Some(5));
        assert_eq!(r.due(JobId(0), &a, SimTime(10)).0, Due::Create);
        r.created(JobId(0), &a);
        let b = rec(Concurrency::Forbid, 20, true, Some(5));
        assert_eq!(r.due(JobId(1), &b, SimTime(20)).0, Due::Hold);
        // Ends 5 after the held time: not less than the deadline.
        assert_eq!(r.ended(JobId(0), &a, SimTime(25)), (None, Some(JobId(1))));
        let z = rec(Concurrency::Allow, 40, false, Some(0));
        assert_eq!(r.due(JobId(2), &z, SimTime(40)).0, Due::Skip);
        assert_eq!(r.counts[&*a.series].skipped, 2);
    }

    #[test]
    fn replace_deletes_every_active_run_and_spark_forbid_skips() {
        let mut r = Recurring::default();
        let a = rec(Concurrency::Replace, 10, false, None);
        assert_eq!(r.due(JobId(0), &a, SimTime(10)).0, Due::Create);
        r.created(JobId(0), &a);
        let b = rec(Concurrency::Replace, 20, false, None);
        assert_eq!(r.due(JobId(1), &b, SimTime(20)).0, Due::Replace(vec![JobId(0)]));
        r.created(JobId(1), &b);
        assert_eq!(r.counts[&*a.series].replaced, 1);
        let mut r = Recurring::default();
        let f = rec(Concurrency::Forbid, 10, false, None);
        r.created(JobId(0), &f);
        assert_eq!(r.due(JobId(1), &rec(Concurrency::Forbid, 20, false, None), SimTime(20)).0, Due::Skip);
        assert_eq!(r.finish(), []);
    }
}
