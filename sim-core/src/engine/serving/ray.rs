//! A RayService's Serve replicas in the engine: actors on the cluster's
//! running pods (Ray nodes), placed by Serve's default SPREAD (the node with
//! the fewest replicas that has room), ready `startup` after they are placed;
//! Serve's controller sizing its autoscaled deployment on its 100 ms ticks from
//! the requests its handles push every `metrics_interval_s`; and KubeRay's
//! in-tree autoscaler every 5 s adding worker pods for replicas that find no
//! room and deleting workers idle for `idleTimeoutSeconds`. Time only moves
//! between events: a wake is queued for the next instant anything can change.

use super::super::{Engine, Event};
use crate::model::ids::{JobId, PodId};
use crate::model::job::PodStatus;
use crate::record::ScaleRecord;
use crate::serving::ray::{
    AUTOSCALER_UPDATE_US, Bundle, Controller, RayServeSpec, Sizing, aggregate, next_tick, ongoing_milli,
};
use crate::util::time::{SimDuration, SimTime};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A replica actor.
struct Actor {
    dep: usize,
    /// Creation order (newest stops first).
    seq: u64,
    node: Option<PodId>,
    /// When it serves, once placed.
    ready_at: SimTime,
    ready: bool,
}

/// A Ray node: a running pod of the cluster.
struct RayNode {
    free: Bundle,
    head: bool,
    replicas: u32,
    /// Since when it holds no replica.
    idle_since: Option<SimTime>,
}

/// A RayService's Serve state.
pub(super) struct RayState {
    spec: Arc<RayServeSpec>,
    /// Per deployment: its controller if Serve autoscales it, and its target.
    ctl: Vec<Option<Controller>>,
    targets: Vec<u32>,
    actors: Vec<Actor>,
    seq: u64,
    nodes: BTreeMap<PodId, RayNode>,
    /// The serving deployment's requests as last pushed (milli-requests).
    metric: i64,
    next_push: SimTime,
    start: SimTime,
    /// The earliest wake queued.
    wake: Option<SimTime>,
    /// The serving deployment's ready replicas.
    pub(super) ready: u32,
    /// The controller has input its last tick did not see: every tick between
    /// two changes of its input decides alike, so only the first after a
    /// change and the one a pending decision is due at are run.
    fresh: bool,
}

impl RayState {
    fn new(spec: Arc<RayServeSpec>, now: SimTime) -> RayState {
        let mut ctl = Vec::new();
        let mut targets = Vec::new();
        for d in &spec.deployments {
            match &d.sizing {
                Sizing::Fixed(n) => {
                    ctl.push(None);
                    targets.push(*n);
                }
                Sizing::Auto(a) => {
                    let c = Controller::new(a);
                    targets.push(c.target);
                    ctl.push(Some(c));
                }
            }
        }
        let interval = spec.serving.and_then(|s| match &spec.deployments[s].sizing {
            Sizing::Auto(a) => Some(a.metrics_interval),
            Sizing::Fixed(_) => None,
        });
        let next_push = interval.map_or(SimTime(u64::MAX), |i| now.plus(i));
        let mut s = RayState {
            spec,
            ctl,
            targets,
            actors: Vec::new(),
            seq: 0,
            nodes: BTreeMap::new(),
            metric: 0,
            next_push,
            start: now,
            wake: None,
            ready: 0,
            fresh: true,
        };
        for d in 0..s.targets.len() {
            for _ in 0..s.targets[d] {
                s.add_actor(d);
            }
        }
        s
    }

    fn add_actor(&mut self, dep: usize) {
        self.seq += 1;
        self.actors.push(Actor { dep, seq: self.seq, node: None, ready_at: SimTime(u64::MAX), ready: false });
    }

    /// The serving deployment's (target, waiting for room, starting) replicas;
    /// zeros without one.
    pub(super) fn counts(&self) -> (u32, u32, u32) {
        let Some(s) = self.spec.serving else { return (0, 0, 0) };
        let mine = || self.actors.iter().filter(move |a| a.dep == s);
        let waiting = mine().filter(|a| a.node.is_none()).count() as u32;
        let starting = mine().filter(|a| a.node.is_some() && !a.ready).count() as u32;
        (self.targets[s], waiting, starting)
    }
}

