//! Reading a run's output directory back (for plots, `lahar compare` and
//! `lahar report`): summary.json, jobs.csv and timeseries.csv are required;
//! pods.csv (the per-node timeline) and events.csv (the faults timeline) are read
//! when present.

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A run directory that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The directory does not exist or is not a directory.
    #[error("{path}: not a run directory (it does not exist)")]
    NotADir {
        /// The path given.
        path: PathBuf,
    },
    /// A required file is missing.
    #[error(
        "{path}: missing (a run directory holds summary.json, jobs.csv and timeseries.csv; a run whose --outputs left them out has none, and one with --format parquet has them as .parquet)"
    )]
    Missing {
        /// The file expected.
        path: PathBuf,
    },
    /// The directory holds a placement-only evaluation, not a run in time.
    #[error(
        "{path}: a placement run (`spec.placement`): its results are fragmentation.csv, placements.csv and summary.json; `lahar report` reads runs in time (`lahar compare` and `--plots` read both; docs/fragmentation.md)"
    )]
    Placement {
        /// The directory.
        path: PathBuf,
    },
    /// Runs in time and placement runs given together.
    #[error("{path}: a placement run and a run in time cannot be compared (the first, {first}, is the other kind)")]
    Mixed {
        /// The directory of the other kind.
        path: PathBuf,
        /// The first directory.
        first: PathBuf,
    },
    /// A file could not be read or parsed.
    #[error("{path}: {msg}")]
    Bad {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        msg: String,
    },
}

/// One job of jobs.csv (the columns the plots and comparison use).
#[derive(Clone, Debug, PartialEq)]
pub struct JobRecord {
    /// The job's name.
    pub name: String,
    /// Queue.
    pub queue: String,
    /// Final state.
    pub state: String,
    /// JCT (s), if it ended.
    pub jct_s: Option<f64>,
    /// Queueing delay (s), if it started.
    pub wait_s: Option<f64>,
    /// Distinct nodes at its last start.
    pub nodes_spanned: u32,
    /// Highest tier spanned at its last start.
    pub highest_tier: u32,
}

/// timeseries.csv, column-wise.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeseries {
    /// Sample instants (s).
    pub t: Vec<f64>,
    /// Cluster GPUs.
    pub total: Vec<f64>,
    /// GPUs held by pods.
    pub allocated: Vec<f64>,
    /// GPUs doing useful work.
    pub effective: Vec<f64>,
    /// GPUs held by jobs making no progress, if the column is present (runs
    /// written before it was added have none).
    pub stalled: Option<Vec<f64>>,
    /// GPUs out of service or cordoned (runs with faults only).
    pub unavailable: Option<Vec<f64>>,
    /// GPUs held by services' pods (runs with services only).
    pub serving: Option<Vec<f64>>,
    /// Jobs pending.
    pub pending: Vec<f64>,
    /// Jobs running.
    pub running: Vec<f64>,
    /// Fragmentation rate, if the column is present.
    pub fragmentation: Option<Vec<f64>>,
    /// Per queue (in column order): name, allocated GPUs, deserved GPUs (if present).
    pub queues: Vec<(String, Vec<f64>, Option<Vec<f64>>)>,
}

/// A run directory, read back.
#[derive(Clone, Debug)]
pub struct RunData {
    /// The directory.
    pub dir: PathBuf,
    /// Short label for legends and tables (the directory's name).
    pub label: String,
    /// summary.json as a JSON value.
    pub summary: Value,
    /// jobs.csv rows.
    pub jobs: Vec<JobRecord>,
    /// timeseries.csv.
    pub ts: Timeseries,
    /// pods.csv (placement intervals), if the file is there.
    pub pods: Option<Pods>,
    /// events.csv (failures, repairs, drains), if the run had faults.
    pub events: Option<Vec<EventRecord>>,
    /// The first rows of decisions.csv (the report shows them).
    pub decisions: Option<Rows>,
    /// The first rows of explain.csv, if the run had `--explain`.
    pub explain: Option<Rows>,
    /// The first rows of timeline.csv, if the run had `spec.timeline`.
    pub timeline: Option<Rows>,
    /// explain.txt (the verdicts and tables `--explain` printed), at most
    /// [`EXPLAIN_TEXT_MAX`] bytes of it.
    pub explain_text: Option<String>,
    /// A placement run's fragmentation.csv (`spec.placement`; its jobs and
    /// timeseries are then empty).
    pub placement: Option<Vec<PlacementPoint>>,
    /// services.csv summed over the services at each sample, if the run had
    /// services with a demand.
    pub demand: Option<DemandSeries>,
}

