//! Faults and lifecycle policies on hand-built worlds: every time below is
//! computed by hand in the comment above its assertion.

use crate::common::*;

use lahar_core::engine::{EndReason, Engine, EngineConfig, RunOutput};
use lahar_core::faults::{Dist, FaultPlan, FaultRule, Outage, OutageKind, RuleScope, Target};
use lahar_core::model::cluster::{Cluster, Node, NodeId};
use lahar_core::model::job::*;
use lahar_core::model::queue::Queue;
use lahar_core::model::resource::ResourceNames;
use lahar_core::model::topology::{FabricTier, Topology};
use lahar_core::util::time::{SimDuration, SimTime};
use lahar_core::world::World;

fn secs(s: u64) -> SimDuration {
    SimDuration(s * S)
}

fn outage(at: u64, nodes: &[u32], dur: u64, kind: OutageKind) -> Outage {
    Outage {
        at: SimTime(at * S),
        target: Target::Nodes(nodes.iter().map(|&n| NodeId(n)).collect()),
        duration: secs(dur),
        kind,
        cause: "trace:2".into(),
    }
}

fn run_with(
    nodes: Vec<Node>,
    topo: Topology,
    jobs: Vec<JobSpec>,
    evict_at: Vec<(u64, usize)>,
    plan: FaultPlan,
) -> RunOutput {
    let cluster = Cluster::new(nodes, ResourceNames::default(), topo);
    let world = World::new(cluster, vec![Queue::new("default")], jobs);
    let mut e = Engine::new(world, Box::new(Scripted { evict_at }), ideal(), EngineConfig::default());
    e.set_faults(plan);
    let out = e.run();
    out.world.check_invariants().unwrap();
    out
}

fn run_faults(nodes: Vec<Node>, jobs: Vec<JobSpec>, outages: Vec<Outage>) -> RunOutput {
    let n = nodes.len();
    run_with(nodes, Topology::flat(n), jobs, vec![], FaultPlan { rules: vec![], outages })
}

/// (start s, end s, reason) of job `j`'s pod intervals, in time order.
fn intervals(out: &RunOutput, j: u32) -> Vec<(u64, u64, EndReason)> {
    let mut v: Vec<_> = out
        .pods
        .iter()
        .filter(|p| p.job == JobId(j))
        .map(|p| (p.start.micros() / S, p.end.micros() / S, p.reason))
        .collect();
    v.sort();
    v
}

/// Two 4-GPU nodes; a gang of 2 pods × 4 GPUs (one per node), 100 s of work.
fn gang() -> JobSpec {
    job("g", 0, 100, 2, 4, 2)
}

/// n1 fails at 30 for 50 s. Without a checkpoint the gang loses its 30 s; its
/// failed pod is recreated at once and placed when n1 is back at 80; the gang
/// runs its 100 s again: ends at 180. Lost: 30 s × 8 GPUs.
#[test]
fn node_failure_kills_a_gang_without_checkpoint() {
    let out =
        run_faults(vec![node("n0", 4), node("n1", 4)], vec![gang()], vec![outage(30, &[1], 50, OutageKind::Node)]);
    let j = &out.world.jobs[lahar_core::model::ids::JobId(0)];
    assert_eq!((j.phase, j.end), (JobPhase::Completed, Some(SimTime(180 * S))));
    assert_eq!(j.progress.lost_gpu_us, 30 * S as u128 * 8);
    assert_eq!(j.progress.lost_to_faults_gpu_us, 30 * S as u128 * 8);
    assert_eq!(j.retries, 0);
    assert_eq!(
        intervals(&out, 0),
        vec![(0, 30, EndReason::Failed), (0, 180, EndReason::Completed), (80, 180, EndReason::Completed)]
    );
    let ev: Vec<_> = out.faults.iter().map(|f| (f.t.micros() / S, f.event, f.gpu_milli, f.pods)).collect();
    assert_eq!(ev, vec![(30, "fail", 4000, 1), (80, "repair", 4000, 0)]);
}

