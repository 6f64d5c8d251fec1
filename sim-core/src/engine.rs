//! The discrete-event engine.
//!
//! Events are ordered by `(time, sequence)`. After all events of one instant are
//! handled, a scheduling session runs if anything that can change a decision
//! happened (an arrival, a completion, a pod released or created, a wakeup), or, with
//! `schedule_period`, at the next multiple of the period. A session that bound or
//! evicted a pod is always followed by another (at the same instant without a
//! period, at the next tick with one), as Volcano's periodic loop would run it: a
//! gang completed by backfill's BestEffort binds is allocated then, not at some
//! unrelated later event. No session runs when nothing changed. A running job makes
//! progress at a speed set by its placement ([`RuntimeModel`]); when its placement
//! changes, the work done at the old speed is credited and its finish event is
//! rescheduled (stale finish events are dropped by a generation counter).

use crate::arrivals::{Arrivals, Source};
use crate::cluster::NodeId;
use crate::event::EventQueue;
use crate::explain::{Explain, ExplainRow};
use crate::job::{JobId, JobPhase, PodGroupPhase, PodId, PodStatus, PolicyAction, PolicyEvent};
use crate::record::Recorder;
use crate::recurring::Due;
use crate::rng::{RngStreams, StreamRng};
use crate::session::{Decision, DecisionKind, Scheduler, Session};
use crate::time::{SimDuration, SimTime};
use crate::world::World;
use std::borrow::Cow;

/// Full speed, in parts per million of the ideal speed.
pub const FULL_SPEED_PPM: u32 = 1_000_000;

/// Prices a placement: how fast a job runs where it is, relative to its ideal
/// placement. This is the seam for the communication model: iteration time =
/// compute + exposed communication, speed = ideal iteration time / actual.
pub trait RuntimeModel: Send {
    /// Speed of `job` on `nodes` (distinct, ascending), in ppm of ideal (≤ 1,000,000).
    fn speed_ppm(&self, world: &World, job: JobId, nodes: &[NodeId]) -> u32;

    /// Whether one job's speed can depend on other jobs' placements (shared links).
    /// The engine then calls [`RuntimeModel::reprice`] after the jobs running change.
    fn coupled(&self) -> bool {
        false
    }

    /// New speeds of the `running` jobs (ascending ids) whose speed changed because
    /// the set of running jobs or their placements changed; called once per instant.
    fn reprice(&self, _world: &World, _running: &[JobId]) -> Vec<(JobId, u32)> {
        Vec::new()
    }

    /// True when the model prices `job`'s compute by the GPUs it runs on (a
    /// training model's throughput per GPU model), so nodes' `speed` does not
    /// apply to it.
    fn prices_compute(&self, _job: JobId) -> bool {
        false
    }

    /// A job pulled from a source arrived with id `job` and `profile` (jobs
    /// listed in the World from the start were given to the model when it was made).
    fn admit(&mut self, _job: JobId, _profile: Option<std::sync::Arc<crate::comm::runtime::JobProfile>>) {}
}

/// Every placement runs at the ideal speed (no communication cost).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdealRuntime;

impl RuntimeModel for IdealRuntime {
    fn speed_ppm(&self, _: &World, _: JobId, _: &[NodeId]) -> u32 {
        FULL_SPEED_PPM
    }
}

/// Engine settings.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Scenario seed.
    pub seed: u64,
    /// Stop time; `None`: run until no event is left.
    pub horizon: Option<SimTime>,
    /// With a period, sessions run at multiples of it (Volcano's loop); without,
    /// right after the events that need one.
    pub schedule_period: Option<SimDuration>,
    /// Spacing of timeseries samples.
    pub sample_interval: SimDuration,
    /// Stop after this many sessions.
    pub max_sessions: Option<u64>,
    /// Sessions walk everything, as Volcano does, instead of skipping work that
    /// provably cannot change a decision (the reference for equivalence tests).
    pub exhaustive: bool,
    /// Makes one of the session skips deliberately wrong, so that tests can show
    /// the equivalence check catches a wrong skip. Never set outside tests.
    #[doc(hidden)]
    pub wrong_skip_for_tests: bool,
    /// Makes cached node scores (and numa-aware's kept verdicts) never expire,
    /// so that tests can show the equivalence check catches a stale one. Never
    /// set outside tests.
    #[doc(hidden)]
    pub stale_scores_for_tests: bool,
    /// Makes the fast count of free slots ([`Session::slots_up_to`]) miss a node,
    /// so that tests can show the equivalence check catches it. Never set outside
    /// tests.
    #[doc(hidden)]
    pub wrong_slots_for_tests: bool,
    /// Makes the out-of-reach rule's fast path (from a job's facts) count one pod
    /// short, so that tests can show the equivalence check catches it.
    /// Never set outside tests.
    #[doc(hidden)]
    pub wrong_reach_for_tests: bool,
    /// Keys the out-of-reach rule's memo of the last job's facts without the
    /// queue and priority, so that tests can show the equivalence check catches
    /// it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_memo_for_tests: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            seed: 0,
            horizon: None,
            schedule_period: None,
            sample_interval: SimDuration::from_secs(300),
            max_sessions: None,
            exhaustive: false,
            wrong_skip_for_tests: false,
            stale_scores_for_tests: false,
            wrong_slots_for_tests: false,
            wrong_reach_for_tests: false,
            wrong_memo_for_tests: false,
        }
    }
}

/// Why a pod's placement interval ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EndReason {
    /// Its job finished.
    Completed,
    /// Evicted by the preempt action.
    Preempted,
    /// Evicted by the reclaim action.
    Reclaimed,
    /// Evicted by another action.
    Evicted,
    /// Killed by a restart policy.
    Restarted,
    /// Killed when its job was aborted, terminated or failed.
    Killed,
    /// Still running when the run stopped.
    Running,
}

