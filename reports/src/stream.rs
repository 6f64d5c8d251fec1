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
//! A file left out by [`Outputs`] is neither created nor are its rows formatted.

use crate::accumulate::RunMetrics;
use crate::faults::{EventWriter, FaultTally};
use crate::labels::{push_job_label, push_pod_label};
use crate::metrics::{JobRow, job_row};
use crate::outputs::Outputs;
use crate::pipe::{Csv, Field, csv_at};
use crate::schema::{self, JOBS, PODS, QUEUES, TIMESERIES, at};
use crate::sink::{Dest, Tables};
use crate::summary::{Summary, SummaryOptions};
use crate::timeline::{JobFact, QueueFact};
use crate::write::DecisionWriter;
use lahar_core::engine::{FaultRecord, PodRecord, RunStats, Sample};
use lahar_core::frag::Target;
use lahar_core::model::job::{JobId, PodId};
use lahar_core::model::resource::Resources;
use lahar_core::record::Recorder;
use lahar_core::session::Decision;
use lahar_core::world::World;
use rustc_hash::FxHashMap;
use std::io;

/// Writes a run's jobs.csv, pods.csv, timeseries.csv, queues.csv and
/// decisions.csv as the run makes their rows, and accumulates its summary.
pub struct RunWriter {
    decisions: DecisionWriter,
    jobs: Option<Csv>,
    pods: Option<Csv>,
    timeseries: Option<Csv>,
    queues: Option<Csv>,
    /// The queues' names, in the World's order.
    queue_names: Vec<String>,
    /// A pod row's job and pod labels, reused row after row.
    pod_labels: [String; 2],
    /// The columns this run writes.
    sample_columns: Vec<usize>,
    /// The closed intervals of each job not yet written (looked up, never iterated).
    closed: FxHashMap<JobId, Vec<PodRecord>>,
    metrics: Option<RunMetrics>,
    summary: Option<Summary>,
    /// The first write error; later rows are dropped and it is returned by `finish`.
    error: Option<io::Error>,
    /// events.csv (unless left out) and the fault tally (runs with `spec.faults`).
    faults: Option<(Option<EventWriter>, FaultTally)>,
    /// services.csv and scaling.csv (runs with services).
    services: crate::services::ServiceWriter,
    /// timeline.csv (runs with `spec.timeline`).
    operations: crate::operations::OperationWriter,
}

/// Creates file `name` at `dest` with its header when `on`.
fn optional_csv(on: bool, dest: Dest, name: &str, header: &[&str]) -> io::Result<Option<Csv>> {
    if !on {
        return Ok(None);
    }
    csv_at(dest, name, header).map(Some)
}

impl RunWriter {
    /// Creates the run's CSV files that `outputs` chooses at `dest` (a directory
    /// must exist) and writes their headers.
    /// `target` is the fragmentation measure's workload (the scenario's typical
    /// pod shapes, [`crate::timeline::workload`]).
    pub fn create(
        dest: Dest,
        world: &World,
        target: Target,
        opts: &SummaryOptions,
        outputs: &Outputs,
    ) -> io::Result<RunWriter> {
        let decisions = if outputs.decisions { DecisionWriter::create(dest)? } else { DecisionWriter::none() };
        let jobs = optional_csv(outputs.jobs, dest, "jobs.csv", &schema::names(&JOBS))?;
        let pods = optional_csv(outputs.pods, dest, "pods.csv", &schema::names(&PODS))?;
        let queues = QueueFact::all(world);
        let columns = schema::timeseries_columns(opts.faults, opts.services);
        let names = schema::names(&TIMESERIES);
        let header: Vec<&str> = columns.iter().map(|&i| names[i]).collect();
        let timeseries = optional_csv(outputs.timeseries, dest, "timeseries.csv", &header)?;
        let queues_csv = optional_csv(outputs.queues, dest, "queues.csv", &schema::names(&QUEUES))?;
        let queue_names: Vec<String> = queues.iter().map(|q| q.name.clone()).collect();
        let faults = match opts.faults {
            true => {
                let events = if outputs.events { Some(EventWriter::create(dest)?) } else { None };
                Some((events, FaultTally::default()))
            }
            false => None,
        };
        // Declared capacity: nodes absent at the start count (gpu_time.absent).
        let nodes: Vec<Resources> = (0..world.cluster.len())
            .map(|i| world.nominal_allocatable(lahar_core::model::cluster::NodeId(i as u32)))
            .collect();
        let models = crate::timeline::node_models(&world.cluster.nodes);
        Ok(RunWriter {
            decisions,
            jobs,
            pods,
            timeseries,
            queues: queues_csv,
            queue_names,
            pod_labels: Default::default(),
            sample_columns: columns,
            closed: FxHashMap::default(),
            metrics: Some(RunMetrics::new(&nodes, models, queues, target, opts)),
            summary: None,
            error: None,
            faults,
            services: crate::services::ServiceWriter::new(dest),
            operations: crate::operations::OperationWriter::new(dest),
        })
    }

