//! Running a placement scenario (`spec.placement`): the replay, its files and
//! its report.

use super::{PlacementReport, Setup};
use crate::scenario::Scenario;
use crate::{RunError, RunOptions};
use lahar_core::model::cluster::Node;
use lahar_policies::placement::demand::Arrival;
use lahar_policies::placement::replay::{Outcome, Row};
use lahar_reports::RunMeta;
use lahar_traces::openb::OpenbPod;
use serde::Serialize;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

/// summary.json's `metrics` block in placement mode.
#[derive(Serialize)]
struct Metrics<'a> {
    policy: &'a str,
    demand: f64,
    cluster_gpus: f64,
    pods_listed: usize,
    pods_arrived: usize,
    pods_placed: usize,
    pods_unplaced: usize,
    arrived_gpu_pct: f64,
    /// Allocated share of the cluster's GPUs at the end (as `gpu_allocation_rate`
    /// of a run in time: sweeps and `lahar compare` read it).
    gpu_allocation_rate: f64,
    /// Fragmented share of the free GPUs at the end.
    fragmentation: f64,
    fragmented_gpus: f64,
    typical_shapes: usize,
}

#[derive(Serialize)]
struct SummaryFile<'a> {
    #[serde(flatten)]
    meta: &'a RunMeta,
    metrics: Metrics<'a>,
    run: RunFacts,
}

#[derive(Serialize)]
struct RunFacts {
    wall_time_s: f64,
}

fn io_err(dir: &Path) -> impl Fn(std::io::Error) -> RunError + '_ {
    move |source| RunError::Write { dir: dir.to_path_buf(), source }
}

/// Runs a placement scenario and writes its files.
pub fn run(s: Scenario, opts: &RunOptions) -> Result<PlacementReport, RunError> {
    let p = s.placement.clone().expect("a placement scenario");
    // Options of a run in time are refused rather than ignored.
    let unused = [
        ("--explain", !opts.explain.is_empty()),
        ("--explain-window", opts.explain_window.is_some()),
        ("--exhaustive", opts.exhaustive),
        ("--sessions", opts.sessions.is_some()),
    ];
    if let Some((flag, _)) = unused.iter().find(|u| u.1) {
        let why = format!(
            "{flag} has no meaning for a placement scenario (`spec.placement`): pods never leave, no session runs"
        );
        return Err(RunError::Input(crate::scenario::ScenarioError::one("<command line>", None, flag, why)));
    }
    let out_dir = opts.out_dir.clone().unwrap_or_else(|| s.output_dir.clone());
    let started = Instant::now();
    let setup = Setup::new(&s.cluster.nodes, &p.pods).map_err(|e| {
        RunError::Input(crate::scenario::ScenarioError::one(&s.name, None, "spec.cluster", e.to_string()))
    })?;
    let arrivals = setup.arrivals(p.demand, p.order, s.seed);
    let io = io_err(&out_dir);
    let mut placements = None;
    if !opts.no_write {
        let by = crate::outdir::Claimant { scenario: Some(&s.name), force: opts.force };
        crate::outdir::claim(&out_dir, crate::outdir::Kind::Run, by)?;
        std::fs::write(out_dir.join(crate::INPUT_SCENARIO), &s.text).map_err(&io)?;
        let mut w = BufWriter::new(std::fs::File::create(out_dir.join(PLACEMENTS_CSV)).map_err(&io)?);
        w.write_all(b"pod,node,devices,cpu_milli,memory_mib,num_gpu,gpu_milli\n").map_err(&io)?;
        placements = Some(w);
    }
    let mut failure: Option<std::io::Error> = None;
    let mut k = 0usize;
    let mut placed = 0usize;
    let mut line = String::new();
    let (rows, _replay) = setup.replay(p.policy, s.seed, &arrivals, |out| {
        let a = arrivals[k];
        k += 1;
        if let Outcome::Placed { .. } = out {
            placed += 1;
        }
        let Some(w) = placements.as_mut().filter(|_| failure.is_none()) else { return };
        let pod = &p.pods[a.pod as usize];
        line.clear();
        pod_row(&mut line, pod, a, out, &s.cluster.nodes);
        if let Err(e) = w.write_all(line.as_bytes()) {
            failure = Some(e);
        }
    });
    if let Some(e) = failure {
        return Err(io(e));
    }
    if let Some(mut w) = placements {
        w.flush().map_err(&io)?;
    }
    let last = *rows.last().expect("the row at 0% is always there");
    let meta =
        RunMeta { wall_time_s: started.elapsed().as_secs_f64(), ..crate::run_meta(&s, p.policy.name().to_string()) };
    if !opts.no_write {
        write_rows(&out_dir.join(FRAGMENTATION_CSV), &rows).map_err(&io)?;
        let arrived_milli: i64 = arrivals.iter().map(|a| setup.pods[a.pod as usize].demand.total_milli()).sum();
        let cap = setup.capacity_milli();
        let metrics = Metrics {
            policy: p.policy.name(),
            demand: p.demand,
            cluster_gpus: cap as f64 / 1000.0,
            pods_listed: p.pods.len(),
            pods_arrived: arrivals.len(),
            pods_placed: placed,
            pods_unplaced: arrivals.len() - placed,
            arrived_gpu_pct: if cap > 0 { 100.0 * arrived_milli as f64 / cap as f64 } else { 0.0 },
            gpu_allocation_rate: last.gpu_alloc_pct / 100.0,
            fragmentation: last.frag_ratio_pct / 100.0,
            fragmented_gpus: last.frag_gpus,
            typical_shapes: setup.target.shapes().len(),
        };
        let mut f = lahar_core::util::files::AtomicFile::create(&out_dir.join("summary.json")).map_err(&io)?;
        let file = SummaryFile { meta: &meta, metrics, run: RunFacts { wall_time_s: meta.wall_time_s } };
        serde_json::to_writer_pretty(&mut f, &file).map_err(|e| io(std::io::Error::other(e)))?;
        f.write_all(b"\n").map_err(&io)?;
        f.commit().map_err(&io)?;
        if let Some(style) = &opts.plots {
            crate::report_cmd::run_plots(&out_dir, style)
                .map_err(|e| RunError::Plots { dir: out_dir.clone(), msg: e.to_string() })?;
        }
        crate::outdir::complete(&out_dir).map_err(&io)?;
    }
    drop(io);
    Ok(PlacementReport { rows, arrived: arrivals.len(), placed, meta, out_dir, last })
}

