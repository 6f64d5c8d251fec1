//! Helpers shared by the gang baselines (`fifo`, `sjf`, `tiresias`, `easy-backfill`):
//! PodGroup admission, all-or-nothing first-fit gang placement, and a job's work done
//! up to the session's instant.

use lahar_core::cluster::NodeId;
use lahar_core::explain::{GPU_DEVICES_FULL, insufficient};
use lahar_core::job::{JobId, PodGroupPhase, PodId};
use lahar_core::session::{Session, Statement};
use lahar_core::world::Job;

/// Where a gang's pods go: on idle resources (`allocate`) or on future-idle ones
/// (`pipeline`, resources that evicted pods will free).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `Session::allocate` on idle resources.
    Allocate,
    /// `Session::pipeline` on future-idle resources.
    Pipeline,
}

/// Admits the job's PodGroup (Pending → Inqueue); there is no separate enqueue step.
pub(crate) fn admit(ssn: &mut Session<'_>, j: JobId, reason: &'static str) {
    if ssn.job(j).pg_phase == PodGroupPhase::Pending {
        ssn.set_pod_group_phase(j, PodGroupPhase::Inqueue, reason);
    }
}

/// The job's gang is satisfied: at least `minAvailable` (≥ 1) pods Allocated, Running
/// or Succeeded.
pub(crate) fn is_whole(job: &Job) -> bool {
    job.ready_count() >= job.spec.min_available.max(1)
}

/// First node, in node order, whose resources (idle for `Allocate`, future idle for
/// `Pipeline`) and labels fit the pod.
pub(crate) fn first_fit(ssn: &Session<'_>, pod: PodId, mode: Mode) -> Option<NodeId> {
    let req = ssn.pod(pod).req;
    ssn.fitting_nodes(&req).find(|&n| fits(ssn, pod, n, mode))
}

/// True if the pod fits the node's resources for `mode` and the node's labels.
pub(crate) fn fits(ssn: &Session<'_>, pod: PodId, n: NodeId, mode: Mode) -> bool {
    let req = ssn.pod(pod).req;
    let free = match mode {
        Mode::Allocate => ssn.idle(n),
        Mode::Pipeline => ssn.future_idle(n),
    };
    req.fits_in(&free) && ssn.gpu_fits(pod, n) && ssn.selector_matches(pod, n)
}

/// Places the job's Pending pods in task order, each on the node `choose` returns
/// (`None`: the pod is left Pending), in one statement. Returns the open statement if
/// at least one pod was placed and the gang is then satisfied (ready + placed ≥
/// `minAvailable`); otherwise discards it and returns `None`. Stops early once the
/// pods left cannot complete the gang. `choose` must return a node that fits the pod
/// for `mode`.
pub(crate) fn place_gang(
    ssn: &mut Session<'_>,
    j: JobId,
    mode: Mode,
    mut choose: impl FnMut(&Session<'_>, PodId) -> Option<NodeId>,
) -> Option<Statement> {
    let job = ssn.job(j);
    let min = job.spec.min_available.max(1);
    let ready = job.ready_count();
    let needed = min.saturating_sub(ready);
    let pending = ssn.pending_pods(j);
    let total = pending.len() as u32;
    let mut stmt = ssn.statement();
    let mut placed = 0u32;
    let mut tried: Vec<PodId> = Vec::new();
    for (i, p) in pending.into_iter().enumerate() {
        let choice = choose(ssn, p);
        if ssn.explaining(p) {
            explain_fit(ssn, p, mode, choice);
            tried.push(p);
        }
        match choice {
            Some(n) => {
                let ok = match mode {
                    Mode::Allocate => ssn.allocate(&mut stmt, p, n),
                    Mode::Pipeline => ssn.pipeline(&mut stmt, p, n),
                };
                if ok.is_ok() {
                    placed += 1;
                }
            }
            None if placed + (total - i as u32 - 1) < needed => break,
            None => {}
        }
    }
    if placed > 0 && ready + placed >= min {
        Some(stmt)
    } else {
        for p in tried {
            let why = format!("gang not satisfied: {ready} ready + {placed} placed of minAvailable {min}; discarded");
            ssn.explain(p, None, "gang", Some(false), why, None);
        }
        ssn.discard(stmt);
        None
    }
}

/// `--explain` rows for a watched pod: each node's fit and the node `choice` the
/// policy made.
pub(crate) fn explain_fit(ssn: &mut Session<'_>, p: PodId, mode: Mode, choice: Option<NodeId>) {
    explain_nodes(ssn, p, mode);
    match choice {
        Some(n) => ssn.explain(p, Some(n), "chosen", Some(true), "chosen by the policy's node order", None),
        None => ssn.explain(p, None, "chosen", Some(false), "no node fits", None),
    }
}

/// `--explain` rows for a watched pod: each node's fit (resources for `mode`, then
/// the node selector).
pub(crate) fn explain_nodes(ssn: &mut Session<'_>, p: PodId, mode: Mode) {
    let req = ssn.pod(p).req;
    let mut rows: Vec<(NodeId, &'static str, bool, String)> = Vec::new();
    for n in (0..ssn.node_count() as u32).map(NodeId) {
        let free = match mode {
            Mode::Allocate => ssn.idle(n),
            Mode::Pipeline => ssn.future_idle(n),
        };
        if let Some(r) = insufficient(&ssn.cluster().resource_names, &req, &free) {
            rows.push((n, "resources", false, r));
        } else if !ssn.gpu_fits(p, n) {
            rows.push((n, "gpu-devices", false, GPU_DEVICES_FULL.to_string()));
        } else if !ssn.selector_matches(p, n) {
            rows.push((n, "selector", false, "node(s) didn't match Pod's node selector".to_string()));
        } else {
            rows.push((n, "fit", true, String::new()));
        }
    }
    for (n, plugin, passed, reason) in rows {
        ssn.explain(p, Some(n), plugin, Some(passed), reason, None);
    }
}

/// [`place_gang`] with first-fit node choice.
pub(crate) fn place_gang_first_fit(ssn: &mut Session<'_>, j: JobId, mode: Mode) -> Option<Statement> {
    place_gang(ssn, j, mode, |s, p| first_fit(s, p, mode))
}
