//! Where the engine's jobs come from, in submit order: listed in the World from
//! the start, or pulled from a source one at a time as the run reaches their
//! submit time (a scenario's sources generate or read their jobs lazily, so a
//! run holds the jobs alive, not every job of the scenario).

use crate::comm::profile::JobProfile;
use crate::model::ids::JobId;
use crate::model::job::JobSpec;
use crate::runtime_model::RuntimeModel;
use crate::util::time::SimTime;
use crate::world::World;
use std::sync::Arc;

/// A job as a source hands it over: its spec and, for the collective cost
/// model, its training profile.
#[derive(Clone, Debug)]
pub struct Arrival {
    /// The job.
    pub spec: JobSpec,
    /// Its model profile (`None`: it runs at its ideal speed anywhere).
    pub profile: Option<Arc<JobProfile>>,
}

/// Jobs in submit order. A source must yield them in that order (equal submit
/// times in the order they are to arrive); the engine numbers them as they come.
pub type Source = Box<dyn Iterator<Item = Arrival>>;

/// The engine's jobs still to arrive.
pub(crate) enum Arrivals {
    /// Jobs already in the World, in arrival order (submit time, then id).
    Listed { order: Vec<JobId>, next: usize },
    /// Jobs pulled from a source; `next` is the one due next.
    Streamed { source: Source, next: Option<Box<Arrival>> },
}

impl Arrivals {
    /// The World's jobs, arriving at their submit times.
    pub(crate) fn listed(world: &World) -> Arrivals {
        let mut order: Vec<JobId> = (0..world.jobs.len() as u32).map(JobId).collect();
        // Stable: equal submit times keep id order, as queued events would.
        order.sort_by_key(|j| world.jobs[*j].spec.submit);
        Arrivals::Listed { order, next: 0 }
    }

    /// The jobs of `source`.
    pub(crate) fn streamed(mut source: Source) -> Arrivals {
        let next = source.next().map(Box::new);
        Arrivals::Streamed { source, next }
    }

    /// The submit time of the next job to arrive.
    pub(crate) fn next_time(&self, world: &World) -> Option<SimTime> {
        match self {
            Arrivals::Listed { order, next } => order.get(*next).map(|j| world.jobs[*j].spec.submit),
            Arrivals::Streamed { next, .. } => next.as_ref().map(|a| a.spec.submit),
        }
    }

    /// The next job to arrive, added to the World first when it comes from a
    /// source (its profile goes to the runtime model). Call only when
    /// [`Arrivals::next_time`] is `Some`.
    pub(crate) fn pop(&mut self, world: &mut World, runtime: &mut dyn RuntimeModel) -> JobId {
        match self {
            Arrivals::Listed { order, next } => {
                *next += 1;
                order[*next - 1]
            }
            Arrivals::Streamed { source, next } => {
                let a = next.take().expect("a job is due");
                let following = source.next().map(Box::new);
                if let Some(f) = &following {
                    assert!(f.spec.submit >= a.spec.submit, "a job source yields its jobs in submit order");
                }
                *next = following;
                let Arrival { spec, profile } = *a;
                let j = world.add_job(spec);
                runtime.admit(j, profile);
                j
            }
        }
    }

    /// Adds the jobs that never arrived to the World, not submitted (a run cut
    /// short whose records stay in memory lists them, as a listed World does).
    pub(crate) fn add_rest(&mut self, world: &mut World, runtime: &mut dyn RuntimeModel) {
        if let Arrivals::Streamed { .. } = self {
            while self.next_time(world).is_some() {
                self.pop(world, runtime);
            }
        }
    }
}
