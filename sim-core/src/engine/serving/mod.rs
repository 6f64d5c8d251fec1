//! Services as the engine runs them: each bound to its workload when the job
//! arrives, its ready pods (a pod serves once it has run its start-up delay),
//! what it is offered and serves integrated exactly between changes, and its
//! HorizontalPodAutoscaler synced every period, resizing the workload as its
//! controller would (a ReplicaSet deletes the pods it ranks first, a
//! StatefulSet its highest ordinals); an HPA made by a KEDA ScaledObject has
//! KEDA's loop beside it, polling every `pollingInterval`. A workload of groups
//! (a LeaderWorkerSet or ModelServing, [`GroupSet`](crate::model::job::GroupSet))
//! is sized in groups, each its own job made and deleted whole, by an HPA or by
//! kthena's AutoscalingPolicy; a group serves once all its pods have run their
//! start-up.

use super::{Engine, Event};
use crate::model::ids::{JobId, PodId};
use crate::model::job::GroupAutoscaler;
use crate::model::job::PodStatus;
use crate::record::{ScaleRecord, ServiceSample, ServiceStats};
use crate::serving::ServiceSpec;
use crate::serving::hpa::{HpaSpec, HpaState, Observation};
use crate::serving::keda::KedaState;
use crate::serving::kthena::{KthenaSpec, KthenaState};
use crate::util::time::{SimDuration, SimTime};
use std::collections::BTreeMap;
use std::sync::Arc;

mod groups;
mod policy;
mod ray;
mod roles;

use groups::{Groups, group_ready, leader_of};

/// The engine's services.
#[derive(Default)]
pub(super) struct Serving {
    /// `spec.services` by (namespace, name), with whether one was bound.
    wanted: BTreeMap<(Arc<str>, String), (Arc<ServiceSpec>, bool)>,
    bound: Vec<Bound>,
    by_job: BTreeMap<JobId, u32>,
    /// Bound workloads of groups by (namespace, name).
    sets: BTreeMap<(Arc<str>, String), u32>,
    /// kthena policies with a heterogeneous target, by name.
    policies: BTreeMap<Arc<str>, policy::Policy>,
    /// Autoscale and Ready events queued (they do not keep a run going).
    pub queued: usize,
    /// Milli-GPUs the services' Running pods hold, since `gpu_since`.
    pub gpu_milli: i64,
    gpu_since: SimTime,
    /// Jobs whose pods this session evicted for a service (sorted): the work
    /// they lose is counted against the services.
    pub hit: Vec<JobId>,
    /// Pods their controller deleted on purpose (a role replica a kthena
    /// policy scaled away): their deletion is no event for recovery.
    pub quiet: std::collections::BTreeSet<PodId>,
}

struct Bound {
    job: JobId,
    name: Arc<str>,
    kind: Arc<str>,
    spec: Option<Arc<ServiceSpec>>,
    hpa: Option<(Arc<HpaSpec>, HpaState)>,
    /// kthena's AutoscalingPolicy, for a ModelServing it sizes.
    kthena: Option<(Arc<KthenaSpec>, KthenaState)>,
    /// kthena's AutoscalingPolicy, for a ModelServing whose roles it scales.
    roles: Option<Box<roles::Roles>>,
    /// KEDA's memory of the ScaledObject that made the HPA, if one did.
    keda: KedaState,
    /// For a workload of groups: its groups and their pods.
    set: Option<Groups>,
    /// For a RayService: its Serve replicas on the cluster's pods.
    ray: Option<Box<ray::RayState>>,
    /// For a backend of a heterogeneous kthena policy: the policy.
    policy: Option<Arc<str>>,
    /// The service this one's ready replicas also serve (a backend of a
    /// heterogeneous kthena policy without a demand of its own serves the
    /// demand of the backend that has one).
    feeds: Option<u32>,
    /// Ready replicas of the backends that feed this service.
    fed_ready: u32,
    /// Ready replicas (pods; a group's leader for a workload of groups) and
    /// what each serves.
    ready: BTreeMap<PodId, i64>,
    capacity: i64,
    since: SimTime,
    last: SimTime,
    short_since: Option<SimTime>,
    stats: ServiceStats,
}

