//! Scenario-level tests of every Volcano action and plugin (issue 3): a small explicit
//! cluster, jobs with submit times and durations, an inline `volcano-scheduler.conf`,
//! several sessions over time, and exact expected bindings, evictions and times read
//! from `pods.csv`, `jobs.csv` and `decisions.csv`. Each expected value is computed by
//! hand from Volcano's semantics (shared/reference/volcano-semantics.md); the doc
//! comment of each test gives the computation. Sessions run after every event (no
//! `schedulePeriod`), committed binds start at once, evicted pods hold their node for
//! the 30 s grace period unless a job says otherwise.

use super::volcano::{Out, run_text};

/// A scenario under construction.
struct Sc {
    nodes: Vec<String>,
    hyper: Vec<String>,
    queues: Vec<String>,
    conf: String,
    jobs: Vec<String>,
    classes: Vec<String>,
}

fn sc(nodes: &[&str]) -> Sc {
    Sc {
        nodes: nodes.iter().map(|s| s.to_string()).collect(),
        hyper: vec![],
        queues: vec!["{name: default}".into()],
        conf: String::new(),
        jobs: vec![],
        classes: vec![],
    }
}

impl Sc {
    fn queues(mut self, q: &[&str]) -> Self {
        self.queues = q.iter().map(|s| s.to_string()).collect();
        self
    }
    fn hyper(mut self, h: &[&str]) -> Self {
        self.hyper = h.iter().map(|s| s.to_string()).collect();
        self
    }
    /// An inline conf: `actions` and tiers, each plugin a name or a flow mapping.
    fn conf(mut self, actions: &str, tiers: &[&[&str]]) -> Self {
        let mut s = format!("      actions: \"{actions}\"\n      tiers:\n");
        for t in tiers {
            s += "      - plugins:\n";
            for p in *t {
                if p.starts_with('{') {
                    s += &format!("        - {p}\n");
                } else {
                    s += &format!("        - name: {p}\n");
                }
            }
        }
        self.conf = s;
        self
    }
    /// `spec.priorityClasses` entries.
    fn classes(mut self, c: &[&str]) -> Self {
        self.classes = c.iter().map(|s| s.to_string()).collect();
        self
    }
    fn jobs(mut self, j: &[String]) -> Self {
        self.jobs = j.to_vec();
        self
    }
    fn text(&self) -> String {
        let mut s = String::from(
            "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  cluster:\n    nodes:\n",
        );
        for n in &self.nodes {
            s += &format!("      - {n}\n");
        }
        if !self.hyper.is_empty() {
            s += "    hyperNodes:\n";
            for h in &self.hyper {
                s += &format!("      - {h}\n");
            }
        }
        if !self.classes.is_empty() {
            s += "  priorityClasses:\n";
            for c in &self.classes {
                s += &format!("    - {c}\n");
            }
        }
        s += "  queues:\n";
        for q in &self.queues {
            s += &format!("    - {q}\n");
        }
        s += &format!("  scheduler:\n    inline: |\n{}", self.conf);
        s += "  workload:\n    - jobs:\n";
        for j in &self.jobs {
            s += &format!("      - {j}\n");
        }
        s
    }
    fn run(&self) -> Out {
        run_text(&self.text())
    }
}

/// A one-task job: `attrs` are the job's fields (duration, submitAt, ...), the task
/// `w` has `replicas` pods requesting `res`.
fn jb(name: &str, attrs: &str, replicas: u32, res: &str) -> String {
    format!("{{name: {name}, {attrs}, tasks: [{{name: w, replicas: {replicas}, resources: {{{res}}}}}]}}")
}

