//! What a run's metrics are: summary.json's types ([`Summary`], its
//! distributions, queues, GPU time and fault costs) and the options that shape them.

use lahar_core::util::time::MICROS_PER_SEC;
use serde::Serialize;
use std::collections::BTreeMap;

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
    /// The run may have services: timeseries.csv gets `gpus_serving`.
    pub services: bool,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions { slo_slowdown: 10.0, faults: false, services: false }
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
    pub faults: Option<FaultSummary>,
    /// Per service (`spec.services`, and workloads with an autoscaler): what it
    /// was offered and served. Left out of runs without services.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceSummary>,
    /// The services together, and what they took from the other workloads.
    /// Left out of runs without services.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serving: Option<ServingSummary>,
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

/// summary.json's `faults`: what failures cost the run (docs/metrics.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FaultSummary {
    /// Outages that started (node, GPU and switch failures), drains not counted.
    pub failures: u64,
    /// Drains that started.
    pub drains: u64,
    /// Pods killed by failures.
    pub pods_killed: u64,
    /// Pods evicted at drains' deadlines.
    pub pods_drained: u64,
    /// GPU·hours out of service or cordoned (∫ gpus_unavailable dt).
    pub gpu_hours_unavailable: f64,
    /// GPU·hours of work lost to failures (redone), counted for the jobs'
    /// GPUs; part of `gpu_hours_lost`.
    pub gpu_hours_lost_to_failures: f64,
    /// The share of the GPU time held by pods that did work that was kept:
    /// `gpu_time.useful / gpu_allocation_rate`. Work later lost (to failures or
    /// stops), exposed communication and GPUs held by a gang waiting for
    /// replacements are not goodput.
    pub goodput: f64,
    /// Restarts (retries counted by RestartJob, RestartTask and RestartPod),
    /// summed over jobs.
    pub restarts: u64,
    /// Jobs that ended Failed (their retries reached maxRetry).
    pub jobs_failed: u64,
}

/// summary.json's `metrics.serving`: every service together, and what their
/// pods took from the other (batch) workloads by preempting or reclaiming.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ServingSummary {
    /// Services measured.
    pub services: usize,
    /// Requests offered to the services with a demand (`null`: none has one).
    pub offered_requests: Option<f64>,
    /// Requests they served.
    pub served_requests: Option<f64>,
    /// Requests they did not serve.
    pub unserved_requests: Option<f64>,
    /// Tokens offered to the services in tokens with a demand (`null`: none).
    pub offered_tokens: Option<f64>,
    /// Tokens they served.
    pub served_tokens: Option<f64>,
    /// Tokens they did not serve.
    pub unserved_tokens: Option<f64>,
    /// Share of the service-time (summed over the services with a demand)
    /// during which capacity met demand.
    pub slo_attainment: Option<f64>,
    /// GPU-hours held by the services' Running pods.
    pub gpu_hours: f64,
    /// The services' pods evicted to make room for other jobs' pods.
    pub pods_evicted: u64,
    /// Pods of other jobs evicted to make room for the services' pods.
    pub batch_pods_evicted: u64,
    /// Preemptions of other jobs for the services (a job once per session).
    pub batch_preemptions: u64,
    /// GPU-hours of work those jobs lost (since their last checkpoint).
    pub batch_gpu_hours_lost: f64,
}

/// One service's totals in summary.json.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ServiceSummary {
    /// `namespace/name` of the workload.
    pub service: String,
    /// Its kind.
    pub kind: String,
    /// Seconds from its arrival to the end of the run.
    pub measured_s: f64,
    /// What its demand counts, `requests` or `tokens` (`null` without a
    /// demand).
    pub unit: Option<String>,
    /// Requests offered (`null` without a demand or in tokens).
    pub offered_requests: Option<f64>,
    /// Requests served: ∫ min(demand, capacity) dt.
    pub served_requests: Option<f64>,
    /// Requests not served.
    pub unserved_requests: Option<f64>,
    /// Tokens offered (`null` without a demand or in requests).
    pub offered_tokens: Option<f64>,
    /// Tokens served: ∫ min(demand, capacity) dt.
    pub served_tokens: Option<f64>,
    /// Tokens not served.
    pub unserved_tokens: Option<f64>,
    /// Share of the time capacity met demand.
    pub slo_attainment: Option<f64>,
    /// Replica-hours short: ∫ max(0, replicas needed − replicas serving) dt.
    pub replica_hours_short: Option<f64>,
    /// From demand rising above capacity to capacity reaching it (s), over the
    /// stretches that ended.
    pub catch_up_s: Option<Dist>,
    /// A stretch of capacity below demand still open at the end (s so far).
    pub short_at_end_s: Option<f64>,
    /// Autoscaler changes up.
    pub scale_ups: u32,
    /// Autoscaler changes down.
    pub scale_downs: u32,
    /// The most replicas it asked for.
    pub max_replicas: u32,
    /// Pod starts (each pays the start-up delay).
    pub pod_starts: u32,
}
