//! Serving: services that answer a request demand with their ready replicas,
//! and the autoscalers that size them. A service is a workload (a Deployment, a
//! StatefulSet...) whose pods Volcano schedules like any other; lahar adds what
//! it is for — the demand offered to it ([`demand::Demand`]), what a ready
//! replica serves, how long a new one takes to start — and Kubernetes'
//! HorizontalPodAutoscaler ([`hpa`]) that changes its replicas from that
//! demand, and KEDA's ScaledObject ([`keda`]), which makes one and moves the
//! workload to and from zero. The engine keeps each service's state and measures what was served.

pub mod demand;
pub mod hpa;
pub mod keda;
pub mod kthena;
pub mod kthena_optimizer;
pub mod kthena_roles;
pub mod ray;

use crate::util::time::SimDuration;
use std::sync::Arc;

/// What a service's demand and capacity count: requests, or tokens (a
/// request's prompt and generated tokens, or either), per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unit {
    /// Requests per second.
    #[default]
    Requests,
    /// Tokens per second.
    Tokens,
}

impl Unit {
    /// Its name in scenarios and summary.json (`requests`, `tokens`).
    pub fn name(self) -> &'static str {
        match self {
            Unit::Requests => "requests",
            Unit::Tokens => "tokens",
        }
    }
}

/// A role's capacity (`capacityByRole`): the role, what one ready replica of
/// it serves (milli-units per second), where it was written (line, column).
pub type RoleCapacity = (Arc<str>, i64, Option<(u64, u64)>);

/// A service's settings (`spec.services[]`): which workload, its demand, what
/// a replica serves.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceSpec {
    /// The workload's namespace.
    pub namespace: Arc<str>,
    /// The workload's name (its job's name in lahar's outputs).
    pub name: String,
    /// What its demand and capacity count.
    pub unit: Unit,
    /// Requests (or tokens) offered to it.
    pub demand: demand::Demand,
    /// Requests (or tokens) per second one ready replica serves (milli-units
    /// per second).
    pub capacity: i64,
    /// Per GPU model (a node's `gpuModel`): a replica's capacity there instead.
    pub capacity_by_model: Vec<(Arc<str>, i64)>,
    /// For a kthena ModelServing, per role: what one ready replica of the role
    /// serves (milli-units per second), and where it was written (line,
    /// column). A serving group serves the least over these roles of its
    /// ready role replicas × the role's; `capacity` is then 0. Empty: a
    /// replica serves `capacity`.
    pub capacity_by_role: Vec<RoleCapacity>,
    /// From a pod's start until it serves (image pull, model load).
    pub startup: SimDuration,
    /// Where it was written (`spec.services[0]`).
    pub place: String,
    /// For a RayService: the Serve deployment named to serve the demand, and
    /// where (line, column) it was named.
    pub deployment: Option<(String, Option<(u64, u64)>)>,
}

impl ServiceSpec {
    /// What one replica serves on a node of GPU model `model`.
    pub fn capacity_on(&self, model: Option<&str>) -> i64 {
        model.and_then(|m| self.capacity_by_model.iter().find(|(k, _)| &**k == m)).map_or(self.capacity, |(_, c)| *c)
    }
}
