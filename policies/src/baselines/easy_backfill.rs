//! `easy-backfill`: Slurm-style EASY backfilling with gang scheduling.
//!
//! Rules, in each session:
//! 1. **FIFO pass.** Jobs with Pending pods are taken in creation order (submit time,
//!    then job id); each has its PodGroup admitted (Pending → Inqueue) and its Pending
//!    pods placed first-fit in node order on idle resources, all or nothing (committed
//!    only if at least `minAvailable` pods are then placed or running). The first job
//!    whose gang cannot be placed is the **head**; the FIFO pass stops there.
//! 2. **Reservation.** The head gets a reservation at the *shadow time*: the earliest
//!    instant at which its gang fits, predicted from the expected ends of what holds
//!    resources now (below). The reserved resources are, per node, what a first-fit
//!    placement of the head's Pending pods (task order, node order, resources and node
//!    selectors) takes at the shadow time. Per node, `spare` = resources free at the
//!    shadow time − reserved.
//! 3. **Backfill.** Every later job with Pending pods, in creation order, may start now
//!    (action `backfill`) if its gang fits now on idle resources (first-fit) and either
//!    - its expected end, `now + remaining work` at full speed, is at or before the
//!      shadow time (it is gone before the head needs anything), or
//!    - every pod it places on a node fits that node's `spare` (it uses no reserved
//!      resource); `spare` is then reduced by what it takes.
//!
//!    Otherwise it waits. Only the head holds a reservation (EASY, not conservative
//!    backfilling); nothing is preempted.
//!
//! **Resource model of the reservation**: per node and per resource dimension (CPU,
//! memory, GPUs, pod slots, extended resources), not a cluster-wide GPU count. The
//! prediction starts from each node's idle resources and adds back, at its expected
//! release time, every pod holding the node:
//! - a pod of a job whose gang is placed (at least `minAvailable` pods Allocated,
//!   Running or Succeeded) is released at the job's expected end, `now + (duration −
//!   work done) / speed`, with the job's current speed if it is progressing and full
//!   speed if it was just allocated (the oracle run time: `JobSpec.duration`);
//! - a Releasing (evicted) pod at the end of its grace period;
//! - a pod of a job whose gang is not placed is never released (its end is unknown).
//!
//! If the head cannot fit even once everything predictable is released, it gets no
//! reservation and later jobs are started whenever they fit. Predictions assume full
//! speed for jobs not yet running; a backfilled job slowed by its placement can
//! therefore delay the head, as a job exceeding its time limit would not in Slurm.
//! The reservation is recomputed in every session; if the head's actual first-fit
//! placement at the shadow time differs from the predicted one, it may start later.

use super::gang::{self, Mode};
use lahar_core::cluster::NodeId;
use lahar_core::job::{JobId, PodId, PodStatus};
use lahar_core::progress::{FULL_SPEED_PPM, remaining_at, wall_time};
use lahar_core::resource::{GPU, Resources};
use lahar_core::session::{Scheduler, Session};
use lahar_core::time::SimTime;
use std::collections::BTreeMap;

/// The head job's reservation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    /// The head job.
    pub job: JobId,
    /// Shadow time: when the head's gang is predicted to fit.
    pub at: SimTime,
    /// Per node (by node id): resources free at the shadow time and not reserved.
    pub spare: Vec<Resources>,
}

/// EASY backfilling: FIFO, one reservation for the head job, backfill around it.
#[derive(Debug, Clone, Default)]
pub struct EasyBackfill {
    last: Option<Reservation>,
}

impl EasyBackfill {
    /// A scheduler.
    pub fn new() -> Self {
        EasyBackfill::default()
    }

    /// The reservation made in the last session, if it had a head job that got one.
    pub fn last_reservation(&self) -> Option<&Reservation> {
        self.last.as_ref()
    }

    /// Expected end of the job if it runs from now on: its remaining work at its
    /// current speed if progressing, at full speed otherwise.
    fn expected_end(ssn: &Session<'_>, j: JobId) -> SimTime {
        let now = ssn.now();
        let job = ssn.job(j);
        let remaining = remaining_at(job, now);
        let speed = if job.is_progressing() { job.progress.speed_ppm } else { FULL_SPEED_PPM };
        SimTime(now.micros().saturating_add(wall_time(remaining, speed)))
    }

