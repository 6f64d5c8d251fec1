//! The sweep file (`kind: Sweep`, docs/sweeps.md): a base scenario and axes that
//! override its fields by path, expanded into cells.
//!
//! Cells are numbered in a fixed order — grid axes in file order (the first varies
//! slowest), then the zipped lists, then the seeds — so a cell's id, and which
//! shard runs it, never depends on how or where the sweep runs.

use crate::overrides::{FieldPath, Override, load_tree, parse_one};
use crate::scenario::{Diagnostic, ScenarioError};
use lahar_workloads::manifest::yaml::{At, parse_documents};
use lahar_workloads::manifest::{Node, Val};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// One value of an axis.
#[derive(Clone, Debug)]
pub struct AxisValue {
    /// Its name in sweep.csv, summary.csv and plot legends.
    pub name: String,
    /// The value as a number, when it is one (numeric axes are plotted against).
    pub x: Option<f64>,
    /// The YAML value set at the axis's path.
    pub value: Node,
    /// Where it is written.
    pub at: At,
}

/// An axis: a field path and its values.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Column name.
    pub name: String,
    /// The field it sets.
    pub path: FieldPath,
    /// Its values.
    pub values: Vec<AxisValue>,
}

impl Axis {
    /// Whether every value is a number.
    pub fn numeric(&self) -> bool {
        self.values.iter().all(|v| v.x.is_some())
    }
}

/// A parsed sweep.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// `metadata.name`.
    pub name: String,
    /// The sweep file, for messages.
    pub file: String,
    /// sha256 of the sweep file and of the base scenario's text: a sweep directory
    /// records it, so `--resume` and `merge` refuse to mix two sweeps.
    pub sha256: String,
    /// The base scenario as a located tree, the file its positions refer to, and the
    /// folder its relative paths resolve against.
    pub base: (Node, String, PathBuf),
    /// Grid axes then zipped axes (all zipped axes have the same length).
    pub axes: Vec<Axis>,
    /// How many of `axes` are grid axes (the rest are zipped).
    pub grid: usize,
    /// Seeds each point runs with (`None`: the scenario's own seed, one run).
    pub seeds: Option<Vec<u64>>,
}

/// One cell: a point of the axes and a seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    /// Position in the sweep's cell order.
    pub index: usize,
    /// Directory name under `cells/`.
    pub id: String,
    /// The point's index in each axis (`axes` order).
    pub point: Vec<usize>,
    /// The point's number (cells of the same point differ only by seed).
    pub group: usize,
    /// The seed, when the sweep sets seeds.
    pub seed: Option<u64>,
}

/// Cells of one sweep, at most.
pub const MAX_CELLS: usize = 1_000_000;

/// The directory name of cell `index` of `count`: the index zero-padded to the
/// width of the largest (at least 4 digits), then `-seed<seed>` when the sweep
/// sets seeds.
pub fn cell_id(index: usize, count: usize, seed: Option<u64>) -> String {
    let width = count.saturating_sub(1).to_string().len().max(4);
    match seed {
        Some(s) => format!("{index:0width$}-seed{s}"),
        None => format!("{index:0width$}"),
    }
}

fn err(file: &str, at: At, path: &str, msg: impl Into<String>) -> Diagnostic {
    Diagnostic { file: file.into(), at, path: path.into(), message: msg.into() }
}

/// Reads and checks a sweep file: its structure, the base scenario, and every axis
/// value applied to the base scenario alone (a bad path or a value of the wrong
/// type is reported here, before any cell runs, at the value in the sweep file).
pub fn load(path: &Path) -> Result<Sweep, ScenarioError> {
    let file = path.display().to_string();
    let text = lahar_core::util::files::read_to_string(path)
        .map_err(|e| ScenarioError::one(&file, None, "", format!("cannot read sweep file: {e}")))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    load_str(&text, &file, &dir)
}

