//! The canonical trace CSV: round trips and the reader's skip policy.

use std::collections::BTreeMap;

use lahar_core::model::job::{JobSpec, Policy, PolicyAction, PolicyEvent, TaskSpec};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::Resources;
use lahar_core::util::time::{SimDuration, SimTime};
use lahar_traces::canonical::{COLUMNS, CanonicalWriter, write_file};
use lahar_traces::{Format, ImportOptions, QueueInterner, QueueMapping, SkipReason, TimeOrigin, WriteError, import};
use proptest::prelude::*;

use crate::common::*;

fn at_zero() -> ImportOptions {
    ImportOptions { origin: TimeOrigin::At(0), ..ImportOptions::default() }
}

/// Writes `jobs` and reads them back with queue names mapped to their index.
fn round_trip(jobs: &[JobSpec], names: &[String]) -> Vec<JobSpec> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.csv");
    write_file(&path, jobs, names.to_vec()).unwrap();
    let map: BTreeMap<String, QueueId> =
        names.iter().enumerate().map(|(i, n)| (n.clone(), QueueId(i as u32))).collect();
    let opts = ImportOptions { queues: QueueMapping::ByQueue { map, default: QueueId(999) }, ..at_zero() };
    let out = import(Format::Canonical, &path, &opts).unwrap();
    assert_eq!(out.report.rows_read, jobs.iter().map(|j| j.tasks.len() as u64).sum::<u64>());
    assert!(out.report.skipped.is_empty(), "{:?}", out.report.skipped);
    out.jobs
}

#[test]
fn openb_round_trips_through_canonical_csv() {
    let interner = QueueInterner::new();
    let opts = ImportOptions { queues: QueueMapping::Intern(interner.clone()), ..ImportOptions::default() };
    let out = import(Format::Openb, &sample("openb/openb_pod_list_gpuspec33.csv"), &opts).unwrap();
    assert_eq!(round_trip(&out.jobs, &interner.names()), out.jobs);
}

#[test]
fn multi_task_swf_jobs_round_trip() {
    let out = load(Format::Swf, &sample("swf/RICC-2010-2.records-1-20000.swf"));
    assert!(out.jobs.iter().any(|j| j.tasks.len() == 2));
    assert_eq!(round_trip(&out.jobs, &["batch".to_string()]), out.jobs);
}

#[test]
fn written_rows_are_readable_by_hand() {
    let out = load(Format::Openb, &sample("openb/openb_pod_list_default.csv"));
    let mut w = CanonicalWriter::new(Vec::new(), vec!["research".into()]).unwrap();
    w.write_job(&out.jobs[1]).unwrap();
    let text = String::from_utf8(w.finish().unwrap()).unwrap();
    assert_eq!(
        text,
        format!(
            "{}\nopenb-pod-0001,default,openb,research,,427061,12475899,,1,0,,3,,worker,1,1,1,true,6,12Gi,460m,\n",
            COLUMNS.join(",")
        )
    );
}

#[test]
fn minimal_columns_take_defaults() {
    let text = "job,submit_s,duration_s,gpu,task,replicas,queue\n\
        a,10.5,60,8,worker,2,prod\n\
        a,10.5,60,0.5,ps,1,prod\n\
        b,3,0.000001,,,,\n";
    let (_dir, path) = write_temp("t.csv", text);
    let opts = ImportOptions {
        queues: QueueMapping::ByQueue { map: BTreeMap::from([("prod".into(), QueueId(2))]), default: QueueId(1) },
        ..ImportOptions::default()
    };
    let out = import(Format::Canonical, &path, &opts).unwrap();
    assert_eq!((out.report.rows_read, out.report.jobs, out.report.pods), (3, 2, 4));
    // Sorted by submit; origin = earliest (3 s).
    let b = &out.jobs[0];
    assert_eq!((b.name.as_str(), b.submit, b.duration, b.queue), ("b", SimTime::ZERO, SimDuration(1), QueueId(1)));
    let a = &out.jobs[1];
    assert_eq!((a.submit, a.min_available, &*a.kind, a.queue), (SimTime(7_500_000), 3, "trace", QueueId(2)));
    assert_eq!(a.tasks[0].requests, Resources::new(0, 0, 8000, 1));
    assert_eq!(a.tasks[1].requests, Resources::new(0, 0, 500, 1));
    assert_eq!(a.min_resources.gpu_milli(), 16_500);
}

