//! What a run is about: the ids everything is named by, the cluster and its
//! topology, resources and quantities of them, jobs (their tasks, sub-groups,
//! progress, dependencies, recurrences, elasticity) and queues, pod affinity
//! and disruption budgets. Plain data and its arithmetic: the World holds the
//! run's state of them, the engine moves it.

pub mod affinity;
pub mod budget;
pub mod cluster;
pub mod elastic;
pub mod flow;
pub mod ids;
pub mod job;
pub mod progress;
pub mod queue;
pub mod recurring;
pub mod resource;
pub mod subgroup;
pub mod topology;
