//! Serving beside batch work: above, the cluster's GPUs by workload class over
//! time (held by services' pods, held by every other pod, stacked); below, the
//! services' demand against what their ready pods serve (services.csv summed
//! over the services with a demand), the gap between them the requests lost.

use super::{Entry, Look, PlotKind, Res, color, draw_legend, e, fmt_num, legend_split, thin};
use crate::load::RunData;
use plotters::coord::Shift;
use plotters::prelude::*;

/// GPUs per sample: (serving, batch), batch being the rest of the allocated.
pub(crate) fn by_class(allocated: &[f64], serving: &[f64]) -> Vec<(f64, f64)> {
    allocated.iter().zip(serving).map(|(&a, &s)| (s.clamp(0.0, a.max(0.0)), (a - s).max(0.0))).collect()
}

/// The serving plot of one run with `gpus_serving` in its timeseries.
pub(super) fn serving(root: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, runs: &[RunData]) -> Res {
    let Some(r) = runs.first() else { return Ok(()) };
    let Some(serving) = r.ts.serving.as_ref() else { return Ok(()) };
    let demand = r.demand.as_ref().filter(|d| !d.t.is_empty());
    let (unit, uname) = super::time_unit(runs);
    let tmax = (r.ts.t.last().copied().unwrap_or(0.0) / unit).max(1e-9);
    let (root, strip) = legend_split(root, look, 2 + if demand.is_some() { 2 } else { 0 });
    let area = if look.paper {
        root.clone()
    } else {
        root.titled(PlotKind::Serving.title(), ("sans-serif", look.px(22))).map_err(e)?
    };
    let h = area.dim_in_pixel().1;
    let (upper, lower) = if demand.is_some() { area.split_vertically(h * 11 / 20) } else { (area.clone(), area) };
    let xdesc = format!("simulated time ({uname})");

    // Above: GPUs by class, stacked (serving below, batch on top).
    let t: Vec<f64> = r.ts.t.iter().map(|x| x / unit).collect();
    let classes = by_class(&r.ts.allocated, serving);
    let s: Vec<f64> = classes.iter().map(|c| c.0).collect();
    let top: Vec<f64> = classes.iter().map(|c| c.0 + c.1).collect();
    let ymax = r.ts.total.iter().copied().fold(1.0f64, f64::max) * 1.05;
    let mut chart = ChartBuilder::on(&upper)
        .margin(look.px(10))
        .x_label_area_size(look.px(if demand.is_some() { 10 } else { 50 }))
        .y_label_area_size(look.px(80))
        .build_cartesian_2d(0.0..tmax, 0.0..ymax)
        .map_err(e)?;
    let mut mesh = chart.configure_mesh();
    mesh.y_desc("GPUs")
        .y_labels(5)
        .y_label_formatter(&|v| fmt_num(*v))
        .label_style(("sans-serif", look.font))
        .axis_desc_style(("sans-serif", look.desc()));
    if demand.is_some() {
        mesh.x_label_formatter(&|_| String::new());
    } else {
        mesh.x_desc(xdesc.as_str()).x_label_formatter(&|v| fmt_num(*v));
    }
    mesh.draw().map_err(e)?;
    let (cs, cb) = (color(3), color(0));
    chart.draw_series(AreaSeries::new(thin(&t, &top), 0.0, cb.mix(0.8).filled())).map_err(e)?;
    chart.draw_series(AreaSeries::new(thin(&t, &s), 0.0, cs.mix(0.9).filled())).map_err(e)?;
    let mut entries = vec![Entry::boxed("GPUs held by services", cs), Entry::boxed("GPUs held by other jobs", cb)];

    // Below: demand against capacity, requests per second.
    if let Some(d) = demand {
        let td: Vec<f64> = d.t.iter().map(|x| x / unit).collect();
        let ymax = d.demand.iter().chain(&d.capacity).copied().fold(1e-9f64, f64::max) * 1.1;
        let mut chart = ChartBuilder::on(&lower)
            .margin(look.px(10))
            .x_label_area_size(look.px(50))
            .y_label_area_size(look.px(80))
            .build_cartesian_2d(0.0..tmax, 0.0..ymax)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(xdesc.as_str())
            .y_desc(d.unit)
            .y_labels(5)
            .x_label_formatter(&|v| fmt_num(*v))
            .y_label_formatter(&|v| fmt_num(*v))
            .label_style(("sans-serif", look.font))
            .axis_desc_style(("sans-serif", look.desc()))
            .draw()
            .map_err(e)?;
        let (cd, cc) = (color(1), color(2));
        let dash = Some((look.px(6), look.px(4)));
        let w = look.line();
        super::line(&mut chart, look, thin(&td, &d.capacity), cc.stroke_width(w + look.px(1)), None)?;
        super::line(&mut chart, look, thin(&td, &d.demand), cd.stroke_width(w), dash)?;
        entries.push(Entry::line("demand", cd, dash, w));
        entries.push(Entry::line("capacity of ready replicas", cc, None, w + look.px(1)));
    }
    draw_legend(&strip, look, &entries)
}

#[cfg(test)]
mod tests {
    use super::by_class;

    /// Serving is what services hold; batch the rest of the allocated, never
    /// below 0, and serving never above the allocated.
    #[test]
    fn classes_split_the_allocated_gpus() {
        assert_eq!(
            by_class(&[8.0, 8.0, 2.0, 0.0], &[0.0, 3.0, 4.0, 0.0]),
            vec![(0.0, 8.0), (3.0, 5.0), (2.0, 0.0), (0.0, 0.0)]
        );
    }
}
