//! Several runs side by side: the headline metrics of each run's summary.json and
//! their relative difference to the first run, as a terminal table, Markdown or CSV.

use crate::load::RunData;

pub use crate::headline::HEADLINE;

/// One metric across runs.
#[derive(Clone, Debug, PartialEq)]
pub struct CompareRow {
    /// Label with unit.
    pub metric: &'static str,
    /// Machine name (the headline key: compare.csv's metric column).
    pub key: &'static str,
    /// Value per run as stored (seconds, fractions): compare.csv's values.
    pub raw: Vec<Option<f64>>,
    /// Which way the metric improves.
    pub better: crate::headline::Better,
    /// Value per run (`None`: absent from that run's summary).
    pub values: Vec<Option<f64>>,
    /// Relative difference to the first run, `(v − v₀) / |v₀|`, per run (`None` for
    /// the first run, a missing value, or `v₀ = 0`).
    pub rel: Vec<Option<f64>>,
}

/// The comparison table.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Run labels, in the order given.
    pub runs: Vec<String>,
    /// Rows, in [`HEADLINE`] order.
    pub rows: Vec<CompareRow>,
}

/// Compares runs (the first is the baseline): the [`HEADLINE`] metrics of runs
/// in time, the [`crate::headline::PLACEMENT`] metrics of placement runs.
pub fn compare(runs: &[RunData]) -> Comparison {
    let metrics = match runs.first().is_some_and(|r| r.placement.is_some()) {
        true => crate::headline::PLACEMENT,
        false => HEADLINE,
    };
    let rows = metrics
        .iter()
        .map(|m| {
            let metric = m.label;
            let raw: Vec<Option<f64>> = runs.iter().map(|r| r.metric(m.pointer)).collect();
            let values: Vec<Option<f64>> = raw.iter().map(|v| v.map(|v| v * m.scale)).collect();
            let base = values.first().copied().flatten();
            let rel = values
                .iter()
                .enumerate()
                .map(|(i, v)| match (i, base, v) {
                    (0, _, _) => None,
                    (_, Some(b), Some(v)) if b != 0.0 => Some((v - b) / b.abs()),
                    _ => None,
                })
                .collect();
            CompareRow { metric, key: m.key, raw, better: m.better, values, rel }
        })
        .collect();
    Comparison { runs: runs.iter().map(|r| r.label.clone()).collect(), rows }
}

/// A value for tables: integers as such, others with 3 decimals; a nonzero value
/// that 3 decimals would show as 0.000 with 3 significant digits (`1.23e-5`), so two
/// values a comparison calls different never print alike.
pub fn fmt_value(v: Option<f64>) -> String {
    match v {
        None => String::new(),
        Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        Some(v) if v.abs() >= 100.0 => format!("{v:.1}"),
        Some(v) if v.abs() < 0.0005 => format!("{v:.2e}"),
        Some(v) => format!("{v:.3}"),
    }
}

/// Which way a metric improves, for tables.
pub fn direction(b: crate::headline::Better) -> &'static str {
    match b {
        crate::headline::Better::Lower => "lower",
        crate::headline::Better::Higher => "higher",
    }
}

/// A relative difference with its verdict: `+12.0% worse`, `−3.0% better`.
pub fn judged(r: Option<f64>, b: crate::headline::Better) -> String {
    match r {
        Some(x) if x != 0.0 => {
            let good = (x < 0.0) == (b == crate::headline::Better::Lower);
            format!("{} {}", fmt_rel(r), if good { "better" } else { "worse" })
        }
        _ => fmt_rel(r),
    }
}

/// A relative difference as a signed percentage; more digits when one decimal
/// would show a nonzero change as 0.0 (Jain's index 1.000 → 1.000 moved by
/// 2.2e-14 is `-2.2e-12% worse`, not `-0.0% worse`).
pub fn fmt_rel(r: Option<f64>) -> String {
    r.map(|r| {
        let p = 100.0 * r;
        if p != 0.0 && p.abs() < 0.05 { format!("{p:+.1e}%") } else { format!("{p:+.1}%") }
    })
    .unwrap_or_default()
}

