//! Engine behaviour on hand-built worlds: progress under changing speed, evictions,
//! checkpoints, lifecycle policies, and the Statement contract.

use lahar_core::engine::{EndReason, Engine, EngineConfig, FULL_SPEED_PPM, RuntimeModel};
use lahar_core::model::cluster::{Cluster, NodeId};
use lahar_core::model::job::*;
use lahar_core::model::queue::Queue;
use lahar_core::model::resource::{ResourceNames, Resources};
use lahar_core::model::topology::Topology;
use lahar_core::session::{Scheduler, Session};
use lahar_core::util::rng::RngStreams;
use lahar_core::util::time::{SimDuration, SimTime};
use lahar_core::world::{DeviceHold, World};

use crate::common::*;

/// The job named `elastic` runs at half speed on one pod, full speed with two or
/// more; every other job at full speed.
struct ByPods;
impl RuntimeModel for ByPods {
    fn speed_ppm(&self, w: &World, j: JobId, _: &[NodeId]) -> u32 {
        let job = &w.jobs[j];
        if job.spec.name == "elastic" && job.count(PodStatus::Running) < 2 {
            FULL_SPEED_PPM / 2
        } else {
            FULL_SPEED_PPM
        }
    }
}

/// A speed change mid-run credits the work done at the old speed before the
/// finish event is rescheduled (the bug of Batsim issues #10 and #66).
#[test]
fn speed_change_credits_work_then_reschedules() {
    // One 8-GPU node; a blocker holds 4 GPUs for 40 s. The job (2 pods × 4 GPUs,
    // minAvailable 1) starts at 0 with one pod at half speed: 20 s of work by t=40.
    // Its second pod starts at 40, full speed: the remaining 80 s end at t=120.
    let out = run(
        vec![node("n0", 8)],
        vec![job("blocker", 0, 40, 1, 4, 1), job("elastic", 0, 100, 2, 4, 1)],
        vec![],
        Box::new(ByPods),
    );
    let j = &out.world.jobs[lahar_core::model::ids::JobId(1)];
    assert_eq!(j.first_start, Some(SimTime(0)));
    assert_eq!(j.end, Some(SimTime(120 * S)));
    assert_eq!(j.phase, JobPhase::Completed);
    assert_eq!(j.progress.done, 100 * S);
}

/// Eviction ends the interval, loses work since the last checkpoint, and the pod
/// comes back after its grace period.
#[test]
fn eviction_loses_work_since_checkpoint_and_restarts_pod() {
    let mut j = job("ckpt", 0, 100, 1, 2, 1);
    j.checkpoint_interval = Some(SimDuration::from_secs(30));
    let out = run(vec![node("n0", 8)], vec![j], vec![(50, 0)], ideal());
    let job = &out.world.jobs[lahar_core::model::ids::JobId(0)];
    // 50 s done, 30 s checkpointed → 20 s lost. Released at 80, 70 s left → 150.
    assert_eq!(job.end, Some(SimTime(150 * S)));
    assert_eq!(job.preemptions, 1);
    assert_eq!(job.progress.lost_gpu_us, 20 * S as u128 * 2);
    let mut recs: Vec<_> = out.pods.iter().map(|p| (p.start.micros() / S, p.end.micros() / S, p.reason)).collect();
    recs.sort();
    assert_eq!(recs, vec![(0, 50, EndReason::Preempted), (80, 150, EndReason::Completed)]);
    out.world.check_invariants().unwrap();
}

/// Without checkpoints all progress is lost.
#[test]
fn eviction_without_checkpoint_loses_everything() {
    let out = run(vec![node("n0", 8)], vec![job("j", 0, 100, 1, 1, 1)], vec![(50, 0)], ideal());
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(0)].end, Some(SimTime(180 * S)));
}

/// PodEvicted → RestartJob counts retries; reaching maxRetry fails the job.
#[test]
fn restart_job_policy_and_max_retry() {
    let mut j = job("r", 0, 100, 2, 1, 2);
    j.policies = vec![Policy { event: PolicyEvent::PodEvicted, action: PolicyAction::RestartJob, timeout: None }];
    j.max_retry = 2;
    let out = run(vec![node("n0", 8)], vec![j.clone()], vec![(10, 0)], ideal());
    let r = &out.world.jobs[lahar_core::model::ids::JobId(0)];
    // retry 1 < 2: pods killed (released at 40), recreated, rerun 100 s from scratch.
    assert_eq!((r.phase, r.retries, r.end), (JobPhase::Completed, 1, Some(SimTime(140 * S))));
    let out = run(vec![node("n0", 8)], vec![j], vec![(10, 0), (60, 0)], ideal());
    let r = &out.world.jobs[lahar_core::model::ids::JobId(0)];
    assert_eq!((r.phase, r.retries, r.end), (JobPhase::Failed, 2, Some(SimTime(60 * S))));
    assert!(out.world.pods.iter().all(|p| !matches!(p.status, PodStatus::Running | PodStatus::Pending)));
}

