//! Per-job rows and the headline metrics of a run.

use crate::accumulate::RunMetrics;
use crate::timeline::Facts;
use lahar_core::engine::RunOutput;
use lahar_core::job::JobPhase;
use lahar_core::time::{MICROS_PER_SEC, SimTime};
use lahar_core::world::{Job, World};
use serde::Serialize;
use std::collections::BTreeMap;

/// A job's name in the outputs: `namespace/name`, just `name` in the default
/// namespace (jobs.csv, pods.csv and decisions.csv agree).
pub fn job_label(s: &lahar_core::job::JobSpec) -> String {
    let mut out = String::new();
    push_job_label(&mut out, s);
    out
}

/// Appends [`job_label`] to `out`.
pub fn push_job_label(out: &mut String, s: &lahar_core::job::JobSpec) {
    if &*s.namespace != "default" {
        out.push_str(&s.namespace);
        out.push('/');
    }
    out.push_str(&s.name);
}

/// A pod's name in the outputs: always `namespace/name`, the name being
/// `<job>-<task>-<index>` (pods.csv, decisions.csv and explain.csv agree).
pub fn pod_label(s: &lahar_core::job::JobSpec, task: u16, index: u32) -> String {
    let mut out = String::new();
    push_pod_label(&mut out, s, task, index);
    out
}

/// Appends [`pod_label`] to `out`.
pub fn push_pod_label(out: &mut String, s: &lahar_core::job::JobSpec, task: u16, index: u32) {
    out.push_str(&s.namespace);
    out.push('/');
    s.push_pod_name(out, task as usize, index);
}

/// One row of jobs.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRow {
    /// `namespace/name` (just `name` in the default namespace).
    pub job: String,
    /// Queue name.
    pub queue: String,
    /// Job priority.
    pub priority: i32,
    /// GPUs requested by all its pods, in milli-GPUs (fractional shares included).
    pub gpu_milli: i64,
    /// Submit time (µs).
    pub submit: u64,
    /// First start (µs), if it ran.
    pub start: Option<u64>,
    /// End (µs), if it ended.
    pub end: Option<u64>,
    /// Final phase.
    pub state: &'static str,
    /// end − submit (µs).
    pub jct: Option<u64>,
    /// start − submit (µs); for a job that never started, run end − submit when
    /// the run was cut short (horizon, session limit: it was still waiting), else
    /// none (the run ended with nothing left to happen: it could not start).
    pub wait: Option<u64>,
    /// Run time under ideal placement (µs).
    pub ideal: u64,
    /// Number of sessions in which it lost pods to eviction.
    pub preemptions: u32,
    /// Distinct nodes at its last start.
    pub nodes_spanned: u32,
    /// Tier spanned at its last start.
    pub highest_tier: u32,
    /// Restarts.
    pub retries: u32,
    /// GPU·seconds of work lost to stops.
    pub lost_gpu_s: f64,
    /// Job kind.
    pub kind: String,
}

/// Builds jobs.csv rows of a finished run, in job id order (= submission order).
pub fn job_rows(out: &RunOutput) -> Vec<JobRow> {
    let end = out.stats.cut_short.then_some(out.stats.end.micros());
    out.world.jobs.iter().filter(|j| j.phase != JobPhase::NotSubmitted).map(|j| job_row(&out.world, j, end)).collect()
}

/// A submitted job's jobs.csv row. `cut_short_at` is the end of a run cut short
/// (horizon, session limit): a job that never started and had not ended was still
/// waiting then, and its wait runs to it; else it has none (it could not start).
pub fn job_row(world: &World, j: &Job, cut_short_at: Option<u64>) -> JobRow {
    let s = &j.spec;
    let submit = s.submit.micros();
    let start = j.first_start.map(SimTime::micros);
    let jend = j.end.map(SimTime::micros);
    JobRow {
        job: job_label(s),
        queue: world.queues[s.queue.0 as usize].spec.name.clone(),
        priority: s.priority,
        gpu_milli: s.total_gpu_milli(),
        submit,
        start,
        end: jend,
        state: j.phase_name(),
        jct: jend.map(|e| e - submit),
        wait: match (start, jend) {
            (Some(s), _) => Some(s - submit),
            (None, None) => cut_short_at.map(|end| end.max(submit) - submit),
            (None, Some(_)) => None,
        },
        // Unknown for jobs without a run time.
        ideal: if s.duration.is_unbounded() { 0 } else { s.duration.micros() },
        preemptions: j.preemptions,
        nodes_spanned: j.nodes_spanned,
        highest_tier: j.highest_tier,
        retries: j.retries,
        lost_gpu_s: j.progress.lost_gpu_us as f64 / MICROS_PER_SEC as f64,
        kind: s.kind.to_string(),
    }
}

