//! PAI 2020 task table: the README example row and written files.

use lahar_core::util::time::SimTime;
use lahar_traces::{Format, SkipReason};

use crate::common::*;

const GIB: i64 = 1 << 30;

#[test]
fn readme_example_task() {
    let out = load(Format::Pai, &sample("pai-2020/readme-examples/pai_task_table.csv"));
    let r = &out.report;
    assert_eq!((r.rows_read, r.jobs, r.pods), (1, 1, 1));
    assert!(r.skipped.is_empty());
    assert_eq!(r.statuses, counts(&[("Terminated", 1)]));
    assert_eq!(r.origin_micros, 1_739_162_000_000);
    // 4f057009a5d481acec67b088,tensorflow,1.0,Terminated,1739162.0,1739200.0,600.0,29.296875,50.0,MISC:
    // 6 cores, 29.296875 GiB, half a GPU, 38 s.
    let mut want = gang(
        "4f057009a5d481acec67b088",
        "pai",
        0,
        38,
        "",
        0,
        &[("worker", 1, 6000, 29_296_875 * GIB / 1_000_000, 500, None)],
    );
    want.tasks[0].name = "tensorflow".into();
    assert_eq!(out.jobs[0], want);
}

#[test]
fn the_header_file_matches_the_column_order() {
    let header = std::fs::read_to_string(sample("pai-2020/pai_task_table.header")).unwrap();
    assert_eq!(header.trim(), lahar_traces::pai::COLUMNS.join(","));
}

#[test]
fn tasks_group_into_jobs() {
    let text = "\
jobA,worker,4.0,Terminated,100.0,400.0,600.0,10.0,800.0,V100\n\
jobB,worker,1.0,Failed,50.0,60.0,100.0,1.0,25.0,T4\n\
jobA,ps,2.0,Terminated,90.0,410.0,200.0,4.5,,\n\
jobC,worker,1.0,Waiting,0.0,0.0,100.0,1.0,100.0,\n\
jobD,worker,1.0,Running,70.0,0,100.0,1.0,100.0,\n\
jobE,worker,1.0,Terminated,70.0,80.0,lots,1.0,100.0,\n\
jobE,ps,1.0,Terminated,70.0,80.0,100.0,1.0,100.0,\n\
jobF,worker,1.0\n\
jobG,worker,0.0,Terminated,70.0,80.0,100.0,1.0,100.0,\n\
jobH,worker,1.5,Terminated,70.0,80.0,100.0,1.0,100.0,\n\
jobA,worker,1.0,Failed,95.0,300.0,100.0,1.0,100.0,V100\n";
    let (_dir, path) = write_temp("pai_task_table.csv", text);
    let out = load(Format::Pai, &path);
    let r = &out.report;
    assert_eq!((r.rows_read, r.jobs, r.pods), (11, 2, 8));
    assert_eq!(
        r.skipped,
        skips(&[
            (SkipReason::Malformed, 3),
            (SkipReason::NotStarted, 1),
            (SkipReason::StillRunning, 1),
            (SkipReason::NoResources, 1)
        ])
    );
    assert_eq!(r.statuses, counts(&[("Failed", 2)]));
    assert_eq!(r.notes, counts(&[("empty_plan_as_zero", 1)]));
    // Sorted by submit: jobB (50 s) is the origin.
    assert_eq!(out.jobs[0], {
        let mut j = gang("jobB", "pai", 0, 10, "", 0, &[("worker", 1, 1000, GIB, 250, None)]);
        j.min_resources = j.compute_min_resources();
        j
    });
    let a = &out.jobs[1];
    assert_eq!((a.name.as_str(), a.submit, a.duration.as_secs_f64()), ("jobA", SimTime(40_000_000), 320.0));
    let names: Vec<&str> = a.tasks.iter().map(|t| &*t.name).collect();
    assert_eq!(names, ["worker", "ps", "worker-2"]);
    assert_eq!(a.min_available, 7);
    assert_eq!(a.tasks[0].requests.gpu_milli(), 8000);
    assert_eq!(a.tasks[1].requests.memory(), 9 * GIB / 2);
    assert_eq!(a.tasks[1].requests.gpu_milli(), 0);
    assert_eq!(a.min_resources.gpu_milli(), 4 * 8000 + 1000);
    // Strict: the first invalid row is jobE's (line 6).
    assert_row_error(&strict_error(Format::Pai, &path), &path, 6, 6, SkipReason::Malformed, "`plan_cpu`");
}

#[test]
fn corrupted_example_row() {
    let src = sample("pai-2020/readme-examples/pai_task_table.csv");
    let (_dir, path) = corrupt(&src, "pai_task_table.csv", 1, |l| Some(l.replace("1739200.0", "17392x")));
    assert_row_error(&strict_error(Format::Pai, &path), &path, 1, 1, SkipReason::Malformed, "`end_time`");
    let out = load(Format::Pai, &path);
    assert_eq!((out.report.jobs, out.report.skipped), (0, skips(&[(SkipReason::Malformed, 1)])));
    let (_dir, path) =
        corrupt(&src, "pai_task_table.csv", 1, |l| Some(l.rsplit_once(',').map_or(String::new(), |x| x.0.to_string())));
    assert_row_error(
        &strict_error(Format::Pai, &path),
        &path,
        1,
        1,
        SkipReason::Malformed,
        "expected 10 fields, found 9",
    );
}
