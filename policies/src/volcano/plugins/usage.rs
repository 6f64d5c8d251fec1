//! `usage` (Volcano's `plugins/usage`): keep pods off loaded nodes. A predicate
//! refuses a node whose CPU or memory load exceeds its threshold; a node score
//! prefers idle nodes.
//!
//! **The metric source.** Volcano reads each node's CPU and memory load (10-minute
//! averages, in percent) from a metrics system (`metrics.type`: Prometheus,
//! Elasticsearch). lahar's source is the simulation itself: a node's load is what
//! its pods request (pods use what they ask for), as a share of its allocatable
//! cpu and memory, as the session opened — always fresh, so the "stale metrics"
//! branch of Volcano (predicate passes, score 0) never applies. Pods placed during
//! the session are not in that load; as in Volcano they enter a shadow estimate
//! instead: `request · request_ratio · risk factor` (capped at the request: pods in
//! lahar have no limits beyond their requests, so there is no burst), or
//! `be_cpu`/`be_mem` · risk factor for a BestEffort pod, where the risk factor is
//! `risk_factor` once the node's composite load has reached `risk_threshold`.
//!
//! Arguments: `usage.weight` (5), `cpu.weight` (1), `memory.weight` (1);
//! `thresholds: {cpu, mem}` (integer percent, 80 each); `estimator:
//! {request_ratio (0.7), burst_ratio (0), risk_threshold (0.6), risk_factor (1.2),
//! be_cpu (250m; an integer is millicores), be_mem (200Mi; an integer is MiB)}`.
//! Values Volcano would ignore (out of range, a string where it reads a number)
//! are conf errors.
//!
//! Predicate: the session-open load `> thresholds` (strictly) → "the CPU load of
//! the node exceeds the upper limit." (memory likewise). Score:
//! `((1 − cpu) · cpu.weight + (1 − mem) · memory.weight) / (Σ weights) · 100 ·
//! usage.weight`, each utilisation the load plus the shadow estimate over
//! allocatable, capped at 1.

use super::super::args::{ArgSpec, ArgType, ArgValue, Args};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{PodId, PodStatus};
use lahar_core::model::resource::{CPU, MEMORY, Resources};
use lahar_core::session::Session;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("usage", |pc| Box::new(Usage::new(&pc.args))).args(&[
    ArgSpec::new("usage.weight", ArgType::Int, "5", "the node score's weight"),
    ArgSpec::new("cpu.weight", ArgType::Int, "1", "CPU load's weight"),
    ArgSpec::new("memory.weight", ArgType::Int, "1", "memory load's weight"),
    ArgSpec::new("thresholds", ArgType::Nested, "cpu 80, mem 80", "load above which a node is refused (percent)")
        .checked(check),
    ArgSpec::new("estimator", ArgType::Nested, "", "shadow estimate of pods placed this session").checked(check),
]);

/// The CPU refusal, in Volcano's words.
pub const CPU_EXCEEDED: &str = "the CPU load of the node exceeds the upper limit.";
/// The memory refusal.
pub const MEMORY_EXCEEDED: &str = "the memory load of the node exceeds the upper limit.";

/// The estimator's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimator {
    /// Share of a pod's request it is expected to use.
    pub request_ratio: f64,
    /// Share of the headroom between request and limit it is expected to use.
    pub burst_ratio: f64,
    /// Composite load from which estimates are scaled by `risk_factor`.
    pub risk_threshold: f64,
    /// Scale of estimates on loaded nodes (≥ 1).
    pub risk_factor: f64,
    /// Millicores a BestEffort pod is expected to use.
    pub be_cpu: f64,
    /// Bytes a BestEffort pod is expected to use.
    pub be_mem: f64,
}

impl Default for Estimator {
    fn default() -> Self {
        Estimator {
            request_ratio: 0.7,
            burst_ratio: 0.0,
            risk_threshold: 0.6,
            risk_factor: 1.2,
            be_cpu: 250.0,
            be_mem: 200.0 * 1024.0 * 1024.0,
        }
    }
}

/// Volcano's `CalcCompositeUtilization`: load percent plus shadow over capacity, in [0, 1].
pub fn composite(real_pct: f64, shadow: f64, capacity: f64) -> f64 {
    if capacity <= 0.0 {
        return 0.0;
    }
    ((real_pct / 100.0 * capacity + shadow) / capacity).clamp(0.0, 1.0)
}

