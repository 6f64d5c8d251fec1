//! The research baselines on small hand-checked scenarios: exact start and end times,
//! placements, preemptions.

use lahar_core::engine::{EndReason, Engine, EngineConfig, IdealRuntime, RunOutput};
use lahar_core::model::cluster::{Cluster, Node, NodeId};
use lahar_core::model::job::{JobSpec, TaskSpec};
use lahar_core::model::queue::Queue;
use lahar_core::model::resource::{ResourceNames, Resources};
use lahar_core::model::topology::Topology;
use lahar_core::session::{DecisionKind, Scheduler};
use lahar_core::util::time::{SimDuration, SimTime};
use lahar_core::world::World;
use lahar_policies::baselines::{self, Tiresias, TiresiasConfig};

const S: u64 = 1_000_000;

fn node(name: &str, gpus: i64) -> Node {
    Node::plain(name, Resources::new(64_000, 1 << 40, gpus * 1000, 110), "H100")
}

fn nodes(n: usize, gpus: i64) -> Vec<Node> {
    (0..n).map(|i| node(&format!("n{i}"), gpus)).collect()
}

/// A job of `replicas` pods of `gpus` GPUs each, gang `min`, `dur` seconds of work,
/// submitted at `submit` seconds.
fn job(name: &str, submit: u64, dur: u64, replicas: u32, gpus: i64, min: u32) -> JobSpec {
    let mut j = JobSpec {
        name: name.into(),
        kind: "test".into(),
        submit: SimTime(submit * S),
        min_available: min,
        tasks: vec![TaskSpec {
            name: "w".into(),
            replicas,
            min_available: min,
            requests: Resources::new(1000, 0, gpus * 1000, 1),
            ..TaskSpec::default()
        }],
        duration: SimDuration(dur * S),
        ..JobSpec::default()
    };
    j.min_resources = j.compute_min_resources();
    j
}

fn checkpointed(mut j: JobSpec, every: u64) -> JobSpec {
    j.checkpoint_interval = Some(SimDuration(every * S));
    j
}

fn run_with(sched: Box<dyn Scheduler>, nodes: Vec<Node>, jobs: Vec<JobSpec>) -> RunOutput {
    let n = nodes.len();
    let cluster = Cluster::new(nodes, ResourceNames::default(), Topology::flat(n));
    let world = World::new(cluster, vec![Queue::new("default")], jobs);
    let out = Engine::new(world, sched, Box::new(IdealRuntime), EngineConfig::default()).run();
    out.world.check_invariants().expect("world invariants hold after the run");
    out
}

fn run(name: &str, nodes: Vec<Node>, jobs: Vec<JobSpec>) -> RunOutput {
    let sched = baselines::build(name, 0).expect("baseline is registered");
    assert_eq!(sched.name(), name);
    run_with(sched, nodes, jobs)
}

fn job_id(out: &RunOutput, name: &str) -> lahar_core::model::ids::JobId {
    out.world.jobs.iter_ids().find(|(_, j)| j.spec.name == name).expect("job exists").0
}

/// (first start, end) of a job, in seconds.
fn span(out: &RunOutput, name: &str) -> (Option<u64>, Option<u64>) {
    let j = &out.world.jobs[job_id(out, name)];
    (j.first_start.map(|t| t.0 / S), j.end.map(|t| t.0 / S))
}

/// The job's pod placement intervals (start s, end s, node, reason), by start then node.
fn pods(out: &RunOutput, name: &str) -> Vec<(u64, u64, u32, EndReason)> {
    let id = job_id(out, name);
    let mut v: Vec<_> =
        out.pods.iter().filter(|r| r.job == id).map(|r| (r.start.0 / S, r.end.0 / S, r.node.0, r.reason)).collect();
    v.sort_by_key(|&(s, _, n, _)| (s, n));
    v
}

fn names_registered() -> Vec<&'static str> {
    baselines::names().collect()
}

#[test]
fn every_name_builds_and_unknown_names_do_not() {
    for name in names_registered() {
        let s = baselines::build(name, 0).expect("registered name builds");
        assert_eq!(s.name(), name);
    }
    for name in ["fifo", "sjf", "kube-default", "easy-backfill", "tiresias"] {
        assert!(baselines::spec_of(name).is_some(), "{name} is selectable");
    }
    assert!(baselines::build("lifo", 0).is_none());
}

// ---- fifo ------------------------------------------------------------------------

