//! kthena's cost optimiser: an `AutoscalingPolicy` with a
//! `heterogeneousTarget` sizes several ModelServings (backends: the same
//! model on different hardware) together. Their serving groups are counted
//! as one: the recommendation, panic mode and correction are the homogeneous
//! target's ([`super::kthena`]) over the sum of their replicas and pods, with
//! the sums of their `minReplicas` and `maxReplicas`; the total is then split
//! among the backends cheapest first, in blocks whose size grows by
//! `costExpansionRatePercent` (volcano-sh/kthena
//! `pkg/autoscaler/autoscaler/optimizer.go`: `NewOptimizerMeta`,
//! `RestoreReplicasOfEachBackend`, `Optimize`).

use super::kthena::KthenaSpec;
use std::sync::Arc;

/// One backend of a heterogeneous target (`params[]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backend {
    /// The ModelServing's namespace (the policy's when `targetRef` gives none).
    pub namespace: Arc<str>,
    /// The ModelServing's name.
    pub name: String,
    /// `cost` (default 0).
    pub cost: i32,
    /// `minReplicas`.
    pub min: i32,
    /// `maxReplicas`.
    pub max: i32,
}

/// A policy with a heterogeneous target, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Hetero {
    /// Its metrics and behaviour; `min_replicas` and `max_replicas` the sums
    /// over the backends.
    pub spec: KthenaSpec,
    /// `params`, in order.
    pub backends: Vec<Backend>,
    /// The scaling order: (backend, replicas) blocks above the backends'
    /// minimums, cheapest first (ties: the earlier backend).
    pub order: Vec<(usize, i32)>,
}

impl Hetero {
    /// The policy of `spec` over `backends` (`NewOptimizerMeta`): a backend's
    /// replicas above its minimum in one block at a rate of 100%, else in
    /// blocks of 1, then growing by `rate_percent` each (`packageLen`, a
    /// float in kthena, truncated to a whole number of at least 1), each
    /// costing its size × the backend's `cost`.
    pub fn new(mut spec: KthenaSpec, backends: Vec<Backend>, rate_percent: i32) -> Hetero {
        let mut blocks: Vec<(i64, usize, i32)> = Vec::new();
        for (i, b) in backends.iter().enumerate() {
            let mut left = b.max - b.min;
            if left <= 0 {
                continue;
            }
            if rate_percent == 100 {
                blocks.push((i64::from(b.cost), i, left));
                continue;
            }
            let mut len = 1.0f64;
            while left > 0 {
                let size = left.min((len as i32).max(1));
                blocks.push((i64::from(b.cost) * i64::from(size), i, size));
                left -= size;
                len = len * f64::from(rate_percent) / 100.0;
            }
        }
        // kthena's sort.Slice by (cost, index): blocks equal in both are of
        // one backend, whose share is their sum whatever their order.
        blocks.sort_by_key(|&(cost, i, _)| (cost, i));
        spec.min_replicas = backends.iter().map(|b| b.min).sum();
        spec.max_replicas = backends.iter().map(|b| b.max).sum();
        Hetero { spec, backends, order: blocks.into_iter().map(|(_, i, n)| (i, n)).collect() }
    }

    /// Each backend's replicas when the policy wants `replicas` in all
    /// (`RestoreReplicasOfEachBackend`): the total bounded by the sums, each
    /// backend's minimum, and the rest block by block in the scaling order.
    pub fn split(&self, replicas: i32) -> Vec<i32> {
        let mut out: Vec<i32> = self.backends.iter().map(|b| b.min).collect();
        let mut left = replicas.clamp(self.spec.min_replicas, self.spec.max_replicas.max(self.spec.min_replicas))
            - self.spec.min_replicas;
        for &(i, n) in &self.order {
            let slot = left.min(n);
            out[i] += slot;
            left -= slot;
            if left <= 0 {
                break;
            }
        }
        out
    }

