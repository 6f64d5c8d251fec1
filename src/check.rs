//! `lahar check`: a regression gate for CI. The headline metrics of a run directory
//! (or of every cell of a sweep directory) are compared with a baseline file; a
//! metric that moved in its bad direction by more than its tolerance fails the check.
//!
//! Metric names, units and directions come from
//! [`lahar_reports::headline::HEADLINE`]. The baseline format, tolerance rules and
//! exit codes are documented in `docs/ci.md`.

mod files;
mod table;

pub use files::{
    FORMAT_VERSION, Metrics, Snapshot, Values, baseline_json, parse_baseline, read_baseline, read_run_dir,
};

use crate::error::CmdError;
use lahar_reports::headline::{Better, HEADLINE, Headline};
use std::collections::BTreeSet;
use std::path::Path;

/// Tolerance of each headline metric, in percent of |baseline| (see [`judge`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Tolerances {
    /// Percent per metric, in [`HEADLINE`] order.
    pct: Vec<f64>,
}

impl Default for Tolerances {
    /// 0% everywhere: runs are deterministic, so any move in a bad direction counts.
    fn default() -> Self {
        Tolerances { pct: vec![0.0; HEADLINE.len()] }
    }
}

impl Tolerances {
    /// Parses `--tolerance` arguments, `METRIC=P%` each: METRIC a headline key or
    /// `all`, P a non-negative number. A metric's own tolerance wins over `all`
    /// whatever their order; a metric given twice keeps the last.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Tolerances, CmdError> {
        let mut all = 0.0;
        let mut own: Vec<Option<f64>> = vec![None; HEADLINE.len()];
        for arg in args {
            let arg = arg.as_ref();
            let bad = |why: String| CmdError::Input(format!("--tolerance `{arg}`: {why}"));
            let Some((name, p)) = arg.split_once('=') else {
                return Err(bad("expected METRIC=P% (e.g. jct_s.mean=5%)".into()));
            };
            let Some(num) = p.strip_suffix('%') else {
                return Err(bad(format!("expected a percentage ending in `%` (e.g. {name}=5%)")));
            };
            let Some(pct) = num.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0) else {
                return Err(bad(format!("expected a non-negative number before `%`, found `{num}`")));
            };
            // + 0.0 turns -0 into 0, so it prints as "0%".
            let pct = pct + 0.0;
            if name == "all" {
                all = pct;
            } else if let Some(i) = HEADLINE.iter().position(|m| m.key == name) {
                own[i] = Some(pct);
            } else {
                return Err(bad(unknown_metric(name, true)));
            }
        }
        Ok(Tolerances { pct: own.into_iter().map(|p| p.unwrap_or(all)).collect() })
    }

    /// The tolerance of a headline metric, in percent (0 for a metric not in
    /// [`HEADLINE`]).
    pub fn of(&self, m: &Headline) -> f64 {
        HEADLINE.iter().position(|h| h.key == m.key).and_then(|i| self.pct.get(i)).copied().unwrap_or(0.0)
    }
}

/// "unknown metric `x`", with the nearest key when one is close and the valid keys
/// (`all` among them where the caller accepts it).
pub(crate) fn unknown_metric(name: &str, with_all: bool) -> String {
    let limit = (name.chars().count() / 3).max(2);
    let near = HEADLINE
        .iter()
        .map(|m| (crate::edit_distance(m.key, name), m.key))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d);
    let hint = near.map(|(_, k)| format!(" (did you mean `{k}`?)")).unwrap_or_default();
    let keys: Vec<&str> = with_all.then_some("all").into_iter().chain(HEADLINE.iter().map(|m| m.key)).collect();
    format!("unknown metric `{name}`{hint}; valid metrics: {}", keys.join(", "))
}

/// The outcome for one metric (or, on a sweep, one whole cell).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Unchanged, or moved in the bad direction within tolerance.
    Ok,
    /// Moved in the good direction.
    Improved,
    /// Moved in the bad direction beyond tolerance: a failure.
    Regression,
    /// Has a value on one side only (a metric), or a baseline cell absent from the
    /// run: a failure.
    Missing,
    /// No value on either side (no samples): passes.
    NotAvailable,
    /// A run cell absent from the baseline: reported, passes.
    New,
    /// A sweep cell whose run failed (error.txt instead of summary.json): a failure.
    Failed,
}