/// Every pods.csv row as `job-task-index node start-end reason_end`, sorted.
fn pods(o: &Out) -> Vec<String> {
    let mut v: Vec<String> = o
        .pods
        .iter()
        .map(|p| {
            format!(
                "{}-{}-{} {} {}-{} {}",
                p["job"], p["task"], p["index"], p["node"], p["start_s"], p["end_s"], p["reason_end"]
            )
        })
        .collect();
    v.sort();
    v
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// One jobs.csv field.
fn jf(o: &Out, job: &str, field: &str) -> String {
    o.job(job)[field].clone()
}

/// `t pod` of every decision of `kind`, in decision order.
fn at(o: &Out, kind: &str) -> Vec<String> {
    o.of(kind).iter().map(|d| format!("{} {}", d["t_s"], d["pod"])).collect()
}

/// `t job` of every `phase` decision that set `phase`.
fn phase_at(o: &Out, phase: &str) -> Vec<String> {
    o.of("phase").iter().filter(|d| d["phase"] == phase).map(|d| format!("{} {}", d["t_s"], d["job"])).collect()
}

/// Rows of `job` in pods.csv ending with `reason`.
fn ended(o: &Out, job: &str, reason: &str) -> usize {
    o.pods_of(job).iter().filter(|p| p["reason_end"] == reason).count()
}

fn map(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

const T1: &[&str] = &["priority", "gang", "conformance"];
/// The helm chart's tier 1: gang does not filter victims.
const T1H: &[&str] = &["priority", "{name: gang, enablePreemptable: false}", "conformance"];
/// Tier 2 without proportion (its enqueue vote would count the queue's whole allocation).
const T2: &[&str] = &["drf", "predicates", "nodeorder"];
const T2P: &[&str] = &["drf", "predicates", "proportion", "nodeorder"];
const N4: &str = "{name: n1, cpu: 4, memory: 16Gi}";

// ---------------------------------------------------------------------------
// enqueue

/// enqueue + proportion: q1 guarantees 3 of the 4 cpus, so q2's realCapability is
/// 4 − 3 = 1 cpu: b's minResources (2 cpus) never pass, while c (1 cpu, t=10) is
/// admitted and runs 10–60 beside a (q1, 0–100). b never starts, even after a ends.
#[test]
fn enqueue_rejects_min_resources_over_real_capability_left_by_guarantees() {
    let o = sc(&[N4])
        .queues(&["{name: q1, guarantee: {cpu: 3}}", "{name: q2}"])
        .conf("enqueue, allocate", &[T1, T2P])
        .jobs(&[
            jb("a", "queue: q1, duration: 100s", 1, "cpu: 1"),
            jb("b", "queue: q2, duration: 100s", 2, "cpu: 1"),
            jb("c", "queue: q2, submitAt: 10s, duration: 50s", 1, "cpu: 1"),
        ])
        .run();
    assert_eq!(pods(&o), sorted(&["a-w-0 n1 0-100 completed", "c-w-0 n1 10-60 completed"]));
    assert_eq!(jf(&o, "b", "start_s"), "");
    assert!(!phase_at(&o, "Inqueue").iter().any(|s| s.ends_with(" b")), "{:?}", o.phases());
}

/// enqueue + capacity + overcommit (factor 1.0, headroom 4 cpus): queue qhi
/// (priority 10) is served first, so b (qhi, 4 cpus) is admitted at t=0 and a (qlo,
/// listed first) is rejected until b ends at 100.
#[test]
fn enqueue_admits_queue_by_queue_in_queue_priority_order() {
    let o = sc(&[N4])
        .queues(&["{name: qlo}", "{name: qhi, priority: 10}"])
        .conf(
            "enqueue, allocate",
            &[
                T1,
                &[
                    "{name: overcommit, arguments: {overcommit-factor: 1.0}}",
                    "drf",
                    "predicates",
                    "capacity",
                    "nodeorder",
                ],
            ],
        )
        .jobs(&[jb("a", "queue: qlo, duration: 100s", 4, "cpu: 1"), jb("b", "queue: qhi, duration: 100s", 4, "cpu: 1")])
        .run();
    assert_eq!(phase_at(&o, "Inqueue"), strs(&["0 b", "100 a"]));
    assert_eq!((jf(&o, "b", "start_s"), jf(&o, "a", "start_s")), ("0".into(), "100".into()));
}

/// enqueue + capacity: q1's capability (2 cpus) is below big's minResources (3 cpus),
/// so big is never admitted, while small (2 cpus, t=10) in the same queue is admitted
/// and runs 10–110 on the otherwise empty node.
#[test]
fn enqueue_capacity_rejects_min_resources_over_capability() {
    let o = sc(&[N4])
        .queues(&["{name: q1, capability: {cpu: 2}}"])
        .conf("enqueue, allocate", &[T1, T2C])
        .jobs(&[
            jb("big", "queue: q1, duration: 100s", 3, "cpu: 1"),
            jb("small", "queue: q1, submitAt: 10s, duration: 100s", 2, "cpu: 1"),
        ])
        .run();
    assert_eq!(phase_at(&o, "Inqueue"), strs(&["10 small"]));
    assert_eq!(pods(&o), sorted(&["small-w-0 n1 10-110 completed", "small-w-1 n1 10-110 completed"]));
    assert_eq!(jf(&o, "big", "state"), "Pending");
}

/// A cluster with a hole: r (6 of 8 cpus, 0–100), big (2 × 2 cpus, t=10), small
/// (2 cpus, t=20, 30 s). With overcommit factor f the headroom is 8·f − 6 minus the
/// minResources of Inqueue groups.
fn overcommit_hole(actions: &str, factor: &str) -> Out {
    let oc = format!("{{name: overcommit, arguments: {{overcommit-factor: {factor}}}}}");
    sc(&["{name: n1, cpu: 8, memory: 32Gi}"])
        .conf(actions, &[T1, &[oc.as_str(), "drf", "predicates", "nodeorder"]])
        .jobs(&[
            jb("r", "duration: 100s", 1, "cpu: 6"),
            jb("big", "submitAt: 10s, duration: 100s", 2, "cpu: 2"),
            jb("small", "submitAt: 20s, duration: 30s", 1, "cpu: 2"),
        ])
        .run()
}

/// Without an enqueue action allocate admits every job itself: overcommit's factor
/// 1.25 (which keeps small Pending, see the overcommit tests) has no effect and small
/// runs in the hole at t=20.
#[test]
fn enqueue_action_absent_allocate_admits_every_job() {
    let o = overcommit_hole("allocate", "1.25");
    assert_eq!(jf(&o, "small", "start_s"), "20");
    assert_eq!(jf(&o, "big", "start_s"), "100");
}

// ---------------------------------------------------------------------------
// overcommit

/// Factor 1.0: at t=10 big needs 4 > 8 − 6 = 2 and stays Pending, so at t=20 small
/// (2 ≤ 2) is admitted and runs 20–50; big runs 100–200. Factor 1.25: big is admitted
/// (4 ≤ 10 − 6) although it cannot be placed, and its reservation rejects small
/// (4 + 2 > 4) until r ends; at t=100 both start.
#[test]
fn overcommit_inqueue_reservation_blocks_a_job_that_would_fit() {
    let o = overcommit_hole("enqueue, allocate", "1.0");
    assert_eq!(
        pods(&o),
        sorted(&[
            "r-w-0 n1 0-100 completed",
            "small-w-0 n1 20-50 completed",
            "big-w-0 n1 100-200 completed",
            "big-w-1 n1 100-200 completed"
        ])
    );
    let o = overcommit_hole("enqueue, allocate", "1.25");
    assert_eq!(phase_at(&o, "Inqueue"), strs(&["0 r", "10 big", "100 small"]));
    assert_eq!(
        pods(&o),
        sorted(&[
            "r-w-0 n1 0-100 completed",
            "small-w-0 n1 100-130 completed",
            "big-w-0 n1 100-200 completed",
            "big-w-1 n1 100-200 completed"
        ])
    );
}

fn overcommit_ten(tier2_first: &str) -> Out {
    sc(&["{name: n1, cpu: 10, memory: 32Gi}"])
        .conf("enqueue, allocate", &[T1, &[tier2_first, "drf", "predicates", "nodeorder"]])
        .jobs(&[
            jb("r", "duration: 100s", 1, "cpu: 8"),
            jb("big", "submitAt: 10s, duration: 100s", 2, "cpu: 2"),
            jb("small", "submitAt: 20s, duration: 30s", 1, "cpu: 1"),
        ])
        .run()
}

/// Default factor 1.2 on 10 cpus with 8 used: headroom 12 − 8 = 4 admits big (4) at
/// t=10; small (1 more) is rejected and both start when r ends at 100.
#[test]
fn overcommit_default_factor_is_1_2() {
    let o = overcommit_ten("overcommit");
    assert_eq!(phase_at(&o, "Inqueue"), strs(&["0 r", "10 big", "100 small"]));
    assert_eq!((jf(&o, "big", "start_s"), jf(&o, "small", "start_s")), ("100".into(), "100".into()));
}

/// A factor below 1 falls back to 1.2 (same decisions as the default); factor 1.0
/// leaves headroom 2 < 4, so big waits Pending and small (1 ≤ 2) runs at t=20.
#[test]
fn overcommit_factor_below_one_falls_back_to_default() {
    let o = overcommit_ten("{name: overcommit, arguments: {overcommit-factor: 0.5}}");
    assert_eq!(phase_at(&o, "Inqueue"), strs(&["0 r", "10 big", "100 small"]));
    assert_eq!(jf(&o, "small", "start_s"), "100");
    let o = overcommit_ten("{name: overcommit, arguments: {overcommit-factor: 1.0}}");
    assert_eq!(phase_at(&o, "Inqueue"), strs(&["0 r", "20 small", "100 big"]));
    assert_eq!(jf(&o, "small", "start_s"), "20");
}

// ---------------------------------------------------------------------------
// allocate

/// A gang of 2 (t=5) with 1 free cpu binds nothing (no partial placement); the
/// 1-cpu job s (t=10) uses the hole; the gang starts whole when r ends at 100.
#[test]
fn allocate_gang_never_partially_bound_while_a_small_job_uses_the_hole() {
    let o = sc(&[N4])
        .conf("enqueue, allocate", &[T1, T2])
        .jobs(&[
            jb("r", "duration: 100s", 1, "cpu: 3"),
            jb("g", "submitAt: 5s, duration: 100s", 2, "cpu: 1"),
            jb("s", "submitAt: 10s, duration: 500s", 1, "cpu: 1"),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&[
            "r-w-0 n1 0-100 completed",
            "g-w-0 n1 100-200 completed",
            "g-w-1 n1 100-200 completed",
            "s-w-0 n1 10-510 completed"
        ])
    );
}

/// proportion: qa and qb (weight 1) each deserve 2 of 4 cpus; jobs with minAvailable 1
/// are ready after one pod, so each step places one pod and the queues alternate by
/// share (ties: qa, defined first): a0, b0, a1, b1; then both queues are at deserved.
#[test]
fn allocate_interleaves_queues_one_task_per_step() {
    let o = sc(&[N4])
        .queues(&["{name: qa}", "{name: qb}"])
        .conf("enqueue, allocate", &[T1, T2P])
        .jobs(&[
            jb("a", "queue: qa, minAvailable: 1, duration: 100s", 4, "cpu: 1"),
            jb("b", "queue: qb, minAvailable: 1, duration: 100s", 4, "cpu: 1"),
        ])
        .run();
    assert_eq!(o.bind_order(), strs(&["default/a-w-0", "default/b-w-0", "default/a-w-1", "default/b-w-1"]));
    assert_eq!(o.pods.len(), 4);
}

/// A gang step places pods up to minAvailable (2) at once, later steps one pod each:
/// a0 a1 | b0 b1 | a2 | b2 | a3 | b3 (queues deserve 4 of 8 cpus each).
#[test]
fn allocate_gang_step_then_one_extra_task_per_step() {
    let o = sc(&["{name: n1, cpu: 8, memory: 16Gi}"])
        .queues(&["{name: qa}", "{name: qb}"])
        .conf("enqueue, allocate", &[T1, T2P])
        .jobs(&[
            jb("a", "queue: qa, minAvailable: 2, duration: 100s", 4, "cpu: 1"),
            jb("b", "queue: qb, minAvailable: 2, duration: 100s", 4, "cpu: 1"),
        ])
        .run();
    let names = ["a-w-0", "a-w-1", "b-w-0", "b-w-1", "a-w-2", "b-w-2", "a-w-3", "b-w-3"];
    assert_eq!(o.bind_order(), names.iter().map(|n| format!("default/{n}")).collect::<Vec<_>>());
}

// ---------------------------------------------------------------------------
// backfill

/// A BestEffort pod (no requests) is left alone by allocate and bound by backfill.
#[test]
fn backfill_binds_best_effort_pods_that_allocate_skips() {
    let run = |actions: &str| {
        sc(&[N4])
            .conf(actions, &[T1, T2])
            .jobs(&["{name: be, duration: 100s, tasks: [{name: w, replicas: 1}]}".into()])
            .run()
    };
    let o = run("enqueue, allocate");
    assert!(o.pods.is_empty(), "{:?}", pods(&o));
    let o = run("enqueue, allocate, backfill");
    assert_eq!(pods(&o), sorted(&["be-w-0 n1 0-100 completed"]));
    assert_eq!(o.of("bind")[0]["action"], "backfill");
}

/// BestEffort pods still take a pod slot: on a 3-slot node with r running, two of be's
/// pods bind at 0, the third when r's slot frees at 100; be (minAvailable 1) ends at
/// 200 and its fourth pod never runs.
#[test]
fn backfill_best_effort_pods_limited_by_pod_slots() {
    let o = sc(&["{name: n1, cpu: 1, memory: 16Gi, pods: 3}"])
        .conf("enqueue, allocate, backfill", &[T1, T2])
        .jobs(&[
            jb("r", "duration: 100s", 1, "cpu: 1"),
            "{name: be, minAvailable: 1, duration: 200s, tasks: [{name: w, replicas: 4}]}".into(),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&[
            "r-w-0 n1 0-100 completed",
            "be-w-0 n1 0-200 completed",
            "be-w-1 n1 0-200 completed",
            "be-w-2 n1 100-200 completed"
        ])
    );
}

/// backfill takes jobs in job order: with one pod slot the priority-10 BestEffort job
/// runs first (0–100), the priority-1 one after (100–200).
#[test]
fn backfill_orders_jobs_by_priority() {
    let o = sc(&["{name: n1, cpu: 1, memory: 16Gi, pods: 1}"])
        .conf("enqueue, allocate, backfill", &[T1, T2])
        .jobs(&[
            "{name: lo, priority: 1, duration: 100s, tasks: [{name: w, replicas: 1}]}".into(),
            "{name: hi, priority: 10, duration: 100s, tasks: [{name: w, replicas: 1}]}".into(),
        ])
        .run();
    assert_eq!(pods(&o), sorted(&["hi-w-0 n1 0-100 completed", "lo-w-0 n1 100-200 completed"]));
}

// ---------------------------------------------------------------------------
// preempt

const PREEMPT: &str = "enqueue, allocate, preempt";

/// high (priority 10, t=50) finds n1 full; priority's victims are lo1 (1) and lo2 (5),
/// the lower-priority job goes first: lo1 is evicted at 50, high is pipelined and
/// binds when lo1's pod is released (50 + 30 s grace = 80). lo1's pod is recreated and
/// waits (no victim has lower priority) until high ends at 180. lo1 had checkpointed
/// at 40, so 10 s of its 1-GPU work are lost: it ends at 180 + 1000 − 40 = 1140.
#[test]
fn preempt_evicts_lowest_priority_job_and_it_resumes_from_checkpoint() {
    let res = "cpu: 1, nvidia.com/gpu: 1";
    let o = sc(&["{name: n1, cpu: 2, memory: 16Gi, gpus: 2}"])
        .conf(PREEMPT, &[T1H, T2])
        .jobs(&[
            jb("lo1", "priority: 1, duration: 1000s, checkpointInterval: 20s", 1, res),
            jb("lo2", "priority: 5, duration: 1000s", 1, res),
            jb("high", "submitAt: 50s, priority: 10, duration: 100s", 1, res),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&[
            "lo1-w-0 n1 0-50 preempted",
            "lo1-w-0 n1 180-1140 completed",
            "lo2-w-0 n1 0-1000 completed",
            "high-w-0 n1 80-180 completed"
        ])
    );
    assert_eq!(at(&o, "evict"), strs(&["50 default/lo1-w-0"]));
    assert_eq!(o.of("evict")[0]["action"], "preempt");
    assert_eq!((jf(&o, "lo1", "preemptions"), jf(&o, "lo1", "lost_gpu_s")), ("1".into(), "10".into()));
    assert_eq!(jf(&o, "high", "wait_s"), "30");
}

/// preempt stays inside the preemptor's queue: high (q2) evicts lo-b (q2), never lo-a
/// (q1) although both have priority 1. lo-b (no checkpoint) restarts at 180 from zero.
#[test]
fn preempt_takes_victims_only_from_the_preemptors_queue() {
    let o = sc(&["{name: n1, cpu: 2, memory: 16Gi}"])
        .queues(&["{name: q1}", "{name: q2}"])
        .conf(PREEMPT, &[T1H, T2])
        .jobs(&[
            jb("lo-a", "queue: q1, priority: 1, duration: 1000s", 1, "cpu: 1"),
            jb("lo-b", "queue: q2, priority: 1, duration: 1000s", 1, "cpu: 1"),
            jb("high", "queue: q2, submitAt: 50s, priority: 10, duration: 100s", 1, "cpu: 1"),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&[
            "lo-a-w-0 n1 0-1000 completed",
            "lo-b-w-0 n1 0-50 preempted",
            "lo-b-w-0 n1 180-1180 completed",
            "high-w-0 n1 80-180 completed"
        ])
    );
}

/// A 2-cpu preemptor on a full 3-cpu node evicts victims in reverse job order (lowest
/// priority first) until it fits: lo1 then lo2, never lo3. After high (80–180) both
/// restart at 180, lo2 (higher priority) bound first.
#[test]
fn preempt_evicts_victims_lowest_priority_first_until_the_pod_fits() {
    let o = sc(&["{name: n1, cpu: 3, memory: 16Gi}"])
        .conf(PREEMPT, &[T1H, T2])
        .jobs(&[
            jb("lo1", "priority: 1, duration: 1000s", 1, "cpu: 1"),
            jb("lo2", "priority: 2, duration: 1000s", 1, "cpu: 1"),
            jb("lo3", "priority: 3, duration: 1000s", 1, "cpu: 1"),
            jb("high", "submitAt: 50s, priority: 10, duration: 100s", 1, "cpu: 2"),
        ])
        .run();
    assert_eq!(at(&o, "evict"), strs(&["50 default/lo1-w-0", "50 default/lo2-w-0"]));
    assert_eq!(
        at(&o, "bind")[3..].to_vec(),
        strs(&["80 default/high-w-0", "180 default/lo2-w-0", "180 default/lo1-w-0"])
    );
    assert_eq!(jf(&o, "lo3", "end_s"), "1000");
    assert_eq!((jf(&o, "lo1", "end_s"), jf(&o, "lo2", "end_s")), ("1180".into(), "1180".into()));
}

fn preempt_topology(topology: &str) -> Out {
    sc(&["{name: n1, cpu: 2, memory: 16Gi}"])
        .hyper(&["{name: s0, tier: 1, members: [n1]}"])
        .conf(PREEMPT, &[T1H, &["drf", "predicates", "nodeorder", "network-topology-aware"]])
        .jobs(&[
            jb("lo", "priority: 1, duration: 100s", 1, "cpu: 2"),
            jb("t", &format!("submitAt: 10s, priority: 10, duration: 50s{topology}"), 1, "cpu: 2"),
        ])
        .run()
}

/// A job with a network topology never preempts: t (hard, tier 1) waits for lo to end
/// at 100; the same job without topology evicts lo at 10 and starts at 40.
#[test]
fn preempt_network_topology_job_never_preempts() {
    let o = preempt_topology(", networkTopology: {mode: hard, highestTierAllowed: 1}");
    assert!(o.evictions().is_empty(), "{:?}", o.evictions());
    assert_eq!(jf(&o, "t", "start_s"), "100");
    let o = preempt_topology("");
    assert_eq!(at(&o, "evict"), strs(&["10 default/lo-w-0"]));
    assert_eq!(jf(&o, "t", "start_s"), "40");
}

/// Two one-cpu nodes, each full: lo1 (priority 1) on n1, lo2 (priority 5) on
/// n2, both in queue b. high (b, priority 10) arrives at 50: preempt evicts lo1
/// (n1 first on equal scores), pipelines high there and, as Volcano's
/// `TaskSchedulingReason` does after a pipeline with evictions, nominates it to
/// n1. At 60 mid (queue a, visited first by allocate, nothing of its own to
/// evict) is pipelined onto n1's releasing cpu, so high's nominated node no
/// longer fits it and no other node does. high may not preempt again: the
/// predicates accept it on n1 (`taskEligibleToPreempt`: "the nominated node is
/// already schedulable"), so lo2 is never touched. mid binds at 80 when lo1's
/// grace ends and runs 80–180; high binds on n1 at 180 and runs 180–280; lo1's
/// new pod waits for it and runs 280–1280. Without the rule, high evicts lo2 at
/// 60 as well.
fn nominated_preemptor(timeline: &str) -> Out {
    let text = sc(&["{name: n1, cpu: 1, memory: 16Gi}", "{name: n2, cpu: 1, memory: 16Gi}"])
        .queues(&["{name: a}", "{name: b}"])
        .conf(PREEMPT, &[T1H, T2])
        .jobs(&[
            jb("lo1", "queue: b, priority: 1, duration: 1000s", 1, "cpu: 1"),
            jb("lo2", "queue: b, priority: 5, duration: 1000s", 1, "cpu: 1"),
            jb("high", "queue: b, submitAt: 50s, priority: 10, duration: 100s", 1, "cpu: 1"),
            jb("mid", "queue: a, submitAt: 60s, duration: 100s", 1, "cpu: 1"),
        ])
        .text();
    run_text(&(text + timeline))
}

#[test]
fn preempt_a_nominated_pod_does_not_preempt_again() {
    let o = nominated_preemptor("");
    assert_eq!(at(&o, "evict"), strs(&["50 default/lo1-w-0"]));
    assert_eq!(
        pods(&o),
        sorted(&[
            "lo1-w-0 n1 0-50 preempted",
            "lo1-w-0 n1 280-1280 completed",
            "lo2-w-0 n2 0-1000 completed",
            "high-w-0 n1 180-280 completed",
            "mid-w-0 n1 80-180 completed"
        ])
    );
    assert_eq!(jf(&o, "high", "wait_s"), "130");
}

/// The same, with n1 cordoned at 55 (during lo1's grace): NodeUnschedulable is a
/// refusal evicting cannot resolve, so high, nominated to n1, is eligible again
/// and evicts lo2 at 55, is pipelined on n2 and now nominated to n2. At 60 mid
/// (queue a first) is pipelined onto n2's releasing cpu; high, barred again (n2
/// accepts it), waits. mid binds on n2 at 85 (85–185), high at 185 on its
/// nominated node; n1 stays cordoned.
#[test]
fn preempt_a_nominated_pod_whose_node_is_cordoned_may_preempt_again() {
    let o = nominated_preemptor("  timeline:\n    - {at: 55s, cordon: n1}\n");
    assert_eq!(at(&o, "evict"), strs(&["50 default/lo1-w-0", "55 default/lo2-w-0"]));
    assert_eq!((jf(&o, "mid", "start_s"), jf(&o, "high", "start_s")), ("85".into(), "185".into()));
    assert_eq!(o.pods_of("high")[0]["node"], "n2");
}

// ---------------------------------------------------------------------------
// reclaim

const RECLAIM: &str = "enqueue, allocate, reclaim";

/// late (q2, t=10) deserves 2 of 4 cpus but minAvailable is 1: after one reclaimed pod
/// it is pipelined, no longer starving (gang ∧ priority), and reclaim stops. late-w-0
/// runs 40–140; hog's evicted pod is recreated and rebinds at 140 (q1 alone again);
/// hog never fell below minAvailable, so it still ends at 1000.
#[test]
fn reclaim_stops_once_the_starving_job_reaches_min_available() {
    let o = sc(&[N4])
        .queues(&["{name: q1}", "{name: q2}"])
        .conf(RECLAIM, &[T1, T2P])
        .jobs(&[
            jb("hog", "queue: q1, minAvailable: 1, duration: 1000s", 4, "cpu: 1"),
            jb("late", "queue: q2, submitAt: 10s, minAvailable: 1, duration: 100s", 3, "cpu: 1"),
        ])
        .run();
    assert_eq!(o.evictions().len(), 1, "{:?}", pods(&o));
    assert_eq!(o.of("evict")[0]["action"], "reclaim");
    assert_eq!(
        pods(&o).iter().filter(|p| p.starts_with("late")).cloned().collect::<Vec<_>>(),
        strs(&["late-w-0 n1 40-140 completed"])
    );
    let hog = o.pods_of("hog");
    let reclaimed: Vec<_> = hog.iter().filter(|p| p["reason_end"] == "reclaimed").collect();
    assert_eq!(reclaimed.len(), 1);
    assert_eq!((reclaimed[0]["start_s"].as_str(), reclaimed[0]["end_s"].as_str()), ("0", "10"));
    let back: Vec<_> = hog.iter().filter(|p| p["start_s"] == "140").collect();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0]["index"], reclaimed[0]["index"]);
    assert_eq!(ended(&o, "hog", "completed"), 4);
    assert_eq!(jf(&o, "hog", "end_s"), "1000");
}