/// The services' demand and capacity together over time (services.csv): the
/// services in requests, or when none is, the services in tokens.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DemandSeries {
    /// What the rates count: `requests/s` or `tokens/s`.
    pub unit: &'static str,
    /// Sample instants (s).
    pub t: Vec<f64>,
    /// Requests (tokens) per second offered to the services with a demand.
    pub demand: Vec<f64>,
    /// Requests (tokens) per second their ready pods serve.
    pub capacity: Vec<f64>,
}

/// One row of a placement run's fragmentation.csv.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlacementPoint {
    /// Arrived GPU request, % of the cluster's GPUs.
    pub demand_pct: f64,
    /// GPUs held by placed pods, % of the cluster's.
    pub gpu_alloc_pct: f64,
    /// Fragmented share of the free GPUs, %.
    pub frag_ratio_pct: f64,
}

/// One placement interval of pods.csv.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PodRecord {
    /// Index of its node in [`Pods::nodes`].
    pub node: u32,
    /// Index of its job in [`RunData::jobs`], if jobs.csv has it.
    pub job: Option<u32>,
    /// GPUs held (a pod without GPUs: 0).
    pub gpus: f64,
    /// Start (s).
    pub start: f64,
    /// End (s); `None` while it was still running when the run ended.
    pub end: Option<f64>,
}

/// pods.csv: the intervals and the nodes they name (in order of first mention).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pods {
    /// Node names.
    pub nodes: Vec<String>,
    /// Intervals, in file order.
    pub rows: Vec<PodRecord>,
}

/// One row of events.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRecord {
    /// Instant (s).
    pub t: f64,
    /// `fail`, `repair`, `cordon`, `evict` or `uncordon`.
    pub event: String,
    /// `node`, `gpu`, `switch` or `drain`.
    pub scope: String,
    /// The node or HyperNode (`first (+N)` for a pattern).
    pub target: String,
    /// GPUs made unavailable (`fail`, `cordon`) or given back (`repair`, `uncordon`).
    pub gpus: f64,
    /// Pods killed (`fail`) or evicted (`evict`).
    pub pods: f64,
    /// The rule, trace line or drain that caused it.
    pub cause: String,
}

/// The first rows of a CSV file, for a table in the report.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Rows {
    /// The columns.
    pub header: Vec<String>,
    /// The first rows, as written.
    pub rows: Vec<Vec<String>>,
    /// Rows beyond those kept.
    pub more: u64,
}

/// Rows of decisions.csv the report shows.
pub const DECISIONS_IN_REPORT: usize = 500;
/// Rows of explain.csv the report shows.
pub const EXPLAIN_IN_REPORT: usize = 2000;
/// Rows of timeline.csv the report shows.
pub const TIMELINE_IN_REPORT: usize = 500;

/// The most of explain.txt a report shows (a watched job of thousands of pods
/// writes a table per pod).
pub const EXPLAIN_TEXT_MAX: usize = 256 * 1024;

/// The first `max` bytes of a text file (cut at a line's end, with a note of what
/// was left out), or `None` without the file; bytes that are not UTF-8 are shown
/// as U+FFFD.
fn head_text(path: &Path, max: usize) -> Result<Option<String>, LoadError> {
    use std::io::Read as _;
    if !path.is_file() {
        return Ok(None);
    }
    let f = std::fs::File::open(path).map_err(|e| bad(path, e))?;
    let mut bytes = Vec::new();
    f.take(max as u64 + 1).read_to_end(&mut bytes).map_err(|e| bad(path, e))?;
    if bytes.len() <= max {
        return Ok(Some(String::from_utf8_lossy(&bytes).into_owned()));
    }
    bytes.truncate(max);
    let cut = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(cut);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    text.push_str(&format!("… (the first {} KiB shown: the rest is in {})\n", max / 1024, path.display()));
    Ok(Some(text))
}

