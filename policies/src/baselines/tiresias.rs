//! `tiresias`: discretized two-dimensional least-attained-service scheduling
//! (2D-LAS, Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep
//! Learning", NSDI '19), with gang placement.
//!
//! **Attained service** of a job = its GPUs (all pods' GPUs, at least 1) × the work it
//! has executed: its work done (µs of ideal run time: the engine's credited work plus
//! the work since its last speed change) plus the work it lost when it was stopped
//! (the engine's `lost_gpu_us`, work since the last checkpoint × GPUs), in GPU·seconds.
//! So attained service is GPU × time run at ideal speed and never decreases: a job
//! preempted without a recent checkpoint keeps the service it had (counting only work
//! done would send it back to queue 0 after every preemption, and a wide job, which
//! reaches the threshold quickly, would be demoted, preempted and restarted for ever).
//! A job's *queue service* is its attained service minus the service it had when it
//! was last promoted (below).
//!
//! **Queues.** `K = thresholds + 1` priority queues; a job is in queue *k* (0 = highest)
//! when *k* thresholds are at or below its queue service. Defaults: 2 queues, one
//! threshold of 3,200 GPU·s ([`TiresiasConfig::default`]).
//!
//! Rules, in each session:
//! 1. **Starvation guard.** A job that is not running and not in queue 0 is promoted
//!    to queue 0 once its waiting time *w* reaches `PROMOTE_KNOB × r`, where *r* is its
//!    run time since its last promotion (queue service ÷ GPUs: the `executed_time` of
//!    the authors' simulator) and *w* its total waiting time since its last promotion,
//!    counted from its first run. Its queue service then restarts from zero. Default
//!    knob: 8; 0 disables the guard. (Measuring against the last run alone lets a job
//!    preempted after a few seconds be promoted a few seconds later, preempt another
//!    job that then has a short last run too, and so on: endless preemptions that
//!    lose all work since checkpoints.)
//! 2. **Order.** Jobs are ordered by (queue, submit time, job id): FIFO within a queue.
//! 3. In that order, each job with Pending pods has its PodGroup admitted (Pending →
//!    Inqueue) and its Pending pods placed first-fit in node order on idle resources,
//!    all or nothing. A job that does not fit is skipped (later jobs may start).
//! 4. **Preemption.** If it does not fit, it first tries to take resources already being
//!    released (a `pipeline` onto future-idle resources, committed only if the whole
//!    gang fits); failing that, running jobs in a strictly lower-priority queue are
//!    evicted whole (action `preempt`), lowest priority first (last queue, latest
//!    submit, highest id), one job at a time until the gang fits on future-idle
//!    resources. Of those jobs, only the ones holding a node the gang's pods then take
//!    are evicted (all of them if that is not enough); the evictions and the pipeline
//!    are committed together. If even evicting every such job would not make it fit,
//!    nothing is evicted. Jobs in the same queue never preempt each other. An evicted
//!    job is suspended: it saves its work at the preemption ([`Session::suspend`]) and
//!    resumes from there (with [`TiresiasConfig::suspend`] off, the engine drops its
//!    work since its last checkpoint). The evicted pods release their nodes after their
//!    grace period; the preemptor is placed in a later session, when the resources are
//!    free.
//! 5. **Wake-ups.** For every running job not in the last queue, a session is requested
//!    at the instant its queue service reaches its queue's threshold (at its current
//!    speed; full speed if it was placed in this session), so that demotion and any
//!    preemption happen on time; for every waiting job the guard may promote, one at
//!    the instant it becomes due.
//!
//! Departures from the paper: placement is first-fit, not Tiresias's consolidation
//! heuristics; a run's start and end are observed at sessions (exact without
//! `schedulePeriod`); preemption costs the grace period. Without suspension, a job
//! of *g* GPUs stays in queue 0 for `threshold / g` seconds of run; with a checkpoint
//! interval longer than that, a wide job preempted at each demotion loses every
//! stint and, promoted again by the guard, may never finish (see
//! `docs/baselines.md`).

