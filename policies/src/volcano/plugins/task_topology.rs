//! `task-topology`: affinity between the task roles of one job (Volcano's
//! `plugins/task-topology`). A job's `taskTopology` (the PodGroup annotations
//! `volcano.sh/task-topology-affinity`, `-anti-affinity` and `-task-order`) groups its
//! pods into *buckets* of pods that should share a node, built once per session:
//! pods already on a node form that node's bucket; each pending pod, in task order
//! (user order, then affinity kind, then name), joins the bucket it has the most
//! affinity with (ties: the bucket with the smaller request), or opens a new one when
//! every bucket repels it. Task order puts bucketed pods first, bigger buckets first.
//! Node score for a bucketed pod: the bucket's pods already on the node, minus this
//! session's pods on the node it is anti-affine with, plus the bucket's pods still
//! to place, minus one per pod that must be dropped for the bucket's remaining request
//! to fit the node's idle + releasing resources — × `task-topology.weight` (1) × 100 /
//! the largest bucket.

use super::super::args::{ArgSpec, ArgType, Args};
use super::super::plugin::{Hooks, Plugin, PluginSpec};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId, PodStatus, TaskTopology};
use lahar_core::model::resource::{DIMS, MEMORY, PODS, Resources};
use lahar_core::session::Session;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("task-topology", |pc| Box::new(TaskTopologyPlugin::new(&pc.args)))
    .args(&[ArgSpec::new("task-topology.weight", ArgType::Int, "1", "the node score's weight")]);

/// Priority of the topology kinds a task takes part in (larger = placed earlier).
const SELF_ANTI_AFFINITY: u8 = 4;
const INTER_AFFINITY: u8 = 3;
const SELF_AFFINITY: u8 = 2;
const INTER_ANTI_AFFINITY: u8 = 1;

#[derive(Clone, Debug, Default)]
struct Bucket {
    /// Member pods pending when the session opened.
    pending: Vec<PodId>,
    /// Members already on a node when the session opened, by node.
    bound_at_open: BTreeMap<NodeId, u32>,
    /// Members by task name.
    task_names: BTreeMap<String, u32>,
    /// Σ request of the pending members (Volcano's reqScore: millicores + MiB + scalars).
    req_score: f64,
}

/// The buckets and affinity relations of one job.
#[derive(Clone, Debug, Default)]
struct Manager {
    buckets: Vec<Bucket>,
    bucket_of: BTreeMap<PodId, usize>,
    /// Task name → priority of its strongest topology kind.
    priority: BTreeMap<String, u8>,
    /// Task name → position from the end of `taskOrder` (first = largest).
    order: BTreeMap<String, usize>,
    self_affinity: BTreeSet<String>,
    self_anti: BTreeSet<String>,
    inter_affinity: BTreeSet<(String, String)>,
    inter_anti: BTreeSet<(String, String)>,
    max_bucket: usize,
}

impl Manager {
    fn new(t: &TaskTopology) -> Manager {
        let mut m = Manager::default();
        let mark = |m: &mut Manager, name: &str, p: u8| {
            let e = m.priority.entry(name.to_string()).or_insert(0);
            *e = (*e).max(p);
        };
        for g in &t.affinity {
            if let [one] = g.as_slice() {
                m.self_affinity.insert(one.clone());
                mark(&mut m, one, SELF_AFFINITY);
                continue;
            }
            for (i, a) in g.iter().enumerate() {
                for b in &g[..i] {
                    m.inter_affinity.insert((a.clone(), b.clone()));
                    m.inter_affinity.insert((b.clone(), a.clone()));
                }
                mark(&mut m, a, INTER_AFFINITY);
            }
        }
        for g in &t.anti_affinity {
            if let [one] = g.as_slice() {
                m.self_anti.insert(one.clone());
                mark(&mut m, one, SELF_ANTI_AFFINITY);
                continue;
            }
            for (i, a) in g.iter().enumerate() {
                for b in &g[..i] {
                    m.inter_anti.insert((a.clone(), b.clone()));
                    m.inter_anti.insert((b.clone(), a.clone()));
                }
                mark(&mut m, a, INTER_ANTI_AFFINITY);
            }
        }
        for (i, name) in t.task_order.iter().enumerate() {
            m.order.insert(name.clone(), t.task_order.len() - i);
        }
        m
    }

