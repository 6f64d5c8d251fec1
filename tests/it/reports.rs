//! Reports: exact metric values on a hand-computed tiny run, plots, and the
//! `compare` / `report` commands.

use super::*;
use assert_cmd::cargo::cargo_bin_cmd;

/// Two nodes of 4 GPUs, FIFO with first-fit (pinned: the default scheduler is
/// Volcano's, whose proportion plugin would hold j3 back), queues `a` (weight 2) and `b` (weight 1), three jobs:
/// j1 (a, 1×4 GPUs, 100 s) at 0 → runs 0–100 on n-0;
/// j2 (b, 2×4 GPUs, 50 s) at 10 → needs both nodes, waits until 100, runs 100–150;
/// j3 (a, 1×2 GPUs, 30 s) at 20 → fits on n-1, runs 20–50.
pub const TINY: &str = "    nodes:
      - {name: n-0, cpu: 16, memory: 64Gi, gpus: 4}
      - {name: n-1, cpu: 16, memory: 64Gi, gpus: 4}
  scheduler: {baseline: gang-fifo}
  queues:
    - {name: a, weight: 2}
    - {name: b, weight: 1}
  workload:
    - jobs:
      - {name: j1, queue: a, duration: 100s, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 4}}]}
      - {name: j2, queue: b, submitAt: 10s, duration: 50s, tasks: [{name: w, replicas: 2, resources: {nvidia.com/gpu: 4}}]}
      - {name: j3, queue: a, submitAt: 20s, duration: 30s, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 2}}]}
  output: {sampleInterval: 10s}
";

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{what}: got {a}, expected {b}");
}

fn dist(d: &Option<lahar_reports::metrics::Dist>, mean: f64, p50: f64, p90: f64, p99: f64, max: f64, what: &str) {
    let d = d.as_ref().unwrap_or_else(|| panic!("{what}: no values"));
    close(d.mean, mean, &format!("{what}.mean"));
    close(d.p50, p50, &format!("{what}.p50"));
    close(d.p90, p90, &format!("{what}.p90"));
    close(d.p99, p99, &format!("{what}.p99"));
    close(d.max, max, &format!("{what}.max"));
}

