//! The scheduling Session API: what a policy sees and how it acts.
//!
//! A [`Session`] is one scheduling cycle at one instant. Policies read ordered views
//! of queues, jobs, pods and nodes, and act through [`Statement`]s: `allocate`,
//! `pipeline` and `evict` apply to the session at once (so later decisions in the
//! same session see them, as in Volcano), and the policy then `commit`s or
//! `discard`s the statement whole. A gang is placed by allocating its pods in one
//! statement and committing only if the gang is satisfied.
//!
//! When the session closes, operations neither committed nor discarded are undone
//! (Volcano's pipelined-but-not-ready jobs hold resources only until the session
//! ends), committed pipelines leave the pod Pending, a pod whose last placement of
//! the session was a pipeline after evictions (committed or not) is nominated to
//! its node, committed allocations become Running and committed evictions start
//! the pod's graceful termination.

use crate::model::cluster::{Cluster, Node};

use crate::explain::{Explain, ExplainRow};
use crate::model::ids::NodeId;
use crate::model::ids::QueueId;
use crate::model::ids::{JobId, PodId};
use crate::model::job::{PodGroupPhase, PodStatus};
use crate::model::resource::Resources;
use crate::util::rng::StreamRng;
use crate::util::time::SimTime;
use crate::world::{Job, NodeState, Pod, QueueState, World};
use std::borrow::Cow;

/// A scheduling policy. It is called once per session and acts on the session.
pub trait Scheduler: Send {
    /// Name for reports (`gang-fifo`, `volcano`, `tiresias`...).
    fn name(&self) -> &str;
    /// Runs one scheduling cycle.
    fn schedule(&mut self, ssn: &mut Session<'_>);
    /// True if the policy marks every job that is not ready at a session's close
    /// unschedulable for that session (Volcano's gang plugin, `OnSessionClose`:
    /// `ReadyTaskNum + PendingBestEffortTaskNum < MinAvailable`). Its PodGroup then
    /// turns Unknown while some of its pods run (`getPodGroupPhase`).
    fn marks_unschedulable(&self) -> bool {
        false
    }
    /// True if the policy moves PodGroups out of Pending as a step of its own
    /// (Volcano's enqueue, or allocate without it), before their pods are placed:
    /// a controller that waits for that ([`crate::model::job::JobSpec::pods_once_admitted`])
    /// then holds the job's pods back while its group is Pending. A policy that
    /// admits a job only as it places its pods (the baselines) sees every job's
    /// pods from its submission.
    fn admits_pod_groups(&self) -> bool {
        false
    }
}

/// The kind of a session operation or decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Place a pod on a node's idle resources.
    Allocate,
    /// Place a pod on resources that are being released.
    Pipeline,
    /// Evict a running pod.
    Evict,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OpState {
    Open,
    Committed,
    Discarded,
    /// Discarded as if never made ([`Session::retract`]): no nomination.
    Retracted,
}

#[derive(Clone, Debug)]
struct Op {
    kind: OpKind,
    pod: PodId,
    node: Option<NodeId>,
    prev_status: PodStatus,
    prev_node: Option<NodeId>,
    action: &'static str,
    reason: Cow<'static, str>,
    state: OpState,
    /// The job an eviction makes room for (preempt, reclaim), when known.
    for_job: Option<JobId>,
    /// A pipeline that followed evictions (Volcano's `EvictionOccurred`).
    nominates: bool,
    /// Made in an unfiled statement (undone unfiled too).
    unfiled: bool,
}

/// Swaps a World journal of changed jobs into `into` (whose old contents, cleared,
/// become the journal) and returns true; on the first call (`tracking` off) starts
/// the journal and returns false, `into` empty.
fn drain_journal(into: &mut Vec<JobId>, journal: &mut Vec<JobId>, tracking: &mut bool) -> bool {
    into.clear();
    std::mem::swap(into, journal);
    if !std::mem::replace(tracking, true) {
        into.clear();
        return false;
    }
    true
}

/// A transaction of session operations, committed or discarded whole.
#[derive(Debug, Default)]
#[must_use = "a statement must be committed or discarded"]
pub struct Statement {
    ops: Vec<usize>,
    /// Certain to be discarded: its moves are unfiled
    /// ([`crate::world::World::transition_unfiled`]) and it may not be
    /// committed.
    unfiled: bool,
}

impl Statement {
    /// Number of operations recorded.
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    /// Moves `other`'s operations to the end of this statement (Volcano's
    /// `stmt.Merge`), so they are committed or discarded with it (an unfiled
    /// `other` makes this one unfiled: it may not be committed either).
    pub fn merge(&mut self, other: Statement) {
        self.ops.extend(other.ops);
        self.unfiled |= other.unfiled;
    }
}

/// What a decision row records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecisionKind {
    /// A pod bound to a node.
    Bind,
    /// A pod evicted.
    Evict,
    /// A pod pipelined onto a node.
    Pipeline,
    /// A PodGroup phase change.
    Phase,
}

impl DecisionKind {
    /// Spelling in decisions.csv.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Bind => "bind",
            DecisionKind::Evict => "evict",
            DecisionKind::Pipeline => "pipeline",
            DecisionKind::Phase => "phase",
        }
    }
}

/// One scheduling decision, in the order made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Session number (1-based).
    pub session: u64,
    /// Time.
    pub t: SimTime,
    /// Action that made it (`allocate`, `preempt`...).
    pub action: &'static str,
    /// Kind.
    pub kind: DecisionKind,
    /// Job.
    pub job: JobId,
    /// Pod, for pod decisions.
    pub pod: Option<PodId>,
    /// Node, for bind and pipeline.
    pub node: Option<NodeId>,
    /// New PodGroup phase, for phase rows.
    pub phase: Option<PodGroupPhase>,
    /// Why.
    pub reason: Cow<'static, str>,
}

