//! The OpenStack provider's pure mapping over real responses of a small cloud
//! (`fixtures/openstack/`, captured from the cloud `scripts/openstack/` starts): the GPU flavors
//! per VO, Placement's total / used / free, per-project use, and IDs unique in the rendered document.

#![allow(clippy::unwrap_used)]

#[path = "../common/openstack_capture.rs"]
mod capture;

use capture::{CONFIG, Flavors, Projects, Servers, config, fixture};

mod flavors;

use std::collections::BTreeMap;

use accelfed_provider::openstack::api::{Inventories, ResourceProvider, Traits, Usages};
use accelfed_provider::openstack::{CloudState, OpenstackConfig, ProviderState, map};
use accelfed_schemas::glue::{AdminDomain, OsFamily, Service, SiteSnapshot};
use accelfed_schemas::gpu::{GpuCount, Virtualization};
use accelfed_schemas::names::SiteName;
use serde::Deserialize;

#[derive(Deserialize)]
struct Providers {
    resource_providers: Vec<ResourceProvider>,
}

pub fn captured_state(servers_file: &str) -> CloudState {
    let providers = fixture::<Providers>("placement-resource_providers-1.39.json")
        .resource_providers
        .into_iter()
        .map(|rp| {
            let stem = format!("placement-rp-{}", rp.name.replace(':', "-"));
            let state = ProviderState {
                inventories: fixture::<Inventories>(&format!("{stem}-inventories.json"))
                    .inventories,
                usages: fixture::<Usages>(&format!("{stem}-usages.json")).usages,
                traits: fixture::<Traits>(&format!("{stem}-traits.json")).traits,
            };
            (rp, state)
        })
        .collect();
    CloudState {
        compute_url: "http://127.0.0.1:8774/v2.1".into(),
        compute_microversion: Some("2.93".into()),
        flavors: fixture::<Flavors>("nova-flavors-detail-2.61.json").flavors,
        projects: fixture::<Projects>("keystone-projects.json").projects,
        servers: fixture::<Servers>(servers_file).servers,
        providers,
        ..CloudState::default()
    }
}

fn snapshot(service: Service) -> SiteSnapshot {
    SiteSnapshot {
        domain: AdminDomain {
            name: SiteName::new("TEST-SITE").unwrap(),
            description: None,
            www: None,
            gocdb_id: None,
            location: None,
            contacts: vec![],
            other_info: BTreeMap::new(),
        },
        services: vec![service],
        creation_time: chrono::DateTime::parse_from_rfc3339("2026-11-22T06:00:00Z")
            .unwrap()
            .into(),
        validity_s: 3600,
    }
}

#[test]
fn captured_cloud_publishes_placement_truth_per_vo() {
    let mapped = map(
        &config(),
        &captured_state("nova-servers-detail-alltenants-2.93.json"),
    );
    assert!(mapped.warnings.is_empty(), "{:?}", mapped.warnings);
    let service = &mapped.service;

    let manager: BTreeMap<&str, _> = service
        .manager
        .accelerators
        .iter()
        .map(|a| (a.local_id.as_str(), a.capacity))
        .collect();
    let v100 = manager["tesla-v100-pcie-16gb.passthrough"];
    assert_eq!(
        (v100.total, v100.used, v100.free),
        (GpuCount::whole(4), GpuCount::whole(3), GpuCount::whole(1))
    );
    let vgpu = manager["nvidia-a100-sxm4-40gb.vgpu.nvidia-a100-4c"];
    assert_eq!(
        (vgpu.total, vgpu.used, vgpu.free),
        (GpuCount::whole(16), GpuCount::whole(3), GpuCount::whole(13))
    );

    let shares: BTreeMap<&str, _> = service
        .shares
        .iter()
        .map(|s| (s.access.vo.as_str(), s))
        .collect();
    assert_eq!(shares.len(), 2);
    let used = |vo: &str, kind: &str| {
        shares[vo]
            .accelerators
            .iter()
            .find(|a| a.local_id.as_str() == kind)
            .unwrap()
            .capacity
            .used
    };
    // atlas: g1.v100x2 + one vGPU (and a CPU-only VM); cms: g1.v100x1 + two vGPUs
    assert_eq!(
        used("atlas", "tesla-v100-pcie-16gb.passthrough"),
        GpuCount::whole(2)
    );
    assert_eq!(
        used("atlas", "nvidia-a100-sxm4-40gb.vgpu.nvidia-a100-4c"),
        GpuCount::whole(1)
    );
    assert_eq!(
        used("cms", "tesla-v100-pcie-16gb.passthrough"),
        GpuCount::whole(1)
    );
    assert_eq!(
        used("cms", "nvidia-a100-sxm4-40gb.vgpu.nvidia-a100-4c"),
        GpuCount::whole(2)
    );
    assert_eq!(shares["atlas"].running_vm, Some(3));

    let gpu_flavors: BTreeMap<&str, _> = service
        .instance_types
        .iter()
        .filter_map(|t| {
            t.accelerator.as_ref().map(|a| {
                (
                    t.name.as_str(),
                    (a.count, a.gpu.virtualization, t.shares.len()),
                )
            })
        })
        .collect();
    assert_eq!(gpu_flavors.len(), 3);
    assert_eq!(
        gpu_flavors["g1.v100x2"],
        (GpuCount::whole(2), Virtualization::Passthrough, 2)
    );
    assert_eq!(
        gpu_flavors["vg1.a100-4c"],
        (GpuCount::whole(1), Virtualization::Vgpu, 2)
    );

    // the GPU VMs are observed, the CPU-only one is not
    assert_eq!(mapped.usage.len(), 5);
    let gpus: f64 = mapped.usage.iter().map(|u| u.count().get()).sum();
    assert_eq!(gpus, 6.0);

    // every flavor appears once, in both shares, and the whole document has unique IDs
    let snapshot = snapshot(Service::Cloud(mapped.service.clone()));
    snapshot.validate().unwrap();
    let json =
        accelfed_schemas::render::render(&snapshot, accelfed_schemas::render::Format::Glue21Json);
    let doc: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(
        doc["CloudComputingVirtualAccelerator"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // Physical GPUs beside the vGPUs: Placement's two A100s each hold 8 vGPUs of the 4C type,
    // so 16 vGPUs are 2 GPUs, and the flavor's one vGPU is 1/8 of a GPU.
    let vgpu_manager = doc["CloudComputingManagerAccelerator"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["Virtualization"] == "vgpu" || a["VirtualizationType"] == "vgpu")
        .unwrap_or_else(|| panic!("no vGPU manager accelerator in {doc:#}"));
    assert_eq!(vgpu_manager["TotalAccelerators"], 16);
    assert_eq!(vgpu_manager["TotalPhysicalAccelerators"], 2);
    assert_eq!(vgpu_manager["SlotShare"], "1/8");
    let vgpu_flavor = doc["CloudComputingVirtualAccelerator"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["SlotShare"] == "1/8")
        .unwrap_or_else(|| panic!("no 1/8 vGPU flavor in {doc:#}"));
    assert_eq!(vgpu_flavor["Number"], 1);
    // GLUE 2.1 types PhysicalAccelerators as whole cards: the eighth is in OtherInfo.
    assert_eq!(vgpu_flavor.get("PhysicalAccelerators"), None);
    assert_eq!(vgpu_flavor["OtherInfo"]["PhysicalAccelerators"], "0.125");
}