#[test]
fn tiny_run_metrics_are_exact() {
    let r = run_str(&scenario(TINY, ""));
    let s = &r.summary;
    assert_eq!((s.jobs, s.completed, s.unfinished, s.ended_otherwise), (3, 3, 0, 0));
    // JCT 100, 140, 30 (nearest rank: p50 = 2nd of 3, p90 = p99 = 3rd).
    dist(&s.jct_s, 90.0, 100.0, 140.0, 140.0, 140.0, "jct");
    // Waits 0, 90, 0.
    dist(&s.wait_s, 30.0, 0.0, 90.0, 90.0, 90.0, "wait");
    // Slowdowns 1, 140/50, 1.
    dist(&s.slowdown, (1.0 + 1.0 + 2.8) / 3.0, 1.0, 2.8, 2.8, 2.8, "slowdown");
    close(s.makespan_s.expect("makespan"), 150.0, "makespan");
    close(s.sim_time_s, 150.0, "sim time");
    close(s.gpus_total, 8.0, "gpus");
    // Held GPU·s: j1 4×100 + j3 2×30 + j2 8×50 = 860 of 8×150.
    close(s.gpu_allocation_rate, 860.0 / 1200.0, "allocation");
    close(s.gpu_effective_utilization, 860.0 / 1200.0, "effective (ideal runtime: no comm, no loss)");
    // Every gang starts whole and runs to its end: nothing held without progress.
    assert_eq!(s.gpu_time.stalled, 0.0);
    close(s.gpu_time.idle, 340.0 / 1200.0, "idle");
    // Target workload: 4-GPU pods with p = 3/4, 2-GPU pods with p = 1/4. Only in
    // [20, 50) is an idle GPU fragmented: n-1 has 2 idle, a 4-GPU pod cannot use them
    // → 1.5 expected fragmented GPUs. Idle GPU·s: 4×20 + 2×30 + 4×50 + 0×50 = 340.
    close(s.fragmentation, 1.5 * 30.0 / 340.0, "fragmentation");
    close(s.fragmented_gpus_mean, 1.5 * 30.0 / 150.0, "fragmented gpus");
    // Deserved (8 GPUs by weight among queues with jobs): a alone [0,10) 8;
    // both [10,100) a 16/3, b 8/3; b alone [100,150) 8.
    let a = &s.queues["a"];
    let b = &s.queues["b"];
    close(a.gpu_allocation_rate, 460.0 / 1200.0, "a share");
    close(b.gpu_allocation_rate, 400.0 / 1200.0, "b share");
    close(a.deserved_share, (80.0 + 16.0 / 3.0 * 90.0) / 1200.0, "a deserved");
    close(b.deserved_share, (8.0 / 3.0 * 90.0 + 400.0) / 1200.0, "b deserved");
    let (xa, xb) = (460.0 / 560.0, 400.0 / 640.0);
    close(a.share_over_deserved, xa, "a share/deserved");
    close(b.share_over_deserved, xb, "b share/deserved");
    close(s.jain_fairness, (xa + xb) * (xa + xb) / (2.0 * (xa * xa + xb * xb)), "jain");
    // ρ: active jobs N(t) = 1,2,3,2,1 on [0,10,20,50,100,150).
    // j1: N̄ = 220/100 = 2.2, isolated 100 × 4×2.2/8 = 110 → 100/110.
    // j2: N̄ = 260/140, isolated 50 × 8×N̄/8 → 140 / (50 × 260/140).
    // j3: N̄ = 3, 2×3/8 < 1 → isolated 30 → 1.
    let (r1, r2) = (100.0 / 110.0, 140.0 / (50.0 * 260.0 / 140.0));
    dist(&s.rho, (r1 + 1.0 + r2) / 3.0, 1.0, r2, r2, r2, "rho");
    assert_eq!((s.preemptions, s.gpu_hours_lost), (0, 0.0));
    dist(&s.gang_wait_s, 0.0, 0.0, 0.0, 0.0, 0.0, "gang wait");
    assert_eq!(s.gang_wait_gpu_hours, 0.0);
    assert_eq!((s.slo_misses, s.deadline_misses, s.slo_slowdown), (0, 0, 10.0));
    // Per queue.
    assert_eq!((a.weight, a.jobs, a.completed, b.jobs, b.completed), (2, 2, 2, 1, 1));
    dist(&a.jct_s, 65.0, 30.0, 100.0, 100.0, 100.0, "a jct");
    dist(&b.jct_s, 140.0, 140.0, 140.0, 140.0, 140.0, "b jct");
    dist(&b.wait_s, 90.0, 90.0, 90.0, 90.0, 90.0, "b wait");
    close(a.makespan_s.expect("a makespan"), 100.0, "a makespan");
    close(b.makespan_s.expect("b makespan"), 140.0, "b makespan");
    close(a.gpu_hours, 460.0 / 3600.0, "a gpu hours");
    close(b.gpu_hours, 400.0 / 3600.0, "b gpu hours");
    dist(&a.rho, (r1 + 1.0) / 2.0, r1, 1.0, 1.0, 1.0, "a rho");
    // An SLO of slowdown 2 is missed by j2 only.
    let tight = lahar_reports::summarize_with(
        &r.output,
        &lahar_reports::SummaryOptions { slo_slowdown: 2.0, ..Default::default() },
    );
    assert_eq!((tight.slo_misses, tight.queues["b"].slo_misses, tight.queues["a"].slo_misses), (1, 1, 0));
}

#[test]
fn tiny_run_files_carry_the_metrics() {
    let (d, p) = write_scenario(&scenario(TINY, ""));
    let out = d.path().join("out");
    cargo_bin_cmd!("lahar").args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    let ts = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let mut lines = ts.lines();
    assert_eq!(
        lines.next().unwrap(),
        "t_s,gpus_total,gpus_allocated,gpus_busy_effective,gpus_stalled,gpus_releasing,jobs_pending,jobs_running,fragmentation,gpus_fragmented"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 16, "{ts}");
    assert_eq!(rows[0], "0,8,4,4,0,0,0,1,0,0");
    assert_eq!(rows[1], "10,8,4,4,0,0,1,1,0,0");
    assert_eq!(rows[2], "20,8,6,6,0,0,1,2,0.75,1.5");
    assert_eq!(rows[10], "100,8,8,8,0,0,0,1,0,0");
    assert_eq!(rows[15], "150,8,0,0,0,0,0,0,0,0");
    // Each queue's GPUs and deserved GPUs at each sample: a row per queue.
    let qs = std::fs::read_to_string(out.join("queues.csv")).unwrap();
    let q: Vec<&str> = qs.lines().collect();
    assert_eq!(q[0], "t_s,queue,gpus_allocated,gpus_deserved");
    assert_eq!(q.len(), 1 + 2 * 16, "{qs}");
    assert_eq!(q[1..5], ["0,a,4,8", "0,b,0,0", "10,a,4,5.333", "10,b,0,2.667"]);
    assert_eq!(q[5..7], ["20,a,6,5.333", "20,b,0,2.667"]);
    assert_eq!(q[21..23], ["100,a,0,0", "100,b,8,8"]);
    assert_eq!(q[31..33], ["150,a,0,0", "150,b,0,0"]);
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let header = rd.headers().unwrap().clone();
    let recs: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    let scopes: Vec<&str> = recs.iter().map(|r| &r[col("scope")]).collect();
    assert_eq!(scopes, ["all", "queue:a", "queue:b"]);
    // Every row names its run.
    assert!(recs.iter().all(|r| &r[col("scenario")] == "t" && &r[col("seed")] == "0"));
    assert_eq!(&recs[0][col("jct_s.mean")], "90");
    assert_eq!(&recs[0][col("makespan_s")], "150");
    assert_eq!(&recs[2][col("wait_s.mean")], "90");
    assert_eq!(&recs[1][col("jain_fairness")], "", "run-only metric on a queue row");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(json["metrics"]["queues"]["b"]["jobs"], 1);
    assert_eq!(json["metrics"]["fragmentation"].as_f64().unwrap(), 45.0 / 340.0);
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&bytes[16..20]), be(&bytes[20..24]))
}

