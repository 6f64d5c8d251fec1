//! Plots of one run or of several runs overlaid, as SVG and PNG.
//!
//! Text is rendered with DejaVu Sans, bundled in the crate (`assets/`, with its
//! license) and registered with plotters' `ab_glyph` engine, so neither format needs
//! system fonts or libraries. A plot's size and text follow its [`PlotStyle`]: on
//! screen (the default: each plot's own size, a title) or for a paper (larger,
//! print-resolution figures without a title, lines told apart by dash as well as
//! color). Long inputs are thinned before drawing: CDFs to at most [`CDF_POINTS`]
//! quantiles, timeseries to at most [`TS_POINTS`] bucket means, the node timeline
//! to a pixel's resolution, so plotting stays cheap and the SVG small for
//! 100,000-job runs.

mod bars;
mod faults;
mod gantt;
mod lines;
mod serving;

use crate::load::RunData;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// The bundled font (DejaVu Sans, Bitstream Vera license; see assets/).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
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

/// Dash and gap lengths (pixels at the screen style's scale) of the second,
/// third... line of a plot whose lines could coincide.
pub(crate) const DASHES: [(u32, u32); 3] = [(8, 4), (3, 4), (12, 3)];

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
    /// Jobs by nodes spanned and by highest tier (one run: counts; several: each
    /// run's share of its started jobs, side by side).
    Placement,
    /// CDF of job completion times per queue (one run only).
    QueueJct,
    /// Where the cluster's GPUs go over time, stacked: progressing, held without
    /// progress, slowed or starting, idle but fragmented, idle (one run only).
    GpuTime,
    /// Pods on nodes over time, a Gantt chart (one run with pods.csv).
    NodeTimeline,
    /// Outages and drains over time, with the GPUs they take (one run with
    /// events.csv).
    Faults,
    /// GPUs by workload class (services, other jobs) over time, and the
    /// services' demand against their capacity (one run with services).
    Serving,
    /// Mean JCT per queue, the runs side by side (several runs).
    QueueJctMean,
    /// A placement run's allocated GPUs against the arrived demand (a line per run).
    DemandAllocation,
    /// A placement run's fragmented share of the free GPUs against the arrived
    /// demand (a line per run).
    DemandFragmentation,
}

impl PlotKind {
    /// Every plot a single run can have, in report order ([`PlotKind::for_run`]
    /// says which a given run has).
    pub const SINGLE: [PlotKind; 11] = [
        PlotKind::JctCdf,
        PlotKind::WaitCdf,
        PlotKind::QueueJct,
        PlotKind::Utilization,
        PlotKind::GpuTime,
        PlotKind::Jobs,
        PlotKind::QueueShare,
        PlotKind::Placement,
        PlotKind::NodeTimeline,
        PlotKind::Faults,
        PlotKind::Serving,
    ];
    /// The plots of several runs, side by side or overlaid (one line per run).
    pub const OVERLAY: [PlotKind; 6] = [
        PlotKind::JctCdf,
        PlotKind::WaitCdf,
        PlotKind::QueueJctMean,
        PlotKind::Utilization,
        PlotKind::Jobs,
        PlotKind::Placement,
    ];
    /// The plots of one run: [`PlotKind::SINGLE`], without the node timeline when
    /// the run has no pods.csv (or no pod ever started) and without the faults
    /// timeline when it had no faults.
    pub fn for_run(r: &RunData) -> Vec<PlotKind> {
        PlotKind::SINGLE
            .into_iter()
            .filter(|k| match k {
                PlotKind::NodeTimeline => r.pods.as_ref().is_some_and(|p| !p.rows.is_empty()),
                PlotKind::Faults => r.events.as_ref().is_some_and(|e| !e.is_empty()),
                PlotKind::Serving => r.ts.serving.is_some(),
                _ => true,
            })
            .collect()
    }

    /// The plots of a placement run, one or several.
    pub const PLACEMENT: [PlotKind; 2] = [PlotKind::DemandAllocation, PlotKind::DemandFragmentation];