impl Engine {
    /// A RayService arrived as bound service `k`: its deployments' replicas
    /// wait for the cluster's pods.
    pub(super) fn ray_bound(&mut self, k: u32, mut spec: Arc<RayServeSpec>) {
        let b = &mut self.serving.bound[k as usize];
        // The deployment the service names (checked before the run).
        if let Some((name, _)) = b.spec.as_ref().and_then(|s| s.deployment.as_ref())
            && let Ok(i) = spec.find(name)
        {
            spec = Arc::new(RayServeSpec { serving: Some(i), ..(*spec).clone() });
        }
        b.ray = Some(Box::new(RayState::new(spec, self.now)));
        self.ray_wake(k, self.now);
    }

    /// Queues a wake of bound service `k` at `t` unless one comes sooner.
    fn ray_wake(&mut self, k: u32, t: SimTime) {
        let Some(r) = self.serving.bound[k as usize].ray.as_mut() else { return };
        if r.wake.is_some_and(|w| w <= t && w >= self.now) {
            return;
        }
        r.wake = Some(t);
        self.serving.queued += 1;
        self.events.push(t, Event::RayServe(k));
    }

    /// A pod of bound service `k` started: a Ray node.
    pub(super) fn ray_node_up(&mut self, k: u32, p: PodId) {
        let pod = &self.world.pods[p];
        let task = pod.task as usize;
        let b = &mut self.serving.bound[k as usize];
        let Some(r) = b.ray.as_mut() else { return };
        let free = r.spec.nodes.get(task).copied().unwrap_or_default();
        r.nodes.insert(p, RayNode { free, head: task == 0, replicas: 0, idle_since: Some(self.now) });
        self.ray_wake(k, self.now);
    }

    /// Pod `p` of bound service `k` stopped or is being deleted: its node
    /// leaves, its replicas die and Serve starts others in their place.
    pub(super) fn ray_node_down(&mut self, k: u32, p: PodId) {
        let now = self.now;
        let ku = k as usize;
        let gone: Vec<(usize, bool)> = {
            let Some(r) = self.serving.bound[ku].ray.as_mut() else { return };
            if r.nodes.remove(&p).is_none() {
                return;
            }
            let gone = r.actors.iter().filter(|a| a.node == Some(p)).map(|a| (a.dep, a.ready)).collect();
            r.actors.retain(|a| a.node != Some(p));
            gone
        };
        let serving = self.serving.bound[ku].ray.as_ref().and_then(|r| r.spec.serving);
        for &(dep, ready) in &gone {
            if ready && Some(dep) == serving {
                self.ray_serving(ku, p, false);
            }
            if let Some(r) = self.serving.bound[ku].ray.as_mut() {
                r.add_actor(dep);
            }
        }
        self.ray_wake(k, now);
    }

    /// A replica of the serving deployment on pod `p` starts (`up`) or stops
    /// serving: the service's capacity moves by what one serves on that node,
    /// and the controller has new input.
    fn ray_serving(&mut self, k: usize, p: PodId, up: bool) {
        let b = &mut self.serving.bound[k];
        let model = self.world.pods[p].node.map(|n| self.world.cluster.nodes[n.0 as usize].gpu_model.as_str());
        let cap = b.spec.as_ref().map_or(0, |spec| spec.capacity_on(model.filter(|m| !m.is_empty())));
        b.recount(self.now, if up { cap } else { -cap });
        if let Some(r) = b.ray.as_mut() {
            if up {
                r.ready += 1;
            } else {
                r.ready -= 1;
            }
            r.fresh = true;
        }
    }

