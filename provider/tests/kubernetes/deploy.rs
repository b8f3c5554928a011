//! `deploy/kubernetes/`: every manifest (`*.yaml`, and the Secret's `*.yaml.example`) is read into
//! `k8s-openapi`'s types (a key the type does not know, such as a misspelt field, fails the round
//! trip), the ClusterRole grants exactly the API requests the backend makes against the fixture
//! server (no fewer, no more). `deploy_jobs.rs` checks that the CronJobs, the ConfigMap's
//! `site.toml`, the Secret, the CA and the volume agree on names and paths.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::batch::v1::CronJob;
use k8s_openapi::api::core::v1::{
    ConfigMap, Namespace, PersistentVolumeClaim, Secret, ServiceAccount,
};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use serde::Serialize;
use serde::de::DeserializeOwned;

use accelfed_provider::config::Config;
use accelfed_provider::kubernetes::KubeClient;

use super::server::{Behaviour, FakeApi};
use super::{TOKEN, at, config, setup};

/// Every manifest of `deploy/kubernetes/`, by kind.
#[derive(Debug, Default)]
pub(crate) struct Manifests {
    pub(crate) namespaces: Vec<Namespace>,
    pub(crate) service_accounts: Vec<ServiceAccount>,
    pub(crate) cluster_roles: Vec<ClusterRole>,
    pub(crate) bindings: Vec<ClusterRoleBinding>,
    pub(crate) config_maps: Vec<ConfigMap>,
    pub(crate) secrets: Vec<Secret>,
    pub(crate) claims: Vec<PersistentVolumeClaim>,
    pub(crate) cron_jobs: Vec<CronJob>,
    pub(crate) daemon_sets: Vec<DaemonSet>,
}

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/kubernetes")
}

pub(crate) fn manifests() -> Manifests {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.ends_with(".yaml") || name.ends_with(".yaml.example")
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no manifests in {}", folder().display());
    let mut all = Manifests::default();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for document in serde_yaml_ng::Deserializer::from_str(&text) {
            let value: serde_json::Value = serde::Deserialize::deserialize(document)
                .unwrap_or_else(|err| panic!("{}: {err}", file.display()));
            add(&mut all, &file, value);
        }
    }
    all
}

fn add(all: &mut Manifests, file: &Path, value: serde_json::Value) {
    let at = file.display();
    match value["kind"].as_str() {
        Some("Namespace") => all.namespaces.push(typed(&at, value)),
        Some("ServiceAccount") => all.service_accounts.push(typed(&at, value)),
        Some("ClusterRole") => all.cluster_roles.push(typed(&at, value)),
        Some("ClusterRoleBinding") => all.bindings.push(typed(&at, value)),
        Some("ConfigMap") => all.config_maps.push(typed(&at, value)),
        Some("Secret") => all.secrets.push(typed(&at, value)),
        Some("PersistentVolumeClaim") => all.claims.push(typed(&at, value)),
        Some("CronJob") => all.cron_jobs.push(typed(&at, value)),
        Some("DaemonSet") => all.daemon_sets.push(typed(&at, value)),
        other => panic!("{at}: a manifest of kind {other:?} this test does not read"),
    }
}

/// `value` as `T`, checked to serialize back to itself: `k8s-openapi` skips keys it does not know,
/// so a misspelt field would otherwise pass unseen.
fn typed<T: DeserializeOwned + Serialize>(
    at: &impl std::fmt::Display,
    value: serde_json::Value,
) -> T {
    let object: T =
        serde_json::from_value(value.clone()).unwrap_or_else(|err| panic!("{at}: {err}"));
    let back = serde_json::to_value(&object).unwrap();
    if let Some(path) = difference(&value, &back, String::new()) {
        panic!("{at}: {path}: in the file, but not as the Kubernetes type reads it");
    }
    object
}

/// The first place (a dotted path) where `file` and `typed` differ.
fn difference(file: &serde_json::Value, typed: &serde_json::Value, at: String) -> Option<String> {
    use serde_json::Value::{Array, Object};
    match (file, typed) {
        (Object(a), Object(b)) => a.iter().find_map(|(key, value)| match b.get(key) {
            Some(other) => difference(value, other, format!("{at}.{key}")),
            None => Some(format!("{at}.{key}")),
        }),
        (Array(a), Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| difference(x, y, format!("{at}[{i}]"))),
        _ => (file != typed).then_some(at),
    }
}

