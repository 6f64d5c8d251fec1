//! The per-node room a preemptor of one queue level could have: each node's
//! future-idle resources plus the Running pods of the jobs in lower-priority
//! queues (the victims), and for each pod request asked, the copies of it that
//! room holds summed over the nodes. [`Tiresias::preempt_for`]'s per-node check
//! reads it.
//!
//! Kept between sessions and brought up to date only where something moved: a
//! node whose held pods changed (the World's per-node epoch: a pod allocated,
//! started, evicted or gone, a capacity change), whose pipelined or held room
//! changed (compared), or that runs a pod of a job whose queue changed (the
//! book's list). The exhaustive mode builds it afresh for every check.
//!
//! [`Tiresias::preempt_for`]: super::Tiresias

use super::book::Book;
use lahar_core::model::cluster::NodeId;
use lahar_core::model::job::{JobId, PodStatus};
use lahar_core::model::resource::{DIMS, Resources};
use lahar_core::session::Session;
use rustc_hash::FxHashMap;

/// Requests whose copies are kept at most; asked for more, the counts start over.
const SHAPES: usize = 32;

/// The copies of `req` that a node with room `r` takes (none if it does not fit).
pub(super) fn copies(r: &Resources, req: &Resources) -> u64 {
    if req.fits_in(r) { u64::from(r.copies_of(req)) } else { 0 }
}

/// One queue level's room (see the module's documentation).
#[derive(Debug, Clone)]
pub(super) struct Room {
    /// The preemptors' queue: the victims are the jobs filed below it.
    level: usize,
    /// Per node: future-idle plus pipelined resources plus the victims'
    /// Running pods (the room without what is pipelined or held there).
    base: Vec<Resources>,
    /// Per node: the World's epoch of its held pods when `base` was computed.
    epoch: Vec<u64>,
    /// Per node: its pipelined (and held) resources when last counted.
    pipelined: Vec<Resources>,
    /// Per request asked: the copies of it the nodes' rooms hold, summed.
    copies: FxHashMap<[i64; DIMS], u64>,
    /// Nothing moved since the last sync but what [`Room::sync`] finds.
    dirty: bool,
    /// Jobs whose queue changed since the last sync (repeats possible).
    moved: Vec<JobId>,
}

impl Room {
    /// The room of every node for preemptors of queue `level`.
    pub(super) fn build(ssn: &Session<'_>, book: &Book, level: usize) -> Room {
        let n = ssn.node_count();
        let mut room = Room {
            level,
            base: vec![Resources::ZERO; n],
            epoch: vec![0; n],
            pipelined: vec![Resources::ZERO; n],
            copies: FxHashMap::default(),
            dirty: false,
            moved: Vec::new(),
        };
        for i in 0..n {
            room.compute(ssn, book, NodeId(i as u32));
        }
        room
    }

    /// The queue level this room is for.
    pub(super) fn level(&self) -> usize {
        self.level
    }

    /// Something may have moved (a session opened, this scheduler committed).
    pub(super) fn touch(&mut self) {
        self.dirty = true;
    }

    /// A session opened: `moved` are the jobs whose queue changed since the
    /// last one. False when the room has gone unread so long that building it
    /// again is cheaper than catching up.
    pub(super) fn open(&mut self, moved: Vec<JobId>) -> bool {
        self.dirty = true;
        self.moved.extend(moved);
        self.moved.len() <= 4 * self.base.len().max(1024)
    }

    /// Brings the nodes up to date: those whose held pods or pipelined room
    /// changed, and those running a pod of a job whose queue changed.
    pub(super) fn sync(&mut self, ssn: &Session<'_>, book: &Book) {
        for j in std::mem::take(&mut self.moved) {
            if !ssn.has_job(j) {
                continue;
            }
            for &p in &ssn.job(j).pods {
                let pod = ssn.pod(p);
                if let (PodStatus::Running, Some(n)) = (pod.status, pod.node) {
                    self.update(ssn, book, n);
                }
            }
        }
        if !self.dirty || ssn.planted.stale_room {
            return;
        }
        self.dirty = false;
        for i in 0..self.base.len() {
            let n = NodeId(i as u32);
            if ssn.node_used_epoch(n) != self.epoch[i] || ssn.node_state(n).pipelined != self.pipelined[i] {
                self.update(ssn, book, n);
            }
        }
    }

    /// Recomputes node `n` and moves the kept copies with it.
    pub(super) fn update(&mut self, ssn: &Session<'_>, book: &Book, n: NodeId) {
        let i = n.0 as usize;
        let before = self.base[i] - self.pipelined[i];
        self.compute(ssn, book, n);
        let after = self.base[i] - self.pipelined[i];
        if before != after {
            // Sums: the order of the updates does not matter.
            for (shape, count) in self.copies.iter_mut() {
                let shape = Resources(*shape);
                *count = *count - copies(&before, &shape) + copies(&after, &shape);
            }
        }
    }

    /// Node `n`'s base, epoch and pipelined resources from the World.
    fn compute(&mut self, ssn: &Session<'_>, book: &Book, n: NodeId) {
        let i = n.0 as usize;
        let ns = ssn.node_state(n);
        let mut base = ssn.future_idle(n) + ns.pipelined;
        for &p in &ns.pods {
            let pod = ssn.pod(p);
            if pod.status == PodStatus::Running && book.filed_level(pod.job).is_some_and(|l| l > self.level) {
                base += pod.req;
            }
        }
        self.base[i] = base;
        self.epoch[i] = ssn.node_used_epoch(n);
        self.pipelined[i] = ns.pipelined;
    }

    /// Node `n`'s room: future-idle resources plus the victims' Running pods.
    pub(super) fn at(&self, n: usize) -> Resources {
        self.base[n] - self.pipelined[n]
    }

    /// The copies of `req` the nodes' rooms hold, summed (counted once, then kept).
    pub(super) fn copies_held(&mut self, req: &Resources) -> u64 {
        if let Some(&c) = self.copies.get(&req.0) {
            return c;
        }
        if self.copies.len() >= SHAPES {
            self.copies.clear();
        }
        let c = (0..self.base.len()).map(|i| copies(&self.at(i), req)).sum();
        self.copies.insert(req.0, c);
        c
    }

    /// The number of nodes.
    pub(super) fn len(&self) -> usize {
        self.base.len()
    }
}
