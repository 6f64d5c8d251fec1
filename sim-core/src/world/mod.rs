//! The mutable state of a run: nodes' usage, pods, jobs and queues.
//!
//! Every pod status change goes through [`World::transition`], which keeps node
//! usage, the free-resource index, job and queue counters consistent. Undoing a
//! session operation is the inverse transition, so a discarded statement leaves no
//! trace.

use crate::model::cluster::Cluster;

use crate::index::NodeIndex;
use crate::model::ids::NodeId;
use crate::model::ids::{HyperNodeId, QueueId};
use crate::model::ids::{JobId, PodId};
use crate::model::job::{JobPhase, JobSpec, PodGroupPhase, PodStatus};
use crate::model::queue::Queue;
use crate::model::resource::{GPU, Resources};
use crate::util::id_set::IdSet;
use crate::util::store::{IdVec, Store};
use crate::util::time::SimTime;
use crate::victim_index::VictimIndex;
use std::collections::{BTreeMap, BTreeSet};

mod admitted;
mod affinity;
mod books;
mod capacity;
mod fact_groups;
mod gates;
mod ledgers;
mod ports;
mod view;

pub use admitted::{Admitted, ReachFacts, reach_facts};
pub use fact_groups::{Digest, Filed, Groups};

/// A node's usage.
#[derive(Clone, Debug, Default)]
pub struct NodeState {
    /// Σ requests of pods holding the node (Allocated, Running, Releasing).
    pub used: Resources,
    /// Σ requests of Releasing pods.
    pub releasing: Resources,
    /// Σ requests of pods pipelined onto the node in the current session.
    pub pipelined: Resources,
    /// Pods holding resources on the node (Allocated, Running, Releasing), in
    /// pod-id order.
    pub pods: Vec<PodId>,
    /// GPU devices: free milli-GPUs of each (see [`GpuDevices`]).
    pub gpus: GpuDevices,
    /// Cards shared by GPU memory (Volcano's `volcano.sh/gpu-memory`; none
    /// when the node has no such resource).
    pub gpu_memory: crate::devices::MemoryCards,
    /// What the vGPU cards' sharers hold, card by card (empty unless the run
    /// models vGPU sharing and the node has cards).
    pub vgpu: Vec<crate::devices::vgpu::CardUse>,
    /// What the Ascend chips' sharers hold, type by type as the node registers
    /// them (empty unless the run models vNPU sharing and the node has chips).
    pub vnpu: Vec<crate::devices::vnpu::NpuUse>,
    /// The CPUs its pods hold (empty unless the run models NUMA placement and
    /// the node has a topology).
    pub numa: crate::devices::numa::NumaUse,
    /// Possible preemption victims, by [`VictimKey`]: count and Σ
    /// requests of the node's Running pods that are preemptable (ascending key).
    /// Preempt and reclaim bound what evicting them could free without walking the
    /// node's pods.
    pub victims: Vec<(VictimKey, u32, Resources)>,
    /// Capacity out of service (a fault): the node's allocatable is its
    /// nominal allocatable less this.
    pub lost: Resources,
    /// GPU devices out of service (bit d: device d); every device while the
    /// whole node is down.
    pub lost_devices: u64,
}

impl NodeState {
    /// Σ requests of the node's Running preemptable pods whose (queue, job
    /// priority) passes `keep`.
    pub fn victim_room(&self, mut keep: impl FnMut(VictimKey) -> bool) -> Resources {
        self.victims.iter().filter(|v| keep(v.0)).fold(Resources::ZERO, |a, v| a + v.2)
    }
}

/// PodGroups waiting for admission with the same queue and minResources.
pub type WaitingShape = (QueueId, [i64; crate::model::resource::DIMS]);

pub use crate::victim_index::VictimKey;
pub use affinity::{AffinityRefusal, normalize_affinity};
pub use gates::Gating;

/// Adds `sign` pods of `req` to the group `key` of a sorted victim list; true
/// if the list's set of groups changed (the group came or went).
fn add_victim(list: &mut Vec<(VictimKey, u32, Resources)>, key: VictimKey, req: Resources, sign: i64) -> bool {
    let at = list.partition_point(|v| v.0 < key);
    let new = list.get(at).is_none_or(|v| v.0 != key);
    if new {
        list.insert(at, (key, 0, Resources::ZERO));
    }
    let v = &mut list[at];
    v.1 = v.1.wrapping_add_signed(sign as i32);
    v.2 += req.times(sign);
    if v.1 == 0 {
        list.remove(at);
        return !new;
    }
    new
}

/// [`World::victim_bound`] from the fields it reads (the victim index's trees
/// compute leaves while the World lends them out).
fn victim_bound(cluster: &Cluster, nodes: &[NodeState], n: NodeId, keys: &[VictimKey]) -> Resources {
    let s = &nodes[n.0 as usize];
    let free = cluster.node(n).allocatable - s.used + s.releasing - s.pipelined;
    free + s.victim_room(|k| keys.binary_search(&k).is_ok())
}

pub use crate::devices::{DEVICE_MILLI, DeviceHold, GpuDevices, MAX_NODE_GPUS, ShareRule};
pub use crate::model::progress::Progress;

/// One pod.
#[derive(Clone, Debug)]
pub struct Pod {
    /// Its job.
    pub job: JobId,
    /// Task index in the job's spec.
    pub task: u16,
    /// Replica index within the task.
    pub index: u32,
    /// Requests (including `pods: 1`).
    pub req: Resources,
    /// Status.
    pub status: PodStatus,
    /// Node it holds or is placed on.
    pub node: Option<NodeId>,
    /// Its `status.nominatedNodeName`: set at a session's close when the pod's
    /// last placement in it was a pipeline that followed evictions (committed or
    /// not, Volcano's `TaskSchedulingReason`), never cleared while the pod lives.
    /// allocate tries it first; preempt reads it for `taskEligibleToPreempt`.
    pub nominated: Option<NodeId>,
    /// When it started running.
    pub started: SimTime,
    /// When it was created.
    pub created: SimTime,
    /// When it was last evicted (grace period start).
    pub evicted_at: Option<SimTime>,
    /// Evicted by a scheduler session: the `DisruptionTarget` condition with
    /// reason `PreemptionByScheduler` that Volcano's evictor sets (a pod a
    /// controller or an operator deletes has none).
    pub disrupted: bool,
    /// Pod priority.
    pub priority: i32,
    /// `volcano.sh/preemptable`.
    pub preemptable: bool,
    /// Requests nothing but a pod slot.
    pub best_effort: bool,
    /// Create a replacement when this pod is gone.
    pub replace_on_release: bool,
    /// Made again when its deletion started
    /// ([`crate::model::job::JobSpec::replaces_terminating_pods`]): its job no
    /// longer lists it, and it is forgotten once gone.
    pub replaced: bool,
    /// Its deletion is heard by its controller once it is gone (a `PodEvicted`
    /// raised at its release, [`crate::model::job::JobSpec::hears_deletion_when_gone`]).
    pub evicted_when_gone: bool,
    /// Failed because its container exited (`lahar.io/fail-after`): the pod
    /// object stays Failed, and a VolcanoJob's controller makes no new one unless
    /// a policy restarts it.
    pub exited: bool,
    /// When its container's current run started (its start, or its last
    /// restart in place): what its run-time and exit timers are keyed on.
    pub up_since: SimTime,
    /// Its container's restarts in place (`containerStatuses[0].restartCount`).
    pub restarts: u32,
    /// Its container exited and waits for the kubelet to restart it in place
    /// (CrashLoopBackOff): the pod is Running and holds its node, but works not.
    pub down: bool,
    /// The kubelet's back-off exponent for its next restart (10 s · 2ⁿ, at most
    /// 300 s).
    pub backoff: u8,
    /// When its container last exited (the key of its restart event).
    pub last_crash: SimTime,
    /// The scheduling gates it still has (bit i: its task's
    /// [`crate::model::job::TaskSpec::scheduling_gates`]`[i]`); while any is left the pod
    /// is gated: Pending, and no action places it ([`Pod::is_gated`]).
    pub gates: u16,
    /// GPU devices it holds on its node, while it holds the node.
    pub gpu_devices: DeviceHold,
    /// The card whose `volcano.sh/gpu-memory` it holds, while it holds the node.
    pub memory_card: Option<u8>,
}

/// A pod of nothing: what a retired pod's slot holds (see `store::Store`).
impl Default for Pod {
    fn default() -> Pod {
        Pod {
            job: JobId(u32::MAX),
            task: 0,
            index: 0,
            req: Resources::ZERO,
            status: PodStatus::Succeeded,
            node: None,
            nominated: None,
            started: SimTime::ZERO,
            created: SimTime::ZERO,
            evicted_at: None,
            disrupted: false,
            priority: 0,
            preemptable: false,
            best_effort: false,
            replace_on_release: false,
            replaced: false,
            evicted_when_gone: false,
            exited: false,
            up_since: SimTime::ZERO,
            restarts: 0,
            down: false,
            backoff: 0,
            last_crash: SimTime::ZERO,
            gates: 0,
            gpu_devices: DeviceHold::default(),
            memory_card: None,
        }
    }
}

