//! Per-job rows and the headline metrics of a run.

use crate::timeline::{Facts, Timeline, sweep};
use lahar_core::engine::RunOutput;
use lahar_core::job::JobPhase;
use lahar_core::resource::GPU;
use lahar_core::time::{MICROS_PER_SEC, SimTime};
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

/// Builds jobs.csv rows, in job id order (= submission order).
pub fn job_rows(out: &RunOutput) -> Vec<JobRow> {
    job_rows_iter(out).collect()
}

/// jobs.csv rows one by one, in job id order, without holding them all.
pub fn job_rows_iter(out: &RunOutput) -> impl Iterator<Item = JobRow> + '_ {
    let end = out.stats.end.micros();
    out.world.jobs.iter().filter(|j| j.phase != JobPhase::NotSubmitted).map(move |j| {
        let s = &j.spec;
        let submit = s.submit.micros();
        let start = j.first_start.map(SimTime::micros);
        let jend = j.end.map(SimTime::micros);
        JobRow {
            job: job_label(s),
            queue: out.world.queues[s.queue.0 as usize].spec.name.clone(),
            priority: s.priority,
            gpu_milli: s.tasks.iter().map(|t| t.requests.gpu_milli() * t.replicas as i64).sum(),
            submit,
            start,
            end: jend,
            state: j.phase.as_str(),
            jct: jend.map(|e| e - submit),
            wait: match start {
                Some(s) => Some(s - submit),
                None => out.stats.cut_short.then(|| end.max(submit) - submit),
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
    })
}

/// True for the final states of jobs that ended without completing.
fn ended_otherwise(state: &str) -> bool {
    matches!(state, "Failed" | "Aborted" | "Terminated")
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
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions { slo_slowdown: 10.0 }
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
    /// Time-weighted share of cluster GPUs its pods held.
    pub gpu_share: f64,
    /// Time-weighted deserved share (proportion's first round, see docs/metrics.md).
    pub deserved_share: f64,
    /// `gpu_share / deserved_share` (0 when it never deserved anything).
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
    /// Time-weighted share of GPUs held by running pods over the run.
    pub gpu_allocation_rate: f64,
    /// Time-weighted share of GPUs doing useful work (allocation discounted by
    /// exposed communication and by work later lost).
    pub gpu_effective_utilization: f64,
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
}

/// Per-job derived values, in [`Facts::jobs`] order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobMetrics {
    /// Finish-time fairness ρ (completed jobs with a non-zero ideal time).
    pub rho: Option<f64>,
    /// Gang wait (µs), for jobs that held a pod before their gang was complete or
    /// that started.
    pub gang_wait: Option<u64>,
    /// GPU·µs held while waiting for the rest of the gang.
    pub gang_wait_gpu_us: f64,
    /// Slowdown used for the SLO (end or run end − submit) / ideal.
    pub slo_slowdown: Option<f64>,
}

fn secs(us: u64) -> f64 {
    us as f64 / MICROS_PER_SEC as f64
}

/// Derives the per-job values that need the timeline (ρ, gang wait, SLO slowdown).
pub fn job_metrics(f: &Facts, tl: &Timeline) -> Vec<JobMetrics> {
    let total = f.gpus_total_milli() as f64 / 1000.0;
    let mut out: Vec<JobMetrics> = f
        .jobs
        .iter()
        .map(|j| {
            let rho = match j.end {
                Some(e) if j.completed && j.ideal > 0 && e > j.submit && total > 0.0 => {
                    let n = (tl.active_integral(j.submit, e) / (e - j.submit) as f64).max(1.0);
                    let isolated = j.ideal as f64 * (j.gpus as f64 * n / total).max(1.0);
                    Some((e - j.submit) as f64 / isolated)
                }
                _ => None,
            };
            let slo = (j.ideal > 0).then(|| (j.end.unwrap_or(f.end).max(j.submit) - j.submit) as f64 / j.ideal as f64);
            JobMetrics { rho, gang_wait: None, gang_wait_gpu_us: 0.0, slo_slowdown: slo }
        })
        .collect();
    let mut first_pod: Vec<Option<u64>> = vec![None; f.jobs.len()];
    for p in &f.pods {
        let job = p.job as usize;
        let fp = &mut first_pod[job];
        *fp = Some(fp.map_or(p.start, |x| x.min(p.start)));
        let until = f.jobs[job].first_start.unwrap_or(f.end);
        if p.start < until {
            out[job].gang_wait_gpu_us += f.req(p).get(GPU) as f64 / 1000.0 * (p.end.min(until) - p.start) as f64;
        }
    }
    for (i, j) in f.jobs.iter().enumerate() {
        out[i].gang_wait = match (j.first_start, first_pod[i]) {
            (Some(s), Some(p)) => Some(s.saturating_sub(p)),
            (Some(_), None) => Some(0),
            _ => None,
        };
    }
    out
}

