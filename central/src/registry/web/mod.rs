//! The registry's web page, served by `accelfed serve` on the registry's HTTPS listener beside the
//! API: GPU offers across the federation with the registry's filters (a server-rendered HTML form,
//! GET parameters), each site's freshness, and the accounting charts per VO.
//!
//! One request, one document: the style sheet and the SVG charts are inline and there is no
//! script, so the page works with no network beyond the service (no CDN) and is sent with a
//! Content-Security-Policy that forbids everything else. Names are escaped ([`html::escape`]).

pub mod charts;
pub mod form;
pub mod html;
pub mod page;
pub mod top;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::Utc;

use accelfed_accounting::repository::Repository;

use crate::registry::Registry;
use form::FormParams;
use page::PageData;

/// What the page reads.
#[derive(Debug, Clone)]
pub struct WebState {
    pub registry: Arc<Registry>,
    /// The accounting repository, when `accelfed serve` has one.
    pub repository: Option<Repository>,
}

/// No scripts, no outside resources; inline styles and the inline SVG only.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'";

/// `GET /`: the page.
pub fn routes(state: WebState) -> Router {
    Router::new().route("/", get(page)).with_state(state)
}

async fn page(State(state): State<WebState>, Query(params): Query<FormParams>) -> Response {
    let now = Utc::now();
    let (filter, problems) = params.filter();
    let index = state.registry.index();
    let offers = index.offers(&filter, now);
    let sites = index.site_statuses(now);
    let charts = charts::charts(state.repository.as_ref(), filter.vo.as_deref()).await;
    let html = page::render(&PageData {
        params: &params,
        problems: &problems,
        offers: &offers,
        sites: &sites,
        charts: &charts,
        now,
    });
    let status = if problems.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        html,
    )
        .into_response()
}
