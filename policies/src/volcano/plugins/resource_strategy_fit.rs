//! `resource-strategy-fit` (Volcano's `plugins/resource-strategy-fit`): a node
//! score from per-resource MostAllocated / LeastAllocated strategies, a score for
//! keeping scarce resources free (`sra`) and a predicate that keeps CPU and memory
//! free in proportion to a node's idle GPUs (`proportional`).
//!
//! Arguments, read as Volcano's `mapstructure` decoding reads them:
//! - `resourceStrategyFitWeight` (10; negative means 10, 0 turns the strategy
//!   score off);
//! - `resources`: resource name (or a prefix pattern with one trailing `*`, such
//!   as `nvidia.com/*`; an exact name wins over patterns, the longest pattern over
//!   shorter ones) → `{type: MostAllocated | LeastAllocated, weight}` (weight ≤ 0
//!   means 1; absent type means LeastAllocated). Without `resources`: cpu and
//!   memory, LeastAllocated, weight 1.
//! - `sra: {enable, resources, weight, resourceWeight}`: `resources` a
//!   comma-separated list of scarce resources, `resourceWeight` their weights (1;
//!   negative means 1), `weight` the score's weight (0 when absent: no score).
//! - `proportional: {enable, resources, resourceProportion}`: for each listed
//!   resource `r`, `r.cpu` cores and `r.memory` GB (10⁹ bytes) to keep per idle
//!   unit of `r` (1 when absent; negative means 1).
//!
//! The strategy score of a pod on a node: over the resources the pod requests
//! that have a strategy, `Σ w·f / Σ w · 100 · resourceStrategyFitWeight`, with
//! `f = (used + request) / allocatable` (MostAllocated) or its complement
//! (LeastAllocated), 0 for a resource the node lacks; any resource whose
//! `used + request` exceeds allocatable makes the whole score 0. A pod with the
//! `volcano.sh/resource-strategy-scoring-type` annotation uses that type and the
//! weights of its `volcano.sh/resource-strategy-weight` annotation instead.
//!
//! The sra score: 0 if the node lacks a resource the pod requests; else
//! `(1 − Σ weights of the scarce resources the node has / Σ weights) · 100 ·
//! sra.weight`: nodes without scarce resources are preferred for pods that do not
//! need them.
//!
//! The proportional predicate passes a pod that requests a listed resource; any
//! other pod must leave, on a node with that resource, idle CPU and memory of at
//! least the node's idle units times the rates.
//!
//! Where lahar departs: an invalid pattern (`*`, `a*b`), an unknown `type` and a
//! key the plugin does not read are conf errors with their place; Volcano drops or
//! ignores them with a log line (docs/volcano.md).

use super::super::args::{ArgSpec, ArgType, ArgValue, Args};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{PodId, TaskScoring};
use lahar_core::model::resource::{CPU, DIMS, MEMORY, ResourceNames, Resources};
use lahar_core::session::Session;
use std::cell::OnceCell;
use std::collections::BTreeMap;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec =
    PluginSpec::new("resource-strategy-fit", |pc| Box::new(ResourceStrategyFit::new(&pc.args))).args(&[
        ArgSpec::new("resourceStrategyFitWeight", ArgType::Int, "10", "the node score's weight"),
        ArgSpec::new(
            "resources",
            ArgType::Nested,
            "cpu, memory LeastAllocated",
            "scoring type and weight per resource or prefix",
        )
        .checked(check),
        ArgSpec::new(
            "sra",
            ArgType::Nested,
            "",
            "scarce-resource avoidance (enable, resources, weight, resourceWeight)",
        )
        .checked(check),
        ArgSpec::new(
            "proportional",
            ArgType::Nested,
            "",
            "the proportional predicate (enable, resources, resourceProportion)",
        )
        .checked(check),
    ]);

/// Volcano's default plugin weight.
const DEFAULT_WEIGHT: i64 = 10;
/// Kubernetes' `MaxNodeScore`.
const MAX_NODE_SCORE: f64 = 100.0;

/// A per-resource strategy: MostAllocated (true) or LeastAllocated, and its weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strategy {
    /// MostAllocated (pack) rather than LeastAllocated (spread).
    pub most: bool,
    /// The resource's weight (≥ 1 from the conf; a pod's annotation may give 0).
    pub weight: i64,
}

