//! What a Volcano operator reads (issue 42, item 3): `--explain` on a pod or a
//! job prints the node × plugin table and names the member and the plugin that
//! keep a gang waiting, with the plugin's numbers; a snapshot run prints its
//! decisions, not research metrics; `lahar diff` shows which decisions a conf
//! change changes; report.html shows decisions and explanations.

use super::*;
use crate::lahar;
use predicates::prelude::*;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/snapshot").join(name)
}

/// `lahar run --snapshot` of the example with `args`; (exit code, stdout, stderr).
pub(crate) fn snapshot_run(out: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = lahar()
        .arg("run")
        .arg("--snapshot")
        .arg(example("cluster.yaml"))
        .arg("--conf")
        .arg(example("volcano-scheduler.conf"))
        .args(["--sessions", "1", "--out"])
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// One session of the scenario `text` explaining `names`; its stdout (exit 0).
fn one_session(text: &str, names: &[&str]) -> String {
    let (d, p) = write_scenario(text);
    let mut c = lahar();
    c.args(["run", "--sessions", "1", "--out"]).arg(d.path().join("o")).arg(&p);
    for n in names {
        c.args(["--explain", n]);
    }
    let o = c.output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The fine-tuning gang waits because queue `research` deserves 24 GPUs: it holds
/// 16 (the pre-training job), the first worker would take 8, and the second asks
/// 8 more — so the step is not run (it could only be discarded). Asked about the
/// first worker (which fits a node), the answer names the second and
/// proportion's numbers with the first counted; asked about the job, the same.
#[test]
fn the_waiting_gang_names_its_blocking_member_and_the_numbers() {
    let cause = "blocked by team-b/finetune-worker-1 at allocatable: queue research cannot take the pod after the 1 before it: rejected by proportion (nvidia.com/gpu: 24 allocated + 8 asked = 32 > deserved 24; capability 24 nvidia.com/gpu)";
    for named in ["team-b/finetune-worker-0", "team-b/finetune-2b9d", "finetune-2b9d"] {
        let dir = tempfile::tempdir().unwrap();
        let (code, stdout, stderr) = snapshot_run(&dir.path().join("o"), &["--explain", named]);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(stdout.contains(&format!("explain team-b/finetune-2b9d (queue research, minAvailable 2, PodGroup Inqueue): 2 pod(s) pending; in session 1 at t = 0 s, {cause}")), "{named}: {stdout}");
        // The table of the first worker: three nodes too full, one that fits.
        let row = |node: &str, rest: &str| {
            stdout.lines().any(|l| {
                let cells: Vec<&str> =
                    l.trim_matches('│').split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
                cells.first() == Some(&node) && cells[1..].join(" | ") == rest
            })
        };
        assert!(stdout.contains("team-b/finetune-worker-0 — session 1 at t = 0 s:"), "{stdout}");
        assert!(row("gpu-a-0", "Insufficient nvidia.com/gpu"), "{stdout}");
        assert!(row("gpu-b-0", "ok"), "{stdout}");
        assert!(stdout.contains("  ✗ gang: not tried: the gang needs 2 pods (minAvailable) and has 0 placed, pipelined or pending BestEffort; queue research's quota admits 1 more of its pending pods, one after another: the step could only be discarded"), "{stdout}");
        // explain.csv has the siblings' rows too: that is where the cause is.
        let csv = std::fs::read_to_string(dir.path().join("o/explain.csv")).unwrap();
        assert!(csv.contains("1,0,team-b/finetune-worker-1,,allocatable,false,"), "{csv}");
    }
}

/// A snapshot run answers an operator: the session's decisions, the PodGroups'
/// phases, the GPUs in use and the pods still pending — no JCT, no utilisation,
/// and no warning about run times the snapshot was never going to have.
#[test]
fn a_snapshot_run_prints_its_decisions_and_no_research_headline() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = snapshot_run(&dir.path().join("o"), &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "", "no warning: a snapshot's pods have no run time, and --sessions bounds the run");
    for want in [
        "team-c/eval-runner-0",
        "gpu-b-1",
        // The evaluation pod is bound, but its PodGroup turns Running only at the
        // next session's close: Volcano's cache holds the pod Binding at this one.
        "after 1 session: 1 pod(s) bound, 1 PodGroup phase change(s)",
        "PodGroups: 2 Inqueue, 1 Running",
        "GPUs in use: 18 of 32",
        "pods still pending: team-b/finetune-2b9d (2)",
    ] {
        assert!(stdout.contains(want), "{want}: {stdout}");
    }
    for absent in ["JCT", "allocation rate", "makespan"] {
        assert!(!stdout.contains(absent), "{absent}: {stdout}");
    }
    // Without a session limit the run times matter, and the warning says so.
    let (code, _, stderr) = lahar()
        .arg("run")
        .arg("--snapshot")
        .arg(example("cluster.yaml"))
        .args(["-q", "--out"])
        .arg(dir.path().join("o2"))
        .output()
        .map(|o| (o.status.code(), (), String::from_utf8_lossy(&o.stderr).into_owned()))
        .unwrap();
    assert_eq!(code, Some(0));
    assert!(stderr.contains("3 jobs have no run time"), "{stderr}");
}

/// The scenario of docs/volcano.md's "A job larger than its queue's deserved
/// share": 16 GPUs, `research` (weight 3) and `prod` (weight 1) each with 8-GPU
/// jobs. prod deserves 16 · 1/4 = 4 GPUs and research 12: prod's job is set aside
/// by its quota, research's second job is refused by allocatable after its first
/// took 8 — both with proportion's numbers.
#[test]
fn a_queue_quota_rejection_gives_its_numbers() {
    let job = |name: &str, q: &str| {
        format!(
            "      - {{name: {name}, queue: {q}, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1, memory: 1Gi, nvidia.com/gpu: 8}}}}]}}\n"
        )
    };
    let text = scenario(
        "    nodes:\n      - {name: n1, cpu: 64, memory: 256Gi, gpus: 8}\n      - {name: n2, cpu: 64, memory: 256Gi, gpus: 8}",
        &format!(
            "  queues:\n    - {{name: research, weight: 3}}\n    - {{name: prod, weight: 1}}\n{}  workload:\n    - jobs:\n{}{}{}",
            crate::volcano::conf(
                "enqueue, allocate, backfill",
                &["name: drf", "name: predicates", "name: proportion", "name: nodeorder"]
            ),
            job("r1", "research"),
            job("r2", "research"),
            job("p1", "prod")
        ),
    );
    let stdout = one_session(&text, &["p1", "r2"]);
    assert!(stdout.contains("explain r2 (queue research, minAvailable 1, PodGroup Inqueue): 1 pod(s) pending; in session 1 at t = 0 s, blocked by default/r2-w-0 at allocatable: queue research cannot take the pod: rejected by proportion (nvidia.com/gpu: 8 allocated + 8 asked = 16 > deserved 12)"), "{stdout}");
    assert!(stdout.contains("task w: 1 pending, refused by the queue's quota: rejected by proportion (nvidia.com/gpu: 0 allocated + 8 asked = 8 > deserved 4); minAvailable 1)"), "{stdout}");
    // A research run keeps its headline and the one-line summaries.
    assert!(stdout.contains("JCT mean") && stdout.contains("explain: default/p1-w-0: never placed"), "{stdout}");
}

/// On a cluster larger than the table lists, the nodes that fail are folded into
/// one line per reason, and a pod no node takes is named with the count.
#[test]
fn a_large_cluster_folds_the_failing_nodes() {
    let nodes: String =
        (0..20).map(|i| format!("      - {{name: n{i:02}, cpu: 64, memory: 256Gi, gpus: 8}}\n")).collect();
    let text = scenario(
        &format!("    nodes:\n{}", nodes.trim_end()),
        "  workload:\n    - jobs:\n      - {name: big, duration: 1h, tasks: [{name: w, replicas: 1, nodeSelector: {pool: x}, resources: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 1}}]}\n",
    );
    let stdout = one_session(&text, &["big"]);
    let why = "node(s) didn't match Pod's node selector";
    assert!(
        stdout.contains(&format!("blocked by default/big-w-0 at allocate: no node fits it: 20 nodes {why}")),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("default/big-w-0 — session 1 at t = 0 s:\n  20 nodes: {why}\n")), "{stdout}");
    assert!(!stdout.contains("│ n00"), "no node listed one by one: {stdout}");
}

