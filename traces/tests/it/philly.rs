//! Philly `cluster_job_log`: the README example job and written files in the
//! same format.

use std::collections::BTreeMap;

use lahar_core::model::queue::QueueId;
use lahar_core::util::time::SimTime;
use lahar_traces::{Format, ImportError, ImportOptions, QueueMapping, SkipReason, import};

use crate::common::*;

const EXAMPLE: &str = "philly/readme-examples/cluster_job_log";

#[test]
fn readme_example_job() {
    let opts = ImportOptions {
        queues: QueueMapping::ByQueue { map: BTreeMap::from([("ee9e8c".into(), QueueId(2))]), default: QueueId(0) },
        cpu_milli_per_gpu: 4000,
        ..ImportOptions::default()
    };
    let out = import(Format::Philly, &sample(EXAMPLE), &opts).unwrap();
    let r = &out.report;
    assert_eq!((r.rows_read, r.jobs, r.pods), (1, 1, 1));
    assert!(r.skipped.is_empty());
    assert_eq!(r.statuses, counts(&[("Pass", 1)]));
    // submitted 2017-10-07 01:11:39; first attempt starts 01:12:09 on m47 (8 GPUs);
    // the last ends 2017-10-09 06:53:12.
    assert_eq!(r.origin_micros, 1_507_338_699_000_000);
    assert_eq!(
        out.jobs[0],
        gang(
            "application_1506638472019_14199",
            "philly",
            0,
            193_263,
            "ce2f4c",
            2,
            &[("worker", 1, 32_000, 0, 8000, None)]
        )
    );
}

fn attempt(start: &str, end: &str, machines: &[(&str, usize)]) -> String {
    let detail: Vec<String> = machines
        .iter()
        .map(|(ip, n)| {
            let gpus: Vec<String> = (0..*n).map(|g| format!("\"gpu{g}\"")).collect();
            format!("{{\"ip\": \"{ip}\", \"gpus\": [{}]}}", gpus.join(", "))
        })
        .collect();
    format!("{{\"start_time\": {start}, \"end_time\": {end}, \"detail\": [{}]}}", detail.join(", "))
}

fn job(id: &str, submitted: &str, attempts: &[String]) -> String {
    format!(
        "{{\n    \"status\": \"Killed\",\n    \"vc\": \"vc1\",\n    \"jobid\": \"{id}\",\n    \"attempts\": [{}],\n    \"submitted_time\": {submitted},\n    \"user\": \"u1\"\n}}",
        attempts.join(", ")
    )
}

fn written_file() -> String {
    let t = |s: &str| format!("\"2017-10-01 00:{s}\"");
    let jobs = [
        // 1: two machines of 8 GPUs, retried once.
        job(
            "j1",
            &t("00:00"),
            &[
                attempt(&t("01:00"), &t("02:00"), &[("m1", 8), ("m2", 8)]),
                attempt(&t("03:00"), &t("10:00"), &[("m3", 8), ("m4", 8)]),
            ],
        ),
        // 2: uneven machines.
        job("j2", &t("00:30"), &[attempt(&t("00:40"), &t("00:50"), &[("m1", 8), ("m2", 4)])]),
        // 3: never ran.
        job("j3", &t("00:30"), &[]),
        // 4: unknown submit.
        job("j4", "\"None\"", &[attempt(&t("00:40"), &t("00:50"), &[("m1", 1)])]),
        // 5: still running (null end).
        job("j5", &t("00:30"), &[attempt(&t("00:40"), "null", &[("m1", 1)])]),
        // 6: first attempt never started.
        job("j6", &t("00:30"), &[attempt("\"None\"", &t("00:50"), &[("m1", 1)])]),
        // 7: wrong type for gpus.
        job("j7", &t("00:30"), &[attempt(&t("00:40"), &t("00:50"), &[("m1", 1)]).replace("[\"gpu0\"]", "5")]),
        // 8: not an object.
        "42".to_string(),
        // 9: no jobid.
        job("j9", &t("00:30"), &[]).replace("\"jobid\": \"j9\",", ""),
        // 10: no machines.
        job("j10", &t("00:30"), &[attempt(&t("00:40"), &t("00:50"), &[])]),
        // 11: zero duration.
        job("j11", &t("00:30"), &[attempt(&t("00:40"), &t("00:40"), &[("m1", 1)])]),
    ];
    format!("[\n{}\n]\n", jobs.join(",\n"))
}

