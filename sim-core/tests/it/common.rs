//! Helpers shared by the engine's integration tests: nodes, jobs, a first-fit
//! gang scheduler that can also evict on cue.
#![allow(dead_code)]

use lahar_core::engine::{Engine, EngineConfig, RunOutput, RuntimeModel};
use lahar_core::model::cluster::{Cluster, Node};
use lahar_core::model::job::*;
use lahar_core::model::queue::Queue;
use lahar_core::model::resource::{ResourceNames, Resources};
use lahar_core::model::topology::Topology;
use lahar_core::session::{Scheduler, Session};
use lahar_core::util::time::{SimDuration, SimTime};
use lahar_core::world::World;

pub const S: u64 = 1_000_000;

pub fn node(name: &str, gpus: i64) -> Node {
    Node::plain(name, Resources::new(64_000, 1 << 40, gpus * 1000, 110), "H100")
}

pub fn job(name: &str, submit: u64, dur: u64, replicas: u32, gpus: i64, min: u32) -> JobSpec {
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

/// First-fit gang placement, plus evictions of `(time, job index)` pods by a
/// "preempt" action at the given times.
pub struct Scripted {
    pub evict_at: Vec<(u64, usize)>,
}

impl Scheduler for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn schedule(&mut self, ssn: &mut Session<'_>) {
        ssn.set_action("preempt");
        for &(t, j) in &self.evict_at {
            let at = SimTime(t * S);
            ssn.request_wakeup(at);
            if ssn.now() == at {
                let victims: Vec<PodId> = ssn
                    .job(JobId(j as u32))
                    .pods
                    .iter()
                    .copied()
                    .filter(|&p| ssn.pod(p).status == PodStatus::Running)
                    .collect();
                let mut st = ssn.statement();
                for v in victims {
                    ssn.evict(&mut st, v, "scripted").unwrap();
                }
                ssn.commit(st);
            }
        }
        ssn.set_action("allocate");
        let jobs: Vec<JobId> = ssn.jobs_with_pending().collect();
        for j in jobs {
            let mut st = ssn.statement();
            for p in ssn.pending_pods(j) {
                let req = ssn.pod(p).req;
                let n = ssn.fitting_nodes(&req).find(|&n| req.fits_in(&ssn.idle(n)));
                if let Some(n) = n {
                    ssn.allocate(&mut st, p, n).unwrap();
                }
            }
            if ssn.job(j).ready_count() >= ssn.job(j).spec.min_available {
                ssn.commit(st);
            } else {
                ssn.discard(st);
            }
        }
    }
}

pub fn run(nodes: Vec<Node>, jobs: Vec<JobSpec>, evict_at: Vec<(u64, usize)>, rt: Box<dyn RuntimeModel>) -> RunOutput {
    let n = nodes.len();
    let cluster = Cluster::new(nodes, ResourceNames::default(), Topology::flat(n));
    let world = World::new(cluster, vec![Queue::new("default")], jobs);
    Engine::new(world, Box::new(Scripted { evict_at }), rt, EngineConfig::default()).run()
}

pub fn ideal() -> Box<dyn RuntimeModel> {
    Box::new(lahar_core::engine::IdealRuntime)
}