    /// The head's reservation: shadow time and spare resources per node.
    pub fn reservation(ssn: &Session<'_>, head: JobId) -> Option<Reservation> {
        let now = ssn.now();
        let nodes = ssn.node_count();
        let mut free: Vec<Resources> = (0..nodes).map(|n| ssn.idle(NodeId(n as u32))).collect();
        // Expected releases (time, node, resources).
        let mut releases: Vec<(SimTime, u32, Resources)> = Vec::new();
        let mut ends: BTreeMap<JobId, Option<SimTime>> = BTreeMap::new();
        for n in 0..nodes {
            let node = NodeId(n as u32);
            for &p in &ssn.node_state(node).pods {
                let pod = ssn.pod(p);
                let at = match pod.status {
                    PodStatus::Releasing => {
                        let grace = ssn.job(pod.job).spec.termination_grace;
                        Some(pod.evicted_at.map_or(now, |e| e.plus(grace)).max(now))
                    }
                    _ => *ends
                        .entry(pod.job)
                        .or_insert_with(|| gang::is_whole(ssn.job(pod.job)).then(|| Self::expected_end(ssn, pod.job))),
                };
                if let Some(at) = at {
                    releases.push((at, node.0, pod.req));
                }
            }
        }
        releases.sort_by_key(|&(t, n, _)| (t, n));

        let job = ssn.job(head);
        let needed = job.spec.min_available.max(1).saturating_sub(job.ready_count());
        let pending = ssn.pending_pods(head);
        if needed == 0 || (pending.len() as u32) < needed {
            return None;
        }
        // Cheap necessary condition before a placement attempt: enough free GPUs in
        // total for the `needed` smallest pods.
        let mut gpu_reqs: Vec<i64> = pending.iter().map(|&p| ssn.pod(p).req.get(GPU)).collect();
        gpu_reqs.sort_unstable();
        let min_gpus: i64 = gpu_reqs.iter().take(needed as usize).sum();
        let mut free_gpus: i64 = free.iter().map(|r| r.get(GPU)).sum();

        let mut i = 0;
        while i < releases.len() {
            let t = releases[i].0;
            while i < releases.len() && releases[i].0 == t {
                let (_, n, r) = releases[i];
                free[n as usize] += r;
                free_gpus += r.get(GPU);
                i += 1;
            }
            if free_gpus < min_gpus {
                continue;
            }
            if let Some(spare) = Self::simulate_placement(ssn, &pending, needed, &free) {
                return Some(Reservation { job: head, at: t, spare });
            }
        }
        None
    }

    /// First-fit of `pending` (task order) on `free`, until `needed` pods are placed;
    /// returns what is left per node, or `None` if the gang does not fit.
    fn simulate_placement(
        ssn: &Session<'_>,
        pending: &[PodId],
        needed: u32,
        free: &[Resources],
    ) -> Option<Vec<Resources>> {
        let mut left = free.to_vec();
        let mut placed = 0;
        for &p in pending {
            if placed >= needed {
                break;
            }
            let req = ssn.pod(p).req;
            let n = (0..left.len()).find(|&n| req.fits_in(&left[n]) && ssn.selector_matches(p, NodeId(n as u32)));
            if let Some(n) = n {
                left[n] -= req;
                placed += 1;
            }
        }
        (placed >= needed).then_some(left)
    }
}

impl Scheduler for EasyBackfill {
    fn name(&self) -> &str {
        "easy-backfill"
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        self.last = None;
        ssn.set_action("allocate");
        let jobs: Vec<JobId> = ssn.jobs_with_pending().collect();
        let mut head = None;
        for (i, &j) in jobs.iter().enumerate() {
            gang::admit(ssn, j, "admitted in FIFO order");
            match gang::place_gang_first_fit(ssn, j, Mode::Allocate) {
                Some(stmt) => ssn.commit(stmt),
                None if gang::is_whole(ssn.job(j)) => {}
                None => {
                    head = Some(i);
                    break;
                }
            }
        }
        let Some(h) = head else { return };
        let mut reservation = Self::reservation(ssn, jobs[h]);
        ssn.set_action("backfill");
        for &j in &jobs[h + 1..] {
            gang::admit(ssn, j, "admitted in FIFO order");
            let Some(res) = reservation.as_mut() else {
                if let Some(stmt) = gang::place_gang_first_fit(ssn, j, Mode::Allocate) {
                    ssn.commit(stmt);
                }
                continue;
            };
            let short = Self::expected_end(ssn, j) <= res.at;
            let mut spare = res.spare.clone();
            let placed = gang::place_gang(ssn, j, Mode::Allocate, |s, p| {
                let req = s.pod(p).req;
                let n = s
                    .fitting_nodes(&req)
                    .find(|&n| gang::fits(s, p, n, Mode::Allocate) && (short || req.fits_in(&spare[n.0 as usize])))?;
                if !short {
                    spare[n.0 as usize] -= req;
                }
                Some(n)
            });
            if let Some(stmt) = placed {
                ssn.commit(stmt);
                res.spare = spare;
            }
        }
        self.last = reservation;
    }
}
