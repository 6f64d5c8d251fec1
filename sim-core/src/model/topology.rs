//! Network topology as Volcano HyperNodes: a tree of switch groups.
//!
//! Tier 1 is the smallest switch group (a leaf); higher tiers group lower ones
//! (spine, superspine...). A virtual cluster-top HyperNode, one tier above the
//! highest real tier, contains every node, as in Volcano's scheduler. A job's
//! *highest tier* is the tier of the lowest HyperNode that holds all its nodes
//! (0 when it sits on a single node).

use crate::model::ids::NodeId;

pub use crate::model::ids::HyperNodeId;

/// `networkTopology` of a PodGroup / VolcanoJob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkTopology {
    /// `hard` (true) or `soft`.
    pub hard: bool,
    /// `highestTierAllowed`; `None` = unconstrained.
    pub highest_tier_allowed: Option<u32>,
}

impl NetworkTopology {
    /// Reads `mode` (`hard`, the default, or `soft`) and `highestTierAllowed` (an
    /// integer ≥ 0, as Volcano's CRD allows; 0 keeps a job on one node or within one
    /// tier-0 HyperNode), as every input form — compact jobs, PodGroups, VolcanoJobs,
    /// KubeRay's labels — writes them. Returns the constraint (with the defaults in
    /// place of what was wrong) and, per wrong field, its name and what was expected.
    pub fn parse(mode: Option<&str>, highest_tier: Option<i64>) -> (NetworkTopology, Vec<(&'static str, String)>) {
        let mut errors = Vec::new();
        let hard = match mode {
            None | Some("hard") => true,
            Some("soft") => false,
            Some(other) => {
                errors.push(("mode", format!("expected `hard` or `soft`, got `{other}`")));
                true
            }
        };
        let tier = highest_tier.and_then(|t| match u32::try_from(t) {
            Ok(t) => Some(t),
            _ => {
                errors.push(("highestTierAllowed", format!("must be an integer ≥ 0, got {t}")));
                None
            }
        });
        (NetworkTopology { hard, highest_tier_allowed: tier }, errors)
    }
}

/// One tier of a generated switch fabric.
#[derive(Clone, Debug, PartialEq)]
pub struct FabricTier {
    /// Tier number, 1 = leaf.
    pub tier: u32,
    /// Tier name (`leaf`, `spine`...), used for HyperNode names and `tierName`.
    pub name: String,
    /// Children per switch group (nodes for tier 1, groups of the tier below above).
    pub fanout: u32,
    /// Oversubscription of the uplinks out of this tier's groups (1.0 = non-blocking).
    pub oversubscription: f64,
}

/// A switch group.
#[derive(Clone, Debug, PartialEq)]
pub struct HyperNode {
    /// Unique name.
    pub name: String,
    /// Tier (1 = leaf); the virtual cluster top has the highest tier.
    pub tier: u32,
    /// Tier name (`spec.tierName`), may be empty.
    pub tier_name: String,
    /// Parent group, `None` only for the cluster top.
    pub parent: Option<HyperNodeId>,
    /// Child groups.
    pub children: Vec<HyperNodeId>,
    /// Every node below this group, ascending.
    pub nodes: Vec<NodeId>,
    /// True for the virtual cluster-top group.
    pub virtual_top: bool,
}

/// A member declared for a HyperNode before the tree is built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Member {
    /// A node, by index.
    Node(NodeId),
    /// Another HyperNode, by name.
    HyperNode(String),
}

/// A HyperNode as declared (by a fabric description or a HyperNode manifest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyperNodeDecl {
    /// Name.
    pub name: String,
    /// Tier ≥ 1.
    pub tier: u32,
    /// Tier name.
    pub tier_name: String,
    /// Members.
    pub members: Vec<Member>,
    /// The node label keys its members were selected by (a HyperNode
    /// object's `labelMatch`): membership is resolved once, so the timeline may
    /// not change these labels.
    pub label_keys: Vec<String>,
}

