//! A workload of groups as a service (a LeaderWorkerSet or kthena ModelServing
//! sized by its autoscaler): each group its own job and PodGroup, made and
//! deleted whole by its controller; the HPA counts groups by their leaders,
//! kthena's policy by their pods; a group serves once every pod of it has run
//! its start-up.

use super::super::{Engine, Event, Lifecycle};
use super::{replicas, tally};
use crate::model::ids::{JobId, PodId};
use crate::model::job::{GroupSet, JobEnd, JobPhase, PodStatus};
use crate::record::EndReason;
use crate::serving::hpa::Observation;
use crate::serving::kthena::Reading;
use crate::util::time::SimDuration;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// kthena's autoscale controller's sync period (`AutoscalingSyncPeriodSeconds`).
const KTHENA_SYNC_US: u64 = 15_000_000;

/// A bound workload of groups: its groups alive by index, how many it asks
/// for, and its pods that have run their start-up.
pub(super) struct Groups {
    pub(super) set: Arc<GroupSet>,
    pub(super) members: BTreeMap<u32, JobId>,
    pub(super) desired: u32,
    pub(super) pods_ready: BTreeSet<PodId>,
    /// For a service with capacities by role: each group's capacity and its
    /// ready replicas of each of those roles (groups with none left out).
    pub(super) role_cap: BTreeMap<JobId, (i64, Vec<u32>)>,
}

impl Engine {
    /// Group `i` of workload `set` arrived as job `j`: the workload is bound
    /// with its first group (its autoscaler syncs from then), and each group
    /// joins it.
    pub(super) fn group_arrived(&mut self, j: JobId, set: Arc<GroupSet>, i: u32) {
        if self.serving.by_job.contains_key(&j) {
            return;
        }
        let key = (Arc::clone(&set.namespace), set.name.clone());
        let k = match self.serving.sets.get(&key) {
            Some(&k) => k,
            None => {
                let name = if &*set.namespace == "default" {
                    set.name.clone()
                } else {
                    format!("{}/{}", set.namespace, set.name)
                };
                let groups = Groups {
                    set: Arc::clone(&set),
                    members: BTreeMap::new(),
                    desired: set.replicas,
                    pods_ready: BTreeSet::new(),
                    role_cap: BTreeMap::new(),
                };
                let named = (name.into(), Arc::clone(&set.kind));
                let k = self.bind(j, key.clone(), named, Some(set.autoscaler.clone()), Some(groups));
                self.serving.sets.insert(key, k);
                k
            }
        };
        self.serving.by_job.insert(j, k);
        if let crate::model::job::GroupAutoscaler::KthenaHetero(h, backend) = &set.autoscaler {
            self.hetero_joined(k, h, *backend);
        }
        let b = &mut self.serving.bound[k as usize];
        let g = b.set.as_mut().expect("a workload of groups");
        g.members.insert(i, j);
        b.stats.max_replicas = b.stats.max_replicas.max(g.members.len() as u32);
        // A group arriving after its roles were scaled is made to match.
        if b.roles.as_ref().is_some_and(|r| r.scaled()) {
            self.match_roles(k as usize, j);
        }
    }

    /// What the HPA controller sees of a workload of groups: its scale
    /// subresource counts groups, and its pod selector (a LeaderWorkerSet's
    /// `hpaPodSelector`) the groups' leaders.
    pub(super) fn observe_groups(&self, k: usize, g: &Groups) -> Observation {
        let b = &self.serving.bound[k];
        let mut o = Observation {
            spec_replicas: g.desired as i32,
            status_replicas: g.members.len() as i32,
            demand: b.spec.as_ref().map(|s| s.demand.at(self.now).0),
            ..Default::default()
        };
        for &j in g.members.values() {
            if let Some(p) = leader_of(&self.world, j) {
                tally(&mut o, self.world.pods[p].status, self.is_ready(k, p));
            }
        }
        o
    }

    /// kthena's autoscale controller syncs the policy of bound ModelServing
    /// `k` (`doScale`): its metric collector's reading, the policy's scale,
    /// and the ModelServing patched when the count differs; the next sync is
    /// queued 15 s on (`AutoscalingSyncPeriodSeconds`).
    pub(super) fn kthena_sync(&mut self, k: u32) {
        let ku = k as usize;
        let reading = self.kthena_reading(ku);
        let now = self.now;
        let b = &mut self.serving.bound[ku];
        let (spec, state) = b.kthena.as_mut().expect("a kthena policy");
        if let Some(o) = state.scale(spec, now, &reading)
            && o.replicas != reading.replicas
        {
            let mode = if o.panic { "panic" } else { "stable" };
            let reason = format!("kthena {mode} mode: metrics recommend {}", o.recommended);
            let name = Arc::clone(&spec.name);
            self.rescaled(ku, name, reading.replicas, o.replicas, o.recommended, reason);
        }
        self.serving.queued += 1;
        self.events.push(now.plus(SimDuration(KTHENA_SYNC_US)), Event::Autoscale(k));
    }

