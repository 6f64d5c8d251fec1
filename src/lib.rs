//! # lahar
//!
//! The run pipeline behind the `lahar` command: load a scenario, build the engine
//! with the chosen scheduler, run it, compute metrics and write the outputs. The
//! binary (`src/main.rs`) only parses arguments and maps errors to exit codes, so
//! tests and benches drive the same code in-process.

pub mod check;
pub mod diff;
pub mod error;
pub mod explain_summary;
pub mod input;
pub mod interrupt;
pub mod nccl;
pub mod operator;
pub mod outdir;
pub mod overrides;
pub mod placement;
pub mod report_cmd;
pub mod scenario;
pub mod starting;
pub mod sweep;
pub mod trace_cmd;

pub use error::{CmdError, RunError};

use lahar_core::engine::{Engine, IdealRuntime, RunOutput};
use lahar_core::explain::Explain;
use lahar_core::model::job::{JobId, JobSpec};
use lahar_core::session::Scheduler;
use lahar_core::world::World;
use lahar_reports::{JobRow, RunMeta, Summary};
use scenario::{Scenario, SchedulerChoice};
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

/// lahar's version.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("LAHAR_BUILD"));

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
    /// Also write plots (SVG and PNG) into `<out>/plots/`, in this style.
    pub plots: Option<lahar_reports::plots::PlotStyle>,
    /// Pods to explain (`namespace/name` or a unique name): writes explain.csv.
    pub explain: Vec<String>,
    /// Keep explain.csv rows only for sessions at `from ≤ t < until`
    /// (`--explain-window`); the end-of-run summary still counts every session.
    pub explain_window: Option<(lahar_core::util::time::SimTime, lahar_core::util::time::SimTime)>,
    /// Sessions walk everything instead of skipping provably fruitless work
    /// (`lahar run --exhaustive`; the reference of the equivalence tests).
    pub exhaustive: bool,
    /// Let `extender` plugins call non-loopback addresses
    /// (`--allow-remote-extender`).
    pub allow_remote_extender: bool,
    /// Replace another scenario's outputs in the output directory (`--force`);
    /// without it, a directory whose marker names another scenario is refused.
    pub force: bool,
    /// Keep the first this many decision rows in memory as well
    /// ([`RunReport::decisions`]): an operator's snapshot run prints them.
    pub keep_decisions: Option<usize>,
    /// The run is `--snapshot` (summary.json says so: its report shows what the
    /// sessions did instead of research metrics).
    pub snapshot: bool,
    /// Which row files to write (`--outputs`; all by default). The summary and
    /// the inputs are always written.
    pub outputs: lahar_reports::Outputs,
    /// Write the row files and summary.json to memory, not to a directory
    /// ([`RunReport::tables`], [`RunReport::summary_json`]): a run from Python.
    /// No file is created; `--explain` and plots are refused.
    pub in_memory: bool,
    /// Ends the run at the next event once raised, in place of SIGINT/SIGTERM's
    /// flag ([`interrupt::flag`]): a Python policy that raised stops its run.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Write the row files as Parquet (`<name>.parquet`, the CSV's columns,
    /// typed) instead of CSV (`--format parquet`; not with `in_memory`).
    pub parquet: bool,
    /// Format the row files on the run's own thread instead of a thread per big
    /// file ([`lahar_reports::RunWriter::format_rows_here`]): a sweep that runs a
    /// cell per core sets it.
    pub rows_here: bool,
}

/// What a run produced.
pub struct RunReport {
    /// Raw outputs of the engine: the final world and, for an in-process run
    /// (`no_write`), every record; a run that writes its files hands its records
    /// to them as it goes, so `pods`, `samples` and `decisions` are then empty
    /// (but for the intervals of `--explain` pods), and its world keeps only the
    /// jobs not finished (and `--explain` jobs): finished ones were retired.
    pub output: RunOutput,
    /// Headline metrics.
    pub summary: Summary,
    /// Facts about the run.
    pub meta: RunMeta,
    /// Where the files went.
    pub out_dir: PathBuf,
    /// What the run itself let through (also in `meta.warnings`, after the
    /// scenario's): recurring objects' runs never created.
    pub run_warnings: Vec<scenario::Warning>,
    /// The first decision rows, with [`RunOptions::keep_decisions`].
    pub decisions: Option<lahar_reports::KeptDecisions>,
    /// The pods `--explain` named (a job's name names all its pods); the run also
    /// watches their jobs' other pods, to find what keeps a gang waiting.
    pub explained: Vec<(JobId, u16, u32)>,
    /// The row files of a run to memory ([`RunOptions::in_memory`]), byte for
    /// byte what the run would have written; empty otherwise.
    pub tables: lahar_reports::Tables,
    /// summary.json's text, for a run to memory.
    pub summary_json: Option<String>,
}