impl EndReason {
    /// Spelling in pods.csv.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Completed => "completed",
            EndReason::Preempted => "preempted",
            EndReason::Reclaimed => "reclaimed",
            EndReason::Evicted => "evicted",
            EndReason::Restarted => "restarted",
            EndReason::Killed => "killed",
            EndReason::Running => "running",
        }
    }
}

/// One placement interval of a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodRecord {
    /// Pod.
    pub pod: PodId,
    /// Job.
    pub job: JobId,
    /// Task index.
    pub task: u16,
    /// Replica index.
    pub index: u32,
    /// Node.
    pub node: NodeId,
    /// Milli-GPUs held.
    pub gpu_milli: i64,
    /// The GPU devices it held.
    pub gpu_devices: crate::world::DeviceHold,
    /// Start.
    pub start: SimTime,
    /// End.
    pub end: SimTime,
    /// Why it ended.
    pub reason: EndReason,
}

/// One timeseries sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Instant.
    pub t: SimTime,
    /// Milli-GPUs held by pods.
    pub gpu_allocated_milli: i64,
    /// Milli-GPUs of progressing jobs weighted by speed.
    pub gpu_effective_milli: i64,
    /// Submitted jobs not making progress.
    pub jobs_pending: u32,
    /// Jobs making progress.
    pub jobs_running: u32,
    /// Milli-GPUs allocated per queue.
    pub queue_gpu_milli: Vec<i64>,
}

/// Counters of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Events handled.
    pub events: u64,
    /// Sessions run.
    pub sessions: u64,
    /// Time of the last event (or the horizon).
    pub end: SimTime,
    /// The run stopped with events left (at the horizon or the session limit):
    /// jobs that never started were still waiting, not unschedulable.
    pub cut_short: bool,
    /// Per recurring object (`Kind namespace/name`) whose concurrency policy
    /// skipped or deleted runs: how many.
    pub recurring: std::collections::BTreeMap<std::sync::Arc<str>, crate::recurring::SeriesCounts>,
    /// Per JobFlow (`JobFlow namespace/name`) with jobs never created (their
    /// dependencies never all completed): how many.
    pub flows: std::collections::BTreeMap<std::sync::Arc<str>, crate::flow::FlowCounts>,
}

/// Everything a run produced.
pub struct RunOutput {
    /// Final state (jobs, pods, queues).
    pub world: World,
    /// Pod placement intervals, in the order they ended.
    pub pods: Vec<PodRecord>,
    /// Timeseries samples.
    pub samples: Vec<Sample>,
    /// Scheduling decisions, in order.
    pub decisions: Vec<Decision>,
    /// `--explain` rows for the watched pods, in the order recorded.
    pub explain: Vec<ExplainRow>,
    /// `--explain`: per watched replica, what every session did with it.
    pub explain_tallies: std::collections::BTreeMap<(JobId, u16, u32), crate::explain::Tally>,
    /// Counters.
    pub stats: RunStats,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    Finish(JobId, u64),
    PodReleased(PodId),
    Session,
    Wakeup,
    /// A job held back until now (a recurring object's run that Forbid held, a
    /// JobFlow's job whose dependencies completed): its controller creates it.
    Create(JobId),
}

/// The simulator.
pub struct Engine {
    world: World,
    /// Jobs still to arrive, in arrival order. Arrivals are not queued as
    /// events: at each instant they come before every queued event, exactly as
    /// if they had been queued first.
    arrivals: Arrivals,
    /// Jobs that reached a terminal phase.
    jobs_done: usize,
    events: EventQueue<Event>,
    scheduler: Box<dyn Scheduler>,
    runtime: Box<dyn RuntimeModel>,
    cfg: EngineConfig,
    now: SimTime,
    dirty: bool,
    session_pending: bool,
    /// Times of the queued wakeup events: a time is queued once however many
    /// sessions ask for it.
    wakeups: std::collections::BTreeSet<SimTime>,
    next_sample: SimTime,
    rng: StreamRng,
    stats: RunStats,
    pods_out: Vec<PodRecord>,
    samples: Vec<Sample>,
    decisions: Vec<Decision>,
    /// Jobs that arrived in a PodGroup phase of their own (`JobSpec::start_phase`):
    /// it stands until the next session closes, which re-derives it.
    phase_due: Vec<JobId>,
    /// Where records go as they are made, when set (else into `pods_out`,
    /// `samples` and `decisions`).
    recorder: Option<Box<dyn Recorder>>,
    explain: Option<Explain>,
    running_jobs: u32,
    effective_milli_ppm: i128,
    /// Jobs started or stopped this instant and the runtime model is coupled.
    reprice_due: bool,
    /// Nodes' relative speeds (jobs the runtime model does not price by GPU).
    speeds: crate::speed::NodeSpeeds,
    /// Recurring objects' runs: what is active, what is held back.
    recurring: crate::recurring::Recurring,
    /// JobFlows: the steps completed, the jobs waiting for theirs.
    flows: crate::flow::Flows,
}

impl Engine {
    /// An engine over `world` whose jobs arrive at their submit times.
    pub fn new(
        world: World,
        scheduler: Box<dyn Scheduler>,
        runtime: Box<dyn RuntimeModel>,
        cfg: EngineConfig,
    ) -> Engine {
        let arrivals = Arrivals::listed(&world);
        let rng = RngStreams::new(cfg.seed).stream("scheduler/session", 0);
        let speeds = crate::speed::NodeSpeeds::new(&world.cluster);
        Engine {
            speeds,
            world,
            arrivals,
            jobs_done: 0,
            events: EventQueue::new(),
            scheduler,
            runtime,
            cfg,
            now: SimTime::ZERO,
            dirty: false,
            session_pending: false,
            wakeups: std::collections::BTreeSet::new(),
            next_sample: SimTime::ZERO,
            rng,
            stats: RunStats::default(),
            pods_out: Vec::new(),
            samples: Vec::new(),
            decisions: Vec::new(),
            phase_due: Vec::new(),
            recorder: None,
            explain: None,
            running_jobs: 0,
            effective_milli_ppm: 0,
            reprice_due: false,
            recurring: crate::recurring::Recurring::default(),
            flows: crate::flow::Flows::default(),
        }
    }