    /// Formats and writes every row file on the run's own thread. By default a
    /// file whose rows outgrow one chunk gets a thread of its own for that
    /// (`reports/src/pipe.rs`): a run then takes more processor time in all (about 5%)
    /// and less wall time. A sweep that runs a cell per core asks for this.
    pub fn format_rows_here(&mut self) {
        self.decisions.format_here();
        for w in [&mut self.jobs, &mut self.pods, &mut self.timeseries, &mut self.queues].into_iter().flatten() {
            w.format_here();
        }
        if let Some((Some(events), _)) = &mut self.faults {
            events.format_here();
        }
        self.services.format_here();
        self.operations.format_here();
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
    /// A run written to memory ([`Dest::Memory`]) gets its files' bytes back;
    /// one that wrote files, empty [`Tables`].
    pub fn finish(self) -> io::Result<(Summary, Tables)> {
        let RunWriter {
            decisions, jobs, pods, timeseries, queues, summary, error, faults, services, operations, ..
        } = self;
        if let Some(e) = error {
            return Err(e);
        }
        let mut tables = Tables::default();
        let close = |w: Option<Csv>| w.map(Csv::close).transpose().map(Option::flatten);
        tables.add("jobs.csv", close(jobs)?);
        tables.add("pods.csv", close(pods)?);
        tables.add("timeseries.csv", close(timeseries)?);
        tables.add("queues.csv", close(queues)?);
        tables.add("decisions.csv", decisions.finish()?);
        if let Some((Some(events), _)) = faults {
            tables.add("events.csv", events.finish()?);
        }
        services.finish(&mut tables)?;
        operations.finish(&mut tables)?;
        Ok((summary.expect("RunWriter::finish after the run finished"), tables))
    }

    fn keep(&mut self, r: io::Result<()>) {
        if let (Err(e), None) = (r, &self.error) {
            self.error = Some(e);
        }
    }

    fn metrics(&mut self) -> &mut RunMetrics {
        self.metrics.as_mut().expect("the run is not finished")
    }

    /// Writes job `j`'s row and its intervals' rows.
    fn write_job(&mut self, world: &World, j: JobId, cut_short_at: Option<u64>) {
        if self.jobs.is_some() {
            let job = &world.jobs[j];
            let row = job_row(world, job, cut_short_at);
            self.write_job_row(&row);
        }
        let Some(mut recs) = self.closed.remove(&j) else { return };
        recs.sort_by_key(|p| (p.task, p.index, p.start, p.pod));
        for r in &recs {
            self.write_pod_row(world, r);
        }
    }

    fn write_job_row(&mut self, r: &JobRow) {
        let Some(w) = &mut self.jobs else { return };
        const fn j(name: &str) -> usize {
            at(&JOBS, name)
        }
        let mut f = [Field::Empty; JOBS.len()];
        f[const { j("job") }] = Field::Str(&r.job);
        f[const { j("queue") }] = Field::Str(&r.queue);
        f[const { j("priority") }] = Field::I64(r.priority.into());
        f[const { j("gpus") }] = Field::Milli(r.gpu_milli);
        f[const { j("submit_s") }] = Field::Secs(r.submit);
        let times = [
            (const { j("start_s") }, r.start),
            (const { j("end_s") }, r.end),
            (const { j("jct_s") }, r.jct),
            (const { j("wait_s") }, r.wait),
        ];
        for (i, t) in times {
            if let Some(t) = t {
                f[i] = Field::Secs(t);
            }
        }
        f[const { j("state") }] = Field::Str(r.state);
        f[const { j("ideal_s") }] = Field::Secs(r.ideal);
        if let (Some(jct), i) = (r.jct, r.ideal)
            && i > 0
        {
            f[const { j("slowdown") }] = Field::Fixed(jct as f64 / i as f64, 6);
        }
        let counts = [
            (const { j("preemptions") }, r.preemptions),
            (const { j("nodes_spanned") }, r.nodes_spanned),
            (const { j("highest_tier") }, r.highest_tier),
            (const { j("retries") }, r.retries),
        ];
        for (i, v) in counts {
            f[i] = Field::U64(v.into());
        }
        f[const { j("lost_gpu_s") }] = Field::Fixed(r.lost_gpu_s, 3);
        f[const { j("kind") }] = Field::Str(&r.kind);
        if let Some(d) = r.deadline {
            f[const { j("deadline_s") }] = Field::Secs(d);
        }
        let res = w.write_fields(&f);
        self.keep(res);
    }

    fn write_pod_row(&mut self, world: &World, p: &PodRecord) {
        let Some(w) = &mut self.pods else { return };
        const fn c(name: &str) -> usize {
            at(&PODS, name)
        }
        let j = &world.jobs[p.job].spec;
        let [job, pod] = &mut self.pod_labels;
        job.clear();
        pod.clear();
        push_job_label(job, j);
        push_pod_label(pod, j, p.task, p.index);
        let mut f = [Field::Empty; PODS.len()];
        f[const { c("job") }] = Field::Str(job);
        f[const { c("pod") }] = Field::Str(pod);
        f[const { c("task") }] = Field::Str(&j.tasks[p.task as usize].name);
        f[const { c("index") }] = Field::U64(p.index.into());
        f[const { c("node") }] = Field::Str(&world.cluster.node(p.node).name);
        f[const { c("gpus") }] = Field::Milli(p.gpu_milli);
        f[const { c("start_s") }] = Field::Secs(p.start.micros());
        f[const { c("end_s") }] = Field::Secs(p.end.micros());
        f[const { c("reason_end") }] = Field::Str(p.reason.as_str());
        let res = w.write_fields(&f);
        self.keep(res);
    }
}

impl Recorder for RunWriter {
    fn job_submitted(&mut self, world: &World, j: JobId) {
        let s = &world.jobs[j].spec;
        let (queue, t) = (s.queue.0, s.submit.micros());
        self.metrics().job_submitted(j.0, queue, t);
    }