impl Pod {
    /// True while it has a scheduling gate: allocate, backfill, preempt and
    /// reclaim skip it (Volcano's `TaskInfo.SchGated`), and so do the baselines.
    pub fn is_gated(&self) -> bool {
        self.gates != 0
    }
}

/// A job of nothing, without heap memory: what a retired job's slot holds.
impl Default for Job {
    fn default() -> Job {
        Job::new(JobSpec::empty())
    }
}

/// A job's suspension by `vcctl job suspend` and `vcctl job resume`
/// ([`crate::timeline::Operation::SuspendJob`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Suspension {
    /// Not suspended.
    #[default]
    None,
    /// Aborted with its pods killed and its PodGroup deleted, until resumed: held
    /// in the Restarting phase with [`Job::restart_all`] and [`Job::pg_deleted`],
    /// which make no pod and ask no admission, and spelled `Aborted` (Volcano's
    /// phase) in the outputs.
    Aborted,
    /// Resumed: restarting as after RestartJob (one more retry) with a new
    /// PodGroup, its Succeeded and Failed pods kept.
    Resuming,
}

/// A job's runtime state.
#[derive(Clone, Debug)]
pub struct Job {
    /// Static description.
    pub spec: JobSpec,
    /// Controller phase.
    pub phase: JobPhase,
    /// PodGroup phase.
    pub pg_phase: PodGroupPhase,
    /// Pods of the current incarnation, in creation order.
    pub pods: Vec<PodId>,
    /// Pod count per status.
    pub counts: [u32; PodStatus::COUNT],
    /// Per task: pod counts and whether its pods are created (one vector, not two:
    /// a million-job run holds one per job).
    pub tasks: Vec<TaskState>,
    /// Σ requests of Allocated and Running pods.
    pub allocated: Resources,
    /// Σ requests of its pods pipelined in the session (none between sessions).
    pub pipelined: Resources,
    /// Progress accounting.
    pub progress: Progress,
    /// First time the job ran (gang satisfied).
    pub first_start: Option<SimTime>,
    /// The last time an autoscaler raised its replicas from zero before it first
    /// ran: its wait counts from then, not from its submission (a workload held
    /// at zero replicas asks for no pods and does not wait).
    pub asked_at: Option<SimTime>,
    /// End time, once terminal.
    pub end: Option<SimTime>,
    /// Restarts done.
    pub retries: u32,
    /// Aborting, Terminating or Completing (Volcano's phases): its `phase` is
    /// already the terminal one it heads for and it is no longer active, but its
    /// killed pods are still going; its `end`, its row and what waits for it
    /// come once they are gone (the engine's `end_job_when_gone`).
    pub ending: bool,
    /// Restarting whole (RestartJob, a resumption, or an aborted suspension):
    /// none of the pods killed is counted on. Volcano's job controller makes a
    /// killed pod again once it is gone and its PodGroup anew at once
    /// ([`crate::model::job::JobSpec::remakes_group_at_once`]); the other
    /// operators recreate the group once every killed pod is gone, its PodGroup
    /// deleted meanwhile ([`Job::pg_deleted`]). RestartTask, RestartPod and
    /// RestartPartition recreate only the pods they killed.
    pub restart_all: bool,
    /// The job has no PodGroup: an operator's group restart under way (every
    /// killed pod not yet gone) or an aborted suspension. It waits for no
    /// admission and its phase is not re-derived until a new one is made.
    pub pg_deleted: bool,
    /// Where an operator's suspension (`vcctl job suspend`, or an `AbortJob`
    /// policy with a resume to come) has the job.
    pub suspension: Suspension,
    /// Volcano's `Status.Version`: one more at each kill of the whole job
    /// (RestartJob, a suspension, a resumption; `killPods` without a target). The
    /// PodGroup's Unknown request carries version 0, so once this is above 0
    /// `applyPolicies` finds it outdated and the job's `Unknown` policy no longer
    /// acts.
    pub version: u32,
    /// When its PodGroup was created: its submission, or its last restart of
    /// the whole job (a VolcanoJob's at the kill; an operator's group restart
    /// once its killed pods are gone). Volcano's job order
    /// falls back on it (`CreationTimestamp`), and sla's waiting time runs from it.
    pub pg_created: SimTime,
    /// Pods gone while the controller held creation back
    /// ([`JobSpec::pods_once_admitted`] with the PodGroup Pending): made again
    /// once the group is admitted.
    pub pods_missing: u32,
    /// Sessions in which the job lost pods to eviction.
    pub preemptions: u32,
    /// Session index of the last eviction counted.
    pub last_preempt_session: Option<u64>,
    /// The lifecycle policy that acted on it last (boxed: most jobs have none).
    pub last_policy: Option<Box<crate::model::job::PolicyActed>>,
    /// Why it reached its terminal phase (`None` while it has not).
    pub end_cause: Option<crate::model::job::JobEnd>,
    /// Placement when it last started: distinct nodes.
    pub nodes_spanned: u32,
    /// Placement when it last started: tier spanned.
    pub highest_tier: u32,
    /// Submitted and not terminal: its terms are in its queue's sums
    /// ([`World::activate`], [`World::deactivate`]).
    pub counted: bool,
    /// Pending pods that request nothing but a pod slot (BestEffort).
    pub pending_best_effort: u32,
    /// Per sub-job of its `sub_groups`: pod count per status (empty without).
    pub sub_jobs: Vec<[u32; PodStatus::COUNT]>,
    /// The over-minAvailable flag its Running preemptable pods are filed under in
    /// the victim groups (`ready_count > minAvailable`, kept up to date).
    pub victims_over_min: bool,
    /// The lone flag they are filed under (one Allocated or Running pod, kept
    /// up to date): see [`VictimKey::lone`].
    pub victims_lone: bool,
    /// Counts the changes of the job a scheduler may remember across sessions
    /// ([`World::job_changed`]): a pod created, a pod's status changed, a gate
    /// removed, a nomination set, a progress change, a PodGroup phase
    /// ([`World::set_pg_phase`]). Equal revisions: the job's pods have the same
    /// statuses, gates and nominations, and its PodGroup the same phase.
    pub revision: u64,
}

/// A task's runtime state within its job.
#[derive(Clone, Copy, Debug, Default)]
pub struct TaskState {
    /// Pod count per status.
    pub counts: [u32; PodStatus::COUNT],
    /// Its pods are created (dependsOn satisfied, not being restarted).
    pub created: bool,
    /// Its request's index in [`World::shapes`].
    pub shape: u32,
}

impl Job {
    /// The job's allocation as drf counts it in a session: its Allocated and
    /// Running pods and the pods pipelined in the session (Volcano's
    /// `Statement.Pipeline` fires drf's `AllocateFunc`, which adds the pod to
    /// the job's `attr.allocated`).
    pub fn allocation(&self) -> Resources {
        self.allocated + self.pipelined
    }

    /// Work done at `now`: the credited work plus what it did since its last
    /// speed change if it is progressing; never more than its duration.
    pub fn work_done_at(&self, now: SimTime) -> u64 {
        let p = &self.progress;
        let live = p.since.map_or(0, |since| {
            let from = p.resume_at.map_or(since, |r| r.max(since));
            crate::model::progress::work_in(now.micros().saturating_sub(from.micros()), p.speed_ppm)
        });
        p.done.saturating_add(live).min(self.spec.duration.micros())
    }

    /// Work it still has to do at `now`.
    pub fn remaining_at(&self, now: SimTime) -> u64 {
        self.spec.duration.micros().saturating_sub(self.work_done_at(now))
    }

    /// Where its wait counts from: its submission, or its last scale-up from
    /// zero replicas before it first ran ([`Job::asked_at`]).
    pub fn waits_from(&self) -> SimTime {
        self.asked_at.unwrap_or(self.spec.submit)
    }

    /// Whether it asks for no pods at all (an autoscaler set every task to zero
    /// replicas).
    pub fn asks_for_none(&self) -> bool {
        self.spec.tasks.iter().all(|t| t.replicas == 0)
    }

