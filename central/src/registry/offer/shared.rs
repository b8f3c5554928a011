//! Offers of GPUs that are shared (MIG slices, time-sliced replicas): `min_gpus` counts whole
//! physical GPUs, slices have their own filter, and each offer says what a job gets.

use accelfed_schemas::glue::sample;
use accelfed_schemas::glue::{AcceleratorEnvironment, ExecutionEnvironment, Service, SiteSnapshot};
use accelfed_schemas::gpu::{
    Capacity, GpuCount, GpuModel, GpuSpec, Sharing as Held, Virtualization,
};
use accelfed_schemas::names::{LocalId, Text};
use accelfed_schemas::offer::{Filter, Sharing};

use super::tests::offers_of;

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
