//! GPU-hours in physical GPUs per sharing mode, through the real client against the recorded lists
//! of `fixtures/kubernetes/sharing/` (the truth is in its README): one physical GPU per node, held
//! for the whole of February 2025 (672 hours) by pods of every sharing mode. A month of usage on
//! one GPU is never above 672 GPU-hours, and equals the hand-computed value.
//!
//! Written from NVIDIA's device plugin README and GPU Feature Discovery labels
//! (NVIDIA/k8s-device-plugin, Apache 2.0: MIG strategies `single` and `mixed`, time-slicing and
//! MPS replicas) and the "Supported MIG Profiles" of NVIDIA's Multi-Instance GPU User Guide; the
//! fixtures' README names what was taken from each.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};

use accelfed_schemas::glue::Service;
use accelfed_schemas::gpu::{GpuCount, Sharing, Virtualization};
use accelfed_schemas::names::{SiteName, Text};
use accelfed_schemas::usage::Observation;

use super::server::Behaviour;
use super::{assert_close, config, setup, uid_of_in};

/// Hours of February 2025.
const FEBRUARY: f64 = 28.0 * 24.0;

fn sharing_setup() -> Behaviour {
    Behaviour {
        folder: Some("sharing".to_owned()),
        ..Behaviour::default()
    }
}

/// (node, GPU-hours in physical GPUs) from observations, the node found by each pod's uid.
fn hours_per_node(observations: &[Observation]) -> BTreeMap<&'static str, f64> {
    let pods: [(&str, &str); 9] = [
        ("mig-mixed-small", "a100-mig-mixed"),
        ("mig-mixed-medium", "a100-mig-mixed"),
        ("mig-mixed-large", "a100-mig-mixed"),
        ("mig-single-a", "h100-mig-single"),
        ("mig-single-b", "h100-mig-single"),
        ("ts-a", "t4-time-sliced"),
        ("ts-b", "t4-time-sliced"),
        ("mps-a", "l4-mps"),
        ("mps-half", "l4-mps"),
    ];
    let mut hours = BTreeMap::new();
    for observation in observations {
        let (_, node) = pods
            .iter()
            .find(|(pod, _)| {
                observation
                    .resource
                    .as_str()
                    .ends_with(&uid_of_in("sharing", pod))
            })
            .unwrap();
        let end = observation.end.unwrap();
        let seconds = (end - observation.start).num_seconds() as f64;
        *hours.entry(*node).or_default() += observation.count.get() * seconds / 3600.0;
    }
    hours
}

