//! Volcano JobFlow and JobTemplate (issue 13, item 5): each flow step becomes the
//! VolcanoJob `<flow>-<step>` made from its JobTemplate, created once every job it
//! depends on has completed, as Volcano's JobFlow controller does.

use super::*;
use lahar::scenario::load_file;
use lahar_core::model::job::FlowStep;
use lahar_core::model::resource::Resources;
use lahar_core::util::time::{SimDuration, SimTime};
use std::sync::Arc;

/// Volcano's published example (examples/manifests/jobflow/), job by job.
#[test]
fn published_jobflow_becomes_its_jobs() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/jobflow-scenario.yaml");
    let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let jobs = s.jobs();
    let step = |name: &str, targets: &[&str]| FlowStep {
        flow: Arc::from("JobFlow default/test"),
        step: Arc::from(name),
        targets: targets.iter().map(|t| Arc::from(*t)).collect(),
    };
    let expected = [
        ("test-a", step("a", &[]), 600),
        ("test-b", step("b", &["a"]), 1200),
        ("test-c", step("c", &["b"]), 1800),
        ("test-d", step("d", &["b"]), 600),
        ("test-e", step("e", &["c", "d"]), 600),
    ];
    assert_eq!(jobs.len(), expected.len());
    for (j, (name, st, secs)) in jobs.iter().zip(&expected) {
        assert_eq!(j.name, *name);
        assert_eq!((&*j.kind, &*j.namespace, j.min_available, j.submit), ("VolcanoJob", "default", 1, SimTime(0)));
        assert_eq!(j.flow.as_deref(), Some(st), "{name}");
        assert_eq!(j.duration, SimDuration::from_secs(*secs), "{name}");
        let t: Vec<(&str, u32, u32, Resources)> =
            j.tasks.iter().map(|t| (&*t.name, t.replicas, t.min_available, t.requests)).collect();
        assert_eq!(t, [("default-nginx", 1, 1, Resources::new(1000, 0, 0, 1))], "{name}");
        assert_eq!(j.pod_name(0, 0), format!("{name}-default-nginx-0"));
    }
}

/// `jobs.csv` as `name,submit,start,end,state` rows, and stderr.
fn run(dir: &Path, args: &[&str]) -> (Vec<String>, String) {
    let out = lahar().arg("run").arg("-q").args(args).arg(dir.join("s.yaml")).assert().success();
    let csv = std::fs::read_to_string(dir.join("out/jobs.csv")).unwrap();
    (job_rows(&csv), String::from_utf8_lossy(&out.get_output().stderr).to_string())
}

fn example_in(dir: &Path, cpu: u32) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/jobflow");
    for f in ["JobFlow.yaml", "JobTemplate.yaml"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let text = scenario(
        &format!("    nodes:\n      - {{name: n0, cpu: {cpu}, memory: 8Gi}}"),
        "  workload:\n    - manifests: Job*.yaml\n  output: {dir: out}\n",
    );
    std::fs::write(dir.join("s.yaml"), text).unwrap();
}

/// Hand-computed: a [0, 600], b [600, 1800], then c (30 min) and d (10 min) side by
/// side on two CPUs from 1800, e once both completed (c at 3600).
#[test]
fn a_flow_runs_as_its_graph() {
    let dir = tempfile::tempdir().unwrap();
    example_in(dir.path(), 2);
    let (rows, err) = run(dir.path(), &[]);
    assert_eq!(
        rows,
        [
            "test-a,0,0,600,Completed",
            "test-b,600,600,1800,Completed",
            "test-d,1800,1800,2400,Completed",
            "test-c,1800,1800,3600,Completed",
            "test-e,3600,3600,4200,Completed",
        ]
    );
    assert!(!err.contains("warning"), "{err}");
    // One CPU: c and d are created together at 1800 but run one after the other
    // (c first: created first), e after d.
    example_in(dir.path(), 1);
    let (rows, _) = run(dir.path(), &[]);
    assert_eq!(
        rows,
        [
            "test-a,0,0,600,Completed",
            "test-b,600,600,1800,Completed",
            "test-c,1800,1800,3600,Completed",
            "test-d,1800,3600,4200,Completed",
            "test-e,4200,4200,4800,Completed",
        ]
    );
}

/// A step that ends by CompleteJob is Completed only once the pods it killed
/// are gone (Volcano's Completing state), and the JobFlow's next step waits for
/// that. By hand: `f-a`'s launcher runs its 3 minutes, its `TaskCompleted:
/// CompleteJob` kills the worker (30 s grace), `f-a` is Completed at 210 s and
/// `f-b` is made then and runs its minute, to 270 s. A horizon of 200 s cuts
/// the run while the worker is still going: `f-a` ends with the run, Completed
/// at 200 s, and `f-b` is never made.
#[test]
fn a_step_completed_by_its_policy_waits_for_its_pods() {
    let dir = tempfile::tempdir().unwrap();
    let tpl = |name: &str, tasks: &str| {
        format!(
            "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {{name: {name}, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n  tasks:\n{tasks}---\n"
        )
    };
    let pod = "        spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}\n";
    let a = tpl(
        "a",
        &format!(
            "    - {{name: launcher, replicas: 1, policies: [{{event: TaskCompleted, action: CompleteJob}}], template: {{metadata: {{annotations: {{lahar.io/duration: 3m}}}}, spec: {{restartPolicy: OnFailure, containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]}}}}}}\n    - name: worker\n      replicas: 1\n      template:\n{pod}"
        ),
    );
    let b = tpl("b", &format!("    - name: t\n      replicas: 1\n      template:\n{pod}"))
        .replace("lahar.io/duration: 1h", "lahar.io/duration: 1m");
    let flow = "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {name: f}\nspec:\n  flows:\n    - name: a\n    - {name: b, dependsOn: {targets: [a]}}\n";
    std::fs::write(dir.path().join("m.yaml"), format!("{a}{b}{flow}")).unwrap();
    let write = |extra: &str| {
        let text = scenario(
            "    nodes:\n      - {name: n0, cpu: 2, memory: 8Gi}",
            &format!("  workload:\n    - manifests: m.yaml\n  output: {{dir: out}}\n{extra}"),
        );
        std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    };
    write("");
    let (rows, _) = run(dir.path(), &[]);
    assert_eq!(rows, ["f-a,0,0,210,Completed", "f-b,210,210,270,Completed"]);
    write("  horizon: 200s\n");
    let (rows, _) = run(dir.path(), &["--force"]);
    assert_eq!(rows, ["f-a,0,0,200,Completed"]);
}