pub use crate::outdir::{FRAGMENTATION_CSV, PLACEMENTS_CSV};

fn pod_row(line: &mut String, pod: &OpenbPod, a: Arrival, out: Outcome, nodes: &[Node]) {
    use std::fmt::Write as _;
    let name = match a.copy {
        None => pod.name.clone(),
        Some(i) => format!("{}-tuned-{i}", pod.name),
    };
    let (node, devices) = match out {
        Outcome::Placed { node, devices } => {
            let list: Vec<String> = (0..16).filter(|d| devices & (1 << d) != 0).map(|d| d.to_string()).collect();
            (nodes[node as usize].name.as_str(), list.join("-"))
        }
        Outcome::Unplaced => ("", String::new()),
    };
    let _ = writeln!(
        line,
        "{},{},{},{},{},{},{}",
        csv_field(&name),
        csv_field(node),
        devices,
        pod.cpu_milli,
        pod.memory_bytes >> 20,
        pod.num_gpu,
        pod.gpu_milli
    );
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

fn write_rows(path: &Path, rows: &[Row]) -> std::io::Result<()> {
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    w.write_all(b"demand_pct,gpu_alloc_pct,frag_gpus,frag_ratio_pct\n")?;
    // Percentages at 4 decimals (a ratio's 6), GPUs at 3 (milli-GPUs), trailing
    // zeros dropped, as every lahar CSV writes its numbers.
    let fixed = lahar_reports::write::fixed;
    for r in rows {
        let (a, g, f) = (fixed(r.gpu_alloc_pct, 4), fixed(r.frag_gpus, 3), fixed(r.frag_ratio_pct, 4));
        writeln!(w, "{},{a},{g},{f}", r.demand_pct)?;
    }
    w.flush()
}