impl Comparison {
    /// Header: metric, which way is better, then per run its value and (after the
    /// first) Δ vs the first.
    pub fn header(&self) -> Vec<String> {
        let mut h = vec!["metric".to_string(), "better".to_string()];
        for (i, r) in self.runs.iter().enumerate() {
            h.push(r.clone());
            if i > 0 {
                h.push(format!("Δ {r} vs {}", self.runs[0]));
            }
        }
        h
    }

    /// Formatted cells, one row per metric, matching [`Comparison::header`].
    pub fn cells(&self) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|row| {
                let mut c = vec![row.metric.to_string(), direction(row.better).to_string()];
                for i in 0..self.runs.len() {
                    c.push(fmt_value(row.values[i]));
                    if i > 0 {
                        c.push(judged(row.rel[i], row.better));
                    }
                }
                c
            })
            .collect()
    }

    /// A table for the terminal.
    pub fn to_terminal(&self) -> String {
        use comfy_table::{CellAlignment, Table, presets::UTF8_BORDERS_ONLY};
        let mut t = Table::new();
        t.load_preset(UTF8_BORDERS_ONLY);
        t.set_header(self.header());
        for row in self.cells() {
            t.add_row(row);
        }
        for i in 1..=self.header().len().saturating_sub(1) {
            if let Some(c) = t.column_mut(i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        t.to_string()
    }

    /// A Markdown table.
    pub fn to_markdown(&self) -> String {
        let h = self.header();
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = format!("| {} |\n", h.iter().map(|s| esc(s)).collect::<Vec<_>>().join(" | "));
        out.push_str(&format!("|---|{}\n", "---:|".repeat(h.len() - 1)));
        for row in self.cells() {
            out.push_str(&format!("| {} |\n", row.iter().map(|s| esc(s)).collect::<Vec<_>>().join(" | ")));
        }
        out
    }

    /// CSV for programs, one row per headline key per run (`metric, better, run,
    /// value, rel_diff`): values as stored (seconds, fractions — never hours or
    /// percent) and the relative difference to the first run as a fraction (empty
    /// on the first run's rows).
    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        // Writing to a Vec cannot fail.
        let _ = w.write_record(["metric", "better", "run", "value", "rel_diff"]);
        for row in &self.rows {
            for (i, run) in self.runs.iter().enumerate() {
                let value = row.raw[i].map(|v| v.to_string()).unwrap_or_default();
                let rel = if i > 0 { row.rel[i].map(|v| v.to_string()).unwrap_or_default() } else { String::new() };
                let _ = w.write_record([row.key, direction(row.better), run.as_str(), &value, &rel]);
            }
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headline::Better;

    #[test]
    fn a_change_too_small_for_one_decimal_shows_its_size() {
        assert_eq!(judged(Some(-2.2e-14), Better::Higher), "-2.2e-12% worse");
        assert_eq!(judged(Some(0.12), Better::Lower), "+12.0% worse");
        assert_eq!(judged(Some(-0.03), Better::Lower), "-3.0% better");
        assert_eq!(judged(Some(0.0), Better::Higher), "+0.0%");
        assert_eq!(judged(None, Better::Higher), "");
    }

    #[test]
    fn a_value_too_small_for_three_decimals_shows_its_digits() {
        assert_eq!(fmt_value(Some(1.234e-5)), "1.23e-5");
        assert_eq!(fmt_value(Some(1.239e-5)), "1.24e-5");
        assert_eq!(fmt_value(Some(0.0005)), "0.001");
        assert_eq!(fmt_value(Some(0.0)), "0");
        assert_eq!(fmt_value(Some(65.707)), "65.707");
        assert_eq!(fmt_value(Some(170.2)), "170.2");
    }
}
