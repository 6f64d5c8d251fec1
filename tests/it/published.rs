//! What people read is what the binary prints (issue 42): the README's table of
//! the default run, and the topology result in the README and docs/topology.md,
//! and the table of gangs against elastic jobs under failures in docs/model.md
//! are checked against runs of the same commands, and so are the figures the
//! pages show ([`same_figure`]). A change that moves a number or a line fails here
//! until the page is brought up to date.

use super::*;
use std::collections::{BTreeMap, BTreeSet};

/// A figure of the docs (`doc`, from the repository's root) is, byte for byte,
/// the PNG its documented command drew now (`made`); lahar's rendering is
/// deterministic (a bundled font, integer pixels). Run with
/// `LAHAR_WRITE_FIGURES=1` to write the new figure instead, and commit it after
/// looking at it.
pub fn same_figure(made: &Path, doc: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(doc);
    let new = std::fs::read(made).unwrap_or_else(|e| panic!("{}: {e}", made.display()));
    if std::env::var_os("LAHAR_WRITE_FIGURES").is_some() {
        std::fs::write(&path, &new).unwrap_or_else(|e| panic!("{doc}: {e}"));
        return;
    }
    let old = std::fs::read(&path).unwrap_or_else(|e| panic!("{doc}: {e}"));
    assert!(
        old == new,
        "{doc} is not what its command draws now ({}): look at the new one, then rerun with LAHAR_WRITE_FIGURES=1 and commit it",
        made.display()
    );
}

/// A page's fenced block after `marker` (whatever its language: ```` ``` ````,
/// ```` ```json ````).
fn block_after<'a>(text: &'a str, marker: &str) -> &'a str {
    let from = text.find(marker).unwrap_or_else(|| panic!("no `{marker}` in the page")) + marker.len();
    let fence = text[from..].find("```").expect("a fenced block") + from;
    let open = text[fence..].find('\n').expect("the fence's line") + fence + 1;
    let close = text[open..].find("```").expect("its end") + open;
    &text[open..close]
}

/// The table's lines, the wall time's value blanked (it is the machine's).
fn table(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with(['┌', '│', '╞', '└']))
        .map(|l| if l.contains("wall time") { "│ wall time".to_string() } else { l.to_string() })
        .collect()
}

/// `cargo run --release -- run` (the README's first command, from a fresh folder)
/// prints the README's table, but for the wall time.
#[test]
fn readme_default_run_table_is_the_binary_s() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README");
    let want = table(block_after(&readme, "The first command prints a summary and writes `out/default/`:"));
    let dir = tempfile::tempdir().expect("tempdir");
    let out = lahar().current_dir(dir.path()).arg("run").assert().success().get_output().stdout.clone();
    let got = table(&String::from_utf8_lossy(&out));
    assert!(want.len() > 10, "README's table not found");
    assert_eq!(got, want, "README.md's default-run table differs from `lahar run`");
}

/// The topology example's numbers in README.md and docs/topology.md are the two
/// runs' (`examples/topology/{without,with}-nta.yaml`).
#[test]
fn topology_numbers_are_the_binary_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |f: &str| {
        let s = lahar::scenario::load_file(&root.join("examples/topology").join(f)).unwrap_or_else(|e| panic!("{e}"));
        lahar::run(s, &lahar::RunOptions { no_write: true, ..Default::default() }).unwrap()
    };
    let (without, with) = (run("without-nta.yaml"), run("with-nta.yaml"));
    let h = |s: f64| s / 3600.0;
    let cells = |r: &lahar::RunReport| {
        let m = &r.summary;
        let (jct, wait) = (m.jct_s.as_ref().expect("jct"), m.wait_s.as_ref().expect("wait"));
        format!(
            "{:.2} h | {:.2} h | {:.2} h | {:.2} | {:.1}% | {:.1}%",
            h(jct.mean),
            h(jct.p99),
            h(wait.mean),
            m.slowdown.as_ref().expect("slowdown").mean,
            100.0 * m.gpu_allocation_rate,
            100.0 * m.gpu_effective_utilization
        )
    };
    let rows = |r: &lahar::RunReport| r.rows();
    let crossing = rows(&without).iter().filter(|r| r.highest_tier >= 3).count();
    let with_rows = rows(&with);
    let (with_crossing, in_leaf) = (
        with_rows.iter().filter(|r| r.highest_tier >= 3).count(),
        with_rows.iter().filter(|r| r.highest_tier <= 1).count(),
    );
    let doc = std::fs::read_to_string(root.join("docs/topology.md")).expect("topology.md");
    let want_without = format!("| without-nta | Volcano default | {} | {crossing} / 400 |", cells(&without));
    let want_with = format!(
        "| with-nta | default + network-topology-aware, jobs `hard`, `highestTierAllowed: 2` | {} | {with_crossing} / 400 ({in_leaf} within one leaf) |",
        cells(&with)
    );
    assert!(doc.contains(&want_without), "docs/topology.md should have:\n{want_without}");
    assert!(doc.contains(&want_with), "docs/topology.md should have:\n{want_with}");
    assert!(doc.contains(&format!("so {in_leaf} of 400 jobs run inside one leaf")), "docs/topology.md: {in_leaf}");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    let mean = |r: &lahar::RunReport| h(r.summary.jct_s.as_ref().expect("jct").mean);
    let claim = format!("halves the mean JCT ({:.1} h → {:.1} h)", mean(&without), mean(&with));
    assert!(readme.contains(&claim), "README.md should say: {claim}");
}

/// The README's topology figure is the JCT CDF of its three commands' `lahar compare`.
#[test]
fn topology_figure_is_the_compare_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    for f in ["without", "with"] {
        lahar()
            .args(["run", "-q", "--out"])
            .arg(d.path().join(format!("nta-{f}")))
            .arg(root.join(format!("examples/topology/{f}-nta.yaml")))
            .assert()
            .success();
    }
    let cmp = d.path().join("nta-compare");
    lahar()
        .args(["compare", "--out"])
        .arg(&cmp)
        .arg(d.path().join("nta-without"))
        .arg(d.path().join("nta-with"))
        .assert()
        .success();
    same_figure(&cmp.join("plots/jct_cdf.png"), "docs/img/topology-jct-cdf.png");
}