/// The same with a checkpoint every 20 s: at 30 the last checkpoint is at 20,
/// 10 s are lost, 80 s remain from 80: ends at 160.
#[test]
fn node_failure_with_checkpoint_loses_work_since_it() {
    let mut g = gang();
    g.checkpoint_interval = Some(secs(20));
    let out = run_faults(vec![node("n0", 4), node("n1", 4)], vec![g], vec![outage(30, &[1], 50, OutageKind::Node)]);
    let j = &out.world.jobs[lahar_core::model::ids::JobId(0)];
    assert_eq!(j.end, Some(SimTime(160 * S)));
    assert_eq!(j.progress.lost_to_faults_gpu_us, 10 * S as u128 * 8);
}

/// A job of two 1-pod tasks, `a` on n0 and `b` on n1; n1 fails at 30 for 10 s.
fn two_tasks(action: PolicyAction) -> JobSpec {
    let mut j = job("t", 0, 100, 1, 4, 1);
    let mut b = j.tasks[0].clone();
    b.name = "b".into();
    j.tasks.push(b);
    j.min_available = 2;
    j.policies = vec![Policy { event: PolicyEvent::PodFailed, action, timeout: None }];
    j.min_resources = j.compute_min_resources();
    j
}

/// RestartTask restarts only `b`: its replacement is placed when n1 is back at
/// 40 and the job reruns its 100 s: ends at 140; `a`'s pod runs throughout.
/// RestartJob kills `a`'s pod too (released after its 30 s grace, at 60); the
/// job's pods are recreated then and run from 60: ends at 160.
#[test]
fn restart_task_versus_restart_job() {
    let nodes = || vec![node("n0", 4), node("n1", 4)];
    let out =
        run_faults(nodes(), vec![two_tasks(PolicyAction::RestartTask)], vec![outage(30, &[1], 10, OutageKind::Node)]);
    let j = &out.world.jobs[lahar_core::model::ids::JobId(0)];
    assert_eq!((j.phase, j.end, j.retries), (JobPhase::Completed, Some(SimTime(140 * S)), 1));
    assert_eq!(
        intervals(&out, 0),
        vec![(0, 30, EndReason::Failed), (0, 140, EndReason::Completed), (40, 140, EndReason::Completed)]
    );
    let out =
        run_faults(nodes(), vec![two_tasks(PolicyAction::RestartJob)], vec![outage(30, &[1], 10, OutageKind::Node)]);
    let j = &out.world.jobs[lahar_core::model::ids::JobId(0)];
    assert_eq!((j.phase, j.end, j.retries), (JobPhase::Completed, Some(SimTime(160 * S)), 1));
    assert_eq!(
        intervals(&out, 0),
        vec![
            (0, 30, EndReason::Restarted),
            (0, 30, EndReason::Failed),
            (60, 160, EndReason::Completed),
            (60, 160, EndReason::Completed)
        ]
    );
}

/// With maxRetry 1 the first failure's RestartJob is the last: the job fails at 30.
#[test]
fn max_retry_exhausted_fails_the_job() {
    let mut j = two_tasks(PolicyAction::RestartJob);
    j.max_retry = 1;
    let out = run_faults(vec![node("n0", 4), node("n1", 4)], vec![j], vec![outage(30, &[1], 10, OutageKind::Node)]);
    let j = &out.world.jobs[lahar_core::model::ids::JobId(0)];
    assert_eq!((j.phase, j.end, j.retries), (JobPhase::Failed, Some(SimTime(30 * S)), 1));
}

