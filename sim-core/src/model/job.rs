//! Jobs as Volcano's scheduler sees them: a PodGroup and its Pods, with the
//! VolcanoJob controller's view on top (tasks, dependsOn, policies, retries).
//!
//! A VolcanoJob, PyTorchJob, MPIJob or RayJob is turned into a [`JobSpec`] by the
//! workload importers, the way the respective controllers would create the PodGroup
//! and pods.

use crate::model::ids::NodeId;
use crate::model::ids::QueueId;
use crate::model::resource::Resources;
use crate::util::time::{SimDuration, SimTime};
use std::sync::Arc;

pub use crate::model::ids::{JobId, PodId};

/// A controller event a policy reacts to (`policies[].event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyEvent {
    /// `*`: any event.
    Any,
    /// A pod was evicted (preempted, reclaimed, node failure).
    PodEvicted,
    /// A pod failed.
    PodFailed,
    /// All replicas of a task succeeded.
    TaskCompleted,
    /// The PodGroup became Unknown (part of the gang running, the rest unschedulable).
    JobUnknown,
    /// A pod was created, or went back to Pending; a policy on it acts only with a
    /// `timeout`, if the pod is still Pending then (Volcano's
    /// `shouldConfigureTimeout`).
    PodPending,
    /// A task's pods restarted their containers in place at least its
    /// `maxRetry` times in all (raised by Volcano on an update of the task's
    /// pods: `jobCache.TaskFailed`).
    TaskFailed,
    /// The job's spec was updated (never raised: lahar's jobs are not edited while
    /// they run).
    JobUpdated,
    /// Not an event: a policy on a container's exit code (`exitCode`, never 0),
    /// which fires for a pod that failed with it, whatever event names the failure.
    ExitCode(i32),
}

impl PolicyEvent {
    /// Parses Volcano's spelling.
    pub fn parse(s: &str) -> Option<PolicyEvent> {
        Some(match s {
            "*" => PolicyEvent::Any,
            "PodEvicted" => PolicyEvent::PodEvicted,
            "PodFailed" => PolicyEvent::PodFailed,
            "TaskCompleted" => PolicyEvent::TaskCompleted,
            "Unknown" => PolicyEvent::JobUnknown,
            "PodPending" => PolicyEvent::PodPending,
            "TaskFailed" => PolicyEvent::TaskFailed,
            "JobUpdated" => PolicyEvent::JobUpdated,
            _ => return None,
        })
    }
    /// True if a policy on `self` fires for `actual`.
    pub fn matches(self, actual: PolicyEvent) -> bool {
        self == PolicyEvent::Any || self == actual
    }
    /// Volcano's spelling (`exitCode N` for an exit-code policy).
    pub fn name(self) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(match self {
            PolicyEvent::Any => "*",
            PolicyEvent::PodEvicted => "PodEvicted",
            PolicyEvent::PodFailed => "PodFailed",
            PolicyEvent::TaskCompleted => "TaskCompleted",
            PolicyEvent::JobUnknown => "Unknown",
            PolicyEvent::PodPending => "PodPending",
            PolicyEvent::TaskFailed => "TaskFailed",
            PolicyEvent::JobUpdated => "JobUpdated",
            PolicyEvent::ExitCode(c) => return std::borrow::Cow::Owned(format!("exitCode {c}")),
        })
    }
}

/// Why a job reached its terminal phase, recorded where it did: what
/// `--explain` names beside the phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobEnd {
    /// Its work was done: its running pods succeeded.
    WorkDone,
    /// Every replica ended (Volcano's Running `SyncJob`); `succeeded` of them
    /// succeeded (Failed: fewer than `minAvailable`).
    PodsEnded {
        /// Its pods that succeeded.
        succeeded: u32,
    },
    /// Every replica ended and task `task` had `succeeded` Succeeded pods, fewer
    /// than its `minAvailable`.
    TaskShort {
        /// The first such task (its index).
        task: u16,
        /// Its Succeeded pods.
        succeeded: u32,
    },
    /// `minSuccess` pods succeeded; its other pods were killed.
    MinSuccess,
    /// Every replica ended with `succeeded` of them Succeeded, fewer than
    /// `minSuccess`.
    MinSuccessMissed {
        /// Its pods that succeeded.
        succeeded: u32,
    },
    /// Its `activeDeadlineSeconds` passed (Kubernetes' `DeadlineExceeded`).
    Deadline,
    /// Its retries reached `maxRetry` (a batch/v1 Job: its failed pods passed
    /// `backoffLimit`).
    MaxRetry,
    /// A batch/v1 Job under `restartPolicy: OnFailure`: its live pods'
    /// containers restarted `restarts` times, reaching `backoffLimit`.
    BackoffOnFailure {
        /// The restarts counted.
        restarts: u32,
    },
    /// A lifecycle policy's action ([`PolicyActed`] names it).
    Policy,
    /// Pods without a controller: none was left alive.
    PodsGone,
    /// Its CronJob's next run replaced it (`concurrencyPolicy: Replace`).
    Replaced,
    /// Its serving workload scaled in and removed it.
    ScaledIn,
    /// An operator deleted it (the timeline's `deleteJob`).
    Deleted,
    /// An operator suspended it (the timeline's `suspendJob`) and nothing
    /// resumed it.
    Suspended,
}

/// The lifecycle policy that acted on a job last: what `--explain` tells of a
/// job its controller restarted or ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyActed {
    /// When it acted (after its `timeout`, for one that waited).
    pub at: SimTime,
    /// The event the controller heard.
    pub event: PolicyEvent,
    /// The policy's action.
    pub action: PolicyAction,
    /// The pod the event was about: its task and replica (its name).
    pub pod: Option<(u16, u32)>,
    /// The exit code the event carried (a failed or stopped container's).
    pub exit: Option<i32>,
}

/// What the controller does when a policy fires (`policies[].action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyAction {
    /// Kill every pod and start the job again (retry count + 1).
    RestartJob,
    /// Kill and recreate the pods of the affected task.
    RestartTask,
    /// Recreate the affected pod (the default reaction to an eviction).
    RestartPod,
    /// Kill all pods; the job ends Aborted.
    AbortJob,
    /// Kill all pods; the job ends Terminated.
    TerminateJob,
    /// Kill unfinished pods; the job ends Completed.
    CompleteJob,
    /// Kill and recreate the pods of the affected pod's partition (sub-job); a
    /// job without partitions is left alone (Volcano's `killPods` finds none).
    RestartPartition,
    /// Resume an Aborted job; in any other state the job is only synced, as
    /// without a policy (Volcano's Running and Pending states run `SyncJob`).
    ResumeJob,
}