    /// The backend named (`namespace`, `name`), if it is one.
    pub fn backend(&self, namespace: &str, name: &str) -> Option<usize> {
        self.backends.iter().position(|b| &*b.namespace == namespace && b.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serving::kthena::{Panic, Select, Stable};

    fn spec() -> KthenaSpec {
        let s = Stable { instances: 1, percent: 100, period_ms: 15_000, select: Select::Or, window_ms: 0 };
        KthenaSpec {
            name: "ns/p".into(),
            tolerance_percent: 10,
            metrics: Vec::new(),
            up: s,
            panic: Panic { percent: 0, period_ms: 0, threshold_percent: 200, hold_ms: 0 },
            down: s,
            min_replicas: 0,
            max_replicas: 0,
        }
    }

    fn param(ns: &str, name: &str, cost: i32, min: i32, max: i32) -> Backend {
        Backend { namespace: ns.into(), name: name.into(), cost, min, max }
    }

    fn meta(rate: i32, params: Vec<Backend>) -> Hetero {
        Hetero::new(spec(), params, rate)
    }

    /// kthena's `TestNewOptimizerMeta`.
    #[test]
    fn test_new_optimizer_meta() {
        // min/max replica aggregation across backends
        let m = meta(100, vec![param("ns", "h100", 10, 2, 6), param("ns", "a100", 5, 1, 4)]);
        assert_eq!((m.spec.min_replicas, m.spec.max_replicas), (3, 10));
        // zero-delta backends produce no blocks
        assert!(meta(100, vec![param("ns", "h100", 10, 5, 5)]).order.is_empty());
        // CostExpansionRatePercent == 100 — single block per backend; sorted cheapest-first
        let m = meta(100, vec![param("ns", "h100", 10, 1, 4), param("ns", "a100", 5, 1, 3)]);
        assert_eq!(m.order, vec![(1, 2), (0, 3)]);
        // CostExpansionRatePercent != 100 — geometric multi-block splitting
        // (at 50% every block is 1 long: 1, 0.5, 0.25... truncated up to 1).
        assert_eq!(meta(50, vec![param("ns", "h100", 10, 1, 5)]).order, vec![(0, 1); 4]);
    }

    /// kthena's `TestRestoreReplicasOfEachBackend`.
    #[test]
    fn test_restore_replicas_of_each_backend() {
        // cheaper backend fills first, spills to next
        let m = meta(100, vec![param("ns", "h100", 10, 1, 4), param("ns", "a100", 5, 1, 3)]);
        assert_eq!(m.split(5), vec![2, 3]);
        // clamping below min
        assert_eq!(meta(100, vec![param("ns", "h100", 10, 2, 5)]).split(0), vec![2]);
        // clamping above max
        assert_eq!(meta(100, vec![param("ns", "h100", 10, 1, 3)]).split(999), vec![3]);
        // single-backend full range sweep
        assert_eq!(meta(100, vec![param("ns", "h100", 10, 1, 4)]).split(4), vec![4]);
        // same target name in different namespaces remains distinct
        let m = meta(100, vec![param("team-a", "llama", 100, 1, 3), param("team-b", "llama", 60, 2, 5)]);
        assert_eq!(m.split(8), vec![3, 5]);
        assert_eq!((m.backend("team-b", "llama"), m.backend("team-c", "llama")), (Some(1), None));
    }

    /// The default rate, 200%: blocks of 1, 2, 4... each costing its size,
    /// so the cheaper backend's growing blocks interleave with the dearer one's.
    #[test]
    fn blocks_grow_by_the_expansion_rate() {
        let m = meta(200, vec![param("ns", "h100", 10, 0, 4), param("ns", "a100", 6, 0, 8)]);
        // a100: 1 (6), 2 (12), 4 (24), 1 (6); h100: 1 (10), 2 (20), 1 (10).
        assert_eq!(m.order, vec![(1, 1), (1, 1), (0, 1), (0, 1), (1, 2), (0, 2), (1, 4)]);
        assert_eq!(m.split(3), vec![1, 2]);
        assert_eq!(m.split(7), vec![3, 4]);
        assert_eq!(m.split(12), vec![4, 8]);
    }
}
