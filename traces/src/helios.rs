//! SenseTime Helios `cluster_log.csv` (HeliosData, SC '21).
//!
//! Columns are found by header name (the clusters' files differ in extra columns,
//! which are ignored). Required: `job_id`, `gpu_num`, `submit_time`, `start_time`,
//! `end_time`; optional: `user`, `vc`, `cpu_num`, `node_num`, `state`. Times are
//! `YYYY-MM-DD HH:MM:SS` local time without zone, read as a naive clock. One job per
//! row:
//!
//! | lahar | Helios |
//! |---|---|
//! | `name` | `job_id` |
//! | `submit` | `submit_time` |
//! | `duration` | `end_time − start_time` (the `duration` column is the same number; `queue` is ignored, the simulator computes waits) |
//! | pods | `node_num` pods (1 when absent or 0), a gang |
//! | pod GPUs | `gpu_num` split evenly over the pods, the first `gpu_num mod node_num` pods taking one more |
//! | pod CPU | `cpu_num` whole cores split the same way (× 1000 millicores); without `cpu_num`, `cpu_milli_per_gpu` × pod GPUs ([`ImportOptions`](crate::ImportOptions)) |
//! | pod memory | none in the trace: `memory_per_gpu` × pod GPUs (a GPU-less pod counts as one GPU) |
//! | queue key | `vc`; user key `user` |
//! | `user` | `user` |
//! | status (report) | `state` (COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL); all states are kept when the job ran |
//!
//! Skips: wrong field count, a bad number or date → `malformed`; empty `job_id`,
//! `gpu_num` or `submit_time` → `missing_field`; empty `start_time` (cancelled in
//! the queue) → `not_started`; empty `end_time` → `still_running`; end before start →
//! `end_before_start`; end at start → `zero_duration`.

use std::io::BufRead;

use csv::StringRecord;
use lahar_core::model::resource::Resources;

use crate::ctx::{Ctx, JobParts, RawJob, Skip, build_job, run_time, secs_to_micros, share, tasks_from_pods};
use crate::error::ImportError;
use crate::error::SkipReason;
use crate::parse;
use crate::table::{Table, check_width};

struct Cols {
    width: usize,
    id: usize,
    gpu: usize,
    submit: usize,
    start: usize,
    end: usize,
    user: Option<usize>,
    vc: Option<usize>,
    cpu: Option<usize>,
    nodes: Option<usize>,
    state: Option<usize>,
}

/// The format's entry in [`crate::FORMATS`].
pub(crate) const SPEC: crate::FormatSpec = crate::FormatSpec {
    format: crate::Format::Helios,
    name: "helios",
    aliases: &[],
    file: "SenseTime Helios `cluster_log.csv`",
    one_job: "a row",
    guess: |name| name.starts_with("cluster_log"),
    read,
};

pub(crate) fn read(input: &mut dyn BufRead, ctx: &mut Ctx<'_>) -> Result<(), ImportError> {
    let mut table = Table::new(input);
    let c = table.columns(ctx)?;
    let cols = Cols {
        width: c.len(),
        id: c.require("job_id", ctx)?,
        gpu: c.require("gpu_num", ctx)?,
        submit: c.require("submit_time", ctx)?,
        start: c.require("start_time", ctx)?,
        end: c.require("end_time", ctx)?,
        user: c.find("user"),
        vc: c.find("vc"),
        cpu: c.find("cpu_num"),
        nodes: c.find("node_num"),
        state: c.find("state"),
    };
    while let Some((at, rec)) = table.next_row(ctx)? {
        let r = rec.and_then(|rec| convert(rec, &cols, ctx));
        ctx.outcome(at, r)?;
    }
    Ok(())
}

fn convert(rec: &StringRecord, c: &Cols, ctx: &mut Ctx<'_>) -> Result<RawJob, Skip> {
    check_width(rec, c.width)?;
    let opt = |i: Option<usize>| i.map(|i| &rec[i]).filter(|s| !s.is_empty());
    let id = &rec[c.id];
    if id.is_empty() {
        return Err(Skip::missing("job_id"));
    }
    let gpus = i64::from(parse::count(&rec[c.gpu], "gpu_num")?);
    let cpus = opt(c.cpu).map(|s| parse::count(s, "cpu_num")).transpose()?;
    let nodes = opt(c.nodes).map(|s| parse::count(s, "node_num")).transpose()?.unwrap_or(1).max(1);
    if rec[c.submit].is_empty() {
        return Err(Skip::missing("submit_time"));
    }
    let submit = parse::datetime(&rec[c.submit], "submit_time")?;
    if rec[c.start].is_empty() {
        return Err(Skip::new(SkipReason::NotStarted, "`start_time` is empty"));
    }
    let start = parse::datetime(&rec[c.start], "start_time")?;
    if rec[c.end].is_empty() {
        return Err(Skip::new(SkipReason::StillRunning, "`end_time` is empty"));
    }
    let end = parse::datetime(&rec[c.end], "end_time")?;
    let duration = run_time(start, end)?;
    let (cpu_per_gpu, mem_per_gpu) = (ctx.opts.cpu_milli_per_gpu, ctx.opts.memory_per_gpu);
    let pod = |i: u32| {
        let g = share(gpus, nodes, i);
        let cpu = match cpus {
            Some(n) => share(i64::from(n), nodes, i) * 1000,
            None => cpu_per_gpu.saturating_mul(g.max(1)),
        };
        Resources::new(cpu, mem_per_gpu.saturating_mul(g.max(1)), g * 1000, 1)
    };
    let tasks = tasks_from_pods(nodes, pod, &[])?;
    let user = opt(c.user);
    let job = build_job(
        JobParts {
            name: id.to_string(),
            kind: "helios",
            queue: ctx.queue(opt(c.vc), user),
            user: user.unwrap_or("").to_string(),
            duration,
            tasks,
        },
        ctx.opts,
    )?;
    let status = opt(c.state).unwrap_or("unknown").to_string();
    Ok(RawJob { submit_micros: secs_to_micros(submit, "submit_time")?, job, status })
}
