//! `lahar run --explain POD`: explain.csv rows (predicate results, plugin scores,
//! outcomes), bad pod names, and that explaining never changes a decision.

use super::*;
use crate::lahar;
use crate::volcano::conf;
use predicates::prelude::*;

/// Runs `text` with `--explain` for each of `pods`, and once without, and returns
/// explain.csv's rows of those pods (the file also has their jobs' other pods:
/// see `operator.rs`). decisions.csv must be byte-identical between the two runs.
pub(crate) fn explain(text: &str, pods: &[&str]) -> String {
    let (d, p) = write_scenario(text);
    let with = d.path().join("with");
    let without = d.path().join("without");
    let mut cmd = lahar();
    cmd.args(["run", "-q"]).arg(&p).arg("--out").arg(&with);
    for pod in pods {
        cmd.args(["--explain", pod]);
    }
    cmd.assert().success();
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&without).assert().success();
    assert!(!without.join("explain.csv").exists(), "explain.csv is written only on request");
    let a = std::fs::read(with.join("decisions.csv")).unwrap();
    let b = std::fs::read(without.join("decisions.csv")).unwrap();
    assert!(a.starts_with(b"session,") && a == b, "--explain changed decisions.csv");
    let csv = std::fs::read_to_string(with.join("explain.csv")).unwrap();
    let named = |pod: &str| pods.iter().any(|p| pod == *p || pod.ends_with(&format!("/{p}")));
    csv.lines()
        .enumerate()
        .filter(|(i, l)| *i == 0 || named(l.split(',').nth(2).unwrap_or("")))
        .map(|(_, l)| format!("{l}\n"))
        .collect()
}

/// The rows of session `s` (without the header).
fn session(csv: &str, s: &str) -> Vec<String> {
    csv.lines().skip(1).filter(|l| l.split(',').next() == Some(s)).map(str::to_string).collect()
}

/// n1 has no GPU, n2 the wrong GPU model; n3 (empty) and n4 (half used) are feasible.
/// For the pod (2 cpu, 8Gi, 2 GPUs) the hand-computed scores are:
/// - nodeorder on n3: leastRequested ((8−2)·100/8 = 75, (32−8)·100/32 = 75) → 75;
///   balanced: fractions .25, .25, .5, std = √(1/72) = 0.1179 → ⌊88.2⌋ = 88; 163.
/// - nodeorder on n4 (4 cpu, 16Gi, 2 GPUs used): least (25, 25) → 25; fractions
///   .75, .75, 1 have the same std → 88; 113.
/// - binpack (cpu 1, memory 1, GPU 2; weight 10): n3 (.25 + .25 + 2·.5)/4 · 100 · 10
///   = 375; n4 (.75 + .75 + 2·1)/4 · 1000 = 875.
///
/// Totals 538 and 988: the pod binds to n4.
#[test]
fn predicate_failures_scores_and_the_chosen_node() {
    let text = scenario(
        "    nodes:\n      - {name: n1, cpu: 8, memory: 32Gi}\n      - {name: n2, cpu: 8, memory: 32Gi, gpus: 4, gpuModel: A100}\n      - {name: n3, cpu: 8, memory: 32Gi, gpus: 4, gpuModel: H100}\n      - {name: n4, cpu: 8, memory: 32Gi, gpus: 4, gpuModel: H100}",
        &format!(
            "{}  workload:\n    - jobs:\n      - {{name: old, duration: 1h, running: {{w: [n4]}}, tasks: [{{name: w, replicas: 1, resources: {{cpu: 4, memory: 16Gi, nvidia.com/gpu: 2}}}}]}}\n      - {{name: new, submitAt: 10s, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 2, memory: 8Gi, nvidia.com/gpu: 2}}, nodeSelector: {{nvidia.com/gpu.product: H100}}}}]}}\n",
            conf(
                "enqueue, allocate, backfill",
                &[
                    "name: drf",
                    "name: predicates",
                    "name: proportion",
                    "name: nodeorder",
                    "{name: binpack, arguments: {binpack.weight: 10, binpack.resources: nvidia.com/gpu, binpack.resources.nvidia.com/gpu: 2}}",
                ]
            )
        ),
    );
    let csv = explain(&text, &["new-w-0"]);
    assert_eq!(
        csv,
        "session,t_s,pod,node,plugin,passed,reason,score
2,10,default/new-w-0,,enqueue,true,PodGroup admitted: Pending → Inqueue,
2,10,default/new-w-0,n1,resources,false,Insufficient nvidia.com/gpu,
2,10,default/new-w-0,n2,predicates,false,node(s) didn't match Pod's node selector,
2,10,default/new-w-0,n3,predicates,true,,
2,10,default/new-w-0,n4,predicates,true,,
2,10,default/new-w-0,n3,nodeorder,,,163
2,10,default/new-w-0,n3,binpack,,,375
2,10,default/new-w-0,n3,total,,,538
2,10,default/new-w-0,n4,nodeorder,,,113
2,10,default/new-w-0,n4,binpack,,,875
2,10,default/new-w-0,n4,total,,,988
2,10,default/new-w-0,n4,best-node,true,highest total score,
2,10,default/new-w-0,n4,result,true,allocated: the job is ready and its statement is committed (bound at session end),
"
    );
}