    /// Bound service `k`'s wake: replicas that are ready, a metrics push, the
    /// controller's tick, placement, KubeRay's autoscaler.
    pub(in crate::engine) fn ray_step(&mut self, k: u32) {
        let now = self.now;
        let ku = k as usize;
        let j = self.serving.bound[ku].job;
        // A RayService that ended has no controller left.
        if self.world.jobs.get(j).is_none_or(|job| job.phase.is_terminal()) {
            return;
        }
        let Some(r) = self.serving.bound[ku].ray.as_mut() else { return };
        if r.wake == Some(now) {
            r.wake = None;
        }
        // Replicas whose start-up ran.
        let serving = r.spec.serving;
        let newly: Vec<PodId> = r
            .actors
            .iter_mut()
            .filter(|a| !a.ready && a.node.is_some() && a.ready_at <= now)
            .filter_map(|a| {
                a.ready = true;
                a.node.filter(|_| Some(a.dep) == serving)
            })
            .collect();
        for p in newly {
            self.ray_serving(ku, p, true);
        }
        self.ray_metrics(ku);
        if next_tick(now) == now {
            self.ray_tick(ku);
        }
        self.ray_place(ku);
        if self.serving.bound[ku].ray.as_ref().is_some_and(|r| r.spec.autoscaler.is_some())
            && now.micros().is_multiple_of(AUTOSCALER_UPDATE_US)
        {
            self.ray_autoscale(ku);
        }
        if let Some(t) = self.ray_next(ku) {
            self.ray_wake(k, t);
        }
    }

    /// The handles push the serving deployment's requests, every
    /// `metrics_interval_s`, and at once when no replica runs.
    fn ray_metrics(&mut self, k: usize) {
        let now = self.now;
        let b = &mut self.serving.bound[k];
        let (Some(r), Some(svc)) = (b.ray.as_mut(), b.spec.as_ref()) else { return };
        let Some(s) = r.spec.serving else { return };
        let Sizing::Auto(cfg) = &r.spec.deployments[s].sizing else { return };
        let max_ongoing = r.spec.deployments[s].max_ongoing;
        let before = r.metric;
        if now >= r.next_push {
            r.metric = aggregate(cfg, &svc.demand, r.start, now, max_ongoing, svc.capacity);
            let every = cfg.metrics_interval.micros().max(1);
            let k = (now.micros() - r.start.micros()) / every + 1;
            r.next_push = SimTime(r.start.micros() + k * every);
        } else if r.ready == 0 {
            r.metric = ongoing_milli(svc.demand.at(now).0, max_ongoing, svc.capacity);
        }
        r.fresh |= r.metric != before;
    }

    /// One tick of Serve's controller for the serving deployment.
    fn ray_tick(&mut self, k: usize) {
        let now = self.now;
        // No demand to read: each deployment keeps its initial target.
        if self.serving.bound[k].spec.is_none() {
            return;
        }
        let Some(r) = self.serving.bound[k].ray.as_mut() else { return };
        let Some(s) = r.spec.serving else { return };
        let Sizing::Auto(cfg) = &r.spec.deployments[s].sizing else { return };
        r.fresh = false;
        let running = r.ready;
        let (metric, spec) = (r.metric, Arc::clone(&r.spec));
        let Some(c) = r.ctl[s].as_mut() else { return };
        let from = c.target;
        let Some(d) = c.tick(cfg, now, metric, running) else { return };
        // The new target is new input for the next tick.
        r.fresh = true;
        r.targets[s] = d.to;
        if d.to > from {
            for _ in from..d.to {
                r.add_actor(s);
            }
        } else {
            self.ray_stop(k, s, (from - d.to) as usize);
        }
        let b = &mut self.serving.bound[k];
        if d.to > from {
            b.stats.scale_ups += 1;
        } else {
            b.stats.scale_downs += 1;
        }
        b.stats.max_replicas = b.stats.max_replicas.max(d.to);
        let rec = ScaleRecord {
            t: now,
            autoscaler: format!("ray-serve:{}", spec.deployments[s].name).into(),
            target: format!("{} {}", b.kind, b.name).into(),
            from: from as i32,
            to: d.to as i32,
            proposed: d.proposed.min(i32::MAX as u32) as i32,
            reason: d.reason,
        };
        self.scale_record(rec);
    }

