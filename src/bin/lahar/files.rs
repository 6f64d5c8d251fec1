//! The commands over files lahar or others wrote: `check`, `compare`, `report`
//! (run and sweep directories), `trace` (recorded traces) and `nccl` (the
//! collective cost model's tables).

use crate::args::{CheckFormat, CompareFormat, NcclArgs, PlotArgs, TraceCommand};
use crate::failure::Failure;
use lahar::CmdError;
use lahar::scenario::ScenarioError;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `lahar check`: write a baseline, or judge a run against one (exit 1 when a
/// headline metric moved in its bad direction beyond tolerance).
pub(crate) fn check(
    baseline: Option<PathBuf>,
    write_baseline: Option<PathBuf>,
    run_dir: &Path,
    tolerance: &[String],
    markdown: bool,
) -> Result<ExitCode, Failure> {
    if let Some(file) = write_baseline {
        let s = lahar::check::write_baseline(&file, run_dir)?;
        outln!("{}: baseline of {} ({})", file.display(), run_dir.display(), s.extent());
        return Ok(ExitCode::SUCCESS);
    }
    // clap requires one of the two.
    let file = baseline.ok_or_else(|| CmdError::Input("give --baseline FILE or --write-baseline FILE".into()))?;
    let c = lahar::check::check(&file, run_dir, tolerance)?;
    if let Some(what) = &c.other_inputs {
        errln!(
            "warning: the baseline and the run are of different inputs ({what}): the check compares two experiments; write the baseline again if the inputs changed on purpose"
        );
    }
    if markdown {
        out!("{}\n", c.to_markdown());
    } else {
        outln!("{}", c.to_terminal());
    }
    outln!("{}", c.verdict_line());
    Ok(if c.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `lahar check --format`.
pub(crate) fn markdown(format: CheckFormat, flag: bool) -> bool {
    flag || format == CheckFormat::Markdown
}

/// `lahar compare`.
pub(crate) fn compare(
    dirs: &[PathBuf],
    out: &Path,
    format: CompareFormat,
    plot: &PlotArgs,
) -> Result<ExitCode, Failure> {
    let c = lahar::report_cmd::compare(dirs, out, &plot.style())?;
    match format {
        CompareFormat::Table => outln!("{}", c.to_terminal()),
        CompareFormat::Markdown => out!("{}", c.to_markdown()),
        CompareFormat::Csv => out!("{}", c.to_csv()),
    }
    Ok(ExitCode::SUCCESS)
}

/// `lahar report`: one report.html for runs, or a sweep's report.
pub(crate) fn report(dirs: &[PathBuf], out: Option<&Path>, plot: &PlotArgs) -> Result<ExitCode, Failure> {
    let path = if let [dir] = dirs
        && dir.join("sweep.json").is_file()
    {
        if plot.given() {
            return Err(Failure::usage(format!(
                "{}: a sweep's report shows the plots the sweep drew; draw them in another style with `lahar sweep ... --plot-style`",
                dir.display()
            )));
        }
        lahar::sweep::report::write(dir, out).map_err(|e| Failure::usage(e.to_string()))?
    } else {
        lahar::report_cmd::report(dirs, out, &plot.style())?
    };
    outln!("{}", path.display());
    Ok(ExitCode::SUCCESS)
}

/// `lahar trace inspect` and `lahar trace convert`.
pub(crate) fn trace(t: TraceCommand) -> Result<ExitCode, Failure> {
    match t {
        TraceCommand::Inspect { trace, json } => {
            let args: lahar::trace_cmd::TraceArgs = trace.into();
            if let Some(f) = lahar::trace_cmd::request_format(&args) {
                let i = lahar::trace_cmd::inspect_requests(&args, f)?;
                if json {
                    outln!("{}", i.to_json());
                } else {
                    out!("{}", i.to_text());
                }
                return Ok(ExitCode::SUCCESS);
            }
            let i = lahar::trace_cmd::inspect(&args)?;
            if json {
                outln!("{}", i.to_json());
            } else {
                out!("{}", i.to_text());
            }
        }
        TraceCommand::Convert { trace, out } => {
            let r = lahar::trace_cmd::convert(&trace.into(), &out)?;
            outln!("{}: {} jobs ({} rows read, {} skipped)", out.display(), r.jobs, r.rows_read, r.skipped_total());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `lahar nccl`: a cost table, or the model on every row of a calibration CSV.
pub(crate) fn nccl(a: NcclArgs) -> Result<ExitCode, Failure> {
    let model = match &a.constants {
        None => lahar_core::comm::CommModel::default(),
        Some(f) => lahar::scenario::load_constants(f).and_then(|c| {
            lahar_core::comm::CommModel::new(c)
                .map_err(|e| ScenarioError::one(&f.display().to_string(), None, "constants", e.to_string()))
        })?,
    };
    if let Some(rows) = &a.rows {
        lahar::nccl::rows(&model, rows, a.out.as_deref())?;
        return Ok(ExitCode::SUCCESS);
    }
    let size = |s: &str, flag: &str| lahar::nccl::parse_size(s).map_err(|m| Failure::flag(flag, m));
    let (min_bytes, max_bytes) = (size(&a.min_bytes, "--min-bytes"), size(&a.max_bytes, "--max-bytes"));
    let args = lahar::nccl::TableArgs {
        gpu: a.gpu,
        intra: a.intra,
        gpus_per_node: a.gpus_per_node,
        nodes: a.nodes,
        nic_gbps_per_gpu: a.nic_gbps,
        net: a.net,
        collective: a.collective,
        algo: a.algo,
        min_bytes: min_bytes?,
        max_bytes: max_bytes?,
        factor: a.factor,
        tier: a.tier,
        oversubscription: a.oversubscription,
    };
    out!("{}", lahar::nccl::table(&model, &args)?);
    Ok(ExitCode::SUCCESS)
}
