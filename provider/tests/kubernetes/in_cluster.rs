//! In-cluster service-account auth through the real `kube` client: the API server from
//! `KUBERNETES_SERVICE_HOST`/`_PORT` (given as a lookup, as the process environment would), the
//! bearer token and the CA from a service-account folder named in the configuration, over TLS
//! against the fixture server.

use std::collections::BTreeMap;
use std::path::Path;

use accelfed_provider::config::Config;
use accelfed_provider::kubernetes::{KubeClient, KubernetesError};

use super::TOKEN;
use super::server::{Behaviour, FakeApi};

/// A service-account folder as Kubernetes mounts it: `token`, `ca.crt`, `namespace`.
fn service_account(dir: &Path, token: &str, ca_pem: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("token"), token).unwrap();
    std::fs::write(dir.join("ca.crt"), ca_pem).unwrap();
    std::fs::write(dir.join("namespace"), "accelfed").unwrap();
}

fn in_cluster_config(service_account_dir: &Path) -> Config {
    let text = format!(
        "[site]\nname = \"ACCELFED-TEST\"\n\n[[kubernetes]]\nid = \"k8s\"\nin_cluster = true\n\
         service_account_dir = \"{}\"\npage_size = 4\ntimeout_s = 10\n",
        service_account_dir.display()
    );
    Config::parse(Path::new("site.toml"), &text).unwrap()
}

/// The service environment of a pod, pointing at `api`.
fn environment(api: &FakeApi) -> impl Fn(&str) -> Option<String> + use<> {
    let port = api.url.rsplit(':').next().unwrap().to_owned();
    let values: BTreeMap<&'static str, String> = [
        ("KUBERNETES_SERVICE_HOST", "127.0.0.1".to_owned()),
        ("KUBERNETES_SERVICE_PORT", port),
    ]
    .into_iter()
    .collect();
    move |name| values.get(name).cloned()
}

#[tokio::test]
async fn the_service_account_token_and_ca_read_the_cluster() {
    let api = FakeApi::start(Behaviour {
        token: TOKEN.to_owned(),
        ..Behaviour::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let account = dir.path().join("serviceaccount");
    // Projected tokens carry no newline; one written by hand often does: both work.
    service_account(&account, &format!("{TOKEN}\n"), &api.ca_pem);
    let config = in_cluster_config(&account);
    let inventory = KubeClient::with_environment(&config.kubernetes[0], &environment(&api))
        .await
        .unwrap()
        .inventory()
        .await
        .unwrap();
    assert_eq!(inventory.nodes.len(), 7, "GPU nodes of the fixture");
    assert_eq!(inventory.pods.len(), 10, "GPU pods of the fixture");
    let seen = api.seen.lock().unwrap();
    assert_eq!(seen.unauthorized, 0);
    assert!(
        seen.requests
            .iter()
            .any(|r| r.starts_with("GET /api/v1/pods?") && r.contains("limit=4")),
        "{:?}",
        seen.requests
    );
}

#[tokio::test]
async fn a_refused_service_account_token_fails_without_retry() {
    let api = FakeApi::start(Behaviour {
        token: TOKEN.to_owned(),
        ..Behaviour::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    service_account(dir.path(), "revoked-token", &api.ca_pem);
    let config = in_cluster_config(dir.path());
    let err = KubeClient::with_environment(&config.kubernetes[0], &environment(&api))
        .await
        .unwrap()
        .inventory()
        .await
        .unwrap_err();
    assert!(matches!(err, KubernetesError::Request { .. }), "{err}");
    assert!(err.to_string().contains("401"), "{err}");
    assert!(!err.retryable());
}

#[tokio::test]
async fn a_pod_environment_or_service_account_that_is_incomplete_is_named() {
    let api = FakeApi::start(Behaviour::default()).await;
    let dir = tempfile::tempdir().unwrap();
    service_account(dir.path(), TOKEN, &api.ca_pem);
    let config = in_cluster_config(dir.path());
    let err = KubeClient::with_environment(&config.kubernetes[0], &|_| None)
        .await
        .unwrap_err();
    assert!(matches!(err, KubernetesError::Setup { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("KUBERNETES_SERVICE_HOST is not set"),
        "{err}"
    );

    std::fs::remove_file(dir.path().join("ca.crt")).unwrap();
    let err = KubeClient::with_environment(&config.kubernetes[0], &environment(&api))
        .await
        .unwrap_err();
    let ca = dir.path().join("ca.crt");
    assert!(
        err.to_string()
            .contains(&format!("service account CA {}", ca.display())),
        "{err}"
    );
}

#[test]
fn a_service_account_folder_without_in_cluster_is_refused() {
    let text = "[site]\nname = \"ACCELFED-TEST\"\n\n[[kubernetes]]\nid = \"k8s\"\n\
                service_account_dir = \"/tmp/sa\"\n";
    let err = Config::parse(Path::new("site.toml"), text).unwrap_err();
    assert!(err.to_string().contains("service_account_dir"), "{err}");
    assert!(err.to_string().contains("in_cluster"), "{err}");
}
