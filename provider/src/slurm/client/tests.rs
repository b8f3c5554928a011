use accelfed_testkit::fake_http::{closed_port, plain_http_port};

use super::rest::http_error;
use super::*;

fn client() -> HttpsClient {
    HttpsClient::new(&ClientSettings::new(
        Trust::system(),
        Duration::from_secs(5),
    ))
    .unwrap()
}

/// The error reqwest gives for a GET of `url`.
async fn failed_get(url: &str) -> reqwest::Error {
    client().http().get(url).send().await.unwrap_err()
}

#[tokio::test]
async fn slurmrestd_on_a_port_that_does_not_speak_tls_is_named_and_not_retryable() {
    // slurmrestd without TLS answers a handshake in plain HTTP.
    let port = plain_http_port().await;
    let url = format!("https://127.0.0.1:{port}/slurm/v0.0.40/jobs");
    let error = http_error(&url, &failed_get(&url).await, &client());
    let text = error.to_string();
    assert!(
        text.contains("corrupt message") || text.contains("InvalidContentType"),
        "{text}"
    );
    assert!(!error.retryable(), "{text}");
    assert!(text.contains("retry will not help"), "{text}");
}

#[tokio::test]
async fn a_refused_connection_keeps_its_cause_and_may_be_retried() {
    let port = closed_port();
    let url = format!("http://127.0.0.1:{port}/slurm/v0.0.40/jobs");
    let error = http_error(&url, &failed_get(&url).await, &client());
    let text = error.to_string();
    assert!(text.to_lowercase().contains("connection refused"), "{text}");
    assert!(error.retryable(), "{text}");
    assert_eq!(text.matches(&url).count(), 1, "the URL once: {text}");
}
