//! `drf`: dominant resource fairness between jobs. A job's share is the largest,
//! over the cluster's resource dimensions (including `pods`), of its allocation
//! over the cluster total. Jobs with smaller shares go first; a running pod is a
//! preemption victim when the preemptor's job, with the preemptor added, would
//! still have a smaller (or equal) share than the victim's job without it.
//! Hierarchical DRF (`enableHierarchy`) is not modelled (rejected at conf load).

use super::super::framework::Plugin;
use lahar_core::job::{JobId, PodId};
use lahar_core::resource::{DIMS, Resources};
use lahar_core::session::Session;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// The drf plugin (no arguments).
pub struct Drf;

/// Dominant share of an allocation.
pub fn dominant_share(alloc: &Resources, total: &Resources) -> f64 {
    (0..DIMS).filter(|&d| total.get(d) > 0).map(|d| alloc.get(d) as f64 / total.get(d) as f64).fold(0.0, f64::max)
}

impl Plugin for Drf {
    fn name(&self) -> &'static str {
        "drf"
    }
    fn job_order(&self, ssn: &Session<'_>, l: JobId, r: JobId) -> Option<Ordering> {
        let t = ssn.total();
        let (a, b) = (dominant_share(&ssn.job(l).allocated, &t), dominant_share(&ssn.job(r).allocated, &t));
        Some(a.partial_cmp(&b).unwrap_or(Ordering::Equal))
    }
    fn preemptable(&self, ssn: &Session<'_>, preemptor: PodId, cands: &[PodId]) -> Option<Vec<PodId>> {
        let t = ssn.total();
        let p = ssn.pod(preemptor);
        let ls = dominant_share(&(ssn.job(p.job).allocated + p.req), &t);
        let mut removed: BTreeMap<JobId, Resources> = BTreeMap::new();
        let mut out = Vec::new();
        for &c in cands {
            let v = ssn.pod(c);
            let r = removed.entry(v.job).or_default();
            *r += v.req;
            let rs = dominant_share(&(ssn.job(v.job).allocated - *r), &t);
            if ls < rs || (ls - rs).abs() <= 1e-6 {
                out.push(c);
            }
        }
        Some(out)
    }
}
