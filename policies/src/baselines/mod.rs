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

/// Builds a baseline by name, with its default parameters, drawing what it draws
/// from `seed`'s streams; `None` for an unknown name.
pub fn build(name: &str, seed: u64) -> Option<Box<dyn Scheduler>> {
    if let Some(p) = Policy::from_name(name) {
        return Some(Box::new(KubeDefault::placement(p, RngStreams::new(seed))));
    }
    match name {
        "gang-fifo" => Some(Box::new(GangFifo::new(false))),
        "gang-fifo-strict" => Some(Box::new(GangFifo::new(true))),
        "fifo" => Some(Box::new(Fifo::new())),
        "sjf" => Some(Box::new(Sjf::new())),
        "kube-default" => Some(Box::new(KubeDefault::new())),
        "easy-backfill" => Some(Box::new(EasyBackfill::new())),
        "tiresias" => Some(Box::new(Tiresias::default())),
        _ => None,
    }
}
