//! Bar charts: where jobs were placed (one run, or the runs side by side) and
//! the mean JCT of each queue, the runs side by side.

use super::{Entry, Look, PlotKind, Res, color, draw_legend, duration_unit, e, fmt_num, legend_split, run_labels};
use crate::load::{JobRecord, RunData};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// Bars of `groups[r][c]` for each category `c` (the x axis, `names`) and each
/// run `r` side by side within it; a `None` draws no bar.
struct Grouped<'a> {
    /// Caption and its size (a panel's, or the plot's own), if any.
    caption: Option<(&'a str, u32)>,
    xdesc: &'a str,
    ydesc: String,
    names: Vec<String>,
    groups: Vec<Vec<Option<f64>>>,
    percent: bool,
}

fn grouped(area: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, g: &Grouped) -> Res {
    let k = g.names.len().max(1);
    let n = g.groups.len().max(1);
    let top = g.groups.iter().flatten().flatten().fold(0.0f64, |a, &b| a.max(b));
    let ymax = if g.percent { 100.0f64.max(top) * 1.05 } else { top.max(1e-9) * 1.1 };
    let mut b = ChartBuilder::on(area);
    b.margin(look.px(15)).x_label_area_size(look.px(50)).y_label_area_size(look.px(60));
    if let Some((c, size)) = g.caption {
        b.caption(c, ("sans-serif", size));
    }
    let mut chart = b.build_cartesian_2d(-0.5f64..(k as f64 - 0.5), 0.0..ymax).map_err(e)?;
    let names = &g.names;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(g.xdesc)
        .y_desc(g.ydesc.as_str())
        .x_labels(k.min(24))
        .x_label_formatter(&|v| {
            if (v - v.round()).abs() > 1e-9 || *v < 0.0 {
                return String::new();
            }
            names.get(v.round() as usize).cloned().unwrap_or_default()
        })
        .y_label_formatter(&|v| if g.percent { format!("{v:.0}%") } else { fmt_num(*v) })
        .label_style(("sans-serif", look.font))
        .axis_desc_style(("sans-serif", look.desc()))
        .draw()
        .map_err(e)?;
    let w = 0.8 / n as f64;
    for (r, vals) in g.groups.iter().enumerate() {
        let c = color(r);
        chart
            .draw_series(vals.iter().enumerate().filter_map(|(x, v)| {
                let v = (*v)?.clamp(0.0, ymax);
                let x0 = x as f64 - 0.4 + w * r as f64;
                Some(Rectangle::new([(x0, 0.0), (x0 + w * 0.92, v)], c.filled()))
            }))
            .map_err(e)?;
    }
    Ok(())
}

/// Counts of `f` over the jobs that started (`nodes_spanned` > 0).
fn counts(jobs: &[JobRecord], f: impl Fn(&JobRecord) -> u32) -> BTreeMap<u32, usize> {
    let mut m = BTreeMap::new();
    for j in jobs.iter().filter(|j| j.nodes_spanned > 0) {
        *m.entry(f(j)).or_insert(0usize) += 1;
    }
    m
}

