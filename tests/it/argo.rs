//! Argo Workflows as Volcano's integration uses them (examples/manifests/argo/,
//! Volcano's `example/integrations/argo/`): resource steps that create
//! VolcanoJobs, each created once the steps before it have completed.

use super::*;
use lahar::scenario::load_file;
use lahar_core::model::job::{PolicyAction, PolicyEvent};
use lahar_core::model::resource::Resources;
use lahar_core::util::time::SimTime;

fn example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/argo-scenario.yaml")
}

/// The published Workflows, job by job: the DAG's task B is the VolcanoJob its
/// manifest describes with `{{inputs.parameters.task}}` = `bbb` (generateName's
/// suffix derived, so the same everywhere), waiting for A.
#[test]
fn published_workflows_become_their_jobs() {
    let s = load_file(&example()).unwrap_or_else(|e| panic!("{e}"));
    let jobs = s.jobs();
    let flows: Vec<(&str, String, Vec<String>)> = jobs
        .iter()
        .map(|j| {
            let f = j.flow.as_deref().expect("every job is a workflow step");
            (j.name.as_str(), format!("{}: {}", f.flow, f.step), f.targets.iter().map(|t| t.to_string()).collect())
        })
        .collect();
    let v = |t: &[&str]| t.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        flows,
        [
            ("step-job-hello1-pbr5b", "Workflow default/volcano-step-job-m5cnr: hello-1".into(), v(&[])),
            ("step-job-hello2a-6ckd6", "Workflow default/volcano-step-job-m5cnr: hello-2a".into(), v(&["hello-1"])),
            ("step-job-hello2b-949np", "Workflow default/volcano-step-job-m5cnr: hello-2b".into(), v(&["hello-1"])),
            ("dag-job-aaa-czh5c", "Workflow default/volcano-dag-job-kpqv8: A".into(), v(&[])),
            ("dag-job-bbb-mflzh", "Workflow default/volcano-dag-job-kpqv8: B".into(), v(&["A"])),
            ("dag-job-ccc-wsnvm", "Workflow default/volcano-dag-job-kpqv8: C".into(), v(&["A"])),
            ("dag-job-ddd-88qrr", "Workflow default/volcano-dag-job-kpqv8: D".into(), v(&["B", "C"])),
            ("mpi-hello-job", "Workflow argo/volcano-mpi-hello-1764000000: submit-job".into(), v(&[])),
        ]
    );
    let b = &jobs[4];
    assert_eq!(
        (&*b.kind, &*b.namespace, b.min_available, b.submit, b.max_retry),
        ("VolcanoJob", "default", 1, SimTime(0), 1)
    );
    let t: Vec<(&str, u32, Resources)> = b.tasks.iter().map(|t| (&*t.name, t.replicas, t.requests)).collect();
    assert_eq!(t, [("default-hello", 2, Resources::new(100, 0, 0, 1))]);
    assert_eq!((b.policies[0].event, b.policies[0].action), (PolicyEvent::PodEvicted, PolicyAction::RestartJob));
    assert_eq!(b.pod_name(0, 1), "dag-job-bbb-mflzh-default-hello-1");
    // The MPI template's job: the Workflow's parameter names it, in the
    // Workflow's namespace.
    let m = &jobs[7];
    assert_eq!((&*m.namespace, m.min_available), ("argo", 3));
    assert_eq!(
        m.tasks.iter().map(|t| (&*t.name, t.replicas)).collect::<Vec<_>>(),
        [("mpimaster", 1), ("mpiworker", 2)]
    );
}

/// In time, through the binary (10-minute jobs, room for all): the steps run
/// hello-1, then hello-2a and hello-2b together; the DAG A, then B and C, then D
/// at 1200 s; the log-following container step is left out with a warning.
#[test]
fn workflows_run_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = lahar().arg("run").arg("-q").arg(example()).arg("--out").arg(dir.path()).assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let rows = job_rows(&std::fs::read_to_string(dir.path().join("jobs.csv")).unwrap());
    assert_eq!(
        rows,
        [
            "step-job-hello1-pbr5b,0,0,600,Completed",
            "dag-job-aaa-czh5c,0,0,600,Completed",
            "argo/mpi-hello-job,0,0,600,Completed",
            "step-job-hello2a-6ckd6,600,600,1200,Completed",
            "step-job-hello2b-949np,600,600,1200,Completed",
            "dag-job-bbb-mflzh,600,600,1200,Completed",
            "dag-job-ccc-wsnvm,600,600,1200,Completed",
            "dag-job-ddd-88qrr,1200,1200,1800,Completed",
        ]
    );
    assert!(
        stderr.contains("mpi-hello-world.yaml:27:7: document 1: spec.templates[1].container: 1 part of objects left out, the first: Workflow `volcano-mpi-hello-1764000000` step `follow-logs`: a `container` template's pod goes to the default scheduler"),
        "{stderr}"
    );
}