/// q2 (weight 3) deserves 3 of 4 cpus, less than late's gang of 4: reclaim pipelines
/// three pods (each passing `preemptive`), the fourth would exceed deserved, the job is
/// not pipelined and every tentative eviction is discarded. late starts when hog ends.
#[test]
fn reclaim_gang_larger_than_deserved_reclaims_nothing() {
    let o = sc(&[N4])
        .queues(&["{name: q1}", "{name: q2, weight: 3}"])
        .conf(RECLAIM, &[T1, T2P])
        .jobs(&[
            jb("hog", "queue: q1, minAvailable: 1, duration: 1000s", 4, "cpu: 1"),
            jb("late", "queue: q2, submitAt: 10s, duration: 100s", 4, "cpu: 1"),
        ])
        .run();
    assert!(o.evictions().is_empty(), "{:?}", pods(&o));
    assert_eq!(jf(&o, "late", "start_s"), "1000");
}

fn reclaim_three_queues(q1_reclaimable: bool) -> Out {
    let q1 = format!("{{name: q1, reclaimable: {q1_reclaimable}}}");
    sc(&[N4])
        .queues(&[q1.as_str(), "{name: q2}", "{name: q3, weight: 2}"])
        .conf(RECLAIM, &[T1, T2P])
        .jobs(&[
            jb("a", "queue: q1, minAvailable: 1, duration: 1000s", 2, "cpu: 1"),
            jb("b", "queue: q2, minAvailable: 1, duration: 1000s", 2, "cpu: 1"),
            jb("late", "queue: q3, submitAt: 10s, duration: 100s", 2, "cpu: 1"),
        ])
        .run()
}