/// A session operation that could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The pod is not Pending.
    #[error("pod is {0:?}, not Pending")]
    NotPending(PodStatus),
    /// The pod is not running.
    #[error("pod is {0:?}, not Running")]
    NotRunning(PodStatus),
    /// The node lacks idle resources for an allocation.
    #[error("pod does not fit the node's idle resources")]
    NoIdle,
    /// The node lacks future-idle resources for a pipeline.
    #[error("pod does not fit the node's future idle resources")]
    NoFutureIdle,
}

/// The kind of action that evicted a pod: it names the end of the pod's
/// interval in pods.csv.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evictor {
    /// `preempt` or `gangpreempt`.
    Preempt,
    /// `reclaim` or `gangreclaim`.
    Reclaim,
    /// Any other action (`shuffle`, a baseline's own).
    Other,
}

impl Evictor {
    /// The kind of the action named `action`.
    pub fn of_action(action: &str) -> Evictor {
        match action {
            "preempt" | "gangpreempt" => Evictor::Preempt,
            "reclaim" | "gangreclaim" => Evictor::Reclaim,
            _ => Evictor::Other,
        }
    }
}

/// What the engine needs from a closed session.
#[derive(Debug, Default)]
pub struct SessionOutcome {
    /// Committed allocations (pod is Allocated on the node).
    pub binds: Vec<(PodId, NodeId)>,
    /// Committed evictions (pod is Releasing), with the kind of action that
    /// evicted it and the job it made room for, when one was named
    /// ([`Session::evict_for`]).
    pub evictions: Vec<(PodId, Evictor, Option<JobId>)>,
    /// Decisions, in order.
    pub decisions: Vec<Decision>,
    /// Jobs whose PodGroup phase the policy set.
    pub phase_jobs: Vec<JobId>,
    /// Times at which the policy wants another session.
    pub wakeups: Vec<SimTime>,
    /// Jobs that save their work before this session's evictions stop them
    /// ([`Session::suspend`]).
    pub suspended: Vec<JobId>,
}

/// One scheduling cycle.
pub struct Session<'w> {
    world: &'w mut World,
    now: SimTime,
    index: u64,
    action: &'static str,
    journal: Vec<Op>,
    /// Some op of the journal is a pipeline after evictions
    /// ([`Session::pipeline_after_evictions`]).
    nominating: bool,
    outcome: SessionOutcome,
    /// Future-idle resources held for the session ([`Session::hold`]).
    holds: Vec<(NodeId, Resources)>,
    rng: &'w mut StreamRng,
    explain: Option<&'w mut Explain>,
    exhaustive: bool,
    /// The bugs planted for the equivalence tests
    /// ([`crate::engine::EngineConfig::planted`]).
    #[doc(hidden)]
    pub planted: crate::planted::PlantedBugs,
}

impl<'w> Session<'w> {
    /// Opens a session (the engine does this).
    pub fn new(world: &'w mut World, now: SimTime, index: u64, rng: &'w mut StreamRng) -> Self {
        world.settle_numa();
        world.settle_ports();
        world.settle_affinity();
        Session {
            world,
            now,
            index,
            action: "allocate",
            journal: Vec::new(),
            nominating: false,
            outcome: SessionOutcome::default(),
            holds: Vec::new(),
            rng,
            explain: None,
            exhaustive: false,
            planted: crate::planted::PlantedBugs::default(),
        }
    }

    /// With `true`, policies walk everything as Volcano does instead of skipping
    /// work that provably cannot change a decision ([`Session::exhaustive`]).
    pub fn exhaustive(mut self, on: bool) -> Self {
        self.exhaustive = on;
        self
    }

    /// True when policies must not skip work (the reference mode of the
    /// equivalence tests, `lahar run --exhaustive`).
    #[inline]
    pub fn is_exhaustive(&self) -> bool {
        self.exhaustive
    }

    /// Records `--explain` rows for the pods `explain` watches.
    pub fn with_explain(mut self, explain: &'w mut Explain) -> Self {
        self.explain = Some(explain);
        self
    }

    // ---- explain -------------------------------------------------------------------

    /// True if the pod is watched by `--explain` (one branch when nothing is).
    /// Policies record rows for a pod only when this is true.
    #[inline]
    pub fn explaining(&self, p: PodId) -> bool {
        self.explain.as_ref().is_some_and(|e| {
            let pod = &self.world.pods[p];
            e.watches(pod.job, pod.task, pod.index)
        })
    }
    /// True if `--explain` watches any pod in this run.
    pub fn explaining_any(&self) -> bool {
        self.explain.is_some()
    }
    /// True if some pod of the job is watched.
    pub fn explaining_job(&self, j: JobId) -> bool {
        self.explain.as_ref().is_some_and(|e| e.watches_job(j))
    }
    /// The job's pods that are watched, in pod-id order (empty when nothing is watched).
    pub fn explained_pods(&self, j: JobId) -> Vec<PodId> {
        if !self.explaining_job(j) {
            return Vec::new();
        }
        self.world.jobs[j].pods.iter().copied().filter(|&p| self.explaining(p)).collect()
    }
    /// Records an explain row for a watched pod (ignored for other pods).
    pub fn explain(
        &mut self,
        pod: PodId,
        node: Option<NodeId>,
        plugin: impl Into<Cow<'static, str>>,
        passed: Option<bool>,
        reason: impl Into<String>,
        score: Option<f64>,
    ) {
        if !self.explaining(pod) {
            return;
        }
        let pod_state = &self.world.pods[pod];
        let key = (pod_state.job, pod_state.task, pod_state.index);
        let row = ExplainRow {
            session: self.index,
            t: self.now,
            pod,
            node,
            plugin: plugin.into(),
            passed,
            reason: reason.into(),
            score,
        };
        if let Some(e) = self.explain.as_mut() {
            e.record(key, row);
        }
    }

    // ---- views -------------------------------------------------------------------