    /// An engine over `world` (whose own jobs are ignored: give it none) whose
    /// jobs come from `source` in submit order, each added to the World when it
    /// arrives, numbered in arrival order.
    pub fn streaming(
        world: World,
        source: Source,
        scheduler: Box<dyn Scheduler>,
        runtime: Box<dyn RuntimeModel>,
        cfg: EngineConfig,
    ) -> Engine {
        assert!(world.jobs.is_empty(), "a streaming engine's jobs come from its source");
        let mut e = Engine::new(world, scheduler, runtime, cfg);
        e.arrivals = Arrivals::streamed(source);
        e
    }

    /// Records `--explain` rows for the pods `explain` watches (none by default).
    pub fn set_explain(&mut self, explain: Explain) {
        self.explain = (!explain.is_empty()).then_some(explain);
    }

    /// Hands every record to `recorder` as it is made; [`RunOutput::pods`],
    /// [`RunOutput::samples`] and [`RunOutput::decisions`] then stay empty (but for
    /// the intervals of `--explain` pods).
    pub fn set_recorder(&mut self, recorder: Box<dyn Recorder>) {
        self.recorder = Some(recorder);
    }

    /// Whether the state of finished jobs may be dropped: their records went to
    /// the recorder and nothing looks at them again (`--explain` jobs are kept).
    fn retiring(&self, j: JobId) -> bool {
        self.recorder.is_some() && !self.explain.as_ref().is_some_and(|e| e.watches_job(j))
    }

    /// Drops a pod no job refers to any more (a replaced pod, an old incarnation's).
    fn forget_pod(&mut self, p: PodId) {
        let j = self.world.pods[p.0 as usize].job;
        if self.retiring(j) {
            self.world.pods.remove(p.0 as usize);
        }
    }

    /// Drops an ended job whose pods have all let go of their nodes, with its pods:
    /// a long run's memory follows the jobs alive, not the jobs it has seen.
    fn maybe_retire(&mut self, j: JobId) {
        let Some(job) = self.world.jobs.get(j.0 as usize) else { return };
        if !job.phase.is_terminal() || job.count(PodStatus::Releasing) > 0 || !self.retiring(j) {
            return;
        }
        for p in std::mem::take(&mut self.world.jobs[j.0 as usize].pods) {
            self.world.pods.remove(p.0 as usize);
        }
        self.world.jobs.remove(j.0 as usize);
    }

    /// Hands a decision to the recorder, or keeps it.
    fn emit(&mut self, d: Decision) {
        match &mut self.recorder {
            Some(r) => r.decision(&self.world, &d),
            None => self.decisions.push(d),
        }
    }

    /// Tells the recorder that pod `p` started running.
    fn started(&mut self, p: PodId) {
        if let Some(r) = &mut self.recorder {
            r.pod_started(&self.world, p);
        }
    }

    /// Tells the recorder that job `j` ended, and its recurring object's controller.
    fn ended(&mut self, j: JobId) {
        if let Some(r) = &mut self.recorder {
            r.job_ended(&self.world, j);
        }
        let job = &self.world.jobs[j.0 as usize];
        // Volcano's CronJob controller counts an Aborted run as still active (it
        // may be resumed): only Completed, Failed and Terminated end one.
        if let Some(r) = job.spec.recurrence.as_deref().filter(|_| job.phase != JobPhase::Aborted) {
            let (start, dropped) = self.recurring.ended(j, &r.clone(), self.now);
            if let Some(h) = start {
                self.events.push(self.now, Event::Create(h));
            }
            if let Some(d) = dropped {
                self.drop_run(d);
            }
        }
        let job = &self.world.jobs[j.0 as usize];
        if let Some(f) = job.spec.flow.as_deref().filter(|_| job.phase == JobPhase::Completed) {
            for k in self.flows.completed(&f.clone()) {
                self.events.push(self.now, Event::Create(k));
            }
        }
    }

    /// Read access to the state (for tests and progress reporting).
    pub fn world(&self) -> &World {
        &self.world
    }

    /// Runs to the end (no events left, horizon, or session limit).
    pub fn run(mut self) -> RunOutput {
        self.run_with(|_, _| {});
        self.finish()
    }

    /// Runs, calling `progress(now, jobs_done)` every few thousand events.
    pub fn run_with(&mut self, mut progress: impl FnMut(SimTime, usize)) {
        while let Some(t) = self.next_time() {
            if self.cfg.horizon.is_some_and(|h| t > h) {
                break;
            }
            if self.cfg.max_sessions.is_some_and(|m| self.stats.sessions >= m) {
                break;
            }
            self.handle_instant(t, &mut progress);
            if self.dirty {
                match self.cfg.schedule_period {
                    None => {
                        while self.dirty && self.cfg.max_sessions.is_none_or(|m| self.stats.sessions < m) {
                            self.session();
                        }
                    }
                    Some(p) if !self.session_pending => {
                        let p = p.micros().max(1);
                        let at = SimTime(t.micros().div_ceil(p) * p);
                        self.events.push(at, Event::Session);
                        self.session_pending = true;
                    }
                    Some(_) => {}
                }
            }
            if self.reprice_due {
                self.reprice();
            }
        }
    }

