//! Streaming: `stream` agrees with `import`, and a million-row file is read with
//! memory independent of its size.

use std::io::Write;

use lahar_core::model::job::JobSpec;
use lahar_traces::{Format, ImportOptions, SkipReason, import, stream};

use crate::common::*;

#[test]
fn stream_yields_the_jobs_import_returns() {
    for (format, rel) in [
        (Format::Swf, "swf/KTH-SP2-1996-2.1-cln.records-1-10000.swf"),
        (Format::Openb, "openb/openb_pod_list_default.csv"),
        (Format::Philly, "philly/readme-examples/cluster_job_log"),
        (Format::Helios, "helios/readme-examples/cluster_log.csv"),
        (Format::Pai, "pai-2020/readme-examples/pai_task_table.csv"),
    ] {
        let path = sample(rel);
        let imported = import(format, &path, &ImportOptions::default()).unwrap();
        let mut streamed: Vec<JobSpec> = Vec::new();
        let report = stream(format, &path, &ImportOptions::default(), &mut |j| {
            streamed.push(j);
            Ok(())
        })
        .unwrap();
        streamed.sort_by_key(|j| j.submit);
        assert_eq!(report, imported.report, "{format}");
        assert_eq!(streamed, imported.jobs, "{format}");
    }
}

#[test]
fn a_sink_error_stops_the_import() {
    let path = sample("swf/KTH-SP2-1996-2.1-cln.records-1-10000.swf");
    let mut n = 0;
    let e = stream(Format::Swf, &path, &ImportOptions::default(), &mut |_| {
        n += 1;
        if n == 3 { Err("disk full".into()) } else { Ok(()) }
    })
    .unwrap_err();
    assert_eq!(n, 3);
    assert!(e.to_string().contains("disk full"), "{e}");
}

/// Peak resident memory of this process, in KiB (Linux only).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_million_rows_stream_in_bounded_memory() {
    const ROWS: u64 = 1_000_000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.swf");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        writeln!(w, "; MaxNodes: 10\n; MaxProcs: 80").unwrap();
        for i in 0..ROWS {
            // Every 1000th job has run time 0 and is skipped.
            let run = if i % 1000 == 999 { 0 } else { 60 + i % 7 };
            writeln!(
                w,
                "{} {} 0 {} {} -1 -1 -1 -1 -1 1 {} 1 -1 {} -1 -1 -1",
                i + 1,
                100 + i,
                run,
                1 + i % 16,
                i % 50,
                i % 3
            )
            .unwrap();
        }
        w.flush().unwrap();
    }
    let (mut jobs, mut pods, mut gpus) = (0u64, 0u64, 0i64);
    let report = stream(Format::Swf, &path, &ImportOptions::default(), &mut |j| {
        jobs += 1;
        pods += u64::from(j.total_replicas());
        gpus += j.total_gpus();
        Ok(())
    })
    .unwrap();
    assert_eq!(report.rows_read, ROWS);
    assert_eq!((report.jobs, jobs), (999_000, 999_000));
    assert_eq!(report.skipped, skips(&[(SkipReason::ZeroDuration, 1000)]));
    assert_eq!(report.origin_micros, 100_000_000);
    // 1..=16 processors at 8 per pod: 1 pod for 1..=8, 2 for 9..=16.
    assert_eq!(report.pods, pods);
    assert_eq!(gpus, 0);
    // Keeping a million jobs would take well over 500 MB; streaming must not.
    if let Some(kib) = peak_rss_kib() {
        assert!(kib < 256 * 1024, "peak RSS {kib} KiB");
    }
}
