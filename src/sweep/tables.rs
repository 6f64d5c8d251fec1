//! The sweep's own outputs, built from its directory alone (so a single-machine run
//! and a merge of shards write the same bytes): sweep.csv (one row per cell),
//! summary.csv (mean and 95% confidence interval per point over its seeds) and
//! plots/ (each headline metric against each numeric axis).

use super::error::{ExecError, io};
use super::manifest::{Manifest, finished};
use lahar_reports::headline::{ALL, HEADLINE, Headline};
use lahar_reports::plots::PlotStyle;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How a cell ended, as read from its directory.
#[derive(Clone, Debug, PartialEq)]
pub enum CellState {
    /// Finished: its metrics, in the order [`read_cells`] returns them
    /// (`None`: no samples, or no faults or services).
    Ok(Vec<Option<f64>>),
    /// Failed with this error.
    Failed(String),
    /// Not run (yet), or run by a shard that was not merged.
    Missing,
}

/// Reads every cell's state, with the metrics the sweep shows (the headline
/// metrics, and each fault or serving metric some cell has): each finished
/// cell's values are theirs, in their order.
pub fn read_cells(dir: &Path, m: &Manifest) -> Result<(Vec<CellState>, Vec<Headline>), ExecError> {
    let mut out = Vec::with_capacity(m.cells.len());
    for c in &m.cells {
        let d = dir.join("cells").join(&c.id);
        let state = if finished(&d) {
            let p = d.join("summary.json");
            let text = lahar_core::util::files::read_to_string(&p).map_err(io(&p))?;
            let v: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| ExecError::Mismatch(format!("{}:{}:{}: {e}", p.display(), e.line(), e.column())))?;
            CellState::Ok(ALL.iter().map(|h| h.value(&v)).collect())
        } else if let Ok(e) = std::fs::read_to_string(d.join("error.txt")) {
            CellState::Failed(e.trim_end().to_string())
        } else {
            CellState::Missing
        };
        out.push(state);
    }
    let shown = metrics(&out);
    for s in &mut out {
        if let CellState::Ok(v) = s {
            *v = shown.iter().map(|&i| v[i]).collect();
        }
    }
    Ok((out, shown.into_iter().map(|i| ALL[i]).collect()))
}

fn num(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// The metrics a sweep shows, as indices into [`ALL`] of `states` read in
/// its order: the headline metrics, and each fault or serving metric some
/// finished cell has (so a sweep without faults or services writes what it
/// wrote before they existed).
fn metrics(states: &[CellState]) -> Vec<usize> {
    (0..ALL.len())
        .filter(|&i| i < HEADLINE.len() || states.iter().any(|s| matches!(s, CellState::Ok(v) if v[i].is_some())))
        .collect()
}

/// Two-sided 97.5% quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => T[df - 1],
        // Within 0.002 of the exact quantile beyond 30 degrees of freedom.
        _ => 1.960 + 2.4 / df as f64,
    }
}

/// Mean and 95% confidence half-width (`None` below two samples).
pub fn mean_ci(xs: &[f64]) -> (Option<f64>, Option<f64>) {
    let n = xs.len();
    if n == 0 {
        return (None, None);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (Some(mean), None);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (Some(mean), Some(t975(n - 1) * (var / n as f64).sqrt()))
}

/// A plot point: (x, mean, 95% half-width).
type Point = (f64, f64, Option<f64>);

/// One plot line: legend label and points (x, mean, 95% half-width).
pub type Line = lahar_reports::sweep_plot::Line;

/// Per point: the value names, and for each headline metric (mean, ci95) over the
/// point's finished cells.
pub struct Group {
    /// Axis value index per axis.
    pub point: Vec<usize>,
    /// Cells of the point.
    pub cells: usize,
    /// Of which finished.
    pub ok: usize,
    /// Per headline metric.
    pub stats: Vec<(Option<f64>, Option<f64>)>,
}

/// Groups the cells by point, with the `width` metrics each finished cell has.
pub fn groups(m: &Manifest, states: &[CellState], width: usize) -> Vec<Group> {
    // group → (point, cells, the finished cells' metrics)
    type Acc<'a> = (Vec<usize>, usize, Vec<&'a Vec<Option<f64>>>);
    let mut by: BTreeMap<usize, Acc<'_>> = BTreeMap::new();
    for (c, s) in m.cells.iter().zip(states) {
        let e = by.entry(c.group).or_insert_with(|| (c.point.clone(), 0, Vec::new()));
        e.1 += 1;
        if let CellState::Ok(v) = s {
            e.2.push(v);
        }
    }
    by.into_values()
        .map(|(point, cells, oks)| {
            let stats = (0..width)
                .map(|k| {
                    let xs: Vec<f64> = oks.iter().filter_map(|v| v[k]).collect();
                    mean_ci(&xs)
                })
                .collect();
            Group { point, cells, ok: oks.len(), stats }
        })
        .collect()
}

