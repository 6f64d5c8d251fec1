//! Benchmarks live in benches/; this library holds what they share with the
//! `scale-scenario` tool: the generated scenarios of issue 11's scale runs.

pub mod scale;
