//! Draws docs/img/fgd-allocation.png and docs/img/fgd-fragmentation.png: the
//! mean over 10 seeds (42..=51) of the allocated and fragmented share of GPUs
//! against the arrived demand, per placement policy, on the openb default pod
//! list (examples/fragmentation/openb-fgd.yaml), as the FGD paper's Figure 7.
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
}
