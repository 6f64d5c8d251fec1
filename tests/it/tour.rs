//! The tour of bad and unusual inputs (issue 14): one row per input, run through the
//! binary — exit code, the message's location and field path, never a panic. Add a
//! row for every new input path.

use crate::lahar;

/// One input: files written into a fresh directory, the command (`{d}` is that
/// directory), the exit code, and what stderr and stdout must contain.
struct Case {
    name: &'static str,
    files: &'static [(&'static str, &'static str)],
    args: &'static [&'static str],
    code: i32,
    stderr: &'static [&'static str],
    stdout: &'static [&'static str],
}

/// A scenario: HEAD, one 8-GPU node, then `rest` (lines under `spec:`).
macro_rules! scn {
    ($rest:expr) => {
        concat!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes:\n      - {name: n0, cpu: 16, memory: 64Gi, gpus: 8}\n",
            $rest
        )
    };
}

/// A scenario with one 1-GPU job `j` (pod `j-w-0`).
macro_rules! scn_ok {
    () => {
        scn!("  workload:\n    - jobs:\n      - {name: j, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n")
    };
}

const VCJOB: &str = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: vj\n  annotations: {lahar.io/duration: 1h}\nspec:\n  minAvailable: 2\n  tasks:\n    - replicas: 2\n      name: w\n      template:\n        spec:\n          containers:\n            - name: c\n              resources: {requests: {nvidia.com/gpu: 1}}\n";

