//! Synthetic sources as written in a scenario: the parsed distributions reach the
//! generator unchanged.

use lahar_core::model::queue::QueueId;
use lahar_core::util::rng::RngStreams;
use lahar_core::util::time::{SimDuration, SimTime};
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
        estimate_factor: None,
        elastic: None,
        priority: 0,
        model_weights: vec![],
    };
    let want = generate(&spec, &RngStreams::new(5));
    assert_eq!(s.jobs(), want);
    assert!(s.jobs().iter().all(|j| (300..=86400).contains(&(j.duration.micros() / 1_000_000))));
}

/// A burst source: 2 bursts of 2 jobs, 30 minutes apart, no jitter.
#[test]
fn bursts_source_submits_in_bursts() {
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 64, memory: 256Gi, gpus: 8}",
        "  workload:\n    - synthetic: {jobs: 4, start: 10m, arrival: {bursts: {size: 2, every: 30m}}, gpus: {1: 1}, duration: {lognormal: {median: 1h, sigma: 0}}}\n",
    );
    let s = lahar::scenario::load_str(&text, "t.yaml", Path::new("")).unwrap_or_else(|e| panic!("{e}"));
    let t: Vec<u64> = s.jobs().iter().map(|j| j.submit.micros() / 1_000_000).collect();
    assert_eq!(t, [600, 600, 2400, 2400]);
    assert!(s.jobs().iter().all(|j| j.duration == SimDuration::from_secs(3600)));
}

const NODE: &str = "    nodes:\n      - {name: n0, cpu: 64, memory: 256Gi, gpus: 8}";

fn load(text: &str) -> lahar::scenario::Scenario {
    lahar::scenario::load_str(text, "t.yaml", Path::new("")).unwrap_or_else(|e| panic!("{e}"))
}

fn base_spec(jobs: u32) -> SyntheticSpec {
    SyntheticSpec {
        source: 0,
        name_prefix: "syn0".into(),
        jobs,
        start: SimTime::ZERO,
        arrival: Arrival::Poisson { rate_per_hour: 6.0 },
        gpus: vec![(1, 1.0), (8, 1.0)],
        gpus_per_pod: 8,
        cpu_milli_per_gpu: 1000,
        memory_per_gpu: 4 << 30,
        duration: DurationDist::LogNormal {
            median: SimDuration::from_secs(3600),
            sigma: 1.0,
            min: SimDuration::from_secs(1),
            max: SimDuration::from_secs(365 * 86400),
        },
        queues: vec![(QueueId(0), 1.0)],
        checkpoint_interval: None,
        estimate_factor: None,
        elastic: None,
        priority: 0,
        model_weights: vec![],
    }
}

const SOURCE: &str =
    "jobs: 40, arrival: {poisson: {ratePerHour: 6}}, gpus: {1: 1, 8: 1}, duration: {lognormal: {median: 1h, sigma: 1}}";

/// `models:` gives each job a catalog model drawn on the `synthetic/models` stream
/// (names in map order: llama-7b, resnet-50); the jobs are those without a mix.
#[test]
fn model_mix_picks_a_catalog_model_per_job() {
    let s = load(&scenario(
        NODE,
        &format!("  seed: 3\n  workload:\n    - synthetic: {{{SOURCE}, models: {{resnet-50: 1, llama-7b: 3}}}}\n"),
    ));
    let plain = load(&scenario(NODE, &format!("  seed: 3\n  workload:\n    - synthetic: {{{SOURCE}}}\n")));
    assert_eq!(s.jobs(), plain.jobs(), "a model mix does not change the jobs");
    let mut spec = base_spec(40);
    spec.model_weights = vec![3.0, 1.0];
    let picks = lahar_workloads::model_choices(&spec, &RngStreams::new(3));
    let models = s.models();
    let names: Vec<&str> = models.iter().map(|m| m.as_ref().unwrap().name.as_str()).collect();
    let want: Vec<&str> = picks.iter().map(|&k| ["llama-7b", "resnet-50"][k]).collect();
    assert_eq!(names, want);
    assert!(names.contains(&"resnet-50") && names.contains(&"llama-7b"));
    assert!(plain.models().iter().all(Option::is_none));
}

/// `checkpointInterval: {uniform: ...}` draws per job; a fixed one is copied.
#[test]
fn checkpoint_interval_distributions_from_yaml() {
    let s = load(&scenario(
        NODE,
        &format!(
            "  seed: 3\n  workload:\n    - synthetic: {{{SOURCE}, checkpointInterval: {{uniform: {{min: 10m, max: 30m}}}}}}\n"
        ),
    ));
    let mut spec = base_spec(40);
    spec.checkpoint_interval = Some(lahar_workloads::IntervalDist::Uniform {
        min: SimDuration::from_secs(600),
        max: SimDuration::from_secs(1800),
    });
    assert_eq!(s.jobs(), generate(&spec, &RngStreams::new(3)));
    let distinct: std::collections::BTreeSet<_> = s.jobs().iter().map(|j| j.checkpoint_interval).collect();
    assert!(distinct.len() > 30, "intervals vary per job");
    let s = load(&scenario(NODE, &format!("  workload:\n    - synthetic: {{{SOURCE}, checkpointInterval: 20m}}\n")));
    assert!(s.jobs().iter().all(|j| j.checkpoint_interval == Some(SimDuration::from_secs(1200))));
}

