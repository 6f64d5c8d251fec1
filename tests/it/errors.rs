//! Every bad-input path: exit code 2, a message naming file, line:column or field
//! path, and what was expected — never a panic.

use super::*;
use assert_cmd::Command;
use predicates::prelude::*;

const NODES: &str = "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}";

fn job(spec: &str) -> String {
    scenario(NODES, &format!("  workload:\n    - jobs:\n      - {spec}\n"))
}

/// Runs `lahar validate` and `lahar run` on `text`; both must exit 2 and print all
/// `needles`. Returns stderr.
fn rejects(text: &str, needles: &[&str]) -> String {
    let (_d, p) = write_scenario(text);
    let mut stderr = String::new();
    for sub in ["validate", "run"] {
        let out = Command::new(env!("CARGO_BIN_EXE_lahar")).arg(sub).arg(&p).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{sub}: expected exit 2, stderr:\n{err}");
        assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{sub} panicked:\n{err}");
        for n in needles {
            assert!(err.contains(n), "{sub}: stderr lacks {n:?}:\n{err}");
        }
        assert!(err.contains("scenario.yaml"), "{sub}: the file is not named:\n{err}");
        stderr = err;
    }
    stderr
}

#[test]
fn unknown_field() {
    rejects(
        &scenario("    nodeGroups:\n      - {name: h, count: 2, cpu: 8, memory: 1Gi, gpuz: 3}", ""),
        &["scenario.yaml:7:50", "unknown field `gpuz`", "expected one of", "; did you mean `gpus`?"],
    );
    // A name nothing is near gets no hint; a misspelt top-level field does.
    let err = rejects(
        &scenario("    nodeGroups:\n      - {name: h, count: 2, cpu: 8, memory: 1Gi, zzz: 3}", ""),
        &["unknown field `zzz`"],
    );
    assert!(!err.contains("did you mean"), "{err}");
    rejects(&scenario(NODES, "  horizn: 1h\n"), &["unknown field `horizn`", "did you mean `horizon`?"]);
}

#[test]
fn wrong_type() {
    rejects(
        &scenario("    nodeGroups:\n      - {name: h, count: two, cpu: 8, memory: 1Gi}", ""),
        &["scenario.yaml:7:26", "spec.cluster.nodeGroups[0].count: expected an integer, got `two`"],
    );
    rejects(&scenario(NODES, "  seed: abc\n"), &["scenario.yaml:8:9", "spec.seed: expected an integer, got `abc`"]);
    rejects(
        &scenario("    nodeGroups:\n      - {name: h, count: 1, cpu: 8, memory: 1Gi, gpus: 1.5}", ""),
        &["scenario.yaml:7:56", "spec.cluster.nodeGroups[0].gpus: expected an integer, got `1.5`"],
    );
    rejects(&scenario(NODES, "  seed: [1]\n"), &["scenario.yaml:8:9", "spec.seed"]);
    // The error echoes what was written, not the value read back, and finds
    // the place of a value the YAML reader calls non-finite.
    for (seed, got) in [
        ("5.0", "`5.0`"),
        ("18446744073709551616  # 2^64", "`18446744073709551616`"),
        ("1e308", "`1e308`"),
        (".inf", "`.inf`"),
        ("-.inf", "`-.inf`"),
    ] {
        let want = format!("spec.seed: expected an integer, got {got}");
        rejects(&scenario(NODES, &format!("  seed: {seed}\n")), &["scenario.yaml:8:9", &want]);
    }
    rejects(
        &scenario("    nodeGroups:\n      - {name: h, count: 2.50, cpu: 8, memory: 1Gi}", ""),
        &["scenario.yaml:7:26", "spec.cluster.nodeGroups[0].count: expected an integer, got `2.50`"],
    );
    // A number the YAML reader reads as no float says so in words; an error
    // placed at a key (a whole value of the wrong kind) names the key's path.
    let syn = |rate: &str, extra: &str| {
        scenario(
            NODES,
            &format!(
                "  workload:\n    - synthetic: {{jobs: 5, arrival: {{poisson: {{ratePerHour: {rate}}}}}, gpus: {{1: 1}}, duration: {{lognormal: {{median: 1h, sigma: 1}}}}{extra}}}\n"
            ),
        )
    };
    for rate in ["0x10", "1e999"] {
        let want = format!("spec.workload[0].synthetic.arrival.poisson.ratePerHour: expected a number, got `{rate}`");
        rejects(&syn(rate, ""), &["scenario.yaml:9:", &want]);
    }
    rejects(
        &syn("1", ", model: []"),
        &["scenario.yaml:9:", "spec.workload[0].synthetic.model: invalid type: sequence"],
    );
}