    /// Volcano's `checkTaskSetAffinity`: + count for affine names (unless
    /// `only_anti`), − count for anti-affine ones.
    fn set_affinity(&self, name: &str, set: &BTreeMap<String, u32>, only_anti: bool) -> i64 {
        let mut s = 0i64;
        for (other, &count) in set {
            let same = other == name;
            let pair = (name.to_string(), other.clone());
            if !only_anti
                && (if same { self.self_affinity.contains(name) } else { self.inter_affinity.contains(&pair) })
            {
                s += count as i64;
            }
            if if same { self.self_anti.contains(name) } else { self.inter_anti.contains(&pair) } {
                s -= count as i64;
            }
        }
        s
    }

    /// Volcano's `taskAffinityOrder` of two task names: > 0 when `l` goes first.
    fn affinity_order(&self, l: &str, r: &str) -> Ordering {
        if l == r {
            return Ordering::Equal;
        }
        let o = |n: &str| self.order.get(n).copied().unwrap_or(0);
        let p = |n: &str| self.priority.get(n).copied().unwrap_or(0);
        o(l).cmp(&o(r)).then(p(l).cmp(&p(r)))
    }
}

fn task_name<'a>(ssn: &'a Session<'_>, p: PodId) -> &'a str {
    let pod = ssn.pod(p);
    &ssn.job(pod.job).spec.tasks[pod.task as usize].name
}

fn pod_name(ssn: &Session<'_>, p: PodId) -> String {
    let pod = ssn.pod(p);
    format!("{}-{}-{}", ssn.job(pod.job).spec.name, task_name(ssn, p), pod.index)
}

/// Volcano's bucket request score: 1 millicore = 1 MiB = 1 milli-unit of a scalar.
fn req_score(r: &Resources) -> f64 {
    (0..DIMS)
        .filter(|&d| d != PODS)
        .map(|d| if d == MEMORY { r.get(d) as f64 / 1024.0 / 1024.0 } else { r.get(d) as f64 })
        .sum()
}

/// The task-topology plugin. Argument: `task-topology.weight` (1).
pub struct TaskTopologyPlugin {
    weight: i64,
    managers: BTreeMap<JobId, Manager>,
    /// Pods pending when the session opened (placed since = bound this session).
    pending_at_open: BTreeSet<PodId>,
}

impl TaskTopologyPlugin {
    /// Reads the plugin's arguments.
    pub fn new(args: &Args) -> TaskTopologyPlugin {
        TaskTopologyPlugin {
            weight: args.int("task-topology.weight", 1),
            managers: BTreeMap::new(),
            pending_at_open: BTreeSet::new(),
        }
    }

