//! Plots of one run or of several runs overlaid, as SVG and PNG.
//!
//! Text is rendered with DejaVu Sans, bundled in the crate (`assets/`, with its
//! license) and registered with plotters' `ab_glyph` engine, so neither format needs
//! system fonts or libraries. Every plot has a fixed size ([`PlotKind::size`]).
//! Long inputs are thinned before drawing: CDFs to at most [`CDF_POINTS`] quantiles,
//! timeseries to at most [`TS_POINTS`] bucket means, so plotting stays cheap and the
//! SVG small for 100,000-job runs.

use crate::load::RunData;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// The bundled font (DejaVu Sans, Bitstream Vera license; see assets/).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
/// Quantiles drawn per CDF.
pub const CDF_POINTS: usize = 1000;
/// Points drawn per timeseries line.
pub const TS_POINTS: usize = 1500;

/// Colors of successive runs or queues (Tableau 10).
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Registers the bundled font once (plotters needs it for any text).
pub fn init_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is a compile-time constant known to parse; a failure would only
        // make text render as nothing, which the plot tests would catch.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// The plots lahar draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotKind {
    /// CDF of job completion times.
    JctCdf,
    /// CDF of queueing delays.
    WaitCdf,
    /// Allocated and effective GPU utilization over time.
    Utilization,
    /// Pending and running jobs over time.
    Jobs,
    /// Per-queue GPU share against its deserved share over time (one run only).
    QueueShare,
    /// Jobs by nodes spanned and by highest tier (one run only).
    Placement,
    /// CDF of job completion times per queue (one run only).
    QueueJct,
    /// Where the cluster's GPUs go over time, stacked: progressing, held without
    /// progress, slowed or starting, idle but fragmented, idle (one run only).
    GpuTime,
}

impl PlotKind {
    /// Every plot of a single run, in report order.
    pub const SINGLE: [PlotKind; 8] = [
        PlotKind::JctCdf,
        PlotKind::WaitCdf,
        PlotKind::QueueJct,
        PlotKind::Utilization,
        PlotKind::GpuTime,
        PlotKind::Jobs,
        PlotKind::QueueShare,
        PlotKind::Placement,
    ];
    /// The plots that overlay several runs (one line per run).
    pub const OVERLAY: [PlotKind; 4] = [PlotKind::JctCdf, PlotKind::WaitCdf, PlotKind::Utilization, PlotKind::Jobs];

    /// File stem.
    pub fn name(self) -> &'static str {
        match self {
            PlotKind::JctCdf => "jct_cdf",
            PlotKind::WaitCdf => "wait_cdf",
            PlotKind::Utilization => "gpu_utilization",
            PlotKind::Jobs => "jobs",
            PlotKind::QueueShare => "queue_share",
            PlotKind::Placement => "placement",
            PlotKind::QueueJct => "queue_jct_cdf",
            PlotKind::GpuTime => "gpu_time",
        }
    }
    /// Title.
    pub fn title(self) -> &'static str {
        match self {
            PlotKind::JctCdf => "Job completion time (CDF)",
            PlotKind::WaitCdf => "Queueing delay (CDF)",
            PlotKind::Utilization => "GPU utilization over time",
            PlotKind::Jobs => "Pending and running jobs over time",
            PlotKind::QueueShare => "Queue GPU share vs deserved share",
            PlotKind::Placement => "Placement spread",
            PlotKind::QueueJct => "Job completion time per queue (CDF)",
            PlotKind::GpuTime => "Where the GPUs go",
        }
    }
    /// Size in pixels (width, height), the same for SVG and PNG.
    pub fn size(self) -> (u32, u32) {
        match self {
            PlotKind::Placement => (1000, 450),
            _ => (900, 500),
        }
    }
}

/// A plot that could not be drawn or written.
#[derive(Debug, thiserror::Error)]
#[error("plot {plot}: {msg}")]
pub struct PlotError {
    /// Plot name.
    pub plot: String,
    /// What failed.
    pub msg: String,
}

