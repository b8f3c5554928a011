//! The page itself, answering three questions in order: where are GPUs free now, who used them,
//! what sat idle; then the offers the form selects and each site's freshness. A form naming a
//! site or a VO makes it that site's or that VO's page. Pure: data in, HTML out.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::form::FormParams;
use super::free::FreeGpus;
use super::html::page;
use super::usage::UsageState;
use super::{capacity_view, free_view, offers_view, usage_view};
use crate::registry::capacity::OverTime;
use crate::registry::index::SiteStatus;
use accelfed_schemas::offer::Offer;

/// What the page shows.
#[derive(Debug)]
pub struct PageData<'a> {
    pub params: &'a FormParams,
    pub problems: &'a [String],
    /// The first offers the form selects ([`super::top::MAX_OFFER_ROWS`] at most).
    pub offers: &'a [Offer],
    /// How many it selects.
    pub offer_count: usize,
    pub sites: &'a [SiteStatus],
    /// Free GPUs of every offer (the form's VO aside).
    pub free: &'a FreeGpus,
    /// The form's VO and what it can get under its quotas.
    pub vo_free: Option<(&'a str, &'a FreeGpus)>,
    pub usage: &'a UsageState,
    /// Capacity and occupancy over time, of the form's site or of the federation.
    pub capacity: &'a OverTime,
    pub now: DateTime<Utc>,
}

/// The page's heading: the federation's, a site's or a VO's.
fn heading(params: &FormParams) -> String {
    let given = |field: &Option<String>| {
        field
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    match (given(&params.site), given(&params.vo)) {
        (Some(site), Some(vo)) => format!("Site {site}, VO {vo}"),
        (Some(site), None) => format!("Site {site}"),
        (None, Some(vo)) => format!("VO {vo}"),
        (None, None) => "GPUs across the federation".to_owned(),
    }
}

/// The whole document.
pub fn render(data: &PageData<'_>) -> String {
    let title = heading(data.params);
    let body = html! {
        nav { a href="?" { "federation" } }
        h1 { (title) }
        (form(data.params))
        @for problem in data.problems { p.problem { (problem) } }
        (free_view::render(data.free, data.vo_free))
        (capacity_view::render(data.capacity, data.params.site.as_deref().map(str::trim).filter(|s| !s.is_empty())))
        (usage_view::render(data.usage))
        (offers_view::offers(data.offers, data.offer_count))
        (offers_view::sites(data.sites, data.now))
        p.muted { "Generated " (data.now.format("%Y-%m-%d %H:%M:%SZ").to_string()) "." }
    };
    page(&format!("accelfed: {title}"), body).into_string()
}

fn input(name: &str, label: &str, value: &Option<String>) -> Markup {
    html! {
        label { (label) input name=(name) id=(name) value=(value.as_deref().unwrap_or_default()); }
    }
}

fn form(params: &FormParams) -> Markup {
    let fresh = params.fresh.as_deref().is_some_and(|v| !v.is_empty());
    html! {
        form method="get" action="" id="filters" {
            (input("model", "GPU model", &params.model))
            (input("vendor", "vendor", &params.vendor))
            (input("min_gpus", "min whole GPUs each", &params.min_gpus))
            (input("min_slices", "min slices each", &params.min_slices))
            (input("mig_profile", "MIG profile", &params.mig_profile))
            (input("min_memory_mb", "min GPU memory (MB)", &params.min_memory_mb))
            (input("compute_capability", "min compute capability", &params.compute_capability))
            (input("sharing", "sharing", &params.sharing))
            (input("vo", "VO", &params.vo))
            (input("site", "site", &params.site))
            (input("min_free", "min free GPUs (physical)", &params.min_free))
            label { "fresh only" input type="checkbox" name="fresh" id="fresh" checked[fresh]; }
            button type="submit" { "Search" }
        }
    }
}

#[cfg(test)]
mod tests;