/// The head job that cannot start blocks a later job that would fit; gang-fifo lets
/// the later job start around it.
#[test]
fn fifo_head_of_line_blocking() {
    let jobs = || vec![job("big", 0, 100, 1, 6, 1), job("head", 1, 50, 1, 4, 1), job("small", 2, 10, 1, 2, 1)];
    let out = run("fifo", nodes(1, 8), jobs());
    assert_eq!(span(&out, "big"), (Some(0), Some(100)));
    assert_eq!(span(&out, "head"), (Some(100), Some(150)));
    assert_eq!(span(&out, "small"), (Some(100), Some(110)), "blocked behind the head until t=100");

    let around = run("gang-fifo", nodes(1, 8), jobs());
    assert_eq!(span(&around, "small"), (Some(2), Some(12)));
}

/// A gang is placed all or nothing: no pod of it is bound until all fit.
#[test]
fn fifo_places_gangs_whole() {
    let jobs = vec![job("a", 0, 100, 1, 2, 1), job("gang", 1, 30, 2, 4, 2)];
    let out = run("fifo", nodes(2, 4), jobs);
    assert_eq!(span(&out, "a"), (Some(0), Some(100)));
    assert_eq!(span(&out, "gang"), (Some(100), Some(130)));
    assert_eq!(
        pods(&out, "gang"),
        vec![(100, 130, 0, EndReason::Completed), (100, 130, 1, EndReason::Completed)],
        "one pod would have fitted node 1 at t=1; none was bound before t=100"
    );
}

/// A gang larger than the cluster blocks every later job for ever.
#[test]
fn fifo_oversized_head_blocks_forever() {
    let jobs = vec![job("huge", 0, 10, 3, 4, 3), job("tiny", 1, 10, 1, 1, 1)];
    let out = run("fifo", nodes(2, 4), jobs);
    assert_eq!(span(&out, "huge"), (None, None));
    assert_eq!(span(&out, "tiny"), (None, None));
    assert!(out.decisions.iter().all(|d| d.kind != DecisionKind::Bind));
}

// ---- sjf -------------------------------------------------------------------------

/// Waiting jobs start shortest (oracle duration) first.
#[test]
fn sjf_orders_by_duration() {
    let jobs = vec![
        job("first", 0, 100, 1, 4, 1),
        job("long", 1, 300, 1, 4, 1),
        job("short", 2, 50, 1, 4, 1),
        job("mid", 3, 200, 1, 4, 1),
    ];
    let out = run("sjf", nodes(1, 4), jobs);
    assert_eq!(span(&out, "first"), (Some(0), Some(100)));
    assert_eq!(span(&out, "short"), (Some(100), Some(150)));
    assert_eq!(span(&out, "mid"), (Some(150), Some(350)));
    assert_eq!(span(&out, "long"), (Some(350), Some(650)));
}

/// The shortest job does not fit: it is skipped and a longer one that fits starts.
#[test]
fn sjf_skips_jobs_that_do_not_fit() {
    let jobs = vec![job("a", 0, 100, 1, 6, 1), job("short-wide", 1, 10, 1, 4, 1), job("long-narrow", 2, 500, 1, 2, 1)];
    let out = run("sjf", nodes(1, 8), jobs);
    assert_eq!(span(&out, "long-narrow"), (Some(2), Some(502)));
    assert_eq!(span(&out, "short-wide"), (Some(100), Some(110)));
}

/// A stream of short jobs keeps half the node busy; the long 8-GPU job starves until
/// the stream ends (fifo would start it at t=10).
#[test]
fn sjf_starves_a_long_job() {
    let mut jobs = vec![job("j0", 0, 10, 1, 4, 1), job("long", 1, 100, 1, 8, 1)];
    for k in 0..5u64 {
        jobs.push(job(&format!("s{k}"), 5 + 10 * k, 10, 1, 4, 1));
    }
    let out = run("sjf", nodes(1, 8), jobs.clone());
    for k in 0..5u64 {
        assert_eq!(span(&out, &format!("s{k}")), (Some(5 + 10 * k), Some(15 + 10 * k)));
    }
    assert_eq!(span(&out, "long"), (Some(55), Some(155)));

    let fifo = run("fifo", nodes(1, 8), jobs);
    assert_eq!(span(&fifo, "long"), (Some(10), Some(110)));
}

// ---- kube-default ----------------------------------------------------------------

