//! The engine's settings.

use crate::util::time::{SimDuration, SimTime};

/// Engine settings.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Scenario seed.
    pub seed: u64,
    /// Stop time; `None`: run until no event is left.
    pub horizon: Option<SimTime>,
    /// With a period, sessions run at multiples of it (Volcano's loop); without,
    /// right after the events that need one.
    pub schedule_period: Option<SimDuration>,
    /// Spacing of timeseries samples.
    pub sample_interval: SimDuration,
    /// Operators' actions during the run (`spec.timeline`), in time order.
    pub timeline: Vec<crate::timeline::Step>,
    /// Services (`spec.services`): bound to their workloads as they arrive.
    pub services: Vec<std::sync::Arc<crate::serving::ServiceSpec>>,
    /// Some job of the workload has an autoscaler (with `services`, whether
    /// the run has services: its outputs say so up front).
    pub autoscaled: bool,
    /// The HorizontalPodAutoscaler controller's settings.
    pub hpa: crate::serving::hpa::HpaConfig,
    /// Nodes declared but not in the cluster at the start (`absent: true`):
    /// out of service, holding nothing, until a timeline step adds them.
    pub absent_nodes: Vec<crate::model::ids::NodeId>,
    /// Stop after this many sessions.
    pub max_sessions: Option<u64>,
    /// Sessions walk everything, as Volcano does, instead of skipping work that
    /// provably cannot change a decision (the reference for equivalence tests).
    pub exhaustive: bool,
    /// Makes one of the session skips deliberately wrong, so that tests can show
    /// the equivalence check catches a wrong skip. Never set outside tests.
    #[doc(hidden)]
    pub wrong_skip_for_tests: bool,
    /// Makes cached node scores (and numa-aware's kept verdicts, and the
    /// queues the `tiresias` baseline keeps per job) never expire, so that tests
    /// can show the equivalence check catches a stale one. Never set outside
    /// tests.
    #[doc(hidden)]
    pub stale_scores_for_tests: bool,
    /// Makes the fast count of free slots ([`crate::session::Session::slots_up_to`]) miss a node,
    /// so that tests can show the equivalence check catches it. Never set outside
    /// tests.
    #[doc(hidden)]
    pub wrong_slots_for_tests: bool,
    /// Makes the out-of-reach rule's fast path (from a job's facts) count one pod
    /// short, so that tests can show the equivalence check catches it.
    /// Never set outside tests.
    #[doc(hidden)]
    pub wrong_reach_for_tests: bool,
    /// Check the World's aggregates against a recomputation from its pods after
    /// every instant (its events, controllers and sessions), panicking at the
    /// first inconsistency ([`crate::world::World::check_invariants`]). On in debug
    /// builds; tests turn it on in release.
    pub check_invariants: bool,
    /// Keys the out-of-reach rule's memo of the last job's facts without the
    /// queue and priority, so that tests can show the equivalence check catches
    /// it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_memo_for_tests: bool,
    /// Lets preempt drop a starving job when its first pending pod may not
    /// preempt (nominated elsewhere), without asking its other pods, so that
    /// tests can show the equivalence check catches it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_nomination_for_tests: bool,
    /// Lets preempt's memo of barred jobs ignore the jobs' revisions (a job
    /// once found barred stays so), so that tests can show the equivalence
    /// check catches it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_barred_for_tests: bool,
    /// Lets allocate end a job's step as finding no room when no node's
    /// future-idle room holds twice a task's request, so that tests can show
    /// the equivalence check catches it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_room_skip_for_tests: bool,
    /// Lets the priority plugin's job-order key from a waiting job's facts
    /// put lower priorities first, so that tests can show the equivalence
    /// check catches a fact key that differs from the job's own. Never set
    /// outside tests.
    #[doc(hidden)]
    pub wrong_fact_keys_for_tests: bool,
    /// Stops the World's log of admitted jobs noting revisions, so preempt's
    /// walk of the jobs it has not found barred misses a barred job whose pods
    /// changed, and tests can show the equivalence check catches it. Never set
    /// outside tests.
    #[doc(hidden)]
    pub wrong_admitted_log_for_tests: bool,
    /// Lets allocate drop a queue's list of jobs when one job that could
    /// still place pods is left in it, so that tests can show the equivalence
    /// check catches it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_idle_line_for_tests: bool,
    /// Lets preempt's walk that asks each node's victims as it reaches the
    /// node go in node order instead of best-scored first, so that tests can
    /// show the equivalence check catches it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_lazy_victims_for_tests: bool,
    /// Lets allocate take a batch of a queue's jobs out of its unordered
    /// tail in the order a selection leaves them, unsorted, so that tests can
    /// show the equivalence check catches it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_tail_order_for_tests: bool,
    /// Lets allocate merge its groups of jobs taken in whole by their keys
    /// without their PodGroups' creation, so that tests can show the
    /// equivalence check catches it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_run_merge_for_tests: bool,
    /// Makes allocate take every admitted job one by one, never a group of
    /// jobs with the same facts in whole (tests of the per-job line). Never
    /// set outside tests.
    #[doc(hidden)]
    pub no_runs_for_tests: bool,
    /// Lets the World's groups of admitted jobs by facts go stale (a job stays
    /// in the group of its facts when it was listed; pod changes do not move
    /// it), so that tests can show the equivalence check catches it. Never set
    /// outside tests.
    #[doc(hidden)]
    pub wrong_group_for_tests: bool,
    /// Lets the queues' sums miss gates removed from pods (the deduction of a
    /// gated pod's request stays after its gates go), so that tests can show
    /// the equivalence check catches it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_gates_for_tests: bool,
    /// Lets the victim index of preempt and reclaim go stale (it stops reading
    /// the log of changed nodes), so that tests can show the equivalence check
    /// catches it. Never set outside tests.
    #[doc(hidden)]
    pub wrong_victim_index_for_tests: bool,
    /// Stops logging the nodes of a job whose pods change status, so preempt's
    /// carried failures miss changes of its victims' shares and ready counts,
    /// and tests can show the equivalence check catches it. Never set outside
    /// tests.
    #[doc(hidden)]
    pub wrong_carry_for_tests: bool,
    /// Makes the predicates' "passes everywhere" shortcut forget existing pods'
    /// anti-affinity, so that tests can show the equivalence check catches it.
    /// Never set outside tests.
    #[doc(hidden)]
    pub wrong_affinity_for_tests: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            seed: 0,
            horizon: None,
            schedule_period: None,
            sample_interval: SimDuration::from_secs(300),
            timeline: Vec::new(),
            services: Vec::new(),
            autoscaled: false,
            hpa: crate::serving::hpa::HpaConfig::default(),
            absent_nodes: Vec::new(),
            max_sessions: None,
            exhaustive: false,
            wrong_skip_for_tests: false,
            stale_scores_for_tests: false,
            wrong_slots_for_tests: false,
            wrong_reach_for_tests: false,
            check_invariants: cfg!(debug_assertions),
            wrong_memo_for_tests: false,
            wrong_nomination_for_tests: false,
            wrong_barred_for_tests: false,
            wrong_room_skip_for_tests: false,
            wrong_fact_keys_for_tests: false,
            wrong_admitted_log_for_tests: false,
            wrong_idle_line_for_tests: false,
            wrong_lazy_victims_for_tests: false,
            wrong_tail_order_for_tests: false,
            wrong_run_merge_for_tests: false,
            no_runs_for_tests: false,
            wrong_group_for_tests: false,
            wrong_gates_for_tests: false,
            wrong_victim_index_for_tests: false,
            wrong_carry_for_tests: false,
            wrong_affinity_for_tests: false,
        }
    }
}
