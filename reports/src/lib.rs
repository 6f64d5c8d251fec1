//! # lahar-reports
//!
//! What a run tells: per-job and per-pod records, timeseries and decisions as CSV,
//! the headline metrics as `summary.json` and `summary.csv` (formulas in
//! docs/metrics.md), plots (SVG and PNG), run comparison and a self-contained
//! HTML report.
//!
//! All times are written as exact decimal seconds since the start of the run
//! (rendered from integer microseconds); rows come in the order the run made them
//! or by stable keys, never by hash order, so the same run gives byte-identical
//! files.

pub mod accumulate;
pub mod compare;
pub mod faults;
pub mod headline;
pub mod html;
pub mod labels;
pub mod load;
pub mod metrics;
pub mod numbers;
pub mod operations;
pub mod outputs;
pub mod parquet;
mod pipe;
pub mod plots;
pub mod schema;
pub mod services;
pub mod sink;
pub mod stream;
pub mod summary;
pub mod sweep_plot;
pub mod timeline;
pub mod write;

pub use metrics::{JobRow, Summary, SummaryOptions, job_rows, summarize, summarize_with};
pub use outputs::Outputs;
pub use sink::{Dest, Tables};
pub use stream::RunWriter;
pub use write::{
    DecisionWriter, Interrupted, KeptDecisions, RunMeta, WarningRecord, decision_fields, summary_json, write_explain,
    write_summary,
};