    /// Current time.
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Session number (1-based).
    pub fn index(&self) -> u64 {
        self.index
    }
    /// The static cluster.
    #[inline]
    pub fn cluster(&self) -> &Cluster {
        &self.world.cluster
    }
    /// Σ allocatable of all nodes.
    pub fn total(&self) -> Resources {
        self.world.cluster.total()
    }
    /// The session's random stream (for documented random tie-breaks).
    pub fn rng(&mut self) -> &mut StreamRng {
        self.rng
    }
    /// All queues, by id.
    pub fn queues(&self) -> &[QueueState] {
        &self.world.queues
    }
    /// One queue.
    #[inline]
    pub fn queue(&self, q: QueueId) -> &QueueState {
        &self.world.queues[q]
    }
    /// Submitted, non-terminal jobs in creation order (submit time, then id).
    pub fn jobs(&self) -> impl Iterator<Item = JobId> + '_ {
        self.world.active.iter().copied()
    }
    /// True if some job has a Pending BestEffort pod (one count the World keeps).
    pub fn any_pending_best_effort(&self) -> bool {
        self.world.pending_best_effort_total > 0
    }
    /// True once a job with its own sla waiting time was submitted.
    pub fn any_sla_waiting(&self) -> bool {
        self.world.sla_jobs
    }
    /// Active jobs that have Pending pods, in creation order.
    pub fn jobs_with_pending(&self) -> impl Iterator<Item = JobId> + '_ {
        self.world.with_pending.iter().copied()
    }
    /// Active jobs that have Pending pods and whose PodGroup is admitted (not
    /// Pending), in creation order: what allocate, backfill, preempt and reclaim
    /// consider. Read from an index; exhaustive sessions filter every job with
    /// pending pods instead.
    pub fn admitted_jobs_with_pending(&mut self) -> Vec<JobId> {
        self.admitted_with_facts().into_iter().map(|(j, _)| j).collect()
    }
    /// [`Session::admitted_jobs_with_pending`] with each job's
    /// [`crate::world::ReachFacts`], copied from one list the World keeps in step.
    pub fn admitted_with_facts(&self) -> Vec<(JobId, crate::world::ReachFacts)> {
        self.admitted_facts().into_owned()
    }

    /// The revisions ([`crate::world::Job::revision`]) of the jobs of
    /// [`Session::admitted_facts`], in the same order; `None` in exhaustive mode,
    /// where that list is made afresh.
    pub fn admitted_revisions(&self) -> Option<&[u64]> {
        (!self.exhaustive).then(|| self.world.admitted.revisions())
    }

    /// [`Session::admitted_with_facts`], borrowed from the World's list when it
    /// can be (a walk that only reads need not copy the backlog each session).
    pub fn admitted_facts(&self) -> Cow<'_, [(JobId, crate::world::ReachFacts)]> {
        if self.exhaustive {
            let w = &*self.world;
            let admitted = |j: &&JobId| w.jobs[**j].pg_phase != PodGroupPhase::Pending;
            let facts = |j: JobId| crate::world::reach_facts(&w.jobs[j]);
            return Cow::Owned(w.with_pending.iter().filter(admitted).map(|&j| (j, facts(j))).collect());
        }
        Cow::Borrowed(self.world.admitted.list())
    }
    /// The admitted jobs with pending pods grouped by their
    /// [`crate::world::ReachFacts`] (each group in job order), from the World's
    /// index; `None` in exhaustive sessions, which walk every job, and when the
    /// groups were not settled ([`Session::sync_groups`]) since pods last moved.
    pub fn admitted_groups(&self) -> Option<&crate::world::Groups> {
        debug_assert!(self.exhaustive || self.world.admitted_groups().is_some(), "groups read unsettled");
        self.world.admitted_groups().filter(|_| !self.exhaustive)
    }
    /// The [`crate::world::Digest`] of [`Session::admitted_groups`]; `None`
    /// where those are.
    pub fn admitted_digest(&self) -> Option<&crate::world::Digest> {
        self.world.admitted_digest().filter(|_| !self.exhaustive)
    }
    /// Settles [`Session::admitted_groups`] after the pods moved since it was last
    /// read (a placement discarded leaves its job where it was).
    pub fn sync_groups(&mut self) {
        self.world.sync_groups();
    }
    /// The PodGroups waiting for admission grouped by (queue, minResources), each
    /// group in creation order.
    pub fn waiting_admission_by_shape(&self) -> impl Iterator<Item = &std::collections::BTreeSet<JobId>> + '_ {
        self.world.pg_pending_by_shape.values()
    }
    /// Swaps the jobs whose waiting state (PodGroup Pending, or its pods and counts
    /// while so) may have changed since the last call into `into` (repeats
    /// allowed; `into`'s old contents are the World's next journal, cleared), and
    /// returns true; false on the first call, which starts the tracking (read
    /// [`Session::jobs_waiting_admission`] then). For a scheduler that keeps its own
    /// order of waiting PodGroups.
    pub fn take_waiting_changes(&mut self, into: &mut Vec<JobId>) -> bool {
        drain_journal(into, &mut self.world.waiting_changes, &mut self.world.track_waiting)
    }
    /// Swaps the jobs changed since the last call (submitted or ended, pods
    /// created or changing status, progress started, stopped or re-priced; repeats
    /// allowed) into `into` (its old contents are the World's next journal,
    /// cleared), and returns true; false on the first call, which starts the
    /// journal (walk [`Session::jobs`] then). For a scheduler that keeps its own
    /// view of the jobs between sessions.
    pub fn take_job_changes(&mut self, into: &mut Vec<JobId>) -> bool {
        drain_journal(into, &mut self.world.job_changes, &mut self.world.track_jobs)
    }
    /// True if the job is submitted and not ended.
    pub fn is_active(&self, j: JobId) -> bool {
        self.world.active.contains(&j)
    }
    /// True if the job is active and its PodGroup is Pending.
    pub fn is_waiting_admission(&self, j: JobId) -> bool {
        self.world.pg_pending.contains(j)
    }
    /// Active jobs whose PodGroup is Pending (enqueue's candidates), in creation
    /// order. Read from an index; exhaustive sessions filter every active job.
    pub fn jobs_waiting_admission(&self) -> Vec<JobId> {
        if self.exhaustive {
            let waiting = |j: &&JobId| {
                let job = &self.world.jobs[**j];
                job.pg_phase == PodGroupPhase::Pending && !job.pg_deleted
            };
            return self.world.active.iter().filter(waiting).copied().collect();
        }
        self.world.pg_pending.iter().copied().collect()
    }
    /// True if job `j` exists (a finished job is given back to memory).
    pub fn has_job(&self, j: JobId) -> bool {
        self.world.jobs.get(j).is_some()
    }
    /// True if pod `p` exists (a pod of a finished job is given back).
    pub fn has_pod(&self, p: PodId) -> bool {
        self.world.pods.get(p).is_some()
    }
    /// A job.
    #[inline]
    pub fn job(&self, j: JobId) -> &Job {
        &self.world.jobs[j]
    }
    /// A distinct task request by index ([`crate::world::TaskState::shape`]).
    #[inline]
    pub fn shape(&self, shape: u32) -> &crate::model::resource::Resources {
        &self.world.shapes[shape as usize]
    }
    /// A pod.
    #[inline]
    pub fn pod(&self, p: PodId) -> &Pod {
        &self.world.pods[p]
    }
    /// The job's Pending pods that may be placed (not gated: see
    /// [`Pod::is_gated`]) in task order (task index, then replica index).
    pub fn pending_pods(&self, j: JobId) -> Vec<PodId> {
        let mut v: Vec<PodId> = self.world.jobs[j]
            .pods
            .iter()
            .copied()
            .filter(|p| {
                let pod = &self.world.pods[*p];
                pod.status == PodStatus::Pending && !pod.is_gated()
            })
            .collect();
        v.sort_by_key(|p| {
            let pod = &self.world.pods[*p];
            (pod.task, pod.index, p.0)
        });
        v
    }
    /// The wall-clock time now, whole seconds since 1970-01-01T00:00 in the
    /// cluster's local time (`spec.startTime` plus the simulated time).
    pub fn wall_clock(&self) -> i64 {
        self.world.clock_start + (self.now.0 / crate::util::time::MICROS_PER_SEC) as i64
    }
    /// The cluster's PodDisruptionBudgets.
    pub fn budgets(&self) -> &[crate::model::budget::DisruptionBudget] {
        &self.world.budgets
    }
    /// The active jobs budget `b` covers, each with the tasks it covers.
    pub fn budget_jobs(&self, b: usize) -> &std::collections::BTreeMap<JobId, Vec<u16>> {
        &self.world.budget_jobs[b]
    }
    /// Running preemptable pods of the whole cluster grouped by (queue, job
    /// priority): count and Σ requests, ascending key.
    pub fn victim_groups(&self) -> &[(crate::world::VictimKey, u32, Resources)] {
        &self.world.victims
    }
    /// Moves whenever a group of [`Session::victim_groups`] comes or goes.
    pub fn victim_groups_version(&self) -> u64 {
        self.world.victim_groups_version()
    }
    /// Number of nodes.
    #[inline]
    pub fn node_count(&self) -> usize {
        self.world.nodes.len()
    }
    /// A node's static description.
    pub fn node(&self, n: NodeId) -> &Node {
        self.world.cluster.node(n)
    }
    /// A node's usage.
    pub fn node_state(&self, n: NodeId) -> &NodeState {
        &self.world.nodes[n]
    }
    /// Idle = allocatable − used.
    pub fn idle(&self, n: NodeId) -> Resources {
        self.world.idle(n)
    }
    /// Every node's idle resources summed ([`World::idle_total`]).
    pub fn idle_total(&self) -> Resources {
        self.world.idle_total()
    }
    /// Every node's future idle resources summed.
    pub fn future_idle_total(&self) -> Resources {
        self.world.future_idle_total()
    }
    /// A node's future idle resources (idle + releasing − pipelined).
    #[inline]
    pub fn future_idle(&self, n: NodeId) -> Resources {
        self.world.future_idle(n)
    }
    /// True if the node's GPU devices can take the pod (see [`World::gpu_fits`]):
    /// the device-level check GPU sharing adds to the aggregate resource fit.
    pub fn gpu_fits(&self, pod: PodId, n: NodeId) -> bool {
        self.world.gpu_fits(n, self.world.pods[pod].req.gpu_milli())
    }
    /// False when [`Session::gpu_fits`] says yes on every node
    /// ([`World::gpu_devices_matter`]).
    #[inline]
    pub fn gpu_devices_matter(&self, pod: PodId) -> bool {
        self.world.gpu_devices_matter(self.world.pods[pod].req.gpu_milli())
    }
    /// The fragmentation measure's target workload (set for the FGD paper's
    /// placement policies, [`World::set_placement`]).
    pub fn frag_target(&self) -> &crate::frag::Target {
        &self.world.frag_target
    }
    /// Node `n`'s GPU model index in the fragmentation measure's
    /// [`ModelTable`](crate::frag::ModelTable).
    pub fn node_model(&self, n: NodeId) -> Option<u8> {
        self.world.node_models[n]
    }
    /// True if a pod can be placed on a node's idle resources now: the aggregate
    /// fits and its GPU devices can take it.
    #[inline]
    pub fn fits_idle(&self, pod: PodId, n: NodeId) -> bool {
        let req = &self.world.pods[pod].req;
        req.fits_in(&self.world.idle(n)) && self.world.gpu_fits(n, req.gpu_milli())
    }
    /// True when no node has resources releasing or pipelined: every node's idle
    /// room is then its future-idle room.
    #[inline]
    pub fn idle_is_future_idle(&self) -> bool {
        self.world.nodes_ahead == 0
    }
    /// The first node at index ≥ `from` whose FutureIdle covers `req` (indexed, not a scan).
    #[inline]
    pub fn first_fit(&self, req: &Resources, from: usize) -> Option<NodeId> {
        self.world.index.first_fit(req, from)
    }
    /// Every node, in node order, whose FutureIdle plus the Running preemptable
    /// pods of the victim groups `keys` (ascending) covers `req`, into `out`
    /// (indexed: [`World::victim_nodes`]).
    pub fn victim_nodes(&mut self, keys: &[crate::world::VictimKey], req: &Resources, out: &mut Vec<NodeId>) {
        self.world.victim_nodes(keys, req, out);
    }
    /// Node `n`'s future-idle room plus the Running preemptable pods of the
    /// victim groups `keys` ([`World::victim_bound`]).
    pub fn victim_bound(&self, n: NodeId, keys: &[crate::world::VictimKey]) -> Resources {
        self.world.victim_bound(n, keys)
    }
    /// Distinct nodes holding the job's Running (or Allocated) pods, ascending
    /// ([`World::job_nodes`]).
    pub fn job_nodes(&self, j: JobId) -> Vec<NodeId> {
        self.world.job_nodes(j)
    }
    /// See [`crate::planted::PlantedBugs::wrong_victim_index`].
    #[doc(hidden)]
    pub fn break_victim_index_for_tests(&mut self) {
        self.world.break_victim_index_for_tests();
    }
    /// See [`crate::planted::PlantedBugs::wrong_gates`].
    #[doc(hidden)]
    pub fn break_gates_for_tests(&mut self) {
        self.world.stale_gating_for_tests = true;
    }
    /// See [`crate::planted::PlantedBugs::wrong_group`].
    #[doc(hidden)]
    pub fn break_groups_for_tests(&mut self) {
        self.world.stale_groups_for_tests = true;
    }
    /// See [`crate::planted::PlantedBugs::wrong_unfiled`].
    #[doc(hidden)]
    pub fn break_unfiled_for_tests(&mut self) {
        self.world.wrong_unfiled_for_tests = true;
    }
    /// See [`crate::planted::PlantedBugs::wrong_affinity`].
    #[doc(hidden)]
    pub fn break_affinity_for_tests(&mut self) {
        self.world.break_affinity_for_tests();
    }
    /// See [`crate::planted::PlantedBugs::wrong_carry`].
    #[doc(hidden)]
    pub fn break_victim_log_for_tests(&mut self) {
        self.world.break_victim_log_for_tests();
    }
    /// See [`crate::planted::PlantedBugs::wrong_admitted_log`].
    #[doc(hidden)]
    pub fn break_admitted_log_for_tests(&mut self) {
        self.world.admitted.break_log_for_tests();
    }
    /// Starts the World's log of admitted jobs whose listing or revision
    /// changes ([`crate::world::Admitted::log_since`]).
    pub fn follow_admitted_log(&mut self) {
        self.world.admitted.follow();
    }
    /// The position after the last change in the log of admitted jobs.
    pub fn admitted_log_end(&self) -> u64 {
        self.world.admitted.log_end()
    }
    /// The admitted jobs listed, unlisted or revised since `pos`
    /// ([`crate::world::Admitted::log_since`]); `None` in exhaustive mode, when
    /// the log was cut after `pos`, or when nobody follows it.
    pub fn admitted_log_since(&self, pos: u64) -> Option<&[JobId]> {
        self.world.admitted.log_since(pos).filter(|_| !self.exhaustive)
    }
    /// An admitted job's facts and revision from the World's list
    /// ([`Session::admitted_facts`], [`Session::admitted_revisions`]); `None`
    /// when it is not listed.
    pub fn admitted_entry(&self, j: JobId) -> Option<(crate::world::ReachFacts, u64)> {
        self.world.admitted.entry(j)
    }
    /// Starts the World's log of changed nodes ([`World::victim_log_since`]).
    pub fn follow_victim_log(&mut self) {
        self.world.follow_victim_log();
    }
    /// The position after the last change in the log of changed nodes.
    pub fn victim_log_end(&self) -> u64 {
        self.world.victim_log_end()
    }
    /// The nodes changed since `pos` ([`World::victim_log_since`]).
    pub fn victim_log_since(&self, pos: u64) -> Option<&[NodeId]> {
        self.world.victim_log_since(pos)
    }
    /// Calls `visit` on every node in `lo..hi` whose FutureIdle covers `req`,
    /// in node order, until it returns false (indexed:
    /// [`crate::index::NodeIndex::scan_fitting`]).
    pub fn scan_fitting(&self, req: &Resources, lo: usize, hi: usize, visit: impl FnMut(NodeId) -> bool) {
        self.world.index.scan_fitting(req, lo, hi, visit)
    }
    /// Every node whose FutureIdle covers `req`, in node order (indexed).
    pub fn fitting_nodes<'a>(&'a self, req: &'a Resources) -> impl Iterator<Item = NodeId> + 'a {
        self.world.index.fitting(req)
    }
    /// Σ over nodes of how many pods of request `req` each node's FutureIdle holds,
    /// counted up to `cap`: an upper bound on the pods of that shape any placement
    /// could add now (predicates and GPU devices only lower it). The fast path visits
    /// only the nodes the free-resource index says fit; exhaustive mode walks all.
    pub fn slots_up_to(&self, req: &Resources, cap: u32) -> u32 {
        let mut total = 0u32;
        let mut add = |n: NodeId| {
            let free = self.world.future_idle(n);
            if req.fits_in(&free) {
                total = total.saturating_add(free.copies_of(req));
            }
            total >= cap
        };
        if self.exhaustive {
            let _ = (0..self.node_count() as u32).map(NodeId).any(&mut add);
        } else if self.planted.wrong_slots {
            // Deliberately wrong (tests only): the last fitting node is not counted.
            let nodes: Vec<NodeId> = self.fitting_nodes(req).collect();
            let _ = nodes[..nodes.len().saturating_sub(1)].iter().any(|&n| add(n));
        } else {
            let _ = self.fitting_nodes(req).any(&mut add);
        }
        total.min(cap)
    }
    /// Σ allocatable of a HyperNode's nodes.
    pub fn hypernode_allocatable(&self, h: crate::model::ids::HyperNodeId) -> Resources {
        self.world.hn_allocatable[h]
    }
    /// The `epoch` of the last change of a node's `used`.
    #[inline]
    pub fn node_used_epoch(&self, n: NodeId) -> u64 {
        self.world.node_used_epoch[n]
    }
    /// The `epoch` of the last change of a HyperNode's `used`.
    #[inline]
    pub fn hypernode_used_epoch(&self, h: crate::model::ids::HyperNodeId) -> u64 {
        self.world.hn_used_epoch[h]
    }
    /// The World's count of `used` changes ([`World::epoch`]).
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.world.epoch
    }
    /// Σ used of a HyperNode's nodes.
    pub fn hypernode_used(&self, h: crate::model::ids::HyperNodeId) -> Resources {
        self.world.hn_used[h]
    }
    /// Σ idle of a HyperNode's nodes.
    pub fn hypernode_idle(&self, h: crate::model::ids::HyperNodeId) -> Resources {
        self.world.hn_idle(h)
    }
    /// Σ future idle of a HyperNode's nodes.
    pub fn hypernode_future_idle(&self, h: crate::model::ids::HyperNodeId) -> Resources {
        self.world.hn_future_idle(h)
    }
    /// True if the node passes the pod's static node filters: its node selector
    /// matches the node's labels and it tolerates the node's taints.
    pub fn selector_matches(&self, p: PodId, n: NodeId) -> bool {
        // The pod's task and the node looked up once: searches ask this of
        // every node they list.
        let task = self.task_of(p);
        let node = self.world.cluster.node(n);
        (!task.has_label_filter() || task.labels_fit(node)) && repelling(task, node).is_none()
    }
    /// The task pod `p` was made from.
    fn task_of(&self, p: PodId) -> &crate::model::job::TaskSpec {
        let pod = &self.world.pods[p];
        &self.world.jobs[pod.job].spec.tasks[pod.task as usize]
    }
    /// True if the node passes every node filter of the pod in the current
    /// state: [`Session::selector_matches`], and no pod on the node holds one of
    /// its host ports. Placements ask this; predictions of a later state (whose
    /// pods may be gone) ask only the static filters.
    pub fn fits_filters(&self, p: PodId, n: NodeId) -> bool {
        self.selector_matches(p, n) && !self.port_conflict(p, n) && self.affinity_refusal(p, n).is_none()
    }
    /// Why inter-pod affinity refuses node `n` to the pod, if it does
    /// ([`World::affinity_refusal`]).
    pub fn affinity_refusal(&self, p: PodId, n: NodeId) -> Option<crate::world::AffinityRefusal> {
        self.world.affinity_refusal(p, n)
    }
    /// True if inter-pod affinity may refuse the pod some node now
    /// ([`World::affinity_may_refuse`]).
    pub fn affinity_may_refuse(&self, p: PodId) -> bool {
        self.world.affinity_may_refuse(p)
    }
    /// True once some job of the run has affinity terms
    /// ([`World::affinity_in_play`]).
    pub fn affinity_in_play(&self) -> bool {
        self.world.affinity_in_play()
    }
    /// True if the pod's required affinity terms may refuse it a node
    /// ([`World::affinity_unresolvable_possible`]).
    pub fn affinity_unresolvable_possible(&self, p: PodId) -> bool {
        self.world.affinity_unresolvable_possible(p)
    }
    /// Job `j`'s gated pods and what comes off its reservations for them.
    pub fn gating(&self, j: JobId) -> Option<&crate::world::Gating> {
        self.world.gating(j)
    }
    /// True if some job has gated pods ([`Session::gating`]).
    pub fn any_gated(&self) -> bool {
        self.world.any_gated()
    }
    /// True once some job has inter-pod affinity terms ([`World::affinity_on`]).
    pub fn affinity_on(&self) -> bool {
        self.world.affinity_on()
    }
    /// Inter-pod affinity's raw scores of the pod on `nodes`
    /// ([`World::affinity_scores`]).
    pub fn affinity_scores(&self, p: PodId, nodes: &[NodeId]) -> Option<Vec<i64>> {
        self.world.affinity_scores(p, nodes)
    }
    /// True if another pod on the node holds one of the pod's host ports
    /// (Kubernetes' NodePorts filter; [`World::port_conflict`]).
    pub fn port_conflict(&self, p: PodId, n: NodeId) -> bool {
        self.world.port_conflict(p, n)
    }
    /// True if the pod's node selector matches the node's labels.
    pub fn labels_match(&self, p: PodId, n: NodeId) -> bool {
        self.task_of(p).labels_fit(self.world.cluster.node(n))
    }
    /// The first taint of the node that repels the pod (`NoSchedule`/`NoExecute`,
    /// not tolerated), if any.
    pub fn untolerated_taint(&self, p: PodId, n: NodeId) -> Option<&crate::model::cluster::Taint> {
        if !self.world.cluster.has_taints() {
            return None;
        }
        repelling(self.task_of(p), self.world.cluster.node(n))
    }

    // ---- operations -----------------------------------------------------------

    /// Names the action whose decisions follow (for decisions.csv).
    pub fn set_action(&mut self, action: &'static str) {
        self.action = action;
    }
    /// The current action name.
    pub fn action(&self) -> &'static str {
        self.action
    }
    /// A new, empty statement.
    pub fn statement(&self) -> Statement {
        Statement::default()
    }

    /// A statement the caller knows will be discarded (a step that cannot
    /// end ready or pipelined, a trial): its pods' moves are not filed in the
    /// World's lists and journals, there and back
    /// ([`crate::world::World::transition_unfiled`]); committing it is a bug
    /// (it panics). In exhaustive mode, the reference, every move is filed:
    /// this is a plain statement.
    pub fn unfiled_statement(&self) -> Statement {
        Statement { ops: Vec::new(), unfiled: !self.exhaustive }
    }

    fn record(
        &mut self,
        stmt: &mut Statement,
        kind: OpKind,
        pod: PodId,
        node: Option<NodeId>,
        reason: Cow<'static, str>,
    ) {
        let p = &self.world.pods[pod];
        let op = Op {
            kind,
            pod,
            node,
            prev_status: p.status,
            prev_node: p.node,
            action: self.action,
            reason,
            state: OpState::Open,
            for_job: None,
            nominates: false,
            unfiled: stmt.unfiled,
        };
        stmt.ops.push(self.journal.len());
        self.journal.push(op);
    }

    /// Places a Pending pod on a node's idle resources.
    pub fn allocate(&mut self, stmt: &mut Statement, pod: PodId, node: NodeId) -> Result<(), SessionError> {
        let p = &self.world.pods[pod];
        if p.status != PodStatus::Pending {
            return Err(SessionError::NotPending(p.status));
        }
        if !p.req.fits_in(&self.world.idle(node)) || !self.world.gpu_fits(node, p.req.gpu_milli()) {
            return Err(SessionError::NoIdle);
        }
        self.record(stmt, OpKind::Allocate, pod, Some(node), Cow::Borrowed(""));
        self.move_pod(stmt.unfiled, pod, PodStatus::Allocated, Some(node));
        Ok(())
    }

    /// Places a Pending pod on a node's future idle resources (what evicted pods
    /// will free).
    pub fn pipeline(&mut self, stmt: &mut Statement, pod: PodId, node: NodeId) -> Result<(), SessionError> {
        let p = &self.world.pods[pod];
        if p.status != PodStatus::Pending {
            return Err(SessionError::NotPending(p.status));
        }
        if !p.req.fits_in(&self.world.future_idle(node)) {
            return Err(SessionError::NoFutureIdle);
        }
        self.record(stmt, OpKind::Pipeline, pod, Some(node), Cow::Borrowed(""));
        self.move_pod(stmt.unfiled, pod, PodStatus::Pipelined, Some(node));
        Ok(())
    }

    /// Holds `req` of node `n`'s future-idle resources until the session
    /// ends, for a policy that keeps resources promised across sessions (the
    /// `tiresias` baseline's claims): later placements of the session see the
    /// node's future-idle room without it. No pod moves and no decision is
    /// recorded. False (and nothing held) if the room does not cover `req`.
    pub fn hold(&mut self, n: NodeId, req: Resources) -> bool {
        if !req.fits_in(&self.world.future_idle(n)) {
            return false;
        }
        self.world.hold(n, req);
        self.holds.push((n, req));
        true
    }

    /// [`Session::pipeline`] for a preemptor, `evicted` saying whether pods
    /// were evicted for it (Volcano's `Pipeline` with `evictionOccurred`): after
    /// evictions, if it is the pod's last placement of the session, committed or
    /// discarded, the session's close nominates the pod to the node
    /// (`TaskSchedulingReason` reads the last transaction, which a discard keeps).
    pub fn pipeline_after_evictions(
        &mut self,
        stmt: &mut Statement,
        pod: PodId,
        node: NodeId,
        evicted: bool,
    ) -> Result<(), SessionError> {
        self.pipeline(stmt, pod, node)?;
        if evicted {
            if let Some(op) = self.journal.last_mut() {
                op.nominates = true;
            }
            self.nominating = true;
        }
        Ok(())
    }

    /// The node the session's close would nominate pod `p` to if the session
    /// ended now: its last operation's, when that is a pipeline after evictions
    /// (see [`Session::pipeline_after_evictions`]). For `--explain`.
    pub fn nominated_at_close(&self, p: PodId) -> Option<NodeId> {
        let made = |op: &&Op| op.pod == p && op.state != OpState::Retracted;
        self.journal.iter().rev().find(made).filter(|op| op.nominates).and_then(|op| op.node)
    }

    /// Evicts a Running pod; it keeps its node (Releasing) until its grace period ends.
    pub fn evict(
        &mut self,
        stmt: &mut Statement,
        pod: PodId,
        reason: impl Into<Cow<'static, str>>,
    ) -> Result<(), SessionError> {
        self.evict_with(stmt, pod, None, reason.into())
    }

    /// [`Session::evict`] for job `for_job` (a preemptor or reclaimer): the
    /// engine counts what evictions for each kind of workload cost.
    pub fn evict_for(
        &mut self,
        stmt: &mut Statement,
        pod: PodId,
        for_job: JobId,
        reason: impl Into<Cow<'static, str>>,
    ) -> Result<(), SessionError> {
        self.evict_with(stmt, pod, Some(for_job), reason.into())
    }

    fn evict_with(
        &mut self,
        stmt: &mut Statement,
        pod: PodId,
        for_job: Option<JobId>,
        reason: Cow<'static, str>,
    ) -> Result<(), SessionError> {
        let p = &self.world.pods[pod];
        if p.status != PodStatus::Running {
            return Err(SessionError::NotRunning(p.status));
        }
        let node = p.node;
        self.record(stmt, OpKind::Evict, pod, node, reason);
        if let Some(op) = self.journal.last_mut() {
            op.for_job = for_job;
        }
        self.move_pod(stmt.unfiled, pod, PodStatus::Releasing, node);
        Ok(())
    }

    /// Job `j`, whose pods this session evicts, saves its work first: a
    /// checkpoint at the preemption, taken during the pods' grace period
    /// (suspend and resume, as Tiresias preempts), so the stop loses nothing.
    /// Call it once the evictions are committed.
    pub fn suspend(&mut self, j: JobId) {
        self.outcome.suspended.push(j);
    }

    /// The pods a statement places (allocates or pipelines) and their nodes, in
    /// the order it placed them.
    pub fn placements(&self, stmt: &Statement) -> Vec<(PodId, NodeId)> {
        stmt.ops
            .iter()
            .map(|&i| &self.journal[i])
            .filter(|op| matches!(op.kind, OpKind::Allocate | OpKind::Pipeline))
            .filter_map(|op| Some((op.pod, op.node?)))
            .collect()
    }

    /// Makes a statement's operations final.
    pub fn commit(&mut self, stmt: Statement) {
        assert!(!stmt.unfiled, "an unfiled statement was committed");
        for i in stmt.ops {
            let op = &mut self.journal[i];
            if op.state != OpState::Open {
                continue;
            }
            op.state = OpState::Committed;
            let op = op.clone();
            let job = self.world.pods[op.pod].job;
            let kind = match op.kind {
                OpKind::Allocate => {
                    self.outcome.binds.push((op.pod, op.node.expect("allocate has a node")));
                    DecisionKind::Bind
                }
                OpKind::Pipeline => DecisionKind::Pipeline,
                OpKind::Evict => {
                    self.outcome.evictions.push((op.pod, Evictor::of_action(op.action), op.for_job));
                    DecisionKind::Evict
                }
            };
            self.outcome.decisions.push(Decision {
                session: self.index,
                t: self.now,
                action: op.action,
                kind,
                job,
                pod: Some(op.pod),
                node: op.node,
                phase: None,
                reason: op.reason,
            });
        }
    }

    /// Undoes a statement's operations, last first.
    pub fn discard(&mut self, stmt: Statement) {
        for &i in stmt.ops.iter().rev() {
            self.undo(i);
        }
    }

    /// Undoes a statement's operations as [`Session::discard`] does, and
    /// leaves no trace of them at the session's close: a pipeline after
    /// evictions among them nominates nothing (a policy that tries what it
    /// will do again, or not at all, uses this for the try).
    pub fn retract(&mut self, stmt: Statement) {
        for &i in stmt.ops.iter().rev() {
            if self.journal[i].state == OpState::Open {
                self.undo(i);
                self.journal[i].state = OpState::Retracted;
            }
        }
    }

    /// True if some operation of the statement is a pipeline after evictions
    /// (which, committed or discarded, nominates its pod at the close).
    pub fn nominates(&self, stmt: &Statement) -> bool {
        stmt.ops.iter().any(|&i| self.journal[i].nominates)
    }

    fn undo(&mut self, i: usize) {
        let op = &mut self.journal[i];
        if op.state != OpState::Open {
            return;
        }
        op.state = OpState::Discarded;
        let (pod, prev_status, prev_node, unfiled) = (op.pod, op.prev_status, op.prev_node, op.unfiled);
        self.move_pod(unfiled, pod, prev_status, prev_node);
    }

    /// Moves a pod in the World, filed or not (see [`Session::unfiled_statement`]).
    fn move_pod(&mut self, unfiled: bool, pod: PodId, status: PodStatus, node: Option<NodeId>) {
        match unfiled {
            false => self.world.transition(pod, status, node),
            true => self.world.transition_unfiled(pod, status, node),
        }
    }

    /// Allocates and commits at once (Volcano's `ssn.Allocate`, used by backfill).
    pub fn allocate_now(&mut self, pod: PodId, node: NodeId) -> Result<(), SessionError> {
        let mut s = self.statement();
        self.allocate(&mut s, pod, node)?;
        self.commit(s);
        Ok(())
    }

    /// Sets a job's PodGroup phase (enqueue admits Pending → Inqueue).
    pub fn set_pod_group_phase(&mut self, j: JobId, phase: PodGroupPhase, reason: impl Into<Cow<'static, str>>) {
        if self.world.jobs[j].pg_phase == phase {
            return;
        }
        self.world.set_pg_phase(j, phase);
        self.outcome.phase_jobs.push(j);
        self.outcome.decisions.push(Decision {
            session: self.index,
            t: self.now,
            action: self.action,
            kind: DecisionKind::Phase,
            job: j,
            pod: None,
            node: None,
            phase: Some(phase),
            reason: reason.into(),
        });
    }

    /// Asks for another session at `at` even if nothing else happens then (for
    /// time-dependent policies such as SLA waiting times or LAS priority decay).
    pub fn request_wakeup(&mut self, at: SimTime) {
        if at > self.now {
            self.outcome.wakeups.push(at);
        }
    }

    /// Ends the session: gives back held resources, undoes open operations,
    /// turns committed pipelines into nominations, and returns what the engine
    /// must apply.
    pub fn close(mut self) -> SessionOutcome {
        for (n, req) in std::mem::take(&mut self.holds).into_iter().rev() {
            self.world.hold(n, Resources::ZERO - req);
        }
        for i in (0..self.journal.len()).rev() {
            self.undo(i);
        }
        for op in &self.journal {
            if op.state == OpState::Committed && op.kind == OpKind::Pipeline {
                self.world.transition(op.pod, PodStatus::Pending, None);
            }
        }
        if self.nominating {
            // A pod's last operation decides (each is made after the one before
            // it was committed or discarded); a nomination is set, never cleared.
            let mut seen = std::collections::HashSet::new();
            for op in self.journal.iter().rev().filter(|op| op.state != OpState::Retracted) {
                if seen.insert(op.pod) && op.nominates {
                    let pod = &mut self.world.pods[op.pod];
                    pod.nominated = op.node;
                    let j = pod.job;
                    self.world.revise(j);
                }
            }
        }
        self.outcome
    }
}

/// The first taint of `node` that repels pods of `task` (`NoSchedule`/`NoExecute`,
/// not tolerated), if any.
fn repelling<'n>(
    task: &crate::model::job::TaskSpec,
    node: &'n crate::model::cluster::Node,
) -> Option<&'n crate::model::cluster::Taint> {
    node.taints.iter().find(|t| t.repels() && !task.tolerations.iter().any(|x| x.tolerates(t)))
}
