//! `overcommit`: admit PodGroups while the cluster, inflated by
//! `overcommit-factor` (default 1.2; below 1 means 1.2), has room for their
//! `minResources` beside what is used and what admitted groups reserve.

use super::super::args::{ArgSpec, ArgType, Args};
use super::super::plugin::{Plugin, PluginSpec, Vote};
use super::{FRes, f, le_on};
use lahar_core::model::job::{JobId, PodGroupPhase};
use lahar_core::model::queue::QueueId;
use lahar_core::model::resource::{DIMS, Resources};
use lahar_core::session::Session;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("overcommit", |pc| Box::new(Overcommit::new(&pc.args)))
    .args(&[ArgSpec::new("overcommit-factor", ArgType::Float, "1.2", "cluster-wide admission headroom")]);

/// The overcommit plugin.
pub struct Overcommit {
    factor: f64,
    idle: FRes,
    inqueue: FRes,
}

impl Overcommit {
    /// Reads `overcommit-factor`.
    pub fn new(args: &Args) -> Self {
        let factor = args.float("overcommit-factor", 1.2);
        Overcommit { factor: if factor < 1.0 { 1.2 } else { factor }, idle: [0.0; DIMS], inqueue: [0.0; DIMS] }
    }
}

impl Plugin for Overcommit {
    fn name(&self) -> &'static str {
        "overcommit"
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        let total = f(&ssn.total());
        let top = ssn.cluster().topology.top();
        let used = f(&ssn.hypernode_used(top));
        for d in 0..DIMS {
            self.idle[d] = total[d] * self.factor - used[d];
        }
        if !ssn.is_exhaustive() {
            // Kept by the World on every bind, eviction and phase change.
            let reserved =
                ssn.queues().iter().fold(lahar_core::model::resource::Resources::ZERO, |a, q| a + q.reserved);
            self.inqueue = f(&reserved);
            return;
        }
        self.inqueue = [0.0; DIMS];
        for j in ssn.jobs() {
            let job = ssn.job(j);
            // Less the gated pods' requests (`DeductSchGatedResources`).
            let gated = super::deducted(ssn, j);
            let add = match job.pg_phase {
                PodGroupPhase::Inqueue => f(&job.spec.min_resources.exceeded_part(&gated)),
                PodGroupPhase::Running => {
                    f(&job.spec.min_resources.exceeded_part(&job.allocated).exceeded_part(&gated))
                }
                _ => continue,
            };
            for d in 0..DIMS {
                self.inqueue[d] += add[d];
            }
        }
    }
    fn job_enqueueable(&self, ssn: &Session<'_>, j: JobId) -> Option<Vote> {
        let spec = &ssn.job(j).spec;
        self.shape_enqueueable(ssn, spec.queue, &spec.min_resources)
    }
    fn shape_enqueueable(&self, _: &Session<'_>, _: QueueId, minr: &Resources) -> Option<Vote> {
        if minr.is_zero() {
            return Some(1);
        }
        let mr = f(minr);
        let mut need = [0.0; DIMS];
        for d in 0..DIMS {
            need[d] = self.inqueue[d] + mr[d];
        }
        Some(if le_on(&need, &self.idle, minr) { 1 } else { -1 })
    }
    fn job_enqueued(&mut self, ssn: &Session<'_>, j: JobId) {
        let mr = f(&ssn.job(j).spec.min_resources.exceeded_part(&super::deducted(ssn, j)));
        for d in 0..DIMS {
            self.inqueue[d] += mr[d];
        }
    }
}
