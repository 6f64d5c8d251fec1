//! Running a sweep's cells: in parallel on rayon, each into `cells/<id>/` through a
//! temporary directory renamed into place (a killed sweep loses no finished cell),
//! a shard at a time, resumable.

use super::error::{ExecError, io};
use super::manifest::{Manifest, finished};
use super::spec::{Cell, Sweep};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A deterministic subset of the cells: cell `i` belongs to shard `i mod n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard, `0 ≤ k < n` (written `k + 1` on the command line and in
    /// messages: see [`Shard::parse`] and its `Display`).
    pub k: usize,
    /// Number of shards.
    pub n: usize,
}

impl std::fmt::Display for Shard {
    /// `K/N` with K from 1, as `--shard` takes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k + 1, self.n)
    }
}

impl Shard {
    /// Parses `K/N`, K counted from 1 as every sharding CLI counts (Jest,
    /// Playwright, cargo-nextest): `1/4` is the first of four shards.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let (k, n) = text.split_once('/').ok_or_else(|| format!("--shard `{text}`: expected K/N, e.g. 1/4"))?;
        let k: usize = k.trim().parse().map_err(|_| format!("--shard `{text}`: K is not a number"))?;
        let n: usize = n.trim().parse().map_err(|_| format!("--shard `{text}`: N is not a number"))?;
        if n == 0 {
            return Err(format!("--shard `{text}`: the number of shards must be at least 1"));
        }
        if k == 0 || k > n {
            return Err(format!("--shard `{text}`: shard {k} does not exist: shards are numbered 1 to {n}"));
        }
        Ok(Shard { k: k - 1, n })
    }

    /// An array job's shard from its own 0-based index `k` of `n`.
    fn new(k: usize, n: usize) -> Result<Shard, String> {
        if n == 0 {
            return Err("the number of shards must be at least 1".into());
        }
        if k >= n {
            return Err(format!("index {k} does not exist: indices run from 0 to {}", n - 1));
        }
        Ok(Shard { k, n })
    }

    /// Whether cell `index` is this shard's.
    pub fn has(&self, index: usize) -> bool {
        index % self.n == self.k
    }

    /// The shard an array job gives this process, from its environment: Slurm job
    /// arrays (`SLURM_ARRAY_TASK_ID` − `SLURM_ARRAY_TASK_MIN` of
    /// `SLURM_ARRAY_TASK_COUNT`), Kubernetes Indexed Jobs (`JOB_COMPLETION_INDEX`)
    /// and Volcano Jobs (`VC_TASK_INDEX`; the count from the svc plugin's only
    /// `VC_<TASK>_NUM`). `shards` (the `--shards` flag, else `LAHAR_SHARDS`) gives
    /// or overrides the count.
    pub fn from_env(vars: &[(String, String)], shards: Option<usize>) -> Result<Option<Shard>, String> {
        let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.trim().to_string());
        let num = |name: &str, v: String| v.parse::<usize>().map_err(|_| format!("{name}=`{v}` is not a number"));
        let count = match shards {
            Some(n) => Some(n),
            None => get("LAHAR_SHARDS").map(|v| num("LAHAR_SHARDS", v)).transpose()?,
        };
        let need = |from: &str| {
            count.ok_or_else(|| {
                format!("{from} is set but the number of shards is not: pass --shards N or set LAHAR_SHARDS")
            })
        };
        if let Some(id) = get("SLURM_ARRAY_TASK_ID") {
            let id = num("SLURM_ARRAY_TASK_ID", id)?;
            let min = get("SLURM_ARRAY_TASK_MIN").map(|v| num("SLURM_ARRAY_TASK_MIN", v)).transpose()?.unwrap_or(0);
            let n = match count {
                Some(n) => n,
                None => match get("SLURM_ARRAY_TASK_COUNT") {
                    Some(c) => num("SLURM_ARRAY_TASK_COUNT", c)?,
                    None => need("SLURM_ARRAY_TASK_ID")?,
                },
            };
            let k = id.checked_sub(min).ok_or("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN")?;
            return Shard::new(k, n).map(Some).map_err(|m| format!("Slurm array task: {m}"));
        }
        if let Some(i) = get("JOB_COMPLETION_INDEX") {
            let k = num("JOB_COMPLETION_INDEX", i)?;
            return Shard::new(k, need("JOB_COMPLETION_INDEX")?).map(Some).map_err(|m| format!("Indexed Job: {m}"));
        }
        if let Some(i) = get("VC_TASK_INDEX") {
            let k = num("VC_TASK_INDEX", i)?;
            let n = match count {
                Some(n) => n,
                None => {
                    let nums: Vec<&(String, String)> =
                        vars.iter().filter(|(n, _)| n.starts_with("VC_") && n.ends_with("_NUM")).collect();
                    match nums.as_slice() {
                        [(name, v)] => num(name, v.clone())?,
                        [] => need("VC_TASK_INDEX")?,
                        _ => return Err("several VC_<task>_NUM variables: pass --shards N or set LAHAR_SHARDS".into()),
                    }
                }
            };
            return Shard::new(k, n).map(Some).map_err(|m| format!("Volcano Job task: {m}"));
        }
        Ok(None)
    }
}

/// How to run a sweep.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// Output directory.
    pub out: PathBuf,
    /// Cells run at once (default: all cores).
    pub jobs: Option<usize>,
    /// Run only cells without a finished directory.
    pub resume: bool,
    /// Run only this shard's cells.
    pub shard: Option<Shard>,
    /// Draw a progress bar (only on a terminal).
    pub progress: bool,
    /// How the sweep's plots are drawn.
    pub plot_style: lahar_reports::plots::PlotStyle,
    /// Which row files each cell writes (its summary always: the sweep's tables
    /// are built from it).
    pub outputs: lahar_reports::Outputs,
    /// The stop flag the cells watch (the Python package's Ctrl-C); `None`: the
    /// process's signal flag ([`crate::interrupt::flag`]).
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// What a sweep run did.
#[derive(Clone, Debug, Default)]
pub struct ExecOutcome {
    /// Cells of this shard.
    pub cells: usize,
    /// Cells run now.
    pub ran: usize,
    /// Cells found finished and kept (`--resume`).
    pub kept: usize,
    /// Cells found finished whose summary.json is not of this cell's scenario
    /// and seed (edited, or another sweep's): run again (`--resume`).
    pub stale: Vec<String>,
    /// Failed cells: id and error.
    pub failed: Vec<(String, String)>,
    /// Cells an interrupt stopped or kept from starting: nothing of them is left,
    /// and `--resume` runs them.
    pub interrupted: usize,
}

/// Runs the cells of `sweep` that this shard owns and that are not finished.
pub fn run(sweep: &Sweep, opts: &ExecOptions) -> Result<ExecOutcome, ExecError> {
    crate::outdir::claim(&opts.out, crate::outdir::Kind::Sweep, Default::default())?;
    let cells_dir = opts.out.join("cells");
    std::fs::create_dir_all(&cells_dir).map_err(io(&cells_dir))?;
    let manifest = Manifest::of(sweep);
    manifest.claim(&opts.out)?;
    let mine: Vec<Cell> = sweep.cells().into_iter().filter(|c| opts.shard.is_none_or(|s| s.has(c.index))).collect();
    let mut outcome = ExecOutcome { cells: mine.len(), ..Default::default() };
    let mut todo = Vec::new();
    for c in mine {
        let dir = cells_dir.join(&c.id);
        // Temporary directories of a killed run of this cell go first.
        remove_temporaries(&cells_dir, &c.id)?;
        if opts.resume && finished(&dir) {
            if summary_is_the_cells(sweep, &c, &dir) {
                outcome.kept += 1;
                continue;
            }
            outcome.stale.push(c.id.clone());
        }
        todo.push(c);
    }
    let threads = opts.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| ExecError::Io { path: opts.out.clone(), source: std::io::Error::other(e) })?;
    let bar = bar(todo.len(), opts.progress);
    let lines = opts.progress.then(crate::report_cmd::LogLines::for_log).flatten();
    let done = AtomicUsize::new(0);
    let failures = AtomicUsize::new(0);
    let stop = opts.stop.clone().unwrap_or_else(crate::interrupt::flag);
    let results: Vec<Result<CellEnd, ExecError>> = pool.install(|| {
        use rayon::prelude::*;
        todo.par_iter()
            .with_max_len(1)
            .map(|c| {
                // After an interrupt no further cell starts.
                if stop.load(Ordering::Relaxed) {
                    return Ok(CellEnd::Interrupted);
                }
                let r = run_cell(sweep, c, &cells_dir, &opts.outputs, &stop, threads > 1);
                if matches!(r, Ok(CellEnd::Failed(_))) {
                    let f = failures.fetch_add(1, Ordering::Relaxed) + 1;
                    bar.set_message(format!("{f}"));
                }
                bar.inc(1);
                if let Some(l) = &lines {
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    let f = failures.load(Ordering::Relaxed);
                    l.tick(d, todo.len(), || format!("{d}/{} cells done, {f} failed", todo.len()));
                }
                r
            })
            .collect()
    });
    bar.finish_and_clear();
    for (c, r) in todo.iter().zip(results) {
        match r? {
            CellEnd::Done => outcome.ran += 1,
            CellEnd::Failed(e) => {
                outcome.failed.push((c.id.clone(), e));
                outcome.ran += 1;
            }
            CellEnd::Interrupted => outcome.interrupted += 1,
        }
    }
    Ok(outcome)
}

fn bar(n: usize, show: bool) -> indicatif::ProgressBar {
    let bar = if show {
        crate::report_cmd::terminal_bar(n, "[{elapsed_precise}] {bar:40} {pos}/{len} cells, {msg} failed, ETA {eta}")
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_message("0");
    bar
}

fn remove_temporaries(cells_dir: &Path, id: &str) -> Result<(), ExecError> {
    let prefix = format!(".tmp-{id}-");
    for e in std::fs::read_dir(cells_dir).map_err(io(cells_dir))? {
        let e = e.map_err(io(cells_dir))?;
        if e.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_dir_all(e.path()).map_err(io(&e.path()))?;
        }
    }
    Ok(())
}

/// What became of a cell.
enum CellEnd {
    /// It ran to its end (summary.json in its directory).
    Done,
    /// It failed: the error (also in its directory's error.txt).
    Failed(String),
    /// An interrupt stopped it or kept it from starting: it left nothing.
    Interrupted,
}

/// True if the summary.json in `dir` (read back, so checked) names this cell's
/// scenario — its sha256, as [`Sweep::scenario`] makes it — and its seed.
fn summary_is_the_cells(sweep: &Sweep, cell: &Cell, dir: &Path) -> bool {
    let Ok(s) = sweep.scenario(cell) else { return false };
    let Ok(text) = lahar_core::util::files::read_to_string(&dir.join("summary.json")) else { return false };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return false };
    v.get("scenario_sha256").and_then(serde_json::Value::as_str) == Some(s.sha256.as_str())
        && v.get("seed").and_then(serde_json::Value::as_u64) == Some(s.seed)
        && v.get("metrics").is_some_and(serde_json::Value::is_object)
}

/// Runs one cell into a temporary directory and renames it into place; an
/// interrupted cell's temporary directory (lahar's own) is removed instead.
fn run_cell(
    sweep: &Sweep,
    cell: &Cell,
    cells_dir: &Path,
    outputs: &lahar_reports::Outputs,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    rows_here: bool,
) -> Result<CellEnd, ExecError> {
    let tmp = cells_dir.join(format!(".tmp-{}-{}", cell.id, std::process::id()));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| -> Result<bool, String> {
        let s = sweep.scenario(cell).map_err(|e| e.to_string())?;
        let opts = crate::RunOptions {
            out_dir: Some(tmp.clone()),
            outputs: *outputs,
            stop: Some(std::sync::Arc::clone(stop)),
            // Cells run side by side on every core: none is spare for their rows.
            rows_here,
            ..Default::default()
        };
        let ran = crate::run_any(s, &opts).map_err(|e| e.to_string())?;
        Ok(matches!(ran, crate::Ran::Run(r) if r.output.stats.interrupted))
    }));
    if matches!(result, Ok(Ok(true))) {
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(io(&tmp))?;
        }
        return Ok(CellEnd::Interrupted);
    }
    let failure = match result {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => Some(e),
        Err(p) if p.is::<lahar_policies::volcano::external::PluginFailure>() => {
            p.downcast_ref::<lahar_policies::volcano::external::PluginFailure>().map(|f| f.0.clone())
        }
        Err(p) => {
            let what =
                p.downcast_ref::<&str>().map(ToString::to_string).or_else(|| p.downcast_ref::<String>().cloned());
            Some(format!("internal error (a bug in lahar; please report it): {}", what.unwrap_or_default()))
        }
    };
    if let Some(e) = &failure {
        // Whatever the failed run wrote is replaced by the error alone.
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
        std::fs::write(tmp.join("error.txt"), format!("{e}\n")).map_err(io(&tmp))?;
    }
    let dir = cells_dir.join(&cell.id);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
    }
    std::fs::rename(&tmp, &dir).map_err(io(&dir))?;
    Ok(failure.map_or(CellEnd::Done, CellEnd::Failed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn shards_parse_and_partition() {
        assert_eq!(Shard::parse("1/3"), Ok(Shard { k: 0, n: 3 }));
        assert_eq!(Shard::parse("3/3"), Ok(Shard { k: 2, n: 3 }));
        assert_eq!(Shard { k: 2, n: 3 }.to_string(), "3/3");
        assert!(Shard::parse("0/3").unwrap_err().contains("numbered 1 to 3"));
        assert!(Shard::parse("4/3").unwrap_err().contains("numbered 1 to 3"));
        assert!(Shard::parse("1/0").is_err() && Shard::parse("x").is_err());
        let owners: Vec<usize> = (0..7).map(|i| (0..3).find(|&k| Shard { k, n: 3 }.has(i)).unwrap()).collect();
        assert_eq!(owners, [0, 1, 2, 0, 1, 2, 0]);
    }

    #[test]
    fn shards_come_from_array_job_environments() {
        let slurm =
            env(&[("SLURM_ARRAY_TASK_ID", "5"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "8")]);
        assert_eq!(Shard::from_env(&slurm, None), Ok(Some(Shard { k: 4, n: 8 })));
        let k8s = env(&[("JOB_COMPLETION_INDEX", "2"), ("LAHAR_SHARDS", "4")]);
        assert_eq!(Shard::from_env(&k8s, None), Ok(Some(Shard { k: 2, n: 4 })));
        assert!(Shard::from_env(&env(&[("JOB_COMPLETION_INDEX", "2")]), None).unwrap_err().contains("--shards"));
        let vc = env(&[("VC_TASK_INDEX", "1"), ("VC_WORKER_NUM", "3")]);
        assert_eq!(Shard::from_env(&vc, None), Ok(Some(Shard { k: 1, n: 3 })));
        assert_eq!(Shard::from_env(&vc, Some(2)), Ok(Some(Shard { k: 1, n: 2 })));
        assert_eq!(Shard::from_env(&env(&[("HOME", "/")]), None), Ok(None));
    }
}
