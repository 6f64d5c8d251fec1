//! Tiresias's book of the active jobs, kept between sessions: per job its
//! attained service, the service promotions forgave, its runs and waits and its
//! queue; in (queue, submit time, id) order, the jobs with Pending pods and
//! those with Running pods (the victims' candidates); and the next instant at
//! which each job's queue may change (a running job's threshold at its speed, a
//! waiting job's promotion).
//!
//! A job's queue changes only when the job changes (submitted, pods created or
//! changing status, progress started, stopped or re-priced: the World's journal,
//! [`Session::take_job_changes`]) or at that instant, so a session refreshes those
//! jobs alone and its cost follows what changed, not the number of active jobs.
//! The exhaustive mode (`--exhaustive`) refreshes every active job in every
//! session: the reference the equivalence tests compare against.
//!
//! The waiting jobs are also filed by [`Class`] (their one task's request and the
//! pods they still need), so that a session's walk can pass over a whole class
//! once a gang of it failed (`walk.rs`).

use crate::baselines::gang;
use lahar_core::model::job::{JobId, PodStatus, TaskSpec};
use lahar_core::model::progress::wall_time;
use lahar_core::session::Session;
use lahar_core::util::time::SimTime;
use lahar_core::world::Job;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// A job's place in the order: (queue, submit time, id).
pub(super) type Key = (usize, SimTime, JobId);

/// What the session's memo of failed gangs compares between waiting jobs: the
/// request of the job's one task (its index in the World's list of distinct
/// requests) and the pods the job still needs.
pub(super) type Class = (u32, u32);

/// The job's [`Class`]: for a job with one task, no node filter and no
/// tolerations whose gang is not yet whole, none of whose pods is gated and
/// which is not being restarted whole, its task's request and the pods it needs
/// (`minAvailable`, at least 1, minus its Allocated, Running and Succeeded
/// pods); None otherwise. Without tolerations, every node's taints repel all
/// jobs of a class alike, so the memo holds while the cluster has taints (they
/// change only between sessions). Inter-pod affinity, which the memo also
/// excludes, is the caller's to ask.
pub(super) fn class_of(ssn: &Session<'_>, j: JobId) -> Option<Class> {
    let job = ssn.job(j);
    let untolerating = |t: &TaskSpec| t.tolerations.is_empty() || ssn.planted.wrong_class_tolerations;
    match job.spec.tasks.as_slice() {
        [t] if !t.has_node_filter()
            && untolerating(t)
            && !gang::is_whole(job)
            && !job.restart_all
            && ssn.gating(j).is_none() =>
        {
            Some((job.tasks[0].shape, job.spec.min_available.max(1).saturating_sub(job.ready_count())))
        }
        _ => None,
    }
}

/// One of the ordered sets of waiting jobs a walk reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Stream {
    /// Every waiting job.
    All,
    /// The waiting jobs filed without a class.
    Unclassed,
    /// The waiting jobs of one class.
    Class(Class),
    /// The waiting jobs whose PodGroup waits for admission (the walk's own
    /// list, not the book's).
    Admission,
}

/// What the scheduler remembers of a job between sessions.
#[derive(Debug, Clone)]
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
    /// Attained service (GPU·µs) at its last refresh.
    attained: u128,
    /// Its submit time (the order's second key).
    submit: SimTime,
    /// Its queue as filed (in `waiting`, `running`), once filed.
    level: Option<usize>,
    /// Filed in `waiting` (it had Pending pods at its last refresh).
    pending: bool,
    /// It had Running pods at its last refresh.
    running: bool,
    /// Its entry in `timers`.
    timer: Option<SimTime>,
    /// Its class as filed in `classed` (None: in `unclassed`), while pending.
    class: Option<Class>,
}

impl Track {
    fn new(job: &Job) -> Track {
        Track {
            offset: 0,
            run_start: None,
            waited: 0,
            wait_start: None,
            promotions: 0,
            gpus: job.gpus().max(1) as u128,
            attained: 0,
            submit: job.spec.submit,
            level: None,
            pending: false,
            running: false,
            timer: None,
            class: None,
        }
    }
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
    /// Queue service (GPU·µs): attained service minus what promotions forgave.
    fn service(&self) -> u128 {
        self.attained.saturating_sub(self.offset)
    }
}

/// Attained service (GPU·µs) of the job at `now`: GPUs × (work done + work lost).
fn attained(job: &Job, now: SimTime, gpus: u128) -> u128 {
    gpus * job.work_done_at(now) as u128 + job.progress.lost_gpu_us
}

