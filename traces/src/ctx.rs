//! Machinery shared by the importers: the per-file context that applies the skip
//! policy, and the builder of gang jobs.

use std::collections::BTreeMap;
use std::path::Path;

use lahar_core::model::job::{JobSpec, TaskSpec};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::{DIMS, Resources};
use lahar_core::util::time::SimDuration;

use crate::error::SkipReason;
use crate::error::{ImportError, Location};
use crate::options::{ImportOptions, QueueKey};

/// Node-selector label naming the GPU model.
pub const GPU_MODEL_LABEL: &str = "nvidia.com/gpu.product";

/// A converted job whose submit time is still in the trace's clock.
#[derive(Debug)]
pub(crate) struct RawJob {
    /// Submit time in microseconds of the trace's clock.
    pub submit_micros: i64,
    /// The job; `submit` is set once the origin is known.
    pub job: JobSpec,
    /// The trace's status of the job, for the report.
    pub status: String,
}

/// Why one row was not converted.
#[derive(Debug)]
pub(crate) struct Skip {
    pub reason: SkipReason,
    pub message: String,
}

impl Skip {
    pub fn new(reason: SkipReason, message: impl Into<String>) -> Skip {
        Skip { reason, message: message.into() }
    }
    pub fn malformed(message: impl Into<String>) -> Skip {
        Skip::new(SkipReason::Malformed, message)
    }
    pub fn missing(field: &str) -> Skip {
        Skip::new(SkipReason::MissingField, format!("`{field}` is empty"))
    }
}

/// Per-file state of an import pass.
pub(crate) struct Ctx<'a> {
    pub path: &'a Path,
    pub opts: &'a ImportOptions,
    pub rows_read: u64,
    pub skipped: BTreeMap<SkipReason, u64>,
    /// The first skipped row of each reason and why.
    pub first_skipped: BTreeMap<SkipReason, (Location, String)>,
    pub notes: BTreeMap<String, u64>,
    sink: &'a mut dyn FnMut(RawJob, Location) -> Result<(), ImportError>,
}

impl<'a> Ctx<'a> {
    pub fn new(
        path: &'a Path,
        opts: &'a ImportOptions,
        sink: &'a mut dyn FnMut(RawJob, Location) -> Result<(), ImportError>,
    ) -> Ctx<'a> {
        Ctx {
            path,
            opts,
            rows_read: 0,
            skipped: BTreeMap::new(),
            first_skipped: BTreeMap::new(),
            notes: BTreeMap::new(),
            sink,
        }
    }

    /// Applies the skip policy: invalid rows abort a strict import; everything else
    /// is counted.
    pub fn reject(&mut self, at: Location, skip: Skip) -> Result<(), ImportError> {
        if self.opts.strict && skip.reason.is_invalid() {
            return Err(self.row_error(at, skip));
        }
        *self.skipped.entry(skip.reason).or_default() += 1;
        self.first_skipped.entry(skip.reason).or_insert((at, skip.message));
        Ok(())
    }

    /// An error about a row, regardless of strictness.
    pub fn row_error(&self, at: Location, skip: Skip) -> ImportError {
        ImportError::Row { path: self.path.to_path_buf(), at, reason: skip.reason, message: skip.message }
    }

    /// An error about the whole file.
    pub fn file_error(&self, message: impl Into<String>) -> ImportError {
        ImportError::File { path: self.path.to_path_buf(), message: message.into() }
    }

    /// An I/O error on the file.
    pub fn io_error(&self, source: std::io::Error) -> ImportError {
        ImportError::Io { path: self.path.to_path_buf(), source }
    }

    /// Emits a job or applies the skip policy.
    pub fn outcome(&mut self, at: Location, r: Result<RawJob, Skip>) -> Result<(), ImportError> {
        // A name every output would print unchanged is checked here, for every
        // format (docs/outputs.md § Names).
        let r = r.and_then(|job| {
            use lahar_core::util::text::{name_problem, part_name_problem};
            let j = &job.job;
            let why = part_name_problem(&j.name)
                .map(|w| format!("job name {w}"))
                .or_else(|| part_name_problem(&j.namespace).map(|w| format!("namespace {w}")))
                .or_else(|| name_problem(&j.kind).map(|w| format!("kind {w}")))
                .or_else(|| j.tasks.iter().find_map(|t| part_name_problem(&t.name).map(|w| format!("task name {w}"))));
            match why {
                Some(why) => Err(Skip::malformed(why)),
                None => Ok(job),
            }
        });
        match r {
            Ok(job) => (self.sink)(job, at),
            Err(skip) => self.reject(at, skip),
        }
    }

    /// Counts a lossy conversion.
    pub fn note(&mut self, what: &str) {
        *self.notes.entry(what.to_string()).or_default() += 1;
    }

    pub fn queue(&self, queue: Option<&str>, user: Option<&str>) -> QueueId {
        self.opts.queues.queue_of(&QueueKey { queue, user })
    }
}