/// Warning kind: runs of recurring objects their concurrency policy or starting
/// deadline never created.
pub const RECURRING_RUNS_SKIPPED: &str = "recurring-runs-skipped";

/// Warning kind: jobs of a JobFlow never created (a job they depend on did not
/// complete before the run ended).
pub const FLOW_JOBS_NOT_CREATED: &str = "jobflow-jobs-not-created";

/// Warning kind: timeline actions that found no pod or job to act on.
pub const TIMELINE_TARGET_MISSING: &str = "timeline-target-missing";

/// Warning kind: timeline actions that changed nothing, as in Volcano: a job's
/// state ignores them (a suspend of a Restarting or suspended job, a resume of
/// one not Aborted) or the admission webhook refuses the edit (a scale).
pub const TIMELINE_ACTION_IGNORED: &str = "timeline-action-ignored";

/// Warning kind: timeline steps after the run's end (its horizon, or its last
/// job's end), not carried out.
pub const TIMELINE_STEPS_NOT_REACHED: &str = "timeline-steps-not-reached";

/// Warning kind: services (`spec.services`) whose workload never arrived.
pub const SERVICE_WORKLOAD_MISSING: &str = "service-workload-missing";

/// One warning per recurring object whose runs were skipped and per JobFlow with
/// jobs never created; one for the timeline's actions that found nothing.
fn run_warnings(stats: &lahar_core::engine::RunStats) -> Vec<scenario::Warning> {
    let missed = stats.timeline_missed.first().map(|(place, what)| {
        let n = stats.timeline_missed.len() as u64;
        scenario::Warning {
            kind: TIMELINE_TARGET_MISSING,
            count: n,
            file: String::new(),
            at: None,
            path: place.clone(),
            message: format!(
                "{n} timeline action{} found nothing to act on (the first, {what}): not submitted yet, ended, or misnamed",
                if n == 1 { "" } else { "s" }
            ),
            first_of_many: false,
        }
    });
    let ignored = stats.timeline_ignored.first().map(|(place, what)| {
        let n = stats.timeline_ignored.len() as u64;
        scenario::Warning {
            kind: TIMELINE_ACTION_IGNORED,
            count: n,
            file: String::new(),
            at: None,
            path: place.clone(),
            message: format!(
                "{n} timeline action{} changed nothing, as in Volcano (the first, {what})",
                if n == 1 { "" } else { "s" }
            ),
            first_of_many: false,
        }
    });
    let unreached = stats.timeline_unreached.as_ref().map(|(n, place, at, why)| scenario::Warning {
        kind: TIMELINE_STEPS_NOT_REACHED,
        count: *n,
        file: String::new(),
        at: None,
        path: place.clone(),
        message: format!(
            "{n} timeline step{} not carried out: the run ended at {} s ({why}), before {} (the first, at {} s)",
            if *n == 1 { "" } else { "s" },
            stats.end.secs_string(),
            if *n == 1 { "it" } else { "them" },
            at.secs_string()
        ),
        first_of_many: false,
    });
    let services = stats.services_missed.iter().map(|(place, what)| scenario::Warning {
        kind: SERVICE_WORKLOAD_MISSING,
        count: 1,
        file: String::new(),
        at: None,
        path: place.clone(),
        message: format!("{what} (not submitted before the run ended, or misnamed)"),
        first_of_many: false,
    });
    let flows = stats.flows.iter().map(|(flow, c)| {
        let (step, target) = c.first.clone().unwrap_or_default();
        let n = c.never_created;
        scenario::Warning {
            kind: FLOW_JOBS_NOT_CREATED,
            count: n,
            file: String::new(),
            at: None,
            path: flow.to_string(),
            message: format!(
                "{n} job{} never created: a job {} on did not complete before the run ended (the first, \
                 step `{step}`, waits for `{target}`)",
                if n == 1 { " was" } else { "s were" },
                if n == 1 { "it depends" } else { "they depend" },
            ),
            first_of_many: false,
        }
    });
    stats
        .recurring
        .iter()
        .filter(|(_, c)| c.skipped > 0)
        .map(|(series, c)| {
            let first = c.first_skipped.map(|t| t.secs_string()).unwrap_or_default();
            scenario::Warning {
                kind: RECURRING_RUNS_SKIPPED,
                count: c.skipped,
                file: String::new(),
                at: None,
                path: series.to_string(),
                message: format!(
                    "{} run{} never created: an earlier run was still active (concurrencyPolicy Forbid) or the \
                     run was later than startingDeadlineSeconds; the first was due at {first}s",
                    c.skipped,
                    if c.skipped == 1 { " was" } else { "s were" },
                ),
                first_of_many: false,
            }
        })
        .chain(flows)
        .chain(missed)
        .chain(ignored)
        .chain(unreached)
        .chain(services)
        .collect()
}

