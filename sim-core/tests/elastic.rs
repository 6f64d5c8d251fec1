//! Elastic jobs on hand-built worlds: growth, shrinking, resize pauses, and
//! the work credited at each old speed (the Batsim #66 class of bug).

mod common;
use common::*;

use lahar_core::cluster::Cluster;
use lahar_core::elastic::{Elastic, ScalingCurve};
use lahar_core::engine::{EndReason, Engine, EngineConfig, RunOutput};
use lahar_core::job::*;
use lahar_core::queue::Queue;
use lahar_core::resource::ResourceNames;
use lahar_core::session::{Scheduler, Session};
use lahar_core::time::{SimDuration, SimTime};
use lahar_core::topology::Topology;
use lahar_core::world::World;

/// Evicts the highest-numbered running pod of job `j` at each `(time, j)` (a
/// reclaim), then places pods first-fit as [`Scripted`] does.
struct OneEvictor {
    at: Vec<(u64, usize)>,
    place: Scripted,
}

impl Scheduler for OneEvictor {
    fn name(&self) -> &str {
        "one-evictor"
    }
    fn schedule(&mut self, ssn: &mut Session<'_>) {
        ssn.set_action("reclaim");
        // Each eviction once (sessions follow each other at one instant).
        let mut fired = Vec::new();
        for (i, &(t, j)) in self.at.iter().enumerate() {
            let at = SimTime(t * S);
            ssn.request_wakeup(at);
            if ssn.now() == at {
                fired.push(i);
                let victim = ssn
                    .job(JobId(j as u32))
                    .pods
                    .iter()
                    .copied()
                    .rev()
                    .find(|&p| ssn.pod(p).status == PodStatus::Running);
                if let Some(v) = victim {
                    let mut st = ssn.statement();
                    ssn.evict(&mut st, v, "reclaimed").unwrap();
                    ssn.commit(st);
                }
            }
        }
        for i in fired.into_iter().rev() {
            self.at.remove(i);
        }
        self.place.schedule(ssn);
    }
}

fn elastic_run(jobs: Vec<JobSpec>, evict: Vec<(u64, usize)>) -> RunOutput {
    let cluster = Cluster::new(vec![node("n0", 8)], ResourceNames::default(), Topology::flat(1));
    let world = World::new(cluster, vec![Queue::new("default")], jobs);
    let sched = OneEvictor { at: evict, place: Scripted { evict_at: vec![] } };
    let out = Engine::new(world, Box::new(sched), ideal(), EngineConfig::default()).run();
    out.world.check_invariants().unwrap();
    out
}

/// One 8-GPU node. E: 4 workers × 2 GPUs, minAvailable 1, linear scaling, 30 s
/// resize, 400 s of work with all four. B1 (4 GPUs, 100 s) and B2 (2 GPUs,
/// 200 s) leave room for one worker at 0; C (2 GPUs, 1000 s) arrives at 300.
///
/// - 0–100: 1 worker, speed ¼: 25 s of work.
/// - 100: B1 ends, E grows to 3 (one resize): paused until 130.
/// - 130–200: speed ¾: 52.5 s (77.5).
/// - 200: B2 ends, E grows to 4: paused until 230.
/// - 230–300: full speed: 70 s (147.5).
/// - 300: one of E's pods is reclaimed for C: E shrinks to 3, paused until 330;
///   the pod is released at 330 and C (listed first) takes its GPUs, so E's
///   replacement waits.
/// - 330–: speed ¾ for the 252.5 s left: 336.666 667 s, ends at 666.666 667 s.
#[test]
fn an_elastic_job_grows_twice_and_shrinks_once() {
    let mut e = job("E", 0, 400, 4, 2, 1);
    e.elastic = Some(Elastic { curve: ScalingCurve::Linear, resize_overhead: SimDuration(30 * S) });
    let jobs = vec![job("C", 300, 1000, 1, 2, 1), job("B1", 0, 100, 1, 4, 1), job("B2", 0, 200, 1, 2, 1), e];
    let out = elastic_run(jobs, vec![(300, 3)]);
    let e = &out.world.jobs[3];
    assert_eq!(e.end, Some(SimTime(666_666_667)));
    assert_eq!(e.progress.lost_gpu_us, 0);
    let mut iv: Vec<_> =
        out.pods.iter().filter(|p| p.job == JobId(3)).map(|p| (p.start.micros(), p.end.micros(), p.reason)).collect();
    iv.sort();
    assert_eq!(
        iv,
        vec![
            (0, 666_666_667, EndReason::Completed),
            (100 * S, 666_666_667, EndReason::Completed),
            (100 * S, 666_666_667, EndReason::Completed),
            (200 * S, 300 * S, EndReason::Reclaimed),
        ]
    );
    assert_eq!(out.world.jobs[0].first_start, Some(SimTime(330 * S)));
}

/// The same job without elasticity runs at full speed with any number of
/// workers ≥ its minimum, as before: 400 s from 0.
#[test]
fn a_job_below_its_replicas_without_elasticity_is_not_slowed() {
    let jobs = vec![
        job("C", 300, 1000, 1, 2, 1),
        job("B1", 0, 100, 1, 4, 1),
        job("B2", 0, 200, 1, 2, 1),
        job("E", 0, 400, 4, 2, 1),
    ];
    let out = elastic_run(jobs, vec![]);
    assert_eq!(out.world.jobs[3].end, Some(SimTime(400 * S)));
}

/// A scaling curve: 1:0.3, 2:0.55, 4:1 on a 4-worker job that keeps 2 workers
/// for 100 s, then 4: 55 s of work by 100, paused until 130, then the 345 s
/// left at full speed: ends at 475.
#[test]
fn a_scaling_curve_sets_the_speed() {
    let mut e = job("E", 0, 400, 4, 2, 1);
    e.elastic = Some(Elastic {
        curve: ScalingCurve::parse("1:0.3, 2:0.55, 4:1").unwrap(),
        resize_overhead: SimDuration(30 * S),
    });
    let out = elastic_run(vec![job("B", 0, 100, 1, 4, 1), e], vec![]);
    assert_eq!(out.world.jobs[1].end, Some(SimTime(475 * S)));
}