/// Why a set of HyperNodes does not form a tree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// Two HyperNodes share a name.
    #[error("HyperNode `{0}` is declared twice")]
    Duplicate(String),
    /// A member names a HyperNode that does not exist.
    #[error("HyperNode `{parent}` has member HyperNode `{child}`, which does not exist")]
    UnknownMember {
        /// The declaring group.
        parent: String,
        /// The missing member.
        child: String,
    },
    /// A HyperNode or node has two parents.
    #[error("{what} `{name}` is a member of both `{first}` and `{second}`; a member may have one parent")]
    TwoParents {
        /// "HyperNode" or "node".
        what: &'static str,
        /// Member name.
        name: String,
        /// First parent.
        first: String,
        /// Second parent.
        second: String,
    },
    /// A child's tier is not below its parent's.
    #[error(
        "HyperNode `{child}` (tier {child_tier}) is a member of `{parent}` (tier {parent_tier}); members must have a lower tier"
    )]
    TierOrder {
        /// Child name.
        child: String,
        /// Child tier.
        child_tier: u32,
        /// Parent name.
        parent: String,
        /// Parent tier.
        parent_tier: u32,
    },
}

/// The HyperNode tree of a cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// All groups; the last one is the virtual cluster top.
    pub hypernodes: Vec<HyperNode>,
    /// Every node's chain of groups from the lowest tier up to the cluster top,
    /// one after the other in node order (node `n`'s is
    /// `chains[chain_at[n]..chain_at[n + 1]]`): the node search reads the chains of
    /// hundreds of neighbouring nodes per pod, and one allocation per node put
    /// each of them a cache miss away.
    chains: Vec<HyperNodeId>,
    /// Where each node's chain starts in `chains`, and its end.
    chain_at: Vec<u32>,
    /// Per node, its group of each tier from 1 to below the cluster top (`None`
    /// where its chain has none of that tier), `top_tier − 1` entries a node,
    /// one node after the other: the tiers a normal pod's network-topology
    /// score weighs, read for every candidate node.
    below_top: Vec<Option<HyperNodeId>>,
    /// Fabric tiers (oversubscription per tier), when generated from a fabric.
    pub fabric: Vec<FabricTier>,
}

impl Topology {
    /// A flat cluster: only the cluster top.
    pub fn flat(node_count: usize) -> Topology {
        Self::from_decls(node_count, Vec::new(), Vec::new()).expect("flat topology is valid")
    }

    /// A name per tier, indexed by tier number: tier 0 is `node` (a placement on one
    /// node), or the tier-0 HyperNodes' name when there are any (Volcano's CRD allows
    /// tier 0: a placement within one of them also spans tier 0); each tier's
    /// `tierName` (or `tier N` when it has none), `cluster` for the virtual top.
    pub fn tier_names(&self) -> Vec<String> {
        let top = self.hypernodes.iter().map(|h| h.tier).max().unwrap_or(0);
        (0..=top)
            .map(|t| {
                let mut at = self.hypernodes.iter().filter(|h| h.tier == t);
                match at.clone().find(|h| !h.virtual_top && !h.tier_name.is_empty()) {
                    Some(h) => h.tier_name.clone(),
                    None if t == 0 && at.clone().next().is_none() => "node".to_string(),
                    None if at.any(|h| h.virtual_top) => "cluster".to_string(),
                    None => format!("tier {t}"),
                }
            })
            .collect()
    }

    /// Generates the tree of a fabric: tier-1 groups of `fanout` consecutive nodes,
    /// each higher tier groups `fanout` consecutive groups of the tier below.
    pub fn from_fabric(node_count: usize, fabric: &[FabricTier]) -> Result<Topology, TopologyError> {
        let mut tiers: Vec<FabricTier> = fabric.to_vec();
        tiers.sort_by_key(|t| t.tier);
        let mut decls = Vec::new();
        let mut below: Vec<Member> = (0..node_count).map(|i| Member::Node(NodeId(i as u32))).collect();
        for t in &tiers {
            let fan = t.fanout.max(1) as usize;
            let mut level = Vec::new();
            for (i, chunk) in below.chunks(fan).enumerate() {
                let name = format!("{}-{}", t.name, i);
                decls.push(HyperNodeDecl {
                    name: name.clone(),
                    tier: t.tier,
                    tier_name: t.name.clone(),
                    members: chunk.to_vec(),
                    label_keys: Vec::new(),
                });
                level.push(Member::HyperNode(name));
            }
            below = level;
        }
        Self::from_decls(node_count, decls, tiers)
    }

