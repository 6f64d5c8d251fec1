//! Bugs planted on purpose for the equivalence tests: each makes one fast path or
//! index of the scheduler or the World wrong, so that a test can show the
//! `--exhaustive` comparison catches it (not to be confused with the fault
//! plan of a run, [`crate::faults`]). One set, owned by the engine's
//! configuration ([`crate::engine::EngineConfig::planted`]) and copied whole
//! into each session ([`crate::session::Session::planted`]). Never set outside
//! tests.

/// The planted bugs, all off by default (see the module).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlantedBugs {
    /// Makes one of the session skips deliberately wrong, so that tests can show
    /// the equivalence check catches a wrong skip. Never set outside tests.
    pub wrong_skip: bool,
    /// Makes cached node scores (and numa-aware's kept verdicts, and the
    /// queues the `tiresias` baseline keeps per job) never expire, so that tests
    /// can show the equivalence check catches a stale one. Never set outside
    /// tests.
    pub stale_scores: bool,
    /// Lets the proportion plugin keep its queues' deserved shares from the
    /// last session while the queues' specs and the cluster's total are the
    /// same, whatever their requests and activity, so that tests can show the
    /// equivalence check catches a stale water-filling. Never set outside
    /// tests.
    pub stale_proportion: bool,
    /// Makes the unfiled moves of a step certain to be discarded
    /// ([`crate::world::World::transition_unfiled`]) leave the nodes out too
    /// (their room, `used` and pods), so that tests can show that an unfiled
    /// move skipping what the step reads is caught. Never set outside tests.
    pub wrong_unfiled: bool,
    /// Makes the fast count of free slots ([`crate::session::Session::slots_up_to`]) miss a node,
    /// so that tests can show the equivalence check catches it. Never set outside
    /// tests.
    pub wrong_slots: bool,
    /// Makes the out-of-reach rule's fast path (from a job's facts) count one pod
    /// short, so that tests can show the equivalence check catches it.
    /// Never set outside tests.
    pub wrong_reach: bool,
    /// Keys the out-of-reach rule's memo of the last job's facts without the
    /// queue and priority, so that tests can show the equivalence check catches
    /// it. Never set outside tests.
    pub wrong_memo: bool,
    /// Lets preempt drop a starving job when its first pending pod may not
    /// preempt (nominated elsewhere), without asking its other pods, so that
    /// tests can show the equivalence check catches it. Never set outside tests.
    pub wrong_nomination: bool,
    /// Lets preempt's memo of barred jobs ignore the jobs' revisions (a job
    /// once found barred stays so), so that tests can show the equivalence
    /// check catches it. Never set outside tests.
    pub wrong_barred: bool,
    /// Lets allocate end a job's step as finding no room when no node's
    /// future-idle room holds twice a task's request, so that tests can show
    /// the equivalence check catches it. Never set outside tests.
    pub wrong_room_skip: bool,
    /// Lets the `tiresias` baseline's walk over the waiting jobs pass over,
    /// after a failed gang, the jobs of its request needing one pod fewer too
    /// (which its memo does not skip), so that tests can show the equivalence
    /// check catches it. Never set outside tests.
    pub wrong_walk: bool,
    /// Lets the `tiresias` baseline's claims try to bind only where twice
    /// their room is idle, so that tests can show the equivalence check
    /// catches a wrong check before a bind. Never set outside tests.
    pub wrong_bind_check: bool,
    /// Lets the baselines' memos of failed gangs (`tiresias`'s classes, the
    /// other gang baselines' misses by pod shape) take a job whose pods
    /// tolerate taints for one whose pods tolerate none (while the cluster has
    /// taints, a tolerating job may fit where they do not), so that tests can
    /// show the equivalence check catches it. Never set outside tests.
    pub wrong_class_tolerations: bool,
    /// Leaves a `tiresias` job whose claim bound at a session's start filed
    /// under the class it had before (its gang then whole, so without one), so
    /// that tests can show the equivalence check catches a walk passing it
    /// over. Never set outside tests.
    pub stale_claim_class: bool,
    /// Lets the priority plugin's job-order key from a waiting job's facts
    /// put lower priorities first, so that tests can show the equivalence
    /// check catches a fact key that differs from the job's own. Never set
    /// outside tests.
    pub wrong_fact_keys: bool,
    /// Stops the World's log of admitted jobs noting revisions, so preempt's
    /// walk of the jobs it has not found barred misses a barred job whose pods
    /// changed, and tests can show the equivalence check catches it. Never set
    /// outside tests.
    pub wrong_admitted_log: bool,
    /// Lets allocate drop a queue's list of jobs when one job that could
    /// still place pods is left in it, so that tests can show the equivalence
    /// check catches it. Never set outside tests.
    pub wrong_idle_line: bool,
    /// Lets the `tiresias` baseline's per-node room, kept between sessions,
    /// miss the nodes whose pods moved (only its own placements and the jobs
    /// whose queue changed are brought up to date), so that tests can show the
    /// equivalence check catches a stale room. Never set outside tests.
    pub stale_room: bool,
    /// Lets preempt's walk that asks each node's victims as it reaches the
    /// node go in node order instead of best-scored first, so that tests can
    /// show the equivalence check catches it. Never set outside tests.
    pub wrong_lazy_victims: bool,
    /// Lets drf's rule on victim groups for one search refuse every group, as
    /// it refuses lone pods' (whose jobs hold nothing once they are taken), so
    /// that tests can show the equivalence check catches it. Never set outside
    /// tests.
    pub wrong_victim_verdict: bool,
    /// Lets preempt skip every search whose inputs failed before, without
    /// asking what changed since, so that tests can show the equivalence check
    /// catches it. Never set outside tests.
    pub wrong_fruitless: bool,
    /// Lets preempt's carried failure, kept when a later search with the same
    /// inputs succeeds, take the nodes that success changed as looked at, so
    /// that tests can show the equivalence check catches it. Never set outside
    /// tests.
    pub wrong_kept_failure: bool,
    /// Lets preempt keep a fruitless job out of its walk without asking which
    /// nodes changed since its searches failed, so that tests can show the
    /// equivalence check catches it. Never set outside tests.
    pub wrong_fruitless_job: bool,
    /// Lets preempt's deferred fruitless jobs stay out of the action after its
    /// first commit (they are known to fail only in the state before it), so
    /// that tests can show the equivalence check catches it. Never set outside
    /// tests.
    pub wrong_deferral: bool,
    /// Lets preempt take a deferred job's class as still fruitless after a
    /// commit of the action, without asking its verdict again in the state
    /// the commit left, so that tests can show the equivalence check catches
    /// it. Never set outside tests.
    pub stale_late_verdict: bool,
    /// Lets preempt's and reclaim's out-of-reach rule keep its answers on
    /// victims per (queue, job priority) across sessions whatever the victim
    /// groups, so that tests can show the equivalence check catches it. Never
    /// set outside tests.
    pub stale_victim_pairs: bool,
    /// Lets the out-of-reach rule keep its answers on victims across sessions
    /// whatever the plugins' group rules read besides the groups (reclaim:
    /// the queues above their deserved share), so that tests can show the
    /// equivalence check catches it. Never set outside tests.
    pub stale_pair_stamp: bool,
    /// Lets allocate take a batch of a queue's jobs out of its unordered
    /// tail in the order a selection leaves them, unsorted, so that tests can
    /// show the equivalence check catches it. Never set outside tests.
    pub wrong_tail_order: bool,
    /// Lets allocate merge its groups of jobs taken in whole by their keys
    /// without their PodGroups' creation, so that tests can show the
    /// equivalence check catches it. Never set outside tests.
    pub wrong_run_merge: bool,
    /// Makes allocate take every admitted job one by one, never a group of
    /// jobs with the same facts in whole (tests of the per-job line). Never
    /// set outside tests.
    pub no_runs: bool,
    /// Lets allocate take the jobs of a group created at the same instant in
    /// id order instead of by namespace and name, so that tests can show the
    /// equivalence check catches it. Never set outside tests.
    pub wrong_run_ties: bool,
    /// Lets the World's groups of admitted jobs by facts go stale (a job stays
    /// in the group of its facts when it was listed; pod changes do not move
    /// it), so that tests can show the equivalence check catches it. Never set
    /// outside tests.
    pub wrong_group: bool,
    /// Lets the queues' sums miss gates removed from pods (the deduction of a
    /// gated pod's request stays after its gates go), so that tests can show
    /// the equivalence check catches it. Never set outside tests.
    pub wrong_gates: bool,
    /// Lets the victim index of preempt and reclaim go stale (it stops reading
    /// the log of changed nodes), so that tests can show the equivalence check
    /// catches it. Never set outside tests.
    pub wrong_victim_index: bool,
    /// Stops logging the nodes of a job whose pods change status (or whose
    /// pods move to another victim group), so preempt's carried failures miss
    /// changes of its victims' shares and ready counts, and tests can show the
    /// equivalence check catches it. Never set outside
    /// tests.
    pub wrong_carry: bool,
    /// Makes the predicates' "passes everywhere" shortcut forget existing pods'
    /// anti-affinity, so that tests can show the equivalence check catches it.
    /// Never set outside tests.
    pub wrong_affinity: bool,
    /// Makes allocate's quota rule ([`PlantedBugs::audit_quota_short`]) count
    /// one pod more than a gang's minAvailable, so that tests can show the
    /// audit catches a rule that skips a step which could succeed. Never set
    /// outside tests.
    pub wrong_quota_count: bool,
    /// Makes preempt's and reclaim's digest of the waiting groups
    /// ([`crate::world::Digest`]) ask, per request, for the group furthest
    /// short of minAvailable instead of the nearest, so that tests can show the
    /// equivalence check catches a digest that sets aside a group which could
    /// reach it. Never set outside tests.
    pub wrong_digest: bool,
    /// Not a bug: runs each allocate step the queue's-quota rule would skip and
    /// panics if it ends ready or pipelined (the rule's claim that such a step
    /// could only be discarded), then goes on as the step's outcome says. Never
    /// set outside tests.
    pub audit_quota_short: bool,
    /// Lets allocate's lone-node skip ([`PlantedBugs::audit_lone_node`]) leave
    /// the node search's start where it was, not past the node, so that tests
    /// can show the equivalence check and the audit catch a skip whose trace
    /// is not the step's. Never set outside tests.
    pub wrong_lone_node: bool,
    /// Not a bug: runs each allocate step the lone-node skip would skip and
    /// panics unless it is discarded, leaves the search start where the skip
    /// puts it and draws nothing from the session's stream (the skip's claim
    /// that the session is then as the step would leave it). Never set outside
    /// tests.
    pub audit_lone_node: bool,
    /// Leaves the World's journals of changed jobs running when a conf edit
    /// hands the run to another scheduler ([`crate::world::World::restart_journals`]),
    /// so that tests can show the equivalence check catches a scheduler that
    /// takes over with a view of only the last changes. Never set outside tests.
    pub kept_journals: bool,
}
