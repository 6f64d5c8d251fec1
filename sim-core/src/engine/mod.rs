//! The discrete-event engine.
//!
//! Events are ordered by `(time, sequence)`. After all events of one instant are
//! handled, a scheduling session runs if anything that can change a decision
//! happened (an arrival, a completion, a pod released or created, a wakeup), or, with
//! `schedule_period`, at the next multiple of the period (one session per tick).
//! A session that bound or evicted a pod, or whose close changed what the next
//! finds, is always followed by another (at the same instant without a period, at
//! the next tick with one), as Volcano's periodic loop would run it: a
//! gang completed by backfill's BestEffort binds is allocated then, not at some
//! unrelated later event. No session runs when nothing changed. A running job makes
//! progress at a speed set by its placement ([`RuntimeModel`]); when its placement
//! changes, the work done at the old speed is credited and its finish event is
//! rescheduled (stale finish events are dropped by a generation counter).

mod config;
mod controller;
mod crashloop;
mod faults;
mod kubelet;

use controller::Lifecycle;
mod operate;
mod output;
mod policies;
mod restart;
mod running;
mod serving;

pub use crate::model::progress::FULL_SPEED_PPM;
pub use crate::record::{
    EndReason, FaultRecord, OperationRecord, PodRecord, RunStats, Sample, ScaleRecord, ServiceSample, ServiceStats,
    ServingImpact,
};
pub use crate::runtime_model::{IdealRuntime, RuntimeModel};
pub use config::EngineConfig;
pub use output::RunOutput;

use crate::arrivals::{Arrivals, Source};
use crate::event::EventQueue;
use crate::explain::Explain;
use crate::model::ids::{JobId, PodId};
use crate::model::job::PodStatus;
use crate::model::recurring::Due;
use crate::record::{Outcome, Recorder};
use crate::session::{Decision, Scheduler, Session};
use crate::util::rng::{RngStreams, StreamRng};
use crate::util::time::SimTime;
use crate::world::World;

#[derive(Clone, Copy, Debug)]
enum Event {
    Finish(JobId, u64),
    PodReleased(PodId),
    Session,
    Wakeup,
    /// A job held back until now (a recurring object's run that Forbid held, a
    /// JobFlow's job whose dependencies completed): its controller creates it.
    Create(JobId),
    /// The fault plan's listed outage starts.
    OutageStart(u32),
    /// A live outage ends.
    OutageEnd(u32),
    /// A random rule's unit fails: `(rule, unit)`.
    RandomFail(u32, u32),
    /// A drain's deadline: what still runs on its nodes is evicted.
    DrainDeadline(u32),
    /// A pod of a task with its own run time, its container started at the
    /// given instant, has run it (stale if the pod stopped meanwhile).
    PodDone(PodId, SimTime),
    /// A pod's container, started at the given instant, exits with a failure
    /// (`lahar.io/fail-after`; stale if the pod stopped meanwhile).
    PodExit(PodId, SimTime),
    /// The kubelet restarts in place a pod's container that exited at the
    /// given instant (stale if the pod stopped meanwhile).
    ContainerRestart(PodId, SimTime),
    /// The job controller syncs a job after the instant's pod updates (a
    /// VolcanoJob's `minSuccess` is counted then, over every pod that ended at
    /// this instant).
    JobSync(JobId),
    /// A lifecycle policy's timeout has come: its delayed action (by slot).
    PolicyDue(u32),
    /// An operator's action of the timeline (by index).
    Operate(u32),
    /// A job's deadline (`JobSpec::deadline`) came: unless it ended, it fails.
    Deadline(JobId),
    /// A bound service's HorizontalPodAutoscaler syncs (by index).
    Autoscale(u32),
    /// KEDA polls the triggers of a bound service's ScaledObject (by index).
    Activate(u32),
    /// A service's pod, started at the given instant, has run its start-up
    /// delay and serves (stale if the pod stopped meanwhile).
    Ready(PodId, SimTime),
    /// A RayService's Serve replicas, controller and autoscaler wake (by
    /// bound service).
    RayServe(u32),
}

