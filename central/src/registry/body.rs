//! Reading a push's body within bounds on its size and on how slowly it may arrive. The idle
//! timeout closes a connection on which nothing moves, but a site (or a stolen token) that sends
//! one byte every 20 s kept a push, and its connection, open for as long as it liked (issue #30).
//! Here the body must keep up with a minimum rate after a grace period: by `grace + n / rate`
//! seconds after the handler started reading it, more than `n` bytes must have arrived, or the
//! push is refused with 408 and the connection closed.

use std::time::Duration;

use axum::body::{Body, Bytes};
use futures_util::StreamExt as _;
use tokio::time::Instant;

/// The slowest a push body may arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyRate {
    /// Bytes per second the body must keep up with, after the grace period.
    pub min_bytes_per_s: u64,
    /// Time the body is given before the rate counts (a slow start, a busy network).
    pub grace: Duration,
}

/// The default rate: a 16 MiB document in at most 522 s; a trickle is cut after about 10 s.
pub const DEFAULT_MIN_BYTES_PER_S: u64 = 32 * 1024;
pub const DEFAULT_GRACE_S: u64 = 10;

impl Default for BodyRate {
    fn default() -> Self {
        Self {
            min_bytes_per_s: DEFAULT_MIN_BYTES_PER_S,
            grace: Duration::from_secs(DEFAULT_GRACE_S),
        }
    }
}

/// Why a body was not read whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    #[error("document too large: more than {limit} bytes, the limit")]
    TooLarge { limit: usize },
    #[error(
        "the document arrived too slowly: {received} bytes in {elapsed_s} s, below the minimum of \
         {min_bytes_per_s} bytes a second after the first {grace_s} s"
    )]
    TooSlow {
        received: usize,
        elapsed_s: u64,
        min_bytes_per_s: u64,
        grace_s: u64,
    },
    #[error("the document could not be read: {0}")]
    Failed(String),
}

/// Reads `body` whole, refusing it past `max_bytes` (as soon as one byte more arrives) or once it
/// falls behind `rate`.
pub async fn read(body: Body, max_bytes: usize, rate: BodyRate) -> Result<Bytes, BodyError> {
    let started = Instant::now();
    let per_second = rate.min_bytes_per_s.max(1) as f64;
    let mut stream = body.into_data_stream();
    let mut received: Vec<u8> = Vec::new();
    loop {
        let behind_at =
            started + rate.grace + Duration::from_secs_f64(received.len() as f64 / per_second);
        let chunk = match tokio::time::timeout_at(behind_at, stream.next()).await {
            Err(_) => {
                return Err(BodyError::TooSlow {
                    received: received.len(),
                    elapsed_s: started.elapsed().as_secs(),
                    min_bytes_per_s: rate.min_bytes_per_s,
                    grace_s: rate.grace.as_secs(),
                });
            }
            Ok(None) => return Ok(Bytes::from(received)),
            Ok(Some(Err(error))) => return Err(BodyError::Failed(error.to_string())),
            Ok(Some(Ok(chunk))) => chunk,
        };
        if received.len().saturating_add(chunk.len()) > max_bytes {
            return Err(BodyError::TooLarge { limit: max_bytes });
        }
        received.extend_from_slice(&chunk);
    }
}

#[cfg(test)]
mod tests {
    use futures_util::stream;

    use super::*;

    fn trickle(chunks: Vec<&'static [u8]>, every: Duration) -> Body {
        let chunks = stream::iter(chunks).then(move |chunk| async move {
            tokio::time::sleep(every).await;
            Ok::<_, std::io::Error>(Bytes::from_static(chunk))
        });
        Body::from_stream(chunks)
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickled_body_is_cut_after_the_grace_and_a_steady_one_is_read() {
        let rate = BodyRate {
            min_bytes_per_s: 100,
            grace: Duration::from_secs(10),
        };
        // A byte every 20 s: nothing arrived in the first 10 s.
        let started = Instant::now();
        let error = read(trickle(vec![b"{"; 30], Duration::from_secs(20)), 1000, rate)
            .await
            .unwrap_err();
        assert!(
            matches!(error, BodyError::TooSlow { received: 0, .. }),
            "{error}"
        );
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        // 200 bytes a second, in 50-byte chunks: read whole.
        let chunk: &'static [u8] = &[b' '; 50];
        let body = read(
            trickle(vec![chunk; 12], Duration::from_millis(250)),
            1000,
            rate,
        )
        .await
        .unwrap();
        assert_eq!(body.len(), 600);
        // Past the size: refused at the chunk that passes it.
        let error = read(trickle(vec![chunk; 12], Duration::ZERO), 500, rate)
            .await
            .unwrap_err();
        assert_eq!(error, BodyError::TooLarge { limit: 500 });
    }
}