/// [`load`] of sweep text: `file` names it in errors, its relative paths
/// resolve against `dir`.
pub fn load_str(text: &str, file: &str, dir: &Path) -> Result<Sweep, ScenarioError> {
    let sweep = parse(text, file, dir)?;
    check_values(&sweep)?;
    Ok(sweep)
}

fn parse(text: &str, file: &str, dir: &Path) -> Result<Sweep, ScenarioError> {
    let docs = parse_documents(text, file).map_err(|(at, m)| ScenarioError::one(file, at, "", m))?;
    let [doc] = docs.as_slice() else {
        return Err(ScenarioError::one(file, None, "", "expected one YAML document"));
    };
    let root = &doc.root;
    let mut errors = Vec::new();
    let mut e = |at: At, path: &str, msg: String| errors.push(err(file, at, path, msg));
    let Val::Map(top) = &root.val else {
        return Err(ScenarioError::one(file, root.at, "", "expected a map with apiVersion, kind, metadata, spec"));
    };
    for (k, v) in top {
        if !["apiVersion", "kind", "metadata", "spec"].contains(&k.as_str()) {
            e(v.at, k, format!("unknown field `{k}`, expected one of apiVersion, kind, metadata, spec"));
        }
    }
    let text_of = |n: Option<&Node>| n.and_then(Node::scalar);
    if text_of(root.get("apiVersion")).as_deref() != Some("lahar.io/v1alpha1") {
        e(root.get("apiVersion").and_then(|n| n.at), "apiVersion", "expected `lahar.io/v1alpha1`".into());
    }
    if text_of(root.get("kind")).as_deref() != Some("Sweep") {
        e(root.get("kind").and_then(|n| n.at), "kind", "expected `Sweep`".into());
    }
    let name = root.get("metadata").and_then(|m| m.get("name")).and_then(Node::scalar).unwrap_or_default();
    if let Err(m) = lahar_core::util::files::component(&name) {
        e(root.get("metadata").and_then(|n| n.at), "metadata.name", m);
    }
    let Some(spec) = root.get("spec") else {
        e(root.at, "spec", "missing field `spec`".into());
        return Err(ScenarioError { errors });
    };
    if let Val::Map(m) = &spec.val {
        for (k, v) in m {
            if !["scenario", "grid", "zip", "seeds"].contains(&k.as_str()) {
                e(
                    v.at,
                    &format!("spec.{k}"),
                    format!("unknown field `{k}`, expected one of scenario, grid, zip, seeds"),
                );
            }
        }
    } else {
        e(spec.at, "spec", format!("expected a map, got {}", spec.type_name()));
    }
    // The base scenario: a path (relative to the sweep file) or written inline.
    let mut base_text = String::new();
    let base = match spec.get("scenario") {
        Some(n @ Node { val: Val::Map(_), .. }) => {
            base_text = crate::overrides::to_yaml(n);
            Some((n.clone(), file.to_string(), dir.to_path_buf()))
        }
        Some(Node { val: Val::Str(p), at }) => {
            let path = dir.join(p);
            match lahar_core::util::files::read_to_string(&path) {
                Ok(t) => {
                    let f = path.display().to_string();
                    match parse_one(&t, &f) {
                        Ok(n) => {
                            base_text = t;
                            Some((n, f, path.parent().map(Path::to_path_buf).unwrap_or_default()))
                        }
                        Err(x) => {
                            errors.extend(x.errors);
                            None
                        }
                    }
                }
                Err(x) => {
                    e(*at, "spec.scenario", format!("cannot read scenario {}: {x}", path.display()));
                    None
                }
            }
        }
        Some(n) => {
            e(n.at, "spec.scenario", format!("expected a file path or an inline scenario map, got {}", n.type_name()));
            None
        }
        None => {
            e(spec.at, "spec.scenario", "missing: a scenario file path or an inline scenario".into());
            None
        }
    };
    let mut axes = Vec::new();
    let grid_axes = axes_of(spec.get("grid"), "spec.grid", file, &mut errors);
    let grid = grid_axes.len();
    axes.extend(grid_axes);
    let zipped = axes_of(spec.get("zip"), "spec.zip", file, &mut errors);
    if let Some(first) = zipped.first() {
        for (i, a) in zipped.iter().enumerate() {
            if a.values.len() != first.values.len() {
                let at = spec.get("zip").and_then(|z| match &z.val {
                    Val::Seq(v) => v.get(i).and_then(|n| n.at),
                    _ => None,
                });
                errors.push(err(
                    file,
                    at,
                    &format!("spec.zip[{i}].values"),
                    format!(
                        "zipped axes advance together: `{}` has {} values, `{}` has {}",
                        a.name,
                        a.values.len(),
                        first.name,
                        first.values.len()
                    ),
                ));
            }
        }
    }
    axes.extend(zipped);
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].iter().any(|b| b.name == a.name) {
            errors.push(err(file, None, "spec", format!("axis name `{}` is used twice", a.name)));
        }
    }
    let seeds = match spec.get("seeds") {
        None => None,
        Some(Node { val: Val::Int(n), at }) if *n > MAX_CELLS as i128 => {
            errors.push(err(file, *at, "spec.seeds", format!("{n} seeds; a sweep has at most {MAX_CELLS} cells")));
            None
        }
        Some(Node { val: Val::Int(n), .. }) if *n >= 1 => {
            // N replications: the scenario's seed and the N − 1 after it.
            let first = base
                .as_ref()
                .and_then(|(b, _, _)| b.get("spec").and_then(|s| s.get("seed")))
                .and_then(|s| match s.val {
                    Val::Int(v) => u64::try_from(v).ok(),
                    _ => None,
                })
                .unwrap_or(0);
            Some((0..*n as u64).map(|i| first.wrapping_add(i)).collect())
        }
        Some(Node { val: Val::Seq(items), at }) if !items.is_empty() => {
            let mut v = Vec::new();
            for (i, it) in items.iter().enumerate() {
                match it.val {
                    Val::Int(s) if u64::try_from(s).is_ok() => v.push(s as u64),
                    _ => errors.push(err(file, it.at, &format!("spec.seeds[{i}]"), "expected a non-negative integer")),
                }
            }
            let mut sorted = v.clone();
            sorted.sort_unstable();
            sorted.dedup();
            if sorted.len() != v.len() {
                errors.push(err(file, *at, "spec.seeds", "a seed is listed twice"));
            }
            Some(v)
        }
        Some(n) => {
            errors.push(err(file, n.at, "spec.seeds", "expected a count (1 or more) or a list of seeds"));
            None
        }
    };
    // The number of cells, checked before any list of them is made.
    let grid_points = axes[..grid.min(axes.len())].iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
    let zip_len = axes.get(grid).map_or(1, |a| a.values.len());
    let cells = grid_points
        .and_then(|g| g.checked_mul(zip_len))
        .and_then(|p| p.checked_mul(seeds.as_ref().map_or(1, Vec::len)));
    if cells.is_none_or(|n| n > MAX_CELLS) {
        let n = cells.map_or("more than 2^64".to_string(), |n| n.to_string());
        errors.push(err(
            file,
            spec.at,
            "spec",
            format!("{n} cells (grid × zip × seeds); a sweep has at most {MAX_CELLS}"),
        ));
    }
    // `seeds:` sets every cell's seed: an axis over it would be overridden.
    if seeds.is_some()
        && let Some(a) = axes.iter().find(|a| a.path.to_string() == "spec.seed")
    {
        errors.push(err(
            file,
            spec.get("seeds").and_then(|n| n.at),
            "spec.seeds",
            format!("axis `{}` sets spec.seed, which `seeds:` sets for every cell; drop one of the two", a.name),
        ));
    }
    if !errors.is_empty() {
        return Err(ScenarioError { errors });
    }
    let mut h = Sha256::new();
    h.update(text.as_bytes());
    h.update(base_text.as_bytes());
    let sha256 = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(Sweep { name, file: file.into(), sha256, base: base.expect("no errors"), axes, grid, seeds })
}