/// What lahar cannot time or read is an error at its place, through the binary.
#[test]
fn bad_workflows_are_located_errors() {
    let dag =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/argo/20-job-DAG.yaml"))
            .unwrap();
    let container = "  - name: logs\n    container: {image: busybox, command: [sleep, \"60\"]}\n";
    let cases: Vec<(String, &str)> = vec![
        (dag.replace("{{inputs.parameters.task}}", "{{inputs.parameters.tsk}}"), "20-job-DAG.yaml:46:33: document 1: spec.templates[1].resource.manifest: `{{inputs.parameters.tsk}}`: lahar knows the variables inputs.parameters.*, workflow.parameters.*, workflow.name, workflow.namespace and workflow.uid, and this one has no value"),
        (dag.replace("minAvailable: 1", "minAvailabel: 1"), "20-job-DAG.yaml:54:25: document 1: spec.templates[1].resource.manifest (step `A`): spec.minAvailabel: unknown field `minAvailabel`"),
        (dag.replace("dependencies: [B, C]", "dependencies: [B, X]"), "20-job-DAG.yaml:30:23: document 1: spec.templates[0].dag.tasks[3].dependencies: the dependencies name no task of this DAG or form a cycle (tasks: A, B, C, D)"),
        (dag.replace("dependencies: [A]\n        arguments:\n          parameters: [{name: message, value: B}", "dependencies: [A]\n        when: \"{{workflow.parameters.go}} == yes\"\n        arguments:\n          parameters: [{name: message, value: B}"), "document 1: spec.templates[0].dag.tasks[1].when: lahar does not model conditional steps"),
        (dag.replace("action: create", "action: apply"), "document 1: spec.templates[1].resource.action: expected `create` (lahar reads resource steps that create VolcanoJobs), got `apply`"),
        (dag.replace("successCondition: status.state.phase = Completed", "successCondition: status.state.phase = Running"), "document 1: spec.templates[1].resource.successCondition: lahar reads a step's success as its VolcanoJob's `status.state.phase = Completed`, got `status.state.phase = Running`"),
        (dag.replace("template: hello-tmpl\n        dependencies: [A]", "template: helo-tmpl\n        dependencies: [A]"), "document 1: spec.templates[0].dag.tasks[1].template: template `helo-tmpl` is not in the Workflow or its WorkflowTemplate"),
        (format!("{}{container}", dag.replace("- name: A\n        template: hello-tmpl", "- name: A\n        template: logs")), "document 1: spec.templates[0].dag.tasks[1].template: step `B` waits for step `A`, a `container` template lahar does not simulate"),
        (dag.replace("kind: Job\n", "kind: Deployment\n").replace("apiVersion: batch.volcano.sh/v1alpha1\n        kind: Deployment", "apiVersion: apps/v1\n        kind: Deployment"), "document 1: spec.templates[1].resource.manifest: template `hello-tmpl` creates a `Deployment` (apps/v1): lahar reads resource steps that create VolcanoJobs (batch.volcano.sh Job)"),
        (dag.replace("  entrypoint: volcano-dag-job\n", "  entrypoint: volcano-dag-job\n  onExit: cleanup\n"), "document 1: spec.onExit: lahar does not model exit handlers"),
        (
            format!("{}{container}", dag.replace("- name: D\n        template: hello-tmpl", "- name: D\n        template: logs").replace("  entrypoint: volcano-dag-job\n", "  entrypoint: volcano-dag-job\n  schedulerName: volcano\n")),
            "document 1: spec.templates[2].container: a `container` step whose pod Volcano schedules (schedulerName: volcano) is not modelled: lahar cannot time its command",
        ),
        (dag.replace("    resource:\n", "    activeDeadlineSeconds: 60\n    resource:\n"), "document 1: spec.templates[1].activeDeadlineSeconds: lahar does not model a step deadline"),
        (dag.replace("template: hello-tmpl\n        arguments:\n          parameters: [{name: message, value: A}", "template: volcano-dag-job\n        arguments:\n          parameters: [{name: message, value: A}"), "document 1: spec.templates[0].dag.tasks[0].template: template `volcano-dag-job` calls itself: without `when` it never ends"),
        ("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  workflowTemplateRef: {name: nowhere}\n".to_string(), "m.yaml:5:24: document 1: spec.workflowTemplateRef.name: WorkflowTemplate (namespace `default`) `nowhere` is not in the manifests"),
    ];
    for (manifest, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = if want.starts_with("m.yaml") { "m.yaml" } else { "20-job-DAG.yaml" };
        std::fs::write(dir.path().join(file), &manifest).unwrap();
        let text = scenario(
            "    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi}",
            &format!("  defaults: {{duration: 10m}}\n  workload:\n    - manifests: {file}\n"),
        );
        std::fs::write(dir.path().join("s.yaml"), text).unwrap();
        let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "{want}\n{err}");
    }
}

