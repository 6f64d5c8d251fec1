//! SWF on the Parallel Workloads Archive samples (KTH SP2, RICC).

use std::collections::BTreeMap;

use lahar_core::model::queue::QueueId;
use lahar_core::util::time::SimTime;
use lahar_traces::{Format, ImportOptions, QueueMapping, SkipReason, SwfOptions, TimeOrigin, import};

use crate::common::*;

const KTH: &str = "swf/KTH-SP2-1996-2.1-cln.records-1-10000.swf";
const RICC: &str = "swf/RICC-2010-2.records-1-20000.swf";

#[test]
fn kth_counts_and_jobs() {
    let out = load(Format::Swf, &sample(KTH));
    let r = &out.report;
    assert_eq!(r.rows_read, 10_000);
    assert_eq!(r.jobs, 9_996);
    assert_eq!(r.skipped, skips(&[(SkipReason::ZeroDuration, 4)]));
    assert_eq!(r.statuses, counts(&[("completed", 6_950), ("failed", 3_046)]));
    // MaxProcs 100 / MaxNodes 100: one processor per pod.
    assert_eq!(r.pods, 97_119);
    assert_eq!(r.origin_micros, 599_850_000_000);
    assert_eq!(r.first_submit, Some(SimTime::ZERO));
    assert_eq!(r.last_submit, Some(SimTime(10_978_051_000_000)));
    assert!(r.notes.is_empty());
    assert_balanced(r);
    assert_eq!(out.jobs.len(), 9_996);
    assert!(out.jobs.windows(2).all(|w| w[0].submit <= w[1].submit));
    //    15   599850 192180   3477    4 ... 4  53940 -1  1  12  12  -1 -1 -1 -1 -1
    // Field 9, the requested time, is the estimate.
    assert_eq!(out.jobs[0], est(gang("job-15", "swf", 0, 3477, "12", 0, &[("worker", 4, 1000, 0, 0, None)]), 53_940));
    //    17   600476 364560 215337    5 ... 0 (failed), user 14
    assert_eq!(
        *job(&out, "job-17"),
        est(gang("job-17", "swf", 626, 215_337, "14", 0, &[("worker", 5, 1000, 0, 0, None)]), 215_400)
    );
    // Zero run time (job 2466) is skipped.
    assert!(out.jobs.iter().all(|j| j.name != "job-2466"));
}

#[test]
fn ricc_counts_and_jobs() {
    let out = load(Format::Swf, &sample(RICC));
    let r = &out.report;
    assert_eq!(r.rows_read, 20_000);
    assert_eq!(r.jobs, 19_991);
    assert_eq!(r.skipped, skips(&[(SkipReason::ZeroDuration, 9)]));
    assert_eq!(r.statuses, counts(&[("cancelled", 1_481), ("completed", 18_510)]));
    // MaxProcs 8192 / MaxNodes 1024: 8 processors per pod.
    assert_eq!(r.pods, 91_577);
    assert_eq!(
        (r.origin_micros, r.first_submit, r.last_submit),
        (0, Some(SimTime::ZERO), Some(SimTime(1_556_685_000_000)))
    );
    assert_balanced(r);
    let kb = 1_200_000i64 * 1024;
    //    18     7438      0      6    4  -1 -1    4     60 1200000  1   5   5  -1  1 ...
    assert_eq!(
        *job(&out, "job-18"),
        est(gang("job-18", "swf", 7438, 6, "5", 0, &[("worker", 1, 4000, 4 * kb, 0, None)]), 60)
    );
    //   236    98340      0    327   20  -1 -1   20 259200 1200000  1   1   1  -1  2 ...: 8 + 8 + 4
    assert_eq!(
        *job(&out, "job-236"),
        est(
            gang(
                "job-236",
                "swf",
                98_340,
                327,
                "1",
                0,
                &[("worker", 2, 8000, 8 * kb, 0, None), ("worker-1", 1, 4000, 4 * kb, 0, None)]
            ),
            259_200
        )
    );
    // Requested processors -1, allocated 4: the allocation is used.
    assert_eq!(job(&out, "job-9897").tasks[0].requests.cpu(), 4000);
    // Cancelled after running (status 5, run time 43735) is kept.
    assert_eq!(job(&out, "job-28").duration.as_secs_f64(), 43_735.0);
}

