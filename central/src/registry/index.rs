//! The in-memory federation view that queries read: every site's latest document, its offers and
//! its freshness. It is immutable; a push builds a new one and swaps it in, so a query never waits
//! for a push or the database.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use accelfed_schemas::glue::from_json::ParsedDocument;
use accelfed_schemas::gpu::GpuModel;

use super::offer::{self, Filter, Offer, ServiceKind};

/// One site as the registry holds it.
#[derive(Debug)]
pub struct SiteView {
    pub site: String,
    pub received_at: DateTime<Utc>,
    /// When the first of the site's entities stops being fresh.
    pub expires: DateTime<Utc>,
    pub document: Arc<ParsedDocument>,
    pub offers: Vec<Offer>,
    /// Each offer's model tokens, so a query compares words rather than parsing names.
    model_tokens: Vec<Vec<String>>,
}

impl SiteView {
    pub fn new(site: String, received_at: DateTime<Utc>, document: ParsedDocument) -> Self {
        let expires = document
            .stamps
            .iter()
            .map(|stamp| stamp.expires())
            .min()
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        let offers = offer::offers(&document.entities, &document.stamps);
        let model_tokens = offers.iter().map(|offer| tokens(&offer.model)).collect();
        Self {
            site,
            received_at,
            expires,
            document: Arc::new(document),
            offers,
            model_tokens,
        }
    }
}

fn tokens(model: &str) -> Vec<String> {
    GpuModel::new(model).map(|m| m.tokens()).unwrap_or_default()
}

/// A site's state in answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SiteStatus {
    pub site: String,
    pub received_at: DateTime<Utc>,
    pub expires: DateTime<Utc>,
    pub fresh: bool,
    pub offers: usize,
}

/// The broker form: what the INDIGO PaaS orchestrator asks (TOSCA `num_gpus`, `gpu_vendor`,
/// `gpu_model`) and the VO.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BrokerRequest {
    pub num_gpus: f64,
    pub gpu_vendor: Option<String>,
    pub gpu_model: Option<String>,
    pub vo: Option<String>,
    pub fresh: bool,
}

/// Every site's view, sorted by site name.
#[derive(Debug, Default)]
pub struct Index {
    sites: Vec<Arc<SiteView>>,
}

impl Index {
    /// This index with `view` added or replacing the site's previous one.
    pub fn with(&self, view: SiteView) -> Self {
        let mut sites: Vec<Arc<SiteView>> = self
            .sites
            .iter()
            .filter(|site| site.site != view.site)
            .cloned()
            .collect();
        sites.push(Arc::new(view));
        sites.sort_by(|a, b| a.site.cmp(&b.site));
        Self { sites }
    }

    pub fn sites(&self) -> &[Arc<SiteView>] {
        &self.sites
    }

    pub fn site_statuses(&self, now: DateTime<Utc>) -> Vec<SiteStatus> {
        self.sites
            .iter()
            .map(|site| SiteStatus {
                site: site.site.clone(),
                received_at: site.received_at,
                expires: site.expires,
                fresh: now <= site.expires,
                offers: site.offers.len(),
            })
            .collect()
    }

    /// The offers `filter` selects, marked fresh or stale at `now`, by site then resource.
    pub fn offers(&self, filter: &Filter, now: DateTime<Utc>) -> Vec<Offer> {
        let wanted = filter.model.as_deref().map(tokens);
        // Model words and freshness are checked here; the rest of the filter on the offer as it is
        // stored, and only an offer that passes is copied into the answer.
        let rest = Filter {
            model: None,
            fresh: false,
            ..filter.clone()
        };
        let mut out = Vec::new();
        for site in &self.sites {
            if filter
                .site
                .as_deref()
                .is_some_and(|name| !site.site.eq_ignore_ascii_case(name))
            {
                continue;
            }
            for (offer, have) in site.offers.iter().zip(&site.model_tokens) {
                if let Some(wanted) = &wanted
                    && (wanted.is_empty() || !wanted.iter().all(|token| have.contains(token)))
                {
                    continue;
                }
                let fresh = now <= offer.expires;
                if (filter.fresh && !fresh) || !rest.matches(offer) {
                    continue;
                }
                out.push(Offer {
                    fresh,
                    ..offer.clone()
                });
            }
        }
        out
    }

    /// For each site, the smallest cloud flavor with at least `num_gpus` GPUs of the vendor and
    /// model for the VO: fewest GPUs, then fewest CPUs, then least RAM, then name.
    pub fn broker(&self, request: &BrokerRequest, now: DateTime<Utc>) -> Vec<Offer> {
        let filter = Filter {
            vendor: request.gpu_vendor.clone(),
            model: request.gpu_model.clone(),
            min_gpus: Some(request.num_gpus),
            vo: request.vo.clone(),
            fresh: request.fresh,
            ..Filter::default()
        };
        let mut best: Vec<Offer> = Vec::new();
        for offer in self.offers(&filter, now) {
            if offer.service_kind != ServiceKind::Cloud {
                continue;
            }
            match best.last_mut() {
                Some(current) if current.site == offer.site => {
                    if size(&offer) < size(current) {
                        *current = offer;
                    }
                }
                _ => best.push(offer),
            }
        }
        best
    }
}

fn size(offer: &Offer) -> (u64, u64, u64, String) {
    (
        (offer.gpus_each * 1000.0).round() as u64,
        offer.cpus.unwrap_or(u64::MAX),
        offer.ram_mb.unwrap_or(u64::MAX),
        offer.resource_name.clone(),
    )
}