#[test]
fn negative_counts() {
    rejects(
        &scenario("    nodeGroups:\n      - {name: h, count: -4, cpu: 8, memory: 1Gi}", ""),
        &["scenario.yaml:7:26", "spec.cluster.nodeGroups[0].count", "must be an integer ≥ 0, got -4"],
    );
    rejects(
        &job("{name: j, duration: 1h, tasks: [{name: w, replicas: -1}]}"),
        &["spec.workload[0].jobs[0].tasks[0].replicas", "got -1"],
    );
    rejects(&scenario(NODES, "  queues:\n    - {name: q, weight: -2}\n"), &["spec.queues[0].weight", "got -2"]);
}

#[test]
fn synthetic_pods_larger_than_any_node_are_an_error() {
    // The generator was asked for pods no node holds: a configuration error.
    rejects(
        &scenario(
            NODES,
            "  workload:\n    - synthetic: {jobs: 5, arrival: {poisson: {ratePerHour: 1}}, gpus: {16: 1}, gpusPerPod: 16, cpuPerGpu: 1, duration: {lognormal: {median: 1h, sigma: 1}}}\n",
        ),
        &["spec.workload[0].synthetic.gpus", "no node can hold"],
    );
}

#[test]
fn unknown_queue() {
    rejects(
        &job("{name: j, queue: nope, duration: 1h, tasks: [{name: w, replicas: 1}]}"),
        &[
            "scenario.yaml:10:",
            "spec.workload[0].jobs[0].queue",
            "queue `nope` does not exist",
            "defined queues: default",
        ],
    );
    rejects(
        &scenario(
            NODES,
            "  workload:\n    - synthetic: {jobs: 5, arrival: {poisson: {ratePerHour: 1}}, gpus: {1: 1}, queues: {ghost: 1}, duration: {lognormal: {median: 1h, sigma: 1}}}\n",
        ),
        &["queue `ghost` does not exist"],
    );
}

#[test]
fn depends_on_cycle() {
    rejects(
        &job(
            "{name: j, duration: 1h, tasks: [{name: a, replicas: 1, dependsOn: {name: [c]}}, {name: b, replicas: 1, dependsOn: {name: [a]}}, {name: c, replicas: 1, dependsOn: {name: [b]}}]}",
        ),
        &["scenario.yaml:10:9", "spec.workload[0].jobs[0].tasks", "dependsOn cycle: a -> c -> b -> a"],
    );
    rejects(
        &job("{name: j, duration: 1h, tasks: [{name: a, replicas: 1, dependsOn: {name: [zz]}}]}"),
        &["task `zz` does not exist"],
    );
    rejects(
        &job("{name: j, duration: 1h, tasks: [{name: a, replicas: 1, dependsOn: {name: [a]}}]}"),
        &["cannot depend on itself"],
    );
}

