//! The report API's answers: documents, errors as `{"error": "<reason>"}`, and refusals with the
//! status and the `WWW-Authenticate` header their kind calls for (RFC 6750).

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::cache::Answer;
use crate::access::Refusal;

/// A report's answer, with `Cache-Status` (RFC 9211) saying whether it came from the cache.
pub(super) fn answer(answer: Answer, hit: bool) -> Response {
    let kind = if answer.csv {
        "text/csv; charset=utf-8"
    } else {
        "application/json"
    };
    let status = if hit {
        "accelfed; hit"
    } else {
        "accelfed; fwd=miss"
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, kind),
            (HeaderName::from_static("cache-status"), status),
        ],
        answer.body,
    )
        .into_response()
}

pub(super) fn error(status: StatusCode, reason: &str) -> Response {
    #[derive(Serialize)]
    struct Error<'a> {
        error: &'a str,
    }
    let body = serde_json::to_vec(&Error { error: reason }).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

pub(super) fn refused(refusal: &Refusal) -> Response {
    match refusal {
        Refusal::Unauthenticated(reason) => {
            let mut response = error(StatusCode::UNAUTHORIZED, reason);
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer error=\"invalid_token\""),
            );
            response
        }
        Refusal::SignIn(reason) => {
            // No credential came: a challenge without an error code (RFC 6750, 3.1).
            let mut response = error(StatusCode::UNAUTHORIZED, reason);
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"accelfed\""),
            );
            response
        }
        Refusal::Forbidden(reason) => {
            let mut response = error(StatusCode::FORBIDDEN, reason);
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer error=\"insufficient_scope\""),
            );
            response
        }
        Refusal::Unavailable(reason) => error(StatusCode::SERVICE_UNAVAILABLE, reason),
    }
}
