//! Research baselines behind the same [`Scheduler`] interface as Volcano's pipeline,
//! selected with `scheduler: {baseline: NAME}`. Their exact rules are in each module's
//! documentation and in `docs/baselines.md`.
//!
//! | name | module |
//! |---|---|
//! | `gang-fifo`, `gang-fifo-strict` | [`gang_fifo`] |
//! | `fifo` | [`fifo`] |
//! | `sjf` | [`sjf`] |
//! | `kube-default` | [`kube_default`] |
//! | `easy-backfill` | [`easy_backfill`] |
//! | `tiresias` | [`tiresias`] |
//! | `random`, `dot-product`, `gpu-clustering`, `gpu-packing`, `best-fit`, `fgd` (the FGD paper's policies in time) | [`kube_default`] with [`crate::placement::live`] |

pub mod easy_backfill;
pub mod fifo;
mod gang;
pub mod gang_fifo;
pub mod kube_default;
pub mod sjf;
pub mod tiresias;

pub use easy_backfill::EasyBackfill;
pub use fifo::Fifo;
pub use gang_fifo::GangFifo;
pub use kube_default::KubeDefault;
pub use sjf::Sjf;
pub use tiresias::{Tiresias, TiresiasConfig};

use crate::placement::Policy;
use lahar_core::rng::RngStreams;
use lahar_core::session::Scheduler;

/// Baselines selectable by name.
pub const NAMES: &[&str] = &[
    "gang-fifo",
    "gang-fifo-strict",
    "fifo",
    "sjf",
    "kube-default",
    "easy-backfill",
    "tiresias",
    "random",
    "dot-product",
    "gpu-clustering",
    "gpu-packing",
    "best-fit",
    "fgd",
];

/// The run time a baseline that plans by run times (`sjf`, `easy-backfill`) reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RunTime {
    /// The job's true run time under ideal placement (`JobSpec.duration`): an oracle.
    #[default]
    Actual,
    /// The user's estimate (`JobSpec.estimate`, a time limit) where the job has
    /// one, else its true run time: what Slurm's backfill and the EASY papers see.
    Estimate,
}

impl RunTime {
    /// `actual` or `estimate`.
    pub fn parse(s: &str) -> Option<RunTime> {
        match s {
            "actual" => Some(RunTime::Actual),
            "estimate" => Some(RunTime::Estimate),
            _ => None,
        }
    }

    /// The run time this reads for a job.
    pub fn of(self, spec: &lahar_core::job::JobSpec) -> lahar_core::time::SimDuration {
        match (self, spec.estimate) {
            (RunTime::Estimate, Some(e)) => e,
            _ => spec.duration,
        }
    }
}

/// Baselines that plan by run times, and so take [`BaselineOptions::run_time`].
pub const PLAN_BY_RUN_TIME: &[&str] = &["sjf", "easy-backfill"];

/// A baseline's parameters a scenario may set (`spec.scheduler`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BaselineOptions {
    /// `runTime`: which run time `sjf` and `easy-backfill` plan with.
    pub run_time: RunTime,
}

/// Builds a baseline by name, with its default parameters, drawing what it draws
/// from `seed`'s streams; `None` for an unknown name.
pub fn build(name: &str, seed: u64) -> Option<Box<dyn Scheduler>> {
    build_with(name, seed, BaselineOptions::default())
}

/// [`build`] with the scenario's options.
pub fn build_with(name: &str, seed: u64, opts: BaselineOptions) -> Option<Box<dyn Scheduler>> {
    if let Some(p) = Policy::from_name(name) {
        return Some(Box::new(KubeDefault::placement(p, RngStreams::new(seed))));
    }
    match name {
        "gang-fifo" => Some(Box::new(GangFifo::new(false))),
        "gang-fifo-strict" => Some(Box::new(GangFifo::new(true))),
        "fifo" => Some(Box::new(Fifo::new())),
        "sjf" => Some(Box::new(Sjf::with_run_time(opts.run_time))),
        "kube-default" => Some(Box::new(KubeDefault::new())),
        "easy-backfill" => Some(Box::new(EasyBackfill::with_run_time(opts.run_time))),
        "tiresias" => Some(Box::new(Tiresias::default())),
        _ => None,
    }
}
