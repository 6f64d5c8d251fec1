//! What a Volcano plugin is: the extension points it may answer ([`Plugin`]),
//! the ones it declares ([`Hooks`]), its conf entry ([`PluginConf`]) and the
//! spec each plugin module exports ([`PluginSpec`]).

use super::args::{ArgSpec, Args};
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodId};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::Resources;
use lahar_core::model::topology::HyperNodeId;
use lahar_core::session::Session;
use lahar_core::world::{ReachFacts, VictimKey};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

/// A vote: +1 permit, 0 abstain, −1 reject.
pub type Vote = i8;

/// Volcano's plugin extension points. Every method has a "not registered" default;
/// [`Plugin::hooks`] declares those the framework must ask.
#[allow(unused_variables)]
pub trait Plugin: Send {
    /// Name in the conf.
    fn name(&self) -> &'static str;
    /// The extension points this plugin registers beyond those every plugin
    /// may answer (see [`Hooks`]); the framework asks no other plugin at them,
    /// and a debug build checks the plugin answers nothing it did not declare.
    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }
    /// Per-session set-up (shares, deserved resources...).
    fn open(&mut self, ssn: &mut Session<'_>) {}
    /// The session's end (after every action).
    fn close(&mut self, ssn: &Session<'_>) {}
    /// `Less` puts `l` first; `Equal` abstains.
    fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Option<Ordering> {
        None
    }
    /// A number whose ascending order is this plugin's `job_order` (`Some` for
    /// every job, or `None` for every job): lets the framework sort jobs by
    /// precomputed keys. A plugin that returns keys must order exactly by them.
    fn job_order_key(&self, ssn: &Session<'_>, j: JobId) -> Option<f64> {
        None
    }
    /// The key [`Plugin::job_order_key`] gives every job whose reach facts
    /// (kept in step with its pods by the World's admitted list) are `f`, when
    /// the facts decide it; `None`: ask about the job. Lets allocate order its
    /// backlog from the admitted list without reading each waiting job.
    fn job_order_key_of_facts(&self, ssn: &Session<'_>, f: &ReachFacts) -> Option<f64> {
        None
    }
    /// Order of pods of one job.
    fn task_order(&self, ssn: &Session<'_>, l: PodId, r: PodId) -> Option<Ordering> {
        None
    }
    /// Order of queues.
    fn queue_order(&self, ssn: &Session<'_>, l: QueueId, r: QueueId) -> Option<Ordering> {
        None
    }
    /// Order of victim queues (no flag; the first registered decides).
    fn victim_queue_order(&self, ssn: &Session<'_>, l: QueueId, r: QueueId, preemptor: QueueId) -> Option<Ordering> {
        None
    }
    /// Can the pod run on the node (resources aside)? `Err` carries the reason.
    fn predicate(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        None
    }
    /// True when [`Plugin::predicate`] passes the pod on every node (so a search
    /// need not ask per node).
    fn predicate_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        false
    }
    /// The refusals of [`Plugin::predicate`] evicting could not resolve
    /// (Volcano's `Error` and `UnschedulableAndUnresolvable` codes), which
    /// preempt and reclaim choose candidate nodes by: all of them by default,
    /// none when the plugin declares [`Hooks::RESOLVABLE`].
    fn predicate_unresolvable(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<Result<(), String>> {
        if self.hooks().has(Hooks::RESOLVABLE) { None } else { self.predicate(ssn, pod, node) }
    }
    /// True when [`Plugin::predicate_unresolvable`] passes the pod on every node.
    fn unresolvable_passes_everywhere(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        self.hooks().has(Hooks::RESOLVABLE) || self.predicate_passes_everywhere(ssn, pod)
    }
    /// Node score (summed over plugins). A plugin whose score reads more than the
    /// pod's request, static node facts and the node's `used` must say so in
    /// [`Plugin::score_by_node`], or a cached score would be reused wrongly.
    fn node_score(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<f64> {
        None
    }
    /// Adds the pod's [`Plugin::node_score`] on each of `nodes` to `sums` (same
    /// length), node by node in order. A plugin whose score is shared by runs of
    /// nodes may compute it once per run; the numbers added must be the very ones
    /// `node_score` gives.
    fn add_node_scores(&self, ssn: &Session<'_>, pod: PodId, nodes: &[NodeId], sums: &mut [f64]) {
        for (sum, &n) in sums.iter_mut().zip(nodes) {
            if let Some(s) = self.node_score(ssn, pod, n) {
                *sum += s;
            }
        }
    }
    /// What the plugin's score of the pod on the node rests on, for `--explain`.
    fn score_note(&self, ssn: &Session<'_>, pod: PodId, node: NodeId) -> Option<String> {
        None
    }
    /// True when the pod's node score is a function of the pod's request, static
    /// node facts and the node's `used` only, so the framework may reuse it while
    /// the node's `used` is unchanged; false when it reads more (the job's own
    /// placement, HyperNode sums, the session...).
    fn score_by_node(&self, ssn: &Session<'_>, pod: PodId) -> bool {
        true
    }
    /// Is the job schedulable at all (no flag)?
    fn job_valid(&self, ssn: &Session<'_>, job: JobId) -> Option<Result<(), String>> {
        None
    }
    /// Is the gang satisfied?
    fn job_ready(&self, ssn: &Session<'_>, job: JobId) -> Option<bool> {
        None
    }
    /// Is the gang satisfied counting pipelined pods?
    fn job_pipelined(&self, ssn: &Session<'_>, job: JobId) -> Option<Vote> {
        None
    }
    /// Does the job need more resources (preemptor)?
    fn job_starving(&self, ssn: &Session<'_>, job: JobId) -> Option<bool> {
        None
    }
    /// May the PodGroup be admitted (Pending → Inqueue)?
    fn job_enqueueable(&self, ssn: &Session<'_>, job: JobId) -> Option<Vote> {
        None
    }
    /// [`Plugin::job_enqueueable`] for any PodGroup of queue `q` with
    /// minResources `minr`, asked without the job (enqueue's standing order
    /// votes once per group of waiting PodGroups of one shape). A plugin that
    /// votes on enqueue without [`Hooks::ENQUEUE_BY_JOB`] must answer here as
    /// it would for each such job (the built-in ones make their job vote from
    /// this one).
    fn shape_enqueueable(&self, ssn: &Session<'_>, q: QueueId, minr: &Resources) -> Option<Vote> {
        None
    }
    /// Why the plugin refuses the PodGroup's admission, in numbers, for
    /// `--explain` (`None`: no numbers to give).
    fn enqueue_refusal(&self, ssn: &Session<'_>, job: JobId) -> Option<String> {
        None
    }
    /// The PodGroup was admitted.
    fn job_enqueued(&mut self, ssn: &Session<'_>, job: JobId) {}
    /// Victims among `candidates` for preempt (order kept).
    fn preemptable(&self, ssn: &Session<'_>, preemptor: PodId, candidates: &[PodId]) -> Option<Vec<PodId>> {
        None
    }
    /// A necessary condition on the victims this plugin's `preemptable` (or, with
    /// `reclaim`, `reclaimable`) can choose for `preemptor`, by victim group:
    /// `Some(false)` if it never chooses a pod of group `key`. `None`: no rule.
    fn victim_group_ok(&self, ssn: &Session<'_>, preemptor: PodId, reclaim: bool, key: VictimKey) -> Option<bool> {
        None
    }
    /// A stamp of what this plugin's [`Plugin::victim_group_ok`] reads of the
    /// session besides the group and the preemptor's job priority, pushed onto
    /// `out` as words: equal stamps, equal answers. Asked only where every
    /// plugin of the conf is a known one (preempt's carried failures); by
    /// default nothing (the answers read nothing else).
    fn victim_group_stamp(&self, ssn: &Session<'_>, reclaim: bool, out: &mut Vec<u64>) {}
    /// [`Plugin::victim_group_ok`] for one search only: the answer may read
    /// anything of `preemptor` (drf: its job's share), where
    /// `victim_group_ok` reads only its job's priority (answers kept per
    /// priority stand for every preemptor of it). Must be `Some(false)`
    /// wherever `victim_group_ok` is. Default: `victim_group_ok`.
    fn victim_group_ok_now(&self, ssn: &Session<'_>, preemptor: PodId, reclaim: bool, key: VictimKey) -> Option<bool> {
        self.victim_group_ok(ssn, preemptor, reclaim, key)
    }
    /// Victims among `candidates` for reclaim (order kept).
    fn reclaimable(&self, ssn: &Session<'_>, reclaimer: PodId, candidates: &[PodId]) -> Option<Vec<PodId>> {
        None
    }
    /// Pods among `running` that the `shuffle` action should evict (Volcano's
    /// `VictimTasksFn`).
    fn victim_tasks(&self, ssn: &Session<'_>, running: &[PodId]) -> Option<Vec<PodId>> {
        None
    }
    /// Is the queue over its share?
    fn overused(&self, ssn: &Session<'_>, queue: QueueId) -> Option<bool> {
        None
    }
    /// May the queue take this pod?
    fn allocatable(&self, ssn: &Session<'_>, queue: QueueId, pod: PodId) -> Option<bool> {
        None
    }
    /// How many of `cap` pods of request `req`, placed one after another in
    /// the queue, [`Plugin::allocatable`] admits while the queue's allocation
    /// grows by `req` with each: the vote for the k-th asks the allocation
    /// plus (k − 1)·`req`. Its votes must fall once they fall (a growing
    /// allocation never turns a no into a yes). `None`: not counted (every pod
    /// may be admitted, as far as this plugin says).
    fn allocatable_copies(&self, ssn: &Session<'_>, queue: QueueId, req: &Resources, cap: u32) -> Option<u32> {
        None
    }
    /// Why [`Plugin::allocatable`] says no, in numbers (`--explain` only): the
    /// limit, what the queue holds (with `ahead` more: the pods of the step
    /// before this one) and what the pod asks. `None` when it says yes or has
    /// nothing to add to its name.
    fn allocatable_why(&self, ssn: &Session<'_>, queue: QueueId, pod: PodId, ahead: &Resources) -> Option<String> {
        None
    }
    /// May the queue reclaim for pods requesting `req` in all (one pod for
    /// reclaim, a job's pending pods for gangreclaim)?
    fn preemptive(&self, ssn: &Session<'_>, queue: QueueId, req: &Resources) -> Option<bool> {
        None
    }
    /// Victims among `candidates` that gangpreempt or gangreclaim may take for
    /// `job` (Volcano's `UnifiedEvictableFn`, which no enable flag switches off;
    /// order kept).
    fn unified_evictable(
        &self,
        ssn: &Session<'_>,
        kind: EvictKind,
        job: JobId,
        candidates: &[PodId],
    ) -> Option<Vec<PodId>> {
        None
    }
    /// For a hard-topology job: candidate HyperNodes grouped by tier, lowest first.
    fn hypernode_gradient(&self, ssn: &Session<'_>, job: JobId) -> Option<Vec<Vec<HyperNodeId>>> {
        None
    }
    /// For gangpreempt and gangreclaim (Volcano's gradient with `PurposeEvict`): the
    /// HyperNodes under `within` where a job may be planned, widest first; for a
    /// job without a hard topology, `within` alone.
    fn hypernode_gradient_evict(
        &self,
        ssn: &Session<'_>,
        job: JobId,
        within: HyperNodeId,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        None
    }
    /// For sub-job `sub` of a job being placed in HyperNode `within`: the
    /// HyperNodes under it to try (Volcano's `HyperNodeGradientForSubJobFn`),
    /// grouped by tier, lowest first; with `evict` (gangpreempt and gangreclaim's
    /// plans, `PurposeEvict`), widest first. `within` alone for a sub-job without
    /// a hard topology.
    fn sub_job_gradient(
        &self,
        ssn: &Session<'_>,
        job: JobId,
        sub: u32,
        within: HyperNodeId,
        evict: bool,
    ) -> Option<Vec<Vec<HyperNodeId>>> {
        None
    }
    /// Scores of placing sub-job `sub` in each of `candidates` (Volcano's
    /// `HyperNodeOrderFn`, which sees the candidates together).
    fn hypernode_scores(
        &self,
        ssn: &Session<'_>,
        job: JobId,
        sub: u32,
        candidates: &[HyperNodeId],
    ) -> Option<Vec<f64>> {
        None
    }
    /// Is sub-job `sub` ready (jobs with a `subGroupPolicy`)?
    fn sub_job_ready(&self, ssn: &Session<'_>, job: JobId, sub: u32) -> Option<bool> {
        None
    }
    /// Pipelined vote for sub-job `sub`.
    fn sub_job_pipelined(&self, ssn: &Session<'_>, job: JobId, sub: u32) -> Option<Vote> {
        None
    }
    /// Order of two sub-jobs of a job (`Less` = first).
    fn sub_job_order(&self, ssn: &Session<'_>, job: JobId, l: u32, r: u32) -> Option<Ordering> {
        None
    }
}

/// Which gang-eviction action asks [`Plugin::unified_evictable`] (Volcano's
/// `EvictionKind`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EvictKind {
    /// `gangpreempt`: victims in the preemptor's queue.
    GangPreempt,
    /// `gangreclaim`: victims in other, reclaimable queues.
    GangReclaim,
}

/// The extension points a plugin declares in [`Plugin::hooks`]: the framework
/// asks a plugin at these only if it declares them (the others every plugin may
/// answer, and the framework asks them all).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hooks(u16);

impl Hooks {
    /// Nothing beyond the always-asked points.
    pub const NONE: Hooks = Hooks(0);
    /// [`Plugin::job_order`] (or [`Plugin::job_order_key`]).
    pub const JOB_ORDER: Hooks = Hooks(1);
    /// [`Plugin::predicate`].
    pub const PREDICATE: Hooks = Hooks(1 << 1);
    /// Every refusal of [`Plugin::predicate`] is resolvable (Volcano's
    /// `Unschedulable` code): preempt and reclaim keep the node as a candidate
    /// (`PredicateForPreemptAction`), and preempt asks again after each eviction.
    pub const RESOLVABLE: Hooks = Hooks(1 << 2);
    /// [`Plugin::node_score`] or a batch score.
    pub const NODE_SCORE: Hooks = Hooks(1 << 3);
    /// The plugin scores a set of candidate nodes together (Volcano's
    /// `BatchNodeOrderFn`, normalized over the candidates) in
    /// [`Plugin::add_node_scores`] only; its [`Plugin::node_score`] says nothing.
    pub const BATCH_SCORE: Hooks = Hooks(1 << 4);
    /// [`Plugin::preemptable`]: the victim search relies on it.
    pub const PREEMPTABLE: Hooks = Hooks(1 << 5);
    /// [`Plugin::reclaimable`]: the victim search relies on it.
    pub const RECLAIMABLE: Hooks = Hooks(1 << 6);
    /// The reclaim victims do not depend on the reclaimer (only on the candidates
    /// and the session's state).
    pub const RECLAIM_IGNORES_RECLAIMER: Hooks = Hooks(1 << 7);
    /// [`Plugin::victim_tasks`].
    pub const VICTIM_TASKS: Hooks = Hooks(1 << 8);
    /// The [`Plugin::job_enqueueable`] vote reads more than the job's queue, its
    /// minResources and the session's state (enqueue then votes job by job
    /// instead of once per group of waiting PodGroups of one shape).
    pub const ENQUEUE_BY_JOB: Hooks = Hooks(1 << 9);
    /// [`Plugin::preemptable`] and [`Plugin::reclaimable`] always answer (never
    /// `None`), which lets the victim search skip tiers it cannot start from.
    pub const NEVER_ABSTAINS: Hooks = Hooks(1 << 10);

    /// Both sets.
    pub const fn and(self, o: Hooks) -> Hooks {
        Hooks(self.0 | o.0)
    }

    /// `o` when `yes`, else nothing (for hooks that depend on the arguments).
    pub const fn when(yes: bool, o: Hooks) -> Hooks {
        if yes { o } else { Hooks::NONE }
    }

    /// True if every hook of `o` is declared.
    pub const fn has(self, o: Hooks) -> bool {
        self.0 & o.0 == o.0
    }
}

/// A plugin as the conf loader and the framework find it: its name, its
/// arguments, how to build it. Each plugin module exports one; [`crate::volcano::plugins::ALL`]
/// lists them.
pub struct PluginSpec {
    /// The name in the conf.
    pub name: &'static str,
    /// The arguments it reads.
    pub args: &'static [ArgSpec],
    /// Arguments older Volcano releases read and today's Volcano ignores, with
    /// what Volcano does with them now: warnings, never errors.
    pub retired: &'static [(&'static str, &'static str)],
    /// Problems between arguments (each valid alone): (argument, message).
    pub conflicts: fn(&Args) -> Vec<(&'static str, &'static str)>,
    /// The plugin for a validated conf entry.
    pub build: fn(&PluginConf) -> Box<dyn Plugin>,
}

impl PluginSpec {
    /// A plugin without arguments.
    pub const fn new(name: &'static str, build: fn(&PluginConf) -> Box<dyn Plugin>) -> PluginSpec {
        PluginSpec { name, args: &[], retired: &[], conflicts: no_conflicts, build }
    }

    /// The same plugin reading `args`.
    pub const fn args(self, args: &'static [ArgSpec]) -> PluginSpec {
        PluginSpec { args, ..self }
    }

    /// The same plugin with checks between its arguments.
    pub const fn conflicts(self, conflicts: fn(&Args) -> Vec<(&'static str, &'static str)>) -> PluginSpec {
        PluginSpec { conflicts, ..self }
    }

    /// The same plugin with retired arguments.
    pub const fn retired(self, retired: &'static [(&'static str, &'static str)]) -> PluginSpec {
        PluginSpec { retired, ..self }
    }

    /// The argument spec of `key`.
    pub fn arg(&self, key: &str) -> Option<&ArgSpec> {
        super::args::find(self.args, key)
    }

    /// What Volcano does now with the retired argument `key`, if it is one: a
    /// retired argument, or a key below one (`predicate.resources.<name>.cpu`
    /// retired with `predicate.resources`).
    pub fn retired_arg(&self, key: &str) -> Option<&'static str> {
        let below = |a: &str| key.strip_prefix(a).is_some_and(|rest| rest.is_empty() || rest.starts_with('.'));
        self.retired.iter().find(|(a, _)| below(a)).map(|r| r.1)
    }
}

fn no_conflicts(_: &Args) -> Vec<(&'static str, &'static str)> {
    Vec::new()
}

/// Every enable flag Volcano's conf accepts, with its default.
pub const FLAGS: &[(&str, bool)] = &[
    ("enableJobOrder", true),
    ("enableTaskOrder", true),
    ("enableQueueOrder", true),
    ("enabledClusterOrder", false),
    ("enableJobReady", true),
    ("enableJobPipelined", true),
    ("enableJobEnqueued", true),
    ("enableJobStarving", true),
    ("enablePreemptable", true),
    ("enableReclaimable", true),
    ("enablePreemptive", true),
    ("enablePredicate", true),
    ("enableNodeOrder", true),
    ("enableBestNode", true),
    ("enableTargetJob", true),
    ("enableReservedNodes", true),
    ("enabledVictim", true),
    ("enabledOverused", true),
    ("enabledAllocatable", true),
    ("enabledHyperNodeOrder", true),
    ("enabledHyperNodeGradient", true),
    ("enabledSubJobReady", true),
    ("enabledSubJobPipelined", true),
    ("enabledSubJobOrder", true),
    ("enableHierarchy", false),
];

/// Builds a registered plugin for one conf entry.
pub type Build = dyn Fn(&PluginConf) -> Box<dyn Plugin> + Send + Sync;

/// A registered plugin: its name and its builder.
pub struct External {
    /// The name a conf gives it (interned: the same name is the same string).
    pub name: &'static str,
    /// Builds it for a conf entry.
    pub build: Box<Build>,
}

impl fmt::Debug for External {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "External({})", self.name)
    }
}