    /// The plots of `runs`: [`PlotKind::for_run`] for one, [`PlotKind::OVERLAY`] for
    /// several, [`PlotKind::PLACEMENT`] for placement runs.
    pub fn for_runs(runs: &[RunData]) -> Vec<PlotKind> {
        if runs.first().is_some_and(|r| r.placement.is_some()) {
            return PlotKind::PLACEMENT.to_vec();
        }
        match runs {
            [r] => PlotKind::for_run(r),
            _ => PlotKind::OVERLAY.to_vec(),
        }
    }

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
            PlotKind::NodeTimeline => "node_timeline",
            PlotKind::Faults => "faults",
            PlotKind::Serving => "serving",
            PlotKind::QueueJctMean => "queue_jct",
            PlotKind::DemandAllocation => "allocation_vs_demand",
            PlotKind::DemandFragmentation => "fragmentation_vs_demand",
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
            PlotKind::NodeTimeline => "Pods on nodes over time",
            PlotKind::Faults => "Faults over time",
            PlotKind::Serving => "Services and other jobs over time",
            PlotKind::QueueJctMean => "Mean job completion time per queue",
            PlotKind::DemandAllocation => "Allocated GPUs against arrived demand",
            PlotKind::DemandFragmentation => "Fragmented free GPUs against arrived demand",
        }
    }
    /// Size in pixels (width, height) on screen, the same for SVG and PNG.
    pub fn size(self) -> (u32, u32) {
        match self {
            PlotKind::Placement => (1000, 450),
            PlotKind::NodeTimeline => (900, 700),
            PlotKind::Faults | PlotKind::Serving => (900, 560),
            _ => (900, 500),
        }
    }
    /// Size in pixels for a paper: 300 dpi at a column's width (3.5 in), or a
    /// page's (7 in) for the wide ones.
    pub fn paper_size(self) -> (u32, u32) {
        match self {
            PlotKind::Placement => (2100, 900),
            PlotKind::NodeTimeline | PlotKind::Faults | PlotKind::Serving => (2100, 1400),
            _ => (1050, 700),
        }
    }
}

/// How plots are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlotStyle {
    /// For a paper: no title (the paper's caption says it), every line of a plot
    /// told apart by its dash as well as its color (it prints in grey),
    /// print-resolution sizes ([`PlotKind::paper_size`]) and text to match.
    pub paper: bool,
    /// Width and height in pixels for every plot; `None`: each plot's own.
    pub size: Option<(u32, u32)>,
    /// Size of the tick labels in pixels (titles, axis names and legends are
    /// scaled from it, and so are margins and lines); `None`: 14 on screen, 32
    /// for a paper.
    pub font: Option<u32>,
}

/// The smallest and largest plot side and font size [`PlotStyle::parse_size`]
/// and [`PlotStyle::check_font`] accept.
pub const PLOT_SIDE: (u32, u32) = (200, 8000);
/// See [`PLOT_SIDE`].
pub const PLOT_FONT: (u32, u32) = (6, 200);

impl PlotStyle {
    /// The paper style.
    pub const PAPER: PlotStyle = PlotStyle { paper: true, size: None, font: None };

    /// The size of `kind` in this style.
    pub fn size_of(&self, kind: PlotKind) -> (u32, u32) {
        self.size.unwrap_or(if self.paper { kind.paper_size() } else { kind.size() })
    }

    /// `WIDTHxHEIGHT` in pixels, each side within [`PLOT_SIDE`].
    pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
        let (w, h) = s
            .split_once(['x', 'X'])
            .ok_or_else(|| format!("`{s}`: expected WIDTHxHEIGHT in pixels, such as 1050x700"))?;
        let side = |v: &str| -> Result<u32, String> {
            let n: u32 =
                v.trim().parse().map_err(|_| format!("`{s}`: `{v}` is not a whole number of pixels (WIDTHxHEIGHT)"))?;
            if (PLOT_SIDE.0..=PLOT_SIDE.1).contains(&n) {
                Ok(n)
            } else {
                Err(format!("`{s}`: each side must be {} to {} pixels", PLOT_SIDE.0, PLOT_SIDE.1))
            }
        };
        Ok((side(w)?, side(h)?))
    }

    /// A font size within [`PLOT_FONT`].
    pub fn check_font(px: u32) -> Result<u32, String> {
        if (PLOT_FONT.0..=PLOT_FONT.1).contains(&px) {
            Ok(px)
        } else {
            Err(format!("{px}: the font size must be {} to {} pixels", PLOT_FONT.0, PLOT_FONT.1))
        }
    }

    pub(crate) fn look(&self) -> Look {
        let font = self.font.unwrap_or(if self.paper { 32 } else { 14 });
        Look { paper: self.paper, bitmap: false, font, s: f64::from(font) / 14.0 }
    }
}

