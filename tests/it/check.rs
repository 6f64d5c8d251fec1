//! `lahar check`, the CI regression gate: exit codes, verdicts in both directions,
//! tolerances, located errors, Markdown and sweep directories. Regressions are made
//! by editing the baseline's numbers, on a run of examples/baseline-fifo.yaml (three
//! jobs on one node: completed 3, jct_s.mean 119 s, gpu_allocation_rate 41/60,
//! slo_misses 1, makespan_s 150 s).

use super::*;
use serde_json::{Value, json};

/// A run of examples/baseline-fifo.yaml in `<tmp>/run`.
fn fifo_run() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().expect("tempdir");
    let run = t.path().join("run");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/baseline-fifo.yaml");
    lahar().args(["run", "-q"]).arg(&example).arg("--out").arg(&run).assert().success();
    (t, run)
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json")
}

fn write_json(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_string_pretty(v).expect("json")).expect("write");
}

/// Writes `<dir>/baseline.json` from `run` with `lahar check --write-baseline`, then
/// sets the given metrics (`None`: removes the key).
fn baseline(dir: &Path, run: &Path, edits: &[(&str, Option<Value>)]) -> PathBuf {
    let b = dir.join("baseline.json");
    lahar().args(["check", "--write-baseline"]).arg(&b).arg(run).assert().success();
    if edits.is_empty() {
        return b;
    }
    let mut v = read_json(&b);
    for (k, x) in edits {
        let m = v["metrics"].as_object_mut().expect("metrics");
        match x {
            Some(x) => m.insert(k.to_string(), x.clone()),
            None => m.remove(*k),
        };
    }
    write_json(&b, &v);
    b
}

/// Exit code, stdout and stderr of `lahar check --baseline B RUN ARGS...`.
fn check(b: &Path, run: &Path, args: &[&str]) -> (i32, String, String) {
    let o = lahar().args(["check", "--baseline"]).arg(b).arg(run).args(args).output().expect("lahar");
    let text = |v: Vec<u8>| String::from_utf8(v).expect("utf-8");
    (o.status.code().expect("exit code"), text(o.stdout), text(o.stderr))
}

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or_default()
}

/// The table line of a metric (terminal or Markdown).
fn row<'a>(out: &'a str, key: &str) -> &'a str {
    let (plain, code) = (format!(" {key} — "), format!(" `{key}` — "));
    out.lines().find(|l| l.contains(&plain) || l.contains(&code)).unwrap_or_else(|| panic!("no row {key} in\n{out}"))
}

/// The non-empty cells of a terminal table line (cells are apart by 2+ spaces).
fn cells(line: &str) -> Vec<&str> {
    line.trim_matches(|c| c == '│' || c == ' ').split("  ").map(str::trim).filter(|c| !c.is_empty()).collect()
}

