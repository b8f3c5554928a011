//! The registry's web page, served by `accelfed serve` on the registry's HTTPS listener beside the
//! API. It answers, at a glance, where GPUs are free now ([`free`], each pool of physical GPUs
//! counted once, stale sites apart, what a chosen VO can get under its quotas), who used them and
//! what sat idle ([`usage`], charts with a table and a CSV download under each), then lists the
//! capacity and occupancy per model over time from the registry's history ([`capacity_view`]), the
//! offers the form selects (the registry's filters as GET parameters) and each site's freshness.
//! A form naming a site or a VO makes it that site's or VO's page.
//!
//! One request, one document: the style sheet and the SVG charts are inline and there is no
//! script, so the page works with no network beyond the service (no CDN), under a
//! Content-Security-Policy that allows its own style sheet by hash and nothing else
//! ([`html::content_security_policy`]). Templates are [`maud`]'s, which escape every text.
//! Usage figures are VO-, site- and model-level aggregates: what anonymous readers may see
//! ([`crate::access`]); with `[access] anonymous = false` the page shows none.

pub mod capacity_view;
pub mod chart;
pub mod form;
pub mod free;
pub mod free_view;
pub mod html;
pub mod offers_view;
pub mod page;
pub mod page_cache;
pub mod top;
pub mod usage;
pub mod usage_view;

use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, RawQuery, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Utc};

use accelfed_accounting::repository::{Repository, SummaryFilter};
use accelfed_schemas::offer::{Filter, Offer};

use crate::registry::Registry;
use crate::registry::index::Hit;
use form::FormParams;
use page::PageData;

/// What the page reads.
#[derive(Debug, Clone)]
pub struct WebState {
    pub registry: Arc<Registry>,
    /// The accounting repository, when `accelfed serve` has one.
    pub repository: Option<Repository>,
    /// The report API's access rules, when there is one: whether anonymous readers may see
    /// usage aggregates (`[access] anonymous`) is read from them per request, so a reload
    /// (SIGHUP) that changes it holds for the page too.
    pub access: Option<Arc<crate::access::Access>>,
    /// Pages built recently, served again while the index is the same ([`page_cache`]).
    pub cache: Arc<page_cache::PageCache>,
}

impl WebState {
    fn usage_public(&self) -> bool {
        self.access.as_ref().is_none_or(|access| access.anonymous())
    }
}

static CSP: LazyLock<String> = LazyLock::new(html::content_security_policy);

/// `GET /`: the page.
pub fn routes(state: WebState) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/capacity.csv", get(capacity_csv))
        .with_state(state)
}

/// The page for `params` at `now` (what `GET /` answers, without HTTP; the benchmark calls it).
pub async fn build(state: &WebState, params: &FormParams, now: DateTime<Utc>) -> (String, bool) {
    let (filter, problems) = params.filter();
    let index = state.registry.index();
    // The offers are read where the index keeps them; only the rows shown are copied.
    let selected = index.select(&filter, now);
    let offers: Vec<Offer> = selected
        .iter()
        .take(top::MAX_OFFER_ROWS)
        .map(|hit| hit.to_offer())
        .collect();
    let sites = index.site_statuses(now);
    // Free GPUs of every offer, whatever else the form asks, but within its site and model.
    let everything = Filter {
        site: filter.site.clone(),
        model: filter.model.clone(),
        ..Filter::default()
    };
    let free = if filter == everything {
        // The form asks nothing more (the federation's page): the same selection.
        free::free_gpus(selected.iter().map(seen))
    } else {
        free::free_gpus(index.select(&everything, now).iter().map(seen))
    };
    let vo_free = filter.vo.as_ref().map(|vo| {
        let for_vo = Filter {
            vo: Some(vo.clone()),
            ..everything.clone()
        };
        let answer = free::free_gpus(index.select(&for_vo, now).iter().map(seen));
        (vo.as_str(), answer)
    });
    let usage = usage::load(
        state.repository.as_ref(),
        state.usage_public(),
        SummaryFilter {
            vo: filter.vo.clone(),
            site: filter.site.clone(),
            ..SummaryFilter::default()
        },
        now,
    )
    .await;
    let capacity = state
        .registry
        .capacity_over_time(filter.site.as_deref(), now);
    let html = page::render(&PageData {
        params,
        problems: &problems,
        offers: &offers,
        offer_count: selected.len(),
        sites: &sites,
        free: &free,
        vo_free: vo_free.as_ref().map(|(vo, free)| (*vo, free)),
        usage: &usage,
        capacity: &capacity,
        now,
    });
    (html, problems.is_empty())
}

/// A selected offer as the free totals read it: in a VO's answer, what the VO can get.
fn seen<'a>(hit: &Hit<'a>) -> free::Seen<'a> {
    let offer = hit.offer();
    free::Seen {
        offer,
        fresh: hit.fresh,
        free_physical: match hit.vo_capacity {
            Some((_, free_physical)) => free_physical,
            None => offer.free_physical,
        },
    }
}

async fn page(
    State(state): State<WebState>,
    RawQuery(query): RawQuery,
    Query(params): Query<FormParams>,
) -> Response {
    let query = query.unwrap_or_default();
    // Read before building: a push meanwhile makes the kept page's index an old one, so it is
    // built again next time rather than served as newer than it is.
    let index = state.registry.index();
    let public = state.usage_public();
    // The repository's report generation too, so usage stored since (on any instance) shows at
    // once; a repository that cannot be read gives no generation and the page is not kept.
    let generation = match &state.repository {
        Some(repository) => repository.report_generation().await.ok(),
        None => Some(0),
    };
    let kept =
        generation.and_then(|generation| state.cache.get(&query, &index, public, generation));
    let (html, ok) = match kept {
        Some(kept) => (kept.body, kept.ok),
        None => {
            let (html, ok) = build(&state, &params, Utc::now()).await;
            let html = Bytes::from(html);
            if let Some(generation) = generation {
                state
                    .cache
                    .put(&query, index, public, generation, html.clone(), ok);
            }
            (html, ok)
        }
    };
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CSP.as_str()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        html,
    )
        .into_response()
}

/// The capacity CSV's parameters: a model (its exact name, as the page links it) and a site.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct CapacityParams {
    model: Option<String>,
    site: Option<String>,
}

/// `GET /capacity.csv`: capacity and occupancy over time, the figures of the page's charts.
async fn capacity_csv(
    State(state): State<WebState>,
    Query(params): Query<CapacityParams>,
) -> Response {
    let over = state
        .registry
        .capacity_over_time(params.site.as_deref(), Utc::now());
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        capacity_view::csv(&over, params.model.as_deref()),
    )
        .into_response()
}
