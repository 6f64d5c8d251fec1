//! `nodegroup` (Volcano's `plugins/nodegroup`): queues choose node groups. A node
//! belongs to the group its `volcano.sh/nodegroup-name` label names; a queue's
//! `spec.affinity` lists the groups its pods must or should use
//! (`nodeGroupAffinity`) and must or should avoid (`nodeGroupAntiAffinity`), and
//! its `volcano.sh/nodegroup-resource-limits` annotation caps what its pods may
//! hold in a group.
//!
//! Arguments: `strict` (true): a node without the label is infeasible, unless
//! `strict: false` and the pod's queue has no affinity; `enablePreferredOrder`
//! (false): the i-th of n preferred groups scores `50 · (n − i) / n` instead of 50.
//! With `enableHierarchy: true` a queue without `affinity` takes its nearest
//! ancestor's (limits are not inherited).
//!
//! Predicate, in Volcano's order: no label → "node group label not found" (but
//! see `strict`); a queue without affinity, or whose lists are all empty → "node
//! group affinity not specified"; the group must be in a required or preferred
//! affinity list, not in the anti-affinity required list — unless it is also in the
//! anti-affinity preferred list, which admits it again (Volcano's order of checks)
//! → "node does not satisfy the node group affinity"; the queue's pods there plus
//! this one must stay within the group's limit on each limited dimension → "node
//! group resource limit exceeded". Score (summed unweighted with the other
//! plugins): 100 for a required group, plus 50 (or the ordered share) for a
//! preferred one; a group in the anti-affinity preferred list scores −1 whatever
//! else it is.

use super::super::args::{ArgSpec, ArgType, Args};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{PodId, PodStatus};
use lahar_core::model::queue::{NodeGroupAffinity, QueueId};
use lahar_core::model::resource::{DIMS, Resources};
use lahar_core::session::Session;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec =
    PluginSpec::new("nodegroup", |pc| Box::new(NodeGroup::new(&pc.args, pc.flag("enableHierarchy")))).args(&[
        ArgSpec::new("strict", ArgType::Bool, "true", "refuse nodes without a node group"),
        ArgSpec::new("enablePreferredOrder", ArgType::Bool, "false", "score preferred groups by their order"),
    ]);

/// The node label naming a node's group.
pub const NODE_GROUP_LABEL: &str = "volcano.sh/nodegroup-name";

/// The plugin.
#[derive(Debug)]
pub struct NodeGroup {
    strict: bool,
    preferred_order: bool,
    hierarchy: bool,
    /// Per queue (session order): the queue whose affinity applies (itself, or
    /// with `enableHierarchy` its nearest ancestor that has one), if any.
    affinity_of: Vec<Option<QueueId>>,
    /// Σ requests of each limited queue's pods (Allocated or Running) per group,
    /// as of the session epoch it was counted at.
    held: RefCell<(u64, Held)>,
}

/// Σ requests per (queue, node group).
type Held = BTreeMap<(QueueId, String), Resources>;

/// Why a node fails the predicate, in Volcano's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The node has no group label.
    LabelNotFound,
    /// The queue has no affinity to check against.
    AffinityNotSpecified,
    /// The group is not one the queue may use.
    Unsatisfied,
    /// The queue's limit in the group would be exceeded.
    LimitExceeded,
}

impl Refusal {
    /// Volcano's reason string.
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::LabelNotFound => "node group label not found",
            Refusal::AffinityNotSpecified => "node group affinity not specified",
            Refusal::Unsatisfied => "node does not satisfy the node group affinity",
            Refusal::LimitExceeded => "node group resource limit exceeded",
        }
    }
}

/// Volcano's affinity predicate on a group: in a required or preferred list, not
/// in the anti-affinity required list, or in the anti-affinity preferred list.
pub fn admits(a: &NodeGroupAffinity, group: &str) -> bool {
    let has = |l: &[String]| l.iter().any(|g| g == group);
    let mut ok = has(&a.required) || has(&a.preferred);
    if has(&a.anti_required) {
        ok = false;
    }
    ok || has(&a.anti_preferred)
}