impl PolicyAction {
    /// Parses Volcano's spelling.
    pub fn parse(s: &str) -> Option<PolicyAction> {
        Some(match s {
            "RestartJob" => PolicyAction::RestartJob,
            "RestartTask" => PolicyAction::RestartTask,
            "RestartPod" => PolicyAction::RestartPod,
            "AbortJob" => PolicyAction::AbortJob,
            "TerminateJob" => PolicyAction::TerminateJob,
            "CompleteJob" => PolicyAction::CompleteJob,
            "RestartPartition" => PolicyAction::RestartPartition,
            "ResumeJob" => PolicyAction::ResumeJob,
            _ => return None,
        })
    }
    /// Volcano's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyAction::RestartJob => "RestartJob",
            PolicyAction::RestartTask => "RestartTask",
            PolicyAction::RestartPod => "RestartPod",
            PolicyAction::AbortJob => "AbortJob",
            PolicyAction::TerminateJob => "TerminateJob",
            PolicyAction::CompleteJob => "CompleteJob",
            PolicyAction::RestartPartition => "RestartPartition",
            PolicyAction::ResumeJob => "ResumeJob",
        }
    }
}

/// One lifecycle policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Trigger.
    pub event: PolicyEvent,
    /// Reaction.
    pub action: PolicyAction,
    /// `timeout`: the action waits this long (Volcano's delayed action) and is
    /// dropped if the pod left Pending meanwhile (PodPending), or a pod of the
    /// same name runs again (PodEvicted, PodFailed). A PodPending policy acts
    /// only with one.
    pub timeout: Option<SimDuration>,
}

pub use crate::model::topology::NetworkTopology;

/// A task (role) of a job: `replicas` identical pods.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskSpec {
    /// Role name (`master`, `worker`, `ps`, `head`, `launcher`...; shared).
    pub name: Arc<str>,
    /// Number of pods.
    pub replicas: u32,
    /// Per-task minAvailable (`minTaskMember`).
    pub min_available: u32,
    /// Requests of each pod (including `pods: 1`).
    pub requests: Resources,
    /// Pod priority (from its PriorityClass); Volcano's default task priority is 1.
    pub priority: i32,
    /// The tasks this task waits for, each until it is [`Until`] far.
    pub depends_on: Vec<Dependency>,
    /// `iteration: any` (true) or `all` (false).
    pub depends_any: bool,
    /// Node selector: every label must match.
    pub node_selector: Vec<(String, String)>,
    /// Labels that must take one of several values: for each `(key, values)`,
    /// the node's label `key` is one of `values` (a required node-affinity `In`
    /// expression; openb's `gpu_spec` alternatives `A|B`).
    pub node_label_in: Vec<(String, Vec<String>)>,
    /// Task-level policies (checked before the job's).
    pub policies: Vec<Policy>,
    /// `volcano.sh/preemptable` (default true).
    pub preemptable: bool,
    /// The pods' `preemptionPolicy: Never` (their own, else their PriorityClass's, as
    /// Kubernetes' admission sets it): they wait for room and never evict others;
    /// Volcano's preempt and reclaim pass them over as preemptors.
    pub never_preempts: bool,
    /// The pods' tolerations (`spec.tolerations`): which node taints they accept.
    pub tolerations: Vec<Toleration>,
    /// What the pods' labels and annotations tell Volcano's plugins (none for
    /// most tasks: one pointer).
    pub hints: Option<Arc<PodHints>>,
    /// The task's own run time: each pod succeeds once it has run this long (a
    /// launcher, a data-preparation step), and when all have, the task is
    /// complete (`TaskCompleted`). `None`: its pods end with their job.
    pub run_time: Option<SimDuration>,
    /// The pods' container exits with a failure after running this long
    /// (`lahar.io/fail-after`): under `restartPolicy: Never` the pod is Failed and
    /// the job controller hears `PodFailed` with its exit code; a VolcanoJob's
    /// or batch/v1 Job's pod under `OnFailure` (or a VolcanoJob's under
    /// `Always`) stays Running while the kubelet restarts the container in
    /// place ([`ContainerExit::in_place`]). A VolcanoJob task's run time under
    /// `Always` is an exit with code 0, restarted in place, and no `run_time`.
    pub exits: Option<ContainerExit>,
    /// The exit code of the pods' container when the kubelet stops it because
    /// the pod was deleted (SIGTERM at the deletion, SIGKILL at the grace
    /// period's end): a VolcanoJob's controller hears the pod's terminal phase,
    /// Failed with this code or Succeeded for 0, before its deletion
    /// ([`JobSpec::hears_terminal_phase`]). [`STOPPED_EXIT_CODE`] unless the
    /// template says (`lahar.io/stop-exit-code`).
    pub stop_code: i32,
}

/// A container that exits: after running `after`, with exit code `code` (1–255,
/// a failure; 0: a VolcanoJob task's run time under `restartPolicy: Always`,
/// whose container the kubelet restarts although it succeeded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerExit {
    /// How long each run of the container lasts before it exits.
    pub after: SimDuration,
    /// Its exit code (`containerStatuses[0].state.terminated.exitCode`).
    pub code: i32,
    /// The kubelet restarts it in place (`restartPolicy: OnFailure` or
    /// `Always`): the pod stays Running, its restart count grows; `None`
    /// under `Never`.
    pub in_place: Option<InPlace>,
}

/// Restarts in place of a task's containers, as Volcano's job controller counts
/// them. A batch/v1 Job's ([`JobSpec::batch`]) count instead towards its
/// `backoffLimit` ([`BatchRules::backoff_limit`]), as Kubernetes' Job
/// controller counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InPlace {
    /// The task's `maxRetry`: once its Running and Pending pods' containers have
    /// restarted this many times in all, each update of its pods raises
    /// `TaskFailed` (`jobCache.TaskFailed`; 0 in the manifest is 3); `None`:
    /// no limit (-1).
    pub task_max_retry: Option<u32>,
}

/// How Kubernetes' Job controller runs a `batch/v1` Job (`syncJob` in
/// pkg/controller/job): at most `parallelism` pods active at once, a new one made
/// as each succeeds until `completions` (the task's replicas) have; a pod that
/// ends without succeeding (failed, evicted, deleted) is replaced and counted,
/// and once more than `backoff_limit` have, the Job fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchRules {
    /// `spec.parallelism` (default 1).
    pub parallelism: u32,
    /// `spec.backoffLimit` (default 6). Under `restartPolicy: OnFailure` the
    /// Job fails too once its Running and Pending pods' containers have
    /// restarted in place this many times in all (once, for 0).
    pub backoff_limit: u32,
    /// `spec.podReplacementPolicy: TerminatingOrFailed` (the default without a
    /// `podFailurePolicy`): a deleted pod is made again when its deletion
    /// starts; `Failed`: once it is gone.
    pub replace_terminating: bool,
}

/// A task's dependency: another task of the job, and how far it must be before
/// this task's pods are created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dependency {
    /// The task waited for (an index into the job's tasks).
    pub task: usize,
    /// How far it must be.
    pub until: Until,
}

impl Dependency {
    /// A dependency on `task` until one of its pods runs, at least its
    /// `minAvailable` (a LeaderWorkerSet's leader, a Spark driver).
    pub fn running(task: usize) -> Dependency {
        Dependency { task, until: Until::Running }
    }
    /// A VolcanoJob's `dependsOn` `task` ([`Until::Available`]).
    pub fn available(task: usize) -> Dependency {
        Dependency { task, until: Until::Available }
    }
}

