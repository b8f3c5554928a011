//! The scale benchmark of issue 7: a generated cluster of 5,000 GPU nodes and 150,000 pods (each
//! pod about 4 KB of JSON as the API returns it, without managedFields), read in pages of 500.
//!
//! A `cargo bench` target without a harness (figures in BENCHMARKS.md, `## Kubernetes`):
//!
//! ```text
//! cargo bench --workspace --locked --bench kubernetes_scale
//! ```
//!
//! Per page it times the floor, `serde_json` reading the page's bytes into
//! `serde::de::IgnoredAny` (the least any reader of that text must do), and the mapping, the
//! client's own [`read_page`] with `read_node`, and `PodsRead::read_page` (`read_pod` and each
//! pod's CPU request), exactly as a listing runs them; then the
//! GLUE2 mapping and the meter's observations of the whole inventory are added to the mapping.
//! Pages are generated to a temporary folder first (not timed), then read back one at a time and
//! dropped, as the client drops each page's text, so the process's peak memory (`VmHWM`) is what a
//! listing of this size costs (plus the generator's one page).

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use accelfed_provider::config::Config;
use accelfed_provider::kubernetes::{
    Inventory, PodsRead, api::Namespace, api::Node, api::ResourceQuota, observe_inventory,
    read_node, read_page, service,
};
use accelfed_schemas::names::SiteName;

const NODES: usize = 5_000;
const PODS: usize = 150_000;
const PAGE: usize = 500;
const GPUS_PER_NODE: usize = 8;
const NAMESPACES: usize = 200;

/// One generated page of a list, as the API server sends it.
fn page(kind: &str, items: Vec<Value>, index: usize, total: usize) -> String {
    let end = (index + 1) * PAGE;
    let mut metadata = json!({"resourceVersion": "912345678"});
    if end < total {
        metadata["continue"] = json!(format!(
            "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTEyMzQ1Njc4LCJzdGFydCI6I{end}"
        ));
        metadata["remainingItemCount"] = json!(total - end);
    }
    json!({"kind": kind, "apiVersion": "v1", "metadata": metadata, "items": items}).to_string()
}

/// A uuid-shaped uid, distinct per kind and number.
fn uid(kind: &str, n: usize) -> String {
    let seed = n * 2_654_435_761 + kind.len() * 97;
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        seed % (1 << 32),
        n % 65_536,
        kind.len() % 4096,
        (n / 7) % 4096,
        n * 40_503
    )
}

