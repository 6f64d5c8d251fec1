//! Writers for the output contract: jobs.csv, pods.csv, timeseries.csv,
//! decisions.csv, summary.json and its flat twin summary.csv; explain.csv on request.

use crate::pipe::Field;
use crate::summary::{Dist, QueueSummary, Summary};
use lahar_core::engine::RunOutput;
use lahar_core::session::Decision;
use lahar_core::world::World;
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub use crate::numbers::{fixed, milli_string, push_fixed, push_milli};

/// Facts about a run that are not in its output.
#[derive(Clone, Debug, Serialize)]
pub struct RunMeta {
    /// lahar version.
    pub lahar_version: String,
    /// Scenario name.
    pub scenario: String,
    /// sha256 of the scenario text.
    pub scenario_sha256: String,
    /// Seed.
    pub seed: u64,
    /// Scheduler name.
    pub scheduler: String,
    /// Wall-clock seconds the simulation took: the only non-reproducible value,
    /// written apart, in summary.json's `run` block.
    #[serde(skip)]
    pub wall_time_s: f64,
    /// What the input let through that the user must know (skipped rows, jobs that
    /// can never be placed...), in the order found.
    pub warnings: Vec<WarningRecord>,
    /// Nodes in the cluster.
    pub nodes: usize,
    /// The fabric's tier names by tier number (`node`, `leaf`, `spine`...,
    /// `cluster`): what jobs.csv's `highest_tier` numbers mean.
    pub tiers: Vec<String>,
    /// Set when a signal stopped the run before its end (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<Interrupted>,
    /// The run is `lahar run --snapshot`: an operator's question about a live
    /// cluster, not a study (`true`; absent otherwise).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub snapshot: bool,
}

/// Where an interrupted run stopped: its files are whole up to there, and its
/// metrics cover `[0, at_s)` with the jobs still alive counted unfinished.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interrupted {
    /// The signal: `SIGINT` (Ctrl-C) or `SIGTERM` (a batch system's time limit).
    pub signal: String,
    /// The simulated instant it stopped at (s).
    pub at_s: f64,
    /// Jobs that had ended by then, of `jobs` submitted.
    pub jobs_ended: usize,
    /// Jobs submitted by then.
    pub jobs: usize,
}

/// One warning of summary.json's `warnings` list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WarningRecord {
    /// Stable code: `trace-rows-skipped`, `unschedulable-pods`, `gang-exceeds-cluster`.
    pub kind: String,
    /// How many rows or jobs.
    pub count: u64,
    /// `file:line:col` of the first one (or `file`).
    pub location: String,
    /// Field path of the source or object.
    pub path: String,
    /// The first case, described.
    pub message: String,
}

#[derive(Serialize)]
struct SummaryFile<'a> {
    #[serde(flatten)]
    meta: &'a RunMeta,
    metrics: &'a Summary,
    /// What differs between two runs of the same scenario and seed, kept apart so
    /// everything else compares byte for byte.
    run: RunFacts,
}

/// summary.json's `run` block.
#[derive(Serialize)]
struct RunFacts {
    wall_time_s: f64,
}

pub(crate) fn csv_writer(dir: &Path, name: &str) -> io::Result<csv::Writer<BufWriter<File>>> {
    Ok(csv::Writer::from_writer(BufWriter::new(File::create(dir.join(name))?)))
}

pub(crate) fn io_err(e: csv::Error) -> io::Error {
    io::Error::other(e)
}

/// Writes summary.json and summary.csv into `dir`.
pub fn write_summary(dir: &Path, summary: &Summary, meta: &RunMeta) -> io::Result<()> {
    write_summary_csv(dir, summary, meta)?;
    // Whole or not at all: its presence says the run finished.
    let mut f = lahar_core::util::files::AtomicFile::create(&dir.join("summary.json"))?;
    f.write_all(summary_json(summary, meta).as_bytes())?;
    f.commit()
}