/// The arguments, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct RsfConf {
    /// `resourceStrategyFitWeight`.
    pub weight: i64,
    /// `resources`: (pattern, strategy), sorted by pattern.
    pub resources: Vec<(String, Strategy)>,
    /// `sra`, when enabled: its weight and (resource, weight) list.
    pub sra: Option<(i64, Vec<(String, i64)>)>,
    /// `proportional`, when enabled: (resource, cpu cores, memory GB) per unit.
    pub proportional: Option<Vec<(String, f64, f64)>>,
}

impl RsfConf {
    /// Reads validated arguments.
    pub fn from_args(args: &Args) -> RsfConf {
        let w = args.int("resourceStrategyFitWeight", DEFAULT_WEIGHT);
        let mut resources: Vec<(String, Strategy)> = match args.0.get("resources") {
            Some(ArgValue::Map(m)) if !m.is_empty() => m
                .iter()
                .map(|(name, v)| {
                    let (most, weight) = match v {
                        ArgValue::Map(f) => (
                            matches!(f.get("type"), Some(ArgValue::Str(t)) if t == "MostAllocated"),
                            match f.get("weight") {
                                Some(ArgValue::Int(w)) if *w > 0 => *w,
                                _ => 1,
                            },
                        ),
                        _ => (false, 1),
                    };
                    (name.clone(), Strategy { most, weight })
                })
                .collect(),
            _ => ["cpu", "memory"].iter().map(|n| (n.to_string(), Strategy { most: false, weight: 1 })).collect(),
        };
        resources.sort_by(|a, b| a.0.cmp(&b.0));
        let section = |key: &str| match args.0.get(key) {
            Some(ArgValue::Map(m)) if enabled(m) => Some(m.clone()),
            _ => None,
        };
        let sra = section("sra").map(|m| {
            let weights = match m.get("resourceWeight") {
                Some(ArgValue::Map(w)) => w.clone(),
                _ => BTreeMap::new(),
            };
            let list = names(&m)
                .into_iter()
                .map(|n| {
                    let w = match weights.get(&n) {
                        Some(ArgValue::Int(w)) if *w < 0 => 1,
                        Some(ArgValue::Int(w)) => *w,
                        _ => 1,
                    };
                    (n, w)
                })
                .collect();
            (int(m.get("weight")).unwrap_or(0), list)
        });
        let proportional = section("proportional").map(|m| {
            let rates = match m.get("resourceProportion") {
                Some(ArgValue::Map(r)) => r.clone(),
                _ => BTreeMap::new(),
            };
            let rate = |k: String| match rates.get(&k).and_then(number) {
                Some(v) if v >= 0.0 => v,
                _ => 1.0,
            };
            names(&m).into_iter().map(|n| (n.clone(), rate(format!("{n}.cpu")), rate(format!("{n}.memory")))).collect()
        });
        RsfConf { weight: if w < 0 { DEFAULT_WEIGHT } else { w }, resources, sra, proportional }
    }

    /// The strategy for a resource name: the exact name, else the longest
    /// matching prefix pattern.
    pub fn strategy_for(&self, name: &str) -> Option<Strategy> {
        if let Some((_, s)) = self.resources.iter().find(|(p, _)| p == name) {
            return Some(*s);
        }
        self.resources
            .iter()
            .filter_map(|(p, s)| p.strip_suffix('*').filter(|pre| name.starts_with(pre)).map(|pre| (pre.len(), *s)))
            .max_by_key(|(len, _)| *len)
            .map(|(_, s)| s)
    }
}

fn enabled(m: &BTreeMap<String, ArgValue>) -> bool {
    match m.get("enable") {
        Some(ArgValue::Bool(b)) => *b,
        Some(ArgValue::Str(s)) => s == "true",
        _ => false,
    }
}

fn int(v: Option<&ArgValue>) -> Option<i64> {
    match v {
        Some(ArgValue::Int(i)) => Some(*i),
        _ => None,
    }
}

fn number(v: &ArgValue) -> Option<f64> {
    match v {
        ArgValue::Int(i) => Some(*i as f64),
        ArgValue::Float(f) => Some(*f),
        _ => None,
    }
}