    /// Its phase as the outputs spell it: Volcano's, and `Aborted` while an
    /// operator's suspension holds it.
    pub fn phase_name(&self) -> &'static str {
        if self.suspension == Suspension::Aborted { "Aborted" } else { self.phase.as_str() }
    }

    /// A job not yet submitted.
    pub fn new(spec: JobSpec) -> Job {
        let nt = spec.tasks.len();
        let subs = spec.sub_groups.as_ref().map_or(0, |g| g.sub_jobs.len());
        Job {
            spec,
            phase: JobPhase::NotSubmitted,
            pg_phase: PodGroupPhase::Pending,
            pods: Vec::new(),
            counts: [0; PodStatus::COUNT],
            tasks: vec![TaskState::default(); nt],
            allocated: Resources::ZERO,
            pipelined: Resources::ZERO,
            progress: Progress::default(),
            first_start: None,
            asked_at: None,
            end: None,
            retries: 0,
            restart_all: false,
            pg_deleted: false,
            version: 0,
            ending: false,
            suspension: Suspension::None,
            pg_created: SimTime::ZERO,
            pods_missing: 0,
            preemptions: 0,
            last_preempt_session: None,
            last_policy: None,
            end_cause: None,
            nodes_spanned: 0,
            highest_tier: 0,
            counted: false,
            pending_best_effort: 0,
            sub_jobs: vec![[0; PodStatus::COUNT]; subs],
            victims_over_min: false,
            victims_lone: false,
            revision: 0,
        }
    }
    /// Pods in a status.
    pub fn count(&self, s: PodStatus) -> u32 {
        self.counts[s.index()]
    }
    /// Pods in the scheduler's cache: every status but Deleted, a terminating
    /// pod its controller made again already included (Volcano's `job.Tasks`).
    pub fn live_count(&self) -> u32 {
        self.counts.iter().sum::<u32>() - self.count(PodStatus::Deleted)
    }
    /// The victim group flags its pods' counts call for now: over minAvailable
    /// and lone ([`VictimKey`]).
    pub fn victim_flags(&self) -> (bool, bool) {
        let held = self.count(PodStatus::Allocated) + self.count(PodStatus::Running);
        (self.ready_count() > self.spec.min_available, held == 1 && self.count(PodStatus::Pipelined) == 0)
    }
    /// True if its pods are filed under flags its counts no longer call for.
    pub fn victims_misfiled(&self) -> bool {
        self.victim_flags() != (self.victims_over_min, self.victims_lone)
    }
    /// The victim group its Running preemptable pods are filed under.
    pub fn victim_key(&self) -> VictimKey {
        VictimKey {
            queue: self.spec.queue,
            priority: self.spec.priority,
            over_min: self.victims_over_min,
            lone: self.victims_lone,
        }
    }
    /// Volcano's ReadyTaskNum: Allocated + Running + Succeeded.
    pub fn ready_count(&self) -> u32 {
        self.count(PodStatus::Allocated) + self.count(PodStatus::Running) + self.count(PodStatus::Succeeded)
    }
    /// Volcano's WaitingTaskNum: Pipelined.
    pub fn waiting_count(&self) -> u32 {
        self.count(PodStatus::Pipelined)
    }
    /// Volcano's ValidTaskNum: allocated, succeeded, pipelined and pending pods.
    pub fn valid_count(&self) -> u32 {
        self.ready_count() + self.waiting_count() + self.count(PodStatus::Pending)
    }
    /// True while it is making progress.
    pub fn is_progressing(&self) -> bool {
        self.progress.since.is_some()
    }
    /// Pods of a task in a status.
    pub fn task_count(&self, task: usize, s: PodStatus) -> u32 {
        self.tasks[task].counts[s.index()]
    }
    /// Pods of sub-job `s` in a status.
    pub fn sub_count(&self, s: u32, st: PodStatus) -> u32 {
        self.sub_jobs[s as usize][st.index()]
    }
    /// Volcano's `SubJobInfo.ReadyTaskNum` of sub-job `s`: Allocated + Running +
    /// Succeeded.
    pub fn sub_ready_count(&self, s: u32) -> u32 {
        self.sub_count(s, PodStatus::Allocated)
            + self.sub_count(s, PodStatus::Running)
            + self.sub_count(s, PodStatus::Succeeded)
    }
    /// Pods of sub-job `s` in the cache (every status but Deleted).
    pub fn sub_live_count(&self, s: u32) -> u32 {
        self.sub_jobs[s as usize].iter().sum::<u32>() - self.sub_count(s, PodStatus::Deleted)
    }
    /// The sub-job of pod `task`/`index` (0 for a job without sub-groups).
    pub fn sub_job_of(&self, task: usize, index: u32) -> u32 {
        self.spec.sub_groups.as_ref().map_or(0, |g| g.of(task, index))
    }
    /// Whole GPUs over all pods.
    pub fn gpus(&self) -> i64 {
        self.spec.total_gpus()
    }
}

/// A queue's runtime state.
#[derive(Clone, Debug)]
pub struct QueueState {
    /// Spec.
    pub spec: Queue,
    /// Σ requests of Allocated and Running pods of its jobs.
    pub allocated: Resources,
    /// Σ requests of its jobs' pods pipelined in the session (none between
    /// sessions).
    pub pipelined: Resources,
    /// Σ requests of Pending pods of its jobs.
    pub pending: Resources,
    /// Active jobs (submitted, not terminal).
    pub active_jobs: u32,
    /// Σ over active Inqueue jobs of the part of minResources not yet allocated
    /// (proportion's and capacity's `inqueue`).
    pub inqueue: Resources,
    /// Σ over active jobs of the allocation beyond minResources (`elastic`).
    pub elastic: Resources,
    /// Σ over active jobs of what overcommit reserves: minResources of Inqueue
    /// jobs, the unallocated part of minResources of Running jobs.
    pub reserved: Resources,
}

impl QueueState {
    /// A queue with no jobs.
    pub fn new(spec: Queue) -> QueueState {
        QueueState {
            spec,
            allocated: Resources::ZERO,
            pipelined: Resources::ZERO,
            pending: Resources::ZERO,
            active_jobs: 0,
            inqueue: Resources::ZERO,
            elastic: Resources::ZERO,
            reserved: Resources::ZERO,
        }
    }

    /// The queue's allocation as the quota plugins count it in a session: its
    /// Allocated and Running pods and the pods pipelined in the session
    /// (Volcano's `Statement.Pipeline` fires the same `AllocateFunc` handlers as
    /// an allocation, which add the pod to proportion's and capacity's
    /// `attr.allocated`).
    pub fn allocation(&self) -> Resources {
        self.allocated + self.pipelined
    }

    /// Moves a job's terms ([`queue_terms`]: inqueue, elastic, reserved) in the
    /// queue's sums from `old` to `new`.
    fn move_terms(&mut self, old: [Resources; 3], new: [Resources; 3]) {
        self.inqueue = self.inqueue - old[0] + new[0];
        self.elastic = self.elastic - old[1] + new[1];
        self.reserved = self.reserved - old[2] + new[2];
    }
}

/// A job's terms in its queue's sums (zero unless counted).
/// The requests of its gated pods (`deducted`, see [`gates::Gating`]) come off
/// its reservations, as Volcano's `DeductSchGatedResources` takes them off.
fn queue_terms(j: &Job, deducted: Resources) -> [Resources; 3] {
    if !j.counted {
        return [Resources::ZERO; 3];
    }
    let minr = j.spec.min_resources;
    let unmet = minr.exceeded_part(&j.allocated).exceeded_part(&deducted);
    let inqueue = if j.pg_phase == PodGroupPhase::Inqueue { unmet } else { Resources::ZERO };
    let reserved = match j.pg_phase {
        PodGroupPhase::Inqueue => minr.exceeded_part(&deducted),
        PodGroupPhase::Running => unmet,
        _ => Resources::ZERO,
    };
    [inqueue, j.allocated.exceeded_part(&minr), reserved]
}