/// How far a task must be for the tasks that depend on it to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// At least the task's `minAvailable` pods, and one, are Running or Succeeded
    /// (a LeaderWorkerSet's workers wait for their leader, a Spark application's
    /// executors for its driver).
    Running,
    /// A VolcanoJob's `dependsOn`: the task's `minAvailable` pods are Running or
    /// Succeeded (the job controller's `isDependsOnPodsReady`: met at once for a
    /// task whose `minAvailable` is 0).
    Available,
    /// JobSet's `status: Ready`: every pod of the task is Running or Succeeded.
    Ready,
    /// JobSet's `status: Complete`: every pod of the task has Succeeded, which
    /// needs the task's own run time.
    Complete,
}

/// A host port a pod's container asks for (`ports[].hostPort`, Kubernetes'
/// NodePorts filter): no two pods on a node may hold the same protocol and
/// port on overlapping addresses.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostPort {
    /// `TCP` (the default), `UDP` or `SCTP`.
    pub protocol: Arc<str>,
    /// `hostIP`; `0.0.0.0` (every address, the default) when not given.
    pub ip: Arc<str>,
    /// `hostPort`, 1–65535.
    pub port: u16,
}

impl HostPort {
    /// Every IPv4 address: a port on it takes the port on every address.
    pub const ANY_IP: &'static str = "0.0.0.0";

    /// True if the two cannot be held on one node at once (Kubernetes'
    /// `HostPortInfo.CheckConflict`: the same protocol and port, and the same
    /// address or one of them `0.0.0.0`).
    pub fn conflicts(&self, other: &HostPort) -> bool {
        self.port == other.port
            && self.protocol == other.protocol
            && (self.ip == other.ip || &*self.ip == Self::ANY_IP || &*other.ip == Self::ANY_IP)
    }
}

/// What a pod's labels, annotations and host ports tell Volcano's plugins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodHints {
    /// resource-strategy-fit's pod-level scoring
    /// (`volcano.sh/resource-strategy-scoring-type` and `-weight`).
    pub scoring: Option<TaskScoring>,
    /// cdp's cooldown (`volcano.sh/cooldown-time`, a label or annotation): the pod
    /// is no preemption or reclaim victim this long after it starts.
    pub cooldown: Option<crate::util::time::SimDuration>,
    /// The pods' labels, as their controller makes them (the template's, then the
    /// controller's own), sorted by key; `None` for jobs lahar builds itself
    /// (compact, trace, synthetic), whose pods carry the labels of Volcano's job
    /// controller ([`JobSpec::pod_labels`]).
    pub labels: Option<Vec<(String, String)>>,
    /// tdm's revocable zone: the pod may run on revocable nodes
    /// (`volcano.sh/revocable-zone: "*"`, or a pod annotated
    /// `volcano.sh/preemptable: "true"` without a zone).
    pub revocable: bool,
    /// What the pods ask of vGPU cards (`volcano.sh/vgpu-number` or
    /// `volcano.sh/vgpu-memory` in a container's limits), with the annotations
    /// that choose cards; boxed.
    pub vgpu: Option<Box<crate::devices::vgpu::VgpuAsk>>,
    /// What the pods ask of Ascend chips (a chip type's count or memory
    /// resource in a container's limits, with `huawei.com/vnpu-mode`); boxed.
    pub vnpu: Option<Box<crate::devices::vnpu::NpuAsk>>,
    /// What the pods ask of NUMA placement (their QoS class, containers' CPU
    /// requests and `volcano.sh/numa-topology-policy`); boxed.
    pub numa: Option<Box<crate::devices::numa::NumaAsk>>,
    /// The host ports the pod's containers hold while it is on a node
    /// (predicates' NodePorts), in the order the manifest gives them.
    pub host_ports: Vec<HostPort>,
    /// Inter-pod affinity and anti-affinity (boxed; none for most pods).
    pub affinity: Option<Box<crate::model::affinity::PodAffinity>>,
    /// The template's `spec.schedulingGates` names, in the manifest's order (at
    /// most [`MAX_SCHEDULING_GATES`]): each pod made from it carries them until
    /// they are removed (`spec.timeline`'s `ungatePod`, `ungateJob`).
    pub scheduling_gates: Vec<String>,
}

impl PodHints {
    /// The hints as a task keeps them: none when there is nothing to say.
    pub fn shared(self) -> Option<Arc<PodHints>> {
        (self != PodHints::default()).then(|| Arc::new(self))
    }
}

/// Volcano's own scheduling gate (`QueueAllocationGateKey`), which its
/// scheduler lifts only under the alpha feature `SchedulingGatesQueueAdmission`
/// (off by default, and in lahar): a pod whose only gate it is stays gated, but
/// its request is not deducted from its job's reservations
/// (`HasOnlyVolcanoSchedulingGate`, api/helpers.go).
pub const QUEUE_ALLOCATION_GATE: &str = "scheduling.volcano.sh/queue-allocation-gate";

/// The most scheduling gates one pod template may carry (each pod keeps which
/// are left in 16 bits; Kubernetes sets no limit, real pods carry one or two).
pub const MAX_SCHEDULING_GATES: usize = 16;

/// The labels Volcano's job controller gives a VolcanoJob's pods (the per-pod
/// `volcano.sh/task-index` aside), sorted by key.
pub fn volcano_pod_labels(job: &str, namespace: &str, queue: &str, task: &str) -> Vec<(String, String)> {
    [
        ("volcano.sh/job-name", job),
        ("volcano.sh/job-namespace", namespace),
        ("volcano.sh/queue-name", queue),
        ("volcano.sh/task-spec", task),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// A pod's own resource-strategy-fit scoring (Volcano's pod-level annotations):
/// one strategy for every resource it weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskScoring {
    /// `MostAllocated` (true) or `LeastAllocated`.
    pub most_allocated: bool,
    /// (resource dimension, weight) of the resources the annotation weights.
    pub weights: Vec<(usize, i64)>,
}

/// A pod toleration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toleration {
    /// Key; empty with `exists` tolerates every taint.
    pub key: String,
    /// `operator: Exists` (any value); else `Equal`.
    pub exists: bool,
    /// Value, for `Equal`.
    pub value: String,
    /// Effect tolerated; empty = every effect.
    pub effect: String,
}

impl Toleration {
    /// Whether this toleration tolerates `t` (Kubernetes' `ToleratesTaint`).
    pub fn tolerates(&self, t: &crate::model::cluster::Taint) -> bool {
        (self.effect.is_empty() || self.effect == t.effect)
            && ((self.key.is_empty() && self.exists) || self.key == t.key)
            && (self.exists || self.value == t.value)
    }
}

