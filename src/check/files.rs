//! The two sides of a check: a run or sweep directory, read from its summary.json
//! files, and the baseline file, read and written.

use super::{CmdError, unknown_metric};
use lahar_reports::headline::HEADLINE;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;

/// The baseline format version this lahar reads and writes (`lahar_check_baseline`).
pub const FORMAT_VERSION: u64 = 1;

/// Stored (unscaled) headline values in [`HEADLINE`] order; `None` for null or
/// absent (a metric without samples).
pub type Values = Vec<Option<f64>>;

/// The metrics of one side.
#[derive(Clone, Debug, PartialEq)]
pub enum Metrics {
    /// A run directory's.
    Run(Values),
    /// A sweep directory's, per cell id.
    Sweep(BTreeMap<String, Values>),
}

/// One side of a check: a baseline file or a run/sweep directory.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// lahar version that wrote the baseline, or ran the run (on a sweep: when all
    /// cells agree).
    pub lahar_version: Option<String>,
    /// Scenario name (on a sweep: when all cells agree).
    pub scenario: Option<String>,
    /// Seed (on a sweep: when all cells agree).
    pub seed: Option<u64>,
    /// sha256 of the scenario text (on a sweep: when all cells agree; absent from
    /// baselines written before it was recorded).
    pub scenario_sha256: Option<String>,
    /// The metrics.
    pub metrics: Metrics,
    /// Cells of a sweep directory that failed (no summary.json, an error.txt): cell
    /// id → the error's first line. Empty for runs and baselines.
    pub failed: BTreeMap<String, String>,
    /// Headline metrics (indices into [`HEADLINE`]) a baseline does not record at
    /// all — written by a lahar before the metric existed: a run's value for one
    /// is new, not missing. Empty for run and sweep directories.
    pub unrecorded: BTreeSet<usize>,
}

impl Snapshot {
    /// What it holds, in words: "21 metrics" or "2 cells × 21 metrics".
    pub fn extent(&self) -> String {
        match &self.metrics {
            Metrics::Run(v) => format!("{} metrics", v.len()),
            Metrics::Sweep(c) => format!("{} cells × {} metrics", c.len(), HEADLINE.len()),
        }
    }
}

fn input(msg: String) -> CmdError {
    CmdError::Input(msg)
}

/// A JSON error as `file:line:col: message` (serde_json's message says what was
/// expected).
fn json_error(file: &str, e: &serde_json::Error) -> CmdError {
    let text = e.to_string();
    if e.line() == 0 {
        return input(format!("{file}: {text}"));
    }
    let at = format!(" at line {} column {}", e.line(), e.column());
    input(format!("{file}:{}:{}: {}", e.line(), e.column(), text.strip_suffix(&at).unwrap_or(&text)))
}

/// Reads a run directory (its summary.json), or a sweep directory (sweep.json at its
/// root, one run directory per cell in `cells/<cell-id>/`).
pub fn read_run_dir(dir: &Path) -> Result<Snapshot, CmdError> {
    if !dir.is_dir() {
        return Err(input(format!("{}: not a run directory (it does not exist or is not a directory)", dir.display())));
    }
    if !dir.join("sweep.json").is_file() {
        let (lahar_version, scenario, seed, scenario_sha256, values) = read_summary(dir)?;
        return Ok(Snapshot {
            lahar_version,
            scenario,
            seed,
            scenario_sha256,
            metrics: Metrics::Run(values),
            failed: BTreeMap::new(),
            unrecorded: BTreeSet::new(),
        });
    }
    let cells_dir = dir.join("cells");
    let bad = |e: std::io::Error| {
        input(format!(
            "{}: cannot read the sweep's cells: {e} (a sweep directory holds cells/<cell-id>/)",
            cells_dir.display()
        ))
    };
    let (mut cells, mut failed) = (BTreeMap::new(), BTreeMap::new());
    let mut facts = Vec::new();
    for entry in std::fs::read_dir(&cells_dir).map_err(bad)? {
        let path = entry.map_err(bad)?.path();
        let Some(id) = path.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
            return Err(input(format!("{}: a cell name must be UTF-8", path.display())));
        };
        // Only directories are cells; hidden ones are `lahar sweep`'s temporaries of
        // cells still running or killed.
        if !path.is_dir() || id.starts_with('.') {
            continue;
        }
        if !path.join("summary.json").exists()
            && let Ok(e) = std::fs::read_to_string(path.join("error.txt"))
        {
            failed.insert(id, e.lines().next().unwrap_or_default().to_string());
            continue;
        }
        let (version, scenario, seed, sha, values) = read_summary(&path)?;
        facts.push((version, scenario, seed, sha));
        cells.insert(id, values);
    }
    if cells.is_empty() && failed.is_empty() {
        return Err(input(format!("{}: no cell directories in this sweep", cells_dir.display())));
    }
    Ok(Snapshot {
        lahar_version: common(facts.iter().map(|f| &f.0)),
        scenario: common(facts.iter().map(|f| &f.1)),
        seed: common(facts.iter().map(|f| &f.2)),
        scenario_sha256: common(facts.iter().map(|f| &f.3)),
        metrics: Metrics::Sweep(cells),
        failed,
        unrecorded: BTreeSet::new(),
    })
}

