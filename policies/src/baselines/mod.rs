//! Research baselines behind the same [`Scheduler`] interface as Volcano's pipeline,
//! selected with `scheduler: {baseline: NAME}`.

pub mod gang_fifo;

pub use gang_fifo::GangFifo;

use lahar_core::session::Scheduler;

/// Baselines selectable by name.
pub const NAMES: &[&str] = &["gang-fifo", "gang-fifo-strict"];

/// Builds a baseline by name; `None` for an unknown name.
pub fn build(name: &str) -> Option<Box<dyn Scheduler>> {
    match name {
        "gang-fifo" => Some(Box::new(GangFifo::new(false))),
        "gang-fifo-strict" => Some(Box::new(GangFifo::new(true))),
        _ => None,
    }
}
