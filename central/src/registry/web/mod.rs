//! The registry's web page, served by `accelfed serve` on the registry's HTTPS listener beside the
//! API. It answers, at a glance, where GPUs are free now ([`free`], each pool of physical GPUs
//! counted once, stale sites apart, what a chosen VO can get under its quotas), who used them and
//! what sat idle ([`usage`], charts with a table and a CSV download under each), then lists the
//! offers the form selects (the registry's filters as GET parameters) and each site's freshness.
//! A form naming a site or a VO makes it that site's or VO's page.
//!
//! One request, one document: the style sheet and the SVG charts are inline and there is no
//! script, so the page works with no network beyond the service (no CDN), under a
//! Content-Security-Policy that allows its own style sheet by hash and nothing else
//! ([`html::content_security_policy`]). Templates are [`maud`]'s, which escape every text.
//! Usage figures are VO-, site- and model-level aggregates: what anonymous readers may see
//! ([`crate::access`]); with `[access] anonymous = false` the page shows none.

pub mod chart;
pub mod form;
pub mod free;
pub mod free_view;
pub mod html;
pub mod offers_view;
pub mod page;
pub mod top;
pub mod usage;
pub mod usage_view;

use std::sync::{Arc, LazyLock};

use axum::Router;
use axum::extract::{Query, State};
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
}

impl WebState {
    fn usage_public(&self) -> bool {
        self.access.as_ref().is_none_or(|access| access.anonymous())
    }
}

static CSP: LazyLock<String> = LazyLock::new(html::content_security_policy);

/// `GET /`: the page.
pub fn routes(state: WebState) -> Router {
    Router::new().route("/", get(page)).with_state(state)
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
    let html = page::render(&PageData {
        params,
        problems: &problems,
        offers: &offers,
        offer_count: selected.len(),
        sites: &sites,
        free: &free,
        vo_free: vo_free.as_ref().map(|(vo, free)| (*vo, free)),
        usage: &usage,
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

async fn page(State(state): State<WebState>, Query(params): Query<FormParams>) -> Response {
    let (html, ok) = build(&state, &params, Utc::now()).await;
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