#[test]
fn written_file_counts_and_jobs() {
    let text = written_file();
    let (_dir, path) = write_temp("cluster_job_log", &text);
    let out = load(Format::Philly, &path);
    let r = &out.report;
    assert_eq!((r.rows_read, r.jobs, r.pods), (11, 2, 4));
    assert_eq!(
        r.skipped,
        skips(&[
            (SkipReason::Malformed, 2),
            (SkipReason::MissingField, 1),
            (SkipReason::NotStarted, 2),
            (SkipReason::StillRunning, 1),
            (SkipReason::ZeroDuration, 1),
            (SkipReason::UnknownSubmit, 1),
            (SkipReason::NoResources, 1)
        ])
    );
    assert_eq!(r.statuses, counts(&[("Killed", 2)]));
    assert_eq!(out.jobs[0], gang("j1", "philly", 0, 540, "u1", 0, &[("worker", 2, 0, 0, 8000, None)]));
    assert_eq!(
        out.jobs[1],
        gang("j2", "philly", 30, 10, "u1", 0, &[("worker", 1, 0, 0, 8000, None), ("worker-1", 1, 0, 0, 4000, None)])
    );
    assert_eq!(r.last_submit, Some(SimTime(30_000_000)));
    // Strict: the first invalid job is the 7th; the error names the line its object ends on.
    let e = strict_error(Format::Philly, &path);
    let line = text.split_inclusive('\n').take_while(|l| !l.contains("\"j7\"")).count() as u64 + 5;
    assert_row_error(&e, &path, line, 7, SkipReason::Malformed, "`gpus`: expected an array, got 5");
}

#[test]
fn json_syntax_errors_end_the_import_in_any_mode() {
    let text = written_file();
    let cut = text.find("\"j3\"").unwrap();
    let (_dir, path) = write_temp("cluster_job_log", &text[..cut]);
    for strict in [false, true] {
        let e = import(Format::Philly, &path, &ImportOptions { strict, ..ImportOptions::default() }).unwrap_err();
        let line = text[..cut].lines().count() as u64;
        assert_row_error(&e, &path, line, 3, SkipReason::Malformed, "invalid JSON");
    }
    let (_dir, path) = write_temp("cluster_job_log", "{\"jobid\": \"x\"}");
    let e = import(Format::Philly, &path, &ImportOptions::default()).unwrap_err();
    assert!(matches!(e, ImportError::File { .. }), "{e:?}");
    assert!(e.to_string().contains("not a JSON array of jobs"), "{e}");
    let (_dir, path) = write_temp("cluster_job_log", "[] []");
    assert!(matches!(import(Format::Philly, &path, &ImportOptions::default()), Err(ImportError::File { .. })));
}

#[test]
fn corrupted_example_file() {
    let src = sample(EXAMPLE);
    // Line 11 opens the first machine's object: break the JSON syntax there.
    let (_dir, path) = corrupt(&src, "cluster_job_log", 11, |l| Some(l.replace('{', "7")));
    assert_row_error(&strict_error(Format::Philly, &path), &path, 12, 1, SkipReason::Malformed, "invalid JSON");
    // A wrong type for a time (line 8); the job's object ends on line 48.
    let (_dir, path) = corrupt(&src, "cluster_job_log", 8, |l| Some(l.replace("\"2017-10-07 01:12:09\"", "17")));
    assert_row_error(&strict_error(Format::Philly, &path), &path, 48, 1, SkipReason::Malformed, "`start_time`");
    let out = load(Format::Philly, &path);
    assert_eq!((out.report.jobs, out.report.skipped), (0, skips(&[(SkipReason::Malformed, 1)])));
}
