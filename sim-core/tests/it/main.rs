//! sim-core's integration tests, in one binary (one link instead of four).

mod calibration;
mod common;
mod elastic;
mod engine;
mod faults;
