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
//!    placement of the head's Pending pods (task order; resources and node selectors)
//!    takes at the shadow time: each pod on the first node whose capacity released
//!    by then (its free resources beyond what is idle now) holds it, else on the
//!    first whose free resources do, over the nodes that release something first,
//!    then the others, each in node order. The head takes released capacity before
//!    capacity idle now, on a node and across nodes, and the idle capacity stays for
//!    backfill (Mu'alem & Feitelson's `extra` processors). Per node, `spare` =
//!    resources free at the shadow time − reserved.
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

use super::gang::{self, Misses, Mode};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus};
use lahar_core::model::progress::{FULL_SPEED_PPM, wall_time};
use lahar_core::model::resource::{DIMS, PODS, Resources};
use lahar_core::session::{Scheduler, Session};
use lahar_core::util::time::SimTime;

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

/// A predicted release: `req` leaves `node` at `at`.
#[derive(Debug, Clone, Copy)]
struct Release {
    at: SimTime,
    node: u32,
    req: Resources,
}

/// EASY backfilling: FIFO, one reservation for the head job, backfill around it.
#[derive(Debug, Clone, Default)]
pub struct EasyBackfill {
    last: Option<Reservation>,
    misses: Misses,
    run_time: super::RunTime,
}

impl EasyBackfill {
    /// A scheduler planning with the true run times.
    pub fn new() -> Self {
        EasyBackfill::default()
    }

    /// A scheduler planning with `run_time`.
    pub fn with_run_time(run_time: super::RunTime) -> Self {
        EasyBackfill { run_time, ..EasyBackfill::default() }
    }

    /// The reservation made in the last session: `None` when it had no head job,
    /// the head could never fit, or no later job could fit the idle resources at
    /// all (the reservation is then not made).
    pub fn last_reservation(&self) -> Option<&Reservation> {
        self.last.as_ref()
    }

    /// Expected end of the job if it runs from now on: its remaining work (by the
    /// run time planned with, less the work done; none once past it) at its
    /// current speed if progressing, at full speed otherwise.
    fn expected_end(&self, ssn: &Session<'_>, j: JobId) -> SimTime {
        let now = ssn.now();
        let job = ssn.job(j);
        let remaining = match self.run_time {
            super::RunTime::Actual => job.remaining_at(now),
            rt => rt.of(&job.spec).micros().saturating_sub(job.work_done_at(now)),
        };
        let speed = if job.is_progressing() { job.progress.speed_ppm } else { FULL_SPEED_PPM };
        SimTime(now.micros().saturating_add(wall_time(remaining, speed)))
    }

    /// The head's reservation: shadow time and spare resources per node.
    pub fn reservation(&self, ssn: &Session<'_>, head: JobId) -> Option<Reservation> {
        let now = ssn.now();
        let nodes = ssn.node_count();
        let job = ssn.job(head);
        let needed = job.spec.min_available.max(1).saturating_sub(job.ready_count());
        let pending = ssn.pending_pods(head);
        if needed == 0 || (pending.len() as u32) < needed {
            return None;
        }
        let free: Vec<Resources> = (0..nodes).map(|n| ssn.idle(NodeId(n as u32))).collect();
        // A head that could not fit even the empty cluster never fits: no
        // release need be predicted (a gang larger than the cluster heads the
        // queue for good, and every session would predict them all again).
        if !ssn.is_exhaustive() {
            let whole: Vec<Resources> = (0..nodes).map(|n| ssn.node(NodeId(n as u32)).allocatable).collect();
            if !Self::may_fit(ssn, head, &pending, needed, &whole) {
                return None;
            }
        }
        let releases = self.releases(ssn, now);
        Self::shadow(ssn, head, &pending, needed, free, &releases)
    }