/// Percentiles of a distribution (nearest-rank).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Dist {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

impl Dist {
    /// Summarises values (seconds). No values, no distribution: `None` (printed
    /// `n/a`, `null` in JSON, empty cells in CSV — never a made-up 0).
    pub fn of(mut v: Vec<f64>) -> Option<Dist> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Some(Dist {
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: rank(0.5),
            p90: rank(0.9),
            p99: rank(0.99),
            max: v[v.len() - 1],
        })
    }
}

/// Settings of the summary.
#[derive(Clone, Debug, PartialEq)]
pub struct SummaryOptions {
    /// A job misses its SLO when its slowdown exceeds this (jobs have no deadline
    /// field, so the SLO is stated as a slowdown bound).
    pub slo_slowdown: f64,
    /// The run has a fault plan: timeseries.csv gets `gpus_unavailable`,
    /// events.csv is written, summary.json gets its `faults` section.
    pub faults: bool,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions { slo_slowdown: 10.0, faults: false }
    }
}

/// Per-queue headline numbers (see docs/metrics.md for every formula).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QueueSummary {
    /// Proportion weight.
    pub weight: u32,
    /// Jobs submitted.
    pub jobs: usize,
    /// Jobs completed.
    pub completed: usize,
    /// Jobs still pending or running at the end.
    pub unfinished: usize,
    /// JCT of completed jobs (s).
    pub jct_s: Option<Dist>,
    /// Queueing delay of started jobs (s).
    pub wait_s: Option<Dist>,
    /// JCT / ideal run time of completed jobs.
    pub slowdown: Option<Dist>,
    /// First submission to last end of its jobs (s).
    pub makespan_s: Option<f64>,
    /// GPU·hours held by its pods.
    pub gpu_hours: f64,
    /// GPU·hours held by its pods while their job made no progress (a gang
    /// waiting for the rest of its pods).
    pub gpu_hours_stalled: f64,
    /// Time-weighted share of cluster GPUs its pods held: the queue's part of the
    /// run's `gpu_allocation_rate` (called `gpu_share` before 0.2).
    pub gpu_allocation_rate: f64,
    /// Time-weighted deserved share (proportion's first round, see docs/metrics.md).
    pub deserved_share: f64,
    /// `gpu_allocation_rate / deserved_share` (0 when it never deserved anything).
    pub share_over_deserved: f64,
    /// Finish-time fairness ρ of completed jobs.
    pub rho: Option<Dist>,
    /// Preemptions (sessions in which a job lost pods), summed over its jobs.
    pub preemptions: u64,
    /// GPU·hours of work lost to stops.
    pub gpu_hours_lost: f64,
    /// Gang wait of started jobs (s).
    pub gang_wait_s: Option<Dist>,
    /// GPU·hours held by pods of jobs waiting for the rest of their gang.
    pub gang_wait_gpu_hours: f64,
    /// Jobs whose slowdown exceeds the SLO bound.
    pub slo_misses: usize,
    /// Jobs that missed a deadline (always 0: jobs carry no deadline).
    pub deadline_misses: usize,
}