#[test]
fn bad_values_with_paths() {
    rejects(
        &scenario(NODES, "  horizon: 30 days\n"),
        &["scenario.yaml:8:12", "spec.horizon", "bad duration `30 days`"],
    );
    rejects(&scenario(NODES, "  horizon: 0s\n"), &["scenario.yaml:8:12", "spec.horizon", "must be longer than 0"]);
    rejects(
        &scenario(NODES, "  scheduler: {baseline: magic}\n"),
        &["spec.scheduler.baseline", "unknown baseline `magic`", "gang-fifo"],
    );
    rejects(
        &scenario(NODES, "  scheduler: {conf: volcano-scheduler.conf}\n"),
        &["spec.scheduler.conf", "cannot read", "volcano-scheduler.conf"],
    );
    rejects(
        &scenario("    nodes:\n      - {name: n0, cpu: lots, memory: 1Gi}", ""),
        &["spec.cluster.nodes[0].cpu", "bad quantity `lots`"],
    );
    rejects(
        &scenario("    nodes:\n      - {name: n0, cpu: 1, memory: 1Gi, intraNode: infiniband}", ""),
        &["spec.cluster.nodes[0].intraNode", "expected nvswitch, nvlink-pairs, pcie or pcie-sys"],
    );
    rejects(&scenario("    nodes:\n      - {name: n0, memory: 1Gi}", ""), &["spec.cluster.nodes[0]", "missing `cpu`"]);
    rejects(
        &scenario("    nodes:\n      - {name: n0, cpu: 1, memory: 1Gi}\n      - {name: n0, cpu: 1, memory: 1Gi}", ""),
        &["spec.cluster.nodes[1]", "node name `n0` is already used"],
    );
    rejects(&scenario(NODES, "  queues: [{name: a}, {name: a}]\n"), &["spec.queues[1].name", "defined twice"]);
    rejects(
        &job("{name: j, minAvailable: 5, duration: 1h, tasks: [{name: w, replicas: 2}]}"),
        &["spec.workload[0].jobs[0].minAvailable", "must not exceed the total replicas"],
    );
    rejects(
        &job(
            "{name: j, duration: 1h, policies: [{event: PodEvicted, action: Explode}], tasks: [{name: w, replicas: 2}]}",
        ),
        &["policies[0].action", "unknown action `Explode`"],
    );
    rejects(
        &scenario(
            "    nodes:\n      - {name: n0, cpu: 1, memory: 1Gi}\n    fabric:\n      - {tier: 2, name: spine, fanout: 2}",
            "",
        ),
        &["spec.cluster.fabric[0].tier", "expected 1, got 2"],
    );
    // A cluster without nodes is a warning (an enqueue-only study): see warnings.rs.
}

#[test]
fn several_errors_are_reported_at_once() {
    let err = rejects(
        &job("{name: j, queue: nope, duration: forever, tasks: [{name: w, replicas: -3}]}"),
        &["queue `nope`", "bad duration `forever`", "got -3", "3 errors"],
    );
    assert_eq!(err.lines().filter(|l| l.starts_with("error:")).count(), 3, "{err}");
}

#[test]
fn yaml_syntax_and_unknown_source() {
    rejects("apiVersion: lahar.io/v1alpha1\nkind: Scenario\n  bad: [\n", &["scenario.yaml:3:"]);
    rejects(
        &scenario(NODES, "  workload:\n    - tracee: {}\n"),
        &["scenario.yaml:9:7", "unknown variant `tracee`", "expected one of synthetic, jobs"],
    );
    rejects(&scenario(NODES, "").replace("Scenario", "Job"), &["kind", "expected `Scenario`"]);
}

#[test]
fn missing_file_exits_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_lahar")).args(["run", "/nonexistent/scenario.yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/scenario.yaml") && err.contains("cannot read scenario"), "{err}");
}

#[test]
fn bad_weibull_durations() {
    let syn = |d: &str| {
        scenario(
            NODES,
            &format!(
                "  workload:\n    - synthetic: {{jobs: 5, arrival: {{poisson: {{ratePerHour: 1}}}}, gpus: {{1: 1}}, duration: {{weibull: {d}}}}}\n"
            ),
        )
    };
    rejects(
        &syn("{shape: 0, scale: 1h}"),
        &["spec.workload[0].synthetic.duration.weibull.shape", "must be a number > 0, got 0"],
    );
    rejects(&syn("{shape: 0.7, scale: 0s}"), &["spec.workload[0].synthetic.duration.weibull.scale", "longer than 0"]);
    rejects(
        &syn("{shape: 0.7, scale: 1h, max: 3 days}"),
        &["spec.workload[0].synthetic.duration.weibull.max", "bad duration"],
    );
    rejects(&syn("{shape: 0.7, scale: 1h, mean: 2h}"), &["scenario.yaml:", "unknown field `mean`"]);
}

