//! Alibaba PAI GPU trace v2020 (MLaaS in the Wild): the task table,
//! `pai_task_table.csv`.
//!
//! The file is headerless with the upstream column order
//! `job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type`.
//! Each row is a task (a role such as `worker` or `ps`) of `inst_num` identical
//! instances; the rows of a job may be anywhere in the file, so partial jobs are
//! kept until the end and emitted in order of their first row.
//!
//! | lahar | PAI |
//! |---|---|
//! | `name` | `job_name` |
//! | task | one per row: `task_name` (a repeated name gets `-2`, `-3`...), `inst_num` replicas, all required (gang over the whole job) |
//! | pod CPU | `plan_cpu` (percent of a core) × 10 millicores |
//! | pod memory | `plan_mem` GiB (upstream says GB; values such as `29.296875` = 30000/1024 show binary units) |
//! | pod GPU | `plan_gpu` (percent of a GPU) × 10 milli-GPUs: `50` = half a GPU, `800` = 8 GPUs |
//! | `submit` | the earliest `start_time` of the job's tasks (seconds) |
//! | `duration` | latest `end_time` − earliest `start_time` over the tasks. The task table does not separate queueing from running, so this includes any wait of the tasks (the instance table has the real run times; joining it is not done) |
//! | queue / user | not in this table (they are in `pai_job_table`): no queue key, empty user |
//! | status (report) | `Failed` if any task failed, else the first task's `status` |
//!
//! `gpu_type` is the type the task *ran on*, not a constraint (that is
//! `gpu_type_spec` in the group-tag table), so it sets no node selector. Empty
//! `plan_cpu`, `plan_mem` or `plan_gpu` (upstream NaN, e.g. CPU-only tasks) count
//! as 0 (note `empty_plan_as_zero`). Values are rounded up to whole milli-units /
//! bytes, as Kubernetes rounds requests.
//!
//! Skips are per *job*, with the reason of its first bad task (a row without a
//! job name counts alone): wrong field count, a bad number, `inst_num` not a
//! whole number → `malformed`; empty `job_name` or `inst_num` → `missing_field`;
//! `inst_num` 0 → `no_resources`; `start_time` empty or 0 (upstream: 0 means
//! missing) → `not_started`; `end_time` empty or 0 → `still_running`; end before
//! start → `end_before_start`; end at start → `zero_duration`.

use std::collections::BTreeMap;
use std::io::BufRead;

use csv::StringRecord;
use lahar_core::model::job::TaskSpec;
use lahar_core::model::resource::Resources;
use lahar_core::util::quantity::parse_quantity;
use lahar_core::util::time::SimDuration;

use crate::ctx::{Ctx, JobParts, RawJob, Skip, build_job, task};
use crate::error::SkipReason;
use crate::error::{ImportError, Location};
use crate::parse;
use crate::table::{Table, check_width};

/// Upstream column order (`pai_task_table.header`).
pub const COLUMNS: [&str; 10] = [
    "job_name",
    "task_name",
    "inst_num",
    "status",
    "start_time",
    "end_time",
    "plan_cpu",
    "plan_mem",
    "plan_gpu",
    "gpu_type",
];

/// A job being assembled from its task rows.
struct Partial {
    name: String,
    first: Location,
    tasks: Vec<TaskSpec>,
    start_micros: i64,
    end_micros: i64,
    status: String,
    bad: Option<Skip>,
}

/// One converted task row.
struct TaskRow {
    task: TaskSpec,
    start_micros: i64,
    end_micros: i64,
    status: String,
    empty_plan: bool,
}

/// The format's entry in [`crate::FORMATS`].
pub(crate) const SPEC: crate::FormatSpec = crate::FormatSpec {
    format: crate::Format::Pai,
    name: "pai",
    aliases: &[],
    file: "Alibaba PAI 2020 `pai_task_table.csv`",
    one_job: "the tasks of a job",
    guess: |name| name.starts_with("pai_task_table"),
    read,
};

