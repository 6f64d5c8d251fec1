//! `sjf`: shortest job first by run time, with gang scheduling.
//!
//! Rules, in each session:
//! 1. Jobs with Pending pods are ordered by their run time, then creation order
//!    (submit time, then job id). The run time is the oracle's (`JobSpec.duration`,
//!    the ideal run time of the whole job, not what is left of it) or, with
//!    `runTime: estimate`, the user's estimate where the job has one
//!    ([`RunTime`](super::RunTime)).
//! 2. Each job has its PodGroup admitted (Pending → Inqueue), then its Pending pods are
//!    placed first-fit in node order on idle resources, all or nothing (committed only
//!    if at least `minAvailable` pods are then placed or running).
//! 3. A job that does not fit is skipped; later (longer) jobs may start.
//!
//! Non-preemptive: a running job is never stopped for a shorter one. Long jobs can
//! starve: while shorter jobs keep arriving and use part of the cluster, a job that
//! needs more than the part left free waits, however long it has waited.

use super::gang::{self, Misses};
use lahar_core::model::job::JobId;
use lahar_core::session::{Scheduler, Session};

/// Shortest job first (oracle or estimate), gang, non-preemptive, skipping jobs that do not fit.
#[derive(Debug, Clone, Default)]
pub struct Sjf {
    misses: Misses,
    run_time: super::RunTime,
}

impl Sjf {
    /// A scheduler ordering by the true run time.
    pub fn new() -> Self {
        Sjf::default()
    }

    /// A scheduler ordering by `run_time`.
    pub fn with_run_time(run_time: super::RunTime) -> Self {
        Sjf { run_time, ..Sjf::default() }
    }
}

impl Scheduler for Sjf {
    fn name(&self) -> &str {
        "sjf"
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        ssn.set_action("allocate");
        self.misses.clear();
        let mut jobs: Vec<JobId> = ssn.jobs_with_pending().filter(|&j| gang::eligible(ssn, j)).collect();
        // Stable sort: equal durations keep creation order (submit time, then id).
        jobs.sort_by_key(|&j| self.run_time.of(&ssn.job(j).spec));
        for j in jobs {
            gang::admit(ssn, j, "admitted in shortest-job-first order");
            if let Some(stmt) = gang::allocate_gang(ssn, j, &mut self.misses) {
                ssn.commit(stmt);
            }
        }
    }
}