/// Deserved at t=10: q1 1, q2 1, q3 (weight 2) 2 cpus. q1 and q2 each hold 2, so each
/// gives exactly one victim (its allocation drops to deserved): late's gang of 2 takes
/// one pod of a and one of b, runs 40–140, and a and b rebind at 140. With q1 not
/// reclaimable only b's pod is available, the gang is not pipelined, nothing is
/// evicted and late waits for a and b to end at 1000.
#[test]
fn reclaim_takes_down_to_deserved_from_each_reclaimable_queue() {
    let o = reclaim_three_queues(true);
    assert_eq!(o.evictions().len(), 2, "{:?}", pods(&o));
    assert_eq!((ended(&o, "a", "reclaimed"), ended(&o, "b", "reclaimed")), (1, 1));
    assert_eq!(jf(&o, "late", "start_s"), "40");
    assert_eq!(o.pods_of("a").iter().filter(|p| p["start_s"] == "140").count(), 1);
    assert_eq!(o.pods_of("b").iter().filter(|p| p["start_s"] == "140").count(), 1);
    let o = reclaim_three_queues(false);
    assert!(o.evictions().is_empty(), "{:?}", pods(&o));
    assert_eq!(jf(&o, "late", "start_s"), "1000");
}

/// Volcano's default layout breaks a gang in reclaim (see
/// gang_reclaim_protects_min_available_only_within_its_tier): hog (4 one-GPU pods,
/// minAvailable 3, checkpoint every 4 s) loses two pods at 10 in one session
/// (preemptions 1), stops, and throws away the 2 s since its checkpoint at 8 on its
/// 4 GPUs (8 GPU·s). late runs 40–140; hog's pods rebind at 140 and its remaining
/// 1000 − 8 = 992 s end it at 1132.
#[test]
fn reclaim_breaking_a_gang_loses_work_since_its_checkpoint() {
    let res = "cpu: 1, nvidia.com/gpu: 1";
    let o = sc(&["{name: n1, cpu: 4, memory: 16Gi, gpus: 4}"])
        .queues(&["{name: q1}", "{name: q2}"])
        .conf(RECLAIM, &[T1, T2P])
        .jobs(&[
            jb("hog", "queue: q1, minAvailable: 3, duration: 1000s, checkpointInterval: 4s", 4, res),
            jb("late", "queue: q2, submitAt: 10s, duration: 100s", 2, res),
        ])
        .run();
    assert_eq!(o.evictions().len(), 2, "{:?}", pods(&o));
    assert_eq!(o.pods_of("hog").iter().filter(|p| p["start_s"] == "140").count(), 2);
    assert_eq!((jf(&o, "late", "start_s"), jf(&o, "late", "end_s")), ("40".into(), "140".into()));
    assert_eq!(
        (jf(&o, "hog", "preemptions"), jf(&o, "hog", "lost_gpu_s"), jf(&o, "hog", "end_s")),
        ("1".into(), "8".into(), "1132".into())
    );
}

// ---------------------------------------------------------------------------
// priority

/// Job order: lo (priority 1, t=10) and hi (priority 10, t=20) wait for r; when r ends
/// at 100 hi goes first (100–200), lo after (200–300).
#[test]
fn priority_job_order_starts_higher_priority_first() {
    let o = sc(&["{name: n1, cpu: 1, memory: 16Gi}"])
        .conf("enqueue, allocate", &[T1, T2])
        .jobs(&[
            jb("r", "duration: 100s", 1, "cpu: 1"),
            jb("lo", "submitAt: 10s, priority: 1, duration: 100s", 1, "cpu: 1"),
            jb("hi", "submitAt: 20s, priority: 10, duration: 100s", 1, "cpu: 1"),
        ])
        .run();
    assert_eq!((jf(&o, "hi", "start_s"), jf(&o, "lo", "start_s")), ("100".into(), "200".into()));
}

/// Task order: with room for two of four pods, the two pods of the priority-10 task
/// bind (b0, b1); the priority-1 task's pods never run (the job ends with its gang).
#[test]
fn priority_task_order_binds_higher_priority_tasks_first() {
    let o = sc(&["{name: n1, cpu: 2, memory: 16Gi}"])
        .conf("enqueue, allocate", &[T1, T2])
        .jobs(&["{name: j, minAvailable: 2, duration: 100s, tasks: [{name: a, replicas: 2, priority: 1, resources: {cpu: 1}}, {name: b, replicas: 2, priority: 10, resources: {cpu: 1}}]}".into()])
        .run();
    assert_eq!(o.bind_order(), strs(&["default/j-b-0", "default/j-b-1"]));
    assert_eq!(o.pods.len(), 2);
}

fn priority_preempt(hi: u32) -> Out {
    sc(&["{name: n1, cpu: 1, memory: 16Gi}"])
        .conf(PREEMPT, &[T1H, &["{name: drf, enablePreemptable: false}", "predicates", "nodeorder"]])
        .jobs(&[
            jb("lo", "priority: 5, duration: 1000s", 1, "cpu: 1"),
            jb("hi", &format!("submitAt: 10s, priority: {hi}, duration: 100s"), 1, "cpu: 1"),
        ])
        .run()
}

/// priority's preemptable needs a strictly lower job priority: hi at priority 5 does
/// not evict lo (5) and waits until 1000; at priority 6 it evicts lo at 10 and runs
/// 40–140.
#[test]
fn priority_preemptable_needs_strictly_lower_job_priority() {
    let o = priority_preempt(5);
    assert!(o.evictions().is_empty());
    assert_eq!(jf(&o, "hi", "start_s"), "1000");
    let o = priority_preempt(6);
    assert_eq!(at(&o, "evict"), strs(&["10 default/lo-w-0"]));
    assert_eq!(jf(&o, "hi", "start_s"), "40");
}

// ---------------------------------------------------------------------------
// gang

/// minAvailable 2 of 4: with 2 free cpus the gang starts at 10 with two pods and
/// grows to four when r ends at 100; it runs from 10 to 1010.
#[test]
fn gang_min_available_below_replicas_starts_partial_and_grows() {
    let o = sc(&[N4])
        .conf("enqueue, allocate", &[T1, T2])
        .jobs(&[
            jb("r", "duration: 100s", 1, "cpu: 2"),
            jb("g", "submitAt: 10s, minAvailable: 2, duration: 1000s", 4, "cpu: 1"),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&[
            "r-w-0 n1 0-100 completed",
            "g-w-0 n1 10-1010 completed",
            "g-w-1 n1 10-1010 completed",
            "g-w-2 n1 100-1010 completed",
            "g-w-3 n1 100-1010 completed"
        ])
    );
}

/// gang's job order puts not-ready jobs first (no drf here): when r ends at 100, b
/// (t=10, not ready) gets the free cpu before the third pod of a (ready, older); a-w-2
/// binds when b ends at 200.
#[test]
fn gang_orders_not_ready_jobs_before_ready_ones() {
    let o = sc(&["{name: n1, cpu: 3, memory: 16Gi}"])
        .conf("enqueue, allocate", &[T1, &["predicates", "nodeorder"]])
        .jobs(&[
            jb("r", "duration: 100s", 1, "cpu: 1"),
            jb("a", "submitAt: 1s, minAvailable: 1, duration: 1000s", 3, "cpu: 1"),
            jb("b", "submitAt: 10s, duration: 100s", 1, "cpu: 1"),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&[
            "r-w-0 n1 0-100 completed",
            "a-w-0 n1 1-1001 completed",
            "a-w-1 n1 1-1001 completed",
            "a-w-2 n1 200-1001 completed",
            "b-w-0 n1 100-200 completed"
        ])
    );
}

fn gang_reclaim(tiers: &[&[&str]]) -> Out {
    sc(&[N4])
        .queues(&["{name: q1}", "{name: q2}"])
        .conf(RECLAIM, tiers)
        .jobs(&[
            jb("hog", "queue: q1, minAvailable: 3, duration: 1000s", 4, "cpu: 1"),
            jb("late", "queue: q2, submitAt: 10s, duration: 100s", 2, "cpu: 1"),
        ])
        .run()
}

/// hog (q1) runs 4 pods with minAvailable 3; late (q2, gang of 2) deserves 2. gang
/// offers one victim (4 > 3), the second task finds gang's set empty. With proportion
/// in gang's tier the empty set ends the search: nothing is evicted (the first
/// eviction is discarded) and late waits until 1000. With proportion in tier 2 (the
/// default layout) an empty tier-1 answer does not veto: proportion supplies the
/// second victim, hog falls to 2 < 3 pods and stops at 10, late runs 40–140, hog
/// rebinds at 140 and, without checkpoints, needs its full 1000 s again (ends 1140).
#[test]
fn gang_reclaim_protects_min_available_only_within_its_tier() {
    let o = gang_reclaim(&[&["priority", "gang", "conformance", "proportion"], T2]);
    assert!(o.evictions().is_empty(), "{:?}", pods(&o));
    assert_eq!((jf(&o, "late", "start_s"), jf(&o, "hog", "end_s")), ("1000".into(), "1000".into()));
    let o = gang_reclaim(&[T1, T2P]);
    assert_eq!(o.evictions().len(), 2, "{:?}", pods(&o));
    assert_eq!(ended(&o, "hog", "reclaimed"), 2);
    assert_eq!((jf(&o, "late", "start_s"), jf(&o, "hog", "end_s")), ("40".into(), "1140".into()));
}