/// Writes sweep.csv, summary.csv and the plots into `dir`; returns the states.
pub fn write(dir: &Path, m: &Manifest, style: &PlotStyle) -> Result<Vec<CellState>, ExecError> {
    let (states, ms) = read_cells(dir, m)?;
    let ms = &ms[..];
    let csv_err = |p: &Path| {
        let p = p.to_path_buf();
        move |e: csv::Error| ExecError::Io { path: p.clone(), source: std::io::Error::other(e) }
    };
    let p = dir.join("sweep.csv");
    let mut w = csv::Writer::from_writer(lahar_core::util::files::AtomicFile::create(&p).map_err(io(&p))?);
    let mut head: Vec<String> = vec!["cell".into()];
    head.extend(m.axes.iter().map(|a| a.name.clone()));
    head.extend(["seed", "status", "error"].map(String::from));
    head.extend(ms.iter().map(|h| h.key.to_string()));
    w.write_record(&head).map_err(csv_err(&p))?;
    for (c, s) in m.cells.iter().zip(&states) {
        let mut row: Vec<String> = vec![c.id.clone()];
        row.extend(m.axes.iter().zip(&c.point).map(|(a, &k)| a.values[k].clone()));
        row.push(c.seed.map(|s| s.to_string()).unwrap_or_default());
        match s {
            CellState::Ok(v) => {
                row.extend(["ok".to_string(), String::new()]);
                row.extend(v[..ms.len()].iter().map(|&x| num(x)));
            }
            CellState::Failed(e) => {
                row.extend(["failed".to_string(), e.clone()]);
                row.extend(ms.iter().map(|_| String::new()));
            }
            CellState::Missing => {
                row.extend(["missing".to_string(), String::new()]);
                row.extend(ms.iter().map(|_| String::new()));
            }
        }
        w.write_record(&row).map_err(csv_err(&p))?;
    }
    w.into_inner().map_err(|e| io(&p)(e.into_error()))?.commit().map_err(io(&p))?;
    let gs = groups(m, &states, ms.len());
    let p = dir.join("summary.csv");
    let mut w = csv::Writer::from_writer(lahar_core::util::files::AtomicFile::create(&p).map_err(io(&p))?);
    let mut head: Vec<String> = m.axes.iter().map(|a| a.name.clone()).collect();
    head.extend(["cells", "ok"].map(String::from));
    for h in ms {
        head.push(format!("{}.mean", h.key));
        head.push(format!("{}.ci95", h.key));
    }
    w.write_record(&head).map_err(csv_err(&p))?;
    for g in &gs {
        let mut row: Vec<String> = m.axes.iter().zip(&g.point).map(|(a, &k)| a.values[k].clone()).collect();
        row.extend([g.cells.to_string(), g.ok.to_string()]);
        for &(mean, ci) in &g.stats[..ms.len()] {
            row.extend([num(mean), num(ci)]);
        }
        w.write_record(&row).map_err(csv_err(&p))?;
    }
    w.into_inner().map_err(|e| io(&p)(e.into_error()))?.commit().map_err(io(&p))?;
    write_plots(dir, m, &gs, ms, style)?;
    Ok(states)
}

/// The plots of `dir/plots/`: each of `ms` (the metrics [`read_cells`] returns) against each
/// numeric axis, one line per combination of the other axes' values, with its
/// 95% band.
pub fn plot_files(m: &Manifest, ms: &[Headline]) -> Vec<(usize, usize, PathBuf)> {
    let mut out = Vec::new();
    for (a, axis) in m.axes.iter().enumerate() {
        if axis.values.len() < 2 || axis.x.iter().any(Option::is_none) {
            continue;
        }
        for (k, h) in ms.iter().enumerate() {
            out.push((a, k, PathBuf::from(format!("{}-vs-{}.svg", h.key, axis.name))));
        }
    }
    out
}