use super::gang::{self, Mode};
use lahar_core::cluster::NodeId;
use lahar_core::job::{JobId, PodId, PodStatus};
use lahar_core::progress::{FULL_SPEED_PPM, wall_time, work_done_at};
use lahar_core::resource::Resources;
use lahar_core::session::{Scheduler, Session, Statement};
use lahar_core::time::{MICROS_PER_SEC, SimTime};
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// Tiresias's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TiresiasConfig {
    /// Queue thresholds in GPU·seconds of queue service, ascending; `K = len + 1`
    /// queues. Default `[3200]`.
    pub thresholds_gpu_secs: Vec<u64>,
    /// `PROMOTE_KNOB`: a waiting job is promoted to queue 0 once it has waited (since
    /// its last promotion) this many times its run time since its last promotion; 0
    /// disables the starvation guard. Default 8.
    pub promote_knob: u64,
    /// A preempted job is suspended: it saves its work when it is evicted and
    /// resumes from there, as Tiresias preempts (checkpoint, then restart). With
    /// `false`, it loses the work since its last checkpoint like any evicted
    /// job. Default `true`.
    pub suspend: bool,
}

impl Default for TiresiasConfig {
    fn default() -> Self {
        TiresiasConfig { thresholds_gpu_secs: vec![3200], promote_knob: 8, suspend: true }
    }
}

/// What the scheduler remembers of a job between sessions.
#[derive(Debug, Clone, Default)]
struct Track {
    /// Attained service (GPU·µs) forgiven by promotions.
    offset: u128,
    /// Start of the current run, while running.
    run_start: Option<SimTime>,
    /// Waiting time (µs) since the last promotion, counted from the first run,
    /// excluding the current wait.
    waited: u64,
    /// When the job last stopped running (start of its current wait).
    wait_start: Option<SimTime>,
    /// Promotions by the starvation guard.
    promotions: u32,
    /// GPUs counted for service (all pods' GPUs, at least 1).
    gpus: u128,
    /// Attained service (GPU·µs) at the current session ([`Tiresias::observe`]).
    attained: u128,
}

impl Track {
    /// A run starts now.
    fn start(&mut self, now: SimTime) {
        if let Some(w) = self.wait_start.take() {
            self.waited = self.waited.saturating_add(now.since(w).micros());
        }
        self.run_start = Some(now);
    }
    /// The current run ends now.
    fn stop(&mut self, now: SimTime) {
        self.run_start = None;
        self.wait_start = Some(now);
    }
}

/// Discretized 2D-LAS with priority queues, starvation guard and preemption.
#[derive(Debug, Clone)]
pub struct Tiresias {
    cfg: TiresiasConfig,
    /// Thresholds in GPU·µs, ascending.
    thresholds: Vec<u128>,
    /// Per active job (looked up, never iterated for a decision).
    jobs: FxHashMap<JobId, Track>,
    /// Wake-ups already requested and still ahead (not requested twice).
    wakeups: BTreeSet<SimTime>,
}

impl Default for Tiresias {
    fn default() -> Self {
        Tiresias::new(TiresiasConfig::default())
    }
}

impl Tiresias {
    /// A scheduler with the given parameters (thresholds are sorted).
    pub fn new(cfg: TiresiasConfig) -> Self {
        let mut thresholds: Vec<u128> =
            cfg.thresholds_gpu_secs.iter().map(|&t| t as u128 * MICROS_PER_SEC as u128).collect();
        thresholds.sort_unstable();
        Tiresias { cfg, thresholds, jobs: FxHashMap::default(), wakeups: BTreeSet::new() }
    }

    /// The parameters.
    pub fn config(&self) -> &TiresiasConfig {
        &self.cfg
    }

    /// Promotions the starvation guard gave the job (while it is active).
    pub fn promotions(&self, j: JobId) -> u32 {
        self.jobs.get(&j).map_or(0, |t| t.promotions)
    }

    fn gpus(ssn: &Session<'_>, j: JobId) -> u128 {
        ssn.job(j).gpus().max(1) as u128
    }

    /// Attained service (GPU·µs) of the job now: GPUs × (work done + work lost).
    fn attained(ssn: &Session<'_>, j: JobId, gpus: u128) -> u128 {
        let job = ssn.job(j);
        gpus * work_done_at(job, ssn.now()) as u128 + job.progress.lost_gpu_us
    }

    /// Queue service (GPU·µs): attained service minus what promotions forgave.
    /// Within a session a job's attained service does not change (its work and
    /// losses move when the engine applies the session), so it is read once per
    /// session ([`Tiresias::observe`]).
    fn service(&self, ssn: &Session<'_>, j: JobId) -> u128 {
        match self.jobs.get(&j) {
            Some(t) => t.attained.saturating_sub(t.offset),
            None => Self::attained(ssn, j, Self::gpus(ssn, j)),
        }
    }

