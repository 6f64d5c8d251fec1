//! The queue tree of hierarchical plugins (`capacity` and `drf` with
//! `enableHierarchy`), built from each queue's `parent` as Volcano does: a queue
//! without a parent hangs under `root`; the `root` queue is the queue of that name
//! if the scenario defines one, else an implicit root node (Volcano's controller
//! always creates it) with no limits.

use lahar_core::world::QueueState;

/// Name of the root queue.
pub const ROOT: &str = "root";

/// Tree over the session's queues. Node `i < queues.len()` is queue `i`; an
/// implicit root, when the scenario has no `root` queue, is the last node.
#[derive(Clone, Debug)]
pub struct QueueTree {
    /// Node index of the root.
    pub root: usize,
    /// Parent of each node (`None` for the root).
    pub parent: Vec<Option<usize>>,
    /// Children of each node, by node index.
    pub children: Vec<Vec<usize>>,
    /// Ancestors of each node, root first, the node itself excluded.
    pub ancestors: Vec<Vec<usize>>,
    /// Why the tree is unusable (unknown parent or cycle), as Volcano's
    /// "failed to check queue's hierarchical structure".
    pub error: Option<String>,
}

impl QueueTree {
    /// Builds the tree of `queues`.
    pub fn build(queues: &[QueueState]) -> QueueTree {
        let nq = queues.len();
        let by_name = |n: &str| queues.iter().position(|q| q.spec.name == n);
        let root = by_name(ROOT).unwrap_or(nq);
        let nodes = nq.max(root + 1);
        let mut parent = vec![None; nodes];
        let mut error = None;
        for (i, q) in queues.iter().enumerate() {
            if i == root {
                continue;
            }
            let pname = q.spec.parent.as_deref().unwrap_or(ROOT);
            match by_name(pname) {
                Some(p) => parent[i] = Some(p),
                None if pname == ROOT => parent[i] = Some(root),
                None => {
                    error.get_or_insert(format!("queue `{}` has unknown parent `{pname}`", q.spec.name));
                }
            }
        }
        let mut ancestors = vec![Vec::new(); nodes];
        for (i, anc) in ancestors.iter_mut().enumerate() {
            let mut cur = parent[i];
            while let Some(p) = cur {
                if anc.len() > nodes {
                    error.get_or_insert(format!("cycle in the queue hierarchy at queue `{}`", queues[i].spec.name));
                    anc.clear();
                    break;
                }
                anc.push(p);
                cur = parent[p];
            }
            anc.reverse();
        }
        let mut children = vec![Vec::new(); nodes];
        for (i, p) in parent.iter().enumerate() {
            if let Some(p) = p {
                children[*p].push(i);
            }
        }
        QueueTree { root, parent, children, ancestors, error }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// True if the tree has no node (never: there is always a root).
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// True if the node has no child queue.
    pub fn is_leaf(&self, n: usize) -> bool {
        self.children[n].is_empty()
    }

    /// Every queue node of `n`'s subtree, `n` included (the implicit root is not a
    /// queue and is skipped).
    pub fn subtree_queues(&self, n: usize, nq: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            if x < nq {
                out.push(x);
            }
            stack.extend(self.children[x].iter().copied());
        }
        out.sort_unstable();
        out
    }

    /// Volcano's `getQueueLevel`: the index, in the ancestor lists, of the deepest
    /// ancestor shared by `l` and `r`.
    pub fn common_level(&self, l: usize, r: usize) -> usize {
        let (a, b) = (&self.ancestors[l], &self.ancestors[r]);
        let mut level = 0;
        for i in 0..a.len().min(b.len()) {
            if a[i] != b[i] {
                break;
            }
            level = i;
        }
        level
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lahar_core::model::queue::Queue;

    fn qs(spec: &[(&str, Option<&str>)]) -> Vec<QueueState> {
        spec.iter()
            .map(|(n, p)| {
                let mut q = Queue::new(*n);
                q.parent = p.map(str::to_string);
                QueueState::new(q)
            })
            .collect()
    }

    #[test]
    fn implicit_root_and_levels() {
        let t = QueueTree::build(&qs(&[("eng", None), ("dev", Some("eng")), ("prod", Some("eng")), ("ops", None)]));
        assert_eq!(t.root, 4);
        assert!(t.error.is_none());
        assert_eq!(t.ancestors[1], vec![4, 0]);
        assert_eq!(t.children[4], vec![0, 3]);
        assert!(!t.is_leaf(0) && t.is_leaf(1));
        assert_eq!(t.common_level(1, 2), 1);
        assert_eq!(t.common_level(1, 3), 0);
        assert_eq!(t.subtree_queues(4, 4), vec![0, 1, 2, 3]);
    }

    #[test]
    fn explicit_root_unknown_parent_and_cycle() {
        let t = QueueTree::build(&qs(&[("a", Some("root")), ("root", None)]));
        assert_eq!((t.root, t.len()), (1, 2));
        assert_eq!(t.ancestors[0], vec![1]);
        let t = QueueTree::build(&qs(&[("a", Some("nope"))]));
        assert_eq!(t.error.as_deref(), Some("queue `a` has unknown parent `nope`"));
        let t = QueueTree::build(&qs(&[("a", Some("b")), ("b", Some("a"))]));
        assert_eq!(t.error.as_deref(), Some("cycle in the queue hierarchy at queue `a`"));
    }
}
