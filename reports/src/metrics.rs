//! Per-job rows and the headline metrics of a run.

use lahar_core::engine::RunOutput;
use lahar_core::job::JobPhase;
use lahar_core::time::{MICROS_PER_SEC, SimTime};
use serde::Serialize;
use std::collections::BTreeMap;

/// One row of jobs.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRow {
    /// `namespace/name` (just `name` in the default namespace).
    pub job: String,
    /// Queue name.
    pub queue: String,
    /// Job priority.
    pub priority: i32,
    /// Whole GPUs requested.
    pub gpus: i64,
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
    /// start − submit (µs), or run end − submit for jobs that never started.
    pub wait: u64,
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

/// Builds jobs.csv rows, in job id order (= submission order).
pub fn job_rows(out: &RunOutput) -> Vec<JobRow> {
    let end = out.stats.end.micros();
    out.world
        .jobs
        .iter()
        .filter(|j| j.phase != JobPhase::NotSubmitted)
        .map(|j| {
            let s = &j.spec;
            let submit = s.submit.micros();
            let start = j.first_start.map(SimTime::micros);
            let jend = j.end.map(SimTime::micros);
            JobRow {
                job: if s.namespace == "default" { s.name.clone() } else { format!("{}/{}", s.namespace, s.name) },
                queue: out.world.queues[s.queue.0 as usize].spec.name.clone(),
                priority: s.priority,
                gpus: s.total_gpus(),
                submit,
                start,
                end: jend,
                state: j.phase.as_str(),
                jct: jend.map(|e| e - submit),
                wait: start.unwrap_or(end.max(submit)) - submit,
                ideal: s.duration.micros(),
                preemptions: j.preemptions,
                nodes_spanned: j.nodes_spanned,
                highest_tier: j.highest_tier,
                retries: j.retries,
                lost_gpu_s: j.progress.lost_gpu_us as f64 / MICROS_PER_SEC as f64,
                kind: s.kind.clone(),
            }
        })
        .collect()
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
    /// Summarises values (seconds). Empty input gives zeros.
    pub fn of(mut v: Vec<f64>) -> Dist {
        if v.is_empty() {
            return Dist::default();
        }
        v.sort_by(f64::total_cmp);
        let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Dist {
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: rank(0.5),
            p90: rank(0.9),
            p99: rank(0.99),
            max: v[v.len() - 1],
        }
    }
}

/// Per-queue headline numbers.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QueueSummary {
    /// Jobs submitted.
    pub jobs: usize,
    /// Jobs completed.
    pub completed: usize,
    /// JCT of completed jobs (s).
    pub jct_s: Dist,
    /// Queueing delay of started jobs (s).
    pub wait_s: Dist,
    /// GPU·hours held by its pods.
    pub gpu_hours: f64,
}

/// The headline metrics of a run (summary.json).
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
    pub jct_s: Dist,
    /// Queueing delay (first start − submit) of started jobs (s).
    pub wait_s: Dist,
    /// JCT / ideal run time of completed jobs.
    pub slowdown: Dist,
    /// Time from the first submission to the last completion (s).
    pub makespan_s: f64,
    /// Simulated time covered (s).
    pub sim_time_s: f64,
    /// GPUs in the cluster.
    pub gpus_total: f64,
    /// Time-weighted share of GPUs held by running pods over the run.
    pub gpu_allocation_rate: f64,
    /// Time-weighted share of GPUs doing useful work (allocation discounted by
    /// exposed communication and by work later lost).
    pub gpu_effective_utilization: f64,
    /// Sessions in which jobs lost pods to eviction, summed over jobs.
    pub preemptions: u64,
    /// GPU·hours of work lost to stops.
    pub gpu_hours_lost: f64,
    /// Events handled.
    pub events: u64,
    /// Scheduling sessions run.
    pub sessions: u64,
    /// Per queue, by name.
    pub queues: BTreeMap<String, QueueSummary>,
}

