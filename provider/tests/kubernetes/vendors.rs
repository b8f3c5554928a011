//! Every vendor's GPUs on Kubernetes, through the real client against `fixtures/kubernetes/vendors/`
//! (written by `generate.py`; the truth is in the fixtures' README, "Other vendors").
//!
//! Sources of the fixture's shapes: Intel's GPU plugin resources `gpu.intel.com/i915` and
//! `gpu.intel.com/xe` (intel/intel-device-plugins-for-kubernetes, `cmd/gpu_plugin/README.md`) and
//! the labels of its NFD rules (`deployments/nfd/overlays/node-feature-rules/
//! platform-labeling-rules.yaml`, `cmd/gpu_plugin/labels.md`: `gpu.intel.com/product=Max_1550`,
//! `gpu.intel.com/device.count`, `gpu.intel.com/device-id.0380-0bd5.count`), Apache 2.0; AMD's
//! node labeller (ROCm/k8s-device-plugin, `cmd/k8s-node-labeller/README.md`, Apache 2.0): the
//! current `amd.com/gpu.device-id` / `.product-name` / `.vram` labels and the older
//! `beta.amd.com/gpu.device-id.740f=4` form. Model names: AMD's `amdgpu.ids` (libdrm, MIT) and
//! Intel's compute-runtime device list (MIT) and graphics processor table.
//!
//! By hand, February 2025 is 672 hours; every pod is Succeeded, 02-01 to 03-01 unless said:
//!
//! | node | model | physical GPUs | pods (devices) | physical GPU-hours |
//! |---|---|---|---|---|
//! | intel-max1550-i915 | Max 1550 (`Max_1550`) | 4 | 2, and 1 until 02-15 | 2 x 672 + 1 x 336 = 1680 |
//! | intel-max1100-xe | Max 1100 (id `0bda` only) | 2 | 2 | 2 x 672 = 1344 |
//! | intel-flex170-xe | Flex 170, 8 devices on 2 GPUs | 2 | 4 + 3 of 4 per GPU | 7/4 x 672 = 1176 |
//! | intel-flex140-i915 | Flex 140 | 2 | 1 | 672 |
//! | amd-mi300x | MI300X (`74a1`, `AMD_Instinct_MI300X_OAM`) | 8 | 8 | 8 x 672 = 5376 |
//! | amd-mi210-beta | MI210 (`beta.amd.com/gpu.device-id.740f`) | 4 | 3 | 3 x 672 = 2016 |
//! | amd-mi250-beta | `740c`: "AMD Instinct MI250X / MI250", reported | 8 | 8 until 02-15 | 8 x 336 = 2688 |
//!
//! Each node's hours are at most its physical GPUs x 672.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};

use accelfed_schemas::glue::Service;
use accelfed_schemas::gpu::{GpuCount, Sharing};
use accelfed_schemas::names::SiteName;

use super::server::Behaviour;
use super::{assert_close, config, setup, uid_of_in};

const FEBRUARY: f64 = 28.0 * 24.0;
const MAX_1550: &str = "Intel Data Center GPU Max 1550";
const MAX_1100: &str = "Intel Data Center GPU Max 1100";
const FLEX_170: &str = "Intel Data Center GPU Flex 170";
const FLEX_140: &str = "Intel Data Center GPU Flex 140";
const MI300X: &str = "AMD Instinct MI300X";
const MI210: &str = "AMD Instinct MI210";
const MI250_EITHER: &str = "AMD Instinct MI250X / MI250";

fn vendors() -> Behaviour {
    Behaviour {
        folder: Some("vendors".to_owned()),
        ..Behaviour::default()
    }
}

/// (pod, node, model, physical GPUs held).
const PODS: [(&str, &str, &str, f64); 9] = [
    ("max-a", "intel-max1550-i915", MAX_1550, 2.0),
    ("max-b", "intel-max1550-i915", MAX_1550, 1.0),
    ("max-xe", "intel-max1100-xe", MAX_1100, 2.0),
    ("flex-a", "intel-flex170-xe", FLEX_170, 1.0),
    ("flex-b", "intel-flex170-xe", FLEX_170, 0.75),
    ("flex140", "intel-flex140-i915", FLEX_140, 1.0),
    ("rocm-mi300x", "amd-mi300x", MI300X, 8.0),
    ("rocm-mi210", "amd-mi210-beta", MI210, 3.0),
    ("rocm-mi250", "amd-mi250-beta", MI250_EITHER, 8.0),
];