/// Pods are bound one by one: half a gang holds GPUs for 9 s before the job can run.
#[test]
fn kube_default_partial_allocation() {
    let jobs = vec![job("filler", 0, 10, 1, 2, 1), job("gang", 1, 20, 2, 2, 2)];
    let out = run("kube-default", nodes(1, 4), jobs.clone());
    assert_eq!(pods(&out, "gang"), vec![(1, 30, 0, EndReason::Completed), (10, 30, 0, EndReason::Completed)]);
    assert_eq!(span(&out, "gang"), (Some(10), Some(30)));

    let gang = run("gang-fifo", nodes(1, 4), jobs);
    assert_eq!(pods(&gang, "gang"), vec![(10, 30, 0, EndReason::Completed), (10, 30, 0, EndReason::Completed)]);
}

/// Two gangs each hold part of the cluster the other needs: neither ever runs.
#[test]
fn kube_default_resource_deadlock() {
    // t=0: filler → n0 (tie, lowest id); a-0 (4 GPUs) → n1, a-1 finds no node;
    // b-0..b-2 fill n0. t=10: the filler ends; b-3 takes its GPU; a-1 and b-4 wait.
    let jobs = vec![job("filler", 0, 10, 1, 1, 1), job("a", 0, 100, 2, 4, 2), job("b", 0, 100, 5, 1, 5)];
    let out = run("kube-default", nodes(2, 4), jobs.clone());
    assert_eq!(span(&out, "filler"), (Some(0), Some(10)));
    assert_eq!(span(&out, "a"), (None, None));
    assert_eq!(span(&out, "b"), (None, None));
    assert_eq!(pods(&out, "a"), vec![(0, 10, 1, EndReason::Running)]);
    assert_eq!(
        pods(&out, "b"),
        vec![
            (0, 10, 0, EndReason::Running),
            (0, 10, 0, EndReason::Running),
            (0, 10, 0, EndReason::Running),
            (10, 10, 0, EndReason::Running)
        ]
    );
    assert_eq!(out.world.gpu_used_milli, 8000, "every GPU held, none doing work");
    assert_eq!(out.stats.end, SimTime(10 * S), "nothing left to happen");

    // Gang scheduling avoids it: b runs at t=0, a after it.
    let gang = run("gang-fifo", nodes(2, 4), jobs);
    assert_eq!(span(&gang, "b"), (Some(0), Some(100)));
    assert_eq!(span(&gang, "a"), (Some(100), Some(200)));
}

/// LeastAllocated spreads pods over nodes (first-fit would stack them on node 0).
#[test]
fn kube_default_spreads_least_allocated() {
    let jobs = vec![job("pair", 0, 10, 2, 1, 2), job("third", 1, 10, 1, 2, 1)];
    let out = run("kube-default", nodes(2, 4), jobs.clone());
    assert_eq!(pods(&out, "pair"), vec![(0, 10, 0, EndReason::Completed), (0, 10, 1, EndReason::Completed)]);
    // Both nodes have 3 GPUs free: the tie goes to node 0.
    assert_eq!(pods(&out, "third"), vec![(1, 11, 0, EndReason::Completed)]);

    let ff = run("gang-fifo", nodes(2, 4), jobs);
    assert_eq!(pods(&ff, "pair"), vec![(0, 10, 0, EndReason::Completed), (0, 10, 0, EndReason::Completed)]);
}

// ---- easy-backfill ---------------------------------------------------------------

/// The head (8 GPUs) is reserved t=100, when `big` ends. `fits-before` (ends at 52)
/// and `short` (ends at 91) are backfilled; `too-long` (would end at 260) is refused
/// because it would hold reserved GPUs at t=100. gang-fifo starts it and delays the
/// head to t=260.
#[test]
fn easy_backfill_respects_the_head_reservation() {
    let jobs = vec![
        job("big", 0, 100, 1, 6, 1),
        job("head", 1, 50, 1, 8, 1),
        job("fits-before", 2, 50, 1, 2, 1),
        job("too-long", 60, 200, 1, 2, 1),
        job("short", 61, 30, 1, 2, 1),
    ];
    let out = run("easy-backfill", nodes(1, 8), jobs.clone());
    assert_eq!(span(&out, "big"), (Some(0), Some(100)));
    assert_eq!(span(&out, "fits-before"), (Some(2), Some(52)));
    assert_eq!(span(&out, "short"), (Some(61), Some(91)));
    assert_eq!(span(&out, "head"), (Some(100), Some(150)), "the head is not delayed");
    assert_eq!(span(&out, "too-long"), (Some(150), Some(350)), "refused until after the head");
    let backfilled: Vec<_> = out
        .decisions
        .iter()
        .filter(|d| d.kind == DecisionKind::Bind && d.action == "backfill")
        .map(|d| d.job)
        .collect();
    assert_eq!(backfilled, vec![job_id(&out, "fits-before"), job_id(&out, "short")]);

    let greedy = run("gang-fifo", nodes(1, 8), jobs);
    assert_eq!(span(&greedy, "too-long"), (Some(60), Some(260)));
    assert_eq!(span(&greedy, "head"), (Some(260), Some(310)));
}

