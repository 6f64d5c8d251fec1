//! # lahar-core
//!
//! The simulation core of lahar, an offline discrete-event simulator of
//! Volcano-style batch scheduling on GPU clusters.
//!
//! Contracts:
//! - **Time** is an integer number of microseconds ([`time::SimTime`]); no floating
//!   point clock exists.
//! - **Events** are ordered by `(time, sequence)`; ties pop in scheduling order
//!   ([`event::EventQueue`]).
//! - **Gangs** are placed whole: a policy allocates a job's pods in one
//!   [`session::Statement`] and commits it only when `minAvailable` pods are placed;
//!   otherwise it discards it and nothing of it remains.
//! - **Resources** are integer vectors in Volcano's units ([`resource::Resources`]);
//!   every pod takes one `pods` slot.
//! - **Randomness** comes only from [`rng::RngStreams`]: named, seeded, portable streams.
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

pub mod affinity;
pub mod arrivals;
pub mod budget;
pub mod cluster;
pub mod comm;
pub mod devices;
pub mod diag;
pub mod elastic;
pub mod engine;
pub mod event;
pub mod explain;
pub mod faults;
pub mod files;
pub mod flow;
pub mod frag;
pub mod gosort;
pub mod ids;
pub mod index;
pub mod job;
pub mod numa;
pub mod progress;
pub mod quantity;
pub mod queue;
pub mod record;
pub mod recurring;
pub mod resource;
pub mod rng;
pub mod runtime_model;
pub mod session;
pub mod speed;
pub mod store;
pub mod subgroup;
pub mod text;
pub mod time;
pub mod timeline;
pub mod topology;
pub mod vgpu;
pub mod victim_index;
pub mod vnpu;
pub mod world;

/// The names most users of the crate need.
pub mod prelude {
    pub use crate::cluster::{Cluster, IntraNode, Nics, Node, NodeId};
    pub use crate::engine::{EndReason, Engine, EngineConfig, IdealRuntime, RunOutput, RuntimeModel};
    pub use crate::event::EventQueue;
    pub use crate::job::{JobId, JobPhase, JobSpec, PodGroupPhase, PodId, PodStatus, TaskSpec};
    pub use crate::queue::{Queue, QueueId};
    pub use crate::resource::{ResourceNames, Resources};
    pub use crate::session::{Scheduler, Session, Statement};
    pub use crate::time::{SimDuration, SimTime, parse_duration};
    pub use crate::topology::Topology;
    pub use crate::world::World;
}
