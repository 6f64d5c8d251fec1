//! # lahar-traces
//!
//! Importers of recorded cluster traces into lahar [`JobSpec`]s, and lahar's own
//! canonical trace CSV (read and write).
//!
//! | format | module | one job is |
//! |---|---|---|
//! | Standard Workload Format (Parallel Workloads Archive) | [`swf`] | a record |
//! | Alibaba GPU v2023 "openb" pod list | [`openb`] | a pod |
//! | Microsoft Philly `cluster_job_log` | [`philly`] | a job object |
//! | Alibaba PAI 2020 `pai_task_table` | [`pai`] | the tasks of a job |
//! | SenseTime Helios `cluster_log.csv` | [`helios`] | a row |
//! | lahar canonical CSV | [`canonical`] | consecutive rows of a job |
//!
//! Inference request traces (the Azure LLM inference trace, BurstGPT) are read by
//! [`requests`]: they are a service's demand, not jobs.
//!
//! Contracts:
//! - **Streaming.** Files are read row by row (CSV records, SWF lines, one JSON array
//!   element at a time); memory grows with the jobs kept, not with the file.
//!   [`stream`] keeps nothing (the PAI importer alone must hold partial jobs until the
//!   end, because a job's tasks may be anywhere in the file).
//! - **Time.** Submit times become [`SimTime`]s relative to
//!   a [`TimeOrigin`]: by default the earliest submit among the jobs produced.
//! - **Skip policy.** A row that cannot become a job is skipped and counted by
//!   [`SkipReason`] in the [`ImportReport`]. With `strict`, an *invalid* row
//!   ([`SkipReason::is_invalid`]) aborts the import with an [`ImportError::Row`]
//!   naming the file, line and row; valid rows that lahar cannot replay (never
//!   started, zero duration...) are counted in both modes.
//! - **Gangs.** Every job needs all its pods (`minAvailable` = pods); task priority 1,
//!   job priority 0, `maxRetry` 3, no policies; `minResources` computed as Volcano's
//!   controller does.
//! - **Determinism.** Output order and reports depend only on the file's bytes.
//!
//! Field mappings per format are in each module and in `docs/traces.md`.
//!
//! ```no_run
//! use lahar_traces::{Format, ImportOptions, import};
//! let out = import(Format::Swf, "KTH-SP2.swf".as_ref(), &ImportOptions::default())?;
//! println!("{} jobs, {} skipped", out.report.jobs, out.report.skipped_total());
//! # Ok::<(), lahar_traces::ImportError>(())
//! ```

pub mod canonical;
mod ctx;
mod error;
pub mod helios;
pub mod openb;
mod options;
pub mod pai;
mod parse;
pub mod philly;
mod report;
pub mod requests;
pub mod swf;
mod table;

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use lahar_core::model::job::JobSpec;
use lahar_core::util::time::SimTime;

pub use ctx::{GPU_MODEL_LABEL, MAX_PODS_PER_JOB};
pub use error::{ImportError, Location, SkipReason, WriteError};
pub use options::{ImportOptions, OpenbOptions, QueueInterner, QueueKey, QueueMapping, SwfOptions, TimeOrigin};
pub use report::{ImportReport, Imported};

use ctx::{Ctx, RawJob};

/// A trace format this crate imports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// Standard Workload Format (`*.swf`).
    Swf,
    /// Alibaba openb pod list (`openb_pod_list_*.csv`), full or reduced schema.
    Openb,
    /// Microsoft Philly `cluster_job_log` (JSON).
    Philly,
    /// Alibaba PAI 2020 `pai_task_table.csv` (headerless).
    Pai,
    /// SenseTime Helios `cluster_log.csv`.
    Helios,
    /// lahar's canonical trace CSV.
    Canonical,
}