    /// Builds and checks a tree from declarations (e.g. HyperNode manifests).
    pub fn from_decls(
        node_count: usize,
        decls: Vec<HyperNodeDecl>,
        fabric: Vec<FabricTier>,
    ) -> Result<Topology, TopologyError> {
        let mut by_name = std::collections::BTreeMap::new();
        for (i, d) in decls.iter().enumerate() {
            if by_name.insert(d.name.clone(), i).is_some() {
                return Err(TopologyError::Duplicate(d.name.clone()));
            }
        }
        let max_tier = decls.iter().map(|d| d.tier).max().unwrap_or(0);
        let top = decls.len();
        let mut hns: Vec<HyperNode> = decls
            .iter()
            .map(|d| HyperNode {
                name: d.name.clone(),
                tier: d.tier,
                tier_name: d.tier_name.clone(),
                parent: None,
                children: Vec::new(),
                nodes: Vec::new(),
                virtual_top: false,
            })
            .collect();
        hns.push(HyperNode {
            name: "<cluster-top-hypernode>".into(),
            tier: max_tier + 1,
            tier_name: String::new(),
            parent: None,
            children: Vec::new(),
            nodes: (0..node_count as u32).map(NodeId).collect(),
            virtual_top: true,
        });
        let mut node_parent: Vec<Option<usize>> = vec![None; node_count];
        for (i, d) in decls.iter().enumerate() {
            for m in &d.members {
                match m {
                    Member::Node(n) => {
                        let slot = &mut node_parent[n.0 as usize];
                        // Two selectors of one HyperNode matching the same node:
                        // Volcano merges the matches.
                        if *slot == Some(i) {
                            continue;
                        }
                        if let Some(p) = *slot {
                            return Err(TopologyError::TwoParents {
                                what: "node",
                                name: format!("#{}", n.0),
                                first: decls[p].name.clone(),
                                second: d.name.clone(),
                            });
                        }
                        *slot = Some(i);
                    }
                    Member::HyperNode(c) => {
                        let ci = *by_name
                            .get(c)
                            .ok_or_else(|| TopologyError::UnknownMember { parent: d.name.clone(), child: c.clone() })?;
                        if decls[ci].tier >= d.tier {
                            return Err(TopologyError::TierOrder {
                                child: c.clone(),
                                child_tier: decls[ci].tier,
                                parent: d.name.clone(),
                                parent_tier: d.tier,
                            });
                        }
                        if hns[ci].parent == Some(HyperNodeId(i as u32)) {
                            continue;
                        }
                        if let Some(p) = hns[ci].parent {
                            return Err(TopologyError::TwoParents {
                                what: "HyperNode",
                                name: c.clone(),
                                first: hns[p.0 as usize].name.clone(),
                                second: d.name.clone(),
                            });
                        }
                        hns[ci].parent = Some(HyperNodeId(i as u32));
                    }
                }
            }
        }
        // Tier order makes cycles impossible. Orphans hang off the cluster top.
        for h in &mut hns[..top] {
            if h.parent.is_none() {
                h.parent = Some(HyperNodeId(top as u32));
            }
        }
        for i in 0..top {
            let p = hns[i].parent.unwrap().0 as usize;
            hns[p].children.push(HyperNodeId(i as u32));
        }
        let (mut chains, mut chain_at) = (Vec::new(), Vec::with_capacity(node_count + 1));
        chain_at.push(0);
        for (n, parent) in node_parent.iter().enumerate() {
            let mut chain = Vec::new();
            let mut cur = parent.map(|p| HyperNodeId(p as u32));
            while let Some(h) = cur {
                chain.push(h);
                cur = hns[h.0 as usize].parent;
            }
            if chain.last() != Some(&HyperNodeId(top as u32)) {
                chain.push(HyperNodeId(top as u32));
            }
            for h in &chain {
                if !hns[h.0 as usize].virtual_top {
                    hns[h.0 as usize].nodes.push(NodeId(n as u32));
                }
            }
            chains.extend_from_slice(&chain);
            chain_at.push(chains.len() as u32);
        }
        // Tiers strictly grow up a chain (a parent's tier is above its
        // child's), so each tier has at most one group in it.
        let top_tier = hns[top].tier;
        let mut below_top = Vec::with_capacity(node_count * top_tier.saturating_sub(1) as usize);
        for n in 0..node_count {
            let chain = &chains[chain_at[n] as usize..chain_at[n + 1] as usize];
            below_top.extend((1..top_tier).map(|t| chain.iter().copied().find(|h| hns[h.0 as usize].tier == t)));
        }
        Ok(Topology { hypernodes: hns, chains, chain_at, below_top, fabric })
    }

