//! An open-loop load on the report API: requests start on a fixed schedule (`rate` a second)
//! whether or not earlier ones have answered, and each one's latency runs from when it was due,
//! not from when it was sent, so a slow answer that delays the next sends is counted against the
//! server rather than hidden (coordinated omission).

use std::time::Duration;

use tokio::time::Instant;

/// One kind of request in the mix.
#[derive(Debug, Clone)]
pub struct Ask {
    /// What the percentiles are printed under.
    pub kind: &'static str,
    /// The path and query, from `/accounting/v1/report?`.
    pub query: String,
    /// A bearer token, where the ask needs a role.
    pub token: Option<String>,
}

/// One answered request.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub kind: &'static str,
    pub latency: Duration,
    pub ok: bool,
    /// The HTTP status; 0 where none came.
    pub status: u16,
}

/// Sends `asks` in turn, `rate` a second for `seconds`, to `base`; returns every sample.
pub async fn drive(
    client: &reqwest::Client,
    base: &str,
    asks: &[Ask],
    rate: f64,
    seconds: f64,
) -> Vec<Sample> {
    let total = (rate * seconds).round() as usize;
    let period = Duration::from_secs_f64(1.0 / rate);
    let start = Instant::now();
    let mut running = Vec::with_capacity(total);
    for k in 0..total {
        let due = start + period.mul_f64(k as f64);
        tokio::time::sleep_until(due).await;
        let ask = asks[k % asks.len()].clone();
        let mut request = client.get(format!("{base}/accounting/v1/report?{}", ask.query));
        if let Some(token) = &ask.token {
            request = request.bearer_auth(token);
        }
        running.push(tokio::spawn(async move {
            let (ok, status) = match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    let read = response.bytes().await.is_ok();
                    (read && status.is_success(), status.as_u16())
                }
                Err(_) => (false, 0),
            };
            Sample {
                kind: ask.kind,
                latency: due.elapsed(),
                ok,
                status,
            }
        }));
    }
    let mut samples = Vec::with_capacity(total);
    for task in running {
        samples.push(task.await.expect("a request task"));
    }
    samples
}

/// The latency at `quantile` (0..=1) of `sorted`.
fn at(sorted: &[Duration], quantile: f64) -> Duration {
    let rank = ((sorted.len() as f64 * quantile).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One line of percentiles over `samples`.
pub fn line(samples: &[Sample]) -> String {
    let mut sorted: Vec<Duration> = samples.iter().map(|s| s.latency).collect();
    if sorted.is_empty() {
        return "no requests".to_owned();
    }
    sorted.sort();
    let mut failed: Vec<u16> = samples.iter().filter(|s| !s.ok).map(|s| s.status).collect();
    let count = failed.len();
    failed.sort_unstable();
    failed.dedup();
    format!(
        "{} requests, p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms, {count} failed{}",
        samples.len(),
        ms(at(&sorted, 0.5)),
        ms(at(&sorted, 0.9)),
        ms(at(&sorted, 0.99)),
        ms(at(&sorted, 1.0)),
        if count == 0 {
            String::new()
        } else {
            format!(" (HTTP status {failed:?}; 0: no answer)")
        }
    )
}

/// The p99 of `samples`.
pub fn p99(samples: &[Sample]) -> Duration {
    let mut sorted: Vec<Duration> = samples.iter().map(|s| s.latency).collect();
    sorted.sort();
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    at(&sorted, 0.99)
}
