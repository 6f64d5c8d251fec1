//! The device ledgers the world keeps beside its resource sums: vGPU cards
//! (Volcano's deviceshare, vGPU mode) and exclusive CPUs (numa-aware), moved
//! along every pod's status change.

use super::World;
use crate::model::ids::NodeId;
use crate::model::ids::{JobId, PodId};
use crate::model::job::PodStatus;

impl World {
    /// Models vGPU sharing (before any pod is placed): the pods asking for vGPU
    /// take cards of their nodes, chosen in `policy`'s order, keeping off cards
    /// that hold a pod matching one of their exclusive `rules` (label sets).
    pub fn set_vgpu(&mut self, policy: crate::devices::vgpu::VgpuPolicy, rules: crate::devices::vgpu::ExclusiveRules) {
        self.vgpu_policy = Some(policy);
        self.vgpu_rules = rules;
        for (n, ns) in self.cluster.nodes.iter().zip(&mut self.nodes) {
            ns.vgpu = vec![Default::default(); n.vgpu.len()];
        }
    }

    /// The cards (index, MiB, cores) the next pod placed holds instead of the
    /// fit's: a starting state's pod holds what its annotation says (none
    /// without one, as Volcano's cache counts it).
    pub fn preset_vgpu(&mut self, takes: crate::devices::vgpu::CardTakes) {
        if self.vgpu_policy.is_some() {
            self.vgpu_preset = Some(takes);
        }
    }

    /// Models NUMA placement (before any pod is placed): Guaranteed pods take
    /// CPUs of nodes with a topology as Volcano's numa-aware plugin picks them.
    pub fn set_numa(&mut self) {
        self.numa = true;
        for (n, ns) in self.cluster.nodes.iter().zip(&mut self.nodes) {
            if let Some(t) = &n.numa {
                ns.numa = crate::devices::numa::NumaUse::new(t);
            }
        }
    }

    /// The CPUs the next pod placed holds instead of the fit's (a starting
    /// state's pod holds what its node's `podAllocations` say: none without an
    /// entry, as Volcano sees it).
    pub fn preset_numa(&mut self, cpus: crate::devices::numa::CpuSet) {
        if self.numa {
            self.numa_preset = Some(cpus);
        }
    }

    /// A new session: CPUs released by evictions of the last session count as
    /// held again (the kubelet holds them until the pods are gone; Volcano
    /// frees them only in the session that evicts).
    pub fn settle_numa(&mut self) {
        for n in std::mem::take(&mut self.numa_released) {
            let all = match &self.cluster.nodes[n].numa {
                Some(t) => t.topo.all,
                None => continue,
            };
            if self.nodes[n].numa.settle(&all) {
                self.bump_node(n);
            }
        }
    }

    /// Moves a pod's CPUs along its status change. A pod holds CPUs from
    /// Allocated (or Pipelined, in its session: Volcano's allocate event charges
    /// both) through Running and Releasing; an eviction frees them for the rest
    /// of its session ([`World::settle_numa`]). A pod placed takes the CPUs the
    /// fit picks on the node's free CPUs, as Volcano's allocate event takes the
    /// predicate's assignment made on the same state (a starting state's pod:
    /// the preset CPUs); a pod the fit does not place takes none.
    pub(super) fn move_numa(
        &mut self,
        pod: PodId,
        job: JobId,
        task: usize,
        was: (PodStatus, Option<NodeId>),
        now: (PodStatus, Option<NodeId>),
    ) {
        let holds = |s: PodStatus| {
            matches!(s, PodStatus::Allocated | PodStatus::Pipelined | PodStatus::Running | PodStatus::Releasing)
        };
        let (from, to) = (was.1.filter(|_| holds(was.0)), now.1.filter(|_| holds(now.0)));
        let topo = |w: &World, n: NodeId| w.cluster.nodes[n].numa.clone();
        let mut changed = None;
        if let Some(n) = from.filter(|_| from == to) {
            let Some(t) = topo(self, n) else { return };
            let released = now.0 == PodStatus::Releasing;
            if (was.0 == PodStatus::Releasing) != released
                && self.nodes[n].numa.set_released(&t.topo.all, pod, released)
            {
                if released {
                    self.numa_released.push(n);
                }
                changed = Some(n);
            }
        } else {
            if let Some(n) = from
                && let Some(t) = topo(self, n)
                && self.nodes[n].numa.give_back(&t.topo.all, pod)
            {
                self.bump_node(n);
            }
            if let Some(n) = to
                && let Some(t) = topo(self, n)
            {
                let preset = self.numa_preset.take();
                let cpus = match preset {
                    Some(c) => Some(c),
                    None => {
                        let ask = self.jobs[job].spec.tasks[task].hints.as_ref().and_then(|h| h.numa.as_deref());
                        match ask.map(|a| crate::devices::numa::fit(Some(&t), &self.nodes[n].numa.free, a)) {
                            Some(crate::devices::numa::NumaFit::Assign(c)) => Some(c),
                            _ => None,
                        }
                    }
                };
                if let Some(c) = cpus {
                    self.nodes[n].numa.take(&t.topo.all, pod, c, preset.is_some());
                    changed = Some(n);
                }
            }
        }
        if let Some(n) = changed {
            self.bump_node(n);
        }
    }

