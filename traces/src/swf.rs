//! Standard Workload Format (Parallel Workloads Archive), `*.swf`.
//!
//! Lines starting with `;` are header comments; `MaxNodes:` and `MaxProcs:` seen
//! before the first record set the processors per node. Every other non-blank line
//! is a record of 18 whitespace-separated fields, `-1` meaning unknown. These are
//! CPU traces: a job asks for processors, not GPUs.
//!
//! | lahar | SWF field |
//! |---|---|
//! | `name` | `job-<1: job number>` |
//! | `submit` | 2: submit time, seconds (from the header's `UnixStartTime`) |
//! | `duration` | 4: run time, seconds |
//! | `estimate` | 9: requested time (the user's estimate, a time limit), seconds; none when ≤ 0 |
//! | pods | 5: allocated processors, or 8: requested processors when 5 is ≤ 0; one pod per node: `ceil(procs / procs_per_pod)` pods of `procs_per_pod` processors, the last pod taking the remainder (task `worker-1`) |
//! | pod CPU | 1000 millicores per processor |
//! | pod memory | 10: requested memory (KB per processor) × 1024 × processors of the pod; 0 when `-1` |
//! | GPUs | none |
//! | queue key | 15: queue number (absent when `-1`); user key 12: user number |
//! | `user` | 12: user number in decimal (empty when `-1`) |
//! | status (report) | 11: `completed` (1), `failed` (0), `cancelled` (5), `unknown` (-1), `status-N` otherwise |
//!
//! Wait time (3) is ignored (the simulator computes it); so are the CPU time, used
//! memory, group, executable, partition, preceding job and think time. Cancelled and failed jobs with a positive run time are kept: they held
//! their processors that long.
//!
//! Skips: fewer or more than 18 fields or a non-integer in a used field →
//! `malformed`; submit `-1` → `unknown_submit`; run time `-1` (any negative) →
//! `unknown_run_time`; run time 0 → `zero_duration`; no positive processor count →
//! `no_resources`.

use std::io::BufRead;

use lahar_core::model::resource::Resources;
use lahar_core::util::time::SimDuration;

use crate::ctx::{Ctx, JobParts, RawJob, Skip, build_job, secs_to_micros, tasks_from_pods};
use crate::error::SkipReason;
use crate::error::{ImportError, Location};
use crate::parse;

/// Header values that shape the conversion.
#[derive(Default)]
struct Header {
    max_nodes: Option<i64>,
    max_procs: Option<i64>,
}

impl Header {
    fn scan(&mut self, comment: &str) {
        let Some((key, value)) = comment.trim_start_matches(';').split_once(':') else { return };
        let value = value.trim().parse::<i64>().ok().filter(|v| *v > 0);
        match key.trim() {
            "MaxNodes" => self.max_nodes = value,
            "MaxProcs" => self.max_procs = value,
            _ => {}
        }
    }

    fn procs_per_node(&self) -> u32 {
        match (self.max_procs, self.max_nodes) {
            (Some(p), Some(n)) if p % n == 0 => u32::try_from(p / n).unwrap_or(1),
            _ => 1,
        }
    }
}

/// The format's entry in [`crate::FORMATS`].
pub(crate) const SPEC: crate::FormatSpec = crate::FormatSpec {
    format: crate::Format::Swf,
    name: "swf",
    aliases: &[],
    file: "Parallel Workloads Archive `*.swf`",
    one_job: "a record",
    guess: |name| name.ends_with(".swf"),
    read,
};

pub(crate) fn read(input: &mut dyn BufRead, ctx: &mut Ctx<'_>) -> Result<(), ImportError> {
    let mut header = Header::default();
    let mut per_pod: Option<u32> = ctx.opts.swf.procs_per_pod.map(|p| p.max(1));
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf).map_err(|e| ctx.io_error(e))? == 0 {
            return Ok(());
        }
        line_no += 1;
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with(';') {
            if per_pod.is_none() {
                header.scan(line);
            }
            continue;
        }
        let ppn = *per_pod.get_or_insert_with(|| header.procs_per_node());
        ctx.rows_read += 1;
        let at = Location { line: line_no, row: ctx.rows_read };
        let r = if std::str::from_utf8(&buf).is_err() {
            Err(Skip::malformed("the line is not valid UTF-8"))
        } else {
            convert(line, ppn, ctx)
        };
        ctx.outcome(at, r)?;
    }
}

fn convert(line: &str, ppn: u32, ctx: &mut Ctx<'_>) -> Result<RawJob, Skip> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() != 18 {
        return Err(Skip::malformed(format!("expected 18 fields, found {}", f.len())));
    }
    let id = parse::int(f[0], "job number (field 1)")?;
    let submit = parse::int(f[1], "submit time (field 2)")?;
    let run = parse::int(f[3], "run time (field 4)")?;
    let alloc = parse::int(f[4], "allocated processors (field 5)")?;
    let req_procs = parse::int(f[7], "requested processors (field 8)")?;
    let req_time = parse::int(f[8], "requested time (field 9)")?;
    let req_mem_kb = parse::int(f[9], "requested memory (field 10)")?;
    let status = parse::int(f[10], "status (field 11)")?;
    let user = parse::int(f[11], "user (field 12)")?;
    let queue = parse::int(f[14], "queue (field 15)")?;
    if submit < 0 {
        return Err(Skip::new(SkipReason::UnknownSubmit, "submit time is -1"));
    }
    if run < 0 {
        return Err(Skip::new(SkipReason::UnknownRunTime, "run time is -1"));
    }
    if run == 0 {
        return Err(Skip::new(SkipReason::ZeroDuration, "run time is 0"));
    }
    let procs = if alloc > 0 { alloc } else { req_procs };
    if procs <= 0 {
        return Err(Skip::new(SkipReason::NoResources, "neither allocated nor requested processors are known"));
    }
    let procs = u32::try_from(procs).map_err(|_| Skip::malformed(format!("{procs} processors is out of range")))?;
    let pods = procs.div_ceil(ppn);
    let mem_per_proc =
        req_mem_kb.max(0).checked_mul(1024).ok_or_else(|| Skip::malformed("requested memory overflows"))?;
    let pod = |i: u32| {
        let p = if i + 1 < pods { ppn } else { procs - ppn * (pods - 1) };
        Resources::new(1000 * i64::from(p), mem_per_proc.saturating_mul(i64::from(p)), 0, 1)
    };
    let queue_key = (queue >= 0).then(|| queue.to_string());
    let user_key = (user >= 0).then(|| user.to_string());
    let qid = ctx.queue(queue_key.as_deref(), user_key.as_deref());
    let mut job = build_job(
        JobParts {
            name: format!("job-{id}"),
            kind: "swf",
            queue: qid,
            user: user_key.unwrap_or_default(),
            duration: SimDuration::from_secs(run as u64),
            tasks: tasks_from_pods(pods, pod, &[])?,
        },
        ctx.opts,
    )?;
    job.estimate = (req_time > 0).then(|| SimDuration::from_secs(req_time as u64));
    let status = match status {
        1 => "completed".to_string(),
        0 => "failed".to_string(),
        5 => "cancelled".to_string(),
        -1 => "unknown".to_string(),
        n => format!("status-{n}"),
    };
    Ok(RawJob { submit_micros: secs_to_micros(submit, "submit time")?, job, status })
}