/// Renders a plot to an SVG string.
pub fn svg(kind: PlotKind, runs: &[RunData]) -> Result<String, PlotError> {
    init_fonts();
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, kind.size()).into_drawing_area();
        draw(kind, runs, &root).map_err(|msg| PlotError { plot: kind.name().into(), msg })?;
        root.present().map_err(|e| PlotError { plot: kind.name().into(), msg: e.to_string() })?;
    }
    Ok(buf)
}

/// Renders a plot to a PNG file.
pub fn png(kind: PlotKind, runs: &[RunData], path: &Path) -> Result<(), PlotError> {
    init_fonts();
    let err = |msg: String| PlotError { plot: kind.name().into(), msg };
    let root = BitMapBackend::new(path, kind.size()).into_drawing_area();
    draw(kind, runs, &root).map_err(err)?;
    root.present().map_err(|e| err(format!("{}: {e}", path.display())))
}

/// Writes every plot (`SINGLE` for one run, `OVERLAY` for several) as SVG and PNG
/// into `dir` (created if needed); returns the files written.
pub fn write_plots(dir: &Path, runs: &[RunData]) -> Result<Vec<PathBuf>, PlotError> {
    std::fs::create_dir_all(dir).map_err(|e| PlotError { plot: "*".into(), msg: format!("{}: {e}", dir.display()) })?;
    let kinds: &[PlotKind] = if runs.len() == 1 { &PlotKind::SINGLE } else { &PlotKind::OVERLAY };
    let mut files = Vec::new();
    for &k in kinds {
        let s = svg(k, runs)?;
        let p = dir.join(format!("{}.svg", k.name()));
        lahar_core::files::write_atomic(&p, s.as_bytes())
            .map_err(|e| PlotError { plot: k.name().into(), msg: format!("{}: {e}", p.display()) })?;
        files.push(p);
        let p = dir.join(format!("{}.png", k.name()));
        png(k, runs, &p)?;
        files.push(p);
    }
    Ok(files)
}

type Res = Result<(), String>;
/// A CDF: label, number of values, thinned points.
type Cdf = (String, usize, Vec<(f64, f64)>);
/// A chart with linear f64 axes.
type TimeChart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn e<T: std::fmt::Display>(x: T) -> String {
    x.to_string()
}

fn draw<DB: DrawingBackend>(kind: PlotKind, runs: &[RunData], root: &DrawingArea<DB, Shift>) -> Res {
    root.fill(&WHITE).map_err(e)?;
    match kind {
        PlotKind::JctCdf => cdf(root, runs, kind.title(), "job completion time", |r| {
            r.jobs.iter().filter(|j| j.state == "Completed").filter_map(|j| j.jct_s).collect()
        }),
        PlotKind::WaitCdf => {
            cdf(root, runs, kind.title(), "queueing delay", |r| r.jobs.iter().filter_map(|j| j.wait_s).collect())
        }
        PlotKind::Utilization => utilization(root, runs),
        PlotKind::Jobs => jobs(root, runs),
        PlotKind::QueueShare => queue_share(root, &runs[..1.min(runs.len())]),
        PlotKind::Placement => placement(root, &runs[..1.min(runs.len())]),
        PlotKind::QueueJct => {
            let Some(r) = runs.first() else { return Ok(()) };
            let queues: std::collections::BTreeSet<&str> = r.jobs.iter().map(|j| j.queue.as_str()).collect();
            let series = queues
                .into_iter()
                .map(|q| {
                    let v: Vec<f64> = r
                        .jobs
                        .iter()
                        .filter(|j| j.queue == q && j.state == "Completed")
                        .filter_map(|j| j.jct_s)
                        .collect();
                    let unfinished = r.jobs.iter().filter(|j| j.queue == q && j.state != "Completed").count();
                    let label = match unfinished {
                        0 => format!("{q} ({} jobs)", v.len()),
                        u => format!("{q} ({} completed, {u} not)", v.len()),
                    };
                    (label, v.len(), cdf_points(v))
                })
                .collect();
            cdf_series(root, kind.title(), "job completion time", series, false)
        }
        PlotKind::GpuTime => gpu_time(root, &runs[..1.min(runs.len())]),
    }
}