    /// Scores and predicates read a node's devices (free CPUs, vGPU cards), which
    /// change here without its `used` changing: the node's cached answers must go.
    fn bump_node(&mut self, n: NodeId) {
        self.epoch += 1;
        self.node_used_epoch[n] = self.epoch;
    }

    /// Moves a pod's vGPU cards along its status change. A pod holds cards from
    /// Allocated (or Pipelined, in its session: Volcano's allocate event charges
    /// both) through Running. When it starts releasing its cards are free at once
    /// (Volcano's `RemoveTask`) but stay exclusive to its rules until it is gone;
    /// an undone eviction takes the same cards back. A pod placed takes the
    /// cards the fit chooses in the run's card order, as Volcano's `Allocate`
    /// reruns the fit on the node's live cards (a starting state's pod: the
    /// preset cards); a pod the cards cannot hold (placed by a path that did not
    /// ask deviceshare) takes none.
    pub(super) fn move_vgpu(
        &mut self,
        pod: PodId,
        job: JobId,
        task: usize,
        was: (PodStatus, Option<NodeId>),
        now: (PodStatus, Option<NodeId>),
    ) {
        let Some(policy) = self.vgpu_policy else { return };
        // Scores read a node's cards, which change here without its `used`
        // changing (an eviction frees them, a pipeline takes them): the node's
        // cached scores must go.
        for n in [was.1, now.1].into_iter().flatten() {
            if !self.nodes[n].vgpu.is_empty() {
                self.bump_node(n);
            }
        }
        let holds = |s: PodStatus| matches!(s, PodStatus::Allocated | PodStatus::Pipelined | PodStatus::Running);
        let releasing = |s: PodStatus| s == PodStatus::Releasing;
        let (from, to) =
            (was.1.filter(|_| holds(was.0) || releasing(was.0)), now.1.filter(|_| holds(now.0) || releasing(now.0)));
        if let Some(n) = from.filter(|_| from == to) {
            let n = n.0 as usize;
            match (holds(was.0), holds(now.0)) {
                (true, false) => {
                    crate::devices::vgpu::set_releasing(
                        &self.cluster.nodes[n].vgpu,
                        &mut self.nodes[n].vgpu,
                        pod,
                        true,
                    );
                }
                (false, true)
                    if crate::devices::vgpu::set_releasing(
                        &self.cluster.nodes[n].vgpu,
                        &mut self.nodes[n].vgpu,
                        pod,
                        false,
                    ) => {}
                (false, true) => self.take_vgpu(pod, job, task, policy, NodeId(n as u32)),
                _ => {}
            }
            return;
        }
        if let Some(n) = from {
            crate::devices::vgpu::give_back(&self.cluster.nodes[n].vgpu, &mut self.nodes[n].vgpu, pod);
        }
        if let Some(n) = to.filter(|_| holds(now.0)) {
            self.take_vgpu(pod, job, task, policy, n);
        }
    }

    /// A pod placed on node `n` takes vGPU cards (see [`World::move_vgpu`]).
    fn take_vgpu(&mut self, pod: PodId, job: JobId, task: usize, policy: crate::devices::vgpu::VgpuPolicy, n: NodeId) {
        let spec = &self.jobs[job].spec;
        let rules = if self.vgpu_rules.is_empty() {
            0
        } else {
            let queue = &self.queues[spec.queue].spec.name;
            crate::devices::vgpu::rule_mask(&self.vgpu_rules, &spec.pod_labels(task, queue))
        };
        if let Some(takes) = self.vgpu_preset.take() {
            let fit = crate::devices::vgpu::VgpuFit { takes, score: 0.0 };
            let cards = &self.cluster.nodes[n].vgpu;
            crate::devices::vgpu::take(cards, &mut self.nodes[n].vgpu, &fit, pod, job, rules);
            return;
        }
        let Some(ask) = spec.tasks[task].hints.as_ref().and_then(|h| h.vgpu.as_deref()) else { return };
        let node = &self.cluster.nodes[n];
        let ns = &mut self.nodes[n];
        if let Ok(fit) = crate::devices::vgpu::fit_exclusive(&node.vgpu, &ns.vgpu, ask, job, rules, policy) {
            crate::devices::vgpu::take(&node.vgpu, &mut ns.vgpu, &fit, pod, job, rules);
        }
    }
}

