//! The line plots: CDFs on a log duration axis and timeseries over simulated time.

use super::{
    Entry, Look, PlotKind, Res, color, draw_legend, duration_unit, e, fmt_num, legend_split, line, run_labels, thin,
};
use crate::load::RunData;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// A CDF: label, number of values, thinned points.
type Cdf = (String, usize, Vec<(f64, f64)>);
/// A chart with linear f64 axes.
type TimeChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// Thins a sorted sample to at most `CDF_POINTS` (value, cumulative fraction) points.
fn cdf_points(mut v: Vec<f64>) -> Vec<(f64, f64)> {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(super::CDF_POINTS).max(1);
    let mut pts: Vec<(f64, f64)> = (0..n).step_by(step).map(|i| (v[i], (i + 1) as f64 / n as f64)).collect();
    pts.push((v[n - 1], 1.0));
    pts
}

/// One CDF per run of the values `values` picks.
pub(super) fn cdf(
    root: &DrawingArea<impl DrawingBackend, Shift>,
    look: &Look,
    runs: &[RunData],
    title: &str,
    what: &str,
    values: impl Fn(&RunData) -> Vec<f64>,
) -> Res {
    let labels = run_labels(runs);
    let series: Vec<Cdf> = runs
        .iter()
        .zip(labels)
        .map(|(r, label)| {
            let v = values(r);
            let n = v.len();
            (format!("{label} ({n} jobs)"), n, cdf_points(v))
        })
        .collect();
    cdf_series(root, look, title, what, series)
}

/// The JCT CDF of each queue of one run; a queue with unfinished jobs counts them
/// in its legend.
pub(super) fn queue_jct(root: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, runs: &[RunData]) -> Res {
    let Some(r) = runs.first() else { return Ok(()) };
    let queues: std::collections::BTreeSet<&str> = r.jobs.iter().map(|j| j.queue.as_str()).collect();
    let series = queues
        .into_iter()
        .map(|q| {
            let v: Vec<f64> =
                r.jobs.iter().filter(|j| j.queue == q && j.state == "Completed").filter_map(|j| j.jct_s).collect();
            let unfinished = r.jobs.iter().filter(|j| j.queue == q && j.state != "Completed").count();
            let label = match unfinished {
                0 => format!("{q} ({} jobs)", v.len()),
                u => format!("{q} ({} completed, {u} not)", v.len()),
            };
            (label, v.len(), cdf_points(v))
        })
        .collect();
    cdf_series(root, look, PlotKind::QueueJct.title(), "job completion time", series)
}

/// Draws CDFs on a log duration axis, one line per series: the first solid, the
/// others dashed, each with its own pattern, so equal lines stay visible.
fn cdf_series(
    root: &DrawingArea<impl DrawingBackend, Shift>,
    look: &Look,
    title: &str,
    what: &str,
    series: Vec<Cdf>,
) -> Res {
    let (root, strip) = legend_split(root, look, series.len());
    let root = &root;
    let max = series.iter().flat_map(|s| s.2.iter().map(|p| p.0)).fold(0.0f64, f64::max);
    let (unit, uname) = duration_unit(max);
    // Log axis starting at the decade of the smallest positive value (at least 1/1000
    // of the unit): the axis starts near the data; zeros are drawn at that floor.
    let min_pos =
        series.iter().flat_map(|s| s.2.iter().map(|p| p.0 / unit)).filter(|&x| x > 0.0).fold(f64::INFINITY, f64::min);
    let floor = if min_pos.is_finite() { 10f64.powf(min_pos.log10().floor()).max(0.001) } else { 0.01 };
    let xmax = (max / unit).max(floor * 10.0) * 1.2;
    let mut chart = look.chart(root, title).build_cartesian_2d((floor..xmax).log_scale(), 0.0..1.0).map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(format!("{what} ({uname}, log scale; values below {floor} drawn at {floor})"))
        .y_desc("share of jobs")
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v: &f64| format!("{:.0}%", v * 100.0))
        .label_style(("sans-serif", look.font))
        .axis_desc_style(("sans-serif", look.desc()))
        .draw()
        .map_err(e)?;
    // Nothing to draw (a run of services alone, or nothing finished): say so on
    // the chart rather than leave it blank.
    if series.iter().all(|s| s.1 == 0) {
        let style = ("sans-serif", look.desc()).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Center));
        let mid = (floor * xmax).sqrt();
        chart.plotting_area().draw(&Text::new(format!("no {what} to show"), (mid, 0.5), style)).map_err(e)?;
    }
    let mut entries: Vec<Entry> = Vec::new();
    for (i, (label, _, pts)) in series.iter().enumerate() {
        let c = color(i);
        let mut line: Vec<(f64, f64)> = Vec::with_capacity(pts.len() * 2);
        let mut prev = 0.0;
        for &(x, y) in pts {
            let x = (x / unit).max(floor);
            line.push((x, prev));
            line.push((x, y));
            prev = y;
        }
        super::line(&mut chart, look, line, c.stroke_width(look.line()), look.dash(i))?;
        entries.push(Entry::line(label.clone(), c, look.dash(i), look.line()));
    }
    draw_legend(&strip, look, &entries)
}

