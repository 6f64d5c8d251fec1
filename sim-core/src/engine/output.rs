//! What a run records: pod intervals, samples, counters, and the sinks that
//! hand them to a recorder or keep them.

use super::Engine;
use crate::record::{EndReason, PodRecord, RunStats, Sample};

use crate::explain::ExplainRow;
use crate::model::ids::{JobId, PodId};
use crate::model::job::PodStatus;
use crate::session::Decision;
use crate::util::time::SimTime;
use crate::world::World;

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
    pub faults: Vec<crate::record::FaultRecord>,
    /// The run had a fault plan (its outputs carry the fault columns).
    pub faults_enabled: bool,
    /// Changes of nodes' lost GPU devices: (instant, node, the devices out
    /// after it), in order, without a recorder (see [`crate::record::Recorder::node_service`]).
    pub service: Vec<(SimTime, crate::model::ids::NodeId, u64)>,
    /// Services' samples (services.csv), without a recorder.
    pub service_samples: Vec<crate::record::ServiceSample>,
    /// Autoscalers' changes (scaling.csv), without a recorder.
    pub scaling: Vec<crate::record::ScaleRecord>,
    /// The timeline's steps as carried out (timeline.csv), without a recorder.
    pub operations: Vec<crate::record::OperationRecord>,
}

impl Engine {
    /// Whether the state of finished jobs may be dropped: their records went to
    /// the recorder and nothing looks at them again (`--explain` jobs are kept).
    pub(super) fn retiring(&self, j: JobId) -> bool {
        self.recorder.is_some() && !self.explain.as_ref().is_some_and(|e| e.watches_job(j))
    }

    /// Drops a pod no job refers to any more (a replaced pod, an old incarnation's).
    pub(super) fn forget_pod(&mut self, p: PodId) {
        let j = self.world.pods[p].job;
        if self.retiring(j) {
            self.world.pods.remove(p);
        }
    }

    /// Drops an ended job whose pods have all let go of their nodes, with its pods:
    /// a long run's memory follows the jobs alive, not the jobs it has seen.
    pub(super) fn maybe_retire(&mut self, j: JobId) {
        let Some(job) = self.world.jobs.get(j) else { return };
        if !job.phase.is_terminal() || job.count(PodStatus::Releasing) > 0 || !self.retiring(j) {
            return;
        }
        for p in std::mem::take(&mut self.world.jobs[j].pods) {
            self.world.pods.remove(p);
        }
        self.world.jobs.remove(j);
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
        self.serving_started(p);
        if let Some(r) = &mut self.recorder {
            r.pod_started(&self.world, p);
        }
    }

    pub(super) fn record_pod_end(&mut self, p: PodId, reason: EndReason) {
        // A pod still running when the run ends serves to the end (the last
        // samples see it).
        if reason != EndReason::Running {
            self.serving_stopped(p);
        }
        let pod = &self.world.pods[p];
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
