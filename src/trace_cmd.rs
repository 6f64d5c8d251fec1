//! `lahar trace inspect` and `lahar trace convert`: what a recorded trace holds, and
//! the trace rewritten as lahar's canonical CSV.
//!
//! Both stream the file through [`lahar_traces::stream`], so memory grows with the
//! jobs kept (`inspect` keeps one duration per job for the percentiles; `convert`
//! keeps nothing), never with the file's text.

use crate::error::CmdError;
use std::collections::BTreeMap;

use std::path::{Path, PathBuf};

use lahar_core::util::time::secs_string;
use lahar_traces::canonical::CanonicalWriter;
use lahar_traces::{Format, ImportOptions, ImportReport, QueueInterner, QueueMapping, SkipReason, TimeOrigin};

/// Options shared by `inspect` and `convert`, as given on the command line.
#[derive(Clone, Debug, Default)]
pub struct TraceArgs {
    /// Trace file.
    pub path: PathBuf,
    /// Format name (`swf`, `openb`, `philly`, `pai`, `helios`, `lahar`/`canonical`);
    /// `None` guesses from the file name.
    pub format: Option<String>,
    /// Abort on the first invalid row.
    pub strict: bool,
    /// CPU per GPU for traces without CPU (Kubernetes quantity).
    pub cpu_per_gpu: Option<String>,
    /// Memory per GPU for traces without memory (Kubernetes quantity).
    pub memory_per_gpu: Option<String>,
    /// SWF: processors per pod.
    pub procs_per_pod: Option<u32>,
    /// Time origin in whole seconds of the trace's clock (default: earliest submit).
    pub origin: Option<i64>,
    /// openb reduced schema: submit interval between consecutive pods (a duration).
    pub untimed_interval: Option<String>,
    /// openb reduced schema: run time of every pod (a duration).
    pub untimed_duration: Option<String>,
}

impl TraceArgs {
    /// The format to read: given, or guessed from the file name.
    pub fn format(&self) -> Result<Format, CmdError> {
        match &self.format {
            Some(name) if lahar_traces::requests::RequestFormat::from_name(name).is_some() => {
                Err(CmdError::Input(format!(
                    "--format: `{name}` is a request trace (a service's demand, `spec.services[].demand.trace`), not jobs: \
                 `lahar trace inspect` reads it, `convert` does not"
                )))
            }
            Some(name) => Format::from_name(name).ok_or_else(|| {
                let mut known: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                known.extend(lahar_traces::requests::RequestFormat::ALL.iter().map(|f| f.name()));
                CmdError::Input(format!(
                    "--format: unknown trace format `{name}`; expected one of: {}",
                    known.join(", ")
                ))
            }),
            None => Format::guess(&self.path).ok_or_else(|| {
                CmdError::Input(format!(
                    "{}: cannot tell the trace format from the file name; give --format",
                    self.path.display()
                ))
            }),
        }
    }

    /// Import options; queues are interned by the trace's queue names into `interner`.
    fn options(&self, interner: &QueueInterner) -> Result<ImportOptions, CmdError> {
        let quantity = |flag: &str, s: &str, scale: i64| -> Result<i64, CmdError> {
            match lahar_core::util::quantity::parse_quantity(s, scale) {
                Ok(v) if v >= 0 => Ok(v),
                Ok(v) => Err(CmdError::Input(format!("{flag}: must not be negative, got {v}"))),
                Err(e) => Err(CmdError::Input(format!("{flag}: {e}"))),
            }
        };
        let mut opts = ImportOptions {
            strict: self.strict,
            queues: QueueMapping::Intern(interner.clone()),
            ..ImportOptions::default()
        };
        if let Some(c) = &self.cpu_per_gpu {
            opts.cpu_milli_per_gpu = quantity("--cpu-per-gpu", c, 1000)?;
        }
        if let Some(m) = &self.memory_per_gpu {
            opts.memory_per_gpu = quantity("--memory-per-gpu", m, 1)?;
        }
        if let Some(p) = self.procs_per_pod {
            opts.swf.procs_per_pod = Some(p);
        }
        if let Some(o) = self.origin {
            opts.origin = TimeOrigin::At(o);
        }
        let duration = |flag: &str, s: &str| {
            lahar_core::util::time::parse_duration(s).map_err(|e| CmdError::Input(format!("{flag}: {e}")))
        };
        if let Some(d) = &self.untimed_interval {
            opts.openb.untimed_interval = duration("--untimed-interval", d)?;
        }
        if let Some(d) = &self.untimed_duration {
            opts.openb.untimed_duration = duration("--untimed-duration", d)?;
        }
        Ok(opts)
    }
}