/// The first `keep` rows of `path`, whose header must be `columns`; `None` when
/// the file is absent.
fn first_rows(path: &Path, columns: &[&str], keep: usize) -> Result<Option<Rows>, LoadError> {
    if !path.is_file() {
        return Ok(None);
    }
    let mut rd = open_csv(path)?;
    let h = rd.headers().map_err(|e| bad(path, e))?.clone();
    if !header_is(path, &h, columns) {
        return Err(bad(path, format!("line 1: expected the columns {}", columns.join(","))));
    }
    let mut out = Rows { header: columns.iter().map(|c| c.to_string()).collect(), ..Rows::default() };
    for r in rd.records() {
        let r = r.map_err(|e| bad(path, e))?;
        if out.rows.len() < keep {
            out.rows.push(r.iter().map(str::to_string).collect());
        } else {
            out.more += 1;
        }
    }
    Ok(Some(out))
}

impl RunData {
    /// Scenario name from summary.json.
    pub fn scenario(&self) -> &str {
        self.summary["scenario"].as_str().unwrap_or("?")
    }
    /// Scheduler name from summary.json.
    pub fn scheduler(&self) -> &str {
        self.summary["scheduler"].as_str().unwrap_or("?")
    }
    /// A metric by JSON pointer below `metrics` (e.g. `/jct_s/mean`).
    pub fn metric(&self, pointer: &str) -> Option<f64> {
        self.summary.get("metrics").and_then(|m| m.pointer(pointer)).and_then(Value::as_f64)
    }
}

fn bad(path: &Path, msg: impl ToString) -> LoadError {
    LoadError::Bad { path: path.to_path_buf(), msg: msg.to_string() }
}

fn open_csv(path: &Path) -> Result<csv::Reader<std::fs::File>, LoadError> {
    if !path.is_file() {
        return Err(LoadError::Missing { path: path.to_path_buf() });
    }
    csv::Reader::from_path(path).map_err(|e| bad(path, e))
}

/// Columns renamed in lahar 0.2 (docs/outputs.md § Renamed columns): (file,
/// old name, new name). Run directories written before still read.
pub const RENAMED: [(&str, &str, &str); 12] = [
    ("jobs.csv", "submit", "submit_s"),
    ("jobs.csv", "start", "start_s"),
    ("jobs.csv", "end", "end_s"),
    ("pods.csv", "start", "start_s"),
    ("pods.csv", "end", "end_s"),
    ("timeseries.csv", "t", "t_s"),
    ("timeseries.csv", "gpus_allocated:<queue>", "queues.csv gpus_allocated"),
    ("timeseries.csv", "gpus_deserved:<queue>", "queues.csv gpus_deserved"),
    ("decisions.csv", "t", "t_s"),
    ("explain.csv", "t", "t_s"),
    ("events.csv", "t", "t_s"),
    ("summary.csv, summary.json (queues)", "gpu_share", "gpu_allocation_rate"),
];

/// The name a column of `file` had before [`RENAMED`].
fn old_name(file: &str, name: &str) -> Option<&'static str> {
    RENAMED.iter().find(|r| r.0 == file && r.2 == name).map(|r| r.1)
}

/// The column `name`, or its name before 0.2 ([`RENAMED`]).
fn column(path: &Path, headers: &csv::StringRecord, name: &str) -> Result<usize, LoadError> {
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
    let old = old_name(file, name);
    headers.iter().position(|h| h == name || Some(h) == old).ok_or_else(|| bad(path, format!("no column `{name}`")))
}

/// Whether a header is `columns`, each by its name or its name before 0.2.
fn header_is(path: &Path, h: &csv::StringRecord, columns: &[&str]) -> bool {
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
    h.len() == columns.len() && h.iter().zip(columns).all(|(a, b)| a == *b || Some(a) == old_name(file, b))
}

/// The largest number read back from a run's CSVs: above any time (lahar's clock
/// ends at 2^64 µs, about 1.8e13 s), count or rate a run writes. Plots draw what
/// they read, so an infinite or absurd value (a hand-edited file) is an error
/// here, not a plot that never ends.
const MOST: f64 = 1e15;

/// A number read back from a run's CSV: empty (`None`), or finite, from 0 to
/// [`MOST`] — every column lahar reads back is a time, a count or an amount.
fn num(path: &Path, line: u64, s: &str) -> Result<Option<f64>, LoadError> {
    if s.is_empty() {
        return Ok(None);
    }
    match s.parse::<f64>() {
        Ok(x) if (0.0..=MOST).contains(&x) => Ok(Some(x)),
        Ok(_) => Err(bad(path, format!("line {line}: `{s}` is out of range; expected a number from 0 to {MOST:e}"))),
        Err(_) => Err(bad(path, format!("line {line}: `{s}` is not a number"))),
    }
}

