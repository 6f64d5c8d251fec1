//! `rescheduling` (Volcano's `plugins/rescheduling`): every `interval`, the
//! `lowNodeUtilization` strategy names pods on busy nodes for the `shuffle` action
//! to evict, so they may be placed again on idle nodes.
//!
//! A node's utilisation is what its pods request, as a percentage of its
//! allocatable cpu and memory (the simulation's own load, as for `usage`; Volcano
//! reads a metrics average). With the strategy's `thresholds` and
//! `targetThresholds` (percent, default 100 each): a node is *low* when it is not
//! cordoned and every resource is below its threshold, *high* when some resource
//! is above its target. Unless there is no low node, every node is low, or there is
//! no high node, the room the low nodes have up to their targets is summed, and
//! the high nodes (busiest first: cpu + memory percent) give up pods — lowest
//! priority first, BestEffort before others — while some resource of the node is
//! still at or above its target and neither summed room is exactly zero; each
//! pod taken lowers the room and the node's utilisation.
//!
//! The interval starts at the run's start, as Volcano's starts with the scheduler:
//! the strategy runs in the first session more than `interval` after the last run.
//! Volcano opens a session every second; lahar asks for a session then.

use super::super::args::{ArgSpec, ArgType, ArgValue, Args};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::model::cluster::{NodeId, Taint};
use lahar_core::model::job::{PodId, PodStatus};
use lahar_core::model::resource::{CPU, MEMORY};
use lahar_core::session::Session;
use lahar_core::util::time::{SimDuration, SimTime};

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("rescheduling", |pc| Box::new(Rescheduling::new(&pc.args))).args(&[
    ArgSpec::new("interval", ArgType::Duration, "5m", "how often shuffle asks for victims"),
    ArgSpec::new("metricsPeriod", ArgType::Duration, "", "accepted; lahar's utilisation is the simulation's load"),
    ArgSpec::new("strategies", ArgType::Nested, "", "lowNodeUtilization with its thresholds").checked(check),
    ArgSpec::new("labelSelector", ArgType::Nested, "", "accepted (the design's; Volcano's code does not read it)")
        .checked(check),
    ArgSpec::new("queueSelector", ArgType::List, "", "accepted (the design's; Volcano's code does not read it)"),
]);

/// The plugin.
#[derive(Debug)]
pub struct Rescheduling {
    interval: SimDuration,
    /// (cpu, memory) thresholds and targets, percent.
    thresholds: [f64; 2],
    targets: [f64; 2],
    /// Whether lowNodeUtilization is among the strategies.
    low_node: bool,
    last: SimTime,
    /// The strategy runs in this session.
    due: bool,
}

/// The `interval` argument (a Go duration; default 5m).
fn interval(args: &Args) -> SimDuration {
    SimDuration(args.str("interval").and_then(lahar_core::util::time::parse_go_duration).unwrap_or(300_000_000))
}

/// The lowNodeUtilization params of `strategies` (`None`: not listed), else the
/// default.
fn strategy(args: &Args) -> Option<Option<&std::collections::BTreeMap<String, ArgValue>>> {
    let Some(ArgValue::List(list)) = args.0.get("strategies") else { return Some(None) };
    if list.is_empty() {
        return Some(None);
    }
    list.iter().find_map(|s| match s {
        ArgValue::Map(m) if matches!(m.get("name"), Some(ArgValue::Str(n)) if n == "lowNodeUtilization") => {
            Some(match m.get("params") {
                Some(ArgValue::Map(p)) => Some(p),
                _ => None,
            })
        }
        _ => None,
    })
}

fn percents(params: Option<&std::collections::BTreeMap<String, ArgValue>>, key: &str) -> [f64; 2] {
    let get = |r: &str| match params.and_then(|p| p.get(key)) {
        Some(ArgValue::Map(m)) => match m.get(r) {
            Some(ArgValue::Int(i)) => *i as f64,
            _ => 100.0,
        },
        _ => 100.0,
    };
    [get("cpu"), get("memory")]
}

