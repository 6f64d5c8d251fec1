//! A pod's `terminationGracePeriodSeconds` (how long a deleted or evicted pod
//! keeps its node) from every kind's pod templates: the published examples,
//! their templates given a grace period, keep it in the jobs they make; a value
//! above the largest integer lahar reads is refused at its place.

use super::*;
use std::path::Path;

/// `text` with `terminationGracePeriodSeconds: 77` beside every `containers:`
/// key (each pod template's and Pod's spec), and beside a SparkApplication's
/// `driver` and `executor` `cores:`.
fn with_grace(text: &str) -> String {
    let spark = text.contains("kind: SparkApplication") || text.contains("kind: ScheduledSparkApplication");
    let mut out = String::new();
    for line in text.lines() {
        let body = line.trim_start();
        if body.starts_with("containers:") || (spark && body.starts_with("cores:")) {
            let indent = &line[..line.len() - body.len()];
            out.push_str(&format!("{indent}terminationGracePeriodSeconds: 77\n"));
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Copies folder `from` into `to`, every YAML file below its top level
/// rewritten by [`with_grace`].
fn copy_with_grace(from: &Path, to: &Path, top: bool) {
    std::fs::create_dir_all(to).unwrap();
    let mut entries: Vec<_> = std::fs::read_dir(from).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_with_grace(&p, &dest, false);
        } else {
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&dest, if top { text } else { with_grace(&text) }).unwrap();
        }
    }
}

/// Every job the published manifest examples make from pod templates (all but
/// kthena's ModelBooster, whose workers are no templates, and PodGroups
/// without pods) keeps the templates' 77 s; without them each keeps its
/// default, 30 s.
#[test]
fn every_kind_reads_its_templates_grace_period() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests");
    let dir = tempfile::tempdir().unwrap();
    copy_with_grace(&examples, &dir.path().join("manifests"), true);
    // The confs some of them name (`../volcano/published/...`).
    let confs = examples.parent().unwrap().join("volcano");
    copy_with_grace(&confs, &dir.path().join("volcano"), true);
    let graced = dir.path().join("manifests");
    let mut scenarios: Vec<String> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with("scenario.yaml"))
        .collect();
    scenarios.sort();
    let mut kinds = std::collections::BTreeSet::new();
    for (folder, graced) in [(examples.as_path(), false), (graced.as_path(), true)] {
        for s in &scenarios {
            let sc = lahar::scenario::load_file(&folder.join(s)).unwrap_or_else(|e| panic!("{s}: {e}"));
            for j in sc.jobs() {
                if &*j.kind == "ModelBooster" || (&*j.kind == "PodGroup" && j.pod_names.is_none()) {
                    continue;
                }
                let want = if graced { 77 } else { 30 };
                assert_eq!(j.termination_grace.as_secs_f64(), f64::from(want), "{s}: {} {}", j.kind, j.name);
                kinds.insert(j.kind.to_string());
            }
        }
    }
    // batch/v1 Jobs: `batch_jobs::a_pod_whose_node_goes_during_its_grace_is_counted_once`.
    let want = [
        "Deployment",
        "JAXJob",
        "LeaderWorkerSet",
        "MPIJob",
        "ModelServing",
        "PaddleJob",
        "Pod",
        "PodGroup",
        "PyTorchJob",
        "RayCluster",
        "RayJob",
        "RayService",
        "SparkApplication",
        "TFJob",
        "TrainJob",
        "VolcanoJob",
        "XGBoostJob",
    ];
    for k in want {
        assert!(kinds.contains(k), "no {k} among {kinds:?}");
    }
}

/// A grace period above the largest integer lahar reads (4,294,967,295) is an
/// error at its place.
#[test]
fn a_grace_period_above_the_integer_limit_is_refused_where_it_is() {
    let deploy = |secs: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d, annotations: {{lahar.io/duration: 1h}}}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: d}}}}\n  template:\n    metadata: {{labels: {{app: d}}}}\n    spec:\n      schedulerName: volcano\n      terminationGracePeriodSeconds: {secs}\n      containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]\n"
        )
    };
    let run = |manifest: &str| {
        let nodes = "    nodeGroups:\n      - {name: n, count: 1, cpu: 4, memory: 16Gi}";
        validate_with_manifest(nodes, "  workload:\n    - manifests: m.yaml\n", manifest)
    };
    let (code, e) = run(&deploy("4294967295"));
    assert_eq!(code, Some(0), "{e}");
    let (code, e) = run(&deploy("4294967296"));
    assert_eq!(code, Some(2), "{e}");
    assert!(
        e.contains("m.yaml:11:")
            && e.contains("spec.template.spec.terminationGracePeriodSeconds: must be an integer from 0 to 4294967295"),
        "{e}"
    );
    let (code, e) = run(&deploy("-1"));
    assert_eq!(code, Some(2), "{e}");
}