/// The fabric's tier names (summary.json `tiers`), numbers for older runs.
fn tier_names(r: &RunData) -> Vec<String> {
    r.summary["tiers"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

/// Categories 0..=the largest key (and every named one), named by `names` or by
/// number.
fn categories(keys: &BTreeSet<u32>, names: &[String], from: u32) -> Vec<String> {
    let last = keys.iter().max().copied().unwrap_or(from).max(from + names.len().saturating_sub(1) as u32);
    (from..=last).map(|x| names.get(x as usize).cloned().unwrap_or_else(|| x.to_string())).collect()
}

/// One run: jobs by nodes spanned and by highest tier (counts).
pub(super) fn placement(root: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, runs: &[RunData]) -> Res {
    let Some(r) = runs.first() else { return Ok(()) };
    let area = if look.paper {
        root.clone()
    } else {
        root.titled(PlotKind::Placement.title(), ("sans-serif", look.px(22))).map_err(e)?
    };
    let (left, right) = area.split_horizontally(root.dim_in_pixel().0 / 2);
    let spans = counts(&r.jobs, |j| j.nodes_spanned);
    let tiers = counts(&r.jobs, |j| j.highest_tier);
    let tier_names = tier_names(r);
    for (area, title, xdesc, m, names, from) in [
        (&left, "jobs by nodes spanned", "nodes spanned at last start", &spans, Vec::new(), 1),
        (&right, "jobs by highest tier", "highest tier spanned at last start", &tiers, tier_names, 0),
    ] {
        let keys: BTreeSet<u32> = m.keys().copied().collect();
        let cats = categories(&keys, &names, from);
        let g = Grouped {
            caption: Some((title, look.px(18))),
            xdesc,
            ydesc: "jobs".into(),
            groups: vec![(0..cats.len()).map(|i| m.get(&(from + i as u32)).map(|&c| c as f64)).collect()],
            names: cats,
            percent: false,
        };
        grouped(area, look, &g)?;
    }
    Ok(())
}

/// Several runs: each run's share of its started jobs by nodes spanned and by
/// highest tier, side by side.
pub(super) fn placement_side_by_side(
    root: &DrawingArea<impl DrawingBackend, Shift>,
    look: &Look,
    runs: &[RunData],
) -> Res {
    let (root, strip) = legend_split(root, look, runs.len());
    let area = if look.paper {
        root.clone()
    } else {
        root.titled(PlotKind::Placement.title(), ("sans-serif", look.px(22))).map_err(e)?
    };
    let (left, right) = area.split_horizontally(root.dim_in_pixel().0 / 2);
    let tier_names = runs.first().map(tier_names).unwrap_or_default();
    type Pick = fn(&JobRecord) -> u32;
    /// A panel: its title, x axis, what it counts, category names, first category.
    struct Panel<'a> {
        title: &'a str,
        xdesc: &'a str,
        pick: Pick,
        names: Vec<String>,
        from: u32,
    }
    let panels = [
        (
            &left,
            Panel {
                title: "started jobs by nodes spanned",
                xdesc: "nodes spanned at last start",
                pick: |j| j.nodes_spanned,
                names: Vec::new(),
                from: 1,
            },
        ),
        (
            &right,
            Panel {
                title: "started jobs by highest tier",
                xdesc: "highest tier spanned at last start",
                pick: |j| j.highest_tier,
                names: tier_names,
                from: 0,
            },
        ),
    ];
    for (area, Panel { title, xdesc, pick, names, from }) in panels {
        let per_run: Vec<BTreeMap<u32, usize>> = runs.iter().map(|r| counts(&r.jobs, pick)).collect();
        let keys: BTreeSet<u32> = per_run.iter().flat_map(|m| m.keys().copied()).collect();
        let cats = categories(&keys, &names, from);
        let groups = per_run
            .iter()
            .map(|m| {
                let total: usize = m.values().sum();
                (0..cats.len())
                    .map(|i| {
                        let c = m.get(&(from + i as u32)).copied().unwrap_or(0);
                        (total > 0).then(|| 100.0 * c as f64 / total as f64)
                    })
                    .collect()
            })
            .collect();
        let g = Grouped {
            caption: Some((title, look.px(18))),
            xdesc,
            ydesc: "share of started jobs".into(),
            names: cats,
            groups,
            percent: true,
        };
        grouped(area, look, &g)?;
    }
    let entries: Vec<Entry> =
        run_labels(runs).into_iter().enumerate().map(|(i, l)| Entry::boxed(l, color(i))).collect();
    draw_legend(&strip, look, &entries)
}

/// Several runs: the mean JCT of each queue's completed jobs, the runs side by
/// side; a run's legend counts its jobs that did not complete.
pub(super) fn queue_jct_mean(root: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, runs: &[RunData]) -> Res {
    let (root, strip) = legend_split(root, look, runs.len());
    let queues: BTreeSet<&str> = runs.iter().flat_map(|r| r.jobs.iter().map(|j| j.queue.as_str())).collect();
    let means: Vec<Vec<Option<f64>>> = runs
        .iter()
        .map(|r| {
            queues
                .iter()
                .map(|q| {
                    let v: Vec<f64> = r
                        .jobs
                        .iter()
                        .filter(|j| j.queue == *q && j.state == "Completed")
                        .filter_map(|j| j.jct_s)
                        .collect();
                    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
                })
                .collect()
        })
        .collect();
    let top = means.iter().flatten().flatten().fold(0.0f64, |a, &b| a.max(b));
    let (unit, uname) = duration_unit(top);
    let g = Grouped {
        caption: (!look.paper).then(|| (PlotKind::QueueJctMean.title(), look.px(22))),
        xdesc: "queue",
        ydesc: format!("mean JCT of completed jobs ({uname})"),
        names: queues.iter().map(|q| q.to_string()).collect(),
        groups: means.iter().map(|m| m.iter().map(|v| v.map(|x| x / unit)).collect()).collect(),
        percent: false,
    };
    grouped(&root, look, &g)?;
    let entries: Vec<Entry> = run_labels(runs)
        .into_iter()
        .zip(runs)
        .enumerate()
        .map(|(i, (l, r))| {
            let not = r.jobs.iter().filter(|j| j.state != "Completed").count();
            let label = if not == 0 { l } else { format!("{l} ({not} jobs not completed)") };
            Entry::boxed(label, color(i))
        })
        .collect();
    draw_legend(&strip, look, &entries)
}