/// Whether job `j` still progresses towards the finish of `generation` (its
/// `Finish` event is not stale).
fn finishes(world: &World, j: JobId, generation: u64) -> bool {
    world.jobs.get(j).is_some_and(|job| job.progress.generation == generation && job.is_progressing())
}

/// Whether pod `p`'s container still runs the run that started at `started`
/// (its run-time or exit timer is not stale).
fn container_runs_since(world: &World, p: PodId, started: SimTime) -> bool {
    world.pods.get(p).is_some_and(|pod| pod.status == PodStatus::Running && !pod.down && pod.up_since == started)
}

/// Whether pod `p`'s container, which exited at `at`, still waits for its
/// restart in place (its restart event is not stale).
fn waits_restart(world: &World, p: PodId, at: SimTime) -> bool {
    world.pods.get(p).is_some_and(|pod| pod.status == PodStatus::Running && pod.down && pod.last_crash == at)
}

/// Whether pod `p` still runs the run that started at `started` (a timed event
/// about it is not stale).
fn runs_since(world: &World, p: PodId, started: SimTime) -> bool {
    world.pods.get(p).is_some_and(|pod| pod.status == PodStatus::Running && pod.started == started)
}

/// Makes the scheduler a conf edit of the timeline hands the run to
/// ([`Engine::set_reloads`]).
pub type Reload = Box<dyn Fn() -> Box<dyn Scheduler> + Send>;

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
    /// Steps of the timeline carried out (they come in order).
    operated: usize,
    now: SimTime,
    dirty: bool,
    session_pending: bool,
    /// When the last session ran. With a period, one session per tick: a change
    /// made by a session or its close is found at the next tick, as by Volcano's
    /// next `runOnce`.
    last_session: Option<SimTime>,
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
    /// The scheduler marks jobs not ready at a session's close unschedulable
    /// ([`Scheduler::marks_unschedulable`]): their PodGroups may turn Unknown.
    marks_unschedulable: bool,
    /// The scheduler admits PodGroups before placing their pods
    /// ([`Scheduler::admits_pod_groups`]): controllers that wait for it hold pods back.
    admits_pod_groups: bool,
    /// The last session's close changed what the next session finds: pods were
    /// created for a group it admitted, or a group went back to Pending (enqueue's
    /// candidate again), or, with a period, any phase moved. Another session
    /// follows, as after a bind: Volcano's periodic loop would run one.
    close_changed: bool,
    /// While a session closes: per job (ascending), its pods bound by this
    /// session. Volcano's cache still holds them Binding at the close, and
    /// `getPodGroupPhase` counts them scheduled only at the next one.
    binding: Vec<(JobId, u32)>,
    /// Where records go as they are made, when set (else into `pods_out`,
    /// `samples` and `decisions`).
    recorder: Option<Box<dyn Recorder>>,
    /// Changes of nodes' lost GPU devices (instant, node, devices out after),
    /// without a recorder.
    service: Vec<(SimTime, crate::model::ids::NodeId, u64)>,
    explain: Option<Explain>,
    running_jobs: u32,
    effective_milli_ppm: i128,
    /// Σ milli-GPUs held by progressing jobs (their `running_term`s).
    running_milli: i64,
    /// Set from outside (an interrupt): the run stops before its next instant.
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Jobs started or stopped this instant and the runtime model is coupled.
    reprice_due: bool,
    /// Nodes' relative speeds (jobs the runtime model does not price by GPU).
    speeds: crate::speed::NodeSpeeds,
    /// Recurring objects' runs: what is active, what is held back.
    recurring: crate::model::recurring::Recurring,
    /// JobFlows: the steps completed, the jobs waiting for theirs.
    flows: crate::model::flow::Flows,
    /// Faults: outages in force, random failures' clocks.
    faults: faults::Faults,
    /// events.csv rows, without a recorder.
    faults_out: Vec<FaultRecord>,
    /// Lifecycle policies' actions waiting for their timeouts (freed slots `None`).
    delayed: Vec<Option<policies::Delayed>>,
    /// Per node: out of the cluster (declared `absent`, or removed by the
    /// timeline and not added back).
    absent: Vec<bool>,
    /// Σ nominal milli-GPUs of the absent nodes.
    absent_gpu_milli: i64,
    /// Services and their autoscalers.
    serving: serving::Serving,
    /// services.csv rows, without a recorder.
    service_samples: Vec<ServiceSample>,
    /// scaling.csv rows, without a recorder.
    scaling_out: Vec<ScaleRecord>,
    /// Events ever pushed when the run's tail was last swept
    /// ([`Engine::sweep_tail`]).
    tail_swept: Option<u64>,
    /// What makes the schedulers the timeline's conf edits switch to, by
    /// index ([`crate::timeline::Operation::Conf`]): each edit makes its own
    /// when it comes (however many steps name one conf).
    reloads: Vec<Reload>,
    /// timeline.csv rows, without a recorder.
    operations_out: Vec<OperationRecord>,
    /// What the timeline step being carried out came to, with its note (why
    /// it was missed or ignored; what it deleted), when it says.
    step_note: Option<(Outcome, String)>,
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
        let serving = serving::Serving::new(&cfg.services);
        let marks_unschedulable = scheduler.marks_unschedulable();
        let admits_pod_groups = scheduler.admits_pod_groups();
        let mut events = EventQueue::new();
        for (k, step) in cfg.timeline.iter().enumerate() {
            events.push(step.at, Event::Operate(k as u32));
        }
        let mut engine = Engine {
            marks_unschedulable,
            admits_pod_groups,
            close_changed: false,
            binding: Vec::new(),
            speeds,
            world,
            arrivals,
            jobs_done: 0,
            events,
            scheduler,
            runtime,
            cfg,
            now: SimTime::ZERO,
            operated: 0,
            dirty: false,
            session_pending: false,
            last_session: None,
            wakeups: std::collections::BTreeSet::new(),
            next_sample: SimTime::ZERO,
            rng,
            stats: RunStats::default(),
            pods_out: Vec::new(),
            samples: Vec::new(),
            decisions: Vec::new(),
            phase_due: Vec::new(),
            recorder: None,
            service: Vec::new(),
            explain: None,
            running_jobs: 0,
            effective_milli_ppm: 0,
            running_milli: 0,
            stop: None,
            reprice_due: false,
            recurring: crate::model::recurring::Recurring::default(),
            flows: crate::model::flow::Flows::default(),
            faults: faults::Faults::default(),
            faults_out: Vec::new(),
            delayed: Vec::new(),
            absent: Vec::new(),
            absent_gpu_milli: 0,
            serving,
            service_samples: Vec::new(),
            scaling_out: Vec::new(),
            tail_swept: None,
            reloads: Vec::new(),
            operations_out: Vec::new(),
            step_note: None,
        };
        engine.absent = vec![false; engine.world.cluster.len()];
        for n in engine.cfg.absent_nodes.clone() {
            engine.take_out(n);
        }
        // Nodes absent from the start hold nothing: no session is owed to them.
        engine.dirty = false;
        engine
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
    pub fn set_recorder(&mut self, mut recorder: Box<dyn Recorder>) {
        // Nodes absent from the start went out of service before the recorder came.
        for (t, n, _) in std::mem::take(&mut self.service) {
            recorder.node_service(&self.world, n, t);
        }
        self.recorder = Some(recorder);
    }

    /// What makes the schedulers the timeline's conf edits switch to: edit
    /// [`crate::timeline::Operation::Conf`]`(i)` schedules the sessions from its
    /// instant on with a scheduler `reloads[i]` makes then (an edit without one
    /// is a `timeline-action-ignored` warning).
    pub fn set_reloads(&mut self, reloads: Vec<Reload>) {
        self.reloads = reloads;
    }

    /// Stops the run before its next instant once `stop` is set (an interrupt):
    /// [`Engine::finish`] then ends it at the last instant handled, its open
    /// intervals closed and [`RunStats::interrupted`] set.
    pub fn set_stop(&mut self, stop: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.stop = Some(stop);
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
        loop {
            self.sweep_tail();
            let Some(t) = self.next_time() else { break };
            if self.cfg.horizon.is_some_and(|h| t > h) {
                break;
            }
            if self.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
                self.stats.interrupted = true;
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
                        let mut at = SimTime(t.micros().div_ceil(p) * p);
                        if self.last_session == Some(at) {
                            at = SimTime(at.micros() + p);
                        }
                        self.events.push(at, Event::Session);
                        self.session_pending = true;
                    }
                    Some(_) => {}
                }
            }
            if self.reprice_due {
                self.reprice();
            }
            if self.cfg.check_invariants
                && let Err(e) = self.world.check_invariants()
            {
                panic!("the World's invariants broke at {} s: {e}", t.micros() / 1_000_000);
            }
        }
    }

    /// The submit time of the next job to arrive.
    fn next_arrival_time(&self) -> Option<SimTime> {
        self.arrivals.next_time(&self.world)
    }

    /// The earliest instant with an arrival or a queued event.
    fn next_time(&self) -> Option<SimTime> {
        if self.only_faults_left()
            || self.only_idle_wakeups_left()
            || self.only_serving_left()
            || self.only_timeline_left()
        {
            return None;
        }
        match (self.next_arrival_time(), self.events.peek_time()) {
            (Some(a), Some(e)) => Some(a.min(e)),
            (a, e) => a.or(e),
        }
    }

    /// Once every job has ended and none is still to arrive, drops the queued
    /// timers that can no longer act: a finish, a pod's run or exit, a deadline
    /// or a delayed action of a job that ended before them (a `TaskCompleted:
    /// CompleteJob`, an abort, a deletion). Each would find its job ended and do
    /// nothing, but its instant would stretch the run, and every rate over its
    /// length, past the last thing that happened. Swept again only once events
    /// were pushed since.
    fn sweep_tail(&mut self) {
        let pushed = self.events.pushed();
        if self.tail_swept == Some(pushed) || !self.world.active.is_empty() || self.next_arrival_time().is_some() {
            return;
        }
        self.tail_swept = Some(pushed);
        let (world, delayed) = (&self.world, &self.delayed);
        let ended = |j: JobId| world.jobs.get(j).is_none_or(|job| job.phase.is_terminal());
        self.events.retain(|_, ev| match *ev {
            Event::Finish(j, generation) => finishes(world, j, generation),
            Event::PodDone(p, started) | Event::PodExit(p, started) => container_runs_since(world, p, started),
            Event::ContainerRestart(p, at) => waits_restart(world, p, at),
            Event::Deadline(j) => !ended(j),
            Event::PolicyDue(slot) => {
                delayed.get(slot as usize).and_then(Option::as_ref).is_some_and(|d| !ended(d.job()))
            }
            _ => true,
        });
    }

    /// Whether every job has ended, none is still to arrive, and nothing is
    /// queued but wakeups a scheduler asked for (and random failures, with
    /// everything up): the run is over. A scheduler's timer for a job that has
    /// since ended would otherwise stretch the run, and every rate over its
    /// length, past the last job's end.
    fn only_idle_wakeups_left(&self) -> bool {
        !self.wakeups.is_empty()
            && self.world.active.is_empty()
            && self.faults.in_force == 0
            && self.events.len() == self.wakeups.len() + self.faults.random_queued
            && self.next_arrival_time().is_none()
    }

    /// Whether every job has ended, none is still to arrive, and nothing is
    /// queued but the timeline's steps still to come (with wakeups and random
    /// failures, everything up): the run is over. Such a step acts on no job
    /// (a job it could act on would still be in the system: a suspended one
    /// waiting for its resume is), and its instant would stretch the run, and
    /// every rate over its length, past the last thing that happened to a job;
    /// it is not carried out (the `timeline-steps-not-reached` warning).
    fn only_timeline_left(&self) -> bool {
        let steps = self.cfg.timeline.len() - self.operated;
        steps > 0
            && self.world.active.is_empty()
            && self.faults.in_force == 0
            && self.events.len() == steps + self.wakeups.len() + self.faults.random_queued
            && self.next_arrival_time().is_none()
    }

    /// Whether nothing is queued but services' autoscaler syncs and start-up
    /// ends (with wakeups and random failures, everything up) and no job is
    /// still to arrive: a run without a horizon ends at its last other event, as
    /// a workload without a run time runs until then. With a horizon, they
    /// go on to it.
    fn only_serving_left(&self) -> bool {
        self.serving.queued > 0
            && self.cfg.horizon.is_none()
            && self.faults.in_force == 0
            && self.events.len() == self.serving.queued + self.wakeups.len() + self.faults.random_queued
            && self.next_arrival_time().is_none()
    }

    /// Handles every event at instant `t` (the earliest pending), without
    /// running a session: arrivals first, then queued events.
    fn handle_instant(&mut self, t: SimTime, progress: &mut impl FnMut(SimTime, usize)) {
        self.sample_until(t);
        self.advance_to(t);
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

    /// Closes open intervals and returns the outputs.
    pub fn finish(mut self) -> RunOutput {
        self.sweep_tail();
        let cut_short = self.next_time().is_some();
        if let Some(first) = self.cfg.timeline.get(self.operated)
            && !self.stats.interrupted
        {
            let left = (self.cfg.timeline.len() - self.operated) as u64;
            let why = match self.cfg.max_sessions {
                Some(m) if self.stats.sessions >= m => "its session limit",
                _ if cut_short => "its horizon",
                _ => "nothing was left to happen to a job",
            };
            self.stats.timeline_unreached = Some((left, first.place.clone(), first.at, why));
        }
        // Services are offered their demand until the horizon, events or not;
        // so is a job without a run time that still runs or waits.
        let serving = !self.serving.is_empty();
        let unbounded = || self.world.active.iter().any(|&j| self.world.jobs[j].spec.duration.is_unbounded());
        let end = match self.cfg.horizon {
            Some(h) if (cut_short || serving || unbounded()) && !self.stats.interrupted => h.max(self.now),
            _ => self.now,
        };
        self.advance_to(end);
        // A job whose killed pods are still going ends with the run.
        let ending: Vec<JobId> = self.world.jobs.iter_ids().filter(|(_, j)| j.ending).map(|(j, _)| j).collect();
        for j in ending {
            self.finish_ending(j, true);
        }
        // Credit the work of jobs still running so their progress is accurate.
        let running: Vec<JobId> =
            self.world.active.iter().copied().filter(|j| self.world.jobs[*j].is_progressing()).collect();
        for j in running {
            self.credit(j);
        }
        // Intervals still open end with the run (before the last samples, which see
        // the state after every change at their instant).
        let open: Vec<PodId> =
            self.world.pods.iter_ids().filter(|(_, p)| p.status == PodStatus::Running).map(|(i, _)| i).collect();
        for p in open {
            self.record_pod_end(p, EndReason::Running);
        }
        self.sample_until(SimTime(end.micros() + 1));
        self.finish_services(end);
        self.stats.end = end;
        self.stats.cut_short = cut_short;
        for j in self.recurring.finish() {
            self.drop_run(j);
        }
        self.stats.recurring = std::mem::take(&mut self.recurring.counts);
        let world = &self.world;
        let (never, counts) = self
            .flows
            .finish(|j| world.jobs[j].spec.flow.as_ref().map(|f| std::sync::Arc::clone(&f.step)).unwrap_or_default());
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
            faults: self.faults_out,
            faults_enabled: self.faults.enabled,
            service: self.service,
            service_samples: self.service_samples,
            scaling: self.scaling_out,
            operations: self.operations_out,
        }
    }

    /// Moves the clock to `t`, integrating what the samples cannot give exactly.
    fn advance_to(&mut self, t: SimTime) {
        let dt = t.micros().saturating_sub(self.now.micros()) as u128;
        self.stats.releasing_milli_us += self.world.gpu_releasing_milli.max(0) as u128 * dt;
        self.stats.absent_milli_us += self.absent_gpu_milli.max(0) as u128 * dt;
        self.now = t;
    }

    fn sample_until(&mut self, t: SimTime) {
        let step = self.cfg.sample_interval.micros().max(1);
        while self.next_sample < t {
            let q = self.world.queues.iter().map(|q| q.allocated.gpu_milli()).collect();
            let running = self.running_jobs;
            let held = self.world.gpu_used_milli - self.world.gpu_releasing_milli;
            let s = Sample {
                t: self.next_sample,
                gpu_allocated_milli: held,
                gpu_effective_milli: (self.effective_milli_ppm / FULL_SPEED_PPM as i128) as i64,
                gpu_stalled_milli: held - self.running_milli,
                gpu_releasing_milli: self.world.gpu_releasing_milli,
                jobs_pending: self.world.active.len() as u32 - running,
                jobs_running: running,
                queue_gpu_milli: q,
                gpu_unavailable_milli: self.gpus_unavailable_milli(),
                gpu_serving_milli: self.serving.gpu_milli,
            };
            match &mut self.recorder {
                Some(r) => r.sample(&self.world, &s),
                None => self.samples.push(s),
            }
            if !self.serving.is_empty() {
                self.sample_services(self.next_sample);
            }
            self.next_sample = SimTime(self.next_sample.micros() + step);
        }
    }

    fn handle(&mut self, ev: Event) {
        match ev {
            Event::Finish(j, generation) => {
                // A stale finish of a job already ended (and maybe retired) is dropped.
                if finishes(&self.world, j, generation) {
                    self.on(Lifecycle::WorkDone(j));
                }
            }
            Event::PodReleased(p) => self.on(Lifecycle::PodReleased(p)),
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
                self.world.jobs[j].spec.submit = self.now;
                if let Some(r) = self.world.jobs[j].spec.recurrence.clone() {
                    self.recurring.created(j, &r);
                }
                self.on(Lifecycle::JobArrived(j));
            }
            Event::OutageStart(k) => self.trace_outage(k),
            Event::OutageEnd(k) => self.end_outage(k),
            Event::RandomFail(r, u) => self.random_failure(r, u),
            Event::DrainDeadline(k) => self.drain_deadline(k),
            Event::JobSync(j) => self.on(Lifecycle::JobSync(j)),
            Event::PolicyDue(slot) => self.policy_due(slot),
            Event::Operate(k) => self.operate(k as usize),
            Event::Deadline(j) => self.on(Lifecycle::Deadline(j)),
            Event::Autoscale(k) => {
                self.serving.queued -= 1;
                self.autoscale(k);
            }
            Event::Activate(k) => {
                self.serving.queued -= 1;
                self.activate(k);
            }
            Event::RayServe(k) => {
                self.serving.queued -= 1;
                self.ray_step(k);
            }
            Event::Ready(p, started) => {
                self.serving.queued -= 1;
                if runs_since(&self.world, p, started) {
                    self.serving_ready(p);
                }
            }
            Event::PodDone(p, started) if container_runs_since(&self.world, p, started) => {
                self.on(Lifecycle::PodSucceeded(p))
            }
            Event::PodExit(p, started) if container_runs_since(&self.world, p, started) => {
                self.on(Lifecycle::PodExited(p))
            }
            Event::ContainerRestart(p, at) if waits_restart(&self.world, p, at) => {
                self.on(Lifecycle::ContainerRestarted(p))
            }
            // The pod stopped since the event was queued.
            Event::PodDone(..) | Event::PodExit(..) | Event::ContainerRestart(..) => {}
        }
    }

    /// Job `j`'s submit time came: it arrives, unless it is a recurring object's
    /// run that the object's concurrency policy holds back or skips.
    fn due(&mut self, j: JobId) {
        if let Some(f) = &self.world.jobs[j].spec.flow
            && !self.flows.due(j, f)
        {
            return;
        }
        let Some(r) = self.world.jobs[j].spec.recurrence.clone() else {
            return self.on(Lifecycle::JobArrived(j));
        };
        let (due, dropped) = self.recurring.due(j, &r, self.now);
        if let Some(d) = dropped {
            self.drop_run(d);
        }
        match due {
            Due::Create => {}
            Due::Replace(old) => {
                for o in old {
                    self.on(Lifecycle::JobReplaced(o));
                }
            }
            Due::Hold => return,
            Due::Skip => return self.drop_run(j),
        }
        self.recurring.created(j, &r);
        self.on(Lifecycle::JobArrived(j));
    }

    /// Forgets a job its controller never creates (a recurring object's run, a
    /// JobFlow's job).
    fn drop_run(&mut self, j: JobId) {
        if self.retiring(j) {
            self.world.jobs.remove(j);
        }
    }

    fn session(&mut self) {
        self.dirty = false;
        self.last_session = Some(self.now);
        self.stats.sessions += 1;
        let idx = self.stats.sessions;
        let mut ssn = Session::new(&mut self.world, self.now, idx, &mut self.rng).exhaustive(self.cfg.exhaustive);
        ssn.planted = self.cfg.planted;
        if self.cfg.planted.wrong_group {
            ssn.break_groups_for_tests();
        }
        if self.cfg.planted.wrong_unfiled {
            ssn.break_unfiled_for_tests();
        }
        if self.cfg.planted.wrong_gates {
            ssn.break_gates_for_tests();
        }
        if self.cfg.planted.wrong_victim_index {
            ssn.break_victim_index_for_tests();
        }
        if self.cfg.planted.wrong_carry {
            ssn.break_victim_log_for_tests();
        }
        if self.cfg.planted.wrong_admitted_log {
            ssn.break_admitted_log_for_tests();
        }
        if self.cfg.planted.wrong_affinity {
            ssn.break_affinity_for_tests();
        }
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
            touched.push(self.world.pods[p].job);
            self.on(Lifecycle::PodBound(p));
        }
        if self.admits_pod_groups {
            self.note_binding(&out.binds);
        }
        for &j in &out.suspended {
            self.save_progress(j);
        }
        for &(pod, by, for_job) in &out.evictions {
            touched.push(self.world.pods[pod].job);
            self.on(Lifecycle::PodEvicted { pod, by, session: idx, for_job });
        }
        for at in out.wakeups {
            self.wake_at(at);
        }
        // A session that bound or evicted something is always followed by another, as
        // Volcano's periodic loop would run one: without a period, at once (the next
        // instant's events cannot change what it finds); with one, at the next tick.
        let followed = !out.binds.is_empty() || !out.evictions.is_empty();
        if followed {
            self.follow_up();
        }
        self.on(Lifecycle::SessionClosed(touched));
        // The work those evictions lost is counted by now.
        self.serving.hit.clear();
        // The next close counts them scheduled: their jobs' phases are re-derived then.
        for (j, _) in std::mem::take(&mut self.binding) {
            self.world.phase_changes.push(j);
        }
        // Pods a controller made for the groups this session admitted are placed by
        // the next session, and the phases the close moved are found by it (a group
        // back at Pending is enqueued again), as Volcano's next periodic one would.
        if std::mem::take(&mut self.close_changed) && !followed {
            self.follow_up();
        }
    }

    /// Counts, per job, the pods this session bound ([`Engine::binding`]).
    fn note_binding(&mut self, binds: &[(PodId, crate::model::ids::NodeId)]) {
        self.binding.clear();
        for &(p, _) in binds {
            self.binding.push((self.world.pods[p].job, 1));
        }
        self.binding.sort_unstable_by_key(|&(j, _)| j);
        self.binding.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 += b.1;
            }
            same
        });
    }

    /// Asks for the session that follows one that changed the cluster: at once
    /// without a period, at the next tick with one.
    fn follow_up(&mut self) {
        match self.cfg.schedule_period {
            None => self.dirty = true,
            Some(p) => {
                let p = p.micros().max(1);
                self.wake_at(SimTime((self.now.micros() / p + 1) * p));
            }
        }
    }

    /// Queues a wakeup at `at` unless one is queued there already.
    fn wake_at(&mut self, at: SimTime) {
        if self.wakeups.insert(at) {
            self.events.push(at, Event::Wakeup);
        }
    }
}
