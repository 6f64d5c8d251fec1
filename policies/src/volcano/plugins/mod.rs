//! Volcano's plugins. Each module documents the extension points it registers and
//! its arguments.

pub mod binpack;
pub mod capacity;
pub mod cdp;
pub mod conformance;
pub mod deviceshare;
pub mod drf;
mod epoch_memo;
pub mod extender;
pub mod fgd;
pub mod gang;
pub mod network_topology;
pub mod nodegroup;
pub mod nodeorder;
pub mod numa_aware;
pub mod overcommit;
pub mod pdb;
pub mod predicates;
pub mod priority;
pub mod proportion;
pub mod queue_tree;
pub mod rescheduling;
pub mod resource_strategy_fit;
pub mod sla;
pub mod task_topology;
pub mod tdm;
pub mod usage;

use super::plugin::{PluginSpec, Vote};
use lahar_core::model::job::{JobId, PodGroupPhase, PodStatus};
use lahar_core::model::queue::{QueueId, QueueState};
use lahar_core::model::resource::{DIMS, PODS, Resources};
use lahar_core::session::Session;

/// Every plugin lahar runs, in the order messages list them. A new plugin is its
/// module (which exports a `SPEC`) and one line here; its docs row in
/// docs/volcano.md is held to its spec by a test.
pub const ALL: &[PluginSpec] = &[
    priority::SPEC,
    gang::SPEC,
    conformance::SPEC,
    drf::SPEC,
    proportion::SPEC,
    capacity::SPEC,
    predicates::SPEC,
    nodeorder::SPEC,
    binpack::SPEC,
    network_topology::SPEC,
    sla::SPEC,
    overcommit::SPEC,
    task_topology::SPEC,
    fgd::SPEC,
    resource_strategy_fit::SPEC,
    nodegroup::SPEC,
    usage::SPEC,
    cdp::SPEC,
    deviceshare::SPEC,
    pdb::SPEC,
    rescheduling::SPEC,
    tdm::SPEC,
    extender::SPEC,
    numa_aware::SPEC,
];

/// Plugins Volcano registers that lahar does not run, with what they need.
pub const VOLCANO_ONLY: &[(&str, &str)] = &[("resourcequota", "namespace ResourceQuotas are not read")];

/// The spec of the plugin named `name`.
pub fn spec(name: &str) -> Option<&'static PluginSpec> {
    ALL.iter().find(|s| s.name == name)
}

/// The names of [`ALL`], in order.
pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    ALL.iter().map(|s| s.name)
}

/// The running value of job `j` in a short per-job list (made by `init` on the
/// first look): a victim rule's candidates, a node's pods, belong to few jobs.
pub(crate) fn per_job<V>(list: &mut Vec<(JobId, V)>, j: JobId, init: impl FnOnce() -> V) -> &mut V {
    let at = match list.iter().position(|e| e.0 == j) {
        Some(at) => at,
        None => {
            list.push((j, init()));
            list.len() - 1
        }
    };
    &mut list[at].1
}

/// Pending BestEffort pods of a job (they count toward readiness): a counter the
/// World keeps; exhaustive sessions count the job's pods.
pub(crate) fn pending_best_effort(ssn: &Session<'_>, j: JobId) -> u32 {
    if ssn.is_exhaustive() {
        let pods = &ssn.job(j).pods;
        return pods.iter().filter(|&&p| ssn.pod(p).status == PodStatus::Pending && ssn.pod(p).best_effort).count()
            as u32;
    }
    ssn.job(j).pending_best_effort
}

/// A float resource vector (deserved shares are fractional in Volcano).
pub(crate) type FRes = [f64; DIMS];

/// Converts to floats.
pub(crate) fn f(r: &Resources) -> FRes {
    let mut o = [0.0; DIMS];
    for (d, v) in o.iter_mut().enumerate() {
        *v = r.get(d) as f64;
    }
    o
}

/// Volcano's `LessEqual` with its 0.1 epsilon, every dimension.
pub(crate) fn le(a: &FRes, b: &FRes) -> bool {
    (0..DIMS).all(|d| a[d] < b[d] || (a[d] - b[d]).abs() < 0.1)
}