    fn pod_started(&mut self, world: &World, p: PodId) {
        let pod = &world.pods[p];
        let node = pod.node.expect("a running pod has a node").0;
        let (job, req, t) = (pod.job.0, pod.req, pod.started.micros());
        let devices = pod.gpu_devices;
        self.metrics().pod_started(job, node, &req, devices, t);
    }

    fn pod_ended(&mut self, world: &World, r: &PodRecord) {
        let req = world.pods[r.pod].req;
        let first_start = world.jobs[r.job].first_start.map(|t| t.micros());
        let (start, end) = (r.start.micros(), r.end.micros());
        self.metrics().pod_ended(r.job.0, r.node.0, &req, r.gpu_devices, start, end, first_start);
        // With pods.csv left out there is nothing to write or hold.
        if self.pods.is_some() {
            if world.jobs[r.job].end.is_some() {
                // Its job's rows are written already.
                self.write_pod_row(world, r);
            } else {
                self.closed.entry(r.job).or_default().push(r.clone());
            }
        }
    }

    fn job_ended(&mut self, world: &World, j: JobId) {
        let fact = JobFact::of(&world.jobs[j]);
        self.metrics().job_ended(j.0, &fact);
        if let Some((_, tally)) = &mut self.faults {
            tally.job(&world.jobs[j]);
        }
        self.write_job(world, j, None);
    }