    /// Serve stops `n` replicas of deployment `dep`: those not running first
    /// (unplaced, then starting), then running ones node by node (workers
    /// before the head, nodes with fewer replicas first), newest first.
    fn ray_stop(&mut self, k: usize, dep: usize, n: usize) {
        let now = self.now;
        let serving;
        let mut stopped_ready: Vec<PodId> = Vec::new();
        {
            let Some(r) = self.serving.bound[k].ray.as_mut() else { return };
            serving = r.spec.serving;
            let nodes = &r.nodes;
            let mut order: Vec<usize> = (0..r.actors.len()).filter(|&i| r.actors[i].dep == dep).collect();
            order.sort_by_key(|&i| {
                let a = &r.actors[i];
                let rank = match (a.node, a.ready) {
                    (None, _) => 0,
                    (Some(_), false) => 1,
                    (Some(_), true) => 2,
                };
                let node_key = a
                    .node
                    .and_then(|p| nodes.get(&p))
                    .map_or((false, 0, PodId(0)), |nd| (nd.head, nd.replicas, a.node.unwrap_or(PodId(0))));
                (rank, node_key, std::cmp::Reverse(a.seq))
            });
            let mut stop = vec![false; r.actors.len()];
            for i in order.into_iter().take(n) {
                stop[i] = true;
            }
            for (i, a) in r.actors.iter().enumerate() {
                if !stop[i] {
                    continue;
                }
                if let Some(p) = a.node {
                    let bundle = r.spec.deployments[a.dep].bundle;
                    if let Some(nd) = r.nodes.get_mut(&p) {
                        nd.free = nd.free.plus(&bundle);
                        nd.replicas -= 1;
                        if nd.replicas == 0 {
                            nd.idle_since = Some(now);
                        }
                    }
                    if a.ready && Some(a.dep) == serving {
                        stopped_ready.push(p);
                    }
                }
            }
            let mut i = 0;
            r.actors.retain(|_| {
                i += 1;
                !stop[i - 1]
            });
        }
        for p in stopped_ready {
            self.ray_serving(k, p, false);
        }
    }

    /// Places the replicas that wait, oldest first, each on the node with the
    /// fewest replicas that has room for it (SPREAD), ties to the older pod.
    fn ray_place(&mut self, k: usize) {
        let now = self.now;
        let startup = self.serving.bound[k].spec.as_ref().map_or(SimDuration::ZERO, |s| s.startup);
        let Some(r) = self.serving.bound[k].ray.as_mut() else { return };
        for i in 0..r.actors.len() {
            if r.actors[i].node.is_some() {
                continue;
            }
            let d = &r.spec.deployments[r.actors[i].dep];
            let per_node = |p: PodId| r.actors.iter().filter(|a| a.node == Some(p) && a.dep == r.actors[i].dep).count();
            let best = r
                .nodes
                .iter()
                .filter(|(p, nd)| nd.free.fits(&d.bundle) && d.per_node.is_none_or(|m| per_node(**p) < m as usize))
                .min_by_key(|(p, nd)| (nd.replicas, **p))
                .map(|(p, _)| *p);
            let Some(p) = best else { continue };
            let nd = r.nodes.get_mut(&p).expect("a node just found");
            nd.free = nd.free.minus(&d.bundle);
            nd.replicas += 1;
            nd.idle_since = None;
            let a = &mut r.actors[i];
            a.node = Some(p);
            a.ready_at = now.plus(startup);
        }
    }

