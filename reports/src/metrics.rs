//! Per-job rows and the headline metrics of a run.

use crate::accumulate::RunMetrics;
pub use crate::labels::{job_label, pod_label, push_job_label, push_pod_label};
pub use crate::summary::{Dist, GpuTime, QueueSummary, Summary, SummaryOptions, jain};
use crate::timeline::Facts;
use lahar_core::engine::RunOutput;
use lahar_core::model::job::JobPhase;
use lahar_core::util::time::{MICROS_PER_SEC, SimTime};
use lahar_core::world::{Job, World};

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
    /// How long after its submission it may be active (µs), if it has a deadline.
    pub deadline: Option<u64>,
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
    let from = j.waits_from().micros();
    let start = j.first_start.map(SimTime::micros);
    let jend = j.end.map(SimTime::micros);
    JobRow {
        job: job_label(s),
        queue: world.queues[s.queue].spec.name.clone(),
        priority: s.priority,
        gpu_milli: s.total_gpu_milli(),
        submit,
        start,
        end: jend,
        state: j.phase_name(),
        jct: jend.map(|e| e - submit),
        wait: match (start, jend) {
            (Some(s), _) => Some(s - from),
            // Held at zero replicas at the end, it was not waiting.
            (None, None) if j.asks_for_none() => None,
            (None, None) => cut_short_at.map(|end| end.max(from) - from),
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
        deadline: s.deadline.map(|d| d.micros()),
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
    s.services = crate::services::summarize(&out.stats.services);
    s.serving = crate::services::serving(&out.stats.services, &out.stats.serving);
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
    use lahar_core::model::resource::Resources;
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
                waits_from: 0,
                first_start: Some(40_000_000),
                end: Some(100_000_000),
                completed: true,
                ideal: 50_000_000,
                preemptions: 1,
                lost_gpu_us: 40_000_000,
                comm_gpu_us: 20_000_000,
                // Progressing from its gang's start at 40 s: 4 GPUs × 60 s.
                running_gpu_us: 240_000_000,
                deadline: None,
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
