//! The plugin framework: extension points and how tiers combine them, as in
//! Volcano's `framework/session_plugins.go`.
//!
//! A plugin implements only the extension points it registers (the others return
//! `None`, "not registered"); the framework consults a plugin only when the enable
//! flag of that extension point is on in the conf.

use super::conf::SchedulerConf;
use super::plugin::{EvictKind, FLAGS, Hooks, Plugin, PluginConf, Vote, flag};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::Resources;
use lahar_core::model::topology::HyperNodeId;
use lahar_core::session::Session;
use lahar_core::util::time::SimTime;
use lahar_core::world::{ReachFacts, VictimKey};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::cmp::Ordering;

/// Volcano's victim tier walk (`Preemptable`, `Reclaimable`, `UnifiedEvictable`):
/// in each tier, the answers of the plugins that answer (`Some`) are intersected;
/// an empty answer, or an empty intersection, ends the tier's loop with no
/// decision; the first tier with a decision gives the victims; none: no victim.
/// (An empty answer thus does not veto later tiers.)
fn tier_walk<T>(tiers: &[Vec<T>], mut ask: impl FnMut(&T) -> Option<Vec<PodId>>) -> Vec<PodId> {
    for tier in tiers {
        let mut victims: Option<Vec<PodId>> = None;
        for s in tier {
            let Some(cands) = ask(s) else { continue };
            if cands.is_empty() {
                victims = None;
                break;
            }
            victims = match victims {
                None => Some(cands),
                Some(v) => {
                    let kept: Vec<PodId> = v.into_iter().filter(|x| cands.contains(x)).collect();
                    if kept.is_empty() { None } else { Some(kept) }
                }
            };
        }
        if let Some(v) = victims {
            return v;
        }
    }
    Vec::new()
}

/// The positions in a tier's list of victim-choosing plugins from which
/// [`tier_walk`]'s intersection can start: the first plugin; any plugin with two
/// before it (an empty intersection at the one before re-seeds from it); and the
/// second when the first may abstain (it is then skipped). Never empty for a
/// tier with a chooser.
fn seeds<'a>(tier: &'a [Slot], idx: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
    let second = idx.first().is_some_and(|&i| may_abstain(&tier[i]));
    (0..idx.len()).filter(move |&s| s != 1 || second)
}

/// True if a victim-choosing plugin may answer "no opinion" (`None`, skipped by
/// [`tier_walk`]): every plugin but those that declare [`Hooks::NEVER_ABSTAINS`].
fn may_abstain(s: &Slot) -> bool {
    !s.plugin.hooks().has(Hooks::NEVER_ABSTAINS)
}

/// [`Framework::victim_rule`]: which victim groups the plugins may choose
/// from for one preemptor.
pub struct VictimRule {
    preemptor: PodId,
    reclaim: bool,
    now: bool,
    /// Per tier, the positions its intersection can start from, a bit each
    /// ([`seed_bit`]).
    seeds: Vec<u64>,
}

/// A starting position's bit: its own below 63, the last bit for every
/// position from 63 on (a tier with that many choosing plugins then starts
/// from each of them, which only widens the rule).
fn seed_bit(s: usize) -> u64 {
    1 << s.min(63)
}

/// The starting positions of a tier among its `n` choosing plugins.
fn seed_positions(mask: u64, n: usize) -> impl Iterator<Item = usize> {
    (0..n).filter(move |&s| mask & seed_bit(s) != 0)
}

impl VictimRule {
    /// False if no tier can choose a victim of group `key`: a tier's victims
    /// are the intersection of its choosing plugins' answers, but with
    /// Volcano's re-seeding quirk (`tier_walk`): after an empty intersection,
    /// the next plugin's whole answer starts the intersection again. So a group
    /// is possible when, from some plugin that can start the intersection,
    /// every later plugin may answer with it.
    pub fn may_choose(&self, fw: &Framework, ssn: &Session<'_>, key: VictimKey) -> bool {
        let (p, reclaim) = (self.preemptor, self.reclaim);
        fw.tiers.iter().zip(&fw.choosers[reclaim as usize]).zip(&self.seeds).any(|((tier, idx), seeds)| {
            let ok = |&i: &usize| {
                let c = &tier[i];
                may_abstain(c)
                    || if self.now {
                        c.plugin.victim_group_ok_now(ssn, p, reclaim, key)
                    } else {
                        c.plugin.victim_group_ok(ssn, p, reclaim, key)
                    }
                    .unwrap_or(true)
            };
            seed_positions(*seeds, idx.len()).any(|s| idx[s..].iter().all(ok))
        })
    }

    /// True if every preempt victim of the preemptor has a lower job priority
    /// than its job, or is a lower-priority pod of its own job: from every
    /// position where a tier's intersection can start, `priority` answers later
    /// on, so each tier's choice is a subset of priority's.
    pub fn below_priority(&self, fw: &Framework) -> bool {
        debug_assert!(!self.reclaim);
        fw.tiers.iter().zip(&fw.choosers[0]).zip(&self.seeds).all(|((tier, idx), seeds)| {
            seed_positions(*seeds, idx.len()).all(|s| idx[s..].iter().any(|&i| tier[i].conf.name == "priority"))
        })
    }
}

/// A plugin and its conf entry.
pub struct Slot {
    /// Conf entry (flags, arguments).
    pub conf: PluginConf,
    /// Enabled flags as a bitmask (bit = `flag::*`), precomputed so hot paths do
    /// not look up flag names.
    pub mask: u32,
    /// Implementation.
    pub plugin: Box<dyn Plugin>,
}

impl Slot {
    fn on(&self, bit: u32) -> bool {
        self.mask & (1 << bit) != 0
    }
}

/// The plugins of a conf, by tier.
pub struct Framework {
    /// Tiers, in conf order.
    pub tiers: Vec<Vec<Slot>>,
    /// Summed node scores by pod request, kept across sessions.
    scores: RefCell<ScoreCache>,
    /// [`Framework::gang_binds`], fixed by the conf.
    gang_binds: bool,
    /// [`Framework::reclaim_in_victim_order`], fixed by the conf.
    reclaim_ordered: bool,
    /// [`Framework::job_valid_reads_job`], [`Framework::starving_reads_job`]
    /// and whether every scoring plugin is built in (not the extender), fixed
    /// by the conf.
    reads: [bool; 3],
    /// Per tier, the positions of the plugins that choose preempt victims ([0])
    /// and reclaim victims ([1]), fixed by the conf.
    choosers: [Vec<Vec<usize>>; 2],
    /// [`Framework::victims_read_job`], [`Framework::victims_read_anything`]
    /// and [`Framework::reclaim_victims_ignore_reclaimer`], fixed by the conf
    /// (preempt and reclaim ask them every session).
    victim_reads: [bool; 3],
}