/// Volcano's group score.
pub fn score(a: &NodeGroupAffinity, group: &str, preferred_order: bool) -> f64 {
    let has = |l: &[String]| l.iter().any(|g| g == group);
    let mut s = 0.0;
    if has(&a.required) {
        s += 100.0;
    }
    if preferred_order {
        // A group listed twice keeps its last place; n counts distinct groups.
        let mut distinct: Vec<&str> = a.preferred.iter().map(String::as_str).collect();
        distinct.sort_unstable();
        distinct.dedup();
        if let Some(i) = a.preferred.iter().rposition(|g| g == group) {
            let n = distinct.len() as f64;
            s += 0.5 * 100.0 * (n - i as f64) / n;
        }
    } else if has(&a.preferred) {
        s += 50.0;
    }
    if has(&a.anti_preferred) {
        s = -1.0;
    }
    s
}

impl NodeGroup {
    /// Reads the arguments; `hierarchy` is the plugin's `enableHierarchy` flag.
    pub fn new(args: &Args, hierarchy: bool) -> NodeGroup {
        NodeGroup {
            strict: args.bool("strict", true),
            preferred_order: args.bool("enablePreferredOrder", false),
            hierarchy,
            affinity_of: Vec::new(),
            held: RefCell::new((u64::MAX, BTreeMap::new())),
        }
    }

    fn affinity<'s>(&self, ssn: &'s Session<'_>, q: QueueId) -> Option<&'s NodeGroupAffinity> {
        let src = self.affinity_of.get(q.0 as usize).copied().flatten()?;
        ssn.queue(src).spec.node_groups.as_ref()
    }

    /// What the queue's pods hold in `group`, counted again after any change.
    fn held(&self, ssn: &Session<'_>, q: QueueId, group: &str) -> Resources {
        let mut held = self.held.borrow_mut();
        if held.0 != ssn.epoch() {
            let limited: Vec<bool> = ssn.queues().iter().map(|q| !q.spec.node_group_limits.is_empty()).collect();
            let mut sums = Held::new();
            for n in 0..ssn.node_count() {
                let n = NodeId(n as u32);
                let Some(g) = ssn.node(n).labels.get(NODE_GROUP_LABEL) else { continue };
                for &p in &ssn.node_state(n).pods {
                    let pod = ssn.pod(p);
                    let pq = ssn.job(pod.job).spec.queue;
                    // Volcano counts allocated, bound and running pods; evicted
                    // (Releasing) ones were taken off by its deallocate event.
                    if limited[pq.0 as usize] && pod.status != PodStatus::Releasing {
                        *sums.entry((pq, g.clone())).or_default() += pod.req;
                    }
                }
            }
            *held = (ssn.epoch(), sums);
        }
        held.1.get(&(q, group.to_string())).copied().unwrap_or_default()
    }