/// Largest number of pods of one imported job; more is taken for a corrupt value
/// (and would make the per-pod loops and resource sums unreasonable).
pub use lahar_core::model::job::MAX_PODS_PER_JOB;

/// Groups per-pod requests into tasks: consecutive pods with equal requests become one
/// task. The first task is `worker`, later ones `worker-1`, `worker-2`...
pub(crate) fn tasks_from_pods(
    n: u32,
    pod: impl Fn(u32) -> Resources,
    selector: &[(String, String)],
) -> Result<Vec<TaskSpec>, Skip> {
    if n > MAX_PODS_PER_JOB {
        return Err(Skip::malformed(format!("{n} pods exceed the limit of {MAX_PODS_PER_JOB} per job")));
    }
    let mut groups: Vec<(u32, Resources)> = Vec::new();
    for i in 0..n {
        let r = pod(i);
        match groups.last_mut() {
            Some((count, last)) if *last == r => *count += 1,
            _ => groups.push((1, r)),
        }
    }
    Ok(groups
        .into_iter()
        .enumerate()
        .map(|(k, (replicas, requests))| {
            task(if k == 0 { "worker".to_string() } else { format!("worker-{k}") }, replicas, requests, selector)
        })
        .collect())
}

/// Checks that a job's pod count and total requests stay in range, so computing
/// `minResources` and totals cannot overflow.
pub(crate) fn check_totals(tasks: &[TaskSpec]) -> Result<(), Skip> {
    let too_big = || Skip::malformed("the job's total requests are out of range");
    let mut pods: u32 = 0;
    let mut total = [0i64; DIMS];
    for t in tasks {
        pods = pods
            .checked_add(t.replicas)
            .filter(|p| *p <= MAX_PODS_PER_JOB)
            .ok_or_else(|| Skip::malformed(format!("more than {MAX_PODS_PER_JOB} pods in one job")))?;
        for (d, sum) in total.iter_mut().enumerate() {
            let v = t.requests.get(d).checked_mul(i64::from(t.replicas)).ok_or_else(too_big)?;
            *sum = sum.checked_add(v).ok_or_else(too_big)?;
        }
    }
    Ok(())
}

/// A task of `replicas` identical pods, all required (gang).
pub(crate) fn task(name: String, replicas: u32, requests: Resources, selector: &[(String, String)]) -> TaskSpec {
    TaskSpec {
        node_label_in: Vec::new(),
        name: lahar_core::util::text::shared(&name),
        replicas,
        min_available: replicas,
        requests,
        priority: 1,
        depends_on: vec![],
        depends_any: false,
        node_selector: selector.to_vec(),
        policies: vec![],
        preemptable: true,
        never_preempts: false,
        tolerations: Vec::new(),
        hints: None,
        run_time: None,
        exits: None,
        stop_code: lahar_core::model::job::STOPPED_EXIT_CODE,
    }
}

/// Splits `total` as evenly as possible over `n` parts: the first `total % n` parts
/// get one more.
pub(crate) fn share(total: i64, n: u32, i: u32) -> i64 {
    let n = i64::from(n.max(1));
    total / n + i64::from(i64::from(i) < total % n)
}

/// Fields of a trace job that every importer fills the same way.
pub(crate) struct JobParts {
    pub name: String,
    pub kind: &'static str,
    pub queue: QueueId,
    pub user: String,
    pub duration: SimDuration,
    pub tasks: Vec<TaskSpec>,
}

/// A gang job: every pod is needed (`minAvailable` = all pods), no retries policy,
/// Volcano's defaults elsewhere.
pub(crate) fn build_job(p: JobParts, opts: &ImportOptions) -> Result<JobSpec, Skip> {
    check_totals(&p.tasks)?;
    let min_available = p.tasks.iter().map(|t| t.replicas).sum();
    let mut job = JobSpec {
        name: p.name,
        namespace: lahar_core::util::text::shared(&opts.namespace),
        kind: lahar_core::util::text::shared(p.kind),
        queue: p.queue,
        min_available,
        tasks: p.tasks,
        duration: p.duration,
        user: lahar_core::util::text::shared(&p.user),
        ..JobSpec::default()
    };
    job.finish();
    Ok(job)
}

/// `end - start` in seconds as a positive duration, or the skip reason.
pub(crate) fn run_time(start_secs: i64, end_secs: i64) -> Result<SimDuration, Skip> {
    match end_secs.checked_sub(start_secs) {
        Some(d) if d > 0 => Ok(SimDuration::from_secs(d as u64)),
        Some(0) => Err(Skip::new(SkipReason::ZeroDuration, "the job ran for 0 s")),
        _ => Err(Skip::new(SkipReason::EndBeforeStart, format!("end {end_secs} is before start {start_secs}"))),
    }
}

/// Microseconds from whole seconds, or a malformed-row skip on overflow.
pub(crate) fn secs_to_micros(secs: i64, field: &str) -> Result<i64, Skip> {
    secs.checked_mul(1_000_000).ok_or_else(|| Skip::malformed(format!("`{field}` {secs} is out of range")))
}
