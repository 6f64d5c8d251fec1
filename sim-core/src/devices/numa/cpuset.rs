//! A set of logical CPU ids, as Linux and the kubelet write them (`0-3,8`).

use std::fmt;

/// The largest CPU id plus one lahar models.
pub const MAX_CPUS: usize = 1024;
const WORDS: usize = MAX_CPUS / 64;

/// A set of CPU ids below [`MAX_CPUS`]; iterates in ascending order.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CpuSet([u64; WORDS]);

impl CpuSet {
    /// The empty set.
    pub const EMPTY: CpuSet = CpuSet([0; WORDS]);

    /// The set of `ids` (each below [`MAX_CPUS`]).
    pub fn of(ids: impl IntoIterator<Item = u32>) -> CpuSet {
        let mut s = CpuSet::EMPTY;
        for c in ids {
            s.insert(c);
        }
        s
    }
    /// Adds `c` (below [`MAX_CPUS`]).
    pub fn insert(&mut self, c: u32) {
        self.0[c as usize / 64] |= 1 << (c % 64);
    }
    /// True if `c` is in the set (false for ids beyond [`MAX_CPUS`]).
    pub fn contains(&self, c: u32) -> bool {
        (c as usize) < MAX_CPUS && self.0[c as usize / 64] & (1 << (c % 64)) != 0
    }
    /// Number of ids.
    pub fn len(&self) -> usize {
        self.0.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
    /// `self ∪ o`.
    pub fn union(&self, o: &CpuSet) -> CpuSet {
        let mut s = *self;
        for (a, b) in s.0.iter_mut().zip(o.0) {
            *a |= b;
        }
        s
    }
    /// `self ∩ o`.
    pub fn and(&self, o: &CpuSet) -> CpuSet {
        let mut s = *self;
        for (a, b) in s.0.iter_mut().zip(o.0) {
            *a &= b;
        }
        s
    }
    /// `self \ o`.
    pub fn minus(&self, o: &CpuSet) -> CpuSet {
        let mut s = *self;
        for (a, b) in s.0.iter_mut().zip(o.0) {
            *a &= !b;
        }
        s
    }
    /// True if the sets share an id.
    pub fn meets(&self, o: &CpuSet) -> bool {
        self.0.iter().zip(o.0).any(|(a, b)| a & b != 0)
    }
    /// The ids, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some(i as u32 * 64 + b)
            })
        })
    }

    /// Reads a Linux CPU list (`0-3,8,10-11`; empty text is the empty set), as
    /// `cpuset.Parse` does.
    pub fn parse(text: &str) -> Result<CpuSet, String> {
        let mut s = CpuSet::EMPTY;
        let text = text.trim();
        if text.is_empty() {
            return Ok(s);
        }
        let id = |t: &str| -> Result<u32, String> {
            let c: u32 = t.trim().parse().map_err(|_| format!("`{t}` is not a CPU id"))?;
            if c as usize >= MAX_CPUS {
                return Err(format!("CPU id {c} is beyond the {MAX_CPUS} lahar models"));
            }
            Ok(c)
        };
        for part in text.split(',') {
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (id(a)?, id(b)?);
                    if a > b {
                        return Err(format!("range `{part}` runs backwards"));
                    }
                    for c in a..=b {
                        s.insert(c);
                    }
                }
                None => s.insert(id(part)?),
            }
        }
        Ok(s)
    }
}

/// Linux's list form: ascending runs, `0-3,8`.
impl fmt::Display for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<u32> = self.iter().collect();
        let mut i = 0;
        let mut first = true;
        while i < ids.len() {
            let mut j = i;
            while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
                j += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if j > i {
                write!(f, "{}-{}", ids[i], ids[j])?;
            } else {
                write!(f, "{}", ids[i])?;
            }
            i = j + 1;
        }
        Ok(())
    }
}

impl fmt::Debug for CpuSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{{{self}}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_linux_lists() {
        let s = CpuSet::parse("0-3,8,10-11").unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(s.to_string(), "0-3,8,10-11");
        assert_eq!(CpuSet::parse("").unwrap(), CpuSet::EMPTY);
        assert_eq!(CpuSet::parse("1023").unwrap().len(), 1);
        for bad in ["a", "3-1", "1024", "0-", ",1"] {
            assert!(CpuSet::parse(bad).is_err(), "{bad}");
        }
        let (a, b) = (CpuSet::of([1, 2, 3]), CpuSet::of([3, 4, 700]));
        assert_eq!(a.union(&b).to_string(), "1-4,700");
        assert_eq!(a.and(&b).to_string(), "3");
        assert_eq!(a.minus(&b).to_string(), "1-2");
        assert!(a.meets(&b) && !a.meets(&CpuSet::of([9])));
        assert!(!CpuSet::EMPTY.contains(5000));
    }
}
