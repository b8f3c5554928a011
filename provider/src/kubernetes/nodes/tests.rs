//! Reading nodes' GPU resources, labels and readiness (`read_node`).

use accelfed_schemas::gpu::Virtualization;

use super::*;

fn node(json: &str) -> Node {
    serde_json::from_str(json).unwrap()
}

fn ready(capacity: &str, labels: &str) -> Node {
    node(&format!(
        r#"{{"metadata":{{"name":"n1","labels":{labels}}},
            "status":{{"capacity":{capacity},"allocatable":{capacity},
                      "conditions":[{{"type":"Ready","status":"True"}}]}}}}"#
    ))
}

#[test]
fn time_slicing_divides_by_replicas_or_falls_back_to_the_count_label() {
    let mut warnings = Vec::new();
    let read = read_node(
        &ready(
            r#"{"nvidia.com/gpu":"8"}"#,
            r#"{"nvidia.com/gpu.product":"Tesla-T4-SHARED","nvidia.com/gpu.replicas":"4"}"#,
        ),
        &[],
        &mut warnings,
    )
    .unwrap();
    assert_eq!(read.resources[0].physical, GpuCount::whole(2));
    assert_eq!(
        read.resources[0].gpu.virtualization,
        Virtualization::TimeSlicing
    );
    // 10 replicas of 3 GPUs do not divide; the .count label says 3.
    let read = read_node(
        &ready(
            r#"{"nvidia.com/gpu":"10"}"#,
            r#"{"nvidia.com/gpu.replicas":"3","nvidia.com/gpu.count":"3"}"#,
        ),
        &[],
        &mut warnings,
    )
    .unwrap();
    assert_eq!(read.resources[0].physical, GpuCount::whole(3));
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn a_shared_resource_with_an_unknowable_gpu_count_is_skipped_with_a_warning() {
    let mut warnings = Vec::new();
    let read = read_node(
        &ready(
            r#"{"nvidia.com/gpu":"10"}"#,
            r#"{"nvidia.com/gpu.replicas":"3","nvidia.com/gpu.count":"many"}"#,
        ),
        &[],
        &mut warnings,
    );
    assert_eq!(read, None);
    assert_eq!(
        warnings,
        [
            "node \"n1\": label nvidia.com/gpu.count=\"many\" is not a whole number; ignored",
            "node \"n1\": label nvidia.com/gpu.replicas=\"3\" does not divide the capacity 10 of shared nvidia.com/gpu and no .count label says how many GPUs it has; resource skipped",
        ]
    );
}

#[test]
fn garbage_replicas_on_an_unshared_resource_count_whole_gpus() {
    let mut warnings = Vec::new();
    let read = read_node(
        &ready(
            r#"{"nvidia.com/gpu":"4"}"#,
            r#"{"nvidia.com/gpu.replicas":"lots","nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3"}"#,
        ),
        &[],
        &mut warnings,
    )
    .unwrap();
    assert_eq!(read.resources[0].physical, GpuCount::whole(4));
    assert_eq!(read.resources[0].gpu.virtualization, Virtualization::None);
    // GFD's dashes become the catalogue's canonical name.
    assert_eq!(
        read.resources[0].gpu.model.as_str(),
        "NVIDIA H100 80GB HBM3"
    );
    assert_eq!(
        warnings,
        ["node \"n1\": label nvidia.com/gpu.replicas=\"lots\" is not a whole number; ignored"]
    );
}

#[test]
fn mig_single_strategy_publishes_the_slices() {
    let read = read_node(
        &ready(
            r#"{"nvidia.com/gpu":"14"}"#,
            r#"{"nvidia.com/mig.strategy":"single","nvidia.com/gpu.product":"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb","nvidia.com/gpu.count":"2"}"#,
        ),
        &[],
        &mut Vec::new(),
    )
    .unwrap();
    let resource = &read.resources[0];
    assert_eq!(resource.gpu.virtualization, Virtualization::Mig);
    assert_eq!(
        resource.gpu.mig_profile.as_ref().map(Text::as_str),
        Some("1g.5gb")
    );
    assert_eq!(resource.gpu.model.as_str(), "NVIDIA A100-SXM4-40GB");
    assert_eq!(resource.capacity, 14);
    // 14 slices of 1/7: two physical GPUs.
    assert_eq!(
        resource.gpu.sharing,
        Sharing::Mig {
            profile: Text::new("1g.5gb").unwrap(),
            slices: 1,
            of: 7
        }
    );
    assert_eq!(resource.physical, GpuCount::whole(2));
    assert_eq!(read.installed[0].1, GpuCount::whole(2));
}

#[test]
fn a_vgpu_guest_publishes_its_board_gpu_and_counts_each_vgpu_as_its_share() {
    // What GFD labels in a VM with two A10-12Q vGPUs (the guest driver's product name, dashed).
    let mut warnings = Vec::new();
    let read = read_node(
        &ready(
            r#"{"nvidia.com/gpu":"2"}"#,
            r#"{"nvidia.com/gpu.product":"NVIDIA-A10-12Q","nvidia.com/vgpu.present":"true","nvidia.com/gpu.memory":"12288","nvidia.com/gpu.count":"2"}"#,
        ),
        &[],
        &mut warnings,
    )
    .unwrap();
    let resource = &read.resources[0];
    assert_eq!(resource.gpu.model.as_str(), "NVIDIA A10");
    assert_eq!(resource.gpu.virtualization, Virtualization::Vgpu);
    assert_eq!(
        resource.gpu.sharing,
        Sharing::Vgpu {
            vgpu_type: Text::new("A10-12Q").unwrap(),
            per_gpu: 2
        }
    );
    // Two halves of an A10: one physical GPU.
    assert_eq!(resource.physical, GpuCount::whole(1));
    assert_eq!(
        read.installed,
        [(resource.gpu.model.clone(), GpuCount::whole(1))]
    );
    assert!(warnings.is_empty(), "{warnings:?}");

    // A MIG-backed type is its slice; a board nobody knows counts whole, reported once.
    let read = read_node(
        &ready(
            r#"{"nvidia.com/gpu":"7"}"#,
            r#"{"nvidia.com/gpu.product":"NVIDIA-A100-1-5C"}"#,
        ),
        &[],
        &mut warnings,
    )
    .unwrap();
    assert_eq!(
        read.resources[0].gpu.model.as_str(),
        "NVIDIA A100-PCIE-40GB"
    );
    assert_eq!(read.resources[0].physical, GpuCount::whole(1));
    let read = read_node(
        &ready(
            r#"{"nvidia.com/gpu":"2"}"#,
            r#"{"nvidia.com/gpu.product":"NVIDIA-Z9-8Q"}"#,
        ),
        &[],
        &mut warnings,
    )
    .unwrap();
    assert_eq!(read.resources[0].physical, GpuCount::whole(2));
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("vGPU type Z9-8Q is not of a GPU accelfed knows")),
        "{warnings:?}"
    );
}