fn node(n: usize) -> Value {
    let name = format!("gpu-{n:05}");
    let products = [
        "NVIDIA-A100-SXM4-80GB",
        "NVIDIA-H100-80GB-HBM3",
        "Tesla-V100-SXM2-32GB",
    ];
    let product = products[n % products.len()];
    let images: Vec<Value> = (0..40)
        .map(|i| {
            json!({"names": [format!("registry.example.org/team-{i}/image@sha256:{:064x}", n * 100 + i),
                              format!("registry.example.org/team-{i}/image:v{}.{}", i % 7, n % 13)],
                   "sizeBytes": 100_000_000 + i * 1_234_567})
        })
        .collect();
    let conditions: Vec<Value> = ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        .iter()
        .map(|kind| {
            json!({
                "type": kind, "status": if *kind == "Ready" { "True" } else { "False" },
                "lastHeartbeatTime": "2024-05-01T13:59:00Z", "lastTransitionTime": "2024-04-01T08:01:00Z",
                "reason": format!("Kubelet{kind}"), "message": format!("kubelet reports {kind}")
            })
        })
        .collect();
    json!({
        "metadata": {
            "name": name, "uid": uid("node", n), "resourceVersion": "912300000",
            "creationTimestamp": "2024-01-10T08:00:00Z",
            "labels": {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": "gpu", "topology.kubernetes.io/zone": format!("zone-{}", n % 3),
                "nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": product,
                "nvidia.com/gpu.memory": "81920", "nvidia.com/gpu.count": GPUS_PER_NODE.to_string(),
                "nvidia.com/gpu.family": "ampere", "nvidia.com/gpu.compute.major": "8",
                "nvidia.com/gpu.compute.minor": "0", "nvidia.com/gpu.replicas": "1",
                "nvidia.com/gpu.sharing-strategy": "none", "nvidia.com/mig.capable": "true",
                "nvidia.com/mig.strategy": "none", "nvidia.com/cuda.driver-version.full": "550.54.15",
                "nvidia.com/cuda.driver-version.major": "550", "nvidia.com/cuda.driver-version.minor": "54",
                "nvidia.com/cuda.driver-version.revision": "15", "nvidia.com/cuda.runtime-version.full": "12.4",
                "nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "4",
                "feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true",
                "feature.node.kubernetes.io/kernel-version.full": "5.15.0-105-generic",
                "feature.node.kubernetes.io/pci-10de.present": "true"
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                "nfd.node.kubernetes.io/feature-labels": "cpu-cpuid.AVX512F,kernel-version.full,pci-10de.present"
            }
        },
        "spec": {
            "podCIDR": format!("10.{}.{}.0/24", n / 256, n % 256),
            "podCIDRs": [format!("10.{}.{}.0/24", n / 256, n % 256)],
            "providerID": format!("baremetal://{name}"),
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
        },
        "status": {
            "capacity": {"cpu": "128", "memory": "1056560000Ki", "pods": "110", "ephemeral-storage": "1874000000Ki",
                         "hugepages-1Gi": "0", "hugepages-2Mi": "0", "nvidia.com/gpu": GPUS_PER_NODE.to_string()},
            "allocatable": {"cpu": "127500m", "memory": "1055000000Ki", "pods": "110",
                            "ephemeral-storage": "1727000000Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                            "nvidia.com/gpu": GPUS_PER_NODE.to_string()},
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": format!("192.0.{}.{}", n / 256, n % 256)},
                          {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": format!("{:032x}", n), "systemUUID": uid("sys", n), "bootID": uid("boot", n),
                         "kernelVersion": "5.15.0-105-generic", "osImage": "Ubuntu 22.04.4 LTS",
                         "containerRuntimeVersion": "containerd://1.7.13", "kubeletVersion": "v1.29.4",
                         "kubeProxyVersion": "v1.29.4", "operatingSystem": "linux", "architecture": "amd64"},
            "images": images
        }
    })
}

/// A pod of about 4 KB: a training job's pod with the fields the API fills in.
fn pod(n: usize) -> Value {
    let namespace = format!("vo-{:03}", n % NAMESPACES);
    let name = format!("train-{n:06}-x7k2p");
    let node = format!("gpu-{:05}", n % NODES);
    // The newest 40,000 run (8 GPUs x 5,000 nodes, one GPU each); the others finished.
    let running = n >= PODS - NODES * GPUS_PER_NODE;
    let env: Vec<Value> = (0..12)
        .map(|i| json!({"name": format!("TRAIN_OPTION_{i}"), "value": format!("value-{i}-{}", n % 97)}))
        .collect();
    let state = if running {
        json!({"running": {"startedAt": "2024-05-01T10:00:05Z"}})
    } else {
        json!({"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "2024-05-01T08:00:05Z",
                              "finishedAt": "2024-05-01T09:30:00Z", "containerID": format!("containerd://{:064x}", n)}})
    };
    let conditions: Vec<Value> = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    .iter()
    .map(|kind| {
        json!({"type": kind, "status": "True", "lastProbeTime": null,
               "lastTransitionTime": "2024-05-01T08:00:06Z"})
    })
    .collect();
    json!({
        "metadata": {
            "name": name, "generateName": format!("train-{n:06}-"), "namespace": namespace,
            "uid": uid("pod", n), "resourceVersion": format!("{}", 900_000_000 + n),
            "creationTimestamp": "2024-05-01T07:59:58Z",
            "labels": {"app.kubernetes.io/name": "trainer", "app.kubernetes.io/instance": format!("train-{n:06}"),
                       "batch.kubernetes.io/controller-uid": uid("job", n), "batch.kubernetes.io/job-name": format!("train-{n:06}"),
                       "controller-uid": uid("job", n), "job-name": format!("train-{n:06}")},
            "annotations": {"kubectl.kubernetes.io/default-container": "main",
                            "prometheus.io/scrape": "true", "prometheus.io/port": "9400"},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": format!("train-{n:06}"),
                                 "uid": uid("job", n), "controller": true, "blockOwnerDeletion": true}],
            "finalizers": ["batch.kubernetes.io/job-tracking"]
        },
        "spec": {
            "volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": format!("data-{}", n % 50)}},
                {"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
                ]}}
            ],
            "containers": [{
                "name": "main", "image": "registry.example.org/ml/trainer:2024.04",
                "command": ["python", "-m", "trainer"], "args": ["--epochs", "40", "--data", "/data"],
                "env": env,
                "resources": {"limits": {"memory": "64Gi", "nvidia.com/gpu": "1"},
                              "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"}},
                "volumeMounts": [{"name": "data", "mountPath": "/data"},
                                 {"name": "kube-api-access-x7k2p", "readOnly": true,
                                  "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent"
            }],
            "restartPolicy": "Never", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "serviceAccount": "default", "nodeName": node,
            "securityContext": {}, "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ],
            "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"
        },
        "status": {
            "phase": if running { "Running" } else { "Succeeded" },
            "conditions": conditions,
            "hostIP": "192.0.2.10", "hostIPs": [{"ip": "192.0.2.10"}],
            "podIP": format!("10.{}.{}.{}", n / 65_536, (n / 256) % 256, n % 256),
            "podIPs": [{"ip": format!("10.{}.{}.{}", n / 65_536, (n / 256) % 256, n % 256)}],
            "startTime": "2024-05-01T08:00:00Z",
            "containerStatuses": [{
                "name": "main", "state": state, "lastState": {}, "ready": running, "restartCount": 0,
                "image": "registry.example.org/ml/trainer:2024.04",
                "imageID": format!("registry.example.org/ml/trainer@sha256:{:064x}", n % 11),
                "containerID": format!("containerd://{:064x}", n), "started": running
            }],
            "qosClass": "Burstable"
        }
    })
}