fn gang_preempt(tiers: &[&[&str]]) -> Out {
    sc(&[N4])
        .conf(PREEMPT, tiers)
        .jobs(&[
            jb("low", "priority: 1, duration: 1000s", 4, "cpu: 1"),
            jb("high", "submitAt: 10s, priority: 100, duration: 100s", 1, "cpu: 1"),
        ])
        .run()
}

/// low runs a gang of 4 at exactly minAvailable; high (priority 100, t=10) needs one
/// cpu. Tier 1: priority offers all four pods, gang none (4 > 4 fails), so tier 1 has
/// no victim. With drf in gang's tier that ends the search: high waits for low to end
/// at 1000. With drf in tier 2 (Volcano's default layout) drf offers victims (high's
/// share 1/4 ≤ low's 3/4 after one eviction): one low pod is preempted at 10, low
/// stops below its gang and loses its 10 s, high runs 40–140, low restarts at 140 and
/// ends at 1140. (No proportion here: its enqueue vote would reject high, 1 + 4 > 4.)
#[test]
fn gang_preempt_protects_min_available_only_within_its_tier() {
    let o = gang_preempt(&[&["priority", "gang", "conformance", "drf"], &["predicates", "nodeorder"]]);
    assert!(o.evictions().is_empty(), "{:?}", pods(&o));
    assert_eq!(jf(&o, "high", "start_s"), "1000");
    let o = gang_preempt(&[T1, T2]);
    assert_eq!(o.evictions().len(), 1, "{:?}", pods(&o));
    assert_eq!(ended(&o, "low", "preempted"), 1);
    assert_eq!((jf(&o, "high", "start_s"), jf(&o, "high", "end_s")), ("40".into(), "140".into()));
    assert_eq!(o.pods_of("low").iter().filter(|p| p["start_s"] == "140").count(), 1);
    assert_eq!(jf(&o, "low", "end_s"), "1140");
}

// ---------------------------------------------------------------------------
// conformance

fn conformance_preempt(ns: &str) -> Out {
    sc(&["{name: n1, cpu: 1, memory: 16Gi}"])
        .conf(PREEMPT, &[T1H, T2])
        .jobs(&[
            jb("lo", &format!("namespace: {ns}, priority: 1, duration: 1000s"), 1, "cpu: 1"),
            jb("hi", "submitAt: 10s, priority: 10, duration: 100s", 1, "cpu: 1"),
        ])
        .run()
}

/// A kube-system pod is never a preempt victim (drf in tier 2 offers none either: hi's
/// share would be 1); the same pod in `default` is evicted at 10 and restarts at 140.
#[test]
fn conformance_never_preempts_kube_system_pods() {
    let o = conformance_preempt("kube-system");
    assert!(o.evictions().is_empty());
    assert_eq!(jf(&o, "hi", "start_s"), "1000");
    let o = conformance_preempt("default");
    assert_eq!(at(&o, "evict"), strs(&["10 default/lo-w-0"]));
    assert_eq!(
        pods(&o),
        sorted(&["lo-w-0 n1 0-10 preempted", "lo-w-0 n1 140-1140 completed", "hi-w-0 n1 40-140 completed"])
    );
}

/// priority offers sys (1) and lo (5); conformance removes the kube-system pod, so lo
/// is evicted although sys has the lower priority.
#[test]
fn conformance_victims_skip_kube_system_and_take_the_next() {
    let o = sc(&["{name: n1, cpu: 2, memory: 16Gi}"])
        .conf(PREEMPT, &[T1H, T2])
        .jobs(&[
            jb("sys", "namespace: kube-system, priority: 1, duration: 1000s", 1, "cpu: 1"),
            jb("lo", "priority: 5, duration: 1000s", 1, "cpu: 1"),
            jb("hi", "submitAt: 10s, priority: 10, duration: 100s", 1, "cpu: 1"),
        ])
        .run();
    assert_eq!(at(&o, "evict"), strs(&["10 default/lo-w-0"]));
    assert_eq!(jf(&o, "hi", "start_s"), "40");
    assert_eq!(jf(&o, "kube-system/sys", "end_s"), "1000");
}

fn conformance_reclaim(tiers: &[&[&str]]) -> Out {
    sc(&["{name: n1, cpu: 2, memory: 16Gi}"])
        .queues(&["{name: q1}", "{name: q2}"])
        .conf(RECLAIM, tiers)
        .jobs(&[
            jb("sys", "namespace: kube-system, queue: q1, minAvailable: 1, duration: 1000s", 2, "cpu: 1"),
            jb("late", "queue: q2, submitAt: 10s, duration: 100s", 1, "cpu: 1"),
        ])
        .run()
}

/// reclaim: q2 deserves 1 of 2 cpus, held by the kube-system job of q1 (2 pods,
/// minAvailable 1, so gang offers one victim). With conformance in proportion's tier
/// its empty answer ends the search: nothing is reclaimed. With conformance in tier 1
/// and proportion in tier 2 (Volcano's default layout), tier 1's empty answer does not
/// veto and proportion's victim is reclaimed: late runs 40–140, the pod rebinds at 140.
#[test]
fn conformance_protects_kube_system_from_reclaim_only_within_its_tier() {
    let o = conformance_reclaim(&[&["priority", "gang", "conformance", "proportion"], T2]);
    assert!(o.evictions().is_empty(), "{:?}", pods(&o));
    assert_eq!(jf(&o, "late", "start_s"), "1000");
    let o = conformance_reclaim(&[T1, T2P]);
    assert_eq!(o.evictions().len(), 1);
    // Which of sys's two identical pods goes is a tie (Volcano walks a Go map).
    assert_eq!(ended(&o, "kube-system/sys", "reclaimed"), 1);
    assert_eq!(o.pods_of("kube-system/sys").iter().filter(|p| p["start_s"] == "140").count(), 1);
    assert_eq!(jf(&o, "late", "start_s"), "40");
    assert_eq!(jf(&o, "late", "end_s"), "140");
}

/// Conformance by priority class (Volcano's conformance.go skips evictees whose pod
/// has priorityClassName `system-cluster-critical` or `system-node-critical`).
/// n1 holds one 1-cpu pod: lo (1000 s) runs from 0; hi (system-node-critical,
/// 2000001000, t=10) outranks every other class, so priority offers lo as a victim.
/// lo in `system-cluster-critical` (2000000000): conformance removes it, nothing is
/// evicted and hi waits until lo ends at 1000. lo in the scenario's class `batch`
/// (1000): evicted at 10, hi runs 40–140 after the 30 s grace, lo restarts 140–1140.
fn conformance_class_preempt(class: &str) -> Out {
    sc(&["{name: n1, cpu: 1, memory: 16Gi}"])
        .classes(&["{name: batch, value: 1000}"])
        .conf(PREEMPT, &[T1H, T2])
        .jobs(&[
            jb("lo", &format!("priorityClassName: {class}, duration: 1000s"), 1, "cpu: 1"),
            jb("hi", "submitAt: 10s, priorityClassName: system-node-critical, duration: 100s", 1, "cpu: 1"),
        ])
        .run()
}

#[test]
fn conformance_never_preempts_system_critical_pods() {
    let o = conformance_class_preempt("system-cluster-critical");
    assert!(o.evictions().is_empty(), "{:?}", pods(&o));
    assert_eq!(pods(&o), sorted(&["lo-w-0 n1 0-1000 completed", "hi-w-0 n1 1000-1100 completed"]));
    let o = conformance_class_preempt("batch");
    assert_eq!(at(&o, "evict"), strs(&["10 default/lo-w-0"]));
    assert_eq!(o.of("evict")[0]["action"], "preempt");
    assert_eq!(
        pods(&o),
        sorted(&["lo-w-0 n1 0-10 preempted", "lo-w-0 n1 140-1140 completed", "hi-w-0 n1 40-140 completed"])
    );
}

/// reclaim with conformance in proportion's tier (as in the kube-system test above):
/// crit (q1, 2 pods, minAvailable 1) holds both cpus; late (q2, t=10) deserves one.
/// Pods of `system-node-critical` or `system-cluster-critical` are never reclaimed
/// (late waits until 1000); in class `batch` one pod is reclaimed at 10, late runs
/// 40–140 and the pod rebinds at 140.
fn conformance_class_reclaim(class: &str) -> Out {
    sc(&["{name: n1, cpu: 2, memory: 16Gi}"])
        .queues(&["{name: q1}", "{name: q2}"])
        .classes(&["{name: batch, value: 1000}"])
        .conf(RECLAIM, &[&["priority", "gang", "conformance", "proportion"], T2])
        .jobs(&[
            jb(
                "crit",
                &format!("priorityClassName: {class}, queue: q1, minAvailable: 1, duration: 1000s"),
                2,
                "cpu: 1",
            ),
            jb("late", "queue: q2, submitAt: 10s, duration: 100s", 1, "cpu: 1"),
        ])
        .run()
}

#[test]
fn conformance_never_reclaims_system_critical_pods() {
    for class in ["system-node-critical", "system-cluster-critical"] {
        let o = conformance_class_reclaim(class);
        assert!(o.evictions().is_empty(), "{class}: {:?}", pods(&o));
        assert_eq!((jf(&o, "late", "start_s"), jf(&o, "late", "end_s")), ("1000".into(), "1100".into()), "{class}");
    }
    let o = conformance_class_reclaim("batch");
    assert_eq!(o.evictions().len(), 1);
    assert_eq!(o.of("evict")[0]["action"], "reclaim");
    assert_eq!(o.of("evict")[0]["t_s"], "10");
    assert_eq!(ended(&o, "crit", "reclaimed"), 1);
    assert_eq!(o.pods_of("crit").iter().filter(|p| p["start_s"] == "140").count(), 1);
    assert_eq!((jf(&o, "late", "start_s"), jf(&o, "late", "end_s")), ("40".into(), "140".into()));
}

