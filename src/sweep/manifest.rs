//! `sweep.json`: what a sweep directory holds — the sweep's identity, its axes and
//! every cell — so resuming, merging shards and building the tables need only the
//! directory, never the sweep file. Every shard writes the same bytes.

use super::error::{ExecError, io};
use super::spec::Sweep;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// An axis as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AxisRecord {
    /// Column name.
    pub name: String,
    /// Field path.
    pub path: String,
    /// Value names, in order.
    pub values: Vec<String>,
    /// Each value as a number (all `Some` for a numeric axis).
    pub x: Vec<Option<f64>>,
}

/// A cell as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    /// Directory name under `cells/`.
    pub id: String,
    /// The point's number (cells of a group differ only by seed).
    pub group: usize,
    /// Index of the value of each axis.
    pub point: Vec<usize>,
    /// Seed, when the sweep sets seeds.
    pub seed: Option<u64>,
}

/// The contents of sweep.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version.
    pub lahar_sweep: u32,
    /// `metadata.name` of the sweep.
    pub name: String,
    /// Identity of the sweep file and its base scenario.
    pub sweep_sha256: String,
    /// Axes, grid then zipped.
    pub axes: Vec<AxisRecord>,
    /// Every cell, in cell order.
    pub cells: Vec<CellRecord>,
}

impl Manifest {
    /// The manifest of a sweep.
    pub fn of(s: &Sweep) -> Manifest {
        Manifest {
            lahar_sweep: 1,
            name: s.name.clone(),
            sweep_sha256: s.sha256.clone(),
            axes: s
                .axes
                .iter()
                .map(|a| AxisRecord {
                    name: a.name.clone(),
                    path: a.path.to_string(),
                    values: a.values.iter().map(|v| v.name.clone()).collect(),
                    x: a.values.iter().map(|v| v.x).collect(),
                })
                .collect(),
            cells: s
                .cells()
                .into_iter()
                .map(|c| CellRecord { id: c.id, group: c.group, point: c.point, seed: c.seed })
                .collect(),
        }
    }

    /// Reads `dir/sweep.json`.
    pub fn read(dir: &Path) -> Result<Manifest, String> {
        let p = dir.join("sweep.json");
        let text = lahar_core::util::files::read_to_string(&p)
            .map_err(|e| format!("{}: not a sweep directory ({e})", p.display()))?;
        let m: Manifest =
            serde_json::from_str(&text).map_err(|e| format!("{}:{}:{}: {e}", p.display(), e.line(), e.column()))?;
        m.check().map_err(|e| format!("{}: {e}; it was not written by this lahar, or was edited", p.display()))?;
        Ok(m)
    }

    /// Checks what lahar reads back before trusting it: every cell id is the one
    /// lahar gives the cell at its position (ids become directory names under
    /// `cells/`, which a merge replaces), every point indexes its axes' values, and
    /// every axis name can be a column and a file name.
    fn check(&self) -> Result<(), String> {
        // Each cell's group is its point's, numbered in order of first use: the
        // tables have a row per group.
        let mut groups: std::collections::BTreeMap<&[usize], usize> = Default::default();
        for c in &self.cells {
            let next = groups.len();
            if *groups.entry(&c.point).or_insert(next) != c.group {
                return Err(format!("cell `{}` has group {}, not its point's", c.id.escape_debug(), c.group));
            }
        }
        for (index, c) in self.cells.iter().enumerate() {
            let id = super::spec::cell_id(index, self.cells.len(), c.seed);
            if c.id != id {
                return Err(format!("cell {index} has id `{}`, expected `{id}`", c.id.escape_debug()));
            }
            if c.point.len() != self.axes.len() || c.point.iter().zip(&self.axes).any(|(&k, a)| k >= a.values.len()) {
                return Err(format!("cell `{id}` names values its axes do not have"));
            }
        }
        for a in &self.axes {
            lahar_core::util::files::component(&a.name).map_err(|m| format!("axis name {m}"))?;
            if a.x.len() != a.values.len() {
                return Err(format!("axis `{}` has {} values and {} numbers", a.name, a.values.len(), a.x.len()));
            }
            if a.x.iter().flatten().any(|&x| !super::spec::plottable(x)) {
                return Err(format!("axis `{}` has a number that is not finite or beyond ±1e15", a.name));
            }
        }
        Ok(())
    }

    /// Makes `out` this sweep's directory: writes sweep.json, or checks that the one
    /// there is this sweep's (a directory never mixes two sweeps).
    pub fn claim(&self, out: &Path) -> Result<(), ExecError> {
        if out.join("sweep.json").exists() {
            match Manifest::read(out) {
                Ok(m) if m.sweep_sha256 == self.sweep_sha256 => return Ok(()),
                Ok(m) => {
                    return Err(ExecError::Mismatch(format!(
                        "{} holds sweep `{}` made from another sweep file or scenario; use another --out, or delete it",
                        out.display(),
                        m.name
                    )));
                }
                Err(e) => return Err(ExecError::Mismatch(e)),
            }
        }
        self.write(out)
    }

    /// Writes sweep.json (through a temporary file: shards may share `out`).
    pub fn write(&self, out: &Path) -> Result<(), ExecError> {
        let text = serde_json::to_string_pretty(self).expect("a manifest serializes") + "\n";
        let tmp = out.join(format!(".sweep.json.{}", std::process::id()));
        std::fs::write(&tmp, text).map_err(io(&tmp))?;
        let p = out.join("sweep.json");
        std::fs::rename(&tmp, &p).map_err(io(&p))
    }
}

/// A finished cell: its directory holds summary.json (a run) or error.txt.
pub(crate) fn finished(dir: &Path) -> bool {
    dir.join("summary.json").is_file()
}
