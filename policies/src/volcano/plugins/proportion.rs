//! `proportion`: queues share the cluster by weight. Each session, for the queues
//! that have jobs, `deserved` is computed by Volcano's water-filling over every
//! resource dimension (capped by capability and request, raised to guarantee);
//! a queue is overused once its allocation reaches `deserved` in every dimension,
//! may take a pod only while `allocated + request ≤ deserved` on the pod's
//! dimensions, and queues are ordered by priority, then by share
//! `max(allocated / deserved)`.

use super::super::plugin::{Hooks, Plugin, PluginSpec, Vote};
use super::{Admission, FRes, copies_within, f, le, le_on, over_limit, share};
use lahar_core::model::job::{JobId, PodId};
use lahar_core::model::queue::{QueueId, QueueState};
use lahar_core::model::resource::{DIMS, PODS, ResourceList, Resources};
use lahar_core::session::Session;
use lahar_core::world::VictimKey;
use std::cmp::Ordering;

/// The plugin's entry in [`super::ALL`].
pub const SPEC: PluginSpec = PluginSpec::new("proportion", |_| Box::new(Proportion::default()));

/// Per-queue attributes of a session.
#[derive(Clone, Debug, Default)]
pub struct Attr {
    /// Whether the queue has jobs this session.
    pub active: bool,
    /// Deserved resources.
    pub deserved: FRes,
    /// Capability ∧ (total − Σ guarantees + own guarantee).
    pub real_capability: FRes,
}

/// The proportion plugin (no arguments).
#[derive(Default)]
pub struct Proportion {
    /// Attributes by queue id.
    pub attrs: Vec<Attr>,
    admission: Vec<Admission>,
    /// The water-filling's inputs by queue id (kept between sessions only to
    /// reuse their memory: every session that computes writes them afresh).
    terms: Vec<Terms>,
    /// What the last session's `attrs` were computed from: the cluster's
    /// total and each queue's [`Inputs`] (a session with the same inputs
    /// keeps them; `--exhaustive` always computes).
    last: Option<(Resources, Vec<Inputs>)>,
    /// This session's inputs (its buffer reused).
    inputs: Vec<Inputs>,
}

/// Everything of a queue the water-filling reads: `attrs` are a function of
/// these and the cluster's total.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Inputs {
    /// allocated + pending.
    request: Resources,
    active: bool,
    weight: u32,
    guarantee: ResourceList,
    capability: ResourceList,
}

/// A queue's inputs to the water-filling: what it asks for (allocated +
/// pending), its weight and guarantee, and whether it has met its request.
#[derive(Clone, Copy, Debug, Default)]
struct Terms {
    request: FRes,
    weight: f64,
    guarantee: FRes,
    meet: bool,
}

fn list_or(l: &ResourceList, d: usize, default: f64) -> f64 {
    if l.has(d) { l.values.get(d) as f64 } else { default }
}

/// `realCapability` of a queue: `ExceededPart(total, Σ guarantees) + guarantee`,
/// clipped by the capability's given dimensions (cpu/memory ≤ 0 mean unlimited).
pub fn real_capability(total: &Resources, sum_guarantee: &Resources, q: &lahar_core::model::queue::Queue) -> FRes {
    let base = total.exceeded_part(sum_guarantee);
    let mut out = [0.0; DIMS];
    for (d, o) in out.iter_mut().enumerate() {
        let g = list_or(&q.guarantee, d, 0.0);
        let mut v = base.get(d) as f64 + g;
        let cap = list_or(&q.capability, d, f64::INFINITY);
        let cap = if d <= 1 && cap <= 0.0 { f64::INFINITY } else { cap };
        v = v.min(cap);
        *o = v;
    }
    out
}

impl Proportion {
    fn attr(&self, q: QueueId) -> &Attr {
        &self.attrs[q.0 as usize]
    }
    /// Queue `q`'s allocation is above its deserved share in some dimension.
    fn above_deserved(&self, ssn: &Session<'_>, q: QueueId) -> bool {
        !le(&f(&ssn.queue(q).allocation()), &self.attr(q).deserved)
    }
    fn share(&self, ssn: &Session<'_>, q: QueueId) -> f64 {
        share(&f(&ssn.queue(q).allocation()), &self.attr(q).deserved)
    }
}