/// Everything lahar knows about a job before it runs.
#[derive(Clone, Debug, PartialEq)]
pub struct JobSpec {
    /// Name (unique within its namespace).
    pub name: String,
    /// Namespace (shared: most jobs of a run have one of a few).
    pub namespace: Arc<str>,
    /// Kind it came from (`VolcanoJob`, `PyTorchJob`, `synthetic`...; shared).
    pub kind: Arc<str>,
    /// Queue.
    pub queue: QueueId,
    /// PriorityClass name, if any.
    pub priority_class: Option<String>,
    /// Resolved job priority.
    pub priority: i32,
    /// Submission time.
    pub submit: SimTime,
    /// Gang size (`minMember`).
    pub min_available: u32,
    /// The PodGroup's `volcano.sh/preemptable` (annotation, else label); `None`
    /// when neither is set. gangpreempt and gangreclaim take victims only from jobs
    /// where it is unset or true.
    pub preemptable: Option<bool>,
    /// The PodGroup's disruption budget for tdm (`volcano.sh/jdb-min-available`,
    /// else `volcano.sh/jdb-max-unavailable`); `None` when neither is set.
    pub disruption: Option<crate::model::budget::BudgetRule>,
    /// Tasks.
    pub tasks: Vec<TaskSpec>,
    /// Job-level policies.
    pub policies: Vec<Policy>,
    /// Restarts before the job fails (default 3).
    pub max_retry: u32,
    /// VolcanoJob `minSuccess`: the job is Completed once this many pods
    /// succeeded (its other pods are killed), and Failed if all its pods ended
    /// with fewer succeeded (the job controller's Running state, `SyncJob`).
    pub min_success: Option<u32>,
    /// Pods without a controller (a bare Pod, or a PodGroup's Pods none of which
    /// has `ownerReferences`): a pod evicted or failed is gone for good, as in
    /// Kubernetes, and once no pod is left alive the job ends (Terminated after
    /// an eviction, Failed after a failure).
    pub orphan: bool,
    /// The PodGroup's `volcano.sh/sla-waiting-time` (else `sla-waiting-time`)
    /// annotation: the sla plugin's waiting time for this job, over the plugin's
    /// argument (`JobInfo.extractWaitingTime`).
    pub sla_waiting: Option<SimDuration>,
    /// Its controller creates its pods only while its PodGroup is not Pending:
    /// Volcano's job controller (`syncJob`) and the Kubeflow training-operator
    /// (`DelayPodCreationDueToPodGroup`). Until the group is admitted the job has
    /// no pods, so no queue counts their requests; a pod that goes while the
    /// group is Pending is replaced once it is admitted again. False: the pods
    /// exist from the submission (every other operator, Pods and PodGroups given
    /// as they are, lahar's own jobs).
    pub pods_once_admitted: bool,
    /// A Kubernetes `batch/v1` Job's controller rules (its one task's replicas
    /// are the Job's `completions`); `None` for every other kind.
    pub batch: Option<BatchRules>,
    /// PodGroup `minResources` (computed as Volcano's controller does when absent).
    pub min_resources: Resources,
    /// Network topology constraint.
    pub network_topology: Option<NetworkTopology>,
    /// Sub-groups of its pods (Volcano's PodGroup `subGroupPolicy`, from a
    /// VolcanoJob task's `partitionPolicy`); `None` for most jobs. Boxed.
    pub sub_groups: Option<Box<crate::model::subgroup::SubGroups>>,
    /// Run time under ideal placement (work to do once the gang runs).
    pub duration: SimDuration,
    /// The user's run-time estimate, as a time limit gives it (SWF's requested
    /// time, a `lahar.io/estimate` annotation, a compact job's `estimate`, a
    /// synthetic source's `estimateFactor`); `None` when the input gives none.
    /// Only the baselines told to (`runTime: estimate`) read it; nothing kills a
    /// job that runs past it.
    pub estimate: Option<SimDuration>,
    /// How long after its creation the job may be active (a `batch/v1` Job's
    /// `activeDeadlineSeconds`): one not ended by then fails, its pods deleted
    /// (Kubernetes' `DeadlineExceeded`). `None`: no deadline.
    pub deadline: Option<SimDuration>,
    /// Checkpoint interval in work time; progress since the last checkpoint is lost
    /// when the job stops. `None`: all progress is lost.
    pub checkpoint_interval: Option<SimDuration>,
    /// Elastic: its speed follows its running workers, and resizing costs
    /// time (`None`: its speed is its placement's whatever its size).
    pub elastic: Option<crate::model::elastic::Elastic>,
    /// Graceful termination of evicted pods.
    pub termination_grace: SimDuration,
    /// User / tenant, for reports (shared).
    pub user: Arc<str>,
    /// Affinity between the job's tasks (Volcano's `volcano.sh/task-topology-*`
    /// PodGroup annotations), read by the `task-topology` plugin.
    pub task_topology: Option<Box<TaskTopology>>,
    /// Pods already running when the job arrives (a starting cluster state):
    /// (task index, replica index, node). They are not scheduling decisions.
    pub initial: Vec<(usize, u32, crate::model::ids::NodeId)>,
    /// vGPU cards of initial pods, by their `volcano.sh/vgpu-ids-new` annotation:
    /// (task index, replica index, (card, MiB, cores) per card). A pod without an
    /// entry takes cards by the fit.
    pub initial_vgpu: Vec<(usize, u32, crate::devices::vgpu::CardTakes)>,
    /// Ascend chips of initial pods, by their `hami.io/<commonWord>-devices-allocated`
    /// annotations: (task index, replica index, chips). A pod without an entry
    /// holds none (Volcano's cache counts none).
    pub initial_vnpu: Vec<(usize, u32, crate::devices::vnpu::NpuTakes)>,
    /// CPUs of initial pods on nodes with a NUMA topology, by the node's
    /// `podAllocations` (empty when it lists none): (task index, replica
    /// index, CPUs).
    pub initial_numa: Vec<(usize, u32, crate::devices::numa::CpuSet)>,
    /// The user's own pod names, per task and replica, for pods read from Pod
    /// manifests; `None` when lahar names the pods (`<job>-<task>-<index>`, as
    /// Volcano's job controller does). Boxed: most jobs have none.
    pub pod_names: Option<Box<Vec<Vec<String>>>>,
    /// Volcano's task roles, when several tasks share one: pods of one
    /// `volcano.sh/task-spec` role whose requests differ, or pods without the
    /// annotation (the role `""`) of several shapes. For each task, the index of its
    /// role's first task, which carries the role's `minTaskMember` (the others carry
    /// 0): gang checks count the pods of the whole role. `None` when every task is
    /// its own role.
    pub roles: Option<Box<[u16]>>,
    /// The PodGroup's phase when the job arrives, from a manifest's `status.phase`
    /// (a cluster's starting state: an Inqueue group is not enqueued again). `None`
    /// derives it: Pending, or Inqueue/Running from the pods already running.
    pub start_phase: Option<PodGroupPhase>,
    /// The recurring object (a CronJob and its kin) whose controller creates this
    /// run at its scheduled time, applying the object's concurrency policy then;
    /// `None` for a job submitted on its own. Boxed: most jobs have none.
    pub recurrence: Option<Box<Recurrence>>,
    /// The JobFlow step this job is (Volcano's JobFlow controller creates it once
    /// every job it depends on has completed); `None` for a job on its own.
    /// Boxed: most jobs have none.
    pub flow: Option<Box<FlowStep>>,
    /// The HorizontalPodAutoscaler whose `scaleTargetRef` is this workload (a
    /// Deployment, ReplicaSet or StatefulSet); `None` for most jobs.
    pub autoscaler: Option<Arc<crate::serving::hpa::HpaSpec>>,
    /// The autoscaled workload of groups this job is one group of, and its
    /// group index (a LeaderWorkerSet or ModelServing that an autoscaler
    /// sizes); `None` for most jobs.
    pub group: Option<(Arc<GroupSet>, u32)>,
    /// A RayService's Serve applications (replicas as actors on its pods, Serve's
    /// autoscaling, KubeRay's in-tree autoscaler); `None` for most jobs.
    pub ray_serve: Option<Arc<crate::serving::ray::RayServeSpec>>,
}