impl Verdict {
    /// The word printed in the table.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Improved => "improved",
            Verdict::Regression => "REGRESSION",
            Verdict::Missing => "missing",
            Verdict::NotAvailable => "n/a",
            Verdict::New => "new",
            Verdict::Failed => "FAILED",
        }
    }

    /// Whether this outcome fails the check.
    pub fn fails(self) -> bool {
        matches!(self, Verdict::Regression | Verdict::Missing | Verdict::Failed)
    }
}

/// Judges one metric: `baseline` and `run` are stored (unscaled) values, `None` for
/// null or absent; `pct` the tolerance in percent. The metric regresses when it moved
/// in its bad direction by more than `pct`% of |baseline|, or, when the baseline is
/// 0, by more than `pct`/100 in absolute terms (so at 0% any bad move fails).
pub fn judge(better: Better, baseline: Option<f64>, run: Option<f64>, pct: f64) -> Verdict {
    let (b, r) = match (baseline, run) {
        (None, None) => return Verdict::NotAvailable,
        (Some(b), Some(r)) => (b, r),
        _ => return Verdict::Missing,
    };
    let worse = match better {
        Better::Lower => r - b,
        Better::Higher => b - r,
    };
    // Multiplied out instead of divided, so a move of exactly P% passes.
    let allowed = if b == 0.0 { pct } else { pct * b.abs() };
    if worse * 100.0 > allowed {
        Verdict::Regression
    } else if worse < 0.0 {
        Verdict::Improved
    } else {
        Verdict::Ok
    }
}

/// One line of the check's table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Cell id on a sweep, `None` on a run.
    pub cell: Option<String>,
    /// The metric; `None` when the row is about a whole cell (missing, new or
    /// failed).
    pub metric: Option<&'static Headline>,
    /// Stored baseline value (`None`: null or absent).
    pub baseline: Option<f64>,
    /// Stored run value (`None`: null or absent).
    pub run: Option<f64>,
    /// Tolerance in percent.
    pub tolerance_pct: f64,
    /// Outcome.
    pub verdict: Verdict,
    /// Why a failed cell failed (the first line of its error.txt).
    pub error: Option<String>,
}

impl Row {
    /// Relative change `(run − baseline) / |baseline|`; `None` when a side has no
    /// value, or the baseline is 0 and the run is not.
    pub fn change(&self) -> Option<f64> {
        match (self.baseline, self.run) {
            (Some(b), Some(r)) if b != 0.0 => Some((r - b) / b.abs()),
            (Some(b), Some(r)) if r == b => Some(0.0),
            _ => None,
        }
    }
}

/// The result of a check: rows in [`HEADLINE`] order, per cell in cell-id order on
/// a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// Whether a sweep was checked (the table then has a cell column).
    pub sweep: bool,
    /// The rows.
    pub rows: Vec<Row>,
    /// What differs between the baseline's inputs and the run's ([`other_inputs`]):
    /// then the metrics compare two experiments, not two versions of one.
    pub other_inputs: Option<String>,
}

