//! `sla`: jobs that have waited longer than `sla-waiting-time` (a Go duration:
//! the job's PodGroup annotation, else the plugin's argument) are admitted and
//! treated as pipelined regardless of later tiers' rejections, and jobs with a
//! waiting time go first in job order, by deadline. lahar asks for a session at the moment the next job
//! becomes overdue so the effect is not delayed until some other event.

use super::super::args::{ArgSpec, ArgType, Args};
use super::super::plugin::{Hooks, Plugin, PluginSpec, Vote};
use lahar_core::model::job::{JobId, PodGroupPhase};
use lahar_core::session::Session;
use lahar_core::util::time::SimTime;
use lahar_core::util::time::parse_go_duration;
use std::cmp::Ordering;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("sla", |pc| Box::new(Sla::new(&pc.args))).args(&[ArgSpec::new(
    "sla-waiting-time",
    ArgType::Duration,
    "",
    "the longest a job should wait",
)]);

/// The sla plugin.
pub struct Sla {
    wait_us: Option<u64>,
}

impl Sla {
    /// Reads `sla-waiting-time`.
    pub fn new(args: &Args) -> Self {
        Sla { wait_us: args.str("sla-waiting-time").and_then(parse_go_duration) }
    }
    /// Job `j`'s waiting time: its own (its PodGroup's annotation), else the
    /// plugin's (`readJobWaitingTime`).
    fn wait(&self, ssn: &Session<'_>, j: JobId) -> Option<u64> {
        ssn.job(j).spec.sla_waiting.map(|d| d.micros()).or(self.wait_us)
    }
    fn overdue(&self, ssn: &Session<'_>, j: JobId) -> bool {
        self.wait(ssn, j).is_some_and(|w| ssn.now().micros() >= ssn.job(j).pg_created.micros() + w)
    }
    /// True if some job may have a waiting time.
    fn active(&self, ssn: &Session<'_>) -> bool {
        self.wait_us.is_some() || ssn.any_sla_waiting()
    }
}

impl Plugin for Sla {
    fn name(&self) -> &'static str {
        "sla"
    }
    fn hooks(&self) -> Hooks {
        Hooks::JOB_ORDER.and(Hooks::ENQUEUE_BY_JOB)
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        if !self.active(ssn) {
            return;
        }
        let now = ssn.now();
        let next = ssn
            .jobs()
            .filter(|&j| ssn.job(j).pg_phase == PodGroupPhase::Pending || ssn.job(j).ready_count() == 0)
            .filter_map(|j| self.wait(ssn, j).map(|w| SimTime(ssn.job(j).pg_created.micros() + w)))
            .filter(|&t| t > now)
            .min();
        if let Some(t) = next {
            ssn.request_wakeup(t);
        }
    }
    /// Jobs with a waiting time first, by deadline (creation + waiting time).
    fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Option<Ordering> {
        if !self.active(ssn) {
            return None;
        }
        let deadline = |j: JobId| self.wait(ssn, j).map(|w| ssn.job(j).pg_created.micros() + w);
        Some(match (deadline(l), deadline(r)) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(a), Some(b)) => a.cmp(&b),
        })
    }
    fn job_enqueueable(&self, ssn: &Session<'_>, j: JobId) -> Option<Vote> {
        Some(if self.overdue(ssn, j) { 1 } else { 0 })
    }
    fn job_pipelined(&self, ssn: &Session<'_>, j: JobId) -> Option<Vote> {
        Some(if self.overdue(ssn, j) { 1 } else { 0 })
    }
}