impl Serving {
    pub(super) fn new(services: &[Arc<ServiceSpec>]) -> Serving {
        let wanted =
            services.iter().map(|s| ((Arc::clone(&s.namespace), s.name.clone()), (Arc::clone(s), false))).collect();
        Serving { wanted, ..Default::default() }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.bound.is_empty()
    }

    /// Whether job `j` is a service.
    pub(super) fn serves(&self, j: JobId) -> bool {
        self.by_job.contains_key(&j)
    }
}

impl Bound {
    /// Its replicas that serve (a RayService's: its serving deployment's).
    fn serving_replicas(&self) -> u32 {
        match &self.ray {
            Some(r) => r.ready,
            None => {
                let by_role = self.set.as_ref().map_or(0, |g| g.role_cap.values().filter(|c| c.0 > 0).count());
                self.ready.len() as u32 + self.fed_ready + by_role as u32
            }
        }
    }

    /// Its capacity changes by `dc` at `now` (what came before integrated at
    /// the old capacity first).
    fn recount(&mut self, now: SimTime, dc: i64) {
        self.advance(now);
        self.capacity += dc;
    }

    /// Integrates what was offered and served from `last` to `now`.
    fn advance(&mut self, now: SimTime) {
        if now <= self.last {
            return;
        }
        let Some(spec) = &self.spec else {
            self.last = now;
            return;
        };
        let cap = self.capacity;
        let serving = self.serving_replicas() as i64;
        let mut role_ready = vec![0i64; spec.capacity_by_role.len()];
        for (_, counts) in self.set.iter().flat_map(|g| g.role_cap.values()) {
            for (r, &c) in role_ready.iter_mut().zip(counts) {
                *r += i64::from(c);
            }
        }
        let short = |rate: i64| replicas_short(spec, rate, serving, &role_ready);
        let st = &mut self.stats;
        let short_since = &mut self.short_since;
        spec.demand.pieces(self.last, now, |a, b, rate| {
            let dt = b.micros() - a.micros();
            st.offered += rate as u128 * u128::from(dt);
            st.served += rate.min(cap) as u128 * u128::from(dt);
            st.replica_short_us += short(rate) as u128 * u128::from(dt);
            if rate > cap {
                st.short_us += dt;
                short_since.get_or_insert(a);
            } else if let Some(s) = short_since.take() {
                st.catch_up_us.push(a.micros() - s.micros());
            }
        });
        self.last = now;
    }
}

/// Replicas short of demand `rate`: of the service's replicas (each serving
/// `capacity`; `serving` of them do), or with capacities by role, of each
/// role's over all groups (`role_ready` of each do).
fn replicas_short(spec: &ServiceSpec, rate: i64, serving: i64, role_ready: &[i64]) -> i64 {
    if spec.capacity_by_role.is_empty() {
        let per = spec.capacity.max(1);
        return ((rate + per - 1) / per - serving).max(0);
    }
    spec.capacity_by_role
        .iter()
        .zip(role_ready)
        .map(|((_, per, _), &have)| ((rate + per - 1) / per - have).max(0))
        .sum()
}

/// Counts a pod of status `status` (serving if `ready`) as the HPA
/// controller's `groupPods` sorts it.
fn tally(o: &mut Observation, status: PodStatus, ready: bool) {
    match status {
        PodStatus::Pending | PodStatus::Allocated | PodStatus::Pipelined => o.pending += 1,
        PodStatus::Running if ready => o.ready += 1,
        PodStatus::Running => o.starting += 1,
        PodStatus::Succeeded => o.succeeded += 1,
        PodStatus::Releasing | PodStatus::Failed => o.ignored += 1,
        PodStatus::Deleted => {}
    }
}

/// The replicas a workload asks for: over all its tasks.
fn replicas(spec: &crate::model::job::JobSpec) -> u32 {
    spec.tasks.iter().map(|t| t.replicas).sum()
}

impl Engine {
    /// Whether the run may have services (`spec.services`, or a job with an
    /// autoscaler): its outputs have the services' columns.
    pub fn has_services(&self) -> bool {
        !self.cfg.services.is_empty() || self.cfg.autoscaled
    }

