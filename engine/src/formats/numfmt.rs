//! Number formatting shared by the text renderings, the decider's
//! reasons and the Why panel. A leaf: it imports nothing of the crate.

/// A number rounded to one decimal with its sign always written
/// (`+3.2`, `-1.0`, and `+0.0` for anything that rounds to zero).
pub fn signed(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r >= 0.0 {
        format!("+{:.1}", r.abs())
    } else {
        format!("{r:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::signed;

    #[test]
    fn one_decimal_with_a_sign() {
        assert_eq!(signed(3.24), "+3.2");
        assert_eq!(signed(-1.04), "-1.0");
        assert_eq!(signed(0.0), "+0.0");
        assert_eq!(signed(-0.04), "+0.0");
        assert_eq!(signed(-0.0), "+0.0");
    }
}