/// The whole mutable state.
pub struct World {
    /// The fragmentation measure's target workload (what FGD scores against; empty
    /// unless [`World::set_placement`] set it).
    pub frag_target: crate::frag::Target,
    /// Each node's GPU model index in the measure's [`crate::frag::ModelTable`].
    pub node_models: IdVec<NodeId, Option<u8>>,
    /// Where pods' shares of one GPU go.
    share_rule: ShareRule,
    /// vGPU sharing's card order, when the run models it (Volcano's
    /// `deviceshare.VGPUEnable`).
    vgpu_policy: Option<crate::devices::vgpu::VgpuPolicy>,
    /// The cards the next pod placed holds, instead of the fit's (a starting
    /// state's pod, by its annotation).
    vgpu_preset: Option<crate::devices::vgpu::CardTakes>,
    /// `deviceshare.GPUExclusiveRules`: label sets whose pods may not share a card.
    vgpu_rules: crate::devices::vgpu::ExclusiveRules,
    /// vNPU sharing's chip order when a pod takes chips, when the run models
    /// it (Volcano's `deviceshare.AscendHAMiVNPUEnable`).
    vnpu_policy: Option<crate::devices::vnpu::NpuPolicy>,
    /// The chips the next pod placed holds, instead of the fit's (a starting
    /// state's pod, by its annotation).
    vnpu_preset: Option<crate::devices::vnpu::NpuTakes>,
    /// The run models NUMA placement (a conf with `numa-aware`).
    numa: bool,
    /// The CPUs the next pod placed holds instead of the fit's (a starting
    /// state's pod: its node's `podAllocations`).
    numa_preset: Option<crate::devices::numa::CpuSet>,
    /// Nodes with CPUs released in this session (see [`World::settle_numa`]).
    numa_released: Vec<NodeId>,
    /// The pods with host ports each node holds in the predicates' view (see
    /// [`World::port_conflict`]).
    ports: view::NodeView,
    /// Some job's pods hold host ports: only then are the nodes' ledgers kept.
    ported_jobs: bool,
    /// The pods each node holds for inter-pod affinity, once some job has
    /// affinity terms (see `affinity.rs`).
    affinity: Option<Box<affinity::AffinityLedger>>,
    /// Static cluster.
    pub cluster: Cluster,
    /// Node usage, by node id.
    pub nodes: IdVec<NodeId, NodeState>,
    /// Free-resource index over `FutureIdle`.
    pub index: NodeIndex,
    /// Nodes by `FutureIdle` plus victim room, per set of victim groups
    /// (preempt's and reclaim's bound; see [`World::victim_nodes`]).
    victim_index: VictimIndex,
    /// Every pod created, by id. A run whose records go to a recorder retires a
    /// finished job's pods with it, and a pod replaced by another at once.
    pub pods: Store<Pod, PodId>,
    /// Every job added (arrived, or listed from the start and not yet submitted),
    /// by id. A run whose records go to a recorder retires a job once it ended
    /// and its pods let go of their nodes (never an `--explain` job).
    pub jobs: Store<Job, JobId>,
    /// Queues.
    pub queues: IdVec<QueueId, QueueState>,
    /// Submitted jobs that are not terminal, ascending id (= creation order).
    pub active: BTreeSet<JobId>,
    /// Active jobs that have Pending pods.
    pub with_pending: IdSet<JobId>,
    /// Possible preemption victims over the whole cluster, by victim group
    /// (as [`NodeState::victims`]).
    pub victims: Vec<(VictimKey, u32, Resources)>,
    /// Moves whenever a group of `victims` comes or goes
    /// ([`World::victim_groups_version`]).
    victim_groups_version: u64,
    /// Jobs of `with_pending` whose PodGroup is admitted (not Pending).
    pub admitted_pending: IdSet<JobId>,
    /// Active jobs whose PodGroup is Pending (waiting for enqueue).
    pub pg_pending: IdSet<JobId>,
    /// `pg_pending` grouped by (queue, minResources).
    pub pg_pending_by_shape: BTreeMap<WaitingShape, BTreeSet<JobId>>,
    /// GPUs (milli) held by pods on nodes (Releasing pods included).
    pub gpu_used_milli: i64,
    /// GPUs (milli) held by Releasing pods (their grace period), part of
    /// `gpu_used_milli`.
    pub gpu_releasing_milli: i64,
    /// Σ over nodes of `used`: with the cluster's total, every node's idle
    /// resources summed ([`World::idle_total`]).
    used_total: Resources,
    /// Every node's releasing minus pipelined resources summed
    /// ([`World::future_idle_total`]).
    ahead_total: Resources,
    /// Milli-GPUs out of service (see [`World::gpus_out_of_service_milli`]).
    gpus_out_milli: i64,
    /// Per HyperNode: Σ allocatable of its nodes.
    pub hn_allocatable: IdVec<HyperNodeId, Resources>,
    /// Per HyperNode: Σ `used` of its nodes.
    pub hn_used: IdVec<HyperNodeId, Resources>,
    /// Per HyperNode: Σ `releasing` minus Σ `pipelined` of its nodes.
    pub hn_future_delta: IdVec<HyperNodeId, Resources>,
    /// Nodes with resources releasing or pipelined: while there are none, every
    /// node's idle room is its future-idle room.
    pub nodes_ahead: u32,
    /// GPU devices shared by fractional pods, summed over the nodes (each node's
    /// `gpus.partial`): while 0, a whole-GPU pod's device check needs no node.
    pub partial_devices: u32,
    /// The distinct pod requests of the jobs' tasks ([`TaskState::shape`]).
    pub shapes: Vec<Resources>,
    /// The index of each request in `shapes`.
    shape_of: rustc_hash::FxHashMap<Resources, u32>,
    /// Counts changes of `used` (a node's or a HyperNode's): caches of values
    /// computed from `used` compare it with [`World::node_used_epoch`] (a node's last change) to know whether
    /// they are still valid.
    pub epoch: u64,
    /// Per node: the `epoch` of its last change of `used` (or of its vGPU
    /// cards' use, which scores read too).
    pub node_used_epoch: IdVec<NodeId, u64>,
    /// Per HyperNode: the `epoch` of its last change of `used`.
    pub hn_used_epoch: IdVec<HyperNodeId, u64>,
    /// While set, every job that is or was in `pg_pending` when its state changed
    /// is appended to `waiting_changes` (a scheduler that keeps its own order of
    /// waiting PodGroups drains it; see [`crate::session::Session::take_waiting_changes`]).
    pub track_waiting: bool,
    /// Jobs whose waiting state may have changed since the last drain (repeats allowed).
    pub waiting_changes: Vec<JobId>,
    /// Jobs whose pods changed status or were created, or whose gang was
    /// reshaped, since the last drain (repeats allowed): the PodGroup phases a
    /// session's close re-derives (a phase is a function of the job's pod
    /// counts, its `minMember` and its own phase).
    pub phase_changes: Vec<JobId>,
    /// While set, every job that was submitted or ended, whose pods changed status
    /// or were created, or whose progress started, stopped or changed speed is
    /// appended to `job_changes` (a scheduler that keeps its own view of the jobs
    /// drains it; see [`crate::session::Session::take_job_changes`]).
    pub track_jobs: bool,
    /// Jobs changed since the last drain (repeats allowed).
    pub job_changes: Vec<JobId>,
    /// A job with its own sla waiting time ([`JobSpec::sla_waiting`]) has been
    /// submitted: the sla plugin looks at each job's.
    pub sla_jobs: bool,
    /// Σ jobs' `pending_best_effort` (backfill has nothing to do while it is 0).
    pub pending_best_effort_total: u64,
    /// Per job with gated pods: how many, and what comes off its reservations
    /// (see `gates.rs`).
    gating: BTreeMap<JobId, gates::Gating>,
    /// See [`crate::planted::PlantedBugs::wrong_gates`].
    #[doc(hidden)]
    pub stale_gating_for_tests: bool,
    /// `admitted_pending` as a list in job order, with each job's [`ReachFacts`],
    /// and the list grouped by facts ([`World::admitted_groups`]).
    pub admitted: Admitted,
    /// See [`crate::planted::PlantedBugs::wrong_group`].
    #[doc(hidden)]
    pub stale_groups_for_tests: bool,
    /// See [`crate::planted::PlantedBugs::wrong_unfiled`].
    #[doc(hidden)]
    pub wrong_unfiled_for_tests: bool,
    /// The wall-clock time of t = 0, seconds since 1970-01-01T00:00 in the
    /// cluster's local time (`spec.startTime`; 0 by default).
    pub clock_start: i64,
    /// The dimension of `volcano.sh/gpu-memory` when the cluster shares cards by
    /// memory (it also has `volcano.sh/gpu-number`).
    pub memory_dim: Option<usize>,
    /// PodDisruptionBudgets ([`World::set_budgets`]).
    pub budgets: Vec<crate::model::budget::DisruptionBudget>,
    /// Per budget: the active jobs it covers, with the tasks it covers (matched
    /// once, when the job is submitted).
    pub budget_jobs: Vec<BTreeMap<JobId, Vec<u16>>>,
}

/// Numbers `job`'s task requests in `list` (the distinct requests, first seen
/// first; `of` finds a request's number).
/// True if some task of the job holds host ports.
fn holds_ports(job: &Job) -> bool {
    job.spec.tasks.iter().any(|t| !t.host_ports().is_empty())
}

fn number_shapes(list: &mut Vec<Resources>, of: &mut rustc_hash::FxHashMap<Resources, u32>, job: &mut Job) {
    for (state, task) in job.tasks.iter_mut().zip(&job.spec.tasks) {
        state.shape = *of.entry(task.requests).or_insert_with(|| {
            list.push(task.requests);
            list.len() as u32 - 1
        });
    }
}

impl World {
    /// A job that arrives after the world was made (jobs pulled from a source as
    /// the run reaches their submit time): added not submitted, with the next id.
    pub fn add_job(&mut self, spec: JobSpec) -> JobId {
        let mut job = Job::new(spec);
        number_shapes(&mut self.shapes, &mut self.shape_of, &mut job);
        self.ported_jobs |= holds_ports(&job);
        let affine = job.spec.tasks.iter().any(|t| t.pod_affinity().is_some());
        self.jobs.push(job);
        if affine {
            self.start_affinity();
        }
        JobId(self.jobs.len() as u32 - 1)
    }