/// PodEvicted → AbortJob kills the job's pods at once; it is Aborted once the
/// evicted pod is gone, after its 30 s grace (Volcano's Aborting state).
#[test]
fn abort_job_policy() {
    let mut j = job("a", 0, 100, 1, 1, 1);
    j.policies = vec![Policy { event: PolicyEvent::Any, action: PolicyAction::AbortJob, timeout: None }];
    let out = run(vec![node("n0", 8)], vec![j], vec![(10, 0)], ideal());
    assert_eq!(
        (out.world.jobs[lahar_core::model::ids::JobId(0)].phase, out.world.jobs[lahar_core::model::ids::JobId(0)].end),
        (JobPhase::Aborted, Some(SimTime(40 * S)))
    );
}

fn tiny_world() -> World {
    let cluster = Cluster::new(vec![node("n0", 8), node("n1", 8)], ResourceNames::default(), Topology::flat(2));
    let mut w = World::new(cluster, vec![Queue::new("default")], vec![job("g", 0, 10, 3, 4, 3)]);
    w.activate(JobId(0));
    for i in 0..3 {
        w.create_pod(JobId(0), 0, i, SimTime::ZERO);
    }
    w
}

/// A discarded statement leaves no trace; an uncommitted one is undone at close.
#[test]
fn discard_and_close_undo_everything() {
    let mut w = tiny_world();
    let mut rng = RngStreams::new(0).stream("t", 0);
    let mut ssn = Session::new(&mut w, SimTime::ZERO, 1, &mut rng);
    let pods = ssn.pending_pods(JobId(0));
    let mut st = ssn.statement();
    ssn.allocate(&mut st, pods[0], NodeId(0)).unwrap();
    ssn.allocate(&mut st, pods[1], NodeId(0)).unwrap();
    assert_eq!(ssn.idle(NodeId(0)).gpu_milli(), 0);
    assert_eq!(ssn.first_fit(&ssn.pod(pods[2]).req, 0), Some(NodeId(1)), "the index must see the allocation");
    assert_eq!(ssn.job(JobId(0)).ready_count(), 2);
    ssn.discard(st);
    assert_eq!(ssn.idle(NodeId(0)).gpu_milli(), 8000);
    assert_eq!(ssn.job(JobId(0)).count(PodStatus::Pending), 3);
    let mut open = ssn.statement();
    ssn.allocate(&mut open, pods[2], NodeId(1)).unwrap();
    std::mem::forget(open); // neither committed nor discarded
    let out = ssn.close();
    assert!(out.binds.is_empty());
    assert!(w.nodes.iter().all(|n| n.used.is_zero() && n.pods.is_empty()));
    assert_eq!(w.queues[0].allocated, Resources::ZERO);
    w.check_invariants().unwrap();
}