/// A style resolved into the numbers drawing uses: every length is the screen
/// style's, scaled with the font.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Look {
    pub paper: bool,
    /// Drawn into pixels (PNG), where a thick line's joins are drawn segment by
    /// segment (plotters' mitred joins overshoot at sharp turns).
    pub bitmap: bool,
    /// Tick-label size (pixels).
    pub font: u32,
    /// Scale of every other length against the screen style.
    pub s: f64,
}

impl Look {
    /// A screen-style length at this style's scale.
    pub fn px(&self, v: u32) -> u32 {
        ((f64::from(v) * self.s).round() as u32).max(1)
    }
    /// Same, signed.
    pub fn pxi(&self, v: i32) -> i32 {
        (f64::from(v) * self.s).round() as i32
    }
    /// Axis names.
    pub fn desc(&self) -> u32 {
        self.font + self.px(1)
    }
    /// Line width.
    pub fn line(&self) -> u32 {
        self.px(2)
    }
    /// The dash of the `i`-th of several lines that could coincide: the first
    /// solid, the others each with its own pattern.
    pub fn dash(&self, i: usize) -> Option<(u32, u32)> {
        (i > 0).then(|| {
            let (d, g) = DASHES[(i - 1) % DASHES.len()];
            (self.px(d), self.px(g))
        })
    }
    /// A chart on `root` with this style's margins, label areas and title (none
    /// for a paper).
    pub fn chart<'a, 'b, DB: DrawingBackend>(
        &self,
        root: &'a DrawingArea<DB, Shift>,
        title: &str,
    ) -> ChartBuilder<'a, 'b, DB> {
        let mut b = ChartBuilder::on(root);
        b.margin(self.px(15)).x_label_area_size(self.px(50)).y_label_area_size(self.px(60));
        if !self.paper {
            b.caption(title, ("sans-serif", self.px(22)));
        }
        b
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
pub fn svg(kind: PlotKind, runs: &[RunData], style: &PlotStyle) -> Result<String, PlotError> {
    init_fonts();
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, style.size_of(kind)).into_drawing_area();
        draw(kind, runs, &root, &style.look()).map_err(|msg| PlotError { plot: kind.name().into(), msg })?;
        root.present().map_err(|e| PlotError { plot: kind.name().into(), msg: e.to_string() })?;
    }
    Ok(buf)
}

/// Renders a plot to a PNG file.
pub fn png(kind: PlotKind, runs: &[RunData], style: &PlotStyle, path: &Path) -> Result<(), PlotError> {
    init_fonts();
    let err = |msg: String| PlotError { plot: kind.name().into(), msg };
    let root = BitMapBackend::new(path, style.size_of(kind)).into_drawing_area();
    draw(kind, runs, &root, &Look { bitmap: true, ..style.look() }).map_err(err)?;
    root.present().map_err(|e| err(format!("{}: {e}", path.display())))
}

/// Writes every plot of `runs` ([`PlotKind::for_runs`]) as SVG and PNG into `dir`
/// (created if needed); returns the files written.
pub fn write_plots(dir: &Path, runs: &[RunData], style: &PlotStyle) -> Result<Vec<PathBuf>, PlotError> {
    std::fs::create_dir_all(dir).map_err(|e| PlotError { plot: "*".into(), msg: format!("{}: {e}", dir.display()) })?;
    let mut files = Vec::new();
    for k in PlotKind::for_runs(runs) {
        let s = svg(k, runs, style)?;
        let p = dir.join(format!("{}.svg", k.name()));
        lahar_core::util::files::write_atomic(&p, s.as_bytes())
            .map_err(|e| PlotError { plot: k.name().into(), msg: format!("{}: {e}", p.display()) })?;
        files.push(p);
        let p = dir.join(format!("{}.png", k.name()));
        png(k, runs, style, &p)?;
        files.push(p);
    }
    Ok(files)
}

