//! deviceshare's Ascend vNPU mode (HAMi): the pod's choice of chips on a node,
//! remembered per node while the node's chips are unchanged.

use lahar_core::cluster::NodeId;
use lahar_core::job::PodId;
use lahar_core::session::Session;
use lahar_core::vnpu::{NpuAsk, NpuPolicy, Refusal};
use std::cell::RefCell;

/// What a pod's ask finds on a node: the first chip type that cannot hold it,
/// and Σ over the types of [`lahar_core::vnpu::node_score`] (0 for a type that
/// cannot hold it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Verdict {
    pub refusal: Option<Refusal>,
    pub score: f64,
}

/// Verdicts already made. A verdict reads the node's chips, what their sharers
/// hold and the ask; every change of what the sharers hold moves the node's
/// epoch (`World::move_vnpu`), so a verdict made at the node's current epoch is
/// the verdict. Asks are numbered by content (tasks of equal asks share a
/// number).
#[derive(Debug, Default)]
struct Memo {
    /// Per job, per task: the ask's number + 1 (0: not numbered yet).
    by_task: Vec<Vec<u32>>,
    /// The distinct asks, by number.
    asks: Vec<NpuAsk>,
    /// Per node: (epoch, ask number, verdict).
    nodes: Vec<Vec<(u64, u32, Verdict)>>,
}

/// The vNPU mode's state in the plugin.
#[derive(Debug)]
pub(super) struct VnpuShare {
    /// `deviceshare.SchedulePolicy`: the chip order of the predicate and score.
    pub policy: NpuPolicy,
    memo: RefCell<Memo>,
}

impl VnpuShare {
    pub fn new(policy: NpuPolicy) -> VnpuShare {
        VnpuShare { policy, memo: RefCell::new(Memo::default()) }
    }

    /// The pod's ask, if any.
    pub fn ask<'s>(ssn: &'s Session<'_>, pod: PodId) -> Option<&'s NpuAsk> {
        let p = ssn.pod(pod);
        ssn.job(p.job).spec.tasks[p.task as usize].hints.as_ref()?.vnpu.as_deref()
    }

    fn compute(&self, ssn: &Session<'_>, ask: &NpuAsk, node: NodeId) -> Verdict {
        let n = ssn.node(node);
        let mut v = Verdict { refusal: None, score: 0.0 };
        for (nc, u) in n.vnpu.iter().zip(&ssn.node_state(node).vnpu) {
            let Some(written) = ask.of(&nc.ty.common_word) else { continue };
            match lahar_core::vnpu::choose(self.policy, nc, u, written, ask.hami_core) {
                Ok((_, chosen)) => {
                    v.score += lahar_core::vnpu::node_score(self.policy, &nc.ty, &nc.chips, &u.uses, &chosen)
                }
                Err(r) => {
                    v.refusal.get_or_insert(r);
                }
            }
        }
        v
    }

    /// The pod's verdict on `node` (`None` when it asks for no chips or the node
    /// has none): computed, or (outside exhaustive runs) the one made at the
    /// node's current epoch.
    pub fn verdict(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Verdict> {
        let ask = Self::ask(ssn, pod)?;
        if ssn.node(node).vnpu.is_empty() {
            return None;
        }
        if ssn.is_exhaustive() {
            return Some(self.compute(ssn, ask, node));
        }
        let mut memo = self.memo.borrow_mut();
        let m = &mut *memo;
        let p = ssn.pod(pod);
        let (j, t) = (p.job.0 as usize, p.task as usize);
        if m.by_task.len() <= j {
            m.by_task.resize_with(j + 1, Vec::new);
        }
        if m.by_task[j].len() <= t {
            m.by_task[j].resize(ssn.job(p.job).spec.tasks.len().max(t + 1), 0);
        }
        if m.by_task[j][t] == 0 {
            let id = match m.asks.iter().position(|a| a == ask) {
                Some(i) => i,
                None => {
                    m.asks.push(ask.clone());
                    m.asks.len() - 1
                }
            };
            m.by_task[j][t] = id as u32 + 1;
        }
        let id = m.by_task[j][t] - 1;
        if m.nodes.len() < ssn.node_count() {
            m.nodes.resize_with(ssn.node_count(), Vec::new);
        }
        let epoch = ssn.node_used_epoch(node);
        let entries = &mut m.nodes[node.0 as usize];
        // (The equivalence tests' stale mode reuses a verdict of any epoch.)
        let stale = ssn.stale_scores_for_tests;
        if let Some(&(_, _, v)) = entries.iter().find(|e| (e.0 == epoch || stale) && e.1 == id) {
            return Some(v);
        }
        entries.retain(|e| e.0 == epoch);
        let v = self.compute(ssn, ask, node);
        entries.push((epoch, id, v));
        Some(v)
    }
}
