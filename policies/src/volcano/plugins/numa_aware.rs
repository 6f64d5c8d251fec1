//! `numa-aware` (Volcano's `plugins/numaaware`): CPU placement by the NUMA
//! topology each node's resource exporter reports (see [`lahar_core::devices::numa`]).
//!
//! Predicate, for Guaranteed pods only (Volcano's `v1qos.GetPodQOS`):
//! - A pod with a topology policy (`volcano.sh/numa-topology-policy`, which
//!   Volcano's job controller sets from a task's `topologyPolicy`) other than
//!   `none` needs a node with a topology whose CPU manager policy is `static`,
//!   whose topology manager policy is the pod's, and with free CPUs. Refusals:
//!   `numa info is empty`, `cpu manager policy isn't static`, `task topology
//!   policy[<pod's>] is different with node[<node's>]`, `cpu allocatable map is
//!   empty`.
//! - A pod without one (or `none`) is checked only on nodes with a static CPU
//!   manager and a topology manager policy other than `none`, by that policy.
//! - Then container by container: the node's policy must admit the CPU
//!   manager's NUMA hints for the container's whole CPU request, and the
//!   container takes CPUs the way Volcano picks them; the next container sees
//!   what is left. Refusal: `container <name> cannot be assigned by numa`.
//!
//! Every refusal is unresolvable (Volcano's `Error` and
//! `UnschedulableAndUnresolvable` codes): preempt and reclaim do not consider
//! the node.
//!
//! Batch score, for Guaranteed pods with a policy other than `none`: over the
//! candidate nodes, `(100 − 100 × k ÷ max k) × weight`, k the NUMA nodes the
//! pod's CPUs would span on the node (integer division; 100 × weight each when
//! every k is 0). Argument: `weight` (default 1).
//!
//! The CPUs a pod takes are held by the world from its allocation until it is
//! gone ([`lahar_core::devices::numa::NumaUse`]); an eviction frees them for the rest of
//! its session, as Volcano's deallocate event does.

use super::super::args::{ArgSpec, ArgType, Args};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use super::epoch_memo::EpochMemo;
use lahar_core::devices::numa::{NumaAsk, NumaFit, NumaRefusal, TopologyPolicy, batch_scores, fit};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::PodId;
use lahar_core::session::Session;
use std::cell::{OnceCell, RefCell};

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec =
    PluginSpec::new("numa-aware", |pc| Box::new(NumaAware::new(&pc.args, pc.flag("enablePredicate"))))
        .args(&[ArgSpec::new("weight", ArgType::Int, "1", "the batch score's weight")]);

/// The plugin.
#[derive(Debug)]
pub struct NumaAware {
    weight: i64,
    /// Its predicate is enabled: Volcano scores only pods its predicate
    /// assigned CPUs to.
    predicate_on: bool,
    /// Some node of the cluster has a topology.
    any_topology: OnceCell<bool>,
    /// Fits already made: a fit reads only the node's topology, its free CPUs
    /// (every change of which moves the node's epoch) and the ask.
    memo: RefCell<EpochMemo<NumaAsk, Verdict>>,
}

/// What the predicate and the score need of a fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// Passed without an assignment.
    Skip,
    /// Passed; the assignment spans this many NUMA nodes.
    Spans(u32),
    /// Refused.
    Refuse(NumaRefusal),
}

impl NumaAware {
    /// Reads validated arguments; `predicate_on`: the entry's `enablePredicate`.
    pub fn new(args: &Args, predicate_on: bool) -> NumaAware {
        NumaAware {
            weight: args.int("weight", 1),
            predicate_on,
            any_topology: OnceCell::new(),
            memo: RefCell::new(EpochMemo::default()),
        }
    }

    fn ask<'s>(ssn: &'s Session<'_>, pod: PodId) -> Option<&'s NumaAsk> {
        let p = ssn.pod(pod);
        ssn.job(p.job).spec.tasks[p.task as usize].hints.as_ref()?.numa.as_deref().filter(|a| a.guaranteed)
    }