/// A whole number from 0 to `most` (empty: 0), read back from a run's CSV.
fn whole(path: &Path, line: u64, s: &str, most: u32) -> Result<u32, LoadError> {
    match num(path, line, s)? {
        None => Ok(0),
        Some(x) if x.fract() == 0.0 && x <= f64::from(most) => Ok(x as u32),
        Some(_) => Err(bad(path, format!("line {line}: `{s}` is not a whole number from 0 to {most}"))),
    }
}

/// A run directory's summary.json, and whether the directory holds a placement
/// run (fragmentation.csv and no jobs.csv).
fn read_summary(dir: &Path) -> Result<(Value, bool), LoadError> {
    if !dir.is_dir() {
        return Err(LoadError::NotADir { path: dir.to_path_buf() });
    }
    let sp = dir.join("summary.json");
    if !sp.is_file() {
        return Err(LoadError::Missing { path: sp });
    }
    let text = std::fs::read(&sp).map_err(|e| bad(&sp, e))?;
    let summary: Value = serde_json::from_slice(&text).map_err(|e| bad(&sp, e))?;
    let Some(metrics) = summary.get("metrics").filter(|m| m.is_object()) else {
        return Err(bad(&sp, "no `metrics` object: not a lahar summary"));
    };
    crate::headline::check_all(metrics).map_err(|e| bad(&sp, e))?;
    let placement = dir.join("fragmentation.csv").is_file() && !dir.join("jobs.csv").is_file();
    Ok((summary, placement))
}

/// Reads a run directory.
pub fn load_run(dir: &Path) -> Result<RunData, LoadError> {
    let (summary, placement) = read_summary(dir)?;
    if placement {
        return Err(LoadError::Placement { path: dir.to_path_buf() });
    }
    in_time(dir, summary)
}

