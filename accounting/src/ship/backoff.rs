//! Retry delays: exponential growth from `initial`, capped at `max`, with "equal jitter" (half the
//! delay fixed, half random) so that many sites cut off by one outage do not come back in step.

use std::time::Duration;

/// How a failed call is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// Calls in all, the first included (at least 1).
    pub attempts: u32,
    /// The delay before the second call.
    pub initial: Duration,
    /// No delay is longer.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            attempts: 8,
            initial: Duration::from_secs(1),
            max: Duration::from_secs(60),
        }
    }
}

/// The delay after failed call number `failed` (1-based), with `random` uniform in `[0, 1)`:
/// `d = min(max, initial * 2^(failed-1))`, then `d/2 + random * d/2`.
pub fn delay(backoff: &Backoff, failed: u32, random: f64) -> Duration {
    let exponent = failed.saturating_sub(1).min(30);
    let grown = backoff.initial.saturating_mul(1u32 << exponent);
    let capped = grown.min(backoff.max);
    let half = capped / 2;
    half + half.mul_f64(random.clamp(0.0, 1.0))
}

/// A uniform random number in `[0, 1)` from the operating system.
pub(super) fn random_unit() -> f64 {
    getrandom::u64().map_or(0.5, |bits| (bits >> 11) as f64 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_doubling_and_stops_at_the_cap() {
        let b = Backoff {
            attempts: 10,
            initial: Duration::from_millis(100),
            max: Duration::from_secs(1),
        };
        // random = 1.0 gives the whole delay, 0.0 half of it.
        let full: Vec<u128> = (1..=6).map(|n| delay(&b, n, 1.0).as_millis()).collect();
        assert_eq!(full, vec![100, 200, 400, 800, 1000, 1000]);
        assert_eq!(delay(&b, 3, 0.0), Duration::from_millis(200));
        assert_eq!(delay(&b, 3, 0.5), Duration::from_millis(300));
        assert_eq!(delay(&b, u32::MAX, 1.0), Duration::from_secs(1));
    }

    #[test]
    fn random_values_stay_in_range() {
        for _ in 0..1000 {
            let r = random_unit();
            assert!((0.0..1.0).contains(&r), "{r}");
        }
    }
}