// ---------------------------------------------------------------------------
// drf

/// drf job order by dominant share: a0 (a first by creation), b0 (gang: b not ready),
/// a1 (tie 1/4 = 1/4, creation), b1 (b's share 1/4 < a's 2/4); without drf the
/// fourth pod would be a2.
#[test]
fn drf_job_order_smaller_dominant_share_first() {
    let run = |t2: &[&str]| {
        sc(&[N4])
            .conf("enqueue, allocate", &[T1, t2])
            .jobs(&[
                jb("a", "minAvailable: 1, duration: 100s", 4, "cpu: 1"),
                jb("b", "minAvailable: 1, duration: 100s", 4, "cpu: 1"),
            ])
            .run()
    };
    let o = run(T2);
    assert_eq!(o.bind_order(), strs(&["default/a-w-0", "default/b-w-0", "default/a-w-1", "default/b-w-1"]));
    let o = run(&["predicates", "nodeorder"]);
    assert_eq!(o.bind_order(), strs(&["default/a-w-0", "default/b-w-0", "default/a-w-1", "default/a-w-2"]));
}

fn drf_preempt(drf: &str) -> Out {
    sc(&[N4])
        .conf(PREEMPT, &[T1, &[drf, "predicates", "nodeorder"]])
        .jobs(&[
            jb("hog", "minAvailable: 1, duration: 1000s", 4, "cpu: 1"),
            jb("nj", "submitAt: 10s, duration: 100s", 1, "cpu: 1"),
        ])
        .run()
}

/// Equal priorities: tier 1 (priority) offers no victim, so drf in tier 2 decides:
/// nj's share after placing is 1/4 ≤ hog's after losing a pod (3/4), so one hog pod
/// is preempted at 10; nj runs 40–140 and hog's pod rebinds at 140. hog kept 3 ≥ 1
/// pods running and still ends at 1000.
#[test]
fn drf_preemptable_lets_a_smaller_share_preempt_at_equal_priority() {
    let o = drf_preempt("drf");
    assert_eq!(o.evictions().len(), 1, "{:?}", pods(&o));
    assert_eq!(ended(&o, "hog", "preempted"), 1);
    assert_eq!(jf(&o, "nj", "start_s"), "40");
    assert_eq!(o.pods_of("hog").iter().filter(|p| p["start_s"] == "140").count(), 1);
    assert_eq!(jf(&o, "hog", "end_s"), "1000");
}

/// The helm chart's `drf.enablePreemptable: false`: no plugin offers a victim, nj
/// waits for hog to end at 1000.
#[test]
fn drf_enable_preemptable_false_keeps_equal_priority_jobs_running() {
    let o = drf_preempt("{name: drf, enablePreemptable: false}");
    assert!(o.evictions().is_empty());
    assert_eq!(jf(&o, "nj", "start_s"), "1000");
}

// ---------------------------------------------------------------------------
// proportion

/// q1's capability (1 cpu) caps its deserved; water-filling gives q2 the rest (2, then
/// 2.5, then 3 cpus): a runs one pod, b three; when a ends at 100, b's fourth pod binds.
#[test]
fn proportion_capability_caps_deserved_and_the_rest_goes_to_others() {
    let o = sc(&[N4])
        .queues(&["{name: q1, capability: {cpu: 1}}", "{name: q2}"])
        .conf("enqueue, allocate", &[T1, T2P])
        .jobs(&[
            jb("a", "queue: q1, minAvailable: 1, duration: 100s", 4, "cpu: 1"),
            jb("b", "queue: q2, minAvailable: 1, duration: 1000s", 4, "cpu: 1"),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&[
            "a-w-0 n1 0-100 completed",
            "b-w-0 n1 0-1000 completed",
            "b-w-1 n1 0-1000 completed",
            "b-w-2 n1 0-1000 completed",
            "b-w-3 n1 100-1000 completed"
        ])
    );
}

/// q1 guarantees 3 of 4 cpus: q2's realCapability is 1, so b runs a single pod even
/// when q1 is empty (after 100); two cpus stay idle.
#[test]
fn proportion_guarantee_reserves_capacity_for_its_queue() {
    let o = sc(&[N4])
        .queues(&["{name: q1, guarantee: {cpu: 3}}", "{name: q2}"])
        .conf("enqueue, allocate", &[T1, T2P])
        .jobs(&[
            jb("a", "queue: q1, duration: 100s", 1, "cpu: 1"),
            jb("b", "queue: q2, minAvailable: 1, duration: 200s", 4, "cpu: 1"),
        ])
        .run();
    assert_eq!(pods(&o), sorted(&["a-w-0 n1 0-100 completed", "b-w-0 n1 0-200 completed"]));
}

/// Weights 3 : 1 split 4 cpus into deserved 3 and 1; when a ends at 100, b grows to 4.
#[test]
fn proportion_weights_split_deserved() {
    let o = sc(&[N4])
        .queues(&["{name: q1, weight: 3}", "{name: q2}"])
        .conf("enqueue, allocate", &[T1, T2P])
        .jobs(&[
            jb("a", "queue: q1, minAvailable: 1, duration: 100s", 4, "cpu: 1"),
            jb("b", "queue: q2, minAvailable: 1, duration: 1000s", 4, "cpu: 1"),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&[
            "a-w-0 n1 0-100 completed",
            "a-w-1 n1 0-100 completed",
            "a-w-2 n1 0-100 completed",
            "b-w-0 n1 0-1000 completed",
            "b-w-1 n1 100-1000 completed",
            "b-w-2 n1 100-1000 completed",
            "b-w-3 n1 100-1000 completed"
        ])
    );
}

// ---------------------------------------------------------------------------
// capacity

const T2C: &[&str] = &["drf", "predicates", "capacity", "nodeorder"];

/// q1 (deserved 2, capability 4) borrows the whole node while q2 is idle (no overused
/// in capacity); b (q2, gang of 2, t=10) may reclaim up to its deserved 2: two of a's
/// pods are reclaimed, b runs 40–140, a's pods rebind at 140.
#[test]
fn capacity_borrows_up_to_capability_then_reclaims_to_deserved() {
    let o = sc(&[N4])
        .queues(&["{name: q1, deserved: {cpu: 2}, capability: {cpu: 4}}", "{name: q2, deserved: {cpu: 2}}"])
        .conf(RECLAIM, &[T1, T2C])
        .jobs(&[
            jb("a", "queue: q1, minAvailable: 1, duration: 1000s", 4, "cpu: 1"),
            jb("b", "queue: q2, submitAt: 10s, duration: 100s", 2, "cpu: 1"),
        ])
        .run();
    assert_eq!(o.pods_of("a").iter().filter(|p| p["start_s"] == "0").count(), 4);
    assert_eq!(o.evictions().len(), 2, "{:?}", pods(&o));
    assert_eq!(ended(&o, "a", "reclaimed"), 2);
    assert_eq!(jf(&o, "b", "start_s"), "40");
    assert_eq!(o.pods_of("a").iter().filter(|p| p["start_s"] == "140").count(), 2);
    assert_eq!(jf(&o, "a", "end_s"), "1000");
}

/// q1's capability (2 cpus) caps it although half the node is idle; b (q2, no
/// deserved, t=10) uses the rest, and a's two cpus when a ends at 100.
#[test]
fn capacity_capability_caps_a_queue_and_leaves_the_rest_to_others() {
    let o = sc(&[N4])
        .queues(&["{name: q1, deserved: {cpu: 1}, capability: {cpu: 2}}", "{name: q2}"])
        .conf("enqueue, allocate", &[T1, T2C])
        .jobs(&[
            jb("a", "queue: q1, minAvailable: 1, duration: 100s", 4, "cpu: 1"),
            jb("b", "queue: q2, submitAt: 10s, minAvailable: 1, duration: 100s", 4, "cpu: 1"),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&[
            "a-w-0 n1 0-100 completed",
            "a-w-1 n1 0-100 completed",
            "b-w-0 n1 10-110 completed",
            "b-w-1 n1 10-110 completed",
            "b-w-2 n1 100-110 completed",
            "b-w-3 n1 100-110 completed"
        ])
    );
}

/// Queue order: q2 (priority 10) is served first although q1's job is older: b runs
/// 0–100, a 100–200.
#[test]
fn capacity_higher_priority_queue_allocates_first() {
    let o = sc(&["{name: n1, cpu: 2, memory: 16Gi}"])
        .queues(&["{name: q1}", "{name: q2, priority: 10}"])
        .conf("enqueue, allocate", &[T1, T2C])
        .jobs(&[jb("a", "queue: q1, duration: 100s", 2, "cpu: 1"), jb("b", "queue: q2, duration: 100s", 2, "cpu: 1")])
        .run();
    assert_eq!((jf(&o, "b", "start_s"), jf(&o, "a", "start_s")), ("0".into(), "100".into()));
}

// ---------------------------------------------------------------------------
// predicates

/// GPU model by node selector: h1 and h2 select H100 and run one after the other on
/// n2 (0–100, 100–200) although the A100 node n1 is free; x (no selector, t=20) takes n1.
#[test]
fn predicates_gpu_model_selector_waits_for_a_matching_node() {
    let sel = "nodeSelector: {nvidia.com/gpu.product: H100-SXM-80G}, resources: {cpu: 1, nvidia.com/gpu: 8}";
    let o = sc(&[
        "{name: n1, cpu: 8, memory: 64Gi, gpus: 8, gpuModel: A100-SXM-80G}",
        "{name: n2, cpu: 8, memory: 64Gi, gpus: 8, gpuModel: H100-SXM-80G}",
    ])
    .conf("enqueue, allocate", &[T1, T2])
    .jobs(&[
        format!("{{name: h1, duration: 100s, tasks: [{{name: w, replicas: 1, {sel}}}]}}"),
        format!("{{name: h2, submitAt: 10s, duration: 100s, tasks: [{{name: w, replicas: 1, {sel}}}]}}"),
        jb("x", "submitAt: 20s, duration: 100s", 1, "cpu: 1, nvidia.com/gpu: 8"),
    ])
    .run();
    assert_eq!(
        pods(&o),
        sorted(&["h1-w-0 n2 0-100 completed", "h2-w-0 n2 100-200 completed", "x-w-0 n1 20-120 completed"])
    );
}

