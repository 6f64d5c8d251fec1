//! `lahar trace inspect` and `lahar trace convert` on the real trace samples copied
//! into examples/traces (each with its SOURCE.md). Expected figures were computed independently from the
//! files (awk/Python over the raw columns) and are listed with how they follow.

use std::path::{Path, PathBuf};

use crate::lahar;
use predicates::prelude::*;
use serde_json::{Value, json};

/// A trace sample of examples/traces (in the repository).
fn sample(rel: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces").join(rel);
    assert!(p.exists(), "sample trace `{}` is missing", p.display());
    p
}

const KTH: &str = "swf/KTH-SP2-1996-2.1-cln.records-1-10000.swf";
const OPENB: &str = "openb/openb_pod_list_default.csv";

fn inspect_json(path: &Path, extra: &[&str]) -> Value {
    let out = lahar().args(["trace", "inspect", "--json"]).arg(path).args(extra).output().unwrap();
    assert!(out.status.success(), "inspect failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

/// KTH: 10,000 records, 4 with run time 0; percentiles by nearest rank over the
/// 9,996 positive run times (field 4); span = last - first submit (field 2).
#[test]
fn inspect_kth_swf_json() {
    let v = inspect_json(&sample(KTH), &["--format", "swf"]);
    assert_eq!(v["rows_read"], 10000);
    assert_eq!(v["jobs"], 9996);
    assert_eq!(v["pods"], 97119);
    assert_eq!(v["skipped"], json!({"zero_duration": 4}));
    assert_eq!(v["span_s"], 10978051.0);
    assert_eq!(v["duration_s"], json!({"p50": 634.0, "p90": 22780.0, "p99": 72533.0, "max": 215977.0}));
    assert_eq!(v["gpus"], json!({"0": 9996}));
    assert_eq!(v["queues"], json!({"default": 9996}));
    assert_eq!(v["statuses"], json!({"completed": 6950, "failed": 3046}));
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    for k in ["rows_read", "jobs", "skipped", "span_s", "gpus", "duration_s", "queues"] {
        assert!(keys.contains(&k), "missing key {k} in {keys:?}");
    }
}

/// openb default: 8,152 pods, the 897 Pending ones never started; run time is
/// deletion - scheduled; queues are the `qos` of the started pods.
#[test]
fn inspect_openb_json_guesses_the_format() {
    let v = inspect_json(&sample(OPENB), &[]);
    assert_eq!(v["format"], "openb");
    assert_eq!(v["rows_read"], 8152);
    assert_eq!(v["jobs"], 7255);
    assert_eq!(v["skipped"], json!({"not_started": 897}));
    assert_eq!(v["span_s"], 12901761.0);
    assert_eq!(v["duration_s"], json!({"p50": 616.0, "p90": 7764.0, "p99": 114715.0, "max": 12537496.0}));
    assert_eq!(v["queues"], json!({"BE": 2957, "Burstable": 98, "Guaranteed": 7, "LS": 4193}));
    let gpus = v["gpus"].as_object().unwrap();
    assert_eq!((gpus["0"].clone(), gpus["1"].clone(), gpus.get("0.5")), (json!(1052), json!(3556), None));
    assert_eq!((gpus["2"].clone(), gpus["4"].clone(), gpus["8"].clone()), (json!(15), json!(15), json!(44)));
    assert_eq!(gpus["0.81"], 1017);
    assert_eq!(gpus.values().map(|n| n.as_u64().unwrap()).sum::<u64>(), 7255);
}

#[test]
fn inspect_text_lists_skips_percentiles_and_queues() {
    let p = sample("helios/readme-examples/cluster_log.csv");
    lahar()
        .args(["trace", "inspect", "--format", "helios"])
        .arg(&p)
        .assert()
        .success()
        .stdout(predicate::str::contains("rows read   3\n"))
        .stdout(predicate::str::contains("jobs        3 (3 pods)\n"))
        .stdout(predicate::str::contains("duration    p50 36848 s, p90 675233 s, p99 675233 s, max 675233 s\n"))
        .stdout(predicate::str::contains("  vcJkd             1\n"));
    lahar()
        .args(["trace", "inspect"])
        .arg(sample(KTH))
        .assert()
        .success()
        .stdout(predicate::str::contains("skipped     4\n  zero_duration     4\n"));
}

/// Converting and reading the canonical CSV back gives the same jobs: compared as
/// summaries through the binary and job by job through the library.
#[test]
fn convert_round_trips_through_canonical_csv() {
    let dir = tempfile::tempdir().unwrap();
    for (rel, format) in [(OPENB, "openb"), (KTH, "swf")] {
        let out = dir.path().join(format!("{format}.csv"));
        lahar()
            .args(["trace", "convert", "--format", format])
            .arg(sample(rel))
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        let a = inspect_json(&sample(rel), &["--format", format]);
        let b = inspect_json(&out, &["--format", "lahar"]);
        for k in ["jobs", "pods", "span_s", "gpus", "duration_s", "queues"] {
            assert_eq!(a[k], b[k], "{format}: `{k}` differs after conversion");
        }
        assert_eq!(b["rows_read"], a["jobs"], "one canonical row per single-task job");
        assert_eq!(b["skipped"], json!({}));

        use lahar_traces::{Format, ImportOptions, QueueInterner, QueueMapping, import};
        let opts = || ImportOptions { queues: QueueMapping::Intern(QueueInterner::new()), ..Default::default() };
        let orig = import(Format::from_name(format).unwrap(), &sample(rel), &opts()).unwrap();
        let back = import(Format::Canonical, &out, &opts()).unwrap();
        assert_eq!(orig.jobs.len(), back.jobs.len());
        for (x, y) in orig.jobs.iter().zip(&back.jobs) {
            assert_eq!(x, y, "{format}: job differs after conversion");
        }
    }
}

#[test]
fn bad_row_in_strict_mode_exits_2_naming_file_and_row() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.swf");
    std::fs::write(
        &p,
        "; UnixStartTime: 0\n1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n2 5 0 1x0 1 -1 -1 1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    let msg = format!("{}: line 3, row 2: malformed", p.display());
    lahar()
        .args(["trace", "inspect", "--strict"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(msg.clone()))
        .stderr(predicate::str::contains("got `1x0`"));
    let out = dir.path().join("out.csv");
    lahar()
        .args(["trace", "convert", "--strict"])
        .arg(&p)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(msg));
    assert!(!out.exists(), "a failed conversion leaves no partial file");
    // Without --strict the row is counted, not fatal.
    let v = inspect_json(&p, &[]);
    assert_eq!((v["jobs"].clone(), v["skipped"].clone()), (json!(1), json!({"malformed": 1})));
}

#[test]
fn unknown_format_missing_file_and_bad_header_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.csv");
    std::fs::write(&p, "a,b\n1,2\n").unwrap();
    lahar()
        .args(["trace", "inspect", "--format", "parquet"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown trace format `parquet`"));
    lahar()
        .args(["trace", "inspect"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot tell the trace format"));
    lahar()
        .args(["trace", "inspect", "--format", "helios"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!("{}: missing column `job_id`", p.display())));
    lahar()
        .args(["trace", "inspect", "--format", "swf"])
        .arg(dir.path().join("absent.swf"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("absent.swf"));
}

/// The reduced openb schema has no times: pod i arrives at i × interval.
#[test]
fn openb_untimed_options() {
    let v = inspect_json(
        &sample("openb/openb_pod_list_multigpu50.csv"),
        &["--untimed-interval", "2s", "--untimed-duration", "1h"],
    );
    assert_eq!(v["rows_read"], 9061);
    assert_eq!(v["jobs"], 9061);
    assert_eq!(v["span_s"], 18120.0);
    assert_eq!(v["duration_s"], json!({"p50": 3600.0, "p90": 3600.0, "p99": 3600.0, "max": 3600.0}));
    lahar()
        .args(["trace", "inspect", "--untimed-interval", "2 parsecs"])
        .arg(sample("openb/openb_pod_list_multigpu50.csv"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--untimed-interval: bad duration"));
}

/// The hand-written Philly, PAI 2020 and Helios examples import and run: every job
/// that ran in the trace completes, with the trace's run time as its ideal time.
#[test]
fn philly_pai_helios_examples_run() {
    let dir = tempfile::tempdir().unwrap();
    // (example, jobs made, a job, its submit s, its ideal run time s), from the files:
    // Philly application_..._14199: submitted 01:11:39, first attempt 01:12:09 to
    // last end 09:53:12 = 31,263 s; PAI 6a3b...: first start 1,739,305 - origin
    // 1,739,162 = 143 s, runs to 1,745,120 = 5,815 s; Helios 1425514: submitted
    // 18:43:10 - 18:41:01 = 129 s, runs 18:44:02 to 23:30:47 = 17,205 s.
    for (name, jobs, job, submit, ideal) in [
        ("philly", 5, "application_1506638472019_14199", 0, 31263),
        ("pai-2020", 6, "6a3b1c2e0d9f8a7b6c5d4e3f", 143, 5815),
        ("helios", 7, "1425514", 129, 17205),
    ] {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces").join(format!("{name}.yaml"));
        let out = dir.path().join(name);
        lahar().args(["run", "--quiet", "--out"]).arg(&out).arg(&p).assert().success();
        let summary: Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["metrics"]["jobs"], jobs, "{name}");
        assert_eq!(summary["metrics"]["completed"], jobs, "{name}");
        let csv = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
        let row: Vec<&str> = csv.lines().find(|l| l.starts_with(&format!("{job},"))).unwrap().split(',').collect();
        // columns: job,queue,priority,gpus,submit,start,end,state,jct_s,wait_s,ideal_s
        assert_eq!((row[4], row[10]), (submit.to_string().as_str(), ideal.to_string().as_str()), "{name}");
    }
}

/// `processorsPerPod` of an SWF trace in a scenario splits jobs as
/// `lahar trace convert --procs-per-pod` does: without it (no header) a job of 4
/// processors is 4 one-processor pods and one of 3 is 3; with 2, each is two pods
/// (3 = 2 + a remainder pod of 1). It applies to SWF only, in [1, 2^20], each
/// misuse exit 2 at its field.
#[test]
fn processors_per_pod_in_a_scenario_splits_swf_jobs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.swf"),
        "1 0 0 100 4 -1 -1 4 -1 -1 1 1 1 -1 -1 -1 -1 -1\n2 10 0 200 3 -1 -1 3 -1 -1 1 1 1 -1 -1 -1 -1 -1\n",
    )
    .unwrap();
    let scenario = |extra: &str| {
        let text = format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: ppp}}\nspec:\n  cluster:\n    nodeGroups:\n      - {{name: n, count: 4, cpu: 2, memory: 1Gi}}\n  workload:\n    - trace: {{format: swf, path: t.swf{extra}}}\n"
        );
        let p = dir.path().join("s.yaml");
        std::fs::write(&p, text).unwrap();
        p
    };
    let pods_per_job = |extra: &str| {
        let out = dir.path().join("out");
        lahar().args(["run", "-q", "--force"]).arg(scenario(extra)).arg("--out").arg(&out).assert().success();
        let pods = std::fs::read_to_string(out.join("pods.csv")).unwrap();
        let count = |job: &str| pods.lines().filter(|l| l.starts_with(&format!("{job},"))).count();
        (count("job-1"), count("job-2"))
    };
    assert_eq!(pods_per_job(""), (4, 3));
    assert_eq!(pods_per_job(", processorsPerPod: 2"), (2, 2));
    // The same split as trace convert's.
    let csv = dir.path().join("t.csv");
    lahar()
        .args(["trace", "convert"])
        .arg(dir.path().join("t.swf"))
        .args(["--procs-per-pod", "2", "--out"])
        .arg(&csv)
        .assert()
        .success();
    let converted = std::fs::read_to_string(&csv).unwrap();
    let replicas = |job: &str| -> usize {
        let rows = converted.lines().filter(|l| l.starts_with(&format!("{job},")));
        // The `replicas` column, found by the header.
        let col = converted.lines().next().unwrap().split(',').position(|c| c == "replicas").unwrap();
        rows.map(|l| l.split(',').nth(col).unwrap().parse::<usize>().unwrap()).sum()
    };
    assert_eq!((replicas("job-1"), replicas("job-2")), (2, 2), "{converted}");
    for (extra, why) in [
        (
            ", processorsPerPod: 0",
            "spec.workload[0].trace.processorsPerPod: expected an integer from 1 to 1048576, got 0",
        ),
        (", processorsPerPod: 1048577", "expected an integer from 1 to 1048576, got 1048577"),
    ] {
        lahar().args(["run", "-q"]).arg(scenario(extra)).assert().code(2).stderr(predicate::str::contains(why));
    }
    let openb = dir.path().join("o.yaml");
    std::fs::write(
        &openb,
        format!(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: o}}\nspec:\n  cluster:\n    nodeGroups:\n      - {{name: n, count: 4, cpu: 2, memory: 1Gi}}\n  workload:\n    - trace: {{format: openb, path: {}, processorsPerPod: 2}}\n",
            sample(OPENB).display()
        ),
    )
    .unwrap();
    lahar().args(["run", "-q"]).arg(&openb).assert().code(2).stderr(predicate::str::contains(
        "spec.workload[0].trace.processorsPerPod: applies to SWF traces only (this trace's format is `openb`)",
    ));
}
