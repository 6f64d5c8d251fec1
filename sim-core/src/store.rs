//! [`Store`]: a vector indexed by id whose entries can be removed, giving their
//! memory back a chunk at a time.
//!
//! Jobs and pods get ids in creation order and are looked up by id on every hot
//! path, so they live in a vector; a long run also finishes millions of them, and a
//! finished one is never looked at again once its records are written. A `Store`
//! is that vector cut into chunks of [`CHUNK`] entries: an entry removed is dropped
//! at once (its own heap memory returns), and a chunk whose entries have all been
//! created and removed is freed whole. Memory then follows the entries alive, up to
//! the chunks a long-lived entry keeps.

use std::ops::{Index, IndexMut};

/// Entries per chunk.
pub const CHUNK: usize = 1024;

/// Words of a chunk's liveness bits.
const WORDS: usize = CHUNK / 64;

/// A vector of `T` by id with removable entries (see the module).
///
/// Entries are stored as themselves, not as `Option<T>`: a lookup by index reads
/// only the entry (the hot paths look up jobs and pods millions of times, and an
/// option's tag sat on another cache line than the fields they read). A removed
/// entry is replaced by `T::default()` (its heap memory returns at once) and
/// marked in the chunk's liveness bits, which only [`Store::get`] and the
/// iterators read.
pub struct Store<T> {
    /// The chunks, filled by pushes up to [`CHUNK`] entries; a freed one is
    /// empty (lookups in it find nothing).
    chunks: Vec<Vec<T>>,
    /// Per chunk: one bit per entry, set while it is alive.
    alive: Vec<[u64; WORDS]>,
    /// Per chunk: entries removed.
    removed: Vec<u32>,
    len: usize,
    live: usize,
}

impl<T> Default for Store<T> {
    fn default() -> Self {
        Store { chunks: Vec::new(), alive: Vec::new(), removed: Vec::new(), len: 0, live: 0 }
    }
}

impl<T: Default> Store<T> {
    /// An empty store.
    pub fn new() -> Store<T> {
        Store::default()
    }

    /// Appends `t`; returns its id.
    pub fn push(&mut self, t: T) -> usize {
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
        id
    }

    /// Removes entry `id` (dropping what it holds) and frees its chunk when that
    /// was the chunk's last; nothing for an id removed already.
    pub fn remove(&mut self, id: usize) {
        let (c, k) = (id / CHUNK, id % CHUNK);
        if !self.is_alive(id) {
            return;
        }
        self.alive[c][k / 64] &= !(1 << (k % 64));
        drop(std::mem::take(&mut self.chunks[c][k]));
        self.live -= 1;
        self.removed[c] += 1;
        if self.removed[c] as usize == CHUNK {
            self.chunks[c] = Vec::new();
        }
    }
}

impl<T> Store<T> {
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
    pub fn is_alive(&self, id: usize) -> bool {
        let (c, k) = (id / CHUNK, id % CHUNK);
        id < self.len && self.alive[c][k / 64] & (1 << (k % 64)) != 0
    }

    /// The entry `id`, unless removed.
    #[inline]
    pub fn get(&self, id: usize) -> Option<&T> {
        self.is_alive(id).then(|| &self.chunks[id / CHUNK][id % CHUNK])
    }

    /// The entry `id`, unless removed.
    #[inline]
    pub fn get_mut(&mut self, id: usize) -> Option<&mut T> {
        match self.is_alive(id) {
            true => Some(&mut self.chunks[id / CHUNK][id % CHUNK]),
            false => None,
        }
    }

    /// The entries not removed, with their ids, in id order.
    pub fn iter_ids(&self) -> impl Iterator<Item = (usize, &T)> {
        (0..self.len).filter(|&id| self.is_alive(id)).map(|id| (id, &self.chunks[id / CHUNK][id % CHUNK]))
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

impl<T: Default> FromIterator<T> for Store<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut s = Store::new();
        for t in iter {
            s.push(t);
        }
        s
    }
}

/// The entry `id`. Reading a removed entry is a bug of the caller: it finds a
/// default value (or, in a freed chunk, panics); debug builds check.
impl<T> Index<usize> for Store<T> {
    type Output = T;
    #[inline]
    fn index(&self, id: usize) -> &T {
        debug_assert!(self.is_alive(id), "entry {id} was removed (or never created)");
        &self.chunks[id / CHUNK][id % CHUNK]
    }
}

impl<T> IndexMut<usize> for Store<T> {
    #[inline]
    fn index_mut(&mut self, id: usize) -> &mut T {
        debug_assert!(self.is_alive(id), "entry {id} was removed (or never created)");
        &mut self.chunks[id / CHUNK][id % CHUNK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_entries_go_and_full_chunks_are_freed() {
        let mut s: Store<String> = (0..2 * CHUNK + 5).map(|i| i.to_string()).collect();
        assert_eq!((s.len(), s.live()), (2 * CHUNK + 5, 2 * CHUNK + 5));
        s.remove(3);
        s.remove(3);
        assert_eq!(s.get(3), None);
        assert_eq!(s[4], "4");
        assert_eq!(s.iter_ids().take(4).map(|x| x.0).collect::<Vec<_>>(), [0, 1, 2, 4]);
        for i in 0..CHUNK {
            s.remove(i);
        }
        assert!(s.chunks[0].capacity() == 0, "a chunk whose entries are all gone is freed");
        // The last chunk is not full: removing all its entries keeps it for pushes.
        for i in 2 * CHUNK..2 * CHUNK + 5 {
            s.remove(i);
        }
        assert!(!s.chunks[2].is_empty());
        assert_eq!(s.push("x".into()), 2 * CHUNK + 5);
        assert_eq!((s.len(), s.live()), (2 * CHUNK + 6, CHUNK + 1));
        assert_eq!(s.iter().next().map(String::as_str), Some(&*CHUNK.to_string()));
    }
}
