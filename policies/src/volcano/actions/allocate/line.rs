//! A queue's jobs in allocate's order, each with its pods still to place, and
//! how many of them a turn could still do something for.
//!
//! A job taken in whole (`Tasks::Later`) whose gang cannot be ready or
//! pipelined without new placements, and whose only request with pending pods
//! no node has room for, can only fail its step and leave the session as it
//! found it (`finds_no_room`). Room only shrinks during the action, so once a
//! request is found with no room ("dead"), every such job waiting on it is idle
//! for the rest of the action. The line counts its jobs that are not: when none
//! is left, the queue's remaining turns would each fail in the same way and put
//! the queue back where it was, and the line can be dropped whole — a backlog
//! then costs a count per request, not a turn per job.
//!
//! Nor is a long line put in order whole at intake: most of it is dropped so,
//! or drained, after a few turns. Its jobs wait unordered with their job-order
//! keys ([`OrderKeys`]); the line orders the first few of them when a turn
//! needs one (a selection, then a sort of those), twice as many the next time.
//! The keys with the jobs' intake positions are a total order, so the jobs come
//! out as a whole sort of the keys (stable) would give them.
//!
//! Where the admitted jobs' facts decide their job-order keys and their turns,
//! the line takes whole groups of jobs with the same facts instead ([`Run`]):
//! each group already holds its jobs by PodGroup creation, so the line merges
//! the groups' heads as turns need jobs, and a group whose request died
//! leaves in one step — the jobs themselves are never read.

use super::super::super::framework::{OrderKeys, cmp_keys, cmp_names};
use super::super::worksheet::Worksheet;
use lahar_core::model::job::{JobId, PodId};
use lahar_core::session::Session;
use lahar_core::world::{Filed, ReachFacts};
use std::cmp::Ordering;
use std::collections::VecDeque;

/// A job's pods still to place this session.
pub(super) enum Tasks {
    /// In task order.
    Plain(VecDeque<PodId>),
    /// By sub-job, for jobs placed HyperNode by HyperNode.
    Sheet(Worksheet),
    /// Placed over all nodes, its pods listed at its first turn (when
    /// `finds_no_room` does not end the step first); the request of its only
    /// task with pending pods, when it has one; and whether gang's binding votes
    /// call it neither ready nor pipelined until it places pods (its facts at
    /// intake: fewer pods placed or waiting than minAvailable).
    Later(Option<u32>, bool),
}

/// The fields of [`Tasks::later`].
fn later_turn(f: &ReachFacts, gang_binds: bool) -> (Option<u32>, bool) {
    ((f.pending_tasks == 1).then_some(f.shape), gang_binds && f.base < f.min)
}

impl Tasks {
    /// The turn of a job taken in whole with facts `f` (at intake, in step
    /// with the job), by itself or in its group: its only request with pending
    /// pods, when one task has them, and whether gang's binding votes
    /// (`gang_binds`) call it short.
    pub(super) fn later(f: &ReachFacts, gang_binds: bool) -> Tasks {
        let (shape, short) = later_turn(f, gang_binds);
        Tasks::Later(shape, short)
    }

    pub(super) fn is_empty(&self) -> bool {
        match self {
            Tasks::Plain(t) => t.is_empty(),
            Tasks::Sheet(w) => w.is_empty(),
            Tasks::Later(..) => false,
        }
    }

    pub(super) fn contains(&self, p: PodId) -> bool {
        match self {
            Tasks::Plain(t) => t.contains(&p),
            Tasks::Sheet(w) => w.contains(p),
            Tasks::Later(..) => false,
        }
    }

    /// The request whose lack of room makes the job's turn idle, if one does.
    fn idle_without(&self) -> Option<u32> {
        match self {
            Tasks::Later(Some(shape), true) => Some(*shape),
            _ => None,
        }
    }
}

/// Jobs with the same facts taken in whole: the job-order keys they all have,
/// the turn each gets (`Tasks::Later` with `shape` and `short`), and the jobs
/// by (creation, id) from `at` on — those before `sorted` by (creation,
/// namespace, name, id), job order's own tie-break, so `at` is the head.
pub(super) struct Run {
    keys: Vec<f64>,
    shape: Option<u32>,
    short: bool,
    jobs: Vec<Filed>,
    at: usize,
    sorted: usize,
}

impl Run {
    /// A run of `jobs` (by creation, then id) with facts `f` and `keys`,
    /// each job's turn the one [`Tasks::later`] gives it by itself.
    pub(super) fn new(ssn: &Session<'_>, f: &ReachFacts, gang_binds: bool, keys: Vec<f64>, jobs: Vec<Filed>) -> Run {
        let (shape, short) = later_turn(f, gang_binds);
        let mut r = Run { keys, shape, short, jobs, at: 0, sorted: 0 };
        r.settle_head(ssn);
        r
    }

    fn tasks(&self) -> Tasks {
        Tasks::Later(self.shape, self.short)
    }

