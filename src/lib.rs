//! # lahar
//!
//! The run pipeline behind the `lahar` command: load a scenario, build the engine
//! with the chosen scheduler, run it, compute metrics and write the outputs. The
//! binary (`src/main.rs`) only parses arguments and maps errors to exit codes, so
//! tests and benches drive the same code in-process.

pub mod nccl;
pub mod report_cmd;
pub mod scenario;
pub mod trace_cmd;

use lahar_core::engine::{Engine, IdealRuntime, RunOutput};
use lahar_core::world::World;
use lahar_reports::{JobRow, RunMeta, Summary};
use scenario::{Scenario, SchedulerChoice};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// lahar's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Options of one run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Overrides the scenario's output directory.
    pub out_dir: Option<PathBuf>,
    /// Overrides `spec.sessions`.
    pub sessions: Option<u64>,
    /// Skip writing files (benchmarks).
    pub no_write: bool,
    /// Show a progress bar on stderr (only drawn when stderr is a terminal).
    pub progress: bool,
    /// Also write plots (SVG and PNG) into `<out>/plots/`.
    pub plots: bool,
}

/// What a run produced.
pub struct RunReport {
    /// Raw outputs of the engine.
    pub output: RunOutput,
    /// jobs.csv rows.
    pub rows: Vec<JobRow>,
    /// Headline metrics.
    pub summary: Summary,
    /// Facts about the run.
    pub meta: RunMeta,
    /// Where the files went.
    pub out_dir: PathBuf,
}

/// A run that failed after its input was accepted.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Writing outputs failed.
    #[error("cannot write outputs to {dir}: {source}")]
    Write {
        /// Output directory.
        dir: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
    /// Plotting the written outputs failed.
    #[error("cannot plot the outputs in {dir}: {msg}")]
    Plots {
        /// Output directory.
        dir: PathBuf,
        /// Cause.
        msg: String,
    },
}

/// Builds the engine for a scenario (the scenario is consumed: its cluster and jobs
/// move into the simulated world).
pub fn build_engine(s: Scenario) -> Engine {
    let scheduler: Box<dyn lahar_core::session::Scheduler> = match &s.scheduler {
        SchedulerChoice::Baseline(name) => lahar_policies::baseline(name).expect("baseline name validated"),
        SchedulerChoice::Volcano(conf) => Box::new(lahar_policies::volcano::Volcano::new((**conf).clone())),
    };
    let runtime: Box<dyn lahar_core::engine::RuntimeModel> = if s.models.iter().any(Option::is_some) {
        let model = lahar_core::comm::CommModel::new(s.comm.constants.clone()).expect("comm constants validated");
        Box::new(
            lahar_core::comm::runtime::CommRuntime::new(model, &s.cluster, s.models)
                .with_link_sharing(s.comm.link_sharing),
        )
    } else {
        Box::new(IdealRuntime)
    };
    let world = World::new(s.cluster, s.queues, s.jobs);
    Engine::new(world, scheduler, runtime, s.engine)
}

/// Runs a scenario and writes its outputs.
pub fn run(mut s: Scenario, opts: &RunOptions) -> Result<RunReport, RunError> {
    if let Some(n) = opts.sessions {
        s.engine.max_sessions = Some(n);
    }
    let out_dir = opts.out_dir.clone().unwrap_or_else(|| s.output_dir.clone());
    let meta_base = RunMeta {
        lahar_version: VERSION.to_string(),
        scenario: s.name.clone(),
        scenario_sha256: s.sha256.clone(),
        seed: s.seed,
        scheduler: s.scheduler.name(),
        wall_time_s: 0.0,
    };
    let started = Instant::now();
    let output = if opts.progress {
        let bar = report_cmd::Progress::new(s.jobs.len());
        let mut engine = build_engine(s);
        engine.run_with(|t, done| bar.update(t, done));
        bar.finish();
        engine.finish()
    } else {
        build_engine(s).run()
    };
    let wall = started.elapsed().as_secs_f64();
    let rows = lahar_reports::job_rows(&output);
    let summary = lahar_reports::summarize(&output, &rows);
    let meta = RunMeta { wall_time_s: wall, ..meta_base };
    if !opts.no_write {
        write(&out_dir, &output, &rows, &summary, &meta)?;
        if opts.plots {
            report_cmd::run_plots(&out_dir)
                .map_err(|e| RunError::Plots { dir: out_dir.clone(), msg: e.to_string() })?;
        }
    }
    Ok(RunReport { output, rows, summary, meta, out_dir })
}

fn write(dir: &Path, out: &RunOutput, rows: &[JobRow], summary: &Summary, meta: &RunMeta) -> Result<(), RunError> {
    lahar_reports::write_all(dir, out, rows, summary, meta)
        .map_err(|source| RunError::Write { dir: dir.to_path_buf(), source })
}

/// The summary table `lahar run` prints.
pub fn summary_table(r: &RunReport) -> String {
    use comfy_table::{Table, presets::UTF8_BORDERS_ONLY};
    let s = &r.summary;
    let h = |x: f64| format!("{:.2} h", x / 3600.0);
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(["metric", "value"]);
    let rows: Vec<(&str, String)> = vec![
        ("scenario", format!("{} (seed {})", r.meta.scenario, r.meta.seed)),
        ("scheduler", r.meta.scheduler.clone()),
        ("jobs (completed / unfinished)", format!("{} ({} / {})", s.jobs, s.completed, s.unfinished)),
        ("JCT mean / p50 / p99", format!("{} / {} / {}", h(s.jct_s.mean), h(s.jct_s.p50), h(s.jct_s.p99))),
        ("queueing delay mean / p90", format!("{} / {}", h(s.wait_s.mean), h(s.wait_s.p90))),
        ("slowdown mean / p99", format!("{:.2} / {:.2}", s.slowdown.mean, s.slowdown.p99)),
        ("makespan", h(s.makespan_s)),
        ("GPUs", format!("{}", s.gpus_total)),
        ("GPU allocation rate", format!("{:.1}%", 100.0 * s.gpu_allocation_rate)),
        ("GPU effective utilization", format!("{:.1}%", 100.0 * s.gpu_effective_utilization)),
        ("preemptions", s.preemptions.to_string()),
        ("events / sessions", format!("{} / {}", s.events, s.sessions)),
        ("wall time", format!("{:.2} s", r.meta.wall_time_s)),
        ("outputs", r.out_dir.display().to_string()),
    ];
    for (k, v) in rows {
        t.add_row([k.to_string(), v]);
    }
    t.to_string()
}