    /// The queue (0 = highest priority) of a queue service.
    fn level_of(&self, service: u128) -> usize {
        self.thresholds.iter().take_while(|&&t| service >= t).count()
    }

    /// The job's current queue (0 = highest priority).
    pub fn queue_of(&self, ssn: &Session<'_>, j: JobId) -> usize {
        self.level_of(self.service(ssn, j))
    }

    /// Records runs that started or ended since the last session.
    fn observe(&mut self, ssn: &Session<'_>, active: &[JobId]) {
        let now = ssn.now();
        // `active` is in job order.
        self.jobs.retain(|j, _| active.binary_search(j).is_ok());
        for &j in active {
            let progressing = ssn.job(j).is_progressing();
            let t = self.jobs.entry(j).or_default();
            if t.gpus == 0 {
                t.gpus = Self::gpus(ssn, j);
            }
            t.attained = Self::attained(ssn, j, t.gpus);
            match (progressing, t.run_start) {
                (true, None) => t.start(now),
                (false, Some(_)) => t.stop(now),
                _ => {}
            }
        }
    }

    /// Run time (µs at ideal speed) since the last promotion: queue service ÷ GPUs
    /// (the authors' simulator's `executed_time`).
    fn executed(&self, ssn: &Session<'_>, j: JobId) -> u64 {
        (self.service(ssn, j) / Self::gpus(ssn, j)).min(u64::MAX as u128) as u64
    }

    /// When the waiting job `j` becomes due for promotion, if the guard applies to it.
    fn promotion_due(&self, ssn: &Session<'_>, j: JobId) -> Option<SimTime> {
        let knob = self.cfg.promote_knob;
        let t = self.jobs.get(&j)?;
        let w = t.wait_start?;
        if knob == 0 || t.run_start.is_some() || self.queue_of(ssn, j) == 0 {
            return None;
        }
        let exec = self.executed(ssn, j);
        if exec == 0 {
            return None;
        }
        let left = exec.saturating_mul(knob).saturating_sub(t.waited);
        Some(SimTime(w.micros().saturating_add(left)))
    }

    /// The starvation guard: promotes waiting jobs that waited long enough.
    fn promote(&mut self, ssn: &Session<'_>, active: &[JobId]) {
        let now = ssn.now();
        for &j in active {
            if ssn.job(j).is_progressing() {
                continue;
            }
            let Some(due) = self.promotion_due(ssn, j) else { continue };
            if due > now {
                continue;
            }
            if let Some(t) = self.jobs.get_mut(&j) {
                t.offset = t.attained;
                t.waited = 0;
                t.wait_start = Some(now);
                t.promotions += 1;
            }
        }
    }

    /// Tries to start `j` by evicting running jobs of a strictly lower-priority queue
    /// (`victims`, lowest priority first). Returns whether it committed.
    fn preempt_for(&mut self, ssn: &mut Session<'_>, j: JobId, level: usize, victims: &[(usize, JobId)]) -> bool {
        let victims: Vec<(usize, JobId)> = victims
            .iter()
            .copied()
            .filter(|&(l, v)| l > level && v != j && ssn.job(v).count(PodStatus::Running) > 0)
            .collect();
        if victims.is_empty() {
            return false;
        }
        // Necessary condition, in every dimension: the smallest pods the gang needs
        // fit in the future-idle resources plus the victims'.
        let job = ssn.job(j);
        let needed = job.spec.min_available.max(1).saturating_sub(job.ready_count()) as usize;
        let reqs: Vec<Resources> = ssn.pending_pods(j).iter().map(|&p| ssn.pod(p).req).collect();
        if reqs.len() < needed {
            return false;
        }
        let want = gang::least(&reqs, needed);
        let free = (0..ssn.node_count()).fold(Resources::ZERO, |a, n| a + ssn.future_idle(NodeId(n as u32)));
        let held = victims.iter().fold(Resources::ZERO, |a, &(_, v)| a + ssn.job(v).allocated);
        if !want.fits_in(&(free + held)) {
            return false;
        }
        if !ssn.is_exhaustive() && !Self::may_fit_without(ssn, j, needed, &victims) {
            return false;
        }
        ssn.set_action("preempt");
        // Trial: evict lowest priority first until the gang fits on future-idle
        // resources, note the nodes its pods would take, and undo everything.
        let mut trial = ssn.statement();
        let mut freed = free;
        let mut found: Option<(usize, Vec<NodeId>)> = None;
        for (i, &(vl, v)) in victims.iter().enumerate() {
            freed += ssn.job(v).allocated;
            Self::evict_job(ssn, &mut trial, j, level, v, vl);
            if !want.fits_in(&freed) {
                continue;
            }
            if let Some(pl) = gang::place_gang_first_fit(ssn, j, Mode::Pipeline) {
                let mut nodes: Vec<NodeId> = ssn
                    .job(j)
                    .pods
                    .iter()
                    .filter(|&&p| ssn.pod(p).status == PodStatus::Pipelined)
                    .filter_map(|&p| ssn.pod(p).node)
                    .collect();
                nodes.sort_unstable();
                nodes.dedup();
                ssn.discard(pl);
                found = Some((i + 1, nodes));
                break;
            }
        }
        ssn.discard(trial);
        let Some((k, nodes)) = found else {
            ssn.set_action("allocate");
            return false;
        };
        // Keep only the victims holding a node the gang takes; if that is not enough
        // (first-fit may then choose other nodes), evict all victims of the trial.
        let kept: Vec<(usize, JobId)> = victims[..k]
            .iter()
            .copied()
            .filter(|&(_, v)| {
                ssn.job(v).pods.iter().any(|&p| {
                    ssn.pod(p).status == PodStatus::Running && ssn.pod(p).node.is_some_and(|n| nodes.contains(&n))
                })
            })
            .collect();
        let done = (kept.len() < k && self.evict_and_pipeline(ssn, j, level, &kept))
            || self.evict_and_pipeline(ssn, j, level, &victims[..k]);
        ssn.set_action("allocate");
        done
    }