/// A job running past the shadow time may start if it only uses resources the head
/// does not need then: here the GPU left on node 1.
#[test]
fn easy_backfill_long_job_on_unreserved_resources() {
    let jobs = vec![
        job("n0-holder", 0, 100, 1, 4, 1),
        job("n1-holder", 0, 300, 1, 3, 1),
        job("head", 1, 50, 1, 4, 1),
        job("long-1gpu", 2, 1000, 1, 1, 1),
        job("long-2gpu", 3, 1000, 1, 2, 1),
    ];
    let out = run("easy-backfill", nodes(2, 4), jobs);
    assert_eq!(pods(&out, "n1-holder"), vec![(0, 300, 1, EndReason::Completed)]);
    assert_eq!(pods(&out, "long-1gpu"), vec![(2, 1002, 1, EndReason::Completed)]);
    assert_eq!(pods(&out, "head"), vec![(100, 150, 0, EndReason::Completed)]);
    // At t=3 nothing is free; at t=100 the head takes node 0, and long-2gpu starts on
    // node 0 once the head ends.
    assert_eq!(pods(&out, "long-2gpu"), vec![(150, 1150, 0, EndReason::Completed)]);
}

/// The head takes capacity released by the shadow time before capacity idle now
/// (Mu'alem & Feitelson's EASY: `extra` = free at the shadow time − the head's
/// size, wherever it is). At t=100 node 1's four GPUs come back and the 4-pod head
/// fits there whole, so the two GPUs idle on node 0 stay spare: `long` (running
/// past t=100) backfills on them at t=2 and the head still starts at t=100. Taking
/// node 0's idle GPUs first, in node order, reserved them and held `long` back
/// until t=100.
#[test]
fn easy_backfill_reserves_released_capacity_before_idle() {
    let jobs = vec![
        job("n0-holder", 0, 300, 1, 2, 1),
        job("n1-holder", 0, 100, 1, 4, 1),
        job("head", 1, 50, 4, 1, 4),
        job("long", 2, 1000, 1, 2, 1),
    ];
    let out = run("easy-backfill", nodes(2, 4), jobs);
    assert_eq!(pods(&out, "n0-holder"), vec![(0, 300, 0, EndReason::Completed)]);
    assert_eq!(pods(&out, "n1-holder"), vec![(0, 100, 1, EndReason::Completed)]);
    assert_eq!(pods(&out, "long"), vec![(2, 1002, 0, EndReason::Completed)]);
    assert_eq!(span(&out, "head"), (Some(100), Some(150)), "the head is not delayed");
    assert!(pods(&out, "head").iter().all(|p| p.2 == 1), "{:?}", pods(&out, "head"));
}

/// A head that can never fit gets no reservation: later jobs start whenever they fit
/// (strict fifo would block them for ever).
#[test]
fn easy_backfill_without_possible_reservation() {
    let jobs = vec![job("huge", 0, 10, 3, 4, 3), job("tiny", 1, 10, 1, 1, 1), job("wide", 2, 10, 1, 4, 1)];
    let out = run("easy-backfill", nodes(2, 4), jobs);
    assert_eq!(span(&out, "huge"), (None, None));
    assert_eq!(span(&out, "tiny"), (Some(1), Some(11)));
    assert_eq!(pods(&out, "wide"), vec![(2, 12, 1, EndReason::Completed)]);
}

// ---- tiresias --------------------------------------------------------------------

