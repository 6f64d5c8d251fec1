//! The run's metrics, accumulated change by change as the run makes them.
//!
//! [`RunMetrics`] is the one implementation of every time-integrated and per-job
//! metric: a streaming run feeds it as pods start and end and jobs arrive and end
//! (see [`crate::stream`]), and [`crate::metrics::summarize_facts`] replays a finished run's
//! [`Facts`] into it. Its state is integers (milli-GPUs, microseconds, pod counts),
//! so the order of the changes within one instant cannot change a value; the
//! floating-point sums it keeps are taken once per instant, in time order.
//!
//! Memory: one small record per job alive, the run's per-queue sums, and one number
//! per job for each distribution (exact percentiles need them).

use crate::summary::{Dist, GpuTime, QueueSummary, Summary, SummaryOptions, jain};
use crate::timeline::{Facts, JobFact, QueueFact};
use lahar_core::frag::{Free, Target};
use lahar_core::model::resource::{CPU, GPU, Resources};
use lahar_core::util::time::MICROS_PER_SEC;
use lahar_core::world::{DEVICE_MILLI, DeviceHold};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// What is known about a job while it is alive (submitted, not ended).
#[derive(Clone, Copy, Debug)]
struct Live {
    queue: u32,
    /// ∫₀^submit N dt (job·µs), N the number of active jobs.
    active_at_submit: u128,
    /// Its first pod start (µs).
    first_pod: Option<u64>,
    /// Milli-GPU·µs held by its pods before its gang was first complete.
    gang_wait_milli_us: u128,
}

/// Per-queue sums (index `nq` of [`RunMetrics::scopes`] is the whole run).
#[derive(Clone, Debug, Default)]
struct Scope {
    jobs: usize,
    completed: usize,
    ended_otherwise: usize,
    unfinished: usize,
    first_submit: Option<u64>,
    last_end: Option<u64>,
    preemptions: u64,
    lost_gpu_us: u128,
    comm_gpu_us: u128,
    running_gpu_us: u128,
    gang_wait_milli_us: u128,
    slo_misses: usize,
    deadline_misses: usize,
    /// One value per job, in seconds or as a ratio: JCT, wait, slowdown, ρ, gang wait.
    jct: Vec<f64>,
    wait: Vec<f64>,
    slowdown: Vec<f64>,
    rho: Vec<f64>,
    gang_wait: Vec<f64>,
}

/// The metrics of a run, kept up to date as it goes.
#[derive(Clone, Debug)]
pub struct RunMetrics {
    queues: Vec<QueueFact>,
    total_milli: i64,
    /// The fragmentation measure's target workload.
    target: Target,
    slo_slowdown: f64,
    /// The instant the state below holds for.
    t: u64,
    /// Per node: free millicores, GPU model, and where its devices start in `devices`.
    cpu_free: Vec<i64>,
    models: Vec<Option<u8>>,
    dev_start: Vec<u32>,
    /// Free milli-GPUs of every device, node after node.
    devices: Vec<i64>,
    /// Per node: its fragmented milli-GPUs, weighted by the target's counts (an
    /// exact integer; over `target.weight()` × 1000 it is GPUs).
    frag: Vec<i128>,
    frag_sum: i128,
    idle_milli: i64,
    /// Per node: its GPU devices out of service (bit d: device d).
    lost: Vec<u64>,
    /// Σ free milli-GPUs of the devices out of service: idle, but of no use to
    /// anyone, so neither idle nor fragmented for the measure. Kept linear in the
    /// devices' free amounts, so the order of changes within an instant does not
    /// matter.
    lost_free: i64,
    active_q: Vec<u32>,
    n_active: u32,
    alloc_q: Vec<i64>,
    deserved: Vec<f64>,
    /// The cluster's millicores, those pods hold now, and ∫ held dt (millicore·µs).
    cpu_total: i64,
    cpu_held: i64,
    cpu_int: i128,
    /// ∫ frag_sum dt, ∫ idle dt (milli-GPU·µs), ∫ N dt (job·µs).
    frag_int: i128,
    idle_int: i128,
    active_int: u128,
    /// Per queue: ∫ deserved GPUs dt (GPU·µs), ∫ allocated milli-GPUs dt.
    deserved_int: Vec<f64>,
    alloc_int: Vec<i128>,
    live: FxHashMap<u32, Live>,
    scopes: Vec<Scope>,
}