/// The value every item has, if they all have the same.
fn common<'a, T: PartialEq + Clone + 'a>(mut xs: impl Iterator<Item = &'a Option<T>>) -> Option<T> {
    let first = xs.next()?.clone()?;
    xs.all(|x| x.as_ref() == Some(&first)).then_some(first)
}

type Summary = (Option<String>, Option<String>, Option<u64>, Option<String>, Values);

/// Version, scenario, seed, the scenario's sha256 and headline values of
/// `<dir>/summary.json`.
fn read_summary(dir: &Path) -> Result<Summary, CmdError> {
    let path = dir.join("summary.json");
    let name = path.display().to_string();
    let text = lahar_core::util::files::read_to_string(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            input(format!("{name}: missing (a run directory holds the summary.json that `lahar run` writes)"))
        }
        _ => input(format!("{name}: cannot read: {e}")),
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| json_error(&name, &e))?;
    let Some(metrics) = v.get("metrics").filter(|m| m.is_object()) else {
        return Err(input(format!("{name}: expected a `metrics` object (as `lahar run` writes)")));
    };
    if let Some(at) = v.get("interrupted").filter(|x| !x.is_null()) {
        let when = at.get("at_s").and_then(Value::as_f64).map_or(String::new(), |s| format!(" at {s} s"));
        return Err(input(format!(
            "{name}: the run was interrupted{when} (`interrupted`): its metrics cover only part of it; run it to its end"
        )));
    }
    let mut values = Values::with_capacity(HEADLINE.len());
    for m in HEADLINE {
        values.push(m.read(metrics).map_err(|e| input(format!("{name}: {e}")))?);
    }
    // The job counts a run writes add up: none above the jobs it had.
    if let Some(jobs) = metrics.get("jobs") {
        let jobs = jobs
            .as_u64()
            .ok_or_else(|| input(format!("{name}: metrics/jobs: expected a whole number, found {jobs}")))?;
        for k in ["completed", "ended_otherwise", "unfinished"] {
            if let Some(x) = metrics.get(k).filter(|x| !x.is_null())
                && x.as_u64().is_none_or(|n| n > jobs)
            {
                return Err(input(format!(
                    "{name}: metrics/{k}: expected a whole number up to `jobs` ({jobs}), found {x}"
                )));
            }
        }
    }
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    Ok((
        text("lahar_version"),
        text("scenario"),
        v.get("seed").and_then(Value::as_u64),
        text("scenario_sha256"),
        values,
    ))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads a baseline file (see [`parse_baseline`]).
pub fn read_baseline(path: &Path) -> Result<Snapshot, CmdError> {
    // As every input: bounded, UTF-8 with the line and column of a bad byte, a
    // leading byte-order mark dropped (as a scenario's is).
    let text = lahar_core::util::files::read_to_string(path)
        .map_err(|e| input(format!("{}: cannot read the baseline: {e}", path.display())))?;
    parse_baseline(&text, &path.display().to_string())
}