impl World {
    /// Models Ascend vNPU sharing (before any pod is placed): the pods asking
    /// for chips take chips of their nodes, tried in `policy`'s order.
    pub fn set_vnpu(&mut self, policy: crate::devices::vnpu::NpuPolicy) {
        self.vnpu_policy = Some(policy);
        for (n, ns) in self.cluster.nodes.iter().zip(&mut self.nodes) {
            ns.vnpu = n.vnpu.iter().map(|t| crate::devices::vnpu::NpuUse::new(t.chips.len())).collect();
        }
    }

    /// The chips the next pod placed holds instead of the fit's: a starting
    /// state's pod holds what its annotations say (none without them, as
    /// Volcano's cache counts it).
    pub fn preset_vnpu(&mut self, takes: crate::devices::vnpu::NpuTakes) {
        if self.vnpu_policy.is_some() {
            self.vnpu_preset = Some(takes);
        }
    }

    /// Moves a pod's chips along its status change. A pod holds chips from
    /// Allocated (or Pipelined, in its session) through Running; an evicted
    /// pod's chips are free at once (Volcano's `RemoveTask` subtracts them) and
    /// an undone eviction takes the same chips back. A pod placed takes the
    /// chips Volcano's `Allocate` chooses on the node's live chips (a starting
    /// state's pod: the preset chips); a pod the chips cannot hold takes none.
    pub(super) fn move_vnpu(
        &mut self,
        pod: PodId,
        job: JobId,
        task: usize,
        was: (PodStatus, Option<NodeId>),
        now: (PodStatus, Option<NodeId>),
    ) {
        let Some(policy) = self.vnpu_policy else { return };
        let holds = |s: PodStatus| matches!(s, PodStatus::Allocated | PodStatus::Pipelined | PodStatus::Running);
        let keeps = |s: PodStatus| holds(s) || s == PodStatus::Releasing;
        let (from, to) = (was.1.filter(|_| keeps(was.0)), now.1.filter(|_| keeps(now.0)));
        let mut changed = false;
        if let Some(n) = from.filter(|_| from == to) {
            if holds(was.0) != holds(now.0) {
                let back = holds(now.0);
                for u in &mut self.nodes[n].vnpu {
                    changed |= u.set_releasing(pod, !back);
                }
                if back && !changed {
                    changed = self.take_vnpu(pod, job, task, policy, n);
                }
            }
            if changed {
                self.bump_node(n);
            }
            return;
        }
        if let Some(n) = from {
            let mut gave = false;
            for u in &mut self.nodes[n].vnpu {
                gave |= u.give_back(pod);
            }
            if gave {
                self.bump_node(n);
            }
        }
        if let Some(n) = to.filter(|_| holds(now.0))
            && self.take_vnpu(pod, job, task, policy, n)
        {
            self.bump_node(n);
        }
    }

    /// A pod placed on node `n` takes chips (see [`World::move_vnpu`]); whether
    /// it took any.
    fn take_vnpu(
        &mut self,
        pod: PodId,
        job: JobId,
        task: usize,
        policy: crate::devices::vnpu::NpuPolicy,
        n: NodeId,
    ) -> bool {
        let node = &self.cluster.nodes[n];
        if node.vnpu.is_empty() {
            return false;
        }
        let ns = &mut self.nodes[n];
        let takes = match self.vnpu_preset.take() {
            Some(t) => t,
            None => {
                let spec = &self.jobs[job].spec;
                let Some(ask) = spec.tasks[task].hints.as_ref().and_then(|h| h.vnpu.as_deref()) else { return false };
                let mut out = crate::devices::vnpu::NpuTakes::new();
                for (i, (nc, u)) in node.vnpu.iter().zip(&ns.vnpu).enumerate() {
                    let Some(written) = ask.of(&nc.ty.common_word) else { continue };
                    if let Ok((asks, chosen)) = crate::devices::vnpu::choose(policy, nc, u, written, ask.hami_core) {
                        out.push((i as u32, crate::devices::vnpu::charged(&asks, &chosen)));
                    }
                }
                out
            }
        };
        let mut took = false;
        for (i, t) in takes {
            if let Some(u) = ns.vnpu.get_mut(i as usize) {
                u.take(pod, t);
                took = true;
            }
        }
        took
    }
}