impl RunMetrics {
    /// Metrics of a run on `nodes` (allocatable, with the GPU model index of each
    /// in the measure's [`ModelTable`](lahar_core::frag::ModelTable)) with
    /// `queues`; `target` is the fragmentation measure's workload (see
    /// [`crate::timeline::workload`]). A node's GPUs are whole devices of 1000
    /// milli-GPUs, as the world holds them.
    pub fn new(
        nodes: &[Resources],
        models: Vec<Option<u8>>,
        queues: Vec<QueueFact>,
        target: Target,
        opts: &SummaryOptions,
    ) -> RunMetrics {
        let nq = queues.len();
        let total_milli = nodes.iter().map(|n| n.get(GPU)).sum();
        let mut dev_start = Vec::with_capacity(nodes.len() + 1);
        let mut devices = Vec::new();
        for n in nodes {
            dev_start.push(devices.len() as u32);
            let k = (n.get(GPU).max(0) / DEVICE_MILLI) as usize;
            devices.extend(std::iter::repeat_n(DEVICE_MILLI, k));
        }
        dev_start.push(devices.len() as u32);
        let mut m = RunMetrics {
            total_milli,
            target,
            slo_slowdown: opts.slo_slowdown,
            t: 0,
            cpu_free: nodes.iter().map(|n| n.get(CPU)).collect(),
            cpu_total: nodes.iter().map(|n| n.get(CPU)).sum(),
            cpu_held: 0,
            cpu_int: 0,
            models,
            dev_start,
            devices,
            frag: Vec::new(),
            frag_sum: 0,
            idle_milli: total_milli,
            lost: vec![0; nodes.len()],
            lost_free: 0,
            active_q: vec![0; nq],
            n_active: 0,
            alloc_q: vec![0; nq],
            deserved: vec![0.0; nq],
            frag_int: 0,
            idle_int: 0,
            active_int: 0,
            deserved_int: vec![0.0; nq],
            alloc_int: vec![0; nq],
            live: FxHashMap::default(),
            scopes: vec![Scope::default(); nq + 1],
            queues,
        };
        m.frag = (0..nodes.len()).map(|n| m.node_frag(n)).collect();
        m.frag_sum = m.frag.iter().sum();
        m
    }

    /// The metrics of a finished run's facts (the batch form of a streaming run).
    /// `at_sample` is called at each of `samples` (ascending, µs) with the state
    /// just after every change at that instant.
    pub fn replay(
        f: &Facts,
        samples: &[u64],
        opts: &SummaryOptions,
        mut at_sample: impl FnMut(&RunMetrics),
    ) -> RunMetrics {
        let mut m = RunMetrics::new(&f.nodes, f.node_models.clone(), f.queues.clone(), f.target.clone(), opts);
        // Changes in time order; within an instant in the order of a job's life
        // (the state is integers: the order within an instant changes no value).
        const SUBMIT: u8 = 0;
        const START: u8 = 1;
        const END: u8 = 2;
        const JOB_END: u8 = 3;
        const SERVICE: u8 = 4;
        let mut changes: Vec<(u64, u8, u32)> = Vec::with_capacity(2 * f.jobs.len() + 2 * f.pods.len());
        for (i, j) in f.jobs.iter().enumerate() {
            changes.push((j.submit, SUBMIT, i as u32));
            if let Some(e) = j.end {
                changes.push((e, JOB_END, i as u32));
            }
        }
        for (i, p) in f.pods.iter().enumerate() {
            changes.push((p.start, START, i as u32));
            changes.push((p.end, END, i as u32));
        }
        for (i, &(t, _, _)) in f.service.iter().enumerate() {
            changes.push((t, SERVICE, i as u32));
        }
        changes.sort_unstable();
        let mut samples = samples.iter().copied().peekable();
        for (t, kind, i) in changes {
            // Samples before this instant see the state after the earlier ones.
            while samples.next_if(|&s| s < t).is_some() {
                at_sample(&m);
            }
            let i = i as usize;
            match kind {
                SUBMIT => m.job_submitted(i as u32, f.jobs[i].queue, t),
                START => {
                    let p = &f.pods[i];
                    m.pod_started(p.job, p.node, f.req(p), f.hold(p), t);
                }
                END => {
                    let p = &f.pods[i];
                    m.pod_ended(p.job, p.node, f.req(p), f.hold(p), p.start, t, f.jobs[p.job as usize].first_start);
                }
                SERVICE => {
                    let (t, node, mask) = f.service[i];
                    m.node_service(node, mask, t);
                }
                _ => m.job_ended(i as u32, &f.jobs[i]),
            }
        }
        for _ in samples {
            at_sample(&m);
        }
        m
    }