/// Two nodes of 4 GPUs, each with 1 GPU taken until t=30; a gang of three 2-GPU pods
/// (minAvailable 3) has two free slots (one per node), so allocate sets it aside
/// until t=30, when the whole gang binds.
fn gang_text(scheduler: &str) -> String {
    scenario(
        "    nodes:\n      - {name: n1, cpu: 8, memory: 32Gi, gpus: 4}\n      - {name: n2, cpu: 8, memory: 32Gi, gpus: 4}",
        &format!(
            "{scheduler}  workload:\n    - jobs:\n      - {{name: old, duration: 30s, running: {{w: [n1, n2]}}, tasks: [{{name: w, replicas: 2, resources: {{cpu: 1, memory: 1Gi, nvidia.com/gpu: 1}}}}]}}\n      - {{name: gang, submitAt: 10s, minAvailable: 3, duration: 1h, tasks: [{{name: w, replicas: 3, resources: {{cpu: 1, memory: 1Gi, nvidia.com/gpu: 2}}}}]}}\n"
        ),
    )
}

/// Why a gang pod stays pending when its gang is out of reach (allocate sets the
/// job aside and says so in numbers); at t=30 the old job ends and the gang binds.
#[test]
fn out_of_reach_gang_says_why() {
    let text = gang_text(&conf(
        "enqueue, allocate",
        &["name: drf", "name: predicates", "name: proportion", "name: nodeorder"],
    ));
    let csv = explain(&text, &["default/gang-w-2", "gang-w-0"]);
    let why = "not tried: the gang cannot be ready or pipelined even if every pending pod took any free slot (0 placed + 0 pipelined + 0 pending BestEffort; task w: 3 pending, free slots 2; minAvailable 3)";
    assert_eq!(
        session(&csv, "2"),
        [
            "2,10,default/gang-w-0,,enqueue,true,PodGroup admitted: Pending → Inqueue,".to_string(),
            "2,10,default/gang-w-2,,enqueue,true,PodGroup admitted: Pending → Inqueue,".to_string(),
            format!("2,10,default/gang-w-0,,allocate,false,\"{why}\","),
            format!("2,10,default/gang-w-2,,allocate,false,\"{why}\","),
        ]
    );
    let s3 = session(&csv, "3");
    assert_eq!(s3.len(), 16, "{s3:#?}");
    assert!(s3[14].starts_with("3,30,default/gang-w-0,n2,result,true,allocated"), "{s3:#?}");
    assert!(s3[15].starts_with("3,30,default/gang-w-2,n2,result,true,allocated"), "{s3:#?}");
}

