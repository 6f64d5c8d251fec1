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
use lahar_core::session::Scheduler;
use lahar_core::util::rng::RngStreams;

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
    pub fn of(self, spec: &lahar_core::model::job::JobSpec) -> lahar_core::util::time::SimDuration {
        match (self, spec.estimate) {
            (RunTime::Estimate, Some(e)) => e,
            _ => spec.duration,
        }
    }
}

/// A baseline's parameters a scenario may set (`spec.scheduler`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaselineOptions {
    /// `runTime`: which run time `sjf` and `easy-backfill` plan with.
    pub run_time: RunTime,
    /// `thresholds`, `promoteKnob`, `suspend`: `tiresias`'s parameters.
    pub tiresias: TiresiasConfig,
}

/// The `spec.scheduler` field `runTime` ([`BaselineOptions::run_time`]).
pub const RUN_TIME: &str = "runTime";
/// The `spec.scheduler` fields of [`BaselineOptions::tiresias`].
pub const TIRESIAS_OPTIONS: &[&str] = &["thresholds", "promoteKnob", "suspend"];

/// A baseline as `spec.scheduler.baseline` names it: its name, what it is, and how
/// to build it.
pub struct BaselineSpec {
    /// The name in a scenario.
    pub name: &'static str,
    /// What it does, in one line (docs/baselines.md has its exact rules).
    pub summary: &'static str,
    /// The `spec.scheduler` fields it reads besides `baseline` (any other is an
    /// error there): [`RUN_TIME`] for the baselines that plan by run times,
    /// [`TIRESIAS_OPTIONS`] for `tiresias`.
    pub options: &'static [&'static str],
    /// The scheduler, drawing what it draws from `seed`'s streams.
    pub build: fn(seed: u64, opts: BaselineOptions) -> Box<dyn Scheduler>,
}

const fn spec(
    name: &'static str,
    summary: &'static str,
    build: fn(u64, BaselineOptions) -> Box<dyn Scheduler>,
) -> BaselineSpec {
    BaselineSpec { name, summary, options: &[], build }
}

/// The FGD paper's placement policy named `name` in time (`kube-default`'s loop).
fn placement(name: &str, seed: u64) -> Box<dyn Scheduler> {
    let p = Policy::from_name(name).expect("a placement policy's spec names it");
    Box::new(KubeDefault::placement(p, RngStreams::new(seed)))
}

/// Every baseline, in the order `lahar list schedulers` and messages show them.
/// A new baseline is its module and one entry here (and its row in
/// docs/baselines.md, which a test holds to this list).
pub const ALL: &[BaselineSpec] = &[
    spec("gang-fifo", "FIFO, first-fit, later jobs start around a head that does not fit", |_, _| {
        Box::new(GangFifo::new(false))
    }),
    spec("gang-fifo-strict", "the same with head-of-line blocking", |_, _| Box::new(GangFifo::new(true))),
    spec("fifo", "strict head-of-line FIFO", |_, _| Box::new(Fifo::new())),
    BaselineSpec {
        options: &[RUN_TIME],
        ..spec("sjf", "shortest job first by run time, skipping jobs that do not fit", |_, o| {
            Box::new(Sjf::with_run_time(o.run_time))
        })
    },
    spec("kube-default", "per-pod placement like kube-scheduler, LeastAllocated score", |_, _| {
        Box::new(KubeDefault::new())
    }),
    BaselineSpec {
        options: &[RUN_TIME],
        ..spec("easy-backfill", "FIFO with one reservation for the head job (Slurm's EASY)", |_, o| {
            Box::new(EasyBackfill::with_run_time(o.run_time))
        })
    },
    BaselineSpec {
        options: TIRESIAS_OPTIONS,
        ..spec("tiresias", "discretized 2D-LAS with priority queues and a starvation guard", |_, o| {
            Box::new(Tiresias::new(o.tiresias))
        })
    },
    spec("random", "the FGD paper's random placement, in time", |s, _| placement("random", s)),
    spec("dot-product", "the FGD paper's dot-product placement, in time", |s, _| placement("dot-product", s)),
    spec("gpu-clustering", "the FGD paper's GPU clustering, in time", |s, _| placement("gpu-clustering", s)),
    spec("gpu-packing", "the FGD paper's GPU packing, in time", |s, _| placement("gpu-packing", s)),
    spec("best-fit", "the FGD paper's best fit, in time", |s, _| placement("best-fit", s)),
    spec("fgd", "the FGD paper's fragmentation-gradient descent, in time", |s, _| placement("fgd", s)),
];

/// The names of [`ALL`], in order.
pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    ALL.iter().map(|b| b.name)
}

/// The spec of the baseline named `name`.
pub fn spec_of(name: &str) -> Option<&'static BaselineSpec> {
    ALL.iter().find(|b| b.name == name)
}

/// Builds a baseline by name, with its default parameters, drawing what it draws
/// from `seed`'s streams; `None` for an unknown name.
pub fn build(name: &str, seed: u64) -> Option<Box<dyn Scheduler>> {
    build_with(name, seed, BaselineOptions::default())
}

/// [`build`] with the scenario's options.
pub fn build_with(name: &str, seed: u64, opts: BaselineOptions) -> Option<Box<dyn Scheduler>> {
    spec_of(name).map(|b| (b.build)(seed, opts))
}
