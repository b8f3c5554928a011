use chrono::{TimeZone, Utc};

use crate::registry::test_support::example_site;
use accelfed_schemas::glue::SiteSnapshot;
use accelfed_schemas::glue::from_json;
use accelfed_schemas::glue::sample;
use accelfed_schemas::gpu::GpuCount;
use accelfed_schemas::offer::{Filter, Offer, ServiceKind, Sharing, offers};
use accelfed_schemas::render::json;

/// The offers of a snapshot as the registry sees them: rendered, then read back.
pub(super) fn offers_of(snapshot: &SiteSnapshot) -> Vec<Offer> {
    let parsed = from_json::parse(&json::render(snapshot)).unwrap();
    offers(&parsed.entities, &parsed.stamps)
}

#[test]
fn the_sample_has_one_flavor_and_two_node_types() {
    let offers = offers_of(&sample::snapshot("S"));
    let summary: Vec<_> = offers
        .iter()
        .map(|o| {
            (
                o.service_kind.as_str(),
                o.resource_name.as_str(),
                o.gpus_each,
                o.sharing.as_str(),
                o.free,
                o.total,
                o.vos.join(","),
            )
        })
        .collect();
    let n = GpuCount::whole;
    assert_eq!(
        summary,
        vec![
            (
                "batch",
                "A100 nodes",
                n(4),
                "none",
                Some(n(6)),
                Some(n(16)),
                "atlas,biomed".into()
            ),
            (
                "batch",
                "a100-mig",
                n(0),
                "mig",
                Some(n(3)),
                Some(n(4)),
                "atlas,biomed".into()
            ),
            (
                "cloud",
                "g1.a100x2",
                n(2),
                "passthrough",
                Some(n(5)),
                Some(n(8)),
                "atlas".into()
            ),
        ]
    );
    let flavor = &offers[2];
    assert_eq!(flavor.site, "S");
    assert_eq!(flavor.model, "NVIDIA A100-SXM4-80GB");
    assert_eq!(flavor.memory_mb, Some(81_920));
    assert_eq!(flavor.cpus, Some(16));
    assert_eq!(flavor.service_id, "urn:accelfed:S:service:cloud");
    assert_eq!(
        flavor.expires,
        Utc.with_ymd_and_hms(2026, 11, 1, 13, 0, 0).unwrap()
    );
}

#[test]
fn model_aliases_match_case_insensitively() {
    let offers = offers_of(&sample::snapshot("S"));
    for model in ["A100", "a100", "Tesla A100", "NVIDIA A100-SXM4-80GB"] {
        let filter = Filter {
            model: Some(model.into()),
            ..Filter::default()
        };
        assert_eq!(
            offers.iter().filter(|o| filter.matches(o)).count(),
            3,
            "{model}"
        );
    }
    let filter = Filter {
        model: Some("H100".into()),
        ..Filter::default()
    };
    assert!(!offers.iter().any(|o| filter.matches(o)));
}