/// A node's pod capacity (2) limits placement like any resource: a (3 pods,
/// minAvailable 1) gets two, b (t=10) waits for a to end at 100.
#[test]
fn predicates_pod_capacity_limits_pods_per_node() {
    let o = sc(&["{name: n1, cpu: 8, memory: 16Gi, pods: 2}"])
        .conf("enqueue, allocate", &[T1, T2])
        .jobs(&[
            jb("a", "minAvailable: 1, duration: 100s", 3, "cpu: 1"),
            jb("b", "submitAt: 10s, duration: 100s", 1, "cpu: 1"),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&["a-w-0 n1 0-100 completed", "a-w-1 n1 0-100 completed", "b-w-0 n1 100-200 completed"])
    );
}

/// preempt only considers nodes passing the preemptor's predicates: hi selects zone b,
/// so it evicts lo2 (priority 5) on n2 and not lo1 (priority 1) on n1. lo2 (also
/// zone b) restarts on n2 when hi ends at 140.
#[test]
fn predicates_preempt_only_on_nodes_matching_the_selector() {
    let zb = "nodeSelector: {zone: b}, resources: {cpu: 1}";
    let o = sc(&["{name: n1, cpu: 1, memory: 16Gi, labels: {zone: a}}", "{name: n2, cpu: 1, memory: 16Gi, labels: {zone: b}}"])
        .conf(PREEMPT, &[T1H, T2])
        .jobs(&[
            "{name: lo1, priority: 1, duration: 1000s, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 1}}]}".into(),
            format!("{{name: lo2, priority: 5, duration: 1000s, running: {{w: [n2]}}, tasks: [{{name: w, replicas: 1, {zb}}}]}}"),
            format!("{{name: hi, submitAt: 10s, priority: 10, duration: 100s, tasks: [{{name: w, replicas: 1, {zb}}}]}}"),
        ])
        .run();
    assert_eq!(
        pods(&o),
        sorted(&[
            "lo1-w-0 n1 0-1000 completed",
            "lo2-w-0 n2 0-10 preempted",
            "lo2-w-0 n2 140-1140 completed",
            "hi-w-0 n2 40-140 completed"
        ])
    );
}

// ---------------------------------------------------------------------------
// nodeorder

/// Two 4-cpu/16Gi nodes, x (1 cpu, 1Gi) running on n1, a's two pods of 2 cpu/2Gi.
/// Default weights (least 1, balanced 1). Pod 0: n1 least (25+81)/2 = 53 + balanced
/// ⌊(1 − |0.75 − 0.1875|/2)·100⌋ = 71 → 124; n2 (50+87)/2 = 68 + 81 → 149: n2.
/// Pod 1: n2 now (0+75)/2 = 37 + 62 = 99 < n1's 124: n1.
#[test]
fn nodeorder_least_requested_and_balanced_spread_pods() {
    let o = sc(&["{name: n1, cpu: 4, memory: 16Gi}", "{name: n2, cpu: 4, memory: 16Gi}"])
        .conf("enqueue, allocate", &[T1, T2])
        .jobs(&[
            "{name: x, duration: 1000s, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 1, memory: 1Gi}}]}".into(),
            jb("a", "duration: 100s", 2, "cpu: 2, memory: 2Gi"),
        ])
        .run();
    assert_eq!(o.binds(), map(&[("default/a-w-0", "n2"), ("default/a-w-1", "n1")]));
}

/// mostrequested only (least 0, balanced 0), x (1 cpu, 1Gi) on n1, pods of 1 cpu/1Gi:
/// pod 0: n1 (50+12)/2 = 31 > n2 (25+6)/2 = 15; pod 1: n1 (75+18)/2 = 46 > 15: both
/// pack onto n1.
#[test]
fn nodeorder_most_requested_packs_pods() {
    let o = sc(&["{name: n1, cpu: 4, memory: 16Gi}", "{name: n2, cpu: 4, memory: 16Gi}"])
        .conf(
            "enqueue, allocate",
            &[T1, &["drf", "predicates", "{name: nodeorder, arguments: {leastrequested.weight: 0, mostrequested.weight: 1, balancedresource.weight: 0}}"]],
        )
        .jobs(&[
            "{name: x, duration: 1000s, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 1, memory: 1Gi}}]}".into(),
            jb("a", "duration: 100s", 2, "cpu: 1, memory: 1Gi"),
        ])
        .run();
    assert_eq!(o.binds(), map(&[("default/a-w-0", "n1"), ("default/a-w-1", "n1")]));
}

fn nodeorder_balanced(nodeorder: &str) -> String {
    let o = sc(&["{name: n1, cpu: 4, memory: 16Gi}", "{name: n2, cpu: 4, memory: 16Gi}"])
        .conf("enqueue, allocate", &[T1, &["drf", "predicates", nodeorder]])
        .jobs(&[
            "{name: x, duration: 1000s, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 1, memory: 7Gi}}]}".into(),
            jb("p", "duration: 100s", 1, "cpu: 1, memory: 1Gi"),
        ])
        .run();
    o.binds()["default/p-w-0"].clone()
}

/// x (1 cpu, 7Gi) on n1; p (1 cpu, 1Gi). On n1, p would make cpu and memory both half
/// used: balanced 100, least 50 → 150. On n2: balanced ⌊(1 − |0.25 − 0.0625|/2)·100⌋ =
/// 90, least (75+93)/2 = 84 → 174. Default weights pick n2; balancedresource alone
/// picks n1.
#[test]
fn nodeorder_balanced_resource_prefers_the_balanced_node() {
    assert_eq!(nodeorder_balanced("nodeorder"), "n2");
    assert_eq!(
        nodeorder_balanced("{name: nodeorder, arguments: {leastrequested.weight: 0, balancedresource.weight: 1}}"),
        "n1"
    );
}

// ---------------------------------------------------------------------------
// binpack

fn binpack_gpu(binpack: &str) -> String {
    let node = |n: &str| format!("{{name: {n}, cpu: 8, memory: 64Gi, gpus: 8}}");
    let (n1, n2) = (node("n1"), node("n2"));
    let o = sc(&[n1.as_str(), n2.as_str()])
        .conf("enqueue, allocate", &[T1, &["predicates", binpack]])
        .jobs(&[
            "{name: x, duration: 1000s, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 6, memory: 1Gi}}]}".into(),
            "{name: y, duration: 1000s, running: {w: [n2]}, tasks: [{name: w, replicas: 1, resources: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 6}}]}".into(),
            jb("p", "duration: 100s", 1, "cpu: 1, memory: 1Gi, nvidia.com/gpu: 1"),
        ])
        .run();
    o.binds()["default/p-w-0"].clone()
}

/// p (1 cpu, 1Gi, 1 GPU): n1 is cpu-full (x: 6 cpus), n2 GPU-full (y: 6 GPUs). With
/// cpu and memory weights only (GPUs unweighted, skipped): n1 (7/8 + 2/64)/2 beats n2
/// (2/8 + 2/64)/2. With `nvidia.com/gpu` weight 10: n1 (7/8 + 2/64 + 10·1/8)/12 = 0.18
/// loses to n2 (2/8 + 2/64 + 10·7/8)/12 = 0.75.
#[test]
fn binpack_gpu_weight_packs_gpus() {
    assert_eq!(binpack_gpu("binpack"), "n1");
    assert_eq!(
        binpack_gpu(
            "{name: binpack, arguments: {binpack.resources: nvidia.com/gpu, binpack.resources.nvidia.com/gpu: 10}}"
        ),
        "n2"
    );
}

/// binpack alone: a (t=0) lands on either empty node (a tie), b (t=10) joins it (fuller),
/// c (t=20) cannot fit there and takes the other node.
#[test]
fn binpack_packs_successive_jobs_onto_one_node() {
    let o = sc(&["{name: n1, cpu: 4, memory: 16Gi}", "{name: n2, cpu: 4, memory: 16Gi}"])
        .conf("enqueue, allocate", &[T1, &["predicates", "binpack"]])
        .jobs(&[
            jb("a", "duration: 1000s", 1, "cpu: 2, memory: 2Gi"),
            jb("b", "submitAt: 10s, duration: 1000s", 1, "cpu: 2, memory: 2Gi"),
            jb("c", "submitAt: 20s, duration: 1000s", 1, "cpu: 2, memory: 2Gi"),
        ])
        .run();
    let b = o.binds();
    assert_eq!(b["default/b-w-0"], b["default/a-w-0"]);
    assert_ne!(b["default/c-w-0"], b["default/a-w-0"]);
}

fn binpack_dims(binpack: &str) -> String {
    let o = sc(&["{name: n1, cpu: 8, memory: 64Gi}", "{name: n2, cpu: 8, memory: 64Gi}"])
        .conf("enqueue, allocate", &[T1, &["predicates", binpack]])
        .jobs(&[
            "{name: x, duration: 1000s, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 1, memory: 48Gi}}]}".into(),
            "{name: y, duration: 1000s, running: {w: [n2]}, tasks: [{name: w, replicas: 1, resources: {cpu: 6, memory: 4Gi}}]}".into(),
            jb("p", "duration: 100s", 1, "cpu: 1, memory: 4Gi"),
        ])
        .run();
    o.binds()["default/p-w-0"].clone()
}

/// n1 is memory-full (x: 48Gi), n2 cpu-full (y: 6 cpus). binpack.cpu 0: memory only,
/// n1 52/64 beats n2 8/64. binpack.memory 0: cpu only, n2 7/8 beats n1 2/8.
#[test]
fn binpack_resource_weights_choose_the_packed_dimension() {
    assert_eq!(binpack_dims("{name: binpack, arguments: {binpack.cpu: 0}}"), "n1");
    assert_eq!(binpack_dims("{name: binpack, arguments: {binpack.memory: 0}}"), "n2");
}