pub(crate) fn read(input: &mut dyn BufRead, ctx: &mut Ctx<'_>) -> Result<(), ImportError> {
    let mut table = Table::new(input);
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut jobs: Vec<Partial> = Vec::new();
    while let Some((at, rec)) = table.next_row(ctx)? {
        let job_name = rec.as_ref().ok().and_then(|r| r.get(0)).filter(|n| !n.is_empty()).map(str::to_string);
        let parsed = rec.and_then(parse_row);
        if let Err(skip) = &parsed
            && ctx.opts.strict
            && skip.reason.is_invalid()
        {
            return Err(ctx.row_error(at, Skip::new(skip.reason, skip.message.clone())));
        }
        let Some(job_name) = job_name else {
            ctx.reject(at, parsed.err().unwrap_or_else(|| Skip::missing("job_name")))?;
            continue;
        };
        let i = *index.entry(job_name.clone()).or_insert_with(|| {
            jobs.push(Partial {
                name: job_name,
                first: at,
                tasks: Vec::new(),
                start_micros: i64::MAX,
                end_micros: i64::MIN,
                status: String::new(),
                bad: None,
            });
            jobs.len() - 1
        });
        let job = &mut jobs[i];
        if job.bad.is_some() {
            continue;
        }
        match parsed {
            Err(skip) => job.bad = Some(skip),
            Ok(mut row) => {
                if row.empty_plan {
                    ctx.note("empty_plan_as_zero");
                }
                let base = row.task.name.clone();
                let mut k = 1;
                while job.tasks.iter().any(|t| t.name == row.task.name) {
                    k += 1;
                    row.task.name = lahar_core::util::text::shared(&format!("{base}-{k}"));
                }
                job.start_micros = job.start_micros.min(row.start_micros);
                job.end_micros = job.end_micros.max(row.end_micros);
                if job.tasks.is_empty() || row.status == "Failed" {
                    job.status = row.status;
                }
                job.tasks.push(row.task);
            }
        }
    }
    for job in jobs {
        let first = job.first;
        let r = finish(job, ctx);
        ctx.outcome(first, r)?;
    }
    Ok(())
}

fn finish(job: Partial, ctx: &Ctx<'_>) -> Result<RawJob, Skip> {
    if let Some(skip) = job.bad {
        return Err(skip);
    }
    let run =
        job.end_micros.checked_sub(job.start_micros).ok_or_else(|| Skip::malformed("task times are out of range"))?;
    if run <= 0 {
        return Err(Skip::new(SkipReason::ZeroDuration, "the job's tasks ran for 0 s"));
    }
    let raw = build_job(
        JobParts {
            name: job.name,
            kind: "pai",
            queue: ctx.queue(None, None),
            user: String::new(),
            duration: SimDuration(run as u64),
            tasks: job.tasks,
        },
        ctx.opts,
    )?;
    Ok(RawJob { submit_micros: job.start_micros, job: raw, status: job.status })
}

/// A plain decimal times `scale`, rounded up; empty is `None`.
fn plan(s: &str, scale: i64, suffix: &str, field: &str) -> Result<Option<i64>, Skip> {
    if s.is_empty() {
        return Ok(None);
    }
    // Plain decimals only: parse_quantity alone would also take `5m` or `1e3`.
    if !parse::is_plain_decimal(s) {
        return Err(Skip::malformed(format!("`{field}`: expected a decimal number, got `{s}`")));
    }
    match parse_quantity(&format!("{s}{suffix}"), scale) {
        Ok(v) if v >= 0 => Ok(Some(v)),
        _ => Err(Skip::malformed(format!("`{field}`: expected a number ≥ 0, got `{s}`"))),
    }
}

/// Seconds (decimal) as microseconds; empty or 0 is `None` (upstream: 0 = missing).
fn time(s: &str, field: &str) -> Result<Option<i64>, Skip> {
    if s.is_empty() {
        return Ok(None);
    }
    let us = parse::scaled_decimal(s, 6, field)?;
    Ok((us != 0).then_some(us))
}

fn parse_row(rec: &StringRecord) -> Result<TaskRow, Skip> {
    check_width(rec, COLUMNS.len())?;
    let inst = parse::scaled_decimal(&rec[2], 0, "inst_num").map_err(|e| {
        if e.reason == SkipReason::MissingField {
            e
        } else {
            Skip::malformed(format!("`inst_num`: expected a whole number, got `{}`", &rec[2]))
        }
    })?;
    let replicas = u32::try_from(inst).map_err(|_| Skip::malformed(format!("`inst_num` {inst} is out of range")))?;
    if replicas == 0 {
        return Err(Skip::new(SkipReason::NoResources, "`inst_num` is 0"));
    }
    let cpu = plan(&rec[6], 10, "", "plan_cpu")?;
    let mem = plan(&rec[7], 1, "Gi", "plan_mem")?;
    let gpu = plan(&rec[8], 10, "", "plan_gpu")?;
    let Some(start) = time(&rec[4], "start_time")? else {
        return Err(Skip::new(SkipReason::NotStarted, "`start_time` is missing"));
    };
    let Some(end) = time(&rec[5], "end_time")? else {
        return Err(Skip::new(SkipReason::StillRunning, "`end_time` is missing"));
    };
    if end < start {
        return Err(Skip::new(SkipReason::EndBeforeStart, format!("end {} is before start {}", &rec[5], &rec[4])));
    }
    let name = if rec[1].is_empty() { "task" } else { &rec[1] };
    let requests = Resources::new(cpu.unwrap_or(0), mem.unwrap_or(0), gpu.unwrap_or(0), 1);
    Ok(TaskRow {
        task: task(name.to_string(), replicas, requests, &[]),
        start_micros: start,
        end_micros: end,
        status: rec[3].to_string(),
        empty_plan: cpu.is_none() || mem.is_none() || gpu.is_none(),
    })
}