/// What differs between the inputs the baseline and the run record — scenario
/// name, seed, the scenario text's sha256, each where both sides have it — or
/// `None` when nothing recorded differs.
pub fn other_inputs(baseline: &Snapshot, run: &Snapshot) -> Option<String> {
    let mut diffs = Vec::new();
    if let (Some(b), Some(r)) = (&baseline.scenario, &run.scenario)
        && b != r
    {
        diffs.push(format!("scenario `{b}`, run `{r}`"));
    }
    if let (Some(b), Some(r)) = (baseline.seed, run.seed)
        && b != r
    {
        diffs.push(format!("seed {b}, run {r}"));
    }
    if let (Some(b), Some(r)) = (&baseline.scenario_sha256, &run.scenario_sha256)
        && b != r
    {
        let short = |x: &str| x.chars().take(12).collect::<String>();
        diffs.push(format!("scenario text sha256 {}…, run {}…", short(b), short(r)));
    }
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

impl Check {
    /// Whether no row fails.
    pub fn passed(&self) -> bool {
        !self.rows.iter().any(|r| r.verdict.fails())
    }
}

/// Compares a baseline with a run; `None` when one is a run and the other a sweep.
/// A failed cell fails the check, even one that is not in the baseline.
pub fn compare(baseline: &Snapshot, run: &Snapshot, tol: &Tolerances) -> Option<Check> {
    match (&baseline.metrics, &run.metrics) {
        (Metrics::Run(b), Metrics::Run(r)) => Some(Check {
            sweep: false,
            rows: metric_rows(None, b, r, tol, &baseline.unrecorded),
            other_inputs: other_inputs(baseline, run),
        }),
        (Metrics::Sweep(b), Metrics::Sweep(r)) => {
            let mut rows = Vec::new();
            let ids: BTreeSet<&String> = b.keys().chain(r.keys()).chain(run.failed.keys()).collect();
            for id in ids {
                let whole = |verdict, error: Option<&String>| Row {
                    cell: Some(id.clone()),
                    metric: None,
                    baseline: None,
                    run: None,
                    tolerance_pct: 0.0,
                    verdict,
                    error: error.cloned(),
                };
                match (b.get(id), r.get(id), run.failed.get(id)) {
                    (_, _, Some(e)) => rows.push(whole(Verdict::Failed, Some(e))),
                    (Some(bv), Some(rv), None) => rows.extend(metric_rows(Some(id), bv, rv, tol, &baseline.unrecorded)),
                    (Some(_), None, None) => rows.push(whole(Verdict::Missing, None)),
                    (None, _, None) => rows.push(whole(Verdict::New, None)),
                }
            }
            Some(Check { sweep: true, rows, other_inputs: other_inputs(baseline, run) })
        }
        _ => None,
    }
}

/// A metric the baseline does not record (`unrecorded`: written before the
/// metric existed) is new where the run has a value.
fn metric_rows(
    cell: Option<&String>,
    b: &Values,
    r: &Values,
    tol: &Tolerances,
    unrecorded: &BTreeSet<usize>,
) -> Vec<Row> {
    HEADLINE
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (baseline, run) = (b.get(i).copied().flatten(), r.get(i).copied().flatten());
            let tolerance_pct = tol.of(m);
            let verdict = match unrecorded.contains(&i) && run.is_some() {
                true => Verdict::New,
                false => judge(m.better, baseline, run, tolerance_pct),
            };
            Row { cell: cell.cloned(), metric: Some(m), baseline, run, tolerance_pct, verdict, error: None }
        })
        .collect()
}

/// `lahar check --baseline FILE RUN_DIR --tolerance ...`: reads both sides and
/// compares them.
pub fn check<S: AsRef<str>>(baseline: &Path, run_dir: &Path, tolerances: &[S]) -> Result<Check, CmdError> {
    let tol = Tolerances::parse(tolerances)?;
    let base = read_baseline(baseline)?;
    let run = read_run_dir(run_dir)?;
    compare(&base, &run, &tol).ok_or_else(|| {
        let (b, r) = (baseline.display(), run_dir.display());
        CmdError::Input(match base.metrics {
            Metrics::Run(_) => format!(
                "{b}: a run baseline (it holds `metrics`), but {r} is a sweep directory (it holds sweep.json); \
                 write a sweep baseline with `lahar check --write-baseline FILE {r}`"
            ),
            Metrics::Sweep(_) => format!(
                "{b}: a sweep baseline (it holds `cells`), but {r} is a run directory (no sweep.json); \
                 write a run baseline with `lahar check --write-baseline FILE {r}`"
            ),
        })
    })
}

