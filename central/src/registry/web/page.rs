//! The page itself: the filter form, the offers it selects, each site's freshness, and the
//! accounting chart. Pure: data in, HTML out; every name goes through [`escape`].

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::form::FormParams;
use super::html::{escape, page};
use super::top::{MAX_OFFER_ROWS, MAX_VOS_SHOWN};
use crate::registry::index::SiteStatus;
use accelfed_schemas::offer::Offer;

/// The accounting part of the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Charts {
    /// `accelfed serve` runs without an accounting repository.
    NoRepository,
    /// The repository could not be read (the reason, for the page).
    Unavailable(String),
    /// SVG charts, each with its heading.
    Svg(Vec<(String, String)>),
}

/// What the page shows.
#[derive(Debug)]
pub struct PageData<'a> {
    pub params: &'a FormParams,
    pub problems: &'a [String],
    pub offers: &'a [Offer],
    pub sites: &'a [SiteStatus],
    pub charts: &'a Charts,
    pub now: DateTime<Utc>,
}

/// The whole document.
pub fn render(data: &PageData<'_>) -> String {
    let mut body = String::new();
    body.push_str("<h1>GPUs across the federation</h1>\n");
    form(&mut body, data.params);
    for problem in data.problems {
        let _ = writeln!(body, "<p class=\"problem\">{}</p>", escape(problem));
    }
    offers(&mut body, data.offers);
    sites(&mut body, data.sites, data.now);
    charts(&mut body, data.charts);
    page("accelfed: GPUs across the federation", &body)
}

fn input(out: &mut String, name: &str, label: &str, value: &Option<String>) {
    let _ = write!(
        out,
        "<label>{label}<input name=\"{name}\" id=\"{name}\" value=\"{}\"></label>",
        escape(value.as_deref().unwrap_or_default())
    );
}

fn form(out: &mut String, params: &FormParams) {
    out.push_str("<form method=\"get\" action=\"\" id=\"filters\">");
    input(out, "model", "GPU model", &params.model);
    input(out, "vendor", "vendor", &params.vendor);
    input(out, "min_gpus", "min whole GPUs each", &params.min_gpus);
    input(out, "min_slices", "min slices each", &params.min_slices);
    input(out, "mig_profile", "MIG profile", &params.mig_profile);
    input(
        out,
        "min_memory_mb",
        "min GPU memory (MB)",
        &params.min_memory_mb,
    );
    input(
        out,
        "compute_capability",
        "min compute capability",
        &params.compute_capability,
    );
    input(out, "sharing", "sharing", &params.sharing);
    input(out, "vo", "VO", &params.vo);
    input(out, "site", "site", &params.site);
    input(
        out,
        "min_free",
        "min free GPUs (physical)",
        &params.min_free,
    );
    let checked = if params.fresh.as_deref().is_some_and(|v| !v.is_empty()) {
        " checked"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "<label>fresh only<input type=\"checkbox\" name=\"fresh\" id=\"fresh\"{checked}></label>\
         <button type=\"submit\">Search</button></form>"
    );
}

fn offers(out: &mut String, offers: &[Offer]) {
    let _ = writeln!(
        out,
        "<h2>Offers</h2>\n<p id=\"offer-count\">{} offers</p>",
        offers.len()
    );
    out.push_str(
        "<table id=\"offers\"><thead><tr><th>site</th><th>kind</th><th>flavor / node type</th>\
         <th>GPUs each</th><th>what one gets</th><th>model</th><th>memory (MB)</th><th>sharing</th>\
         <th>free / total GPUs (slots)</th><th>VOs</th><th>information</th></tr></thead><tbody>\n",
    );
    // A bounded page (super::top): the first offers, and a line for the rest.
    for offer in offers.iter().take(MAX_OFFER_ROWS) {
        // Physical GPUs, with the slots beside them where a slot is part of a GPU.
        let capacity = match (offer.free_physical, offer.total_physical) {
            (Some(free), Some(total)) => format!("{free} / {total}"),
            _ => "unknown".to_owned(),
        };
        let capacity = match (offer.slot_share.is_some(), offer.free, offer.total) {
            (true, Some(free), Some(total)) => {
                format!("{capacity} ({free} / {total} slots)")
            }
            _ => capacity,
        };
        let (class, state) = if offer.fresh {
            ("fresh", "fresh")
        } else {
            ("stale", "stale")
        };
        let _ = writeln!(
            out,
            "<tr class=\"offer\"><td class=\"site\">{}</td><td>{}</td><td title=\"{}\">{}</td>\
             <td>{}</td><td class=\"gets\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{capacity}</td>\
             <td>{}</td><td class=\"{class}\">{state}</td></tr>",
            escape(&offer.site),
            offer.service_kind.as_str(),
            escape(&offer.resource_id),
            escape(&offer.resource_name),
            offer.gpus_each,
            escape(&offer.gets),
            escape(&offer.model),
            offer.memory_mb.map(|m| m.to_string()).unwrap_or_default(),
            escape(&offer.sharing),
            escape(&vo_list(&offer.vos)),
        );
    }
    out.push_str("</tbody></table>\n");
    if offers.len() > MAX_OFFER_ROWS {
        let _ = writeln!(
            out,
            "<p id=\"offers-more\">The first {MAX_OFFER_ROWS} are shown, {} more are selected: \
             narrow the filter, or page through them all with the API (/registry/v1/offers).</p>",
            offers.len() - MAX_OFFER_ROWS
        );
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
        let _ = write!(shown, " and {} more", vos.len() - MAX_VOS_SHOWN);
    }
    shown
}

