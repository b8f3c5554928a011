//! The meter reads each listing once: the installed GPUs it bounds usage with come from the
//! listings its usage pass read, per backend, and are the figures `provide` publishes
//! (`Installed::from_snapshot` of `gather`'s snapshot), on the test kit's fake OpenStack and
//! Kubernetes APIs, fake Slurm commands with recorded output, and a static site.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use chrono::Utc;

use accelfed_accounting::meter::Installed;
use accelfed_provider::config::Config;
use accelfed_testkit::{fake_kubernetes, fake_openstack};

use super::{at, config};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../provider/tests/fixtures")
}

/// One meter pass and one provide pass over `config` give the same installed GPUs, and some.
async fn assert_meter_installed_is_published(config: &Config) -> Installed {
    let now = Utc::now();
    let observed = accelfed_provider::observe(config, at("2023-11-01T00:00:00Z"), now).await;
    assert!(observed.failures.is_empty(), "{:?}", observed.failures);
    assert!(observed.uncounted.is_empty(), "{:?}", observed.uncounted);
    let gathered = accelfed_provider::gather(config, now).await.unwrap();
    let metered = Installed::from_accelerators(&observed.installed);
    assert_eq!(metered, Installed::from_snapshot(&gathered.snapshot));
    assert_ne!(metered, Installed::default(), "the fixtures have GPUs");
    metered
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openstack_placement_read_once_by_the_meter() {
    let cloud = fake_openstack::FakeCloud::start(fake_openstack::Behaviour::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let clouds = dir.path().join("clouds.yaml");
    std::fs::write(&clouds, cloud.clouds_yaml(fake_openstack::PASSWORD)).unwrap();
    let devices = std::fs::read_to_string(fixtures().join("openstack/devices.toml")).unwrap();
    let text = format!(
        "[site]\nname = \"SITE-A\"\ngocdb_id = \"1G0\"\n\n[[openstack]]\nid = \"cloud\"\n\
         cloud = \"fake\"\nclouds_file = {clouds:?}\ntimeout = 5\n\
         [openstack.vo_map]\nvo-atlas = \"atlas\"\nvo-cms = \"cms\"\n{devices}"
    );
    let before = cloud.count("/resource_providers");
    let observed =
        accelfed_provider::observe(&config(&text), at("2026-11-01T00:00:00Z"), Utc::now()).await;
    assert!(observed.failures.is_empty(), "{:?}", observed.failures);
    assert!(
        cloud.count("/resource_providers") > before,
        "Placement read"
    );
    assert_eq!(
        cloud.count("/usages"),
        0,
        "the meter needs no Placement usages"
    );
    for service in ["/image", "/limits", "os-flavor-access"] {
        assert_eq!(cloud.count(service), 0, "the meter asked {service}");
    }
    assert_meter_installed_is_published(&config(&text)).await;
}

#[tokio::test]
async fn kubernetes_nodes_of_the_pod_listing() {
    const TOKEN: &str = "sa-token-4f1d";
    let api = fake_kubernetes::FakeApi::start(fake_kubernetes::Behaviour {
        token: TOKEN.to_owned(),
        ..fake_kubernetes::Behaviour::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, api.kubeconfig(TOKEN)).unwrap();
    let text = format!(
        "[site]\nname = \"SITE-A\"\n\n[[kubernetes]]\nid = \"k8s\"\ncluster = \"gpu-cluster\"\n\
         kubeconfig = {kubeconfig:?}\ncontext = \"fixture\"\n\
         [kubernetes.namespaces]\ncms = {{ vo = \"cms\", fqan = \"/cms\" }}\n"
    );
    assert_meter_installed_is_published(&config(&text)).await;
}

#[tokio::test]
async fn slurm_nodes_listed_beside_sacct() {
    let recorded = fixtures().join("slurm/v0.0.38");
    let dir = tempfile::tempdir().unwrap();
    for (name, file) in [
        ("sinfo", "sinfo-running.json"),
        ("scontrol", "scontrol-partitions.txt"),
        ("sacct", "sacct.json"),
    ] {
        let path = dir.path().join(name);
        let body = format!("#!/bin/sh\ncat {}\n", recorded.join(file).display());
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let text = format!(
        "[site]\nname = \"SITE-A\"\n\n[[slurm]]\nid = \"hpc\"\n[slurm.cli]\nbin_dir = {:?}\n",
        dir.path()
    );
    assert_meter_installed_is_published(&config(&text)).await;
}

#[tokio::test]
async fn static_services_bound_the_manual_usage() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/site.toml");
    let text = std::fs::read_to_string(example).unwrap();
    assert_meter_installed_is_published(&config(&text)).await;
}
