//! The facts metrics are computed from, and the exact time sweep over them.
//!
//! [`Facts`] is a plain copy of what a run recorded (jobs, pod placement intervals,
//! nodes, queues), so the metrics can be tested on hand-made records without the
//! engine. [`sweep`] walks every instant at which something changes (a pod starts or
//! ends, a job is submitted or ends) and integrates, exactly over time, the
//! quantities that are piecewise constant between those instants: fragmentation,
//! each queue's deserved share, and the number of active jobs.

use lahar_core::engine::RunOutput;
use lahar_core::job::JobPhase;
use lahar_core::resource::{GPU, Resources};

/// One queue.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueFact {
    /// Name.
    pub name: String,
    /// Proportion weight.
    pub weight: u32,
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
}

/// One pod placement interval `[start, end)`. Compact (32 bytes): a month-long
/// run holds millions of them.
#[derive(Clone, Debug, PartialEq)]
pub struct PodFact {
    /// Index into [`Facts::jobs`].
    pub job: u32,
    /// Node index.
    pub node: u32,
    /// Its requests: an index into [`Facts::requests`].
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
    /// Queues.
    pub queues: Vec<QueueFact>,
    /// Submitted jobs.
    pub jobs: Vec<JobFact>,
    /// Pod placement intervals.
    pub pods: Vec<PodFact>,
    /// The distinct pod requests [`PodFact::req`] points into.
    pub requests: Vec<Resources>,
    /// Pods of the submitted jobs by request, GPU requests only (each request
    /// once, in order of first appearance, with its count): the fragmentation
    /// metric's target workload.
    pub shapes: Vec<(Resources, u64)>,
}

impl Facts {
    /// Copies the facts out of a run. Jobs never submitted (past the horizon) are left
    /// out; pod records keep pointing at the right jobs.
    pub fn from_output(out: &RunOutput) -> Facts {
        let mut index = vec![usize::MAX; out.world.jobs.len()];
        let mut jobs = Vec::new();
        let mut shapes = Vec::new();
        for (i, j) in out.world.jobs.iter().enumerate() {
            if j.phase == JobPhase::NotSubmitted {
                continue;
            }
            index[i] = jobs.len();
            let s = &j.spec;
            for t in &s.tasks {
                add_shape(&mut shapes, t.requests, t.replicas);
            }
            jobs.push(JobFact {
                queue: s.queue.0,
                gpus: s.total_gpus(),
                submit: s.submit.micros(),
                first_start: j.first_start.map(|t| t.micros()),
                end: j.end.map(|t| t.micros()),
                completed: j.phase == JobPhase::Completed,
                ideal: if s.duration.is_unbounded() { 0 } else { s.duration.micros() },
                preemptions: j.preemptions,
                // 2⁶⁴ GPU·µs is 5 billion GPU-hours: no run comes near it.
                lost_gpu_us: u64::try_from(j.progress.lost_gpu_us).unwrap_or(u64::MAX),
                comm_gpu_us: u64::try_from(j.progress.comm_gpu_us).unwrap_or(u64::MAX),
            });
        }
        // Pods of one task share a request: each distinct request is kept once
        // (looked up, never iterated, so the map's order cannot matter).
        let mut requests: Vec<Resources> = Vec::new();
        let mut request_ids: std::collections::HashMap<Resources, u32> = std::collections::HashMap::new();
        let mut pods = Vec::with_capacity(out.pods.len());
        for p in &out.pods {
            let job = index[p.job.0 as usize];
            if job == usize::MAX {
                continue;
            }
            let req = out.world.pods[p.pod.0 as usize].req;
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
            nodes: out.world.cluster.nodes.iter().map(|n| n.allocatable).collect(),
            queues: out
                .world
                .queues
                .iter()
                .map(|q| QueueFact { name: q.spec.name.clone(), weight: q.spec.weight.max(1) })
                .collect(),
            jobs,
            pods,
            requests,
            shapes,
        }
    }