#[test]
fn bad_burst_arrivals() {
    let syn = |a: &str| {
        scenario(
            NODES,
            &format!(
                "  workload:\n    - synthetic: {{jobs: 5, arrival: {{bursts: {a}}}, gpus: {{1: 1}}, duration: {{lognormal: {{median: 1h, sigma: 1}}}}}}\n"
            ),
        )
    };
    rejects(
        &syn("{size: 0, every: 1h}"),
        &["spec.workload[0].synthetic.arrival.bursts.size", "must be an integer ≥ 1, got 0"],
    );
    rejects(&syn("{size: 4, every: 0s}"), &["spec.workload[0].synthetic.arrival.bursts.every", "longer than 0"]);
    rejects(
        &syn("{size: 4, every: 1h, jitter: soon}"),
        &["spec.workload[0].synthetic.arrival.bursts.jitter", "bad duration"],
    );
    rejects(&syn("{size: 4, every: 1h, count: 2}"), &["scenario.yaml:", "unknown field `count`"]);
}

/// A one-line synthetic source (line 9 of the file) with `jobs: 5` and `fields`.
fn synthetic(fields: &str) -> String {
    scenario(NODES, &format!("  workload:\n    - synthetic: {{jobs: 5, {fields}}}\n"))
}

const POISSON: &str = "arrival: {poisson: {ratePerHour: 1}}";
const LOGNORMAL: &str = "duration: {lognormal: {median: 1h, sigma: 1}}";

#[test]
fn bad_diurnal_arrivals() {
    let syn = |a: &str| synthetic(&format!("arrival: {{diurnal: {a}}}, gpus: {{1: 1}}, {LOGNORMAL}"));
    let p = "spec.workload[0].synthetic.arrival.diurnal";
    rejects(
        &syn("{ratePerHour: [1, 2, 3]}"),
        &["scenario.yaml:9:", &format!("{p}.ratePerHour"), "expected 24 numbers ≥ 0, got 3"],
    );
    let mut rates = vec!["1"; 24];
    rates[5] = "-1";
    rejects(
        &syn(&format!("{{ratePerHour: [{}]}}", rates.join(", "))),
        &[&format!("{p}.ratePerHour[5]"), "must be a number ≥ 0, got -1"],
    );
    let zeros = vec!["0"; 24].join(", ");
    rejects(&syn(&format!("{{ratePerHour: [{zeros}]}}")), &["at least one value must be positive"]);
    let ones = vec!["1"; 24].join(", ");
    rejects(
        &syn(&format!("{{ratePerHour: [{ones}], weekly: [1, 1, 1, 1, 1, 0]}}")),
        &[&format!("{p}.weekly"), "expected 7 numbers ≥ 0, got 6"],
    );
    rejects(&syn(&format!("{{ratePerHour: [{ones}], daily: 2}}")), &["scenario.yaml:9:", "unknown field `daily`"]);
}

#[test]
fn unknown_named_gpu_distribution() {
    rejects(
        &synthetic(&format!("{POISSON}, gpus: helios, {LOGNORMAL}")),
        &[
            "scenario.yaml:9:",
            "spec.workload[0].synthetic.gpus",
            "unknown GPU-count distribution `helios`; expected one of: philly, pai",
        ],
    );
}

#[test]
fn bad_model_mix() {
    let syn = |m: &str| synthetic(&format!("{POISSON}, gpus: {{1: 1}}, {LOGNORMAL}, {m}"));
    rejects(
        &syn("models: {resnet-50: 1, gpt-5: 1}"),
        &["scenario.yaml:9:", "spec.workload[0].synthetic.models.gpt-5", "unknown model `gpt-5`", "resnet-50"],
    );
    rejects(
        &syn("models: {resnet-50: 0}"),
        &["spec.workload[0].synthetic.models.resnet-50", "weight must be a positive number, got 0"],
    );
    rejects(
        &syn("model: resnet-50, models: {llama-7b: 1}"),
        &["spec.workload[0].synthetic.models", "give either `model` (one model) or `models` (a mix), not both"],
    );
    rejects(&syn("models: {}"), &["spec.workload[0].synthetic.models", "expected a map of catalog model"]);
}

