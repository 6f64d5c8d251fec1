//! The paper's policies on the nodes of a run in time. A node is seen as a
//! session holds it: free CPU, each GPU device's free milli-GPUs, its GPU model
//! and, for `gpu-clustering`, the kinds of GPU pods it holds now (pods leave in
//! time, so the kinds are those of the pods on it, not of all that ever were). The
//! in-time baselines ([`crate::baselines::kube_default`] with a placement rule)
//! and Volcano's `fgd` plugin score with [`Live`]; where a share of one GPU goes is
//! the world's [`ShareRule`], set from [`share_rule`].

use super::Policy;
use super::replay::tie_order;
use super::score::{self, NodeView};
use lahar_core::frag::{Demand, Free, ModelTable};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::PodId;
use lahar_core::model::resource::CPU;
use lahar_core::session::Session;
use lahar_core::util::rng::RngStreams;
use lahar_core::world::{DEVICE_MILLI, MAX_NODE_GPUS, ShareRule};
use std::cell::OnceCell;

/// Where the shares of one GPU go under `policy`: a uniform draw from `streams`'
/// `placement/devices` for `random`, FGD's device for `fgd`, best fit otherwise
/// (as the placement replay chooses them).
pub fn share_rule(policy: Policy, streams: &RngStreams) -> ShareRule {
    match policy {
        Policy::Random => ShareRule::Random(Box::new(streams.stream("placement/devices", 0))),
        Policy::Fgd => ShareRule::Fgd,
        _ => ShareRule::BestFit,
    }
}

/// One policy's scores on a session's nodes.
#[derive(Debug)]
pub struct Live {
    policy: Policy,
    streams: RngStreams,
    /// The cluster's GPU models (built at the first session).
    models: OnceCell<ModelTable>,
    /// Each node's place in the tie order (drawn at the first session).
    rank: OnceCell<Vec<u32>>,
}

impl Live {
    /// Scores of `policy`; the tie order is drawn from `streams`' `placement/ties`,
    /// as a placement replay draws it.
    pub fn new(policy: Policy, streams: RngStreams) -> Live {
        Live { policy, streams, models: OnceCell::new(), rank: OnceCell::new() }
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    fn models(&self, ssn: &Session<'_>) -> &ModelTable {
        self.models.get_or_init(|| ModelTable::of_nodes(&ssn.cluster().nodes))
    }

    /// Node `n`'s place in the tie order: among equal scores the lowest wins.
    pub fn rank(&self, ssn: &Session<'_>, n: NodeId) -> u32 {
        let rank = self.rank.get_or_init(|| {
            let by_rank = tie_order(ssn.node_count(), &self.streams);
            let mut rank = vec![0; by_rank.len()];
            for (k, &node) in by_rank.iter().enumerate() {
                rank[node as usize] = k as u32;
            }
            rank
        });
        rank[n.0 as usize]
    }

    /// Pod `p` in the paper's terms.
    pub fn demand(&self, ssn: &Session<'_>, p: PodId) -> Demand {
        let pod = ssn.pod(p);
        self.models(ssn).demand(&ssn.job(pod.job).spec.tasks[pod.task as usize])
    }

    /// Pod `p`'s score (0–100) on node `n`, which must admit it.
    pub fn score(&self, ssn: &Session<'_>, p: PodId, n: NodeId) -> i64 {
        let d = self.demand(ssn, p);
        let ns = ssn.node_state(n);
        let mut gpus = [0u16; MAX_NODE_GPUS as usize];
        let k = ns.gpus.free.len().min(gpus.len());
        for (g, &f) in gpus.iter_mut().zip(&ns.gpus.free) {
            *g = f.clamp(0, DEVICE_MILLI) as u16;
        }
        let kinds = match self.policy {
            Policy::GpuClustering => ns.pods.iter().map(|&q| score::kind(&self.demand(ssn, q))).fold(0, |a, b| a | b),
            _ => 0,
        };
        let view = NodeView { cpu: ssn.idle(n).get(CPU), model: ssn.node_model(n), gpus: &gpus[..k], kinds };
        let (s, _) = match self.policy {
            Policy::Random => score::random(&view, &d),
            Policy::DotProduct => score::dot_product(&view, &d),
            Policy::GpuClustering => score::gpu_clustering(&view, &d),
            Policy::GpuPacking => score::gpu_packing(&view, &d),
            Policy::BestFit => score::best_fit_node(&view, &d),
            Policy::Fgd => {
                let target = ssn.frag_target();
                let before = target.node(Free { cpu: view.cpu, model: view.model, gpus: view.gpus });
                score::fgd(&view, &d, target, before)
            }
        };
        s
    }
}