    /// The requests of a pod interval.
    pub fn req(&self, p: &PodFact) -> &Resources {
        &self.requests[p.req as usize]
    }

    /// Cluster GPUs (milli).
    pub fn gpus_total_milli(&self) -> i64 {
        self.nodes.iter().map(|n| n.get(GPU)).sum()
    }

    /// The target workload of the fragmentation metric: every distinct pod shape that
    /// requests GPUs, with its probability (its share of all GPU pods of the run).
    pub fn target_workload(&self) -> Vec<(Resources, f64)> {
        let total: u64 = self.shapes.iter().map(|s| s.1).sum();
        self.shapes.iter().map(|&(r, n)| (r, n as f64 / total as f64)).collect()
    }
}

/// Counts `n` pods of request `req` into `shapes` (GPU shapes only, first seen
/// first).
pub fn add_shape(shapes: &mut Vec<(Resources, u64)>, req: Resources, n: u32) {
    if req.get(GPU) <= 0 || n == 0 {
        return;
    }
    match shapes.iter_mut().find(|(r, _)| *r == req) {
        Some(e) => e.1 += n as u64,
        None => shapes.push((req, n as u64)),
    }
}

/// Time integrals (over `[0, end)`) and per-sample values from the sweep.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// ∫ fragmented GPUs dt (GPU·µs).
    pub frag_gpu_us: f64,
    /// ∫ idle GPUs dt (GPU·µs).
    pub idle_gpu_us: f64,
    /// Per queue: ∫ deserved GPUs dt (GPU·µs).
    pub deserved_gpu_us: Vec<f64>,
    /// Per queue: ∫ allocated GPUs dt (GPU·µs).
    pub allocated_gpu_us: Vec<f64>,
    /// Fragmentation rate (fragmented / idle GPUs, 0 when none is idle) at each
    /// requested sample instant.
    pub frag_at: Vec<f64>,
    /// Deserved GPUs per queue at each requested sample instant.
    pub deserved_at: Vec<Vec<f64>>,
    /// Breakpoints of the active-job count: `(t, ∫₀ᵗ N, N just after t)`.
    active: Vec<(u64, f64, u32)>,
}

impl Timeline {
    /// ∫ N dt over `[a, b)`, N being the number of submitted, not yet ended jobs.
    pub fn active_integral(&self, a: u64, b: u64) -> f64 {
        self.active_upto(b) - self.active_upto(a)
    }

    fn active_upto(&self, x: u64) -> f64 {
        let i = self.active.partition_point(|&(t, _, _)| t <= x);
        if i == 0 {
            return 0.0;
        }
        let (t, cum, n) = self.active[i - 1];
        cum + n as f64 * (x - t) as f64
    }
}

/// Kinds of change, in the order they apply at one instant.
const POD_END: usize = 0;
const JOB_END: usize = 1;
const POD_START: usize = 2;
const JOB_SUBMIT: usize = 3;

/// The run's changes in order — time, then kind, then index — merged from four
/// sorted lists of indices (one per kind): four bytes per change, not a sorted
/// list of all of them.
struct Changes<'a> {
    f: &'a Facts,
    /// Per kind, the indices of its pods or jobs in order of the change's time.
    lists: [Vec<u32>; 4],
    /// Per kind, the next entry.
    at: [usize; 4],
}