/// A random DAG of resource steps (each task after a random set of earlier ones,
/// its own run time, with or without a `successCondition`) on a cluster with
/// room for all: each job is created, and starts, when the last step it waits
/// for is done — a step with a condition when its job ends, one without when it
/// was created — and runs its own time.
mod random_dags {
    use super::*;
    use proptest::prelude::*;

    fn workflow(tasks: &[(Vec<usize>, u32, bool)]) -> String {
        let mut s = String::from(
            "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  entrypoint: main\n  templates:\n  - name: main\n    dag:\n      tasks:\n",
        );
        for (i, (deps, _, _)) in tasks.iter().enumerate() {
            let deps: Vec<String> = deps.iter().map(|d| format!("t{d}")).collect();
            s += &format!("      - {{name: t{i}, template: j{i}, dependencies: [{}]}}\n", deps.join(", "));
        }
        for (i, (_, minutes, waits)) in tasks.iter().enumerate() {
            let cond = if *waits { "      successCondition: status.state.phase = Completed\n" } else { "" };
            s += &format!(
                "  - name: j{i}\n    resource:\n      action: create\n{cond}      manifest: |\n        apiVersion: batch.volcano.sh/v1alpha1\n        kind: Job\n        metadata: {{name: job{i}, annotations: {{lahar.io/duration: {minutes}m}}}}\n        spec:\n          tasks:\n          - replicas: 1\n            name: w\n            template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]}}}}\n"
            );
        }
        s
    }

    /// The same steps as `steps` groups: group g of `sizes[g]` parallel steps.
    fn steps_workflow(sizes: &[usize], tasks: &[(u32, bool)]) -> String {
        let mut s = String::from(
            "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  entrypoint: main\n  templates:\n  - name: main\n    steps:\n",
        );
        let mut i = 0;
        for &n in sizes {
            for k in 0..n {
                s += &format!("    {} {{name: s{i}, template: j{i}}}\n", if k == 0 { "- -" } else { "  -" });
                i += 1;
            }
        }
        let dag: Vec<(Vec<usize>, u32, bool)> = tasks.iter().map(|&(m, w)| (vec![], m, w)).collect();
        let dag = workflow(&dag);
        s + &dag[dag.find("  - name: j0").expect("templates")..]
    }

