//! Recurring kinds (issue 13, item 5): Volcano's CronJob, KubeRay's RayCronJob and
//! the Spark operator's ScheduledSparkApplication become their runs, created at
//! their cron schedule's times on the cluster clock, and the concurrency policies
//! act as the controllers do: Forbid holds a run back (Volcano starts the latest
//! one held when the active run ends, within startingDeadlineSeconds; Spark
//! waits for the next time), Replace deletes the active run.

use super::*;
use lahar::scenario::load_file;
use lahar_core::model::job::{Concurrency, JobSpec, PolicyAction, PolicyEvent, Recurrence};
use lahar_core::model::resource::Resources;
use lahar_core::util::time::{SimDuration, SimTime};
use std::sync::Arc;

const GI: i64 = 1 << 30;
const MI: i64 = 1 << 20;
const S: u64 = 1_000_000;

fn runs_of<'a>(jobs: &'a [JobSpec], prefix: &str) -> Vec<&'a JobSpec> {
    jobs.iter().filter(|j| j.name.rsplit_once('-').is_some_and(|(p, _)| p == prefix)).collect()
}

fn rec(series: &str, slot_s: u64, policy: Concurrency, late_start: bool, deadline_s: Option<u64>) -> Recurrence {
    Recurrence {
        series: Arc::from(series),
        slot: SimTime(slot_s * S),
        policy,
        late_start,
        deadline: deadline_s.map(|d| SimDuration(d * S)),
    }
}

/// The five published objects (examples/manifests/recurring/) from 2026-01-05
/// 12:00 UTC for two hours, checked run by run.
#[test]
fn published_recurring_objects_become_their_runs() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/manifests/recurring-scenario.yaml");
    let s = load_file(&p).unwrap_or_else(|e| panic!("{e}"));
    let jobs = s.jobs();
    // 12:00 UTC is Unix minute 29,460,240.
    let minute0 = 29_460_240u64;

    // Volcano: `*/5 * * * *`, Forbid, startingDeadlineSeconds 60: 12:05 ... 14:00.
    let v = runs_of(&jobs, "volcano-cronjob-example");
    assert_eq!(v.len(), 24);
    for (k, j) in v.iter().enumerate() {
        let slot = 300 * (k as u64 + 1);
        assert_eq!(j.name, format!("volcano-cronjob-example-{}", minute0 + slot / 60));
        assert_eq!(j.submit, SimTime(slot * S));
        let r = rec("CronJob default/volcano-cronjob-example", slot, Concurrency::Forbid, true, Some(60));
        assert_eq!(j.recurrence.as_deref(), Some(&r));
    }
    let j = v[0];
    assert_eq!(
        (&*j.kind, &*j.namespace, j.min_available, j.duration),
        ("VolcanoJob", "default", 1, SimDuration(420 * S))
    );
    let t: Vec<(&str, u32, u32)> = j.tasks.iter().map(|t| (&*t.name, t.replicas, t.min_available)).collect();
    assert_eq!(t, [("task-1", 1, 1)]);
    assert_eq!((j.policies[0].event, j.policies[0].action), (PolicyEvent::PodEvicted, PolicyAction::RestartJob));
    assert_eq!(j.pod_name(0, 0), "volcano-cronjob-example-29460245-task-1-0");

    // KubeRay: every minute, 12:01 ... 14:00; a RayJob each (head + small-group).
    let r = runs_of(&jobs, "raycronjob-sample");
    assert_eq!(r.len(), 120);
    assert_eq!((r[0].name.as_str(), r[0].submit), ("raycronjob-sample-29460241", SimTime(60 * S)));
    assert_eq!((r[119].name.as_str(), r[119].submit), ("raycronjob-sample-29460360", SimTime(7200 * S)));
    let j = r[0];
    assert_eq!((&*j.kind, j.min_available, j.duration), ("RayJob", 2, SimDuration(45 * S)));
    let t: Vec<(&str, u32, Resources)> = j.tasks.iter().map(|t| (&*t.name, t.replicas, t.requests)).collect();
    assert_eq!(t, [("head", 1, Resources::new(200, 2 * GI, 0, 1)), ("small-group", 1, Resources::new(200, 0, 0, 1))]);
    assert_eq!(
        j.recurrence.as_deref(),
        Some(&rec("RayCronJob default/raycronjob-sample", 60, Concurrency::Allow, false, None))
    );
    // 21:45 in Asia/Taipei (UTC+8) is 13:45 UTC: one run in the two hours.
    let z = runs_of(&jobs, "raycronjob-timezone-sample");
    assert_eq!(z.len(), 1);
    assert_eq!((z[0].name.as_str(), z[0].submit), ("raycronjob-timezone-sample-29460345", SimTime(6300 * S)));

    // Spark: `@every 3m` from the object's creation (t = 0): 40 runs, named by
    // the Unix time in nanoseconds (the operator's default precision).
    for (name, dur, min_exec_mem) in
        [("spark-pi-scheduled", 120, 896 * MI), ("scheduledsparkapplication-sample", 240, 896 * MI)]
    {
        let sp = runs_of(&jobs, name);
        assert_eq!(sp.len(), 40, "{name}");
        assert_eq!(sp[0].name, format!("{name}-1767614580000000000"));
        assert_eq!(sp[39].submit, SimTime(7200 * S));
        let j = sp[0];
        assert_eq!((&*j.kind, j.duration), ("SparkApplication", SimDuration(dur * S)));
        let t: Vec<(&str, u32, i64)> = j.tasks.iter().map(|t| (&*t.name, t.replicas, t.requests.memory())).collect();
        assert_eq!(t, [("driver", 1, min_exec_mem), ("executor", 1, min_exec_mem)], "{name}");
        let series = format!("ScheduledSparkApplication default/{name}");
        assert_eq!(j.recurrence.as_deref(), Some(&rec(&series, 180, Concurrency::Allow, false, None)));
    }
    // The operator labels each run with the object's labels and its name, and the
    // run's pods with the run's labels and their role's.
    let j = runs_of(&jobs, "scheduledsparkapplication-sample")[0];
    let labels = j.pod_labels(0, "default");
    for (k, v) in [
        ("app.kubernetes.io/name", "spark-operator"),
        ("version", "4.0.0"),
        ("spark-role", "driver"),
        ("sparkoperator.k8s.io/scheduled-app-name", "scheduledsparkapplication-sample"),
    ] {
        assert!(labels.iter().any(|(a, b)| a == k && b == v), "{k}: {labels:?}");
    }
    assert_eq!(jobs.len(), 24 + 120 + 1 + 40 + 40);
}