fn sites(out: &mut String, sites: &[SiteStatus], now: DateTime<Utc>) {
    out.push_str(
        "<h2>Sites</h2>\n<table id=\"sites\"><thead><tr><th>site</th><th>last push</th>\
         <th>fresh until</th><th>state</th><th>offers</th></tr></thead><tbody>\n",
    );
    for site in sites {
        let state = if site.fresh {
            "<td class=\"fresh\">fresh</td>".to_owned()
        } else {
            let ago = now.signed_duration_since(site.expires).num_minutes();
            format!("<td class=\"stale\">stale for {ago} min</td>")
        };
        let _ = writeln!(
            out,
            "<tr class=\"site-row\"><td class=\"site\">{}</td><td>{}</td><td>{}</td>{state}<td>{}</td></tr>",
            escape(&site.site),
            site.received_at.format("%Y-%m-%d %H:%M:%SZ"),
            site.expires.format("%Y-%m-%d %H:%M:%SZ"),
            site.offers,
        );
    }
    out.push_str("</tbody></table>\n");
}

fn charts(out: &mut String, charts: &Charts) {
    out.push_str("<h2>GPU-hours per VO</h2>\n");
    match charts {
        Charts::NoRepository => {
            out.push_str("<p>No accounting repository is configured.</p>\n");
        }
        Charts::Unavailable(reason) => {
            let _ = writeln!(
                out,
                "<p class=\"problem\">The accounting repository could not be read: {}</p>",
                escape(reason)
            );
        }
        Charts::Svg(charts) if charts.is_empty() => {
            out.push_str("<p>No usage recorded yet.</p>\n");
        }
        Charts::Svg(charts) => {
            for (heading, svg) in charts {
                // The SVG comes from accelfed's own renderer, which escapes every label.
                let _ = writeln!(
                    out,
                    "<figure class=\"chart\"><figcaption>{}</figcaption>{svg}</figure>",
                    escape(heading)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use accelfed_schemas::gpu::GpuCount;
    use accelfed_schemas::offer::ServiceKind;

    fn offer(site: &str, name: &str) -> Offer {
        let half = GpuCount::new(0.5).unwrap();
        Offer {
            site: site.into(),
            service_id: "svc".into(),
            service_kind: ServiceKind::Cloud,
            resource_id: "id\"><script>x</script>".into(),
            resource_name: name.into(),
            gpus_each: half,
            slots_each: half,
            physical_each: half,
            slot_share: None,
            gets: "0.5 x NVIDIA A100".into(),
            vendor: "NVIDIA".into(),
            model: "NVIDIA A100".into(),
            memory_mb: Some(40_960),
            compute_capability: None,
            sharing: "passthrough".into(),
            mig_profile: None,
            cpus: None,
            ram_mb: None,
            free: Some(GpuCount::whole(3)),
            total: Some(GpuCount::whole(8)),
            free_physical: Some(GpuCount::whole(3)),
            total_physical: Some(GpuCount::whole(8)),
            pool: "pool-1".into(),
            vos: vec!["atlas".into()],
            vo_free: Vec::new(),
            expires: DateTime::<Utc>::MAX_UTC,
            fresh: true,
        }
    }

    #[test]
    fn names_and_form_values_are_escaped_everywhere() {
        let params = FormParams {
            model: Some("\"><script>alert(1)</script>".into()),
            ..FormParams::default()
        };
        let offers = [offer(
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
        )];
        let sites = [SiteStatus {
            site: "<script>s</script>".into(),
            received_at: DateTime::<Utc>::UNIX_EPOCH,
            expires: DateTime::<Utc>::UNIX_EPOCH,
            fresh: false,
            offers: 1,
        }];
        let html = render(&PageData {
            params: &params,
            problems: &["<b>bad</b>".to_owned()],
            offers: &offers,
            sites: &sites,
            charts: &Charts::Unavailable("<i>down</i>".into()),
            now: DateTime::<Utc>::UNIX_EPOCH,
        });
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<b>bad"), "{html}");
        assert!(!html.contains("<i>down"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("value=\"&quot;&gt;&lt;script&gt;"));
        assert!(html.contains("0.5"));
        assert!(html.contains("3 / 8"));
        assert!(html.contains("class=\"stale\">stale for 0 min"));
    }

    #[test]
    fn counts_print_as_the_table_prints_them() {
        let slices = Offer {
            gpus_each: GpuCount::ZERO,
            slot_share: Some("1/7".into()),
            free: Some(GpuCount::whole(36)),
            total: Some(GpuCount::whole(56)),
            free_physical: Some(GpuCount::new(36.0 / 7.0).unwrap()),
            ..offer("S", "h100-mig")
        };
        let html = render(&PageData {
            params: &FormParams::default(),
            problems: &[],
            offers: &[slices],
            sites: &[],
            charts: &Charts::NoRepository,
            now: DateTime::<Utc>::UNIX_EPOCH,
        });
        // Whole counts without a fraction, others to the thousandth, as `accelfed query` does.
        assert!(html.contains("<td>0</td>"), "{html}");
        assert!(
            html.contains("<td>5.143 / 8 (36 / 56 slots)</td>"),
            "{html}"
        );
    }
}
