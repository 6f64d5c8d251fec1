//! lahar's canonical trace CSV: read and write.
//!
//! One row per *task* of a job (a single-task job is one row); the rows of a job
//! are consecutive and repeat the job-level columns. Columns are found by header
//! name, in any order; unknown columns are an error (a typo must not silently
//! become a default). Whitespace around fields is ignored. Only `job`, `submit_s` and `duration_s` are required.
//!
//! | column | meaning | default |
//! |---|---|---|
//! | `job` | job name | required |
//! | `namespace` | namespace | the import's namespace |
//! | `kind` | origin of the job (`swf`, `openb`, `VolcanoJob`...) | `trace` |
//! | `queue` | queue name, the key of the [`QueueMapping`](crate::QueueMapping) | none |
//! | `user` | user | empty |
//! | `submit_s` | submit time, decimal seconds (≤ 6 places) | required |
//! | `duration_s` | run time under ideal placement, decimal seconds (≤ 6 places) | required |
//! | `estimate_s` | the user's run-time estimate (a time limit), decimal seconds, > 0 | none |
//! | `min_available` | gang size (`minMember`) | all pods |
//! | `priority` | job priority | 0 |
//! | `priority_class` | PriorityClass name | none |
//! | `max_retry` | restarts before the job fails | 3 |
//! | `checkpoint_s` | checkpoint interval, decimal seconds | none |
//! | `task` | task name | `worker` |
//! | `replicas` | pods of the task | 1 |
//! | `task_min_available` | per-task `minAvailable` | `replicas` |
//! | `task_priority` | pod priority | 1 |
//! | `preemptable` | `true` / `false` | `true` |
//! | `cpu` | CPU per pod, Kubernetes quantity (`4`, `500m`) | 0 |
//! | `memory` | memory per pod, Kubernetes quantity (`16Gi`, `1500Mi`, bytes) | 0 |
//! | `gpu` | GPUs per pod, quantity; fractions allowed (`0.5`, `460m`) | 0 |
//! | `gpu_model` | node selector `nvidia.com/gpu.product=<value>`; several models `A\|B`: the label must be one of them | none |
//!
//! Quantities are Kubernetes syntax because they are exact and familiar; the writer
//! emits the shortest exact form (`12`, `460m`, `16Gi`). Times are decimal seconds
//! rendered exactly ([`SimTime::secs_string`](lahar_core::util::time::SimTime::secs_string)).
//!
//! Not representable (the writer refuses such jobs rather than drop them): job or
//! task policies, `dependsOn`, network topology, a termination grace other than
//! Volcano's default, node selectors other than the GPU model, extended resources.
//! `minResources` is not stored: the reader recomputes it as Volcano's controller.
//! Status (report) is `unknown`.
//!
//! Skips (per job when the job column is readable, else per row): a field of the
//! wrong type, a negative value, a row whose job-level columns differ from the
//! job's first row, duplicate task names, `min_available` above the pod count →
//! `malformed`; empty `job`, `submit_s` or `duration_s` → `missing_field`;
//! negative duration → `end_before_start`; zero duration → `zero_duration`.

use std::io::{BufRead, Write};
use std::path::Path;

use csv::StringRecord;
use lahar_core::model::job::{DEFAULT_TERMINATION_GRACE, JobSpec, TaskSpec};
use lahar_core::model::resource::{DIMS, FIRST_EXTENDED, Resources};
use lahar_core::util::quantity::parse_quantity;
use lahar_core::util::time::SimDuration;

use crate::ctx::{Ctx, GPU_MODEL_LABEL, RawJob, Skip, check_totals};
use crate::error::SkipReason;
use crate::error::{ImportError, Location, WriteError};
use crate::parse;
use crate::table::{Columns, Table, check_width};

