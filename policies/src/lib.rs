//! # lahar-policies
//!
//! Scheduling policies behind lahar's [`Scheduler`]
//! interface: Volcano's actions and plugins, loaded from a real
//! `volcano-scheduler.conf` ([`volcano`]), and research baselines ([`baselines`]).

pub mod baselines;
pub mod placement;
pub mod volcano;

pub use baselines::GangFifo;

use lahar_core::session::Scheduler;

/// Why a scheduler could not be built from its name or configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// No baseline of that name.
    #[error("unknown scheduler baseline `{0}`; expected one of: {known}", known = baselines::names().collect::<Vec<_>>().join(", "))]
    UnknownBaseline(String),
}

/// Builds a baseline scheduler by name (its draws from `seed`'s streams).
pub fn baseline(name: &str, seed: u64) -> Result<Box<dyn Scheduler>, PolicyError> {
    baseline_with(name, seed, baselines::BaselineOptions::default())
}

/// [`baseline`] with the scenario's options.
pub fn baseline_with(
    name: &str,
    seed: u64,
    opts: baselines::BaselineOptions,
) -> Result<Box<dyn Scheduler>, PolicyError> {
    baselines::build_with(name, seed, opts).ok_or_else(|| PolicyError::UnknownBaseline(name.to_string()))
}