/// Volcano's `CalcLoadCompositePercentage`.
pub fn load_composite(cpu: f64, mem: f64, cw: i64, mw: i64) -> f64 {
    let tw = cw + mw;
    if tw == 0 { 0.0 } else { (cpu * cw as f64 + mem * mw as f64) / tw as f64 }
}

/// Volcano's `CalcAppliedRiskFactor`.
pub fn applied_risk_factor(load: f64, threshold: f64, factor: f64) -> f64 {
    if factor < 1.0 {
        return 1.0;
    }
    if load >= threshold { factor } else { 1.0 }
}

/// Volcano's `EstimatePodResource`.
pub fn estimate_pod(req: f64, lim: f64, req_w: f64, burst_w: f64, rf: f64) -> f64 {
    let req = req.max(0.0);
    let eff = if lim <= 0.0 || lim < req { req } else { lim };
    let burst = (eff - req).max(0.0);
    ((req * req_w + burst * burst_w) * rf).clamp(0.0, eff)
}

/// Volcano's `EstimateBestEffortResource`.
pub fn estimate_best_effort(v: f64, rf: f64) -> f64 {
    v.max(0.0) * rf
}

/// Volcano's `CalcNodeScore`.
pub fn node_score(cpu: f64, mem: f64, cw: i64, mw: i64, uw: i64) -> f64 {
    let tw = cw + mw;
    if tw == 0 {
        return 0.0;
    }
    ((1.0 - cpu) * cw as f64 + (1.0 - mem) * mw as f64) / tw as f64 * 100.0 * uw as f64
}

/// The plugin.
#[derive(Debug)]
pub struct Usage {
    usage_weight: i64,
    cpu_weight: i64,
    memory_weight: i64,
    cpu_threshold: f64,
    mem_threshold: f64,
    est: Estimator,
}

/// A `Go int` argument inside a map.
fn int_in(m: &std::collections::BTreeMap<String, ArgValue>, k: &str) -> Option<i64> {
    match m.get(k) {
        Some(ArgValue::Int(i)) => Some(*i),
        _ => None,
    }
}

fn num_in(m: &std::collections::BTreeMap<String, ArgValue>, k: &str) -> Option<f64> {
    match m.get(k) {
        Some(ArgValue::Int(i)) => Some(*i as f64),
        Some(ArgValue::Float(f)) => Some(*f),
        _ => None,
    }
}

/// `be_cpu` (millicores) or `be_mem` (bytes): an integer is millicores or MiB, a
/// string a Kubernetes quantity.
fn best_effort_value(v: &ArgValue, cpu: bool) -> Option<f64> {
    match v {
        ArgValue::Int(i) if *i >= 0 => Some(if cpu { *i as f64 } else { *i as f64 * 1024.0 * 1024.0 }),
        ArgValue::Str(s) => {
            let q = lahar_core::util::quantity::parse_quantity(s, if cpu { 1000 } else { 1 }).ok()?;
            (q >= 0).then_some(q as f64)
        }
        _ => None,
    }
}

/// Checks `thresholds` and `estimator`: (path below the argument, message).
pub fn check(key: &str, v: &ArgValue) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let ArgValue::Map(m) = v else {
        return vec![(String::new(), format!("expected a map, got {}", v.kind()))];
    };
    for (k, val) in m {
        let problem = match (key, k.as_str()) {
            ("thresholds", "cpu" | "mem") => match val {
                ArgValue::Int(i) if (0..=100).contains(i) => None,
                _ => Some("expected an integer percent from 0 to 100 (Volcano keeps 80 otherwise)".to_string()),
            },
            ("thresholds", _) => Some(format!("no threshold `{k}`; expected cpu or mem")),
            ("estimator", "request_ratio" | "burst_ratio" | "risk_threshold") => match val {
                ArgValue::Int(_) | ArgValue::Float(_) if num_in(m, k).is_some_and(|x| (0.0..=1.0).contains(&x)) => None,
                _ => Some("expected a number from 0 to 1 (Volcano keeps its default otherwise)".to_string()),
            },
            ("estimator", "risk_factor") => match num_in(m, k) {
                Some(x) if x >= 1.0 => None,
                _ => Some("expected a number ≥ 1 (Volcano keeps 1.2 otherwise)".to_string()),
            },
            ("estimator", "be_cpu" | "be_mem") => match best_effort_value(val, k == "be_cpu") {
                Some(_) => None,
                None => Some(format!(
                    "expected a quantity such as {} or an integer ≥ 0 ({})",
                    if k == "be_cpu" { "250m" } else { "200Mi" },
                    if k == "be_cpu" { "millicores" } else { "MiB" }
                )),
            },
            ("estimator", _) => Some(format!(
                "no estimator setting `{k}`; expected request_ratio, burst_ratio, risk_threshold, risk_factor, be_cpu or be_mem"
            )),
            _ => None,
        };
        if let Some(p) = problem {
            out.push((format!(".{k}"), p));
        }
    }
    out
}

