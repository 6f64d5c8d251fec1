//! The order in which a session visits the waiting jobs: (queue, submit time, id),
//! and the session's memo of failed gangs, with the jobs it covers passed over.
//!
//! The memo (rule 3's shortcut, [`Walk::kill`], [`Walk::covers`]): once a
//! single-task gang of request *r* needing *n* pods could neither start nor
//! preempt, a later job of request *r* needing *n* pods or more — in the same or
//! a lower queue, which every later job of the walk is, the walk being in queue
//! order — cannot start either (allocations only take resources; it has no more
//! victims), until a preemption commits ([`Walk::revive`]). Visiting such a
//! job changes nothing once its PodGroup is admitted (one that waits for
//! admission is visited whatever its class, below), so the walk need not reach
//! it at all: it merges the book's ordered sets
//! of waiting jobs, one per [`Class`] and one for the jobs without a class, and
//! drops the sets of the classes the memo covers until a preemption clears it.
//! A session's walk then costs the
//! jobs it tries, not the backlog. Until the memo has covered a few jobs
//! ([`MERGE_AFTER`]), the walk reads the waiting jobs in order, one set, and
//! passes over those of the covered classes one by one (a look-up each).
//!
//! Exact only while every job's filed class is the class the memo would compute
//! when the walk reaches it, and a job the walk passes over has nothing else to
//! do. The book files a job again whenever the World's journal names it (its
//! pods' statuses, so its readiness and the pods it needs); within a session only
//! this scheduler's commits move pods: a claim bound before the walk files its
//! job again ([`Book::started`]: whole, it has no class), the walk's own
//! placements are of jobs it has passed, and a preemption's victims only need
//! more pods afterwards (a class the memo covers covers it still) or were whole
//! (filed without a class). A job whose PodGroup waits for admission — made
//! anew, or set back to Pending at a session's close, which the journal does not
//! name — is visited whatever its class, so that it is admitted as before. Jobs
//! whose pods tolerate taints have no class (the cluster's taints, which change
//! only between sessions, repel the jobs of a class alike); the memo excludes
//! every job while inter-pod affinity is on or some pod is gated: then, and in
//! the exhaustive mode, the walk reads every waiting job
//! (`tests/it/equivalence_baselines.rs` compares the two).

use super::book::{Book, Class, Key, Stream};
use lahar_core::session::Session;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Jobs passed over one by one before the walk merges the sets: a session whose
/// memo covers only a few jobs does not pay for the merge.
const MERGE_AFTER: u32 = 8;

/// A walk over the waiting jobs in order (see the module's documentation).
#[derive(Debug)]
pub(super) struct Walk {
    /// The sets are merged; until then the walk reads `waiting` alone.
    merging: bool,
    /// Jobs passed over one by one (before merging).
    passed: u32,
    /// While merging, each live stream's next job.
    heap: BinaryHeap<Reverse<(Key, Stream)>>,
    /// The memo: per request, the fewest pods needed of a covered class (it
    /// covers every class of the request needing as many or more).
    dead: Vec<(u32, u32)>,
    /// The classes of `dead` whose next job left the heap.
    out: Vec<Class>,
    /// The waiting jobs whose PodGroup waits for admission, in order.
    admission: Vec<Key>,
    /// The last job visited.
    last: Option<Key>,
    /// Jobs are read by class and the covered ones passed over (false: every
    /// waiting job is visited, in one stream; the memo is still kept).
    by_class: bool,
    /// A deliberately wrong walk (tests): a failed gang also covers the class
    /// needing one pod fewer, which the memo does not.
    wrong: bool,
}

impl Walk {
    /// A walk from the first waiting job; by class only when `by_class`
    /// (`wrong`: see [`lahar_core::planted::PlantedBugs::wrong_walk`]).
    pub(super) fn new(by_class: bool, wrong: bool) -> Walk {
        Walk {
            merging: false,
            passed: 0,
            heap: BinaryHeap::new(),
            dead: Vec::new(),
            out: Vec::new(),
            admission: Vec::new(),
            last: None,
            by_class,
            wrong,
        }
    }

    /// Starts merging the sets, from the job after the last one visited.
    fn merge(&mut self, ssn: &Session<'_>, book: &Book) {
        self.merging = true;
        self.admission = ssn.jobs_waiting_admission().into_iter().filter_map(|j| book.waiting_key(j)).collect();
        self.admission.sort_unstable();
        self.push(book, Stream::Admission);
        self.push(book, Stream::Unclassed);
        for c in book.classes() {
            self.push(book, Stream::Class(c));
        }
    }

    /// Enters the stream's first job after the last one visited.
    fn push(&mut self, book: &Book, stream: Stream) {
        let next = match stream {
            Stream::Admission => {
                let i = self.admission.partition_point(|&k| self.last.is_some_and(|last| k <= last));
                self.admission.get(i).copied()
            }
            _ => book.next_in(stream, self.last),
        };
        if let Some(k) = next {
            self.heap.push(Reverse((k, stream)));
        }
    }

    /// The next job to visit.
    pub(super) fn next(&mut self, ssn: &Session<'_>, book: &Book) -> Option<Key> {
        while !self.merging {
            let k = book.next_in(Stream::All, self.last)?;
            self.last = Some(k);
            let covered = self.by_class
                && !self.dead.is_empty()
                && book.filed_class(k.2).is_some_and(|c| self.covers(c))
                && !ssn.is_waiting_admission(k.2);
            if !covered {
                return Some(k);
            }
            self.passed += 1;
            if self.passed >= MERGE_AFTER {
                self.merge(ssn, book);
            }
        }
        loop {
            let Reverse((k, stream)) = self.heap.pop()?;
            if let Stream::Class(c) = stream
                && self.covers(c)
            {
                self.out.push(c);
                continue;
            }
            // A job waiting for admission is also in its class's set: visited once.
            if self.last.is_some_and(|last| k <= last) {
                self.push(book, stream);
                continue;
            }
            self.last = Some(k);
            self.push(book, stream);
            return Some(k);
        }
    }

    /// True if the memo covers the class: a job of it cannot start.
    pub(super) fn covers(&self, (shape, needed): Class) -> bool {
        self.dead.iter().any(|&(s, n)| s == shape && needed >= n)
    }

    /// A gang of request `shape` needing `needed` pods could neither start nor
    /// preempt: the memo now covers the gangs of that request needing as many
    /// pods or more, and the walk by class passes over their classes.
    pub(super) fn kill(&mut self, shape: u32, needed: u32) {
        let from = needed.saturating_sub(u32::from(self.wrong));
        match self.dead.iter_mut().find(|(s, _)| *s == shape) {
            Some((_, n)) => *n = (*n).min(from),
            None => self.dead.push((shape, from)),
        }
    }

    /// The memo was cleared: every class is read again from the next job on.
    pub(super) fn revive(&mut self, book: &Book) {
        self.dead.clear();
        self.passed = 0;
        for c in std::mem::take(&mut self.out) {
            self.push(book, Stream::Class(c));
        }
    }
}