/// Reads a run in time whose summary.json is `summary`.
fn in_time(dir: &Path, summary: Value) -> Result<RunData, LoadError> {
    let jp = dir.join("jobs.csv");
    let mut rd = open_csv(&jp)?;
    let h = rd.headers().map_err(|e| bad(&jp, e))?.clone();
    let (cname, cq, cs, cj, cw, cst, cn, ct) = (
        column(&jp, &h, "job")?,
        column(&jp, &h, "queue")?,
        column(&jp, &h, "state")?,
        column(&jp, &h, "jct_s")?,
        column(&jp, &h, "wait_s")?,
        column(&jp, &h, "start_s")?,
        column(&jp, &h, "nodes_spanned")?,
        column(&jp, &h, "highest_tier")?,
    );
    let mut jobs = Vec::new();
    // A run writes one row per job (its name with its namespace): a name met
    // twice would count a job twice.
    let mut seen: HashMap<String, u64> = HashMap::new();
    for (i, r) in rd.records().enumerate() {
        let r = r.map_err(|e| bad(&jp, e))?;
        let line = i as u64 + 2;
        let name = r.get(cname).unwrap_or("");
        if let Some(first) = seen.insert(name.to_string(), line) {
            return Err(bad(
                &jp,
                format!("line {line}: job `{name}` has a row already (line {first}); a run writes one row per job"),
            ));
        }
        let started = !r.get(cst).unwrap_or("").is_empty();
        jobs.push(JobRecord {
            name: name.to_string(),
            queue: r.get(cq).unwrap_or("").to_string(),
            state: r.get(cs).unwrap_or("").to_string(),
            jct_s: num(&jp, line, r.get(cj).unwrap_or(""))?,
            wait_s: if started { num(&jp, line, r.get(cw).unwrap_or(""))? } else { None },
            // A job spans at most one node per pod; tiers are counted in the tens.
            nodes_spanned: whole(&jp, line, r.get(cn).unwrap_or(""), lahar_core::model::job::MAX_PODS_PER_JOB)?,
            highest_tier: whole(&jp, line, r.get(ct).unwrap_or(""), 1_000)?,
        });
    }
    agrees_with_summary(&jp, &jobs, &summary)?;

    let tp = dir.join("timeseries.csv");
    let mut rd = open_csv(&tp)?;
    let h = rd.headers().map_err(|e| bad(&tp, e))?.clone();
    let base: Vec<usize> =
        ["t_s", "gpus_total", "gpus_allocated", "gpus_busy_effective", "jobs_pending", "jobs_running"]
            .iter()
            .map(|c| column(&tp, &h, c))
            .collect::<Result<_, _>>()?;
    let frag_col = h.iter().position(|c| c == "fragmentation");
    let stalled_col = h.iter().position(|c| c == "gpus_stalled");
    let unavailable_col = h.iter().position(|c| c == "gpus_unavailable");
    let serving_col = h.iter().position(|c| c == "gpus_serving");
    // Runs before 0.2 kept the queues in timeseries.csv's columns.
    let qcols: Vec<(String, usize, Option<usize>)> = h
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.strip_prefix("gpus_allocated:").map(|q| (q.to_string(), i)))
        .map(|(q, i)| {
            let d = h.iter().position(|c| c.strip_prefix("gpus_deserved:") == Some(q.as_str()));
            (q, i, d)
        })
        .collect();
    let mut ts = Timeseries {
        fragmentation: frag_col.map(|_| Vec::new()),
        stalled: stalled_col.map(|_| Vec::new()),
        unavailable: unavailable_col.map(|_| Vec::new()),
        serving: serving_col.map(|_| Vec::new()),
        queues: qcols.iter().map(|(q, _, d)| (q.clone(), Vec::new(), d.map(|_| Vec::new()))).collect(),
        ..Timeseries::default()
    };
    for (i, r) in rd.records().enumerate() {
        let r = r.map_err(|e| bad(&tp, e))?;
        let line = i as u64 + 2;
        let get = |c: usize| num(&tp, line, r.get(c).unwrap_or("")).map(|v| v.unwrap_or(0.0));
        ts.t.push(get(base[0])?);
        ts.total.push(get(base[1])?);
        ts.allocated.push(get(base[2])?);
        ts.effective.push(get(base[3])?);
        ts.pending.push(get(base[4])?);
        ts.running.push(get(base[5])?);
        if let (Some(c), Some(v)) = (frag_col, ts.fragmentation.as_mut()) {
            v.push(get(c)?);
        }
        if let (Some(c), Some(v)) = (stalled_col, ts.stalled.as_mut()) {
            v.push(get(c)?);
        }
        if let (Some(c), Some(v)) = (unavailable_col, ts.unavailable.as_mut()) {
            v.push(get(c)?);
        }
        if let (Some(c), Some(v)) = (serving_col, ts.serving.as_mut()) {
            v.push(get(c)?);
        }
        for (k, (_, a, d)) in qcols.iter().enumerate() {
            let v = get(*a)?;
            ts.queues[k].1.push(v);
            if let (Some(d), Some(dv)) = (d, ts.queues[k].2.as_mut()) {
                dv.push(get(*d)?);
            }
        }
    }

    let qp = dir.join("queues.csv");
    if qp.is_file() {
        ts.queues = read_queues(&qp, &ts.t)?;
    }

    let pp = dir.join("pods.csv");
    let pods = if pp.is_file() {
        Some(read_pods(&pp, &jobs, summary.pointer("/metrics/sim_time_s").and_then(Value::as_f64))?)
    } else {
        None
    };
    let ep = dir.join("events.csv");
    let events = if ep.is_file() { Some(read_events(&ep)?) } else { None };
    let sp = dir.join("services.csv");
    let demand = if sp.is_file() { read_demand(&sp)? } else { None };

    let label = dir_label(dir);
    let decisions = first_rows(&dir.join("decisions.csv"), &crate::write::DECISION_COLUMNS, DECISIONS_IN_REPORT)?;
    let explain = first_rows(&dir.join("explain.csv"), &crate::write::EXPLAIN_COLUMNS, EXPLAIN_IN_REPORT)?;
    let explain_text = head_text(&dir.join("explain.txt"), EXPLAIN_TEXT_MAX)?;
    let timeline =
        first_rows(&dir.join("timeline.csv"), &crate::schema::header(&crate::schema::TIMELINE), TIMELINE_IN_REPORT)?;
    Ok(RunData {
        dir: dir.to_path_buf(),
        label,
        summary,
        jobs,
        ts,
        pods,
        events,
        decisions,
        explain,
        explain_text,
        timeline,
        placement: None,
        demand,
    })
}