#[tokio::test]
async fn every_vendors_pods_are_metered_in_physical_gpus_of_the_canonical_model() {
    let setup = setup(vendors()).await;
    let config = config(&setup, "");
    let site = SiteName::new("ACCELFED-TEST").unwrap();
    let since = Utc.with_ymd_and_hms(2025, 2, 1, 0, 0, 0).unwrap();
    let now = Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).unwrap();
    let observations =
        accelfed_provider::kubernetes::observe(&config.kubernetes[0], &site, since, now)
            .await
            .unwrap();
    // Every GPU pod, Intel's included: the meter lost them before.
    assert_eq!(observations.len(), PODS.len(), "{observations:#?}");
    let mut hours: BTreeMap<&str, f64> = BTreeMap::new();
    for (pod, node, model, held) in PODS {
        let observation = observations
            .iter()
            .find(|o| o.resource.as_str().ends_with(&uid_of_in("vendors", pod)))
            .unwrap_or_else(|| panic!("no observation of {pod}"));
        assert_eq!(observation.model.as_str(), model, "{pod}");
        assert_close(observation.count.get(), held);
        let seconds = (observation.end.unwrap() - observation.start).num_seconds() as f64;
        *hours.entry(node).or_default() += observation.count.get() * seconds / 3600.0;
    }
    assert_eq!(
        observations
            .iter()
            .find(|o| o
                .resource
                .as_str()
                .ends_with(&uid_of_in("vendors", "flex-b")))
            .unwrap()
            .sharing,
        Sharing::TimeSlicing { replicas: 4 }
    );
    let expected = [
        ("intel-max1550-i915", 4.0, 2.0 * FEBRUARY + FEBRUARY / 2.0),
        ("intel-max1100-xe", 2.0, 2.0 * FEBRUARY),
        ("intel-flex170-xe", 2.0, 7.0 / 4.0 * FEBRUARY),
        ("intel-flex140-i915", 2.0, FEBRUARY),
        ("amd-mi300x", 8.0, 8.0 * FEBRUARY),
        ("amd-mi210-beta", 4.0, 3.0 * FEBRUARY),
        ("amd-mi250-beta", 8.0, 8.0 * FEBRUARY / 2.0),
    ];
    assert_eq!(hours.len(), expected.len(), "{hours:?}");
    for (node, gpus, want) in expected {
        assert_close(hours[node], want);
        assert!(
            hours[node] <= gpus * FEBRUARY + 1e-9,
            "{node}: {}",
            hours[node]
        );
    }
}

#[tokio::test]
async fn every_vendors_gpus_are_published_in_physical_units_and_unplaced_ids_reported_once() {
    let setup = setup(vendors()).await;
    let config = config(&setup, "");
    let inventory = super::inventory(&config).await;
    assert_eq!(inventory.pods.len(), PODS.len());
    let mapped = accelfed_provider::kubernetes::service(&config.kubernetes[0], &inventory);
    let ambiguous: Vec<&String> = mapped
        .warnings
        .iter()
        .filter(|w| w.contains("740c"))
        .collect();
    assert_eq!(
        ambiguous,
        [
            "node \"amd-mi250-beta\": AMD device id 740c is \"AMD Instinct MI250X / MI250\" in AMD's name table, one id of several products, and no product-name label says which; published under that name"
        ],
        "{:#?}",
        mapped.warnings
    );
    // Nothing else was left unplaced, and no non-GPU resource (monitoring, millicores, tiles,
    // memory.max) was taken for a GPU.
    assert!(
        !mapped
            .warnings
            .iter()
            .any(|w| w.contains("catalogue") || w.contains("not one accelfed reads")),
        "{:#?}",
        mapped.warnings
    );
    let Service::Computing(service) = &mapped.service else {
        panic!("expected a computing service");
    };
    // Physical GPUs per model, from the published kinds' typed counts.
    let mut physical: BTreeMap<&str, GpuCount> = BTreeMap::new();
    let mut slots: BTreeMap<&str, GpuCount> = BTreeMap::new();
    for kind in &service.manager.accelerators {
        let model = kind.gpu.model.as_str();
        let sum = physical.entry(model).or_insert(GpuCount::ZERO);
        *sum = GpuCount::new(sum.get() + kind.physical().total.get()).unwrap();
        let sum = slots.entry(model).or_insert(GpuCount::ZERO);
        *sum = GpuCount::new(sum.get() + kind.capacity.total.get()).unwrap();
    }
    let whole = |n: u32| GpuCount::whole(n);
    assert_eq!(
        physical,
        BTreeMap::from([
            (MAX_1550, whole(4)),
            (MAX_1100, whole(2)),
            (FLEX_170, whole(2)),
            (FLEX_140, whole(2)),
            (MI300X, whole(8)),
            (MI210, whole(4)),
            (MI250_EITHER, whole(8)),
        ])
    );
    // The Flex 170's 8 shared devices are 8 slots on 2 GPUs.
    assert_eq!(slots[FLEX_170], whole(8));
    let node = |name: &str| inventory.nodes.iter().find(|n| n.name == name).unwrap();
    // `gpu.intel.com/memory.max` is the node's sum in bytes: 512 GiB over 4 GPUs.
    let max = &node("intel-max1550-i915").resources;
    assert_eq!(max.len(), 1, "{max:?}");
    assert_eq!(
        max[0].gpu.memory,
        Some(accelfed_schemas::gpu::MemoryMb::from_mib(131_072))
    );
    assert_eq!(
        node("amd-mi210-beta").resources[0].gpu.memory,
        accelfed_schemas::gpu::MemoryMb::parse("64 GiB").ok()
    );
}

/// The document `accelfed provide` renders from these nodes (issue #28, "one physical count at
/// every level"): it passes the physical checker, and the site, its service and its manager state
/// the README's physical GPUs per model, each as the typed counts' whole cards.
#[tokio::test]
async fn the_rendered_document_states_each_models_physical_gpus_at_every_level() {
    let document = super::checked_document(vendors()).await;
    let expected = [
        (MAX_1550, "4"),
        (MAX_1100, "2"),
        (FLEX_170, "2"),
        (FLEX_140, "2"),
        (MI300X, "8"),
        (MI210, "4"),
        (MI250_EITHER, "8"),
    ];
    for class in ["AdminDomain", "ComputingService", "ComputingManager"] {
        let info = &document[class][0]["OtherInfo"];
        for (model, gpus) in expected {
            let key = format!("TotalPhysicalAccelerators:{model}");
            assert_eq!(info[&key], gpus, "{class} {key}: {info:#}");
        }
    }
    for accelerator in document["ComputingManagerAccelerator"].as_array().unwrap() {
        let total = &accelerator["TotalPhysicalAccelerators"];
        assert!(total.is_u64(), "{accelerator:#}");
    }
}