impl Usage {
    /// Reads validated arguments (a negative weight means the default, as in Volcano).
    pub fn new(args: &Args) -> Usage {
        let w = |k: &str, d: i64| match args.int(k, d) {
            x if x < 0 => d,
            x => x,
        };
        let map = |k: &str| match args.0.get(k) {
            Some(ArgValue::Map(m)) => m.clone(),
            _ => Default::default(),
        };
        let (t, e) = (map("thresholds"), map("estimator"));
        let d = Estimator::default();
        Usage {
            usage_weight: w("usage.weight", 5),
            cpu_weight: w("cpu.weight", 1),
            memory_weight: w("memory.weight", 1),
            cpu_threshold: int_in(&t, "cpu").unwrap_or(80) as f64,
            mem_threshold: int_in(&t, "mem").unwrap_or(80) as f64,
            est: Estimator {
                request_ratio: num_in(&e, "request_ratio").unwrap_or(d.request_ratio),
                burst_ratio: num_in(&e, "burst_ratio").unwrap_or(d.burst_ratio),
                risk_threshold: num_in(&e, "risk_threshold").unwrap_or(d.risk_threshold),
                risk_factor: num_in(&e, "risk_factor").unwrap_or(d.risk_factor),
                be_cpu: e.get("be_cpu").and_then(|v| best_effort_value(v, true)).unwrap_or(d.be_cpu),
                be_mem: e.get("be_mem").and_then(|v| best_effort_value(v, false)).unwrap_or(d.be_mem),
            },
        }
    }

    /// The (cpu, memory) thresholds, in percent.
    pub fn thresholds(&self) -> (f64, f64) {
        (self.cpu_threshold, self.mem_threshold)
    }

    /// The estimator's settings (for tests and docs).
    pub fn estimator(&self) -> Estimator {
        self.est
    }

    /// (cpu %, memory %) load of the node as the session opened: its pods'
    /// requests but those placed in this session.
    pub fn load(ssn: &Session<'_>, n: NodeId) -> (f64, f64) {
        let st = ssn.node_state(n);
        let mut held = st.used;
        for &p in &st.pods {
            if ssn.pod(p).status == PodStatus::Allocated {
                held -= ssn.pod(p).req;
            }
        }
        let alloc = ssn.node(n).allocatable;
        let pct = |d: usize| if alloc.get(d) > 0 { held.get(d) as f64 * 100.0 / alloc.get(d) as f64 } else { 0.0 };
        (pct(CPU), pct(MEMORY))
    }

    /// The shadow estimate (millicores, bytes) of the pods placed on the node in
    /// this session, added in pod order with the risk factor of the node's load
    /// at each addition.
    fn shadow(&self, ssn: &Session<'_>, n: NodeId, load: (f64, f64)) -> (f64, f64) {
        let alloc = ssn.node(n).allocatable;
        let (cap_cpu, cap_mem) = (alloc.get(CPU) as f64, alloc.get(MEMORY) as f64);
        let (mut cpu, mut mem) = (0.0, 0.0);
        for &p in &ssn.node_state(n).pods {
            let pod = ssn.pod(p);
            if pod.status != PodStatus::Allocated {
                continue;
            }
            let composite_now = load_composite(
                composite(load.0, cpu, cap_cpu),
                composite(load.1, mem, cap_mem),
                self.cpu_weight,
                self.memory_weight,
            );
            let rf = applied_risk_factor(composite_now, self.est.risk_threshold, self.est.risk_factor);
            let (c, m) = self.estimate(&pod.req, pod.best_effort, rf);
            cpu += c;
            mem += m;
        }
        (cpu, mem)
    }