impl Rescheduling {
    /// The plugin for its (checked) arguments.
    pub fn new(args: &Args) -> Rescheduling {
        let s = strategy(args);
        let params = s.flatten();
        Rescheduling {
            interval: interval(args),
            thresholds: percents(params, "thresholds"),
            targets: percents(params, "targetThresholds"),
            low_node: s.is_some(),
            last: SimTime::ZERO,
            due: false,
        }
    }

    /// The interval (µs), the (cpu, memory) thresholds and the targets, percent.
    pub fn settings(&self) -> (u64, [f64; 2], [f64; 2]) {
        (self.interval.0, self.thresholds, self.targets)
    }

    /// (cpu, memory) utilisation of node `n`, percent.
    fn utilisation(ssn: &Session<'_>, n: NodeId) -> [f64; 2] {
        let (used, alloc) = (ssn.node_state(n).used, ssn.node(n).allocatable);
        [CPU, MEMORY].map(|d| if alloc.get(d) > 0 { used.get(d) as f64 * 100.0 / alloc.get(d) as f64 } else { 0.0 })
    }

    /// Volcano's `victimsFnForLnu`.
    fn victims(&self, ssn: &Session<'_>, running: &[PodId]) -> Vec<PodId> {
        let nodes: Vec<NodeId> = (0..ssn.node_count() as u32).map(NodeId).collect();
        let mut util: Vec<[f64; 2]> = nodes.iter().map(|&n| Self::utilisation(ssn, n)).collect();
        let cordoned = |n: NodeId| ssn.node(n).taints.iter().any(|t| t.key == Taint::UNSCHEDULABLE);
        let low: Vec<NodeId> = nodes
            .iter()
            .copied()
            .filter(|&n| !cordoned(n) && (0..2).all(|r| util[n.0 as usize][r] < self.thresholds[r]))
            .collect();
        let mut high: Vec<NodeId> = nodes
            .iter()
            .copied()
            .filter(|n| !low.contains(n) && (0..2).any(|r| util[n.0 as usize][r] > self.targets[r]))
            .collect();
        if low.is_empty() || low.len() == nodes.len() || high.is_empty() {
            return Vec::new();
        }
        // Room the low nodes have up to their targets: millicores and bytes,
        // truncated as Volcano's quantities are.
        let mut room = [0i64; 2];
        for &n in &low {
            let alloc = ssn.node(n).allocatable;
            for (r, d) in [CPU, MEMORY].into_iter().enumerate() {
                let cap = alloc.get(d) as f64;
                room[r] += (self.targets[r] * cap * 0.01) as i64 - (util[n.0 as usize][r] * cap * 0.01) as i64;
            }
        }
        // Busiest first (Volcano's sort is not stable; ties keep node order here).
        high.sort_by(|&a, &b| {
            let s = |n: NodeId| util[n.0 as usize][0] + util[n.0 as usize][1];
            s(b).partial_cmp(&s(a)).unwrap_or(std::cmp::Ordering::Equal)
        });
        let mut out = Vec::new();
        for n in high {
            let mut pods: Vec<PodId> = ssn.node_state(n).pods.clone();
            // Lowest priority first, BestEffort before the others.
            pods.sort_by_key(|&p| (ssn.pod(p).priority, !ssn.pod(p).best_effort));
            let alloc = ssn.node(n).allocatable;
            for p in pods {
                let u = util[n.0 as usize];
                let go_on = (0..2).any(|r| u[r] >= self.targets[r]) && room.iter().all(|&x| x != 0);
                if !go_on {
                    break;
                }
                if ssn.pod(p).status != PodStatus::Running || running.binary_search(&p).is_err() {
                    continue;
                }
                let req = ssn.pod(p).req;
                for (r, d) in [CPU, MEMORY].into_iter().enumerate() {
                    room[r] -= req.get(d);
                    if alloc.get(d) > 0 {
                        util[n.0 as usize][r] -= req.get(d) as f64 * 100.0 / alloc.get(d) as f64;
                    }
                }
                out.push(p);
            }
        }
        out.sort_unstable();
        out
    }
}

