//! A whole cluster snapshot as input (issue 12, item 6): `kubectl get nodes,pods,
//! podgroups,queues,hypernodes,priorityclasses -A -o yaml` as one `kind: List`, run
//! with `lahar run --snapshot FILE --conf CONF --sessions 1 --explain ns/pod`.

use super::*;
use lahar_core::model::resource::Resources;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/snapshot").join(name)
}

/// The example snapshot: Nodes from `status.allocatable` (190 CPUs, 2113373340 KiB,
/// 8 GPUs, 110 pods; ephemeral storage and zero hugepages passed over), the Queues
/// and HyperNodes it lists, and its PodGroups with their Pods under their own names.
#[test]
fn a_kind_list_snapshot_is_the_cluster_and_its_state() {
    let s = lahar::overrides::load_snapshot(&example("cluster.yaml"), &[]).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = s.cluster.nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["gpu-a-0", "gpu-a-1", "gpu-b-0", "gpu-b-1"]);
    let n = &s.cluster.nodes[0];
    assert_eq!(n.allocatable, Resources::new(190_000, 2_113_373_340 * 1024, 8000, 110));
    assert_eq!(
        (n.gpu_model.as_str(), n.labels["topology.kubernetes.io/rack"].as_str()),
        ("NVIDIA-H100-80GB-HBM3", "r1")
    );
    assert_eq!(s.cluster.resource_names.len(), 4, "no dimension for hugepages or ephemeral storage");
    let queues: Vec<&str> = s.queues.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(queues, ["default", "research", "prod"]);
    let t = &s.cluster.topology;
    assert_eq!(t.get(t.find("leaf-r2").unwrap()).nodes.len(), 2);
    let jobs: Vec<String> = s.jobs().iter().map(|j| format!("{}/{}", j.namespace, j.name)).collect();
    assert_eq!(jobs, ["team-a/llm-pretrain-7c1f", "team-b/finetune-2b9d", "team-c/eval-5e3a"]);
    // minResources as the job controller wrote it (quota keys passed over).
    assert_eq!(s.jobs()[1].min_resources, Resources::new(64_000, 512 << 30, 16_000, 2));
    assert_eq!(s.jobs()[0].initial.len(), 2, "the running pods start on their nodes");
    assert!(s.warnings.iter().all(|w| w.kind == "jobs-without-run-time"), "{:?}", s.warnings);
}

/// The README's one-command study, through the binary: one session of the conf on
/// the snapshot, decisions under the objects' own names, and `--explain` saying why
/// the fine-tuning gang waits (in full: `operator.rs`).
#[test]
fn the_one_command_study() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let (code, stdout, stderr) = super::operator::snapshot_run(&out, &["--explain", "team-b/finetune-worker-0"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "", "a snapshot's pods have no run time: with --sessions, no warning");
    assert!(stdout.contains("blocked by team-b/finetune-worker-1 at allocatable"), "{stdout}");
    let decisions = std::fs::read_to_string(out.join("decisions.csv")).unwrap();
    assert_eq!(
        decisions,
        "session,t_s,action,kind,job,pod,node,phase,reason\n\
         1,0,enqueue,phase,team-c/eval-5e3a,,,Inqueue,enqueued\n\
         1,0,allocate,bind,team-c/eval-5e3a,team-c/eval-runner-0,gpu-b-1,,\n"
    );
    // No Running row: at the session's close Volcano's cache holds the bound pod
    // Binding, and `getPodGroupPhase` counts it scheduled only at the next close.
    let explain = std::fs::read_to_string(out.join("explain.csv")).unwrap();
    assert!(
        explain.contains(",gang,false,\"not tried: the gang needs 2 pods (minAvailable) and has 0 placed, pipelined or pending BestEffort; queue research's quota admits 1 more"),
        "{explain}"
    );
    let conf = std::fs::read_to_string(out.join("input-scheduler.conf")).unwrap();
    assert!(conf.contains("binpack"), "the run records the conf it used");
    // `lahar validate` checks the same input without running it.
    lahar()
        .arg("validate")
        .arg("--snapshot")
        .arg(example("cluster.yaml"))
        .arg("--conf")
        .arg(example("volcano-scheduler.conf"))
        .assert()
        .success()
        .stdout(predicates::str::contains("cluster.yaml: ok (4 nodes, 3 queues, 3 jobs)"));
}

