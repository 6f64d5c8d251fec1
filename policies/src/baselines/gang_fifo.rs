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

use super::gang::{self, Mode};
use lahar_core::cluster::NodeId;
use lahar_core::job::{JobId, PodGroupPhase, PodId};
use lahar_core::resource::Resources;
use lahar_core::session::{Scheduler, Session};

/// Gang-aware FIFO, first-fit.
#[derive(Debug, Clone)]
pub struct GangFifo {
    head_of_line_blocking: bool,
    failed: Vec<(Resources, u32)>,
}

impl GangFifo {
    /// A scheduler; `head_of_line_blocking` makes it strict FIFO.
    pub fn new(head_of_line_blocking: bool) -> Self {
        GangFifo { head_of_line_blocking, failed: Vec::new() }
    }

    /// First node, in node order, whose idle resources and labels fit the pod.
    fn first_fit(ssn: &Session<'_>, pod: PodId) -> Option<NodeId> {
        let req = ssn.pod(pod).req;
        ssn.fitting_nodes(&req).find(|&n| ssn.fits_idle(pod, n) && ssn.selector_matches(pod, n))
    }

    /// Tries to place the job's pending pods; returns whether the gang is whole.
    fn place(&mut self, ssn: &mut Session<'_>, j: JobId) -> bool {
        let job = ssn.job(j);
        let min = job.spec.min_available.max(1);
        let ready = job.ready_count();
        let needed = min.saturating_sub(ready);
        // Jobs of one task without a node selector have a single pod shape. If a job
        // of the same shape needing no more pods already failed in this session, this
        // one cannot fit either: skip it before any work (the backlog is re-visited
        // by every session).
        let shape = match job.spec.tasks.as_slice() {
            [t] if !t.has_label_filter() && !ssn.cluster().has_taints() => Some(t.requests),
            _ => None,
        };
        if let Some(shape) = shape
            && needed > 0
            && self.failed.iter().any(|&(r, n)| r == shape && needed >= n)
        {
            for p in ssn.explained_pods(j) {
                let why = "skipped: a job of the same pod shape needing no more pods found no room in this session";
                ssn.explain(p, None, "gang", Some(false), why, None);
            }
            return false;
        }
        let pending = ssn.pending_pods(j);
        let mut tried: Vec<PodId> = Vec::new();
        let mut stmt = ssn.statement();
        let mut placed = 0u32;
        let total = pending.len() as u32;
        for (i, p) in pending.into_iter().enumerate() {
            let choice = Self::first_fit(ssn, p);
            if ssn.explaining(p) {
                gang::explain_fit(ssn, p, Mode::Allocate, choice);
                tried.push(p);
            }
            match choice {
                Some(n) => {
                    ssn.allocate(&mut stmt, p, n).expect("first_fit checked idle resources");
                    placed += 1;
                }
                // Stop once the pods left cannot complete the gang.
                None if placed + (total - i as u32 - 1) < needed => break,
                None => {}
            }
        }
        if ready + placed >= min && placed > 0 {
            ssn.commit(stmt);
            true
        } else {
            for p in tried {
                let why =
                    format!("gang not satisfied: {ready} ready + {placed} placed of minAvailable {min}; discarded");
                ssn.explain(p, None, "gang", Some(false), why, None);
            }
            ssn.discard(stmt);
            if let Some(shape) = shape {
                self.failed.push((shape, needed));
            }
            ready >= min
        }
    }
}

impl Scheduler for GangFifo {
    fn name(&self) -> &str {
        if self.head_of_line_blocking { "gang-fifo-strict" } else { "gang-fifo" }
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        self.failed.clear();
        ssn.set_action("allocate");
        let jobs: Vec<JobId> = ssn.jobs_with_pending().collect();
        for (i, &j) in jobs.iter().enumerate() {
            if ssn.job(j).pg_phase == PodGroupPhase::Pending {
                ssn.set_pod_group_phase(j, PodGroupPhase::Inqueue, "admitted in FIFO order");
            }
            let whole = self.place(ssn, j);
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
