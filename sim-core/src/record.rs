//! What a run records, handed over as it happens.
//!
//! An [`Engine`](crate::engine::Engine) without a recorder keeps its records (pod
//! intervals, samples, decisions) and returns them in
//! [`RunOutput`](crate::engine::RunOutput): the in-process form tests and tools
//! use. With a [`Recorder`], each record goes to it at the moment it is made, with
//! the state it was made in (names of jobs, pods and nodes can be resolved then),
//! and the engine keeps none of them: a month-long run's outputs are written as it
//! goes instead of held to the end.

use crate::model::ids::NodeId;
use crate::model::ids::{JobId, PodId};
use crate::session::Decision;
use crate::util::time::SimTime;
use crate::world::World;

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
    /// Its node or GPU failed under it.
    Failed,
    /// Its container exited with a failure (`lahar.io/fail-after`).
    Exited,
    /// Its node was deleted (`removeNodes`): the pod garbage collector deleted it.
    NodeDeleted,
    /// Deleted when its job passed its deadline (`activeDeadlineSeconds`).
    Deadline,
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
            EndReason::Failed => "failed",
            EndReason::Exited => "exited",
            EndReason::NodeDeleted => "node-deleted",
            EndReason::Deadline => "deadline",
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
    /// Milli-GPUs held by pods (Running; Releasing pods are counted apart).
    pub gpu_allocated_milli: i64,
    /// Milli-GPUs of progressing jobs weighted by speed.
    pub gpu_effective_milli: i64,
    /// Milli-GPUs held by pods of jobs not progressing (part of
    /// `gpu_allocated_milli`: a gang waiting for the rest of its pods).
    pub gpu_stalled_milli: i64,
    /// Milli-GPUs held by Releasing pods (their grace period).
    pub gpu_releasing_milli: i64,
    /// Submitted jobs not making progress.
    pub jobs_pending: u32,
    /// Jobs making progress.
    pub jobs_running: u32,
    /// Milli-GPUs allocated per queue.
    pub queue_gpu_milli: Vec<i64>,
    /// Milli-GPUs out of service (failed nodes and GPUs) or cordoned by drains.
    pub gpu_unavailable_milli: i64,
    /// Milli-GPUs held by Running pods of services (part of
    /// `gpu_allocated_milli`).
    pub gpu_serving_milli: i64,
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
    /// The run was stopped by its stop flag ([`crate::engine::Engine::set_stop`]: an
    /// interrupt) at `end`, with events left.
    pub interrupted: bool,
    /// ∫ GPUs held by Releasing pods dt over the run (milli-GPU·µs): the one
    /// part of the GPU time that no pod interval covers.
    pub releasing_milli_us: u128,
    /// Milli-GPU·µs of nodes out of the cluster (declared `absent`, or removed
    /// by the timeline), integrated over the run.
    pub absent_milli_us: u128,
    /// The run stopped with events left (at the horizon or the session limit):
    /// jobs that never started were still waiting, not unschedulable.
    pub cut_short: bool,
    /// Per recurring object (`Kind namespace/name`) whose concurrency policy
    /// skipped or deleted runs: how many.
    pub recurring: std::collections::BTreeMap<std::sync::Arc<str>, crate::model::recurring::SeriesCounts>,
    /// Per JobFlow (`JobFlow namespace/name`) with jobs never created (their
    /// dependencies never all completed): how many.
    pub flows: std::collections::BTreeMap<std::sync::Arc<str>, crate::model::flow::FlowCounts>,
    /// Timeline actions that found nothing to act on (a pod or job not there at
    /// their instant): (place, what), in time order.
    pub timeline_missed: Vec<(String, String)>,
    /// Per service (`spec.services`, and workloads with an autoscaler), in the
    /// order they were bound: what it was offered and served.
    pub services: Vec<ServiceStats>,
    /// Services whose workload never arrived: (place, what).
    pub services_missed: Vec<(String, String)>,
    /// What services took from the other workloads.
    pub serving: ServingImpact,
    /// Timeline actions that changed nothing, as in Volcano (a job's state
    /// ignores them, or the webhook refuses a scale): (place, what).
    pub timeline_ignored: Vec<(String, String)>,
    /// Timeline steps the run did not reach: how many, the first's place and
    /// instant, and why the run ended before them (`its horizon`, `its session
    /// limit`, or `nothing was left to happen to a job`).
    pub timeline_unreached: Option<(u64, String, SimTime, &'static str)>,
}

