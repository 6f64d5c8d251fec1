//! # lahar-reports
//!
//! What a run tells: per-job and per-pod records, timeseries and decisions as CSV,
//! and the headline metrics as `summary.json`.
//!
//! All times are written as exact decimal seconds since the start of the run
//! (rendered from integer microseconds); rows are sorted by stable keys, never by
//! hash order, so the same run gives byte-identical files.

pub mod metrics;
pub mod write;

pub use metrics::{JobRow, Summary, job_rows, summarize};
pub use write::{RunMeta, write_all};