/// Allocation beyond idle resources is refused; pipelining onto releasing
/// resources is allowed; a pipeline after evictions becomes a nomination at close
/// when it is the pod's last operation of the session, committed or discarded
/// (Volcano's `TaskSchedulingReason` reads a discarded task's last transaction);
/// a plain pipeline nominates nothing and clears nothing.
#[test]
fn allocate_checks_idle_and_pipeline_nominates() {
    let mut w = tiny_world();
    let mut rng = RngStreams::new(0).stream("t", 0);
    let mut ssn = Session::new(&mut w, SimTime::ZERO, 1, &mut rng);
    let pods = ssn.pending_pods(JobId(0));
    let mut st = ssn.statement();
    ssn.allocate(&mut st, pods[0], NodeId(0)).unwrap();
    ssn.allocate(&mut st, pods[1], NodeId(0)).unwrap();
    assert!(ssn.allocate(&mut st, pods[2], NodeId(0)).is_err());
    ssn.commit(st);
    let out = ssn.close();
    assert_eq!(out.binds.len(), 2);
    // Make pod 0 Running, then evict it and pipeline pod 2 onto its resources.
    for (p, n) in out.binds {
        w.transition(p, PodStatus::Running, Some(n));
    }
    let mut ssn = Session::new(&mut w, SimTime(S), 2, &mut rng);
    let mut st = ssn.statement();
    ssn.evict(&mut st, pods[0], "test").unwrap();
    assert!(ssn.allocate(&mut st, pods[2], NodeId(0)).is_err());
    ssn.pipeline_after_evictions(&mut st, pods[2], NodeId(0), true).unwrap();
    assert_eq!(ssn.future_idle(NodeId(0)).gpu_milli(), 0);
    ssn.commit(st);
    let out = ssn.close();
    assert_eq!(out.evictions.len(), 1);
    assert_eq!(w.pods[pods[2]].status, PodStatus::Pending);
    assert_eq!(w.pods[pods[2]].nominated, Some(NodeId(0)));
    assert_eq!(w.pods[pods[0]].status, PodStatus::Releasing);
    w.check_invariants().unwrap();
    // `ops` pipelines pod 2 in turn (evicting or not) and discards each.
    let mut session = |w: &mut World, i: u64, ops: &[(bool, usize)]| {
        let mut ssn = Session::new(w, SimTime(S * i), i, &mut rng);
        for &(evicting, n) in ops {
            let mut st = ssn.statement();
            ssn.pipeline_after_evictions(&mut st, pods[2], NodeId(n as u32), evicting).unwrap();
            ssn.discard(st);
        }
        ssn.close();
        w.pods[pods[2]].nominated
    };
    assert_eq!(session(&mut w, 3, &[(false, 1)]), Some(NodeId(0)), "a plain pipeline clears nothing");
    assert_eq!(session(&mut w, 4, &[(true, 1)]), Some(NodeId(1)), "a discarded one after evictions nominates");
    assert_eq!(session(&mut w, 5, &[(true, 0), (false, 1)]), Some(NodeId(1)), "the pod's last operation decides");
    w.check_invariants().unwrap();
}

/// A retracted statement is undone as a discarded one is, and leaves no trace
/// at the close: its pipeline after evictions nominates nothing, nor does it
/// hide the pod's earlier operation (preempt tries a fruitless class's job
/// this way, and makes the attempt again in its turn when it matters).
#[test]
fn a_retracted_pipeline_nominates_nothing() {
    let mut w = tiny_world();
    let mut rng = RngStreams::new(0).stream("t", 0);
    let pods = Session::new(&mut w, SimTime::ZERO, 1, &mut rng).pending_pods(JobId(0));
    w.transition(pods[0], PodStatus::Running, Some(NodeId(0)));
    w.transition(pods[1], PodStatus::Running, Some(NodeId(0)));
    let mut ssn = Session::new(&mut w, SimTime(S), 2, &mut rng);
    let mut st = ssn.statement();
    ssn.evict(&mut st, pods[0], "test").unwrap();
    ssn.pipeline_after_evictions(&mut st, pods[2], NodeId(0), true).unwrap();
    assert!(ssn.nominates(&st));
    ssn.retract(st);
    assert_eq!(ssn.pod(pods[0]).status, PodStatus::Running);
    assert_eq!(ssn.pod(pods[2]).status, PodStatus::Pending);
    assert_eq!(ssn.nominated_at_close(pods[2]), None);
    let out = ssn.close();
    assert!(out.evictions.is_empty() && out.decisions.is_empty());
    assert_eq!(w.pods[pods[2]].nominated, None, "a retracted pipeline nominates nothing");
    // A discarded pipeline after evictions, then a retracted one elsewhere:
    // the discarded one is the pod's last operation.
    let mut ssn = Session::new(&mut w, SimTime(2 * S), 3, &mut rng);
    let mut st = ssn.statement();
    ssn.pipeline_after_evictions(&mut st, pods[2], NodeId(1), true).unwrap();
    ssn.discard(st);
    let mut st = ssn.statement();
    ssn.evict(&mut st, pods[0], "test").unwrap();
    ssn.pipeline_after_evictions(&mut st, pods[2], NodeId(0), true).unwrap();
    ssn.retract(st);
    let mut plain = ssn.statement();
    ssn.pipeline_after_evictions(&mut plain, pods[2], NodeId(1), false).unwrap();
    assert!(!ssn.nominates(&plain));
    ssn.retract(plain);
    assert_eq!(ssn.nominated_at_close(pods[2]), Some(NodeId(1)));
    ssn.close();
    assert_eq!(w.pods[pods[2]].nominated, Some(NodeId(1)));
    w.check_invariants().unwrap();
}