/// `jobs.csv` rows `(name, submit, end, state)` of a run of `m.yaml` (a 2-hour
/// horizon at most) and its stderr.
fn run_cron(manifest: &str, horizon: &str) -> (Vec<(String, String, String, String)>, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.yaml"), manifest).unwrap();
    let text = scenario(
        "    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi}",
        &format!("  horizon: {horizon}\n  workload:\n    - manifests: m.yaml\n  output: {{dir: out}}\n"),
    );
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = lahar().arg("run").arg("-q").arg(dir.path().join("s.yaml")).assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let csv = std::fs::read_to_string(dir.path().join("out/jobs.csv")).unwrap();
    let mut rows: Vec<(String, String, String, String)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].to_string(), f[4].to_string(), f[6].to_string(), f[7].to_string())
        })
        .collect();
    rows.sort_by(|a, b| a.1.parse::<f64>().unwrap().total_cmp(&b.1.parse::<f64>().unwrap()).then(a.0.cmp(&b.0)));
    (rows, stderr)
}

fn cronjob(extra: &str) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\nmetadata: {{name: c, annotations: {{lahar.io/duration: 7m}}}}\nspec:\n  schedule: \"*/5 * * * *\"\n{extra}  jobTemplate:\n    spec:\n      tasks: [{{replicas: 1, name: t, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]}}}}}}]\n"
    )
}

fn row(name: &str, submit: u64, end: &str, state: &str) -> (String, String, String, String) {
    (name.to_string(), submit.to_string(), end.to_string(), state.to_string())
}

/// Runs of 7 minutes every 5 under Forbid without a deadline, by hand: the run
/// due at 600 waits for the one of 300 (ends 720) and starts then; the one due
/// at 900 waits for it (ends 1140), and so on; due 1200 and 1500, at 1560 only
/// the latest is created.
fn forbid_rows() -> Vec<(String, String, String, String)> {
    vec![
        row("c-5", 300, "720", "Completed"),
        row("c-10", 720, "1140", "Completed"),
        row("c-15", 1140, "1560", "Completed"),
        row("c-25", 1560, "", "Running"),
    ]
}