/// The README's FGD figure is the `lahar compare` of its six placement runs, and
/// its caption's two numbers are theirs.
#[test]
fn fgd_figure_is_the_compare_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let policies = ["random", "dot-product", "gpu-clustering", "gpu-packing", "best-fit", "fgd"];
    for p in policies {
        lahar()
            .arg("run")
            .arg("-q")
            .arg(root.join("examples/fragmentation/openb-fgd.yaml"))
            .args(["--set", &format!("spec.scheduler={{baseline: {p}}}"), "--out"])
            .arg(d.path().join("fgd").join(p))
            .assert()
            .success();
    }
    let cmp = d.path().join("fgd/compare");
    let mut c = lahar();
    c.arg("compare");
    for p in policies {
        c.arg(d.path().join("fgd").join(p));
    }
    c.arg("--out").arg(&cmp).assert().success();
    same_figure(&cmp.join("plots/allocation_vs_demand.png"), "docs/img/fgd-allocation-seed42.png");
    let rate = |p: &str| -> f64 {
        let s = std::fs::read_to_string(d.path().join("fgd").join(p).join("summary.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        100.0 * v["metrics"]["gpu_allocation_rate"].as_f64().unwrap()
    };
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README");
    let claim =
        format!("FGD\nplaces the most ({:.1}% of the GPUs against random's {:.1}%)", rate("fgd"), rate("random"));
    assert!(readme.contains(&claim), "README.md should say: {claim}");
}

/// `lahar --version` and summary.json's `lahar_version` name the commit the binary
/// was built from (`VERSION+COMMIT`, `-dirty` when tracked code differed from it),
/// so a published number can be traced to its code.
#[test]
fn the_version_names_the_commit() {
    let out = lahar().arg("--version").assert().success().get_output().stdout.clone();
    let text = String::from_utf8_lossy(&out);
    let version = text.trim().strip_prefix("lahar ").expect("`lahar VERSION`");
    assert_eq!(version, lahar::VERSION);
    let in_git = Path::new(env!("CARGO_MANIFEST_DIR")).join(".git").exists();
    if in_git {
        let (base, build) = version.split_once('+').expect("a commit after `+`");
        assert_eq!(base, env!("CARGO_PKG_VERSION"));
        let commit = build.trim_end_matches("-dirty");
        assert!(commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit()), "{version}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    lahar().args(["run", "-q", "--out"]).arg(dir.path()).assert().success();
    let summary = std::fs::read_to_string(dir.path().join("summary.json")).expect("summary.json");
    assert!(summary.contains(&format!("\"lahar_version\": \"{version}\"")), "{summary}");
}

/// Thousands separated by commas, as the docs' tables write them: 19945 → "19,945".
pub(crate) fn grouped(x: f64) -> String {
    let digits = format!("{x:.0}");
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// docs/model.md's table of gangs against elastic jobs under failures is the
/// means over seeds of `lahar sweep examples/sweeps/faults-elastic.yaml`.
#[test]
fn faults_elastic_table_is_the_sweep_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("sweep");
    lahar()
        .args(["sweep", "-q", "--out"])
        .arg(&out)
        .arg(root.join("examples/sweeps/faults-elastic.yaml"))
        .assert()
        .success();
    let json = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
    };
    let sweep = json(&out.join("sweep.json"));
    let axes = sweep["axes"].as_array().expect("axes");
    let value = |a: usize, i: u64| axes[a]["values"][i as usize].as_str().expect("value name").to_string();
    // Cells in sweep.json's order, grouped by point (seeds of one point are adjacent).
    let mut groups: Vec<(Vec<u64>, Vec<serde_json::Value>)> = Vec::new();
    for c in sweep["cells"].as_array().expect("cells") {
        let point: Vec<u64> = c["point"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
        let m = json(&out.join("cells").join(c["id"].as_str().unwrap()).join("summary.json"))["metrics"].clone();
        match groups.last_mut() {
            Some((p, ms)) if *p == point => ms.push(m),
            _ => groups.push((point, vec![m])),
        }
    }
    assert_eq!(groups.len(), 12);
    for (plot, doc) in [
        ("jct_s.mean", "faults-elastic-jct"),
        ("faults.goodput", "faults-elastic-goodput"),
        ("gpu_time.stalled", "faults-elastic-stalled"),
    ] {
        same_figure(&out.join(format!("plots/{plot}-vs-min_fraction.png")), &format!("docs/img/{doc}.png"));
    }
    let doc = std::fs::read_to_string(root.join("docs/model.md")).expect("model.md");
    for (p, ms) in &groups {
        let mean = |ptr: &str| {
            ms.iter().map(|m| m.pointer(ptr).and_then(|v| v.as_f64()).expect(ptr)).sum::<f64>() / ms.len() as f64
        };
        let fraction = match value(0, p[0]).as_str() {
            "1" => "1 (gang)".to_string(),
            v => v.to_string(),
        };
        let ckpt = if value(1, p[1]) == "every-30m" { "every 30 min" } else { "none" };
        let rate = if value(2, p[2]) == "llama3-rate" { "Llama 3" } else { "10×" };
        let row = format!(
            "| {fraction} | {ckpt} | {rate} | {:.1} | {:.1} | {} | {:.2} % | {:.2} % |",
            mean("/faults/failures"),
            mean("/jct_s/mean") / 3600.0,
            grouped(mean("/faults/gpu_hours_lost_to_failures")),
            100.0 * mean("/gpu_time/stalled"),
            100.0 * mean("/faults/goodput"),
        );
        assert!(doc.contains(&row), "docs/model.md should have:\n{row}");
    }
    faults_elastic_prose_is_the_sweep_s(&out, &doc, &groups, &value);
}

/// docs/model.md's prose under the table: lost work without checkpoints, the JCT's
/// growth there, stalled against lost GPU time for gangs, the goodput's 95%
/// half-widths (summary.csv's `faults.goodput.ci95`) and the goodput without
/// checkpoints, all at the higher failure rate.
fn faults_elastic_prose_is_the_sweep_s(
    out: &Path,
    doc: &str,
    groups: &[(Vec<u64>, Vec<serde_json::Value>)],
    value: &dyn Fn(usize, u64) -> String,
) {
    let prose = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let says = |quoted: String| assert!(prose.contains(&quoted), "docs/model.md should say: {quoted}");
    let fractions = ["1", "0.5", "0.25"];
    let cells = |fraction: &str, ckpt: &str| -> &Vec<serde_json::Value> {
        let at = groups
            .iter()
            .find(|(p, _)| value(0, p[0]) == fraction && value(1, p[1]) == ckpt && value(2, p[2]) == "burn-in-10x");
        &at.unwrap_or_else(|| panic!("no cell {fraction}/{ckpt}")).1
    };
    let mean = |ms: &Vec<serde_json::Value>, f: &dyn Fn(&serde_json::Value) -> f64| {
        ms.iter().map(f).sum::<f64>() / ms.len() as f64
    };
    let num = |m: &serde_json::Value, ptr: &str| m.pointer(ptr).and_then(|v| v.as_f64()).expect(ptr);
    let lost_of_held = fractions
        .iter()
        .map(|f| mean(cells(f, "none"), &|m| num(m, "/gpu_time/lost") / num(m, "/gpu_allocation_rate")))
        .fold(0.0, f64::max);
    says(format!(
        "up to {:.1} % of the held GPU time at the higher rate, and the mean JCT grows by a fifth there",
        100.0 * lost_of_held
    ));
    for f in fractions {
        let growth = mean(cells(f, "none"), &|m| num(m, "/jct_s/mean"))
            / mean(cells(f, "every-30m"), &|m| num(m, "/jct_s/mean"));
        assert!((1.15..1.25).contains(&growth), "minFraction {f}: the JCT grows ×{growth:.3}, not by a fifth");
    }
    let (stalled, lost) = (
        mean(cells("1", "every-30m"), &|m| num(m, "/gpu_time/stalled")),
        mean(cells("1", "every-30m"), &|m| num(m, "/gpu_time/lost")),
    );
    says(format!(
        "{:.2} % of the cluster's GPU time at the higher rate, with checkpoints — {:.0} times the work those failures throw away ({:.2} % of the cluster's GPU time).",
        100.0 * stalled,
        stalled / lost,
        100.0 * lost
    ));
    let mut rd = csv::Reader::from_path(out.join("summary.csv")).expect("summary.csv");
    let h = rd.headers().expect("header").clone();
    let col = |c: &str| h.iter().position(|x| x == c).unwrap_or_else(|| panic!("{c}"));
    let (mf, ck, fl, g, ci) = (
        col("min_fraction"),
        col("checkpoints"),
        col("failures"),
        col("faults.goodput.mean"),
        col("faults.goodput.ci95"),
    );
    let summary: Vec<csv::StringRecord> = rd.records().map(|r| r.expect("row")).collect();
    let goodput = |fraction: &str, ckpt: &str| -> (f64, f64) {
        let r = summary
            .iter()
            .find(|r| &r[mf] == fraction && &r[ck] == ckpt && &r[fl] == "burn-in-10x")
            .unwrap_or_else(|| panic!("no summary row {fraction}/{ckpt}"));
        (100.0 * r[g].parse::<f64>().unwrap(), 100.0 * r[ci].parse::<f64>().unwrap())
    };
    let ((gang, gang_ci), (quarter, quarter_ci)) = (goodput("1", "every-30m"), goodput("0.25", "every-30m"));
    says(format!("(gangs {gang:.2} ± {gang_ci:.2} %, a quarter {quarter:.2} ± {quarter_ci:.2} %)"));
    let without: Vec<f64> = fractions.iter().map(|f| goodput(f, "none").0).collect();
    let (lo, hi) = (without.iter().copied().fold(f64::MAX, f64::min), without.iter().copied().fold(0.0, f64::max));
    says(format!("({}–{} % goodput at the higher rate)", lo.floor(), hi.floor()));
    // The failure count is about the same in every setting, as the runs last
    // about as long (each cell's run ends with its last job).
    let mut counts = Vec::new();
    for ckpt in ["none", "every-30m"] {
        let ends: Vec<f64> = fractions.iter().map(|f| mean(cells(f, ckpt), &|m| num(m, "/sim_time_s"))).collect();
        let spread = ends.iter().copied().fold(0.0, f64::max) / ends.iter().copied().fold(f64::MAX, f64::min);
        assert!(spread < 1.02, "{ckpt}: the runs' mean lengths {ends:?} are not within 2 % of each other");
        counts.extend(fractions.iter().map(|f| mean(cells(f, ckpt), &|m| num(m, "/faults/failures")).floor()));
    }
    let (lo, hi) = (counts.iter().copied().fold(f64::MAX, f64::min), counts.iter().copied().fold(0.0, f64::max));
    says(format!("is about the same in every setting ({lo}–{hi} at the higher rate)"));
}

/// docs/fragmentation.md's table of lahar against the FGD paper is summary.csv of
/// `lahar sweep examples/sweeps/fgd-grid.yaml` (mean allocation at 130% ± the 95%
/// half-width, in percent), and each difference is lahar's mean as printed less
/// the paper's.
#[test]
fn fragmentation_paper_table_is_the_sweep_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("grid");
    lahar().args(["sweep", "-q", "--out"]).arg(&out).arg(root.join("examples/sweeps/fgd-grid.yaml")).assert().success();
    let mut rd = csv::Reader::from_path(out.join("summary.csv")).expect("summary.csv");
    let h = rd.headers().expect("header").clone();
    let col = |c: &str| h.iter().position(|x| x == c).unwrap_or_else(|| panic!("{c}"));
    let (pods, policy, mean, ci, frag) = (
        col("pods"),
        col("policy"),
        col("gpu_allocation_rate.mean"),
        col("gpu_allocation_rate.ci95"),
        col("fragmentation.mean"),
    );
    let doc = std::fs::read_to_string(root.join("docs/fragmentation.md")).expect("fragmentation.md");
    let (mut rows, mut beyond) = (0, f64::MIN);
    for r in rd.records() {
        let r = r.expect("row");
        let pct = |i: usize| 100.0 * r[i].parse::<f64>().expect("a number");
        let lahar = format!("{:.2}", pct(mean));
        // | pods | policy | lahar ± ci | paper | difference |, fgd's values in bold.
        let prefix = format!("| {} | {} | ", &r[pods], &r[policy]);
        let line = doc.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("no row {prefix:?}"));
        let cells: Vec<String> = line.split('|').map(|c| c.trim().replace("**", "")).collect();
        assert_eq!(cells[3], format!("{lahar} ± {:.2}", pct(ci)), "{line}");
        let paper: f64 = cells[4].parse().expect("the paper's value");
        let diff = lahar.parse::<f64>().unwrap() - paper;
        let sign = if diff < -0.005 { "−" } else { "+" };
        assert_eq!(cells[5], format!("{sign}{:.2}", diff.abs()), "{line}");
        // "every mean allocation ratio at 130% demand is within 0.2 points of the paper's"
        assert!(diff.abs() < 0.2, "{line}");
        // "The fragmentation ratio at 130% agrees likewise (default list: random
        // A% against …, FGD B% against …)".
        if &r[pods] == "default" && ["random", "fgd"].contains(&&r[policy]) {
            let who = if &r[policy] == "fgd" { "FGD" } else { "random" };
            let quoted = format!("{who} {:.2}% against", pct(frag));
            let prose = doc.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(prose.contains(&quoted), "docs/fragmentation.md lacks {quoted:?}");
        }
        // "Every difference is within lahar's own 95% interval or a few hundredths beyond it".
        beyond = beyond.max(diff.abs() - pct(ci));
        rows += 1;
    }
    assert_eq!(rows, 18);
    assert!(beyond <= 0.05, "a difference lies {beyond:.2} points beyond lahar's interval");
    grid_numbers_are_fragmentation_md_s(&out, &doc);
}