/// jobs.csv's rows are the jobs summary.json counts (`metrics.jobs`, and
/// `metrics.completed` of them Completed): files of two runs side by side would
/// mix their numbers in one report. A summary without the counts (hand-made, or
/// cut down) is not checked.
fn agrees_with_summary(path: &Path, jobs: &[JobRecord], summary: &Value) -> Result<(), LoadError> {
    let completed = jobs.iter().filter(|j| j.state == "Completed").count();
    for (key, rows, what) in [("jobs", jobs.len(), "rows"), ("completed", completed, "rows of Completed jobs")] {
        let Some(counted) = summary.pointer(&format!("/metrics/{key}")).and_then(Value::as_u64) else { continue };
        if counted != rows as u64 {
            return Err(bad(
                path,
                format!(
                    "{rows} {what}, but summary.json counts {counted} (`metrics.{key}`): the two files are not of the same run"
                ),
            ));
        }
    }
    Ok(())
}

/// The label of a run directory: its name.
fn dir_label(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty() && n != "." && n != "..")
        .unwrap_or_else(|| dir.display().to_string())
}

/// Reads a run directory of either kind: a run in time ([`load_run`]) or a
/// placement run (summary.json and fragmentation.csv).
pub fn load_any(dir: &Path) -> Result<RunData, LoadError> {
    let (summary, placement) = read_summary(dir)?;
    if !placement {
        return in_time(dir, summary);
    }
    let fp = dir.join("fragmentation.csv");
    let mut rd = open_csv(&fp)?;
    let h = rd.headers().map_err(|e| bad(&fp, e))?.clone();
    let cols = ["demand_pct", "gpu_alloc_pct", "frag_gpus", "frag_ratio_pct"];
    if !header_is(&fp, &h, &cols) {
        return Err(bad(&fp, format!("line 1: expected the columns {}", cols.join(","))));
    }
    let mut points = Vec::new();
    for (i, r) in rd.records().enumerate() {
        let r = r.map_err(|e| bad(&fp, e))?;
        let line = i as u64 + 2;
        let n = |k: usize| -> Result<f64, LoadError> {
            match num(&fp, line, r.get(k).unwrap_or(""))? {
                Some(v) if v.is_finite() && (0.0..=1e6).contains(&v) => Ok(v),
                _ => Err(bad(&fp, format!("line {line}: column `{}` needs a number from 0", cols[k]))),
            }
        };
        points.push(PlacementPoint { demand_pct: n(0)?, gpu_alloc_pct: n(1)?, frag_ratio_pct: n(3)? });
    }
    Ok(RunData {
        dir: dir.to_path_buf(),
        label: dir_label(dir),
        summary,
        jobs: Vec::new(),
        ts: Timeseries::default(),
        pods: None,
        events: None,
        decisions: None,
        explain: None,
        explain_text: None,
        timeline: None,
        placement: Some(points),
        demand: None,
    })
}

/// Reads several run directories of either kind, all of one kind (runs in time
/// or placement runs); labels that repeat get a `#k` suffix.
pub fn load_any_runs(dirs: &[PathBuf]) -> Result<Vec<RunData>, LoadError> {
    let runs: Vec<RunData> = dirs.iter().map(|d| load_any(d)).collect::<Result<_, _>>()?;
    if let Some(r) = runs.iter().find(|r| r.placement.is_some() != runs[0].placement.is_some()) {
        return Err(LoadError::Mixed { path: r.dir.clone(), first: runs[0].dir.clone() });
    }
    Ok(dedupe(runs))
}

fn dedupe(mut runs: Vec<RunData>) -> Vec<RunData> {
    for i in 1..runs.len() {
        if runs[..i].iter().any(|r| r.label == runs[i].label) {
            runs[i].label = format!("{}#{}", runs[i].label, i + 1);
        }
    }
    runs
}