impl PartialEq for External {
    /// The same registration.
    fn eq(&self, o: &External) -> bool {
        std::ptr::eq(self, o)
    }
}

/// A plugin in a tier.
#[derive(Clone, Debug, PartialEq)]
pub struct PluginConf {
    /// Name.
    pub name: String,
    /// Enable flags (every key of [`FLAGS`]).
    pub flags: BTreeMap<&'static str, bool>,
    /// Arguments.
    pub args: Args,
    /// The registration of a plugin registered while the process runs
    /// ([`super::external`]); `None` for a built-in plugin.
    pub external: Option<std::sync::Arc<External>>,
}

impl PluginConf {
    /// A plugin with every flag at Volcano's default.
    pub fn new(name: &str) -> PluginConf {
        PluginConf {
            name: name.to_string(),
            flags: FLAGS.iter().copied().collect(),
            args: Args::default(),
            external: None,
        }
    }
    /// A flag's value.
    pub fn flag(&self, key: &str) -> bool {
        self.flags.get(key).copied().unwrap_or(false)
    }
}

/// Bit positions of the enable flags: each its place in [`FLAGS`], found at
/// compile time (a name missing from [`FLAGS`] does not compile).
pub mod flag {
    use super::FLAGS;

    /// The position of `name` in [`FLAGS`].
    const fn bit(name: &str) -> u32 {
        let mut i = 0;
        while i < FLAGS.len() {
            if lahar_core::util::text::const_eq(FLAGS[i].0, name) {
                return i as u32;
            }
            i += 1;
        }
        panic!("not an enable flag")
    }

