//! The faults timeline: above, the GPUs outages and drains take and the GPUs
//! held by jobs making no progress, over time; below, each outage or drain as a
//! bar from its start to its end, with the pods it killed or evicted.

use super::{Entry, Look, PlotKind, Res, color, draw_legend, e, fmt_num, legend_split, thin};
use crate::load::{EventRecord, RunData};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Outage rows drawn at most (the first by start).
pub const FAULT_ROWS: usize = 40;

/// One outage or drain: scope, target, start, end (`None`: not over when the
/// run ended), pods killed or evicted (instant, count).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Outage {
    pub scope: String,
    pub target: String,
    pub start: f64,
    pub end: Option<f64>,
    pub kills: Vec<(f64, f64)>,
}

/// Pairs each `fail` with the next `repair`, and each `cordon` with the next
/// `uncordon`, of the same scope, target and cause; an `evict` belongs to its
/// open drain. In order of start.
pub(crate) fn outages(events: &[EventRecord]) -> Vec<Outage> {
    let mut out: Vec<Outage> = Vec::new();
    let mut open: Vec<(usize, &str)> = Vec::new();
    let key =
        |o: &Outage, cause: &str, ev: &EventRecord| o.scope == ev.scope && o.target == ev.target && cause == ev.cause;
    for ev in events {
        match ev.event.as_str() {
            "fail" | "cordon" => {
                let kills = if ev.pods > 0.0 { vec![(ev.t, ev.pods)] } else { Vec::new() };
                out.push(Outage { scope: ev.scope.clone(), target: ev.target.clone(), start: ev.t, end: None, kills });
                open.push((out.len() - 1, ev.cause.as_str()));
            }
            "repair" | "uncordon" | "evict" => {
                if let Some(k) = open.iter().position(|&(i, c)| key(&out[i], c, ev)) {
                    let i = open[k].0;
                    if ev.event == "evict" {
                        if ev.pods > 0.0 {
                            out[i].kills.push((ev.t, ev.pods));
                        }
                    } else {
                        out[i].end = Some(ev.t);
                        open.remove(k);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn scope_color(scope: &str) -> RGBColor {
    match scope {
        "node" => color(3),
        "gpu" => color(1),
        "switch" => color(4),
        _ => color(0),
    }
}

/// The faults timeline of one run.
pub(super) fn timeline(root: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, runs: &[RunData]) -> Res {
    let Some(r) = runs.first() else { return Ok(()) };
    let Some(events) = r.events.as_ref().filter(|e| !e.is_empty()) else { return Ok(()) };
    let horizon = r
        .summary
        .pointer("/metrics/sim_time_s")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0)
        .max(events.iter().map(|e| e.t).fold(0.0, f64::max));
    let (unit, uname) = super::duration_unit(horizon);
    let tmax = (horizon / unit).max(1e-9);
    let all = outages(events);
    let scopes: Vec<&str> =
        ["node", "gpu", "switch", "drain"].into_iter().filter(|s| all.iter().any(|o| o.scope == *s)).collect();
    let (root, strip) = legend_split(root, look, 2 + scopes.len() + 1);
    let area = if look.paper {
        root.clone()
    } else {
        root.titled(PlotKind::Faults.title(), ("sans-serif", look.px(22))).map_err(e)?
    };
    let h = area.dim_in_pixel().1;
    let (upper, lower) = area.split_vertically(h * 2 / 5);

    // Above: timeseries.csv's GPUs unavailable and held without progress, % of
    // the cluster's.
    let t: Vec<f64> = r.ts.t.iter().map(|x| x / unit).collect();
    let pct = |v: &Option<Vec<f64>>| -> Vec<f64> {
        let Some(v) = v else { return Vec::new() };
        v.iter()
            .zip(&r.ts.total)
            .map(|(a, tt)| if *tt > 0.0 { (100.0 * a / tt).clamp(0.0, 100.0) } else { 0.0 })
            .collect()
    };
    let (unavailable, stalled) = (pct(&r.ts.unavailable), pct(&r.ts.stalled));
    let steps = thin(&t, &unavailable);
    let top = unavailable.iter().chain(stalled.iter()).copied().fold(1.0f64, f64::max);
    let ymax = (top * 1.15).min(105.0);
    let mut chart = ChartBuilder::on(&upper)
        .margin(look.px(10))
        .x_label_area_size(look.px(10))
        .y_label_area_size(look.px(125))
        .build_cartesian_2d(0.0..tmax, 0.0..ymax)
        .map_err(e)?;
    chart
        .configure_mesh()
        .y_desc("% of GPUs")
        .y_labels(5)
        .x_label_formatter(&|_| String::new())
        .y_label_formatter(&|v| format!("{}%", fmt_num(*v)))
        .label_style(("sans-serif", look.font))
        .axis_desc_style(("sans-serif", look.desc()))
        .draw()
        .map_err(e)?;
    let cu = color(3);
    super::line(&mut chart, look, steps, cu.stroke_width(look.line()), None)?;
    let cs = color(1);
    let dash = (look.px(6), look.px(4));
    if !stalled.is_empty() {
        super::line(&mut chart, look, thin(&t, &stalled), cs.stroke_width(look.line()), Some(dash))?;
    }

    // Below: an outage a row, the first at the top.
    let shown = &all[..all.len().min(FAULT_ROWS)];
    let rows = shown.len().max(1);
    let mut chart = ChartBuilder::on(&lower)
        .margin(look.px(10))
        .x_label_area_size(look.px(50))
        .y_label_area_size(look.px(125))
        .build_cartesian_2d(0.0..tmax, 0.0..rows as f64)
        .map_err(e)?;
    let names: Vec<String> = shown.iter().map(|o| format!("{} {}", o.scope, o.target)).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let ydesc = if all.len() > shown.len() {
        format!("outage (the first {} of {})", shown.len(), all.len())
    } else {
        "outage or drain".to_string()
    };
    super::rows_axes(&lower, &mut chart, look, &format!("simulated time ({uname})"), &ydesc, &names)?;
    // A bar is at least three pixels wide.
    let px = 3.0 * tmax / lower.dim_in_pixel().0.max(1) as f64;
    for (i, o) in shown.iter().enumerate() {
        let c = rows as f64 - i as f64 - 0.5;
        let a = (o.start / unit).clamp(0.0, tmax);
        let b = (o.end.unwrap_or(horizon) / unit).clamp(0.0, tmax).max((a + px).min(tmax));
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a, c - 0.35), (b, c + 0.35)],
                scope_color(&o.scope).filled(),
            )))
            .map_err(e)?;
        let marks =
            o.kills.iter().map(|&(t, _)| Circle::new(((t / unit).clamp(0.0, tmax), c), look.px(3), BLACK.filled()));
        chart.draw_series(marks).map_err(e)?;
    }

    let mut entries = vec![
        Entry::line("GPUs unavailable", cu, None, look.line()),
        Entry::line("GPUs held without progress", cs, Some(dash), look.line()),
    ];
    for s in &scopes {
        let what = match *s {
            "node" => "node down",
            "gpu" => "GPU down",
            "switch" => "switch down",
            _ => "drain (cordoned)",
        };
        entries.push(Entry::boxed(what, scope_color(s)));
    }
    entries.push(Entry { mark: super::Mark::Dot, ..Entry::boxed("pods killed or evicted", BLACK) });
    draw_legend(&strip, look, &entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: f64, event: &str, scope: &str, target: &str, gpus: f64, pods: f64, cause: &str) -> EventRecord {
        EventRecord {
            t,
            event: event.into(),
            scope: scope.into(),
            target: target.into(),
            gpus,
            pods,
            cause: cause.into(),
        }
    }

    /// Each repair closes the outage of its own target and cause; a drain's
    /// evictions are marked on it; an outage not repaired stays open.
    #[test]
    fn events_pair_into_outages() {
        let evs = [
            ev(1.0, "fail", "node", "n1", 8.0, 2.0, "r"),
            ev(2.0, "fail", "gpu", "n1", 1.0, 0.0, "g"),
            ev(3.0, "cordon", "drain", "n2 (+1)", 16.0, 0.0, "drains[0]"),
            ev(4.0, "repair", "gpu", "n1", 1.0, 0.0, "g"),
            ev(5.0, "evict", "drain", "n2 (+1)", 0.0, 3.0, "drains[0]"),
            ev(6.0, "uncordon", "drain", "n2 (+1)", 16.0, 0.0, "drains[0]"),
        ];
        let o = outages(&evs);
        assert_eq!(o.len(), 3);
        assert_eq!((o[0].start, o[0].end, o[0].kills.clone()), (1.0, None, vec![(1.0, 2.0)]));
        assert_eq!((o[1].scope.as_str(), o[1].end), ("gpu", Some(4.0)));
        assert_eq!((o[2].end, o[2].kills.clone()), (Some(6.0), vec![(5.0, 3.0)]));
    }
}
