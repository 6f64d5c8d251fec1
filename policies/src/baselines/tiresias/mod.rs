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
//!    grace period. A job whose pipeline is committed (either way) **claims** that
//!    room (`claims.rs`): in each later session, before the walk, it binds there once
//!    its pods fit the nodes' idle resources, and until then the room is held from
//!    every other placement.
//! 5. **Wake-ups.** For every running job not in the last queue, a session is requested
//!    at the instant its queue service reaches its queue's threshold: the first
//!    instant its work at its current speed, counted from its last start, speed
//!    change or pause, reaches it (at full speed from now if it was placed in this
//!    session), so that demotion and any preemption happen on time; for every
//!    waiting job the guard may promote, one at the instant it becomes due.
//!
//! The jobs' service, queues and instants are kept between sessions (`book`): a
//! session refreshes only the jobs that changed and those whose instant came.
//!
//! Departures from the paper: placement is first-fit, not Tiresias's consolidation
//! heuristics; a run's start and end are observed at sessions (exact without
//! `schedulePeriod`); preemption costs the grace period. Without suspension, a job
//! of *g* GPUs stays in queue 0 for `threshold / g` seconds of run; with a checkpoint
//! interval longer than that, a wide job preempted at each demotion loses every
//! stint and, promoted again by the guard, may never finish (see
//! `docs/baselines.md`).

mod book;
mod claims;
mod preempt;
mod room;
mod walk;

use super::gang::{self, Mode};
use book::Book;
use claims::Claims;
use lahar_core::model::job::{JobId, PodStatus};
use lahar_core::session::{Scheduler, Session};
use lahar_core::util::time::MICROS_PER_SEC;
use preempt::VictimView;
use room::Room;
use walk::Walk;

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

/// Discretized 2D-LAS with priority queues, starvation guard and preemption.
#[derive(Debug, Clone)]
pub struct Tiresias {
    cfg: TiresiasConfig,
    /// The active jobs' service, queues and instants.
    book: Book,
    /// The victims of the last preemptor's level, while still valid (this session,
    /// no commit since).
    view: Option<VictimView>,
    /// Jobs holding the nodes they were pipelined onto until they bind.
    claims: Claims,
    /// The per-node room of the last preemptors' queue level, kept between
    /// sessions (not in the exhaustive mode, which does not prune).
    room: Option<Room>,
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
        let book = Book::new(thresholds, cfg.promote_knob);
        Tiresias { cfg, book, view: None, claims: Claims::default(), room: None }
    }

    /// The parameters.
    pub fn config(&self) -> &TiresiasConfig {
        &self.cfg
    }

    /// Promotions the starvation guard gave the job (while it is active).
    pub fn promotions(&self, j: JobId) -> u32 {
        self.book.promotions(j)
    }

    /// The job's queue (0 = highest priority) as of its last refresh.
    pub fn queue_of(&self, ssn: &Session<'_>, j: JobId) -> usize {
        self.book.queue_of(ssn, j)
    }
}

impl Scheduler for Tiresias {
    fn name(&self) -> &str {
        "tiresias"
    }

    fn schedule(&mut self, ssn: &mut Session<'_>) {
        ssn.set_action("allocate");
        self.view = None;
        self.book.open(ssn);
        let moved = self.book.take_moved();
        if self.room.as_mut().is_some_and(|room| !room.open(moved)) {
            self.room = None;
        }
        for j in self.claims.open(ssn) {
            self.book.started(ssn, j);
        }
        // The walk keeps the session's memo of gangs that could not start, by
        // class (`walk.rs`): single-task jobs without node filter or
        // tolerations, their request by its index in the World's list of
        // distinct requests.
        let memo = !ssn.affinity_on();
        let by_class = memo && !ssn.is_exhaustive() && !ssn.any_gated();
        let mut walk = Walk::new(by_class, ssn.planted.wrong_walk);
        while let Some((level, _, j)) = walk.next(ssn, &self.book) {
            if ssn.job(j).count(PodStatus::Pending) == 0 || !gang::eligible(ssn, j) || self.claims.holds(j) {
                continue;
            }
            gang::admit(ssn, j, "admitted by tiresias");
            let was_whole = gang::is_whole(ssn.job(j));
            let class = book::class_of(ssn, j).filter(|_| memo);
            if class.is_some_and(|c| walk.covers(c)) {
                continue;
            }
            // The totals first (constant time), then node by node.
            if gang::may_fit_total(ssn, j, Mode::Allocate)
                && gang::may_fit_nodes(ssn, j, Mode::Allocate)
                && let Some(stmt) = gang::place_gang_first_fit(ssn, j, Mode::Allocate)
            {
                self.commit_placements(ssn, stmt);
                if !was_whole {
                    self.book.started(ssn, j);
                }
                continue;
            }
            if was_whole {
                continue;
            }
            ssn.set_action("preempt");
            if gang::may_fit_total(ssn, j, Mode::Pipeline)
                && gang::may_fit_nodes(ssn, j, Mode::Pipeline)
                && let Some(stmt) = gang::place_gang_first_fit(ssn, j, Mode::Pipeline)
            {
                self.claims.make(j, ssn.placements(&stmt));
                self.commit_placements(ssn, stmt);
                ssn.set_action("allocate");
                continue;
            }
            ssn.set_action("allocate");
            if self.preempt_for(ssn, j, level) {
                walk.revive(&self.book);
            } else if let Some((r, needed)) = class {
                walk.kill(r, needed);
            }
        }
    }
}
