//! The engine's settings.

use crate::util::time::{SimDuration, SimTime};

/// Engine settings.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Scenario seed.
    pub seed: u64,
    /// Stop time; `None`: run until no event is left.
    pub horizon: Option<SimTime>,
    /// With a period, sessions run at multiples of it (Volcano's loop); without,
    /// right after the events that need one.
    pub schedule_period: Option<SimDuration>,
    /// Spacing of timeseries samples.
    pub sample_interval: SimDuration,
    /// Operators' actions during the run (`spec.timeline`), in time order.
    pub timeline: Vec<crate::timeline::Step>,
    /// Services (`spec.services`): bound to their workloads as they arrive.
    pub services: Vec<std::sync::Arc<crate::serving::ServiceSpec>>,
    /// Some job of the workload has an autoscaler (with `services`, whether
    /// the run has services: its outputs say so up front).
    pub autoscaled: bool,
    /// The HorizontalPodAutoscaler controller's settings.
    pub hpa: crate::serving::hpa::HpaConfig,
    /// Nodes declared but not in the cluster at the start (`absent: true`):
    /// out of service, holding nothing, until a timeline step adds them.
    pub absent_nodes: Vec<crate::model::ids::NodeId>,
    /// Stop after this many sessions.
    pub max_sessions: Option<u64>,
    /// Sessions walk everything, as Volcano does, instead of skipping work that
    /// provably cannot change a decision (the reference for equivalence tests).
    pub exhaustive: bool,
    /// Bugs planted on purpose for the equivalence tests, each shown caught
    /// by them ([`crate::planted::PlantedBugs`]). None outside tests.
    #[doc(hidden)]
    pub planted: crate::planted::PlantedBugs,
    /// Check the World's aggregates against a recomputation from its pods after
    /// every instant (its events, controllers and sessions), panicking at the
    /// first inconsistency ([`crate::world::World::check_invariants`]). On in debug
    /// builds; tests turn it on in release.
    pub check_invariants: bool,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            seed: 0,
            horizon: None,
            schedule_period: None,
            sample_interval: SimDuration::from_secs(300),
            timeline: Vec::new(),
            services: Vec::new(),
            autoscaled: false,
            hpa: crate::serving::hpa::HpaConfig::default(),
            absent_nodes: Vec::new(),
            max_sessions: None,
            exhaustive: false,
            planted: crate::planted::PlantedBugs::default(),
            check_invariants: cfg!(debug_assertions),
        }
    }
}