fn svg_size(text: &str) -> (u32, u32) {
    let root = &text[text.find("<svg").expect("no <svg")..];
    let root = &root[..root.find('>').unwrap()];
    let attr = |name: &str| -> u32 {
        let k = format!(" {name}=\"");
        let i = root.find(&k).unwrap_or_else(|| panic!("no {name} in {root}")) + k.len();
        root[i..i + root[i..].find('"').unwrap()].parse().unwrap()
    };
    (attr("width"), attr("height"))
}

/// The numbers of attribute `name` of an SVG element's text (`points` gives pairs).
fn attr_numbers(el: &str, name: &str) -> Vec<f64> {
    let key = format!(" {name}=\"");
    let Some(i) = el.find(&key) else { return Vec::new() };
    let rest = &el[i + key.len()..];
    let v = &rest[..rest.find('"').unwrap_or(0)];
    v.split([' ', ',']).filter(|x| !x.is_empty()).map(|x| x.parse::<f64>().unwrap_or(f64::NAN)).collect()
}

/// What a plot draws outside its axes: every data line (a polyline of more than
/// two points: legend marks have two), area (polygon) and bar (rect, but the
/// background) must lie within the grid's extent (the mesh lines), one pixel of
/// slack. Returns the offending elements.
fn drawn_outside(svg: &str) -> Vec<String> {
    let elements: Vec<&str> = svg.split('<').skip(1).map(|e| e.split('>').next().unwrap_or("")).collect();
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for el in elements
        .iter()
        .filter(|e| e.starts_with("line ") && (e.contains("opacity=\"0.1\"") || e.contains("opacity=\"0.2\"")))
    {
        for (x, y) in [("x1", "y1"), ("x2", "y2")] {
            let (x, y) = (attr_numbers(el, x)[0], attr_numbers(el, y)[0]);
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
    }
    assert!(x0 < x1 && y0 < y1, "a plot without a grid");
    let inside = |x: f64, y: f64| x >= x0 - 1.0 && x <= x1 + 1.0 && y >= y0 - 1.0 && y <= y1 + 1.0;
    let mut bad = Vec::new();
    for el in &elements {
        let pts: Vec<(f64, f64)> = if el.starts_with("polyline ") || el.starts_with("polygon ") {
            attr_numbers(el, "points").chunks(2).map(|c| (c[0], c.get(1).copied().unwrap_or(f64::NAN))).collect()
        } else if el.starts_with("rect ") && !el.contains(" x=\"0\" y=\"0\"") {
            let (x, y) = (attr_numbers(el, "x")[0], attr_numbers(el, "y")[0]);
            let (w, h) = (attr_numbers(el, "width")[0], attr_numbers(el, "height")[0]);
            vec![(x, y), (x + w, y + h)]
        } else {
            continue;
        };
        if el.starts_with("polyline ") && pts.len() <= 2 {
            continue;
        }
        if pts.iter().any(|&(x, y)| !inside(x, y)) {
            bad.push(el.chars().take(160).collect());
        }
    }
    bad
}

/// The check of the drawn data can fail: a line with a point above the grid.
#[test]
fn a_line_outside_its_axes_is_caught() {
    let grid = "<line opacity=\"0.1\" x1=\"75\" y1=\"404\" x2=\"75\" y2=\"42\"/><line opacity=\"0.1\" x1=\"75\" y1=\"404\" x2=\"880\" y2=\"404\"/>";
    let ok = format!("<svg>{grid}<polyline points=\"80,400 90,300 100,42\"/></svg>");
    assert!(drawn_outside(&ok).is_empty());
    let spike = format!("<svg>{grid}<polyline points=\"80,400 90,300 100,20\"/></svg>");
    assert_eq!(drawn_outside(&spike).len(), 1);
}

/// Checks every plot of `kinds` exists in `dir` as SVG and PNG of its declared
/// size, with nothing drawn outside its axes.
fn check_plots(dir: &Path, kinds: &[lahar_reports::plots::PlotKind]) {
    check_styled_plots(dir, kinds, &lahar_reports::plots::PlotStyle::default());
}

/// The plots of the run in `dir` (the node timeline when it has pods.csv, the
/// faults timeline when it had faults).
fn plots_of(dir: &Path) -> Vec<lahar_reports::plots::PlotKind> {
    lahar_reports::plots::PlotKind::for_run(&lahar_reports::load::load_run(dir).unwrap())
}

/// [`check_plots`] in `style`: each plot of the style's size.
fn check_styled_plots(dir: &Path, kinds: &[lahar_reports::plots::PlotKind], style: &lahar_reports::plots::PlotStyle) {
    for k in kinds {
        let png = std::fs::read(dir.join(format!("{}.png", k.name()))).unwrap_or_else(|e| panic!("{}: {e}", k.name()));
        assert!(png.len() > 5000, "{}.png is nearly empty", k.name());
        assert_eq!(png_size(&png), style.size_of(*k), "{}.png", k.name());
        let svg = std::fs::read_to_string(dir.join(format!("{}.svg", k.name()))).unwrap();
        assert!(svg.len() > 2000 && svg.contains("<text"), "{}.svg has no text", k.name());
        assert_eq!(svg_size(&svg), style.size_of(*k), "{}.svg", k.name());
        let outside = drawn_outside(&svg);
        assert!(outside.is_empty(), "{}.svg draws outside its axes: {outside:?}", k.name());
    }
}

/// A run with services draws the serving plot (GPUs by class, demand against
/// capacity) in both styles, and its report shows it.
#[test]
fn a_run_with_services_has_the_serving_plot() {
    use lahar_reports::plots::{PlotKind, PlotStyle};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("chat");
    cargo_bin_cmd!("lahar")
        .args(["run", "-q", "--plots", "--out"])
        .arg(&out)
        .arg(root.join("examples/serving-scenario.yaml"))
        .assert()
        .success();
    let kinds = plots_of(&out);
    assert!(kinds.contains(&PlotKind::Serving) && !kinds.contains(&PlotKind::Faults), "{kinds:?}");
    check_plots(&out.join("plots"), &kinds);
    let run = lahar_reports::load::load_run(&out).unwrap();
    let demand = run.demand.as_ref().expect("services.csv read back");
    assert_eq!(demand.t.len(), run.ts.t.len(), "a demand sample per timeseries sample");
    // The diurnal demand's first hour is 6 requests/s.
    assert_eq!(demand.demand[0], 6.0);
    let svg = std::fs::read_to_string(out.join("plots/serving.svg")).unwrap();
    assert!(svg.contains("GPUs held by services") && svg.contains("capacity of ready replicas"), "legend");
    cargo_bin_cmd!("lahar")
        .args(["run", "-q", "--plots", "--plot-style", "paper", "--out"])
        .arg(d.path().join("paper"))
        .arg(root.join("examples/serving-scenario.yaml"))
        .assert()
        .success();
    check_styled_plots(&d.path().join("paper/plots"), &[PlotKind::Serving], &PlotStyle::PAPER);
    cargo_bin_cmd!("lahar").arg("report").arg(&out).assert().success();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("id=\"run-1-serving\""), "the report shows the serving plot");
    // And a table of the services, with what they took from other jobs (none here).
    assert!(html.contains("<h3>Services</h3>") && html.contains("<td>chat</td><td>Deployment</td>"), "services table");
    assert!(
        html.contains(
            "The services held 98.225 GPU-hours. To make room for their pods, 0 pods of other jobs were preempted or \
             reclaimed (0 job preemptions), and those jobs lost 0 GPU-hours of work; 0 pods of the services were \
             preempted or reclaimed for other jobs."
        ),
        "the serving sentence"
    );
}