impl RunReport {
    /// jobs.csv rows, in job id order (built on demand: a run does not hold
    /// them), of the jobs the world still has: every job for a `no_write` run.
    pub fn rows(&self) -> Vec<JobRow> {
        lahar_reports::job_rows(&self.output)
    }
}

/// Builds the engine for a scenario (the scenario is consumed: its cluster moves
/// into the simulated world, and its jobs arrive from the scenario's sources as
/// the run reaches them).
pub fn build_engine(s: Scenario) -> Engine {
    engine_and_health(s).0
}

/// [`build_engine`], with the [`scenario::Health`] that reports a source that
/// failed to make its jobs again (a trace changed since it was validated).
pub fn engine_and_health(s: Scenario) -> (Engine, scenario::Health) {
    engine_with(s, None)
}

/// [`engine_and_health`], scheduled by `policy` instead of the scenario's own
/// scheduler when given (a policy written in Python); the scenario's scheduler
/// still chooses the device models (vGPU, vNPU, NUMA, GPU shares).
fn engine_with(s: Scenario, policy: Option<Box<dyn Scheduler>>) -> (Engine, scenario::Health) {
    let scheduler: Box<dyn Scheduler> = match (policy, &s.scheduler) {
        (Some(p), _) => p,
        (None, SchedulerChoice::Baseline(name)) => {
            lahar_policies::baseline_with(name, s.seed, s.baseline_options.clone()).expect("baseline name validated")
        }
        (None, SchedulerChoice::Volcano(conf)) => Box::new(lahar_policies::volcano::Volcano::new((**conf).clone())),
    };
    let runtime: Box<dyn lahar_core::engine::RuntimeModel> = if s.workload.has_models() {
        let model = lahar_core::comm::CommModel::new(s.comm.constants.clone()).expect("comm constants validated");
        Box::new(
            lahar_core::comm::runtime::CommRuntime::new(model, &s.cluster, Vec::new())
                .with_link_sharing(s.comm.link_sharing),
        )
    } else {
        Box::new(IdealRuntime)
    };
    let (source, health) = s.workload.source();
    let mut world = World::new(s.cluster, s.queues, Vec::new());
    world.set_budgets(s.budgets);
    world.clock_start = s.clock_start;
    if let Some((p, rules)) = s.scheduler.vgpu_policy() {
        world.set_vgpu(p, rules);
    }
    if let Some(p) = s.scheduler.vnpu_policy() {
        world.set_vnpu(p);
    }
    if s.scheduler.models_numa() {
        world.set_numa();
    }
    // A policy of the FGD paper scores against the scenario's typical pods and
    // chooses where shares of one GPU go.
    if let Some(p) = s.scheduler.placement_policy() {
        let rule = lahar_policies::placement::live::share_rule(p, &lahar_core::util::rng::RngStreams::new(s.seed));
        world.set_placement(s.workload.target.clone(), rule);
    }
    let mut engine = Engine::streaming(world, source, scheduler, runtime, s.engine);
    engine.set_reloads(
        s.reloads
            .into_iter()
            .map(|c| -> lahar_core::engine::Reload {
                Box::new(move || Box::new(lahar_policies::volcano::Volcano::new(c.clone())))
            })
            .collect(),
    );
    if let Some(plan) = s.faults {
        engine.set_faults(plan);
    }
    (engine, health)
}

/// What [`run_any`] ran.
pub enum Ran {
    /// A run in time.
    Run(Box<RunReport>),
    /// A placement-only evaluation (`spec.placement`).
    Placement(Box<placement::PlacementReport>),
}