/// An autoscaled workload whose replicas are groups, each its own job and
/// PodGroup (a LeaderWorkerSet: a leader and its workers per group; a kthena
/// ModelServing: its roles' pods per serving group). Its
/// autoscaler sets the number of groups; the controller makes group `i` as
/// [`GroupSet::group`] gives it and deletes the highest indices first (or,
/// for a ModelServing, the groups not serving first).
#[derive(Debug)]
pub struct GroupSet {
    /// The workload's namespace.
    pub namespace: Arc<str>,
    /// The workload's name (`spec.services[].workload` names it).
    pub name: String,
    /// Its kind (`LeaderWorkerSet`, `ModelServing`).
    pub kind: Arc<str>,
    /// Its groups at creation (`spec.replicas`).
    pub replicas: u32,
    /// A scale-down deletes the groups not serving first, then the highest
    /// indices (a ModelServing: kthena's `scaleDownServingGroups`); else the
    /// highest indices (a LeaderWorkerSet's leader StatefulSet).
    pub not_ready_first: bool,
    /// The autoscaler that sizes it.
    pub autoscaler: GroupAutoscaler,
    /// Group 0's job as its controller made it (no `group` of its own).
    pub first: JobSpec,
    /// The groups' model profile.
    pub profile: Option<Arc<crate::comm::profile::JobProfile>>,
    /// The most groups the autoscaler may ask for (`maxReplicas`, or more when
    /// the workload starts with more).
    pub most: u32,
    /// Where the workload was read (file, document): the names its controller
    /// generates derive from it.
    pub origin: (String, String),
    /// Makes group `i` from [`GroupSet::first`] as the controller names and
    /// labels it (the reader of the workload's kind gives it).
    pub make: fn(&GroupSet, u32) -> Option<JobSpec>,
}

impl PartialEq for GroupSet {
    /// Every field but `make` (function addresses do not identify functions).
    fn eq(&self, o: &GroupSet) -> bool {
        (&self.namespace, &self.name, &self.kind, self.replicas, self.not_ready_first, &self.autoscaler)
            == (&o.namespace, &o.name, &o.kind, o.replicas, o.not_ready_first, &o.autoscaler)
            && (&self.first, &self.profile, self.most, &self.origin) == (&o.first, &o.profile, o.most, &o.origin)
    }
}

impl GroupSet {
    /// Group `i`'s job, for `i` below [`GroupSet::most`].
    pub fn group(&self, i: u32) -> Option<JobSpec> {
        if i >= self.most {
            return None;
        }
        (self.make)(self, i)
    }
}

/// The autoscaler that sizes a workload of groups.
#[derive(Clone, Debug, PartialEq)]
pub enum GroupAutoscaler {
    /// A HorizontalPodAutoscaler whose `scaleTargetRef` is the workload (or the
    /// one a KEDA ScaledObject makes).
    Hpa(Arc<crate::serving::hpa::HpaSpec>),
    /// kthena's AutoscalingPolicy with a `homogeneousTarget` (a ModelServing).
    Kthena(Arc<crate::serving::kthena::KthenaSpec>),
    /// kthena's AutoscalingPolicy with a `heterogeneousTarget`, and which of
    /// its backends this ModelServing is.
    KthenaHetero(Arc<crate::serving::kthena_optimizer::Hetero>, usize),
    /// kthena's AutoscalingPolicy with a `disaggregatedTarget`: the roles
    /// inside each serving group, and where they are in a group's job.
    KthenaRoles(Arc<crate::serving::kthena_roles::RolesSpec>, Arc<crate::serving::kthena_roles::Layout>),
}

/// A job of a Volcano JobFlow: one step of the flow's graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowStep {
    /// The flow, `JobFlow namespace/name`.
    pub flow: Arc<str>,
    /// The step's name (its JobTemplate's).
    pub step: Arc<str>,
    /// The steps whose jobs must be Completed before this one is created.
    pub targets: Vec<Arc<str>>,
}

/// How a recurring object's runs share time: its `concurrencyPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Concurrency {
    /// Every run is created at its time, whatever else runs.
    Allow,
    /// A run due while an earlier one is active is not created then
    /// ([`Recurrence::late_start`] says whether it may be when that one ends).
    Forbid,
    /// A run due while earlier ones are active deletes them first.
    Replace,
}

/// A run of a recurring object, as its controller creates it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recurrence {
    /// The recurring object, `Kind namespace/name`: runs with the same series
    /// share the concurrency policy's view of what is active.
    pub series: Arc<str>,
    /// Its scheduled time (the job's submit time unless it starts late).
    pub slot: SimTime,
    /// The object's concurrency policy.
    pub policy: Concurrency,
    /// Under [`Concurrency::Forbid`], whether a run held back is created when the
    /// active run ends (the latest one held back, if still within `deadline`).
    /// Volcano's CronJob controller syncs when a run ends and does so; the Spark
    /// operator looks again only at the next scheduled time and does not.
    pub late_start: bool,
    /// A run is created only less than this long after its scheduled time (Volcano's
    /// `startingDeadlineSeconds`; its controller acts 100 ms after the time, so 0
    /// creates nothing); `None`: no limit.
    pub deadline: Option<SimDuration>,
}

impl JobSpec {
    /// A job of nothing, with no heap memory of its own (what a retired job's
    /// slot holds; see `store::Store`).
    pub fn empty() -> JobSpec {
        static NONE: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| Arc::from(""));
        JobSpec {
            name: String::new(),
            namespace: Arc::clone(&NONE),
            kind: Arc::clone(&NONE),
            queue: QueueId(0),
            priority_class: None,
            priority: 0,
            submit: SimTime::ZERO,
            min_available: 0,
            preemptable: None,
            disruption: None,
            tasks: Vec::new(),
            policies: Vec::new(),
            max_retry: 0,
            min_success: None,
            orphan: false,
            sla_waiting: None,
            pods_once_admitted: false,
            batch: None,
            min_resources: Resources::ZERO,
            network_topology: None,
            sub_groups: None,
            duration: SimDuration::ZERO,
            estimate: None,
            deadline: None,
            checkpoint_interval: None,
            elastic: None,
            termination_grace: SimDuration::ZERO,
            user: Arc::clone(&NONE),
            task_topology: None,
            initial: Vec::new(),
            initial_vgpu: Vec::new(),
            initial_vnpu: Vec::new(),
            initial_numa: Vec::new(),
            pod_names: None,
            roles: None,
            start_phase: None,
            recurrence: None,
            flow: None,
            autoscaler: None,
            group: None,
            ray_serve: None,
        }
    }
}

