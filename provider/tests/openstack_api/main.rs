//! The OpenStack provider and meter through the real client (reqwest, Keystone v3 tokens,
//! microversions, pagination) against [`server::FakeCloud`]: a local test HTTP server that answers
//! like the OpenStack APIs, serving the recorded responses of the small test cloud
//! (`provider/tests/fixtures/openstack/`, shaped exactly as the services send them) and injecting the faults
//! a real cloud cannot be made to produce on demand. The real cloud itself is exercised by
//! `tests/tests/openstack_cloud.rs`.

#![allow(clippy::unwrap_used)]

mod ca;
mod faults;
mod idle;
mod microversion;
mod project_faults;

use accelfed_testkit::fake_openstack as server;

use std::path::Path;

use accelfed_provider::config::Config;
use accelfed_provider::openstack::OpenstackConfig;

use server::FakeCloud;

/// The `[[openstack]]` table the tests use: the recorded cloud's PCI alias and vGPU type, both VO
/// projects mapped by name.
pub fn openstack_table(clouds_file: &Path, timeout: u64) -> String {
    format!(
        concat!(
            r#"
[[openstack]]
id = "research-cloud"
cloud = "fake"
clouds_file = "{}"
timeout = {timeout}
[openstack.vo_map]
vo-atlas = "atlas"
vo-cms = "cms"
"#,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/openstack/devices.toml"
            ))
        ),
        clouds_file.display(),
        timeout = timeout,
    )
}

/// A cloud's configuration with a `clouds.yaml` of its own.
#[derive(Debug)]
pub struct Setup {
    pub config: OpenstackConfig,
    pub dir: tempfile::TempDir,
}

pub fn setup(cloud: &FakeCloud, timeout: u64) -> Setup {
    setup_with(&cloud.clouds_yaml(server::PASSWORD), timeout)
}

/// [`setup`] with this `clouds.yaml` text.
pub fn setup_with(clouds_yaml: &str, timeout: u64) -> Setup {
    #[derive(serde::Deserialize)]
    struct File {
        openstack: Vec<OpenstackConfig>,
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let clouds = dir.path().join("clouds.yaml");
    std::fs::write(&clouds, clouds_yaml).expect("write clouds.yaml");
    let mut file: File =
        toml::from_str(&openstack_table(&clouds, timeout)).expect("the test's [[openstack]]");
    Setup {
        config: file.openstack.remove(0),
        dir,
    }
}

/// A whole site: the example static site plus this cloud, as `accelfed provide` loads it.
pub fn site(setup: &Setup) -> Config {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let mut source = std::fs::read_to_string(&example).expect("examples/site.toml");
    source.push_str(&openstack_table(
        &setup.dir.path().join("clouds.yaml"),
        setup.config.timeout,
    ));
    Config::parse(&example, &source).expect("a valid site")
}
