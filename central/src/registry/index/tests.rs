//! The index's posting lists must select exactly what a scan of every offer selects, in the same
//! order: the scan below is the registry's query as it was before the lists, kept as the reference.

use chrono::TimeZone;

use super::*;
use crate::registry::test_support::example_site;
use accelfed_schemas::glue::{Service, SiteSnapshot, from_json, sample};
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::names::{LocalId, Text};
use accelfed_schemas::render::json;

mod vo_quota;

fn view(name: &str, snapshot: &SiteSnapshot, received_at: DateTime<Utc>) -> SiteView {
    let parsed = from_json::parse(&json::render(snapshot)).unwrap();
    SiteView::new(name.to_owned(), received_at, parsed)
}

/// The sample site with its cloud's flavor repeated: 1, 2, 4 or 8 GPUs of three models.
fn many_flavors(name: &str) -> SiteSnapshot {
    let mut snapshot = sample::snapshot(name);
    let models = [
        "NVIDIA A100-SXM4-80GB",
        "NVIDIA H100 80GB HBM3",
        "NVIDIA L40S",
    ];
    for service in &mut snapshot.services {
        if let Service::Cloud(cloud) = service {
            let base = cloud.instance_types[0].clone();
            cloud.instance_types = (0..12)
                .map(|j| {
                    let mut flavor = base.clone();
                    let id = format!("g{j}.x{}", 1 << (j % 4));
                    flavor.local_id = LocalId::new(id.clone()).unwrap();
                    flavor.name = Text::new(id).unwrap();
                    // Equal sizes in pairs, so the broker's tie-break by name is exercised.
                    flavor.cpu = 8 * (1 << ((j / 2) % 4));
                    if let Some(accelerator) = &mut flavor.accelerator {
                        accelerator.count = GpuCount::whole(1 << (j % 4));
                        accelerator.gpu.model = GpuModel::new(models[j % 3]).unwrap();
                    }
                    flavor
                })
                .collect();
        }
    }
    snapshot
}

fn federation() -> Index {
    let received = Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap();
    let example = example_site();
    let example_name = example.domain.name.to_string();
    let mut index = Index::default();
    // Pushed out of order, one site twice: the index keeps the latest, sorted by name.
    for (name, snapshot) in [
        ("S-2", many_flavors("S-2")),
        ("S-1", sample::snapshot("S-1")),
        ("S-3", many_flavors("S-3")),
        (example_name.as_str(), example.clone()),
        // Replacements last, so the federation's lists are the replaced ones, not rebuilt.
        ("S-1", many_flavors("S-1")),
        ("S-3", sample::snapshot("S-3")),
    ] {
        index = index.with(view(name, &snapshot, received));
    }
    index
}

/// The query as a scan of every offer of every site (the registry's code before posting lists).
fn scan(index: &Index, filter: &Filter, now: DateTime<Utc>) -> Vec<Offer> {
    let wanted = filter.model.as_deref().map(tokens);
    let rest = Filter {
        model: None,
        fresh: false,
        ..filter.clone()
    };
    let mut out = Vec::new();
    for site in index.sites() {
        if filter
            .site
            .as_deref()
            .is_some_and(|name| !site.site.eq_ignore_ascii_case(name))
        {
            continue;
        }
        for offer in &site.offers {
            let have = tokens(&offer.model);
            if let Some(wanted) = &wanted
                && (wanted.is_empty() || !wanted.iter().all(|token| have.contains(token)))
            {
                continue;
            }
            let fresh = now <= offer.expires;
            // For one VO: the offer as that VO sees it, left out where one instance exceeds
            // what the VO can get.
            let seen = match filter.vo.as_deref() {
                Some(vo) if !offer.fits_vo(vo) => continue,
                Some(vo) => offer.for_vo(vo),
                None => offer.clone(),
            };
            if (filter.fresh && !fresh) || !rest.matches(&seen) {
                continue;
            }
            out.push(Offer { fresh, ..seen });
        }
    }
    out
}