/// One row of services.csv: a service at a sample instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceSample {
    /// Instant.
    pub t: SimTime,
    /// The workload, named as jobs.csv names it.
    pub service: std::sync::Arc<str>,
    /// Its kind (`Deployment`...).
    pub kind: std::sync::Arc<str>,
    /// What the demand and capacity count (requests without a demand).
    pub unit: crate::serving::Unit,
    /// Requests (or tokens) per second offered (milli); `None` without a demand.
    pub demand_milli: Option<i64>,
    /// Requests (or tokens) per second its ready replicas serve (milli).
    pub capacity_milli: i64,
    /// The replicas it asks for (`spec.replicas`; over all tasks of a job of
    /// several).
    pub replicas: u32,
    /// Its pods waiting for a node.
    pub pending: u32,
    /// Its pods running but not yet serving (starting up).
    pub starting: u32,
    /// Its pods serving.
    pub ready: u32,
    /// Milli-GPUs its running pods hold.
    pub gpu_milli: i64,
}

/// One row of scaling.csv: an autoscaler changed its target's replicas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScaleRecord {
    /// Instant.
    pub t: SimTime,
    /// `namespace/name` of the HorizontalPodAutoscaler.
    pub autoscaler: std::sync::Arc<str>,
    /// `Kind name` of its target, named as jobs.csv names it.
    pub target: std::sync::Arc<str>,
    /// Replicas before.
    pub from: i32,
    /// Replicas after.
    pub to: i32,
    /// What the metrics proposed before the windows and policies (-1: the
    /// replicas were outside `[min, max]`, no metric was read).
    pub proposed: i32,
    /// Why, as the controller's event says.
    pub reason: String,
}

/// A service's totals over the run. Integrals are exact: milli-requests per
/// second × µs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceStats {
    /// The workload, named as jobs.csv names it.
    pub service: std::sync::Arc<str>,
    /// Its kind.
    pub kind: std::sync::Arc<str>,
    /// It has a demand (`spec.services`); without, only its replicas are known.
    pub has_demand: bool,
    /// What `offered` and `served` count.
    pub unit: crate::serving::Unit,
    /// From its arrival to the end of the run (µs).
    pub measured_us: u64,
    /// ∫ demand dt.
    pub offered: u128,
    /// ∫ min(demand, capacity) dt.
    pub served: u128,
    /// Time with capacity below demand (µs).
    pub short_us: u64,
    /// ∫ max(0, replicas needed − replicas serving) dt (replica·µs), a replica
    /// serving `capacity` requests per second.
    pub replica_short_us: u128,
    /// Each stretch of capacity below demand that ended: from the demand rising
    /// above the capacity to the capacity reaching it (µs).
    pub catch_up_us: Vec<u64>,
    /// A stretch still open when the run ended (µs so far).
    pub open_short_us: Option<u64>,
    /// Its autoscaler's changes up.
    pub scale_ups: u32,
    /// Its autoscaler's changes down.
    pub scale_downs: u32,
    /// The most replicas it asked for (over all its tasks), from its arrival.
    pub max_replicas: u32,
    /// Pod starts (each pays the start-up delay).
    pub starts: u32,
}

/// What a run's services held, and took from the other (batch) workloads by
/// preempting or reclaiming their pods.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServingImpact {
    /// ∫ milli-GPUs held by Running pods of services dt (milli-GPU·µs).
    pub gpu_milli_us: u128,
    /// Pods of other jobs evicted (preempted or reclaimed) to make room for a
    /// service's pod.
    pub batch_pods_evicted: u64,
    /// Preemptions of other jobs for services: a job counts once per session
    /// in which a service's pods evicted some of its pods.
    pub batch_preemptions: u64,
    /// Work those jobs lost (since their last checkpoint), times their GPUs
    /// (GPU·µs of ideal work), counted when an eviction for a service stopped
    /// them.
    pub batch_lost_gpu_us: u128,
    /// The services' own pods evicted (preempted or reclaimed) to make room
    /// for another job's pod.
    pub pods_evicted: u64,
}

/// One row of events.csv: a failure, a repair, a drain's steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultRecord {
    /// Instant.
    pub t: SimTime,
    /// `fail`, `repair`, `cordon`, `evict` (a drain's deadline) or `uncordon`.
    pub event: &'static str,
    /// `node`, `gpu`, `switch` or `drain`.
    pub scope: &'static str,
    /// The node, HyperNode, or (several nodes) the first node's name and a count.
    pub target: String,
    /// Nodes concerned.
    pub nodes: u32,
    /// Milli-GPUs this event took out of service (`fail`) or gave back (`repair`);
    /// a drain's: the GPUs of the nodes it cordons or uncordons.
    pub gpu_milli: i64,
    /// Pods killed (`fail`) or evicted (`evict`).
    pub pods: u32,
    /// Where it came from: the random rule's name, or `trace:LINE`.
    pub cause: std::sync::Arc<str>,
}

