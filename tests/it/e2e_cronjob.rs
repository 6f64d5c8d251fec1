//! Replays of Volcano's e2e suite test/e2e/cronjob (cronjob_basic.go) under their
//! `It(...)` names, over many sessions with the e2e conf on the CI cluster (see
//! `e2e_jobseq.rs`). The e2e's CronJob (`createTestCronjob`): schedule every
//! minute, one task `test-task` of one busybox pod (`restartPolicy: Never`, no
//! requests, the 30 s default grace), `minAvailable: 1`. Its commands: `echo`
//! (exits 0 at once: a 1 s run here), `sleep 180` (a 180 s run), `exit 1` (a
//! container failing after 1 s with code 1). A run is due at every minute from
//! the cluster clock's epoch (slot k at 60·k s, named `<cronjob>-<k>`, minutes
//! since 1970); the e2e's `Eventually`/`Consistently` windows are restated as
//! the runs' rows in jobs.csv over a horizon of the same length.

use super::e2e_jobseq::e2e;
use super::volcano::Out;

/// A CronJob as the e2e's `createTestCronjob` makes it, with `spec` lines (after
/// `schedule`) and the container's behaviour: `run` as template annotations.
fn cronjob(name: &str, spec: &str, run: &str) -> String {
    format!(
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: CronJob\nmetadata: {{name: {name}}}\nspec:\n  schedule: \"* * * * *\"\n{spec}  jobTemplate:\n    spec:\n      minAvailable: 1\n      tasks:\n        - name: test-task\n          replicas: 1\n          template:\n            metadata: {{annotations: {{{run}}}}}\n            spec:\n              restartPolicy: Never\n              containers: [{{name: test-container, image: busybox}}]\n"
    )
}

/// `echo ...`: exits 0 at once.
const NORMAL: &str = "lahar.io/duration: 1s";
/// `...; sleep 180`.
const SLEEP: &str = "lahar.io/duration: 180s";
/// `...; exit 1`.
const FAIL: &str = "lahar.io/duration: 1h, lahar.io/fail-after: 1s";

/// The runs in jobs.csv: (name, submit, end, state), by submit time.
fn runs(out: &Out) -> Vec<(String, String, String, String)> {
    let mut v: Vec<_> = out
        .jobs
        .iter()
        .map(|j| (j["job"].clone(), j["submit_s"].clone(), j["end_s"].clone(), j["state"].clone()))
        .collect();
    v.sort_by(|a, b| a.1.parse::<f64>().expect("submit").total_cmp(&b.1.parse::<f64>().expect("submit")));
    v
}

fn run(name: &str, submit: u32, end: &str, state: &str) -> (String, String, String, String) {
    (name.to_string(), submit.to_string(), end.to_string(), state.to_string())
}

/// Runs alive (not ended) at instant `t` s.
fn active_at(out: &Out, t: f64) -> usize {
    runs(out)
        .iter()
        .filter(|r| r.1.parse::<f64>().expect("submit") <= t && r.2.parse::<f64>().map_or(true, |e| e > t))
        .count()
}

#[test]
fn create_and_schedule_basic_cronjob() {
    // `Create and schedule basic cronjob`: within 3 minutes at least two runs,
    // each made at its minute and done at once.
    let out = e2e(&cronjob("test-cronjob", "", NORMAL), &[], "3m");
    let r = runs(&out);
    assert!(r.len() >= 2, "{r:?}");
    assert_eq!(r[..2], [run("test-cronjob-1", 60, "61", "Completed"), run("test-cronjob-2", 120, "121", "Completed")]);
}

#[test]
fn cron_job_with_suspend_functionality() {
    // `CronJob with suspend functionality`: no run in 3 minutes. (A workload
    // whose only object makes no job is refused at load, so a one-pod job stands
    // beside it here: it is the only job.)
    let other = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: other, annotations: {lahar.io/duration: 1m}}\nspec:\n  tasks: [{name: t, replicas: 1, template: {spec: {containers: [{name: c, image: busybox}]}}}]\n---\n";
    let out = e2e(&format!("{other}{}", cronjob("suspended-cronjob", "  suspend: true\n", NORMAL)), &[], "3m");
    assert_eq!(runs(&out), [run("other", 0, "60", "Completed")]);
}