    fn build(ssn: &Session<'_>, j: JobId, topo: &TaskTopology) -> Manager {
        let mut m = Manager::new(topo);
        let job = ssn.job(j);
        let mut pods: Vec<PodId> = job
            .pods
            .iter()
            .copied()
            .filter(|&p| ssn.pod(p).status != PodStatus::Deleted && m.priority.contains_key(task_name(ssn, p)))
            .collect();
        // Placed pods first (by node name), then by task order, affinity kind, name.
        let node_name = |p: PodId| ssn.pod(p).node.map(|n| ssn.node(n).name.clone());
        pods.sort_by(|&a, &b| match (node_name(a), node_name(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => m
                .affinity_order(task_name(ssn, b), task_name(ssn, a))
                .then_with(|| pod_name(ssn, a).cmp(&pod_name(ssn, b))),
        });
        let mut node_bucket: BTreeMap<NodeId, usize> = BTreeMap::new();
        for p in pods {
            let name = task_name(ssn, p).to_string();
            let node = ssn.pod(p).node;
            let (mut chosen, mut best) = (None, i64::MIN);
            if let Some(n) = node {
                best = 0;
                chosen = node_bucket.get(&n).copied();
            } else {
                for (i, b) in m.buckets.iter().enumerate() {
                    let aff = m.set_affinity(&name, &b.task_names, false);
                    if aff > best {
                        (best, chosen) = (aff, Some(i));
                    } else if aff == best && chosen.is_some_and(|c| b.req_score < m.buckets[c].req_score) {
                        chosen = Some(i);
                    }
                }
            }
            let i = match chosen {
                Some(i) if best >= 0 => i,
                _ => {
                    m.buckets.push(Bucket::default());
                    let i = m.buckets.len() - 1;
                    if let Some(n) = node {
                        node_bucket.insert(n, i);
                    }
                    i
                }
            };
            let b = &mut m.buckets[i];
            *b.task_names.entry(name).or_insert(0) += 1;
            match node {
                Some(n) => *b.bound_at_open.entry(n).or_insert(0) += 1,
                None => {
                    b.pending.push(p);
                    b.req_score += req_score(&ssn.pod(p).req);
                }
            }
            m.bucket_of.insert(p, i);
            let size = b.pending.len() + b.bound_at_open.values().sum::<u32>() as usize;
            m.max_bucket = m.max_bucket.max(size);
        }
        m
    }

    /// The bucket of a pod, with its members still pending.
    fn bucket<'a>(&'a self, ssn: &Session<'_>, p: PodId) -> Option<(&'a Manager, usize, Vec<PodId>)> {
        let m = self.managers.get(&ssn.pod(p).job)?;
        let &i = m.bucket_of.get(&p)?;
        let left = m.buckets[i].pending.iter().copied().filter(|&q| ssn.pod(q).status == PodStatus::Pending).collect();
        Some((m, i, left))
    }
}