/// `a ≤ b` on the dimensions `mask` requests (> 0), ignoring pods, no epsilon
/// (Volcano's `LessEqualWithDimension`).
pub(crate) fn le_on(a: &FRes, b: &FRes, mask: &Resources) -> bool {
    (0..DIMS).all(|d| d == PODS || mask.get(d) <= 0 || a[d] <= b[d])
}

/// How many of `cap` pods of request `req`, placed one after another in a
/// queue in state `qs`, `limit` admits as proportion's and capacity's
/// `allocatable` asks each ([`le_on`] on the queue's allocation with the pods
/// before it); none when the queue is not Open. The votes fall once they fall:
/// all `cap` admitted is one question.
pub(crate) fn copies_within(qs: &lahar_core::world::QueueState, req: &Resources, cap: u32, limit: &FRes) -> u32 {
    if qs.spec.state != QueueState::Open {
        return 0;
    }
    let admits = |k: u32| le_on(&f(&(qs.allocation() + req.times(k as i64))), limit, req);
    if admits(cap) { cap } else { (1..cap).take_while(|&k| admits(k)).count() as u32 }
}

/// Why `allocated + req ≤ limit` fails on the dimensions `req` asks for (as
/// [`le_on`] checks it), for `--explain`: the first such dimension in numbers,
/// `nvidia.com/gpu: 24 allocated + 8 asked = 32 > deserved 24`.
pub(crate) fn over_limit(
    ssn: &Session<'_>,
    allocated: &FRes,
    req: &Resources,
    limit: &FRes,
    what: &str,
) -> Option<String> {
    let names = &ssn.cluster().resource_names;
    let r = f(req);
    let d = (0..DIMS).find(|&d| d != PODS && req.get(d) > 0 && allocated[d] + r[d] > limit[d])?;
    let a = |v: f64| lahar_core::model::resource::ResourceNames::amount(d, v);
    let cap = if limit[d].is_finite() { a(limit[d]) } else { "unlimited".to_string() };
    Some(format!(
        "{}: {} allocated + {} asked = {} > {what} {cap}",
        names.name(d),
        a(allocated[d]),
        a(r[d]),
        a(allocated[d] + r[d])
    ))
}

/// Share: max over dimensions with `deserved ≥ 0.1` of allocated / deserved.
pub(crate) fn share(alloc: &FRes, deserved: &FRes) -> f64 {
    (0..DIMS).filter(|&d| deserved[d] >= 0.1).map(|d| alloc[d] / deserved[d]).fold(0.0, f64::max)
}

/// The requests of job `j`'s gated pods that Volcano's `DeductSchGatedResources`
/// takes off its reservations (zero for most jobs).
pub(crate) fn deducted(ssn: &Session<'_>, j: JobId) -> lahar_core::model::resource::Resources {
    ssn.gating(j).map_or(lahar_core::model::resource::Resources::ZERO, |g| g.deducted)
}

/// Per-queue admission bookkeeping shared by `proportion` and `capacity`:
/// resources reserved by admitted PodGroups that are not yet placed (`inqueue`) and
/// allocation beyond jobs' minResources (`elastic`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Admission {
    pub inqueue: FRes,
    pub elastic: FRes,
}

impl Admission {
    /// One entry per queue: the sums the World keeps up to date on every bind,
    /// eviction and phase change (exact integers, converted once); exhaustive
    /// sessions recompute them from every job instead.
    pub fn per_queue(ssn: &Session<'_>) -> Vec<Admission> {
        let mut out = Vec::new();
        Admission::per_queue_into(ssn, &mut out);
        out
    }

