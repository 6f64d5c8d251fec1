//! When a controller makes a deleted pod again: a ReplicaSet (a Deployment's
//! too) counts a terminating pod out of its active pods and makes the
//! replacement when the deletion starts, as a batch/v1 Job does under its
//! default `podReplacementPolicy`; a StatefulSet, whose replacement takes the
//! same name, and Volcano's job controller make it once the pod is gone.
//! Hand-checked through the binary.

use super::*;

/// One-CPU pods that run 1 h and keep their node 600 s once deleted: a
/// workload of `kind` (`apiVersion kind`) of one replica, with `spec` lines.
fn workload(kind: &str, spec: &str) -> String {
    let (api, kind) = kind.split_once(' ').unwrap();
    let pod = "{schedulerName: volcano, terminationGracePeriodSeconds: 600, containers: [{name: c, image: busybox, resources: {requests: {cpu: \"1\"}}}]}";
    if api.starts_with("batch.volcano.sh") {
        return format!(
            "apiVersion: {api}\nkind: Job\nmetadata: {{name: w, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n  minAvailable: 1\n  tasks: [{{name: t, replicas: 1, template: {{spec: {pod}}}}}]\n"
        );
    }
    let pod = if api == "batch/v1" {
        pod.replace("{schedulerName", "{restartPolicy: Never, schedulerName")
    } else {
        pod.to_string()
    };
    let template = format!("    spec: {pod}\n");
    format!(
        "apiVersion: {api}\nkind: {kind}\nmetadata: {{name: w, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n{spec}  template:\n    metadata: {{labels: {{app: w}}}}\n{template}"
    )
}

/// Runs the scenario of `files` (`m.yaml` among them) on `nodes` one-CPU
/// nodes, `n-1` tainted `NoExecute` at 10 min (its pods deleted), with `spec`
/// lines `rest`: pods.csv.
fn run_files(files: &[(&str, &str)], nodes: u32, rest: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let text = scenario(
        &format!("    nodeGroups:\n      - {{name: n, count: {nodes}, cpu: 1, memory: 64Gi}}"),
        &format!(
            "{rest}  timeline:\n    - {{at: 10m, taint: n-1, key: maint, effect: NoExecute}}\n  workload:\n    - manifests: m.yaml\n"
        ),
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = dir.path().join("o");
    let o = lahar().arg("run").arg("-q").arg(dir.path().join("s.yaml")).arg("--out").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::read_to_string(out.join("pods.csv")).unwrap()
}

/// [`run_files`] of `manifest` on two nodes: pods.csv rows (node, start, end,
/// reason).
fn run(manifest: &str) -> Vec<[String; 4]> {
    let pods = run_files(&[("m.yaml", manifest)], 2, "");
    pods.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            [f[4], f[6], f[7], f[8]].map(str::to_string)
        })
        .collect()
}

fn rows(r: &[[&str; 4]]) -> Vec<[String; 4]> {
    r.iter().map(|r| r.map(str::to_string)).collect()
}

/// By hand: the pod runs on `n-1` from 0 and is deleted at 600 s (it keeps
/// `n-1` until 1,200 s). A ReplicaSet's and a Deployment's replacement is made
/// then and starts at once on `n-0` (600 s, done 4,200 s); a StatefulSet's and
/// a VolcanoJob's is made once the pod is gone (1,200 s, done 4,800 s).
#[test]
fn a_replicaset_replaces_a_terminating_pod_at_once_a_statefulset_once_it_is_gone() {
    let select = "  replicas: 1\n  selector: {matchLabels: {app: w}}\n";
    let at_once = rows(&[["n-1", "0", "600", "evicted"], ["n-0", "600", "4200", "completed"]]);
    let when_gone = rows(&[["n-1", "0", "600", "evicted"], ["n-0", "1200", "4800", "completed"]]);
    for kind in ["apps/v1 Deployment", "apps/v1 ReplicaSet"] {
        assert_eq!(run(&workload(kind, select)), at_once, "{kind}");
    }
    let sts = format!("{select}  serviceName: w\n");
    assert_eq!(run(&workload("apps/v1 StatefulSet", &sts)), when_gone, "StatefulSet");
    assert_eq!(run(&workload("batch.volcano.sh/v1alpha1 Job", "")), when_gone, "VolcanoJob");
}

