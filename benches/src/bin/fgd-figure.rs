//! Draws docs/img/fgd-allocation.png and docs/img/fgd-fragmentation.png: the
//! mean over 10 seeds (42..=51) of the allocated and fragmented share of GPUs
//! against the arrived demand, per placement policy, on the openb default pod
//! list (examples/fragmentation/openb-fgd.yaml), as the FGD paper's Figure 7;
//! and docs/img/fgd-time-pending.png and docs/img/fgd-time-fragmentation.png:
//! pods waiting and the fragmented share of idle GPUs over the busy hours of
//! examples/fragmentation/openb-time-{binpack,fgd}.yaml (runs in time).
//!
//! cargo run --release -p lahar-benches --bin fgd-figure -- docs/img

use lahar::placement::{Order, Setup};
use lahar_policies::placement::Policy;
use lahar_policies::placement::replay::Row;
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "docs/img".into()));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/fragmentation/openb-fgd.yaml");
    let s = lahar::scenario::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let p = s.placement.clone().expect("a placement scenario");
    let setup = Setup::new(&s.cluster.nodes, &p.pods).expect("the openb cluster replays");
    let seeds: Vec<u64> = (42..52).collect();
    let mut alloc = Vec::new();
    let mut frag = Vec::new();
    for policy in Policy::ALL {
        let runs: Vec<Vec<Row>> = seeds
            .iter()
            .map(|&seed| setup.replay(policy, seed, &setup.arrivals(p.demand, Order::Shuffled, seed), |_| {}).0)
            .collect();
        let line = |f: fn(&Row) -> f64| -> Vec<(f64, f64, Option<f64>)> {
            (0..runs[0].len())
                .filter(|&i| runs.iter().all(|r| i < r.len()))
                .map(|i| {
                    let xs: Vec<f64> = runs.iter().map(|r| f(&r[i])).collect();
                    let (mean, ci) = lahar::sweep::tables::mean_ci(&xs);
                    (f64::from(runs[0][i].demand_pct), mean.unwrap_or(f64::NAN), ci)
                })
                .collect()
        };
        // From 60% on: below it every policy places every pod.
        let mut a = line(|r| r.gpu_alloc_pct);
        a.retain(|p| p.0 >= 60.0);
        alloc.push((policy.name().to_string(), a));
        frag.push((policy.name().to_string(), line(|r| r.frag_ratio_pct)));
        let last = alloc.last().unwrap().1.last().unwrap();
        println!("{:>15}: {:.2} % allocated at {} % arrived", policy.name(), last.1, last.0);
    }
    let plot = lahar_reports::sweep_plot::png;
    let title = "openb default pod list, 1,213 nodes, 6,212 GPUs (mean of 10 seeds)";
    plot(&out.join("fgd-allocation.png"), title, "arrived GPU demand (% of the cluster)", "allocated GPUs (%)", &alloc)
        .expect("plot");
    plot(
        &out.join("fgd-fragmentation.png"),
        title,
        "arrived GPU demand (% of the cluster)",
        "fragmented share of free GPUs (%)",
        &frag,
    )
    .expect("plot");
    in_time(&out);
}

/// The two runs in time, binpack against fgd, over their busy hours.
fn in_time(out: &Path) {
    let tmp = std::env::temp_dir().join(format!("lahar-fgd-figure-{}", std::process::id()));
    let mut pending = Vec::new();
    let mut frag = Vec::new();
    for name in ["binpack", "fgd"] {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../examples/fragmentation/openb-time-{name}.yaml"));
        let s = lahar::scenario::load_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let dir = tmp.join(name);
        let opts = lahar::RunOptions { out_dir: Some(dir.clone()), ..Default::default() };
        let r = lahar::run(s, &opts).unwrap_or_else(|e| panic!("{e}"));
        let w = r.summary.wait_s.expect("waits");
        let jct = r.summary.jct_s.expect("JCTs");
        println!(
            "{name:>8}: wait mean {:.0} s, p50 {:.0} s, p90 {:.0} s, max {:.0} s; JCT mean {:.0} s; fragmentation {:.2} %",
            w.mean,
            w.p50,
            w.p90,
            w.max,
            jct.mean,
            100.0 * r.summary.fragmentation
        );
        let mut rd = csv::Reader::from_path(dir.join("timeseries.csv")).expect("timeseries.csv");
        let h = rd.headers().expect("header").clone();
        let col = |c: &str| h.iter().position(|x| x == c).expect("column");
        let (t, p, f) = (col("t_s"), col("jobs_pending"), col("fragmentation"));
        let (mut pl, mut fl) = (Vec::new(), Vec::new());
        for rec in rd.records() {
            let rec = rec.expect("row");
            let hours = rec[t].parse::<f64>().expect("t") / 3600.0;
            if (24.0..=72.0).contains(&hours) {
                pl.push((hours, rec[p].parse::<f64>().expect("pending"), None));
                fl.push((hours, 100.0 * rec[f].parse::<f64>().expect("fragmentation"), None));
            }
        }
        pending.push((name.to_string(), pl));
        frag.push((name.to_string(), fl));
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let title = "openb pods in time, arrivals ×100, 76 nodes / 414 GPUs (Volcano)";
    let x = "simulated time (hours)";
    lahar_reports::sweep_plot::png(&out.join("fgd-time-pending.png"), title, x, "pods waiting", &pending)
        .expect("plot");
    lahar_reports::sweep_plot::png(
        &out.join("fgd-time-fragmentation.png"),
        title,
        x,
        "fragmented share of idle GPUs (%)",
        &frag,
    )
    .expect("plot");
}
