//! The registry's HTTPS API (documented in `docs/registry-openapi.yaml`):
//!
//! * `PUT /registry/v1/document`: a site pushes its GLUE 2.1 JSON with `Authorization: Bearer
//!   <token>`; the token decides the site.
//! * `GET /registry/v1/offers?model=A100&min_gpus=4&vo=atlas&fresh=true&limit=100&page=2`: offers,
//!   JSON, at most 10,000 an answer ([`super::paging`]).
//! * `GET /registry/v1/broker?num_gpus=2&gpu_vendor=nvidia&gpu_model=a100&vo=atlas`: the smallest
//!   fitting flavor per site.
//! * `GET /registry/v1/sites`: every site with its freshness.
//! * `GET /registry/v1/sites/{site}/history`: the site's stored documents, newest first (time and
//!   size; 404 for a site with none).
//!
//! The read endpoints need no token, as the offers they describe are public; only a push does.
//! Answers are JSON; errors are `{"error": "<reason>"}` with a 4xx status for the caller's mistakes
//! and 503 when the database failed (try again).

use std::collections::HashMap;
use std::sync::Arc;

use accelfed_schemas::gpu::GpuCount;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Extension, Path, Query, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use chrono::Utc;
use serde::Serialize;

use super::body::BodyError;
use super::check::Rejection;
use super::index::{BrokerRequest, answer};
use super::paging::Paging;
use super::push_counts::PushOutcome;
use super::state::{PushError, Registry};
use super::store::HistoryEntry;
use crate::auth::Tokens;
use crate::listen::requests::ConnectionInfo;
use accelfed_schemas::names::SiteName;
use accelfed_schemas::offer::Filter;

/// What the handlers share.
#[derive(Debug, Clone)]
pub struct ApiState {
    pub registry: Arc<Registry>,
    pub tokens: Arc<Tokens>,
    /// The largest body read; the registry's own limit decides, this only stops reading early.
    pub max_body: usize,
    /// The slowest a push body may arrive.
    pub body_rate: super::body::BodyRate,
    /// Sites held to a smaller document than `max_body`.
    pub site_max_body: Arc<HashMap<SiteName, usize>>,
}

/// The API's routes.
pub fn router(state: ApiState) -> Router {
    Router::new()
        .route("/registry/v1/document", put(push))
        .route("/registry/v1/offers", get(offers))
        .route("/registry/v1/broker", get(broker))
        .route("/registry/v1/sites", get(sites))
        .route("/registry/v1/sites/{site}/history", get(history))
        .layer(DefaultBodyLimit::disable())
        .with_state(state)
}

fn json<T: Serialize>(status: StatusCode, value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => (status, [(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(error) => error_response(StatusCode::INTERNAL_SERVER_ERROR, &error.to_string()),
    }
}

fn error_response(status: StatusCode, reason: &str) -> Response {
    #[derive(Serialize)]
    struct Error<'a> {
        error: &'a str,
    }
    let body = serde_json::to_vec(&Error { error: reason }).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn push(
    State(state): State<ApiState>,
    connection: Option<Extension<ConnectionInfo>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok());
    let Some(site) = state.tokens.authenticate(authorization) else {
        state
            .registry
            .pushes
            .count(PushOutcome::Refused("unauthorized"));
        tracing::warn!(
            peer = ?connection.as_ref().and_then(|Extension(c)| c.tcp.remote_addr()),
            "registry push refused: missing or unknown bearer token"
        );
        return error_response(
            StatusCode::UNAUTHORIZED,
            "missing or unknown bearer token (Authorization: Bearer <site token>)",
        );
    };
    // A site's connection keeps its place when the port is full (listen::gate).
    if let Some(Extension(connection)) = connection {
        connection.standing.authenticated();
    }
    if let Some(refusal) = unsupported_encoding(&headers) {
        tracing::warn!(site = %site, "registry push refused: {refusal}");
        state
            .registry
            .pushes
            .count(PushOutcome::Refused("unsupported_encoding"));
        return error_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, &refusal);
    }
    let max_body = state
        .site_max_body
        .get(&site)
        .map_or(state.max_body, |limit| (*limit).min(state.max_body));
    let body: Bytes = match super::body::read(body, max_body, state.body_rate).await {
        Ok(body) => body,
        Err(error) => {
            let (status, reason) = match error {
                BodyError::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
                BodyError::TooSlow { .. } => (StatusCode::REQUEST_TIMEOUT, "too_slow"),
                BodyError::Failed(_) => (StatusCode::BAD_REQUEST, "body_failed"),
            };
            state.registry.pushes.count(PushOutcome::Refused(reason));
            tracing::warn!(site = %site, "registry push refused: {error}");
            // The rest of the body is not read: the connection is closed after the answer.
            let mut response = error_response(status, &error.to_string());
            response.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            return response;
        }
    };
    match state.registry.push(site.as_str(), &body, Utc::now()).await {
        Ok(report) => {
            state.registry.pushes.count(PushOutcome::Accepted);
            tracing::info!(site = %report.site, entities = report.entities, offers = report.offers, "registry document stored");
            json(StatusCode::OK, &report)
        }
        Err(PushError::Rejected(rejection)) => {
            tracing::warn!(site = %site, "registry push refused: {rejection}");
            state
                .registry
                .pushes
                .count(PushOutcome::of_rejection(&rejection));
            let status = match rejection {
                Rejection::TooLarge { .. } | Rejection::TooManyEntities { .. } => {
                    StatusCode::PAYLOAD_TOO_LARGE
                }
                Rejection::WrongSite { .. } => StatusCode::FORBIDDEN,
                Rejection::InvalidJson(_) | Rejection::DuplicateKey { .. } => {
                    StatusCode::BAD_REQUEST
                }
                _ => StatusCode::UNPROCESSABLE_ENTITY,
            };
            error_response(status, &rejection.to_string())
        }
        Err(PushError::Store(error)) => {
            state.registry.pushes.count(PushOutcome::Refused("store"));
            tracing::error!(site = %site, "registry store: {error}");
            error_response(StatusCode::SERVICE_UNAVAILABLE, &error.to_string())
        }
    }
}