/// Every column, in the order the writer emits them.
pub const COLUMNS: [&str; 22] = [
    "job",
    "namespace",
    "kind",
    "queue",
    "user",
    "submit_s",
    "duration_s",
    "estimate_s",
    "min_available",
    "priority",
    "priority_class",
    "max_retry",
    "checkpoint_s",
    "task",
    "replicas",
    "task_min_available",
    "task_priority",
    "preemptable",
    "cpu",
    "memory",
    "gpu",
    "gpu_model",
];

/// Column index in [`COLUMNS`].
#[derive(Clone, Copy)]
enum Col {
    Job,
    Namespace,
    Kind,
    Queue,
    User,
    Submit,
    Duration,
    Estimate,
    MinAvailable,
    Priority,
    PriorityClass,
    MaxRetry,
    Checkpoint,
    Task,
    Replicas,
    TaskMinAvailable,
    TaskPriority,
    Preemptable,
    Cpu,
    Memory,
    Gpu,
    GpuModel,
}

/// File position of each column, `None` when absent.
struct Layout {
    width: usize,
    pos: [Option<usize>; COLUMNS.len()],
}

impl Layout {
    fn new(cols: &Columns, ctx: &Ctx<'_>) -> Result<Layout, ImportError> {
        let mut pos = [None; COLUMNS.len()];
        for (i, name) in cols.names().iter().enumerate() {
            let Some(k) = COLUMNS.iter().position(|c| c == name) else {
                return Err(ctx.file_error(format!("unknown column `{name}`; known: {}", COLUMNS.join(","))));
            };
            if pos[k].is_some() {
                return Err(ctx.file_error(format!("column `{name}` appears twice")));
            }
            pos[k] = Some(i);
        }
        for required in [Col::Job, Col::Submit, Col::Duration] {
            cols.require(COLUMNS[required as usize], ctx)?;
        }
        Ok(Layout { width: cols.len(), pos })
    }

    /// The value of a column, empty when the column is absent.
    fn get<'r>(&self, rec: &'r StringRecord, c: Col) -> &'r str {
        self.pos[c as usize].and_then(|i| rec.get(i)).unwrap_or("")
    }
}

/// Job-level columns; equal on every row of a job.
#[derive(Clone, Debug, PartialEq)]
struct Head {
    name: String,
    namespace: String,
    kind: String,
    queue: String,
    user: String,
    submit_micros: i64,
    duration_micros: i64,
    min_available: Option<u32>,
    priority: i32,
    priority_class: Option<String>,
    max_retry: u32,
    checkpoint: Option<SimDuration>,
    estimate: Option<SimDuration>,
}

/// The rows of the job being read.
struct Group {
    id: (String, String),
    first: Location,
    head: Option<Head>,
    tasks: Vec<TaskSpec>,
    bad: Option<Skip>,
}

/// The format's entry in [`crate::FORMATS`].
pub(crate) const SPEC: crate::FormatSpec = crate::FormatSpec {
    format: crate::Format::Canonical,
    name: "lahar",
    aliases: &["canonical"],
    file: "lahar canonical CSV",
    one_job: "consecutive rows of a job",
    // Never guessed: a canonical CSV is named by whoever wrote it.
    guess: |_| false,
    read,
};