/// The headline metrics of a run (summary.json; docs/metrics.md defines each).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Jobs submitted.
    pub jobs: usize,
    /// Jobs completed.
    pub completed: usize,
    /// Jobs that ended otherwise (failed, aborted, terminated).
    pub ended_otherwise: usize,
    /// Jobs still pending or running at the end.
    pub unfinished: usize,
    /// Job completion time of completed jobs (s).
    pub jct_s: Option<Dist>,
    /// Queueing delay (first start − submit) of started jobs (s).
    pub wait_s: Option<Dist>,
    /// JCT / ideal run time of completed jobs.
    pub slowdown: Option<Dist>,
    /// Time from the first submission to the last job end (s).
    pub makespan_s: Option<f64>,
    /// Simulated time covered (s).
    pub sim_time_s: f64,
    /// GPUs in the cluster.
    pub gpus_total: f64,
    /// CPU cores in the cluster.
    pub cpus_total: f64,
    /// Time-weighted share of GPUs held by running pods over the run.
    pub gpu_allocation_rate: f64,
    /// Time-weighted share of GPUs doing work that was kept: `gpu_time.useful`.
    pub gpu_effective_utilization: f64,
    /// Where the cluster's GPU time went, as shares that sum to 1.
    pub gpu_time: GpuTime,
    /// Time-weighted share of the cluster's CPUs held by pods (the headline of a
    /// cluster without GPUs: an HPC trace).
    pub cpu_allocation_rate: f64,
    /// Share of idle GPU-time that cannot host a pod of the typical workload.
    pub fragmentation: f64,
    /// Time-averaged fragmented GPUs.
    pub fragmented_gpus_mean: f64,
    /// Jain's index over queues of `share_over_deserved`.
    pub jain_fairness: f64,
    /// Finish-time fairness ρ of completed jobs.
    pub rho: Option<Dist>,
    /// Sessions in which jobs lost pods to eviction, summed over jobs.
    pub preemptions: u64,
    /// GPU·hours of work lost to stops.
    pub gpu_hours_lost: f64,
    /// Gang wait of started jobs (s).
    pub gang_wait_s: Option<Dist>,
    /// GPU·hours held by pods of jobs waiting for the rest of their gang.
    pub gang_wait_gpu_hours: f64,
    /// Slowdown above which a job counts as an SLO miss.
    pub slo_slowdown: f64,
    /// Jobs whose slowdown exceeds `slo_slowdown`.
    pub slo_misses: usize,
    /// Jobs that missed a deadline (always 0: jobs carry no deadline).
    pub deadline_misses: usize,
    /// Events handled.
    pub events: u64,
    /// Scheduling sessions run.
    pub sessions: u64,
    /// Per queue, by name.
    pub queues: BTreeMap<String, QueueSummary>,
    /// What failures cost (runs with `spec.faults` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub faults: Option<crate::faults::FaultSummary>,
}

/// Where a run's GPU time went: shares of `gpus_total × sim_time_s`, one
/// category per GPU at each instant, summing to 1 (docs/metrics.md § GPU time).
/// The timeseries' `gpus_busy_effective`, `gpus_stalled` and `gpus_releasing`
/// are the same categories at one instant.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct GpuTime {
    /// Held by progressing jobs doing work that was kept.
    pub useful: f64,
    /// Held by progressing jobs doing work later thrown away (a stop before the
    /// next checkpoint).
    pub lost: f64,
    /// Held by progressing jobs beyond their work: exposed communication, slow
    /// nodes, an elastic job's resize pauses and its workers' shortfall.
    pub slowed: f64,
    /// Held by pods of jobs making no progress: a gang waiting for the rest of
    /// its pods (after a failure, a drain or a preemption, or before its start
    /// under a scheduler that places pods one by one).
    pub stalled: f64,
    /// Held by Releasing pods (their grace period after an eviction).
    pub releasing: f64,
    /// Held by no pod: idle, failed or cordoned.
    pub idle: f64,
    /// On nodes out of the cluster (declared `absent`, or removed by the
    /// timeline): capacity the scheduler never had. Left out when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub absent: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

