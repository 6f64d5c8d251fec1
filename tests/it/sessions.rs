//! When sessions run (docs/model.md, "Sessions"): one per instant with events (one
//! per tick with a period), and always one more after a session that bound or
//! evicted something or whose close changed what the next finds, as Volcano's
//! periodic loop would run it.

use super::volcano::run_text;

/// A Volcano job of minAvailable 3: a master that requests nothing (BestEffort) and
/// two 1-GPU workers, submitted at 10 s on one 8-GPU node.
fn best_effort_gang(period: &str) -> String {
    format!(
        r#"apiVersion: lahar.io/v1alpha1
kind: Scenario
metadata: {{name: be-gang}}
spec:
  seed: 1
{period}  cluster:
    nodes:
      - {{name: n0, cpu: 16, memory: 64Gi, gpus: 8}}
  workload:
    - jobs:
        - name: mindspore
          submitAt: 10s
          duration: 1h
          minAvailable: 3
          tasks:
            - {{name: master, replicas: 1, resources: {{}}}}
            - {{name: worker, replicas: 2, resources: {{cpu: 1, nvidia.com/gpu: 1}}}}
"#
    )
}

/// Session 1 (t = 10 s): allocate places both workers, and gang's readiness counts
/// the master role's pending BestEffort pod (Volcano's `getJobAllocatedRoles`: a
/// Pending pod with an empty request holds its role), so the job is ready and the
/// workers are committed; backfill then binds the BestEffort master in the same
/// session. The job starts at 10 s. (Until issue 40 the master role counted only
/// placed pods: the workers waited for the follow-up session, session 2.)
#[test]
fn best_effort_gang_starts_at_submission_without_a_period() {
    let o = run_text(&best_effort_gang(""));
    let job = o.job("mindspore");
    assert_eq!(job["state"], "Completed", "{job:?}");
    assert_eq!(job["start_s"], "10");
    assert_eq!(job["wait_s"], "0");
    let binds: Vec<(String, String)> = o.of("bind").iter().map(|d| (d["session"].clone(), d["pod"].clone())).collect();
    assert_eq!(
        binds,
        [("1", "default/mindspore-worker-0"), ("1", "default/mindspore-worker-1"), ("1", "default/mindspore-master-0")]
            .map(|(s, p)| (s.to_string(), p.to_string()))
    );
    assert!(o.of("bind").iter().all(|d| d["t_s"] == "10"));
}

/// With `schedulePeriod: 5s` the arrival at 10 s is handled by the session at the
/// 10 s tick, which binds the workers and the master alike (see above): the job
/// starts at its submission. (Until issue 40: the master at 10 s, the workers at
/// the next tick, 15 s.)
#[test]
fn best_effort_gang_starts_within_one_period() {
    let o = run_text(&best_effort_gang("  schedulePeriod: 5s\n"));
    let job = o.job("mindspore");
    assert_eq!(job["state"], "Completed", "{job:?}");
    assert_eq!(job["start_s"], "10");
    let master = o.of("bind").iter().find(|d| d["pod"] == "default/mindspore-master-0").map(|d| d["t_s"].clone());
    assert_eq!(master.as_deref(), Some("10"));
}

/// A session that binds nothing is not followed by another: with the master gone
/// (minAvailable 2), the workers are bound in session 1 at 10 s; session 2 follows the
/// bind, finds nothing to place and turns the PodGroup Running at its close (the pods
/// were still Binding at session 1's); the completion at 1 h 10 s runs session 3, the last.
#[test]
fn sessions_stop_when_nothing_changes() {
    let text = best_effort_gang("")
        .replace("            - {name: master, replicas: 1, resources: {}}\n", "")
        .replace("minAvailable: 3", "minAvailable: 2");
    let r = super::run_str(&text);
    assert_eq!(r.output.stats.sessions, 3);
    // Inqueue and two binds in session 1; Running at session 2's close.
    assert_eq!(r.output.decisions.iter().filter(|d| d.session == 1).count(), 3);
    let close: Vec<_> = r.output.decisions.iter().filter(|d| d.session != 1).collect();
    assert_eq!(close.len(), 1, "{close:?}");
    assert_eq!(
        (close[0].session, close[0].action, close[0].phase),
        (2, "session-close", Some(lahar_core::model::job::PodGroupPhase::Running))
    );
}

/// With `schedulePeriod: 1s`, one session per tick, under Volcano's e2e conf
/// (overcommit: room for admission 1.2 × 10 CPUs = 12, less what pods use, less
/// the `minResources` of Inqueue groups). By hand: `a` (8 CPUs) arrives at 0;
/// the 0 s session admits it and the close makes its pod, which the 1 s session
/// binds (the next tick, as Volcano's next `runOnce`; not a second session at
/// 0 s). `b` (2 CPUs) arrives at 1.5 s; the 2 s session finds `a` Inqueue with its
/// pod bound — overcommit counts both its 8 CPUs of use and its 8 of
/// reservation, 12 − 16 < 2 — and refuses `b`, then its close turns `a` Running.
/// That close moved a phase, so the 3 s session runs: 12 − 8 ≥ 2, `b` admitted;
/// its pod is bound at 4 s and its group Running at 5 s. Without that session
/// `b` waited for `a`'s end (3601 s).
#[test]
fn one_session_per_tick_and_the_reservation_freed_at_a_close() {
    use super::volcano_controller::{one_pod, run_timeline_with};
    // `one_pod`'s job, of `cpu` CPUs.
    let job = |name: &str, cpu: &str, at: &str| one_pod(name, at, "").replace("cpu: \"1\"", &format!("cpu: \"{cpu}\""));
    let objects = job("a", "8", "0s") + &job("b", "2", "1500ms");
    let out = run_timeline_with(&["{name: n0, cpu: 10, memory: 40Gi}"], &objects, &[], "  schedulePeriod: 1s\n");
    let rows: Vec<String> = out
        .decisions
        .iter()
        .map(|d| format!("{} {} {} {} {}{}", d["session"], d["t_s"], d["action"], d["job"], d["node"], d["phase"]))
        .collect();
    assert_eq!(
        rows,
        [
            "1 0 enqueue a Inqueue",
            "2 1 allocate a n0",
            "3 2 session-close a Running",
            "4 3 enqueue b Inqueue",
            "5 4 allocate b n0",
            "6 5 session-close b Running"
        ]
    );
    assert_eq!(out.job("a")["start_s"], "1");
    assert_eq!(out.job("b")["start_s"], "4");
}