/// summary.json's text (a run written to memory returns it).
pub fn summary_json(summary: &Summary, meta: &RunMeta) -> String {
    let file = SummaryFile { meta, metrics: summary, run: RunFacts { wall_time_s: meta.wall_time_s } };
    let mut text = serde_json::to_string_pretty(&file).expect("a summary serializes (no map with non-string keys)");
    text.push('\n');
    text
}

/// Writes decisions.csv row by row as a run makes its decisions (see
/// [`crate::stream::RunWriter`]), so they are never all held.
pub struct DecisionWriter {
    /// The file; `None` when decisions.csv is not written (rows may still be kept).
    w: Option<crate::pipe::Csv>,
    /// Field buffers reused row after row (job, pod).
    row: [String; 2],
    /// The first write error; later rows are dropped and it is returned by `finish`.
    error: Option<io::Error>,
    /// Rows also kept in memory, up to a limit (see [`DecisionWriter::keep`]).
    kept: Option<KeptDecisions>,
}

/// The columns of explain.csv ([`crate::schema::EXPLAIN`]).
pub const EXPLAIN_COLUMNS: [&str; 8] = crate::schema::header(&crate::schema::EXPLAIN);

/// The columns of decisions.csv ([`crate::schema::DECISIONS`]).
pub const DECISION_COLUMNS: [&str; 9] = crate::schema::header(&crate::schema::DECISIONS);

/// Decision rows kept in memory as written (for the terminal), the first `limit`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeptDecisions {
    /// The rows, fields as in decisions.csv.
    pub rows: Vec<[String; 9]>,
    /// The most rows kept.
    pub limit: usize,
    /// Rows written beyond the limit.
    pub more: u64,
}

impl DecisionWriter {
    /// Creates decisions.csv at `dest` (a directory is created) and writes the header.
    pub fn create(dest: crate::sink::Dest) -> io::Result<DecisionWriter> {
        if let crate::sink::Dest::Dir(dir) = dest {
            std::fs::create_dir_all(dir)?;
        }
        let w = crate::pipe::csv_at(dest, "decisions.csv", &DECISION_COLUMNS)?;
        Ok(DecisionWriter { w: Some(w), row: Default::default(), error: None, kept: None })
    }

    /// A writer of no file: it only keeps rows, if asked to ([`DecisionWriter::keep`]).
    pub fn none() -> DecisionWriter {
        DecisionWriter { w: None, row: Default::default(), error: None, kept: None }
    }

    /// Formats the rows on the run's thread (see [`crate::RunWriter::format_rows_here`]).
    pub(crate) fn format_here(&mut self) {
        if let Some(w) = &mut self.w {
            w.format_here();
        }
    }

    /// Keeps the first `limit` rows in memory too (an operator's run prints them).
    pub fn keep(&mut self, limit: usize) {
        self.kept = Some(KeptDecisions { limit, ..Default::default() });
    }

    /// The rows kept so far (see [`DecisionWriter::keep`]).
    pub fn take_kept(&mut self) -> Option<KeptDecisions> {
        self.kept.take()
    }

    /// Writes one decision, its names resolved in `world`.
    pub fn write(&mut self, world: &World, d: &Decision) {
        if self.error.is_some() || (self.w.is_none() && self.kept.is_none()) {
            return;
        }
        let j = &world.jobs[d.job].spec;
        let [job, pod] = &mut self.row;
        job.clear();
        pod.clear();
        crate::labels::push_job_label(job, j);
        if let Some(p) = d.pod {
            let p = &world.pods[p];
            crate::labels::push_pod_label(pod, j, p.task, p.index);
        }
        let node = d.node.map(|n| world.cluster.node(n).name.as_str()).unwrap_or_default();
        let phase = d.phase.map(|p| p.as_str()).unwrap_or("");
        if let Some(k) = &mut self.kept {
            if k.rows.len() < k.limit {
                k.rows.push(decision_fields(world, d));
            } else {
                k.more += 1;
            }
        }
        let fields = [
            Field::U64(d.session),
            Field::Secs(d.t.micros()),
            Field::Str(d.action),
            Field::Str(d.kind.as_str()),
            Field::Str(job),
            Field::Str(pod),
            Field::Str(node),
            Field::Str(phase),
            Field::Str(&d.reason),
        ];
        if let Some(w) = &mut self.w
            && let Err(e) = w.write_fields(&fields)
        {
            self.error = Some(e);
        }
    }

