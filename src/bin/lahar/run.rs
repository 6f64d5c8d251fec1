//! `lahar run`, `validate` and `diff`: load a scenario or snapshot (with the
//! command line's overrides), then run it, check it, or run it under two confs.

use crate::args::{OverrideArgs, RunArgs};
use crate::failure::Failure;
use lahar::scenario::Warning;
use lahar_core::util::time::SimTime;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `--outputs LIST` (all files without it).
pub(crate) fn outputs_flag(list: Option<&str>) -> Result<lahar_reports::Outputs, Failure> {
    match list {
        Some(list) => lahar_reports::Outputs::parse(list).map_err(|m| Failure::flag("--outputs", m)),
        None => Ok(lahar_reports::Outputs::ALL),
    }
}

/// `--outputs` given for a placement scenario, whose files it does not choose.
pub(crate) fn outputs_of_placement() -> Failure {
    Failure::flag(
        "--outputs",
        "a placement scenario (spec.placement) writes placements.csv and fragmentation.csv, which --outputs does not choose",
    )
}

/// `lahar run`.
pub(crate) fn run(a: RunArgs) -> Result<ExitCode, Failure> {
    let explain_window =
        a.explain_window.as_deref().map(parse_window).transpose().map_err(|m| Failure::flag("--explain-window", m))?;
    if a.plot.given() && !a.plots {
        return Err(Failure::usage(
            "--plot-style, --plot-size and --plot-font-size shape the plots --plots writes: add --plots",
        ));
    }
    let outputs = outputs_flag(a.outputs.as_deref())?;
    if a.plots && !(outputs.jobs && outputs.timeseries) {
        return Err(Failure::flag(
            "--outputs",
            "--plots draws from jobs.csv and timeseries.csv: keep jobs and timeseries in --outputs, or drop --plots",
        ));
    }
    let s = a.overrides.load_run(a.scenario.as_deref(), a.snapshot.as_deref(), a.conf.as_deref(), a.sessions)?;
    if a.outputs.is_some() && s.placement.is_some() {
        return Err(outputs_of_placement());
    }
    let parquet = a.format == "parquet";
    if parquet && s.placement.is_some() {
        return Err(Failure::flag(
            "--format",
            "a placement scenario writes placements.csv and fragmentation.csv, as CSV only: drop --format parquet",
        ));
    }
    if a.strict && !s.warnings.is_empty() {
        return Err(Failure::strict(&s.warnings));
    }
    let warnings = s.warnings.clone();
    let snapshot = a.snapshot.is_some();
    let quiet = a.quiet;
    let opts = lahar::RunOptions {
        out_dir: a.out,
        sessions: a.sessions,
        no_write: false,
        progress: !quiet,
        plots: a.plots.then(|| a.plot.style()),
        explain: a.explain,
        explain_window,
        exhaustive: a.exhaustive,
        allow_remote_extender: a.allow_remote_extender,
        force: a.force,
        keep_decisions: snapshot.then_some(lahar::operator::DECISIONS_SHOWN),
        snapshot,
        outputs,
        in_memory: false,
        stop: None,
        parquet,
        // One run: the second core formats its rows.
        rows_here: false,
    };
    install_interrupt();
    let report = match lahar::run_any(s, &opts)? {
        lahar::Ran::Placement(report) => {
            if !quiet {
                outln!("{}", lahar::placement::table(&report));
            }
            print_warnings(&warnings);
            return Ok(ExitCode::SUCCESS);
        }
        lahar::Ran::Run(report) => report,
    };
    if !quiet && snapshot {
        // An operator's question: what the sessions did, not research metrics.
        if let Some(k) = &report.decisions {
            outln!("{}", lahar::operator::decisions_table(k));
        }
        let sessions = report.summary.sessions;
        outln!("{}", lahar::operator::snapshot_summary(&report.output, report.decisions.as_ref(), sessions));
        outln!("outputs: {}", report.out_dir.display());
    } else if !quiet {
        outln!("{}", lahar::summary_table(&report));
        for line in lahar::explain_summary::lines(&report.output, &report.explained) {
            outln!("explain: {line}");
        }
    }
    if !quiet && !report.explained.is_empty() {
        outln!("\n{}", lahar::operator::explain_report(&report.output, &report.explained));
    }
    let all: Vec<Warning> = warnings.iter().chain(&report.run_warnings).cloned().collect();
    print_warnings(&all);
    if let Some(i) = &report.meta.interrupted {
        errln!(
            "interrupted ({}) at simulated time {:.2} h, {} of {} jobs ended: the files in {} are whole up to there and summary.json says `interrupted`",
            i.signal,
            i.at_s / 3600.0,
            i.jobs_ended,
            i.jobs,
            report.out_dir.display()
        );
        return Ok(ExitCode::from(lahar::interrupt::exit_code()));
    }
    // The process exits next and the OS takes the memory back at once; freeing a
    // long run's millions of allocations one by one took half a second at a
    // million jobs.
    std::mem::forget(report);
    Ok(ExitCode::SUCCESS)
}