    /// The submit time of the next job to arrive.
    fn next_arrival_time(&self) -> Option<SimTime> {
        self.arrivals.next_time(&self.world)
    }

    /// The earliest instant with an arrival or a queued event.
    fn next_time(&self) -> Option<SimTime> {
        match (self.next_arrival_time(), self.events.peek_time()) {
            (Some(a), Some(e)) => Some(a.min(e)),
            (a, e) => a.or(e),
        }
    }

    /// Handles every event at instant `t` (the earliest pending), without
    /// running a session: arrivals first, then queued events.
    fn handle_instant(&mut self, t: SimTime, progress: &mut impl FnMut(SimTime, usize)) {
        self.sample_until(t);
        self.now = t;
        while self.next_arrival_time() == Some(t) {
            let j = self.arrivals.pop(&mut self.world, &mut *self.runtime);
            self.stats.events += 1;
            self.due(j);
            if self.stats.events.is_multiple_of(4096) {
                progress(t, self.jobs_done);
            }
        }
        while self.events.peek_time() == Some(t) {
            let (_, ev) = self.events.pop().expect("peeked");
            self.stats.events += 1;
            self.handle(ev);
            if self.stats.events.is_multiple_of(4096) {
                progress(t, self.jobs_done);
            }
        }
    }

    /// Handles the events of the earliest pending instant (arrivals, finishes...)
    /// without scheduling, and returns whether a session is due. With
    /// [`Engine::run_session`], this lets benchmarks and tools time one session
    /// on a prepared state.
    pub fn prepare_instant(&mut self) -> bool {
        if let Some(t) = self.next_time() {
            self.handle_instant(t, &mut |_, _| {});
        }
        self.dirty
    }

    /// Runs one scheduling session at the current instant and applies its binds.
    pub fn run_session(&mut self) {
        self.session();
    }

    /// Re-prices the running jobs after the set of running jobs changed (link
    /// sharing): each job whose speed changed is credited at its old speed and goes
    /// on at the new one.
    fn reprice(&mut self) {
        self.reprice_due = false;
        // `active` is ordered, so `running` is ascending.
        let running: Vec<JobId> =
            self.world.active.iter().copied().filter(|j| self.world.jobs[j.0 as usize].is_progressing()).collect();
        for (j, speed) in self.runtime.reprice(&self.world, &running) {
            let speed = speed.clamp(1, FULL_SPEED_PPM);
            let job = &self.world.jobs[j.0 as usize];
            if !job.is_progressing() || job.progress.speed_ppm == speed {
                continue;
            }
            self.credit(j);
            self.set_speed(j, speed);
        }
    }

    /// Sets a progressing job's speed from now on: a new Finish generation at
    /// the time its remaining work ends at that speed, and its term of the
    /// effective-utilization sum.
    fn set_speed(&mut self, j: JobId, speed: u32) {
        let now = self.now;
        let job = &mut self.world.jobs[j.0 as usize];
        let p = &mut job.progress;
        p.speed_ppm = speed;
        p.generation += 1;
        let remaining = job.spec.duration.micros().saturating_sub(p.done) as u128;
        let delay = (remaining * FULL_SPEED_PPM as u128).div_ceil(speed as u128);
        let at = SimTime(now.micros().saturating_add(delay.min(u64::MAX as u128) as u64));
        let generation = p.generation;
        let term = job.allocated.gpu_milli() as i128 * speed as i128;
        self.effective_milli_ppm += term - std::mem::replace(&mut p.effective_term, term);
        // A job without a run time never finishes by itself.
        if !job.spec.duration.is_unbounded() {
            self.events.push(at, Event::Finish(j, generation));
        }
    }

    /// Closes open intervals and returns the outputs.
    pub fn finish(mut self) -> RunOutput {
        let cut_short = self.next_time().is_some();
        let end = match self.cfg.horizon {
            Some(h) if cut_short => h,
            _ => self.now,
        };
        self.now = end;
        // Credit the work of jobs still running so their progress is accurate.
        let running: Vec<JobId> =
            self.world.active.iter().copied().filter(|j| self.world.jobs[j.0 as usize].is_progressing()).collect();
        for j in running {
            self.credit(j);
        }
        // Intervals still open end with the run (before the last samples, which see
        // the state after every change at their instant).
        let open: Vec<PodId> = self
            .world
            .pods
            .iter_ids()
            .filter(|(_, p)| p.status == PodStatus::Running)
            .map(|(i, _)| PodId(i as u32))
            .collect();
        for p in open {
            self.record_pod_end(p, EndReason::Running);
        }
        self.sample_until(SimTime(end.micros() + 1));
        self.stats.end = end;
        self.stats.cut_short = cut_short;
        for j in self.recurring.finish() {
            self.drop_run(j);
        }
        self.stats.recurring = std::mem::take(&mut self.recurring.counts);
        let world = &self.world;
        let (never, counts) = self.flows.finish(|j| {
            world.jobs[j.0 as usize].spec.flow.as_ref().map(|f| std::sync::Arc::clone(&f.step)).unwrap_or_default()
        });
        for j in never {
            self.drop_run(j);
        }
        self.stats.flows = counts;
        if self.recorder.is_none() {
            // The in-memory records list every job of the scenario.
            self.arrivals.add_rest(&mut self.world, &mut *self.runtime);
        }
        if let Some(r) = &mut self.recorder {
            r.finished(&self.world, &self.stats);
        }
        RunOutput {
            world: self.world,
            pods: self.pods_out,
            samples: self.samples,
            decisions: self.decisions,
            explain_tallies: self.explain.as_mut().map(|e| std::mem::take(&mut e.tallies)).unwrap_or_default(),
            explain: self.explain.map(|e| e.rows).unwrap_or_default(),
            stats: self.stats,
        }
    }