#[test]
fn run_plots_compare_and_report() {
    use lahar_reports::plots::PlotKind;
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("volcano"), d.path().join("strict"));
    cargo_bin_cmd!("lahar").args(["run", "-q", "--plots", "--out"]).arg(&a).assert().success().stderr("");
    let single = plots_of(&a);
    assert_eq!(single.len(), PlotKind::SINGLE.len() - 2, "every plot but the faults and serving ones: {single:?}");
    assert!(single.contains(&PlotKind::NodeTimeline));
    check_plots(&a.join("plots"), &single);

    // A second run of the default scenario (Volcano's default conf) under strict
    // FIFO, to compare against.
    let text = lahar::scenario::DEFAULT_SCENARIO
        .replace("  workload:\n", "  scheduler: {baseline: gang-fifo-strict}\n  workload:\n");
    assert_ne!(text, lahar::scenario::DEFAULT_SCENARIO);
    let sp = d.path().join("strict.yaml");
    std::fs::write(&sp, text).unwrap();
    cargo_bin_cmd!("lahar").args(["run", "-q", "--out"]).arg(&b).arg(&sp).assert().success();

    let cmp = d.path().join("cmp");
    let out = cargo_bin_cmd!("lahar")
        .args(["compare", "--out"])
        .arg(&cmp)
        .arg(&a)
        .arg(&b)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("JCT mean (h)") && out.contains("Δ strict vs volcano"), "{out}");
    let csv = std::fs::read_to_string(cmp.join("compare.csv")).unwrap();
    assert!(csv.starts_with("metric,better,run,value,rel_diff\n"), "{csv}");
    // Each Δ says whether it is better or worse: mean JCT rose by 72% under strict FIFO.
    let jct = csv.lines().find(|l| l.starts_with("jct_s.mean,lower,strict,")).expect("jct_s.mean row");
    assert!(jct.ends_with(",0.7199702116609942"), "{jct}");
    assert!(csv.contains("\ngpu_allocation_rate,higher,volcano,0."), "ratios are fractions in files: {csv}");
    // The first run has no difference to itself.
    assert!(csv.lines().any(|l| l.starts_with("jct_s.mean,lower,volcano,") && l.ends_with(",")), "{csv}");
    assert!(out.contains("+72.0% worse"), "{out}");
    assert_eq!(csv.lines().count(), 1 + 2 * lahar_reports::compare::HEADLINE.len());
    assert!(
        std::fs::read_to_string(cmp.join("compare.md")).unwrap().starts_with("| metric | better | volcano | strict |")
    );
    check_plots(&cmp.join("plots"), &PlotKind::OVERLAY);
    let md =
        cargo_bin_cmd!("lahar").args(["compare", "--format", "markdown", "--out"]).arg(&cmp).arg(&a).arg(&b).output();
    assert!(String::from_utf8(md.unwrap().stdout).unwrap().contains("|---|"));

    // One run: report.html in its directory, every plot inline, nothing external.
    cargo_bin_cmd!("lahar").arg("report").arg(&b).assert().success();
    check_plots(&b.join("plots"), &single);
    let html = std::fs::read_to_string(b.join("report.html")).unwrap();
    assert_eq!(html.matches("<svg").count(), single.len());
    assert!(html.contains("default") && html.contains("gang-fifo-strict"));
    for external in ["src=\"http", "href=\"http", "<script src", "<link"] {
        assert!(!html.contains(external), "report.html refers to an external resource: {external}");
    }
    // Several runs: comparison and overlays too.
    let rp = d.path().join("r/report.html");
    cargo_bin_cmd!("lahar").args(["report", "--out"]).arg(&rp).arg(&a).arg(&b).assert().success();
    let html = std::fs::read_to_string(&rp).unwrap();
    let n = 2 * single.len() + PlotKind::OVERLAY.len();
    assert_eq!(html.matches("<svg").count(), n);
    // docs/metrics.md's browser check counts them so.
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md")).unwrap();
    let sum = format!("# {n} = 2 × {} + {} for several runs", single.len(), PlotKind::OVERLAY.len());
    assert!(doc.contains(&sum) && doc.contains(&format!("holds all {n} plots")), "docs/metrics.md should say {sum:?}");
    assert!(html.contains("id=\"comparison\""));
    // Each plot's anchor names its run: no id twice.
    assert!(html.contains("id=\"run-2-jct_cdf\"") && html.contains("id=\"run-1-node_timeline\""));
    let ids: Vec<&str> = html.split(" id=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect();
    let unique: std::collections::BTreeSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
}