/// Runs of 7 minutes every 5 minutes, under each policy, computed by hand. Slot
/// k (k ≥ 1) is due at 300·k s and named `c-<k·5>` (minutes since 1970).
#[test]
fn concurrency_policies_over_sessions() {
    // Forbid, no deadline: the run due at 600 waits for the one of 300 (ends 720)
    // and starts then; the one due at 900 waits for it (ends 1140), and so on.
    let (rows, err) = run_cron(&cronjob("  concurrencyPolicy: Forbid\n"), "26m");
    assert_eq!(rows, forbid_rows());
    assert!(
        err.contains("warning: CronJob default/c: 1 run was never created: an earlier run was still active (concurrencyPolicy Forbid) or the run was later than startingDeadlineSeconds; the first was due at 1200s"),
        "{err}"
    );
    // Forbid within 60 s: a run held back is 120 s late when the active one
    // ends, so every other run is skipped.
    let (rows, err) = run_cron(&cronjob("  concurrencyPolicy: Forbid\n  startingDeadlineSeconds: 60\n"), "25m");
    assert_eq!(
        rows,
        [row("c-5", 300, "720", "Completed"), row("c-15", 900, "1320", "Completed"), row("c-25", 1500, "", "Running")]
    );
    assert!(err.contains("CronJob default/c: 2 runs were never created"), "{err}");
    // Replace: each run deletes the one before (Terminated at the next time).
    let (rows, err) = run_cron(&cronjob("  concurrencyPolicy: Replace\n"), "16m");
    assert_eq!(
        rows,
        [row("c-5", 300, "600", "Terminated"), row("c-10", 600, "900", "Terminated"), row("c-15", 900, "", "Running"),]
    );
    assert!(!err.contains("never created"), "{err}");
    // Allow: every run at its time, side by side.
    let (rows, _) = run_cron(&cronjob(""), "12m");
    assert_eq!(rows, [row("c-5", 300, "720", "Completed"), row("c-10", 600, "", "Running")]);
}

/// The Spark operator looks again only at the next scheduled time: Forbid skips a
/// run, it never starts one late.
#[test]
fn spark_forbid_waits_for_the_next_time() {
    let app = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: s, annotations: {lahar.io/duration: 4m}}\nspec:\n  schedule: \"@every 3m\"\n  concurrencyPolicy: Forbid\n  template:\n    type: Scala\n    mode: cluster\n    driver: {cores: 1, memory: 512m}\n    executor: {instances: 1, cores: 1, memory: 512m}\n";
    let (rows, err) = run_cron(app, "13m");
    // Due 180 (runs to 420), 360 (skipped), 540 (runs to 780), 720 (skipped).
    let names: Vec<(String, String, String)> = rows.into_iter().map(|r| (r.0, r.1, r.2)).collect();
    assert_eq!(
        names,
        [("s-180000000000".into(), "180".into(), "420".into()), ("s-540000000000".into(), "540".into(), "780".into()),]
    );
    assert!(err.contains("ScheduledSparkApplication default/s: 2 runs were never created"), "{err}");
}

/// What the controllers and Volcano's webhook refuse, and what lahar needs, are
/// located errors (exit 2); a suspended object makes no run and is counted.
#[test]
fn bad_recurring_objects_are_located_errors() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "  concurrencyPolicy: Sometimes\n",
            "1h",
            "spec.concurrencyPolicy: expected `Allow`, `Forbid` or `Replace`, got `Sometimes`",
        ),
        ("  timeZone: Mars/Olympus\n", "1h", "spec.timeZone: unknown time zone `Mars/Olympus`"),
        ("  timeZone: Local\n", "1h", "spec.timeZone: timeZone can't be Local"),
        ("  startingDeadlineSeconds: -1\n", "1h", "spec.startingDeadlineSeconds: must be an integer ≥ 0, got -1"),
    ];
    let check = |manifest: String, scenario_rest: &str, want: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), manifest).unwrap();
        let text = scenario("    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi}", scenario_rest);
        std::fs::write(dir.path().join("s.yaml"), text).unwrap();
        let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(want) && err.contains("m.yaml:"), "{want}: {err}");
    };
    for (extra, horizon, want) in cases {
        check(cronjob(extra), &format!("  horizon: {horizon}\n  workload:\n    - manifests: m.yaml\n"), want);
    }
    let workload = "  workload:\n    - manifests: m.yaml\n";
    // Runs until the run ends: a horizon is needed.
    check(
        cronjob(""),
        workload,
        "document 1: spec.schedule: a CronJob makes runs until the run ends: set `spec.horizon`",
    );
    let h = "  horizon: 1h\n  workload:\n    - manifests: m.yaml\n";
    let long = format!("name: {},", "c".repeat(53));
    // (text replaced in the CronJob, by what, horizon, the error)
    let edits: &[(&str, &str, &str, &str)] = &[
        (
            "*/5 * * * *",
            "*/5 * * *",
            "1h",
            "spec.schedule: `*/5 * * *` is not a valid cron schedule: expected exactly 5 fields, found 4",
        ),
        ("*/5 * * * *", "TZ=UTC */5 * * * *", "1h", "spec.schedule: schedule should not contain TZ or CRON_TZ"),
        ("*/5 * * * *", "* * * * *", "200000m", "makes more than 100000 runs before the horizon"),
        ("name: c,", &long, "1h", "metadata.name: a CronJob name must be no more than 52 characters"),
        // A problem inside the job template is located on the CronJob's own path.
        (
            "replicas: 1, name: t",
            "replica: 1, name: t",
            "1h",
            "spec.jobTemplate.spec.tasks[0].replica: unknown field `replica`",
        ),
        ("replicas: 1, name: t", "replicas: 1, minAvailable: 2, name: t", "1h", "spec.jobTemplate.spec.tasks[0]"),
    ];
    for (from, to, horizon, want) in edits {
        let rest = format!("  horizon: {horizon}\n  workload:\n    - manifests: m.yaml\n");
        check(cronjob("").replace(from, to), &rest, want);
    }
    // Suspended: no run, counted among the skipped objects.
    let dir = tempfile::tempdir().unwrap();
    let two = format!("{}---\n{}", cronjob("  suspend: true\n"), cronjob("").replace("name: c,", "name: d,"));
    std::fs::write(dir.path().join("m.yaml"), two).unwrap();
    let text = scenario("    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi}", h);
    std::fs::write(dir.path().join("s.yaml"), text).unwrap();
    let out = lahar().arg("validate").arg(dir.path().join("s.yaml")).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains(
            "1 object that makes no pods for Volcano was skipped: 1 CronJob (batch.volcano.sh/v1alpha1), suspended"
        ),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.contains("12 jobs"), "{stdout}");
}

