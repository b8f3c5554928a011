//! The recorded cloud's responses (`fixtures/openstack/`) and the configuration that maps them,
//! shared by the provider's and the meter's tests over them (included with `#[path]`).

use std::path::Path;

use accelfed_provider::openstack::OpenstackConfig;
use accelfed_provider::openstack::api::{Flavor, Project, Server};
use serde::Deserialize;

/// A captured response, read into the type the backend reads it into.
pub fn fixture<T: for<'de> Deserialize<'de>>(name: &str) -> T {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openstack")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[derive(Deserialize)]
pub struct Flavors {
    pub flavors: Vec<Flavor>,
}
#[derive(Deserialize)]
pub struct Servers {
    pub servers: Vec<Server>,
}
#[derive(Deserialize)]
pub struct Projects {
    pub projects: Vec<Project>,
}

/// The `[[openstack]]` table of the recorded cloud (tests edit it as text).
pub const CONFIG: &str = concat!(
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

/// The recorded cloud's `[[openstack]]` table: its VO projects and its device tables.
pub fn config() -> OpenstackConfig {
    #[derive(Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    toml::from_str::<File>(CONFIG).unwrap().openstack.remove(0)
}
