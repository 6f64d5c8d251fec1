//! Text helpers: how close a misspelled name is to a known one (for messages), and
//! one shared copy of the short strings millions of jobs repeat.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    static SHARED: RefCell<FxHashMap<Box<str>, Arc<str>>> = RefCell::new(FxHashMap::default());
}

/// One shared copy of `s` (per thread): a namespace, kind or user that a million
/// jobs repeat costs one allocation, not a million. Only looked up, never
/// iterated, so the map's order cannot reach an output.
pub fn shared(s: &str) -> Arc<str> {
    SHARED.with(|m| {
        let mut m = m.borrow_mut();
        if let Some(a) = m.get(s) {
            return Arc::clone(a);
        }
        let a: Arc<str> = Arc::from(s);
        m.insert(s.into(), Arc::clone(&a));
        a
    })
}

/// Appends the decimal digits of `v` (what `write!(out, "{v}")` writes, without
/// the formatting machinery: output writers call this for millions of fields).
pub fn push_u64(out: &mut String, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(d as char);
    }
}

/// Appends `v` in decimal, with a leading `-` when negative.
pub fn push_i64(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_u64(out, v.unsigned_abs());
}

/// Levenshtein distance over chars (for "did you mean" suggestions).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (k, &cb) in b.iter().enumerate() {
            let cur = row[k + 1];
            row[k + 1] = (prev + usize::from(ca != cb)).min(row[k] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{edit_distance, shared};
    use std::sync::Arc;

    #[test]
    fn edit_distance_counts_single_char_edits() {
        assert_eq!(edit_distance("train-w-0", "train-w-0"), 0);
        assert_eq!(edit_distance("train-w-0", "trian-w-0"), 2);
        assert_eq!(edit_distance("train-w-0", "train-w-10"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn integers_are_written_as_display_writes_them() {
        for v in [0, 1, 9, 10, 99, 100, 12_345, i64::MAX, -1, -10, -907, i64::MIN] {
            let mut s = String::from("x");
            super::push_i64(&mut s, v);
            assert_eq!(s, format!("x{v}"));
        }
        let mut s = String::new();
        super::push_u64(&mut s, u64::MAX);
        assert_eq!(s, u64::MAX.to_string());
    }

    #[test]
    fn equal_strings_share_one_allocation() {
        let (a, b, c) = (shared("default"), shared("default"), shared("prod"));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!((&*a, &*c), ("default", "prod"));
    }
}

/// `*` matches any run of characters, `?` one character.
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Classic two-pointer match with backtracking to the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod wildcard_tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*.yaml", "a.yaml"));
        assert!(wildcard_match("job-?.y*", "job-1.yml"));
        assert!(!wildcard_match("job-?.yaml", "job-12.yaml"));
        assert!(!wildcard_match("*.yaml", "a.yml"));
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("a*b*c", "axxbyyc"));
        assert!(!wildcard_match("a*b*c", "axxbyy"));
    }
}
