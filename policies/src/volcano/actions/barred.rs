//! Jobs preempt found barred, remembered across sessions. A job none of whose
//! pending pods may preempt (each `preemptionPolicy: Never`, or nominated by an
//! earlier preemption to a node whose predicates pass it whatever the nodes
//! hold: preempt's `may_preempt`) stays so until one of its inputs changes:
//! - the job's pods — a pod created, a status changed, a gate removed, a
//!   nomination set: each moves the job's [`lahar_core::world::Job::revision`];
//! - the nodes' taints and labels (the only state of the cluster the
//!   predicates' "passes everywhere" answers read: each edit of them — an
//!   operator's taint, cordon or label, a drain's cordon — is counted by
//!   [`lahar_core::model::cluster::Cluster::filter_edits`]; resource names
//!   and NUMA topologies do not change during a run);
//! - inter-pod affinity coming into play, which preempt asks before the memo.
//!
//! A backlog of preemptors waiting on their nominated nodes then costs one
//! lookup per job and session, not a walk of each job's pods. Not used in
//! exhaustive mode (which asks nothing), nor for a job `--explain` watches.
//! `a_wrong_barred_memo_is_caught` shows the contended equivalence property
//! notices a memo that ignores revisions.
//!
//! Nor does preempt look up every admitted job: a job found barred at its
//! revision — or found not starving, where every plugin that votes on that
//! reads only the job's pods ([`crate::volcano::framework::Framework::starving_reads_job`]) —
//! stays so until it is revised, unlisted or listed again, each of
//! which the World's log of admitted jobs notes
//! ([`Session::admitted_log_since`]). So a walk needs only the jobs the last
//! walk did not find barred and those logged since (`Barred::to_walk`): a
//! few per session where the backlog holds thousands.
//! `a_wrong_admitted_log_is_caught` shows the property notices a log that
//! misses revisions.

use lahar_core::model::job::JobId;
use lahar_core::session::Session;
use rustc_hash::FxHashMap;

/// The barred jobs, each with the revision it was found barred at.
#[derive(Debug, Default)]
pub struct Barred {
    jobs: FxHashMap<JobId, u64>,
    /// The cluster's taint and label edits the entries were found under.
    edits: u64,
    /// The admitted jobs the last walk left for the next one to ask,
    /// ascending, and the position of the World's log of admitted jobs when it
    /// began; `None`: the next walk reads the whole list.
    walked: Option<(Vec<JobId>, u64)>,
}

impl Barred {
    /// Drops every entry when the nodes' taints or labels changed since they were
    /// made, and the entries of jobs that changed or ended once they outnumber
    /// the admitted waiting jobs (a memo never larger than the backlog it serves).
    pub(crate) fn sync(&mut self, ssn: &Session<'_>) {
        let edits = ssn.cluster().filter_edits();
        if edits != self.edits {
            self.jobs.clear();
            self.edits = edits;
            self.walked = None;
        }
        if self.jobs.len() > 2 * ssn.admitted_facts().len() + 1024 {
            self.jobs.retain(|&j, r| ssn.has_job(j) && ssn.job(j).revision == *r);
        }
    }

    /// True if job `j` was found barred at its current revision.
    pub(crate) fn known(&self, ssn: &Session<'_>, j: JobId) -> bool {
        self.known_at(ssn, j, None)
    }

    /// [`Barred::known`] given the job's current revision when the caller has
    /// it (the World's list of admitted jobs carries a copy), else read from
    /// the job.
    pub(crate) fn known_at(&self, ssn: &Session<'_>, j: JobId, rev: Option<u64>) -> bool {
        self.jobs.get(&j).is_some_and(|&r| r == rev.unwrap_or_else(|| ssn.job(j).revision) || ssn.planted.wrong_barred)
    }

    /// What the last walk left for the next ([`Barred::to_walk`]), taken out
    /// for a walk that may not happen (then given back with [`Barred::walked`]).
    pub(crate) fn take_walked(&mut self) -> Option<(Vec<JobId>, u64)> {
        self.walked.take()
    }

    /// The admitted jobs a walk that drops the jobs known barred must look at
    /// (`walked`: what the last walk left, [`Barred::take_walked`]),
    /// ascending: those the last walk left not barred and those the World's log
    /// of admitted jobs names since it began (a job neither names is listed at
    /// the revision it was found barred at). `None`: the whole list (the first
    /// walk, after the taint state changed, when the log was cut, and in
    /// exhaustive sessions). The caller follows the log from its first walk.
    pub(crate) fn to_walk(walked: Option<&(Vec<JobId>, u64)>, ssn: &Session<'_>) -> Option<Vec<JobId>> {
        let (open, pos) = walked?;
        let log = ssn.admitted_log_since(*pos)?;
        let mut jobs: Vec<JobId> = open.iter().chain(log).copied().collect();
        jobs.sort_unstable();
        jobs.dedup();
        Some(jobs)
    }

    /// Notes a walk that began at log position `pos`: the jobs (ascending)
    /// the next walk must ask besides those logged since. `None`: the whole list.
    pub(crate) fn walked(&mut self, walked: Option<(Vec<JobId>, u64)>) {
        self.walked = walked;
    }

    /// Records what a walk of job `j`'s pods found.
    pub(crate) fn record(&mut self, ssn: &Session<'_>, j: JobId, barred: bool) {
        if barred {
            self.jobs.insert(j, ssn.job(j).revision);
        } else {
            self.jobs.remove(&j);
        }
    }
}