/// `long` (4 GPUs) crosses 3,200 GPU·s at t=800 exactly and drops to queue 1; the
/// queue-0 job waiting since t=10 (same queue until then: no preemption) preempts it
/// at once. It starts when the evicted pod has released its GPUs (30 s grace), and
/// `long` resumes from its checkpoint (800 s done) after it.
#[test]
fn tiresias_demotes_at_the_threshold_and_preempts() {
    let jobs = vec![checkpointed(job("long", 0, 2000, 1, 4, 1), 100), job("short", 10, 100, 1, 4, 1)];
    let out = run("tiresias", nodes(1, 4), jobs);
    assert_eq!(pods(&out, "long"), vec![(0, 800, 0, EndReason::Preempted), (930, 2130, 0, EndReason::Completed)]);
    assert_eq!(pods(&out, "short"), vec![(830, 930, 0, EndReason::Completed)]);
    let long = &out.world.jobs[job_id(&out, "long")];
    assert_eq!(long.preemptions, 1);
    assert_eq!(long.progress.lost_gpu_us, 0, "preempted right at a checkpoint");
    let evict = out.decisions.iter().find(|d| d.kind == DecisionKind::Evict).expect("an eviction");
    assert_eq!((evict.t, evict.action), (SimTime(800 * S), "preempt"));
    let pipe = out.decisions.iter().find(|d| d.kind == DecisionKind::Pipeline).expect("a pipeline");
    assert_eq!((pipe.t, pipe.job), (SimTime(800 * S), job_id(&out, "short")));
}

/// A queue-0 job arriving when a running job is already in queue 1 preempts it at
/// once. Suspended (the default), `long` saves its 1,000 s at the preemption and
/// resumes from there after `new`: 1,000 s more from t=1130.
#[test]
fn tiresias_suspends_a_preempted_job() {
    let jobs = vec![checkpointed(job("long", 0, 2000, 1, 4, 1), 300), job("new", 1000, 100, 1, 4, 1)];
    let out = run("tiresias", nodes(1, 4), jobs);
    assert_eq!(pods(&out, "long"), vec![(0, 1000, 0, EndReason::Preempted), (1130, 2130, 0, EndReason::Completed)]);
    assert_eq!(pods(&out, "new"), vec![(1030, 1130, 0, EndReason::Completed)]);
    assert_eq!(out.world.jobs[job_id(&out, "long")].progress.lost_gpu_us, 0);
}

/// The same without suspension: the work since the last checkpoint is lost and
/// accounted for.
#[test]
fn tiresias_preempts_a_lower_priority_job() {
    let jobs = vec![checkpointed(job("long", 0, 2000, 1, 4, 1), 300), job("new", 1000, 100, 1, 4, 1)];
    let lossy = TiresiasConfig { suspend: false, ..TiresiasConfig::default() };
    let out = run_with(Box::new(Tiresias::new(lossy)), nodes(1, 4), jobs);
    // Checkpoints every 300 s: 900 s saved at t=1000, 100 s × 4 GPUs lost.
    assert_eq!(pods(&out, "long"), vec![(0, 1000, 0, EndReason::Preempted), (1130, 2230, 0, EndReason::Completed)]);
    assert_eq!(pods(&out, "new"), vec![(1030, 1130, 0, EndReason::Completed)]);
    assert_eq!(out.world.jobs[job_id(&out, "long")].progress.lost_gpu_us, 100 * S as u128 * 4);
}

/// Starvation guard with PROMOTE_KNOB = 2 and six 700 s queue-0 jobs. `long` runs
/// 800 s and is preempted at t=800. Promotion is due when its waiting time since its
/// last promotion reaches 2 × its run time since then (800 s): at t=2400. In queue 0,
/// FIFO first, it starts when the running short job ends (t=2930, ahead of s3), is
/// demoted again 800 s later and preempted by s3 (t=3730). Its second promotion is due
/// when 530 s (waited 2400-2930) + the new wait reach 2 × 800 s: t=4800, so at t=5160
/// it starts ahead of s5 (measuring from the last run alone, it would be due at
/// t=5330, after s5 started). Without the guard it waits for all six short jobs.
#[test]
fn tiresias_starvation_guard_promotes() {
    let jobs = || {
        let mut v = vec![checkpointed(job("long", 0, 2000, 1, 4, 1), 100)];
        for k in 0..6u64 {
            v.push(job(&format!("s{k}"), 10 + k, 700, 1, 4, 1));
        }
        v
    };
    let cfg = |knob| TiresiasConfig { thresholds_gpu_secs: vec![3200], promote_knob: knob, suspend: true };

    let out = run_with(Box::new(Tiresias::new(cfg(2))), nodes(1, 4), jobs());
    assert_eq!(
        pods(&out, "long"),
        vec![
            (0, 800, 0, EndReason::Preempted),
            (2930, 3730, 0, EndReason::Preempted),
            (5160, 5560, 0, EndReason::Completed),
        ]
    );
    let starts = [(830, 1530), (1530, 2230), (2230, 2930), (3760, 4460), (4460, 5160), (5560, 6260)];
    for (k, &(a, b)) in starts.iter().enumerate() {
        assert_eq!(span(&out, &format!("s{k}")), (Some(a), Some(b)), "s{k}");
    }

    let off = run_with(Box::new(Tiresias::new(cfg(0))), nodes(1, 4), jobs());
    assert_eq!(pods(&off, "long"), vec![(0, 800, 0, EndReason::Preempted), (5030, 6230, 0, EndReason::Completed)]);
    assert_eq!(span(&off, "s5"), (Some(4330), Some(5030)));
}

