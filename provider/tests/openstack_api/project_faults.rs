//! Faults of one project or flavor, against the fake cloud: a project whose listing fails has its
//! share marked, malformed flavor extra specs are named and never counted, and the meter reads vGPU
//! density from placement. As in `faults.rs`, what cannot be read is left out and said.

use std::collections::BTreeMap;

use chrono::Utc;
use serde_json::json;

use accelfed_provider::gather;
use accelfed_provider::openstack::{observe, provide};
use accelfed_schemas::glue::Service;
use accelfed_schemas::names::SiteName;

use super::faults::{ATLAS, at, capacity, fake, gpu_vms, recorded_capacity};
use super::server::{Behaviour, Fault};
use super::{setup, site};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_whose_listing_fails_has_its_share_marked() {
    let cloud = fake(Behaviour {
        faults: vec![(format!("/limits?tenant_id={ATLAS}"), Fault::Status(500))],
        ..Behaviour::default()
    })
    .await;
    let setup = setup(&cloud, 5);
    let provided = provide(&setup.config).await.unwrap();
    assert_eq!(provided.failures.len(), 1, "{:?}", provided.failures);
    assert!(
        provided.failures[0]
            .message
            .starts_with(&format!("project {ATLAS}: nova "))
    );
    let service = &provided.mapped.service;
    let share = |vo: &str| {
        service
            .shares
            .iter()
            .find(|s| s.access.vo.as_str() == vo)
            .unwrap()
    };
    // atlas: what could not be read is absent, not zero; cms is whole
    assert_eq!(
        (share("atlas").max_vm, share("atlas").running_vm),
        (None, None)
    );
    assert_eq!(
        (share("cms").max_vm, share("cms").running_vm),
        (Some(10), Some(3))
    );
    assert!(service.other_info["degraded_shares"].starts_with(ATLAS));
    assert_eq!(capacity(&provided), recorded_capacity());

    // the rendered document still validates and carries both shares
    let gathered = gather(&site(&setup), Utc::now()).await.unwrap();
    let cloud_service = gathered
        .snapshot
        .services
        .iter()
        .find_map(|s| match s {
            Service::Cloud(c) if c.local_id.as_str() == "research-cloud" => Some(c),
            _ => None,
        })
        .unwrap();
    assert_eq!(cloud_service.shares.len(), 2);

    // Keystone's project list failing: no share can be attributed, and that is said
    let cloud = fake(Behaviour {
        faults: vec![("GET /identity/v3/projects".into(), Fault::Status(503))],
        ..Behaviour::default()
    })
    .await;
    let provided = provide(&super::setup(&cloud, 5).config).await.unwrap();
    assert!(provided.mapped.service.shares.is_empty());
    assert!(
        provided.failures[0].message.starts_with("keystone "),
        "{:?}",
        provided.failures
    );
    assert_eq!(capacity(&provided), recorded_capacity());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_extra_specs_are_named_and_never_counted() {
    let flavor = |id: &str, name: &str, specs: serde_json::Value| {
        json!({"id": id, "name": name, "ram": 8192, "disk": 40, "swap": "",
            "OS-FLV-EXT-DATA:ephemeral": 0, "OS-FLV-DISABLED:disabled": false, "vcpus": 4,
            "os-flavor-access:is_public": true, "rxtx_factor": 1.0, "links": [],
            "description": null, "extra_specs": specs})
    };
    let garbage = json!({"pci_passthrough:alias": "garbage"});
    let many = json!({"Accelerator:Type": "GPU", "Accelerator:Vendor": "NVIDIA",
        "Accelerator:Model": "A100", "Accelerator:Number": "many"});
    let server = json!({
        "id": "0e9a7c55-5d1e-4a8e-9d43-2f1f3c6e0b11", "name": "atlas-bad-1", "status": "ACTIVE",
        "tenant_id": ATLAS, "user_id": "a24cbe8c1d5648da830f405359b47a8a",
        "flavor": {"vcpus": 4, "ram": 8192, "disk": 40, "ephemeral": 0, "swap": 0,
            "original_name": "bad.number", "extra_specs": many.clone()},
        "created": "2026-11-22T03:40:00Z", "updated": "2026-11-22T03:40:00Z",
        "OS-SRV-USG:launched_at": "2026-11-22T03:40:05.000000", "OS-SRV-USG:terminated_at": null,
        "OS-EXT-SRV-ATTR:host": "gpu-a100-01"});
    let cloud = fake(Behaviour {
        extra_flavors: vec![
            flavor("5b7e2a0c-1f2d-4c1e-8f3a-6d5e4c3b2a10", "bad.alias", garbage),
            flavor("7c1d3e5f-2a4b-4d6c-9e8f-0a1b2c3d4e5f", "bad.number", many),
        ],
        extra_servers: vec![server],
        ..Behaviour::default()
    })
    .await;
    let provided = provide(&setup(&cloud, 5).config).await.unwrap();
    // bad input is not a failure of the cloud: exit 0, with warnings naming each flavor
    assert!(provided.failures.is_empty(), "{:?}", provided.failures);
    let warnings = &provided.mapped.warnings;
    let named = |flavor: &str, what: &str| {
        warnings
            .iter()
            .any(|w| w.starts_with(&format!("flavor {flavor:?}: ")) && w.contains(what))
    };
    assert!(
        named("bad.alias", "\"garbage\" is not alias:count"),
        "{warnings:?}"
    );
    assert!(
        named(
            "bad.number",
            "Accelerator:Number=\"many\" is not a GPU count"
        ),
        "{warnings:?}"
    );
    // both flavors are published without a GPU rather than with a guessed one
    let types: BTreeMap<&str, bool> = provided
        .mapped
        .service
        .instance_types
        .iter()
        .map(|t| (t.name.as_str(), t.accelerator.is_some()))
        .collect();
    assert!(!types["bad.alias"]);
    assert!(!types["bad.number"]);
    // the VM on the unreadable flavor holds no counted GPU; Placement's truth is untouched
    assert_eq!(gpu_vms(&provided), (5, 6.0));
    assert_eq!(capacity(&provided), recorded_capacity());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_meter_reads_vgpu_density_from_placement() {
    // the recorded cloud's A100s each hold 8 vGPUs of type CUSTOM_NVIDIA_A100_4C (their VGPU
    // inventories): each vGPU VM is 1/8 of a physical GPU, each passthrough VM whole GPUs
    let cloud = fake(Behaviour::default()).await;
    let setup = setup(&cloud, 5);
    let site_name = SiteName::new("TEST-SITE").unwrap();
    let observations = observe(
        &setup.config,
        &site_name,
        at("2026-11-01T00:00:00Z"),
        at("2026-11-22T06:00:00Z"),
    )
    .await
    .unwrap();
    let counts: Vec<(String, f64)> = observations
        .iter()
        .map(|o| (o.sharing.mode().to_owned(), o.count.get()))
        .collect();
    assert!(counts.iter().any(|(mode, _)| mode == "vgpu"), "{counts:?}");
    for (mode, count) in &counts {
        match mode.as_str() {
            "vgpu" => assert_eq!(*count, 0.125, "{counts:?}"),
            "whole" => assert!(*count >= 1.0, "{counts:?}"),
            other => panic!("unexpected sharing {other}: {counts:?}"),
        }
    }
}
