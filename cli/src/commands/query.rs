//! `accelfed query`: GPU offers across the federation, from the registry's HTTPS API, as a table or
//! JSON. The filters are the registry's own ([`Filter`]), sent as query parameters.

use std::io::Write;

use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::offer::{Filter, Offer};

use crate::args::{QueryArgs, QueryFormat};
use crate::exit::Outcome;

/// The filter the flags describe.
pub fn filter(args: &QueryArgs) -> Filter {
    Filter {
        vendor: args.vendor.clone(),
        model: args.model.clone(),
        min_gpus: args.min_gpus,
        min_slices: args.min_slices,
        mig_profile: args.mig_profile.clone(),
        min_memory_mb: args.min_memory_mb,
        compute_capability: args.compute_capability.clone(),
        sharing: args.sharing,
        vo: args.vo.clone(),
        site: args.site.clone(),
        min_free: args.min_free,
        fresh: args.fresh,
    }
}

/// The filter as query parameters (the API's names are the filter's fields).
fn parameters(filter: &Filter) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut text = |name, value: &Option<String>| {
        if let Some(value) = value {
            out.push((name, value.clone()));
        }
    };
    text("vendor", &filter.vendor);
    text("model", &filter.model);
    text("compute_capability", &filter.compute_capability);
    text("vo", &filter.vo);
    text("site", &filter.site);
    text("mig_profile", &filter.mig_profile);
    // Counts as the model writes them (at most three decimals), which the API reads back.
    if let Some(value) = filter.min_gpus {
        out.push(("min_gpus", value.to_string()));
    }
    if let Some(value) = filter.min_slices {
        out.push(("min_slices", value.to_string()));
    }
    if let Some(value) = filter.min_memory_mb {
        out.push(("min_memory_mb", value.to_string()));
    }
    if let Some(value) = filter.sharing {
        out.push(("sharing", value.as_str().to_owned()));
    }
    if let Some(value) = filter.min_free {
        out.push(("min_free", value.to_string()));
    }
    if filter.fresh {
        out.push(("fresh", "true".to_owned()));
    }
    out
}

pub fn run(args: &QueryArgs) -> Outcome {
    let filter = filter(args);
    let trust = match accelfed_net::Trust::optional("--ca", args.ca.as_deref()) {
        Ok(trust) => trust,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Config;
        }
    };
    let deadline = std::time::Duration::from_secs(args.timeout_s);
    let runtime = match super::runtime() {
        Ok(runtime) => runtime,
        Err(outcome) => return outcome,
    };
    if let Some(url) = &args.ldap {
        let query = accelfed_net::within(
            url,
            deadline,
            accelfed_central::ldap_query(url, &args.ldap_base, &filter, &trust),
        );
        return match runtime.block_on(query) {
            Ok(Ok(offers)) => print(&offers, args.format),
            Ok(Err(err)) => {
                tracing::error!("{err}");
                Outcome::Partial
            }
            Err(timed_out) => {
                tracing::error!("LDAP server {timed_out}");
                Outcome::Partial
            }
        };
    }
    let urls = match super::query_registry::registry_urls(&args.url) {
        Ok(urls) => urls,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Config;
        }
    };
    let offers = runtime.block_on(async {
        let settings = accelfed_net::ClientSettings::new(trust, deadline);
        super::query_registry::from_first_answering(&settings, &urls, &parameters(&filter)).await
    });
    let offers = match offers {
        Ok(offers) => offers,
        Err(err) => {
            tracing::error!("{err}");
            return Outcome::Partial;
        }
    };
    print(&offers, args.format)
}

/// Writes `offers` to stdout in `format`.
fn print(offers: &[Offer], format: QueryFormat) -> Outcome {
    let text = match format {
        QueryFormat::Json => serde_json::to_string_pretty(offers)
            .map(|json| json + "\n")
            .unwrap_or_default(),
        QueryFormat::Table => table(offers),
    };
    if std::io::stdout().write_all(text.as_bytes()).is_err() {
        return Outcome::Partial;
    }
    Outcome::Ok
}

/// Free and total physical GPUs, with the slots beside them where a slot is part of a GPU:
/// `2/8 (14/56 slots)`.
fn capacity(offer: &Offer) -> String {
    let count = |value: Option<GpuCount>| value.map_or("-".to_owned(), |count| count.to_string());
    let gpus = format!(
        "{}/{}",
        count(offer.free_physical.or(offer.free)),
        count(offer.total_physical.or(offer.total))
    );
    if offer.slot_share.is_none() {
        return gpus;
    }
    format!(
        "{gpus} ({}/{} slots)",
        count(offer.free),
        count(offer.total)
    )
}

/// Offers as aligned columns, one per line, stale ones marked.
pub fn table(offers: &[Offer]) -> String {
    let header = [
        "SITE",
        "KIND",
        "RESOURCE",
        "GPUS",
        "OFFERS",
        "MODEL",
        "MEMORY_MB",
        "SHARING",
        "FREE/TOTAL_GPUS",
        "VOS",
        "FRESH",
    ];
    let rows: Vec<[String; 11]> = offers
        .iter()
        .map(|offer| {
            [
                offer.site.clone(),
                offer.service_kind.as_str().to_owned(),
                offer.resource_name.clone(),
                offer.gpus_each.to_string(),
                offer.gets.clone(),
                offer.model.clone(),
                offer.memory_mb.map_or("-".to_owned(), |m| m.to_string()),
                offer.sharing.clone(),
                capacity(offer),
                offer.vos.join(","),
                if offer.fresh { "yes" } else { "STALE" }.to_owned(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    };
    line(&header.map(str::to_owned));
    for row in &rows {
        line(row);
    }
    out
}