type Res = Result<(), String>;

fn e<T: std::fmt::Display>(x: T) -> String {
    x.to_string()
}

fn draw<DB: DrawingBackend>(kind: PlotKind, runs: &[RunData], root: &DrawingArea<DB, Shift>, look: &Look) -> Res {
    root.fill(&WHITE).map_err(e)?;
    let first = &runs[..1.min(runs.len())];
    match kind {
        PlotKind::JctCdf => lines::cdf(root, look, runs, kind.title(), "job completion time", |r| {
            r.jobs.iter().filter(|j| j.state == "Completed").filter_map(|j| j.jct_s).collect()
        }),
        PlotKind::WaitCdf => lines::cdf(root, look, runs, kind.title(), "queueing delay", |r| {
            r.jobs.iter().filter_map(|j| j.wait_s).collect()
        }),
        PlotKind::QueueJct => lines::queue_jct(root, look, first),
        PlotKind::Utilization => lines::utilization(root, look, runs),
        PlotKind::Jobs => lines::jobs(root, look, runs),
        PlotKind::QueueShare => lines::queue_share(root, look, first),
        PlotKind::GpuTime => lines::gpu_time(root, look, first),
        PlotKind::Placement if runs.len() > 1 => bars::placement_side_by_side(root, look, runs),
        PlotKind::Placement => bars::placement(root, look, first),
        PlotKind::QueueJctMean => bars::queue_jct_mean(root, look, runs),
        PlotKind::NodeTimeline => gantt::node_timeline(root, look, first),
        PlotKind::Faults => faults::timeline(root, look, first),
        PlotKind::Serving => serving::serving(root, look, first),
        PlotKind::DemandAllocation => {
            lines::against_demand(root, look, runs, kind.title(), "allocated GPUs (% of the cluster)", |p| {
                p.gpu_alloc_pct
            })
        }
        PlotKind::DemandFragmentation => {
            lines::against_demand(root, look, runs, kind.title(), "fragmented share of free GPUs (%)", |p| {
                p.frag_ratio_pct
            })
        }
    }
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

/// The unit of the runs' simulated time.
fn time_unit(runs: &[RunData]) -> (f64, &'static str) {
    let max = runs.iter().filter_map(|r| r.ts.t.last().copied()).fold(0.0f64, f64::max);
    duration_unit(max)
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

/// Draws a line through `pts`, dashed when `dash` is given. A solid line wider than a pixel
/// in a bitmap is drawn segment by segment: plotters joins a polyline's thick
/// segments with mitres that overshoot far at sharp turns (out of the frame).
fn line<DB: DrawingBackend, CT: plotters::coord::CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'_, DB, CT>,
    look: &Look,
    pts: Vec<(f64, f64)>,
    style: ShapeStyle,
    dash: Option<(u32, u32)>,
) -> Res {
    match dash {
        Some((d, g)) => chart.draw_series(DashedLineSeries::new(pts, d, g, style)).map(|_| ()),
        None if look.bitmap && style.stroke_width > 1 => {
            chart.draw_series(pts.windows(2).map(|w| PathElement::new(vec![w[0], w[1]], style))).map(|_| ())
        }
        None => chart.draw_series(LineSeries::new(pts, style)).map(|_| ()),
    }
    .map_err(e)
}

/// A legend entry.
struct Entry {
    label: String,
    color: RGBColor,
    /// Dash and gap (pixels), `None` for a solid line.
    dash: Option<(u32, u32)>,
    /// Line width (pixels).
    width: u32,
    /// How the entry is marked.
    mark: Mark,
}

/// The mark of a legend entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mark {
    /// A line (with the entry's dash).
    Line,
    /// A filled box (bars, areas).
    Box,
    /// A dot (points).
    Dot,
}

