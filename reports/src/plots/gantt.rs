//! The per-node timeline (a Gantt chart): each node a row, each pod a bar over
//! the time it held the node, as tall as its GPUs, colored by its job's queue.

use super::{Entry, Look, PlotKind, Res, color, draw_legend, e, legend_split};
use crate::load::{PodRecord, RunData};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::cmp::Ordering;

/// Rows drawn at most: the first nodes by name (natural order: `n2` before `n10`).
pub const NODE_ROWS: usize = 48;

/// Orders names by their text with each run of digits compared as a number.
pub(crate) fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, _) => return Ordering::Less,
            (_, None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let dx = x.iter().take_while(|c| c.is_ascii_digit()).count();
                let dy = y.iter().take_while(|c| c.is_ascii_digit()).count();
                let (nx, ny) = (trim_zeros(&x[..dx]), trim_zeros(&y[..dy]));
                let o = nx.len().cmp(&ny.len()).then_with(|| nx.cmp(ny));
                if o != Ordering::Equal {
                    return o;
                }
                (x, y) = (&x[dx..], &y[dy..]);
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

fn trim_zeros(d: &[u8]) -> &[u8] {
    let k = d.iter().take_while(|&&c| c == b'0').count().min(d.len().saturating_sub(1));
    &d[k..]
}

/// A bar on one lane: from, to (s), queue index (the last: no known job).
type Bar = (f64, f64, usize);

/// Assigns the pods of one node to lanes, as a first-fit device allocator would:
/// each pod takes `units` lanes free at its start (the lowest first), new lanes
/// opened when too few are free. Returns the lanes' bars.
fn lanes(pods: &[(&PodRecord, usize)], horizon: f64, by_gpu: bool) -> Vec<Vec<Bar>> {
    let mut order: Vec<usize> = (0..pods.len()).collect();
    order.sort_by(|&a, &b| pods[a].0.start.total_cmp(&pods[b].0.start).then(a.cmp(&b)));
    let mut busy: Vec<f64> = Vec::new();
    let mut bars: Vec<Vec<Bar>> = Vec::new();
    for i in order {
        let (p, q) = pods[i];
        let end = p.end.unwrap_or(horizon).max(p.start);
        let units = if by_gpu { (p.gpus.ceil() as usize).max(1) } else { 1 };
        let mut taken = 0;
        for (l, until) in busy.iter_mut().enumerate() {
            if taken == units {
                break;
            }
            if *until <= p.start {
                *until = end;
                bars[l].push((p.start, end, q));
                taken += 1;
            }
        }
        while taken < units {
            busy.push(end);
            bars.push(vec![(p.start, end, q)]);
            taken += 1;
        }
    }
    bars
}

/// Merges a lane's bars to the plot's resolution: bars of one queue that meet
/// within `px` seconds become one; a bar narrower than that is widened to it.
fn at_resolution(bars: &[Bar], px: f64) -> Vec<Bar> {
    let mut out: Vec<Bar> = Vec::new();
    for &(a, b, q) in bars {
        let b = b.max(a + px);
        match out.last().copied() {
            Some((_, end, lq)) if lq == q && a <= end + px => {
                if let Some(last) = out.last_mut() {
                    last.1 = end.max(b);
                }
            }
            // Another queue within the last bar's pixel: starts after it.
            Some((_, end, _)) if a < end => {
                if b > end {
                    out.push((end, b, q));
                }
            }
            _ => out.push((a, b, q)),
        }
    }
    out
}

/// The node timeline of one run.
pub(super) fn node_timeline(root: &DrawingArea<impl DrawingBackend, Shift>, look: &Look, runs: &[RunData]) -> Res {
    let Some(r) = runs.first() else { return Ok(()) };
    let Some(pods) = r.pods.as_ref().filter(|p| !p.rows.is_empty()) else { return Ok(()) };
    let horizon = r
        .summary
        .pointer("/metrics/sim_time_s")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0)
        .max(pods.rows.iter().map(|p| p.end.unwrap_or(p.start)).fold(0.0, f64::max));
    let (unit, uname) = super::duration_unit(horizon);
    let by_gpu = r.metric("/gpus_total").is_some_and(|g| g > 0.0);

    let queues: Vec<&str> = {
        let s: std::collections::BTreeSet<&str> = r.jobs.iter().map(|j| j.queue.as_str()).collect();
        s.into_iter().collect()
    };
    let unknown = queues.len();
    let queue_of = |p: &PodRecord| -> usize {
        p.job
            .and_then(|j| r.jobs.get(j as usize))
            .and_then(|j| queues.binary_search(&j.queue.as_str()).ok())
            .unwrap_or(unknown)
    };
    let mut order: Vec<usize> = (0..pods.nodes.len()).collect();
    order.sort_by(|&a, &b| natural_cmp(&pods.nodes[a], &pods.nodes[b]));
    order.truncate(NODE_ROWS);
    let mut row_of = vec![usize::MAX; pods.nodes.len()];
    for (i, &n) in order.iter().enumerate() {
        row_of[n] = i;
    }
    let rows = order.len();
    let mut per_row: Vec<Vec<(&PodRecord, usize)>> = vec![Vec::new(); rows];
    for p in &pods.rows {
        if let Some(v) = per_row.get_mut(row_of[p.node as usize]) {
            v.push((p, queue_of(p)));
        }
    }
    let has_unknown = per_row.iter().flatten().any(|&(_, q)| q == unknown);

    let (root, strip) = legend_split(root, look, queues.len() + usize::from(has_unknown));
    let tmax = (horizon / unit).max(1e-9);
    let mut chart = look
        .chart(&root, PlotKind::NodeTimeline.title())
        .y_label_area_size(look.px(100))
        .build_cartesian_2d(0.0..tmax, 0.0..rows as f64)
        .map_err(e)?;
    let names: Vec<&str> = order.iter().map(|&n| pods.nodes[n].as_str()).collect();
    let ydesc = if pods.nodes.len() > rows {
        format!("node (the first {rows} of {} by name)", pods.nodes.len())
    } else {
        "node".to_string()
    };
    // Row i is drawn from the top: its center is at rows - i - 0.5.
    super::rows_axes(&root, &mut chart, look, &format!("simulated time ({uname})"), &ydesc, &names)?;
    // Seconds per pixel of the plotting area.
    let width_px = chart.plotting_area().dim_in_pixel().0.max(1) as f64;
    let px = horizon / width_px;
    let gray = RGBColor(150, 150, 150);
    let fill = |q: usize| if q == unknown { gray } else { color(q) };
    for (i, pods) in per_row.iter().enumerate() {
        let lanes = lanes(pods, horizon, by_gpu);
        let n = lanes.len().max(1) as f64;
        let top = rows as f64 - i as f64 - 0.1;
        let lh = 0.8 / n;
        for (l, bars) in lanes.iter().enumerate() {
            let y1 = top - l as f64 * lh;
            let y0 = y1 - lh * 0.9;
            let rects = at_resolution(bars, px).into_iter().map(|(a, b, q)| {
                let (a, b) = ((a / unit).clamp(0.0, tmax), (b / unit).clamp(0.0, tmax));
                Rectangle::new([(a, y0), (b, y1)], fill(q).filled())
            });
            chart.draw_series(rects).map_err(e)?;
        }
    }
    let mut entries: Vec<Entry> =
        queues.iter().enumerate().map(|(i, q)| Entry::boxed(format!("queue {q}"), color(i))).collect();
    if has_unknown {
        entries.push(Entry::boxed("job not in jobs.csv", gray));
    }
    draw_legend(&strip, look, &entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sort_by_their_numbers() {
        let mut v = vec!["h100-10", "h100-2", "h100-1", "a", "h100-02", "b7", "b10x", "b10"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["a", "b7", "b10", "b10x", "h100-1", "h100-02", "h100-2", "h100-10"]);
    }

    fn pod(gpus: f64, start: f64, end: Option<f64>) -> PodRecord {
        PodRecord { node: 0, job: None, gpus, start, end }
    }

    /// Two 4-GPU pods side by side, a third 8-GPU pod after them: 8 lanes, the
    /// third on all of them; a pod still running ends at the horizon.
    #[test]
    fn pods_take_the_lowest_free_lanes() {
        let (a, b, c) = (pod(4.0, 0.0, Some(10.0)), pod(4.0, 5.0, Some(20.0)), pod(8.0, 20.0, None));
        let ps = [(&a, 0), (&b, 1), (&c, 0)];
        let l = lanes(&ps, 30.0, true);
        assert_eq!(l.len(), 8);
        assert_eq!(l[0], vec![(0.0, 10.0, 0), (20.0, 30.0, 0)]);
        assert_eq!(l[4], vec![(5.0, 20.0, 1), (20.0, 30.0, 0)]);
        // Without GPUs, one lane a pod.
        assert_eq!(lanes(&ps, 30.0, false).len(), 2);
    }

    #[test]
    fn bars_merge_at_the_plot_s_resolution() {
        let bars = [(0.0, 1.0, 0), (1.5, 3.0, 0), (3.2, 3.3, 1), (10.0, 10.1, 1)];
        assert_eq!(at_resolution(&bars, 1.0), vec![(0.0, 3.0, 0), (3.2, 4.2, 1), (10.0, 11.0, 1)]);
    }
}