impl GpuTime {
    /// The shares from GPU·µs: `held` by pods (their intervals), `running` held
    /// by progressing jobs, of which `comm` beyond their work and `lost` on work
    /// later lost (counted for the job's whole GPUs, so capped at what the
    /// progressing time holds), over `capacity` GPU·µs. Releasing pods, which no
    /// interval covers, are added by [`GpuTime::with_releasing`].
    pub fn of(held: f64, running: f64, comm: f64, lost: f64, capacity: f64) -> GpuTime {
        if capacity <= 0.0 {
            return GpuTime { idle: 1.0, ..GpuTime::default() };
        }
        let running = running.min(held);
        let slowed = comm.min(running);
        let lost = lost.min(running - slowed);
        let useful = running - slowed - lost;
        let share = |x: f64| x / capacity;
        GpuTime {
            useful: share(useful),
            lost: share(lost),
            slowed: share(slowed),
            stalled: share(held - running),
            releasing: 0.0,
            idle: share((capacity - held).max(0.0)),
            absent: 0.0,
        }
    }

    /// The same with `releasing` GPU·µs held by Releasing pods, taken from idle.
    pub fn with_releasing(mut self, releasing: f64, capacity: f64) -> GpuTime {
        if capacity > 0.0 {
            let r = (releasing / capacity).min(self.idle);
            self.releasing = r;
            self.idle -= r;
        }
        self
    }

    /// The same with `absent` GPU·µs of nodes out of the cluster, taken from idle.
    pub fn with_absent(mut self, absent: f64, capacity: f64) -> GpuTime {
        if capacity > 0.0 {
            let a = (absent / capacity).min(self.idle);
            self.absent = a;
            self.idle -= a;
        }
        self
    }
}

/// Jain's fairness index `(Σx)² / (n·Σx²)`; 1 for no or all-zero values.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || s2 == 0.0 { 1.0 } else { s * s / (x.len() as f64 * s2) }
}

impl Summary {
    /// Counts the GPU time held by Releasing pods (milli-GPU·µs, the engine's
    /// [`lahar_core::engine::RunStats::releasing_milli_us`]) in `gpu_time`.
    pub fn add_releasing(&mut self, milli_us: u128) {
        let capacity = self.gpus_total * self.sim_time_s * MICROS_PER_SEC as f64;
        self.gpu_time = std::mem::take(&mut self.gpu_time).with_releasing(milli_us as f64 / 1000.0, capacity);
    }

    /// Counts the GPU time of nodes out of the cluster (milli-GPU·µs, the
    /// engine's [`lahar_core::engine::RunStats::absent_milli_us`]) in `gpu_time`.
    pub fn add_absent(&mut self, milli_us: u128) {
        let capacity = self.gpus_total * self.sim_time_s * MICROS_PER_SEC as f64;
        self.gpu_time = std::mem::take(&mut self.gpu_time).with_absent(milli_us as f64 / 1000.0, capacity);
    }
}

/// Computes the summary of a finished run with the default options.
pub fn summarize(out: &RunOutput) -> Summary {
    summarize_with(out, &SummaryOptions::default())
}

/// Computes the summary of a finished run (the batch form: a written run's
/// summary is accumulated as it goes, by [`crate::stream::RunWriter`], with the
/// same [`RunMetrics`]).
pub fn summarize_with(out: &RunOutput, opts: &SummaryOptions) -> Summary {
    let mut s = summarize_facts(&Facts::from_output(out), opts);
    s.events = out.stats.events;
    s.sessions = out.stats.sessions;
    s.add_releasing(out.stats.releasing_milli_us);
    s.add_absent(out.stats.absent_milli_us);
    if out.faults_enabled {
        s.faults = Some(crate::faults::summarize(&out.faults, &out.world, out.stats.end.micros(), &s));
    }
    s
}

