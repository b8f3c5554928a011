//! `accelfed meter` -> `accelfed ship` -> the central service (in-process, as `accelfed serve`
//! assembles it) -> `accelfed report --by vo` on a Kubernetes site: the meter reads the cluster
//! through the real `kube` client over TLS with bearer-token auth from the fixture API server of
//! `accelfed_tests::fake_kubernetes` (a local HTTPS server answering like the Kubernetes API;
//! none can be installed on this machine kind), through a generated kubeconfig; the records go
//! over gRPC/TLS to a repository on SQLite, and the report gives the exact GPU-hours of the fixture
//! pods per VO.
//!
//! The fixture is the cluster as `provider/tests/fixtures/kubernetes/README.md` describes it at
//! 2024-05-01 14:00, with every pod that was running then finished at 14:00 (its containers
//! terminated), so the GPU-hours do not depend on when the test runs: in physical GPUs, atlas 13.75,
//! cms 48/7 + 1.5, no VO 2.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use accelfed_tests::central::{
    Server, TOKEN_A, accelfed, central_config, report_by_vo, status, stderr,
};
use accelfed_tests::fake_kubernetes::{Behaviour, FakeApi, pods_finished_at};
use accelfed_tests::pki::{PkiFiles, pki};

const API_TOKEN: &str = "meter-token-9c2e";
const FINISHED: &str = "2024-05-01T14:00:00Z";

/// site.toml of SITE-A: the fixture cluster, a spool, and shipping to `endpoint`.
fn site_toml(dir: &Path, api: &FakeApi, endpoint: &str, pki: &PkiFiles) -> PathBuf {
    std::fs::write(dir.join("kubeconfig"), api.kubeconfig(API_TOKEN)).unwrap();
    std::fs::write(dir.join("ship-token"), format!("{TOKEN_A}\n")).unwrap();
    let config = dir.join("site.toml");
    std::fs::write(
        &config,
        format!(
            "[site]\nname = \"SITE-A\"\n\n\
             [accounting]\nspool = \"spool.sqlite\"\n\n\
             [accounting.ship]\nendpoint = \"{endpoint}\"\ntoken_file = \"ship-token\"\nca = \"{}\"\n\
             timeout_s = 10\n\n\
             [[kubernetes]]\nid = \"k8s\"\ncluster = \"gpu-cluster\"\nkubeconfig = \"{}\"\n\
             context = \"fixture\"\npage_size = 3\nvo_label = \"accelfed.io/vo\"\n\
             vo_annotation = \"accelfed.io/vo\"\n\
             [kubernetes.namespaces]\ncms = {{ vo = \"cms\", fqan = \"/cms\" }}\n",
            pki.ca.display(),
            dir.join("kubeconfig").display(),
        ),
    )
    .unwrap();
    config
}

#[test]
fn meter_ship_report_gives_the_exact_gpu_hours_of_the_fixture_pods() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let api = runtime.block_on(FakeApi::start(Behaviour {
        token: API_TOKEN.to_owned(),
        ..Behaviour::default()
    }));
    api.serve_list("pods", pods_finished_at(FINISHED));

    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let repository = dir.path().join("accounting.sqlite");
    let central = central_config(
        dir.path(),
        &pki,
        &format!("path = \"{}\"", repository.display()),
        "127.0.0.1:0",
    );
    let server = Server::start(&central);
    let site_dir = dir.path().join("site-a");
    std::fs::create_dir_all(&site_dir).unwrap();
    let config = site_toml(&site_dir, &api, &server.endpoint(), &pki);

    let metered = accelfed()
        .args(["meter", "--since", "2024-04-01", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(status(&metered), 0, "{}", stderr(&metered));
    // Read through the real client, page by page (3 objects a page), with the kubeconfig's token.
    {
        let seen = api.seen.lock().unwrap();
        assert_eq!(seen.unauthorized, 0);
        assert!(
            seen.requests
                .iter()
                .any(|r| r.starts_with("GET /api/v1/pods?") && r.contains("continue=3")),
            "{:?}",
            seen.requests
        );
    }
    // The warnings name their objects: the scratch namespace has no VO, a half GPU is refused.
    let log = stderr(&metered);
    assert!(
        log.contains("pod scratch/vgpu-scratch-1: namespace has no VO"),
        "{log}"
    );
    assert!(log.contains("pod cms/half-gpu-1"), "{log}");

    let shipped = accelfed()
        .arg("ship")
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(status(&shipped), 0, "{}", stderr(&shipped));

    // In physical GPUs: atlas: train-a100-1 2 x 4 h, train-cordoned-1 1 x 3 h, notebook-ts-1 3
    // of a T4's 4 time-slicing replicas x 1 h = 3/4, rocm-failed-1 2 x 1 h = 13.75. cms:
    // mig-small-1 3 1g.10gb slices of an A100 (3/7) x 16 h (2 h in April, 14 h in May), eval-done-1
    // 1 x 1.5 h = 48/7 + 1.5. No VO: vgpu-scratch-1's one A10-12Q vGPU (half an A10) x 2 h.
    let database = repository.display().to_string();
    let (rows, total) = report_by_vo(&database);
    let want = [("", 1.0), ("atlas", 13.75), ("cms", 48.0 / 7.0 + 1.5)];
    assert_eq!(rows.len(), want.len(), "{rows:?}");
    // The report may round its hours for display: equal to a hundredth.
    for ((vo, hours, _), (want_vo, want_hours)) in rows.iter().zip(want) {
        assert_eq!(vo, want_vo, "{rows:?}");
        assert!(
            (hours - want_hours).abs() < 0.01,
            "{vo}: {hours} != {want_hours}"
        );
    }
    assert!(
        (total - (1.0 + 13.75 + 48.0 / 7.0 + 1.5)).abs() < 0.01,
        "{total}"
    );
    // One record per pod and month: 4 atlas pods, mig-small-1 twice and eval-done-1, the vGPU pod.
    let records: Vec<u64> = rows.iter().map(|(_, _, n)| *n).collect();
    assert_eq!(records, vec![1, 4, 3], "{rows:?}");
}