#[test]
fn canonical_skip_policy() {
    let header = COLUMNS.join(",");
    let row = |job: &str, submit: &str, dur: &str, task: &str, cpu: &str| {
        format!("{job},default,trace,q,u,{submit},{dur},,,0,,3,,{task},1,1,1,true,{cpu},1Gi,1,\n")
    };
    let text = [
        format!("{header}\n"),
        row("ok", "0", "10", "worker", "1"),       // line 2
        row("zero", "1", "0", "worker", "1"),      // line 3
        row("neg", "1", "-5", "worker", "1"),      // line 4
        row("badcpu", "1", "5", "worker", "lots"), // line 5
        row("split", "1", "5", "worker", "1"),     // line 6
        row("split", "2", "5", "ps", "1"),         // line 7: submit differs
        row("dup", "1", "5", "worker", "1"),       // line 8
        row("dup", "1", "5", "worker", "1"),       // line 9: same task twice
        row("", "1", "5", "worker", "1"),          // line 10: no job name
        "short,row\n".to_string(),                 // line 11
        row("ok2", "4", "10", "worker", "500m"),   // line 12
    ]
    .concat();
    let (_dir, path) = write_temp("t.csv", &text);
    let out = load(Format::Canonical, &path);
    assert_eq!((out.report.rows_read, out.report.jobs), (11, 2));
    assert_eq!(
        out.report.skipped,
        skips(&[
            (SkipReason::Malformed, 4),
            (SkipReason::MissingField, 1),
            (SkipReason::EndBeforeStart, 1),
            (SkipReason::ZeroDuration, 1)
        ])
    );
    let e = strict_error(Format::Canonical, &path);
    assert_row_error(&e, &path, 4, 3, SkipReason::EndBeforeStart, "`duration_s` is negative");
    // Unknown columns are a file error.
    let (_dir2, path2) = write_temp("u.csv", "job,submit_s,duration_s,gpus\na,0,1,1\n");
    let e = import(Format::Canonical, &path2, &ImportOptions::default()).unwrap_err();
    assert!(e.to_string().contains("unknown column `gpus`"), "{e}");
}

#[test]
fn truncated_and_mistyped_canonical_rows() {
    let out = load(Format::Openb, &sample("openb/openb_pod_list_default.csv"));
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.csv");
    write_file(&good, &out.jobs, vec![]).unwrap();
    let cases: [(Edit, &str); 2] = [
        (|l| Some(l.rsplitn(4, ',').nth(3).unwrap_or("").to_string()), "expected 22 fields, found 19"),
        (|l| Some(l.replacen(",true,", ",yes,", 1)), "`preemptable`: expected true or false, got `yes`"),
    ];
    for (edit, needle) in cases {
        let (_d, path) = corrupt(&good, "bad.csv", 101, edit);
        assert_row_error(&strict_error(Format::Canonical, &path), &path, 101, 100, SkipReason::Malformed, needle);
        let lenient = load(Format::Canonical, &path);
        assert_eq!((lenient.report.jobs, lenient.report.skipped_total()), (7_254, 1));
    }
}