/// A batch/v1 Job's `podReplacementPolicy`: `TerminatingOrFailed` (the
/// default) replaces the pod when its deletion starts, `Failed` once it is
/// gone; another value is an error at its place.
#[test]
fn a_batch_jobs_pod_replacement_policy_says_when() {
    let job = |policy: &str| workload("batch/v1 Job", &format!("  backoffLimit: 1\n{policy}"));
    let at_once = rows(&[["n-1", "0", "600", "evicted"], ["n-0", "600", "4200", "completed"]]);
    let when_gone = rows(&[["n-1", "0", "600", "evicted"], ["n-0", "1200", "4800", "completed"]]);
    assert_eq!(run(&job("")), at_once);
    assert_eq!(run(&job("  podReplacementPolicy: TerminatingOrFailed\n")), at_once);
    assert_eq!(run(&job("  podReplacementPolicy: Failed\n")), when_gone);
    let nodes = "    nodes:\n      - {name: n0, cpu: 1, memory: 1Gi}";
    let (code, e) = validate_with_manifest(
        nodes,
        "  workload:\n    - manifests: m.yaml\n",
        &job("  podReplacementPolicy: Terminating\n"),
    );
    assert_eq!(code, Some(2), "{e}");
    assert!(
        e.contains("m.yaml:6:25: document 1: spec.podReplacementPolicy: expected `TerminatingOrFailed` or `Failed`, got `Terminating`"),
        "{e}"
    );
}

/// A replacement's group counts every pod it has, the terminating one and the
/// one gone included nowhere twice (Volcano's `job.Tasks`): with the priority
/// plugin alone deciding starvation (no gang), a high-priority group of two
/// pods with one running is starving while its replacement waits, and preempt
/// evicts a low-priority pod for it. By hand, on four one-CPU nodes: `hi`'s pod
/// on `n-1` is deleted at 600 s (a `NoExecute` taint); a Deployment's
/// replacement exists then, preempts `lo`'s pod on `n-0` at 600 s and starts
/// there at 630 s (its victim's 30 s grace); a StatefulSet's exists once the
/// pod is gone (630 s), preempts then and starts at 660 s. (Before, a group's
/// count lost each replaced pod: neither preempted.)
#[test]
fn a_replacement_s_group_is_starving_and_preempts_for_it() {
    let manifest = |kind: &str| {
        format!(
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: high}}\nvalue: 1000\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {{name: low}}\nvalue: 10\n---\napiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: hi}}\nspec:\n  replicas: 2\n  serviceName: hi\n  selector: {{matchLabels: {{app: hi}}}}\n  template:\n    metadata: {{labels: {{app: hi}}}}\n    spec: {{schedulerName: volcano, priorityClassName: high, containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]}}\n---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: lo, annotations: {{lahar.io/duration: 5h}}}}\nspec:\n  minAvailable: 1\n  priorityClassName: low\n  tasks: [{{name: t, replicas: 2, template: {{spec: {{priorityClassName: low, containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]}}}}}}]\n"
        )
        .replace("  serviceName: hi\n", if kind == "StatefulSet" { "  serviceName: hi\n" } else { "" })
    };
    let conf = "actions: \"enqueue, allocate, preempt, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: conformance\n- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n";
    for (kind, preempted, start) in [("Deployment", "600", "630"), ("StatefulSet", "630", "660")] {
        let m = manifest(kind);
        let pods = run_files(&[("m.yaml", &m), ("v.conf", conf)], 4, "  horizon: 2h\n  scheduler: {conf: v.conf}\n");
        let facts: Vec<[&str; 5]> = pods
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                [f[0], f[4], f[6], f[7], f[8]]
            })
            .collect();
        let want = [
            ["hi", "n-2", "0", "7200", "running"],
            ["hi", "n-1", "0", "600", "evicted"],
            ["hi", "n-0", start, "7200", "running"],
            ["lo", "n-3", "0", "7200", "running"],
            ["lo", "n-0", "0", preempted, "preempted"],
        ];
        assert_eq!(facts, want, "{kind}: {pods}");
    }
}
