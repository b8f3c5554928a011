//! The Kubernetes client against the fake API server: paging with expiring continue tokens,
//! kubeconfig contexts, token and CA files, certificates from an unknown CA (a permanent failure)
//! and objects too broken to read, each reported by name and skipped.

use std::path::Path;

use chrono::Utc;

use accelfed_provider::config::Config;
use accelfed_provider::kubernetes::{KubeClient, KubernetesError};
use accelfed_schemas::names::SiteName;

use super::server::Behaviour;
use super::{TOKEN, at, config, setup, site_toml};

#[tokio::test]
async fn an_expired_continue_token_restarts_the_list_without_counting_twice() {
    let setup = setup(Behaviour {
        expire_once: vec!["/api/v1/pods".to_owned()],
        ..Behaviour::default()
    })
    .await;
    let config = config(&setup, "");
    let client = KubeClient::new(&config.kubernetes[0]).await.unwrap();
    let inventory = client.inventory().await.unwrap();
    assert_eq!(setup.api.seen.lock().unwrap().gone, 1);
    let mut names: Vec<&str> = inventory.pods.iter().map(|p| p.name.as_str()).collect();
    names.sort();
    let before = names.len();
    names.dedup();
    assert_eq!(names.len(), before, "a pod was kept twice");
    assert_eq!(names.len(), 10, "{names:?}");
}

#[tokio::test]
async fn a_list_that_keeps_expiring_fails_with_a_retryable_error() {
    let setup = setup(Behaviour {
        expire_always: vec!["/api/v1/nodes".to_owned()],
        ..Behaviour::default()
    })
    .await;
    let config = config(&setup, "");
    let err = KubeClient::new(&config.kubernetes[0])
        .await
        .unwrap()
        .inventory()
        .await
        .unwrap_err();
    assert!(
        matches!(err, KubernetesError::Expired { restarts: 3, .. }),
        "{err}"
    );
    assert!(err.retryable());
    assert!(err.to_string().contains("/api/v1/nodes"), "{err}");
}

#[tokio::test]
async fn the_current_context_has_a_stale_token_and_is_refused_without_retry() {
    let setup = setup(Behaviour::default()).await;
    let text = site_toml(setup.dir.path(), "", None).replace("context = \"fixture\"\n", "");
    let config = Config::parse(Path::new("site.toml"), &text).unwrap();
    let gathered = accelfed_provider::gather(&config, Utc::now())
        .await
        .unwrap();
    assert_eq!(gathered.failures.len(), 1);
    assert_eq!(gathered.failures[0].provider, "kubernetes[0]");
    assert!(
        gathered.failures[0].message.contains("401"),
        "{}",
        gathered.failures[0].message
    );
    assert!(
        gathered.failures[0]
            .message
            .contains("a retry will not help")
    );
    assert!(setup.api.seen.lock().unwrap().unauthorized > 0);
}

#[tokio::test]
async fn a_token_file_and_a_ca_file_override_the_kubeconfig() {
    let setup = setup(Behaviour::default()).await;
    // The kubeconfig's context is the stale one; the token file carries the right token.
    std::fs::write(setup.dir.path().join("token"), format!("{TOKEN}\n")).unwrap();
    std::fs::write(setup.dir.path().join("ca.pem"), &setup.api.ca_pem).unwrap();
    let text = site_toml(
        setup.dir.path(),
        &format!(
            "token_file = \"{}\"\nca_file = \"{}\"\n",
            setup.dir.path().join("token").display(),
            setup.dir.path().join("ca.pem").display()
        ),
        None,
    )
    .replace("context = \"fixture\"\n", "");
    let config = Config::parse(Path::new("site.toml"), &text).unwrap();
    let inventory = super::inventory(&config).await;
    assert_eq!(inventory.nodes.len(), 7);
}

