//! Helios `cluster_log.csv`: the README example rows and written files.

use std::collections::BTreeMap;

use lahar_core::model::queue::QueueId;
use lahar_core::util::time::SimTime;
use lahar_traces::{Format, ImportOptions, QueueMapping, SkipReason, import};

use crate::common::*;

const EXAMPLE: &str = "helios/readme-examples/cluster_log.csv";

#[test]
fn readme_example_rows() {
    let opts = ImportOptions {
        queues: QueueMapping::ByQueue { map: BTreeMap::from([("vchbv".into(), QueueId(4))]), default: QueueId(1) },
        memory_per_gpu: 1 << 30,
        ..ImportOptions::default()
    };
    let out = import(Format::Helios, &sample(EXAMPLE), &opts).unwrap();
    let r = &out.report;
    assert_eq!((r.rows_read, r.jobs, r.pods), (3, 3, 3));
    assert!(r.skipped.is_empty());
    assert_eq!(r.statuses, counts(&[("CANCELLED", 1), ("COMPLETED", 1), ("FAILED", 1)]));
    // 2020-06-09 18:41:01 as seconds of the naive clock.
    assert_eq!(r.origin_micros, 1_591_728_061_000_000);
    assert_eq!((r.first_submit, r.last_submit), (Some(SimTime::ZERO), Some(SimTime(27_000_000))));
    // 1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0
    assert_eq!(
        out.jobs[0],
        gang("1425511", "helios", 0, 36_848, "uXBbc", 1, &[("worker", 1, 1000, 1 << 30, 1000, None)])
    );
    // 1425512,uVMrF,vchbv,4,16,1,FAILED,...18:41:27,...18:41:27,...18:45:36,249,0
    assert_eq!(
        out.jobs[1],
        gang("1425512", "helios", 26, 249, "uVMrF", 4, &[("worker", 1, 16_000, 4 << 30, 4000, None)])
    );
    assert_eq!(out.jobs[2].duration.as_secs_f64(), 675_233.0);
}

#[test]
fn written_helios_file() {
    let text = "job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n\
        1,u1,vc1,train,10,20,3,COMPLETED,2020-06-01 00:00:00,2020-06-01 00:00:10,2020-06-01 01:00:10,3600,10\n\
        2,u1,vc1,x,1,1,1,CANCELLED,2020-06-01 00:00:05,,,0,0\n\
        3,u1,vc1,x,1,1,1,COMPLETED,2020-06-01 00:00:05,2020-06-01 00:00:05,2020-06-01 00:00:05,0,0\n\
        4,u1,vc1,x,1,1,1,COMPLETED,2020-06-01 00:00:05,2020-06-01 00:00:06,2020-06-01 00:00:04,0,0\n\
        5,u1,vc1,x,one,1,1,COMPLETED,2020-06-01 00:00:05,2020-06-01 00:00:05,2020-06-01 00:00:09,4,0\n\
        6,u1,vc1,x,1,1,1,COMPLETED,2020-13-01 00:00:05,2020-06-01 00:00:05,2020-06-01 00:00:09,4,0\n\
        7,u1,vc1,x,1,1,1,RUNNING,2020-06-01 00:00:05,2020-06-01 00:00:05,,,0\n\
        8,u1,vc1,x,0,4,,COMPLETED,2020-06-01 00:00:07,2020-06-01 00:00:07,2020-06-01 00:00:09,2,0\n\
        9,u1,vc1\n";
    let (_dir, path) = write_temp("cluster_log.csv", text);
    let out = load(Format::Helios, &path);
    let r = &out.report;
    assert_eq!((r.rows_read, r.jobs), (9, 2));
    assert_eq!(
        r.skipped,
        skips(&[
            (SkipReason::Malformed, 3),
            (SkipReason::EndBeforeStart, 1),
            (SkipReason::NotStarted, 1),
            (SkipReason::StillRunning, 1),
            (SkipReason::ZeroDuration, 1)
        ])
    );
    // 10 GPUs and 20 CPUs over 3 nodes: 4+3+3 GPUs, 7+7+6 CPUs.
    assert_eq!(
        out.jobs[0],
        gang(
            "1",
            "helios",
            0,
            3600,
            "u1",
            0,
            &[
                ("worker", 1, 7000, 0, 4000, None),
                ("worker-1", 1, 7000, 0, 3000, None),
                ("worker-2", 1, 6000, 0, 3000, None)
            ]
        )
    );
    // A CPU job without node_num: one pod.
    assert_eq!(out.jobs[1], gang("8", "helios", 7, 2, "u1", 0, &[("worker", 1, 4000, 0, 0, None)]));
    assert_row_error(&strict_error(Format::Helios, &path), &path, 5, 4, SkipReason::EndBeforeStart, "is before start");
    // Without the end-before-start row, the first invalid row is the mistyped one.
    let (_d, p2) =
        write_temp("cluster_log.csv", &text.lines().filter(|l| !l.starts_with('4')).collect::<Vec<_>>().join("\n"));
    assert_row_error(
        &strict_error(Format::Helios, &p2),
        &p2,
        5,
        4,
        SkipReason::Malformed,
        "`gpu_num`: expected an integer, got `one`",
    );
}

#[test]
fn corrupted_example_file() {
    let src = sample(EXAMPLE);
    let (_dir, path) =
        corrupt(&src, "cluster_log.csv", 3, |l| Some(l.replace("2020-06-09 18:45:36", "2020-06-09 18:45")));
    assert_row_error(&strict_error(Format::Helios, &path), &path, 3, 2, SkipReason::Malformed, "`end_time`");
    let out = load(Format::Helios, &path);
    assert_eq!((out.report.jobs, out.report.skipped), (2, skips(&[(SkipReason::Malformed, 1)])));
    let (_dir, path) =
        corrupt(&src, "cluster_log.csv", 4, |l| Some(l.split(',').take(5).collect::<Vec<_>>().join(",")));
    assert_row_error(
        &strict_error(Format::Helios, &path),
        &path,
        4,
        3,
        SkipReason::Malformed,
        "expected 12 fields, found 5",
    );
}
