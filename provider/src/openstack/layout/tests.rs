use super::*;
use crate::openstack::capacity::tests::devices;

fn provider(
    uuid: &str,
    name: &str,
    parent: &str,
    total: u64,
    used: u64,
    traits: &[&str],
) -> (ResourceProvider, ProviderState) {
    let rp = ResourceProvider {
        uuid: uuid.into(),
        name: name.into(),
        parent_provider_uuid: Some(parent.into()),
        root_provider_uuid: Some("node".into()),
    };
    let state = ProviderState {
        inventories: [(
            "VGPU".to_owned(),
            Inventory {
                total,
                reserved: 0,
                allocation_ratio: 1.0,
            },
        )]
        .into(),
        usages: [("VGPU".to_owned(), used)].into(),
        traits: traits.iter().map(|t| (*t).to_owned()).collect(),
    };
    (rp, state)
}

fn physical(layout: &Layout) -> f64 {
    layout
        .capacities
        .iter()
        .map(|(spec, capacity, _)| capacity.total.get() * spec.sharing.physical_share())
        .sum()
}

#[test]
fn mig_backed_sriov_types_publish_the_instances_that_fit_the_gpu() {
    // NVIDIA's A100 40GB tables: A100-3-20C sits on a 3g.20gb instance, 3 of 7 slices, and
    // two fit one GPU. Seven functions enabled, one used: 2 slots of 3/7, 6/7 of the GPU.
    let providers: Vec<_> = (4..11)
        .map(|f: u8| {
            let name = format!("node_pci_0000_41_{:02x}_{}", f / 8, f % 8);
            provider(
                &name,
                &name,
                "node",
                1,
                u64::from(f == 4),
                &["CUSTOM_NVIDIA_A100_3_20C"],
            )
        })
        .collect();
    let mut said = Said::default();
    let layout = layout(
        &providers,
        &devices("[[openstack]]\nid = \"c\"\n"),
        &mut said,
    );
    assert!(said.warnings.is_empty(), "{:?}", said.warnings);
    assert_eq!(layout.capacities.len(), 1);
    let (spec, capacity, providers) = &layout.capacities[0];
    assert_eq!(spec.model.as_str(), "NVIDIA A100-PCIE-40GB");
    assert_eq!(
        (capacity.total, capacity.used, capacity.free),
        (GpuCount::whole(2), GpuCount::whole(1), GpuCount::whole(1))
    );
    assert_eq!(*providers, 7);
    assert!((physical(&layout) - 6.0 / 7.0).abs() < 1e-12);
}

#[test]
fn functions_nested_under_a_device_provider_are_that_gpu() {
    // Functions whose parent is the GPU's own provider (not the compute node): one GPU,
    // whatever their names say.
    let providers: Vec<_> = ["vf-a", "vf-b", "vf-c"]
        .iter()
        .map(|n| provider(n, n, "pf", 1, 1, &["CUSTOM_NVIDIA_A100_20C"]))
        .collect();
    let mut said = Said::default();
    let layout = layout(
        &providers,
        &devices("[[openstack]]\nid = \"c\"\n"),
        &mut said,
    );
    // A100-20C: 2 per GPU; three functions in use is one more than the GPU holds.
    assert_eq!(physical(&layout), 1.0);
    assert!(
        said.warnings
            .iter()
            .any(|w| w.contains("3 vGPUs of type CUSTOM_NVIDIA_A100_20C used where 2")),
        "{:?}",
        said.warnings
    );
}