    /// Job `j` arrived: a service of `spec.services` or a workload with an
    /// autoscaler is bound to it; an autoscaler syncs at once (the HPA is made
    /// with its target) and every period after.
    pub(super) fn serving_arrived(&mut self, j: JobId) {
        if let Some((set, i)) = self.world.jobs[j].spec.group.clone() {
            return self.group_arrived(j, set, i);
        }
        let spec = &self.world.jobs[j].spec;
        let key = (Arc::clone(&spec.namespace), spec.name.clone());
        let hpa = spec.autoscaler.clone();
        let ray_serve = spec.ray_serve.clone();
        if hpa.is_none() && ray_serve.is_none() && !self.serving.wanted.contains_key(&key) {
            return;
        }
        // The same job again (a restart): its service goes on.
        if self.serving.by_job.contains_key(&j) {
            return;
        }
        // Named as jobs.csv names the job.
        let mut label = String::new();
        spec.push_label(&mut label);
        let (kind, replicas) = (Arc::clone(&spec.kind), replicas(spec));
        let k = self.bind(j, key, (label.into(), kind), hpa.map(GroupAutoscaler::Hpa), None);
        self.serving.bound[k as usize].stats.max_replicas = replicas;
        if let Some(spec) = ray_serve {
            self.ray_bound(k, spec);
        }
    }

    /// Binds a service to job `j` (the first group of a workload of groups):
    /// `key` finds its `spec.services` entry, `named` is its (name, kind) in
    /// the outputs. Its autoscaler's first sync (and KEDA's first poll, before
    /// it: the ScaledObject comes before the HPA it makes) is queued now.
    fn bind(
        &mut self,
        j: JobId,
        key: (Arc<str>, String),
        (name, kind): (Arc<str>, Arc<str>),
        autoscaler: Option<GroupAutoscaler>,
        set: Option<Groups>,
    ) -> u32 {
        let service = self.serving.wanted.get_mut(&key).map(|(s, bound)| {
            *bound = true;
            Arc::clone(s)
        });
        let k = self.serving.bound.len() as u32;
        let stats = ServiceStats {
            service: Arc::clone(&name),
            kind: Arc::clone(&kind),
            has_demand: service.is_some(),
            unit: service.as_ref().map_or_else(Default::default, |s| s.unit),
            ..Default::default()
        };
        let has_autoscaler = autoscaler.is_some();
        let (mut hpa, mut kthena, mut role_policy) = (None, None, None);
        match autoscaler {
            Some(GroupAutoscaler::Hpa(h)) => hpa = Some(h),
            Some(GroupAutoscaler::Kthena(k)) => kthena = Some(k),
            Some(GroupAutoscaler::KthenaRoles(spec, layout)) => {
                role_policy = Some(Box::new(roles::Roles::new(spec, layout)))
            }
            // The policy's sync: see `policy::hetero_sync`.
            Some(GroupAutoscaler::KthenaHetero(..)) | None => {}
        }
        let has_keda = hpa.as_ref().is_some_and(|h| h.keda.is_some());
        self.serving.bound.push(Bound {
            job: j,
            name,
            kind,
            spec: service,
            hpa: hpa.map(|h| (h, HpaState::default())),
            kthena: kthena.map(|k| {
                let state = KthenaState::new(&k);
                (k, state)
            }),
            roles: role_policy,
            keda: KedaState::default(),
            set,
            ray: None,
            policy: None,
            feeds: None,
            fed_ready: 0,
            ready: BTreeMap::new(),
            capacity: 0,
            since: self.now,
            last: self.now,
            short_since: None,
            stats,
        });
        self.serving.by_job.insert(j, k);
        if has_keda {
            self.serving.queued += 1;
            self.events.push(self.now, Event::Activate(k));
        }
        if has_autoscaler {
            self.serving.queued += 1;
            self.events.push(self.now, Event::Autoscale(k));
        }
        k
    }

    /// Integrates the services' GPUs up to `t`.
    fn serving_gpus_until(&mut self, t: SimTime) {
        let s = &mut self.serving;
        let dt = t.micros().saturating_sub(s.gpu_since.micros());
        self.stats.serving.gpu_milli_us += s.gpu_milli.max(0) as u128 * u128::from(dt);
        s.gpu_since = t;
    }

    /// The services' GPUs change by `delta` milli-GPUs now.
    fn serving_gpus(&mut self, delta: i64) {
        self.serving_gpus_until(self.now);
        self.serving.gpu_milli += delta;
    }

