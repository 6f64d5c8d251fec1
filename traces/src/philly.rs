//! Microsoft Philly `cluster_job_log` (msr-fiddle/philly-traces, ATC '19).
//!
//! The file is one JSON array of job objects
//! `{status, vc, jobid, attempts: [{start_time, end_time, detail: [{ip, gpus: [..]}]}], submitted_time, user}`,
//! with times as `YYYY-MM-DD HH:MM:SS` strings (no zone; read as a naive clock)
//! and missing times as `"None"` or `null`. The array is read one element at a time
//! (the real file is hundreds of MB), each element converted and dropped before the
//! next is parsed.
//!
//! | lahar | Philly |
//! |---|---|
//! | `name` | `jobid` |
//! | `submit` | `submitted_time` |
//! | pods | one per entry of the **first** attempt's `detail` (a machine), as upstream's analysis sizes jobs by the first attempt; later attempts may have run elsewhere |
//! | pod GPUs | the number of entries in that machine's `gpus` |
//! | pod CPU, memory | not in the trace: `cpu_milli_per_gpu` and `memory_per_gpu` × pod GPUs ([`ImportOptions`](crate::ImportOptions)) |
//! | `duration` | last attempt's `end_time` − first attempt's `start_time` (upstream's run time; includes the gaps between retries) |
//! | queue key | `vc`; user key `user` |
//! | `user` | `user` |
//! | status (report) | `status` (`Pass`, `Killed`, `Failed`); all are kept when the job ran |
//!
//! Skips: an element that is not an object, a field of the wrong type, a bad date →
//! `malformed`; an absent `jobid`, `submitted_time` or `attempts` → `missing_field`;
//! `submitted_time` `None`/`null` → `unknown_submit`; no attempts or a first attempt
//! without `start_time` → `not_started`; a last attempt without `end_time` →
//! `still_running`; a first attempt without machines → `no_resources`; end before
//! start → `end_before_start`; end at start → `zero_duration`.
//!
//! A JSON *syntax* error ends the import in any mode (the rest of the array cannot
//! be found again); the error names the line and the job's index in the array.

use std::cell::Cell;
use std::fmt;
use std::io::{BufRead, Read};
use std::rc::Rc;

use lahar_core::model::resource::Resources;
use serde::Deserializer as _;
use serde::de::{SeqAccess, Visitor};
use serde_json::Value;

use crate::ctx::{Ctx, JobParts, RawJob, Skip, build_job, run_time, secs_to_micros, tasks_from_pods};
use crate::error::SkipReason;
use crate::error::{ImportError, Location};
use crate::parse;

/// Counts the newlines the JSON parser has consumed, to locate elements.
struct LineCounter<'r> {
    inner: &'r mut dyn BufRead,
    newlines: Rc<Cell<u64>>,
}

impl Read for LineCounter<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let seen = buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        self.newlines.set(self.newlines.get() + seen);
        Ok(n)
    }
}

/// Converts the array's elements one at a time.
struct Jobs<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    newlines: Rc<Cell<u64>>,
    /// Why the import stopped early. Kept out of band because serde_json replaces
    /// an early return from `visit_seq` with its own "trailing characters" error.
    stop: &'c mut Option<ImportError>,
}

impl<'de> Visitor<'de> for Jobs<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array of jobs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while let Some(value) = seq.next_element::<Value>()? {
            self.ctx.rows_read += 1;
            let at = Location { line: self.newlines.get() + 1, row: self.ctx.rows_read };
            let r = convert(&value, self.ctx);
            if let Err(e) = self.ctx.outcome(at, r) {
                *self.stop = Some(e);
                return Err(serde::de::Error::custom("import stopped"));
            }
        }
        Ok(())
    }
}

/// The format's entry in [`crate::FORMATS`].
pub(crate) const SPEC: crate::FormatSpec = crate::FormatSpec {
    format: crate::Format::Philly,
    name: "philly",
    aliases: &[],
    file: "Microsoft Philly `cluster_job_log` (JSON)",
    one_job: "a job object",
    guess: |name| name.starts_with("cluster_job_log"),
    read,
};

pub(crate) fn read(input: &mut dyn BufRead, ctx: &mut Ctx<'_>) -> Result<(), ImportError> {
    let newlines = Rc::new(Cell::new(0));
    let reader = LineCounter { inner: input, newlines: newlines.clone() };
    let mut de = serde_json::Deserializer::from_reader(reader);
    let mut stop = None;
    let outcome = de.deserialize_seq(Jobs { ctx: &mut *ctx, newlines, stop: &mut stop });
    if let Some(e) = stop {
        return Err(e);
    }
    outcome.map_err(|e| json_error(e, ctx))?;
    de.end().map_err(|e| ctx.file_error(format!("unexpected data after the array of jobs: {e}")))
}

