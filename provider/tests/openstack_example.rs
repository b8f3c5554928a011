//! The shipped OpenStack example configuration parses and validates.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use accelfed_provider::config::{Config, ProviderConfig};

#[test]
fn openstack_example_parses_and_validates() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/openstack-site.toml");
    let loaded = Config::load(&path).unwrap();
    let providers = loaded.config.providers();
    assert_eq!(providers.len(), 1);
    let ProviderConfig::Openstack(openstack) = providers[0] else {
        panic!("not openstack")
    };
    assert_eq!(openstack.cloud.as_deref(), Some("example"));
    assert_eq!(
        openstack.pci_alias["nvidia-v100"].pci_class().as_deref(),
        Some("CUSTOM_PCI_10DE_1DB4")
    );
}

#[test]
fn a_repeated_convention_is_located() {
    let source =
        "[site]\nname = \"S\"\n[[openstack]]\nid = \"c\"\nconventions = [\"egi\", \"egi\"]\n";
    let err = Config::parse(Path::new("s.toml"), source)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("s.toml:5:15: openstack.conventions:"),
        "{err}"
    );
}
