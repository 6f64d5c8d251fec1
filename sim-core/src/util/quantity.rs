//! Kubernetes resource quantities (`500m`, `4Gi`, `1G`, `1.5`, `2e3`), parsed exactly.

/// Why a quantity string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad quantity `{0}`: expected a Kubernetes quantity such as 500m, 4, 1.5, 4Gi, 1G, 1Ti{hint}", hint = unit_hint(.0))]
pub struct QuantityError(pub String);

/// " (did you mean `80G` or `80Gi`?)" for a size written with a unit Kubernetes
/// does not spell (`80GB`, `80gb`, `16GiB`, `512mi`); empty otherwise.
fn unit_hint(s: &str) -> String {
    let t = s.trim();
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let lower = unit.to_ascii_lowercase();
    let letter = lower.chars().next();
    let known = matches!(lower.as_str(), "k" | "m" | "g" | "t" | "p" | "e" | "kb" | "mb" | "gb" | "tb" | "pb" | "eb")
        || matches!(
            lower.as_str(),
            "ki" | "mi" | "gi" | "ti" | "pi" | "ei" | "kib" | "mib" | "gib" | "tib" | "pib" | "eib"
        );
    let valid = matches!(unit, "k" | "M" | "G" | "T" | "P" | "E" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei");
    match letter {
        Some(l) if !num.is_empty() && known && !valid => {
            let decimal = if l == 'k' { "k".to_string() } else { l.to_ascii_uppercase().to_string() };
            let binary = format!("{}i", l.to_ascii_uppercase());
            format!(" (did you mean `{num}{decimal}` or `{num}{binary}`?)")
        }
        _ => String::new(),
    }
}

/// Parses a quantity and returns its value multiplied by `scale`, rounded up
/// (Kubernetes rounds fractional requests up). `scale = 1000` gives milli-units
/// (cpu, GPUs); `scale = 1` gives plain units (bytes of memory, pod counts).
///
/// ```
/// use lahar_core::util::quantity::parse_quantity;
/// assert_eq!(parse_quantity("500m", 1000).unwrap(), 500);
/// assert_eq!(parse_quantity("4Gi", 1).unwrap(), 4 << 30);
/// assert_eq!(parse_quantity("1.5", 1000).unwrap(), 1500);
/// ```
pub fn parse_quantity(s: &str, scale: i64) -> Result<i64, QuantityError> {
    let err = || QuantityError(s.to_string());
    let t = s.trim();
    if t.is_empty() {
        return Err(err());
    }
    let (neg, body) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    // Split the numeric part from the suffix.
    let num_end = body.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(body.len());
    let (num, suffix) = body.split_at(num_end);
    if num.is_empty() || num == "." || num.matches('.').count() > 1 {
        return Err(err());
    }
    // value = mantissa / 10^frac_digits * 2^bin_exp * 10^dec_exp
    let (int_part, frac_part) = num.split_once('.').unwrap_or((num, ""));
    let digits = format!("{int_part}{frac_part}");
    let mantissa: i128 = digits.parse().map_err(|_| err())?;
    let mut dec_exp: i32 = -(frac_part.len() as i32);
    let mut bin_exp: u32 = 0;
    match suffix {
        "" => {}
        "n" => dec_exp -= 9,
        "u" => dec_exp -= 6,
        "m" => dec_exp -= 3,
        "k" => dec_exp += 3,
        "M" => dec_exp += 6,
        "G" => dec_exp += 9,
        "T" => dec_exp += 12,
        "P" => dec_exp += 15,
        "E" => dec_exp += 18,
        "Ki" => bin_exp = 10,
        "Mi" => bin_exp = 20,
        "Gi" => bin_exp = 30,
        "Ti" => bin_exp = 40,
        "Pi" => bin_exp = 50,
        "Ei" => bin_exp = 60,
        e if e.starts_with(['e', 'E']) => {
            let x: i32 = e[1..].parse().map_err(|_| err())?;
            if x.abs() > 30 {
                return Err(err());
            }
            dec_exp += x;
        }
        _ => return Err(err()),
    }
    let mut value: i128 =
        mantissa.checked_mul(scale as i128).and_then(|v| v.checked_mul(1i128 << bin_exp)).ok_or_else(err)?;
    if dec_exp >= 0 {
        value = value.checked_mul(10i128.checked_pow(dec_exp as u32).ok_or_else(err)?).ok_or_else(err)?;
    } else {
        let d = 10i128.checked_pow((-dec_exp) as u32).ok_or_else(err)?;
        value = (value + d - 1) / d; // round up
    }
    if neg {
        value = -value;
    }
    i64::try_from(value).map_err(|_| err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kubernetes_notation() {
        assert_eq!(parse_quantity("2", 1000).unwrap(), 2000);
        assert_eq!(parse_quantity("100m", 1000).unwrap(), 100);
        assert_eq!(parse_quantity("0.5", 1000).unwrap(), 500);
        assert_eq!(parse_quantity("1Ki", 1).unwrap(), 1024);
        assert_eq!(parse_quantity("1Ti", 1).unwrap(), 1 << 40);
        assert_eq!(parse_quantity("1G", 1).unwrap(), 1_000_000_000);
        assert_eq!(parse_quantity("128974848", 1).unwrap(), 128_974_848);
        assert_eq!(parse_quantity("129e6", 1).unwrap(), 129_000_000);
        assert_eq!(parse_quantity("123Mi", 1).unwrap(), 123 * (1 << 20));
        // rounds up, like Kubernetes
        assert_eq!(parse_quantity("1m", 1).unwrap(), 1);
        assert_eq!(parse_quantity("0.0001", 1000).unwrap(), 1);
        assert_eq!(parse_quantity("-1", 1000).unwrap(), -1000);
    }

    #[test]
    fn a_unit_kubernetes_does_not_spell_gets_a_hint() {
        let msg = |s: &str| parse_quantity(s, 1).unwrap_err().to_string();
        assert!(msg("80GB").ends_with("1Ti (did you mean `80G` or `80Gi`?)"), "{}", msg("80GB"));
        assert!(msg("16gib").ends_with("(did you mean `16G` or `16Gi`?)"));
        assert!(msg("4kb").ends_with("(did you mean `4k` or `4Ki`?)"));
        // No hint where the unit is right or no size unit at all.
        assert!(msg("lots").ends_with("1Ti"));
        assert!(msg("5Q").ends_with("1Ti"));
        assert!(msg("99999999999999999999999999999G").ends_with("1Ti"));
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "abc", "1.2.3", "5Q", "Gi", ".", "1e999", "9999999999999999999999999"] {
            assert!(parse_quantity(bad, 1000).is_err(), "{bad:?}");
        }
    }
}