#[test]
fn mig_mixed_slices_are_shares_of_their_parent_and_the_node_has_its_parents() {
    let mut warnings = Vec::new();
    let read = read_node(
        &ready(
            r#"{"nvidia.com/gpu":"0","nvidia.com/mig-1g.10gb":"7","nvidia.com/mig-3g.40gb":"2","nvidia.com/mig-2g.12gb":"1"}"#,
            r#"{"nvidia.com/mig.strategy":"mixed","nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.count":"3",
                "nvidia.com/mig-1g.10gb.product":"NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"}"#,
        ),
        &[],
        &mut warnings,
    )
    .unwrap();
    let share = |resource: &str| {
        let r = read
            .resources
            .iter()
            .find(|r| r.resource == resource)
            .unwrap();
        (
            r.gpu.model.as_str().to_owned(),
            r.gpu.sharing.physical_share(),
            r.physical.get(),
        )
    };
    let h100 = "NVIDIA H100 80GB HBM3".to_owned();
    assert_eq!(
        share("nvidia.com/mig-1g.10gb"),
        (h100.clone(), 1.0 / 7.0, 1.0)
    );
    assert_eq!(share("nvidia.com/mig-3g.40gb").1, 3.0 / 7.0);
    // Not a profile of an H100 80GB: 12 of its 80 GB.
    assert_eq!(share("nvidia.com/mig-2g.12gb").1, 0.15);
    assert_eq!(
        warnings,
        [
            "node \"n1\": MIG profile 2g.12gb of NVIDIA H100 80GB HBM3 is not in the profile table; counted by its memory as 3/20 of the GPU"
        ]
    );
    // The slices are worth 1 + 6/7 + 0.15 GPUs; GFD says 3 parents are installed.
    assert_eq!(
        read.installed,
        vec![(GpuModel::new(&h100).unwrap(), GpuCount::whole(3))]
    );
}

