//! `lahar run` replays the real sample traces end to end under Volcano's default conf
//! (examples/traces/), and openb's machine list becomes the cluster.

use std::path::Path;

fn example(name: &str) -> lahar::scenario::Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces").join(format!("{name}.yaml"));
    lahar::scenario::load_file(&p).unwrap_or_else(|e| panic!("{e}"))
}

fn run(s: lahar::scenario::Scenario) -> lahar::RunReport {
    lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).expect("run")
}

/// openb: the 1,213 GPU nodes of openb_node_list_gpu_node.csv (6,212 GPUs, 404 of
/// them T4 nodes, counted with awk over the file) and all 7,255 pods that ran.
#[test]
fn openb_replays_on_its_own_machines() {
    let s = example("openb");
    let nodes = &s.cluster.nodes;
    assert_eq!(nodes.len(), 1213);
    assert_eq!(nodes.iter().map(|n| n.gpus()).sum::<i64>(), 6212);
    assert_eq!(nodes.iter().filter(|n| n.gpu_model == "T4").count(), 404);
    let n0 = &nodes[0];
    assert_eq!(
        (n0.name.as_str(), n0.allocatable.cpu(), n0.allocatable.memory()),
        ("openb-node-0000", 64_000, 262_144 << 20)
    );
    assert_eq!((n0.gpus(), n0.labels["nvidia.com/gpu.product"].as_str()), (2, "P100"));
    let r = run(s);
    assert_eq!((r.summary.jobs, r.summary.completed, r.summary.unfinished), (7255, 7255, 0));
    r.output.world.check_invariants().unwrap();
}

/// KTH SP2 (SWF): 9,996 of 10,000 rows are jobs (4 have zero run time) and all complete.
#[test]
fn kth_swf_replays_end_to_end() {
    let r = run(example("swf-kth"));
    assert_eq!((r.summary.jobs, r.summary.completed, r.summary.unfinished), (9996, 9996, 0));
}

/// A node list in an unknown format, or a missing file, is a located error.
#[test]
fn bad_node_lists_are_located_errors() {
    let text = |list: &str| {
        format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodeList: {list}\n  workload:\n    - jobs: []\n"
        )
    };
    let e = lahar::scenario::load_str(&text("{format: philly, path: x.csv}"), "s.yaml", Path::new(""))
        .expect_err("unknown format")
        .to_string();
    assert!(
        e.contains("s.yaml:6:")
            && e.contains("spec.cluster.nodeList.format: unknown node-list format `philly`; expected openb"),
        "{e}"
    );
    let e = lahar::scenario::load_str(&text("{format: openb, path: nowhere.csv}"), "s.yaml", Path::new(""))
        .expect_err("missing file")
        .to_string();
    assert!(e.contains("spec.cluster.nodeList.path") && e.contains("nowhere.csv"), "{e}");
}

/// The canonical-CSV example (500 openb jobs converted by `lahar trace convert`)
/// replays whole; its second job keeps openb's 0.46-GPU share exactly.
#[test]
fn canonical_example_replays() {
    let s = example("canonical");
    let j = &s.jobs()[1];
    assert_eq!(
        (j.name.as_str(), j.submit.micros(), j.tasks[0].requests.gpu_milli()),
        ("openb-pod-0001", 427_061_000_000, 460)
    );
    let r = run(s);
    assert_eq!((r.summary.jobs, r.summary.completed), (500, 500));
}
