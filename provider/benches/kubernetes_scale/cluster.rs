//! The generated cluster: pages of nodes (8 GPUs each) and pods (about 4 KB of JSON each, as the
//! API returns them, without managedFields), continue tokens and remaining counts as a paged
//! listing carries them.

use serde_json::{Value, json};

use super::{GPUS_PER_NODE, NAMESPACES, NODES, PAGE, PODS};

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

pub fn node(n: usize) -> Value {
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
pub fn pod(n: usize) -> Value {
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

pub fn pages_of(
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