/// A section's comma-separated `resources`, trimmed, empty entries dropped.
fn names(m: &BTreeMap<String, ArgValue>) -> Vec<String> {
    match m.get("resources") {
        Some(ArgValue::Str(s)) => s.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect(),
        _ => Vec::new(),
    }
}

/// Volcano's `isValidWildcardPattern`: no `*`, or one trailing `*` after a prefix.
pub fn valid_pattern(p: &str) -> bool {
    !p.contains('*') || (p != "*" && p.ends_with('*') && p.matches('*').count() == 1)
}

/// Checks the value of a map-valued argument (`resources`, `sra`,
/// `proportional`): every problem as (path below the argument, message).
pub fn check(key: &str, v: &ArgValue) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let ArgValue::Map(m) = v else {
        out.push((String::new(), format!("expected a map, got {}", v.kind())));
        return out;
    };
    let mut bad = |path: String, msg: String| out.push((path, msg));
    let field = |k: &str, want: &[&str]| format!("no field `{k}` here; expected {}", want.join(", "));
    match key {
        "resources" => {
            for (name, spec) in m {
                if !valid_pattern(name) {
                    bad(
                        format!(".{name}"),
                        "only a resource name or a prefix with one trailing `*` (such as `nvidia.com/*`) is read; Volcano drops this pattern".into(),
                    );
                }
                let ArgValue::Map(f) = spec else {
                    bad(format!(".{name}"), format!("expected a map with type and weight, got {}", spec.kind()));
                    continue;
                };
                for (k, fv) in f {
                    match (k.as_str(), fv) {
                        ("type", ArgValue::Str(t)) if t == "MostAllocated" || t == "LeastAllocated" => {}
                        ("type", _) => {
                            bad(format!(".{name}.type"), "expected MostAllocated or LeastAllocated".into());
                        }
                        ("weight", ArgValue::Int(_)) => {}
                        ("weight", _) => bad(format!(".{name}.weight"), "expected an integer".into()),
                        _ => bad(format!(".{name}.{k}"), field(k, &["type", "weight"])),
                    }
                }
            }
        }
        "sra" => {
            for (k, fv) in m {
                match (k.as_str(), fv) {
                    ("enable", ArgValue::Bool(_)) | ("resources", ArgValue::Str(_)) | ("weight", ArgValue::Int(_)) => {}
                    ("enable", ArgValue::Str(s)) if s == "true" || s == "false" => {}
                    ("enable", _) => bad(".enable".into(), "expected true or false".into()),
                    ("resources", _) => bad(".resources".into(), "expected a comma-separated string".into()),
                    ("weight", _) => bad(".weight".into(), "expected an integer".into()),
                    ("resourceWeight", ArgValue::Map(w)) => {
                        let listed = names(m);
                        for (r, rv) in w {
                            if !matches!(rv, ArgValue::Int(_)) {
                                bad(format!(".resourceWeight.{r}"), "expected an integer".into());
                            } else if !listed.contains(r) {
                                bad(
                                    format!(".resourceWeight.{r}"),
                                    format!("`{r}` is not in sra.resources, so its weight is not read"),
                                );
                            }
                        }
                    }
                    ("resourceWeight", _) => {
                        bad(".resourceWeight".into(), "expected a map of resource → integer".into())
                    }
                    _ => bad(format!(".{k}"), field(k, &["enable", "resources", "weight", "resourceWeight"])),
                }
            }
        }
        "proportional" => {
            for (k, fv) in m {
                match (k.as_str(), fv) {
                    ("enable", ArgValue::Bool(_)) | ("resources", ArgValue::Str(_)) => {}
                    ("enable", ArgValue::Str(s)) if s == "true" || s == "false" => {}
                    ("enable", _) => bad(".enable".into(), "expected true or false".into()),
                    ("resources", _) => bad(".resources".into(), "expected a comma-separated string".into()),
                    ("resourceProportion", ArgValue::Map(r)) => {
                        let listed = names(m);
                        for (rk, rv) in r {
                            if number(rv).is_none() {
                                bad(format!(".resourceProportion.{rk}"), "expected a number".into());
                                continue;
                            }
                            let known = rk
                                .strip_suffix(".cpu")
                                .or_else(|| rk.strip_suffix(".memory"))
                                .is_some_and(|base| listed.iter().any(|n| n == base));
                            if !known {
                                bad(
                                    format!(".resourceProportion.{rk}"),
                                    "expected `<resource>.cpu` or `<resource>.memory` for a resource in proportional.resources; this key is not read".into(),
                                );
                            }
                        }
                    }
                    ("resourceProportion", _) => {
                        bad(".resourceProportion".into(), "expected a map of `<resource>.cpu|memory` → number".into())
                    }
                    _ => bad(format!(".{k}"), field(k, &["enable", "resources", "resourceProportion"])),
                }
            }
        }
        _ => {}
    }
    out
}

