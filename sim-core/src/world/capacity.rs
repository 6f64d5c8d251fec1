//! Capacity out of service: a node down, some of its GPUs failed, a node
//! cordoned. A node's allocatable is what is up of it, so every scheduler,
//! plugin and index sees a failure the way Volcano's cache does once the
//! kubelet reports it (a NotReady node: nothing fits; lost GPUs: fewer
//! `nvidia.com/gpu`).

use super::World;
use crate::devices::DEVICE_MILLI;
use crate::model::ids::NodeId;
use crate::model::resource::{GPU, Resources};

impl World {
    /// Sets what of node `n` is out of service: the whole node when `down`,
    /// else the GPU devices in `devices` (bit d: device d). Nothing may hold
    /// what goes out (the engine kills those pods first).
    pub(crate) fn set_out_of_service(&mut self, n: NodeId, down: bool, devices: u64) {
        let i = n.0 as usize;
        let ns = &self.nodes[i];
        let nominal = self.cluster.node(n).allocatable + ns.lost;
        let count = ns.gpus.free.len();
        let all = if count >= 64 { u64::MAX } else { (1u64 << count) - 1 };
        let mask = if down { all } else { devices & all };
        let lost = if down {
            nominal
        } else {
            let mut r = Resources::ZERO;
            r.set(GPU, mask.count_ones() as i64 * DEVICE_MILLI);
            r
        };
        let ns = &mut self.nodes[i];
        let partial = ns.gpus.partial;
        for d in 0..count {
            let (was, now) = (ns.lost_devices >> d & 1, mask >> d & 1);
            if was != now {
                ns.gpus.charge(d, if now == 1 { DEVICE_MILLI } else { -DEVICE_MILLI });
            }
        }
        self.partial_devices = self.partial_devices + ns.gpus.partial - partial;
        let delta = lost - ns.lost;
        ns.lost = lost;
        ns.lost_devices = mask;
        self.cluster.set_allocatable(n, nominal - lost);
        if !delta.is_zero() {
            // The cluster's total changed, and with it every job's dominant share
            // (drf's job order): a kept order of waiting PodGroups is rebuilt.
            self.track_waiting = false;
            self.waiting_changes.clear();
        }
        self.gpus_out_milli += delta.get(GPU);
        self.epoch += 1;
        self.node_used_epoch[i] = self.epoch;
        for &h in self.cluster.topology.chain(n) {
            self.hn_allocatable[h] -= delta;
            self.hn_used_epoch[h] = self.epoch;
        }
        let free = self.future_idle(n);
        self.index.update(n, free);
        self.victim_index.touch(n);
    }

    /// Node `n`'s allocatable as declared, whatever faults or absence from the
    /// cluster hold out of service now.
    pub fn nominal_allocatable(&self, n: NodeId) -> Resources {
        self.cluster.node(n).allocatable + self.nodes[n].lost
    }

    /// Cordons node `n` or uncordons it.
    pub(crate) fn set_cordoned(&mut self, n: NodeId, on: bool) {
        self.cluster.set_cordoned(n, on);
        self.node_filters_changed(n);
    }

    /// The pods on node `n` that `keep` selects, in the node's order.
    pub(crate) fn pods_on(&self, n: NodeId, keep: impl Fn(&super::Pod) -> bool) -> Vec<crate::model::ids::PodId> {
        self.nodes[n].pods.iter().copied().filter(|&p| keep(&self.pods[p])).collect()
    }

    /// Puts an operator's taint on node `n` (see [`crate::model::cluster::Cluster::put_taint`]).
    pub(crate) fn put_taint(&mut self, n: NodeId, taint: crate::model::cluster::Taint) {
        self.cluster.put_taint(n, taint);
        self.node_filters_changed(n);
    }
    /// Removes node `n`'s taints of `key` (and `effect`); true if one went.
    pub(crate) fn remove_taints(&mut self, n: NodeId, key: &str, effect: Option<&str>) -> bool {
        let removed = self.cluster.remove_taints(n, key, effect);
        if removed {
            self.node_filters_changed(n);
        }
        removed
    }
    /// Sets node `n`'s label `key` to `value`, or removes it (`None`); true if
    /// its labels changed. Inter-pod affinity's counts by domain are kept by
    /// label value: its memo is stale too.
    pub(crate) fn set_label(&mut self, n: NodeId, key: &str, value: Option<&str>) -> bool {
        if !self.cluster.set_label(n, key, value) {
            return false;
        }
        self.node_filters_changed(n);
        self.affinity_labels_changed();
        true
    }

    /// A change of what node `n` admits: its cached scores and the victim
    /// index's view of it are stale, as after a change of its `used`.
    fn node_filters_changed(&mut self, n: NodeId) {
        self.victim_index.touch(n);
        self.epoch += 1;
        self.node_used_epoch[n] = self.epoch;
    }

    /// Milli-GPUs out of service (failed nodes and devices).
    pub fn gpus_out_of_service_milli(&self) -> i64 {
        self.gpus_out_milli
    }
}