/// Runs a scenario of either mode: [`placement::run::run`] when it has
/// `spec.placement`, else [`run`].
pub fn run_any(s: Scenario, opts: &RunOptions) -> Result<Ran, RunError> {
    match s.placement {
        Some(_) => placement::run::run(s, opts).map(|r| Ran::Placement(Box::new(r))),
        None => run(s, opts).map(|r| Ran::Run(Box::new(r))),
    }
}

/// The facts summary.json records about a run of `s` under `scheduler` (its
/// wall time still 0).
pub(crate) fn run_meta(s: &Scenario, scheduler: String) -> RunMeta {
    RunMeta {
        lahar_version: VERSION.to_string(),
        scenario: s.name.clone(),
        scenario_sha256: s.sha256.clone(),
        seed: s.seed,
        scheduler,
        wall_time_s: 0.0,
        warnings: s
            .warnings
            .iter()
            .map(|w| lahar_reports::WarningRecord {
                kind: w.kind.to_string(),
                count: w.count,
                location: w.location_in(&s.dir),
                path: w.path.clone(),
                message: w.text(),
            })
            .collect(),
        tiers: s.cluster.topology.tier_names(),
        nodes: s.cluster.len(),
        interrupted: None,
        snapshot: false,
    }
}

/// Runs a scenario in time and writes its outputs (a placement scenario is
/// refused: [`run_any`] runs either).
pub fn run(s: Scenario, opts: &RunOptions) -> Result<RunReport, RunError> {
    run_policy(s, opts, None)
}