#[test]
fn writer_refuses_what_it_cannot_represent() {
    let mut job = gang("j", "VolcanoJob", 0, 10, "", 0, &[("worker", 1, 1000, 0, 1000, None)]);
    job.policies.push(Policy { event: PolicyEvent::PodEvicted, action: PolicyAction::RestartJob, timeout: None });
    let mut w = CanonicalWriter::new(Vec::new(), vec![]).unwrap();
    assert!(matches!(w.write_job(&job), Err(WriteError::Unrepresentable { .. })));
    let mut job = gang("j", "VolcanoJob", 0, 10, "", 0, &[("worker", 1, 1000, 0, 1000, None)]);
    job.tasks[0].node_selector.push(("zone".into(), "a".into()));
    assert!(matches!(w.write_job(&job), Err(WriteError::Unrepresentable { .. })));
    // The same job twice in a row would read back as one job.
    let job = gang("j", "VolcanoJob", 0, 10, "", 0, &[("worker", 1, 1000, 0, 1000, None)]);
    w.write_job(&job).unwrap();
    let e = w.write_job(&job).unwrap_err();
    assert!(e.to_string().contains("same namespace and name"), "{e}");
}

fn arb_task(i: usize) -> impl Strategy<Value = TaskSpec> {
    (
        1u32..5,
        0u32..5,
        0i64..200_000,
        0i64..(1 << 40),
        0i64..9000,
        -3i32..3,
        any::<bool>(),
        // One GPU model (a node selector) or several (any of them will do).
        proptest::collection::btree_set("[A-Z0-9]{1,6}", 0..4),
    )
        .prop_map(move |(replicas, min, cpu, mem, gpu, priority, preemptable, models)| TaskSpec {
            node_label_in: match models.len() {
                0 | 1 => Vec::new(),
                _ => vec![("nvidia.com/gpu.product".to_string(), models.iter().cloned().collect())],
            },
            name: format!("t{i}").into(),
            replicas,
            min_available: min.min(replicas),
            requests: Resources::new(cpu, mem, gpu, 1),
            priority,
            depends_on: vec![],
            depends_any: false,
            node_selector: match models.len() {
                1 => vec![("nvidia.com/gpu.product".to_string(), models.iter().next().cloned().unwrap_or_default())],
                _ => Vec::new(),
            },
            policies: vec![],
            preemptable,
            never_preempts: false,
            tolerations: Vec::new(),
            hints: None,
            run_time: None,
            exits: None,
            stop_code: lahar_core::model::job::STOPPED_EXIT_CODE,
        })
}

fn arb_job(i: usize) -> impl Strategy<Value = JobSpec> {
    let tasks = (1usize..4).prop_flat_map(|n| (0..n).map(arb_task).collect::<Vec<_>>());
    (
        tasks,
        "[a-z,\"]{0,8}",
        0u64..10_000_000_000,
        1u64..10_000_000_000,
        0u32..3,
        proptest::option::of("[a-z]{1,5}"),
        -5i32..5,
        proptest::option::of(1u64..1_000_000_000),
        0u32..4,
    )
        .prop_map(move |(tasks, user, submit, duration, queue, class, priority, ckpt, retry)| {
            let pods: u32 = tasks.iter().map(|t| t.replicas).sum();
            let mut job = JobSpec {
                name: format!("job,\"{i}\""),
                namespace: if i.is_multiple_of(2) { "default".into() } else { "team-a".into() },
                kind: "VolcanoJob".into(),
                queue: QueueId(queue),
                priority_class: class,
                priority,
                submit: SimTime(submit),
                min_available: 1 + (submit as u32 % pods),
                tasks,
                max_retry: retry,
                duration: SimDuration(duration),
                checkpoint_interval: ckpt.map(SimDuration),
                user: user.into(),
                ..JobSpec::default()
            };
            job.finish();
            job
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn any_representable_job_list_round_trips(
        jobs in (1usize..12).prop_flat_map(|n| (0..n).map(arb_job).collect::<Vec<_>>())
    ) {
        let mut jobs = jobs;
        jobs.sort_by_key(|j| j.submit);
        let names = vec!["a".to_string(), "b,c".to_string(), "\"q\"".to_string()];
        prop_assert_eq!(round_trip(&jobs, &names), jobs);
    }
}
