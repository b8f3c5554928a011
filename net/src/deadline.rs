//! One overall deadline per call: connecting, the TLS handshake, the request and the whole answer
//! together. A peer that accepts and never answers the handshake, or answers it and then stays
//! silent, ends the call at its deadline with a message naming the endpoint, never a hung cron job.

use std::future::Future;
use std::time::Duration;

/// A call that did not finish within its deadline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{endpoint}: {}", timed_out(*after))]
pub struct TimedOut {
    pub endpoint: String,
    pub after: Duration,
}

/// The words every client uses for a call that ran out of time: `timed out after N s`.
pub fn timed_out(after: Duration) -> String {
    let seconds = after.as_secs_f64();
    if seconds.fract() == 0.0 {
        format!("timed out after {} s", after.as_secs())
    } else {
        format!("timed out after {seconds:.1} s")
    }
}

/// Runs `call` (to `endpoint`) until it finishes or `after` has passed, whichever comes first.
/// Dropping the call at the deadline drops its connection.
pub async fn within<F: Future>(
    endpoint: &str,
    after: Duration,
    call: F,
) -> Result<F::Output, TimedOut> {
    tokio::time::timeout(after, call)
        .await
        .map_err(|_| TimedOut {
            endpoint: endpoint.to_owned(),
            after,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_past_its_deadline_is_named_with_its_endpoint() {
        let endpoint = "https://silent.example.org:443";
        let err = within(
            endpoint,
            Duration::from_millis(100),
            std::future::pending::<()>(),
        )
        .await
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "https://silent.example.org:443: timed out after 0.1 s"
        );
        assert_eq!(
            within(endpoint, Duration::from_secs(2), async { 7 }).await,
            Ok(7)
        );
        assert_eq!(timed_out(Duration::from_secs(2)), "timed out after 2 s");
    }
}
