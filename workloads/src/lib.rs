//! # lahar-workloads
//!
//! Workload sources that are not recorded traces: seeded synthetic generators
//! and Kubernetes manifest import ([`manifest`]).
//! Every generator draws only from named [`RngStreams`](lahar_core::util::rng::RngStreams)
//! sub-streams, so the same seed gives the same jobs on any machine.

pub mod cron;
pub mod synthetic;

pub use synthetic::{Arrival, DurationDist, IntervalDist, SyntheticSpec, generate, model_choices};
pub mod manifest;