    /// A fresh world: all nodes empty, jobs not submitted.
    pub fn new(cluster: Cluster, queues: Vec<Queue>, jobs: Vec<JobSpec>) -> World {
        let free: Vec<Resources> = cluster.nodes.iter().map(|n| n.allocatable).collect();
        let index = NodeIndex::new(&free);
        let names = &cluster.resource_names;
        let memory_dims = names.dim(crate::devices::GPU_MEMORY).zip(names.dim(crate::devices::GPU_NUMBER));
        let nodes = cluster
            .nodes
            .iter()
            .map(|n| NodeState {
                gpus: GpuDevices::new((n.allocatable.gpu_milli() / DEVICE_MILLI) as usize),
                // Extended resources are read in milli-units.
                gpu_memory: memory_dims.map_or_else(Default::default, |(m, c)| {
                    crate::devices::MemoryCards::new(n.allocatable.get(m) / 1000, n.allocatable.get(c) / 1000)
                }),
                ..NodeState::default()
            })
            .collect();
        // Each distinct task request once, numbered in job order.
        let (mut shapes, mut shape_of) = (Vec::new(), Default::default());
        let mut jobs_in: Store<Job, JobId> = Store::new();
        for spec in jobs {
            let mut job = Job::new(spec);
            number_shapes(&mut shapes, &mut shape_of, &mut job);
            jobs_in.push(job);
        }
        let jobs = jobs_in;
        let ported_jobs = jobs.iter().any(holds_ports);
        let affine = jobs.iter().any(|j| j.spec.tasks.iter().any(|t| t.pod_affinity().is_some()));
        let queues = queues.into_iter().map(QueueState::new).collect();
        let nh = cluster.topology.hypernodes.len();
        let mut hn_allocatable = vec![Resources::ZERO; nh];
        for (i, n) in cluster.nodes.iter().enumerate() {
            for h in cluster.topology.chain(NodeId(i as u32)) {
                hn_allocatable[h.0 as usize] += n.allocatable;
            }
        }
        let table = crate::frag::ModelTable::of_nodes(&cluster.nodes);
        World {
            frag_target: crate::frag::Target::default(),
            node_models: cluster.nodes.iter().map(|n| table.node(n)).collect(),
            share_rule: ShareRule::BestFit,
            vgpu_policy: None,
            vgpu_preset: None,
            vgpu_rules: Vec::new(),
            vnpu_policy: None,
            vnpu_preset: None,
            numa: false,
            numa_preset: None,
            numa_released: Vec::new(),
            ports: view::NodeView::sized(cluster.nodes.len()),
            ported_jobs,
            affinity: affine
                .then(|| Box::new(affinity::AffinityLedger::new(view::NodeView::sized(cluster.nodes.len())))),
            hn_allocatable: hn_allocatable.into(),
            hn_used: vec![Resources::ZERO; nh].into(),
            hn_future_delta: vec![Resources::ZERO; nh].into(),
            nodes_ahead: 0,
            partial_devices: 0,
            shapes,
            shape_of,
            epoch: 0,
            node_used_epoch: vec![0; cluster.nodes.len()].into(),
            hn_used_epoch: vec![0; nh].into(),
            track_waiting: false,
            waiting_changes: Vec::new(),
            phase_changes: Vec::new(),
            track_jobs: false,
            job_changes: Vec::new(),
            sla_jobs: false,
            pending_best_effort_total: 0,
            gating: BTreeMap::new(),
            stale_gating_for_tests: false,
            admitted: Admitted::default(),
            stale_groups_for_tests: false,
            wrong_unfiled_for_tests: false,
            cluster,
            nodes,
            index,
            victim_index: VictimIndex::default(),
            pods: Store::new(),
            jobs,
            queues,
            active: BTreeSet::new(),
            with_pending: IdSet::new(),
            admitted_pending: IdSet::new(),
            pg_pending: IdSet::new(),
            pg_pending_by_shape: BTreeMap::new(),
            victims: Vec::new(),
            victim_groups_version: 0,
            gpu_used_milli: 0,
            gpu_releasing_milli: 0,
            used_total: Resources::ZERO,
            ahead_total: Resources::ZERO,
            gpus_out_milli: 0,
            budgets: Vec::new(),
            budget_jobs: Vec::new(),
            clock_start: 0,
            memory_dim: memory_dims.map(|(m, _)| m),
        }
    }

    /// Sets the cluster's PodDisruptionBudgets (before any job is submitted).
    pub fn set_budgets(&mut self, budgets: Vec<crate::model::budget::DisruptionBudget>) {
        self.budget_jobs = vec![BTreeMap::new(); budgets.len()];
        self.budgets = budgets;
    }

    /// Sets the fragmentation measure's target workload and where shares of one
    /// GPU go (a placement policy of the FGD paper; best fit otherwise).
    pub fn set_placement(&mut self, target: crate::frag::Target, rule: ShareRule) {
        self.frag_target = target;
        self.share_rule = rule;
    }

    /// A node's idle resources: allocatable − used.
    pub fn idle(&self, n: NodeId) -> Resources {
        self.cluster.node(n).allocatable - self.nodes[n].used
    }
    /// Every node's idle resources summed (cordoned and tainted nodes
    /// included): what no set of placements on idle resources can exceed.
    pub fn idle_total(&self) -> Resources {
        self.cluster.total() - self.used_total
    }
    /// Every node's future idle resources summed ([`World::future_idle`]).
    pub fn future_idle_total(&self) -> Resources {
        self.cluster.total() - self.used_total + self.ahead_total
    }
    /// A node's future idle resources: idle + releasing − pipelined.
    #[inline]
    pub fn future_idle(&self, n: NodeId) -> Resources {
        let s = &self.nodes[n];
        self.cluster.node(n).allocatable - s.used + s.releasing - s.pipelined
    }

    /// Every node, in node order, whose future-idle room plus the Running
    /// preemptable pods of the victim groups `keys` (ascending) covers `req`, into
    /// `out`: the nodes where evicting victims of those groups could make room
    /// (preempt's and reclaim's bound), from an index kept per set of groups.
    pub fn victim_nodes(&mut self, keys: &[VictimKey], req: &Resources, out: &mut Vec<NodeId>) {
        let (cluster, nodes) = (&self.cluster, &self.nodes);
        let bound = |n: NodeId, keys: &[VictimKey]| victim_bound(cluster, nodes, n, keys);
        self.victim_index.fitting(keys, req, nodes.len(), bound, out);
    }

    /// Node `n`'s future-idle room plus the Running preemptable pods of the
    /// victim groups `keys` (ascending): what evicting all of them could leave
    /// (the bound [`World::victim_nodes`] indexes).
    pub fn victim_bound(&self, n: NodeId, keys: &[VictimKey]) -> Resources {
        victim_bound(&self.cluster, &self.nodes, n, keys)
    }

    /// A number that moves whenever a victim group appears in the cluster or
    /// leaves it: equal numbers, the same groups in [`World::victims`].
    pub fn victim_groups_version(&self) -> u64 {
        self.victim_groups_version
    }

    /// Starts the log of nodes whose bound or victims may have changed, for a
    /// reader that carries facts about them across sessions (see
    /// [`World::victim_log_since`]).
    pub fn follow_victim_log(&mut self) {
        let n = self.nodes.len();
        self.victim_index.follow(n);
    }
    /// The position after the last logged change.
    pub fn victim_log_end(&self) -> u64 {
        self.victim_index.end()
    }
    /// The nodes logged since `pos` (with repeats): every node whose future-idle
    /// room, pods, victim sums or taints changed, and every node running a pod of a
    /// job whose pods changed status (its allocation and ready count). `None` when
    /// the log was cut after `pos`, or nobody follows it.
    pub fn victim_log_since(&self, pos: u64) -> Option<&[NodeId]> {
        self.victim_index.since(pos).filter(|_| self.victim_index.logging())
    }
    /// Stops logging the nodes of a job whose pods change (tests only; see
    /// [`crate::planted::PlantedBugs::wrong_carry`]).
    #[doc(hidden)]
    pub fn break_victim_log_for_tests(&mut self) {
        self.victim_index.skip_job_nodes_for_tests = true;
    }

    /// Lets the victim index go stale (tests only: the equivalence check must
    /// notice; see [`crate::planted::PlantedBugs::wrong_victim_index`]).
    #[doc(hidden)]
    pub fn break_victim_index_for_tests(&mut self) {
        self.victim_index.wrong_for_tests = true;
    }

    /// True if the GPU devices of node `n` can take a pod asking `milli` milli-GPUs.
    /// Aggregate `nvidia.com/gpu` checks decide whole-GPU pods on a node whose
    /// devices are all free or full (the sum then says it all, including for
    /// resources being released); with a device shared by fractional pods, or for a
    /// fractional pod, the current devices decide.
    pub fn gpu_fits(&self, n: NodeId, milli: i64) -> bool {
        if !self.gpu_devices_matter(milli) {
            return true;
        }
        let g = &self.nodes[n].gpus;
        if milli % DEVICE_MILLI == 0 && g.partial == 0 {
            return true;
        }
        g.fits(milli)
    }

    /// False when [`World::gpu_fits`] says yes on every node for a pod asking
    /// `milli` milli-GPUs: it asks none, or whole GPUs while no device anywhere
    /// is shared (a search over hundreds of nodes then reads no node).
    pub fn gpu_devices_matter(&self, milli: i64) -> bool {
        milli > 0 && (milli % DEVICE_MILLI != 0 || self.partial_devices > 0)
    }

    /// Creates a Pending pod of `job`'s task `task`, replica `index`.
    pub fn create_pod(&mut self, job: JobId, task: usize, index: u32, now: SimTime) -> PodId {
        let j = &self.jobs[job];
        let t = &j.spec.tasks[task];
        let id = PodId(self.pods.len() as u32);
        let t_req = t.requests;
        let gates = ((1u32 << t.scheduling_gates().len()) - 1) as u16;
        self.pods.push(Pod {
            job,
            task: task as u16,
            index,
            req: t.requests,
            status: PodStatus::Pending,
            node: None,
            nominated: None,
            started: SimTime::ZERO,
            created: now,
            evicted_at: None,
            disrupted: false,
            priority: t.priority,
            preemptable: t.preemptable,
            best_effort: t.requests.is_best_effort(),
            replace_on_release: false,
            replaced: false,
            evicted_when_gone: false,
            exited: false,
            up_since: SimTime::ZERO,
            restarts: 0,
            down: false,
            backoff: 0,
            last_crash: SimTime::ZERO,
            gates,
            gpu_devices: DeviceHold::default(),
            memory_card: None,
        });
        self.phase_changes.push(job);
        self.job_changed(job);
        let j = &mut self.jobs[job];
        j.pods.push(id);
        j.counts[PodStatus::Pending.index()] += 1;
        j.tasks[task].counts[PodStatus::Pending.index()] += 1;
        if !j.sub_jobs.is_empty() {
            let sj = j.sub_job_of(task, index) as usize;
            j.sub_jobs[sj][PodStatus::Pending.index()] += 1;
        }
        j.pending_best_effort += t_req.is_best_effort() as u32;
        self.pending_best_effort_total += t_req.is_best_effort() as u64;
        self.apply(id, PodStatus::Pending, None, t_req, 1);
        if gates != 0 {
            self.gate(id);
        }
        self.reindex(job);
        id
    }

