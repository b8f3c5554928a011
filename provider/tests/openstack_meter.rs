//! The OpenStack meter's pure part over the recorded cloud (`fixtures/openstack/`): which servers
//! become observations, with what VO, FQAN, model, count and interval.

#![allow(clippy::unwrap_used)]

#[path = "common/openstack_capture.rs"]
mod capture;

use capture::{CONFIG, Flavors, Projects, Servers, config, fixture};

use std::collections::BTreeMap;
use std::path::Path;

use accelfed_provider::openstack::api::{Inventories, ResourceProvider, Server, Traits, Usages};
use accelfed_provider::openstack::{
    CloudState, OpenstackConfig, ProviderState, map, map_usage, observations,
};
use accelfed_schemas::gpu::Sharing;
use accelfed_schemas::names::{SiteName, Text};
use accelfed_schemas::usage::{RecordType, Source};
use chrono::{DateTime, Utc};
use serde::Deserialize;

fn state(servers: Vec<Server>) -> CloudState {
    CloudState {
        compute_url: "http://127.0.0.1:8774/v2.1".into(),
        compute_microversion: Some("2.93".into()),
        flavors: fixture::<Flavors>("nova-flavors-detail-2.61.json").flavors,
        projects: fixture::<Projects>("keystone-projects.json").projects,
        servers,
        ..CloudState::default()
    }
}

fn servers() -> Vec<Server> {
    fixture::<Servers>("nova-servers-detail-alltenants-2.93.json").servers
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().into()
}

#[test]
fn the_recorded_clouds_gpu_vms_become_observations_per_vo() {
    let mapped = map(&config(), &state(servers()));
    let site = SiteName::new("TEST-SITE").unwrap();
    let now = at("2026-11-22T06:00:00Z");
    let (found, warnings) = observations(&site, &mapped.usage, at("2026-11-01T00:00:00Z"), now);
    assert!(warnings.is_empty(), "{warnings:?}");

    // five GPU VMs; the CPU-only atlas-cpu-1 holds no GPU
    let by_id: BTreeMap<&str, _> = found.iter().map(|o| (o.resource.as_str(), o)).collect();
    assert_eq!(by_id.len(), 5);
    assert!(!by_id.contains_key("dfa24322-457d-483e-bdee-93b831696f08"));

    let atlas_gpu = by_id["13bb87f7-8a6e-48e6-910b-8cc4215af078"];
    assert_eq!(atlas_gpu.site, site);
    assert_eq!(atlas_gpu.record_type, RecordType::Cloud);
    assert_eq!(atlas_gpu.source, Source::Openstack);
    assert_eq!(atlas_gpu.model.as_str(), "Tesla V100-PCIE-16GB");
    assert_eq!(atlas_gpu.count.get(), 2.0);
    assert_eq!(atlas_gpu.vo.as_ref().unwrap().as_str(), "atlas");
    assert_eq!(atlas_gpu.fqan.as_ref().unwrap().as_str(), "/atlas");
    assert_eq!(atlas_gpu.start, at("2026-11-22T03:30:01Z"));
    assert_eq!(atlas_gpu.end, None);
    assert!(atlas_gpu.user.is_some());

    let cms_vgpu = by_id["bb2c5020-f02c-46d1-8e14-ba1ebbf628e4"];
    // The trait's `A100-SXM4-40GB`, in the model catalogue's canonical spelling.
    assert_eq!(cms_vgpu.model.as_str(), "NVIDIA A100-SXM4-40GB");
    assert_eq!(cms_vgpu.vo.as_ref().unwrap().as_str(), "cms");

    // GPU-seconds per VO up to now: atlas 2 x V100 + 1 vGPU, cms 1 x V100 + 2 vGPUs. The vGPUs'
    // trait spells NVIDIA's A100-4C: 4 GB of a 40 GB A100, a tenth of one (no Placement here).
    let mut per_vo: BTreeMap<String, f64> = BTreeMap::new();
    for o in &found {
        let seconds = (now - o.start).num_seconds() as f64;
        *per_vo
            .entry(o.vo.as_ref().unwrap().to_string())
            .or_default() += o.count.get() * seconds;
    }
    assert!((per_vo["atlas"] - (2.0 * 8999.0 + 0.1 * 8998.0)).abs() < 1e-6);
    assert!((per_vo["cms"] - (8995.0 + 0.1 * (8994.0 + 8992.0))).abs() < 1e-6);
}

