//! `lahar nccl`: tables and row evaluation.

use crate::lahar;
use predicates::prelude::*;
use std::path::Path;

#[test]
fn table_like_nccl_tests() {
    let out = lahar().args(["nccl", "--nodes", "2", "-b", "1K", "-e", "1M", "-f", "4"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#') && !l.contains("size(B)")).collect();
    // 1K, 4K, 16K, 64K, 256K, 1M
    assert_eq!(rows.len(), 6, "{text}");
    let times: Vec<f64> = rows.iter().map(|r| r.split_whitespace().nth(1).unwrap().parse().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "time must not decrease with size: {times:?}");
}

#[test]
fn rows_appends_model_columns() {
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/calibration/nccl-reference.csv");
    assert!(input.exists(), "calibration data missing at {}", input.display());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("est.csv");
    lahar().args(["nccl", "--rows"]).arg(&input).arg("--out").arg(&out).assert().success();
    let mut rdr = csv::Reader::from_path(&out).unwrap();
    let h = rdr.headers().unwrap().clone();
    let n = h.len();
    assert_eq!(
        &h.iter().skip(n - 4).collect::<Vec<_>>(),
        &["model_time_us", "model_busbw_GBps", "model_algo", "model_proto"]
    );
    let recs: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(recs.len(), 50);
    for r in &recs {
        let t: f64 = r[n - 4].parse().unwrap();
        assert!(t > 0.0);
        assert!(!r[n - 2].is_empty() && !r[n - 1].is_empty());
    }
}

/// An 8-byte all-reduce's bus bandwidth is a few kB/s: the row keeps its
/// significant digits instead of printing 0.000.
#[test]
fn rows_print_small_bandwidths_with_their_digits() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rows.csv");
    std::fs::write(
        &p,
        "id,collective,gpu,gpus_per_node,nodes,intra_link,inter_link,nic_gbps_per_gpu,bytes,busbw_GBps,time_us,algo\n\
         S1,allreduce,H100,8,1,nvswitch-nvlink4,none,0,8,,,auto\n",
    )
    .unwrap();
    let out = lahar().args(["nccl", "--rows"]).arg(&p).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let row = text.lines().nth(1).unwrap();
    let busbw: &str = row.split(',').rev().nth(2).unwrap();
    let v: f64 = busbw.parse().unwrap();
    assert!(v > 0.0 && v < 0.01, "{row}");
    let digits = busbw.trim_start_matches(['0', '.']);
    assert!(digits.len() >= 4, "four significant digits: {busbw}");
}

#[test]
fn unknown_gpu_in_a_row_names_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rows.csv");
    std::fs::write(
        &p,
        "id,collective,gpu,gpus_per_node,nodes,intra_link,inter_link,nic_gbps_per_gpu,bytes,busbw_GBps,time_us,algo\n\
         A1,allreduce,H100,8,1,nvswitch-nvlink4,none,0,1048576,,,auto\n\
         A2,allreduce,Z80,8,1,nvswitch-nvlink4,none,0,1048576,,,auto\n",
    )
    .unwrap();
    lahar()
        .args(["nccl", "--rows"])
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("rows.csv:3:1: row 3: (id A2)").and(predicate::str::contains("Z80")));
    std::fs::write(&p, "id,collective\nA1,allreduce\n").unwrap();
    lahar().args(["nccl", "--rows"]).arg(&p).assert().code(2).stderr(predicate::str::contains("row 2"));
}

/// A zero-sized placement names the flag the user gave, exit code 2, no panic.
#[test]
fn zero_nodes_or_gpus_name_their_flag() {
    for (flag, value) in [("--nodes", "0"), ("--gpus-per-node", "0")] {
        lahar()
            .args(["nccl", flag, value])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("{flag}: must be at least 1")))
            .stderr(predicate::str::contains("panicked").not());
    }
}
