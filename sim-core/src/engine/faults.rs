//! Faults during a run: outages start and end, random failures are drawn, and
//! the pods on what failed are handed to the controller.
//!
//! Outages can overlap (a switch down over a node already down, two GPU
//! faults on one node): each node counts the whole-node outages in force and
//! keeps the union of its failed devices, and its capacity comes back only when
//! nothing holds it out. Every change is one row of events.csv.

use super::{Engine, Event, Lifecycle};
use crate::faults::{FaultPlan, FaultRule, Outage, OutageKind, RuleScope, Target};
use crate::model::ids::NodeId;
use crate::model::job::PodStatus;
use crate::record::FaultRecord;
use crate::util::rng::{RngStreams, StreamRng};
use crate::util::time::SimTime;
use rand::RngExt;
use std::sync::Arc;

/// An outage in force (or over).
struct Live {
    outage: Outage,
    nodes: Vec<NodeId>,
    /// GPU outages: the devices each node lost (parallel to `nodes`).
    masks: Vec<u64>,
    /// A random rule's unit `(rule, unit)`: its next failure is drawn at repair.
    unit: Option<(u32, u32)>,
}

/// The faults' state in a run.
#[derive(Default)]
pub(super) struct Faults {
    trace: Vec<Outage>,
    rules: Vec<FaultRule>,
    rngs: Vec<Vec<StreamRng>>,
    trace_rng: Vec<StreamRng>,
    live: Vec<Live>,
    /// Per node: whole-node outages in force.
    down: Vec<u32>,
    /// Per node: union of the devices failed by GPU outages in force.
    failed: Vec<u64>,
    /// Per node: drains in force, and whether it was cordoned before any.
    pub(super) cordons: Vec<u32>,
    pub(super) was_cordoned: Vec<bool>,
    /// Random failures queued (the run ends when only they are left and
    /// nothing is out).
    pub(super) random_queued: usize,
    /// Outages started and not over.
    pub(super) in_force: usize,
    /// Nodes cordoned by drains, for the unavailable capacity.
    cordoned: std::collections::BTreeSet<NodeId>,
    /// A plan was given (even one that never fires): the outputs then carry the
    /// fault columns and files.
    pub(super) enabled: bool,
}

impl Engine {
    /// Sets the run's faults (before it runs). Listed outages are queued now,
    /// each unit of a random rule draws its first failure.
    pub fn set_faults(&mut self, plan: FaultPlan) {
        let n = self.world.cluster.len();
        let streams = RngStreams::new(self.cfg.seed);
        let mut f = Faults {
            enabled: true,
            down: vec![0; n],
            failed: vec![0; n],
            cordons: vec![0; n],
            was_cordoned: self
                .world
                .cluster
                .nodes
                .iter()
                .map(|n| n.taints.iter().any(|t| t.key == crate::model::cluster::Taint::UNSCHEDULABLE))
                .collect(),
            ..Faults::default()
        };
        for (k, o) in plan.outages.iter().enumerate() {
            self.events.push(o.at, Event::OutageStart(k as u32));
            f.trace_rng.push(streams.stream("faults/trace", k as u64));
        }
        f.trace = plan.outages;
        for (r, rule) in plan.rules.iter().enumerate() {
            let mut rngs = Vec::with_capacity(rule.units.len());
            for (u, &unit) in rule.units.iter().enumerate() {
                let mut rng = streams.stream(&format!("faults/{}", rule.name), unit as u64);
                let at = SimTime::ZERO.plus(rule.between.sample(&mut rng));
                self.events.push(at, Event::RandomFail(r as u32, u as u32));
                f.random_queued += 1;
                rngs.push(rng);
            }
            f.rngs.push(rngs);
        }
        f.rules = plan.rules;
        self.faults = f;
    }

    /// Puts node `n`'s capacity in or out of service from what holds it out:
    /// whole-node outages in force or absence from the cluster (all of it), else
    /// its failed GPUs.
    pub(super) fn set_service(&mut self, n: NodeId) {
        let i = n.0 as usize;
        let down = self.faults.down.get(i).is_some_and(|&d| d > 0) || self.absent[i];
        let failed = self.faults.failed.get(i).copied().unwrap_or(0);
        let was = self.world.nodes[i].lost_devices;
        self.world.set_out_of_service(n, down, failed);
        let now = self.world.nodes[i].lost_devices;
        if now != was {
            match &mut self.recorder {
                Some(r) => r.node_service(&self.world, n, self.now),
                None => self.service.push((self.now, n, now)),
            }
        }
    }

    /// Whether the run has a fault plan (see [`Engine::set_faults`]).
    pub fn has_faults(&self) -> bool {
        self.faults.enabled
    }