/// Reads pods.csv; a pod's job is looked up in `jobs` by name, a start or end
/// past the run's simulated time (`horizon`, summary.json's `sim_time_s`) is an
/// error (the file was not written by this run).
fn read_pods(path: &Path, jobs: &[JobRecord], horizon: Option<f64>) -> Result<Pods, LoadError> {
    let mut rd = open_csv(path)?;
    let h = rd.headers().map_err(|e| bad(path, e))?.clone();
    let (cj, cn, cg, cs, ce) = (
        column(path, &h, "job")?,
        column(path, &h, "node")?,
        column(path, &h, "gpus")?,
        column(path, &h, "start_s")?,
        column(path, &h, "end_s")?,
    );
    let by_name: std::collections::HashMap<&str, u32> =
        jobs.iter().enumerate().map(|(i, j)| (j.name.as_str(), i as u32)).collect();
    let mut node_ix: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    let mut out = Pods::default();
    for (i, r) in rd.records().enumerate() {
        let r = r.map_err(|e| bad(path, e))?;
        let line = i as u64 + 2;
        let node = r.get(cn).unwrap_or("");
        let start = num(path, line, r.get(cs).unwrap_or(""))?;
        let (Some(start), false) = (start, node.is_empty()) else {
            return Err(bad(path, format!("line {line}: a pod interval needs a node and a start")));
        };
        let end = num(path, line, r.get(ce).unwrap_or(""))?;
        let gpus = num(path, line, r.get(cg).unwrap_or(""))?.unwrap_or(0.0);
        let valid = start.is_finite()
            && start >= 0.0
            && gpus.is_finite()
            && gpus >= 0.0
            && gpus <= f64::from(lahar_core::world::MAX_NODE_GPUS)
            && end.is_none_or(|e| e.is_finite() && e >= start)
            && horizon.is_none_or(|h| start <= h + 1e-6 && end.is_none_or(|e| e <= h + 1e-6));
        if !valid {
            return Err(bad(path, format!("line {line}: start, end or gpus out of range for this run")));
        }
        let next = out.nodes.len() as u32;
        let n = *node_ix.entry(node.to_string()).or_insert_with(|| {
            out.nodes.push(node.to_string());
            next
        });
        out.rows.push(PodRecord { node: n, job: by_name.get(r.get(cj).unwrap_or("")).copied(), gpus, start, end });
    }
    Ok(out)
}

/// Reads queues.csv: each queue's rows, one per sample of timeseries.csv (at
/// its instants `t`), in order.
#[allow(clippy::type_complexity)]
fn read_queues(path: &Path, t: &[f64]) -> Result<Vec<(String, Vec<f64>, Option<Vec<f64>>)>, LoadError> {
    let mut rd = open_csv(path)?;
    let h = rd.headers().map_err(|e| bad(path, e))?.clone();
    let columns = crate::schema::names(&crate::schema::QUEUES);
    if !header_is(path, &h, &columns) {
        let cols = columns.join(",");
        return Err(bad(path, format!("line 1: expected the columns {cols}")));
    }
    let mut out: Vec<(String, Vec<f64>, Option<Vec<f64>>)> = Vec::new();
    for (i, r) in rd.records().enumerate() {
        let r = r.map_err(|e| bad(path, e))?;
        let line = i as u64 + 2;
        let name = r.get(1).unwrap_or("");
        let k = match out.iter().position(|q| q.0 == name) {
            Some(k) => k,
            None => {
                out.push((name.to_string(), Vec::new(), Some(Vec::new())));
                out.len() - 1
            }
        };
        let at = num(path, line, r.get(0).unwrap_or(""))?;
        let q = &mut out[k];
        let sample = q.1.len();
        if t.get(sample).is_none_or(|&x| Some(x) != at) {
            return Err(bad(
                path,
                format!("line {line}: queue `{name}`'s sample {} is not at an instant of timeseries.csv", sample + 1),
            ));
        }
        q.1.push(num(path, line, r.get(2).unwrap_or(""))?.unwrap_or(0.0));
        if let Some(d) = q.2.as_mut() {
            d.push(num(path, line, r.get(3).unwrap_or(""))?.unwrap_or(0.0));
        }
    }
    if let Some(q) = out.iter().find(|q| q.1.len() != t.len()) {
        return Err(bad(path, format!("queue `{}` has {} samples, timeseries.csv {}", q.0, q.1.len(), t.len())));
    }
    Ok(out)
}

/// Reads events.csv (its columns as [`crate::faults::EVENT_COLUMNS`]).
fn read_events(path: &Path) -> Result<Vec<EventRecord>, LoadError> {
    let mut rd = open_csv(path)?;
    let h = rd.headers().map_err(|e| bad(path, e))?.clone();
    if !header_is(path, &h, &crate::faults::EVENT_COLUMNS) {
        return Err(bad(path, format!("line 1: expected the columns {}", crate::faults::EVENT_COLUMNS.join(","))));
    }
    let mut out = Vec::new();
    for (i, r) in rd.records().enumerate() {
        let r = r.map_err(|e| bad(path, e))?;
        let line = i as u64 + 2;
        let f = |k: usize| r.get(k).unwrap_or("").to_string();
        let n = |k: usize| -> Result<f64, LoadError> {
            match num(path, line, r.get(k).unwrap_or(""))? {
                Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(bad(
                    path,
                    format!("line {line}: column `{}` needs a number of at least 0", h.get(k).unwrap_or("")),
                )),
            }
        };
        out.push(EventRecord {
            t: n(0)?,
            event: f(1),
            scope: f(2),
            target: f(3),
            gpus: n(5)?,
            pods: n(6)?,
            cause: f(7),
        });
    }
    Ok(out)
}

