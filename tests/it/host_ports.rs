//! Host ports (issue 40): Kubernetes' NodePorts filter as Volcano's predicates
//! plugin runs it. Two pods holding the same protocol and port on overlapping
//! addresses never share a node; the pods on a node hold their ports from
//! allocation (or pipelining) until they are gone; a conflict is `Unschedulable`,
//! which preempt resolves by evicting the pod that holds the port. Each case
//! runs through the binary and reads decisions.csv, hand-checked.

use super::*;

/// A VolcanoJob `name` of `replicas` one-CPU pods (all needed), priority class
/// `class` (`""`: none; the job's and its pods'), whose container lists `ports` (a YAML flow list) and
/// whose pod spec has `spec` more lines (8 spaces of indentation).
fn job(name: &str, replicas: u32, class: &str, ports: &str, spec: &str) -> String {
    let (job_class, class) = match class {
        "" => (String::new(), String::new()),
        c => (format!("  priorityClassName: {c}\n"), format!("          priorityClassName: {c}\n")),
    };
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: {name}\n  annotations: {{lahar.io/duration: 1h}}\nspec:\n{job_class}  minAvailable: {replicas}\n  tasks:\n    - name: w\n      replicas: {replicas}\n      template:\n        spec:\n{class}{spec}          containers:\n            - name: c\n              ports: {ports}\n              resources: {{requests: {{cpu: \"1\"}}}}\n---\n"
    )
}

/// `n` nodes of 8 CPUs, `n0`, `n1`...
fn nodes(n: usize) -> String {
    (0..n).map(|i| format!("      - {{name: n{i}, cpu: 8, memory: 32Gi}}\n")).collect()
}

/// The outputs of a run.
struct Out {
    decisions: String,
    stderr: String,
}

impl Out {
    /// `(pod, node)` of each decision row of `kind`, in order.
    fn of(&self, kind: &str) -> Vec<(String, String)> {
        self.decisions
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>())
            .filter(|f| f[3] == kind)
            .map(|f| (f[5].clone(), f[6].clone()))
            .collect()
    }
    /// `(session, pod, node)` of each decision row of `kind`.
    fn when(&self, kind: &str) -> Vec<(u64, String, String)> {
        self.decisions
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(str::to_string).collect::<Vec<_>>())
            .filter(|f| f[3] == kind)
            .map(|f| (f[0].parse().unwrap(), f[5].clone(), f[6].clone()))
            .collect()
    }
}

/// Runs `objects` on `nodes` under `actions` and the plugin tiers `tiers` (YAML
/// list items of `name:`s or flow mappings), `extra` run arguments.
fn run(nodes: &str, objects: &str, actions: &str, tiers: &str, extra: &[&str]) -> Out {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), objects).unwrap();
    let conf = format!("      actions: \"{actions}\"\n      tiers:\n{tiers}");
    let text = scenario(
        &format!("    nodes:\n{nodes}"),
        &format!(
            "  queues:\n    - {{name: default}}\n  scheduler:\n    inline: |\n{conf}  workload:\n    - manifests: m.yaml\n"
        ),
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = dir.path().join("o");
    let o = lahar().arg("run").arg(dir.path().join("s.yaml")).arg("--out").arg(&out).args(extra).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    Out { decisions: std::fs::read_to_string(out.join("decisions.csv")).unwrap(), stderr }
}

const TIERS: &str =
    "      - plugins:\n        - name: priority\n        - name: gang\n      - plugins:\n        - name: predicates\n";

