//! kthena's disaggregated policies in the engine: a ModelServing whose roles an
//! AutoscalingPolicy scales ([`crate::serving::kthena_roles`]). Its serving
//! groups stay as many as written; every 15 s from its first group's arrival
//! the policy reads each role's pods over all groups and patches the template's
//! role counts, and the ModelServing controller makes every group match
//! (`manageRoleReplicasPerGroup`): missing ordinals below the count made,
//! lowest first (`scaleUpRoles`); surplus role replicas deleted, those not
//! running first, then the highest ordinals (`scaleDownRoles`); each group's
//! PodGroup written anew (`updatePodGroupIfNeeded`: `minMember`,
//! `minResources`, each role's `minSubGroups`). A deleted role replica's pods
//! go quietly: the controller does not recover a role it removed.

use super::super::{Engine, Event};
use crate::model::ids::{JobId, PodId};
use crate::model::job::PodStatus;
use crate::record::ScaleRecord;
use crate::serving::kthena::Reading;
use crate::serving::kthena_roles::{Layout, RolesSpec, RolesState};
use crate::util::time::SimDuration;
use std::sync::Arc;

/// kthena's autoscale controller's sync period (`AutoscalingSyncPeriodSeconds`).
const SYNC_US: u64 = 15_000_000;

/// A ModelServing's role scaling: the policy, its memory, and the template's
/// role counts (one per template role).
pub(super) struct Roles {
    spec: Arc<RolesSpec>,
    layout: Arc<Layout>,
    state: RolesState,
    counts: Vec<u32>,
}

impl Roles {
    pub(super) fn new(spec: Arc<RolesSpec>, layout: Arc<Layout>) -> Roles {
        let state = RolesState::new(&spec);
        let counts = layout.roles.iter().map(|r| r.replicas).collect();
        Roles { spec, layout, state, counts }
    }

    /// Whether a role's count differs from the template's as written.
    pub(super) fn scaled(&self) -> bool {
        self.layout.roles.iter().zip(&self.counts).any(|(r, &n)| r.replicas != n)
    }
}

impl Engine {
    /// The policy of bound ModelServing `k` syncs (`doDisaggregatedScale`):
    /// each role's reading, the roles' scale, every changed role patched at
    /// once; the next sync 15 s on.
    pub(super) fn roles_sync(&mut self, k: u32) {
        let ku = k as usize;
        let b = &self.serving.bound[ku];
        let r = b.roles.as_ref().expect("a role policy");
        let readings: Vec<Reading> =
            r.layout.of_policy.iter().map(|&t| self.role_reading(ku, t, r.counts[t] as i32)).collect();
        let now = self.now;
        let b = &mut self.serving.bound[ku];
        let r = b.roles.as_mut().expect("a role policy");
        if let Some(o) = r.state.scale(&r.spec, now, &readings) {
            let mut changed = Vec::new();
            for (i, ro) in o.roles.iter().enumerate() {
                if ro.patched != ro.current {
                    let t = r.layout.of_policy[i];
                    let mode = if ro.panic { "panic" } else { "stable" };
                    let mut reason = format!("kthena {mode} mode: metrics recommend {}", ro.desired);
                    if ro.patched != ro.corrected {
                        let how = if ro.patched > ro.corrected { "raised" } else { "lowered" };
                        reason.push_str(&format!("; the role ratio {how} {} to {}", ro.corrected, ro.patched));
                    }
                    changed.push((t, ro.current, ro.patched, ro.desired, reason));
                    r.counts[t] = ro.patched.max(0) as u32;
                }
            }
            let (name, kind, label) = (Arc::clone(&r.spec.name), Arc::clone(&b.kind), Arc::clone(&b.name));
            let layout = Arc::clone(&r.layout);
            for (t, from, to, proposed, reason) in changed {
                let b = &mut self.serving.bound[ku];
                if to > from {
                    b.stats.scale_ups += 1;
                } else {
                    b.stats.scale_downs += 1;
                }
                let target = format!("{kind} {label} role {}", layout.roles[t].name).into();
                let rec = ScaleRecord { t: now, autoscaler: Arc::clone(&name), target, from, to, proposed, reason };
                self.scale_record(rec);
            }
            let groups: Vec<JobId> =
                self.serving.bound[ku].set.as_ref().map_or_else(Vec::new, |g| g.members.values().copied().collect());
            for j in groups {
                self.match_roles(ku, j);
            }
        }
        self.serving.queued += 1;
        self.events.push(now.plus(SimDuration(SYNC_US)), Event::Autoscale(k));
    }

