//! Seeded, portable random streams.
//!
//! Every random draw in lahar comes from a [`ChaCha8Rng`] seeded by
//! `sha256("lahar/v1" ‖ seed ‖ stream name ‖ index)`. The generator is named after its
//! algorithm, so its output does not change between library versions, and the
//! derivation is ours, so no hasher or seed expander of a dependency enters the contract.
//! Adding a stream never perturbs another.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;
use sha2::{Digest, Sha256};

pub use rand_chacha::ChaCha8Rng as StreamRng;

/// The root of all randomness of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RngStreams {
    seed: u64,
}

impl RngStreams {
    /// Streams derived from the scenario seed.
    pub fn new(seed: u64) -> Self {
        RngStreams { seed }
    }
    /// The scenario seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// The generator for a named stream (e.g. `"workload/0/arrivals"`) and index.
    pub fn stream(&self, name: &str, index: u64) -> ChaCha8Rng {
        let mut h = Sha256::new();
        h.update(b"lahar/v1");
        h.update(self.seed.to_le_bytes());
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update(index.to_le_bytes());
        let digest = h.finalize();
        let mut seed = [0u8; 32];
        seed.copy_from_slice(&digest);
        ChaCha8Rng::from_seed(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn streams_are_stable_and_independent() {
        let s = RngStreams::new(42);
        let a: Vec<u64> = (0..4).map(|_| 0).scan(s.stream("a", 0), |r, _| Some(r.random())).collect();
        let a2: Vec<u64> = (0..4).map(|_| 0).scan(s.stream("a", 0), |r, _| Some(r.random())).collect();
        let b: Vec<u64> = (0..4).map(|_| 0).scan(s.stream("b", 0), |r, _| Some(r.random())).collect();
        let a1: Vec<u64> = (0..4).map(|_| 0).scan(s.stream("a", 1), |r, _| Some(r.random())).collect();
        assert_eq!(a, a2);
        assert_ne!(a, b);
        assert_ne!(a, a1);
        // Pin the first value so a change of generator or derivation is caught.
        let first: u64 = RngStreams::new(1).stream("pin", 0).random();
        assert_eq!(first, PINNED_FIRST);
    }

    const PINNED_FIRST: u64 = 3_611_836_385_524_354_507;
}