/// A snapshot as people capture it: objects the scheduler does not read are skipped
/// and counted; a cordoned node and a node tainted `NoSchedule` take only pods that
/// tolerate them (under `predicates`, as in Volcano); a `PreferNoSchedule` taint is
/// reported as not modelled; a bad field inside the List is located at its item.
#[test]
fn skipped_objects_taints_and_located_errors() {
    let dir = tempfile::tempdir().unwrap();
    let node = |name: &str, spec: &str, cpu: &str| {
        format!(
            "- apiVersion: v1\n  kind: Node\n  metadata: {{name: {name}}}\n  spec: {spec}\n  status:\n    allocatable: {{cpu: \"{cpu}\", memory: 8Gi, pods: \"10\"}}\n"
        )
    };
    let pod = |name: &str, tolerations: &str| {
        format!(
            "- apiVersion: v1\n  kind: Pod\n  metadata: {{name: {name}, namespace: ns}}\n  spec:\n    containers: [{{name: c, resources: {{requests: {{cpu: \"3\"}}}}}}]\n    tolerations: {tolerations}\n"
        )
    };
    let list = |items: &str| format!("apiVersion: v1\nitems:\n{items}kind: List\nmetadata:\n  resourceVersion: \"\"\n");
    let others = "- apiVersion: v1\n  kind: Service\n  metadata: {name: api}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: cfg}\n";
    let good = list(
        &(node("a-cordoned", "{unschedulable: true}", "4")
            + &node("b-broken", "{taints: [{key: gpu, value: broken, effect: NoSchedule}]}", "4")
            + &node("c-spot", "{taints: [{key: spot, effect: PreferNoSchedule}]}", "4")
            + &pod("tolerant", "[{key: gpu, operator: Exists}]")
            + &pod("plain", "[]")
            + &pod("another", "[]")
            + others),
    );
    std::fs::write(dir.path().join("good.yaml"), good).unwrap();
    let out = dir.path().join("o");
    let o = lahar()
        .args(["run", "-q", "--sessions", "1", "--explain", "ns/another", "--out"])
        .arg(&out)
        .arg("--snapshot")
        .arg(dir.path().join("good.yaml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("2 objects the scheduler does not read were skipped: 1 ConfigMap (v1), 1 Service (v1)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 node taint lahar does not model, the first: node `c-spot` is tainted spot:PreferNoSchedule"),
        "{stderr}"
    );
    // Each node holds one 3-CPU pod: the tolerant pod may take b-broken, the
    // others only c-spot; nothing goes to the cordoned node.
    let decisions = std::fs::read_to_string(out.join("decisions.csv")).unwrap();
    let binds: Vec<&str> = decisions.lines().filter(|l| l.contains(",bind,")).collect();
    assert_eq!(binds.len(), 2, "{decisions}");
    assert!(binds.iter().any(|l| l.contains("ns/tolerant,b-broken")), "{decisions}");
    assert!(binds.iter().any(|l| l.ends_with(",c-spot,,")), "{decisions}");
    let explain = std::fs::read_to_string(out.join("explain.csv")).unwrap();
    assert!(explain.contains("a-cordoned,predicates,false,node(s) were unschedulable"), "{explain}");
    assert!(explain.contains("b-broken,predicates,false,node(s) had untolerated taint {gpu: broken}"), "{explain}");
    // With `predicate.TaintTolerationEnable: false` Volcano's predicates do not read
    // taints: three pods, three nodes.
    let conf = dir.path().join("no-taints.conf");
    std::fs::write(&conf, "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: predicates\n    arguments: {predicate.TaintTolerationEnable: false}\n").unwrap();
    let out2 = dir.path().join("o2");
    lahar()
        .args(["run", "-q", "--sessions", "1", "--out"])
        .arg(&out2)
        .arg("--conf")
        .arg(&conf)
        .arg("--snapshot")
        .arg(dir.path().join("good.yaml"))
        .assert()
        .success();
    let decisions = std::fs::read_to_string(out2.join("decisions.csv")).unwrap();
    assert_eq!(decisions.matches(",bind,").count(), 3, "{decisions}");
    // --strict turns the warnings into errors.
    let o = lahar().args(["run", "--strict", "--snapshot"]).arg(dir.path().join("good.yaml")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let bad = list(&(node("a", "{}", "4") + &node("b", "{}", "four")));
    std::fs::write(dir.path().join("bad.yaml"), bad).unwrap();
    let o = lahar().args(["run", "--snapshot"]).arg(dir.path().join("bad.yaml")).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.yaml:14:24: document 1: items[1]: status.allocatable.cpu: bad quantity `four`"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
}

/// A lahar scenario (or sweep) given as `--snapshot` is refused with the command
/// that runs it (exit 2), not run as an empty cluster.
#[test]
fn a_scenario_given_as_a_snapshot_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.yaml");
    let text = lahar().args(["init", "--example", "baseline-fifo"]).assert().success().get_output().stdout.clone();
    std::fs::write(&p, text).unwrap();
    for sub in ["run", "validate"] {
        let mut cmd = lahar();
        cmd.arg(sub).arg("--snapshot").arg(&p);
        if sub == "run" {
            cmd.arg("--out").arg(dir.path().join("o"));
        }
        let o = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{sub}: {stderr}");
        assert!(
            stderr.contains("a lahar Scenario is not a cluster snapshot") && stderr.contains("run it as `lahar run"),
            "{stderr}"
        );
    }
}