/// Kubernetes' `batch/v1` CronJob of Jobs scheduled by Volcano: runs as
/// Volcano's CronJob makes them (the same controller rules: Forbid holds a run
/// back until the active one ends), each a `batch/v1` Job named `<name>-<minutes>`
/// with its PodGroup; one whose pods another scheduler places makes none, and
/// says so.
#[test]
fn kubernetes_cronjobs_of_volcano_jobs() {
    let k8s = |name: &str, scheduler: &str, extra: &str| {
        format!(
            "apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: {name}, annotations: {{lahar.io/duration: 7m}}}}\nspec:\n  schedule: \"*/5 * * * *\"\n{extra}  jobTemplate:\n    spec:\n      template:\n        spec:\n          schedulerName: {scheduler}\n          restartPolicy: Never\n          containers: [{{name: c, resources: {{requests: {{cpu: 1}}}}}}]\n"
        )
    };
    let both =
        format!("{}---\n{}", k8s("c", "volcano", "  concurrencyPolicy: Forbid\n"), k8s("d", "default-scheduler", ""));
    let (rows, err) = run_cron(&both, "26m");
    assert_eq!(rows, forbid_rows(), "{err}");
    assert!(err.contains("warning: CronJob default/c: 1 run was never created"), "{err}");
    assert!(err.contains("CronJob (batch/v1) of schedulerName `default-scheduler`"), "{err}");
}

/// A CronJob whose first run comes after the horizon: its template is still
/// checked (a bad quantity is an error at its place), and when it is the only
/// object the error says why nothing is left; beside another job it is a warning.
#[test]
fn a_cronjob_with_no_run_before_the_horizon_is_checked_and_said() {
    let cron = |cpu: &str| {
        format!(
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\nmetadata: {{name: nightly, annotations: {{lahar.io/duration: 7m}}}}\nspec:\n  schedule: \"0 3 * * *\"\n  jobTemplate:\n    spec:\n      tasks: [{{replicas: 1, name: t, template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: {cpu}}}}}}}]}}}}}}]\n"
        )
    };
    let validate = |manifest: &str| {
        let nodes = "    nodes:\n      - {name: n0, cpu: 8, memory: 32Gi}";
        validate_with_manifest(nodes, "  horizon: 1h\n  workload:\n    - manifests: m.yaml\n", manifest)
    };
    let (code, err) = validate(&cron("abc"));
    assert_eq!(code, Some(2));
    assert!(err.contains("m.yaml:8:107: document 1: spec.jobTemplate.spec.tasks[0].template.spec.containers[0].resources.requests.cpu: bad quantity `abc`"), "{err}");
    let (code, err) = validate(&cron("1"));
    assert_eq!(code, Some(2));
    assert!(
        err.contains("spec.workload[0].manifests: the manifests yield no job (1 object read; left out: CronJob `default/nightly` (`0 3 * * *`) makes no run before the horizon (3600 s): its first run would be at 10800 s)"),
        "{err}"
    );
    let other = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: a, annotations: {lahar.io/duration: 1h}}\nspec:\n  tasks: [{replicas: 1, name: w, template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}}]\n---\n";
    let (code, err) = validate(&format!("{other}{}", cron("1")));
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("m.yaml:11:13: document 2: spec.schedule: 1 part of objects left out, the first: CronJob `default/nightly` (`0 3 * * *`) makes no run before the horizon"),
        "{err}"
    );
}