/// A gang within reach whose step still fails: n3 has room for two pods but not the
/// pods' node selector, so the bound (four free slots) lets the step run; two pods
/// are placed on n1 and n2, the third finds no node, and the step is discarded. The
/// scores: nodeorder for the first pod at t=10 on either node (1 cpu, 1Gi, 1 GPU
/// used): least ((8−2)·100/8 = 75, ⌊30·100/32⌋ = 93) → 84; balanced: fractions
/// .25, .0625, .75, std 0.2902 → 70; 154.
#[test]
fn discarded_gang_step_says_why() {
    let text = gang_text(&conf(
        "enqueue, allocate",
        &["name: drf", "name: predicates", "name: proportion", "name: nodeorder"],
    ))
    .replace(
        "gpus: 4}\n      - {name: n2, cpu: 8, memory: 32Gi, gpus: 4}",
        "gpus: 4, labels: {pool: a}}\n      - {name: n2, cpu: 8, memory: 32Gi, gpus: 4, labels: {pool: a}}\n      - {name: n3, cpu: 8, memory: 32Gi, gpus: 4}",
    )
    .replace("minAvailable: 3, duration: 1h, tasks: [{name: w,", "minAvailable: 3, duration: 1h, tasks: [{name: w, nodeSelector: {pool: a},");
    assert!(text.contains("n3") && text.contains("nodeSelector"), "{text}");
    let csv = explain(&text, &["default/gang-w-2", "gang-w-0"]);
    assert_eq!(
        session(&csv, "2"),
        [
            "2,10,default/gang-w-0,,enqueue,true,PodGroup admitted: Pending → Inqueue,",
            "2,10,default/gang-w-2,,enqueue,true,PodGroup admitted: Pending → Inqueue,",
            "2,10,default/gang-w-0,n1,predicates,true,,",
            "2,10,default/gang-w-0,n2,predicates,true,,",
            "2,10,default/gang-w-0,n3,predicates,false,node(s) didn't match Pod's node selector,",
            "2,10,default/gang-w-0,n1,nodeorder,,,154",
            "2,10,default/gang-w-0,n1,total,,,154",
            "2,10,default/gang-w-0,n2,nodeorder,,,154",
            "2,10,default/gang-w-0,n2,total,,,154",
            "2,10,default/gang-w-0,n2,best-node,true,\"highest total score, tied with 1 other node(s): picked at random\",",
            "2,10,default/gang-w-2,n1,resources,false,Insufficient nvidia.com/gpu,",
            "2,10,default/gang-w-2,n2,resources,false,Insufficient nvidia.com/gpu,",
            "2,10,default/gang-w-2,n3,predicates,false,node(s) didn't match Pod's node selector,",
            "2,10,default/gang-w-2,,allocate,false,no feasible node; the job's step ends,",
            "2,10,default/gang-w-0,,gang,false,job not ready: 2 placed + 0 pipelined of minAvailable 3; the step's placements are discarded,",
            "2,10,default/gang-w-2,,gang,false,job not ready: 2 placed + 0 pipelined of minAvailable 3; the step's placements are discarded,",
        ]
    );
}

/// A gang whose minResources (3 × 4 GPUs) exceed the cluster stays Pending at enqueue:
/// overcommit (8 · 1.2 − 2 used < 12) and proportion (2 + 12 > 8) both say no.
#[test]
fn enqueue_rejection_names_the_plugins() {
    let text = gang_text("").replace("nvidia.com/gpu: 2}", "nvidia.com/gpu: 4}");
    let csv = explain(&text, &["gang-w-1"]);
    // With the queue's numbers: 2 GPUs allocated at 10 s, none at 30 s.
    let why = |allocated: u32| {
        format!(
            "PodGroup stays Pending: enqueue rejected (overcommit: minResources exceed the cluster's overcommitted idle resources; proportion: minResources exceed what queue default may still admit: nvidia.com/gpu: minResources 12 + allocated {allocated} + inqueue 0 − elastic 0 = {} > realCapability 8)",
            12 + allocated
        )
    };
    assert_eq!(
        csv,
        format!(
            "session,t_s,pod,node,plugin,passed,reason,score\n2,10,default/gang-w-1,,enqueue,false,{},\n3,30,default/gang-w-1,,enqueue,false,{},\n",
            why(2),
            why(0)
        )
    );
}