    /// Pod `victim` was evicted for job `for_job`: counted when a service
    /// evicted another workload's pod, or another workload a service's.
    pub(super) fn evicted_for(&mut self, victim: PodId, for_job: JobId) {
        let j = self.world.pods[victim].job;
        match (self.serving.serves(for_job), self.serving.serves(j)) {
            (true, false) => {}
            (false, true) => {
                self.stats.serving.pods_evicted += 1;
                return;
            }
            _ => return,
        }
        self.stats.serving.batch_pods_evicted += 1;
        if let Err(i) = self.serving.hit.binary_search(&j) {
            self.serving.hit.insert(i, j);
            self.stats.serving.batch_preemptions += 1;
        }
    }

    /// Pod `p` started: it serves after its service's start-up delay.
    pub(super) fn serving_started(&mut self, p: PodId) {
        let pod = &self.world.pods[p];
        let Some(&k) = self.serving.by_job.get(&pod.job) else { return };
        let gpu = pod.req.gpu_milli();
        self.serving_gpus(gpu);
        let pod = &self.world.pods[p];
        let b = &mut self.serving.bound[k as usize];
        b.stats.starts += 1;
        if b.ray.is_some() {
            return self.ray_node_up(k, p);
        }
        // A backend of a heterogeneous policy without a demand of its own
        // starts as the service it serves (with none yet: at once).
        let startup = match (&b.spec, b.feeds, &b.policy) {
            (Some(spec), _, _) => spec.startup,
            (None, Some(f), _) => self.serving.bound[f as usize].spec.as_ref().map_or(SimDuration::ZERO, |s| s.startup),
            (None, None, Some(_)) => SimDuration::ZERO,
            (None, None, None) => return,
        };
        let at = pod.started.plus(startup);
        if at == self.now {
            self.serving_ready(p);
        } else {
            self.serving.queued += 1;
            self.events.push(at, Event::Ready(p, pod.started));
        }
    }

    /// Pod `p` has run its start-up delay: it serves (unless it stopped since).
    pub(super) fn serving_ready(&mut self, p: PodId) {
        let j = self.world.pods[p].job;
        let Some(&k) = self.serving.by_job.get(&j) else { return };
        let k = k as usize;
        let p = match &mut self.serving.bound[k].set {
            Some(g) => {
                g.pods_ready.insert(p);
                if self.role_recount(k, j) {
                    return;
                }
                let g = self.serving.bound[k].set.as_ref().expect("a workload of groups");
                match group_ready(&self.world, j, &g.pods_ready) {
                    Some(leader) => leader,
                    None => return,
                }
            }
            None => p,
        };
        // A group serving already (its roles grown since) serves on as it was.
        if self.serving.bound[k].ready.contains_key(&p) {
            return;
        }
        self.replica_serves(k, p);
    }

    /// Replica `p` (a pod, or a group's leader) of bound service `k` serves:
    /// its capacity on its node, counted by its service and by the service it
    /// serves with (a backend of a heterogeneous kthena policy).
    fn replica_serves(&mut self, k: usize, p: PodId) {
        let pod = &self.world.pods[p];
        let model = pod.node.map(|n| self.world.cluster.nodes[n.0 as usize].gpu_model.as_str());
        let feeds = self.serving.bound[k].feeds;
        let spec = match (&self.serving.bound[k].spec, feeds) {
            (Some(s), _) => s,
            (None, Some(f)) => match &self.serving.bound[f as usize].spec {
                Some(s) => s,
                None => return,
            },
            (None, None) => return,
        };
        let c = spec.capacity_on(model.filter(|m| !m.is_empty()));
        let now = self.now;
        // Integrated without this replica up to now, then with it.
        let b = &mut self.serving.bound[k];
        b.recount(now, c);
        b.ready.insert(p, c);
        if let Some(f) = feeds {
            let fb = &mut self.serving.bound[f as usize];
            fb.recount(now, c);
            fb.fed_ready += 1;
        }
    }

