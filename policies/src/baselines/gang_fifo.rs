//! FIFO with gang scheduling and first-fit node choice.
//!
//! Jobs are considered in creation order (submit time, then id). For each job the
//! scheduler admits its PodGroup (Pending → Inqueue, there is no separate enqueue
//! step), then places its Pending pods one by one on the first node, in node order,
//! whose idle resources and labels fit. If at least `minAvailable` pods of the job
//! are then placed (counting pods already running), the statement is committed;
//! otherwise it is discarded whole, so a gang never runs partially.
//!
//! With `head_of_line_blocking`, the first job that cannot start stops the session
//! (strict FIFO); without it, later jobs may start around it.

use super::gang::{self, Misses};
use lahar_core::model::job::{JobId, PodGroupPhase};
use lahar_core::session::{Scheduler, Session};

/// Gang-aware FIFO, first-fit.
#[derive(Debug, Clone)]
pub struct GangFifo {
    head_of_line_blocking: bool,
    misses: Misses,
}

impl GangFifo {
    /// A scheduler; `head_of_line_blocking` makes it strict FIFO.
    pub fn new(head_of_line_blocking: bool) -> Self {
        GangFifo { head_of_line_blocking, misses: Misses::default() }
    }
}

impl Scheduler for GangFifo {
    fn name(&self) -> &str {
        if self.head_of_line_blocking { "gang-fifo-strict" } else { "gang-fifo" }
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        self.misses.clear();
        ssn.set_action("allocate");
        let jobs: Vec<JobId> = ssn.jobs_with_pending().filter(|&j| gang::eligible(ssn, j)).collect();
        for (i, &j) in jobs.iter().enumerate() {
            if ssn.job(j).pg_phase == PodGroupPhase::Pending {
                ssn.set_pod_group_phase(j, PodGroupPhase::Inqueue, "admitted in FIFO order");
            }
            // The job's gang stands if it was placed, or already was whole.
            let whole = match gang::allocate_gang(ssn, j, &mut self.misses) {
                Some(stmt) => {
                    ssn.commit(stmt);
                    true
                }
                None => gang::is_whole(ssn.job(j)),
            };
            if !whole && self.head_of_line_blocking {
                if ssn.explaining_any() {
                    let why = format!("not tried: job {} at the head of the line does not fit", ssn.job(j).spec.name);
                    for &later in &jobs[i + 1..] {
                        for p in ssn.explained_pods(later) {
                            ssn.explain(p, None, "fifo", Some(false), why.as_str(), None);
                        }
                    }
                }
                break;
            }
        }
    }
}
