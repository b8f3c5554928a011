//! The Kubernetes provider and meter through the real `kube` client, over TLS with bearer-token
//! auth, against [`server::FakeApi`]: a local HTTPS server standing in for the Kubernetes API
//! server (none can be installed on this machine kind) that serves recorded lists shaped exactly
//! as the API returns them. The fixtures' truth is in `tests/fixtures/kubernetes/README.md`.

#![allow(clippy::unwrap_used)]

mod deploy;
mod deploy_jobs;
mod in_cluster;
mod sharing;
mod slots;
mod vendors;

use accelfed_testkit::fake_kubernetes as server;

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, TimeZone, Utc};

use accelfed_provider::config::Config;
use accelfed_provider::kubernetes::{KubeClient, KubernetesConfig, KubernetesError, kind_id};
use accelfed_schemas::glue::Service;
use accelfed_schemas::gpu::{GpuCount, Virtualization};
use accelfed_schemas::names::SiteName;

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
    let inventory = KubeClient::new(&config.kubernetes[0])
        .await
        .unwrap()
        .inventory()
        .await
        .unwrap();
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

#[tokio::test]
async fn meter_observes_every_started_gpu_pod_with_dcgm_utilisation() {
    let setup = setup(Behaviour::default()).await;
    std::fs::write(setup.dir.path().join("ca.pem"), &setup.api.ca_pem).unwrap();
    let text = site_toml(setup.dir.path(), "", Some(&setup.api.url));
    let config = Config::parse(Path::new("site.toml"), &text).unwrap();
    let site = SiteName::new("ACCELFED-TEST").unwrap();
    let now = at(14);
    let since = Utc.with_ymd_and_hms(2024, 4, 30, 0, 0, 0).unwrap();
    let observations =
        accelfed_provider::kubernetes::observe(&config.kubernetes[0], &site, since, now)
            .await
            .unwrap();
    for observation in &observations {
        assert!(observation.resource.as_str().starts_with("gpu-cluster/"));
        assert_eq!(
            observation.record_type,
            accelfed_schemas::usage::RecordType::Job
        );
    }
    // 7 started GPU pods; pending, unscheduled, fractional and status-less ones are not metered.
    assert_eq!(observations.len(), 7, "{observations:#?}");
    let hours = hours_per_vo(&observations, now);
    // In physical GPUs: atlas: 2x4h + 1x3h + 3/4x1h (the notebook's 3 of a T4's 4 replicas) +
    // 2x1h (failed ROCm); cms: 3/7x16h (3 1g.10gb slices of an A100) + 1x1.5h; scratch: one
    // A10-12Q vGPU (half an A10) x 2h.
    assert_close(hours["atlas"], 13.75);
    assert_close(hours["cms"], 48.0 / 7.0 + 1.5);
    assert_eq!(hours["-"], 1.0);
    let train = observations
        .iter()
        .find(|o| o.count == whole(2) && o.model.as_str() == "NVIDIA A100-SXM4-80GB")
        .unwrap();
    assert_eq!(
        train.resource.as_str(),
        format!("gpu-cluster/atlas-prod/{}", uid_of("train-a100-1"))
    );
    // Two devices at 70% and 30%.
    assert_eq!(train.utilisation, Some(0.5));
    let mig = observations
        .iter()
        .find(|o| {
            o.sharing.mode() == "mig"
                && o.end.is_none()
                && o.vo.as_ref().is_some_and(|v| v.as_str() == "cms")
        })
        .unwrap();
    // Under MIG, DCGM_FI_PROF_GR_ENGINE_ACTIVE (a ratio).
    assert_eq!(mig.utilisation, Some(0.25));
    assert_eq!(mig.fqan.as_ref().map(|f| f.as_str()), Some("/cms"));
    assert_eq!(mig.model.as_str(), "NVIDIA A100-SXM4-80GB");
    assert_close(mig.count.get(), 3.0 / 7.0);
    assert_eq!(
        mig.sharing,
        accelfed_schemas::gpu::Sharing::Mig {
            profile: accelfed_schemas::names::Text::new("1g.10gb").unwrap(),
            slices: 1,
            of: 7
        }
    );
    let requests = &setup.api.seen.lock().unwrap().requests;
    let queries: Vec<&String> = requests
        .iter()
        .filter(|r| r.starts_with("GET /api/v1/query?"))
        .collect();
    assert_eq!(queries.len(), 2, "{requests:?}");
    assert!(
        queries
            .iter()
            .all(|q| q.contains(&format!("time={}", now.timestamp()))),
        "{queries:?}"
    );
}

#[tokio::test]
async fn the_meter_keeps_only_pods_that_held_gpus_in_its_window() {
    let setup = setup(Behaviour::default()).await;
    let config = config(&setup, "");
    let inventory = KubeClient::new(&config.kubernetes[0])
        .await
        .unwrap()
        .inventory()
        .await
        .unwrap();
    let site = SiteName::new("ACCELFED-TEST").unwrap();
    // [13:00, 14:00): the failed ROCm pod (ended 07:00) and eval-done-1 (ended 09:30) are out.
    let metered = accelfed_provider::kubernetes::observe_inventory(
        &config.kubernetes[0],
        &site,
        &inventory,
        None,
        at(13),
        at(14),
    );
    let hours = hours_per_vo(&metered.observations, at(14));
    assert_close(hours["atlas"], 2.0 * 4.0 + 3.0 + 0.75);
    assert_close(hours["cms"], 48.0 / 7.0);
    assert_eq!(hours["-"], 1.0);
    assert!(metered.observations.iter().all(|o| o.utilisation.is_none()));
    // [09:00, 09:15): only mig-small-1 (since 04-30 22:00) and eval-done-1 (08:00 - 09:30; its
    // end after `now` is clamped to `now` by the accounting meter) held GPUs; train-a100-1 (10:00)
    // and the rest start later, the ROCm pod ended at 07:00.
    let t = Utc.with_ymd_and_hms(2024, 5, 1, 9, 15, 0).unwrap();
    let early = accelfed_provider::kubernetes::observe_inventory(
        &config.kubernetes[0],
        &site,
        &inventory,
        None,
        at(9),
        t,
    );
    let mut names: Vec<&str> = early
        .observations
        .iter()
        .map(|o| o.resource.as_str())
        .collect();
    names.sort();
    let mut expected: Vec<String> = ["mig-small-1", "eval-done-1"]
        .iter()
        .map(|pod| format!("gpu-cluster/cms/{}", uid_of(pod)))
        .collect();
    expected.sort();
    assert_eq!(names, expected);
    assert!(
        metered
            .warnings
            .iter()
            .any(|w| w == "pod scratch/vgpu-scratch-1: namespace has no VO; metered without one"),
        "{:?}",
        metered.warnings
    );
}

