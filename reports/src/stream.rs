//! A run's files written as it goes: [`RunWriter`] is the engine's
//! [`Recorder`] for a run that writes its outputs.
//!
//! decisions.csv gets each decision as it is made, timeseries.csv and queues.csv
//! each sample as it is taken. A job's jobs.csv row and its pods.csv rows are written when it
//! ends — once its last interval is closed — so both files list jobs in the order
//! they ended (then the jobs unfinished at the end of the run, by submission); a
//! job's pod rows are ordered by task, replica and start. The summary is
//! accumulated on the way ([`RunMetrics`]). What is held is what is alive: the
//! closed intervals of jobs not yet ended, and one small record per alive job.

use crate::accumulate::RunMetrics;
use crate::faults::{EventWriter, FaultTally};
use crate::labels::{push_job_label, push_pod_label};
use crate::metrics::{JobRow, job_row};
use crate::summary::{Summary, SummaryOptions};
use crate::timeline::{JobFact, QueueFact};
use crate::write::{DecisionWriter, Fields, csv_writer, io_err, push_fixed, push_milli};
use lahar_core::engine::{FaultRecord, PodRecord, RunStats, Sample};
use lahar_core::frag::Target;
use lahar_core::job::{JobId, PodId};
use lahar_core::record::Recorder;
use lahar_core::resource::Resources;
use lahar_core::session::Decision;
use lahar_core::text::{push_i64, push_u64};
use lahar_core::time::push_secs;
use lahar_core::world::World;
use rustc_hash::FxHashMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

type Csv = csv::Writer<BufWriter<File>>;

/// timeseries.csv's first columns (docs/outputs.md).
pub const TIMESERIES_BASE: [&str; 8] = [
    "t_s",
    "gpus_total",
    "gpus_allocated",
    "gpus_busy_effective",
    "gpus_stalled",
    "gpus_releasing",
    "jobs_pending",
    "jobs_running",
];

/// queues.csv's columns: one row per queue per sample (docs/outputs.md).
pub const QUEUE_COLUMNS: [&str; 4] = ["t_s", "queue", "gpus_allocated", "gpus_deserved"];

/// Writes a run's jobs.csv, pods.csv, timeseries.csv, queues.csv and
/// decisions.csv as the run makes their rows, and accumulates its summary.
pub struct RunWriter {
    decisions: DecisionWriter,
    jobs: Csv,
    pods: Csv,
    timeseries: Csv,
    queues: Csv,
    /// The queues' names, in the World's order.
    queue_names: Vec<String>,
    queue_row: [String; 4],
    job_row: Fields<18>,
    pod_row: Fields<9>,
    sample_row: Vec<String>,
    /// The closed intervals of each job not yet written (looked up, never iterated).
    closed: FxHashMap<JobId, Vec<PodRecord>>,
    metrics: Option<RunMetrics>,
    summary: Option<Summary>,
    /// The first write error; later rows are dropped and it is returned by `finish`.
    error: Option<io::Error>,
    /// events.csv and the fault tally (runs with `spec.faults`).
    faults: Option<(EventWriter, FaultTally)>,
}

impl RunWriter {
    /// Creates the run's CSV files in `dir` (which must exist) and writes their
    /// headers.
    /// `target` is the fragmentation measure's workload (the scenario's typical
    /// pod shapes, [`crate::timeline::workload`]).
    pub fn create(dir: &Path, world: &World, target: Target, opts: &SummaryOptions) -> io::Result<RunWriter> {
        let decisions = DecisionWriter::create(dir)?;
        let mut jobs = csv_writer(dir, "jobs.csv")?;
        jobs.write_record([
            "job",
            "queue",
            "priority",
            "gpus",
            "submit_s",
            "start_s",
            "end_s",
            "state",
            "jct_s",
            "wait_s",
            "ideal_s",
            "slowdown",
            "preemptions",
            "nodes_spanned",
            "highest_tier",
            "retries",
            "lost_gpu_s",
            "kind",
        ])
        .map_err(io_err)?;
        let mut pods = csv_writer(dir, "pods.csv")?;
        pods.write_record(["job", "pod", "task", "index", "node", "gpus", "start_s", "end_s", "reason_end"])
            .map_err(io_err)?;
        let mut timeseries = csv_writer(dir, "timeseries.csv")?;
        let queues = QueueFact::all(world);
        let mut header: Vec<String> = TIMESERIES_BASE.iter().map(|s| s.to_string()).collect();
        header.push("fragmentation".to_string());
        header.push("gpus_fragmented".to_string());
        if opts.faults {
            header.push("gpus_unavailable".to_string());
        }
        timeseries.write_record(&header).map_err(io_err)?;
        let mut queues_csv = csv_writer(dir, "queues.csv")?;
        queues_csv.write_record(QUEUE_COLUMNS).map_err(io_err)?;
        let queue_names: Vec<String> = queues.iter().map(|q| q.name.clone()).collect();
        let faults = match opts.faults {
            true => Some((EventWriter::create(dir)?, FaultTally::default())),
            false => None,
        };
        // Declared capacity: nodes absent at the start count (gpu_time.absent).
        let nodes: Vec<Resources> = (0..world.cluster.len())
            .map(|i| world.nominal_allocatable(lahar_core::cluster::NodeId(i as u32)))
            .collect();
        let models = crate::timeline::node_models(&world.cluster.nodes);
        Ok(RunWriter {
            decisions,
            jobs,
            pods,
            timeseries,
            queues: queues_csv,
            queue_names,
            queue_row: Default::default(),
            job_row: Fields::new(),
            pod_row: Fields::new(),
            sample_row: vec![String::new(); header.len()],
            closed: FxHashMap::default(),
            metrics: Some(RunMetrics::new(&nodes, models, queues, target, opts)),
            summary: None,
            error: None,
            faults,
        })
    }