/// The grid's numbers docs/fragmentation.md quotes in its prose: the pods the
/// default list becomes at demand 1.3 (over the seeds, and at seed 42), the most
/// pods any replay puts on a node, and the default list's shapes (distinct (CPU,
/// milli-GPU, devices, accepted models)) and how many of them cover 95% of its pods
/// (summary.json's `typical_shapes`).
fn grid_numbers_are_fragmentation_md_s(out: &Path, doc: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prose = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut rd = csv::Reader::from_path(out.join("sweep.csv")).expect("sweep.csv");
    let h = rd.headers().expect("header").clone();
    let col = |c: &str| h.iter().position(|x| x == c).unwrap_or_else(|| panic!("{c}"));
    let (cell, pods, seed) = (col("cell"), col("pods"), col("seed"));
    let (mut arrived, mut most_on_a_node, mut typical) = (Vec::new(), 0, None);
    for r in rd.records() {
        let r = r.expect("row");
        let dir = out.join("cells").join(&r[cell]);
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).expect("summary.json")).unwrap();
        if &r[pods] == "default" {
            arrived.push((r[seed].to_string(), m["metrics"]["pods_arrived"].as_u64().expect("pods_arrived")));
            typical = m["metrics"]["typical_shapes"].as_u64();
        }
        let mut per_node: BTreeMap<String, u32> = BTreeMap::new();
        let mut placements = csv::Reader::from_path(dir.join("placements.csv")).expect("placements.csv");
        for p in placements.records() {
            let node = p.expect("row")[1].to_string();
            if !node.is_empty() {
                *per_node.entry(node).or_default() += 1;
            }
        }
        most_on_a_node = most_on_a_node.max(per_node.values().copied().max().unwrap_or(0));
    }
    let (lo, hi) = (arrived.iter().map(|a| a.1).min().unwrap(), arrived.iter().map(|a| a.1).max().unwrap());
    let at_42 = arrived.iter().find(|a| a.0 == "42").expect("seed 42").1;
    let mean = arrived.iter().map(|a| a.1).sum::<u64>() as f64 / arrived.len() as f64;
    assert_eq!((mean / 100.0).round() as u64 * 100, 10_800, "about 10,800 pods on average");
    let quoted = format!(
        "demand 1.3 becomes about 10,800 pods ({} to {} over the seeds 42–51 of the grid below; {} at seed 42,",
        grouped(lo as f64),
        grouped(hi as f64),
        grouped(at_42 as f64)
    );
    assert!(prose.contains(&quoted), "docs/fragmentation.md should say: {quoted}");
    let quoted =
        format!("no replay of the shared lists in the grid below puts more than {most_on_a_node} pods on a node");
    assert!(prose.contains(&quoted), "docs/fragmentation.md should say: {quoted}");
    let mut list = csv::Reader::from_path(root.join("examples/traces/openb/openb_pod_list_default.csv")).unwrap();
    let lh = list.headers().unwrap().clone();
    let at = |c: &str| lh.iter().position(|x| x == c).unwrap_or_else(|| panic!("{c}"));
    let (cpu, milli, devices, models) = (at("cpu_milli"), at("gpu_milli"), at("num_gpu"), at("gpu_spec"));
    let shapes: BTreeSet<(String, String, String, BTreeSet<String>)> = list
        .records()
        .map(|r| r.unwrap())
        .map(|r| {
            let accepted = r[models].split('|').filter(|m| !m.is_empty()).map(str::to_string).collect();
            (r[cpu].to_string(), r[milli].to_string(), r[devices].to_string(), accepted)
        })
        .collect();
    let quoted =
        format!("The default list has {} shapes; {} cover 95%.", shapes.len(), typical.expect("typical_shapes"));
    assert!(prose.contains(&quoted), "docs/fragmentation.md should say: {quoted}");
}