    /// Whether `j`'s gang could fit the future-idle resources once every victim's
    /// Running pods are evicted, counted per node: for each task's run of Pending
    /// pods, how many of them each node's future-idle resources plus the victims'
    /// pods there take (node selector and taints included, GPU devices not: an upper
    /// bound). False when a single task's rooms sum below `needed`, or when all the
    /// pods must be placed and some task's rooms sum below its pods; the trial could
    /// then not place the gang with every victim evicted either.
    fn may_fit_without(ssn: &Session<'_>, j: JobId, needed: usize, victims: &[(usize, JobId)]) -> bool {
        let pending = ssn.pending_pods(j);
        let runs = gang::task_runs(ssn, &pending);
        if runs.len() > 1 && needed < pending.len() {
            return true;
        }
        let mut room: Vec<Resources> = (0..ssn.node_count()).map(|n| ssn.future_idle(NodeId(n as u32))).collect();
        for &(_, v) in victims {
            for &p in &ssn.job(v).pods {
                let pod = ssn.pod(p);
                if let (PodStatus::Running, Some(n)) = (pod.status, pod.node) {
                    room[n.0 as usize] += pod.req;
                }
            }
        }
        let slack = u64::from(ssn.wrong_skip_for_tests);
        runs.iter().all(|&(p, count)| {
            let req = ssn.pod(p).req;
            let fits: u64 = room
                .iter()
                .enumerate()
                .filter(|&(n, r)| req.fits_in(r) && ssn.selector_matches(p, NodeId(n as u32)))
                .map(|(_, r)| u64::from(r.copies_of(&req)))
                .fold(0, u64::saturating_add);
            let want = if runs.len() == 1 { needed as u64 } else { count };
            fits >= want + slack
        })
    }

    /// Evicts the Running pods of victim `v` (queue `vl`) for job `j` (queue `level`).
    fn evict_job(ssn: &mut Session<'_>, stmt: &mut Statement, j: JobId, level: usize, v: JobId, vl: usize) {
        let pods: Vec<PodId> =
            ssn.job(v).pods.iter().copied().filter(|&p| ssn.pod(p).status == PodStatus::Running).collect();
        for p in pods {
            let reason = format!("tiresias: job {} (queue {level}) preempts job {} (queue {vl})", j.0, v.0);
            // The pod was just checked to be Running.
            let _ = ssn.evict(stmt, p, reason);
        }
    }

    /// Evicts `victims` and pipelines `j`'s gang; commits both and records the stops if
    /// the gang fits, otherwise undoes everything. Returns whether it committed.
    fn evict_and_pipeline(
        &mut self,
        ssn: &mut Session<'_>,
        j: JobId,
        level: usize,
        victims: &[(usize, JobId)],
    ) -> bool {
        let mut ev = ssn.statement();
        for &(vl, v) in victims {
            Self::evict_job(ssn, &mut ev, j, level, v, vl);
        }
        match gang::place_gang_first_fit(ssn, j, Mode::Pipeline) {
            Some(pl) => {
                ssn.commit(ev);
                ssn.commit(pl);
                let now = ssn.now();
                for &(_, v) in victims {
                    self.jobs.entry(v).or_default().stop(now);
                    if self.cfg.suspend {
                        ssn.suspend(v);
                    }
                }
                true
            }
            None => {
                ssn.discard(ev);
                false
            }
        }
    }

