//! Text helpers: how close a misspelled name is to a known one (for messages), and
//! one shared copy of the short strings millions of jobs repeat.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    static SHARED: RefCell<FxHashMap<Box<str>, Arc<str>>> = RefCell::new(FxHashMap::default());
}

/// `a == b`, usable in constants (a name looked up in a table at compile time).
pub const fn const_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && const_starts_with(a, b)
}

/// `s.starts_with(p)`, usable in constants.
pub const fn const_starts_with(s: &str, p: &str) -> bool {
    let (s, p) = (s.as_bytes(), p.as_bytes());
    if s.len() < p.len() {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if s[i] != p[i] {
            return false;
        }
        i += 1;
    }
    true
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

/// `; did you mean `x`?` for the name of `names` nearest to `got` (at most two
/// edits, and fewer than half its length; ties to the first smallest name), or
/// nothing.
pub fn did_you_mean<'a>(got: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    let d = |n: &str| edit_distance(got, n);
    let best = names.into_iter().map(|n| (d(n), n)).filter(|&(k, _)| k <= 2 && k * 2 < got.chars().count()).min();
    best.map(|(_, n)| format!("; did you mean `{n}`?")).unwrap_or_default()
}

/// [`did_you_mean`] for serde's `unknown field `x`, expected one of a, b, c`
/// (or `unknown variant`, `expected a or b`, names in backticks or not): the
/// hint for `x` among the names listed, or nothing when `msg` is no such
/// message.
pub fn serde_hint(msg: &str) -> String {
    let Some(rest) = msg.strip_prefix("unknown field `").or_else(|| msg.strip_prefix("unknown variant `")) else {
        return String::new();
    };
    let Some((got, rest)) = rest.split_once('`') else { return String::new() };
    let Some(list) = rest.split_once("expected one of ").or_else(|| rest.split_once("expected ")).map(|(_, l)| l)
    else {
        return String::new();
    };
    let names: Vec<&str> = list.split(", ").flat_map(|n| n.split(" or ")).map(|n| n.trim().trim_matches('`')).collect();
    // `{baseline:sjf}`: YAML reads a colon without a space after it as part of
    // the key, so the whole `baseline:sjf` is the field's name.
    if let Some((key, value)) = got.split_once(':')
        && names.contains(&key)
    {
        return format!("; write `{key}: {value}`: YAML needs a space after the colon");
    }
    did_you_mean(got, names)
}

#[cfg(test)]
mod tests {
    use super::{did_you_mean, edit_distance, serde_hint, shared};

    #[test]
    fn serde_messages_get_the_nearest_name() {
        let m = "unknown field `horizn`, expected one of seed, horizon, schedulePeriod";
        assert_eq!(serde_hint(m), "; did you mean `horizon`?");
        assert_eq!(
            serde_hint("unknown field `nodeGroup`, expected `nodes` or `nodeGroups`"),
            "; did you mean `nodeGroups`?"
        );
        assert_eq!(
            serde_hint("unknown variant `Clsoed`, expected one of `Open`, `Closed`"),
            "; did you mean `Closed`?"
        );
        assert_eq!(serde_hint("unknown field `zzz`, expected one of seed, horizon"), "");
        assert_eq!(
            serde_hint("unknown field `baseline:sjf`, expected one of baseline, conf, inline"),
            "; write `baseline: sjf`: YAML needs a space after the colon"
        );
        assert_eq!(serde_hint("invalid type: string, expected u32"), "");
        assert_eq!(did_you_mean("ab", ["abc"]), "", "an edit of half the name is no hint");
    }
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

/// Why a name from input that outputs print (a job, node or queue name) is
/// refused, if it is: a control character (it would break a CSV row or a
/// terminal line), or a first character that makes a spreadsheet run the CSV cell
/// as a formula (`=`, `+`, `-`, `@`). Names are written unchanged in every output,
/// so such a name is refused where it is read (docs/outputs.md § Names).
pub fn name_problem(name: &str) -> Option<String> {
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Some(format!("`{}` contains a control character ({})", name.escape_debug(), c.escape_debug()));
    }
    match name.chars().next() {
        Some(c @ ('=' | '+' | '-' | '@')) => Some(format!(
            "`{name}` starts with `{c}`, which makes a spreadsheet run the CSV cell as a formula; expected a name starting with a letter, digit or another sign"
        )),
        _ => None,
    }
}

