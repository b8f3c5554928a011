//! The OpenStack API objects accelfed reads, as the services send them (Keystone v3, Nova 2.1 to
//! 2.9x, Placement 1.x, Glance v2). Only the fields used are declared; serde ignores the rest, so a
//! newer cloud that adds fields still parses. Optional everywhere the field depends on the
//! microversion or the caller's role.

use std::collections::BTreeMap;

use serde::Deserialize;

/// A Nova flavor (`GET /flavors/detail`). `extra_specs` is inline from microversion 2.61; on
/// older clouds the client fills it from `GET /flavors/{id}/os-extra_specs`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Flavor {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub vcpus: u32,
    /// MiB.
    #[serde(default)]
    pub ram: u64,
    /// GB.
    #[serde(default)]
    pub disk: u32,
    #[serde(rename = "os-flavor-access:is_public", default = "yes")]
    pub is_public: bool,
    #[serde(rename = "OS-FLV-DISABLED:disabled", default)]
    pub disabled: bool,
    #[serde(default)]
    pub extra_specs: Option<BTreeMap<String, String>>,
}

fn yes() -> bool {
    true
}

pub use super::server::Server;

/// A Keystone v3 project. Site properties such as `VO` are top-level keys next to the standard
/// ones (Keystone stores unknown project attributes as "extra"), hence the flattened map.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Project {
    pub id: String,
    pub name: String,
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default)]
    pub domain_id: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// A Placement resource provider (`GET /resource_providers`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ResourceProvider {
    pub uuid: String,
    pub name: String,
    #[serde(default)]
    pub parent_provider_uuid: Option<String>,
    #[serde(default)]
    pub root_provider_uuid: Option<String>,
}

/// One resource class of a provider's inventory.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Inventory {
    pub total: u64,
    #[serde(default)]
    pub reserved: u64,
    #[serde(default = "one")]
    pub allocation_ratio: f64,
}

fn one() -> f64 {
    1.0
}

/// `GET /resource_providers/{uuid}/inventories`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Inventories {
    pub inventories: BTreeMap<String, Inventory>,
}

/// `GET /resource_providers/{uuid}/usages`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Usages {
    pub usages: BTreeMap<String, u64>,
}

/// `GET /resource_providers/{uuid}/traits`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Traits {
    pub traits: Vec<String>,
}

/// A Glance v2 image; GPU facts are free-form properties, top-level keys in v2.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GlanceImage {
    pub id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub visibility: Option<String>,
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub os_distro: Option<String>,
    #[serde(default)]
    pub os_version: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(flatten)]
    pub properties: BTreeMap<String, serde_json::Value>,
}

/// A project's quota as Nova's `GET /limits?tenant_id={project}` states it (`limits.absolute`): only
/// what a share publishes. `-1` is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct ProjectQuota {
    #[serde(default, rename = "maxTotalInstances")]
    pub instances: Option<i64>,
    #[serde(default, rename = "maxTotalCores")]
    pub cores: Option<i64>,
}

/// `GET /flavors/{id}/os-flavor-access`: the projects a private flavor is shared with.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FlavorAccess {
    pub flavor_id: String,
    pub tenant_id: String,
}

/// A Keystone v3 service catalog entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CatalogService {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub name: Option<String>,
    pub endpoints: Vec<CatalogEndpoint>,
}

/// One URL of a catalog entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CatalogEndpoint {
    pub interface: String,
    #[serde(default)]
    pub region_id: Option<String>,
    #[serde(default)]
    pub region: Option<String>,
    pub url: String,
}

/// Picks the URL of `kind` for `interface` in `region` (any region when `None`), as keystoneauth
/// does; `None` when the catalog has no such endpoint.
pub fn catalog_url<'a>(
    catalog: &'a [CatalogService],
    kind: &str,
    interface: &str,
    region: Option<&str>,
) -> Option<&'a str> {
    catalog
        .iter()
        .filter(|service| service.kind == kind)
        .flat_map(|service| &service.endpoints)
        .find(|endpoint| {
            let interface_ok =
                endpoint.interface == interface || endpoint.interface == format!("{interface}URL");
            let region_ok = region.is_none_or(|wanted| {
                endpoint.region_id.as_deref() == Some(wanted)
                    || endpoint.region.as_deref() == Some(wanted)
            });
            interface_ok && region_ok
        })
        .map(|endpoint| endpoint.url.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/tests/fixtures/openstack/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    #[derive(Deserialize)]
    struct Catalog {
        catalog: Vec<CatalogService>,
    }

    #[test]
    fn real_catalog_yields_each_service_url() {
        let catalog: Catalog = serde_json::from_str(&fixture("keystone-catalog.json")).unwrap();
        let url = |kind| catalog_url(&catalog.catalog, kind, "public", Some("RegionOne"));
        assert_eq!(url("identity"), Some("http://127.0.0.1:5000/v3"));
        assert_eq!(url("image"), Some("http://127.0.0.1:9292"));
        assert!(
            url("compute")
                .unwrap()
                .starts_with("http://127.0.0.1:8774/v2.1")
        );
        assert!(url("placement").is_some());
        assert_eq!(
            catalog_url(&catalog.catalog, "compute", "public", Some("Elsewhere")),
            None
        );
    }

    #[test]
    fn servers_parse_at_every_captured_microversion() {
        #[derive(Deserialize)]
        struct Servers {
            servers: Vec<Server>,
        }
        for (file, embedded) in [
            ("nova-servers-detail-alltenants-2.1.json", false),
            ("nova-servers-detail-alltenants-2.47.json", true),
            ("nova-servers-detail-alltenants-2.93.json", true),
        ] {
            let servers: Servers = serde_json::from_str(&fixture(file)).unwrap();
            assert_eq!(servers.servers.len(), 6, "{file}");
            for server in &servers.servers {
                assert_eq!(server.flavor_specs().is_some(), embedded, "{file}");
                assert_eq!(server.flavor_id().is_some(), !embedded, "{file}");
            }
        }
    }
}