    fn sample(&mut self, world: &World, s: &Sample) {
        if self.timeseries.is_none() && self.queues.is_none() {
            return;
        }
        let m = self.metrics.as_ref().expect("the run is not finished");
        const fn t(name: &str) -> usize {
            at(&TIMESERIES, name)
        }
        let mut f = [Field::Empty; TIMESERIES.len()];
        f[const { t("t_s") }] = Field::Secs(s.t.micros());
        // Out-of-service GPUs are counted: the total is the cluster's nominal one.
        f[const { t("gpus_total") }] =
            Field::Milli(world.cluster.total().gpu_milli() + world.gpus_out_of_service_milli());
        f[const { t("gpus_allocated") }] = Field::Milli(s.gpu_allocated_milli);
        f[const { t("gpus_busy_effective") }] = Field::Milli(s.gpu_effective_milli);
        f[const { t("gpus_stalled") }] = Field::Milli(s.gpu_stalled_milli);
        f[const { t("gpus_releasing") }] = Field::Milli(s.gpu_releasing_milli);
        f[const { t("jobs_pending") }] = Field::U64(s.jobs_pending.into());
        f[const { t("jobs_running") }] = Field::U64(s.jobs_running.into());
        f[const { t("fragmentation") }] = Field::Fixed(m.frag_rate(), 6);
        f[const { t("gpus_fragmented") }] = Field::Fixed(m.frag_gpus(), 3);
        if self.faults.is_some() {
            f[const { t("gpus_unavailable") }] = Field::Milli(s.gpu_unavailable_milli);
        }
        f[const { t("gpus_serving") }] = Field::Milli(s.gpu_serving_milli);
        let mut res = match &mut self.timeseries {
            Some(w) => {
                // The columns this run writes, in their order.
                let mut row = [Field::Empty; TIMESERIES.len()];
                for (k, &i) in self.sample_columns.iter().enumerate() {
                    row[k] = f[i];
                }
                w.write_fields(&row[..self.sample_columns.len()])
            }
            None => Ok(()),
        };
        let Some(queues) = &mut self.queues else {
            self.keep(res);
            return;
        };
        // queues.csv: the same instant, a row per queue.
        const fn c(name: &str) -> usize {
            at(&QUEUES, name)
        }
        let deserved = m.deserved();
        for (i, name) in self.queue_names.iter().enumerate() {
            let mut q = [Field::Empty; QUEUES.len()];
            q[const { c("t_s") }] = Field::Secs(s.t.micros());
            q[const { c("queue") }] = Field::Str(name);
            q[const { c("gpus_allocated") }] = Field::Milli(s.queue_gpu_milli.get(i).copied().unwrap_or(0));
            q[const { c("gpus_deserved") }] = Field::Fixed(deserved.get(i).copied().unwrap_or(0.0), 3);
            res = res.and(queues.write_fields(&q));
        }
        self.keep(res);
    }

    fn decision(&mut self, world: &World, d: &Decision) {
        self.decisions.write(world, d);
    }

    fn node_service(
        &mut self,
        world: &World,
        n: lahar_core::model::cluster::NodeId,
        t: lahar_core::util::time::SimTime,
    ) {
        let mask = world.nodes[n].lost_devices;
        self.metrics.as_mut().expect("the run is not finished").node_service(n.0, mask, t.micros());
    }

    fn fault(&mut self, _world: &World, r: &FaultRecord) {
        if let Some((events, tally)) = &mut self.faults {
            tally.record(r);
            if let Some(events) = events {
                let res = events.write(r);
                self.keep(res);
            }
        }
    }

    fn service_sample(&mut self, _world: &World, s: &lahar_core::record::ServiceSample) {
        if self.error.is_none()
            && let Err(e) = self.services.sample(s)
        {
            self.error = Some(e);
        }
    }

    fn scaled(&mut self, _world: &World, r: &lahar_core::record::ScaleRecord) {
        if self.error.is_none()
            && let Err(e) = self.services.scaled(r)
        {
            self.error = Some(e);
        }
    }

    fn operated(&mut self, _world: &World, r: &lahar_core::record::OperationRecord) {
        if self.error.is_none()
            && let Err(e) = self.operations.operated(r)
        {
            self.error = Some(e);
        }
    }

    fn finished(&mut self, world: &World, stats: &RunStats) {
        let end = stats.end.micros();
        let cut_short_at = stats.cut_short.then_some(end);
        let unfinished: Vec<(u32, JobFact)> =
            world.active.iter().map(|&j| (j.0, JobFact::of(&world.jobs[j]))).collect();
        for &j in &world.active {
            self.write_job(world, j, cut_short_at);
        }
        let m = self.metrics.take().expect("finished once");
        let mut summary = m.finish(end, unfinished.iter().map(|(k, f)| (*k, f)));
        summary.events = stats.events;
        summary.sessions = stats.sessions;
        summary.add_releasing(stats.releasing_milli_us);
        summary.add_absent(stats.absent_milli_us);
        summary.services = crate::services::summarize(&stats.services);
        summary.serving = crate::services::serving(&stats.services, &stats.serving);
        if let Some((_, tally)) = &mut self.faults {
            for &j in &world.active {
                tally.job(&world.jobs[j]);
            }
            summary.faults = Some(std::mem::take(tally).finish(end, &summary));
        }
        self.summary = Some(summary);
    }
}
