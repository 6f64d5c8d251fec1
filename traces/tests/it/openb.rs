//! openb pod lists and node lists (Alibaba GPU trace v2023).

use lahar_core::model::queue::QueueId;
use lahar_core::util::time::{SimDuration, SimTime};
use lahar_traces::openb::{OpenbNode, read_nodes};
use lahar_traces::{Format, ImportError, ImportOptions, OpenbOptions, QueueInterner, QueueMapping, SkipReason, import};

use crate::common::*;

const MIB: i64 = 1 << 20;

#[test]
fn default_pod_list_counts_and_jobs() {
    let out = load(Format::Openb, &sample("openb/openb_pod_list_default.csv"));
    let r = &out.report;
    assert_eq!(r.rows_read, 8_152);
    assert_eq!(r.jobs, 7_255);
    assert_eq!(r.pods, 7_255);
    assert_eq!(r.skipped, skips(&[(SkipReason::NotStarted, 897)]));
    assert_eq!(r.statuses, counts(&[("Failed", 1_870), ("Running", 5_193), ("Succeeded", 192)]));
    assert!(r.notes.is_empty());
    assert_eq!(
        (r.origin_micros, r.first_submit, r.last_submit),
        (0, Some(SimTime::ZERO), Some(SimTime(12_901_761_000_000)))
    );
    assert_balanced(r);
    let gpu: i64 = out.jobs.iter().map(|j| j.tasks[0].requests.gpu_milli()).sum();
    let cpu: i64 = out.jobs.iter().map(|j| j.tasks[0].requests.cpu()).sum();
    let dur: u64 = out.jobs.iter().map(|j| j.duration.micros()).sum();
    assert_eq!((gpu, cpu, dur), (5_484_930, 76_423_916, 210_028_342_000_000));
    // openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061: 0.46 GPU.
    assert_eq!(
        *job(&out, "openb-pod-0001"),
        gang(
            "openb-pod-0001",
            "openb",
            427_061,
            12_902_960 - 427_061,
            "",
            0,
            &[("worker", 1, 6000, 12_288 * MIB, 460, None)]
        )
    );
    // openb-pod-0017,88000,327680,8,1000,,Burstable,Succeeded,9437497,10769854,9437497: 8 GPUs in one pod.
    assert_eq!(
        *job(&out, "openb-pod-0017"),
        gang(
            "openb-pod-0017",
            "openb",
            9_437_497,
            10_769_854 - 9_437_497,
            "",
            0,
            &[("worker", 1, 88_000, 327_680 * MIB, 8000, None)]
        )
    );
    // Pending pods (no scheduled_time) are skipped, e.g. openb-pod-7285.
    assert!(out.jobs.iter().all(|j| j.name != "openb-pod-7285"));
}

#[test]
fn gpuspec_pod_list_sets_model_selectors_and_alternatives() {
    let opts = ImportOptions { queues: QueueMapping::Intern(QueueInterner::new()), ..ImportOptions::default() };
    let QueueMapping::Intern(interner) = opts.queues.clone() else { unreachable!() };
    let out = import(Format::Openb, &sample("openb/openb_pod_list_gpuspec33.csv"), &opts).unwrap();
    let r = &out.report;
    assert_eq!((r.rows_read, r.jobs), (8_152, 7_255));
    assert_eq!(r.skipped, skips(&[(SkipReason::NotStarted, 897)]));
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    assert_eq!(out.jobs.iter().filter(|j| !j.tasks[0].node_selector.is_empty()).count(), 1_750);
    // Several models (`V100M16|V100M32`): the label must be one of them.
    let alternatives: Vec<_> = out.jobs.iter().filter(|j| !j.tasks[0].node_label_in.is_empty()).collect();
    assert_eq!(alternatives.len(), 342);
    assert!(alternatives.iter().all(|j| j.tasks[0].node_selector.is_empty()
        && j.tasks[0].node_label_in[0].0 == "nvidia.com/gpu.product"
        && j.tasks[0].node_label_in[0].1.len() > 1));
    // qos values interned in order of first appearance.
    assert_eq!(interner.names(), ["LS", "Burstable", "BE", "Guaranteed"]);
    let per_queue: Vec<usize> = (0..4).map(|q| out.jobs.iter().filter(|j| j.queue == QueueId(q)).count()).collect();
    assert_eq!(per_queue, [4_193, 98, 2_957, 7]);
    // openb-pod-0012,8000,32768,1,1000,T4,LS,Running,6588193,10959245,6595531
    assert_eq!(
        *job(&out, "openb-pod-0012"),
        gang(
            "openb-pod-0012",
            "openb",
            6_588_193,
            10_959_245 - 6_595_531,
            "",
            0,
            &[("worker", 1, 8000, 32_768 * MIB, 1000, Some("T4"))]
        )
    );
    // V100M16|V100M32|V100M32: two models, constraint dropped.
    assert!(job(&out, "openb-pod-0598").tasks[0].node_selector.is_empty());
}