/// [`name_problem`] for a namespace, a job or a task name, which outputs join
/// with `/` (`namespace/job`): a `/` in one would make two objects print alike.
pub fn part_name_problem(name: &str) -> Option<String> {
    name_problem(name).or_else(|| {
        name.contains('/').then(|| {
            format!(
                "`{name}` contains `/`, which outputs print between a namespace and a name; expected a name without it"
            )
        })
    })
}

/// Why `value` is not a Kubernetes label value (empty, or at most 63 letters,
/// digits, `-`, `_` and `.`, starting and ending with a letter or digit), if
/// it is not.
pub fn label_value_problem(value: &str) -> Option<String> {
    (!value.is_empty() && !is_name_part(value)).then(|| {
        format!(
            "`{}` is not a label value, as Kubernetes requires: empty, or at most 63 letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit",
            value.escape_debug()
        )
    })
}

/// Why `name` is not a DNS-1123 subdomain (what Kubernetes requires of most
/// object names: at most 253 characters, lower-case letters, digits, `-` and `.`,
/// starting and ending with a letter or digit), if it is not.
pub fn dns_subdomain_problem(name: &str) -> Option<String> {
    dns_problem(name, 253, true)
}

/// Why `name` is not a DNS-1123 label (a namespace: at most 63 characters,
/// lower-case letters, digits and `-`, starting and ending with a letter or digit),
/// if it is not.
pub fn dns_label_problem(name: &str) -> Option<String> {
    dns_problem(name, 63, false)
}

/// Why `name` is not a Kubernetes qualified name (a label key, a scheduling
/// gate: an optional DNS-1123 subdomain prefix and `/`, then at most 63
/// characters of letters, digits, `-`, `_` and `.`, starting and ending with a
/// letter or digit), if it is not.
pub fn qualified_name_problem(name: &str) -> Option<String> {
    let (prefix, base) = match name.split_once('/') {
        Some((p, b)) => (Some(p), b),
        None => (None, name),
    };
    if let Some(why) = prefix.and_then(dns_subdomain_problem) {
        return Some(format!("the prefix of `{}`: {why}", name.escape_debug()));
    }
    (!is_name_part(base)).then(|| {
        format!(
            "`{}` is not a qualified name, as Kubernetes requires: an optional DNS subdomain and `/`, then at most 63 letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit",
            name.escape_debug()
        )
    })
}

/// The name part of a qualified name, and a non-empty label value: 1 to 63
/// letters, digits, `-`, `_` and `.`, starting and ending with a letter or
/// digit.
fn is_name_part(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    !s.is_empty()
        && s.len() <= 63
        && s.chars().all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
        && s.starts_with(alnum)
        && s.ends_with(alnum)
}

fn dns_problem(name: &str, max: usize, dots: bool) -> Option<String> {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let ok = !name.is_empty()
        && name.len() <= max
        && name.chars().all(|c| alnum(c) || c == '-' || (dots && c == '.'))
        && name.starts_with(alnum)
        && name.ends_with(alnum)
        && !(dots && name.split('.').any(|part| part.is_empty() || !part.starts_with(alnum) || !part.ends_with(alnum)));
    (!ok).then(|| {
        let what = if dots { "a DNS-1123 subdomain" } else { "a DNS-1123 label" };
        let allowed = if dots { "lower-case letters, digits, `-` and `.`" } else { "lower-case letters, digits and `-`" };
        format!(
            "`{}` is not {what}, as Kubernetes requires: at most {max} characters, {allowed}, starting and ending with a letter or digit",
            name.escape_debug()
        )
    })
}

#[cfg(test)]
mod name_tests {
    use super::*;

    #[test]
    fn names_that_would_run_as_formulas_are_named() {
        for bad in ["=HYPERLINK(\"x\")", "+cmd|' /C calc'!A0", "@SUM(1)", "-2+3", "a\tb", "a\nb"] {
            assert!(name_problem(bad).is_some(), "{bad:?}");
        }
        for ok in ["job-1", "1234", "a=b", "ünï", "x@y"] {
            assert_eq!(name_problem(ok), None, "{ok:?}");
        }
    }

    #[test]
    fn dns_names_follow_kubernetes() {
        for ok in ["a", "web-0", "ip-10-0-0-1.ec2.internal", "1abc"] {
            assert_eq!(dns_subdomain_problem(ok), None, "{ok}");
        }
        for bad in ["", "Web", "a_b", "-a", "a-", "a..b", "a.-b", &"a".repeat(254)] {
            assert!(dns_subdomain_problem(bad).is_some(), "{bad:?}");
        }
        assert!(dns_label_problem("a.b").is_some() && dns_label_problem(&"a".repeat(64)).is_some());
        assert_eq!(dns_label_problem("kube-system"), None);
    }
}
