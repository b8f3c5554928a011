//! Where GPUs are free now: physical GPUs per model, each pool counted once.
//!
//! Every offer repeats the free and total counts of the pool it draws on ([`Offer::pool`]): two
//! flavors of one site's 40 L40S both say "15 of 40". Summing offers would say 30 of 80; these
//! totals take each (site, pool) once. Stale sites' pools are added up apart, never into the
//! federation's totals: their counts are old news.

use std::collections::BTreeMap;

use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::offer::Offer;

/// Free and total physical GPUs of one model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelCount {
    pub free: GpuCount,
    pub total: GpuCount,
    /// Pools added up.
    pub pools: usize,
}

/// Per model, by name.
pub type ByModel = BTreeMap<String, ModelCount>;

/// One site's pools per model, and whether its document is fresh.
#[derive(Debug, Clone, PartialEq)]
pub struct SiteCount {
    pub site: String,
    pub fresh: bool,
    pub models: ByModel,
}

/// The answer to "where are GPUs free now".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FreeGpus {
    /// Fresh sites, per model.
    pub federation: ByModel,
    /// Stale sites, per model: shown apart, not in `federation`.
    pub stale: ByModel,
    /// Each site, by name.
    pub sites: Vec<SiteCount>,
}

/// One pool: the largest counts its offers give (they give the same, except a VO's answer,
/// where each flavor says what the VO can get of it through its shares).
struct Pool {
    model: String,
    fresh: bool,
    free: GpuCount,
    total: GpuCount,
}

/// One offer as the totals read it, borrowed from the index (no copy of each offer).
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    pub offer: &'a Offer,
    pub fresh: bool,
    /// Its free physical GPUs: the offer's own, or in a VO's answer what the VO can get.
    pub free_physical: Option<GpuCount>,
}

impl<'a> From<&'a Offer> for Seen<'a> {
    fn from(offer: &'a Offer) -> Self {
        Seen {
            offer,
            fresh: offer.fresh,
            free_physical: offer.free_physical,
        }
    }
}

/// The totals of `offers`. Offers that publish no physical counts have no capacity to add and are
/// left out.
pub fn free_gpus<'a>(offers: impl IntoIterator<Item = Seen<'a>>) -> FreeGpus {
    let mut pools: BTreeMap<(&str, &str), Pool> = BTreeMap::new();
    for seen in offers {
        let offer = seen.offer;
        let (Some(free), Some(total)) = (seen.free_physical, offer.total_physical) else {
            continue;
        };
        // An offer from before pools were published is a pool of its own.
        let pool = if offer.pool.is_empty() {
            offer.resource_id.as_str()
        } else {
            offer.pool.as_str()
        };
        let entry = pools
            .entry((offer.site.as_str(), pool))
            .or_insert_with(|| Pool {
                model: offer.model.clone(),
                fresh: seen.fresh,
                free,
                total,
            });
        entry.free = if free > entry.free { free } else { entry.free };
        entry.total = if total > entry.total {
            total
        } else {
            entry.total
        };
        entry.fresh &= seen.fresh;
    }
    let mut out = FreeGpus::default();
    let mut sites: BTreeMap<&str, SiteCount> = BTreeMap::new();
    for ((site, _), pool) in &pools {
        let whole = if pool.fresh {
            &mut out.federation
        } else {
            &mut out.stale
        };
        add(whole, pool);
        let site = sites.entry(site).or_insert_with(|| SiteCount {
            site: (*site).to_owned(),
            fresh: true,
            models: ByModel::new(),
        });
        site.fresh &= pool.fresh;
        add(&mut site.models, pool);
    }
    out.sites = sites.into_values().collect();
    out
}

fn add(counts: &mut ByModel, pool: &Pool) {
    let count = counts.entry(pool.model.clone()).or_default();
    count.free = count.free + pool.free;
    count.total = count.total + pool.total;
    count.pools += 1;
}

#[cfg(test)]
mod tests {
    use super::*;
    use accelfed_schemas::offer::ServiceKind;
    use chrono::{DateTime, Utc};

    fn offer(site: &str, name: &str, pool: &str, model: &str, free: u32, total: u32) -> Offer {
        Offer {
            site: site.into(),
            service_id: "svc".into(),
            service_kind: ServiceKind::Cloud,
            resource_id: format!("{site}:{name}"),
            resource_name: name.into(),
            gpus_each: GpuCount::whole(1),
            slots_each: GpuCount::whole(1),
            physical_each: GpuCount::whole(1),
            slot_share: None,
            gets: String::new(),
            vendor: "NVIDIA".into(),
            model: model.into(),
            memory_mb: None,
            compute_capability: None,
            sharing: "passthrough".into(),
            mig_profile: None,
            cpus: None,
            ram_mb: None,
            free: Some(GpuCount::whole(free)),
            total: Some(GpuCount::whole(total)),
            free_physical: Some(GpuCount::whole(free)),
            total_physical: Some(GpuCount::whole(total)),
            pool: pool.into(),
            vos: Vec::new(),
            vo_free: Vec::new(),
            expires: DateTime::<Utc>::MAX_UTC,
            fresh: true,
        }
    }

    #[test]
    fn a_pool_shared_by_flavors_counts_once_and_stale_sites_stay_apart() {
        let offers = [
            offer("A", "l40s-x1", "p1", "L40S", 15, 40),
            offer("A", "l40s-x2", "p1", "L40S", 15, 40),
            offer("A", "l40s-x4", "p1", "L40S", 15, 40),
            offer("B", "l40s-x1", "p1", "L40S", 2, 8),
            offer("B", "h100-x8", "p2", "H100", 8, 16),
            Offer {
                fresh: false,
                ..offer("C", "h100-x1", "p1", "H100", 30, 64)
            },
        ];
        let free = free_gpus(offers.iter().map(Seen::from));
        let l40s = &free.federation["L40S"];
        assert_eq!(
            (l40s.free, l40s.total, l40s.pools),
            (GpuCount::whole(17), GpuCount::whole(48), 2)
        );
        let h100 = &free.federation["H100"];
        assert_eq!(
            (h100.free, h100.total),
            (GpuCount::whole(8), GpuCount::whole(16))
        );
        assert_eq!(free.stale["H100"].free, GpuCount::whole(30));
        assert!(!free.stale.contains_key("L40S"));
        let names: Vec<(&str, bool)> = free
            .sites
            .iter()
            .map(|s| (s.site.as_str(), s.fresh))
            .collect();
        assert_eq!(names, [("A", true), ("B", true), ("C", false)]);
        assert_eq!(free.sites[0].models["L40S"].free, GpuCount::whole(15));
    }

    #[test]
    fn offers_without_counts_add_nothing() {
        let unknown = Offer {
            free_physical: None,
            ..offer("A", "x", "p", "A100", 1, 1)
        };
        assert_eq!(free_gpus([Seen::from(&unknown)]), FreeGpus::default());
    }
}