impl<'a> Changes<'a> {
    fn new(f: &'a Facts) -> Changes<'a> {
        let mut c = Changes { f, lists: Default::default(), at: [0; 4] };
        let pods = || (0..f.pods.len() as u32).filter(|&i| f.pods[i as usize].start < f.pods[i as usize].end);
        let jobs = || 0..f.jobs.len() as u32;
        c.lists[POD_END] = pods().collect();
        c.lists[POD_START] = pods().collect();
        c.lists[JOB_END] = jobs().filter(|&i| f.jobs[i as usize].end.is_some()).collect();
        c.lists[JOB_SUBMIT] = jobs().collect();
        for kind in 0..4 {
            let mut v = std::mem::take(&mut c.lists[kind]);
            v.sort_unstable_by_key(|&i| (c.time(kind, i as usize), i));
            c.lists[kind] = v;
        }
        c
    }

    /// The time of a change.
    fn time(&self, kind: usize, i: usize) -> u64 {
        match kind {
            POD_END => self.f.pods[i].end,
            JOB_END => self.f.jobs[i].end.unwrap_or(0),
            POD_START => self.f.pods[i].start,
            _ => self.f.jobs[i].submit,
        }
    }

    /// The next change: (time, kind, index of its pod or job).
    fn peek(&self) -> Option<(u64, usize, usize)> {
        (0..4)
            .filter_map(|kind| {
                let i = *self.lists[kind].get(self.at[kind])? as usize;
                Some((self.time(kind, i), kind, i))
            })
            .min()
    }

    /// Moves past the next change of `kind`.
    fn advance(&mut self, kind: usize) {
        self.at[kind] += 1;
    }
}

/// Fragmented GPUs of one node with `idle` resources, in expectation over the
/// target workload: its idle GPUs count when a pod of the shape cannot be placed.
fn node_frag(idle: &Resources, target: &[(Resources, f64)]) -> f64 {
    let gpus = idle.get(GPU).max(0) as f64 / 1000.0;
    if gpus == 0.0 {
        return 0.0;
    }
    target.iter().filter(|(req, _)| !req.fits_in(idle)).map(|(_, p)| p * gpus).sum()
}

/// Sweeps the run once; `samples` (ascending, µs) are the instants at which the
/// per-sample values are wanted (the state just after every change at that instant).
pub fn sweep(f: &Facts, samples: &[u64]) -> Timeline {
    let end = f.end;
    let nq = f.queues.len();
    let total_gpus = f.gpus_total_milli() as f64 / 1000.0;
    let target = f.target_workload();
    let mut changes = Changes::new(f);

    let mut idle: Vec<Resources> = f.nodes.clone();
    let mut frag: Vec<f64> = idle.iter().map(|r| node_frag(r, &target)).collect();
    let mut frag_sum: f64 = frag.iter().sum();
    let mut idle_gpus: f64 = total_gpus;
    let mut active_q = vec![0u32; nq];
    let mut alloc_q = vec![0f64; nq];
    let mut n_active: u32 = 0;
    let mut tl = Timeline {
        deserved_gpu_us: vec![0.0; nq],
        allocated_gpu_us: vec![0.0; nq],
        active: vec![(0, 0.0, 0)],
        ..Timeline::default()
    };
    let deserved = |active_q: &[u32]| -> Vec<f64> {
        let w: u64 = f.queues.iter().zip(active_q).filter(|(_, a)| **a > 0).map(|(q, _)| q.weight as u64).sum();
        f.queues
            .iter()
            .zip(active_q)
            .map(|(q, &a)| if a > 0 && w > 0 { total_gpus * q.weight as f64 / w as f64 } else { 0.0 })
            .collect()
    };
    let mut cur_deserved = vec![0.0; nq];
    let mut s = 0;
    // Samples before the first change see the empty cluster.
    let mut t = 0u64;
    loop {
        // Apply every change at instant `t`.
        while let Some((_, kind, i)) = changes.peek().filter(|c| c.0 <= t) {
            changes.advance(kind);
            match kind {
                POD_START | POD_END => {
                    let p = &f.pods[i];
                    let req = f.req(p);
                    let start = kind == POD_START;
                    let n = p.node as usize;
                    if start {
                        idle[n] -= *req;
                    } else {
                        idle[n] += *req;
                    }
                    let g = req.get(GPU) as f64 / 1000.0;
                    idle_gpus += if start { -g } else { g };
                    let q = f.jobs[p.job as usize].queue as usize;
                    alloc_q[q] += if start { g } else { -g };
                    let nf = node_frag(&idle[n], &target);
                    frag_sum += nf - frag[n];
                    frag[n] = nf;
                }
                _ => {
                    let q = f.jobs[i].queue as usize;
                    if kind == JOB_SUBMIT {
                        active_q[q] += 1;
                        n_active += 1;
                    } else {
                        active_q[q] -= 1;
                        n_active -= 1;
                    }
                    cur_deserved = deserved(&active_q);
                }
            }
        }
        // A breakpoint only where the count changed: the integral is linear
        // between them (and a run with millions of pod changes keeps only its
        // job changes).
        let last = tl.active.last().copied().unwrap_or((0, 0.0, 0));
        if n_active != last.2 {
            let cum = last.1 + last.2 as f64 * (t - last.0) as f64;
            tl.active.push((t, cum, n_active));
        }
        let next = changes.peek().map(|c| c.0);
        while s < samples.len() && next.is_none_or(|n| samples[s] < n) {
            tl.frag_at.push(if idle_gpus > 1e-9 { (frag_sum / idle_gpus).clamp(0.0, 1.0) } else { 0.0 });
            tl.deserved_at.push(cur_deserved.clone());
            s += 1;
        }
        if t < end {
            let dt = (next.unwrap_or(end).min(end) - t) as f64;
            tl.frag_gpu_us += frag_sum.max(0.0) * dt;
            tl.idle_gpu_us += idle_gpus.max(0.0) * dt;
            for q in 0..nq {
                tl.deserved_gpu_us[q] += cur_deserved[q] * dt;
                tl.allocated_gpu_us[q] += alloc_q[q] * dt;
            }
        }
        match next {
            Some(n) => t = n,
            None => break,
        }
    }
    tl
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One 8-GPU node, a 4-GPU target shape. Job `a` (0–100) holds 6 GPUs over
    /// [10, 50); job `b` (from 50, unfinished) takes 2 GPUs at the instant `a`'s
    /// pod leaves; a zero-length interval counts for nothing.
    #[test]
    fn sweep_integrates_exactly_and_samples_after_each_instant() {
        let gpus = |n: i64| Resources::new(0, 0, n * 1000, 1);
        let job = |submit, end| JobFact {
            queue: 0,
            gpus: 0,
            submit,
            first_start: None,
            end,
            completed: end.is_some(),
            ideal: 0,
            preemptions: 0,
            lost_gpu_us: 0,
            comm_gpu_us: 0,
        };
        let pod = |job, req, start, end| PodFact { job, node: 0, req, start, end };
        let f = Facts {
            end: 100,
            nodes: vec![Resources::new(8000, 1 << 30, 8000, 110)],
            queues: vec![QueueFact { name: "q".into(), weight: 1 }],
            jobs: vec![job(0, Some(100)), job(50, None)],
            pods: vec![pod(0, 0, 10, 50), pod(1, 1, 50, 100), pod(1, 2, 30, 30)],
            requests: vec![gpus(6), gpus(2), gpus(8)],
            shapes: vec![(gpus(4), 1)],
        };
        let tl = sweep(&f, &[0, 10, 50, 99]);
        // Idle 8 over [0, 10), 2 over [10, 50), 6 over [50, 100); only the 2 idle
        // GPUs are fragmented (a 4-GPU pod fits in 6 and in 8).
        assert_eq!(tl.idle_gpu_us, 8.0 * 10.0 + 2.0 * 40.0 + 6.0 * 50.0);
        assert_eq!(tl.frag_gpu_us, 2.0 * 40.0);
        assert_eq!(tl.frag_at, vec![0.0, 1.0, 0.0, 0.0]);
        assert_eq!(tl.allocated_gpu_us, vec![6.0 * 40.0 + 2.0 * 50.0]);
        assert_eq!(tl.deserved_at, vec![vec![8.0]; 4]);
        // One job active over [0, 50), two over [50, 100).
        assert_eq!(tl.active_integral(0, 100), 150.0);
        assert_eq!(tl.active_integral(25, 75), 75.0);
        assert_eq!(tl.active_integral(60, 60), 0.0);
    }
}