/// Computes the summary from plain facts (`events` and `sessions` left at 0).
pub fn summarize_facts(f: &Facts, opts: &SummaryOptions) -> Summary {
    let m = RunMetrics::replay(f, &[], opts, |_| {});
    let unfinished = f.jobs.iter().enumerate().filter(|(_, j)| j.end.is_none()).map(|(i, j)| (i as u32, j));
    m.finish(f.end, unfinished)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{JobFact, PodFact, QueueFact};
    use lahar_core::frag::{Demand, Models, Target};
    use lahar_core::resource::Resources;
    use lahar_core::world::DeviceHold;

    /// A non-gang job whose first pod starts 30 s before its second, then loses work.
    #[test]
    fn gang_wait_lost_work_and_effective_utilization() {
        let pod = Resources::new(0, 0, 2000, 1);
        let f = Facts {
            end: 100_000_000,
            nodes: vec![Resources::new(8000, 1 << 30, 4000, 110)],
            queues: vec![QueueFact { name: "q".into(), weight: 1 }],
            jobs: vec![JobFact {
                queue: 0,
                gpus: 4,
                submit: 0,
                first_start: Some(40_000_000),
                end: Some(100_000_000),
                completed: true,
                ideal: 50_000_000,
                preemptions: 1,
                lost_gpu_us: 40_000_000,
                comm_gpu_us: 20_000_000,
                // Progressing from its gang's start at 40 s: 4 GPUs × 60 s.
                running_gpu_us: 240_000_000,
            }],
            pods: vec![
                PodFact { job: 0, node: 0, req: 0, start: 10_000_000, end: 100_000_000 },
                PodFact { job: 0, node: 0, req: 1, start: 40_000_000, end: 100_000_000 },
            ],
            node_models: vec![None],
            requests: vec![
                (pod, DeviceHold { whole: 0b0011, share: None }),
                (pod, DeviceHold { whole: 0b1100, share: None }),
            ],
            target: Target::typical([(Demand { cpu: 0, gpu_milli: 1000, gpus: 2, models: Models::ANY }, 2)], 100),
            service: Vec::new(),
        };
        let s = summarize_facts(&f, &SummaryOptions { slo_slowdown: 1.5, ..Default::default() });
        assert_eq!(s.gang_wait_s.map(|d| d.max), Some(30.0));
        assert_eq!(s.gang_wait_gpu_hours, 2.0 * 30.0 / 3600.0);
        assert_eq!(s.preemptions, 1);
        assert_eq!(s.gpu_hours_lost, 40.0 / 3600.0);
        // Held 2×90 + 2×60 = 300 GPU·s of 4×100.
        assert_eq!(s.gpu_allocation_rate, 0.75);
        // The first pod's 30 s × 2 GPUs before the gang was whole held GPUs
        // without progress; of the 240 GPU·s progressing, 20 were exposed
        // communication and 40 went to work later lost.
        assert_eq!(s.gpu_effective_utilization, (240.0 - 20.0 - 40.0) / 400.0);
        assert_eq!(
            s.gpu_time,
            GpuTime {
                useful: 180.0 / 400.0,
                lost: 40.0 / 400.0,
                slowed: 20.0 / 400.0,
                stalled: 60.0 / 400.0,
                releasing: 0.0,
                idle: 100.0 / 400.0,
                absent: 0.0,
            }
        );
        assert_eq!(s.queues["q"].gpu_hours_stalled, 60e6 / 3.6e9);
        // Slowdown 100/50 = 2 > 1.5.
        assert_eq!(s.slo_misses, 1);
        // Alone in the cluster all along: ρ = JCT / ideal.
        assert_eq!(s.rho.map(|d| d.max), Some(2.0));
        assert_eq!(s.jain_fairness, 1.0);
        // Idle GPUs are only ever 2 or 4 on the one node and the 2-GPU shape fits.
        assert_eq!(s.fragmentation, 0.0);
    }

    #[test]
    fn jain_index() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), 1.0);
        assert_eq!(jain(&[1.0, 0.0]), 0.5);
        assert_eq!(jain(&[]), 1.0);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let d = Dist::of((1..=10).map(f64::from).collect()).expect("values");
        assert_eq!((d.mean, d.p50, d.p90, d.p99, d.max), (5.5, 5.0, 9.0, 10.0, 10.0));
        assert_eq!(Dist::of(vec![]), None);
        assert_eq!(Dist::of(vec![3.0]).map(|d| d.p99), Some(3.0));
    }
}
