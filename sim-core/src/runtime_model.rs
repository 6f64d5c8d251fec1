//! The seam for runtime models: how fast a job runs where it is placed.

use crate::model::ids::JobId;
use crate::model::ids::NodeId;
use crate::model::progress::FULL_SPEED_PPM;
use crate::world::World;

/// Prices a placement: how fast a job runs where it is, relative to its ideal
/// placement. This is the seam for the communication model: iteration time =
/// compute + exposed communication, speed = ideal iteration time / actual.
pub trait RuntimeModel: Send {
    /// Speed of `job` on `nodes` (distinct, ascending), in ppm of ideal (≤ 1,000,000).
    fn speed_ppm(&self, world: &World, job: JobId, nodes: &[NodeId]) -> u32;

    /// Whether one job's speed can depend on other jobs' placements (shared links).
    /// The engine then calls [`RuntimeModel::reprice`] after the jobs running change.
    fn coupled(&self) -> bool {
        false
    }

    /// New speeds of the `running` jobs (ascending ids) whose speed changed because
    /// the set of running jobs or their placements changed; called once per instant.
    fn reprice(&self, _world: &World, _running: &[JobId]) -> Vec<(JobId, u32)> {
        Vec::new()
    }

    /// True when the model prices `job`'s compute by the GPUs it runs on (a
    /// training model's throughput per GPU model), so nodes' `speed` does not
    /// apply to it.
    fn prices_compute(&self, _job: JobId) -> bool {
        false
    }

    /// A job pulled from a source arrived with id `job` and `profile` (jobs
    /// listed in the World from the start were given to the model when it was made).
    fn admit(&mut self, _job: JobId, _profile: Option<std::sync::Arc<crate::comm::profile::JobProfile>>) {}
}

/// Every placement runs at the ideal speed (no communication cost).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdealRuntime;

impl RuntimeModel for IdealRuntime {
    fn speed_ppm(&self, _: &World, _: JobId, _: &[NodeId]) -> u32 {
        FULL_SPEED_PPM
    }
}