    /// Node `n`'s fragmented milli-GPUs over the target workload, each shape's
    /// weighted by its count ([`Target::node`]).
    fn node_frag(&self, n: usize) -> i128 {
        let devs = &self.devices[self.dev_start[n] as usize..self.dev_start[n + 1] as usize];
        let mut free = [0u16; 64];
        let lost = self.lost[n];
        for (i, (f, &d)) in free.iter_mut().zip(devs).enumerate() {
            *f = if lost & (1 << i) != 0 { 0 } else { d.clamp(0, DEVICE_MILLI) as u16 };
        }
        let view = Free { cpu: self.cpu_free[n], model: self.models[n], gpus: &free[..devs.len().min(64)] };
        i128::from(self.target.node(view))
    }

    /// Node `node`'s GPU devices out of service are `mask` from `t` on (a
    /// failure or repair, the node leaving or joining): their free GPUs are no
    /// longer idle, nor fragmented.
    pub fn node_service(&mut self, node: u32, mask: u64, t: u64) {
        self.advance(t);
        let n = node as usize;
        let devs = &self.devices[self.dev_start[n] as usize..self.dev_start[n + 1] as usize];
        let free_of = |m: u64| -> i64 {
            devs.iter().take(64).enumerate().filter(|(d, _)| m & (1 << d) != 0).map(|(_, &f)| f).sum()
        };
        self.lost_free += free_of(mask) - free_of(self.lost[n]);
        self.lost[n] = mask;
        let nf = self.node_frag(n);
        self.frag_sum += nf - self.frag[n];
        self.frag[n] = nf;
    }

    /// Idle milli-GPUs on devices in service.
    fn usable_idle(&self) -> i64 {
        self.idle_milli - self.lost_free
    }

    /// Integrates the state over `[self.t, t)` and moves to `t` (no change happens
    /// in between).
    pub fn advance_to(&mut self, t: u64) {
        self.advance(t);
    }

    fn advance(&mut self, t: u64) {
        if t <= self.t {
            return;
        }
        let dt = t - self.t;
        self.frag_int += self.frag_sum.max(0) * dt as i128;
        self.idle_int += self.usable_idle().max(0) as i128 * dt as i128;
        self.cpu_int += self.cpu_held.max(0) as i128 * dt as i128;
        self.active_int += self.n_active as u128 * dt as u128;
        for q in 0..self.queues.len() {
            self.deserved_int[q] += self.deserved[q] * dt as f64;
            self.alloc_int[q] += self.alloc_q[q] as i128 * dt as i128;
        }
        self.t = t;
    }

    /// Each queue's deserved GPUs: the cluster's GPUs split by weight among the
    /// queues with active jobs (proportion's first round).
    fn update_deserved(&mut self) {
        let total = self.total_milli as f64 / 1000.0;
        let w: u64 =
            self.queues.iter().zip(&self.active_q).filter(|(_, a)| **a > 0).map(|(q, _)| q.weight as u64).sum();
        for (q, d) in self.deserved.iter_mut().enumerate() {
            let weight = self.queues[q].weight;
            *d = if self.active_q[q] > 0 && w > 0 { total * weight as f64 / w as f64 } else { 0.0 };
        }
    }

    /// Job `key` of `queue` is submitted at `t`.
    pub fn job_submitted(&mut self, key: u32, queue: u32, t: u64) {
        self.advance(t);
        self.active_q[queue as usize] += 1;
        self.n_active += 1;
        self.update_deserved();
        self.live
            .insert(key, Live { queue, active_at_submit: self.active_int, first_pod: None, gang_wait_milli_us: 0 });
        for s in [queue as usize, self.queues.len()] {
            let sc = &mut self.scopes[s];
            sc.jobs += 1;
            sc.first_submit = Some(sc.first_submit.map_or(t, |x| x.min(t)));
        }
    }

