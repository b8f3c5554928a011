//! The report API on the HTTPS listener (documented in `docs/registry-openapi.yaml`): the reports
//! of `accelfed report`, from the same repository functions and renderers, so the numbers and the
//! bytes are the same.
//!
//! * `GET /accounting/v1/report?by=vo,month&from=2026-01&to=2026-06&vo=&site=&model=&format=csv`:
//!   GPU-hours grouped by one or two of vo, site, model, month, user (user only for a VO's manager,
//!   the site, or the operator), as JSON (the default) or CSV
//!   (`format=csv` or `Accept: text/csv`); the running month is marked partial. `idle=true` gives
//!   the idle view: idle GPU-hours and their share of the allocated GPU-hours that were measured.
//! * `GET /accounting/v1/sites/{site}/records?page=1&per_page=1000`: the site's own records
//!   ([`records`]), for its token.
//!
//! Who may read what is [`crate::access`]'s: a credential that fails is 401 with
//! `WWW-Authenticate: Bearer`, a valid one asking beyond its role 403. Answers are cached
//! ([`cache`]) until the next ingest commit on any instance; `Cache-Status` (RFC 9211) says
//! whether one came from the cache.

pub mod cache;
mod records;
mod reply;

use std::sync::Arc;

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use axum::routing::get;
use serde::Deserialize;

use accelfed_accounting::report::{Grouping, Report, TextFormat, View};
use accelfed_accounting::repository::{Dimension, Period, Repository, SummaryFilter, SummaryQuery};

use crate::access::{Access, Scope};
use cache::{Answer, AnswerCache, Audience, Key};
use reply::{error, refused};

/// What the handlers share.
#[derive(Debug, Clone)]
pub struct ReportState {
    pub repository: Repository,
    pub access: Arc<Access>,
    /// Answers until the next ingest commit.
    pub cache: Arc<AnswerCache>,
}

impl ReportState {
    /// Who the request's `Authorization` header says the caller is, or the 401 that refuses it.
    async fn caller(&self, headers: &HeaderMap) -> Result<crate::access::Caller, Response> {
        let authorization = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok());
        self.access
            .identify(authorization)
            .await
            .map_err(|refusal| refused(&refusal))
    }
}

pub fn routes(state: ReportState) -> Router {
    Router::new()
        .route("/accounting/v1/report", get(report))
        .route("/accounting/v1/sites/{site}/records", get(records::records))
        .with_state(state)
}

/// The query of `GET /accounting/v1/report`, as text: each value is parsed with its own message.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportParams {
    by: Option<String>,
    from: Option<String>,
    to: Option<String>,
    vo: Option<String>,
    site: Option<String>,
    model: Option<String>,
    format: Option<String>,
    idle: Option<String>,
}

/// A checked report request.
struct ReportRequest {
    by: Grouping,
    filter: SummaryFilter,
    format: TextFormat,
    view: View,
}

impl ReportRequest {
    /// The request in one form, whatever order and spelling its query had (`by=vo&format=csv`,
    /// `format=csv&by=vo&vo=` and `by=vo` with `Accept: text/csv` are one request): the cache's key.
    fn normalised(&self) -> String {
        let SummaryFilter {
            from,
            to,
            vo,
            site,
            model,
        } = &self.filter;
        format!(
            "by={:?} from={from:?} to={to:?} vo={vo:?} site={site:?} model={model:?} \
             format={:?} view={:?}",
            self.by.dimensions(),
            self.format,
            self.view
        )
    }
}