/// `--explain` names a job by its PodGroup; an unknown name lists the nearest pods
/// and jobs; a name two namespaces share is ambiguous. Each exit 2.
#[test]
fn explain_names_resolve_to_pods_or_jobs_or_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = snapshot_run(&dir.path().join("o"), &["--explain", "finetune-2b9"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("no pod `finetune-2b9` in the scenario, nor a job of that name")
            && stderr.contains("nearest: team-b/finetune-2b9d"),
        "{stderr}"
    );
    let job = |ns: &str| {
        format!(
            "      - {{name: same, namespace: {ns}, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 1}}}}]}}\n"
        )
    };
    let text = scenario(
        "    nodes:\n      - {name: n1, cpu: 8, memory: 32Gi}",
        &format!("  workload:\n    - jobs:\n{}{}", job("a"), job("b")),
    );
    let (d, p) = write_scenario(&text);
    lahar()
        .args(["run", "-q", "--explain", "same", "--out"])
        .arg(d.path().join("o"))
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("job name `same` is ambiguous: a/same, b/same; use namespace/name"));
    lahar().args(["run", "-q", "--explain", "b/same", "--out"]).arg(d.path().join("o")).arg(&p).assert().success();
}

/// `lahar diff`: the example's conf against the same conf without `priority`.
/// Without it the first tier's gang vote alone does not protect the running
/// pre-training job, so preempt evicts both its pods for the fine-tuning gang.
/// The same conf twice makes the same decisions. A third conf is refused.
#[test]
fn diff_shows_the_decisions_a_conf_change_changes() {
    let dir = tempfile::tempdir().unwrap();
    let conf = std::fs::read_to_string(example("volcano-scheduler.conf")).unwrap();
    let without = dir.path().join("no-priority.conf");
    std::fs::write(&without, conf.replace("  - name: priority\n", "")).unwrap();
    let diff = |confs: &[&Path]| {
        let mut c = lahar();
        c.args(["diff", "--sessions", "1", "--snapshot"]).arg(example("cluster.yaml"));
        for p in confs {
            c.arg("--conf").arg(p);
        }
        c.output().unwrap()
    };
    let base = example("volcano-scheduler.conf");
    let o = diff(&[&base, &without]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let want = "first difference: session 1 (t = 0 s)\n  only under A (0):\n  only under B (4):\n  + preempt  evict  team-a/llm-pretrain-7c1f  team-a/llm-pretrain-worker-0  gpu-a-0  preempted for finetune-worker-0\n  + preempt  pipeline  team-b/finetune-2b9d  team-b/finetune-worker-0  gpu-a-0\n  + preempt  evict  team-a/llm-pretrain-7c1f  team-a/llm-pretrain-worker-1  gpu-a-1  preempted for finetune-worker-1\n  + preempt  pipeline  team-b/finetune-2b9d  team-b/finetune-worker-1  gpu-a-1\npods that end differently (4 of 5):";
    assert!(stdout.contains(want), "{stdout}");
    assert!(stdout.contains("A: ") && stdout.contains("2 decisions (1 bind, 1 phase) in 1 session(s)"), "{stdout}");
    let row = stdout.lines().find(|l| l.starts_with("│ team-b/finetune-worker-0 ")).unwrap_or_default();
    assert!(row.contains("Pending") && row.contains("Pending, nominated to gpu-a-0"), "{stdout}");
    let o = diff(&[&base, &base]);
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("the same decisions in every session, and every pod ends in the same state")
    );
    let o = diff(&[&base, &base, &without]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--conf: give one conf (B, against the input's own scheduler) or two (A, then B), not 3")
    );
}

/// report.html of a snapshot run shows its decisions and explanations (escaped),
/// and says why it has no plots; a decisions.csv that is not lahar's is refused
/// with its file named.
#[test]
fn the_report_shows_decisions_and_explanations() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let (code, _, stderr) = snapshot_run(&out, &["-q", "--explain", "finetune-2b9d"]);
    assert_eq!(code, Some(0), "{stderr}");
    lahar().arg("report").arg(&out).assert().success();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h3>Decisions</h3>") && html.contains("eval-runner-0</td><td>gpu-b-1</td>"), "decisions");
    assert!(html.contains("<h3>Explanations (--explain)</h3>"), "explanations");
    // The verdict the terminal prints, kept in explain.txt and shown above the rows.
    let text = std::fs::read_to_string(out.join("explain.txt")).expect("explain.txt");
    let verdict = text.lines().next().unwrap_or_default();
    assert!(
        verdict.starts_with("explain team-b/finetune-2b9d (queue research, minAvailable 2, PodGroup Inqueue)")
            && verdict.contains("blocked by team-b/finetune-worker-1 at allocatable"),
        "{text}"
    );
    let (_, printed, _) = snapshot_run(&dir.path().join("again"), &["--explain", "finetune-2b9d"]);
    assert!(printed.contains(&text), "explain.txt is what the run printed:\n{text}\n---\n{printed}");
    assert!(
        html.contains("<pre class=\"explain\">explain team-b&#x2f;finetune-2b9d (queue research"),
        "the verdict above the rows"
    );
    assert!(
        html.contains("rejected by proportion (nvidia.com&#x2f;gpu: 24 allocated + 8 asked = 32 &gt; deserved 24"),
        "escaped reason"
    );
    assert!(
        html.contains("No plots: the run has 1 timeseries sample (1 session); its decisions are above."),
        "why no plots"
    );
    // What the session did, not research metrics (a half-full cluster is not
    // "0.0% allocation", and one session has no JCT).
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["snapshot"], true);
    assert!(html.contains("<h3>After 1 session</h3>"), "the summary's title");
    assert!(html.contains("<tr><td>pods bound</td><td class=\"n\">1</td></tr>"), "pods bound");
    assert!(html.contains("<tr><td>PodGroup phase changes</td><td class=\"n\">1</td></tr>"), "phases");
    assert!(!html.contains("What the operators did"), "no timeline, no table of its steps");
    assert!(html.contains("<tr><td>GPUs in use at the end</td><td class=\"n\">18 of 32</td></tr>"), "GPUs");
    assert!(!html.contains("JCT mean (h)") && !html.contains("<h3>Per queue</h3>"), "no research summary");
    assert!(!html.contains("<svg"), "no empty plot");
    std::fs::write(out.join("decisions.csv"), "when,what\n1,2\n").unwrap();
    lahar().arg("report").arg(&out).assert().code(2).stderr(
        predicate::str::contains("decisions.csv")
            .and(predicate::str::contains("line 1: expected the columns session,t_s,action")),
    );
}
