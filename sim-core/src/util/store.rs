//! [`Store`]: a vector indexed by id whose entries can be removed, giving their
//! memory back a chunk at a time; [`IdVec`]: a vector indexed by id.
//!
//! Jobs and pods get ids in creation order and are looked up by id on every hot
//! path, so they live in a vector; a long run also finishes millions of them, and a
//! finished one is never looked at again once its records are written. A `Store`
//! is that vector cut into chunks of [`CHUNK`] entries: an entry removed is dropped
//! at once (its own heap memory returns), and a chunk whose entries have all been
//! created and removed is freed whole. Memory then follows the entries alive, up to
//! the chunks a long-lived entry keeps.

use crate::model::ids::Id;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut, Index, IndexMut};

/// Entries per chunk.
pub const CHUNK: usize = 1024;

/// Words of a chunk's liveness bits.
const WORDS: usize = CHUNK / 64;

/// A vector of `T` by id `I` with removable entries (see the module).
///
/// Entries are stored as themselves, not as `Option<T>`: a lookup by index reads
/// only the entry (the hot paths look up jobs and pods millions of times, and an
/// option's tag sat on another cache line than the fields they read). A removed
/// entry is replaced by `T::default()` (its heap memory returns at once) and
/// marked in the chunk's liveness bits, which only [`Store::get`] and the
/// iterators read.
pub struct Store<T, I> {
    /// The chunks, filled by pushes up to [`CHUNK`] entries; a freed one is
    /// empty (lookups in it find nothing).
    chunks: Vec<Vec<T>>,
    /// Per chunk: one bit per entry, set while it is alive.
    alive: Vec<[u64; WORDS]>,
    /// Per chunk: entries removed.
    removed: Vec<u32>,
    len: usize,
    live: usize,
    id: PhantomData<fn(I) -> I>,
}

impl<T, I> Default for Store<T, I> {
    fn default() -> Self {
        Store { chunks: Vec::new(), alive: Vec::new(), removed: Vec::new(), len: 0, live: 0, id: PhantomData }
    }
}

impl<T: Default, I: Id> Store<T, I> {
    /// An empty store.
    pub fn new() -> Store<T, I> {
        Store::default()
    }

    /// Appends `t`; returns its id.
    pub fn push(&mut self, t: T) -> I {
        let id = self.len;
        let (c, k) = (id / CHUNK, id % CHUNK);
        if k == 0 {
            self.chunks.push(Vec::with_capacity(CHUNK));
            self.alive.push([0; WORDS]);
            self.removed.push(0);
        }
        // The last chunk is never freed before it is full.
        self.chunks[c].push(t);
        self.alive[c][k / 64] |= 1 << (k % 64);
        self.len += 1;
        self.live += 1;
        I::from_index(id)
    }

    /// Removes entry `id` (dropping what it holds) and frees its chunk when that
    /// was the chunk's last; nothing for an id removed already.
    pub fn remove(&mut self, id: I) {
        if !self.is_alive(id) {
            return;
        }
        let id = id.index();
        let (c, k) = (id / CHUNK, id % CHUNK);
        self.alive[c][k / 64] &= !(1 << (k % 64));
        drop(std::mem::take(&mut self.chunks[c][k]));
        self.live -= 1;
        self.removed[c] += 1;
        if self.removed[c] as usize == CHUNK {
            self.chunks[c] = Vec::new();
        }
    }
}

impl<T, I: Id> Store<T, I> {
    /// Ids handed out so far (removed entries included).
    pub fn len(&self) -> usize {
        self.len
    }

    /// No entry was ever pushed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether entry `id` was pushed and not removed.
    #[inline]
    pub fn is_alive(&self, id: I) -> bool {
        let id = id.index();
        let (c, k) = (id / CHUNK, id % CHUNK);
        id < self.len && self.alive[c][k / 64] & (1 << (k % 64)) != 0
    }

    /// The entry `id`, unless removed.
    #[inline]
    pub fn get(&self, id: I) -> Option<&T> {
        self.is_alive(id).then(|| &self.chunks[id.index() / CHUNK][id.index() % CHUNK])
    }

    /// The entry `id`, unless removed.
    #[inline]
    pub fn get_mut(&mut self, id: I) -> Option<&mut T> {
        match self.is_alive(id) {
            true => Some(&mut self.chunks[id.index() / CHUNK][id.index() % CHUNK]),
            false => None,
        }
    }

    /// The entries not removed, with their ids, in id order.
    pub fn iter_ids(&self) -> impl Iterator<Item = (I, &T)> {
        (0..self.len)
            .map(I::from_index)
            .filter(|&id| self.is_alive(id))
            .map(|id| (id, &self.chunks[id.index() / CHUNK][id.index() % CHUNK]))
    }

    /// The entries not removed, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.iter_ids().map(|(_, t)| t)
    }

    /// Entries alive (pushed and not removed).
    pub fn live(&self) -> usize {
        self.live
    }
}

impl<T: Default, I: Id> FromIterator<T> for Store<T, I> {
    fn from_iter<It: IntoIterator<Item = T>>(iter: It) -> Self {
        let mut s = Store::new();
        for t in iter {
            s.push(t);
        }
        s
    }
}