/// Baselines explain resource fit per node (session 3 follows the binds of session 2
/// at t=10 and finds the same); kube-default adds its LeastAllocated score: at t=30 both nodes hold one 2-GPU gang pod; the third pod leaves
/// cpu ⌊(7−1)·100/8⌋ = 75, memory ⌊30·100/32⌋ = 93, GPU 0 → ⌊168/3⌋ = 56 on each.
#[test]
fn baselines_explain_fit_and_scores() {
    let csv = explain(&gang_text("  scheduler: {baseline: kube-default}\n"), &["gang-w-2"]);
    assert_eq!(
        csv,
        "session,t_s,pod,node,plugin,passed,reason,score
2,10,default/gang-w-2,n1,resources,false,Insufficient nvidia.com/gpu,
2,10,default/gang-w-2,n2,resources,false,Insufficient nvidia.com/gpu,
2,10,default/gang-w-2,,best-node,false,no node fits,
3,10,default/gang-w-2,n1,resources,false,Insufficient nvidia.com/gpu,
3,10,default/gang-w-2,n2,resources,false,Insufficient nvidia.com/gpu,
3,10,default/gang-w-2,,best-node,false,no node fits,
4,30,default/gang-w-2,n1,fit,true,,
4,30,default/gang-w-2,n2,fit,true,,
4,30,default/gang-w-2,n1,least-allocated,,,56
4,30,default/gang-w-2,n2,least-allocated,,,56
4,30,default/gang-w-2,n1,best-node,true,highest score (ties: first node),
"
    );
    let csv = explain(&gang_text("  scheduler: {baseline: gang-fifo}\n"), &["gang-w-2"]);
    assert_eq!(
        session(&csv, "2"),
        [
            "2,10,default/gang-w-2,n1,resources,false,Insufficient nvidia.com/gpu,",
            "2,10,default/gang-w-2,n2,resources,false,Insufficient nvidia.com/gpu,",
            "2,10,default/gang-w-2,,chosen,false,no node fits,",
            "2,10,default/gang-w-2,,gang,false,gang not satisfied: 0 ready + 2 placed of minAvailable 3; discarded,",
        ]
    );
}

/// Strict gang FIFO: a job behind a head-of-line gang that does not fit is not tried;
/// at t=30 first fit packs the gang onto n1 (two pods) and n2, so the small pod fits
/// only n2.
#[test]
fn strict_fifo_explains_head_of_line_blocking() {
    let text = gang_text("  scheduler: {baseline: gang-fifo-strict}\n")
        + "      - {name: small, submitAt: 10s, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 1}}]}\n";
    let csv = explain(&text, &["small-w-0"]);
    assert_eq!(
        csv,
        "session,t_s,pod,node,plugin,passed,reason,score
2,10,default/small-w-0,,fifo,false,not tried: job gang at the head of the line does not fit,
3,30,default/small-w-0,n1,resources,false,Insufficient nvidia.com/gpu,
3,30,default/small-w-0,n2,fit,true,,
3,30,default/small-w-0,n2,chosen,true,chosen by the policy's node order,
"
    );
}