/// Parses a baseline's text; `name` locates errors (`name:line:col: ...`). Rejects
/// another format version, unknown fields and metric keys, and a file that holds
/// neither or both of `metrics` and `cells`. An absent metric key reads as null.
pub fn parse_baseline(text: &str, name: &str) -> Result<Snapshot, CmdError> {
    // The version is checked first, so a future format is named as such rather than
    // failing on its new fields.
    let v: Value = serde_json::from_str(text).map_err(|e| json_error(name, &e))?;
    let Value::Object(top) = &v else {
        return Err(input(format!("{name}: expected a JSON object (a lahar check baseline), found {}", kind(&v))));
    };
    match top.get("lahar_check_baseline") {
        None => {
            return Err(input(format!(
                "{name}: not a lahar check baseline (no `lahar_check_baseline` key); \
                 write one with `lahar check --write-baseline FILE RUN_DIR`"
            )));
        }
        Some(x) if x.as_u64() == Some(FORMAT_VERSION) => {}
        Some(x) => {
            return Err(input(format!(
                "{name}: unknown baseline format version {x} (this lahar reads version {FORMAT_VERSION}); \
                 write the baseline again with this lahar's `lahar check --write-baseline`"
            )));
        }
    }
    let raw: Raw = serde_json::from_str(text).map_err(|e| json_error(name, &e))?;
    let recorded = |i: usize| match (&raw.metrics, &raw.cells) {
        (Some(m), _) => m.0.contains_key(&Key(i)),
        (None, Some(c)) => c.0.values().any(|m| m.0.contains_key(&Key(i))),
        (None, None) => true,
    };
    let unrecorded: BTreeSet<usize> = (0..HEADLINE.len()).filter(|&i| !recorded(i)).collect();
    let metrics = match (raw.metrics, raw.cells) {
        (Some(m), None) => Metrics::Run(m.values()),
        (None, Some(c)) => Metrics::Sweep(c.0.into_iter().map(|(id, m)| (id, m.values())).collect()),
        (Some(_), Some(_)) => {
            return Err(input(format!(
                "{name}: holds both `metrics` (a run baseline) and `cells` (a sweep baseline); expected one"
            )));
        }
        (None, None) => {
            return Err(input(format!("{name}: expected `metrics` (a run baseline) or `cells` (a sweep baseline)")));
        }
    };
    Ok(Snapshot {
        lahar_version: raw.lahar_version,
        scenario: raw.scenario,
        seed: raw.seed,
        scenario_sha256: raw.scenario_sha256,
        metrics,
        failed: BTreeMap::new(),
        unrecorded,
    })
}

/// The baseline file's shape (see docs/ci.md).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(rename = "lahar_check_baseline")]
    _version: IgnoredAny,
    lahar_version: Option<String>,
    scenario: Option<String>,
    seed: Option<u64>,
    scenario_sha256: Option<String>,
    metrics: Option<Unique<Key, Option<f64>>>,
    cells: Option<Unique<String, Unique<Key, Option<f64>>>>,
}

impl Unique<Key, Option<f64>> {
    fn values(&self) -> Values {
        (0..HEADLINE.len()).map(|i| self.0.get(&Key(i)).copied().flatten()).collect()
    }
}

/// A headline metric named in a baseline: its index in [`HEADLINE`]. Read from its
/// key, so an unknown key fails with its line and column.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Key(usize);

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(HEADLINE.get(self.0).map_or("?", |m| m.key))
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        HEADLINE.iter().position(|m| m.key == s).map(Key).ok_or_else(|| de::Error::custom(unknown_metric(&s, false)))
    }
}

/// A JSON object whose keys appear once (serde_json would keep the last silently).
struct Unique<K, V>(BTreeMap<K, V>);

impl<'de, K: Deserialize<'de> + Ord + fmt::Display, V: Deserialize<'de>> Deserialize<'de> for Unique<K, V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<K, V>(PhantomData<(K, V)>);
        impl<'de, K: Deserialize<'de> + Ord + fmt::Display, V: Deserialize<'de>> Visitor<'de> for Visit<K, V> {
            type Value = Unique<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut map = BTreeMap::new();
                while let Some(k) = a.next_key::<K>()? {
                    if map.contains_key(&k) {
                        return Err(de::Error::custom(format!("`{k}` appears twice")));
                    }
                    let v = a.next_value()?;
                    map.insert(k, v);
                }
                Ok(Unique(map))
            }
        }
        d.deserialize_map(Visit(PhantomData))
    }
}