    /// Flushes the file (a buffer's bytes are returned); returns the first error met.
    pub fn finish(mut self) -> io::Result<Option<Vec<u8>>> {
        match (self.error.take(), self.w) {
            (Some(e), _) => Err(e),
            (None, Some(w)) => w.close(),
            (None, None) => Ok(None),
        }
    }
}

/// One decision's fields as decisions.csv writes them, names resolved in `world`.
pub fn decision_fields(world: &World, d: &Decision) -> [String; 9] {
    let j = &world.jobs[d.job].spec;
    let mut t = String::new();
    lahar_core::util::time::push_secs(&mut t, d.t.micros());
    let pod = d.pod.map(|p| {
        let p = &world.pods[p];
        crate::labels::pod_label(j, p.task, p.index)
    });
    [
        d.session.to_string(),
        t,
        d.action.to_string(),
        d.kind.as_str().to_string(),
        crate::labels::job_label(j),
        pod.unwrap_or_default(),
        d.node.map(|n| world.cluster.node(n).name.clone()).unwrap_or_default(),
        d.phase.map(|p| p.as_str()).unwrap_or("").to_string(),
        d.reason.to_string(),
    ]
}

/// Writes explain.csv (`--explain`): the rows recorded for the watched pods, in the
/// order recorded (session by session, as the scheduler evaluated them). An empty
/// `passed` or `score` means the row has none (score rows; pass/fail rows).
pub fn write_explain(dir: &Path, out: &RunOutput) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut w = csv_writer(dir, "explain.csv")?;
    w.write_record(EXPLAIN_COLUMNS).map_err(io_err)?;
    for r in &out.explain {
        let pod = &out.world.pods[r.pod];
        let j = &out.world.jobs[pod.job].spec;
        w.write_record([
            r.session.to_string().as_str(),
            &r.t.secs_string(),
            &crate::labels::pod_label(j, pod.task, pod.index),
            &r.node.map(|n| out.world.cluster.node(n).name.clone()).unwrap_or_default(),
            &r.plugin,
            r.passed.map(|p| if p { "true" } else { "false" }).unwrap_or(""),
            &r.reason,
            // `+ 0.0` writes a negative zero (an empty sum's) as 0.
            &r.score.map(|s| (s + 0.0).to_string()).unwrap_or_default(),
        ])
        .map_err(io_err)?;
    }
    w.flush()
}

/// Columns of summary.csv, in order.
pub const SUMMARY_COLUMNS: &[&str] = &[
    "scenario",
    "seed",
    "scope",
    "jobs",
    "completed",
    "unfinished",
    "jct_s.mean",
    "jct_s.p50",
    "jct_s.p90",
    "jct_s.p99",
    "wait_s.mean",
    "wait_s.p50",
    "wait_s.p90",
    "wait_s.p99",
    "slowdown.mean",
    "slowdown.p50",
    "slowdown.p90",
    "slowdown.p99",
    "makespan_s",
    "gpu_hours",
    "gpu_hours_stalled",
    "gpu_allocation_rate",
    "gpu_effective_utilization",
    "fragmentation",
    "deserved_share",
    "share_over_deserved",
    "jain_fairness",
    "rho.mean",
    "rho.p50",
    "rho.p90",
    "rho.p99",
    "rho.max",
    "preemptions",
    "gpu_hours_lost",
    "gang_wait_s.mean",
    "gang_wait_s.p99",
    "gang_wait_gpu_hours",
    "slo_misses",
    "deadline_misses",
];

