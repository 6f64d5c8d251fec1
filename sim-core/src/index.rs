//! An index of nodes by free resources: a segment tree holding, per subtree, the
//! per-dimension maximum of the nodes' `FutureIdle`.
//!
//! "The first node (in node order) at or after `i` whose free resources cover `req`"
//! descends only into subtrees whose maxima cover `req`, so a scheduler that places a
//! pod does not scan every node. Updates are O(log n).

use crate::model::ids::NodeId;
use crate::model::resource::{DIMS, Resources};

/// Max-per-dimension segment tree over node free resources.
#[derive(Clone, Debug)]
pub struct NodeIndex {
    size: usize,
    len: usize,
    tree: Vec<Resources>,
}

/// Leaves [`NodeIndex::first_fit`] reads in a row before it climbs the tree.
const PROBE: usize = 8;

/// Leaves [`NodeIndex::scan_fitting`] reads in a row after a fitting node (to
/// the end of their aligned block).
const BLOCK: usize = 16;

const EMPTY: Resources = Resources([i64::MIN / 4; DIMS]);

impl NodeIndex {
    /// Builds the index from each node's free resources.
    pub fn new(free: &[Resources]) -> NodeIndex {
        let len = free.len();
        let size = len.next_power_of_two().max(1);
        let mut tree = vec![EMPTY; 2 * size];
        tree[size..size + len].copy_from_slice(free);
        for i in (1..size).rev() {
            tree[i] = tree[2 * i].max(&tree[2 * i + 1]);
        }
        NodeIndex { size, len, tree }
    }
    /// Number of nodes indexed.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True without nodes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Sets a node's free resources.
    pub fn update(&mut self, node: NodeId, free: Resources) {
        let mut i = self.size + node.0 as usize;
        self.tree[i] = free;
        i /= 2;
        while i >= 1 {
            let m = self.tree[2 * i].max(&self.tree[2 * i + 1]);
            if self.tree[i] == m {
                break;
            }
            self.tree[i] = m;
            i /= 2;
        }
    }
    /// The free resources recorded for a node.
    pub fn free(&self, node: NodeId) -> Resources {
        self.tree[self.size + node.0 as usize]
    }
    /// True if some node's free resources cover `req`. O(1) negative answer when no
    /// single dimension maximum covers it.
    pub fn any_fits(&self, req: &Resources) -> bool {
        self.first_fit(req, 0).is_some()
    }
    /// The first node with index ≥ `from` whose free resources cover `req`.
    pub fn first_fit(&self, req: &Resources, from: usize) -> Option<NodeId> {
        if from >= self.len {
            return None;
        }
        // A request no node has room for, the common failure of a busy
        // cluster, is answered by one read: the root's.
        if !req.fits_in(&self.tree[1]) {
            return None;
        }
        // Scans from a cursor mostly meet a fitting node within a few leaves on a
        // roomy cluster, and leaves lie side by side in memory: read the next
        // few in a row, then climb from the last (cost grows with the distance to
        // the answer, not with the cluster; each step of a climb reads a node far
        // from the last) and descend into the first subtree to its right whose
        // maxima cover `req`.
        let near = (from + PROBE).min(self.len);
        if let Some(k) = self.tree[self.size + from..self.size + near].iter().position(|free| req.fits_in(free)) {
            return Some(NodeId((from + k) as u32));
        }
        if near == self.len {
            return None;
        }
        let mut i = self.size + near - 1;
        'climb: loop {
            loop {
                if i == 1 {
                    return None;
                }
                // A left child's right sibling holds the next positions to the right.
                if i & 1 == 0 && req.fits_in(&self.tree[i + 1]) {
                    i += 1;
                    break;
                }
                i /= 2;
            }
            // Per-dimension maxima can cover `req` with no single node doing so:
            // a subtree whose children both fail is passed over, and the climb
            // goes on to its right.
            while i < self.size {
                if req.fits_in(&self.tree[2 * i]) {
                    i *= 2;
                } else if req.fits_in(&self.tree[2 * i + 1]) {
                    i = 2 * i + 1;
                } else {
                    continue 'climb;
                }
            }
            break;
        }
        let leaf = i - self.size;
        (leaf < self.len).then_some(NodeId(leaf as u32))
    }
    /// Calls `visit` on every node in `lo..hi` whose free resources cover
    /// `req`, in node order, until it returns false: the nodes
    /// [`NodeIndex::first_fit`] would give one call after another, found by
    /// one climb per run of nearby fitting nodes. After a fitting node the
    /// leaves up to the end of its aligned block of 16 are read in a row
    /// (on a roomy cluster most of them fit); past the block, the next
    /// fitting node is searched for again.
    // Inlined into the scheduler's node search, its visit with it: left out by
    // codegen once, the call per node visited cost 1.4% more instructions on
    // a 30,000-job run (docs/PERFORMANCE.md, twentieth round).
    #[inline(always)]
    pub fn scan_fitting(&self, req: &Resources, lo: usize, hi: usize, mut visit: impl FnMut(NodeId) -> bool) {
        let hi = hi.min(self.len);
        let mut i = lo;
        while i < hi {
            let Some(n) = self.first_fit(req, i).map(|n| n.0 as usize).filter(|&n| n < hi) else { return };
            if !visit(NodeId(n as u32)) {
                return;
            }
            let end = ((n / BLOCK + 1) * BLOCK).min(hi);
            for k in n + 1..end {
                if req.fits_in(&self.tree[self.size + k]) && !visit(NodeId(k as u32)) {
                    return;
                }
            }
            i = end;
        }
    }
    /// Every node whose free resources cover `req`, in node order.
    pub fn fitting<'a>(&'a self, req: &'a Resources) -> impl Iterator<Item = NodeId> + 'a {
        let mut next = 0usize;
        std::iter::from_fn(move || {
            let n = self.first_fit(req, next)?;
            next = n.0 as usize + 1;
            Some(n)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn matches_a_linear_scan(
            free in proptest::collection::vec((0i64..8, 0i64..64), 1..300),
            updates in proptest::collection::vec((0usize..300, 0i64..8, 0i64..64), 0..60),
            req in (0i64..9, 0i64..65),
            from in 0usize..302,
        ) {
            let mut v: Vec<Resources> = free.iter().map(|&(g, c)| Resources::new(c, 0, g, 1)).collect();
            let mut idx = NodeIndex::new(&v);
            for (n, g, c) in updates {
                let n = n % v.len();
                v[n] = Resources::new(c, 0, g, 1);
                idx.update(NodeId(n as u32), v[n]);
            }
            let r = Resources::new(req.1, 0, req.0, 1);
            let expect = (from..v.len()).find(|&i| r.fits_in(&v[i])).map(|i| NodeId(i as u32));
            prop_assert_eq!(idx.first_fit(&r, from), expect);
            let all: Vec<NodeId> = idx.fitting(&r).collect();
            let expect_all: Vec<NodeId> = (0..v.len()).filter(|&i| r.fits_in(&v[i])).map(|i| NodeId(i as u32)).collect();
            prop_assert_eq!(all, expect_all);
            // The scan visits the same nodes within its range, and stops when told.
            let hi = (from / 2 + v.len() / 2).max(from);
            let mut seen = Vec::new();
            idx.scan_fitting(&r, from / 2, hi, |n| { seen.push(n); true });
            let expect_range: Vec<NodeId> = (from / 2..hi.min(v.len())).filter(|&i| r.fits_in(&v[i])).map(|i| NodeId(i as u32)).collect();
            prop_assert_eq!(&seen, &expect_range);
            let stop = seen.len() / 2 + 1;
            let mut first = Vec::new();
            idx.scan_fitting(&r, from / 2, hi, |n| { first.push(n); first.len() < stop });
            prop_assert_eq!(&first[..], &expect_range[..stop.min(expect_range.len())]);
        }
    }
}