/// The axes of `spec.grid` or `spec.zip`.
fn axes_of(list: Option<&Node>, at_path: &str, file: &str, errors: &mut Vec<Diagnostic>) -> Vec<Axis> {
    let Some(list) = list else { return Vec::new() };
    let Val::Seq(items) = &list.val else {
        errors.push(err(file, list.at, at_path, format!("expected a list of axes, got {}", list.type_name())));
        return Vec::new();
    };
    let mut axes = Vec::new();
    for (i, a) in items.iter().enumerate() {
        let here = format!("{at_path}[{i}]");
        let Val::Map(m) = &a.val else {
            errors.push(err(file, a.at, &here, "expected an axis: {name, path, values}"));
            continue;
        };
        for (k, v) in m {
            if !["name", "path", "values"].contains(&k.as_str()) {
                errors.push(err(
                    file,
                    v.at,
                    &format!("{here}.{k}"),
                    format!("unknown field `{k}`, expected name, path, values"),
                ));
            }
        }
        let path = match a.get("path").and_then(Node::scalar).map(|p| FieldPath::parse(&p)) {
            Some(Ok(p)) => Some(p),
            Some(Err(m)) => {
                errors.push(err(file, a.get("path").and_then(|n| n.at), &format!("{here}.path"), m));
                None
            }
            None => {
                errors.push(err(file, a.at, &format!("{here}.path"), "missing: the scenario field this axis sets"));
                None
            }
        };
        // The axis is named by its `name`, else by the path's last key.
        let name = a.get("name").and_then(Node::scalar).or_else(|| {
            path.as_ref().and_then(|p| {
                p.0.iter().rev().find_map(|s| match s {
                    crate::overrides::Seg::Key(k) => Some(k.clone()),
                    crate::overrides::Seg::Index(_) => None,
                })
            })
        });
        let values = match a.get("values") {
            Some(Node { val: Val::Seq(vs), .. }) if !vs.is_empty() => {
                let mut out = Vec::new();
                for (k, v) in vs.iter().enumerate() {
                    match value_of(v) {
                        Ok(x) => out.push(x),
                        Err(m) => errors.push(err(file, v.at, &format!("{here}.values[{k}]"), m)),
                    }
                }
                for (k, v) in out.iter().enumerate() {
                    if out[..k].iter().any(|o| o.name == v.name) {
                        errors.push(err(
                            file,
                            v.at,
                            &format!("{here}.values[{k}]"),
                            format!("value name `{}` is used twice", v.name),
                        ));
                    }
                }
                out
            }
            other => {
                errors.push(err(
                    file,
                    other.and_then(|n| n.at).or(a.at),
                    &format!("{here}.values"),
                    "expected a non-empty list of values",
                ));
                Vec::new()
            }
        };
        if let Some(name) = &name {
            // The name is a column of sweep.csv and summary.csv and part of plot
            // file names: checked here, before any cell runs.
            let at = a.get("name").and_then(|n| n.at).or(a.at);
            if let Err(m) = lahar_core::util::files::component(name) {
                errors.push(err(file, at, &format!("{here}.name"), format!("axis name {m}")));
            } else if reserved_column(name) {
                errors.push(err(
                    file,
                    at,
                    &format!("{here}.name"),
                    format!("axis name `{name}` is a column lahar writes (cell, seed, status, error, cells, ok or a metric); give the axis another `name`"),
                ));
            }
        }
        if let (Some(path), Some(name)) = (path, name) {
            axes.push(Axis { name, path, values });
        }
    }
    axes
}

