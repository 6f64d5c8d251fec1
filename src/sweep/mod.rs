//! `lahar sweep`: a grid of scenarios (policy × cluster × load × seed...) run in
//! parallel, sharded over array jobs of Slurm, Kubernetes or Volcano, resumable, and
//! merged into one table (docs/sweeps.md).
//!
//! A sweep directory holds `sweep.json` (the sweep's identity and cells),
//! `cells/<cell-id>/` (each cell's run outputs, or `error.txt`), `sweep.csv`,
//! `summary.csv` and `plots/`. The tables and plots are built from the directory
//! alone, so a single run, a resumed run and a merge of shards write the same bytes.

pub mod error;
pub mod exec;
pub mod manifest;
pub mod report;
pub mod spec;
pub mod tables;

pub use error::ExecError;
pub use exec::{ExecOptions, ExecOutcome, Shard};
pub use spec::{Sweep, load, load_str};

use manifest::Manifest;
use std::path::{Path, PathBuf};
use tables::CellState;

/// What a finished sweep (or merge) wrote.
#[derive(Clone, Debug, Default)]
pub struct Written {
    /// Cells in the sweep.
    pub cells: usize,
    /// Finished cells.
    pub ok: usize,
    /// Failed cells: id and error.
    pub failed: Vec<(String, String)>,
    /// Cells with no output in the directory.
    pub missing: Vec<String>,
}

fn written(m: &Manifest, states: &[CellState]) -> Written {
    let mut w = Written { cells: m.cells.len(), ..Default::default() };
    for (c, s) in m.cells.iter().zip(states) {
        match s {
            CellState::Ok(_) => w.ok += 1,
            CellState::Failed(e) => w.failed.push((c.id.clone(), e.clone())),
            CellState::Missing => w.missing.push(c.id.clone()),
        }
    }
    w
}

/// Runs a sweep: its cells (this shard's), then — unless sharded or interrupted
/// ([`ExecOutcome::interrupted`]) — the tables and plots over every cell.
pub fn run(sweep: &Sweep, opts: &ExecOptions) -> Result<(ExecOutcome, Option<Written>), ExecError> {
    let outcome = exec::run(sweep, opts)?;
    // Tables over some cells would pass for the sweep's: an interrupted sweep has
    // none until `--resume` finishes it.
    if opts.shard.is_some() || outcome.interrupted > 0 {
        return Ok((outcome, None));
    }
    let m = Manifest::of(sweep);
    let states = tables::write(&opts.out, &m, &opts.plot_style)?;
    Ok((outcome, Some(written(&m, &states))))
}

/// Joins shard directories into `out`: every cell directory is copied in (cells
/// already in `out` are kept), then the tables and plots are written exactly as a
/// single-machine run writes them (the plots in `style`).
pub fn merge(dirs: &[PathBuf], out: &Path, style: &lahar_reports::plots::PlotStyle) -> Result<Written, ExecError> {
    let mut manifest: Option<Manifest> = None;
    for d in dirs {
        let m = Manifest::read(d).map_err(ExecError::Mismatch)?;
        match &manifest {
            Some(first) if first.sweep_sha256 != m.sweep_sha256 => {
                return Err(ExecError::Mismatch(format!(
                    "{} holds another sweep than {} (sweep `{}` vs `{}`)",
                    d.display(),
                    dirs[0].display(),
                    m.name,
                    first.name
                )));
            }
            Some(_) => {}
            None => manifest = Some(m),
        }
    }
    let m = manifest.ok_or_else(|| ExecError::Mismatch("no shard directory given".into()))?;
    crate::outdir::claim(out, crate::outdir::Kind::Sweep, Default::default())?;
    let cells = out.join("cells");
    std::fs::create_dir_all(&cells).map_err(error::io(&cells))?;
    m.claim(out)?;
    for d in dirs {
        if same_dir(d, out) {
            continue;
        }
        for c in &m.cells {
            let from = d.join("cells").join(&c.id);
            let to = cells.join(&c.id);
            let done = |p: &Path| manifest::finished(p) || p.join("error.txt").is_file();
            // A finished cell beats a failed one; the first shard's copy wins otherwise.
            if done(&from) && (!done(&to) || (manifest::finished(&from) && !manifest::finished(&to))) {
                if to.exists() {
                    std::fs::remove_dir_all(&to).map_err(error::io(&to))?;
                }
                copy_dir(&from, &to)?;
            }
        }
    }
    let states = tables::write(out, &m, style)?;
    Ok(written(&m, &states))
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), ExecError> {
    std::fs::create_dir_all(to).map_err(error::io(to))?;
    for e in std::fs::read_dir(from).map_err(error::io(from))? {
        let e = e.map_err(error::io(from))?;
        let target = to.join(e.file_name());
        if e.file_type().map_err(error::io(from))?.is_dir() {
            copy_dir(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), &target).map_err(error::io(&target))?;
        }
    }
    Ok(())
}
