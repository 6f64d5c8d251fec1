//! Numbers the docs and the README quote in their prose, beside the tables and
//! figures `published.rs` checks (issue 42: what people read is what the binary
//! prints): each test runs the command the page shows and looks for the sentence
//! with the numbers it gives now.

use super::*;
use std::collections::BTreeMap;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The page's text with its lines joined (a sentence may wrap anywhere).
fn prose(page: &str) -> String {
    let text = std::fs::read_to_string(root().join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn assert_says(page: &str, quoted: &str) {
    assert!(prose(page).contains(quoted), "{page} should say: {quoted}");
}

/// jobs.csv of a run as (job, start_s, end_s) and pods.csv as (job, start_s,
/// end_s, reason_end).
type Rows = Vec<[String; 4]>;

fn run_rows(out: &Path) -> (Rows, Rows) {
    let read = |f: &str, cols: [&str; 4]| -> Rows {
        let mut rd = csv::Reader::from_path(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        let h = rd.headers().unwrap().clone();
        let at = |c: &str| if c.is_empty() { None } else { Some(h.iter().position(|x| x == c).expect(c)) };
        let idx = cols.map(at);
        rd.records().map(|r| r.unwrap()).map(|r| idx.map(|i| i.map_or(String::new(), |i| r[i].to_string()))).collect()
    };
    (read("jobs.csv", ["job", "start_s", "end_s", ""]), read("pods.csv", ["job", "start_s", "end_s", "reason_end"]))
}

fn metrics(out: &Path) -> serde_json::Value {
    let s = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str::<serde_json::Value>(&s).expect("json")["metrics"].clone()
}

/// docs/baselines.md's walk through `examples/baseline-tiresias.yaml`: the long
/// job reaches 3,200 GPU·s (4 GPUs × 800 s) and is preempted at 800 s; the two
/// short jobs (waiting since 10 s and 20 s) run from 830 s, one after the other;
/// it resumes at 1,030 s with its 800 s of work kept and completes at 2,230 s.
#[test]
fn the_tiresias_example_runs_as_the_page_says() {
    let d = run_example("examples/baseline-tiresias.yaml", &[]);
    let (jobs, pods) = run_rows(d.path());
    let job = |n: &str| jobs.iter().find(|r| r[0] == n).unwrap_or_else(|| panic!("{n}"))[1..3].to_vec();
    assert_eq!(job("short-0"), ["830", "930"]);
    assert_eq!(job("short-1"), ["930", "1030"]);
    assert_eq!(job("long"), ["0", "2230"]);
    let long: Vec<[&str; 3]> =
        pods.iter().filter(|r| r[0] == "long").map(|r| [r[1].as_str(), r[2].as_str(), r[3].as_str()]).collect();
    assert_eq!(long, [["0", "800", "preempted"], ["1030", "2230", "completed"]].repeat(2));
    assert_says(
        "docs/baselines.md",
        "they run one after the other from t=830 s (after the 30 s grace period), and it resumes from its checkpoint at t=1,030 s and completes at t=2,230 s (800 s of work kept, 1,200 s to go)",
    );
}

/// docs/baselines.md: with suspension (the default), `tiresias` completes every
/// job of the embedded default scenario, with the preemptions it names and
/// nothing lost.
#[test]
fn tiresias_completes_the_default_scenario_as_the_page_says() {
    let d = tempfile::tempdir().unwrap();
    lahar()
        .args(["run", "-q", "--set", "spec.scheduler={baseline: tiresias}", "--out"])
        .arg(d.path())
        .assert()
        .success();
    let m = metrics(d.path());
    assert_eq!((m["jobs"].as_u64(), m["completed"].as_u64()), (Some(3000), Some(3000)), "{m}");
    assert_eq!(m["gpu_hours_lost"].as_f64(), Some(0.0), "{m}");
    let quoted = format!(
        "completes every job ({} preemptions, nothing lost)",
        super::published::grouped(m["preemptions"].as_u64().unwrap() as f64)
    );
    assert_says("docs/baselines.md", &quoted);
    // docs/PERFORMANCE.md's counts for the claims (rule 4): pipeline rows,
    // preemptions and sessions of the same run.
    let mut rd = csv::Reader::from_path(d.path().join("decisions.csv")).expect("decisions.csv");
    let (mut pipelines, mut sessions) = (0u64, 0u64);
    for r in rd.records() {
        let r = r.expect("row");
        pipelines += u64::from(&r[3] == "pipeline");
        sessions = sessions.max(r[0].parse().expect("session"));
    }
    let g = |n: u64| super::published::grouped(n as f64);
    let quoted = format!(
        "On the default scenario the pipelines go from 816,776 rows to {}; the preemptions from 16,878 to {} and the sessions from 72,132 to {}",
        g(pipelines),
        g(m["preemptions"].as_u64().unwrap()),
        g(sessions)
    );
    assert_says("docs/PERFORMANCE.md", &quoted);
}

/// docs/baselines.md's paragraph on what `tiresias`'s starvation guard costs and
/// buys: preemptions, sessions and mean JCT on the embedded default scenario with
/// `promoteKnob: 0` and at the default 8, and KTH's longest JCT with and without.
#[test]
fn tiresias_guard_costs_and_buys_as_the_page_says() {
    // summary.json's metrics of `scenario` (the embedded one when `None`) under
    // `scheduler`.
    let metrics_of = |scenario: Option<&str>, scheduler: &str| {
        let d = tempfile::tempdir().unwrap();
        let mut cmd = lahar();
        cmd.args(["run", "-q", "--set"]).arg(format!("spec.scheduler={scheduler}")).arg("--out").arg(d.path());
        if let Some(s) = scenario {
            cmd.arg(root().join(s));
        }
        cmd.assert().success();
        let mut m = metrics(d.path());
        let rows = std::fs::read_to_string(d.path().join("decisions.csv")).expect("decisions.csv").lines().count() - 1;
        m["decision_rows"] = rows.into();
        m
    };
    let run = |scenario: Option<&str>, knob: &str| {
        metrics_of(scenario, &format!("{{baseline: tiresias, promoteKnob: {knob}}}"))
    };
    let fifo = |scenario: Option<&str>| metrics_of(scenario, "{baseline: fifo}");
    let g = |v: &serde_json::Value| super::published::grouped(v.as_f64().expect("a number"));
    // The page says `template` with each `{}` the next value, grouped.
    let says = |page: &str, template: &str, values: &[&serde_json::Value]| {
        let mut parts = template.split("{}");
        let mut text = parts.next().unwrap_or_default().to_string();
        for (part, v) in parts.zip(values) {
            text += &g(v);
            text += part;
        }
        assert_says(page, &text);
    };
    let (off, on) = (run(None, "0"), run(None, "8"));
    says(
        "docs/baselines.md",
        "without the guard (`promoteKnob: 0`) `tiresias` makes {} preemptions in {} sessions, against {} in {} at the default 8, and its mean JCT is {} s against {} s",
        &[
            &off["preemptions"],
            &off["sessions"],
            &on["preemptions"],
            &on["sessions"],
            &off["jct_s"]["mean"],
            &on["jct_s"]["mean"],
        ],
    );
    // The same runs beside the authors' simulator's (whose numbers the page
    // gives with the commands that made them).
    says(
        "docs/baselines.md",
        "without the guard (`dlas-gpu`; lahar {}) and 55,073 with it (`dlas-gpu-8`, 9,771 promotions; lahar {})",
        &[&off["preemptions"], &on["preemptions"]],
    );
    says(
        "docs/baselines.md",
        "(lahar, placing pods on nodes, with grace periods and the communication model: {} s and {} s)",
        &[&off["jct_s"]["mean"], &on["jct_s"]["mean"]],
    );
    // docs/PERFORMANCE.md's counts beside its timings: the same runs without the
    // guard, failures.yaml's, and fifo's sessions on both.
    let faults = "examples/faults/failures.yaml";
    let (f_off, f_fifo, d_fifo) = (run(Some(faults), "0"), fifo(Some(faults)), fifo(None));
    says(
        "docs/PERFORMANCE.md",
        "Without the guard, the default scenario's run makes {} preemptions in {} sessions (fifo: {} sessions), failures.yaml's {} in {} (fifo: {}).",
        &[
            &off["preemptions"],
            &off["sessions"],
            &d_fifo["sessions"],
            &f_off["preemptions"],
            &f_off["sessions"],
            &f_fifo["sessions"],
        ],
    );
    // The guard's run per unit of its work, beside fifo's.
    says(
        "docs/PERFORMANCE.md",
        "{} sessions against fifo's {} and {} decision rows against {}",
        &[&on["sessions"], &d_fifo["sessions"], &on["decision_rows"], &d_fifo["decision_rows"]],
    );
    let kth = "examples/traces/swf-kth.yaml";
    let (off, on) = (run(Some(kth), "0"), run(Some(kth), "8"));
    let days = off["jct_s"]["max"].as_f64().unwrap() / 86_400.0;
    assert_says(
        "docs/baselines.md",
        &format!(
            "the longest JCT is {} s with the guard and {} s ({days:.1} days) without it",
            g(&on["jct_s"]["max"]),
            g(&off["jct_s"]["max"])
        ),
    );
}

/// docs/baselines.md: the bundled RICC example has jobs no node can hold (their
/// memory), as many as the run's warning counts.
#[test]
fn the_ricc_example_warns_of_the_jobs_the_page_counts() {
    let d = tempfile::tempdir().unwrap();
    let o = lahar()
        .args(["run", "-q", "--set", "spec.scheduler={baseline: easy-backfill}", "--out"])
        .arg(d.path())
        .arg(root().join("examples/traces/swf-ricc.yaml"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let n = err
        .split("it stays pending (")
        .nth(1)
        .and_then(|s| s.split(" in all)").next())
        .unwrap_or_else(|| panic!("no count of unplaceable jobs in:\n{err}"));
    assert!(err.contains("requests pods that no node can hold"), "{err}");
    assert_says("docs/baselines.md", &format!("{n} of its jobs fit no node (their memory)"));
}

/// The README's caption of the six placement policies on seed 42: where random
/// falls half a point behind the best of the others, and where the other five
/// part (their allocations half a point apart), read off each run's
/// fragmentation.csv.
#[test]
fn the_readme_fgd_caption_is_the_runs() {
    let d = tempfile::tempdir().unwrap();
    let policies = ["random", "dot-product", "gpu-clustering", "gpu-packing", "best-fit", "fgd"];
    let curves: Vec<Vec<(u32, f64)>> = policies
        .iter()
        .map(|p| {
            let out = d.path().join(p);
            lahar()
                .args(["run", "-q", "--set", &format!("spec.scheduler={{baseline: {p}}}"), "--out"])
                .arg(&out)
                .arg(root().join("examples/fragmentation/openb-fgd.yaml"))
                .assert()
                .success();
            let mut rd = csv::Reader::from_path(out.join("fragmentation.csv")).unwrap();
            rd.records().map(|r| r.unwrap()).map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap())).collect()
        })
        .collect();
    let at = |k: usize, i: usize| curves[k][i].1;
    let first = |apart: &dyn Fn(usize) -> bool| (0..curves[0].len()).find(|&i| apart(i)).map(|i| curves[0][i].0);
    let random = first(&|i| (1..6).map(|k| at(k, i)).fold(f64::MIN, f64::max) - at(0, i) >= 0.5).unwrap();
    let five = first(&|i| {
        let v: Vec<f64> = (1..6).map(|k| at(k, i)).collect();
        v.iter().copied().fold(f64::MIN, f64::max) - v.iter().copied().fold(f64::MAX, f64::min) >= 0.5
    })
    .unwrap();
    assert_says(
        "README.md",
        &format!(
            "random falls half a point behind the others from {random}% of arrived demand, the other five part at {five}%"
        ),
    );
}

/// docs/topology.md's sentence on the run without network-topology-aware: its
/// effective utilization, as the table above it has it.
#[test]
fn the_topology_prose_is_the_run_s() {
    let d = run_example("examples/topology/without-nta.yaml", &[]);
    let m = metrics(d.path());
    let u = 100.0 * m["gpu_effective_utilization"].as_f64().expect("gpu_effective_utilization");
    assert_says(
        "docs/topology.md",
        &format!("effective utilization (allocation discounted by exposed communication) is only {u:.1}%"),
    );
}

/// docs/volcano.md's example of `--explain`'s closing line: the command it shows,
/// on the embedded default scenario, prints it.
#[test]
fn the_explain_example_is_the_binary_s() {
    let d = tempfile::tempdir().unwrap();
    let o = lahar().args(["run", "--explain", "default/syn0-512-worker-0", "--out"]).arg(d.path()).output().unwrap();
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out.lines().find(|l| l.starts_with("explain: default/syn0-512-worker-0:")).expect("the closing line");
    let page = std::fs::read_to_string(root().join("docs/volcano.md")).unwrap();
    assert!(page.contains(&format!("```\n{line}\n```")), "docs/volcano.md should show:\n{line}");
}

/// docs/manifests.md: with proportion taken out of the snapshot example's conf,
/// the fine-tuning job's second worker finds no node with the GPUs, as the page
/// says (with proportion, `operator.rs` checks the quota's numbers).
#[test]
fn without_proportion_the_snapshot_gang_waits_for_gpus() {
    let d = tempfile::tempdir().unwrap();
    let snap = root().join("examples/snapshot");
    let conf = std::fs::read_to_string(snap.join("volcano-scheduler.conf")).unwrap();
    assert!(conf.contains("  - name: proportion\n"));
    std::fs::write(d.path().join("c.conf"), conf.replace("  - name: proportion\n", "")).unwrap();
    let o = lahar()
        .arg("run")
        .arg("--snapshot")
        .arg(snap.join("cluster.yaml"))
        .arg("--conf")
        .arg(d.path().join("c.conf"))
        .args(["--sessions", "1", "--explain", "team-b/finetune-2b9d", "--out"])
        .arg(d.path().join("o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out.lines().find(|l| l.starts_with("explain team-b/finetune-2b9d ")).expect("the job's line");
    let quoted = line
        .split("blocked by team-b/finetune-worker-1 at allocate: no node fits it: ")
        .nth(1)
        .unwrap_or_else(|| panic!("the second worker is not the one blocked: {line}"));
    assert!(quoted.contains("Insufficient nvidia.com/gpu"), "{line}");
    assert_says(
        "docs/manifests.md",
        &format!("with proportion taken out of the conf, the second worker finds `{quoted}`"),
    );
}

/// docs/metrics.md on `examples/faults/failures.yaml`: the effective utilization
/// and the share of GPU time held without progress the summary prints, and from
/// timeseries.csv's `gpus_stalled` the longest stretch with at least 40 stalled
/// GPUs after the drain at 240 h (from its first sample to its last, in days) and
/// the most stalled at once.
#[test]
fn the_faults_example_stalls_as_metrics_md_says() {
    let d = tempfile::tempdir().unwrap();
    let out = lahar()
        .args(["run", "--out"])
        .arg(d.path())
        .arg(root().join("examples/faults/failures.yaml"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8_lossy(&out).split_whitespace().collect::<Vec<_>>().join(" ");
    let m = metrics(d.path());
    let pct = |v: &serde_json::Value| format!("{:.1}%", 100.0 * v.as_f64().expect("a number"));
    let (effective, stalled) = (pct(&m["gpu_effective_utilization"]), pct(&m["gpu_time"]["stalled"]));
    assert!(table.contains(&format!("GPU effective utilization {effective}")), "{table}");
    assert!(table.contains(&format!("GPUs held without progress {stalled}")), "{table}");
    let mut rd = csv::Reader::from_path(d.path().join("timeseries.csv")).expect("timeseries.csv");
    let h = rd.headers().unwrap().clone();
    let col = |c: &str| h.iter().position(|x| x == c).expect(c);
    let (t, s) = (col("t_s"), col("gpus_stalled"));
    let samples: Vec<(u64, f64)> =
        rd.records().map(|r| r.unwrap()).map(|r| (r[t].parse().unwrap(), r[s].parse().unwrap())).collect();
    let (mut longest, mut from) = (0, None);
    for &(at, gpus) in samples.iter().filter(|(at, _)| *at >= 240 * 3600) {
        if gpus >= 40.0 {
            let start = *from.get_or_insert(at);
            longest = longest.max(at - start);
        } else {
            from = None;
        }
    }
    let most = samples.iter().map(|&(_, g)| g).fold(0.0, f64::max);
    assert_says(
        "docs/metrics.md",
        &format!(
            "reports GPU effective utilization {effective} and `GPUs held without progress {stalled}`, and its timeseries.csv (`gpus_stalled`) shows at least 40 GPUs held without progress for {:.1} days from the drain at 240 h, up to {most} at once.",
            longest as f64 / 86_400.0
        ),
    );
}

/// jobs.csv's rows by job name, each as column → value.
fn jobs_by_name(out: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut rd = csv::Reader::from_path(out.join("jobs.csv")).expect("jobs.csv");
    let h = rd.headers().unwrap().clone();
    rd.records()
        .map(|r| r.unwrap())
        .map(|r| (r[0].to_string(), h.iter().zip(r.iter()).map(|(k, v)| (k.to_string(), v.to_string())).collect()))
        .collect()
}

fn run_example(example: &str, extra: &[&str]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    lahar().args(["run", "-q"]).args(extra).arg("--out").arg(d.path()).arg(root().join(example)).assert().success();
    d
}

/// docs/baselines.md's starvation example: under `sjf` the 8-GPU job waits 54 s
/// while the five 10 s jobs run first; `fifo` runs it first.
#[test]
fn sjf_starves_the_large_job_as_the_page_says() {
    let sjf = jobs_by_name(run_example("examples/baseline-sjf.yaml", &[]).path());
    let long = &sjf["long"];
    assert_eq!((long["gpus"].as_str(), long["wait_s"].as_str()), ("8", "54"));
    let shorts: Vec<&str> = sjf.keys().filter(|k| k.starts_with("short-")).map(String::as_str).collect();
    assert_eq!(shorts.len(), 5);
    let at =
        |jobs: &BTreeMap<String, BTreeMap<String, String>>, j: &str, c: &str| -> i64 { jobs[j][c].parse().unwrap() };
    for s in &shorts {
        assert_eq!(at(&sjf, s, "end_s") - at(&sjf, s, "start_s"), 10, "{s} runs 10 s");
        assert!(at(&sjf, s, "start_s") < at(&sjf, "long", "start_s"), "{s} runs before long under sjf");
    }
    let fifo =
        jobs_by_name(run_example("examples/baseline-sjf.yaml", &["--set", "spec.scheduler={baseline: fifo}"]).path());
    for s in &shorts {
        assert!(at(&fifo, s, "start_s") >= at(&fifo, "long", "start_s"), "{s} runs after long under fifo");
    }
    assert_says(
        "docs/baselines.md",
        "(`examples/baseline-sjf.yaml`: an 8-GPU job waits 54 s behind five 10 s jobs that `fifo` would have run after it)",
    );
}

/// docs/baselines.md's deadlock example under `kube-default`: from t=10 s every GPU
/// is held and none makes progress, and the run ends with both gangs Pending.
#[test]
fn kube_default_deadlocks_as_the_page_says() {
    let d = run_example("examples/baseline-kube-default.yaml", &[]);
    let jobs = jobs_by_name(d.path());
    assert_eq!((jobs["a"]["state"].as_str(), jobs["b"]["state"].as_str()), ("Pending", "Pending"));
    let mut rd = csv::Reader::from_path(d.path().join("timeseries.csv")).expect("timeseries.csv");
    let h = rd.headers().unwrap().clone();
    let col = |c: &str| h.iter().position(|x| x == c).expect(c);
    let (t, total, held, busy) = (col("t_s"), col("gpus_total"), col("gpus_allocated"), col("gpus_busy_effective"));
    let rows: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    let after: Vec<&csv::StringRecord> = rows.iter().filter(|r| r[t].parse::<u64>().unwrap() >= 10).collect();
    assert!(!after.is_empty());
    for r in after {
        assert_eq!(&r[held], &r[total], "every GPU held at {}", &r[t]);
        assert_eq!(r[busy].parse::<f64>().unwrap(), 0.0, "no progress at {}", &r[t]);
    }
    assert_says(
        "docs/baselines.md",
        "(`examples/baseline-kube-default.yaml`: after t=10 s every GPU is held and nothing makes progress; the run ends with both jobs Pending)",
    );
}

/// docs/fragmentation.md's openb in time: at the trace's pace on its whole cluster
/// its 149 days never hold more than 64.6 GPUs at once (the peak of pods.csv's GPUs
/// over time, ends before starts at one instant), and under fgd on the sixteenth the
/// last pod that waited starts at hour 68.5.
#[test]
fn openb_in_time_is_as_fragmentation_md_says() {
    let whole = run_example(
        "examples/fragmentation/openb-time-binpack.yaml",
        &[
            "--set",
            "spec.cluster.nodeList.path=../traces/openb/openb_node_list_gpu_node.csv",
            "--set",
            "spec.workload[0].trace.timeScale=1",
        ],
    );
    let mut rd = csv::Reader::from_path(whole.path().join("pods.csv")).expect("pods.csv");
    let h = rd.headers().unwrap().clone();
    let col = |c: &str| h.iter().position(|x| x == c).expect(c);
    let (gpus, start, end) = (col("gpus"), col("start_s"), col("end_s"));
    // (instant, 0 for an end and 1 for a start, milli-GPUs)
    let mut steps: Vec<(u64, u8, i64)> = Vec::new();
    for r in rd.records().map(|r| r.unwrap()) {
        let milli = (r[gpus].parse::<f64>().unwrap() * 1000.0).round() as i64;
        steps.push((r[start].parse().unwrap(), 1, milli));
        if !r[end].is_empty() {
            steps.push((r[end].parse().unwrap(), 0, -milli));
        }
    }
    steps.sort();
    let (mut held, mut peak) = (0, 0);
    for (_, _, d) in steps {
        held += d;
        peak = peak.max(held);
    }
    let days = metrics(whole.path())["makespan_s"].as_f64().unwrap() / 86_400.0;
    assert_says(
        "docs/fragmentation.md",
        &format!("its {} days at most {:.1} of the 6,212 GPUs are held at once", days.floor(), peak as f64 / 1000.0),
    );
    let fgd = jobs_by_name(run_example("examples/fragmentation/openb-time-fgd.yaml", &[]).path());
    let last = fgd
        .values()
        .filter(|j| j["wait_s"].parse::<f64>().unwrap_or(0.0) > 0.0)
        .map(|j| j["start_s"].parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    assert_says(
        "docs/fragmentation.md",
        &format!("(the orange tail: the last of them starts at hour {:.1})", last / 3600.0),
    );
}