    /// KubeRay's in-tree autoscaler (Ray's v1 `StandardAutoscaler`): the
    /// replicas that wait are packed first-fit onto the room of running and
    /// launching workers; for the rest it launches workers of the first group
    /// whose node fits one (a GPU node only for a replica that asks for GPUs,
    /// when another fits), up to `maxReplicas` and the upscaling speed; then it
    /// deletes workers idle for `idleTimeoutSeconds` down to `minReplicas`.
    fn ray_autoscale(&mut self, k: usize) {
        let now = self.now;
        let Some(r) = self.serving.bound[k].ray.as_ref() else { return };
        let Some(auto) = r.spec.autoscaler.clone() else { return };
        let spec = Arc::clone(&r.spec);
        let j = self.serving.bound[k].job;
        let Some(job) = self.world.jobs.get(j) else { return };
        if job.phase.is_terminal() {
            return;
        }
        let mut demands: Vec<Bundle> =
            r.actors.iter().filter(|a| a.node.is_none()).map(|a| spec.deployments[a.dep].bundle).collect();
        demands.sort_by_key(|b| std::cmp::Reverse((b.gpu_milli, b.cpu_milli, b.memory)));
        // Room: running nodes' free resources, launching workers' whole.
        let mut bins: Vec<Bundle> = r.nodes.values().map(|n| n.free).collect();
        let mut alive = vec![0u32; job.spec.tasks.len()];
        let mut launching = vec![0u32; job.spec.tasks.len()];
        for &p in &job.pods {
            let pod = &self.world.pods[p];
            let t = pod.task as usize;
            match pod.status {
                PodStatus::Pending | PodStatus::Allocated | PodStatus::Pipelined => {
                    alive[t] += 1;
                    launching[t] += 1;
                    bins.push(spec.nodes.get(t).copied().unwrap_or_default());
                }
                PodStatus::Running => alive[t] += 1,
                _ => {}
            }
        }
        let mut add = vec![0u32; job.spec.tasks.len()];
        let waiting = demands.len();
        for d in demands {
            if let Some(bin) = bins.iter_mut().find(|b| b.fits(&d)) {
                *bin = bin.minus(&d);
                continue;
            }
            let fits = |g: &&crate::serving::ray::WorkerGroup| {
                let t = g.task;
                let node = spec.nodes.get(t).copied().unwrap_or_default();
                node.fits(&d)
                    && alive[t] + add[t] < g.max
                    && auto.may_launch(launching[t], alive[t] - launching[t], add[t])
            };
            let cpu_only =
                |g: &&crate::serving::ray::WorkerGroup| spec.nodes.get(g.task).is_some_and(|n| n.gpu_milli == 0);
            let pick = if d.gpu_milli == 0 {
                auto.groups.iter().filter(fits).find(cpu_only).or_else(|| auto.groups.iter().find(fits))
            } else {
                auto.groups.iter().find(fits)
            };
            let Some(g) = pick else { continue };
            add[g.task] += 1;
            bins.push(spec.nodes[g.task].minus(&d));
        }
        // Idle workers past their timeout, longest idle first.
        let mut idle: Vec<(SimTime, PodId)> = r
            .nodes
            .iter()
            .filter(|(_, n)| !n.head && n.replicas == 0)
            .filter_map(|(p, n)| {
                let timeout = auto.idle_timeout_of(self.world.pods[*p].task as usize);
                n.idle_since.filter(|s| s.plus(timeout) <= now).map(|s| (s, *p))
            })
            .collect();
        idle.sort_unstable();
        let mut remove: Vec<(usize, PodId)> = Vec::new();
        let mut left = alive.clone();
        for (_, p) in idle {
            let t = self.world.pods[p].task as usize;
            let Some(g) = auto.groups.iter().find(|g| g.task == t) else { continue };
            if add[t] == 0 && left[t] > g.min {
                left[t] -= 1;
                remove.push((t, p));
            }
        }
        for g in &auto.groups {
            let t = g.task;
            let gone = remove.iter().filter(|x| x.0 == t).count() as u32;
            let (from, to) = (alive[t], alive[t] + add[t] - gone);
            if from == to {
                continue;
            }
            self.ray_resize(k, j, t, to, remove.iter().filter(|x| x.0 == t).map(|x| x.1).collect());
            let b = &self.serving.bound[k];
            let group = &self.world.jobs[j].spec.tasks[t].name;
            let why = if to > from {
                format!("{waiting} Serve replica(s) wait for room")
            } else {
                format!("idle for {}s", auto.idle_timeout_of(t).micros() / 1_000_000)
            };
            let rec = ScaleRecord {
                t: now,
                autoscaler: format!("ray-autoscaler:{group}").into(),
                target: format!("{} {}", b.kind, b.name).into(),
                from: from as i32,
                to: to as i32,
                proposed: to as i32,
                reason: why,
            };
            self.scale_record(rec);
        }
    }

