//! The facts metrics are computed from.
//!
//! [`Facts`] is a plain copy of what a run recorded (jobs, pod placement intervals,
//! nodes, queues), so the metrics can be tested on hand-made records without the
//! engine. [`crate::accumulate::RunMetrics::replay`] replays them in time order
//! (the same accumulator a streaming run feeds as it goes) and integrates exactly
//! over time the quantities that are piecewise constant between changes:
//! fragmentation, each queue's deserved share, and the number of active jobs.

use lahar_core::engine::RunOutput;
use lahar_core::frag::{ModelTable, Target};
use lahar_core::model::cluster::Node;
use lahar_core::model::job::JobPhase;
use lahar_core::model::resource::{GPU, Resources};
use lahar_core::world::{DeviceHold, Job};

/// One queue.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueFact {
    /// Name.
    pub name: String,
    /// Proportion weight.
    pub weight: u32,
}

impl QueueFact {
    /// The world's queues.
    pub fn all(world: &lahar_core::world::World) -> Vec<QueueFact> {
        world.queues.iter().map(|q| QueueFact { name: q.spec.name.clone(), weight: q.spec.weight.max(1) }).collect()
    }
}

/// One submitted job.
#[derive(Clone, Debug, PartialEq)]
pub struct JobFact {
    /// Index into [`Facts::queues`].
    pub queue: u32,
    /// Whole GPUs requested by all its pods.
    pub gpus: i64,
    /// Submit time (µs).
    pub submit: u64,
    /// Where its wait counts from (µs): its submit time, or its last scale-up
    /// from zero replicas before it first ran.
    pub waits_from: u64,
    /// First time its gang was satisfied (µs).
    pub first_start: Option<u64>,
    /// End (µs), once terminal.
    pub end: Option<u64>,
    /// True if it ended `Completed`.
    pub completed: bool,
    /// Run time under ideal placement (µs).
    pub ideal: u64,
    /// Sessions in which it lost pods to eviction.
    pub preemptions: u32,
    /// Work lost to stops (GPU·µs).
    pub lost_gpu_us: u64,
    /// Exposed communication (GPU·µs).
    pub comm_gpu_us: u64,
    /// Held while progressing (GPU·µs): work, exposed communication, pauses.
    pub running_gpu_us: u64,
    /// How long after its submission it may be active (µs), if it has a deadline.
    pub deadline: Option<u64>,
}

impl JobFact {
    /// A submitted job's facts as they stand.
    pub fn of(j: &Job) -> JobFact {
        let s = &j.spec;
        JobFact {
            queue: s.queue.0,
            gpus: s.total_gpus(),
            submit: s.submit.micros(),
            waits_from: j.waits_from().micros(),
            first_start: j.first_start.map(|t| t.micros()),
            end: j.end.map(|t| t.micros()),
            completed: j.phase == JobPhase::Completed,
            ideal: if s.duration.is_unbounded() { 0 } else { s.duration.micros() },
            preemptions: j.preemptions,
            // 2⁶⁴ GPU·µs is 5 billion GPU-hours: no run comes near it.
            lost_gpu_us: u64::try_from(j.progress.lost_gpu_us).unwrap_or(u64::MAX),
            comm_gpu_us: u64::try_from(j.progress.comm_gpu_us).unwrap_or(u64::MAX),
            running_gpu_us: u64::try_from(j.progress.running_gpu_us).unwrap_or(u64::MAX),
            deadline: s.deadline.map(|d| d.micros()),
        }
    }
}

/// The target workload of the fragmentation measure: the typical shapes of the
/// pods of every job of the world (submitted or not) on `nodes`
/// ([`ModelTable::target`]).
pub fn workload<'a>(nodes: &[Node], jobs: impl IntoIterator<Item = &'a Job>) -> Target {
    ModelTable::of_nodes(nodes).target(jobs.into_iter().flat_map(|j| &j.spec.tasks))
}

/// Each node's GPU model index in the measure's [`ModelTable`].
pub fn node_models(nodes: &[Node]) -> Vec<Option<u8>> {
    let table = ModelTable::of_nodes(nodes);
    nodes.iter().map(|n| table.node(n)).collect()
}

