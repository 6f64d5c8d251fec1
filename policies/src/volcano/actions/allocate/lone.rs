//! The lone-node skip: a step certain to be discarded whose only trace would
//! be where the next node search starts is not run; the start is moved there.
//!
//! A job's first step of the session (taken in whole, over all nodes: its
//! turn is [`Tasks::Later`] with the request of its only task with pending
//! pods that request resources), where gang's votes bind, with no pod gated
//! or nominated, and with one node only, `m`, whose future-idle room holds a
//! pod of that request. The step would search for each pod in task order:
//! each search that finds room finds `m` alone, examines it last and leaves
//! the start at `m + 1`; a search that finds no room examines no node and
//! leaves the start where it was. A single candidate is neither scored nor
//! drawn for, so nothing is taken from the session's stream. The step places
//! at most the copies of the request `m` holds; if its gang's pods placed,
//! pipelined or pending BestEffort plus those stay below minAvailable, it is
//! neither ready nor pipelined and is discarded, the session as it found it
//! but the start. Its first pod is searched for (the queue's quota admits it:
//! otherwise the quota rule, asked first, has skipped the step), so the start
//! ends at `m + 1`.
//!
//! On a busy cluster about half the steps that fail are of this kind (P′ at
//! 100,000 jobs: 37,397 of 69,599), a gang waiting for room that one node has
//! only part of; run, they placed and undid pods by the million over a
//! month-long trace. The others have room on two or three nodes, where scores
//! and tie-break draws decide which node keeps the last copy: they are run.
//!
//! Those with room on more nodes are run, but where the copies of the request
//! that every node's future-idle room holds, placed, still leave the gang below
//! minAvailable (`certain_discard`), the step's placements are unfiled
//! ([`Session::unfiled_statement`]): the nodes, queues and the job's counts
//! move as the step reads them, the World's lists and journals do not, and
//! the discard moves them back the same way.
//!
//! Outside exhaustive mode only: the exhaustive walk runs every step, and the
//! equivalence tests compare the two; with
//! [`lahar_core::planted::PlantedBugs::audit_lone_node`] the step is run all
//! the same and checked against the skip's claim.

use super::super::super::framework::Framework;
use super::super::super::plugins::pending_best_effort;
use super::line::Tasks;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodStatus};
use lahar_core::session::Session;

/// The node `m` (see the module) when job `j`'s step, its turn `turn`, is
/// certain to be discarded with the search start left at `m + 1`; `None`
/// when the step must be run. Not asked for jobs `--explain` watches.
pub(super) fn lone_node(fw: &Framework, ssn: &Session<'_>, j: JobId, turn: &Tasks) -> Option<NodeId> {
    let &Tasks::Later(Some(shape), _) = turn else { return None };
    let (need, pending) = gang_short(fw, ssn, j)?;
    let req = ssn.shape(shape);
    let mut fitting = ssn.fitting_nodes(req);
    let m = fitting.next()?;
    if fitting.next().is_some() {
        return None;
    }
    let copies = ssn.future_idle(m).copies_of(req);
    if pending.min(copies) >= need {
        return None;
    }
    let job = ssn.job(j);
    let nominated = job.pods.iter().any(|&p| ssn.pod(p).status == PodStatus::Pending && ssn.pod(p).nominated.is_some());
    (!nominated).then_some(m)
}

/// True when job `j`'s step, its turn [`Tasks::Later`] with request `shape`
/// (of its only task with pending pods that request resources), is certain to
/// be discarded: gang's votes bind, no pod is gated, and the pods the step
/// could place — at most the copies of the request that the nodes' future-idle
/// room holds — with the gang's placed, pipelined and pending BestEffort pods
/// stay below minAvailable, as for the lone node above but over any number of
/// nodes. Such a step is run, since its searches and draws leave their trace,
/// but its placements are unfiled ([`Session::unfiled_statement`]).
pub(super) fn certain_discard(fw: &Framework, ssn: &Session<'_>, j: JobId, shape: u32) -> bool {
    let Some((need, pending)) = gang_short(fw, ssn, j) else { return false };
    let req = ssn.shape(shape);
    // Counted here rather than by `Session::slots_up_to`, whose deliberately
    // wrong count (`wrong_slots`) would call a step that ends ready certain to
    // be discarded, and its test would meet the commit guard instead of the
    // difference it looks for.
    let mut copies = 0u32;
    for n in ssn.fitting_nodes(req) {
        copies = copies.saturating_add(ssn.future_idle(n).copies_of(req));
        if copies >= need {
            return false;
        }
    }
    pending.min(copies) < need
}

/// Where gang's votes bind, outside exhaustive mode and with no pod of job
/// `j` gated, and its placed, pipelined and pending BestEffort pods are below
/// minAvailable: how many more pods it needs, and its pending pods that
/// request resources (those of its one such task, for a [`Tasks::Later`]
/// turn). `None` otherwise.
fn gang_short(fw: &Framework, ssn: &Session<'_>, j: JobId) -> Option<(u32, u32)> {
    if ssn.is_exhaustive() || !fw.gang_binds() || ssn.gating(j).is_some() {
        return None;
    }
    let job = ssn.job(j);
    let min = job.spec.min_available;
    let best_effort = pending_best_effort(ssn, j);
    let base = job.ready_count() + job.waiting_count() + best_effort;
    (base < min).then(|| (min - base, job.count(PodStatus::Pending) - best_effort))
}