    /// Applies `req` on devices `hold` arriving on (`sign` 1) or leaving (−1)
    /// `node`: whole devices lose 1000 milli-GPUs each, the share device the
    /// request's remainder, as [`lahar_core::world::GpuDevices`] charges them.
    fn hold(&mut self, queue: u32, node: u32, req: &Resources, hold: DeviceHold, sign: i64) {
        let n = node as usize;
        self.cpu_free[n] -= req.get(CPU) * sign;
        self.cpu_held += req.get(CPU) * sign;
        let g = req.get(GPU) * sign;
        self.idle_milli -= g;
        self.alloc_q[queue as usize] += g;
        let devs = &mut self.devices[self.dev_start[n] as usize..self.dev_start[n + 1] as usize];
        let lost = self.lost[n];
        for (d, free) in devs.iter_mut().enumerate().take(64) {
            if hold.whole & (1 << d) != 0 {
                *free -= DEVICE_MILLI * sign;
                if lost & (1 << d) != 0 {
                    self.lost_free -= DEVICE_MILLI * sign;
                }
            }
        }
        if let Some(d) = hold.share
            && let Some(free) = devs.get_mut(usize::from(d))
        {
            *free -= req.get(GPU).rem_euclid(DEVICE_MILLI) * sign;
            if d < 64 && lost & (1 << d) != 0 {
                self.lost_free -= req.get(GPU).rem_euclid(DEVICE_MILLI) * sign;
            }
        }
        let nf = self.node_frag(n);
        self.frag_sum += nf - self.frag[n];
        self.frag[n] = nf;
    }

    /// A pod of job `key` starts holding `req` (GPUs on devices `devices`) on
    /// `node` at `t`.
    pub fn pod_started(&mut self, key: u32, node: u32, req: &Resources, devices: DeviceHold, t: u64) {
        self.advance(t);
        let Some(live) = self.live.get_mut(&key) else { return };
        live.first_pod = Some(live.first_pod.map_or(t, |x| x.min(t)));
        let queue = live.queue;
        self.hold(queue, node, req, devices, 1);
    }

    /// A pod of job `key` that started at `start` stops holding `req` (GPUs on
    /// devices `devices`) on `node` at `end`; `first_start` is when its job's gang
    /// was first complete, if it was yet.
    #[allow(clippy::too_many_arguments)]
    pub fn pod_ended(
        &mut self,
        key: u32,
        node: u32,
        req: &Resources,
        devices: DeviceHold,
        start: u64,
        end: u64,
        first_start: Option<u64>,
    ) {
        self.advance(end);
        let Some(live) = self.live.get_mut(&key) else { return };
        // Held before the gang was complete (a later gang start is after `end`).
        let until = first_start.unwrap_or(end).min(end);
        if start < until {
            live.gang_wait_milli_us += req.get(GPU).max(0) as u128 * (until - start) as u128;
        }
        let queue = live.queue;
        self.hold(queue, node, req, devices, -1);
    }

    /// Job `key` ended (`f.end` is set) with the facts `f`.
    pub fn job_ended(&mut self, key: u32, f: &JobFact) {
        let t = f.end.unwrap_or(self.t);
        self.advance(t);
        self.close(key, f, t);
        self.active_q[f.queue as usize] -= 1;
        self.n_active -= 1;
        self.update_deserved();
    }