/// One row of timeline.csv: a `spec.timeline` step as the run carried it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperationRecord {
    /// Instant.
    pub t: SimTime,
    /// The step's place in the scenario (`spec.timeline[3]`).
    pub step: String,
    /// The action's key as the scenario spells it (`deletePod`, `conf`).
    pub action: &'static str,
    /// Its value as written (the object, node pattern, queue or conf file).
    pub target: String,
    /// Whether it changed anything.
    pub outcome: Outcome,
    /// Why a step was missed or ignored; for a step done, the pods it deleted
    /// or killed (when it can), else empty.
    pub note: String,
}

/// What became of a `spec.timeline` step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Carried out.
    Done,
    /// Nothing to act on (the `timeline-target-missing` warning).
    Missed,
    /// It changes nothing, as in Volcano (the `timeline-action-ignored` warning).
    Ignored,
}

impl Outcome {
    /// timeline.csv's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Missed => "missed",
            Outcome::Ignored => "ignored",
        }
    }
}

/// Receives a run's records as they are made. Every method has an empty default.
pub trait Recorder {
    /// Job `j` was submitted (at its submit time, the current instant).
    fn job_submitted(&mut self, _world: &World, _j: JobId) {}
    /// Pod `p` started running on its node (`world.pods[p].started` is now).
    fn pod_started(&mut self, _world: &World, _p: PodId) {}
    /// A pod's placement interval ended.
    fn pod_ended(&mut self, _world: &World, _r: &PodRecord) {}
    /// Job `j` reached a terminal phase (`end` is set); its pods' intervals have
    /// all been handed over.
    fn job_ended(&mut self, _world: &World, _j: JobId) {}
    /// A timeseries sample was taken.
    fn sample(&mut self, _world: &World, _s: &Sample) {}
    /// A scheduling decision was made.
    fn decision(&mut self, _world: &World, _d: &Decision) {}
    /// A failure, repair or drain step happened (a row of events.csv).
    fn fault(&mut self, _world: &World, _r: &FaultRecord) {}
    /// A service's sample was taken (a row of services.csv).
    fn service_sample(&mut self, _world: &World, _s: &ServiceSample) {}
    /// An autoscaler changed its target's replicas (a row of scaling.csv).
    fn scaled(&mut self, _world: &World, _r: &ScaleRecord) {}
    /// A `spec.timeline` step was carried out (a row of timeline.csv).
    fn operated(&mut self, _world: &World, _r: &OperationRecord) {}
    /// Node `n`'s service changed at `t` (a failure or repair, the node leaving
    /// or joining): `world.nodes[n].lost_devices` holds the GPU devices out now.
    fn node_service(&mut self, _world: &World, _n: crate::model::ids::NodeId, _t: crate::util::time::SimTime) {}
    /// The run is over: open intervals were closed (reason `running`) and handed
    /// over; the jobs in `world.active` are unfinished.
    fn finished(&mut self, _world: &World, _stats: &RunStats) {}
}

/// A recorder shared with its owner, who takes it back after the run.
impl<R: Recorder> Recorder for std::rc::Rc<std::cell::RefCell<R>> {
    fn job_submitted(&mut self, world: &World, j: JobId) {
        self.borrow_mut().job_submitted(world, j);
    }
    fn pod_started(&mut self, world: &World, p: PodId) {
        self.borrow_mut().pod_started(world, p);
    }
    fn pod_ended(&mut self, world: &World, r: &PodRecord) {
        self.borrow_mut().pod_ended(world, r);
    }
    fn job_ended(&mut self, world: &World, j: JobId) {
        self.borrow_mut().job_ended(world, j);
    }
    fn sample(&mut self, world: &World, s: &Sample) {
        self.borrow_mut().sample(world, s);
    }
    fn decision(&mut self, world: &World, d: &Decision) {
        self.borrow_mut().decision(world, d);
    }
    fn fault(&mut self, world: &World, r: &FaultRecord) {
        self.borrow_mut().fault(world, r);
    }
    fn service_sample(&mut self, world: &World, s: &ServiceSample) {
        self.borrow_mut().service_sample(world, s);
    }
    fn scaled(&mut self, world: &World, r: &ScaleRecord) {
        self.borrow_mut().scaled(world, r);
    }
    fn operated(&mut self, world: &World, r: &OperationRecord) {
        self.borrow_mut().operated(world, r);
    }
    fn node_service(&mut self, world: &World, n: crate::model::ids::NodeId, t: crate::util::time::SimTime) {
        self.borrow_mut().node_service(world, n, t);
    }
    fn finished(&mut self, world: &World, stats: &RunStats) {
        self.borrow_mut().finished(world, stats);
    }
}