/// The strategy score (before any weighting by the caller's tier sum): Volcano's
/// `Score`. `strategy(d)` is the strategy of dimension `d`, if it has one.
pub fn strategy_score(
    req: &Resources,
    used: &Resources,
    alloc: &Resources,
    weight: i64,
    strategy: impl Fn(usize) -> Option<Strategy>,
) -> f64 {
    let (mut score, mut sum) = (0.0, 0i64);
    for d in (0..DIMS).filter(|&d| req.get(d) > 0) {
        let Some(s) = strategy(d) else { continue };
        let (r, u, cap) = (req.get(d) as f64, used.get(d) as f64, alloc.get(d) as f64);
        if s.weight != 0 && cap != 0.0 {
            let total = r + u;
            if total > cap {
                return 0.0;
            }
            score += if s.most { total } else { cap - total } * s.weight as f64 / cap;
        }
        sum += s.weight;
    }
    if sum > 0 {
        score /= sum as f64;
    }
    score * MAX_NODE_SCORE * weight as f64
}

/// The sra score: Volcano's `sraScore`. `scarce` is (dimension, weight) of the
/// scarce resources the cluster knows; `weight_sum` sums every listed weight.
pub fn sra_score(req: &Resources, alloc: &Resources, scarce: &[(usize, i64)], weight_sum: i64, weight: i64) -> f64 {
    if (0..DIMS).any(|d| req.get(d) > 0 && alloc.get(d) == 0) {
        return 0.0;
    }
    let mut score: f64 = scarce.iter().filter(|(d, _)| alloc.get(*d) > 0).map(|(_, w)| *w as f64).sum();
    if weight_sum > 0 {
        score = 1.0 - score / weight_sum as f64;
    }
    score * MAX_NODE_SCORE * weight as f64
}

/// The proportional check on a node's idle resources: `None` when it passes, else
/// the resource whose reservation the pod would eat into.
pub fn proportional_failure<'a>(
    req: &Resources,
    idle: &Resources,
    alloc: &Resources,
    rules: &'a [(usize, f64, f64, String)],
) -> Option<&'a str> {
    if rules.iter().any(|(d, ..)| req.get(*d) > 0) {
        return None;
    }
    rules.iter().find_map(|(d, cpu, mem, name)| {
        // A node without the resource has no entry in Volcano's idle map.
        if alloc.get(*d) <= 0 {
            return None;
        }
        let units = idle.get(*d) as f64;
        let short = ((idle.get(CPU) - req.get(CPU)) as f64) < units * cpu
            || ((idle.get(MEMORY) - req.get(MEMORY)) as f64) < units * mem * 1e6;
        short.then_some(name.as_str())
    })
}

/// Conf facts resolved against the cluster's resource names (on first use).
#[derive(Debug)]
struct Resolved {
    strategies: [Option<Strategy>; DIMS],
    scarce: Vec<(usize, i64)>,
    scarce_sum: i64,
    proportional: Vec<(usize, f64, f64, String)>,
}

/// The plugin.
#[derive(Debug)]
pub struct ResourceStrategyFit {
    conf: RsfConf,
    resolved: OnceCell<Resolved>,
}

impl ResourceStrategyFit {
    /// Reads the arguments.
    pub fn new(args: &Args) -> ResourceStrategyFit {
        ResourceStrategyFit { conf: RsfConf::from_args(args), resolved: OnceCell::new() }
    }

