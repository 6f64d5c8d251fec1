//! What a run records, handed over as it happens.
//!
//! An [`Engine`](crate::engine::Engine) without a recorder keeps its records (pod
//! intervals, samples, decisions) and returns them in
//! [`RunOutput`](crate::engine::RunOutput): the in-process form tests and tools
//! use. With a [`Recorder`], each record goes to it at the moment it is made, with
//! the state it was made in (names of jobs, pods and nodes can be resolved then),
//! and the engine keeps none of them: a month-long run's outputs are written as it
//! goes instead of held to the end.

use crate::engine::{PodRecord, RunStats, Sample};
use crate::job::{JobId, PodId};
use crate::session::Decision;
use crate::world::World;

/// Receives a run's records as they are made. Every method has an empty default.
pub trait Recorder {
    /// Job `j` was submitted (at its submit time, the current instant).
    fn job_submitted(&mut self, _world: &World, _j: JobId) {}
    /// Pod `p` started running on its node (`world.pods[p].started` is now).
    fn pod_started(&mut self, _world: &World, _p: PodId) {}
    /// A pod's placement interval ended.
    fn pod_ended(&mut self, _world: &World, _r: &PodRecord) {}
    /// Job `j` reached a terminal phase (`end` is set); its pods' intervals have
    /// all been handed over.
    fn job_ended(&mut self, _world: &World, _j: JobId) {}
    /// A timeseries sample was taken.
    fn sample(&mut self, _world: &World, _s: &Sample) {}
    /// A scheduling decision was made.
    fn decision(&mut self, _world: &World, _d: &Decision) {}
    /// A failure, repair or drain step happened (a row of events.csv).
    fn fault(&mut self, _world: &World, _r: &crate::engine::FaultRecord) {}
    /// Node `n`'s service changed at `t` (a failure or repair, the node leaving
    /// or joining): `world.nodes[n].lost_devices` holds the GPU devices out now.
    fn node_service(&mut self, _world: &World, _n: crate::cluster::NodeId, _t: crate::time::SimTime) {}
    /// The run is over: open intervals were closed (reason `running`) and handed
    /// over; the jobs in `world.active` are unfinished.
    fn finished(&mut self, _world: &World, _stats: &RunStats) {}
}

/// A recorder shared with its owner, who takes it back after the run.
impl<R: Recorder> Recorder for std::rc::Rc<std::cell::RefCell<R>> {
    fn job_submitted(&mut self, world: &World, j: JobId) {
        self.borrow_mut().job_submitted(world, j);
    }
    fn pod_started(&mut self, world: &World, p: PodId) {
        self.borrow_mut().pod_started(world, p);
    }
    fn pod_ended(&mut self, world: &World, r: &PodRecord) {
        self.borrow_mut().pod_ended(world, r);
    }
    fn job_ended(&mut self, world: &World, j: JobId) {
        self.borrow_mut().job_ended(world, j);
    }
    fn sample(&mut self, world: &World, s: &Sample) {
        self.borrow_mut().sample(world, s);
    }
    fn decision(&mut self, world: &World, d: &Decision) {
        self.borrow_mut().decision(world, d);
    }
    fn fault(&mut self, world: &World, r: &crate::engine::FaultRecord) {
        self.borrow_mut().fault(world, r);
    }
    fn node_service(&mut self, world: &World, n: crate::cluster::NodeId, t: crate::time::SimTime) {
        self.borrow_mut().node_service(world, n, t);
    }
    fn finished(&mut self, world: &World, stats: &RunStats) {
        self.borrow_mut().finished(world, stats);
    }
}