    /// Moves a pod to `status` on `node`, keeping every aggregate consistent.
    pub fn transition(&mut self, pod: PodId, status: PodStatus, node: Option<NodeId>) {
        self.transition_filed(pod, status, node, true);
    }

    /// [`World::transition`] for a move that will be undone before anything
    /// reads the lists it would file the job in: the nodes, HyperNodes,
    /// queues, devices and the job's counts move, but not the admitted list and
    /// its groups, the job's revision and the change journals, nor the job's
    /// victim groups. The move back (again unfiled) leaves them as they were.
    /// For a scheduler's step certain to be discarded, whose every read is of
    /// what moves here.
    pub fn transition_unfiled(&mut self, pod: PodId, status: PodStatus, node: Option<NodeId>) {
        self.transition_filed(pod, status, node, false);
    }

    fn transition_filed(&mut self, pod: PodId, status: PodStatus, node: Option<NodeId>, file: bool) {
        let (old_status, old_node, req, job, task) = {
            let p = &self.pods[pod];
            (p.status, p.node, p.req, p.job, p.task as usize)
        };
        if status != PodStatus::Pending && self.pods[pod].is_gated() {
            // Only a gone pod leaves Pending gated (no action places one).
            debug_assert!(
                matches!(status, PodStatus::Succeeded | PodStatus::Failed | PodStatus::Deleted),
                "a gated pod placed: {status:?}"
            );
            self.ungate(pod, u16::MAX);
        }
        // (The deliberately wrong unfiled move of the equivalence tests leaves
        // the nodes out.)
        let wrong = !file && self.wrong_unfiled_for_tests;
        let on = |n: Option<NodeId>| n.filter(|_| !wrong);
        self.apply(pod, old_status, on(old_node), req, -1);
        if old_status != status && file {
            self.phase_changes.push(job);
            self.job_changed(job);
        }
        {
            let p = &mut self.pods[pod];
            p.status = status;
            p.node = node;
        }
        self.apply(pod, status, on(node), req, 1);
        let change = books::PodMove { pod, job, task, req, was: (old_status, old_node), now: (status, node) };
        for book in books::BOOKS {
            if book.kept(self, &change) {
                book.moved(self, &change);
            }
        }
        let best_effort = self.pods[pod].best_effort as u32;
        let j = &mut self.jobs[job];
        j.counts[old_status.index()] -= 1;
        j.tasks[task].counts[old_status.index()] -= 1;
        j.counts[status.index()] += 1;
        j.tasks[task].counts[status.index()] += 1;
        if !j.sub_jobs.is_empty() {
            let sj = j.sub_job_of(task, self.pods[pod].index) as usize;
            j.sub_jobs[sj][old_status.index()] -= 1;
            j.sub_jobs[sj][status.index()] += 1;
        }
        let pending = |s: PodStatus| (s == PodStatus::Pending) as u32;
        j.pending_best_effort =
            j.pending_best_effort + best_effort * pending(status) - best_effort * pending(old_status);
        self.pending_best_effort_total = self.pending_best_effort_total + (best_effort * pending(status)) as u64
            - (best_effort * pending(old_status)) as u64;
        if !file {
            return;
        }
        if self.admitted.lists(job) {
            self.admitted.refresh(job, reach_facts(j), !self.stale_groups_for_tests);
        }
        let j = &self.jobs[job];
        if pending(status) != pending(old_status) {
            self.reindex(job);
        } else if self.track_waiting && j.counted && j.pg_phase == PodGroupPhase::Pending {
            // A waiting job's counts and allocation changed (its job-order keys may have).
            self.waiting_changes.push(job);
        }
        let j = &self.jobs[job];
        if j.victims_misfiled() {
            self.refile_victims(job);
        }
        // The job's allocation or ready count may have changed: what drf and gang
        // say of its pods as victims, on every node where it runs.
        if self.victim_index.logging() && !self.victim_index.skip_job_nodes_for_tests {
            let j = &self.jobs[job];
            for &p in &j.pods {
                let pod = &self.pods[p];
                if let Some(n) = pod.node.filter(|_| pod.status == PodStatus::Running) {
                    self.victim_index.touch(n);
                }
            }
        }
    }

    /// Moves a job's Running preemptable pods to the victim group of its new
    /// flags ([`Job::victim_flags`]).
    fn refile_victims(&mut self, job: JobId) {
        let j = &self.jobs[job];
        let was = j.victim_key();
        let (over_min, lone) = j.victim_flags();
        let now = VictimKey { over_min, lone, ..was };
        for &p in &j.pods {
            let pod = &self.pods[p];
            let Some(n) = pod.node.filter(|_| pod.status == PodStatus::Running && pod.preemptable) else { continue };
            add_victim(&mut self.nodes[n].victims, was, pod.req, -1);
            add_victim(&mut self.nodes[n].victims, now, pod.req, 1);
            let gone = add_victim(&mut self.victims, was, pod.req, -1);
            let came = add_victim(&mut self.victims, now, pod.req, 1);
            self.victim_groups_version += (gone || came) as u64;
            if !self.victim_index.skip_job_nodes_for_tests {
                self.victim_index.touch(n);
            }
        }
        let j = &mut self.jobs[job];
        j.victims_over_min = over_min;
        j.victims_lone = lone;
    }

    /// Keeps `with_pending`, `admitted_pending` and `pg_pending` in step with a
    /// job's pods and phases.
    fn reindex(&mut self, j: JobId) {
        let job = &self.jobs[j];
        let pending = job.counts[PodStatus::Pending.index()] > 0 && !job.phase.is_terminal();
        let admitted = job.pg_phase != PodGroupPhase::Pending;
        // Its PodGroup was deleted: nothing to admit until a new one is made.
        let waiting = job.counted && !admitted && !job.pg_deleted;
        let shape = (job.spec.queue, job.spec.min_resources.0);
        self.with_pending.put(j, pending);
        self.admitted_pending.put(j, pending && admitted);
        self.admitted.set(j, (pending && admitted).then(|| reach_facts(job)), job.revision, job.pg_created);
        let moved = self.pg_pending.put(j, waiting);
        if self.track_waiting && (waiting || moved) {
            self.waiting_changes.push(j);
        }
        if moved {
            let by_shape = &mut self.pg_pending_by_shape;
            if waiting {
                by_shape.entry(shape).or_default().insert(j);
            } else if let Some(set) = by_shape.get_mut(&shape) {
                set.remove(&j);
                if set.is_empty() {
                    by_shape.remove(&shape);
                }
            }
        }
    }

    /// Stops both journals of changed jobs (`waiting_changes`, `job_changes`)
    /// and empties them: the next drain starts them again and tells its
    /// scheduler to walk every job (a scheduler that just took over has no view
    /// the journals could bring up to date).
    pub fn restart_journals(&mut self) {
        self.track_waiting = false;
        self.waiting_changes.clear();
        self.track_jobs = false;
        self.job_changes.clear();
    }

    /// Settles [`World::admitted_groups`] after the changes noted since it was
    /// last settled.
    pub fn sync_groups(&mut self) {
        self.admitted.sync_groups();
    }

    /// The admitted jobs with pending pods grouped by facts: the jobs of each
    /// distinct [`ReachFacts`], by PodGroup creation then id; `None` while
    /// changes are not settled ([`World::sync_groups`]).
    pub fn admitted_groups(&self) -> Option<&Groups> {
        self.admitted.groups()
    }

    /// The [`Digest`] of [`World::admitted_groups`]; `None` while changes are
    /// not settled.
    pub fn admitted_digest(&self) -> Option<&Digest> {
        self.admitted.digest()
    }

    /// Runs `f` on a job, moving its terms in its queue's sums from the old state
    /// to the new one.
    fn with_queue_terms(&mut self, j: JobId, f: impl FnOnce(&mut Job)) {
        let deducted = self.deducted(j);
        let job = &mut self.jobs[j];
        let before = queue_terms(job, deducted);
        f(job);
        let after = queue_terms(job, deducted);
        self.queues[job.spec.queue].move_terms(before, after);
    }

    /// Notes a change of job `j`: its [`Job::revision`] moves, and a scheduler
    /// that follows changes ([`World::track_jobs`]) is told.
    pub fn job_changed(&mut self, j: JobId) {
        self.revise(j);
        if self.track_jobs {
            self.job_changes.push(j);
        }
    }

    /// Moves job `j`'s [`Job::revision`] (and its copy in the admitted list).
    pub(crate) fn revise(&mut self, j: JobId) {
        let job = &mut self.jobs[j];
        job.revision += 1;
        self.admitted.revise(j, job.revision);
    }