#[tokio::test]
async fn a_month_on_one_shared_gpu_is_never_more_than_the_month() {
    let setup = setup(sharing_setup()).await;
    let config = config(&setup, "");
    let site = SiteName::new("ACCELFED-TEST").unwrap();
    let since = Utc.with_ymd_and_hms(2025, 2, 1, 0, 0, 0).unwrap();
    let now = Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).unwrap();
    let observations =
        accelfed_provider::kubernetes::observe(&config.kubernetes[0], &site, since, now)
            .await
            .unwrap();
    assert_eq!(observations.len(), 9, "{observations:#?}");
    let hours = hours_per_node(&observations);
    // By hand: MIG mixed on one A100 40GB, 2 x 1g.5gb + 2g.10gb + 3g.20gb = (2 + 2 + 3)/7 of it;
    // MIG single on one H100, 4 + 3 slices of 1g.10gb = 7/7; one T4 time-sliced into 8, 5 + 3
    // replicas = 8/8; one L4 under MPS with 4 replicas, 3 for the month and 1 for 14 days =
    // (3 x 672 + 336)/4. The meter before physical units said 4, 7, 8 and 3.5 x 672.
    let expected = [
        ("a100-mig-mixed", FEBRUARY),
        ("h100-mig-single", FEBRUARY),
        ("t4-time-sliced", FEBRUARY),
        ("l4-mps", (3.0 * FEBRUARY + 14.0 * 24.0) / 4.0),
    ];
    assert_eq!(hours.len(), expected.len(), "{hours:?}");
    for (node, want) in expected {
        assert_close(hours[node], want);
        assert!(hours[node] <= FEBRUARY + 1e-9, "{node}: {}", hours[node]);
    }

    // Each observation names the physical model and keeps what was held.
    let by_pod = |pod: &str| {
        observations
            .iter()
            .find(|o| o.resource.as_str().ends_with(&uid_of_in("sharing", pod)))
            .unwrap()
    };
    let mig = |profile: &str, slices: u32, of: u32| Sharing::Mig {
        profile: Text::new(profile).unwrap(),
        slices,
        of,
    };
    let small = by_pod("mig-mixed-small");
    assert_eq!(small.model.as_str(), "NVIDIA A100-SXM4-40GB");
    assert_eq!(small.sharing, mig("1g.5gb", 1, 7));
    assert_close(small.count.get(), 2.0 / 7.0);
    assert_eq!(by_pod("mig-mixed-large").sharing, mig("3g.20gb", 3, 7));
    let single = by_pod("mig-single-a");
    assert_eq!(single.model.as_str(), "NVIDIA H100 80GB HBM3");
    assert_eq!(single.sharing, mig("1g.10gb", 1, 7));
    assert_close(single.count.get(), 4.0 / 7.0);
    let sliced = by_pod("ts-a");
    assert_eq!(sliced.model.as_str(), "Tesla T4");
    assert_eq!(sliced.sharing, Sharing::TimeSlicing { replicas: 8 });
    assert_eq!(sliced.count, GpuCount::new(5.0 / 8.0).unwrap());
    let mps = by_pod("mps-half");
    assert_eq!(mps.model.as_str(), "NVIDIA L4");
    assert_eq!(mps.sharing, Sharing::Mps { replicas: 4 });
    assert_eq!(mps.count, GpuCount::new(0.25).unwrap());
}

#[tokio::test]
async fn capacity_counts_physical_gpus_bytes_memory_and_not_ready_nodes() {
    let setup = setup(sharing_setup()).await;
    let config = config(&setup, "");
    let inventory = super::inventory(&config).await;
    let mapped = accelfed_provider::kubernetes::service(&config.kubernetes[0], &inventory);
    for expected in [
        "node \"t4-time-sliced\": label nvidia.com/gpu.memory=\"16106127360\" is too large for MiB, so it is bytes; read as 15360 MiB",
        "node \"a100-lost\": is not Ready (Ready=Unknown); its GPUs are not published as free",
    ] {
        assert!(
            mapped.warnings.iter().any(|w| w == expected),
            "missing {expected:?} in {:#?}",
            mapped.warnings
        );
    }
    // Every model is in the catalogue: no name was left unplaced.
    assert!(
        !mapped.warnings.iter().any(|w| w.contains("catalogue")),
        "{:#?}",
        mapped.warnings
    );
    let Service::Computing(service) = &mapped.service else {
        panic!("expected a computing service");
    };
    let kind = |id: &str| {
        service
            .manager
            .accelerators
            .iter()
            .find(|a| a.local_id.as_str() == id)
            .unwrap_or_else(|| panic!("no {id}"))
    };
    let t4 = kind("tesla-t4.time-slicing");
    // 15360 MiB, not 16.9 PB.
    assert_eq!(t4.gpu.memory.map(|m| m.get()), Some(16_106));
    assert_eq!(
        kind("nvidia-l4.mps").gpu.virtualization,
        Virtualization::Mps
    );
    // Published capacity carries what a slot is, so its physical count is GPUs, not slots: the
    // T4's 8 replicas are one GPU, the H100's 7 single-strategy slices one GPU.
    assert_eq!(t4.gpu.sharing, Sharing::TimeSlicing { replicas: 8 });
    assert_eq!(t4.physical().total, GpuCount::whole(1));
    let h100 = service
        .manager
        .accelerators
        .iter()
        .find(|a| a.gpu.model.as_str() == "NVIDIA H100 80GB HBM3")
        .unwrap();
    assert_eq!(h100.capacity.total, GpuCount::whole(7));
    assert_eq!(h100.physical().total, GpuCount::whole(1));
    // The NotReady node's A100 is not free.
    let lost = kind("nvidia-a100-sxm4-40gb");
    assert_eq!(
        (lost.capacity.total, lost.capacity.free),
        (GpuCount::whole(1), GpuCount::whole(0))
    );
    // One physical GPU of each model, slots beside them.
    let physical: BTreeMap<&str, &str> = service
        .other_info
        .iter()
        .filter_map(|(key, value)| Some((key.strip_prefix("physical_gpus:")?, value.as_str())))
        .collect();
    assert_eq!(
        physical,
        BTreeMap::from([
            ("NVIDIA A100-SXM4-40GB", "2"),
            ("NVIDIA H100 80GB HBM3", "1"),
            ("NVIDIA L4", "1"),
            ("Tesla T4", "1"),
        ])
    );
    let node = |name: &str| inventory.nodes.iter().find(|n| n.name == name).unwrap();
    assert_eq!(node("h100-mig-single").resources[0].capacity, 7);
    assert_eq!(
        node("a100-mig-mixed").installed[0].1,
        GpuCount::whole(1),
        "{:?}",
        node("a100-mig-mixed").installed
    );
}