/// Thins a sorted sample to at most `CDF_POINTS` (value, cumulative fraction) points.
fn cdf_points(mut v: Vec<f64>) -> Vec<(f64, f64)> {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Vec::new();
    }
    let step = n.div_ceil(CDF_POINTS).max(1);
    let mut pts: Vec<(f64, f64)> = (0..n).step_by(step).map(|i| (v[i], (i + 1) as f64 / n as f64)).collect();
    pts.push((v[n - 1], 1.0));
    pts
}

/// Duration axis: seconds → the unit that suits the largest value.
fn duration_unit(max_s: f64) -> (f64, &'static str) {
    if max_s >= 3.0 * 86400.0 {
        (86400.0, "days")
    } else if max_s >= 3.0 * 3600.0 {
        (3600.0, "hours")
    } else if max_s >= 180.0 {
        (60.0, "minutes")
    } else {
        (1.0, "seconds")
    }
}

pub(crate) fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').to_string()
    }
}

fn cdf(
    root: &DrawingArea<impl DrawingBackend, Shift>,
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
            (label, v.len(), cdf_points(v))
        })
        .collect();
    cdf_series(root, title, what, series, true)
}

/// Draws CDFs on a log duration axis, one line per series (`count`: the legend
/// says how many jobs each has).
fn cdf_series(
    root: &DrawingArea<impl DrawingBackend, Shift>,
    title: &str,
    what: &str,
    series: Vec<Cdf>,
    count: bool,
) -> Res {
    let (root, strip) = legend_split(root, series.len());
    let root = &root;
    let max = series.iter().flat_map(|s| s.2.iter().map(|p| p.0)).fold(0.0f64, f64::max);
    let (unit, uname) = duration_unit(max);
    // Log axis starting at the decade of the smallest positive value (at least 1/1000
    // of the unit): the axis starts near the data; zeros are drawn at that floor.
    let min_pos =
        series.iter().flat_map(|s| s.2.iter().map(|p| p.0 / unit)).filter(|&x| x > 0.0).fold(f64::INFINITY, f64::min);
    let floor = if min_pos.is_finite() { 10f64.powf(min_pos.log10().floor()).max(0.001) } else { 0.01 };
    let xmax = (max / unit).max(floor * 10.0) * 1.2;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d((floor..xmax).log_scale(), 0.0..1.0)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(format!("{what} ({uname}, log scale; values below {floor} drawn at {floor})"))
        .y_desc("share of jobs")
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(e)?;
    let mut entries: Vec<Entry> = Vec::new();
    for (i, (label, n, pts)) in series.iter().enumerate() {
        let c = color(i);
        let mut line: Vec<(f64, f64)> = Vec::with_capacity(pts.len() * 2);
        let mut prev = 0.0;
        for &(x, y) in pts {
            let x = (x / unit).max(floor);
            line.push((x, prev));
            line.push((x, y));
            prev = y;
        }
        chart.draw_series(LineSeries::new(line, c.stroke_width(2))).map_err(e)?;
        entries.push((if count { format!("{label} ({n} jobs)") } else { label.clone() }, c, false));
    }
    draw_legend(&strip, &entries)
}

/// The GPUs of one run over time, stacked to 100%: progressing (effective), held
/// by jobs making no progress (stalled gangs), the rest of the allocated (slowed
/// by communication, or allocated this instant), idle but fragmented (the FGD
/// measure's share of the idle GPUs), and idle. Each band is clipped to [0, 100].
fn gpu_time(root: &DrawingArea<impl DrawingBackend, Shift>, runs: &[RunData]) -> Res {
    let (root, strip) = legend_split(root, 5);
    let (mut chart, unit) = time_chart(&root, runs, PlotKind::GpuTime.title(), 100.0, "GPUs (% of cluster)", true)?;
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
    let mut entries: Vec<Entry> = Vec::new();
    // Drawn top band first, so each lower band covers the one above it from below.
    for (top, c) in tops.iter().zip(colors).rev() {
        chart.draw_series(AreaSeries::new(thin(&t, top), 0.0, c.mix(0.85).filled())).map_err(e)?;
    }
    for (name, c) in names.iter().zip(colors) {
        entries.push((name.to_string(), c, false));
    }
    draw_legend(&strip, &entries)
}

