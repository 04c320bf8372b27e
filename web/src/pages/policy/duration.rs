//! Durations as people read and type them: the policy stores seconds
//! (`staleness.measured_s` = 900), the page shows "15 min" beside them
//! and accepts either form ("900", "15 min", "1 day", "1 h 30 min").

const MINUTE: f64 = 60.0;
const HOUR: f64 = 3600.0;
const DAY: f64 = 86_400.0;
const YEAR: f64 = 365.0 * DAY;

/// Whether a field of this unit is a duration shown in human units.
pub fn is_duration(unit: &str) -> bool {
    unit == "seconds"
}

/// Seconds in the units that add up to them exactly, largest first:
/// 900 → "15 min", 86400 → "1 day", 604800 → "7 days", 5400 → "1 h 30 min".
/// A fraction of a second is kept on the seconds ("1.5 s").
pub fn words(seconds: f64) -> String {
    if !seconds.is_finite() {
        return format!("{seconds} s");
    }
    if seconds < 0.0 {
        return format!("−{}", words(-seconds));
    }
    if seconds == 0.0 {
        return "0 s".into();
    }
    if seconds >= 1000.0 * DAY {
        return about(seconds);
    }
    let whole = seconds.trunc();
    let frac = seconds - whole;
    let mut rest = whole as u64;
    let mut parts = Vec::new();
    for (size, one, many) in [
        (86_400u64, "day", "days"),
        (3600, "h", "h"),
        (60, "min", "min"),
    ] {
        let n = rest / size;
        rest %= size;
        if n > 0 {
            parts.push(format!("{n} {}", if n == 1 { one } else { many }));
        }
    }
    if rest > 0 || frac > 0.0 {
        let s = rest as f64 + frac;
        parts.push(format!("{} s", super::shown(s)));
    }
    parts.join(" ")
}

/// A long span rounded to the largest unit ("about 317 years"), for
/// ranges whose end is a bound rather than a value anyone picks.
pub fn about(seconds: f64) -> String {
    let (n, unit) = if seconds >= YEAR {
        (seconds / YEAR, "year")
    } else if seconds >= DAY {
        (seconds / DAY, "day")
    } else if seconds >= HOUR {
        (seconds / HOUR, "hour")
    } else if seconds >= MINUTE {
        (seconds / MINUTE, "minute")
    } else {
        return words(seconds);
    };
    let n = n.round() as u64;
    format!("about {n} {unit}{}", if n == 1 { "" } else { "s" })
}

/// The seconds of a typed duration: a plain number is seconds; else one
/// or more "number unit" parts (s, min, h, day, week; long names and
/// plurals too), summed. `None` when it is neither.
pub fn parse(text: &str) -> Option<f64> {
    let t = text.trim();
    if let Ok(x) = t.parse::<f64>() {
        return x.is_finite().then_some(x);
    }
    let mut total = 0.0;
    let mut rest = t;
    let mut any = false;
    while !rest.is_empty() {
        let n_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..n_end].parse().ok()?;
        rest = rest[n_end..].trim_start();
        let u_end = rest
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(rest.len());
        let size = unit_seconds(&rest[..u_end].to_ascii_lowercase())?;
        total += n * size;
        any = true;
        rest = rest[u_end..].trim_start_matches([' ', ',']);
    }
    (any && total.is_finite()).then_some(total)
}

fn unit_seconds(unit: &str) -> Option<f64> {
    Some(match unit {
        "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "m" | "min" | "mins" | "minute" | "minutes" => MINUTE,
        "h" | "hr" | "hrs" | "hour" | "hours" => HOUR,
        "d" | "day" | "days" => DAY,
        "w" | "week" | "weeks" => 7.0 * DAY,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_read_in_the_units_that_make_them() {
        assert_eq!(words(900.0), "15 min");
        assert_eq!(words(86_400.0), "1 day");
        assert_eq!(words(7.0 * 86_400.0), "7 days");
        assert_eq!(words(5400.0), "1 h 30 min");
        assert_eq!(words(3600.0), "1 h");
        assert_eq!(words(61.0), "1 min 1 s");
        assert_eq!(words(1.0), "1 s");
        assert_eq!(words(0.0), "0 s");
        assert_eq!(about(1e10), "about 317 years");
    }

    #[test]
    fn typed_durations_are_seconds_or_number_unit_parts() {
        assert_eq!(parse("900"), Some(900.0));
        assert_eq!(parse(" 15 min "), Some(900.0));
        assert_eq!(parse("1 day"), Some(86_400.0));
        assert_eq!(parse("7days"), Some(604_800.0));
        assert_eq!(parse("1h 30min"), Some(5400.0));
        assert_eq!(parse("2 weeks"), Some(1_209_600.0));
        assert_eq!(parse("15 parsecs"), None);
        assert_eq!(parse("min"), None);
        assert_eq!(parse(""), None);
        // What is shown parses back to the same seconds.
        for s in [1.0, 61.0, 900.0, 5400.0, 86_400.0, 90_061.0, 1_209_600.0] {
            assert_eq!(parse(&words(s)), Some(s), "{s}");
        }
    }
}
