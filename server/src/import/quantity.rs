//! Kubernetes resource quantities (`100m`, `64Mi`, `1.5Gi`, `1e3`, `2E`),
//! parsed exactly and converted to whole base units the way Kubernetes
//! does: CPU to millicores, memory and storage to bytes, rounding up
//! (`Quantity.MilliValue()` / `Quantity.Value()` round up too).
//!
//! The grammar (k8s.io/apimachinery `resource.Quantity`):
//!
//! ```text
//! quantity   ::= sign? numeric suffix
//! numeric    ::= digits | digits "." digits? | "." digits
//! suffix     ::= "" | "m" | "k" | "M" | "G" | "T" | "P" | "E"      decimal SI
//!              | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"           binary SI
//!              | ("e" | "E") sign? digits                          decimal exponent
//! ```
//!
//! A lone `E` is exa (10¹⁸); `E` followed by digits is an exponent. A
//! negative quantity parses but no request may be negative, so it is
//! refused here with its own message.

/// A non-negative quantity, exactly: `digits × 10^exp10 × 2^exp2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quantity {
    digits: u128,
    exp10: i32,
    exp2: u32,
}

/// Most significant digits kept exactly: 10³⁸ < 2¹²⁸ with room to scale.
/// Kubernetes itself keeps far fewer (it rounds beyond 18 digits).
const MAX_DIGITS: usize = 30;

/// Largest decimal exponent accepted: beyond it no request is plausible
/// (10⁴⁰ bytes is 10¹⁴ times all the storage ever made) and the exact
/// arithmetic would overflow.
const MAX_EXP10: i32 = 40;

impl Quantity {
    /// The quantity in thousandths of its unit, rounded up (CPU cores →
    /// millicores). `None` when it does not fit in an `i128`.
    pub fn milli(self) -> Option<i128> {
        self.scaled(3)
    }

    /// The quantity in whole units, rounded up (memory, storage → bytes).
    pub fn units(self) -> Option<i128> {
        self.scaled(0)
    }

    /// `ceil(self × 10^extra)` as an integer.
    fn scaled(self, extra: i32) -> Option<i128> {
        let mut v = i128::try_from(self.digits).ok()?;
        v = v.checked_mul(1i128.checked_shl(self.exp2)?)?;
        let e = self.exp10 + extra;
        if e >= 0 {
            v.checked_mul(10i128.checked_pow(e as u32)?)
        } else {
            // 10^39 exceeds i128: anything divided by it rounds up to 1
            // (or stays 0).
            match 10i128.checked_pow((-e) as u32) {
                Some(d) => Some((v + d - 1) / d),
                None => Some(i128::from(v > 0)),
            }
        }
    }
}