    /// Files job `key`'s values; `at` is its end, or the end of the run.
    fn close(&mut self, key: u32, f: &JobFact, at: u64) {
        let Some(live) = self.live.remove(&key) else { return };
        let secs = |us: u64| us as f64 / MICROS_PER_SEC as f64;
        let total = self.total_milli as f64 / 1000.0;
        let rho = match f.end {
            Some(e) if f.completed && f.ideal > 0 && e > f.submit && total > 0.0 => {
                let n = ((self.active_int - live.active_at_submit) as f64 / (e - f.submit) as f64).max(1.0);
                let isolated = f.ideal as f64 * (f.gpus as f64 * n / total).max(1.0);
                Some((e - f.submit) as f64 / isolated)
            }
            _ => None,
        };
        // Ended with a deadline, and not Completed within it (a job still active
        // has not missed it: lahar fails every job at its deadline).
        let missed = f.deadline.is_some_and(|d| f.end.is_some_and(|e| !f.completed || e - f.submit > d));
        let slo = (f.ideal > 0).then(|| (at.max(f.submit) - f.submit) as f64 / f.ideal as f64);
        let gang_wait = match (f.first_start, live.first_pod) {
            (Some(s), Some(p)) => Some(s.saturating_sub(p)),
            (Some(_), None) => Some(0),
            _ => None,
        };
        for s in [f.queue as usize, self.queues.len()] {
            let sc = &mut self.scopes[s];
            match f.end {
                Some(e) => {
                    sc.last_end = Some(sc.last_end.map_or(e, |x| x.max(e)));
                    if f.completed {
                        sc.completed += 1;
                        sc.jct.push(secs(e - f.submit));
                        if f.ideal > 0 {
                            sc.slowdown.push((e - f.submit) as f64 / f.ideal as f64);
                        }
                    } else {
                        sc.ended_otherwise += 1;
                    }
                }
                None => sc.unfinished += 1,
            }
            if let Some(st) = f.first_start {
                sc.wait.push(secs(st - f.waits_from));
            }
            if let Some(r) = rho {
                sc.rho.push(r);
            }
            if let Some(g) = gang_wait {
                sc.gang_wait.push(secs(g));
            }
            sc.preemptions += f.preemptions as u64;
            sc.lost_gpu_us += f.lost_gpu_us as u128;
            sc.comm_gpu_us += f.comm_gpu_us as u128;
            sc.running_gpu_us += f.running_gpu_us as u128;
            sc.gang_wait_milli_us += live.gang_wait_milli_us;
            sc.slo_misses += usize::from(slo.is_some_and(|x| x > self.slo_slowdown));
            sc.deadline_misses += usize::from(missed);
        }
    }

    /// Fragmentation rate now: fragmented / idle GPUs (0 when none is idle).
    pub fn frag_rate(&self) -> f64 {
        if self.usable_idle() <= 0 || self.target.weight() == 0 {
            return 0.0;
        }
        (self.frag_sum as f64 / (self.target.weight() as f64 * self.usable_idle() as f64)).clamp(0.0, 1.0)
    }

    /// Fragmented GPUs now.
    pub fn frag_gpus(&self) -> f64 {
        if self.target.weight() == 0 { 0.0 } else { self.frag_sum as f64 / (1000.0 * self.target.weight() as f64) }
    }

    /// Each queue's deserved GPUs now.
    pub fn deserved(&self) -> &[f64] {
        &self.deserved
    }

    /// ∫ fragmented GPUs dt (GPU·µs) so far.
    pub fn frag_gpu_us(&self) -> f64 {
        if self.target.weight() == 0 { 0.0 } else { self.frag_int as f64 / (1000.0 * self.target.weight() as f64) }
    }

    /// ∫ idle GPUs dt (GPU·µs) so far.
    pub fn idle_gpu_us(&self) -> f64 {
        self.idle_int as f64 / 1000.0
    }

    /// Per queue: ∫ allocated GPUs dt (GPU·µs) so far.
    pub fn allocated_gpu_us(&self) -> Vec<f64> {
        self.alloc_int.iter().map(|&m| m as f64 / 1000.0).collect()
    }

    /// Per queue: ∫ deserved GPUs dt (GPU·µs) so far.
    pub fn deserved_gpu_us(&self) -> &[f64] {
        &self.deserved_int
    }

    /// ∫ active jobs dt (job·µs) so far.
    pub fn active_job_us(&self) -> u128 {
        self.active_int
    }

