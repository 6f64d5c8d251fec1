//! deviceshare's Ascend vNPU mode (HAMi): the pod's choice of chips on a node,
//! remembered per node while the node's chips are unchanged.

use super::super::epoch_memo::EpochMemo;
use lahar_core::devices::vnpu::{NpuAsk, NpuPolicy, Refusal};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::PodId;
use lahar_core::session::Session;
use std::cell::RefCell;

/// What a pod's ask finds on a node: the first chip type that cannot hold it,
/// and Σ over the types of [`lahar_core::devices::vnpu::node_score`] (0 for a type that
/// cannot hold it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Verdict {
    pub refusal: Option<Refusal>,
    pub score: f64,
}

/// The vNPU mode's state in the plugin.
#[derive(Debug)]
pub(super) struct VnpuShare {
    /// `deviceshare.SchedulePolicy`: the chip order of the predicate and score.
    pub policy: NpuPolicy,
    /// Verdicts already made: a verdict reads the node's chips, what their
    /// sharers hold (every change of which moves the node's epoch:
    /// `World::move_vnpu`) and the ask.
    memo: RefCell<EpochMemo<NpuAsk, Verdict>>,
}

impl VnpuShare {
    pub fn new(policy: NpuPolicy) -> VnpuShare {
        VnpuShare { policy, memo: RefCell::new(EpochMemo::default()) }
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
            match lahar_core::devices::vnpu::choose(self.policy, nc, u, written, ask.hami_core) {
                Ok((_, chosen)) => {
                    v.score += lahar_core::devices::vnpu::node_score(self.policy, &nc.ty, &nc.chips, &u.uses, &chosen)
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
        Some(self.memo.borrow_mut().get(ssn, pod, ask, node, || self.compute(ssn, ask, node)))
    }
}