fn scan_broker(index: &Index, request: &BrokerRequest, now: DateTime<Utc>) -> Vec<Offer> {
    let filter = Filter {
        vendor: request.gpu_vendor.clone(),
        model: request.gpu_model.clone(),
        min_gpus: GpuCount::new(request.num_gpus).ok(),
        vo: request.vo.clone(),
        fresh: request.fresh,
        ..Filter::default()
    };
    let mut best: Vec<Offer> = Vec::new();
    for offer in scan(index, &filter, now) {
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

const MODELS: [Option<&str>; 10] = [
    None,
    Some("A100"),
    Some("a100-sxm4"),
    Some("Tesla A100"),
    Some("H100"),
    Some("l40s"),
    Some("NVIDIA"),
    Some("B200"),
    Some("--"),
    // More words than the posting lists intersect (the index checks the rest itself).
    Some("a100 sxm4 a100 sxm4 a100 sxm4 a100 sxm4 a100"),
];
const VOS: [Option<&str>; 5] = [
    None,
    Some("atlas"),
    Some("BIOMED"),
    Some("cms"),
    Some("nope"),
];
const SITES: [Option<&str>; 4] = [None, Some("S-1"), Some("s-3"), Some("nowhere")];

#[test]
fn posting_lists_select_what_a_scan_selects() {
    let index = federation();
    assert_eq!(
        index
            .sites()
            .iter()
            .map(|s| s.site.as_str())
            .collect::<Vec<_>>()
            .len(),
        4
    );
    let times = [
        Utc.with_ymd_and_hms(2026, 11, 1, 12, 30, 0).unwrap(),
        Utc.with_ymd_and_hms(2026, 11, 3, 0, 0, 0).unwrap(),
    ];
    let mut compared = 0;
    let mut nonempty = 0;
    for now in times {
        for model in MODELS {
            for vo in VOS {
                for site in SITES {
                    // GPU counts between the lists' powers of two, on them, and past them all.
                    for min_gpus in [
                        None,
                        Some(0.5),
                        Some(1.0),
                        Some(3.0),
                        Some(4.0),
                        Some(300.0),
                    ] {
                        for fresh in [false, true] {
                            let filter = Filter {
                                model: model.map(str::to_owned),
                                vo: vo.map(str::to_owned),
                                site: site.map(str::to_owned),
                                min_gpus: min_gpus.map(|n| GpuCount::new(n).unwrap()),
                                fresh,
                                ..Filter::default()
                            };
                            let expected = scan(&index, &filter, now);
                            assert_eq!(index.offers(&filter, now), expected, "{filter:?} at {now}");
                            compared += 1;
                            nonempty += usize::from(!expected.is_empty());
                        }
                    }
                }
            }
        }
    }
    // The comparison is only worth something if many filters select offers (about one in six:
    // the sample's MIG node type has no whole GPUs, so every `min_gpus` leaves it out).
    assert!(nonempty * 7 > compared, "{nonempty} of {compared}");
}

#[test]
fn the_broker_picks_what_a_scan_picks() {
    let index = federation();
    let now = Utc.with_ymd_and_hms(2026, 11, 1, 12, 30, 0).unwrap();
    let mut nonempty = 0;
    for model in MODELS {
        for vo in VOS {
            for vendor in [None, Some("nvidia"), Some("amd")] {
                for num_gpus in [0.5, 1.0, 2.0, 3.0, 8.0] {
                    let request = BrokerRequest {
                        num_gpus,
                        gpu_vendor: vendor.map(str::to_owned),
                        gpu_model: model.map(str::to_owned),
                        vo: vo.map(str::to_owned),
                        fresh: false,
                    };
                    let expected = scan_broker(&index, &request, now);
                    assert_eq!(index.broker(&request, now), expected, "{request:?}");
                    nonempty += usize::from(!expected.is_empty());
                }
            }
        }
    }
    assert!(nonempty > 20, "{nonempty}");
}

#[test]
fn a_push_replaces_the_sites_view_and_keeps_the_order() {
    let received = Utc.with_ymd_and_hms(2026, 11, 1, 12, 0, 0).unwrap();
    let index = Index::default()
        .with(view("S-2", &sample::snapshot("S-2"), received))
        .with(view("S-1", &sample::snapshot("S-1"), received));
    let index = index.with(view("S-2", &many_flavors("S-2"), received));
    let names: Vec<_> = index.sites().iter().map(|s| s.site.as_str()).collect();
    assert_eq!(names, ["S-1", "S-2"]);
    // The federation's lists after replacing a site are those built from scratch.
    assert_eq!(index.federation, FederationPostings::build(index.sites()));
    let index = index.with(view("S-2", &sample::snapshot("S-2"), received));
    assert_eq!(index.federation, FederationPostings::build(index.sites()));
    let index = index.with(view("S-2", &many_flavors("S-2"), received));
    assert_eq!(index.sites()[1].offers.len(), 14);
    let only = Filter {
        site: Some("s-2".into()),
        ..Filter::default()
    };
    assert_eq!(index.offers(&only, received).len(), 14);
}

#[test]
fn the_answer_is_the_offers_serialised_by_serde() {
    #[derive(serde::Serialize)]
    struct Whole<'a> {
        generated_at: DateTime<Utc>,
        offers: &'a [Offer],
    }
    let index = federation();
    for now in [
        Utc.with_ymd_and_hms(2026, 11, 1, 12, 30, 0).unwrap(),
        Utc.with_ymd_and_hms(2026, 11, 3, 0, 0, 0).unwrap(),
    ] {
        let filter = Filter::default();
        let hits = index.select(&filter, now);
        let expected = serde_json::to_vec(&Whole {
            generated_at: now,
            offers: &index.offers(&filter, now),
        })
        .unwrap();
        assert_eq!(answer(now, &hits), expected);
    }
}

#[test]
fn kept_broker_answers_are_what_selecting_again_gives() {
    let index = federation();
    let expiries = index.offer_expiries.clone();
    assert!(!expiries.is_empty());
    let second = chrono::Duration::seconds(1);
    // Before, at and just after each expiry, then back in time (a clock that went back).
    let mut times = vec![expiries[0] - chrono::Duration::hours(1)];
    for &expiry in &expiries {
        times.extend([expiry - second, expiry, expiry + second]);
    }
    times.push(expiries[0] - second);
    let mut differed = 0;
    for fresh in [false, true] {
        let request = BrokerRequest {
            num_gpus: 2.0,
            gpu_model: Some("a100".into()),
            fresh,
            ..BrokerRequest::default()
        };
        let mut previous: Option<Vec<u8>> = None;
        for &now in &times {
            let expected = answer(now, &index.broker_select(&request, now));
            // Asked twice: selected, then kept.
            assert_eq!(
                index.broker_answer(&request, now),
                expected,
                "{request:?} at {now}"
            );
            assert_eq!(
                index.broker_answer(&request, now),
                expected,
                "{request:?} at {now}"
            );
            let offers = expected[expected.iter().position(|&b| b == b'[').unwrap()..].to_vec();
            differed += usize::from(previous.is_some_and(|p| p != offers));
            previous = Some(offers);
        }
    }
    // Only worth something if the offers changed with time.
    assert!(differed >= 2, "{differed}");
}