/// The paper style through the binary: the size and font asked for, no title,
/// nothing outside the axes; a run with faults gets its faults timeline; plot
/// options without plots, and sizes or fonts out of range, exit 2.
#[test]
fn plots_for_a_paper() {
    use lahar_reports::plots::{PlotKind, PlotStyle};
    let d = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = d.path().join("faults");
    cargo_bin_cmd!("lahar")
        .args(["run", "-q", "--plots", "--plot-style", "paper", "--plot-size", "700x480", "--plot-font-size", "18"])
        .arg(root.join("examples/faults/failures.yaml"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let kinds = plots_of(&out);
    let all_but_serving: Vec<PlotKind> = PlotKind::SINGLE.into_iter().filter(|k| *k != PlotKind::Serving).collect();
    assert_eq!(kinds, all_but_serving, "a run with faults has every plot but the serving one");
    let style = PlotStyle { paper: true, size: Some((700, 480)), font: Some(18) };
    check_styled_plots(&out.join("plots"), &kinds, &style);
    for k in &kinds {
        let svg = std::fs::read_to_string(out.join("plots").join(format!("{}.svg", k.name()))).unwrap();
        assert!(!svg.contains(k.title()), "{}: a paper's figure has no title", k.name());
        // plotters writes a font of N px as N / 1.24 in SVG units: 18 px is 14.516.
        assert!(svg.contains("font-size=\"14.516"), "{}: tick labels of 18 px", k.name());
    }
    // The faults timeline's upper line is timeseries.csv's gpus_unavailable: at
    // most the drain's 10 nodes of 8 GPUs.
    let run = lahar_reports::load::load_run(&out).unwrap();
    let unavailable = run.ts.unavailable.as_ref().expect("gpus_unavailable read");
    assert_eq!(unavailable.iter().copied().fold(0.0, f64::max), 80.0);
    let faults = std::fs::read_to_string(out.join("plots/faults.svg")).unwrap();
    for row in ["node h100-50", "switch leaf-3", "drain h100-10 (+9)"] {
        assert!(faults.contains(row), "the faults timeline names {row}");
    }
    // The paper style's own sizes.
    let own = d.path().join("own");
    cargo_bin_cmd!("lahar")
        .args(["run", "-q", "--plots", "--plot-style", "paper", "--out"])
        .arg(&own)
        .assert()
        .success();
    check_styled_plots(&own.join("plots"), &plots_of(&own), &PlotStyle::PAPER);
    assert_eq!(PlotStyle::PAPER.size_of(PlotKind::JctCdf), (1050, 700));

    for (args, msg) in [
        (vec!["run", "--plot-style", "paper"], "add --plots"),
        (vec!["run", "--plots", "--plot-size", "100x100"], "200 to 8000"),
        (vec!["run", "--plots", "--plot-size", "700"], "WIDTHxHEIGHT"),
        (vec!["run", "--plots", "--plot-font-size", "300"], "6 to 200"),
        (vec!["report", "--plot-size", "widex480"], "not a whole number"),
    ] {
        cargo_bin_cmd!("lahar")
            .args(&args)
            .arg("--out")
            .arg(d.path().join("never"))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(msg));
        assert!(!d.path().join("never").exists(), "{args:?}: nothing written");
    }
}

#[test]
fn bad_run_dirs_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("nope");
    cargo_bin_cmd!("lahar")
        .arg("compare")
        .arg(&missing)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a run directory"));
    cargo_bin_cmd!("lahar")
        .arg("report")
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("summary.json: missing"));
    std::fs::write(d.path().join("summary.json"), "{\"metrics\": {}}").unwrap();
    std::fs::write(d.path().join("jobs.csv"), "job,queue\nx,y\n").unwrap();
    cargo_bin_cmd!("lahar")
        .arg("report")
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("jobs.csv: no column `state`"));
    std::fs::write(d.path().join("summary.json"), "not json").unwrap();
    cargo_bin_cmd!("lahar")
        .arg("report")
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("summary.json"));
    cargo_bin_cmd!("lahar").arg("compare").assert().code(2);
}