#[test]
fn vms_that_held_no_gpu_in_the_window_are_left_out() {
    // a VM deleted before the window opened
    let mut recorded: serde_json::Value = fixture("nova-servers-detail-alltenants-2.93.json");
    for server in recorded["servers"].as_array_mut().unwrap() {
        if server["name"] == "cms-gpu-1" {
            server["status"] = "DELETED".into();
            server["updated"] = "2026-11-22T04:00:00Z".into();
        }
    }
    let list: Vec<Server> = serde_json::from_value(recorded["servers"].take()).unwrap();
    let mapped = map(&config(), &state(list));
    let site = SiteName::new("TEST-SITE").unwrap();
    let now = at("2026-11-22T06:00:00Z");

    let (all, _) = observations(&site, &mapped.usage, at("2026-11-22T00:00:00Z"), now);
    let closed = all
        .iter()
        .find(|o| o.resource.as_str() == "5982649a-80cb-4802-8718-3a6ebe5979be")
        .unwrap();
    assert_eq!(closed.end, Some(at("2026-11-22T04:00:00Z")));

    let (later, _) = observations(&site, &mapped.usage, at("2026-11-22T05:00:00Z"), now);
    assert_eq!(later.len(), 4);
    assert!(
        later
            .iter()
            .all(|o| o.resource.as_str() != "5982649a-80cb-4802-8718-3a6ebe5979be")
    );

    // a window that closed before the VMs were created sees nothing
    let (before, _) = observations(
        &site,
        &mapped.usage,
        at("2026-10-01T00:00:00Z"),
        at("2026-11-01T00:00:00Z"),
    );
    assert!(before.is_empty());
}

/// The recorded Placement providers (two compute roots, four V100 PCI devices, two A100s each
/// holding 8 vGPUs of type `CUSTOM_NVIDIA_A100_4C`), with each A100's VGPU inventory total set to
/// `vgpus_per_a100`.
fn providers(vgpus_per_a100: u64) -> Vec<(ResourceProvider, ProviderState)> {
    #[derive(Deserialize)]
    struct Providers {
        resource_providers: Vec<ResourceProvider>,
    }
    fixture::<Providers>("placement-resource_providers-1.39.json")
        .resource_providers
        .into_iter()
        .map(|rp| {
            let stem = format!("placement-rp-{}", rp.name.replace(':', "-"));
            let mut inventories =
                fixture::<Inventories>(&format!("{stem}-inventories.json")).inventories;
            if let Some(vgpu) = inventories.get_mut("VGPU") {
                vgpu.total = vgpus_per_a100;
            }
            let state = ProviderState {
                inventories,
                usages: fixture::<Usages>(&format!("{stem}-usages.json")).usages,
                traits: fixture::<Traits>(&format!("{stem}-traits.json")).traits,
            };
            (rp, state)
        })
        .collect()
}

