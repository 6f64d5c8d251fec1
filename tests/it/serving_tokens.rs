//! Services in tokens (issue 45, item 2: "a capacity in requests/s, or tokens/s
//! by GPU model"): the demand and capacity count tokens, every autoscaler metric
//! reads the token rate, a request trace counts each request's input, output or
//! total tokens, and the outputs carry them in their own columns and fields.

use super::serving::{run_scaling, step_by_step_scaling, web_files, web_with_hpa};
use super::*;

/// The HPA of `hpa_scale_decisions_step_by_step` (10 per pod), a hundredfold:
/// 1,000 tokens per pod.
fn files(services: &str) -> (tempfile::TempDir, PathBuf) {
    web_files(tempfile::tempdir().unwrap(), &web_with_hpa("tokens_per_second", 1000, ""), services)
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// The requests of `hpa_scale_decisions_step_by_step` become tokens, a hundred
/// each: the HPA reads the token rate against its 1,000 tokens per pod, so it
/// makes the same decisions at the same instants, and every integral is a
/// hundred times the requests' (offered 9,000,000 tokens, unserved 247,500).
#[test]
fn a_service_in_tokens_scales_as_in_requests() {
    let (dir, p) = files(
        "  services:
    - workload: web
      unit: tokens
      demand:
        steps: [{at: 0s, rate: 500}, {at: 10m, rate: 4500}, {at: 40m, rate: 500}]
      capacity: 1000
      startup: 60s
",
    );
    let out = dir.path().join("out");
    assert_eq!(run_scaling(&p, &out), step_by_step_scaling("tokens_per_second"));
    let summary = summary(&out);
    let s = &summary["metrics"]["services"][0];
    assert_eq!(s["unit"], "tokens");
    assert_eq!(s["offered_tokens"], 9_000_000.0);
    assert_eq!(s["served_tokens"], 8_752_500.0);
    assert_eq!(s["unserved_tokens"], 247_500.0);
    assert!(s["offered_requests"].is_null() && s["unserved_requests"].is_null(), "{s}");
    // Time-based measures do not depend on the unit.
    assert_eq!(s["slo_attainment"], 1.0 - 135.0 / 3600.0);
    assert_eq!(s["replica_hours_short"], 315.0 / 3600.0);
    let serving = &summary["metrics"]["serving"];
    assert_eq!(serving["unserved_tokens"], 247_500.0);
    assert!(serving["unserved_requests"].is_null(), "{serving}");
    // services.csv: the `_tps` columns filled, the `_rps` ones empty.
    let mut rd = csv::Reader::from_path(out.join("services.csv")).unwrap();
    let h = rd.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|x| x == n).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    let at_1200 = rows.iter().find(|r| &r[col("t_s")] == "1200").expect("a sample at 20 min");
    assert_eq!(
        (&at_1200[col("demand_tps")], &at_1200[col("capacity_tps")], &at_1200[col("served_tps")]),
        ("4500", "5000", "4500")
    );
    assert_eq!((&at_1200[col("demand_rps")], &at_1200[col("capacity_rps")]), ("", ""));
}

/// Sums a column of the Azure sample by hand.
fn azure_sum(path: &Path, columns: &[usize]) -> f64 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .map(|f| columns.iter().map(|&c| f[c].parse::<f64>().unwrap()).sum::<f64>())
        .sum()
}

/// A request trace in tokens offers each request's tokens: the Azure sample's
/// hour, counted per second, offers exactly the sum of its `ContextTokens` and
/// `GeneratedTokens` (`total`, the default), or of either.
#[test]
fn a_request_trace_offers_its_tokens() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces/azure-llm/AzureLLMInferenceTrace_conv.csv");
    for (tokens, columns) in [("", &[1usize, 2][..]), (", tokens: input", &[1][..]), (", tokens: output", &[2][..])] {
        let services = format!(
            "  services:\n    - workload: web\n      unit: tokens\n      demand: {{trace: {{path: {}, bin: 1s{tokens}}}}}\n      capacity: 5000\n",
            trace.display()
        );
        let (dir, p) = files(&services);
        let out = dir.path().join("out");
        lahar().args(["run", "-q"]).arg(&p).arg("--out").arg(&out).assert().success();
        let s = &summary(&out)["metrics"]["services"][0];
        assert_eq!(s["offered_tokens"].as_f64(), Some(azure_sum(&trace, columns)), "tokens{tokens}: {s}");
        assert!(s["offered_requests"].is_null(), "{s}");
    }
}

