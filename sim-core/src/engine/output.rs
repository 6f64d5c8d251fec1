//! What a run records: pod intervals, samples, counters, and the sinks that
//! hand them to a recorder or keep them.

use super::Engine;

use crate::cluster::NodeId;
use crate::explain::ExplainRow;
use crate::job::{JobId, PodId, PodStatus};
use crate::session::Decision;
use crate::time::SimTime;
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
    /// The run was stopped by its stop flag ([`super::Engine::set_stop`]: an
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
    pub recurring: std::collections::BTreeMap<std::sync::Arc<str>, crate::recurring::SeriesCounts>,
    /// Per JobFlow (`JobFlow namespace/name`) with jobs never created (their
    /// dependencies never all completed): how many.
    pub flows: std::collections::BTreeMap<std::sync::Arc<str>, crate::flow::FlowCounts>,
    /// Timeline actions that found nothing to act on (a pod or job not there at
    /// their instant): (place, what), in time order.
    pub timeline_missed: Vec<(String, String)>,
    /// Timeline actions that changed nothing, as in Volcano (a job's state
    /// ignores them, or the webhook refuses a scale): (place, what).
    pub timeline_ignored: Vec<(String, String)>,
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
    /// Faults: failures, repairs and drains, in order (events.csv), without a
    /// recorder.
    pub faults: Vec<super::FaultRecord>,
    /// The run had a fault plan (its outputs carry the fault columns).
    pub faults_enabled: bool,
    /// Changes of nodes' lost GPU devices: (instant, node, the devices out
    /// after it), in order, without a recorder (see [`crate::record::Recorder::node_service`]).
    pub service: Vec<(SimTime, crate::cluster::NodeId, u64)>,
}

impl Engine {
    /// Whether the state of finished jobs may be dropped: their records went to
    /// the recorder and nothing looks at them again (`--explain` jobs are kept).
    pub(super) fn retiring(&self, j: JobId) -> bool {
        self.recorder.is_some() && !self.explain.as_ref().is_some_and(|e| e.watches_job(j))
    }

    /// Drops a pod no job refers to any more (a replaced pod, an old incarnation's).
    pub(super) fn forget_pod(&mut self, p: PodId) {
        let j = self.world.pods[p.0 as usize].job;
        if self.retiring(j) {
            self.world.pods.remove(p.0 as usize);
        }
    }

    /// Drops an ended job whose pods have all let go of their nodes, with its pods:
    /// a long run's memory follows the jobs alive, not the jobs it has seen.
    pub(super) fn maybe_retire(&mut self, j: JobId) {
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
    pub(super) fn emit(&mut self, d: Decision) {
        match &mut self.recorder {
            Some(r) => r.decision(&self.world, &d),
            None => self.decisions.push(d),
        }
    }

    /// Tells the recorder that pod `p` started running.
    pub(super) fn started(&mut self, p: PodId) {
        if let Some(r) = &mut self.recorder {
            r.pod_started(&self.world, p);
        }
    }

    pub(super) fn record_pod_end(&mut self, p: PodId, reason: EndReason) {
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
