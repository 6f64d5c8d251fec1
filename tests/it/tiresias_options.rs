//! `tiresias`'s parameters from the scenario (`spec.scheduler.thresholds`,
//! `promoteKnob`, `suspend`), through the binary: hand-checked runs of each, the
//! defaults equal to writing them out, and every misuse refused at its field.

use super::*;
use crate::lahar;
use predicates::prelude::*;

/// One node of 4 GPUs. `long` (4 GPUs, 2,000 s of work, a checkpoint every
/// `every` seconds) starts at 0; six 4-GPU jobs of 700 s arrive at 10–15 s.
fn guard_case(scheduler: &str, every: u32) -> String {
    let mut jobs = format!(
        "      - {{name: long, submitAt: 0s, duration: 2000s, checkpointInterval: {every}s, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1, nvidia.com/gpu: 4}}}}]}}\n"
    );
    for k in 0..6 {
        jobs.push_str(&format!(
            "      - {{name: s{k}, submitAt: {}s, duration: 700s, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1, nvidia.com/gpu: 4}}}}]}}\n",
            10 + k
        ));
    }
    scenario(
        "    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi, gpus: 4}",
        &format!("  scheduler: {scheduler}\n  workload:\n    - jobs:\n{jobs}"),
    )
}

/// pods.csv's `(start_s, end_s, reason_end)` rows of `long`, and jobs.csv's
/// `lost_gpu_s` of it, after running `text`.
fn long_pods(text: &str) -> (Vec<(String, String, String)>, String) {
    let (d, p) = write_scenario(text);
    let out = d.path().join("o");
    lahar().args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    let head: Vec<&str> = pods.lines().next().unwrap().split(',').collect();
    let col = |h: &[&str], n: &str| h.iter().position(|c| *c == n).unwrap_or_else(|| panic!("column {n}"));
    let (s, e, r) = (col(&head, "start_s"), col(&head, "end_s"), col(&head, "reason_end"));
    let rows = pods
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[0] == "long")
        .map(|f| (f[s].to_string(), f[e].to_string(), f[r].to_string()))
        .collect();
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    let head: Vec<&str> = jobs.lines().next().unwrap().split(',').collect();
    let lost = col(&head, "lost_gpu_s");
    let row = jobs.lines().find(|l| l.starts_with("long,")).expect("long's row");
    (rows, row.split(',').nth(lost).unwrap().to_string())
}

fn rows(v: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    v.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())).collect()
}

/// The starvation guard (`policies/tests/baselines.rs`'s
/// `tiresias_starvation_guard_promotes`, now from the scenario). `long` reaches
/// 3,200 GPU·s at 800 s, drops to queue 1 and is preempted by the waiting
/// short jobs (they start at 830, after the 30 s grace period).
/// - `promoteKnob: 2`: promoted once it has waited twice its 800 s of run, it
///   starts at 2,930 (when the running short job ends), is demoted 800 s later
///   and preempted at 3,730; promoted again (530 s + the new wait reach 1,600 s at
///   4,800), it starts at 5,160 and completes its last 400 s at 5,560.
/// - `promoteKnob: 0` (no guard) and the default 8 (the short jobs are done
///   long before 8 × 800 s): it waits for all six and finishes its 1,200 s at
///   6,230.
#[test]
fn tiresias_promote_knob_from_the_scenario() {
    let (knob2, _) = long_pods(&guard_case("{baseline: tiresias, promoteKnob: 2}", 100));
    assert_eq!(knob2, rows(&[("0", "800", "preempted"), ("2930", "3730", "preempted"), ("5160", "5560", "completed")]));
    let off = rows(&[("0", "800", "preempted"), ("5030", "6230", "completed")]);
    assert_eq!(long_pods(&guard_case("{baseline: tiresias, promoteKnob: 0}", 100)).0, off);
    assert_eq!(long_pods(&guard_case("{baseline: tiresias}", 100)).0, off);
}

/// `thresholds`. With `[1600]` (and no guard), `long` drops to queue 1 at 400 s
/// (1,600 GPU·s on 4 GPUs) and is preempted; each short job (2,800 GPU·s of
/// work) drops too after 400 s of run and is preempted by the next one still in
/// queue 0, until `s5`, with none left behind it, runs to the end (2,580–3,280).
/// Then queue 1 goes in submit order: `long` (3,280–4,880), then the others'
/// last 300 s each. With `[1600, 2400]`, `s5` reaches the second threshold
/// after 600 s (3,180) and `long`, in queue 1 above it, preempts it; `long`
/// drops to queue 2 after 200 s more (3,410), the short jobs still in queue 1
/// take their 200 s turns, and `long` resumes when `s4` ends (4,660–6,060).
#[test]
fn tiresias_thresholds_from_the_scenario() {
    let one = long_pods(&guard_case("{baseline: tiresias, thresholds: [1600], promoteKnob: 0}", 100)).0;
    assert_eq!(one, rows(&[("0", "400", "preempted"), ("3280", "4880", "completed")]));
    let two = long_pods(&guard_case("{baseline: tiresias, thresholds: [1600, 2400], promoteKnob: 0}", 100)).0;
    assert_eq!(two, rows(&[("0", "400", "preempted"), ("3210", "3410", "preempted"), ("4660", "6060", "completed")]));
}