/// Placement runs: `pick` of each run's fragmentation.csv against the arrived
/// demand, a line per run (the second and later dashed).
pub(super) fn against_demand(
    root: &DrawingArea<impl DrawingBackend, Shift>,
    look: &Look,
    runs: &[RunData],
    title: &str,
    ydesc: &str,
    pick: fn(&crate::load::PlacementPoint) -> f64,
) -> Res {
    let (root, strip) = legend_split(root, look, runs.len());
    let pts = |r: &RunData| -> Vec<(f64, f64)> {
        r.placement.iter().flatten().map(|p| (p.demand_pct, pick(p).clamp(0.0, 100.0))).collect()
    };
    let xmax = runs.iter().flat_map(&pts).map(|p| p.0).fold(1.0f64, f64::max);
    let mut chart = look.chart(&root, title).build_cartesian_2d(0.0..xmax, 0.0..105.0).map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("arrived GPU demand (% of the cluster)")
        .y_desc(ydesc)
        .x_label_formatter(&|v| format!("{}%", fmt_num(*v)))
        .y_label_formatter(&|v| format!("{}%", fmt_num(*v)))
        .label_style(("sans-serif", look.font))
        .axis_desc_style(("sans-serif", look.desc()))
        .draw()
        .map_err(e)?;
    let mut entries = Vec::new();
    // One run names its policy too.
    let labels = match runs {
        [r] => vec![format!("{} ({})", r.scenario(), r.scheduler())],
        _ => run_labels(runs),
    };
    for (i, (r, label)) in runs.iter().zip(labels).enumerate() {
        let c = color(i);
        line(&mut chart, look, pts(r), c.stroke_width(look.line()), look.dash(i))?;
        entries.push(Entry::line(label, c, look.dash(i), look.line()));
    }
    draw_legend(&strip, look, &entries)
}

/// A chart over the runs' simulated time, `0..ymax` on the y axis.
fn time_chart<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    look: &Look,
    runs: &[RunData],
    title: &str,
    ymax: f64,
    ydesc: &str,
    percent: bool,
) -> Result<(TimeChart<'a, DB>, f64), String> {
    let (unit, uname) = super::time_unit(runs);
    let tmax = runs.iter().filter_map(|r| r.ts.t.last().copied()).fold(0.0f64, f64::max) / unit;
    let mut chart = look.chart(root, title).build_cartesian_2d(0.0..tmax.max(1e-9), 0.0..ymax.max(1e-9)).map_err(e)?;
    let pct = |v: &f64| format!("{v:.0}%");
    let plain = |v: &f64| fmt_num(*v);
    let fy: &dyn Fn(&f64) -> String = if percent { &pct } else { &plain };
    chart
        .configure_mesh()
        .x_desc(format!("simulated time ({uname})"))
        .y_desc(ydesc)
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(fy)
        .label_style(("sans-serif", look.font))
        .axis_desc_style(("sans-serif", look.desc()))
        .draw()
        .map_err(e)?;
    Ok((chart, unit))
}