/// Every bad input of the unit, located through the binary (exit 2).
#[test]
fn bad_token_input_is_located() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/traces/azure-llm/AzureLLMInferenceTrace_conv.csv");
    let t = trace.display();
    let hours = "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]";
    for (service, field, why) in [
        (
            "unit: tokns, demand: {constant: 1}, capacity: 1",
            "unit",
            "unknown unit `tokns`; expected `requests` or `tokens`",
        ),
        (
            &format!("demand: {{trace: {{path: {t}, tokens: input}}}}, capacity: 1"),
            "demand.trace.tokens",
            "the service counts requests",
        ),
        (
            &format!("unit: tokens, demand: {{trace: {{path: {t}, tokens: prompt}}}}, capacity: 1"),
            "demand.trace.tokens",
            "unknown `prompt`; expected `input`, `output` or `total`",
        ),
        (
            &format!("unit: tokens, demand: {{diurnal: {{requestsPerSecond: {hours}}}}}, capacity: 1"),
            "demand.diurnal.requestsPerSecond",
            "the service counts tokens (`unit`): give `tokensPerSecond`",
        ),
        (
            &format!("demand: {{diurnal: {{tokensPerSecond: {hours}}}}}, capacity: 1"),
            "demand.diurnal.tokensPerSecond",
            "give `requestsPerSecond`",
        ),
        (
            "unit: tokens, demand: {diurnal: {weekly: [1, 1, 1, 1, 1, 1, 1]}}, capacity: 1",
            "demand.diurnal.tokensPerSecond",
            "missing: 24 rates",
        ),
        (
            "unit: tokens, demand: {constant: 1}, capacity: 0",
            "capacity",
            "must be a number of tokens per second greater than 0",
        ),
        (
            &format!("unit: tokens, demand: {{trace: {{path: {t}, bin: 1s, scale: 1000000}}}}, capacity: 1"),
            "demand.trace.path",
            "more than 1e9",
        ),
    ] {
        let (_dir, p) = files(&format!("  services:\n    - {{workload: web, {service}}}\n"));
        let o = lahar().arg("validate").arg(&p).assert().code(2);
        let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
        assert!(err.contains(&format!("spec.services[0].{field}")) && err.contains(why), "{service}: {err}");
    }
    // A tokens-per-second diurnal demand of a service in tokens is good.
    let ok = format!(
        "  services:\n    - {{workload: web, unit: tokens, demand: {{diurnal: {{tokensPerSecond: {hours}}}}}, capacity: 1}}\n"
    );
    let (_dir, p) = files(&ok);
    lahar().arg("validate").arg(&p).assert().success();
}

/// The example runs from a clean clone and offers the sample hour's generated
/// tokens: 4,088,665 summed by hand, within the rounding of each minute's rate to
/// a thousandth of a token per second (at most 0.03 tokens a bin, 59 bins).
#[test]
fn the_tokens_example_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let trace = root.join("examples/traces/azure-llm/AzureLLMInferenceTrace_conv.csv");
    let dir = tempfile::tempdir().unwrap();
    let example = root.join("examples/serving-tokens.yaml");
    lahar().args(["run", "-q", "--plots"]).arg(example).arg("--out").arg(dir.path()).assert().success();
    let s = &summary(dir.path())["metrics"]["services"][0];
    assert_eq!(s["unit"], "tokens");
    let offered = s["offered_tokens"].as_f64().unwrap();
    assert_eq!(azure_sum(&trace, &[2]), 4_088_665.0);
    assert!((offered - 4_088_665.0).abs() < 2.0, "{s}");
    assert!(s["slo_attainment"].as_f64().unwrap() > 0.8, "{s}");
    assert!(s["scale_ups"].as_u64().unwrap() >= 1, "{s}");
    // The serving plot is in tokens; the JCT CDF of a run whose only job serves
    // says it has nothing to show instead of drawing an empty chart.
    let plot = |name: &str| std::fs::read_to_string(dir.path().join("plots").join(name)).unwrap();
    assert!(plot("serving.svg").contains("tokens/s"));
    assert!(plot("jct_cdf.svg").contains("no job completion time to show"));
}