    /// Pod `p` stopped running: it no longer serves.
    pub(super) fn serving_stopped(&mut self, p: PodId) {
        let Some(&k) = self.serving.by_job.get(&self.world.pods[p].job) else { return };
        self.serving_gpus(-self.world.pods[p].req.gpu_milli());
        if self.serving.bound[k as usize].ray.is_some() {
            return self.ray_node_down(k, p);
        }
        let j = self.world.pods[p].job;
        // A group stops serving with any of its pods.
        let p = match &mut self.serving.bound[k as usize].set {
            Some(g) => {
                g.pods_ready.remove(&p);
                if self.role_recount(k as usize, j) {
                    return;
                }
                leader_of(&self.world, j).unwrap_or(p)
            }
            None => p,
        };
        let b = &mut self.serving.bound[k as usize];
        if b.ready.contains_key(&p) {
            // Integrated with this replica up to now, then without it.
            let c = b.ready[&p];
            b.recount(self.now, -c);
            b.ready.remove(&p);
            if let Some(f) = b.feeds {
                let fb = &mut self.serving.bound[f as usize];
                fb.recount(self.now, -c);
                fb.fed_ready -= 1;
            }
        }
    }

    /// Whether pod `p` serves now.
    fn is_ready(&self, k: usize, p: PodId) -> bool {
        self.serving.bound[k].ready.contains_key(&p)
    }

    /// What the HPA controller sees of bound service `k`'s workload.
    fn observe(&self, k: usize) -> Observation {
        let b = &self.serving.bound[k];
        if let Some(g) = &b.set {
            return self.observe_groups(k, g);
        }
        let job = &self.world.jobs[b.job];
        let mut o = Observation {
            spec_replicas: job.spec.tasks.first().map_or(0, |t| t.replicas) as i32,
            demand: b.spec.as_ref().map(|s| s.demand.at(self.now).0),
            ..Default::default()
        };
        for &p in &job.pods {
            tally(&mut o, self.world.pods[p].status, self.is_ready(k, p));
        }
        o.status_replicas = (o.pending + o.ready + o.starting) as i32;
        o
    }

    /// What an autoscaler sees of bound service `k`'s workload, while the
    /// workload lives.
    fn observe_live(&self, k: usize) -> Option<Observation> {
        // A workload of groups lives on with no group.
        if self.serving.bound[k].set.is_some() {
            return Some(self.observe(k));
        }
        let j = self.serving.bound[k].job;
        let alive = self.world.jobs.get(j).is_some_and(|job| !job.phase.is_terminal());
        alive.then(|| self.observe(k))
    }

    /// Bound service `k`'s autoscaler syncs; the next sync is queued while its
    /// target lives.
    pub(super) fn autoscale(&mut self, k: u32) {
        let ku = k as usize;
        if self.serving.bound[ku].kthena.is_some() {
            return self.kthena_sync(k);
        }
        if self.serving.bound[ku].roles.is_some() {
            return self.roles_sync(k);
        }
        if let Some(name) = self.serving.bound[ku].policy.clone() {
            return self.hetero_sync(k, name);
        }
        let Some(obs) = self.observe_live(ku) else { return };
        let cfg = self.cfg.hpa;
        let now = self.now;
        let b = &mut self.serving.bound[ku];
        let Some((spec, state)) = &mut b.hpa else { return };
        let out = state.reconcile(spec, &cfg, now, &obs);
        let autoscaler = Arc::clone(&spec.name);
        if let Some(to) = out.rescale {
            self.rescaled(ku, autoscaler, obs.spec_replicas, to, out.proposed, out.reason);
        }
        self.serving.queued += 1;
        self.events.push(now.plus(crate::util::time::SimDuration(cfg.sync_period_us)), Event::Autoscale(k));
    }

    /// KEDA polls bound service `k`'s triggers (`RequestScale`); the next poll
    /// is queued while its target lives.
    pub(super) fn activate(&mut self, k: u32) {
        let ku = k as usize;
        let Some(obs) = self.observe_live(ku) else { return };
        let now = self.now;
        let b = &mut self.serving.bound[ku];
        let Some(spec) = b.hpa.as_ref().and_then(|(h, _)| h.keda.clone()) else { return };
        let out = b.keda.poll(&spec, now, obs.spec_replicas, obs.demand);
        if let Some(to) = out.rescale {
            self.rescaled(ku, Arc::clone(&spec.name), obs.spec_replicas, to, -1, out.reason);
        }
        self.serving.queued += 1;
        let period = crate::util::time::SimDuration(u64::from(spec.polling_s.max(1)) * 1_000_000);
        self.events.push(now.plus(period), Event::Activate(k));
    }

