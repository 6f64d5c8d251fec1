//! The fault outputs of a run with `spec.faults`: events.csv (one row per
//! failure, repair and drain step) and summary.json's `faults` section.

use crate::summary::{FaultSummary, Summary};
use crate::write::push_milli;
use lahar_core::engine::FaultRecord;
use lahar_core::model::job::JobPhase;
use lahar_core::util::text::push_u64;
use lahar_core::util::time::push_secs;
use lahar_core::world::{Job, World};
use std::io;

/// events.csv's columns ([`crate::schema::EVENTS`]).
pub const EVENT_COLUMNS: [&str; 8] = crate::schema::header(&crate::schema::EVENTS);

/// Counts a run's fault records and jobs as they come.
#[derive(Debug, Default)]
pub struct FaultTally {
    s: FaultSummary,
    lost_us: u128,
    /// Unavailable milli-GPUs since `since` (µs), integrated into `gpu_milli_us`.
    level: i64,
    since: u64,
    gpu_milli_us: i128,
}

impl FaultTally {
    /// A fault record.
    pub fn record(&mut self, r: &FaultRecord) {
        let t = r.t.micros();
        self.gpu_milli_us += self.level as i128 * (t - self.since) as i128;
        self.since = t;
        match r.event {
            "fail" => {
                self.s.failures += 1;
                self.s.pods_killed += r.pods as u64;
                self.level += r.gpu_milli;
            }
            "cordon" => {
                self.s.drains += 1;
                self.level += r.gpu_milli;
            }
            "evict" => self.s.pods_drained += r.pods as u64,
            _ => self.level -= r.gpu_milli,
        }
    }

    /// A job that ended, or is unfinished at the end.
    pub fn job(&mut self, job: &Job) {
        self.s.restarts += job.retries as u64;
        self.s.jobs_failed += u64::from(job.phase == JobPhase::Failed);
        self.lost_us += job.progress.lost_to_faults_gpu_us;
    }

    /// The section, for a run that ended at `end` with `summary`.
    pub fn finish(mut self, end: u64, summary: &Summary) -> FaultSummary {
        self.gpu_milli_us += self.level as i128 * end.saturating_sub(self.since) as i128;
        self.s.gpu_hours_unavailable = self.gpu_milli_us as f64 / 1000.0 / 3.6e9;
        self.s.gpu_hours_lost_to_failures = self.lost_us as f64 / 3.6e9;
        let held = summary.gpu_allocation_rate;
        self.s.goodput = if held > 0.0 { (summary.gpu_time.useful / held).clamp(0.0, 1.0) } else { 1.0 };
        self.s
    }
}

/// The fault section of a run held in memory.
pub fn summarize(records: &[FaultRecord], world: &World, end: u64, summary: &Summary) -> FaultSummary {
    let mut t = FaultTally::default();
    for r in records {
        t.record(r);
    }
    for job in world.jobs.iter() {
        t.job(job);
    }
    t.finish(end, summary)
}

/// Writes events.csv's rows as they come.
pub struct EventWriter {
    csv: crate::pipe::Csv,
    row: [String; 8],
}

impl EventWriter {
    /// Creates events.csv at `dest` with its header.
    pub fn create(dest: crate::sink::Dest) -> io::Result<EventWriter> {
        let csv = crate::pipe::csv_at(dest, "events.csv", &EVENT_COLUMNS)?;
        Ok(EventWriter { csv, row: Default::default() })
    }

    /// Formats the rows on the run's thread (see [`crate::RunWriter::format_rows_here`]).
    pub(crate) fn format_here(&mut self) {
        self.csv.format_here();
    }

    /// One row.
    pub fn write(&mut self, r: &FaultRecord) -> io::Result<()> {
        for f in self.row.iter_mut() {
            f.clear();
        }
        use crate::schema::{EVENTS, at};
        let row = &mut self.row;
        push_secs(&mut row[const { at(&EVENTS, "t_s") }], r.t.micros());
        row[const { at(&EVENTS, "event") }].push_str(r.event);
        row[const { at(&EVENTS, "scope") }].push_str(r.scope);
        row[const { at(&EVENTS, "target") }].push_str(&r.target);
        push_u64(&mut row[const { at(&EVENTS, "nodes") }], r.nodes.into());
        push_milli(&mut row[const { at(&EVENTS, "gpus") }], r.gpu_milli);
        push_u64(&mut row[const { at(&EVENTS, "pods") }], r.pods.into());
        row[const { at(&EVENTS, "cause") }].push_str(&r.cause);
        self.csv.write_record(&self.row)
    }

    /// Flushes the file (a buffer's bytes are returned).
    pub fn finish(self) -> io::Result<Option<Vec<u8>>> {
        self.csv.close()
    }
}
