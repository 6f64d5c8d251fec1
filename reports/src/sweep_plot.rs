//! A sweep's plot: one metric against one numeric axis, a line per combination of
//! the other axes' values, each with its 95% confidence band (over seeds).

use crate::plots::{PALETTE, PlotError, init_fonts};
use plotters::prelude::*;

/// One line: legend label and points (x, mean, 95% half-width).
pub type Line = (String, Vec<(f64, f64, Option<f64>)>);

/// Plot size (pixels).
pub const SIZE: (u32, u32) = (900, 560);

/// Renders the plot as SVG.
pub fn svg(title: &str, x_label: &str, y_label: &str, lines: &[Line]) -> Result<String, PlotError> {
    init_fonts();
    let err = |msg: String| PlotError { plot: title.to_string(), msg };
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        draw(&root, title, x_label, y_label, lines).map_err(err)?;
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(buf)
}

/// Renders the plot as a PNG file.
pub fn png(path: &std::path::Path, title: &str, x_label: &str, y_label: &str, lines: &[Line]) -> Result<(), PlotError> {
    init_fonts();
    let err = |msg: String| PlotError { plot: title.to_string(), msg };
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    draw(&root, title, x_label, y_label, lines).map_err(err)?;
    root.present().map_err(|e| err(format!("{}: {e}", path.display())))
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
/// the fewest points, so the legend hides the fewest; upper right on ties.
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
            .filter(|&&(x, y, _)| {
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
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[Line],
) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let pts = lines.iter().flat_map(|l| l.1.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y, c) in pts {
        let c = c.unwrap_or(0.0);
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y - c);
        y1 = y1.max(y + c);
    }
    let (x0, x1) = span(x0, x1);
    let (y0, y1) = span(y0, y1);
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(|x| e(&x))?;
    for (i, (label, p)) in lines.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        // The band: upper edge forward, lower edge back.
        if p.len() > 1 && p.iter().all(|q| q.2.is_some()) {
            let mut poly: Vec<(f64, f64)> = p.iter().map(|&(x, y, ci)| (x, y + ci.unwrap_or(0.0))).collect();
            poly.extend(p.iter().rev().map(|&(x, y, ci)| (x, y - ci.unwrap_or(0.0))));
            chart.draw_series(std::iter::once(Polygon::new(poly, c.mix(0.18).filled()))).map_err(|x| e(&x))?;
        }
        let name = if label.is_empty() { y_label.to_string() } else { label.clone() };
        chart
            .draw_series(LineSeries::new(p.iter().map(|&(x, y, _)| (x, y)), c.stroke_width(2)))
            .map_err(|x| e(&x))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        chart.draw_series(p.iter().map(|&(x, y, _)| Circle::new((x, y), 3, c.filled()))).map_err(|x| e(&x))?;
    }
    chart
        .configure_series_labels()
        .position(legend_corner(lines, (x0, x1), (y0, y1)))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.4))
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|x| e(&x))
}
