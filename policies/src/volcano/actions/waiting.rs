//! enqueue's standing order of waiting PodGroups: per (queue, minResources)
//! group, the jobs in job order, kept across sessions from the World's journal of
//! waiting jobs whose state changed, so that a session admits from the heads of
//! the groups instead of sorting every waiting job.
//!
//! Valid because every job-order key that can be precomputed (priority: the job's
//! priority; gang: whether the job is ready; drf: the job's dominant share of the
//! cluster) is a function of the job's own state, and every change of that state
//! passes through the World's journal. When a plugin orders jobs without a key
//! (sla, hierarchical drf), enqueue sorts as before.

use super::super::framework::Framework;
use lahar_core::model::job::JobId;
use lahar_core::session::Session;
use lahar_core::util::time::SimTime;
use lahar_core::world::WaitingShape;
use rustc_hash::FxHashMap;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A waiting job's place in job order (the order of [`Framework::sort_jobs`]).
/// Shared, not copied, between the job's entry and its group's set.
#[derive(Clone, Debug)]
pub(crate) struct OrderKey {
    keys: Arc<[f64]>,
    /// The PodGroup's creation.
    created: SimTime,
    uid: Arc<(Arc<str>, String)>,
}

impl PartialEq for OrderKey {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for OrderKey {}
impl PartialOrd for OrderKey {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for OrderKey {
    fn cmp(&self, o: &Self) -> Ordering {
        // Keys are finite and normalised (no −0), so `total_cmp` is the
        // comparator's `partial_cmp`.
        self.keys
            .iter()
            .zip(o.keys.iter())
            .map(|(a, b)| a.total_cmp(b))
            .find(|c| c.is_ne())
            .unwrap_or(Ordering::Equal)
            .then_with(|| self.created.cmp(&o.created))
            .then_with(|| self.uid.cmp(&o.uid))
    }
}

/// The standing order (owned by the Volcano scheduler, used by enqueue).
#[derive(Default, Debug)]
pub struct WaitingOrder {
    /// Per waiting job: its group and key.
    of: FxHashMap<JobId, (WaitingShape, OrderKey)>,
    /// Per group: its jobs in job order.
    pub(crate) groups: BTreeMap<WaitingShape, BTreeSet<(OrderKey, JobId)>>,
    /// False until the first session built it, or after a key could not be computed.
    ready: bool,
    /// The last journal read (its buffer is reused).
    journal: Vec<JobId>,
}

impl WaitingOrder {
    /// A job's job-order keys (normalised: no −0), if every job-order plugin
    /// gives a finite one.
    fn keys(fw: &Framework, ssn: &Session<'_>, j: JobId) -> Option<Vec<f64>> {
        let keys = fw.job_order_keys(ssn, j)?;
        if keys.iter().any(|k| !k.is_finite()) {
            return None;
        }
        Some(keys.into_iter().map(|k| k + 0.0).collect())
    }

    /// A job's key from its job-order keys.
    fn key(ssn: &Session<'_>, j: JobId, keys: Vec<f64>) -> OrderKey {
        let job = ssn.job(j);
        let spec = &job.spec;
        OrderKey {
            keys: keys.into(),
            created: job.pg_created,
            uid: Arc::new((spec.namespace.clone(), spec.name.clone())),
        }
    }

    fn remove(&mut self, j: JobId) {
        let Some((shape, key)) = self.of.remove(&j) else { return };
        if let Some(set) = self.groups.get_mut(&shape) {
            set.remove(&(key, j));
            if set.is_empty() {
                self.groups.remove(&shape);
            }
        }
    }

    /// Files job `j` under its current state; false if it has no key. A job
    /// the journal names again with its group and key unchanged (most of them:
    /// a waiting job's pods or counts moved, not its place) stays where it is.
    fn file(&mut self, fw: &Framework, ssn: &Session<'_>, j: JobId) -> bool {
        if !ssn.is_waiting_admission(j) {
            self.remove(j);
            return true;
        }
        let Some(keys) = Self::keys(fw, ssn, j) else {
            self.remove(j);
            return false;
        };
        let job = ssn.job(j);
        let shape = (job.spec.queue, job.spec.min_resources.0);
        // The uid (namespace, name) is the job's for ever.
        let same = |(s, k): &(WaitingShape, OrderKey)| *s == shape && *k.keys == *keys && k.created == job.pg_created;
        if self.of.get(&j).is_some_and(same) {
            return true;
        }
        self.remove(j);
        let key = Self::key(ssn, j, keys);
        self.groups.entry(shape).or_default().insert((key.clone(), j));
        self.of.insert(j, (shape, key));
        true
    }

    /// Brings the order up to date with the World; false when it cannot be kept
    /// (a plugin orders jobs without a key): enqueue then sorts.
    pub(crate) fn sync(&mut self, fw: &Framework, ssn: &mut Session<'_>) -> bool {
        let mut changed = std::mem::take(&mut self.journal);
        let tracked = ssn.take_waiting_changes(&mut changed);
        if !tracked || !self.ready {
            *self = WaitingOrder::default();
            changed = ssn.jobs_waiting_admission();
        }
        for &j in &changed {
            if !self.file(fw, ssn, j) {
                // Rebuilt in full at the next session that can key every job.
                *self = WaitingOrder::default();
                return false;
            }
        }
        self.journal = changed;
        self.ready = true;
        true
    }
}
