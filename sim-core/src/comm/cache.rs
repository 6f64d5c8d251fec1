//! A memo table for estimates: the engine prices the same (collective, size,
//! placement) many times, and a [`CommKey`] is small, `Copy` and ordered.

use super::model::{Estimate, Placement};
use super::{AlgoChoice, Collective, CommError, CommModel};
use std::collections::BTreeMap;

/// Everything an estimate depends on besides the constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommKey {
    /// Collective.
    pub collective: Collective,
    /// Message size.
    pub bytes: u64,
    /// Placement.
    pub placement: Placement,
    /// Algorithm choice.
    pub choice: AlgoChoice,
}

/// A bounded memo table of estimates for one [`CommModel`]. When full it is cleared
/// (deterministic, and cheap next to re-pricing); errors are not cached.
#[derive(Clone, Debug)]
pub struct CommCache {
    entries: BTreeMap<CommKey, Estimate>,
    capacity: usize,
    hits: u64,
    misses: u64,
}

impl CommCache {
    /// A cache holding up to `capacity` estimates (at least one).
    pub fn new(capacity: usize) -> CommCache {
        CommCache { entries: BTreeMap::new(), capacity: capacity.max(1), hits: 0, misses: 0 }
    }

    /// The cached estimate of `key`, pricing it with `model` on a miss. Use one cache
    /// per model: the key does not cover the constants.
    pub fn estimate(&mut self, model: &CommModel, key: CommKey) -> Result<Estimate, CommError> {
        if let Some(e) = self.entries.get(&key) {
            self.hits += 1;
            return Ok(*e);
        }
        self.misses += 1;
        let e = model.estimate(key.collective, key.bytes, &key.placement, key.choice)?;
        if self.entries.len() >= self.capacity {
            self.entries.clear();
        }
        self.entries.insert(key, e);
        Ok(e)
    }

    /// Cached entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Lookups answered from the cache.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Lookups that had to price.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// Drops every entry (keeps the counters).
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

impl Default for CommCache {
    fn default() -> Self {
        CommCache::new(4096)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::{GpuGen, IntraLink};

    #[test]
    fn caches_and_bounds() {
        let m = CommModel::default();
        let mut c = CommCache::new(2);
        let p = Placement::single_node(GpuGen::Hopper, IntraLink::NvswitchNvlink4, 8);
        let key = |bytes| CommKey { collective: Collective::AllReduce, bytes, placement: p, choice: AlgoChoice::Auto };
        let a = c.estimate(&m, key(1 << 20)).unwrap();
        let b = c.estimate(&m, key(1 << 20)).unwrap();
        assert_eq!(a, b);
        assert_eq!((c.hits(), c.misses(), c.len()), (1, 1, 1));
        c.estimate(&m, key(1 << 21)).unwrap();
        c.estimate(&m, key(1 << 22)).unwrap();
        assert_eq!(c.len(), 1);
        let mut bad = p;
        bad.ranks = 0;
        let k = CommKey { placement: bad, ..key(1) };
        assert!(c.estimate(&m, k).is_err());
        assert_eq!(c.len(), 1);
    }
}
