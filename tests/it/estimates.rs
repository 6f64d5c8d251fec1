//! Run-time estimates (issue 42): what the user asked for (SWF field 9, a compact
//! job's `estimate`, `lahar.io/estimate`, a synthetic source's `estimateFactor`,
//! the canonical CSV's `estimate_s`), and `sjf` / `easy-backfill` told to plan
//! with them (`spec.scheduler.runTime: estimate`). The KTH replay against the
//! textbook with estimates is in `textbook_easy.rs`.

use super::*;
use crate::lahar;
use predicates::prelude::*;

/// `(job, start)` of every row of jobs.csv after running `text` with `scheduler`.
fn starts(text: &str, scheduler: &str) -> Vec<(String, String)> {
    let (d, p) = write_scenario(&text.replace("SCHEDULER", scheduler));
    let out = d.path().join("o");
    lahar().args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    jobs.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .map(|f| (f[0].to_string(), f[5].to_string()))
        .collect()
}

fn one_gpu_job(name: &str, at: &str, duration: &str, estimate: &str, gpus: u32) -> String {
    format!(
        "      - {{name: {name}, submitAt: {at}, duration: {duration}{estimate}, tasks: [{{name: w, replicas: 1, resources: {{nvidia.com/gpu: {gpus}}}}}]}}\n"
    )
}

/// One GPU, taken until 10 s; at 1 s `a` (1 h, estimated 5 h) and `b` (2 h,
/// estimated 1 h) arrive. By true run time `a` goes first (10 s, then `b` at
/// 3,610 s); by the estimates `b` does (10 s, then `a` at 7,210 s).
#[test]
fn sjf_orders_by_the_estimates_when_told() {
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi, gpus: 1}",
        &format!(
            "  scheduler: SCHEDULER\n  workload:\n    - jobs:\n{}{}{}",
            one_gpu_job("blocker", "0s", "10s", "", 1),
            one_gpu_job("a", "1s", "1h", ", estimate: 5h", 1),
            one_gpu_job("b", "1s", "2h", ", estimate: 1h", 1)
        ),
    );
    let s = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
    assert_eq!(starts(&text, "{baseline: sjf}"), s(&[("blocker", "0"), ("a", "10"), ("b", "3610")]));
    assert_eq!(starts(&text, "{baseline: sjf, runTime: actual}"), s(&[("blocker", "0"), ("a", "10"), ("b", "3610")]));
    assert_eq!(starts(&text, "{baseline: sjf, runTime: estimate}"), s(&[("blocker", "0"), ("b", "10"), ("a", "7210")]));
}

/// Two GPUs. `r` (1 GPU, 1 h, estimated 10 h) runs from 0; the head `h` (2 GPUs,
/// 1 h) arrives at 1 s, `c` (1 GPU, 2 h) at 2 s. By true run times the shadow time
/// is 3,600 s: `c` would end after it and there is no spare GPU then, so it waits
/// (`h` at 3,600, `c` at 7,200). By the estimates the shadow time is 36,000 s and
/// `c` ends before it: it is backfilled at 2 s, and `h` starts when it ends (7,202).
#[test]
fn easy_backfill_plans_with_the_estimates_when_told() {
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi, gpus: 2}",
        &format!(
            "  scheduler: SCHEDULER\n  workload:\n    - jobs:\n{}{}{}",
            one_gpu_job("r", "0s", "1h", ", estimate: 10h", 1),
            one_gpu_job("h", "1s", "1h", ", estimate: 1h", 2),
            one_gpu_job("c", "2s", "2h", ", estimate: 2h", 1)
        ),
    );
    let s = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
    assert_eq!(starts(&text, "{baseline: easy-backfill}"), s(&[("r", "0"), ("h", "3600"), ("c", "7200")]));
    assert_eq!(
        starts(&text, "{baseline: easy-backfill, runTime: estimate}"),
        s(&[("r", "0"), ("c", "2"), ("h", "7202")])
    );
}