/// Mean and percentiles; empty cells for a distribution without values.
fn dist4(d: &Option<Dist>) -> [String; 4] {
    match d {
        Some(d) => [d.mean.to_string(), d.p50.to_string(), d.p90.to_string(), d.p99.to_string()],
        None => Default::default(),
    }
}

/// A value, or an empty cell when it has none.
fn cell(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn scope_row(scope: &str, q: &QueueSummary, run: Option<&Summary>) -> Vec<String> {
    let run_only = |f: fn(&Summary) -> f64| run.map(|s| f(s).to_string()).unwrap_or_default();
    let mut r = vec![scope.to_string(), q.jobs.to_string(), q.completed.to_string(), q.unfinished.to_string()];
    r.extend(dist4(&q.jct_s));
    r.extend(dist4(&q.wait_s));
    r.extend(dist4(&q.slowdown));
    r.push(cell(q.makespan_s));
    r.push(q.gpu_hours.to_string());
    r.push(q.gpu_hours_stalled.to_string());
    r.push(q.gpu_allocation_rate.to_string());
    r.push(run_only(|s| s.gpu_effective_utilization));
    r.push(run_only(|s| s.fragmentation));
    r.push(q.deserved_share.to_string());
    r.push(q.share_over_deserved.to_string());
    r.push(run_only(|s| s.jain_fairness));
    r.extend(dist4(&q.rho));
    r.push(cell(q.rho.as_ref().map(|d| d.max)));
    r.push(q.preemptions.to_string());
    r.push(q.gpu_hours_lost.to_string());
    r.push(cell(q.gang_wait_s.as_ref().map(|d| d.mean)));
    r.push(cell(q.gang_wait_s.as_ref().map(|d| d.p99)));
    r.push(q.gang_wait_gpu_hours.to_string());
    r.push(q.slo_misses.to_string());
    r.push(q.deadline_misses.to_string());
    r
}

/// The rows of summary.csv: `all` (the whole run), then `queue:<name>` per queue
/// in name order. Run-only metrics are empty on queue rows.
pub fn summary_rows(s: &Summary) -> Vec<Vec<String>> {
    let all = QueueSummary {
        weight: 0,
        jobs: s.jobs,
        completed: s.completed,
        unfinished: s.unfinished,
        jct_s: s.jct_s.clone(),
        wait_s: s.wait_s.clone(),
        slowdown: s.slowdown.clone(),
        makespan_s: s.makespan_s,
        gpu_hours: s.gpu_allocation_rate * s.gpus_total * s.sim_time_s / 3600.0,
        gpu_hours_stalled: s.gpu_time.stalled * s.gpus_total * s.sim_time_s / 3600.0,
        gpu_allocation_rate: s.gpu_allocation_rate,
        deserved_share: 1.0,
        share_over_deserved: s.gpu_allocation_rate,
        rho: s.rho.clone(),
        preemptions: s.preemptions,
        gpu_hours_lost: s.gpu_hours_lost,
        gang_wait_s: s.gang_wait_s.clone(),
        gang_wait_gpu_hours: s.gang_wait_gpu_hours,
        slo_misses: s.slo_misses,
        deadline_misses: s.deadline_misses,
    };
    let mut rows = vec![scope_row("all", &all, Some(s))];
    for (name, q) in &s.queues {
        rows.push(scope_row(&format!("queue:{name}"), q, None));
    }
    rows
}

fn write_summary_csv(dir: &Path, s: &Summary, meta: &RunMeta) -> io::Result<()> {
    let mut w = csv_writer(dir, "summary.csv")?;
    w.write_record(SUMMARY_COLUMNS).map_err(io_err)?;
    // Every row names its run, so rows of several runs can be concatenated.
    let run = [meta.scenario.clone(), meta.seed.to_string()];
    for r in summary_rows(s) {
        w.write_record(run.iter().chain(r.iter())).map_err(io_err)?;
    }
    w.flush()
}