    /// A job is submitted: Pending, its PodGroup Pending, counted in its queue.
    pub fn activate(&mut self, j: JobId) {
        self.with_queue_terms(j, |job| {
            job.phase = JobPhase::Pending;
            job.pg_phase = PodGroupPhase::Pending;
            job.counted = true;
        });
        let q = self.jobs[j].spec.queue.0 as usize;
        self.sla_jobs |= self.jobs[j].spec.sla_waiting.is_some();
        self.queues[q].active_jobs += 1;
        self.active.insert(j);
        self.job_changed(j);
        self.reindex(j);
        for (b, budget) in self.budgets.iter().enumerate() {
            let spec = &self.jobs[j].spec;
            let queue = &self.queues[q].spec.name;
            let tasks: Vec<u16> =
                (0..spec.tasks.len()).filter(|&t| spec.covered_by(budget, t, queue)).map(|t| t as u16).collect();
            if !tasks.is_empty() {
                self.budget_jobs[b].insert(j, tasks);
            }
        }
    }

    /// A job reached a terminal phase: it leaves the active set and its queue's sums.
    pub fn deactivate(&mut self, j: JobId) {
        if !self.jobs[j].counted {
            return;
        }
        self.with_queue_terms(j, |job| job.counted = false);
        let q = self.jobs[j].spec.queue.0 as usize;
        self.queues[q].active_jobs -= 1;
        self.active.remove(&j);
        self.job_changed(j);
        self.with_pending.remove(j);
        self.reindex(j);
        for covered in &mut self.budget_jobs {
            covered.remove(&j);
        }
    }

    /// An edit of a job's gang sizes (a VolcanoJob scaled: task `t`'s replicas and
    /// minAvailable, the job's minAvailable; its `minResources` computed anew, as
    /// the controller's `createOrUpdatePodGroup` does). See [`World::reshape`].
    pub fn rescale(&mut self, j: JobId, t: usize, replicas: u32, task_min: u32, job_min: u32) {
        self.reshape(j, |spec| {
            let task = &mut spec.tasks[t];
            task.replicas = replicas;
            task.min_available = task_min;
            spec.min_available = job_min;
            spec.min_resources = spec.compute_min_resources();
        });
    }

    /// An edit of a job's tasks and gang (`edit` changes its spec: replicas,
    /// minimums, `minResources`, sub-group minimums): the job's queue terms, its
    /// waiting-admission shape, its out-of-reach facts and its victim groups
    /// move with it. Pods are the caller's to make or delete.
    pub fn reshape(&mut self, j: JobId, edit: impl FnOnce(&mut JobSpec)) {
        // Out of the shape-keyed waiting set under the old shape; `reindex` files
        // it under the new one.
        let old_shape = (self.jobs[j].spec.queue, self.jobs[j].spec.min_resources.0);
        if self.pg_pending.remove(j)
            && let Some(set) = self.pg_pending_by_shape.get_mut(&old_shape)
        {
            set.remove(&j);
            if set.is_empty() {
                self.pg_pending_by_shape.remove(&old_shape);
            }
        }
        self.with_queue_terms(j, |job| edit(&mut job.spec));
        // A new `minMember` may move the PodGroup's phase at the next close.
        self.phase_changes.push(j);
        let job = &self.jobs[j];
        if job.victims_misfiled() {
            self.refile_victims(j);
        }
        self.reindex(j);
    }

    /// Sets a job's PodGroup phase; a new phase moves the job's revision (what a
    /// scheduler remembers of a job may hold only for one phase: preempt and
    /// reclaim ask only admitted jobs).
    pub fn set_pg_phase(&mut self, j: JobId, phase: PodGroupPhase) {
        let moved = self.jobs[j].pg_phase != phase;
        self.with_queue_terms(j, |job| job.pg_phase = phase);
        if moved {
            self.revise(j);
        }
        self.reindex(j);
    }

    fn apply(&mut self, pod: PodId, status: PodStatus, node: Option<NodeId>, req: Resources, sign: i64) {
        let job = self.pods[pod].job;
        let qid = self.jobs[job].spec.queue;
        let q = qid.0 as usize;
        let delta = req.times(sign);
        if status.is_allocated() {
            self.with_queue_terms(job, |j| j.allocated += delta);
            self.queues[q].allocated += delta;
        }
        if status == PodStatus::Pending {
            self.queues[q].pending += delta;
        }
        if status == PodStatus::Pipelined {
            self.jobs[job].pipelined += delta;
            self.queues[q].pipelined += delta;
        }
        let Some(n) = node else { return };
        let preemptable = self.pods[pod].preemptable;
        let j = &self.jobs[job];
        let vkey = j.victim_key();
        let ns = &mut self.nodes[n];
        let mut touched = false;
        let ahead = |ns: &NodeState| !ns.releasing.is_zero() || !ns.pipelined.is_zero();
        let mut ahead_change = 0i64;
        if matches!(status, PodStatus::Releasing | PodStatus::Pipelined) {
            ahead_change -= ahead(ns) as i64;
        }
        let holds = matches!(status, PodStatus::Allocated | PodStatus::Running | PodStatus::Releasing);
        let future = match status {
            PodStatus::Releasing => delta,
            PodStatus::Pipelined => Resources::ZERO - delta,
            _ => Resources::ZERO,
        };
        if holds {
            self.epoch += 1;
            self.node_used_epoch[n] = self.epoch;
        }
        self.ahead_total += future;
        if holds || !future.is_zero() {
            for &h in self.cluster.topology.chain(n) {
                if holds {
                    self.hn_used[h] += delta;
                    self.hn_used_epoch[h] = self.epoch;
                }
                self.hn_future_delta[h] += future;
            }
        }
        if status == PodStatus::Running && preemptable {
            add_victim(&mut ns.victims, vkey, req, sign);
            self.victim_groups_version += add_victim(&mut self.victims, vkey, req, sign) as u64;
            touched = true;
        }
        if holds {
            ns.used += delta;
            self.gpu_used_milli += delta.get(GPU);
            self.used_total += delta;
            // Kept in pod-id order, so the order does not depend on history (an
            // eviction undone by a discarded statement leaves it as it was).
            match ns.pods.binary_search(&pod) {
                Err(at) if sign > 0 => ns.pods.insert(at, pod),
                Ok(at) if sign < 0 => {
                    ns.pods.remove(at);
                }
                _ => {}
            }
            touched = true;
        }
        if status == PodStatus::Releasing {
            ns.releasing += delta;
            self.gpu_releasing_milli += delta.get(GPU);
            touched = true;
        }
        if status == PodStatus::Pipelined {
            ns.pipelined += delta;
            touched = true;
        }
        if matches!(status, PodStatus::Releasing | PodStatus::Pipelined) {
            ahead_change += ahead(ns) as i64;
            self.nodes_ahead = (self.nodes_ahead as i64 + ahead_change) as u32;
        }
        if touched {
            let free = self.future_idle(n);
            self.index.update(n, free);
            self.victim_index.touch(n);
        }
    }

    /// Holds `delta` of node `n`'s future-idle resources for a scheduler's
    /// session (a negative `delta` gives it back): counted as pipelined on
    /// the node, with no pod moved ([`crate::session::Session::hold`]).
    pub fn hold(&mut self, n: NodeId, delta: Resources) {
        let ahead = |ns: &NodeState| !ns.releasing.is_zero() || !ns.pipelined.is_zero();
        let before = ahead(&self.nodes[n]) as i64;
        self.nodes[n].pipelined += delta;
        let after = ahead(&self.nodes[n]) as i64;
        self.nodes_ahead = (self.nodes_ahead as i64 + after - before) as u32;
        self.ahead_total -= delta;
        for &h in self.cluster.topology.chain(n) {
            self.hn_future_delta[h] -= delta;
        }
        let free = self.future_idle(n);
        self.index.update(n, free);
        self.victim_index.touch(n);
    }

    /// A HyperNode's idle resources (Σ over its nodes).
    pub fn hn_idle(&self, h: crate::model::ids::HyperNodeId) -> Resources {
        self.hn_allocatable[h] - self.hn_used[h]
    }
    /// A HyperNode's future idle resources (Σ over its nodes).
    pub fn hn_future_idle(&self, h: crate::model::ids::HyperNodeId) -> Resources {
        self.hn_idle(h) + self.hn_future_delta[h]
    }