fn parse(params: ReportParams, headers: &HeaderMap) -> Result<ReportRequest, String> {
    let by = match &params.by {
        Some(by) => by.parse::<Grouping>().map_err(|e| format!("by: {e}"))?,
        None => Grouping::one(Dimension::Vo),
    };
    let month = |name: &str, value: &Option<String>| -> Result<Option<Period>, String> {
        value
            .as_deref()
            .map(|text| {
                text.parse::<Period>()
                    .map_err(|e| format!("{name}: {e} (expected YYYY-MM)"))
            })
            .transpose()
    };
    let from = month("from", &params.from)?;
    let to = month("to", &params.to)?;
    if let (Some(from), Some(to)) = (from, to)
        && from > to
    {
        return Err(format!("from {from} is after to {to}"));
    }
    let text = |value: Option<String>| value.filter(|v| !v.is_empty());
    let format = match params.format.as_deref() {
        Some("json") => TextFormat::Json,
        Some("csv") => TextFormat::Csv,
        Some(other) => {
            return Err(format!(
                "format: {:?} is not json or csv",
                accelfed_schemas::excerpt::excerpt(other)
            ));
        }
        None if wants_csv(headers) => TextFormat::Csv,
        None => TextFormat::Json,
    };
    let view = match params.idle.as_deref() {
        None | Some("false") => View::Usage,
        Some("true") => View::Idle,
        Some(other) => {
            return Err(format!(
                "idle: {:?} is not true or false",
                accelfed_schemas::excerpt::excerpt(other)
            ));
        }
    };
    Ok(ReportRequest {
        by,
        view,
        filter: SummaryFilter {
            from,
            to,
            vo: text(params.vo),
            site: text(params.site),
            model: text(params.model),
        },
        format,
    })
}

/// `Accept: text/csv` (alone or preferred in the list before any JSON type).
fn wants_csv(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    for kind in accept.split(',') {
        let kind = kind.split(';').next().unwrap_or_default().trim();
        if kind.eq_ignore_ascii_case("text/csv") {
            return true;
        }
        if kind.eq_ignore_ascii_case("application/json") {
            return false;
        }
    }
    false
}

async fn report(
    State(state): State<ReportState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let caller = match state.caller(&headers).await {
        Ok(caller) => caller,
        Err(refusal) => return refusal,
    };
    let params = format!("/?{}", query.unwrap_or_default())
        .parse::<axum::http::Uri>()
        .map_err(|e| e.to_string())
        .and_then(|uri| {
            axum::extract::Query::<ReportParams>::try_from_uri(&uri).map_err(|r| r.body_text())
        });
    let request = match params.and_then(|axum::extract::Query(p)| parse(p, &headers)) {
        Ok(request) => request,
        Err(reason) => return error(StatusCode::BAD_REQUEST, &reason),
    };
    let scope = Scope {
        vo: request.filter.vo.as_deref(),
        site: request.filter.site.as_deref(),
        records: false,
        users: request.by.contains(Dimension::User),
    };
    if let Err(refusal) = state.access.allows(&caller, &scope) {
        return refused(&refusal);
    }
    // Read before the report, so an answer is never kept under a newer generation than its data.
    let generation = match state.repository.report_generation().await {
        Ok(generation) => generation,
        Err(err) => {
            tracing::error!("report: {err}");
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the repository failed; try again",
            );
        }
    };
    let key = Key {
        request: request.normalised(),
        audience: Audience::of(&caller),
        month: Period::of(chrono::Utc::now()),
    };
    if let Some(answer) = state.cache.get(generation, &key) {
        return reply::answer(answer, true);
    }
    let rows = state
        .repository
        .summaries(SummaryQuery {
            group_by: request.by.dimensions().to_vec(),
            filter: request.filter.clone(),
        })
        .await;
    let rows = match rows {
        Ok(rows) => rows,
        Err(err) => {
            tracing::error!("report: {err}");
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "the repository failed; try again",
            );
        }
    };
    let report = Report::from_rows(request.by, request.filter.from, request.filter.to, &rows)
        .with_current_month(key.month)
        .with_view(request.view);
    let answer = Answer {
        csv: request.format == TextFormat::Csv,
        body: report.render(request.format).into(),
    };
    state.cache.insert(generation, key, answer.clone());
    reply::answer(answer, false)
}