/// `lahar check --write-baseline FILE RUN_DIR`: writes the baseline of a run or
/// sweep directory (creating FILE's directory) and returns what it holds. A sweep
/// with a failed cell has no baseline: the check would later call that cell new.
pub fn write_baseline(path: &Path, run_dir: &Path) -> Result<Snapshot, CmdError> {
    let run = read_run_dir(run_dir)?;
    if let Some((id, e)) = run.failed.iter().next() {
        return Err(CmdError::Input(format!(
            "{}: the cell failed ({e}); a baseline needs every cell's summary.json ({} failed)",
            run_dir.join("cells").join(id).display(),
            run.failed.len()
        )));
    }
    let out = |e: std::io::Error| CmdError::Output(format!("cannot write {}: {e}", path.display()));
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(out)?;
    }
    lahar_core::util::files::write_atomic(path, baseline_json(&run).as_bytes()).map_err(out)?;
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lahar_reports::headline::by_key;
    use std::collections::BTreeMap;

    #[test]
    fn judge_follows_direction_and_tolerance() {
        use Verdict::*;
        let (lo, hi) = (Better::Lower, Better::Higher);
        assert_eq!(judge(lo, Some(110.0), Some(110.0), 0.0), Ok);
        assert_eq!(judge(lo, Some(110.0), Some(119.0), 0.0), Regression);
        assert_eq!(judge(lo, Some(110.0), Some(100.0), 0.0), Improved);
        assert_eq!(judge(hi, Some(4.0), Some(3.0), 0.0), Regression);
        assert_eq!(judge(hi, Some(2.0), Some(3.0), 0.0), Improved);
        // +9 on 110: 8.1818...%.
        assert_eq!(judge(lo, Some(110.0), Some(119.0), 8.19), Ok);
        assert_eq!(judge(lo, Some(110.0), Some(119.0), 8.18), Regression);
        // Exactly the tolerance passes: 5 on 100 is 5%.
        assert_eq!(judge(lo, Some(100.0), Some(105.0), 5.0), Ok);
        assert_eq!(judge(hi, Some(-100.0), Some(-105.0), 5.0), Ok);
        assert_eq!(judge(hi, Some(-100.0), Some(-105.01), 5.0), Regression);
        // Baseline 0: P% is an absolute P/100.
        assert_eq!(judge(lo, Some(0.0), Some(1.0), 100.0), Ok);
        assert_eq!(judge(lo, Some(0.0), Some(1.0), 99.0), Regression);
        assert_eq!(judge(lo, Some(0.0), Some(1e-12), 0.0), Regression);
        assert_eq!(judge(lo, None, None, 0.0), NotAvailable);
        assert_eq!(judge(lo, Some(1.0), None, 50.0), Missing);
        assert_eq!(judge(hi, None, Some(1.0), 50.0), Missing);
    }

    #[test]
    fn tolerances_parse_with_all_and_overrides() {
        let jct = by_key("jct_s.mean").unwrap();
        let done = by_key("completed").unwrap();
        let t = Tolerances::parse(&["jct_s.mean=5%", "all=2.5%"]).unwrap();
        assert_eq!((t.of(jct), t.of(done)), (5.0, 2.5));
        let t = Tolerances::parse(&["completed=1%", "completed=-0%"]).unwrap();
        assert_eq!((t.of(jct), t.of(done)), (0.0, 0.0));
        assert!(t.of(done).is_sign_positive());
        assert_eq!(Tolerances::parse::<&str>(&[]).unwrap(), Tolerances::default());
        let err = |a: &str| Tolerances::parse(&[a]).unwrap_err().to_string();
        assert_eq!(err("jct_s.mean"), "--tolerance `jct_s.mean`: expected METRIC=P% (e.g. jct_s.mean=5%)");
        assert!(err("jct_s.mean=5").contains("expected a percentage ending in `%` (e.g. jct_s.mean=5%)"));
        for bad in ["x=-1%", "x=inf%", "x=NaN%", "x=%", "x=five%"] {
            assert!(err(bad).contains("expected a non-negative number before `%`"), "{bad}");
        }
        let e = err("jct_s.maen=5%");
        assert!(e.starts_with("--tolerance `jct_s.maen=5%`: unknown metric `jct_s.maen` (did you mean `jct_s.mean`?); valid metrics: all, "));
        assert!(e.ends_with("valid metrics: all, completed, unfinished, jct_s.mean, jct_s.p50, jct_s.p90, jct_s.p99, wait_s.mean, wait_s.p90, slowdown.mean, slowdown.p99, makespan_s, gpu_allocation_rate, gpu_effective_utilization, gpu_time.stalled, cpu_allocation_rate, fragmentation, jain_fairness, rho.mean, rho.max, preemptions, gpu_hours_lost, gang_wait_s.mean, slo_misses"), "{e}");
        assert!(!err("zzzzzzzz=1%").contains("did you mean"));
    }

    #[test]
    fn sweep_cells_missing_and_new() {
        let v: Values = vec![Some(1.0); HEADLINE.len()];
        let snap = |metrics, failed: &[&str]| Snapshot {
            lahar_version: None,
            scenario: None,
            seed: None,
            scenario_sha256: None,
            metrics,
            failed: failed.iter().map(|i| (i.to_string(), "boom".to_string())).collect(),
            unrecorded: BTreeSet::new(),
        };
        let sweep = |ids: &[&str], failed: &[&str]| {
            snap(Metrics::Sweep(ids.iter().map(|i| (i.to_string(), v.clone())).collect()), failed)
        };
        let tol = Tolerances::default();
        let c = compare(&sweep(&["a", "b", "d"], &[]), &sweep(&["a", "c"], &["d", "e"]), &tol).unwrap();
        assert_eq!(c.rows.len(), HEADLINE.len() + 4);
        let whole: Vec<(&str, Verdict)> =
            c.rows.iter().filter(|r| r.metric.is_none()).map(|r| (r.cell.as_deref().unwrap(), r.verdict)).collect();
        use Verdict::*;
        assert_eq!(whole, [("b", Missing), ("c", New), ("d", Failed), ("e", Failed)]);
        assert!(!c.passed());
        assert!(compare(&sweep(&["a"], &[]), &sweep(&["a", "c"], &[]), &tol).unwrap().passed());
        assert!(compare(&snap(Metrics::Run(v.clone()), &[]), &sweep(&["a"], &[]), &tol).is_none());
    }

    /// A baseline written before a metric existed does not record it: the run's
    /// value is new and passes; a recorded null against a value is still missing.
    #[test]
    fn a_metric_the_baseline_predates_is_new() {
        let run = Snapshot {
            lahar_version: None,
            scenario: None,
            seed: None,
            scenario_sha256: None,
            metrics: Metrics::Run(vec![Some(1.0); HEADLINE.len()]),
            failed: BTreeMap::new(),
            unrecorded: BTreeSet::new(),
        };
        let verdict = |c: &Check, key: &str| c.rows.iter().find(|r| r.metric.unwrap().key == key).unwrap().verdict;
        let tol = Tolerances::default();
        let old = parse_baseline(r#"{"lahar_check_baseline": 1, "metrics": {"completed": 1}}"#, "b.json").unwrap();
        let c = compare(&old, &run, &tol).unwrap();
        assert_eq!((verdict(&c, "completed"), verdict(&c, "gpu_time.stalled")), (Verdict::Ok, Verdict::New));
        assert!(c.passed());
        let null =
            parse_baseline(r#"{"lahar_check_baseline": 1, "metrics": {"gpu_time.stalled": null}}"#, "b.json").unwrap();
        let c = compare(&null, &run, &tol).unwrap();
        assert_eq!(verdict(&c, "gpu_time.stalled"), Verdict::Missing);
        assert!(!c.passed());
    }

    /// A baseline of another scenario, seed or scenario text is named as such;
    /// what one side does not record is not compared.
    #[test]
    fn other_inputs_are_named() {
        let snap = |name: Option<&str>, seed: Option<u64>, sha: Option<&str>| Snapshot {
            lahar_version: None,
            scenario: name.map(Into::into),
            seed,
            scenario_sha256: sha.map(Into::into),
            metrics: Metrics::Run(vec![None; HEADLINE.len()]),
            failed: BTreeMap::new(),
            unrecorded: BTreeSet::new(),
        };
        let a = snap(Some("mix"), Some(7), Some("0123456789abcdef"));
        assert_eq!(other_inputs(&a, &a), None);
        assert_eq!(other_inputs(&a, &snap(None, None, None)), None);
        assert_eq!(
            other_inputs(&a, &snap(Some("big"), Some(8), Some("fedcba9876543210"))).as_deref(),
            Some("scenario `mix`, run `big`; seed 7, run 8; scenario text sha256 0123456789ab…, run fedcba987654…")
        );
        let c = compare(&a, &snap(Some("mix"), Some(7), Some("ff")), &Tolerances::default()).unwrap();
        assert!(c.other_inputs.as_deref().is_some_and(|m| m.starts_with("scenario text sha256")));
    }

    /// docs/ci.md lists every headline key with its direction.
    #[test]
    fn docs_list_every_headline_key() {
        let doc = include_str!("../docs/ci.md");
        for m in HEADLINE {
            let dir = match m.better {
                Better::Lower => "lower",
                Better::Higher => "higher",
            };
            let row = format!("| `{}` | {} |", m.key, dir);
            assert!(doc.contains(&row), "docs/ci.md lacks the row `{row}`");
        }
    }
}
