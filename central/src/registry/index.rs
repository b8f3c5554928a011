//! The in-memory federation view that queries read: every site's latest document, its offers and
//! its freshness. It is immutable; a push builds a new one and swaps it in, so a query never waits
//! for a push or the database.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use accelfed_schemas::glue::from_json::ParsedDocument;
use accelfed_schemas::gpu::{GpuCount, GpuModel};

use super::answer::{OffersAnswer, RenderedOffers, wrap};
use super::broker_cache::{BrokerCache, BrokerKey, KeptOffers};
use super::federation::{self, FederationPostings};
use super::postings::{Narrowing, Postings};
use accelfed_schemas::offer::{self, Filter, Offer, ServiceKind};
pub use hit::Hit;

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
    /// Which offers have which model word, VO or kind, so a query checks only its candidates.
    postings: Postings,
    /// Each offer's answer bytes, rendered once here rather than per query.
    rendered: RenderedOffers,
    /// Each offer's `gpus_each`, side by side: a query's most selective check reads this column,
    /// not 52,000 scattered offers.
    gpus_each: Vec<GpuCount>,
    /// The offers' distinct expiry times, ascending (usually one: the document's).
    offer_expiries: Vec<DateTime<Utc>>,
}

impl SiteView {
    pub fn new(site: String, received_at: DateTime<Utc>, document: ParsedDocument) -> Self {
        let expires = super::capacity::expiry(&document);
        let (offers, skipped) = offer::offers_and_skipped(&document.entities, &document.stamps);
        for reason in &skipped {
            tracing::warn!(site = %site, "{reason}");
        }
        let model_tokens: Vec<Vec<String>> =
            offers.iter().map(|offer| tokens(&offer.model)).collect();
        let postings = Postings::new(&offers, &model_tokens);
        let rendered = RenderedOffers::new(&offers);
        let gpus_each = offers.iter().map(|offer| offer.gpus_each).collect();
        let mut offer_expiries: Vec<_> = offers.iter().map(|offer| offer.expires).collect();
        offer_expiries.sort_unstable();
        offer_expiries.dedup();
        Self {
            site,
            received_at,
            expires,
            document: Arc::new(document),
            offers,
            model_tokens,
            postings,
            rendered,
            gpus_each,
            offer_expiries,
        }
    }
}

impl SiteView {
    /// The site's posting lists.
    pub(super) fn postings(&self) -> &Postings {
        &self.postings
    }
}

/// The JSON answer (`{"generated_at": now, "offers": [...]}`) with `hits`, from the bytes each
/// site rendered ahead.
pub fn answer(now: DateTime<Utc>, hits: &[Hit]) -> Vec<u8> {
    let mut answer = OffersAnswer::new(now, hits.len());
    push_hits(&mut answer, hits);
    answer.finish()
}

/// The inside of the offers list of an answer with `hits`.
fn offer_list(hits: &[Hit]) -> Vec<u8> {
    let mut list = OffersAnswer::list(hits.len());
    push_hits(&mut list, hits);
    list.into_list()
}