/// What `lahar trace inspect` reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Inspection {
    /// The importer's report (rows, jobs, pods, skips, statuses, notes).
    pub report: ImportReport,
    /// Last submit minus first submit, microseconds (0 without jobs).
    pub span_micros: u64,
    /// Jobs by total GPUs requested, in milli-GPUs (fractional requests kept exact).
    pub gpus: BTreeMap<i64, u64>,
    /// Run-time percentiles in microseconds: p50, p90, p99, max (nearest rank);
    /// `None` without jobs.
    pub duration: Option<[u64; 4]>,
    /// Jobs by the trace's queue name (`default` for jobs without one).
    pub queues: BTreeMap<String, u64>,
}

/// Nearest-rank percentile of sorted values: the smallest value with at least
/// `p`% of the values at or below it.
fn percentile(sorted: &[u64], p: u64) -> u64 {
    let rank = (p * sorted.len() as u64).div_ceil(100).max(1);
    sorted[rank as usize - 1]
}

/// Reads a trace and summarizes it.
pub fn inspect(args: &TraceArgs) -> Result<Inspection, CmdError> {
    let format = args.format()?;
    let interner = QueueInterner::new();
    let opts = args.options(&interner)?;
    let mut gpus: BTreeMap<i64, u64> = BTreeMap::new();
    let mut by_queue: BTreeMap<u32, u64> = BTreeMap::new();
    let mut durations: Vec<u64> = Vec::new();
    let report = lahar_traces::stream(format, &args.path, &opts, &mut |job| {
        let milli: i64 = job.tasks.iter().map(|t| t.requests.gpu_milli() * i64::from(t.replicas)).sum();
        *gpus.entry(milli).or_default() += 1;
        *by_queue.entry(job.queue.0).or_default() += 1;
        durations.push(job.duration.micros());
        Ok(())
    })
    .map_err(|e| CmdError::Input(e.to_string()))?;
    durations.sort_unstable();
    let duration = (!durations.is_empty()).then(|| {
        [
            percentile(&durations, 50),
            percentile(&durations, 90),
            percentile(&durations, 99),
            durations[durations.len() - 1],
        ]
    });
    let names = interner.names();
    let queues = by_queue
        .into_iter()
        .map(|(q, n)| (names.get(q as usize).cloned().unwrap_or_else(|| q.to_string()), n))
        .collect();
    let span_micros = match (report.first_submit, report.last_submit) {
        (Some(a), Some(b)) => b.micros() - a.micros(),
        _ => 0,
    };
    Ok(Inspection { report, span_micros, gpus, duration, queues })
}