pub(crate) fn read(input: &mut dyn BufRead, ctx: &mut Ctx<'_>) -> Result<(), ImportError> {
    let mut table = Table::new(input);
    let layout = Layout::new(&table.columns(ctx)?, ctx)?;
    let mut group: Option<Group> = None;
    while let Some((at, rec)) = table.next_row(ctx)? {
        let (id, parsed) = match rec {
            Ok(rec) => {
                let name = layout.get(rec, Col::Job);
                let ns = non_empty(layout.get(rec, Col::Namespace)).unwrap_or(&ctx.opts.namespace);
                let id = (!name.is_empty()).then(|| (name.to_string(), ns.to_string()));
                (id, check_width(rec, layout.width).and_then(|()| parse_row(rec, &layout, ctx)))
            }
            Err(skip) => (None, Err(skip)),
        };
        if let Err(skip) = &parsed
            && ctx.opts.strict
            && skip.reason.is_invalid()
        {
            let skip = Skip::new(skip.reason, skip.message.clone());
            return Err(ctx.row_error(at, skip));
        }
        let Some(id) = id else {
            // Without a job name the row cannot be attributed: count it alone.
            if let Some(g) = group.take() {
                flush(g, ctx)?;
            }
            ctx.reject(at, parsed.err().unwrap_or_else(|| Skip::missing("job")))?;
            continue;
        };
        if group.as_ref().is_some_and(|g| g.id != id)
            && let Some(g) = group.take()
        {
            flush(g, ctx)?;
        }
        let g = group.get_or_insert_with(|| Group { id, first: at, head: None, tasks: Vec::new(), bad: None });
        if g.bad.is_some() {
            continue;
        }
        match parsed {
            Err(skip) => g.bad = Some(skip),
            Ok((head, task)) => match &g.head {
                Some(h) if *h != head => {
                    let skip = Skip::malformed(format!(
                        "job-level columns differ from the first row of job `{}` (line {})",
                        head.name, g.first.line
                    ));
                    if ctx.opts.strict {
                        return Err(ctx.row_error(at, skip));
                    }
                    g.bad = Some(skip);
                }
                _ if g.tasks.iter().any(|t| t.name == task.name) => {
                    let skip = Skip::malformed(format!("task `{}` appears twice in job `{}`", task.name, head.name));
                    if ctx.opts.strict {
                        return Err(ctx.row_error(at, skip));
                    }
                    g.bad = Some(skip);
                }
                _ => {
                    g.head.get_or_insert(head);
                    g.tasks.push(task);
                }
            },
        }
    }
    if let Some(g) = group {
        flush(g, ctx)?;
    }
    Ok(())
}

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}

/// Turns a complete group into a job, or counts why not.
fn flush(g: Group, ctx: &mut Ctx<'_>) -> Result<(), ImportError> {
    let r = match (g.bad, g.head) {
        (Some(skip), _) => Err(skip),
        (None, None) => Err(Skip::malformed("the job has no readable row")),
        (None, Some(head)) => build(head, g.tasks, ctx),
    };
    ctx.outcome(g.first, r)
}

fn build(head: Head, tasks: Vec<TaskSpec>, ctx: &mut Ctx<'_>) -> Result<RawJob, Skip> {
    if head.duration_micros == 0 {
        return Err(Skip::new(SkipReason::ZeroDuration, "`duration_s` is 0"));
    }
    check_totals(&tasks)?;
    let pods: u32 = tasks.iter().map(|t| t.replicas).sum();
    let min_available = head.min_available.unwrap_or(pods);
    if min_available > pods {
        return Err(Skip::malformed(format!("`min_available` {min_available} exceeds the job's {pods} pods")));
    }
    let queue = ctx.queue(non_empty(&head.queue), non_empty(&head.user));
    let mut job = JobSpec {
        name: head.name,
        namespace: lahar_core::util::text::shared(&head.namespace),
        kind: lahar_core::util::text::shared(&head.kind),
        queue,
        priority_class: head.priority_class,
        priority: head.priority,
        min_available,
        tasks,
        max_retry: head.max_retry,
        duration: SimDuration(head.duration_micros as u64),
        estimate: head.estimate,
        checkpoint_interval: head.checkpoint,
        user: lahar_core::util::text::shared(&head.user),
        ..JobSpec::default()
    };
    job.finish();
    Ok(RawJob { submit_micros: head.submit_micros, job, status: "unknown".into() })
}