/// The book (see the module's documentation).
#[derive(Debug, Clone)]
pub(super) struct Book {
    /// Thresholds in GPU·µs, ascending.
    thresholds: Vec<u128>,
    /// `PROMOTE_KNOB` (0: no starvation guard).
    knob: u64,
    /// Per active job (looked up, never iterated for a decision).
    jobs: FxHashMap<JobId, Track>,
    /// The filed jobs that had Pending pods at their last refresh.
    waiting: BTreeSet<Key>,
    /// `waiting` by the jobs' classes at their last refresh.
    classed: BTreeMap<Class, BTreeSet<Key>>,
    /// The rest of `waiting`.
    unclassed: BTreeSet<Key>,
    /// The filed jobs that had Running pods at their last refresh: within a
    /// session, a superset of the jobs with Running pods (only the engine,
    /// between sessions, starts pods; every change of a pod's status names its
    /// job in the World's journal, read at the next refresh).
    running: BTreeSet<Key>,
    /// When a filed job's queue may change next.
    timers: BTreeSet<(SimTime, JobId)>,
    /// Wake-ups already requested and still ahead (not requested twice).
    wakeups: BTreeSet<SimTime>,
    /// The World's journal, drained each session.
    changed: Vec<JobId>,
    /// Jobs whose queue changed since [`Book::take_moved`] was last called.
    moved: Vec<JobId>,
}

impl Book {
    pub(super) fn new(thresholds: Vec<u128>, knob: u64) -> Book {
        Book {
            thresholds,
            knob,
            jobs: FxHashMap::default(),
            waiting: BTreeSet::new(),
            classed: BTreeMap::new(),
            unclassed: BTreeSet::new(),
            running: BTreeSet::new(),
            timers: BTreeSet::new(),
            wakeups: BTreeSet::new(),
            changed: Vec::new(),
            moved: Vec::new(),
        }
    }

    /// The queue (0 = highest priority) of a queue service.
    pub(super) fn level_of(&self, service: u128) -> usize {
        self.thresholds.iter().take_while(|&&t| service >= t).count()
    }

    /// The job's queue as the book has it (its attained service now if the book
    /// does not know it).
    pub(super) fn queue_of(&self, ssn: &Session<'_>, j: JobId) -> usize {
        match self.jobs.get(&j) {
            Some(t) => self.level_of(t.service()),
            None => {
                let job = ssn.job(j);
                self.level_of(attained(job, ssn.now(), job.gpus().max(1) as u128))
            }
        }
    }

    /// Promotions the starvation guard gave the job (while it is active).
    pub(super) fn promotions(&self, j: JobId) -> u32 {
        self.jobs.get(&j).map_or(0, |t| t.promotions)
    }

    /// The queue the job is filed under, if it is.
    pub(super) fn filed_level(&self, j: JobId) -> Option<usize> {
        self.jobs.get(&j).and_then(|t| t.level)
    }

    /// The jobs whose queue changed since the last call (repeats possible).
    pub(super) fn take_moved(&mut self) -> Vec<JobId> {
        std::mem::take(&mut self.moved)
    }

    /// The filed jobs that had Running pods at their last refresh, in order.
    pub(super) fn running(&self) -> &BTreeSet<Key> {
        &self.running
    }

    /// The first job of `stream` after `after` (from its start: None).
    pub(super) fn next_in(&self, stream: Stream, after: Option<Key>) -> Option<Key> {
        let set = match stream {
            Stream::All => &self.waiting,
            Stream::Unclassed => &self.unclassed,
            Stream::Class(c) => self.classed.get(&c)?,
            Stream::Admission => return None,
        };
        match after {
            None => set.first().copied(),
            Some(k) => set.range((Bound::Excluded(k), Bound::Unbounded)).next().copied(),
        }
    }

