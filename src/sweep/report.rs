//! `lahar report SWEEP_DIR`: one self-contained report.html for a sweep — its axes,
//! the per-point table of summary.csv's headline means (± 95% half-width) and every
//! plot inline.

use super::error::ExecError;
use super::manifest::Manifest;
use super::tables::{CellState, groups, plot_files, read_cells};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn fmt(v: f64) -> String {
    if v == 0.0 || (v.abs() >= 0.01 && v.abs() < 1e6) {
        format!("{v:.3}").trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.3e}")
    }
}

/// A mean and its 95% half-width at one precision, the half-width's two
/// significant digits (`17.0 ± 7.2`, `99.25 ± 0.57`): a column reads alike from
/// row to row, and no digit is printed that the interval makes meaningless.
fn fmt_ci(mean: f64, ci: f64) -> String {
    if ci <= 0.0 || !ci.is_finite() || !(1e-6..1e6).contains(&mean.abs().max(ci)) {
        return format!("{} ± {}", fmt(mean), fmt(ci));
    }
    let digits = (1 - ci.log10().floor() as i32).clamp(0, 6) as usize;
    format!("{mean:.digits$} ± {ci:.digits$}")
}

/// Writes the report (default `dir/report.html`); returns its path.
pub fn write(dir: &Path, out: Option<&Path>) -> Result<PathBuf, ExecError> {
    let m = Manifest::read(dir).map_err(ExecError::Mismatch)?;
    let (states, hs) = read_cells(dir, &m)?;
    let gs = groups(&m, &states, hs.len());
    let failed = states.iter().filter(|s| matches!(s, CellState::Failed(_))).count();
    let missing = states.iter().filter(|s| matches!(s, CellState::Missing)).count();
    let mut h = String::new();
    let w = &mut h;
    let _ = write!(
        w,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lahar sweep {name}</title>\n<style>body{{font-family:sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse;font-size:13px}}td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}}td{{white-space:nowrap}}th{{background:#f4f4f4}}td.l,th.l{{text-align:left}}figure{{margin:1em 0}}</style></head><body>\n<h1>Sweep {name}</h1>\n<p>{cells} cells ({failed} failed, {missing} missing), {points} points. Sweep id <code>{sha}</code>.</p>\n<h2>Axes</h2><table><tr><th class=l>axis</th><th class=l>field</th><th class=l>values</th></tr>\n",
        name = esc(&m.name),
        cells = m.cells.len(),
        points = gs.len(),
        sha = &m.sweep_sha256[..12],
    );
    for a in &m.axes {
        let _ = writeln!(
            w,
            "<tr><td class=l>{}</td><td class=l><code>{}</code></td><td class=l>{}</td></tr>",
            esc(&a.name),
            esc(&a.path),
            esc(&a.values.join(", "))
        );
    }
    let _ = write!(
        w,
        "</table>\n<h2>Points (mean ± 95% half-width over seeds)</h2><div style=\"overflow-x:auto\"><table><tr>"
    );
    for a in &m.axes {
        let _ = write!(w, "<th class=l>{}</th>", esc(&a.name));
    }
    let _ = write!(w, "<th>cells ok</th>");
    for hd in &hs {
        let _ = write!(w, "<th>{}</th>", esc(hd.label));
    }
    let _ = writeln!(w, "</tr>");
    for g in &gs {
        let _ = write!(w, "<tr>");
        for (a, &k) in m.axes.iter().zip(&g.point) {
            let _ = write!(w, "<td class=l>{}</td>", esc(&a.values[k]));
        }
        let _ = write!(w, "<td>{}/{}</td>", g.ok, g.cells);
        for (hd, &(mean, ci)) in hs.iter().zip(&g.stats) {
            let cell = match (mean, ci) {
                (Some(x), Some(c)) => fmt_ci(x * hd.scale, c * hd.scale),
                (Some(x), None) => fmt(x * hd.scale),
                _ => "n/a".into(),
            };
            let _ = write!(w, "<td>{cell}</td>");
        }
        let _ = writeln!(w, "</tr>");
    }
    let _ = writeln!(w, "</table></div>\n<h2>Plots</h2>");
    for (a, k, name) in plot_files(&m, &hs) {
        let p = dir.join("plots").join(&name);
        let svg = std::fs::read_to_string(&p).map_err(super::error::io(&p))?;
        let _ = writeln!(
            w,
            "<figure>{svg}<figcaption>{} against {}: the mean over seeds, the band its 95% interval (<code>plots/{}</code>)</figcaption></figure>",
            esc(hs[k].label),
            esc(&m.axes[a].name),
            esc(&name.display().to_string())
        );
    }
    let _ = writeln!(w, "</body></html>");
    let path = out.map(Path::to_path_buf).unwrap_or_else(|| dir.join("report.html"));
    lahar_core::util::files::write_atomic(&path, h.as_bytes()).map_err(super::error::io(&path))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::fmt_ci;

    #[test]
    fn a_mean_is_printed_to_its_interval_s_precision() {
        assert_eq!(fmt_ci(17.04, 7.167), "17.0 ± 7.2");
        assert_eq!(fmt_ci(99.2534, 0.5712), "99.25 ± 0.57");
        assert_eq!(fmt_ci(425.926, 28.344), "426 ± 28");
        assert_eq!(fmt_ci(400.0, 0.0), "400 ± 0");
        assert_eq!(fmt_ci(0.0012, 0.00034), "0.00120 ± 0.00034");
    }
}
