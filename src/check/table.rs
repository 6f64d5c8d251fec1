//! The check's table (terminal or Markdown) and its one-line verdict. Values are
//! shown scaled to the units of the headline labels.

use super::{Check, Row, Verdict};
use lahar_reports::compare::fmt_value;
use lahar_reports::headline::Headline;

/// Failures named in the verdict line before it says "and N more".
const LISTED: usize = 10;

/// The columns after metric that hold numbers (right-aligned).
const NUMERIC: [&str; 4] = ["baseline", "run", "change", "tolerance"];

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A relative change in percent, as `lahar compare` writes it.
fn fmt_pct(rel: f64) -> String {
    lahar_reports::compare::fmt_rel(Some(rel))
}

/// The change column: relative, or the scaled absolute move when the baseline is 0.
fn change_text(r: &Row, m: &Headline) -> String {
    match (r.baseline, r.run, r.change()) {
        (_, _, Some(c)) => fmt_pct(c),
        (Some(_), Some(run), None) => {
            format!("{}{} from 0", if run < 0.0 { "-" } else { "+" }, fmt_value(Some((run * m.scale).abs())))
        }
        _ => String::new(),
    }
}

impl Check {
    fn header(&self) -> Vec<&'static str> {
        let mut h = if self.sweep { vec!["cell"] } else { Vec::new() };
        h.extend(["metric", "baseline", "run", "change", "tolerance", "verdict"]);
        h
    }

    /// Formatted rows; `code` puts metric keys in backticks (Markdown).
    fn cells(&self, code: bool) -> Vec<Vec<String>> {
        let value = |x: Option<f64>, m: &Headline| x.map_or("—".to_string(), |x| fmt_value(Some(x * m.scale)));
        self.rows
            .iter()
            .map(|r| {
                let mut c: Vec<String> = r.cell.iter().cloned().collect();
                match r.metric {
                    Some(m) => c.extend([
                        if code {
                            format!("`{}` — {}", m.key, m.label)
                        } else {
                            format!("{} — {}", m.key, m.label)
                        },
                        value(r.baseline, m),
                        value(r.run, m),
                        change_text(r, m),
                        format!("{}%", r.tolerance_pct),
                    ]),
                    None => {
                        let (b, run) = match r.verdict {
                            Verdict::New => ("absent", "present"),
                            Verdict::Failed => ("", "failed"),
                            _ => ("present", "absent"),
                        };
                        c.extend(["all metrics".into(), b.into(), run.into(), String::new(), String::new()]);
                    }
                }
                c.push(r.verdict.as_str().to_string());
                c
            })
            .collect()
    }

    /// An aligned table for the terminal.
    pub fn to_terminal(&self) -> String {
        use comfy_table::{CellAlignment, Table, presets::UTF8_BORDERS_ONLY};
        let mut t = Table::new();
        t.load_preset(UTF8_BORDERS_ONLY);
        let header = self.header();
        t.set_header(header.clone());
        for row in self.cells(false) {
            t.add_row(row);
        }
        for (i, h) in header.iter().enumerate() {
            if NUMERIC.contains(h)
                && let Some(c) = t.column_mut(i)
            {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
        t.to_string()
    }

    /// A Markdown table (GitHub-flavoured), e.g. for a CI job summary.
    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let line = |cells: &[String]| format!("| {} |\n", cells.iter().map(|s| esc(s)).collect::<Vec<_>>().join(" | "));
        let header = self.header();
        let mut out = line(&header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
        let rule: Vec<&str> = header.iter().map(|h| if NUMERIC.contains(h) { "---:" } else { "---" }).collect();
        out += &format!("|{}|\n", rule.join("|"));
        for row in self.cells(true) {
            out += &line(&row);
        }
        if let Some(what) = &self.other_inputs {
            out += &format!("\n**Warning:** the baseline and the run are of different inputs ({what}).\n");
        }
        out
    }

    /// The one-line verdict: "check passed: 21 metrics within tolerance", or "check
    /// failed: 2 regressions: jct_s.mean +12.0% (tolerance 5%), ...".
    pub fn verdict_line(&self) -> String {
        let metrics = self.rows.iter().filter(|r| r.metric.is_some()).count();
        if self.passed() {
            let mut s = plural(metrics, "metric", "metrics");
            if self.sweep {
                let cells = self.rows.iter().filter(|r| r.metric.is_some() && r.cell.is_some());
                let mut ids: Vec<&str> = cells.filter_map(|r| r.cell.as_deref()).collect();
                ids.dedup();
                s += &format!(" in {}", plural(ids.len(), "cell", "cells"));
            }
            s = format!("check passed: {s} within tolerance");
            let new: Vec<&str> =
                self.rows.iter().filter(|r| r.verdict == Verdict::New).filter_map(|r| r.cell.as_deref()).collect();
            if !new.is_empty() {
                s += &format!(
                    "; {} not in the baseline: {}",
                    plural(new.len(), "new cell", "new cells"),
                    new.join(", ")
                );
            }
            return s;
        }
        let failed: Vec<&Row> = self.rows.iter().filter(|r| r.verdict.fails()).collect();
        let count = |v: Verdict| failed.iter().filter(|r| r.verdict == v).count();
        let (regressions, missing, cells) =
            (count(Verdict::Regression), count(Verdict::Missing), count(Verdict::Failed));
        let mut counts = Vec::new();
        if regressions > 0 {
            counts.push(plural(regressions, "regression", "regressions"));
        }
        if missing > 0 {
            counts.push(format!("{missing} missing"));
        }
        if cells > 0 {
            counts.push(plural(cells, "failed cell", "failed cells"));
        }
        let mut items: Vec<String> = failed.iter().take(LISTED).map(|r| failure(r)).collect();
        if failed.len() > LISTED {
            items.push(format!("and {} more", failed.len() - LISTED));
        }
        format!("check failed: {}: {}", counts.join(", "), items.join(", "))
    }
}

/// A failed row in the verdict line: `[cell/]key +8.2% (tolerance 5%)`, `key missing
/// in run`, `cell b missing in run`, `cell b failed: <error>`.
fn failure(r: &Row) -> String {
    let Some(m) = r.metric else {
        let cell = r.cell.as_deref().unwrap_or_default();
        return match &r.error {
            Some(e) => format!("cell {cell} failed: {e}"),
            None => format!("cell {cell} missing in run"),
        };
    };
    let name = match &r.cell {
        Some(c) => format!("{c}/{}", m.key),
        None => m.key.to_string(),
    };
    match r.verdict {
        Verdict::Regression => format!("{name} {} (tolerance {}%)", change_text(r, m), r.tolerance_pct),
        _ if r.run.is_none() => format!("{name} missing in run"),
        _ => format!("{name} missing in baseline"),
    }
}