/// One gang that can never start (3 × 4 GPUs on two 4-GPU nodes).
const STUCK: &str = "    nodes:
      - {name: n-0, cpu: 16, memory: 64Gi, gpus: 4}
      - {name: n-1, cpu: 16, memory: 64Gi, gpus: 4}
  scheduler: {baseline: gang-fifo}
  workload:
    - jobs:
      - {name: big, duration: 100s, submitAt: 10s, tasks: [{name: w, replicas: 3, resources: {nvidia.com/gpu: 4}}]}
";

/// Metrics without samples are `n/a` on screen, `null` in summary.json and empty in
/// the CSVs, never 0; a job that never started has no wait when the run ended with
/// nothing left to happen, and the censored wait when a horizon cut it.
#[test]
fn metrics_without_samples_are_not_zero() {
    let (d, p) = write_scenario(&scenario(STUCK, ""));
    let out = d.path().join("out");
    let run = cargo_bin_cmd!("lahar").args(["run", "--out"]).arg(&out).arg(&p).output().unwrap();
    assert!(run.status.success());
    let screen = String::from_utf8_lossy(&run.stdout);
    let line =
        |label: &str| screen.lines().find(|l| l.contains(label)).unwrap_or_else(|| panic!("no {label}:\n{screen}"));
    assert!(line("JCT mean / p50 / p99").contains("n/a / n/a / n/a"), "{screen}");
    assert!(line("queueing delay").contains("n/a / n/a"), "{screen}");
    assert!(line("slowdown mean").contains("n/a / n/a"), "{screen}");
    assert!(line("makespan").contains("n/a"), "{screen}");
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    for m in ["jct_s", "wait_s", "slowdown", "makespan_s", "rho", "gang_wait_s"] {
        assert!(json["metrics"][m].is_null(), "{m}: {}", json["metrics"][m]);
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let header = rd.headers().unwrap().clone();
    let all = rd.records().next().unwrap().unwrap();
    for c in ["jct_s.mean", "jct_s.p99", "wait_s.p50", "slowdown.mean", "makespan_s", "rho.max", "gang_wait_s.mean"] {
        let i = header.iter().position(|h| h == c).unwrap_or_else(|| panic!("no column {c}"));
        assert_eq!(&all[i], "", "{c}");
    }
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    let mut rd = csv::Reader::from_reader(jobs.as_bytes());
    let wait = rd.headers().unwrap().iter().position(|h| h == "wait_s").unwrap();
    assert_eq!(&rd.records().next().unwrap().unwrap()[wait], "", "never started, run drained:\n{jobs}");

    // Cut by a horizon (a later arrival is still due), the same job has waited
    // 3590 s so far (censored).
    let later = "      - {name: late, submitAt: 2h, duration: 1s, tasks: [{name: w, replicas: 1, resources: {nvidia.com/gpu: 1}}]}\n";
    let (d, p) = write_scenario(&scenario(&format!("{STUCK}{later}"), "  horizon: 1h\n"));
    let out = d.path().join("out");
    cargo_bin_cmd!("lahar").args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    let jobs = std::fs::read_to_string(out.join("jobs.csv")).unwrap();
    let mut rd = csv::Reader::from_reader(jobs.as_bytes());
    let wait = rd.headers().unwrap().iter().position(|h| h == "wait_s").unwrap();
    assert_eq!(&rd.records().next().unwrap().unwrap()[wait], "3590", "{jobs}");
}

/// The y coordinate of the SVG text element whose content is `content`.
fn svg_text_y(svg: &str, content: &str) -> Option<f64> {
    svg.split("<text").skip(1).find_map(|chunk| {
        let (attrs, rest) = chunk.split_once('>')?;
        let text = rest.split("</text>").next()?.trim();
        (text == content).then(|| {
            let y = attrs.split("y=\"").nth(1)?.split('"').next()?;
            y.parse().ok()
        })?
    })
}

/// Plots fit to print: legends sit under the chart (below the x axis's title, so they
/// never cover data), the tier axis uses the fabric's tier names, and overlaid runs
/// are named by scenario (and scheduler when the scenario is the same).
#[test]
fn plot_legends_tiers_and_run_names() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/synthetic-mix.yaml");
    lahar().arg("run").arg(&base).arg("--out").arg(&a).args(["-q", "--plots"]).assert().success();
    lahar()
        .arg("run")
        .arg(&base)
        .arg("--out")
        .arg(&b)
        .args(["-q", "--set", "spec.scheduler={baseline: sjf}"])
        .assert()
        .success();
    let svg = std::fs::read_to_string(a.join("plots/gpu_utilization.svg")).unwrap();
    let axis = svg_text_y(&svg, "simulated time (days)").expect("x axis title");
    for entry in ["allocated", "effective"] {
        let y = svg_text_y(&svg, entry).unwrap_or_else(|| panic!("legend {entry}"));
        assert!(y > axis, "legend `{entry}` at y {y} is not under the chart (axis title at {axis})");
    }
    let placement = std::fs::read_to_string(a.join("plots/placement.svg")).unwrap();
    for tier in ["node", "leaf", "spine", "cluster"] {
        assert!(svg_text_y(&placement, tier).is_some(), "tier name {tier}");
    }
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(a.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["tiers"], serde_json::json!(["node", "leaf", "spine", "cluster"]));
    let cmp = dir.path().join("cmp");
    lahar().arg("compare").arg(&a).arg(&b).arg("--out").arg(&cmp).assert().success();
    let cdf = std::fs::read_to_string(cmp.join("plots/jct_cdf.svg")).unwrap();
    assert!(svg_text_y(&cdf, "synthetic-mix (volcano) (400 jobs)").is_some(), "run label");
    assert!(svg_text_y(&cdf, "synthetic-mix (sjf) (400 jobs)").is_some(), "run label");
}