    /// The expected releases (time, node, resources), earliest first: each pod
    /// holding a node of a job whose gang is placed at the job's expected end,
    /// each Releasing pod at the end of its grace. Releases at one instant are all
    /// applied before the head is tried, so their order among themselves does not
    /// matter: the jobs are sorted by their ends (a few hundred), not their pods
    /// (thousands), and each job's pods follow in its order.
    fn releases(&self, ssn: &Session<'_>, now: SimTime) -> Vec<Release> {
        let mut leaving: Vec<Release> = Vec::new();
        let mut holders: Vec<JobId> = Vec::new();
        for n in 0..ssn.node_count() {
            let node = NodeId(n as u32);
            for &p in &ssn.node_state(node).pods {
                let pod = ssn.pod(p);
                if pod.status == PodStatus::Releasing {
                    let grace = ssn.job(pod.job).spec.termination_grace;
                    let at = pod.evicted_at.map_or(now, |e| e.plus(grace)).max(now);
                    leaving.push(Release { at, node: node.0, req: pod.req });
                } else if holders.last() != Some(&pod.job) {
                    holders.push(pod.job);
                }
            }
        }
        holders.sort_unstable();
        holders.dedup();
        let mut ends: Vec<(SimTime, JobId)> = holders
            .into_iter()
            .filter(|&j| gang::is_whole(ssn.job(j)))
            .map(|j| (self.expected_end(ssn, j), j))
            .collect();
        ends.sort_unstable();
        leaving.sort_unstable_by_key(|r| r.at);
        let mut out: Vec<Release> = Vec::with_capacity(leaving.len() + ends.len());
        let mut leaving = leaving.into_iter().peekable();
        for (at, j) in ends {
            while let Some(r) = leaving.next_if(|r| r.at <= at) {
                out.push(r);
            }
            for &p in &ssn.job(j).pods {
                let pod = ssn.pod(p);
                if let (PodStatus::Allocated | PodStatus::Running, Some(node)) = (pod.status, pod.node) {
                    out.push(Release { at, node: node.0, req: pod.req });
                }
            }
        }
        out.extend(leaving);
        out
    }

    /// The first release instant at which the head's first-fit placement of
    /// `needed` of its `pending` pods succeeds, and the spare resources then.
    ///
    /// The exhaustive rule (`--exhaustive`) places the pods over every node at
    /// every release instant. Otherwise, per run of pods of one task (one
    /// request, one node selector), each node's room (how many of them its free
    /// resources take) is kept and updated at each release, one node at a time:
    /// - pods of a single task: first fit fills the nodes in turn, so the gang
    ///   fits exactly when the rooms sum to `needed`, and the spare resources
    ///   are those of that filling;
    /// - pods of several tasks that must all be placed: each task's rooms must
    ///   sum to its pods (a necessary condition) before the placement is tried;
    /// - otherwise the totals over all nodes must cover the `needed` smallest
    ///   requests before the placement is tried.
    fn shadow(
        ssn: &Session<'_>,
        head: JobId,
        pending: &[PodId],
        needed: u32,
        mut free: Vec<Resources>,
        releases: &[Release],
    ) -> Option<Reservation> {
        let exhaustive = ssn.is_exhaustive();
        // Runs of one task: (request, pods, whether each node's selector admits them).
        let runs: Vec<(Resources, u64, Vec<bool>)> = gang::task_runs(ssn, pending)
            .into_iter()
            .map(|(p, count)| {
                let task = &ssn.job(head).spec.tasks[ssn.pod(p).task as usize];
                let selects = if task.has_node_filter() || ssn.cluster().has_taints() {
                    (0..free.len()).map(|n| ssn.selector_matches(p, NodeId(n as u32))).collect()
                } else {
                    vec![true; free.len()]
                };
                (ssn.pod(p).req, count, selects)
            })
            .collect();
        let room = |run: &(Resources, u64, Vec<bool>), n: usize, free: &Resources| -> u64 {
            let (req, _, selects) = run;
            if selects[n] && req.fits_in(free) { u64::from(free.copies_of(req)) } else { 0 }
        };
        let counted = !exhaustive && (runs.len() == 1 || needed as usize == pending.len());
        let mut rooms: Vec<u64> = if counted {
            runs.iter()
                .map(|r| free.iter().enumerate().map(|(n, f)| room(r, n, f)).fold(0, u64::saturating_add))
                .collect()
        } else {
            Vec::new()
        };
        let reqs: Vec<Resources> = pending.iter().map(|&p| ssn.pod(p).req).collect();
        let least = gang::least(&reqs, needed as usize);
        let mut total = free.iter().fold(Resources::ZERO, |a, r| a + *r);
        // What is idle now: what a node frees by the shadow time is its free
        // resources then beyond these.
        let idle = free.clone();
        let slack = u64::from(ssn.planted.wrong_skip);
        // Nodes that release something by the shadow time: the head takes their
        // capacity first, leaving what is idle now to backfill (EASY's `extra`).
        let mut releasing = vec![false; free.len()];
        let mut i = 0;
        while i < releases.len() {
            let t = releases[i].at;
            while let Some(&Release { node, req: r, .. }) = releases.get(i).filter(|e| e.at == t) {
                i += 1;
                let n = node as usize;
                if counted {
                    for (k, run) in runs.iter().enumerate() {
                        rooms[k] = rooms[k].saturating_sub(room(run, n, &free[n]));
                    }
                }
                free[n] += r;
                total += r;
                releasing[n] = true;
                if counted {
                    for (k, run) in runs.iter().enumerate() {
                        rooms[k] = rooms[k].saturating_add(room(run, n, &free[n]));
                    }
                }
            }
            if counted && runs.len() == 1 {
                if rooms[0] < u64::from(needed) + slack {
                    continue;
                }
                // The capacity released by then first, on every node, then the
                // rest (first fit fills the nodes in turn in each pass).
                let mut left = u64::from(needed);
                let mut released = released_parts(&free, &idle);
                for first in [true, false] {
                    for n in released_first(&releasing) {
                        let mut k = room(&runs[0], n, &free[n]).min(left);
                        if first {
                            k = k.min(released_copies(
                                &runs[0].0,
                                &released[n],
                                &ssn.node(NodeId(n as u32)).allocatable,
                            ));
                        }
                        for _ in 0..k {
                            take(&mut free[n], &mut released[n], &runs[0].0);
                        }
                        left -= k;
                    }
                }
                return Some(Reservation { job: head, at: t, spare: free });
            }
            if counted && runs.iter().zip(&rooms).any(|(run, &r)| r < run.1 + slack) {
                continue;
            }
            if !exhaustive && !least.fits_in(&total) {
                continue;
            }
            if let Some(spare) = Self::simulate_placement(ssn, pending, needed, &free, &idle, &releasing) {
                return Some(Reservation { job: head, at: t, spare });
            }
        }
        None
    }