    /// KubeRay sets worker task `t` of job `j` to `to` pods: new ones under
    /// the smallest free indices, or the pods in `delete` deleted.
    fn ray_resize(&mut self, k: usize, j: JobId, t: usize, to: u32, delete: Vec<PodId>) {
        let job_min = self.world.jobs[j].spec.min_available;
        let task_min = self.world.jobs[j].spec.tasks[t].min_available.min(to);
        self.world.rescale(j, t, to, task_min, job_min);
        self.dirty = true;
        let ku = k as u32;
        for p in delete {
            self.ray_node_down(ku, p);
            self.delete_pod(p, None);
        }
        let alive = self.alive_pods(j, t);
        if alive < to {
            self.add_pods(j, t, to - alive);
        }
        self.refresh_job_keeping_phase(j);
        self.phase_due.push(j);
    }

    /// Pods of task `t` of job `j` waiting for a node or running (what
    /// KubeRay counts as the group's workers).
    fn alive_pods(&self, j: JobId, t: usize) -> u32 {
        let Some(job) = self.world.jobs.get(j) else { return 0 };
        let alive = |p: &&PodId| {
            let pod = &self.world.pods[**p];
            pod.task as usize == t
                && matches!(
                    pod.status,
                    PodStatus::Pending | PodStatus::Allocated | PodStatus::Pipelined | PodStatus::Running
                )
        };
        job.pods.iter().filter(alive).count() as u32
    }

    /// The next instant bound service `k` may change: a replica ready, a
    /// push, a decision due, the next tick while the controller has new
    /// input, a demand change while nothing serves, the autoscaler's next
    /// update while a replica waits or a worker idles.
    fn ray_next(&self, k: usize) -> Option<SimTime> {
        let now = self.now;
        let b = &self.serving.bound[k];
        let r = b.ray.as_ref()?;
        let mut next: Option<SimTime> = None;
        let mut at = |t: SimTime| {
            if t > now {
                next = Some(next.map_or(t, |n: SimTime| n.min(t)));
            }
        };
        for a in &r.actors {
            if a.node.is_some() && !a.ready {
                at(a.ready_at);
            }
        }
        if let Some(s) = r.spec.serving
            && let Sizing::Auto(cfg) = &r.spec.deployments[s].sizing
            && b.spec.is_some()
        {
            at(r.next_push);
            if let Some(c) = &r.ctl[s] {
                if let Some(due) = c.due(cfg) {
                    at(due);
                }
                // New input since the last tick: the next tick sees it.
                if r.fresh {
                    at(next_tick(SimTime(now.micros() + 1)));
                }
            }
            if r.ready == 0
                && let Some(svc) = &b.spec
                && let Some(t) = svc.demand.at(now).1
            {
                at(next_tick(t));
            }
        }
        if let Some(auto) = &r.spec.autoscaler {
            let grid = |t: SimTime| SimTime(t.micros().div_ceil(AUTOSCALER_UPDATE_US) * AUTOSCALER_UPDATE_US);
            if r.actors.iter().any(|a| a.node.is_none()) {
                at(grid(SimTime(now.micros() + 1)));
            }
            // An idle worker matters while its group is above its minimum.
            let above_min = |t: usize| auto.groups.iter().any(|g| g.task == t && self.alive_pods(b.job, t) > g.min);
            for (&p, n) in &r.nodes {
                if let Some(s) = n.idle_since
                    && !n.head
                    && above_min(self.world.pods[p].task as usize)
                {
                    let timeout = auto.idle_timeout_of(self.world.pods[p].task as usize);
                    at(grid(s.plus(timeout).max(SimTime(now.micros() + 1))));
                }
            }
        }
        next
    }
}
