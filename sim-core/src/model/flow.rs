//! Volcano's JobFlow controller as the engine needs it: a flow's jobs are due
//! when the flow is created, and each is created only once every job it depends
//! on (`dependsOn.targets`) has Completed (the controller's `judge`). A job whose
//! dependency fails, is aborted or never ends is never created.

use crate::model::job::FlowStep;

use crate::model::ids::JobId;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

#[derive(Debug, Default)]
struct FlowState {
    /// Steps whose job Completed.
    completed: BTreeSet<Arc<str>>,
    /// Jobs due and waiting for their targets, with the targets.
    waiting: Vec<(JobId, Vec<Arc<str>>)>,
}

/// Per flow: the jobs never created.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowCounts {
    /// Jobs still waiting for their dependencies when the run ended.
    pub never_created: u64,
    /// The first of them (its step) and a target of it that had not completed.
    pub first: Option<(Arc<str>, Arc<str>)>,
}

/// Every JobFlow's state.
#[derive(Debug, Default)]
pub(crate) struct Flows {
    flows: BTreeMap<Arc<str>, FlowState>,
}

impl Flows {
    /// Job `j` of step `s` is due: whether it is created now (else it waits).
    pub(crate) fn due(&mut self, j: JobId, s: &FlowStep) -> bool {
        let f = self.flows.entry(Arc::clone(&s.flow)).or_default();
        if s.targets.iter().all(|t| f.completed.contains(t)) {
            return true;
        }
        f.waiting.push((j, s.targets.clone()));
        false
    }

    /// Step `s`'s job Completed: the waiting jobs to create now, in the order
    /// they became due.
    pub(crate) fn completed(&mut self, s: &FlowStep) -> Vec<JobId> {
        let f = self.flows.entry(Arc::clone(&s.flow)).or_default();
        f.completed.insert(Arc::clone(&s.step));
        let completed = &f.completed;
        let (ready, waiting): (Vec<_>, Vec<_>) =
            std::mem::take(&mut f.waiting).into_iter().partition(|(_, t)| t.iter().all(|x| completed.contains(x)));
        f.waiting = waiting;
        ready.into_iter().map(|(j, _)| j).collect()
    }

    /// The run ends: the jobs still waiting were never created (returned, with
    /// the counts per flow; `step` names a job's step).
    pub(crate) fn finish(&mut self, step: impl Fn(JobId) -> Arc<str>) -> (Vec<JobId>, BTreeMap<Arc<str>, FlowCounts>) {
        let mut jobs = Vec::new();
        let mut counts = BTreeMap::new();
        for (name, f) in &mut self.flows {
            if f.waiting.is_empty() {
                continue;
            }
            let c: &mut FlowCounts = counts.entry(Arc::clone(name)).or_default();
            for (j, targets) in std::mem::take(&mut f.waiting) {
                c.never_created += 1;
                if c.first.is_none() {
                    let missing = targets.iter().find(|t| !f.completed.contains(*t)).cloned().unwrap_or_default();
                    c.first = Some((step(j), missing));
                }
                jobs.push(j);
            }
        }
        (jobs, counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(name: &str, targets: &[&str]) -> FlowStep {
        FlowStep {
            flow: Arc::from("JobFlow default/f"),
            step: Arc::from(name),
            targets: targets.iter().map(|t| Arc::from(*t)).collect(),
        }
    }

    #[test]
    fn a_job_is_created_once_every_target_completed() {
        let mut f = Flows::default();
        assert!(f.due(JobId(0), &step("a", &[])));
        assert!(!f.due(JobId(1), &step("b", &["a"])));
        assert!(!f.due(JobId(2), &step("c", &["a", "b"])));
        assert_eq!(f.completed(&step("a", &[])), [JobId(1)]);
        assert_eq!(f.completed(&step("b", &["a"])), [JobId(2)]);
        let (never, counts) = f.finish(|_| Arc::from("?"));
        assert!(never.is_empty() && counts.is_empty());
    }

    #[test]
    fn jobs_waiting_at_the_end_are_counted_with_what_they_wait_for() {
        let mut f = Flows::default();
        assert!(!f.due(JobId(1), &step("b", &["a"])));
        assert!(!f.due(JobId(2), &step("c", &["b"])));
        let names = ["a", "b", "c"];
        let (never, counts) = f.finish(|j| Arc::from(names[j.0 as usize]));
        assert_eq!(never, [JobId(1), JobId(2)]);
        let c = &counts["JobFlow default/f"];
        assert_eq!((c.never_created, c.first.clone()), (2, Some((Arc::from("b"), Arc::from("a")))));
    }
}
