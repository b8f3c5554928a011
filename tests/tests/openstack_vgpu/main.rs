//! vGPU on every layout Nova reports it in, through the OpenStack provider's pure mapping and the
//! meter: Placement providers, flavors and servers shaped as the APIs send them (the recorded
//! cloud's server is the template, as `provider/tests/openstack_meter.rs` does), mapped into the
//! published service, metered into a month's records, and checked against the installed GPUs the
//! service publishes (what `accelfed meter` and `report --check` bound usage by); the snapshot
//! passes the physical-count checker and renders in every format.
//!
//! Each layout's module names the documentation its Placement tree is written from and computes
//! its truth by hand:
//! * `sriov`: A100 and H100 in Nova's SR-IOV vGPU mode (one provider per virtual function);
//! * `mdev`: two vGPU types on one host's GPUs, one provider per GPU;
//! * `mixed`: one cloud with both layouts and several types on one SR-IOV host.

#![allow(clippy::unwrap_used)]

mod mdev;
mod mixed;
mod sriov;

use std::collections::BTreeMap;

use accelfed_accounting::meter::{Installed, Metered, Overrun, check_capacity, meter};
use accelfed_provider::openstack::api::{Flavor, Inventory, Project, ResourceProvider, Server};
use accelfed_provider::openstack::{
    CloudState, Mapped, OpenstackConfig, ProviderState, map, map_usage, observations,
};
use accelfed_schemas::glue::{AdminDomain, Service, SiteSnapshot};
use accelfed_schemas::gpu::GpuModel;
use accelfed_schemas::names::SiteName;
use accelfed_schemas::render::{Format, render};
use accelfed_schemas::usage::Month;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

/// December 2026: 31 days, 744 hours.
pub const MONTH_HOURS: f64 = 744.0;

pub fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().into()
}

/// An `[[openstack]]` table with the two VO projects of the recorded cloud, plus `extra`.
pub fn config(extra: &str) -> OpenstackConfig {
    #[derive(serde::Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    let source = format!(
        "[[openstack]]\nid = \"cloud\"\n[openstack.vo_map]\nvo-atlas = \"atlas\"\nvo-cms = \"cms\"\n{extra}"
    );
    let config = toml::from_str::<File>(&source).unwrap().openstack.remove(0);
    config.validate().unwrap();
    config
}

/// A compute node: the root provider of its host's tree.
pub fn compute_node(uuid: &str, host: &str) -> (ResourceProvider, ProviderState) {
    let rp = ResourceProvider {
        uuid: uuid.into(),
        name: host.into(),
        parent_provider_uuid: None,
        root_provider_uuid: Some(uuid.into()),
    };
    let state = ProviderState {
        inventories: [("VCPU".to_owned(), inventory(64))].into(),
        ..ProviderState::default()
    };
    (rp, state)
}

fn inventory(total: u64) -> Inventory {
    Inventory {
        total,
        reserved: 0,
        allocation_ratio: 1.0,
    }
}

/// A device provider Nova's libvirt driver reports under compute node `root`: named
/// `<host>_pci_<address>`, with a VGPU inventory of `total`, `used` of it allocated, and `traits`.
pub fn vgpu_provider(
    root: &str,
    host: &str,
    address: &str,
    total: u64,
    used: u64,
    traits: &[&str],
) -> (ResourceProvider, ProviderState) {
    let name = format!("{host}_pci_{address}");
    let rp = ResourceProvider {
        uuid: format!("{root}-{address}"),
        name,
        parent_provider_uuid: Some(root.into()),
        root_provider_uuid: Some(root.into()),
    };
    let state = ProviderState {
        inventories: [("VGPU".to_owned(), inventory(total))].into(),
        usages: [("VGPU".to_owned(), used)].into(),
        traits: traits.iter().map(|t| (*t).to_owned()).collect(),
    };
    (rp, state)
}

/// A public flavor requesting one vGPU with trait `trait_name` required.
pub fn flavor(id: &str, name: &str, trait_name: &str) -> Flavor {
    serde_json::from_value(json!({
        "id": id, "name": name, "vcpus": 8, "ram": 32768, "disk": 80,
        "os-flavor-access:is_public": true, "OS-FLV-DISABLED:disabled": false,
        "extra_specs": {"resources:VGPU": "1", format!("trait:{trait_name}"): "required"}
    }))
    .unwrap()
}

fn recorded(name: &str) -> Value {
    let path = accelfed_tests::fake_openstack::fixtures().join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `n` servers of flavor `flavor` (2.93: the flavor embedded), project vo-cms, running since
/// `created`; ids `<prefix>-0000-4000-8000-0000000000NN`.
pub fn servers(prefix: &str, n: usize, flavor: &Flavor, created: &str) -> Vec<Server> {
    let list = recorded("nova-servers-detail-alltenants-2.93.json");
    let template = list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "cms-vgpu-1")
        .unwrap()
        .clone();
    (0..n)
        .map(|i| {
            let mut server = template.clone();
            server["id"] = json!(format!("{prefix}-0000-4000-8000-{i:012}"));
            server["name"] = json!(format!("{}-{i}", flavor.name));
            server["created"] = json!(created);
            server["flavor"]["original_name"] = json!(flavor.name);
            server["flavor"]["extra_specs"] = json!(flavor.extra_specs);
            serde_json::from_value(server).unwrap()
        })
        .collect()
}