    /// Requests the sessions at which running jobs cross a threshold and waiting jobs
    /// become due for promotion.
    fn request_wakeups(&mut self, ssn: &mut Session<'_>, active: &[JobId], placed: &BTreeSet<JobId>) {
        let now = ssn.now();
        let mut at = Vec::new();
        for &j in active {
            let Some(t) = self.jobs.get(&j) else { continue };
            let service = self.service(ssn, j);
            let level = self.level_of(service);
            if t.run_start.is_some() {
                let Some(&threshold) = self.thresholds.get(level) else { continue };
                let job = ssn.job(j);
                let gpus = Self::gpus(ssn, j);
                let work = (threshold - service).div_ceil(gpus).min(u64::MAX as u128) as u64;
                let speed =
                    if job.is_progressing() && !placed.contains(&j) { job.progress.speed_ppm } else { FULL_SPEED_PPM };
                at.push(SimTime(now.micros().saturating_add(wall_time(work, speed))));
            } else if let Some(due) = self.promotion_due(ssn, j) {
                at.push(due);
            }
        }
        self.wakeups.retain(|&t| t > now);
        for t in at {
            if t > now && self.wakeups.insert(t) {
                ssn.request_wakeup(t);
            }
        }
    }
}

impl Scheduler for Tiresias {
    fn name(&self) -> &str {
        "tiresias"
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        ssn.set_action("allocate");
        let now = ssn.now();
        let active: Vec<JobId> = ssn.jobs().collect();
        self.observe(ssn, &active);
        self.promote(ssn, &active);
        let mut order: Vec<(usize, SimTime, JobId)> =
            active.iter().map(|&j| (self.queue_of(ssn, j), ssn.job(j).spec.submit, j)).collect();
        order.sort_unstable();
        // Preemption candidates, lowest priority first.
        let victims: Vec<(usize, JobId)> = order.iter().rev().map(|&(l, _, j)| (l, j)).collect();
        let mut placed = BTreeSet::new();
        // Gangs that could not start in this session: (pod shape, pods needed, queue)
        // of single-task jobs without node selector. A job of the same shape needing
        // as many pods or more, in the same or a lower queue, cannot start either
        // (allocations only take resources; it has no more victims). Cleared when a
        // preemption commits.
        let mut failed: Vec<(Resources, u32, usize)> = Vec::new();
        for &(level, _, j) in &order {
            if ssn.job(j).count(PodStatus::Pending) == 0 || !gang::eligible(ssn, j) {
                continue;
            }
            gang::admit(ssn, j, "admitted by tiresias");
            let was_whole = gang::is_whole(ssn.job(j));
            let job = ssn.job(j);
            let needed = job.spec.min_available.max(1).saturating_sub(job.ready_count());
            let shape = match job.spec.tasks.as_slice() {
                [t] if !t.has_node_filter()
                    && !ssn.cluster().has_taints()
                    && !ssn.affinity_on()
                    && !was_whole
                    && ssn.gating(j).is_none() =>
                {
                    Some(t.requests)
                }
                _ => None,
            };
            if let Some(r) = shape
                && failed.iter().any(|&(fr, fneeded, flevel)| fr == r && needed >= fneeded && level >= flevel)
            {
                continue;
            }
            if let Some(stmt) = gang::place_gang_first_fit(ssn, j, Mode::Allocate) {
                ssn.commit(stmt);
                placed.insert(j);
                if !was_whole {
                    self.jobs.entry(j).or_default().start(now);
                }
                continue;
            }
            if was_whole {
                continue;
            }
            ssn.set_action("preempt");
            if let Some(stmt) = gang::place_gang_first_fit(ssn, j, Mode::Pipeline) {
                ssn.commit(stmt);
                ssn.set_action("allocate");
                continue;
            }
            ssn.set_action("allocate");
            if self.preempt_for(ssn, j, level, &victims) {
                failed.clear();
            } else if let Some(r) = shape {
                failed.push((r, needed, level));
            }
        }
        self.request_wakeups(ssn, &active, &placed);
    }
}