/// A legend entry: label, color, dashed.
type Entry = (String, RGBColor, bool);

/// Height of a legend row (pixels).
const LEGEND_ROW: u32 = 22;

/// Splits a strip off the bottom of `root` for `n` legend entries, two per row: a
/// legend sits under its chart and never covers data.
fn legend_split<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    n: usize,
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    let rows = n.div_ceil(2) as u32;
    let h = root.dim_in_pixel().1;
    root.split_vertically(h.saturating_sub(rows * LEGEND_ROW + 8))
}

/// Draws the entries into the strip `legend_split` made.
fn draw_legend<DB: DrawingBackend>(strip: &DrawingArea<DB, Shift>, entries: &[Entry]) -> Res {
    let w = strip.dim_in_pixel().0 as i32;
    let row = LEGEND_ROW as i32;
    for (k, (label, c, dashed)) in entries.iter().enumerate() {
        let (col, r) = ((k % 2) as i32, (k / 2) as i32);
        let x = 75 + col * (w - 75) / 2;
        let y = r * row + row / 2;
        let marks: Vec<(i32, i32)> = if *dashed { vec![(0, 6), (9, 15), (18, 24)] } else { vec![(0, 24)] };
        for (a, b) in marks {
            strip.draw(&PathElement::new(vec![(x + a, y), (x + b, y)], c.stroke_width(2))).map_err(e)?;
        }
        strip.draw(&Text::new(label.clone(), (x + 32, y - 8), ("sans-serif", 14))).map_err(e)?;
    }
    Ok(())
}

/// Legend names of runs: their scenario names; when runs share a scenario name, the
/// scheduler tells them apart, else the directory.
fn run_labels(runs: &[RunData]) -> Vec<String> {
    runs.iter()
        .map(|r| {
            let name = r.scenario();
            let twins: Vec<&RunData> = runs.iter().filter(|o| o.scenario() == name).collect();
            let same_scheduler = twins.iter().filter(|o| o.scheduler() == r.scheduler()).count();
            match (twins.len(), same_scheduler) {
                (1, _) => name.to_string(),
                (_, 1) => format!("{name} ({})", r.scheduler()),
                _ => format!("{name} ({})", r.label),
            }
        })
        .collect()
}

/// Bucket means: at most `TS_POINTS` points.
fn thin(t: &[f64], v: &[f64]) -> Vec<(f64, f64)> {
    let n = t.len().min(v.len());
    let k = n.div_ceil(TS_POINTS).max(1);
    (0..n)
        .step_by(k)
        .map(|i| {
            let j = (i + k).min(n);
            let m = (j - i) as f64;
            (t[i..j].iter().sum::<f64>() / m, v[i..j].iter().sum::<f64>() / m)
        })
        .collect()
}

fn time_unit(runs: &[RunData]) -> (f64, &'static str) {
    let max = runs.iter().filter_map(|r| r.ts.t.last().copied()).fold(0.0f64, f64::max);
    duration_unit(max)
}

fn time_chart<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    runs: &[RunData],
    title: &str,
    ymax: f64,
    ydesc: &str,
    percent: bool,
) -> Result<(TimeChart<'a, DB>, f64), String> {
    let (unit, uname) = time_unit(runs);
    let tmax = runs.iter().filter_map(|r| r.ts.t.last().copied()).fold(0.0f64, f64::max) / unit;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..tmax.max(1e-9), 0.0..ymax.max(1e-9))
        .map_err(e)?;
    let pct = |v: &f64| format!("{v:.0}%");
    let plain = |v: &f64| fmt_num(*v);
    let fy: &dyn Fn(&f64) -> String = if percent { &pct } else { &plain };
    chart
        .configure_mesh()
        .x_desc(format!("simulated time ({uname})"))
        .y_desc(ydesc)
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(fy)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(e)?;
    Ok((chart, unit))
}