    fn estimate(&self, req: &Resources, best_effort: bool, rf: f64) -> (f64, f64) {
        if best_effort {
            return (estimate_best_effort(self.est.be_cpu, rf), estimate_best_effort(self.est.be_mem, rf));
        }
        let e = |v: i64| estimate_pod(v as f64, v as f64, self.est.request_ratio, self.est.burst_ratio, rf);
        (e(req.get(CPU)), e(req.get(MEMORY)))
    }
}

impl Plugin for Usage {
    fn name(&self) -> &'static str {
        "usage"
    }
    fn hooks(&self) -> Hooks {
        Hooks::PREDICATE.and(Hooks::NODE_SCORE)
    }
    fn predicate(&self, ssn: &Session<'_>, _: PodId, node: NodeId) -> Option<Result<(), String>> {
        let (cpu, mem) = Usage::load(ssn, node);
        Some(if cpu > self.cpu_threshold {
            Err(CPU_EXCEEDED.into())
        } else if mem > self.mem_threshold {
            Err(MEMORY_EXCEEDED.into())
        } else {
            Ok(())
        })
    }
    fn node_score(&self, ssn: &Session<'_>, _: PodId, node: NodeId) -> Option<f64> {
        let load = Usage::load(ssn, node);
        let (sc, sm) = self.shadow(ssn, node, load);
        let alloc = ssn.node(node).allocatable;
        let cpu = composite(load.0, sc, alloc.get(CPU) as f64);
        let mem = composite(load.1, sm, alloc.get(MEMORY) as f64);
        Some(node_score(cpu, mem, self.cpu_weight, self.memory_weight, self.usage_weight))
    }
    /// The score reads the node's pods and `used` only (not the pod): it holds while
    /// the node's `used` does.
    fn score_by_node(&self, _: &Session<'_>, _: PodId) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volcano::conf::parse;

    fn usage(args: &str) -> Result<Usage, String> {
        let text = format!("actions: allocate\ntiers:\n- plugins:\n  - name: usage\n    arguments: {args}\n");
        let c = parse(&text).map_err(|e| e.to_string())?;
        Ok(Usage::new(&c.tiers[0][0].args))
    }

    /// `TestUsageEstimatorConfig` (defaults and a valid estimator; its invalid
    /// estimator is refused, see `refused_where_volcano_keeps_defaults`),
    /// `TestUsageConfigParsesBestEffortResourceValues`.
    #[test]
    fn estimator_config() {
        assert_eq!(usage("{}").unwrap().estimator(), Estimator::default());
        let u = usage("{estimator: {request_ratio: 0.8, burst_ratio: 0.3, risk_threshold: 0.75, risk_factor: 1.5, be_cpu: 500m, be_mem: 300Mi}}").unwrap();
        let want = Estimator {
            request_ratio: 0.8,
            burst_ratio: 0.3,
            risk_threshold: 0.75,
            risk_factor: 1.5,
            be_cpu: 500.0,
            be_mem: 314572800.0,
        };
        assert_eq!(u.estimator(), want);
        let u = usage("{estimator: {be_cpu: 500, be_mem: 200}}").unwrap();
        assert_eq!((u.estimator().be_cpu, u.estimator().be_mem), (500.0, 209715200.0));
        // TestUsageWeightsKeepDefaultWhenNegative.
        let u = usage("{usage.weight: -1, cpu.weight: -1, memory.weight: -1}").unwrap();
        assert_eq!((u.usage_weight, u.cpu_weight, u.memory_weight), (5, 1, 1));
    }

    /// `TestUsageEstimatorConfig`'s invalid estimator,
    /// `TestUsageConfigKeepsDefaultForGenericStringValues` and
    /// `TestUsageThresholdsKeepDefaultWhenOutOfRange`: Volcano keeps its defaults
    /// silently; lahar refuses each value with its place.
    #[test]
    fn refused_where_volcano_keeps_defaults() {
        let e = usage("{estimator: {request_ratio: 1.5, burst_ratio: -0.1, risk_threshold: 2.0, risk_factor: 0.5, be_cpu: \"-1\", be_mem: bad}}").unwrap_err();
        for k in ["request_ratio", "burst_ratio", "risk_threshold", "risk_factor", "be_cpu", "be_mem"] {
            assert!(e.contains(&format!("arguments.estimator.{k}: expected")), "{k}: {e}");
        }
        let e =
            usage("{usage.weight: \"7\", thresholds: {cpu: \"85\", mem: 75.5}, estimator: {request_ratio: \"0.8\"}}")
                .unwrap_err();
        for p in [
            "arguments.usage.weight: expected an integer",
            "arguments.thresholds.cpu",
            "arguments.thresholds.mem",
            "arguments.estimator.request_ratio",
        ] {
            assert!(e.contains(p), "{p}: {e}");
        }
        let e = usage("{thresholds: {cpu: -1, mem: 101, memory: 70}}").unwrap_err();
        assert!(
            e.contains("thresholds.cpu") && e.contains("thresholds.mem:") && e.contains("no threshold `memory`"),
            "{e}"
        );
    }

    /// estimator_test.go, every case.
    #[test]
    fn estimator_formulas() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(close(load_composite(0.4, 0.6, 1, 1), 0.5), "equal weights");
        assert!(close(load_composite(0.8, 0.2, 3, 1), 0.65), "cpu weight dominant");
        assert_eq!(load_composite(0.8, 0.2, 0, 0), 0.0, "zero weights");
        assert_eq!(applied_risk_factor(0.59, 0.6, 1.2), 1.0, "below threshold");
        assert_eq!(applied_risk_factor(0.6, 0.6, 1.2), 1.2, "at threshold");
        assert_eq!(applied_risk_factor(0.9, 0.6, 1.2), 1.2, "above threshold");
        assert_eq!(applied_risk_factor(0.9, 0.6, 0.8), 1.0, "risk factor lower than one is ignored");
        assert!(close(estimate_pod(500.0, 2000.0, 1.0, 0.0, 1.0), 500.0), "default weights estimate request");
        assert_eq!(estimate_pod(500.0, 2000.0, 0.0, 0.0, 1.0), 0.0, "zero weights estimate zero");
        assert!(
            close(estimate_pod(500.0, 2000.0, 1.0, 1.0, 1.0), 2000.0),
            "request and burst weights cover full limit"
        );
        assert!(close(estimate_pod(500.0, 2000.0, 0.5, 0.2, 1.0), 550.0), "custom burst weight");
        assert!(close(estimate_pod(500.0, 600.0, 1.0, 0.0, 1.2), 600.0), "risk factor applies and clamps to limit");
        assert!(close(estimate_pod(500.0, 0.0, 1.0, 1.0, 1.2), 500.0), "missing limit uses request as effective limit");
        assert!(close(estimate_best_effort(250.0, 1.0), 250.0), "base configured value");
        assert!(close(estimate_best_effort(250.0, 1.2), 300.0), "risk factor applies");
        assert_eq!(estimate_best_effort(-1.0, 1.2), 0.0, "negative configured value is clamped to zero");
        assert!(close(composite(50.0, 0.0, 8000.0), 0.5), "no shadow load, 50% real");
        assert!(close(composite(50.0, 2000.0, 8000.0), 0.75), "50% real + shadow brings to 75%");
        assert_eq!(composite(80.0, 5000.0, 8000.0), 1.0, "overflow clamped to 1.0");
        assert_eq!(composite(50.0, 1000.0, 0.0), 0.0, "zero capacity returns 0");
        assert_eq!(composite(0.0, 0.0, 8000.0), 0.0, "zero everything");
        assert_eq!(composite(100.0, 0.0, 8000.0), 1.0, "100% real load, no shadow");
        assert!(close(node_score(0.0, 0.0, 1, 1, 1), 100.0), "zero utilization - max score with usageWeight=1");
        assert_eq!(node_score(1.0, 1.0, 1, 1, 1), 0.0, "full utilization - zero score");
        assert!(close(node_score(0.5, 0.5, 1, 1, 5), 250.0), "50% utilization both - score 250 with usageWeight=5");
        assert!(close(node_score(0.3, 0.5, 1, 1, 5), 300.0), "cpu 30%, mem 50%, equal weights, usageWeight=5");
        assert!(
            close(node_score(0.6, 0.5, 2, 8, 5), 240.0),
            "cpu 60%, mem 50%, cpu weight=2, mem weight=8, usageWeight=5"
        );
        assert_eq!(node_score(0.5, 0.5, 0, 0, 5), 0.0, "zero weights returns 0");
    }
}