/// Line width of run `i` of `n` overlaid: the earlier runs wider, so a later
/// run's equal line leaves a border of the earlier one visible.
fn overlay_width(look: &Look, i: usize, n: usize) -> u32 {
    look.line() + look.px(2) * (n - 1 - i).min(3) as u32
}

/// The GPUs of one run over time, stacked to 100%: progressing (effective), held
/// by jobs making no progress (stalled gangs), the rest of the allocated (slowed
/// by communication, or allocated this instant), idle but fragmented (the FGD
/// measure's share of the idle GPUs), and idle. Each band is clipped to [0, 100].
pub(super) fn gpu_time(root: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, runs: &[RunData]) -> Res {
    let (root, strip) = legend_split(root, look, 5);
    let (mut chart, unit) =
        time_chart(&root, look, runs, PlotKind::GpuTime.title(), 100.0, "GPUs (% of cluster)", true)?;
    let Some(r) = runs.first() else { return Ok(()) };
    let ts = &r.ts;
    let n = ts.t.len();
    let zeros = vec![0.0; n];
    let stalled = ts.stalled.as_deref().unwrap_or(&zeros);
    let frag = ts.fragmentation.as_deref().unwrap_or(&zeros);
    // Cumulative tops of the five bands, per sample, in % of the cluster.
    let mut tops: [Vec<f64>; 5] = Default::default();
    for i in 0..n {
        let total = ts.total[i];
        let pct = |v: f64| if total > 0.0 { (100.0 * v / total).clamp(0.0, 100.0) } else { 0.0 };
        let (alloc, eff, st) = (pct(ts.allocated[i]), pct(ts.effective[i]), pct(stalled[i]));
        let eff = eff.min(alloc);
        let st = st.min(alloc - eff);
        let idle = 100.0 - alloc;
        let fragmented = idle * frag[i].clamp(0.0, 1.0);
        let bands = [eff, st, alloc - eff - st, fragmented, idle - fragmented];
        let mut acc = 0.0;
        for (b, top) in bands.iter().zip(tops.iter_mut()) {
            acc = (acc + b.max(0.0)).min(100.0);
            top.push(acc);
        }
    }
    let t: Vec<f64> = ts.t.iter().map(|x| x / unit).collect();
    let names = ["progressing", "held without progress", "allocated, slowed or starting", "idle, fragmented", "idle"];
    let colors = [color(2), color(1), color(0), color(3), RGBColor(200, 200, 200)];
    // Drawn top band first, so each lower band covers the one above it from below.
    for (top, c) in tops.iter().zip(colors).rev() {
        chart.draw_series(AreaSeries::new(thin(&t, top), 0.0, c.mix(0.85).filled())).map_err(e)?;
    }
    let entries: Vec<Entry> = names.iter().zip(colors).map(|(name, c)| Entry::boxed(*name, c)).collect();
    draw_legend(&strip, look, &entries)
}

/// Allocated and effective GPUs over time (one run: also those held without
/// progress, when some were).
pub(super) fn utilization(root: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, runs: &[RunData]) -> Res {
    let many = runs.len() > 1;
    let stalled = runs.first().and_then(|r| r.ts.stalled.as_ref()).filter(|v| !many && v.iter().any(|&x| x > 0.0));
    let (root, strip) = legend_split(root, look, 2 * runs.len() + usize::from(stalled.is_some()));
    let (mut chart, unit) =
        time_chart(&root, look, runs, PlotKind::Utilization.title(), 105.0, "GPUs (% of cluster)", true)?;
    let labels = run_labels(runs);
    let mut entries: Vec<Entry> = Vec::new();
    let dashed = Some((look.px(6), look.px(4)));
    for (i, r) in runs.iter().enumerate() {
        let ts = &r.ts;
        let pct = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .zip(&ts.total)
                .map(|(a, t)| if *t > 0.0 { (100.0 * a / t).clamp(0.0, 100.0) } else { 0.0 })
                .collect()
        };
        let t: Vec<f64> = ts.t.iter().map(|x| x / unit).collect();
        let (ca, ce) = if many { (color(i), color(i)) } else { (color(0), color(2)) };
        let prefix = if many { format!("{}: ", labels[i]) } else { String::new() };
        let w = overlay_width(look, i, runs.len());
        line(&mut chart, look, thin(&t, &pct(&ts.allocated)), ca.stroke_width(w), None)?;
        line(&mut chart, look, thin(&t, &pct(&ts.effective)), ce.stroke_width(w), dashed)?;
        entries.push(Entry::line(format!("{prefix}allocated"), ca, None, w));
        entries.push(Entry::line(format!("{prefix}effective"), ce, dashed, w));
        if let Some(v) = stalled {
            let cs = color(1);
            let dotted = (look.px(2), look.px(3));
            line(&mut chart, look, thin(&t, &pct(v)), cs.stroke_width(look.line()), Some(dotted))?;
            entries.push(Entry::line("held without progress", cs, Some(dotted), look.line()));
        }
    }
    draw_legend(&strip, look, &entries)
}