/// TerminateJob and AbortJob end the job once the pod they kill at the failure
/// (30) is gone after its 30 s grace; CompleteJob ends it Completed so.
#[test]
fn terminate_abort_and_complete_on_failure() {
    for (action, phase) in [
        (PolicyAction::TerminateJob, JobPhase::Terminated),
        (PolicyAction::AbortJob, JobPhase::Aborted),
        (PolicyAction::CompleteJob, JobPhase::Completed),
    ] {
        let out = run_faults(
            vec![node("n0", 4), node("n1", 4)],
            vec![two_tasks(action)],
            vec![outage(30, &[1], 10, OutageKind::Node)],
        );
        let j = &out.world.jobs[lahar_core::model::ids::JobId(0)];
        assert_eq!((j.phase, j.end), (phase, Some(SimTime(60 * S))), "{action:?}");
        assert_eq!(intervals(&out, 0), vec![(0, 30, EndReason::Killed), (0, 30, EndReason::Failed)], "{action:?}");
    }
}

/// An 8-GPU node runs A (8 GPUs, 100 s). One GPU fails at 10 for 50 s: A is
/// killed (it holds every device) and cannot fit on 7 GPUs. B (4 GPUs, 100 s)
/// arrives at 20 and starts at once on the 7 left. At the repair (60) B still
/// holds 4: A starts when B ends at 120 and ends at 220.
#[test]
fn gpu_fault_shrinks_a_node() {
    let out = run_faults(
        vec![node("n0", 8)],
        vec![job("A", 0, 100, 1, 8, 1), job("B", 20, 100, 1, 4, 1)],
        vec![outage(10, &[0], 50, OutageKind::Gpus(1))],
    );
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(0)].end, Some(SimTime(220 * S)));
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(1)].first_start, Some(SimTime(20 * S)));
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(1)].end, Some(SimTime(120 * S)));
    assert_eq!(intervals(&out, 0), vec![(0, 10, EndReason::Failed), (120, 220, EndReason::Completed)]);
    assert_eq!(out.world.cluster.node(NodeId(0)).allocatable.gpu_milli(), 8000);
    let ev: Vec<_> = out.faults.iter().map(|f| (f.t.micros() / S, f.event, f.scope, f.gpu_milli)).collect();
    assert_eq!(ev, vec![(10, "fail", "gpu", 1000), (60, "repair", "gpu", 1000)]);
}

/// Two leaves of two 4-GPU nodes. The gang (2 × 4 GPUs) runs on leaf-0; leaf-0's
/// switch fails at 10 for 1000 s. Both pods fail; their replacements go to
/// leaf-1 at once: 100 s from 10, ends at 110.
#[test]
fn switch_failure_takes_a_hypernode_down() {
    let tiers = [FabricTier { tier: 1, name: "leaf".into(), fanout: 2, oversubscription: 1.0 }];
    let topo = Topology::from_fabric(4, &tiers).unwrap();
    let leaf0 = topo.hypernodes.iter().position(|h| h.name == "leaf-0").unwrap() as u32;
    let sw = Outage {
        at: SimTime(10 * S),
        target: Target::HyperNode(lahar_core::model::topology::HyperNodeId(leaf0)),
        duration: secs(1000),
        kind: OutageKind::Switch,
        cause: "trace:2".into(),
    };
    let nodes = (0..4).map(|i| node(&format!("n{i}"), 4)).collect();
    let out = run_with(nodes, topo, vec![gang()], vec![], FaultPlan { rules: vec![], outages: vec![sw] });
    let j = &out.world.jobs[lahar_core::model::ids::JobId(0)];
    assert_eq!(j.end, Some(SimTime(110 * S)));
    let on: Vec<_> = out.pods.iter().map(|p| (p.node.0, p.end.micros() / S, p.reason)).collect::<Vec<_>>();
    let mut on = on;
    on.sort();
    assert_eq!(
        on,
        vec![
            (0, 10, EndReason::Failed),
            (1, 10, EndReason::Failed),
            (2, 110, EndReason::Completed),
            (3, 110, EndReason::Completed)
        ]
    );
    assert_eq!((out.faults[0].target.as_str(), out.faults[0].nodes, out.faults[0].pods), ("leaf-0", 2, 2));
}

