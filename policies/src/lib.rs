//! # lahar-policies
//!
//! Scheduling policies behind lahar's [`Scheduler`](lahar_core::session::Scheduler)
//! interface. This crate holds the gang-aware FIFO scheduler that every scenario can
//! fall back on; Volcano's actions and plugins and the research baselines build on
//! the same Session API.

pub mod gang_fifo;

pub use gang_fifo::GangFifo;

use lahar_core::session::Scheduler;

/// Why a scheduler could not be built from its name or configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// No baseline of that name.
    #[error("unknown scheduler baseline `{0}`; expected one of: {known}", known = BASELINES.join(", "))]
    UnknownBaseline(String),
}

/// Baselines selectable with `scheduler: {baseline: NAME}`.
pub const BASELINES: &[&str] = &["gang-fifo", "gang-fifo-strict"];

/// Builds a baseline scheduler by name.
pub fn baseline(name: &str) -> Result<Box<dyn Scheduler>, PolicyError> {
    match name {
        "gang-fifo" => Ok(Box::new(GangFifo::new(false))),
        "gang-fifo-strict" => Ok(Box::new(GangFifo::new(true))),
        other => Err(PolicyError::UnknownBaseline(other.to_string())),
    }
}