/// [`run`] under `policy` instead of the scenario's scheduler when given (the
/// Python package's `lahar.run(..., scheduler=...)`); summary.json names it.
pub fn run_policy(
    mut s: Scenario,
    opts: &RunOptions,
    policy: Option<Box<dyn Scheduler>>,
) -> Result<RunReport, RunError> {
    if s.placement.is_some() {
        let why = "a placement scenario (`spec.placement`) runs through lahar::run_any or lahar::placement::run::run";
        return Err(RunError::Input(scenario::ScenarioError::one(&s.name, None, "spec.placement", why)));
    }
    if let Some(n) = opts.sessions {
        s.engine.max_sessions = Some(n);
    }
    s.engine.exhaustive |= opts.exhaustive;
    check_extenders(&s, opts.allow_remote_extender)?;
    let reload = s.engine.timeline.iter().find(|t| matches!(t.op, lahar_core::timeline::Operation::Conf(_)));
    if let (Some(p), Some(step)) = (&policy, reload) {
        let why = format!(
            "reloads a volcano-scheduler.conf, but the run is scheduled by the policy `{}`, which reads no conf",
            p.name()
        );
        return Err(RunError::Input(scenario::ScenarioError::one(&s.name, None, &format!("{}.conf", step.place), why)));
    }
    if opts.in_memory && opts.parquet {
        let why = "a run to memory hands back its CSVs' bytes; Parquet files need an output directory";
        return Err(RunError::Input(scenario::ScenarioError::one(&s.name, None, "", why)));
    }
    if opts.in_memory && (!opts.explain.is_empty() || opts.plots.is_some()) {
        let why = "a run to memory writes no explain.csv and no plots: give it an output directory";
        return Err(RunError::Input(scenario::ScenarioError::one(&s.name, None, "", why)));
    }
    let out_dir = opts.out_dir.clone().unwrap_or_else(|| s.output_dir.clone());
    let scheduler_name = policy.as_ref().map_or_else(|| s.scheduler.name(), |p| p.name().to_string());
    let meta_base = RunMeta { snapshot: opts.snapshot, ..run_meta(&s, scheduler_name) };
    let record = (s.text.clone(), s.conf_text.clone(), s.reloads_text.clone());
    // The pods named, and those watched: every pod of a named pod's job (a gang
    // waits for its members).
    let (explain, watched) = if opts.explain.is_empty() {
        (None, Default::default())
    } else {
        let specs = s.workload.specs();
        let named = resolve_explain(&specs, &opts.explain).map_err(RunError::Input)?;
        let watched = whole_jobs(&named, specs.iter());
        (Some(named), watched)
    };
    // The files are written as the run makes their rows; creating them first also
    // finds an unwritable output directory before any work is done. A reused
    // directory loses lahar's own files of an earlier run first, so its
    // explain.csv, plots or report never sit beside the new outputs.
    let started = Instant::now();
    let (jobs, target) = (s.workload.count, s.workload.target.clone());
    let (mut engine, health) = engine_with(s, policy);
    let writer = if opts.no_write {
        None
    } else {
        let io = |source| RunError::Write { dir: out_dir.clone(), source };
        let dest = if opts.in_memory {
            lahar_reports::Dest::Memory
        } else {
            outdir::claim(
                &out_dir,
                outdir::Kind::Run,
                outdir::Claimant { scenario: Some(&meta_base.scenario), force: opts.force },
            )?;
            lahar_reports::Dest::Dir(&out_dir)
        };
        let sopts = lahar_reports::SummaryOptions {
            faults: engine.has_faults(),
            services: engine.has_services(),
            ..Default::default()
        };
        let mut w =
            lahar_reports::RunWriter::create(dest, engine.world(), target, &sopts, &opts.outputs).map_err(io)?;
        if opts.rows_here {
            w.format_rows_here();
        }
        if !opts.in_memory {
            // What was simulated, kept beside the outputs (lahar report embeds them).
            std::fs::write(out_dir.join(INPUT_SCENARIO), &record.0).map_err(io)?;
            if let Some(conf) = &record.1 {
                std::fs::write(out_dir.join(INPUT_CONF), conf).map_err(io)?;
            }
            if let Some(confs) = &record.2 {
                std::fs::write(out_dir.join(INPUT_TIMELINE_CONFS), confs).map_err(io)?;
            }
        }
        if let Some(n) = opts.keep_decisions {
            w.keep_decisions(n);
        }
        let w = Rc::new(RefCell::new(w));
        engine.set_recorder(Box::new(Rc::clone(&w)));
        Some(w)
    };
    engine.set_stop(opts.stop.clone().unwrap_or_else(interrupt::flag));
    if explain.is_some() {
        let mut ex = Explain::new(watched);
        if let Some((from, until)) = opts.explain_window {
            ex = ex.with_window(from, until);
        }
        engine.set_explain(ex);
    }
    let output = if opts.progress {
        let bar = report_cmd::Progress::new(jobs);
        engine.run_with(|t, done| bar.update(t, done));
        bar.finish();
        engine.finish()
    } else {
        engine.run()
    };
    if let Some(e) = health.failure() {
        return Err(RunError::Source(e));
    }
    let wall = started.elapsed().as_secs_f64();
    let run_warnings = run_warnings(&output.stats);
    let mut meta = RunMeta { wall_time_s: wall, ..meta_base };
    meta.warnings.extend(run_warnings.iter().map(|w| lahar_reports::WarningRecord {
        kind: w.kind.to_string(),
        count: w.count,
        location: w.location(),
        path: w.path.clone(),
        message: w.text(),
    }));
    let interrupted = output.stats.interrupted;
    let mut decisions = None;
    let (mut tables, mut summary_json) = (lahar_reports::Tables::default(), None);
    let summary = match writer {
        // The summary was accumulated as the run went.
        Some(w) => {
            let mut w = Rc::try_unwrap(w).ok().expect("the engine that held the writer is finished").into_inner();
            decisions = w.take_kept_decisions();
            let (summary, t) = w.finish().map_err(|source| RunError::Write { dir: out_dir.clone(), source })?;
            if interrupted {
                meta.interrupted = Some(interrupted_at(&summary));
            }
            if opts.in_memory {
                summary_json = Some(lahar_reports::summary_json(&summary, &meta));
                tables = t;
            } else {
                let io = |source| RunError::Write { dir: out_dir.clone(), source };
                lahar_reports::write_summary(&out_dir, &summary, &meta).map_err(io)?;
            }
            Some(summary)
        }
        None => None,
    };
    let written = summary.is_some() && !opts.in_memory;
    let summary = summary.unwrap_or_else(|| lahar_reports::summarize(&output));
    if interrupted && meta.interrupted.is_none() {
        meta.interrupted = Some(interrupted_at(&summary));
    }
    if written {
        if let Some(named) = &explain {
            let io = |source| RunError::Write { dir: out_dir.clone(), source };
            lahar_reports::write_explain(&out_dir, &output).map_err(io)?;
            // What the terminal shows for the named pods (the verdict and the node
            // × plugin tables), for report.html and for reading later.
            let text = format!("{}\n", operator::explain_report(&output, named));
            lahar_core::util::files::write_atomic(&out_dir.join(outdir::EXPLAIN_TXT), text.as_bytes()).map_err(io)?;
        }
        // An interrupted run ends as soon as its files are whole.
        if let (Some(style), false) = (&opts.plots, interrupted) {
            report_cmd::run_plots(&out_dir, style)
                .map_err(|e| RunError::Plots { dir: out_dir.clone(), msg: e.to_string() })?;
        }
        if opts.parquet {
            // Last: the plots and the report read the CSVs.
            let rows = ["jobs.csv", "pods.csv", "timeseries.csv", "queues.csv", "events.csv", "decisions.csv"];
            lahar_reports::parquet::replace_csvs(&out_dir, &rows, &format!("lahar {VERSION}"))
                .map_err(|source| RunError::Write { dir: out_dir.clone(), source })?;
        }
        outdir::complete(&out_dir).map_err(|source| RunError::Write { dir: out_dir.clone(), source })?;
    }
    Ok(RunReport {
        output,
        summary,
        meta,
        out_dir,
        run_warnings,
        decisions,
        explained: explain.unwrap_or_default(),
        tables,
        summary_json,
    })
}

