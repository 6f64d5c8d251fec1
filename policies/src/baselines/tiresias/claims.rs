//! Tiresias's held claims: a job pipelined onto resources being released (its
//! victims' or others') keeps that room until its pods bind there, as the
//! paper's scheduler hands a preemptor the GPUs it freed.
//!
//! A claim is made when this scheduler commits a pipeline (with or without
//! evictions): the pods and the nodes they were pipelined onto. In each later
//! session, before the queue walk, the claims are taken in the order they were
//! made: a claim whose pods all fit their nodes' idle resources binds there;
//! otherwise its room is held for the session ([`Session::hold`]), so no other
//! placement of the session takes it (placements look at future-idle room, on
//! idle resources too), and the job waits outside the walk. A claim whose room
//! its nodes no longer have (a node lost capacity), whose room is idle while its
//! pods still do not bind (their GPU devices), or whose job or pods changed, is
//! dropped, and its job is walked again like any other.

use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::resource::Resources;
use lahar_core::session::Session;
use std::collections::BTreeSet;

/// One job's claim: its pipelined pods and their nodes.
#[derive(Debug, Clone)]
struct Claim {
    job: JobId,
    pods: Vec<(PodId, NodeId)>,
}

/// The claims held, oldest first.
#[derive(Debug, Clone, Default)]
pub(super) struct Claims {
    list: Vec<Claim>,
    /// The jobs of `list`.
    jobs: BTreeSet<JobId>,
}

impl Claims {
    /// A claim for `job`'s pods placed by a pipeline being committed (`pods`:
    /// what [`Session::placements`] lists).
    pub(super) fn make(&mut self, job: JobId, pods: Vec<(PodId, NodeId)>) {
        if !pods.is_empty() && self.jobs.insert(job) {
            self.list.push(Claim { job, pods });
        }
    }

    /// True if `j` holds a claim.
    pub(super) fn holds(&self, j: JobId) -> bool {
        self.jobs.contains(&j)
    }

    /// At a session's start, in the order the claims were made: binds each claim
    /// whose pods fit their nodes' idle resources (committed, action `allocate`),
    /// holds the room of the others, drops the ones that cannot be held or whose
    /// room is idle while its pods still do not bind (GPU devices). Returns the
    /// jobs whose claims bound.
    pub(super) fn open(&mut self, ssn: &mut Session<'_>) -> Vec<JobId> {
        let mut bound = Vec::new();
        self.jobs.clear();
        for c in std::mem::take(&mut self.list) {
            if !Self::intact(ssn, &c) {
                continue;
            }
            let per_node = Self::per_node(ssn, &c);
            // The pods can bind only where their requests, summed per node, fit
            // the node's idle resources (each allocation takes from them); the
            // exhaustive mode tries anyway. (A deliberately wrong check, in
            // tests, asks for the room twice.)
            let twice = ssn.planted.wrong_bind_check;
            let idle =
                per_node.iter().all(|(n, r)| (*r + if twice { *r } else { Resources::ZERO }).fits_in(&ssn.idle(*n)));
            if idle || ssn.is_exhaustive() {
                let mut bind = ssn.statement();
                if c.pods.iter().all(|&(p, n)| ssn.allocate(&mut bind, p, n).is_ok()) {
                    ssn.commit(bind);
                    bound.push(c.job);
                    continue;
                }
                ssn.discard(bind);
            }
            // The room is idle and the pods still do not bind (their GPU
            // devices): waiting would not help; the job is walked again.
            if !idle && Self::hold(ssn, per_node) {
                self.jobs.insert(c.job);
                self.list.push(c);
            }
        }
        bound
    }

    /// The claim's requests summed per node, in the order of its pods.
    fn per_node(ssn: &Session<'_>, c: &Claim) -> Vec<(NodeId, Resources)> {
        let mut per_node: Vec<(NodeId, Resources)> = Vec::with_capacity(c.pods.len());
        for &(p, n) in &c.pods {
            let req = ssn.pod(p).req;
            match per_node.iter_mut().find(|(m, _)| *m == n) {
                Some((_, r)) => *r += req,
                None => per_node.push((n, req)),
            }
        }
        per_node
    }

    /// Holds a claim's room on each of its nodes; all or nothing.
    fn hold(ssn: &mut Session<'_>, per_node: Vec<(NodeId, Resources)>) -> bool {
        // Checked first: a hold is given back only when the session ends.
        if !per_node.iter().all(|(n, r)| r.fits_in(&ssn.future_idle(*n))) {
            return false;
        }
        per_node.into_iter().all(|(n, r)| ssn.hold(n, r))
    }

    /// The claim's job is still active and its claimed pods still Pending.
    fn intact(ssn: &Session<'_>, c: &Claim) -> bool {
        ssn.is_active(c.job)
            && c.pods
                .iter()
                .all(|&(p, _)| ssn.has_pod(p) && ssn.pod(p).job == c.job && ssn.pod(p).status == PodStatus::Pending)
    }
}
