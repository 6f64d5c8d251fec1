//! Exact parsers for the value syntaxes the traces use.

use crate::ctx::Skip;

/// A signed decimal integer.
pub(crate) fn int(s: &str, field: &str) -> Result<i64, Skip> {
    s.trim().parse::<i64>().map_err(|_| Skip::malformed(format!("`{field}`: expected an integer, got `{s}`")))
}

/// A non-empty signed decimal integer; empty is a missing field.
pub(crate) fn req_int(s: &str, field: &str) -> Result<i64, Skip> {
    if s.trim().is_empty() { Err(Skip::missing(field)) } else { int(s, field) }
}

/// A non-negative decimal integer that fits a `u32`.
pub(crate) fn count(s: &str, field: &str) -> Result<u32, Skip> {
    let v = req_int(s, field)?;
    u32::try_from(v).map_err(|_| Skip::malformed(format!("`{field}`: expected a count ≥ 0, got `{s}`")))
}

/// A plain decimal (`12`, `-3.5`, `600.0`) scaled by `10^decimals` exactly; more
/// fractional digits than `decimals` must be zeros. No exponent, no suffix.
pub(crate) fn scaled_decimal(s: &str, decimals: u32, field: &str) -> Result<i64, Skip> {
    let bad = || Skip::malformed(format!("`{field}`: expected a decimal number, got `{s}`"));
    let t = s.trim();
    if t.is_empty() {
        return Err(Skip::missing(field));
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (int_part, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits_ok = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac.is_empty()) || !digits_ok(int_part) || !digits_ok(frac) {
        return Err(bad());
    }
    let (kept, dropped) = frac.split_at(frac.len().min(decimals as usize));
    if dropped.bytes().any(|b| b != b'0') {
        return Err(Skip::malformed(format!("`{field}`: `{s}` has more than {decimals} decimal places")));
    }
    let mut v: i128 = 0;
    for b in int_part.bytes().chain(kept.bytes()) {
        v = v.checked_mul(10).and_then(|v| v.checked_add(i128::from(b - b'0'))).ok_or_else(bad)?;
    }
    v = v.checked_mul(10i128.pow(decimals - kept.len() as u32)).ok_or_else(bad)?;
    let v = if neg { -v } else { v };
    i64::try_from(v).map_err(|_| bad())
}

/// True for `[+-]digits[.digits]` (at least one digit).
pub(crate) fn is_plain_decimal(s: &str) -> bool {
    let body = s.trim().trim_start_matches(['+', '-']);
    let (int_part, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = |x: &str| x.bytes().all(|b| b.is_ascii_digit());
    !(int_part.is_empty() && frac.is_empty()) && digits(int_part) && digits(frac)
}

/// `YYYY-MM-DD HH:MM:SS` (no zone) as seconds since `1970-01-01 00:00:00` of the
/// same clock.
pub(crate) fn datetime(s: &str, field: &str) -> Result<i64, Skip> {
    let bad = || Skip::malformed(format!("`{field}`: expected `YYYY-MM-DD HH:MM:SS`, got `{s}`"));
    let t = s.trim();
    let b = t.as_bytes();
    // ASCII first, so the fixed byte offsets below are character boundaries.
    if !t.is_ascii() || b.len() != 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b' ' || b[13] != b':' || b[16] != b':'
    {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> Result<i64, Skip> {
        let part = &t[r];
        if part.bytes().all(|c| c.is_ascii_digit()) { part.parse::<i64>().map_err(|_| bad()) } else { Err(bad()) }
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days_in_month = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month[(mo - 1) as usize] || h > 23 || mi > 59 || se > 60 {
        return Err(bad());
    }
    Ok(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact() {
        assert_eq!(scaled_decimal("600.0", 0, "x").unwrap(), 600);
        assert_eq!(scaled_decimal("29.296875", 6, "x").unwrap(), 29_296_875);
        assert_eq!(scaled_decimal("-1.5", 6, "x").unwrap(), -1_500_000);
        assert_eq!(scaled_decimal("7", 3, "x").unwrap(), 7000);
        assert!(scaled_decimal("1.25", 1, "x").is_err());
        assert!(scaled_decimal("1e3", 0, "x").is_err());
        assert!(scaled_decimal(".", 0, "x").is_err());
        assert!(scaled_decimal("99999999999999999999999", 0, "x").is_err());
    }

    #[test]
    fn datetimes_count_from_the_epoch() {
        assert_eq!(datetime("1970-01-01 00:00:00", "t").unwrap(), 0);
        assert_eq!(datetime("2017-10-07 01:12:09", "t").unwrap(), 1_507_338_729);
        assert_eq!(datetime("2020-02-29 12:00:00", "t").unwrap(), 1_582_977_600);
        assert!(datetime("2019-02-29 12:00:00", "t").is_err());
        assert!(datetime("2017-10-07T01:12:09", "t").is_err());
        assert!(datetime("None", "t").is_err());
    }
}