#[test]
fn unknown_or_ambiguous_pod_exits_2() {
    let text = gang_text("").replace(
        "  workload:\n    - jobs:\n",
        "  workload:\n    - jobs:\n      - {name: gang, namespace: team, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n",
    );
    let (d, p) = write_scenario(&text);
    let out = d.path().join("o");
    lahar()
        .args(["run", "-q"])
        .arg(&p)
        .arg("--out")
        .arg(&out)
        .args(["--explain", "gnag-w-1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no pod `gnag-w-1` in the scenario"))
        .stderr(predicate::str::contains("nearest: default/gang-w-1"));
    lahar()
        .args(["run", "-q"])
        .arg(&p)
        .arg("--out")
        .arg(&out)
        .args(["--explain", "gang-w-0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pod name `gang-w-0` is ambiguous: default/gang-w-0, team/gang-w-0"));
    // Past the last replica.
    lahar()
        .args(["run", "-q"])
        .arg(&p)
        .arg("--out")
        .arg(&out)
        .args(["--explain", "team/gang-w-1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no pod `team/gang-w-1`"));
    assert!(!out.exists(), "nothing is written on bad input");
    lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).args(["--explain", "team/gang-w-0"]).assert().success();
    assert!(out.join("explain.csv").exists());
}

/// preempt: a high-priority pod finds no cpu at t=10, evicts one pod of the running
/// gang (minAvailable 2 of 4) and binds after the victim's grace period.
/// (Session 2 follows the binds of session 1 at t=0; session 4 follows the eviction
/// at t=10 and pipelines the pod again to its nominated node.) nodeorder on
/// the full 4-cpu node for a 1-cpu pod without memory request: least (0, ⌊(16Gi −
/// 200Mi)·100/16Gi⌋ = 98) → 49; balanced: fractions 1 and 0 → 50; 99.
#[test]
fn preemption_is_explained() {
    let text = scenario(
        "    nodes:\n      - {name: n1, cpu: 4, memory: 16Gi}",
        &format!(
            "{}  workload:\n    - jobs:\n      - {{name: low, priority: 1, minAvailable: 2, duration: 1h, tasks: [{{name: w, replicas: 4, resources: {{cpu: 1}}}}]}}\n      - {{name: high, submitAt: 10s, priority: 100, duration: 10m, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}}}]}}\n",
            conf(
                "enqueue, allocate, preempt",
                &["name: drf", "name: predicates", "name: proportion", "name: nodeorder"]
            )
        ),
    );
    let csv = explain(&text, &["high-w-0"]);
    assert_eq!(
        csv,
        "session,t_s,pod,node,plugin,passed,reason,score
3,10,default/high-w-0,,enqueue,true,PodGroup admitted: Pending → Inqueue,
3,10,default/high-w-0,n1,resources,false,Insufficient cpu,
3,10,default/high-w-0,,allocate,false,not tried: no pending pod of the job fits any node's future-idle resources,
3,10,default/high-w-0,n1,preempt,true,pipelined after evicting 1 victim(s); kept only if the job ends pipelined,
3,10,default/high-w-0,n1,result,true,preempt: the job is pipelined; the evictions stand and the pod waits nominated to this node,
4,10,default/high-w-0,n1,predicates,true,,
4,10,default/high-w-0,n1,nodeorder,,,99
4,10,default/high-w-0,n1,total,,,99
4,10,default/high-w-0,n1,best-node,true,the only candidate node,
4,10,default/high-w-0,n1,result,true,pipelined: the job is pipelined but not ready; the placement holds until the session ends,
5,40,default/high-w-0,n1,predicates,true,,
5,40,default/high-w-0,n1,nodeorder,,,99
5,40,default/high-w-0,n1,total,,,99
5,40,default/high-w-0,n1,best-node,true,the only candidate node,
5,40,default/high-w-0,n1,result,true,allocated: the job is ready and its statement is committed (bound at session end),
"
    );
}

