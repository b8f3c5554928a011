//! One site with every kind of shared GPU, metered and shipped by the real processes and served by
//! the central service (in-process, as `accelfed serve` assembles it), and
//! the repository's report in physical GPU-hours checked against a hand computation and against
//! capacity (issue #19's end-to-end check):
//!
//! * a Kubernetes cluster (the fixture API server of `accelfed_tests::fake_kubernetes`: no
//!   Kubernetes API server can be installed on this machine kind) with an A100 node in MIG mixed
//!   mode, a T4 time-sliced into 4 replicas per GPU, whole A100s, MI210s and an A10 vGPU;
//! * an OpenStack cloud (the fake APIs of `accelfed_tests::fake_openstack`, answering with
//!   the recorded responses of the test cloud) whose Placement shows two A100s holding 8 vGPUs
//!   of type `CUSTOM_NVIDIA_A100_4C` each, with two such VMs that ran 8 hours.
//!
//! Then a manual-usage file describing a T4 the cluster does not have makes `report --check`
//! name the site-month.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use accelfed_tests::central::{Server, TOKEN_A, accelfed, run, status, stderr};
use accelfed_tests::fake_kubernetes as kubernetes_api;
use accelfed_tests::fake_openstack as openstack_api;
use accelfed_tests::pki::{PkiFiles, pki};

const API_TOKEN: &str = "meter-token-5b1d";

/// Two copies of the recorded vGPU server `cms-vgpu-1` (one `CUSTOM_NVIDIA_A100_4C` vGPU each),
/// deleted after running 2024-05-01 00:00 to 08:00.
fn deleted_vgpu_servers() -> Vec<Value> {
    let text = std::fs::read_to_string(
        openstack_api::fixtures().join("nova-servers-detail-alltenants-2.93.json"),
    )
    .unwrap();
    let recorded: Value = serde_json::from_str(&text).unwrap();
    let template = recorded["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "cms-vgpu-1")
        .unwrap()
        .clone();
    (0..2)
        .map(|i| {
            let mut server = template.clone();
            server["id"] = format!("7d1e0c52-5b1d-4f7e-9a3c-0000000000{i:02}").into();
            server["name"] = format!("cms-vgpu-e2e-{i}").into();
            server["status"] = "DELETED".into();
            server["OS-EXT-STS:vm_state"] = "deleted".into();
            server["created"] = "2024-05-01T00:00:00Z".into();
            server["OS-SRV-USG:launched_at"] = "2024-05-01T00:00:01.000000".into();
            server["OS-SRV-USG:terminated_at"] = "2024-05-01T08:00:00.000000".into();
            server["updated"] = "2024-05-01T08:00:00Z".into();
            server
        })
        .collect()
}

/// site.toml of SITE-A: the cluster, the cloud, a manual-usage file, a spool, shipping.
fn site_toml(
    dir: &Path,
    kubernetes: &kubernetes_api::FakeApi,
    openstack: &openstack_api::FakeCloud,
    endpoint: &str,
    pki: &PkiFiles,
) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("kubeconfig"), kubernetes.kubeconfig(API_TOKEN)).unwrap();
    std::fs::write(
        dir.join("clouds.yaml"),
        openstack.clouds_yaml(openstack_api::PASSWORD),
    )
    .unwrap();
    std::fs::write(dir.join("ship-token"), format!("{TOKEN_A}\n")).unwrap();
    std::fs::write(dir.join("usage.jsonl"), "").unwrap();
    let devices = std::fs::read_to_string(openstack_api::fixtures().join("devices.toml")).unwrap();
    let config = dir.join("site.toml");
    std::fs::write(
        &config,
        format!(
            "[site]\nname = \"SITE-A\"\ngocdb_id = \"9999G0\"\n\n\
             [accounting]\nspool = \"spool.sqlite\"\nobservations = \"usage.jsonl\"\n\n\
             [accounting.ship]\nendpoint = \"{endpoint}\"\ntoken_file = \"ship-token\"\nca = \"{ca}\"\n\
             timeout_s = 10\n\n\
             [[kubernetes]]\nid = \"k8s\"\ncluster = \"gpu-cluster\"\nkubeconfig = \"{kubeconfig}\"\n\
             context = \"fixture\"\nvo_label = \"accelfed.io/vo\"\n\
             vo_annotation = \"accelfed.io/vo\"\n\
             [kubernetes.namespaces]\ncms = {{ vo = \"cms\", fqan = \"/cms\" }}\n\n\
             [[openstack]]\nid = \"cloud\"\ncloud = \"fake\"\nclouds_file = \"{clouds}\"\n\
             timeout = 10\n[openstack.vo_map]\nvo-atlas = \"atlas\"\nvo-cms = \"cms\"\n{devices}",
            ca = pki.ca.display(),
            kubeconfig = dir.join("kubeconfig").display(),
            clouds = dir.join("clouds.yaml").display(),
        ),
    )
    .unwrap();
    config
}