    /// The classes with waiting jobs, in order.
    pub(super) fn classes(&self) -> impl Iterator<Item = Class> + '_ {
        self.classed.keys().copied()
    }

    /// The class the job is filed under in `waiting` (None: unclassed or not
    /// waiting).
    pub(super) fn filed_class(&self, j: JobId) -> Option<Class> {
        self.jobs.get(&j).and_then(|t| t.class)
    }

    /// The job's place in `waiting`, if it is filed there.
    pub(super) fn waiting_key(&self, j: JobId) -> Option<Key> {
        let t = self.jobs.get(&j)?;
        Some((t.level?, t.submit, j)).filter(|_| t.pending)
    }

    /// Brings the book to the session's instant: the jobs the journal names and
    /// those whose instant came (every active job in the exhaustive mode, and at
    /// the first session) are refreshed; ended jobs leave it.
    pub(super) fn open(&mut self, ssn: &mut Session<'_>) {
        let now = ssn.now();
        let mut changed = std::mem::take(&mut self.changed);
        let follow = !ssn.is_exhaustive() && ssn.take_job_changes(&mut changed);
        if follow {
            // A deliberately stale book (tests) lets no instant come.
            while let Some(&(at, j)) = self.timers.first().filter(|_| !ssn.planted.stale_scores) {
                if at > now {
                    break;
                }
                self.timers.pop_first();
                changed.push(j);
            }
            changed.sort_unstable();
            changed.dedup();
        } else {
            let mut gone: Vec<JobId> = self.jobs.keys().copied().filter(|&j| !ssn.is_active(j)).collect();
            gone.sort_unstable();
            for j in gone {
                self.forget(j);
            }
            changed.clear();
            changed.extend(ssn.jobs());
        }
        for &j in &changed {
            self.refresh(ssn, j);
        }
        self.changed = changed;
        while self.wakeups.first().is_some_and(|&t| t <= now) {
            self.wakeups.pop_first();
        }
    }

    /// The job's track (a new one for a job not seen before), its attained
    /// service read now.
    fn observe(&mut self, ssn: &Session<'_>, j: JobId) -> &mut Track {
        let job = ssn.job(j);
        let t = self.jobs.entry(j).or_insert_with(|| Track::new(job));
        t.attained = attained(job, ssn.now(), t.gpus);
        t
    }

    /// Drops an ended job.
    fn forget(&mut self, j: JobId) {
        let Some(t) = self.jobs.remove(&j) else { return };
        if let Some(level) = t.level {
            self.unfile((level, t.submit, j), t.pending, t.running, t.class);
        }
        if let Some(at) = t.timer {
            self.timers.remove(&(at, j));
        }
    }

    /// Records the job's runs that started or ended, promotes it if the guard is
    /// due, and files it under its queue with its next instant.
    fn refresh(&mut self, ssn: &mut Session<'_>, j: JobId) {
        if !ssn.is_active(j) {
            self.forget(j);
            return;
        }
        let now = ssn.now();
        let progressing = ssn.job(j).is_progressing();
        let t = self.observe(ssn, j);
        match (progressing, t.run_start) {
            (true, None) => t.start(now),
            (false, Some(_)) => t.stop(now),
            _ => {}
        }
        // Rule 1, the starvation guard.
        if !progressing && self.promotion_due(j).is_some_and(|due| due <= now) {
            let t = self.jobs.get_mut(&j).expect("filed above");
            t.offset = t.attained;
            t.waited = 0;
            t.wait_start = Some(now);
            t.promotions += 1;
        }
        self.file_as_now(ssn, j);
        let at = match self.jobs[&j].run_start {
            Some(_) => self.crossing(ssn.job(j), j),
            None => self.promotion_due(j),
        };
        self.set_timer(ssn, j, at);
    }

    /// Files the job with its pods as they are now: waiting (under its class)
    /// if it has Pending pods, running if it has Running ones; a job whose
    /// queue changed is noted as moved.
    fn file_as_now(&mut self, ssn: &Session<'_>, j: JobId) {
        let job = ssn.job(j);
        let (pending, running) = (job.count(PodStatus::Pending) > 0, job.count(PodStatus::Running) > 0);
        let class = if pending { class_of(ssn, j) } else { None };
        if self.file(j, pending, running, class) {
            self.moved.push(j);
        }
    }

    /// Files the job under its queue now: in `waiting` (and under `class`) if
    /// `pending`, in `running` if `running`. True if its queue changed.
    fn file(&mut self, j: JobId, pending: bool, running: bool, class: Option<Class>) -> bool {
        let t = &self.jobs[&j];
        let (old, was_pending, was_running, submit, was) = (t.level, t.pending, t.running, t.submit, t.class);
        let level = self.level_of(t.service());
        if let Some(old) = old
            && (old != level || was_pending != pending || was_running != running || was != class)
        {
            self.unfile((old, submit, j), was_pending, was_running, was);
        }
        if pending {
            let key = (level, submit, j);
            self.waiting.insert(key);
            match class {
                Some(c) => self.classed.entry(c).or_default().insert(key),
                None => self.unclassed.insert(key),
            };
        }
        if running {
            self.running.insert((level, submit, j));
        }
        let t = self.jobs.get_mut(&j).expect("filed");
        t.level = Some(level);
        t.pending = pending;
        t.running = running;
        t.class = class;
        old.is_some_and(|old| old != level)
    }

    /// Takes a job's entries out of `waiting` (and its class's set) and `running`.
    fn unfile(&mut self, key: Key, pending: bool, running: bool, class: Option<Class>) {
        if pending {
            self.waiting.remove(&key);
            match class {
                Some(c) => {
                    if let Some(set) = self.classed.get_mut(&c) {
                        set.remove(&key);
                        if set.is_empty() {
                            self.classed.remove(&c);
                        }
                    }
                }
                None => {
                    self.unclassed.remove(&key);
                }
            }
        }
        if running {
            self.running.remove(&key);
        }
    }

    /// Moves the job's timer to `at` (none if it is not ahead) and requests a
    /// session then.
    fn set_timer(&mut self, ssn: &mut Session<'_>, j: JobId, at: Option<SimTime>) {
        let now = ssn.now();
        let at = at.filter(|&at| at > now);
        let t = self.jobs.get_mut(&j).expect("filed");
        if t.timer == at {
            return;
        }
        if let Some(old) = std::mem::replace(&mut t.timer, at) {
            self.timers.remove(&(old, j));
        }
        if let Some(at) = at {
            self.timers.insert((at, j));
            if self.wakeups.insert(at) {
                ssn.request_wakeup(at);
            }
        }
    }

    /// The first instant at which the running job's queue service reaches its
    /// queue's threshold at its current speed, from the instant its progress was
    /// last anchored (a start, a speed change, the end of a pause): a function of
    /// the job's progress, so every session finds the same instant. None in the
    /// last queue or while it is not progressing.
    fn crossing(&self, job: &Job, j: JobId) -> Option<SimTime> {
        let t = &self.jobs[&j];
        let threshold = *self.thresholds.get(self.level_of(t.service()))?;
        let p = &job.progress;
        let since = p.since?;
        let from = p.resume_at.map_or(since, |r| r.max(since));
        let at_from = t.gpus * p.done.min(job.spec.duration.micros()) as u128 + p.lost_gpu_us;
        let need = (threshold + t.offset).saturating_sub(at_from);
        let work = need.div_ceil(t.gpus).min(u64::MAX as u128) as u64;
        Some(SimTime(from.micros().saturating_add(wall_time(work, p.speed_ppm))))
    }

    /// When the waiting job `j` becomes due for promotion, if the guard applies.
    fn promotion_due(&self, j: JobId) -> Option<SimTime> {
        let t = self.jobs.get(&j)?;
        let w = t.wait_start?;
        if self.knob == 0 || t.run_start.is_some() || self.level_of(t.service()) == 0 {
            return None;
        }
        // Run time since the last promotion: queue service ÷ GPUs (the authors'
        // simulator's `executed_time`).
        let exec = (t.service() / t.gpus).min(u64::MAX as u128) as u64;
        if exec == 0 {
            return None;
        }
        let left = exec.saturating_mul(self.knob).saturating_sub(t.waited);
        Some(SimTime(w.micros().saturating_add(left)))
    }

    /// This session placed the job (a run starts now): until its progress starts,
    /// its threshold is expected at full speed from now. It is filed again with
    /// its pods as they are now: a claim bound at the session's start, before
    /// the walk, leaves a job whole (no class) that the book filed with one.
    pub(super) fn started(&mut self, ssn: &mut Session<'_>, j: JobId) {
        let now = ssn.now();
        let t = self.observe(ssn, j);
        t.start(now);
        let service = t.service();
        let gpus = t.gpus;
        let at = self.thresholds.get(self.level_of(service)).map(|&threshold| {
            let work = (threshold - service).div_ceil(gpus).min(u64::MAX as u128) as u64;
            SimTime(now.micros().saturating_add(work))
        });
        self.set_timer(ssn, j, at);
        if !ssn.planted.stale_claim_class {
            self.file_as_now(ssn, j);
        }
    }

    /// This session evicted the job (its run ends now).
    pub(super) fn stopped(&mut self, ssn: &mut Session<'_>, j: JobId) {
        let now = ssn.now();
        self.observe(ssn, j).stop(now);
        let at = self.promotion_due(j);
        self.set_timer(ssn, j, at);
    }
}