    /// An autoscaler set bound service `k`'s replicas from `from` to `to`: a row
    /// of scaling.csv, and the workload resized.
    fn rescaled(&mut self, k: usize, autoscaler: Arc<str>, from: i32, to: i32, proposed: i32, reason: String) {
        let b = &mut self.serving.bound[k];
        if to > from {
            b.stats.scale_ups += 1;
        } else {
            b.stats.scale_downs += 1;
        }
        let j = b.job;
        let r = ScaleRecord {
            t: self.now,
            autoscaler,
            target: format!("{} {}", b.kind, b.name).into(),
            from,
            to,
            proposed,
            reason,
        };
        self.scale_record(r);
        if self.serving.bound[k].set.is_some() {
            return self.resize_groups(k, to.max(0) as u32);
        }
        self.resize(j, to.max(0) as u32);
    }

    /// The workload's controller makes its pods `replicas`: new pods under the
    /// smallest free indices, or the surplus deleted in its controller's order.
    fn resize(&mut self, j: JobId, replicas: u32) {
        let job = &mut self.world.jobs[j];
        // Raised from zero before it first ran: it waits from now.
        if job.first_start.is_none() && job.asks_for_none() && replicas > 0 {
            job.asked_at = Some(self.now);
        }
        let job = &self.world.jobs[j];
        let (task_min, job_min) = (job.spec.tasks[0].min_available, job.spec.min_available);
        self.world.rescale(j, 0, replicas, task_min.min(replicas), job_min);
        self.dirty = true;
        let k = self.serving.by_job[&j] as usize;
        let b = &mut self.serving.bound[k];
        b.stats.max_replicas = b.stats.max_replicas.max(replicas);
        let job = &self.world.jobs[j];
        let active: Vec<PodId> = job
            .pods
            .iter()
            .copied()
            .filter(|&p| matches!(self.world.pods[p].status, PodStatus::Pending | PodStatus::Running))
            .collect();
        let n = active.len() as u32;
        if n < replicas {
            self.add_pods(j, 0, replicas - n);
        } else if n > replicas {
            let victims = self.deletion_order(j, active);
            for p in victims.into_iter().take((n - replicas) as usize) {
                let job = &self.world.jobs[j];
                if job.phase.is_terminal() || !job.pods.contains(&p) {
                    break;
                }
                self.delete_pod(p, None);
            }
        }
        self.refresh_job_keeping_phase(j);
        self.phase_due.push(j);
    }

    /// An autoscaler's change: a row of scaling.csv.
    fn scale_record(&mut self, r: ScaleRecord) {
        match &mut self.recorder {
            Some(rec) => rec.scaled(&self.world, &r),
            None => self.scaling_out.push(r),
        }
    }

    /// The workload's controller makes `n` pods of task `t` of job `j`, under
    /// the smallest indices no pod of the task has (names, not ranks).
    fn add_pods(&mut self, j: JobId, t: usize, n: u32) {
        let pods = &self.world.pods;
        let mut used: Vec<u32> =
            self.world.jobs[j].pods.iter().filter(|&&p| pods[p].task as usize == t).map(|&p| pods[p].index).collect();
        used.sort_unstable();
        let mut next = 0u32;
        for _ in 0..n {
            while used.binary_search(&next).is_ok() {
                next += 1;
            }
            let p = self.world.create_pod(j, t, next, self.now);
            self.pod_made(p);
            next += 1;
        }
    }