    /// The predicate's outcome for a pod of queue `q` on `node`.
    pub fn refusal(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Refusal> {
        let q = ssn.job(ssn.pod(pod).job).spec.queue;
        let affinity = self.affinity(ssn, q);
        let unset = affinity.is_none_or(NodeGroupAffinity::is_empty);
        let Some(group) = ssn.node(node).labels.get(NODE_GROUP_LABEL) else {
            return (self.strict || !unset).then_some(Refusal::LabelNotFound);
        };
        let a = match affinity {
            Some(a) if !unset => a,
            _ => return Some(Refusal::AffinityNotSpecified),
        };
        if !admits(a, group) {
            return Some(Refusal::Unsatisfied);
        }
        let limits = &ssn.queue(q).spec.node_group_limits;
        if let Some((_, limit)) = limits.iter().find(|(g, _)| g == group) {
            let after = self.held(ssn, q, group) + ssn.pod(pod).req;
            if (0..DIMS).any(|d| limit.has(d) && after.get(d) > limit.get_or(d, 0)) {
                return Some(Refusal::LimitExceeded);
            }
        }
        None
    }
}

impl Plugin for NodeGroup {
    fn name(&self) -> &'static str {
        "nodegroup"
    }
    fn hooks(&self) -> Hooks {
        Hooks::PREDICATE.and(Hooks::NODE_SCORE)
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        let queues = ssn.queues();
        let by_name: BTreeMap<&str, usize> =
            queues.iter().enumerate().map(|(i, q)| (q.spec.name.as_str(), i)).collect();
        self.affinity_of = (0..queues.len())
            .map(|i| {
                if queues[i].spec.node_groups.is_some() {
                    return Some(QueueId(i as u32));
                }
                if !self.hierarchy {
                    return None;
                }
                // The nearest ancestor with an affinity (a parent not defined ends
                // the walk, as in Volcano).
                let mut at = i;
                for _ in 0..queues.len() {
                    if queues[at].spec.name == "root" {
                        return None;
                    }
                    let parent = queues[at].spec.parent.as_deref().unwrap_or("root");
                    at = *by_name.get(parent)?;
                    if queues[at].spec.node_groups.is_some() {
                        return Some(QueueId(at as u32));
                    }
                }
                None
            })
            .collect();
        self.held.borrow_mut().0 = u64::MAX;
    }
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        Some(match self.refusal(ssn, pod, node) {
            None => Ok(()),
            Some(r) => Err(r.reason().to_string()),
        })
    }
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        let q = ssn.job(ssn.pod(pod).job).spec.queue;
        let group = ssn.node(node).labels.get(NODE_GROUP_LABEL);
        Some(match (group, self.affinity(ssn, q)) {
            (Some(g), Some(a)) => score(a, g, self.preferred_order),
            _ => 0.0,
        })
    }
    /// The score depends on the pod's queue, not only its request.
    fn score_by_node(&self, _: &Session<'_>, _: PodId) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aff(req: &[&str], pref: &[&str], anti_req: &[&str], anti_pref: &[&str]) -> NodeGroupAffinity {
        let v = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        NodeGroupAffinity {
            required: v(req),
            preferred: v(pref),
            anti_required: v(anti_req),
            anti_preferred: v(anti_pref),
        }
    }

    /// TestNodeGroup's queue `q1` (and `root`): required group1, group3; preferred
    /// group3; anti-required group2, group4; anti-preferred group4.
    #[test]
    fn predicate_and_score_of_q1() {
        let a = aff(&["group1", "group3"], &["group3"], &["group2", "group4"], &["group4"]);
        let got: Vec<(bool, f64)> =
            ["group1", "group2", "group3", "group4"].iter().map(|g| (admits(&a, g), score(&a, g, false))).collect();
        assert_eq!(got, [(true, 100.0), (false, 0.0), (true, 150.0), (true, -1.0)]);
    }

    /// TestNodeGroup case 6, "preferred nodegroup priority ordering": q3 prefers
    /// group1 then group3 (no required groups): 50 and 25.
    #[test]
    fn preferred_order() {
        let a = aff(&[], &["group1", "group3"], &[], &[]);
        assert_eq!((score(&a, "group1", true), score(&a, "group3", true)), (50.0, 25.0));
        assert_eq!((score(&a, "group1", false), score(&a, "group3", false)), (50.0, 50.0));
        assert!(!admits(&a, "group4"));
        // A group listed twice keeps its last place among the distinct groups.
        let a = aff(&[], &["g1", "g2", "g1"], &[], &[]);
        assert_eq!((score(&a, "g1", true), score(&a, "g2", true)), (0.5 * 100.0 * (2.0 - 2.0) / 2.0, 25.0));
    }
}