/// Why a push's `Content-Encoding` is refused: the registry reads a document as sent, so any
/// coding but `identity` (gzip, br, a list of them) would be read as JSON it is not. Refused with
/// 415 (RFC 9110, 15.5.16) rather than decoded: a site's document is a few megabytes at most, and
/// decoding would let a small body expand past the size limit before it is checked.
fn unsupported_encoding(headers: &HeaderMap) -> Option<String> {
    let mut codings = headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .flat_map(|value| {
            let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
            text.split(',')
                .map(|coding| coding.trim().to_owned())
                .collect::<Vec<_>>()
        })
        .filter(|coding| !coding.is_empty());
    let coding = codings.find(|coding| !coding.eq_ignore_ascii_case("identity"))?;
    Some(format!(
        "Content-Encoding {:?} is not accepted: send the document uncompressed (identity)",
        accelfed_schemas::excerpt::excerpt(&coding)
    ))
}

/// An offers answer: its bytes are copied from each offer's JSON rendered at push time
/// ([`super::answer`]), the same bytes serde would make of `{"generated_at", "offers"}`.
fn offers_answer(body: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

async fn offers(State(state): State<ApiState>, RawQuery(query): RawQuery) -> Response {
    let (paging, rest) = match Paging::split(query.as_deref().unwrap_or_default()) {
        Ok(split) => split,
        Err(reason) => return error_response(StatusCode::BAD_REQUEST, &reason),
    };
    // The rest of the query is the filter's, read as the extractor would read it.
    let filter = format!("/?{rest}")
        .parse::<axum::http::Uri>()
        .map_err(|error| error.to_string())
        .and_then(|uri| Query::<Filter>::try_from_uri(&uri).map_err(|r| r.body_text()));
    let Query(filter) = match filter {
        Ok(filter) => filter,
        Err(reason) => return error_response(StatusCode::BAD_REQUEST, &reason),
    };
    let now = Utc::now();
    let index = state.registry.index();
    let hits = index.select(&filter, now);
    let total = hits.len();
    let mut response = offers_answer(answer(now, &hits[paging.range(total)]));
    let headers = response.headers_mut();
    headers.insert("x-total-count", header::HeaderValue::from(total));
    if let Some(next) = paging.next(&rest, total)
        && let Ok(link) =
            header::HeaderValue::from_str(&format!("</registry/v1/offers?{next}>; rel=\"next\""))
    {
        headers.insert(header::LINK, link);
    }
    response
}

async fn broker(
    State(state): State<ApiState>,
    request: Result<Query<BrokerRequest>, QueryRejection>,
) -> Response {
    let Query(request) = match request {
        Ok(request) => request,
        Err(rejection) => return error_response(StatusCode::BAD_REQUEST, &rejection.body_text()),
    };
    // A count no site can hold would otherwise select as if no count were asked for.
    if !(request.num_gpus > 0.0 && GpuCount::new(request.num_gpus).is_ok()) {
        return error_response(
            StatusCode::BAD_REQUEST,
            &format!(
                "num_gpus must be a positive number of GPUs, at most {}",
                GpuCount::MAX
            ),
        );
    }
    let now = Utc::now();
    let index = state.registry.index();
    offers_answer(index.broker_answer(&request, now))
}

async fn sites(State(state): State<ApiState>) -> Response {
    #[derive(Serialize)]
    struct SitesAnswer {
        generated_at: chrono::DateTime<Utc>,
        sites: Vec<super::index::SiteStatus>,
    }
    let now = Utc::now();
    json(
        StatusCode::OK,
        &SitesAnswer {
            generated_at: now,
            sites: state.registry.index().site_statuses(now),
        },
    )
}

/// A site's stored documents, newest first: when each arrived and its size. Only documents that
/// passed the checks are stored, so a refused push is not listed (the log has it).
async fn history(
    State(state): State<ApiState>,
    site: Result<Path<String>, PathRejection>,
) -> Response {
    #[derive(Serialize)]
    struct HistoryAnswer<'a> {
        site: &'a str,
        generated_at: chrono::DateTime<Utc>,
        /// The most entries kept per site; older ones are gone.
        keep_history: u32,
        history: Vec<HistoryEntry>,
    }
    let Path(site) = match site {
        Ok(site) => site,
        Err(rejection) => return error_response(StatusCode::BAD_REQUEST, &rejection.body_text()),
    };
    match state.registry.history(&site).await {
        Ok(history) if history.is_empty() => error_response(
            StatusCode::NOT_FOUND,
            &format!(
                "no document of site {:?} is stored: the site is unknown or has never pushed",
                // An excerpt: a name of 8,000 characters is not echoed whole.
                accelfed_schemas::excerpt::excerpt(&site)
            ),
        ),
        Ok(history) => json(
            StatusCode::OK,
            &HistoryAnswer {
                site: &site,
                generated_at: Utc::now(),
                keep_history: state.registry.keep_history(),
                history,
            },
        ),
        Err(error) => {
            tracing::error!(site = %site, "registry store: {error}");
            error_response(StatusCode::SERVICE_UNAVAILABLE, &error.to_string())
        }
    }
}
