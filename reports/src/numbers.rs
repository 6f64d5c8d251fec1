//! Numbers as the row files write them: fixed decimals without trailing zeros
//! or a negative zero, and milli-units as exact decimals.

use std::fmt::Write as _;

/// A derived number at a column's precision (`decimals`), trailing zeros dropped
/// and never `-0`: ratios use 6 decimals, GPU quantities 3 (milli-GPUs), so every
/// number of a column is written the same way.
pub fn fixed(x: f64, decimals: usize) -> String {
    let mut s = String::new();
    push_fixed(&mut s, x, decimals);
    s
}

/// Appends [`fixed`]`(x, decimals)` to `out`.
pub fn push_fixed(out: &mut String, x: f64, decimals: usize) {
    let at = out.len();
    let _ = write!(out, "{x:.decimals$}");
    if out[at..].contains('.') {
        while out.ends_with('0') {
            out.pop();
        }
        if out.ends_with('.') {
            out.pop();
        }
    }
    if &out[at..] == "-0" {
        out.truncate(at);
        out.push('0');
    }
}

/// Milli-units as an exact decimal (`1500` → `"1.5"`).
pub fn milli_string(m: i64) -> String {
    let mut s = String::new();
    push_milli(&mut s, m);
    s
}

/// Appends [`milli_string`]`(m)` to `out`.
pub fn push_milli(out: &mut String, m: i64) {
    if m < 0 {
        out.push('-');
    }
    let m = m.unsigned_abs();
    let (w, f) = (m / 1000, m % 1000);
    lahar_core::util::text::push_u64(out, w);
    if f == 0 {
        return;
    }
    out.push('.');
    let digits = [f / 100, f / 10 % 10, f % 10];
    let keep = 3 - digits.iter().rev().take_while(|&&d| d == 0).count();
    for &d in &digits[..keep] {
        out.push((b'0' + d as u8) as char);
    }
}

#[cfg(test)]
mod fixed_tests {
    use super::fixed;

    #[test]
    fn one_precision_per_column_no_negative_zero() {
        assert_eq!(fixed(1.0, 6), "1");
        assert_eq!(fixed(-0.0, 6), "0");
        assert_eq!(fixed(-1e-12, 6), "0");
        assert_eq!(fixed(0.0195530726, 6), "0.019553");
        assert_eq!(fixed(341.3333333, 3), "341.333");
        assert_eq!(fixed(10.0, 3), "10");
        assert_eq!(fixed(-2.5, 3), "-2.5");
    }

    #[test]
    fn appended_after_text_already_in_the_buffer() {
        let mut s = String::from("x,");
        super::push_fixed(&mut s, -1e-9, 6);
        super::push_fixed(&mut s, 2.50, 3);
        assert_eq!(s, "x,02.5");
    }
}

#[cfg(test)]
mod tests {
    use super::milli_string;

    #[test]
    fn milli_strings_are_exact() {
        assert_eq!(milli_string(8000), "8");
        assert_eq!(milli_string(500), "0.5");
        assert_eq!(milli_string(1250), "1.25");
        assert_eq!(milli_string(-1500), "-1.5");
        assert_eq!(milli_string(0), "0");
        assert_eq!(milli_string(1005), "1.005");
        assert_eq!(milli_string(-20), "-0.02");
        assert_eq!(milli_string(123_000), "123");
    }
}
