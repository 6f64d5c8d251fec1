//! Synthetic sources as written in a scenario: the parsed distributions reach the
//! generator unchanged.

use lahar_core::queue::QueueId;
use lahar_core::rng::RngStreams;
use lahar_core::time::{SimDuration, SimTime};
use lahar_workloads::synthetic::{Arrival, DurationDist, SyntheticSpec, generate};

use super::*;

/// A Weibull source loads into exactly the jobs the generator makes from the
/// matching spec (defaults: 1 CPU and 4 GiB per GPU, 8 GPUs per pod, prefix `syn0`).
#[test]
fn weibull_source_matches_the_generator() {
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 64, memory: 256Gi, gpus: 8}",
        "  seed: 5\n  workload:\n    - synthetic: {jobs: 20, arrival: {poisson: {ratePerHour: 30}}, gpus: {1: 3, 4: 1}, duration: {weibull: {shape: 0.6, scale: 2h, min: 5m, max: 1d}}}\n",
    );
    let s = lahar::scenario::load_str(&text, "t.yaml", Path::new("")).unwrap_or_else(|e| panic!("{e}"));
    let spec = SyntheticSpec {
        source: 0,
        name_prefix: "syn0".into(),
        jobs: 20,
        start: SimTime::ZERO,
        arrival: Arrival::Poisson { rate_per_hour: 30.0 },
        gpus: vec![(1, 3.0), (4, 1.0)],
        gpus_per_pod: 8,
        cpu_milli_per_gpu: 1000,
        memory_per_gpu: 4 << 30,
        duration: DurationDist::Weibull {
            shape: 0.6,
            scale: SimDuration::from_secs(7200),
            min: SimDuration::from_secs(300),
            max: SimDuration::from_secs(86400),
        },
        queues: vec![(QueueId(0), 1.0)],
        checkpoint_interval: None,
        priority: 0,
        model_weights: vec![],
    };
    let want = generate(&spec, &RngStreams::new(5));
    assert_eq!(s.jobs, want);
    assert!(s.jobs.iter().all(|j| (300..=86400).contains(&(j.duration.micros() / 1_000_000))));
}

/// A burst source: 2 bursts of 2 jobs, 30 minutes apart, no jitter.
#[test]
fn bursts_source_submits_in_bursts() {
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 64, memory: 256Gi, gpus: 8}",
        "  workload:\n    - synthetic: {jobs: 4, start: 10m, arrival: {bursts: {size: 2, every: 30m}}, gpus: {1: 1}, duration: {lognormal: {median: 1h, sigma: 0}}}\n",
    );
    let s = lahar::scenario::load_str(&text, "t.yaml", Path::new("")).unwrap_or_else(|e| panic!("{e}"));
    let t: Vec<u64> = s.jobs.iter().map(|j| j.submit.micros() / 1_000_000).collect();
    assert_eq!(t, [600, 600, 2400, 2400]);
    assert!(s.jobs.iter().all(|j| j.duration == SimDuration::from_secs(3600)));
}
