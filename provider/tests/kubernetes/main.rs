//! The Kubernetes provider and meter through the real `kube` client, over TLS with bearer-token
//! auth, against [`server::FakeApi`]: a local HTTPS server standing in for the Kubernetes API
//! server (none can be installed on this machine kind) that serves recorded lists shaped exactly
//! as the API returns them. The fixtures' truth is in `tests/fixtures/kubernetes/README.md`.

#![allow(clippy::unwrap_used)]

mod client;
mod deploy;
mod deploy_jobs;
mod in_cluster;
mod meter;
mod sharing;
mod slots;
mod vendors;

use accelfed_testkit::fake_kubernetes as server;

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, TimeZone, Utc};

use accelfed_provider::config::Config;
use accelfed_provider::kubernetes::{KubernetesConfig, kind_id};
use accelfed_schemas::glue::Service;
use accelfed_schemas::gpu::{GpuCount, Virtualization};

use server::{Behaviour, FakeApi};

const TOKEN: &str = "sa-token-4f1d";

struct Setup {
    api: FakeApi,
    dir: tempfile::TempDir,
}

async fn setup(behaviour: Behaviour) -> Setup {
    let api = FakeApi::start(Behaviour {
        token: TOKEN.to_owned(),
        ..behaviour
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kubeconfig"), api.kubeconfig(TOKEN)).unwrap();
    Setup { api, dir }
}

fn site_toml(dir: &Path, extra: &str, prometheus: Option<&str>) -> String {
    let mut text = format!(
        r#"[site]
name = "ACCELFED-TEST"

[[kubernetes]]
id = "k8s"
cluster = "gpu-cluster"
kubeconfig = "{}"
context = "fixture"
page_size = 3
vo_label = "accelfed.io/vo"
vo_annotation = "accelfed.io/vo"
{extra}
[kubernetes.namespaces]
cms = {{ vo = "cms", fqan = "/cms" }}
"#,
        dir.join("kubeconfig").display()
    );
    if let Some(url) = prometheus {
        text.push_str(&format!(
            "\n[kubernetes.prometheus]\nurl = \"{url}\"\nca_file = \"{}\"\n",
            dir.join("ca.pem").display()
        ));
    }
    text
}

fn config(setup: &Setup, extra: &str) -> Config {
    Config::parse(
        Path::new("site.toml"),
        &site_toml(setup.dir.path(), extra, None),
    )
    .unwrap()
}

/// The GLUE 2.1 JSON document `accelfed provide` renders from the fake API's `behaviour` on
/// 2025-03-01, after asserting that no backend failed and that the physical checker passes.
async fn checked_document(behaviour: Behaviour) -> serde_json::Value {
    let setup = setup(behaviour).await;
    let config = config(&setup, "");
    let now = Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).unwrap();
    let gathered = accelfed_provider::gather(&config, now).await.unwrap();
    assert!(gathered.failures.is_empty(), "{:?}", gathered.failures);
    assert_eq!(gathered.snapshot.validate(), Ok(()));
    accelfed_schemas::render::json::document(&gathered.snapshot)
}

/// The first cluster's inventory, read through the backend's client.
async fn inventory(config: &Config) -> accelfed_provider::kubernetes::Inventory {
    accelfed_provider::kubernetes::KubeClient::new(&config.kubernetes[0])
        .await
        .unwrap()
        .inventory()
        .await
        .unwrap()
}

fn whole(n: u32) -> GpuCount {
    GpuCount::whole(n)
}

#[tokio::test]
async fn gather_publishes_the_fixture_truth_per_gpu_kind() {
    let setup = setup(Behaviour::default()).await;
    let config = config(&setup, "");
    let gathered = accelfed_provider::gather(&config, Utc::now())
        .await
        .unwrap();
    assert!(gathered.failures.is_empty(), "{:?}", gathered.failures);
    let Service::Computing(service) = &gathered.snapshot.services[0] else {
        panic!("expected a computing service");
    };
    let totals: BTreeMap<String, (GpuCount, GpuCount, GpuCount)> = service
        .manager
        .accelerators
        .iter()
        .map(|a| {
            (
                a.local_id.to_string(),
                (a.capacity.total, a.capacity.used, a.capacity.free),
            )
        })
        .collect();
    let expected: BTreeMap<String, (GpuCount, GpuCount, GpuCount)> = [
        // 3 nodes x 4; one cordoned (1 used), one NotReady; on the ready one 2 + 1 (no status) used.
        ("nvidia-a100-sxm4-80gb", (whole(12), whole(4), whole(1))),
        (
            "nvidia-a100-sxm4-80gb.mig-1g.10gb",
            (whole(7), whole(3), whole(4)),
        ),
        // A pending pod bound to the node holds its slice.
        (
            "nvidia-a100-sxm4-80gb.mig-3g.40gb",
            (whole(2), whole(1), whole(1)),
        ),
        // 2 T4s x 4 replicas; the notebook's effective request is 3 (sidecar 1 + init 2).
        ("tesla-t4.time-slicing", (whole(8), whole(3), whole(5))),
        // One A10-12Q vGPU: its slot is half an A10, published as the A10 it is part of.
        ("nvidia-a10.vgpu", (whole(1), whole(1), whole(0))),
        // The failed ROCm pod holds nothing; the amd.com/gpu taint is tolerated.
        ("amd-instinct-mi210", (whole(8), whole(0), whole(8))),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(totals, expected);

    let t4 = service
        .manager
        .accelerators
        .iter()
        .find(|a| a.local_id.as_str() == "tesla-t4.time-slicing")
        .unwrap();
    assert_eq!(t4.gpu.virtualization, Virtualization::TimeSlicing);
    assert_eq!(t4.gpu.memory.map(|m| m.get()), Some(16_106));
    assert_eq!(
        t4.gpu.cuda_version.as_ref().map(|t| t.as_str()),
        Some("12.2")
    );
    assert_eq!(
        t4.gpu.driver_version.as_ref().map(|t| t.as_str()),
        Some("535.104.05")
    );
    let t4_env = service
        .manager
        .environments
        .iter()
        .flat_map(|e| &e.accelerators)
        .find(|a| kind_id(&a.gpu) == "tesla-t4.time-slicing")
        .unwrap();
    assert_eq!(t4_env.physical_per_instance, whole(2));
    assert_eq!(t4_env.logical_per_instance, whole(8));
    // The vGPU guest's one A10-12Q: a slot of half an A10, with the vGPU's own 12 GiB.
    let a10_env = service
        .manager
        .environments
        .iter()
        .flat_map(|e| &e.accelerators)
        .find(|a| kind_id(&a.gpu) == "nvidia-a10.vgpu")
        .unwrap();
    assert_eq!(a10_env.logical_per_instance, whole(1));
    assert_eq!(a10_env.physical_per_instance, GpuCount::new(0.5).unwrap());
    assert_eq!(a10_env.gpu.memory.map(|m| m.get()), Some(12_885));
    let mig = service
        .manager
        .accelerators
        .iter()
        .find(|a| a.local_id.as_str().ends_with("1g.10gb"))
        .unwrap();
    // 9728 MiB = 10,200.5 MB, rounded.
    assert_eq!(mig.gpu.memory.map(|m| m.get()), Some(10_201));
    assert_eq!(
        mig.gpu.compute_capability.as_ref().map(|t| t.as_str()),
        Some("8.0")
    );

    // Shares per VO: atlas (label + annotation namespaces), cms (config table); scratch has none.
    let shares: Vec<&str> = service.shares.iter().map(|s| s.local_id.as_str()).collect();
    assert_eq!(shares, ["atlas", "cms"]);
    let atlas = &service.shares[0];
    let atlas_a100 = atlas
        .accelerators
        .iter()
        .find(|a| a.local_id.as_str() == "nvidia-a100-sxm4-80gb")
        .unwrap();
    // Quota 6 (atlas-prod) + 4 (atlas-dev) caps the 12. All 4 used A100s are atlas-prod's:
    // train-a100-1 (2), train-cordoned-1 (1, on the cordoned node) and no-status-1 (1: bound to
    // gpu-a100-1 but without a status yet, so not terminal and holding its device). 1 free in the
    // cluster, so 1 free for atlas although its quota leaves 6.
    assert_eq!(
        (
            atlas_a100.capacity.total,
            atlas_a100.capacity.used,
            atlas_a100.capacity.free
        ),
        (whole(10), whole(4), whole(1))
    );
    let cms_mig = service.shares[1]
        .accelerators
        .iter()
        .find(|a| a.local_id.as_str().ends_with("1g.10gb"))
        .unwrap();
    // cms's quota of 4 slices, 3 used: 1 left although 4 are free.
    assert_eq!(
        (
            cms_mig.capacity.total,
            cms_mig.capacity.used,
            cms_mig.capacity.free
        ),
        (whole(4), whole(3), whole(1))
    );
    let requests = &setup.api.seen.lock().unwrap().requests;
    assert!(
        requests
            .iter()
            .any(|r| r.starts_with("GET /api/v1/pods?") && r.contains("continue=3")),
        "{requests:?}"
    );
}

/// What `accelfed provide` renders from the cluster, in both service kinds: a valid snapshot, GLUE
/// 2.1 JSON that the shipped JSON Schema accepts with the fixture's totals per GPU kind, and LDIF in
/// both modes. (Loading the LDIF into a real slapd is `cli/tests/ldap_example.rs`'s job for the
/// static example; this checks the Kubernetes service renders at all and carries the counts.)
#[tokio::test]
async fn provide_renders_the_fixture_truth_in_every_format() {
    let setup = setup(Behaviour::default()).await;
    let schema_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/json/glue21.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    for (kind, class, total_key, used_key, free_key) in [
        (
            "computing",
            "ComputingManagerAccelerator",
            "TotalAcceleratorSlots",
            "UsedAcceleratorSlots",
            "FreeAcceleratorSlots",
        ),
        (
            "cloud",
            "CloudComputingManagerAccelerator",
            "TotalAccelerators",
            "UsedAccelerators",
            "FreeAccelerators",
        ),
    ] {
        // The schema wants a cloud service's OtherInfo to carry the site's GOCDB id.
        let text = site_toml(setup.dir.path(), &format!("service = \"{kind}\"\n"), None)
            .replace("[site]\n", "[site]\ngocdb_id = \"1234G0\"\n");
        let config = Config::parse(Path::new("site.toml"), &text).unwrap();
        let gathered = accelfed_provider::gather(&config, at(14)).await.unwrap();
        assert!(gathered.failures.is_empty(), "{:?}", gathered.failures);
        gathered.snapshot.validate().unwrap();
        let bytes = accelfed_schemas::render::json::render(&gathered.snapshot);
        let document: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let violations: Vec<String> = validator
            .iter_errors(&document)
            .map(|error| format!("{}: {error}", error.instance_path))
            .collect();
        assert_eq!(violations, Vec::<String>::new(), "{kind}");
        let mut counts: BTreeMap<String, (f64, f64, f64)> = BTreeMap::new();
        for accelerator in document[class].as_array().unwrap() {
            let number = |key: &str| accelerator[key].as_f64().unwrap();
            let model = accelerator["Model"].as_str().unwrap_or("").to_owned();
            let sharing = accelerator["VirtualizationType"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            let entry = counts.entry(format!("{model} {sharing}")).or_default();
            entry.0 += number(total_key);
            entry.1 += number(used_key);
            entry.2 += number(free_key);
        }
        let a100 = counts
            .iter()
            .find(|(key, _)| key.starts_with("NVIDIA A100-SXM4-80GB") && !key.contains("mig"))
            .map(|(_, value)| *value);
        assert_eq!(a100, Some((12.0, 4.0, 1.0)), "{kind}: {counts:?}");
        let totals: f64 = counts.values().map(|c| c.0).sum();
        // 12 A100 + 7 + 2 MIG slices + 8 T4 replicas + 1 vGPU + 8 MI210.
        assert_eq!(totals, 38.0, "{kind}: {counts:?}");
        for format in [
            accelfed_schemas::render::Format::LdifGlue20,
            accelfed_schemas::render::Format::LdifGlue21,
        ] {
            let ldif =
                String::from_utf8(accelfed_schemas::render::render(&gathered.snapshot, format))
                    .unwrap();
            assert!(ldif.contains("Kubernetes"), "{kind} {format}");
            assert!(ldif.contains("A100-SXM4-80GB"), "{kind} {format}");
        }
    }
}

fn at(hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 5, 1, hour, 0, 0).unwrap()
}

/// Equal up to floating-point rounding of sevenths.
fn assert_close(have: f64, want: f64) {
    assert!((have - want).abs() < 1e-9, "{have} != {want}");
}

/// GPU-hours per VO (`-` for none) of observations metered up to `now`.
fn hours_per_vo(
    observations: &[accelfed_schemas::usage::Observation],
    now: DateTime<Utc>,
) -> BTreeMap<String, f64> {
    let mut hours: BTreeMap<String, f64> = BTreeMap::new();
    for observation in observations {
        let end = observation.end.unwrap_or(now);
        let seconds = (end - observation.start).num_seconds() as f64;
        let vo = observation
            .vo
            .as_ref()
            .map_or("-".to_owned(), |v| v.to_string());
        *hours.entry(vo).or_default() += observation.count.get() * seconds / 3600.0;
    }
    hours
}

fn uid_of(name: &str) -> String {
    uid_of_in("cluster", name)
}

/// The uid `generate.py` gives an object (uuid5 of the DNS namespace).
fn uid_of_in(folder: &str, name: &str) -> String {
    let text = std::fs::read_to_string(server::fixtures().join(folder).join("pods.json")).unwrap();
    let list: serde_json::Value = serde_json::from_str(&text).unwrap();
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|pod| pod["metadata"]["name"] == name)
        .map(|pod| pod["metadata"]["uid"].as_str().unwrap().to_owned())
        .unwrap()
}

#[test]
fn the_example_configuration_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/kubernetes-site.toml");
    let loaded = Config::load(&path).unwrap();
    let kubernetes: &KubernetesConfig = &loaded.config.kubernetes[0];
    assert_eq!(kubernetes.cluster_name(), "prod-gpu");
    assert!(kubernetes.prometheus.is_some());
}
