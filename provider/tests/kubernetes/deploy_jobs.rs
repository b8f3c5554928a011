//! `deploy/kubernetes/`'s CronJobs: each step (a container or an init container) runs accelfed with
//! the ConfigMap's `site.toml` and mounts exactly what it needs: the site token and the federation's
//! CA where it talks to the federation (provide, ship), the service-account token where it reads the
//! cluster (provide, meter), the spool where it keeps records (meter, ship), and the one
//! ReadWriteOnce spool is used by one pod only, so no two nodes ever need it at once.

use std::path::{Path, PathBuf};

use k8s_openapi::api::batch::v1::CronJob;
use k8s_openapi::api::core::v1::{Container, PodSpec, Volume};

use accelfed_provider::config::Config;

use super::deploy::{manifests, site_toml};

/// Where Kubernetes mounts a pod's service account, and where `in_cluster` reads it.
const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
const IMAGE: &str = "example.invalid/accelfed:0.1.0";

/// The pod spec of a CronJob.
fn pod(job: &CronJob) -> &PodSpec {
    let job_spec = job
        .spec
        .as_ref()
        .unwrap()
        .job_template
        .spec
        .as_ref()
        .unwrap();
    job_spec.template.spec.as_ref().unwrap()
}

/// Where `container` mounts the pod's volume matched by `pick`.
fn mount_of(
    pod: &PodSpec,
    container: &Container,
    pick: impl Fn(&Volume) -> bool,
) -> Option<PathBuf> {
    let volume = pod.volumes.iter().flatten().find(|v| pick(v))?;
    let mount = container
        .volume_mounts
        .iter()
        .flatten()
        .find(|m| m.name == volume.name)?;
    Some(PathBuf::from(&mount.mount_path))
}

/// What one step is expected to mount and read.
struct Step {
    job: &'static str,
    schedule: &'static str,
    command: &'static str,
    init: bool,
    reads_cluster: bool,
    talks_to_federation: bool,
    keeps_records: bool,
}

const STEPS: [Step; 3] = [
    Step {
        job: "accelfed-provide",
        schedule: "*/10 * * * *",
        command: "provide",
        init: false,
        reads_cluster: true,
        talks_to_federation: true,
        keeps_records: false,
    },
    Step {
        job: "accelfed-accounting",
        schedule: "17 * * * *",
        command: "meter",
        init: true,
        reads_cluster: true,
        talks_to_federation: false,
        keeps_records: true,
    },
    Step {
        job: "accelfed-accounting",
        schedule: "17 * * * *",
        command: "ship",
        init: false,
        reads_cluster: false,
        talks_to_federation: true,
        keeps_records: true,
    },
];