/// The preemptions' reasons name the jobs as the scenario does: with `[1600]`
/// (above), `s0` in queue 0 preempts `long`, dropped to queue 1, at 400 s, and
/// `s1` preempts `s0` at 830 s (`s0` started when `long` left, after its 30 s
/// grace, and ran its 1,600 GPU·s on 4 GPUs).
#[test]
fn tiresias_preemption_reasons_name_the_jobs() {
    let (d, p) = write_scenario(&guard_case("{baseline: tiresias, thresholds: [1600], promoteKnob: 0}", 100));
    let out = d.path().join("o");
    lahar().args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    let decisions = std::fs::read_to_string(out.join("decisions.csv")).unwrap();
    let evictions: Vec<&str> = decisions.lines().filter(|l| l.contains(",evict,")).take(2).collect();
    assert_eq!(evictions.len(), 2, "{decisions}");
    assert!(
        evictions[0].contains(
            ",400,preempt,evict,long,default/long-w-0,n0,,tiresias: job s0 (queue 0) preempts job long (queue 1)"
        ),
        "{}",
        evictions[0]
    );
    assert!(
        evictions[1]
            .contains(",830,preempt,evict,s0,default/s0-w-0,n0,,tiresias: job s1 (queue 0) preempts job s0 (queue 1)"),
        "{}",
        evictions[1]
    );
}

/// `suspend: false`: with a checkpoint every 300 s, the preemption at 800 s
/// loses the 200 s since the 600 s checkpoint (800 GPU·s on 4 GPUs), so `long`
/// resumes with 1,400 s to go and ends at 6,430; suspended (the default), it
/// keeps all 800 s and ends at 6,230 with nothing lost.
#[test]
fn tiresias_suspend_from_the_scenario() {
    let (lossy, lost) = long_pods(&guard_case("{baseline: tiresias, suspend: false, promoteKnob: 0}", 300));
    assert_eq!(lossy, rows(&[("0", "800", "preempted"), ("5030", "6430", "completed")]));
    assert_eq!(lost, "800");
    let (kept, lost) = long_pods(&guard_case("{baseline: tiresias, promoteKnob: 0}", 300));
    assert_eq!(kept, rows(&[("0", "800", "preempted"), ("5030", "6230", "completed")]));
    assert_eq!(lost, "0");
}

/// Writing the defaults out (`thresholds: [3200], promoteKnob: 8, suspend:
/// true`) decides as leaving them out: decisions.csv byte-identical on the
/// embedded default scenario's first hours under `tiresias`.
#[test]
fn tiresias_defaults_written_out_decide_the_same() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |sched: &str, out: &str| {
        let o = dir.path().join(out);
        lahar()
            .args(["run", "-q", "--set", "spec.horizon=12h", "--set"])
            .arg(format!("spec.scheduler={sched}"))
            .arg("--out")
            .arg(&o)
            .assert()
            .success();
        std::fs::read(o.join("decisions.csv")).expect("decisions.csv")
    };
    let implicit = run("{baseline: tiresias}", "a");
    let explicit = run("{baseline: tiresias, thresholds: [3200], promoteKnob: 8, suspend: true}", "b");
    assert!(implicit.len() > 1000, "the run decides something");
    assert!(implicit == explicit, "the written-out defaults decide as the defaults");
    assert!(implicit != run("{baseline: tiresias, promoteKnob: 0}", "c"), "the knob is read");
}

/// Each misuse exits 2 at its field, naming what was expected.
#[test]
fn tiresias_option_misuse_is_located() {
    let node = "    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi, gpus: 1}";
    let job = "  workload:\n    - jobs:\n      - {name: j, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n";
    for (sched, want) in [
        (
            "{baseline: tiresias, promoteKnob: -1}",
            "spec.scheduler.promoteKnob: expected an integer from 0 (no starvation guard) to 1000000, got -1",
        ),
        ("{baseline: tiresias, promoteKnob: 2.5}", "spec.scheduler.promoteKnob: expected an integer"),
        (
            "{baseline: tiresias, thresholds: []}",
            "spec.scheduler.thresholds: expected 1 to 15 thresholds (GPU·seconds, ascending; one queue more than thresholds), got 0",
        ),
        (
            "{baseline: tiresias, thresholds: [3200, 100]}",
            "spec.scheduler.thresholds[1]: expected thresholds in ascending order: 100 is not above 3200",
        ),
        (
            "{baseline: tiresias, thresholds: [3200, 3200]}",
            "spec.scheduler.thresholds[1]: expected thresholds in ascending order: 3200 is not above 3200",
        ),
        (
            "{baseline: tiresias, thresholds: [0]}",
            "spec.scheduler.thresholds[0]: expected GPU·seconds above 0 (at most 1000000000000000), got 0",
        ),
        ("{baseline: tiresias, suspend: maybe}", "spec.scheduler.suspend"),
        (
            "{baseline: fifo, promoteKnob: 3}",
            "spec.scheduler.promoteKnob: baseline `fifo` has no `promoteKnob`: it applies to tiresias",
        ),
        (
            "{baseline: sjf, thresholds: [100]}",
            "spec.scheduler.thresholds: baseline `sjf` has no `thresholds`: it applies to tiresias",
        ),
        (
            "{suspend: true, inline: \"actions: allocate\"}",
            "spec.scheduler.suspend: a Volcano conf has no `suspend`: it applies to tiresias",
        ),
        (
            "{baseline: tiresias, runTime: estimate}",
            "spec.scheduler.runTime: baseline `tiresias` plans with no run time: `runTime` applies to sjf and easy-backfill",
        ),
    ] {
        let (_d, p) = write_scenario(&scenario(node, &format!("  scheduler: {sched}\n{job}")));
        lahar()
            .args(["validate"])
            .arg(&p)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(want).and(predicate::str::contains("scenario.yaml:")));
    }
}