/// One trace format: how the command line names it, what a file of it is, how
/// to recognise one by its name, and its reader. Each reader's module declares
/// its own (`SPEC`); [`FORMATS`] lists them once, and everything that names,
/// guesses or reads a format goes through it (a test holds docs/traces.md's
/// table to it).
#[derive(Clone, Copy)]
pub struct FormatSpec {
    /// The format.
    pub format: Format,
    /// The name used on the command line and in scenarios (`format:`).
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// What file it reads, as docs/traces.md's table says.
    pub file: &'static str,
    /// What one lahar job is made from.
    pub one_job: &'static str,
    /// Whether a file name looks like this format as the traces ship them.
    pub guess: fn(&str) -> bool,
    /// The reader: every row of `input` to the context's sink.
    pub(crate) read: fn(&mut dyn BufRead, &mut Ctx<'_>) -> Result<(), ImportError>,
}

/// Every format, in the order docs and messages list them.
pub const FORMATS: [FormatSpec; 6] = [swf::SPEC, openb::SPEC, philly::SPEC, pai::SPEC, helios::SPEC, canonical::SPEC];

impl Format {
    /// Every format.
    pub const ALL: [Format; 6] = {
        let mut all = [Format::Swf; 6];
        let mut i = 0;
        while i < FORMATS.len() {
            all[i] = FORMATS[i].format;
            i += 1;
        }
        all
    };

    /// Its entry in [`FORMATS`].
    pub fn spec(self) -> &'static FormatSpec {
        FORMATS.iter().find(|s| s.format == self).expect("every format is in FORMATS")
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Parses [`Format::name`] or one of its aliases (`canonical` for `lahar`).
    pub fn from_name(s: &str) -> Option<Format> {
        FORMATS.iter().find(|f| f.name == s || f.aliases.contains(&s)).map(|f| f.format)
    }