/// Milli-GPUs as a decimal number of GPUs (`500` → `0.5`, `8000` → `8`).
fn gpu_string(milli: i64) -> String {
    let s = format!("{}.{:03}", milli / 1000, milli % 1000);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn secs(us: u64) -> serde_json::Value {
    serde_json::Value::from(us as f64 / 1e6)
}

impl Inspection {
    /// The summary as one JSON object: `format`, `path`, `rows_read`, `jobs`, `pods`,
    /// `skipped` (reason → count), `span_s`, `gpus` (GPUs per job → jobs),
    /// `duration_s` (`p50`, `p90`, `p99`, `max`; `null` without jobs), `queues`
    /// (trace queue → jobs), `statuses`, `notes`.
    pub fn to_json(&self) -> serde_json::Value {
        let r = &self.report;
        let skipped: serde_json::Map<String, serde_json::Value> =
            r.skipped.iter().map(|(k, v)| (k.as_str().to_string(), (*v).into())).collect();
        let gpus: serde_json::Map<String, serde_json::Value> =
            self.gpus.iter().map(|(k, v)| (gpu_string(*k), (*v).into())).collect();
        let duration = match self.duration {
            Some([p50, p90, p99, max]) => {
                serde_json::json!({"p50": secs(p50), "p90": secs(p90), "p99": secs(p99), "max": secs(max)})
            }
            None => serde_json::Value::Null,
        };
        serde_json::json!({
            "format": r.format.name(),
            "path": r.path.display().to_string(),
            "rows_read": r.rows_read,
            "jobs": r.jobs,
            "pods": r.pods,
            "skipped": skipped,
            "span_s": secs(self.span_micros),
            "gpus": gpus,
            "duration_s": duration,
            "queues": self.queues,
            "statuses": r.statuses,
            "notes": r.notes,
        })
    }

    /// The summary for a terminal.
    pub fn to_text(&self) -> String {
        let r = &self.report;
        let mut s = String::new();
        let mut line = |t: String| {
            s.push_str(&t);
            s.push('\n');
        };
        line(format!("{} ({})", r.path.display(), r.format));
        line(format!("rows read   {}", r.rows_read));
        line(format!("jobs        {} ({} pods)", r.jobs, r.pods));
        line(format!("skipped     {}", r.skipped_total()));
        for reason in SkipReason::ALL {
            let n = r.skipped_for(reason);
            if n > 0 {
                line(format!("  {:<18}{n}", reason.as_str()));
            }
        }
        line(format!("span        {} s", secs_string(self.span_micros)));
        if let Some([p50, p90, p99, max]) = self.duration {
            line(format!(
                "duration    p50 {} s, p90 {} s, p99 {} s, max {} s",
                secs_string(p50),
                secs_string(p90),
                secs_string(p99),
                secs_string(max)
            ));
        }
        line("GPUs per job".to_string());
        for (g, n) in &self.gpus {
            line(format!("  {:<18}{n}", gpu_string(*g)));
        }
        line("jobs per queue".to_string());
        for (q, n) in &self.queues {
            line(format!("  {q:<18}{n}"));
        }
        if !r.statuses.is_empty() {
            line("jobs per trace status".to_string());
            for (st, n) in &r.statuses {
                line(format!("  {st:<18}{n}"));
            }
        }
        if !r.notes.is_empty() {
            line("lossy conversions".to_string());
            for (k, n) in &r.notes {
                line(format!("  {k:<18}{n}"));
            }
        }
        s
    }
}

/// The request trace format `args` names (or its file's name suggests, when
/// none is given): such a trace is inspected as a demand, not as jobs.
pub fn request_format(args: &TraceArgs) -> Option<lahar_traces::requests::RequestFormat> {
    use lahar_traces::requests::RequestFormat;
    match &args.format {
        Some(name) => RequestFormat::from_name(name),
        None => RequestFormat::guess(&args.path).filter(|_| Format::guess(&args.path).is_none()),
    }
}

/// What `lahar trace inspect` reports of a request trace.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestInspection {
    /// The format.
    pub format: lahar_traces::requests::RequestFormat,
    /// The file.
    pub path: PathBuf,
    /// Data rows read, requests kept, rows skipped.
    pub rows: u64,
    /// Requests read.
    pub requests: u64,
    /// Rows skipped as malformed.
    pub skipped: u64,
    /// First to last request (µs).
    pub span_micros: u64,
    /// The most requests in one minute (from the first request).
    pub peak_per_minute: u64,
    /// Prompt tokens: p50, p90, p99, max.
    pub input_tokens: Option<[u64; 4]>,
    /// Generated tokens: p50, p90, p99, max.
    pub output_tokens: Option<[u64; 4]>,
    /// Prompt tokens: over all requests, and the most in one minute (from the
    /// first request).
    pub input_sum: (u64, u64),
    /// Generated tokens: over all requests, and the most in one minute.
    pub output_sum: (u64, u64),
}

/// Reads a request trace and summarizes it.
pub fn inspect_requests(
    args: &TraceArgs,
    format: lahar_traces::requests::RequestFormat,
) -> Result<RequestInspection, CmdError> {
    let t = lahar_traces::requests::read_requests(format, &args.path, args.strict)
        .map_err(|e| CmdError::Input(e.to_string()))?;
    let pct = |v: &[u32]| {
        let mut v: Vec<u64> = v.iter().map(|&x| u64::from(x)).collect();
        v.sort_unstable();
        (!v.is_empty()).then(|| [percentile(&v, 50), percentile(&v, 90), percentile(&v, 99), v[v.len() - 1]])
    };
    use lahar_traces::requests::Tokens;
    // Per minute, walked in time order (a trace's span bounds nothing).
    let sums = |which: Tokens| t.sum_and_peak(60_000_000, Some(which));
    Ok(RequestInspection {
        input_sum: sums(Tokens::Input),
        output_sum: sums(Tokens::Output),
        format,
        path: args.path.clone(),
        rows: t.rows,
        requests: t.at_us.len() as u64,
        skipped: t.skipped,
        span_micros: t.span_us(),
        peak_per_minute: t.sum_and_peak(60_000_000, None).1,
        input_tokens: pct(&t.input_tokens),
        output_tokens: pct(&t.output_tokens),
    })
}

impl RequestInspection {
    /// Requests per second over the span (`None` under two requests).
    pub fn mean_rate(&self) -> Option<f64> {
        (self.requests > 1 && self.span_micros > 0).then(|| (self.requests - 1) as f64 * 1e6 / self.span_micros as f64)
    }

    /// Tokens per second over the span (`None` without a span): (sum, busiest
    /// minute) → (mean, busiest minute's / 60).
    fn token_rates(&self, (sum, peak): (u64, u64)) -> (Option<f64>, f64) {
        ((self.span_micros > 0).then(|| sum as f64 * 1e6 / self.span_micros as f64), peak as f64 / 60.0)
    }