/// Reads services.csv into the services' demand and capacity summed at each
/// sample: of the services in requests, or when none has a demand, of those in
/// tokens (`None` when no service has a demand). Files written before tokens
/// have no `_tps` columns.
fn read_demand(path: &Path) -> Result<Option<DemandSeries>, LoadError> {
    let mut rd = open_csv(path)?;
    let h = rd.headers().map_err(|e| bad(path, e))?.clone();
    let ct = column(path, &h, "t_s")?;
    let rps = (column(path, &h, "demand_rps")?, column(path, &h, "capacity_rps")?);
    let tps = h.iter().position(|x| x == "demand_tps").zip(h.iter().position(|x| x == "capacity_tps"));
    // Both units summed in one pass; the requests shown when some service has them.
    let mut series = [("requests/s", Some(rps)), ("tokens/s", tps)]
        .map(|(unit, cols)| (cols, DemandSeries { unit, ..DemandSeries::default() }, false));
    for (i, r) in rd.records().enumerate() {
        let r = r.map_err(|e| bad(path, e))?;
        let line = i as u64 + 2;
        let n = |k: usize| -> Result<Option<f64>, LoadError> {
            match num(path, line, r.get(k).unwrap_or(""))? {
                Some(v) if !(v.is_finite() && v >= 0.0) => Err(bad(
                    path,
                    format!("line {line}: column `{}` needs a number of at least 0", h.get(k).unwrap_or("")),
                )),
                v => Ok(v),
            }
        };
        let t = n(ct)?.ok_or_else(|| bad(path, format!("line {line}: column `t_s` is empty")))?;
        for (cols, out, any) in &mut series {
            let Some((cd, cc)) = *cols else { continue };
            // Only services with a demand: the others' capacity is not measured.
            let Some(d) = n(cd)? else { continue };
            *any = true;
            let c = n(cc)?.unwrap_or(0.0);
            match out.t.last() {
                Some(&last) if last == t => {
                    *out.demand.last_mut().expect("as long as t") += d;
                    *out.capacity.last_mut().expect("as long as t") += c;
                }
                Some(&last) if t < last => {
                    return Err(bad(path, format!("line {line}: `t_s` {t} is before the row above's {last}")));
                }
                _ => {
                    out.t.push(t);
                    out.demand.push(d);
                    out.capacity.push(c);
                }
            }
        }
    }
    Ok(series.into_iter().find(|s| s.2).map(|s| s.1))
}

/// Reads several run directories; labels that repeat get a `#k` suffix.
pub fn load_runs(dirs: &[PathBuf]) -> Result<Vec<RunData>, LoadError> {
    let runs: Vec<RunData> = dirs.iter().map(|d| load_run(d)).collect::<Result<_, _>>()?;
    Ok(dedupe(runs))
}

#[cfg(test)]
mod tests {
    use super::head_text;

    /// A long explain.txt is cut at a line's end with a note; a short one is whole;
    /// bytes that are not UTF-8 do not fail the report.
    #[test]
    fn a_long_text_is_cut_at_a_line_with_a_note() {
        let dir = std::env::temp_dir().join(format!("lahar-head-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("explain.txt");
        std::fs::write(&p, "abc\ndef\nghi\n").unwrap();
        assert_eq!(head_text(&p, 64).unwrap().as_deref(), Some("abc\ndef\nghi\n"));
        let cut = head_text(&p, 10).unwrap().unwrap();
        assert!(cut.starts_with("abc\ndef\n… (the first 0 KiB shown: the rest is in "), "{cut}");
        std::fs::write(&p, b"ok \xff\n").unwrap();
        assert_eq!(head_text(&p, 64).unwrap().as_deref(), Some("ok \u{fffd}\n"));
        assert_eq!(head_text(&dir.join("none.txt"), 64).unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