    fn dags() -> impl Strategy<Value = Vec<(Vec<usize>, u32, bool)>> {
        (1usize..8).prop_flat_map(|n| {
            (0..n)
                .map(|i| (proptest::sample::subsequence((0..i).collect::<Vec<_>>(), 0..=i), 1u32..30, any::<bool>()))
                .collect::<Vec<_>>()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn each_job_starts_when_what_it_waits_for_is_done(tasks in dags()) {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("w.yaml"), workflow(&tasks)).unwrap();
            let text = scenario("    nodes:\n      - {name: n0, cpu: 64, memory: 64Gi}", "  workload:\n    - manifests: w.yaml\n");
            let s = lahar::scenario::load_str(&text, "s.yaml", dir.path()).unwrap_or_else(|e| panic!("{e}"));
            let out = dir.path().join("out");
            lahar::run(s, &lahar::RunOptions { out_dir: Some(out.clone()), ..Default::default() }).expect("run");
            let rows = job_rows(&std::fs::read_to_string(out.join("jobs.csv")).unwrap());
            // The expected times, by hand: created = the latest `done` of what it
            // waits for; done = end with a condition, else created.
            let mut created = vec![0u64; tasks.len()];
            let mut done = vec![0u64; tasks.len()];
            for (i, (deps, minutes, waits)) in tasks.iter().enumerate() {
                created[i] = deps.iter().map(|&d| done[d]).max().unwrap_or(0);
                done[i] = if *waits { created[i] + u64::from(*minutes) * 60 } else { created[i] };
            }
            let mut want: Vec<String> = tasks
                .iter()
                .enumerate()
                .map(|(i, (_, minutes, _))| {
                    let c = created[i];
                    format!("job{i},{c},{c},{},Completed", c + u64::from(*minutes) * 60)
                })
                .collect();
            let mut got = rows;
            want.sort();
            got.sort();
            prop_assert_eq!(got, want);
        }

        /// `steps`: each group waits for the steps of the groups before it that
        /// wait for their jobs (a group of steps all done at creation passes its
        /// own wait on).
        #[test]
        fn each_group_starts_when_the_groups_before_are_done(
            sizes in proptest::collection::vec(1usize..4, 1..5),
            times in proptest::collection::vec((1u32..30, any::<bool>()), 12),
        ) {
            let n: usize = sizes.iter().sum();
            let tasks = &times[..n];
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("w.yaml"), steps_workflow(&sizes, tasks)).unwrap();
            let text = scenario("    nodes:\n      - {name: n0, cpu: 64, memory: 64Gi}", "  workload:\n    - manifests: w.yaml\n");
            let s = lahar::scenario::load_str(&text, "s.yaml", dir.path()).unwrap_or_else(|e| panic!("{e}"));
            let out = dir.path().join("out");
            lahar::run(s, &lahar::RunOptions { out_dir: Some(out.clone()), ..Default::default() }).expect("run");
            let mut got = job_rows(&std::fs::read_to_string(out.join("jobs.csv")).unwrap());
            // By hand: a group is created when the steps it waits for end; it
            // passes on those of its steps that wait, else what it waited for.
            let mut waits_for: Vec<u64> = Vec::new();
            let mut want = Vec::new();
            let mut i = 0;
            for &size in &sizes {
                let created = waits_for.iter().copied().max().unwrap_or(0);
                let mut ends = Vec::new();
                for _ in 0..size {
                    let (minutes, waits) = tasks[i];
                    let end = created + u64::from(minutes) * 60;
                    want.push(format!("job{i},{created},{created},{end},Completed"));
                    if waits {
                        ends.push(end);
                    }
                    i += 1;
                }
                if !ends.is_empty() {
                    waits_for = ends;
                }
            }
            want.sort();
            got.sort();
            prop_assert_eq!(got, want);
        }
    }
}