/// A job that never completes holds back what depends on it; the jobs never
/// created are counted in a warning, and have no row.
#[test]
fn jobs_behind_an_unfinished_dependency_are_never_created() {
    let dir = tempfile::tempdir().unwrap();
    example_in(dir.path(), 2);
    // b asks for more CPUs than the node has: it stays pending.
    let t = std::fs::read_to_string(dir.path().join("JobTemplate.yaml")).unwrap();
    let b = t.find("name: b").unwrap();
    let cpu = b + t[b..].find("cpu: \"1\"").unwrap();
    let t = format!("{}cpu: \"4\"{}", &t[..cpu], &t[cpu + "cpu: \"1\"".len()..]);
    std::fs::write(dir.path().join("JobTemplate.yaml"), t).unwrap();
    let (rows, err) = run(dir.path(), &[]);
    assert_eq!(rows, ["test-a,0,0,600,Completed", "test-b,600,,,Pending"]);
    assert!(
        err.contains("warning: JobFlow default/test: 3 jobs were never created: a job they depend on did not complete before the run ended (the first, step `c`, waits for `b`)"),
        "{err}"
    );
}

/// The webhook's checks and lahar's, through the binary (exit 2, located).
#[test]
fn bad_jobflows_are_located_errors() {
    let tpl = |name: &str, extra: &str| {
        format!(
            "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata: {{name: {name}{extra}}}\nspec:\n  tasks: [{{replicas: 1, name: t, template: {{spec: {{containers: [{{name: c}}]}}}}}}]\n---\n"
        )
    };
    let flow = |flows: &str| {
        format!(
            "{}{}apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata: {{name: f, annotations: {{lahar.io/duration: 1m}}}}\nspec:\n  flows:\n{flows}",
            tpl("a", ""),
            tpl("b", "")
        )
    };
    let cases: Vec<(String, &str)> = vec![
        (
            flow("    - {name: a, dependsOn: {targets: [b]}}\n    - {name: b, dependsOn: {targets: [a]}}\n"),
            "m.yaml:18:14: document 3: spec.flows: jobflow Flow is not DAG: `a -> b -> a` depend on each other",
        ),
        (
            flow("    - {name: a, dependsOn: {targets: [z]}}\n"),
            "document 3: spec.flows[0].dependsOn.targets[0]: jobflow Flow is not DAG: vertex is not defined: `z` is no flow of this JobFlow (flows: a)",
        ),
        (
            flow("    - {name: a}\n    - {name: c}\n"),
            "document 3: spec.flows[1].name: JobTemplate `c` is not in the manifests (namespace `default`)",
        ),
        (flow("    - {name: a}\n    - {name: a}\n"), "document 3: spec.flows[1].name: flow `a` is listed twice"),
        (
            flow("    - {name: a}\n")
                .replace("{name: a}\nspec", "{name: a, annotations: {lahar.io/submit-at: 5m}}\nspec"),
            "document 1: metadata.annotations.lahar.io/submit-at: a JobFlow creates this job",
        ),
        (
            flow("    - {name: a}\n").replace("  flows:", "  jobRetainPolicy: forever\n  flows:"),
            "document 3: spec.jobRetainPolicy: expected `retain` or `delete`, got `forever`",
        ),
        (
            flow("    - {name: a, dependsOn: {target: [b]}}\n    - {name: b}\n"),
            "spec.flows[0].dependsOn.target: unknown field `target`",
        ),
        // A problem in a template is reported at the template.
        (
            flow("    - {name: a}\n").replace("replicas: 1, name: t", "replicas: 1, minAvailable: 3, name: t"),
            "document 1: spec.tasks[0]",
        ),
    ];
    for (manifest, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), manifest).unwrap();
        let text =
            scenario("    nodes:\n      - {name: n0, cpu: 8, memory: 8Gi}", "  workload:\n    - manifests: m.yaml\n");
        std::fs::write(dir.path().join("s.yaml"), text).unwrap();
        let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want), "{want}\n{err}");
    }
    // A template no flow names makes no job: skipped and counted.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), flow("    - {name: a}\n")).unwrap();
    let text =
        scenario("    nodes:\n      - {name: n0, cpu: 8, memory: 8Gi}", "  workload:\n    - manifests: m.yaml\n");
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("1 object that makes no pods for Volcano was skipped: 1 JobTemplate (flow.volcano.sh/v1alpha1) no JobFlow names"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("1 jobs"));
}