    fn left(&self) -> usize {
        self.jobs.len() - self.at
    }

    /// Sorts by (namespace, name, id) the jobs created at the same instant as
    /// the one at `at`, when they are not yet (once per instant: a trace's
    /// burst may hold thousands). The deliberately wrong run of the
    /// equivalence tests leaves them in id order.
    fn settle_head(&mut self, ssn: &Session<'_>) {
        if self.at < self.sorted || ssn.planted.wrong_run_ties {
            return;
        }
        let Some(&(c, _)) = self.jobs.get(self.at) else { return };
        let end = self.at + self.jobs[self.at..].partition_point(|e| e.0 == c);
        if end - self.at > 1 {
            self.jobs[self.at..end].sort_unstable_by(|x, y| cmp_names(ssn, x.1, y.1).then(x.1.cmp(&y.1)));
        }
        self.sorted = end;
    }

    /// The order of two runs' heads: keys, creation, (namespace, name), id
    /// (the deliberately wrong merge of the equivalence tests skips creation).
    fn cmp_heads(&self, other: &Run, ssn: &Session<'_>) -> Ordering {
        let ((ca, a), (cb, b)) = (self.jobs[self.at], other.jobs[other.at]);
        let created = if ssn.planted.wrong_run_merge { Ordering::Equal } else { ca.cmp(&cb) };
        cmp_keys(&self.keys, &other.keys).then(created).then_with(|| cmp_names(ssn, a, b)).then(a.cmp(&b))
    }
}

/// A queue's jobs in allocate's order.
#[derive(Default)]
pub(super) struct Line {
    /// The jobs put in order.
    jobs: VecDeque<(JobId, Tasks)>,
    /// Jobs after every job of `jobs`, not yet in order: each with its
    /// position in `keyed`.
    tail: Vec<(u32, Tasks)>,
    /// The key table of the jobs taken in unordered, and those jobs.
    keyed: Option<(OrderKeys, Vec<JobId>)>,
    /// How many of `tail` to put in order next.
    batch: usize,
    /// Jobs a turn may still do something for: all but those idle for lack
    /// of room for a dead request.
    live: usize,
    /// Per request not yet dead: the jobs idle once it is.
    idle_on: Vec<(u32, usize)>,
    /// Groups taken in whole, after every job of `jobs`, merged as turns need
    /// them (never with `tail`).
    runs: Vec<Run>,
}

impl Line {
    /// Counts a job coming into the line; `dead`: the requests found with no
    /// room so far in the action.
    fn count_in(&mut self, t: &Tasks, dead: &[u32]) {
        self.count_in_n(t, 1, dead);
    }

    /// Counts `n` jobs with the turn `t` coming into the line.
    fn count_in_n(&mut self, t: &Tasks, n: usize, dead: &[u32]) {
        match t.idle_without() {
            Some(s) if dead.contains(&s) => {}
            Some(s) => {
                self.live += n;
                match self.idle_on.iter_mut().find(|e| e.0 == s) {
                    Some(e) => e.1 += n,
                    None => self.idle_on.push((s, n)),
                }
            }
            None => self.live += n,
        }
    }

    /// Counts a job leaving the line.
    fn count_out(&mut self, t: &Tasks, dead: &[u32]) {
        match t.idle_without() {
            Some(s) if dead.contains(&s) => {}
            Some(s) => {
                self.live -= 1;
                if let Some(e) = self.idle_on.iter_mut().find(|e| e.0 == s) {
                    e.1 -= 1;
                }
            }
            None => self.live -= 1,
        }
    }

    /// Takes in `jobs` (with their pods to place, and their keys) unordered,
    /// after every job of the line.
    pub(super) fn take_unordered(&mut self, keys: OrderKeys, jobs: Vec<JobId>, tasks: Vec<Tasks>, dead: &[u32]) {
        debug_assert!(self.tail.is_empty() && self.keyed.is_none());
        for t in &tasks {
            self.count_in(t, dead);
        }
        self.tail = tasks.into_iter().enumerate().map(|(i, t)| (i as u32, t)).collect();
        self.keyed = Some((keys, jobs));
        self.batch = 8;
    }

    /// Takes in groups of jobs taken in whole, after every job of the line.
    pub(super) fn take_runs(&mut self, runs: Vec<Run>, dead: &[u32]) {
        debug_assert!(self.tail.is_empty() && self.keyed.is_none() && self.runs.is_empty());
        for r in &runs {
            self.count_in_n(&r.tasks(), r.left(), dead);
        }
        self.runs = runs;
        self.runs.retain(|r| r.left() > 0);
    }