#[test]
fn identical_run_passes_and_the_baseline_holds_its_values() {
    let (t, run) = fifo_run();
    let b = t.path().join("ci/baseline.json");
    lahar().args(["check", "--write-baseline"]).arg(&b).arg(&run).assert().success().stdout(format!(
        "{}: baseline of {} (23 metrics)\n",
        b.display(),
        run.display()
    ));
    let v = read_json(&b);
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(v["lahar_check_baseline"], json!(1));
    assert_eq!(v["lahar_version"], summary["lahar_version"]);
    assert_eq!((v["scenario"].as_str(), v["seed"].as_u64()), (Some("baseline-fifo"), Some(1)));
    let m = v["metrics"].as_object().expect("metrics");
    assert_eq!(m.len(), 23);
    assert_eq!(
        (m["completed"].as_f64(), m["jct_s.mean"].as_f64(), m["makespan_s"].as_f64()),
        (Some(3.0), Some(119.0), Some(150.0))
    );
    assert_eq!(m["gpu_allocation_rate"], summary["metrics"]["gpu_allocation_rate"]);
    assert_eq!(m["wait_s.mean"], summary["metrics"]["wait_s"]["mean"]);

    let (code, out, err) = check(&b, &run, &[]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    assert_eq!(last_line(&out), "check passed: 23 metrics within tolerance");
    assert_eq!(out.lines().filter(|l| cells(l).last() == Some(&"ok")).count(), 23, "{out}");
    // 119 s = 0.033 h.
    assert_eq!(cells(row(&out, "jct_s.mean")), ["jct_s.mean — JCT mean (h)", "0.033", "0.033", "+0.0%", "0%", "ok"]);
}

#[test]
fn lower_is_better_metric_going_up_fails() {
    let (t, run) = fifo_run();
    let b = baseline(t.path(), &run, &[("jct_s.mean", Some(json!(100)))]);
    let (code, out, _) = check(&b, &run, &[]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(last_line(&out), "check failed: 1 regression: jct_s.mean +19.0% (tolerance 0%)");
    assert_eq!(cells(row(&out, "jct_s.mean"))[1..], ["0.028", "0.033", "+19.0%", "0%", "REGRESSION"]);
}

#[test]
fn higher_is_better_metric_going_down_fails() {
    let (t, run) = fifo_run();
    let edits = [("completed", Some(json!(4))), ("gpu_allocation_rate", Some(json!(0.7)))];
    let b = baseline(t.path(), &run, &edits);
    let (code, out, _) = check(&b, &run, &[]);
    assert_eq!(code, 1, "{out}");
    // 3 vs 4: −25%; 41/60 vs 0.7: −2.38%.
    assert_eq!(
        last_line(&out),
        "check failed: 2 regressions: completed -25.0% (tolerance 0%), gpu_allocation_rate -2.4% (tolerance 0%)"
    );
    assert_eq!(cells(row(&out, "gpu_allocation_rate"))[1..], ["70", "68.333", "-2.4%", "0%", "REGRESSION"]);
}

#[test]
fn moves_in_the_good_direction_are_improvements() {
    let (t, run) = fifo_run();
    let edits = [("jct_s.mean", Some(json!(125))), ("completed", Some(json!(2)))];
    let b = baseline(t.path(), &run, &edits);
    let (code, out, _) = check(&b, &run, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(last_line(&out), "check passed: 23 metrics within tolerance");
    // 119 vs 125: −4.8%; 3 vs 2: +50%.
    assert_eq!(cells(row(&out, "jct_s.mean"))[1..], ["0.035", "0.033", "-4.8%", "0%", "improved"]);
    assert_eq!(cells(row(&out, "completed"))[1..], ["2", "3", "+50.0%", "0%", "improved"]);
}

#[test]
fn tolerance_lets_a_small_regression_pass_and_not_a_bigger_one() {
    let (t, run) = fifo_run();
    // 119 vs 110: +9/110 = +8.1818...%.
    let b = baseline(t.path(), &run, &[("jct_s.mean", Some(json!(110)))]);
    for (tol, code) in [("9%", 0), ("8.19%", 0), ("8.18%", 1), ("8%", 1)] {
        let (c, out, _) = check(&b, &run, &["--tolerance", &format!("jct_s.mean={tol}")]);
        assert_eq!(c, code, "{tol}: {out}");
        if code == 1 {
            assert_eq!(last_line(&out), format!("check failed: 1 regression: jct_s.mean +8.2% (tolerance {tol})"));
        } else {
            assert_eq!(cells(row(&out, "jct_s.mean"))[1..], ["0.031", "0.033", "+8.2%", tol, "ok"]);
        }
    }
}

#[test]
fn zero_baseline_tolerance_is_absolute() {
    let (t, run) = fifo_run();
    // The run has 1 SLO miss; from 0, P% allows an absolute P/100.
    let b = baseline(t.path(), &run, &[("slo_misses", Some(json!(0)))]);
    let (code, out, _) = check(&b, &run, &[]);
    assert_eq!(code, 1);
    assert_eq!(last_line(&out), "check failed: 1 regression: slo_misses +1 from 0 (tolerance 0%)");
    assert_eq!(check(&b, &run, &["--tolerance", "slo_misses=100%"]).0, 0);
    assert_eq!(check(&b, &run, &["--tolerance", "slo_misses=99%"]).0, 1);
}

#[test]
fn all_tolerance_and_per_metric_overrides() {
    let (t, run) = fifo_run();
    // jct_s.mean +8.18%, completed 3 vs 3.1: −3.23%.
    let b = baseline(t.path(), &run, &[("jct_s.mean", Some(json!(110))), ("completed", Some(json!(3.1)))]);
    assert_eq!(check(&b, &run, &["--tolerance", "all=10%"]).0, 0);
    let (code, out, _) = check(&b, &run, &["--tolerance", "all=3%"]);
    assert_eq!(code, 1);
    assert_eq!(
        last_line(&out),
        "check failed: 2 regressions: completed -3.2% (tolerance 3%), jct_s.mean +8.2% (tolerance 3%)"
    );
    // A metric's own tolerance wins over `all`, in either order.
    for args in [
        ["--tolerance", "jct_s.mean=5%", "--tolerance", "all=10%"],
        ["--tolerance", "all=10%", "--tolerance", "jct_s.mean=5%"],
    ] {
        let (code, out, _) = check(&b, &run, &args);
        assert_eq!(code, 1);
        assert_eq!(last_line(&out), "check failed: 1 regression: jct_s.mean +8.2% (tolerance 5%)");
        assert_eq!(cells(row(&out, "completed"))[1..], ["3.100", "3", "-3.2%", "10%", "ok"]);
    }
}

#[test]
fn null_on_one_side_is_missing_and_on_both_is_na() {
    let (t, run) = fifo_run();
    let b = baseline(t.path(), &run, &[("makespan_s", Some(Value::Null))]);
    let (code, out, _) = check(&b, &run, &[]);
    assert_eq!(code, 1);
    assert_eq!(last_line(&out), "check failed: 1 missing: makespan_s missing in baseline");
    assert_eq!(cells(row(&out, "makespan_s"))[1..], ["—", "0.042", "0%", "missing"]);
    // The run without the value too (as a run where no job ended): n/a, passes.
    let summary = run.join("summary.json");
    let mut s = read_json(&summary);
    s["metrics"]["makespan_s"] = Value::Null;
    write_json(&summary, &s);
    let (code, out, _) = check(&b, &run, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(cells(row(&out, "makespan_s"))[1..], ["—", "—", "0%", "n/a"]);
    // A key absent from the baseline reads as null.
    let b = baseline(t.path(), &run, &[("makespan_s", None)]);
    assert_eq!(check(&b, &run, &[]).0, 0);
    let b = baseline(t.path(), &run, &[("makespan_s", Some(json!(150)))]);
    let (code, out, _) = check(&b, &run, &[]);
    assert_eq!((code, last_line(&out)), (1, "check failed: 1 missing: makespan_s missing in run"));
    // A key absent from the baseline (written before the metric existed) against a
    // value in the run: new, and the check passes.
    let b = baseline(t.path(), &run, &[("makespan_s", Some(Value::Null)), ("gpu_time.stalled", None)]);
    let (code, out, _) = check(&b, &run, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(cells(row(&out, "gpu_time.stalled"))[1..], ["—", "0", "0%", "new"]);
}

#[test]
fn bad_input_exits_2_with_a_located_message() {
    let (t, run) = fifo_run();
    let b = baseline(t.path(), &run, &[]);
    let err = |b: &Path, run: &Path, args: &[&str]| {
        let (code, out, err) = check(b, run, args);
        assert_eq!((code, out.as_str()), (2, ""), "{err}");
        err
    };
    let nowhere = t.path().join("nowhere");
    assert_eq!(
        err(&b, &nowhere, &[]),
        format!("error: {}: not a run directory (it does not exist or is not a directory)\n", nowhere.display())
    );
    let empty = tempfile::tempdir().expect("tempdir");
    assert!(err(&b, empty.path(), &[]).contains("summary.json: missing (a run directory holds the summary.json"));

    let bad = t.path().join("bad.json");
    std::fs::write(&bad, "{\n  \"lahar_check_baseline\": 1,\n  oops\n}\n").expect("write");
    assert_eq!(err(&bad, &run, &[]), format!("error: {}:3:3: key must be a string\n", bad.display()));
    std::fs::write(&bad, "{\"lahar_check_baseline\": 2, \"metrics\": {}}").expect("write");
    assert!(err(&bad, &run, &[]).starts_with(&format!(
        "error: {}: unknown baseline format version 2 (this lahar reads version 1)",
        bad.display()
    )));
    // Line 10 of the baseline lahar writes is `    "jct_s.mean": 119,`.
    let text = std::fs::read_to_string(&b).expect("read").replace("\"jct_s.mean\"", "\"jct_mean\"");
    let renamed = t.path().join("renamed.json");
    std::fs::write(&renamed, text).expect("write");
    let e = err(&renamed, &run, &[]);
    assert!(
        e.starts_with(&format!(
            "error: {}:10:14: unknown metric `jct_mean` (did you mean `jct_s.mean`?); valid metrics: completed, ",
            renamed.display()
        )),
        "{e}"
    );
    assert!(
        err(&run.join("summary.json"), &run, &[])
            .contains("not a lahar check baseline (no `lahar_check_baseline` key)")
    );

    let e = err(&b, &run, &["--tolerance", "jct_s.maen=5%"]);
    assert!(e.starts_with("error: --tolerance `jct_s.maen=5%`: unknown metric `jct_s.maen` (did you mean `jct_s.mean`?); valid metrics: all, completed, unfinished, jct_s.mean,"), "{e}");
    assert!(e.trim_end().ends_with("gang_wait_s.mean, slo_misses"), "{e}");
    assert!(err(&b, &run, &["--tolerance", "jct_s.mean=5"]).contains("expected a percentage ending in `%`"));
    assert!(err(&b, &run, &["--tolerance", "all=-1%"]).contains("expected a non-negative number before `%`"));

    let summary = run.join("summary.json");
    std::fs::write(&summary, "{\"metrics\": {\"jct_s\": }}").expect("write");
    assert_eq!(err(&b, &run, &[]), format!("error: {}:1:23: expected value\n", summary.display()));

    // clap: exactly one of --baseline and --write-baseline.
    lahar().args(["check"]).arg(&run).assert().code(2);
    lahar().args(["check", "--baseline"]).arg(&b).arg("--write-baseline").arg(&b).arg(&run).assert().code(2);
}

#[test]
fn write_baseline_exit_codes() {
    let (t, run) = fifo_run();
    lahar()
        .args(["check", "--write-baseline"])
        .arg(t.path().join("b.json"))
        .arg(t.path().join("nowhere"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("not a run directory"));
    lahar()
        .args(["check", "--write-baseline", "/proc/lahar-cannot-write-here/b.json"])
        .arg(&run)
        .assert()
        .code(1)
        .stderr(predicates::str::starts_with("error: cannot write /proc/lahar-cannot-write-here/b.json: "));
}

#[test]
fn markdown_is_a_table_for_a_job_summary() {
    let (t, run) = fifo_run();
    let b = baseline(t.path(), &run, &[("jct_s.mean", Some(json!(100)))]);
    let (code, out, _) = check(&b, &run, &["--format", "markdown"]);
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2 + 23 + 2, "{out}");
    assert_eq!(lines[0], "| metric | baseline | run | change | tolerance | verdict |");
    assert_eq!(lines[1], "|---|---:|---:|---:|---:|---|");
    assert_eq!(lines[2], "| `completed` — jobs completed | 3 | 3 | +0.0% | 0% | ok |");
    assert_eq!(row(&out, "jct_s.mean"), "| `jct_s.mean` — JCT mean (h) | 0.028 | 0.033 | +19.0% | 0% | REGRESSION |");
    assert_eq!(lines[25], "");
    assert_eq!(lines[26], "check failed: 1 regression: jct_s.mean +19.0% (tolerance 0%)");
}

/// A sweep directory made by hand: sweep.json and cells `a` and `b`, copies of `run`.
fn sweep_of(run: &Path, dir: &Path, cells: &[&str]) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join("sweep.json"), "{}").expect("write");
    for c in cells {
        let to = dir.join("cells").join(c);
        std::fs::create_dir_all(&to).expect("mkdir");
        for f in std::fs::read_dir(run).expect("read run") {
            let f = f.expect("entry").path();
            std::fs::copy(&f, to.join(f.file_name().expect("name"))).expect("copy");
        }
    }
}

#[test]
fn sweep_dirs_are_checked_per_cell() {
    let (t, run) = fifo_run();
    let sweep = t.path().join("sweep");
    sweep_of(&run, &sweep, &["a", "b"]);
    let b = t.path().join("sweep-baseline.json");
    lahar().args(["check", "--write-baseline"]).arg(&b).arg(&sweep).assert().success().stdout(format!(
        "{}: baseline of {} (2 cells × 23 metrics)\n",
        b.display(),
        sweep.display()
    ));
    let v = read_json(&b);
    assert!(v.get("metrics").is_none());
    assert_eq!(
        v["cells"].as_object().map(|c| c.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["a".into(), "b".into()])
    );
    assert_eq!(v["cells"]["b"]["jct_s.mean"], json!(119));

    let (code, out, _) = check(&b, &sweep, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(last_line(&out), "check passed: 46 metrics in 2 cells within tolerance");
    assert!(out.lines().nth(1).is_some_and(|h| h.starts_with("│ cell   metric ")), "{out}");

    // Per cell: a regression in b is named b/<key>.
    let mut edited = v.clone();
    edited["cells"]["b"]["jct_s.mean"] = json!(100);
    let b2 = t.path().join("edited.json");
    write_json(&b2, &edited);
    let (code, out, _) = check(&b2, &sweep, &["--markdown"]);
    assert_eq!(code, 1);
    assert_eq!(last_line(&out), "check failed: 1 regression: b/jct_s.mean +19.0% (tolerance 0%)");
    assert!(
        out.contains("\n| b | `jct_s.mean` — JCT mean (h) | 0.028 | 0.033 | +19.0% | 0% | REGRESSION |\n"),
        "{out}"
    );
    assert!(out.contains("\n| a | `jct_s.mean` — JCT mean (h) | 0.033 | 0.033 | +0.0% | 0% | ok |\n"), "{out}");

    // A new cell passes, reported; a temporary directory of `lahar sweep` is no cell.
    sweep_of(&run, &sweep, &["c", ".tmp-a-123"]);
    let (code, out, _) = check(&b, &sweep, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        last_line(&out),
        "check passed: 46 metrics in 2 cells within tolerance; 1 new cell not in the baseline: c"
    );
    assert!(out.lines().any(|l| cells(l) == ["c", "all metrics", "absent", "present", "new"]), "{out}");

    // A cell missing from the run fails.
    std::fs::remove_dir_all(sweep.join("cells/b")).expect("rm");
    let (code, out, _) = check(&b, &sweep, &[]);
    assert_eq!(code, 1);
    assert_eq!(last_line(&out), "check failed: 1 missing: cell b missing in run");
    // So does a failed cell (error.txt instead of outputs), which has no baseline.
    std::fs::create_dir_all(sweep.join("cells/b")).expect("mkdir");
    std::fs::write(sweep.join("cells/b/error.txt"), "scenario: bad field\nmore\n").expect("write");
    let (code, out, _) = check(&b, &sweep, &[]);
    assert_eq!(code, 1);
    assert_eq!(last_line(&out), "check failed: 1 failed cell: cell b failed: scenario: bad field");
    lahar()
        .args(["check", "--write-baseline"])
        .arg(t.path().join("x.json"))
        .arg(&sweep)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("the cell failed (scenario: bad field)"));

    // A run baseline on a sweep directory, and the reverse.
    let rb = baseline(t.path(), &run, &[]);
    let e = check(&rb, &sweep, &[]);
    assert_eq!(e.0, 2);
    assert!(
        e.2.contains("a run baseline (it holds `metrics`), but ") && e.2.contains("is a sweep directory"),
        "{}",
        e.2
    );
    let e = check(&b, &run, &[]);
    assert_eq!(e.0, 2);
    assert!(e.2.contains("a sweep baseline (it holds `cells`), but ") && e.2.contains("is a run directory"), "{}", e.2);
}

/// A baseline of another input (here: another seed and scenario text) is named on
/// stderr and under the markdown table; the metrics are still compared.
#[test]
fn a_baseline_of_other_inputs_is_named() {
    let (t, run) = fifo_run();
    let b = baseline(t.path(), &run, &[]);
    let base = read_json(&b);
    assert_eq!(base["scenario_sha256"], read_json(&run.join("summary.json"))["scenario_sha256"]);
    let (code, _, err) = check(&b, &run, &[]);
    assert_eq!((code, err.as_str()), (0, ""), "same inputs: no warning");
    let mut other = base.clone();
    other["seed"] = json!(99);
    other["scenario_sha256"] = json!("0000000000000000000000000000000000000000000000000000000000000000");
    write_json(&b, &other);
    let (code, out, err) = check(&b, &run, &["--markdown"]);
    assert_eq!(code, 0, "{out}");
    let seed = base["seed"].as_u64().unwrap();
    let sha: String = base["scenario_sha256"].as_str().unwrap().chars().take(12).collect();
    let what = format!("seed 99, run {seed}; scenario text sha256 000000000000…, run {sha}…");
    assert!(err.starts_with(&format!("warning: the baseline and the run are of different inputs ({what})")), "{err}");
    assert!(out.contains(&format!("**Warning:** the baseline and the run are of different inputs ({what}).")), "{out}");
    // A baseline written before the sha256 was recorded is compared by name and seed.
    other.as_object_mut().unwrap().remove("scenario_sha256");
    other["seed"] = json!(seed);
    write_json(&b, &other);
    assert_eq!(check(&b, &run, &[]).2, "");
}