/// A WorkflowTemplate in its own file: its problems are reported in that file,
/// two Workflows running it get jobs of distinct generated names, and the
/// Workflow's parameters fill it (one without a value is an error where used).
#[test]
fn workflow_templates_are_shared_and_located() {
    let wft = "apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: t}
spec:
  entrypoint: main
  arguments:
    parameters: [{name: size}]
  templates:
  - name: main
    resource:
      action: create
      successCondition: status.state.phase = Completed
      manifest: |
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {generateName: run-}
        spec:
          tasks: [{replicas: {{workflow.parameters.size}}, name: w, template: {spec: {containers: [{name: c}]}}}]
";
    let wf = |name: &str, args: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {{name: {name}}}\nspec:\n  workflowTemplateRef: {{name: t}}\n{args}---\n"
        )
    };
    let size = "  arguments: {parameters: [{name: size, value: \"2\"}]}\n";
    let load = |files: &[(&str, String)]| {
        let dir = tempfile::tempdir().unwrap();
        for (f, text) in files {
            std::fs::write(dir.path().join(f), text).unwrap();
        }
        let text = scenario(
            "    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi}",
            "  defaults: {duration: 10m}\n  workload:\n    - manifests: [t.yaml, w.yaml]\n",
        );
        std::fs::write(dir.path().join("s.yaml"), text).unwrap();
        lahar::scenario::load_file(&dir.path().join("s.yaml")).map_err(|e| e.to_string())
    };
    let s = load(&[("t.yaml", wft.to_string()), ("w.yaml", format!("{}{}", wf("a", size), wf("b", size)))]).unwrap();
    let jobs = s.jobs();
    let names: Vec<(&str, u32)> = jobs.iter().map(|j| (j.name.as_str(), j.tasks[0].replicas)).collect();
    assert_eq!(names.len(), 2);
    assert_ne!(names[0].0, names[1].0, "{names:?}");
    assert!(names.iter().all(|(n, r)| n.starts_with("run-") && *r == 2), "{names:?}");
    // The template's own problem, in its file; a parameter without a value.
    let e = load(&[
        ("t.yaml", wft.replace("  entrypoint: main\n", "  entrypoint: main\n  onExit: bye\n")),
        ("w.yaml", wf("a", size)),
    ])
    .unwrap_err();
    assert!(e.contains("t.yaml:6:11: document 1: spec.onExit: lahar does not model exit handlers"), "{e}");
    let e = load(&[("t.yaml", wft.to_string()), ("w.yaml", wf("a", ""))]).unwrap_err();
    assert!(
        e.contains("t.yaml:18:30: document 1: spec.templates[0].resource.manifest: `{{workflow.parameters.size}}`"),
        "{e}"
    );
    // The Workflow gives the time, not the job it creates.
    let e = load(&[
        ("t.yaml", wft.replace("{generateName: run-}", "{generateName: run-, annotations: {lahar.io/submit-at: 1h}}")),
        ("w.yaml", wf("a", size)),
    ])
    .unwrap_err();
    assert!(e.contains("lahar.io/submit-at: a Workflow creates this job: give the Workflow the time"), "{e}");
}

/// A resource step that creates a Kubernetes Job of the default scheduler (as
/// Argo's own examples do) is left out with a warning, not refused; a step
/// waiting for its completion cannot be timed and is an error at its place.
#[test]
fn a_default_scheduler_job_step_is_left_out() {
    let wf = |condition: &str, then: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {{name: wf}}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - [{{name: prep, template: k8s-job}}]
    - [{{name: train, template: vc{then}}}]
  - name: k8s-job
    resource:
      action: create
{condition}      manifest: |
        apiVersion: batch/v1
        kind: Job
        metadata: {{generateName: prep-}}
        spec:
          template:
            spec:
              restartPolicy: Never
              containers: [{{name: c, image: busybox}}]
  - name: vc
    resource:
      action: create
      successCondition: status.state.phase = Completed
      manifest: |
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {{name: train, annotations: {{lahar.io/duration: 10m}}}}
        spec:
          tasks: [{{name: w, replicas: 2, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]}}}}}}]
"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("wf.yaml"), wf("", "")).unwrap();
    let sc =
        scenario("    nodes:\n      - {name: n0, cpu: 8, memory: 16Gi}\n", "  workload:\n    - manifests: wf.yaml\n");
    let s = lahar::scenario::load_str(&sc, "s.yaml", dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<String> = s.jobs().iter().map(|j| j.name.clone()).collect();
    assert_eq!(names, ["train"]);
    assert!(
        s.warnings.iter().any(|w| w.message.contains("Workflow `wf` step `prep`: its `resource` template creates a batch/v1 Job whose pods schedulerName `default-scheduler` places, not Volcano; nothing waits for it, so it is left out")),
        "{:?}",
        s.warnings
    );
    // Waiting for that Job to complete: its run time is unknown.
    std::fs::write(dir.path().join("wf.yaml"), wf("      successCondition: status.succeeded > 0\n", "")).unwrap();
    let e = lahar::scenario::load_str(&sc, "s.yaml", dir.path()).unwrap_err().to_string();
    assert!(e.contains("step `train` waits for step `prep`, a `resource` template lahar does not simulate"), "{e}");
}