#[test]
fn bad_checkpoint_intervals() {
    let syn = |c: &str| synthetic(&format!("{POISSON}, gpus: {{1: 1}}, {LOGNORMAL}, checkpointInterval: {c}"));
    let p = "spec.workload[0].synthetic.checkpointInterval";
    rejects(&syn("soon"), &["scenario.yaml:9:", p, "bad duration"]);
    rejects(
        &syn("{uniform: {min: 1h, max: 10m}}"),
        &["scenario.yaml:9:", &format!("{p}.uniform.max"), "must be longer than 0 and at least `min`"],
    );
    rejects(&syn("{uniform: {min: 1h}}"), &["scenario.yaml:9:", "missing field `max`"]);
    rejects(&syn("{lognormal: {median: 0s, sigma: 1}}"), &[&format!("{p}.lognormal.median"), "must be longer than 0"]);
    rejects(
        &syn("{uniform: {min: 1m, max: 2m}, lognormal: {median: 1m, sigma: 1}}"),
        &[p, "exactly one of `uniform: {min, max}`, `lognormal: {median, sigma}`"],
    );
    rejects(&syn("{normal: {mean: 1h}}"), &["scenario.yaml:9:", "unknown field `normal`"]);
}

#[test]
fn bad_empirical_durations() {
    let syn = |e: &str| synthetic(&format!("{POISSON}, gpus: {{1: 1}}, duration: {{empirical: {e}}}"));
    let p = "spec.workload[0].synthetic.duration.empirical";
    rejects(
        &syn("{trace: t.swf, format: parquet}"),
        &["scenario.yaml:9:", &format!("{p}.format"), "unknown trace format `parquet`; expected one of: swf"],
    );
    rejects(&syn("{trace: missing.swf, format: swf}"), &["scenario.yaml:9:", &format!("{p}.trace"), "missing.swf"]);
    rejects(&syn("{trace: t.swf, format: swf, max: forever}"), &[&format!("{p}.max"), "bad duration"]);
}

/// Sizes that cannot fit in memory are refused up front with the limit, before
/// anything is built: a huge node count, job count or replica count, and a sample
/// interval that would make the timeseries enormous.
#[test]
fn sizes_beyond_the_limits_are_refused_up_front() {
    let group =
        |count: &str| format!("    nodeGroups:\n      - {{name: g, count: {count}, gpus: 8, cpu: 64, memory: 512Gi}}");
    rejects(
        &scenario(&group("10000000"), ""),
        &["spec.cluster.nodeGroups[0].count", "10000000 nodes", "at most 1000000"],
    );
    rejects(
        &scenario(
            NODES,
            "  workload:\n    - synthetic: {jobs: 20000000, arrival: {poisson: {ratePerHour: 1}}, gpus: {1: 1}, duration: {lognormal: {median: 1h, sigma: 1}}}\n",
        ),
        &["spec.workload[0].synthetic.jobs", "20000000 jobs", "at most 10000000"],
    );
    rejects(
        &job("{name: j, duration: 1h, tasks: [{name: w, replicas: 2000000, resources: {cpu: 1}}]}"),
        &["tasks[0].replicas", "2000000 replicas", "at most 1000000"],
    );
    rejects(
        &scenario(NODES, "  horizon: 30d\n  output: {sampleInterval: 1us}\n"),
        &["spec.output.sampleInterval", "at least 2592000000000 rows", "at most 5000000", "longer interval"],
    );
}

