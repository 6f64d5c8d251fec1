//! `cdp` (Volcano's `plugins/cdp`, cooldown protection): a pod with a cooldown
//! (`volcano.sh/cooldown-time`, a label or annotation, a Go duration) is no
//! preemption or reclaim victim until that long after it started. No arguments.
//!
//! As in Volcano, the plugin answers both `preemptable` and `reclaimable` with
//! the candidates that are not protected, in their order; a tier whose answer is
//! empty offers no victim (later tiers may). A pod protected at `t` is no longer
//! protected at `started + cooldown` (Volcano's test is `scheduled + cooldown >
//! now`). Volcano runs a session every second; lahar's sessions follow events, so
//! the plugin asks for a session when the earliest cooldown of a running pod ends
//! (each session walks the jobs to find it, as `sla` does).

use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::model::job::{PodId, PodStatus};
use lahar_core::session::Session;
use lahar_core::util::time::SimTime;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("cdp", |_| Box::new(Cdp));

/// The plugin.
#[derive(Debug, Default)]
pub struct Cdp;

/// When `pod`'s cooldown ends, if it is still within it.
pub fn protected_until(ssn: &Session<'_>, pod: PodId) -> Option<SimTime> {
    let p = ssn.pod(pod);
    let task = &ssn.job(p.job).spec.tasks[p.task as usize];
    let end = p.started.plus(task.hints.as_deref()?.cooldown?);
    (end > ssn.now()).then_some(end)
}

fn unprotected(ssn: &Session<'_>, candidates: &[PodId]) -> Vec<PodId> {
    candidates.iter().copied().filter(|&c| protected_until(ssn, c).is_none()).collect()
}

impl Plugin for Cdp {
    fn name(&self) -> &'static str {
        "cdp"
    }
    fn hooks(&self) -> Hooks {
        Hooks::PREEMPTABLE.and(Hooks::RECLAIMABLE).and(Hooks::RECLAIM_IGNORES_RECLAIMER)
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        let cooled = |j| ssn.job(j).spec.tasks.iter().any(|t| t.hints.as_deref().is_some_and(|h| h.cooldown.is_some()));
        let next = ssn
            .jobs()
            .filter(|&j| cooled(j))
            .flat_map(|j| ssn.job(j).pods.iter().copied())
            .filter(|&p| ssn.pod(p).status == PodStatus::Running)
            .filter_map(|p| protected_until(ssn, p))
            .min();
        if let Some(t) = next {
            ssn.request_wakeup(t);
        }
    }
    fn preemptable(&self, ssn: &Session<'_>, _: PodId, candidates: &[PodId]) -> Option<Vec<PodId>> {
        Some(unprotected(ssn, candidates))
    }
    fn reclaimable(&self, ssn: &Session<'_>, _: PodId, candidates: &[PodId]) -> Option<Vec<PodId>> {
        Some(unprotected(ssn, candidates))
    }
}