/// Three pods asking for host port 8080 spread one per node on three nodes; on
/// two nodes the third pod finds none, so the gang of three binds nothing.
#[test]
fn pods_with_one_host_port_take_a_node_each() {
    let j = job("web", 3, "", "[{containerPort: 80, hostPort: 8080}]", "");
    let r = run(&nodes(3), &j, "enqueue, allocate", TIERS, &["--sessions", "3"]);
    let mut used: Vec<String> = r.of("bind").into_iter().map(|b| b.1).collect();
    assert_eq!(used.len(), 3, "{}", r.decisions);
    used.sort();
    used.dedup();
    assert_eq!(used, ["n0", "n1", "n2"], "{}", r.decisions);
    let r = run(&nodes(2), &j, "enqueue, allocate", TIERS, &["--sessions", "3"]);
    assert!(r.of("bind").is_empty(), "{}", r.decisions);
    // Said up front: the gang can never spread over two nodes.
    assert!(
        r.stderr.contains("m.yaml:1:1: document 1: VolcanoJob `web`: task `w` needs 3 pods at once, but its pods hold host port 8080, one pod per node, and 2 node(s) can hold them; the job stays pending"),
        "{}",
        r.stderr
    );
    // Without the NodePorts filter they share a node.
    let off =
        TIERS.replace("- name: predicates", "- {name: predicates, arguments: {predicate.NodePortsEnable: false}}");
    let r = run(&nodes(2), &j, "enqueue, allocate", &off, &["--sessions", "3"]);
    assert_eq!(r.of("bind").len(), 3, "{}", r.decisions);
}

/// Ports conflict only on the same protocol and port, and the same address or
/// `0.0.0.0` on either side: on one node, TCP and UDP 53 coexist, as do 9000 on
/// 10.0.0.1 and 10.0.0.2; 9100 on every address (no hostIP) conflicts with
/// 9100 on 10.0.0.1.
#[test]
fn ports_conflict_by_protocol_address_and_number() {
    let pair = |a: &str, b: &str| job("a", 1, "", a, "") + &job("b", 1, "", b, "");
    let two = |a: &str, b: &str| run(&nodes(1), &pair(a, b), "enqueue, allocate", TIERS, &["--sessions", "3"]);
    let tcp_udp = two("[{containerPort: 53, hostPort: 53}]", "[{containerPort: 53, hostPort: 53, protocol: UDP}]");
    assert_eq!(tcp_udp.of("bind").len(), 2, "{}", tcp_udp.decisions);
    let ips = two(
        "[{containerPort: 1, hostPort: 9000, hostIP: 10.0.0.1}]",
        "[{containerPort: 1, hostPort: 9000, hostIP: 10.0.0.2}]",
    );
    assert_eq!(ips.of("bind").len(), 2, "{}", ips.decisions);
    let any = two("[{containerPort: 1, hostPort: 9100}]", "[{containerPort: 1, hostPort: 9100, hostIP: 10.0.0.1}]");
    assert_eq!(any.of("bind"), [("default/a-w-0".to_string(), "n0".to_string())], "{}", any.decisions);
    // A container port without a host port holds nothing.
    let plain = two("[{containerPort: 80}]", "[{containerPort: 80}]");
    assert_eq!(plain.of("bind").len(), 2, "{}", plain.decisions);
    // Under hostNetwork every container port is a host port.
    let net = job("a", 1, "", "[{containerPort: 80}]", "          hostNetwork: true\n")
        + &job("b", 1, "", "[{containerPort: 80, hostPort: 80}]", "");
    let r = run(&nodes(1), &net, "enqueue, allocate", TIERS, &["--sessions", "3"]);
    assert_eq!(r.of("bind"), [("default/a-w-0".to_string(), "n0".to_string())], "{}", r.decisions);
}

/// A Running pod of the starting state holds its port: the new pod goes to
/// the other node.
#[test]
fn a_running_pod_holds_its_port() {
    let running = "apiVersion: v1\nkind: Pod\nmetadata: {name: old}\nspec:\n  nodeName: n0\n  containers: [{name: c, ports: [{containerPort: 80, hostPort: 80}]}]\nstatus: {phase: Running}\n---\n";
    let objects = running.to_string() + &job("web", 1, "", "[{containerPort: 80, hostPort: 80}]", "");
    let r = run(&nodes(2), &objects, "enqueue, allocate", TIERS, &["--sessions", "3"]);
    assert_eq!(r.of("bind"), [("default/web-w-0".to_string(), "n1".to_string())], "{}", r.decisions);
}