/// Jain's fairness index `(Σx)² / (n·Σx²)`; 1 for no or all-zero values.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || s2 == 0.0 { 1.0 } else { s * s / (x.len() as f64 * s2) }
}

/// Computes the summary of a run with the default options.
pub fn summarize(out: &RunOutput, rows: &[JobRow]) -> Summary {
    summarize_with(out, rows, &SummaryOptions::default())
}

/// Computes the summary of a run.
pub fn summarize_with(out: &RunOutput, rows: &[JobRow], opts: &SummaryOptions) -> Summary {
    let facts = Facts::from_output(out);
    let mut s = summarize_run(out, &facts, &sweep(&facts, &[]), opts);
    s.ended_otherwise = rows.iter().filter(|r| ended_otherwise(r.state)).count();
    s
}

/// Computes the summary of a run from its facts and their timeline, already
/// swept (with or without sample instants: the integrals do not depend on them).
pub fn summarize_run(out: &RunOutput, facts: &Facts, tl: &Timeline, opts: &SummaryOptions) -> Summary {
    // `ended_otherwise` comes from the facts: jobs that ended without completing.
    let mut s = summarize_timeline(facts, tl, opts);
    s.events = out.stats.events;
    s.sessions = out.stats.sessions;
    s
}

/// Computes the summary from plain facts (`events`, `sessions` and
/// `ended_otherwise` are left at 0 unless known: failures are counted as jobs
/// that ended neither completed nor unfinished).
pub fn summarize_facts(f: &Facts, opts: &SummaryOptions) -> Summary {
    summarize_timeline(f, &sweep(f, &[]), opts)
}