/// Parse one quantity. The error says what is wrong in words.
pub fn parse(s: &str) -> Result<Quantity, String> {
    let bad = |why: &str| {
        Err(format!(
            "invalid quantity {s:?}: {why} (expected e.g. 100m, 0.5, 64Mi, 1Gi, 2G, 1e3)"
        ))
    };
    if s.is_empty() {
        return bad("empty");
    }
    if s.chars().any(char::is_whitespace) {
        return bad("it contains whitespace");
    }
    let b = s.as_bytes();
    let mut i = 0;
    let negative = match b[0] {
        b'-' => {
            i = 1;
            true
        }
        b'+' => {
            i = 1;
            false
        }
        _ => false,
    };
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_part = &s[int_start..i];
    let mut frac_part = "";
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_part = &s[f..i];
    }
    if int_part.is_empty() && frac_part.is_empty() {
        return bad("no number");
    }
    let suffix = &s[i..];
    let (exp10, exp2) = match suffix {
        "" => (0, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        _ => {
            let Some(exp) = suffix.strip_prefix(['e', 'E']) else {
                return bad(&format!("unknown suffix {suffix:?}"));
            };
            let digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return bad(&format!("unknown suffix {suffix:?}"));
            }
            match exp.parse::<i32>() {
                Ok(e) if e.abs() <= MAX_EXP10 => (e, 0),
                _ => return bad("exponent out of range"),
            }
        }
    };
    // Digits as one integer, the decimal point folded into the exponent;
    // leading zeros do not count towards the limit, trailing ones are
    // folded into the exponent too.
    let all = format!("{int_part}{frac_part}");
    let significant = all.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    let trailing = (significant.len() - trimmed.len()) as i32;
    if trimmed.len() > MAX_DIGITS {
        return bad(&format!("more than {MAX_DIGITS} significant digits"));
    }
    let digits: u128 = if trimmed.is_empty() {
        0
    } else {
        trimmed.parse().expect("ASCII digits")
    };
    if negative && digits != 0 {
        return Err(format!(
            "invalid quantity {s:?}: a request cannot be negative"
        ));
    }
    let exp10 = exp10 - frac_part.len() as i32 + trailing;
    if exp10.abs() > 2 * MAX_EXP10 {
        return bad("out of range");
    }
    Ok(Quantity {
        digits,
        exp10: if digits == 0 { 0 } else { exp10 },
        exp2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn milli(s: &str) -> i128 {
        parse(s).unwrap().milli().unwrap()
    }

    fn bytes(s: &str) -> i128 {
        parse(s).unwrap().units().unwrap()
    }

    #[test]
    fn every_form() {
        // Plain numbers and fractions.
        assert_eq!(milli("1"), 1000);
        assert_eq!(milli("0.5"), 500);
        assert_eq!(milli(".5"), 500);
        assert_eq!(milli("2."), 2000);
        assert_eq!(milli("+1.25"), 1250);
        assert_eq!(milli("0"), 0);
        assert_eq!(milli("000.000"), 0);
        assert_eq!(milli("-0"), 0);
        // Milli.
        assert_eq!(milli("100m"), 100);
        assert_eq!(milli("1500m"), 1500);
        assert_eq!(
            milli("0.5m"),
            1,
            "finer than 1m rounds up, as Kubernetes does"
        );
        // Decimal SI.
        assert_eq!(bytes("1k"), 1_000);
        assert_eq!(bytes("1M"), 1_000_000);
        assert_eq!(bytes("2G"), 2_000_000_000);
        assert_eq!(bytes("1T"), 1_000_000_000_000);
        assert_eq!(bytes("1P"), 10i128.pow(15));
        assert_eq!(bytes("1E"), 10i128.pow(18));
        assert_eq!(bytes("1.5G"), 1_500_000_000);
        // Binary SI.
        assert_eq!(bytes("1Ki"), 1024);
        assert_eq!(bytes("64Mi"), 64 << 20);
        assert_eq!(bytes("1.5Gi"), 3 << 29);
        assert_eq!(bytes("1Ti"), 1 << 40);
        assert_eq!(bytes("1Pi"), 1 << 50);
        assert_eq!(bytes("2Ei"), 2 << 60);
        assert_eq!(bytes("0.5Ki"), 512);
        // Decimal exponents, including a lone E (exa) against E3.
        assert_eq!(bytes("1e3"), 1000);
        assert_eq!(bytes("1E3"), 1000);
        assert_eq!(bytes("1e+3"), 1000);
        assert_eq!(bytes("12e-1"), 2, "1.2 bytes round up");
        assert_eq!(milli("1.5e-3"), 2, "1.5m rounds up");
        assert_eq!(bytes("128974848"), 128_974_848);
        assert_eq!(bytes("129e6"), 129_000_000);
        assert_eq!(bytes("123Mi"), 123 << 20);
        // Many digits, exactly.
        assert_eq!(
            bytes("123456789012345678901234567890"),
            123456789012345678901234567890
        );
        assert_eq!(milli("0.000000000000000000001"), 1);
    }

    #[test]
    fn bad_ones() {
        for (s, why) in [
            ("", "empty"),
            ("m", "no number"),
            ("Mi", "no number"),
            (".", "no number"),
            ("abc", "no number"),
            ("1x", "unknown suffix \"x\""),
            ("1K", "unknown suffix \"K\""),
            ("1mi", "unknown suffix \"mi\""),
            ("1MiB", "unknown suffix \"MiB\""),
            ("1e", "unknown suffix \"e\""),
            ("1e3.5", "unknown suffix \"e3.5\""),
            ("1.2.3", "unknown suffix \".3\""),
            ("1 Gi", "whitespace"),
            ("1e400", "exponent out of range"),
            (
                "1234567890123456789012345678901",
                "more than 30 significant digits",
            ),
            ("-1", "a request cannot be negative"),
            ("-100m", "a request cannot be negative"),
        ] {
            let e = parse(s).unwrap_err();
            assert!(e.contains(why), "{s:?}: {e}");
        }
        // Parses, but no integer holds it.
        assert_eq!(
            parse("999999999999999999999999999999E").unwrap().units(),
            None
        );
    }
}
