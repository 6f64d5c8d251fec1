//! [`IdSet`]: a set of ids kept in ascending order for the walks that read it,
//! with a bit per id ([`IdBits`]) for the membership questions hot paths ask.
//!
//! The World files a job in a few such sets (jobs with pending pods, admitted or
//! waiting ones) at every pod transition that may move it, and most transitions
//! leave every membership as it was: a bit answers that in one read, where an
//! ordered set alone paid a tree descent per set and per transition.

use crate::model::ids::Id;
use std::collections::BTreeSet;
use std::collections::btree_set::Iter;
use std::marker::PhantomData;

/// A bit per id: membership without the order.
#[derive(Clone, Debug)]
pub struct IdBits<I> {
    words: Vec<u64>,
    id: PhantomData<I>,
}

impl<I> Default for IdBits<I> {
    fn default() -> Self {
        IdBits { words: Vec::new(), id: PhantomData }
    }
}

impl<I: Id> IdBits<I> {
    /// True if `id`'s bit is set.
    #[inline]
    pub fn contains(&self, id: I) -> bool {
        let i = id.index();
        self.words.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 != 0)
    }

    /// How many bits are set.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Sets `id`'s bit (`on`) or clears it.
    pub fn set(&mut self, id: I, on: bool) {
        let i = id.index();
        if on {
            if self.words.len() <= i / 64 {
                self.words.resize(i / 64 + 1, 0);
            }
            self.words[i / 64] |= 1 << (i % 64);
        } else if let Some(w) = self.words.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }
}

/// A set of ids: ascending for walks, a bit per id for membership.
#[derive(Clone, Debug)]
pub struct IdSet<I> {
    ordered: BTreeSet<I>,
    bits: IdBits<I>,
}

impl<I> Default for IdSet<I> {
    fn default() -> Self {
        IdSet { ordered: BTreeSet::new(), bits: IdBits::default() }
    }
}

impl<I: Id + Ord> IdSet<I> {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// True if `id` is in the set.
    #[inline]
    pub fn contains(&self, id: I) -> bool {
        self.bits.contains(id)
    }

    /// Adds `id`; true if it was not in the set.
    pub fn insert(&mut self, id: I) -> bool {
        if self.contains(id) {
            return false;
        }
        self.bits.set(id, true);
        self.ordered.insert(id);
        true
    }

    /// Removes `id`; true if it was in the set.
    pub fn remove(&mut self, id: I) -> bool {
        if !self.contains(id) {
            return false;
        }
        self.bits.set(id, false);
        self.ordered.remove(&id);
        true
    }

    /// Puts `id` in the set (`on`) or out of it; true if its membership changed.
    pub fn put(&mut self, id: I, on: bool) -> bool {
        if on { self.insert(id) } else { self.remove(id) }
    }

    /// The ids, ascending.
    pub fn iter(&self) -> Iter<'_, I> {
        self.ordered.iter()
    }

    /// How many ids the set holds.
    pub fn len(&self) -> usize {
        self.ordered.len()
    }

    /// True if the set holds no id.
    pub fn is_empty(&self) -> bool {
        self.ordered.is_empty()
    }

    /// The ids as an ordered set.
    pub fn as_ordered(&self) -> &BTreeSet<I> {
        &self.ordered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ids::JobId;

    #[test]
    fn membership_follows_inserts_and_removes() {
        let mut s: IdSet<JobId> = IdSet::new();
        assert!(!s.contains(JobId(70)));
        assert!(s.insert(JobId(70)));
        assert!(!s.insert(JobId(70)));
        assert!(s.insert(JobId(3)));
        assert!(s.put(JobId(64), true));
        assert!(s.contains(JobId(70)) && s.contains(JobId(3)) && s.contains(JobId(64)));
        assert!(!s.contains(JobId(6)) && !s.contains(JobId(1_000_000)));
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), vec![JobId(3), JobId(64), JobId(70)]);
        assert!(s.remove(JobId(64)));
        assert!(!s.remove(JobId(64)));
        assert!(!s.put(JobId(5), false));
        assert!(!s.contains(JobId(64)));
        assert_eq!(s.len(), 2);
        assert!(s.put(JobId(3), false) && s.remove(JobId(70)));
        assert!(s.is_empty() && !s.contains(JobId(3)));
    }

    #[test]
    fn bits_set_and_clear() {
        let mut b: IdBits<JobId> = IdBits::default();
        b.set(JobId(9), false);
        assert!(!b.contains(JobId(9)));
        b.set(JobId(130), true);
        b.set(JobId(129), true);
        b.set(JobId(129), false);
        assert!(b.contains(JobId(130)) && !b.contains(JobId(129)) && !b.contains(JobId(131)));
        assert_eq!(b.count(), 1);
    }
}
