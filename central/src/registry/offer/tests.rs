use chrono::{TimeZone, Utc};

use crate::registry::test_support::example_site;
use accelfed_schemas::glue::SiteSnapshot;
use accelfed_schemas::glue::from_json;
use accelfed_schemas::glue::sample;
use accelfed_schemas::glue::{AcceleratorEnvironment, ExecutionEnvironment, Service};
use accelfed_schemas::gpu::{
    Capacity, GpuCount, GpuModel, GpuSpec, Sharing as Held, Virtualization,
};
use accelfed_schemas::names::{LocalId, Text};
use accelfed_schemas::offer::{Filter, Offer, ServiceKind, Sharing, offers};
use accelfed_schemas::render::json;

/// The offers of a snapshot as the registry sees them: rendered, then read back.
fn offers_of(snapshot: &SiteSnapshot) -> Vec<Offer> {
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

/// A node type of `nodes` nodes, each with `physical` GPUs of `model` cut into `slots` units of
/// `sharing`, `used` of them in use over the type.
fn shared_node_type(
    id: &str,
    model: &str,
    virtualization: Virtualization,
    sharing: Held,
    (nodes, physical, slots, used): (u32, u32, u32, u32),
) -> ExecutionEnvironment {
    let mut gpu = GpuSpec::new(Text::new("NVIDIA").unwrap(), GpuModel::new(model).unwrap());
    gpu.virtualization = virtualization;
    if let Held::Mig { profile, .. } = &sharing {
        gpu.mig_profile = Some(profile.clone());
    }
    gpu.sharing = sharing;
    ExecutionEnvironment {
        local_id: LocalId::new(id).unwrap(),
        name: Some(Text::new(id).unwrap()),
        platform: Text::new("amd64").unwrap(),
        total_instances: nodes,
        used_instances: 0,
        unavailable_instances: 0,
        physical_cpus: None,
        logical_cpus: None,
        main_memory: None,
        os_family: Text::new("linux").unwrap(),
        os_name: None,
        os_version: None,
        accelerators: vec![AcceleratorEnvironment {
            local_id: LocalId::new("gpu").unwrap(),
            gpu,
            physical_per_instance: GpuCount::whole(physical),
            logical_per_instance: GpuCount::whole(slots),
            capacity: Capacity::from_usage(
                GpuCount::whole(nodes * slots),
                GpuCount::whole(used),
                GpuCount::ZERO,
            )
            .unwrap(),
        }],
    }
}

/// The sample with an H100 node cut into 56 1g.10gb MIG slices and a T4 node time-sliced into
/// 4 replicas per GPU, both in the batch service's partition.
fn sample_with_shared_nodes() -> SiteSnapshot {
    let mut snapshot = sample::snapshot("S");
    let Service::Computing(batch) = &mut snapshot.services[0] else {
        panic!("the sample's first service is the batch one");
    };
    let mig = Held::Mig {
        profile: Text::new("1g.10gb").unwrap(),
        slices: 1,
        of: 7,
    };
    batch.manager.environments.push(shared_node_type(
        "h100-mig",
        "NVIDIA H100 80GB HBM3",
        Virtualization::Mig,
        mig,
        (1, 8, 56, 42),
    ));
    batch.manager.environments.push(shared_node_type(
        "t4-shared",
        "Tesla T4",
        Virtualization::TimeSlicing,
        Held::TimeSlicing { replicas: 4 },
        (2, 2, 8, 4),
    ));
    for id in ["h100-mig", "t4-shared"] {
        batch.shares[0].environments.push(LocalId::new(id).unwrap());
    }
    snapshot
}

#[test]
fn min_gpus_counts_whole_gpus_and_slices_have_their_own_filter() {
    let offers = offers_of(&sample_with_shared_nodes());
    let names = |filter: Filter| -> Vec<String> {
        offers
            .iter()
            .filter(|o| filter.matches(o))
            .map(|o| o.resource_name.clone())
            .collect()
    };
    // 56 slices on 8 H100s, 8 replicas on 2 T4s per node: neither gives a job a whole GPU.
    let four = Filter {
        min_gpus: Some(GpuCount::whole(4)),
        ..Filter::default()
    };
    assert_eq!(names(four), ["A100 nodes"]);
    let slices = Filter {
        min_slices: Some(GpuCount::whole(8)),
        ..Filter::default()
    };
    assert_eq!(names(slices), ["h100-mig", "t4-shared"]);
    let profile = Filter {
        sharing: Some(Sharing::Mig),
        mig_profile: Some("1G.10GB".into()),
        ..Filter::default()
    };
    assert_eq!(names(profile), ["h100-mig"]);
    let h100 = offers
        .iter()
        .find(|o| o.resource_name == "h100-mig")
        .unwrap();
    assert_eq!(
        h100.gets,
        "1g.10gb slice of NVIDIA H100 80GB HBM3, 7 per GPU, 56 slices on 8 GPUs"
    );
    let n = GpuCount::whole;
    assert_eq!(
        (h100.gpus_each, h100.slots_each, h100.physical_each),
        (n(0), n(56), n(8))
    );
    assert_eq!(h100.slot_share.as_deref(), Some("1/7"));
    // 14 of 56 slices are free: 2 GPUs' worth.
    assert_eq!((h100.free, h100.free_physical), (Some(n(14)), Some(n(2))));
    assert_eq!(h100.total_physical, Some(n(8)));
    let t4 = offers
        .iter()
        .find(|o| o.resource_name == "t4-shared")
        .unwrap();
    assert_eq!(
        t4.gets,
        "time-slicing replica of Tesla T4, 4 per GPU, 8 replicas on 2 GPUs"
    );
    assert_eq!(t4.total_physical, Some(n(4)));
    let whole = offers
        .iter()
        .find(|o| o.resource_name == "A100 nodes")
        .unwrap();
    assert_eq!(whole.gets, "4 x NVIDIA A100-SXM4-80GB");
    assert_eq!(whole.slot_share, None);
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
