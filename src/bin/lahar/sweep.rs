//! `lahar sweep` and `lahar sweep merge`: run a sweep's cells (sharded,
//! resumable) or join shard directories, and say what became of every cell.

use crate::args::{SweepArgs, SweepCommand};
use crate::failure::Failure;
use std::process::ExitCode;

/// `lahar sweep`: exit 1 when a cell failed or has no outputs.
pub(crate) fn sweep(a: SweepArgs) -> Result<ExitCode, Failure> {
    use lahar::sweep::Written;
    let tell = |w: &Written, out: &std::path::Path| {
        for (id, e) in &w.failed {
            errln!("error: cell {id} failed: {}", e.lines().next().unwrap_or_default());
        }
        if !w.missing.is_empty() {
            errln!(
                "warning: {} cells have no outputs (first: {}): not run, or their shard was not merged",
                w.missing.len(),
                w.missing[0]
            );
        }
        if !a.quiet {
            outln!(
                "{}: {} cells, {} ok, {} failed, {} missing (sweep.csv, summary.csv, plots/)",
                out.display(),
                w.cells,
                w.ok,
                w.failed.len(),
                w.missing.len()
            );
        }
        if w.failed.is_empty() && w.missing.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) }
    };
    if let Some(SweepCommand::Merge { dirs, out, plot }) = &a.command {
        let w = lahar::sweep::merge(dirs, out, &plot.style())?;
        return Ok(tell(&w, out));
    }
    let (Some(file), Some(out)) = (&a.sweep, &a.out) else { unreachable!("clap requires both") };
    let sweep = lahar::sweep::load(file)?;
    let outputs = crate::run::outputs_flag(a.outputs.as_deref())?;
    // Every cell shares the base scenario's kind: the first says it.
    if a.outputs.is_some()
        && let Some(c) = sweep.cells().first()
        && sweep.scenario(c).is_ok_and(|s| s.placement.is_some())
    {
        return Err(crate::run::outputs_of_placement());
    }
    let shard = match &a.shard {
        Some(t) => Some(lahar::sweep::Shard::parse(t).map_err(Failure::usage)?),
        None => {
            let vars: Vec<(String, String)> = std::env::vars().collect();
            lahar::sweep::Shard::from_env(&vars, a.shards.map(|n| n as usize)).map_err(Failure::usage)?
        }
    };
    crate::run::install_interrupt();
    let opts = lahar::sweep::ExecOptions {
        out: out.clone(),
        jobs: a.jobs.map(|n| n as usize),
        resume: a.resume,
        shard,
        progress: !a.quiet,
        plot_style: a.plot.style(),
        outputs,
        stop: None,
    };
    let ran = lahar::sweep::run(&sweep, &opts)?;
    let stale = &ran.0.stale;
    if let Some(first) = stale.first() {
        errln!(
            "warning: {} finished cells (the first `{first}`) hold a summary.json of another scenario or seed (edited, or another sweep's): run again",
            stale.len()
        );
    }
    match ran {
        (o, Some(w)) => {
            if !a.quiet && o.kept > 0 {
                outln!("resumed: {} cells kept, {} run", o.kept, o.ran);
            }
            Ok(tell(&w, out))
        }
        (o, None) => {
            for (id, e) in &o.failed {
                errln!("error: cell {id} failed: {}", e.lines().next().unwrap_or_default());
            }
            if o.interrupted > 0 {
                errln!(
                    "interrupted ({}): {} cells finished and kept, {} not run (nothing of them is left); `lahar sweep --resume` with the same sweep and --out runs them",
                    lahar::interrupt::signal().unwrap_or("SIGINT"),
                    o.kept + o.ran,
                    o.interrupted
                );
                return Ok(ExitCode::from(lahar::interrupt::exit_code()));
            }
            if !a.quiet {
                let s = shard.expect("sharded");
                outln!(
                    "{}: shard {s}: {} cells ({} run, {} kept, {} failed); join the shards with `lahar sweep merge`",
                    out.display(),
                    o.cells,
                    o.ran,
                    o.kept,
                    o.failed.len()
                );
            }
            Ok(if o.failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
    }
}
