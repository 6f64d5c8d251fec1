//! A sweep's plot: one metric against one numeric axis, a line per combination of
//! the other axes' values, each with its 95% confidence band (over seeds).

use crate::plots::{Look, PALETTE, PlotError, PlotStyle, init_fonts};
use plotters::prelude::*;

/// One line: legend label and points (x, mean, 95% half-width).
pub type Line = (String, Vec<(f64, f64, Option<f64>)>);

/// Plot size on screen (pixels).
pub const SIZE: (u32, u32) = (900, 560);
/// Plot size for a paper (pixels: 3.5 in at 300 dpi).
pub const PAPER_SIZE: (u32, u32) = (1050, 700);

fn size(style: &PlotStyle) -> (u32, u32) {
    style.size.unwrap_or(if style.paper { PAPER_SIZE } else { SIZE })
}

/// The values a metric can take (`lo..=hi`, either end infinite when open): a 95%
/// band is drawn clipped to it (a share never below 0 nor above 100%).
pub type Range = (f64, f64);

/// Any value.
pub const ANY: Range = (f64::NEG_INFINITY, f64::INFINITY);

/// What a sweep plot shows: its title, axis names and lines, and the values its
/// metric can take.
#[derive(Clone, Copy, Debug)]
pub struct SweepPlot<'a> {
    /// Title (not drawn in the paper style).
    pub title: &'a str,
    /// The x axis's name.
    pub x_label: &'a str,
    /// The metric's name.
    pub y_label: &'a str,
    /// The lines.
    pub lines: &'a [Line],
    /// The metric's range ([`ANY`] if unbounded).
    pub range: Range,
    /// Per line and point, whether the point's cells left jobs unfinished: such a
    /// point is drawn hollow and the legend says why. Empty: none flagged.
    pub unfinished: &'a [Vec<bool>],
}

/// Renders the plot as SVG.
pub fn svg(title: &str, x_label: &str, y_label: &str, lines: &[Line]) -> Result<String, PlotError> {
    svg_in(&SweepPlot { title, x_label, y_label, lines, range: ANY, unfinished: &[] }, &PlotStyle::default())
}

/// [`svg`] of a plot in `style`.
pub fn svg_in(p: &SweepPlot, style: &PlotStyle) -> Result<String, PlotError> {
    init_fonts();
    let err = |msg: String| PlotError { plot: p.title.to_string(), msg };
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, size(style)).into_drawing_area();
        draw(&root, p, &style.look()).map_err(err)?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(buf)
}

/// Renders the plot as a PNG file.
pub fn png(path: &std::path::Path, title: &str, x_label: &str, y_label: &str, lines: &[Line]) -> Result<(), PlotError> {
    png_in(path, &SweepPlot { title, x_label, y_label, lines, range: ANY, unfinished: &[] }, &PlotStyle::default())
}

/// [`png`] of a plot in `style`.
pub fn png_in(path: &std::path::Path, p: &SweepPlot, style: &PlotStyle) -> Result<(), PlotError> {
    init_fonts();
    let err = |msg: String| PlotError { plot: p.title.to_string(), msg };
    let root = BitMapBackend::new(path, size(style)).into_drawing_area();
    draw(&root, p, &style.look()).map_err(err)?;
    root.present().map_err(|e| err(format!("{}: {e}", path.display())))
}

/// A line's 95% band as a polygon (upper edge forward, lower edge back), clipped
/// to `range`; none unless every point has a band.
fn band(p: &[(f64, f64, Option<f64>)], (lo, hi): Range) -> Option<Vec<(f64, f64)>> {
    if p.len() < 2 || p.iter().any(|q| q.2.is_none()) {
        return None;
    }
    let clip = |y: f64| y.clamp(lo, hi);
    let mut poly: Vec<(f64, f64)> = p.iter().map(|&(x, y, c)| (x, clip(y + c.unwrap_or(0.0)))).collect();
    poly.extend(p.iter().rev().map(|&(x, y, c)| (x, clip(y - c.unwrap_or(0.0)))));
    Some(poly)
}