    /// Whether a run with faults has nothing left but random failures, with
    /// everything up: no job could be helped by waiting longer.
    pub(super) fn only_faults_left(&self) -> bool {
        self.faults.random_queued > 0
            && self.events.len() == self.faults.random_queued
            && self.faults.in_force == 0
            && self.next_arrival_time().is_none()
    }

    /// Milli-GPUs out of service or cordoned, for the samples.
    pub(super) fn gpus_unavailable_milli(&self) -> i64 {
        let cordoned: i64 =
            self.faults.cordoned.iter().map(|&n| self.world.cluster.node(n).allocatable.gpu_milli()).sum();
        self.world.gpus_out_of_service_milli() + cordoned
    }

    /// A random rule's unit fails now: an outage for a drawn repair time.
    pub(super) fn random_failure(&mut self, r: u32, u: u32) {
        self.faults.random_queued -= 1;
        let rule = &self.faults.rules[r as usize];
        let rng = &mut self.faults.rngs[r as usize][u as usize];
        let duration = rule.repair.sample(rng);
        let unit = rule.units[u as usize];
        let (target, kind) = match rule.scope {
            RuleScope::Node => (Target::Nodes(vec![NodeId(unit)]), OutageKind::Node),
            RuleScope::Gpus(k) => (Target::Nodes(vec![NodeId(unit)]), OutageKind::Gpus(k)),
            RuleScope::Switch => (Target::HyperNode(crate::model::ids::HyperNodeId(unit)), OutageKind::Switch),
        };
        let outage = Outage { at: self.now, target, duration, kind, cause: Arc::clone(&rule.name) };
        self.start_outage(outage, Some((r, u)), None);
    }

    /// Listed outage `k` starts now.
    pub(super) fn trace_outage(&mut self, k: u32) {
        let outage = self.faults.trace[k as usize].clone();
        self.start_outage(outage, None, Some(k));
    }

    fn start_outage(&mut self, outage: Outage, unit: Option<(u32, u32)>, trace: Option<u32>) {
        let nodes: Vec<NodeId> = match &outage.target {
            Target::Nodes(v) => v.clone(),
            Target::HyperNode(h) => self.world.cluster.topology.hypernodes[h.0 as usize].nodes.clone(),
        };
        let id = self.faults.live.len() as u32;
        let before = self.gpus_unavailable_milli();
        let mut killed = 0u32;
        let mut masks = Vec::new();
        let event = match outage.kind {
            OutageKind::Node | OutageKind::Switch => {
                for &n in &nodes {
                    self.faults.down[n.0 as usize] += 1;
                    if self.faults.down[n.0 as usize] == 1 {
                        killed += self.kill_on(n, |_| true);
                        self.set_service(n);
                    }
                }
                self.events.push(self.now.plus(outage.duration), Event::OutageEnd(id));
                "fail"
            }
            OutageKind::Gpus(k) => {
                for &n in &nodes {
                    let i = n.0 as usize;
                    let devices = self.world.nodes[i].gpus.free.len();
                    let mut healthy: Vec<usize> = (0..devices)
                        .filter(|&d| (self.faults.failed[i] | self.world.nodes[i].lost_devices) >> d & 1 == 0)
                        .collect();
                    let rng = match (unit, trace) {
                        (Some((r, u)), _) => &mut self.faults.rngs[r as usize][u as usize],
                        (None, Some(t)) => &mut self.faults.trace_rng[t as usize],
                        (None, None) => unreachable!("an outage comes from a rule or the trace"),
                    };
                    let mut mask = 0u64;
                    for _ in 0..(k as usize).min(healthy.len()) {
                        let d = healthy.swap_remove(rng.random_range(0..healthy.len()));
                        mask |= 1 << d;
                    }
                    masks.push(mask);
                    if self.faults.down[i] == 0 {
                        killed += self.kill_on(n, |p| {
                            p.gpu_devices.whole & mask != 0 || p.gpu_devices.share.is_some_and(|d| mask >> d & 1 == 1)
                        });
                    }
                    self.faults.failed[i] |= mask;
                    if self.faults.down[i] == 0 {
                        self.set_service(n);
                    }
                }
                self.events.push(self.now.plus(outage.duration), Event::OutageEnd(id));
                "fail"
            }
            OutageKind::Drain { deadline } => {
                for &n in &nodes {
                    let i = n.0 as usize;
                    self.faults.cordons[i] += 1;
                    if self.faults.cordons[i] == 1 {
                        self.faults.cordoned.insert(n);
                        if !self.faults.was_cordoned[i] {
                            self.world.set_cordoned(n, true);
                        }
                    }
                }
                self.events.push(self.now.plus(deadline), Event::DrainDeadline(id));
                self.events.push(self.now.plus(deadline).plus(outage.duration), Event::OutageEnd(id));
                "cordon"
            }
        };
        let gpu_milli = self.gpus_unavailable_milli() - before;
        self.fault_record(event, &outage, &nodes, gpu_milli, killed);
        self.faults.in_force += 1;
        self.faults.live.push(Live { outage, nodes, masks, unit });
        self.dirty = true;
    }