#[test]
fn cron_job_with_allow_concurrency() {
    // `CronJob with allow concurrency`: 180 s runs every minute, side by side: at
    // 3 minutes, two (then three) are active at once.
    let out = e2e(&cronjob("allow-cronjob", "  concurrencyPolicy: Allow\n", SLEEP), &[], "4m");
    assert_eq!(active_at(&out, 150.0), 2);
    assert_eq!(active_at(&out, 200.0), 3);
}

#[test]
fn cron_job_with_forbid_concurrency() {
    // `CronJob with forbid concurrency`: one run at a time. The run due at 120 s
    // waits for the first (60–240 s) and is made when it ends, for the latest
    // missed time; never two active.
    let out = e2e(&cronjob("forbid-cronjob", "  concurrencyPolicy: Forbid\n", SLEEP), &[], "10m");
    for t in (60..600).step_by(10) {
        assert_eq!(active_at(&out, f64::from(t) + 0.5), 1, "at {t} s: {:?}", runs(&out));
    }
    assert_eq!(
        runs(&out)[..2],
        [run("forbid-cronjob-1", 60, "240", "Completed"), run("forbid-cronjob-4", 240, "420", "Completed")]
    );
}

#[test]
fn cron_job_with_replace_concurrency() {
    // `CronJob with replace concurrency`: each minute's run replaces the one
    // before (deleted: Terminated); one active at a time.
    let out = e2e(&cronjob("replace-cronjob", "  concurrencyPolicy: Replace\n", SLEEP), &[], "5m");
    assert_eq!(
        runs(&out)[..2],
        [run("replace-cronjob-1", 60, "120", "Terminated"), run("replace-cronjob-2", 120, "180", "Terminated")]
    );
    for t in (60..300).step_by(10) {
        assert_eq!(active_at(&out, f64::from(t) + 0.5), 1, "at {t} s");
    }
}

#[test]
fn many_miss_schedule() {
    // `many miss schedule`: the e2e sets the CronJob's creationTimestamp two hours
    // back, which the API server overwrites on create; lahar has no such field to
    // honour (metadata.creationTimestamp is ignored as the server ignores it),
    // so runs start from the run's start as for any CronJob.
    let m = cronjob("many-miss-cronjob", "", NORMAL).replace(
        "metadata: {name: many-miss-cronjob}",
        "metadata: {name: many-miss-cronjob, creationTimestamp: \"2026-11-30T08:00:00Z\"}",
    );
    let out = e2e(&m, &[], "2m");
    assert_eq!(runs(&out)[0], run("many-miss-cronjob-1", 60, "61", "Completed"));
}

#[test]
fn remove_finished_job_from_cronjob_active() {
    // `remove finished job from cronjob active`: a finished run leaves the active
    // list: under Forbid, the next minute's run is made at its time because the
    // one before has ended.
    let out = e2e(&cronjob("process-finished-job-cronjob", "  concurrencyPolicy: Forbid\n", NORMAL), &[], "4m");
    let r = runs(&out);
    assert_eq!(r.iter().map(|x| x.1.as_str()).collect::<Vec<_>>(), ["60", "120", "180", "240"], "{r:?}");
    assert!(r[..3].iter().all(|x| x.3 == "Completed"), "{r:?}");
}

#[test]
fn delete_finished_and_suc_jobs_with_limit() {
    // `delete finished and suc jobs with limit`: successfulJobsHistoryLimit 1
    // deletes finished runs' objects, which changes no decision: every run
    // completes at its minute.
    let out = e2e(&cronjob("suc-limit-cronjob", "  successfulJobsHistoryLimit: 1\n", NORMAL), &[], "3m");
    let r = runs(&out);
    assert_eq!(
        r[..2],
        [run("suc-limit-cronjob-1", 60, "61", "Completed"), run("suc-limit-cronjob-2", 120, "121", "Completed")]
    );
}

#[test]
fn delete_finished_and_fail_jobs_with_limit() {
    // `delete finished and fail jobs with limit`: `exit 1` fails each run's only
    // pod; with no policy the pod stays Failed, every replica has ended with no
    // success, and the run is Failed (the Running state's SyncJob).
    let out = e2e(&cronjob("fail-limit-cronjob", "  failedJobsHistoryLimit: 1\n", FAIL), &[], "3m");
    let r = runs(&out);
    assert_eq!(
        r[..2],
        [run("fail-limit-cronjob-1", 60, "61", "Failed"), run("fail-limit-cronjob-2", 120, "121", "Failed")]
    );
}
