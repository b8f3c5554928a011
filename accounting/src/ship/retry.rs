//! One call's fate: sent until the repository answers or refuses it, `attempts` calls per
//! endpoint, the endpoints in turn (a failure a retry may cure goes at once to the next endpoint;
//! the backoff delay comes after each round over all of them). A refusal of the token is the same
//! at every instance, so it ends the run where it happened.

use std::time::Duration;

use super::backoff::{Backoff, delay, random_unit};
use super::client::{Client, describe, retryable};
use super::error::ShipError;
use crate::wire::encoded::EncodedSubmitRequest;
use crate::wire::proto;

/// The repository's answer to a call, how many calls failed before it, and the index of the
/// endpoint that answered.
pub(super) type Answer = (proto::SubmitResponse, u32, usize);

/// Sends `request` (cheap to clone: its records are shared bytes) until answered or refused:
/// `attempts` calls per endpoint, the endpoints in turn, the backoff delay after each round.
pub(super) async fn submit_with_retries(
    mut client: Client,
    request: EncodedSubmitRequest,
    backoff: Backoff,
) -> Result<Answer, ShipError> {
    let endpoints = u32::try_from(client.endpoint_count())
        .unwrap_or(u32::MAX)
        .max(1);
    let calls = backoff.attempts.max(1).saturating_mul(endpoints);
    let mut failed = 0;
    loop {
        let (at, answer) = client.submit_encoded(request.clone()).await;
        let status = match answer {
            Ok(response) => return Ok((response, failed, at)),
            // An auth refusal is the site's configuration, the same at every instance.
            Err(status) if !retryable(&status) => {
                return Err(refusal(client.endpoint_at(at), &status));
            }
            Err(status) => status,
        };
        failed += 1;
        let failed_endpoint = client.endpoint_at(at).to_owned();
        if failed >= calls {
            return Err(ShipError::Unreachable {
                endpoint: client.endpoints(),
                attempts: calls,
                message: describe(&status),
            });
        }
        let next = client.fail_over(at).to_owned();
        if failed % endpoints != 0 {
            tracing::warn!(
                endpoint = %failed_endpoint,
                next = %next,
                "submit failed ({}); trying the next endpoint",
                describe(&status)
            );
            continue;
        }
        let wait = delay(&backoff, failed / endpoints, random_unit());
        tracing::warn!(
            endpoint = %failed_endpoint,
            next = %next,
            attempt = failed,
            "submit failed ({}); trying again in {:.1} s",
            describe(&status),
            wait.as_secs_f64()
        );
        sleep(wait).await;
    }
}

pub(super) fn refusal(endpoint: &str, status: &tonic::Status) -> ShipError {
    match status.code() {
        tonic::Code::Unauthenticated | tonic::Code::PermissionDenied => ShipError::Refused {
            endpoint: endpoint.to_owned(),
            message: describe(status),
        },
        _ => ShipError::Settings {
            endpoint: endpoint.to_owned(),
            message: describe(status),
        },
    }
}

async fn sleep(wait: Duration) {
    tokio::time::sleep(wait).await;
}