    /// False if the conditions [`EasyBackfill::shadow`] asks before it places
    /// the head fail on `free`: its runs' rooms (when it counts them) or the
    /// `needed` smallest requests against the total. Each only grows with the
    /// free resources, so on every node's whole allocatable a false answer holds
    /// at every instant.
    fn may_fit(ssn: &Session<'_>, head: JobId, pending: &[PodId], needed: u32, free: &[Resources]) -> bool {
        let slack = u64::from(ssn.planted.wrong_skip);
        let runs = gang::task_runs(ssn, pending);
        if runs.len() == 1 || needed as usize == pending.len() {
            let filtered = ssn.job(head).spec.tasks.iter().any(|t| t.has_node_filter()) || ssn.cluster().has_taints();
            for &(p, count) in &runs {
                let req = ssn.pod(p).req;
                let room = free
                    .iter()
                    .enumerate()
                    .filter(|&(n, f)| req.fits_in(f) && (!filtered || ssn.selector_matches(p, NodeId(n as u32))))
                    .fold(0u64, |a, (_, f)| a.saturating_add(u64::from(f.copies_of(&req))));
                let want = if runs.len() == 1 { u64::from(needed) } else { count };
                if room < want + slack {
                    return false;
                }
            }
        }
        let reqs: Vec<Resources> = pending.iter().map(|&p| ssn.pod(p).req).collect();
        gang::least(&reqs, needed as usize).fits_in(&free.iter().fold(Resources::ZERO, |a, r| a + *r))
    }

    /// First-fit of `pending` (task order) on `free`, until `needed` pods are
    /// placed: each pod on the first node whose capacity released by then (its
    /// free resources beyond `idle`) holds it, else on the first whose free
    /// resources do, over the nodes that release something first (`releasing`),
    /// then the others, each in node order; returns what is left per node, or
    /// `None` if the gang does not fit.
    fn simulate_placement(
        ssn: &Session<'_>,
        pending: &[PodId],
        needed: u32,
        free: &[Resources],
        idle: &[Resources],
        releasing: &[bool],
    ) -> Option<Vec<Resources>> {
        let mut left = free.to_vec();
        let mut released = released_parts(free, idle);
        let order: Vec<usize> = released_first(releasing).collect();
        let mut placed = 0;
        for &p in pending {
            if placed >= needed {
                break;
            }
            let req = ssn.pod(p).req;
            let fits = |n: usize| req.fits_in(&left[n]) && ssn.selector_matches(p, NodeId(n as u32));
            let from_released =
                |n: usize| released_copies(&req, &released[n], &ssn.node(NodeId(n as u32)).allocatable) > 0;
            let n = order
                .iter()
                .copied()
                .find(|&n| fits(n) && from_released(n))
                .or_else(|| order.iter().copied().find(|&n| fits(n)));
            if let Some(n) = n {
                take(&mut left[n], &mut released[n], &req);
                placed += 1;
            }
        }
        (placed >= needed).then_some(left)
    }
}

