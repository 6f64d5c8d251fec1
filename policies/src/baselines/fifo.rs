//! `fifo`: strict first-in-first-out with gang scheduling.
//!
//! Rules, in each session:
//! 1. Jobs with Pending pods are taken in creation order (submit time, then job id).
//! 2. Each job reached has its PodGroup admitted (Pending → Inqueue); jobs behind a
//!    blocked head stay Pending.
//! 3. The job's Pending pods are placed in task order, each on the first node (in node
//!    order) whose idle resources and labels fit it, in one statement. The statement is
//!    committed if at least `minAvailable` pods are then placed or running (all or
//!    nothing); otherwise it is discarded.
//! 4. The first job whose gang cannot be placed ends the session: no later job starts
//!    before it, even one that would fit (head-of-line blocking). A job whose gang
//!    already runs and only has extra (elastic) pods left never blocks.
//!
//! Nothing is preempted. A gang larger than the cluster's free capacity at every
//! instant (for instance one needing more than the cluster) blocks the queue for ever.
//!
//! Decisions are those of `gang-fifo-strict`; `fifo` is the research-baseline name,
//! with rules pinned by its own tests, so a baseline family (`fifo`, `sjf`,
//! `easy-backfill`, `tiresias`) shares one placement rule.

use super::gang::{self, Mode};
use lahar_core::model::job::JobId;
use lahar_core::session::{Scheduler, Session};

/// Strict FIFO with gang all-or-nothing placement and head-of-line blocking.
#[derive(Debug, Clone, Default)]
pub struct Fifo;

impl Fifo {
    /// A scheduler.
    pub fn new() -> Self {
        Fifo
    }
}

impl Scheduler for Fifo {
    fn name(&self) -> &str {
        "fifo"
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        ssn.set_action("allocate");
        let jobs: Vec<JobId> = ssn.jobs_with_pending().filter(|&j| gang::eligible(ssn, j)).collect();
        for j in jobs {
            gang::admit(ssn, j, "admitted in FIFO order");
            match gang::place_gang_first_fit(ssn, j, Mode::Allocate) {
                Some(stmt) => ssn.commit(stmt),
                None if gang::is_whole(ssn.job(j)) => {}
                None => break,
            }
        }
    }
}