/// docs/manifests.md's operator outputs on the snapshot example: `--explain` on the
/// fine-tuning PodGroup (the part after the decisions) and `lahar diff` against
/// the conf without `priority`, as the binary prints them.
#[test]
fn snapshot_operator_outputs_are_the_binary_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/manifests.md")).expect("manifests.md");
    let dir = tempfile::tempdir().expect("tempdir");
    let run = lahar()
        .current_dir(root)
        .args([
            "run",
            "--snapshot",
            "examples/snapshot/cluster.yaml",
            "--conf",
            "examples/snapshot/volcano-scheduler.conf",
        ])
        .args(["--sessions", "1", "--explain", "team-b/finetune-2b9d", "--out"])
        .arg(dir.path().join("o"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let run = String::from_utf8_lossy(&run);
    let explained = &run[run.find("explain team-b/").expect("the explain part")..];
    assert_eq!(block_after(&doc, "and the step that keep the gang waiting:\n"), explained);
    let diff = lahar()
        .current_dir(root)
        .args([
            "diff",
            "--snapshot",
            "examples/snapshot/cluster.yaml",
            "--conf",
            "examples/snapshot/volcano-scheduler.conf",
        ])
        .args(["--conf", "examples/snapshot/no-priority.conf", "--sessions", "1"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let marker = "--conf examples/snapshot/no-priority.conf --sessions 1\n```\n";
    assert_eq!(block_after(&doc, marker), String::from_utf8_lossy(&diff));
}

/// docs/baselines.md's counts of jobs whose start time the users' estimates move
/// (`runTime: estimate` against the true run times) on the KTH and RICC samples.
#[test]
fn estimate_counts_are_the_binary_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("tempdir");
    let moved = |trace: &str, baseline: &str| -> (usize, usize) {
        let starts = |rt: &str| -> std::collections::BTreeMap<String, String> {
            let out = dir.path().join(format!("{trace}-{baseline}-{rt}"));
            lahar()
                .args([
                    "run",
                    "-q",
                    "--set",
                    &format!("spec.scheduler={{baseline: {baseline}, runTime: {rt}}}"),
                    "--out",
                ])
                .arg(&out)
                .arg(root.join(format!("examples/traces/swf-{trace}.yaml")))
                .assert()
                .success();
            let jobs = std::fs::read_to_string(out.join("jobs.csv")).expect("jobs.csv");
            jobs.lines().skip(1).map(|l| l.split(',').collect::<Vec<_>>()).map(|f| (f[0].into(), f[5].into())).collect()
        };
        let (a, e) = (starts("actual"), starts("estimate"));
        (a.iter().filter(|(k, v)| e.get(*k) != Some(v)).count(), a.len())
    };
    let doc = std::fs::read_to_string(root.join("docs/baselines.md")).expect("baselines.md");
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    let pct = |(n, of): (usize, usize)| format!("{:.1}%", 100.0 * n as f64 / of as f64);
    let (ke, ks) = (moved("kth", "easy-backfill"), moved("kth", "sjf"));
    let (rs, re) = (moved("ricc", "sjf"), moved("ricc", "easy-backfill"));
    let want = [
        format!("`easy-backfill` starts {} of {} jobs ({})", grouped(ke.0 as f64), grouped(ke.1 as f64), pct(ke)),
        format!("and `sjf` {} ({});", grouped(ks.0 as f64), pct(ks)),
        format!("`sjf` {} of {} ({})", grouped(rs.0 as f64), grouped(rs.1 as f64), pct(rs)),
    ];
    for w in want {
        assert!(doc.contains(&w), "docs/baselines.md should have: {w}");
    }
    assert_eq!(re.0, 0, "docs/baselines.md says no RICC start moves under easy-backfill");
}

/// docs/ci.md's example, its first block's commands run in a fresh folder (the
/// scenario from the repository): the baseline `lahar check --write-baseline
/// ci/baseline.json run` writes is the page's JSON, line for line, but for
/// `lahar_version`, which names the commit the binary was built from (the page's
/// has the same release and a commit of the same form); the sweep baseline's values
/// are the run's; and both checks of the run against its own baseline end with the
/// page's verdict line.
#[test]
fn ci_baseline_example_is_the_binary_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/ci.md")).expect("ci.md");
    let dir = tempfile::tempdir().expect("tempdir");
    let commands: Vec<Vec<&str>> = block_after(&doc, "did not get worse.")
        .lines()
        .map(|l| l.split('#').next().unwrap().split_whitespace().collect())
        .collect();
    assert_eq!(commands.len(), 4, "docs/ci.md's first block: run, write the baseline, two checks");
    let mut verdicts = Vec::new();
    for c in &commands {
        assert_eq!(c[0], "lahar", "{c:?}");
        let mut cmd = lahar();
        cmd.current_dir(dir.path());
        for a in &c[1..] {
            cmd.arg(if a.starts_with("examples/") { root.join(a) } else { PathBuf::from(a) });
        }
        let out = cmd.assert().success().get_output().stdout.clone();
        if c[1..3] == ["check", "--baseline"] {
            verdicts.push(String::from_utf8_lossy(&out).lines().last().unwrap_or_default().to_string());
        }
    }
    assert_eq!(commands[0][1..4], ["run", "examples/synthetic-mix.yaml", "--out"]);
    assert_eq!(commands[1][1..], ["check", "--write-baseline", "ci/baseline.json", commands[0][4]]);
    let written = std::fs::read_to_string(dir.path().join("ci/baseline.json")).expect("ci/baseline.json");
    let shown = block_after(&doc, "The baseline the commands above write");
    let version =
        |l: &str| l.trim().strip_prefix("\"lahar_version\": \"").map(|v| v.trim_end_matches("\",").to_string());
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for (w, s) in written.lines().zip(shown.lines()) {
        match (version(w), version(s)) {
            (Some(w), Some(s)) => {
                assert_eq!(w, lahar::VERSION, "the baseline's lahar_version is the binary's");
                let (release, commit) = s.split_once('+').expect("the page's lahar_version: VERSION+COMMIT");
                assert_eq!(release, env!("CARGO_PKG_VERSION"), "docs/ci.md's lahar_version");
                assert!(commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit()), "{s}");
            }
            _ => {
                got.push(w);
                want.push(s);
            }
        }
    }
    assert_eq!(written.lines().count(), shown.lines().count(), "docs/ci.md's baseline:\n{written}");
    assert_eq!(got, want, "docs/ci.md's baseline differs from the one written:\n{written}");
    // The sweep baseline's `"<cell-id>": { "completed": …, "unfinished": …, "jct_s.mean": …, ... }`.
    let m = &serde_json::from_str::<serde_json::Value>(&written).expect("JSON")["metrics"];
    let cell = format!(
        "\"<cell-id>\": {{ \"completed\": {}, \"unfinished\": {}, \"jct_s.mean\": {}, ... }}",
        m["completed"], m["unfinished"], m["jct_s.mean"]
    );
    assert!(block_after(&doc, "and for a sweep, `cells` replaces `metrics`:").contains(&cell), "docs/ci.md: {cell}");
    let passed = block_after(&doc, "The last line gives the overall verdict:").lines().next().unwrap_or_default();
    assert_eq!(verdicts.len(), 2);
    for v in &verdicts {
        assert_eq!(v, passed, "docs/ci.md's verdict line");
    }
}

