//! OpenStack's API responses as the provider and the meter read them: a Nova servers page and a
//! flavors page (read by the provider's own JSON scanner), Keystone projects, and Placement's
//! resource providers with one set of inventories, usages and traits for each (parts of the input
//! split at NUL bytes; an empty part is an empty list). Whatever is read maps to a GLUE2 cloud
//! service and to VM observations.
#![no_main]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use accelfed_fuzz::{now, parts};
use accelfed_provider::config::Config;
use accelfed_provider::openstack::api::{
    Flavor, Inventories, Project, ResourceProvider, Server, Traits, Usages,
};
use accelfed_provider::openstack::client::read_nova_page;
use accelfed_provider::openstack::{
    CloudState, OpenstackConfig, ProviderState, map, map_usage, observations,
};
use accelfed_schemas::names::SiteName;
use libfuzzer_sys::fuzz_target;
use serde::Deserialize;

fn config() -> &'static OpenstackConfig {
    static CONFIG: OnceLock<OpenstackConfig> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let text = include_str!("../../examples/openstack-site.toml");
        let mut config =
            Config::parse(Path::new("openstack-site.toml"), text).expect("the example");
        config.openstack.remove(0)
    })
}

#[derive(Deserialize, Default)]
struct Projects {
    projects: Vec<Project>,
}

#[derive(Deserialize, Default)]
struct Providers {
    resource_providers: Vec<ResourceProvider>,
}

/// A typed response, or its default for an empty part; `None` when it does not read.
fn json<'a, T: Deserialize<'a> + Default>(part: &'a [u8]) -> Option<T> {
    if part.is_empty() {
        return Some(T::default());
    }
    serde_json::from_slice(part).ok()
}

fuzz_target!(|data: &[u8]| {
    let [
        servers,
        flavors,
        projects,
        providers,
        inventories,
        usages,
        traits,
    ] = parts::<7>(data);
    let servers = if servers.is_empty() {
        Vec::new()
    } else {
        match read_nova_page::<Server>(servers) {
            Ok(page) => {
                let _ = page.next_marker();
                page.items
            }
            Err(error) => {
                assert!(!error.to_string().is_empty());
                return;
            }
        }
    };
    let flavors = if flavors.is_empty() {
        Vec::new()
    } else {
        match read_nova_page::<Flavor>(flavors) {
            Ok(page) => page.items,
            Err(_) => return,
        }
    };
    let Some(Projects { projects }) = json(projects) else {
        return;
    };
    let Some(Providers { resource_providers }) = json(providers) else {
        return;
    };
    let (Ok(inventories), Ok(usages), Ok(traits)) = (
        serde_json::from_slice::<Inventories>(if inventories.is_empty() {
            b"{\"inventories\":{}}"
        } else {
            inventories
        }),
        serde_json::from_slice::<Usages>(if usages.is_empty() {
            b"{\"usages\":{}}"
        } else {
            usages
        }),
        serde_json::from_slice::<Traits>(if traits.is_empty() {
            b"{\"traits\":[]}"
        } else {
            traits
        }),
    ) else {
        return;
    };
    let state = ProviderState {
        inventories: inventories.inventories,
        usages: usages.usages,
        traits: traits.traits,
    };
    let cloud = CloudState {
        compute_url: "https://nova.example.org/v2.1".into(),
        compute_microversion: Some("2.93".into()),
        flavors,
        flavor_access: BTreeMap::new(),
        projects,
        project_errors: BTreeMap::new(),
        servers,
        providers: resource_providers
            .into_iter()
            .map(|rp| (rp, state.clone()))
            .collect(),
        images: Vec::new(),
        quotas: BTreeMap::new(),
        degraded: Vec::new(),
    };
    let mapped = map(config(), &cloud);
    let (usage, _) = map_usage(config(), &cloud);
    assert_eq!(
        usage.len(),
        mapped.usage.len(),
        "the provider and the meter see other VMs"
    );
    let site = SiteName::new("FUZZ-SITE").expect("a valid name");
    let now = now();
    let (found, _) = observations(&site, &usage, now - chrono::Duration::days(62), now);
    for observation in &found {
        if let Some(end) = observation.end {
            assert!(
                end >= observation.start,
                "a VM observed to end before it started: {observation:?}"
            );
        }
    }
});