    fn fit(ssn: &Session<'_>, ask: &NumaAsk, node: NodeId) -> NumaFit {
        fit(ssn.node(node).numa.as_deref(), &ssn.node_state(node).numa.free, ask)
    }

    /// The pod's verdict on `node`: computed, or (outside exhaustive runs) the
    /// one made at the node's current epoch.
    fn verdict(&self, ssn: &Session<'_>, pod: PodId, ask: &NumaAsk, node: NodeId) -> Verdict {
        let compute = || match Self::fit(ssn, ask, node) {
            NumaFit::Skip => Verdict::Skip,
            NumaFit::Assign(c) => Verdict::Spans(ssn.node(node).numa.as_deref().map_or(0, |t| t.topo.numa_count(&c))),
            NumaFit::Refuse(r) => Verdict::Refuse(r),
        };
        if ssn.is_exhaustive() || ssn.node(node).numa.is_none() {
            return compute();
        }
        self.memo.borrow_mut().get(ssn, pod, ask, node, compute)
    }

    /// The pod is scored: Guaranteed with a policy other than `none`.
    fn scored(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        self.predicate_on && Self::ask(ssn, pod).is_some_and(|a| a.policy.is_some_and(|p| p != TopologyPolicy::None))
    }
}

impl Plugin for NumaAware {
    fn name(&self) -> &'static str {
        "numa-aware"
    }
    fn hooks(&self) -> Hooks {
        Hooks::PREDICATE.and(Hooks::NODE_SCORE).and(Hooks::BATCH_SCORE)
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        let Some(ask) = Self::ask(ssn, pod) else { return Some(Ok(())) };
        Some(match self.verdict(ssn, pod, ask, node) {
            Verdict::Refuse(r) => Err(r.reason(ask)),
            Verdict::Skip | Verdict::Spans(_) => Ok(()),
        })
    }
    fn predicate_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        let Some(ask) = Self::ask(ssn, pod) else { return true };
        // Without a policy, only nodes with a topology look at the pod.
        let any = *self.any_topology.get_or_init(|| ssn.cluster().nodes.iter().any(|n| n.numa.is_some()));
        !any && ask.policy.is_none_or(|p| p == TopologyPolicy::None)
    }
    fn score_by_node(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        // A scored pod's score depends on the other candidates; any other pod
        // scores nothing.
        !self.scored(ssn, pod)
    }
    fn score_note(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<String> {
        let ask = Self::ask(ssn, pod)?;
        let t = ssn.node(node).numa.as_deref()?;
        match Self::fit(ssn, ask, node) {
            NumaFit::Assign(c) if c.is_empty() => {
                Some("no CPUs assigned (Volcano's CPU take failed or nothing was asked)".into())
            }
            NumaFit::Assign(c) => {
                let mut nodes: Vec<u32> = c.iter().map(|x| t.topo.info(x).numa).collect();
                nodes.dedup();
                nodes.sort_unstable();
                nodes.dedup();
                let list: Vec<String> = nodes.iter().map(u32::to_string).collect();
                Some(format!("CPUs {c} on NUMA node(s) {}", list.join(",")))
            }
            _ => None,
        }
    }
    fn add_node_scores(&self, ssn: &Session<'_>, pod: PodId, nodes: &[NodeId], sums: &mut [f64]) {
        if !self.scored(ssn, pod) {
            return;
        }
        let ask = Self::ask(ssn, pod).expect("scored");
        // A candidate the predicate did not assign CPUs on counts 0 NUMA nodes
        // (Volcano reads an empty assignment; it would fail on a node without a
        // topology, which its predicate keeps out of the candidates).
        let counts: Vec<u32> = nodes
            .iter()
            .map(|&n| match self.verdict(ssn, pod, ask, n) {
                Verdict::Spans(k) => k,
                _ => 0,
            })
            .collect();
        for (sum, s) in sums.iter_mut().zip(batch_scores(&counts, self.weight)) {
            *sum += s as f64;
        }
    }
}