/// Plugins' node scores per (plugin, pod request) and node, each valid while
/// the node's `used` is unchanged since it was computed. Such scores are pure functions of those inputs, so a reused
/// score is the very number a recomputation gives: decisions cannot change (the
/// equivalence tests compare with `--exhaustive`, which never reads the cache).
#[derive(Default)]
struct ScoreCache {
    /// Row of each (plugin slot, request shape) seen.
    shapes: FxHashMap<(usize, Resources), usize>,
    /// Per row, per node: (epoch computed at, score); epoch `u64::MAX`: none yet.
    rows: Vec<Vec<(u64, Option<f64>)>>,
}

impl ScoreCache {
    /// The row of a plugin's scores for pods of request `req` (a new, empty one
    /// the first time; the cache starts over past [`SCORE_SHAPES`] rows).
    fn row(&mut self, slot: usize, req: Resources, nodes: usize) -> usize {
        if let Some(&r) = self.shapes.get(&(slot, req)) {
            return r;
        }
        if self.rows.len() >= SCORE_SHAPES {
            *self = ScoreCache::default();
        }
        self.rows.push(vec![(u64::MAX, None); nodes]);
        self.shapes.insert((slot, req), self.rows.len() - 1);
        self.rows.len() - 1
    }
}

/// Rows ((plugin, request shape) pairs) the score cache keeps before it starts over.
const SCORE_SHAPES: usize = 256;

fn uid<'a>(ssn: &'a Session<'_>, j: JobId) -> (&'a str, &'a str) {
    let s = &ssn.job(j).spec;
    (&s.namespace, &s.name)
}

/// The trailing replica index of a pod name `<job>-<task>-<index>`.
fn name_index(ssn: &Session<'_>, p: PodId) -> u32 {
    ssn.pod(p).index
}

impl Framework {
    /// Builds the plugins of a conf.
    pub fn new(conf: &SchedulerConf) -> Framework {
        let tiers: Vec<Vec<Slot>> = conf
            .tiers
            .iter()
            .map(|t| {
                t.iter()
                    .map(|pc| {
                        let mut mask = 1u32 << flag::ALWAYS;
                        for (i, (name, _)) in FLAGS.iter().enumerate() {
                            if pc.flag(name) {
                                mask |= 1 << i;
                            }
                        }
                        let plugin = match &pc.external {
                            Some(ext) => (ext.build)(pc),
                            None => {
                                let spec = super::plugins::spec(&pc.name)
                                    .expect("the conf loader accepts only plugins of plugins::ALL or registered ones");
                                (spec.build)(pc)
                            }
                        };
                        let hooks = plugin.hooks();
                        // Nothing to ask the others for in the per-(pod, node) loops.
                        if !hooks.has(Hooks::NODE_SCORE) {
                            mask &= !(1 << flag::ENABLE_NODE_ORDER);
                        }
                        if !hooks.has(Hooks::PREDICATE) {
                            mask &= !(1 << flag::ENABLE_PREDICATE);
                        }
                        Slot { conf: pc.clone(), mask, plugin }
                    })
                    .collect()
            })
            .collect();
        let choosers = [Framework::find_choosers(&tiers, false), Framework::find_choosers(&tiers, true)];
        let mut fw = Framework {
            tiers,
            scores: RefCell::default(),
            gang_binds: false,
            reclaim_ordered: false,
            reads: [false; 3],
            choosers,
            victim_reads: [false; 3],
        };
        fw.victim_reads = fw.find_victim_reads();
        fw.gang_binds = fw.find_gang_binds();
        fw.reads = fw.find_reads();
        fw.reclaim_ordered =
            fw.tiers.iter().flatten().any(|s| s.conf.name == "capacity" && s.on(flag::ENABLE_RECLAIMABLE));
        fw
    }

    /// Answers plugins give at extension points they did not declare in
    /// [`Plugin::hooks`] — the framework never asks them there, so each is a plugin
    /// bug that would be silently ignored — sampled on the session's first jobs
    /// with pending pods (two pods each), its first nodes and Running pods. Debug
    /// builds check every session ([`crate::volcano::Volcano::check_hooks`]).
    pub fn undeclared(&self, ssn: &Session<'_>) -> Vec<String> {
        let jobs: Vec<JobId> = ssn.jobs_with_pending().take(4).collect();
        let pods: Vec<PodId> = jobs.iter().flat_map(|&j| ssn.pending_pods(j).into_iter().take(2)).collect();
        let nodes: Vec<NodeId> = (0..ssn.node_count().min(4)).map(|n| NodeId(n as u32)).collect();
        let running: Vec<PodId> = ssn
            .jobs()
            .flat_map(|j| ssn.job(j).pods.iter().copied())
            .filter(|&p| ssn.pod(p).status == lahar_core::model::job::PodStatus::Running)
            .take(8)
            .collect();
        let mut out = Vec::new();
        for s in self.tiers.iter().flatten() {
            let (p, h) = (s.plugin.as_ref(), s.plugin.hooks());
            let on_pods = |f: &dyn Fn(PodId, NodeId) -> bool| pods.iter().any(|&q| nodes.iter().any(|&n| f(q, n)));
            let asks: [(Hooks, &str, &dyn Fn() -> bool); 6] = [
                (Hooks::JOB_ORDER, "job_order", &|| {
                    jobs.iter().any(|&a| {
                        p.job_order_key(ssn, a).is_some() || jobs.iter().any(|&b| p.job_order(ssn, a, b).is_some())
                    })
                }),
                (Hooks::PREDICATE, "predicate", &|| on_pods(&|q, n| p.predicate(ssn, q, n).is_some())),
                (Hooks::NODE_SCORE, "node_score", &|| on_pods(&|q, n| p.node_score(ssn, q, n).is_some())),
                (Hooks::PREEMPTABLE, "preemptable", &|| {
                    pods.iter().any(|&q| p.preemptable(ssn, q, &running).is_some())
                }),
                (Hooks::RECLAIMABLE, "reclaimable", &|| {
                    pods.iter().any(|&q| p.reclaimable(ssn, q, &running).is_some())
                }),
                (Hooks::VICTIM_TASKS, "victim_tasks", &|| p.victim_tasks(ssn, &running).is_some()),
            ];
            // Only the undeclared points are asked (a declared one may cost a call).
            for (hook, name, answers) in asks {
                if !h.has(hook) && answers() {
                    out.push(format!("plugin `{}` answers {name} without declaring it in hooks()", p.name()));
                }
            }
        }
        out
    }

