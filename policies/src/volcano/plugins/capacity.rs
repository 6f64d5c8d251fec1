//! `capacity`: per-dimension `deserved` declared on each queue (elastic borrowing
//! up to `capability`). Flat mode only; the hierarchical mode (`enableHierarchy`)
//! is rejected at conf load as not modelled. A queue's share is
//! `max(allocated / deserved)` over its deserved dimensions (1 for a queue without
//! `deserved`); a queue may take a pod while `allocated + request ≤ realCapability`,
//! and may reclaim while it stays within capability and below `deserved` on some
//! requested dimension. Queues have no overused check: they may borrow.

use super::super::framework::{Plugin, Vote};
use super::proportion::real_capability;
use super::{Admission, FRes, f, le, le_on, share};
use lahar_core::job::{JobId, PodId};
use lahar_core::queue::{QueueId, QueueState};
use lahar_core::resource::{DIMS, PODS, Resources};
use lahar_core::session::Session;
use std::cmp::Ordering;

#[derive(Clone, Debug, Default)]
struct Attr {
    deserved: FRes,
    has_deserved: bool,
    guarantee: FRes,
    real_capability: FRes,
}

/// The capacity plugin (no arguments).
#[derive(Default)]
pub struct Capacity {
    attrs: Vec<Attr>,
    admission: Vec<Admission>,
}

impl Capacity {
    fn share(&self, ssn: &Session<'_>, q: QueueId) -> f64 {
        let a = &self.attrs[q.0 as usize];
        if !a.has_deserved { 1.0 } else { share(&f(&ssn.queue(q).allocated), &a.deserved) }
    }
}

impl Plugin for Capacity {
    fn name(&self) -> &'static str {
        "capacity"
    }
    fn open(&mut self, ssn: &mut Session<'_>) {
        let total = ssn.total();
        let sum_g = ssn.queues().iter().fold(Resources::ZERO, |a, q| {
            let mut g = Resources::ZERO;
            for d in 0..DIMS {
                g.set(d, q.spec.guarantee.get_or(d, 0));
            }
            a + g
        });
        self.attrs = ssn
            .queues()
            .iter()
            .map(|q| {
                let rc = real_capability(&total, &sum_g, &q.spec);
                let mut a = Attr { real_capability: rc, has_deserved: !q.spec.deserved.is_empty(), ..Attr::default() };
                for d in 0..DIMS {
                    a.guarantee[d] = q.spec.guarantee.get_or(d, 0) as f64;
                    let des = if q.spec.deserved.has(d) { q.spec.deserved.values.get(d) as f64 } else { 0.0 };
                    a.deserved[d] = des.min(rc[d]).max(a.guarantee[d]);
                }
                a
            })
            .collect();
        self.admission = Admission::per_queue(ssn);
    }
    fn queue_order(&self, ssn: &Session<'_>, l: QueueId, r: QueueId) -> Option<Ordering> {
        let (pl, pr) = (ssn.queue(l).spec.priority, ssn.queue(r).spec.priority);
        if pl != pr {
            return Some(pr.cmp(&pl));
        }
        let o = self.share(ssn, l).partial_cmp(&self.share(ssn, r)).unwrap_or(Ordering::Equal);
        if o.is_ne() {
            return Some(o);
        }
        let (dl, dr) = (self.attrs[l.0 as usize].has_deserved, self.attrs[r.0 as usize].has_deserved);
        Some(dr.cmp(&dl))
    }
    fn allocatable(&self, ssn: &Session<'_>, q: QueueId, pod: PodId) -> Option<bool> {
        let qs = ssn.queue(q);
        if qs.spec.state != QueueState::Open {
            return Some(false);
        }
        let req = ssn.pod(pod).req;
        Some(le_on(&f(&(qs.allocated + req)), &self.attrs[q.0 as usize].real_capability, &req))
    }
    fn preemptive(&self, ssn: &Session<'_>, q: QueueId, pod: PodId) -> Option<bool> {
        if self.allocatable(ssn, q, pod) != Some(true) {
            return Some(false);
        }
        let req = ssn.pod(pod).req;
        let after = f(&(ssn.queue(q).allocated + req));
        let des = &self.attrs[q.0 as usize].deserved;
        Some((0..DIMS).any(|d| d != PODS && req.get(d) > 0 && after[d] <= des[d]))
    }
    fn reclaimable(&self, ssn: &Session<'_>, reclaimer: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        let rreq = ssn.pod(reclaimer).req;
        let mut running: Vec<Option<FRes>> = vec![None; self.attrs.len()];
        let mut out = Vec::new();
        for &c in cands {
            let v = ssn.pod(c);
            let q = ssn.job(v.job).spec.queue;
            let a = &self.attrs[q.0 as usize];
            // Skip a reclaimee that shares no resource dimension with the reclaimer.
            if !(0..DIMS).any(|d| d != PODS && v.req.get(d) > 0 && rreq.get(d) > 0) {
                continue;
            }
            let alloc = running[q.0 as usize].get_or_insert_with(|| f(&ssn.queue(q).allocated));
            let mut after = *alloc;
            let vr = f(&v.req);
            for d in 0..DIMS {
                after[d] -= vr[d];
            }
            // Never below the queue's guarantee.
            if !le(&a.guarantee, &after) {
                continue;
            }
            let requests_deserved = (0..DIMS).any(|d| d != PODS && v.req.get(d) > 0 && a.deserved[d] > 0.0);
            let over =
                (0..DIMS).any(|d| d != PODS && v.req.get(d) > 0 && a.deserved[d] > 0.0 && alloc[d] > a.deserved[d]);
            if !requests_deserved || over {
                *alloc = after;
                out.push(c);
            }
        }
        Some(out)
    }
    fn job_enqueueable(&self, ssn: &Session<'_>, j: JobId) -> Option<Vote> {
        let q = ssn.job(j).spec.queue.0 as usize;
        Some(self.admission[q].vote(ssn, j, &self.attrs[q].real_capability))
    }
    fn job_enqueued(&mut self, ssn: &Session<'_>, j: JobId) {
        self.admission[ssn.job(j).spec.queue.0 as usize].admit(ssn, j);
    }
}