    fn resolved(&self, names: &ResourceNames) -> &Resolved {
        self.resolved.get_or_init(|| {
            let mut strategies = [None; DIMS];
            for (d, s) in strategies.iter_mut().enumerate().take(names.len()) {
                *s = self.conf.strategy_for(names.name(d));
            }
            let (weight_list, proportional) =
                (self.conf.sra.as_ref().map(|s| &s.1[..]).unwrap_or(&[]), &self.conf.proportional);
            Resolved {
                strategies,
                scarce: weight_list.iter().filter_map(|(n, w)| names.dim(n).map(|d| (d, *w))).collect(),
                scarce_sum: weight_list.iter().map(|(_, w)| w).sum(),
                proportional: proportional
                    .iter()
                    .flatten()
                    .filter_map(|(n, c, m)| names.dim(n).map(|d| (d, *c, *m, n.clone())))
                    .collect(),
            }
        })
    }

    fn sra_weight(&self) -> i64 {
        self.conf.sra.as_ref().map_or(0, |s| s.0)
    }
}

/// A pod's own strategy for dimension `d` from its annotations.
fn pod_strategy(s: &TaskScoring, d: usize) -> Option<Strategy> {
    s.weights.iter().find(|(x, _)| *x == d).map(|&(_, weight)| Strategy { most: s.most_allocated, weight })
}