impl Plugin for Proportion {
    fn name(&self) -> &'static str {
        "proportion"
    }
    fn hooks(&self) -> Hooks {
        Hooks::RECLAIMABLE.and(Hooks::RECLAIM_IGNORES_RECLAIMER).and(Hooks::NEVER_ABSTAINS)
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        Admission::per_queue_into(ssn, &mut self.admission);
        let total = ssn.total();
        if !ssn.is_exhaustive() {
            self.inputs.clear();
            self.inputs.extend(ssn.queues().iter().map(|q| Inputs {
                request: q.allocated + q.pending,
                active: q.active_jobs > 0,
                weight: q.spec.weight,
                guarantee: q.spec.guarantee,
                capability: q.spec.capability,
            }));
            // The deliberately stale memo of the equivalence tests forgets
            // the queues' requests and activity.
            let same = |a: &Inputs, b: &Inputs| {
                a == b
                    || (ssn.planted.stale_proportion
                        && (a.weight, a.guarantee, a.capability) == (b.weight, b.guarantee, b.capability))
            };
            if let Some((t, last)) = &self.last
                && *t == total
                && last.len() == self.inputs.len()
                && last.iter().zip(&self.inputs).all(|(a, b)| same(a, b))
            {
                return;
            }
            match &mut self.last {
                Some((t, last)) => {
                    *t = total;
                    std::mem::swap(last, &mut self.inputs);
                }
                None => self.last = Some((total, std::mem::take(&mut self.inputs))),
            }
        } else {
            self.last = None;
        }
        let nq = ssn.queues().len();
        self.attrs.clear();
        self.attrs.resize(nq, Attr::default());
        let sum_g = ssn.queues().iter().fold(Resources::ZERO, |a, q| {
            let mut g = Resources::ZERO;
            for d in 0..DIMS {
                g.set(d, q.spec.guarantee.get_or(d, 0));
            }
            a + g
        });
        if ssn.is_exhaustive() {
            for j in ssn.jobs().collect::<Vec<_>>() {
                self.attrs[ssn.job(j).spec.queue.0 as usize].active = true;
            }
        } else {
            for (a, q) in self.attrs.iter_mut().zip(ssn.queues()) {
                a.active = q.active_jobs > 0;
            }
        }
        self.terms.clear();
        for (i, q) in ssn.queues().iter().enumerate() {
            self.attrs[i].real_capability = real_capability(&total, &sum_g, &q.spec);
            let mut t =
                Terms { request: f(&(q.allocated + q.pending)), weight: q.spec.weight as f64, ..Terms::default() };
            for (d, g) in t.guarantee.iter_mut().enumerate() {
                *g = list_or(&q.spec.guarantee, d, 0.0);
            }
            self.terms.push(t);
        }
        // Water-filling, exactly as Volcano's proportion plugin.
        let mut remaining = f(&total);
        let terms = &mut self.terms;
        loop {
            let w: f64 = (0..nq).filter(|&i| self.attrs[i].active && !terms[i].meet).map(|i| terms[i].weight).sum();
            if w == 0.0 {
                break;
            }
            let mut inc = [0.0; DIMS];
            let mut dec = [0.0; DIMS];
            // A round is the queues not yet met at its start: a queue's turn
            // changes only its own mark.
            for i in 0..nq {
                if !self.attrs[i].active || terms[i].meet {
                    continue;
                }
                let t = &mut terms[i];
                let old = self.attrs[i].deserved;
                let mut des = old;
                for d in 0..DIMS {
                    des[d] += remaining[d] * t.weight / w;
                    des[d] = des[d].min(self.attrs[i].real_capability[d]);
                    des[d] = des[d].min(t.request[d]);
                    des[d] = des[d].max(t.guarantee[d]);
                }
                self.attrs[i].deserved = des;
                if le(&t.request, &des) || des == old {
                    t.meet = true;
                }
                for d in 0..DIMS {
                    let delta = des[d] - old[d];
                    if delta > 0.0 {
                        inc[d] += delta;
                    } else {
                        dec[d] -= delta;
                    }
                }
            }
            let prev = remaining;
            for d in 0..DIMS {
                remaining[d] = (remaining[d] + dec[d] - inc[d]).max(0.0);
            }
            if remaining.iter().all(|&v| v < 0.1) || remaining == prev {
                break;
            }
        }
    }
    fn queue_order(&self, ssn: &Session<'_>, l: QueueId, r: QueueId) -> Option<Ordering> {
        let (pl, pr) = (ssn.queue(l).spec.priority, ssn.queue(r).spec.priority);
        if pl != pr {
            return Some(pr.cmp(&pl));
        }
        Some(self.share(ssn, l).partial_cmp(&self.share(ssn, r)).unwrap_or(Ordering::Equal))
    }
    fn overused(&self, ssn: &Session<'_>, q: QueueId) -> Option<bool> {
        Some(le(&self.attr(q).deserved, &f(&ssn.queue(q).allocation())))
    }
    fn allocatable(&self, ssn: &Session<'_>, q: QueueId, pod: PodId) -> Option<bool> {
        self.preemptive(ssn, q, &ssn.pod(pod).req)
    }
    fn allocatable_copies(&self, ssn: &Session<'_>, q: QueueId, req: &Resources, cap: u32) -> Option<u32> {
        Some(copies_within(ssn.queue(q), req, cap, &self.attr(q).deserved))
    }
    fn allocatable_why(&self, ssn: &Session<'_>, q: QueueId, pod: PodId, ahead: &Resources) -> Option<String> {
        let qs = ssn.queue(q);
        if qs.spec.state != QueueState::Open {
            return Some(format!("the queue is {:?}, not Open", qs.spec.state));
        }
        let a = self.attr(q);
        let req = ssn.pod(pod).req;
        let why = over_limit(ssn, &f(&(qs.allocation() + *ahead)), &req, &a.deserved, "deserved")?;
        // The capability the user gave, on the dimensions the pod asks for.
        let names = &ssn.cluster().resource_names;
        let cap: Vec<String> = (0..DIMS)
            .filter(|&d| d != PODS && req.get(d) > 0 && qs.spec.capability.has(d))
            .map(|d| names.show(d, qs.spec.capability.values.get(d) as f64))
            .collect();
        Some(if cap.is_empty() { why } else { format!("{why}; capability {}", cap.join(", ")) })
    }
    fn preemptive(&self, ssn: &Session<'_>, q: QueueId, req: &Resources) -> Option<bool> {
        // Volcano's queueAllocatable, over every pod asked about.
        let qs = ssn.queue(q);
        if qs.spec.state != QueueState::Open {
            return Some(false);
        }
        Some(le_on(&f(&(qs.allocation() + *req)), &self.attr(q).deserved, req))
    }
    fn victim_group_ok(&self, ssn: &Session<'_>, _: PodId, reclaim: bool, key: VictimKey) -> Option<bool> {
        // Only queues above their deserved share give pods back.
        reclaim.then(|| self.above_deserved(ssn, key.queue))
    }
    fn victim_group_stamp(&self, ssn: &Session<'_>, reclaim: bool, out: &mut Vec<u64>) {
        // The queues above their deserved share, a bit each.
        if !reclaim {
            return;
        }
        let from = out.len();
        out.resize(from + self.attrs.len().div_ceil(64), 0);
        for q in 0..self.attrs.len() {
            if self.above_deserved(ssn, QueueId(q as u32)) {
                out[from + q / 64] |= 1 << (q % 64);
            }
        }
    }
    fn reclaimable(&self, ssn: &Session<'_>, _reclaimer: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        let mut running: Vec<Option<FRes>> = vec![None; self.attrs.len()];
        let mut out = Vec::new();
        for &c in cands {
            let q = ssn.job(ssn.pod(c).job).spec.queue;
            let alloc = running[q.0 as usize].get_or_insert_with(|| f(&ssn.queue(q).allocation()));
            if !le(alloc, &self.attr(q).deserved) {
                let req = f(&ssn.pod(c).req);
                for d in 0..DIMS {
                    alloc[d] -= req[d];
                }
                out.push(c);
            }
        }
        Some(out)
    }
    fn job_enqueueable(&self, ssn: &Session<'_>, j: JobId) -> Option<Vote> {
        let spec = &ssn.job(j).spec;
        self.shape_enqueueable(ssn, spec.queue, &spec.min_resources)
    }
    fn shape_enqueueable(&self, ssn: &Session<'_>, q: QueueId, minr: &Resources) -> Option<Vote> {
        let i = q.0 as usize;
        Some(self.admission[i].vote(ssn, q, minr, &self.attrs[i].real_capability))
    }
    fn enqueue_refusal(&self, ssn: &Session<'_>, j: JobId) -> Option<String> {
        let q = ssn.job(j).spec.queue.0 as usize;
        self.admission[q].refusal(ssn, j, &self.attrs[q].real_capability)
    }
    fn job_enqueued(&mut self, ssn: &Session<'_>, j: JobId) {
        self.admission[ssn.job(j).spec.queue.0 as usize].admit(ssn, j);
    }
}