/// `lahar validate`.
pub(crate) fn validate(
    scenario: Option<PathBuf>,
    snapshot: Option<PathBuf>,
    conf: Option<PathBuf>,
    overrides: &OverrideArgs,
    strict: bool,
) -> Result<ExitCode, Failure> {
    let s = overrides.load_run(scenario.as_deref(), snapshot.as_deref(), conf.as_deref(), None)?;
    if strict && !s.warnings.is_empty() {
        return Err(Failure::strict(&s.warnings));
    }
    let file = scenario.or(snapshot).unwrap_or_default();
    match &s.placement {
        Some(p) => outln!(
            "{}: ok (placement: {} nodes, {} pods listed, demand {}, policy {})",
            file.display(),
            s.cluster.len(),
            p.pods.len(),
            p.demand,
            p.policy.name()
        ),
        None => outln!(
            "{}: ok ({} nodes, {} queues, {} jobs)",
            file.display(),
            s.cluster.len(),
            s.queues.len(),
            s.workload.count
        ),
    }
    print_warnings(&s.warnings);
    Ok(ExitCode::SUCCESS)
}

/// `lahar diff`: both sides loaded before either runs (a bad input fails first).
pub(crate) fn diff(
    scenario: Option<&Path>,
    snapshot: Option<&Path>,
    conf: &[PathBuf],
    sessions: Option<u64>,
    overrides: &OverrideArgs,
) -> Result<ExitCode, Failure> {
    let (a, b) = match conf {
        [b] => (None, b),
        [a, b] => (Some(a), b),
        _ => {
            return Err(Failure::flag(
                "--conf",
                format!("give one conf (B, against the input's own scheduler) or two (A, then B), not {}", conf.len()),
            ));
        }
    };
    let load = |c: Option<&PathBuf>| overrides.load_run(scenario, snapshot, c.map(PathBuf::as_path), sessions);
    let (sa, sb) = (load(a), load(Some(b)));
    let (sa, sb) = (sa?, sb?);
    let name_a =
        a.map_or_else(|| format!("the input's scheduler ({})", sa.scheduler.name()), |p| p.display().to_string());
    let name_b = b.display().to_string();
    let (sa, sb) = (lahar::diff::side(sa, name_a), lahar::diff::side(sb, name_b));
    let (sa, sb) = (sa?, sb?);
    outln!("{}", lahar::diff::render(&sa, &sb).0);
    Ok(ExitCode::SUCCESS)
}

/// SIGINT and SIGTERM end `run` and `sweep` cleanly ([`lahar::interrupt`]).
pub(crate) fn install_interrupt() {
    if let Err(e) = lahar::interrupt::install() {
        errln!("warning: cannot handle SIGINT/SIGTERM ({e}): an interrupt will cut the outputs short");
    }
}

/// Prints the scenario's warnings once, at the end, on stderr.
pub(crate) fn print_warnings(ws: &[Warning]) {
    for w in ws {
        errln!("warning: {w}");
    }
    if ws.len() > 1 {
        errln!("{} warnings", ws.len());
    }
}

/// `FROM..UNTIL` of simulated durations, either side optional.
fn parse_window(text: &str) -> Result<(SimTime, SimTime), String> {
    let (a, b) = text.split_once("..").ok_or_else(|| format!("`{text}`: expected FROM..UNTIL, e.g. 2h..3h"))?;
    let at = |s: &str, none: u64| -> Result<SimTime, String> {
        if s.trim().is_empty() {
            return Ok(SimTime(none));
        }
        lahar_core::util::time::parse_duration(s.trim())
            .map(|d| SimTime(d.micros()))
            .map_err(|e| format!("`{text}`: {e}"))
    };
    let (from, until) = (at(a, 0)?, at(b, u64::MAX)?);
    if from >= until {
        return Err(format!("`{text}`: the window is empty (FROM must be before UNTIL)"));
    }
    Ok((from, until))
}