/// A run keeps what it simulated (the scenario text as validated, overrides applied,
/// and the Volcano conf), and report.html embeds it with the cluster, tiers and queues.
#[test]
fn report_is_a_record_of_the_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/synthetic-mix.yaml");
    lahar().arg("run").arg(&base).arg("--out").arg(&out).args(["-q", "--seed", "9"]).assert().success();
    let kept = std::fs::read_to_string(out.join("input-scenario.yaml")).unwrap();
    assert!(kept.contains("\"seed\": 9"), "the override is in the record");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    use sha2::Digest;
    let sha: String = sha2::Sha256::digest(kept.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(s["scenario_sha256"], sha.as_str(), "the record is the text that ran");
    let conf = std::fs::read_to_string(out.join("input-scheduler.conf")).unwrap();
    assert_eq!(conf, lahar_policies::volcano::conf::DEFAULT_CONF);
    lahar().arg("report").arg(&out).assert().success();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for needle in [
        "What was simulated",
        "4 nodes, 32 GPUs",
        "node &lt; leaf &lt; spine &lt; cluster",
        "prod (weight 1), research (weight 3)",
        "input-scenario.yaml",
        "actions: &quot;enqueue, allocate, backfill&quot;",
    ] {
        assert!(html.contains(needle), "report lacks {needle:?}");
    }
}