/// A cloud of these providers, flavors and servers, with the recorded projects.
pub fn cloud(
    providers: Vec<(ResourceProvider, ProviderState)>,
    flavors: Vec<Flavor>,
    servers: Vec<Server>,
) -> CloudState {
    #[derive(serde::Deserialize)]
    struct Projects {
        projects: Vec<Project>,
    }
    let projects: Projects = serde_json::from_value(recorded("keystone-projects.json")).unwrap();
    CloudState {
        compute_url: "http://127.0.0.1:8774/v2.1".into(),
        compute_microversion: Some("2.93".into()),
        flavors,
        projects: projects.projects,
        servers,
        providers,
        ..CloudState::default()
    }
}

/// What a layout publishes and meters for December 2026.
#[derive(Debug)]
pub struct Outcome {
    pub mapped: Mapped,
    /// Physical GPUs per model, as the meter's capacity bound reads them from the service.
    pub installed: Installed,
    /// The meter's run over the month, as of its end.
    pub metered: Metered,
    pub meter_warnings: Vec<String>,
}

impl Outcome {
    /// Physical GPUs of `model` the service publishes.
    pub fn physical(&self, model: &str) -> f64 {
        self.installed
            .get(&GpuModel::canonical(model).unwrap())
            .unwrap_or(0.0)
    }

    /// GPU-hours metered for `model` in December 2026.
    pub fn gpu_hours(&self, model: &str) -> f64 {
        let december = Month::new(2026, 12).unwrap();
        let model = GpuModel::canonical(model).unwrap();
        self.metered
            .records
            .iter()
            .filter(|r| r.month == december && r.model == model)
            .map(|r| r.gpu_seconds() / 3600.0)
            .sum()
    }

    /// Each December record's Count, by server id.
    pub fn counts(&self) -> BTreeMap<String, f64> {
        let december = Month::new(2026, 12).unwrap();
        self.metered
            .records
            .iter()
            .filter(|r| r.month == december)
            .map(|r| (r.associated_record.as_str().to_owned(), r.count.get()))
            .collect()
    }

    /// What `report --check` finds in the month's records (each carries the installed GPUs the
    /// meter read): the overruns, none where the model is right.
    pub fn report_check(&self) -> Vec<Overrun> {
        check_capacity(&self.metered.records)
    }

    /// The published manager accelerators: (kind id, slots total, used, physical total).
    pub fn kinds(&self) -> Vec<(String, f64, f64, f64)> {
        self.mapped
            .service
            .manager
            .accelerators
            .iter()
            .map(|a| {
                (
                    a.local_id.as_str().to_owned(),
                    a.capacity.total.get(),
                    a.capacity.used.get(),
                    a.physical().total.get(),
                )
            })
            .collect()
    }
}

/// Maps `state` with `config` and meters December 2026 against what it publishes.
pub fn run(config: &OpenstackConfig, state: &CloudState) -> Outcome {
    let mapped = map(config, state);
    let snapshot = SiteSnapshot {
        domain: AdminDomain {
            name: SiteName::new("TEST-SITE").unwrap(),
            description: None,
            www: None,
            gocdb_id: None,
            location: None,
            contacts: vec![],
            other_info: BTreeMap::new(),
        },
        services: vec![Service::Cloud(mapped.service.clone())],
        creation_time: at("2027-01-01T00:00:00Z"),
        validity_s: 3600,
    };
    // The document `provide` would publish: one physical count at every level (the checker of
    // issue #28, which also runs inside every rendering of a debug build), in every format.
    assert_eq!(snapshot.validate(), Ok(()));
    for format in Format::ALL {
        assert!(!render(&snapshot, format).is_empty(), "{format}");
    }
    let installed = Installed::from_snapshot(&snapshot);
    let (usage, meter_warnings) = map_usage(config, state);
    let site = SiteName::new("TEST-SITE").unwrap();
    let (month_start, month_end) = (at("2026-12-01T00:00:00Z"), at("2027-01-01T00:00:00Z"));
    let (found, refused) = observations(&site, &usage, month_start, month_end);
    assert!(refused.is_empty(), "{refused:?}");
    let metered = meter(&found, month_end, &installed);
    assert!(metered.refused.is_empty(), "{:?}", metered.refused);
    Outcome {
        mapped,
        installed,
        metered,
        meter_warnings,
    }
}

/// Floats computed from fractions: equal to a thousandth of a GPU-hour.
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-3
}