/// One pod placement interval `[start, end)`. Compact (32 bytes): a month-long
/// run holds millions of them.
#[derive(Clone, Debug, PartialEq)]
pub struct PodFact {
    /// Index into [`Facts::jobs`].
    pub job: u32,
    /// Node index.
    pub node: u32,
    /// Its requests and the GPU devices it held: an index into [`Facts::requests`].
    pub req: u32,
    /// Start (µs).
    pub start: u64,
    /// End (µs).
    pub end: u64,
}

/// Everything the metrics need about a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Facts {
    /// End of the run (µs): the last event, or the horizon.
    pub end: u64,
    /// Allocatable resources per node.
    pub nodes: Vec<Resources>,
    /// Per node: its GPU model's index in the measure's [`ModelTable`].
    pub node_models: Vec<Option<u8>>,
    /// Queues.
    pub queues: Vec<QueueFact>,
    /// Submitted jobs.
    pub jobs: Vec<JobFact>,
    /// Pod placement intervals.
    pub pods: Vec<PodFact>,
    /// The distinct (request, devices held) pairs [`PodFact::req`] points into.
    pub requests: Vec<(Resources, DeviceHold)>,
    /// The fragmentation measure's target workload: the typical pod shapes of the
    /// scenario's jobs, submitted or not ([`workload`]).
    pub target: Target,
    /// Changes of nodes' lost GPU devices: (µs, node, the devices out after).
    pub service: Vec<(u64, u32, u64)>,
}

impl Facts {
    /// Copies the facts out of a run. Jobs never submitted (past the horizon) are left
    /// out; pod records keep pointing at the right jobs.
    pub fn from_output(out: &RunOutput) -> Facts {
        let mut index = vec![usize::MAX; out.world.jobs.len()];
        let mut jobs = Vec::new();
        // The target workload is the scenario's, submitted or not.
        let nodes = &out.world.cluster.nodes;
        let target = workload(nodes, out.world.jobs.iter());
        for (i, j) in out.world.jobs.iter_ids() {
            if j.phase == JobPhase::NotSubmitted {
                continue;
            }
            index[i.0 as usize] = jobs.len();
            jobs.push(JobFact::of(j));
        }
        // Pods of one task share a request, and most hold one of few device sets:
        // each distinct pair is kept once (looked up, never iterated, so the
        // map's order cannot matter).
        let mut requests: Vec<(Resources, DeviceHold)> = Vec::new();
        let mut request_ids: std::collections::HashMap<(Resources, DeviceHold), u32> = std::collections::HashMap::new();
        let mut pods = Vec::with_capacity(out.pods.len());
        for p in &out.pods {
            let job = index[p.job.0 as usize];
            if job == usize::MAX {
                continue;
            }
            let req = (out.world.pods[p.pod].req, p.gpu_devices);
            let id = *request_ids.entry(req).or_insert_with(|| {
                requests.push(req);
                (requests.len() - 1) as u32
            });
            pods.push(PodFact {
                job: job as u32,
                node: p.node.0,
                req: id,
                start: p.start.micros(),
                end: p.end.micros(),
            });
        }
        Facts {
            end: out.stats.end.micros(),
            // Declared capacity, whatever is out of service at the end.
            nodes: (0..nodes.len())
                .map(|i| out.world.nominal_allocatable(lahar_core::model::cluster::NodeId(i as u32)))
                .collect(),
            node_models: node_models(nodes),
            queues: QueueFact::all(&out.world),
            jobs,
            pods,
            requests,
            target,
            service: out.service.iter().map(|&(t, n, mask)| (t.micros(), n.0, mask)).collect(),
        }
    }

    /// The requests of a pod interval.
    pub fn req(&self, p: &PodFact) -> &Resources {
        &self.requests[p.req as usize].0
    }

    /// The GPU devices a pod interval held.
    pub fn hold(&self, p: &PodFact) -> DeviceHold {
        self.requests[p.req as usize].1
    }

    /// Cluster GPUs (milli).
    pub fn gpus_total_milli(&self) -> i64 {
        self.nodes.iter().map(|n| n.get(GPU)).sum()
    }
}