#[test]
fn every_filter_field_selects() {
    let offers = offers_of(&sample::snapshot("S"));
    let names = |filter: Filter| -> Vec<String> {
        offers
            .iter()
            .filter(|o| filter.matches(o))
            .map(|o| o.resource_name.clone())
            .collect()
    };
    let all = Filter::default();
    assert_eq!(names(all.clone()).len(), 3);
    assert_eq!(
        names(Filter {
            sharing: Some(Sharing::Mig),
            ..all.clone()
        }),
        ["a100-mig"]
    );
    assert_eq!(
        names(Filter {
            vo: Some("BIOMED".into()),
            ..all.clone()
        }),
        ["A100 nodes", "a100-mig"]
    );
    assert_eq!(
        names(Filter {
            min_gpus: Some(GpuCount::whole(3)),
            vo: Some("atlas".into()),
            ..all.clone()
        }),
        // The MIG node type's 4 slices are not GPUs.
        ["A100 nodes"]
    );
    assert_eq!(
        names(Filter {
            min_memory_mb: Some(50_000),
            ..all.clone()
        }),
        ["A100 nodes", "g1.a100x2"]
    );
    assert_eq!(
        names(Filter {
            min_free: Some(GpuCount::new(5.5).unwrap()),
            ..all.clone()
        }),
        ["A100 nodes"]
    );
    assert_eq!(
        names(Filter {
            compute_capability: Some("8.0".into()),
            ..all.clone()
        })
        .len(),
        3
    );
    assert!(
        names(Filter {
            compute_capability: Some("9.0".into()),
            ..all.clone()
        })
        .is_empty()
    );
    assert_eq!(
        names(Filter {
            vendor: Some("nvidia".into()),
            ..all.clone()
        })
        .len(),
        3
    );
    assert!(
        names(Filter {
            vendor: Some("amd".into()),
            ..all.clone()
        })
        .is_empty()
    );
    assert!(
        names(Filter {
            site: Some("other".into()),
            ..all.clone()
        })
        .is_empty()
    );
}

#[test]
fn freshness_follows_creation_time_and_validity() {
    let offers = offers_of(&sample::snapshot("S"));
    let fresh_only = Filter {
        fresh: true,
        ..Filter::default()
    };
    let before = Utc.with_ymd_and_hms(2026, 11, 1, 12, 30, 0).unwrap();
    let after = Utc.with_ymd_and_hms(2026, 11, 1, 13, 0, 1).unwrap();
    assert!(
        offers
            .iter()
            .all(|o| fresh_only.matches(&o.clone().at(before)))
    );
    assert!(offers.iter().all(|o| !o.clone().at(after).fresh));
    assert!(
        !offers
            .iter()
            .any(|o| fresh_only.matches(&o.clone().at(after)))
    );
    assert!(
        offers
            .iter()
            .all(|o| Filter::default().matches(&o.clone().at(after)))
    );
}

#[test]
fn the_example_site_offers_its_flavors_to_the_projects_vos() {
    let snapshot = example_site();
    let offers = offers_of(&snapshot);
    let filter = Filter {
        model: Some("A100".into()),
        min_gpus: Some(GpuCount::whole(4)),
        vo: Some("atlas".into()),
        ..Filter::default()
    };
    let hits: Vec<(String, &str, GpuCount)> = offers
        .iter()
        .filter(|o| filter.matches(o))
        .map(|o| {
            (
                o.resource_name.clone(),
                o.service_kind.as_str(),
                o.gpus_each,
            )
        })
        .collect();
    assert!(!hits.is_empty(), "{offers:#?}");
    assert!(hits.iter().all(|(_, _, gpus)| *gpus >= GpuCount::whole(4)));
    // The 4-GPU flavor is atlas-only; biomed must not see it.
    let biomed = Filter {
        vo: Some("biomed".into()),
        ..filter.clone()
    };
    assert!(
        offers
            .iter()
            .filter(|o| biomed.matches(o))
            .all(|o| o.service_kind == ServiceKind::Batch)
    );
}

#[test]
fn sharing_modes_parse_from_their_names() {
    assert_eq!(
        "time-slicing".parse::<Sharing>().unwrap(),
        Sharing::TimeSlicing
    );
    assert_eq!("VGPU".parse::<Sharing>().unwrap(), Sharing::Vgpu);
    assert!(
        "shared"
            .parse::<Sharing>()
            .unwrap_err()
            .contains("passthrough")
    );
}

#[test]
fn a_flavor_reads_physical_counts_from_its_manager() {
    let offers = offers_of(&sample::snapshot("S"));
    let flavor = offers
        .iter()
        .find(|o| o.resource_name == "g1.a100x2")
        .unwrap();
    let n = GpuCount::whole;
    assert_eq!((flavor.gpus_each, flavor.physical_each), (n(2), n(2)));
    assert_eq!(
        (flavor.free_physical, flavor.total_physical),
        (Some(n(5)), Some(n(8)))
    );
}