fn parse_row(rec: &StringRecord, l: &Layout, ctx: &Ctx<'_>) -> Result<(Head, TaskSpec), Skip> {
    let get = |c: Col| l.get(rec, c);
    let opt_i64 = |c: Col, default: i64| -> Result<i64, Skip> {
        let s = get(c);
        if s.is_empty() { Ok(default) } else { parse::int(s, COLUMNS[c as usize]) }
    };
    let opt_u32 = |c: Col, default: u32| -> Result<u32, Skip> {
        let s = get(c);
        if s.is_empty() { Ok(default) } else { parse::count(s, COLUMNS[c as usize]) }
    };
    let opt_i32 = |c: Col, default: i32| -> Result<i32, Skip> {
        let v = opt_i64(c, i64::from(default))?;
        i32::try_from(v).map_err(|_| Skip::malformed(format!("`{}` {v} is out of range", COLUMNS[c as usize])))
    };
    let quantity = |c: Col, scale: i64| -> Result<i64, Skip> {
        let s = get(c);
        if s.is_empty() {
            return Ok(0);
        }
        match parse_quantity(s, scale) {
            Ok(v) if v >= 0 => Ok(v),
            Ok(_) => Err(Skip::malformed(format!("`{}` must not be negative, got `{s}`", COLUMNS[c as usize]))),
            Err(e) => Err(Skip::malformed(format!("`{}`: {e}", COLUMNS[c as usize]))),
        }
    };
    let duration_micros = parse::scaled_decimal(get(Col::Duration), 6, "duration_s")?;
    if duration_micros < 0 {
        return Err(Skip::new(SkipReason::EndBeforeStart, format!("`duration_s` is negative: {}", get(Col::Duration))));
    }
    let checkpoint = match get(Col::Checkpoint) {
        "" => None,
        s => {
            let v = parse::scaled_decimal(s, 6, "checkpoint_s")?;
            Some(SimDuration(u64::try_from(v).map_err(|_| Skip::malformed("`checkpoint_s` must not be negative"))?))
        }
    };
    let estimate = match get(Col::Estimate) {
        "" => None,
        s => match parse::scaled_decimal(s, 6, "estimate_s")? {
            v if v > 0 => Some(SimDuration(v as u64)),
            _ => return Err(Skip::malformed(format!("`estimate_s` must be above 0, got `{s}`"))),
        },
    };
    let head = Head {
        name: get(Col::Job).to_string(),
        namespace: non_empty(get(Col::Namespace)).unwrap_or(&ctx.opts.namespace).to_string(),
        kind: non_empty(get(Col::Kind)).unwrap_or("trace").to_string(),
        queue: get(Col::Queue).to_string(),
        user: get(Col::User).to_string(),
        submit_micros: parse::scaled_decimal(get(Col::Submit), 6, "submit_s")?,
        duration_micros,
        min_available: match get(Col::MinAvailable) {
            "" => None,
            s => Some(parse::count(s, "min_available")?),
        },
        priority: opt_i32(Col::Priority, 0)?,
        priority_class: non_empty(get(Col::PriorityClass)).map(str::to_string),
        max_retry: opt_u32(Col::MaxRetry, 3)?,
        checkpoint,
        estimate,
    };
    let replicas = opt_u32(Col::Replicas, 1)?;
    if replicas == 0 {
        return Err(Skip::malformed("`replicas` must be ≥ 1"));
    }
    let task_min = opt_u32(Col::TaskMinAvailable, replicas)?;
    if task_min > replicas {
        return Err(Skip::malformed(format!("`task_min_available` {task_min} exceeds `replicas` {replicas}")));
    }
    let preemptable = match get(Col::Preemptable) {
        "" | "true" => true,
        "false" => false,
        s => return Err(Skip::malformed(format!("`preemptable`: expected true or false, got `{s}`"))),
    };
    let task = TaskSpec {
        node_label_in: non_empty(get(Col::GpuModel))
            .filter(|m| m.contains('|'))
            .map(|m| {
                let models: std::collections::BTreeSet<&str> =
                    m.split('|').map(str::trim).filter(|x| !x.is_empty()).collect();
                vec![(GPU_MODEL_LABEL.to_string(), models.into_iter().map(str::to_string).collect())]
            })
            .unwrap_or_default(),
        name: lahar_core::util::text::shared(non_empty(get(Col::Task)).unwrap_or("worker")),
        replicas,
        min_available: task_min,
        requests: Resources::new(quantity(Col::Cpu, 1000)?, quantity(Col::Memory, 1)?, quantity(Col::Gpu, 1000)?, 1),
        priority: opt_i32(Col::TaskPriority, 1)?,
        depends_on: vec![],
        depends_any: false,
        node_selector: non_empty(get(Col::GpuModel))
            .filter(|m| !m.contains('|'))
            .map(|m| vec![(GPU_MODEL_LABEL.to_string(), m.to_string())])
            .unwrap_or_default(),
        policies: vec![],
        preemptable,
        never_preempts: false,
        tolerations: Vec::new(),
        hints: None,
        run_time: None,
        exits: None,
        stop_code: lahar_core::model::job::STOPPED_EXIT_CODE,
    };
    Ok((head, task))
}

