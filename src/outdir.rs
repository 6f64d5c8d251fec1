//! Output directories: lahar replaces only what it wrote itself. A directory lahar
//! writes into gets a marker file, `.lahar`, that says which kind of outputs it
//! holds (a run's, a sweep's or a comparison's). lahar clears its earlier outputs
//! only from a directory with the marker of the same kind; a directory that has files with
//! lahar's names but no marker (the user's own, or another tool's), or another
//! kind's marker (a run into a sweep's folder would replace its summary.csv), is
//! refused with the names it would have replaced. A run's marker also names the
//! scenario whose outputs the directory holds: a run of another scenario replaces
//! them only when asked to (`lahar run --force`); the same scenario run again
//! replaces its own.

use std::path::{Path, PathBuf};

/// The marker's file name.
pub const MARKER: &str = ".lahar";

/// What a directory holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One run's outputs (`lahar run`, a placement replay, a sweep's cell).
    Run,
    /// A sweep's directory (sweep.json, cells/, tables and plots).
    Sweep,
    /// `lahar compare`'s directory (compare.csv, compare.md and plots).
    Compare,
}

impl Kind {
    fn text(self) -> &'static str {
        match self {
            Kind::Run => "lahar run outputs\n",
            Kind::Sweep => "lahar sweep outputs\n",
            Kind::Compare => "lahar compare outputs\n",
        }
    }
    fn name(self) -> &'static str {
        match self {
            Kind::Run => "a run's",
            Kind::Sweep => "a sweep's",
            Kind::Compare => "a comparison's",
        }
    }
    /// The names lahar writes at the top of such a directory.
    fn files(self) -> &'static [&'static str] {
        match self {
            Kind::Run => RUN_FILES,
            Kind::Sweep => &["sweep.json", "sweep.csv", "summary.csv", "cells", "plots"],
            Kind::Compare => &["compare.csv", "compare.md", "plots"],
        }
    }
}

/// The placement run's per-arrival file.
pub const PLACEMENTS_CSV: &str = "placements.csv";
/// The placement run's per-percent file.
pub const FRAGMENTATION_CSV: &str = "fragmentation.csv";

/// `--explain`'s verdicts and tables as the terminal shows them.
pub const EXPLAIN_TXT: &str = "explain.txt";

/// The files a run, `--explain`, `--plots` and `lahar report` write into a run
/// directory (plots: `plots/<kind>.svg|png`).
const RUN_FILES: &[&str] = &[
    crate::INPUT_SCENARIO,
    crate::INPUT_CONF,
    crate::INPUT_TIMELINE_CONFS,
    "jobs.csv",
    "pods.csv",
    "timeseries.csv",
    "queues.csv",
    "decisions.csv",
    "events.csv",
    "services.csv",
    "scaling.csv",
    "timeline.csv",
    "jobs.parquet",
    "pods.parquet",
    "timeseries.parquet",
    "queues.parquet",
    "decisions.parquet",
    "events.parquet",
    "summary.json",
    "summary.csv",
    "explain.csv",
    EXPLAIN_TXT,
    "report.html",
    "plots",
    INCOMPLETE,
    FRAGMENTATION_CSV,
    PLACEMENTS_CSV,
];

/// Why a directory cannot take outputs.
#[derive(Debug, thiserror::Error)]
pub enum OutDirError {
    /// It holds files with lahar's names that lahar did not write there, or
    /// another kind's outputs.
    #[error("{dir}: {why}")]
    Refused {
        /// The directory.
        dir: PathBuf,
        /// What is there.
        why: String,
    },
    /// The file system refused.
    #[error("cannot write outputs to {dir}: {source}")]
    Io {
        /// The directory.
        dir: PathBuf,
        /// Cause.
        source: std::io::Error,
    },
}

/// What the marker in `dir` says, if there is one lahar wrote: the kind, and the
/// scenario named on its second line if there is one. Anything else in the file
/// (it is read back from disk) makes it not lahar's.
fn marked(dir: &Path) -> Option<(Kind, Option<String>)> {
    let text = std::fs::read(dir.join(MARKER)).ok()?;
    let text = String::from_utf8(text).ok()?;
    let kind = [Kind::Run, Kind::Sweep, Kind::Compare].into_iter().find(|k| text.starts_with(k.text()))?;
    let rest = &text[kind.text().len()..];
    if rest.is_empty() {
        return Some((kind, None));
    }
    let name = rest.strip_prefix(OWNER)?.strip_suffix('\n')?;
    let plain = !name.is_empty() && !name.contains(|c: char| c.is_control());
    plain.then(|| (kind, Some(name.to_string())))
}

/// The marker's second line starts so: the scenario whose outputs it holds.
const OWNER: &str = "scenario: ";

/// Who may replace what a directory holds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Claimant<'a> {
    /// The scenario about to write there (recorded in the marker; a run's
    /// directory of another scenario is refused without `force`).
    pub scenario: Option<&'a str>,
    /// Replace another scenario's outputs (`--force`).
    pub force: bool,
}