/// The axes' spans: every point and band edge (clipped to `range`), padded; the
/// y axis not past an end of `range` that no value reaches beyond.
fn spans(lines: &[Line], range: Range) -> ((f64, f64), (f64, f64)) {
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y, c) in lines.iter().flat_map(|l| l.1.iter()) {
        let c = c.unwrap_or(0.0);
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min((y - c).clamp(range.0, range.1));
        y1 = y1.max((y + c).clamp(range.0, range.1));
    }
    let (y0p, y1p) = span(y0, y1);
    // Padding may show a little beyond a bound, never a tick far past it.
    let pad = (y1p - y1).max(0.0);
    let y_lo = if y0 >= range.0 && y0p < range.0 { (range.0 - pad).max(y0p) } else { y0p };
    let y_hi = if y1 <= range.1 && y1p > range.1 { (range.1 + pad).min(y1p) } else { y1p };
    // Every value on a bound (no job unfinished anywhere): the axis starts (or
    // ends) there instead of showing as much beyond it as inside.
    let y = if y0 == y1 && y0 == range.0 {
        (range.0, y1p + (range.0 - y0p))
    } else if y0 == y1 && y1 == range.1 {
        (y0p - (y1p - range.1), range.1)
    } else {
        (y_lo, y_hi)
    };
    (span(x0, x1), y)
}

fn span(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi > lo {
        let pad = (hi - lo) * 0.05;
        (lo - pad, hi + pad)
    } else {
        let pad = lo.abs().max(1.0) * 0.1;
        (lo - pad, hi + pad)
    }
}