    /// Ends the run at `end` with the jobs still alive (`unfinished`, by key, with
    /// their facts) and returns the summary (`events` and `sessions` left 0).
    pub fn finish<'a>(mut self, end: u64, unfinished: impl IntoIterator<Item = (u32, &'a JobFact)>) -> Summary {
        self.advance(end);
        for (key, f) in unfinished {
            self.close(key, f, end);
        }
        self.summary(end)
    }

    fn summary(mut self, end: u64) -> Summary {
        let nq = self.queues.len();
        let (ended_otherwise, comm, lost, running) = {
            let all = &self.scopes[nq];
            (all.ended_otherwise, all.comm_gpu_us, all.lost_gpu_us, all.running_gpu_us)
        };
        let gpus_total = self.total_milli as f64 / 1000.0;
        let denom = gpus_total * end as f64;
        let rate = |x: f64| if denom > 0.0 { x / denom } else { 0.0 };
        let secs = |us: u64| us as f64 / MICROS_PER_SEC as f64;
        let held_all: i128 = self.alloc_int.iter().sum();
        let mut scope = |s: usize| -> QueueSummary {
            let q = (s < nq).then_some(s);
            let sc = std::mem::take(&mut self.scopes[s]);
            let held = match q {
                Some(q) => self.alloc_int[q],
                None => held_all,
            } as f64
                / 1000.0;
            let (share, deserved) = match q {
                Some(q) => (rate(held), rate(self.deserved_int[q])),
                None => (rate(held), 1.0),
            };
            QueueSummary {
                weight: q.map_or(0, |q| self.queues[q].weight),
                jobs: sc.jobs,
                completed: sc.completed,
                unfinished: sc.unfinished,
                jct_s: Dist::of(sc.jct),
                wait_s: Dist::of(sc.wait),
                slowdown: Dist::of(sc.slowdown),
                makespan_s: sc.last_end.map(|e| secs(e.saturating_sub(sc.first_submit.unwrap_or(0)))),
                gpu_hours: held / 3.6e9,
                gpu_hours_stalled: (held - sc.running_gpu_us as f64).max(0.0) / 3.6e9,
                gpu_allocation_rate: share,
                deserved_share: deserved,
                share_over_deserved: if deserved > 0.0 { share / deserved } else { 0.0 },
                rho: Dist::of(sc.rho),
                preemptions: sc.preemptions,
                gpu_hours_lost: sc.lost_gpu_us as f64 / 3.6e9,
                gang_wait_s: Dist::of(sc.gang_wait),
                gang_wait_gpu_hours: sc.gang_wait_milli_us as f64 / 1000.0 / 3.6e9,
                slo_misses: sc.slo_misses,
                deadline_misses: sc.deadline_misses,
            }
        };
        let all = scope(nq);
        let mut queues = BTreeMap::new();
        for i in 0..nq {
            let name = self.queues[i].name.clone();
            queues.insert(name, scope(i));
        }
        let active: Vec<f64> = (0..nq)
            .filter(|&q| self.deserved_int[q] > 0.0)
            .map(|q| queues[&self.queues[q].name].share_over_deserved)
            .collect();
        let held = held_all as f64 / 1000.0;
        let gpu_time = GpuTime::of(held, running as f64, comm as f64, lost as f64, gpus_total * end as f64);
        let idle = self.idle_gpu_us();
        let frag = self.frag_gpu_us();
        Summary {
            jobs: all.jobs,
            completed: all.completed,
            ended_otherwise,
            unfinished: all.unfinished,
            jct_s: all.jct_s,
            wait_s: all.wait_s,
            slowdown: all.slowdown,
            makespan_s: all.makespan_s,
            sim_time_s: secs(end),
            gpus_total,
            cpus_total: self.cpu_total as f64 / 1000.0,
            gpu_allocation_rate: rate(held),
            gpu_effective_utilization: gpu_time.useful,
            cpu_allocation_rate: match self.cpu_total as f64 * end as f64 {
                d if d > 0.0 => self.cpu_int as f64 / d,
                _ => 0.0,
            },
            gpu_time,
            fragmentation: if idle > 0.0 { frag / idle } else { 0.0 },
            fragmented_gpus_mean: if end > 0 { frag / end as f64 } else { 0.0 },
            jain_fairness: jain(&active),
            rho: all.rho,
            preemptions: all.preemptions,
            gpu_hours_lost: all.gpu_hours_lost,
            gang_wait_s: all.gang_wait_s,
            gang_wait_gpu_hours: all.gang_wait_gpu_hours,
            slo_slowdown: self.slo_slowdown,
            slo_misses: all.slo_misses,
            deadline_misses: all.deadline_misses,
            events: 0,
            sessions: 0,
            queues,
            faults: None,
            services: Vec::new(),
            serving: None,
        }
    }
}

