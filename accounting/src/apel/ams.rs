//! ARGO AMS (the messaging service EGI's APEL repository reads from) over its REST API:
//!
//! ```text
//! POST {endpoint}/v1/projects/{project}/topics/{topic}:publish?key={token}
//! {"messages": [{"attributes": {"empaid": "<id>"}, "data": "<base64 of the message>"}]}
//! -> 200 {"messageIds": ["..."]}
//! ```
//!
//! One APEL message per request, so a request stays under AMS's size limit whatever the batch.
//! The token travels in the query string, as AMS wants it; it is never logged, and transport
//! errors are reported without their URL for that reason.

use std::time::Duration;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::json;

use super::error::ApelError;
use crate::ship::{Backoff, delay};

/// Where and how to publish.
#[derive(Debug, Clone)]
pub struct AmsSettings {
    /// `https://host[:port]`.
    pub endpoint: String,
    pub project: String,
    pub topic: String,
    /// The AMS key (token) allowed to publish to the topic.
    pub token: String,
    /// PEM of a CA to trust besides the system's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// One request, whole: connecting, the TLS handshake, sending and the answer.
    pub timeout: Duration,
    pub backoff: Backoff,
}

/// A publisher for one topic.
#[derive(Debug, Clone)]
pub struct AmsClient {
    http: accelfed_net::HttpsClient,
    endpoint: String,
    url: String,
    token: String,
    backoff: Backoff,
}

#[derive(Deserialize)]
struct Published {
    #[serde(rename = "messageIds")]
    message_ids: Vec<String>,
}

impl AmsClient {
    pub fn new(settings: &AmsSettings) -> Result<Self, ApelError> {
        let endpoint = settings.endpoint.trim_end_matches('/').to_owned();
        let invalid = |message: String| ApelError::Settings {
            endpoint: endpoint.clone(),
            message,
        };
        accelfed_net::HttpsUrl::parse(&endpoint).map_err(&invalid)?;
        for (what, value) in [("project", &settings.project), ("topic", &settings.topic)] {
            let plain = !value.is_empty()
                && value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
            if !plain {
                return Err(invalid(format!(
                    "{what} {value:?} must be letters, digits, '-', '_' or '.'"
                )));
            }
        }
        let trust = settings
            .ca_pem
            .clone()
            .map_or_else(accelfed_net::Trust::system, accelfed_net::Trust::from_pem);
        let http = accelfed_net::HttpsClient::new(&accelfed_net::ClientSettings::new(
            trust,
            settings.timeout,
        ))
        .map_err(|err| invalid(err.to_string()))?;
        Ok(Self {
            http,
            url: format!(
                "{endpoint}/v1/projects/{}/topics/{}:publish",
                settings.project, settings.topic
            ),
            endpoint,
            token: settings.token.clone(),
            backoff: settings.backoff,
        })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Publishes one message, retrying what a retry can fix (no answer, 429, 5xx) and nothing
    /// else (a 4xx, a certificate AMS's server does not pass); returns the id AMS gave it.
    pub async fn publish(&self, message: &str, empaid: &str) -> Result<String, ApelError> {
        let body = json!({
            "messages": [{
                "attributes": {"empaid": empaid},
                "data": base64::engine::general_purpose::STANDARD.encode(message.as_bytes()),
            }]
        });
        let attempts = self.backoff.attempts.max(1);
        let mut last = String::new();
        for attempt in 1..=attempts {
            match self.try_publish(&body).await {
                Ok(id) => return Ok(id),
                Err(Failure::Final(message)) => {
                    return Err(ApelError::Refused {
                        endpoint: self.endpoint.clone(),
                        message,
                    });
                }
                Err(Failure::Unusable(message)) => {
                    return Err(ApelError::Settings {
                        endpoint: self.endpoint.clone(),
                        message,
                    });
                }
                Err(Failure::Retry(message)) => {
                    tracing::warn!(attempt, endpoint = %self.endpoint, "AMS publish failed: {message}");
                    last = message;
                }
            }
            if attempt < attempts {
                let random =
                    getrandom::u64().map_or(0.5, |bits| (bits >> 11) as f64 / (1u64 << 53) as f64);
                tokio::time::sleep(delay(&self.backoff, attempt, random)).await;
            }
        }
        Err(ApelError::Unreachable {
            endpoint: self.endpoint.clone(),
            attempts,
            message: last,
        })
    }

    /// One request, sent and answered within the deadline (a silent AMS is an attempt that
    /// failed, retried as any other).
    async fn try_publish(&self, body: &serde_json::Value) -> Result<String, Failure> {
        let call = async {
            let response = self
                .http
                .http()
                .post(format!("{}?key={}", self.url, percent_encode(&self.token)))
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string())
                .send()
                .await?;
            let status = response.status();
            response.text().await.map(|text| (status, text))
        };
        // The URL carries the key: the deadline names the endpoint alone.
        let (status, text) = self
            .http
            .within(&self.endpoint, call)
            .await
            .map_err(|timed_out| {
                Failure::Retry(accelfed_net::deadline::timed_out(timed_out.after))
            })?
            .map_err(|err| transport(&self.http, err))?;
        if !status.is_success() {
            let message = format!("HTTP {status}: {}", error_message(&text));
            return Err(
                if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS {
                    Failure::Retry(message)
                } else {
                    Failure::Final(message)
                },
            );
        }
        let published: Published = serde_json::from_str(&text)
            .map_err(|err| Failure::Retry(format!("unreadable answer ({err}): {text:.200}")))?;
        match published.message_ids.as_slice() {
            [id] => Ok(id.clone()),
            ids => Err(Failure::Retry(format!(
                "answered {} message ids for one message",
                ids.len()
            ))),
        }
    }
}

/// Why one publish call failed, and so what `publish` does next.
enum Failure {
    /// No answer, 429 or 5xx: tried again after a pause.
    Retry(String),
    /// AMS answered no (a 4xx: a refused key, a topic that is not there).
    Final(String),
    /// The connection can never work as configured: the server's certificate is refused (an
    /// unknown CA, expired, issued for another name) or the port does not speak TLS.
    Unusable(String),
}

/// A transport failure with its chain of causes ("connection refused", "invalid peer certificate:
/// UnknownIssuer"), never its URL (the key travels in the query string), sorted by whether a retry
/// can cure it.
fn transport(http: &accelfed_net::HttpsClient, err: reqwest::Error) -> Failure {
    let err = err.without_url();
    if err.is_timeout() {
        return Failure::Retry(http.describe(&err));
    }
    let message = accelfed_net::cause::chain(&err);
    if accelfed_net::cause::is_permanent(&err) {
        Failure::Unusable(message)
    } else {
        Failure::Retry(message)
    }
}

/// AMS's `{"error": {"message": ...}}`, or the start of whatever else came back.
fn error_message(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|value| value["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| text.chars().take(200).collect())
}

/// `value` as a URL query value: unreserved characters as they are, every other byte as `%XX`.
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_escaped_in_the_query() {
        assert_eq!(percent_encode("a1-B_.~"), "a1-B_.~");
        assert_eq!(percent_encode("a+b/c=&"), "a%2Bb%2Fc%3D%26");
    }
}