/// Where a run the interrupt stopped had got to.
fn interrupted_at(summary: &Summary) -> lahar_reports::Interrupted {
    lahar_reports::Interrupted {
        signal: interrupt::signal().unwrap_or("SIGINT").to_string(),
        at_s: summary.sim_time_s,
        jobs_ended: summary.completed + summary.ended_otherwise,
        jobs: summary.jobs,
    }
}

/// Every `extender` plugin of a Volcano conf must have its server answering
/// before the run starts (its calls decide placements): a clear error up front,
/// not a run of failed calls.
/// So must those of a conf the timeline reloads.
fn check_extenders(s: &Scenario, allow_remote: bool) -> Result<(), RunError> {
    let SchedulerChoice::Volcano(conf) = &s.scheduler else { return Ok(()) };
    check_conf_extenders(conf, "spec.scheduler", allow_remote)?;
    // Each conf once, placed at the first step that reloads it.
    let mut first: Vec<Option<&str>> = vec![None; s.reloads.len()];
    for step in &s.engine.timeline {
        if let lahar_core::timeline::Operation::Conf(i) = step.op
            && let Some(at) = first.get_mut(i as usize)
        {
            at.get_or_insert(&step.place);
        }
    }
    for (conf, place) in s.reloads.iter().zip(first) {
        let place = place.map_or_else(|| "spec.timeline".to_string(), |p| format!("{p}.conf"));
        check_conf_extenders(conf, &place, allow_remote)?;
    }
    Ok(())
}

/// [`check_extenders`] for one conf, its errors placed at `place`.
fn check_conf_extenders(
    conf: &lahar_policies::volcano::conf::SchedulerConf,
    place: &str,
    allow_remote: bool,
) -> Result<(), RunError> {
    for (ti, tier) in conf.tiers.iter().enumerate() {
        for (pi, pc) in tier.iter().enumerate() {
            if pc.name != "extender" {
                continue;
            }
            let x = lahar_policies::volcano::plugins::extender::Extender::new(&pc.args);
            let (ep, timeout) = x.endpoint();
            let url = pc.args.str("extender.urlPrefix").unwrap_or_default();
            let refuse = |m: String| {
                RunError::Input(scenario::ScenarioError::one(
                    place,
                    None,
                    &format!("tiers[{ti}].plugins[{pi}].arguments.extender.urlPrefix"),
                    m,
                ))
            };
            match ep.is_loopback() {
                Ok(true) => {}
                Ok(false) if allow_remote => {}
                Ok(false) => {
                    return Err(refuse(format!(
                        "{url} is not on this machine: lahar would send the simulated cluster's state there; pass --allow-remote-extender if you mean it"
                    )));
                }
                Err(e) => return Err(refuse(e)),
            }
            if let Err(e) = ep.reachable(timeout.max(std::time::Duration::from_secs(1))) {
                return Err(refuse(format!("no scheduler extender answers at {url} ({e}); start it before the run")));
            }
        }
    }
    Ok(())
}

/// The scenario text a run simulated (overrides applied), in its directory.
pub const INPUT_SCENARIO: &str = "input-scenario.yaml";
/// The volcano-scheduler.conf a Volcano run used, in its directory.
pub const INPUT_CONF: &str = "input-scheduler.conf";
/// The confs a Volcano run's `spec.timeline` reloads, in its directory.
pub const INPUT_TIMELINE_CONFS: &str = "input-timeline-confs.yaml";