/// Pending and running jobs over time.
pub(super) fn jobs(root: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, runs: &[RunData]) -> Res {
    let ymax = runs
        .iter()
        .flat_map(|r| r.ts.pending.iter().chain(r.ts.running.iter()))
        .fold(0.0f64, |a, &b| a.max(b))
        .max(1.0)
        * 1.1;
    let (root, strip) = legend_split(root, look, 2 * runs.len());
    let (mut chart, unit) = time_chart(&root, look, runs, PlotKind::Jobs.title(), ymax, "jobs", false)?;
    let many = runs.len() > 1;
    let labels = run_labels(runs);
    let mut entries: Vec<Entry> = Vec::new();
    let (d, g) = (look.px(6), look.px(4));
    for (i, r) in runs.iter().enumerate() {
        let t: Vec<f64> = r.ts.t.iter().map(|x| x / unit).collect();
        let (cp, cr) = if many { (color(i), color(i)) } else { (color(1), color(0)) };
        let prefix = if many { format!("{}: ", labels[i]) } else { String::new() };
        let w = overlay_width(look, i, runs.len());
        line(&mut chart, look, thin(&t, &r.ts.running), cr.stroke_width(w), None)?;
        line(&mut chart, look, thin(&t, &r.ts.pending), cp.stroke_width(w), Some((d, g)))?;
        entries.push(Entry::line(format!("{prefix}running"), cr, None, w));
        entries.push(Entry::line(format!("{prefix}pending"), cp, Some((d, g)), w));
    }
    draw_legend(&strip, look, &entries)
}

/// Each queue's GPUs over time against its deserved GPUs.
pub(super) fn queue_share(root: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, runs: &[RunData]) -> Res {
    let n = runs.first().map_or(0, |r| r.ts.queues.iter().map(|q| 1 + usize::from(q.2.is_some())).sum());
    let (root, strip) = legend_split(root, look, n);
    let (mut chart, unit) =
        time_chart(&root, look, runs, PlotKind::QueueShare.title(), 105.0, "share of cluster GPUs (%)", true)?;
    let mut entries: Vec<Entry> = Vec::new();
    let (d, g) = (look.px(6), look.px(4));
    if let Some(r) = runs.first() {
        let t: Vec<f64> = r.ts.t.iter().map(|x| x / unit).collect();
        let pct = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .zip(&r.ts.total)
                .map(|(a, t)| if *t > 0.0 { (100.0 * a / t).clamp(0.0, 100.0) } else { 0.0 })
                .collect()
        };
        for (i, (name, alloc, deserved)) in r.ts.queues.iter().enumerate() {
            let c = color(i);
            line(&mut chart, look, thin(&t, &pct(alloc)), c.stroke_width(look.line()), None)?;
            entries.push(Entry::line(format!("{name}: allocated"), c, None, look.line()));
            if let Some(dv) = deserved {
                let thin_w = look.px(1);
                line(&mut chart, look, thin(&t, &pct(dv)), c.stroke_width(thin_w), Some((d, g)))?;
                entries.push(Entry::line(format!("{name}: deserved"), c, Some((d, g)), thin_w));
            }
        }
    }
    draw_legend(&strip, look, &entries)
}