    /// `enableJobOrder`.
    pub const ENABLE_JOB_ORDER: u32 = bit("enableJobOrder");
    /// `enableTaskOrder`.
    pub const ENABLE_TASK_ORDER: u32 = bit("enableTaskOrder");
    /// `enableQueueOrder`.
    pub const ENABLE_QUEUE_ORDER: u32 = bit("enableQueueOrder");
    /// `enabledClusterOrder`.
    pub const ENABLED_CLUSTER_ORDER: u32 = bit("enabledClusterOrder");
    /// `enableJobReady`.
    pub const ENABLE_JOB_READY: u32 = bit("enableJobReady");
    /// `enableJobPipelined`.
    pub const ENABLE_JOB_PIPELINED: u32 = bit("enableJobPipelined");
    /// `enableJobEnqueued`.
    pub const ENABLE_JOB_ENQUEUED: u32 = bit("enableJobEnqueued");
    /// `enableJobStarving`.
    pub const ENABLE_JOB_STARVING: u32 = bit("enableJobStarving");
    /// `enablePreemptable`.
    pub const ENABLE_PREEMPTABLE: u32 = bit("enablePreemptable");
    /// `enableReclaimable`.
    pub const ENABLE_RECLAIMABLE: u32 = bit("enableReclaimable");
    /// `enablePreemptive`.
    pub const ENABLE_PREEMPTIVE: u32 = bit("enablePreemptive");
    /// `enablePredicate`.
    pub const ENABLE_PREDICATE: u32 = bit("enablePredicate");
    /// `enableNodeOrder`.
    pub const ENABLE_NODE_ORDER: u32 = bit("enableNodeOrder");
    /// `enableBestNode`.
    pub const ENABLE_BEST_NODE: u32 = bit("enableBestNode");
    /// `enableTargetJob`.
    pub const ENABLE_TARGET_JOB: u32 = bit("enableTargetJob");
    /// `enableReservedNodes`.
    pub const ENABLE_RESERVED_NODES: u32 = bit("enableReservedNodes");
    /// `enabledVictim`.
    pub const ENABLED_VICTIM: u32 = bit("enabledVictim");
    /// `enabledOverused`.
    pub const ENABLED_OVERUSED: u32 = bit("enabledOverused");
    /// `enabledAllocatable`.
    pub const ENABLED_ALLOCATABLE: u32 = bit("enabledAllocatable");
    /// `enabledHyperNodeOrder`.
    pub const ENABLED_HYPER_NODE_ORDER: u32 = bit("enabledHyperNodeOrder");
    /// `enabledHyperNodeGradient`.
    pub const ENABLED_HYPER_NODE_GRADIENT: u32 = bit("enabledHyperNodeGradient");
    /// `enabledSubJobReady`.
    pub const ENABLED_SUB_JOB_READY: u32 = bit("enabledSubJobReady");
    /// `enabledSubJobPipelined`.
    pub const ENABLED_SUB_JOB_PIPELINED: u32 = bit("enabledSubJobPipelined");
    /// `enabledSubJobOrder`.
    pub const ENABLED_SUB_JOB_ORDER: u32 = bit("enabledSubJobOrder");
    /// `enableHierarchy`.
    pub const ENABLE_HIERARCHY: u32 = bit("enableHierarchy");
    /// Extension points without a flag.
    pub const ALWAYS: u32 = 31;
    const _: () = assert!(FLAGS.len() <= ALWAYS as usize);
}