/// preempt, discarded: `high`'s two 2-cpu pods need 4 cpus, but gang lets only
/// two of `low`'s four 1-cpu pods go (minAvailable 2). high-w-0 evicts both at
/// t=10 and is pipelined; high-w-1 then finds no victim, the job would not be
/// pipelined and the statement is discarded — the evictions are undone, but
/// high-w-0 keeps the nomination (Volcano's discard keeps the last transaction's
/// reason): nothing changes until `low` ends at 3600 s, when allocate places it
/// on its nominated node.
#[test]
fn a_discarded_preemption_says_the_pod_stays_nominated() {
    let text = scenario(
        "    nodes:\n      - {name: n1, cpu: 4, memory: 16Gi}",
        &format!(
            "{}  workload:\n    - jobs:\n      - {{name: low, priority: 1, minAvailable: 2, duration: 1h, tasks: [{{name: w, replicas: 4, resources: {{cpu: 1}}}}]}}\n      - {{name: high, submitAt: 10s, priority: 100, minAvailable: 2, duration: 10m, tasks: [{{name: w, replicas: 2, resources: {{cpu: 2}}}}]}}\n",
            conf("enqueue, allocate, preempt", &["name: drf", "name: predicates", "name: nodeorder"])
        ),
    );
    let csv = explain(&text, &["high-w-0"]);
    let rows: Vec<&str> = csv.lines().filter(|l| l.starts_with("3,10,")).collect();
    assert_eq!(
        rows,
        [
            "3,10,default/high-w-0,,enqueue,true,PodGroup admitted: Pending → Inqueue,",
            "3,10,default/high-w-0,n1,resources,false,Insufficient cpu,",
            "3,10,default/high-w-0,,allocate,false,not tried: no pending pod of the job fits any node's future-idle resources,",
            "3,10,default/high-w-0,n1,preempt,true,pipelined after evicting 2 victim(s); kept only if the job ends pipelined,",
            "3,10,default/high-w-0,n1,result,false,\"preempt: the job would not be pipelined; the evictions are undone, but the pod stays nominated to this node (Volcano keeps the discarded pipeline's reason), which bars it from preempting while the predicates accept it there\",",
            // The intra-job pass: the nomination is written at the close, and
            // the job holds no node of its own.
            "3,10,default/high-w-0,,preempt,false,no node where the allowed victims' resources make room for the pod,",
        ],
        "{csv}"
    );
}

/// `--explain-window` keeps only the rows of sessions inside it; the one-line
/// summary printed at the end counts every session. `waiter` waits for `hog`'s 4
/// GPUs: enqueue rejects it at 10 s (session 3), admits and binds it at 3600 s
/// (session 4).
#[test]
fn explain_window_and_the_end_of_run_summary() {
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 4}",
        "  workload:\n    - jobs:\n      - {name: hog, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 4}}]}\n      - {name: waiter, submitAt: 10s, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 4}}]}\n",
    );
    let (d, p) = write_scenario(&text);
    let summary = "explain: default/waiter-w-0: first bound to n0 at 60 min (after 60 min pending); looked at in 2 sessions; rejected by enqueue in 1 (50%)\n";
    let all = d.path().join("all");
    lahar()
        .arg("run")
        .arg(&p)
        .args(["--explain", "waiter-w-0", "--out"])
        .arg(&all)
        .assert()
        .success()
        .stdout(predicates::str::contains(summary));
    let rows = std::fs::read_to_string(all.join("explain.csv")).unwrap();
    assert_eq!(session(&rows, "3").len(), 1);
    assert_eq!(session(&rows, "4").len(), 6);
    let late = d.path().join("late");
    lahar()
        .arg("run")
        .arg(&p)
        .args(["--explain", "waiter-w-0", "--explain-window", "30m..", "--out"])
        .arg(&late)
        .assert()
        .success()
        .stdout(predicates::str::contains(summary));
    let rows = std::fs::read_to_string(late.join("explain.csv")).unwrap();
    assert!(session(&rows, "3").is_empty());
    assert_eq!(session(&rows, "4").len(), 6);
    for bad in ["2h..1h", "2h", "x..1h"] {
        lahar()
            .arg("run")
            .arg(&p)
            .args(["--explain", "waiter-w-0", "--explain-window", bad])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("--explain-window"));
    }
}