/// The summary a written run accumulates as it goes equals the one computed from
/// the finished run's records (both go through `RunMetrics`, fed in different
/// orders within an instant): on the tiny run, on the default scenario (Volcano,
/// restarts and evictions), and on runs cut short by a horizon and a session limit
/// (unfinished jobs, jobs never submitted).
#[test]
fn a_written_run_accumulates_the_summary_of_its_records() {
    let cases: Vec<(&str, String, Option<u64>, Option<u64>)> = vec![
        ("tiny", scenario(TINY, ""), None, None),
        ("tiny, horizon 60 s", scenario(TINY, ""), Some(60_000_000), None),
        ("default", lahar::scenario::DEFAULT_SCENARIO.to_string(), None, None),
        ("default, 400 sessions", lahar::scenario::DEFAULT_SCENARIO.to_string(), None, Some(400)),
        ("default, horizon 1 day", lahar::scenario::DEFAULT_SCENARIO.to_string(), Some(86_400_000_000), None),
    ];
    for (what, text, horizon, sessions) in cases {
        let load = || {
            let mut s = lahar::scenario::load_str(&text, "t.yaml", Path::new("")).unwrap_or_else(|e| panic!("{e}"));
            if let Some(h) = horizon {
                s.engine.horizon = Some(lahar_core::util::time::SimTime(h));
            }
            s
        };
        let dir = tempfile::tempdir().unwrap();
        let written = lahar::RunOptions { out_dir: Some(dir.path().to_path_buf()), sessions, ..Default::default() };
        let streamed = lahar::run(load(), &written).expect("run").summary;
        let held = lahar::run(load(), &lahar::RunOptions { no_write: true, sessions, ..Default::default() })
            .expect("run")
            .summary;
        assert!(streamed.jobs > 0, "{what}");
        assert_eq!(streamed, held, "{what}");
        // And the file says the same.
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
        assert_eq!(json["metrics"]["jobs"].as_u64(), Some(streamed.jobs as u64), "{what}");
        assert_eq!(json["metrics"]["fragmentation"].as_f64(), Some(streamed.fragmentation), "{what}");
    }
}

/// jobs.csv and pods.csv list jobs in the order they ended, then the unfinished
/// ones by submission; a job's pod rows by task, replica and start.
#[test]
fn rows_are_written_as_jobs_end() {
    let (d, p) = write_scenario(&scenario(TINY, ""));
    let out = d.path().join("out");
    cargo_bin_cmd!("lahar").args(["run", "-q", "--out"]).arg(&out).arg(&p).assert().success();
    let first_col = |f: &str| -> Vec<String> {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        text.lines().skip(1).map(|l| l.split(',').take(2).collect::<Vec<_>>().join(",")).collect()
    };
    // j3 ends at 50 s, j1 at 100 s, j2 at 150 s.
    assert_eq!(first_col("jobs.csv"), ["j3,a", "j1,a", "j2,b"]);
    assert_eq!(
        first_col("pods.csv"),
        ["j3,default/j3-w-0", "j1,default/j1-w-0", "j2,default/j2-w-0", "j2,default/j2-w-1"]
    );
    // Cut at 120 s: j2 is unfinished and comes last, its pods' intervals end with the run.
    let out2 = d.path().join("out2");
    cargo_bin_cmd!("lahar")
        .args(["run", "-q", "--set", "spec.horizon=120s", "--out"])
        .arg(&out2)
        .arg(&p)
        .assert()
        .success();
    let jobs = std::fs::read_to_string(out2.join("jobs.csv")).unwrap();
    let last = jobs.lines().last().unwrap();
    assert!(last.starts_with("j2,b,0,8,10,100,,Running,,90,50,"), "{jobs}");
    let pods = std::fs::read_to_string(out2.join("pods.csv")).unwrap();
    assert!(pods.lines().last().unwrap().ends_with(",100,120,running"), "{pods}");
}

/// A cluster without GPUs (an HPC trace) gets CPU headlines: one 8-core node, a
/// 4-core job for 100 s, then an 8-core job that waits for it and runs 50 s:
/// 4×100 + 8×50 = 800 core·s of 8×150.
#[test]
fn a_cpu_cluster_reports_its_cpus() {
    let nodes = "    nodes:\n      - {name: c0, cpu: 8, memory: 64Gi}";
    let jobs = "  workload:\n    - jobs:\n        - {name: a, duration: 100s, tasks: [{name: w, replicas: 1, resources: {cpu: 4}}]}\n        - {name: b, duration: 50s, tasks: [{name: w, replicas: 1, resources: {cpu: 8}}]}\n";
    let (d, p) = write_scenario(&scenario(nodes, jobs));
    let out = d.path().join("out");
    let o = lahar().arg("run").arg(&p).arg("--out").arg(&out).assert().success().get_output().clone();
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("CPUs                            8 ") && table.contains("CPU allocation rate             66.7%"),
        "{table}"
    );
    assert!(!table.contains("GPU allocation rate"), "{table}");
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    close(s["metrics"]["cpu_allocation_rate"].as_f64().unwrap(), 800.0 / 1200.0, "cpu allocation");
    assert_eq!(s["metrics"]["cpus_total"].as_f64(), Some(8.0));
}