/// Task-level affinity of a job: which task roles should share nodes, which should
/// not, and the order in which roles are placed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskTopology {
    /// Groups of task names to co-locate (`volcano.sh/task-topology-affinity`,
    /// `"ps,worker;chief"`); a group of one name means its pods attract each other.
    pub affinity: Vec<Vec<String>>,
    /// Groups to keep apart (`volcano.sh/task-topology-anti-affinity`); a group of
    /// one name spreads that task's pods.
    pub anti_affinity: Vec<Vec<String>>,
    /// Task names, first placed first (`volcano.sh/task-topology-task-order`).
    pub task_order: Vec<String>,
}

/// Pods of one job (or one task of it), at most: the one limit every job source
/// applies (compact jobs, manifests of every kind, traces), so that no input can
/// make lahar allocate for a billion pods.
pub const MAX_PODS_PER_JOB: u32 = 1_000_000;

/// Volcano's default graceful termination period.
pub const DEFAULT_TERMINATION_GRACE: SimDuration = SimDuration::from_secs(30);

/// The exit code of a container the kubelet stops at its pod's deletion when
/// the process does not handle the signal: 128 + SIGTERM (15), as container
/// runtimes report a process killed by a signal.
pub const STOPPED_EXIT_CODE: i32 = 143;

/// A cycle in the tasks' dependsOn graph, as `a -> b -> a` (task names, the first
/// repeated at the end), or `None`: such a job could never create its pods.
pub fn dependency_cycle(tasks: &[TaskSpec]) -> Option<String> {
    // 0 = unvisited, 1 = on the stack, 2 = done
    fn dfs(i: usize, tasks: &[TaskSpec], state: &mut [u8], stack: &mut Vec<usize>) -> Option<Vec<usize>> {
        state[i] = 1;
        stack.push(i);
        for d in tasks[i].depends_on.iter().map(|d| d.task) {
            if state[d] == 1 {
                let from = stack.iter().position(|&x| x == d).unwrap_or(0);
                let mut c = stack[from..].to_vec();
                c.push(d);
                return Some(c);
            }
            if state[d] == 0
                && let Some(c) = dfs(d, tasks, state, stack)
            {
                return Some(c);
            }
        }
        stack.pop();
        state[i] = 2;
        None
    }
    let mut state = vec![0u8; tasks.len()];
    for i in 0..tasks.len() {
        if state[i] == 0
            && let Some(c) = dfs(i, tasks, &mut state, &mut Vec::new())
        {
            let names: Vec<&str> = c.iter().map(|&k| &*tasks[k].name).collect();
            return Some(names.join(" -> "));
        }
    }
    None
}

impl TaskSpec {
    /// True if `node` passes the task's label filters: every selector label
    /// matches and every `node_label_in` label is one of its values (the
    /// kubelet's `kubernetes.io/hostname`, the node's name, included).
    pub fn labels_fit(&self, node: &crate::model::cluster::Node) -> bool {
        let label = |k: &str| crate::model::affinity::node_label(node, k);
        self.node_selector.iter().all(|(k, v)| label(k) == Some(v.as_str()))
            && self.node_label_in.iter().all(|(k, vs)| label(k).is_some_and(|v| vs.iter().any(|x| x == v)))
    }

    /// True if the task filters nodes by label at all.
    pub fn has_label_filter(&self) -> bool {
        !self.node_selector.is_empty() || !self.node_label_in.is_empty()
    }

    /// The host ports its pods hold (none for most tasks).
    pub fn host_ports(&self) -> &[HostPort] {
        self.hints.as_ref().map_or(&[], |h| &h.host_ports)
    }

    /// The scheduling gates its pods are made with (none for most tasks).
    pub fn scheduling_gates(&self) -> &[String] {
        self.hints.as_ref().map_or(&[], |h| &h.scheduling_gates)
    }

    /// Which of [`TaskSpec::scheduling_gates`] Volcano's own gate is (bit i: gate
    /// i), 0 if it has none.
    pub fn volcano_gate_bit(&self) -> u16 {
        self.scheduling_gates().iter().position(|g| g == QUEUE_ALLOCATION_GATE).map_or(0, |i| 1 << i)
    }

    /// Its pods' inter-pod affinity and anti-affinity, if they have any.
    pub fn pod_affinity(&self) -> Option<&crate::model::affinity::PodAffinity> {
        self.hints.as_ref().and_then(|h| h.affinity.as_deref())
    }

    /// True if its pods pass some nodes' filters and not others: a label
    /// filter, host ports (which the pods on a node decide) or inter-pod
    /// (anti-)affinity (which the pods of a domain decide).
    pub fn has_node_filter(&self) -> bool {
        self.has_label_filter() || !self.host_ports().is_empty() || self.pod_affinity().is_some()
    }
}

impl Default for TaskSpec {
    /// One preemptable pod of priority 1 requesting only its pod slot, named `worker`.
    fn default() -> Self {
        TaskSpec {
            hints: None,
            run_time: None,
            exits: None,
            stop_code: STOPPED_EXIT_CODE,
            node_label_in: Vec::new(),
            name: "worker".into(),
            replicas: 1,
            min_available: 1,
            requests: Resources::new(0, 0, 0, 1),
            priority: 1,
            depends_on: Vec::new(),
            depends_any: false,
            node_selector: Vec::new(),
            policies: Vec::new(),
            preemptable: true,
            never_preempts: false,
            tolerations: Vec::new(),
        }
    }
}

impl Default for JobSpec {
    /// An empty job in namespace `default`, queue 0, submitted at 0, with Volcano's
    /// defaults (3 retries, 30 s grace). Fixtures set what they test with
    /// `..JobSpec::default()` and then [`JobSpec::finish`]; so do the job sources.
    fn default() -> Self {
        JobSpec {
            namespace: crate::util::text::shared("default"),
            max_retry: 3,
            termination_grace: DEFAULT_TERMINATION_GRACE,
            ..JobSpec::empty()
        }
    }
}

impl JobSpec {
    /// True if PodDisruptionBudget `budget` covers the pods of task `t` (of queue
    /// `queue`): same namespace, a selector that is not empty and matches their labels.
    pub fn covered_by(&self, budget: &crate::model::budget::DisruptionBudget, t: usize, queue: &str) -> bool {
        *self.namespace == *budget.namespace
            && !budget.selector.is_empty()
            && budget.selector.matches(&self.pod_labels(t, queue))
    }

    /// Finishes a job every source has filled in: derives what follows from
    /// its tasks (`minResources`, as Volcano's job controller computes it). Every
    /// job source ends with it.
    pub fn finish(&mut self) {
        self.min_resources = self.compute_min_resources();
    }