    /// What kthena's metric collector finds of template role `t` of bound
    /// ModelServing `k`: its count, the demand, and its pods over every
    /// serving group, ready and not.
    fn role_reading(&self, k: usize, t: usize, replicas: i32) -> Reading {
        let b = &self.serving.bound[k];
        let g = b.set.as_ref().expect("a workload of groups");
        let layout = &b.roles.as_ref().expect("a role policy").layout;
        let mut r =
            Reading { replicas, demand: b.spec.as_ref().map(|s| s.demand.at(self.now).0), ..Default::default() };
        for &j in g.members.values() {
            for &p in &self.world.jobs[j].pods {
                let pod = &self.world.pods[p];
                if !layout.roles[t].slots.iter().any(|&(e, w)| pod.task == e || Some(pod.task) == w) {
                    continue;
                }
                match pod.status {
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

    /// The ModelServing controller makes serving group `j` of bound service
    /// `k` match the template's role counts, and writes its PodGroup anew.
    pub(super) fn match_roles(&mut self, k: usize, j: JobId) {
        if self.world.jobs.get(j).is_none_or(|job| job.phase.is_terminal()) {
            return;
        }
        let b = &self.serving.bound[k];
        let r = b.roles.as_ref().expect("a role policy");
        let (layout, counts) = (Arc::clone(&r.layout), r.counts.clone());
        let pods_ready = &b.set.as_ref().expect("a workload of groups").pods_ready;
        let spec = &self.world.jobs[j].spec;
        // Per task, its new replicas; the role replicas to delete.
        let mut tasks: Vec<(usize, u32)> = Vec::new();
        let mut gone: Vec<(usize, u32)> = Vec::new();
        for (role, &n) in layout.roles.iter().zip(&counts) {
            let live: Vec<u32> = (0..role.slots.len() as u32)
                .filter(|&o| spec.tasks[role.slots[o as usize].0 as usize].replicas > 0)
                .collect();
            let have = live.len() as u32;
            if have < n {
                let missing = (0..n).filter(|o| !live.contains(o)).take((n - have) as usize);
                for o in missing {
                    let (e, w) = role.slots[o as usize];
                    tasks.push((e as usize, 1));
                    if let Some(w) = w {
                        tasks.push((w as usize, role.workers));
                    }
                }
            } else if have > n {
                // Not running first (a role replica runs when its pods all run
                // and are ready), then the highest ordinals.
                let world = &self.world;
                let running = |o: u32| {
                    let (e, w) = role.slots[o as usize];
                    let want = 1 + w.map_or(0, |_| role.workers);
                    let up = world.jobs[j]
                        .pods
                        .iter()
                        .filter(|&&p| {
                            let pod = &world.pods[p];
                            (pod.task == e || Some(pod.task) == w)
                                && pod.status == PodStatus::Running
                                && pods_ready.contains(&p)
                        })
                        .count();
                    up as u32 >= want
                };
                let mut order: Vec<(bool, std::cmp::Reverse<u32>)> =
                    live.iter().map(|&o| (running(o), std::cmp::Reverse(o))).collect();
                order.sort_unstable();
                for &(_, std::cmp::Reverse(o)) in order.iter().take((have - n) as usize) {
                    let (e, w) = role.slots[o as usize];
                    tasks.push((e as usize, 0));
                    gone.push((e as usize, 0));
                    if let Some(w) = w {
                        tasks.push((w as usize, 0));
                        gone.push((w as usize, 0));
                    }
                }
            }
        }
        let (member, min_res, subs) = layout.gang(&counts);
        self.world.reshape(j, |spec| {
            for &(t, n) in &tasks {
                spec.tasks[t].replicas = n;
            }
            spec.min_available = member;
            spec.min_resources = min_res;
            if let Some(g) = spec.sub_groups.as_mut() {
                for (p, m) in g.policies.iter_mut().zip(subs) {
                    p.min_groups = m;
                }
            }
        });
        self.dirty = true;
        for &(t, n) in &tasks {
            if n > 0 {
                self.add_pods(j, t, n);
            }
        }
        let leaving: Vec<PodId> = self.world.jobs[j]
            .pods
            .iter()
            .copied()
            .filter(|&p| {
                let pod = &self.world.pods[p];
                gone.iter().any(|&(t, _)| pod.task as usize == t)
                    && matches!(pod.status, PodStatus::Pending | PodStatus::Running)
            })
            .collect();
        for p in leaving {
            self.serving.quiet.insert(p);
            self.delete_pod(p, None);
        }
        self.refresh_job_keeping_phase(j);
        self.phase_due.push(j);
        if self.role_recount(k, j) {
            return;
        }
        // A group whose pods left are all that kept it from serving serves now.
        let b = &self.serving.bound[k];
        let ready = &b.set.as_ref().expect("a workload of groups").pods_ready;
        if let Some(leader) = super::groups::group_ready(&self.world, j, ready)
            && !b.ready.contains_key(&leader)
        {
            self.replica_serves(k, leader);
        }
    }

    /// With capacities by role (`spec.services[].capacityByRole`): serving
    /// group `j` of bound service `k` serves the least over those roles of
    /// its ready role replicas × the role's capacity (a role replica is ready
    /// when every pod its tasks ask for runs and has run its start-up), from
    /// now. False (nothing done) for a service without them.
    pub(super) fn role_recount(&mut self, k: usize, j: JobId) -> bool {
        let b = &self.serving.bound[k];
        let Some(spec) = b.spec.as_ref().filter(|s| !s.capacity_by_role.is_empty()) else { return false };
        let Some(g) = &b.set else { return false };
        let counts = self.world.jobs.get(j).filter(|job| !job.phase.is_terminal()).map_or_else(
            || vec![0; spec.capacity_by_role.len()],
            |job| role_replicas_ready(&self.world, job, &spec.capacity_by_role, &g.pods_ready),
        );
        let cap = spec.capacity_by_role.iter().zip(&counts).map(|((_, c, _), &n)| c * i64::from(n)).min().unwrap_or(0);
        let now = self.now;
        let b = &mut self.serving.bound[k];
        let old = b.set.as_ref().and_then(|g| g.role_cap.get(&j)).map_or(0, |c| c.0);
        // Integrated with the group as it was up to now, then as it is.
        b.recount(now, cap - old);
        let g = b.set.as_mut().expect("a workload of groups");
        if counts.iter().all(|&n| n == 0) {
            g.role_cap.remove(&j);
        } else {
            g.role_cap.insert(j, (cap, counts));
        }
        true
    }
}

/// Job `job`'s ready replicas of each role of `roles` (a kthena serving
/// group: a role replica is the tasks of one `modelserving.volcano.sh/role-id`;
/// ready when every pod they ask for is Running and in `ready`).
fn role_replicas_ready(
    world: &crate::world::World,
    job: &crate::world::Job,
    roles: &[crate::serving::RoleCapacity],
    ready: &std::collections::BTreeSet<PodId>,
) -> Vec<u32> {
    let label = |t: usize, key: &str| {
        let labels = job.spec.tasks[t].hints.as_ref()?.labels.as_ref()?;
        labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    };
    // Per role replica: (its role's place in `roles`, pods asked, pods ready).
    let mut replicas: std::collections::BTreeMap<String, (usize, u32, u32)> = Default::default();
    for t in 0..job.spec.tasks.len() {
        let (Some(role), Some(id)) =
            (label(t, "modelserving.volcano.sh/role"), label(t, "modelserving.volcano.sh/role-id"))
        else {
            continue;
        };
        let Some(r) = roles.iter().position(|(n, _, _)| **n == *role) else { continue };
        replicas.entry(id).or_insert((r, 0, 0)).1 += job.spec.tasks[t].replicas;
    }
    for &p in &job.pods {
        let pod = &world.pods[p];
        if pod.status != PodStatus::Running || !ready.contains(&p) {
            continue;
        }
        if let Some(id) = label(pod.task as usize, "modelserving.volcano.sh/role-id")
            && let Some(e) = replicas.get_mut(&id)
        {
            e.2 += 1;
        }
    }
    let mut out = vec![0u32; roles.len()];
    for (r, want, up) in replicas.into_values() {
        if want > 0 && up >= want {
            out[r] += 1;
        }
    }
    out
}
