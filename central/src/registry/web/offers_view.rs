//! The offers the form selects and each site's freshness, as tables.

use chrono::{DateTime, Utc};
use maud::{Markup, display, html};

use super::top::{MAX_OFFER_ROWS, MAX_VOS_SHOWN};
use crate::registry::index::SiteStatus;
use accelfed_schemas::offer::Offer;

/// Physical GPUs free / total, with the slots beside them where a slot is part of a GPU.
fn capacity(offer: &Offer) -> String {
    let physical = match (offer.free_physical, offer.total_physical) {
        (Some(free), Some(total)) => format!("{free} / {total}"),
        _ => "unknown".to_owned(),
    };
    match (offer.slot_share.is_some(), offer.free, offer.total) {
        (true, Some(free), Some(total)) => format!("{physical} ({free} / {total} slots)"),
        _ => physical,
    }
}

/// An offer's VOs, the first [`MAX_VOS_SHOWN`] of them and how many more.
fn vo_list(vos: &[String]) -> String {
    let mut shown = vos
        .iter()
        .take(MAX_VOS_SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if vos.len() > MAX_VOS_SHOWN {
        shown.push_str(&format!(" and {} more", vos.len() - MAX_VOS_SHOWN));
    }
    shown
}

/// The offers table, bounded ([`MAX_OFFER_ROWS`]) with a line for the rest: `offers` are the first
/// of the `count` the form selects.
pub fn offers(offers: &[Offer], count: usize) -> Markup {
    html! {
        h2 { "Offers" }
        p id="offer-count" { (count) " offers" }
        table id="offers" {
            thead { tr {
                th { "site" } th { "kind" } th { "flavor / node type" } th { "GPUs each" }
                th { "what one gets" } th { "model" } th { "memory (MB)" } th { "sharing" }
                th { "free / total GPUs (slots)" } th { "pool" } th { "VOs" } th { "information" }
            } }
            tbody {
                @for offer in offers.iter().take(MAX_OFFER_ROWS) {
                    tr.offer {
                        td.site { (offer.site) }
                        td { (offer.service_kind.as_str()) }
                        td title=(offer.resource_id) { (offer.resource_name) }
                        td { (display(offer.gpus_each)) }
                        td.gets { (offer.gets) }
                        td { (offer.model) }
                        td { @if let Some(mb) = offer.memory_mb { (mb) } }
                        td { (offer.sharing) }
                        td { (capacity(offer)) }
                        td.pool.muted { (offer.pool) }
                        td { (vo_list(&offer.vos)) }
                        @if offer.fresh { td.fresh { "fresh" } } @else { td.stale { "stale" } }
                    }
                }
            }
        }
        @if count > MAX_OFFER_ROWS {
            p id="offers-more" {
                "The first " (MAX_OFFER_ROWS) " are shown, " (count - MAX_OFFER_ROWS)
                " more are selected: narrow the filter, or page through them all with the API \
                 (/registry/v1/offers)."
            }
        }
    }
}

/// Every site's last push and freshness, and a link to the site's page.
pub fn sites(sites: &[SiteStatus], now: DateTime<Utc>) -> Markup {
    html! {
        h2 { "Sites" }
        table id="sites" {
            thead { tr {
                th { "site" } th { "last push" } th { "fresh until" } th { "state" } th { "offers" } th { "" }
            } }
            tbody {
                @for site in sites {
                    tr.site-row {
                        td.site { (site.site) }
                        td { (site.received_at.format("%Y-%m-%d %H:%M:%SZ").to_string()) }
                        td { (site.expires.format("%Y-%m-%d %H:%M:%SZ").to_string()) }
                        @if site.fresh {
                            td.fresh { "fresh" }
                        } @else {
                            td.stale { "stale for " (now.signed_duration_since(site.expires).num_minutes()) " min" }
                        }
                        td { (site.offers) }
                        td { a href={"?site=" (super::usage::query_escape(&site.site))} { "site page" } }
                    }
                }
            }
        }
    }
}