/// The recorded vGPU server `cms-vgpu-1`, copied `n` times under new ids, created at `created`.
fn vgpu_servers(n: usize, created: &str) -> Vec<Server> {
    let recorded: serde_json::Value = fixture("nova-servers-detail-alltenants-2.93.json");
    let template = recorded["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "cms-vgpu-1")
        .unwrap()
        .clone();
    (0..n)
        .map(|i| {
            let mut server = template.clone();
            server["id"] = format!("5909c1ad-3519-4028-a3c2-eb6db419be{i:02}").into();
            server["name"] = format!("cms-vgpu-{i}").into();
            server["created"] = created.into();
            serde_json::from_value(server).unwrap()
        })
        .collect()
}

#[test]
fn a_vgpu_counts_its_share_of_the_physical_gpu_placement_says_holds_it() {
    // the recorded cloud: each physical A100 holds 8 vGPUs of its type
    let mut captured = state(servers());
    captured.providers = providers(8);
    let (usage, warnings) = map_usage(&config(), &captured);
    assert!(warnings.is_empty(), "{warnings:?}");
    let site = SiteName::new("TEST-SITE").unwrap();
    let (found, _) = observations(
        &site,
        &usage,
        at("2026-11-01T00:00:00Z"),
        at("2026-11-22T06:00:00Z"),
    );
    let by_id: BTreeMap<&str, _> = found.iter().map(|o| (o.resource.as_str(), o)).collect();
    let vgpu = by_id["bb2c5020-f02c-46d1-8e14-ba1ebbf628e4"];
    assert_eq!(vgpu.count.get(), 0.125);
    assert_eq!(
        vgpu.sharing,
        Sharing::Vgpu {
            vgpu_type: Text::new("CUSTOM_NVIDIA_A100_4C").unwrap(),
            per_gpu: 8
        }
    );
    // passthrough stays whole
    let passthrough = by_id["13bb87f7-8a6e-48e6-910b-8cc4215af078"];
    assert_eq!(passthrough.count.get(), 2.0);
    assert_eq!(passthrough.sharing, Sharing::Whole);
}

#[test]
fn four_vgpus_of_one_physical_gpu_for_a_month_are_one_gpu_month() {
    // a host whose physical GPUs hold 4 vGPUs each; 4 VMs run all of November
    let mut cloud = state(vgpu_servers(4, "2026-10-15T00:00:00Z"));
    cloud.providers = providers(4);
    let (usage, warnings) = map_usage(&config(), &cloud);
    assert!(warnings.is_empty(), "{warnings:?}");
    let site = SiteName::new("TEST-SITE").unwrap();
    let (month_start, month_end) = (at("2026-11-01T00:00:00Z"), at("2026-12-01T00:00:00Z"));
    let (found, _) = observations(&site, &usage, month_start, month_end);
    assert_eq!(found.len(), 4);
    let mut gpu_hours = 0.0;
    for o in &found {
        assert_eq!(o.count.get(), 0.25, "{}", o.resource);
        let start = o.start.max(month_start);
        let end = o.end.unwrap_or(month_end).min(month_end);
        gpu_hours += o.count.get() * (end - start).num_seconds() as f64 / 3600.0;
    }
    // one physical GPU's month: 30 days x 24 h, never more
    assert_eq!(gpu_hours, 720.0);
}

#[test]
fn without_placement_the_configured_density_counts_and_without_either_a_warning_says_so() {
    let cloud = state(vgpu_servers(1, "2026-11-01T00:00:00Z"));
    let site = SiteName::new("TEST-SITE").unwrap();
    let window = (at("2026-11-01T00:00:00Z"), at("2026-11-02T00:00:00Z"));

    let configured = CONFIG.replace("memory = \"4 GB\"", "memory = \"4 GB\"\nper_gpu = 10");
    #[derive(Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    let with_density = toml::from_str::<File>(&configured)
        .unwrap()
        .openstack
        .remove(0);
    with_density.validate().unwrap();
    let (usage, warnings) = map_usage(&with_density, &cloud);
    assert!(warnings.is_empty(), "{warnings:?}");
    let (found, _) = observations(&site, &usage, window.0, window.1);
    assert_eq!(found[0].count.get(), 0.1);

    // Placement wins over a configuration that disagrees, and says so: for the flavor, and (the
    // meter counting the installed GPUs too) for Placement's own vGPUs, as `provide` does
    let mut listed = cloud.clone();
    listed.providers = providers(4);
    let (usage, warnings) = map_usage(&with_density, &listed);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    for warning in &warnings {
        assert!(warning.contains("per_gpu = 10"), "{warning}");
    }
    assert_eq!(usage[0].gpu.physical_count().get(), 0.25);

    // no per_gpu, no Placement: the trait spells NVIDIA's A100-4C, a tenth of a 40 GB A100
    let (usage, warnings) = map_usage(&config(), &cloud);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(usage[0].gpu.physical_count().get(), 0.1);

    // neither, with a trait that names no type (Nova's `nvidia-471`): whole GPUs, with a warning
    // naming the flavor and the settings
    let unnamed = |text: &str| text.replace("CUSTOM_NVIDIA_A100_4C", "CUSTOM_NVIDIA_471");
    let recorded = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/openstack/nova-servers-detail-alltenants-2.93.json"),
    )
    .unwrap();
    let servers: Servers = serde_json::from_str(&unnamed(&recorded)).unwrap();
    let cloud = state(servers.servers);
    let config = toml::from_str::<File>(&unnamed(CONFIG))
        .unwrap()
        .openstack
        .remove(0);
    let (usage, warnings) = map_usage(&config, &cloud);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("\"vg1.a100-4c\"")
            && warnings[0].contains("[openstack.vgpu_profile]")
            && warnings[0].contains("[openstack.vgpu_type.CUSTOM_NVIDIA_471]"),
        "{}",
        warnings[0]
    );
    let vgpu = usage
        .iter()
        .find(|u| u.server_name() == "cms-vgpu-1")
        .unwrap();
    assert_eq!(vgpu.gpu.physical_count().get(), 1.0);

    let zero = toml::from_str::<File>(
        &CONFIG.replace("memory = \"4 GB\"", "memory = \"4 GB\"\nper_gpu = 0"),
    )
    .unwrap()
    .openstack
    .remove(0);
    let problem = zero.validate().unwrap_err();
    assert_eq!(problem.field, "vgpu_type.CUSTOM_NVIDIA_A100_4C.per_gpu");
}

#[test]
fn a_fractional_flavor_counts_as_written() {
    let mut cloud = state(vgpu_servers(1, "2026-11-01T00:00:00Z"));
    let mut recorded: serde_json::Value = fixture("nova-servers-detail-alltenants-2.93.json");
    let server = recorded["servers"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["name"] == "cms-gpu-1")
        .unwrap();
    server["flavor"]["extra_specs"] = serde_json::json!({
        "Accelerator:Type": "GPU",
        "Accelerator:Vendor": "NVIDIA",
        "Accelerator:Model": "Tesla V100-PCIE-16GB",
        "Accelerator:Number": "0.5",
        "pci_passthrough:alias": "nvidia-v100:1"
    });
    cloud.servers = vec![serde_json::from_value(server.take()).unwrap()];
    let (usage, _) = map_usage(&config(), &cloud);
    let site = SiteName::new("TEST-SITE").unwrap();
    let (found, _) = observations(
        &site,
        &usage,
        at("2026-11-22T00:00:00Z"),
        at("2026-11-23T00:00:00Z"),
    );
    assert_eq!(found[0].count.get(), 0.5);
    assert_eq!(found[0].sharing, Sharing::Fraction);
}
