//! `--explain`: why a watched pod went where it went, or why it stayed pending.
//!
//! The engine hands each session an [`Explain`] only when pods are watched; a
//! policy asks [`Session::explaining`](crate::session::Session::explaining) once per
//! pod evaluation and, for a watched pod only, records rows (per-node predicate
//! results, per-plugin scores, the outcome). Without watched pods nothing is
//! evaluated or stored, and explaining never changes a decision: policies compute
//! the extra rows from the same state without touching the session's random stream.
//!
//! Pods are watched by (job, task, replica index), so a pod that is replaced after
//! an eviction or a restart is still watched under its new id.

use crate::model::ids::NodeId;
use crate::model::ids::{JobId, PodId};
use crate::model::resource::{ResourceNames, Resources};
use crate::util::time::SimTime;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// One row of explain.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct ExplainRow {
    /// Session number.
    pub session: u64,
    /// Time.
    pub t: SimTime,
    /// The watched pod.
    pub pod: PodId,
    /// The node the row is about (none for pod-level rows).
    pub node: Option<NodeId>,
    /// The predicate, scoring plugin or step the row reports (`resources`,
    /// `predicates`, `binpack`, `total`, `result`...).
    pub plugin: Cow<'static, str>,
    /// Passed or failed (none for score rows).
    pub passed: Option<bool>,
    /// Failure reason or note.
    pub reason: String,
    /// Score, for scoring rows.
    pub score: Option<f64>,
}

/// What the sessions did with one watched pod over the whole run (also outside the
/// rows' time window): a one-line summary at the end of the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// Sessions that looked at the pod.
    pub sessions: u64,
    /// Per plugin or step (`predicates`, `gang`, `network-topology-aware`,
    /// `result`...): sessions in which it rejected the pod, or a node for it.
    pub rejected: BTreeMap<String, u64>,
    /// The session of the last row seen, and the steps that rejected in it.
    last: Option<u64>,
    seen: BTreeSet<String>,
}

/// Watched pods and the rows recorded for them.
#[derive(Clone, Debug, Default)]
pub struct Explain {
    watched: BTreeSet<(JobId, u16, u32)>,
    /// Rows in the order recorded (only those inside the window).
    pub rows: Vec<ExplainRow>,
    /// Rows are kept only for sessions at `from ≤ t < until` (`--explain-window`).
    window: (SimTime, SimTime),
    /// Per watched replica, every session counted.
    pub tallies: BTreeMap<(JobId, u16, u32), Tally>,
}

impl Explain {
    /// Watches the pods named by (job, task index, replica index).
    pub fn new(watched: impl IntoIterator<Item = (JobId, u16, u32)>) -> Explain {
        Explain {
            watched: watched.into_iter().collect(),
            rows: Vec::new(),
            window: (SimTime::ZERO, SimTime(u64::MAX)),
            tallies: BTreeMap::new(),
        }
    }
    /// Keeps rows only for sessions at `from ≤ t < until`; the tallies still count
    /// every session.
    pub fn with_window(mut self, from: SimTime, until: SimTime) -> Explain {
        self.window = (from, until);
        self
    }
    /// Records a row of the replica `key`.
    pub fn record(&mut self, key: (JobId, u16, u32), row: ExplainRow) {
        let t = self.tallies.entry(key).or_default();
        if t.last != Some(row.session) {
            t.last = Some(row.session);
            t.sessions += 1;
            t.seen.clear();
        }
        if row.passed == Some(false) && t.seen.insert(row.plugin.to_string()) {
            *t.rejected.entry(row.plugin.to_string()).or_default() += 1;
        }
        if self.window.0 <= row.t && row.t < self.window.1 {
            self.rows.push(row);
        }
    }
    /// True if the replica is watched.
    pub fn watches(&self, job: JobId, task: u16, index: u32) -> bool {
        self.watched.contains(&(job, task, index))
    }
    /// True if some replica of the job is watched.
    pub fn watches_job(&self, job: JobId) -> bool {
        self.watched.range((job, 0, 0)..=(job, u16::MAX, u32::MAX)).next().is_some()
    }
    /// True when nothing is watched.
    pub fn is_empty(&self) -> bool {
        self.watched.is_empty()
    }
}

/// Why a node whose aggregate resources fit cannot take the pod: its GPU devices
/// (see [`crate::world::GpuDevices`]).
pub const GPU_DEVICES_FULL: &str =
    "GPU devices fragmented: enough GPUs in total but no device placement for the request";

/// Volcano's resource-fit failure reason: `Insufficient <name>` for the first
/// dimension (in dimension order) where `req` exceeds `avail`; `None` if it fits.
pub fn insufficient(names: &ResourceNames, req: &Resources, avail: &Resources) -> Option<String> {
    (0..names.len()).find(|&d| req.get(d) > avail.get(d)).map(|d| format!("Insufficient {}", names.name(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watches_by_replica_and_job() {
        let e = Explain::new([(JobId(2), 1, 3)]);
        assert!(e.watches(JobId(2), 1, 3));
        assert!(!e.watches(JobId(2), 1, 2));
        assert!(e.watches_job(JobId(2)));
        assert!(!e.watches_job(JobId(1)));
        assert!(!e.watches_job(JobId(3)));
    }

    #[test]
    fn first_short_dimension_is_named() {
        let names = ResourceNames::default();
        let req = Resources::new(1000, 10, 2000, 1);
        assert_eq!(
            insufficient(&names, &req, &Resources::new(4000, 100, 1000, 0)).as_deref(),
            Some("Insufficient nvidia.com/gpu")
        );
        assert_eq!(
            insufficient(&names, &req, &Resources::new(4000, 100, 2000, 0)).as_deref(),
            Some("Insufficient pods")
        );
        assert_eq!(insufficient(&names, &req, &Resources::new(4000, 100, 2000, 1)), None);
    }
}
