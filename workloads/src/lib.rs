//! # lahar-workloads
//!
//! Workload sources that are not recorded traces: seeded synthetic generators
//! (and, as the project grows, the model catalog and manifest import).
//! Every generator draws only from named [`RngStreams`](lahar_core::rng::RngStreams)
//! sub-streams, so the same seed gives the same jobs on any machine.

pub mod synthetic;

pub use synthetic::{DurationDist, SyntheticSpec, generate};