/// Writes jobs as canonical trace CSV, one row per task.
pub struct CanonicalWriter<W: Write> {
    csv: csv::Writer<W>,
    queue_names: Vec<String>,
    /// Namespace and name of the previous job: a repeat would read back as one job.
    last: Option<(String, String)>,
}

impl<W: Write> CanonicalWriter<W> {
    /// Starts a file (writes the header). `queue_names[i]` is written for
    /// `QueueId(i)`; ids beyond the list are written as their number.
    pub fn new(out: W, queue_names: Vec<String>) -> Result<CanonicalWriter<W>, WriteError> {
        let mut csv = csv::WriterBuilder::new().from_writer(out);
        csv.write_record(COLUMNS)?;
        Ok(CanonicalWriter { csv, queue_names, last: None })
    }

    /// The queue names by id, for callers that learn names while writing (a
    /// streaming conversion with a [`QueueInterner`](crate::QueueInterner)).
    pub fn queue_names_mut(&mut self) -> &mut Vec<String> {
        &mut self.queue_names
    }

    /// Writes one job (its `submit` as is, in seconds).
    pub fn write_job(&mut self, job: &JobSpec) -> Result<(), WriteError> {
        check_representable(job)?;
        if self.last.as_ref().is_some_and(|(ns, name)| **ns == *job.namespace && *name == job.name) {
            return Err(WriteError::Unrepresentable {
                job: job.name.clone(),
                what: "a job with the same namespace and name as the previous one (its rows would merge)".into(),
            });
        }
        self.last = Some((job.namespace.to_string(), job.name.clone()));
        let queue = self.queue_names.get(job.queue.0 as usize).cloned().unwrap_or_else(|| job.queue.0.to_string());
        for t in &job.tasks {
            let model = match (t.node_selector.first(), t.node_label_in.first()) {
                (Some((_, v)), _) => v.clone(),
                (None, Some((_, vs))) => vs.join("|"),
                (None, None) => String::new(),
            };
            let row: [String; COLUMNS.len()] = [
                job.name.clone(),
                job.namespace.to_string(),
                job.kind.to_string(),
                queue.clone(),
                job.user.to_string(),
                job.submit.secs_string(),
                job.duration.secs_string(),
                job.estimate.map(|e| e.secs_string()).unwrap_or_default(),
                job.min_available.to_string(),
                job.priority.to_string(),
                job.priority_class.clone().unwrap_or_default(),
                job.max_retry.to_string(),
                job.checkpoint_interval.map(|c| c.secs_string()).unwrap_or_default(),
                t.name.to_string(),
                t.replicas.to_string(),
                t.min_available.to_string(),
                t.priority.to_string(),
                t.preemptable.to_string(),
                milli_quantity(t.requests.cpu()),
                byte_quantity(t.requests.memory()),
                milli_quantity(t.requests.gpu_milli()),
                model.to_string(),
            ];
            self.csv.write_record(&row)?;
        }
        Ok(())
    }