#[test]
fn ricc_queues_map_and_options_apply() {
    let opts = ImportOptions {
        queues: QueueMapping::ByQueue { map: BTreeMap::from([("2".to_string(), QueueId(7))]), default: QueueId(1) },
        origin: TimeOrigin::At(1000),
        swf: SwfOptions { procs_per_pod: Some(128) },
        ..ImportOptions::default()
    };
    let out = import(Format::Swf, &sample(RICC), &opts).unwrap();
    let r = &out.report;
    // Job 1 (submit 0) is the only one before the explicit origin.
    let before = r.skipped_for(SkipReason::BeforeOrigin);
    assert_eq!(before, 1);
    assert_eq!(r.jobs, 19_990);
    assert_eq!(out.jobs.iter().filter(|j| j.queue == QueueId(7)).count(), 91);
    assert_eq!(out.jobs.iter().filter(|j| j.queue == QueueId(1)).count(), 19_899);
    let j = job(&out, "job-236");
    assert_eq!(j.submit, SimTime(97_340_000_000));
    assert_eq!((j.tasks.len(), j.tasks[0].replicas, j.tasks[0].requests.cpu()), (1, 1, 20_000));
    // By user.
    let by_user = ImportOptions {
        queues: QueueMapping::ByUser { map: BTreeMap::from([("5".to_string(), QueueId(3))]), default: QueueId(0) },
        ..ImportOptions::default()
    };
    let out = import(Format::Swf, &sample(RICC), &by_user).unwrap();
    assert_eq!(job(&out, "job-18").queue, QueueId(3));
    assert_eq!(job(&out, "job-236").queue, QueueId(0));
}

#[test]
fn corrupted_swf_rows_error_in_strict_mode_and_are_counted_otherwise() {
    let src = sample(KTH);
    // Line 30 is the 6th record (24 header lines): job 20.
    let cases: [(&str, Edit, &str); 3] = [
        (
            "truncated",
            |l| Some(l.split_whitespace().take(10).collect::<Vec<_>>().join(" ")),
            "expected 18 fields, found 10",
        ),
        ("wrong type", |l| Some(set_field(l, 3, "12x")), "run time (field 4)"),
        ("extra column", |l| Some(format!("{l} 7")), "expected 18 fields, found 19"),
    ];
    for (what, edit, needle) in cases {
        let (_dir, path) = corrupt(&src, "kth.swf", 30, edit);
        let e = strict_error(Format::Swf, &path);
        assert_row_error(&e, &path, 30, 6, SkipReason::Malformed, needle);
        let out = load(Format::Swf, &path);
        assert_eq!(out.report.rows_read, 10_000, "{what}");
        assert_eq!(out.report.jobs, 9_995, "{what}");
        assert_eq!(out.report.skipped, skips(&[(SkipReason::Malformed, 1), (SkipReason::ZeroDuration, 4)]), "{what}");
    }
    // Filters are not errors, even in strict mode.
    let strict = import(Format::Swf, &src, &ImportOptions { strict: true, ..ImportOptions::default() }).unwrap();
    assert_eq!(strict.report.skipped, skips(&[(SkipReason::ZeroDuration, 4)]));
}

#[test]
fn swf_unknown_values_are_filtered() {
    let text = "; MaxNodes: 4\n; MaxProcs: 16\n\
        1 0 5 100 6 -1 -1 6 200 1000 1 3 3 -1 2 -1 -1 -1\n\
        2 -1 5 100 6 -1 -1 6 200 1000 1 3 3 -1 2 -1 -1 -1\n\
        3 10 5 -1 6 -1 -1 6 200 1000 0 3 3 -1 2 -1 -1 -1\n\
        4 10 5 100 -1 -1 -1 -1 200 1000 5 3 3 -1 2 -1 -1 -1\n\
        \n\
        5 20 5 100 0 -1 -1 2 -1 -1 7 -1 3 -1 -1 -1 -1 -1\n";
    let (_dir, path) = write_temp("t.swf", text);
    let out = load(Format::Swf, &path);
    let r = &out.report;
    assert_eq!((r.rows_read, r.jobs), (5, 2));
    assert_eq!(
        r.skipped,
        skips(&[(SkipReason::UnknownSubmit, 1), (SkipReason::UnknownRunTime, 1), (SkipReason::NoResources, 1)])
    );
    assert_eq!(r.statuses, counts(&[("completed", 1), ("status-7", 1)]));
    // 6 processors at 4 per node: 4 + 2; 1000 KB per processor.
    assert_eq!(
        out.jobs[0],
        est(
            gang(
                "job-1",
                "swf",
                0,
                100,
                "3",
                0,
                &[("worker", 1, 4000, 4 * 1024 * 1000, 0, None), ("worker-1", 1, 2000, 2 * 1024 * 1000, 0, None)]
            ),
            200
        )
    );
    // Requested time -1: no estimate.
    assert_eq!(out.jobs[1], gang("job-5", "swf", 20, 100, "", 0, &[("worker", 1, 2000, 0, 0, None)]));
}

/// `j` with the estimate `secs`.
fn est(mut j: lahar_core::model::job::JobSpec, secs: u64) -> lahar_core::model::job::JobSpec {
    j.estimate = Some(lahar_core::util::time::SimDuration::from_secs(secs));
    j
}

fn set_field(line: &str, i: usize, value: &str) -> String {
    let mut f: Vec<&str> = line.split_whitespace().collect();
    f[i] = value;
    f.join(" ")
}