/// Resolves `--explain` names against a scenario's jobs: a pod or a job (every pod
/// of it), as `namespace/name` or a name unique across namespaces. Pods from Pod
/// manifests keep their own names; the others are `<job>-<task>-<index>`; a job
/// from PodGroups or a snapshot is named by its PodGroup. A pod name wins over a
/// job name. An unknown
/// name is an error listing the nearest pod names; an ambiguous one lists its
/// namespaces.
pub fn resolve_explain(jobs: &[JobSpec], names: &[String]) -> Result<Vec<(JobId, u16, u32)>, scenario::ScenarioError> {
    let mut out = Vec::new();
    for arg in names {
        let (ns, name) = match arg.split_once('/') {
            Some((ns, n)) => (Some(ns), n),
            None => (None, arg.as_str()),
        };
        let mut hits: Vec<(JobId, u16, u32)> = Vec::new();
        for (j, spec) in jobs.iter().enumerate() {
            if ns.is_some_and(|ns| ns != &*spec.namespace) {
                continue;
            }
            // Pods read from Pod manifests keep their own names.
            if let Some(names) = &spec.pod_names {
                for (t, list) in names.iter().enumerate() {
                    for (i, n) in list.iter().enumerate() {
                        if n == name {
                            hits.push((JobId(j as u32), t as u16, i as u32));
                        }
                    }
                }
                continue;
            }
            let Some(rest) = name.strip_prefix(spec.name.as_str()).and_then(|r| r.strip_prefix('-')) else { continue };
            for (t, task) in spec.tasks.iter().enumerate() {
                let idx = rest.strip_prefix(&*task.name).and_then(|r| r.strip_prefix('-'));
                // Canonical decimal only, so "w-01" does not alias "w-1".
                if let Some(i) = idx.and_then(|i| i.parse::<u32>().ok().filter(|v| v.to_string() == i))
                    && i < task.replicas
                {
                    hits.push((JobId(j as u32), t as u16, i));
                }
            }
        }
        // Not a pod: a job (a PodGroup's name for PodGroups and snapshots), all its pods.
        if hits.is_empty() {
            let jobs_named: Vec<usize> = (0..jobs.len())
                .filter(|&j| jobs[j].name == name && ns.is_none_or(|ns| ns == &*jobs[j].namespace))
                .collect();
            if let [j] = jobs_named[..] {
                for (t, task) in jobs[j].tasks.iter().enumerate() {
                    out.extend((0..task.replicas).map(|i| (JobId(j as u32), t as u16, i)));
                }
                continue;
            }
            hits.extend(jobs_named.iter().map(|&j| (JobId(j as u32), 0, 0)));
            if hits.len() > 1 {
                let mut all: Vec<String> =
                    hits.iter().map(|&(j, _, _)| lahar_reports::metrics::job_label(&jobs[j.0 as usize])).collect();
                all.sort();
                let m = format!("job name `{arg}` is ambiguous: {}; use namespace/name", all.join(", "));
                return Err(scenario::ScenarioError::one("<command line>", None, "--explain", m));
            }
        }
        let err = |m: String| scenario::ScenarioError::one("<command line>", None, "--explain", m);
        match hits.len() {
            0 => {
                let near = near_pods(jobs, arg);
                let hint = if near.is_empty() { String::new() } else { format!("; nearest: {}", near.join(", ")) };
                return Err(err(format!(
                    "no pod `{arg}` in the scenario, nor a job of that name (pods keep their manifest names; lahar names the others <job>-<task>-<index>){hint}"
                )));
            }
            1 => out.push(hits[0]),
            _ => {
                let mut all: Vec<String> = hits
                    .iter()
                    .map(|&(j, t, i)| {
                        let s = &jobs[j.0 as usize];
                        lahar_reports::metrics::pod_label(s, t, i)
                    })
                    .collect();
                all.sort();
                return Err(err(format!("pod name `{arg}` is ambiguous: {}; use namespace/name", all.join(", "))));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Every replica of the jobs of `named` (job, task, replica), in order.
fn whole_jobs<'a>(
    named: &[(JobId, u16, u32)],
    specs: impl Iterator<Item = &'a JobSpec>,
) -> std::collections::BTreeSet<(JobId, u16, u32)> {
    let jobs: std::collections::BTreeSet<JobId> = named.iter().map(|k| k.0).collect();
    let mut out: std::collections::BTreeSet<(JobId, u16, u32)> = named.iter().copied().collect();
    for (j, spec) in specs.enumerate() {
        let j = JobId(j as u32);
        if jobs.contains(&j) {
            for (t, task) in spec.tasks.iter().enumerate() {
                out.extend((0..task.replicas).map(|i| (j, t as u16, i)));
            }
        }
    }
    out
}

/// Up to five `namespace/name` pod or job names closest to `arg` by edit distance
/// (at most a third of its length), nearest first, then by name.
fn near_pods(jobs: &[JobSpec], arg: &str) -> Vec<String> {
    let limit = (arg.chars().count() / 3).max(2);
    let mut near: Vec<(usize, String)> = Vec::new();
    for spec in jobs {
        let pods = spec.tasks.iter().enumerate().flat_map(|(t, task)| (0..task.replicas).map(move |i| (t, i)));
        for name in std::iter::once(spec.name.clone()).chain(pods.map(|(t, i)| spec.pod_name(t, i))) {
            let full = format!("{}/{}", spec.namespace, name);
            let probe = if arg.contains('/') { &full } else { &name };
            if probe.len().abs_diff(arg.len()) > limit {
                continue;
            }
            let d = edit_distance(probe, arg);
            if d <= limit {
                near.push((d, full));
            }
        }
    }
    near.sort();
    near.dedup();
    near.into_iter().take(5).map(|x| x.1).collect()
}

pub(crate) use lahar_core::util::text::edit_distance;

/// The summary table `lahar run` prints.
pub fn summary_table(r: &RunReport) -> String {
    use comfy_table::{Table, presets::UTF8_BORDERS_ONLY};
    let s = &r.summary;
    // Metrics without samples (no job finished, none started) print n/a, never 0.
    const NA: &str = "n/a";
    let h = |x: Option<f64>| x.map_or(NA.to_string(), |x| format!("{:.2} h", x / 3600.0));
    let r2 = |x: Option<f64>| x.map_or(NA.to_string(), |x| format!("{x:.2}"));
    let of = |d: &Option<lahar_reports::metrics::Dist>, f: fn(&lahar_reports::metrics::Dist) -> f64| d.as_ref().map(f);
    let mut t = Table::new();
    t.load_preset(UTF8_BORDERS_ONLY);
    t.set_header(["metric", "value"]);
    let mut rows: Vec<(&str, String)> = vec![
        ("scenario", format!("{} (seed {})", r.meta.scenario, r.meta.seed)),
        ("scheduler", r.meta.scheduler.clone()),
        ("jobs (completed / unfinished)", format!("{} ({} / {})", s.jobs, s.completed, s.unfinished)),
        (
            "JCT mean / p50 / p99",
            format!(
                "{} / {} / {}",
                h(of(&s.jct_s, |d| d.mean)),
                h(of(&s.jct_s, |d| d.p50)),
                h(of(&s.jct_s, |d| d.p99))
            ),
        ),
        ("queueing delay mean / p90", format!("{} / {}", h(of(&s.wait_s, |d| d.mean)), h(of(&s.wait_s, |d| d.p90)))),
        ("slowdown mean / p99", format!("{} / {}", r2(of(&s.slowdown, |d| d.mean)), r2(of(&s.slowdown, |d| d.p99)))),
        ("makespan", h(s.makespan_s)),
    ];
    if s.gpus_total > 0.0 {
        rows.extend([
            ("GPUs", format!("{}", s.gpus_total)),
            ("GPU allocation rate", format!("{:.1}%", 100.0 * s.gpu_allocation_rate)),
            ("GPU effective utilization", format!("{:.1}%", 100.0 * s.gpu_effective_utilization)),
            ("GPUs held without progress", format!("{:.1}%", 100.0 * s.gpu_time.stalled)),
        ]);
    } else {
        // A cluster without GPUs (an HPC trace): its CPUs are what is used.
        rows.extend([
            ("CPUs", format!("{}", s.cpus_total)),
            ("CPU allocation rate", format!("{:.1}%", 100.0 * s.cpu_allocation_rate)),
        ]);
    }
    rows.push(("preemptions", s.preemptions.to_string()));
    if let Some(f) = &s.faults {
        rows.push(("failures / pods killed", format!("{} / {}", f.failures, f.pods_killed)));
        rows.push(("GPU-hours lost to failures", format!("{:.1}", f.gpu_hours_lost_to_failures)));
        rows.push(("goodput", format!("{:.2}%", 100.0 * f.goodput)));
    }
    rows.extend([
        ("events / sessions", format!("{} / {}", s.events, s.sessions)),
        ("wall time", format!("{:.2} s", r.meta.wall_time_s)),
        ("outputs", r.out_dir.display().to_string()),
    ]);
    for (k, v) in rows {
        t.add_row([k.to_string(), v]);
    }
    t.to_string()
}