    /// Total pods over all tasks, without overflow (tasks read from input are
    /// each bounded, their sum is checked with this).
    pub fn total_pods(&self) -> u64 {
        self.tasks.iter().map(|t| u64::from(t.replicas)).sum()
    }
    /// Total pods over all tasks.
    pub fn total_replicas(&self) -> u32 {
        self.tasks.iter().map(|t| t.replicas).sum()
    }
    /// Whether its controller hears of a deleted pod only once the pod is gone
    /// (the informer's delete, after the grace period), not when its deletion
    /// starts: Volcano's job controller (`deletePod` raises `PodEvictedEvent`;
    /// `updatePod` does not look at the deletion timestamp) and kthena's
    /// ModelServing controller (`updatePod` skips a pod being deleted and
    /// leaves it to `deletePod`). LeaderWorkerSet's pod controller acts on the
    /// deletion timestamp (`PodDeleted`), a batch/v1 Job counts a terminating
    /// pod as failed, and a ReplicaSet replaces it at once.
    pub fn hears_deletion_when_gone(&self) -> bool {
        matches!(&*self.kind, "VolcanoJob" | "ModelServing" | "ModelBooster")
    }
    /// Whether its controller hears a deleted pod's terminal phase before it
    /// hears the deletion. The kubelet (Kubernetes 1.27 and later: `getPhase`
    /// with `podIsTerminal`) moves a pod it stopped because it was deleted to
    /// Succeeded if its containers exited 0, else Failed, before the pod is
    /// removed; Volcano's job controller hears that update (`updatePod`:
    /// `PodFailedEvent` with the exit code, or `TaskCompletedEvent` when the
    /// task's pods have all Succeeded), then the deletion (`deletePod`:
    /// `PodEvictedEvent`). Kthena's ModelServing controller skips the update of
    /// a pod being deleted.
    pub fn hears_terminal_phase(&self) -> bool {
        &*self.kind == "VolcanoJob"
    }
    /// Whether a restart of the whole job makes its PodGroup anew at once and
    /// each killed pod again once that pod is gone: Volcano's job controller
    /// (`killJob` deletes the PodGroup; the Restarting state's next sync,
    /// `syncJob` → `initOnJobUpdate` → `createOrUpdatePodGroup`, makes it again,
    /// and makes each missing pod name once the group has left Pending). The
    /// other operators lahar restarts whole (a LeaderWorkerSet's group, whose
    /// PodGroup goes with its leader pod; a kthena ServingGroup) recreate the
    /// group once every killed pod is gone.
    pub fn remakes_group_at_once(&self) -> bool {
        &*self.kind == "VolcanoJob"
    }
    /// Whether its controller makes a deleted pod's replacement when the
    /// deletion starts, while the pod still holds its node for its grace period:
    /// a ReplicaSet (a Deployment's too) counts only its active pods, which
    /// terminating ones are not (Kubernetes' `FilterActivePods`); so does a
    /// batch/v1 Job under `podReplacementPolicy: TerminatingOrFailed`. A
    /// StatefulSet waits for the pod's name to be free, and Volcano's job
    /// controller and the other operators for the pod to be gone.
    pub fn replaces_terminating_pods(&self) -> bool {
        match &*self.kind {
            "Deployment" | "ReplicaSet" => true,
            "Job" => self.batch.is_some_and(|b| b.replace_terminating),
            _ => false,
        }
    }
    /// The labels of task `t`'s pods (PodDisruptionBudgets select on them): as
    /// read from its manifest, else those Volcano's job controller gives a
    /// VolcanoJob's pods (`volcano.sh/job-name`, `-job-namespace`, `-queue-name`,
    /// `-task-spec`; the per-pod `volcano.sh/task-index` is left out).
    pub fn pod_labels(&self, t: usize, queue: &str) -> Vec<(String, String)> {
        if let Some(l) = self.tasks[t].hints.as_ref().and_then(|h| h.labels.as_ref()) {
            return l.clone();
        }
        volcano_pod_labels(&self.name, &self.namespace, queue, &self.tasks[t].name)
    }
    /// True if task `t`'s pods have labels ([`JobSpec::pod_labels`] is not empty;
    /// the job controller's labels always are), without building them.
    pub fn has_pod_labels(&self, t: usize) -> bool {
        self.tasks[t].hints.as_ref().and_then(|h| h.labels.as_ref()).is_none_or(|l| !l.is_empty())
    }
    /// The first task of task `t`'s role (see [`JobSpec::roles`]).
    pub fn role_lead(&self, t: usize) -> usize {
        self.roles.as_ref().map_or(t, |r| r[t] as usize)
    }
    /// The tasks of the role led by task `lead`.
    pub fn role_tasks(&self, lead: usize) -> impl Iterator<Item = usize> + '_ {
        let n = self.tasks.len();
        let one = self.roles.is_none().then_some(lead);
        let many = self.roles.as_ref().map(move |r| (lead..n).filter(move |&u| r[u] as usize == lead));
        one.into_iter().chain(many.into_iter().flatten())
    }
    /// Milli-GPUs requested by all pods (fractional shares included).
    pub fn total_gpu_milli(&self) -> i64 {
        self.tasks.iter().map(|t| t.requests.gpu_milli() * t.replicas as i64).sum()
    }
    /// Total whole GPUs requested by all pods.
    pub fn total_gpus(&self) -> i64 {
        self.total_gpu_milli().saturating_add(999) / 1000
    }
    /// `minResources` the way Volcano's job controller computes it: tasks ordered by
    /// pod priority (high first, stable), then the first `min_available` pods, taking
    /// each task's `min_available` pods first when the gang covers them all.
    pub fn compute_min_resources(&self) -> Resources {
        // One task without roles, most jobs: the walk below without its lists.
        if let ([t], None) = (&self.tasks[..], &self.roles) {
            let n = if self.min_available < t.min_available {
                t.replicas.min(self.min_available)
            } else {
                let share = t.min_available.min(t.replicas);
                share + (t.replicas - share).min(self.min_available.saturating_sub(share))
            };
            return t.requests.times(n as i64);
        }
        self.min_resources_walk()
    }

    /// [`JobSpec::compute_min_resources`] task by task, for any job.
    fn min_resources_walk(&self) -> Resources {
        let mut order: Vec<usize> = (0..self.tasks.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.tasks[i].priority));
        let sum_task_min: u32 = self.tasks.iter().map(|t| t.min_available).sum();
        let mut left = self.min_available;
        let mut total = Resources::ZERO;
        if self.min_available < sum_task_min {
            for &i in &order {
                let n = self.tasks[i].replicas.min(left);
                total += self.tasks[i].requests.times(n as i64);
                left -= n;
            }
        } else {
            // Each role's minimum, taken from its tasks in order.
            let mut share: Vec<u32> = self.tasks.iter().map(|t| t.min_available.min(t.replicas)).collect();
            if self.roles.is_some() {
                for lead in 0..self.tasks.len() {
                    let mut m = self.tasks[lead].min_available;
                    for u in self.role_tasks(lead) {
                        share[u] = self.tasks[u].replicas.min(m);
                        m -= share[u];
                    }
                }
            }
            let mut extra = Vec::new();
            for &i in &order {
                let t = &self.tasks[i];
                let n = share[i];
                total += t.requests.times(n as i64);
                left = left.saturating_sub(n);
                extra.push((i, t.replicas - n));
            }
            for (i, spare) in extra {
                let n = spare.min(left);
                total += self.tasks[i].requests.times(n as i64);
                left -= n;
            }
        }
        total
    }
    /// The pod's name: the user's own for a Pod manifest, else what Volcano's job
    /// controller gives, `<job>-<task>-<index>`.
    pub fn pod_name(&self, task: usize, index: u32) -> String {
        let mut s = String::new();
        self.push_pod_name(&mut s, task, index);
        s
    }

    /// Appends the job's name as every output writes it: `name` in the `default`
    /// namespace, `namespace/name` elsewhere.
    pub fn push_label(&self, out: &mut String) {
        if &*self.namespace != "default" {
            out.push_str(&self.namespace);
            out.push('/');
        }
        out.push_str(&self.name);
    }

    /// Appends [`JobSpec::pod_name`] to `out`.
    pub fn push_pod_name(&self, out: &mut String, task: usize, index: u32) {
        use std::fmt::Write;
        match self.pod_names.as_ref().and_then(|n| n.get(task)?.get(index as usize)) {
            Some(name) => out.push_str(name),
            None => {
                let _ = write!(out, "{}-{}-{}", self.name, self.tasks[task].name, index);
            }
        }
    }
}

