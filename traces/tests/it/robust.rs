//! No input makes an importer panic: random bytes and randomly damaged real rows
//! end in jobs, counted skips or an error, in both modes.

use std::path::Path;

use lahar_traces::{Format, ImportOptions, import_reader};
use proptest::prelude::*;

use crate::common::sample;

/// The first lines of a real sample of each format.
fn seeds() -> Vec<(Format, String)> {
    let head = |rel: &str, n: usize| {
        let text = std::fs::read_to_string(sample(rel)).unwrap();
        text.lines().take(n).collect::<Vec<_>>().join("\n") + "\n"
    };
    vec![
        (Format::Swf, head("swf/RICC-2010-2.records-1-20000.swf", 26)),
        (Format::Openb, head("openb/openb_pod_list_gpuspec33.csv", 8)),
        (Format::Philly, head("philly/readme-examples/cluster_job_log", 60)),
        (Format::Pai, head("pai-2020/readme-examples/pai_task_table.csv", 1).repeat(3)),
        (Format::Helios, head("helios/readme-examples/cluster_log.csv", 4)),
        (
            Format::Canonical,
            "job,submit_s,duration_s,cpu,memory,gpu,task,replicas,min_available\na,1.5,10,1,1Gi,0.5,w,2,2\n".into(),
        ),
    ]
}

fn run_all(format: Format, bytes: &[u8]) {
    for strict in [false, true] {
        let opts = ImportOptions { strict, ..ImportOptions::default() };
        let _ = import_reader(format, &mut &bytes[..], Path::new("fuzz"), &opts);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn damaged_real_rows_never_panic(
        which in 0usize..6,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..12)
    ) {
        let (format, seed) = seeds().swap_remove(which);
        let mut bytes = seed.into_bytes();
        for (at, byte, op) in edits {
            if bytes.is_empty() {
                break;
            }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => { bytes.remove(i); }
                _ => bytes.insert(i, byte),
            }
        }
        run_all(format, &bytes);
    }

    #[test]
    fn random_bytes_never_panic(which in 0usize..6, bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        run_all(Format::ALL[which], &bytes);
    }
}

#[test]
fn huge_values_are_rejected_not_overflowed() {
    let helios = "job_id,gpu_num,node_num,submit_time,start_time,end_time\n\
        1,4294967295,4294967295,2020-01-01 00:00:00,2020-01-01 00:00:00,2020-01-01 00:00:01\n";
    let canonical = "job,submit_s,duration_s,memory,replicas\n\
        a,0,1,8Ei,4000000000\n\
        b,0,1,4Ei,4\n\
        c,-9223372036854,1,1,1\n";
    for (format, text) in [(Format::Helios, helios), (Format::Canonical, canonical)] {
        let out = import_reader(format, &mut text.as_bytes(), Path::new("big"), &ImportOptions::default()).unwrap();
        assert_eq!(out.report.jobs + out.report.skipped_total(), out.report.rows_read, "{format}");
    }
}

#[test]
fn format_names_round_trip() {
    for f in Format::ALL {
        assert_eq!(Format::from_name(f.name()), Some(f));
    }
    assert_eq!(Format::from_name("canonical"), Some(Format::Canonical));
    assert_eq!(Format::guess(Path::new("x/KTH.swf")), Some(Format::Swf));
    assert_eq!(Format::guess(Path::new("openb_pod_list_default.csv")), Some(Format::Openb));
    assert_eq!(Format::guess(Path::new("cluster_job_log")), Some(Format::Philly));
    assert_eq!(Format::guess(Path::new("pai_task_table.csv")), Some(Format::Pai));
    assert_eq!(Format::guess(Path::new("cluster_log.csv")), Some(Format::Helios));
    assert_eq!(Format::guess(Path::new("trace.csv")), None);
}
