//! One retry schedule and one `Retry-After` reader, for everything that
//! tries again: the advice driver's backoff of a missing decider, the
//! notifications' redelivery, and the clients' posts to a Berth server
//! (`submit`). A leaf.

use std::time::{Duration, SystemTime};

/// A retry schedule: the delay doubles from `base` up to `ceiling`; with
/// `jitter` each delay is drawn uniformly from its upper half (so clients
/// that failed together do not retry together); and it is never shorter
/// than what the other side asked for with `Retry-After`, held to
/// `asked_at_most` when that is set (so a receiver cannot park a retry
/// for a year).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    pub ceiling: Duration,
    pub jitter: bool,
    pub asked_at_most: Option<Duration>,
}

impl Backoff {
    /// The delay before retry number `retry` (0 = the first retry), given
    /// the other side's `Retry-After`, if any, and a uniform random number
    /// `u` in [0, 1) (read only with `jitter`).
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>, u: f64) -> Duration {
        let doubled = self
            .base
            .saturating_mul(2u32.saturating_pow(retry.min(31)))
            .min(self.ceiling);
        let delay = if self.jitter {
            doubled.mul_f64(0.5 + 0.5 * u.clamp(0.0, 1.0))
        } else {
            doubled
        };
        let asked = retry_after.unwrap_or(Duration::ZERO);
        delay.max(self.asked_at_most.map_or(asked, |most| asked.min(most)))
    }

    /// [`Backoff::delay`] in whole seconds after `attempts` consecutive
    /// failures (1-based), for schedules kept in the database.
    pub fn delay_s(&self, attempts: i64, retry_after: Option<Duration>) -> i64 {
        // 30 doublings: far past any ceiling, and no overflow on the way.
        let retry = (attempts - 1).clamp(0, 30) as u32;
        self.delay(retry, retry_after, 0.0).as_secs() as i64
    }
}

/// Parses a `Retry-After` value: whole seconds, or an HTTP date in any of
/// its three forms (then the time left until it, zero if past). `None`
/// for anything else.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Digits only (RFC 9110 §10.2.3: delay-seconds = 1*DIGIT); an
        // absurdly long number saturates rather than failing.
        return Some(Duration::from_secs(
            value.parse::<u64>().unwrap_or(u64::MAX),
        ));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", now),
            Some(Duration::from_secs(30))
        );
        // RFC 850 and asctime forms are HTTP dates too.
        assert_eq!(
            parse_retry_after("Sunday, 06-Nov-94 08:50:07 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Sun Nov  6 08:50:07 1994", now),
            Some(Duration::from_secs(30))
        );
        // A date in the past means "now".
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        for junk in ["", "-5", "+5", "1.5", "soon", "12 s"] {
            assert_eq!(parse_retry_after(junk, now), None, "{junk:?}");
        }
    }

    #[test]
    fn without_jitter_the_delay_doubles_to_the_ceiling_and_caps_what_is_asked() {
        let b = Backoff {
            base: Duration::from_secs(30),
            ceiling: Duration::from_secs(3600),
            jitter: false,
            asked_at_most: Some(Duration::from_secs(3600)),
        };
        let delays: Vec<i64> = (1..=9).map(|a| b.delay_s(a, None)).collect();
        assert_eq!(delays, [30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
        assert_eq!(b.delay_s(0, None), 30);
        assert_eq!(b.delay_s(i64::MAX, None), 3600);
        assert_eq!(b.delay_s(4, Some(Duration::from_secs(5))), 240);
        assert_eq!(b.delay_s(1, Some(Duration::from_secs(86_400))), 3600);
    }

    #[test]
    fn with_jitter_the_delay_is_in_the_upper_half_and_what_is_asked_is_honoured() {
        let b = Backoff {
            base: Duration::from_secs(1),
            ceiling: Duration::from_secs(60),
            jitter: true,
            asked_at_most: None,
        };
        assert_eq!(b.delay(0, None, 0.0), Duration::from_millis(500));
        assert_eq!(b.delay(3, None, 0.0), Duration::from_secs(4));
        assert_eq!(b.delay(10, None, 0.999_999).as_secs(), 59);
        let asked = Duration::from_secs(86_400);
        assert_eq!(b.delay(0, Some(asked), 0.0), asked);
    }
}