/// A node scored by no plugin totals 0, not an empty sum's `-0`.
#[test]
fn a_node_scored_by_no_plugin_totals_zero() {
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 8, memory: 16Gi}",
        "  scheduler:\n    inline: |\n      actions: \"allocate\"\n      tiers:\n      - plugins:\n        - name: predicates\n  workload:\n    - jobs:\n      - {name: j, duration: 10s, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}\n",
    );
    let csv = explain(&text, &["j-w-0"]);
    assert!(csv.contains(",n0,total,,,0\n"), "{csv}");
    assert!(!csv.contains(",-0"), "{csv}");
}

/// A step that leaves its job pipelined but not ready is not called bound. On
/// two 2-CPU nodes, `old` (held to n2 by its node selector) runs there from 0; a
/// drain of n2 at 5 s (deadline 0, uncordoned at 6 s) evicts it (30 s grace: n2's
/// room is releasing until 35 s). `new` (priority 10, two 2-CPU pods, minAvailable
/// 2) arrives at 10 s: allocate places `new-w-0` on n1's idle room (Allocated) and
/// `new-w-1` on n2's releasing room (Pipelined): the job is pipelined, not ready,
/// and its statement is neither committed nor discarded, so `new-w-0` is not
/// bound; the gang binds once `old`'s pod is gone, at 35 s.
#[test]
fn a_pipelined_step_is_not_called_bound() {
    let text = scenario(
        "    nodes:\n      - {name: n1, cpu: 2, memory: 8Gi}\n      - {name: n2, cpu: 2, memory: 8Gi}",
        "  scheduler:\n    inline: |\n      actions: \"enqueue, allocate\"\n      tiers:\n      - plugins: [{name: priority}, {name: gang}]\n      - plugins: [{name: predicates}]\n  faults:\n    drains: [{at: 5s, nodes: n2, deadline: 0s, duration: 1s}]\n  workload:\n    - jobs:\n      - {name: old, duration: 1h, running: {w: [n2]}, tasks: [{name: w, replicas: 1, resources: {cpu: 2}, nodeSelector: {kubernetes.io/hostname: n2}}]}\n      - {name: new, submitAt: 10s, priority: 10, duration: 1h, tasks: [{name: w, replicas: 2, resources: {cpu: 2}}]}\n",
    );
    let csv = explain(&text, &["new-w-0"]);
    let results: Vec<&str> = csv.lines().filter(|l| l.contains(",result,")).collect();
    assert!(
        results[0]
            .contains(",10,default/new-w-0,n1,result,true,\"allocated, not bound: the job is pipelined but not ready"),
        "{csv}"
    );
    assert!(results.last().is_some_and(|l| l.contains(",35,") && l.contains("committed")), "{csv}");
}

/// A preemptor nominated to a node by its earlier preemption is barred from
/// preempting again while the predicates accept it there (Volcano's
/// `taskEligibleToPreempt`); both of preempt's passes say so, naming the node
/// (the scenario of `volcano_scenarios::preempt_a_nominated_pod_does_not_preempt_again`).
#[test]
fn a_nominated_preemptor_says_why_it_does_not_preempt() {
    let text = scenario(
        "    nodes:\n      - {name: n1, cpu: 1, memory: 16Gi}\n      - {name: n2, cpu: 1, memory: 16Gi}",
        &format!(
            "  queues: [{{name: a}}, {{name: b}}]\n{}  workload:\n    - jobs:\n{}",
            conf("enqueue, allocate, preempt", &["name: drf", "name: predicates", "name: nodeorder"])
                .replace("- name: gang", "- {name: gang, enablePreemptable: false}"),
            [
                "{name: lo1, queue: b, priority: 1, duration: 1000s",
                "{name: lo2, queue: b, priority: 5, duration: 1000s",
                "{name: high, queue: b, submitAt: 50s, priority: 10, duration: 100s",
                "{name: mid, queue: a, submitAt: 60s, duration: 100s",
            ]
            .iter()
            .map(|j| format!("      - {j}, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}}}]}}\n"))
            .collect::<String>()
        ),
    );
    let csv = explain(&text, &["high-w-0"]);
    let barred: Vec<&str> = csv.lines().filter(|l| l.contains("not eligible")).collect();
    let why = "not eligible to preempt (Volcano's taskEligibleToPreempt): nominated to this node, and the \
               predicates accept the pod there (resources aside), so Volcano deems it schedulable";
    assert_eq!(barred.first().copied(), Some(format!("5,60,default/high-w-0,n1,preempt,false,\"{why}\",").as_str()));
    assert_eq!(
        barred.get(1).copied(),
        Some(format!("5,60,default/high-w-0,n1,preempt,false,\"intra-job pass: {why}\",").as_str())
    );
    assert!(!csv.contains("5,60,default/high-w-0,n2,preempt"), "{csv}");
}