    fn enabled(&self, bit: u32) -> impl Iterator<Item = &dyn Plugin> + '_ {
        self.tiers.iter().flatten().filter(move |s| s.on(bit)).map(|s| s.plugin.as_ref())
    }

    /// Opens every plugin for a session.
    pub fn open(&mut self, ssn: &mut Session<'_>) {
        for s in self.tiers.iter_mut().flatten() {
            s.plugin.open(ssn);
        }
    }

    /// Closes every plugin at the session's end.
    pub fn close(&mut self, ssn: &Session<'_>) {
        for s in self.tiers.iter_mut().flatten() {
            s.plugin.close(ssn);
        }
    }

    /// Job order: the first plugin with an opinion decides; then the PodGroup's
    /// creation ([`lahar_core::world::Job::pg_created`]), then UID.
    pub fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Ordering {
        for p in self.enabled(flag::ENABLE_JOB_ORDER) {
            if let Some(o) = p.job_order(ssn, l, r).filter(|o| o.is_ne()) {
                return o;
            }
        }
        ssn.job(l).pg_created.cmp(&ssn.job(r).pg_created).then_with(|| uid(ssn, l).cmp(&uid(ssn, r)))
    }

    /// A job's numeric job-order keys in plugin order ([`Framework::sort_jobs`]
    /// compares them, then the PodGroup's creation and (namespace, name)); `None` when a plugin
    /// that orders jobs gives no key.
    pub fn job_order_keys(&self, ssn: &Session<'_>, j: JobId) -> Option<Vec<f64>> {
        self.job_order_plugins().map(|p| p.job_order_key(ssn, j)).collect()
    }

    /// The enabled plugins that order jobs, in plugin order: whose keys a
    /// job-order key table holds.
    fn job_order_plugins(&self) -> impl Iterator<Item = &dyn Plugin> + '_ {
        self.enabled(flag::ENABLE_JOB_ORDER).filter(|p| p.hooks().has(Hooks::JOB_ORDER))
    }

    /// Sorts jobs by [`Framework::job_order`] (stable). When every job-order plugin
    /// gives keys ([`Plugin::job_order_key`]), each job's keys are computed once and
    /// compared in plugin order, then the PodGroup's creation and (namespace, name): the same
    /// order as the comparator, with one plugin call per job instead of per pair.
    pub fn sort_jobs(&self, ssn: &Session<'_>, jobs: &mut [JobId]) {
        let order = self.job_permutation(ssn, jobs, |_| None);
        let sorted: Vec<JobId> = order.iter().map(|&i| jobs[i]).collect();
        jobs.copy_from_slice(&sorted);
    }

    /// The positions of `jobs` in [`Framework::sort_jobs`]'s order. `facts(i)`:
    /// the reach facts of `jobs[i]` when the caller has them in step with the
    /// job; a plugin whose key those facts decide
    /// ([`Plugin::job_order_key_of_facts`]) is not asked about the job itself.
    pub fn job_permutation<'f>(
        &self,
        ssn: &Session<'_>,
        jobs: &[JobId],
        facts: impl Fn(usize) -> Option<&'f ReachFacts>,
    ) -> Vec<usize> {
        self.permute(ssn, jobs, self.order_keys(ssn, jobs, facts).as_ref())
    }

    /// The positions of `jobs` in job order, by their keys when the caller has
    /// them ([`Framework::order_keys`]), else comparing the jobs (stable).
    pub fn permute(&self, ssn: &Session<'_>, jobs: &[JobId], keys: Option<&OrderKeys>) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..jobs.len()).collect();
        match keys {
            Some(keys) => idx.sort_by(|&a, &b| keys.cmp(ssn, jobs, a, b)),
            None => idx.sort_by(|&a, &b| self.job_order(ssn, jobs[a], jobs[b])),
        }
        idx
    }

    /// A list's job-order keys (`facts` as in [`Framework::job_permutation`]),
    /// when every job-order plugin gives keys and the list is long enough for a
    /// key table to pay ([`OrderKeys::cmp`] then orders as
    /// [`Framework::job_order`]); `None`: compare the jobs themselves.
    pub fn order_keys<'f>(
        &self,
        ssn: &Session<'_>,
        jobs: &[JobId],
        facts: impl Fn(usize) -> Option<&'f ReachFacts>,
    ) -> Option<OrderKeys> {
        let plugins: Vec<&dyn Plugin> = self.job_order_plugins().collect();
        let &first = jobs.first()?;
        // Short lists sort faster with the comparator than with a key table.
        if ssn.is_exhaustive() || jobs.len() < 16 || plugins.iter().any(|p| p.job_order_key(ssn, first).is_none()) {
            return None;
        }
        let k = plugins.len();
        let mut keys: Vec<f64> = Vec::with_capacity(jobs.len() * k);
        // The PodGroups' creation times beside the keys: ties on the keys are
        // common in a backlog, and are then broken without reading the jobs.
        let mut created = Vec::with_capacity(jobs.len());
        for (i, &j) in jobs.iter().enumerate() {
            let f = facts(i);
            keys.extend(plugins.iter().map(|p| {
                f.and_then(|f| p.job_order_key_of_facts(ssn, f)).or_else(|| p.job_order_key(ssn, j)).unwrap_or(0.0)
            }));
            created.push(ssn.job(j).pg_created);
        }
        Some(OrderKeys { k, keys, created })
    }

    /// The job-order keys (in plugin order) every job with facts `f` has, when
    /// every job-order plugin's key is decided by the facts
    /// ([`Plugin::job_order_key_of_facts`]); not in exhaustive sessions.
    pub fn order_keys_of_facts(&self, ssn: &Session<'_>, f: &ReachFacts) -> Option<Vec<f64>> {
        if ssn.is_exhaustive() {
            return None;
        }
        self.job_order_plugins().map(|p| p.job_order_key_of_facts(ssn, f)).collect()
    }

    /// Task order: the first plugin with an opinion decides; then the replica index,
    /// creation, and pod id.
    pub fn task_order(&self, ssn: &Session<'_>, l: PodId, r: PodId) -> Ordering {
        for p in self.enabled(flag::ENABLE_TASK_ORDER) {
            if let Some(o) = p.task_order(ssn, l, r).filter(|o| o.is_ne()) {
                return o;
            }
        }
        name_index(ssn, l).cmp(&name_index(ssn, r)).then(ssn.pod(l).created.cmp(&ssn.pod(r).created)).then(l.cmp(&r))
    }

    /// Queue order: the first plugin with an opinion decides; then name.
    pub fn queue_order(&self, ssn: &Session<'_>, l: QueueId, r: QueueId) -> Ordering {
        for p in self.enabled(flag::ENABLE_QUEUE_ORDER) {
            if let Some(o) = p.queue_order(ssn, l, r).filter(|o| o.is_ne()) {
                return o;
            }
        }
        ssn.queue(l).spec.name.cmp(&ssn.queue(r).spec.name)
    }

    /// Victim-queue order: the first registered plugin with an opinion decides;
    /// otherwise the reverse of queue order.
    pub fn victim_queue_order(&self, ssn: &Session<'_>, l: QueueId, r: QueueId, preemptor: QueueId) -> Ordering {
        for p in self.enabled(flag::ALWAYS) {
            if let Some(o) = p.victim_queue_order(ssn, l, r, preemptor).filter(|o| o.is_ne()) {
                return o;
            }
        }
        self.queue_order(ssn, r, l)
    }

    /// All predicates must pass.
    pub fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Result<(), String> {
        for p in self.enabled(flag::ENABLE_PREDICATE) {
            if let Some(Err(e)) = p.predicate(ssn, pod, node) {
                return Err(format!("{}: {e}", p.name()));
            }
        }
        Ok(())
    }

    /// The predicates preempt and reclaim choose candidate nodes by: the
    /// plugins whose refusals could be resolved by evicting are not asked
    /// (Volcano's `PredicateForPreemptAction`).
    pub fn predicate_for_preempt(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Result<(), String> {
        for p in self.enabled(flag::ENABLE_PREDICATE) {
            if let Some(Err(e)) = p.predicate_unresolvable(ssn, pod, node) {
                return Err(format!("{}: {e}", p.name()));
            }
        }
        Ok(())
    }

    /// How [`Framework::predicate`] refuses the pod on the node: `None` when it
    /// passes, else whether the first refusing plugin's refusal is one evicting
    /// could not resolve (Volcano's `PredicateFn` returns the first plugin's
    /// error, whose `ContainsUnschedulableAndUnresolvable` preempt reads).
    pub fn predicate_refusal(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<bool> {
        self.enabled(flag::ENABLE_PREDICATE).find_map(|p| match p.predicate(ssn, pod, node) {
            Some(Err(_)) => Some(matches!(p.predicate_unresolvable(ssn, pod, node), Some(Err(_)))),
            _ => None,
        })
    }

    /// [`Framework::predicate_trivial`] for [`Framework::predicate_for_preempt`].
    pub fn predicate_for_preempt_trivial(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        !ssn.is_exhaustive() && self.enabled(flag::ENABLE_PREDICATE).all(|p| p.unresolvable_passes_everywhere(ssn, pod))
    }

    /// True when every predicate passes the pod on every node, so searches need
    /// not call [`Framework::predicate`] per node (never with `--exhaustive`).
    pub fn predicate_trivial(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        !ssn.is_exhaustive() && self.enabled(flag::ENABLE_PREDICATE).all(|p| p.predicate_passes_everywhere(ssn, pod))
    }

    /// The first failing predicate: (plugin, reason). For `--explain`.
    pub fn predicate_failure(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<(&'static str, String)> {
        self.enabled(flag::ENABLE_PREDICATE).find_map(|p| match p.predicate(ssn, pod, node) {
            Some(Err(e)) => Some((p.name(), e)),
            _ => None,
        })
    }

    /// Plugins whose `allocatable` says no, each with its numbers when it gives
    /// them (`proportion (nvidia.com/gpu: ...)`). For `--explain`.
    pub fn allocatable_rejecters(&self, ssn: &Session<'_>, q: QueueId, pod: PodId) -> Vec<String> {
        self.allocatable_rejecters_after(ssn, q, pod, 0)
    }

    /// [`Framework::allocatable_rejecters`] once the queue holds `k` more pods
    /// like `pod` (the plugins whose [`Plugin::allocatable_copies`] stops
    /// before the k+1-th), with their numbers then. For `--explain`.
    pub fn allocatable_rejecters_after(&self, ssn: &Session<'_>, q: QueueId, pod: PodId, k: u32) -> Vec<String> {
        let req = ssn.pod(pod).req;
        let ahead = req.times(k as i64);
        self.enabled(flag::ENABLED_ALLOCATABLE)
            .filter(|p| match k {
                0 => p.allocatable(ssn, q, pod) == Some(false),
                _ => p.allocatable_copies(ssn, q, &req, k + 1).is_some_and(|c| c <= k),
            })
            .map(|p| match p.allocatable_why(ssn, q, pod, &ahead) {
                Some(why) => format!("{} ({why})", p.name()),
                None => p.name().to_string(),
            })
            .collect()
    }

    /// Plugins that find the queue overused. For `--explain`.
    pub fn overused_by(&self, ssn: &Session<'_>, q: QueueId) -> Vec<&'static str> {
        self.enabled(flag::ENABLED_OVERUSED).filter(|p| p.overused(ssn, q) == Some(true)).map(|p| p.name()).collect()
    }

    /// Plugins whose enqueue vote rejects the job. For `--explain`.
    pub fn enqueue_rejecters(&self, ssn: &Session<'_>, job: JobId) -> Vec<(&'static str, Option<String>)> {
        self.enabled(flag::ENABLE_JOB_ENQUEUED)
            .filter(|p| p.job_enqueueable(ssn, job).is_some_and(|v| v < 0))
            .map(|p| (p.name(), p.enqueue_refusal(ssn, job)))
            .collect()
    }

    /// Sum of node scores.
    pub fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> f64 {
        self.enabled(flag::ENABLE_NODE_ORDER).filter_map(|p| p.node_score(ssn, pod, node)).sum()
    }

    /// Sums of node scores of one pod on each of `nodes`. A plugin's score that
    /// only depends on the pod's request and the node's `used`
    /// ([`Plugin::score_by_node`]) is reused from earlier sessions while that is
    /// unchanged; the sum is then formed exactly as [`Framework::node_score`] forms
    /// it, so it is the same number.
    pub fn node_scores_of(&self, ssn: &Session<'_>, pod: PodId, nodes: &[NodeId]) -> Vec<f64> {
        if ssn.is_exhaustive() {
            // Plugin by plugin over all the nodes (batch scores need them all),
            // each node's sum in plugin order as `node_score` forms it.
            let mut sums = vec![std::iter::empty::<f64>().sum::<f64>(); nodes.len()];
            for p in self.enabled(flag::ENABLE_NODE_ORDER) {
                p.add_node_scores(ssn, pod, nodes, &mut sums);
            }
            return sums;
        }
        let req = ssn.pod(pod).req;
        let mut cache = self.scores.borrow_mut();
        let now = ssn.epoch();
        // The scoring plugins with their slots, walked without collecting them
        // (this runs for every pod placed).
        let scoring = || {
            self.tiers
                .iter()
                .flatten()
                .enumerate()
                .filter(|(_, s)| s.on(flag::ENABLE_NODE_ORDER))
                .map(|(slot, s)| (slot, s.plugin.as_ref()))
        };
        // Plugin by plugin, each node's sum grows in plugin order from the empty
        // sum's value: the additions `node_score`'s `sum()` makes, in its order.
        let mut sums = vec![std::iter::empty::<f64>().sum::<f64>(); nodes.len()];
        // The leading plugins that score node by node start from that same value
        // on every node, so what they add up to is itself a function of the node's
        // `used`: kept as one row (a pod reads one number per node, not one per
        // plugin).
        let lead = scoring().take_while(|(_, p)| p.score_by_node(ssn, pod)).count();
        let mut done = 0;
        if lead >= 2 {
            let row = cache.row(usize::MAX - lead, req, ssn.node_count());
            let row = &mut cache.rows[row];
            for (sum, &n) in sums.iter_mut().zip(nodes) {
                let slot = &mut row[n.0 as usize];
                let fresh = ssn.node_used_epoch(n) <= slot.0 || ssn.planted.stale_scores;
                if slot.0 == u64::MAX || !fresh {
                    let mut part = *sum;
                    for (_, p) in scoring().take(lead) {
                        if let Some(s) = p.node_score(ssn, pod, n) {
                            part += s;
                        }
                    }
                    *slot = (now, Some(part));
                }
                *sum = slot.1.expect("a kept partial sum");
            }
            done = lead;
        }
        for (slot, p) in scoring().skip(done) {
            if !p.score_by_node(ssn, pod) {
                p.add_node_scores(ssn, pod, nodes, &mut sums);
                continue;
            }
            let row = cache.row(slot, req, ssn.node_count());
            let row = &mut cache.rows[row];
            for (sum, &n) in sums.iter_mut().zip(nodes) {
                let slot = &mut row[n.0 as usize];
                let fresh = ssn.node_used_epoch(n) <= slot.0 || ssn.planted.stale_scores;
                if slot.0 == u64::MAX || !fresh {
                    *slot = (now, p.node_score(ssn, pod, n));
                }
                if let Some(s) = slot.1 {
                    *sum += s;
                }
            }
        }
        sums
    }

    /// True if each node's sum in [`Framework::node_scores_of`] for `pod` does
    /// not depend on the other nodes scored with it: no scoring plugin
    /// normalizes over the candidates (a batch score that
    /// [`Plugin::score_by_node`] does not disown) or sends them elsewhere (the
    /// extender, plugins from outside).
    pub fn scores_node_by_node(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        self.reads[2]
            && self
                .enabled(flag::ENABLE_NODE_ORDER)
                .all(|p| !p.hooks().has(Hooks::BATCH_SCORE) || p.score_by_node(ssn, pod))
    }

    /// What plugin `name` says its score of the pod on the node rests on (for
    /// `--explain`).
    pub fn score_note(&self, ssn: &Session<'_>, pod: PodId, node: NodeId, name: &str) -> Option<String> {
        self.enabled(flag::ENABLE_NODE_ORDER).find(|p| p.name() == name)?.score_note(ssn, pod, node)
    }

    /// Node scores per plugin on each of `nodes` (for `--explain`); a batch
    /// score is computed over all of `nodes`, as the candidates.
    pub fn node_scores(&self, ssn: &Session<'_>, pod: PodId, nodes: &[NodeId]) -> Vec<Vec<(&'static str, f64)>> {
        let mut out = vec![Vec::new(); nodes.len()];
        for p in self.enabled(flag::ENABLE_NODE_ORDER) {
            if p.hooks().has(Hooks::BATCH_SCORE) {
                let mut sums = vec![0.0; nodes.len()];
                p.add_node_scores(ssn, pod, nodes, &mut sums);
                for (o, s) in out.iter_mut().zip(sums) {
                    o.push((p.name(), s));
                }
                continue;
            }
            for (o, &n) in out.iter_mut().zip(nodes) {
                if let Some(s) = p.node_score(ssn, pod, n) {
                    o.push((p.name(), s));
                }
            }
        }
        out
    }

    /// The first failing validity check.
    pub fn job_valid(&self, ssn: &Session<'_>, job: JobId) -> Result<(), String> {
        for p in self.enabled(flag::ALWAYS) {
            if let Some(Err(e)) = p.job_valid(ssn, job) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// AND over plugins.
    pub fn job_ready(&self, ssn: &Session<'_>, job: JobId) -> bool {
        self.enabled(flag::ENABLE_JOB_READY).all(|p| p.job_ready(ssn, job).unwrap_or(true))
    }

    fn tier_vote(&self, bit: u32, f: impl Fn(&dyn Plugin) -> Option<Vote>) -> bool {
        for tier in &self.tiers {
            let mut permit = false;
            for s in tier.iter().filter(|s| s.on(bit)) {
                match f(s.plugin.as_ref()) {
                    Some(v) if v < 0 => return false,
                    Some(v) if v > 0 => permit = true,
                    _ => {}
                }
            }
            if permit {
                return true;
            }
        }
        true
    }

    /// Votes, tier by tier: any −1 rejects; a tier with a +1 permits; no votes permit.
    pub fn job_pipelined(&self, ssn: &Session<'_>, job: JobId) -> bool {
        self.tier_vote(flag::ENABLE_JOB_PIPELINED, |p| p.job_pipelined(ssn, job))
    }

    /// Votes like `job_pipelined`.
    pub fn job_enqueueable(&self, ssn: &Session<'_>, job: JobId) -> bool {
        self.tier_vote(flag::ENABLE_JOB_ENQUEUED, |p| p.job_enqueueable(ssn, job))
    }

    /// [`Framework::job_enqueueable`] for any PodGroup of queue `q` with
    /// minResources `minr` ([`Plugin::shape_enqueueable`]), where
    /// [`Framework::enqueue_votes_by_shape`] holds.
    pub fn shape_enqueueable(&self, ssn: &Session<'_>, q: QueueId, minr: &Resources) -> bool {
        self.tier_vote(flag::ENABLE_JOB_ENQUEUED, |p| p.shape_enqueueable(ssn, q, minr))
    }

    /// True if every enqueue vote depends only on the job's queue and minResources.
    pub fn enqueue_votes_by_shape(&self) -> bool {
        self.enabled(flag::ENABLE_JOB_ENQUEUED).all(|p| !p.hooks().has(Hooks::ENQUEUE_BY_JOB))
    }

    /// Tells every plugin the job was admitted.
    pub fn job_enqueued(&mut self, ssn: &Session<'_>, job: JobId) {
        for s in self.tiers.iter_mut().flatten().filter(|s| s.on(flag::ENABLE_JOB_ENQUEUED)) {
            s.plugin.job_enqueued(ssn, job);
        }
    }

    /// The first tier with a registered function decides: all of its functions must
    /// say starving. No function anywhere: not starving.
    pub fn job_starving(&self, ssn: &Session<'_>, job: JobId) -> bool {
        for tier in &self.tiers {
            // Every plugin of the tier is asked (no short cut: a vote may be
            // false before a later one answers).
            let mut votes =
                tier.iter().filter(|s| s.on(flag::ENABLE_JOB_STARVING)).filter_map(|s| s.plugin.job_starving(ssn, job));
            if let Some(first) = votes.next() {
                return votes.fold(first, |all, v| all && v);
            }
        }
        false
    }

    fn victims(
        &self,
        bit: u32,
        candidates: &[PodId],
        f: impl Fn(&dyn Plugin, &[PodId]) -> Option<Vec<PodId>>,
    ) -> Vec<PodId> {
        tier_walk(&self.tiers, |s| if s.on(bit) { f(s.plugin.as_ref(), candidates) } else { None })
    }

    /// Preempt victims.
    pub fn preemptable(&self, ssn: &Session<'_>, preemptor: PodId, candidates: &[PodId]) -> Vec<PodId> {
        self.victims(flag::ENABLE_PREEMPTABLE, candidates, |p, c| p.preemptable(ssn, preemptor, c))
    }

    /// True if the starving vote ([`Framework::job_starving`]) reads nothing but
    /// the job's spec and pods: every plugin that may vote on it is a built-in
    /// one that votes from the job's counts (priority, gang) or does not vote.
    /// tdm (its time windows) and plugins from outside make it false.
    pub fn starving_reads_job(&self) -> bool {
        self.reads[1]
    }

    /// True if [`Framework::job_valid`] reads nothing but the job's spec and
    /// pods: every plugin is a built-in one (of which only gang answers, from
    /// the job's counts); plugins from outside make it false.
    pub fn job_valid_reads_job(&self) -> bool {
        self.reads[0]
    }

    /// The conf's answers to what the plugins read (`reads`), found once.
    fn find_reads(&self) -> [bool; 3] {
        let builtin = |s: &Slot| super::plugins::spec(&s.conf.name).is_some();
        let slots = || self.tiers.iter().flatten();
        [
            slots().all(builtin),
            slots().filter(|s| s.on(flag::ENABLE_JOB_STARVING)).all(|s| s.conf.name != "tdm" && builtin(s)),
            slots().filter(|s| s.on(flag::ENABLE_NODE_ORDER)).all(|s| s.conf.name != "extender" && builtin(s)),
        ]
    }

    /// True if gang's votes bind allocate's outcome: gang answers `job_ready`, and
    /// its `job_pipelined` veto is cast in the first tier that votes (an earlier
    /// tier's permit would overrule it). A job gang calls neither ready nor
    /// pipelined is then discarded, whatever else votes.
    pub fn gang_binds(&self) -> bool {
        self.gang_binds
    }

    fn find_gang_binds(&self) -> bool {
        let gang = |s: &Slot, bit: u32| s.conf.name == "gang" && s.on(bit);
        let ready = self.tiers.iter().flatten().any(|s| gang(s, flag::ENABLE_JOB_READY));
        let first = self.tiers.iter().find(|t| t.iter().any(|s| s.on(flag::ENABLE_JOB_PIPELINED)));
        ready && first.is_some_and(|t| t.iter().any(|s| gang(s, flag::ENABLE_JOB_PIPELINED)))
    }

    /// The positions from which a tier's intersection can start for
    /// `preemptor` ([`seeds`]), keeping a re-seed at `s` only when the plugin
    /// before it may answer at all: an empty answer ends the tier instead
    /// ([`tier_walk`]), and a plugin's answer is empty when no victim group in
    /// the cluster passes its rule. `idx`: the tier's choosing plugins.
    fn seeds_for<'a>(
        &'a self,
        ssn: &'a Session<'_>,
        preemptor: PodId,
        reclaim: bool,
        tier: &'a [Slot],
        idx: &'a [usize],
    ) -> impl Iterator<Item = usize> + 'a {
        seeds(tier, idx).filter(move |&s| {
            s < 2 || {
                let before = &tier[idx[s - 1]];
                may_abstain(before)
                    || ssn
                        .victim_groups()
                        .iter()
                        .any(|g| before.plugin.victim_group_ok(ssn, preemptor, reclaim, g.0).unwrap_or(true))
            }
        })
    }

    /// Per tier, the positions of the plugins that choose preempt (or reclaim)
    /// victims, in order.
    fn find_choosers(tiers: &[Vec<Slot>], reclaim: bool) -> Vec<Vec<usize>> {
        let bit = if reclaim { flag::ENABLE_RECLAIMABLE } else { flag::ENABLE_PREEMPTABLE };
        tiers
            .iter()
            .map(|tier| {
                (0..tier.len())
                    .filter(|&i| {
                        let s = &tier[i];
                        s.on(bit)
                            && if reclaim {
                                s.plugin.hooks().has(Hooks::RECLAIMABLE)
                            } else {
                                s.plugin.hooks().has(Hooks::PREEMPTABLE)
                            }
                    })
                    .collect()
            })
            .collect()
    }

    /// [`Framework::victim_reads`]' three answers, from the conf.
    fn find_victim_reads(&self) -> [bool; 3] {
        let slots = || self.tiers.iter().flatten();
        [
            slots().any(|s| s.conf.name == "task-topology" || (s.conf.name == "drf" && s.conf.flag("enableHierarchy"))),
            slots().any(|s| s.conf.name == "extender"),
            slots()
                .filter(|s| s.on(flag::ENABLE_RECLAIMABLE) && s.plugin.hooks().has(Hooks::RECLAIMABLE))
                .all(|s| s.plugin.hooks().has(Hooks::RECLAIM_IGNORES_RECLAIMER)),
        ]
    }

    /// True if no plugin that chooses reclaim victims looks at the reclaimer: a
    /// node's victims are then the same for every reclaimer of a queue until the
    /// session changes.
    pub fn reclaim_victims_ignore_reclaimer(&self) -> bool {
        self.victim_reads[2]
    }

    /// True if a preemptor's victims and searches depend on its job beyond its
    /// pod (task-topology's scores read the job's tasks; hierarchical drf's
    /// victims, the job's total request), fixed by the conf.
    pub fn victims_read_job(&self) -> bool {
        self.victim_reads[0]
    }

    /// True if an extender is configured: its answers may depend on anything
    /// about the pod, so no search stands for another's. Fixed by the conf.
    pub fn victims_read_anything(&self) -> bool {
        self.victim_reads[1]
    }

    /// A stamp of what the choosing plugins' group rules read of the session
    /// besides the group and the preemptor's job priority
    /// ([`Plugin::victim_group_stamp`]): each plugin's words, then their
    /// count, written into `out` (emptied first). Equal stamps, equal rules.
    pub fn victim_group_stamp(&self, ssn: &Session<'_>, reclaim: bool, out: &mut Vec<u64>) {
        out.clear();
        for (tier, idx) in self.tiers.iter().zip(&self.choosers[reclaim as usize]) {
            for &i in idx {
                let from = out.len();
                tier[i].plugin.victim_group_stamp(ssn, reclaim, out);
                out.push((out.len() - from) as u64);
            }
        }
    }

    /// False if no tier can choose a victim of group `key` for `preemptor`
    /// ([`VictimRule::may_choose`], for one group).
    pub fn may_choose_victims_in(&self, ssn: &Session<'_>, preemptor: PodId, reclaim: bool, key: VictimKey) -> bool {
        self.victim_rule(ssn, preemptor, reclaim, false).may_choose(self, ssn, key)
    }

    /// The group rule of [`Framework::may_choose_victims_in`] for `preemptor`,
    /// with each tier's starting positions found once (they read every victim
    /// group of the session) for the groups asked after. With `now`, the
    /// plugins' rules for one search ([`Plugin::victim_group_ok_now`]): the
    /// rule then stands for this preemptor in this state only.
    pub fn victim_rule(&self, ssn: &Session<'_>, preemptor: PodId, reclaim: bool, now: bool) -> VictimRule {
        let seeds = self
            .tiers
            .iter()
            .zip(&self.choosers[reclaim as usize])
            .map(|(tier, idx)| self.seeds_for(ssn, preemptor, reclaim, tier, idx).fold(0u64, |m, s| m | seed_bit(s)))
            .collect();
        VictimRule { preemptor, reclaim, now, seeds }
    }

    /// True when reclaim candidates go to the plugins in victim order: `capacity`
    /// chooses reclaim victims in that order (Volcano's `BuildVictimsPriorityQueue`).
    pub fn reclaim_in_victim_order(&self) -> bool {
        self.reclaim_ordered
    }

    /// Reclaim victims.
    pub fn reclaimable(&self, ssn: &Session<'_>, reclaimer: PodId, candidates: &[PodId]) -> Vec<PodId> {
        self.victims(flag::ENABLE_RECLAIMABLE, candidates, |p, c| p.reclaimable(ssn, reclaimer, c))
    }

    /// True if some plugin with `enabledVictim` names shuffle's victims.
    pub fn names_victims(&self) -> bool {
        self.tiers.iter().flatten().any(|s| s.on(flag::ENABLED_VICTIM) && s.plugin.hooks().has(Hooks::VICTIM_TASKS))
    }

    /// shuffle's victims (Volcano's `VictimTasks`): per tier, the union of the
    /// answers of the plugins with `enabledVictim`; the first tier with a victim
    /// decides. Returned in pod order.
    pub fn victim_tasks(&self, ssn: &Session<'_>, running: &[PodId]) -> Vec<PodId> {
        for tier in &self.tiers {
            let mut union: Vec<PodId> = tier
                .iter()
                .filter(|s| s.on(flag::ENABLED_VICTIM))
                .filter_map(|s| s.plugin.victim_tasks(ssn, running))
                .flatten()
                .collect();
            union.sort_unstable();
            union.dedup();
            if !union.is_empty() {
                return union;
            }
        }
        Vec::new()
    }

    /// OR over plugins.
    pub fn overused(&self, ssn: &Session<'_>, q: QueueId) -> bool {
        self.enabled(flag::ENABLED_OVERUSED).any(|p| p.overused(ssn, q).unwrap_or(false))
    }

    /// AND over plugins.
    pub fn allocatable(&self, ssn: &Session<'_>, q: QueueId, pod: PodId) -> bool {
        self.enabled(flag::ENABLED_ALLOCATABLE).all(|p| p.allocatable(ssn, q, pod).unwrap_or(true))
    }

    /// How many of `cap` pods of request `req`, placed one after another in
    /// queue `q`, every plugin's `allocatable` admits (the least of the
    /// plugins' counts; [`Plugin::allocatable_copies`]).
    pub fn allocatable_copies(&self, ssn: &Session<'_>, q: QueueId, req: &Resources, cap: u32) -> u32 {
        self.enabled(flag::ENABLED_ALLOCATABLE).fold(cap, |c, p| p.allocatable_copies(ssn, q, req, c).unwrap_or(c))
    }

    /// AND over plugins, for one pod.
    pub fn preemptive(&self, ssn: &Session<'_>, q: QueueId, pod: PodId) -> bool {
        self.preemptive_for(ssn, q, &ssn.pod(pod).req)
    }

    /// AND over plugins, for pods requesting `req` in all.
    pub fn preemptive_for(&self, ssn: &Session<'_>, q: QueueId, req: &Resources) -> bool {
        self.enabled(flag::ENABLE_PREEMPTIVE).all(|p| p.preemptive(ssn, q, req).unwrap_or(true))
    }

    /// Gang-eviction victims (Volcano's `UnifiedEvictable`): tiers and
    /// intersections as for preempt's victims, over every plugin that registers the
    /// function.
    pub fn unified_evictable(
        &self,
        ssn: &Session<'_>,
        kind: EvictKind,
        job: JobId,
        candidates: &[PodId],
    ) -> Vec<PodId> {
        self.victims(flag::ALWAYS, candidates, |p, c| p.unified_evictable(ssn, kind, job, c))
    }

    /// The first enabled plugin with a gradient decides.
    pub fn hypernode_gradient(&self, ssn: &Session<'_>, job: JobId) -> Option<Vec<Vec<HyperNodeId>>> {
        self.enabled(flag::ENABLED_HYPER_NODE_GRADIENT).find_map(|p| p.hypernode_gradient(ssn, job))
    }

    /// The eviction gradient of the first plugin that gives one
    /// ([`Plugin::hypernode_gradient_evict`]).
    pub fn hypernode_gradient_evict(
        &self,
        ssn: &Session<'_>,
        job: JobId,
        within: HyperNodeId,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        self.enabled(flag::ENABLED_HYPER_NODE_GRADIENT).find_map(|p| p.hypernode_gradient_evict(ssn, job, within))
    }

    /// The gradient of the first plugin that gives one for sub-job `sub` within
    /// `within` ([`Plugin::sub_job_gradient`]); `within` alone when none does.
    pub fn sub_job_gradient(
        &self,
        ssn: &Session<'_>,
        job: JobId,
        sub: u32,
        within: HyperNodeId,
        evict: bool,
    ) -> Vec<Vec<HyperNodeId>> {
        self.enabled(flag::ENABLED_HYPER_NODE_GRADIENT)
            .find_map(|p| p.sub_job_gradient(ssn, job, sub, within, evict))
            .unwrap_or_else(|| vec![vec![within]])
    }

    /// Σ over HyperNode-order plugins of their scores for sub-job `sub` in each
    /// of `candidates` (0 where no plugin scores).
    pub fn hypernode_scores(&self, ssn: &Session<'_>, job: JobId, sub: u32, candidates: &[HyperNodeId]) -> Vec<f64> {
        let mut sums = vec![0.0; candidates.len()];
        for p in self.enabled(flag::ENABLED_HYPER_NODE_ORDER) {
            if let Some(v) = p.hypernode_scores(ssn, job, sub, candidates) {
                for (s, x) in sums.iter_mut().zip(v) {
                    *s += x;
                }
            }
        }
        sums
    }

    /// Volcano's `SubJobReady`: for a job without a `subGroupPolicy` its
    /// `JobReady`; else every enabled answer.
    pub fn sub_job_ready(&self, ssn: &Session<'_>, job: JobId, sub: u32) -> bool {
        if !super::subjobs::has_policy(ssn, job) {
            return self.job_ready(ssn, job);
        }
        self.enabled(flag::ENABLED_SUB_JOB_READY).all(|p| p.sub_job_ready(ssn, job, sub).unwrap_or(true))
    }

    /// Volcano's `SubJobPipelined`: for a job without a `subGroupPolicy` its
    /// `JobPipelined`; else voted tier by tier as `job_pipelined`.
    pub fn sub_job_pipelined(&self, ssn: &Session<'_>, job: JobId, sub: u32) -> bool {
        if !super::subjobs::has_policy(ssn, job) {
            return self.job_pipelined(ssn, job);
        }
        self.tier_vote(flag::ENABLED_SUB_JOB_PIPELINED, |p| p.sub_job_pipelined(ssn, job, sub))
    }

    /// Volcano's `SubJobOrderFn`: the first enabled plugin that tells two sub-jobs
    /// apart, else their match index, then their UID.
    pub fn sub_job_order(&self, ssn: &Session<'_>, job: JobId, l: u32, r: u32) -> Ordering {
        for p in self.enabled(flag::ENABLED_SUB_JOB_ORDER) {
            if let Some(o) = p.sub_job_order(ssn, job, l, r).filter(|o| o.is_ne()) {
                return o;
            }
        }
        super::subjobs::default_order(ssn, job, l, r)
    }

    /// True if a plugin of this name is configured.
    pub fn has(&self, name: &str) -> bool {
        self.tiers.iter().flatten().any(|s| s.conf.name == name)
    }
}

/// A list's job-order keys ([`Framework::order_keys`]): per job, the
/// plugins' keys in plugin order and the PodGroup's creation.
#[derive(Debug, Default)]
pub struct OrderKeys {
    k: usize,
    keys: Vec<f64>,
    created: Vec<SimTime>,
}

impl OrderKeys {
    /// The order of `jobs[a]` and `jobs[b]` (`jobs`: the list the keys were
    /// made for): keys, creation, then (namespace, name).
    pub fn cmp(&self, ssn: &Session<'_>, jobs: &[JobId], a: usize, b: usize) -> Ordering {
        let k = self.k;
        let (ka, kb) = (&self.keys[a * k..a * k + k], &self.keys[b * k..b * k + k]);
        cmp_keys(ka, kb)
            .then_with(|| self.created[a].cmp(&self.created[b]))
            .then_with(|| cmp_names(ssn, jobs[a], jobs[b]))
    }
}

/// Two jobs' job-order keys compared (each key in plugin order; a key that
/// does not compare, as NaN, ties).
pub fn cmp_keys(a: &[f64], b: &[f64]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.partial_cmp(y).unwrap_or(Ordering::Equal))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// Two jobs' (namespace, name): job order's last word after the keys and the
/// PodGroups' creation.
pub fn cmp_names(ssn: &Session<'_>, a: JobId, b: JobId) -> Ordering {
    let (l, r) = (&ssn.job(a).spec, &ssn.job(b).spec);
    (&*l.namespace, l.name.as_str()).cmp(&(&*r.namespace, r.name.as_str()))
}

#[cfg(test)]
mod tests {
    //! Volcano's `framework/session_plugins_test.go` UnifiedEvictable cases, on the
    //! tier walk every victim function shares (each test plugin's fixed answer;
    //! `None` abstains).
    use super::*;

    fn walk(tiers: &[Vec<Option<Vec<u32>>>]) -> Vec<u32> {
        let tiers: Vec<Vec<Option<Vec<PodId>>>> = tiers
            .iter()
            .map(|t| t.iter().map(|a| a.as_ref().map(|v| v.iter().map(|&p| PodId(p)).collect())).collect())
            .collect();
        tier_walk(&tiers, |a| a.clone()).into_iter().map(|p| p.0).collect()
    }

    /// The files under `plugins/` that contain `needle`, sorted.
    fn plugin_files_with(needle: &str) -> Vec<String> {
        fn walk(dir: &std::path::Path, root: &std::path::Path, needle: &str, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).expect("plugins dir") {
                let path = e.expect("entry").path();
                if path.is_dir() {
                    walk(&path, root, needle, out);
                } else if std::fs::read_to_string(&path).expect("source").contains(needle) {
                    out.push(path.strip_prefix(root).expect("under root").to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/volcano/plugins");
        let mut out = Vec::new();
        walk(&root, &root, needle, &mut out);
        out.sort();
        out
    }

    /// The fast paths that ask which plugins a run has
    /// ([`Framework::job_valid_reads_job`], [`Framework::starving_reads_job`],
    /// [`Framework::scores_node_by_node`]) rest on which built-in plugins answer
    /// those hooks and how: only gang answers `job_valid` (from the job's
    /// counts); priority and gang answer `job_starving` from the job's counts,
    /// tdm from its time windows; nodeorder and numa-aware declare batch
    /// scores; network-topology-aware's own `add_node_scores` scores node by
    /// node. A plugin that starts answering one of them fails this test, to
    /// be weighed there first.
    #[test]
    fn the_plugins_answering_the_hooks_the_fast_paths_rest_on() {
        assert_eq!(plugin_files_with("fn job_valid("), ["gang.rs"]);
        assert_eq!(plugin_files_with("fn job_starving("), ["gang.rs", "priority.rs", "tdm.rs"]);
        assert_eq!(plugin_files_with("Hooks::BATCH_SCORE"), ["nodeorder.rs", "numa_aware.rs"]);
        assert_eq!(
            plugin_files_with("fn add_node_scores("),
            ["extender/mod.rs", "network_topology.rs", "nodeorder.rs", "numa_aware.rs"]
        );
    }

    /// `TestUnifiedEvictable_TierWalkAndIntersection`: {a, b} ∩ {b, c} = {b}.
    #[test]
    fn unified_evictable_tier_walk_and_intersection() {
        assert_eq!(walk(&[vec![Some(vec![0, 1]), Some(vec![1, 2])]]), [1]);
    }

    /// `TestUnifiedEvictable_AbstainSkipped`.
    #[test]
    fn unified_evictable_abstain_skipped() {
        assert_eq!(walk(&[vec![None, Some(vec![0])]]), [0]);
    }

    /// `TestUnifiedEvictable_EmptyCandidatesBlocksTier`: an empty answer ends the
    /// first tier undecided; the second tier's answer stands.
    #[test]
    fn unified_evictable_empty_candidates_blocks_tier() {
        assert_eq!(walk(&[vec![Some(vec![]), Some(vec![0])], vec![Some(vec![0])]]), [0]);
    }

    /// `TestUnifiedEvictable_NoPluginsReturnsNil`.
    #[test]
    fn unified_evictable_no_plugins_returns_nil() {
        assert!(walk(&[vec![None]]).is_empty());
    }
}