/// Estimates from each input: a compact job's `estimate`, `lahar.io/estimate` on
/// a manifest, a batch/v1 Job's `activeDeadlineSeconds` (without the annotation),
/// a synthetic source's `estimateFactor` (the run time times it), the canonical
/// CSV's `estimate_s`.
#[test]
fn every_input_kind_gives_estimates() {
    let dir = tempfile::tempdir().unwrap();
    // A batch/v1 Job's deadline is its estimate unless the annotation gives one.
    let batch = |name: &str, ann: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h{ann}}}\nspec:\n  activeDeadlineSeconds: 7200\n  template:\n    spec:\n      schedulerName: volcano\n      restartPolicy: Never\n      containers: [{{name: c, image: x, resources: {{requests: {{cpu: \"1\"}}}}}}]\n"
        )
    };
    std::fs::write(
        dir.path().join("m.yaml"),
        format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: vj\n  annotations: {{lahar.io/duration: 1h, lahar.io/estimate: 90m}}\nspec:\n  minAvailable: 1\n  schedulerName: volcano\n  tasks:\n    - name: w\n      replicas: 1\n      template:\n        spec:\n          containers: [{{name: c, image: x, resources: {{requests: {{cpu: \"1\"}}}}}}]\n---\n{}---\n{}",
            batch("bj", ""),
            batch("bj2", ", lahar.io/estimate: 20m"),
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("t.csv"),
        "job,submit_s,duration_s,estimate_s,cpu\ntr,5,100,250.5,1\ntr2,6,100,,1\n",
    )
    .unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}",
        "  workload:\n    - manifests: m.yaml\n    - jobs:\n      - {name: cj, duration: 1h, estimate: 3h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n    - synthetic: {jobs: 3, arrival: {poisson: {ratePerHour: 1}}, gpus: {1: 1}, duration: {lognormal: {median: 1h, sigma: 1}}, estimateFactor: 2.5}\n    - trace: {format: canonical, path: t.csv}\n",
    );
    let p = dir.path().join("s.yaml");
    std::fs::write(&p, text).unwrap();
    let s = lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let est = |name: &str| s.jobs().iter().find(|j| j.name == name).unwrap_or_else(|| panic!("{name}")).estimate;
    let secs = |x: u64| Some(lahar_core::util::time::SimDuration::from_secs(x));
    assert_eq!(est("vj"), secs(5400));
    assert_eq!(est("bj"), secs(7200));
    assert_eq!(est("bj2"), secs(1200));
    assert_eq!(est("cj"), secs(3 * 3600));
    assert_eq!(est("tr"), Some(lahar_core::util::time::SimDuration(250_500_000)));
    assert_eq!(est("tr2"), None);
    let synthetic: Vec<_> = s.jobs().into_iter().filter(|j| j.kind.as_ref() == "synthetic").collect();
    assert_eq!(synthetic.len(), 3);
    for j in synthetic {
        let want = (j.duration.micros() as f64 * 2.5).round() as u64;
        assert_eq!(j.estimate, Some(lahar_core::util::time::SimDuration(want)), "{}", j.name);
    }
}

/// Misuse, each exit 2 at its field; jobs without an estimate under `runTime:
/// estimate` are one warning (planned with their run time).
#[test]
fn estimate_misuse_is_located_and_missing_estimates_are_counted() {
    let job = |extra: &str| {
        format!(
            "  workload:\n    - jobs:\n      - {{name: j, duration: 1h{extra}, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}}}]}}\n"
        )
    };
    let node = "    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi, gpus: 1}";
    for (sched, extra, want) in [
        (
            "  scheduler: {baseline: sjf, runTime: guess}\n",
            "",
            "spec.scheduler.runTime: expected `actual` or `estimate`, got `guess`",
        ),
        (
            "  scheduler: {baseline: fifo, runTime: estimate}\n",
            "",
            "spec.scheduler.runTime: baseline `fifo` plans with no run time: `runTime` applies to sjf and easy-backfill",
        ),
        ("", "", "spec.scheduler.runTime: a Volcano conf plans with no run time"),
        (
            "  scheduler: {baseline: sjf}\n",
            ", estimate: 0s",
            "spec.workload[0].jobs[0].estimate: must be longer than 0",
        ),
    ] {
        let sched =
            if sched.is_empty() { "  scheduler: {runTime: estimate, inline: \"actions: allocate\"}\n" } else { sched };
        let (_d, p) = write_scenario(&scenario(node, &format!("{sched}{}", job(extra))));
        lahar().args(["validate"]).arg(&p).assert().code(2).stderr(predicate::str::contains(want));
    }
    let synthetic = |f: &str| {
        format!(
            "  workload:\n    - synthetic: {{jobs: 2, arrival: {{poisson: {{ratePerHour: 1}}}}, gpus: {{1: 1}}, duration: {{lognormal: {{median: 1h, sigma: 1}}}}, estimateFactor: {f}}}\n"
        )
    };
    let (_d, p) = write_scenario(&scenario(node, &synthetic("0")));
    lahar().args(["validate"]).arg(&p).assert().code(2).stderr(predicate::str::contains(
        "spec.workload[0].synthetic.estimateFactor: must be a number above 0 (at most 1e6), got 0",
    ));
    let (_d, p) = write_scenario(&scenario(
        node,
        &format!("  scheduler: {{baseline: easy-backfill, runTime: estimate}}\n{}", job("")),
    ));
    lahar().args(["validate"]).arg(&p).assert().success().stderr(predicate::str::contains(
        "spec.scheduler.runTime: 1 job has no run-time estimate (SWF field 9, `lahar.io/estimate`, a Job's `activeDeadlineSeconds`, `estimate`, `estimateFactor`), the first `default/j`: `runTime: estimate` plans it with its actual run time",
    ));
}
