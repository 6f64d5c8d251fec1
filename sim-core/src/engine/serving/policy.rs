//! kthena's heterogeneous policies in the engine: the ModelServings of one
//! `heterogeneousTarget` (backends) are each a workload of groups; the policy
//! syncs every 15 s from its first backend's arrival, reading them all as one
//! (`Optimize`: replicas and pods summed), and splits the total among them
//! cheapest first. kthena sizes none while one of them does not exist. A
//! service (`spec.services`) of one backend is served by all: the others'
//! ready groups count toward its capacity (their own rows keep theirs).

use super::super::{Engine, Event};
use super::groups::group_ready;
use crate::serving::kthena::{KthenaState, Reading};
use crate::serving::kthena_optimizer::Hetero;
use crate::util::time::SimDuration;
use std::sync::Arc;

/// kthena's autoscale controller's sync period (`AutoscalingSyncPeriodSeconds`).
const SYNC_US: u64 = 15_000_000;

/// A heterogeneous policy: its backends bound so far.
pub(super) struct Policy {
    hetero: Arc<Hetero>,
    state: KthenaState,
    /// Each backend's bound service, once it arrived.
    bound: Vec<Option<u32>>,
    /// The bound whose sync is the policy's (the first backend to arrive).
    driver: u32,
    /// The backend whose service has the demand the others serve.
    service: Option<u32>,
}

impl Engine {
    /// Bound service `k` is backend `backend` of policy `h`: it joins the
    /// policy (the first to arrive drives its syncs), and the backends
    /// without a demand of their own serve the one with one.
    pub(super) fn hetero_joined(&mut self, k: u32, h: &Arc<Hetero>, backend: usize) {
        let name = Arc::clone(&h.spec.name);
        let policy = self.serving.policies.entry(Arc::clone(&name)).or_insert_with(|| Policy {
            hetero: Arc::clone(h),
            state: KthenaState::new(&h.spec),
            bound: vec![None; h.backends.len()],
            driver: k,
            service: None,
        });
        if policy.bound[backend] == Some(k) {
            return;
        }
        policy.bound[backend] = Some(k);
        let others: Vec<u32> = policy.bound.iter().flatten().copied().filter(|&o| o != k).collect();
        let service = policy.service;
        self.serving.bound[k as usize].policy = Some(name.clone());
        if self.serving.bound[k as usize].spec.is_some() {
            if service.is_none() {
                self.serving.policies.get_mut(&name).expect("just made").service = Some(k);
                for o in others {
                    if self.serving.bound[o as usize].spec.is_none() {
                        self.hetero_feed(o, k);
                    }
                }
            }
        } else if let Some(s) = service {
            self.hetero_feed(k, s);
        }
    }

    /// Backend `o` (no demand of its own) serves service `s` from now: its
    /// groups ready now count at once.
    fn hetero_feed(&mut self, o: u32, s: u32) {
        let ou = o as usize;
        self.serving.bound[ou].feeds = Some(s);
        let Some(g) = &self.serving.bound[ou].set else { return };
        let leaders: Vec<crate::model::ids::PodId> =
            g.members.values().filter_map(|&j| group_ready(&self.world, j, &g.pods_ready)).collect();
        for p in leaders {
            if !self.serving.bound[ou].ready.contains_key(&p) {
                self.replica_serves(ou, p);
            }
        }
    }

    /// The sync of policy `name`, driven by bound service `k`
    /// (`doOptimize`): while every backend exists, one reading over them all,
    /// the homogeneous recommendation and correction with the summed bounds,
    /// and each backend patched to its share; the next sync 15 s on.
    pub(super) fn hetero_sync(&mut self, k: u32, name: Arc<str>) {
        let Some(policy) = self.serving.policies.get(&name) else { return };
        if policy.driver != k {
            return;
        }
        let all: Option<Vec<u32>> = policy.bound.iter().copied().collect();
        if let Some(backends) = all {
            let mut r = Reading::default();
            let mut from = Vec::new();
            for &b in &backends {
                let x = self.kthena_reading(b as usize);
                r.replicas += x.replicas;
                r.ready_pods += x.ready_pods;
                r.unready_pods += x.unready_pods;
                r.demand = match (r.demand, x.demand) {
                    (Some(a), Some(d)) => Some(a + d),
                    (a, d) => a.or(d),
                };
                from.push(x.replicas);
            }
            let now = self.now;
            let policy = self.serving.policies.get_mut(&name).expect("found above");
            if let Some(o) = policy.state.scale(&policy.hetero.spec, now, &r) {
                let split = policy.hetero.split(o.replicas);
                let mode = if o.panic { "panic" } else { "stable" };
                for (i, &b) in backends.iter().enumerate() {
                    if split[i] != from[i] {
                        let reason = format!("kthena {mode} mode: metrics recommend {} in all", o.recommended);
                        self.rescaled(b as usize, Arc::clone(&name), from[i], split[i], o.recommended, reason);
                    }
                }
            }
        }
        self.serving.queued += 1;
        self.events.push(self.now.plus(SimDuration(SYNC_US)), Event::Autoscale(k));
    }
}