/// The document `accelfed provide` renders from these nodes (issue #28): the site, its service and
/// its manager state the same physical GPUs per model, and the A100 split 1g.5gb x 2, 2g.10gb and
/// 3g.20gb (2/7 + 2/7 + 3/7, the layout) beside the lost node's whole A100 adds up, as
/// written, to exactly its 2 GPUs: its fractions are rounded together, never 0.286 + 0.286 +
/// 0.429 + 1 = 2.001.
#[tokio::test]
async fn the_rendered_document_states_one_physical_count_and_its_parts_add_up() {
    let document = super::checked_document(sharing_setup()).await;
    let expected = [
        ("NVIDIA A100-SXM4-40GB", 2000),
        ("NVIDIA H100 80GB HBM3", 1000),
        ("NVIDIA L4", 1000),
        ("Tesla T4", 1000),
    ];
    // Thousandths of a GPU as written: a typed whole count, or the OtherInfo decimal.
    let thousandths = |entity: &serde_json::Value, name: &str| -> u64 {
        let value = match entity.get(name) {
            Some(typed) => typed.as_u64().map(|n| n as f64),
            None => entity["OtherInfo"][name]
                .as_str()
                .and_then(|t| t.parse().ok()),
        };
        (value.unwrap_or_else(|| panic!("no {name} in {entity:#}")) * 1000.0).round() as u64
    };
    for class in ["AdminDomain", "ComputingService", "ComputingManager"] {
        let info = &document[class][0]["OtherInfo"];
        for (model, gpus) in expected {
            let key = format!("TotalPhysicalAccelerators:{model}");
            let written: f64 = info[&key].as_str().unwrap().parse().unwrap();
            assert_eq!((written * 1000.0).round() as u64, gpus, "{class} {key}");
        }
    }
    for (model, gpus) in expected {
        let parts: u64 = document["ComputingManagerAccelerator"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["Model"] == model)
            .map(|a| thousandths(a, "TotalPhysicalAccelerators"))
            .sum();
        assert_eq!(parts, gpus, "{model}");
    }
}

#[tokio::test]
async fn dcgm_model_names_and_gfd_labels_name_one_model() {
    let setup = setup(Behaviour::default()).await;
    let config = config(&setup, "");
    let inventory = super::inventory(&config).await;
    let text = std::fs::read_to_string(
        super::server::fixtures().join("dcgm/legacy/DCGM_FI_DEV_GPU_UTIL.json"),
    )
    .unwrap();
    let answer: serde_json::Value = serde_json::from_str(&text).unwrap();
    let series = answer["data"]["result"].as_array().unwrap();
    assert!(!series.is_empty());
    for sample in series {
        let metric = &sample["metric"];
        let host = metric["Hostname"].as_str().unwrap();
        // DCGM's `modelName` (NVML's name) and the node's GFD `gpu.product`, through the catalogue.
        let dcgm =
            accelfed_schemas::gpu::GpuModel::canonical(metric["modelName"].as_str().unwrap())
                .unwrap();
        let node = inventory.nodes.iter().find(|n| n.name == host).unwrap();
        assert_eq!(node.resources[0].gpu.model, dcgm, "{host}");
    }
}