// ---------------------------------------------------------------------------
// network-topology-aware

const NT: &[&str] = &["drf", "predicates", "nodeorder", "network-topology-aware"];
const LEAVES: &[&str] = &[
    "{name: s0, tier: 1, members: [n1, n2]}",
    "{name: s1, tier: 1, members: [n3, n4]}",
    "{name: s2, tier: 2, members: [s0, s1]}",
];

/// Four 4-cpu nodes, leaves s0 = {n1, n2}, s1 = {n3, n4}, spine s2. x holds n1 until
/// 100, y holds n3 until 50; t (t=10, gang of 2 × 4 cpus) finds n2 and n4 free, in
/// different leaves.
fn nt_two_leaves(topology: &str) -> Out {
    let nodes: Vec<String> = (1..=4).map(|i| format!("{{name: n{i}, cpu: 4, memory: 16Gi}}")).collect();
    let nodes: Vec<&str> = nodes.iter().map(|s| s.as_str()).collect();
    sc(&nodes)
        .hyper(LEAVES)
        .conf("enqueue, allocate", &[T1, NT])
        .jobs(&[
            "{name: x, duration: 100s, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 4}}]}"
                .into(),
            "{name: y, duration: 50s, running: {w: [n3]}, tasks: [{name: w, replicas: 1, resources: {cpu: 4}}]}".into(),
            jb("t", &format!("submitAt: 10s, duration: 100s, networkTopology: {topology}"), 2, "cpu: 4"),
        ])
        .run()
}

fn nodes_of(o: &Out, job: &str) -> Vec<String> {
    let mut v: Vec<String> = o.pods_of(job).iter().map(|p| p["node"].clone()).collect();
    v.sort();
    v
}

/// hard, highestTierAllowed 1: no leaf holds the gang at 10, so it waits for s1 to
/// empty at 50 and runs on n3, n4 (highest tier 1).
#[test]
fn network_topology_hard_tier1_waits_for_a_whole_leaf() {
    let o = nt_two_leaves("{mode: hard, highestTierAllowed: 1}");
    assert_eq!(jf(&o, "t", "start_s"), "50");
    assert_eq!(nodes_of(&o, "t"), strs(&["n3", "n4"]));
    assert_eq!(jf(&o, "t", "highest_tier"), "1");
}

/// hard, highestTierAllowed 2: the spine s2 is eligible, the gang starts at 10 on n2
/// and n4 (highest tier 2).
#[test]
fn network_topology_hard_tier2_spans_leaves_under_the_spine() {
    let o = nt_two_leaves("{mode: hard, highestTierAllowed: 2}");
    assert_eq!(jf(&o, "t", "start_s"), "10");
    assert_eq!(nodes_of(&o, "t"), strs(&["n2", "n4"]));
    assert_eq!(jf(&o, "t", "highest_tier"), "2");
}

/// soft becomes hard up to the cluster top: no leaf fits at 10, the next tier does,
/// so the gang starts at once across leaves.
#[test]
fn network_topology_soft_falls_back_to_higher_tiers() {
    let o = nt_two_leaves("{mode: soft, highestTierAllowed: 1}");
    assert_eq!(jf(&o, "t", "start_s"), "10");
    assert_eq!(nodes_of(&o, "t"), strs(&["n2", "n4"]));
}

/// HyperNode binpacking: x (2 cpus, 1Gi) runs on n1; t (hard tier 1, one pod of 2 cpus,
/// 1Gi) fits both leaves; s0 scores (4/8 + 2/32)/2 over s1's (2/8 + 1/32)/2, so t goes
/// to s0, and inside it nodeorder prefers the empty n2 (149 vs 99).
#[test]
fn network_topology_prefers_the_fuller_hypernode() {
    let nodes: Vec<String> = (1..=4).map(|i| format!("{{name: n{i}, cpu: 4, memory: 16Gi}}")).collect();
    let nodes: Vec<&str> = nodes.iter().map(|s| s.as_str()).collect();
    let o = sc(&nodes)
        .hyper(LEAVES)
        .conf("enqueue, allocate", &[T1, NT])
        .jobs(&[
            "{name: x, duration: 1000s, running: {w: [n1]}, tasks: [{name: w, replicas: 1, resources: {cpu: 2, memory: 1Gi}}]}".into(),
            jb("t", "submitAt: 10s, duration: 100s, networkTopology: {mode: hard, highestTierAllowed: 1}", 1, "cpu: 2, memory: 1Gi"),
        ])
        .run();
    assert_eq!(o.binds()["default/t-w-0"], "n2");
}

// ---------------------------------------------------------------------------
// sla

/// sla (tier 1, sla-waiting-time 1m) orders jobs by creation + waiting time before
/// priority gets a say: lo (t=10, deadline 70) runs before hi (t=20, deadline 80)
/// when r frees the cpu at 100; compare priority_job_order_starts_higher_priority_first.
#[test]
fn sla_orders_jobs_by_waiting_deadline_before_priority() {
    let o = sc(&["{name: n1, cpu: 1, memory: 16Gi}"])
        .conf(
            "enqueue, allocate",
            &[&["{name: sla, arguments: {sla-waiting-time: 1m}}", "priority", "gang", "conformance"], T2],
        )
        .jobs(&[
            jb("r", "duration: 100s", 1, "cpu: 1"),
            jb("lo", "submitAt: 10s, priority: 1, duration: 100s", 1, "cpu: 1"),
            jb("hi", "submitAt: 20s, priority: 10, duration: 100s", 1, "cpu: 1"),
        ])
        .run();
    assert_eq!((jf(&o, "lo", "start_s"), jf(&o, "hi", "start_s")), ("100".into(), "200".into()));
}

/// overcommit 1.0 on 4 cpus with r using 3: big (2 cpus, t=10) is rejected until it
/// is overdue at 40, when sla's +1 in tier 1 admits it (it still cannot be placed).
/// Its reservation then rejects s (t=50) until s is overdue at 80; at 80 s takes the
/// free cpu (big, first in sla order, does not fit) and big starts when r ends at 100.
#[test]
fn sla_admits_overdue_jobs_despite_overcommit() {
    let o = sc(&[N4])
        .conf(
            "enqueue, allocate",
            &[
                &["{name: sla, arguments: {sla-waiting-time: 30s}}", "priority", "gang", "conformance"],
                &["{name: overcommit, arguments: {overcommit-factor: 1.0}}", "drf", "predicates", "nodeorder"],
            ],
        )
        .jobs(&[
            jb("r", "duration: 100s", 1, "cpu: 3"),
            jb("big", "submitAt: 10s, duration: 100s", 2, "cpu: 1"),
            jb("s", "submitAt: 50s, duration: 100s", 1, "cpu: 1"),
        ])
        .run();
    assert_eq!(phase_at(&o, "Inqueue"), strs(&["0 r", "40 big", "80 s"]));
    assert_eq!((jf(&o, "big", "start_s"), jf(&o, "s", "start_s")), ("100".into(), "80".into()));
}

/// x's minResources (3 cpus) exceed q1's capability (2): proportion rejects it, until
/// it is overdue at 30 and sla admits it. It still never runs: only 2 pods pass
/// `allocatable` and gang's −1 on pipelined outvotes sla's +1.
#[test]
fn sla_admits_beyond_capability_but_gang_still_blocks_placement() {
    let o = sc(&[N4])
        .queues(&["{name: q1, capability: {cpu: 2}}"])
        .conf(
            "enqueue, allocate",
            &[&["{name: sla, arguments: {sla-waiting-time: 30s}}", "priority", "gang", "conformance"], T2P],
        )
        .jobs(&[jb("x", "queue: q1, duration: 100s", 3, "cpu: 1")])
        .run();
    assert_eq!(phase_at(&o, "Inqueue"), strs(&["30 x"]));
    assert!(o.of("bind").is_empty());
    assert!(o.of("pipeline").is_empty());
}

/// proportion (default conf): on 16 GPUs, `prod` (weight 1) deserves 4 GPUs against
/// `research` (weight 3), so its 8-GPU jobs never pass `allocatable`; once j0 and j1
/// end, prod's j4 and j8 are admitted (Inqueue, 16 GPUs reserved: 16 × 1.2 − 16 leaves
/// 3.2 of overcommit headroom) and research's 8-GPU jobs can no longer be admitted:
/// the cluster stays idle with 10 jobs pending (docs/volcano.md, "A job larger than
/// its queue's deserved share").
#[test]
fn proportion_job_larger_than_deserved_share_waits_and_blocks_admission() {
    let jobs: String = (0..12)
        .map(|i| {
            let q = if i % 4 == 0 { "prod" } else { "research" };
            format!("      - {{name: j{i}, queue: {q}, submitAt: {}s, duration: 1h, tasks: [{{name: w, replicas: 1, resources: {{cpu: 8, memory: 64Gi, nvidia.com/gpu: 8}}}}]}}\n", i * 60)
        })
        .collect();
    let text = format!(
        "apiVersion: lahar.io/v1alpha1\nkind: Scenario\nmetadata: {{name: t}}\nspec:\n  cluster:\n    nodeGroups:\n      - {{name: n, count: 2, gpus: 8, cpu: 64, memory: 512Gi}}\n  queues:\n    - {{name: research, weight: 3}}\n    - {{name: prod, weight: 1}}\n  workload:\n    - jobs:\n{jobs}"
    );
    let o = run_text(&text);
    assert_eq!((jf(&o, "j0", "end_s"), jf(&o, "j1", "end_s")), ("3600".to_string(), "3660".to_string()));
    let pending: Vec<String> =
        (2..12).filter(|i| jf(&o, &format!("j{i}"), "state") == "Pending").map(|i| format!("j{i}")).collect();
    assert_eq!(pending.len(), 10, "{pending:?}");
    assert_eq!(phase_at(&o, "Inqueue"), strs(&["0 j0", "60 j1", "3600 j4", "3660 j8"]));
}