    /// Kills the Running and Releasing pods on node `n` that `hit` selects
    /// (ascending pod id); returns how many.
    fn kill_on(&mut self, n: NodeId, hit: impl Fn(&crate::world::Pod) -> bool) -> u32 {
        let pods =
            self.world.pods_on(n, |pod| matches!(pod.status, PodStatus::Running | PodStatus::Releasing) && hit(pod));
        for &p in &pods {
            self.on(Lifecycle::PodFailed(p));
        }
        pods.len() as u32
    }

    /// A drain's deadline: the pods still running on its nodes are evicted.
    pub(super) fn drain_deadline(&mut self, id: u32) {
        let nodes = self.faults.live[id as usize].nodes.clone();
        let mut evicted = 0;
        for &n in &nodes {
            let pods = self.world.pods_on(n, |pod| pod.status == PodStatus::Running);
            for p in pods {
                self.on(Lifecycle::PodDrained(p));
                evicted += 1;
            }
        }
        let outage = self.faults.live[id as usize].outage.clone();
        self.fault_record("evict", &outage, &nodes, 0, evicted);
        self.dirty = true;
    }

    /// Outage `id` is over: what it held out comes back (if nothing else holds
    /// it), and a random rule's unit draws its next failure.
    pub(super) fn end_outage(&mut self, id: u32) {
        let live = &self.faults.live[id as usize];
        let (outage, nodes, masks, unit) = (live.outage.clone(), live.nodes.clone(), live.masks.clone(), live.unit);
        let before = self.gpus_unavailable_milli();
        let event = match outage.kind {
            OutageKind::Node | OutageKind::Switch => {
                for &n in &nodes {
                    let i = n.0 as usize;
                    self.faults.down[i] -= 1;
                    if self.faults.down[i] == 0 {
                        self.set_service(n);
                    }
                }
                "repair"
            }
            OutageKind::Gpus(_) => {
                for (&n, &mask) in nodes.iter().zip(&masks) {
                    let i = n.0 as usize;
                    self.faults.failed[i] &= !mask;
                    if self.faults.down[i] == 0 {
                        self.set_service(n);
                    }
                }
                "repair"
            }
            OutageKind::Drain { .. } => {
                for &n in &nodes {
                    let i = n.0 as usize;
                    self.faults.cordons[i] -= 1;
                    if self.faults.cordons[i] == 0 {
                        self.faults.cordoned.remove(&n);
                        if !self.faults.was_cordoned[i] {
                            self.world.set_cordoned(n, false);
                        }
                    }
                }
                "uncordon"
            }
        };
        let gpu_milli = before - self.gpus_unavailable_milli();
        self.fault_record(event, &outage, &nodes, gpu_milli, 0);
        self.faults.in_force -= 1;
        if let Some((r, u)) = unit {
            let rule = &self.faults.rules[r as usize];
            let at = self.now.plus(rule.between.sample(&mut self.faults.rngs[r as usize][u as usize]));
            self.events.push(at, Event::RandomFail(r, u));
            self.faults.random_queued += 1;
        }
        self.dirty = true;
    }

    fn fault_record(&mut self, event: &'static str, o: &Outage, nodes: &[NodeId], gpu_milli: i64, pods: u32) {
        let target = match &o.target {
            Target::HyperNode(h) => self.world.cluster.topology.hypernodes[h.0 as usize].name.clone(),
            Target::Nodes(v) if v.len() == 1 => self.world.cluster.node(v[0]).name.clone(),
            Target::Nodes(v) => {
                let first = v.first().map_or("", |&n| self.world.cluster.node(n).name.as_str());
                format!("{first} (+{})", v.len().saturating_sub(1))
            }
        };
        let r = FaultRecord {
            t: self.now,
            event,
            scope: o.kind.as_str(),
            target,
            nodes: nodes.len() as u32,
            gpu_milli,
            pods,
            cause: Arc::clone(&o.cause),
        };
        match &mut self.recorder {
            Some(rec) => rec.fault(&self.world, &r),
            None => self.faults_out.push(r),
        }
    }
}
