//! `fgd` (a lahar extension, not a Volcano plugin): the FGD paper's placement
//! policies as a node order. Arguments: `fgd.policy` (`fgd`; or `random`,
//! `dot-product`, `gpu-clustering`, `gpu-packing`, `best-fit`) and `fgd.weight`
//! (1; 0 disables it, GPU device choice included). Each feasible node scores the policy's 0–100
//! ([`crate::placement::score`], seen on the session's nodes by
//! [`crate::placement::live`]) times the weight, summed with the other node-order
//! plugins as Volcano sums them. The policy also decides where a pod's share of
//! one GPU goes on the chosen node (the world's share rule, set when the run
//! starts): FGD's device for `fgd`, a uniform draw for `random`, best fit
//! otherwise. docs/fragmentation.md has the formulas.

use super::super::args::{ArgSpec, ArgType, ArgValue, Args, problem};
use super::super::plugin::{Hooks, Plugin, PluginConf, PluginSpec};
use crate::placement::Policy;
use crate::placement::live::Live;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::PodId;
use lahar_core::session::Session;
use lahar_core::util::rng::RngStreams;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("fgd", |pc| Box::new(Fgd::new(&pc.args))).args(&[
    ArgSpec::new("fgd.policy", ArgType::Str, "fgd", "the placement policy").checked(check_policy),
    ArgSpec::new("fgd.weight", ArgType::Int, "1", "the node score's weight (0 disables the plugin)"),
]);

/// A policy lahar knows.
fn check_policy(_: &str, v: &ArgValue) -> Vec<(String, String)> {
    match v {
        ArgValue::Str(p) if Policy::from_name(p).is_none() => {
            problem(format!("unknown policy `{p}`; expected one of: {}", crate::placement::NAMES.join(", ")))
        }
        _ => Vec::new(),
    }
}

/// The plugin.
#[derive(Debug)]
pub struct Fgd {
    weight: i64,
    live: Live,
}

/// The policy an `fgd` argument names (validated by the conf loader; `fgd` when absent).
fn policy(args: &Args) -> Policy {
    args.str("fgd.policy").and_then(Policy::from_name).unwrap_or(Policy::Fgd)
}

/// The policy of the first `fgd` plugin among a conf's `plugins` (in tier order),
/// if it has one and its weight is not 0 (a disabled plugin chooses no GPU
/// devices either).
pub fn policy_of<'a>(plugins: impl IntoIterator<Item = &'a PluginConf>) -> Option<Policy> {
    let p = plugins.into_iter().find(|p| p.name == "fgd")?;
    (p.args.int("fgd.weight", 1) != 0).then(|| policy(&p.args))
}

impl Fgd {
    /// Reads the arguments. Ties among the best nodes are broken by Volcano's node
    /// selection, not by a placement replay's tie order.
    pub fn new(args: &Args) -> Fgd {
        Fgd { weight: args.int("fgd.weight", 1), live: Live::new(policy(args), RngStreams::new(0)) }
    }
}

impl Plugin for Fgd {
    fn name(&self) -> &'static str {
        "fgd"
    }
    fn hooks(&self) -> Hooks {
        Hooks::NODE_SCORE
    }
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        if self.weight == 0 {
            return None;
        }
        Some((self.live.score(ssn, pod, node) * self.weight) as f64)
    }
    /// `gpu-clustering` reads the kinds of the pods on the node, which change only
    /// with its `used`; every policy reads the pod's request (and GPU models,
    /// fixed per task), the node's free resources and devices: a score holds while
    /// the node's `used` does.
    fn score_by_node(&self, _: &Session<'_>, _: PodId) -> bool {
        true
    }
}