/// Diurnal arrivals and `gpus: philly` load into exactly the generator's jobs.
#[test]
fn diurnal_arrivals_and_philly_gpus_from_yaml() {
    let mut rates = vec!["2"; 24];
    rates[9..18].fill("12");
    let text = scenario(
        NODE,
        &format!(
            "  seed: 11\n  workload:\n    - synthetic: {{jobs: 60, arrival: {{diurnal: {{ratePerHour: [{}], weekly: [1, 1, 1, 1, 1, 0.25, 0.25]}}}}, gpus: philly, duration: {{lognormal: {{median: 1h, sigma: 1}}}}}}\n",
            rates.join(", ")
        ),
    );
    let s = load(&text);
    let mut r = [2.0; 24];
    r[9..18].fill(12.0);
    let mut spec = base_spec(60);
    spec.arrival = Arrival::Diurnal { rate_per_hour: r, weekly: [1.0, 1.0, 1.0, 1.0, 1.0, 0.25, 0.25] };
    spec.gpus = vec![(1, 70.0), (2, 10.0), (4, 15.0), (8, 5.0)];
    assert_eq!(s.jobs(), generate(&spec, &RngStreams::new(11)));
    // Office hours (9–18, rate 12) get most of the 60 arrivals: 108 of the 138 jobs/day expected.
    let office = s.jobs().iter().filter(|j| (9..18).contains(&((j.submit.micros() / 3_600_000_000) % 24))).count();
    assert!(office >= 40, "{office} of 60 in office hours");
}

/// `duration: {empirical: ...}` reads the run times of a trace next to the scenario
/// (here a 3-job SWF file: 100 s, 2000 s, 50,000 s) and draws among them.
#[test]
fn empirical_durations_from_a_trace_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("traces")).unwrap();
    std::fs::write(
        dir.path().join("traces/t.swf"),
        "1 0 0 100 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n2 10 0 2000 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n3 20 0 50000 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    let text = scenario(
        NODE,
        "  seed: 4\n  workload:\n    - synthetic: {jobs: 30, arrival: {poisson: {ratePerHour: 6}}, gpus: {1: 1, 8: 1}, duration: {empirical: {trace: traces/t.swf, format: swf, max: 10h}}}\n",
    );
    let s = lahar::scenario::load_str(&text, "s.yaml", dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let mut spec = base_spec(30);
    spec.duration = DurationDist::Empirical {
        durations: [100, 2000, 50_000].iter().map(|&x| SimDuration::from_secs(x)).collect(),
        min: SimDuration::from_secs(1),
        max: SimDuration::from_secs(36_000),
    };
    assert_eq!(s.jobs(), generate(&spec, &RngStreams::new(4)));
    for secs in [100, 2000, 36_000] {
        assert!(s.jobs().iter().any(|j| j.duration == SimDuration::from_secs(secs)), "{secs} s drawn");
    }
}

/// examples/synthetic-mix.yaml: diurnal arrivals, Philly GPU counts, openb run times,
/// a model mix and per-job checkpoint intervals, all in one run that completes.
#[test]
fn synthetic_mix_example_uses_every_knob() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/synthetic-mix.yaml");
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.jobs().len(), 400);
    let sizes: std::collections::BTreeSet<i64> = s.jobs().iter().map(|j| j.total_gpus()).collect();
    assert_eq!(sizes.into_iter().collect::<Vec<_>>(), [1, 2, 4, 8]);
    let profiles = s.models();
    let models: std::collections::BTreeSet<&str> =
        profiles.iter().map(|m| m.as_ref().expect("every job has a model").name.as_str()).collect();
    assert_eq!(models.len(), 4);
    assert!(s.jobs().iter().all(|j| (1200..=3600).contains(&(j.checkpoint_interval.unwrap().micros() / 1_000_000))));
    assert!(s.jobs().iter().all(|j| (60..=172_800).contains(&(j.duration.micros() / 1_000_000))));
    // 108 of the 133 jobs of a day are expected in hours 9–17.
    let office = s.jobs().iter().filter(|j| (9..18).contains(&((j.submit.micros() / 3_600_000_000) % 24))).count();
    assert!(office >= 280, "{office} of 400 in office hours");
    let r = lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).expect("run");
    assert!(r.rows().iter().all(|row| row.state == "Completed"));
}