#[test]
fn multigpu_reduced_schema_submits_in_file_order() {
    let out = load(Format::Openb, &sample("openb/openb_pod_list_multigpu50.csv"));
    let r = &out.report;
    assert_eq!((r.rows_read, r.jobs, r.pods), (9_061, 9_061, 9_061));
    assert!(r.skipped.is_empty());
    assert_eq!(r.statuses, counts(&[("unknown", 9_061)]));
    assert_eq!((r.first_submit, r.last_submit), (Some(SimTime::ZERO), Some(SimTime(9_060_000_000))));
    let gpu: i64 = out.jobs.iter().map(|j| j.tasks[0].requests.gpu_milli()).sum();
    assert_eq!(gpu, 11_358_800);
    // openb-pod-9060,16200,66560,2,1000
    let mut want = gang("openb-pod-9060", "openb", 9060, 0, "", 0, &[("worker", 1, 16_200, 66_560 * MIB, 2000, None)]);
    want.duration = OpenbOptions::default().untimed_duration;
    assert_eq!(out.jobs[9060], want);
    let opts = ImportOptions {
        openb: OpenbOptions { untimed_interval: SimDuration(500_000), untimed_duration: SimDuration::from_secs(60) },
        ..ImportOptions::default()
    };
    let out = import(Format::Openb, &sample("openb/openb_pod_list_multigpu50.csv"), &opts).unwrap();
    assert_eq!(out.jobs[2].submit, SimTime(1_000_000));
    assert_eq!(out.jobs[2].duration, SimDuration::from_secs(60));
}

#[test]
fn corrupted_pod_lists() {
    let src = sample("openb/openb_pod_list_default.csv");
    // Line 3 is row 2: openb-pod-0001.
    let cases: [(Edit, SkipReason, &str); 4] = [
        (
            |l| Some(l.rsplitn(3, ',').nth(2).unwrap_or("").to_string()),
            SkipReason::Malformed,
            "expected 11 fields, found 9",
        ),
        (|l| Some(l.replacen("6000", "6k", 1)), SkipReason::Malformed, "`cpu_milli`: expected an integer, got `6k`"),
        (|l| Some(l.replacen(",427061,", ",,", 1)), SkipReason::MissingField, "`creation_time` is empty"),
        (|l| Some(l.replacen(",12902960,", ",5,", 1)), SkipReason::EndBeforeStart, "end 5 is before start 427061"),
    ];
    for (edit, reason, needle) in cases {
        let (_dir, path) = corrupt(&src, "openb_pod_list_x.csv", 3, edit);
        assert_row_error(&strict_error(Format::Openb, &path), &path, 3, 2, reason, needle);
        let out = load(Format::Openb, &path);
        assert_eq!((out.report.rows_read, out.report.jobs), (8_152, 7_254), "{needle}");
        assert_eq!(out.report.skipped, skips(&[(reason, 1), (SkipReason::NotStarted, 897)]), "{needle}");
    }
    // A header without a required column is a file error in any mode.
    let (_dir, path) = corrupt(&src, "openb_pod_list_x.csv", 1, |l| Some(l.replace(",scheduled_time", "")));
    let e = import(Format::Openb, &path, &ImportOptions::default()).unwrap_err();
    assert!(matches!(e, ImportError::File { .. }), "{e:?}");
    assert!(e.to_string().contains("missing column `scheduled_time`"), "{e}");
    // Invalid UTF-8 in a row.
    let mut bytes = std::fs::read(&src).unwrap();
    let at = bytes.iter().position(|&b| b == b'\n').unwrap() + 5;
    bytes[at] = 0xff;
    let (_dir, path) = write_temp("bad_utf8.csv", "");
    std::fs::write(&path, bytes).unwrap();
    assert_row_error(&strict_error(Format::Openb, &path), &path, 2, 1, SkipReason::Malformed, "UTF-8");
}

#[test]
fn node_lists() {
    let all = read_nodes(&sample("openb/openb_node_list_all_node.csv"), true).unwrap();
    assert_eq!((all.rows_read, all.nodes.len()), (1_523, 1_523));
    assert!(all.skipped.is_empty());
    assert_eq!(all.nodes.iter().filter(|n| n.model.is_none()).count(), 310);
    assert_eq!(all.nodes.iter().map(|n| u64::from(n.gpus)).sum::<u64>(), 6_212);
    assert_eq!(all.nodes.iter().map(|n| n.cpu_milli).sum::<i64>(), 125_514_000);
    assert_eq!(all.nodes.iter().map(|n| n.memory_bytes).sum::<i64>(), 612_028_416 * MIB);
    assert_eq!(
        all.nodes[0],
        OpenbNode {
            name: "openb-node-0000".into(),
            cpu_milli: 32_000,
            memory_bytes: 262_144 * MIB,
            gpus: 0,
            model: None
        }
    );
    assert_eq!(
        all.nodes[1522],
        OpenbNode {
            name: "openb-node-1522".into(),
            cpu_milli: 96_000,
            memory_bytes: 393_216 * MIB,
            gpus: 8,
            model: Some("G2".into())
        }
    );
    let gpu = read_nodes(&sample("openb/openb_node_list_gpu_node.csv"), true).unwrap();
    assert_eq!(gpu.nodes.len(), 1_213);
    let t4 = gpu.nodes.iter().filter(|n| n.model.as_deref() == Some("T4"));
    assert_eq!((t4.clone().count(), t4.map(|n| n.gpus).sum::<u32>()), (404, 842));
    assert_eq!(gpu.nodes[0].model.as_deref(), Some("P100"));

    let (_dir, path) =
        corrupt(&sample("openb/openb_node_list_gpu_node.csv"), "nodes.csv", 4, |l| Some(l.replacen(",2,", ",two,", 1)));
    let e = read_nodes(&path, true).unwrap_err();
    assert_row_error(&e, &path, 4, 3, SkipReason::Malformed, "`gpu`: expected an integer, got `two`");
    let lenient = read_nodes(&path, false).unwrap();
    assert_eq!((lenient.rows_read, lenient.nodes.len()), (1_213, 1_212));
    assert_eq!(lenient.skipped, skips(&[(SkipReason::Malformed, 1)]));
}