impl Entry {
    fn line(label: impl Into<String>, color: RGBColor, dash: Option<(u32, u32)>, width: u32) -> Entry {
        Entry { label: label.into(), color, dash, width, mark: Mark::Line }
    }
    fn boxed(label: impl Into<String>, color: RGBColor) -> Entry {
        Entry { label: label.into(), color, dash: None, width: 0, mark: Mark::Box }
    }
}

/// Splits a strip off the bottom of `root` for `n` legend entries, two per row: a
/// legend sits under its chart and never covers data.
fn legend_split<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    look: &Look,
    n: usize,
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    let rows = n.div_ceil(2) as u32;
    let h = root.dim_in_pixel().1;
    root.split_vertically(h.saturating_sub(rows * look.px(22) + look.px(8)))
}

/// Draws the entries into the strip `legend_split` made.
fn draw_legend<DB: DrawingBackend>(strip: &DrawingArea<DB, Shift>, look: &Look, entries: &[Entry]) -> Res {
    let w = strip.dim_in_pixel().0 as i32;
    let row = look.px(22) as i32;
    let left = look.pxi(75);
    let mark = look.pxi(24);
    for (k, en) in entries.iter().enumerate() {
        let (col, r) = ((k % 2) as i32, (k / 2) as i32);
        let x = left + col * (w - left) / 2;
        let y = r * row + row / 2;
        if en.mark == Mark::Box {
            // A box as one thick stroke: a legend mark is a two-point line.
            let style = en.color.stroke_width(look.px(12));
            strip.draw(&PathElement::new(vec![(x, y), (x + mark, y)], style)).map_err(e)?;
        } else if en.mark == Mark::Dot {
            strip.draw(&Circle::new((x + mark / 2, y), look.px(4), en.color.filled())).map_err(e)?;
        } else {
            let style = en.color.stroke_width(en.width);
            match en.dash {
                None => strip.draw(&PathElement::new(vec![(x, y), (x + mark, y)], style)).map_err(e)?,
                Some((d, g)) => {
                    let (d, g) = (d as i32, g as i32);
                    let mut a = 0;
                    while a < mark {
                        let b = (a + d).min(mark);
                        strip.draw(&PathElement::new(vec![(x + a, y), (x + b, y)], style)).map_err(e)?;
                        a = b + g;
                    }
                }
            }
        }
        let text = Text::new(en.label.clone(), (x + mark + look.pxi(8), y - look.pxi(8)), ("sans-serif", look.font));
        strip.draw(&text).map_err(e)?;
    }
    Ok(())
}

/// The axes of a chart of rows (y from 0 to `names.len()`): its mesh, and
/// `names[i]` left of row `i`, centered at `rows - i - 0.5` (the first row at
/// the top), in a smaller font when rows are dense.
fn rows_axes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    look: &Look,
    xdesc: &str,
    ydesc: &str,
    names: &[&str],
) -> Res {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    chart
        .configure_mesh()
        .x_desc(xdesc)
        .y_desc(ydesc)
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|_| String::new())
        .label_style(("sans-serif", look.font))
        .axis_desc_style(("sans-serif", look.desc()))
        .draw()
        .map_err(e)?;
    let rows = names.len();
    let (_, y0) = chart.backend_coord(&(chart.x_range().start, rows as f64));
    let (_, y1) = chart.backend_coord(&(chart.x_range().start, 0.0));
    let row_px = (y1 - y0).unsigned_abs() / rows.max(1) as u32;
    let size = look.font.min(row_px.saturating_sub(1)).max(6);
    let style = TextStyle::from(("sans-serif", size)).pos(Pos::new(HPos::Right, VPos::Center));
    let (bx, by) = area.get_base_pixel();
    for (i, name) in names.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(chart.x_range().start, rows as f64 - i as f64 - 0.5));
        area.draw(&Text::new(name.to_string(), (x - bx - look.pxi(6), y - by), style.clone())).map_err(e)?;
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
