//! docs/outputs.md lists every column and key a run writes: each CSV header of a
//! run with `--explain`, and every key of summary.json (run, queue and
//! distribution objects).

use super::*;
use std::collections::BTreeSet;

fn documented() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/outputs.md")).expect("docs/outputs.md")
}

/// Every key of a JSON value, recursively (queue names replaced by `<queue>`).
fn keys(v: &serde_json::Value, under_queues: bool, out: &mut BTreeSet<String>) {
    if let Some(m) = v.as_object() {
        for (k, x) in m {
            if !under_queues {
                out.insert(k.clone());
            }
            keys(x, !under_queues && k == "queues", out);
        }
    }
}

#[test]
fn every_output_column_is_documented() {
    let (d, p) = write_scenario(&scenario(crate::reports::TINY, ""));
    let out = d.path().join("out");
    lahar().args(["run", "-q", "--explain", "j1-w-0", "--out"]).arg(&out).arg(&p).assert().success();
    let missing =
        undocumented(&out, &["jobs.csv", "pods.csv", "timeseries.csv", "decisions.csv", "explain.csv", "summary.csv"]);
    assert!(missing.is_empty(), "not in docs/outputs.md: {missing:?}");
}

/// The columns of `files` in `out` and the keys of its summary.json that
/// docs/outputs.md does not name.
fn undocumented(out: &Path, files: &[&str]) -> Vec<String> {
    let doc = documented();
    let mut missing = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        for col in text.lines().next().expect("header").split(',') {
            // Per-queue columns are documented as `name:<queue>`.
            let name = match col.split_once(':') {
                Some((stem, _)) => format!("{stem}:<queue>"),
                None => col.to_string(),
            };
            if !doc.contains(&format!("`{name}`")) {
                missing.push(format!("{f}: {col}"));
            }
        }
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let mut all = BTreeSet::new();
    keys(&json, false, &mut all);
    for k in all {
        if !doc.contains(&format!("`{k}`")) {
            missing.push(format!("summary.json: {k}"));
        }
    }
    missing
}

/// A placement run's files and summary.json keys are documented too.
#[test]
fn every_placement_output_is_documented() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces/openb");
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: p}}\nspec:\n  placement: {{demand: 0.5}}\n  cluster:\n    nodeList: {{format: openb, path: {}}}\n  scheduler: {{baseline: best-fit}}\n  workload:\n    - trace: {{format: openb, path: {}}}\n",
        dir.join("openb_node_list_gpu_node.csv").display(),
        dir.join("openb_pod_list_multigpu50.csv").display()
    );
    let (d, p) = write_scenario(&text);
    let out = d.path().join("out");
    lahar().args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    let missing = undocumented(&out, &["fragmentation.csv", "placements.csv"]);
    assert!(missing.is_empty(), "not in docs/outputs.md: {missing:?}");
}