    /// Keeps the first `limit` decision rows in memory too ([`RunWriter::take_kept_decisions`]).
    pub fn keep_decisions(&mut self, limit: usize) {
        self.decisions.keep(limit);
    }

    /// The decision rows kept (see [`RunWriter::keep_decisions`]).
    pub fn take_kept_decisions(&mut self) -> Option<crate::write::KeptDecisions> {
        self.decisions.take_kept()
    }

    /// Flushes every file and returns the run's summary; returns the first error met.
    pub fn finish(self) -> io::Result<Summary> {
        let RunWriter { decisions, mut jobs, mut pods, mut timeseries, mut queues, summary, error, faults, .. } = self;
        if let Some(e) = error {
            return Err(e);
        }
        if let Some((events, _)) = faults {
            events.finish()?;
        }
        decisions.finish()?;
        jobs.flush()?;
        pods.flush()?;
        timeseries.flush()?;
        queues.flush()?;
        Ok(summary.expect("RunWriter::finish after the run finished"))
    }

    fn keep(&mut self, r: csv::Result<()>) {
        if let (Err(e), None) = (r, &self.error) {
            self.error = Some(io_err(e));
        }
    }

    fn metrics(&mut self) -> &mut RunMetrics {
        self.metrics.as_mut().expect("the run is not finished")
    }

    /// Writes job `j`'s row and its intervals' rows.
    fn write_job(&mut self, world: &World, j: JobId, cut_short_at: Option<u64>) {
        let job = &world.jobs[j.0 as usize];
        let row = job_row(world, job, cut_short_at);
        self.write_job_row(&row);
        let Some(mut recs) = self.closed.remove(&j) else { return };
        recs.sort_by_key(|p| (p.task, p.index, p.start, p.pod));
        for r in &recs {
            self.write_pod_row(world, r);
        }
    }

    fn write_job_row(&mut self, r: &JobRow) {
        let f = self.job_row.clear();
        f[0].push_str(&r.job);
        f[1].push_str(&r.queue);
        push_i64(&mut f[2], r.priority.into());
        push_milli(&mut f[3], r.gpu_milli);
        push_secs(&mut f[4], r.submit);
        let times = [(5, r.start), (6, r.end), (8, r.jct), (9, r.wait)];
        for (i, t) in times {
            if let Some(t) = t {
                push_secs(&mut f[i], t);
            }
        }
        f[7].push_str(r.state);
        push_secs(&mut f[10], r.ideal);
        if let (Some(j), i) = (r.jct, r.ideal)
            && i > 0
        {
            push_fixed(&mut f[11], j as f64 / i as f64, 6);
        }
        for (i, v) in [(12, r.preemptions), (13, r.nodes_spanned), (14, r.highest_tier), (15, r.retries)] {
            push_u64(&mut f[i], v.into());
        }
        push_fixed(&mut f[16], r.lost_gpu_s, 3);
        f[17].push_str(&r.kind);
        let res = self.jobs.write_record(&self.job_row.0);
        self.keep(res);
    }

    fn write_pod_row(&mut self, world: &World, p: &PodRecord) {
        let j = &world.jobs[p.job.0 as usize].spec;
        let f = self.pod_row.clear();
        push_job_label(&mut f[0], j);
        push_pod_label(&mut f[1], j, p.task, p.index);
        f[2].push_str(&j.tasks[p.task as usize].name);
        push_u64(&mut f[3], p.index.into());
        f[4].push_str(&world.cluster.node(p.node).name);
        push_milli(&mut f[5], p.gpu_milli);
        push_secs(&mut f[6], p.start.micros());
        push_secs(&mut f[7], p.end.micros());
        f[8].push_str(p.reason.as_str());
        let res = self.pods.write_record(&self.pod_row.0);
        self.keep(res);
    }
}

impl Recorder for RunWriter {
    fn job_submitted(&mut self, world: &World, j: JobId) {
        let s = &world.jobs[j.0 as usize].spec;
        let (queue, t) = (s.queue.0, s.submit.micros());
        self.metrics().job_submitted(j.0, queue, t);
    }