/// Makes `dir` a directory of `kind`'s outputs: creates it, or checks that lahar
/// may write there (see the module's documentation), and marks it. For a run,
/// the earlier run's outputs are removed (only the names lahar writes).
pub fn claim(dir: &Path, kind: Kind, by: Claimant<'_>) -> Result<(), OutDirError> {
    let io = |source| OutDirError::Io { dir: dir.to_path_buf(), source };
    std::fs::create_dir_all(dir).map_err(io)?;
    // Before anything is written there (the marker included).
    no_links(dir, kind.files())?;
    let text = match by.scenario {
        Some(name) => format!("{}{OWNER}{name}\n", kind.text()),
        None => kind.text().to_string(),
    };
    match marked(dir) {
        Some((k, owner)) if k == kind => {
            if let (Some(was), Some(now)) = (&owner, by.scenario)
                && was != now
                && !by.force
            {
                return Err(OutDirError::Refused {
                    dir: dir.to_path_buf(),
                    why: format!(
                        "holds the outputs of scenario `{}` (its {MARKER} says so), not of `{now}`; pass --force to replace them, or use another output directory",
                        was.escape_debug()
                    ),
                });
            }
            if by.scenario.is_some() && owner.as_deref() != by.scenario {
                lahar_core::util::files::write_atomic(&dir.join(MARKER), text.as_bytes()).map_err(io)?;
            }
        }
        Some((k, _)) => {
            return Err(OutDirError::Refused {
                dir: dir.to_path_buf(),
                why: format!(
                    "holds {} outputs (its {MARKER} says so), which {} outputs would partly replace; use another output directory",
                    k.name(),
                    kind.name()
                ),
            });
        }
        None => {
            let theirs: Vec<&str> = kind.files().iter().copied().filter(|f| dir.join(f).exists()).collect();
            // Shards of one sweep claim one directory at once: one that marked it
            // after the first look made those files.
            if !theirs.is_empty() && marked(dir).map(|m| m.0) != Some(kind) {
                return Err(OutDirError::Refused {
                    dir: dir.to_path_buf(),
                    why: format!(
                        "has {} that lahar did not write there (no {MARKER} marker); lahar replaces only its own outputs: move them, or use another output directory",
                        theirs.join(", ")
                    ),
                });
            }
            lahar_core::util::files::write_atomic(&dir.join(MARKER), text.as_bytes()).map_err(io)?;
        }
    }
    if kind == Kind::Run {
        clear_earlier_outputs(dir).map_err(io)?;
        std::fs::write(dir.join(INCOMPLETE), INCOMPLETE_TEXT).map_err(io)?;
    }
    Ok(())
}

/// Refuses `dir` when one of `names` in it is a symbolic link, or `plots` is
/// there but not a directory: lahar writes and removes only its own files, and
/// a link would take its writes (and its removal of earlier plots) out of the
/// directory, into files it did not make.
pub fn no_links(dir: &Path, names: &[&str]) -> Result<(), OutDirError> {
    for name in names {
        let Ok(meta) = std::fs::symlink_metadata(dir.join(name)) else { continue };
        let what = if meta.file_type().is_symlink() {
            "a symbolic link"
        } else if *name == "plots" && !meta.is_dir() {
            "not a directory"
        } else {
            continue;
        };
        return Err(OutDirError::Refused {
            dir: dir.to_path_buf(),
            why: format!(
                "its `{name}` is {what}; lahar writes only into files and directories it makes there: remove it, or use another output directory"
            ),
        });
    }
    Ok(())
}

/// The file that marks a run directory as not finished, from the start of the run
/// until its summary.json is written: a run killed, stopped by a full disk or by
/// an error leaves it beside CSVs that may be cut short.
pub const INCOMPLETE: &str = "INCOMPLETE";

const INCOMPLETE_TEXT: &str = "This run did not finish (it is running, or it was killed, ran out of disk or failed):\nits CSVs may end mid-way. lahar removes this file after writing summary.json, last.\n";

/// Marks the run in `dir` finished (removes [`INCOMPLETE`]).
pub fn complete(dir: &Path) -> std::io::Result<()> {
    std::fs::remove_file(dir.join(INCOMPLETE))
}

/// Removes lahar's own outputs of an earlier run from `dir`, a directory with a
/// run's marker (only the names lahar writes; anything else the user keeps there
/// is left alone).
fn clear_earlier_outputs(dir: &Path) -> std::io::Result<()> {
    let remove = |p: PathBuf| match std::fs::remove_file(&p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    };
    for f in RUN_FILES.iter().filter(|&&f| f != "plots") {
        remove(dir.join(f))?;
    }
    let plots = dir.join("plots");
    for kind in lahar_reports::plots::PlotKind::SINGLE {
        for ext in ["svg", "png"] {
            remove(plots.join(format!("{}.{ext}", kind.name())))?;
        }
    }
    // The plots directory goes too when that leaves it empty.
    if std::fs::read_dir(&plots).is_ok_and(|mut d| d.next().is_none()) {
        std::fs::remove_dir(&plots)?;
    }
    Ok(())
}