fn json_error(e: serde_json::Error, ctx: &Ctx<'_>) -> ImportError {
    use serde_json::error::Category;
    match e.classify() {
        Category::Io => ctx.io_error(e.into()),
        Category::Data if ctx.rows_read == 0 => ctx.file_error(format!("not a JSON array of jobs: {e}")),
        _ => ctx.row_error(
            Location { line: e.line() as u64, row: ctx.rows_read + 1 },
            Skip::malformed(format!("invalid JSON: {e}")),
        ),
    }
}

/// A required string field.
fn string<'v>(obj: &'v serde_json::Map<String, Value>, key: &str) -> Result<&'v str, Skip> {
    match obj.get(key) {
        None => Err(Skip::new(SkipReason::MissingField, format!("`{key}` is absent"))),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(Skip::malformed(format!("`{key}`: expected a string, got {other}"))),
    }
}

/// An optional string field (absent is also `None`).
fn opt_string<'v>(obj: &'v serde_json::Map<String, Value>, key: &str) -> Result<Option<&'v str>, Skip> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(Skip::malformed(format!("`{key}`: expected a string, got {other}"))),
    }
}

/// A time that may be `"None"` or `null`.
fn time(obj: &serde_json::Map<String, Value>, key: &str) -> Result<Option<i64>, Skip> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s == "None" || s.is_empty() => Ok(None),
        Some(Value::String(s)) => parse::datetime(s, key).map(Some),
        Some(other) => Err(Skip::malformed(format!("`{key}`: expected a date-time string, got {other}"))),
    }
}

fn object<'v>(v: &'v Value, what: &str) -> Result<&'v serde_json::Map<String, Value>, Skip> {
    v.as_object().ok_or_else(|| Skip::malformed(format!("{what}: expected an object, got {v}")))
}

fn array<'v>(obj: &'v serde_json::Map<String, Value>, key: &str) -> Result<&'v Vec<Value>, Skip> {
    match obj.get(key) {
        None => Err(Skip::new(SkipReason::MissingField, format!("`{key}` is absent"))),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(Skip::malformed(format!("`{key}`: expected an array, got {other}"))),
    }
}

fn convert(v: &Value, ctx: &mut Ctx<'_>) -> Result<RawJob, Skip> {
    let job = object(v, "job")?;
    let id = string(job, "jobid")?;
    if id.is_empty() {
        return Err(Skip::missing("jobid"));
    }
    let vc = opt_string(job, "vc")?;
    let user = opt_string(job, "user")?;
    let status = opt_string(job, "status")?.unwrap_or("unknown");
    if !job.contains_key("submitted_time") {
        return Err(Skip::new(SkipReason::MissingField, "`submitted_time` is absent"));
    }
    let submit = time(job, "submitted_time")?;
    let attempts = array(job, "attempts")?;
    // Validate every attempt's shape before judging times, so a malformed job is
    // reported as such whatever else is missing.
    let attempts: Vec<&serde_json::Map<String, Value>> =
        attempts.iter().map(|a| object(a, "attempt")).collect::<Result<_, _>>()?;
    let Some(submit) = submit else {
        return Err(Skip::new(SkipReason::UnknownSubmit, "`submitted_time` is None"));
    };
    let (Some(first), Some(last)) = (attempts.first(), attempts.last()) else {
        return Err(Skip::new(SkipReason::NotStarted, "the job has no attempts"));
    };
    let mut gpus_per_machine = Vec::new();
    for d in array(first, "detail")? {
        let machine = object(d, "detail entry")?;
        gpus_per_machine.push(array(machine, "gpus")?.len() as i64);
    }
    let Some(start) = time(first, "start_time")? else {
        return Err(Skip::new(SkipReason::NotStarted, "the first attempt has no start_time"));
    };
    let Some(end) = time(last, "end_time")? else {
        return Err(Skip::new(SkipReason::StillRunning, "the last attempt has no end_time"));
    };
    let duration = run_time(start, end)?;
    if gpus_per_machine.is_empty() {
        return Err(Skip::new(SkipReason::NoResources, "the first attempt lists no machines"));
    }
    let (cpu_per_gpu, mem_per_gpu) = (ctx.opts.cpu_milli_per_gpu, ctx.opts.memory_per_gpu);
    let pod = |i: u32| {
        let g = gpus_per_machine[i as usize];
        Resources::new(cpu_per_gpu.saturating_mul(g.max(1)), mem_per_gpu.saturating_mul(g.max(1)), g * 1000, 1)
    };
    let pods = u32::try_from(gpus_per_machine.len()).map_err(|_| Skip::malformed("too many machines"))?;
    let job = build_job(
        JobParts {
            name: id.to_string(),
            kind: "philly",
            queue: ctx.queue(vc, user),
            user: user.unwrap_or("").to_string(),
            duration,
            tasks: tasks_from_pods(pods, pod, &[])?,
        },
        ctx.opts,
    )?;
    Ok(RawJob { submit_micros: secs_to_micros(submit, "submitted_time")?, job, status: status.to_string() })
}