    /// Distinct nodes holding the job's Running pods, ascending.
    pub fn job_nodes(&self, job: JobId) -> Vec<NodeId> {
        let mut v: Vec<NodeId> = self.jobs[job]
            .pods
            .iter()
            .filter(|p| matches!(self.pods[**p].status, PodStatus::Running | PodStatus::Allocated))
            .filter_map(|p| self.pods[*p].node)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Checks the World's main aggregates against a recomputation from pods (node,
    /// HyperNode and cluster usage, each node's releasing and pipelined sums and
    /// its list of holding pods, victim sums, queue sums, pending-job sets and
    /// groups, the free-resource index, GPU device counts); returns the first
    /// inconsistency. HyperNode future deltas and the vGPU/vNPU/NUMA/GPU-memory
    /// books are not rechecked. The engine runs it after every instant in debug
    /// builds and when [`crate::engine::EngineConfig::check_invariants`] is on.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut used = vec![Resources::ZERO; self.nodes.len()];
        let mut releasing = vec![Resources::ZERO; self.nodes.len()];
        let mut pipelined = vec![Resources::ZERO; self.nodes.len()];
        let mut held: Vec<Vec<PodId>> = vec![Vec::new(); self.nodes.len()];
        // Per queue: (allocated, pipelined); per job: pipelined.
        let mut by_queue = vec![(Resources::ZERO, Resources::ZERO); self.queues.len()];
        let mut by_job: BTreeMap<JobId, Resources> = BTreeMap::new();
        for (id, p) in self.pods.iter_ids() {
            if let Some(j) = self.jobs.get(p.job) {
                let q = &mut by_queue[j.spec.queue.0 as usize];
                if p.status.is_allocated() {
                    q.0 += p.req;
                } else if p.status == PodStatus::Pipelined {
                    q.1 += p.req;
                    *by_job.entry(p.job).or_default() += p.req;
                }
            }
            if matches!(p.status, PodStatus::Allocated | PodStatus::Running | PodStatus::Releasing) {
                let n = p.node.ok_or("holding pod without node")?;
                used[n.0 as usize] += p.req;
                held[n.0 as usize].push(id);
            }
            match (p.status, p.node) {
                (PodStatus::Releasing, Some(n)) => releasing[n.0 as usize] += p.req,
                (PodStatus::Pipelined, Some(n)) => pipelined[n.0 as usize] += p.req,
                _ => {}
            }
        }
        for (j, job) in self.jobs.iter_ids() {
            if job.pipelined != by_job.get(&j).copied().unwrap_or_default() {
                return Err(format!("job {}: pipelined resources out of date", job.spec.name));
            }
        }
        for (qs, &(allocated, pipelined)) in self.queues.iter().zip(&by_queue) {
            if qs.allocated != allocated || qs.pipelined != pipelined {
                return Err(format!("queue {}: allocated or pipelined resources out of date", qs.spec.name));
            }
        }
        for (i, ns) in self.nodes.iter().enumerate() {
            if ns.releasing != releasing[i] || ns.pipelined != pipelined[i] {
                return Err(format!("node {i}: releasing or pipelined resources out of date"));
            }
            if ns.pods != held[i] {
                return Err(format!("node {i}: its list of holding pods out of date"));
            }
        }
        let ahead = self.nodes.iter().filter(|s| !s.releasing.is_zero() || !s.pipelined.is_zero()).count();
        if ahead != self.nodes_ahead as usize {
            return Err(format!(
                "nodes with releasing or pipelined resources: {} counted, {ahead} found",
                self.nodes_ahead
            ));
        }
        for (i, j) in self.jobs.iter_ids() {
            let shapes_right =
                j.tasks.iter().zip(&j.spec.tasks).all(|(s, t)| self.shapes.get(s.shape as usize) == Some(&t.requests));
            if !shapes_right {
                return Err(format!("job {}: request indices out of date", i.0));
            }
        }
        let listed: Vec<(JobId, ReachFacts)> =
            self.admitted_pending.iter().map(|&j| (j, reach_facts(&self.jobs[j]))).collect();
        let revs: Vec<u64> = self.admitted_pending.iter().map(|&j| self.jobs[j].revision).collect();
        let created: Vec<SimTime> = self.admitted_pending.iter().map(|&j| self.jobs[j].pg_created).collect();
        self.admitted.check(&listed, &revs, &created)?;
        let mut victims: Vec<Vec<(VictimKey, u32, Resources)>> = vec![Vec::new(); self.nodes.len()];
        let mut all = Vec::new();
        for p in self.pods.iter().filter(|p| p.status == PodStatus::Running && p.preemptable) {
            let j = &self.jobs[p.job];
            if j.victims_misfiled() {
                return Err(format!("job {}: victim group flags out of date", p.job.0));
            }
            let key = j.victim_key();
            add_victim(&mut victims[p.node.ok_or("running pod without node")?.0 as usize], key, p.req, 1);
            add_victim(&mut all, key, p.req, 1);
        }
        for (i, v) in victims.into_iter().enumerate() {
            if v != self.nodes[i].victims {
                return Err(format!("node {i}: victim sums out of date"));
            }
        }
        if all != self.victims {
            return Err("cluster victim sums out of date".into());
        }
        let be_total: u64 = self.jobs.iter_ids().map(|(_, j)| j.pending_best_effort as u64).sum();
        if be_total != self.pending_best_effort_total {
            return Err("pending BestEffort total out of date".into());
        }
        let gating = self.gating_from_pods();
        if gating != self.gating {
            return Err("gated pods' records out of date".into());
        }
        let mut terms = vec![[Resources::ZERO; 3]; self.queues.len()];
        let mut active = vec![0u32; self.queues.len()];
        for (i, j) in self.jobs.iter_ids() {
            let q = j.spec.queue.0 as usize;
            let t = queue_terms(j, self.deducted(i));
            for k in 0..3 {
                terms[q][k] += t[k];
            }
            active[q] += j.counted as u32;
            if j.counted != self.active.contains(&i) {
                return Err(format!("job {}: counted but not active, or the reverse", i.0));
            }
            let be = j
                .pods
                .iter()
                .filter(|p| self.pods[**p].status == PodStatus::Pending && self.pods[**p].best_effort)
                .count() as u32;
            if be != j.pending_best_effort {
                return Err(format!("job {}: pending BestEffort count out of date", i.0));
            }
            let admitted = j.pg_phase != PodGroupPhase::Pending;
            if self.admitted_pending.contains(i) != (self.with_pending.contains(i) && admitted)
                || self.pg_pending.contains(i) != (j.counted && !admitted && !j.pg_deleted)
            {
                return Err(format!("job {}: pending-job sets out of date", i.0));
            }
        }
        let grouped: BTreeSet<JobId> = self.pg_pending_by_shape.values().flatten().copied().collect();
        let shapes_right = self.pg_pending_by_shape.iter().all(|(k, set)| {
            !set.is_empty() && set.iter().all(|j| (self.jobs[*j].spec.queue, self.jobs[*j].spec.min_resources.0) == *k)
        });
        if grouped != *self.pg_pending.as_ordered() || !shapes_right {
            return Err("waiting PodGroups by shape out of date".into());
        }
        for (q, qs) in self.queues.iter().enumerate() {
            if [qs.inqueue, qs.elastic, qs.reserved] != terms[q] || qs.active_jobs != active[q] {
                return Err(format!("queue {}: job sums out of date", qs.spec.name));
            }
        }
        let mut hn = vec![Resources::ZERO; self.hn_used.len()];
        for (i, u) in used.iter().enumerate() {
            for h in self.cluster.topology.chain(NodeId(i as u32)) {
                hn[h.0 as usize] += *u;
            }
        }
        if hn[..] != *self.hn_used {
            return Err("HyperNode usage sums out of date".into());
        }
        if used.iter().fold(Resources::ZERO, |a, u| a + *u) != self.used_total {
            return Err("the cluster's usage sum is out of date".into());
        }
        let future = (0..self.nodes.len()).fold(Resources::ZERO, |a, n| a + self.future_idle(NodeId(n as u32)));
        if future != self.future_idle_total() {
            return Err("the cluster's future-idle sum is out of date".into());
        }
        let releasing: i64 =
            self.pods.iter().filter(|p| p.status == PodStatus::Releasing).map(|p| p.req.get(GPU)).sum();
        if releasing != self.gpu_releasing_milli {
            return Err(format!("releasing GPUs: {} counted, {releasing} found", self.gpu_releasing_milli));
        }
        if used.iter().map(|u| u.get(GPU)).sum::<i64>() != self.gpu_used_milli {
            return Err("the cluster's GPU usage sum is out of date".into());
        }
        for (i, ns) in self.nodes.iter().enumerate() {
            if ns.used != used[i] {
                return Err(format!("node {i}: used {:?} but pods sum to {:?}", ns.used, used[i]));
            }
            let alloc = self.cluster.nodes[i].allocatable;
            if !ns.used.fits_in(&alloc) {
                return Err(format!(
                    "node {} over-allocated: used {:?} > allocatable {:?}",
                    self.cluster.nodes[i].name, ns.used, alloc
                ));
            }
            let free = self.future_idle(NodeId(i as u32));
            if self.index.free(NodeId(i as u32)) != free {
                return Err(format!("node {i}: index out of date"));
            }
            let g = &ns.gpus;
            let out = ns.lost_devices.count_ones() as i64 * DEVICE_MILLI;
            let device_used: i64 = g.free.iter().map(|f| DEVICE_MILLI - f).sum::<i64>() - out;
            if !g.free.is_empty() && device_used != ns.used.get(GPU) {
                return Err(format!("node {i}: devices hold {device_used} milli-GPUs, pods {}", ns.used.get(GPU)));
            }
            if let Some(d) = g.free.iter().position(|&f| !(0..=DEVICE_MILLI).contains(&f)) {
                return Err(format!(
                    "node {}: GPU device {d} over-shared (free {})",
                    self.cluster.nodes[i].name, g.free[d]
                ));
            }
            let partial = g.free.iter().filter(|&&f| f > 0 && f < DEVICE_MILLI).count() as u32;
            if partial != g.partial {
                return Err(format!("node {i}: partial-device count out of date"));
            }
        }
        let partial: u32 = self.nodes.iter().map(|ns| ns.gpus.partial).sum();
        if partial != self.partial_devices {
            return Err(format!("partial devices: {} counted, {partial} on the nodes", self.partial_devices));
        }
        Ok(())
    }
}