    /// Flushes and returns the output.
    pub fn finish(self) -> Result<W, WriteError> {
        self.csv.into_inner().map_err(|e| WriteError::Io(e.into_error()))
    }
}

/// Writes `jobs` to a new file at `path`.
pub fn write_file(path: &Path, jobs: &[JobSpec], queue_names: Vec<String>) -> Result<(), WriteError> {
    // Renamed into place when whole (lahar_core::util::files::AtomicFile).
    let file = lahar_core::util::files::AtomicFile::create(path)?;
    let mut w = CanonicalWriter::new(file, queue_names)?;
    for job in jobs {
        w.write_job(job)?;
    }
    w.finish()?.commit()?;
    Ok(())
}

fn check_representable(job: &JobSpec) -> Result<(), WriteError> {
    let refuse = |what: &str| Err(WriteError::Unrepresentable { job: job.name.clone(), what: what.to_string() });
    if job.tasks.is_empty() {
        return refuse("a job without tasks");
    }
    if !job.policies.is_empty() {
        return refuse("job policies");
    }
    if job.network_topology.is_some() {
        return refuse("a network topology");
    }
    if job.elastic.is_some() {
        return refuse("elasticity (a scaling curve)");
    }
    if job.termination_grace != DEFAULT_TERMINATION_GRACE {
        return refuse("a non-default termination grace period");
    }
    for t in &job.tasks {
        if !t.policies.is_empty() {
            return refuse("task policies");
        }
        if t.run_time.is_some() {
            return refuse("a task run time");
        }
        if !t.depends_on.is_empty() || t.depends_any {
            return refuse("task dependencies (dependsOn)");
        }
        let one_model = |k: &str, v: &str| k == GPU_MODEL_LABEL && !v.is_empty() && !v.contains('|');
        let selector_ok = match (t.node_selector.as_slice(), t.node_label_in.as_slice()) {
            ([], []) => true,
            ([(k, v)], []) => one_model(k, v),
            ([], [(k, vs)]) => !vs.is_empty() && vs.iter().all(|v| one_model(k, v)),
            _ => false,
        };
        if !selector_ok {
            return refuse("a node selector other than the GPU model");
        }
        let r = &t.requests;
        if r.pods() != 1 || (FIRST_EXTENDED..DIMS).any(|d| r.get(d) != 0) {
            return refuse("extended resources or a pod count other than 1");
        }
        if r.cpu() < 0 || r.memory() < 0 || r.gpu_milli() < 0 {
            return refuse("negative requests");
        }
    }
    if job.name.is_empty() {
        return refuse("an empty name");
    }
    if job.duration == SimDuration::ZERO {
        return refuse("a zero duration (the reader skips it)");
    }
    Ok(())
}

/// `12` for 12000 milli, `460m` otherwise.
fn milli_quantity(v: i64) -> String {
    if v % 1000 == 0 { (v / 1000).to_string() } else { format!("{v}m") }
}

/// The largest binary suffix that is exact (`16Gi`, `1500Mi`), else bytes.
fn byte_quantity(v: i64) -> String {
    if v == 0 {
        return "0".into();
    }
    for (shift, suffix) in [(60, "Ei"), (50, "Pi"), (40, "Ti"), (30, "Gi"), (20, "Mi"), (10, "Ki")] {
        if v % (1i64 << shift) == 0 {
            return format!("{}{suffix}", v >> shift);
        }
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_are_shortest_exact() {
        assert_eq!(milli_quantity(12000), "12");
        assert_eq!(milli_quantity(460), "460m");
        assert_eq!(milli_quantity(0), "0");
        assert_eq!(byte_quantity(16 << 30), "16Gi");
        assert_eq!(byte_quantity(1500 << 20), "1500Mi");
        assert_eq!(byte_quantity(1001), "1001");
        for v in [0, 1, 999, 1024, 3 << 40, 29_296_875 * 1024] {
            assert_eq!(parse_quantity(&byte_quantity(v), 1).ok(), Some(v));
        }
    }
}