impl Plugin for Rescheduling {
    fn name(&self) -> &'static str {
        "rescheduling"
    }
    fn hooks(&self) -> Hooks {
        Hooks::VICTIM_TASKS
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        // Volcano's timeToRun: strictly more than `interval` since the last run.
        let next = self.last.plus(self.interval);
        self.due = self.low_node && ssn.now() > next;
        if self.due {
            self.last = ssn.now();
            ssn.request_wakeup(ssn.now().plus(self.interval).plus(SimDuration(1)));
        } else if self.low_node {
            ssn.request_wakeup(next.plus(SimDuration(1)));
        }
    }
    fn victim_tasks(&self, ssn: &Session<'_>, running: &[PodId]) -> Option<Vec<PodId>> {
        if !self.due {
            return None;
        }
        let mut sorted = running.to_vec();
        sorted.sort_unstable();
        Some(self.victims(ssn, &sorted))
    }
}

/// The problems in `strategies`: (path below the argument, message).
pub fn check(key: &str, v: &ArgValue) -> Vec<(String, String)> {
    if key == "labelSelector" {
        return match v {
            ArgValue::Map(_) => Vec::new(),
            _ => vec![(String::new(), format!("expected a map of labels, got {}", v.kind()))],
        };
    }
    let ArgValue::List(list) = v else {
        return vec![(String::new(), format!("expected a list of strategies, got {}", v.kind()))];
    };
    let mut out = Vec::new();
    for (i, s) in list.iter().enumerate() {
        let at = |k: &str| format!("[{i}]{k}");
        let ArgValue::Map(m) = s else {
            out.push((at(""), "expected a strategy `{name, params}`".into()));
            continue;
        };
        for k in m.keys().filter(|k| !matches!(k.as_str(), "name" | "params")) {
            out.push((at(&format!(".{k}")), "unknown field; expected name or params".into()));
        }
        match m.get("name") {
            Some(ArgValue::Str(n)) if n == "lowNodeUtilization" => {}
            // The design's other strategies: Volcano registers no victim function
            // for them, so they change nothing there either.
            Some(ArgValue::Str(n)) if n == "offlineOnly" || n == "lowPriorityFirst" => {}
            Some(ArgValue::Str(n)) => out.push((
                at(".name"),
                format!("unknown strategy `{n}`; expected lowNodeUtilization (or the design's offlineOnly, lowPriorityFirst)"),
            )),
            _ => out.push((at(".name"), "expected the strategy's name".into())),
        }
        match m.get("params") {
            None | Some(ArgValue::Null) => {}
            Some(ArgValue::Map(p)) => {
                for (k, val) in p {
                    let problem = match (k.as_str(), val) {
                        ("thresholds" | "targetThresholds", ArgValue::Map(t)) => t
                            .iter()
                            .filter_map(|(r, x)| match (r.as_str(), x) {
                                ("cpu" | "memory" | "pods" | "pod", ArgValue::Int(_)) => None,
                                ("cpu" | "memory" | "pods" | "pod", _) => Some((
                                    format!(".{r}"),
                                    "expected an integer percent (Volcano panics on a float)".to_string(),
                                )),
                                _ => Some((format!(".{r}"), "expected cpu, memory or pods".to_string())),
                            })
                            .map(|(p, m)| (at(&format!(".params.{k}{p}")), m))
                            .collect::<Vec<_>>(),
                        ("thresholds" | "targetThresholds", _) => {
                            vec![(at(&format!(".params.{k}")), "expected a map of resource → percent".into())]
                        }
                        // Read by Volcano into fields its strategy never uses.
                        ("thresholdPriorityClassName" | "thresholdPriority" | "nodeFit" | "numberOfNodes", _) => {
                            Vec::new()
                        }
                        _ => vec![(
                            at(&format!(".params.{k}")),
                            "unknown parameter; expected thresholds or targetThresholds".into(),
                        )],
                    };
                    out.extend(problem);
                }
            }
            Some(_) => out.push((at(".params"), "expected a map of parameters".into())),
        }
    }
    out
}