#[test]
fn mps_and_time_slicing_replicas_are_one_over_the_replicas() {
    let read = read_node(
        &ready(
            r#"{"nvidia.com/gpu":"4"}"#,
            r#"{"nvidia.com/gpu.product":"NVIDIA-L4-SHARED","nvidia.com/gpu.replicas":"4","nvidia.com/gpu.sharing-strategy":"mps"}"#,
        ),
        &[],
        &mut Vec::new(),
    )
    .unwrap();
    let resource = &read.resources[0];
    assert_eq!(resource.gpu.model.as_str(), "NVIDIA L4");
    assert_eq!(resource.gpu.virtualization, Virtualization::Mps);
    assert_eq!(resource.gpu.sharing, Sharing::Mps { replicas: 4 });
    assert_eq!(resource.physical, GpuCount::whole(1));
}

#[test]
fn a_node_without_a_ready_condition_is_reported_and_unknown_models_once() {
    let mut warnings = Vec::new();
    let node = |name: &str, conditions: &str| {
        self::node(&format!(
            r#"{{"metadata":{{"name":"{name}","labels":{{"nvidia.com/gpu.product":"NVIDIA-X9"}}}},
                "status":{{"capacity":{{"nvidia.com/gpu":"2"}},"allocatable":{{"nvidia.com/gpu":"2"}},"conditions":{conditions}}}}}"#
        ))
    };
    let none = read_node(&node("n1", "[]"), &[], &mut warnings).unwrap();
    assert_eq!(none.unavailable.as_deref(), Some("NotReady"));
    let unknown = read_node(
        &node("n2", r#"[{"type":"Ready","status":"Unknown"}]"#),
        &[],
        &mut warnings,
    )
    .unwrap();
    assert_eq!(unknown.unavailable.as_deref(), Some("NotReady"));
    // The unknown model is named once, on the first node that has it.
    assert_eq!(
        warnings,
        [
            "node \"n1\": GPU model \"NVIDIA X9\" is not in the model catalogue; kept as given",
            "node \"n1\": has no Ready condition; its GPUs are not published as free",
            "node \"n2\": is not Ready (Ready=Unknown); its GPUs are not published as free",
        ]
    );
}

#[test]
fn not_ready_cordoned_and_tainted_nodes_are_unavailable() {
    let taint = |key: &str, effect: &str| {
        node(&format!(
            r#"{{"metadata":{{"name":"n"}},"spec":{{"taints":[{{"key":"{key}","effect":"{effect}"}}]}},
                "status":{{"capacity":{{"amd.com/gpu":"8"}},"conditions":[{{"type":"Ready","status":"True"}}]}}}}"#
        ))
    };
    let tolerated = ["amd.com/gpu".to_owned()];
    let state = |n: &Node| {
        read_node(n, &tolerated, &mut Vec::new())
            .unwrap()
            .unavailable
    };
    assert_eq!(state(&taint("amd.com/gpu", "NoSchedule")), None);
    assert_eq!(state(&taint("maintenance", "PreferNoSchedule")), None);
    assert_eq!(
        state(&taint("maintenance", "NoExecute")).as_deref(),
        Some("tainted maintenance:NoExecute")
    );
    let not_ready = node(r#"{"metadata":{"name":"n"},"status":{"capacity":{"amd.com/gpu":"8"}}}"#);
    assert_eq!(state(&not_ready).as_deref(), Some("NotReady"));
    let cordoned = node(
        r#"{"metadata":{"name":"n"},"spec":{"unschedulable":true},
            "status":{"capacity":{"amd.com/gpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}}"#,
    );
    assert_eq!(state(&cordoned).as_deref(), Some("cordoned"));
    // Without allocatable nothing is free to take.
    assert_eq!(
        read_node(&cordoned, &tolerated, &mut Vec::new())
            .unwrap()
            .resources[0]
            .allocatable,
        0
    );
}
