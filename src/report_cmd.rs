//! `lahar compare`, `lahar report`, plots after `lahar run --plots`, and the
//! progress bar of long runs. The work is in `lahar-reports`; this module reads run
//! directories, writes files and maps failures to the CLI's exit codes.

use crate::error::CmdError;
use lahar_core::util::time::SimTime;
use lahar_reports::compare::{Comparison, compare as compare_runs};
use lahar_reports::load::{RunData, load_any_runs, load_runs};
use lahar_reports::plots::{PlotStyle, write_plots};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Reads runs in time, or with `any` placement runs too (all of one kind).
fn load(dirs: &[PathBuf], any: bool) -> Result<Vec<RunData>, CmdError> {
    if dirs.is_empty() {
        return Err(CmdError::Input("no run directory given".into()));
    }
    if any { load_any_runs(dirs) } else { load_runs(dirs) }.map_err(|e| CmdError::Input(e.to_string()))
}

fn write(path: &Path, text: &str) -> Result<(), CmdError> {
    lahar_core::util::files::write_atomic(path, text.as_bytes())
        .map_err(|e| CmdError::Output(format!("cannot write {}: {e}", path.display())))
}

/// Writes the plots of one run directory into `<dir>/plots/`; returns the files.
pub fn run_plots(dir: &Path, style: &PlotStyle) -> Result<Vec<PathBuf>, CmdError> {
    let runs = load(&[dir.to_path_buf()], true)?;
    crate::outdir::no_links(dir, &["plots"])?;
    write_plots(&dir.join("plots"), &runs, style).map_err(|e| CmdError::Output(e.to_string()))
}

/// `lahar compare DIR...`: reads the runs, writes `compare.csv`, `compare.md` and
/// overlay plots (`plots/*.svg|png`, in `style`) into `out`, and returns the
/// comparison.
pub fn compare(dirs: &[PathBuf], out: &Path, style: &PlotStyle) -> Result<Comparison, CmdError> {
    let runs = load(dirs, true)?;
    let c = compare_runs(&runs);
    crate::outdir::claim(out, crate::outdir::Kind::Compare, Default::default())?;
    write(&out.join("compare.csv"), &c.to_csv())?;
    write(&out.join("compare.md"), &c.to_markdown())?;
    write_plots(&out.join("plots"), &runs, style).map_err(|e| CmdError::Output(e.to_string()))?;
    Ok(c)
}

/// `lahar report DIR...`: writes each run's plots into `<dir>/plots/` and one
/// self-contained HTML report to `out` (default: `<DIR>/report.html` for one run,
/// `report.html` in the current directory for several), plots in `style`.
/// Returns the report's path.
pub fn report(dirs: &[PathBuf], out: Option<&Path>, style: &PlotStyle) -> Result<PathBuf, CmdError> {
    let runs = load(dirs, false)?;
    for r in &runs {
        crate::outdir::no_links(&r.dir, &["plots", "report.html"])?;
    }
    for r in &runs {
        write_plots(&r.dir.join("plots"), std::slice::from_ref(r), style)
            .map_err(|e| CmdError::Output(e.to_string()))?;
    }
    let html =
        lahar_reports::html::render(&runs, crate::VERSION, style).map_err(|e| CmdError::Output(e.to_string()))?;
    let path = match out {
        Some(p) => p.to_path_buf(),
        None if runs.len() == 1 => runs[0].dir.join("report.html"),
        None => PathBuf::from("report.html"),
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| CmdError::Output(format!("cannot create {}: {e}", parent.display())))?;
    }
    write(&path, &html)?;
    Ok(path)
}

/// A progress bar of `n` steps drawn on stderr with `template`, or a hidden one
/// when stderr is not a terminal (logs and pipes get no control characters).
pub fn terminal_bar(n: usize, template: &str) -> indicatif::ProgressBar {
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(n as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

/// Progress on stderr, simulated time and jobs done: a bar with the time left when
/// stderr is a terminal (indicatif also hides itself for `TERM=dumb`), else — a
/// batch system's log, CI — a line every 30 s ([`LogLines`]).
pub struct Progress {
    bar: indicatif::ProgressBar,
    lines: Option<LogLines>,
    jobs: usize,
}

/// Progress lines for a log: one every `every` of wall time, with the time left
/// estimated from the rate so far. Shared by threads (a sweep's cells).
pub struct LogLines {
    start: std::time::Instant,
    every: std::time::Duration,
    next: std::sync::Mutex<std::time::Duration>,
}

impl LogLines {
    /// Lines every 30 s, or every `LAHAR_PROGRESS_SECONDS` (a positive number)
    /// when set; none when stderr is a terminal (the bar shows it).
    pub fn for_log() -> Option<LogLines> {
        if std::io::stderr().is_terminal() {
            return None;
        }
        let every = std::env::var("LAHAR_PROGRESS_SECONDS")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(30.0);
        let every = std::time::Duration::from_secs_f64(every);
        Some(LogLines { start: std::time::Instant::now(), every, next: std::sync::Mutex::new(every) })
    }

    /// Writes `what` with the elapsed time and the time left for `done` of
    /// `total` when the next line is due.
    pub fn tick(&self, done: usize, total: usize, what: impl FnOnce() -> String) {
        let elapsed = self.start.elapsed();
        let Ok(mut next) = self.next.lock() else { return };
        if elapsed < *next {
            return;
        }
        while *next <= elapsed {
            *next += self.every;
        }
        let left = match done {
            0 => "time left unknown".to_string(),
            d if d >= total => "ending".to_string(),
            d => format!("about {} left", duration(elapsed.mul_f64((total - d) as f64 / d as f64))),
        };
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "lahar: {}, {} elapsed, {left}", what(), duration(elapsed)).and_then(|()| err.flush());
    }
}

/// `1h 02m 03s`, `2m 05s`, `7s`.
fn duration(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m {:02}s", s / 3600, s % 3600 / 60, s % 60),
    }
}

impl Progress {
    /// A bar over `jobs` jobs; hidden unless stderr is a terminal.
    pub fn new(jobs: usize) -> Progress {
        let template = "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} jobs done, simulated {msg}, ETA {eta}";
        Progress { bar: terminal_bar(jobs, template), lines: LogLines::for_log(), jobs }
    }

    /// Reports the engine's progress (its `run_with` callback).
    pub fn update(&self, now: SimTime, done: usize) {
        let s = now.micros() / 1_000_000;
        let simulated = format!("{}d {:02}h {:02}m", s / 86400, s % 86400 / 3600, s % 3600 / 60);
        if let Some(l) = &self.lines {
            let pct = if self.jobs > 0 { 100.0 * done as f64 / self.jobs as f64 } else { 100.0 };
            l.tick(done, self.jobs, || format!("{done}/{} jobs done ({pct:.1}%), simulated {simulated}", self.jobs));
        }
        self.bar.set_position(done as u64);
        self.bar.set_message(simulated);
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
