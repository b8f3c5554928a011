//! "Where are GPUs free now", drawn: a card per model with the federation's free and total
//! physical GPUs (fresh sites; stale ones apart), what a chosen VO can get under its quotas, and
//! each site's pools.

use maud::{Markup, display, html};

use accelfed_schemas::gpu::GpuCount;

use super::free::{ByModel, FreeGpus, ModelCount};

const FREE: &str = "#2da44e";
/// Model cards shown; the rest are counted in a line.
const MAX_MODEL_CARDS: usize = 40;
/// Rows of the per-site table (one per site and model).
const MAX_SITE_ROWS: usize = 500;
const BUSY: &str = "#d0d7de";

/// A bar of `free` out of `total` (no CSS: SVG attributes only, under the page's policy).
fn meter(count: &ModelCount, width: f64) -> Markup {
    let share = if count.total.get() > 0.0 {
        (count.free.get() / count.total.get()).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let free_width = format!("{:.1}", width * share);
    html! {
        svg class="meter" width=(width) height="8" viewBox={"0 0 " (width) " 8"} role="img"
            aria-label={(display(count.free)) " of " (display(count.total)) " free"} {
            rect width=(width) height="8" rx="3" fill=(BUSY) {}
            rect width=(free_width) height="8" rx="3" fill=(FREE) {}
        }
    }
}

fn cards(id: &str, counts: &ByModel) -> Markup {
    // The largest first, and a bounded number of them whatever model names sites send.
    let mut shown: Vec<(&String, &ModelCount)> = counts.iter().collect();
    shown.sort_by(|a, b| b.1.total.get().total_cmp(&a.1.total.get()));
    let hidden = shown.len().saturating_sub(MAX_MODEL_CARDS);
    shown.truncate(MAX_MODEL_CARDS);
    html! {
        div.cards id=(id) {
            @for (model, count) in shown {
                div.card data-model=(model) {
                    div.model { (model) }
                    div {
                        span.big.free { (display(count.free)) }
                        " free of "
                        span.total { (display(count.total)) }
                    }
                    (meter(count, 160.0))
                    div.muted { (count.pools) " pool" @if count.pools != 1 { "s" } }
                }
            }
        }
        @if hidden > 0 {
            p.muted { (hidden) " more models; narrow the form to a model or a site." }
        }
    }
}

fn sum(counts: &ByModel) -> (GpuCount, GpuCount) {
    counts
        .values()
        .fold((GpuCount::ZERO, GpuCount::ZERO), |(f, t), c| {
            (f + c.free, t + c.total)
        })
}

/// The section; `vo` is the chosen VO and what it can get, when the form names one.
pub fn render(free: &FreeGpus, vo: Option<(&str, &FreeGpus)>) -> Markup {
    let (free_all, total_all) = sum(&free.federation);
    html! {
        section id="free" {
            h2 { "Where are GPUs free now" }
            p {
                "Physical GPUs at sites whose information is fresh, each pool counted once: "
                strong id="free-all" { (display(free_all)) } " free of " strong id="total-all" { (display(total_all)) } "."
            }
            @if free.federation.is_empty() {
                p.muted { "No fresh site publishes free GPUs." }
            } @else {
                (cards("free-federation", &free.federation))
            }
            @if let Some((vo, answer)) = vo {
                h3 { "What VO " (vo) " can get under its quotas" }
                @if answer.federation.is_empty() {
                    p.muted id="free-vo-none" { "Nothing free for this VO at fresh sites." }
                } @else {
                    (cards("free-vo", &answer.federation))
                }
            }
            @if !free.stale.is_empty() {
                h3 { "At stale sites (not in the totals above)" }
                (cards("free-stale", &free.stale))
            }
            h3 { "Per site" }
            @let rows = free.sites.iter().map(|site| site.models.len()).sum::<usize>();
            table id="free-sites" {
                thead { tr { th { "site" } th { "model" } th.n { "free" } th.n { "total" } th { "state" } } }
                tbody {
                    @for (site, model, count) in free.sites.iter()
                        .flat_map(|site| site.models.iter().map(move |(m, c)| (site, m, c)))
                        .take(MAX_SITE_ROWS) {
                        {
                            tr.free-site {
                                td.site { (site.site) }
                                td { (model) }
                                td.n { (display(count.free)) }
                                td.n { (display(count.total)) }
                                @if site.fresh { td.fresh { "fresh" } } @else { td.stale { "stale" } }
                            }
                        }
                    }
                }
            }
            @if rows > MAX_SITE_ROWS {
                p.muted id="free-sites-more" {
                    "The first " (MAX_SITE_ROWS) " of " (rows) " rows are shown: narrow the form \
                     to a model or a site."
                }
            }
        }
    }
}