/// A hold takes a node's future-idle room for the session (the free-resource
/// index, the totals and the node's HyperNodes see it; idle resources and pods do
/// not move), is refused beyond the room, and is given back at the close.
#[test]
fn a_hold_takes_future_idle_room_until_the_close() {
    let mut w = tiny_world();
    let mut rng = RngStreams::new(0).stream("t", 0);
    let before_total = w.future_idle_total();
    let mut ssn = Session::new(&mut w, SimTime::ZERO, 1, &mut rng);
    let pods = ssn.pending_pods(JobId(0));
    let req = ssn.pod(pods[0]).req;
    let h = ssn.cluster().topology.chain(NodeId(0)).first().copied();
    let hn_before = h.map(|h| ssn.hypernode_future_idle(h));
    assert!(ssn.hold(NodeId(0), req));
    assert!(ssn.hold(NodeId(0), req));
    assert!(!ssn.hold(NodeId(0), req), "8 GPUs hold two 4-GPU pods, not three");
    assert_eq!(ssn.future_idle(NodeId(0)).gpu_milli(), 0);
    assert_eq!(ssn.idle(NodeId(0)).gpu_milli(), 8000, "idle resources do not move");
    assert_eq!(ssn.future_idle_total().gpu_milli(), before_total.gpu_milli() - 8000);
    if let (Some(h), Some(b)) = (h, hn_before) {
        assert_eq!(ssn.hypernode_future_idle(h).gpu_milli(), b.gpu_milli() - 8000);
    }
    assert_eq!(ssn.first_fit(&req, 0), Some(NodeId(1)), "the index must see the hold");
    assert!(!ssn.idle_is_future_idle());
    assert_eq!(ssn.job(JobId(0)).count(PodStatus::Pending), 3);
    let out = ssn.close();
    assert!(out.decisions.is_empty(), "a hold records nothing");
    assert_eq!(w.future_idle(NodeId(0)).gpu_milli(), 8000);
    assert_eq!(w.future_idle_total(), before_total);
    assert_eq!(w.nodes_ahead, 0);
    w.check_invariants().unwrap();
}

/// A job's revision moves with each change of its pods a scheduler may
/// remember across sessions (preempt's memo of barred jobs reads it): a status
/// change, a gate removed, a pod created; a session that nominates a pod moves
/// it too, and a session that leaves the job's pods as they were does not.
#[test]
fn a_job_revision_moves_with_its_pods() {
    let mut w = gated_job_world(2);
    let rev = |w: &World| w.jobs[JobId(0)].revision;
    let r = rev(&w);
    let p0 = w.create_pod(JobId(0), 0, 0, SimTime::ZERO);
    let p1 = w.create_pod(JobId(0), 0, 1, SimTime::ZERO);
    assert!(rev(&w) > r, "pods created");
    let r = rev(&w);
    assert!(w.ungate(p0, u16::MAX) && w.ungate(p1, u16::MAX));
    assert_eq!(rev(&w), r + 2, "one move per gate removed");
    let mut rng = RngStreams::new(0).stream("t", 0);
    let r = rev(&w);
    Session::new(&mut w, SimTime::ZERO, 1, &mut rng).close();
    assert_eq!(rev(&w), r, "an empty session");
    let mut ssn = Session::new(&mut w, SimTime::ZERO, 2, &mut rng);
    let mut st = ssn.statement();
    ssn.pipeline_after_evictions(&mut st, p0, NodeId(0), true).unwrap();
    ssn.commit(st);
    ssn.close();
    assert_eq!(w.pods[p0].nominated, Some(NodeId(0)));
    // Pipelined and back to Pending at the close (two moves), then nominated.
    assert_eq!(rev(&w), r + 3);
    let r = rev(&w);
    w.transition(p1, PodStatus::Running, Some(NodeId(0)));
    assert_eq!(rev(&w), r + 1, "a status change");
    w.check_invariants().unwrap();
}

/// One 8-GPU node and one submitted job "g" of `replicas` gated 4-GPU pods
/// (minAvailable `replicas`), its pods not yet created.
fn gated_job_world(replicas: u32) -> World {
    let mut spec = job("g", 0, 10, replicas, 4, replicas);
    let hints = PodHints { scheduling_gates: vec!["example.com/quota".into()], ..PodHints::default() };
    spec.tasks[0].hints = Some(std::sync::Arc::new(hints));
    let cluster = Cluster::new(vec![node("n0", 8)], ResourceNames::default(), Topology::flat(1));
    let mut w = World::new(cluster, vec![Queue::new("default")], vec![spec]);
    w.activate(JobId(0));
    w
}