    /// [`Admission::per_queue`] written into `out` (its memory reused).
    pub fn per_queue_into(ssn: &Session<'_>, out: &mut Vec<Admission>) {
        out.clear();
        if !ssn.is_exhaustive() {
            out.extend(ssn.queues().iter().map(|q| Admission { inqueue: f(&q.inqueue), elastic: f(&q.elastic) }));
            return;
        }
        out.resize(ssn.queues().len(), Admission::default());
        for j in ssn.jobs() {
            let job = ssn.job(j);
            // A job neither admitted nor holding resources adds zeros: skip it (a
            // backlog of Pending PodGroups is most of the jobs).
            if job.pg_phase != PodGroupPhase::Inqueue && job.allocated.is_zero() {
                continue;
            }
            let a = &mut out[job.spec.queue.0 as usize];
            let minr = job.spec.min_resources;
            if job.pg_phase == PodGroupPhase::Inqueue {
                let unmet = f(&minr.exceeded_part(&job.allocated).exceeded_part(&deducted(ssn, j)));
                for d in 0..DIMS {
                    a.inqueue[d] += unmet[d];
                }
            }
            let el = f(&job.allocated.exceeded_part(&minr));
            for d in 0..DIMS {
                a.elastic[d] += el[d];
            }
        }
    }

    /// `minResources + allocated + inqueue − elastic` of job `j`'s queue, per
    /// dimension, with job `j`'s minResources (what enqueue admits against).
    fn need(&self, ssn: &Session<'_>, j: JobId) -> (FRes, FRes, Resources) {
        let job = ssn.job(j);
        let minr = job.spec.min_resources;
        let (need, alloc) = self.need_shape(ssn, job.spec.queue, &minr);
        (need, alloc, minr)
    }

    /// `minResources + allocated + inqueue − elastic` of queue `q` (this
    /// admission's) for minResources `minr`, with the queue's allocation.
    fn need_shape(&self, ssn: &Session<'_>, q: QueueId, minr: &Resources) -> (FRes, FRes) {
        let (alloc, mr) = (f(&ssn.queue(q).allocation()), f(minr));
        let mut need = [0.0; DIMS];
        for d in 0..DIMS {
            need[d] = mr[d] + alloc[d] + self.inqueue[d] - self.elastic[d];
        }
        (need, alloc)
    }

    /// The enqueue vote for any job of queue `q` (this admission's) with
    /// minResources `minr`, the queue bounded by `real_capability`: refused
    /// unless the queue is Open; then permit iff `minResources + allocated +
    /// inqueue − elastic ≤ realCapability` on the dimensions minResources
    /// requests.
    pub fn vote(&self, ssn: &Session<'_>, q: QueueId, minr: &Resources, real_capability: &FRes) -> Vote {
        if ssn.queue(q).spec.state != QueueState::Open {
            return -1;
        }
        if minr.is_zero() {
            return 1;
        }
        let (need, _) = self.need_shape(ssn, q, minr);
        if le_on(&need, real_capability, minr) { 1 } else { -1 }
    }

    /// Why [`Admission::vote`] refuses job `j`, for `--explain`: the first
    /// dimension minResources asks for that does not fit (as `le_on` checks
    /// it), in numbers (`nvidia.com/gpu: minResources 2 + allocated 23 +
    /// inqueue 40 − elastic 0 = 65 > realCapability 64`); `None` when it does
    /// not refuse on numbers.
    pub fn refusal(&self, ssn: &Session<'_>, j: JobId, real_capability: &FRes) -> Option<String> {
        let (need, alloc, minr) = self.need(ssn, j);
        let d = (0..DIMS).find(|&d| d != PODS && minr.get(d) > 0 && need[d] > real_capability[d])?;
        let a = |v: f64| lahar_core::model::resource::ResourceNames::amount(d, v);
        let cap = if real_capability[d].is_finite() { a(real_capability[d]) } else { "unlimited".to_string() };
        Some(format!(
            "{}: minResources {} + allocated {} + inqueue {} − elastic {} = {} > realCapability {cap}",
            ssn.cluster().resource_names.name(d),
            a(f(&minr)[d]),
            a(alloc[d]),
            a(self.inqueue[d]),
            a(self.elastic[d]),
            a(need[d]),
        ))
    }

    /// Reserves an admitted job's minResources, less its gated pods' requests
    /// (`DeductSchGatedResources`).
    pub fn admit(&mut self, ssn: &Session<'_>, j: JobId) {
        let mr = f(&ssn.job(j).spec.min_resources.exceeded_part(&deducted(ssn, j)));
        for d in 0..DIMS {
            self.inqueue[d] += mr[d];
        }
    }
}
