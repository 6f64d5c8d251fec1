//! Go's `sort.Slice` (pattern-defeating quicksort, `sort/zsortfunc.go`), step for
//! step. Volcano's CPU picker sorts with comparators that are not strict weak
//! orders (`a < b || c < d`), and with such a comparator the result depends on
//! the exact sequence of comparisons and swaps: only the same algorithm gives
//! the same order. Elements are compared by value; `less` must not depend on
//! their positions.

/// Sorts `v` as Go's `sort.Slice(v, less)` does.
pub fn sort_slice<T: Copy>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = v.len();
    let limit = bits_len(n);
    let mut d = Data { v, less };
    pdqsort(&mut d, 0, n, limit);
}

struct Data<'a, T, F> {
    v: &'a mut [T],
    less: F,
}

impl<T: Copy, F: Fn(&T, &T) -> bool> Data<'_, T, F> {
    fn less(&self, i: usize, j: usize) -> bool {
        (self.less)(&self.v[i], &self.v[j])
    }
    fn swap(&mut self, i: usize, j: usize) {
        self.v.swap(i, j);
    }
}

/// `bits.Len(uint(n))`: the bits needed to write n.
fn bits_len(n: usize) -> usize {
    (usize::BITS - n.leading_zeros()) as usize
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

fn insertion_sort<T: Copy, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: usize, b: usize) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && d.less(j, j - 1) {
            d.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sift_down<T: Copy, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, lo: usize, hi: usize, first: usize) {
    let mut root = lo;
    loop {
        let mut child = 2 * root + 1;
        if child >= hi {
            return;
        }
        if child + 1 < hi && d.less(first + child, first + child + 1) {
            child += 1;
        }
        if !d.less(first + root, first + child) {
            return;
        }
        d.swap(first + root, first + child);
        root = child;
    }
}

fn heap_sort<T: Copy, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: usize, b: usize) {
    let (first, lo, hi) = (a, 0, b - a);
    for i in (0..=(hi - 1) / 2).rev() {
        sift_down(d, i, hi, first);
    }
    for i in (0..hi).rev() {
        d.swap(first, first + i);
        sift_down(d, lo, i, first);
    }
}

fn pdqsort<T: Copy, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, mut a: usize, mut b: usize, mut limit: usize) {
    const MAX_INSERTION: usize = 12;
    let (mut was_balanced, mut was_partitioned) = (true, true);
    loop {
        let length = b - a;
        if length <= MAX_INSERTION {
            insertion_sort(d, a, b);
            return;
        }
        if limit == 0 {
            heap_sort(d, a, b);
            return;
        }
        if !was_balanced {
            break_patterns(d, a, b);
            limit -= 1;
        }
        let (mut pivot, mut hint) = choose_pivot(d, a, b);
        if hint == Hint::Decreasing {
            reverse_range(d, a, b);
            pivot = (b - 1) - (pivot - a);
            hint = Hint::Increasing;
        }
        if was_balanced && was_partitioned && hint == Hint::Increasing && partial_insertion_sort(d, a, b) {
            return;
        }
        if a > 0 && !d.less(a - 1, pivot) {
            a = partition_equal(d, a, b, pivot);
            continue;
        }
        let (mid, already) = partition(d, a, b, pivot);
        was_partitioned = already;
        let (left, right) = (mid - a, b - mid);
        let balance = length / 8;
        if left < right {
            was_balanced = left >= balance;
            pdqsort(d, a, mid, limit);
            a = mid + 1;
        } else {
            was_balanced = right >= balance;
            pdqsort(d, mid + 1, b, limit);
            b = mid;
        }
    }
}

fn partition<T: Copy, F: Fn(&T, &T) -> bool>(
    d: &mut Data<'_, T, F>,
    a: usize,
    b: usize,
    pivot: usize,
) -> (usize, bool) {
    d.swap(a, pivot);
    // Signed: `j` may pass below `a + 1`.
    let (mut i, mut j) = (a as isize + 1, b as isize - 1);
    while i <= j && d.less(i as usize, a) {
        i += 1;
    }
    while i <= j && !d.less(j as usize, a) {
        j -= 1;
    }
    if i > j {
        d.swap(j as usize, a);
        return (j as usize, true);
    }
    d.swap(i as usize, j as usize);
    i += 1;
    j -= 1;
    loop {
        while i <= j && d.less(i as usize, a) {
            i += 1;
        }
        while i <= j && !d.less(j as usize, a) {
            j -= 1;
        }
        if i > j {
            break;
        }
        d.swap(i as usize, j as usize);
        i += 1;
        j -= 1;
    }
    d.swap(j as usize, a);
    (j as usize, false)
}

fn partition_equal<T: Copy, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: usize, b: usize, pivot: usize) -> usize {
    d.swap(a, pivot);
    let (mut i, mut j) = (a as isize + 1, b as isize - 1);
    loop {
        while i <= j && !d.less(a, i as usize) {
            i += 1;
        }
        while i <= j && d.less(a, j as usize) {
            j -= 1;
        }
        if i > j {
            break;
        }
        d.swap(i as usize, j as usize);
        i += 1;
        j -= 1;
    }
    i as usize
}