    /// The order a controller deletes `active` pods of job `j` in: a
    /// StatefulSet's highest ordinal first; a ReplicaSet's by Kubernetes'
    /// `ActivePodsWithRanks` (unscheduled, then pending, then not ready, then
    /// more of the workload's pods on the same node, then ready more recently,
    /// then created more recently, both in powers of two of nanoseconds). Where
    /// Kubernetes compares the pods' random UIDs (two ready or creation times in
    /// the same power of two) lahar goes on to the creation time, then the
    /// index, highest first: one of the orders the UIDs could give.
    fn deletion_order(&self, j: JobId, mut active: Vec<PodId>) -> Vec<PodId> {
        let pods = &self.world.pods;
        if &*self.world.jobs[j].spec.kind == "StatefulSet" {
            active.sort_by_key(|&p| std::cmp::Reverse(pods[p].index));
            return active;
        }
        let k = self.serving.by_job[&j] as usize;
        let mut on_node: BTreeMap<Option<u32>, u32> = BTreeMap::new();
        for &p in &active {
            *on_node.entry(pods[p].node.map(|n| n.0)).or_default() += 1;
        }
        let now_ns = u128::from(self.now.micros()) * 1000;
        let bucket = |t: SimTime| -> i64 {
            let d = now_ns.saturating_sub(u128::from(t.micros()) * 1000);
            if d > 0 { d.ilog2() as i64 } else { -1 }
        };
        let startup = self.serving.bound[k].spec.as_ref().map_or(crate::util::time::SimDuration::ZERO, |s| s.startup);
        active.sort_by_key(|&p| {
            let pod = &pods[p];
            let running = pod.status == PodStatus::Running;
            let ready = self.is_ready(k, p);
            let ready_bucket = if ready { bucket(pod.started.plus(startup)) } else { 0 };
            (
                pod.node.is_some(),
                running,
                ready,
                std::cmp::Reverse(on_node[&pod.node.map(|n| n.0)]),
                ready_bucket,
                bucket(pod.created),
                std::cmp::Reverse(pod.index),
            )
        });
        active
    }

    /// Samples every bound service at `t` (the state now).
    pub(super) fn sample_services(&mut self, t: SimTime) {
        for k in 0..self.serving.bound.len() {
            let b = &self.serving.bound[k];
            let members: Vec<JobId> = match &b.set {
                Some(g) => g.members.values().copied().collect(),
                None => vec![b.job],
            };
            let (mut pending, mut starting, mut gpu) = (0, 0, 0);
            let mut replicas = b.set.as_ref().map_or(0, |g| g.desired);
            for j in members {
                let Some(job) = self.world.jobs.get(j) else { continue };
                if b.set.is_none() {
                    replicas = self::replicas(&job.spec);
                }
                self.count_pods(k, job, (&mut pending, &mut starting, &mut gpu));
            }
            if let Some(r) = &b.ray {
                (replicas, pending, starting) = r.counts();
            }
            let s = ServiceSample {
                t,
                service: Arc::clone(&b.name),
                kind: Arc::clone(&b.kind),
                unit: b.spec.as_ref().map_or_else(Default::default, |s| s.unit),
                demand_milli: b.spec.as_ref().map(|s| s.demand.at(t).0),
                capacity_milli: b.capacity,
                replicas,
                pending,
                starting,
                ready: b.serving_replicas(),
                gpu_milli: gpu,
            };
            match &mut self.recorder {
                Some(r) => r.service_sample(&self.world, &s),
                None => self.service_samples.push(s),
            }
        }
    }

    /// Adds job `job`'s Pending pods, its Running pods not yet serving and
    /// their milli-GPUs to the counts of bound service `k`.
    fn count_pods(&self, k: usize, job: &crate::world::Job, (pending, starting, gpu): (&mut u32, &mut u32, &mut i64)) {
        let b = &self.serving.bound[k];
        let serving = |p: PodId| match &b.set {
            Some(g) => g.pods_ready.contains(&p),
            None => b.ready.contains_key(&p),
        };
        for &p in &job.pods {
            let pod = &self.world.pods[p];
            match pod.status {
                PodStatus::Pending => *pending += 1,
                PodStatus::Running => {
                    *gpu += pod.req.gpu_milli();
                    if !serving(p) {
                        *starting += 1;
                    }
                }
                _ => {}
            }
        }
    }

    /// The run ends at `end`: every service's totals.
    pub(super) fn finish_services(&mut self, end: SimTime) {
        self.serving_gpus_until(end);
        for b in &mut self.serving.bound {
            b.advance(end);
            b.stats.measured_us = end.micros().saturating_sub(b.since.micros());
            b.stats.open_short_us = b.short_since.map(|s| end.micros() - s.micros());
            self.stats.services.push(std::mem::take(&mut b.stats));
        }
        for (s, bound) in self.serving.wanted.values() {
            if !bound {
                self.stats.services_missed.push((
                    s.place.clone(),
                    format!("no workload {}/{} arrived: its demand was not measured", s.namespace, s.name),
                ));
            }
        }
    }
}