/// A preemptor holds the room its victims free until it binds there. Threshold
/// 1,000 GPU·s: `long` (4 GPUs, node 1) is in queue 1 from t=250; `p` (4 GPUs)
/// arrives at t=390 with node 0 full of two queue-0 jobs, evicts `long` and is
/// pipelined onto node 1. Node 0 empties at t=400, but `p`'s claim is node 1: it
/// binds there when `long`'s pod has gone (t=420), and `long`, recreated then,
/// starts on node 0. (Re-placing the preemptor first fit in every session, as
/// before the claims, started it on node 0 at t=400.)
#[test]
fn tiresias_preemptor_binds_where_its_victims_were() {
    let jobs = vec![
        job("a", 0, 400, 1, 2, 1),
        job("b", 0, 400, 1, 2, 1),
        job("long", 0, 2000, 1, 4, 1),
        job("p", 390, 100, 1, 4, 1),
    ];
    let cfg = TiresiasConfig { thresholds_gpu_secs: vec![1000], promote_knob: 8, suspend: true };
    let out = run_with(Box::new(Tiresias::new(cfg)), nodes(2, 4), jobs);
    assert_eq!(pods(&out, "a"), vec![(0, 400, 0, EndReason::Completed)]);
    assert_eq!(pods(&out, "b"), vec![(0, 400, 0, EndReason::Completed)]);
    assert_eq!(pods(&out, "p"), vec![(420, 520, 1, EndReason::Completed)]);
    assert_eq!(pods(&out, "long"), vec![(0, 390, 1, EndReason::Preempted), (420, 2030, 0, EndReason::Completed)]);
    let pipelines: Vec<_> = out.decisions.iter().filter(|d| d.kind == DecisionKind::Pipeline).collect();
    assert_eq!(pipelines.len(), 1, "the claim is pipelined once, not again in each session: {pipelines:?}");
    assert_eq!((pipelines[0].t, pipelines[0].node), (SimTime(390 * S), Some(NodeId(1))));
}

/// Only victims on the nodes the preemptor takes are evicted. Threshold 1,000 GPU·s:
/// `mid` (4 GPUs, node 1) and `late` (3 GPUs, node 0, next to the 1-GPU `holder`)
/// are in queue 1 when `p` (4 GPUs) arrives at t=400; `holder` is still in queue 0.
/// Lowest priority first, `late` then `mid` are evicted in the trial; the gang then
/// fits node 1 only, so only `mid` is evicted and `late` runs on (without
/// suspension: `mid` loses its work).
#[test]
fn tiresias_evicts_only_victims_on_the_nodes_it_takes() {
    let jobs = vec![
        job("holder", 0, 5000, 1, 1, 1),
        job("mid", 1, 1000, 1, 4, 1),
        job("late", 2, 5000, 1, 3, 1),
        job("p", 400, 100, 1, 4, 1),
    ];
    let cfg = TiresiasConfig { thresholds_gpu_secs: vec![1000], promote_knob: 8, suspend: false };
    let out = run_with(Box::new(Tiresias::new(cfg)), nodes(2, 4), jobs);
    assert_eq!(pods(&out, "late"), vec![(2, 5002, 0, EndReason::Completed)]);
    assert_eq!(pods(&out, "holder"), vec![(0, 5000, 0, EndReason::Completed)]);
    // No checkpoint: the 399 s done are lost and redone.
    assert_eq!(pods(&out, "mid"), vec![(1, 400, 1, EndReason::Preempted), (530, 1530, 1, EndReason::Completed)]);
    assert_eq!(pods(&out, "p"), vec![(430, 530, 1, EndReason::Completed)]);
    assert_eq!(out.world.jobs[job_id(&out, "mid")].progress.lost_gpu_us, 399 * S as u128 * 4);
}