/// A drain of n0 at 10 with a 20 s deadline and 100 s of maintenance: the job on
/// n0 (1 pod, 100 s) is evicted at 30, released at 60 (30 s grace) and
/// recreated; n0 stays cordoned until 130, so it runs on n1 from 60: ends at 160.
/// A job arriving at 15 does not go to the cordoned n0 either.
#[test]
fn drain_cordons_then_evicts_at_the_deadline() {
    let d = outage(10, &[0], 100, OutageKind::Drain { deadline: secs(20) });
    let out = run_faults(
        vec![node("n0", 4), node("n1", 8)],
        vec![job("a", 0, 100, 1, 4, 1), job("b", 15, 10, 1, 4, 1)],
        vec![d],
    );
    assert_eq!(intervals(&out, 0), vec![(0, 30, EndReason::Evicted), (60, 160, EndReason::Completed)]);
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(0)].preemptions, 0);
    let b: Vec<_> = out.pods.iter().filter(|p| p.job == JobId(1)).map(|p| p.node.0).collect();
    assert_eq!(b, vec![1]);
    let ev: Vec<_> = out.faults.iter().map(|f| (f.t.micros() / S, f.event, f.pods)).collect();
    assert_eq!(ev, vec![(10, "cordon", 0), (30, "evict", 1), (130, "uncordon", 0)]);
}

/// Random failures are drawn from the seed: the same seed gives the same
/// events, another seed others; the run ends when only failures are left.
#[test]
fn random_failures_follow_the_seed_and_end_with_the_work() {
    let rule = FaultRule {
        name: "hosts".into(),
        scope: RuleScope::Node,
        units: vec![0, 1],
        between: Dist::Exponential { mean: secs(200) },
        repair: Dist::Fixed(secs(30)),
    };
    let go = |seed: u64| {
        let cluster = Cluster::new(vec![node("n0", 4), node("n1", 4)], ResourceNames::default(), Topology::flat(2));
        let jobs = (0..6).map(|i| job(&format!("j{i}"), i * 50, 100, 1, 4, 1)).collect();
        let world = World::new(cluster, vec![Queue::new("default")], jobs);
        let cfg = EngineConfig { seed, ..EngineConfig::default() };
        let mut e = Engine::new(world, Box::new(Scripted { evict_at: vec![] }), ideal(), cfg);
        e.set_faults(FaultPlan { rules: vec![rule.clone()], outages: vec![] });
        let out = e.run();
        out.world.check_invariants().unwrap();
        assert!(out.world.jobs.iter().all(|j| j.phase == JobPhase::Completed));
        assert!(!out.stats.cut_short);
        out.faults.iter().map(|f| (f.t, f.event, f.target.clone())).collect::<Vec<_>>()
    };
    let a = go(1);
    assert_eq!(a, go(1));
    assert_ne!(a, go(2));
    assert!(a.iter().any(|f| f.1 == "fail"));
}

/// Overlapping outages of one node: its capacity comes back only when the
/// last ends.
#[test]
fn overlapping_outages_give_capacity_back_only_when_all_end() {
    // n0 down 10..50 (node) and 30..70 (its switch, as a node list); a 4-GPU
    // job arriving at 20 waits for n0 until 70 and runs 70..170.
    let out = run_faults(
        vec![node("n0", 4)],
        vec![job("a", 20, 100, 1, 4, 1)],
        vec![outage(10, &[0], 40, OutageKind::Node), outage(30, &[0], 40, OutageKind::Node)],
    );
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(0)].first_start, Some(SimTime(70 * S)));
    let ev: Vec<_> = out.faults.iter().map(|f| (f.t.micros() / S, f.event, f.gpu_milli)).collect();
    assert_eq!(ev, vec![(10, "fail", 4000), (30, "fail", 0), (50, "repair", 0), (70, "repair", 4000)]);
}