#[tokio::test]
async fn the_site_meter_runs_the_kubernetes_meter_and_reports_its_failure() {
    let setup = setup(Behaviour::default()).await;
    let config = config(&setup, "");
    let observed = accelfed_provider::observe(&config, at(0), at(14)).await;
    assert!(observed.failures.is_empty(), "{:?}", observed.failures);
    assert_close(
        hours_per_vo(&observed.observations, at(14))["cms"],
        48.0 / 7.0 + 1.5,
    );
    // The file's current context has a stale token: refused, named as `provide` names it.
    let text = site_toml(setup.dir.path(), "", None).replace("context = \"fixture\"\n", "");
    let stale = Config::parse(Path::new("site.toml"), &text).unwrap();
    let observed = accelfed_provider::observe(&stale, at(0), at(14)).await;
    assert!(observed.observations.is_empty());
    assert_eq!(observed.failures.len(), 1);
    assert_eq!(observed.failures[0].provider, "kubernetes[0]");
    let message = &observed.failures[0].message;
    assert!(
        message.contains("GET /api/v1/") && message.contains("401"),
        "{message}"
    );
    assert!(!message.contains("expired-token"), "{message}");
}

/// A pod's observed `[start, end)`.
type Span = (DateTime<Utc>, Option<DateTime<Utc>>);

#[tokio::test]
async fn a_pod_deleted_between_two_runs_keeps_its_last_sighting() {
    let setup = setup(Behaviour::default()).await;
    let config = config(&setup, "");
    let kubernetes = &config.kubernetes[0];
    let site = SiteName::new("ACCELFED-TEST").unwrap();
    let key = |o: &accelfed_schemas::usage::Observation| o.resource.as_str().to_owned();

    // Run 1 at 14:00 sees train-a100-1 running: open, metered up to 14:00 (2 x 4 h).
    let first = accelfed_provider::kubernetes::observe(kubernetes, &site, at(13), at(14))
        .await
        .unwrap();
    let train = format!("gpu-cluster/atlas-prod/{}", uid_of("train-a100-1"));
    let seen = first.iter().find(|o| key(o) == train).unwrap();
    assert_eq!((seen.start, seen.end), (at(10), None));

    // Run 2 at 15:00: train-a100-1 was deleted in between and is not listed any more.
    setup.api.serve_folder("later");
    let second = accelfed_provider::kubernetes::observe(kubernetes, &site, at(14), at(15))
        .await
        .unwrap();
    let by_pod: BTreeMap<String, Span> = second
        .iter()
        .map(|o| {
            let pod = o.resource.as_str().rsplit('/').next().unwrap().to_owned();
            (pod, (o.start, o.end))
        })
        .collect();
    let uid = |name: &str| uid_of_in("later", name);
    // Nothing for train-a100-1: its records stay as run 1 metered them (closed at 14:00, an
    // undercount of at most one metering interval).
    assert!(!second.iter().any(|o| key(o) == train), "{second:#?}");
    let time = |text: &str| DateTime::parse_from_rfc3339(text).unwrap().to_utc();
    let expected: BTreeMap<String, Span> = [
        // Still running.
        (uid("mig-small-1"), (time("2024-04-30T22:00:00Z"), None)),
        // Being deleted: ends at its deletionTimestamp.
        (
            uid("train-cordoned-1"),
            (at(11), Some(time("2024-05-01T14:50:30Z"))),
        ),
        // Finished: its last container, the sidecar, stopped at 14:30:01.
        (
            uid("notebook-ts-1"),
            (at(13), Some(time("2024-05-01T14:30:01Z"))),
        ),
        // startTime "yesterday" is reported; the container's start is used.
        (uid("late-start-1"), (time("2024-05-01T14:40:00Z"), None)),
    ]
    .into_iter()
    .collect();
    // rocm-failed-1 ended at 07:00, before the window; vgpu-scratch-1 failed without any finish
    // time: it keeps what run 1 metered.
    assert_eq!(by_pod, expected);

    let inventory = KubeClient::new(kubernetes)
        .await
        .unwrap()
        .inventory()
        .await
        .unwrap();
    let metered = accelfed_provider::kubernetes::observe_inventory(
        kubernetes,
        &site,
        &inventory,
        None,
        at(14),
        at(15),
    );
    for expected in [
        "pod cms/late-start-1: status.startTime \"yesterday\" is not an RFC 3339 time; ignored",
        "pod scratch/vgpu-scratch-1: finished without a finish or deletion time; closed at its last sighting",
    ] {
        assert!(
            metered.warnings.iter().any(|w| w == expected),
            "missing {expected:?} in {:#?}",
            metered.warnings
        );
    }
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