#[test]
fn each_step_mounts_the_config_and_only_the_secrets_and_volumes_it_needs() {
    let manifests = manifests();
    let text = site_toml(&manifests);
    Config::parse(Path::new("site.toml"), &text).unwrap();
    // `[accounting]` and `[publish]` are other crates' tables (the binary reads them with their
    // types, `cli/src/site_file.rs`); here only their paths are compared.
    let file: toml::Table = toml::from_str(&text).unwrap();
    let path = |value: &toml::Value| PathBuf::from(value.as_str().unwrap());
    let token_file = path(&file["accounting"]["ship"]["token_file"]);
    let ca = path(&file["accounting"]["ship"]["ca"]);
    let spool = path(&file["accounting"]["spool"]);
    assert_eq!(
        path(&file["publish"]["registry"]["token_file"]),
        token_file,
        "one site token"
    );
    assert_eq!(
        path(&file["publish"]["registry"]["ca"]),
        ca,
        "one federation CA"
    );

    let account = manifests.service_accounts[0].metadata.name.clone().unwrap();
    let namespace = manifests.namespaces[0].metadata.name.clone().unwrap();
    let [secret] = manifests.secrets.as_slice() else {
        panic!("one Secret")
    };
    let secret_name = secret.metadata.name.clone().unwrap();
    let token_key = token_file.file_name().unwrap().to_str().unwrap();
    assert!(secret.string_data.as_ref().unwrap().contains_key(token_key));
    let ca_map = manifests
        .config_maps
        .iter()
        .find(|map| map.metadata.name.as_deref() == Some("accelfed-federation-ca"))
        .expect("the ConfigMap accelfed-federation-ca (federation-ca.yaml.example)");
    assert!(
        ca_map
            .data
            .as_ref()
            .unwrap()
            .keys()
            .all(|key| key.ends_with(".pem")),
        "ca = a folder of *.pem"
    );
    let claim = manifests
        .claims
        .iter()
        .find(|claim| claim.metadata.name.as_deref() == Some("accelfed-spool"))
        .expect("the spool's PersistentVolumeClaim accelfed-spool (spool.yaml)");
    let claim_name = claim.metadata.name.clone().unwrap();
    let read_write_once = claim
        .spec
        .as_ref()
        .unwrap()
        .access_modes
        .iter()
        .flatten()
        .any(|m| m == "ReadWriteOnce");

    let jobs: std::collections::BTreeSet<_> = STEPS.iter().map(|s| s.job).collect();
    assert_eq!(
        manifests.cron_jobs.len(),
        jobs.len(),
        "the CronJobs: {jobs:?}"
    );
    let mut spool_users = std::collections::BTreeSet::new();
    for step in STEPS {
        let command = step.command;
        let job = manifests
            .cron_jobs
            .iter()
            .find(|job| job.metadata.name.as_deref() == Some(step.job))
            .unwrap_or_else(|| panic!("no CronJob {}", step.job));
        assert_eq!(job.metadata.namespace.as_deref(), Some(namespace.as_str()));
        assert_eq!(
            job.spec.as_ref().unwrap().schedule,
            step.schedule,
            "{command}"
        );
        let pod = pod(job);
        assert_eq!(
            pod.service_account_name.as_deref(),
            Some(account.as_str()),
            "{command}"
        );
        let containers = if step.init {
            pod.init_containers.as_deref().unwrap_or_default()
        } else {
            &pod.containers[..]
        };
        let container = containers
            .iter()
            .find(|c| c.name == command || c.args.as_ref().is_some_and(|a| a[0] == command));
        let container =
            container.unwrap_or_else(|| panic!("{}: no container running {command}", step.job));
        assert_eq!(container.image.as_deref(), Some(IMAGE), "{command}");
        assert_eq!(
            container.command.as_deref(),
            Some(&["/usr/bin/accelfed".to_owned()][..])
        );
        let args = container.args.clone().unwrap();
        assert_eq!(args[0], command);
        assert!(
            args.windows(2).any(|w| w == ["--log-format", "json"]),
            "{command}: {args:?}"
        );
        let config_at = args
            .windows(2)
            .find(|w| w[0] == "--config")
            .map(|w| PathBuf::from(&w[1]));
        let config_dir = mount_of(pod, container, |v| {
            v.config_map
                .as_ref()
                .is_some_and(|c| c.name == "accelfed-site")
        });
        assert_eq!(
            config_at,
            config_dir.map(|dir| dir.join("site.toml")),
            "{command}: --config"
        );

        let token_dir = mount_of(pod, container, |v| {
            v.secret
                .as_ref()
                .is_some_and(|s| s.secret_name.as_ref() == Some(&secret_name))
        });
        let ca_dir = mount_of(pod, container, |v| {
            v.config_map
                .as_ref()
                .is_some_and(|c| Some(&c.name) == ca_map.metadata.name.as_ref())
        });
        if step.talks_to_federation {
            assert_eq!(
                token_dir.as_deref(),
                token_file.parent(),
                "{command}: the site token"
            );
            assert_eq!(
                ca_dir.as_deref(),
                Some(ca.as_path()),
                "{command}: the federation's CA"
            );
        } else {
            assert_eq!(token_dir, None, "{command} mounts no site token");
            assert_eq!(ca_dir, None, "{command} needs no federation CA");
        }

        // The cluster's token: automounted in a pod of one step, projected into one container in
        // a pod of several.
        let automount = pod.automount_service_account_token == Some(true);
        let projected = mount_of(pod, container, |v| {
            v.projected.as_ref().is_some_and(|p| {
                p.sources
                    .iter()
                    .flatten()
                    .any(|s| s.service_account_token.is_some())
            })
        });
        assert!(
            !automount
                || pod.containers.len() + pod.init_containers.as_ref().map_or(0, Vec::len) == 1,
            "{}: automountServiceAccountToken gives every container the cluster's token",
            step.job
        );
        let reads_cluster =
            automount || projected.as_deref() == Some(Path::new(SERVICE_ACCOUNT_DIR));
        assert_eq!(
            reads_cluster, step.reads_cluster,
            "{command}: the service-account token"
        );
        if command == "provide" {
            assert!(
                args.windows(2).any(|w| w == ["--publish", "registry"]),
                "{args:?}"
            );
        }

        let spool_dir = mount_of(pod, container, |v| {
            v.persistent_volume_claim
                .as_ref()
                .is_some_and(|c| c.claim_name == claim_name)
        });
        if step.keeps_records {
            assert_eq!(spool_dir.as_deref(), spool.parent(), "{command}: the spool");
            spool_users.insert(step.job);
        } else {
            assert_eq!(spool_dir, None, "{command} keeps no spool");
        }

        let security = container.security_context.as_ref().unwrap();
        assert_eq!(security.read_only_root_filesystem, Some(true), "{command}");
        assert_eq!(
            security.allow_privilege_escalation,
            Some(false),
            "{command}"
        );
        let pod_security = pod.security_context.as_ref().unwrap();
        assert_eq!(pod_security.run_as_non_root, Some(true), "{command}");
    }
    if read_write_once {
        assert_eq!(
            spool_users.len(),
            1,
            "a ReadWriteOnce spool in several CronJobs: {spool_users:?}"
        );
    }
}
