//! Jobs preempt found barred, remembered across sessions. A job none of whose
//! pending pods may preempt (each `preemptionPolicy: Never`, or nominated by an
//! earlier preemption to a node whose predicates pass it whatever the nodes
//! hold: preempt's `may_preempt`) stays so until one of its inputs changes:
//! - the job's pods — a pod created, a status changed, a gate removed, a
//!   nomination set: each moves the job's [`lahar_core::world::Job::revision`];
//! - whether some node has a taint that repels pods (the only state of the
//!   cluster the predicates' "passes everywhere" answers read: labels,
//!   resource names and NUMA topologies do not change during a run);
//! - inter-pod affinity coming into play, which preempt asks before the memo.
//!
//! A backlog of preemptors waiting on their nominated nodes then costs one
//! lookup per job and session, not a walk of each job's pods. Not used in
//! exhaustive mode (which asks nothing), nor for a job `--explain` watches.
//! `a_wrong_barred_memo_is_caught` shows the contended equivalence property
//! notices a memo that ignores revisions.

use lahar_core::model::job::JobId;
use lahar_core::session::Session;
use rustc_hash::FxHashMap;

/// The barred jobs, each with the revision it was found barred at.
#[derive(Debug, Default)]
pub struct Barred {
    jobs: FxHashMap<JobId, u64>,
    /// The cluster's taint state the entries were found under.
    tainted: bool,
}

impl Barred {
    /// Drops every entry when the cluster's taint state changed since they were
    /// made, and the entries of jobs that changed or ended once they outnumber
    /// the admitted waiting jobs (a memo never larger than the backlog it serves).
    pub(crate) fn sync(&mut self, ssn: &Session<'_>) {
        let tainted = ssn.cluster().has_taints();
        if tainted != self.tainted {
            self.jobs.clear();
            self.tainted = tainted;
        }
        if self.jobs.len() > 2 * ssn.admitted_facts().len() + 1024 {
            self.jobs.retain(|&j, r| ssn.has_job(j) && ssn.job(j).revision == *r);
        }
    }

    /// True if job `j` was found barred at its current revision.
    pub(crate) fn known(&self, ssn: &Session<'_>, j: JobId) -> bool {
        self.known_at(ssn, j, None)
    }

    /// [`Barred::known`] given the job's current revision when the caller has
    /// it (the World's list of admitted jobs carries a copy), else read from
    /// the job.
    pub(crate) fn known_at(&self, ssn: &Session<'_>, j: JobId, rev: Option<u64>) -> bool {
        self.jobs
            .get(&j)
            .is_some_and(|&r| r == rev.unwrap_or_else(|| ssn.job(j).revision) || ssn.wrong_barred_for_tests)
    }

    /// Records what a walk of job `j`'s pods found.
    pub(crate) fn record(&mut self, ssn: &Session<'_>, j: JobId, barred: bool) {
        if barred {
            self.jobs.insert(j, ssn.job(j).revision);
        } else {
            self.jobs.remove(&j);
        }
    }
}