const CASES: &[Case] = &[
    // 1. Typos in manifests (against the kinds' CRD schemas).
    Case {
        name: "manifest typo minAvailabel",
        files: &[
            ("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")),
            (
                "m.yaml",
                "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: vj, annotations: {lahar.io/duration: 1h}}\nspec:\n  minAvailabel: 2\n  tasks: [{replicas: 1, name: w, template: {spec: {containers: [{name: c}]}}}]\n",
            ),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["m.yaml:5:17: document 1: spec.minAvailabel: unknown field", "did you mean `minAvailable`?"],
        stdout: &[],
    },
    Case {
        name: "manifest typo queeu",
        files: &[
            ("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")),
            (
                "m.yaml",
                "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: vj, annotations: {lahar.io/duration: 1h}}\nspec:\n  queeu: default\n  tasks: [{replicas: 1, name: w, template: {spec: {containers: [{name: c}]}}}]\n",
            ),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["spec.queeu: unknown field `queeu`", "did you mean `queue`?"],
        stdout: &[],
    },
    Case {
        name: "manifest typo replica",
        files: &[
            ("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")),
            (
                "m.yaml",
                "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: vj, annotations: {lahar.io/duration: 1h}}\nspec:\n  tasks: [{replica: 1, name: w, template: {spec: {containers: [{name: c}]}}}]\n",
            ),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["spec.tasks[0].replica: unknown field `replica`", "did you mean `replicas`?"],
        stdout: &[],
    },
    Case {
        name: "manifest typo resources.request",
        files: &[
            ("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")),
            (
                "m.yaml",
                "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: vj, annotations: {lahar.io/duration: 1h}}\nspec:\n  tasks: [{replicas: 1, name: w, template: {spec: {containers: [{name: c, resources: {request: {cpu: 1}}}]}}}]\n",
            ),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["resources.request: unknown field `request`", "did you mean `requests`?"],
        stdout: &[],
    },
    Case {
        name: "manifest fields the scheduler ignores",
        files: &[
            ("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")),
            (
                "m.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {lahar.io/duration: 1h}, managedFields: [{manager: kubectl}]}\nspec:\n  containers: [{name: c, image: x, command: [a], env: [{name: A, value: b}], volumeMounts: [{name: v, mountPath: /v}]}]\n  volumes: [{name: v, emptyDir: {}}]\nstatus: {phase: Pending}\n",
            ),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 0,
        stderr: &[],
        stdout: &["ok (1 nodes, 1 queues, 1 jobs)"],
    },
    Case {
        name: "manifest shortened field name",
        files: &[
            ("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")),
            (
                "m.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {lahar.io/duration: 1h}}\nspec: {priorityClass: high, containers: [{name: c}]}\n",
            ),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["spec.priorityClass: unknown field", "did you mean `priorityClassName`?"],
        stdout: &[],
    },
    // 2. Dropped input is a warning (an error under --strict).
    Case {
        name: "trace rows skipped",
        files: &[
            ("s.yaml", scn!("  workload:\n    - trace: {format: lahar, path: t.csv}\n")),
            ("t.csv", "job,submit_s,duration_s,gpu\na,0,60,1\nb,x,60,1\n"),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 0,
        stderr: &["warning: ", "t.csv:3:1: spec.workload[0].trace: 1 trace rows skipped (malformed)"],
        stdout: &[],
    },
    Case {
        name: "trace rows skipped, strict",
        files: &[
            ("s.yaml", scn!("  workload:\n    - trace: {format: lahar, path: t.csv}\n")),
            ("t.csv", "job,submit_s,duration_s,gpu\na,0,60,1\nb,x,60,1\n"),
        ],
        args: &["validate", "--strict", "{d}/s.yaml"],
        code: 2,
        stderr: &["error: ", "1 trace rows skipped (malformed)", "--strict"],
        stdout: &[],
    },
    Case {
        name: "truncated last line",
        files: &[
            ("s.yaml", scn!("  workload:\n    - trace: {format: lahar, path: t.csv}\n")),
            ("t.csv", "job,submit_s,duration_s,gpu\na,0,60,1\nb,5,6"),
        ],
        args: &["run", "-q", "--out", "{d}/o", "{d}/s.yaml"],
        code: 0,
        stderr: &["t.csv:3:1", "trace rows skipped (malformed)"],
        stdout: &[],
    },
    Case {
        name: "trace with no job",
        files: &[
            ("s.yaml", scn!("  workload:\n    - trace: {format: lahar, path: t.csv}\n")),
            ("t.csv", "job,submit_s,duration_s,gpu\n"),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["spec.workload[0].trace.path: the trace yields no job", "allowEmpty: true"],
        stdout: &[],
    },
    Case {
        name: "manifests that yield no job",
        files: &[("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")), ("m.yaml", "# nothing yet\n---\n")],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["s.yaml:9:7: spec.workload[0].manifests: the manifests yield no job (0 objects read)"],
        stdout: &[],
    },
    Case {
        name: "manifests whose every object is skipped",
        files: &[
            ("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")),
            (
                "m.yaml",
                "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: nginx}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: nginx}}\n  template:\n    metadata: {labels: {app: nginx}}\n    spec:\n      containers: [{name: nginx, image: nginx}]\n",
            ),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &[
            "s.yaml:9:7: spec.workload[0].manifests: the manifests yield no job: 1 object read, all skipped as making no pods for Volcano (1 ReplicaSet (apps/v1) of schedulerName `default-scheduler`)",
        ],
        stdout: &[],
    },
    Case {
        name: "trace allowed to be empty",
        files: &[
            ("s.yaml", scn!("  workload:\n    - trace: {format: lahar, path: t.csv, allowEmpty: true}\n")),
            ("t.csv", "job,submit_s,duration_s,gpu\n"),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 0,
        stderr: &[],
        stdout: &["ok"],
    },
    Case {
        name: "pod no node can hold",
        files: &[(
            "s.yaml",
            scn!(
                "  workload:\n    - jobs:\n      - {name: big, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 16}}]}\n"
            ),
        )],
        args: &["run", "-q", "--out", "{d}/o", "{d}/s.yaml"],
        code: 0,
        stderr: &["warning: ", "spec.workload[0].jobs[0].tasks[0]: job `big` task `w`", "the job stays pending"],
        stdout: &[],
    },
    Case {
        name: "pod no node can hold, strict run",
        files: &[(
            "s.yaml",
            scn!(
                "  workload:\n    - jobs:\n      - {name: big, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 16}}]}\n"
            ),
        )],
        args: &["run", "--strict", "--out", "{d}/o", "{d}/s.yaml"],
        code: 2,
        stderr: &["error: ", "job `big` task `w`"],
        stdout: &[],
    },
    Case {
        name: "gang larger than the cluster",
        files: &[(
            "s.yaml",
            scn!(
                "  workload:\n    - jobs:\n      - {name: g, duration: 1h, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 8}}]}\n"
            ),
        )],
        args: &["validate", "{d}/s.yaml"],
        code: 0,
        stderr: &[
            "spec.workload[0].jobs[0]: job `g`: its gang of 2 pods needs at least 16 nvidia.com/gpu, more than the whole cluster has (8 nvidia.com/gpu)",
            "it can never start",
        ],
        stdout: &[],
    },
    Case {
        name: "nodeSelector matches no node",
        files: &[(
            "s.yaml",
            scn!(
                "  workload:\n    - jobs:\n      - {name: s, duration: 1h, tasks: [{name: w, replicas: 1, resources: {cpu: 1}, nodeSelector: {zone: moon}}]}\n"
            ),
        )],
        args: &["validate", "{d}/s.yaml"],
        code: 0,
        stderr: &["with a matching nodeSelector"],
        stdout: &[],
    },
    // 3. Metrics with no samples; zero horizon.
    Case {
        name: "horizon 0",
        files: &[("s.yaml", scn!("  horizon: 0s\n"))],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["s.yaml:8:12: spec.horizon: must be longer than 0"],
        stdout: &[],
    },
    Case {
        name: "no job finishes: n/a, not 0",
        files: &[(
            "s.yaml",
            scn!(
                "  horizon: 10m\n  workload:\n    - jobs:\n      - {name: j, duration: 1h, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n"
            ),
        )],
        args: &["run", "--out", "{d}/o", "{d}/s.yaml"],
        code: 0,
        stderr: &[],
        stdout: &["JCT mean / p50 / p99            n/a / n/a / n/a"],
    },
    // 4. Late failures caught up front.
    Case {
        name: "unwritable --out",
        files: &[("s.yaml", scn_ok!()), ("file", "x")],
        args: &["run", "-q", "--out", "{d}/file/o", "{d}/s.yaml"],
        code: 1,
        stderr: &["cannot write outputs to"],
        stdout: &[],
    },
    // 5. Type errors name the field and what was found.
    Case {
        name: "integer expected",
        files: &[(
            "s.yaml",
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodeGroups:\n      - {name: h, count: four, cpu: 8, memory: 1Gi}\n",
        )],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["s.yaml:7:26: spec.cluster.nodeGroups[0].count: expected an integer, got `four`"],
        stdout: &[],
    },
    Case {
        name: "unknown scenario field",
        files: &[("s.yaml", scn!("  sead: 3\n"))],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["s.yaml:8:", "unknown field `sead`"],
        stdout: &[],
    },
    Case {
        name: "yaml syntax",
        files: &[("s.yaml", "apiVersion: lahar.io/v1alpha1\nkind: Scenario\n  bad: [\n")],
        args: &["validate", "{d}/s.yaml"],
        code: 2,
        stderr: &["s.yaml:3:"],
        stdout: &[],
    },
    Case {
        name: "missing scenario file",
        files: &[],
        args: &["validate", "{d}/nope.yaml"],
        code: 2,
        stderr: &["nope.yaml", "cannot read scenario"],
        stdout: &[],
    },
    Case {
        name: "scenario is a directory",
        files: &[("sub/x", "")],
        args: &["validate", "{d}/sub"],
        code: 2,
        stderr: &["sub", "directory"],
        stdout: &[],
    },
    Case {
        name: "nccl --nodes 0",
        files: &[],
        args: &["nccl", "--nodes", "0"],
        code: 2,
        stderr: &["--nodes"],
        stdout: &[],
    },
    // 10. Explain that scales.
    Case {
        name: "explain an unknown pod",
        files: &[("s.yaml", scn_ok!())],
        args: &["run", "--out", "{d}/o", "--explain", "j-x-0", "{d}/s.yaml"],
        code: 2,
        stderr: &["--explain", "no pod `j-x-0`", "nearest: default/j-w-0"],
        stdout: &[],
    },
    Case {
        name: "explain window reversed",
        files: &[("s.yaml", scn_ok!())],
        args: &["run", "--out", "{d}/o", "--explain", "j-w-0", "--explain-window", "2h..1h", "{d}/s.yaml"],
        code: 2,
        stderr: &["--explain-window", "the window is empty"],
        stdout: &[],
    },
    Case {
        name: "explain summary line",
        files: &[("s.yaml", scn_ok!())],
        args: &["run", "--out", "{d}/o", "--explain", "j-w-0", "{d}/s.yaml"],
        code: 0,
        stderr: &[],
        stdout: &["explain: default/j-w-0: first bound to n0 at 0 s (after 0 s pending); looked at in 1 session"],
    },
    // 11. Starting points.
    Case { name: "bare lahar prints help", files: &[], args: &[], code: 2, stderr: &["Usage: lahar"], stdout: &[] },
    Case {
        name: "init an unknown example",
        files: &[],
        args: &["init", "--example", "nope"],
        code: 2,
        stderr: &["--example"],
        stdout: &[],
    },
    Case {
        name: "completions for an unknown shell",
        files: &[],
        args: &["completions", "ksh"],
        code: 2,
        stderr: &["invalid value 'ksh'"],
        stdout: &[],
    },
    // Overrides (--set, --seed).
    Case {
        name: "--set without =",
        files: &[("s.yaml", scn_ok!())],
        args: &["validate", "{d}/s.yaml", "--set", "spec.seed"],
        code: 2,
        stderr: &["--set: `spec.seed`: expected PATH=VALUE"],
        stdout: &[],
    },
    Case {
        name: "--set a wrong type",
        files: &[("s.yaml", scn_ok!())],
        args: &["validate", "{d}/s.yaml", "--set", "spec.seed=abc"],
        code: 2,
        stderr: &["<command line>: spec.seed: expected an integer, got `abc` (set by --set spec.seed=abc)"],
        stdout: &[],
    },
    Case {
        name: "--set an index out of range",
        files: &[("s.yaml", scn_ok!())],
        args: &["validate", "{d}/s.yaml", "--set", "spec.cluster.nodes[3].cpu=1"],
        code: 2,
        stderr: &["`spec.cluster.nodes` has 1 items, no index 3"],
        stdout: &[],
    },
    Case {
        name: "--set a bad path",
        files: &[("s.yaml", scn_ok!())],
        args: &["validate", "{d}/s.yaml", "--set", "spec..seed=1"],
        code: 2,
        stderr: &["bad field path"],
        stdout: &[],
    },
    Case {
        name: "--seed not a number",
        files: &[("s.yaml", scn_ok!())],
        args: &["validate", "{d}/s.yaml", "--seed", "x"],
        code: 2,
        stderr: &["--seed"],
        stdout: &[],
    },
    // Sweeps.
    Case {
        name: "sweep of the wrong kind",
        files: &[
            (
                "w.yaml",
                "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: w}\nspec: {scenario: s.yaml}\n",
            ),
            ("s.yaml", scn_ok!()),
        ],
        args: &["sweep", "{d}/w.yaml", "--out", "{d}/o"],
        code: 2,
        stderr: &["w.yaml:2:7: kind: expected `Sweep`"],
        stdout: &[],
    },
    Case {
        name: "sweep axis value of the wrong type",
        files: &[
            (
                "w.yaml",
                "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {name: w}\nspec:\n  scenario: s.yaml\n  grid:\n    - {name: seed2, path: spec.seed, values: [1, two]}\n",
            ),
            ("s.yaml", scn_ok!()),
        ],
        args: &["sweep", "{d}/w.yaml", "--out", "{d}/o"],
        code: 2,
        stderr: &["w.yaml:7:50: spec.seed: expected an integer, got `two` (set by axis `seed2` value `two`)"],
        stdout: &[],
    },
    Case {
        name: "sweep zip of unequal lengths",
        files: &[
            (
                "w.yaml",
                "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {name: w}\nspec:\n  scenario: s.yaml\n  zip:\n    - {path: spec.seed, values: [1, 2]}\n    - {path: spec.horizon, values: [1h]}\n",
            ),
            ("s.yaml", scn_ok!()),
        ],
        args: &["sweep", "{d}/w.yaml", "--out", "{d}/o"],
        code: 2,
        stderr: &["spec.zip[1].values", "advance together"],
        stdout: &[],
    },
    Case {
        name: "sweep bad --shard",
        files: &[
            (
                "w.yaml",
                "apiVersion: lahar.io/v1alpha1\nkind: Sweep\nmetadata: {name: w}\nspec:\n  scenario: s.yaml\n  seeds: 2\n",
            ),
            ("s.yaml", scn_ok!()),
        ],
        args: &["sweep", "{d}/w.yaml", "--out", "{d}/o", "--shard", "3/2"],
        code: 2,
        stderr: &["shard 3 does not exist: shards are numbered 1 to 2"],
        stdout: &[],
    },
    Case {
        name: "sweep merge of a non-sweep directory",
        files: &[("x/readme", "")],
        args: &["sweep", "merge", "{d}/x", "--out", "{d}/o"],
        code: 2,
        stderr: &["sweep.json: not a sweep directory"],
        stdout: &[],
    },
    // Regression gate.
    Case {
        name: "check: baseline not JSON",
        files: &[("b.json", "{\"lahar_check_baseline\": 1,\n  oops\n}"), ("r/summary.json", "{}")],
        args: &["check", "--baseline", "{d}/b.json", "{d}/r"],
        code: 2,
        stderr: &["b.json:2:"],
        stdout: &[],
    },
    Case {
        name: "check: missing run directory",
        files: &[],
        args: &["check", "--write-baseline", "{d}/b.json", "{d}/nope"],
        code: 2,
        stderr: &["nope"],
        stdout: &[],
    },
    Case {
        name: "check: unknown tolerance metric",
        files: &[("b.json", "{}"), ("r/summary.json", "{}")],
        args: &["check", "--baseline", "{d}/b.json", "{d}/r", "--tolerance", "jct_s.maen=5%"],
        code: 2,
        stderr: &["jct_s.maen", "did you mean `jct_s.mean`"],
        stdout: &[],
    },
    // Reports on bad directories.
    Case {
        name: "compare a missing directory",
        files: &[],
        args: &["compare", "{d}/nope", "{d}/nope2", "--out", "{d}/c"],
        code: 2,
        stderr: &["nope"],
        stdout: &[],
    },
    Case {
        name: "report a directory without outputs",
        files: &[("x/readme", "")],
        args: &["report", "{d}/x"],
        code: 2,
        stderr: &["summary.json"],
        stdout: &[],
    },
    // Traces from the command line.
    Case {
        name: "trace inspect unknown format",
        files: &[("t.csv", "a,b\n")],
        args: &["trace", "inspect", "{d}/t.csv", "--format", "nope"],
        code: 2,
        stderr: &["nope"],
        stdout: &[],
    },
    Case {
        name: "trace inspect strict stops at a bad row",
        files: &[("t.csv", "job,submit_s,duration_s,gpu\na,0,60,1\nb,x,60,1\n")],
        args: &["trace", "inspect", "{d}/t.csv", "--format", "lahar", "--strict"],
        code: 2,
        stderr: &["t.csv", "line 3"],
        stdout: &[],
    },
    // Manifests at the wrong place.
    Case {
        // A Queue beside the jobs is a queue of the scenario (KubeRay's samples).
        name: "queue in a workload manifest",
        files: &[
            ("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")),
            (
                "m.yaml",
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\nspec: {weight: 1}\n",
            ),
        ],
        args: &["validate", "{d}/s.yaml"],
        code: 0,
        stderr: &[],
        stdout: &["ok (1 nodes, 2 queues, 0 jobs)"],
    },
    Case {
        name: "manifest without timing",
        files: &[("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")), ("m.yaml", VCJOB_NO_DURATION)],
        args: &["validate", "{d}/s.yaml"],
        code: 0,
        stderr: &["warning: ", "1 job has no run time", "the first `default/vj`: it runs until the last other event"],
        stdout: &["ok (1 nodes, 1 queues, 1 jobs)"],
    },
    Case {
        name: "a valid VolcanoJob",
        files: &[("s.yaml", scn!("  workload:\n    - manifests: m.yaml\n")), ("m.yaml", VCJOB)],
        args: &["run", "-q", "--out", "{d}/o", "{d}/s.yaml"],
        code: 0,
        stderr: &[],
        stdout: &[],
    },
];