/// PodGroup phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PodGroupPhase {
    /// Waiting for admission (enqueue).
    Pending,
    /// Admitted; pods may be created and allocated.
    Inqueue,
    /// At least minMember pods scheduled.
    Running,
    /// Some pods running, the rest of the gang unschedulable.
    Unknown,
    /// All scheduled pods finished.
    Completed,
}

impl PodGroupPhase {
    /// Volcano's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PodGroupPhase::Pending => "Pending",
            PodGroupPhase::Inqueue => "Inqueue",
            PodGroupPhase::Running => "Running",
            PodGroupPhase::Unknown => "Unknown",
            PodGroupPhase::Completed => "Completed",
        }
    }
}

/// The VolcanoJob's phase (the controller's state machine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JobPhase {
    /// Not yet submitted (before its submit time).
    NotSubmitted,
    /// Submitted; fewer than minAvailable pods running.
    Pending,
    /// At least minAvailable pods running.
    Running,
    /// Pods being killed for a restart.
    Restarting,
    /// Finished successfully.
    Completed,
    /// Retries exhausted.
    Failed,
    /// Aborted by a policy.
    Aborted,
    /// Terminated by a policy.
    Terminated,
}

impl JobPhase {
    /// Volcano's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            JobPhase::NotSubmitted => "NotSubmitted",
            JobPhase::Pending => "Pending",
            JobPhase::Running => "Running",
            JobPhase::Restarting => "Restarting",
            JobPhase::Completed => "Completed",
            JobPhase::Failed => "Failed",
            JobPhase::Aborted => "Aborted",
            JobPhase::Terminated => "Terminated",
        }
    }
    /// True once the job can no longer change.
    pub fn is_terminal(self) -> bool {
        matches!(self, JobPhase::Completed | JobPhase::Failed | JobPhase::Aborted | JobPhase::Terminated)
    }
}

/// Pod (task) status as the scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PodStatus {
    /// Waiting for a node.
    Pending,
    /// Tentatively placed on a node's idle resources in the current session.
    Allocated,
    /// Tentatively placed on resources that are being released.
    Pipelined,
    /// Bound and running.
    Running,
    /// Being evicted; still holds its node until the grace period ends.
    Releasing,
    /// Finished successfully.
    Succeeded,
    /// Failed.
    Failed,
    /// Removed (its job ended before it ran, or it was replaced).
    Deleted,
}

impl PodStatus {
    /// Number of statuses.
    pub const COUNT: usize = 8;
    /// Dense index for per-status counters.
    pub fn index(self) -> usize {
        self as usize
    }
    /// Volcano's *AllocatedStatus* (holds node resources as a placement).
    pub fn is_allocated(self) -> bool {
        matches!(self, PodStatus::Allocated | PodStatus::Running)
    }
}

/// Where a pod is, for placement views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Pod.
    pub pod: PodId,
    /// Node.
    pub node: NodeId,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str, replicas: u32, min: u32, gpu: i64, prio: i32) -> TaskSpec {
        TaskSpec {
            node_label_in: Vec::new(),
            name: name.into(),
            replicas,
            min_available: min,
            requests: Resources::new(1000, 0, gpu * 1000, 1),
            priority: prio,
            depends_on: vec![],
            depends_any: false,
            node_selector: vec![],
            policies: vec![],
            preemptable: true,
            never_preempts: false,
            tolerations: Vec::new(),
            hints: None,
            run_time: None,
            exits: None,
            stop_code: STOPPED_EXIT_CODE,
        }
    }

    fn job(min: u32, tasks: Vec<TaskSpec>) -> JobSpec {
        JobSpec {
            name: "j".into(),
            namespace: "default".into(),
            kind: "VolcanoJob".into(),
            queue: QueueId(0),
            priority_class: None,
            priority: 0,
            submit: SimTime::ZERO,
            min_available: min,
            preemptable: None,
            disruption: None,
            tasks,
            policies: vec![],
            max_retry: 3,
            min_success: None,
            orphan: false,
            sla_waiting: None,
            pods_once_admitted: false,
            batch: None,
            min_resources: Resources::ZERO,
            network_topology: None,
            sub_groups: None,
            duration: SimDuration::from_secs(10),
            estimate: None,
            deadline: None,
            checkpoint_interval: None,
            elastic: None,
            termination_grace: DEFAULT_TERMINATION_GRACE,
            user: "".into(),
            task_topology: None,
            initial: vec![],
            initial_vgpu: vec![],
            initial_vnpu: vec![],
            initial_numa: Vec::new(),
            pod_names: None,
            roles: None,
            start_phase: None,
            recurrence: None,
            flow: None,
            autoscaler: None,
            group: None,
            ray_serve: None,
        }
    }

    #[test]
    fn min_resources_follows_the_controller() {
        // master (prio 10, 1 GPU) + 4 workers (2 GPUs), minAvailable 3 < Σ task min (5):
        // take master first, then 2 workers.
        let j = job(3, vec![task("worker", 4, 4, 2, 1), task("master", 1, 1, 1, 10)]);
        assert_eq!(j.compute_min_resources().gpu_milli(), 5000);
        assert_eq!(j.compute_min_resources().pods(), 3);
        // minAvailable 3 ≥ Σ task min (1 + 1): each task's min first, then one extra
        // replica from the first task in priority order.
        let j = job(3, vec![task("worker", 4, 1, 2, 1), task("master", 1, 1, 1, 10)]);
        assert_eq!(j.compute_min_resources().gpu_milli(), 1000 + 2000 + 2000);
        assert_eq!(j.total_gpus(), 9);
        assert_eq!(j.pod_name(0, 3), "j-worker-3");
    }

    #[test]
    fn one_task_min_resources_match_the_walk() {
        // The one-task path against the walk over tasks, on every small case.
        let mut j = JobSpec::empty();
        j.tasks = vec![TaskSpec::default()];
        j.tasks[0].requests = Resources::new(3000, 1 << 30, 2000, 1);
        for replicas in 0..6 {
            for task_min in 0..7 {
                for min in 0..8 {
                    j.tasks[0].replicas = replicas;
                    j.tasks[0].min_available = task_min;
                    j.min_available = min;
                    assert_eq!(j.compute_min_resources(), j.min_resources_walk(), "{replicas} {task_min} {min}");
                }
            }
        }
    }
}