    /// Moves the first of the runs' jobs into `jobs` when none is there (all
    /// of them with `all`), as [`Line::settle`] does for the tail. Runs idle
    /// for lack of room for a dead request leave first.
    fn settle_runs(&mut self, ssn: &Session<'_>, dead: &[u32], all: bool) {
        if self.runs.is_empty() || !self.jobs.is_empty() && !all {
            return;
        }
        if !dead.is_empty() {
            self.runs.retain(|r| r.tasks().idle_without().is_none_or(|s| !dead.contains(&s)));
        }
        loop {
            let Some(first) = (0..self.runs.len()).min_by(|&a, &b| self.runs[a].cmp_heads(&self.runs[b], ssn)) else {
                return;
            };
            let r = &mut self.runs[first];
            self.jobs.push_back((r.jobs[r.at].1, r.tasks()));
            r.at += 1;
            if r.left() == 0 {
                self.runs.swap_remove(first);
            } else {
                r.settle_head(ssn);
            }
            if !all {
                return;
            }
        }
    }

    /// Puts the first `batch` waiting jobs in order when none is (all of them
    /// with `all`). The waiting jobs idle for lack of room for a dead request
    /// leave first: their turns would change nothing wherever they came.
    fn settle(&mut self, ssn: &Session<'_>, dead: &[u32], all: bool) {
        self.settle_runs(ssn, dead, all);
        if self.tail.is_empty() || !self.jobs.is_empty() && !all {
            return;
        }
        if !dead.is_empty() {
            self.tail.retain(|(_, t)| t.idle_without().is_none_or(|s| !dead.contains(&s)));
            if self.tail.is_empty() {
                return;
            }
        }
        let (keys, ids) = self.keyed.as_ref().expect("keys with the tail");
        let cmp =
            |a: &(u32, Tasks), b: &(u32, Tasks)| keys.cmp(ssn, ids, a.0 as usize, b.0 as usize).then(a.0.cmp(&b.0));
        let m = if all { self.tail.len() } else { self.batch.min(self.tail.len()) };
        if m < self.tail.len() {
            self.tail.select_nth_unstable_by(m - 1, cmp);
        }
        // The deliberately wrong line of the equivalence tests leaves a batch
        // as the selection left it.
        if !ssn.planted.wrong_tail_order {
            self.tail[..m].sort_unstable_by(cmp);
        }
        self.jobs.extend(self.tail.drain(..m).map(|(i, t)| (ids[i as usize], t)));
        self.batch *= 2;
    }

    pub(super) fn push_back(&mut self, j: JobId, t: Tasks, dead: &[u32]) {
        self.count_in(&t, dead);
        self.jobs.push_back((j, t));
    }

    pub(super) fn insert(&mut self, at: usize, j: JobId, t: Tasks, dead: &[u32]) {
        self.count_in(&t, dead);
        self.jobs.insert(at, (j, t));
    }

    pub(super) fn pop_front(&mut self, ssn: &Session<'_>, dead: &[u32]) -> Option<(JobId, Tasks)> {
        self.settle(ssn, dead, false);
        let (j, t) = self.jobs.pop_front()?;
        self.count_out(&t, dead);
        Some((j, t))
    }

    pub(super) fn front(&mut self, ssn: &Session<'_>, dead: &[u32]) -> Option<&(JobId, Tasks)> {
        self.settle(ssn, dead, false);
        self.jobs.front()
    }

    /// Request `shape` was just found with no room (it was not dead before).
    pub(super) fn died(&mut self, shape: u32) {
        if let Some(at) = self.idle_on.iter().position(|e| e.0 == shape) {
            self.live -= self.idle_on[at].1;
            self.idle_on.swap_remove(at);
        }
    }

    /// True if no job of the line has a turn that could do something; the
    /// line is then emptied (the deliberately wrong check of the equivalence
    /// tests drops it when one job is left that could).
    pub(super) fn all_idle(&mut self, wrong_for_tests: bool) -> bool {
        if self.live > wrong_for_tests as usize {
            return false;
        }
        self.jobs.clear();
        self.tail.clear();
        self.runs.clear();
        self.idle_on.clear();
        self.live = 0;
        true
    }

    pub(super) fn is_empty(&self) -> bool {
        self.jobs.is_empty() && self.tail.is_empty() && self.runs.is_empty()
    }

    /// Where a job ordered after every job `before` accepts goes (the jobs
    /// not yet in order are put in order first when it goes after all that are).
    pub(super) fn position(&mut self, ssn: &Session<'_>, dead: &[u32], mut before: impl FnMut(JobId) -> bool) -> usize {
        if self.jobs.partition_point(|&(y, _)| before(y)) == self.jobs.len() {
            self.settle(ssn, dead, true);
        }
        self.jobs.partition_point(|&(y, _)| before(y))
    }

    /// The line's jobs: those in order, then the others in no order.
    pub(super) fn jobs(&self) -> impl Iterator<Item = JobId> + '_ {
        let ids = self.keyed.as_ref().map(|(_, ids)| ids);
        let tail = self.tail.iter().map(move |&(i, _)| ids.expect("keys with the tail")[i as usize]);
        let runs = self.runs.iter().flat_map(|r| r.jobs[r.at..].iter().map(|e| e.1));
        self.jobs.iter().map(|&(j, _)| j).chain(tail).chain(runs)
    }
}