impl Plugin for ResourceStrategyFit {
    fn name(&self) -> &'static str {
        "resource-strategy-fit"
    }
    fn hooks(&self) -> Hooks {
        Hooks::when(self.conf.proportional.is_some(), Hooks::PREDICATE)
            .and(Hooks::when(self.conf.weight > 0 || self.sra_weight() > 0, Hooks::NODE_SCORE))
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        self.conf.proportional.as_ref()?;
        let r = self.resolved(&ssn.cluster().resource_names);
        let alloc = ssn.node(node).allocatable;
        let idle = alloc - ssn.node_state(node).used;
        Some(match proportional_failure(&ssn.pod(pod).req, &idle, &alloc, &r.proportional) {
            None => Ok(()),
            Some(name) => Err(format!("proportional of resource {name} check failed")),
        })
    }
    fn predicate_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        let r = self.resolved(&ssn.cluster().resource_names);
        r.proportional.is_empty() || r.proportional.iter().any(|(d, ..)| ssn.pod(pod).req.get(*d) > 0)
    }
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        if !self.hooks().has(Hooks::NODE_SCORE) {
            return None;
        }
        let r = self.resolved(&ssn.cluster().resource_names);
        let p = ssn.pod(pod);
        let (req, alloc) = (p.req, ssn.node(node).allocatable);
        let mut score = 0.0;
        if self.conf.weight > 0 {
            let used = ssn.node_state(node).used;
            let job = ssn.job(p.job);
            score += match job.spec.tasks[p.task as usize].hints.as_deref().and_then(|h| h.scoring.as_ref()) {
                Some(own) => strategy_score(&req, &used, &alloc, self.conf.weight, |d| pod_strategy(own, d)),
                None => strategy_score(&req, &used, &alloc, self.conf.weight, |d| r.strategies[d]),
            };
        }
        if self.sra_weight() > 0 {
            score += sra_score(&req, &alloc, &r.scarce, r.scarce_sum, self.sra_weight());
        }
        Some(score)
    }
    /// The scores read the pod's request, the node's allocatable and its `used`
    /// — and, for a pod with its own scoring annotations, those: such a pod's
    /// scores are not shared with other pods of its request.
    fn score_by_node(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        let p = ssn.pod(pod);
        ssn.job(p.job).spec.tasks[p.task as usize].hints.as_deref().is_none_or(|h| h.scoring.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volcano::conf::parse;

    fn conf(args: &str) -> RsfConf {
        let text =
            format!("actions: allocate\ntiers:\n- plugins:\n  - name: resource-strategy-fit\n    arguments: {args}\n");
        let c = parse(&text).unwrap_or_else(|e| panic!("{e}"));
        RsfConf::from_args(&c.tiers[0][0].args)
    }

    fn least(w: i64) -> Strategy {
        Strategy { most: false, weight: w }
    }
    fn most(w: i64) -> Strategy {
        Strategy { most: true, weight: w }
    }

    /// Volcano's `Test_calculateWeight` test1–test3 (test4–test7 give patterns
    /// Volcano drops; lahar refuses them, see `invalid_patterns_are_refused`).
    #[test]
    fn calculate_weight() {
        let c = conf(
            "{resourceStrategyFitWeight: 10, resources: {cpu: {type: MostAllocated, weight: 1}, memory: {type: LeastAllocated, weight: 2}}}",
        );
        assert_eq!((c.weight, c.resources.clone()), (10, vec![("cpu".into(), most(1)), ("memory".into(), least(2))]));
        let c = conf("{resources: {cpu: {type: MostAllocated, weight: 1}, memory: {type: LeastAllocated, weight: 2}}}");
        assert_eq!((c.weight, c.resources.clone()), (10, vec![("cpu".into(), most(1)), ("memory".into(), least(2))]));
        let c = conf("{resourceStrategyFitWeight: 10}");
        assert_eq!((c.weight, c.resources), (10, vec![("cpu".into(), least(1)), ("memory".into(), least(1))]));
        // Weights ≤ 0 mean 1, a negative plugin weight means 10, 0 stays 0.
        let c = conf("{resourceStrategyFitWeight: -3, resources: {cpu: {weight: 0}}}");
        assert_eq!((c.weight, c.resources), (10, vec![("cpu".into(), least(1))]));
        assert_eq!(conf("{resourceStrategyFitWeight: 0}").weight, 0);
    }

    #[test]
    fn invalid_patterns_are_refused() {
        for p in ["\"*\"", "cloudml.gpu**", "cloudml.*.gpu", "\"*.com/gpu\"", "\"*test*resource*\""] {
            let text = format!(
                "actions: allocate\ntiers:\n- plugins:\n  - name: resource-strategy-fit\n    arguments: {{resources: {{{p}: {{type: MostAllocated}}}}}}\n"
            );
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains("arguments.resources.") && e.contains("trailing `*`"), "{p}: {e}");
        }
        assert!(valid_pattern("nvidia.com/gpu/*") && valid_pattern("cpu") && !valid_pattern("*"));
    }

    /// Volcano's `Test_findResourceConfigWithPrefix`.
    #[test]
    fn find_resource_config_with_prefix() {
        let c = conf(
            "{resources: {nvidia.com/gpu: {type: MostAllocated, weight: 3}, nvidia.com/*: {type: LeastAllocated, weight: 1}}}",
        );
        assert_eq!(c.strategy_for("nvidia.com/gpu"), Some(most(3)), "exact_match_priority");
        let c = conf(
            "{resources: {nvidia.com/gpu/*: {type: MostAllocated, weight: 2}, nvidia.com/*: {type: LeastAllocated, weight: 1}}}",
        );
        assert_eq!(c.strategy_for("nvidia.com/gpu/v100"), Some(most(2)), "longest_prefix_match");
        let c = conf("{resources: {nvidia.com/gpu/*: {type: MostAllocated, weight: 2}}}");
        assert_eq!(c.strategy_for("example.com/foo"), None, "no_match_found");
        let c = RsfConf { weight: 10, resources: Vec::new(), sra: None, proportional: None };
        assert_eq!(c.strategy_for("any.resource"), None, "empty_resources_map");
        let c = conf(
            "{resources: {cloudml.gpu/tensorflow/*: {type: MostAllocated, weight: 3}, cloudml.gpu/*: {type: LeastAllocated, weight: 2}, cloudml/*: {type: MostAllocated, weight: 1}}}",
        );
        assert_eq!(
            c.strategy_for("cloudml.gpu/tensorflow/v2"),
            Some(most(3)),
            "multiple_valid_wildcards_longest_match"
        );
    }

    fn cpu_mem(cpu: i64, mem: i64) -> Resources {
        let mut r = Resources::ZERO;
        r.set(CPU, cpu);
        r.set(MEMORY, mem);
        r
    }

    /// Volcano's `TestScore` (its cases use millicores and bytes as given).
    #[test]
    fn score() {
        let lm = |w, cpu: Strategy, mem: Strategy| (w, [(CPU, cpu), (MEMORY, mem)]);
        // (name, request cpu/mem, used cpu/mem and allocatable cpu/mem, strategies, want)
        type Case = (&'static str, (i64, i64), (i64, i64, i64, i64), (i64, [(usize, Strategy); 2]), f64);
        let cases: &[Case] = &[
            ("test1", (100, 100), (200, 200, 500, 500), lm(10, least(1), least(1)), 400.0),
            ("test2", (100, 100), (200, 200, 400, 400), lm(10, least(1), least(1)), 250.0),
            ("test3", (100, 100), (200, 200, 500, 500), lm(10, most(1), most(1)), 600.0),
            ("test4", (100, 100), (200, 200, 400, 400), lm(10, most(1), most(1)), 750.0),
            ("test5", (100, 100), (200, 200, 500, 500), lm(10, least(2), most(1)), 466.66666667),
            ("test6", (100, 100), (200, 200, 500, 500), lm(10, least(1), most(2)), 533.33333333),
            ("test7", (0, 100), (200, 200, 500, 500), lm(10, least(1), most(2)), 600.0),
            ("test8", (100, 100), (200, 200, 0, 400), lm(10, least(1), most(2)), 500.0),
            ("zero-resources-requested", (0, 0), (200, 200, 500, 500), lm(10, least(1), least(1)), 0.0),
            ("node-fully-allocated", (100, 100), (500, 500, 500, 500), lm(10, least(1), least(1)), 0.0),
            ("mixed-scoring-strategies", (100, 100), (200, 200, 500, 500), lm(10, least(3), most(1)), 450.0),
            ("high-weight-scenario", (100, 100), (200, 200, 500, 500), lm(20, least(5), least(5)), 800.0),
        ];
        for (name, (rc, rm), (uc, um, ac, am), (w, strat), want) in cases {
            let got = strategy_score(&cpu_mem(*rc, *rm), &cpu_mem(*uc, *um), &cpu_mem(*ac, *am), *w, |d| {
                strat.iter().find(|(x, _)| *x == d).map(|(_, s)| *s)
            });
            assert!((got - want).abs() < 1e-6, "{name}: {got} != {want}");
        }
        // test9: memory alone, MostAllocated 2.
        let got = strategy_score(&cpu_mem(100, 100), &cpu_mem(200, 200), &cpu_mem(500, 500), 10, |d| {
            (d == MEMORY).then_some(most(2))
        });
        assert!((got - 600.0).abs() < 1e-6, "test9: {got}");
        // The pod-level cases: the annotation's type and weights replace the conf's.
        let own = |most, w: &[(usize, i64)]| TaskScoring { most_allocated: most, weights: w.to_vec() };
        let pod = |s: &TaskScoring| {
            strategy_score(&cpu_mem(100, 100), &cpu_mem(200, 200), &cpu_mem(500, 500), 10, |d| pod_strategy(s, d))
        };
        let cases = [
            ("pod-level-scoring-least-allocated", own(false, &[(CPU, 2), (MEMORY, 1)]), 400.0),
            ("pod-level-scoring-most-allocated", own(true, &[(CPU, 1), (MEMORY, 2)]), 600.0),
            ("pod-level-scoring-missing-resource-weight", own(false, &[(CPU, 2)]), 400.0),
        ];
        for (name, s, want) in cases {
            assert!((pod(&s) - want).abs() < 1e-6, "{name}: {}", pod(&s));
        }
    }

    /// Volcano's `Test_mostRequestedScore` and `Test_leastRequestedScore`
    /// (test1: nothing requested of a resource the node lacks, weight 0, scores
    /// 0; test2: 1 requested on 2 used of 2, over capacity, zeroes the score).
    #[test]
    fn most_and_least_requested() {
        let r = |v| cpu_mem(v, 0);
        for s in [most(0), least(0)] {
            assert_eq!(strategy_score(&r(0), &r(0), &r(0), 10, |d| (d == CPU).then_some(s)), 0.0, "test1");
        }
        for s in [most(1), least(1)] {
            assert_eq!(strategy_score(&r(1), &r(2), &r(2), 10, |d| (d == CPU).then_some(s)), 0.0, "test2");
        }
    }

    /// Volcano's `TestArguments` (sra and proportional sections).
    #[test]
    fn arguments() {
        let c = conf(
            "{sra: {enable: true, resources: \"nvidia.com/t4, nvidia.com/a10\", weight: 3, resourceWeight: {nvidia.com/t4: 1, nvidia.com/a10: 2}}, proportional: {enable: true, resources: \"nvidia.com/t4, nvidia.com/a10\", resourceProportion: {nvidia.com/t4.cpu: 3, nvidia.com/t4.memory: 6, nvidia.com/a10.cpu: 4, nvidia.com/a10.memory: 8}}}",
        );
        assert_eq!(c.sra, Some((3, vec![("nvidia.com/t4".into(), 1), ("nvidia.com/a10".into(), 2)])));
        assert_eq!(c.proportional, Some(vec![("nvidia.com/t4".into(), 3.0, 6.0), ("nvidia.com/a10".into(), 4.0, 8.0)]));
        // Disabled sections are not read; sra without a weight scores nothing.
        let c = conf("{sra: {enable: false, resources: a, weight: 3}, proportional: {resources: a}}");
        assert_eq!((c.sra, c.proportional), (None, None));
        assert_eq!(conf("{sra: {enable: true, resources: a}}").sra, Some((0, vec![("a".into(), 1)])));
    }

    #[test]
    fn nested_errors_are_located() {
        let text = "actions: allocate\ntiers:\n- plugins:\n  - name: resource-strategy-fit\n    arguments:\n      resources: {cpu: {type: Most, wieght: 2}}\n      sra: {enable: 2, resourceWeight: {x: 1}}\n      proportional: {enable: true, resources: a, resourceProportion: {a.gpu: 1}}\n";
        let e = parse(text).unwrap_err().to_string();
        for want in [
            "6:18: tiers[0].plugins[0].arguments.resources.cpu.type: expected MostAllocated or LeastAllocated",
            "arguments.resources.cpu.wieght: no field `wieght` here; expected type, weight",
            "7:12: tiers[0].plugins[0].arguments.sra.enable: expected true or false",
            "arguments.sra.resourceWeight.x: `x` is not in sra.resources",
            "8:21: tiers[0].plugins[0].arguments.proportional.resourceProportion.a.gpu: expected `<resource>.cpu`",
        ] {
            assert!(e.contains(want), "missing {want:?} in:\n{e}");
        }
    }

    /// Volcano's `Test_checkNodeResourceIsProportional`: 4 cores and 4 GB per idle GPU.
    #[test]
    fn check_node_resource_is_proportional() {
        const G: i64 = 1_000_000_000;
        let r = |cpu: i64, mem: i64, gpu: i64| Resources::new(cpu * 1000, mem * G, gpu * 1000, 0);
        let rules = [(lahar_core::model::resource::GPU, 4.0, 4.0, "nvidia.com/gpu".to_string())];
        let (t1, t2, t3) = (r(4, 4, 0), r(10, 10, 0), r(10, 10, 1));
        let (n1, n2) = (r(30, 30, 6), r(26, 26, 2));
        let check = |t: &Resources, n: &Resources| proportional_failure(t, n, n, &rules);
        assert_eq!(check(&t1, &n1), None, "cpu_task_less_than_reserved_resource");
        assert_eq!(check(&t2, &n1), Some("nvidia.com/gpu"), "cpu_task_greater_than_reserved_resource");
        assert_eq!(check(&t3, &n1), None, "gpu_task_no_proportional_check");
        assert_eq!(check(&t2, &n2), None, "cpu_task_less_than_idle_resource");
    }

    #[test]
    fn sra_prefers_nodes_without_scarce_resources() {
        // TestNode case1's p1 (cpu, memory, pods) on n1 (no GPUs), n2 (t4 only) and
        // n4 (both), t4 weight 2, a10 weight 3, sra.weight 5.
        let (t4, a10) = (4, 5);
        let scarce = [(t4, 2), (a10, 3)];
        let mut node = Resources::new(8000, 16 << 30, 0, 10);
        let p1 = Resources::new(1000, 1 << 30, 0, 1);
        assert_eq!(sra_score(&p1, &node, &scarce, 5, 5), 500.0);
        node.set(t4, 16_000);
        assert!((sra_score(&p1, &node, &scarce, 5, 5) - 300.0).abs() < 1e-9);
        node.set(a10, 16_000);
        assert_eq!(sra_score(&p1, &node, &scarce, 5, 5), 0.0);
        // A pod asking for a resource the node lacks scores 0.
        let mut p3 = p1;
        p3.set(7, 2000);
        assert_eq!(sra_score(&p3, &node, &scarce, 5, 5), 0.0);
    }
}