/// The admitted list's copy of each job's revision follows every move (pods
/// created, a gate removed, a status change, a nomination set at a session's
/// close), and the invariant check catches a copy left behind.
#[test]
fn the_admitted_list_carries_each_jobs_revision() {
    let mut w = gated_job_world(3);
    w.set_pg_phase(JobId(0), PodGroupPhase::Inqueue);
    let copy = |w: &World| w.admitted.revisions().to_vec();
    let rev = |w: &World| w.jobs[JobId(0)].revision;
    let p0 = w.create_pod(JobId(0), 0, 0, SimTime::ZERO);
    let p1 = w.create_pod(JobId(0), 0, 1, SimTime::ZERO);
    w.create_pod(JobId(0), 0, 2, SimTime::ZERO);
    assert_eq!(w.admitted.list().len(), 1, "listed once it has pending pods");
    assert_eq!(copy(&w), vec![rev(&w)]);
    assert!(w.ungate(p0, u16::MAX));
    assert_eq!(copy(&w), vec![rev(&w)], "a gate removed");
    let mut rng = RngStreams::new(0).stream("t", 0);
    let mut ssn = Session::new(&mut w, SimTime::ZERO, 1, &mut rng);
    let mut st = ssn.statement();
    ssn.pipeline_after_evictions(&mut st, p0, NodeId(0), true).unwrap();
    ssn.commit(st);
    ssn.close();
    assert_eq!(w.pods[p0].nominated, Some(NodeId(0)));
    assert_eq!(copy(&w), vec![rev(&w)], "a nomination at the close");
    w.transition(p1, PodStatus::Running, Some(NodeId(0)));
    assert_eq!(copy(&w), vec![rev(&w)], "a status change");
    w.check_invariants().unwrap();
    // A revision moved behind the list's back.
    w.jobs[JobId(0)].revision += 1;
    let err = w.check_invariants().unwrap_err();
    assert!(err.contains("revisions out of date"), "{err}");
}

/// Sessions run at multiples of the schedule period when one is set.
#[test]
fn schedule_period_snaps_sessions() {
    let cluster = Cluster::new(vec![node("n0", 8)], ResourceNames::default(), Topology::flat(1));
    let world = World::new(cluster, vec![Queue::new("default")], vec![job("j", 3, 10, 1, 1, 1)]);
    let cfg = EngineConfig { schedule_period: Some(SimDuration::from_secs(5)), ..Default::default() };
    let out = Engine::new(world, Box::new(Scripted { evict_at: vec![] }), ideal(), cfg).run();
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(0)].first_start, Some(SimTime(5 * S)));
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(0)].end, Some(SimTime(15 * S)));
}

/// A horizon stops the run and closes running intervals as `running`.
#[test]
fn horizon_stops_the_run() {
    let cluster = Cluster::new(vec![node("n0", 8)], ResourceNames::default(), Topology::flat(1));
    let world =
        World::new(cluster, vec![Queue::new("default")], vec![job("j", 0, 100, 1, 1, 1), job("late", 500, 1, 1, 1, 1)]);
    let cfg = EngineConfig { horizon: Some(SimTime(50 * S)), ..Default::default() };
    let out = Engine::new(world, Box::new(Scripted { evict_at: vec![] }), ideal(), cfg).run();
    assert_eq!(out.stats.end, SimTime(50 * S));
    assert_eq!(out.pods.len(), 1);
    assert_eq!((out.pods[0].end, out.pods[0].reason), (SimTime(50 * S), EndReason::Running));
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(0)].progress.done, 50 * S);
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(1)].phase, JobPhase::NotSubmitted);
}