/// The RBAC permission one request needs: (API group, resource, verb). Requests are recorded as
/// `GET <path>?<query>` by the fixture server.
fn permission(request: &str) -> (String, String, String) {
    let (method, target) = request.split_once(' ').unwrap();
    assert_eq!(method, "GET", "the backend only reads: {request}");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (group, rest) = match segments.as_slice() {
        ["api", _version, rest @ ..] => ("", rest),
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => panic!("not a Kubernetes API path: {request}"),
    };
    let (resource, named) = match rest {
        [resource] => (*resource, false),
        ["namespaces", _, resource] => (*resource, false),
        ["namespaces", _, resource, _] | [resource, _] => (*resource, true),
        _ => panic!("a path this test cannot map to a permission: {request}"),
    };
    let watch = query
        .split('&')
        .any(|pair| pair == "watch=true" || pair == "watch=1");
    let verb = match (named, watch) {
        (true, _) => "get",
        (false, true) => "watch",
        (false, false) => "list",
    };
    (group.to_owned(), resource.to_owned(), verb.to_owned())
}

/// Every (group, resource, verb) the rules grant, refusing what the check cannot compare (a
/// wildcard, resource names, non-resource URLs).
fn granted(role: &ClusterRole) -> BTreeSet<(String, String, String)> {
    let mut granted = BTreeSet::new();
    for rule in role.rules.iter().flatten() {
        assert!(
            rule.resource_names.is_none() && rule.non_resource_urls.is_none(),
            "{rule:?}"
        );
        for group in rule.api_groups.iter().flatten() {
            for resource in rule.resources.iter().flatten() {
                for verb in &rule.verbs {
                    assert!(
                        [group, resource, verb].iter().all(|name| *name != "*"),
                        "a wildcard grants more than the backend asks for: {rule:?}"
                    );
                    granted.insert((group.clone(), resource.clone(), verb.clone()));
                }
            }
        }
    }
    granted
}

#[tokio::test]
async fn the_cluster_role_grants_exactly_what_provide_and_meter_request() {
    let setup = setup(Behaviour::default()).await;
    let config = config(&setup, "");
    let gathered = accelfed_provider::gather(&config, at(14)).await.unwrap();
    assert!(gathered.failures.is_empty(), "{:?}", gathered.failures);
    let observed = accelfed_provider::observe(&config, at(0), at(14)).await;
    assert!(observed.failures.is_empty(), "{:?}", observed.failures);
    let requests = setup.api.seen.lock().unwrap().requests.clone();
    let needed: BTreeSet<_> = requests.iter().map(|r| permission(r)).collect();
    let paths: BTreeSet<&str> = requests
        .iter()
        .map(|r| r.split(['?', ' ']).nth(1).unwrap())
        .collect();
    // The four lists of rbac.yaml's comment, and so of its rules.
    assert_eq!(
        paths,
        BTreeSet::from([
            "/api/v1/namespaces",
            "/api/v1/nodes",
            "/api/v1/pods",
            "/api/v1/resourcequotas"
        ])
    );

    let manifests = manifests();
    let [role] = manifests.cluster_roles.as_slice() else {
        panic!("one ClusterRole expected: {:?}", manifests.cluster_roles);
    };
    assert_eq!(
        granted(role),
        needed,
        "the ClusterRole against the backend's requests"
    );
}

#[tokio::test]
async fn the_site_toml_of_the_config_map_reads_the_cluster_in_cluster() {
    let manifests = manifests();
    let site = site_toml(&manifests);
    let mut config = Config::parse(Path::new("site.toml"), &site).unwrap();
    let kubernetes = &mut config.kubernetes[0];
    assert!(*kubernetes.in_cluster.get_ref() && kubernetes.service_account_dir.is_none());
    // The pod's service account, as Kubernetes mounts it, in a folder of the test's own.
    let api = FakeApi::start(Behaviour {
        token: TOKEN.to_owned(),
        ..Behaviour::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), TOKEN).unwrap();
    std::fs::write(dir.path().join("ca.crt"), &api.ca_pem).unwrap();
    kubernetes.service_account_dir = Some(toml::Spanned::new(0..0, dir.path().to_owned()));
    let port = api.url.rsplit(':').next().unwrap().to_owned();
    let environment = move |name: &str| match name {
        "KUBERNETES_SERVICE_HOST" => Some("127.0.0.1".to_owned()),
        "KUBERNETES_SERVICE_PORT" => Some(port.clone()),
        _ => None,
    };
    let inventory = KubeClient::with_environment(kubernetes, &environment)
        .await
        .unwrap()
        .inventory()
        .await
        .unwrap();
    assert!(!inventory.nodes.is_empty());
}

/// The `site.toml` of the one ConfigMap that holds one.
pub(crate) fn site_toml(manifests: &Manifests) -> String {
    let mut sites = manifests
        .config_maps
        .iter()
        .filter_map(|map| map.data.as_ref()?.get("site.toml"));
    let site = sites.next().expect("a ConfigMap with site.toml");
    assert!(sites.next().is_none(), "one ConfigMap with site.toml");
    site.clone()
}