/// Computes the summary of a run.
pub fn summarize(out: &RunOutput, rows: &[JobRow]) -> Summary {
    let secs = |us: u64| us as f64 / MICROS_PER_SEC as f64;
    let completed: Vec<&JobRow> = rows.iter().filter(|r| r.state == "Completed").collect();
    let jct = Dist::of(completed.iter().filter_map(|r| r.jct).map(secs).collect());
    let wait = Dist::of(rows.iter().filter(|r| r.start.is_some()).map(|r| secs(r.wait)).collect());
    let slowdown = Dist::of(
        completed.iter().filter(|r| r.ideal > 0).map(|r| r.jct.unwrap_or(0) as f64 / r.ideal as f64).collect(),
    );
    let first_submit = rows.iter().map(|r| r.submit).min().unwrap_or(0);
    let last_end = rows.iter().filter_map(|r| r.end).max().unwrap_or(first_submit);
    let sim_end = out.stats.end.micros();
    let gpus_total = out.world.cluster.total().gpu_milli() as f64 / 1000.0;
    let held_gpu_us: f64 =
        out.pods.iter().map(|p| p.gpu_milli as f64 / 1000.0 * (p.end.micros() - p.start.micros()) as f64).sum();
    let lost_gpu_us: f64 = out.world.jobs.iter().map(|j| j.progress.lost_gpu_us as f64).sum();
    let comm_gpu_us: f64 = out.world.jobs.iter().map(|j| j.progress.comm_gpu_us as f64).sum();
    let denom = gpus_total * sim_end as f64;
    let rate = |x: f64| if denom > 0.0 { x / denom } else { 0.0 };
    let mut queues: BTreeMap<String, QueueSummary> = BTreeMap::new();
    for q in &out.world.queues {
        queues.insert(q.spec.name.clone(), QueueSummary::default());
    }
    for q in queues.keys().cloned().collect::<Vec<_>>() {
        let mine: Vec<&JobRow> = rows.iter().filter(|r| r.queue == q).collect();
        let e = queues.get_mut(&q).expect("inserted above");
        e.jobs = mine.len();
        e.completed = mine.iter().filter(|r| r.state == "Completed").count();
        e.jct_s = Dist::of(mine.iter().filter(|r| r.state == "Completed").filter_map(|r| r.jct).map(secs).collect());
        e.wait_s = Dist::of(mine.iter().filter(|r| r.start.is_some()).map(|r| secs(r.wait)).collect());
    }
    for p in &out.pods {
        let qid = out.world.jobs[p.job.0 as usize].spec.queue;
        let name = &out.world.queues[qid.0 as usize].spec.name;
        if let Some(e) = queues.get_mut(name) {
            e.gpu_hours += p.gpu_milli as f64 / 1000.0 * (p.end.micros() - p.start.micros()) as f64 / 3.6e9;
        }
    }
    Summary {
        jobs: rows.len(),
        completed: completed.len(),
        ended_otherwise: rows.iter().filter(|r| matches!(r.state, "Failed" | "Aborted" | "Terminated")).count(),
        unfinished: rows.iter().filter(|r| r.end.is_none()).count(),
        jct_s: jct,
        wait_s: wait,
        slowdown,
        makespan_s: secs(last_end - first_submit),
        sim_time_s: secs(sim_end),
        gpus_total,
        gpu_allocation_rate: rate(held_gpu_us),
        gpu_effective_utilization: rate((held_gpu_us - comm_gpu_us - lost_gpu_us).max(0.0)),
        preemptions: rows.iter().map(|r| r.preemptions as u64).sum(),
        gpu_hours_lost: lost_gpu_us / 3.6e9,
        events: out.stats.events,
        sessions: out.stats.sessions,
        queues,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let d = Dist::of((1..=10).map(f64::from).collect());
        assert_eq!((d.mean, d.p50, d.p90, d.p99, d.max), (5.5, 5.0, 9.0, 10.0, 10.0));
        assert_eq!(Dist::of(vec![]), Dist::default());
        assert_eq!(Dist::of(vec![3.0]).p99, 3.0);
    }
}