#[cfg(test)]
mod timeline_tests {
    //! [`RunMetrics`] replaying a finished run's facts: exact integrals and
    //! per-sample values.
    use super::*;
    use crate::timeline::PodFact;
    use lahar_core::frag::Target;
    use lahar_core::model::resource::Resources;
    use lahar_core::world::DeviceHold;

    /// Time integrals (over `[0, end)`) and per-sample values of a run.
    #[derive(Clone, Debug, Default, PartialEq)]
    struct Timeline {
        /// ∫ fragmented GPUs dt (GPU·µs).
        pub frag_gpu_us: f64,
        /// ∫ idle GPUs dt (GPU·µs).
        pub idle_gpu_us: f64,
        /// Per queue: ∫ deserved GPUs dt (GPU·µs).
        pub deserved_gpu_us: Vec<f64>,
        /// Per queue: ∫ allocated GPUs dt (GPU·µs).
        pub allocated_gpu_us: Vec<f64>,
        /// ∫ active jobs dt (job·µs): jobs submitted and not yet ended.
        pub active_job_us: u128,
        /// Fragmentation rate (fragmented / idle GPUs, 0 when none is idle) at each
        /// requested sample instant.
        pub frag_at: Vec<f64>,
        /// Deserved GPUs per queue at each requested sample instant.
        pub deserved_at: Vec<Vec<f64>>,
    }

    /// Replays the run's facts once (through [`RunMetrics`], as a streaming run
    /// accumulates them); `samples` (ascending, µs) are the instants at which the
    /// per-sample values are wanted (the state just after every change at that instant).
    fn sweep(f: &Facts, samples: &[u64]) -> Timeline {
        let mut tl = Timeline::default();
        let m = RunMetrics::replay(f, samples, &SummaryOptions::default(), |m| {
            tl.frag_at.push(m.frag_rate());
            tl.deserved_at.push(m.deserved().to_vec());
        });
        let mut m = m;
        m.advance_to(f.end);
        tl.frag_gpu_us = m.frag_gpu_us();
        tl.idle_gpu_us = m.idle_gpu_us();
        tl.deserved_gpu_us = m.deserved_gpu_us().to_vec();
        tl.allocated_gpu_us = m.allocated_gpu_us();
        tl.active_job_us = m.active_job_us();
        tl
    }

    use lahar_core::frag::{Demand, Models};

    /// One 8-GPU node, a 4-GPU target shape. Job `a` (0–100) holds 6 GPUs over
    /// [10, 50); job `b` (from 50, unfinished) takes 2 GPUs at the instant `a`'s
    /// pod leaves; a zero-length interval counts for nothing.
    #[test]
    fn sweep_integrates_exactly_and_samples_after_each_instant() {
        let gpus = |n: i64| (Resources::new(0, 0, n * 1000, 1), DeviceHold { whole: (1 << n) - 1, share: None });
        let job = |submit, end| JobFact {
            queue: 0,
            gpus: 0,
            submit,
            waits_from: submit,
            first_start: None,
            end,
            completed: end.is_some(),
            ideal: 0,
            preemptions: 0,
            lost_gpu_us: 0,
            comm_gpu_us: 0,
            running_gpu_us: 0,
            deadline: None,
        };
        let pod = |job, req, start, end| PodFact { job, node: 0, req, start, end };
        let f = Facts {
            end: 100,
            nodes: vec![Resources::new(8000, 1 << 30, 8000, 110)],
            node_models: vec![None],
            queues: vec![QueueFact { name: "q".into(), weight: 1 }],
            jobs: vec![job(0, Some(100)), job(50, None)],
            pods: vec![pod(0, 0, 10, 50), pod(1, 1, 50, 100), pod(1, 2, 30, 30)],
            requests: vec![gpus(6), gpus(2), gpus(8)],
            target: Target::typical([(Demand { cpu: 0, gpu_milli: 1000, gpus: 4, models: Models::ANY }, 1)], 100),
            service: Vec::new(),
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
        assert_eq!(tl.active_job_us, 150);
    }
}