/// network-topology-aware's score of a pod of a job without a network
/// topology, by hand. HyperNodes: `a` (tier 1: n1, n2) under `b` (tier 2)
/// under `c` (tier 3, which also holds n3 itself); n4 is in none; the
/// cluster top is tier 4, so tiers 1–3 are weighed 1, 0.8 and 0.64 (fading
/// 0.8), 2.44 in all, and a tier a node's chain lacks counts 1. `old` holds
/// 4 cpu and 16Gi of n1; the pod asks 2 cpu and 8Gi, and each HyperNode's
/// binpack is the mean of cpu's and memory's (used + asked) / allocatable:
/// `a` and `b` (16 cpu, 64Gi) 6/16 = 24/64 = .375, `c` (24 cpu, 96Gi) 6/24 =
/// 24/96 = .25. Scores (× 100): n1 and n2 (.375 + .8 · .375 + .64 · .25) /
/// 2.44 = .835 / 2.44 → 34.22; n3 (1 + .8 + .64 · .25) / 2.44 = 1.96 / 2.44 →
/// 80.33; n4 2.44 / 2.44 → 100, the best.
#[test]
fn normal_pod_topology_scores_by_hand() {
    let node = |n: &str| format!("      - {{name: {n}, cpu: 8, memory: 32Gi}}\n");
    let nodes: String = ["n1", "n2", "n3", "n4"].iter().map(|n| node(n)).collect();
    let hyper = "    hyperNodes:\n      - {name: a, tier: 1, members: [n1, n2]}\n      - {name: b, tier: 2, members: [a]}\n      - {name: c, tier: 3, members: [b, n3]}";
    let text = scenario(
        &format!("    nodes:\n{nodes}{hyper}"),
        &format!(
            "{}  workload:\n    - jobs:\n      - {{name: old, duration: 1h, running: {{w: [n1]}}, tasks: [{{name: w, replicas: 1, resources: {{cpu: 4, memory: 16Gi}}}}]}}\n      - {{name: new, submitAt: 10s, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 2, memory: 8Gi}}}}]}}\n",
            conf("enqueue, allocate", &["name: predicates", "name: network-topology-aware"])
        ),
    );
    let csv = explain(&text, &["new-w-0"]);
    let score = |n: &str| -> f64 {
        let row = csv
            .lines()
            .find(|l| l.contains(&format!(",{n},network-topology-aware,")))
            .unwrap_or_else(|| panic!("no score of {n}: {csv}"));
        row.rsplit(',').next().unwrap().parse().unwrap()
    };
    let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(close(score("n1"), 83.5 / 2.44), "{csv}");
    assert!(close(score("n2"), 83.5 / 2.44), "{csv}");
    assert!(close(score("n3"), 196.0 / 2.44), "{csv}");
    assert!(close(score("n4"), 100.0), "{csv}");
    assert!(csv.contains(",n4,best-node,true,"), "{csv}");
}
