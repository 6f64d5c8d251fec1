//! # lahar-core
//!
//! The simulation core of lahar, an offline discrete-event simulator of
//! Volcano-style batch scheduling on GPU clusters.
//!
//! Layout: [`model`] (what a run is about: ids, cluster, topology, jobs, queues),
//! [`devices`] (whole GPUs, vGPU, vNPU, NUMA), [`world`] (the run's state and its
//! indexes, the one owner of it), [`session`] (what a policy acts through),
//! [`engine`] (events, controllers, faults, the timeline's operations), [`comm`]
//! (the NCCL-like model), [`util`] (time, random streams, stores, text, files).
//!
//! Contracts:
//! - **Time** is an integer number of microseconds ([`util::time::SimTime`]); no floating
//!   point clock exists.
//! - **Events** are ordered by `(time, sequence)`; ties pop in scheduling order
//!   ([`event::EventQueue`]).
//! - **Gangs**: a gang policy allocates a job's pods in one [`session::Statement`]
//!   and commits it only when `minAvailable` pods are placed, else discards it and
//!   nothing of it remains. The session does not enforce it: `kube-default` and
//!   Volcano's backfill bind pods one at a time (`Session::allocate_now`).
//! - **Resources** are integer vectors in Volcano's units ([`model::resource::Resources`]);
//!   every pod takes one `pods` slot.
//! - **Randomness** comes only from [`util::rng::RngStreams`]: named, seeded, portable streams.
//! - **Progress**: a running job advances at a speed set by its placement
//!   ([`engine::RuntimeModel`]); a change of placement credits the work done at the
//!   old speed before the finish event is rescheduled.
//!
//! ```
//! use lahar_core::prelude::*;
//! let q = EventQueue::new();
//! assert!(q.is_empty());
//! assert_eq!(parse_duration("2h").unwrap(), SimDuration::from_secs(7200));
//! # let _: EventQueue<()> = q;
//! ```

pub mod arrivals;
pub mod comm;
pub mod devices;
pub mod engine;
pub mod event;
pub mod explain;
pub mod faults;
pub mod frag;
pub mod index;
pub mod model;
pub mod planted;
pub mod record;
pub mod runtime_model;
pub mod serving;
pub mod session;
pub mod speed;
pub mod timeline;
pub mod util;
pub mod victim_index;
pub mod world;

/// The names most users of the crate need.
pub mod prelude {
    pub use crate::engine::{EndReason, Engine, EngineConfig, IdealRuntime, RunOutput, RuntimeModel};
    pub use crate::event::EventQueue;
    pub use crate::model::cluster::{Cluster, IntraNode, Nics, Node, NodeId};
    pub use crate::model::job::{JobId, JobPhase, JobSpec, PodGroupPhase, PodId, PodStatus, TaskSpec};
    pub use crate::model::queue::{Queue, QueueId};
    pub use crate::model::resource::{ResourceNames, Resources};
    pub use crate::model::topology::Topology;
    pub use crate::session::{Scheduler, Session, Statement};
    pub use crate::util::time::{SimDuration, SimTime, parse_duration};
    pub use crate::world::World;
}
