//! `GET /accounting/v1/sites/{site}/records?page=1&per_page=1000`: a site's own records, a page at
//! a time, for that site's token (or the federation operator): what the repository holds of it, to
//! compare with its own spool.

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use accelfed_accounting::repository::listing::MAX_PER_PAGE;

use super::ReportState;
use super::reply::{error, refused};
use crate::access::Scope;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PageParams {
    #[serde(default = "first")]
    page: u32,
    #[serde(default = "default_per_page")]
    per_page: u32,
}

fn first() -> u32 {
    1
}

fn default_per_page() -> u32 {
    1000
}

pub(super) async fn records(
    State(state): State<ReportState>,
    headers: HeaderMap,
    site: Result<Path<String>, PathRejection>,
    params: Result<Query<PageParams>, QueryRejection>,
) -> Response {
    let caller = match state.caller(&headers).await {
        Ok(caller) => caller,
        Err(refusal) => return refusal,
    };
    let Path(site) = match site {
        Ok(site) => site,
        Err(rejection) => return error(StatusCode::BAD_REQUEST, &rejection.body_text()),
    };
    let scope = Scope {
        vo: None,
        site: Some(&site),
        records: true,
        users: false,
    };
    if let Err(refusal) = state.access.allows(&caller, &scope) {
        return refused(&refusal);
    }
    let Query(params) = match params {
        Ok(params) => params,
        Err(rejection) => return error(StatusCode::BAD_REQUEST, &rejection.body_text()),
    };
    if params.page == 0 || params.page > 1_000_000 {
        return error(StatusCode::BAD_REQUEST, "page: from 1 to 1,000,000");
    }
    if params.per_page == 0 || params.per_page > MAX_PER_PAGE {
        return error(
            StatusCode::BAD_REQUEST,
            &format!("per_page: from 1 to {MAX_PER_PAGE}"),
        );
    }
    match state
        .repository
        .site_records(&site, params.page, params.per_page)
        .await
    {
        Ok(page) => match serde_json::to_vec(&page) {
            Ok(body) => (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response(),
            Err(err) => error(StatusCode::INTERNAL_SERVER_ERROR, &err.to_string()),
        },
        Err(err) => {
            tracing::error!(site = %site, "records listing: {err}");
            error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the repository failed; try again",
            )
        }
    }
}
