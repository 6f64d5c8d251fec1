//! `sla`: jobs that have waited longer than `sla-waiting-time` (a Go duration)
//! are admitted and treated as pipelined regardless of later tiers' rejections,
//! and go first in job order. lahar asks for a session at the moment the next job
//! becomes overdue so the effect is not delayed until some other event.

use super::super::conf::{Args, parse_go_duration};
use super::super::framework::{Plugin, Vote};
use lahar_core::job::{JobId, PodGroupPhase};
use lahar_core::session::Session;
use lahar_core::time::SimTime;
use std::cmp::Ordering;

/// The sla plugin.
pub struct Sla {
    wait_us: Option<u64>,
}

impl Sla {
    /// Reads `sla-waiting-time`.
    pub fn new(args: &Args) -> Self {
        Sla { wait_us: args.str("sla-waiting-time").and_then(parse_go_duration) }
    }
    fn overdue(&self, ssn: &Session<'_>, j: JobId) -> bool {
        self.wait_us.is_some_and(|w| ssn.now().micros() >= ssn.job(j).spec.submit.micros() + w)
    }
}

impl Plugin for Sla {
    fn name(&self) -> &'static str {
        "sla"
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        let Some(w) = self.wait_us else { return };
        let now = ssn.now();
        let next = ssn
            .jobs()
            .filter(|&j| ssn.job(j).pg_phase == PodGroupPhase::Pending || ssn.job(j).ready_count() == 0)
            .map(|j| SimTime(ssn.job(j).spec.submit.micros() + w))
            .filter(|&t| t > now)
            .min();
        if let Some(t) = next {
            ssn.request_wakeup(t);
        }
    }
    fn registers_job_order(&self) -> bool {
        true
    }
    fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Option<Ordering> {
        // Every job has the same waiting time here: earlier deadline = earlier submit.
        self.wait_us.map(|_| ssn.job(l).spec.submit.cmp(&ssn.job(r).spec.submit))
    }
    fn enqueue_vote_by_shape(&self) -> bool {
        false
    }
    fn job_enqueueable(&self, ssn: &Session<'_>, j: JobId) -> Option<Vote> {
        Some(if self.overdue(ssn, j) { 1 } else { 0 })
    }
    fn job_pipelined(&self, ssn: &Session<'_>, j: JobId) -> Option<Vote> {
        Some(if self.overdue(ssn, j) { 1 } else { 0 })
    }
}