/// The series of one plot: per combination of the other axes, (x, mean, ci95);
/// and per line and point, whether its cells left jobs unfinished (the
/// `unfinished` metric's mean above 0: a mean over completed jobs leaves them out).
pub fn series(m: &Manifest, gs: &[Group], a: usize, k: usize) -> (Vec<Line>, Vec<Vec<bool>>) {
    // `unfinished` is a headline metric: the same index in every sweep.
    let u = HEADLINE.iter().position(|h| h.key == "unfinished");
    let mut lines: BTreeMap<Vec<usize>, Vec<(Point, bool)>> = BTreeMap::new();
    for g in gs {
        let others: Vec<usize> = g.point.iter().enumerate().filter(|&(i, _)| i != a).map(|(_, &v)| v).collect();
        if let (Some(x), (Some(mean), ci)) = (m.axes[a].x[g.point[a]], g.stats[k]) {
            let open = u.and_then(|u| g.stats[u].0).is_some_and(|n| n > 0.0);
            lines.entry(others).or_default().push(((x, mean, ci), open));
        }
    }
    lines
        .into_iter()
        .map(|(others, mut pts)| {
            pts.sort_by(|p, q| p.0.0.total_cmp(&q.0.0));
            let label: Vec<String> = m
                .axes
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != a)
                .zip(&others)
                .map(|((_, ax), &v)| format!("{}={}", ax.name, ax.values[v]))
                .collect();
            let (pts, open): (Vec<Point>, Vec<bool>) = pts.into_iter().unzip();
            ((label.join(", "), pts), open)
        })
        .unzip()
}

/// Metrics over completed (or started) jobs only: their plots mark the points
/// whose cells left jobs unfinished.
fn over_completed(key: &str) -> bool {
    ["jct_s", "wait_s", "slowdown", "rho", "gang_wait_s"].iter().any(|p| key.starts_with(p))
}

fn write_plots(dir: &Path, m: &Manifest, gs: &[Group], ms: &[Headline], style: &PlotStyle) -> Result<(), ExecError> {
    let files = plot_files(m, ms);
    if files.is_empty() {
        return Ok(());
    }
    let plots = dir.join("plots");
    std::fs::create_dir_all(&plots).map_err(io(&plots))?;
    // Plots are independent: drawn in parallel (PNG rasterizing is most of the
    // sweep's serial tail).
    use rayon::prelude::*;
    files.par_iter().try_for_each(|(a, k, name)| {
        let (a, k) = (*a, *k);
        let h = &ms[k];
        let (lines, open) = series(m, gs, a, k);
        let open = if over_completed(h.key) && open.iter().flatten().any(|&o| o) { open } else { Vec::new() };
        let scaled: Vec<Line> = lines
            .into_iter()
            .map(|(l, pts)| (l, pts.into_iter().map(|(x, y, c)| (x, y * h.scale, c.map(|c| c * h.scale))).collect()))
            .collect();
        let title = format!("{} by {}", h.label, m.axes[a].name);
        let p = plots.join(name);
        let plot_err = |e: lahar_reports::plots::PlotError| ExecError::Io {
            path: p.clone(),
            source: std::io::Error::other(e.to_string()),
        };
        let (lo, mut hi) = h.range();
        // A count of jobs is at most the jobs of a cell: completed + unfinished
        // at its largest point (failed jobs would only raise the true bound).
        if ["completed", "unfinished"].contains(&h.key) {
            let of = |key: &str| ms.iter().position(|x| x.key == key);
            if let (Some(c), Some(u)) = (of("completed"), of("unfinished")) {
                let jobs =
                    gs.iter().filter_map(|g| Some(g.stats[c].0? + g.stats[u].0?)).fold(f64::NEG_INFINITY, f64::max);
                if jobs.is_finite() {
                    hi = jobs;
                }
            }
        }
        let range = (lo * h.scale, hi * h.scale);
        let plot = lahar_reports::sweep_plot::SweepPlot {
            title: &title,
            x_label: &m.axes[a].name,
            y_label: h.label,
            lines: &scaled,
            range,
            unfinished: &open,
        };
        let svg = lahar_reports::sweep_plot::svg_in(&plot, style).map_err(plot_err)?;
        lahar_core::util::files::write_atomic(&p, svg.as_bytes()).map_err(io(&p))?;
        let png = p.with_extension("png");
        lahar_reports::sweep_plot::png_in(&png, &plot, style).map_err(plot_err)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_intervals_by_hand() {
        assert_eq!(mean_ci(&[]), (None, None));
        assert_eq!(mean_ci(&[3.0]), (Some(3.0), None));
        // Mean 2, sample sd 1, n 3: 4.303 × 1/√3 = 2.4844
        let (m, ci) = mean_ci(&[1.0, 2.0, 3.0]);
        assert_eq!(m, Some(2.0));
        assert!((ci.unwrap() - 4.303 / 3f64.sqrt()).abs() < 1e-12);
        assert!((t975(60) - 2.000).abs() < 0.002 && (t975(120) - 1.980).abs() < 0.002);
    }
}