    /// The virtual cluster-top group.
    pub fn top(&self) -> HyperNodeId {
        HyperNodeId(self.hypernodes.len() as u32 - 1)
    }
    /// Tier of the cluster top (highest real tier + 1).
    pub fn top_tier(&self) -> u32 {
        self.hypernodes.last().map(|h| h.tier).unwrap_or(1)
    }
    /// A group by id.
    pub fn get(&self, id: HyperNodeId) -> &HyperNode {
        &self.hypernodes[id.0 as usize]
    }
    /// A node's groups from its lowest tier to the cluster top.
    #[inline]
    pub fn chain(&self, node: NodeId) -> &[HyperNodeId] {
        let n = node.0 as usize;
        &self.chains[self.chain_at[n] as usize..self.chain_at[n + 1] as usize]
    }
    /// A node's lowest group: the first of its [`Topology::chain`] (the cluster top
    /// for a node in no HyperNode).
    #[inline]
    pub fn leaf(&self, node: NodeId) -> HyperNodeId {
        self.chains[self.chain_at[node.0 as usize] as usize]
    }
    /// A node's group of each tier from 1 to below the cluster top, in tier
    /// order: entry `t − 1` is the group of tier `t` in its
    /// [`Topology::chain`], `None` if the chain has none.
    #[inline]
    pub fn groups_below_top(&self, node: NodeId) -> &[Option<HyperNodeId>] {
        let k = self.top_tier().saturating_sub(1) as usize;
        let at = node.0 as usize * k;
        &self.below_top[at..at + k]
    }
    /// The lowest group holding all `nodes`; `None` for an empty set.
    pub fn lowest_common(&self, nodes: &[NodeId]) -> Option<HyperNodeId> {
        let first = *nodes.first()?;
        self.chain(first).iter().copied().find(|h| nodes.iter().all(|n| self.chain(*n).contains(h)))
    }
    /// Tier spanned by a placement: 0 on one node, else the tier of the lowest
    /// common group.
    pub fn highest_tier(&self, nodes: &[NodeId]) -> u32 {
        let Some(first) = nodes.first() else { return 0 };
        if nodes.iter().all(|n| n == first) {
            return 0;
        }
        self.lowest_common(nodes).map(|h| self.get(h).tier).unwrap_or(0)
    }
    /// Groups by name.
    pub fn find(&self, name: &str) -> Option<HyperNodeId> {
        self.hypernodes.iter().position(|h| h.name == name).map(|i| HyperNodeId(i as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_tier() -> Topology {
        let fabric = vec![
            FabricTier { tier: 1, name: "leaf".into(), fanout: 4, oversubscription: 1.0 },
            FabricTier { tier: 2, name: "spine".into(), fanout: 2, oversubscription: 2.0 },
        ];
        Topology::from_fabric(16, &fabric).unwrap()
    }

    #[test]
    fn fabric_builds_leaf_and_spine_groups() {
        let t = two_tier();
        // 4 leaves, 2 spines, 1 top
        assert_eq!(t.hypernodes.len(), 7);
        assert_eq!(t.top_tier(), 3);
        assert_eq!(t.get(t.find("leaf-1").unwrap()).nodes, vec![NodeId(4), NodeId(5), NodeId(6), NodeId(7)]);
        assert_eq!(t.get(t.find("spine-1").unwrap()).nodes.len(), 8);
        assert_eq!(t.chain(NodeId(9)).len(), 3);
    }

    #[test]
    fn highest_tier_of_placements() {
        let t = two_tier();
        assert_eq!(t.highest_tier(&[NodeId(3), NodeId(3)]), 0);
        assert_eq!(t.highest_tier(&[NodeId(0), NodeId(3)]), 1);
        assert_eq!(t.highest_tier(&[NodeId(0), NodeId(7)]), 2);
        assert_eq!(t.highest_tier(&[NodeId(0), NodeId(8)]), 3);
        assert_eq!(t.highest_tier(&[]), 0);
    }

    /// A HyperNode of `tier` named `name` with `members`, selected by no label.
    fn decl(name: &str, tier: u32, members: Vec<Member>) -> HyperNodeDecl {
        HyperNodeDecl { name: name.into(), tier, tier_name: String::new(), members, label_keys: Vec::new() }
    }

    /// A node's groups per tier below the top, read off its chain: a tier its
    /// chain skips is `None`, a node in no HyperNode has none, a flat
    /// cluster no tiers.
    #[test]
    fn groups_below_top_match_the_chain() {
        let d = decl;
        // Node 0 under a (tier 1) under c (tier 3); node 1 under b (tier 2)
        // under c; node 2 in nothing; node 3 under a.
        let t = Topology::from_decls(
            4,
            vec![
                d("a", 1, vec![Member::Node(NodeId(0)), Member::Node(NodeId(3))]),
                d("b", 2, vec![Member::Node(NodeId(1))]),
                d("c", 3, vec![Member::HyperNode("a".into()), Member::HyperNode("b".into())]),
            ],
            vec![],
        )
        .unwrap();
        let (a, b, c) = (t.find("a"), t.find("b"), t.find("c"));
        assert_eq!(t.top_tier(), 4);
        assert_eq!(t.groups_below_top(NodeId(0)), &[a, None, c]);
        assert_eq!(t.groups_below_top(NodeId(1)), &[None, b, c]);
        assert_eq!(t.groups_below_top(NodeId(2)), &[None, None, None]);
        assert_eq!(t.groups_below_top(NodeId(3)), &[a, None, c]);
        for tree in [t, two_tier()] {
            for n in (0..tree.chain_at.len() - 1).map(|n| NodeId(n as u32)) {
                let by_chain: Vec<_> = (1..tree.top_tier())
                    .map(|tier| tree.chain(n).iter().copied().find(|&h| tree.get(h).tier == tier))
                    .collect();
                assert_eq!(tree.groups_below_top(n), &by_chain[..]);
            }
        }
        let flat = Topology::flat(3);
        assert_eq!(flat.top_tier(), 1);
        assert!(flat.groups_below_top(NodeId(2)).is_empty());
    }

    #[test]
    fn rejects_bad_trees() {
        let d = decl;
        let e = Topology::from_decls(
            2,
            vec![d("a", 1, vec![Member::Node(NodeId(0))]), d("b", 1, vec![Member::Node(NodeId(0))])],
            vec![],
        );
        assert!(matches!(e, Err(TopologyError::TwoParents { .. })));
        // One HyperNode's selectors matching a node or a HyperNode twice: one member.
        let t = Topology::from_decls(
            2,
            vec![
                d("a", 1, vec![Member::Node(NodeId(0)), Member::Node(NodeId(1)), Member::Node(NodeId(0))]),
                d("b", 2, vec![Member::HyperNode("a".into()), Member::HyperNode("a".into())]),
            ],
            vec![],
        )
        .expect("a member matched twice is one member");
        assert_eq!(t.get(t.find("a").unwrap()).nodes.len(), 2);
        assert_eq!(t.get(t.find("b").unwrap()).children.len(), 1);
        let e =
            Topology::from_decls(2, vec![d("a", 1, vec![]), d("b", 1, vec![Member::HyperNode("a".into())])], vec![]);
        assert!(matches!(e, Err(TopologyError::TierOrder { .. })));
        let e = Topology::from_decls(2, vec![d("a", 2, vec![Member::HyperNode("zz".into())])], vec![]);
        assert!(matches!(e, Err(TopologyError::UnknownMember { .. })));
        let e = Topology::from_decls(2, vec![d("a", 1, vec![]), d("a", 1, vec![])], vec![]);
        assert!(matches!(e, Err(TopologyError::Duplicate(_))));
    }
}