/// The corner whose box (a third of the width, two fifths of the height) holds
/// the fewest points and band edges, so the legend hides the fewest; upper right
/// on ties.
fn legend_corner(lines: &[Line], (x0, x1): (f64, f64), (y0, y1): (f64, f64)) -> SeriesLabelPosition {
    let (w, h) = ((x1 - x0) / 3.0, (y1 - y0) * 0.4);
    let corners = [
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::LowerRight, true, false),
        (SeriesLabelPosition::LowerLeft, false, false),
    ];
    let inside = |right: bool, upper: bool| {
        lines
            .iter()
            .flat_map(|l| l.1.iter())
            .flat_map(|&(x, y, c)| {
                let c = c.unwrap_or(0.0);
                [(x, y), (x, y + c), (x, y - c)]
            })
            .filter(|&(x, y)| {
                let in_x = if right { x >= x1 - w } else { x <= x0 + w };
                let in_y = if upper { y >= y1 - h } else { y <= y0 + h };
                in_x && in_y
            })
            .count()
    };
    let mut best = (usize::MAX, SeriesLabelPosition::UpperRight);
    for (pos, right, upper) in corners {
        let n = inside(right, upper);
        if n < best.0 {
            best = (n, pos);
        }
    }
    best.1
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    p: &SweepPlot,
    look: &Look,
) -> Result<(), String> {
    let (x_label, y_label, lines, range, unfinished) = (p.x_label, p.y_label, p.lines, p.range, p.unfinished);
    let e = |x: &dyn std::fmt::Display| x.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let ((x0, x1), (y0, y1)) = spans(lines, range);
    let mut chart = look
        .chart(root, p.title)
        .y_label_area_size(look.px(70))
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|x| e(&x))?;
    // Axes of whole numbers (node counts, job counts) are ticked at whole numbers
    // only, and no label carries a `.0`.
    let whole_x = lines.iter().flat_map(|l| l.1.iter()).all(|p| p.0.fract() == 0.0);
    let x_ticks = if whole_x { ((x1 - x0).floor() as usize + 1).clamp(2, 12) } else { 10 };
    let x_fmt = |v: &f64| if whole_x && v.fract() != 0.0 { String::new() } else { crate::plots::fmt_num(*v) };
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_labels(x_ticks)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&|v| crate::plots::fmt_num(*v))
        .label_style(("sans-serif", look.font))
        .axis_desc_style(("sans-serif", look.desc()))
        .draw()
        .map_err(|x| e(&x))?;
    let w = look.line();
    for (i, (label, p)) in lines.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        if let Some(poly) = band(p, range) {
            chart.draw_series(std::iter::once(Polygon::new(poly, c.mix(0.18).filled()))).map_err(|x| e(&x))?;
        }
        let name = if label.is_empty() { y_label.to_string() } else { label.clone() };
        let pts = p.iter().map(|&(x, y, _)| (x, y));
        // Lines after the first are dashed, each with its own pattern, so a line
        // drawn over an equal one leaves it visible between its dashes.
        let dash = look.dash(i);
        let series = match dash {
            None => chart.draw_series(LineSeries::new(pts, c.stroke_width(w))),
            Some((d, g)) => chart.draw_series(DashedLineSeries::new(pts, d, g, c.stroke_width(w))),
        };
        // The legend's mark (as wide as plotters leaves before the label) shows
        // the line's dash: up to three dashes, or one line.
        let width = look.pxi(18);
        series.map_err(|x| e(&x))?.label(name).legend(move |(x, y)| {
            let (d, g) = dash.map_or((width, 0), |(d, g)| (d as i32, g as i32));
            let seg = |k: i32| {
                let a = (k * (d + g)).min(width);
                PathElement::new(vec![(a, 0), ((a + d).min(width), 0)], c.stroke_width(w))
            };
            EmptyElement::at((x, y)) + seg(0) + seg(1) + seg(2)
        });
        let open = |j: usize| unfinished.get(i).and_then(|v| v.get(j)).copied().unwrap_or(false);
        chart
            .draw_series(p.iter().enumerate().map(|(j, &(x, y, _))| {
                // A point whose cells left jobs unfinished is hollow.
                let (inner, size) = if open(j) { (WHITE.filled(), look.px(2)) } else { (c.filled(), look.px(3)) };
                EmptyElement::at((x, y))
                    + Circle::new((0, 0), look.px(4), c.filled())
                    + Circle::new((0, 0), size, inner)
            }))
            .map_err(|x| e(&x))?;
    }
    if unfinished.iter().flatten().any(|&o| o) {
        // The legend's last entry: what a hollow point means.
        chart
            .draw_series(std::iter::empty::<Circle<(f64, f64), u32>>())
            .map_err(|x| e(&x))?
            .label("hollow: cells with unfinished jobs (not in the mean)")
            .legend(move |(x, y)| {
                EmptyElement::at((x + look.pxi(12), y))
                    + Circle::new((0, 0), look.px(4), BLACK.filled())
                    + Circle::new((0, 0), look.px(2), WHITE.filled())
            });
    }
    chart
        .configure_series_labels()
        .position(legend_corner(lines, (x0, x1), (y0, y1)))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", look.font))
        .draw()
        .map_err(|x| e(&x))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A goodput near 100% with a wide band: the band stops at 100 and 0, and the
    /// axis goes no further than a little padding past 100.
    #[test]
    fn bands_stay_in_the_metric_s_range() {
        let lines: Vec<Line> =
            vec![("a".into(), vec![(0.25, 99.3, Some(1.9)), (0.5, 98.3, Some(2.9)), (1.0, 2.0, Some(5.0))])];
        let poly = band(&lines[0].1, (0.0, 100.0)).expect("a band");
        assert!(poly.iter().all(|&(_, y)| (0.0..=100.0).contains(&y)), "{poly:?}");
        assert_eq!(poly[0].1, 100.0);
        assert_eq!(poly.last().unwrap().1, 99.3 - 1.9);
        assert_eq!(poly[3].1, 0.0, "the lower edge at x = 1 is clipped at 0");
        let (_, (y0, y1)) = spans(&lines, (0.0, 100.0));
        assert!((-5.0..0.0).contains(&y0) && y1 > 100.0 && y1 <= 105.0, "{y0}..{y1}");
        // Unbounded: the band as computed.
        let open = band(&lines[0].1, ANY).unwrap();
        assert_eq!(open[0].1, 99.3 + 1.9);
        assert_eq!(open[3].1, 2.0 - 5.0);
        assert!(band(&[(0.0, 1.0, Some(0.1))], ANY).is_none(), "one point draws no band");
    }

    /// No job unfinished in any cell: the axis starts at 0, not at −0.1.
    #[test]
    fn a_metric_at_its_bound_everywhere_starts_the_axis_there() {
        let zero: Vec<Line> = vec![("a".into(), vec![(0.25, 0.0, Some(0.0)), (1.0, 0.0, Some(0.0))])];
        assert_eq!(spans(&zero, (0.0, 400.0)).1, (0.0, 0.2));
        let full: Vec<Line> = vec![("a".into(), vec![(0.25, 100.0, Some(0.0)), (1.0, 100.0, Some(0.0))])];
        assert_eq!(spans(&full, (0.0, 100.0)).1, (80.0, 100.0));
        assert_eq!(spans(&zero, ANY).1, (-0.1, 0.1), "no bound: padded both ways");
    }

    /// The legend goes where neither points nor bands are: with a band over the
    /// upper right, a corner below.
    #[test]
    fn the_legend_avoids_bands() {
        let lines: Vec<Line> = vec![("a".into(), vec![(0.0, 5.0, Some(0.0)), (1.0, 5.0, Some(5.0))])];
        let ((x0, x1), (y0, y1)) = spans(&lines, ANY);
        let at = legend_corner(&lines, (x0, x1), (y0, y1));
        assert!(matches!(at, SeriesLabelPosition::UpperLeft), "{:?}", std::mem::discriminant(&at));
    }
}