#[tokio::test]
async fn a_server_with_an_unknown_ca_fails_naming_unknown_issuer_and_not_worth_a_retry() {
    let setup = setup(Behaviour::default()).await;
    // A CA of another name: rustls finds no issuer at all (a CA of the same name would fail the
    // signature check instead, `BadSignature`, equally permanent).
    std::fs::write(
        setup.dir.path().join("ca.pem"),
        accelfed_testkit::pki::unrelated_ca_pem("another cluster's CA"),
    )
    .unwrap();
    let extra = format!(
        "ca_file = \"{}\"\ntimeout_s = 5\n",
        setup.dir.path().join("ca.pem").display()
    );
    let config = config(&setup, &extra);
    let err = KubeClient::new(&config.kubernetes[0])
        .await
        .unwrap()
        .inventory()
        .await
        .unwrap_err();
    assert!(matches!(err, KubernetesError::Request { .. }), "{err}");
    // The certificate is refused, and no later run will trust it: permanent, as in every other
    // client (hyper-rustls hides rustls' error inside an io::Error).
    let text = err.to_string();
    assert!(text.contains("UnknownIssuer"), "{text}");
    assert!(text.ends_with("(a retry will not help)"), "{text}");
    assert!(!text.contains("a retry may help"), "{text}");
    assert!(!err.retryable());
}

#[tokio::test]
async fn bad_objects_are_reported_by_name_and_skipped() {
    let setup = setup(Behaviour::default()).await;
    let config = config(&setup, "");
    let client = KubeClient::new(&config.kubernetes[0]).await.unwrap();
    let inventory = client.inventory().await.unwrap();
    let mapped = accelfed_provider::kubernetes::service(&config.kubernetes[0], &inventory);
    let warnings = mapped.warnings.join("\n");
    for expected in [
        "node \"gpu-bad-1\": capacity of nvidia.com/gpu: quantity \"1.5\" is not a whole number of devices; resource skipped",
        "node \"gpu-vgpu-1\": label nvidia.com/gpu.compute.major=\"unknown\" is not a whole number; ignored",
        "pod cms/half-gpu-1: nvidia.com/gpu: quantity \"0.5\" is not a whole number of devices; resource not counted",
        "resource quota cms/gpu: requests.nvidia.com/gpu: quantity \"two\" is not a whole number of devices; ignored",
        "namespace \"scratch\" has no VO: its 1 GPU pods count in the totals but in no share",
    ] {
        assert!(
            warnings.contains(expected),
            "missing {expected:?} in\n{warnings}"
        );
    }
    // Missing status fields: the node without spec or status (joining-1) and the one without
    // GPUs are not GPU nodes; gpu-bad-1 lost its only resource. The pod without a status is bound,
    // so it holds its device (phase unknown), but it has no start to meter from.
    let mut nodes: Vec<&str> = inventory.nodes.iter().map(|n| n.name.as_str()).collect();
    nodes.sort();
    assert_eq!(
        nodes,
        [
            "gpu-a100-1",
            "gpu-a100-2",
            "gpu-a100-3",
            "gpu-amd-1",
            "gpu-mig-1",
            "gpu-t4-ts",
            "gpu-vgpu-1"
        ]
    );
    let no_status = inventory
        .pods
        .iter()
        .find(|p| p.name == "no-status-1")
        .unwrap();
    assert_eq!(
        no_status.phase,
        accelfed_provider::kubernetes::Phase::Unknown
    );
    assert_eq!(no_status.node.as_deref(), Some("gpu-a100-1"));
    assert_eq!((no_status.start, no_status.end), (None, None));
    let site = SiteName::new("ACCELFED-TEST").unwrap();
    let metered = accelfed_provider::kubernetes::observe_inventory(
        &config.kubernetes[0],
        &site,
        &inventory,
        None,
        at(0),
        at(14),
    );
    assert!(
        metered
            .warnings
            .iter()
            .any(|w| w == "pod atlas-prod/no-status-1: no start time; not metered"),
        "{:#?}",
        metered.warnings
    );
    // The fractional pod is in no observation and no count.
    assert!(!inventory.pods.iter().any(|p| p.name == "half-gpu-1"));
}