/// RestartTask after an eviction recreates the task's Pending pods too (they
/// were lost before). X (4 GPUs, 60 s) and r (3 pods × 4 GPUs, min 1, 100 s)
/// share an 8-GPU and a 4-GPU node: r runs 2 pods, 1 waits. At 10 r's running
/// pods are preempted (released at 40): RestartTask counts a retry and
/// recreates the waiting pod as well. From 40 two replacements
/// run (r restarts its 100 s: ends at 140); the third starts when X ends at 60.
#[test]
fn restart_task_recreates_the_pending_pods() {
    let mut r = job("r", 0, 100, 3, 4, 1);
    r.policies = vec![Policy { event: PolicyEvent::PodEvicted, action: PolicyAction::RestartTask, timeout: None }];
    let out = run_with(
        vec![node("n0", 8), node("n1", 4)],
        Topology::flat(2),
        vec![job("X", 0, 60, 1, 4, 1), r],
        vec![(10, 1)],
        FaultPlan::default(),
    );
    let r = &out.world.jobs[lahar_core::model::ids::JobId(1)];
    assert_eq!((r.end, r.retries), (Some(SimTime(140 * S)), 1));
    assert_eq!(
        intervals(&out, 1),
        vec![
            (0, 10, EndReason::Preempted),
            (0, 10, EndReason::Preempted),
            (40, 140, EndReason::Completed),
            (40, 140, EndReason::Completed),
            (60, 140, EndReason::Completed)
        ]
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    struct Plan {
        jobs: Vec<(u64, u64, u32, i64, bool)>,
        outages: Vec<(u64, u32, u64, Option<u32>)>,
    }

    fn plans() -> impl Strategy<Value = Plan> {
        let job = (0u64..100, 10u64..200, 1u32..4, 1i64..5, any::<bool>());
        let outage = (0u64..400, 0u32..4, 1u64..120, prop::option::of(1u32..3));
        (prop::collection::vec(job, 1..7), prop::collection::vec(outage, 0..8))
            .prop_map(|(jobs, outages)| Plan { jobs, outages })
    }

    fn run_plan(p: &Plan) -> RunOutput {
        let jobs = p
            .jobs
            .iter()
            .enumerate()
            .map(|(i, &(submit, dur, replicas, gpus, ckpt))| {
                let mut j = job(&format!("j{i}"), submit, dur, replicas, gpus, replicas);
                j.checkpoint_interval = ckpt.then(|| secs(7));
                j
            })
            .collect();
        let mut outages: Vec<Outage> = p
            .outages
            .iter()
            .map(|&(at, n, dur, gpus)| outage(at, &[n], dur, gpus.map_or(OutageKind::Node, OutageKind::Gpus)))
            .collect();
        outages.sort_by_key(|o| o.at);
        run_faults((0..4).map(|i| node(&format!("n{i}"), 4)).collect(), jobs, outages)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// No pod runs on a node while a node outage holds it; every job
        /// finishes; and work is conserved: for these gangs at the ideal speed
        /// the time a job progressed (all its pods running) is its run time plus
        /// the work it lost, to the microsecond.
        #[test]
        fn failed_capacity_is_never_used_and_work_is_conserved(p in plans()) {
            let out = run_plan(&p);
            for &(at, n, dur, gpus) in &p.outages {
                if gpus.is_some() {
                    continue;
                }
                let (a, b) = (at * S, (at + dur) * S);
                for r in out.pods.iter().filter(|r| r.node == NodeId(n)) {
                    prop_assert!(r.end.micros() <= a || r.start.micros() >= b, "pod {:?} on n{n} during [{at}, {}) s", r, at + dur);
                }
            }
            for (i, j) in out.world.jobs.iter().enumerate() {
                prop_assert_eq!(j.phase, JobPhase::Completed);
                let min = j.spec.min_available;
                let mut edges: Vec<(u64, i32)> = out
                    .pods
                    .iter()
                    .filter(|r| r.job == JobId(i as u32))
                    .flat_map(|r| [(r.start.micros(), 1), (r.end.micros(), -1)])
                    .collect();
                edges.sort();
                let (mut running, mut since, mut progressed) = (0i32, 0u64, 0u64);
                for (t, d) in edges {
                    if running >= min as i32 {
                        progressed += t - since;
                    }
                    running += d;
                    since = t;
                }
                let lost = (j.progress.lost_gpu_us / j.spec.total_gpus() as u128) as u64;
                prop_assert_eq!(progressed, j.spec.duration.micros() + lost, "job {}", i);
                prop_assert_eq!(j.progress.lost_gpu_us, j.progress.lost_to_faults_gpu_us);
            }
        }
    }
}

/// A job of `launcher` (1 pod, its own run time `launcher_s`) and `worker`
/// (2 pods), 4 GPUs each, on two 8-GPU nodes, with `policies` on the launcher.
fn launched(launcher_s: u64, min: u32, policies: Vec<Policy>) -> JobSpec {
    let mut j = job("l", 0, 100, 2, 4, min);
    let mut launcher = j.tasks[0].clone();
    launcher.name = "launcher".into();
    launcher.replicas = 1;
    launcher.min_available = 1;
    launcher.run_time = Some(secs(launcher_s));
    launcher.policies = policies;
    j.tasks[0].min_available = 0;
    j.tasks.insert(0, launcher);
    j.min_resources = j.compute_min_resources();
    j
}

/// `TaskCompleted → CompleteJob` (Volcano's MPI example): the launcher ends
/// at 30 and the job's workers are killed then; it is Completed once they are
/// gone, after their 30 s grace (Volcano's Completing state).
#[test]
fn task_completed_completes_the_job() {
    let p = vec![Policy { event: PolicyEvent::TaskCompleted, action: PolicyAction::CompleteJob, timeout: None }];
    let out = run_faults(vec![node("n0", 8), node("n1", 8)], vec![launched(30, 3, p)], vec![]);
    let j = &out.world.jobs[lahar_core::model::ids::JobId(0)];
    assert_eq!((j.phase, j.end), (JobPhase::Completed, Some(SimTime(60 * S))));
    assert_eq!(
        intervals(&out, 0),
        vec![(0, 30, EndReason::Completed), (0, 30, EndReason::Killed), (0, 30, EndReason::Killed)]
    );
}

/// Without a policy a completed task's pods leave their node and the job goes
/// on (its Succeeded pods count towards its minimum): the launcher's 4 GPUs
/// free at 20 let B (4 GPUs, waiting since 5) start then; the job ends at 100.
#[test]
fn a_completed_task_frees_its_node_and_the_job_goes_on() {
    let out =
        run_faults(vec![node("n0", 8), node("n1", 4)], vec![launched(20, 3, vec![]), job("B", 5, 50, 1, 4, 1)], vec![]);
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(0)].end, Some(SimTime(100 * S)));
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(1)].first_start, Some(SimTime(20 * S)));
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(1)].end, Some(SimTime(70 * S)));
}

/// A job all of whose pods have run their own run time is Completed, before
/// its work would end (Volcano's job controller: every pod Succeeded).
#[test]
fn a_job_whose_pods_all_succeed_is_completed() {
    let mut j = job("t", 0, 100, 2, 4, 2);
    j.tasks[0].run_time = Some(secs(40));
    let out = run_faults(vec![node("n0", 8)], vec![j], vec![]);
    assert_eq!(
        (out.world.jobs[lahar_core::model::ids::JobId(0)].phase, out.world.jobs[lahar_core::model::ids::JobId(0)].end),
        (JobPhase::Completed, Some(SimTime(40 * S)))
    );
    assert_eq!(intervals(&out, 0), vec![(0, 40, EndReason::Completed), (0, 40, EndReason::Completed)]);
}