/// The baseline file of a run or sweep (pretty JSON, metrics in [`HEADLINE`]
/// order). `lahar_version` is this lahar's; `scenario` and `seed` are written when
/// known.
pub fn baseline_json(s: &Snapshot) -> String {
    let text = |x: &str| Value::from(x).to_string();
    let mut out = format!("{{\n  \"lahar_check_baseline\": {FORMAT_VERSION},\n");
    out += &format!("  \"lahar_version\": {},\n", text(crate::VERSION));
    if let Some(sc) = &s.scenario {
        out += &format!("  \"scenario\": {},\n", text(sc));
    }
    if let Some(seed) = s.seed {
        out += &format!("  \"seed\": {seed},\n");
    }
    if let Some(sha) = &s.scenario_sha256 {
        out += &format!("  \"scenario_sha256\": {},\n", text(sha));
    }
    match &s.metrics {
        Metrics::Run(v) => out += &format!("  \"metrics\": {}\n", values_json(v, "  ")),
        Metrics::Sweep(cells) => {
            out += "  \"cells\": {\n";
            for (i, (id, v)) in cells.iter().enumerate() {
                let sep = if i + 1 < cells.len() { "," } else { "" };
                out += &format!("    {}: {}{sep}\n", text(id), values_json(v, "    "));
            }
            out += "  }\n";
        }
    }
    out += "}\n";
    out
}

fn values_json(v: &Values, indent: &str) -> String {
    let mut out = "{\n".to_string();
    for (i, m) in HEADLINE.iter().enumerate() {
        let x = match v.get(i).copied().flatten() {
            None => "null".to_string(),
            // Integers as in summary.json (`3`, not `3.0`).
            Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
            Some(x) => Value::from(x).to_string(),
        };
        let sep = if i + 1 < HEADLINE.len() { "," } else { "" };
        out += &format!("{indent}  \"{}\": {x}{sep}\n", m.key);
    }
    out + indent + "}"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_round_trips_and_errors_are_located() {
        let mut v: Values = (0..HEADLINE.len()).map(|i| Some(i as f64 * 1.5)).collect();
        v[3] = None;
        let run = Snapshot {
            lahar_version: Some(crate::VERSION.into()),
            scenario: Some("s\"q".into()),
            seed: Some(7),
            scenario_sha256: Some("ab12".into()),
            metrics: Metrics::Run(v.clone()),
            failed: BTreeMap::new(),
            unrecorded: BTreeSet::new(),
        };
        let text = baseline_json(&run);
        assert!(text.starts_with("{\n  \"lahar_check_baseline\": 1,\n"), "{text}");
        assert!(text.contains("\n    \"completed\": 0,\n    \"unfinished\": 1.5,\n"), "{text}");
        assert_eq!(parse_baseline(&text, "b.json").unwrap(), run);
        let sweep =
            Snapshot { seed: None, metrics: Metrics::Sweep([("a".into(), v.clone()), ("b".into(), v)].into()), ..run };
        assert_eq!(parse_baseline(&baseline_json(&sweep), "b.json").unwrap(), sweep);

        let err = |t: &str| parse_baseline(t, "b.json").unwrap_err().to_string();
        assert_eq!(
            err("{\"lahar_check_baseline\": 1,\n \"metrics\": {\"jct_s.mean\": 1, \"jct_s.mean\": 2}}"),
            "b.json:2:42: `jct_s.mean` appears twice"
        );
        assert_eq!(
            err("{\"lahar_check_baseline\": 1, \"metrics\": {\"slo_misses\": \"3\"}}"),
            "b.json:1:57: invalid type: string \"3\", expected f64"
        );
        assert_eq!(
            err("{\"lahar_check_baseline\": 1, \"metric\": {}}"),
            "b.json:1:36: unknown field `metric`, expected one of `lahar_check_baseline`, `lahar_version`, `scenario`, `seed`, `scenario_sha256`, `metrics`, `cells`"
        );
        assert_eq!(
            err("{\"lahar_check_baseline\": 1, \"metrics\": {}, \"cells\": {}}"),
            "b.json: holds both `metrics` (a run baseline) and `cells` (a sweep baseline); expected one"
        );
        assert_eq!(
            err("{\"lahar_check_baseline\": 1}"),
            "b.json: expected `metrics` (a run baseline) or `cells` (a sweep baseline)"
        );
        assert_eq!(err("[1]"), "b.json: expected a JSON object (a lahar check baseline), found an array");
        assert!(err("{\"lahar_check_baseline\": \"1\"}").starts_with("b.json: unknown baseline format version \"1\""));
    }
}