impl Plugin for TaskTopologyPlugin {
    fn name(&self) -> &'static str {
        "task-topology"
    }
    fn hooks(&self) -> Hooks {
        Hooks::NODE_SCORE
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        self.managers.clear();
        self.pending_at_open.clear();
        for j in ssn.jobs().collect::<Vec<_>>() {
            let job = ssn.job(j);
            let Some(topo) = &job.spec.task_topology else { continue };
            let pending: Vec<PodId> =
                job.pods.iter().copied().filter(|&p| ssn.pod(p).status == PodStatus::Pending).collect();
            if pending.is_empty() {
                continue;
            }
            self.pending_at_open.extend(pending);
            let m = Self::build(ssn, j, topo);
            self.managers.insert(j, m);
        }
    }
    fn task_order(&self, ssn: &Session<'_>, l: PodId, r: PodId) -> Option<Ordering> {
        let (lj, rj) = (ssn.pod(l).job, ssn.pod(r).job);
        if !self.managers.contains_key(&lj) || !self.managers.contains_key(&rj) {
            return Some(Ordering::Equal);
        }
        let (lb, rb) = (self.bucket(ssn, l), self.bucket(ssn, r));
        match (&lb, &rb) {
            (Some(_), None) => return Some(Ordering::Less),
            (None, Some(_)) => return Some(Ordering::Greater),
            _ => {}
        }
        if lj != rj {
            return Some(Ordering::Equal);
        }
        let (Some((m, li, lleft)), Some((_, ri, rleft))) = (lb, rb) else { return Some(Ordering::Equal) };
        // Bigger buckets (more pods left to place) first, then the older bucket.
        if lleft.len() != rleft.len() {
            return Some(rleft.len().cmp(&lleft.len()));
        }
        if li == ri {
            return Some(m.affinity_order(task_name(ssn, r), task_name(ssn, l)));
        }
        Some(li.cmp(&ri))
    }
    fn score_by_node(&self, _: &Session<'_>, _: PodId) -> bool {
        // The score follows where the job's other tasks already are.
        false
    }
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        let p = ssn.pod(pod);
        let ns = ssn.node_state(node);
        let max = ssn.idle(node) + ns.releasing;
        let fits = |r: &Resources| (0..DIMS).filter(|&d| d != PODS).all(|d| r.get(d) <= max.get(d));
        if !fits(&p.req) {
            return Some(0.0);
        }
        let Some(m) = self.managers.get(&p.job) else { return Some(0.0) };
        let Some((_, i, left)) = self.bucket(ssn, pod) else { return Some(0.0) };
        let b = &m.buckets[i];
        // Members on the node: those there at open and those placed this session.
        let placed_here = |q: &PodId| ssn.pod(*q).status != PodStatus::Pending && ssn.pod(*q).node == Some(node);
        let mut score = b.bound_at_open.get(&node).copied().unwrap_or(0) as i64
            + b.pending.iter().filter(|q| placed_here(q)).count() as i64;
        // Anti-affinity with this job's pods placed on the node this session.
        let mut on_node: BTreeMap<String, u32> = BTreeMap::new();
        for &q in ssn.job(p.job).pods.iter() {
            if self.pending_at_open.contains(&q) && placed_here(&q) {
                *on_node.entry(task_name(ssn, q).to_string()).or_insert(0) += 1;
            }
        }
        let anti = m.set_affinity(task_name(ssn, pod), &on_node, true);
        if anti < 0 {
            score += anti;
        }
        score += left.len() as i64;
        let mut remains = left.iter().fold(Resources::ZERO, |a, &q| a + ssn.pod(q).req);
        if !fits(&remains) {
            // Drop other members (in pod order; Volcano walks a map) until the rest fits.
            for &q in left.iter().filter(|&&q| q != pod) {
                remains -= ssn.pod(q).req;
                score -= 1;
                if fits(&remains) {
                    break;
                }
            }
        }
        let mut s = (score * self.weight) as f64;
        if m.max_bucket != 0 {
            s = s * 100.0 / m.max_bucket as f64;
        }
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(aff: &[&[&str]], anti: &[&[&str]], order: &[&str]) -> TaskTopology {
        let g = |v: &[&[&str]]| v.iter().map(|g| g.iter().map(|s| s.to_string()).collect()).collect();
        TaskTopology {
            affinity: g(aff),
            anti_affinity: g(anti),
            task_order: order.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn relations_and_priorities() {
        let m = Manager::new(&topo(&[&["ps", "worker"], &["chief"]], &[&["worker"]], &[]));
        assert!(m.inter_affinity.contains(&("ps".into(), "worker".into())));
        assert!(m.inter_affinity.contains(&("worker".into(), "ps".into())));
        assert!(m.self_affinity.contains("chief") && m.self_anti.contains("worker"));
        // worker: inter-affinity (3) raised to self-anti-affinity (4).
        assert_eq!(m.priority["worker"], SELF_ANTI_AFFINITY);
        assert_eq!(m.priority["ps"], INTER_AFFINITY);
        assert_eq!(m.priority["chief"], SELF_AFFINITY);
    }

    #[test]
    fn set_affinity_counts() {
        let m = Manager::new(&topo(&[&["ps", "worker"]], &[&["worker"]], &[]));
        let set: BTreeMap<String, u32> = [("ps".to_string(), 1), ("worker".to_string(), 2)].into();
        // A worker: +1 for the ps, −2 for the two workers.
        assert_eq!(m.set_affinity("worker", &set, false), -1);
        assert_eq!(m.set_affinity("worker", &set, true), -2);
        // A ps: +2 for the workers; no relation with itself.
        assert_eq!(m.set_affinity("ps", &set, false), 2);
    }

    #[test]
    fn user_order_before_affinity_kind() {
        let m = Manager::new(&topo(&[&["ps", "worker"]], &[&["worker"]], &["ps", "worker"]));
        assert_eq!(m.affinity_order("ps", "worker"), Ordering::Greater);
        let m = Manager::new(&topo(&[&["ps", "worker"]], &[&["worker"]], &[]));
        // Without a user order, worker's self-anti-affinity (4) beats ps's 3.
        assert_eq!(m.affinity_order("ps", "worker"), Ordering::Less);
    }
}
