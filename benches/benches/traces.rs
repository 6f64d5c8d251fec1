//! Streaming trace import (`lahar_traces::stream`), in rows per second: an SWF log
//! and a canonical CSV of a fixed number of generated rows, written once to a temp
//! file and streamed whole in every iteration (parse, convert, hand each job to a
//! sink that keeps nothing).

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lahar_traces::{Format, ImportOptions, TimeOrigin, stream};

/// Rows per generated file.
const ROWS: u64 = 100_000;

/// An SWF log: 18 fields per record, sizes 1..8 processors, run times 60..3659 s,
/// three queues; every record is a job.
fn swf(rows: u64) -> String {
    let mut s = String::from("; UnixStartTime: 0\n; MaxProcs: 64\n; MaxNodes: 64\n");
    for i in 0..rows {
        let run = 60 + (i * 37) % 3600;
        let procs = 1u64 << (i % 4);
        let _ = writeln!(
            s,
            "{} {} 0 {run} {procs} -1 -1 {procs} {} -1 1 {} 1 -1 {} -1 -1 -1",
            i + 1,
            i * 7,
            run * 2,
            i % 50,
            i % 3 + 1
        );
    }
    s
}

/// A canonical CSV in the writer's column subset that a converted trace uses most:
/// one task per job, 1..4 pods of 1 GPU.
fn canonical(rows: u64) -> String {
    let mut s = String::from("job,queue,submit_s,duration_s,replicas,cpu,memory,gpu\n");
    for i in 0..rows {
        let _ = writeln!(s, "j{i},q{},{},{},{},4,16Gi,1", i % 3, i * 7, 60 + (i * 37) % 3600, i % 4 + 1);
    }
    s
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut g = c.benchmark_group("trace-import");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ROWS));
    for (name, format, text) in [("swf", Format::Swf, swf(ROWS)), ("canonical", Format::Canonical, canonical(ROWS))] {
        let path = dir.path().join(format!("bench.{name}"));
        std::fs::write(&path, text).expect("write trace");
        // An explicit origin reads the file once (the default reads it twice to find
        // the earliest submit); both passes cost the same, so this is per-pass speed.
        let opts = ImportOptions { origin: TimeOrigin::At(0), ..ImportOptions::default() };
        check(format, &path, &opts);
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut pods = 0u64;
                let report = stream(format, &path, &opts, &mut |job| {
                    pods += u64::from(black_box(job).total_replicas());
                    Ok(())
                })
                .expect("stream");
                black_box((report.jobs, pods))
            })
        });
    }
    g.finish();
}

/// The generated files import completely (a bench of skipped rows would be wrong).
fn check(format: Format, path: &Path, opts: &ImportOptions) {
    let report = stream(format, path, opts, &mut |_| Ok(())).expect("stream");
    assert_eq!((report.rows_read, report.jobs), (ROWS, ROWS), "{format}: {:?}", report.skipped);
}

criterion_group!(benches, bench);
criterion_main!(benches);