fn pages_of(
    kind: &str,
    total: usize,
    item: fn(usize) -> Value,
) -> impl Iterator<Item = String> + '_ {
    (0..total.div_ceil(PAGE)).map(move |index| {
        let items = (index * PAGE..((index + 1) * PAGE).min(total))
            .map(item)
            .collect();
        page(kind, items, index, total)
    })
}

/// Peak resident memory of this process, from `/proc/self/status`.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb / 1024.0
}

/// `cargo bench` passes `--bench` and runs the benchmark; `cargo test --benches` only builds it.
fn main() {
    if std::env::args().any(|arg| arg == "--bench") {
        scale_5000_nodes_150000_pods_in_pages_of_500();
    }
}

fn scale_5000_nodes_150000_pods_in_pages_of_500() {
    let mut floor = Duration::ZERO;
    let mut mapping = Duration::ZERO;
    let mut node_listing = Duration::ZERO;
    let mut bytes = 0_usize;
    let mut pod_bytes = 0_usize;
    let mut inventory = Inventory::default();
    let mut pods_read = PodsRead::default();
    let tolerated = vec!["nvidia.com/gpu".to_owned()];

    // Generate every page to disk first: building pages as `serde_json::Value`s between the timed
    // reads leaves glibc's allocator with millions of freed fragments, which slows the mapping's
    // allocations down by an order of magnitude; the real client (one text per page) never sees
    // that.
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (index, text) in pages_of("NodeList", NODES, node).enumerate() {
        let path = dir.path().join(format!("nodes-{index:04}.json"));
        std::fs::write(&path, text).unwrap();
        files.push(("nodes", path));
    }
    for (index, text) in pages_of("PodList", PODS, pod).enumerate() {
        let path = dir.path().join(format!("pods-{index:04}.json"));
        std::fs::write(&path, text).unwrap();
        files.push(("pods", path));
    }

    let mut read_n =
        |node: Node, warnings: &mut Vec<String>| read_node(&node, &tolerated, warnings);
    for (kind, path) in &files {
        // The text of one page, as the client holds it once the response arrived.
        let text = std::fs::read_to_string(path).unwrap();
        bytes += text.len();
        let t = Instant::now();
        serde_json::from_str::<IgnoredAny>(&text).unwrap();
        floor += t.elapsed();
        let t = Instant::now();
        if *kind == "nodes" {
            read_page(
                &text,
                &mut read_n,
                &mut inventory.nodes,
                &mut inventory.warnings,
            )
            .unwrap();
        } else {
            pod_bytes += text.len();
            let next = pods_read.read_page(&text, &mut inventory.warnings).unwrap();
            assert_eq!(next.is_some(), pods_read.gpu_pods.len() < PODS);
        }
        let took = t.elapsed();
        mapping += took;
        if *kind == "nodes" {
            node_listing += took;
        }
    }
    inventory.pods = pods_read.gpu_pods;
    inventory.cpu = pods_read.cpu;
    let namespaces: String = json!({"kind": "NamespaceList", "apiVersion": "v1", "metadata": {},
        "items": (0..NAMESPACES).map(|i| json!({"metadata": {"name": format!("vo-{i:03}"),
            "labels": {"accelfed.io/vo": format!("vo{i}.example.org")}}})).collect::<Vec<_>>()})
    .to_string();
    let quotas: String = json!({"kind": "ResourceQuotaList", "apiVersion": "v1", "metadata": {},
        "items": (0..NAMESPACES).map(|i| json!({"metadata": {"name": "gpu", "namespace": format!("vo-{i:03}")},
            "spec": {"hard": {"requests.nvidia.com/gpu": "400"}}})).collect::<Vec<_>>()})
    .to_string();
    for text in [&namespaces, &quotas] {
        bytes += text.len();
        let t = Instant::now();
        serde_json::from_str::<IgnoredAny>(text).unwrap();
        floor += t.elapsed();
    }
    let t = Instant::now();
    read_page(
        &namespaces,
        &mut |ns: Namespace, _: &mut Vec<String>| Some(ns),
        &mut inventory.namespaces,
        &mut Vec::new(),
    )
    .unwrap();
    read_page(
        &quotas,
        &mut |q: ResourceQuota, _: &mut Vec<String>| Some(q),
        &mut inventory.quotas,
        &mut Vec::new(),
    )
    .unwrap();
    let listing = mapping + t.elapsed();

    let config = Config::parse(
        std::path::Path::new("bench.toml"),
        "[site]\nname = \"BENCH\"\n[[kubernetes]]\nid = \"k8s\"\nvo_label = \"accelfed.io/vo\"\n",
    )
    .unwrap();
    let kubernetes = &config.kubernetes[0];
    let t = Instant::now();
    let mapped = service(kubernetes, &inventory);
    let glue = t.elapsed();
    let t = Instant::now();
    let site = SiteName::new("BENCH").unwrap();
    let now = Utc.with_ymd_and_hms(2024, 5, 1, 14, 0, 0).unwrap();
    let metered = observe_inventory(
        kubernetes,
        &site,
        &inventory,
        None,
        now - chrono::Duration::hours(24),
        now,
    );
    let meter = t.elapsed();
    let mapping = listing + glue + meter;
    let peak = peak_rss_mb();

    let ratio = mapping.as_secs_f64() / floor.as_secs_f64();
    let provide_ratio = (listing + glue).as_secs_f64() / floor.as_secs_f64();
    let meter_ratio = (listing + meter).as_secs_f64() / floor.as_secs_f64();
    println!(
        "kubernetes scale: {NODES} nodes, {PODS} pods ({:.0} bytes of JSON per pod), {:.0} MB in pages of {PAGE}\n\
         floor (serde_json -> IgnoredAny): {:.3} s\n\
         mapping: {:.3} s = listing {:.3} s (nodes {:.3} s) + GLUE2 {:.3} s + meter {:.3} s; {ratio:.2}x the floor\n\
         provide (listing + GLUE2): {provide_ratio:.2}x the floor; meter (listing + observations): {meter_ratio:.2}x\n\
         peak memory (VmHWM): {peak:.0} MB; {} GPU nodes, {} GPU pods, {} observations, {} warnings",
        pod_bytes as f64 / PODS as f64,
        bytes as f64 / 1e6,
        floor.as_secs_f64(),
        mapping.as_secs_f64(),
        listing.as_secs_f64(),
        node_listing.as_secs_f64(),
        glue.as_secs_f64(),
        meter.as_secs_f64(),
        inventory.nodes.len(),
        inventory.pods.len(),
        metered.observations.len(),
        mapped.warnings.len() + metered.warnings.len(),
    );
    assert_eq!(inventory.nodes.len(), NODES);
    assert_eq!(inventory.pods.len(), PODS);
    assert!(
        mapped.warnings.is_empty(),
        "{:?}",
        &mapped.warnings[..3.min(mapped.warnings.len())]
    );
    // Every running pod, and every finished one (08:00 - 09:30) inside the last 24 hours.
    assert_eq!(metered.observations.len(), PODS);
    let used: u64 = mapped.totals.values().map(|c| c.used.get() as u64).sum();
    assert_eq!(used, (NODES * GPUS_PER_NODE) as u64);
    // Issue 7 asks for each command's mapping within 2x of the floor. Measured on the 2-core
    // build machine: provide 1.87x to 2.02x, meter 1.98x to 2.41x (BENCHMARKS.md), so the bound is
    // not reliably met yet; this guards against regressions past that.
    assert!(
        provide_ratio < 2.5 && meter_ratio < 2.5,
        "provide {provide_ratio:.2}x, meter {meter_ratio:.2}x the floor"
    );
    assert!(peak < 500.0, "peak memory {peak:.0} MB");
}
