//! The report API's answers: documents, errors as `{"error": "<reason>"}`, and refusals with the
//! status and the `WWW-Authenticate` header their kind calls for (RFC 6750).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use accelfed_accounting::report::TextFormat;

use crate::access::Refusal;

pub(super) fn document(format: TextFormat, body: String) -> Response {
    let kind = match format {
        TextFormat::Csv => "text/csv; charset=utf-8",
        _ => "application/json",
    };
    (StatusCode::OK, [(header::CONTENT_TYPE, kind)], body).into_response()
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