/// Each node's capacity released by the shadow time: its free resources then
/// beyond what is idle now. EASY's head takes it before the idle capacity, which
/// it leaves to backfill (the textbook's `extra`: processors free at the shadow
/// time beyond the head's).
fn released_parts(free: &[Resources], idle: &[Resources]) -> Vec<Resources> {
    free.iter().zip(idle).map(|(f, i)| (*f - *i).max(&Resources::ZERO)).collect()
}

/// How many copies of `req` a node's `released` capacity holds, counted in the
/// dimension where `req` takes the largest share of the node's `alloc` (pod
/// slots aside; the lowest dimension on a tie): where the head competes with
/// backfill for the node. A memory request on a node with memory to spare does
/// not keep a pod off the cores a job releases (the textbook counts processors
/// alone). All dimensions when `req` asks for none.
fn released_copies(req: &Resources, released: &Resources, alloc: &Resources) -> u64 {
    let dims = (0..DIMS).filter(|&d| d != PODS && req.get(d) > 0 && alloc.get(d) > 0);
    // req[a] / alloc[a] > req[b] / alloc[b], exactly.
    let larger = |a: usize, b: usize| {
        i128::from(req.get(a)) * i128::from(alloc.get(b)) > i128::from(req.get(b)) * i128::from(alloc.get(a))
    };
    match dims.reduce(|best, d| if larger(d, best) { d } else { best }) {
        Some(d) => (released.get(d).max(0) / req.get(d)) as u64,
        None => u64::from(released.copies_of(req)),
    }
}

/// Takes `req` from a node's free resources, out of its released part first.
fn take(free: &mut Resources, released: &mut Resources, req: &Resources) {
    *free -= *req;
    *released = (*released - *req).max(&Resources::ZERO);
}

/// The nodes that release something by the shadow time, then the others, each
/// in node order.
fn released_first(releasing: &[bool]) -> impl Iterator<Item = usize> + '_ {
    let of = |released: bool| (0..releasing.len()).filter(move |&n| releasing[n] == released);
    of(true).chain(of(false))
}

impl Scheduler for EasyBackfill {
    fn name(&self) -> &str {
        "easy-backfill"
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        self.last = None;
        self.misses.clear();
        ssn.set_action("allocate");
        let jobs: Vec<JobId> = ssn.jobs_with_pending().filter(|&j| gang::eligible(ssn, j)).collect();
        let mut head = None;
        for (i, &j) in jobs.iter().enumerate() {
            gang::admit(ssn, j, "admitted in FIFO order");
            match gang::allocate_gang(ssn, j, &mut self.misses) {
                Some(stmt) => ssn.commit(stmt),
                None if gang::is_whole(ssn.job(j)) => {}
                None => {
                    head = Some(i);
                    break;
                }
            }
        }
        let Some(h) = head else { return };
        // Made when a later gang could fit the idle resources at all (what
        // no reservation changes for a gang that cannot).
        let mut reservation: Option<Option<Reservation>> = None;
        ssn.set_action("backfill");
        for &j in &jobs[h + 1..] {
            gang::admit(ssn, j, "admitted in FIFO order");
            // A gang with no room on idle resources has none within the spare ones.
            if self.misses.hopeless(ssn, j) {
                gang::explain_miss(ssn, j);
                continue;
            }
            if reservation.is_none() && !ssn.explaining_job(j) && !gang::may_fit_idle(ssn, j) {
                continue;
            }
            let Some(res) = reservation.get_or_insert_with(|| self.reservation(ssn, jobs[h])) else {
                if let Some(stmt) = gang::allocate_gang(ssn, j, &mut self.misses) {
                    ssn.commit(stmt);
                }
                continue;
            };
            let short = self.expected_end(ssn, j) <= res.at;
            // What this gang takes of the spare resources, undone if it does not start.
            let mut taken: Vec<(usize, Resources)> = Vec::new();
            let spare = &mut res.spare;
            let placed = gang::place_gang(ssn, j, Mode::Allocate, |s, p| {
                let req = s.pod(p).req;
                let n = s
                    .fitting_nodes(&req)
                    .find(|&n| gang::fits(s, p, n, Mode::Allocate) && (short || req.fits_in(&spare[n.0 as usize])))?;
                if !short {
                    spare[n.0 as usize] -= req;
                    taken.push((n.0 as usize, req));
                }
                Some(n)
            });
            match placed {
                Some(stmt) => ssn.commit(stmt),
                None => {
                    for (n, req) in taken {
                        res.spare[n] += req;
                    }
                    // Placed on idle resources alone: a miss of the shape.
                    if short {
                        self.misses.record(ssn, j);
                    }
                }
            }
        }
        self.last = reservation.flatten();
    }
}