/// One bad node group gives one error: pods are not then reported as fitting no
/// node of the incomplete cluster. A directory where a scenario file is expected is
/// named as such.
#[test]
fn no_cascade_errors_and_directories_named() {
    let err = rejects(
        &scenario(
            "    nodeGroups:\n      - {name: g, count: 2, gpus: 8, cpu: lots, memory: 512Gi}",
            "  workload:\n    - jobs:\n      - {name: j, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n",
        ),
        &["spec.cluster.nodeGroups[0].cpu", "bad quantity `lots`"],
    );
    assert!(!err.contains("largest node") && !err.contains("2 errors"), "a cascade error:\n{err}");
    let dir = tempfile::tempdir().unwrap();
    for sub in ["validate", "run"] {
        lahar()
            .arg(sub)
            .arg(dir.path())
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is a directory; expected a file"))
            .stderr(predicate::str::contains("panicked").not());
    }
}

/// `--set` of a plain value where a mapping belongs says what to write (issue
/// 42, discovery: `--set spec.scheduler=sjf` answered only "expected mapping
/// start"): for a baseline's name the baseline mapping, otherwise a field or the
/// whole mapping. Exit 2, nothing run.
#[test]
fn a_plain_value_where_a_mapping_belongs_says_what_to_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = |set: &str| {
        let out = crate::lahar().args(["run", "-q", "--set", set, "--out"]).arg(dir.path().join("o")).assert().code(2);
        String::from_utf8_lossy(&out.get_output().stderr).to_string()
    };
    let e = err("spec.scheduler=sjf");
    assert!(
        e.contains("spec.scheduler: expected mapping start (set by --set spec.scheduler=sjf); `spec.scheduler` is a mapping: write --set 'spec.scheduler={baseline: sjf}' (or --set spec.scheduler.baseline=sjf)"),
        "{e}"
    );
    let e = err("spec.cluster=3");
    assert!(e.contains("`spec.cluster` is a mapping: set one of its fields (--set spec.cluster.FIELD=3) or write the whole mapping (--set 'spec.cluster={FIELD: 3}')"), "{e}");
    // YAML reads `baseline:sjf` (no space) as one key: the hint says so.
    let e = err("spec.scheduler={baseline:sjf}");
    assert!(
        e.contains("unknown field `baseline:sjf`, expected one of baseline, runTime, thresholds, promoteKnob, suspend, conf, inline; write `baseline: sjf`: YAML needs a space after the colon"),
        "{e}"
    );
    assert!(!dir.path().join("o").exists(), "nothing runs");
}

/// A memory size in a unit Kubernetes does not spell (`80GB`) is refused at its
/// place with the two spellings it may mean (issue 42, discovery).
#[test]
fn a_size_in_a_unit_kubernetes_does_not_spell_names_the_spellings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("s.yaml");
    std::fs::write(
        &p,
        job("{name: a, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1, memory: 80GB}}]}"),
    )
    .expect("write");
    let out = crate::lahar().arg("validate").arg(&p).assert().code(2);
    let e = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(e.contains("spec.workload[0].jobs[0].tasks[0].resources.memory: bad quantity `80GB`"), "{e}");
    assert!(e.contains("(did you mean `80G` or `80Gi`?)"), "{e}");
}

/// A file the scenario names is printed as a clean path: `--conf` given from
/// another folder is recorded relative to the scenario's folder
/// (`sub/../conf/bad.conf`), and its error names `conf/bad.conf`, not the
/// folder-and-back path the scenario's folder joined to it.
#[test]
fn paths_in_messages_are_clean() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("sub")).unwrap();
    std::fs::create_dir_all(d.path().join("conf")).unwrap();
    std::fs::write(d.path().join("sub/s.yaml"), job("{name: a, duration: 1h, tasks: [{name: w, replicas: 1}]}"))
        .unwrap();
    std::fs::write(d.path().join("conf/bad.conf"), "actions: \"allocate, nosuch\"\n").unwrap();
    let out =
        lahar().current_dir(d.path()).args(["validate", "sub/s.yaml", "--conf", "conf/bad.conf"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("error: conf/bad.conf:1:10: actions: unknown action `nosuch`"), "{err}");
    assert!(!err.contains(".."), "a `..` left in a printed path:\n{err}");
}