fn utilization(root: &DrawingArea<impl DrawingBackend, Shift>, runs: &[RunData]) -> Res {
    let many = runs.len() > 1;
    // One run: also the GPUs held without progress, when some were.
    let stalled = runs.first().and_then(|r| r.ts.stalled.as_ref()).filter(|v| !many && v.iter().any(|&x| x > 0.0));
    let (root, strip) = legend_split(root, 2 * runs.len() + usize::from(stalled.is_some()));
    let (mut chart, unit) = time_chart(&root, runs, PlotKind::Utilization.title(), 105.0, "GPUs (% of cluster)", true)?;
    let labels = run_labels(runs);
    let mut entries: Vec<Entry> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let ts = &r.ts;
        let pct = |v: &[f64]| -> Vec<f64> {
            v.iter().zip(&ts.total).map(|(a, t)| if *t > 0.0 { 100.0 * a / t } else { 0.0 }).collect()
        };
        let t: Vec<f64> = ts.t.iter().map(|x| x / unit).collect();
        let alloc = thin(&t, &pct(&ts.allocated));
        let eff = thin(&t, &pct(&ts.effective));
        let (ca, ce) = if many { (color(i), color(i)) } else { (color(0), color(2)) };
        let prefix = if many { format!("{}: ", labels[i]) } else { String::new() };
        chart.draw_series(LineSeries::new(alloc, ca.stroke_width(2))).map_err(e)?;
        chart.draw_series(DashedLineSeries::new(eff, 6, 4, ce.stroke_width(2))).map_err(e)?;
        entries.push((format!("{prefix}allocated"), ca, false));
        entries.push((format!("{prefix}effective"), ce, true));
        if let Some(v) = stalled {
            let cs = color(1);
            chart.draw_series(LineSeries::new(thin(&t, &pct(v)), cs.stroke_width(2))).map_err(e)?;
            entries.push(("held without progress".to_string(), cs, false));
        }
    }
    draw_legend(&strip, &entries)
}

fn jobs(root: &DrawingArea<impl DrawingBackend, Shift>, runs: &[RunData]) -> Res {
    let ymax = runs
        .iter()
        .flat_map(|r| r.ts.pending.iter().chain(r.ts.running.iter()))
        .fold(0.0f64, |a, &b| a.max(b))
        .max(1.0)
        * 1.1;
    let (root, strip) = legend_split(root, 2 * runs.len());
    let (mut chart, unit) = time_chart(&root, runs, PlotKind::Jobs.title(), ymax, "jobs", false)?;
    let many = runs.len() > 1;
    let labels = run_labels(runs);
    let mut entries: Vec<Entry> = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let t: Vec<f64> = r.ts.t.iter().map(|x| x / unit).collect();
        let (cp, cr) = if many { (color(i), color(i)) } else { (color(1), color(0)) };
        let prefix = if many { format!("{}: ", labels[i]) } else { String::new() };
        chart.draw_series(LineSeries::new(thin(&t, &r.ts.running), cr.stroke_width(2))).map_err(e)?;
        chart.draw_series(DashedLineSeries::new(thin(&t, &r.ts.pending), 6, 4, cp.stroke_width(2))).map_err(e)?;
        entries.push((format!("{prefix}running"), cr, false));
        entries.push((format!("{prefix}pending"), cp, true));
    }
    draw_legend(&strip, &entries)
}

