//! A job's pending pods by sub-job (Volcano's `JobWorksheet` and the gang
//! actions' eviction worksheet): which sub-jobs to place, in which order.

use super::super::framework::Framework;
use super::super::subjobs;
use lahar_core::model::job::{JobId, PodId};
use lahar_core::session::Session;
use std::collections::VecDeque;

/// The pending pods of a job's sub-jobs still to place this session (Volcano's
/// `JobWorksheet`): per sub-job with pods to place, its pods in task order.
#[derive(Clone, Debug)]
pub(crate) struct Worksheet {
    /// (sub-job, its pods left, required to reach its policy's `minSubGroups`).
    subs: Vec<(u32, VecDeque<PodId>, bool)>,
}

impl Worksheet {
    /// Volcano's `organizeJobWorksheet`: `pending` (the job's pending pods in task
    /// order) split by sub-job; the sub-jobs a policy needs to reach its
    /// `minSubGroups`, counting the ready ones, are marked required.
    pub(crate) fn new(fw: &Framework, ssn: &Session<'_>, j: JobId, pending: &[PodId]) -> Worksheet {
        let n = subjobs::count(ssn, j) as usize;
        let mut lists: Vec<VecDeque<PodId>> = vec![VecDeque::new(); n];
        for &p in pending {
            lists[subjobs::of_pod(ssn, p) as usize].push_back(p);
        }
        let mut required = vec![false; n];
        if let Some(g) = &ssn.job(j).spec.sub_groups {
            let mut count = vec![0u32; g.policies.len()];
            let mut waiting: Vec<u32> = Vec::new();
            for s in 0..n as u32 {
                if subjobs::live_count(ssn, j, s) == 0 {
                    continue;
                }
                if fw.sub_job_ready(ssn, j, s) {
                    if let Some(p) = g.sub_jobs[s as usize].policy {
                        count[p as usize] += 1;
                    }
                } else {
                    waiting.push(s);
                }
            }
            waiting.sort_by(|&a, &b| fw.sub_job_order(ssn, j, a, b));
            for s in waiting {
                if let Some(p) = g.sub_jobs[s as usize].policy
                    && count[p as usize] < g.policies[p as usize].min_groups
                {
                    required[s as usize] = true;
                    count[p as usize] += 1;
                }
            }
        }
        let subs = lists
            .into_iter()
            .enumerate()
            .filter(|(_, l)| !l.is_empty())
            .map(|(s, l)| (s as u32, l, required[s]))
            .collect();
        Worksheet { subs }
    }
    /// Nothing left to place.
    pub(crate) fn is_empty(&self) -> bool {
        self.subs.is_empty()
    }
    /// True if `p` is still to be placed.
    pub(crate) fn contains(&self, p: PodId) -> bool {
        self.subs.iter().any(|(_, l, _)| l.contains(&p))
    }
    /// Every pod left, sub-job by sub-job.
    pub(crate) fn pods(&self) -> impl Iterator<Item = PodId> + '_ {
        self.subs.iter().flat_map(|(_, l, _)| l.iter().copied())
    }
    /// Puts a sub-job with pods left back (Volcano pushes it back into its queue).
    pub(crate) fn put_back(&mut self, s: u32, pods: VecDeque<PodId>, required: bool) {
        self.subs.push((s, pods, required));
    }
    /// The sub-jobs in the order they are taken, each with its pods, all at once
    /// (the gang actions' plans: nothing they do changes the order).
    pub(crate) fn in_order(mut self, fw: &Framework, ssn: &Session<'_>, j: JobId) -> Vec<(u32, Vec<PodId>)> {
        let mut out = Vec::new();
        while let Some((s, pods, _)) = self.pop(fw, ssn, j) {
            out.push((s, pods.into_iter().collect()));
        }
        out
    }
    /// Takes the first sub-job: required ones first, then in sub-job order.
    pub(crate) fn pop(&mut self, fw: &Framework, ssn: &Session<'_>, j: JobId) -> Option<(u32, VecDeque<PodId>, bool)> {
        let mut best: Option<usize> = None;
        for i in 0..self.subs.len() {
            let better = best.is_none_or(|b| {
                let (x, y) = (&self.subs[i], &self.subs[b]);
                y.2.cmp(&x.2).then_with(|| fw.sub_job_order(ssn, j, x.0, y.0)).is_lt()
            });
            if better {
                best = Some(i);
            }
        }
        best.map(|i| self.subs.remove(i))
    }
}