fn partial_insertion_sort<T: Copy, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: usize, b: usize) -> bool {
    const MAX_STEPS: usize = 5;
    const SHORTEST_SHIFTING: usize = 50;
    let mut i = a + 1;
    for _ in 0..MAX_STEPS {
        while i < b && !d.less(i, i - 1) {
            i += 1;
        }
        if i == b {
            return true;
        }
        if b - a < SHORTEST_SHIFTING {
            return false;
        }
        d.swap(i, i - 1);
        // Go shifts down to index 1 here, not to `a` (as written upstream).
        if i - a >= 2 {
            let mut j = i - 1;
            while j >= 1 {
                if !d.less(j, j - 1) {
                    break;
                }
                d.swap(j, j - 1);
                j -= 1;
            }
        }
        if b - i >= 2 {
            for j in i + 1..b {
                if !d.less(j, j - 1) {
                    break;
                }
                d.swap(j, j - 1);
            }
        }
    }
    false
}

fn break_patterns<T: Copy, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: usize, b: usize) {
    let length = b - a;
    if length >= 8 {
        let mut random = length as u64;
        let modulus = 1usize << bits_len(length);
        for idx in a + (length / 4) * 2 - 1..=a + (length / 4) * 2 + 1 {
            // Go's xorshift: << 13, >> 17, << 5.
            random ^= random << 13;
            random ^= random >> 17;
            random ^= random << 5;
            let mut other = (random as usize) & (modulus - 1);
            if other >= length {
                other -= length;
            }
            d.swap(idx, a + other);
        }
    }
}

fn choose_pivot<T: Copy, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: usize, b: usize) -> (usize, Hint) {
    const SHORTEST_NINTHER: usize = 50;
    const MAX_SWAPS: usize = 4 * 3;
    let l = b - a;
    let mut swaps = 0;
    let mut i = a + l / 4;
    let mut j = a + l / 4 * 2;
    let mut k = a + l / 4 * 3;
    if l >= 8 {
        if l >= SHORTEST_NINTHER {
            i = median(d, i - 1, i, i + 1, &mut swaps);
            j = median(d, j - 1, j, j + 1, &mut swaps);
            k = median(d, k - 1, k, k + 1, &mut swaps);
        }
        j = median(d, i, j, k, &mut swaps);
    }
    match swaps {
        0 => (j, Hint::Increasing),
        MAX_SWAPS => (j, Hint::Decreasing),
        _ => (j, Hint::Unknown),
    }
}

fn order2<T: Copy, F: Fn(&T, &T) -> bool>(d: &Data<'_, T, F>, a: usize, b: usize, swaps: &mut usize) -> (usize, usize) {
    if d.less(b, a) {
        *swaps += 1;
        return (b, a);
    }
    (a, b)
}

fn median<T: Copy, F: Fn(&T, &T) -> bool>(
    d: &Data<'_, T, F>,
    a: usize,
    b: usize,
    c: usize,
    swaps: &mut usize,
) -> usize {
    let (a, b) = order2(d, a, b, swaps);
    let (b, c) = order2(d, b, c, swaps);
    let (_, b) = order2(d, a, b, swaps);
    let _ = c;
    b
}

fn reverse_range<T: Copy, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: usize, b: usize) {
    let (mut i, mut j) = (a, b - 1);
    while i < j {
        d.swap(i, j);
        i += 1;
        j -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With a strict weak order the port sorts (what the algorithm is for), on
    /// lengths that reach every branch: insertion, partitions, heap fallback.
    #[test]
    fn sorts_with_a_consistent_order() {
        let mut x: u64 = 7;
        for n in [0usize, 1, 5, 12, 13, 49, 50, 51, 200, 1000] {
            let mut v: Vec<u32> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 37) as u32
                })
                .collect();
            let mut want = v.clone();
            want.sort();
            sort_slice(&mut v, |a, b| a < b);
            assert_eq!(v, want, "n = {n}");
            let mut desc: Vec<u32> = (0..n as u32).rev().collect();
            sort_slice(&mut desc, |a, b| a < b);
            assert_eq!(desc, (0..n as u32).collect::<Vec<_>>());
        }
    }

    /// An inconsistent comparator on a short slice gives insertion sort's
    /// order: `less(a, b) = count(a) < count(b) || a < b` on sockets 0 (two
    /// free cores) and 1 (one) puts 1 first when 0 comes first, and 0 first
    /// when 1 does — the order Go gives for each input order.
    #[test]
    fn inconsistent_order_follows_insertion_sort() {
        let count = |s: &u32| if *s == 0 { 2 } else { 1 };
        let less = |a: &u32, b: &u32| count(a) < count(b) || a < b;
        let mut v = vec![0u32, 1];
        sort_slice(&mut v, less);
        assert_eq!(v, [1, 0]);
        let mut v = vec![1u32, 0];
        sort_slice(&mut v, less);
        assert_eq!(v, [0, 1]);
    }
}