    fn sample_until(&mut self, t: SimTime) {
        let step = self.cfg.sample_interval.micros().max(1);
        while self.next_sample < t {
            let q = self.world.queues.iter().map(|q| q.allocated.gpu_milli()).collect();
            let running = self.running_jobs;
            let s = Sample {
                t: self.next_sample,
                gpu_allocated_milli: self.world.gpu_used_milli,
                gpu_effective_milli: (self.effective_milli_ppm / FULL_SPEED_PPM as i128) as i64,
                jobs_pending: self.world.active.len() as u32 - running,
                jobs_running: running,
                queue_gpu_milli: q,
            };
            match &mut self.recorder {
                Some(r) => r.sample(&self.world, &s),
                None => self.samples.push(s),
            }
            self.next_sample = SimTime(self.next_sample.micros() + step);
        }
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Finish(j, generation) => {
                // A stale finish of a job already ended (and maybe retired) is dropped.
                let Some(job) = self.world.jobs.get(j.0 as usize) else { return };
                if job.progress.generation == generation && job.is_progressing() {
                    self.complete(j);
                }
            }
            Event::PodReleased(p) => self.released(p),
            Event::Session => {
                self.session_pending = false;
                if self.dirty {
                    self.session();
                }
            }
            Event::Wakeup => {
                self.wakeups.remove(&self.now);
                self.dirty = true;
            }
            Event::Create(j) => {
                // Created now: its submit time is its creation (a run's name keeps
                // its scheduled time).
                self.world.jobs[j.0 as usize].spec.submit = self.now;
                if let Some(r) = self.world.jobs[j.0 as usize].spec.recurrence.clone() {
                    self.recurring.created(j, &r);
                }
                self.arrive(j);
            }
        }
    }

    /// Job `j`'s submit time came: it arrives, unless it is a recurring object's
    /// run that the object's concurrency policy holds back or skips.
    fn due(&mut self, j: JobId) {
        if let Some(f) = &self.world.jobs[j.0 as usize].spec.flow
            && !self.flows.due(j, f)
        {
            return;
        }
        let Some(r) = self.world.jobs[j.0 as usize].spec.recurrence.clone() else { return self.arrive(j) };
        let (due, dropped) = self.recurring.due(j, &r, self.now);
        if let Some(d) = dropped {
            self.drop_run(d);
        }
        match due {
            Due::Create => {}
            Due::Replace(old) => {
                for o in old {
                    self.end_job(o, JobPhase::Terminated, EndReason::Killed);
                }
            }
            Due::Hold => return,
            Due::Skip => return self.drop_run(j),
        }
        self.recurring.created(j, &r);
        self.arrive(j);
    }

    /// Forgets a job its controller never creates (a recurring object's run, a
    /// JobFlow's job).
    fn drop_run(&mut self, j: JobId) {
        if self.retiring(j) {
            self.world.jobs.remove(j.0 as usize);
        }
    }

    fn arrive(&mut self, j: JobId) {
        self.world.activate(j);
        if let Some(r) = &mut self.recorder {
            r.job_submitted(&self.world, j);
        }
        self.create_initial_pods(j);
        let initial = self.world.jobs[j.0 as usize].spec.initial.clone();
        if !initial.is_empty() {
            // A starting state: these pods were bound before the run; no decisions.
            for (task, index, node) in initial {
                let pod = self.world.jobs[j.0 as usize].pods.iter().copied().find(|&p| {
                    let pod = &self.world.pods[p.0 as usize];
                    pod.task as usize == task && pod.index == index && pod.status == PodStatus::Pending
                });
                if let Some(p) = pod {
                    let spec = &self.world.jobs[j.0 as usize].spec;
                    if let Some(v) = spec.initial_vgpu.iter().find(|v| v.0 == task && v.1 == index) {
                        let takes = v.2.clone();
                        self.world.preset_vgpu(takes);
                    }
                    let spec = &self.world.jobs[j.0 as usize].spec;
                    if let Some(cpus) = spec.initial_numa.iter().find(|v| v.0 == task && v.1 == index).map(|v| v.2) {
                        self.world.preset_numa(cpus);
                    }
                    self.world.transition(p, PodStatus::Running, Some(node));
                    self.world.pods[p.0 as usize].started = self.now;
                    self.started(p);
                }
            }
            let job = &self.world.jobs[j.0 as usize];
            let running = job.count(PodStatus::Running);
            match job.spec.start_phase {
                // The group's own phase stands until the next session closes (Volcano
                // re-derives it in jobStatus then).
                Some(p) => {
                    self.world.set_pg_phase(j, p);
                    self.refresh_job_keeping_phase(j);
                    self.phase_due.push(j);
                }
                None => {
                    let min = job.spec.min_available.max(1);
                    let phase = if running >= min { PodGroupPhase::Running } else { PodGroupPhase::Inqueue };
                    self.world.set_pg_phase(j, phase);
                    self.refresh_job(j);
                }
            }
        } else if let Some(p) = self.world.jobs[j.0 as usize].spec.start_phase.filter(|&p| p != PodGroupPhase::Pending)
        {
            // A starting state without running pods (an Inqueue PodGroup keeps its
            // admission) until the next session closes.
            self.world.set_pg_phase(j, p);
            self.phase_due.push(j);
        }
        self.dirty = true;
    }

    fn create_initial_pods(&mut self, j: JobId) {
        let ntasks = self.world.jobs[j.0 as usize].spec.tasks.len();
        for t in 0..ntasks {
            let job = &mut self.world.jobs[j.0 as usize];
            job.tasks[t].created = false;
            if job.spec.tasks[t].depends_on.is_empty() {
                self.create_task_pods(j, t);
            }
        }
    }

    fn create_task_pods(&mut self, j: JobId, t: usize) {
        let job = &mut self.world.jobs[j.0 as usize];
        job.tasks[t].created = true;
        let replicas = job.spec.tasks[t].replicas;
        for i in 0..replicas {
            self.world.create_pod(j, t, i, self.now);
        }
        self.dirty = true;
    }

    /// A task is ready (for dependsOn) when at least its minAvailable pods are
    /// Running or Succeeded.
    fn task_ready(&self, j: JobId, t: usize) -> bool {
        let job = &self.world.jobs[j.0 as usize];
        job.tasks[t].created
            && job.task_count(t, PodStatus::Running) + job.task_count(t, PodStatus::Succeeded)
                >= job.spec.tasks[t].min_available.max(1)
    }

    fn create_dependent_pods(&mut self, j: JobId) {
        let ntasks = self.world.jobs[j.0 as usize].spec.tasks.len();
        for t in 0..ntasks {
            let job = &self.world.jobs[j.0 as usize];
            if job.tasks[t].created || job.phase.is_terminal() || job.phase == JobPhase::Restarting {
                continue;
            }
            let deps = &job.spec.tasks[t].depends_on;
            let any = job.spec.tasks[t].depends_any;
            let ready = if any {
                deps.iter().any(|&d| self.task_ready(j, d))
            } else {
                deps.iter().all(|&d| self.task_ready(j, d))
            };
            if ready {
                self.create_task_pods(j, t);
            }
        }
    }

    fn session(&mut self) {
        self.dirty = false;
        self.stats.sessions += 1;
        let idx = self.stats.sessions;
        let mut ssn = Session::new(&mut self.world, self.now, idx, &mut self.rng).exhaustive(self.cfg.exhaustive);
        ssn.wrong_skip_for_tests = self.cfg.wrong_skip_for_tests;
        ssn.stale_scores_for_tests = self.cfg.stale_scores_for_tests;
        ssn.wrong_slots_for_tests = self.cfg.wrong_slots_for_tests;
        ssn.wrong_reach_for_tests = self.cfg.wrong_reach_for_tests;
        ssn.wrong_memo_for_tests = self.cfg.wrong_memo_for_tests;
        if let Some(e) = self.explain.as_mut() {
            ssn = ssn.with_explain(e);
        }
        self.scheduler.schedule(&mut ssn);
        let out = ssn.close();
        for d in out.decisions {
            self.emit(d);
        }
        let mut touched: Vec<JobId> = out.phase_jobs;
        for &(p, _) in &out.binds {
            let node = self.world.pods[p.0 as usize].node;
            self.world.transition(p, PodStatus::Running, node);
            let pod = &mut self.world.pods[p.0 as usize];
            pod.started = self.now;
            pod.nominated = None;
            touched.push(pod.job);
            self.started(p);
        }
        for &(p, action) in &out.evictions {
            let reason = match action {
                "preempt" | "gangpreempt" => EndReason::Preempted,
                "reclaim" | "gangreclaim" => EndReason::Reclaimed,
                _ => EndReason::Evicted,
            };
            let j = self.world.pods[p.0 as usize].job;
            self.on_evicted(p, reason, idx);
            touched.push(j);
        }
        for at in out.wakeups {
            self.wake_at(at);
        }
        // A session that bound or evicted something is always followed by another, as
        // Volcano's periodic loop would run one: without a period, at once (the next
        // instant's events cannot change what it finds); with one, at the next tick.
        if !out.binds.is_empty() || !out.evictions.is_empty() {
            match self.cfg.schedule_period {
                None => self.dirty = true,
                Some(p) => {
                    let p = p.micros().max(1);
                    self.wake_at(SimTime((self.now.micros() / p + 1) * p));
                }
            }
        }
        // Starting phases are re-derived at the first session's close.
        touched.append(&mut self.phase_due);
        touched.sort_unstable();
        touched.dedup();
        for j in touched {
            self.refresh_job(j);
        }
    }

    /// Queues a wakeup at `at` unless one is queued there already.
    fn wake_at(&mut self, at: SimTime) {
        if self.wakeups.insert(at) {
            self.events.push(at, Event::Wakeup);
        }
    }

    /// A committed eviction: end the interval, schedule the release, apply policies.
    fn on_evicted(&mut self, p: PodId, reason: EndReason, session: u64) {
        self.record_pod_end(p, reason);
        let pod = &mut self.world.pods[p.0 as usize];
        pod.evicted_at = Some(self.now);
        let j = pod.job;
        let task = pod.task as usize;
        let job = &mut self.world.jobs[j.0 as usize];
        if job.last_preempt_session != Some(session) {
            job.last_preempt_session = Some(session);
            job.preemptions += 1;
        }
        let grace = job.spec.termination_grace;
        let phase = job.phase;
        self.events.push(self.now.plus(grace), Event::PodReleased(p));
        // A job already restarting or ended ignores further evictions, as the
        // controller's Restarting/terminal states do.
        if phase == JobPhase::Restarting || phase.is_terminal() {
            return;
        }
        let action = self.policy_for(j, task, PolicyEvent::PodEvicted);
        self.apply_policy(j, Some(p), task, action);
    }

    fn policy_for(&self, j: JobId, task: usize, ev: PolicyEvent) -> Option<PolicyAction> {
        let spec = &self.world.jobs[j.0 as usize].spec;
        spec.tasks[task].policies.iter().chain(spec.policies.iter()).find(|p| p.event.matches(ev)).map(|p| p.action)
    }

    fn apply_policy(&mut self, j: JobId, pod: Option<PodId>, task: usize, action: Option<PolicyAction>) {
        match action {
            None | Some(PolicyAction::RestartPod) => {
                if let Some(p) = pod {
                    self.world.pods[p.0 as usize].replace_on_release = true;
                }
            }
            Some(PolicyAction::RestartTask) => {
                let pods: Vec<PodId> = self.world.jobs[j.0 as usize].pods.clone();
                for q in pods {
                    if self.world.pods[q.0 as usize].task as usize == task {
                        self.kill_pod(q, EndReason::Restarted);
                        self.world.pods[q.0 as usize].replace_on_release = true;
                    }
                }
            }
            Some(PolicyAction::RestartJob) => {
                let job = &mut self.world.jobs[j.0 as usize];
                job.retries += 1;
                if job.retries >= job.spec.max_retry {
                    self.end_job(j, JobPhase::Failed, EndReason::Killed);
                } else {
                    self.stop_progress(j, true);
                    self.set_phase(j, JobPhase::Restarting);
                    let pods: Vec<PodId> = self.world.jobs[j.0 as usize].pods.clone();
                    for q in pods {
                        self.kill_pod(q, EndReason::Restarted);
                    }
                    self.maybe_restart(j);
                }
            }
            Some(PolicyAction::AbortJob) => self.end_job(j, JobPhase::Aborted, EndReason::Killed),
            Some(PolicyAction::TerminateJob) => self.end_job(j, JobPhase::Terminated, EndReason::Killed),
            Some(PolicyAction::CompleteJob) => self.end_job(j, JobPhase::Completed, EndReason::Killed),
        }
    }

    /// Running → Releasing (interval ends now), Pending → Deleted.
    fn kill_pod(&mut self, p: PodId, reason: EndReason) {
        let pod = &self.world.pods[p.0 as usize];
        match pod.status {
            PodStatus::Running => {
                let node = pod.node;
                let grace = self.world.jobs[pod.job.0 as usize].spec.termination_grace;
                self.record_pod_end(p, reason);
                self.world.transition(p, PodStatus::Releasing, node);
                self.world.pods[p.0 as usize].evicted_at = Some(self.now);
                self.events.push(self.now.plus(grace), Event::PodReleased(p));
            }
            PodStatus::Pending => self.world.transition(p, PodStatus::Deleted, None),
            _ => {}
        }
    }

    fn end_job(&mut self, j: JobId, phase: JobPhase, reason: EndReason) {
        let newly_done = !self.world.jobs[j.0 as usize].phase.is_terminal();
        self.stop_progress(j, phase != JobPhase::Completed);
        let pods: Vec<PodId> = self.world.jobs[j.0 as usize].pods.clone();
        for p in pods {
            self.kill_pod(p, reason);
            self.world.pods[p.0 as usize].replace_on_release = false;
        }
        self.set_phase(j, phase);
        self.world.jobs[j.0 as usize].end = Some(self.now);
        self.world.deactivate(j);
        self.jobs_done += usize::from(newly_done);
        self.dirty = true;
        if newly_done {
            self.ended(j);
        }
        self.maybe_retire(j);
    }

    fn maybe_restart(&mut self, j: JobId) {
        let job = &mut self.world.jobs[j.0 as usize];
        if job.phase == JobPhase::Restarting && job.count(PodStatus::Releasing) == 0 {
            for p in std::mem::take(&mut job.pods) {
                self.forget_pod(p);
            }
            self.set_phase(j, JobPhase::Pending);
            self.create_initial_pods(j);
        }
    }

    fn released(&mut self, p: PodId) {
        if self.world.pods[p.0 as usize].status != PodStatus::Releasing {
            return;
        }
        self.world.transition(p, PodStatus::Deleted, None);
        self.dirty = true;
        let pod = &self.world.pods[p.0 as usize];
        let (j, task, index, replace) = (pod.job, pod.task as usize, pod.index, pod.replace_on_release);
        let phase = self.world.jobs[j.0 as usize].phase;
        if replace && !phase.is_terminal() && phase != JobPhase::Restarting {
            let job = &mut self.world.jobs[j.0 as usize];
            job.pods.retain(|&q| q != p);
            self.forget_pod(p);
            self.world.create_pod(j, task, index, self.now);
        }
        self.maybe_restart(j);
        self.maybe_retire(j);
    }

    /// Re-evaluates a job after its pods changed: start, stop or re-speed its
    /// progress, create dependent tasks, update its PodGroup phase.
    fn refresh_job(&mut self, j: JobId) {
        if self.refresh_job_keeping_phase(j) {
            self.update_pod_group_phase(j);
        }
    }

    /// [`Engine::refresh_job`] but the PodGroup phase; false for a finished job.
    fn refresh_job_keeping_phase(&mut self, j: JobId) -> bool {
        let Some(job) = self.world.jobs.get(j.0 as usize) else { return false };
        if job.phase.is_terminal() {
            return false;
        }
        let runnable = job.count(PodStatus::Running) + job.count(PodStatus::Succeeded) >= job.spec.min_available.max(1)
            && job.phase != JobPhase::Restarting;
        match (job.is_progressing(), runnable) {
            (false, true) => self.start_progress(j),
            (true, false) => {
                self.stop_progress(j, true);
                self.set_phase(j, JobPhase::Pending);
            }
            (true, true) => {
                // Placement may have changed: credit, then continue at the new speed.
                self.stop_progress(j, false);
                self.start_progress(j);
            }
            (false, false) => {}
        }
        self.create_dependent_pods(j);
        true
    }

    fn update_pod_group_phase(&mut self, j: JobId) {
        let job = &self.world.jobs[j.0 as usize];
        let scheduled = job.count(PodStatus::Running)
            + job.count(PodStatus::Succeeded)
            + job.count(PodStatus::Failed)
            + job.count(PodStatus::Releasing);
        let new = if scheduled >= job.spec.min_available.max(1) {
            if job.count(PodStatus::Running) + job.count(PodStatus::Releasing) == 0 {
                PodGroupPhase::Completed
            } else {
                PodGroupPhase::Running
            }
        } else if job.pg_phase != PodGroupPhase::Inqueue {
            PodGroupPhase::Pending
        } else {
            PodGroupPhase::Inqueue
        };
        if new != job.pg_phase {
            self.world.set_pg_phase(j, new);
            self.emit(Decision {
                session: self.stats.sessions,
                t: self.now,
                action: "session-close",
                kind: DecisionKind::Phase,
                job: j,
                pod: None,
                node: None,
                phase: Some(new),
                reason: Cow::Borrowed(""),
            });
        }
    }

    fn set_phase(&mut self, j: JobId, phase: JobPhase) {
        self.world.jobs[j.0 as usize].phase = phase;
    }

    fn start_progress(&mut self, j: JobId) {
        let nodes = self.world.job_nodes(j);
        let mut speed = self.runtime.speed_ppm(&self.world, j, &nodes).clamp(1, FULL_SPEED_PPM);
        if self.speeds.uneven() && !self.runtime.prices_compute(j) {
            let gpus = self.world.jobs[j.0 as usize].allocated.gpu_milli() > 0;
            speed = crate::speed::NodeSpeeds::apply(speed, self.speeds.of(&self.world.cluster, &nodes, gpus));
        }
        let tier = self.world.cluster.topology.highest_tier(&nodes);
        let now = self.now;
        let job = &mut self.world.jobs[j.0 as usize];
        job.nodes_spanned = nodes.len() as u32;
        job.highest_tier = tier;
        if job.first_start.is_none() {
            job.first_start = Some(now);
        }
        job.phase = JobPhase::Running;
        job.progress.since = Some(now);
        // A stopped job's term is 0 (stop_progress clears it), so set_speed adds the full term.
        self.set_speed(j, speed);
        self.running_jobs += 1;
        self.reprice_due |= self.runtime.coupled();
    }

    /// Credits work done since the last speed change.
    fn credit(&mut self, j: JobId) {
        let now = self.now;
        let job = &mut self.world.jobs[j.0 as usize];
        let p = &mut job.progress;
        let Some(since) = p.since else { return };
        let elapsed = now.since(since).micros() as u128;
        let work = (elapsed * p.speed_ppm as u128 / FULL_SPEED_PPM as u128) as u64;
        let ideal_elapsed = elapsed as u64;
        p.done = (p.done + work).min(job.spec.duration.micros());
        let gpus = job.allocated.gpu_milli().max(0) as u128;
        p.comm_gpu_us += (ideal_elapsed - work.min(ideal_elapsed)) as u128 * gpus / 1000;
        if let Some(c) = job.spec.checkpoint_interval.filter(|c| c.micros() > 0) {
            p.checkpointed = p.done / c.micros() * c.micros();
        }
        p.since = Some(now);
    }

    /// Stops progress; with `lose`, work since the last checkpoint is lost.
    fn stop_progress(&mut self, j: JobId, lose: bool) {
        if !self.world.jobs[j.0 as usize].is_progressing() {
            return;
        }
        self.credit(j);
        let job = &mut self.world.jobs[j.0 as usize];
        let gpus = job.spec.total_gpus().max(0) as u128;
        let p = &mut job.progress;
        p.since = None;
        p.generation += 1;
        self.effective_milli_ppm -= std::mem::take(&mut p.effective_term);
        self.running_jobs -= 1;
        self.reprice_due |= self.runtime.coupled();
        if lose {
            let lost = p.done - p.checkpointed;
            p.done = p.checkpointed;
            p.lost_gpu_us += lost as u128 * gpus;
        }
    }

    fn complete(&mut self, j: JobId) {
        self.credit(j);
        let job = &mut self.world.jobs[j.0 as usize];
        job.progress.done = job.spec.duration.micros();
        job.progress.since = None;
        job.progress.generation += 1;
        self.effective_milli_ppm -= std::mem::take(&mut job.progress.effective_term);
        self.running_jobs -= 1;
        self.reprice_due |= self.runtime.coupled();
        let pods: Vec<PodId> = job.pods.clone();
        for p in pods {
            match self.world.pods[p.0 as usize].status {
                PodStatus::Running => {
                    self.record_pod_end(p, EndReason::Completed);
                    let node = self.world.pods[p.0 as usize].node;
                    self.world.transition(p, PodStatus::Succeeded, node);
                }
                PodStatus::Pending => self.world.transition(p, PodStatus::Deleted, None),
                _ => {}
            }
            self.world.pods[p.0 as usize].replace_on_release = false;
        }
        self.set_phase(j, JobPhase::Completed);
        self.world.jobs[j.0 as usize].end = Some(self.now);
        self.world.set_pg_phase(j, PodGroupPhase::Completed);
        self.world.deactivate(j);
        self.jobs_done += 1;
        self.dirty = true;
        self.ended(j);
        self.maybe_retire(j);
    }

    fn record_pod_end(&mut self, p: PodId, reason: EndReason) {
        let pod = &self.world.pods[p.0 as usize];
        if let Some(node) = pod.node {
            let r = PodRecord {
                pod: p,
                job: pod.job,
                task: pod.task,
                index: pod.index,
                node,
                gpu_milli: pod.req.gpu_milli(),
                gpu_devices: pod.gpu_devices,
                start: pod.started,
                end: self.now,
                reason,
            };
            // `--explain` pods' intervals are kept for the end-of-run summary.
            let watched = self.explain.as_ref().is_some_and(|e| e.watches(r.job, r.task, r.index));
            match &mut self.recorder {
                Some(rec) => {
                    rec.pod_ended(&self.world, &r);
                    if watched {
                        self.pods_out.push(r);
                    }
                }
                None => self.pods_out.push(r),
            }
        }
    }
}
