//! The kubelet topology manager's policies as Volcano's numa-aware plugin ports
//! them (`pkg/scheduler/plugins/numaaware/policy`): merge the hint providers'
//! hints into the best NUMA affinity, and admit the pod or not.

use super::topo::Hint;

/// A topology manager policy (`topologyManagerPolicy` of the kubelet, a task's
/// `topologyPolicy`, the `volcano.sh/numa-topology-policy` annotation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TopologyPolicy {
    /// `none`.
    None,
    /// `best-effort`.
    BestEffort,
    /// `restricted`.
    Restricted,
    /// `single-numa-node`.
    SingleNumaNode,
}

impl TopologyPolicy {
    /// Every value, in the kubelet's order.
    pub const ALL: [TopologyPolicy; 4] =
        [TopologyPolicy::None, TopologyPolicy::BestEffort, TopologyPolicy::Restricted, TopologyPolicy::SingleNumaNode];

    /// The policy a value names.
    pub fn parse(s: &str) -> Option<TopologyPolicy> {
        TopologyPolicy::ALL.into_iter().find(|p| p.as_str() == s)
    }
    /// The value.
    pub fn as_str(self) -> &'static str {
        match self {
            TopologyPolicy::None => "none",
            TopologyPolicy::BestEffort => "best-effort",
            TopologyPolicy::Restricted => "restricted",
            TopologyPolicy::SingleNumaNode => "single-numa-node",
        }
    }

    /// The policy's `Predicate` over the providers' hints (one list per provider
    /// and resource, already filtered: see [`provider_hints`]): the best hint and
    /// whether the pod is admitted.
    pub fn predicate(self, numa_nodes: &[u32], hints: &[Vec<Hint>]) -> (Hint, bool) {
        match self {
            TopologyPolicy::None => (Hint::default(), true),
            TopologyPolicy::BestEffort => (merge(numa_nodes, hints), true),
            TopologyPolicy::Restricted => {
                let best = merge(numa_nodes, hints);
                (best, best.preferred)
            }
            TopologyPolicy::SingleNumaNode => {
                let single: Vec<Vec<Hint>> = hints
                    .iter()
                    .map(|l| {
                        l.iter()
                            .copied()
                            .filter(|h| h.preferred && h.mask.is_none_or(|m| m.count_ones() == 1))
                            .collect()
                    })
                    .collect();
                let best = merge(numa_nodes, &single);
                (best, best.preferred)
            }
        }
    }
}

/// `filterProvidersHints` for one provider's answer on one resource: no answer
/// (`None`) is "no preference", an empty list "no possible affinity".
pub fn provider_hints(h: Option<Vec<Hint>>) -> Vec<Hint> {
    match h {
        None => vec![Hint { mask: None, preferred: true }],
        Some(l) if l.is_empty() => vec![Hint { mask: None, preferred: false }],
        Some(l) => l,
    }
}

/// `IsNarrowerThan`: fewer NUMA nodes, or as many and a smaller mask.
fn narrower(a: u64, b: u64) -> bool {
    if a.count_ones() == b.count_ones() { a < b } else { a.count_ones() < b.count_ones() }
}

/// `mergeFilteredHints`: over every permutation (one hint per list), the
/// preferred, then narrowest, merged affinity; the default (every NUMA node,
/// not preferred) when none has a NUMA node.
pub fn merge(numa_nodes: &[u32], lists: &[Vec<Hint>]) -> Hint {
    let default = numa_nodes.iter().fold(0u64, |m, n| m | 1 << n);
    let mut best = Hint { mask: Some(default), preferred: false };
    if lists.iter().any(Vec::is_empty) {
        return best;
    }
    let mut idx = vec![0usize; lists.len()];
    loop {
        let mut mask = default;
        let mut preferred = true;
        for (l, &i) in lists.iter().zip(&idx) {
            mask &= l[i].mask.unwrap_or(default);
            preferred &= l[i].preferred;
        }
        let b = best.mask.expect("set");
        let keep = mask.count_ones() != 0
            && ((preferred && !best.preferred) || (preferred == best.preferred && narrower(mask, b)));
        if keep {
            best = Hint { mask: Some(mask), preferred };
        }
        // The next permutation, the last list fastest (Go's recursion order).
        let mut k = lists.len();
        loop {
            if k == 0 {
                return best;
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < lists[k].len() {
                break;
            }
            idx[k] = 0;
        }
    }
}