fn push_hits(answer: &mut OffersAnswer, hits: &[Hit]) {
    for hit in hits {
        match hit.vo_capacity {
            // A VO's own free counts differ from the bytes rendered at push time.
            Some(_) => answer.push_whole(&hit.to_offer()),
            None => answer.push(&hit.site.rendered, hit.position, hit.offer(), hit.fresh),
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
    /// Site positions by ASCII-lowercased name: the `site` filter ignores ASCII case.
    by_name: HashMap<String, Vec<u32>>,
    /// Every site's posting lists merged, for queries that name no site.
    federation: FederationPostings,
    /// Every offer's distinct expiry time, ascending: when freshness changes.
    offer_expiries: Vec<DateTime<Utc>>,
    /// Broker answers selected from this index, while they hold.
    broker_answers: BrokerCache,
}

impl Index {
    /// This index with `view` added or replacing the site's previous one. The other sites' views
    /// are shared, not rebuilt: a push costs its own site's view plus a pass over the site names.
    pub fn with(&self, view: SiteView) -> Self {
        let mut sites = self.sites.clone();
        let view = Arc::new(view);
        let federation = match sites.binary_search_by(|site| site.site.as_str().cmp(&view.site)) {
            Ok(position) => {
                let federation = self.federation.replaced(position, &sites[position], &view);
                sites[position] = view;
                federation
            }
            Err(position) => {
                // A new site shifts the ranks after it: every list changes.
                sites.insert(position, view);
                FederationPostings::build(&sites)
            }
        };
        let mut by_name: HashMap<String, Vec<u32>> = HashMap::with_capacity(sites.len());
        for (position, site) in sites.iter().enumerate() {
            if let Ok(position) = u32::try_from(position) {
                by_name
                    .entry(site.site.to_ascii_lowercase())
                    .or_default()
                    .push(position);
            }
        }
        let mut offer_expiries: Vec<DateTime<Utc>> = sites
            .iter()
            .flat_map(|site| site.offer_expiries.iter().copied())
            .collect();
        offer_expiries.sort_unstable();
        offer_expiries.dedup();
        Self {
            sites,
            by_name,
            federation,
            offer_expiries,
            broker_answers: BrokerCache::default(),
        }
    }

    /// The first offer expiry at or after `now`: until then every offer's freshness is as at `now`.
    fn next_expiry(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let at = self.offer_expiries.partition_point(|&expiry| expiry < now);
        self.offer_expiries.get(at).copied()
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

    /// The offers `filter` selects, marked fresh or stale at `now`, by site then resource (the
    /// tests' copy of what [`Index::select`] finds; the page copies only the rows it shows).
    #[cfg(test)]
    pub fn offers(&self, filter: &Filter, now: DateTime<Utc>) -> Vec<Offer> {
        self.select(filter, now)
            .iter()
            .map(|hit| hit.to_offer())
            .collect()
    }

    /// What [`Index::offers`] answers, without copying the offers.
    pub fn select(&self, filter: &Filter, now: DateTime<Utc>) -> Vec<Hit<'_>> {
        let mut hits = Vec::new();
        self.each_match(filter, false, now, |hit| hits.push(hit));
        hits
    }

    /// For each site, the smallest cloud flavor with at least `num_gpus` GPUs of the vendor and
    /// model for the VO: fewest GPUs, then fewest CPUs, then least RAM, then name (the tests'
    /// form of what the API answers from [`Index::broker_answer`]).
    #[cfg(test)]
    pub fn broker(&self, request: &BrokerRequest, now: DateTime<Utc>) -> Vec<Offer> {
        self.broker_select(request, now)
            .iter()
            .map(|hit| hit.to_offer())
            .collect()
    }

    /// The broker form's JSON answer at `now`: [`Index::broker_select`]'s offers, kept for the
    /// same question while no offer changes freshness (see `broker_cache.rs`).
    pub fn broker_answer(&self, request: &BrokerRequest, now: DateTime<Utc>) -> Vec<u8> {
        let kept = self
            .broker_answers
            .get_or_select(BrokerKey::of(request), now, || {
                let list = offer_list(&self.broker_select(request, now));
                KeptOffers::new(list, now, self.next_expiry(now))
            });
        wrap(now, &kept.bytes)
    }

    /// What [`Index::broker`] answers, without copying the offers.
    pub fn broker_select(&self, request: &BrokerRequest, now: DateTime<Utc>) -> Vec<Hit<'_>> {
        let filter = Filter {
            vendor: request.gpu_vendor.clone(),
            model: request.gpu_model.clone(),
            // The HTTP handler refuses a count that is not a finite positive number.
            min_gpus: GpuCount::new(request.num_gpus).ok(),
            vo: request.vo.clone(),
            fresh: request.fresh,
            ..Filter::default()
        };
        let mut best: Vec<Hit> = Vec::new();
        // Matches come by site, so a site's flavors are consecutive: keep the smallest so far.
        self.each_match(&filter, true, now, |hit| match best.last_mut() {
            // One view per site: the same view is the same site, without comparing names.
            Some(current) if std::ptr::eq(current.site, hit.site) => {
                if size(hit.offer()) < size(current.offer()) {
                    *current = hit;
                }
            }
            _ => best.push(hit),
        });
        best
    }

    /// Calls `found` with each offer `filter` selects (cloud flavors only if `cloud_only`), by
    /// site then resource. Each site's posting lists give the candidates; each candidate is
    /// checked against the whole filter, as a scan of every offer would.
    fn each_match<'i>(
        &'i self,
        filter: &Filter,
        cloud_only: bool,
        now: DateTime<Utc>,
        mut found: impl FnMut(Hit<'i>),
    ) {
        let wanted = filter.model.as_deref().map(tokens);
        // A model with no words (only punctuation or vendor words) names no offer.
        if wanted.as_ref().is_some_and(Vec::is_empty) {
            return;
        }
        let vo = filter.vo.as_deref().map(str::to_ascii_lowercase);
        let narrowing = Narrowing {
            tokens: wanted.as_deref(),
            vo: vo.as_deref(),
            cloud_only,
            min_gpus: filter.min_gpus,
        };
        // The posting lists select exactly the model words and the VO; freshness is checked
        // here; the rest of the filter on the stored offer.
        let rest = Filter {
            model: None,
            vo: None,
            fresh: false,
            ..filter.clone()
        };
        let named: Option<&[u32]> = filter.site.as_deref().map(|name| {
            self.by_name
                .get(&name.to_ascii_lowercase())
                .map_or(&[][..], Vec::as_slice)
        });
        let sites: Box<dyn Iterator<Item = &Arc<SiteView>>> = match named {
            Some(positions) => Box::new(
                positions
                    .iter()
                    .filter_map(|&position| self.sites.get(position as usize)),
            ),
            None => Box::new(self.sites.iter()),
        };
        // Checked first from the site's column of GPU counts, which most candidates fail in the
        // broker form, without reading the offer itself.
        let min_gpus = filter.min_gpus;
        let check = |site: &'i Arc<SiteView>, position: usize| -> Option<Hit<'i>> {
            let offer = &site.offers[position];
            if min_gpus.is_some_and(|min| !site.gpus_each[position].at_least(min)) {
                return None;
            }
            let fresh = now <= offer.expires;
            // For one VO, what it can get (its quota headroom as its shares publish it) decides
            // whether an instance fits and what `min_free` compares.
            let vo_capacity = vo.as_deref().and_then(|vo| offer.vo_capacity(vo));
            let matches = match &vo {
                Some(vo) if vo_capacity.is_some() => {
                    offer.fits_vo(vo) && rest.matches(&offer.for_vo(vo))
                }
                _ => rest.matches(offer),
            };
            if (filter.fresh && !fresh) || !matches {
                return None;
            }
            Some(Hit {
                site,
                position,
                fresh,
                vo_capacity,
            })
        };
        // A query over every site that names a list: the federation's lists, intersected once,
        // give exactly the offers with every model word, the VO and the kind (and a superset of
        // those with enough GPUs, which `check` settles).
        if named.is_none()
            && (wanted.is_some() || vo.is_some() || cloud_only || narrowing.gpu_step().is_some())
        {
            self.federation.for_each_candidate(&narrowing, |entry| {
                let (rank, position) = federation::split(entry);
                if let Some(hit) = self.sites.get(rank).and_then(|site| check(site, position)) {
                    found(hit);
                }
            });
            return;
        }
        let exact = narrowing.exact();
        for site in sites {
            site.postings.for_each_candidate(&narrowing, |position| {
                let offer = &site.offers[position];
                if !exact && let Some(wanted) = &wanted {
                    // More model words than the lists intersect: the words are checked here.
                    let have = &site.model_tokens[position];
                    if !wanted.iter().all(|token| have.contains(token)) {
                        return;
                    }
                }
                if !exact && cloud_only && offer.service_kind != ServiceKind::Cloud {
                    return;
                }
                if let Some(hit) = check(site, position) {
                    found(hit);
                }
            });
        }
    }
}

/// A flavor's size for the broker's order, borrowed.
fn size(offer: &Offer) -> (u64, u64, u64, &str) {
    (
        // Thousandths: the precision a count is rendered with, as an integer that orders totally.
        (offer.gpus_each.get() * 1000.0).round() as u64,
        offer.cpus.unwrap_or(u64::MAX),
        offer.ram_mb.unwrap_or(u64::MAX),
        &offer.resource_name,
    )
}

mod hit;
#[cfg(test)]
mod tests;