/// [`summarize_facts`] with the facts' timeline already swept.
pub fn summarize_timeline(f: &Facts, tl: &Timeline, opts: &SummaryOptions) -> Summary {
    let jm = job_metrics(f, tl);
    let gpus_total = f.gpus_total_milli() as f64 / 1000.0;
    let denom = gpus_total * f.end as f64;
    let rate = |x: f64| if denom > 0.0 { x / denom } else { 0.0 };
    let nq = f.queues.len();
    let mut held_q = vec![0u128; nq];
    for p in &f.pods {
        held_q[f.jobs[p.job as usize].queue as usize] += f.req(p).get(GPU).max(0) as u128 * (p.end - p.start) as u128;
    }
    let held_gpu_us = |q: Option<usize>| -> f64 {
        let m: u128 = match q {
            Some(q) => held_q[q],
            None => held_q.iter().sum(),
        };
        m as f64 / 1000.0
    };
    let scope = |q: Option<usize>| -> QueueSummary {
        let ids: Vec<usize> = (0..f.jobs.len()).filter(|&i| q.is_none_or(|q| f.jobs[i].queue as usize == q)).collect();
        let jobs = || ids.iter().map(|&i| (&f.jobs[i], &jm[i]));
        let done = || jobs().filter(|(j, _)| j.completed && j.end.is_some());
        let first_submit = jobs().map(|(j, _)| j.submit).min().unwrap_or(0);
        let last_end = jobs().filter_map(|(j, _)| j.end).max();
        let held = held_gpu_us(q);
        let lost: u128 = jobs().map(|(j, _)| j.lost_gpu_us as u128).sum();
        let (share, deserved) = match q {
            Some(q) => (rate(tl.allocated_gpu_us[q]), rate(tl.deserved_gpu_us[q])),
            None => (rate(held), 1.0),
        };
        QueueSummary {
            weight: q.map_or(0, |q| f.queues[q].weight),
            jobs: ids.len(),
            completed: done().count(),
            unfinished: jobs().filter(|(j, _)| j.end.is_none()).count(),
            jct_s: Dist::of(done().map(|(j, _)| secs(j.end.unwrap_or(0) - j.submit)).collect()),
            wait_s: Dist::of(jobs().filter_map(|(j, _)| j.first_start.map(|s| secs(s - j.submit))).collect()),
            slowdown: Dist::of(
                done()
                    .filter(|(j, _)| j.ideal > 0)
                    .map(|(j, _)| (j.end.unwrap_or(0) - j.submit) as f64 / j.ideal as f64)
                    .collect(),
            ),
            makespan_s: last_end.map(|e| secs(e.saturating_sub(first_submit))),
            gpu_hours: held / 3.6e9,
            gpu_share: share,
            deserved_share: deserved,
            share_over_deserved: if deserved > 0.0 { share / deserved } else { 0.0 },
            rho: Dist::of(jobs().filter_map(|(_, m)| m.rho).collect()),
            preemptions: jobs().map(|(j, _)| j.preemptions as u64).sum(),
            gpu_hours_lost: lost as f64 / 3.6e9,
            gang_wait_s: Dist::of(jobs().filter_map(|(_, m)| m.gang_wait.map(secs)).collect()),
            gang_wait_gpu_hours: jobs().map(|(_, m)| m.gang_wait_gpu_us).sum::<f64>() / 3.6e9,
            slo_misses: jobs().filter(|(_, m)| m.slo_slowdown.is_some_and(|x| x > opts.slo_slowdown)).count(),
            deadline_misses: 0,
        }
    };
    let all = scope(None);
    let mut queues = BTreeMap::new();
    for (i, q) in f.queues.iter().enumerate() {
        queues.insert(q.name.clone(), scope(Some(i)));
    }
    let active: Vec<f64> = (0..nq)
        .filter(|&q| tl.deserved_gpu_us[q] > 0.0)
        .map(|q| queues[&f.queues[q].name].share_over_deserved)
        .collect();
    let comm: u128 = f.jobs.iter().map(|j| j.comm_gpu_us as u128).sum();
    let lost: u128 = f.jobs.iter().map(|j| j.lost_gpu_us as u128).sum();
    let held = held_gpu_us(None);
    Summary {
        jobs: all.jobs,
        completed: all.completed,
        ended_otherwise: f.jobs.iter().filter(|j| j.end.is_some() && !j.completed).count(),
        unfinished: all.unfinished,
        jct_s: all.jct_s,
        wait_s: all.wait_s,
        slowdown: all.slowdown,
        makespan_s: all.makespan_s,
        sim_time_s: secs(f.end),
        gpus_total,
        gpu_allocation_rate: rate(held),
        gpu_effective_utilization: rate((held - comm as f64 - lost as f64).max(0.0)),
        fragmentation: if tl.idle_gpu_us > 0.0 { tl.frag_gpu_us / tl.idle_gpu_us } else { 0.0 },
        fragmented_gpus_mean: if f.end > 0 { tl.frag_gpu_us / f.end as f64 } else { 0.0 },
        jain_fairness: jain(&active),
        rho: all.rho,
        preemptions: all.preemptions,
        gpu_hours_lost: all.gpu_hours_lost,
        gang_wait_s: all.gang_wait_s,
        gang_wait_gpu_hours: all.gang_wait_gpu_hours,
        slo_slowdown: opts.slo_slowdown,
        slo_misses: all.slo_misses,
        deadline_misses: 0,
        events: 0,
        sessions: 0,
        queues,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{JobFact, PodFact, QueueFact};
    use lahar_core::resource::Resources;

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
            }],
            pods: vec![
                PodFact { job: 0, node: 0, req: 0, start: 10_000_000, end: 100_000_000 },
                PodFact { job: 0, node: 0, req: 0, start: 40_000_000, end: 100_000_000 },
            ],
            requests: vec![pod],
            shapes: vec![(pod, 2)],
        };
        let s = summarize_facts(&f, &SummaryOptions { slo_slowdown: 1.5 });
        assert_eq!(s.gang_wait_s.map(|d| d.max), Some(30.0));
        assert_eq!(s.gang_wait_gpu_hours, 2.0 * 30.0 / 3600.0);
        assert_eq!(s.preemptions, 1);
        assert_eq!(s.gpu_hours_lost, 40.0 / 3600.0);
        // Held 2×90 + 2×60 = 300 GPU·s of 4×100.
        assert_eq!(s.gpu_allocation_rate, 0.75);
        assert_eq!(s.gpu_effective_utilization, (300.0 - 20.0 - 40.0) / 400.0);
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