/// The rows of docs/volcano.md's table of Volcano's plugins ("| plugin | status |
/// arguments |"): (plugin names of the first cell, whole row).
fn plugin_rows(doc: &str) -> Vec<(Vec<String>, String)> {
    let start = doc.find("| plugin | status | arguments |").expect("docs/volcano.md has the plugin table");
    doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let first = l.split('|').nth(1).unwrap_or_default();
            (first.split(',').map(|n| n.trim().to_string()).collect(), l.to_string())
        })
        .collect()
}

/// docs/volcano.md's plugin table and `plugins::ALL` agree: a row for every plugin
/// lahar runs (and for the ones it refuses), no row for a plugin it does not know,
/// and every argument of a plugin's spec named in full in its row.
#[test]
fn plugin_table_is_the_registry_s() {
    use lahar_policies::volcano::{conf::VOLCANO_ONLY, plugins};
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/volcano.md")).unwrap();
    let rows = plugin_rows(&doc);
    let row = |name: &str| rows.iter().find(|(names, _)| names.iter().any(|n| n == name)).map(|r| &r.1);
    let mut missing = Vec::new();
    for spec in plugins::ALL {
        let Some(r) = row(spec.name) else {
            missing.push(format!("no row for plugin `{}`", spec.name));
            continue;
        };
        for a in spec.args {
            if !r.contains(&format!("`{}`", a.key)) {
                missing.push(format!("`{}`'s row does not name `{}`", spec.name, a.key));
            }
        }
        for (key, _) in spec.retired {
            if !r.contains(key) {
                missing.push(format!("`{}`'s row does not name its retired `{key}`", spec.name));
            }
        }
    }
    for (name, _) in VOLCANO_ONLY {
        if row(name).is_none() {
            missing.push(format!("no row for `{name}`, which lahar refuses"));
        }
    }
    for (names, _) in &rows {
        for n in names {
            if plugins::spec(n).is_none() && !VOLCANO_ONLY.iter().any(|(v, _)| v == n) {
                missing.push(format!("a row for `{n}`, which is no plugin lahar knows"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/volcano.md's plugin table:\n{}", missing.join("\n"));
}

/// docs/outputs.md's table of each streamed CSV lists exactly the columns the
/// writer declares (`lahar_reports::schema`), in order, with the same units.
#[test]
fn output_tables_are_the_schema_s() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/outputs.md")).unwrap();
    let mut wrong = Vec::new();
    for (file, cols) in lahar_reports::schema::FILES {
        let start =
            doc.find(&format!("\n## {file}\n")).unwrap_or_else(|| panic!("docs/outputs.md has a section {file}"));
        let rows: Vec<(String, String)> = doc[start..]
            .lines()
            .skip_while(|l| !l.starts_with("| column |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                (cells[1].trim_matches('`').to_string(), cells[2].to_string())
            })
            .collect();
        let want: Vec<(String, String)> = cols.iter().map(|c| (c.name.to_string(), c.unit.to_string())).collect();
        if rows != want {
            wrong.push(format!("{file}: docs {rows:?}\n  schema {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "docs/outputs.md's column tables differ from the schema:\n{}", wrong.join("\n"));
}

/// docs/baselines.md's table names exactly the baselines of `baselines::ALL`.
#[test]
fn baseline_table_is_the_registry_s() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/baselines.md")).unwrap();
    let start = doc.find("| name | in one line |").expect("docs/baselines.md has the baseline table");
    let mut documented: Vec<String> = doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .flat_map(|l| {
            l.split('|').nth(1).unwrap_or_default().split(',').map(|n| n.trim().trim_matches('`').to_string())
        })
        .collect();
    documented.sort();
    let mut registered: Vec<String> = lahar_policies::baselines::names().map(str::to_string).collect();
    registered.sort();
    assert_eq!(documented, registered, "docs/baselines.md's table and baselines::ALL");
}

/// docs/volcano.md's table of Volcano's actions names exactly the actions lahar runs.
#[test]
fn action_table_is_the_registry_s() {
    use lahar_policies::volcano::conf::ActionKind;
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/volcano.md")).unwrap();
    let start = doc.find("| action | status | arguments |").expect("docs/volcano.md has the action table");
    let mut documented: Vec<String> = doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').nth(1).unwrap_or_default().trim().to_string())
        .collect();
    documented.sort();
    let mut run: Vec<String> = ActionKind::names().into_iter().map(str::to_string).collect();
    run.sort();
    assert_eq!(documented, run, "docs/volcano.md's action table and ActionKind::ALL");
    // Each row's arguments column names (in backticks) exactly the arguments the
    // action reads; `as X` stands for X's.
    let rows: std::collections::BTreeMap<String, String> = doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[3].to_string())
        })
        .collect();
    let named = |cell: &str| -> Vec<String> {
        let cell = match cell.strip_prefix("as ") {
            Some(other) => rows[other].clone(),
            None => cell.to_string(),
        };
        let mut names: Vec<String> = cell.split('`').skip(1).step_by(2).map(str::to_string).collect();
        names.sort();
        names
    };
    for a in ActionKind::ALL {
        let mut want: Vec<String> = a.args().iter().map(|(k, _)| k.to_string()).collect();
        want.sort();
        assert_eq!(named(&rows[a.as_str()]), want, "docs/volcano.md's arguments of `{}`", a.as_str());
    }
}

/// docs/traces.md's format table is `lahar_traces::FORMATS`, row by row: the name
/// (and its aliases), the file, what one job is.
#[test]
fn trace_format_table_is_the_registry_s() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/traces.md")).unwrap();
    let start = doc.find("| format (`--format`) | file | one lahar job is |").expect("docs/traces.md's format table");
    let documented: Vec<String> =
        doc[start..].lines().skip(2).take_while(|l| l.starts_with('|')).map(str::to_string).collect();
    let registered: Vec<String> = lahar_traces::FORMATS
        .iter()
        .map(|f| {
            let name = match f.aliases {
                [] => format!("`{}`", f.name),
                more => format!(
                    "`{}` (or {})",
                    f.name,
                    more.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
                ),
            };
            format!("| {name} | {} | {} |", f.file, f.one_job)
        })
        .collect();
    assert_eq!(documented, registered, "docs/traces.md's format table and lahar_traces::FORMATS");
}

/// docs/model.md's table of training beside a chat service is the means over
/// seeds of `lahar sweep examples/serving-training/sweep.yaml` (summary.csv).
#[test]
fn serving_training_table_is_the_sweep_s() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("sweep");
    let sweep = root.join("examples/serving-training/sweep.yaml");
    lahar().args(["sweep", "-q", "--out"]).arg(&out).arg(&sweep).assert().success();
    let mut rd = csv::Reader::from_path(out.join("summary.csv")).expect("summary.csv");
    let head = rd.headers().unwrap().clone();
    let col = |name: &str| head.iter().position(|c| c == name).unwrap_or_else(|| panic!("no {name}: {head:?}"));
    let mut rows = Vec::new();
    for r in rd.records() {
        let r = r.unwrap();
        let num = |name: &str| r[col(name)].parse::<f64>().unwrap_or_else(|e| panic!("{name}: {e}"));
        rows.push(format!(
            "| {} | {} | {:.1}% | {} | {:.2} | {:.1}% |",
            &r[col("conf")],
            grouped(num("serving.unserved_requests.mean")),
            100.0 * num("serving.slo_attainment.mean"),
            grouped(num("preemptions.mean")),
            num("jct_s.mean.mean") / 3600.0,
            100.0 * num("gpu_allocation_rate.mean"),
        ));
    }
    let doc = std::fs::read_to_string(root.join("docs/model.md")).expect("model.md");
    let table =
        doc.split("<!-- serving-training table -->").nth(1).expect("the table").split("<!-- end -->").next().unwrap();
    let documented: Vec<&str> = table.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| setup")).collect();
    assert_eq!(documented, rows.iter().map(String::as_str).collect::<Vec<_>>());
    // The prose's ratios are the table's.
    let mut rd = csv::Reader::from_path(out.join("summary.csv")).expect("summary.csv");
    let mut by: BTreeMap<String, (f64, f64, f64)> = BTreeMap::new();
    for r in rd.records() {
        let r = r.unwrap();
        let num = |name: &str| r[col(name)].parse::<f64>().unwrap();
        by.insert(
            r[col("conf")].to_string(),
            (num("jct_s.mean.mean"), num("serving.unserved_requests.mean"), num("gpu_allocation_rate.mean")),
        );
    }
    let pct = |a: f64, b: f64| format!("{:+.0}%", 100.0 * (a / b - 1.0)).replace('-', "−");
    let (fair, packed, reclaim, guarantee) = (by["fair-share"], by["packed"], by["reclaim"], by["guarantee"]);
    let section = &doc[doc.find("### Training beside a chat service").unwrap()..doc.find("## Scheduling").unwrap()];
    for claim in [
        format!("training\n  JCT {}", pct(packed.0, fair.0)),
        format!("allocation {:.0}% → {:.0}%", 100.0 * fair.2, 100.0 * packed.2),
        format!("unserved requests {}", pct(packed.1, fair.1)),
        format!("(JCT {})", pct(reclaim.0, fair.0)),
        format!("loses {:.1}× the requests", reclaim.1 / fair.1),
        format!("(JCT {})", pct(guarantee.0, fair.0)),
    ] {
        assert!(section.contains(&claim), "docs/model.md does not say {claim:?}");
    }
    // The README's summary of it.
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let more = format!("{:.0}% more unserved requests", 100.0 * (packed.1 / fair.1 - 1.0));
    assert!(readme.contains(&more), "README.md does not say {more:?}");
    assert!(readme.contains("mean JCT by a third") && (1.0 - packed.0 / fair.0 - 1.0 / 3.0).abs() < 0.02, "{packed:?}");
    // One run of the scenario: the demand offered, the share unserved, and the
    // five 8-GPU gangs admitted in the first hour and when they start; its
    // serving plot, and the packed one's, are the page's figures.
    let run = dir.path().join("run");
    let scenario = root.join("examples/serving-training/scenario.yaml");
    lahar().args(["run", "-q", "--plots", "--out"]).arg(&run).arg(&scenario).assert().success();
    same_figure(&run.join("plots/serving.png"), "docs/img/serving-training-fair-share.png");
    let packed = dir.path().join("packed");
    lahar()
        .args(["run", "-q", "--plots", "--set", "spec.scheduler.conf=packed.conf", "--out"])
        .arg(&packed)
        .arg(&scenario)
        .assert()
        .success();
    same_figure(&packed.join("plots/serving.png"), "docs/img/serving-training-packed.png");
    // Under reclaim every preemption is the chat's: training evicts its pods,
    // it evicts none of training's.
    let reclaim = dir.path().join("reclaim");
    lahar()
        .args(["run", "-q", "--set", "spec.scheduler.conf=reclaim.conf", "--out"])
        .arg(&reclaim)
        .arg(&scenario)
        .assert()
        .success();
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(reclaim.join("summary.json")).unwrap()).unwrap();
    let (m, v) = (&m["metrics"], &m["metrics"]["serving"]);
    let preemptions = m["preemptions"].as_u64().unwrap();
    assert!(preemptions > 0 && v["batch_preemptions"] == 0, "{v}");
    assert!(v["pods_evicted"].as_u64().unwrap() >= preemptions, "{v}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    let v = &summary["metrics"]["serving"];
    let (offered, unserved) = (v["offered_requests"].as_f64().unwrap(), v["unserved_requests"].as_f64().unwrap());
    assert!(section.contains(&format!("({:.2} M requests in the\nday)", offered / 1e6)), "{offered}");
    assert!(section.contains(&format!("about {:.1}% of those offered", 100.0 * unserved / offered)), "{unserved}");
    let mut jobs = csv::Reader::from_path(run.join("jobs.csv")).unwrap();
    let h = jobs.headers().unwrap().clone();
    let at = |n: &str| h.iter().position(|c| c == n).unwrap();
    let big: Vec<(f64, f64)> = jobs
        .records()
        .map(|r| r.unwrap())
        .filter(|r| &r[at("gpus")] == "8" && r[at("submit_s")].parse::<f64>().unwrap() < 3600.0)
        .map(|r| (r[at("submit_s")].parse().unwrap(), r[at("start_s")].parse().unwrap_or(f64::INFINITY)))
        .collect();
    assert_eq!(big.len(), 5, "{big:?}");
    let first = big.iter().map(|b| b.1).fold(f64::INFINITY, f64::min) / 3600.0;
    let last = big.iter().map(|b| b.1).fold(0.0, f64::max) / 3600.0;
    let span = format!("wait for a whole free node until {first:.1}–{last:.1} h");
    assert!(section.contains(&span), "docs/model.md does not say {span:?}");
}

/// GitHub's anchor of a Markdown heading's text: lower case, letters, digits,
/// `-` and `_` kept, spaces made `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown page: its headings' slugs (a repeated one gets
/// `-1`, `-2`...), and `<a id="...">` / `<a name="...">` targets.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(h) = line.strip_prefix('#') {
            let h = h.trim_start_matches('#');
            if h.starts_with(' ') {
                let s = slug(h);
                let n = seen.entry(s.clone()).or_insert(0);
                out.insert(if *n == 0 { s.clone() } else { format!("{s}-{n}") });
                *n += 1;
            }
        }
        for key in ["<a id=\"", "<a name=\""] {
            let mut rest = line;
            while let Some(i) = rest.find(key) {
                rest = &rest[i + key.len()..];
                if let Some(end) = rest.find('"') {
                    out.insert(rest[..end].to_string());
                }
            }
        }
    }
    out
}