    /// What kthena's metric collector finds of bound ModelServing `k`: its
    /// replicas, the demand, and its pods ready and not.
    pub(super) fn kthena_reading(&self, k: usize) -> Reading {
        let b = &self.serving.bound[k];
        let g = b.set.as_ref().expect("a workload of groups");
        let mut r = Reading {
            replicas: g.desired as i32,
            demand: b.spec.as_ref().map(|s| s.demand.at(self.now).0),
            ..Default::default()
        };
        for &j in g.members.values() {
            for &p in &self.world.jobs[j].pods {
                match self.world.pods[p].status {
                    PodStatus::Running if g.pods_ready.contains(&p) => r.ready_pods += 1,
                    PodStatus::Running | PodStatus::Pending | PodStatus::Allocated | PodStatus::Pipelined => {
                        r.unready_pods += 1
                    }
                    _ => {}
                }
            }
        }
        r
    }

    /// The controller of workload of groups `k` makes it `groups` groups: on a
    /// scale-up the lowest indices missing below `groups` are made (each a new
    /// job, created now); on a scale-down the surplus groups are deleted — a
    /// LeaderWorkerSet's highest indices first (its leader StatefulSet's
    /// highest ordinals; the group's workers and PodGroup go with its leader),
    /// a ModelServing's groups not serving first, then the highest indices
    /// (kthena's `scaleDownServingGroups`; `forEachMissingOrdinal` on a scale-up).
    pub(super) fn resize_groups(&mut self, k: usize, groups: u32) {
        let b = &self.serving.bound[k];
        let g = b.set.as_ref().expect("a workload of groups");
        let set = Arc::clone(&g.set);
        let n = g.members.len() as u32;
        let serving =
            |j: JobId| set.not_ready_first && leader_of(&self.world, j).is_some_and(|l| b.ready.contains_key(&l));
        let mut order: Vec<(bool, std::cmp::Reverse<u32>, JobId)> =
            g.members.iter().map(|(&i, &j)| (serving(j), std::cmp::Reverse(i), j)).collect();
        order.sort_unstable();
        let gone: Vec<(u32, JobId)> =
            order.iter().take(n.saturating_sub(groups) as usize).map(|&(_, i, j)| (i.0, j)).collect();
        let made: Vec<u32> = (0..groups.min(set.most))
            .filter(|i| !g.members.contains_key(i))
            .take(groups.saturating_sub(n) as usize)
            .collect();
        self.serving.bound[k].set.as_mut().expect("a workload of groups").desired = groups;
        for (i, j) in gone {
            // Still the service's while its pods leave (`by_job` keeps it).
            self.serving.bound[k].set.as_mut().expect("a workload of groups").members.remove(&i);
            if !self.world.jobs[j].phase.is_terminal() {
                self.end_job(j, JobPhase::Terminated, EndReason::Killed, JobEnd::ScaledIn);
            }
        }
        for i in made {
            let Some(mut spec) = set.group(i) else { continue };
            spec.submit = self.now;
            spec.group = Some((Arc::clone(&set), i));
            let j = self.world.add_job(spec);
            self.runtime.admit(j, set.profile.clone());
            self.on(Lifecycle::JobArrived(j));
        }
        let b = &mut self.serving.bound[k];
        b.stats.max_replicas = b.stats.max_replicas.max(groups);
        self.dirty = true;
    }
}

/// A group's leader: the newest pod of its first task.
pub(super) fn leader_of(world: &crate::world::World, j: JobId) -> Option<PodId> {
    let job = world.jobs.get(j)?;
    job.pods.iter().rev().copied().find(|&p| world.pods[p].task == 0)
}

/// Group `j`'s leader if every pod the group asks for is Running and has run
/// its start-up (is in `ready`).
pub(super) fn group_ready(world: &crate::world::World, j: JobId, ready: &BTreeSet<PodId>) -> Option<PodId> {
    let job = world.jobs.get(j)?;
    let serving =
        job.pods.iter().filter(|&&p| world.pods[p].status == PodStatus::Running && ready.contains(&p)).count();
    (serving as u32 >= replicas(&job.spec)).then(|| leader_of(world, j)).flatten()
}
