//! lahar's end-to-end tests: the CLI contract, bad input, scheduling scenarios and
//! invariants over random workloads. One binary (see STYLE.md).

mod argo;
mod batch_jobs;
mod check;
mod claims;
mod cli;
mod comm_runtime;
mod conf_reload;
mod e2e_cronjob;
mod e2e_jobp_base;
mod e2e_jobseq;
mod e2e_schedulingaction;
mod equivalence;
mod equivalence_baselines;
mod equivalence_contention;
mod equivalence_lone;
mod errors;
mod estimates;
mod explain;
mod explain_end;
mod faults;
mod fragmentation;
mod fuzz;
mod gpu_sharing;
mod grace;
mod hardening;
mod host_ports;
mod hostile_files;
mod hyperjob;
mod interrupt;
mod invariants;
mod job_keys;
mod jobflow;
mod keda;
mod kthena;
mod kthena_hetero;
mod kthena_roles;
mod lws;
mod manifests;
mod nccl;
mod node_labels;
mod node_timeline;
mod operator;
mod outputs;
mod pod_affinity;
mod podgroups;
mod priority_classes;
mod published;
mod quickstart;
mod ray_serve;
mod recurring;
mod replacement;
mod replays;
mod reports;
mod scheduling;
mod scheduling_gates;
mod serving;
mod serving_groups;
mod serving_tokens;
mod sessions;
mod snapshot;
mod speed;
mod streaming;
mod subgroups;
mod sweep;
mod synthetic;
mod terminal_phase;
mod textbook_easy;
mod tiresias_options;
mod tour;
mod trace_cli;
mod trainer;
mod volcano;
mod volcano_controller;
mod volcano_extender;
mod volcano_gang_evict;
mod volcano_hier;
mod volcano_nta_replays;
mod volcano_numa;
mod volcano_plugins;
mod volcano_scenarios;
mod volcano_shuffle;
mod volcano_subgroups;
mod volcano_tdm;
mod volcano_vgpu;
mod volcano_vnpu;
mod warnings;

use std::path::{Path, PathBuf};

/// `lahar validate` on a one-node scenario whose scheduler is the conf file
/// `conf`: asserts exit 2 and returns stderr (the located errors).
pub fn conf_errors(conf: &str) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("s.conf"), conf).expect("write");
    let scenario = "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes: [{name: n1, cpu: 1, memory: 1Gi}]\n  scheduler: {conf: s.conf}\n";
    std::fs::write(dir.path().join("s.yaml"), scenario).expect("write");
    let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
    String::from_utf8_lossy(&out.get_output().stderr).to_string()
}

/// `lahar validate` on a scenario of the cluster `nodes` (lines under
/// `cluster:`) and `spec` lines `rest`, beside the manifest file `m.yaml` of
/// text `manifest`: (exit code, stderr).
pub fn validate_with_manifest(nodes: &str, rest: &str, manifest: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("m.yaml"), manifest).expect("write");
    std::fs::write(dir.path().join("s.yaml"), scenario(nodes, rest)).expect("write");
    let o = lahar().arg("validate").arg(dir.path().join("s.yaml")).output().expect("run lahar");
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// The `lahar` binary, for CLI tests.
pub fn lahar() -> assert_cmd::Command {
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_lahar"))
}

/// A scenario header with a small explicit cluster; `rest` continues `spec:`.
pub fn scenario(nodes: &str, rest: &str) -> String {
    format!("apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n{nodes}\n{rest}")
}

/// Writes `text` as `scenario.yaml` in a new temp dir.
pub fn write_scenario(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("scenario.yaml");
    std::fs::write(&p, text).expect("write scenario");
    (dir, p)
}

/// jobs.csv as `name,submit,start,end,state` rows.
pub fn job_rows(csv: &str) -> Vec<String> {
    csv.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            [f[0], f[4], f[5], f[6], f[7]].join(",")
        })
        .collect()
}

/// Loads and runs a scenario in-process, without writing files.
pub fn run_str(text: &str) -> lahar::RunReport {
    let s = lahar::scenario::load_str(text, "test.yaml", Path::new("")).unwrap_or_else(|e| panic!("{e}"));
    lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).expect("run")
}