/// A port conflict is resolvable: preempt keeps the node as a candidate and
/// evicts the lower-priority pod holding the port (priority chooses victims) (there is CPU enough: the
/// port alone stops the preemptor), then pipelines the preemptor there. The
/// evicted pod frees the port for the rest of that session only: while it
/// terminates (30 s) it holds the port, and the preemptor binds once it is
/// gone.
#[test]
fn preempt_evicts_the_pod_that_holds_the_port() {
    let classes = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 10\n---\n";
    let low = job("low", 1, "low", "[{containerPort: 80, hostPort: 80}]", "");
    let high = job("high", 1, "high", "[{containerPort: 80, hostPort: 80}]", "").replace(
        "annotations: {lahar.io/duration: 1h}",
        "annotations: {lahar.io/duration: 1h, lahar.io/submit-at: 10m}",
    );
    let objects = format!("{classes}{low}{high}");
    // Without gang in the first tier: gang would protect the one-pod job.
    let tiers = "      - plugins:\n        - name: priority\n      - plugins:\n        - name: predicates\n";
    let r = run(&nodes(1), &objects, "enqueue, allocate, preempt", tiers, &[]);
    assert_eq!(r.of("evict"), [("default/low-w-0".to_string(), "n0".to_string())], "{}", r.decisions);
    let pipelined = r.when("pipeline");
    let binds = r.when("bind");
    assert_eq!(pipelined.len(), 1, "{}", r.decisions);
    assert_eq!(pipelined[0].1, "default/high-w-0");
    let high_bind = binds.iter().find(|b| b.1 == "default/high-w-0").expect("high binds");
    assert!(high_bind.0 > pipelined[0].0, "binds in a later session, once the victim is gone:\n{}", r.decisions);
    assert!(r.stderr.is_empty() || !r.stderr.contains("panic"), "{}", r.stderr);
}

/// Bad host ports are refused at their place, as the API server refuses them.
#[test]
fn bad_host_ports_are_refused_at_their_place() {
    let cases = [
        (
            "[{containerPort: 80, hostPort: 70000}]",
            "",
            "ports[0].hostPort: expected a port number from 1 to 65535, got 70000",
        ),
        (
            "[{containerPort: 80, hostPort: 80, protocol: HTTP}]",
            "",
            "ports[0].protocol: expected `TCP`, `UDP` or `SCTP`, got `HTTP`",
        ),
        ("[{containerPort: 80, hostPort: 80, hostIP: localhost}]", "", "ports[0].hostIP: expected an IP address"),
        (
            "[{containerPort: 80, hostPort: 80}, {containerPort: 81, hostPort: 80}]",
            "",
            "ports[1].hostPort: host port 80/TCP on 0.0.0.0 is given twice in the pod",
        ),
        (
            "[{containerPort: 80, hostPort: 8080}]",
            "          hostNetwork: true\n",
            "ports[0].hostPort: must match `containerPort` (80) when `hostNetwork` is true",
        ),
    ];
    for (ports, spec, needle) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), job("web", 1, "", ports, spec)).unwrap();
        let text = scenario(&format!("    nodes:\n{}", nodes(1)), "  workload:\n    - manifests: m.yaml\n");
        std::fs::write(dir.path().join("s.yaml"), text).unwrap();
        let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains("spec.tasks[0].template.spec.containers[0]."), "{err}");
        assert!(err.contains(needle), "error lacks {needle:?}:\n{err}");
    }
}