fn queue_share(root: &DrawingArea<impl DrawingBackend, Shift>, runs: &[RunData]) -> Res {
    let n = runs.first().map_or(0, |r| r.ts.queues.iter().map(|q| 1 + usize::from(q.2.is_some())).sum());
    let (root, strip) = legend_split(root, n);
    let (mut chart, unit) =
        time_chart(&root, runs, PlotKind::QueueShare.title(), 105.0, "share of cluster GPUs (%)", true)?;
    let mut entries: Vec<Entry> = Vec::new();
    if let Some(r) = runs.first() {
        let t: Vec<f64> = r.ts.t.iter().map(|x| x / unit).collect();
        let pct = |v: &[f64]| -> Vec<f64> {
            v.iter().zip(&r.ts.total).map(|(a, t)| if *t > 0.0 { 100.0 * a / t } else { 0.0 }).collect()
        };
        for (i, (name, alloc, deserved)) in r.ts.queues.iter().enumerate() {
            let c = color(i);
            chart.draw_series(LineSeries::new(thin(&t, &pct(alloc)), c.stroke_width(2))).map_err(e)?;
            entries.push((format!("{name}: allocated"), c, false));
            if let Some(d) = deserved {
                chart.draw_series(DashedLineSeries::new(thin(&t, &pct(d)), 6, 4, c.stroke_width(1))).map_err(e)?;
                entries.push((format!("{name}: deserved"), c, true));
            }
        }
    }
    draw_legend(&strip, &entries)
}

fn bars(
    area: &DrawingArea<impl DrawingBackend, Shift>,
    title: &str,
    xdesc: &str,
    counts: &[(u32, usize)],
    c: RGBColor,
    names: &[String],
) -> Res {
    // Every named category is shown, used or not (a tier no job spanned is a 0).
    let xmax = (counts.iter().map(|c| c.0).max().unwrap_or(0) + 1).max(names.len() as u32);
    let ymax = counts.iter().map(|c| c.1).max().unwrap_or(0).max(1) as f64 * 1.1;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(60)
        .build_cartesian_2d(-0.5f64..(xmax as f64 - 0.5), 0.0..ymax)
        .map_err(e)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(xdesc)
        .y_desc("jobs")
        .x_labels((xmax as usize).min(16))
        .x_label_formatter(&|v| {
            if v.fract().abs() > 1e-9 || *v < 0.0 {
                return String::new();
            }
            names.get(*v as usize).cloned().unwrap_or_else(|| format!("{v:.0}"))
        })
        .y_label_formatter(&|v| fmt_num(*v))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(e)?;
    chart
        .draw_series(
            counts
                .iter()
                .map(|&(x, n)| Rectangle::new([(x as f64 - 0.4, 0.0), (x as f64 + 0.4, n as f64)], c.filled())),
        )
        .map_err(e)?;
    Ok(())
}

fn placement(root: &DrawingArea<impl DrawingBackend, Shift>, runs: &[RunData]) -> Res {
    let Some(r) = runs.first() else { return Ok(()) };
    let started: Vec<_> = r.jobs.iter().filter(|j| j.nodes_spanned > 0).collect();
    let count = |f: &dyn Fn(&crate::load::JobRecord) -> u32| -> Vec<(u32, usize)> {
        let mut m = std::collections::BTreeMap::new();
        for j in &started {
            *m.entry(f(j)).or_insert(0usize) += 1;
        }
        m.into_iter().collect()
    };
    let titled = root.titled(PlotKind::Placement.title(), ("sans-serif", 22)).map_err(e)?;
    let (left, right) = titled.split_horizontally(root.dim_in_pixel().0 / 2);
    bars(&left, "jobs by nodes spanned", "nodes spanned at last start", &count(&|j| j.nodes_spanned), color(0), &[])?;
    // The fabric's tier names (summary.json `tiers`), numbers for older runs.
    let tiers: Vec<String> = r.summary["tiers"]
        .as_array()
        .map(|a| a.iter().filter_map(|v| v.as_str().map(String::from)).collect())
        .unwrap_or_default();
    bars(
        &right,
        "jobs by highest tier",
        "highest tier spanned at last start",
        &count(&|j| j.highest_tier),
        color(1),
        &tiers,
    )
}