/// Every relative link of the repository's Markdown pages (README.md, docs/,
/// examples/...) outside code reaches a file of the repository, and its `#anchor` a heading of that page (or of the page
/// itself), and every file of the code a code span names (`tests/it/x.rs`)
/// exists: a renamed section or a moved file fails here.
#[test]
fn the_pages_links_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Every page of the repository (not the build's, not hidden folders').
    let mut pages = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() && !name.starts_with('.') && name != "target" {
                dirs.push(p);
            } else if name.ends_with(".md") {
                pages.push(p);
            }
        }
    }
    pages.sort();
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let mut fenced = false;
        for (ln, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                continue;
            }
            // Inline code spans are not links.
            let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
            let mut rest = prose.as_str();
            while let Some(i) = rest.find("](") {
                rest = &rest[i + 2..];
                let Some(end) = rest.find(')') else { break };
                let target = &rest[..end];
                rest = &rest[end..];
                if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                    continue;
                }
                checked += 1;
                let (file, anchor) = target.split_once('#').map_or((target, None), |(f, a)| (f, Some(a)));
                let dest = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
                let at = format!("{}:{}: ({target})", page.strip_prefix(root).unwrap().display(), ln + 1);
                if !dest.exists() {
                    broken.push(format!("{at}: no file {}", dest.display()));
                    continue;
                }
                if let Some(a) = anchor
                    && dest.extension().is_some_and(|e| e == "md")
                    && !anchors(&std::fs::read_to_string(&dest).unwrap()).contains(a)
                {
                    broken.push(format!("{at}: no heading with the anchor #{a}"));
                }
            }
        }
    }
    // Files of the repository named in code spans (`tests/it/x.rs`), where a
    // page sends the reader to read one; `examples/` is left out (pages name
    // upstream projects' examples too).
    const OURS: [&str; 9] = [
        "tests/it/",
        "sim-core/",
        "policies/src/",
        "reports/",
        "workloads/src/",
        "traces/src/",
        "benches/",
        "python/tests/",
        "python/lahar/",
    ];
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (ln, line) in text.lines().enumerate() {
            for span in line.split('`').skip(1).step_by(2) {
                let Some(path) = span.split([' ', ':', ',', '(', ')']).next() else { continue };
                if !OURS.iter().any(|p| path.starts_with(p)) || path.contains('*') || path.contains("...") {
                    continue;
                }
                checked += 1;
                if !root.join(path.trim_end_matches('.')).exists() {
                    let at = format!("{}:{}", page.strip_prefix(root).unwrap().display(), ln + 1);
                    broken.push(format!("{at}: `{span}`: no file {path}"));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} links found: the scan is broken");
    assert!(broken.is_empty(), "{} broken link(s):\n{}", broken.len(), broken.join("\n"));
}