/// Compact jobs say `hostPorts:` (TCP on every address). A gang whose pods
/// with host ports need more nodes than the cluster has can never start: a
/// warning says so up front, and the job stays pending; a port out of range is
/// refused at its place.
#[test]
fn compact_host_ports_and_a_gang_that_cannot_spread() {
    let text = |replicas: u32, ports: &str| {
        scenario(
            "    nodeGroups:\n      - {name: n, count: 3, gpus: 8, cpu: 64, memory: 512Gi}",
            &format!(
                "  workload:\n    - jobs:\n        - {{name: a, duration: 1h, tasks: [{{name: worker, replicas: {replicas}, hostPorts: {ports}, resources: {{nvidia.com/gpu: 1}}}}]}}\n"
            ),
        )
    };
    let (dir, path) = write_scenario(&text(3, "[9000]"));
    let out = dir.path().join("o");
    lahar().arg("run").arg("-q").arg(&path).arg("--out").arg(&out).assert().success();
    let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
    let mut nodes: Vec<&str> = pods.lines().skip(1).map(|l| l.split(',').nth(4).unwrap()).collect();
    nodes.sort();
    assert_eq!(nodes, ["n-0", "n-1", "n-2"], "{pods}");

    let (dir, path) = write_scenario(&text(4, "[9000]"));
    let o = lahar().arg("run").arg(&path).arg("--out").arg(dir.path().join("o")).assert().success();
    let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
    assert!(
        err.contains("spec.workload[0].jobs[0]: job `a`: task `worker` needs 4 pods at once, but its pods hold host port 9000, one pod per node, and 3 node(s) can hold them; the job stays pending"),
        "{err}"
    );

    let (_dir, path) = write_scenario(&text(1, "[70000]"));
    let o = lahar().arg("validate").arg(&path).assert().code(2);
    let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
    assert!(
        err.contains(
            "spec.workload[0].jobs[0].tasks[0].hostPorts[0]: expected a port number from 1 to 65535, got 70000"
        ),
        "{err}"
    );
}

/// `Hostport` (test/e2e/schedulingaction/predicates.go), under the e2e conf: a
/// job of twice as many one-CPU pods as there are nodes, all asking for host
/// port 28080, with `minAvailable` the node count. One pod per node runs (the
/// gang is satisfied), the other half stays Pending for the job's whole run.
#[test]
fn hostport() {
    let nodes: String = (0..3).map(|i| format!("      - {{name: n{i}, cpu: 4, memory: 8Gi}}\n")).collect();
    let job = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: hp-spec\n  annotations: {lahar.io/duration: 1h}\nspec:\n  minAvailable: 3\n  tasks:\n    - name: t\n      replicas: 6\n      template:\n        spec:\n          containers: [{name: c, image: nginx, ports: [{containerPort: 28080, hostPort: 28080}], resources: {requests: {cpu: \"1\"}}}]\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("job.yaml"), job).unwrap();
    std::fs::write(dir.path().join("ci.conf"), super::volcano_controller::e2e_conf()).unwrap();
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodes:\n{nodes}  queues: [{{name: default}}]\n  scheduler: {{conf: ci.conf}}\n  workload:\n    - manifests: [job.yaml]\n"
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = super::volcano::run_file(&dir.path().join("s.yaml"));
    let binds = out.binds();
    assert_eq!(binds.len(), 3, "{binds:?}");
    let mut nodes: Vec<&String> = binds.values().collect();
    nodes.sort();
    assert_eq!(nodes, ["n0", "n1", "n2"]);
    let ran = out.pods.iter().filter(|p| !p["start_s"].is_empty()).count();
    assert_eq!(ran, 3, "three pods never start");
    assert_eq!(out.jobs[0]["state"], "Completed");
}

/// `predicate.NodeAffinityEnable: false` turns node selectors off (it was
/// accepted and ignored before): a pod selecting a label no node has binds.
#[test]
fn node_affinity_can_be_switched_off() {
    let j = job("sel", 1, "", "[]", "          nodeSelector: {zone: nowhere}\n");
    let on = run(&nodes(1), &j, "enqueue, allocate", TIERS, &["--sessions", "3"]);
    assert!(on.of("bind").is_empty(), "{}", on.decisions);
    let off =
        TIERS.replace("- name: predicates", "- {name: predicates, arguments: {predicate.NodeAffinityEnable: false}}");
    let r = run(&nodes(1), &j, "enqueue, allocate", &off, &["--sessions", "3"]);
    assert_eq!(r.of("bind"), [("default/sel-w-0".to_string(), "n0".to_string())], "{}", r.decisions);
}