/// The agent's DaemonSet: its flags name the paths its volumes mount (the state on the node, the
/// host's /proc), it stays on the node's loopback, and it holds no capability and no API token.
#[test]
fn the_agent_daemonset_agrees_with_its_volumes() {
    let manifests = manifests();
    let [daemon_set] = manifests.daemon_sets.as_slice() else {
        panic!(
            "one DaemonSet (agent.yaml), found {}",
            manifests.daemon_sets.len()
        )
    };
    assert_eq!(daemon_set.metadata.namespace.as_deref(), Some("accelfed"));
    let pod = daemon_set
        .spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .expect("pod spec");
    assert_eq!(pod.host_pid, Some(true), "NVML names processes by host PID");
    assert_eq!(pod.automount_service_account_token, Some(false));
    let [container] = pod.containers.as_slice() else {
        panic!("one container")
    };
    let args = container.args.clone().unwrap_or_default();
    let flag = |name: &str| {
        let at = args
            .iter()
            .position(|a| a == name)
            .unwrap_or_else(|| panic!("{name} missing"));
        args[at + 1].clone()
    };
    assert!(
        flag("--listen").starts_with("127.0.0.1:"),
        "plain HTTP stays on the node"
    );
    let mounts = container.volume_mounts.clone().unwrap_or_default();
    let mounted = |path: &str| {
        mounts
            .iter()
            .any(|m| path.starts_with(&format!("{}/", m.mount_path)) || path == m.mount_path)
    };
    assert!(
        mounted(&flag("--state")),
        "the state file is on a mounted volume"
    );
    assert!(mounted(&flag("--proc-root")), "the host's /proc is mounted");
    // --publish writes into the folder the meter reads: the same claim, mounted where the site
    // file's [accounting.agents] documents says, one file per node.
    let publish = PathBuf::from(flag("--publish"));
    assert_eq!(
        publish.file_name().and_then(|n| n.to_str()),
        Some("$(NODE_NAME).json")
    );
    let folder = publish.parent().unwrap();
    let claim_at = |pod: &k8s_openapi::api::core::v1::PodSpec,
                    mounts: &[k8s_openapi::api::core::v1::VolumeMount]| {
        mounts.iter().find_map(|m| {
            let volume = pod.volumes.iter().flatten().find(|v| v.name == m.name)?;
            let claim = volume.persistent_volume_claim.as_ref()?;
            Some((claim.claim_name.clone(), PathBuf::from(&m.mount_path)))
        })
    };
    let (claim, at) = claim_at(pod, &mounts).expect("--publish on a claimed volume");
    assert_eq!(at, folder);
    let shared = manifests
        .claims
        .iter()
        .find(|c| c.metadata.name.as_deref() == Some(claim.as_str()))
        .expect("the agents' claim");
    let modes = shared.spec.as_ref().unwrap().access_modes.clone();
    assert_eq!(
        modes,
        Some(vec!["ReadWriteMany".to_owned()]),
        "every node writes"
    );
    let env = container.env.clone().unwrap_or_default();
    assert!(env.iter().any(|e| {
        e.name == "NODE_NAME"
            && e.value_from
                .as_ref()
                .and_then(|v| v.field_ref.as_ref())
                .is_some_and(|f| f.field_path == "spec.nodeName")
    }));
    let site: toml::Table = toml::from_str(&site_toml(&manifests)).unwrap();
    let documents = PathBuf::from(site["accounting"]["agents"]["documents"].as_str().unwrap());
    let meter = manifests
        .cron_jobs
        .iter()
        .flat_map(|job| {
            let spec = job
                .spec
                .as_ref()
                .unwrap()
                .job_template
                .spec
                .as_ref()
                .unwrap();
            let pod = spec.template.spec.clone().unwrap();
            let containers: Vec<_> = pod
                .init_containers
                .iter()
                .flatten()
                .chain(&pod.containers)
                .filter(|c| c.args.as_ref().is_some_and(|a| a[0] == "meter"))
                .cloned()
                .collect();
            containers.into_iter().map(move |c| (pod.clone(), c))
        })
        .next()
        .expect("a CronJob running meter");
    let meter_mounts = meter.1.volume_mounts.clone().unwrap_or_default();
    let meter_claims: Vec<_> = meter_mounts
        .iter()
        .filter_map(|m| claim_at(&meter.0, std::slice::from_ref(m)))
        .collect();
    assert!(
        meter_claims.contains(&(claim.clone(), documents)),
        "the meter reads the agents' folder: {meter_claims:?}"
    );
    let security = container
        .security_context
        .as_ref()
        .expect("security context");
    assert_eq!(security.read_only_root_filesystem, Some(true));
    assert_eq!(security.allow_privilege_escalation, Some(false));
    let dropped = security
        .capabilities
        .as_ref()
        .and_then(|c| c.drop.clone())
        .unwrap_or_default();
    assert_eq!(dropped, ["ALL"]);
}