    fn pod_started(&mut self, world: &World, p: PodId) {
        let pod = &world.pods[p.0 as usize];
        let node = pod.node.expect("a running pod has a node").0;
        let (job, req, t) = (pod.job.0, pod.req, pod.started.micros());
        let devices = pod.gpu_devices;
        self.metrics().pod_started(job, node, &req, devices, t);
    }

    fn pod_ended(&mut self, world: &World, r: &PodRecord) {
        let req = world.pods[r.pod.0 as usize].req;
        let first_start = world.jobs[r.job.0 as usize].first_start.map(|t| t.micros());
        let (start, end) = (r.start.micros(), r.end.micros());
        self.metrics().pod_ended(r.job.0, r.node.0, &req, r.gpu_devices, start, end, first_start);
        if world.jobs[r.job.0 as usize].end.is_some() {
            // Its job's rows are written already.
            self.write_pod_row(world, r);
        } else {
            self.closed.entry(r.job).or_default().push(r.clone());
        }
    }

    fn job_ended(&mut self, world: &World, j: JobId) {
        let fact = JobFact::of(&world.jobs[j.0 as usize]);
        self.metrics().job_ended(j.0, &fact);
        if let Some((_, tally)) = &mut self.faults {
            tally.job(&world.jobs[j.0 as usize]);
        }
        self.write_job(world, j, None);
    }

    fn sample(&mut self, world: &World, s: &Sample) {
        let m = self.metrics.as_ref().expect("the run is not finished");
        let row = &mut self.sample_row;
        for f in row.iter_mut() {
            f.clear();
        }
        push_secs(&mut row[0], s.t.micros());
        // Out-of-service GPUs are counted: the total is the cluster's nominal one.
        push_milli(&mut row[1], world.cluster.total().gpu_milli() + world.gpus_out_of_service_milli());
        push_milli(&mut row[2], s.gpu_allocated_milli);
        push_milli(&mut row[3], s.gpu_effective_milli);
        push_milli(&mut row[4], s.gpu_stalled_milli);
        push_milli(&mut row[5], s.gpu_releasing_milli);
        push_u64(&mut row[6], s.jobs_pending.into());
        push_u64(&mut row[7], s.jobs_running.into());
        let b = TIMESERIES_BASE.len();
        push_fixed(&mut row[b], m.frag_rate(), 6);
        push_fixed(&mut row[b + 1], m.frag_gpus(), 3);
        if self.faults.is_some() {
            let last = row.len() - 1;
            push_milli(&mut row[last], s.gpu_unavailable_milli);
        }
        let mut res = self.timeseries.write_record(&self.sample_row);
        // queues.csv: the same instant, a row per queue.
        let q = &mut self.queue_row;
        q[0].clear();
        q[0].push_str(&self.sample_row[0]);
        let deserved = m.deserved();
        for (i, name) in self.queue_names.iter().enumerate() {
            q[1].clear();
            q[1].push_str(name);
            q[2].clear();
            push_milli(&mut q[2], s.queue_gpu_milli.get(i).copied().unwrap_or(0));
            q[3].clear();
            push_fixed(&mut q[3], deserved.get(i).copied().unwrap_or(0.0), 3);
            res = res.and(self.queues.write_record(&*q));
        }
        self.keep(res);
    }

    fn decision(&mut self, world: &World, d: &Decision) {
        self.decisions.write(world, d);
    }

    fn node_service(&mut self, world: &World, n: lahar_core::cluster::NodeId, t: lahar_core::time::SimTime) {
        let mask = world.nodes[n.0 as usize].lost_devices;
        self.metrics.as_mut().expect("the run is not finished").node_service(n.0, mask, t.micros());
    }

    fn fault(&mut self, _world: &World, r: &FaultRecord) {
        if let Some((events, tally)) = &mut self.faults {
            tally.record(r);
            let res = events.write(r);
            self.keep(res);
        }
    }

    fn finished(&mut self, world: &World, stats: &RunStats) {
        let end = stats.end.micros();
        let cut_short_at = stats.cut_short.then_some(end);
        let unfinished: Vec<(u32, JobFact)> =
            world.active.iter().map(|&j| (j.0, JobFact::of(&world.jobs[j.0 as usize]))).collect();
        for &j in &world.active {
            self.write_job(world, j, cut_short_at);
        }
        let m = self.metrics.take().expect("finished once");
        let mut summary = m.finish(end, unfinished.iter().map(|(k, f)| (*k, f)));
        summary.events = stats.events;
        summary.sessions = stats.sessions;
        summary.add_releasing(stats.releasing_milli_us);
        summary.add_absent(stats.absent_milli_us);
        if let Some((_, tally)) = &mut self.faults {
            for &j in &world.active {
                tally.job(&world.jobs[j.0 as usize]);
            }
            summary.faults = Some(std::mem::take(tally).finish(end, &summary));
        }
        self.summary = Some(summary);
    }
}