/// GPU-hours per model as `accelfed report --by model --format json` prints them.
fn report_by_model(database: &str) -> BTreeMap<String, f64> {
    let output = run(&[
        "report",
        "--by",
        "model",
        "--format",
        "json",
        "--database",
        database,
    ]);
    assert_eq!(status(&output), 0, "{}", stderr(&output));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    value["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["model"].as_str().unwrap().to_owned(),
                row["gpu_hours"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_site_of_mig_time_sliced_and_vgpu_gpus_reports_physical_gpu_hours_within_capacity() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let kubernetes = runtime.block_on(kubernetes_api::FakeApi::start(kubernetes_api::Behaviour {
        token: API_TOKEN.to_owned(),
        ..kubernetes_api::Behaviour::default()
    }));
    kubernetes.serve_list(
        "pods",
        kubernetes_api::pods_finished_at("2024-05-01T14:00:00Z"),
    );
    let openstack = runtime.block_on(openstack_api::FakeCloud::start(openstack_api::Behaviour {
        extra_servers: deleted_vgpu_servers(),
        only_extra_servers: true,
        ..openstack_api::Behaviour::default()
    }));

    let dir = tempfile::tempdir().unwrap();
    let pki = pki(dir.path());
    let (server, database) = Server::start_sqlite(dir.path(), &pki);
    let database = database.as_str();
    let site_dir = dir.path().join("site-a");
    let config = site_toml(&site_dir, &kubernetes, &openstack, &server.endpoint(), &pki);

    let meter = || {
        accelfed()
            .args(["meter", "--since", "2024-04-01", "--config"])
            .arg(&config)
            .output()
            .unwrap()
    };
    let ship = || {
        accelfed()
            .arg("ship")
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap()
    };
    let metered = meter();
    assert_eq!(status(&metered), 0, "{}", stderr(&metered));
    let shipped = ship();
    assert_eq!(status(&shipped), 0, "{}", stderr(&shipped));

    // By hand, in physical GPU-hours (provider/tests/fixtures/kubernetes/README.md for the pods):
    // A100 80GB: train-a100-1 2 x 4 h + train-cordoned-1 1 x 3 h + eval-done-1 1 x 1.5 h +
    // mig-small-1's three 1g.10gb slices (3/7 of a GPU) x 16 h; T4: notebook-ts-1's 3 of 4
    // time-slicing replicas x 1 h; MI210: rocm-failed-1 2 x 1 h; A10: vgpu-scratch-1's one A10-12Q
    // vGPU (two to an A10's 24 GB, so half of one) x 2 h; the cloud's A100 40GB:
    // two VMs with one vGPU of 8 per GPU x 8 h = 2.
    let want: BTreeMap<&str, f64> = [
        ("NVIDIA A100-SXM4-40GB", 2.0 * 8.0 / 8.0),
        ("NVIDIA A100-SXM4-80GB", 8.0 + 3.0 + 1.5 + 3.0 / 7.0 * 16.0),
        ("NVIDIA A10", 1.0),
        ("AMD Instinct MI210", 2.0),
        ("Tesla T4", 0.75),
    ]
    .into_iter()
    .collect();
    let got = report_by_model(database);
    assert_eq!(
        got.keys().map(String::as_str).collect::<Vec<_>>(),
        want.keys().copied().collect::<Vec<_>>(),
        "{got:?}"
    );
    for (model, hours) in &want {
        assert!(
            (got[*model] - hours).abs() < 0.01,
            "{model}: {} GPU-hours, want {hours}",
            got[*model]
        );
    }
    let check = run(&["report", "--database", database, "--check"]);
    assert_eq!(status(&check), 0, "{}", stderr(&check));
    assert!(check.stdout.is_empty(), "{check:?}");

    // A T4 described by hand for all of May, beside the cluster's time-sliced one: the site's two
    // physical T4s cannot give 744 GPU-hours plus the cluster's.
    std::fs::write(
        site_dir.join("usage.jsonl"),
        r#"{"resource": "t4-by-hand", "model": "Tesla T4", "count": 2, "vo": "atlas", "start": "2024-05-01T00:00:00Z", "end": "2024-06-01T00:00:00Z"}"#.to_owned() + "\n",
    )
    .unwrap();
    // The meter holds the site-month's T4 records back (exit 1), so nothing doubtful is shipped
    // until the operator releases them; then the repository's check sees the breach too.
    let metered = meter();
    assert_eq!(status(&metered), 1, "{}", stderr(&metered));
    let shipped = ship();
    assert_eq!(status(&shipped), 0, "{}", stderr(&shipped));
    // Held back, not shipped: the repository's sums are within capacity, and the check lists
    // the held records as the site's last `ship` reported them (exit 1).
    let check = run(&["report", "--database", database, "--check"]);
    assert_eq!(status(&check), 1, "{check:?}");
    let held = String::from_utf8(check.stdout).unwrap();
    assert!(!held.is_empty(), "{held}");
    assert!(
        held.lines()
            .all(|line| line.starts_with("held at SITE-A: ")),
        "{held}"
    );
    let released = accelfed()
        .args(["spool", "release", "--all", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(status(&released), 0, "{}", stderr(&released));
    let shipped = ship();
    assert_eq!(status(&shipped), 0, "{}", stderr(&shipped));
    let check = run(&["report", "--database", database, "--check"]);
    assert_eq!(status(&check), 1, "{}", stderr(&check));
    let breaches = String::from_utf8(check.stdout).unwrap();
    assert!(
        breaches.contains("SITE-A") && breaches.contains("2024-05") && breaches.contains("T4"),
        "{breaches}"
    );
    assert_eq!(breaches.lines().count(), 1, "{breaches}");
}