const VCJOB_NO_DURATION: &str = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: vj\nspec:\n  tasks:\n    - replicas: 1\n      name: w\n      template: {spec: {containers: [{name: c}]}}\n";

#[test]
fn the_tour_of_bad_and_unusual_inputs() {
    let mut failures = Vec::new();
    for c in CASES {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display().to_string();
        for (name, text) in c.files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let args: Vec<String> = c.args.iter().map(|a| a.replace("{d}", &d)).collect();
        let out = lahar().args(&args).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let mut why = Vec::new();
        if out.status.code() != Some(c.code) {
            why.push(format!("exit {:?}, expected {}", out.status.code(), c.code));
        }
        if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
            why.push("panicked".to_string());
        }
        why.extend(c.stderr.iter().filter(|n| !stderr.contains(*n)).map(|n| format!("stderr lacks {n:?}")));
        why.extend(c.stdout.iter().filter(|n| !stdout.contains(*n)).map(|n| format!("stdout lacks {n:?}")));
        if !why.is_empty() {
            failures.push(format!(
                "{}: {}\n  stderr: {}\n  stdout: {}",
                c.name,
                why.join("; "),
                stderr.trim(),
                stdout.trim()
            ));
        }
    }
    assert!(CASES.len() >= 48, "{} cases", CASES.len());
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}