    /// Guesses the format from a file name as the traces ship them (`*.swf`,
    /// `openb_pod_list_*`, `cluster_job_log*`, `pai_task_table*`, `cluster_log*`).
    /// `None` when unsure; canonical files are never guessed.
    pub fn guess(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?;
        FORMATS.iter().find(|f| (f.guess)(name)).map(|f| f.format)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Imports a whole file: jobs sorted by submit time (stable) and a report.
pub fn import(format: Format, path: &Path, opts: &ImportOptions) -> Result<Imported, ImportError> {
    let mut input = open(path)?;
    import_reader(format, &mut input, path, opts)
}

/// Like [`import`], from any reader; `name` is used in messages and the report.
pub fn import_reader(
    format: Format,
    input: &mut dyn BufRead,
    name: &Path,
    opts: &ImportOptions,
) -> Result<Imported, ImportError> {
    let mut raws = Vec::new();
    let mut report = read_pass(format, input, name, opts, &mut |raw, _| {
        raws.push(raw);
        Ok(())
    })?;
    report.origin_micros = match opts.origin {
        TimeOrigin::EarliestSubmit => raws.iter().map(|r| r.submit_micros).min().unwrap_or(0),
        TimeOrigin::At(secs) => explicit_origin(secs, name)?,
    };
    let mut jobs = Vec::with_capacity(raws.len());
    for raw in raws {
        if let Some(job) = admit(&mut report, raw, opts.time_scale) {
            jobs.push(job);
        }
    }
    jobs.sort_by_key(|j| j.submit);
    Ok(Imported { jobs, report })
}

/// Imports a file without keeping the jobs: each job is handed to `sink` in file
/// order (PAI: in order of each job's first task row) as soon as it is converted.
///
/// With [`TimeOrigin::EarliestSubmit`] the file is read twice (the first pass finds
/// the origin), so memory stays independent of the file's size.
pub fn stream(
    format: Format,
    path: &Path,
    opts: &ImportOptions,
    sink: &mut dyn FnMut(JobSpec) -> Result<(), Box<dyn std::error::Error + Send + Sync>>,
) -> Result<ImportReport, ImportError> {
    let origin = origin(format, path, opts)?;
    stream_from(format, path, opts, origin, sink)
}

/// The time origin of an import, in µs on the file's clock: the explicit origin,
/// or the earliest submit time of the jobs read (one pass over the file).
pub fn origin(format: Format, path: &Path, opts: &ImportOptions) -> Result<i64, ImportError> {
    match opts.origin {
        TimeOrigin::At(secs) => explicit_origin(secs, path),
        TimeOrigin::EarliestSubmit => {
            let mut earliest: Option<i64> = None;
            read_pass(format, &mut open(path)?, path, opts, &mut |raw, _| {
                earliest = Some(earliest.map_or(raw.submit_micros, |e| e.min(raw.submit_micros)));
                Ok(())
            })?;
            Ok(earliest.unwrap_or(0))
        }
    }
}

/// Like [`stream`], with the time origin (µs on the file's clock, see [`origin`])
/// already known: one pass over the file.
pub fn stream_from(
    format: Format,
    path: &Path,
    opts: &ImportOptions,
    origin: i64,
    sink: &mut dyn FnMut(JobSpec) -> Result<(), Box<dyn std::error::Error + Send + Sync>>,
) -> Result<ImportReport, ImportError> {
    admitted_pass(format, path, opts, origin, &mut |job, _| {
        sink(job).map_err(|source| ImportError::Sink { path: path.to_path_buf(), source })
    })
}

/// One pass over the file with the time origin known: the jobs [`stream_from`]
/// hands on, each with where it is, go to `sink`; the report counts them.
fn admitted_pass(
    format: Format,
    path: &Path,
    opts: &ImportOptions,
    origin: i64,
    sink: &mut dyn FnMut(JobSpec, Location) -> Result<(), ImportError>,
) -> Result<ImportReport, ImportError> {
    let mut counts = ImportReport::new(format, path.to_path_buf());
    counts.origin_micros = origin;
    let mut report = read_pass(format, &mut open(path)?, path, opts, &mut |raw, at| match admit(
        &mut counts,
        raw,
        opts.time_scale,
    ) {
        Some(job) => sink(job, at),
        None => Ok(()),
    })?;
    report.origin_micros = origin;
    report.jobs = counts.jobs;
    report.pods = counts.pods;
    report.statuses = counts.statuses;
    report.first_submit = counts.first_submit;
    report.last_submit = counts.last_submit;
    for (reason, n) in counts.skipped {
        *report.skipped.entry(reason).or_default() += n;
    }
    Ok(report)
}

/// Where jobs of a file are: the location of each job whose position among the
/// jobs [`stream_from`] hands on (file order, from 0) is in `wanted` (sorted), in
/// `wanted`'s order; one pass over the file. For messages about a job found later
/// (a name used twice), without keeping every job's location.
pub fn locate(
    format: Format,
    path: &Path,
    opts: &ImportOptions,
    origin: i64,
    wanted: &[usize],
) -> Result<Vec<Option<Location>>, ImportError> {
    let mut found = vec![None; wanted.len()];
    let mut n = 0usize;
    admitted_pass(format, path, opts, origin, &mut |_, at| {
        if let Ok(k) = wanted.binary_search(&n) {
            found[k] = Some(at);
        }
        n += 1;
        Ok(())
    })?;
    Ok(found)
}

fn open(path: &Path) -> Result<BufReader<File>, ImportError> {
    lahar_core::util::files::open_regular(path)
        .map(|f| BufReader::with_capacity(1 << 16, f))
        .map_err(|source| ImportError::Io { path: path.to_path_buf(), source })
}

fn explicit_origin(secs: i64, path: &Path) -> Result<i64, ImportError> {
    secs.checked_mul(1_000_000).ok_or_else(|| ImportError::File {
        path: path.to_path_buf(),
        message: format!("time origin {secs} s is out of range"),
    })
}

/// One pass over the file: rows read, skips and notes; jobs go to `sink`.
fn read_pass(
    format: Format,
    input: &mut dyn BufRead,
    path: &Path,
    opts: &ImportOptions,
    sink: &mut dyn FnMut(RawJob, Location) -> Result<(), ImportError>,
) -> Result<ImportReport, ImportError> {
    let mut ctx = Ctx::new(path, opts, sink);
    (format.spec().read)(input, &mut ctx)?;
    let mut report = ImportReport::new(format, path.to_path_buf());
    report.rows_read = ctx.rows_read;
    report.skipped = std::mem::take(&mut ctx.skipped);
    report.first_skipped = std::mem::take(&mut ctx.first_skipped);
    report.notes = std::mem::take(&mut ctx.notes);
    Ok(report)
}

/// Places a job on the import's time axis (its time since the origin times
/// `scale`, rounded to the µs), or counts it as before the origin.
fn admit(report: &mut ImportReport, raw: RawJob, scale: f64) -> Option<JobSpec> {
    let rel = raw.submit_micros.checked_sub(report.origin_micros).filter(|d| *d >= 0);
    let Some(rel) = rel else {
        *report.skipped.entry(SkipReason::BeforeOrigin).or_default() += 1;
        return None;
    };
    let mut job = raw.job;
    // One IEEE multiplication and rounding: the same on every machine.
    let rel = if scale == 1.0 { rel as u64 } else { (rel as f64 * scale).round() as u64 };
    job.submit = SimTime(rel);
    report.count_job(&job, &raw.status);
    Some(job)
}
