//! Elastic jobs on hand-built worlds: growth, shrinking, resize pauses, and
//! the work credited at each old speed (the Batsim #66 class of bug).

use crate::common::*;

use lahar_core::engine::{EndReason, Engine, EngineConfig, RunOutput};
use lahar_core::model::cluster::Cluster;
use lahar_core::model::elastic::{Elastic, ScalingCurve};
use lahar_core::model::job::*;
use lahar_core::model::queue::Queue;
use lahar_core::model::resource::ResourceNames;
use lahar_core::model::topology::Topology;
use lahar_core::session::{Scheduler, Session};
use lahar_core::util::time::{SimDuration, SimTime};
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
    let e = &out.world.jobs[lahar_core::model::ids::JobId(3)];
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
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(0)].first_start, Some(SimTime(330 * S)));
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
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(3)].end, Some(SimTime(400 * S)));
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
    assert_eq!(out.world.jobs[lahar_core::model::ids::JobId(1)].end, Some(SimTime(475 * S)));
}

mod properties {
    use super::*;
    use lahar_core::faults::{FaultPlan, Outage, OutageKind, Target};
    use proptest::prelude::*;

    type JobDraw = (u64, u64, u32, u32, i64, bool);

    /// Replays a job's progress from its pod intervals, independently of the
    /// engine: it progresses while at least `min` pods run, at k/n of full
    /// speed; a change of k while it progresses before and after pauses it for
    /// `pause` (a failure too, the survivors' re-rendezvous); returns the
    /// work integrated (µs) and the number of segments. Falling below `min`
    /// stops it; starting again is no resize.
    fn replay(out: &RunOutput, j: u32, min: u32, n: u32, pause: u64) -> (u64, u64) {
        let mut edges: Vec<(u64, i32, bool)> = Vec::new();
        for r in out.pods.iter().filter(|r| r.job == JobId(j)) {
            edges.push((r.start.micros(), 1, false));
            edges.push((r.end.micros(), -1, r.reason == EndReason::Failed));
        }
        edges.sort();
        let (mut k, mut t0, mut resume, mut work, mut segments) = (0i64, 0u64, 0u64, 0u64, 0u64);
        let mut i = 0;
        while i < edges.len() {
            let t = edges[i].0;
            let (before, mut lost_at_t, mut delta) = (k, 0i64, 0i64);
            while i < edges.len() && edges[i].0 == t {
                if edges[i].2 {
                    lost_at_t += 1;
                } else {
                    delta += edges[i].1 as i64;
                }
                i += 1;
            }
            if before >= min as i64 {
                let from = resume.max(t0).min(t);
                let speed = lahar_core::model::elastic::ScalingCurve::Linear.speed_ppm(before as u32, n);
                work += lahar_core::model::progress::work_in(t - from, speed);
                segments += 1;
            }
            // Failures come first in an instant, the session's binds after.
            let mid = before - lost_at_t;
            k = mid + delta;
            let min = min as i64;
            let running_through = before >= min && mid >= min;
            if running_through && k >= min && (lost_at_t > 0 || k != before) {
                resume = t + pause;
            } else if !running_through || k < min {
                resume = 0;
            }
            t0 = t;
        }
        (work, segments)
    }

    fn draws() -> impl Strategy<Value = (Vec<JobDraw>, Vec<(u64, u32, u64)>)> {
        let job = (0u64..60, 20u64..200, 1u32..5, 1u32..5, 1i64..3, any::<bool>());
        let outage = (0u64..300, 0u32..3, 1u64..80);
        (prop::collection::vec(job, 1..6), prop::collection::vec(outage, 0..5))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// Elastic jobs under failures and resizes: every job finishes, and the
        /// work integrated from their pods' intervals at k/n speed, outside the
        /// resize pauses and only while at least their minimum runs, is their
        /// run time plus the work they lost — the engine credits each old speed
        /// before going on (Batsim #66) and never counts progress below the
        /// minimum.
        #[test]
        fn elastic_work_is_conserved(d in draws()) {
            let (jobs, outages) = d;
            let specs: Vec<JobSpec> = jobs
                .iter()
                .enumerate()
                .map(|(i, &(submit, dur, replicas, min, gpus, ckpt))| {
                    let mut j = job(&format!("e{i}"), submit, dur, replicas, gpus, min.min(replicas));
                    for t in &mut j.tasks {
                        t.min_available = 0;
                    }
                    j.elastic = Some(Elastic { curve: ScalingCurve::Linear, resize_overhead: SimDuration(5 * S) });
                    j.checkpoint_interval = ckpt.then_some(SimDuration(9 * S));
                    j.min_resources = j.compute_min_resources();
                    j
                })
                .collect();
            let mut plan: Vec<Outage> = outages
                .iter()
                .map(|&(at, n, dur)| Outage {
                    at: SimTime(at * S),
                    target: Target::Nodes(vec![lahar_core::model::cluster::NodeId(n)]),
                    duration: SimDuration(dur * S),
                    kind: OutageKind::Node,
                    cause: "p".into(),
                })
                .collect();
            plan.sort_by_key(|o| o.at);
            let nodes = (0..3).map(|i| node(&format!("n{i}"), 4)).collect();
            let cluster = Cluster::new(nodes, ResourceNames::default(), Topology::flat(3));
            let world = World::new(cluster, vec![Queue::new("default")], specs);
            let mut e = Engine::new(world, Box::new(Scripted { evict_at: vec![] }), ideal(), EngineConfig::default());
            e.set_faults(FaultPlan { rules: vec![], outages: plan });
            let out = e.run();
            out.world.check_invariants().unwrap();
            for (i, j) in out.world.jobs.iter().enumerate() {
                prop_assert_eq!(j.phase, JobPhase::Completed);
                let n = j.spec.total_replicas();
                let (work, segments) = replay(&out, i as u32, j.spec.min_available, n, 5 * S);
                let lost = (j.progress.lost_gpu_us / j.spec.total_gpus() as u128) as u64;
                let want = j.spec.duration.micros() + lost;
                if !(work >= want && work <= want + segments) {
                    let iv: Vec<_> = out.pods.iter().filter(|r| r.job == JobId(i as u32)).map(|r| (r.node.0, r.start.micros() as f64 / 1e6, r.end.micros() as f64 / 1e6, r.reason)).collect();
                    eprintln!("job {i}: pod intervals (node, start, end, reason) {iv:?}, end {:?}", j.end);
                }
                prop_assert!(work >= want && work <= want + segments, "job {i}: replayed {work}, run time + lost {want}");
            }
        }
    }
}