/// GPU sharing: fractional pods share devices best-fit, whole-GPU pods need free
/// devices, so a node can have room in total yet none for a pod.
#[test]
fn fractional_pods_share_devices_and_fragment_the_node() {
    let mut a = job("a", 0, 10, 6, 0, 6);
    a.tasks[0].requests = Resources::new(1000, 0, 600, 1);
    let b = job("b", 0, 10, 1, 4, 1);
    let mut c = job("c", 0, 10, 1, 0, 1);
    c.tasks[0].requests = Resources::new(1000, 0, 300, 1);
    let d = job("d", 0, 10, 1, 2, 1);
    let cluster = Cluster::new(vec![node("n0", 8)], ResourceNames::default(), Topology::flat(1));
    let mut w = World::new(cluster, vec![Queue::new("default")], vec![a, b, c, d]);
    for j in 0..4 {
        w.activate(JobId(j));
    }
    let pa: Vec<PodId> = (0..6).map(|i| w.create_pod(JobId(0), 0, i, SimTime::ZERO)).collect();
    let pb = w.create_pod(JobId(1), 0, 0, SimTime::ZERO);
    let pc = w.create_pod(JobId(2), 0, 0, SimTime::ZERO);
    let pd = w.create_pod(JobId(3), 0, 0, SimTime::ZERO);
    let n = NodeId(0);
    let mut rng = RngStreams::new(0).stream("t", 0);
    let mut ssn = Session::new(&mut w, SimTime::ZERO, 1, &mut rng);
    let mut st = ssn.statement();
    for &p in &pa {
        ssn.allocate(&mut st, p, n).unwrap();
    }
    // 6 × 0.6 GPU: each on its own device (0.4 left is too small for the next).
    assert_eq!(ssn.node_state(n).gpus.free, vec![400, 400, 400, 400, 400, 400, 1000, 1000]);
    assert_eq!(ssn.idle(n).gpu_milli(), 4400);
    // 4 whole GPUs fit the 4.4 GPU total but only 2 devices are free.
    assert!(ssn.pod(pb).req.fits_in(&ssn.idle(n)));
    assert!(!ssn.gpu_fits(pb, n) && !ssn.fits_idle(pb, n));
    assert!(ssn.allocate(&mut st, pb, n).is_err());
    // 0.3 GPU goes best-fit onto a shared device (the lowest of the 0.4s), not a free one.
    ssn.allocate(&mut st, pc, n).unwrap();
    assert_eq!(ssn.node_state(n).gpus.free, vec![100, 400, 400, 400, 400, 400, 1000, 1000]);
    assert_eq!(ssn.pod(pc).gpu_devices, DeviceHold { whole: 0, share: Some(0) });
    // 2 whole GPUs take the two free devices.
    ssn.allocate(&mut st, pd, n).unwrap();
    assert_eq!(ssn.pod(pd).gpu_devices, DeviceHold { whole: 0b1100_0000, share: None });
    assert_eq!(ssn.node_state(n).gpus.partial, 6);
    ssn.discard(st);
    assert_eq!(ssn.node_state(n).gpus.free, vec![1000; 8], "a discarded statement returns the devices");
    let mut st = ssn.statement();
    ssn.allocate(&mut st, pb, n).unwrap();
    assert_eq!(ssn.pod(pb).gpu_devices.whole, 0b1111);
    ssn.commit(st);
    let out = ssn.close();
    for (p, n) in out.binds {
        w.transition(p, PodStatus::Running, Some(n));
    }
    assert_eq!(w.pods[pb].gpu_devices.whole, 0b1111, "devices stay put from Allocated to Running");
    assert_eq!(w.nodes[0].gpus.whole_free(), 4);
    w.check_invariants().unwrap();
    w.transition(pb, PodStatus::Pending, None);
    assert_eq!(w.nodes[0].gpus.free, vec![1000; 8]);
    w.check_invariants().unwrap();
}

/// Asks for a session at `at` in every session (`every`) or in the first only.
struct Waker {
    at: SimTime,
    every: bool,
    asked: bool,
}

impl Scheduler for Waker {
    fn name(&self) -> &str {
        "waker"
    }
    fn schedule(&mut self, ssn: &mut Session<'_>) {
        if self.every || !self.asked {
            ssn.request_wakeup(self.at);
            self.asked = true;
        }
    }
}

/// A wakeup time asked for in every session is queued once: ten arrivals (ten
/// sessions) asking for the same time make as many events as one asking once.
#[test]
fn repeated_wakeups_are_queued_once() {
    let events = |every: bool| {
        let jobs: Vec<JobSpec> = (0..10).map(|i| job(&format!("j{i}"), i, 10, 1, 1, 1)).collect();
        let cluster = Cluster::new(vec![node("n0", 8)], ResourceNames::default(), Topology::flat(1));
        let world = World::new(cluster, vec![Queue::new("default")], jobs);
        let waker = Waker { at: SimTime(1_000 * S), every, asked: false };
        let out = Engine::new(world, Box::new(waker), ideal(), EngineConfig::default()).run();
        (out.stats.events, out.stats.sessions)
    };
    assert_eq!(events(true), events(false));
}