/// An axis value: a scalar (named by its text) or `{name: ..., value: ...}`.
fn value_of(v: &Node) -> Result<AxisValue, String> {
    let named = matches!(&v.val, Val::Map(m) if m.len() == 2 && v.get("name").is_some() && v.get("value").is_some());
    if named {
        let name = v.get("name").and_then(Node::scalar).ok_or("`name` must be a scalar")?;
        let value = v.get("value").expect("checked").clone();
        let x = number(&value);
        return Ok(AxisValue { name, x, value, at: v.at });
    }
    let name = v
        .scalar()
        .ok_or_else(|| format!("{} value needs a name: write it as {{name: ..., value: ...}}", v.type_name()))?;
    Ok(AxisValue { name, x: number(v), value: v.clone(), at: v.at })
}

fn number(v: &Node) -> Option<f64> {
    let x = match v.val {
        Val::Int(i) => i as f64,
        Val::Float(f) => f,
        _ => return None,
    };
    plottable(x).then_some(x)
}

/// The numbers an axis is plotted against: finite, at most 1e15 either way (a
/// larger value is named, not plotted: an axis over ±1e308 has no ticks).
pub(crate) fn plottable(x: f64) -> bool {
    x.is_finite() && x.abs() <= 1e15
}

impl Sweep {
    /// Every cell, in cell order.
    pub fn cells(&self) -> Vec<Cell> {
        let grid_sizes: Vec<usize> = self.axes[..self.grid].iter().map(|a| a.values.len()).collect();
        let zip_len = self.axes[self.grid..].first().map_or(1, |a| a.values.len());
        let points: usize = grid_sizes.iter().product::<usize>() * zip_len;
        let seeds: Vec<Option<u64>> = match &self.seeds {
            Some(s) => s.iter().map(|&s| Some(s)).collect(),
            None => vec![None],
        };
        let mut cells = Vec::with_capacity(points * seeds.len());
        for group in 0..points {
            // Mixed radix: the last grid axis varies fastest, then the zip index.
            let mut rest = group / zip_len;
            let mut point = vec![0; self.axes.len()];
            for (k, &n) in grid_sizes.iter().enumerate().rev() {
                point[k] = rest % n;
                rest /= n;
            }
            for p in &mut point[self.grid..] {
                *p = group % zip_len;
            }
            for &seed in &seeds {
                let index = cells.len();
                let id = cell_id(index, points * seeds.len(), seed);
                cells.push(Cell { index, id, point: point.clone(), group, seed });
            }
        }
        cells
    }

