//! The OpenStack meter's pure part over the recorded cloud (`fixtures/openstack/`): which servers
//! become observations, with what VO, FQAN, model, count and interval.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;

use accelfed_provider::openstack::api::{Flavor, Project, Server};
use accelfed_provider::openstack::{CloudState, OpenstackConfig, map, observations};
use accelfed_schemas::names::SiteName;
use accelfed_schemas::usage::{RecordType, Source};
use chrono::{DateTime, Utc};
use serde::Deserialize;

fn fixture<T: for<'de> Deserialize<'de>>(name: &str) -> T {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openstack")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[derive(Deserialize)]
struct Flavors {
    flavors: Vec<Flavor>,
}
#[derive(Deserialize)]
struct Servers {
    servers: Vec<Server>,
}
#[derive(Deserialize)]
struct Projects {
    projects: Vec<Project>,
}

const CONFIG: &str = concat!(
    r#"
[[openstack]]
id = "cloud"
[openstack.vo_map]
vo-atlas = "atlas"
vo-cms = "cms"
"#,
    include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/openstack/devices.toml"
    ))
);

fn config() -> OpenstackConfig {
    #[derive(Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    toml::from_str::<File>(CONFIG).unwrap().openstack.remove(0)
}

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
    assert_eq!(cms_vgpu.model.as_str(), "A100-SXM4-40GB");
    assert_eq!(cms_vgpu.vo.as_ref().unwrap().as_str(), "cms");

    // GPU-seconds per VO up to now: atlas 2 x V100 + 1 vGPU, cms 1 x V100 + 2 vGPUs
    let mut per_vo: BTreeMap<String, f64> = BTreeMap::new();
    for o in &found {
        let seconds = (now - o.start).num_seconds() as f64;
        *per_vo
            .entry(o.vo.as_ref().unwrap().to_string())
            .or_default() += o.count.get() * seconds;
    }
    assert_eq!(per_vo["atlas"], 2.0 * 8999.0 + 8998.0);
    assert_eq!(per_vo["cms"], 8995.0 + 8994.0 + 8992.0);
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