/// The entry `id`. Reading a removed entry is a bug of the caller: it finds a
/// default value (or, in a freed chunk, panics); debug builds check.
impl<T, I: Id> Index<I> for Store<T, I> {
    type Output = T;
    #[inline]
    fn index(&self, id: I) -> &T {
        debug_assert!(self.is_alive(id), "entry {} was removed (or never created)", id.index());
        &self.chunks[id.index() / CHUNK][id.index() % CHUNK]
    }
}

impl<T, I: Id> IndexMut<I> for Store<T, I> {
    #[inline]
    fn index_mut(&mut self, id: I) -> &mut T {
        debug_assert!(self.is_alive(id), "entry {} was removed (or never created)", id.index());
        &mut self.chunks[id.index() / CHUNK][id.index() % CHUNK]
    }
}

/// A vector of `T` indexed by id `I` (a node's, a queue's): one entry per object,
/// none removed. It reads as a slice ([`Deref`]) for iteration, and takes a
/// plain position too (a loop over every node counts positions); what it does not
/// take is another kind's id.
#[derive(Clone, Debug, PartialEq)]
pub struct IdVec<I, T> {
    items: Vec<T>,
    id: PhantomData<fn(I) -> I>,
}

impl<I, T> Default for IdVec<I, T> {
    fn default() -> Self {
        IdVec { items: Vec::new(), id: PhantomData }
    }
}

impl<I: Id, T> IdVec<I, T> {
    /// Appends `t`; returns its id.
    pub fn push(&mut self, t: T) -> I {
        self.items.push(t);
        I::from_index(self.items.len() - 1)
    }

    /// The entries with their ids, in id order.
    pub fn iter_ids(&self) -> impl Iterator<Item = (I, &T)> {
        self.items.iter().enumerate().map(|(i, t)| (I::from_index(i), t))
    }

    /// The entry `id`, if there is one.
    pub fn get(&self, id: I) -> Option<&T> {
        self.items.get(id.index())
    }
}

impl<I, T> From<Vec<T>> for IdVec<I, T> {
    fn from(items: Vec<T>) -> Self {
        IdVec { items, id: PhantomData }
    }
}

impl<I, T> FromIterator<T> for IdVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(iter: It) -> Self {
        IdVec { items: iter.into_iter().collect(), id: PhantomData }
    }
}

impl<I, T> Deref for IdVec<I, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items
    }
}

impl<I, T> DerefMut for IdVec<I, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items
    }
}

impl<I: Id, T> Index<I> for IdVec<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, id: I) -> &T {
        &self.items[id.index()]
    }
}

impl<I: Id, T> IndexMut<I> for IdVec<I, T> {
    #[inline]
    fn index_mut(&mut self, id: I) -> &mut T {
        &mut self.items[id.index()]
    }
}

impl<I, T> Index<usize> for IdVec<I, T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        &self.items[i]
    }
}

impl<I, T> IndexMut<usize> for IdVec<I, T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.items[i]
    }
}

impl<'a, I, T> IntoIterator for &'a IdVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<'a, I, T> IntoIterator for &'a mut IdVec<I, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ids::{NodeId, PodId};

    #[test]
    fn removed_entries_go_and_full_chunks_are_freed() {
        let id = |i: usize| PodId(i as u32);
        let mut s: Store<String, PodId> = (0..2 * CHUNK + 5).map(|i| i.to_string()).collect();
        assert_eq!((s.len(), s.live()), (2 * CHUNK + 5, 2 * CHUNK + 5));
        s.remove(id(3));
        s.remove(id(3));
        assert_eq!(s.get(id(3)), None);
        assert_eq!(s[id(4)], "4");
        assert_eq!(s.iter_ids().take(4).map(|x| x.0).collect::<Vec<_>>(), [id(0), id(1), id(2), id(4)]);
        for i in 0..CHUNK {
            s.remove(id(i));
        }
        assert!(s.chunks[0].capacity() == 0, "a chunk whose entries are all gone is freed");
        // The last chunk is not full: removing all its entries keeps it for pushes.
        for i in 2 * CHUNK..2 * CHUNK + 5 {
            s.remove(id(i));
        }
        assert!(!s.chunks[2].is_empty());
        assert_eq!(s.push("x".into()), id(2 * CHUNK + 5));
        assert_eq!((s.len(), s.live()), (2 * CHUNK + 6, CHUNK + 1));
        assert_eq!(s.iter().next().map(String::as_str), Some(&*CHUNK.to_string()));
    }

    #[test]
    fn an_id_vec_is_indexed_by_its_id_and_by_position() {
        let mut v: IdVec<NodeId, &str> = vec!["a", "b"].into();
        assert_eq!(v.push("c"), NodeId(2));
        assert_eq!((v[NodeId(1)], v[2], v.len()), ("b", "c", 3));
        v[NodeId(0)] = "z";
        assert_eq!(v.iter_ids().map(|(n, s)| (n.0, *s)).collect::<Vec<_>>(), [(0, "z"), (1, "b"), (2, "c")]);
        assert_eq!(v.get(NodeId(3)), None);
    }
}