    /// The overrides that make a cell's scenario.
    pub fn overrides(&self, cell: &Cell) -> Vec<Override> {
        let mut out: Vec<Override> = self
            .axes
            .iter()
            .zip(&cell.point)
            .map(|(a, &k)| {
                let v = &a.values[k];
                Override {
                    file: self.file.clone(),
                    at: v.at,
                    origin: format!("axis `{}` value `{}`", a.name, v.name),
                    path: a.path.clone(),
                    value: v.value.clone(),
                }
            })
            .collect();
        if let Some(seed) = cell.seed {
            out.push(Override {
                file: self.file.clone(),
                at: None,
                origin: format!("seed {seed}"),
                path: FieldPath::parse("spec.seed").expect("a valid path"),
                value: Node { at: None, val: Val::Int(seed.into()) },
            });
        }
        out
    }

    /// A cell's scenario, validated.
    pub fn scenario(&self, cell: &Cell) -> Result<crate::scenario::Scenario, ScenarioError> {
        let (root, file, dir) = &self.base;
        load_tree(root, file, dir, &self.overrides(cell))
    }
}

/// Applies each axis value alone to the base scenario and validates the result,
/// collecting every error (each once).
fn check_values(s: &Sweep) -> Result<(), ScenarioError> {
    let (root, file, dir) = &s.base;
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut push = |e: ScenarioError| {
        for x in e.errors {
            if !errors.contains(&x) {
                errors.push(x);
            }
        }
    };
    if let Err(e) = load_tree(root, file, dir, &[]) {
        push(e);
    }
    for a in &s.axes {
        for v in &a.values {
            // A value's name is a cell of sweep.csv and summary.csv.
            if let Some(why) = lahar_core::util::text::name_problem(&v.name) {
                push(ScenarioError { errors: vec![err(&s.file, v.at, &format!("axis `{}` value", a.name), why)] });
                continue;
            }
            let o = Override {
                file: s.file.clone(),
                at: v.at,
                origin: format!("axis `{}` value `{}`", a.name, v.name),
                path: a.path.clone(),
                value: v.value.clone(),
            };
            if let Err(e) = load_tree(root, file, dir, &[o]) {
                push(e);
            }
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(ScenarioError { errors }) }
}

/// True if `name` is a column sweep.csv or summary.csv writes besides the axes'
/// (an axis may not take it).
pub fn reserved_column(name: &str) -> bool {
    ["cell", "seed", "status", "error", "cells", "ok"].contains(&name)
        || lahar_reports::headline::ALL
            .iter()
            .any(|h| name.strip_prefix(h.key).is_some_and(|rest| rest.is_empty() || rest == ".mean" || rest == ".ci95"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWEEP: &str = "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {name: t}\nspec:\n  scenario: {apiVersion: lahar.io/v1alpha1, spec: {seed: 5}}\n  seeds: 2\n  grid:\n    - {path: spec.a, values: [1, 2]}\n    - {name: p, path: spec.b, values: [x, {name: big, value: {k: 1}}, z]}\n  zip:\n    - {path: spec.c, values: [10, 20]}\n    - {path: spec.d, values: [u, v]}\n";

    #[test]
    fn cells_are_numbered_grid_then_zip_then_seed() {
        let s = parse(SWEEP, "s.yaml", Path::new("")).unwrap();
        assert_eq!(s.axes.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["a", "p", "c", "d"]);
        assert!(s.axes[0].numeric() && !s.axes[1].numeric());
        assert_eq!(s.seeds, Some(vec![5, 6]));
        let cells = s.cells();
        assert_eq!(cells.len(), 2 * 3 * 2 * 2);
        assert_eq!(cells[0].id, "0000-seed5");
        assert_eq!(cells[1].id, "0001-seed6");
        assert_eq!(cells[1].point, vec![0, 0, 0, 0]);
        // Next group: the zip index moves first, then the last grid axis.
        assert_eq!(cells[2].point, vec![0, 0, 1, 1]);
        assert_eq!(cells[4].point, vec![0, 1, 0, 0]);
        assert_eq!(cells[12].point, vec![1, 0, 0, 0]);
        assert_eq!(cells[23].point, vec![1, 2, 1, 1]);
        assert_eq!(cells[23].group, 11);
        assert_eq!(s.axes[1].values[1].name, "big");
    }

    #[test]
    fn structural_errors_are_located() {
        let bad = "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {name: t}\nspec:\n  scenario: {spec: {}}\n  grid:\n    - {path: 'spec.a[x]', values: [1]}\n    - {path: spec.b, values: [{k: 1}]}\n  zip:\n    - {path: spec.c, values: [1, 2]}\n    - {path: spec.d, values: [1]}\n  seed: 3\n";
        let e = parse(bad, "s.yaml", Path::new("")).unwrap_err();
        let got: Vec<String> = e.errors.iter().map(ToString::to_string).collect();
        assert!(got.iter().any(|m| m.starts_with("s.yaml:7:") && m.contains("not a list index")), "{got:?}");
        assert!(got.iter().any(|m| m.starts_with("s.yaml:8:") && m.contains("needs a name")), "{got:?}");
        assert!(got.iter().any(|m| m.contains("spec.zip[1].values") && m.contains("advance together")), "{got:?}");
        assert!(got.iter().any(|m| m.contains("unknown field `seed`")), "{got:?}");
    }
}
