//! Writers for the output contract: jobs.csv, pods.csv, timeseries.csv,
//! decisions.csv and summary.json.

use crate::metrics::{JobRow, Summary};
use lahar_core::engine::RunOutput;
use lahar_core::time::secs_string;
use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Facts about a run that are not in its output.
#[derive(Clone, Debug, Serialize)]
pub struct RunMeta {
    /// lahar version.
    pub lahar_version: String,
    /// Scenario name.
    pub scenario: String,
    /// sha256 of the scenario text.
    pub scenario_sha256: String,
    /// Seed.
    pub seed: u64,
    /// Scheduler name.
    pub scheduler: String,
    /// Wall-clock seconds the simulation took (the only non-reproducible field).
    pub wall_time_s: f64,
}

#[derive(Serialize)]
struct SummaryFile<'a> {
    #[serde(flatten)]
    meta: &'a RunMeta,
    metrics: &'a Summary,
}

fn opt(v: Option<u64>) -> String {
    v.map(secs_string).unwrap_or_default()
}

/// Milli-units as an exact decimal.
pub fn milli_string(m: i64) -> String {
    let sign = if m < 0 { "-" } else { "" };
    let m = m.unsigned_abs();
    let (w, f) = (m / 1000, m % 1000);
    if f == 0 {
        return format!("{sign}{w}");
    }
    let mut s = format!("{sign}{w}.{f:03}");
    while s.ends_with('0') {
        s.pop();
    }
    s
}

fn csv_writer(dir: &Path, name: &str) -> io::Result<csv::Writer<BufWriter<File>>> {
    Ok(csv::Writer::from_writer(BufWriter::new(File::create(dir.join(name))?)))
}

fn io_err(e: csv::Error) -> io::Error {
    io::Error::other(e)
}

/// Writes every output file into `dir` (created if needed).
pub fn write_all(dir: &Path, out: &RunOutput, rows: &[JobRow], summary: &Summary, meta: &RunMeta) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_jobs(dir, rows)?;
    write_pods(dir, out)?;
    write_timeseries(dir, out)?;
    write_decisions(dir, out)?;
    let mut f = BufWriter::new(File::create(dir.join("summary.json"))?);
    serde_json::to_writer_pretty(&mut f, &SummaryFile { meta, metrics: summary }).map_err(io::Error::other)?;
    f.write_all(b"\n")?;
    f.flush()
}

fn write_jobs(dir: &Path, rows: &[JobRow]) -> io::Result<()> {
    let mut w = csv_writer(dir, "jobs.csv")?;
    w.write_record([
        "job",
        "queue",
        "priority",
        "gpus",
        "submit",
        "start",
        "end",
        "state",
        "jct_s",
        "wait_s",
        "ideal_s",
        "slowdown",
        "preemptions",
        "nodes_spanned",
        "highest_tier",
        "retries",
        "lost_gpu_s",
        "kind",
    ])
    .map_err(io_err)?;
    for r in rows {
        let slowdown = match (r.jct, r.ideal) {
            (Some(j), i) if i > 0 => format!("{:.6}", j as f64 / i as f64),
            _ => String::new(),
        };
        w.write_record([
            r.job.as_str(),
            &r.queue,
            &r.priority.to_string(),
            &r.gpus.to_string(),
            &secs_string(r.submit),
            &opt(r.start),
            &opt(r.end),
            r.state,
            &opt(r.jct),
            &secs_string(r.wait),
            &secs_string(r.ideal),
            &slowdown,
            &r.preemptions.to_string(),
            &r.nodes_spanned.to_string(),
            &r.highest_tier.to_string(),
            &r.retries.to_string(),
            &format!("{:.3}", r.lost_gpu_s),
            &r.kind,
        ])
        .map_err(io_err)?;
    }
    w.flush()
}

fn write_pods(dir: &Path, out: &RunOutput) -> io::Result<()> {
    let mut recs: Vec<_> = out.pods.iter().collect();
    recs.sort_by_key(|p| (p.job, p.task, p.index, p.start, p.pod));
    let mut w = csv_writer(dir, "pods.csv")?;
    w.write_record(["job", "task", "index", "node", "gpus", "start", "end", "reason_end"]).map_err(io_err)?;
    for p in recs {
        let j = &out.world.jobs[p.job.0 as usize].spec;
        w.write_record([
            j.name.as_str(),
            &j.tasks[p.task as usize].name,
            &p.index.to_string(),
            &out.world.cluster.node(p.node).name,
            &milli_string(p.gpu_milli),
            &p.start.secs_string(),
            &p.end.secs_string(),
            p.reason.as_str(),
        ])
        .map_err(io_err)?;
    }
    w.flush()
}

fn write_timeseries(dir: &Path, out: &RunOutput) -> io::Result<()> {
    let mut w = csv_writer(dir, "timeseries.csv")?;
    let mut header: Vec<String> =
        ["t", "gpus_total", "gpus_allocated", "gpus_busy_effective", "jobs_pending", "jobs_running"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    header.extend(out.world.queues.iter().map(|q| format!("gpus_allocated:{}", q.spec.name)));
    w.write_record(&header).map_err(io_err)?;
    let total = milli_string(out.world.cluster.total().gpu_milli());
    for s in &out.samples {
        let mut rec = vec![
            s.t.secs_string(),
            total.clone(),
            milli_string(s.gpu_allocated_milli),
            milli_string(s.gpu_effective_milli),
            s.jobs_pending.to_string(),
            s.jobs_running.to_string(),
        ];
        rec.extend(s.queue_gpu_milli.iter().map(|&m| milli_string(m)));
        w.write_record(&rec).map_err(io_err)?;
    }
    w.flush()
}

fn write_decisions(dir: &Path, out: &RunOutput) -> io::Result<()> {
    let mut w = csv_writer(dir, "decisions.csv")?;
    w.write_record(["session", "t", "action", "kind", "job", "pod", "node", "phase", "reason"]).map_err(io_err)?;
    for d in &out.decisions {
        let j = &out.world.jobs[d.job.0 as usize].spec;
        let pod = d.pod.map(|p| {
            let pod = &out.world.pods[p.0 as usize];
            format!("{}/{}", j.namespace, j.pod_name(pod.task as usize, pod.index))
        });
        w.write_record([
            d.session.to_string().as_str(),
            &d.t.secs_string(),
            d.action,
            d.kind.as_str(),
            &j.name,
            &pod.unwrap_or_default(),
            &d.node.map(|n| out.world.cluster.node(n).name.clone()).unwrap_or_default(),
            d.phase.map(|p| p.as_str()).unwrap_or(""),
            &d.reason,
        ])
        .map_err(io_err)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::milli_string;

    #[test]
    fn milli_strings_are_exact() {
        assert_eq!(milli_string(8000), "8");
        assert_eq!(milli_string(500), "0.5");
        assert_eq!(milli_string(1250), "1.25");
        assert_eq!(milli_string(-1500), "-1.5");
        assert_eq!(milli_string(0), "0");
    }
}
