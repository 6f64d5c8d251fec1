//! What an import did: rows read, jobs made, rows skipped by reason.

use std::collections::BTreeMap;
use std::path::PathBuf;

use lahar_core::model::job::JobSpec;
use lahar_core::util::time::SimTime;

use crate::Format;
use crate::error::{Location, SkipReason};

/// Summary of one import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportReport {
    /// Format read.
    pub format: Format,
    /// File read (or the name given for a reader).
    pub path: PathBuf,
    /// Data rows read (header and comment lines excluded; for Philly, jobs in the
    /// array). Rows skipped as malformed count too.
    pub rows_read: u64,
    /// Jobs produced.
    pub jobs: u64,
    /// Pods over all produced jobs.
    pub pods: u64,
    /// Skipped rows (or jobs, for formats that group rows) by reason.
    pub skipped: BTreeMap<SkipReason, u64>,
    /// The first skipped row of each reason (rows skipped for being before the time
    /// origin have none: they are counted after reading) and why it was skipped.
    pub first_skipped: BTreeMap<SkipReason, (Location, String)>,
    /// Produced jobs by the trace's own status (`completed`, `Failed`, `Pass`...).
    pub statuses: BTreeMap<String, u64>,
    /// Lossy conversions applied to produced jobs (e.g. a dropped multi-model GPU
    /// constraint), by kind.
    pub notes: BTreeMap<String, u64>,
    /// Time origin used, in microseconds of the trace's own clock: job submit times
    /// are `trace submit - origin`.
    pub origin_micros: i64,
    /// Earliest submit time of a produced job (relative to the origin).
    pub first_submit: Option<SimTime>,
    /// Latest submit time of a produced job (relative to the origin).
    pub last_submit: Option<SimTime>,
}

impl ImportReport {
    pub(crate) fn new(format: Format, path: PathBuf) -> ImportReport {
        ImportReport {
            format,
            path,
            rows_read: 0,
            jobs: 0,
            pods: 0,
            skipped: BTreeMap::new(),
            first_skipped: BTreeMap::new(),
            statuses: BTreeMap::new(),
            notes: BTreeMap::new(),
            origin_micros: 0,
            first_submit: None,
            last_submit: None,
        }
    }

    /// Total skipped over all reasons.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }

    /// Skipped count for one reason (0 if none).
    pub fn skipped_for(&self, reason: SkipReason) -> u64 {
        self.skipped.get(&reason).copied().unwrap_or(0)
    }

    /// Records a produced job.
    pub(crate) fn count_job(&mut self, job: &JobSpec, status: &str) {
        self.jobs += 1;
        self.pods += u64::from(job.total_replicas());
        *self.statuses.entry(status.to_string()).or_default() += 1;
        self.first_submit = Some(self.first_submit.map_or(job.submit, |t| t.min(job.submit)));
        self.last_submit = Some(self.last_submit.map_or(job.submit, |t| t.max(job.submit)));
    }
}

/// Jobs and report of a whole-file import.
#[derive(Clone, Debug, PartialEq)]
pub struct Imported {
    /// Jobs, sorted by submit time (stable: file order breaks ties).
    pub jobs: Vec<JobSpec>,
    /// Summary.
    pub report: ImportReport,
}