    /// The summary as one JSON object: `format`, `path`, `rows_read`, `requests`,
    /// `skipped`, `span_s`, `mean_rps`, `peak_rps_1m` (the busiest minute's
    /// requests / 60), `input_tokens` and `output_tokens` (`p50`, `p90`, `p99`,
    /// `max`, and `sum`, `mean_per_s` — the sum over the span — and `peak_per_s_1m`,
    /// the busiest minute's / 60: what a service in tokens is offered).
    pub fn to_json(&self) -> serde_json::Value {
        let pct = |p: &Option<[u64; 4]>, sums: (u64, u64)| match p {
            Some([a, b, c, d]) => {
                let (mean, peak) = self.token_rates(sums);
                serde_json::json!({"p50": a, "p90": b, "p99": c, "max": d, "sum": sums.0, "mean_per_s": mean, "peak_per_s_1m": peak})
            }
            None => serde_json::Value::Null,
        };
        serde_json::json!({
            "format": self.format.name(),
            "path": self.path.display().to_string(),
            "rows_read": self.rows,
            "requests": self.requests,
            "skipped": self.skipped,
            "span_s": secs(self.span_micros),
            "mean_rps": self.mean_rate(),
            "peak_rps_1m": self.peak_per_minute as f64 / 60.0,
            "input_tokens": pct(&self.input_tokens, self.input_sum),
            "output_tokens": pct(&self.output_tokens, self.output_sum),
        })
    }

    /// The summary for a terminal.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let mut line = |t: String| {
            s.push_str(&t);
            s.push('\n');
        };
        line(format!("{} ({}, requests)", self.path.display(), self.format.name()));
        line(format!("rows read       {}", self.rows));
        line(format!("requests        {}", self.requests));
        line(format!("skipped         {}", self.skipped));
        line(format!("span            {} s", secs_string(self.span_micros)));
        if let Some(r) = self.mean_rate() {
            line(format!("mean rate       {r:.3} requests/s"));
        }
        line(format!(
            "busiest minute  {} requests ({:.3}/s)",
            self.peak_per_minute,
            self.peak_per_minute as f64 / 60.0
        ));
        for (name, p, sums) in [
            ("input tokens", &self.input_tokens, self.input_sum),
            ("output tokens", &self.output_tokens, self.output_sum),
        ] {
            if let Some([a, b, c, d]) = p {
                line(format!("{name:<16}p50 {a}, p90 {b}, p99 {c}, max {d}"));
                let (mean, peak) = self.token_rates(sums);
                let mean = mean.map_or(String::new(), |m| format!("mean {m:.1}/s, "));
                line(format!("{:<16}{} in all, {mean}busiest minute {peak:.1}/s", "", sums.0));
            }
        }
        s
    }
}

/// Converts a trace to lahar's canonical CSV at `out` (jobs in the importer's
/// streaming order, queues written by the trace's queue names). Returns the report.
pub fn convert(args: &TraceArgs, out: &Path) -> Result<ImportReport, CmdError> {
    let format = args.format()?;
    let interner = QueueInterner::new();
    let opts = args.options(&interner)?;
    // Creating the output would truncate the input.
    if out.exists() && same_file(out, &args.path) {
        return Err(CmdError::Input(format!("--out {} is the input file", out.display())));
    }
    // Written beside `out` and renamed over it only when whole: a missing or bad
    // input, or a full disk, leaves an earlier `out` as it was.
    let file = lahar_core::util::files::AtomicFile::create(out)
        .map_err(|e| CmdError::Output(format!("cannot create {}: {e}", out.display())))?;
    // Queue names are learnt as the importer meets them: ids are dense and never
    // change, so the writer's list is refreshed only when a job has a new id.
    let mut writer =
        CanonicalWriter::new(file, Vec::new()).map_err(|e| CmdError::Output(format!("{}: {e}", out.display())))?;
    let result = lahar_traces::stream(format, &args.path, &opts, &mut |job| {
        let names = writer.queue_names_mut();
        if job.queue.0 as usize >= names.len() {
            *names = interner.names();
        }
        writer.write_job(&job).map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
    });
    let report = match result {
        Ok(r) => r,
        // The temporary file goes with the writer.
        Err(e) => return Err(CmdError::Input(e.to_string())),
    };
    let w = writer.finish().map_err(|e| CmdError::Output(format!("{}: {e}", out.display())))?;
    w.commit().map_err(|e| CmdError::Output(format!("cannot write {}: {e}", out.display())))?;
    Ok(report)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
